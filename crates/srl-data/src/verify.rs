//! Verification of a data set's folder against the registry's sums.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::registry::{Dataset, FileSum};

/// sha256 (lower-case hex) of a file's bytes.
///
/// # Errors
/// I/O errors.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    sha256_reader(&mut f)
}

pub(crate) fn sha256_reader(r: &mut dyn std::io::Read) -> std::io::Result<String> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The state of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileStatus {
    /// Its sha256 (or, for a `.gz`, that of its decompressed bytes) is the recorded one.
    Ok,
    /// Not present.
    Missing,
    /// Present with another sum.
    Mismatch {
        /// The sum found.
        found: String,
    },
    /// Present but unreadable.
    Unreadable(String),
}

/// Checks one file against its registry entry.
pub fn check_file(path: &Path, sum: &FileSum) -> FileStatus {
    if !path.is_file() {
        return FileStatus::Missing;
    }
    match sha256_file(path) {
        Ok(s) if s == sum.sha256 => FileStatus::Ok,
        Ok(s) => {
            if let Some(plain) = sum.plain_sha256
                && let Ok(f) = std::fs::File::open(path)
            {
                let mut d = flate2::read::GzDecoder::new(f);
                if sha256_reader(&mut d).is_ok_and(|p| p == plain) {
                    return FileStatus::Ok;
                }
            }
            FileStatus::Mismatch { found: s }
        }
        Err(e) => FileStatus::Unreadable(e.to_string()),
    }
}

/// The verification of one data set's folder.
#[derive(Clone, Debug)]
pub struct VerifyReport {
    /// `DIR/NAME`.
    pub folder: PathBuf,
    /// Each registered file with its status.
    pub files: Vec<(&'static FileSum, FileStatus)>,
}

impl VerifyReport {
    /// Files whose sums match.
    pub fn ok(&self) -> usize {
        self.count(|s| *s == FileStatus::Ok)
    }
    /// Files not present.
    pub fn missing(&self) -> usize {
        self.count(|s| *s == FileStatus::Missing)
    }
    /// Present files that fail (mismatch or unreadable).
    pub fn failed(&self) -> Vec<(&'static FileSum, &FileStatus)> {
        self.files
            .iter()
            .filter(|(_, s)| !matches!(s, FileStatus::Ok | FileStatus::Missing))
            .map(|(f, s)| (*f, s))
            .collect()
    }
    fn count(&self, p: impl Fn(&FileStatus) -> bool) -> usize {
        self.files.iter().filter(|(_, s)| p(s)).count()
    }
}

/// Verifies `data_dir/NAME` against the registry entry `ds`.
pub fn verify(data_dir: &Path, ds: &'static Dataset) -> VerifyReport {
    let folder = data_dir.join(ds.name);
    let files = ds
        .files
        .iter()
        .map(|f| (f, check_file(&folder.join(f.path), f)))
        .collect();
    VerifyReport { folder, files }
}
