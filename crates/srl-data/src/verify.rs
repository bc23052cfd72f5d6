//! Verification of a data set's folder against the registry's sums.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use crate::DataError;
use crate::registry::{Dataset, FileSum};

/// Checks that `dir` is an existing, readable directory (following symbolic links).
///
/// # Errors
/// [`DataError::DataDir`] saying, in words, that it does not exist, is not a directory,
/// or cannot be read.
pub fn check_data_dir(dir: &Path) -> Result<(), DataError> {
    let err = |reason: String| DataError::DataDir {
        path: dir.to_path_buf(),
        reason,
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => std::fs::read_dir(dir)
            .map(|_| ())
            .map_err(|e| err(format!("cannot be read: {e}"))),
        Ok(_) => Err(err("is not a directory".into())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(err("does not exist".into())),
        Err(e) => Err(err(format!("cannot be read: {e}"))),
    }
}

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

impl FileStatus {
    /// The status in words for a report line about `sum`'s file, e.g. `ok`, `absent`,
    /// `sha256 expected 3f2a… found 9b1c…` (full 64-digit sums), `unreadable: …`.
    pub fn describe(&self, sum: &FileSum) -> String {
        match self {
            Self::Ok => "ok".into(),
            Self::Missing => "absent".into(),
            Self::Mismatch { found } => {
                format!("sha256 expected {} found {found}", sum.sha256)
            }
            Self::Unreadable(e) => format!("unreadable: {e}"),
        }
    }
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
    /// One line for a person: `missing` when no registered file is present, else
    /// `OK/TOTAL ok`, then `, N absent` and `, N FAILED` where they apply (what `srl data
    /// verify` and `cargo xtask data` print).
    #[must_use]
    pub fn summary(&self) -> String {
        let total = self.files.len();
        if self.missing() == total {
            return "missing".to_owned();
        }
        let mut s = format!("{}/{total} ok", self.ok());
        if self.missing() > 0 {
            s.push_str(&format!(", {} absent", self.missing()));
        }
        let failed = self.failed().len();
        if failed > 0 {
            s.push_str(&format!(", {failed} FAILED"));
        }
        s
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_checks() {
        let t = tempfile::tempdir().expect("tempdir");
        assert!(check_data_dir(t.path()).is_ok());
        let missing = t.path().join("nope");
        let e = check_data_dir(&missing).expect_err("missing").to_string();
        assert!(e.contains("does not exist") && e.contains("nope"), "{e}");
        let file = t.path().join("f");
        std::fs::write(&file, "x").expect("write");
        let e = check_data_dir(&file).expect_err("file").to_string();
        assert!(e.contains("is not a directory"), "{e}");
    }

    #[test]
    fn mismatch_in_words() {
        let sum = FileSum {
            path: "a",
            sha256: "3f2a",
            plain_sha256: None,
            size: 1,
            plain_size: None,
        };
        let s = FileStatus::Mismatch {
            found: "9b1c".into(),
        };
        assert_eq!(s.describe(&sum), "sha256 expected 3f2a found 9b1c");
        assert_eq!(FileStatus::Missing.describe(&sum), "absent");
    }

    #[test]
    fn summary_in_words() {
        static A: FileSum = FileSum {
            path: "a",
            sha256: "00",
            plain_sha256: None,
            size: 1,
            plain_size: None,
        };
        let report = |st: Vec<FileStatus>| VerifyReport {
            folder: PathBuf::from("x"),
            files: st.into_iter().map(|s| (&A, s)).collect(),
        };
        assert_eq!(
            report(vec![FileStatus::Missing, FileStatus::Missing]).summary(),
            "missing"
        );
        assert_eq!(
            report(vec![FileStatus::Ok, FileStatus::Ok]).summary(),
            "2/2 ok"
        );
        assert_eq!(
            report(vec![
                FileStatus::Ok,
                FileStatus::Missing,
                FileStatus::Mismatch { found: "1".into() }
            ])
            .summary(),
            "1/3 ok, 1 absent, 1 FAILED"
        );
    }
}
