//! # srl-data: the data sets the experiments use — registry, download, verification
//!
//! The srl book's chapter on this crate: [srl-cli](../../srl-cli.html); the papers' reproductions:
//! [Reproductions](../../papers/index.html) (links work in the book built by `cargo xtask book`).
//!
//! A small library under `srl` (the CLI) and `cargo xtask data`; of the srl crates it
//! depends only on srl-io (the interrupt-cleanup registry). Each data set lives in its own folder of a data directory, with the files and
//! sha256 sums its `SOURCE.md` records:
//!
//! * [`registry`]: every data set ([`DATASETS`], [`find`]) with the sha256 of each file
//!   (and, for `.gz` files, of the decompressed bytes) and its public download
//!   address(es) where one is known.
//! * [`verify()`]: checks a folder's files against the registry.
//! * [`fetch()`]: downloads over HTTPS (ureq with rustls), extracts zip / tar.gz /
//!   gzip archives refusing absolute paths, `..` components and links, verifies every file
//!   in a staging folder, then renames the files into place. Nothing is left behind on
//!   failure or on SIGINT/SIGTERM (with srl-io's handler installed), staging folders of
//!   interrupted runs are removed by the next run, every archive entry and download is
//!   read through a cap taken from the registry's recorded sizes, and a present file
//!   that fails verification is never overwritten without `force`.
//! * [`check_data_dir`]: a data directory that is missing or not a directory is an error
//!   ([`DataError::DataDir`]), never an empty report.
//!
//! ```
//! let cora = srl_data::find("cora").expect("cora is registered");
//! assert!(cora.files.iter().any(|f| f.path == "cora.cites"));
//! let dir = std::env::temp_dir().join("srl-data-doc-empty");
//! let report = srl_data::verify(&dir, cora);
//! assert_eq!(report.missing(), cora.files.len());
//! ```

pub mod fetch;
pub mod registry;
mod registry_data;
pub mod verify;

pub use fetch::{
    FetchOptions, FetchReport, STALE_STAGING_AGE, fetch, remove_stale_staging, sha256_bytes,
};
pub use registry::{DATASETS, Dataset, FileSum, HEADER_SLACK, Source, SourceKind, Transform, find};
pub use verify::{FileStatus, VerifyReport, check_data_dir, sha256_file, verify};

use std::path::PathBuf;

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// No data set of that name.
    #[error("unknown data set {name:?}; known: {known}")]
    UnknownDataset {
        /// The name asked for.
        name: String,
        /// The registered names.
        known: String,
    },
    /// The registry has no download address for the data set.
    #[error(
        "data set {name}: no public download address is recorded; get it by hand as its SOURCE.md describes"
    )]
    NoSource {
        /// Data set.
        name: String,
    },
    /// A file or directory operation failed.
    #[error("{}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The download failed (connection, HTTP status, interrupted transfer, too large).
    #[error("downloading {url}: {message}")]
    Http {
        /// Address.
        url: String,
        /// What happened.
        message: String,
    },
    /// A malformed archive.
    #[error("archive {url}: {message}")]
    Archive {
        /// Address of the archive.
        url: String,
        /// What is wrong.
        message: String,
    },
    /// An archive entry that would write outside the data set's folder.
    #[error("archive {url}: refused entry {entry:?}: {reason}; nothing was written")]
    UnsafeEntry {
        /// Address of the archive.
        url: String,
        /// The entry's name.
        entry: String,
        /// Absolute path, `..` component, or link.
        reason: String,
    },
    /// The data directory is missing, not a directory, or unreadable.
    #[error("data directory {}: {reason}", path.display())]
    DataDir {
        /// The directory.
        path: PathBuf,
        /// What is wrong, in words.
        reason: String,
    },
    /// An archive entry (or a download) larger than the registry's size for its file.
    #[error(
        "{url}: {entry:?} holds more than {cap} bytes, the most the registry allows for {path}; nothing was installed"
    )]
    TooLarge {
        /// Address of the archive or download.
        url: String,
        /// The archive entry's name (the address for a plain download).
        entry: String,
        /// The registry path it would have become.
        path: String,
        /// The cap in bytes.
        cap: u64,
    },
    /// A downloaded file does not have its recorded sha256.
    #[error("{path}: sha256 expected {expected} found {found}; nothing was installed")]
    Checksum {
        /// Path inside the data set's folder.
        path: String,
        /// Recorded sum.
        expected: String,
        /// Sum of the download.
        found: String,
    },
    /// Present files fail verification and `force` was not given.
    #[error("{folder}: {files} present but fail verification; not overwritten (use --force to replace them)", folder = folder.display())]
    WouldOverwrite {
        /// The data set's folder.
        folder: PathBuf,
        /// The failing files, comma-separated.
        files: String,
    },
}

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> DataError {
    let path = path.into();
    move |source| DataError::Io { path, source }
}
