//! The srl model file: a versioned JSON envelope around a serde-serialised model, written
//! and read by the `srl` command (srl-cli) and the Python bindings (srl-py) with these
//! types, so both read each other's files. No I/O here: the callers read and write the
//! text (srl-cli atomically, naming the file in its errors; srl-py likewise).
//!
//! ```json
//! {
//!   "format": "srl-model",
//!   "version": 1,
//!   "kind": "soft-rfgb",
//!   "provenance": { "data": "imdb/Fold1/train", "seed": 1, "srl_version": "0.1.0",
//!                   "command": "srl boost learn ..." },
//!   "parameters": { ... the learning parameters ... },
//!   "model": { ... the library model, serialised with serde ... }
//! }
//! ```
//!
//! `format` identifies the file type, `version` the layout of this envelope *and* of the
//! wrapped model's serde form: a reader accepts exactly [`VERSION`]. `kind` names the
//! wrapped type ([`KIND_SOFT_RFGB`], [`KIND_MLN_BOOST`], or a kind of another crate's model
//! that srl-cli stores, e.g. `naive-bayes`). `parameters` is free-form JSON for the record
//! (srl-py adds the estimator's constructor arguments under `parameters.estimator`).
//!
//! ```
//! use srl_boost::model_file::{ModelFile, ModelFileError, Provenance, peek_kind};
//! let prov = Provenance {
//!     data: "train/".into(),
//!     seed: Some(1),
//!     srl_version: "0.1.0".into(),
//!     command: "example".into(),
//! };
//! let file = ModelFile::wrap("toy", vec![1.0, 2.0], serde_json::json!({}), prov);
//! let text = file.to_json_string()?;
//! assert_eq!(peek_kind(&text)?, "toy");
//! let back = ModelFile::<Vec<f64>>::parse(&text, "toy")?;
//! assert_eq!(back.model, vec![1.0, 2.0]);
//! assert!(matches!(
//!     ModelFile::<Vec<f64>>::parse(&text, "other"),
//!     Err(ModelFileError::Kind { .. })
//! ));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// The `format` field of every srl model file.
pub const FORMAT: &str = "srl-model";
/// The model-file version this build writes and reads.
pub const VERSION: u32 = 1;
/// The `kind` of a [`crate::SoftRfgb`] (RFGB and Soft-RFGB) model.
pub const KIND_SOFT_RFGB: &str = "soft-rfgb";
/// The `kind` of a [`crate::MlnBoost`] model.
pub const KIND_MLN_BOOST: &str = "mln-boost";
/// The `kind` of a [`crate::RegressionRfgb`] (RDN-Boost regression) model.
pub const KIND_RDN_REGRESSION: &str = "rdn-regression";

/// Where a model came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The training data: a path as given on the command line, or `<python lists>`.
    pub data: String,
    /// The seed of every random choice, if the learner used one.
    pub seed: Option<u64>,
    /// The srl version that wrote the file.
    pub srl_version: String,
    /// How the model was made (the command line, or the Python call).
    pub command: String,
}

/// The envelope around a model of type `M` (`serde_json::Value` to keep it undecoded).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModelFile<M> {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`] when written by this build.
    pub version: u32,
    /// The kind of `model` (e.g. [`KIND_SOFT_RFGB`]).
    pub kind: String,
    /// Where the model came from.
    pub provenance: Provenance,
    /// The learning parameters (free-form JSON; for the record).
    pub parameters: serde_json::Value,
    /// The model.
    pub model: M,
}

/// Why a text is not a readable model file of the wanted kind. The messages name no
/// file: the caller, which knows it, prefixes it (and the line, for the two variants that
/// carry one).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelFileError {
    /// The text is not JSON.
    #[error("not a JSON model file: {message}")]
    NotJson {
        /// 1-based line of the syntax error.
        line: usize,
        /// serde_json's description.
        message: String,
    },
    /// JSON without `"format": "srl-model"`.
    #[error("not an srl model file (no \"format\": \"{FORMAT}\")")]
    NotSrlModel,
    /// No numeric `version`.
    #[error("model file without a numeric \"version\"")]
    NoVersion,
    /// Another version than [`VERSION`].
    #[error(
        "model file version {found}, but this srl ({}) reads version {VERSION} only; \
         re-learn the model with this srl or use the srl that wrote it",
        env!("CARGO_PKG_VERSION")
    )]
    Version {
        /// The file's version.
        found: u64,
    },
    /// No `kind` (from [`peek_kind`]).
    #[error("model file without a \"kind\"")]
    NoKind,
    /// Another kind than the reader wants (`?` when the file has none).
    #[error("holds a {found} model, expected a {expected} model")]
    Kind {
        /// The file's kind.
        found: String,
        /// The wanted kind.
        expected: String,
    },
    /// The envelope or the model does not decode.
    #[error("malformed model: {message}")]
    Malformed {
        /// 1-based line.
        line: usize,
        /// serde_json's description.
        message: String,
    },
}

impl ModelFileError {
    /// The 1-based line of a [`ModelFileError::NotJson`] or [`ModelFileError::Malformed`]
    /// error.
    #[must_use]
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::NotJson { line, .. } | Self::Malformed { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// The text as JSON whose `format` is [`FORMAT`].
fn head(text: &str) -> Result<serde_json::Value, ModelFileError> {
    let head: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ModelFileError::NotJson {
            line: e.line(),
            message: e.to_string(),
        })?;
    if head.get("format").and_then(serde_json::Value::as_str) == Some(FORMAT) {
        Ok(head)
    } else {
        Err(ModelFileError::NotSrlModel)
    }
}

/// The `kind` of a model file, checked only for being an srl model file: lets a reader
/// that accepts several kinds pick the type for [`ModelFile::parse`].
///
/// # Errors
/// [`ModelFileError::NotJson`], [`ModelFileError::NotSrlModel`], [`ModelFileError::NoKind`].
pub fn peek_kind(text: &str) -> Result<String, ModelFileError> {
    head(text)?
        .get("kind")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
        .ok_or(ModelFileError::NoKind)
}

impl<M> ModelFile<M> {
    /// Wraps `model` of kind `kind` with this build's [`FORMAT`] and [`VERSION`].
    pub fn wrap(
        kind: &str,
        model: M,
        parameters: serde_json::Value,
        provenance: Provenance,
    ) -> Self {
        Self {
            format: FORMAT.to_owned(),
            version: VERSION,
            kind: kind.to_owned(),
            provenance,
            parameters,
            model,
        }
    }
}

impl<M: Serialize> ModelFile<M> {
    /// The pretty JSON text of the file, with one trailing newline.
    ///
    /// # Errors
    /// serde_json's, e.g. a non-finite number in `parameters` or the model.
    pub fn to_json_string(&self) -> Result<String, serde_json::Error> {
        let mut s = serde_json::to_string_pretty(self)?;
        s.push('\n');
        Ok(s)
    }
}

impl<M: DeserializeOwned> ModelFile<M> {
    /// Parses and checks a model file's text: `format` must be [`FORMAT`], `version`
    /// [`VERSION`], `kind` equal to `kind`.
    ///
    /// # Errors
    /// [`ModelFileError::NotJson`], [`ModelFileError::NotSrlModel`],
    /// [`ModelFileError::NoVersion`], [`ModelFileError::Version`], [`ModelFileError::Kind`],
    /// [`ModelFileError::Malformed`] (in this order of checking).
    pub fn parse(text: &str, kind: &str) -> Result<Self, ModelFileError> {
        let head = head(text)?;
        match head.get("version").and_then(serde_json::Value::as_u64) {
            Some(v) if v == u64::from(VERSION) => {}
            Some(found) => return Err(ModelFileError::Version { found }),
            None => return Err(ModelFileError::NoVersion),
        }
        let found = head
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("?");
        if found != kind {
            return Err(ModelFileError::Kind {
                found: found.to_owned(),
                expected: kind.to_owned(),
            });
        }
        serde_json::from_str(text).map_err(|e| ModelFileError::Malformed {
            line: e.line(),
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prov() -> Provenance {
        Provenance {
            data: "d".into(),
            seed: None,
            srl_version: "0".into(),
            command: "c".into(),
        }
    }

    #[test]
    fn every_check_has_its_error() {
        let ok = ModelFile::wrap("k", 3u32, serde_json::json!({"a": 1}), prov())
            .to_json_string()
            .unwrap();
        assert!(ok.ends_with("}\n"));
        assert_eq!(ModelFile::<u32>::parse(&ok, "k").unwrap().model, 3);
        let cases = [
            ("{", "not a JSON model file"),
            ("{\"format\": \"x\"}", "not an srl model file"),
            (
                "{\"format\": \"srl-model\"}",
                "model file without a numeric \"version\"",
            ),
            (
                "{\"format\": \"srl-model\", \"version\": 7}",
                "model file version 7, but this srl",
            ),
            (
                "{\"format\": \"srl-model\", \"version\": 1}",
                "holds a ? model, expected a k model",
            ),
            (
                "{\"format\": \"srl-model\", \"version\": 1, \"kind\": \"k\"}",
                "malformed model: missing field",
            ),
        ];
        for (text, want) in cases {
            let e = ModelFile::<u32>::parse(text, "k").unwrap_err();
            assert!(e.to_string().starts_with(want), "{text}: {e}");
        }
        assert_eq!(
            ModelFile::<u32>::parse("{\n\n!", "k").unwrap_err().line(),
            Some(3)
        );
        assert!(matches!(
            peek_kind("{\"format\": \"srl-model\"}"),
            Err(ModelFileError::NoKind)
        ));
    }
}
