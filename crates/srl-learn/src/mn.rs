//! Relational Markov networks (Taskar, Abbeel & Koller 2002) with node and edge cliques,
//! trained by maximising the L2-penalised conditional log-likelihood with marginals from
//! any [`MarginalInference`] — the *MN* of Sen & Getoor (2006, §6).

use std::cell::RefCell;
use std::sync::Mutex;

use rand::{Rng, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use srl_graph::{EdgeId, NodeId, RelationalGraph};
use srl_infer::BpMessages;
use srl_infer::{
    InferError, LoopyBp, MapInference, MarginalInference, Marginals, MrfParts, PairTable,
    PairwiseMrf,
};

use crate::error::LearnError;
use crate::optim::{FitReport, minimize, minimize_capped};
use crate::relational::{
    EdgeWeights, GraphMarginals, Layout, Scope, log_partition, training_labels,
};

/// Most objective evaluations one L-BFGS iteration of
/// [`RelationalMarkovNetworkParams::fit_warm_started`] may take (scipy's L-BFGS-B `maxls`).
pub const WARM_LINE_SEARCH_CAP: u64 = 20;

/// Hyperparameters of [`RelationalMarkovNetwork`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `lambda` | `10` | prior `p(w) ∝ exp(−λ ‖w‖²)` on all weights but the intercepts (Sen & Getoor 2006, §6: "for MN λ = 10") | `>= 0` |
/// | `max_iters` | `100` | L-BFGS iteration limit | `>= 1` |
/// | `tol` | `1e-5` | stop when ‖∇J‖ / (number of training nodes) is below `tol` | `> 0` |
/// | `memory` | `10` | L-BFGS history | `>= 1` |
/// | `edge_weights` | `None` | tying of edge weights; `None`: [`EdgeWeights::for_graph`] | |
/// | `per_component` | `false` | run the inference on each connected component of the training model separately (in parallel) instead of once on the whole model | |
///
/// The objective minimised over the training nodes `V_t` (with true labels `ỹ`) and the
/// edges `E_t` between them is
///
/// ```text
/// J(w) = −Σ_{v ∈ V_t} θ_v(ỹ_v) − Σ_{e ∈ E_t} θ_e(ỹ_e) + log Z(w) + λ ‖w \ b‖²
/// ∇J  = E_μ[f] − f(ỹ) + 2λ w            (μ: the inference's node and edge marginals)
/// ```
///
/// where `log Z` is exact when the inference reports it ([`srl_infer::Exact`]) and the Bethe
/// estimate at the returned beliefs otherwise (for loopy BP).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelationalMarkovNetworkParams {
    /// Prior strength `λ`.
    pub lambda: f64,
    /// L-BFGS iteration limit.
    pub max_iters: u64,
    /// Relative gradient tolerance.
    pub tol: f64,
    /// L-BFGS memory.
    pub memory: usize,
    /// Edge weight tying (`None`: by graph directedness).
    pub edge_weights: Option<EdgeWeights>,
    /// Inference per connected component of the training model (e.g. per snapshot of a
    /// disjoint union of snapshot graphs), the components in parallel on the rayon pool,
    /// combined in component order (same result for any thread count).
    ///
    /// The model factorises over its components, so with exact inference the objective
    /// and gradient are the same as with `false` (to rounding). With loopy BP, flooding
    /// messages never cross a component either; the only difference is the stopping rule:
    /// each component stops at its own convergence or sweep cap, instead of every
    /// component sweeping until the slowest one converges. A converged component therefore
    /// ends at the same fixed point within the tolerance, and one that oscillates no longer
    /// keeps all the others sweeping. `false` (the default) runs one inference on the whole
    /// training model, as the published Sen & Getoor runs did.
    #[serde(default)]
    pub per_component: bool,
}

impl Default for RelationalMarkovNetworkParams {
    fn default() -> Self {
        Self {
            lambda: 10.0,
            max_iters: 100,
            tol: 1e-5,
            memory: 10,
            edge_weights: None,
            per_component: false,
        }
    }
}

/// Checks the shared optimiser hyperparameters.
pub(crate) fn check_opt(
    lambda: f64,
    max_iters: u64,
    tol: f64,
    memory: usize,
) -> Result<(), LearnError> {
    let bad = |name: &'static str, value: String, reason: &str| {
        Err(LearnError::InvalidParameter {
            name,
            message: format!("{value}: {reason}"),
        })
    };
    if !(lambda.is_finite() && lambda >= 0.0) {
        return bad("lambda", lambda.to_string(), "must be finite and >= 0");
    }
    if max_iters == 0 {
        return bad("max_iters", "0".into(), "must be >= 1");
    }
    if !(tol.is_finite() && tol > 0.0) {
        return bad("tol", tol.to_string(), "must be finite and > 0");
    }
    if memory == 0 {
        return bad("memory", "0".into(), "must be >= 1");
    }
    Ok(())
}

/// `λ ‖w \ b‖²` and its gradient added into `grad`.
pub(crate) fn add_prior(layout: &Layout, lambda: f64, w: &[f64], grad: &mut [f64]) -> f64 {
    let (bo, eo) = (layout.bias_offset(), layout.edge_offset());
    let mut p = 0.0;
    for (i, (&wi, g)) in w.iter().zip(grad.iter_mut()).enumerate() {
        if (bo..eo).contains(&i) {
            continue;
        }
        p += wi * wi;
        *g += 2.0 * lambda * wi;
    }
    lambda * p
}

/// A fitted relational Markov network: `P(y | x) ∝ exp(Σ_v θ_v(y_v) + Σ_e θ_e(y_u, y_v))`
/// with `θ_v(a) = W_a · x_v + b_a`, `θ_e(a, b) = E[a, b]` (see [`Layout`]).
///
/// Serialises with serde.
///
/// # References
/// Taskar, Abbeel & Koller (2002); Sen & Getoor (2006), §4 (expected-cost decisions from
/// its marginals, see [`crate::expected_cost_decision`]) and §6.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelationalMarkovNetwork {
    layout: Layout,
    weights: Vec<f64>,
    lambda: f64,
    report: FitReport,
}

impl RelationalMarkovNetworkParams {
    /// Fits on the nodes with `train[v]` (all of which must be labelled) and the edges
    /// between them.
    ///
    /// # Arguments
    /// - `graph`: attributes and labels (`k = graph.num_labels()`).
    /// - `train`: length-`n` mask of the training nodes.
    /// - `inference`: marginal inference for `E_μ[f]` (loopy BP in the paper; [`srl_infer::Exact`] on
    ///   small graphs).
    /// - `rng`: passed to the inference (sampling methods).
    ///
    /// # Returns
    /// The MAP weights; the optimiser's end state is in [`RelationalMarkovNetwork::report`].
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`], [`LearnError::DimensionMismatch`],
    /// [`LearnError::NoTrainingData`] (empty mask or an unlabelled training node),
    /// [`LearnError::Infer`] when the inference fails, [`LearnError::Optimization`].
    ///
    /// # Complexity
    /// `O(iters · (inference + nnz · k + m k²))`.
    pub fn fit<I, R>(
        &self,
        graph: &RelationalGraph,
        train: &[bool],
        inference: &I,
        rng: &mut R,
    ) -> Result<RelationalMarkovNetwork, LearnError>
    where
        I: MarginalInference + Sync,
        R: Rng + ?Sized,
    {
        self.fit_with(graph, train, |_| Cold(inference), None, rng)
    }

    /// [`RelationalMarkovNetworkParams::fit`] with warm-started inference: every objective
    /// evaluation starts each inference (one per connected component with
    /// `per_component`, else one on the whole training model) from the state the same
    /// inference ended in at the previous evaluation (loopy BP: its messages, see
    /// [`srl_infer::LoopyBp::run_from`]); the first evaluation starts cold.
    ///
    /// Same model, objective, gradient and optimiser as `fit`. L-BFGS moves the weights
    /// little between evaluations, so the previous messages are close to the new fixed
    /// point: fewer sweeps, and a component whose LBP converges slowly keeps converging
    /// across evaluations instead of restarting from uniform messages and stopping at the
    /// sweep cap every time (a non-converged LBP gives a gradient inconsistent with the
    /// Bethe objective, which makes the line search take many evaluations). Where LBP has
    /// one fixed point the marginals are those of a cold start within its tolerance; where
    /// it has several, a warm start follows the one it started near (the fit is then a
    /// continuation along the optimiser's path, deterministic for a given seed and any
    /// thread count).
    ///
    /// A warm start makes each evaluation's objective depend, within LBP's tolerance, on
    /// where the previous evaluation left the messages, so near the optimum the Bethe
    /// objective and its gradient can disagree by more than the remaining decrease.
    /// A tighter inference tolerance than for a cold fit keeps that error below the
    /// optimiser's (the Intel experiment of Sen & Getoor 2006 uses LBP `tol` 1e-8: at
    /// 1e-6 its line searches failed near the optimum, at 1e-8 every fit converges). Each
    /// L-BFGS iteration then gets at most [`WARM_LINE_SEARCH_CAP`] evaluations (as
    /// L-BFGS-B's `maxls`); when its line search uses them up the fit stops at the best
    /// iterate, reported as not converged with that reason in
    /// [`FitReport::termination`].
    ///
    /// # Errors
    /// As [`RelationalMarkovNetworkParams::fit`].
    pub fn fit_warm_started<I, R>(
        &self,
        graph: &RelationalGraph,
        train: &[bool],
        inference: &I,
        rng: &mut R,
    ) -> Result<RelationalMarkovNetwork, LearnError>
    where
        I: WarmStartInference + Sync,
        R: Rng + ?Sized,
    {
        self.fit_with(
            graph,
            train,
            |parts| Warm {
                inference,
                states: (0..parts).map(|_| Mutex::new(None)).collect(),
            },
            Some(WARM_LINE_SEARCH_CAP),
            rng,
        )
    }

    /// The body of `fit` / `fit_warm_started`: `runner(number of parts)` builds the
    /// per-part inference; `ls_cap`: evaluations per L-BFGS iteration, if capped.
    fn fit_with<P, R>(
        &self,
        graph: &RelationalGraph,
        train: &[bool],
        runner: impl FnOnce(usize) -> P,
        ls_cap: Option<u64>,
        rng: &mut R,
    ) -> Result<RelationalMarkovNetwork, LearnError>
    where
        P: PartInference,
        R: Rng + ?Sized,
    {
        check_opt(self.lambda, self.max_iters, self.tol, self.memory)?;
        let ytrue = training_labels(graph, train)?;
        let layout = Layout {
            num_labels: graph.num_labels(),
            num_features: graph.num_features(),
            edge_weights: self
                .edge_weights
                .unwrap_or_else(|| EdgeWeights::for_graph(graph)),
        };
        let scope = Scope::new(graph, train, &[])?;
        let components = if self.per_component {
            Components::of(scope.free.len(), &scope_edges(graph, &scope))
        } else {
            Components::whole(scope.free.len(), scope.full.len())
        };
        let inference = runner(components.len());
        let inference = &inference;
        let lambda = self.lambda;
        let rng = RefCell::new(rng);
        let failure: RefCell<Option<LearnError>> = RefCell::new(None);
        let scale = 1.0 / (scope.free.len().max(1) as f64);
        let objective = |w: &[f64], grad: &mut [f64]| -> f64 {
            grad.fill(0.0);
            let result = mn_objective(
                graph,
                &layout,
                &scope,
                &components,
                &ytrue,
                w,
                inference,
                &mut **rng.borrow_mut(),
                Some(grad),
            );
            match result {
                Ok(v) => {
                    // scaled by 1 / (training nodes): same minimiser, relative tolerance
                    let v = v + add_prior(&layout, lambda, w, grad);
                    grad.iter_mut().for_each(|g| *g *= scale);
                    v * scale
                }
                Err(e) => {
                    failure.borrow_mut().get_or_insert(e);
                    f64::NAN
                }
            }
        };
        let out = minimize_capped(
            objective,
            vec![0.0; layout.dim()],
            self.max_iters,
            self.tol,
            0.0,
            self.memory,
            ls_cap,
        );
        if let Some(e) = failure.into_inner() {
            return Err(e);
        }
        let (weights, report) = out?;
        Ok(RelationalMarkovNetwork {
            layout,
            weights,
            lambda,
            report,
        })
    }
}

impl RelationalMarkovNetworkParams {
    /// Fits by maximum *pseudo-likelihood* (Besag 1975): the same model and prior as
    /// [`RelationalMarkovNetworkParams::fit`], but the likelihood of the training labels is
    /// replaced by the product of each training node's conditional given its training
    /// neighbours' true labels,
    ///
    /// ```text
    /// J_PL(w) = Σ_{v ∈ V_t} [ log Σ_a exp s_v(a) − s_v(ỹ_v) ] + λ ‖w \ b‖²
    /// s_v(a)  = θ_v(a) + Σ_{u ∈ N(v) ∩ V_t} θ_{(v,u)}(a, ỹ_u)      (edge orientation kept)
    /// ∇J_PL   = Σ_v Σ_a (P_v(a) − [a = ỹ_v]) ∂s_v(a)/∂w + 2λ w
    /// ```
    ///
    /// `J_PL` is a sum of log-sum-exps of functions linear in `w` plus a convex prior, so it
    /// is convex, and it needs no inference: one evaluation is one pass over the training
    /// nodes' features and the training edges, `O(nnz · k + m_t · k)`. Inference (loopy BP,
    /// mean field) is only run at test time, by [`RelationalMarkovNetwork::marginals`].
    /// `max_iters`, `tol` and `memory` drive L-BFGS as in `fit`; the objective is divided
    /// by the number of training nodes.
    ///
    /// # Arguments
    /// - `graph`: attributes and labels (`k = graph.num_labels()`).
    /// - `train`: length-`n` mask of the training nodes (all labelled); edges to nodes
    ///   outside the mask are ignored.
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`], [`LearnError::DimensionMismatch`],
    /// [`LearnError::NoTrainingData`] (empty mask or an unlabelled training node),
    /// [`LearnError::Optimization`].
    ///
    /// # Complexity
    /// `O(iters · (nnz · k + m k))`.
    ///
    /// # References
    /// Besag (1975), *Statistical analysis of non-lattice data*, The Statistician 24(3);
    /// Richardson & Domingos (2006) use it for Markov logic networks for the same reason
    /// (no inference inside the optimiser).
    pub fn fit_pseudo_likelihood(
        &self,
        graph: &RelationalGraph,
        train: &[bool],
    ) -> Result<RelationalMarkovNetwork, LearnError> {
        check_opt(self.lambda, self.max_iters, self.tol, self.memory)?;
        let ytrue = training_labels(graph, train)?;
        let layout = Layout {
            num_labels: graph.num_labels(),
            num_features: graph.num_features(),
            edge_weights: self
                .edge_weights
                .unwrap_or_else(|| EdgeWeights::for_graph(graph)),
        };
        let nodes: Vec<u32> = (0..graph.num_nodes() as u32)
            .filter(|&v| train[v as usize])
            .collect();
        let edges: Vec<(u32, u32)> = graph
            .edges()
            .filter(|(_, u, v)| train[u.index()] && train[v.index()])
            .map(|(_, u, v)| (u.0, v.0))
            .collect();
        let lambda = self.lambda;
        let scale = 1.0 / (nodes.len().max(1) as f64);
        let objective = |w: &[f64], grad: &mut [f64]| -> f64 {
            grad.fill(0.0);
            let v = pl_objective(graph, &layout, &nodes, &edges, &ytrue, w, Some(grad));
            let v = v + add_prior(&layout, lambda, w, grad);
            grad.iter_mut().for_each(|g| *g *= scale);
            v * scale
        };
        let (weights, report) = minimize(
            objective,
            vec![0.0; layout.dim()],
            self.max_iters,
            self.tol,
            0.0,
            self.memory,
        )?;
        Ok(RelationalMarkovNetwork {
            layout,
            weights,
            lambda,
            report,
        })
    }
}

/// The negative log pseudo-likelihood `Σ_v [log Σ_a exp s_v(a) − s_v(ỹ_v)]` over the
/// training `nodes` and training `edges` (pairs of node ids as stored in the graph, first
/// endpoint first), no prior; its gradient is added into `grad` when given.
pub(crate) fn pl_objective(
    graph: &RelationalGraph,
    layout: &Layout,
    nodes: &[u32],
    edges: &[(u32, u32)],
    ytrue: &[u32],
    w: &[f64],
    grad: Option<&mut [f64]>,
) -> f64 {
    let k = layout.num_labels;
    let n = graph.num_nodes();
    let table = layout.edge_table(w);
    let (bo, d) = (layout.bias_offset(), layout.num_features);
    // s[v * k + a]: node score plus the edge terms to training neighbours.
    let mut s = vec![0.0; n * k];
    for &v in nodes {
        let row = &mut s[v as usize * k..(v as usize + 1) * k];
        row.copy_from_slice(&w[bo..bo + k]);
        graph
            .attributes_of(NodeId::new(v as usize))
            .for_each(|j, x| {
                for (a, sa) in row.iter_mut().enumerate() {
                    *sa += w[a * d + j] * x;
                }
            });
    }
    for &(u, v) in edges {
        let (u, v) = (u as usize, v as usize);
        let (yu, yv) = (ytrue[u] as usize, ytrue[v] as usize);
        for a in 0..k {
            s[u * k + a] += table[a * k + yv];
            s[v * k + a] += table[yu * k + a];
        }
    }
    // Conditionals P_v and the value; s is overwritten with P_v − [a = ỹ_v].
    let mut value = 0.0;
    for &v in nodes {
        let v = v as usize;
        let row = &mut s[v * k..(v + 1) * k];
        let t = ytrue[v] as usize;
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = row.iter().map(|x| (x - m).exp()).sum();
        let lse = m + z.ln();
        value += lse - row[t];
        for x in row.iter_mut() {
            *x = (*x - lse).exp();
        }
        row[t] -= 1.0;
    }
    if let Some(grad) = grad {
        // Edge terms: node u's conditional saw θ(a, ỹ_v), node v's saw θ(ỹ_u, a).
        let mut g_edge = vec![0.0; k * k];
        for &(u, v) in edges {
            let (u, v) = (u as usize, v as usize);
            let (yu, yv) = (ytrue[u] as usize, ytrue[v] as usize);
            for a in 0..k {
                g_edge[a * k + yv] += s[u * k + a];
                g_edge[yu * k + a] += s[v * k + a];
            }
        }
        // Nodes outside `nodes` have zero rows, which backprop skips.
        layout.backprop(graph, &s, &g_edge, grad);
    }
    value
}

/// The model edges of `scope` (both endpoints free) as pairs of free indices, in
/// `scope.full` order (the edge order of [`Scope::mrf`]).
fn scope_edges(graph: &RelationalGraph, scope: &Scope) -> Vec<(u32, u32)> {
    scope
        .full
        .iter()
        .map(|&e| {
            let (u, v) = graph.edge(EdgeId(e));
            (scope.free_of[u.index()], scope.free_of[v.index()])
        })
        .collect()
}

/// The connected components of a model's edge graph, so that inference runs on each
/// component separately (e.g. the snapshots of a disjoint union of snapshot graphs).
///
/// The model factorises over its components: `log Z = Σ_c log Z_c` and every marginal is
/// its component's marginal, exactly, and for loopy BP also the Bethe `log Z` and the
/// messages (flooding messages never cross a component). Running LBP per component differs
/// from one run on the union only in when it stops: each component stops at its own
/// convergence (or the sweep cap) instead of every component sweeping until the slowest
/// one has converged, so a converged component's messages are the same fixed point within
/// the tolerance and a component that oscillates no longer keeps the others sweeping.
/// Nodes without an edge are pooled into one edgeless part (nothing to iterate).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Components {
    /// Per part: its model node indices, ascending (the edgeless pool last, if any).
    nodes: Vec<Vec<u32>>,
    /// Per part: its model edge indices, ascending.
    edges: Vec<Vec<u32>>,
    /// Model node → index within its part.
    local: Vec<u32>,
}

impl Components {
    /// Components of the graph on `n` nodes with `edges` (node indices `< n`), ordered by
    /// their smallest node; isolated nodes pooled into one last part.
    pub(crate) fn of(n: usize, edges: &[(u32, u32)]) -> Self {
        fn find(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let p = parent[parent[x as usize] as usize];
                parent[x as usize] = p;
                x = p;
            }
            x
        }
        let mut parent: Vec<u32> = (0..n as u32).collect();
        let mut has_edge = vec![false; n];
        for &(u, v) in edges {
            has_edge[u as usize] = true;
            has_edge[v as usize] = true;
            let (a, b) = (find(&mut parent, u), find(&mut parent, v));
            if a != b {
                parent[a.max(b) as usize] = a.min(b);
            }
        }
        let mut part_of_root = vec![u32::MAX; n];
        let mut nodes: Vec<Vec<u32>> = Vec::new();
        let mut isolated = Vec::new();
        let mut part = vec![0u32; n];
        let mut local = vec![0u32; n];
        for v in 0..n as u32 {
            if !has_edge[v as usize] {
                isolated.push(v);
                continue;
            }
            let r = find(&mut parent, v) as usize;
            if part_of_root[r] == u32::MAX {
                part_of_root[r] = nodes.len() as u32;
                nodes.push(Vec::new());
            }
            let p = part_of_root[r];
            part[v as usize] = p;
            local[v as usize] = nodes[p as usize].len() as u32;
            nodes[p as usize].push(v);
        }
        let mut part_edges = vec![Vec::new(); nodes.len()];
        for (j, &(u, _)) in edges.iter().enumerate() {
            part_edges[part[u as usize] as usize].push(j as u32);
        }
        if !isolated.is_empty() {
            for (i, &v) in isolated.iter().enumerate() {
                local[v as usize] = i as u32;
            }
            nodes.push(isolated);
            part_edges.push(Vec::new());
        }
        Self {
            nodes,
            edges: part_edges,
            local,
        }
    }

    /// One part holding the whole model of `n` nodes and `m` edges (inference runs once on
    /// the whole model).
    pub(crate) fn whole(n: usize, m: usize) -> Self {
        Self {
            nodes: vec![(0..n as u32).collect()],
            edges: vec![(0..m as u32).collect()],
            local: (0..n as u32).collect(),
        }
    }

    /// Number of parts.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The sub-model of part `c` (unary rows, its edges renumbered, the shared tables).
    fn sub_mrf(&self, mrf: &PairwiseMrf, c: usize) -> Result<PairwiseMrf, LearnError> {
        let nodes = &self.nodes[c];
        let mut unary = Vec::new();
        for &v in nodes {
            unary.extend_from_slice(mrf.unary(v as usize));
        }
        let edges: Vec<(u32, u32)> = self.edges[c]
            .iter()
            .map(|&e| {
                let (u, v) = mrf.edge(e as usize);
                (self.local[u], self.local[v])
            })
            .collect();
        // the tables this part uses, renumbered in ascending order of their index
        let mut used: Vec<u32> = self.edges[c]
            .iter()
            .map(|&e| mrf.edge_tables()[e as usize])
            .collect();
        used.sort_unstable();
        used.dedup();
        let edge_tables = self.edges[c]
            .iter()
            .map(|&e| used.partition_point(|&t| t < mrf.edge_tables()[e as usize]) as u32)
            .collect();
        let mut tables: Vec<PairTable> = used
            .iter()
            .map(|&t| mrf.tables()[t as usize].clone())
            .collect();
        if tables.is_empty() {
            tables = mrf.tables().iter().take(1).cloned().collect();
        }
        let parts = MrfParts {
            num_states: nodes.iter().map(|&v| mrf.num_states(v as usize)).collect(),
            unary,
            edges,
            edge_tables,
            tables,
            evidence: Vec::new(),
        };
        PairwiseMrf::new(parts).map_err(|e| LearnError::Optimization {
            reason: format!("building the model of component {c}: {e}"),
        })
    }
}

/// Marginal inference that can start from the state an earlier call ended in (loopy BP:
/// its messages), for [`RelationalMarkovNetworkParams::fit_warm_started`].
///
/// Implemented for [`srl_infer::LoopyBp`] (state: [`BpMessages`], by
/// [`srl_infer::LoopyBp::run_from`]); wrappers (e.g. one that counts calls) implement it
/// by delegating.
pub trait WarmStartInference: MarginalInference {
    /// What a run ends in and a later run on a model of the same structure can start from.
    type State: Send;

    /// Marginals of `mrf`, started from `start` (`None`: a cold start, the same result as
    /// [`MarginalInference::infer_marginals`]), with the state this run ends in.
    ///
    /// # Errors
    /// The inference's errors, e.g. a `start` laid out for another model.
    fn infer_marginals_from<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        start: Option<&Self::State>,
        rng: &mut R,
    ) -> Result<(Marginals, Self::State), InferError>;
}

impl WarmStartInference for LoopyBp {
    type State = BpMessages;

    fn infer_marginals_from<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        start: Option<&BpMessages>,
        _rng: &mut R,
    ) -> Result<(Marginals, BpMessages), InferError> {
        self.run_from(mrf, start)
    }
}

/// The inference a fit runs on part `part` of its model (see [`Components`]).
pub(crate) trait PartInference: Sync {
    /// Marginals of the part's model `mrf`.
    fn run<R: Rng + ?Sized>(
        &self,
        part: usize,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> Result<Marginals, LearnError>;
}

/// Every call a cold start.
pub(crate) struct Cold<'a, I>(pub(crate) &'a I);

impl<I: MarginalInference + Sync> PartInference for Cold<'_, I> {
    fn run<R: Rng + ?Sized>(
        &self,
        _part: usize,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> Result<Marginals, LearnError> {
        Ok(self.0.infer_marginals(mrf, rng)?)
    }
}

/// Each part's inference starts from the state its previous call ended in.
pub(crate) struct Warm<'a, I: WarmStartInference> {
    inference: &'a I,
    states: Vec<Mutex<Option<I::State>>>,
}

impl<I: WarmStartInference + Sync> PartInference for Warm<'_, I> {
    fn run<R: Rng + ?Sized>(
        &self,
        part: usize,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> Result<Marginals, LearnError> {
        // Each part's slot is only used by its own (sequential) calls: no contention.
        let mut slot = self.states[part]
            .lock()
            .map_err(|_| LearnError::Optimization {
                reason: "a warm-start state was poisoned by a panic".into(),
            })?;
        let (m, state) = self
            .inference
            .infer_marginals_from(mrf, slot.as_ref(), rng)?;
        *slot = Some(state);
        Ok(m)
    }
}

/// Marginals of `mrf` (no evidence, `k` states per node) computed one part of `parts` at a
/// time, the parts in parallel (rayon); each part's inference gets its own ChaCha8 stream
/// seeded from one draw of `rng` and the part index, and the results are combined in part
/// order, so the outcome does not depend on the thread count.
///
/// Returns node marginals (`num_nodes · k`, row-major by model node), edge marginals
/// (`num_edges · k²`, the product of the node marginals when the inference gives no edge
/// beliefs) and `log Z = Σ_parts log Z_part` ([`log_partition`] of each part).
fn infer_by_part<P, R>(
    mrf: &PairwiseMrf,
    parts: &Components,
    k: usize,
    inference: &P,
    rng: &mut R,
) -> Result<(Vec<f64>, Vec<f64>, f64), LearnError>
where
    P: PartInference,
    R: Rng + ?Sized,
{
    let (n, m, kk) = (mrf.num_nodes(), mrf.num_edges(), k * k);
    let mut node = vec![0.0; n * k];
    let mut edge = vec![0.0; m * kk];
    let fill_edges = |node: &[f64], edge: &mut [f64], j: usize, p: Option<&[f64]>| {
        let t = &mut edge[j * kk..(j + 1) * kk];
        match p {
            Some(p) => t.copy_from_slice(p),
            None => {
                let (u, v) = mrf.edge(j);
                for a in 0..k {
                    for b in 0..k {
                        t[a * k + b] = node[u * k + a] * node[v * k + b];
                    }
                }
            }
        }
    };
    if parts.len() <= 1 {
        let marg = inference.run(0, mrf, rng)?;
        node.copy_from_slice(marg.node_all());
        for j in 0..m {
            fill_edges(&node, &mut edge, j, marg.edge(j));
        }
        return Ok((node, edge, log_partition(mrf, &marg)));
    }
    let seed = rng.next_u64();
    let results: Vec<Result<(PairwiseMrf, Marginals), LearnError>> = (0..parts.len())
        .into_par_iter()
        .map(|c| {
            let sub = parts.sub_mrf(mrf, c)?;
            let mut prng =
                ChaCha8Rng::seed_from_u64(seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let marg = inference.run(c, &sub, &mut prng)?;
            Ok((sub, marg))
        })
        .collect();
    let mut logz = 0.0;
    for (c, r) in results.into_iter().enumerate() {
        let (sub, marg) = r?;
        for (i, &v) in parts.nodes[c].iter().enumerate() {
            let v = v as usize;
            node[v * k..(v + 1) * k].copy_from_slice(marg.node(i));
        }
        for (i, &j) in parts.edges[c].iter().enumerate() {
            fill_edges(&node, &mut edge, j as usize, marg.edge(i));
        }
        logz += log_partition(&sub, &marg);
    }
    Ok((node, edge, logz))
}

/// The negative conditional log-likelihood `log Z − Σ_c θ_c(ỹ_c)` over `scope` (no prior),
/// with its gradient `E_μ[f] − f(ỹ)` added into `grad` when given; inference runs on each
/// part of `parts` (the components of `scope`'s model, [`Components::of`]) separately.
#[allow(clippy::too_many_arguments)]
pub(crate) fn mn_objective<P, R>(
    graph: &RelationalGraph,
    layout: &Layout,
    scope: &Scope,
    parts: &Components,
    ytrue: &[u32],
    w: &[f64],
    inference: &P,
    rng: &mut R,
    grad: Option<&mut [f64]>,
) -> Result<f64, LearnError>
where
    P: PartInference,
    R: Rng + ?Sized,
{
    let k = layout.num_labels;
    let kk = k * k;
    let scores = layout.node_scores(graph, w);
    let table = layout.edge_table(w);
    let mrf = scope.mrf(
        graph,
        |v, a| scores[v * k + a],
        |_, a, b| table[a * k + b],
        Some(&table),
    )?;
    let (mu_node, mu_edge, logz) = infer_by_part(&mrf, parts, k, inference, rng)?;
    let mut g_node = vec![0.0; graph.num_nodes() * k];
    let mut empirical = 0.0;
    for (i, &v) in scope.free.iter().enumerate() {
        let v = v as usize;
        let t = ytrue[v] as usize;
        let row = &mut g_node[v * k..(v + 1) * k];
        row.copy_from_slice(&mu_node[i * k..(i + 1) * k]);
        row[t] -= 1.0;
        empirical += scores[v * k + t];
    }
    let mut g_edge = vec![0.0; graph.num_edges() * kk];
    for (j, &e) in scope.full.iter().enumerate() {
        let e = e as usize;
        let (u, v) = graph.edge(EdgeId::new(e));
        let t = ytrue[u.index()] as usize * k + ytrue[v.index()] as usize;
        let row = &mut g_edge[e * kk..(e + 1) * kk];
        row.copy_from_slice(&mu_edge[j * kk..(j + 1) * kk]);
        row[t] -= 1.0;
        empirical += table[t];
    }
    if let Some(grad) = grad {
        layout.backprop(graph, &g_node, &g_edge, grad);
    }
    Ok(logz - empirical)
}

impl RelationalMarkovNetwork {
    /// The weight layout.
    #[must_use]
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The weights `[W | b | E]` (see [`Layout`]).
    #[must_use]
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The prior strength used.
    #[must_use]
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// How training ended.
    #[must_use]
    pub fn report(&self) -> &FitReport {
        &self.report
    }

    fn check_graph(&self, graph: &RelationalGraph) -> Result<(), LearnError> {
        self.layout.check_graph(graph)
    }

    /// The model's MRF over the whole graph with `evidence` clamped, and its scope.
    fn conditioned_mrf(
        &self,
        graph: &RelationalGraph,
        evidence: &[Option<u32>],
    ) -> Result<(Scope, PairwiseMrf), LearnError> {
        self.check_graph(graph)?;
        let k = self.layout.num_labels;
        let scope = Scope::new(graph, &vec![true; graph.num_nodes()], evidence)?;
        let scores = self.layout.node_scores(graph, &self.weights);
        let table = self.layout.edge_table(&self.weights);
        let mrf = scope.mrf(
            graph,
            |v, a| scores[v * k + a],
            |_, a, b| table[a * k + b],
            Some(&table),
        )?;
        Ok((scope, mrf))
    }

    /// Node and edge marginals `μ` of every node and edge of `graph`, conditioned on the
    /// observed labels `evidence` (`Some(label)` clamps a node; an empty slice clamps none).
    ///
    /// # Errors
    /// [`LearnError::DimensionMismatch`] when `graph` has another `k` or `d` than the model,
    /// or `evidence` has the wrong length; [`LearnError::LabelOutOfRange`];
    /// [`LearnError::Infer`].
    pub fn marginals<I, R>(
        &self,
        graph: &RelationalGraph,
        evidence: &[Option<u32>],
        inference: &I,
        rng: &mut R,
    ) -> Result<GraphMarginals, LearnError>
    where
        I: MarginalInference,
        R: Rng + ?Sized,
    {
        let (scope, mrf) = self.conditioned_mrf(graph, evidence)?;
        let m = inference.infer_marginals(&mrf, rng)?;
        let logz = log_partition(&mrf, &m);
        Ok(GraphMarginals::from_scope(graph, &scope, &m, logz))
    }

    /// The most probable joint labelling (0/1 loss), observed nodes kept.
    ///
    /// # Errors
    /// As [`RelationalMarkovNetwork::marginals`].
    pub fn map<M, R>(
        &self,
        graph: &RelationalGraph,
        evidence: &[Option<u32>],
        map: &M,
        rng: &mut R,
    ) -> Result<Vec<u32>, LearnError>
    where
        M: MapInference,
        R: Rng + ?Sized,
    {
        let (scope, mrf) = self.conditioned_mrf(graph, evidence)?;
        let a = map.infer_map(&mrf, rng)?;
        Ok(scope.labels_from_states(&a.states))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relational::testutil::{all_labellings, lse, random_weights, tiny};
    use srl_infer::{Exact, LoopyBp};

    const LOOPY: &[(u32, u32)] = &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)];

    /// Brute force `−log P(ỹ | x)` over all labellings of the nodes in `train`.
    fn brute_nll(g: &RelationalGraph, layout: &Layout, w: &[f64], train: &[bool]) -> f64 {
        let k = layout.num_labels;
        let scores = layout.node_scores(g, w);
        let table = layout.edge_table(w);
        let nodes: Vec<usize> = (0..g.num_nodes()).filter(|&v| train[v]).collect();
        let score = |y: &[u32]| -> f64 {
            let mut s: f64 = nodes.iter().map(|&v| scores[v * k + y[v] as usize]).sum();
            for (_, u, v) in g.edges() {
                if train[u.index()] && train[v.index()] {
                    s += table[y[u.index()] as usize * k + y[v.index()] as usize];
                }
            }
            s
        };
        let mut all = Vec::new();
        for sub in all_labellings(nodes.len(), k) {
            let mut y = vec![0u32; g.num_nodes()];
            for (i, &v) in nodes.iter().enumerate() {
                y[v] = sub[i];
            }
            all.push(score(&y));
        }
        let truth: Vec<u32> = g.labels().iter().map(|l| l.unwrap_or(0)).collect();
        lse(&all) - score(&truth)
    }

    #[test]
    fn objective_matches_brute_force_and_gradient_matches_finite_differences() {
        for (directed, k, seed) in [(false, 2, 1), (true, 3, 2)] {
            let (g, _) = tiny(5, k, 3, LOOPY, directed, seed);
            let layout = Layout {
                num_labels: k,
                num_features: 3,
                edge_weights: EdgeWeights::for_graph(&g),
            };
            let train = vec![true, true, true, true, false];
            let ytrue = training_labels(&g, &train).unwrap();
            let scope = Scope::new(&g, &train, &[]).unwrap();
            let w = random_weights(layout.dim(), seed + 10);
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let mut grad = vec![0.0; layout.dim()];
            let parts = Components::of(scope.free.len(), &scope_edges(&g, &scope));
            let f = mn_objective(
                &g,
                &layout,
                &scope,
                &parts,
                &ytrue,
                &w,
                &Cold(&Exact::default()),
                &mut rng,
                Some(&mut grad),
            )
            .unwrap();
            assert!((f - brute_nll(&g, &layout, &w, &train)).abs() < 1e-9);
            let h = 1e-6;
            for i in 0..layout.dim() {
                let (mut wp, mut wm) = (w.clone(), w.clone());
                wp[i] += h;
                wm[i] -= h;
                let fd = (brute_nll(&g, &layout, &wp, &train)
                    - brute_nll(&g, &layout, &wm, &train))
                    / (2.0 * h);
                assert!(
                    (fd - grad[i]).abs() < 1e-5,
                    "weight {i}: fd {fd} vs {}",
                    grad[i]
                );
            }
        }
    }

    #[test]
    fn per_component_inference_equals_inference_on_the_union() {
        // Two loopy components, a tree component and two isolated nodes.
        let mut edges: Vec<(u32, u32)> = LOOPY.to_vec();
        edges.extend(LOOPY.iter().map(|&(u, v)| (u + 5, v + 5)));
        edges.extend([(10, 11), (11, 12)]);
        for (directed, k, seed) in [(false, 2, 4), (true, 3, 6)] {
            let (g, _) = tiny(15, k, 3, &edges, directed, seed);
            let layout = Layout {
                num_labels: k,
                num_features: 3,
                edge_weights: EdgeWeights::for_graph(&g),
            };
            let mut train = vec![true; 15];
            train[7] = false;
            let ytrue = training_labels(&g, &train).unwrap();
            let scope = Scope::new(&g, &train, &[]).unwrap();
            let se = scope_edges(&g, &scope);
            let parts = Components::of(scope.free.len(), &se);
            // {0..4}, {5,6} and {8,9} (7 left out), {10,11,12}, pool {13,14} (free
            // indices 12, 13)
            assert_eq!(parts.len(), 5);
            assert_eq!(parts.nodes[4], vec![12, 13]);
            let whole = Components::whole(scope.free.len(), se.len());
            let w = random_weights(layout.dim(), seed + 40);
            // exact enumeration of the whole model only for k = 2 (2^14 labellings)
            for inference in if k == 2 { 0..2 } else { 1..2 } {
                let mut rng = ChaCha8Rng::seed_from_u64(0);
                let (mut g1, mut g2) = (vec![0.0; layout.dim()], vec![0.0; layout.dim()]);
                let bp = LoopyBp {
                    tol: 1e-13,
                    max_iters: 5000,
                    ..LoopyBp::default()
                };
                let run = |p: &Components, grad: &mut [f64], rng: &mut ChaCha8Rng| {
                    if inference == 0 {
                        mn_objective(
                            &g,
                            &layout,
                            &scope,
                            p,
                            &ytrue,
                            &w,
                            &Cold(&Exact::default()),
                            rng,
                            Some(grad),
                        )
                    } else {
                        mn_objective(
                            &g,
                            &layout,
                            &scope,
                            p,
                            &ytrue,
                            &w,
                            &Cold(&bp),
                            rng,
                            Some(grad),
                        )
                    }
                    .unwrap()
                };
                let f1 = run(&parts, &mut g1, &mut rng);
                let f2 = run(&whole, &mut g2, &mut rng);
                assert!((f1 - f2).abs() < 1e-8, "{f1} vs {f2}");
                for (a, b) in g1.iter().zip(&g2) {
                    assert!((a - b).abs() < 1e-8, "{a} vs {b}");
                }
            }
        }
    }

    /// Brute force negative log pseudo-likelihood: each training node's conditional by
    /// enumerating its label with every other training node at its true label.
    fn brute_npl(g: &RelationalGraph, layout: &Layout, w: &[f64], train: &[bool]) -> f64 {
        let k = layout.num_labels;
        let scores = layout.node_scores(g, w);
        let table = layout.edge_table(w);
        let truth: Vec<u32> = g.labels().iter().map(|l| l.unwrap_or(0)).collect();
        let score = |y: &[u32]| -> f64 {
            let mut s: f64 = (0..g.num_nodes())
                .filter(|&v| train[v])
                .map(|v| scores[v * k + y[v] as usize])
                .sum();
            for (_, u, v) in g.edges() {
                if train[u.index()] && train[v.index()] {
                    s += table[y[u.index()] as usize * k + y[v.index()] as usize];
                }
            }
            s
        };
        let mut total = 0.0;
        for v in (0..g.num_nodes()).filter(|&v| train[v]) {
            let all: Vec<f64> = (0..k as u32)
                .map(|a| {
                    let mut y = truth.clone();
                    y[v] = a;
                    score(&y)
                })
                .collect();
            total += lse(&all) - score(&truth);
        }
        total
    }

    #[test]
    fn pseudo_likelihood_matches_brute_force_and_finite_differences() {
        for (directed, k, seed) in [(false, 2, 1), (true, 3, 2), (false, 4, 5)] {
            let (g, _) = tiny(5, k, 3, LOOPY, directed, seed);
            let layout = Layout {
                num_labels: k,
                num_features: 3,
                edge_weights: EdgeWeights::for_graph(&g),
            };
            let train = vec![true, true, false, true, true];
            let ytrue = training_labels(&g, &train).unwrap();
            let nodes: Vec<u32> = (0..5).filter(|&v| train[v as usize]).collect();
            let edges: Vec<(u32, u32)> = g
                .edges()
                .filter(|(_, u, v)| train[u.index()] && train[v.index()])
                .map(|(_, u, v)| (u.0, v.0))
                .collect();
            let w = random_weights(layout.dim(), seed + 20);
            let mut grad = vec![0.0; layout.dim()];
            let f = pl_objective(&g, &layout, &nodes, &edges, &ytrue, &w, Some(&mut grad));
            assert!((f - brute_npl(&g, &layout, &w, &train)).abs() < 1e-9);
            let h = 1e-6;
            for i in 0..layout.dim() {
                let (mut wp, mut wm) = (w.clone(), w.clone());
                wp[i] += h;
                wm[i] -= h;
                let fp = pl_objective(&g, &layout, &nodes, &edges, &ytrue, &wp, None);
                let fm = pl_objective(&g, &layout, &nodes, &edges, &ytrue, &wm, None);
                let fd = (fp - fm) / (2.0 * h);
                assert!(
                    (fd - grad[i]).abs() < 1e-5,
                    "weight {i}: fd {fd} vs {}",
                    grad[i]
                );
            }
            // Convex: the objective at a midpoint is at most the mean of the ends.
            let w2 = random_weights(layout.dim(), seed + 30);
            let mid: Vec<f64> = w.iter().zip(&w2).map(|(a, b)| 0.5 * (a + b)).collect();
            let f2 = pl_objective(&g, &layout, &nodes, &edges, &ytrue, &w2, None);
            let fm = pl_objective(&g, &layout, &nodes, &edges, &ytrue, &mid, None);
            assert!(fm <= 0.5 * (f + f2) + 1e-12);
        }
    }

    #[test]
    fn pseudo_likelihood_fit_is_stationary_and_learns_homophily() {
        // Two cliques of 4 with one label each, joined by one edge: a homophilous graph.
        let edges = [
            (0, 1),
            (0, 2),
            (0, 3),
            (1, 2),
            (1, 3),
            (2, 3),
            (4, 5),
            (4, 6),
            (4, 7),
            (5, 6),
            (5, 7),
            (6, 7),
            (3, 4),
        ];
        let (g0, _) = tiny(8, 2, 2, &edges, false, 3);
        let g = g0
            .with_labels((0..8).map(|v| Some(u32::from(v >= 4))).collect())
            .unwrap();
        let p = RelationalMarkovNetworkParams {
            lambda: 0.1,
            tol: 1e-10,
            max_iters: 500,
            ..Default::default()
        };
        let m = p.fit_pseudo_likelihood(&g, &[true; 8]).unwrap();
        assert!(m.report().grad_norm < 1e-6, "{:?}", m.report());
        let t = m.layout().edge_table(m.weights());
        // same-label pairs score higher than mixed pairs
        assert!(t[0] > t[1] && t[3] > t[1], "{t:?}");
        assert!(matches!(
            p.fit_pseudo_likelihood(&g, &[false; 8]),
            Err(LearnError::NoTrainingData { .. })
        ));
    }

    #[test]
    fn fit_reaches_a_stationary_point_and_lbp_equals_exact_on_a_tree() {
        let tree = [(0, 1), (1, 2), (1, 3), (3, 4), (4, 5)];
        let (g, _) = tiny(6, 2, 2, &tree, false, 7);
        let train = vec![true; 6];
        let p = RelationalMarkovNetworkParams {
            lambda: 0.5,
            tol: 1e-9,
            ..Default::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let exact = p.fit(&g, &train, &Exact::default(), &mut rng).unwrap();
        assert!(exact.report().grad_norm < 1e-5, "{:?}", exact.report());
        let bp = LoopyBp {
            tol: 1e-12,
            max_iters: 500,
            ..LoopyBp::default()
        };
        let lbp = p.fit(&g, &train, &bp, &mut rng).unwrap();
        for (a, b) in exact.weights().iter().zip(lbp.weights()) {
            assert!((a - b).abs() < 1e-4, "{a} vs {b}");
        }
        // serde round trip
        let s = serde_json::to_string(&exact).unwrap();
        let back: RelationalMarkovNetwork = serde_json::from_str(&s).unwrap();
        assert_eq!(back.layout(), exact.layout());
        // marginals sum to 1 and observed nodes are one-hot
        let ev = vec![Some(1), None, None, None, None, None];
        let m = exact
            .marginals(&g, &ev, &Exact::default(), &mut rng)
            .unwrap();
        assert_eq!(m.node(NodeId(0)), &[0.0, 1.0]);
        for v in 1..6 {
            assert!((m.node(NodeId(v)).iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    /// Loopy BP that counts its sweeps, warm or cold.
    #[derive(Default)]
    struct Sweeps {
        bp: LoopyBp,
        sweeps: std::sync::atomic::AtomicUsize,
    }

    impl MarginalInference for Sweeps {
        fn infer_marginals<R: Rng + ?Sized>(
            &self,
            mrf: &PairwiseMrf,
            _rng: &mut R,
        ) -> Result<Marginals, InferError> {
            let m = self.bp.run(mrf);
            self.sweeps.fetch_add(
                m.convergence().iterations,
                std::sync::atomic::Ordering::Relaxed,
            );
            Ok(m)
        }
    }

    impl WarmStartInference for Sweeps {
        type State = BpMessages;
        fn infer_marginals_from<R: Rng + ?Sized>(
            &self,
            mrf: &PairwiseMrf,
            start: Option<&BpMessages>,
            _rng: &mut R,
        ) -> Result<(Marginals, BpMessages), InferError> {
            let (m, s) = self.bp.run_from(mrf, start)?;
            self.sweeps.fetch_add(
                m.convergence().iterations,
                std::sync::atomic::Ordering::Relaxed,
            );
            Ok((m, s))
        }
    }

    /// Six loopy 5-node components (a disjoint union of small graphs, as the Intel
    /// snapshots) and two isolated nodes.
    fn union_of_loops(k: usize, seed: u64) -> RelationalGraph {
        let mut edges = Vec::new();
        for c in 0..6u32 {
            edges.extend(LOOPY.iter().map(|&(u, v)| (u + 5 * c, v + 5 * c)));
        }
        tiny(32, k, 3, &edges, false, seed).0
    }

    #[test]
    fn warm_started_fit_reaches_the_cold_fit_with_fewer_sweeps() {
        for (k, per_component) in [(2, true), (3, true), (3, false)] {
            let g = union_of_loops(k, 21 + k as u64);
            let train = vec![true; g.num_nodes()];
            let p = RelationalMarkovNetworkParams {
                lambda: 0.5,
                tol: 1e-7,
                per_component,
                ..Default::default()
            };
            let bp = LoopyBp {
                tol: 1e-12,
                max_iters: 2000,
                ..LoopyBp::default()
            };
            let (cold_bp, warm_bp) = (
                Sweeps {
                    bp,
                    ..Sweeps::default()
                },
                Sweeps {
                    bp,
                    ..Sweeps::default()
                },
            );
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let cold = p.fit(&g, &train, &cold_bp, &mut rng).unwrap();
            let warm = p.fit_warm_started(&g, &train, &warm_bp, &mut rng).unwrap();
            assert!(warm.report().grad_norm < 1e-5, "{:?}", warm.report());
            assert!(warm.report().evaluations > 0);
            for (a, b) in cold.weights().iter().zip(warm.weights()) {
                assert!((a - b).abs() < 1e-4, "k {k}: {a} vs {b}");
            }
            let (c, w) = (cold_bp.sweeps.into_inner(), warm_bp.sweeps.into_inner());
            assert!(w < c, "k {k}: warm {w} sweeps, cold {c}");
        }
    }

    #[test]
    fn warm_started_fit_does_not_depend_on_the_thread_count() {
        let g = union_of_loops(3, 5);
        let train = vec![true; g.num_nodes()];
        let p = RelationalMarkovNetworkParams {
            lambda: 0.2,
            per_component: true,
            ..Default::default()
        };
        let fit = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    let mut rng = ChaCha8Rng::seed_from_u64(3);
                    p.fit_warm_started(&g, &train, &LoopyBp::default(), &mut rng)
                        .unwrap()
                })
        };
        let one = fit(1);
        assert_eq!(one, fit(2));
        assert_eq!(one, fit(3));
    }

    #[test]
    fn rejects_bad_input() {
        let (g, _) = tiny(3, 2, 1, &[(0, 1)], false, 3);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let p = RelationalMarkovNetworkParams::default();
        assert!(matches!(
            p.fit(&g, &[true], &Exact::default(), &mut rng),
            Err(LearnError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            p.fit(&g, &[false; 3], &Exact::default(), &mut rng),
            Err(LearnError::NoTrainingData { .. })
        ));
        let bad = RelationalMarkovNetworkParams { lambda: -1.0, ..p };
        assert!(matches!(
            bad.fit(&g, &[true; 3], &Exact::default(), &mut rng),
            Err(LearnError::InvalidParameter { .. })
        ));
    }
}
