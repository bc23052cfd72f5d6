//! Download, safe extraction, verification and installation of a data set.
//!
//! Steps of [`fetch`]:
//! 1. verify the present files; if they all pass, stop. Present files that fail are not
//!    replaced unless `force` ([`DataError::WouldOverwrite`]).
//! 2. download each source into a staging folder `DIR/.NAME.srl-partial-PID` (inside the
//!    data directory, so the final renames stay on one file system); an interrupted
//!    transfer (fewer bytes than `Content-Length`, a reset connection, a timeout) is an
//!    error and the next run starts again from scratch;
//! 3. check every archive entry before writing anything: absolute paths, `..`
//!    components and link entries (symbolic or hard) are refused
//!    ([`DataError::UnsafeEntry`]); only the registry's files are extracted;
//! 4. apply the source's [`Transform`] and verify each staged file's sha256
//!    ([`DataError::Checksum`]);
//! 5. rename the verified files into `DIR/NAME/`. The staging folder is removed on
//!    success and on every error.

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use sha2::{Digest as _, Sha256};

use crate::registry::{Dataset, FileSum, Source, SourceKind, Transform};
use crate::verify::{FileStatus, check_file, verify};
use crate::{DataError, io_err};

/// Options of [`fetch`].
pub struct FetchOptions<'a> {
    /// Replace present files that fail verification.
    pub force: bool,
    /// Overall time limit of one download.
    pub timeout: Duration,
    /// Largest accepted download, bytes.
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

/// Removes the staging folder when dropped.
struct Staging(PathBuf);

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Downloads `url` to `dest` (via `dest.part`, renamed on success).
fn download(url: &str, dest: &Path, opts: &FetchOptions<'_>) -> Result<(), DataError> {
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
    if expected.is_some_and(|n| n > opts.max_bytes) {
        return Err(http(format!(
            "{} bytes announced, more than the limit of {}",
            expected.unwrap_or(0),
            opts.max_bytes
        )));
    }
    let part = dest.with_extension("part");
    let result = (|| -> Result<u64, DataError> {
        let mut file = std::fs::File::create(&part).map_err(io_err(&part))?;
        let mut reader = resp.body_mut().with_config().limit(opts.max_bytes).reader();
        let mut buf = vec![0u8; 1 << 16];
        let mut total = 0u64;
        loop {
            let n = reader
                .read(&mut buf)
                .map_err(|e| http(format!("transfer interrupted after {total} bytes: {e}")))?;
            if n == 0 {
                break;
            }
            file.write_all(&buf[..n]).map_err(io_err(&part))?;
            total += n as u64;
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

/// An archive's regular files (name, bytes) after the safety checks.
fn archive_members(
    kind: SourceKind,
    path: &Path,
    url: &str,
) -> Result<Vec<(String, Vec<u8>)>, DataError> {
    let arch = |message: String| DataError::Archive {
        url: url.to_owned(),
        message,
    };
    let unsafe_entry = |entry: &str, reason: String| DataError::UnsafeEntry {
        url: url.to_owned(),
        entry: entry.to_owned(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(io_err(path))?;
    let mut out = Vec::new();
    match kind {
        SourceKind::Zip => {
            let mut z = zip::ZipArchive::new(file).map_err(|e| arch(e.to_string()))?;
            // Check every entry before reading any.
            for i in 0..z.len() {
                let e = z.by_index_raw(i).map_err(|e| arch(e.to_string()))?;
                let name = e.name().to_owned();
                safe_relative(&name).map_err(|r| unsafe_entry(&name, r))?;
                if e.is_symlink() {
                    return Err(unsafe_entry(&name, "link entry".into()));
                }
            }
            for i in 0..z.len() {
                let mut e = z.by_index(i).map_err(|e| arch(e.to_string()))?;
                if e.is_dir() {
                    continue;
                }
                let name = e.name().to_owned();
                let mut bytes = Vec::new();
                e.read_to_end(&mut bytes)
                    .map_err(|x| arch(format!("{name}: {x}")))?;
                out.push((name, bytes));
            }
        }
        SourceKind::TarGz => {
            let mut t = tar::Archive::new(flate2::read::GzDecoder::new(file));
            for entry in t.entries().map_err(|e| arch(e.to_string()))? {
                let mut e = entry.map_err(|e| arch(e.to_string()))?;
                let name = String::from_utf8_lossy(&e.path_bytes()).into_owned();
                safe_relative(&name).map_err(|r| unsafe_entry(&name, r))?;
                let ty = e.header().entry_type();
                if ty.is_symlink() || ty.is_hard_link() {
                    return Err(unsafe_entry(&name, "link entry".into()));
                }
                if !ty.is_file() {
                    continue;
                }
                let mut bytes = Vec::new();
                e.read_to_end(&mut bytes)
                    .map_err(|x| arch(format!("{name}: {x}")))?;
                out.push((name, bytes));
            }
        }
        SourceKind::Raw => unreachable!("raw sources are not archives"),
    }
    Ok(out)
}

/// Where `member` goes (a registry path), if it is one of `ds`'s files.
fn target_of<'d>(ds: &'d Dataset, src: &Source, member: &str) -> Option<(&'d FileSum, bool)> {
    let p = format!("{}{member}", src.dest);
    if let Some(f) = ds.file(&p) {
        return Some((f, false));
    }
    if src.transform == Transform::Gzip {
        return ds.file(&format!("{p}.gz")).map(|f| (f, true));
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
            source: std::io::Error::other(format!("{other:?}")),
        }),
    }
}

/// Downloads, verifies and installs `ds` into `data_dir/NAME` (see the module docs).
///
/// # Errors
/// [`DataError::NoSource`], [`DataError::WouldOverwrite`], [`DataError::Http`],
/// [`DataError::Archive`], [`DataError::UnsafeEntry`], [`DataError::Checksum`],
/// [`DataError::Io`]. On error nothing new is left in `data_dir`.
pub fn fetch(
    ds: &'static Dataset,
    data_dir: &Path,
    opts: &FetchOptions<'_>,
) -> Result<FetchReport, DataError> {
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
    let staging =
        Staging(data_dir.join(format!(".{}.srl-partial-{}", ds.name, std::process::id())));
    let _ = std::fs::remove_dir_all(&staging.0);
    std::fs::create_dir_all(&staging.0).map_err(io_err(&staging.0))?;
    let mut staged: Vec<&FileSum> = Vec::new();
    for (k, src) in ds.sources.iter().enumerate() {
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
        let dl = staging.0.join(format!(".download-{k}"));
        match src.kind {
            SourceKind::Raw => {
                let Some(sum) = ds
                    .file(src.dest)
                    .or_else(|| ds.file(&format!("{}.gz", src.dest)))
                else {
                    continue;
                };
                if !wanted(sum) {
                    continue;
                }
                (opts.note)(&format!("downloading {}", src.url));
                download(src.url, &dl, opts)?;
                let bytes = std::fs::read(&dl).map_err(io_err(&dl))?;
                let bytes = match src.transform {
                    Transform::None => bytes,
                    Transform::Gzip => gzip(&bytes),
                    Transform::PrependLine(l) => prepend(l, &bytes),
                    Transform::ReplaceFirstLine(l) => prepend(l, after_first_line(&bytes)),
                };
                stage(&staging.0, sum, &bytes)?;
                staged.push(sum);
            }
            SourceKind::Zip | SourceKind::TarGz => {
                if !ds
                    .files
                    .iter()
                    .any(|f| f.path.starts_with(src.dest) && wanted(f))
                {
                    continue;
                }
                (opts.note)(&format!("downloading {}", src.url));
                download(src.url, &dl, opts)?;
                let members = archive_members(src.kind, &dl, src.url)?;
                let members: Vec<(String, Vec<u8>)> = members
                    .into_iter()
                    .filter(|(n, _)| !n.starts_with("__MACOSX/"))
                    .collect();
                let direct = members.iter().any(|(n, _)| target_of(ds, src, n).is_some());
                // A single top folder that the registry's paths leave out is dropped.
                let strip = |n: &str| -> String {
                    if direct {
                        n.to_owned()
                    } else {
                        n.split_once('/').map_or(n, |(_, rest)| rest).to_owned()
                    }
                };
                for (name, bytes) in &members {
                    let Some((sum, gz)) = target_of(ds, src, &strip(name)) else {
                        continue;
                    };
                    if !wanted(sum) {
                        continue;
                    }
                    let bytes = match (gz, src.transform) {
                        (true, _) => gzip(bytes),
                        (false, Transform::PrependLine(l)) => prepend(l, bytes),
                        (false, Transform::ReplaceFirstLine(l)) => {
                            prepend(l, after_first_line(bytes))
                        }
                        (false, _) => bytes.clone(),
                    };
                    stage(&staging.0, sum, &bytes)?;
                    staged.push(sum);
                }
            }
        }
        let _ = std::fs::remove_file(&dl);
    }
    // Install.
    let folder = data_dir.join(ds.name);
    for sum in &staged {
        let from = staging.0.join(sum.path);
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
