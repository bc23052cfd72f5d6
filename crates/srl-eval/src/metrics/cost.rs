//! The structured misclassification cost of Sen & Getoor (2006), over node and edge cliques.

use serde::{Deserialize, Serialize};
use srl_graph::{EdgeId, NodeId};

use crate::error::EvalError;

/// The misclassification cost of a labelling, split into its node and edge parts.
///
/// `total() = node_cost + edge_cost` is `Cost(y, ỹ)` of Sen & Getoor 2006, Section 3.
#[derive(Copy, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CostBreakdown {
    /// `Σ_v Cost_v(y_v, ỹ_v)` over the evaluated nodes.
    pub node_cost: f64,
    /// `Σ_{(u,v)} Cost_{uv}((y_u, y_v), (ỹ_u, ỹ_v))` over the evaluated edges.
    pub edge_cost: f64,
    /// Number of nodes whose cost was counted (those with a known true label).
    pub nodes: usize,
    /// Number of edges whose cost was counted (both ends with a known true label).
    pub edges: usize,
}

impl CostBreakdown {
    /// The total cost `node_cost + edge_cost`.
    #[must_use]
    pub fn total(&self) -> f64 {
        self.node_cost + self.edge_cost
    }
}

/// Where the cost matrices of [`structured_cost`] come from: one matrix shared by every node
/// (or edge), or one matrix per node (or edge), stored back to back in a flat slice.
///
/// Layout (row = predicted, column = true label, row-major):
/// - node matrix, `k × k`: entry `[y · k + ỹ]` is `Cost(y, ỹ)`;
/// - edge matrix, `k² × k²`, over label pairs `(y_u, y_v) ↦ y_u · k + y_v` with `(u, v)` the
///   edge as stored: entry `[pair(y) · k² + pair(ỹ)]`.
///
/// `PerItem` slices hold matrix `i` at offset `i · k²` (nodes) or `i · k⁴` (edges), indexed
/// by [`NodeId`] / [`EdgeId`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum CostTable<'a> {
    /// One matrix for every clique of the kind (the label-only matrices of the Intel-lab
    /// experiment).
    Shared(&'a [f64]),
    /// One matrix per clique (the sample-dependent matrices of the synthetic experiment).
    PerItem(&'a [f64]),
}

impl CostTable<'_> {
    fn check(&self, what: &'static str, items: usize, size: usize) -> Result<(), EvalError> {
        let (found, expected) = match self {
            CostTable::Shared(s) => (s.len(), size),
            CostTable::PerItem(s) => (s.len(), items.saturating_mul(size)),
        };
        if found == expected {
            Ok(())
        } else {
            Err(EvalError::LengthMismatch {
                what,
                expected,
                found,
            })
        }
    }

    #[inline]
    fn get(&self, item: usize, size: usize, entry: usize) -> f64 {
        match self {
            CostTable::Shared(s) => s[entry],
            CostTable::PerItem(s) => s[item * size + entry],
        }
    }
}

/// Structured misclassification cost with cost matrices given as closures.
///
/// Computes `Cost(y, ỹ) = Σ_{h ∈ C(H)} Cost_h(y_h, ỹ_h)` over the node cliques and the edge
/// cliques of the cost graph (cliques up to size 2, as in the paper's experiments). Nodes
/// whose true label is `None` are not evaluated, and neither is an edge with such an end:
/// pass `None` for training nodes to score the test nodes only, or give every node its true
/// label (and training nodes their known label as prediction) to also count the edges
/// between training and test nodes.
///
/// # Arguments
/// - `predicted`: the predicted label `y_v ∈ 0..k` of every node, indexed by [`NodeId`].
/// - `truth`: the true label `ỹ_v` of every node, or `None`; parallel to `predicted`.
/// - `num_labels`: `k`.
/// - `edges`: the edge cliques as node pairs, indexed by [`EdgeId`]; the pair's order is the
///   order of the label pairs passed to `edge_cost` (e.g. `RelationalGraph::edge_list`).
/// - `node_cost(v, y_v, ỹ_v)`: the cost of labelling `v` with `y_v` when its label is `ỹ_v`.
/// - `edge_cost(e, [y_u, y_v], [ỹ_u, ỹ_v])`: the cost of labelling edge `e = (u, v)`.
///
/// # Returns
/// The node and edge parts of the cost and how many cliques were counted; the closures are
/// called once per counted clique.
///
/// # Errors
/// [`EvalError::Empty`] for no nodes, [`EvalError::LengthMismatch`] if `truth` is not as long
/// as `predicted`, [`EvalError::LabelOutOfRange`] for a label `>= k`,
/// [`EvalError::IndexOutOfRange`] for an edge end not below the number of nodes (or more
/// than `u32::MAX + 1` edges).
///
/// # Complexity
/// `O(n + m)` closure calls, no allocation.
///
/// # References
/// Sen & Getoor 2006, "Cost-sensitive learning with conditional Markov networks", ICML,
/// Section 3 (the cost of a complete assignment) and Section 6 (node and edge cost matrices,
/// average misclassification cost per test graph).
///
/// # Examples
/// ```
/// use srl_eval::metrics::structured_cost_with;
/// use srl_graph::NodeId;
/// // Two nodes joined by an edge; the second is mislabelled.
/// let edges = [(NodeId(0), NodeId(1))];
/// let cost = structured_cost_with(
///     &[1, 0],
///     &[Some(1), Some(1)],
///     2,
///     &edges,
///     |_, y, t| if y == t { 0.0 } else { 2.0 },
///     |_, y, t| if y == t { 0.0 } else { 0.5 },
/// )?;
/// assert_eq!((cost.node_cost, cost.edge_cost, cost.total()), (2.0, 0.5, 2.5));
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn structured_cost_with(
    predicted: &[u32],
    truth: &[Option<u32>],
    num_labels: usize,
    edges: &[(NodeId, NodeId)],
    mut node_cost: impl FnMut(NodeId, u32, u32) -> f64,
    mut edge_cost: impl FnMut(EdgeId, [u32; 2], [u32; 2]) -> f64,
) -> Result<CostBreakdown, EvalError> {
    validate(predicted, truth, num_labels, edges)?;
    let mut out = CostBreakdown::default();
    for (v, (&y, t)) in predicted.iter().zip(truth).enumerate() {
        if let Some(t) = *t {
            out.node_cost += node_cost(NodeId(v as u32), y, t);
            out.nodes += 1;
        }
    }
    for (e, &(u, v)) in edges.iter().enumerate() {
        if let (Some(tu), Some(tv)) = (truth[u.index()], truth[v.index()]) {
            let y = [predicted[u.index()], predicted[v.index()]];
            out.edge_cost += edge_cost(EdgeId(e as u32), y, [tu, tv]);
            out.edges += 1;
        }
    }
    Ok(out)
}

/// Structured misclassification cost with cost matrices stored in flat slices.
///
/// The same sum as [`structured_cost_with`], reading `Cost_v` and `Cost_e` from
/// [`CostTable`]s (layout documented there).
///
/// # Arguments
/// - `predicted`, `truth`, `num_labels`, `edges`: as in [`structured_cost_with`].
/// - `node_costs`: `k × k` matrices, shared or one per node.
/// - `edge_costs`: `k² × k²` matrices over label pairs, shared or one per edge.
///
/// # Errors
/// As [`structured_cost_with`], plus [`EvalError::LengthMismatch`] if a cost slice does not
/// have `k²` (`n k²`) or `k⁴` (`m k⁴`) entries.
///
/// # Complexity
/// `O(n + m)`.
///
/// # References
/// Sen & Getoor 2006, Sections 3 and 6.
///
/// # Examples
/// ```
/// use srl_eval::metrics::{CostTable, structured_cost};
/// use srl_graph::NodeId;
/// // k = 2; a shared node matrix and a shared edge matrix that charges a pair labelled
/// // (0, 0) when the truth is (0, 1).
/// let node = [0.0, 1.0, 3.0, 0.0]; // Cost(y = 1, ỹ = 0) = 3
/// let mut edge = [0.0; 16];
/// edge[0 * 4 + 1] = 5.0;
/// let cost = structured_cost(
///     &[0, 0, 1],
///     &[Some(0), Some(1), Some(0)],
///     2,
///     &[(NodeId(0), NodeId(1))],
///     CostTable::Shared(&node),
///     CostTable::Shared(&edge),
/// )?;
/// assert_eq!(cost.node_cost, 1.0 + 3.0);
/// assert_eq!(cost.edge_cost, 5.0);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn structured_cost(
    predicted: &[u32],
    truth: &[Option<u32>],
    num_labels: usize,
    edges: &[(NodeId, NodeId)],
    node_costs: CostTable<'_>,
    edge_costs: CostTable<'_>,
) -> Result<CostBreakdown, EvalError> {
    let k = num_labels;
    let k2 = k.saturating_mul(k);
    let k4 = k2.saturating_mul(k2);
    node_costs.check("node_costs", predicted.len(), k2)?;
    edge_costs.check("edge_costs", edges.len(), k4)?;
    structured_cost_with(
        predicted,
        truth,
        num_labels,
        edges,
        |v, y, t| node_costs.get(v.index(), k2, y as usize * k + t as usize),
        |e, y, t| {
            let py = y[0] as usize * k + y[1] as usize;
            let pt = t[0] as usize * k + t[1] as usize;
            edge_costs.get(e.index(), k4, py * k2 + pt)
        },
    )
}

fn validate(
    predicted: &[u32],
    truth: &[Option<u32>],
    num_labels: usize,
    edges: &[(NodeId, NodeId)],
) -> Result<(), EvalError> {
    if predicted.is_empty() {
        return Err(EvalError::Empty { what: "predicted" });
    }
    if truth.len() != predicted.len() {
        return Err(EvalError::LengthMismatch {
            what: "truth",
            expected: predicted.len(),
            found: truth.len(),
        });
    }
    let n = predicted.len();
    if n - 1 > u32::MAX as usize || edges.len().saturating_sub(1) > u32::MAX as usize {
        return Err(EvalError::IndexOutOfRange {
            what: "nodes or edges (ids are u32)".into(),
            index: n.max(edges.len()),
            len: u32::MAX as usize + 1,
        });
    }
    let check = |what: &'static str, index: usize, label: u32| {
        if (label as usize) < num_labels {
            Ok(())
        } else {
            Err(EvalError::LabelOutOfRange {
                what,
                index,
                label,
                num_labels,
            })
        }
    };
    for (i, &y) in predicted.iter().enumerate() {
        check("predicted", i, y)?;
    }
    for (i, t) in truth.iter().enumerate() {
        if let Some(t) = *t {
            check("truth", i, t)?;
        }
    }
    for (e, &(u, v)) in edges.iter().enumerate() {
        for end in [u, v] {
            if end.index() >= n {
                return Err(EvalError::IndexOutOfRange {
                    what: format!("edge {e}"),
                    index: end.index(),
                    len: n,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force(
        predicted: &[u32],
        truth: &[u32],
        k: usize,
        edges: &[(NodeId, NodeId)],
        node: &[f64],
        edge: &[f64],
    ) -> f64 {
        let mut c = 0.0;
        for v in 0..predicted.len() {
            c += node[v * k * k + predicted[v] as usize * k + truth[v] as usize];
        }
        for (e, &(u, v)) in edges.iter().enumerate() {
            let (u, v) = (u.index(), v.index());
            let py = predicted[u] as usize * k + predicted[v] as usize;
            let pt = truth[u] as usize * k + truth[v] as usize;
            c += edge[e * k.pow(4) + py * k * k + pt];
        }
        c
    }

    #[test]
    fn per_item_matches_direct_sum() {
        let k: usize = 3;
        let n = 5;
        let edges: Vec<_> = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 3)]
            .iter()
            .map(|&(a, b)| (NodeId(a), NodeId(b)))
            .collect();
        let node: Vec<f64> = (0..n * k * k).map(|i| (i % 7) as f64 * 0.25).collect();
        let edge: Vec<f64> = (0..edges.len() * k.pow(4))
            .map(|i| (i % 11) as f64 * 0.1)
            .collect();
        let predicted = [0, 2, 1, 1, 0];
        let truth = [1, 2, 0, 1, 2];
        let t: Vec<Option<u32>> = truth.iter().map(|&x| Some(x)).collect();
        let c = structured_cost(
            &predicted,
            &t,
            k,
            &edges,
            CostTable::PerItem(&node),
            CostTable::PerItem(&edge),
        )
        .unwrap();
        let expect = brute_force(&predicted, &truth, k, &edges, &node, &edge);
        assert!((c.total() - expect).abs() < 1e-12);
        assert_eq!((c.nodes, c.edges), (5, 6));
    }

    #[test]
    fn unknown_truth_skips_node_and_its_edges() {
        let edges = [(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))];
        let c = structured_cost_with(
            &[0, 1, 0],
            &[Some(1), None, Some(0)],
            2,
            &edges,
            |_, y, t| f64::from(u8::from(y != t)),
            |_, _, _| 1.0,
        )
        .unwrap();
        assert_eq!(
            (c.node_cost, c.edge_cost, c.nodes, c.edges),
            (1.0, 0.0, 2, 0)
        );
    }

    #[test]
    fn invalid_inputs() {
        let e = [(NodeId(0), NodeId(3))];
        let node = [0.0; 4];
        let edge = [0.0; 16];
        let run = |p: &[u32], t: &[Option<u32>], edges: &[(NodeId, NodeId)], nc: &[f64]| {
            structured_cost(
                p,
                t,
                2,
                edges,
                CostTable::Shared(nc),
                CostTable::Shared(&edge),
            )
        };
        assert!(matches!(
            run(&[], &[], &[], &node),
            Err(EvalError::Empty { .. })
        ));
        assert!(matches!(
            run(&[0], &[Some(0), Some(1)], &[], &node),
            Err(EvalError::LengthMismatch { .. })
        ));
        assert!(matches!(
            run(&[0, 2], &[Some(0), Some(1)], &[], &node),
            Err(EvalError::LabelOutOfRange {
                what: "predicted",
                index: 1,
                ..
            })
        ));
        assert!(matches!(
            run(&[0, 1], &[Some(0), Some(7)], &[], &node),
            Err(EvalError::LabelOutOfRange { what: "truth", .. })
        ));
        assert!(matches!(
            run(&[0, 1], &[Some(0), Some(1)], &e, &node),
            Err(EvalError::IndexOutOfRange { index: 3, .. })
        ));
        assert!(matches!(
            run(&[0, 1], &[Some(0), Some(1)], &[], &node[..3]),
            Err(EvalError::LengthMismatch {
                what: "node_costs",
                ..
            })
        ));
    }
}
