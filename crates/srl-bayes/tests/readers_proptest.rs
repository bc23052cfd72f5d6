//! Property tests of every srl-bayes reader (issue 15): random bytes and random mutations
//! of a valid file (byte flips, truncations, duplicated, deleted and swapped lines, hostile
//! tokens, huge numbers) never panic and never abort; they load or give an error. Readers:
//! BIF, Hugin NET, UAI, TrimBN `nb.json`, UCI CSV tables (parse, fit the encoder, encode).
//! Also: the BIF writer round-trips random small networks, and every network (or TrimBN
//! problem) that loads is trimmed by a branch and bound bounded to a few evaluations
//! (as given, and with its rows normalised): no hang, no panic, a finite answer.
//!
//! Cases per property: `SRL_PROPTEST_CASES` (default 256, what CI runs);
//! `SRL_PROPTEST_CASES=10000 cargo test -p srl-bayes --release --test readers_proptest` is
//! the full run.

use proptest::prelude::*;
use srl_bayes::data::{CsvTable, EncoderParams, TableEncoder};
use srl_bayes::io::{parse_bif, parse_hugin_net, parse_trimbn_json, parse_uai, to_bif_string};
use srl_bayes::trim::{
    BranchAndBound, JointAgreement, NaiveBayesAgreement, SearchLimits, ThresholdClassifier,
    Trimming,
};
use srl_bayes::{BayesianNetwork, Cpt, Variable, VariableElimination};

// The case count and the mutation strategies, one copy for the four reader test files.
#[path = "../../../testkit/reader_mutations.rs"]
mod reader_mutations;
use reader_mutations::*;

const BIF: &str = "network asia {\n}\nvariable asia {\n  type discrete [ 2 ] { yes, no };\n}\nvariable tub {\n  type discrete [ 2 ] { yes, no };\n}\nvariable smoke {\n  type discrete [ 3 ] { a, \"b c\", >=7.5 };\n  property weight = 1;\n}\nprobability ( asia ) {\n  table 0.01, 0.99;\n}\nprobability ( tub | asia ) {\n  (yes) 0.05, 0.95;\n  (no) 0.01, 0.99;\n}\nprobability ( smoke | asia, tub ) {\n  (yes, yes) 0.2, 0.3, 0.5;\n  default 0.1, 0.1, 0.8;\n}\n// end\n/* block */\n";

const NET: &str = "net\n{\n  name = \"x\";\n}\nnode C\n{\n  states = (\"s0\" \"s1\");\n}\ndiscrete node F\n{\n  states = (\"a\" \"b\" \"c\");\n  label = \"f\";\n  position = (1 2);\n}\npotential ( C )\n{\n  data = ( 0.6 0.4 );\n}\npotential ( F | C )\n{\n  data = ( ( 0.9 0.05 0.05 ) ( 0.2 0.3 0.5 ) ); % comment\n}\n";

const UAI: &str = "BAYES\n3\n2 2 3\n3\n1 0\n2 0 1\n3 0 1 2\n\n2\n 0.3 0.7\n\n4\n 0.9 0.1\n 0.2 0.8\n\n12\n 0.1 0.2 0.7\n 0.3 0.3 0.4\n 0.5 0.25 0.25\n 1 0 0\n";

const NB_JSON: &str = r#"{
 "network": "toy",
 "class_node": "C",
 "class_states": 2,
 "class_prior": [0.6, 0.4],
 "decision": {"class_state": 0, "threshold": 0.5, "rule": "x"},
 "budget": 1.0,
 "features": [
  {"name": "F1", "states": 2, "cost": 1.0, "cpt_given_class": [[0.3, 0.7], [0.8, 0.2]]},
  {"name": "F2", "states": 3, "cost": 2.0, "cpt_given_class": [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]}
 ]
}
"#;

const CSV: &str = "x,c,z,y\n1.5,a,10,p\n2,b,?,n\n3.25,a,30,p\n,b,40,n\n5,?,50,p\n6,a,60,n\n7,b,70,p\n8,a,80,n\n9,b,90,p\n";

const BIF_EXTRA: &[&str] = &[
    "network",
    "variable",
    "probability",
    "type",
    "discrete",
    "table",
    "default",
    "property",
    "yes",
    "no",
    "asia",
    "tub",
    "smoke",
    "[ 2 ]",
    "{ yes, no };",
    "(yes)",
    "1e308",
    "-0.1",
    "NaN",
    "}",
    "{",
];
const NET_EXTRA: &[&str] = &[
    "net",
    "node",
    "potential",
    "states",
    "data",
    "discrete",
    "continuous",
    "class",
    "C",
    "F",
    "\"s0\"",
    "( 0.5 0.5 )",
    "(",
    ")",
    "((",
    "))",
    "1e308",
    "-0.1",
];
const UAI_EXTRA: &[&str] = &[
    "BAYES", "MARKOV", "3", "12", "1000000", "1e308", "-0.1", "0",
];
const JSON_EXTRA: &[&str] = &[
    "{", "}", "[", "]", "null", "true", "\"x\"", "1e999", "[[1]]", "[]", "1e308", "0", "-0.1",
];
const CSV_EXTRA: &[&str] = &["x", "y", "c", "z", "p", "n", ",", ",,", "1e400", "NaN,"];

/// Feeds `text` to every string reader; only panics can fail.
fn all_readers(text: &str) {
    if let Ok(net) = parse_bif(text, "t.bif") {
        // a network that loads is valid: every row has the child's cardinality
        check(&net);
    }
    if let Ok(net) = parse_hugin_net(text, "t.net") {
        check(&net);
    }
    if let Ok(m) = parse_uai(text, "t.uai") {
        if let Ok(net) = m.to_bayesian_network() {
            check(&net);
        }
        if let Ok((net, _)) = m.to_bayesian_network_normalized() {
            check(&net);
        }
    }
    if let Ok(p) = parse_trimbn_json(text, "t.json") {
        if let Ok(net) = p.to_bayesian_network() {
            trim_bounded(&net);
        }
        if let Ok(m) = NaiveBayesAgreement::new(&p.model, p.positive_state, p.threshold) {
            let costs = vec![1.0; p.feature_names.len()];
            finite(bounded().run_limited(&m, &costs, 1.0, limits(), &mut |_| {}));
        }
    }
    csv(text);
}

fn check(net: &BayesianNetwork) {
    assert!(!net.is_empty());
    for v in 0..net.len() {
        let k = net.cardinality(v);
        let rows: usize = net.parents(v).iter().map(|&p| net.cardinality(p)).product();
        assert_eq!(net.cpt(v).probs.len(), rows * k);
        assert!(
            net.cpt(v)
                .probs
                .chunks(k)
                .all(|r| r.iter().any(|&x| x > 0.0))
        );
    }
    trim_bounded(net);
    let mut normalised = net.clone();
    normalised.normalize_rows(1e-6);
    assert!(normalised.check_row_sums(1e-6).is_ok());
    trim_bounded(&normalised);
    // a loaded network writes and reads back
    if let Ok(text) = to_bif_string(net, "copy") {
        assert_eq!(
            &parse_bif(&text, "copy.bif").expect("written BIF reads back"),
            net
        );
    }
}

fn bounded() -> BranchAndBound {
    BranchAndBound::default()
}

fn limits() -> SearchLimits {
    SearchLimits {
        max_evaluations: Some(12),
        time_limit: Some(std::time::Duration::from_secs(5)),
    }
}

/// A search result (or error) that does not lie: finite agreement in [0, 1] (up to
/// rounding) and a finite threshold.
fn finite(r: Result<Trimming, srl_bayes::BayesError>) {
    if let Ok(t) = r {
        assert!(t.eca.is_finite() && t.threshold.is_finite(), "{t:?}");
        assert!(t.evaluations() <= 12 + 1 || t.optimal, "{t:?}");
    }
}

/// Trims `net` (class = the first variable, positive state 0, features = up to eight
/// others) with a search bounded by [`limits`]: it ends, without a panic.
fn trim_bounded(net: &BayesianNetwork) {
    if net.len() < 2 {
        return;
    }
    let clf = ThresholdClassifier {
        class: 0,
        positive_state: 0,
        features: (1..net.len().min(9)).collect(),
        threshold: 0.5,
    };
    let ve = VariableElimination::default();
    if let Ok(m) = JointAgreement::new(net, &clf, &ve, 1 << 12) {
        let costs = vec![1.0; clf.features.len()];
        finite(bounded().run_limited(&m, &costs, 2.0, limits(), &mut |_| {}));
    }
}

fn csv(text: &str) {
    let Ok(t) = CsvTable::parse(text, "t.csv") else {
        return;
    };
    let class = t.header.last().cloned().unwrap_or_default();
    let params = EncoderParams::default();
    if let Ok(enc) = TableEncoder::fit(&t, &class, &params, None)
        && let Ok(d) = enc.encode(&t, None)
    {
        assert_eq!(d.x.len(), d.n_rows() * d.kinds.len());
        // every cell is a state index or missing (NaN), and missing cells are counted
        for j in 0..d.kinds.len() {
            let nan = (0..d.n_rows()).filter(|&r| d.row(r)[j].is_nan()).count();
            assert_eq!(nan, d.missing[j]);
        }
    }
    let half: Vec<usize> = (0..t.rows.len()).step_by(2).collect();
    if let Ok(enc) = TableEncoder::fit(&t, &class, &params, Some(&half)) {
        let _ = enc.encode(&t, None);
    }
}

fn random_network(cards: &[usize], parent_bits: &[u8], weights: &[f64]) -> BayesianNetwork {
    let mut w = weights.iter().cycle();
    let mut vars = Vec::new();
    let mut cpts = Vec::new();
    for (i, &k) in cards.iter().enumerate() {
        vars.push(Variable::numbered(format!("v{i}"), k));
        let parents: Vec<usize> = (0..i.min(8))
            .filter(|&p| parent_bits[i] >> p & 1 == 1)
            .take(3)
            .collect();
        let rows: usize = parents.iter().map(|&p| cards[p]).product();
        let mut probs = Vec::new();
        for _ in 0..rows {
            let raw: Vec<f64> = (0..k).map(|_| *w.next().unwrap_or(&0.5)).collect();
            let s: f64 = raw.iter().sum();
            probs.extend(raw.iter().map(|x| x / s));
        }
        cpts.push(Cpt { parents, probs });
    }
    BayesianNetwork::new(vars, cpts).expect("a valid random network")
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        all_readers(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_printable_text_never_panics(text in "[ -~\n\t]{0,400}") {
        all_readers(&text);
    }

    #[test]
    fn mutated_bif_never_panics(e in edits()) {
        all_readers(&String::from_utf8_lossy(&mutate(BIF.as_bytes(), &e, BIF_EXTRA)));
    }

    #[test]
    fn mutated_hugin_net_never_panics(e in edits()) {
        all_readers(&String::from_utf8_lossy(&mutate(NET.as_bytes(), &e, NET_EXTRA)));
    }

    #[test]
    fn mutated_uai_never_panics(e in edits()) {
        all_readers(&String::from_utf8_lossy(&mutate(UAI.as_bytes(), &e, UAI_EXTRA)));
    }

    #[test]
    fn mutated_nb_json_never_panics(e in edits()) {
        all_readers(&String::from_utf8_lossy(&mutate(NB_JSON.as_bytes(), &e, JSON_EXTRA)));
    }

    #[test]
    fn mutated_uci_csv_never_panics(e in edits()) {
        csv(&String::from_utf8_lossy(&mutate(CSV.as_bytes(), &e, CSV_EXTRA)));
    }

    /// BIF writer: read(write(net)) == net for random small networks.
    #[test]
    fn bif_round_trip(
        cards in proptest::collection::vec(1usize..5, 1..9),
        parent_bits in proptest::collection::vec(any::<u8>(), 9),
        weights in proptest::collection::vec(1e-9f64..1.0, 1..64),
    ) {
        let net = random_network(&cards, &parent_bits, &weights);
        let text = to_bif_string(&net, "random").expect("writable names");
        prop_assert_eq!(parse_bif(&text, "random.bif").expect("reads back"), net);
    }
}

#[test]
fn the_valid_samples_load() {
    assert_eq!(parse_bif(BIF, "t.bif").expect("valid BIF").len(), 3);
    assert_eq!(parse_hugin_net(NET, "t.net").expect("valid NET").len(), 2);
    let m = parse_uai(UAI, "t.uai").expect("valid UAI");
    assert_eq!(m.to_bayesian_network().expect("CPTs").len(), 3);
    assert_eq!(
        parse_trimbn_json(NB_JSON, "t.json")
            .expect("valid nb.json")
            .feature_names
            .len(),
        2
    );
    let t = CsvTable::parse(CSV, "t.csv").expect("valid CSV");
    let enc = TableEncoder::fit(&t, "y", &EncoderParams::default(), None).expect("fits");
    let d = enc.encode(&t, None).expect("encodes");
    assert_eq!(d.missing, vec![1, 1, 1]);
}
