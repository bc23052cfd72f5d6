//! The srl model file (the envelope of `srl boost learn`, crates/srl-cli/src/model.rs),
//! written and read here with the same layout and the same checks, because its types live
//! in the `srl` binary crate and cannot be imported:
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
use serde::{Deserialize, Serialize};

use crate::errors::{os_error, parse_error, value_error};

/// The `format` field of every srl model file (as in srl-cli).
pub const FORMAT: &str = "srl-model";
/// The model-file version this build writes and reads (as in srl-cli).
pub const VERSION: u32 = 1;
/// The `kind` of a Soft-RFGB / RFGB model (as in srl-cli).
pub const KIND_SOFT_RFGB: &str = "soft-rfgb";
/// The `kind` of an MLN-Boost model (as in srl-cli).
pub const KIND_MLN_BOOST: &str = "mln-boost";

/// Where a model came from (the CLI's `Provenance`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The training data: a folder, or `<python lists>`.
    pub data: String,
    /// The seed of the negative sampling.
    pub seed: Option<u64>,
    /// The srl version that wrote the file.
    pub srl_version: String,
    /// How the model was made (`srl.BoostedRDN(...).fit` from Python).
    pub command: String,
}

/// The envelope (the CLI's `ModelFile<SoftRfgb>`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModelFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`] when written here.
    pub version: u32,
    /// [`KIND_SOFT_RFGB`] or [`KIND_MLN_BOOST`].
    pub kind: String,
    /// Where the model came from.
    pub provenance: Provenance,
    /// The learning parameters (free-form JSON).
    pub parameters: serde_json::Value,
    /// The model (`srl_boost::SoftRfgb` or `srl_boost::MlnBoost` serialised with serde),
    /// decoded by the estimator according to `kind`.
    pub model: serde_json::Value,
}

/// The pretty JSON text of `file` (one trailing newline, as the CLI writes it).
///
/// # Errors
/// `ValueError` if serialisation fails (a non-finite parameter).
pub fn to_string(file: &ModelFile) -> PyResult<String> {
    let mut s = serde_json::to_string_pretty(file).map_err(value_error)?;
    s.push('\n');
    Ok(s)
}

/// Writes `text` to `path` atomically (temporary name in the same folder, then rename).
///
/// # Errors
/// `OSError` naming the file.
pub fn write_atomic(path: &Path, text: &str) -> PyResult<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".to_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| os_error(path, "cannot write", &e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        os_error(path, "cannot write", &e)
    })
}

/// Parses and checks a model file's text: `format` must be [`FORMAT`], `version`
/// [`VERSION`], `kind` the estimator's `kind` (the checks and messages of the CLI).
///
/// # Errors
/// `srl.ParseError` (a `ValueError`) with the file and line for text that is not JSON or
/// a malformed model; `ValueError` naming the file for another format, version or kind.
pub fn parse(text: &str, source: &Path, want: &str) -> PyResult<ModelFile> {
    let head: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| parse_error(source, e.line(), &format!("not a JSON model file: {e}")))?;
    let name = source.display();
    if head.get("format").and_then(serde_json::Value::as_str) != Some(FORMAT) {
        return Err(value_error(format!(
            "{name}: not an srl model file (no \"format\": \"{FORMAT}\")"
        )));
    }
    match head.get("version").and_then(serde_json::Value::as_u64) {
        Some(v) if v == u64::from(VERSION) => {}
        Some(v) => {
            return Err(value_error(format!(
                "{name}: model file version {v}, but this srl ({}) reads version {VERSION} only; \
                 re-learn the model with this srl or use the srl that wrote it",
                env!("CARGO_PKG_VERSION")
            )));
        }
        None => {
            return Err(value_error(format!(
                "{name}: model file without a numeric \"version\""
            )));
        }
    }
    let kind = head
        .get("kind")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("?");
    if kind != want {
        return Err(value_error(format!(
            "{name}: holds a {kind} model, expected a {want} model"
        )));
    }
    serde_json::from_str(text)
        .map_err(|e| parse_error(source, e.line(), &format!("malformed model: {e}")))
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
