//! # srl-io: outputs that never destroy a user's file
//!
//! Every front-end of srl (the `srl` command, `srl-dist`, `cargo xtask`, the Python
//! bindings) writes its files through this crate, so one set of rules holds everywhere
//! (the developers' guide: "Nothing the user gave is lost or overwritten without asking"):
//!
//! 1. **An output that is an input is refused** before any work starts:
//!    [`check_outputs`] compares every output with every input of the command as files
//!    (device and inode, through the `same-file` crate), so a path that reaches an input
//!    through a symbolic link, `..` or a hard link is caught as well as the same spelling.
//! 2. **An existing output is replaced only when forced** (`--force` on every `srl`
//!    subcommand); without it [`check_outputs`] stops with [`OutputError::Exists`]
//!    ("exists; add --force"), and [`write_atomic`] refuses to replace a file that
//!    appeared meanwhile. Outputs that exist but are not regular files (a folder, a
//!    device such as `/dev/null`, a FIFO) are never replaced, forced or not.
//! 3. **The output's folder must exist and be writable**, checked by [`check_outputs`]
//!    before the work (by creating and removing a temporary file there), not after it.
//! 4. **No partial files**: [`write_atomic`] writes under a temporary name
//!    (`.NAME.srl-tmp-PID-RANDOM`) in the output's folder and renames it into place only
//!    when the whole content was written and flushed. On an error the temporary file is
//!    removed; on an interrupt (SIGINT, SIGTERM, SIGHUP), once a binary has called
//!    [`install_interrupt_cleanup`], every registered temporary file and staging folder
//!    ([`remove_on_interrupt`]) is removed before the process exits with status 130.
//!    A temporary file left by a process killed outright (SIGKILL, power loss) is removed
//!    by the next write to the same output, once its process is gone.
//!
//! Signals are handled by the `ctrlc` crate (with its `termination` feature), temporary
//! files by `tempfile`. A library never installs the handler: only binaries do (a Python
//! process keeps its own `KeyboardInterrupt`).
//!
//! ```no_run
//! use std::io::Write as _;
//! use std::path::Path;
//!
//! srl_io::install_interrupt_cleanup();
//! let input = Path::new("model.uai");
//! let output = Path::new("model.MAR");
//! srl_io::check_outputs(&[input], &[output], false)?; // before the work
//! // ... the work ...
//! srl_io::write_atomic(output, false, |w| -> Result<(), srl_io::OutputError> {
//!     writeln!(w, "MAR").map_err(|e| srl_io::OutputError::io(output, e))?;
//!     Ok(())
//! })?;
//! # Ok::<(), srl_io::OutputError>(())
//! ```

use std::ffi::OsString;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

/// Why an output cannot be written. Every variant names the path(s) at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The output is one of the command's inputs (the same file, possibly reached
    /// through a symbolic link, `..` or a hard link).
    #[error(
        "output {output} is the input {input}: refusing to overwrite an input; choose another output path"
    )]
    SameAsInput {
        /// The output path as given.
        output: PathBuf,
        /// The input path as given.
        input: PathBuf,
    },
    /// Two outputs of one command are the same file.
    #[error("outputs {first} and {second} are the same file")]
    DuplicateOutput {
        /// The first output path as given.
        first: PathBuf,
        /// The second output path as given.
        second: PathBuf,
    },
    /// The output exists and replacing it was not asked for.
    #[error("output {path} exists; add --force to replace it")]
    Exists {
        /// The output path as given.
        path: PathBuf,
    },
    /// The output exists and is not a regular file (a folder, a device, a FIFO, a
    /// socket): never replaced.
    #[error("output {path} exists and is {what}, not a regular file: refusing to replace it")]
    NotARegularFile {
        /// The output path as given.
        path: PathBuf,
        /// What it is ("a folder", "a device", ...).
        what: &'static str,
    },
    /// The output's folder does not exist.
    #[error("cannot write {path}: folder {folder} does not exist")]
    NoFolder {
        /// The output path as given.
        path: PathBuf,
        /// Its folder.
        folder: PathBuf,
    },
    /// The output's folder is not a folder.
    #[error("cannot write {path}: {folder} is not a folder")]
    NotAFolder {
        /// The output path as given.
        path: PathBuf,
        /// Its would-be folder.
        folder: PathBuf,
    },
    /// The output's folder exists but a file cannot be created in it.
    #[error("cannot write {path}: folder {folder} is not writable ({source})")]
    NotWritable {
        /// The output path as given.
        path: PathBuf,
        /// Its folder.
        folder: PathBuf,
        /// The error of the attempt.
        source: std::io::Error,
    },
    /// An I/O error while writing or renaming the output.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The output path as given.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl OutputError {
    /// An [`OutputError::Io`] for `path` (a helper for `map_err` in writers' closures).
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Checks, before any work, that every path of `outputs` can be written by a command
/// that reads `inputs` (files or folders; paths that do not exist are ignored as
/// inputs):
/// - no output is the same file as an input ([`OutputError::SameAsInput`]) or as another
///   output ([`OutputError::DuplicateOutput`]);
/// - an existing output is a regular file ([`OutputError::NotARegularFile`]) and is
///   replaced only when `force` ([`OutputError::Exists`]); a dangling symbolic link
///   counts as existing;
/// - the output's folder (the current folder for a bare file name) exists, is a folder
///   and accepts a new file ([`OutputError::NoFolder`], [`OutputError::NotAFolder`],
///   [`OutputError::NotWritable`]); the check creates and removes one temporary file
///   there.
///
/// A folder given as an input is compared as a folder: pass the files a command reads
/// from it (as srl's BoostSRL reader lists them) to protect those files.
///
/// # Errors
/// The first rule broken, in the order above, for the first output that breaks one.
pub fn check_outputs(inputs: &[&Path], outputs: &[&Path], force: bool) -> Result<(), OutputError> {
    for (i, &out) in outputs.iter().enumerate() {
        for &input in inputs {
            if same_file(out, input) {
                return Err(OutputError::SameAsInput {
                    output: out.to_path_buf(),
                    input: input.to_path_buf(),
                });
            }
        }
        for &earlier in &outputs[..i] {
            if same_file(out, earlier) || out == earlier {
                return Err(OutputError::DuplicateOutput {
                    first: earlier.to_path_buf(),
                    second: out.to_path_buf(),
                });
            }
        }
        check_existing(out, force)?;
        check_folder(out)?;
    }
    Ok(())
}

/// Whether `a` and `b` exist and are the same file (device and inode on Unix).
fn same_file(a: &Path, b: &Path) -> bool {
    same_file::is_same_file(a, b).unwrap_or(false)
}

/// What a non-regular file is, for messages.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if ft.is_block_device() || ft.is_char_device() {
            return "a device";
        }
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

fn check_existing(out: &Path, force: bool) -> Result<(), OutputError> {
    match std::fs::metadata(out) {
        Ok(meta) if !meta.is_file() => Err(OutputError::NotARegularFile {
            path: out.to_path_buf(),
            what: kind_of(&meta),
        }),
        Ok(_) if !force => Err(OutputError::Exists {
            path: out.to_path_buf(),
        }),
        Ok(_) => Ok(()),
        // a dangling symbolic link: the rename would replace the link
        Err(_) if std::fs::symlink_metadata(out).is_ok() && !force => Err(OutputError::Exists {
            path: out.to_path_buf(),
        }),
        Err(_) => Ok(()),
    }
}

/// The folder an output is written in (`.` for a bare file name).
fn folder_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn check_folder(out: &Path) -> Result<(), OutputError> {
    let folder = folder_of(out);
    match std::fs::metadata(&folder) {
        Err(_) => {
            return Err(OutputError::NoFolder {
                path: out.to_path_buf(),
                folder,
            });
        }
        Ok(m) if !m.is_dir() => {
            return Err(OutputError::NotAFolder {
                path: out.to_path_buf(),
                folder,
            });
        }
        Ok(_) => {}
    }
    tempfile::Builder::new()
        .prefix(".srl-write-check-")
        .tempfile_in(&folder)
        .map(drop)
        .map_err(|source| OutputError::NotWritable {
            path: out.to_path_buf(),
            folder,
            source,
        })
}

// ---------------------------------------------------------------- interrupt cleanup --

/// Paths removed when the process is interrupted (files, or folders removed whole).
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static HANDLER: Once = Once::new();

fn pending() -> MutexGuard<'static, Vec<PathBuf>> {
    // a panic while the lock was held leaves a usable list
    PENDING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Installs the process's SIGINT / SIGTERM / SIGHUP handler (once; later calls do
/// nothing): it removes every path registered with [`remove_on_interrupt`] (temporary
/// outputs of [`write_atomic`], staging folders) and exits with status 130.
///
/// For binaries only: a library (or a Python extension) must not take the process's
/// signals. Returns `false` when another handler was installed before (the `ctrlc`
/// crate allows one), in which case interrupts leave temporary files to the next run's
/// stale-file cleanup.
pub fn install_interrupt_cleanup() -> bool {
    let mut ok = true;
    HANDLER.call_once(|| {
        ok = ctrlc::set_handler(|| {
            let paths = std::mem::take(&mut *pending());
            for p in paths {
                remove_path(&p);
            }
            std::process::exit(130);
        })
        .is_ok();
    });
    ok
}

fn remove_path(p: &Path) {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(p);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(p);
        }
        Err(_) => {}
    }
}

/// A registration of [`remove_on_interrupt`]: dropping it unregisters the path (it does
/// not remove it; the owner decides).
#[derive(Debug)]
#[must_use = "the path is unregistered when the guard is dropped"]
pub struct OnInterrupt {
    path: PathBuf,
}

impl Drop for OnInterrupt {
    fn drop(&mut self) {
        let mut list = pending();
        if let Some(i) = list.iter().rposition(|p| p == &self.path) {
            list.swap_remove(i);
        }
    }
}

/// Registers `path` (a file, or a folder removed with everything in it) to be removed if
/// the process is interrupted while the returned guard lives. Effective only after
/// [`install_interrupt_cleanup`]; harmless without it.
pub fn remove_on_interrupt(path: &Path) -> OnInterrupt {
    pending().push(path.to_path_buf());
    OnInterrupt {
        path: path.to_path_buf(),
    }
}

// ---------------------------------------------------------------------- atomic write --

/// The prefix of the temporary names of `out`, with this process's id: `.NAME.srl-tmp-PID-`.
fn temp_prefix(out: &Path, pid: u32) -> OsString {
    let mut s = OsString::from(".");
    s.push(out.file_name().unwrap_or_else(|| "output".as_ref()));
    s.push(format!(".srl-tmp-{pid}-"));
    s
}

/// Removes temporary files of `out` left by processes that no longer run (Linux: no
/// `/proc/PID`). Elsewhere nothing is removed.
fn remove_stale_temporaries(out: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let folder = folder_of(out);
    let Some(name) = out.file_name() else { return };
    let mut stem = OsString::from(".");
    stem.push(name);
    stem.push(".srl-tmp-");
    let stem = stem.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return;
    };
    for e in entries.flatten() {
        let file_name = e.file_name();
        let f = file_name.to_string_lossy();
        let Some(rest) = f.strip_prefix(&stem) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Writes `path` atomically: `fill` writes into a temporary file beside it (buffered),
/// which is flushed, synced and renamed onto `path` only if `fill` succeeds. On any
/// error, and on an interrupt once [`install_interrupt_cleanup`] ran, the temporary file
/// is removed and `path` is untouched.
///
/// Without `force` an existing `path` is never replaced, even one created by another
/// process while `fill` ran ([`OutputError::Exists`]); an existing `path` that is not a
/// regular file is never replaced ([`OutputError::NotARegularFile`]). Call
/// [`check_outputs`] before the work so these errors come before it; this function checks
/// again at the end.
///
/// # Errors
/// `fill`'s error, or an [`OutputError`] (converted into `E`) naming the file.
pub fn write_atomic<E: From<OutputError>>(
    path: &Path,
    force: bool,
    fill: impl FnOnce(&mut dyn Write) -> Result<(), E>,
) -> Result<(), E> {
    if let Ok(meta) = std::fs::metadata(path)
        && !meta.is_file()
    {
        return Err(OutputError::NotARegularFile {
            path: path.to_path_buf(),
            what: kind_of(&meta),
        }
        .into());
    }
    remove_stale_temporaries(path);
    let folder = folder_of(path);
    let mut registration = None;
    let tmp = tempfile::Builder::new()
        .prefix(&temp_prefix(path, std::process::id()))
        .make_in(&folder, |p| {
            registration = Some(remove_on_interrupt(p));
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(p)
        })
        .map_err(|e| OutputError::io(path, e))?;
    let mut w = BufWriter::new(tmp.as_file());
    fill(&mut w)?;
    w.flush().map_err(|e| OutputError::io(path, e))?;
    drop(w);
    tmp.as_file()
        .sync_all()
        .map_err(|e| OutputError::io(path, e))?;
    let persisted = if force {
        tmp.persist(path)
    } else {
        tmp.persist_noclobber(path)
    };
    drop(registration);
    match persisted {
        Ok(_) => Ok(()),
        Err(e) if !force && e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(OutputError::Exists {
                path: path.to_path_buf(),
            }
            .into())
        }
        Err(e) => Err(OutputError::io(path, e.error).into()),
    }
}

/// [`write_atomic`] of a byte string.
///
/// # Errors
/// As [`write_atomic`].
pub fn write_bytes_atomic(path: &Path, force: bool, bytes: &[u8]) -> Result<(), OutputError> {
    write_atomic(path, force, |w| {
        w.write_all(bytes).map_err(|e| OutputError::io(path, e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn output_that_is_an_input_is_refused_through_links_and_dots() {
        let dir = tempfile::tempdir().expect("tempdir");
        let input = dir.path().join("g.uai");
        std::fs::write(&input, "MARKOV\n").expect("write");
        std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
        let dotted = dir.path().join("sub").join("..").join("g.uai");
        let link = dir.path().join("link.uai");
        std::os::unix::fs::symlink(&input, &link).expect("symlink");
        let hard = dir.path().join("hard.uai");
        std::fs::hard_link(&input, &hard).expect("hard link");
        for out in [&input, &dotted, &link, &hard] {
            for force in [false, true] {
                let e = check_outputs(&[&input], &[out], force).expect_err("refused");
                assert!(matches!(e, OutputError::SameAsInput { .. }), "{out:?}: {e}");
            }
        }
        assert_eq!(std::fs::read_to_string(&input).expect("read"), "MARKOV\n");
    }

    #[test]
    fn existing_output_needs_force_and_new_output_passes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out.MAR");
        check_outputs(&[], &[&out], false).expect("new file");
        std::fs::write(&out, "old").expect("write");
        let e = check_outputs(&[], &[&out], false).expect_err("exists");
        assert!(e.to_string().contains("exists; add --force"), "{e}");
        check_outputs(&[], &[&out], true).expect("forced");
        // the writability probe leaves nothing behind
        assert_eq!(names(dir.path()), ["out.MAR"]);
    }

    #[test]
    fn missing_or_non_folder_parent_is_reported_before_the_work() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("missing").join("out.tsv");
        let e = check_outputs(&[], &[&out], true).expect_err("no folder");
        assert!(matches!(e, OutputError::NoFolder { .. }), "{e}");
        let file = dir.path().join("file");
        std::fs::write(&file, "x").expect("write");
        let e = check_outputs(&[], &[&file.join("out.tsv")], true).expect_err("not a folder");
        assert!(
            matches!(
                e,
                OutputError::NotAFolder { .. } | OutputError::NoFolder { .. }
            ),
            "{e}"
        );
    }

    #[test]
    fn devices_and_folders_are_never_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        for force in [false, true] {
            let e = check_outputs(&[], &[Path::new("/dev/null")], force).expect_err("device");
            assert!(matches!(e, OutputError::NotARegularFile { .. }), "{e}");
            let e = check_outputs(&[], &[dir.path()], force).expect_err("folder");
            assert!(matches!(e, OutputError::NotARegularFile { .. }), "{e}");
            let e = write_bytes_atomic(Path::new("/dev/null"), force, b"x").expect_err("device");
            assert!(matches!(e, OutputError::NotARegularFile { .. }), "{e}");
        }
    }

    #[test]
    fn duplicate_outputs_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("a.json");
        let e = check_outputs(&[], &[&a, &a], true).expect_err("twice");
        assert!(matches!(e, OutputError::DuplicateOutput { .. }), "{e}");
    }

    #[test]
    fn dangling_symlink_counts_as_existing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = dir.path().join("out.tsv");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &link).expect("symlink");
        let e = check_outputs(&[], &[&link], false).expect_err("dangling");
        assert!(matches!(e, OutputError::Exists { .. }), "{e}");
    }

    #[test]
    fn failed_write_leaves_nothing_and_success_replaces_only_when_forced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("out.tsv");
        let r = write_atomic(&p, false, |w| {
            w.write_all(b"half").map_err(|e| OutputError::io(&p, e))?;
            Err(OutputError::io(&p, std::io::Error::other("boom")))
        });
        assert!(r.is_err());
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
        write_bytes_atomic(&p, false, b"one").expect("write");
        let e = write_bytes_atomic(&p, false, b"two").expect_err("exists");
        assert!(matches!(e, OutputError::Exists { .. }), "{e}");
        assert_eq!(std::fs::read(&p).expect("read"), b"one");
        write_bytes_atomic(&p, true, b"two").expect("forced");
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        assert_eq!(names(dir.path()), ["out.tsv"]);
    }

    #[test]
    fn stale_temporaries_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("out.MAR");
        // PID 4194304 is above Linux's PID limit: never a running process
        let stale = dir.path().join(".out.MAR.srl-tmp-4194304-abcdef");
        std::fs::write(&stale, "partial").expect("write");
        let other = dir.path().join(".other.srl-tmp-4194304-abcdef");
        std::fs::write(&other, "partial").expect("write");
        write_bytes_atomic(&p, false, b"done").expect("write");
        assert_eq!(
            names(dir.path()),
            [".other.srl-tmp-4194304-abcdef", "out.MAR"]
        );
    }

    #[test]
    fn registrations_unregister_on_drop() {
        let a = PathBuf::from("/nonexistent/srl-io-test-a");
        let g = remove_on_interrupt(&a);
        assert!(pending().contains(&a));
        drop(g);
        assert!(!pending().contains(&a));
    }
}
