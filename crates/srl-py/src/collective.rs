//! Collective classification: the native half of `srl.load_linqs`, `srl.ContentOnly`,
//! `srl.ICA`, `srl.CollectiveGibbs` and `srl.MarkovNetwork` (the Python classes in
//! `python/srl/_collective.py` hold the parameters and convert scipy / numpy input).

use std::path::PathBuf;

use numpy::{
    IntoPyArray as _, PyArray1, PyArray2, PyArrayMethods as _, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods as _,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_bayes::local::LocalNaiveBayes;
use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};
use srl_infer::{
    Aggregator, Bootstrap, CollectiveGibbs, CollectiveResult, ContentOnly, IterativeClassification,
    LocalClassifier, LoopyBp, MeanField, NodeOrdering,
};
use srl_learn::{LocalLogisticRegression, RelationalMarkovNetworkParams};

use crate::errors::{self, value_error};
use crate::infer::PyConvergence;

/// The arrays of `load_linqs`: CSR parts of X, labels, edges, label names, node ids.
type LinqsArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<f64>>,
    (usize, usize),
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray2<i64>>,
    Vec<String>,
    Vec<String>,
);

/// The result of `_run_collective`: labels `(n,)`, probabilities `(n, k)`, convergence.
type RunArrays<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray2<f64>>,
    PyConvergence,
);

fn to_i64(x: usize) -> i64 {
    i64::try_from(x).unwrap_or(i64::MAX)
}

/// Reads `dir/NAME.content[.gz]` and `dir/NAME.cites[.gz]` (srl-graph's LINQS loader) and
/// returns `(indptr, indices, data, (n, d), y, edges, label_names, node_ids)`; the Python
/// side builds the scipy CSR matrix.
#[pyfunction]
#[pyo3(signature = (dir, name, directed = false))]
fn _load_linqs<'py>(
    py: Python<'py>,
    dir: PathBuf,
    name: &str,
    directed: bool,
) -> PyResult<LinqsArrays<'py>> {
    let options = srl_graph::LinqsOptions {
        directedness: if directed {
            Directedness::Directed
        } else {
            Directedness::Undirected
        },
        ..srl_graph::LinqsOptions::default()
    };
    let name = name.to_owned();
    let g = py
        .detach(|| srl_graph::load_linqs(&dir, &name, &options))
        .map_err(errors::graph)?
        .0;
    let n = g.num_nodes();
    let d = g.num_features();
    let (indptr, indices, data) = match g.attributes() {
        Attributes::Sparse {
            offsets,
            indices,
            values,
            ..
        } => (
            offsets.iter().map(|&o| to_i64(o)).collect::<Vec<_>>(),
            indices.iter().map(|&j| i64::from(j)).collect::<Vec<_>>(),
            values.clone(),
        ),
        Attributes::Dense { values, .. } => {
            let (mut p, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
            for row in values.chunks(d.max(1)).take(n) {
                for (j, &x) in row.iter().enumerate() {
                    if x != 0.0 {
                        ix.push(to_i64(j));
                        v.push(x);
                    }
                }
                p.push(to_i64(ix.len()));
            }
            (p, ix, v)
        }
    };
    let y: Vec<i64> = g.labels().iter().map(|l| l.map_or(-1, i64::from)).collect();
    let edges: Vec<i64> = g
        .edge_list()
        .iter()
        .flat_map(|&(u, v)| [to_i64(u.index()), to_i64(v.index())])
        .collect();
    let m = g.num_edges();
    Ok((
        indptr.into_pyarray(py),
        indices.into_pyarray(py),
        data.into_pyarray(py),
        (n, d),
        y.into_pyarray(py),
        edges.into_pyarray(py).reshape([m, 2])?,
        g.label_set().names().to_vec(),
        g.node_names().to_vec(),
    ))
}

/// Options of one collective run, read from the Python estimator's parameters.
struct Options {
    method: String,
    local: String,
    aggregator: Aggregator,
    ordering: NodeOrdering,
    bootstrap: Bootstrap,
    max_iters: usize,
    burn_in: usize,
    samples: usize,
    inference: String,
    tol: f64,
    seed: u64,
}

fn opt<'py, T: for<'a> FromPyObject<'a, 'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    default: T,
) -> PyResult<T> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => v
            .extract()
            .map_err(|_| value_error(format!("parameter {key}: wrong type ({})", v.get_type()))),
        _ => Ok(default),
    }
}

impl Options {
    fn read(method: &str, d: &Bound<'_, PyDict>) -> PyResult<Self> {
        let aggregator = match opt(d, "aggregator", "count".to_owned())?.as_str() {
            "count" => Aggregator::Count,
            "proportion" => Aggregator::Proportion,
            "exists" => Aggregator::Exists,
            "mode" => Aggregator::Mode,
            other => {
                return Err(value_error(format!(
                    "aggregator {other:?}: expected \"count\", \"proportion\", \"exists\" or \"mode\""
                )));
            }
        };
        let ordering = match opt(d, "ordering", "random".to_owned())?.as_str() {
            "random" => NodeOrdering::Random,
            "fixed" => NodeOrdering::Fixed,
            other => {
                return Err(value_error(format!(
                    "ordering {other:?}: expected \"random\" or \"fixed\""
                )));
            }
        };
        let bootstrap = match opt(d, "bootstrap", "known_neighbours".to_owned())?.as_str() {
            "known_neighbours" => Bootstrap::KnownNeighbours,
            "content_only" => Bootstrap::ContentOnly,
            other => {
                return Err(value_error(format!(
                    "bootstrap {other:?}: expected \"known_neighbours\" or \"content_only\""
                )));
            }
        };
        let local = opt(d, "local", "lr".to_owned())?;
        if local != "lr" && local != "nb" {
            return Err(value_error(format!(
                "local {local:?}: expected \"lr\" (logistic regression) or \"nb\" (naive Bayes)"
            )));
        }
        let inference = opt(d, "inference", "lbp".to_owned())?;
        if inference != "lbp" && inference != "mean_field" {
            return Err(value_error(format!(
                "inference {inference:?}: expected \"lbp\" or \"mean_field\""
            )));
        }
        let seed: u64 = opt(d, "random_state", 0u64)?;
        Ok(Self {
            method: method.to_owned(),
            local,
            aggregator,
            ordering,
            bootstrap,
            max_iters: opt(d, "max_iters", 100usize)?,
            burn_in: opt(d, "burn_in", 200usize)?,
            samples: opt(d, "samples", 800usize)?,
            inference,
            tol: opt(d, "tol", 1e-3f64)?,
            seed,
        })
    }
}

/// Node probabilities `(n, k)` and labels of one run.
struct RunOut {
    labels: Vec<u32>,
    probs: Vec<f64>,
    convergence: srl_infer::Convergence,
}

fn from_result(r: CollectiveResult) -> RunOut {
    RunOut {
        labels: r.labels,
        probs: r.probabilities,
        convergence: r.convergence,
    }
}

fn run_local<C: LocalClassifier + Clone>(
    o: &Options,
    g: &RelationalGraph,
    proto: &C,
    rng: &mut ChaCha8Rng,
) -> Result<RunOut, srl_infer::InferError> {
    match o.method.as_str() {
        "content_only" => ContentOnly.run(g, proto, None).map(from_result),
        "ica" => {
            #[allow(clippy::needless_update)]
            let ica = IterativeClassification {
                max_iters: o.max_iters,
                aggregator: o.aggregator,
                ordering: o.ordering,
                bootstrap: o.bootstrap,
                ..IterativeClassification::default()
            };
            ica.run(g, proto, None, rng).map(from_result)
        }
        _ => {
            #[allow(clippy::needless_update)]
            let gs = CollectiveGibbs {
                burn_in: o.burn_in,
                samples: o.samples,
                aggregator: o.aggregator,
                ordering: o.ordering,
                bootstrap: o.bootstrap,
                ..CollectiveGibbs::default()
            };
            gs.run(g, proto, None, rng).map(from_result)
        }
    }
}

fn run_global(
    o: &Options,
    g: &RelationalGraph,
    rng: &mut ChaCha8Rng,
) -> Result<RunOut, srl_learn::LearnError> {
    let train: Vec<bool> = g.labels().iter().map(Option::is_some).collect();
    let k = g.num_labels();
    let finish = |m: srl_learn::GraphMarginals| {
        let mut probs = Vec::with_capacity(g.num_nodes() * k);
        let mut labels = Vec::with_capacity(g.num_nodes());
        for v in 0..g.num_nodes() {
            let p = m.node(NodeId::new(v));
            let best = (0..p.len()).fold(0, |b, i| if p[i] > p[b] { i } else { b });
            labels.push(g.labels()[v].unwrap_or(u32::try_from(best).unwrap_or(0)));
            probs.extend_from_slice(p);
        }
        RunOut {
            labels,
            probs,
            convergence: m.convergence(),
        }
    };
    if o.inference == "lbp" {
        #[allow(clippy::needless_update)]
        let lbp = LoopyBp {
            max_iters: o.max_iters,
            tol: o.tol,
            ..LoopyBp::default()
        };
        let model = RelationalMarkovNetworkParams::default().fit(g, &train, &lbp, rng)?;
        model.marginals(g, g.labels(), &lbp, rng).map(finish)
    } else {
        let mf = MeanField {
            max_iters: o.max_iters,
            tol: o.tol,
            ..MeanField::default()
        };
        let model = RelationalMarkovNetworkParams::default().fit(g, &train, &mf, rng)?;
        model.marginals(g, g.labels(), &mf, rng).map(finish)
    }
}

/// Runs one collective-classification method on the graph `(X, edges)` with the labels
/// `y` (`-1` = hidden) and returns `(labels (n,), probabilities (n, k), convergence)`.
/// `method`: "content_only", "ica", "gibbs" or "markov_network". Releases the GIL.
#[pyfunction]
#[pyo3(signature = (method, indptr, indices, data, num_features, y, n_classes, edges, directed, options))]
#[allow(clippy::too_many_arguments)]
fn _run_collective<'py>(
    py: Python<'py>,
    method: &str,
    indptr: PyReadonlyArray1<'py, i64>,
    indices: PyReadonlyArray1<'py, i64>,
    data: PyReadonlyArray1<'py, f64>,
    num_features: usize,
    y: PyReadonlyArray1<'py, i64>,
    n_classes: usize,
    edges: PyReadonlyArray2<'py, i64>,
    directed: bool,
    options: &Bound<'py, PyDict>,
) -> PyResult<RunArrays<'py>> {
    if !["content_only", "ica", "gibbs", "markov_network"].contains(&method) {
        return Err(value_error(format!("unknown method {method:?}")));
    }
    let o = Options::read(method, options)?;
    let y = y.as_slice()?;
    let n = y.len();
    let labels = y
        .iter()
        .enumerate()
        .map(|(i, &c)| match c {
            -1 => Ok(None),
            c => u32::try_from(c)
                .ok()
                .filter(|&c| (c as usize) < n_classes)
                .map(Some)
                .ok_or_else(|| {
                    value_error(format!(
                        "y[{i}] = {c}: labels are 0..{n_classes} (or -1 for a hidden node)"
                    ))
                }),
        })
        .collect::<PyResult<Vec<_>>>()?;
    let indptr = indptr.as_slice()?;
    if indptr.len() != n + 1 {
        return Err(value_error(format!(
            "X has {} rows, y has {n} entries",
            indptr.len().saturating_sub(1)
        )));
    }
    let offsets = indptr
        .iter()
        .map(|&o| usize::try_from(o).map_err(|_| value_error("X: negative row offset")))
        .collect::<PyResult<Vec<_>>>()?;
    let cols = indices
        .as_slice()?
        .iter()
        .map(|&j| u32::try_from(j).map_err(|_| value_error(format!("X: column index {j}"))))
        .collect::<PyResult<Vec<_>>>()?;
    let attributes = Attributes::Sparse {
        num_features,
        offsets,
        indices: cols,
        values: data.as_slice()?.to_vec(),
    };
    if edges.shape()[1] != 2 {
        return Err(value_error(format!(
            "edges: expected shape (m, 2), got {:?}",
            edges.shape()
        )));
    }
    let edge_list = edges
        .as_slice()?
        .chunks_exact(2)
        .enumerate()
        .map(|(e, p)| {
            let c = |x: i64| {
                usize::try_from(x).map(NodeId::new).map_err(|_| {
                    value_error(format!(
                        "edges[{e}] = ({}, {}): nodes are 0-based indices below {n}",
                        p[0], p[1]
                    ))
                })
            };
            Ok((c(p[0])?, c(p[1])?))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let out = py.detach(|| -> PyResult<RunOut> {
        let g = RelationalGraph::new(
            Vec::new(),
            attributes,
            labels,
            LabelSet::numbered(n_classes),
            edge_list,
            if directed {
                Directedness::Directed
            } else {
                Directedness::Undirected
            },
        )
        .map_err(errors::graph)?;
        let mut rng = ChaCha8Rng::seed_from_u64(o.seed);
        if o.method == "markov_network" {
            return run_global(&o, &g, &mut rng).map_err(value_error);
        }
        let r = if o.local == "lr" {
            run_local(&o, &g, &LocalLogisticRegression::default(), &mut rng)
        } else {
            run_local(&o, &g, &LocalNaiveBayes::default(), &mut rng)
        };
        r.map_err(errors::infer)
    })?;
    let k = n_classes;
    Ok((
        out.labels
            .into_iter()
            .map(i64::from)
            .collect::<Vec<_>>()
            .into_pyarray(py),
        out.probs.into_pyarray(py).reshape([n, k])?,
        PyConvergence::from(out.convergence),
    ))
}

/// Registers the native collective-classification functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_load_linqs, m)?)?;
    m.add_function(wrap_pyfunction!(_run_collective, m)?)?;
    Ok(())
}
