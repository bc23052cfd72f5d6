//! The versioned JSON model file. The envelope (`format`, `version`, `kind`, `provenance`,
//! `parameters`, `model`) and its checks are srl-boost's [`srl_boost::model_file`], shared
//! with the Python bindings (srl-py) so each reads the other's files; here: the `kind` of
//! every model the `srl` command stores ([`ModelKind`]), and reading and writing files with
//! errors that name them.
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
//! wrapped model's serde form: a reader accepts exactly
//! [`srl_boost::model_file::VERSION`] and names the file and both versions otherwise.
//! `kind` names the wrapped type ([`ModelKind::KIND`]).

use std::path::Path;

use anyhow::Context as _;
use serde::{Serialize, de::DeserializeOwned};
use srl_boost::model_file::{KIND_MLN_BOOST, KIND_SOFT_RFGB, ModelFileError};
pub use srl_boost::model_file::{ModelFile, Provenance};

/// A library model type that can be stored in a model file.
pub trait ModelKind: Serialize + DeserializeOwned {
    /// The `kind` field naming the type.
    const KIND: &'static str;
}

impl ModelKind for srl_boost::SoftRfgb {
    const KIND: &'static str = KIND_SOFT_RFGB;
}
impl ModelKind for srl_boost::MlnBoost {
    const KIND: &'static str = KIND_MLN_BOOST;
}
impl ModelKind for srl_boost::RegressionRfgb {
    const KIND: &'static str = srl_boost::model_file::KIND_RDN_REGRESSION;
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

/// [`Provenance`] of the running `srl` command.
pub trait ProvenanceNow {
    /// Provenance of the current process (version and command line) for `data`, `seed`.
    fn now(data: &Path, seed: Option<u64>) -> Self;
}

impl ProvenanceNow for Provenance {
    fn now(data: &Path, seed: Option<u64>) -> Self {
        Self {
            data: data.display().to_string(),
            seed,
            srl_version: env!("CARGO_PKG_VERSION").to_owned(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
        }
    }
}

/// Creating, writing and reading model files of a [`ModelKind`].
pub trait ModelFileIo<M>: Sized {
    /// Wraps `model` (kind [`ModelKind::KIND`]).
    fn new(model: M, parameters: serde_json::Value, provenance: Provenance) -> Self;

    /// Writes the file atomically (temporary name, then rename); an existing file is
    /// replaced only with `ui.force` (`--force`).
    ///
    /// # Errors
    /// I/O errors naming the file; the file exists and `--force` was not given.
    fn save(&self, ui: crate::ui::Ui, path: &Path) -> anyhow::Result<()>;

    /// Reads and checks a model file: `format` must be `srl-model`, `version` must be
    /// [`srl_boost::model_file::VERSION`], `kind` must be `M::KIND`.
    ///
    /// # Errors
    /// A message naming the file: unreadable, not JSON (with line), not an srl model
    /// file, another version, another kind, or a malformed model (with line).
    fn load(path: &Path) -> anyhow::Result<Self>;
}

impl<M: ModelKind> ModelFileIo<M> for ModelFile<M> {
    fn new(model: M, parameters: serde_json::Value, provenance: Provenance) -> Self {
        ModelFile::wrap(M::KIND, model, parameters, provenance)
    }

    fn save(&self, ui: crate::ui::Ui, path: &Path) -> anyhow::Result<()> {
        crate::ui::write_atomic(ui, path, |w| {
            serde_json::to_writer_pretty(&mut *w, self)?;
            writeln!(w)?;
            Ok(())
        })
    }

    fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read model file {}", path.display()))?;
        ModelFile::parse(&text, M::KIND).map_err(|e| in_file(path, &e))
    }
}

/// `e` prefixed with the file (and the line, where `e` has one).
fn in_file(path: &Path, e: &ModelFileError) -> anyhow::Error {
    match e.line() {
        Some(line) => anyhow::anyhow!("{}:{line}: {e}", path.display()),
        None => anyhow::anyhow!("{}: {e}", path.display()),
    }
}

/// The `kind` field of a model file, checked only for being an srl model file: lets a
/// command that accepts several kinds pick the type to load with [`ModelFileIo::load`].
///
/// # Errors
/// The file is unreadable, not JSON, not an srl model file, or has no `kind`.
pub fn peek_kind(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read model file {}", path.display()))?;
    srl_boost::model_file::peek_kind(&text).map_err(|e| in_file(path, &e))
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
            .save(crate::ui::Ui::default(), &p)
            .expect("save");
        let back = ModelFile::<srl_learn::LogisticRegression>::load(&p).expect("load");
        assert_eq!(back.model, lr);
        assert_eq!(back.kind, "logistic-regression");
    }

    /// The Python bindings read and write model files as srl-boost's
    /// `ModelFile<serde_json::Value>` (crates/srl-py/src/model_file.rs): a file the CLI
    /// writes reads there, and a file written there (with `parameters.estimator`, by
    /// `to_json_string`) loads here.
    #[test]
    fn cli_and_python_paths_read_each_other() {
        let dir = tempfile::tempdir().expect("tempdir");
        let nb = tiny_nb();
        let p = dir.path().join("cli.json");
        let prov = Provenance::now(Path::new("data"), Some(9));
        ModelFile::new(nb.clone(), serde_json::json!({"k": 1}), prov.clone())
            .save(crate::ui::Ui::default(), &p)
            .expect("save");
        let text = std::fs::read_to_string(&p).expect("read");
        // The Python path: the undecoded envelope, then the model by kind.
        let py = srl_boost::model_file::ModelFile::<serde_json::Value>::parse(&text, "naive-bayes")
            .expect("python path");
        assert_eq!(py.provenance, prov);
        let model: srl_bayes::NaiveBayes =
            serde_json::from_value(py.model.clone()).expect("decode");
        assert_eq!(
            serde_json::to_string(&model).expect("json"),
            serde_json::to_string(&nb).expect("json")
        );
        // Written the Python way: the same JSON as the CLI's (an undecoded model keeps its
        // object keys sorted, so compare values, not bytes).
        let again: serde_json::Value =
            serde_json::from_str(&py.to_json_string().expect("json")).expect("json");
        assert_eq!(
            again,
            serde_json::from_str::<serde_json::Value>(&text).expect("json")
        );
        let mut from_py = py;
        from_py.parameters["estimator"] = serde_json::json!({"class": "X", "params": {}});
        let q = dir.path().join("py.json");
        std::fs::write(&q, from_py.to_json_string().expect("json")).expect("write");
        let back = ModelFile::<srl_bayes::NaiveBayes>::load(&q).expect("CLI path");
        assert_eq!(back.parameters["estimator"]["class"], "X");
        assert_eq!(back.kind, "naive-bayes");
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
        f.save(crate::ui::Ui::default(), &p).expect("save");
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
