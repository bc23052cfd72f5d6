//! A stdout closed by its reader (`srl data list --json | head -1`, the reader gone before
//! `srl` writes) ends the run quietly with status 141 (128 + SIGPIPE, docs/srl-cli.md),
//! never with a panic ("failed printing to stdout: Broken pipe", status 101) or an error
//! message; a real error keeps its message on stderr and its status 1.

use std::process::{Command, Output, Stdio};

/// Runs `srl args` with stdout a pipe whose read end is closed before the process starts
/// (every write to stdout fails with EPIPE; Rust ignores SIGPIPE, so no signal ends it).
fn srl_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_srl"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run srl")
}

#[test]
fn closed_stdout_ends_quietly_with_141() {
    let uai = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/grid.uai");
    // the summary (JSON and text) and an output written to stdout (`mrf` without --out)
    let runs: [&[&str]; 3] = [
        &["data", "list", "--json"],
        &["data", "list"],
        &["mrf", uai, "--quiet"],
    ];
    for args in runs {
        let out = srl_closed_stdout(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "srl {args:?}: {stderr}");
        assert!(stderr.is_empty(), "srl {args:?}: stderr {stderr:?}");
    }
}

#[test]
fn closed_stdout_keeps_a_real_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("none.json");
    let missing = missing.to_str().expect("utf-8 path");
    let out = srl_closed_stdout(&["boost", "show", "--model", missing, "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("srl: error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
