//! `srl.PairwiseMRF`, `srl.Marginals`, `srl.Convergence`: srl-infer's pairwise Markov
//! random fields and their inference routines.

use std::path::PathBuf;

use numpy::{IntoPyArray as _, PyArray1, PyArray2, PyArrayMethods as _, PyReadonlyArray1};
use numpy::{PyReadonlyArray2, PyReadonlyArray3, PyUntypedArrayMethods as _};
use pyo3::prelude::*;
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_infer::{
    Beliefs, BpMode, Convergence, Exact, Gibbs, LoopyBp, Marginals, MeanField, MrfParts, PairTable,
    PairwiseMrf, Schedule, Sweep,
};

use crate::errors::{self, value_error};

/// `numpy.ascontiguousarray(obj, dtype)`: accepts lists and arrays of any numeric dtype.
pub(crate) fn contiguous<'py>(obj: &Bound<'py, PyAny>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    let np = obj.py().import("numpy")?;
    np.call_method1("ascontiguousarray", (obj, dtype))
}

/// Checks an array's dimensions, naming the argument.
pub(crate) fn check_ndim(obj: &Bound<'_, PyAny>, name: &str, want: &[usize]) -> PyResult<usize> {
    let nd: usize = obj.getattr("ndim")?.extract()?;
    if !want.contains(&nd) {
        let shape: Vec<usize> = obj.getattr("shape")?.extract()?;
        return Err(value_error(format!(
            "{name}: expected a {}-dimensional array, got shape {shape:?}",
            want.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" or ")
        )));
    }
    Ok(nd)
}

/// The convergence record of an inference run.
#[pyclass(module = "srl", name = "Convergence", frozen)]
#[derive(Clone, Copy, Debug)]
pub struct PyConvergence {
    inner: Convergence,
}

impl From<Convergence> for PyConvergence {
    fn from(inner: Convergence) -> Self {
        Self { inner }
    }
}

#[pymethods]
impl PyConvergence {
    /// A convergence record (what unpickling calls): `converged`, `iterations` (>= 0),
    /// `max_residual`.
    #[new]
    fn new(converged: bool, iterations: usize, max_residual: f64) -> Self {
        Self {
            inner: Convergence {
                converged,
                iterations,
                max_residual,
            },
        }
    }

    /// Pickle support: the class and its three fields.
    fn __getnewargs__(&self) -> (bool, usize, f64) {
        (
            self.inner.converged,
            self.inner.iterations,
            self.inner.max_residual,
        )
    }

    /// Equal fields, equal records.
    fn __eq__(&self, other: &Self) -> bool {
        self.inner.converged == other.inner.converged
            && self.inner.iterations == other.inner.iterations
            && self.inner.max_residual.to_bits() == other.inner.max_residual.to_bits()
    }

    /// Whether the run met its tolerance within `max_iters` (exact inference: always
    /// True; Gibbs: the split-half diagnostic is below `split_tol`).
    #[getter]
    fn converged(&self) -> bool {
        self.inner.converged
    }

    /// Iterations (sweeps) run.
    #[getter]
    fn iterations(&self) -> usize {
        self.inner.iterations
    }

    /// The last change measured: largest log-message change (loopy BP, nats), largest
    /// belief change (mean field, probability), largest split-half difference (Gibbs);
    /// 0 for exact inference.
    #[getter]
    fn max_residual(&self) -> f64 {
        self.inner.max_residual
    }

    fn __repr__(&self) -> String {
        format!(
            "srl.Convergence(converged={}, iterations={}, max_residual={:e})",
            if self.inner.converged {
                "True"
            } else {
                "False"
            },
            self.inner.iterations,
            self.inner.max_residual
        )
    }
}

/// Marginals returned by an inference routine.
///
/// * `nodes`: float64 array `(n, k)` of P(x_v = s) (`k` = the largest number of states;
///   entries past a variable's own `k_v` are 0; each row sums to 1).
/// * `convergence`: an `srl.Convergence`.
/// * `log_partition`: log Z in nats (exact inference), else None.
/// * `map_state`: int64 array `(n,)` of the best state visited (Gibbs), else the
///   per-variable argmax of `nodes`.
#[pyclass(module = "srl", name = "Marginals", frozen)]
pub struct PyMarginals {
    nodes: Py<PyArray2<f64>>,
    map_state: Py<PyArray1<i64>>,
    convergence: Convergence,
    log_partition: Option<f64>,
}

#[pymethods]
impl PyMarginals {
    /// `Marginals(nodes, map_state, convergence, log_partition=None)`: a record as the
    /// inference routines return it (this constructor exists for pickling).
    ///
    /// * `nodes`: float array `(n, k)`; `map_state`: int array `(n,)`;
    ///   `convergence`: an `srl.Convergence`; `log_partition`: float or None.
    ///
    /// Raises ValueError when `map_state` does not have one entry per row of `nodes`.
    #[new]
    #[pyo3(signature = (nodes, map_state, convergence, log_partition = None))]
    fn new(
        nodes: &Bound<'_, PyAny>,
        map_state: &Bound<'_, PyAny>,
        convergence: PyRef<'_, PyConvergence>,
        log_partition: Option<f64>,
    ) -> PyResult<Self> {
        let nodes = contiguous(nodes, "float64")?;
        check_ndim(&nodes, "nodes", &[2])?;
        let nodes: Bound<'_, PyArray2<f64>> = nodes.extract()?;
        let map_state = contiguous(map_state, "int64")?;
        check_ndim(&map_state, "map_state", &[1])?;
        let map_state: Bound<'_, PyArray1<i64>> = map_state.extract()?;
        if map_state.len() != nodes.shape()[0] {
            return Err(value_error(format!(
                "map_state: {} entries for {} rows of nodes",
                map_state.len(),
                nodes.shape()[0]
            )));
        }
        Ok(Self {
            nodes: nodes.unbind(),
            map_state: map_state.unbind(),
            convergence: convergence.inner,
            log_partition,
        })
    }

    /// Pickling and `copy.deepcopy`: the constructor's arguments (the arrays pickle
    /// exactly).
    #[allow(clippy::type_complexity)]
    fn __getnewargs__(
        &self,
        py: Python<'_>,
    ) -> (
        Py<PyArray2<f64>>,
        Py<PyArray1<i64>>,
        PyConvergence,
        Option<f64>,
    ) {
        (
            self.nodes.clone_ref(py),
            self.map_state.clone_ref(py),
            PyConvergence {
                inner: self.convergence,
            },
            self.log_partition,
        )
    }

    /// P(x_v = s): float64 array of shape `(n, k)`.
    #[getter]
    fn nodes(&self, py: Python<'_>) -> Py<PyArray2<f64>> {
        self.nodes.clone_ref(py)
    }

    /// The convergence record.
    #[getter]
    fn convergence(&self) -> PyConvergence {
        PyConvergence {
            inner: self.convergence,
        }
    }

    /// log Z (nats) when the routine computes it (exact inference), else None.
    #[getter]
    fn log_partition(&self) -> Option<f64> {
        self.log_partition
    }

    /// A state per variable: int64 array of shape `(n,)`.
    #[getter]
    fn map_state(&self, py: Python<'_>) -> Py<PyArray1<i64>> {
        self.map_state.clone_ref(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let shape = self.nodes.bind(py).shape().to_vec();
        format!(
            "srl.Marginals(nodes shape {shape:?}, converged={}, iterations={})",
            if self.convergence.converged {
                "True"
            } else {
                "False"
            },
            self.convergence.iterations
        )
    }
}

impl PyMarginals {
    /// A record from its parts (srl.FactorGraph's marginals).
    pub(crate) fn from_parts(
        nodes: Py<PyArray2<f64>>,
        map_state: Py<PyArray1<i64>>,
        convergence: Convergence,
        log_partition: Option<f64>,
    ) -> Self {
        Self {
            nodes,
            map_state,
            convergence,
            log_partition,
        }
    }
}

/// `Marginals` to Python: `(n, kmax)` rows, handed over without a copy when every
/// variable has the same number of states.
fn marginals_to_py(
    py: Python<'_>,
    mrf: &PairwiseMrf,
    m: &Marginals,
    map_state: Option<Vec<u32>>,
) -> PyResult<PyMarginals> {
    let n = m.num_nodes();
    let k = mrf.max_states();
    let flat = m.node_all();
    let nodes = if flat.len() == n * k {
        flat.to_vec().into_pyarray(py).reshape([n, k])?
    } else {
        let mut v = vec![0.0; n * k];
        for i in 0..n {
            let row = m.node(i);
            v[i * k..i * k + row.len()].copy_from_slice(row);
        }
        v.into_pyarray(py).reshape([n, k])?
    };
    let states = map_state.unwrap_or_else(|| m.decode());
    Ok(PyMarginals {
        nodes: nodes.unbind(),
        map_state: states
            .into_iter()
            .map(i64::from)
            .collect::<Vec<_>>()
            .into_pyarray(py)
            .unbind(),
        convergence: m.convergence(),
        log_partition: m.log_partition(),
    })
}

/// A pairwise Markov random field over discrete variables (srl-infer's `PairwiseMrf`):
/// P(x) ∝ exp(Σ_v θ_v(x_v) + Σ_(u,v) θ_uv(x_u, x_v)), restricted to the evidence.
///
/// `PairwiseMRF(unary, edges, pairwise, evidence=None)`:
///
/// * `unary`: float array `(n, k)` of log-potentials θ_v (nats; `-inf` is a zero
///   potential).
/// * `edges`: int array `(m, 2)` of variable pairs (0-based, no self-loops).
/// * `pairwise`: float array `(k, k)` (one table shared by every edge) or `(m, k, k)`
///   (one per edge) of log-potentials θ_uv(x_u, x_v), rows indexed by the edge's first
///   variable.
/// * `evidence`: int array `(n,)` of observed states, `-1` for unobserved (default: none).
///
/// Or `PairwiseMRF.from_uai(path, evidence=None)` for a UAI `MARKOV` file with pairwise
/// (and unary) factors.
///
/// Raises ValueError for wrong shapes, NaN / +inf / out-of-range log-potentials, bad
/// edges or evidence.
#[pyclass(module = "srl", name = "PairwiseMRF", frozen)]
pub struct PyPairwiseMrf {
    mrf: PairwiseMrf,
}

fn evidence_vec(evidence: Option<&Bound<'_, PyAny>>, n: usize) -> PyResult<Vec<Option<u32>>> {
    let Some(ev) = evidence else {
        return Ok(Vec::new());
    };
    let arr = contiguous(ev, "int64")?;
    check_ndim(&arr, "evidence", &[1])?;
    let arr: PyReadonlyArray1<'_, i64> = arr.extract()?;
    let ev = arr.as_slice()?;
    if ev.len() != n {
        return Err(value_error(format!(
            "evidence: expected {n} entries (one per variable), found {}",
            ev.len()
        )));
    }
    ev.iter()
        .enumerate()
        .map(|(i, &x)| match x {
            -1 => Ok(None),
            x => u32::try_from(x).map(Some).map_err(|_| {
                value_error(format!(
                    "evidence[{i}] = {x}: must be a state (>= 0) or -1 for unobserved"
                ))
            }),
        })
        .collect()
}

#[pymethods]
impl PyPairwiseMrf {
    #[new]
    #[pyo3(signature = (unary, edges, pairwise, evidence = None))]
    fn new(
        py: Python<'_>,
        unary: &Bound<'_, PyAny>,
        edges: &Bound<'_, PyAny>,
        pairwise: &Bound<'_, PyAny>,
        evidence: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let unary = contiguous(unary, "float64")?;
        check_ndim(&unary, "unary", &[2])?;
        let unary: PyReadonlyArray2<'_, f64> = unary.extract()?;
        let (n, k) = (unary.shape()[0], unary.shape()[1]);
        let edges = contiguous(edges, "int64")?;
        let edges_nd = check_ndim(&edges, "edges", &[1, 2])?;
        let edge_list: Vec<(u32, u32)> = if edges_nd == 1 {
            // Only an empty list may be one-dimensional.
            let len: usize = edges.len()?;
            if len != 0 {
                return Err(value_error(format!(
                    "edges: expected shape (m, 2), got a vector of {len}"
                )));
            }
            Vec::new()
        } else {
            let e: PyReadonlyArray2<'_, i64> = edges.extract()?;
            if e.shape()[1] != 2 {
                return Err(value_error(format!(
                    "edges: expected shape (m, 2), got {:?}",
                    e.shape()
                )));
            }
            let s = e.as_slice()?;
            s.chunks_exact(2)
                .enumerate()
                .map(|(i, p)| {
                    let c = |x: i64| {
                        u32::try_from(x).map_err(|_| {
                            value_error(format!(
                                "edges[{i}] = ({}, {}): variables are 0-based indices below {n}",
                                p[0], p[1]
                            ))
                        })
                    };
                    Ok((c(p[0])?, c(p[1])?))
                })
                .collect::<PyResult<_>>()?
        };
        let m = edge_list.len();
        let pairwise = contiguous(pairwise, "float64")?;
        let nd = check_ndim(&pairwise, "pairwise", &[2, 3])?;
        let (tables, edge_tables) = if nd == 2 {
            let t: PyReadonlyArray2<'_, f64> = pairwise.extract()?;
            if t.shape() != [k, k] {
                return Err(value_error(format!(
                    "pairwise: expected shape ({k}, {k}) for k = {k} states, got {:?}",
                    t.shape()
                )));
            }
            (
                vec![PairTable::new(k, k, t.as_slice()?.to_vec())],
                vec![0u32; m],
            )
        } else {
            let t: PyReadonlyArray3<'_, f64> = pairwise.extract()?;
            if t.shape() != [m, k, k] {
                return Err(value_error(format!(
                    "pairwise: expected shape ({m}, {k}, {k}) (one table per edge), got {:?}",
                    t.shape()
                )));
            }
            let s = t.as_slice()?;
            let tables = if k == 0 {
                Vec::new()
            } else {
                s.chunks_exact(k * k)
                    .map(|c| PairTable::new(k, k, c.to_vec()))
                    .collect()
            };
            let ids = (0..m)
                .map(|e| u32::try_from(e).map_err(|_| value_error("too many edges")))
                .collect::<PyResult<Vec<u32>>>()?;
            (tables, ids)
        };
        let parts = MrfParts {
            num_states: vec![k; n],
            unary: unary.as_slice()?.to_vec(),
            edges: edge_list,
            edge_tables,
            tables,
            evidence: evidence_vec(evidence, n)?,
        };
        let mrf = py
            .detach(|| PairwiseMrf::new(parts))
            .map_err(errors::infer)?;
        Ok(Self { mrf })
    }

    /// Reads a UAI `MARKOV` file (pairwise and unary factors; a `0` entry is a zero
    /// potential) and optionally a UAI evidence file.
    ///
    /// Raises OSError for an unreadable file, srl.ParseError with file and line for a
    /// malformed one.
    #[staticmethod]
    #[pyo3(signature = (path, evidence = None))]
    fn from_uai(py: Python<'_>, path: PathBuf, evidence: Option<PathBuf>) -> PyResult<Self> {
        py.detach(|| {
            let mrf = PairwiseMrf::read_uai(&path)?;
            match evidence {
                Some(e) => {
                    let ev = srl_infer::read_uai_evidence(&e, mrf.num_nodes())?;
                    mrf.with_evidence(ev)
                }
                None => Ok(mrf),
            }
        })
        .map(|mrf| Self { mrf })
        .map_err(errors::infer)
    }

    /// Number of variables n.
    #[getter]
    fn num_nodes(&self) -> usize {
        self.mrf.num_nodes()
    }

    /// Number of edges m.
    #[getter]
    fn num_edges(&self) -> usize {
        self.mrf.num_edges()
    }

    /// States per variable: int64 array of shape `(n,)`.
    #[getter]
    fn num_states<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        (0..self.mrf.num_nodes())
            .map(|v| i64::try_from(self.mrf.num_states(v)).unwrap_or(i64::MAX))
            .collect::<Vec<_>>()
            .into_pyarray(py)
    }

    /// Pickling and `copy.deepcopy`: the model's description (srl-infer's `MrfParts`) as
    /// JSON text with every log-potential written as its 64-bit pattern, so `-inf` (a
    /// zero potential) and every value come back exactly; rebuilt and validated by
    /// `srl._srl._pairwise_mrf_from_state`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let p = self.mrf.to_parts();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
        let tables: Vec<serde_json::Value> = p
            .tables
            .iter()
            .map(|t| serde_json::json!([t.rows, t.cols, bits(&t.log_values)]))
            .collect();
        let state = serde_json::json!({
            "num_states": p.num_states,
            "unary_bits": bits(&p.unary),
            "edges": p.edges,
            "edge_tables": p.edge_tables,
            "tables": tables,
            "evidence": p.evidence,
        });
        let f = py.import("srl._srl")?.getattr("_pairwise_mrf_from_state")?;
        Ok((f, (state.to_string(),)))
    }

    /// The model as UAI `MARKOV` text.
    fn to_uai(&self) -> String {
        self.mrf.to_uai_string()
    }

    /// Loopy belief propagation (sum-product; `max_product=True` gives max-marginals).
    ///
    /// `schedule`: "flooding" (parallel, thread-count independent), "sequential" or
    /// "residual". `tol` is on the largest log-message change (nats); `damping` in [0, 1).
    /// Releases the GIL. Raises ValueError when the evidence and zero potentials leave a
    /// variable with no possible state.
    #[pyo3(signature = (max_iters = 100, tol = 1e-6, damping = 0.0, schedule = "flooding", max_product = false))]
    fn loopy_bp(
        &self,
        py: Python<'_>,
        max_iters: usize,
        tol: f64,
        damping: f64,
        schedule: &str,
        max_product: bool,
    ) -> PyResult<PyMarginals> {
        let schedule = match schedule {
            "flooding" => Schedule::Flooding,
            "sequential" => Schedule::Sequential,
            "residual" => Schedule::Residual,
            other => {
                return Err(value_error(format!(
                    "schedule {other:?}: expected \"flooding\", \"sequential\" or \"residual\""
                )));
            }
        };
        check_tol_damping(tol, damping)?;
        // `..default()` keeps fields srl-infer may add (a message-kernel choice is in
        // progress on main); when every field is listed the update is a no-op.
        #[allow(clippy::needless_update)]
        let bp = LoopyBp {
            max_iters,
            tol,
            damping,
            schedule,
            mode: if max_product {
                BpMode::MaxProduct
            } else {
                BpMode::SumProduct
            },
            beliefs: Beliefs::NodesOnly,
            ..LoopyBp::default()
        };
        let m = py.detach(|| bp.try_run(&self.mrf)).map_err(errors::infer)?;
        marginals_to_py(py, &self.mrf, &m, None)
    }

    /// Naive mean field. `sweep`: "sequential" (Gauss-Seidel; the bound never
    /// decreases) or "parallel" (Jacobi). `tol` is on the largest belief change
    /// (probability). Releases the GIL.
    #[pyo3(signature = (max_iters = 200, tol = 1e-6, damping = 0.0, sweep = "sequential"))]
    fn mean_field(
        &self,
        py: Python<'_>,
        max_iters: usize,
        tol: f64,
        damping: f64,
        sweep: &str,
    ) -> PyResult<PyMarginals> {
        let sweep = match sweep {
            "sequential" => Sweep::Sequential,
            "parallel" => Sweep::Parallel,
            other => {
                return Err(value_error(format!(
                    "sweep {other:?}: expected \"sequential\" or \"parallel\""
                )));
            }
        };
        check_tol_damping(tol, damping)?;
        let mf = MeanField {
            max_iters,
            tol,
            damping,
            sweep,
            beliefs: Beliefs::NodesOnly,
        };
        let m = py.detach(|| mf.run(&self.mrf));
        marginals_to_py(py, &self.mrf, &m, None)
    }

    /// Gibbs sampling (chromatic sweeps, seeded by `seed`: the same seed gives the same
    /// marginals for any thread count). `nodes` are state frequencies over `samples`
    /// draws taken every `thinning` sweeps after `burn_in`; `map_state` is the best state
    /// visited. Releases the GIL.
    ///
    /// Raises ValueError for `samples = 0` or `thinning = 0`, or when no draw had
    /// positive probability (hard constraints).
    #[pyo3(signature = (samples = 800, burn_in = 200, thinning = 1, seed = 0, split_tol = 0.05))]
    fn gibbs(
        &self,
        py: Python<'_>,
        samples: usize,
        burn_in: usize,
        thinning: usize,
        seed: u64,
        split_tol: f64,
    ) -> PyResult<PyMarginals> {
        let g = Gibbs {
            burn_in,
            samples,
            thinning,
            beliefs: Beliefs::NodesOnly,
            split_tol,
        };
        let run = py
            .detach(|| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                g.run(&self.mrf, &mut rng)
            })
            .map_err(errors::infer)?;
        marginals_to_py(py, &self.mrf, &run.marginals, Some(run.best.states))
    }

    /// Exact marginals and log Z: belief propagation on a forest, enumeration of at
    /// most 2^`enumeration_limit_log2` joint states otherwise. Releases the GIL.
    ///
    /// Raises ValueError when the model is neither a forest nor small enough, or the
    /// evidence has probability zero.
    #[pyo3(signature = (enumeration_limit_log2 = 20))]
    fn exact(&self, py: Python<'_>, enumeration_limit_log2: u32) -> PyResult<PyMarginals> {
        let ex = Exact {
            enumeration_limit_log2,
        };
        let m = py
            .detach(|| ex.marginals(&self.mrf))
            .map_err(errors::infer)?;
        marginals_to_py(py, &self.mrf, &m, None)
    }

    fn __repr__(&self) -> String {
        format!(
            "srl.PairwiseMRF({} variables, {} edges, up to {} states)",
            self.mrf.num_nodes(),
            self.mrf.num_edges(),
            self.mrf.max_states()
        )
    }
}

fn check_tol_damping(tol: f64, damping: f64) -> PyResult<()> {
    if !(tol.is_finite() && tol >= 0.0) {
        return Err(value_error(format!("tol = {tol}: must be >= 0")));
    }
    if !(0.0..1.0).contains(&damping) {
        return Err(value_error(format!(
            "damping = {damping}: must be in [0, 1)"
        )));
    }
    Ok(())
}

/// Rebuilds a `PairwiseMRF` pickled by `PairwiseMRF.__reduce__` (JSON state text),
/// validating it as the constructor does.
///
/// Raises ValueError for text that is not such a state or describes an invalid model.
#[pyfunction]
pub fn _pairwise_mrf_from_state(py: Python<'_>, state: &str) -> PyResult<PyPairwiseMrf> {
    let bad =
        |e: &dyn std::fmt::Display| value_error(format!("not a pickled srl.PairwiseMRF: {e}"));
    let v: serde_json::Value = serde_json::from_str(state).map_err(|e| bad(&e))?;
    let field = |key: &str| -> PyResult<serde_json::Value> {
        v.get(key)
            .cloned()
            .ok_or_else(|| bad(&format!("no `{key}`")))
    };
    let floats = |b: Vec<u64>| b.into_iter().map(f64::from_bits).collect::<Vec<f64>>();
    let unary: Vec<u64> = serde_json::from_value(field("unary_bits")?).map_err(|e| bad(&e))?;
    let tables: Vec<(usize, usize, Vec<u64>)> =
        serde_json::from_value(field("tables")?).map_err(|e| bad(&e))?;
    let parts = MrfParts {
        num_states: serde_json::from_value(field("num_states")?).map_err(|e| bad(&e))?,
        unary: floats(unary),
        edges: serde_json::from_value(field("edges")?).map_err(|e| bad(&e))?,
        edge_tables: serde_json::from_value(field("edge_tables")?).map_err(|e| bad(&e))?,
        tables: tables
            .into_iter()
            .map(|(r, c, b)| PairTable::new(r, c, floats(b)))
            .collect(),
        evidence: serde_json::from_value(field("evidence")?).map_err(|e| bad(&e))?,
    };
    let mrf = py.detach(|| PairwiseMrf::new(parts)).map_err(|e| bad(&e))?;
    Ok(PyPairwiseMrf { mrf })
}
