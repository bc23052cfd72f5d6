//! The power-law models the `infer` and `mf_gibbs` benches share: a seeded Barabási–Albert
//! (m = 2) graph from srl-dist's generator with one shared Potts table, built in memory and
//! through a UAI file. Included by `#[path]` (a bench target cannot import another).

use std::path::PathBuf;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_infer::{MrfParts, PairTable, PairwiseMrf};

/// A model on a BA graph: random unary log-potentials in `[-1, 1]`, one shared attractive
/// Potts table (coupling 0.5).
pub fn powerlaw_mrf(n: usize, k: usize, seed: u64) -> PairwiseMrf {
    // The same generator srl-dist benchmarks on, so the graphs are the same.
    let edges = srl_dist::barabasi_albert(n, 2, &mut ChaCha8Rng::seed_from_u64(seed));
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xABCD);
    let m = edges.len();
    PairwiseMrf::new(MrfParts {
        num_states: vec![k; n],
        unary: (0..n * k).map(|_| rng.random_range(-1.0..1.0)).collect(),
        edges,
        edge_tables: vec![0; m],
        tables: vec![PairTable::potts(k, 0.5, 0.0)],
        evidence: Vec::new(),
    })
    .expect("valid model")
}

/// A temporary directory for the UAI files, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("srl-bench-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The model built in memory and the same model through a UAI file.
pub fn sources(n: usize, k: usize, dir: &TempDir) -> Vec<(&'static str, PairwiseMrf)> {
    let built = powerlaw_mrf(n, k, 42);
    let path = dir.0.join(format!("ba_n{n}_k{k}.uai"));
    built.write_uai(&path).expect("write UAI");
    let read = PairwiseMrf::read_uai(&path).expect("read UAI");
    let _ = std::fs::remove_file(&path);
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "powerlaw n={n} k={k}: m={} directed messages={}, tables built={} read={}",
            built.num_edges(),
            built.num_directed_edges(),
            built.tables().len(),
            read.tables().len()
        );
    }
    vec![("built", built), ("uai", read)]
}
