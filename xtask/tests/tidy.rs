//! Tidy checks: the architecture invariants of ARCHITECTURE.md, read from
//! `cargo metadata --format-version 1 --no-deps` and the workspace's manifests.
//!
//! Each failure names the rule it breaks and the offending crate, manifest or file. When a
//! crate is added to the workspace, add it to [`ALLOWED_SRL_DEPS`] (and to ARCHITECTURE.md).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// Every workspace member and the srl crates its normal and build dependencies may use
/// (the dependency-direction diagram of ARCHITECTURE.md). `None` = any workspace crate.
const ALLOWED_SRL_DEPS: &[(&str, Option<&[&str]>)] = &[
    // The data layer depends on no srl crate.
    ("srl-graph", Some(&[])),
    // Inference sits on the data layer only.
    ("srl-infer", Some(&["srl-graph"])),
    // srl-learn holds the collective-classification pipeline (issue 26): it wires
    // srl-bayes's local naive Bayes classifiers and srl-eval's folds and scores beside its
    // own learners, so it sits above srl-bayes and srl-eval. srl-boost and srl-bayes stay
    // siblings that depend on no other model crate.
    (
        "srl-learn",
        Some(&["srl-infer", "srl-graph", "srl-bayes", "srl-eval"]),
    ),
    ("srl-boost", Some(&["srl-infer", "srl-graph"])),
    ("srl-bayes", Some(&["srl-infer", "srl-graph"])),
    // Distributed inference on timely dataflow: beside the learners, above inference.
    ("srl-dist", Some(&["srl-infer", "srl-graph", "srl-io"])),
    // srl-eval knows no model: nothing above srl-graph.
    ("srl-eval", Some(&["srl-graph"])),
    // Dataset registry, download and verification: a leaf used by the CLI and xtask.
    ("srl-data", Some(&["srl-io"])),
    // Safe outputs (no input overwritten, --force, atomic writes, interrupt cleanup): a
    // leaf every writer uses.
    ("srl-io", Some(&[])),
    // The command-line tool sits above every library crate, beside xtask (never on it).
    (
        "srl-cli",
        Some(&[
            "srl-graph",
            "srl-infer",
            "srl-learn",
            "srl-boost",
            "srl-bayes",
            "srl-eval",
            "srl-data",
            "srl-io",
        ]),
    ),
    // The Python bindings sit above the library crates, beside the CLI: conversion and
    // error mapping only, no algorithm.
    (
        "srl-py",
        Some(&[
            "srl-graph",
            "srl-infer",
            "srl-learn",
            "srl-boost",
            "srl-bayes",
            "srl-eval",
            "srl-io",
        ]),
    ),
    // The top: automation and benches may use every crate.
    ("xtask", None),
    ("srl-benches", None),
];

/// Crates that nothing may depend on, not even as a dev-dependency.
const TOP_CRATES: &[&str] = &["xtask", "srl-benches", "srl-cli", "srl-py"];

/// Crates only the top crates may use.
const TOP_ONLY_DEPS: &[&str] = &["anyhow"];

struct Package {
    name: String,
    manifest: PathBuf,
    /// (dependency name, kind: "normal" | "dev" | "build").
    deps: Vec<(String, String)>,
    /// (target kind, source path) of lib and bin targets.
    roots: Vec<(String, PathBuf)>,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace root")
        .to_path_buf()
}

fn packages() -> &'static [Package] {
    static PACKAGES: OnceLock<Vec<Package>> = OnceLock::new();
    PACKAGES.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .current_dir(workspace_root())
            .output()
            .expect("cargo metadata runs");
        assert!(
            out.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata is JSON");
        let members: Vec<&str> = meta["workspace_members"]
            .as_array()
            .expect("workspace_members")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        meta["packages"]
            .as_array()
            .expect("packages")
            .iter()
            .filter(|p| p["id"].as_str().is_some_and(|id| members.contains(&id)))
            .map(|p| Package {
                name: p["name"].as_str().unwrap_or_default().to_string(),
                manifest: PathBuf::from(p["manifest_path"].as_str().unwrap_or_default()),
                deps: p["dependencies"]
                    .as_array()
                    .map(|ds| {
                        ds.iter()
                            .map(|d| {
                                (
                                    d["name"].as_str().unwrap_or_default().to_string(),
                                    d["kind"].as_str().unwrap_or("normal").to_string(),
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                roots: p["targets"]
                    .as_array()
                    .map(|ts| {
                        ts.iter()
                            .filter_map(|t| {
                                let kinds = t["kind"].as_array()?;
                                let kind = kinds
                                    .iter()
                                    .filter_map(Value::as_str)
                                    .find(|k| ["lib", "bin"].contains(k))?;
                                Some((kind.to_string(), PathBuf::from(t["src_path"].as_str()?)))
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            })
            .collect()
    })
}

fn workspace_names() -> Vec<&'static str> {
    packages().iter().map(|p| p.name.as_str()).collect()
}

fn fail_if_any(rule: &str, violations: &[String]) {
    assert!(
        violations.is_empty(),
        "tidy rule broken: {rule}\n  - {}\n(see ARCHITECTURE.md, \"Dependency direction\" and \"Invariants\")",
        violations.join("\n  - ")
    );
}

#[test]
fn every_member_is_known() {
    let known: Vec<&str> = ALLOWED_SRL_DEPS.iter().map(|(n, _)| *n).collect();
    let violations: Vec<String> = workspace_names()
        .into_iter()
        .filter(|n| !known.contains(n))
        .map(|n| format!("workspace member `{n}` has no dependency rule in xtask/tests/tidy.rs"))
        .collect();
    fail_if_any(
        "every workspace crate has a place in the dependency diagram",
        &violations,
    );
    assert!(
        workspace_names().contains(&"srl-eval") && workspace_names().contains(&"srl-graph"),
        "cargo metadata did not list the workspace crates: {:?}",
        workspace_names()
    );
}

#[test]
fn dependency_direction() {
    let members = workspace_names();
    let mut violations = Vec::new();
    for p in packages() {
        let Some((_, Some(allowed))) = ALLOWED_SRL_DEPS.iter().find(|(n, _)| *n == p.name) else {
            continue;
        };
        for (dep, kind) in &p.deps {
            if kind == "dev" || !members.contains(&dep.as_str()) {
                continue;
            }
            if !allowed.contains(&dep.as_str()) {
                violations.push(format!(
                    "`{}` depends on `{dep}` ({kind}); it may use only {:?}",
                    p.name, allowed
                ));
            }
        }
    }
    fail_if_any(
        "dependencies point down the diagram: srl-graph on no srl crate; srl-infer and \
         srl-eval only on srl-graph; srl-learn, srl-boost, srl-bayes never on each other \
         (only on srl-infer, srl-graph)",
        &violations,
    );
}

#[test]
fn nothing_depends_on_the_top_crates() {
    let mut violations = Vec::new();
    for p in packages() {
        for (dep, kind) in &p.deps {
            if TOP_CRATES.contains(&dep.as_str()) {
                violations.push(format!("`{}` depends on `{dep}` ({kind})", p.name));
            }
        }
    }
    fail_if_any(
        "no crate depends on xtask, srl-benches or srl-cli, not even for tests",
        &violations,
    );
}

#[test]
fn libraries_do_not_use_anyhow() {
    let mut violations = Vec::new();
    for p in packages() {
        if TOP_CRATES.contains(&p.name.as_str()) {
            continue;
        }
        for (dep, kind) in &p.deps {
            if kind != "dev" && TOP_ONLY_DEPS.contains(&dep.as_str()) {
                violations.push(format!(
                    "library `{}` depends on `{dep}` ({kind}); return its own thiserror enum",
                    p.name
                ));
            }
        }
    }
    fail_if_any(
        "anyhow only in xtask and srl-cli (libraries return one thiserror enum from error.rs)",
        &violations,
    );
}

/// `[lints]` followed by `workspace = true` (comments and blank lines skipped).
fn uses_workspace_lints(manifest: &str) -> bool {
    let mut in_lints = false;
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            in_lints = line == "[lints]";
            continue;
        }
        if in_lints {
            let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            if compact == "workspace=true" {
                return true;
            }
        }
    }
    // `lints.workspace = true` at the top level is the same setting.
    manifest.lines().any(|l| {
        let compact: String = l.chars().filter(|c| !c.is_whitespace()).collect();
        compact == "lints.workspace=true"
    })
}

#[test]
fn every_crate_uses_workspace_lints() {
    let mut violations = Vec::new();
    for p in packages() {
        match std::fs::read_to_string(&p.manifest) {
            Ok(text) if uses_workspace_lints(&text) => {}
            Ok(_) => violations.push(format!(
                "{} lacks `[lints] workspace = true`",
                p.manifest.display()
            )),
            Err(e) => violations.push(format!("cannot read {}: {e}", p.manifest.display())),
        }
    }
    fail_if_any(
        "every crate inherits [workspace.lints] (`[lints] workspace = true`)",
        &violations,
    );
}

#[test]
fn every_crate_root_starts_with_crate_docs() {
    let mut violations = Vec::new();
    for p in packages() {
        for (kind, root) in &p.roots {
            match std::fs::read_to_string(root) {
                Ok(text) => {
                    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
                    if !first.is_some_and(|l| l.starts_with("//!")) {
                        violations.push(format!(
                            "{} ({kind} of `{}`) does not start with a `//!` crate doc",
                            root.display(),
                            p.name
                        ));
                    }
                }
                Err(e) => violations.push(format!("cannot read {}: {e}", root.display())),
            }
        }
    }
    fail_if_any(
        "every lib.rs / main.rs opens with a `//!` crate doc (what it is, where it sits, an example)",
        &violations,
    );
}

#[test]
fn lints_parser_understands_the_forms() {
    assert!(uses_workspace_lints(
        "[package]\nname = \"a\"\n\n[lints]\n# inherit\nworkspace = true\n"
    ));
    assert!(uses_workspace_lints("lints.workspace = true\n"));
    assert!(!uses_workspace_lints(
        "[lints]\n[dependencies]\nworkspace = true\n"
    ));
    assert!(!uses_workspace_lints("[package]\nname = \"a\"\n"));
}

/// The front-end crates' source folders: argument parsing, file I/O, printing and
/// conversion only (ARCHITECTURE.md, "Pipelines in the libraries, front-ends thin").
const FRONT_ENDS: &[&str] = &[
    "crates/srl-cli/src",
    "crates/srl-py/src",
    "crates/srl-py/python",
    "xtask/src",
];

/// What a front-end must not define or wire itself, with the library item to use instead.
/// A line matches when it contains the pattern outside a `//` or `#` comment.
const FRONT_END_FORBIDDEN: &[(&str, &str)] = &[
    // metrics: srl-eval
    (
        "fn argmax",
        "a metric/decision helper: use the pipeline's predictions or srl-eval",
    ),
    ("fn accuracy", "a metric: srl_eval::metrics::accuracy"),
    (
        "fn cll",
        "a metric: srl_eval::metrics::conditional_log_likelihood",
    ),
    ("fn auc", "a metric: srl_eval::metrics::auc_roc / auc_pr"),
    ("fn precision", "a metric: srl_eval::metrics::Confusion"),
    ("fn recall", "a metric: srl_eval::metrics::Confusion"),
    (
        "def argmax",
        "a metric/decision helper in Python: the Rust pipeline returns labels",
    ),
    (
        "def accuracy",
        "a metric in Python: srl-eval through the bindings",
    ),
    // learners and inference loops: srl-learn, srl-infer, srl-bayes, srl-boost
    (
        "impl LocalClassifier for",
        "a learner: srl-learn / srl-bayes",
    ),
    (
        "impl MarginalInference for",
        "an inference method: srl-infer",
    ),
    ("impl MapInference for", "an inference method: srl-infer"),
    ("argmin::", "an optimiser loop: the learners in srl-learn"),
    ("Lbfgs", "an optimiser loop: the learners in srl-learn"),
    // collective-classification wiring: srl_learn::collective
    (
        "fit_relational_classifier",
        "collective wiring: srl_learn::collective",
    ),
    ("run_fitted", "collective wiring: srl_learn::collective"),
    (
        "fit_pseudo_likelihood",
        "collective wiring: srl_learn::collective",
    ),
    (
        "ContentOnly.run",
        "collective wiring: srl_learn::collective",
    ),
    (
        "IterativeClassification {",
        "collective wiring: srl_learn::collective settings",
    ),
    (
        "CollectiveGibbs {",
        "collective wiring: srl_learn::collective settings",
    ),
];

/// Front-end items allowed despite a pattern, each with its reason.
const FRONT_END_ALLOWED: &[(&str, &str, &str)] = &[(
    "xtask/src/experiments/sen_getoor.rs",
    "impl MarginalInference for CountingBp",
    "a counting wrapper that only delegates to srl-infer's LoopyBp and counts sweeps for \
     the experiment's convergence rows",
)];

/// The violations of [`FRONT_END_FORBIDDEN`] in `text` (a file at `path`).
fn front_end_violations(path: &str, text: &str) -> Vec<String> {
    let python = path.ends_with(".py") || path.ends_with(".pyi");
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = if python {
            line.split('#').next().unwrap_or_default()
        } else {
            line.split("//").next().unwrap_or_default()
        };
        for (pattern, instead) in FRONT_END_FORBIDDEN {
            if code.contains(pattern)
                && !FRONT_END_ALLOWED
                    .iter()
                    .any(|(p, item, _)| path.ends_with(p) && code.contains(item))
            {
                out.push(format!("{path}:{}: `{pattern}` ({instead})", i + 1));
            }
        }
    }
    out
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            source_files(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "rs" || x == "py" || x == "pyi")
        {
            out.push(p);
        }
    }
}

#[test]
fn front_ends_define_no_learner_inference_loop_or_metric() {
    let root = workspace_root();
    let mut violations = Vec::new();
    let mut files = Vec::new();
    for dir in FRONT_ENDS {
        let before = files.len();
        source_files(&root.join(dir), &mut files);
        assert!(files.len() > before, "no source file under {dir}");
    }
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable source");
        let rel = f.strip_prefix(&root).unwrap_or(f).display().to_string();
        violations.extend(front_end_violations(&rel, &text));
    }
    fail_if_any(
        "front-ends (srl-cli, srl-py, xtask) define no learner, inference loop or metric and \
         wire no collective method themselves: the pipelines live in the library crates",
        &violations,
    );
}

#[test]
fn the_front_end_rule_can_fail() {
    let v = front_end_violations(
        "crates/srl-cli/src/x.rs",
        "fn argmax(p: &[f64]) -> usize {\n// fn accuracy in a comment is fine\nlet m = fit_pseudo_likelihood(g);\n",
    );
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v[0].starts_with("crates/srl-cli/src/x.rs:1:"), "{v:?}");
    assert!(v[1].contains(":3:"), "{v:?}");
    let py = front_end_violations(
        "crates/srl-py/python/srl/a.py",
        "def argmax(x):  # no\n# def accuracy\n",
    );
    assert_eq!(py.len(), 1, "{py:?}");
    assert!(
        front_end_violations(
            "xtask/src/experiments/sen_getoor.rs",
            "impl MarginalInference for CountingBp {"
        )
        .is_empty()
    );
}
