//! `srl.BayesianNetwork`, `srl.Trimming`: srl-bayes networks and the branch-and-bound
//! trimming of a threshold classifier (Choi & Van den Broeck 2018).

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use srl_bayes::BayesianNetwork;

use crate::errors::{self, value_error};

/// The answer of `BayesianNetwork.trim`.
///
/// * `subset`: the kept feature names (a subset of `features`, in their order).
/// * `threshold`: the trimmed classifier's threshold T' in [0, 1].
/// * `eca`: its expected classification agreement with the full classifier, in [0, 1].
/// * `cost`: the summed cost of the kept features (≤ budget).
/// * `evaluations`: criterion plus bound evaluations of the search (the paper's "# Eval").
#[pyclass(module = "srl", name = "Trimming", frozen, get_all)]
#[derive(Clone, Debug)]
pub struct PyTrimming {
    /// The kept feature names, a subset of `features` in their order.
    subset: Vec<String>,
    /// The trimmed classifier's threshold T' in [0, 1].
    threshold: f64,
    /// Its expected classification agreement with the full classifier, in [0, 1].
    eca: f64,
    /// The summed cost of the kept features (at most the budget).
    cost: f64,
    /// Criterion plus bound evaluations of the search (the paper's "# Eval").
    evaluations: u64,
}

#[pymethods]
impl PyTrimming {
    /// `Trimming(subset, threshold, eca, cost, evaluations)`: the fields as
    /// `BayesianNetwork.trim` returns them (this constructor exists for pickling).
    #[new]
    fn new(subset: Vec<String>, threshold: f64, eca: f64, cost: f64, evaluations: u64) -> Self {
        Self {
            subset,
            threshold,
            eca,
            cost,
            evaluations,
        }
    }

    /// Pickling and `copy.deepcopy`: the constructor's arguments.
    fn __getnewargs__(&self) -> (Vec<String>, f64, f64, f64, u64) {
        (
            self.subset.clone(),
            self.threshold,
            self.eca,
            self.cost,
            self.evaluations,
        )
    }

    fn __eq__(&self, other: &Self) -> bool {
        self.subset == other.subset
            && self.threshold.to_bits() == other.threshold.to_bits()
            && self.eca.to_bits() == other.eca.to_bits()
            && self.cost.to_bits() == other.cost.to_bits()
            && self.evaluations == other.evaluations
    }

    fn __repr__(&self) -> String {
        format!(
            "srl.Trimming(subset={:?}, threshold={}, eca={}, cost={}, evaluations={})",
            self.subset, self.threshold, self.eca, self.cost, self.evaluations
        )
    }
}

/// A discrete Bayesian network (srl-bayes' `BayesianNetwork`).
///
/// Build it with `BayesianNetwork.from_bif(path)` (BIF, also `.bif.gz`) or
/// `BayesianNetwork.from_file(path)` (BIF, Hugin `.net`, UAI `BAYES` by extension).
#[pyclass(module = "srl", name = "BayesianNetwork", frozen)]
pub struct PyBayesianNetwork {
    net: BayesianNetwork,
    source: String,
}

fn read(path: &Path) -> Result<BayesianNetwork, srl_bayes::BayesError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".net") {
        srl_bayes::io::read_hugin_net(path)
    } else if name.ends_with(".uai") {
        srl_bayes::io::read_uai(path)?.to_bayesian_network()
    } else {
        srl_bayes::io::read_bif(path)
    }
}

impl PyBayesianNetwork {
    fn var(&self, name: &str) -> PyResult<usize> {
        self.net
            .variables()
            .iter()
            .position(|v| v.name == name)
            .ok_or_else(|| value_error(format!("{}: no variable named {name:?}", self.source)))
    }
}

#[pymethods]
impl PyBayesianNetwork {
    /// Pickling and `copy.deepcopy`: the variables, CPTs and source name as JSON text
    /// (floats written to round-trip exactly), rebuilt and validated by
    /// `srl._srl._bayesian_network_from_state`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let cpts: Vec<&srl_bayes::Cpt> = (0..self.net.len()).map(|v| self.net.cpt(v)).collect();
        let state = serde_json::json!({
            "variables": self.net.variables(),
            "cpts": cpts,
            "source": self.source,
        });
        let f = py
            .import("srl._srl")?
            .getattr("_bayesian_network_from_state")?;
        Ok((f, (state.to_string(),)))
    }

    /// Reads a BIF file (`.bif` or gzip-compressed `.bif.gz`).
    ///
    /// Raises OSError for an unreadable file, srl.ParseError with file and line for a
    /// malformed one, ValueError for an invalid network (cycle, bad table).
    #[staticmethod]
    fn from_bif(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let net = py
            .detach(|| srl_bayes::io::read_bif(&path))
            .map_err(errors::bayes)?;
        Ok(Self {
            net,
            source: path.display().to_string(),
        })
    }

    /// Reads a network by extension: `.net` (Hugin), `.uai` (UAI `BAYES`; variables
    /// `0..n`, states `s0...`), anything else as BIF. Errors as `from_bif`.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let net = py.detach(|| read(&path)).map_err(errors::bayes)?;
        Ok(Self {
            net,
            source: path.display().to_string(),
        })
    }

    /// Variable names in file order.
    #[getter]
    fn variables(&self) -> Vec<String> {
        self.net
            .variables()
            .iter()
            .map(|v| v.name.clone())
            .collect()
    }

    /// The state names of variable `name`. Raises ValueError for an unknown name.
    fn states(&self, name: &str) -> PyResult<Vec<String>> {
        Ok(self.net.variable(self.var(name)?).states.clone())
    }

    /// The parents of variable `name`.
    fn parents(&self, name: &str) -> PyResult<Vec<String>> {
        let id = self.var(name)?;
        Ok(self
            .net
            .parents(id)
            .iter()
            .map(|&p| self.net.variable(p).name.clone())
            .collect())
    }

    /// The leaves of the network (variables without children).
    #[getter]
    fn leaves(&self) -> Vec<String> {
        self.net
            .leaves()
            .into_iter()
            .map(|v| self.net.variable(v).name.clone())
            .collect()
    }

    /// Trims the threshold classifier "predict `state` of `class_var` iff
    /// Pr(state | features) ≥ threshold" to the feature subset of cost at most `budget`
    /// that maximises the expected classification agreement (ECA) with it, by branch and
    /// bound (Choi & Van den Broeck 2018, Sections 4-5), and returns an `srl.Trimming`.
    ///
    /// * `class_var`: name of the class variable (binary decisions; any cardinality).
    /// * `state`: its positive state, by name or index.
    /// * `features`: list of variable names, or "leaves" (every leaf but the class).
    /// * `threshold`: in [0, 1].
    /// * `budget`: ≥ 0, on the summed `costs` (default cost 1 per feature).
    /// * `costs`: one positive cost per feature, in `features` order.
    /// * `max_table`: the largest table (entries) compiling the network may build and the
    ///   most feature instantiations (default: a quarter of the machine's memory at 64
    ///   bytes per entry, `srl trim --max-table`); checked on the compilation's plan
    ///   before any table is built.
    ///
    /// Releases the GIL. Raises ValueError for unknown names or states, a threshold
    /// outside [0, 1], bad costs or budget, `max_table` 0, or a compilation that needs
    /// more than `max_table` entries (the message gives the estimate).
    #[pyo3(signature = (class_var, state, features, threshold, budget, costs = None, max_table = None))]
    #[allow(clippy::too_many_arguments)]
    fn trim(
        &self,
        py: Python<'_>,
        class_var: &str,
        state: &Bound<'_, PyAny>,
        features: &Bound<'_, PyAny>,
        threshold: f64,
        budget: f64,
        costs: Option<Vec<f64>>,
        max_table: Option<usize>,
    ) -> PyResult<PyTrimming> {
        let class = self.var(class_var)?;
        let states = &self.net.variable(class).states;
        let positive_state = if let Ok(i) = state.extract::<usize>() {
            if i >= states.len() {
                return Err(value_error(format!(
                    "state {i}: {class_var} has {} states",
                    states.len()
                )));
            }
            i
        } else {
            let s: String = state.extract()?;
            states.iter().position(|x| *x == s).ok_or_else(|| {
                value_error(format!(
                    "{class_var} has no state {s:?} (states: {})",
                    states.join(", ")
                ))
            })?
        };
        let feats: Vec<usize> = if let Ok(s) = features.extract::<String>() {
            if s != "leaves" {
                return Err(value_error(format!(
                    "features {s:?}: expected a list of variable names or \"leaves\""
                )));
            }
            self.net
                .leaves()
                .into_iter()
                .filter(|&v| v != class)
                .collect()
        } else {
            let names: Vec<String> = features.extract()?;
            names.iter().map(|n| self.var(n)).collect::<PyResult<_>>()?
        };
        if feats.is_empty() {
            return Err(value_error("no features to trim"));
        }
        // the checks with Python's argument names; the defaults (unit costs, a quarter
        // of memory) are the library builder's
        if let Some(c) = &costs
            && c.len() != feats.len()
        {
            return Err(value_error(format!(
                "costs: {} values for {} features",
                c.len(),
                feats.len()
            )));
        }
        if max_table == Some(0) {
            return Err(value_error("max_table: must be at least 1"));
        }
        // the library's by-name trimming does the wiring (compile, branch and bound)
        let net = &self.net;
        let state_name = states[positive_state].clone();
        let names: Vec<String> = feats
            .iter()
            .map(|&v| net.variable(v).name.clone())
            .collect();
        let t = py
            .detach(|| {
                let mut q = net
                    .trim(class_var, &state_name)
                    .features(names)
                    .threshold(threshold)
                    .budget(budget);
                if let Some(c) = costs {
                    q = q.costs(c);
                }
                if let Some(m) = max_table {
                    q = q.max_table(m);
                }
                q.run()
            })
            .map_err(errors::bayes)?;
        Ok(PyTrimming {
            subset: t.features,
            cost: t.cost,
            threshold: t.trimming.threshold,
            eca: t.trimming.eca,
            evaluations: t.trimming.evaluations(),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "srl.BayesianNetwork({} variables; {})",
            self.net.len(),
            self.source
        )
    }
}

/// Rebuilds a `BayesianNetwork` pickled by `BayesianNetwork.__reduce__` (JSON state
/// text), validating it as a file's network is validated.
///
/// Raises ValueError for text that is not such a state or describes an invalid network.
#[pyfunction]
pub fn _bayesian_network_from_state(state: &str) -> PyResult<PyBayesianNetwork> {
    let bad =
        |e: &dyn std::fmt::Display| value_error(format!("not a pickled srl.BayesianNetwork: {e}"));
    let v: serde_json::Value = serde_json::from_str(state).map_err(|e| bad(&e))?;
    let variables: Vec<srl_bayes::Variable> =
        serde_json::from_value(v["variables"].clone()).map_err(|e| bad(&e))?;
    let cpts: Vec<srl_bayes::Cpt> =
        serde_json::from_value(v["cpts"].clone()).map_err(|e| bad(&e))?;
    let source = v["source"].as_str().unwrap_or("pickled network").to_owned();
    let net = BayesianNetwork::new(variables, cpts).map_err(|e| bad(&e))?;
    Ok(PyBayesianNetwork { net, source })
}
