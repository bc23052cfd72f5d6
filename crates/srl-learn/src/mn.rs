//! Relational Markov networks (Taskar, Abbeel & Koller 2002) with node and edge cliques,
//! trained by maximising the L2-penalised conditional log-likelihood with marginals from
//! any [`MarginalInference`] — the *MN* of Sen & Getoor (2006, §6).

use std::cell::RefCell;

use rand::Rng;
use serde::{Deserialize, Serialize};
use srl_graph::{EdgeId, NodeId, RelationalGraph};
use srl_infer::{MapInference, MarginalInference, PairwiseMrf};

use crate::error::LearnError;
use crate::optim::{FitReport, minimize};
use crate::relational::{
    EdgeWeights, GraphMarginals, Layout, Scope, log_partition, training_labels,
};

/// Hyperparameters of [`RelationalMarkovNetwork`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `lambda` | `10` | prior `p(w) ∝ exp(−λ ‖w‖²)` on all weights but the intercepts (Sen & Getoor 2006, §6: "for MN λ = 10") | `>= 0` |
/// | `max_iters` | `100` | L-BFGS iteration limit | `>= 1` |
/// | `tol` | `1e-5` | stop when ‖∇J‖ / (number of training nodes) is below `tol` | `> 0` |
/// | `memory` | `10` | L-BFGS history | `>= 1` |
/// | `edge_weights` | `None` | tying of edge weights; `None`: [`EdgeWeights::for_graph`] | |
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
}

impl Default for RelationalMarkovNetworkParams {
    fn default() -> Self {
        Self {
            lambda: 10.0,
            max_iters: 100,
            tol: 1e-5,
            memory: 10,
            edge_weights: None,
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
        I: MarginalInference,
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
        let out = minimize(
            objective,
            vec![0.0; layout.dim()],
            self.max_iters,
            self.tol,
            0.0,
            self.memory,
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

/// The negative conditional log-likelihood `log Z − Σ_c θ_c(ỹ_c)` over `scope` (no prior),
/// with its gradient `E_μ[f] − f(ỹ)` added into `grad` when given.
#[allow(clippy::too_many_arguments)]
pub(crate) fn mn_objective<I, R>(
    graph: &RelationalGraph,
    layout: &Layout,
    scope: &Scope,
    ytrue: &[u32],
    w: &[f64],
    inference: &I,
    rng: &mut R,
    grad: Option<&mut [f64]>,
) -> Result<f64, LearnError>
where
    I: MarginalInference,
    R: Rng + ?Sized,
{
    let k = layout.num_labels;
    let scores = layout.node_scores(graph, w);
    let table = layout.edge_table(w);
    let mrf = scope.mrf(
        graph,
        |v, a| scores[v * k + a],
        |_, a, b| table[a * k + b],
        Some(&table),
    )?;
    let m = inference.infer_marginals(&mrf, rng)?;
    let logz = log_partition(&mrf, &m);
    let gm = GraphMarginals::from_scope(graph, scope, &m, logz);
    let mut g_node = vec![0.0; graph.num_nodes() * k];
    let mut empirical = 0.0;
    for &v in &scope.free {
        let v = v as usize;
        let t = ytrue[v] as usize;
        let row = &mut g_node[v * k..(v + 1) * k];
        row.copy_from_slice(gm.node(NodeId::new(v)));
        row[t] -= 1.0;
        empirical += scores[v * k + t];
    }
    let mut g_edge = vec![0.0; graph.num_edges() * k * k];
    for &e in &scope.full {
        let e = e as usize;
        let (u, v) = graph.edge(EdgeId::new(e));
        let t = ytrue[u.index()] as usize * k + ytrue[v.index()] as usize;
        let row = &mut g_edge[e * k * k..(e + 1) * k * k];
        row.copy_from_slice(gm.edge(EdgeId::new(e)));
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
    use rand::SeedableRng as _;
    use rand_chacha::ChaCha8Rng;
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
            let f = mn_objective(
                &g,
                &layout,
                &scope,
                &ytrue,
                &w,
                &Exact::default(),
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
