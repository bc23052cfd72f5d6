//! `srl data fetch | verify`: the data sets the experiments use, from the registry of
//! srl-data (public addresses, sha256 of every file).

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::ui::Ui;

/// `srl data ...`. Every `--json` summary is one object: `list` gives `datasets` (an
/// array of `{name, files, downloadable, used_by}`), `verify` and `fetch` give
/// `data_dir` and `datasets` (one object per data set).
#[derive(Subcommand, Debug)]
pub enum DataCmd {
    /// Download, verify and install data sets (never replaces a failing file without --force).
    Fetch(FetchArgs),
    /// Verify the data sets present in the data directory.
    Verify(VerifyArgs),
    /// List the registered data sets.
    List,
}

/// `srl data fetch`.
#[derive(Args, Debug)]
pub struct FetchArgs {
    /// Data set names, or `all`.
    #[arg(default_value = "all")]
    pub names: Vec<String>,
    /// Data directory (default: $SRL_DATA_DIR, else ./data); created if missing.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    // `--force` (replace present files that fail verification) is the global flag of
    // every `srl` subcommand: `ui.force`.
}

/// `srl data verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Data set names, or `all`.
    #[arg(default_value = "all")]
    pub names: Vec<String>,
    /// Data directory (default: $SRL_DATA_DIR, else ./data); it must exist.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

/// The data directory and where it came from (for error messages).
fn data_dir(d: Option<&Path>) -> (PathBuf, &'static str) {
    if let Some(d) = d {
        return (d.to_path_buf(), "given with --data-dir");
    }
    match std::env::var_os("SRL_DATA_DIR") {
        Some(d) if !d.is_empty() => (PathBuf::from(d), "from $SRL_DATA_DIR"),
        _ => (
            PathBuf::from("data"),
            "the default ./data; give --data-dir or set SRL_DATA_DIR",
        ),
    }
}

/// Checks the data directory, naming where it came from in the error.
fn check_dir(dir: &Path, origin: &str) -> anyhow::Result<()> {
    srl_data::check_data_dir(dir).map_err(|e| anyhow::anyhow!("{e} ({origin})"))
}

fn selected(names: &[String]) -> anyhow::Result<Vec<&'static srl_data::Dataset>> {
    if names.is_empty() || names.iter().any(|n| n == "all") {
        return Ok(srl_data::DATASETS.iter().collect());
    }
    names
        .iter()
        .map(|n| srl_data::find(n).map_err(Into::into))
        .collect()
}

/// Runs `srl data`.
///
/// # Errors
/// Unknown names; with `fetch`, any failed download or verification (after trying every
/// data set); with `verify`, any present file that fails.
pub fn run(cmd: &DataCmd, ui: Ui) -> anyhow::Result<()> {
    match cmd {
        DataCmd::List => {
            let mut text = String::new();
            let mut rows = Vec::new();
            for d in srl_data::DATASETS {
                text.push_str(&format!(
                    "{:22} {:4} files  {}  (used by {})\n",
                    d.name,
                    d.files.len(),
                    if d.sources.is_empty() {
                        "by hand  "
                    } else {
                        "download "
                    },
                    d.used_by
                ));
                rows.push(json!({"name": d.name, "files": d.files.len(), "downloadable": !d.sources.is_empty(), "used_by": d.used_by}));
            }
            ui.summary(&json!({"datasets": rows}), &text)
        }
        DataCmd::Verify(a) => {
            let (dir, origin) = data_dir(a.data_dir.as_deref());
            let sets = selected(&a.names)?;
            check_dir(&dir, origin)?;
            let mut text = format!("data directory: {}\n", dir.display());
            let mut rows = Vec::new();
            let mut bad = 0;
            for d in sets {
                let r = srl_data::verify(&dir, d);
                let failed = r.failed();
                bad += failed.len();
                let state = r.summary();
                text.push_str(&format!("{:22} {state}\n", d.name));
                let mut failures = Vec::new();
                for (f, s) in &failed {
                    text.push_str(&format!("    {}: {}\n", f.path, s.describe(f)));
                    failures.push(match s {
                        srl_data::FileStatus::Mismatch { found } => json!({"path": f.path, "problem": "sha256 mismatch", "expected": f.sha256, "found": found}),
                        other => json!({"path": f.path, "problem": other.describe(f)}),
                    });
                }
                rows.push(json!({"name": d.name, "ok": r.ok(), "missing": r.missing(), "failed": failed.iter().map(|(f, _)| f.path).collect::<Vec<_>>(), "failures": failures}));
            }
            ui.summary(
                &json!({"data_dir": dir.display().to_string(), "datasets": rows}),
                &text,
            )?;
            if bad > 0 {
                let first = text
                    .lines()
                    .find(|l| l.starts_with("    "))
                    .unwrap_or_default()
                    .trim();
                bail!(
                    "{bad} file(s) in {} fail their sha256 check (first: {first}); nothing was changed",
                    dir.display()
                );
            }
            Ok(())
        }
        DataCmd::Fetch(a) => {
            let (dir, origin) = data_dir(a.data_dir.as_deref());
            let sets = selected(&a.names)?;
            if dir.exists() || dir.is_symlink() {
                // a missing data directory is created; anything else must be a folder
                check_dir(&dir, origin)?;
            }
            let note = |m: &str| ui.note(m);
            let opts = srl_data::FetchOptions {
                // the global `--force` of srl ("replace an existing output")
                force: ui.force,
                note: &note,
                ..srl_data::FetchOptions::default()
            };
            let mut errors = Vec::new();
            let mut rows = Vec::new();
            let mut text = String::new();
            for d in sets {
                match srl_data::fetch(d, &dir, &opts) {
                    Ok(r) => {
                        text.push_str(&format!(
                            "{:22} {} installed, {} already verified{}\n",
                            d.name,
                            r.installed.len(),
                            r.already_ok.len(),
                            if r.not_downloadable.is_empty() {
                                String::new()
                            } else {
                                format!(
                                    ", {} not downloadable (see its SOURCE.md)",
                                    r.not_downloadable.len()
                                )
                            }
                        ));
                        rows.push(json!({"name": d.name, "installed": r.installed, "already_ok": r.already_ok.len(), "not_downloadable": r.not_downloadable}));
                    }
                    Err(e) => {
                        text.push_str(&format!("{:22} FAILED: {e}\n", d.name));
                        rows.push(json!({"name": d.name, "error": e.to_string()}));
                        errors.push(format!("{}: {e}", d.name));
                    }
                }
            }
            ui.summary(
                &json!({"data_dir": dir.display().to_string(), "datasets": rows}),
                &text,
            )?;
            match errors.len() {
                0 => Ok(()),
                1 => bail!("{}", errors[0]),
                n => bail!("{n} data sets failed; first: {}", errors[0]),
            }
        }
    }
}
