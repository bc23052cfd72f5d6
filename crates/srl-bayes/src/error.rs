//! The error type of srl-bayes.

use std::path::PathBuf;

/// Everything that can go wrong in srl-bayes: malformed model files, invalid networks,
/// bad queries and bad training tables.
#[derive(Debug, thiserror::Error)]
pub enum BayesError {
    /// A file could not be read.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A model or data file is malformed.
    #[error("{file}:{line}: {message}")]
    Parse {
        /// The file name (or `<string>` for in-memory input).
        file: String,
        /// 1-based line number of the offending token.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// A network is structurally invalid (unknown parent, cycle, wrong table size,
    /// negative or non-finite probability, ...).
    #[error("invalid network: {message}")]
    InvalidNetwork {
        /// What was wrong.
        message: String,
    },
    /// A variable name was not found.
    #[error("unknown variable `{name}`")]
    UnknownVariable {
        /// The name asked for.
        name: String,
    },
    /// A state name was not found among a variable's states.
    #[error("variable `{variable}` has no state `{state}` (states: {states})")]
    UnknownState {
        /// The variable.
        variable: String,
        /// The state name asked for.
        state: String,
        /// The variable's states, comma-separated.
        states: String,
    },
    /// A query or classifier is ill-formed (class not binary, class among the features,
    /// duplicate feature, evidence out of range, threshold outside [0, 1], ...).
    #[error("invalid query: {message}")]
    InvalidQuery {
        /// What was wrong.
        message: String,
    },
    /// An exact computation would need a table larger than the allowed number of entries.
    #[error("table too large: {entries} entries exceed the limit of {limit}")]
    TooLarge {
        /// The entries the computation would need (saturating).
        entries: u128,
        /// The limit.
        limit: u128,
    },
    /// Training data is unusable (no rows, label out of range, wrong row length, ...).
    #[error("invalid data: {message}")]
    InvalidData {
        /// What was wrong.
        message: String,
    },
    /// An error found after parsing a file (an invalid network, an inconsistent TrimBN
    /// problem), with the file's name.
    #[error("{file}: {inner}")]
    InFile {
        /// The file name.
        file: String,
        /// What was wrong (names the variable).
        inner: Box<BayesError>,
    },
    /// The evidence has probability zero, so a conditional is undefined.
    #[error("evidence has probability zero")]
    ZeroProbabilityEvidence,
}

impl BayesError {
    pub(crate) fn parse(file: &str, line: usize, message: impl Into<String>) -> Self {
        Self::Parse {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
    /// This error as found in `file` ([`BayesError::InFile`]); errors that already name
    /// a file ([`BayesError::Parse`], [`BayesError::Io`], [`BayesError::InFile`]) are
    /// returned unchanged.
    #[must_use]
    pub fn in_file(self, file: &str) -> Self {
        match self {
            Self::Parse { .. } | Self::Io { .. } | Self::InFile { .. } => self,
            other => Self::InFile {
                file: file.to_string(),
                inner: Box::new(other),
            },
        }
    }
    pub(crate) fn network(message: impl Into<String>) -> Self {
        Self::InvalidNetwork {
            message: message.into(),
        }
    }
    pub(crate) fn query(message: impl Into<String>) -> Self {
        Self::InvalidQuery {
            message: message.into(),
        }
    }
    pub(crate) fn data(message: impl Into<String>) -> Self {
        Self::InvalidData {
            message: message.into(),
        }
    }
}
