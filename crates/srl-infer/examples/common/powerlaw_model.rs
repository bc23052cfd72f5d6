//! The seeded power-law model of the speed examples and of the residual-BP tests (included
//! by `#[path]`; the criterion benches build the same model in
//! `benches/benches/common/powerlaw.rs`).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_graph::barabasi_albert;
use srl_infer::{InferError, MrfParts, PairTable, PairwiseMrf};

/// A Barabási–Albert graph of `n` variables (2 edges per new node, generator seeded with
/// `seed`), `k` states each, unary log-potentials uniform in `[-1, 1]` (seeded with
/// `seed ^ 0xABCD`), one shared attractive Potts table of coupling 0.5. Also returns the
/// unary terms' generator after its `n · k` draws (the `powerlaw_lbp` example seeds its
/// Gibbs run with it).
///
/// # Errors
/// As [`PairwiseMrf::new`] (e.g. `k = 0`).
pub fn powerlaw_mrf(
    n: usize,
    k: usize,
    seed: u64,
) -> Result<(PairwiseMrf, ChaCha8Rng), InferError> {
    let edges = barabasi_albert(n, 2, &mut ChaCha8Rng::seed_from_u64(seed));
    let m = edges.len();
    let mut rng = unary_rng(seed);
    let mrf = PairwiseMrf::new(MrfParts {
        num_states: vec![k; n],
        unary: (0..n * k).map(|_| unary_draw(&mut rng)).collect(),
        edges,
        edge_tables: vec![0; m],
        tables: vec![PairTable::potts(k, 0.5, 0.0)],
        evidence: Vec::new(),
    })?;
    Ok((mrf, rng))
}

/// The generator [`powerlaw_mrf`] returns, without building the model (the `n · k`
/// unary draws replayed), so a run that reads the model from a file holds only that
/// file's model.
#[allow(dead_code)] // the residual-BP tests include this file without calling it
pub fn powerlaw_rng(n: usize, k: usize, seed: u64) -> ChaCha8Rng {
    let mut rng = unary_rng(seed);
    for _ in 0..n * k {
        unary_draw(&mut rng);
    }
    rng
}

/// The generator of the unary log-potentials of [`powerlaw_mrf`].
fn unary_rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ 0xABCD)
}

/// One unary log-potential of [`powerlaw_mrf`], uniform in `[-1, 1)`.
fn unary_draw(rng: &mut ChaCha8Rng) -> f64 {
    rng.random_range(-1.0..1.0)
}
