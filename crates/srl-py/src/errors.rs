//! Rust errors to Python exceptions.
//!
//! | Rust error | Python exception |
//! |---|---|
//! | a file that cannot be read or written (`Io`) | `OSError(errno, message, filename)`; Python turns it into the matching subclass (`FileNotFoundError`, `PermissionError`, ...) |
//! | a malformed line of a file (`Parse { file, line, .. }`) | [`ParseError`] (a `ValueError`) with `filename` and `lineno` set; the message starts with `file:line:` |
//! | any other bad input (parameters, shapes, labels, unknown names) | `ValueError` |
//! | a numerical limit of an algorithm (exact inference too large, a Gibbs chain without a feasible sample) | `ValueError` |

use std::path::Path;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    srl,
    ParseError,
    PyValueError,
    "A malformed line in an input file (BoostSRL atoms or background, UAI, BIF, LINQS, model \
     file). A ValueError with `filename` (str) and `lineno` (int, 1-based) attributes; the \
     message starts with `filename:lineno:`."
);

/// `OSError(errno, "cannot read/write FILE: reason", FILE)`: Python maps the errno to the
/// subclass (`FileNotFoundError` for a missing file).
pub fn os_error(path: &Path, what: &str, e: &std::io::Error) -> PyErr {
    let name = path.display().to_string();
    let msg = format!("{what} {name}: {e}");
    match e.raw_os_error() {
        Some(errno) => PyOSError::new_err((errno, msg, name)),
        None => match e.kind() {
            std::io::ErrorKind::NotFound => PyOSError::new_err((2, msg, name)),
            _ => PyOSError::new_err(msg),
        },
    }
}

/// [`ParseError`] for `file:line: message` with its `filename` and `lineno` attributes.
pub fn parse_error(file: &Path, line: usize, message: &str) -> PyErr {
    let name = file.display().to_string();
    let err = ParseError::new_err(format!("{name}:{line}: {message}"));
    Python::attach(|py| {
        let v = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail in practice; if it
        // did, the message still carries the file and line.
        let _ = v.setattr("filename", name);
        let _ = v.setattr("lineno", line);
    });
    err
}

/// `ValueError(message)`.
pub fn value_error(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(message.to_string())
}

/// Maps an srl-boost error.
pub fn boost(e: srl_boost::BoostError) -> PyErr {
    use srl_boost::BoostError as E;
    match &e {
        E::Io { path, source } => os_error(path, "cannot read", source),
        E::Parse {
            file,
            line,
            message,
        } => parse_error(file, *line, message),
        _ => value_error(e),
    }
}

/// Maps an srl-infer error.
pub fn infer(e: srl_infer::InferError) -> PyErr {
    use srl_infer::InferError as E;
    match &e {
        E::Io { file, source } => os_error(file, "cannot read", source),
        E::Parse {
            file,
            line,
            message,
        } => parse_error(file, *line, message),
        _ => value_error(e),
    }
}

/// Maps an srl-bayes error.
pub fn bayes(e: srl_bayes::BayesError) -> PyErr {
    use srl_bayes::BayesError as E;
    match &e {
        E::Io { path, source } => os_error(path, "cannot read", source),
        E::Parse {
            file,
            line,
            message,
        } => parse_error(Path::new(file), *line, message),
        _ => value_error(e),
    }
}

/// Maps an srl-graph error.
pub fn graph(e: srl_graph::GraphError) -> PyErr {
    use srl_graph::GraphError as E;
    match &e {
        E::Io { path, source } => os_error(path, "cannot read", source),
        E::Parse { path, line, kind } => parse_error(path, *line, &kind.to_string()),
        _ => value_error(e),
    }
}
