//! `srl classify`: collective classification of a graph's nodes (Sen et al. 2008):
//! content only (CO), the iterative classification algorithm (ICA), collective Gibbs
//! sampling (GS) over a local classifier (logistic regression or naive Bayes), and a
//! relational Markov network with loopy BP or mean field (LBP, MF).
//!
//! Input: LINQS `.content` / `.cites` files, or the CSV pair of srl-graph's
//! [`load_csv`](srl_graph::load_csv) (`nodes.csv`: `id,label,feature…`; `edges.csv`:
//! `src,dst`). Training nodes: a random fraction, k folds (every node predicted once, by
//! the fold holding it out), or a file listing training node ids one per line.
//!
//! Output: a CSV `node,label,fold,p_<label>…` (the predicted label and per-class
//! probabilities of every held-out node) and the accuracy on the held-out nodes with a
//! known label.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::{Context as _, anyhow, bail};
use clap::{ArgGroup, Args, ValueEnum};
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use srl_bayes::local::LocalNaiveBayes;
use srl_graph::{HoldOut, KFold, NodeId, RelationalGraph, Split};
use srl_infer::{
    CollectiveGibbs, ContentOnly, IterativeClassification, LoopyBp, MarginalInference, MeanField,
};
use srl_learn::{LocalLogisticRegression, RelationalMarkovNetworkParams};

use crate::ui::{Ui, check_outputs, write_to};

/// The collective method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// Content only: the local classifier on each node's attributes.
    Co,
    /// Iterative classification algorithm.
    Ica,
    /// Collective Gibbs sampling.
    Gs,
    /// Relational Markov network, loopy belief propagation.
    Lbp,
    /// Relational Markov network, mean field.
    Mf,
}

/// The local classifier of CO, ICA and GS.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Local {
    /// Logistic regression.
    Lr,
    /// Naive Bayes.
    Nb,
}

/// `srl classify`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("input").required(true).args(["content", "nodes"])))]
#[command(group(ArgGroup::new("protocol").required(true).args(["train_fraction", "folds", "train_mask"])))]
pub struct ClassifyArgs {
    /// LINQS `.content` file (`id word… label`, tab-separated; may be gzipped).
    #[arg(long, requires = "cites")]
    pub content: Option<PathBuf>,
    /// LINQS `.cites` file (`cited citing`).
    #[arg(long, requires = "content")]
    pub cites: Option<PathBuf>,
    /// Nodes CSV (`id,label,feature…` with a header).
    #[arg(long, requires = "edges")]
    pub nodes: Option<PathBuf>,
    /// Edges CSV (`src,dst` with a header).
    #[arg(long, requires = "nodes")]
    pub edges: Option<PathBuf>,
    /// Method.
    #[arg(long, value_enum, default_value = "ica")]
    pub method: Method,
    /// Local classifier of co, ica and gs.
    #[arg(long, value_enum, default_value = "lr")]
    pub local: Local,
    /// Fraction of the nodes used for training (one random split).
    #[arg(long)]
    pub train_fraction: Option<f64>,
    /// K-fold cross-validation (random folds).
    #[arg(long)]
    pub folds: Option<usize>,
    /// File of training node ids, one per line; every other node is predicted.
    #[arg(long)]
    pub train_mask: Option<PathBuf>,
    /// Seed of the split and the methods.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Predictions CSV (default: not written).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// One held-out node's prediction.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// Node index.
    pub node: usize,
    /// Fold (0 for a single split).
    pub fold: usize,
    /// Predicted label index.
    pub label: usize,
    /// Class probabilities.
    pub probs: Vec<f64>,
}

fn load(a: &ClassifyArgs, ui: Ui) -> anyhow::Result<RelationalGraph> {
    match (&a.content, &a.cites, &a.nodes, &a.edges) {
        (Some(c), Some(e), _, _) => {
            let (g, r) = srl_graph::load::linqs::load_linqs_files(c, e, &Default::default())?;
            if r.dangling_lines > 0 {
                ui.note(&format!(
                    "srl classify: warning: {} of {} links in {} name an id missing from {} and were dropped (first at line {})",
                    r.dangling_lines,
                    r.cite_lines,
                    e.display(),
                    c.display(),
                    r.first_dangling_line.unwrap_or(0)
                ));
            }
            Ok(g)
        }
        (_, _, Some(n), Some(e)) => Ok(srl_graph::load_csv(n, e, &Default::default())?.graph),
        _ => bail!("give --content and --cites, or --nodes and --edges"),
    }
}

/// The test sets (node indices) of the protocol.
fn test_sets(
    a: &ClassifyArgs,
    g: &RelationalGraph,
    rng: &mut ChaCha8Rng,
) -> anyhow::Result<Vec<Vec<usize>>> {
    let n = g.num_nodes();
    if let Some(f) = a.train_fraction {
        if !(f > 0.0 && f < 1.0) {
            bail!("--train-fraction {f}: must be strictly between 0 and 1");
        }
        let split = Split::random(n, 1.0 - f, rng)?;
        return Ok(vec![split.test_nodes().iter().map(|v| v.index()).collect()]);
    }
    if let Some(k) = a.folds {
        if k < 2 || k > n {
            bail!("--folds {k}: must be between 2 and the number of nodes ({n})");
        }
        let kf = KFold::random(n, k, rng)?;
        return Ok(kf
            .splits()
            .map(|s| s.test_nodes().iter().map(|v| v.index()).collect())
            .collect());
    }
    if let Some(path) = &a.train_mask {
        let text = read_mask(path)?;
        let index: std::collections::HashMap<&str, usize> = g
            .node_names()
            .iter()
            .enumerate()
            .map(|(i, name)| (name.as_str(), i))
            .collect();
        let mut train = HashSet::new();
        for (i, line) in text.lines().enumerate() {
            let id = line.trim();
            if id.is_empty() || id.starts_with('#') {
                continue;
            }
            let v = *index
                .get(id)
                .ok_or_else(|| anyhow!("{}:{}: unknown node id {id:?}", path.display(), i + 1))?;
            train.insert(v);
        }
        if train.is_empty() {
            bail!("{}: no training node id", path.display());
        }
        if train.len() == n {
            bail!(
                "{}: every node is a training node; nothing is left to predict",
                path.display()
            );
        }
        return Ok(vec![(0..n).filter(|v| !train.contains(v)).collect()]);
    }
    bail!("give --train-fraction, --folds or --train-mask")
}

/// The text of a train-mask file: a regular file of UTF-8 text (errors name file and line).
fn read_mask(path: &std::path::Path) -> anyhow::Result<String> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_file() {
        bail!("{}: not a regular file", path.display());
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        let pos = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..pos].iter().filter(|&&b| b == b'\n').count();
        anyhow!("{}:{line}: not UTF-8 text", path.display())
    })
}

fn argmax(p: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in p.iter().enumerate() {
        if x > p[best] {
            best = i;
        }
    }
    best
}

fn global<I: MarginalInference + Sync>(
    g: &RelationalGraph,
    test: &[usize],
    inference: &I,
    rng: &mut ChaCha8Rng,
) -> anyhow::Result<Vec<Vec<f64>>> {
    let train: Vec<bool> = g.labels().iter().map(Option::is_some).collect();
    let model = RelationalMarkovNetworkParams::default()
        .fit(g, &train, inference, rng)
        .context("training the relational Markov network")?;
    let m = model
        .marginals(g, g.labels(), inference, rng)
        .context("Markov-network inference")?;
    Ok(test
        .iter()
        .map(|&v| m.node(NodeId::new(v)).to_vec())
        .collect())
}

/// Predicts the nodes of `test` with the labels of every other node observed.
fn predict_split(
    a: &ClassifyArgs,
    g: &RelationalGraph,
    test: &[usize],
    rng: &mut ChaCha8Rng,
) -> anyhow::Result<Vec<Vec<f64>>> {
    let mut mask = vec![false; g.num_nodes()];
    test.iter().for_each(|&v| mask[v] = true);
    let held_out = HoldOut::new(g, Split::from_test_mask(mask))?;
    let hidden = held_out.observed();
    let nb = LocalNaiveBayes::default;
    let lr = LocalLogisticRegression::default;
    let collective = |r: srl_infer::CollectiveResult| -> Vec<Vec<f64>> {
        test.iter().map(|&v| r.proba(v).to_vec()).collect()
    };
    // Loopy BP and mean field inside MN training: capped as in the collective-classification
    // experiment (20 iterations, tolerance 1e-3), where the defaults rarely converge.
    let lbp = LoopyBp {
        max_iters: 20,
        tol: 1e-3,
        ..LoopyBp::default()
    };
    let mf = MeanField {
        max_iters: 20,
        tol: 1e-3,
        ..MeanField::default()
    };
    Ok(match (a.method, a.local) {
        (Method::Co, Local::Lr) => collective(ContentOnly.run(hidden, &lr(), None)?),
        (Method::Co, Local::Nb) => collective(ContentOnly.run(hidden, &nb(), None)?),
        (Method::Ica, Local::Lr) => {
            collective(IterativeClassification::default().run(hidden, &lr(), None, rng)?)
        }
        (Method::Ica, Local::Nb) => {
            collective(IterativeClassification::default().run(hidden, &nb(), None, rng)?)
        }
        (Method::Gs, Local::Lr) => {
            collective(CollectiveGibbs::default().run(hidden, &lr(), None, rng)?)
        }
        (Method::Gs, Local::Nb) => {
            collective(CollectiveGibbs::default().run(hidden, &nb(), None, rng)?)
        }
        (Method::Lbp, _) => global(hidden, test, &lbp, rng)?,
        (Method::Mf, _) => global(hidden, test, &mf, rng)?,
    })
}

/// Runs the protocol; returns every held-out node's prediction.
///
/// # Errors
/// Bad options, unreadable or malformed input, a method's error.
pub fn predictions(
    a: &ClassifyArgs,
    g: &RelationalGraph,
    ui: Ui,
) -> anyhow::Result<Vec<Prediction>> {
    let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
    let tests = test_sets(a, g, &mut rng)?;
    let pb = ui.progress(tests.len() as u64, "folds");
    let mut out = Vec::new();
    for (f, test) in tests.iter().enumerate() {
        let mut frng = ChaCha8Rng::seed_from_u64(a.seed);
        frng.set_stream(f as u64 + 1);
        let probs =
            predict_split(a, g, test, &mut frng).with_context(|| format!("fold {}", f + 1))?;
        for (&v, p) in test.iter().zip(probs) {
            out.push(Prediction {
                node: v,
                fold: f,
                label: argmax(&p),
                probs: p,
            });
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    out.sort_by_key(|p| p.node);
    Ok(out)
}

/// Runs `srl classify`.
///
/// # Errors
/// See [`predictions`]; unwritable output.
pub fn run(a: &ClassifyArgs, ui: Ui) -> anyhow::Result<()> {
    if let Some(out) = &a.out {
        let inputs: Vec<&std::path::Path> =
            [&a.content, &a.cites, &a.nodes, &a.edges, &a.train_mask]
                .into_iter()
                .flatten()
                .map(PathBuf::as_path)
                .collect();
        check_outputs(ui, &inputs, &[out])?;
    }
    let g = load(a, ui)?;
    ui.note(&format!(
        "srl classify: {} nodes, {} edges, {} features, {} labels; method {}, local {}",
        g.num_nodes(),
        g.num_edges(),
        g.num_features(),
        g.num_labels(),
        format!("{:?}", a.method).to_lowercase(),
        format!("{:?}", a.local).to_lowercase()
    ));
    let t0 = std::time::Instant::now();
    let preds = predictions(a, &g, ui)?;
    let secs = t0.elapsed().as_secs_f64();
    let names = g.label_set().names().to_vec();
    let scored: Vec<(usize, usize)> = preds
        .iter()
        .filter_map(|p| g.labels()[p.node].map(|t| (p.label, t as usize)))
        .collect();
    let correct = scored.iter().filter(|(a, b)| a == b).count();
    let accuracy = if scored.is_empty() {
        f64::NAN
    } else {
        correct as f64 / scored.len() as f64
    };
    if let Some(out) = &a.out {
        write_to(ui, Some(out), |w| {
            write!(w, "node,label,fold")?;
            for n in &names {
                write!(w, ",p_{n}")?;
            }
            writeln!(w)?;
            for p in &preds {
                write!(
                    w,
                    "{},{},{}",
                    g.node_name(NodeId::new(p.node)),
                    names[p.label],
                    p.fold + 1
                )?;
                for x in &p.probs {
                    write!(w, ",{x}")?;
                }
                writeln!(w)?;
            }
            Ok(())
        })?;
    }
    let summary = json!({
        "command": "classify",
        "method": format!("{:?}", a.method).to_lowercase(),
        "local": format!("{:?}", a.local).to_lowercase(),
        "nodes": g.num_nodes(),
        "predicted": preds.len(),
        "scored": scored.len(),
        "accuracy": accuracy,
        "seconds": secs,
        "seed": a.seed,
        "out": a.out.as_ref().map(|p| p.display().to_string()),
    });
    let text = format!(
        "held-out accuracy {accuracy:.4} ({correct} of {} labelled held-out nodes; {} predicted) in {secs:.2} s\n",
        scored.len(),
        preds.len()
    );
    ui.summary(&summary, &text)
}
