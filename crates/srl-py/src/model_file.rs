//! The srl model file (the envelope of `srl boost learn`): srl-boost's
//! [`srl_boost::model_file`] types and checks, the same ones srl-cli uses, with errors
//! mapped to Python exceptions:
//!
//! ```json
//! { "format": "srl-model", "version": 1, "kind": "soft-rfgb",
//!   "provenance": { "data": "...", "seed": 1, "srl_version": "0.1.0", "command": "..." },
//!   "parameters": { ... SoftRfgbParams ..., "estimator": { "class": "BoostedRDN", "params": { ... } } },
//!   "model": { ... srl_boost::SoftRfgb, serialised with serde ... } }
//! ```
//!
//! A file written by Python is read by `srl boost predict` / `srl boost show` and the
//! other way round: `parameters` is free-form for the CLI, and the bindings add the
//! estimator's constructor arguments under `parameters.estimator` (absent in a CLI file,
//! where they are rebuilt from the model).

use std::path::Path;

use pyo3::prelude::*;

use crate::errors::{os_error, parse_error, value_error};

pub use srl_boost::model_file::{FORMAT, KIND_MLN_BOOST, KIND_SOFT_RFGB, Provenance, VERSION};

/// The envelope with its model undecoded (srl-boost's, as the CLI's): the estimator
/// decodes `model` according to `kind`.
pub type ModelFile = srl_boost::model_file::ModelFile<serde_json::Value>;

/// The pretty JSON text of `file` (one trailing newline, as the CLI writes it).
///
/// # Errors
/// `ValueError` if serialisation fails (a non-finite parameter).
pub fn to_string(file: &ModelFile) -> PyResult<String> {
    file.to_json_string().map_err(value_error)
}

/// Writes `text` to `path` atomically through srl-io (the CLI's rules: temporary name in
/// the same folder, then rename; an existing file is replaced only when `overwrite`;
/// folders and devices never).
///
/// # Errors
/// `FileExistsError` for an existing file without `overwrite`; `OSError` naming the file
/// otherwise.
pub fn write_atomic(path: &Path, text: &str, overwrite: bool) -> PyResult<()> {
    srl_io::write_bytes_atomic(path, overwrite, text.as_bytes()).map_err(|e| match e {
        srl_io::OutputError::Exists { .. } => pyo3::exceptions::PyFileExistsError::new_err((
            17,
            format!(
                "{}: exists; pass overwrite=True to replace it",
                path.display()
            ),
            path.display().to_string(),
        )),
        srl_io::OutputError::Io { source, .. } => os_error(path, "cannot write", &source),
        other => pyo3::exceptions::PyOSError::new_err(other.to_string()),
    })
}

/// Parses and checks a model file's text: `format` must be [`FORMAT`], `version`
/// [`VERSION`], `kind` the estimator's `kind` (the checks and messages of the CLI).
///
/// # Errors
/// `srl.ParseError` (a `ValueError`) with the file and line for text that is not JSON or
/// a malformed model; `ValueError` naming the file for another format, version or kind.
pub fn parse(text: &str, source: &Path, want: &str) -> PyResult<ModelFile> {
    ModelFile::parse(text, want).map_err(|e| match e.line() {
        Some(line) => parse_error(source, line, &e.to_string()),
        None => value_error(format!("{}: {e}", source.display())),
    })
}

/// Reads and checks a model file (see [`parse`]).
///
/// # Errors
/// `OSError` for an unreadable file; as [`parse`].
pub fn load(path: &Path, want: &str) -> PyResult<ModelFile> {
    let text =
        std::fs::read_to_string(path).map_err(|e| os_error(path, "cannot read model file", &e))?;
    parse(&text, path, want)
}
