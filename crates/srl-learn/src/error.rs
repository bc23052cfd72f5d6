//! The error type of srl-learn.

/// Everything that can go wrong in srl-learn.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// Training or query data is unusable (mismatched lengths, non-finite values, label
    /// out of range, empty training set, ...).
    #[error("invalid data: {message}")]
    InvalidData {
        /// What was wrong.
        message: String,
    },
    /// A hyperparameter is out of its valid range.
    #[error("invalid parameter `{name}`: {message}")]
    InvalidParameter {
        /// The parameter's field name.
        name: &'static str,
        /// What was wrong.
        message: String,
    },
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
    /// A label `>= k`.
    #[error("sample {index} has label {label}, but there are only {num_labels} labels")]
    LabelOutOfRange {
        /// Sample (node) index.
        index: usize,
        /// Offending label.
        label: usize,
        /// Number of labels.
        num_labels: usize,
    },
    /// A NaN, infinite or negative value where a finite non-negative one is required
    /// (sample weights, marginals).
    #[error("{what} at index {index} is invalid ({value})")]
    InvalidValue {
        /// What kind of value.
        what: &'static str,
        /// Flat index of the value.
        index: usize,
        /// The value.
        value: f64,
    },
    /// Training data the learner cannot use (no labelled nodes, zero total weight, ...).
    #[error("no training data: {reason}")]
    NoTrainingData {
        /// Why.
        reason: String,
    },
    /// The optimiser (argmin) failed or produced a non-finite objective.
    #[error("optimisation failed: {reason}")]
    Optimization {
        /// The optimiser's message.
        reason: String,
    },
    /// An error of the data layer (e.g. a cost model that does not fit the graph).
    #[error(transparent)]
    Graph(#[from] srl_graph::GraphError),
    /// An error of the inference layer.
    #[error(transparent)]
    Infer(#[from] srl_infer::InferError),
}
