//! The relational graph: nodes with attributes and optional labels, edges in CSR form.

use petgraph::visit::{VisitMap as _, Visitable as _};
use serde::{Deserialize, Serialize};

use crate::error::GraphError;

/// Index of a node in a [`RelationalGraph`], in `0..graph.num_nodes()`.
///
/// A `u32` keeps adjacency arrays half the size of `usize` ones; graphs are limited to
/// `u32::MAX` nodes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The node id for index `i`.
    ///
    /// # Panics
    /// If `i > u32::MAX` (graphs larger than that are rejected by [`RelationalGraph::new`]).
    #[inline]
    #[must_use]
    pub fn new(i: usize) -> Self {
        Self(u32::try_from(i).expect("node index fits in u32"))
    }

    /// The index of this node, usable to index per-node flat arrays.
    #[inline]
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Index of an edge in a [`RelationalGraph`], in `0..graph.num_edges()`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EdgeId(pub u32);

impl EdgeId {
    /// The edge id for index `i`.
    ///
    /// # Panics
    /// If `i > u32::MAX`.
    #[inline]
    #[must_use]
    pub fn new(i: usize) -> Self {
        Self(u32::try_from(i).expect("edge index fits in u32"))
    }

    /// The index of this edge, usable to index per-edge flat arrays.
    #[inline]
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Whether edges have a direction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Directedness {
    /// Edges `{u, v}` are unordered; stored with `u < v`.
    Undirected,
    /// Edges `(u, v)` point from `u` to `v` (e.g. "v cites u" in LINQS files is kept as
    /// the citing paper pointing at the cited one only when a format needs it).
    Directed,
}

/// The named label set `{0, …, k-1}` of a graph (e.g. Cora's seven topics).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelSet {
    names: Vec<String>,
}

impl LabelSet {
    /// A label set with the given names; label `i` is `names[i]`.
    ///
    /// # Errors
    /// [`GraphError::DuplicateLabel`] if a name occurs twice.
    pub fn new(names: Vec<String>) -> Result<Self, GraphError> {
        for (i, n) in names.iter().enumerate() {
            if names[..i].contains(n) {
                return Err(GraphError::DuplicateLabel { name: n.clone() });
            }
        }
        Ok(Self { names })
    }

    /// The label set `{"0", "1", …, "k-1"}`.
    #[must_use]
    pub fn numbered(k: usize) -> Self {
        Self {
            names: (0..k).map(|i| i.to_string()).collect(),
        }
    }

    /// Number of labels `k`.
    #[must_use]
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True when there are no labels.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Name of label `i`, or `None` if `i >= k`.
    #[must_use]
    pub fn name(&self, i: usize) -> Option<&str> {
        self.names.get(i).map(String::as_str)
    }

    /// All names, in label order.
    #[must_use]
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Index of the label called `name`, if any (linear scan: label sets are small).
    #[must_use]
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

/// The attribute (feature) table of a graph's nodes: `num_nodes x num_features`, dense or
/// sparse (CSR rows, column indices strictly increasing within a row).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Attributes {
    /// Row-major `num_nodes x num_features` values.
    Dense {
        /// Number of columns.
        num_features: usize,
        /// `values[v * num_features + j]` is feature `j` of node `v`.
        values: Vec<f64>,
    },
    /// Compressed sparse rows; absent entries are 0.
    Sparse {
        /// Number of columns.
        num_features: usize,
        /// Row `v` occupies `indices[offsets[v]..offsets[v + 1]]`; `offsets.len() == num_nodes + 1`.
        offsets: Vec<usize>,
        /// Column indices, strictly increasing within each row, each `< num_features`.
        indices: Vec<u32>,
        /// Values parallel to `indices`.
        values: Vec<f64>,
    },
}

impl Attributes {
    /// An empty table (zero features) for `num_nodes` nodes.
    #[must_use]
    pub fn none(num_nodes: usize) -> Self {
        Self::Sparse {
            num_features: 0,
            offsets: vec![0; num_nodes + 1],
            indices: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Number of feature columns.
    #[must_use]
    pub fn num_features(&self) -> usize {
        match self {
            Self::Dense { num_features, .. } | Self::Sparse { num_features, .. } => *num_features,
        }
    }

    /// Number of rows the table holds.
    #[must_use]
    pub fn num_rows(&self) -> usize {
        match self {
            Self::Dense {
                num_features,
                values,
            } => values.len().checked_div(*num_features).unwrap_or(0),
            Self::Sparse { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }

    /// Row `v` of the table.
    ///
    /// # Panics
    /// If `v >= num_rows()`.
    #[inline]
    #[must_use]
    pub fn row(&self, v: usize) -> AttributeRow<'_> {
        match self {
            Self::Dense {
                num_features,
                values,
            } => AttributeRow::Dense(&values[v * num_features..(v + 1) * num_features]),
            Self::Sparse {
                offsets,
                indices,
                values,
                ..
            } => {
                let (a, b) = (offsets[v], offsets[v + 1]);
                AttributeRow::Sparse {
                    indices: &indices[a..b],
                    values: &values[a..b],
                }
            }
        }
    }

    fn validate(&self, num_nodes: usize) -> Result<(), GraphError> {
        match self {
            Self::Dense {
                num_features,
                values,
            } => {
                if values.len() != num_nodes * num_features {
                    return Err(GraphError::DimensionMismatch {
                        what: "dense attribute values",
                        expected: num_nodes * num_features,
                        found: values.len(),
                    });
                }
                if let Some(i) = values.iter().position(|x| !x.is_finite()) {
                    return Err(GraphError::NonFinite {
                        what: "attribute value",
                        index: i,
                        value: values[i],
                    });
                }
            }
            Self::Sparse {
                num_features,
                offsets,
                indices,
                values,
            } => {
                if offsets.len() != num_nodes + 1 {
                    return Err(GraphError::DimensionMismatch {
                        what: "sparse attribute offsets",
                        expected: num_nodes + 1,
                        found: offsets.len(),
                    });
                }
                if indices.len() != values.len() || offsets.last() != Some(&indices.len()) {
                    return Err(GraphError::DimensionMismatch {
                        what: "sparse attribute indices/values",
                        expected: *offsets.last().unwrap_or(&0),
                        found: indices.len().min(values.len()),
                    });
                }
                for v in 0..num_nodes {
                    let (a, b) = (offsets[v], offsets[v + 1]);
                    if a > b || b > indices.len() {
                        return Err(GraphError::InvalidAttributes {
                            node: v,
                            reason: "offsets decrease or run past the end".into(),
                        });
                    }
                    let row = &indices[a..b];
                    if row.windows(2).any(|w| w[0] >= w[1]) {
                        return Err(GraphError::InvalidAttributes {
                            node: v,
                            reason: "column indices not strictly increasing".into(),
                        });
                    }
                    if let Some(&j) = row.last()
                        && j as usize >= *num_features
                    {
                        return Err(GraphError::InvalidAttributes {
                            node: v,
                            reason: format!("column {j} >= num_features {num_features}"),
                        });
                    }
                }
                if let Some(i) = values.iter().position(|x| !x.is_finite()) {
                    return Err(GraphError::NonFinite {
                        what: "attribute value",
                        index: i,
                        value: values[i],
                    });
                }
            }
        }
        Ok(())
    }
}

/// One node's attributes, borrowed from an [`Attributes`] table.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum AttributeRow<'a> {
    /// All `num_features` values.
    Dense(&'a [f64]),
    /// The non-zero entries: column indices (strictly increasing) and their values.
    Sparse {
        /// Column indices.
        indices: &'a [u32],
        /// Values parallel to `indices`.
        values: &'a [f64],
    },
}

impl AttributeRow<'_> {
    /// Calls `f(j, x_j)` for every stored entry (all columns for dense rows, the non-zeros
    /// for sparse rows).
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(usize, f64)) {
        match *self {
            Self::Dense(v) => v.iter().enumerate().for_each(|(j, &x)| f(j, x)),
            Self::Sparse { indices, values } => indices
                .iter()
                .zip(values)
                .for_each(|(&j, &x)| f(j as usize, x)),
        }
    }

    /// Dot product with a dense weight vector `w` (length `num_features`).
    ///
    /// # Panics
    /// If a column index is out of range for `w`.
    #[inline]
    #[must_use]
    pub fn dot(&self, w: &[f64]) -> f64 {
        match *self {
            Self::Dense(v) => v.iter().zip(w).map(|(a, b)| a * b).sum(),
            Self::Sparse { indices, values } => indices
                .iter()
                .zip(values)
                .map(|(&j, &x)| x * w[j as usize])
                .sum(),
        }
    }

    /// Value of column `j` (0 for an absent sparse entry).
    #[must_use]
    pub fn get(&self, j: usize) -> f64 {
        match *self {
            Self::Dense(v) => v.get(j).copied().unwrap_or(0.0),
            Self::Sparse { indices, values } => u32::try_from(j)
                .ok()
                .and_then(|j| indices.binary_search(&j).ok())
                .map_or(0.0, |p| values[p]),
        }
    }

    /// The row as a dense vector of length `num_features`.
    #[must_use]
    pub fn to_dense(&self, num_features: usize) -> Vec<f64> {
        let mut out = vec![0.0; num_features];
        self.for_each(|j, x| out[j] = x);
        out
    }
}

/// What [`RelationalGraph::new`] dropped while canonicalising the edge list, so nothing
/// is lost silently.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdgeCleanup {
    /// Edges `(v, v)` dropped.
    pub self_loops: usize,
    /// Edges dropped because the same (undirected: unordered) pair occurred before.
    pub duplicates: usize,
}

/// A relational graph: `n` nodes with an attribute row and an optional label from a named
/// [`LabelSet`], and `m` edges, with neighbour lists in CSR form.
///
/// Invariants (established by [`RelationalGraph::new`], the only constructor):
/// - no self-loops, no duplicate edges (undirected: `{u, v}` once, stored with `u < v`);
/// - edges are sorted by `(source, target)`, so `EdgeId`s are deterministic;
/// - `neighbors(v)` lists every node adjacent to `v` (both directions for directed
///   graphs), sorted increasingly (ties, possible in directed graphs, by edge id), with
///   `incident_edges(v)` parallel to it.
///
/// Memory: `8 m` bytes of edge list plus `16 m` of CSR (undirected) plus attributes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RelationalGraph {
    node_names: Vec<String>,
    attributes: Attributes,
    labels: Vec<Option<u32>>,
    label_set: LabelSet,
    directedness: Directedness,
    edges: Vec<(NodeId, NodeId)>,
    offsets: Vec<usize>,
    adj_nodes: Vec<NodeId>,
    adj_edges: Vec<EdgeId>,
    cleanup: EdgeCleanup,
}

/// Sorts edge pairs by `(source, target)` and removes repeats, in `O(n + m + Σ d log d)`:
/// a counting sort by source, then a sort of each (short) source bucket by target.
fn sort_dedup_edges(edges: Vec<(NodeId, NodeId)>, n: usize) -> Vec<(NodeId, NodeId)> {
    let mut start = vec![0usize; n + 1];
    for &(u, _) in &edges {
        start[u.index() + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut cursor = start.clone();
    let mut targets = vec![NodeId(0); edges.len()];
    for &(u, v) in &edges {
        targets[cursor[u.index()]] = v;
        cursor[u.index()] += 1;
    }
    drop(cursor);
    let mut out = edges;
    out.clear();
    for u in 0..n {
        let bucket = &mut targets[start[u]..start[u + 1]];
        bucket.sort_unstable();
        let mut last = None;
        for &v in bucket.iter() {
            if last != Some(v) {
                out.push((NodeId::new(u), v));
                last = Some(v);
            }
        }
    }
    out
}

impl RelationalGraph {
    /// Builds a graph and its CSR adjacency.
    ///
    /// # Arguments
    /// - `node_names`: one external id per node (e.g. the paper id of a LINQS file); pass
    ///   an empty vector to name nodes `"0"`, `"1"`, ….
    /// - `attributes`: `n` rows.
    /// - `labels`: length `n`; `Some(c)` with `c < label_set.len()`, or `None` (unlabelled).
    /// - `edges`: node index pairs; self-loops and duplicates are dropped and counted in
    ///   [`RelationalGraph::cleanup`].
    ///
    /// # Errors
    /// [`GraphError::DimensionMismatch`] when lengths disagree, [`GraphError::NodeOutOfRange`]
    /// for an edge endpoint `>= n`, [`GraphError::LabelOutOfRange`],
    /// [`GraphError::InvalidAttributes`] / [`GraphError::NonFinite`] for a bad attribute
    /// table, [`GraphError::TooLarge`] past `u32::MAX` nodes or edges.
    ///
    /// # Complexity
    /// `O(n + m + Σ_v d⁺_v log d⁺_v)` for out-degrees `d⁺` (a counting sort by source, then
    /// short per-source sorts), so at most `O(n + m log m)`.
    pub fn new(
        node_names: Vec<String>,
        attributes: Attributes,
        labels: Vec<Option<u32>>,
        label_set: LabelSet,
        edges: Vec<(NodeId, NodeId)>,
        directedness: Directedness,
    ) -> Result<Self, GraphError> {
        let n = labels.len();
        if n > u32::MAX as usize {
            return Err(GraphError::TooLarge {
                what: "nodes",
                count: n,
            });
        }
        let node_names = if node_names.is_empty() {
            (0..n).map(|i| i.to_string()).collect()
        } else {
            node_names
        };
        if node_names.len() != n {
            return Err(GraphError::DimensionMismatch {
                what: "node names",
                expected: n,
                found: node_names.len(),
            });
        }
        attributes.validate(n)?;
        for (v, l) in labels.iter().enumerate() {
            if let Some(c) = *l
                && c as usize >= label_set.len()
            {
                return Err(GraphError::LabelOutOfRange {
                    node: v,
                    label: c as usize,
                    num_labels: label_set.len(),
                });
            }
        }
        let mut cleanup = EdgeCleanup::default();
        let mut canon = Vec::with_capacity(edges.len());
        for (u, v) in edges {
            for w in [u, v] {
                if w.index() >= n {
                    return Err(GraphError::NodeOutOfRange {
                        node: w.index(),
                        num_nodes: n,
                    });
                }
            }
            if u == v {
                cleanup.self_loops += 1;
                continue;
            }
            let e = match directedness {
                Directedness::Undirected if u > v => (v, u),
                _ => (u, v),
            };
            canon.push(e);
        }
        let before = canon.len();
        canon = sort_dedup_edges(canon, n);
        cleanup.duplicates = before - canon.len();
        if canon.len() > u32::MAX as usize {
            return Err(GraphError::TooLarge {
                what: "edges",
                count: canon.len(),
            });
        }
        // CSR over both endpoints. Edges are sorted by (source, target). Pass 1 appends
        // every edge's source to its target's row, pass 2 every target to its source's row:
        // for undirected graphs (source < target) each row then holds its smaller
        // neighbours increasing, followed by its larger neighbours increasing, i.e. it is
        // sorted without any per-row sort. Directed rows may need the fallback sort below.
        let mut degree = vec![0usize; n + 1];
        for &(u, v) in &canon {
            degree[u.index()] += 1;
            degree[v.index()] += 1;
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut acc = 0usize;
        offsets.push(0);
        for d in &degree[..n] {
            acc += d;
            offsets.push(acc);
        }
        drop(degree);
        let mut cursor = offsets[..n].to_vec();
        let mut adj_nodes = vec![NodeId(0); acc];
        let mut adj_edges = vec![EdgeId(0); acc];
        for (e, &(u, v)) in canon.iter().enumerate() {
            let c = &mut cursor[v.index()];
            adj_nodes[*c] = u;
            adj_edges[*c] = EdgeId::new(e);
            *c += 1;
        }
        for (e, &(u, v)) in canon.iter().enumerate() {
            let c = &mut cursor[u.index()];
            adj_nodes[*c] = v;
            adj_edges[*c] = EdgeId::new(e);
            *c += 1;
        }
        drop(cursor);
        // Directed rows may interleave in-neighbours and out-neighbours; sort such rows by
        // (neighbour id, edge id), keeping edge ids parallel.
        for v in 0..n {
            let (a, b) = (offsets[v], offsets[v + 1]);
            let unsorted = (a + 1..b)
                .any(|i| (adj_nodes[i - 1], adj_edges[i - 1]) > (adj_nodes[i], adj_edges[i]));
            if unsorted {
                let mut pairs: Vec<(NodeId, EdgeId)> = adj_nodes[a..b]
                    .iter()
                    .copied()
                    .zip(adj_edges[a..b].iter().copied())
                    .collect();
                pairs.sort_unstable();
                for (i, (nb, e)) in pairs.into_iter().enumerate() {
                    adj_nodes[a + i] = nb;
                    adj_edges[a + i] = e;
                }
            }
        }
        Ok(Self {
            node_names,
            attributes,
            labels,
            label_set,
            directedness,
            edges: canon,
            offsets,
            adj_nodes,
            adj_edges,
            cleanup,
        })
    }

    /// Number of nodes `n`.
    #[inline]
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        self.labels.len()
    }

    /// Number of edges `m` (after dropping self-loops and duplicates).
    #[inline]
    #[must_use]
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Whether edges are directed.
    #[must_use]
    pub fn directedness(&self) -> Directedness {
        self.directedness
    }

    /// What the constructor dropped from the edge list it was given.
    #[must_use]
    pub fn cleanup(&self) -> EdgeCleanup {
        self.cleanup
    }

    /// Endpoints of edge `e` (`u < v` for undirected graphs).
    ///
    /// # Panics
    /// If `e` is out of range.
    #[inline]
    #[must_use]
    pub fn edge(&self, e: EdgeId) -> (NodeId, NodeId) {
        self.edges[e.index()]
    }

    /// All edges as endpoint pairs, indexed by `EdgeId`.
    #[inline]
    #[must_use]
    pub fn edge_list(&self) -> &[(NodeId, NodeId)] {
        &self.edges
    }

    /// Iterator over `(EdgeId, u, v)`.
    pub fn edges(&self) -> impl ExactSizeIterator<Item = (EdgeId, NodeId, NodeId)> + '_ {
        self.edges
            .iter()
            .enumerate()
            .map(|(e, &(u, v))| (EdgeId::new(e), u, v))
    }

    /// Iterator over all node ids `0..n`.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = NodeId> + use<> {
        (0..self.labels.len() as u32).map(NodeId)
    }

    /// Nodes adjacent to `v` (both directions for a directed graph), sorted increasingly.
    ///
    /// # Panics
    /// If `v` is out of range.
    #[inline]
    #[must_use]
    pub fn neighbors(&self, v: NodeId) -> &[NodeId] {
        let i = v.index();
        &self.adj_nodes[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Edges incident to `v`, parallel to [`RelationalGraph::neighbors`].
    ///
    /// # Panics
    /// If `v` is out of range.
    #[inline]
    #[must_use]
    pub fn incident_edges(&self, v: NodeId) -> &[EdgeId] {
        let i = v.index();
        &self.adj_edges[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Number of neighbours of `v`.
    #[inline]
    #[must_use]
    pub fn degree(&self, v: NodeId) -> usize {
        let i = v.index();
        self.offsets[i + 1] - self.offsets[i]
    }

    /// The CSR arrays `(offsets, neighbour ids, edge ids)`; row `v` spans
    /// `offsets[v]..offsets[v + 1]`. For inference kernels that want raw slices.
    #[must_use]
    pub fn csr(&self) -> (&[usize], &[NodeId], &[EdgeId]) {
        (&self.offsets, &self.adj_nodes, &self.adj_edges)
    }

    /// External name of node `v` (e.g. its paper id).
    #[must_use]
    pub fn node_name(&self, v: NodeId) -> &str {
        &self.node_names[v.index()]
    }

    /// All external node names, indexed by node.
    #[must_use]
    pub fn node_names(&self) -> &[String] {
        &self.node_names
    }

    /// The attribute table (`n x num_features`).
    #[must_use]
    pub fn attributes(&self) -> &Attributes {
        &self.attributes
    }

    /// Number of attribute columns.
    #[must_use]
    pub fn num_features(&self) -> usize {
        self.attributes.num_features()
    }

    /// Attributes of node `v`.
    #[inline]
    #[must_use]
    pub fn attributes_of(&self, v: NodeId) -> AttributeRow<'_> {
        self.attributes.row(v.index())
    }

    /// The label set.
    #[must_use]
    pub fn label_set(&self) -> &LabelSet {
        &self.label_set
    }

    /// Number of labels `k`.
    #[must_use]
    pub fn num_labels(&self) -> usize {
        self.label_set.len()
    }

    /// Label of node `v` in `0..k`, or `None` if unlabelled.
    ///
    /// Labels are `u32` everywhere on the collective-classification path: here, in
    /// [`RelationalGraph::labels`], in srl-infer's `LocalClassifier::fit` and
    /// `CollectiveResult::labels`, and in srl-learn's `LogisticRegressionParams::fit_rows`.
    /// Index per-class arrays with `c as usize`.
    ///
    /// # Panics
    /// If `v` is out of range.
    #[inline]
    #[must_use]
    pub fn label(&self, v: NodeId) -> Option<u32> {
        self.labels[v.index()]
    }

    /// All labels, indexed by node (`labels()[v.index()]`; see [`RelationalGraph::label`]
    /// for the label type).
    #[must_use]
    pub fn labels(&self) -> &[Option<u32>] {
        &self.labels
    }

    /// Share of edges whose two endpoints carry the same label, among edges with both
    /// endpoints labelled; `None` when there is no such edge.
    #[must_use]
    pub fn homophily(&self) -> Option<f64> {
        let (mut same, mut total) = (0usize, 0usize);
        for &(u, v) in &self.edges {
            if let (Some(a), Some(b)) = (self.labels[u.index()], self.labels[v.index()]) {
                total += 1;
                same += usize::from(a == b);
            }
        }
        (total > 0).then(|| same as f64 / total as f64)
    }

    /// Number of nodes with no neighbour.
    #[must_use]
    pub fn isolated_nodes(&self) -> usize {
        (0..self.num_nodes())
            .filter(|&v| self.offsets[v] == self.offsets[v + 1])
            .count()
    }

    /// Connected components (ignoring direction): a component index per node, in
    /// `0..count`, and `count`. Components are numbered in order of their smallest node.
    ///
    /// Runs petgraph's breadth-first search ([`petgraph::visit::Bfs`]) from each node not
    /// yet reached, in increasing node order, on an undirected petgraph copy of the edges
    /// (built here and dropped; [`RelationalGraph`] stays the public type).
    ///
    /// # Complexity
    /// `O(n + m)` time and memory, iterative (no recursion).
    #[must_use]
    pub fn connected_components(&self) -> (Vec<u32>, usize) {
        let n = self.num_nodes();
        let pg = self.to_petgraph_undirected_skeleton();
        let mut comp = vec![u32::MAX; n];
        let mut count = 0u32;
        let mut bfs = petgraph::visit::Bfs {
            stack: std::collections::VecDeque::new(),
            discovered: pg.visit_map(),
        };
        for s in 0..n {
            let start = petgraph::graph::NodeIndex::new(s);
            if !bfs.discovered.visit(start) {
                continue;
            }
            bfs.stack.push_back(start);
            while let Some(v) = bfs.next(&pg) {
                comp[v.index()] = count;
            }
            count += 1;
        }
        (comp, count as usize)
    }

    /// The edges as an undirected petgraph graph with unit weights (node `i` is
    /// `NodeIndex::new(i)`).
    fn to_petgraph_undirected_skeleton(&self) -> petgraph::graph::UnGraph<(), (), u32> {
        let mut pg = petgraph::graph::UnGraph::with_capacity(self.num_nodes(), self.num_edges());
        for _ in 0..self.num_nodes() {
            pg.add_node(());
        }
        pg.extend_with_edges(self.edges.iter().map(|&(u, v)| (u.0, v.0)));
        pg
    }

    /// The edge joining `u` and `v`, if any, and whether it is stored the other way round
    /// (`graph.edge(e) == (v, u)`).
    ///
    /// Undirected graphs store `{u, v}` once as `(min, max)`, so `find_edge(v, u)` of an
    /// edge `(u, v)` returns `Some((e, true))`. Directed graphs look for `u → v` first and
    /// fall back to `v → u` (reported as reversed).
    ///
    /// # Panics
    /// If `u` or `v` is out of range.
    ///
    /// # Complexity
    /// `O(log deg(u))` (binary search in `u`'s sorted neighbour list; a directed pair stored
    /// in both directions adds a scan of the equal run).
    #[must_use]
    pub fn find_edge(&self, u: NodeId, v: NodeId) -> Option<(EdgeId, bool)> {
        let nbrs = self.neighbors(u);
        let edges = self.incident_edges(u);
        let start = nbrs.partition_point(|&w| w < v);
        let run = nbrs[start..].iter().take_while(|&&w| w == v).count();
        let candidates = &edges[start..start + run];
        if let Some(&e) = candidates.iter().find(|&&e| self.edge(e) == (u, v)) {
            return Some((e, false));
        }
        candidates.first().map(|&e| (e, true))
    }

    /// The disjoint union of graphs that share a label set: the nodes of `graphs[0]`, then
    /// those of `graphs[1]` (ids shifted by `graphs[0].num_nodes()`), and so on, with every
    /// graph's edges; no edge joins two parts.
    ///
    /// Node names, attribute rows and labels are copied (dense attributes stay dense;
    /// if any part is sparse, the union is sparse). Because each part's edges are already
    /// canonical and the shifts keep their order, the union's edges are the parts' edges in
    /// order: edge `e` of part `p` becomes edge `edge_offsets[p] + e`, with the same
    /// orientation. This is the training set of a protocol that trains on whole graphs
    /// (Sen & Getoor 2006, §6: 3-fold cross-validation over three generated graphs, and over
    /// sets of Intel-lab snapshots).
    ///
    /// # Returns
    /// The union and the node offset of each part (`parts + 1` entries, the last being the
    /// union's node count).
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] for no graphs; [`GraphError::Incompatible`] when parts differ in
    /// label set, feature count or directedness; [`GraphError::TooLarge`] past `u32::MAX`
    /// nodes.
    ///
    /// # Complexity
    /// `O(Σ (n_p · d + m_p))`.
    ///
    /// # Examples
    /// ```
    /// use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};
    /// let g = RelationalGraph::new(vec![], Attributes::none(2), vec![Some(0), Some(1)],
    ///     LabelSet::numbered(2), vec![(NodeId(1), NodeId(0))], Directedness::Undirected)?;
    /// let (u, offsets) = RelationalGraph::disjoint_union(&[&g, &g])?;
    /// assert_eq!(offsets, vec![0, 2, 4]);
    /// assert_eq!(u.edge_list(), &[(NodeId(0), NodeId(1)), (NodeId(2), NodeId(3))]);
    /// # Ok::<(), srl_graph::GraphError>(())
    /// ```
    pub fn disjoint_union(graphs: &[&RelationalGraph]) -> Result<(Self, Vec<usize>), GraphError> {
        let first = graphs.first().ok_or_else(|| GraphError::InvalidParameter {
            name: "graphs",
            value: "[]".into(),
            reason: "a disjoint union needs at least one graph".into(),
        })?;
        let d = first.num_features();
        for (p, g) in graphs.iter().enumerate() {
            let reason = if g.label_set != first.label_set {
                Some("label sets differ")
            } else if g.num_features() != d {
                Some("feature counts differ")
            } else if g.directedness != first.directedness {
                Some("directedness differs")
            } else {
                None
            };
            if let Some(r) = reason {
                return Err(GraphError::Incompatible {
                    what: "disjoint union",
                    reason: format!("part {p}: {r} from part 0"),
                });
            }
        }
        let total: usize = graphs.iter().map(|g| g.num_nodes()).sum();
        if total > u32::MAX as usize {
            return Err(GraphError::TooLarge {
                what: "nodes",
                count: total,
            });
        }
        let all_dense = graphs
            .iter()
            .all(|g| matches!(g.attributes, Attributes::Dense { .. }));
        let attributes = if all_dense {
            let mut values = Vec::with_capacity(total * d);
            for g in graphs {
                if let Attributes::Dense { values: v, .. } = &g.attributes {
                    values.extend_from_slice(v);
                }
            }
            Attributes::Dense {
                num_features: d,
                values,
            }
        } else {
            let (mut offsets, mut indices, mut values) = (vec![0usize], Vec::new(), Vec::new());
            for g in graphs {
                for v in 0..g.num_nodes() {
                    g.attributes.row(v).for_each(|j, x| {
                        if x != 0.0 {
                            indices.push(j as u32);
                            values.push(x);
                        }
                    });
                    offsets.push(indices.len());
                }
            }
            Attributes::Sparse {
                num_features: d,
                offsets,
                indices,
                values,
            }
        };
        let mut node_offsets = Vec::with_capacity(graphs.len() + 1);
        let (mut names, mut labels, mut edges) = (
            Vec::with_capacity(total),
            Vec::with_capacity(total),
            Vec::new(),
        );
        let mut offset = 0usize;
        for g in graphs {
            node_offsets.push(offset);
            names.extend_from_slice(&g.node_names);
            labels.extend_from_slice(&g.labels);
            let s = offset as u32;
            edges.extend(
                g.edges
                    .iter()
                    .map(|&(u, v)| (NodeId(u.0 + s), NodeId(v.0 + s))),
            );
            offset += g.num_nodes();
        }
        node_offsets.push(offset);
        let union = Self::new(
            names,
            attributes,
            labels,
            first.label_set.clone(),
            edges,
            first.directedness,
        )?;
        Ok((union, node_offsets))
    }

    /// The subgraph induced by the nodes with `mask[v]`, renumbered in increasing order, with
    /// every edge whose two endpoints are kept (same orientation).
    ///
    /// # Returns
    /// The subgraph and, per new node, its id in `self`.
    ///
    /// # Errors
    /// [`GraphError::DimensionMismatch`] if `mask.len() != n`.
    ///
    /// # Complexity
    /// `O(n · d + m)`.
    pub fn induced_subgraph(&self, mask: &[bool]) -> Result<(Self, Vec<NodeId>), GraphError> {
        let n = self.num_nodes();
        if mask.len() != n {
            return Err(GraphError::DimensionMismatch {
                what: "node mask",
                expected: n,
                found: mask.len(),
            });
        }
        let kept: Vec<NodeId> = (0..n).filter(|&v| mask[v]).map(NodeId::new).collect();
        let mut new_id = vec![u32::MAX; n];
        for (i, v) in kept.iter().enumerate() {
            new_id[v.index()] = i as u32;
        }
        let d = self.num_features();
        let attributes = match &self.attributes {
            Attributes::Dense { values, .. } => Attributes::Dense {
                num_features: d,
                values: kept
                    .iter()
                    .flat_map(|v| &values[v.index() * d..(v.index() + 1) * d])
                    .copied()
                    .collect(),
            },
            Attributes::Sparse { .. } => {
                let (mut offsets, mut indices, mut values) = (vec![0usize], Vec::new(), Vec::new());
                for v in &kept {
                    self.attributes.row(v.index()).for_each(|j, x| {
                        indices.push(j as u32);
                        values.push(x);
                    });
                    offsets.push(indices.len());
                }
                Attributes::Sparse {
                    num_features: d,
                    offsets,
                    indices,
                    values,
                }
            }
        };
        let edges = self
            .edges
            .iter()
            .filter(|(u, v)| mask[u.index()] && mask[v.index()])
            .map(|&(u, v)| (NodeId(new_id[u.index()]), NodeId(new_id[v.index()])))
            .collect();
        let g = Self::new(
            kept.iter()
                .map(|v| self.node_names[v.index()].clone())
                .collect(),
            attributes,
            kept.iter().map(|v| self.labels[v.index()]).collect(),
            self.label_set.clone(),
            edges,
            self.directedness,
        )?;
        Ok((g, kept))
    }

    /// A copy of this graph with labels replaced (e.g. to hide test labels).
    ///
    /// # Errors
    /// [`GraphError::DimensionMismatch`] or [`GraphError::LabelOutOfRange`].
    pub fn with_labels(&self, labels: Vec<Option<u32>>) -> Result<Self, GraphError> {
        if labels.len() != self.num_nodes() {
            return Err(GraphError::DimensionMismatch {
                what: "labels",
                expected: self.num_nodes(),
                found: labels.len(),
            });
        }
        for (v, l) in labels.iter().enumerate() {
            if let Some(c) = *l
                && c as usize >= self.num_labels()
            {
                return Err(GraphError::LabelOutOfRange {
                    node: v,
                    label: c as usize,
                    num_labels: self.num_labels(),
                });
            }
        }
        Ok(Self {
            labels,
            ..self.clone()
        })
    }
}

/// Conversions to and from [`petgraph::Graph`] (cargo feature `petgraph`).
///
/// - `From<&RelationalGraph>` for `petgraph::graph::DiGraph<Option<u32>, EdgeId>` and
///   `petgraph::graph::UnGraph<Option<u32>, EdgeId>`: node `v` becomes
///   `NodeIndex::new(v.index())` weighted by its label, edge `e` becomes petgraph edge
///   `e.index()` weighted by `e` (attributes, node names and the label set are not carried).
/// - `TryFrom<&petgraph::Graph<N, E, Ty, Ix>>` for [`RelationalGraph`]: same node indices,
///   no attributes, no labels (an empty label set), directedness from `Ty`; self-loops and
///   parallel edges are dropped as [`RelationalGraph::new`] does.
///
/// ```
/// # #[cfg(feature = "petgraph")] {
/// use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};
/// let g = RelationalGraph::new(Vec::new(), Attributes::none(3), vec![Some(0), None, Some(1)],
///     LabelSet::numbered(2), vec![(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))],
///     Directedness::Undirected)?;
/// let pg = petgraph::graph::UnGraph::<Option<u32>, srl_graph::EdgeId>::from(&g);
/// assert_eq!((pg.node_count(), pg.edge_count()), (3, 2));
/// let back = RelationalGraph::try_from(&pg)?;
/// assert_eq!(back.edge_list(), g.edge_list());
/// # }
/// # Ok::<(), srl_graph::GraphError>(())
/// ```
#[cfg(feature = "petgraph")]
pub mod petgraph_conversions {
    use petgraph::EdgeType;
    use petgraph::graph::{Graph, IndexType, NodeIndex};

    use super::{Attributes, Directedness, EdgeId, LabelSet, NodeId, RelationalGraph};
    use crate::error::GraphError;

    fn to_petgraph<Ty: EdgeType>(g: &RelationalGraph) -> Graph<Option<u32>, EdgeId, Ty> {
        let mut pg = Graph::with_capacity(g.num_nodes(), g.num_edges());
        for &l in g.labels() {
            pg.add_node(l);
        }
        for (e, u, v) in g.edges() {
            pg.add_edge(NodeIndex::new(u.index()), NodeIndex::new(v.index()), e);
        }
        pg
    }

    impl From<&RelationalGraph> for Graph<Option<u32>, EdgeId, petgraph::Directed> {
        fn from(g: &RelationalGraph) -> Self {
            to_petgraph(g)
        }
    }

    impl From<&RelationalGraph> for Graph<Option<u32>, EdgeId, petgraph::Undirected> {
        fn from(g: &RelationalGraph) -> Self {
            to_petgraph(g)
        }
    }

    impl<N, E, Ty: EdgeType, Ix: IndexType> TryFrom<&Graph<N, E, Ty, Ix>> for RelationalGraph {
        type Error = GraphError;

        /// # Errors
        /// [`GraphError::TooLarge`] past `u32::MAX` nodes or edges.
        fn try_from(pg: &Graph<N, E, Ty, Ix>) -> Result<Self, GraphError> {
            let n = pg.node_count();
            let edges = pg
                .raw_edges()
                .iter()
                .map(|e| {
                    let (u, v) = (e.source().index(), e.target().index());
                    match (u32::try_from(u), u32::try_from(v)) {
                        (Ok(u), Ok(v)) => Ok((NodeId(u), NodeId(v))),
                        _ => Err(GraphError::TooLarge {
                            what: "nodes",
                            count: n,
                        }),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            RelationalGraph::new(
                Vec::new(),
                Attributes::none(n),
                vec![None; n],
                LabelSet::numbered(0),
                edges,
                if Ty::is_directed() {
                    Directedness::Directed
                } else {
                    Directedness::Undirected
                },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: u32) -> NodeId {
        NodeId(i)
    }

    fn path_graph() -> RelationalGraph {
        RelationalGraph::new(
            Vec::new(),
            Attributes::none(4),
            vec![Some(0), Some(0), Some(1), None],
            LabelSet::numbered(2),
            vec![
                (n(1), n(0)),
                (n(1), n(2)),
                (n(2), n(3)),
                (n(2), n(1)),
                (n(3), n(3)),
            ],
            Directedness::Undirected,
        )
        .unwrap()
    }

    #[test]
    fn canonicalises_edges_and_counts_what_it_drops() {
        let g = path_graph();
        assert_eq!(g.num_edges(), 3);
        assert_eq!(g.edge_list(), &[(n(0), n(1)), (n(1), n(2)), (n(2), n(3))]);
        assert_eq!(
            g.cleanup(),
            EdgeCleanup {
                self_loops: 1,
                duplicates: 1
            }
        );
        assert_eq!(g.neighbors(n(1)), &[n(0), n(2)]);
        assert_eq!(g.incident_edges(n(1)), &[EdgeId(0), EdgeId(1)]);
        assert_eq!(g.neighbors(n(2)), &[n(1), n(3)]);
        assert_eq!(g.degree(n(3)), 1);
    }

    #[test]
    fn statistics() {
        let g = path_graph();
        // edges 0-1 (same), 1-2 (differ); 2-3 has an unlabelled end.
        assert_eq!(g.homophily(), Some(0.5));
        assert_eq!(g.isolated_nodes(), 0);
        assert_eq!(g.connected_components().1, 1);
    }

    #[test]
    fn rejects_bad_input() {
        let e = RelationalGraph::new(
            Vec::new(),
            Attributes::none(2),
            vec![None, None],
            LabelSet::numbered(2),
            vec![(n(0), n(5))],
            Directedness::Undirected,
        );
        assert!(matches!(e, Err(GraphError::NodeOutOfRange { node: 5, .. })));
        let e = RelationalGraph::new(
            Vec::new(),
            Attributes::none(2),
            vec![Some(3), None],
            LabelSet::numbered(2),
            vec![],
            Directedness::Undirected,
        );
        assert!(matches!(
            e,
            Err(GraphError::LabelOutOfRange { label: 3, .. })
        ));
        let e = RelationalGraph::new(
            Vec::new(),
            Attributes::Dense {
                num_features: 2,
                values: vec![0.0, f64::NAN, 1.0, 1.0],
            },
            vec![None, None],
            LabelSet::numbered(2),
            vec![],
            Directedness::Undirected,
        );
        assert!(matches!(e, Err(GraphError::NonFinite { .. })));
    }

    #[test]
    fn sparse_rows() {
        let a = Attributes::Sparse {
            num_features: 4,
            offsets: vec![0, 2, 2],
            indices: vec![1, 3],
            values: vec![2.0, 5.0],
        };
        assert_eq!(a.num_rows(), 2);
        let r = a.row(0);
        assert_eq!(r.get(3), 5.0);
        assert_eq!(r.get(0), 0.0);
        assert_eq!(r.dot(&[1.0, 1.0, 1.0, 2.0]), 12.0);
        assert_eq!(r.to_dense(4), vec![0.0, 2.0, 0.0, 5.0]);
        assert_eq!(a.row(1).to_dense(4), vec![0.0; 4]);
    }

    #[test]
    fn find_edge_union_and_induced_subgraph() {
        let g = path_graph();
        assert_eq!(g.find_edge(n(1), n(0)), Some((EdgeId(0), true)));
        assert_eq!(g.find_edge(n(0), n(1)), Some((EdgeId(0), false)));
        assert_eq!(g.find_edge(n(0), n(3)), None);
        let (u, off) = RelationalGraph::disjoint_union(&[&g, &g]).unwrap();
        assert_eq!(off, vec![0, 4, 8]);
        assert_eq!(u.num_edges(), 6);
        for (e, a, b) in g.edges() {
            assert_eq!(u.edge(EdgeId::new(e.index() + 3)), (n(a.0 + 4), n(b.0 + 4)));
        }
        assert_eq!(u.labels()[4..], g.labels()[..]);
        assert_eq!(u.connected_components().1, 2);
        let (s, kept) = g.induced_subgraph(&[false, true, true, true]).unwrap();
        assert_eq!(kept, vec![n(1), n(2), n(3)]);
        assert_eq!(s.edge_list(), &[(n(0), n(1)), (n(1), n(2))]);
        assert!(g.induced_subgraph(&[true]).is_err());
        let d = RelationalGraph::new(
            Vec::new(),
            Attributes::none(2),
            vec![None; 2],
            LabelSet::numbered(3),
            vec![],
            Directedness::Undirected,
        )
        .unwrap();
        assert!(RelationalGraph::disjoint_union(&[&g, &d]).is_err());
        assert!(RelationalGraph::disjoint_union(&[]).is_err());
        let dg = RelationalGraph::new(
            Vec::new(),
            Attributes::none(2),
            vec![None; 2],
            LabelSet::numbered(1),
            vec![(n(1), n(0))],
            Directedness::Directed,
        )
        .unwrap();
        assert_eq!(dg.find_edge(n(1), n(0)), Some((EdgeId(0), false)));
        assert_eq!(dg.find_edge(n(0), n(1)), Some((EdgeId(0), true)));
    }

    #[test]
    fn directed_keeps_orientation() {
        let g = RelationalGraph::new(
            Vec::new(),
            Attributes::none(3),
            vec![None; 3],
            LabelSet::numbered(1),
            vec![(n(2), n(0)), (n(0), n(2)), (n(2), n(0))],
            Directedness::Directed,
        )
        .unwrap();
        assert_eq!(g.edge_list(), &[(n(0), n(2)), (n(2), n(0))]);
        assert_eq!(g.cleanup().duplicates, 1);
        assert_eq!(g.neighbors(n(0)), &[n(2), n(2)]);
    }
}
