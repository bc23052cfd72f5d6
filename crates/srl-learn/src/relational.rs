//! Shared machinery of the relational Markov network learners: the weight layout
//! (node features x class, edge label pairs), the conditioned pairwise MRF of a graph
//! (free nodes, clamped nodes folded into unary terms), full-graph marginals, the Bethe
//! estimate of `log Z`, and the chain rule from clique log-potentials to weights.

use serde::{Deserialize, Serialize};
use srl_graph::{Directedness, EdgeId, NodeId, RelationalGraph};
use srl_infer::{Convergence, Marginals, MrfParts, PairTable, PairwiseMrf};

use crate::error::LearnError;

const NONE: u32 = u32::MAX;

/// How edge label-pair weights are tied.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EdgeWeights {
    /// One weight per unordered pair `{a, b}` (`k (k + 1) / 2` used entries): for undirected
    /// graphs, where the stored orientation `u < v` carries no meaning.
    Symmetric,
    /// One weight per ordered pair `(a, b)` of (source, target) labels (`k²` entries): for
    /// directed graphs.
    Ordered,
}

impl EdgeWeights {
    /// `Symmetric` for undirected graphs, `Ordered` for directed ones.
    #[must_use]
    pub fn for_graph(graph: &RelationalGraph) -> Self {
        match graph.directedness() {
            Directedness::Undirected => Self::Symmetric,
            Directedness::Directed => Self::Ordered,
        }
    }
}

/// The weight vector layout of a log-linear relational model with node and edge cliques
/// (Taskar et al. 2002 as Sen & Getoor 2006, §6 use it):
///
/// ```text
/// θ_v(a)    = W_a · x_v + b_a                   node clique, features x class
/// θ_e(a, b) = E[idx(a, b)]                      edge clique, label-pair indicator
/// w = [ W (k x d, row-major) | b (k) | E (k x k, row-major) ]
/// ```
///
/// With [`EdgeWeights::Symmetric`], `idx(a, b) = min(a, b) · k + max(a, b)`, so the entries
/// below the diagonal of `E` stay 0.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Number of labels `k`.
    pub num_labels: usize,
    /// Number of node features `d`.
    pub num_features: usize,
    /// Edge weight tying.
    pub edge_weights: EdgeWeights,
}

impl Layout {
    /// Checks that `graph` has the `k` labels and `d` node features this layout was built for.
    ///
    /// # Errors
    /// [`LearnError::DimensionMismatch`] naming the count that differs.
    pub fn check_graph(&self, graph: &RelationalGraph) -> Result<(), LearnError> {
        if graph.num_labels() != self.num_labels {
            return Err(LearnError::DimensionMismatch {
                what: "graph labels (k)",
                expected: self.num_labels,
                found: graph.num_labels(),
            });
        }
        if graph.num_features() != self.num_features {
            return Err(LearnError::DimensionMismatch {
                what: "graph features (d)",
                expected: self.num_features,
                found: graph.num_features(),
            });
        }
        Ok(())
    }

    /// Total number of weights `k d + k + k²`.
    #[must_use]
    pub fn dim(&self) -> usize {
        let k = self.num_labels;
        k * self.num_features + k + k * k
    }

    /// Offset of the intercepts `b`.
    #[must_use]
    pub fn bias_offset(&self) -> usize {
        self.num_labels * self.num_features
    }

    /// Offset of the edge weights `E`.
    #[must_use]
    pub fn edge_offset(&self) -> usize {
        self.bias_offset() + self.num_labels
    }

    /// Index (within `E`) of the weight of edge label pair `(a, b)`.
    #[inline]
    #[must_use]
    pub fn pair_index(&self, a: usize, b: usize) -> usize {
        let k = self.num_labels;
        match self.edge_weights {
            EdgeWeights::Ordered => a * k + b,
            EdgeWeights::Symmetric => a.min(b) * k + a.max(b),
        }
    }

    /// The `k x k` edge log-potential table `θ(a, b)` under weights `w`.
    #[must_use]
    pub fn edge_table(&self, w: &[f64]) -> Vec<f64> {
        let k = self.num_labels;
        let e = &w[self.edge_offset()..];
        (0..k * k)
            .map(|i| e[self.pair_index(i / k, i % k)])
            .collect()
    }

    /// Node scores `θ_v(a) = W_a · x_v + b_a` of every node, `n x k` row-major.
    pub fn node_scores(&self, graph: &RelationalGraph, w: &[f64]) -> Vec<f64> {
        let (k, d) = (self.num_labels, self.num_features);
        let mut out = vec![0.0; graph.num_nodes() * k];
        for (v, s) in out.chunks_exact_mut(k).enumerate() {
            s.copy_from_slice(&w[self.bias_offset()..self.bias_offset() + k]);
            graph.attributes_of(NodeId::new(v)).for_each(|j, x| {
                for (a, sa) in s.iter_mut().enumerate() {
                    *sa += w[a * d + j] * x;
                }
            });
        }
        out
    }

    /// Chain rule: adds `Σ_v g_v(a) ∂θ_v(a)/∂w + Σ_e G_e(a, b) ∂θ_e(a, b)/∂w` to `grad`,
    /// for `g` (`n x k`, zero rows skipped) and `G` (`m x k²`, an empty slice for none).
    pub fn backprop(
        &self,
        graph: &RelationalGraph,
        g_node: &[f64],
        g_edge: &[f64],
        grad: &mut [f64],
    ) {
        let (k, d) = (self.num_labels, self.num_features);
        let (bo, eo) = (self.bias_offset(), self.edge_offset());
        for (v, g) in g_node.chunks_exact(k).enumerate() {
            if g.iter().all(|x| *x == 0.0) {
                continue;
            }
            for (a, &ga) in g.iter().enumerate() {
                grad[bo + a] += ga;
            }
            graph.attributes_of(NodeId::new(v)).for_each(|j, x| {
                for (a, &ga) in g.iter().enumerate() {
                    grad[a * d + j] += ga * x;
                }
            });
        }
        for ge in g_edge.chunks_exact(k * k) {
            for (i, &gi) in ge.iter().enumerate() {
                if gi != 0.0 {
                    grad[eo + self.pair_index(i / k, i % k)] += gi;
                }
            }
        }
    }
}

/// A graph viewed as a conditional model: which nodes are in the model, which of those are
/// clamped to a known label, and how the edges split into free-free edges (pairwise
/// factors), half-clamped edges (folded into the free endpoint's unary term) and
/// clamped-clamped edges (constants).
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    pub k: usize,
    /// Free index → node id.
    pub free: Vec<u32>,
    /// Node id → free index, or `NONE`.
    pub free_of: Vec<u32>,
    /// Node id → clamped label, if the node is in the model and clamped.
    pub clamp: Vec<Option<u32>>,
    /// Edges with both endpoints free.
    pub full: Vec<u32>,
    /// Edges with one free and one clamped endpoint.
    pub half: Vec<u32>,
    /// Edges with both endpoints clamped.
    pub fixed: Vec<u32>,
}

impl Scope {
    /// The model over nodes with `include[v]`, clamping those with `evidence[v] = Some(_)`
    /// (`evidence` may be empty: nothing clamped).
    pub fn new(
        graph: &RelationalGraph,
        include: &[bool],
        evidence: &[Option<u32>],
    ) -> Result<Self, LearnError> {
        let (n, k) = (graph.num_nodes(), graph.num_labels());
        if include.len() != n {
            return Err(LearnError::DimensionMismatch {
                what: "node mask",
                expected: n,
                found: include.len(),
            });
        }
        if !evidence.is_empty() && evidence.len() != n {
            return Err(LearnError::DimensionMismatch {
                what: "evidence",
                expected: n,
                found: evidence.len(),
            });
        }
        let mut free = Vec::new();
        let mut free_of = vec![NONE; n];
        let mut clamp = vec![None; n];
        for v in 0..n {
            if !include[v] {
                continue;
            }
            match evidence.get(v).copied().flatten() {
                Some(l) if l as usize >= k => {
                    return Err(LearnError::LabelOutOfRange {
                        index: v,
                        label: l as usize,
                        num_labels: k,
                    });
                }
                Some(l) => clamp[v] = Some(l),
                None => {
                    free_of[v] = free.len() as u32;
                    free.push(v as u32);
                }
            }
        }
        let (mut full, mut half, mut fixed) = (Vec::new(), Vec::new(), Vec::new());
        for (e, u, v) in graph.edges() {
            let (u, v) = (u.index(), v.index());
            if !(include[u] && include[v]) {
                continue;
            }
            match (clamp[u].is_some(), clamp[v].is_some()) {
                (false, false) => full.push(e.0),
                (true, true) => fixed.push(e.0),
                _ => half.push(e.0),
            }
        }
        Ok(Self {
            k,
            free,
            free_of,
            clamp,
            full,
            half,
            fixed,
        })
    }

    /// Whether node `v` is in the model (free or clamped).
    pub fn contains(&self, v: usize) -> bool {
        self.free_of[v] != NONE || self.clamp[v].is_some()
    }

    /// The pairwise MRF over the free nodes with log-potentials `unary(v, a)` for nodes and
    /// `pair(e, a, b)` for edges (`a` the label of the edge's first endpoint); half-clamped
    /// edges are folded into their free endpoint's unary term. `shared_pair`: when `Some`,
    /// every free-free edge uses this one `k x k` table and `pair` is only called for
    /// half-clamped edges.
    pub fn mrf(
        &self,
        graph: &RelationalGraph,
        unary: impl Fn(usize, usize) -> f64,
        pair: impl Fn(usize, usize, usize) -> f64,
        shared_pair: Option<&[f64]>,
    ) -> Result<PairwiseMrf, LearnError> {
        let k = self.k;
        let mut un = vec![0.0; self.free.len() * k];
        for (i, &v) in self.free.iter().enumerate() {
            for a in 0..k {
                un[i * k + a] = unary(v as usize, a);
            }
        }
        for &e in &self.half {
            let (u, v) = graph.edge(EdgeId(e));
            let (u, v) = (u.index(), v.index());
            if let Some(c) = self.clamp[u] {
                let i = self.free_of[v] as usize;
                for b in 0..k {
                    un[i * k + b] += pair(e as usize, c as usize, b);
                }
            } else if let Some(c) = self.clamp[v] {
                let i = self.free_of[u] as usize;
                for a in 0..k {
                    un[i * k + a] += pair(e as usize, a, c as usize);
                }
            }
        }
        let mut edges = Vec::with_capacity(self.full.len());
        for &e in &self.full {
            let (u, v) = graph.edge(EdgeId(e));
            edges.push((self.free_of[u.index()], self.free_of[v.index()]));
        }
        let (edge_tables, tables) = match shared_pair {
            Some(t) => (
                vec![0u32; edges.len()],
                vec![PairTable::new(k, k, t.to_vec())],
            ),
            None => (
                (0..edges.len() as u32).collect(),
                self.full
                    .iter()
                    .map(|&e| PairTable::from_fn(k, k, |a, b| pair(e as usize, a, b)))
                    .collect(),
            ),
        };
        let parts = MrfParts {
            num_states: vec![k; self.free.len()],
            unary: un,
            edges,
            edge_tables,
            tables: if tables.is_empty() {
                vec![PairTable::new(k, k, vec![0.0; k * k])]
            } else {
                tables
            },
            evidence: Vec::new(),
        };
        PairwiseMrf::new(parts).map_err(|e| LearnError::Optimization {
            reason: format!("building the pairwise model: {e}"),
        })
    }

    /// Full-graph labels from free-node states, clamped labels elsewhere (0 for nodes not
    /// in the model).
    pub fn labels_from_states(&self, states: &[u32]) -> Vec<u32> {
        let mut y: Vec<u32> = self.clamp.iter().map(|c| c.unwrap_or(0)).collect();
        for (i, &v) in self.free.iter().enumerate() {
            y[v as usize] = states[i];
        }
        y
    }
}

/// Node and edge marginals of a whole graph (clamped nodes one-hot; half-clamped edges
/// the product of the clamp and the free endpoint's marginal), as Sen & Getoor (2006, §4)
/// use them for expected-cost decisions.
///
/// Nodes outside the model have all-zero rows, edges with an endpoint outside it all-zero
/// tables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphMarginals {
    k: usize,
    node: Vec<f64>,
    edge: Vec<f64>,
    convergence: Convergence,
    log_partition: f64,
}

impl GraphMarginals {
    /// Marginals of independent nodes: `node` is `n x k` (rows sum to 1), edge marginals are
    /// the products `μ_u(a) μ_v(b)` (e.g. from a logistic regression).
    ///
    /// # Errors
    /// [`LearnError::DimensionMismatch`] if `node.len() != n · k`,
    /// [`LearnError::InvalidValue`] for a negative or non-finite probability.
    pub fn independent(graph: &RelationalGraph, node: Vec<f64>) -> Result<Self, LearnError> {
        let (n, k) = (graph.num_nodes(), graph.num_labels());
        if node.len() != n * k {
            return Err(LearnError::DimensionMismatch {
                what: "node marginals (n x k)",
                expected: n * k,
                found: node.len(),
            });
        }
        if let Some(i) = node.iter().position(|p| !(p.is_finite() && *p >= 0.0)) {
            return Err(LearnError::InvalidValue {
                what: "node marginal",
                index: i,
                value: node[i],
            });
        }
        let mut edge = vec![0.0; graph.num_edges() * k * k];
        for (e, u, v) in graph.edges() {
            let t = &mut edge[e.index() * k * k..(e.index() + 1) * k * k];
            for a in 0..k {
                for b in 0..k {
                    t[a * k + b] = node[u.index() * k + a] * node[v.index() * k + b];
                }
            }
        }
        Ok(Self {
            k,
            node,
            edge,
            convergence: Convergence::exact(),
            log_partition: 0.0,
        })
    }

    /// Expands the marginals of a [`Scope`]'s free-node MRF to the whole graph.
    pub(crate) fn from_scope(
        graph: &RelationalGraph,
        scope: &Scope,
        m: &Marginals,
        log_partition: f64,
    ) -> Self {
        let k = scope.k;
        let (n, kk) = (graph.num_nodes(), k * k);
        let mut node = vec![0.0; n * k];
        for v in 0..n {
            if let Some(c) = scope.clamp[v] {
                node[v * k + c as usize] = 1.0;
            } else if scope.free_of[v] != NONE {
                node[v * k..(v + 1) * k].copy_from_slice(m.node(scope.free_of[v] as usize));
            }
        }
        let mut edge = vec![0.0; graph.num_edges() * kk];
        for (i, &e) in scope.full.iter().enumerate() {
            let t = &mut edge[e as usize * kk..(e as usize + 1) * kk];
            match m.edge(i) {
                Some(p) => t.copy_from_slice(p),
                None => {
                    let (u, v) = graph.edge(EdgeId(e));
                    for a in 0..k {
                        for b in 0..k {
                            t[a * k + b] = node[u.index() * k + a] * node[v.index() * k + b];
                        }
                    }
                }
            }
        }
        for &e in scope.half.iter().chain(&scope.fixed) {
            let (u, v) = graph.edge(EdgeId(e));
            let t = &mut edge[e as usize * kk..(e as usize + 1) * kk];
            for a in 0..k {
                for b in 0..k {
                    t[a * k + b] = node[u.index() * k + a] * node[v.index() * k + b];
                }
            }
        }
        Self {
            k,
            node,
            edge,
            convergence: m.convergence(),
            log_partition,
        }
    }

    /// Number of labels `k`.
    #[must_use]
    pub fn num_labels(&self) -> usize {
        self.k
    }

    /// `μ_v(·)`, length `k`.
    ///
    /// # Panics
    /// If `v` is out of range.
    #[must_use]
    pub fn node(&self, v: NodeId) -> &[f64] {
        &self.node[v.index() * self.k..(v.index() + 1) * self.k]
    }

    /// `μ_e(a, b)` of edge `e = (u, v)`, row-major `k x k` (`a` the label of `u`).
    ///
    /// # Panics
    /// If `e` is out of range.
    #[must_use]
    pub fn edge(&self, e: EdgeId) -> &[f64] {
        let kk = self.k * self.k;
        &self.edge[e.index() * kk..(e.index() + 1) * kk]
    }

    /// All node marginals, `n x k` row-major.
    #[must_use]
    pub fn node_all(&self) -> &[f64] {
        &self.node
    }

    /// How the inference that produced them ended.
    #[must_use]
    pub fn convergence(&self) -> Convergence {
        self.convergence
    }

    /// The inference's `log Z` of the free-node model: exact when the algorithm reports it,
    /// else the Bethe approximation at the returned beliefs (0 for independent marginals).
    #[must_use]
    pub fn log_partition(&self) -> f64 {
        self.log_partition
    }
}

/// `-Σ p log p` over the positive entries.
fn entropy(p: &[f64]) -> f64 {
    -p.iter()
        .filter(|&&x| x > 0.0)
        .map(|&x| x * x.ln())
        .sum::<f64>()
}

/// `log Z` of `mrf` from its marginals: the algorithm's own value when it reports one
/// ([`srl_infer::Exact`]), otherwise the Bethe free-energy estimate
/// `Σ_v μ_v·θ_v + Σ_e μ_e·θ_e + Σ_e H(μ_e) − Σ_v (deg_v − 1) H(μ_v)` (exact on trees with
/// exact marginals; at an LBP fixed point its gradient in `θ` is the beliefs).
pub(crate) fn log_partition(mrf: &PairwiseMrf, m: &Marginals) -> f64 {
    if let Some(z) = m.log_partition() {
        return z;
    }
    let n = mrf.num_nodes();
    let mut deg = vec![0usize; n];
    let mut z = 0.0;
    for e in 0..mrf.num_edges() {
        let (u, v) = mrf.edge(e);
        deg[u] += 1;
        deg[v] += 1;
        let t = &mrf.pair_table(e).log_values;
        match m.edge(e) {
            Some(p) => {
                z += p.iter().zip(t).map(|(p, t)| p * t).sum::<f64>() + entropy(p);
            }
            None => {
                // Mean-field style: independent beliefs.
                let (pu, pv) = (m.node(u), m.node(v));
                let kv = pv.len();
                for (a, &x) in pu.iter().enumerate() {
                    for (b, &y) in pv.iter().enumerate() {
                        z += x * y * t[a * kv + b];
                    }
                }
                z += entropy(pu) + entropy(pv);
            }
        }
    }
    for (v, &d) in deg.iter().enumerate() {
        let p = m.node(v);
        z += p.iter().zip(mrf.unary(v)).map(|(p, t)| p * t).sum::<f64>();
        z -= (d as f64 - 1.0) * entropy(p);
    }
    z
}

/// The labels of the nodes in `mask` (all must be labelled), as `u32`, and a check that the
/// graph has labels.
pub(crate) fn training_labels(
    graph: &RelationalGraph,
    mask: &[bool],
) -> Result<Vec<u32>, LearnError> {
    let n = graph.num_nodes();
    if mask.len() != n {
        return Err(LearnError::DimensionMismatch {
            what: "training mask",
            expected: n,
            found: mask.len(),
        });
    }
    if graph.num_labels() == 0 {
        return Err(LearnError::NoTrainingData {
            reason: "the graph has no label set".into(),
        });
    }
    let mut y = vec![0u32; n];
    let mut count = 0usize;
    for v in 0..n {
        if mask[v] {
            match graph.labels()[v] {
                Some(l) => {
                    y[v] = l;
                    count += 1;
                }
                None => {
                    return Err(LearnError::NoTrainingData {
                        reason: format!("training node {v} has no label"),
                    });
                }
            }
        }
    }
    if count == 0 {
        return Err(LearnError::NoTrainingData {
            reason: "the training mask selects no node".into(),
        });
    }
    Ok(y)
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Tiny random graphs and brute-force enumeration oracles.

    use rand::{RngExt as _, SeedableRng as _};
    use rand_chacha::ChaCha8Rng;
    use srl_graph::{Attributes, CostModel, Directedness, LabelSet, NodeId, RelationalGraph};

    /// A graph with `n` nodes, `d` dense random features, labels from `rng`, the given edges,
    /// and random per-clique costs (diagonal 0).
    pub fn tiny(
        n: usize,
        k: usize,
        d: usize,
        edges: &[(u32, u32)],
        directed: bool,
        seed: u64,
    ) -> (RelationalGraph, CostModel) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let values = (0..n * d).map(|_| rng.random_range(-1.0..1.0)).collect();
        let labels = (0..n)
            .map(|_| Some(rng.random_range(0..k as u32)))
            .collect();
        let g = RelationalGraph::new(
            Vec::new(),
            Attributes::Dense {
                num_features: d,
                values,
            },
            labels,
            LabelSet::numbered(k),
            edges.iter().map(|&(u, v)| (NodeId(u), NodeId(v))).collect(),
            if directed {
                Directedness::Directed
            } else {
                Directedness::Undirected
            },
        )
        .expect("valid graph");
        let mut node = vec![0.0; n * k * k];
        for (i, c) in node.iter_mut().enumerate() {
            let (p, t) = ((i % (k * k)) / k, i % k);
            if p != t {
                *c = rng.random_range(0.0..2.0);
            }
        }
        let kk = k * k;
        let mut edge = vec![0.0; g.num_edges() * kk * kk];
        for (i, c) in edge.iter_mut().enumerate() {
            let (p, t) = ((i % (kk * kk)) / kk, i % kk);
            if p != t {
                *c = rng.random_range(0.0..1.0);
            }
        }
        let costs = CostModel::per_clique(k, node, Some(edge)).expect("valid costs");
        (g, costs)
    }

    /// Every labelling of `n` nodes with `k` labels.
    pub fn all_labellings(n: usize, k: usize) -> Vec<Vec<u32>> {
        let total = k.pow(n as u32);
        (0..total)
            .map(|mut c| {
                (0..n)
                    .map(|_| {
                        let l = (c % k) as u32;
                        c /= k;
                        l
                    })
                    .collect()
            })
            .collect()
    }

    /// `log Σ exp`.
    pub fn lse(x: &[f64]) -> f64 {
        let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        m + x.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
    }

    /// A random weight vector of length `dim`.
    pub fn random_weights(dim: usize, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..dim).map(|_| rng.random_range(-1.0..1.0)).collect()
    }
}
