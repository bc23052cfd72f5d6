//! The error type of srl-graph.

use std::path::PathBuf;

/// Everything that can go wrong building or loading a graph.
///
/// Parse errors carry the file and the 1-based line number.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// Two lengths that must agree do not.
    #[error("{what}: expected {expected} entries, found {found}")]
    DimensionMismatch {
        /// Which array.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        found: usize,
    },
    /// An edge names a node index `>= num_nodes`.
    #[error("node {node} out of range for a graph with {num_nodes} nodes")]
    NodeOutOfRange {
        /// Offending node index.
        node: usize,
        /// Number of nodes.
        num_nodes: usize,
    },
    /// A label index `>= k`.
    #[error("node {node} has label {label}, but there are only {num_labels} labels")]
    LabelOutOfRange {
        /// Node index.
        node: usize,
        /// Offending label index.
        label: usize,
        /// Number of labels.
        num_labels: usize,
    },
    /// A label name occurs twice in a label set.
    #[error("label {name:?} occurs twice in the label set")]
    DuplicateLabel {
        /// The name.
        name: String,
    },
    /// A NaN or infinite value.
    #[error("{what} at index {index} is not finite ({value})")]
    NonFinite {
        /// What kind of value.
        what: &'static str,
        /// Flat index of the value.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A malformed attribute table row.
    #[error("attributes of node {node}: {reason}")]
    InvalidAttributes {
        /// Node index.
        node: usize,
        /// What is wrong.
        reason: String,
    },
    /// More nodes or edges than `u32` ids can address.
    #[error("too many {what}: {count} (at most 4294967295)")]
    TooLarge {
        /// "nodes" or "edges".
        what: &'static str,
        /// How many were given.
        count: usize,
    },
    /// A parameter outside its valid range.
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// Its value, formatted.
        value: String,
        /// The valid range or rule.
        reason: String,
    },
    /// A file could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of an input file could not be parsed.
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}
