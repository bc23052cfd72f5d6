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
    #[error("{path}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of an input file could not be parsed.
    #[error("{path}:{line}: {kind}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number (0 when the problem concerns the file as a whole, e.g. an
        /// empty file).
        line: usize,
        /// What is wrong with it.
        kind: ParseErrorKind,
    },
    /// Parameters that are each valid but do not fit together (e.g. a cost matrix for
    /// `k = 3` given to a graph with 2 labels).
    #[error("{what}: {reason}")]
    Incompatible {
        /// What does not fit.
        what: &'static str,
        /// Why.
        reason: String,
    },
}

/// What is wrong with one line of an input file (see [`GraphError::Parse`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The line has fewer fields than the format needs (e.g. a `.content` line with only an
    /// id, a `.cites` line with one id).
    #[error("truncated line: expected {expected} fields, found {found}")]
    Truncated {
        /// Minimum number of fields.
        expected: usize,
        /// Fields found.
        found: usize,
    },
    /// The line has a different number of fields than the format or the first line fixed.
    #[error("wrong field count: expected {expected} fields, found {found}")]
    FieldCount {
        /// Expected number of fields.
        expected: usize,
        /// Fields found.
        found: usize,
    },
    /// A row has a different number of features than the first row.
    #[error("wrong feature count: expected {expected}, found {found}")]
    FeatureCount {
        /// Features of the first row (or of the header).
        expected: usize,
        /// Features of this row.
        found: usize,
    },
    /// A label not in the label set the caller fixed.
    #[error("unknown label {label:?}")]
    UnknownLabel {
        /// The label text.
        label: String,
    },
    /// The line is not valid UTF-8.
    #[error("line is not valid UTF-8")]
    NonUtf8,
    /// A line longer than the readers accept (no end of line within
    /// [`crate::load::MAX_LINE_BYTES`] bytes): not a text file of this format (say
    /// `/dev/zero`).
    #[error("line longer than {limit} bytes: not a text file of this format")]
    LineTooLong {
        /// The limit, bytes.
        limit: usize,
    },
    /// A control byte (a NUL or another byte below 0x20 other than tab and carriage
    /// return): binary data, not a text file.
    #[error("control byte 0x{byte:02x}: not a text file")]
    ControlByte {
        /// The byte.
        byte: u8,
    },
    /// A field that should be a number is not one (or is not finite).
    #[error("bad number {text:?} in field {field}")]
    BadNumber {
        /// The field text.
        text: String,
        /// 1-based field index.
        field: usize,
    },
    /// A node id defined twice.
    #[error("duplicate node id {id:?}")]
    DuplicateNode {
        /// The id.
        id: String,
    },
    /// Every link of a link file names an id the node file lacks: the two files do not
    /// belong together (reading on would give a graph without edges).
    #[error(
        "none of the {links} links names two known ids (one unknown id: {first:?}): does this file belong to the node file?"
    )]
    NoKnownLinks {
        /// Links read (self-loops excluded).
        links: usize,
        /// An unknown id (the smallest).
        first: String,
    },
    /// An edge names a node id the node file does not define (formats that forbid it).
    #[error("unknown node id {id:?}")]
    UnknownNode {
        /// The id.
        id: String,
    },
    /// A header line is missing or differs from what the format requires.
    #[error("bad header: {reason}")]
    BadHeader {
        /// What was expected.
        reason: String,
    },
    /// The file holds no data rows.
    #[error("no data rows")]
    Empty,
    /// The label field of a row is empty (a LINQS `.content` line ending in a tab).
    #[error("empty label (the last field of the line is empty)")]
    EmptyLabel,
    /// A field between two separators is empty (two tabs in a row in a LINQS line).
    #[error("empty field {field}")]
    EmptyField {
        /// 1-based field index.
        field: usize,
    },
}
