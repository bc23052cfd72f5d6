//! The error type of srl-eval.

use thiserror::Error;

/// Everything that can go wrong when computing a metric or running a protocol.
///
/// Metrics validate their input once and never panic on bad data: empty inputs, slices of
/// different lengths, NaN scores, labels outside the label set and metrics that are undefined
/// for the input (an AUC with a single class present, a precision with no predicted positive)
/// all come back as one of these variants.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum EvalError {
    /// An input that must hold at least one element is empty.
    #[error("empty input: {what}")]
    Empty {
        /// Which input (e.g. `scores`, `values`).
        what: &'static str,
    },
    /// Two inputs that must be parallel have different lengths.
    #[error("length mismatch: {what} has {found} elements, expected {expected}")]
    LengthMismatch {
        /// Which input has the wrong length.
        what: &'static str,
        /// The length it must have.
        expected: usize,
        /// The length it has.
        found: usize,
    },
    /// A score (or value) is NaN, so it cannot be ranked or averaged.
    #[error("{what}[{index}] is NaN")]
    NanValue {
        /// Which input.
        what: &'static str,
        /// 0-based position of the first NaN.
        index: usize,
    },
    /// The truth holds a single class, so the ranking metric is undefined.
    #[error(
        "{metric} is undefined with a single class present ({positives} positives, {negatives} negatives)"
    )]
    SingleClass {
        /// The metric asked for (e.g. `auc_roc`).
        metric: &'static str,
        /// Number of positive instances.
        positives: u64,
        /// Number of negative instances.
        negatives: u64,
    },
    /// A ratio metric whose denominator is zero for this input.
    #[error("{metric} is undefined: {reason}")]
    Undefined {
        /// The metric asked for (e.g. `precision`).
        metric: &'static str,
        /// Why its denominator is zero (e.g. `no predicted positives`).
        reason: &'static str,
    },
    /// A parameter is outside its valid range.
    #[error("invalid parameter {name} = {value}: expected {expected}")]
    InvalidParameter {
        /// Parameter name (e.g. `gamma`).
        name: &'static str,
        /// The value given.
        value: f64,
        /// The valid range, in words.
        expected: &'static str,
    },
    /// A class label is not below the number of labels.
    #[error("{what}[{index}] = {label} is not a label of a {num_labels}-label set")]
    LabelOutOfRange {
        /// Which input (e.g. `predicted`, `truth`).
        what: &'static str,
        /// 0-based position in that input.
        index: usize,
        /// The offending label.
        label: u32,
        /// Number of labels `k`.
        num_labels: usize,
    },
    /// An index (node, instance) is not below the number of items.
    #[error("{what}: index {index} out of range for {len} items")]
    IndexOutOfRange {
        /// Where the index was found (e.g. `edge 3`, `fold 2`).
        what: String,
        /// The offending index.
        index: usize,
        /// Number of items.
        len: usize,
    },
    /// The same index appears twice where each may appear once.
    #[error("{what}: index {index} appears more than once")]
    DuplicateIndex {
        /// Where (e.g. `fold 2`).
        what: String,
        /// The repeated index.
        index: usize,
    },
}
