//! The registry of data sets: files with sha256 sums and where to download them.
//!
//! Generated from the data directory's `SOURCE.md` files by
//! `crates/srl-data/tools/gen_registry.py` (regenerate after a SOURCE.md changes).

use crate::DataError;

pub use crate::registry_data::DATASETS;

/// One file of a data set and its recorded sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileSum {
    /// Path inside the data set's folder (`/`-separated).
    pub path: &'static str,
    /// sha256 (lower-case hex) of the file as SOURCE.md records it.
    pub sha256: &'static str,
    /// For a `.gz` file: sha256 of the decompressed bytes. A file whose decompressed
    /// bytes match verifies too (another gzip implementation compresses differently).
    pub plain_sha256: Option<&'static str>,
    /// Size of the file in bytes, as recorded from the data directory when the registry
    /// was generated. [`fetch`](crate::fetch()) reads no more than this (plus a slack
    /// for the header-line transforms) from a download or an archive entry.
    pub size: u64,
    /// For a `.gz` file: size in bytes of the decompressed bytes (what an archive member
    /// stored with [`Transform::Gzip`] holds). `None` for other files.
    pub plain_size: Option<u64>,
}

/// Bytes a header-line transform ([`Transform::PrependLine`],
/// [`Transform::ReplaceFirstLine`]) may add to or remove from a file: the read cap of a
/// source with such a transform is the recorded size plus this.
pub const HEADER_SLACK: u64 = 64 * 1024;

impl FileSum {
    /// The most bytes a source may deliver for this file: the recorded size of the bytes
    /// the source holds (the decompressed size when `plain`, i.e. the source holds the
    /// uncompressed content of a `.gz` file), plus [`HEADER_SLACK`] for a header-line
    /// transform. A `.gz` file without a recorded decompressed size has no cap of its
    /// own (`u64::MAX`; the download limit still applies).
    pub fn read_cap(&self, plain: bool, transform: Transform) -> u64 {
        let size = if plain {
            self.plain_size
        } else {
            Some(self.size)
        };
        let slack = match transform {
            Transform::PrependLine(_) | Transform::ReplaceFirstLine(_) => HEADER_SLACK,
            Transform::None | Transform::Gzip => 0,
        };
        size.map_or(u64::MAX, |n| n.saturating_add(slack))
    }
}

/// How a download is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// One file, saved as `dest`.
    Raw,
    /// A zip archive; member `m` becomes `dest + m` (a single top folder common to every
    /// member is dropped when that is what matches the registry's paths).
    Zip,
    /// A gzip-compressed tar archive, laid out like [`SourceKind::Zip`].
    TarGz,
}

/// A change applied to downloaded bytes before verification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    /// None: the bytes as downloaded.
    None,
    /// Files the registry lists as `X.gz` are stored gzip-compressed from member `X`.
    Gzip,
    /// Prepend this header line (and end the file with a newline).
    PrependLine(&'static str),
    /// Replace the first line (a header added by the source) with this one (and end the
    /// file with a newline).
    ReplaceFirstLine(&'static str),
}

/// A public download address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// Layout.
    pub kind: SourceKind,
    /// HTTPS address (tests use `http://127.0.0.1`).
    pub url: &'static str,
    /// Destination file ([`SourceKind::Raw`]) or folder prefix (archives) inside the
    /// data set's folder.
    pub dest: &'static str,
    /// Applied to the bytes before verification.
    pub transform: Transform,
}

/// A registered data set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dataset {
    /// Folder name inside the data directory.
    pub name: &'static str,
    /// The experiments that use it.
    pub used_by: &'static str,
    /// Every file with its sums.
    pub files: &'static [FileSum],
    /// Download addresses (empty: get it by hand, see its SOURCE.md).
    pub sources: &'static [Source],
}

impl Dataset {
    /// The registry entry of `path`, if any.
    pub fn file(&self, path: &str) -> Option<&FileSum> {
        self.files.iter().find(|f| f.path == path)
    }
}

/// The data set called `name`.
///
/// # Errors
/// [`DataError::UnknownDataset`] listing the known names.
pub fn find(name: &str) -> Result<&'static Dataset, DataError> {
    DATASETS
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| DataError::UnknownDataset {
            name: name.to_owned(),
            known: DATASETS
                .iter()
                .map(|d| d.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_is_well_formed() {
        assert!(DATASETS.len() >= 19);
        for d in DATASETS {
            for f in d.files {
                assert_eq!(f.sha256.len(), 64, "{}/{}", d.name, f.path);
                assert!(!f.path.starts_with('/') && !f.path.split('/').any(|c| c == ".."));
                assert!(f.size > 0, "{}/{}: size recorded", d.name, f.path);
                assert_eq!(
                    f.plain_size.is_some(),
                    f.plain_sha256.is_some(),
                    "{}/{}: a .gz has both its decompressed sum and size",
                    d.name,
                    f.path
                );
            }
            for s in d.sources {
                assert!(s.url.starts_with("https://"), "{}", s.url);
            }
        }
        assert!(find("nope").is_err());
    }

    #[test]
    fn read_caps() {
        let f = FileSum {
            path: "a.gz",
            sha256: "",
            plain_sha256: Some(""),
            size: 10,
            plain_size: Some(100),
        };
        assert_eq!(f.read_cap(false, Transform::None), 10);
        assert_eq!(f.read_cap(true, Transform::Gzip), 100);
        assert_eq!(
            f.read_cap(false, Transform::PrependLine("h")),
            10 + HEADER_SLACK
        );
        let g = FileSum {
            plain_size: None,
            ..f
        };
        assert_eq!(g.read_cap(true, Transform::Gzip), u64::MAX);
    }
}
