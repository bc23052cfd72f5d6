//! Terminal output: messages on stderr (silenced by `--quiet`), the run's summary on
//! stdout (text, or one JSON object with `--json`), progress bars only on a terminal, and
//! output files through srl-io: checked before the work (never an input, an existing file
//! only with `--force`, a writable folder), written under a temporary name and renamed
//! into place on success, removed on an interrupt.

use std::io::{IsTerminal as _, Write};
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};

/// Output settings shared by every subcommand.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ui {
    /// `--quiet`: no messages or progress on stderr (errors still print).
    pub quiet: bool,
    /// `--json`: the summary on stdout is one JSON object.
    pub json: bool,
    /// `--force`: replace existing output files.
    pub force: bool,
    /// The subcommand, as typed (`"boost learn"`, `"mrf"`, ...): the `command` field of
    /// every JSON object printed.
    pub command: &'static str,
}

/// The version of the `--json` output's layout: the `"srl_json"` field of every object
/// (summary or error) that `srl --json` prints on stdout. docs/srl-cli.md documents the
/// fields of each subcommand at this version.
pub const JSON_SCHEMA_VERSION: u32 = 1;

impl Ui {
    /// A message on stderr, unless `--quiet`.
    #[allow(clippy::print_stderr)]
    pub fn note(&self, msg: &str) {
        if !self.quiet {
            eprintln!("{msg}");
        }
    }

    /// Prints the summary on stdout: `json` with `--json`, else `text`.
    ///
    /// # Errors
    /// If stdout cannot be written (a closed pipe).
    pub fn summary(&self, json: &serde_json::Value, text: &str) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        if self.json {
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&self.envelope(json))?
            )?;
        } else if !text.is_empty() {
            write!(out, "{text}")?;
            if !text.ends_with('\n') {
                writeln!(out)?;
            }
        }
        Ok(())
    }

    /// `body` (an object) with the fields every JSON object of `srl` starts with:
    /// `"srl_json"` ([`JSON_SCHEMA_VERSION`]) and `"command"`. A body that is not an object
    /// is put under `"result"`.
    pub fn envelope(&self, body: &serde_json::Value) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        map.insert("srl_json".into(), JSON_SCHEMA_VERSION.into());
        map.insert("command".into(), self.command.into());
        match body {
            serde_json::Value::Object(o) => {
                for (k, v) in o {
                    map.insert(k.clone(), v.clone());
                }
            }
            other => {
                map.insert("result".into(), other.clone());
            }
        }
        serde_json::Value::Object(map)
    }

    /// A progress bar of `len` steps on stderr, or a hidden one when `--quiet` or stderr
    /// is not a terminal.
    pub fn progress(&self, len: u64, what: &str) -> ProgressBar {
        if self.quiet || !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        if let Ok(style) = ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} [{elapsed}]") {
            pb.set_style(style);
        }
        pb.set_message(what.to_owned());
        pb
    }
}

impl Ui {
    /// A spinner with `what` on stderr for work of unknown length (ticking every 100 ms),
    /// or a hidden one when `--quiet` or stderr is not a terminal.
    pub fn spinner(&self, what: &str) -> ProgressBar {
        if self.quiet || !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new_spinner();
        pb.set_message(what.to_owned());
        pb.enable_steady_tick(std::time::Duration::from_millis(100));
        pb
    }
}

/// Checks, before any work, that the command may write `outputs` given the files it
/// reads (`inputs`): no output is an input (also through links and `..`), an existing
/// output needs `--force`, the output folder exists and is writable. The rules are
/// [`srl_io::check_outputs`]'s.
///
/// # Errors
/// The first rule broken, naming the file.
pub fn check_outputs(ui: Ui, inputs: &[&Path], outputs: &[&Path]) -> anyhow::Result<()> {
    Ok(srl_io::check_outputs(inputs, outputs, ui.force)?)
}

/// Writes `path` atomically through [`srl_io::write_atomic`]: `fill` writes into a
/// temporary file beside it (`.NAME.srl-tmp-PID-…`), which is renamed onto `path` only if
/// `fill` succeeds; on any error or interrupt the temporary file is removed and `path`
/// is untouched. An existing `path` is replaced only with `--force`.
///
/// # Errors
/// `fill`'s error, or an I/O error naming the file.
pub fn write_atomic(
    ui: Ui,
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    srl_io::write_atomic(path, ui.force, fill)
}

/// `fill` writes to the file `out` atomically (see [`write_atomic`]) or, without `out`,
/// to stdout.
///
/// # Errors
/// As [`write_atomic`].
pub fn write_to(
    ui: Ui,
    out: Option<&Path>,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    match out {
        Some(p) => write_atomic(ui, p, fill),
        None => {
            let mut stdout = std::io::stdout().lock();
            fill(&mut stdout)?;
            stdout.flush()?;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("out.tsv");
        let ui = Ui::default();
        let r = write_atomic(ui, &p, |w| {
            writeln!(w, "half")?;
            anyhow::bail!("boom")
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_dir(dir.path()).expect("read").count(), 0);
        write_atomic(ui, &p, |w| Ok(writeln!(w, "ok")?)).expect("write");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "ok\n");
        let e = write_atomic(ui, &p, |w| Ok(writeln!(w, "again")?)).expect_err("exists");
        assert!(e.to_string().contains("--force"), "{e}");
        let forced = Ui { force: true, ..ui };
        write_atomic(forced, &p, |w| Ok(writeln!(w, "again")?)).expect("forced");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "again\n");
    }
}
