//! Property tests of srl-infer's UAI readers (issue 15): random bytes and random mutations
//! of a valid model and evidence file (byte flips, truncations, duplicated, deleted and
//! swapped lines, hostile tokens, huge numbers) never panic and never abort; they load or
//! give an error. The unit tests in `src/uai.rs` hold a token-level property of the same
//! kind; this file adds byte- and line-level mutations and the shared case count.
//!
//! Cases per property: `SRL_PROPTEST_CASES` (default 256, what CI runs);
//! `SRL_PROPTEST_CASES=10000 cargo test -p srl-infer --release --test readers_proptest` is
//! the full run.

use proptest::prelude::*;
use srl_infer::{PairwiseMrf, parse_uai_evidence};

// The case count and the mutation strategies, one copy for the four reader test files.
#[path = "../../../testkit/reader_mutations.rs"]
mod reader_mutations;
use reader_mutations::*;

const UAI: &str = "MARKOV\n3\n2 2 3\n3\n1 0\n2 0 1\n2 1 2\n\n2\n 0.436 0.564\n\n4\n 0.128 0.872\n 0.920 0.080\n\n6\n 0.210 0.333 0.457\n 0.811 0.100 0.189\n";
const EVID: &str = "2 0 1 2 0\n";
const EXTRA: &[&str] = &["MARKOV", "BAYES", "3", "6", "1000000", "0.5"];

fn read(text: &[u8]) {
    if let Ok(mrf) = PairwiseMrf::from_uai_reader(text, "t.uai") {
        assert_eq!(mrf.unary_all().len(), mrf.state_offsets()[mrf.num_nodes()]);
        // a model that loads writes out, and the copy reads back (values are written in
        // Rust's shortest round-trip form, `1e308` rather than a 309-digit decimal), unless a
        // log-potential beyond ~709 overflows to `inf` when exponentiated for the file
        let copy = mrf.to_uai_string();
        let back = PairwiseMrf::from_uai_str(&copy, "copy.uai");
        assert!(back.is_ok() || copy.contains("inf"), "{back:?}");
    }
    let t = String::from_utf8_lossy(text);
    let _ = PairwiseMrf::from_uai_str(&t, "t.uai");
    for n in [0, 3, 1 << 20] {
        let _ = parse_uai_evidence(&t, "t.evid", n);
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..500)) {
        read(&bytes);
    }

    #[test]
    fn mutated_model_never_panics(e in edits()) {
        read(&mutate(UAI.as_bytes(), &e, EXTRA));
    }

    #[test]
    fn mutated_evidence_never_panics(e in edits()) {
        let t = String::from_utf8_lossy(&mutate(EVID.as_bytes(), &e, EXTRA)).into_owned();
        for n in [0, 3, 5] {
            let _ = parse_uai_evidence(&t, "t.evid", n);
        }
    }
}

#[test]
fn the_valid_samples_load() {
    let m = PairwiseMrf::from_uai_str(UAI, "t.uai").expect("valid UAI");
    assert_eq!(m.num_nodes(), 3);
    assert_eq!(
        parse_uai_evidence(EVID, "t.evid", 3).expect("valid evidence"),
        vec![Some(1), None, Some(0)]
    );
}
