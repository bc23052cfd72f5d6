//! Expected-cost decisions from marginals (Sen & Getoor 2006, §4), and a robust MAP solver
//! for the resulting pairwise energies.

use rand::Rng;
use serde::{Deserialize, Serialize};
use srl_graph::{CostModel, EdgeId, NodeId, RelationalGraph};
use srl_infer::{Convergence, Icm, InferError, LoopyBp, MapAssignment, MapInference, PairwiseMrf};

use crate::error::LearnError;
use crate::relational::{GraphMarginals, Scope};

/// Which cliques' costs enter an expected-cost decision.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum CostCliques {
    /// Node costs only: the IID rule `y_v = argmin_a Σ_t Cost_v(a, t) μ_v(t)`, node by node.
    NodesOnly,
    /// Node and edge costs: a pairwise energy over the graph, minimised by MAP inference.
    #[default]
    NodesAndEdges,
}

/// The result of an expected-cost decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// One label per node (observed nodes keep their label).
    pub labels: Vec<u32>,
    /// `Σ_h Σ_{y'_h} Cost_h(y_h, y'_h) μ_h(y'_h)` of `labels` over the cliques used.
    pub expected_cost: f64,
    /// How the MAP solver ended ([`Convergence::exact`] for the node-only rule).
    pub convergence: Convergence,
}

/// Expected-cost decision (Sen & Getoor 2006, §4):
///
/// ```text
/// y* = argmin_y Σ_{h ∈ C(H)} Σ_{y'_h} Cost_h(y_h, y'_h) μ_h(y'_h | x)
///    = argmin_y Σ_v U_v(y_v) + Σ_e P_e(y_u, y_v),
/// U_v(a) = Σ_t Cost_v(a, t) μ_v(t),   P_e(a, b) = Σ_{t_e} Cost_e((a, b), t_e) μ_e(t_e)
/// ```
///
/// With edge costs this is a pairwise energy minimisation, solved as the MAP of the MRF with
/// log-potentials `−U`, `−P` by `map` (observed nodes clamped); with
/// [`CostCliques::NodesOnly`] (or a cost model without edge matrices) it is the per-node IID
/// rule and `map` is not called.
///
/// # Arguments
/// - `costs`: node/edge cost matrices of `graph` (rows = predicted, columns = true).
/// - `evidence`: `Some(label)` for observed nodes, or an empty slice.
/// - `marginals`: `μ` of every node and edge (e.g. [`crate::RelationalMarkovNetwork::marginals`],
///   or [`GraphMarginals::independent`] for an IID classifier).
///
/// # Errors
/// [`LearnError::Graph`] when `costs` does not fit `graph`, [`LearnError::DimensionMismatch`]
/// for marginals of another `k`, [`LearnError::LabelOutOfRange`] for bad evidence,
/// [`LearnError::Infer`] when `map` fails.
///
/// # Complexity
/// `O(n k² + m k⁴)` to build the energy, plus the MAP solver.
///
/// # Example
/// ```
/// use srl_graph::{Attributes, CostMatrix, CostModel, Directedness, LabelSet, RelationalGraph};
/// use srl_learn::{CostCliques, GraphMarginals, PolishedMaxProduct, expected_cost_decision};
/// let g = RelationalGraph::new(vec![], Attributes::none(1), vec![None], LabelSet::numbered(2),
///     vec![], Directedness::Undirected)?;
/// // Missing a positive costs 10, a false alarm 1: predict 1 already at P(1) = 0.2.
/// let costs = CostModel::shared(CostMatrix::new(2, vec![0.0, 10.0, 1.0, 0.0])?, None)?;
/// let mu = GraphMarginals::independent(&g, vec![0.8, 0.2])?;
/// let mut rng = rand::rngs::SmallRng::seed_from_u64(0);
/// # use rand::SeedableRng;
/// let d = expected_cost_decision(&g, &costs, &[], &mu, CostCliques::NodesOnly,
///     &PolishedMaxProduct::default(), &mut rng)?;
/// assert_eq!(d.labels, vec![1]);
/// assert!((d.expected_cost - 0.8).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn expected_cost_decision<M, R>(
    graph: &RelationalGraph,
    costs: &CostModel,
    evidence: &[Option<u32>],
    marginals: &GraphMarginals,
    cliques: CostCliques,
    map: &M,
    rng: &mut R,
) -> Result<Decision, LearnError>
where
    M: MapInference,
    R: Rng + ?Sized,
{
    costs.check_graph(graph)?;
    let k = graph.num_labels();
    if marginals.num_labels() != k || marginals.node_all().len() != graph.num_nodes() * k {
        return Err(LearnError::DimensionMismatch {
            what: "marginals (n x k)",
            expected: graph.num_nodes() * k,
            found: marginals.node_all().len(),
        });
    }
    let scope = Scope::new(graph, &vec![true; graph.num_nodes()], evidence)?;
    let unary = |v: usize, a: usize| -> f64 {
        let mu = marginals.node(NodeId::new(v));
        (0..k)
            .map(|t| costs.node_cost(NodeId::new(v), a, t) * mu[t])
            .sum()
    };
    let pair = |e: usize, a: usize, b: usize| -> f64 {
        let mu = marginals.edge(EdgeId::new(e));
        (0..k * k)
            .map(|t| costs.edge_cost(EdgeId::new(e), (a, b), (t / k, t % k)) * mu[t])
            .sum()
    };
    let use_edges = cliques == CostCliques::NodesAndEdges && costs.has_edge_costs();
    let (labels, convergence) = if use_edges {
        let mrf = scope.mrf(graph, |v, a| -unary(v, a), |e, a, b| -pair(e, a, b), None)?;
        let a = map.infer_map(&mrf, rng)?;
        (scope.labels_from_states(&a.states), a.convergence)
    } else {
        let mut y = scope.labels_from_states(&vec![0; scope.free.len()]);
        for &v in &scope.free {
            let v = v as usize;
            let mut best = (f64::INFINITY, 0u32);
            for a in 0..k {
                let c = unary(v, a);
                if c < best.0 {
                    best = (c, a as u32);
                }
            }
            y[v] = best.1;
        }
        (y, Convergence::exact())
    };
    let mut expected_cost = 0.0;
    for (v, &l) in labels.iter().enumerate() {
        if scope.contains(v) {
            expected_cost += unary(v, l as usize);
        }
    }
    if use_edges {
        for (e, u, v) in graph.edges() {
            expected_cost += pair(
                e.index(),
                labels[u.index()] as usize,
                labels[v.index()] as usize,
            );
        }
    }
    Ok(Decision {
        labels,
        expected_cost,
        convergence,
    })
}

/// A MAP solver for the energies of this crate: max-product loopy BP, then ICM started from
/// its decoding, and ICM from the unary argmax; the assignment with the highest log-score
/// wins. ICM never lowers the score of its start, so the result is at least as good as
/// max-product's and is a local optimum under single-node moves even where max-product
/// oscillates on short cycles.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolishedMaxProduct {
    /// The max-product configuration (its `mode` is forced to max-product).
    pub bp: LoopyBp,
    /// The ICM polish.
    pub icm: Icm,
}

impl Default for PolishedMaxProduct {
    fn default() -> Self {
        Self {
            bp: LoopyBp {
                damping: 0.5,
                ..LoopyBp::default()
            },
            icm: Icm::default(),
        }
    }
}

impl MapInference for PolishedMaxProduct {
    fn infer_map<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        _rng: &mut R,
    ) -> Result<MapAssignment, InferError> {
        let mp = self.bp.map(mrf);
        let bp_conv = mp.convergence;
        let a = self.icm.run_from(mrf, &mp.states)?;
        let b = self.icm.run(mrf);
        let mut best = if b.log_score > a.log_score { b } else { a };
        if mp.log_score > best.log_score {
            best = mp;
        }
        best.convergence = Convergence {
            converged: bp_conv.converged && best.convergence.converged,
            iterations: bp_conv.iterations + best.convergence.iterations,
            max_residual: bp_conv.max_residual,
        };
        Ok(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::relational::testutil::{all_labellings, tiny};
    use rand::{RngExt as _, SeedableRng as _};
    use rand_chacha::ChaCha8Rng;
    use srl_graph::CostMatrix;
    use srl_infer::Exact;

    const LOOPY: &[(u32, u32)] = &[(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2), (4, 5)];

    fn random_marginals(g: &RelationalGraph, seed: u64) -> GraphMarginals {
        let k = g.num_labels();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut node = Vec::new();
        for _ in 0..g.num_nodes() {
            let row: Vec<f64> = (0..k).map(|_| rng.random_range(0.01..1.0)).collect();
            let z: f64 = row.iter().sum();
            node.extend(row.iter().map(|p| p / z));
        }
        GraphMarginals::independent(g, node).unwrap()
    }

    #[allow(clippy::needless_range_loop)]
    fn brute_expected_cost(
        g: &RelationalGraph,
        c: &CostModel,
        mu: &GraphMarginals,
        y: &[u32],
    ) -> f64 {
        let k = g.num_labels();
        let mut s = 0.0;
        for v in 0..g.num_nodes() {
            for t in 0..k {
                s += c.node_cost(NodeId::new(v), y[v] as usize, t) * mu.node(NodeId::new(v))[t];
            }
        }
        for (e, u, v) in g.edges() {
            for t in 0..k * k {
                s += c.edge_cost(
                    e,
                    (y[u.index()] as usize, y[v.index()] as usize),
                    (t / k, t % k),
                ) * mu.edge(e)[t];
            }
        }
        s
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn energy_minimisation_matches_brute_force() {
        for (k, seed) in [(2, 1), (3, 2)] {
            let (g, costs) = tiny(6, k, 1, LOOPY, false, seed);
            let mu = random_marginals(&g, seed);
            let mut rng = ChaCha8Rng::seed_from_u64(0);
            let d = expected_cost_decision(
                &g,
                &costs,
                &[],
                &mu,
                CostCliques::NodesAndEdges,
                &Exact::default(),
                &mut rng,
            )
            .unwrap();
            let best = all_labellings(6, k)
                .iter()
                .map(|y| brute_expected_cost(&g, &costs, &mu, y))
                .fold(f64::INFINITY, f64::min);
            assert!(
                (d.expected_cost - best).abs() < 1e-9,
                "{} vs {best}",
                d.expected_cost
            );
            assert!((brute_expected_cost(&g, &costs, &mu, &d.labels) - best).abs() < 1e-9);
            // the polished max-product solver is never worse than its ICM start and finds
            // the optimum on this small graph
            let p = expected_cost_decision(
                &g,
                &costs,
                &[],
                &mu,
                CostCliques::NodesAndEdges,
                &PolishedMaxProduct::default(),
                &mut rng,
            )
            .unwrap();
            assert!(p.expected_cost >= best - 1e-9);
        }
    }

    #[test]
    fn node_costs_only_reduce_to_the_iid_rule() {
        let (g, costs) = tiny(6, 3, 1, LOOPY, false, 4);
        let node_only = CostModel::per_clique(
            3,
            (0..6)
                .flat_map(|v| costs.node_matrix(NodeId(v)).to_vec())
                .collect(),
            None,
        )
        .unwrap();
        let mu = random_marginals(&g, 9);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let iid: Vec<u32> = (0..6)
            .map(|v| {
                let m = mu.node(NodeId(v));
                let c = |a: usize| {
                    (0..3)
                        .map(|t| costs.node_cost(NodeId(v), a, t) * m[t])
                        .sum::<f64>()
                };
                (0..3u32)
                    .min_by(|&a, &b| c(a as usize).total_cmp(&c(b as usize)))
                    .unwrap()
            })
            .collect();
        // with a model without edge matrices, the graph-wide minimisation is the IID rule
        let a = expected_cost_decision(
            &g,
            &node_only,
            &[],
            &mu,
            CostCliques::NodesAndEdges,
            &Exact::default(),
            &mut rng,
        )
        .unwrap();
        assert_eq!(a.labels, iid);
        let b = expected_cost_decision(
            &g,
            &costs,
            &[],
            &mu,
            CostCliques::NodesOnly,
            &Exact::default(),
            &mut rng,
        )
        .unwrap();
        assert_eq!(b.labels, iid);
        // evidence is kept and costs nothing
        let ev = vec![Some(2), None, None, None, None, None];
        let c = expected_cost_decision(
            &g,
            &node_only,
            &ev,
            &mu,
            CostCliques::NodesOnly,
            &Exact::default(),
            &mut rng,
        )
        .unwrap();
        assert_eq!(c.labels[0], 2);
        assert_eq!(&c.labels[1..], &iid[1..]);
    }

    #[test]
    fn shared_matrices_and_mismatches() {
        let (g, _) = tiny(3, 2, 1, &[(0, 1)], false, 5);
        let costs = CostModel::shared(CostMatrix::new(3, vec![0.0; 9]).unwrap(), None).unwrap();
        let mu = random_marginals(&g, 1);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!(matches!(
            expected_cost_decision(
                &g,
                &costs,
                &[],
                &mu,
                CostCliques::NodesOnly,
                &Exact::default(),
                &mut rng
            ),
            Err(LearnError::Graph(_))
        ));
    }
}
