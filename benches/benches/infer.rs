//! Criterion benches for srl-infer: loopy BP, mean field and Gibbs sampling on seeded
//! power-law (Barabási–Albert) graphs of 10^4, 10^5 and 10^6 nodes with k = 2 and k = 7
//! states, single-threaded (a rayon pool of 1 thread) and with the default rayon pool.
//!
//! Throughput: loopy BP reports directed-message updates (`iterations · 2m` elements);
//! mean field and Gibbs report sweeps. LBP iterations per second = elements per second
//! divided by `2m` (printed to stderr with the graph sizes).
//!
//! Run: `cargo bench -p srl-benches --bench infer -- --warm-up-time 1 --measurement-time 3`

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_infer::{
    Beliefs, Gibbs, LoopyBp, MeanField, MrfParts, PairTable, PairwiseMrf, Schedule, Sweep,
};

/// Barabási–Albert preferential attachment: node `v` attaches `m0` edges to earlier nodes
/// chosen proportionally to degree (endpoint-list sampling); duplicates removed.
fn barabasi_albert(n: usize, m0: usize, seed: u64) -> Vec<(u32, u32)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
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

/// A model on a BA graph: random unary log-potentials in `[-1, 1]`, one shared attractive
/// Potts table (coupling 0.5).
fn powerlaw_mrf(n: usize, k: usize, seed: u64) -> PairwiseMrf {
    let edges = barabasi_albert(n, 2, seed);
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

fn pools() -> Vec<(String, rayon::ThreadPool)> {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    let all = rayon::ThreadPoolBuilder::new()
        .build()
        .expect("thread pool");
    let t = all.current_num_threads();
    vec![("threads=1".into(), one), (format!("threads={t}"), all)]
}

fn iterations_for(n: usize) -> usize {
    match n {
        0..=10_000 => 20,
        10_001..=100_000 => 5,
        _ => 2,
    }
}

fn bench_inference(c: &mut Criterion) {
    let pools = pools();
    for &n in &[10_000usize, 100_000, 1_000_000] {
        for &k in &[2usize, 7] {
            let mrf = powerlaw_mrf(n, k, 42);
            let m2 = mrf.num_directed_edges();
            let iters = iterations_for(n);
            #[allow(clippy::print_stderr)]
            {
                eprintln!(
                    "powerlaw n={n} k={k}: m={} directed messages={m2}",
                    mrf.num_edges()
                );
            }

            let mut group = c.benchmark_group("loopy_bp");
            group
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(3));
            group.throughput(Throughput::Elements((iters * m2) as u64));
            let bp = LoopyBp {
                max_iters: iters,
                tol: 0.0,
                beliefs: Beliefs::NodesOnly,
                schedule: Schedule::Flooding,
                ..LoopyBp::default()
            };
            for (name, pool) in &pools {
                group.bench_with_input(
                    BenchmarkId::new(format!("powerlaw/flooding/{name}"), format!("n={n}/k={k}")),
                    &mrf,
                    |b, mrf| b.iter(|| pool.install(|| bp.run(mrf))),
                );
            }
            let seq = LoopyBp {
                schedule: Schedule::Sequential,
                ..bp
            };
            group.bench_with_input(
                BenchmarkId::new("powerlaw/sequential/threads=1", format!("n={n}/k={k}")),
                &mrf,
                |b, mrf| b.iter(|| seq.run(mrf)),
            );
            group.finish();

            let mut group = c.benchmark_group("mean_field");
            group
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(3));
            group.throughput(Throughput::Elements(iters as u64));
            let mf = MeanField {
                max_iters: iters,
                tol: 0.0,
                sweep: Sweep::Parallel,
                beliefs: Beliefs::NodesOnly,
                ..MeanField::default()
            };
            for (name, pool) in &pools {
                group.bench_with_input(
                    BenchmarkId::new(format!("powerlaw/parallel/{name}"), format!("n={n}/k={k}")),
                    &mrf,
                    |b, mrf| b.iter(|| pool.install(|| mf.run(mrf))),
                );
            }
            group.finish();

            let mut group = c.benchmark_group("gibbs");
            group
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(3));
            group.throughput(Throughput::Elements(iters as u64));
            let gibbs = Gibbs {
                burn_in: iters - 1,
                samples: 1,
                thinning: 1,
                beliefs: Beliefs::NodesOnly,
                ..Gibbs::default()
            };
            for (name, pool) in &pools {
                group.bench_with_input(
                    BenchmarkId::new(format!("powerlaw/chromatic/{name}"), format!("n={n}/k={k}")),
                    &mrf,
                    |b, mrf| {
                        let mut rng = ChaCha8Rng::seed_from_u64(7);
                        b.iter(|| pool.install(|| gibbs.run(mrf, &mut rng).expect("valid config")))
                    },
                );
            }
            group.finish();
        }
    }
}

criterion_group!(benches, bench_inference);
criterion_main!(benches);
