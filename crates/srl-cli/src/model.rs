//! The versioned JSON model file.
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
//! wrapped model's serde form: a reader accepts exactly [`VERSION`] and names the file and
//! both versions otherwise. `kind` names the wrapped type ([`ModelKind::KIND`]).

use std::path::Path;

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// The `format` field of every srl model file.
pub const FORMAT: &str = "srl-model";
/// The model-file version this build writes and reads.
pub const VERSION: u32 = 1;

/// A library model type that can be stored in a model file.
pub trait ModelKind: Serialize + DeserializeOwned {
    /// The `kind` field naming the type.
    const KIND: &'static str;
}

impl ModelKind for srl_boost::SoftRfgb {
    const KIND: &'static str = "soft-rfgb";
}
impl ModelKind for srl_boost::MlnBoost {
    const KIND: &'static str = "mln-boost";
}
impl ModelKind for srl_learn::LogisticRegression {
    const KIND: &'static str = "logistic-regression";
}
impl ModelKind for srl_learn::RelationalMarkovNetwork {
    const KIND: &'static str = "markov-network";
}
impl ModelKind for srl_learn::CostSensitiveMarkovNetwork {
    const KIND: &'static str = "cost-sensitive-markov-network";
}
impl ModelKind for srl_bayes::NaiveBayes {
    const KIND: &'static str = "naive-bayes";
}

/// Where a model came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The training data path as given on the command line.
    pub data: String,
    /// The seed of every random choice, if the learner used one.
    pub seed: Option<u64>,
    /// The srl version that wrote the file.
    pub srl_version: String,
    /// The command line that wrote the file.
    pub command: String,
}

impl Provenance {
    /// Provenance of the current process (version and command line) for `data`, `seed`.
    pub fn now(data: &Path, seed: Option<u64>) -> Self {
        Self {
            data: data.display().to_string(),
            seed,
            srl_version: env!("CARGO_PKG_VERSION").to_owned(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
        }
    }
}

/// The envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ModelFile<M> {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`] when written by this build.
    pub version: u32,
    /// [`ModelKind::KIND`] of `model`.
    pub kind: String,
    /// Where the model came from.
    pub provenance: Provenance,
    /// The learning parameters (free-form JSON; for the record).
    pub parameters: serde_json::Value,
    /// The model.
    pub model: M,
}

/// The `kind` field of a model file, checked only for being an srl model file: lets a
/// command that accepts several kinds pick the type to load with [`ModelFile::load`].
///
/// # Errors
/// The file is unreadable, not JSON, not an srl model file, or has no `kind`.
pub fn peek_kind(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read model file {}", path.display()))?;
    let head: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}: not a JSON model file: {e}",
            path.display(),
            e.line()
        )
    })?;
    if head.get("format").and_then(serde_json::Value::as_str) != Some(FORMAT) {
        bail!(
            "{}: not an srl model file (no \"format\": \"{FORMAT}\")",
            path.display()
        );
    }
    head.get("kind")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("{}: model file without a \"kind\"", path.display()))
}

impl<M: ModelKind> ModelFile<M> {
    /// Wraps `model`.
    pub fn new(model: M, parameters: serde_json::Value, provenance: Provenance) -> Self {
        Self {
            format: FORMAT.to_owned(),
            version: VERSION,
            kind: M::KIND.to_owned(),
            provenance,
            parameters,
            model,
        }
    }

    /// Writes the file atomically (temporary name, then rename).
    ///
    /// # Errors
    /// I/O errors naming the file.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        crate::ui::write_atomic(path, |w| {
            serde_json::to_writer_pretty(&mut *w, self)?;
            writeln!(w)?;
            Ok(())
        })
    }

    /// Reads and checks a model file: `format` must be [`FORMAT`], `version` must be
    /// [`VERSION`], `kind` must be `M::KIND`.
    ///
    /// # Errors
    /// A message naming the file: unreadable, not JSON (with line), not an srl model
    /// file, another version, another kind, or a malformed model (with line).
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read model file {}", path.display()))?;
        let head: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}: not a JSON model file: {e}",
                path.display(),
                e.line()
            )
        })?;
        if head.get("format").and_then(serde_json::Value::as_str) != Some(FORMAT) {
            bail!(
                "{}: not an srl model file (no \"format\": \"{FORMAT}\")",
                path.display()
            );
        }
        match head.get("version").and_then(serde_json::Value::as_u64) {
            Some(v) if v == u64::from(VERSION) => {}
            Some(v) => bail!(
                "{}: model file version {v}, but this srl ({}) reads version {VERSION} only; \
                 re-learn the model with this srl or use the srl that wrote it",
                path.display(),
                env!("CARGO_PKG_VERSION")
            ),
            None => bail!(
                "{}: model file without a numeric \"version\"",
                path.display()
            ),
        }
        let kind = head
            .get("kind")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("?");
        if kind != M::KIND {
            bail!(
                "{}: holds a {kind} model, expected a {} model",
                path.display(),
                M::KIND
            );
        }
        serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{}:{}: malformed model: {e}", path.display(), e.line()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny_nb() -> srl_bayes::NaiveBayes {
        let x = [0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0];
        let y = [0u32, 1, 0, 1];
        let kinds = [srl_bayes::FeatureKind::Categorical { states: 2 }; 2];
        srl_bayes::NaiveBayesParams::default()
            .fit(&kinds, &x, &y, 2, None)
            .expect("fit")
    }

    #[test]
    fn logistic_regression_round_trips() {
        let x = srl_graph::graph::Attributes::Dense {
            num_features: 2,
            values: vec![0.0, 1.0, 1.0, 0.0, 0.1, 0.9, 0.9, 0.2],
        };
        let lr = srl_learn::LogisticRegressionParams::default()
            .fit(&x, &[0, 1, 0, 1], 2, None)
            .expect("fit");
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("lr.json");
        ModelFile::new(lr.clone(), serde_json::json!({}), Provenance::now(&p, None))
            .save(&p)
            .expect("save");
        let back = ModelFile::<srl_learn::LogisticRegression>::load(&p).expect("load");
        assert_eq!(back.model, lr);
        assert_eq!(back.kind, "logistic-regression");
    }

    #[test]
    fn round_trip_and_version_check() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("m.json");
        let nb = tiny_nb();
        let f = ModelFile::new(
            nb.clone(),
            serde_json::json!({}),
            Provenance::now(Path::new("x"), Some(3)),
        );
        f.save(&p).expect("save");
        let back = ModelFile::<srl_bayes::NaiveBayes>::load(&p).expect("load");
        assert_eq!(back.provenance.seed, Some(3));
        assert_eq!(
            serde_json::to_string(&back.model).expect("json"),
            serde_json::to_string(&nb).expect("json")
        );
        // Another kind.
        let e = ModelFile::<srl_boost::SoftRfgb>::load(&p).expect_err("kind");
        assert!(e.to_string().contains("naive-bayes"), "{e}");
        // Another version.
        let text = std::fs::read_to_string(&p)
            .expect("read")
            .replace("\"version\": 1", "\"version\": 2");
        std::fs::write(&p, text).expect("write");
        let e = ModelFile::<srl_bayes::NaiveBayes>::load(&p).expect_err("version");
        assert!(e.to_string().contains("version 2"), "{e}");
    }
}
