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

// ---- shared by the readers_proptest.rs files (each test crate has its own copy) ----

/// Cases per property: `SRL_PROPTEST_CASES` (default 256, what CI runs); the full run is
/// `SRL_PROPTEST_CASES=10000`.
fn cases() -> u32 {
    std::env::var("SRL_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        // the inputs are cheap to shrink but a failure is rare: keep shrinking short
        max_shrink_iters: 2048,
        ..ProptestConfig::default()
    }
}

/// Tokens that stress a reader: huge and special numbers, separators, keywords, odd text.
const HOSTILE: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999999",
    "1e308",
    "-1e308",
    "1e-320",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "-0",
    "",
    "?",
    " ",
    "\t",
    "\r",
    "\n",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ";",
    ",",
    ":",
    ".",
    "|",
    "\"",
    "'",
    "%",
    "//",
    "/*",
    "*/",
    "=",
    "+",
    "#",
    "\u{feff}",
    "é",
    "\u{0}",
];

/// One random edit of a file.
#[derive(Clone, Debug)]
enum Edit {
    /// XOR the byte at a position with a non-zero mask.
    Flip(usize, u8),
    /// Cut the file at a position.
    Truncate(usize),
    /// Repeat a line.
    DupLine(usize),
    /// Remove a line.
    DelLine(usize),
    /// Swap two lines.
    SwapLines(usize, usize),
    /// Insert a hostile or format-specific token at a position.
    Insert(usize, usize),
    /// Replace a whitespace-separated word with a hostile or format-specific token.
    Replace(usize, usize),
    /// Make a number huge: append many digits to the word at a position.
    Huge(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(p, m)| Edit::Flip(p, m)),
        any::<usize>().prop_map(Edit::Truncate),
        any::<usize>().prop_map(Edit::DupLine),
        any::<usize>().prop_map(Edit::DelLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(p, t)| Edit::Insert(p, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(p, t)| Edit::Replace(p, t)),
        any::<usize>().prop_map(Edit::Huge),
    ]
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    proptest::collection::vec(edit(), 1..6)
}

fn token<'a>(t: usize, extra: &[&'a str]) -> &'a str {
    let all = HOSTILE.len() + extra.len();
    let i = t % all;
    if i < HOSTILE.len() {
        HOSTILE[i]
    } else {
        extra[i - HOSTILE.len()]
    }
}

/// The byte range of the `w`-th (modulo the count) maximal run of non-whitespace bytes.
fn word(b: &[u8], w: usize) -> Option<(usize, usize)> {
    let starts: Vec<usize> = (0..b.len())
        .filter(|&i| !b[i].is_ascii_whitespace() && (i == 0 || b[i - 1].is_ascii_whitespace()))
        .collect();
    let s = *starts.get(w % starts.len().max(1))?;
    let end = (s..b.len())
        .find(|&i| b[i].is_ascii_whitespace())
        .unwrap_or(b.len());
    Some((s, end))
}

/// `text` with `edits` applied in order; `extra` adds format-specific tokens.
fn mutate(text: &[u8], edits: &[Edit], extra: &[&str]) -> Vec<u8> {
    let mut b = text.to_vec();
    let lines_of =
        |b: &[u8]| -> Vec<Vec<u8>> { b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect() };
    for e in edits {
        match *e {
            Edit::Flip(p, m) if !b.is_empty() => {
                let p = p % b.len();
                b[p] ^= m;
            }
            Edit::Truncate(p) => b.truncate(p % (b.len() + 1)),
            Edit::DupLine(l) => {
                let mut ls = lines_of(&b);
                let l = l % ls.len();
                let copy = ls[l].clone();
                ls.insert(l, copy);
                b = ls.join(&b'\n');
            }
            Edit::DelLine(l) => {
                let mut ls = lines_of(&b);
                ls.remove(l % ls.len());
                b = ls.join(&b'\n');
            }
            Edit::SwapLines(x, y) => {
                let mut ls = lines_of(&b);
                let n = ls.len();
                ls.swap(x % n, y % n);
                b = ls.join(&b'\n');
            }
            Edit::Insert(p, t) => {
                let p = p % (b.len() + 1);
                let tok = token(t, extra).as_bytes();
                b.splice(p..p, tok.iter().copied());
            }
            Edit::Replace(w, t) => {
                if let Some((s, end)) = word(&b, w) {
                    b.splice(s..end, token(t, extra).bytes());
                }
            }
            Edit::Huge(w) => {
                if let Some((_, end)) = word(&b, w) {
                    b.splice(end..end, std::iter::repeat_n(b'9', 40));
                }
            }
            _ => {}
        }
    }
    b
}
// ---- end of the shared part ----

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
