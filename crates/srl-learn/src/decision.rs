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

/// The cost matrices of [`min_expected_cost`]: `Cost(a, t)` of predicting class `a` when
/// the true class is `t`, row-major `values[a * k + t]` (the layout of
/// [`srl_graph::CostMatrix`]; any finite value, negative ones being benefits).
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum ExampleCosts<'a> {
    /// One `k × k` matrix for every example (`k²` values).
    Shared(&'a [f64]),
    /// One `k × k` matrix per example (`n · k²` values, example-major), e.g. costs that
    /// depend on an amount as in Zadrozny & Elkan's donation data.
    PerExample(&'a [f64]),
}

/// The decisions of [`min_expected_cost`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostDecisions {
    /// The chosen class of each example, `n` values in `0..k`.
    pub labels: Vec<u32>,
    /// The expected cost `Σ_t Cost_i(labels[i], t) p_i(t)` of each decision (`n` values,
    /// in the costs' units).
    pub expected_costs: Vec<f64>,
}

/// Expected-cost decisions for any probabilistic classifier: for each example `i` with
/// class probabilities `p_i`, the class
///
/// ```text
/// y_i = argmin_a Σ_t Cost_i(a, t) · p_i(t)
/// ```
///
/// (ties to the lower class index). This is the node-only rule of Sen & Getoor (2006, §4,
/// [`CostCliques::NodesOnly`] of [`expected_cost_decision`]) and the Bayes-optimal
/// decision of cost-sensitive learning (Elkan 2001, "The foundations of cost-sensitive
/// learning", Eq. 1), for probabilities from any model (srl's, scikit-learn's through
/// srl-py's `srl.CostSensitiveClassifier`). It is only as good as the probabilities are
/// calibrated: see `srl_eval::metrics::reliability_curve` and `brier_score`.
///
/// # Arguments
/// - `proba`: `n × k` row-major probabilities, finite and `>= 0` (rows are used as given,
///   not renormalised).
/// - `k`: number of classes, `>= 1`.
/// - `costs`: see [`ExampleCosts`].
///
/// # Errors
/// [`LearnError::InvalidParameter`] for `k = 0`; [`LearnError::DimensionMismatch`] when
/// `proba` is not a whole number of rows of `k` or the costs have the wrong length (sizes
/// computed with checked arithmetic); [`LearnError::InvalidValue`] for a negative or
/// non-finite probability or a non-finite cost.
///
/// # Complexity
/// `O(n k²)` time, `O(n)` memory beyond the output.
///
/// # Example
/// ```
/// use srl_learn::{ExampleCosts, min_expected_cost};
/// // Missing a positive costs 10, a false alarm 1: predict 1 from P(1) = 1/11 on.
/// let costs = [0.0, 10.0, 1.0, 0.0];
/// let d = min_expected_cost(&[0.95, 0.05, 0.8, 0.2], 2, ExampleCosts::Shared(&costs))?;
/// assert_eq!(d.labels, vec![0, 1]);
/// assert!((d.expected_costs[1] - 0.8).abs() < 1e-12);
/// # Ok::<(), srl_learn::LearnError>(())
/// ```
pub fn min_expected_cost(
    proba: &[f64],
    k: usize,
    costs: ExampleCosts<'_>,
) -> Result<CostDecisions, LearnError> {
    if k == 0 {
        return Err(LearnError::InvalidParameter {
            name: "k",
            message: "0: need at least one class".into(),
        });
    }
    if !proba.len().is_multiple_of(k) {
        return Err(LearnError::DimensionMismatch {
            what: "probabilities (a multiple of k)",
            expected: proba.len().div_ceil(k) * k,
            found: proba.len(),
        });
    }
    let n = proba.len() / k;
    let kk = k
        .checked_mul(k)
        .ok_or_else(|| LearnError::InvalidParameter {
            name: "k",
            message: format!("{k}: k² overflows"),
        })?;
    let (values, per_example) = match costs {
        ExampleCosts::Shared(c) => (c, false),
        ExampleCosts::PerExample(c) => (c, true),
    };
    let want = if per_example {
        n.checked_mul(kk)
            .ok_or_else(|| LearnError::InvalidParameter {
                name: "costs",
                message: format!("{n} examples x {k}² overflows"),
            })?
    } else {
        kk
    };
    if values.len() != want {
        return Err(LearnError::DimensionMismatch {
            what: if per_example {
                "per-example costs (n·k·k)"
            } else {
                "cost matrix (k·k)"
            },
            expected: want,
            found: values.len(),
        });
    }
    if let Some(index) = proba.iter().position(|p| !(p.is_finite() && *p >= 0.0)) {
        return Err(LearnError::InvalidValue {
            what: "probability (finite, >= 0)",
            index,
            value: proba[index],
        });
    }
    if let Some(index) = values.iter().position(|c| !c.is_finite()) {
        return Err(LearnError::InvalidValue {
            what: "cost (finite)",
            index,
            value: values[index],
        });
    }
    let mut labels = Vec::with_capacity(n);
    let mut expected_costs = Vec::with_capacity(n);
    for (i, p) in proba.chunks_exact(k).enumerate() {
        let c = if per_example {
            &values[i * kk..(i + 1) * kk]
        } else {
            values
        };
        let (mut best, mut best_cost) = (0usize, f64::INFINITY);
        for (a, row) in c.chunks_exact(k).enumerate() {
            let e: f64 = row.iter().zip(p).map(|(ct, pt)| ct * pt).sum();
            if e < best_cost {
                best = a;
                best_cost = e;
            }
        }
        labels.push(
            u32::try_from(best).map_err(|_| LearnError::InvalidParameter {
                name: "k",
                message: format!("{k}: more classes than u32 labels"),
            })?,
        );
        expected_costs.push(best_cost);
    }
    Ok(CostDecisions {
        labels,
        expected_costs,
    })
}

/// The realised cost of each decision against the truth: `C_i[labels[i], truth[i]]` with
/// the cost matrices of [`min_expected_cost`] (rows predicted, columns true), in the
/// costs' units; its mean is the misclassification cost Sen & Getoor (2006, §3) report,
/// for node cliques.
///
/// # Errors
/// [`LearnError::InvalidParameter`] for `k = 0`; [`LearnError::DimensionMismatch`] when
/// `labels` and `truth` differ in length or the costs are not `k²` / `n·k²` values;
/// [`LearnError::LabelOutOfRange`] for a label or true class `>= k`;
/// [`LearnError::InvalidValue`] for a non-finite cost.
///
/// # Example
/// ```
/// use srl_learn::{ExampleCosts, realised_costs};
/// let costs = [0.0, 10.0, 1.0, 0.0];
/// let c = realised_costs(&[0, 1, 1], &[1, 0, 1], 2, ExampleCosts::Shared(&costs))?;
/// assert_eq!(c, vec![10.0, 1.0, 0.0]);
/// # Ok::<(), srl_learn::LearnError>(())
/// ```
pub fn realised_costs(
    labels: &[u32],
    truth: &[u32],
    k: usize,
    costs: ExampleCosts<'_>,
) -> Result<Vec<f64>, LearnError> {
    if k == 0 {
        return Err(LearnError::InvalidParameter {
            name: "k",
            message: "0: need at least one class".into(),
        });
    }
    let n = labels.len();
    if truth.len() != n {
        return Err(LearnError::DimensionMismatch {
            what: "truth",
            expected: n,
            found: truth.len(),
        });
    }
    let kk = k
        .checked_mul(k)
        .ok_or_else(|| LearnError::InvalidParameter {
            name: "k",
            message: format!("{k}: k² overflows"),
        })?;
    let (values, per_example) = match costs {
        ExampleCosts::Shared(c) => (c, false),
        ExampleCosts::PerExample(c) => (c, true),
    };
    let want = if per_example {
        n.checked_mul(kk)
            .ok_or_else(|| LearnError::InvalidParameter {
                name: "costs",
                message: format!("{n} examples x {k}² overflows"),
            })?
    } else {
        kk
    };
    if values.len() != want {
        return Err(LearnError::DimensionMismatch {
            what: "cost matrices",
            expected: want,
            found: values.len(),
        });
    }
    if let Some(index) = values.iter().position(|c| !c.is_finite()) {
        return Err(LearnError::InvalidValue {
            what: "cost (finite)",
            index,
            value: values[index],
        });
    }
    labels
        .iter()
        .zip(truth)
        .enumerate()
        .map(|(i, (&a, &t))| {
            for (index, l) in [(i, a), (i, t)] {
                if l as usize >= k {
                    return Err(LearnError::LabelOutOfRange {
                        index,
                        label: l as usize,
                        num_labels: k,
                    });
                }
            }
            let base = if per_example { i * kk } else { 0 };
            Ok(values[base + a as usize * k + t as usize])
        })
        .collect()
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

    #[test]
    fn min_expected_cost_is_the_node_only_rule_of_expected_cost_decision() {
        use srl_graph::{Attributes, Directedness, LabelSet};
        let (n, k) = (40usize, 3usize);
        let g = RelationalGraph::new(
            vec![],
            Attributes::none(n),
            vec![None; n],
            LabelSet::numbered(k),
            vec![],
            Directedness::Undirected,
        )
        .unwrap();
        let mu = random_marginals(&g, 11);
        let proba: Vec<f64> = mu.node_all().to_vec();
        let values = vec![0.0, 4.0, 1.0, 2.0, 0.0, 7.0, 1.5, 3.0, 0.0];
        let costs = CostModel::shared(CostMatrix::new(k, values.clone()).unwrap(), None).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let d = expected_cost_decision(
            &g,
            &costs,
            &[],
            &mu,
            CostCliques::NodesOnly,
            &PolishedMaxProduct::default(),
            &mut rng,
        )
        .unwrap();
        let ours = min_expected_cost(&proba, k, ExampleCosts::Shared(&values)).unwrap();
        assert_eq!(ours.labels, d.labels);
        let total: f64 = ours.expected_costs.iter().sum();
        assert!((total - d.expected_cost).abs() < 1e-9);
        // per-example costs: the same matrix repeated gives the same decisions; a
        // per-example matrix is used for its own row only (brute force)
        let rep: Vec<f64> = (0..n).flat_map(|_| values.clone()).collect();
        assert_eq!(
            min_expected_cost(&proba, k, ExampleCosts::PerExample(&rep)).unwrap(),
            ours
        );
        let mut r = ChaCha8Rng::seed_from_u64(5);
        let per: Vec<f64> = (0..n * k * k).map(|_| r.random_range(-1.0..5.0)).collect();
        let d = min_expected_cost(&proba, k, ExampleCosts::PerExample(&per)).unwrap();
        for i in 0..n {
            let e = |a: usize| -> f64 {
                (0..k)
                    .map(|t| per[i * k * k + a * k + t] * proba[i * k + t])
                    .sum()
            };
            let best = (0..k).fold(0, |b, a| if e(a) < e(b) { a } else { b });
            assert_eq!(d.labels[i] as usize, best, "row {i}");
            assert_eq!(d.expected_costs[i], e(best));
        }
    }

    #[test]
    fn min_expected_cost_rejects_bad_input() {
        let c = [0.0, 1.0, 1.0, 0.0];
        let err =
            |p: &[f64], k: usize, c: ExampleCosts<'_>| min_expected_cost(p, k, c).unwrap_err();
        assert!(matches!(
            err(&[0.5], 0, ExampleCosts::Shared(&c)),
            LearnError::InvalidParameter { .. }
        ));
        assert!(matches!(
            err(&[0.5, 0.5, 1.0], 2, ExampleCosts::Shared(&c)),
            LearnError::DimensionMismatch { .. }
        ));
        assert!(matches!(
            err(&[0.5, 0.5], 2, ExampleCosts::Shared(&c[..3])),
            LearnError::DimensionMismatch { .. }
        ));
        assert!(matches!(
            err(&[0.5, 0.5], 2, ExampleCosts::PerExample(&[0.0; 8])),
            LearnError::DimensionMismatch { .. }
        ));
        assert!(matches!(
            err(&[f64::NAN, 0.5], 2, ExampleCosts::Shared(&c)),
            LearnError::InvalidValue { .. }
        ));
        assert!(matches!(
            err(&[-0.1, 0.5], 2, ExampleCosts::Shared(&c)),
            LearnError::InvalidValue { .. }
        ));
        assert!(matches!(
            err(
                &[0.5, 0.5],
                2,
                ExampleCosts::Shared(&[0.0, f64::INFINITY, 1.0, 0.0])
            ),
            LearnError::InvalidValue { .. }
        ));
        // no rows: no decisions
        assert!(
            min_expected_cost(&[], 2, ExampleCosts::Shared(&c))
                .unwrap()
                .labels
                .is_empty()
        );
    }

    #[test]
    fn realised_costs_index_the_matrices_and_check_input() {
        let shared = [0.0, 10.0, 1.0, 0.0];
        let c = realised_costs(
            &[0, 1, 1, 0],
            &[1, 0, 1, 0],
            2,
            ExampleCosts::Shared(&shared),
        )
        .unwrap();
        assert_eq!(c, vec![10.0, 1.0, 0.0, 0.0]);
        let per = [0.0, 2.0, 3.0, 0.0, 0.0, 5.0, 7.0, 0.0];
        let c = realised_costs(&[1, 0], &[0, 1], 2, ExampleCosts::PerExample(&per)).unwrap();
        assert_eq!(c, vec![3.0, 5.0]);
        let e = |r: Result<Vec<f64>, LearnError>| r.unwrap_err();
        assert!(matches!(
            e(realised_costs(
                &[0],
                &[0, 1],
                2,
                ExampleCosts::Shared(&shared)
            )),
            LearnError::DimensionMismatch { .. }
        ));
        assert!(matches!(
            e(realised_costs(&[2], &[0], 2, ExampleCosts::Shared(&shared))),
            LearnError::LabelOutOfRange { .. }
        ));
        assert!(matches!(
            e(realised_costs(&[0], &[3], 2, ExampleCosts::Shared(&shared))),
            LearnError::LabelOutOfRange { .. }
        ));
        assert!(matches!(
            e(realised_costs(
                &[0],
                &[0],
                2,
                ExampleCosts::PerExample(&shared[..3])
            )),
            LearnError::DimensionMismatch { .. }
        ));
        assert!(matches!(
            e(realised_costs(
                &[0],
                &[0],
                2,
                ExampleCosts::Shared(&[0.0, f64::NAN, 1.0, 0.0])
            )),
            LearnError::InvalidValue { .. }
        ));
        assert!(matches!(
            e(realised_costs(&[0], &[0], 0, ExampleCosts::Shared(&[]))),
            LearnError::InvalidParameter { .. }
        ));
    }
}
