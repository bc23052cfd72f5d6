//! Issue 25 in srl-bayes: hostile networks give typed errors naming the file, line and
//! variable; no NaN reaches the search (a 1e308 entry used to spin the threshold sweep);
//! the search honours its limits and says when its answer is not proven optimal.

use srl_bayes::io::{parse_bif, parse_hugin_net, parse_trimbn_json, parse_uai};
use srl_bayes::trim::{
    AgreementModel, BranchAndBound, JointAgreement, NaiveBayesAgreement, SearchLimits, YStat, sweep,
};
use srl_bayes::{
    BayesError, BayesianNetwork, Cpt, NaiveBayes, ThresholdClassifier, Variable,
    VariableElimination,
};

const NET: &str = "net\n{\n}\nnode C\n{\n  states = (\"yes\" \"no\");\n}\nnode F\n{\n  states = (\"t\" \"f\");\n}\npotential ( C )\n{\n  data = ( 0.4 0.6 );\n}\npotential ( F | C )\n{\n  data = ( ( 0.9 0.1 ) ( 0.2 0.8 ) );\n}\n";

const BIF: &str = "network t {\n}\nvariable C {\n  type discrete [ 2 ] { yes, no };\n}\nvariable A {\n  type discrete [ 2 ] { t, f };\n}\nprobability ( C ) {\n  table 0.4, 0.6;\n}\nprobability ( A | C ) {\n  (yes) 0.9, 0.1;\n  (no) 0.2, 0.8;\n}\n";

fn message(e: &BayesError) -> String {
    e.to_string()
}

fn parse_error_line(r: Result<BayesianNetwork, BayesError>) -> (usize, String) {
    match r {
        Err(e @ BayesError::Parse { .. }) => {
            let BayesError::Parse { line, .. } = &e else {
                unreachable!()
            };
            (*line, message(&e))
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn sweep_ends_on_nan_posteriors() {
    let mut stats = vec![
        YStat {
            pos_class: f64::NAN,
            neg_class: 1.0,
            agree_pos: 0.5,
        },
        YStat {
            pos_class: f64::INFINITY,
            neg_class: f64::INFINITY,
            agree_pos: 0.0,
        },
        YStat {
            pos_class: 0.3,
            neg_class: 0.7,
            agree_pos: 0.3,
        },
    ];
    // before the fix this call never returned
    let _ = sweep(&mut stats);
}

#[test]
fn overflowing_joint_weights_are_an_error_not_a_nan() -> Result<(), BayesError> {
    let net = BayesianNetwork::new(
        vec![Variable::numbered("C", 2), Variable::numbered("F", 2)],
        vec![
            Cpt {
                parents: vec![],
                probs: vec![1e308, 1e308],
            },
            Cpt {
                parents: vec![0],
                probs: vec![1e308, 1e308, 0.5, 0.5],
            },
        ],
    )?;
    let clf = ThresholdClassifier {
        class: 0,
        positive_state: 0,
        features: vec![1],
        threshold: 0.5,
    };
    let r = JointAgreement::new(&net, &clf, &VariableElimination::default(), 1 << 10);
    assert!(
        matches!(&r, Err(BayesError::InvalidNetwork { message }) if message.contains("not a finite")),
        "{r:?}"
    );
    // normalised, the same network trims
    let mut fixed = net.clone();
    assert_eq!(fixed.normalize_rows(1e-6), 2);
    fixed.check_row_sums(1e-6)?;
    let m = JointAgreement::new(&fixed, &clf, &VariableElimination::default(), 1 << 10)?;
    let t = BranchAndBound::default().run(&m, &[1.0], 1.0)?;
    assert!(t.eca.is_finite() && t.optimal);
    Ok(())
}

#[test]
fn row_sums_are_checked_by_name_and_normalised_with_a_count() -> Result<(), BayesError> {
    let net = parse_bif(&BIF.replace("(no) 0.2, 0.8;", "(no) 0.3, 0.8;"), "b.bif")?;
    let e = net.check_row_sums(1e-6).expect_err("row sums to 1.1");
    let m = message(&e.in_file("b.bif"));
    assert!(
        m.contains("b.bif") && m.contains("`A`") && m.contains("C = no") && m.contains("1.1"),
        "{m}"
    );
    let mut n2 = net.clone();
    assert_eq!(n2.unnormalized_rows(1e-6), 1);
    assert_eq!(n2.normalize_rows(1e-6), 1);
    assert!((n2.prob(1, &[1], 0) - 0.3 / 1.1).abs() < 1e-15);
    // rows within the tolerance are left bit-identical
    assert_eq!(n2.cpt(1).probs[..2], net.cpt(1).probs[..2]);
    Ok(())
}

#[test]
fn unlimited_run_limited_equals_run_and_limits_stop_the_search() -> Result<(), BayesError> {
    // 24 equal features, budget 12: a long search
    let tables: Vec<Vec<Vec<f64>>> = (0..24)
        .map(|_| vec![vec![0.6, 0.4], vec![0.4, 0.6]])
        .collect();
    let nb = NaiveBayes::from_tables(vec![0.6, 0.4], &tables)?;
    let m = NaiveBayesAgreement::new(&nb, 0, 0.5)?;
    let costs = vec![1.0; 24];
    let mut seen = 0u64;
    let t = BranchAndBound::default().run_limited(
        &m,
        &costs,
        12.0,
        SearchLimits {
            max_evaluations: Some(7),
            time_limit: None,
        },
        &mut |p| seen = p.criterion_evaluations + p.bound_evaluations,
    )?;
    assert!(!t.optimal);
    assert_eq!(t.evaluations(), 7);
    assert_eq!(seen, 7);
    assert!(t.eca.is_finite());
    let t = BranchAndBound::default().run_limited(
        &m,
        &costs,
        12.0,
        SearchLimits {
            max_evaluations: None,
            time_limit: Some(std::time::Duration::ZERO),
        },
        &mut |_| {},
    )?;
    assert!(!t.optimal && t.evaluations() <= 1);

    // small problem: with no limits, run_limited is run
    let small = NaiveBayes::from_tables(
        vec![0.6, 0.4],
        &[
            vec![vec![0.9, 0.1], vec![0.2, 0.8]],
            vec![vec![0.6, 0.4], vec![0.5, 0.5]],
            vec![vec![0.7, 0.3], vec![0.3, 0.7]],
        ],
    )?;
    let m = NaiveBayesAgreement::new(&small, 0, 0.5)?;
    let a = BranchAndBound::default().run(&m, &[1.0; 3], 2.0)?;
    let b = BranchAndBound::default().run_limited(
        &m,
        &[1.0; 3],
        2.0,
        SearchLimits::default(),
        &mut |_| {},
    )?;
    assert_eq!(a, b);
    assert!(a.optimal);
    assert!(m.total_weight().is_finite());
    Ok(())
}

#[test]
fn hugin_data_parentheses_are_checked() {
    let data = "  data = ( ( 0.9 0.1 ) ( 0.2 0.8 ) );";
    let cases = [
        ("  data = ( ( 0.9 0.1 ) ( 0.2 0.8 );", "not closed"),
        ("  data = ( ( 0.9 0.1 ) ) ( 0.2 0.8 ) );", "second outer"),
        ("  data = 0.9 0.1 0.2 0.8;", "outside the parentheses"),
        ("  data = ( ( 0.9 0.1 0.2 ) ( 0.8 ) );", "holds 3 numbers"),
        ("  data = ( 0.9 0.1 ( 0.2 0.8 ) );", "mixes"),
        ("  data = ( ( ( 0.9 0.1 ) ) ( ( 0.2 0.8 ) ) );", "levels"),
    ];
    for (bad, what) in cases {
        let (line, m) = parse_error_line(parse_hugin_net(&NET.replace(data, bad), "f.net"));
        assert_eq!(line, 18, "{m}");
        assert!(
            m.contains("f.net:18") && m.contains("`F`") && m.contains(what),
            "{m}"
        );
    }
    // flat and nested tables are the same network
    let flat = parse_hugin_net(&NET.replace(data, "  data = ( 0.9 0.1 0.2 0.8 );"), "f.net");
    assert_eq!(flat.ok(), parse_hugin_net(NET, "f.net").ok());
}

#[test]
fn bif_structure_errors_name_file_line_and_variable() {
    let (line, m) = parse_error_line(parse_bif(&BIF.replace("(no)", "(yes)"), "b.bif"));
    assert!(
        line == 14 && m.contains("given twice") && m.contains("`A`"),
        "{m}"
    );
    let (line, m) = parse_error_line(parse_bif(
        &BIF.replace(
            "  type discrete [ 2 ] { t, f };\n}\n",
            "  type discrete [ 2 ] { t, f };\n",
        ),
        "b.bif",
    ));
    assert!(line == 8 && m.contains("unbalanced braces"), "{m}");
    let (line, m) = parse_error_line(parse_bif(
        &BIF.replace("(yes) 0.9, 0.1;", "(yes) 1.1, -0.1;"),
        "b.bif",
    ));
    assert!(line == 12 && m.contains("-0.1") && m.contains("`A`"), "{m}");
    let e = parse_bif(
        &BIF.replace(
            "probability ( C ) {\n  table 0.4, 0.6;",
            "probability ( C | A ) {\n  (t) 0.4, 0.6;\n  (f) 0.5, 0.5;",
        ),
        "b.bif",
    )
    .expect_err("a cycle");
    let m = message(&e);
    assert!(
        m.starts_with("b.bif: ") && m.contains("cycle") && m.contains("`C`"),
        "{m}"
    );
}

#[test]
fn uai_unnormalised_tables_name_the_variable_and_normalise_on_request() -> Result<(), BayesError> {
    let text = "BAYES\n2\n2 2\n2\n1 0\n2 0 1\n2\n0.4 0.6\n4\n0.9 0.1\n0.3 0.8\n";
    let m = parse_uai(text, "m.uai")?;
    let e = m.to_bayesian_network().expect_err("row sums to 1.1");
    let msg = message(&e);
    assert!(
        msg.contains("`v1`") && msg.contains("v0 = s1") && msg.contains("1.1"),
        "{msg}"
    );
    let (net, rescaled) = m.to_bayesian_network_normalized()?;
    assert_eq!(rescaled, 1);
    net.check_row_sums(1e-12)?;
    Ok(())
}

#[test]
fn trimbn_json_inconsistencies_are_errors_naming_file_and_feature() {
    let good = r#"{"network": "t", "class_node": "C", "class_states": 2, "class_prior": [0.6, 0.4],
 "decision": {"class_state": 0, "threshold": 0.5}, "budget": 1.0,
 "features": [{"name": "F1", "states": 2, "cost": 1.0, "cpt_given_class": [[0.3, 0.7], [0.8, 0.2]]}]}"#;
    assert!(parse_trimbn_json(good, "p.json").is_ok());
    for (bad, what) in [
        (good.replace("[0.6, 0.4]", "[0.6, 0.6]"), "sums to 1.2"),
        (
            good.replace("\"class_states\": 2", "\"class_states\": 0"),
            "`class_states` is 0",
        ),
        (
            good.replace("[0.8, 0.2]", "[0.8]"),
            "has 1 entries, expected 2",
        ),
        (
            good.replace("\"states\": 2", "\"states\": 0"),
            "`F1` has 0 states",
        ),
        (good.replace("[0.3, 0.7]", "[1.1, -0.1]"), "-0.1"),
        (
            good.replace("\"cost\": 1.0", "\"cost\": 0"),
            "`F1` has cost 0",
        ),
        (
            good.replace("\"budget\": 1.0", "\"budget\": -1"),
            "budget -1",
        ),
    ] {
        let e = parse_trimbn_json(&bad, "p.json").expect_err(what);
        let m = message(&e);
        assert!(m.starts_with("p.json: ") && m.contains(what), "{what}: {m}");
    }
    let e = parse_trimbn_json(&good.replace("0.6, 0.4", "NaN, 0.4"), "p.json").expect_err("NaN");
    assert!(matches!(e, BayesError::Parse { .. }), "{e:?}");
}

#[test]
fn search_size_is_checked_before_enumeration() -> Result<(), BayesError> {
    let tables = |n: usize, zero: bool| -> Vec<Vec<Vec<f64>>> {
        (0..n)
            .map(|i| {
                if zero && i == 0 {
                    vec![vec![1.0, 0.0], vec![0.5, 0.5]]
                } else {
                    vec![vec![0.6, 0.4], vec![0.4, 0.6]]
                }
            })
            .collect()
    };
    let limit = f64::from(1u32 << 26);
    // 40 binary features: 2^20 per split evaluation, 2^20 for a subset of 20
    let nb = NaiveBayes::from_tables(vec![0.6, 0.4], &tables(40, false))?;
    let m = NaiveBayesAgreement::new(&nb, 0, 0.5)?;
    m.check_search_size(&[1.0; 40], 20.0, limit)?;
    // a zero probability: every evaluation enumerates all 2^40 states
    let nb = NaiveBayes::from_tables(vec![0.6, 0.4], &tables(40, true))?;
    let m = NaiveBayesAgreement::new(&nb, 0, 0.5)?;
    assert!(matches!(
        m.check_search_size(&[1.0; 40], 20.0, limit),
        Err(BayesError::TooLarge { entries, .. }) if entries == 1 << 40
    ));
    // 60 features: 2^30 per split evaluation
    let nb = NaiveBayes::from_tables(vec![0.6, 0.4], &tables(60, false))?;
    let m = NaiveBayesAgreement::new(&nb, 0, 0.5)?;
    assert!(m.check_search_size(&[1.0; 60], 2.0, limit).is_err());
    Ok(())
}
