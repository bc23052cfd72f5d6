//! # srl-py: the Python bindings of srl
//!
//! The extension module `srl._srl` of the Python package `srl` (built by maturin from
//! `pyproject.toml`; the pure-Python `python/srl/__init__.py` re-exports it). Thin: every
//! algorithm is the Rust crates' own; this crate converts arguments and results (numpy
//! arrays in and out via rust-numpy, outputs handed over without a copy), maps errors to
//! Python exceptions ([`errors`]) and releases the GIL around long work.
//!
//! | Python | Rust |
//! |---|---|
//! | `srl.Database`, `srl.BoostedRDN`, `srl.SoftBoostedRDN`, `srl.BoostedMLN` | srl-boost `SoftRfgbParams::fit`, `SoftRfgb`, `MlnBoostParams::fit`, `MlnBoost` |
//! | `advice=` of `srl.BoostedRDN`, `srl.SoftBoostedRDN`; `srl.fit_targets` | srl-boost `Advice::read`, `fit_boosted` (`SoftRfgbParams::fit_with_advice`), `advice_weight`; `parse_targets`, `fit_targets` |
//! | `srl.BoostedRDNRegressor` | srl-boost `RegressionRfgbParams::fit`, `RegressionRfgb` |
//! | `srl.PairwiseMRF` (`loopy_bp`, `mean_field`, `gibbs`, `exact`) | srl-infer `PairwiseMrf`, `LoopyBp`, `MeanField`, `Gibbs`, `Exact` |
//! | `srl.FactorGraph` (`from_uai`, `from_network`, `marginals`, `map`, `log_partition`) | srl-infer `FactorGraph`, `run_factor_task`; srl-bayes `read_network_factor_graph` |
//! | `srl.BayesianNetwork` (`from_bif`, `trim`) | srl-bayes `read_bif`, `JointAgreement`, `BranchAndBound` |
//! | `srl.CostSensitiveClassifier` (decisions, calibration report) | srl-learn `min_expected_cost`, srl-eval `brier_score`, `reliability_curve` |
//! | `srl.LogisticRegression`, `srl.NaiveBayes`, `srl.UKNN` (tabular, scikit-learn's `check_estimator`) | srl-learn `LogisticRegressionParams`, `UknnParams`, srl-bayes `NaiveBayesParams` |
//! | `srl.load_linqs`, `srl.ICA`, `srl.CollectiveGibbs`, `srl.ContentOnly` | srl-graph `load_linqs`, srl-infer `IterativeClassification`, `CollectiveGibbs`, srl-learn `LogisticRegression` |
//!
//! Model files are the versioned JSON files of `srl boost learn` ([`model_file`]).
//! The tests are the pytest suite in `crates/srl-py/tests` (run by `.ci/run`).

pub mod bayes;
pub mod boost;
pub mod collective;
pub mod cost;
pub mod errors;
pub mod factor;
pub mod infer;
pub mod model_file;
pub mod regression;
pub mod tabular;

use pyo3::prelude::*;

/// The extension module `srl._srl`.
#[pymodule]
#[pyo3(name = "_srl")]
fn srl_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("ParseError", py.get_type::<errors::ParseError>())?;
    m.add("NotFittedError", py.get_type::<boost::NotFittedError>())?;
    m.add_class::<boost::PyDatabase>()?;
    m.add_function(wrap_pyfunction!(boost::_database_from_state, m)?)?;
    m.add_class::<boost::BoostedRdn>()?;
    m.add_class::<boost::SoftBoostedRdn>()?;
    m.add_class::<boost::BoostedMln>()?;
    m.add_function(wrap_pyfunction!(boost::_parse_targets, m)?)?;
    m.add_class::<infer::PyPairwiseMrf>()?;
    m.add_function(wrap_pyfunction!(infer::_pairwise_mrf_from_state, m)?)?;
    m.add_class::<factor::PyFactorGraph>()?;
    m.add_function(wrap_pyfunction!(factor::_factor_graph_from_state, m)?)?;
    m.add_class::<infer::PyMarginals>()?;
    m.add_class::<infer::PyConvergence>()?;
    m.add_class::<bayes::PyBayesianNetwork>()?;
    m.add_function(wrap_pyfunction!(bayes::_bayesian_network_from_state, m)?)?;
    m.add_class::<bayes::PyTrimming>()?;
    collective::register(m)?;
    cost::register(m)?;
    tabular::register(m)?;
    regression::register(m)?;
    Ok(())
}
