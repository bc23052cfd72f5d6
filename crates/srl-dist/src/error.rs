//! Errors of srl-dist.

use std::path::PathBuf;

/// What can go wrong in a distributed run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DistError {
    /// The model has a log-potential outside srl-infer's ordinary range (a `-∞`, or a
    /// magnitude above [`crate::bp::MAX_ABS_LOG_POTENTIAL`]); srl-infer runs such models on
    /// a shifted, `-∞`-exact path that srl-dist does not reproduce.
    #[error(
        "{what} {index} has log-potential {value}, outside the ordinary range |x| <= 1e4 that srl-dist supports"
    )]
    ExtremeModel {
        /// Which kind of value.
        what: &'static str,
        /// Flat index of the unary entry, or the table index.
        index: usize,
        /// The value.
        value: f64,
    },
    /// timely could not start, or a worker failed (the message is timely's).
    #[error("timely: {0}")]
    Timely(String),
    /// Invalid model input.
    #[error(transparent)]
    Infer(#[from] srl_infer::InferError),
    /// Invalid graph input.
    #[error(transparent)]
    Graph(#[from] srl_graph::GraphError),
    /// A bad argument value.
    #[error("{0}")]
    Argument(String),
    /// An output cannot be written: it is an input, it exists and `--force` was not
    /// given, or its folder is missing or read-only (srl-io's rules).
    #[error(transparent)]
    Output(#[from] srl_io::OutputError),
    /// A shard file is malformed (see [`crate::shard`]).
    #[error("{file}: byte {offset}: {message}")]
    Shard {
        /// The file.
        file: PathBuf,
        /// Byte offset of the problem.
        offset: u64,
        /// What is wrong.
        message: String,
    },
    /// A model file being partitioned is malformed.
    #[error("{file}:{line}: {message}")]
    Parse {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The shards of a run do not belong together (another model or partition), found by
    /// the setup check of every run.
    #[error("inconsistent shards: {0}")]
    Inconsistent(String),
    /// Reading or writing a file failed.
    #[error("{file}")]
    Io {
        /// The file.
        file: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}
