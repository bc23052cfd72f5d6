//! Train/test splits of a graph's nodes: k-fold random sampling, stratified folds, and
//! snowball sampling (Sen et al. 2008).
//!
//! A [`Split`] is a test mask over the nodes; training nodes are the rest. [`KFold`]
//! partitions the nodes into `k` folds (each node is tested exactly once); snowball splits
//! ([`snowball_splits`]) are `k` independent connected-ish test sets which may overlap, as
//! in the paper, so results over them are averaged per node (the "matched" average).
//!
//! ```
//! use rand::SeedableRng as _;
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
//! let folds = srl_graph::KFold::random(10, 3, &mut rng)?;
//! let sizes: Vec<usize> = folds.splits().map(|s| s.num_test()).collect();
//! assert_eq!(sizes.iter().sum::<usize>(), 10);
//! assert!(sizes.iter().all(|&s| s == 3 || s == 4));
//! # Ok::<(), srl_graph::GraphError>(())
//! ```

use rand::seq::SliceRandom as _;
use rand::{Rng, RngExt as _};
use serde::{Deserialize, Serialize};

use crate::error::GraphError;
use crate::graph::{NodeId, RelationalGraph};

/// One train/test split: `test[v]` says whether node `v` is a test node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    test: Vec<bool>,
}

impl Split {
    /// A split from a test mask.
    #[must_use]
    pub fn from_test_mask(test: Vec<bool>) -> Self {
        Self { test }
    }

    /// A random hold-out split of `n` nodes: `round(fraction · n)` test nodes chosen
    /// uniformly without replacement, the rest training nodes.
    ///
    /// The nodes `0..n` are shuffled with `rng` and the *last* `round(fraction · n)` of the
    /// shuffled order are the test nodes (so `srl classify --train-fraction f` and
    /// `Split::random(n, 1 − f, rng)` hold out the same nodes unless `f · n` ends in .5).
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] unless `0 <= fraction <= 1`.
    ///
    /// # Complexity
    /// `O(n)`.
    ///
    /// # Example
    /// ```
    /// use rand::SeedableRng as _;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
    /// let split = srl_graph::Split::random(10, 0.3, &mut rng)?;
    /// assert_eq!(split.num_test(), 3);
    /// # Ok::<(), srl_graph::GraphError>(())
    /// ```
    pub fn random<R: Rng + ?Sized>(
        n: usize,
        fraction: f64,
        rng: &mut R,
    ) -> Result<Self, GraphError> {
        if !(0.0..=1.0).contains(&fraction) {
            return Err(GraphError::InvalidParameter {
                name: "fraction",
                value: fraction.to_string(),
                reason: "the held-out fraction must be in [0, 1]".into(),
            });
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(rng);
        let n_test = ((n as f64) * fraction).round() as usize;
        let mut test = vec![false; n];
        for &v in &order[n - n_test.min(n)..] {
            test[v] = true;
        }
        Ok(Self { test })
    }

    /// The test mask (length `n`).
    #[must_use]
    pub fn test_mask(&self) -> &[bool] {
        &self.test
    }

    /// The training mask: the complement of the test mask.
    #[must_use]
    pub fn train_mask(&self) -> Vec<bool> {
        self.test.iter().map(|&t| !t).collect()
    }

    /// Test nodes, increasing.
    #[must_use]
    pub fn test_nodes(&self) -> Vec<NodeId> {
        self.select(true)
    }

    /// Training nodes, increasing.
    #[must_use]
    pub fn train_nodes(&self) -> Vec<NodeId> {
        self.select(false)
    }

    fn select(&self, want: bool) -> Vec<NodeId> {
        self.test
            .iter()
            .enumerate()
            .filter(|&(_, &t)| t == want)
            .map(|(v, _)| NodeId::new(v))
            .collect()
    }

    /// Number of test nodes.
    #[must_use]
    pub fn num_test(&self) -> usize {
        self.test.iter().filter(|&&t| t).count()
    }

    /// The graph's labels with the test nodes' labels hidden (`None`), ready for
    /// [`RelationalGraph::with_labels`].
    ///
    /// # Errors
    /// [`GraphError::DimensionMismatch`] if the split is not over `graph`'s nodes.
    pub fn observed_labels(&self, graph: &RelationalGraph) -> Result<Vec<Option<u32>>, GraphError> {
        if self.test.len() != graph.num_nodes() {
            return Err(GraphError::DimensionMismatch {
                what: "split mask",
                expected: graph.num_nodes(),
                found: self.test.len(),
            });
        }
        Ok(graph
            .labels()
            .iter()
            .zip(&self.test)
            .map(|(&l, &t)| if t { None } else { l })
            .collect())
    }
}

/// A graph with the labels of some nodes held out: the *observed* graph (a copy whose
/// held-out nodes are unlabelled, what a collective classifier is run on) together with
/// the held-out nodes and their true labels, to score the predictions.
///
/// This replaces the hand-written `graph.with_labels(split.observed_labels(&graph)?)`
/// plus a manual accuracy loop:
///
/// ```
/// use rand::SeedableRng as _;
/// use srl_graph::{HoldOut, SenGetoorParams};
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let graph = SenGetoorParams::default().generate(&mut rng)?.graph;
/// let held_out = HoldOut::random(&graph, 0.5, &mut rng)?;
/// assert_eq!(held_out.nodes().len(), graph.num_nodes() / 2);
/// assert!(held_out.nodes().iter().all(|&v| held_out.observed().label(v).is_none()));
/// // A "classifier" that predicts the true labels scores 1.
/// let truth: Vec<u32> = graph.labels().iter().map(|l| l.unwrap_or(0)).collect();
/// assert_eq!(held_out.accuracy(&truth)?, Some(1.0));
/// # Ok::<(), srl_graph::GraphError>(())
/// ```
#[derive(Clone, Debug)]
pub struct HoldOut {
    observed: RelationalGraph,
    split: Split,
    nodes: Vec<NodeId>,
    truth: Vec<Option<u32>>,
}

impl HoldOut {
    /// Holds out the test nodes of `split`: their labels are hidden in
    /// [`HoldOut::observed`] and kept in [`HoldOut::truth`].
    ///
    /// # Errors
    /// [`GraphError::DimensionMismatch`] if the split is not over `graph`'s nodes.
    ///
    /// # Complexity
    /// `O(n + m)` (one copy of the graph).
    pub fn new(graph: &RelationalGraph, split: Split) -> Result<Self, GraphError> {
        let observed = graph.with_labels(split.observed_labels(graph)?)?;
        let nodes = split.test_nodes();
        let truth = nodes.iter().map(|&v| graph.label(v)).collect();
        Ok(Self {
            observed,
            split,
            nodes,
            truth,
        })
    }

    /// Holds out a random `fraction` of `graph`'s nodes ([`Split::random`]).
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] unless `0 <= fraction <= 1`.
    pub fn random<R: Rng + ?Sized>(
        graph: &RelationalGraph,
        fraction: f64,
        rng: &mut R,
    ) -> Result<Self, GraphError> {
        Self::new(graph, Split::random(graph.num_nodes(), fraction, rng)?)
    }

    /// The graph with the held-out nodes' labels hidden (`None`); every other label as in
    /// the original graph.
    #[must_use]
    pub fn observed(&self) -> &RelationalGraph {
        &self.observed
    }

    /// The split (test = held out).
    #[must_use]
    pub fn split(&self) -> &Split {
        &self.split
    }

    /// The held-out nodes, increasing.
    #[must_use]
    pub fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    /// True label of each held-out node, parallel to [`HoldOut::nodes`] (`None` for a node
    /// that was unlabelled in the original graph).
    #[must_use]
    pub fn truth(&self) -> &[Option<u32>] {
        &self.truth
    }

    /// Accuracy of per-node predictions on the held-out nodes with a known true label.
    ///
    /// # Arguments
    /// - `predicted`: one label per node of the graph (length `n`; only the held-out
    ///   nodes' entries are read).
    ///
    /// # Returns
    /// The fraction of held-out labelled nodes `v` with `predicted[v]` equal to the true
    /// label, in `[0, 1]`; `None` when no held-out node has a known label.
    ///
    /// # Errors
    /// [`GraphError::DimensionMismatch`] if `predicted.len()` is not the number of nodes.
    pub fn accuracy(&self, predicted: &[u32]) -> Result<Option<f64>, GraphError> {
        if predicted.len() != self.observed.num_nodes() {
            return Err(GraphError::DimensionMismatch {
                what: "predicted labels",
                expected: self.observed.num_nodes(),
                found: predicted.len(),
            });
        }
        let (mut correct, mut scored) = (0usize, 0usize);
        for (&v, &t) in self.nodes.iter().zip(&self.truth) {
            if let Some(t) = t {
                scored += 1;
                correct += usize::from(predicted[v.index()] == t);
            }
        }
        Ok((scored > 0).then(|| correct as f64 / scored as f64))
    }
}

/// A partition of `n` items into `k` folds: `fold_of[v] ∈ 0..k`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KFold {
    k: usize,
    fold_of: Vec<u32>,
}

fn check_k(n: usize, k: usize) -> Result<(), GraphError> {
    if k == 0 || k > n.max(1) {
        return Err(GraphError::InvalidParameter {
            name: "k",
            value: k.to_string(),
            reason: format!("need 1 <= k <= n = {n}"),
        });
    }
    Ok(())
}

impl KFold {
    /// Random sampling (RS): shuffles `0..n` and deals the nodes round-robin into `k`
    /// folds, so fold sizes differ by at most one.
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] unless `1 <= k <= n` (or `n = 0, k = 1`).
    ///
    /// # Complexity
    /// `O(n)`.
    ///
    /// # References
    /// Sen et al. 2008 (random sampling, "RS").
    pub fn random<R: Rng + ?Sized>(n: usize, k: usize, rng: &mut R) -> Result<Self, GraphError> {
        check_k(n, k)?;
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        let mut fold_of = vec![0u32; n];
        for (i, &v) in order.iter().enumerate() {
            fold_of[v as usize] = (i % k) as u32;
        }
        Ok(Self { k, fold_of })
    }

    /// Stratified random folds: within each stratum (e.g. class label, or a snapshot's
    /// majority light level), items are shuffled and dealt round-robin, continuing the
    /// deal across strata, so every fold gets about the same share of every stratum.
    ///
    /// # Arguments
    /// - `strata`: one stratum id per item (any `usize` values).
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] unless `1 <= k <= n`.
    ///
    /// # Complexity
    /// `O(n log n)`.
    pub fn stratified<R: Rng + ?Sized>(
        strata: &[usize],
        k: usize,
        rng: &mut R,
    ) -> Result<Self, GraphError> {
        let n = strata.len();
        check_k(n, k)?;
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        // Stable sort keeps the shuffled order within a stratum.
        order.sort_by_key(|&v| strata[v as usize]);
        let mut fold_of = vec![0u32; n];
        for (i, &v) in order.iter().enumerate() {
            fold_of[v as usize] = (i % k) as u32;
        }
        Ok(Self { k, fold_of })
    }

    /// Number of folds `k`.
    #[must_use]
    pub fn k(&self) -> usize {
        self.k
    }

    /// Fold of each item.
    #[must_use]
    pub fn fold_of(&self) -> &[u32] {
        &self.fold_of
    }

    /// Split `i`: fold `i` is the test set.
    ///
    /// # Panics
    /// If `i >= k`.
    #[must_use]
    pub fn split(&self, i: usize) -> Split {
        assert!(i < self.k, "fold {i} out of range");
        Split {
            test: self.fold_of.iter().map(|&f| f as usize == i).collect(),
        }
    }

    /// The `k` splits in fold order.
    pub fn splits(&self) -> impl ExactSizeIterator<Item = Split> + '_ {
        (0..self.k).map(|i| self.split(i))
    }
}

/// Snowball sampling (SS, Sen et al. 2008): `k` test sets, each of `round(n / k)` nodes
/// grown from a random core node along edges, choosing the next node by the class
/// distribution.
///
/// Procedure, for each of the `k` splits independently (so test sets may overlap):
/// 1. pick a core node uniformly at random and put it in the sample;
/// 2. the *frontier* is the set of nodes adjacent to the sample and not in it, kept in one
///    bucket per class (plus one for unlabelled nodes);
/// 3. draw a class from the class distribution of the whole graph (shares of labelled
///    nodes; unlabelled nodes as their own class), restricted to classes whose bucket is
///    non-empty and renormalised, then add a node of that bucket chosen uniformly; add its
///    new neighbours to the frontier;
/// 4. repeat 3 until the sample has `round(n / k)` nodes; if the frontier empties first
///    (the component is used up), start again from a new uniformly chosen core node not in
///    the sample.
///
/// Choosing by class keeps the test set's class mix close to the graph's, as the slides
/// describe ("expand, choosing a node based on the class distribution"); growing along
/// edges makes the test set a connected snowball whenever the component allows. The
/// training set of a split is every other node.
///
/// # Errors
/// [`GraphError::InvalidParameter`] unless `1 <= k <= n`.
///
/// # Complexity
/// `O(k · (n + m))`.
///
/// # References
/// Sen, Namata, Bilgic, Getoor, Gallagher & Eliassi-Rad (2008), *Collective classification
/// in network data*, AI Magazine 29(3), Section "Sampling"; the collective-classification
/// slides ("Snowball sampling").
pub fn snowball_splits<R: Rng + ?Sized>(
    graph: &RelationalGraph,
    k: usize,
    rng: &mut R,
) -> Result<Vec<Split>, GraphError> {
    let n = graph.num_nodes();
    check_k(n, k)?;
    let size = ((n as f64) / (k as f64)).round().max(1.0) as usize;
    let c = graph.num_labels();
    let bucket_of = |v: usize| graph.label(NodeId::new(v)).map_or(c, |l| l as usize);
    let mut share = vec![0.0f64; c + 1];
    for v in 0..n {
        share[bucket_of(v)] += 1.0;
    }
    let mut out = Vec::with_capacity(k);
    // state: 0 = outside, 1 = frontier, 2 = sampled.
    let mut state = vec![0u8; n];
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); c + 1];
    for _ in 0..k {
        state.iter_mut().for_each(|s| *s = 0);
        buckets.iter_mut().for_each(Vec::clear);
        let mut taken = 0usize;
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.shuffle(rng);
        let mut next_core = 0usize;
        while taken < size {
            let total: f64 = (0..=c)
                .filter(|&b| !buckets[b].is_empty())
                .map(|b| share[b])
                .sum();
            let v = if total > 0.0 {
                // Draw a class with a non-empty frontier bucket, by the class shares.
                let mut r = rng.random::<f64>() * total;
                let mut chosen = c + 1;
                for b in 0..=c {
                    if buckets[b].is_empty() {
                        continue;
                    }
                    chosen = b;
                    if r < share[b] {
                        break;
                    }
                    r -= share[b];
                }
                let bucket = &mut buckets[chosen];
                let i = rng.random_range(0..bucket.len());
                bucket.swap_remove(i) as usize
            } else {
                // New core: the next node of a random order that is not sampled yet,
                // i.e. a uniformly chosen unsampled node (the frontier is empty).
                while state[order[next_core] as usize] != 0 {
                    next_core += 1;
                }
                order[next_core] as usize
            };
            state[v] = 2;
            taken += 1;
            for &w in graph.neighbors(NodeId::new(v)) {
                let w = w.index();
                if state[w] == 0 {
                    state[w] = 1;
                    let b = bucket_of(w);
                    buckets[b].push(w as u32);
                }
            }
        }
        out.push(Split {
            test: state.iter().map(|&s| s == 2).collect(),
        });
    }
    Ok(out)
}

/// Per-class quotas of a sample of `size` nodes: `size · share_b` rounded by the largest
/// remainder method (Hamilton), so the quotas sum to exactly `size` and each is
/// `floor` or `ceil` of `size · share_b`; remainder ties go to the lower class index.
fn quotas(counts: &[usize], size: usize) -> Vec<usize> {
    let n: usize = counts.iter().sum();
    if n == 0 {
        return vec![0; counts.len()];
    }
    let exact: Vec<f64> = counts
        .iter()
        .map(|&c| size as f64 * c as f64 / n as f64)
        .collect();
    let mut q: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
    let mut left = size.saturating_sub(q.iter().sum());
    let mut order: Vec<usize> = (0..counts.len()).collect();
    // Stable sort: larger fractional part first, lower index on ties.
    order.sort_by(|&a, &b| {
        let (fa, fb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        fb.total_cmp(&fa)
    });
    for &b in &order {
        if left == 0 {
            break;
        }
        if q[b] < counts[b] {
            q[b] += 1;
            left -= 1;
        }
    }
    q
}

/// Stratified snowball sampling (SS, Sen et al. 2008): `k` test sets of `round(n / k)`
/// nodes each, grown along edges from random cores, whose class mix matches the graph's.
///
/// Procedure, for each of the `k` splits independently (test sets may overlap):
/// 1. per-class quotas `q_b = round(size · share_b)`, `share_b` the fraction of the graph's
///    nodes in class `b` (unlabelled nodes form one more class), rounded by the largest
///    remainder so that `Σ_b q_b = size` exactly;
/// 2. the *frontier* is the set of nodes adjacent to the sample and not in it, kept in one
///    bucket per class;
/// 3. draw a class `b` with probability proportional to its *remaining* quota; if the
///    frontier has a node of class `b`, add one of them chosen uniformly; otherwise start a
///    new core: a uniformly chosen unsampled node of class `b` (the first node of a sample
///    is such a core, since the frontier starts empty); add the node's neighbours to the
///    frontier and decrease `q_b`;
/// 4. repeat 3 until every quota is used up.
///
/// Every sample therefore has exactly the graph's class distribution (up to rounding),
/// which is what the slides' "expand, choosing a node based on the class distribution"
/// asks for, and is as connected as the quotas allow: a new core is only started when the
/// snowball has no frontier node of the class whose turn it is. The earlier
/// [`snowball_splits`] draws classes only among the non-empty frontier buckets, so its
/// samples drift towards the classes that happen to surround the core (on Cora and
/// Citeseer a total-variation distance of 0.06-0.09 from the graph's class mix).
///
/// Sen et al. (2008, "Sampling") describe snowball sampling for collective classification
/// as: pick a random core node, grow the sample along links choosing the next node by the
/// class distribution, take the sample of `|V| / k` nodes as the test set and the rest as
/// the training set, repeat `k` times; their paper does not give the rule for a class
/// that has no node on the frontier, and this function's rule (a new core of that class)
/// is our choice.
///
/// # Errors
/// [`GraphError::InvalidParameter`] unless `1 <= k <= n`.
///
/// # Complexity
/// `O(k · (n + m + size · (c + 1)))`, `c` the number of classes.
///
/// # References
/// Sen, Namata, Bilgic, Getoor, Gallagher & Eliassi-Rad (2008), *Collective classification
/// in network data*, AI Magazine 29(3), Section "Sampling"; the collective-classification
/// slides ("Sampling for fold validation").
pub fn stratified_snowball_splits<R: Rng + ?Sized>(
    graph: &RelationalGraph,
    k: usize,
    rng: &mut R,
) -> Result<Vec<Split>, GraphError> {
    let n = graph.num_nodes();
    check_k(n, k)?;
    let size = ((n as f64) / (k as f64)).round().max(1.0) as usize;
    let c = graph.num_labels();
    let bucket_of = |v: usize| graph.label(NodeId::new(v)).map_or(c, |l| l as usize);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); c + 1];
    for v in 0..n {
        members[bucket_of(v)].push(v as u32);
    }
    let counts: Vec<usize> = members.iter().map(Vec::len).collect();
    let quota = quotas(&counts, size);
    let mut out = Vec::with_capacity(k);
    // state: 0 = outside, 1 = frontier, 2 = sampled.
    let mut state = vec![0u8; n];
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); c + 1];
    for _ in 0..k {
        state.iter_mut().for_each(|s| *s = 0);
        buckets.iter_mut().for_each(Vec::clear);
        // Per class, a random order of its nodes: the next unsampled one is a new core.
        let mut pools = members.clone();
        pools.iter_mut().for_each(|p| p.shuffle(rng));
        let mut next_core = vec![0usize; c + 1];
        let mut remaining = quota.clone();
        let mut left: usize = remaining.iter().sum();
        while left > 0 {
            let mut r = rng.random_range(0..left);
            let mut b = 0;
            while r >= remaining[b] {
                r -= remaining[b];
                b += 1;
            }
            let v = if buckets[b].is_empty() {
                let pool = &pools[b];
                while state[pool[next_core[b]] as usize] == 2 {
                    next_core[b] += 1;
                }
                pool[next_core[b]] as usize
            } else {
                let bucket = &mut buckets[b];
                let i = rng.random_range(0..bucket.len());
                bucket.swap_remove(i) as usize
            };
            state[v] = 2;
            remaining[b] -= 1;
            left -= 1;
            for &w in graph.neighbors(NodeId::new(v)) {
                let w = w.index();
                if state[w] == 0 {
                    state[w] = 1;
                    buckets[bucket_of(w)].push(w as u32);
                }
            }
        }
        out.push(Split {
            test: state.iter().map(|&s| s == 2).collect(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Attributes, Directedness, LabelSet};
    use rand::SeedableRng as _;
    use rand_chacha::ChaCha8Rng;

    fn two_paths() -> RelationalGraph {
        // 0-1-2-3-4 and 5-6-7-8-9, labels alternate.
        let edges = (0..4)
            .chain(5..9)
            .map(|i| (NodeId(i), NodeId(i + 1)))
            .collect();
        RelationalGraph::new(
            Vec::new(),
            Attributes::none(10),
            (0..10).map(|i| Some(i % 2)).collect(),
            LabelSet::numbered(2),
            edges,
            Directedness::Undirected,
        )
        .expect("valid")
    }

    #[test]
    fn snowball_is_connected_when_it_can_be() {
        let g = two_paths();
        let splits = snowball_splits(&g, 2, &mut ChaCha8Rng::seed_from_u64(9)).expect("ok");
        assert_eq!(splits.len(), 2);
        for s in &splits {
            // size 5 = one whole path, which is a connected component.
            assert_eq!(s.num_test(), 5);
            let t = s.test_nodes();
            assert!(
                t.iter().all(|v| v.0 < 5) || t.iter().all(|v| v.0 >= 5),
                "{t:?}"
            );
        }
        let big = snowball_splits(&g, 1, &mut ChaCha8Rng::seed_from_u64(9)).expect("ok");
        assert_eq!(big[0].num_test(), 10);
    }

    #[test]
    fn quotas_sum_to_the_sample_size() {
        assert_eq!(quotas(&[5, 5], 5), vec![3, 2]);
        assert_eq!(
            quotas(&[818, 426, 418, 351, 298, 217, 180], 271)
                .iter()
                .sum::<usize>(),
            271
        );
        assert_eq!(quotas(&[1, 0, 9], 5), vec![1, 0, 4]);
        assert_eq!(quotas(&[0, 0], 3), vec![0, 0]);
    }

    /// A ring of 60 nodes whose labels come in runs of 3 (classes 0..4, class 3 twice as
    /// often), with chords: a snowball sees few classes near its core.
    fn ring() -> RelationalGraph {
        let n = 60u32;
        let labels = (0..n)
            .map(|i| Some([0, 1, 2, 3, 3][(i / 3 % 5) as usize]))
            .collect();
        let mut edges: Vec<(NodeId, NodeId)> =
            (0..n).map(|i| (NodeId(i), NodeId((i + 1) % n))).collect();
        edges.extend((0..n).step_by(7).map(|i| (NodeId(i), NodeId((i + 11) % n))));
        RelationalGraph::new(
            Vec::new(),
            Attributes::none(n as usize),
            labels,
            LabelSet::numbered(4),
            edges,
            Directedness::Undirected,
        )
        .expect("valid")
    }

    #[test]
    fn stratified_snowball_matches_the_class_mix() {
        let g = ring();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let splits = stratified_snowball_splits(&g, 4, &mut rng).expect("ok");
        assert_eq!(splits.len(), 4);
        for s in &splits {
            assert_eq!(s.num_test(), 15);
            let mut mix = [0usize; 4];
            for v in s.test_nodes() {
                mix[g.label(v).expect("labelled") as usize] += 1;
            }
            // shares 12, 12, 12, 24 of 60 -> quotas 3, 3, 3, 6 of 15
            assert_eq!(mix, [3, 3, 3, 6]);
        }
        // Deterministic for a seed; different samples from the same stream.
        let again =
            stratified_snowball_splits(&g, 4, &mut ChaCha8Rng::seed_from_u64(3)).expect("ok");
        assert_eq!(splits, again);
        assert_ne!(splits[0], splits[1]);
        // One sample of everything is the whole graph.
        let all = stratified_snowball_splits(&g, 1, &mut rng).expect("ok");
        assert_eq!(all[0].num_test(), 60);
        assert!(stratified_snowball_splits(&g, 0, &mut rng).is_err());
    }

    #[test]
    fn stratified_snowball_grows_along_edges() {
        // Two 6-cliques, each with two nodes of each of 3 classes. A sample of 6 has quota
        // 2 per class; after the core, its clique's frontier always holds a node of every
        // class with quota left, so no second core is started: the sample is one clique.
        let mut edges = Vec::new();
        for base in [0u32, 6] {
            for a in 0..6 {
                for b in a + 1..6 {
                    edges.push((NodeId(base + a), NodeId(base + b)));
                }
            }
        }
        let g = RelationalGraph::new(
            Vec::new(),
            Attributes::none(12),
            (0..12).map(|i| Some(i % 3)).collect(),
            LabelSet::numbered(3),
            edges,
            Directedness::Undirected,
        )
        .expect("valid");
        let mut sides = [0usize; 2];
        for seed in 0..20 {
            let s = stratified_snowball_splits(&g, 2, &mut ChaCha8Rng::seed_from_u64(seed))
                .expect("ok");
            for split in &s {
                let t = split.test_nodes();
                assert_eq!(t.len(), 6);
                let first = t.iter().filter(|v| v.0 < 6).count();
                assert!(first == 0 || first == 6, "seed {seed}: {t:?}");
                sides[usize::from(first == 0)] += 1;
            }
        }
        // the core is drawn at random: both cliques are chosen sometimes
        assert!(sides[0] > 0 && sides[1] > 0, "{sides:?}");
    }

    #[test]
    fn masks_and_hidden_labels() {
        let g = two_paths();
        let f = KFold::random(10, 5, &mut ChaCha8Rng::seed_from_u64(1)).expect("ok");
        let s = f.split(2);
        assert_eq!(s.num_test(), 2);
        let obs = s.observed_labels(&g).expect("ok");
        for (o, &t) in obs.iter().zip(s.test_mask()) {
            assert_eq!(o.is_none(), t);
        }
        assert_eq!(s.train_nodes().len(), 8);
        assert!(KFold::random(3, 4, &mut ChaCha8Rng::seed_from_u64(1)).is_err());
        assert!(KFold::random(3, 0, &mut ChaCha8Rng::seed_from_u64(1)).is_err());
    }

    #[test]
    fn random_hold_out() {
        let g = two_paths();
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let h = HoldOut::random(&g, 0.3, &mut rng).expect("ok");
        assert_eq!(h.nodes().len(), 3);
        assert_eq!(h.split().num_test(), 3);
        for (&v, &t) in h.nodes().iter().zip(h.truth()) {
            assert_eq!(h.observed().label(v), None);
            assert_eq!(t, g.label(v));
        }
        assert_eq!(h.observed().labels().iter().flatten().count(), 7);
        let mut pred: Vec<u32> = g.labels().iter().map(|l| l.unwrap_or(0)).collect();
        assert_eq!(h.accuracy(&pred).expect("n"), Some(1.0));
        let v = h.nodes()[0].index();
        pred[v] = 1 - pred[v];
        let acc = h.accuracy(&pred).expect("n").expect("some");
        assert!((acc - 2.0 / 3.0).abs() < 1e-12);
        assert!(h.accuracy(&pred[..3]).is_err());
        for bad in [-0.1, 1.5, f64::NAN] {
            assert!(Split::random(10, bad, &mut rng).is_err(), "{bad}");
        }
        assert_eq!(Split::random(10, 0.0, &mut rng).expect("ok").num_test(), 0);
        assert_eq!(Split::random(10, 1.0, &mut rng).expect("ok").num_test(), 10);
    }

    #[test]
    fn stratified_balances_strata() {
        let strata: Vec<usize> = (0..30).map(|i| usize::from(i < 9)).collect();
        let f = KFold::stratified(&strata, 3, &mut ChaCha8Rng::seed_from_u64(4)).expect("ok");
        for s in f.splits() {
            let ones = s
                .test_nodes()
                .iter()
                .filter(|v| strata[v.index()] == 1)
                .count();
            assert_eq!(ones, 3);
            assert_eq!(s.num_test(), 10);
        }
    }
}
