//! `collective-classification`: content-only (CO), local collective (ICA, GS with naive
//! Bayes and logistic regression) and global collective (LBP, MF on a relational Markov
//! network) classification of Cora and Citeseer, as in Sen, Namata, Bilgic, Getoor,
//! Gallagher & Eliassi-Rad (2008), "Collective classification in network data", AI
//! Magazine 29(3), Table 3 (the slides' "Experimental results - real-world datasets").
//!
//! Protocols: 10-fold random sampling (RS: the nodes are partitioned into 10 folds, each
//! tested once), 10 snowball samples (SS: test sets grown along edges, which may overlap)
//! and the matched (M) average of the snowball runs (each node's accuracy averaged over
//! the samples that tested it, then averaged over the nodes). In every split the training
//! nodes' labels are observed at test time: the test nodes' neighbour features use the
//! true labels of training neighbours and the current estimates of test neighbours (ICA,
//! GS), and the MRF clamps the training nodes (LBP, MF).
//!
//! Every algorithm comes from the crates: the local classifiers
//! ([`LocalNaiveBayes`], [`LocalLogisticRegression`]) implement srl-infer's
//! [`LocalClassifier`]; [`IterativeClassification`] and [`CollectiveGibbs`] run ICA and
//! GS; [`RelationalMarkovNetworkParams::fit`] learns the clique potentials on the
//! training nodes and [`RelationalMarkovNetwork::marginals`] conditions on the observed
//! labels with [`LoopyBp`] or [`MeanField`]. This module only wires folds, methods and
//! timing together.

use std::time::Instant;

use anyhow::{Context as _, anyhow};
use rand_chacha::ChaCha8Rng;
use srl_bayes::local::LocalNaiveBayes;
use srl_eval::cv::{Fold, Folds, par_cross_validate};
use srl_eval::metrics::accuracy;
use srl_eval::{MatchedAverage, ResultRow, Summary};
use srl_graph::{KFold, LinqsOptions, NodeId, RelationalGraph, load_linqs, snowball_splits};
use srl_infer::{
    CollectiveGibbs, FeatureRow, IterativeClassification, LocalClassifier, LoopyBp,
    MarginalInference, MeanField,
};
use srl_learn::{LocalLogisticRegression, RelationalMarkovNetwork, RelationalMarkovNetworkParams};

use crate::context::{Context, Report};
use crate::experiments::Experiment;

/// The experiment's registry entry.
pub fn experiment() -> Experiment {
    Experiment {
        name: "collective-classification",
        about: "Sen et al. 2008 Table 3: CO/ICA/GS (NB, LR), LBP, MF on Cora and Citeseer (RS, SS, M)",
        run,
    }
}

/// The local classifier of a CO, ICA or GS method.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Local {
    /// Multinomial naive Bayes with Laplace smoothing (srl-bayes).
    Nb,
    /// L2-regularised multinomial logistic regression (srl-learn).
    Lr,
}

/// One of the eight methods of the paper's table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Method {
    /// Content only: the local classifier on the words alone.
    Co(Local),
    /// Iterative classification with count-aggregated neighbour labels.
    Ica(Local),
    /// Collective Gibbs sampling (200 burn-in, 800 samples).
    Gs(Local),
    /// Relational Markov network, loopy belief propagation.
    Lbp,
    /// Relational Markov network, mean field.
    Mf,
}

impl Method {
    /// The paper's row order.
    const ALL: [Method; 8] = [
        Method::Co(Local::Nb),
        Method::Co(Local::Lr),
        Method::Ica(Local::Nb),
        Method::Ica(Local::Lr),
        Method::Gs(Local::Nb),
        Method::Gs(Local::Lr),
        Method::Lbp,
        Method::Mf,
    ];

    fn name(self) -> &'static str {
        match self {
            Method::Co(Local::Nb) => "CO-NB",
            Method::Co(Local::Lr) => "CO-LR",
            Method::Ica(Local::Nb) => "ICA-NB",
            Method::Ica(Local::Lr) => "ICA-LR",
            Method::Gs(Local::Nb) => "GS-NB",
            Method::Gs(Local::Lr) => "GS-LR",
            Method::Lbp => "LBP",
            Method::Mf => "MF",
        }
    }
}

/// Evaluation protocol.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Protocol {
    /// k-fold random sampling.
    Rs,
    /// Snowball sampling.
    Ss,
}

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::Rs => "RS",
            Protocol::Ss => "SS",
        }
    }
}

/// Sen et al. 2008, Table 3 (the slides' table): accuracy as `(method, cora [SS, RS, M],
/// citeseer [SS, RS, M])`.
const PAPER: [(&str, [f64; 3], [f64; 3]); 8] = [
    ("CO-NB", [0.7285, 0.7776, 0.7476], [0.7427, 0.7487, 0.7646]),
    ("ICA-NB", [0.8054, 0.8478, 0.8271], [0.7540, 0.7683, 0.7752]),
    ("GS-NB", [0.7613, 0.8404, 0.8154], [0.7596, 0.7680, 0.7737]),
    ("CO-LR", [0.7356, 0.7695, 0.7393], [0.7334, 0.7321, 0.7532]),
    ("ICA-LR", [0.8457, 0.8796, 0.8589], [0.7629, 0.7732, 0.7812]),
    ("GS-LR", [0.8495, 0.8810, 0.8617], [0.7574, 0.7699, 0.7843]),
    ("LBP", [0.8554, 0.8766, 0.8575], [0.7663, 0.7759, 0.7843]),
    ("MF", [0.8555, 0.8836, 0.8631], [0.7657, 0.7732, 0.7888]),
];

/// The paper's accuracy of `method` on `dataset` under `protocol` (`"SS"`, `"RS"`, `"M"`).
fn paper(dataset: &str, method: &str, protocol: &str) -> Option<f64> {
    let col = ["SS", "RS", "M"].iter().position(|p| *p == protocol)?;
    let (_, cora, citeseer) = PAPER.iter().find(|(m, _, _)| *m == method)?;
    match dataset {
        "cora" => Some(cora[col]),
        "citeseer" => Some(citeseer[col]),
        _ => None,
    }
}

/// What one method did on one split.
#[derive(Clone, Debug)]
struct MethodRun {
    /// Predicted label of each test node, in the fold's test order.
    predicted: Vec<u32>,
    /// Wall time of training plus inference, seconds.
    seconds: f64,
    /// Iterations (ICA), sweeps (GS) or inference iterations (LBP/MF); 0 for CO.
    iterations: usize,
    /// Whether the iteration converged (CO: always).
    converged: bool,
}

/// Settings shared by every split of a run.
#[derive(Clone, Debug)]
struct Setup {
    methods: Vec<Method>,
    ica: IterativeClassification,
    gs: CollectiveGibbs,
    mn: RelationalMarkovNetworkParams,
    lbp: LoopyBp,
    mf: MeanField,
}

impl Setup {
    /// The settings of a full run, or of `--quick` (fewer L-BFGS iterations for the MN).
    ///
    /// The MN is trained on the *unclamped* training subgraph, where loopy BP and mean
    /// field rarely reach a tight tolerance once the edge potentials grow (measured on a
    /// Cora 10-fold training set: with the defaults, 352 of 397 LBP calls hit their
    /// 100-iteration cap and L-BFGS spent about 10 objective evaluations per iteration,
    /// 188 s CPU for one fold). So training and test inference are capped at 20
    /// iterations with tolerance 1e-3 and L-BFGS at 30 iterations; on that fold test
    /// accuracy is the same as with the defaults (0.8672 LBP, 0.8745 MF) at 3 to 7 s.
    fn new(quick: bool) -> Self {
        Self {
            methods: Method::ALL.to_vec(),
            ica: IterativeClassification::default(),
            gs: CollectiveGibbs::default(),
            mn: RelationalMarkovNetworkParams {
                max_iters: if quick { 10 } else { 30 },
                ..RelationalMarkovNetworkParams::default()
            },
            lbp: LoopyBp {
                max_iters: 20,
                tol: 1e-3,
                ..LoopyBp::default()
            },
            mf: MeanField {
                max_iters: 20,
                tol: 1e-3,
                ..MeanField::default()
            },
        }
    }
}

/// A fresh, unfitted naive Bayes (Laplace smoothing, srl-bayes defaults).
fn nb() -> LocalNaiveBayes {
    LocalNaiveBayes::default()
}

/// A fresh, unfitted logistic regression (L2 `λ = 1e-4 · n`, srl-learn defaults).
fn lr() -> LocalLogisticRegression {
    LocalLogisticRegression::default()
}

/// CO: fits `classifier` on the training nodes' words and labels the test nodes.
fn content_only<C: LocalClassifier>(
    graph: &RelationalGraph,
    fold: &Fold<'_>,
    mut classifier: C,
) -> anyhow::Result<Vec<u32>> {
    let nf = graph.num_features();
    let k = graph.num_labels();
    let row = |v: usize| FeatureRow {
        attributes: graph.attributes_of(NodeId::new(v)),
        num_attributes: nf,
        relational: &[],
    };
    let rows: Vec<FeatureRow<'_>> = fold.train.iter().map(|&v| row(v)).collect();
    let labels: Vec<u32> = fold
        .train
        .iter()
        .map(|&v| graph.labels()[v].ok_or_else(|| anyhow!("training node {v} has no label")))
        .collect::<anyhow::Result<_>>()?;
    classifier
        .fit(&rows, &labels, None, k)
        .map_err(|e| anyhow!("fitting the content-only classifier: {e}"))?;
    let mut p = vec![0.0; k];
    Ok(fold
        .test
        .iter()
        .map(|&v| {
            classifier.predict_proba(&row(v), &mut p);
            argmax(&p) as u32
        })
        .collect())
}

/// Index of the largest entry (lowest index on ties).
fn argmax(p: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in p.iter().enumerate() {
        if x > p[best] {
            best = i;
        }
    }
    best
}

/// LBP / MF: learns the MN's clique potentials on the training nodes (and the edges among
/// them) with `inference`, then infers the test nodes' marginals with the training nodes
/// clamped to their labels, and takes each test node's most probable label.
fn global<I: MarginalInference>(
    setup: &Setup,
    hidden: &RelationalGraph,
    fold: &Fold<'_>,
    inference: &I,
    rng: &mut ChaCha8Rng,
) -> anyhow::Result<(Vec<u32>, usize, bool)> {
    let train: Vec<bool> = fold.in_test.iter().map(|&t| !t).collect();
    let model: RelationalMarkovNetwork = setup
        .mn
        .fit(hidden, &train, inference, rng)
        .context("training the relational Markov network")?;
    let m = model
        .marginals(hidden, hidden.labels(), inference, rng)
        .context("MN inference")?;
    let c = m.convergence();
    let predicted = fold
        .test
        .iter()
        .map(|&v| argmax(m.node(NodeId::new(v))) as u32)
        .collect();
    Ok((predicted, c.iterations, c.converged))
}

/// Runs every method of `setup` on one split. `graph` has all labels; the methods see
/// a copy with the test labels hidden.
fn run_split(
    ctx: &Context,
    setup: &Setup,
    graph: &RelationalGraph,
    fold: &Fold<'_>,
    stream: u64,
) -> anyhow::Result<Vec<MethodRun>> {
    let observed: Vec<Option<u32>> = graph
        .labels()
        .iter()
        .zip(fold.in_test)
        .map(|(&l, &t)| if t { None } else { l })
        .collect();
    let hidden = graph.with_labels(observed)?;
    let test_of = |labels: &[u32]| -> Vec<u32> { fold.test.iter().map(|&v| labels[v]).collect() };
    let mut out = Vec::with_capacity(setup.methods.len());
    for (mi, &method) in setup.methods.iter().enumerate() {
        let mut rng = ctx.rng(stream * 16 + mi as u64);
        let start = Instant::now();
        let (predicted, iterations, converged) = match method {
            Method::Co(Local::Nb) => (content_only(&hidden, fold, nb())?, 0, true),
            Method::Co(Local::Lr) => (content_only(&hidden, fold, lr())?, 0, true),
            Method::Ica(local) => {
                let r = match local {
                    Local::Nb => setup.ica.run(&hidden, &nb(), None, &mut rng),
                    Local::Lr => setup.ica.run(&hidden, &lr(), None, &mut rng),
                }
                .context(method.name())?;
                (
                    test_of(&r.labels),
                    r.convergence.iterations,
                    r.convergence.converged,
                )
            }
            Method::Gs(local) => {
                let r = match local {
                    Local::Nb => setup.gs.run(&hidden, &nb(), None, &mut rng),
                    Local::Lr => setup.gs.run(&hidden, &lr(), None, &mut rng),
                }
                .context(method.name())?;
                (
                    test_of(&r.labels),
                    r.convergence.iterations,
                    r.convergence.converged,
                )
            }
            Method::Lbp => global(setup, &hidden, fold, &setup.lbp, &mut rng)?,
            Method::Mf => global(setup, &hidden, fold, &setup.mf, &mut rng)?,
        };
        out.push(MethodRun {
            predicted,
            seconds: start.elapsed().as_secs_f64(),
            iterations,
            converged,
        });
    }
    Ok(out)
}

/// Per-method results of one protocol on one dataset.
#[derive(Clone, Debug)]
struct ProtocolResult {
    /// Fold accuracies per method (`[method][fold]`).
    accuracy: Vec<Vec<f64>>,
    /// Matched average per method (meaningful for SS).
    matched: Vec<f64>,
    /// Summed per-fold wall time per method, seconds.
    seconds: Vec<f64>,
    /// Mean iterations per method.
    iterations: Vec<f64>,
    /// Folds that converged, per method.
    converged: Vec<usize>,
}

/// Runs all methods on all splits (in parallel over splits) and scores them.
fn evaluate(
    ctx: &Context,
    setup: &Setup,
    graph: &RelationalGraph,
    tests: Vec<Vec<usize>>,
    stream: u64,
) -> anyhow::Result<ProtocolResult> {
    let folds = Folds::new(graph.num_nodes(), tests)?;
    let runs = par_cross_validate(&folds, |fold| {
        run_split(ctx, setup, graph, &fold, stream * 64 + fold.index as u64)
            .with_context(|| format!("split {}", fold.index))
    })
    .into_iter()
    .collect::<anyhow::Result<Vec<_>>>()?;
    let m = setup.methods.len();
    let mut res = ProtocolResult {
        accuracy: vec![Vec::new(); m],
        matched: vec![0.0; m],
        seconds: vec![0.0; m],
        iterations: vec![0.0; m],
        converged: vec![0; m],
    };
    let truth: Vec<u32> = graph
        .labels()
        .iter()
        .map(|l| l.unwrap_or(u32::MAX))
        .collect();
    for mi in 0..m {
        let mut matched = MatchedAverage::new(graph.num_nodes());
        for (f, fold_runs) in runs.iter().enumerate() {
            let test = folds
                .test(f)
                .ok_or_else(|| anyhow!("fold {f} out of range"))?;
            let run = &fold_runs[mi];
            let t: Vec<u32> = test.iter().map(|&v| truth[v]).collect();
            res.accuracy[mi].push(accuracy(&run.predicted, &t)?);
            let correct: Vec<bool> = run.predicted.iter().zip(&t).map(|(a, b)| a == b).collect();
            matched.add_split(test, &correct)?;
            res.seconds[mi] += run.seconds;
            res.iterations[mi] += run.iterations as f64 / runs.len() as f64;
            res.converged[mi] += usize::from(run.converged);
        }
        res.matched[mi] = matched.value()?;
    }
    Ok(res)
}

/// How much of the test nodes' neighbourhood is observed in a protocol's splits: the share
/// of (test node, neighbour) pairs whose neighbour is a training node, and the share of
/// tested nodes with no training neighbour at all (averaged over all splits).
fn observed_neighbourhood(graph: &RelationalGraph, tests: &[Vec<usize>]) -> (f64, f64) {
    let (mut observed, mut pairs, mut blind, mut tested) = (0usize, 0usize, 0usize, 0usize);
    let mut in_test = vec![false; graph.num_nodes()];
    for test in tests {
        in_test.iter_mut().for_each(|t| *t = false);
        test.iter().for_each(|&v| in_test[v] = true);
        for &v in test {
            let nb = graph.neighbors(NodeId::new(v));
            let seen = nb.iter().filter(|w| !in_test[w.index()]).count();
            observed += seen;
            pairs += nb.len();
            blind += usize::from(seen == 0);
            tested += 1;
        }
    }
    (
        observed as f64 / pairs.max(1) as f64,
        blind as f64 / tested.max(1) as f64,
    )
}

/// The closing note: every accuracy cell more than 0.02 below the paper.
fn shortfall_note(table: &srl_eval::ResultsTable) -> String {
    let below: Vec<String> = table
        .rows
        .iter()
        .filter(|r| r.metric == "accuracy")
        .filter_map(|r| {
            let p = r.paper?;
            let proto = r.extra.get("protocol")?.as_str()?;
            (r.value < p - 0.02).then(|| {
                format!(
                    "{} {} {} {:.4} vs {:.4}",
                    r.dataset, r.method, proto, r.value, p
                )
            })
        })
        .collect();
    if below.is_empty() {
        "no accuracy is more than 0.02 below the paper".into()
    } else {
        format!(
            "more than 0.02 below the paper: {}. For SS and M cells see the observed-neighbourhood \
             notes: in our snowball test sets far fewer neighbours of a test node are observed than \
             in RS, and SS tests a different (harder) node population, which also lowers \
             content-only accuracy; docs/collective-classification.md has the analysis.",
            below.join("; ")
        )
    }
}

/// Appends the rows of one protocol.
fn push_rows(
    table: &mut srl_eval::ResultsTable,
    dataset: &str,
    protocol: Protocol,
    setup: &Setup,
    res: &ProtocolResult,
) -> anyhow::Result<()> {
    let folds = res.accuracy.first().map_or(0, Vec::len);
    for (mi, method) in setup.methods.iter().enumerate() {
        let name = method.name();
        let p = protocol.name();
        let s = Summary::of(&res.accuracy[mi])?;
        let mut row = ResultRow::new(dataset, name, "accuracy", s.mean)
            .paper(paper(dataset, name, p))
            .with("protocol", p)
            .with("folds", folds);
        if let Some(se) = s.std_error {
            row = row.with("stderr", se);
        }
        table.push(row);
        table.push(
            ResultRow::new(dataset, name, "seconds", res.seconds[mi])
                .with("protocol", p)
                .with("folds", folds)
                .with("iterations", res.iterations[mi])
                .with("converged_folds", res.converged[mi]),
        );
        if protocol == Protocol::Ss {
            table.push(
                ResultRow::new(dataset, name, "accuracy", res.matched[mi])
                    .paper(paper(dataset, name, "M"))
                    .with("protocol", "M")
                    .with("folds", folds),
            );
        }
    }
    Ok(())
}

fn run(ctx: &Context) -> anyhow::Result<Report> {
    let mut table = ctx.table();
    let setup = Setup::new(ctx.quick);
    let (datasets, k, protocols): (&[&str], usize, &[Protocol]) = if ctx.quick {
        (&["cora"], 2, &[Protocol::Rs])
    } else {
        (&["cora", "citeseer"], 10, &[Protocol::Rs, Protocol::Ss])
    };
    table.notes.push(format!(
        "{k}-fold random sampling (RS){}; words as binary features, neighbour labels \
         aggregated by count; ICA: at most {} iterations, random order, bootstrap from \
         observed neighbours; GS: {} burn-in + {} sampling sweeps; LBP/MF: relational Markov \
         network (node: words x class, edge: symmetric label pair, L2 lambda = {}) trained \
         by L-BFGS (at most {} iterations) on the training nodes and the edges among them, \
         marginals from the same inference (LBP: at most {} flooding iterations, MF: at most \
         {} sequential sweeps, tolerance {}), training nodes clamped at test time. seconds = training + inference wall time summed over the folds (each \
         split single-threaded; splits run in parallel on the rayon pool, so totals include \
         contention).",
        if protocols.contains(&Protocol::Ss) {
            format!(", {k} snowball samples (SS) and their matched average (M)")
        } else {
            String::new()
        },
        setup.ica.max_iters,
        setup.gs.burn_in,
        setup.gs.samples,
        setup.mn.lambda,
        setup.mn.max_iters,
        setup.lbp.max_iters,
        setup.mf.max_iters,
        setup.lbp.tol,
    ));
    for (di, &name) in datasets.iter().enumerate() {
        let dir = match ctx.require(name) {
            Ok(d) => d,
            Err(msg) => {
                table.skipped.push(msg);
                continue;
            }
        };
        ctx.log(&format!("loading {}", dir.display()));
        let (graph, _) = load_linqs(&dir, name, &LinqsOptions::default())
            .with_context(|| format!("loading {name}"))?;
        for (pi, &protocol) in protocols.iter().enumerate() {
            let stream = (di * 4 + pi) as u64;
            let mut rng = ctx.rng(1_000_000 + stream);
            let tests: Vec<Vec<usize>> = match protocol {
                Protocol::Rs => KFold::random(graph.num_nodes(), k, &mut rng)?
                    .splits()
                    .map(|s| s.test_nodes().iter().map(|v| v.index()).collect())
                    .collect(),
                Protocol::Ss => snowball_splits(&graph, k, &mut rng)?
                    .iter()
                    .map(|s| s.test_nodes().iter().map(|v| v.index()).collect())
                    .collect(),
            };
            let (seen, blind) = observed_neighbourhood(&graph, &tests);
            table.notes.push(format!(
                "{name} {}: {:.1}% of the test nodes' neighbours are training nodes (observed); \
                 {:.1}% of tested nodes have no observed neighbour; {} distinct nodes tested",
                protocol.name(),
                100.0 * seen,
                100.0 * blind,
                {
                    let mut t: Vec<usize> = tests.iter().flatten().copied().collect();
                    t.sort_unstable();
                    t.dedup();
                    t.len()
                }
            ));
            ctx.log(&format!("{name} {}: {k} splits", protocol.name()));
            let start = Instant::now();
            let res = evaluate(ctx, &setup, &graph, tests, stream)
                .with_context(|| format!("{name} {}", protocol.name()))?;
            ctx.log(&format!(
                "{name} {} done in {:.1} s",
                protocol.name(),
                start.elapsed().as_secs_f64()
            ));
            push_rows(&mut table, name, protocol, &setup, &res)?;
        }
    }
    if ctx.quick {
        table.notes.push(
            "quick run: 2 folds (half the labels hidden) and 10 L-BFGS iterations for the MN, \
             so the paper's 10-fold numbers are not comparable"
                .into(),
        );
    } else if !table.rows.is_empty() {
        let note = shortfall_note(&table);
        table.notes.push(note);
    }
    Ok(Report::new(table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng as _;
    use srl_graph::HomophilyParams;

    fn ctx() -> Context {
        Context {
            data_dir: std::path::PathBuf::from("/nonexistent"),
            quick: true,
            seed: 7,
            out_dir: std::env::temp_dir(),
            name: "collective-classification".into(),
        }
    }

    /// A small homophilous graph with weak attributes: neighbour labels carry most of the
    /// signal, so collective methods must beat content-only ones.
    fn graph() -> RelationalGraph {
        let p = HomophilyParams {
            num_nodes: 150,
            num_labels: 3,
            avg_degree: 6.0,
            homophily: 0.9,
            num_features: 12,
            feature_on: 0.3,
            feature_off: 0.12,
            ..HomophilyParams::default()
        };
        p.generate(&mut ChaCha8Rng::seed_from_u64(3))
            .expect("valid parameters")
    }

    fn small_setup() -> Setup {
        let mut s = Setup::new(true);
        s.gs.burn_in = 20;
        s.gs.samples = 80;
        s
    }

    fn tests_of(g: &RelationalGraph, k: usize) -> Vec<Vec<usize>> {
        KFold::random(g.num_nodes(), k, &mut ChaCha8Rng::seed_from_u64(5))
            .expect("valid k")
            .splits()
            .map(|s| s.test_nodes().iter().map(|v| v.index()).collect())
            .collect()
    }

    #[test]
    fn collective_methods_beat_content_only_on_a_homophilous_graph() {
        let g = graph();
        let setup = small_setup();
        let res = evaluate(&ctx(), &setup, &g, tests_of(&g, 3), 0).expect("runs");
        let mean = |name: &str| {
            let i = setup
                .methods
                .iter()
                .position(|m| m.name() == name)
                .expect("method");
            res.accuracy[i].iter().sum::<f64>() / res.accuracy[i].len() as f64
        };
        for m in &setup.methods {
            let a = mean(m.name());
            // better than chance (3 balanced classes)
            assert!(a > 1.0 / 3.0, "{}: {a}", m.name());
        }
        let all: Vec<(&str, f64)> = setup
            .methods
            .iter()
            .map(|m| (m.name(), mean(m.name())))
            .collect();
        for (cc, co) in [
            ("ICA-NB", "CO-NB"),
            ("GS-NB", "CO-NB"),
            ("ICA-LR", "CO-LR"),
            ("GS-LR", "CO-LR"),
            ("LBP", "CO-LR"),
            ("MF", "CO-LR"),
        ] {
            assert!(mean(cc) > mean(co) + 0.05, "{cc} vs {co}: {all:?}");
        }
        // RS folds partition the nodes: the matched average is the pooled accuracy.
        for i in 0..setup.methods.len() {
            let pooled = res.accuracy[i].iter().sum::<f64>() / res.accuracy[i].len() as f64;
            assert!((res.matched[i] - pooled).abs() < 0.01);
        }
    }

    #[test]
    fn same_seed_same_predictions() {
        let g = graph();
        let setup = small_setup();
        let tests = tests_of(&g, 2);
        let a = evaluate(&ctx(), &setup, &g, tests.clone(), 1).expect("runs");
        let b = evaluate(&ctx(), &setup, &g, tests, 1).expect("runs");
        assert_eq!(a.accuracy, b.accuracy);
        assert_eq!(a.matched, b.matched);
    }

    #[test]
    fn paper_lookup() {
        assert_eq!(paper("cora", "ICA-LR", "RS"), Some(0.8796));
        assert_eq!(paper("citeseer", "MF", "M"), Some(0.7888));
        assert_eq!(paper("cora", "CO-NB", "SS"), Some(0.7285));
        assert_eq!(paper("pubmed", "MF", "M"), None);
        assert_eq!(paper("cora", "MF", "X"), None);
        for m in Method::ALL {
            assert!(paper("cora", m.name(), "RS").is_some(), "{}", m.name());
        }
    }
}
