//! Terminal output: messages on stderr (silenced by `--quiet`), the run's summary on
//! stdout (text, or one JSON object with `--json`), progress bars only on a terminal, and
//! output files written under a temporary name and renamed into place on success.

use std::io::{IsTerminal as _, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};

/// Output settings shared by every subcommand.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ui {
    /// `--quiet`: no messages or progress on stderr (errors still print).
    pub quiet: bool,
    /// `--json`: the summary on stdout is one JSON object.
    pub json: bool,
}

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
            writeln!(out, "{}", serde_json::to_string_pretty(json)?)?;
        } else if !text.is_empty() {
            write!(out, "{text}")?;
            if !text.ends_with('\n') {
                writeln!(out)?;
            }
        }
        Ok(())
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

/// Writes `path` atomically: `fill` writes into `PATH.srl-tmp-PID` beside it, which is
/// renamed onto `path` only if `fill` succeeds; on any error the temporary file is
/// removed and `path` is untouched (no partial output is ever left behind).
///
/// # Errors
/// `fill`'s error, or an I/O error naming the file.
pub fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let tmp = temp_name(path);
    let result = (|| -> anyhow::Result<()> {
        let file = std::fs::File::create(&tmp)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let mut w = std::io::BufWriter::new(file);
        fill(&mut w)?;
        w.flush()
            .with_context(|| format!("cannot write {}", path.display()))?;
        drop(w);
        std::fs::rename(&tmp, path)
            .with_context(|| format!("cannot move the output into place at {}", path.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn temp_name(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".srl-tmp-{}", std::process::id()));
    path.with_file_name(name)
}

/// `fill` writes to the file `out` atomically (see [`write_atomic`]) or, without `out`,
/// to stdout.
///
/// # Errors
/// As [`write_atomic`].
pub fn write_to(
    out: Option<&Path>,
    fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    match out {
        Some(p) => write_atomic(p, fill),
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
        let r = write_atomic(&p, |w| {
            writeln!(w, "half")?;
            anyhow::bail!("boom")
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read_dir(dir.path()).expect("read").count(), 0);
        write_atomic(&p, |w| Ok(writeln!(w, "ok")?)).expect("write");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "ok\n");
    }
}
