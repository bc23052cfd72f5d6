//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong in srl-boost: reading BoostSRL files, building a
/// learning problem, fitting or applying a model.
#[derive(Debug, thiserror::Error)]
pub enum BoostError {
    /// A file could not be read.
    #[error("cannot read {path}")]
    Io {
        /// The file that was opened.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of a BoostSRL (or UCI) file could not be parsed.
    #[error("{file}:{line}: {message}")]
    Parse {
        /// The file being read.
        file: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// The same predicate was used with two different arities.
    #[error("predicate {pred} used with arity {found}, earlier with arity {expected}")]
    Arity {
        /// Predicate name.
        pred: String,
        /// The arity seen first.
        expected: usize,
        /// The conflicting arity.
        found: usize,
    },
    /// The background declares no modes: learning has no literal to split on.
    #[error(
        "no modes: the background declares no `mode:` line, so no tree can split (BoostSRL stops with \"No target modes were provided\"); add modes to the background file"
    )]
    NoModes,
    /// The learning problem has no examples, or no positive or no negative example.
    #[error("no usable examples: {reason}")]
    NoExamples {
        /// Which examples are missing.
        reason: String,
    },
    /// A hyperparameter is outside its valid range.
    #[error("invalid parameter {name}: {message}")]
    InvalidParam {
        /// The parameter's field name.
        name: &'static str,
        /// Why the value is rejected.
        message: String,
    },
    /// Examples of one predicate were given to a model of another.
    #[error("model predicts {model}/{model_arity}, examples are {examples}/{examples_arity}")]
    TargetMismatch {
        /// The model's target predicate.
        model: String,
        /// Its arity.
        model_arity: usize,
        /// The examples' predicate.
        examples: String,
        /// Their arity.
        examples_arity: usize,
    },
}
