//! Seeded test models shared by the unit tests of several algorithms.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::mrf::{MrfParts, PairTable, PairwiseMrf};

/// A binary model on a ring of `n` variables plus `n / 2` random chords (parallel edges
/// possible): one shared Potts table of `coupling` or a random table per edge with
/// log-potentials in `(-scale, scale)` (400 makes one state's weight underflow to 0),
/// optional evidence on every 7th variable.
pub(crate) fn binary_ring_model(
    n: usize,
    shared: bool,
    evidence: bool,
    (coupling, scale): (f64, f64),
    seed: u64,
) -> PairwiseMrf {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut edges: Vec<(u32, u32)> = (0..n as u32).map(|v| (v, (v + 1) % n as u32)).collect();
    for _ in 0..n / 2 {
        let (a, b) = (rng.random_range(0..n as u32), rng.random_range(0..n as u32));
        if a != b {
            edges.push((a, b));
        }
    }
    let m = edges.len();
    let tables: Vec<PairTable> = if shared {
        vec![PairTable::potts(2, coupling, -0.1)]
    } else {
        (0..m)
            .map(|_| PairTable::from_fn(2, 2, |_, _| rng.random_range(-scale..scale)))
            .collect()
    };
    PairwiseMrf::new(MrfParts {
        num_states: vec![2; n],
        unary: (0..2 * n).map(|_| rng.random_range(-1.0..1.0)).collect(),
        edge_tables: if shared {
            vec![0; m]
        } else {
            (0..m as u32).collect()
        },
        edges,
        tables,
        evidence: if evidence {
            (0..n)
                .map(|v| (v % 7 == 3).then_some((v % 2) as u32))
                .collect()
        } else {
            Vec::new()
        },
    })
    .unwrap()
}
