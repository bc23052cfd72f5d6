//! `srl.FactorGraph`: srl-infer's general factor graphs (factors of any arity, Bayesian
//! networks' CPTs) and their inference job, [`srl_infer::run_factor_task`] (the pipeline
//! `srl mrf` runs on UAI files of any arity, BIF and NET networks).

use std::path::PathBuf;

use numpy::{IntoPyArray as _, PyArray1, PyArrayMethods as _};
use pyo3::prelude::*;
use srl_infer::{Algorithm, FactorGraph, FactorOutcome, ScheduleChoice, Task, TaskOptions};

use crate::errors::{self, value_error};
use crate::infer::{PyConvergence, PyMarginals};

/// A discrete factor graph (srl-infer's `FactorGraph`): P(x) ∝ exp(Σ_f θ_f(x_scope(f))),
/// factors of any number of variables, restricted to the evidence.
///
/// Read one with `FactorGraph.from_uai(path, evidence=None)` (UAI `MARKOV` or `BAYES` of
/// any arity, optionally a UAI evidence file) or `FactorGraph.from_network(path)` (a BIF
/// `.bif` / `.bif.gz` or Hugin `.net` Bayesian network, one factor per CPT).
///
/// The methods run srl-infer's `run_factor_task`, the job `srl mrf` runs on such files:
/// `marginals` (MAR: "lbp", "mean-field", "gibbs" or "exact"), `map` (MAP: "lbp" or
/// "exact"), `log_partition` (PR, exact elimination). They release the GIL.
#[pyclass(module = "srl", name = "FactorGraph", frozen)]
pub struct PyFactorGraph {
    g: FactorGraph,
}

/// The options of one call (the rest the library's defaults), checked by the library
/// (`ScheduleChoice::from_name`, `TaskOptions::validate_factor`).
fn options(
    schedule: Option<&str>,
    damping: f64,
    max_iterations: Option<usize>,
    tolerance: Option<f64>,
) -> PyResult<TaskOptions> {
    let schedule = schedule
        .map(ScheduleChoice::from_name)
        .transpose()
        .map_err(errors::infer)?;
    Ok(TaskOptions {
        schedule,
        damping,
        max_iterations,
        tolerance,
        ..TaskOptions::default()
    })
}

impl PyFactorGraph {
    /// Runs `task` by `algorithm` through the library's pipeline, without the GIL.
    fn run(
        &self,
        py: Python<'_>,
        task: Task,
        algorithm: &str,
        opts: &TaskOptions,
        seed: u64,
    ) -> PyResult<FactorOutcome> {
        let algorithm = Algorithm::from_name(algorithm).map_err(errors::infer)?;
        py.detach(|| srl_infer::run_factor_task(&self.g, task, algorithm, opts, seed))
            .map_err(errors::infer)
    }
}

#[pymethods]
impl PyFactorGraph {
    /// Reads a UAI `MARKOV` or `BAYES` file of any arity (a `0` entry is a zero
    /// potential; a BAYES row must sum to 1) and optionally a UAI evidence file.
    ///
    /// Raises OSError for an unreadable file, srl.ParseError with file and line for a
    /// malformed one, ValueError for evidence out of range.
    #[staticmethod]
    #[pyo3(signature = (path, evidence = None))]
    fn from_uai(py: Python<'_>, path: PathBuf, evidence: Option<PathBuf>) -> PyResult<Self> {
        py.detach(|| {
            let (g, _, _) = FactorGraph::read_uai(&path)?;
            match evidence {
                Some(e) => {
                    let ev = srl_infer::read_uai_evidence(&e, g.num_vars())?;
                    g.with_evidence(ev)
                }
                None => Ok(g),
            }
        })
        .map(|g| Self { g })
        .map_err(errors::infer)
    }

    /// Reads a Bayesian network (BIF `.bif` / `.bif.gz`, Hugin `.net`) with srl-bayes's
    /// readers as a factor graph: one factor per CPT over the child and its parents.
    ///
    /// Raises OSError for an unreadable file, srl.ParseError with file and line for a
    /// malformed one or an unknown extension.
    #[staticmethod]
    fn from_network(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        py.detach(|| srl_bayes::factor_graph::read_network_factor_graph(&path))
            .map(|(_, g)| Self { g })
            .map_err(errors::bayes)
    }

    /// Number of variables n.
    #[getter]
    fn num_vars(&self) -> usize {
        self.g.num_vars()
    }

    /// Number of factors.
    #[getter]
    fn num_factors(&self) -> usize {
        self.g.factors().len()
    }

    /// States per variable: int64 array of shape `(n,)`.
    #[getter]
    fn num_states<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        self.g
            .num_states()
            .iter()
            .map(|&k| i64::try_from(k).unwrap_or(i64::MAX))
            .collect::<Vec<_>>()
            .into_pyarray(py)
    }

    /// The model as UAI `MARKOV` text (potentials `exp(θ)` with round-trip precision;
    /// the evidence is not part of a model file).
    fn to_uai(&self) -> PyResult<String> {
        let mut out = Vec::new();
        self.g
            .write_uai_to(&mut out)
            .map_err(|e| value_error(format!("writing UAI text: {e}")))?;
        String::from_utf8(out).map_err(|e| value_error(format!("writing UAI text: {e}")))
    }

    /// Every variable's marginal (UAI MAR) by `algorithm`: "lbp" (loopy BP, sum-product;
    /// `schedule` "flooding" (default, the same bits for any thread count),
    /// "sequential" or "residual"), "mean-field" (naive mean field, sequential),
    /// "gibbs" (blocked over a colouring; `samples` after `burn_in` sweeps, `seed`) or
    /// "exact" (variable elimination with a weighted min-fill order). `damping` in
    /// [0, 1); `tolerance` on the largest log-message change (nats); `max_iterations`
    /// at least 1 (None: the algorithm's default).
    ///
    /// Returns an srl.Marginals: `nodes` of shape `(n, k)` (`k` = the largest number of
    /// states; entries past a variable's own states are 0), `map_state` the per-variable
    /// argmax, `convergence`.
    ///
    /// Raises ValueError for an unknown algorithm or schedule, options the algorithm does
    /// not take, a model and evidence that leave a variable no state, or an elimination
    /// larger than its limit.
    #[pyo3(signature = (algorithm = "lbp", schedule = None, damping = 0.0, max_iterations = None, tolerance = None, samples = 800, burn_in = 200, seed = 0))]
    #[allow(clippy::too_many_arguments)]
    fn marginals(
        &self,
        py: Python<'_>,
        algorithm: &str,
        schedule: Option<&str>,
        damping: f64,
        max_iterations: Option<usize>,
        tolerance: Option<f64>,
        samples: usize,
        burn_in: usize,
        seed: u64,
    ) -> PyResult<PyMarginals> {
        let opts = TaskOptions {
            samples,
            burn_in,
            ..options(schedule, damping, max_iterations, tolerance)?
        };
        let FactorOutcome::Mar(m) = self.run(py, Task::Mar, algorithm, &opts, seed)? else {
            return Err(value_error("the MAR task returned no marginals"));
        };
        let n = m.num_nodes();
        let k = self.g.num_states().iter().copied().max().unwrap_or(0);
        let mut nodes = vec![0.0; n * k];
        let mut argmax = Vec::with_capacity(n);
        for v in 0..n {
            let row = m.node(v);
            nodes[v * k..v * k + row.len()].copy_from_slice(row);
            let mut best = 0;
            for (s, &p) in row.iter().enumerate() {
                if p > row[best] {
                    best = s;
                }
            }
            argmax.push(best as i64);
        }
        Ok(PyMarginals::from_parts(
            nodes.into_pyarray(py).reshape([n, k])?.unbind(),
            argmax.into_pyarray(py).unbind(),
            m.convergence(),
            None,
        ))
    }

    /// The most probable assignment (UAI MAP) by `algorithm`: "exact" (max-product
    /// elimination with traceback, default) or "lbp" (max-product loopy BP, each
    /// variable's best max-marginal; options as in `marginals`).
    ///
    /// Returns `(states, log_score, convergence)`: int64 array `(n,)`, the assignment's
    /// unnormalised log-probability Σ_f θ_f (nats), an srl.Convergence.
    ///
    /// Raises ValueError as `marginals`, and when the assignment found has probability
    /// zero.
    #[pyo3(signature = (algorithm = "exact", schedule = None, damping = 0.0, max_iterations = None, tolerance = None))]
    fn map(
        &self,
        py: Python<'_>,
        algorithm: &str,
        schedule: Option<&str>,
        damping: f64,
        max_iterations: Option<usize>,
        tolerance: Option<f64>,
    ) -> PyResult<(Py<PyArray1<i64>>, f64, PyConvergence)> {
        let opts = options(schedule, damping, max_iterations, tolerance)?;
        let FactorOutcome::Map(x) = self.run(py, Task::Map, algorithm, &opts, 0)? else {
            return Err(value_error("the MAP task returned no assignment"));
        };
        let states: Vec<i64> = x.states.iter().map(|&s| s as i64).collect();
        Ok((
            states.into_pyarray(py).unbind(),
            x.log_score,
            PyConvergence::from(x.convergence),
        ))
    }

    /// `ln Z` (UAI PR; for a Bayesian network with evidence, ln P(evidence)) by exact
    /// variable elimination, in nats; `-inf` when the evidence is impossible.
    ///
    /// Raises ValueError when the elimination is larger than its limit.
    fn log_partition(&self, py: Python<'_>) -> PyResult<f64> {
        let opts = TaskOptions::default();
        match self.run(py, Task::Pr, "exact", &opts, 0)? {
            FactorOutcome::Pr(lz) => Ok(lz),
            _ => Err(value_error("the PR task returned no partition function")),
        }
    }

    /// Pickling and `copy.deepcopy`: the cardinalities, every factor's scope and
    /// log-table (each value as its 64-bit pattern, so `-inf` and every value come back
    /// exactly) and the evidence, as JSON text rebuilt and validated by
    /// `srl._srl._factor_graph_from_state`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let factors: Vec<serde_json::Value> = (0..self.g.factors().len())
            .map(|f| {
                let bits: Vec<u64> = self.g.factor_table(f).iter().map(|x| x.to_bits()).collect();
                serde_json::json!([self.g.factors()[f].vars, bits])
            })
            .collect();
        let state = serde_json::json!({
            "num_states": self.g.num_states(),
            "factors": factors,
            "evidence": self.g.evidence(),
        });
        let f = py.import("srl._srl")?.getattr("_factor_graph_from_state")?;
        Ok((f, (state.to_string(),)))
    }

    fn __repr__(&self) -> String {
        format!(
            "srl.FactorGraph({} variables, {} factors)",
            self.g.num_vars(),
            self.g.factors().len()
        )
    }
}

/// Rebuilds a `FactorGraph` pickled by `FactorGraph.__reduce__` (JSON state text),
/// validating it as the readers do.
///
/// Raises ValueError for text that is not such a state or describes an invalid model.
#[pyfunction]
pub fn _factor_graph_from_state(py: Python<'_>, state: &str) -> PyResult<PyFactorGraph> {
    let bad =
        |e: &dyn std::fmt::Display| value_error(format!("not a pickled srl.FactorGraph: {e}"));
    let v: serde_json::Value = serde_json::from_str(state).map_err(|e| bad(&e))?;
    let field = |key: &str| -> PyResult<serde_json::Value> {
        v.get(key)
            .cloned()
            .ok_or_else(|| bad(&format!("no `{key}`")))
    };
    let num_states: Vec<usize> =
        serde_json::from_value(field("num_states")?).map_err(|e| bad(&e))?;
    let factors: Vec<(Vec<usize>, Vec<u64>)> =
        serde_json::from_value(field("factors")?).map_err(|e| bad(&e))?;
    let evidence: Vec<Option<u32>> =
        serde_json::from_value(field("evidence")?).map_err(|e| bad(&e))?;
    let g = py
        .detach(|| {
            let mut g = FactorGraph::new(num_states)?;
            for (scope, bits) in &factors {
                let table: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
                g.add_factor(scope, &table)?;
            }
            g.with_evidence(evidence)
        })
        .map_err(|e| bad(&e))?;
    Ok(PyFactorGraph { g })
}
