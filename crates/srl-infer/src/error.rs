//! The error type of srl-infer.

use std::path::PathBuf;

/// Everything that can go wrong building a [`crate::PairwiseMrf`], reading a UAI file or
/// running an inference routine that has preconditions.
///
/// Non-convergence is **not** an error: it is reported in [`crate::Convergence`].
/// Parse errors carry the file and the 1-based line number.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InferError {
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
    /// A NaN or infinite log-potential (or other value that must be finite).
    #[error("{what} at index {index} is not finite ({value})")]
    NonFinite {
        /// What kind of value.
        what: &'static str,
        /// Flat index of the value.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A variable with zero states.
    #[error("variable {node} has no states")]
    ZeroStates {
        /// Variable index.
        node: usize,
    },
    /// An edge endpoint `>= num_nodes`.
    #[error("edge {edge} names node {node}, but there are only {num_nodes} variables")]
    NodeOutOfRange {
        /// Edge index.
        edge: usize,
        /// Offending endpoint.
        node: usize,
        /// Number of variables.
        num_nodes: usize,
    },
    /// A [`crate::MrfBuilder`] call names a variable that was not added (yet).
    #[error("{call}: variable {node} does not exist, the builder has {num_nodes} variables")]
    UnknownVariable {
        /// The builder method, e.g. `"MrfBuilder::observe"`.
        call: &'static str,
        /// Offending variable index.
        node: usize,
        /// Number of variables added before the call.
        num_nodes: usize,
    },
    /// An edge `(v, v)`.
    #[error("edge {edge} is a self-loop on variable {node}")]
    SelfLoop {
        /// Edge index.
        edge: usize,
        /// The variable.
        node: usize,
    },
    /// An edge refers to a pairwise table that does not exist.
    #[error("edge {edge} uses table {table}, but the pool has {num_tables} tables")]
    TableOutOfRange {
        /// Edge index.
        edge: usize,
        /// Offending table index.
        table: usize,
        /// Pool size.
        num_tables: usize,
    },
    /// A pairwise table's shape does not match its edge's cardinalities.
    #[error("edge {edge} needs a {rows}x{cols} table, table {table} is {found_rows}x{found_cols}")]
    TableShape {
        /// Edge index.
        edge: usize,
        /// Table index.
        table: usize,
        /// `k_u` of the edge's first endpoint.
        rows: usize,
        /// `k_v` of the edge's second endpoint.
        cols: usize,
        /// Rows of the table.
        found_rows: usize,
        /// Columns of the table.
        found_cols: usize,
    },
    /// A pairwise table whose value vector does not have `rows * cols` entries.
    #[error("table {table} is {rows}x{cols} but holds {found} values")]
    TableSize {
        /// Table index.
        table: usize,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// Number of values.
        found: usize,
    },
    /// Evidence names a state `>= k`.
    #[error("evidence sets variable {node} to state {state}, but it has {num_states} states")]
    EvidenceOutOfRange {
        /// Variable.
        node: usize,
        /// Offending state.
        state: usize,
        /// `k` of the variable.
        num_states: usize,
    },
    /// A finite log-potential beyond [`crate::mrf::MAX_ABS_LOG_POTENTIAL`] in magnitude:
    /// at that size `f64` rounding of sums of log-potentials exceeds `10^-4` nats, so the
    /// answer could not be trusted. A hard zero is written `-∞` (or a 0 in a UAI table).
    #[error(
        "{what} at index {index} is {value}, beyond ±{limit:e}; \
         use -inf (a zero potential) for a hard constraint"
    )]
    ExtremeValue {
        /// What kind of value.
        what: &'static str,
        /// Flat index of the value.
        index: usize,
        /// The value.
        value: f64,
        /// The largest accepted magnitude.
        limit: f64,
    },
    /// The evidence and the zero potentials (hard constraints) leave a variable, or the
    /// whole model, with probability zero.
    #[error("probability zero{}: {cause}", zero_subject(*.node))]
    ZeroProbability {
        /// The variable with no state of positive probability, when one is known.
        node: Option<usize>,
        /// Why.
        cause: &'static str,
    },
    /// A Gibbs chain started in a state of probability zero (zero potentials) never reached
    /// a state of positive probability, so it collected no sample.
    #[error(
        "the Gibbs chain stayed in states of probability zero for all {sweeps} sweeps \
         (hard constraints); start it elsewhere or use loopy BP"
    )]
    NoFeasibleSample {
        /// Sweeps run.
        sweeps: usize,
    },
    /// More variables or edges than the `u32` index space holds, or a table, message
    /// array or pool larger than the documented limits (checked before allocating).
    #[error("too many {what}: {count}")]
    TooLarge {
        /// What overflowed.
        what: &'static str,
        /// How many were given.
        count: usize,
    },
    /// An algorithm parameter outside its valid range.
    #[error("parameter {name} = {value} is invalid: {reason}")]
    InvalidParameter {
        /// Field name.
        name: &'static str,
        /// The value, formatted.
        value: String,
        /// Valid range.
        reason: &'static str,
    },
    /// [`crate::Exact`] was asked for a model that is neither a forest nor small enough to
    /// enumerate.
    #[error(
        "exact inference needs a forest or at most 2^{limit_log2} joint states; \
         the free variables have 2^{log2_states:.1}"
    )]
    ExactTooLarge {
        /// `log2` of the number of joint states of the free variables.
        log2_states: f64,
        /// The enumeration limit, as `log2` of the number of joint states.
        limit_log2: u32,
    },
    /// A UAI (or evidence) file is malformed.
    #[error("{file}:{line}: {message}")]
    Parse {
        /// File (or source name) being parsed.
        file: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// An error found after a file was parsed (a model that [`crate::PairwiseMrf::new`]
    /// refuses, evidence the model contradicts), with the file it came from.
    #[error("{}: {source}", file.display())]
    InFile {
        /// The file.
        file: PathBuf,
        /// The error.
        source: Box<InferError>,
    },
    /// Reading or writing a file failed.
    #[error("{file}")]
    Io {
        /// The file.
        file: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Collective classification needs at least one labelled node to train on.
    #[error("no labelled node to train the local classifier on")]
    NoLabelledNodes,
    /// The graph has no labels (`num_labels() == 0`) or a label index is out of range.
    #[error("invalid label set: {reason}")]
    InvalidLabels {
        /// What is wrong.
        reason: String,
    },
    /// The local classifier of collective classification failed.
    #[error("local classifier failed")]
    LocalClassifier {
        /// The classifier's own error.
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
}

fn zero_subject(node: Option<usize>) -> String {
    match node {
        Some(v) => format!(" for every state of variable {v}"),
        None => " for every assignment of the model".to_string(),
    }
}
