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
    let bucket_of = |v: usize| graph.label(NodeId::new(v)).unwrap_or(c);
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
