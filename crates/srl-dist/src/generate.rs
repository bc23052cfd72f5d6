//! Seeded power-law benchmark models.

use rand::{Rng, RngExt};
pub use srl_graph::generate::barabasi_albert;
use srl_infer::{InferError, MrfParts, PairTable, PairwiseMrf};

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
