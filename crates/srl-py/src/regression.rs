//! RDN-Boost regression for `srl.BoostedRDNRegressor` (python/srl/_boost.py) and
//! `srl.srlearn.BoostedRDNRegressor`: srl-boost's `RegressionRfgbParams::fit` on an
//! `srl.Database` whose positives are `regressionExample(target(args), value).` atoms,
//! with the model stored in the `srl boost learn --regression` model file
//! (`kind` `rdn-regression`), so files go both ways between Python and the CLI.

use std::path::{Path, PathBuf};

use numpy::{IntoPyArray as _, PyArray1};
use pyo3::prelude::*;
use srl_boost::model_file::KIND_RDN_REGRESSION;
use srl_boost::{RegressionRfgb, RegressionRfgbParams, RegressionSplit};

use crate::boost::{DbData, PyDatabase};
use crate::errors::{self, value_error};
use crate::model_file::{self, ModelFile, Provenance};

impl DbData {
    /// The regression problem of `target`: the positives as `regressionExample(...)`
    /// atoms, no negatives.
    pub(crate) fn regression_split(
        &self,
        target: &str,
    ) -> Result<RegressionSplit, srl_boost::BoostError> {
        if let Some(a) = self.atoms.neg.first() {
            return Err(srl_boost::BoostError::Parse {
                file: a.file.to_path_buf(),
                line: a.line,
                message: "a regression database has no negative examples".into(),
            });
        }
        srl_boost::build_regression_split(
            &self.atoms.facts,
            &self.atoms.pos,
            target,
            &self.bk,
            &self.atoms.facts_path,
        )
    }
}

/// A fitted RDN-Boost regression model (private: `srl.BoostedRDNRegressor` holds one).
#[pyclass(module = "srl._srl", name = "_RdnRegressionModel", frozen)]
pub struct PyRdnRegression {
    model: RegressionRfgb,
    params: RegressionRfgbParams,
    data: String,
    settings: Option<String>,
}

/// `_fit_rdn_regression(database, target, n_estimators, step, preset, max_tree_depth,
/// node_size, max_leaves, min_leaf_examples, use_setparam)`: the library parameters as
/// `srl boost learn --regression` builds them (the preset, then the background's
/// `setParam:` lines when `use_setparam`, then the explicit arguments), then the fit.
/// Releases the GIL.
///
/// Raises ValueError for bad parameters, no example or a background with `setParam:
/// recursion=true` (applied with `use_setparam`), srl.ParseError (file and line) for a
/// malformed `regressionExample` item.
#[pyfunction]
#[pyo3(signature = (database, target, n_estimators, step, preset, max_tree_depth,
                    node_size, max_leaves, min_leaf_examples, use_setparam))]
#[allow(clippy::too_many_arguments)]
pub fn _fit_rdn_regression(
    py: Python<'_>,
    database: &PyDatabase,
    target: &str,
    n_estimators: usize,
    step: f64,
    preset: &str,
    max_tree_depth: Option<usize>,
    node_size: Option<usize>,
    max_leaves: Option<usize>,
    min_leaf_examples: Option<usize>,
    use_setparam: bool,
) -> PyResult<PyRdnRegression> {
    let db = &database.data;
    // the parameters of the boosting classifiers (preset, then setParam, then the explicit
    // arguments), converted once by the library
    let cfg = crate::boost::BoostConfig {
        target: Some(target.to_owned()),
        n_estimators,
        step,
        preset: preset.to_owned(),
        max_tree_depth,
        node_size,
        max_leaves,
        min_leaf_examples,
        use_setparam,
        ..crate::boost::BoostConfig::default()
    };
    let (soft, settings) = cfg.params(&db.bk)?;
    if soft.recursion {
        // as `srl boost learn --regression` (and srl-boost's regression fit, which here
        // is told the settings are applied already) refuses it
        return Err(value_error(
            "setParam: recursion=true: recursive targets are learned for RDN and MLN-Boost models; RDN-Boost regression has none (use_setparam=False ignores the background's setParam lines)",
        ));
    }
    let params = RegressionRfgbParams::from_rfgb(&soft);
    let model = py
        .detach(|| {
            let split = db.regression_split(target)?;
            params.fit(&split.db, &db.bk, &split.examples, &split.values)
        })
        .map_err(errors::boost)?;
    Ok(PyRdnRegression {
        model,
        params,
        data: db.source.clone(),
        settings,
    })
}

/// Reads a model-file text of kind `rdn-regression` (`source` names it in errors).
///
/// Raises srl.ParseError / ValueError as the other model files.
#[pyfunction]
#[pyo3(signature = (text, source = None))]
pub fn _rdn_regression_from_json(
    text: &str,
    source: Option<PathBuf>,
) -> PyResult<(PyRdnRegression, String)> {
    let source = source.unwrap_or_else(|| PathBuf::from("<model text>"));
    let file = model_file::parse(text, &source, KIND_RDN_REGRESSION)?;
    let malformed =
        |e: serde_json::Error| value_error(format!("{}: malformed model: {e}", source.display()));
    let model: RegressionRfgb = serde_json::from_value(file.model.clone()).map_err(malformed)?;
    let params: RegressionRfgbParams =
        serde_json::from_value(file.parameters.clone()).unwrap_or_default();
    let estimator = file
        .parameters
        .get("estimator")
        .map_or_else(|| "null".to_owned(), ToString::to_string);
    Ok((
        PyRdnRegression {
            model,
            params,
            data: file.provenance.data.clone(),
            settings: None,
        },
        estimator,
    ))
}

#[pymethods]
impl PyRdnRegression {
    /// `(values, predictions)` for the database's regression examples of the model's
    /// target, float64 arrays of shape `(n,)` in the database's order. Releases the GIL.
    #[allow(clippy::type_complexity)]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        database: &PyDatabase,
    ) -> PyResult<(Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>)> {
        let db = &database.data;
        let (values, pred) = py
            .detach(|| {
                let split = db.regression_split(self.model.target())?;
                let p = self.model.predict(&split.db, &split.examples)?;
                Ok::<_, srl_boost::BoostError>((split.values, p))
            })
            .map_err(errors::boost)?;
        Ok((values.into_pyarray(py), pred.into_pyarray(py)))
    }

    /// The trees as clause strings (one list per tree).
    #[getter]
    fn estimators(&self) -> Vec<Vec<String>> {
        self.model.trees().iter().map(|t| t.clauses()).collect()
    }

    /// How often each predicate is a splitting criterion over all trees (each inner
    /// node's literals once).
    fn feature_counts(&self) -> std::collections::BTreeMap<String, usize> {
        let mut out = std::collections::BTreeMap::new();
        for t in self.model.trees() {
            for (p, c) in t.feature_counts() {
                *out.entry(p).or_insert(0) += c;
            }
        }
        out
    }

    /// The target predicate.
    #[getter]
    fn target(&self) -> String {
        self.model.target().to_owned()
    }

    /// Training mean squared error before the first tree and after each, `(M + 1,)`.
    #[getter]
    fn train_mse<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.model.train_mse().to_vec().into_pyarray(py)
    }

    /// The background settings applied when fitting, or None.
    #[getter]
    fn settings(&self) -> Option<String> {
        self.settings.clone()
    }

    /// The model file's text (`kind` `rdn-regression`); `estimator` is the JSON of the
    /// Python estimator's class and parameters, stored under `parameters.estimator`.
    fn to_json(
        &self,
        class_name: &str,
        estimator: &str,
        seed_free_command: &str,
    ) -> PyResult<String> {
        let mut parameters = serde_json::to_value(&self.params).map_err(value_error)?;
        let est: serde_json::Value = serde_json::from_str(estimator).map_err(value_error)?;
        if let serde_json::Value::Object(m) = &mut parameters {
            m.insert(
                "estimator".to_owned(),
                serde_json::json!({ "class": class_name, "params": est }),
            );
        }
        let file = ModelFile {
            format: model_file::FORMAT.to_owned(),
            version: model_file::VERSION,
            kind: KIND_RDN_REGRESSION.to_owned(),
            provenance: Provenance {
                data: self.data.clone(),
                seed: None,
                srl_version: env!("CARGO_PKG_VERSION").to_owned(),
                command: seed_free_command.to_owned(),
            },
            parameters,
            model: serde_json::to_value(&self.model).map_err(value_error)?,
        };
        model_file::to_string(&file)
    }

    fn __str__(&self) -> String {
        self.model.to_string()
    }
}

/// Writes `text` to `path` atomically (the CLI's rules; `overwrite` to replace).
///
/// Raises FileExistsError / OSError.
#[pyfunction]
pub fn _write_model_text(path: PathBuf, text: &str, overwrite: bool) -> PyResult<()> {
    model_file::write_atomic(Path::new(&path), text, overwrite)
}

/// `_select_regression(database, target, indices)`: the database with the same facts and
/// background and only the regression examples of `target` at `indices` (positions in
/// the regression split's order; repeats count once), in that order; for
/// `BoostedRDNRegressor`'s cross-validation. Raises ValueError for an index outside
/// `0..n`.
#[pyfunction]
pub fn _select_regression(
    database: &PyDatabase,
    target: &str,
    indices: Vec<i64>,
) -> PyResult<PyDatabase> {
    let data = &database.data;
    let split = data.regression_split(target).map_err(errors::boost)?;
    let ex = &split.examples;
    let n = ex.len();
    let mut keep = std::collections::HashSet::new();
    for &i in &indices {
        let j = usize::try_from(i)
            .ok()
            .filter(|&j| j < n)
            .ok_or_else(|| value_error(format!("index {i}: {target} has {n} examples")))?;
        let args: Vec<String> = ex
            .args(j)
            .iter()
            .map(|&c| split.db.constant_name(c).to_owned())
            .collect();
        keep.insert(args);
    }
    let parsed = srl_boost::regression_examples(&data.atoms.pos).map_err(errors::boost)?;
    let pos = data
        .atoms
        .pos
        .iter()
        .zip(&parsed)
        .filter(|(_, (inner, _))| inner.pred != ex.pred || keep.contains(&inner.args))
        .map(|(a, _)| a.clone())
        .collect();
    Ok(PyDatabase {
        data: DbData {
            atoms: srl_boost::FolderAtoms {
                pos,
                neg: Vec::new(),
                facts: data.atoms.facts.clone(),
                facts_path: data.atoms.facts_path.clone(),
            },
            bk: data.bk.clone(),
            source: data.source.clone(),
        },
    })
}

/// `rmse, mae, r2 = _regression_metrics(predicted, truth)`: srl-eval's RMSE, MAE and R²
/// of two float sequences of the same length.
///
/// Raises ValueError for empty or unequal inputs, non-finite values, or (R²) a constant
/// truth.
#[pyfunction]
pub fn _regression_metrics(predicted: Vec<f64>, truth: Vec<f64>) -> PyResult<(f64, f64, f64)> {
    use srl_eval::metrics::{mae, r2_score, rmse};
    Ok((
        rmse(&predicted, &truth).map_err(value_error)?,
        mae(&predicted, &truth).map_err(value_error)?,
        r2_score(&predicted, &truth).map_err(value_error)?,
    ))
}

/// Adds the regression functions and class to `srl._srl`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRdnRegression>()?;
    m.add_function(wrap_pyfunction!(_fit_rdn_regression, m)?)?;
    m.add_function(wrap_pyfunction!(_rdn_regression_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(_write_model_text, m)?)?;
    m.add_function(wrap_pyfunction!(_regression_metrics, m)?)?;
    m.add_function(wrap_pyfunction!(_select_regression, m)?)?;
    Ok(())
}
