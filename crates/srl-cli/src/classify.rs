//! `srl classify`: collective classification of a graph's nodes (Sen et al. 2008):
//! content only (CO), the iterative classification algorithm (ICA), collective Gibbs
//! sampling (GS) over a local classifier (NB, MNB or LR), and a relational Markov network
//! with loopy BP or mean field (LBP, MF); and the graph learners beside them (issue 32):
//! label propagation (LP), an MLP, GCN, APPNP and Correct & Smooth (CS, over the MLP or
//! LR, `--cs-base`).
//!
//! Every method, default, random stream and score is srl-learn's collective-classification
//! pipeline ([`srl_learn::collective`]), the one `cargo xtask reproduce
//! collective-classification` runs: this module parses the arguments, loads the graph,
//! reads the training mask, prints and writes. `--folds 10 --seed 20061001` on Cora gives
//! the experiment's Cora RS accuracy of each method.
//!
//! Input: LINQS `.content` / `.cites` files, or the CSV pair of srl-graph's
//! [`load_csv`](srl_graph::load_csv) (`nodes.csv`: `id,label,feature…`; `edges.csv`:
//! `src,dst`). Training nodes: a random fraction, k folds (random, RS, or class-stratified
//! snowball samples, SS), or a file listing training node ids one per line; with it, for
//! the neural methods (mlp, gcn, appnp, cs over the MLP), optionally a file of validation
//! node ids (`--validation-mask`), the early-stopping set of srl-learn's sparse-label
//! protocol, instead of a random hold-out of the training nodes.
//!
//! Output: a CSV `node,label,fold,p_<label>…` (the predicted label and per-class
//! probabilities of every held-out node; a node tested by several snowball samples has one
//! row per sample) and the accuracy on the held-out nodes with a known label.

use std::collections::HashSet;
use std::path::PathBuf;

use anyhow::{Context as _, anyhow, bail};
use clap::{ArgGroup, Args, ValueEnum};
use serde_json::json;
use srl_eval::Summary;
use srl_graph::{NodeId, RelationalGraph};
use srl_learn::collective::{
    CollectiveMethod, CollectiveSettings, CsBase, LocalModel, LrPrior, Protocol, ProtocolResult,
    check_validation_method, evaluate_with_validation,
};

use crate::ui::{Ui, check_outputs, write_to};

/// The collective algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// Content only (CO): the local classifier on each node's attributes.
    Co,
    /// Iterative classification algorithm (ICA).
    Ica,
    /// Collective Gibbs sampling (GS).
    Gs,
    /// Relational Markov network, loopy belief propagation (LBP).
    Lbp,
    /// Relational Markov network, mean field (MF).
    Mf,
    /// Label propagation (Zhou et al. 2004, normalised, labelled nodes clamped).
    Lp,
    /// Two-layer perceptron on the row-normalised attributes (no graph).
    Mlp,
    /// Graph convolutional network (Kipf & Welling 2017).
    Gcn,
    /// APPNP: an MLP, then 10 personalised-PageRank steps (Klicpera et al. 2019).
    Appnp,
    /// Correct & Smooth (Huang et al. 2021) over the base predictor of --cs-base.
    Cs,
}

/// The base predictor of `--method cs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CsBaseArg {
    /// The MLP of `--method mlp` (CS-MLP).
    Mlp,
    /// Content-only logistic regression, the model of `--method co --local lr` (CS-LR).
    Lr,
}

/// The local classifier of co, ica and gs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Local {
    /// Logistic regression (LR), L2 prior tuned per split by inner cross-validation unless
    /// `--lr-lambda` fixes it.
    Lr,
    /// Naive Bayes (NB) of the paper's tables: Bernoulli words, a Gaussian per
    /// neighbour-label count.
    Nb,
    /// Multinomial naive Bayes (MNB) over words and neighbour-label counts (what `nb`
    /// meant in earlier versions of `srl classify`).
    Mnb,
}

impl From<Local> for LocalModel {
    fn from(l: Local) -> Self {
        match l {
            Local::Lr => LocalModel::Lr,
            Local::Nb => LocalModel::Nb,
            Local::Mnb => LocalModel::Mnb,
        }
    }
}

/// How `--folds` draws the test sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Sampling {
    /// RS: k random folds; every node is tested once; accuracy = mean over the folds.
    Random,
    /// SS: k class-stratified snowball samples of |V|/k nodes (they overlap); accuracy =
    /// the per-node average.
    Snowball,
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
    /// Base predictor of `--method cs` [default: mlp].
    #[arg(long, value_enum)]
    pub cs_base: Option<CsBaseArg>,
    /// Fix the LR prior: lambda = C x (training nodes); default: C tuned per split from
    /// {0.001, 0.003, 0.01, 0.03} by 2-fold inner cross-validation on the training nodes.
    #[arg(long, value_name = "C", allow_negative_numbers = true)]
    pub lr_lambda: Option<f64>,
    /// Fraction of the nodes used for training (one random split).
    #[arg(long)]
    pub train_fraction: Option<f64>,
    /// K splits: k random folds (RS) or k snowball samples (SS), see --sampling.
    #[arg(long)]
    pub folds: Option<usize>,
    /// How --folds draws the test sets [default: random].
    #[arg(long, value_enum)]
    pub sampling: Option<Sampling>,
    /// File of training node ids, one per line; every other node is predicted.
    #[arg(long)]
    pub train_mask: Option<PathBuf>,
    /// File of validation node ids (same format as --train-mask, disjoint from it, every
    /// node labelled): the early-stopping set of mlp, gcn, appnp and cs (MLP base),
    /// hidden from training and not scored. Without it they hold out a random 10 % of
    /// the training nodes, which with few labels (20 per class) can stop at epoch ~11
    /// and collapse; pass 30 per class (Shchur et al. 2018).
    #[arg(long, value_name = "FILE")]
    pub validation_mask: Option<PathBuf>,
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
    /// Split (0 for a single split).
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

/// The test sets (node indices) of the protocol: the pipeline's [`Protocol`] on
/// protocol stream 0 (the experiment's Cora streams), or the nodes outside the mask file.
fn test_sets(a: &ClassifyArgs, g: &RelationalGraph) -> anyhow::Result<Vec<Vec<usize>>> {
    let n = g.num_nodes();
    if a.sampling.is_some() && a.folds.is_none() {
        bail!("--sampling chooses how --folds draws its test sets: give --folds K with it");
    }
    if let Some(f) = a.train_fraction {
        if !(f > 0.0 && f < 1.0) {
            bail!("--train-fraction {f}: must be strictly between 0 and 1");
        }
        return Protocol::HoldOut {
            test_fraction: 1.0 - f,
        }
        .test_sets(g, a.seed, 0)
        .map_err(|e| anyhow!("--train-fraction {f}: {e}"));
    }
    if let Some(k) = a.folds {
        if k < 2 || k > n {
            bail!("--folds {k}: must be between 2 and the number of nodes ({n})");
        }
        let protocol = match a.sampling.unwrap_or(Sampling::Random) {
            Sampling::Random => Protocol::RandomFolds { k },
            Sampling::Snowball => Protocol::Snowball { k },
        };
        return Ok(protocol.test_sets(g, a.seed, 0)?);
    }
    if let Some(path) = &a.train_mask {
        let train = read_node_ids(path, g)?;
        if train.is_empty() {
            bail!("{}: no training node id", path.display());
        }
        if train.len() == n {
            bail!(
                "{}: every node is a training node; nothing is left to predict",
                path.display()
            );
        }
        let train: HashSet<usize> = train.into_iter().map(|(v, _)| v).collect();
        return Ok(vec![(0..n).filter(|v| !train.contains(v)).collect()]);
    }
    bail!("give --train-fraction, --folds or --train-mask")
}

/// The nodes of a mask file (`--train-mask`, `--validation-mask`): one node id per line,
/// blank lines and `#` comments skipped; each node once (the first line naming it), in
/// file order, with its 1-based line. Errors name file and line.
fn read_node_ids(
    path: &std::path::Path,
    g: &RelationalGraph,
) -> anyhow::Result<Vec<(usize, usize)>> {
    let text = read_mask(path)?;
    let index: std::collections::HashMap<&str, usize> = g
        .node_names()
        .iter()
        .enumerate()
        .map(|(i, name)| (name.as_str(), i))
        .collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let id = line.trim();
        if id.is_empty() || id.starts_with('#') {
            continue;
        }
        let v = *index
            .get(id)
            .ok_or_else(|| anyhow!("{}:{}: unknown node id {id:?}", path.display(), i + 1))?;
        if seen.insert(v) {
            out.push((v, i + 1));
        }
    }
    Ok(out)
}

/// The validation nodes of `--validation-mask` (sorted), checked against the method, the
/// training mask and the labels; `None` without the flag.
fn validation_nodes(
    a: &ClassifyArgs,
    g: &RelationalGraph,
    method: CollectiveMethod,
) -> anyhow::Result<Option<Vec<usize>>> {
    let Some(path) = &a.validation_mask else {
        return Ok(None);
    };
    let Some(train_path) = &a.train_mask else {
        bail!(
            "--validation-mask needs --train-mask: the validation nodes are held out \
             beside the training nodes it lists"
        );
    };
    let listed = read_node_ids(path, g)?;
    let mut nodes: Vec<usize> = listed.iter().map(|&(v, _)| v).collect();
    // The library's rule: the neural methods only, and at least one node.
    check_validation_method(method, &nodes)
        .map_err(|e| anyhow!("--validation-mask {}: {e}", path.display()))?;
    let train: HashSet<usize> = read_node_ids(train_path, g)?
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    for &(v, line) in &listed {
        let id = g.node_name(NodeId::new(v));
        if train.contains(&v) {
            bail!(
                "{}:{line}: node {id:?} is also in the train mask {}; a validation node is \
                 held out of training",
                path.display(),
                train_path.display()
            );
        }
        if g.labels()[v].is_none() {
            bail!(
                "{}:{line}: node {id:?} has no label; a validation node needs one",
                path.display()
            );
        }
    }
    if train.len() + nodes.len() == g.num_nodes() {
        bail!(
            "{} and {}: every node is a training or validation node; nothing is left to \
             predict",
            train_path.display(),
            path.display()
        );
    }
    nodes.sort_unstable();
    Ok(Some(nodes))
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

/// The pipeline's method and settings for the arguments.
fn method_and_settings(a: &ClassifyArgs) -> anyhow::Result<(CollectiveMethod, CollectiveSettings)> {
    let local = LocalModel::from(a.local);
    let method = match a.method {
        Method::Co => CollectiveMethod::Co(local),
        Method::Ica => CollectiveMethod::Ica(local),
        Method::Gs => CollectiveMethod::Gs(local),
        Method::Lbp => CollectiveMethod::Lbp,
        Method::Mf => CollectiveMethod::Mf,
        Method::Lp => CollectiveMethod::Lp,
        Method::Mlp => CollectiveMethod::Mlp,
        Method::Gcn => CollectiveMethod::Gcn,
        Method::Appnp => CollectiveMethod::Appnp,
        Method::Cs => match a.cs_base.unwrap_or(CsBaseArg::Mlp) {
            CsBaseArg::Mlp => CollectiveMethod::Cs(CsBase::Mlp),
            CsBaseArg::Lr => CollectiveMethod::Cs(CsBase::Lr),
        },
    };
    if a.cs_base.is_some() && a.method != Method::Cs {
        bail!("--cs-base chooses the base predictor of --method cs; this is --method {method}");
    }
    let mut settings = CollectiveSettings::default();
    if let Some(c) = a.lr_lambda {
        if !(c.is_finite() && c >= 0.0) {
            bail!("--lr-lambda {c}: must be finite and >= 0");
        }
        settings.lr_prior = LrPrior::PerSample(c);
    }
    Ok((method, settings))
}

/// Runs the protocol through the pipeline; returns its result and every held-out node's
/// prediction (sorted by node, then split).
///
/// # Errors
/// Bad options, an unreadable or malformed mask, a method's error.
pub fn predictions(
    a: &ClassifyArgs,
    g: &RelationalGraph,
) -> anyhow::Result<(ProtocolResult, Vec<Prediction>)> {
    let (method, settings) = method_and_settings(a)?;
    let validation = validation_nodes(a, g, method)?;
    let tests = test_sets(a, g)?;
    // With validation nodes, the split of the sparse-label protocol: they are hidden and
    // not scored.
    let res = evaluate_with_validation(
        &settings,
        &[method],
        g,
        tests,
        validation.as_deref().unwrap_or(&[]),
        a.seed,
        0,
    )?;
    let k = g.num_labels();
    let mut out = Vec::new();
    for (f, split) in res.splits.iter().enumerate() {
        let run = &split.methods[0];
        for (i, &v) in split.test.iter().enumerate() {
            out.push(Prediction {
                node: v,
                fold: f,
                label: run.predicted[i] as usize,
                probs: run.probabilities[i * k..(i + 1) * k].to_vec(),
            });
        }
    }
    out.sort_by_key(|p| (p.node, p.fold));
    Ok((res, out))
}

/// Runs `srl classify`.
///
/// # Errors
/// See [`predictions`]; unwritable output.
pub fn run(a: &ClassifyArgs, ui: Ui) -> anyhow::Result<()> {
    if let Some(out) = &a.out {
        let inputs: Vec<&std::path::Path> = [
            &a.content,
            &a.cites,
            &a.nodes,
            &a.edges,
            &a.train_mask,
            &a.validation_mask,
        ]
        .into_iter()
        .flatten()
        .map(PathBuf::as_path)
        .collect();
        check_outputs(ui, &inputs, &[out])?;
    }
    let g = load(a, ui)?;
    let (method, _) = method_and_settings(a)?;
    if a.local == Local::Nb && method.local().is_some() {
        ui.note(
            "srl classify: note: `--local nb` is the naive Bayes of the paper's NB rows \
             (Bernoulli words, a Gaussian per neighbour-label count); the multinomial naive \
             Bayes that `nb` named in earlier versions is `--local mnb`",
        );
    }
    ui.note(&format!(
        "srl classify: {} nodes, {} edges, {} features, {} labels; method {method}",
        g.num_nodes(),
        g.num_edges(),
        g.num_features(),
        g.num_labels(),
    ));
    let t0 = std::time::Instant::now();
    let (res, preds) = predictions(a, &g)?;
    let secs = t0.elapsed().as_secs_f64();
    let names = g.label_set().names().to_vec();
    let scored: usize = res.scored.iter().map(Vec::len).sum();
    let correct: usize = res
        .correct
        .iter()
        .map(|split| split[0].iter().filter(|&&c| c).count())
        .sum();
    // The protocol's score, as the experiment reports it: RS = mean over the folds, SS =
    // per-node average, one split = its accuracy.
    let fold_accuracy = &res.accuracy[0];
    let accuracy = if scored == 0 {
        f64::NAN
    } else if a.folds.is_some() && a.sampling == Some(Sampling::Snowball) {
        res.per_node[0]
    } else {
        Summary::of(fold_accuracy).map_or(f64::NAN, |s| s.mean)
    };
    let converged = res.converged[0].iter().filter(|&&c| c).count();
    let splits = res.converged[0].len();
    if converged < splits {
        ui.note(&format!(
            "srl classify: warning: {method} did not converge on {} of {splits} splits \
             (iterations per split: {:?})",
            splits - converged,
            res.iterations[0]
        ));
    }
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
    let method_seconds: f64 = res.seconds[0].iter().sum();
    let summary = json!({
        "command": "classify",
        "method": format!("{:?}", a.method).to_lowercase(),
        "local": method.local().map(|_| format!("{:?}", a.local).to_lowercase()),
        "name": method.name(),
        "sampling": a.folds.map(|_| match a.sampling.unwrap_or(Sampling::Random) {
            Sampling::Random => "RS",
            Sampling::Snowball => "SS",
        }),
        "nodes": g.num_nodes(),
        "predicted": preds.len(),
        "scored": scored,
        "correct": correct,
        "accuracy": accuracy,
        "fold_accuracy": fold_accuracy,
        "lr_lambda_per_sample": res.lr_c,
        "iterations_per_fold": res.iterations[0],
        "converged_folds": converged,
        "method_seconds": method_seconds,
        "seconds": secs,
        "seed": a.seed,
        "validation_nodes": res.splits.first().filter(|_| a.validation_mask.is_some()).map(|s| s.validation.len()),
        "out": a.out.as_ref().map(|p| p.display().to_string()),
    });
    let text = format!(
        "{method} held-out accuracy {accuracy:.4} ({correct} of {scored} labelled held-out \
         nodes correct over {splits} split(s); {} predictions) in {secs:.2} s\n",
        preds.len()
    );
    ui.summary(&summary, &text)
}
