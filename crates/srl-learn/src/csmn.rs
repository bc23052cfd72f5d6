//! Cost-sensitive Markov networks (Sen & Getoor 2006, §5): maximum-entropy learning whose
//! constraints are scaled by the clique losses, and the two-step inference of §5.2.

use std::cell::RefCell;

use rand::Rng;
use serde::{Deserialize, Serialize};
use srl_graph::{CostModel, EdgeId, NodeId, RelationalGraph};
use srl_infer::{MapInference, MarginalInference};

use crate::error::LearnError;
use crate::mn::{add_prior, check_opt};
use crate::optim::{FitReport, minimize};
use crate::relational::{
    EdgeWeights, GraphMarginals, Layout, Scope, log_partition, training_labels,
};

/// Hyperparameters of [`CostSensitiveMarkovNetwork`] learning.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `lambda` | `20` | prior `λ ‖w \ b‖²` (Sen & Getoor 2006, §6: "for CSMN λ = 20") | `>= 0` |
/// | `max_iters` | `100` | L-BFGS iteration limit | `>= 1` |
/// | `tol` | `1e-5` | stop when ‖∇J‖ / (number of training nodes) is below `tol` | `> 0` |
/// | `memory` | `10` | L-BFGS history | `>= 1` |
/// | `edge_weights` | `None` | tying of edge weights; `None`: [`EdgeWeights::for_graph`] | |
///
/// Learning minimises Eq. 2 plus the prior over the training cliques (clique losses
/// `l_c = Cost_c`, the paper's choice in every experiment):
///
/// ```text
/// L(w) = log Σ_{y'} exp( Σ_c l_c(y'_c, ỹ_c) · (θ_c(y'_c) − θ_c(ỹ_c)) ) + λ ‖w \ b‖²      (Eq. 2)
/// ∇L  = Σ_c Σ_{y'_c} μ^q_c(y'_c) l_c(y'_c, ỹ_c) (f(x_c, y'_c) − f(x_c, ỹ_c)) + 2λ w   (Eq. 4)
/// ```
///
/// with `θ_c(y_c) = w · f(x_c, y_c)` and `μ^q` the marginals of the MRF whose log-potentials
/// are the clique terms inside the exponent (exact or Bethe `log Z` as for
/// [`crate::RelationalMarkovNetworkParams`]). `L` is convex in `w` for fully labelled data.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostSensitiveMarkovNetworkParams {
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

impl Default for CostSensitiveMarkovNetworkParams {
    fn default() -> Self {
        Self {
            lambda: 20.0,
            max_iters: 100,
            tol: 1e-5,
            memory: 10,
            edge_weights: None,
        }
    }
}

/// Settings of the two-step CSMN inference (Sen & Getoor 2006, §5.2).
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `max_iters` | `20` | cap on (q-step, y-step) rounds | `>= 1` |
/// | `tol` | `1e-6` | stop when the objective changes by less than `tol · (1 + |obj|)` | `>= 0` |
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CsmnInference {
    /// Round cap.
    pub max_iters: usize,
    /// Relative objective tolerance.
    pub tol: f64,
}

impl Default for CsmnInference {
    fn default() -> Self {
        Self {
            max_iters: 20,
            tol: 1e-6,
        }
    }
}

/// Result of CSMN inference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CsmnPrediction {
    /// One label per node (observed nodes keep theirs): the labelling with the lowest
    /// objective among those visited.
    pub labels: Vec<u32>,
    /// The objective (Eq. 5: `log Z_q(y)`, exact or Bethe) of each visited labelling, in
    /// order; the first is the cost-free initial labelling.
    pub objective_trace: Vec<f64>,
    /// Rounds performed.
    pub iterations: usize,
    /// Whether the rounds stopped because the labelling or the objective stabilised
    /// (rather than on the cap).
    pub converged: bool,
}

/// A fitted cost-sensitive Markov network: weights `w` of the same log-linear features as
/// [`crate::RelationalMarkovNetwork`] (node features x class, edge label pairs).
///
/// Serialises with serde.
///
/// # References
/// Sen & Getoor (2006), §5 (Eq. 2-8).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostSensitiveMarkovNetwork {
    layout: Layout,
    weights: Vec<f64>,
    lambda: f64,
    report: FitReport,
}

/// The clique terms of `q` relative to a reference labelling `r` (the truth `ỹ` in learning,
/// the current `y` in inference):
/// `q_v(a) = l_v(a, r_v)(s_v(a) − s_v(r_v))`, `q_e(a, b) = l_e((a, b), r_e)(T(a, b) − T(r_e))`.
struct QTerms<'a> {
    k: usize,
    costs: &'a CostModel,
    scores: &'a [f64],
    table: &'a [f64],
    reference: &'a [u32],
    graph: &'a RelationalGraph,
}

impl QTerms<'_> {
    #[inline]
    fn unary(&self, v: usize, a: usize) -> f64 {
        let k = self.k;
        let r = self.reference[v] as usize;
        let l = self.costs.node_cost(NodeId::new(v), a, r);
        if l == 0.0 {
            0.0
        } else {
            l * (self.scores[v * k + a] - self.scores[v * k + r])
        }
    }

    #[inline]
    fn pair(&self, e: usize, a: usize, b: usize) -> f64 {
        let k = self.k;
        let (u, v) = self.graph.edge(EdgeId::new(e));
        let r = (
            self.reference[u.index()] as usize,
            self.reference[v.index()] as usize,
        );
        let l = self.costs.edge_cost(EdgeId::new(e), (a, b), r);
        if l == 0.0 {
            0.0
        } else {
            l * (self.table[a * k + b] - self.table[r.0 * k + r.1])
        }
    }
}

fn check_costs(graph: &RelationalGraph, costs: &CostModel) -> Result<(), LearnError> {
    costs.check_graph(graph)?;
    Ok(())
}

impl CostSensitiveMarkovNetworkParams {
    /// Fits by minimising Eq. 2 (+ prior) over the nodes with `train[v]` (all labelled) and
    /// the edges between them, with clique losses from `costs`.
    ///
    /// # Arguments
    /// - `graph`, `train`: as [`crate::RelationalMarkovNetworkParams::fit`].
    /// - `costs`: node and (optionally) edge cost matrices of `graph`, used as the clique
    ///   losses `l_c`.
    /// - `inference`: computes the q-marginals (loopy BP; [`srl_infer::Exact`] on small
    ///   graphs).
    ///
    /// # Errors
    /// As [`crate::RelationalMarkovNetworkParams::fit`], plus [`LearnError::Graph`] when
    /// `costs` does not fit `graph`.
    pub fn fit<I, R>(
        &self,
        graph: &RelationalGraph,
        costs: &CostModel,
        train: &[bool],
        inference: &I,
        rng: &mut R,
    ) -> Result<CostSensitiveMarkovNetwork, LearnError>
    where
        I: MarginalInference,
        R: Rng + ?Sized,
    {
        check_opt(self.lambda, self.max_iters, self.tol, self.memory)?;
        check_costs(graph, costs)?;
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
            let result = (|| -> Result<f64, LearnError> {
                let (logz, _) = q_objective_and_gradient(
                    graph,
                    costs,
                    &layout,
                    w,
                    &scope,
                    &ytrue,
                    inference,
                    &mut **rng.borrow_mut(),
                    Some(grad),
                )?;
                Ok(logz)
            })();
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
        Ok(CostSensitiveMarkovNetwork {
            layout,
            weights,
            lambda,
            report,
        })
    }
}

/// `log Z_q` of the q-distribution relative to `reference` over `scope` (Eq. 2 / Eq. 5
/// without prior), its full-graph marginals, and (if `grad` is given) the gradient Eq. 4
/// added into `grad`.
#[allow(clippy::too_many_arguments)]
fn q_objective_and_gradient<I, R>(
    graph: &RelationalGraph,
    costs: &CostModel,
    layout: &Layout,
    w: &[f64],
    scope: &Scope,
    reference: &[u32],
    inference: &I,
    rng: &mut R,
    grad: Option<&mut [f64]>,
) -> Result<(f64, GraphMarginals), LearnError>
where
    I: MarginalInference,
    R: Rng + ?Sized,
{
    let k = layout.num_labels;
    let scores = layout.node_scores(graph, w);
    let table = layout.edge_table(w);
    let q = QTerms {
        k,
        costs,
        scores: &scores,
        table: &table,
        reference,
        graph,
    };
    let mrf = scope.mrf(graph, |v, a| q.unary(v, a), |e, a, b| q.pair(e, a, b), None)?;
    let m = inference.infer_marginals(&mrf, rng)?;
    let logz = log_partition(&mrf, &m);
    let gm = GraphMarginals::from_scope(graph, scope, &m, logz);
    if let Some(grad) = grad {
        // d/ds_v(c) of Σ_a μ_v(a) l(a, r)(s(a) − s(r)) = μ_v(c) l(c, r) − [c = r] Σ_a μ_v(a) l(a, r)
        let mut g_node = vec![0.0; graph.num_nodes() * k];
        for &v in &scope.free {
            let v = v as usize;
            let r = reference[v] as usize;
            let mu = gm.node(NodeId::new(v));
            let row = &mut g_node[v * k..(v + 1) * k];
            let mut total = 0.0;
            for a in 0..k {
                let x = mu[a] * costs.node_cost(NodeId::new(v), a, r);
                row[a] += x;
                total += x;
            }
            row[r] -= total;
        }
        let mut g_edge = Vec::new();
        if costs.has_edge_costs() {
            g_edge = vec![0.0; graph.num_edges() * k * k];
            for &e in scope.full.iter().chain(&scope.half) {
                let e = e as usize;
                let (u, v) = graph.edge(EdgeId::new(e));
                let r = (reference[u.index()] as usize, reference[v.index()] as usize);
                let mu = gm.edge(EdgeId::new(e));
                let row = &mut g_edge[e * k * k..(e + 1) * k * k];
                let mut total = 0.0;
                for i in 0..k * k {
                    let x = mu[i] * costs.edge_cost(EdgeId::new(e), (i / k, i % k), r);
                    row[i] += x;
                    total += x;
                }
                row[r.0 * k + r.1] -= total;
            }
        }
        layout.backprop(graph, &g_node, &g_edge, grad);
    }
    Ok((logz, gm))
}

impl CostSensitiveMarkovNetwork {
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

    /// Eq. 5 for a complete labelling `labels` of the nodes in `include` (no prior):
    /// `log Σ_{y'} exp(Σ_c l_c(y'_c, y_c)(θ_c(y'_c) − θ_c(y_c)))`, with `log Z` exact or Bethe
    /// as the inference allows. With the training labels this is the data term of Eq. 2.
    ///
    /// # Errors
    /// [`LearnError::DimensionMismatch`], [`LearnError::LabelOutOfRange`],
    /// [`LearnError::Graph`] (costs), [`LearnError::Infer`].
    pub fn objective<I, R>(
        &self,
        graph: &RelationalGraph,
        costs: &CostModel,
        labels: &[u32],
        include: &[bool],
        inference: &I,
        rng: &mut R,
    ) -> Result<f64, LearnError>
    where
        I: MarginalInference,
        R: Rng + ?Sized,
    {
        self.check_graph(graph)?;
        check_costs(graph, costs)?;
        check_labels(graph, labels)?;
        let scope = Scope::new(graph, include, &[])?;
        let (z, _) = q_objective_and_gradient(
            graph,
            costs,
            &self.layout,
            &self.weights,
            &scope,
            labels,
            inference,
            rng,
            None,
        )?;
        Ok(z)
    }

    /// "CSMN w/o CSINF" (Sen & Getoor 2006, §6.2): the labelling maximising `Σ_c w · f(x_c,
    /// y_c)`, ignoring costs, observed nodes (`evidence`) kept.
    ///
    /// # Errors
    /// [`LearnError::DimensionMismatch`], [`LearnError::LabelOutOfRange`], [`LearnError::Infer`].
    pub fn predict_without_costs<M, R>(
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
        let a = map.infer_map(&mrf, rng)?;
        Ok(scope.labels_from_states(&a.states))
    }

    /// Cost-sensitive inference (Sen & Getoor 2006, §5.2): starting from
    /// [`CostSensitiveMarkovNetwork::predict_without_costs`], alternate
    /// 1. the q-step: marginals `μ^q` of `q(y') ∝ exp(Σ_c l_c(y'_c, y_c)(θ_c(y'_c) − θ_c(y_c)))`
    ///    (also giving the objective `log Z_q(y)`, Eq. 5), and
    /// 2. the y-step: the MAP of `r(y) ∝ exp(−Σ_c Σ_{y'_c} μ^q_c(y'_c) l_c(y'_c, y_c)(θ_c(y'_c) −
    ///    θ_c(y_c)))` (Eq. 8),
    ///
    /// until the labelling repeats or the objective changes by less than `settings.tol`
    /// (relative), at most `settings.max_iters` rounds. Returns the visited labelling with the
    /// lowest objective (the rounds are not guaranteed monotone under approximate inference).
    ///
    /// # Arguments
    /// - `costs`: cost matrices of `graph` (clique losses).
    /// - `evidence`: `Some(label)` for observed nodes (kept fixed in `y` and `y'`), or empty.
    /// - `inference`: q-marginals; `map`: y-step and initial labelling.
    ///
    /// # Errors
    /// As [`CostSensitiveMarkovNetwork::objective`], plus [`LearnError::InvalidParameter`]
    /// for `settings.max_iters == 0`.
    #[allow(clippy::too_many_arguments)]
    pub fn predict<I, M, R>(
        &self,
        graph: &RelationalGraph,
        costs: &CostModel,
        evidence: &[Option<u32>],
        settings: &CsmnInference,
        inference: &I,
        map: &M,
        rng: &mut R,
    ) -> Result<CsmnPrediction, LearnError>
    where
        I: MarginalInference,
        M: MapInference,
        R: Rng + ?Sized,
    {
        if settings.max_iters == 0 || settings.tol.is_nan() || settings.tol < 0.0 {
            return Err(LearnError::InvalidParameter {
                name: "CsmnInference",
                message: format!("{settings:?}: max_iters must be >= 1 and tol >= 0"),
            });
        }
        self.check_graph(graph)?;
        check_costs(graph, costs)?;
        let k = self.layout.num_labels;
        let scope = Scope::new(graph, &vec![true; graph.num_nodes()], evidence)?;
        let scores = self.layout.node_scores(graph, &self.weights);
        let table = self.layout.edge_table(&self.weights);
        let mut y = self.predict_without_costs(graph, evidence, map, rng)?;
        let mut trace: Vec<f64> = Vec::new();
        let mut best: (f64, Vec<u32>) = (f64::INFINITY, y.clone());
        let mut converged = false;
        let mut iterations = 0;
        while iterations < settings.max_iters {
            iterations += 1;
            // q-step
            let (obj, mu) = q_objective_and_gradient(
                graph,
                costs,
                &self.layout,
                &self.weights,
                &scope,
                &y,
                inference,
                rng,
                None,
            )?;
            if obj < best.0 {
                best = (obj, y.clone());
            }
            if let Some(&prev) = trace.last()
                && (obj - prev).abs() <= settings.tol * (1.0 + f64::abs(prev))
            {
                trace.push(obj);
                converged = true;
                break;
            }
            trace.push(obj);
            // y-step: minimise E(y) = Σ_c Σ_{y'} μ_c(y') l_c(y', y_c)(θ_c(y') − θ_c(y_c)).
            let node_energy = |v: usize, c: usize| -> f64 {
                let m = mu.node(NodeId::new(v));
                let mut s = 0.0;
                for a in 0..k {
                    if m[a] > 0.0 {
                        let l = costs.node_cost(NodeId::new(v), a, c);
                        s += m[a] * l * (scores[v * k + a] - scores[v * k + c]);
                    }
                }
                -s
            };
            let pair_energy = |e: usize, c: usize, d: usize| -> f64 {
                if !costs.has_edge_costs() {
                    return 0.0;
                }
                let m = mu.edge(EdgeId::new(e));
                let mut s = 0.0;
                for i in 0..k * k {
                    if m[i] > 0.0 {
                        let l = costs.edge_cost(EdgeId::new(e), (i / k, i % k), (c, d));
                        s += m[i] * l * (table[i] - table[c * k + d]);
                    }
                }
                -s
            };
            let mrf = scope.mrf(graph, node_energy, pair_energy, None)?;
            let a = map.infer_map(&mrf, rng)?;
            let next = scope.labels_from_states(&a.states);
            if next == y {
                converged = true;
                break;
            }
            y = next;
        }
        Ok(CsmnPrediction {
            labels: best.1,
            objective_trace: trace,
            iterations,
            converged,
        })
    }
}

fn check_labels(graph: &RelationalGraph, labels: &[u32]) -> Result<(), LearnError> {
    if labels.len() != graph.num_nodes() {
        return Err(LearnError::DimensionMismatch {
            what: "labels",
            expected: graph.num_nodes(),
            found: labels.len(),
        });
    }
    if let Some(i) = labels
        .iter()
        .position(|&l| l as usize >= graph.num_labels())
    {
        return Err(LearnError::LabelOutOfRange {
            index: i,
            label: labels[i] as usize,
            num_labels: graph.num_labels(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relational::testutil::{all_labellings, lse, random_weights, tiny};
    use rand::SeedableRng as _;
    use rand_chacha::ChaCha8Rng;
    use srl_infer::{Exact, LoopyBp};

    const LOOPY: &[(u32, u32)] = &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)];

    /// Brute-force Eq. 5 over the nodes in `include`: `log Σ_{y'} exp(Σ_c l_c(y'_c, y_c)
    /// (θ_c(y'_c) − θ_c(y_c)))`.
    fn brute_eq5(
        g: &RelationalGraph,
        costs: &CostModel,
        layout: &Layout,
        w: &[f64],
        y: &[u32],
        include: &[bool],
        half_edges: bool,
    ) -> f64 {
        let k = layout.num_labels;
        let s = layout.node_scores(g, w);
        let t = layout.edge_table(w);
        let nodes: Vec<usize> = (0..g.num_nodes()).filter(|&v| include[v]).collect();
        let mut terms = Vec::new();
        for sub in all_labellings(nodes.len(), k) {
            let mut yp = y.to_vec();
            for (i, &v) in nodes.iter().enumerate() {
                yp[v] = sub[i];
            }
            let mut x = 0.0;
            for &v in &nodes {
                let (a, r) = (yp[v] as usize, y[v] as usize);
                x += costs.node_cost(NodeId::new(v), a, r) * (s[v * k + a] - s[v * k + r]);
            }
            for (e, u, v) in g.edges() {
                let inside = if half_edges {
                    include[u.index()] || include[v.index()]
                } else {
                    include[u.index()] && include[v.index()]
                };
                if inside {
                    let a = (yp[u.index()] as usize, yp[v.index()] as usize);
                    let r = (y[u.index()] as usize, y[v.index()] as usize);
                    x += costs.edge_cost(e, a, r) * (t[a.0 * k + a.1] - t[r.0 * k + r.1]);
                }
            }
            terms.push(x);
        }
        lse(&terms)
    }

    fn truth(g: &RelationalGraph) -> Vec<u32> {
        g.labels().iter().map(|l| l.unwrap_or(0)).collect()
    }

    #[test]
    fn objective_matches_brute_force_gradient_matches_finite_differences_and_is_convex() {
        for (directed, k, seed) in [(false, 2, 11), (true, 3, 12)] {
            let (g, costs) = tiny(5, k, 2, LOOPY, directed, seed);
            let layout = Layout {
                num_labels: k,
                num_features: 2,
                edge_weights: EdgeWeights::for_graph(&g),
            };
            let include = vec![true, true, true, true, false];
            let scope = Scope::new(&g, &include, &[]).unwrap();
            let y = truth(&g);
            let w = random_weights(layout.dim(), seed);
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let mut grad = vec![0.0; layout.dim()];
            let (f, _) = q_objective_and_gradient(
                &g,
                &costs,
                &layout,
                &w,
                &scope,
                &y,
                &Exact::default(),
                &mut rng,
                Some(&mut grad),
            )
            .unwrap();
            let brute = |w: &[f64]| brute_eq5(&g, &costs, &layout, w, &y, &include, false);
            assert!((f - brute(&w)).abs() < 1e-9, "{f} vs {}", brute(&w));
            let h = 1e-6;
            for i in 0..layout.dim() {
                let (mut wp, mut wm) = (w.clone(), w.clone());
                wp[i] += h;
                wm[i] -= h;
                let fd = (brute(&wp) - brute(&wm)) / (2.0 * h);
                assert!(
                    (fd - grad[i]).abs() < 1e-5,
                    "weight {i}: fd {fd} vs {}",
                    grad[i]
                );
            }
            // convexity along random lines: midpoint below the chord
            for s in 0..5 {
                let d = random_weights(layout.dim(), 100 + s);
                let at =
                    |t: f64| -> Vec<f64> { w.iter().zip(&d).map(|(a, b)| a + t * b).collect() };
                let (f0, f1, fm) = (brute(&at(-1.0)), brute(&at(1.0)), brute(&at(0.0)));
                assert!(fm <= 0.5 * (f0 + f1) + 1e-12);
            }
        }
    }

    #[test]
    fn fit_is_stationary_and_model_round_trips() {
        let (g, costs) = tiny(6, 2, 2, LOOPY, false, 5);
        let train = vec![true; 6];
        let p = CostSensitiveMarkovNetworkParams {
            lambda: 0.5,
            tol: 1e-9,
            ..Default::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let m = p
            .fit(&g, &costs, &train, &Exact::default(), &mut rng)
            .unwrap();
        assert!(m.report().grad_norm < 1e-5, "{:?}", m.report());
        // the fitted objective is below the one at w = 0 (= log of the labelling count)
        let obj = m
            .objective(&g, &costs, &truth(&g), &train, &Exact::default(), &mut rng)
            .unwrap();
        assert!(obj < (64f64).ln());
        let s = serde_json::to_string(&m).unwrap();
        let back: CostSensitiveMarkovNetwork = serde_json::from_str(&s).unwrap();
        assert_eq!(back.layout(), m.layout());
        // deterministic: same data, same weights
        let m2 = p
            .fit(&g, &costs, &train, &Exact::default(), &mut rng)
            .unwrap();
        assert_eq!(m.weights(), m2.weights());
    }

    #[test]
    fn two_step_inference_returns_its_best_visited_labelling() {
        let (g, costs) = tiny(5, 2, 2, LOOPY, false, 21);
        let train = vec![true, true, true, false, false];
        let p = CostSensitiveMarkovNetworkParams {
            lambda: 0.1,
            ..Default::default()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let m = p
            .fit(&g, &costs, &train, &Exact::default(), &mut rng)
            .unwrap();
        let evidence: Vec<Option<u32>> = (0..5)
            .map(|v| if train[v] { g.labels()[v] } else { None })
            .collect();
        let pred = m
            .predict(
                &g,
                &costs,
                &evidence,
                &CsmnInference::default(),
                &Exact::default(),
                &Exact::default(),
                &mut rng,
            )
            .unwrap();
        assert!(pred.iterations >= 1 && pred.converged);
        for v in 0..3 {
            assert_eq!(
                Some(pred.labels[v]),
                g.labels()[v],
                "observed nodes are kept"
            );
        }
        // its objective (exact Eq. 5 with the observed nodes clamped) is the trace minimum
        let free = vec![false, false, false, true, true];
        let best = pred
            .objective_trace
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let w = m.weights().to_vec();
        let eq5 = brute_eq5(&g, &costs, m.layout(), &w, &pred.labels, &free, true);
        assert!((eq5 - best).abs() < 1e-9, "{eq5} vs {best}");
        // LBP on this loopy graph gives the same labelling class of answers without error
        let bp = LoopyBp::default();
        let pred_bp = m
            .predict(
                &g,
                &costs,
                &evidence,
                &CsmnInference::default(),
                &bp,
                &crate::PolishedMaxProduct::default(),
                &mut rng,
            )
            .unwrap();
        assert_eq!(pred_bp.labels.len(), 5);
        // w/o CSINF keeps evidence too
        let plain = m
            .predict_without_costs(&g, &evidence, &Exact::default(), &mut rng)
            .unwrap();
        assert_eq!(&plain[..3], &pred.labels[..3]);
    }
}
