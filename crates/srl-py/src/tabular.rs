//! Tabular classifiers: the native half of `srl.LogisticRegression`, `srl.NaiveBayes` and
//! `srl.UKNN` (the scikit-learn estimators in `python/srl/_tabular.py`, which validate the
//! arguments, map the labels to `0..k` and back, and hold one of the fitted models below).
//!
//! | Python model (private) | Rust learner |
//! |---|---|
//! | `srl._srl._LogisticRegressionModel` | srl-learn [`LogisticRegressionParams::fit`], [`LogisticRegression`] |
//! | `srl._srl._NaiveBayesModel` | srl-bayes [`NaiveBayesParams::fit`], [`NaiveBayes`] |
//! | `srl._srl._UknnModel` | srl-learn [`UknnParams::fit`], [`Uknn::predict`] (Zadrozny et al. 2009) |
//!
//! `X` arrives either as a 2-D float64 array `(n, d)` or as the CSR parts
//! `(indptr (n + 1,) int64, indices (nnz,) int64, data (nnz,) float64, d)` of a
//! scipy.sparse matrix (indices sorted and unique within each row). Labels are class
//! indices `0..n_classes` (int64). Every model pickles through the serde JSON of the Rust
//! model (`__reduce__` → `_tabular_from_json(kind, text)`), exactly: floats are written
//! with the shortest round-tripping representation and read back bit for bit.

use numpy::{
    IntoPyArray as _, PyArray1, PyArray2, PyArrayMethods as _, PyReadonlyArray1, PyReadonlyArray2,
};
use pyo3::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use srl_bayes::{FeatureKind, NaiveBayes, NaiveBayesParams};
use srl_graph::{AttributeRow, Attributes};
use srl_learn::uknn::{Metric, Uknn, UknnParams, Weighting};
use srl_learn::{Lambda, LogisticRegression, LogisticRegressionParams};

use crate::errors::{self, value_error};

/// The largest state index a categorical naive Bayes feature may take (2²⁴, so that a
/// stray real value cannot make the learner allocate a huge table).
const MAX_STATE: f64 = 16_777_216.0;

/// The fitted labels `(n,)` int64 and class probabilities `(n, k)` float64 of a predict.
type Predictions<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray2<f64>>);

/// Reads `X` (a 2-D float64 array or the CSR tuple described in the module docs).
///
/// # Errors
/// ValueError for a CSR tuple whose parts disagree (offsets not non-decreasing from 0 to
/// `nnz`, a column index outside `0..d` or not increasing within its row).
fn read_x(x: &Bound<'_, PyAny>) -> PyResult<Attributes> {
    type Csr<'py> = (
        PyReadonlyArray1<'py, i64>,
        PyReadonlyArray1<'py, i64>,
        PyReadonlyArray1<'py, f64>,
        usize,
    );
    if let Ok((indptr, indices, data, d)) = x.extract::<Csr<'_>>() {
        let (indptr, indices, data) = (indptr.as_array(), indices.as_array(), data.as_array());
        let nnz = data.len();
        if indices.len() != nnz {
            return Err(value_error(format!(
                "X: {} column indices for {nnz} values",
                indices.len()
            )));
        }
        let offsets = indptr
            .iter()
            .map(|&o| {
                usize::try_from(o)
                    .ok()
                    .filter(|&o| o <= nnz)
                    .ok_or_else(|| value_error(format!("X: row offset {o} outside 0..={nnz}")))
            })
            .collect::<PyResult<Vec<_>>>()?;
        if offsets.first() != Some(&0)
            || offsets.last() != Some(&nnz)
            || offsets.windows(2).any(|w| w[0] > w[1])
        {
            return Err(value_error("X: row offsets must rise from 0 to nnz"));
        }
        let cols = indices
            .iter()
            .map(|&j| {
                u32::try_from(j)
                    .ok()
                    .filter(|&j| (j as usize) < d)
                    .ok_or_else(|| value_error(format!("X: column index {j} outside 0..{d}")))
            })
            .collect::<PyResult<Vec<_>>>()?;
        if offsets
            .windows(2)
            .any(|w| cols[w[0]..w[1]].windows(2).any(|c| c[0] >= c[1]))
        {
            return Err(value_error(
                "X: column indices must be increasing within each row",
            ));
        }
        return Ok(Attributes::Sparse {
            num_features: d,
            offsets,
            indices: cols,
            values: data.to_vec(),
        });
    }
    let a: PyReadonlyArray2<'_, f64> = x.extract().map_err(|_| {
        value_error("X: expected a 2-dimensional float64 array or CSR parts (internal)")
    })?;
    let a = a.as_array();
    Ok(Attributes::Dense {
        num_features: a.ncols(),
        values: a.iter().copied().collect(),
    })
}

/// Writes row `r` of `x` densely into `out` (length `d`).
fn dense_row(r: AttributeRow<'_>, out: &mut [f64]) {
    match r {
        AttributeRow::Dense(v) => out.copy_from_slice(v),
        AttributeRow::Sparse { .. } => {
            out.fill(0.0);
            r.for_each(|j, v| out[j] = v);
        }
    }
}

/// All rows of `x`, row-major `n × d`.
fn dense_values(x: &Attributes) -> Vec<f64> {
    match x {
        Attributes::Dense { values, .. } => values.clone(),
        Attributes::Sparse { .. } => {
            let d = x.num_features();
            let mut out = vec![0.0; x.num_rows() * d];
            for (i, row) in out.chunks_mut(d.max(1)).enumerate().take(x.num_rows()) {
                dense_row(x.row(i), row);
            }
            out
        }
    }
}

/// Class indices `y` as `u32` below `n_classes`.
fn read_labels(y: &PyReadonlyArray1<'_, i64>, n_classes: usize) -> PyResult<Vec<u32>> {
    y.as_array()
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            u32::try_from(c)
                .ok()
                .filter(|&c| (c as usize) < n_classes)
                .ok_or_else(|| value_error(format!("y[{i}] = {c}: labels are 0..{n_classes}")))
        })
        .collect()
}

/// Checks that `x` has the `d` columns a model was fitted on.
fn check_width(x: &Attributes, d: usize) -> PyResult<()> {
    if x.num_features() == d {
        Ok(())
    } else {
        Err(value_error(format!(
            "X has {} features, but the model was fitted on {d}",
            x.num_features()
        )))
    }
}

fn to_json<T: Serialize>(model: &T) -> PyResult<String> {
    serde_json::to_string(model).map_err(|e| value_error(format!("cannot serialise: {e}")))
}

fn from_json<T: DeserializeOwned>(kind: &str, text: &str) -> PyResult<T> {
    serde_json::from_str(text).map_err(|e| value_error(format!("not a {kind} model: {e}")))
}

/// `(srl._srl._tabular_from_json, (kind, json))`, the pickle recipe of every model here.
fn reduce<'py>(
    py: Python<'py>,
    kind: &'static str,
    json: String,
) -> PyResult<(Bound<'py, PyAny>, (&'static str, String))> {
    let f = py.import("srl._srl")?.getattr("_tabular_from_json")?;
    Ok((f, (kind, json)))
}

/// A fitted multinomial logistic regression with an L2 prior (srl-learn
/// [`LogisticRegression`]; Sen & Getoor 2006's LOGREG). Built by `fit`; used by
/// `srl.LogisticRegression`.
#[pyclass(module = "srl._srl", name = "_LogisticRegressionModel", frozen)]
pub struct PyLogisticRegressionModel {
    inner: LogisticRegression,
}

#[pymethods]
impl PyLogisticRegressionModel {
    /// Fits on `x` (n, d) with class indices `y` (n,) in `0..n_classes`.
    ///
    /// `c`: scikit-learn's inverse regularisation strength, the prior `λ = 1 / (2c)`
    /// ([`Lambda::Fixed`]; `c = inf`: no prior); `None`: `λ = lambda_per_sample · Σ s_i`
    /// ([`Lambda::PerSample`], Sen & Getoor 2006's `10⁻⁴` per sample). `sample_weight`:
    /// (n,) finite weights `>= 0`. `max_iter >= 1` L-BFGS iterations, `tol > 0` on the
    /// gradient norm divided by the total weight. Releases the GIL.
    ///
    /// Raises ValueError for `c <= 0` or NaN, a negative `lambda_per_sample`, labels out
    /// of range, lengths that disagree, a non-finite value, weights that are negative or
    /// sum to zero, or a failing optimiser.
    #[staticmethod]
    #[pyo3(signature = (x, y, n_classes, sample_weight, c, lambda_per_sample, fit_intercept, max_iter, tol))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: PyReadonlyArray1<'_, i64>,
        n_classes: usize,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        c: Option<f64>,
        lambda_per_sample: f64,
        fit_intercept: bool,
        max_iter: u64,
        tol: f64,
    ) -> PyResult<Self> {
        let lambda = match c {
            Some(c) if c > 0.0 => Lambda::Fixed(1.0 / (2.0 * c)),
            Some(c) => return Err(value_error(format!("C = {c}: must be > 0"))),
            None => Lambda::PerSample(lambda_per_sample),
        };
        let params = LogisticRegressionParams {
            lambda,
            fit_intercept,
            max_iters: max_iter,
            tol,
            ..LogisticRegressionParams::default()
        };
        let x = read_x(x)?;
        let labels = read_labels(&y, n_classes)?;
        let weights = sample_weight.map(|w| w.as_array().to_vec());
        let inner = py
            .detach(|| params.fit(&x, &labels, n_classes, weights.as_deref()))
            .map_err(value_error)?;
        Ok(Self { inner })
    }

    /// `P(y = c | x)`, shape (n, k) float64, rows summing to 1.
    ///
    /// Raises ValueError if `x` does not have the fitted number of features.
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(self.predict(py, x)?.1)
    }

    /// `(labels (n,) int64, probabilities (n, k) float64)`: the most probable class of
    /// each row (lowest index on ties) and `P(y = c | x)`.
    ///
    /// Raises ValueError if `x` does not have the fitted number of features.
    fn predict<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Predictions<'py>> {
        let x = read_x(x)?;
        let m = &self.inner;
        check_width(&x, m.num_features())?;
        let (n, k) = (x.num_rows(), m.num_classes());
        let (labels, proba) = py.detach(|| {
            let mut proba = vec![0.0; n * k];
            let mut labels = Vec::with_capacity(n);
            for (i, out) in proba.chunks_mut(k).enumerate() {
                m.predict_proba_into(x.row(i), out);
                labels.push(i64::from(m.predict(x.row(i))));
            }
            (labels, proba)
        });
        Ok((
            labels.into_pyarray(py),
            proba.into_pyarray(py).reshape([n, k])?,
        ))
    }

    /// The weights `W`, shape (k, d) float64 (`P(y = c | x) ∝ exp(W_c · x + b_c)`).
    #[getter]
    fn coef<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let m = &self.inner;
        m.coefficients()
            .to_vec()
            .into_pyarray(py)
            .reshape([m.num_classes(), m.num_features()])
    }

    /// The intercepts `b`, shape (k,) float64 (zeros without `fit_intercept`).
    #[getter]
    fn intercept<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.intercepts().to_vec().into_pyarray(py)
    }

    /// The prior strength `λ` used (resolved from `C` or the per-sample rate).
    #[getter]
    fn lambda_(&self) -> f64 {
        self.inner.lambda()
    }

    /// L-BFGS iterations run.
    #[getter]
    fn n_iter(&self) -> u64 {
        self.inner.report().iterations
    }

    /// Whether L-BFGS stopped on its tolerance rather than on `max_iter`.
    #[getter]
    fn converged(&self) -> bool {
        self.inner.report().converged
    }

    /// The model as JSON text (srl-learn's serde form).
    fn to_json(&self) -> PyResult<String> {
        to_json(&self.inner)
    }

    /// Pickle support: the JSON text, read back bit for bit.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (&'static str, String))> {
        reduce(py, "logistic_regression", to_json(&self.inner)?)
    }
}

/// A fitted naive Bayes model (srl-bayes [`NaiveBayes`]): categorical features with a
/// table per class, count features sharing one multinomial per class, Laplace smoothing,
/// `NaN` = missing (marginalised out). Built by `fit`; used by `srl.NaiveBayes`.
#[pyclass(module = "srl._srl", name = "_NaiveBayesModel", frozen)]
pub struct PyNaiveBayesModel {
    inner: NaiveBayes,
}

#[pymethods]
impl PyNaiveBayesModel {
    /// Fits on `x` (n, d) with class indices `y` (n,) in `0..n_classes`.
    ///
    /// `categorical`: (d,) bool, the features that are categorical (values `0, 1, ...`;
    /// a feature's number of states is its largest training value + 1); the others are
    /// counts (finite, `>= 0`). `alpha`, `prior_alpha >= 0`: the Laplace pseudo-counts of
    /// the feature tables and of the class prior. `sample_weight`: (n,) finite `>= 0`.
    ///
    /// Raises ValueError for a negative or non-finite count, a categorical value that is
    /// not a whole number `>= 0`, labels out of range, a bad weight, or negative smoothing.
    #[staticmethod]
    #[pyo3(signature = (x, y, n_classes, sample_weight, alpha, prior_alpha, categorical))]
    #[allow(clippy::too_many_arguments)]
    fn fit(
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: PyReadonlyArray1<'_, i64>,
        n_classes: usize,
        sample_weight: Option<PyReadonlyArray1<'_, f64>>,
        alpha: f64,
        prior_alpha: f64,
        categorical: PyReadonlyArray1<'_, bool>,
    ) -> PyResult<Self> {
        let x = read_x(x)?;
        let d = x.num_features();
        let categorical = categorical.as_array().to_vec();
        if categorical.len() != d {
            return Err(value_error(format!(
                "categorical: {} entries for {d} features",
                categorical.len()
            )));
        }
        let labels = read_labels(&y, n_classes)?;
        let weights = sample_weight.map(|w| w.as_array().to_vec());
        let params = NaiveBayesParams { alpha, prior_alpha };
        let inner = py.detach(|| -> PyResult<NaiveBayes> {
            let values = dense_values(&x);
            // A categorical feature's states: 0..=max over its observed training values
            // (NaN = missing); the learner rejects values that are not state indices.
            let mut top = vec![0.0f64; d];
            for row in values.chunks(d.max(1)) {
                for ((t, &v), &cat) in top.iter_mut().zip(row).zip(&categorical) {
                    if cat && v.is_finite() && v > *t {
                        *t = v;
                    }
                }
            }
            if let Some(j) = (0..d).find(|&j| top[j] > MAX_STATE) {
                return Err(value_error(format!(
                    "categorical feature {j}: value {} is above {MAX_STATE} (a state index)",
                    top[j]
                )));
            }
            let kinds = categorical
                .iter()
                .zip(&top)
                .map(|(&cat, &t)| {
                    if cat {
                        FeatureKind::Categorical {
                            states: (t.floor() as usize).saturating_add(1),
                        }
                    } else {
                        FeatureKind::Count
                    }
                })
                .collect::<Vec<_>>();
            params
                .fit(&kinds, &values, &labels, n_classes, weights.as_deref())
                .map_err(errors::bayes)
        })?;
        Ok(Self { inner })
    }

    /// `Pr(c | x)`, shape (n, k) float64 (missing `NaN` entries skipped).
    ///
    /// Raises ValueError for the wrong number of features or a categorical value that is
    /// not one of the fitted states.
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        Ok(self.predict(py, x)?.1)
    }

    /// `(labels (n,) int64, probabilities (n, k) float64)`: the class of largest
    /// posterior (lowest index on ties) and `Pr(c | x)`.
    ///
    /// Raises ValueError as `predict_proba`.
    fn predict<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Predictions<'py>> {
        let x = read_x(x)?;
        let m = &self.inner;
        let d = m.n_features();
        check_width(&x, d)?;
        let (n, k) = (x.num_rows(), m.n_classes());
        let (labels, proba) = py.detach(|| -> PyResult<(Vec<i64>, Vec<f64>)> {
            let mut proba = Vec::with_capacity(n * k);
            let mut labels = Vec::with_capacity(n);
            let mut row = vec![0.0; d];
            for i in 0..n {
                dense_row(x.row(i), &mut row);
                proba.extend(m.predict_proba(&row).map_err(errors::bayes)?);
                labels.push(i64::from(m.predict(&row).map_err(errors::bayes)?));
            }
            Ok((labels, proba))
        })?;
        Ok((
            labels.into_pyarray(py),
            proba.into_pyarray(py).reshape([n, k])?,
        ))
    }

    /// `Pr(c)`, shape (k,) float64.
    #[getter]
    fn class_prior<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.class_prior().to_vec().into_pyarray(py)
    }

    /// Number of states of each feature, shape (d,) int64 (0 for a count feature).
    #[getter]
    fn n_categories<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        self.inner
            .feature_kinds()
            .iter()
            .map(|k| match k {
                FeatureKind::Categorical { states } => i64::try_from(*states).unwrap_or(i64::MAX),
                FeatureKind::Count => 0,
            })
            .collect::<Vec<_>>()
            .into_pyarray(py)
    }

    /// The model as JSON text (srl-bayes's serde form).
    fn to_json(&self) -> PyResult<String> {
        to_json(&self.inner)
    }

    /// Pickle support: the JSON text, read back bit for bit.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (&'static str, String))> {
        reduce(py, "naive_bayes", to_json(&self.inner)?)
    }
}

/// A fitted uK-NN classifier (srl-learn [`Uknn`]; Zadrozny et al. 2009, Section 5): the
/// stored training rows. Built by `fit`; used by `srl.UKNN`.
#[pyclass(module = "srl._srl", name = "_UknnModel", frozen)]
pub struct PyUknnModel {
    inner: Uknn,
}

#[pymethods]
impl PyUknnModel {
    /// Stores `x` (n, d), `d >= 1`, with class indices `y` (n,) in `0..n_classes`.
    ///
    /// `k >= 1` neighbours; `metric`: "cosine", "dot" or "euclidean"; `weighting`:
    /// "none", "voting", "distance" or "both" (where the context weights enter).
    ///
    /// Raises ValueError for an unknown metric or weighting, `k = 0`, a non-finite value
    /// or labels out of range.
    #[staticmethod]
    #[pyo3(signature = (x, y, n_classes, k, metric, weighting))]
    fn fit(
        x: &Bound<'_, PyAny>,
        y: PyReadonlyArray1<'_, i64>,
        n_classes: usize,
        k: usize,
        metric: &str,
        weighting: &str,
    ) -> PyResult<Self> {
        let metric = match metric {
            "cosine" => Metric::Cosine,
            "dot" => Metric::Dot,
            "euclidean" => Metric::Euclidean,
            other => {
                return Err(value_error(format!(
                    "metric {other:?}: expected \"cosine\", \"dot\" or \"euclidean\""
                )));
            }
        };
        let weighting = match weighting {
            "none" => Weighting::None,
            "voting" => Weighting::Voting,
            "distance" => Weighting::Distance,
            "both" => Weighting::Both,
            other => {
                return Err(value_error(format!(
                    "weighting {other:?}: expected \"none\", \"voting\", \"distance\" or \
                     \"both\""
                )));
            }
        };
        let x = read_x(x)?;
        let labels = read_labels(&y, n_classes)?;
        let inner = UknnParams {
            k,
            metric,
            weighting,
        }
        .fit(dense_values(&x), x.num_features(), labels, n_classes)
        .map_err(value_error)?;
        Ok(Self { inner })
    }

    /// `(labels (n,) int64, scores (n, k) float64)` for the rows of `x`: the winning
    /// class of each row (lowest index on ties) and the normalised class scores
    /// ([`srl_learn::uknn::UknnPrediction::normalized_scores`]).
    ///
    /// `weights`: the context weight of each training row, (n_train,) finite `>= 0`
    /// (`w_i = P(c_t | x_i, y_i) / P(c_t)`); `None`: all 1 (plain K-NN). Releases the GIL.
    ///
    /// Raises ValueError for the wrong number of features or bad weights.
    #[pyo3(signature = (x, weights = None))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        weights: Option<PyReadonlyArray1<'py, f64>>,
    ) -> PyResult<Predictions<'py>> {
        let x = read_x(x)?;
        let m = &self.inner;
        let d = m.dim();
        check_width(&x, d)?;
        let weights = weights.map_or_else(|| vec![1.0; m.len()], |w| w.as_array().to_vec());
        if weights.len() != m.len() {
            return Err(value_error(format!(
                "context_weights: {} entries, but the model has {} training rows",
                weights.len(),
                m.len()
            )));
        }
        let (n, k) = (x.num_rows(), m.n_classes());
        let (labels, proba) = py.detach(|| -> PyResult<(Vec<i64>, Vec<f64>)> {
            let mut proba = Vec::with_capacity(n * k);
            let mut labels = Vec::with_capacity(n);
            let mut row = vec![0.0; d];
            for i in 0..n {
                dense_row(x.row(i), &mut row);
                let p = m.predict(&row, &weights).map_err(value_error)?;
                labels.push(i64::from(p.class));
                proba.extend(p.normalized_scores());
            }
            Ok((labels, proba))
        })?;
        Ok((
            labels.into_pyarray(py),
            proba.into_pyarray(py).reshape([n, k])?,
        ))
    }

    /// The `k` nearest training rows of each row of `x`, closest first, shape
    /// (n, min(k, n_train)) int64 (chosen as `predict` chooses them, with the same
    /// `weights`).
    ///
    /// Raises ValueError as `predict`.
    #[pyo3(signature = (x, weights = None))]
    fn kneighbors<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        weights: Option<PyReadonlyArray1<'py, f64>>,
    ) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let x = read_x(x)?;
        let m = &self.inner;
        let d = m.dim();
        check_width(&x, d)?;
        let weights = weights.map_or_else(|| vec![1.0; m.len()], |w| w.as_array().to_vec());
        let n = x.num_rows();
        let kk = m.params().k.min(m.len());
        let mut out = Vec::with_capacity(n * kk);
        let mut row = vec![0.0; d];
        for i in 0..n {
            dense_row(x.row(i), &mut row);
            let p = m.predict(&row, &weights).map_err(value_error)?;
            out.extend(
                p.neighbors
                    .iter()
                    .map(|&j| i64::try_from(j).unwrap_or(i64::MAX)),
            );
        }
        out.into_pyarray(py).reshape([n, kk])
    }

    /// Number of stored training rows.
    #[getter]
    fn n_train(&self) -> usize {
        self.inner.len()
    }

    /// The model as JSON text (srl-learn's serde form).
    fn to_json(&self) -> PyResult<String> {
        to_json(&self.inner)
    }

    /// Pickle support: the JSON text, read back bit for bit.
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (&'static str, String))> {
        reduce(py, "uknn", to_json(&self.inner)?)
    }
}

/// Rebuilds a model pickled by its `__reduce__`: `kind` is "logistic_regression",
/// "naive_bayes" or "uknn", `text` the model's JSON.
///
/// Raises ValueError for an unknown kind or text that is not such a model.
#[pyfunction]
pub fn _tabular_from_json<'py>(
    py: Python<'py>,
    kind: &str,
    text: &str,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match kind {
        "logistic_regression" => Bound::new(
            py,
            PyLogisticRegressionModel {
                inner: from_json(kind, text)?,
            },
        )?
        .into_any(),
        "naive_bayes" => Bound::new(
            py,
            PyNaiveBayesModel {
                inner: from_json(kind, text)?,
            },
        )?
        .into_any(),
        "uknn" => Bound::new(
            py,
            PyUknnModel {
                inner: from_json(kind, text)?,
            },
        )?
        .into_any(),
        other => return Err(value_error(format!("unknown model kind {other:?}"))),
    })
}

/// Adds the tabular models and `_tabular_from_json` to the module `srl._srl`.
///
/// # Errors
/// If Python cannot create a class or function object.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLogisticRegressionModel>()?;
    m.add_class::<PyNaiveBayesModel>()?;
    m.add_class::<PyUknnModel>()?;
    m.add_function(wrap_pyfunction!(_tabular_from_json, m)?)?;
    Ok(())
}
