//! Seeded power-law benchmark models.

use rand::{Rng, RngExt};
use srl_infer::{InferError, MrfParts, PairTable, PairwiseMrf};

/// Barabási–Albert preferential attachment (Barabási & Albert 1999): node `v = 1..n`
/// attaches `m0` edges to earlier nodes drawn proportionally to degree (uniform draws from
/// the list of edge endpoints; the first draws go to node 0); self-loops and duplicates are
/// dropped. Returns sorted, deduplicated edges `(u, v)` with `u < v`; about `m0 · n`.
///
/// # Panics
/// If `n > u32::MAX`.
pub fn barabasi_albert<R: Rng + ?Sized>(n: usize, m0: usize, rng: &mut R) -> Vec<(u32, u32)> {
    assert!(u32::try_from(n).is_ok(), "at most u32::MAX nodes");
    let mut endpoints: Vec<u32> = Vec::with_capacity(2 * n * m0);
    let mut edges = Vec::with_capacity(n * m0);
    for v in 1..n as u32 {
        for _ in 0..m0.min(v as usize) {
            let u = if endpoints.is_empty() {
                0
            } else {
                endpoints[rng.random_range(0..endpoints.len())]
            };
            if u != v {
                edges.push((u.min(v), u.max(v)));
                endpoints.push(u);
                endpoints.push(v);
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// The benchmark model of `benches/benches/infer.rs`: a Barabási–Albert graph (`m0 = 2`)
/// with `k` states per node, unary log-potentials uniform in `[-1, 1)` and one shared
/// attractive Potts table (`coupling` on the diagonal, 0 elsewhere).
///
/// # Errors
/// [`InferError`] from [`PairwiseMrf::new`] (e.g. `k = 0`).
pub fn barabasi_albert_mrf<R: Rng + ?Sized>(
    n: usize,
    k: usize,
    coupling: f64,
    rng: &mut R,
) -> Result<PairwiseMrf, InferError> {
    let edges = barabasi_albert(n, 2, rng);
    let m = edges.len();
    PairwiseMrf::new(MrfParts {
        num_states: vec![k; n],
        unary: (0..n * k).map(|_| rng.random_range(-1.0..1.0)).collect(),
        edges,
        edge_tables: vec![0; m],
        tables: vec![PairTable::potts(k, coupling, 0.0)],
        evidence: Vec::new(),
    })
}
