//! Download, safe extraction, verification and installation of a data set.
//!
//! Steps of [`fetch`]:
//! 1. remove the staging folders `DIR/.*.srl-partial-PID` that interrupted runs left
//!    ([`remove_stale_staging`]: the process is no longer running, or the folder is
//!    older than [`STALE_STAGING_AGE`]), saying so through `note`;
//! 2. verify the present files; if they all pass, stop. Present files that fail are not
//!    replaced unless `force` ([`DataError::WouldOverwrite`]).
//! 3. download each source into a staging folder `DIR/.NAME.srl-partial-PID` (inside the
//!    data directory, so the final renames stay on one file system), registered with
//!    srl-io so that SIGINT/SIGTERM removes it (once the binary installed srl-io's
//!    handler); an interrupted transfer (fewer bytes than `Content-Length`, a reset
//!    connection, a timeout) is an error and the next run starts again from scratch. A
//!    plain download is read through the [`FileSum::read_cap`] of its file;
//! 4. check archive entries before using them: absolute paths, `..` components and link
//!    entries (symbolic or hard) are refused ([`DataError::UnsafeEntry`]). Only the
//!    registry's files are extracted, streamed one at a time through a
//!    `Read::take(cap + 1)` with the cap of [`FileSum::read_cap`]; a larger entry is
//!    refused ([`DataError::TooLarge`]), as is more than the sum of the caps in all.
//!    Unlisted entries are skipped without being read into memory;
//! 5. apply the source's [`Transform`] and verify each staged file's sha256
//!    ([`DataError::Checksum`]);
//! 6. rename the verified files into `DIR/NAME/`. The staging folder is removed on
//!    success and on every error.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

use sha2::{Digest as _, Sha256};

use crate::registry::{Dataset, FileSum, Source, SourceKind, Transform};
use crate::verify::{FileStatus, check_file, verify};
use crate::{DataError, io_err};

/// Options of [`fetch`].
pub struct FetchOptions<'a> {
    /// Replace present files that fail verification (`srl`'s global `--force`).
    pub force: bool,
    /// Overall time limit of one download.
    pub timeout: Duration,
    /// Largest accepted download, bytes (an archive; plain downloads are capped lower,
    /// by their file's recorded size). Also the most decompressed bytes read from a
    /// tar.gz stream, unlisted entries included.
    pub max_bytes: u64,
    /// Called with progress messages (one line each).
    pub note: &'a dyn Fn(&str),
}

impl Default for FetchOptions<'_> {
    fn default() -> Self {
        Self {
            force: false,
            timeout: Duration::from_secs(600),
            max_bytes: 1 << 30,
            note: &|_| {},
        }
    }
}

/// What [`fetch`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FetchReport {
    /// Files that were already present and verified.
    pub already_ok: Vec<String>,
    /// Files downloaded, verified and installed.
    pub installed: Vec<String>,
    /// Registered files that no source provides (get them by hand).
    pub not_downloadable: Vec<String>,
}

/// sha256 (lower-case hex) of bytes.
pub fn sha256_bytes(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// A staging folder of an interrupted run older than this is removed even if a process
/// with its PID runs (the PID may have been reused): 24 hours.
pub const STALE_STAGING_AGE: Duration = Duration::from_secs(24 * 3600);

const STAGING_MARK: &str = ".srl-partial-";

/// Whether process `pid` runs. Linux: `/proc/PID` exists; elsewhere unknown (`None`).
fn process_runs(pid: u32) -> Option<bool> {
    if cfg!(target_os = "linux") {
        Some(Path::new(&format!("/proc/{pid}")).exists())
    } else {
        None
    }
}

/// Removes the staging folders `data_dir/.NAME.srl-partial-PID` left by interrupted runs
/// of any data set: those whose process no longer runs (Linux) or that are older than
/// [`STALE_STAGING_AGE`]. This process's own and live runs' folders are kept. Each
/// removal is reported through `note` (one line naming the folder and why). Returns the
/// removed folders. Errors (an unreadable `data_dir`, a folder that cannot be removed)
/// are reported through `note` and otherwise ignored: cleanup never fails a run.
pub fn remove_stale_staging(data_dir: &Path, note: &dyn Fn(&str)) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(data_dir) else {
        return removed;
    };
    let me = std::process::id();
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let Some(pid) = name
            .strip_prefix('.')
            .and_then(|n| n.rsplit_once(STAGING_MARK))
            .and_then(|(_, pid)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let path = e.path();
        let age = std::fs::symlink_metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok());
        let why = if process_runs(pid) == Some(false) {
            format!("process {pid} no longer runs")
        } else if age.is_some_and(|a| a > STALE_STAGING_AGE) {
            format!("older than {} hours", STALE_STAGING_AGE.as_secs() / 3600)
        } else {
            continue;
        };
        let r = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
        match r {
            Ok(()) => {
                note(&format!(
                    "removed {}, the staging folder of an interrupted run ({why})",
                    path.display()
                ));
                removed.push(path);
            }
            Err(err) => note(&format!(
                "could not remove {}, the staging folder of an interrupted run: {err}",
                path.display()
            )),
        }
    }
    removed
}

/// Removes the staging folder when dropped; while it lives, SIGINT/SIGTERM removes it
/// too (srl-io's registry).
struct Staging {
    path: PathBuf,
    _on_interrupt: srl_io::OnInterrupt,
}

impl Staging {
    fn create(path: PathBuf) -> Result<Self, DataError> {
        let on_interrupt = srl_io::remove_on_interrupt(&path);
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(io_err(&path))?;
        Ok(Self {
            path,
            _on_interrupt: on_interrupt,
        })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Downloads `url` to `dest` (via `dest.part`, renamed on success), at most `limit` bytes.
fn download(url: &str, dest: &Path, limit: u64, opts: &FetchOptions<'_>) -> Result<(), DataError> {
    let http = |message: String| DataError::Http {
        url: url.to_owned(),
        message,
    };
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(opts.timeout))
        .build()
        .into();
    let mut resp = agent.get(url).call().map_err(|e| http(e.to_string()))?;
    let expected = resp.body().content_length();
    if let Some(n) = expected
        && n > limit
    {
        return Err(http(format!(
            "{n} bytes announced, more than the limit of {limit}"
        )));
    }
    let part = dest.with_extension("part");
    let result = (|| -> Result<u64, DataError> {
        let mut file = std::fs::File::create(&part).map_err(io_err(&part))?;
        let mut reader = resp
            .body_mut()
            .with_config()
            .limit(limit.saturating_add(1))
            .reader()
            .take(limit.saturating_add(1));
        let mut buf = vec![0u8; 1 << 16];
        let mut total = 0u64;
        loop {
            let n = reader
                .read(&mut buf)
                .map_err(|e| http(format!("transfer interrupted after {total} bytes: {e}")))?;
            if n == 0 {
                break;
            }
            total += n as u64;
            if total > limit {
                return Err(http(format!("more than the limit of {limit} bytes sent")));
            }
            file.write_all(&buf[..n]).map_err(io_err(&part))?;
        }
        file.sync_all().map_err(io_err(&part))?;
        Ok(total)
    })();
    let total = match result {
        Ok(t) => t,
        Err(e) => {
            let _ = std::fs::remove_file(&part);
            return Err(e);
        }
    };
    if let Some(n) = expected
        && n != total
    {
        let _ = std::fs::remove_file(&part);
        return Err(http(format!(
            "transfer interrupted: {total} of {n} bytes received"
        )));
    }
    std::fs::rename(&part, dest).map_err(io_err(dest))
}

/// Checks an archive entry's name: relative, no `..`, no root or prefix.
fn safe_relative(name: &str) -> Result<PathBuf, String> {
    if name.starts_with('/') || name.starts_with('\\') {
        return Err("absolute path".into());
    }
    let p = Path::new(name);
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(x) => out.push(x),
            Component::CurDir => {}
            Component::ParentDir => return Err("`..` component".into()),
            Component::RootDir | Component::Prefix(_) => return Err("absolute path".into()),
        }
    }
    if name.split(['/', '\\']).any(|c| c == "..") {
        return Err("`..` component".into());
    }
    Ok(out)
}

/// Largest tar extension header (GNU long name or link, PAX record) accepted, bytes.
const EXTENSION_CAP: u64 = 64 * 1024;

/// A listed archive entry: the registry file it becomes and whether it holds the
/// decompressed content of a `.gz` file.
#[derive(Clone, Copy)]
struct Target {
    sum: &'static FileSum,
    gz: bool,
}

/// Streams an archive's regular files after the safety checks: for each entry `select`
/// returns the target and read cap of a listed entry (`None`: skipped unread); listed
/// entries are read through `take(cap + 1)` and handed to `sink` one at a time. Every
/// entry is checked, so an unsafe entry anywhere refuses the whole archive.
fn extract(
    kind: SourceKind,
    path: &Path,
    url: &str,
    max_stream: u64,
    select: &mut dyn FnMut(&str) -> Option<(Target, u64)>,
    sink: &mut dyn FnMut(Target, Vec<u8>) -> Result<(), DataError>,
) -> Result<(), DataError> {
    let arch = |message: String| DataError::Archive {
        url: url.to_owned(),
        message,
    };
    let unsafe_entry = |entry: &str, reason: String| DataError::UnsafeEntry {
        url: url.to_owned(),
        entry: entry.to_owned(),
        reason,
    };
    let read_capped = |r: &mut dyn Read, name: &str, t: Target, cap: u64| {
        let mut bytes = Vec::new();
        r.take(cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|x| arch(format!("{name}: {x}")))?;
        if bytes.len() as u64 > cap {
            return Err(DataError::TooLarge {
                url: url.to_owned(),
                entry: name.to_owned(),
                path: t.sum.path.to_owned(),
                cap,
            });
        }
        Ok(bytes)
    };
    let file = std::fs::File::open(path).map_err(io_err(path))?;
    match kind {
        SourceKind::Zip => {
            let mut z = zip::ZipArchive::new(file).map_err(|e| arch(e.to_string()))?;
            // Check every entry before reading any.
            let mut names = Vec::with_capacity(z.len());
            for i in 0..z.len() {
                let e = z.by_index_raw(i).map_err(|e| arch(e.to_string()))?;
                let name = e.name().to_owned();
                safe_relative(&name).map_err(|r| unsafe_entry(&name, r))?;
                if e.is_symlink() {
                    return Err(unsafe_entry(&name, "link entry".into()));
                }
                names.push((name, e.is_dir()));
            }
            for (i, (name, is_dir)) in names.iter().enumerate() {
                if *is_dir {
                    continue;
                }
                let Some((t, cap)) = select(name) else {
                    continue;
                };
                let mut e = z.by_index(i).map_err(|e| arch(e.to_string()))?;
                let bytes = read_capped(&mut e, name, t, cap)?;
                sink(t, bytes)?;
            }
        }
        SourceKind::TarGz => {
            // The tar crate reads extension headers (GNU long names and links, PAX
            // records) whole into memory: a first pass over the raw entries refuses any
            // larger than EXTENSION_CAP, reading none of them.
            let first = std::fs::File::open(path).map_err(io_err(path))?;
            let mut raw = tar::Archive::new(flate2::read::GzDecoder::new(first).take(max_stream));
            for entry in raw.entries().map_err(|e| arch(e.to_string()))?.raw(true) {
                let e = entry.map_err(|e| {
                    arch(format!(
                        "{e} (a tar.gz stream is read up to {max_stream} decompressed bytes)"
                    ))
                })?;
                let h = e.header();
                let ty = h.entry_type();
                let extension = ty.is_gnu_longname()
                    || ty.is_gnu_longlink()
                    || ty.is_pax_local_extensions()
                    || ty.is_pax_global_extensions();
                let size = h.size().map_err(|e| arch(e.to_string()))?;
                if extension && size > EXTENSION_CAP {
                    return Err(arch(format!(
                        "an extension header (long name or PAX record) of {size} bytes, more than {EXTENSION_CAP}"
                    )));
                }
            }
            let stream = flate2::read::GzDecoder::new(file).take(max_stream);
            let mut t = tar::Archive::new(stream);
            for entry in t.entries().map_err(|e| arch(e.to_string()))? {
                let mut e = entry.map_err(|e| {
                    arch(format!(
                        "{e} (a tar.gz stream is read up to {max_stream} decompressed bytes)"
                    ))
                })?;
                let name = String::from_utf8_lossy(&e.path_bytes()).into_owned();
                safe_relative(&name).map_err(|r| unsafe_entry(&name, r))?;
                let ty = e.header().entry_type();
                if ty.is_symlink() || ty.is_hard_link() {
                    return Err(unsafe_entry(&name, "link entry".into()));
                }
                if !ty.is_file() {
                    continue;
                }
                let Some((target, cap)) = select(&name) else {
                    continue;
                };
                let bytes = read_capped(&mut e, &name, target, cap)?;
                sink(target, bytes)?;
            }
        }
        SourceKind::Raw => {
            return Err(arch("a raw source is not an archive".into()));
        }
    }
    Ok(())
}

/// Where `member` goes (a registry path), if it is one of `ds`'s files.
fn target_of(ds: &'static Dataset, src: &Source, member: &str) -> Option<Target> {
    let p = format!("{}{member}", src.dest);
    if let Some(sum) = ds.file(&p) {
        return Some(Target { sum, gz: false });
    }
    if src.transform == Transform::Gzip {
        return ds
            .file(&format!("{p}.gz"))
            .map(|sum| Target { sum, gz: true });
    }
    None
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(bytes);
    enc.finish().unwrap_or_default()
}

fn prepend(line: &str, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + line.len() + 2);
    out.extend_from_slice(line.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(bytes);
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out
}

/// The bytes after the first `\n` (nothing if there is none).
fn after_first_line(bytes: &[u8]) -> &[u8] {
    bytes
        .iter()
        .position(|&b| b == b'\n')
        .map_or(&[][..], |i| &bytes[i + 1..])
}

/// Stages one verified file.
fn stage(staging: &Path, sum: &FileSum, bytes: &[u8]) -> Result<(), DataError> {
    let dest = staging.join(sum.path);
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    std::fs::write(&dest, bytes).map_err(io_err(&dest))?;
    match check_file(&dest, sum) {
        FileStatus::Ok => Ok(()),
        FileStatus::Mismatch { found } => Err(DataError::Checksum {
            path: sum.path.to_owned(),
            expected: sum.sha256.to_owned(),
            found,
        }),
        other => Err(DataError::Io {
            path: dest,
            source: std::io::Error::other(other.describe(sum)),
        }),
    }
}

/// Downloads, verifies and installs `ds` into `data_dir/NAME` (see the module docs).
///
/// # Errors
/// [`DataError::DataDir`] (`data_dir` exists but is not a directory),
/// [`DataError::NoSource`], [`DataError::WouldOverwrite`], [`DataError::Http`],
/// [`DataError::Archive`], [`DataError::UnsafeEntry`], [`DataError::TooLarge`],
/// [`DataError::Checksum`], [`DataError::Io`]. On error nothing new is left in
/// `data_dir`.
pub fn fetch(
    ds: &'static Dataset,
    data_dir: &Path,
    opts: &FetchOptions<'_>,
) -> Result<FetchReport, DataError> {
    if data_dir.exists() || data_dir.is_symlink() {
        crate::verify::check_data_dir(data_dir)?;
        remove_stale_staging(data_dir, opts.note);
    }
    let before = verify(data_dir, ds);
    let mut report = FetchReport::default();
    let failed: Vec<&str> = before.failed().iter().map(|(f, _)| f.path).collect();
    if !failed.is_empty() && !opts.force {
        return Err(DataError::WouldOverwrite {
            folder: before.folder.clone(),
            files: failed.join(", "),
        });
    }
    if before.missing() == 0 && failed.is_empty() {
        report.already_ok = ds.files.iter().map(|f| f.path.to_owned()).collect();
        return Ok(report);
    }
    if ds.sources.is_empty() {
        return Err(DataError::NoSource {
            name: ds.name.to_owned(),
        });
    }
    std::fs::create_dir_all(data_dir).map_err(io_err(data_dir))?;
    let staging = Staging::create(data_dir.join(format!(
        ".{}{STAGING_MARK}{}",
        ds.name,
        std::process::id()
    )))?;
    let wanted = |f: &FileSum| {
        !matches!(
            before
                .files
                .iter()
                .find(|(g, _)| g.path == f.path)
                .map(|(_, s)| s),
            Some(FileStatus::Ok)
        )
    };
    let mut staged: Vec<&FileSum> = Vec::new();
    for (k, src) in ds.sources.iter().enumerate() {
        let dl = staging.path.join(format!(".download-{k}"));
        match src.kind {
            SourceKind::Raw => {
                let (sum, plain) = match ds.file(src.dest) {
                    Some(sum) => (sum, false),
                    None => match ds.file(&format!("{}.gz", src.dest)) {
                        Some(sum) => (sum, true),
                        None => continue,
                    },
                };
                if !wanted(sum) || staged.iter().any(|s| s.path == sum.path) {
                    continue;
                }
                let cap = sum.read_cap(plain, src.transform).min(opts.max_bytes);
                (opts.note)(&format!("downloading {}", src.url));
                download(src.url, &dl, cap, opts)?;
                let bytes = std::fs::read(&dl).map_err(io_err(&dl))?;
                let bytes = match src.transform {
                    Transform::None => bytes,
                    Transform::Gzip => gzip(&bytes),
                    Transform::PrependLine(l) => prepend(l, &bytes),
                    Transform::ReplaceFirstLine(l) => prepend(l, after_first_line(&bytes)),
                };
                stage(&staging.path, sum, &bytes)?;
                staged.push(sum);
            }
            SourceKind::Zip | SourceKind::TarGz => {
                let todo: Vec<&FileSum> = ds
                    .files
                    .iter()
                    .filter(|f| {
                        f.path.starts_with(src.dest)
                            && wanted(f)
                            && !staged.iter().any(|s| s.path == f.path)
                    })
                    .collect();
                if todo.is_empty() {
                    continue;
                }
                (opts.note)(&format!("downloading {}", src.url));
                download(src.url, &dl, opts.max_bytes, opts)?;
                let total_cap = todo
                    .iter()
                    .map(|f| {
                        f.read_cap(f.plain_size.is_some(), src.transform)
                            .max(f.read_cap(false, src.transform))
                    })
                    .fold(0u64, u64::saturating_add);
                let mut total = 0u64;
                let mut done: Vec<&'static FileSum> = Vec::new();
                // An entry matches directly, or after dropping a single top folder that
                // the registry's paths leave out.
                let mut select = |name: &str| -> Option<(Target, u64)> {
                    if name.starts_with("__MACOSX/") {
                        return None;
                    }
                    let t = target_of(ds, src, name).or_else(|| {
                        name.split_once('/')
                            .and_then(|(_, rest)| target_of(ds, src, rest))
                    })?;
                    if !todo.iter().any(|f| f.path == t.sum.path)
                        || done.iter().any(|f| f.path == t.sum.path)
                    {
                        return None;
                    }
                    done.push(t.sum);
                    let cap = t.sum.read_cap(t.gz, src.transform).min(opts.max_bytes);
                    Some((t, cap))
                };
                let mut staged_here: Vec<&'static FileSum> = Vec::new();
                let mut sink = |t: Target, bytes: Vec<u8>| -> Result<(), DataError> {
                    total = total.saturating_add(bytes.len() as u64);
                    if total > total_cap {
                        return Err(DataError::Archive {
                            url: src.url.to_owned(),
                            message: format!(
                                "the listed entries hold more than {total_cap} bytes in all, the most the registry allows; nothing was installed"
                            ),
                        });
                    }
                    let bytes = match (t.gz, src.transform) {
                        (true, _) => gzip(&bytes),
                        (false, Transform::PrependLine(l)) => prepend(l, &bytes),
                        (false, Transform::ReplaceFirstLine(l)) => {
                            prepend(l, after_first_line(&bytes))
                        }
                        (false, _) => bytes,
                    };
                    stage(&staging.path, t.sum, &bytes)?;
                    staged_here.push(t.sum);
                    Ok(())
                };
                extract(
                    src.kind,
                    &dl,
                    src.url,
                    opts.max_bytes,
                    &mut select,
                    &mut sink,
                )?;
                staged.extend(staged_here);
            }
        }
        let _ = std::fs::remove_file(&dl);
    }
    // Install.
    let folder = data_dir.join(ds.name);
    for sum in &staged {
        let from = staging.path.join(sum.path);
        let to = folder.join(sum.path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io_err(parent))?;
        }
        std::fs::rename(&from, &to).map_err(io_err(&to))?;
        report.installed.push(sum.path.to_owned());
    }
    let after = verify(data_dir, ds);
    for (f, s) in &after.files {
        match s {
            FileStatus::Ok if !report.installed.iter().any(|p| p == f.path) => {
                report.already_ok.push(f.path.to_owned());
            }
            FileStatus::Missing => report.not_downloadable.push(f.path.to_owned()),
            _ => {}
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names() {
        assert!(safe_relative("a/b.txt").is_ok());
        assert!(safe_relative("./a").is_ok());
        assert!(safe_relative("../a").is_err());
        assert!(safe_relative("a/../../b").is_err());
        assert!(safe_relative("/etc/passwd").is_err());
        assert!(safe_relative("..\\x").is_err());
    }

    #[test]
    fn transforms() {
        assert_eq!(prepend("h", b"1\n2"), b"h\n1\n2\n");
        assert_eq!(prepend("h", after_first_line(b"old\n1\n")), b"h\n1\n");
        assert_eq!(after_first_line(b"no newline"), b"");
        let g = gzip(b"hello");
        let mut d = flate2::read::GzDecoder::new(&g[..]);
        let mut s = String::new();
        d.read_to_string(&mut s).expect("gunzip");
        assert_eq!(s, "hello");
    }
}
