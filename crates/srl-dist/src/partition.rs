//! Edge-cut partitioning of the variables over timely workers.

use serde::{Deserialize, Serialize};

/// Decides which worker owns each variable (an *edge cut*: a worker owns its variables,
/// their incident edges and every message its variables send; an edge whose endpoints have
/// different owners is cut and its two messages cross the network once per iteration).
///
/// This is the hook for a better partitioner (METIS, label propagation, streaming
/// partitioners such as Fennel): implement it and pass it to
/// [`crate::DistBp::run_worker_with`]. It must be deterministic and give every worker the
/// same answer; `owner` must return a value `< parts`.
pub trait Partitioner: Send + Sync {
    /// The worker (`0..parts`) owning variable `node` of a model with `num_nodes` variables.
    fn owner(&self, node: usize, num_nodes: usize, parts: usize) -> usize;
}

/// The built-in partitions.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Partition {
    /// Contiguous node-id ranges of (almost) equal size: worker `w` owns
    /// `⌈w n / W⌉ .. ⌈(w + 1) n / W⌉`. Keeps the locality of the input's numbering (BFS or
    /// generator order cuts few edges).
    #[default]
    Range,
    /// A multiplicative hash of the node id (SplitMix64 finaliser) modulo the worker count:
    /// balanced whatever the numbering, but cuts about `(W − 1) / W` of the edges.
    Hash,
}

impl Partitioner for Partition {
    #[inline]
    fn owner(&self, node: usize, num_nodes: usize, parts: usize) -> usize {
        if parts <= 1 {
            return 0;
        }
        match self {
            // The largest w with ⌈w n / W⌉ <= node.
            Self::Range => ((node as u128 * parts as u128) / num_nodes.max(1) as u128) as usize,
            Self::Hash => (splitmix64(node as u64) % parts as u64) as usize,
        }
    }
}

/// The SplitMix64 finaliser (Steele, Lea & Flood 2014): a bijection on `u64` that mixes
/// every input bit into every output bit.
#[inline]
#[must_use]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_is_contiguous_and_balanced() {
        for n in [1usize, 7, 10, 1000] {
            for parts in [1usize, 2, 3, 4] {
                let owners: Vec<usize> = (0..n)
                    .map(|v| Partition::Range.owner(v, n, parts))
                    .collect();
                assert!(owners.windows(2).all(|w| w[0] <= w[1]));
                assert!(owners.iter().all(|&w| w < parts));
                let mut counts = vec![0usize; parts];
                owners.iter().for_each(|&w| counts[w] += 1);
                let (mn, mx) = (counts.iter().min(), counts.iter().max());
                if n >= parts {
                    assert!(mx.zip(mn).is_some_and(|(a, b)| a - b <= 1), "{counts:?}");
                }
            }
        }
    }

    #[test]
    fn hash_covers_all_workers() {
        let mut counts = [0usize; 4];
        for v in 0..4000 {
            counts[Partition::Hash.owner(v, 4000, 4)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1200).contains(&c)),
            "{counts:?}"
        );
    }
}
