//! Collective classification: the native half of `srl.load_linqs`, `srl.ContentOnly`,
//! `srl.ICA`, `srl.CollectiveGibbs`, `srl.MarkovNetwork` and the graph learners of issue
//! 32, `srl.LabelPropagation`, `srl.MLP`, `srl.GCN`, `srl.APPNP` and
//! `srl.CorrectAndSmooth` (the Python classes in `python/srl/_collective.py` hold the
//! parameters and convert scipy / numpy input). The methods run through srl-learn's
//! collective-classification pipeline ([`srl_learn::collective::transduce`], or
//! [`srl_learn::collective::transduce_with_validation`] with validation nodes), the one
//! `srl classify` and the experiment use; this module only reads the parameters into
//! [`CollectiveSettings`] (whose defaults `_collective_defaults` hands to Python).

use std::path::PathBuf;

use numpy::{
    IntoPyArray as _, PyArray1, PyArray2, PyArrayMethods as _, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods as _,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};
use srl_infer::{Aggregator, Bootstrap, NodeOrdering};
use srl_learn::collective::{
    CollectiveMethod, CollectiveSettings, CsBase, LocalModel, LrPrior, Protocol, Transduction,
    transduce, transduce_with_validation,
};
use srl_learn::neural::{NeuralParams, Precision};

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

fn opt<'py, T: for<'a> FromPyObject<'a, 'py>>(
    d: &Bound<'py, PyDict>,
    key: &str,
    default: T,
) -> PyResult<T> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => v.extract().map_err(|_| {
            let shown = v.repr().map_or_else(|_| "?".to_owned(), |r| r.to_string());
            value_error(format!(
                "parameter {key} = {shown}: expected {} (got {})",
                python_kind::<T>(),
                v.get_type()
            ))
        }),
        _ => Ok(default),
    }
}

/// What a parameter of Rust type `T` must be, in Python's words (for error messages).
fn python_kind<T>() -> &'static str {
    match std::any::type_name::<T>() {
        "usize" | "u64" => "an int >= 0",
        "f64" => "a float",
        "bool" => "a bool",
        "core::option::Option<f64>" => "a float or None",
        _ => "a str",
    }
}

/// Reads the neural hyperparameters `hidden`, `dropout`, `learning_rate`,
/// `weight_decay`, `max_epochs`, `patience` and `precision` ("f32" | "f64") into `p`
/// (a missing key or `None` keeps `p`'s value).
fn read_neural(d: &Bound<'_, PyDict>, p: &mut NeuralParams) -> PyResult<()> {
    p.hidden = opt(d, "hidden", p.hidden)?;
    p.dropout = opt(d, "dropout", p.dropout)?;
    p.learning_rate = opt(d, "learning_rate", p.learning_rate)?;
    p.weight_decay = opt(d, "weight_decay", p.weight_decay)?;
    p.max_epochs = opt(d, "max_epochs", p.max_epochs)?;
    p.patience = opt(d, "patience", p.patience)?;
    let current = float_type_name(p.precision).to_owned();
    p.precision = match opt(d, "precision", current)?.as_str() {
        "f32" => Precision::F32,
        "f64" => Precision::F64,
        other => {
            return Err(value_error(format!(
                "precision {other:?}: expected \"f32\" or \"f64\""
            )));
        }
    };
    Ok(())
}

fn float_type_name(p: Precision) -> &'static str {
    match p {
        Precision::F32 => "f32",
        Precision::F64 => "f64",
    }
}

/// The pipeline's method, settings and seed from the Python estimator's parameters
/// (`None` or a missing key = the pipeline's default).
fn read_options(
    method: &str,
    d: &Bound<'_, PyDict>,
) -> PyResult<(CollectiveMethod, CollectiveSettings, u64)> {
    let mut settings = CollectiveSettings::default();
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
    let local: LocalModel = opt(d, "local", "lr".to_owned())?
        .parse()
        .map_err(value_error)?;
    if let Some(c) = opt::<Option<f64>>(d, "lr_lambda", None)? {
        settings.lr_prior = LrPrior::PerSample(c);
    }
    settings.ica.aggregator = aggregator;
    settings.ica.ordering = ordering;
    settings.ica.bootstrap = bootstrap;
    settings.gs.aggregator = aggregator;
    settings.gs.ordering = ordering;
    settings.gs.bootstrap = bootstrap;
    let seed: u64 = opt(d, "random_state", 0u64)?;
    let m = match method {
        "content_only" => CollectiveMethod::Co(local),
        "ica" => {
            settings.ica.max_iters = opt(d, "max_iters", settings.ica.max_iters)?;
            CollectiveMethod::Ica(local)
        }
        "gibbs" => {
            settings.gs.burn_in = opt(d, "burn_in", settings.gs.burn_in)?;
            settings.gs.samples = opt(d, "samples", settings.gs.samples)?;
            CollectiveMethod::Gs(local)
        }
        "lp" => {
            settings.lp.alpha = opt(d, "alpha", settings.lp.alpha)?;
            settings.lp.tol = opt(d, "tol", settings.lp.tol)?;
            settings.lp.max_iters = opt(d, "max_iters", settings.lp.max_iters)?;
            settings.lp.clamp = opt(d, "clamp", settings.lp.clamp)?;
            CollectiveMethod::Lp
        }
        "mlp" => {
            read_neural(d, &mut settings.mlp)?;
            settings.validation_fraction =
                opt(d, "validation_fraction", settings.validation_fraction)?;
            CollectiveMethod::Mlp
        }
        "gcn" => {
            read_neural(d, &mut settings.gcn)?;
            settings.validation_fraction =
                opt(d, "validation_fraction", settings.validation_fraction)?;
            CollectiveMethod::Gcn
        }
        "appnp" => {
            read_neural(d, &mut settings.appnp)?;
            settings.appnp_steps = opt(d, "steps", settings.appnp_steps)?;
            settings.appnp_alpha = opt(d, "alpha", settings.appnp_alpha)?;
            settings.validation_fraction =
                opt(d, "validation_fraction", settings.validation_fraction)?;
            CollectiveMethod::Appnp
        }
        "cs" => {
            settings.cs.correct_alpha = opt(d, "correct_alpha", settings.cs.correct_alpha)?;
            settings.cs.smooth_alpha = opt(d, "smooth_alpha", settings.cs.smooth_alpha)?;
            settings.cs.tol = opt(d, "tol", settings.cs.tol)?;
            settings.cs.max_iters = opt(d, "max_iters", settings.cs.max_iters)?;
            match opt(d, "base", "mlp".to_owned())?.as_str() {
                "mlp" => {
                    read_neural(d, &mut settings.mlp)?;
                    settings.validation_fraction =
                        opt(d, "validation_fraction", settings.validation_fraction)?;
                    CollectiveMethod::Cs(CsBase::Mlp)
                }
                "lr" => CollectiveMethod::Cs(CsBase::Lr),
                other => {
                    return Err(value_error(format!(
                        "base {other:?}: expected \"mlp\" (CS-MLP) or \"lr\" (CS-LR)"
                    )));
                }
            }
        }
        _ => {
            let inference = opt(d, "inference", "lbp".to_owned())?;
            match inference.as_str() {
                "lbp" => {
                    settings.lbp.max_iters = opt(d, "max_iters", settings.lbp.max_iters)?;
                    settings.lbp.tol = opt(d, "tol", settings.lbp.tol)?;
                    CollectiveMethod::Lbp
                }
                "mf" | "mean_field" => {
                    settings.mf.max_iters = opt(d, "max_iters", settings.mf.max_iters)?;
                    settings.mf.tol = opt(d, "tol", settings.mf.tol)?;
                    CollectiveMethod::Mf
                }
                other => {
                    return Err(value_error(format!(
                        "inference {other:?}: expected \"lbp\" or \"mf\" (\"mean_field\" is \
                         accepted too)"
                    )));
                }
            }
        }
    };
    settings.validate().map_err(value_error)?;
    Ok((m, settings, seed))
}

/// The method names `_run_collective` accepts.
const METHODS: [&str; 9] = [
    "content_only",
    "ica",
    "gibbs",
    "markov_network",
    "lp",
    "mlp",
    "gcn",
    "appnp",
    "cs",
];

/// Runs one collective-classification method on the graph `(X, edges)` with the labels
/// `y` (`-1` = hidden) and returns `(labels (n,), probabilities (n, k), convergence)`.
/// `method`: "content_only", "ica", "gibbs", "markov_network", "lp", "mlp", "gcn",
/// "appnp" or "cs" (`options["base"]` "mlp" | "lr"). `validation`: `None`, or the
/// indices of labelled nodes that the neural methods stop early on (hidden from training;
/// srl-learn's `transduce_with_validation`). Releases the GIL.
///
/// Raises ValueError for an unknown method or option, a parameter of the wrong type or
/// out of its range (the pipeline's [`CollectiveSettings::validate`], naming the
/// parameter), a non-finite attribute value, mismatched shapes, labels or edges out of
/// range, validation nodes refused by the library (a method that does not stop early, an
/// empty set, a node out of range, repeated or unlabelled), or a method's own failure.
#[pyfunction]
#[pyo3(signature = (method, indptr, indices, data, num_features, y, n_classes, edges, directed, options, validation = None))]
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
    validation: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<RunArrays<'py>> {
    if !METHODS.contains(&method) {
        return Err(value_error(format!("unknown method {method:?}")));
    }
    let (method, settings, seed) = read_options(method, options)?;
    let y = y.as_slice()?;
    let n = y.len();
    let validation = validation
        .map(|v| -> PyResult<Vec<usize>> {
            v.as_slice()?
                .iter()
                .map(|&i| {
                    usize::try_from(i).map_err(|_| {
                        value_error(format!("validation node {i}: node indices are >= 0"))
                    })
                })
                .collect()
        })
        .transpose()?;
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
    let values = data.as_slice()?.to_vec();
    if let Some(at) = values.iter().position(|x| !x.is_finite()) {
        let row = offsets.partition_point(|&o| o <= at).saturating_sub(1);
        return Err(value_error(format!(
            "X[{row}, {}] = {}: attribute values must be finite",
            cols.get(at).copied().unwrap_or(0),
            values[at]
        )));
    }
    let attributes = Attributes::Sparse {
        num_features,
        offsets,
        indices: cols,
        values,
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
                usize::try_from(x)
                    .ok()
                    .filter(|&x| x < n)
                    .map(NodeId::new)
                    .ok_or_else(|| {
                        value_error(format!(
                            "edges[{e}] = ({}, {}): nodes are 0-based indices below {n}",
                            p[0], p[1]
                        ))
                    })
            };
            Ok((c(p[0])?, c(p[1])?))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let out = py.detach(|| -> PyResult<Transduction> {
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
        match &validation {
            None => transduce(&settings, method, &g, seed),
            Some(v) => transduce_with_validation(&settings, method, &g, v, seed),
        }
        .map_err(value_error)
    })?;
    let k = n_classes;
    Ok((
        out.labels
            .into_iter()
            .map(i64::from)
            .collect::<Vec<_>>()
            .into_pyarray(py),
        out.probabilities.into_pyarray(py).reshape([n, k])?,
        PyConvergence::from(out.convergence),
    ))
}

/// The test sets of the collective-classification pipeline's protocols on a graph of `n`
/// nodes with labels `y` (`-1` = unknown) and `edges` (`(m, 2)`, 0-based): `sampling`
/// "random" (RS, `k` folds) or "snowball" (SS, `k` class-stratified snowball samples),
/// drawn from protocol stream 0 of `seed`, as `srl classify --folds k --sampling ...
/// --seed seed` draws them. Returns one int64 array of node indices per split.
///
/// Raises ValueError for an unknown sampling, `k` outside `2..=n`, labels or edges out of
/// range.
#[pyfunction]
#[pyo3(signature = (sampling, k, seed, y, n_classes, edges))]
fn _node_test_sets<'py>(
    py: Python<'py>,
    sampling: &str,
    k: usize,
    seed: u64,
    y: PyReadonlyArray1<'py, i64>,
    n_classes: usize,
    edges: PyReadonlyArray2<'py, i64>,
) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
    let protocol = match sampling {
        "random" => Protocol::RandomFolds { k },
        "snowball" => Protocol::Snowball { k },
        other => {
            return Err(value_error(format!(
                "sampling {other:?}: expected \"random\" (RS) or \"snowball\" (SS)"
            )));
        }
    };
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
                    value_error(format!("y[{i}] = {c}: labels are 0..{n_classes} or -1"))
                }),
        })
        .collect::<PyResult<Vec<_>>>()?;
    if edges.ndim() != 2 || edges.shape()[1] != 2 {
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
                usize::try_from(x)
                    .ok()
                    .filter(|&x| x < n)
                    .map(NodeId::new)
                    .ok_or_else(|| value_error(format!("edges[{e}]: node {x} is not below {n}")))
            };
            Ok((c(p[0])?, c(p[1])?))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let g = RelationalGraph::new(
        Vec::new(),
        Attributes::Dense {
            num_features: 0,
            values: Vec::new(),
        },
        labels,
        LabelSet::numbered(n_classes.max(1)),
        edge_list,
        Directedness::Undirected,
    )
    .map_err(errors::graph)?;
    let tests = protocol.test_sets(&g, seed, 0).map_err(value_error)?;
    Ok(tests
        .into_iter()
        .map(|t| {
            t.into_iter()
                .map(|v| i64::try_from(v).unwrap_or(i64::MAX))
                .collect::<Vec<_>>()
                .into_pyarray(py)
        })
        .collect())
}

/// The pipeline's defaults ([`CollectiveSettings::default`], the settings of `srl
/// classify` and the experiment) for the graph learners' parameters, so the Python
/// constructors take their defaults from the library instead of restating them: a dict
/// `{"lp": {...}, "cs": {...}, "mlp": {...}, "gcn": {...}, "appnp": {...}}` whose inner
/// dicts map each constructor parameter to its default (neural methods: `hidden`,
/// `dropout`, `learning_rate`, `weight_decay`, `max_epochs`, `patience`, `precision`,
/// `validation_fraction`; APPNP also `steps` and `alpha`).
#[pyfunction]
fn _collective_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let s = CollectiveSettings::default();
    let neural = |p: &NeuralParams| -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("hidden", p.hidden)?;
        d.set_item("dropout", p.dropout)?;
        d.set_item("learning_rate", p.learning_rate)?;
        d.set_item("weight_decay", p.weight_decay)?;
        d.set_item("max_epochs", p.max_epochs)?;
        d.set_item("patience", p.patience)?;
        d.set_item("precision", float_type_name(p.precision))?;
        d.set_item("validation_fraction", s.validation_fraction)?;
        Ok(d)
    };
    let lp = PyDict::new(py);
    lp.set_item("alpha", s.lp.alpha)?;
    lp.set_item("tol", s.lp.tol)?;
    lp.set_item("max_iters", s.lp.max_iters)?;
    lp.set_item("clamp", s.lp.clamp)?;
    let cs = PyDict::new(py);
    cs.set_item("correct_alpha", s.cs.correct_alpha)?;
    cs.set_item("smooth_alpha", s.cs.smooth_alpha)?;
    cs.set_item("tol", s.cs.tol)?;
    cs.set_item("max_iters", s.cs.max_iters)?;
    let appnp = neural(&s.appnp)?;
    appnp.set_item("steps", s.appnp_steps)?;
    appnp.set_item("alpha", s.appnp_alpha)?;
    let out = PyDict::new(py);
    out.set_item("lp", lp)?;
    out.set_item("cs", cs)?;
    out.set_item("mlp", neural(&s.mlp)?)?;
    out.set_item("gcn", neural(&s.gcn)?)?;
    out.set_item("appnp", appnp)?;
    Ok(out)
}

/// Registers the native collective-classification functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_collective_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(_load_linqs, m)?)?;
    m.add_function(wrap_pyfunction!(_run_collective, m)?)?;
    m.add_function(wrap_pyfunction!(_node_test_sets, m)?)?;
    Ok(())
}
