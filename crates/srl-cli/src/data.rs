//! `srl data fetch | verify`: the data sets the experiments use, from the registry of
//! srl-data (public addresses, sha256 of every file).

use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Args, Subcommand};
use serde_json::json;

use crate::ui::Ui;

/// `srl data ...`.
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
    /// Data directory (default: $SRL_DATA_DIR, else ./data).
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
    /// Data directory (default: $SRL_DATA_DIR, else ./data).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

fn data_dir(d: Option<&Path>) -> PathBuf {
    d.map(Path::to_path_buf)
        .or_else(|| std::env::var_os("SRL_DATA_DIR").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("data"))
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
            ui.summary(&json!(rows), &text)
        }
        DataCmd::Verify(a) => {
            let dir = data_dir(a.data_dir.as_deref());
            let mut text = format!("data directory: {}\n", dir.display());
            let mut rows = Vec::new();
            let mut bad = 0;
            for d in selected(&a.names)? {
                let r = srl_data::verify(&dir, d);
                let failed = r.failed();
                bad += failed.len();
                let state = if r.missing() == d.files.len() {
                    "missing".to_owned()
                } else {
                    format!(
                        "{}/{} ok{}{}",
                        r.ok(),
                        d.files.len(),
                        if r.missing() > 0 {
                            format!(", {} absent", r.missing())
                        } else {
                            String::new()
                        },
                        if failed.is_empty() {
                            String::new()
                        } else {
                            format!(", {} FAILED", failed.len())
                        }
                    )
                };
                text.push_str(&format!("{:22} {state}\n", d.name));
                for (f, s) in &failed {
                    text.push_str(&format!("    {}: {s:?}\n", f.path));
                }
                rows.push(json!({"name": d.name, "ok": r.ok(), "missing": r.missing(), "failed": failed.iter().map(|(f, _)| f.path).collect::<Vec<_>>()}));
            }
            ui.summary(&json!({"command": "data verify", "data_dir": dir.display().to_string(), "datasets": rows}), &text)?;
            if bad > 0 {
                bail!("{bad} file(s) in {} fail their sha256 check", dir.display());
            }
            Ok(())
        }
        DataCmd::Fetch(a) => {
            let dir = data_dir(a.data_dir.as_deref());
            let note = |m: &str| ui.note(m);
            let opts = srl_data::FetchOptions {
                force: ui.force,
                note: &note,
                ..srl_data::FetchOptions::default()
            };
            let mut errors = Vec::new();
            let mut rows = Vec::new();
            let mut text = String::new();
            for d in selected(&a.names)? {
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
            ui.summary(&json!({"command": "data fetch", "data_dir": dir.display().to_string(), "datasets": rows}), &text)?;
            match errors.len() {
                0 => Ok(()),
                1 => bail!("{}", errors[0]),
                n => bail!("{n} data sets failed; first: {}", errors[0]),
            }
        }
    }
}
