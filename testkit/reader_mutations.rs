//! Random mutations of valid input files for the readers' property tests (issue 15): the
//! case count (`SRL_PROPTEST_CASES`), byte flips, truncations, duplicated, deleted and
//! swapped lines, hostile tokens and huge numbers. One copy, included by the
//! `tests/readers_proptest.rs` of srl-bayes, srl-boost, srl-graph and srl-infer with
//! `#[path = "../../../testkit/reader_mutations.rs"] mod reader_mutations;`.
#![allow(dead_code)]

use proptest::prelude::*;

/// Cases per property: `SRL_PROPTEST_CASES` (default 256, what CI runs); the full run is
/// `SRL_PROPTEST_CASES=10000`.
pub fn cases() -> u32 {
    std::env::var("SRL_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

pub fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        // the inputs are cheap to shrink but a failure is rare: keep shrinking short
        max_shrink_iters: 2048,
        ..ProptestConfig::default()
    }
}

/// Tokens that stress a reader: huge and special numbers, separators, keywords, odd text.
pub const HOSTILE: &[&str] = &[
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
pub enum Edit {
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

pub fn edit() -> impl Strategy<Value = Edit> {
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

pub fn edits() -> impl Strategy<Value = Vec<Edit>> {
    proptest::collection::vec(edit(), 1..6)
}

pub fn token<'a>(t: usize, extra: &[&'a str]) -> &'a str {
    let all = HOSTILE.len() + extra.len();
    let i = t % all;
    if i < HOSTILE.len() {
        HOSTILE[i]
    } else {
        extra[i - HOSTILE.len()]
    }
}

/// The byte range of the `w`-th (modulo the count) maximal run of non-whitespace bytes.
pub fn word(b: &[u8], w: usize) -> Option<(usize, usize)> {
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
pub fn mutate(text: &[u8], edits: &[Edit], extra: &[&str]) -> Vec<u8> {
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
