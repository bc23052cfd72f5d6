//! Cost-sensitive decisions and calibration checks for `srl.CostSensitiveClassifier`
//! (python/srl/_cost.py): srl-learn's `min_expected_cost` and srl-eval's `brier_score` /
//! `reliability_curve` over numpy arrays.

use numpy::PyUntypedArrayMethods as _;
use numpy::{IntoPyArray as _, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3};
use pyo3::prelude::*;
use srl_learn::{ExampleCosts, min_expected_cost, realised_costs};

use crate::errors::value_error;
use crate::infer::{check_ndim, contiguous};

/// `labels, expected_costs = _min_expected_cost(proba, costs)`: for each row `i` of
/// `proba` (float, shape `(n, k)`, entries finite and `>= 0`), the class
/// `argmin_a Σ_t C_i[a, t] · proba[i, t]` (ties to the lower index) and that expected
/// cost. `costs`: float `(k, k)` shared, or `(n, k, k)` one matrix per row; `C[a, t]` is
/// the cost of predicting `a` when the truth is `t`, any finite value.
///
/// Returns int64 `(n,)` class indices and float64 `(n,)` expected costs. Releases the
/// GIL. Raises ValueError for shapes that disagree or non-finite / negative values.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn _min_expected_cost<'py>(
    py: Python<'py>,
    proba: &Bound<'py, PyAny>,
    costs: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>)> {
    let proba = contiguous(proba, "float64")?;
    check_ndim(&proba, "proba", &[2])?;
    let proba: PyReadonlyArray2<'_, f64> = proba.extract()?;
    let (n, k) = (proba.shape()[0], proba.shape()[1]);
    let costs = contiguous(costs, "float64")?;
    let nd = check_ndim(&costs, "costs", &[2, 3])?;
    let shape: Vec<usize> = costs.getattr("shape")?.extract()?;
    let want: &[usize] = if nd == 2 { &[k, k] } else { &[n, k, k] };
    if shape != want {
        return Err(value_error(format!(
            "costs: expected shape {want:?} for {n} rows of {k} class probabilities, got {shape:?}"
        )));
    }
    let p = proba.as_slice()?;
    let decisions = if nd == 2 {
        let c: PyReadonlyArray2<'_, f64> = costs.extract()?;
        let c = c.as_slice()?;
        py.detach(|| min_expected_cost(p, k, ExampleCosts::Shared(c)))
    } else {
        let c: PyReadonlyArray3<'_, f64> = costs.extract()?;
        let c = c.as_slice()?;
        py.detach(|| min_expected_cost(p, k, ExampleCosts::PerExample(c)))
    }
    .map_err(value_error)?;
    let labels: Vec<i64> = decisions.labels.into_iter().map(i64::from).collect();
    Ok((
        labels.into_pyarray(py),
        decisions.expected_costs.into_pyarray(py),
    ))
}

/// `_realised_costs(labels, truth, costs)`: srl-learn's `realised_costs`, the cost
/// `C_i[labels[i], truth[i]]` of each decision (int `(n,)` class indices both; `costs`
/// float `(k, k)` or `(n, k, k)` as `_min_expected_cost`'s), float64 `(n,)`.
///
/// Raises ValueError for shapes that disagree, classes out of range or non-finite costs.
#[pyfunction]
pub fn _realised_costs<'py>(
    py: Python<'py>,
    labels: Vec<u32>,
    truth: Vec<u32>,
    costs: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let costs = contiguous(costs, "float64")?;
    let nd = check_ndim(&costs, "costs", &[2, 3])?;
    let shape: Vec<usize> = costs.getattr("shape")?.extract()?;
    let k = shape[shape.len() - 1];
    if shape[shape.len() - 2] != k {
        return Err(value_error(format!(
            "costs: expected square (k, k) matrices, got shape {shape:?}"
        )));
    }
    let out = if nd == 2 {
        let c: PyReadonlyArray2<'_, f64> = costs.extract()?;
        realised_costs(&labels, &truth, k, ExampleCosts::Shared(c.as_slice()?))
    } else {
        let c: PyReadonlyArray3<'_, f64> = costs.extract()?;
        realised_costs(&labels, &truth, k, ExampleCosts::PerExample(c.as_slice()?))
    }
    .map_err(value_error)?;
    Ok(out.into_pyarray(py))
}

/// `brier, ece, lower, upper, count, mean_predicted, observed = _calibration_report(proba,
/// y, n_bins, class_index)`: srl-eval's multiclass Brier score and reliability curve of
/// `proba` (float `(n, k)` in [0, 1]) against `y` (int `(n,)` class indices in `0..k`)
/// over `n_bins` equal-width bins; `class_index = -1` for the top-label curve, else the
/// one-vs-rest curve of that class. Arrays are float64 `(n_bins,)` (count: int64; NaN
/// means and frequencies for empty bins).
///
/// Raises ValueError for bad shapes, probabilities outside [0, 1], labels out of range,
/// `n_bins < 1` or a class index out of range.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn _calibration_report<'py>(
    py: Python<'py>,
    proba: &Bound<'py, PyAny>,
    y: &Bound<'py, PyAny>,
    n_bins: usize,
    class_index: i64,
) -> PyResult<(
    f64,
    f64,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
)> {
    let proba = contiguous(proba, "float64")?;
    check_ndim(&proba, "proba", &[2])?;
    let proba: PyReadonlyArray2<'_, f64> = proba.extract()?;
    let k = proba.shape()[1];
    let y = contiguous(y, "int64")?;
    check_ndim(&y, "y", &[1])?;
    let y: PyReadonlyArray1<'_, i64> = y.extract()?;
    let truth: Vec<u32> = y
        .as_slice()?
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            u32::try_from(t).map_err(|_| value_error(format!("y[{i}] = {t}: not a class index")))
        })
        .collect::<PyResult<_>>()?;
    let class = match class_index {
        -1 => None,
        c => Some(
            usize::try_from(c)
                .map_err(|_| value_error(format!("class_index = {c}: -1 or a class index")))?,
        ),
    };
    let p = proba.as_slice()?;
    let brier = srl_eval::metrics::brier_score(p, k, &truth).map_err(value_error)?;
    let curve =
        srl_eval::metrics::reliability_curve(p, k, &truth, n_bins, class).map_err(value_error)?;
    let col = |f: fn(&srl_eval::metrics::ReliabilityBin) -> f64| -> Vec<f64> {
        curve.bins.iter().map(f).collect()
    };
    let count: Vec<i64> = curve
        .bins
        .iter()
        .map(|b| i64::try_from(b.count).unwrap_or(i64::MAX))
        .collect();
    Ok((
        brier,
        curve.expected_calibration_error,
        col(|b| b.lower).into_pyarray(py),
        col(|b| b.upper).into_pyarray(py),
        count.into_pyarray(py),
        col(|b| b.mean_predicted).into_pyarray(py),
        col(|b| b.observed_frequency).into_pyarray(py),
    ))
}

/// Adds the functions to `srl._srl`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_min_expected_cost, m)?)?;
    m.add_function(wrap_pyfunction!(_calibration_report, m)?)?;
    m.add_function(wrap_pyfunction!(_realised_costs, m)?)?;
    Ok(())
}
