//! MLN-Boost by clauses (BoostSRL `-mln -mlnClause`; Khot et al. 2011, the clause-based
//! gradient representation): weights and counts on a hand-built world, the covering
//! stop, the schedules, model files, and BoostSRL's own clauses on IMDB.

use std::path::{Path, PathBuf};

use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_boost::{
    Background, ClauseSchedule, MlnBoost, MlnBoostParams, MlnClauseParams, NegativeSampling,
    OtherTargets, TreeNode, TreeParams, build_split, load_split, parse_atoms, parse_background,
    read_background, sigmoid,
};

/// cancer(X) with friends(+person,-person): a has 3 friends, b 2, c 1, d none.
fn world() -> (Background, srl_boost::Split) {
    let bk = parse_background(
        "mode: friends(+person,-person).\nmode: smokes(+person).\nmode: cancer(+person).",
        Path::new("bk.txt"),
    )
    .expect("bk");
    let facts = parse_atoms(
        "friends(a,x1).\nfriends(a,x2).\nfriends(a,x3).\nfriends(b,x1).\nfriends(b,x2).\nfriends(c,x1).\nsmokes(a).\nsmokes(d).",
        Path::new("facts.txt"),
    )
    .expect("facts");
    let pos = parse_atoms("cancer(a).\ncancer(b).", Path::new("pos.txt")).expect("pos");
    let neg = parse_atoms("cancer(c).\ncancer(d).", Path::new("neg.txt")).expect("neg");
    let split = build_split(
        &facts,
        &pos,
        &neg,
        "cancer",
        &bk,
        OtherTargets::Ignore,
        Path::new("facts.txt"),
    )
    .expect("split");
    (bk, split)
}

fn clause_params(schedule: ClauseSchedule, n_trees: usize) -> MlnBoostParams {
    MlnBoostParams {
        n_trees,
        initial_log_odds: 0.0,
        negative_sampling: NegativeSampling::All,
        apply_background_settings: false,
        tree: TreeParams {
            min_leaf_examples: 1,
            ..TreeParams::boostsrl()
        },
        clauses: Some(MlnClauseParams {
            schedule,
            ..MlnClauseParams::default()
        }),
        ..MlnBoostParams::default()
    }
}

#[test]
fn the_first_clause_is_the_count_weighted_least_squares_fit() {
    let (bk, split) = world();
    // one clause of one literal: with ψ₀ = 0 the gradients are ±0.5 (a, b positive)
    let params = clause_params(
        ClauseSchedule::Fixed {
            clauses: 1,
            length: 1,
        },
        1,
    );
    let m = params
        .fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0),
        )
        .unwrap();
    assert_eq!(m.clauses_per_step(), &[1]);
    assert!(m.is_clause_based());
    let t = &m.trees()[0];
    let TreeNode::Split { test, gain, .. } = &t.nodes()[0] else {
        panic!("a clause is a split")
    };
    // friends(A, B): counts a 3, b 2, c 1, d 0 → Σ r n = 0.5·3 + 0.5·2 − 0.5·1 = 2,
    // Σ n² = 14, reduction 4/14; smokes(A): counts 1,0,0,1 → Σ r n = 0 (no gain).
    assert_eq!(test.len(), 1);
    assert_eq!(test[0].pred, "friends");
    assert!((gain - 4.0 / 14.0).abs() < 1e-12, "{gain}");
    let TreeNode::Leaf { value, n_examples } = t.nodes()[1] else {
        panic!("true leaf")
    };
    assert!((value - 2.0 / 14.0).abs() < 1e-12);
    assert_eq!(n_examples, 3);
    // ψ = w·n on the training examples
    let psi = m.decision_function(&split.db, &split.examples).unwrap();
    for (p, n) in psi.iter().zip([3.0, 2.0, 1.0, 0.0]) {
        assert!((p - n * 2.0 / 14.0).abs() < 1e-12);
    }
}

#[test]
fn later_clauses_fit_the_residuals_and_cover_new_examples() {
    let (bk, split) = world();
    let params = clause_params(
        ClauseSchedule::Fixed {
            clauses: 3,
            length: 2,
        },
        1,
    );
    let m = params
        .fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0),
        )
        .unwrap();
    let k = m.clauses_per_step()[0];
    assert!((1..=3).contains(&k), "{k}");
    // The clauses' summed values are what the step added: ψ(i) = Σ_c w_c n_c(i), and
    // the squared error of the gradients falls with every clause.
    let g = [0.5, 0.5, -0.5, -0.5];
    let mut resid = g.to_vec();
    let mut last = resid.iter().map(|r| r * r).sum::<f64>();
    for t in m.trees() {
        let v = t.predict(&split.db, &split.examples).unwrap();
        for (r, v) in resid.iter_mut().zip(&v) {
            *r -= v;
        }
        let now = resid.iter().map(|r| r * r).sum::<f64>();
        assert!(now < last, "{now} after {last}");
        last = now;
    }
    let psi = m.decision_function(&split.db, &split.examples).unwrap();
    for (p, (gi, r)) in psi.iter().zip(g.iter().zip(&resid)) {
        assert!((p - (gi - r)).abs() < 1e-12);
    }
}

#[test]
fn boostsrl_schedule_and_fixed_limits() {
    let (bk, split) = world();
    let m = clause_params(ClauseSchedule::BoostSrl, 6)
        .fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0),
        )
        .unwrap();
    assert_eq!(m.clauses_per_step().len(), 6);
    for (step, &k) in m.clauses_per_step().iter().enumerate() {
        assert!(k <= 20 / (step + 1));
    }
    let fixed = clause_params(
        ClauseSchedule::Fixed {
            clauses: 2,
            length: 1,
        },
        4,
    )
    .fit(
        &split.db,
        &bk,
        &split.examples,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    assert!(fixed.clauses_per_step().iter().all(|&k| k <= 2));
    for t in fixed.trees() {
        let TreeNode::Split { test, .. } = &t.nodes()[0] else {
            panic!()
        };
        assert_eq!(test.len(), 1);
    }
    // bad settings
    let bad = clause_params(
        ClauseSchedule::Fixed {
            clauses: 0,
            length: 1,
        },
        1,
    );
    assert!(
        bad.fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0)
        )
        .is_err()
    );
    let mut bad = clause_params(ClauseSchedule::BoostSrl, 1);
    bad.clauses = Some(MlnClauseParams {
        schedule: ClauseSchedule::BoostSrl,
        beam_width: 0,
    });
    assert!(
        bad.fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0)
        )
        .is_err()
    );
}

#[test]
fn clause_models_round_trip_and_are_checked() {
    let (bk, split) = world();
    let m = clause_params(ClauseSchedule::BoostSrl, 3)
        .fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0),
        )
        .unwrap();
    let json = serde_json::to_string(&m).unwrap();
    let back: MlnBoost = serde_json::from_str(&json).unwrap();
    assert_eq!(back, m);
    assert_eq!(
        back.predict_proba(&split.db, &split.examples).unwrap(),
        m.predict_proba(&split.db, &split.examples).unwrap()
    );
    // the printed MLN has one formula per clause (no zero-weight false branches)
    let text = m.to_string();
    assert!(text.contains("clause-based"));
    let formulas = text.lines().filter(|l| !l.starts_with("//")).count();
    assert_eq!(formulas, 1 + m.trees().len());
    // clause_steps that do not add up to the trees
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["clause_steps"] = serde_json::json!([99]);
    let err = serde_json::from_value::<MlnBoost>(v).unwrap_err();
    assert!(err.to_string().contains("clause_steps"), "{err}");
    // a tree-based model file of before loads as before (no clause_steps)
    let tree_model = MlnBoostParams {
        clauses: None,
        ..clause_params(ClauseSchedule::BoostSrl, 2)
    }
    .fit(
        &split.db,
        &bk,
        &split.examples,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    let tj = serde_json::to_string(&tree_model).unwrap();
    assert!(!tj.contains("clause_steps"));
    assert!(
        !serde_json::from_str::<MlnBoost>(&tj)
            .unwrap()
            .is_clause_based()
    );
}

/// IMDB workedUnder, BoostSRL's `-mln -mlnClause` (srlearn 0.5.5's BoostSRL.jar,
/// OpenJDK 17): `java -jar BoostSRL.jar -l -mln -mlnClause -train train/ -target
/// workedUnder -trees 10` on Fold1 writes `Trees/workedUnderTree0.tree` with the two
/// clauses `workedUnder(_, A, 0.6630872067044464) :- director(A).` and
/// `workedUnder(_, A, -0.14185106490048838) :- actor(A).`, and `Tree1` with 0.5620506449266561
/// and -0.12544463852839235: the first two steps are the same clauses and weights here.
#[test]
fn imdb_fold1_first_steps_equal_boostsrls_clauses() {
    let dir = std::env::var_os("SRL_DATA_DIR")
        .map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
        .join("boostsrl_imdb/workedunder_5fold/Fold1");
    if !dir.is_dir() {
        eprintln!("skipped: looked for {}", dir.display());
        return;
    }
    let bk = read_background(&dir.join("train/train_bk.txt")).expect("bk");
    let train = load_split(
        &dir.join("train"),
        "train",
        "workedUnder",
        &bk,
        OtherTargets::PositivesAsFacts,
    )
    .expect("train");
    let m = MlnBoostParams {
        clauses: Some(MlnClauseParams::default()),
        ..MlnBoostParams::default()
    }
    .fit(
        &train.db,
        &bk,
        &train.examples,
        &mut ChaCha8Rng::seed_from_u64(1),
    )
    .expect("fit");
    let clauses = m.clauses();
    let find = |step: usize, body: &str| {
        let mut trees = m.trees().iter();
        for &k in &m.clauses_per_step()[..step] {
            trees.by_ref().take(k).for_each(drop);
        }
        trees
            .take(m.clauses_per_step()[step])
            .find_map(|t| match &t.nodes()[0] {
                TreeNode::Split { test, .. } if test.len() == 1 && test[0].to_string() == body => {
                    match t.nodes()[1] {
                        TreeNode::Leaf { value, .. } => Some(value),
                        TreeNode::Split { .. } => None,
                    }
                }
                _ => None,
            })
    };
    assert_eq!(&m.clauses_per_step()[..2], &[2, 2], "{clauses:?}");
    for (step, body, boostsrl) in [
        (0, "director(B)", 0.6630872067044464),
        (0, "actor(B)", -0.14185106490048838),
        (1, "director(B)", 0.5620506449266561),
        (1, "actor(B)", -0.12544463852839235),
    ] {
        let w = find(step, body).unwrap_or_else(|| panic!("step {step}: no clause {body}"));
        assert!(
            (w - boostsrl).abs() < 1e-9,
            "step {step} {body}: {w} vs {boostsrl}"
        );
    }
    // the model predicts the test fold as BoostSRL's does (AUC-ROC 1 on this fold)
    let test = load_split(
        &dir.join("test"),
        "test",
        "workedUnder",
        &bk,
        OtherTargets::PositivesAsFacts,
    )
    .expect("test");
    let p = m.predict_proba(&test.db, &test.examples).expect("p");
    let y = test.examples.labels();
    let worst_pos = p
        .iter()
        .zip(y)
        .filter(|(_, l)| **l)
        .map(|(p, _)| *p)
        .fold(1.0, f64::min);
    let best_neg = p
        .iter()
        .zip(y)
        .filter(|(_, l)| !**l)
        .map(|(p, _)| *p)
        .fold(0.0, f64::max);
    assert!(worst_pos > best_neg, "{worst_pos} {best_neg}");
    assert!(sigmoid(m.initial_log_odds()) < 0.2);
}
