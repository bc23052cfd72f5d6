//! `sen-getoor-synthetic` and `sen-getoor-intel`: Sen & Getoor (ICML 2006), "Cost-sensitive
//! learning with conditional Markov networks", Figures 1-3. LOGREG, MN (loopy BP marginals +
//! expected-cost minimisation), CSMN and "CSMN w/o CSINF" on the synthetic generator of
//! Algorithms 1-2 (varying ρ and α) and on the Intel-lab snapshots (varying γ), plus
//! diagnostics (MN's 0/1 MAP labelling, node/edge cost split, LBP and CSMN convergence) and
//! two labelled ablations of CSMN that never replace the faithful method.
//!
//! Protocols (docs/srl-learn.md):
//! - `per-graph` (headline, the paper's §6.1 "we produced three datasets and performed 3-fold
//!   cross validation"): per setting and replicate 3 generated graphs; fold f trains on the
//!   disjoint union of the other two (with its cost model) and tests on graph f with nothing
//!   observed; cost = `Σ_h Cost_h(y_h, ỹ_h)` over all nodes and edges of the test graph.
//! - `transductive` and `inductive` (secondary, node folds within one graph): see
//!   [`Protocol`].
//! - Intel: the same protocol over sets of snapshots: every usable snapshot, 3 folds
//!   stratified on the majority light level; train on the disjoint union of two folds' snapshots,
//!   test on the third fold's snapshots with nothing observed; cost = average per test
//!   snapshot.
//!
//! Runs are independent tasks with their own seeded streams, spread over the cores on the
//! rayon pool: the numbers do not depend on the thread count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::Context as _;
use rand::RngExt as _;
use srl_eval::ResultRow;
use srl_eval::metrics::{Summary, paired_t_test, welch_t_test};
use srl_graph::{
    Attributes, CostModel, EdgeCostMatrix, IntelParams, KFold, LevelScaling, NodeId,
    RelationalGraph, SenGetoorParams, load_intel,
};
use srl_infer::{BpMessages, InferError, LoopyBp, MarginalInference, Marginals, PairwiseMrf};
use srl_learn::{
    CostCliques, CostSensitiveMarkovNetworkParams, CsmnInference, GraphMarginals, Lambda,
    LogisticRegressionParams, PolishedMaxProduct, RelationalMarkovNetworkParams,
    WarmStartInference, expected_cost_decision,
};

use crate::context::{Context, Report};
use crate::experiments::Experiment;
use crate::plot::{Series, line_plot};

/// The synthetic experiment's registry entry.
pub fn synthetic() -> Experiment {
    Experiment {
        name: "sen-getoor-synthetic",
        about: "Sen & Getoor 2006 Figures 1-2: LOGREG/MN/CSMN misclassification cost vs rho and alpha",
        run: run_synthetic,
    }
}

/// The Intel-lab experiment's registry entry.
pub fn intel() -> Experiment {
    Experiment {
        name: "sen-getoor-intel",
        about: "Sen & Getoor 2006 Figure 3: LOGREG/MN/CSMN cost on Intel-lab snapshots vs gamma",
        run: run_intel,
    }
}

/// Number of method columns (paper methods, diagnostic, ablations).
const NM: usize = 7;
const LOGREG: usize = 0;
const MN: usize = 1;
const CSMN: usize = 2;
const WO: usize = 3;
const MAP01: usize = 4;
const TRANSPOSED: usize = 5;
const COST_FEATURES: usize = 6;

const METHODS: [&str; NM] = [
    "LOGREG",
    "MN",
    "CSMN",
    "CSMN w/o CSINF",
    "MN 0/1 MAP",
    "CSMN Eq5 transposed",
    "CSMN + cost features",
];

/// What each column is: the paper's four methods, a diagnostic, or an ablation.
const KINDS: [&str; NM] = [
    "paper",
    "paper",
    "paper",
    "paper",
    "diagnostic",
    "ablation",
    "ablation",
];

/// The paper's priors: MN λ = 10, CSMN λ = 20 (§6).
const PAPER_LAMBDAS: (f64, f64) = (10.0, 20.0);

/// Per-run results of every method column.
#[derive(Clone, Debug, Default)]
struct RunResult {
    cost: [f64; NM],
    node_cost: [f64; NM],
    edge_cost: [f64; NM],
    accuracy: [f64; NM],
    /// Whether the column was run (ablations can be off).
    ran: [bool; NM],
    /// Share of the test nodes each method labels 0 (Intel: "low light").
    low_share: [f64; NM],
    csmn_iterations: f64,
    csmn_converged: bool,
    mn_lbp_converged: bool,
    mn_lbp_iterations: f64,
    /// L-BFGS iterations of the MN and CSMN fits.
    fit_iterations: [f64; 2],
    /// Whether the MN and CSMN fits met their gradient tolerance.
    fit_converged: [bool; 2],
    /// LBP inside the MN fit: calls, sweeps, runs that did not converge.
    mn_train_lbp: [f64; 3],
    /// The MN fit's objective evaluations and how L-BFGS ended.
    mn_termination: String,
    /// Seconds in: LOGREG + MN fit, MN marginals + decisions, CSMN fit, CSMN inference,
    /// ablations.
    secs: [f64; 5],
}

/// LBP tolerance (largest log-message change) inside the warm-started MN fit
/// (`Extras::mn_warm`, Intel). Each evaluation's LBP stops within its tolerance of the fixed
/// point, from where the previous evaluation left the messages, so objective and gradient
/// carry an error of that order that changes from evaluation to evaluation. At the default
/// 1e-6 the line searches failed near the optimum (every fit of the quick and full runs ended
/// on the 20-evaluation cap; quick run: gradient norm 1.5e-5 to 6.9e-5 against the tolerance
/// 1e-5); at
/// 1e-8 every fit converges, in about 1.1 evaluations per L-BFGS iteration. The paper gives no
/// LBP tolerance.
const WARM_TRAIN_LBP_TOL: f64 = 1e-8;

fn bp() -> LoopyBp {
    // Plain (undamped, flooding) LBP as the paper uses, 100 sweeps.
    LoopyBp::default()
}

/// [`bp`] that counts its calls, sweeps and non-converged runs (for the training
/// diagnostics: how often LBP failed inside a fit).
#[derive(Debug, Default)]
struct CountingBp {
    inner: LoopyBp,
    calls: AtomicUsize,
    sweeps: AtomicUsize,
    failed: AtomicUsize,
}

impl CountingBp {
    /// `[calls, sweeps, not converged]` so far.
    fn counts(&self) -> [f64; 3] {
        [&self.calls, &self.sweeps, &self.failed].map(|c| c.load(Ordering::Relaxed) as f64)
    }
}

impl WarmStartInference for CountingBp {
    type State = BpMessages;

    fn infer_marginals_from<R: rand::Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        start: Option<&BpMessages>,
        _rng: &mut R,
    ) -> Result<(Marginals, BpMessages), InferError> {
        let (m, state) = self.inner.run_from(mrf, start)?;
        self.count(&m);
        Ok((m, state))
    }
}

impl MarginalInference for CountingBp {
    fn infer_marginals<R: rand::Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> Result<Marginals, InferError> {
        let m = self.inner.infer_marginals(mrf, rng)?;
        self.count(&m);
        Ok(m)
    }
}

impl CountingBp {
    fn count(&self, m: &Marginals) {
        let c = m.convergence();
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.sweeps.fetch_add(c.iterations, Ordering::Relaxed);
        self.failed
            .fetch_add(usize::from(!c.converged), Ordering::Relaxed);
    }
}

/// Maps `f` over `items` on the rayon pool (srl-eval's `par_map`); results in item order,
/// so the outcome does not depend on the thread count; the first error wins.
fn par_map<T: Sync, U: Send>(
    items: &[T],
    f: impl Fn(&T) -> anyhow::Result<U> + Sync,
) -> anyhow::Result<Vec<U>> {
    srl_eval::cv::par_map(items, f).into_iter().collect()
}

/// `graph` with each node's off-diagonal cost entries `Cost_v(a, t)`, `a ≠ t` (row-major),
/// appended to its attributes: the "CSMN + cost features" ablation. Edges keep their ids.
fn with_cost_features(
    graph: &RelationalGraph,
    costs: &CostModel,
) -> anyhow::Result<RelationalGraph> {
    let (d, k) = (graph.num_features(), graph.num_labels());
    let extra = k * (k - 1);
    let mut values = Vec::with_capacity(graph.num_nodes() * (d + extra));
    for v in graph.nodes() {
        values.extend(graph.attributes_of(v).to_dense(d));
        let m = costs.node_matrix(v);
        values.extend((0..k * k).filter(|i| i / k != i % k).map(|i| m[i]));
    }
    Ok(RelationalGraph::new(
        graph.node_names().to_vec(),
        Attributes::Dense {
            num_features: d + extra,
            values,
        },
        graph.labels().to_vec(),
        graph.label_set().clone(),
        graph.edge_list().to_vec(),
        graph.directedness(),
    )?)
}

/// Cost (node, edge) and accuracy of a labelling of `graph` over the test nodes (nodes
/// outside `test` are taken as predicted right, so only test cliques can cost anything).
fn score(
    graph: &RelationalGraph,
    costs: &CostModel,
    pred: &[u32],
    test: &[bool],
) -> anyhow::Result<(f64, f64, f64)> {
    let truth: Vec<u32> = graph.labels().iter().map(|l| l.unwrap_or(0)).collect();
    let mut p = pred.to_vec();
    for v in 0..p.len() {
        if !test[v] {
            p[v] = truth[v];
        }
    }
    let c = costs.misclassification_cost(graph, &p, &truth, None)?;
    let (mut right, mut total) = (0usize, 0usize);
    for v in 0..p.len() {
        if test[v] {
            total += 1;
            right += usize::from(p[v] == truth[v]);
        }
    }
    Ok((c.node, c.edge, right as f64 / total.max(1) as f64))
}

/// How [`run_methods`] runs: the LBP used for every marginal, and what it runs besides the
/// paper's four methods.
#[derive(Clone, Copy, Debug)]
struct Extras {
    /// Loopy BP for MN learning and marginals and CSMN's q-marginals.
    lbp: LoopyBp,
    /// "CSMN Eq5 transposed".
    transposed: bool,
    /// "CSMN + cost features" (only meaningful with per-node costs).
    cost_features: bool,
    /// MN training with LBP per connected component of the training union, each warm-started
    /// from its messages at the previous objective evaluation
    /// (`RelationalMarkovNetworkParams::{per_component, fit_warm_started}`); `false`: one
    /// cold-started LBP on the whole union per evaluation.
    mn_warm: bool,
}

/// Runs every method on one (train, test) pair and every cost model in `costs` (pairs of
/// training and test cost models). LOGREG and MN are trained once; CSMN once per cost model.
#[allow(clippy::too_many_arguments)]
fn run_methods(
    train_graph: &RelationalGraph,
    train: &[bool],
    test_graph: &RelationalGraph,
    evidence: &[Option<u32>],
    test: &[bool],
    costs: &[(&CostModel, &CostModel)],
    lambdas: (f64, f64),
    extras: Extras,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> anyhow::Result<Vec<RunResult>> {
    let t0 = Instant::now();
    let rows: Vec<_> = (0..train_graph.num_nodes())
        .filter(|&v| train[v])
        .map(|v| train_graph.attributes_of(NodeId::new(v)))
        .collect();
    let labels: Vec<u32> = (0..train_graph.num_nodes())
        .filter(|&v| train[v])
        .map(|v| train_graph.label(NodeId::new(v)).unwrap_or(0))
        .collect();
    let lr = LogisticRegressionParams {
        lambda: Lambda::PerSample(1e-4),
        ..Default::default()
    }
    .fit_rows(
        &rows,
        train_graph.num_features(),
        &labels,
        train_graph.num_labels(),
        None,
    )?;
    let counting = CountingBp {
        inner: if extras.mn_warm {
            LoopyBp {
                tol: WARM_TRAIN_LBP_TOL,
                ..extras.lbp
            }
        } else {
            extras.lbp
        },
        ..CountingBp::default()
    };
    let mn_params = RelationalMarkovNetworkParams {
        lambda: lambdas.0,
        per_component: extras.mn_warm,
        ..Default::default()
    };
    let mn = if extras.mn_warm {
        mn_params.fit_warm_started(train_graph, train, &counting, rng)?
    } else {
        mn_params.fit(train_graph, train, &counting, rng)?
    };
    let fit_secs = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let (n, k) = (test_graph.num_nodes(), test_graph.num_labels());
    let map = PolishedMaxProduct::default();
    // LOGREG: IID marginals (observed nodes one-hot), node-cost IID rule.
    let mut probs = vec![0.0; n * k];
    for v in 0..n {
        match evidence.get(v).copied().flatten() {
            Some(l) => probs[v * k + l as usize] = 1.0,
            None => lr.predict_proba_into(
                test_graph.attributes_of(NodeId::new(v)),
                &mut probs[v * k..(v + 1) * k],
            ),
        }
    }
    let lr_marg = GraphMarginals::independent(test_graph, probs)?;
    let mn_marg = mn.marginals(test_graph, evidence, &extras.lbp, rng)?;
    let mn_map = mn.map(test_graph, evidence, &map, rng)?;
    let marg_secs = t1.elapsed().as_secs_f64();
    let mut out = Vec::new();
    for &(tc, cc) in costs {
        let t2 = Instant::now();
        let mut r = RunResult {
            mn_lbp_converged: mn_marg.convergence().converged,
            mn_lbp_iterations: mn_marg.convergence().iterations as f64,
            fit_iterations: [mn.report().iterations as f64, 0.0],
            fit_converged: [mn.report().converged, false],
            mn_train_lbp: counting.counts(),
            mn_termination: format!(
                "{} evaluations, gradient norm {:.2e}, {}",
                mn.report().evaluations,
                mn.report().grad_norm,
                mn.report().termination
            ),
            ..RunResult::default()
        };
        let lr_dec = expected_cost_decision(
            test_graph,
            cc,
            evidence,
            &lr_marg,
            CostCliques::NodesOnly,
            &map,
            rng,
        )?;
        let mn_dec = expected_cost_decision(
            test_graph,
            cc,
            evidence,
            &mn_marg,
            CostCliques::NodesAndEdges,
            &map,
            rng,
        )?;
        let dec_secs = t2.elapsed().as_secs_f64();
        let t3 = Instant::now();
        let csmn_params = CostSensitiveMarkovNetworkParams {
            lambda: lambdas.1,
            ..Default::default()
        };
        let csmn = csmn_params.fit(train_graph, tc, train, &extras.lbp, rng)?;
        let csmn_fit_secs = t3.elapsed().as_secs_f64();
        r.fit_iterations[1] = csmn.report().iterations as f64;
        r.fit_converged[1] = csmn.report().converged;
        let t4 = Instant::now();
        let settings = CsmnInference::default();
        let pred = csmn.predict(test_graph, cc, evidence, &settings, &extras.lbp, &map, rng)?;
        let plain = csmn.predict_without_costs(test_graph, evidence, &map, rng)?;
        let csmn_pred_secs = t4.elapsed().as_secs_f64();
        r.csmn_iterations = pred.iterations as f64;
        r.csmn_converged = pred.converged;
        let t5 = Instant::now();
        let mut labellings: Vec<(usize, Vec<u32>)> = vec![
            (LOGREG, lr_dec.labels),
            (MN, mn_dec.labels),
            (CSMN, pred.labels),
            (WO, plain),
            (MAP01, mn_map.clone()),
        ];
        if extras.transposed {
            // Eq. 5 with l(y', y) = Cost(y, y'): the candidate labelling in the predicted slot
            let tr = csmn.predict(
                test_graph,
                &cc.transposed(),
                evidence,
                &settings,
                &extras.lbp,
                &map,
                rng,
            )?;
            labellings.push((TRANSPOSED, tr.labels));
        }
        if extras.cost_features {
            let tg = with_cost_features(train_graph, tc)?;
            let eg = with_cost_features(test_graph, cc)?;
            let m = csmn_params.fit(&tg, tc, train, &extras.lbp, rng)?;
            let p = m.predict(&eg, cc, evidence, &settings, &extras.lbp, &map, rng)?;
            labellings.push((COST_FEATURES, p.labels));
        }
        for (i, labels) in labellings {
            let tested = (0..labels.len()).filter(|&v| test[v]).count().max(1);
            r.low_share[i] = (0..labels.len())
                .filter(|&v| test[v] && labels[v] == 0)
                .count() as f64
                / tested as f64;
            let (node, edge, acc) = score(test_graph, cc, &labels, test)?;
            r.node_cost[i] = node;
            r.edge_cost[i] = edge;
            r.cost[i] = node + edge;
            r.accuracy[i] = acc;
            r.ran[i] = true;
        }
        r.secs = [
            fit_secs,
            marg_secs + dec_secs,
            csmn_fit_secs,
            csmn_pred_secs,
            t5.elapsed().as_secs_f64(),
        ];
        out.push(r);
    }
    Ok(out)
}

fn summary(values: &[f64]) -> (f64, Option<f64>) {
    match Summary::of(values) {
        Ok(s) => (s.mean, s.std_error),
        Err(_) => (f64::NAN, None),
    }
}

fn pct_below(ours: f64, other: f64) -> f64 {
    100.0 * (other - ours) / other
}

/// One synthetic setting.
#[derive(Clone, Copy, Debug)]
struct Setting {
    rho: f64,
    alpha: f64,
}

impl Setting {
    fn is(&self, rho: f64, alpha: f64) -> bool {
        (self.rho - rho).abs() < 1e-9 && (self.alpha - alpha).abs() < 1e-9
    }
}

/// How the synthetic data are split into training and test data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Protocol {
    /// The paper's (§6.1): 3 graphs per replicate; fold f trains on the disjoint union of
    /// the other two graphs and tests on graph f with nothing observed; cost over all of
    /// graph f's nodes and edges.
    PerGraph,
    /// One graph, 3-fold random node CV: train on the training nodes and the edges among
    /// them; test on the whole graph with the training labels observed (clamped). Cost over
    /// test nodes and edges with a test endpoint.
    Transductive,
    /// Train as above; test on the subgraph induced by the test fold with nothing observed.
    /// Cost over test nodes and edges within the test fold.
    Inductive,
}

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::PerGraph => "per-graph",
            Protocol::Transductive => "transductive",
            Protocol::Inductive => "inductive",
        }
    }
}

/// Generates graph `g` of replicate stream `stream` (same stream, same graphs).
fn generate(
    ctx: &Context,
    s: Setting,
    stream: u64,
    count: usize,
) -> anyhow::Result<Vec<srl_graph::SyntheticGraph>> {
    let mut rng = ctx.rng(stream);
    (0..count)
        .map(|_| {
            SenGetoorParams {
                rho: s.rho,
                alpha: s.alpha,
                ..SenGetoorParams::default()
            }
            .generate(&mut rng)
            .context("generating a synthetic graph")
        })
        .collect()
}

/// One task of a protocol: (setting index, replicate, fold).
type Task = (usize, usize, usize);

/// Runs one (setting, replicate, fold) of `protocol`.
fn run_task(
    ctx: &Context,
    protocol: Protocol,
    settings: &[Setting],
    (si, d, f): Task,
    extras: Extras,
) -> anyhow::Result<(RunResult, f64)> {
    let s = settings[si];
    let mut rng = ctx.rng(10_000_000 + 100_000 * si as u64 + 100 * d as u64 + f as u64);
    let r = match protocol {
        Protocol::PerGraph => {
            let graphs = generate(ctx, s, 1_000_000 + 1000 * si as u64 + d as u64, 3)?;
            let others: Vec<&srl_graph::SyntheticGraph> =
                (0..3).filter(|&g| g != f).map(|g| &graphs[g]).collect();
            let parts: Vec<&RelationalGraph> = others.iter().map(|s| &s.graph).collect();
            let (union, offsets) = RelationalGraph::disjoint_union(&parts)?;
            let pc: Vec<(&RelationalGraph, &CostModel)> =
                others.iter().map(|s| (&s.graph, &s.costs)).collect();
            let uc = CostModel::disjoint_union(&pc, &union, &offsets)?;
            let test = &graphs[f];
            let all_train = vec![true; union.num_nodes()];
            let all_test = vec![true; test.graph.num_nodes()];
            let edges = test.graph.num_edges() as f64;
            let r = run_methods(
                &union,
                &all_train,
                &test.graph,
                &[],
                &all_test,
                &[(&uc, &test.costs)],
                PAPER_LAMBDAS,
                extras,
                &mut rng,
            )?;
            return Ok((r.into_iter().next().context("no run")?, edges));
        }
        Protocol::Transductive | Protocol::Inductive => {
            let mut grng = ctx.rng(1000 * si as u64 + d as u64);
            let syn = SenGetoorParams {
                rho: s.rho,
                alpha: s.alpha,
                ..SenGetoorParams::default()
            }
            .generate(&mut grng)
            .context("generating a synthetic graph")?;
            let folds = KFold::random(syn.graph.num_nodes(), 3, &mut grng)?;
            let split = folds.split(f);
            let test = split.test_mask().to_vec();
            let train = split.train_mask();
            let edges = syn.graph.num_edges() as f64;
            let r = if protocol == Protocol::Transductive {
                let evidence = split.observed_labels(&syn.graph)?;
                run_methods(
                    &syn.graph,
                    &train,
                    &syn.graph,
                    &evidence,
                    &test,
                    &[(&syn.costs, &syn.costs)],
                    PAPER_LAMBDAS,
                    extras,
                    &mut rng,
                )?
            } else {
                let (tg, kept) = syn.graph.induced_subgraph(&test)?;
                let tc = syn.costs.induced(&syn.graph, &tg, &kept)?;
                let all = vec![true; tg.num_nodes()];
                run_methods(
                    &syn.graph,
                    &train,
                    &tg,
                    &[],
                    &all,
                    &[(&syn.costs, &tc)],
                    PAPER_LAMBDAS,
                    extras,
                    &mut rng,
                )?
            };
            (r, edges)
        }
    };
    Ok((r.0.into_iter().next().context("no run")?, r.1))
}

/// The runs of every setting of one protocol.
type SettingRuns = Vec<(Setting, Vec<RunResult>)>;

fn run_protocol(
    ctx: &Context,
    protocol: Protocol,
    settings: &[Setting],
    replicates: usize,
    folds_run: usize,
    extras: Extras,
    edges_seen: &mut Vec<f64>,
) -> anyhow::Result<SettingRuns> {
    let tasks: Vec<Task> = (0..settings.len())
        .flat_map(|si| (0..replicates).flat_map(move |d| (0..folds_run).map(move |f| (si, d, f))))
        .collect();
    let pb = ctx.progress(tasks.len() as u64, protocol.name());
    let start = Instant::now();
    let results = par_map(&tasks, |&t| {
        let r = run_task(ctx, protocol, settings, t, extras);
        pb.inc(1);
        r
    })?;
    pb.finish_and_clear();
    let mut per: SettingRuns = settings.iter().map(|s| (*s, Vec::new())).collect();
    let mut secs = [0.0; 5];
    let mut iters = [0.0; 2];
    for (&(si, _, _), (r, edges)) in tasks.iter().zip(results) {
        iters[0] += r.fit_iterations[0] / tasks.len() as f64;
        iters[1] += r.fit_iterations[1] / tasks.len() as f64;
        edges_seen.push(edges);
        for (a, b) in secs.iter_mut().zip(r.secs) {
            *a += b;
        }
        per[si].1.push(r);
    }
    ctx.log(&format!(
        "{}: {} runs in {:.1?}; wall seconds summed over the parallel runs (not CPU time) in LOGREG+MN fit {:.0}, MN marginals+decisions {:.0}, CSMN fit {:.0}, \
         CSMN inference {:.0}, ablations {:.0}; mean L-BFGS iterations MN {:.0}, CSMN {:.0}",
        protocol.name(),
        tasks.len(),
        start.elapsed(),
        secs[0],
        secs[1],
        secs[2],
        secs[3],
        secs[4],
        iters[0],
        iters[1]
    ));
    for (s, runs) in &per {
        let m = |i: usize| summary(&runs.iter().map(|r| r.cost[i]).collect::<Vec<_>>()).0;
        ctx.log(&format!(
            "{} rho {:.2} alpha {:.2}: cost LOGREG {:.2} MN {:.2} CSMN {:.2} w/o {:.2} MN-MAP {:.2}",
            protocol.name(),
            s.rho,
            s.alpha,
            m(LOGREG),
            m(MN),
            m(CSMN),
            m(WO),
            m(MAP01)
        ));
    }
    Ok(per)
}

/// The paper's stated numbers for a (setting, method, metric) cell.
fn paper_cell(s: &Setting, method: &str, metric: &str) -> Option<f64> {
    match (method, metric) {
        ("CSMN", "accuracy") if s.is(0.75, 0.25) => Some(0.8044),
        ("MN", "accuracy") if s.is(0.75, 0.25) => Some(0.8188),
        ("CSMN", "cost_reduction_vs_logreg_pct") if s.is(0.8, 0.25) => Some(8.19),
        ("CSMN", "cost_reduction_vs_logreg_pct") if s.is(1.0, 0.25) => Some(38.87),
        ("CSMN", "cost_reduction_vs_logreg_pct") if s.is(0.85, 0.4) => Some(13.26),
        ("CSMN", "cost_reduction_vs_mn_pct") if s.is(0.85, 0.4) => Some(63.52),
        _ => None,
    }
}

/// Per setting: mean cost of each method column (NaN when not run).
fn mean_costs(runs: &[RunResult]) -> [f64; NM] {
    std::array::from_fn(|i| {
        if runs.iter().all(|r| r.ran[i]) {
            summary(&runs.iter().map(|r| r.cost[i]).collect::<Vec<_>>()).0
        } else {
            f64::NAN
        }
    })
}

/// The method pairs tested per setting: (A, B) tests mean cost of A = mean cost of B.
const TESTS: [(usize, usize); 6] = [
    (CSMN, MN),
    (CSMN, LOGREG),
    (WO, CSMN),
    (MN, MAP01),
    (TRANSPOSED, CSMN),
    (COST_FEATURES, CSMN),
];

/// Paired (over the same test folds) and Welch p-values of the pairs in [`TESTS`].
fn p_values(runs: &[RunResult]) -> Vec<(usize, usize, f64, f64)> {
    TESTS
        .iter()
        .filter(|(a, b)| runs.iter().all(|r| r.ran[*a] && r.ran[*b]))
        .filter_map(|&(a, b)| {
            let x: Vec<f64> = runs.iter().map(|r| r.cost[a]).collect();
            let y: Vec<f64> = runs.iter().map(|r| r.cost[b]).collect();
            let paired = paired_t_test(&x, &y).ok()?;
            let welch = welch_t_test(&x, &y).ok()?;
            Some((a, b, paired.p_value, welch.p_value))
        })
        .collect()
}

/// Pushes the rows of one protocol and returns its plots.
fn report_protocol(
    table: &mut srl_eval::ResultsTable,
    protocol: Protocol,
    per: &SettingRuns,
) -> anyhow::Result<Vec<(String, String)>> {
    let p = protocol.name();
    let lam = |i: usize| -> serde_json::Value {
        match i {
            LOGREG => "|Y|·1e-4".into(),
            MN | MAP01 => PAPER_LAMBDAS.0.into(),
            _ => PAPER_LAMBDAS.1.into(),
        }
    };
    let empty = |cols: &[usize]| -> Vec<Series> {
        cols.iter()
            .map(|&i| Series {
                label: METHODS[i].to_string(),
                points: Vec::new(),
                errors: Vec::new(),
            })
            .collect()
    };
    let cols: Vec<usize> = (0..NM)
        .filter(|&i| per.iter().all(|(_, r)| r.iter().all(|x| x.ran[i])))
        .collect();
    let (mut fig1, mut fig2, mut fig1_acc) = (empty(&cols), empty(&cols), empty(&cols));
    let mut below = [(0usize, 0usize, 0usize); 2];
    for (s, runs) in per {
        let base = |r: ResultRow| -> ResultRow {
            r.with("protocol", p)
                .with("rho", s.rho)
                .with("alpha", s.alpha)
                .with("runs", runs.len() as u64)
        };
        for (ci, &i) in cols.iter().enumerate() {
            for (metric, vals) in [
                ("cost", runs.iter().map(|r| r.cost[i]).collect::<Vec<_>>()),
                (
                    "node_cost",
                    runs.iter().map(|r| r.node_cost[i]).collect::<Vec<_>>(),
                ),
                (
                    "edge_cost",
                    runs.iter().map(|r| r.edge_cost[i]).collect::<Vec<_>>(),
                ),
                (
                    "accuracy",
                    runs.iter().map(|r| r.accuracy[i]).collect::<Vec<_>>(),
                ),
            ] {
                let (m, se) = summary(&vals);
                let mut row = base(
                    ResultRow::new("synthetic", METHODS[i], metric, m)
                        .paper(paper_cell(s, METHODS[i], metric)),
                )
                .with("kind", KINDS[i])
                .with("lambda", lam(i));
                if let Some(se) = se {
                    row = row.with("stderr", se);
                }
                table.push(row);
                if metric == "cost" {
                    if (s.alpha - 0.25).abs() < 1e-9 {
                        fig1[ci].points.push((s.rho, m));
                        fig1[ci].errors.push(se.unwrap_or(0.0));
                    }
                    if (s.rho - 0.85).abs() < 1e-9 {
                        fig2[ci].points.push((s.alpha, m));
                        fig2[ci].errors.push(se.unwrap_or(0.0));
                    }
                }
                if metric == "accuracy" && (s.alpha - 0.25).abs() < 1e-9 {
                    fig1_acc[ci].points.push((s.rho, m));
                    fig1_acc[ci].errors.push(se.unwrap_or(0.0));
                }
            }
        }
        // diagnostics
        let count = |f: &dyn Fn(&RunResult) -> bool| runs.iter().filter(|r| f(r)).count() as f64;
        let (it, it_se) = summary(&runs.iter().map(|r| r.csmn_iterations).collect::<Vec<_>>());
        let mut row = base(ResultRow::new("synthetic", "CSMN", "inference_rounds", it))
            .with("kind", "diagnostic");
        if let Some(se) = it_se {
            row = row.with("stderr", se);
        }
        table.push(row);
        table.push(
            base(ResultRow::new(
                "synthetic",
                "CSMN",
                "inference_converged_count",
                count(&|r| r.csmn_converged),
            ))
            .with("kind", "diagnostic"),
        );
        table.push(
            base(ResultRow::new(
                "synthetic",
                "MN",
                "lbp_converged_count",
                count(&|r| r.mn_lbp_converged),
            ))
            .with("kind", "diagnostic"),
        );
        for (mi, name) in [(0, "MN"), (1, "CSMN")] {
            table.push(
                base(ResultRow::new(
                    "synthetic",
                    name,
                    "fit_converged_count",
                    count(&|r| r.fit_converged[mi]),
                ))
                .with("kind", "diagnostic"),
            );
            table.push(
                base(ResultRow::new(
                    "synthetic",
                    name,
                    "fit_iterations",
                    summary(
                        &runs
                            .iter()
                            .map(|r| r.fit_iterations[mi])
                            .collect::<Vec<_>>(),
                    )
                    .0,
                ))
                .with("kind", "diagnostic"),
            );
        }
        for (j, metric) in [
            "train_lbp_calls",
            "train_lbp_sweeps",
            "train_lbp_not_converged",
        ]
        .into_iter()
        .enumerate()
        {
            table.push(
                base(ResultRow::new(
                    "synthetic",
                    "MN",
                    metric,
                    summary(&runs.iter().map(|r| r.mn_train_lbp[j]).collect::<Vec<_>>()).0,
                ))
                .with("kind", "diagnostic"),
            );
        }
        table.push(
            base(ResultRow::new(
                "synthetic",
                "MN",
                "runs_above_logreg",
                count(&|r| r.cost[MN] > r.cost[LOGREG]),
            ))
            .with("kind", "diagnostic"),
        );
        table.push(
            base(ResultRow::new(
                "synthetic",
                "MN",
                "lbp_sweeps",
                summary(&runs.iter().map(|r| r.mn_lbp_iterations).collect::<Vec<_>>()).0,
            ))
            .with("kind", "diagnostic"),
        );
        // reductions and tests
        let means = mean_costs(runs);
        for (metric, other) in [
            ("cost_reduction_vs_logreg_pct", means[LOGREG]),
            ("cost_reduction_vs_mn_pct", means[MN]),
        ] {
            table.push(
                base(
                    ResultRow::new("synthetic", "CSMN", metric, pct_below(means[CSMN], other))
                        .paper(paper_cell(s, "CSMN", metric)),
                )
                .with("kind", "paper"),
            );
        }
        let pv = p_values(runs);
        for &(a, b, paired, welch) in &pv {
            for (test, v) in [("paired", paired), ("welch", welch)] {
                table.push(
                    base(ResultRow::new(
                        "synthetic",
                        format!("{} vs {}", METHODS[a], METHODS[b]),
                        "p_value",
                        v,
                    ))
                    .with("test", test)
                    .with(
                        "kind",
                        if a >= MAP01 || b >= MAP01 {
                            "diagnostic"
                        } else {
                            "paper"
                        },
                    ),
                );
            }
        }
        for (j, other) in [MN, LOGREG].into_iter().enumerate() {
            let sig = pv
                .iter()
                .find(|x| x.0 == CSMN && x.1 == other)
                .is_some_and(|x| x.2 < 0.05);
            below[j].0 += 1;
            if means[CSMN] < means[other] {
                below[j].1 += 1;
                below[j].2 += usize::from(sig);
            }
        }
    }
    table.notes.push(format!(
        "{p}: CSMN's mean cost is below MN's in {} of {} settings ({} with paired p < 0.05) and below LOGREG's in \
         {} of {} ({} with p < 0.05); the paper has CSMN below MN at every setting.",
        below[0].1, below[0].0, below[0].2, below[1].1, below[1].0, below[1].2
    ));
    let what = if protocol == Protocol::PerGraph {
        "cost per test graph"
    } else {
        "cost per test fold"
    };
    let mut plots = vec![
        (
            format!("figure1_cost_vs_rho_{p}.svg"),
            line_plot(
                &format!("Sen & Getoor Fig. 1 ({p}): cost vs rho, alpha = 0.25 (± stderr)"),
                "rho",
                what,
                &fig1,
            )?,
        ),
        (
            format!("figure1_accuracy_vs_rho_{p}.svg"),
            line_plot(
                &format!("Accuracy vs rho ({p}), alpha = 0.25 (± stderr)"),
                "rho",
                "accuracy",
                &fig1_acc,
            )?,
        ),
    ];
    if fig2.iter().any(|s| s.points.len() > 1) {
        plots.push((
            format!("figure2_cost_vs_alpha_{p}.svg"),
            line_plot(
                &format!("Sen & Getoor Fig. 2 ({p}): cost vs alpha, rho = 0.85 (± stderr)"),
                "alpha",
                what,
                &fig2,
            )?,
        ));
    }
    Ok(plots)
}

/// One-line summaries per setting and the paper's claims, judged from the per-graph runs.
fn claims_notes(per: &SettingRuns) -> Vec<String> {
    let mut notes = Vec::new();
    let fmt = |runs: &[RunResult], i: usize| -> String {
        let (m, se) = summary(&runs.iter().map(|r| r.cost[i]).collect::<Vec<_>>());
        format!("{m:.1} ± {:.1}", se.unwrap_or(f64::NAN))
    };
    let mut lines = Vec::new();
    for (s, runs) in per {
        let pv = p_values(runs);
        let p_of = |a: usize, b: usize| {
            pv.iter()
                .find(|x| x.0 == a && x.1 == b)
                .map_or("n/a".to_string(), |x| srl_eval::format_value(x.2))
        };
        let nodes = |i: usize| summary(&runs.iter().map(|r| r.node_cost[i]).collect::<Vec<_>>()).0;
        lines.push(format!(
            "ρ {:.2} α {:.2} ({} runs): LOGREG {}, MN {}, CSMN {}, w/o CSINF {}, MN 0/1 MAP {}; node cost LOGREG {:.1} \
             MN {:.1} CSMN {:.1} MAP {:.1}; paired p CSMN vs MN {}, vs LOGREG {}; MN test LBP converged {}/{}, MN fit converged {}/{}, MN above LOGREG in {} runs; CSMN rounds {:.1}",
            s.rho,
            s.alpha,
            runs.len(),
            fmt(runs, LOGREG),
            fmt(runs, MN),
            fmt(runs, CSMN),
            fmt(runs, WO),
            fmt(runs, MAP01),
            nodes(LOGREG),
            nodes(MN),
            nodes(CSMN),
            nodes(MAP01),
            p_of(CSMN, MN),
            p_of(CSMN, LOGREG),
            runs.iter().filter(|r| r.mn_lbp_converged).count(),
            runs.len(),
            runs.iter().filter(|r| r.fit_converged[0]).count(),
            runs.len(),
            runs.iter().filter(|r| r.cost[MN] > r.cost[LOGREG]).count(),
            summary(&runs.iter().map(|r| r.csmn_iterations).collect::<Vec<_>>()).0,
        ));
    }
    notes.push(format!(
        "per-graph summary (mean cost per test graph ± stderr): {}",
        lines.join(" | ")
    ));
    // The claims, each judged on the numbers above.
    let at = |rho: f64, alpha: f64| per.iter().find(|(s, _)| s.is(rho, alpha));
    let red = |rho: f64, alpha: f64, other: usize| -> Option<f64> {
        at(rho, alpha).map(|(_, r)| {
            let m = mean_costs(r);
            pct_below(m[CSMN], m[other])
        })
    };
    let show = |x: Option<f64>| x.map_or("not run".to_string(), |v| format!("{v:.1} %"));
    notes.push(format!(
        "Claim CSMN < LOGREG (paper: 8.19 % lower at ρ 0.8, 38.87 % at ρ 1.0, 13.26 % at α 0.4): per-graph {} at ρ 0.8, {} \
         at ρ 1.0, {} at α 0.4 (positive = CSMN lower).",
        show(red(0.8, 0.25, LOGREG)),
        show(red(1.0, 0.25, LOGREG)),
        show(red(0.85, 0.4, LOGREG))
    ));
    notes.push(format!(
        "Claim CSMN < MN at every setting (paper: 63.52 % lower at α 0.4): per-graph {} at α 0.4; see the count above.",
        show(red(0.85, 0.4, MN))
    ));
    let high: Vec<&(Setting, Vec<RunResult>)> = per
        .iter()
        .filter(|(s, _)| (s.alpha - 0.25).abs() < 1e-9 && s.rho >= 0.85 - 1e-9)
        .collect();
    let mn_worse_lr = high
        .iter()
        .filter(|(_, r)| {
            let m = mean_costs(r);
            m[MN] > m[LOGREG]
        })
        .count();
    let lbp_fail: usize = per
        .iter()
        .filter(|(s, _)| s.rho >= 0.85 - 1e-9)
        .map(|(_, r)| r.iter().filter(|x| !x.mn_lbp_converged).count())
        .sum();
    let lbp_total: usize = per
        .iter()
        .filter(|(s, _)| s.rho >= 0.85 - 1e-9)
        .map(|(_, r)| r.len())
        .sum();
    let mn_worse_map = per
        .iter()
        .filter(|(_, r)| {
            let m = mean_costs(r);
            m[MN] > m[MAP01]
        })
        .count();
    let runs_above: usize = high
        .iter()
        .map(|(_, r)| r.iter().filter(|x| x.cost[MN] > x.cost[LOGREG]).count())
        .sum();
    let runs_high: usize = high.iter().map(|(_, r)| r.len()).sum();
    notes.push(format!(
        "Claim MN fails at ρ ≥ 0.85 (paper: very high cost, blamed on LBP): per-graph MN is above LOGREG in {mn_worse_lr} \
         of {} settings with ρ ≥ 0.85 (α 0.25) and in {runs_above} of {runs_high} single runs there; MN's test-time LBP did not converge in {lbp_fail} of {lbp_total} runs at ρ ≥ 0.85; \
         MN's expected-cost decision is worse than its own 0/1 MAP labelling in {mn_worse_map} of {} settings.",
        high.len(),
        per.len()
    ));
    let wo: Vec<String> = [0.7, 0.8]
        .iter()
        .filter_map(|&rho| {
            at(rho, 0.25).map(|(_, r)| {
                let m = mean_costs(r);
                format!("ρ {rho}: w/o CSINF {:.1} vs CSMN {:.1}", m[WO], m[CSMN])
            })
        })
        .collect();
    let wo_worse = per
        .iter()
        .filter(|(_, r)| {
            let m = mean_costs(r);
            m[WO] > m[CSMN]
        })
        .count();
    notes.push(format!(
        "Claim CSMN w/o CSINF performs poorly (paper: at ρ 0.7, 0.8): per-graph {}; w/o CSINF costs more than CSMN in \
         {wo_worse} of {} settings.",
        if wo.is_empty() {
            "ρ 0.7 / 0.8 not run".to_string()
        } else {
            wo.join(", ")
        },
        per.len()
    ));
    notes
}

fn run_synthetic(ctx: &Context) -> anyhow::Result<Report> {
    let mut table = ctx.table();
    let (rhos, alphas): (Vec<f64>, Vec<f64>) = if ctx.quick {
        (vec![0.5, 0.8, 1.0], vec![])
    } else {
        (
            (0..=10).map(|i| f64::from(50 + 5 * i) / 100.0).collect(),
            vec![0.0, 0.1, 0.2, 0.3, 0.4],
        )
    };
    let mut settings: Vec<Setting> = rhos
        .iter()
        .map(|&rho| Setting { rho, alpha: 0.25 })
        .collect();
    for &alpha in &alphas {
        if (alpha - 0.25f64).abs() > 1e-9 {
            settings.push(Setting { rho: 0.85, alpha });
        }
    }
    // per-graph: replicates x 3 graph folds; secondary: graphs x node folds
    let (replicates, secondary) = if ctx.quick { (1, (1, 1)) } else { (5, (3, 3)) };
    let start = Instant::now();
    let mut edges_seen = Vec::new();
    let mut plots = Vec::new();
    let extras = Extras {
        lbp: bp(),
        transposed: true,
        cost_features: true,
        mn_warm: false,
    };
    let per_graph = run_protocol(
        ctx,
        Protocol::PerGraph,
        &settings,
        replicates,
        3,
        extras,
        &mut edges_seen,
    )?;
    plots.extend(report_protocol(&mut table, Protocol::PerGraph, &per_graph)?);
    let headline_secs = start.elapsed();
    table.notes.extend(claims_notes(&per_graph));
    let plain = Extras {
        lbp: bp(),
        transposed: false,
        cost_features: false,
        mn_warm: false,
    };
    for protocol in [Protocol::Transductive, Protocol::Inductive] {
        let per = run_protocol(
            ctx,
            protocol,
            &settings,
            secondary.0,
            secondary.1,
            plain,
            &mut edges_seen,
        )?;
        plots.extend(report_protocol(&mut table, protocol, &per)?);
    }
    table.notes.push(format!(
        "per-graph (headline, the paper's §6.1): {replicates} replicate(s) x 3 generated graphs per setting; fold f trains \
         on the disjoint union of the other two graphs (cost matrices carried over by node pair) and tests on graph f with \
         nothing observed; cost = Σ_h Cost_h over all nodes and edges of the test graph; {} runs per setting. Secondary \
         protocols (node folds within one graph): {} graph(s) x {} fold(s); transductive = training labels observed, cost \
         over test nodes and edges with a test endpoint; inductive = the subgraph induced by the test fold, nothing \
         observed. 300 nodes per graph, mean {:.0} edges (the paper: about 400). p-values: two-sided paired t-test over \
         the runs of a setting (same test graphs) and Welch's test, rows with metric `p_value`. Wall time {:.0?} \
         (per-graph {:.0?}).",
        replicates * 3,
        secondary.0,
        secondary.1,
        summary(&edges_seen).0,
        start.elapsed(),
        headline_secs
    ));
    table.notes.push(
        "Rows with kind `diagnostic`: MN 0/1 MAP (MN's most probable labelling, costs ignored), node_cost / edge_cost (the \
         two parts of every method's cost), MN lbp_converged_count and lbp_sweeps (test-time LBP), CSMN inference_rounds \
         and inference_converged_count (the two-step inference). kind `ablation`, never replacing CSMN: `CSMN Eq5 \
         transposed` (the same fitted CSMN, inference with l(y', y) = Cost(y, y'), the candidate labelling in the \
         predicted slot) and `CSMN + cost features` (CSMN fitted and run with each node's off-diagonal cost entries \
         appended to its attributes)."
            .into(),
    );
    table.notes.push(
        "Paper (Sen & Getoor 2006, §6.2): CSMN 8.19 % below LOGREG at rho = 0.8 and 38.87 % at rho = 1.0; accuracy at \
         rho = 0.75 CSMN 80.44 % vs MN 81.88 %; MN degrades sharply for rho >= 0.85 (LBP on short cycles); at alpha = 0.4 \
         CSMN 63.52 % below MN and 13.26 % below LOGREG. The paper's figures print no absolute costs, so only these cells \
         carry a `paper` value (every protocol)."
            .into(),
    );
    table.notes.push(
        "Settings: LOGREG λ = |Y|·1e-4 (IID node-cost rule); MN λ = 10 and CSMN λ = 20 (the paper's values); prior λ‖w‖² \
         without the intercepts; undamped flooding LBP (100 sweeps, tol 1e-6) for all marginals, MAP by max-product + ICM \
         polish; CSMN inference stops when the labelling repeats or Eq. 5 changes < 1e-6 (relative), at most 20 rounds, \
         and returns the visited labelling with the lowest Eq. 5 (Bethe)."
            .into(),
    );
    Ok(Report { table, plots })
}

/// Intel-lab snapshots of the quick run (a random subset of the usable ones); the full run
/// uses every usable snapshot (1163). MN is trained with per-component, warm-started LBP
/// (`Extras::mn_warm`, docs/srl-learn.md), which is what makes all of them fit the time
/// budget.
const QUICK_INTEL_SNAPSHOTS: usize = 30;

/// The majority light level of a snapshot (ties to the lower level).
fn majority_level(g: &RelationalGraph) -> usize {
    let mut c = [0usize; 3];
    for l in g.labels().iter().flatten() {
        c[(*l as usize).min(2)] += 1;
    }
    (0..3)
        .max_by_key(|&i| (c[i], std::cmp::Reverse(i)))
        .unwrap_or(0)
}

/// Per Intel fold and γ: the run and the number of test snapshots.
type IntelRun = (RunResult, usize);

/// The edge-cost variants of the Intel sensitivity check (issue 31), each with the node
/// matrix of [`CostModel::intel_light`] at `gamma`: `none` (no edge costs),
/// `dark-and-waste` (the reconstruction's γ per endpoint that is truly low but predicted
/// lit, plus 1 per endpoint that is truly lit but predicted low) and `per-level` (each
/// endpoint's node cost).
fn intel_edge_variants(gamma: f64) -> anyhow::Result<Vec<(&'static str, CostModel)>> {
    let base = CostModel::intel_light(gamma, LevelScaling::PerLevel)?;
    let node = base
        .shared_node_matrix()
        .context("the Intel node costs are one shared matrix")?;
    let k = node.num_labels();
    let d = k * k;
    let edge = |per_endpoint: &dyn Fn(usize, usize) -> f64| -> anyhow::Result<EdgeCostMatrix> {
        let mut v = vec![0.0; d * d];
        for row in 0..d {
            let (pu, pv) = (row / k, row % k);
            for col in 0..d {
                let (tu, tv) = (col / k, col % k);
                v[row * d + col] = per_endpoint(pu, tu) + per_endpoint(pv, tv);
            }
        }
        Ok(EdgeCostMatrix::new(k, v)?)
    };
    let dark_and_waste = edge(&|p, t| {
        if t == 0 && p != 0 {
            gamma
        } else if t != 0 && p == 0 {
            1.0
        } else {
            0.0
        }
    })?;
    let per_level = edge(&|p, t| node.get(p, t))?;
    Ok(vec![
        ("none", CostModel::shared(node.clone(), None)?),
        (
            "dark-and-waste",
            CostModel::shared(node.clone(), Some(dark_and_waste))?,
        ),
        ("per-level", CostModel::shared(node, Some(per_level))?),
    ])
}

fn run_intel(ctx: &Context) -> anyhow::Result<Report> {
    let mut table = ctx.table();
    let dir = match ctx.require("intel_lab") {
        Ok(p) => p,
        Err(msg) => {
            table.skipped.push(msg);
            return Ok(Report::new(table));
        }
    };
    let start = Instant::now();
    let data = load_intel(&dir, &IntelParams::default()).context("loading intel_lab")?;
    let load_secs = start.elapsed();
    ctx.log(&format!(
        "{} snapshots loaded in {load_secs:.1?}",
        data.snapshots.len()
    ));
    let gammas = [0.5, 1.0, 1.5];
    let mut rng = ctx.rng(7);
    // quick: a random subset of the usable snapshots, kept in time order; full: all of them
    let mut idx: Vec<usize> = (0..data.snapshots.len()).collect();
    for i in (1..idx.len()).rev() {
        let j = rng.random_range(0..=i);
        idx.swap(i, j);
    }
    if ctx.quick {
        idx.truncate(QUICK_INTEL_SNAPSHOTS);
    }
    idx.sort_unstable();
    let snaps: Vec<&RelationalGraph> = idx.iter().map(|&i| &data.snapshots[i].graph).collect();
    let majority: Vec<usize> = snaps.iter().map(|g| majority_level(g)).collect();
    let folds = KFold::stratified(&majority, 3, &mut rng)?;
    let fold_of = folds.fold_of();
    let costs: Vec<CostModel> = gammas
        .iter()
        .map(|&g| CostModel::intel_light(g, LevelScaling::PerLevel))
        .collect::<Result<_, _>>()?;
    // Edge-cost sensitivity (issue 31), with SRL_INTEL_EDGE_SENSITIVITY set: the paper
    // prints no cost matrices and the edge matrix is our reconstruction, so at γ = 1 CSMN
    // is also trained and every method scored under other plausible edge matrices (after
    // the γ runs, so their random streams and results are unchanged). Off by default: the
    // three extra CSMN fits per fold take about 10x the experiment's time.
    let sensitivity = if std::env::var_os("SRL_INTEL_EDGE_SENSITIVITY").is_some() {
        intel_edge_variants(1.0)?
    } else {
        Vec::new()
    };
    let mut pairs: Vec<(&CostModel, &CostModel)> = costs.iter().map(|c| (c, c)).collect();
    pairs.extend(sensitivity.iter().map(|(_, c)| (c, c)));
    let folds_run: Vec<usize> = (0..3).collect();
    let extras = Extras {
        lbp: bp(),
        transposed: true,
        cost_features: false,
        mn_warm: true,
    };
    let per_fold: Vec<Vec<IntelRun>> = par_map(&folds_run, |&f| {
        let pick = |inside: bool| -> Vec<&RelationalGraph> {
            (0..snaps.len())
                .filter(|&i| (fold_of[i] as usize == f) == inside)
                .map(|i| snaps[i])
                .collect()
        };
        let (train_g, test_g) = (pick(false), pick(true));
        let (train, _) = RelationalGraph::disjoint_union(&train_g)?;
        let (test, _) = RelationalGraph::disjoint_union(&test_g)?;
        let mask = vec![true; train.num_nodes()];
        let test_mask = vec![true; test.num_nodes()];
        let mut frng = ctx.rng(100 + f as u64);
        let t = Instant::now();
        let runs = run_methods(
            &train,
            &mask,
            &test,
            &[],
            &test_mask,
            &pairs,
            PAPER_LAMBDAS,
            extras,
            &mut frng,
        )?;
        let r0 = runs.first().context("no run")?;
        ctx.log(&format!(
            "fold {f}: {} train / {} test snapshots ({} / {} nodes) in {:.1?}; MN fit {:.1} s, {} L-BFGS iterations \
             (converged {}; {}), training LBP calls / sweeps / not converged {:?}",
            train_g.len(),
            test_g.len(),
            train.num_nodes(),
            test.num_nodes(),
            t.elapsed(),
            r0.secs[0],
            r0.fit_iterations[0],
            r0.fit_converged[0],
            r0.mn_termination,
            r0.mn_train_lbp
        ));
        Ok(runs.into_iter().map(|r| (r, test_g.len())).collect())
    })?;
    let mut secs = [0.0; 5];
    for r in per_fold.iter().flatten() {
        for (a, b) in secs.iter_mut().zip(r.0.secs) {
            *a += b;
        }
    }
    let cols: Vec<usize> = (0..NM)
        .filter(|&i| per_fold.iter().flatten().all(|r| r.0.ran[i]))
        .collect();
    let mut fig3: Vec<Series> = cols
        .iter()
        .map(|&i| Series {
            label: METHODS[i].to_string(),
            points: Vec::new(),
            errors: Vec::new(),
        })
        .collect();
    let mut claim = String::new();
    for (gi, &gamma) in gammas.iter().enumerate() {
        let runs: Vec<&IntelRun> = per_fold.iter().map(|f| &f[gi]).collect();
        let per_snap = |x: f64, r: &IntelRun| x / r.1 as f64;
        let mut means = [f64::NAN; NM];
        for (ci, &i) in cols.iter().enumerate() {
            for metric in ["cost", "node_cost", "edge_cost", "accuracy"] {
                let vals: Vec<f64> = runs
                    .iter()
                    .map(|r| match metric {
                        "cost" => per_snap(r.0.cost[i], r),
                        "node_cost" => per_snap(r.0.node_cost[i], r),
                        "edge_cost" => per_snap(r.0.edge_cost[i], r),
                        _ => r.0.accuracy[i],
                    })
                    .collect();
                let (m, se) = summary(&vals);
                if metric == "cost" {
                    means[i] = m;
                    fig3[ci].points.push((gamma, m));
                    fig3[ci].errors.push(se.unwrap_or(0.0));
                }
                let mut row = ResultRow::new("intel_lab", METHODS[i], metric, m)
                    .with("gamma", gamma)
                    .with("kind", KINDS[i])
                    .with("folds", runs.len() as u64);
                if let Some(se) = se {
                    row = row.with("stderr", se);
                }
                table.push(row);
            }
        }
        let at1 = (gamma - 1.0f64).abs() < 1e-9;
        for (metric, other, paper) in [
            ("cost_reduction_vs_logreg_pct", means[LOGREG], 30.15),
            ("cost_reduction_vs_mn_pct", means[MN], 9.94),
        ] {
            table.push(
                ResultRow::new("intel_lab", "CSMN", metric, pct_below(means[CSMN], other))
                    .paper(at1.then_some(paper))
                    .with("gamma", gamma)
                    .with("kind", "paper"),
            );
        }
        let rr: Vec<RunResult> = runs.iter().map(|r| r.0.clone()).collect();
        for (a, b, paired, welch) in p_values(&rr) {
            for (test, v) in [("paired", paired), ("welch", welch)] {
                table.push(
                    ResultRow::new(
                        "intel_lab",
                        format!("{} vs {}", METHODS[a], METHODS[b]),
                        "p_value",
                        v,
                    )
                    .with("gamma", gamma)
                    .with("test", test)
                    .with(
                        "kind",
                        if a >= MAP01 || b >= MAP01 {
                            "diagnostic"
                        } else {
                            "paper"
                        },
                    ),
                );
            }
        }
        let iters: Vec<f64> = runs.iter().map(|r| r.0.csmn_iterations).collect();
        table.push(
            ResultRow::new("intel_lab", "CSMN", "inference_rounds", summary(&iters).0)
                .with("gamma", gamma)
                .with("kind", "diagnostic"),
        );
        table.push(
            ResultRow::new(
                "intel_lab",
                "MN",
                "lbp_converged_count",
                runs.iter().filter(|r| r.0.mn_lbp_converged).count() as f64,
            )
            .with("gamma", gamma)
            .with("kind", "diagnostic"),
        );
        if at1 {
            claim = format!(
                "Claim (paper, γ = 1): CSMN 30.15 % below LOGREG and 9.94 % below MN. Ours: {:.1} % below LOGREG, {:.1} % \
                 below MN (costs per snapshot LOGREG {:.2}, MN {:.2}, CSMN {:.2}, MN 0/1 MAP {:.2}).",
                pct_below(means[CSMN], means[LOGREG]),
                pct_below(means[CSMN], means[MN]),
                means[LOGREG],
                means[MN],
                means[CSMN],
                means[MAP01]
            );
        }
    }
    table.notes.push(claim);
    // Edge-cost sensitivity at γ = 1: the published (reconstructed) matrix is run 1 of the
    // γ runs; the variants follow the γ runs in every fold.
    let mut sens = Vec::new();
    let variant_runs: Vec<(&str, usize)> = if sensitivity.is_empty() {
        Vec::new()
    } else {
        let gi1 = gammas
            .iter()
            .position(|&g| (g - 1.0f64).abs() < 1e-9)
            .context("γ = 1 is one of the Intel γ values")?;
        std::iter::once(("reconstruction (published)", gi1))
            .chain(
                sensitivity
                    .iter()
                    .enumerate()
                    .map(|(vi, (name, _))| (*name, gammas.len() + vi)),
            )
            .collect()
    };
    for (name, idx) in variant_runs {
        let runs: Vec<&IntelRun> = per_fold.iter().map(|f| &f[idx]).collect();
        let mut cells = Vec::new();
        for &i in &[LOGREG, MN, CSMN] {
            let cost: Vec<f64> = runs.iter().map(|r| r.0.cost[i] / r.1 as f64).collect();
            let low: Vec<f64> = runs.iter().map(|r| r.0.low_share[i]).collect();
            let (m, se) = summary(&cost);
            let (l, _) = summary(&low);
            for (metric, v, se) in [("cost", m, se), ("low_share", l, None)] {
                let mut row = ResultRow::new("intel_lab", METHODS[i], metric, v)
                    .with("gamma", 1.0)
                    .with("edge_costs", name)
                    .with("kind", "sensitivity")
                    .with("folds", runs.len() as u64);
                if let Some(se) = se {
                    row = row.with("stderr", se);
                }
                table.push(row);
            }
            cells.push((m, l));
        }
        sens.push(format!(
            "{name}: LOGREG {:.2}, MN {:.2}, CSMN {:.2} (CSMN labels {:.0} % of the nodes low; {})",
            cells[0].0,
            cells[1].0,
            cells[2].0,
            100.0 * cells[2].1,
            if cells[2].0 < cells[1].0 {
                "CSMN below MN"
            } else {
                "MN below CSMN"
            }
        ));
    }
    if !sens.is_empty() {
        table.notes.push(format!(
        "Edge-cost sensitivity (issue 31; γ = 1, cost per snapshot, each method also scored with the matrix it was \
         trained for): the paper prints no cost matrices, so the MN-vs-CSMN verdict rests on our reconstruction of the \
         edge matrix (an endpoint that is truly low but predicted lit costs γ, so labelling every node low costs no \
         edge cost at all). Other plausible edge matrices: `none` (node costs only), `dark-and-waste` (the same plus 1 \
         for an endpoint that is truly lit but predicted low: wasted electricity next to a neighbour), `per-level` (each \
         endpoint's node cost). {}.",
        sens.join("; ")
    ));
    }
    table.notes.push(format!(
        "intel_lab is a 5-day subset (2004-03-04..08) of the original 2.3 M readings: {} snapshots (5-epoch windows with \
         >= 50 motes), {} used{}; 3 folds stratified on the majority light level; each fold's models are trained on the \
         disjoint union of the other folds' snapshots and tested on its snapshots with nothing observed; cost = average \
         per test snapshot, mean ± stderr over the 3 folds; p-values over the 3 folds (paired and Welch, weak with 3 \
         values). Wall time {:.0?} (loading {:.1?}); wall seconds summed over the parallel runs (not CPU time) in LOGREG+MN fit {:.0}, MN marginals+decisions {:.0}, \
         CSMN fit {:.0}, CSMN inference {:.0}, ablation {:.0}.",
        data.snapshots.len(),
        snaps.len(),
        if ctx.quick {
            " (a random subset: the quick run)"
        } else {
            " (every usable snapshot)"
        },
        start.elapsed(),
        load_secs,
        secs[0],
        secs[1],
        secs[2],
        secs[3],
        secs[4]
    ));
    table.notes.push(format!(
        "Cut points (equal frequency): temperature {:?}, humidity {:?}, voltage {:?}, light {:?}. {} mote-graph edges \
         within 5 m (paper: 122).",
        data.temperature.cuts(),
        data.humidity.cuts(),
        data.voltage.cuts(),
        data.light.cuts(),
        data.mote_graph.num_edges()
    ));
    table.notes.push(format!(
        "MN training (the paper's method: a gradient method on the penalised likelihood with loopy-BP marginals; the \
         paper used conjugate gradient, we use L-BFGS): LBP per connected \
         component of the training union (each snapshot's mote-graph components), each started from its messages at \
         the previous objective evaluation (RelationalMarkovNetworkParams::fit_warm_started), LBP tolerance {:e}, at \
         most {} evaluations per L-BFGS iteration; CSMN and all test-time marginals: one cold-started LBP on the whole \
         union (100 sweeps, tol 1e-6), MAP by max-product + ICM polish.",
        WARM_TRAIN_LBP_TOL,
        srl_learn::mn::WARM_LINE_SEARCH_CAP
    ));
    table.notes.push(
        "Cost matrices: srl_graph::CostModel::intel_light(γ, PerLevel), written out in docs/srl-learn.md (shared by every \
         node / edge, so the cost-feature ablation would add constant columns and is not run here)."
            .into(),
    );
    let plots = vec![(
        "figure3_cost_vs_gamma.svg".to_string(),
        line_plot(
            "Sen & Getoor Fig. 3: Intel lab cost vs gamma (± stderr over folds)",
            "gamma",
            "misclassification cost per snapshot",
            &fig3,
        )?,
    )];
    Ok(Report { table, plots })
}
