//! Terminal output: messages on stderr (silenced by `--quiet`), the run's summary on
//! stdout (text, or one JSON object with `--json`), progress bars only on a terminal, and
//! output files through srl-io: checked before the work (never an input, an existing file
//! only with `--force`, a writable folder), written under a temporary name and renamed
//! into place on success, removed on an interrupt. Everything written to stdout goes
//! through [`stdout`]: a reader that went away (`srl ... | head -1`) makes the write fail
//! with [`StdoutClosed`], on which `main` ends the process quietly with status
//! [`EXIT_STDOUT_CLOSED`].

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
        let mut out = stdout();
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
        out.flush()?;
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
            let mut out = stdout();
            fill(&mut out)?;
            out.flush()?;
            Ok(())
        }
    }
}

/// The error of a write to stdout whose reader has gone away (a closed pipe, as in
/// `srl data list --json | head -1`): not a failure of the command, the reader wanted no
/// more. `main` ends the process on it without a message, with status
/// [`EXIT_STDOUT_CLOSED`] ([`is_stdout_closed`]).
#[derive(Debug)]
pub struct StdoutClosed;

impl std::fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout was closed by its reader (broken pipe)")
    }
}

impl std::error::Error for StdoutClosed {}

/// Exit status of a run whose stdout was closed early: 141 = 128 + SIGPIPE, the status a
/// shell reports for a Unix tool ended by a closed pipe (`seq 1000000 | head -1` under
/// `set -o pipefail`).
pub const EXIT_STDOUT_CLOSED: u8 = 141;

/// The process's stdout (locked) for every write of `srl`: a write or flush that finds
/// the pipe closed fails with an `io::Error` of kind `BrokenPipe` carrying
/// [`StdoutClosed`]; other errors pass unchanged.
pub struct Stdout(std::io::StdoutLock<'static>);

/// stdout through [`Stdout`].
pub fn stdout() -> Stdout {
    Stdout(std::io::stdout().lock())
}

/// `e`, marked as [`StdoutClosed`] when it is a broken pipe.
fn mark_closed(e: std::io::Error) -> std::io::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::io::Error::new(std::io::ErrorKind::BrokenPipe, StdoutClosed)
    } else {
        e
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(mark_closed)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(mark_closed)
    }
}

/// Whether `e` or one of its causes is a write to a closed stdout ([`StdoutClosed`]),
/// however the command wrapped it (`?`, `.context(...)`). A broken pipe elsewhere (a
/// network socket) is not.
pub fn is_stdout_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<StdoutClosed>()
            || c.downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::get_ref)
                .is_some_and(|inner| inner.is::<StdoutClosed>())
    })
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
