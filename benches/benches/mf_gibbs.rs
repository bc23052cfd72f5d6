//! Criterion benches for issue 14's remaining targets, on seeded Barabási–Albert (m = 2)
//! models with two states, random unary log-potentials in `[-1, 1]` and one shared Potts
//! table (coupling 0.5), each **built** in the bench and **written to a UAI file** in a
//! temporary directory and read back with [`PairwiseMrf::read_uai`]:
//!
//! - `mf_gibbs/{built,uai}/{mf-parallel,mf-sequential,gibbs}/threads=T/n=1000000/sweeps=S`:
//!   mean field (Jacobi sweep in parallel, or Gauss–Seidel on one thread) and chromatic
//!   Gibbs at 10^6 variables; elements are variable updates (`sweeps · n`), so `elem/s` is
//!   updates per second, including each run's setup and final marginals (node beliefs
//!   only). `S = 10` amortises the setup; `S = 2` is the older `infer` bench's setting.
//! - `lbp_residual/{built,uai}/{Sequential,Residual}/n=100000`: sequential vs residual
//!   loopy BP at 10^5 variables, single-threaded, `tol = 0` so both do `5 · 2m` message
//!   computations (residual BP's work cap); elements are messages computed. Whether
//!   residual BP converges at this size: `examples/mf_gibbs_speed.rs` with `lbp-res`.
//!
//! Run: `cargo bench -p srl-benches --bench mf_gibbs` (about 5 minutes; filter with e.g.
//! `-- mf_gibbs/uai` or `-- lbp_residual`).

use std::time::Duration;

#[path = "common/powerlaw.rs"]
mod powerlaw;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use powerlaw::{TempDir, sources};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_infer::{Beliefs, Gibbs, LoopyBp, MeanField, Schedule, Sweep};

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
}

fn bench_mf_gibbs(c: &mut Criterion) {
    let pools = [(1usize, pool(1)), (2, pool(2))];
    let dir = TempDir::new("mfg");
    let n = 1_000_000;
    let models = sources(n, 2, &dir);
    let mut group = c.benchmark_group("mf_gibbs");
    configure(&mut group);
    for sweeps in [10usize, 2] {
        group.throughput(Throughput::Elements((sweeps * n) as u64));
        let size = format!("n={n}/sweeps={sweeps}");
        let mf = MeanField {
            max_iters: sweeps,
            tol: 0.0,
            beliefs: Beliefs::NodesOnly,
            ..MeanField::default()
        };
        let gibbs = Gibbs {
            burn_in: sweeps - 1,
            samples: 1,
            thinning: 1,
            beliefs: Beliefs::NodesOnly,
            ..Gibbs::default()
        };
        for (source, mrf) in &models {
            for (threads, pool) in &pools {
                let par = MeanField {
                    sweep: Sweep::Parallel,
                    ..mf
                };
                group.bench_with_input(
                    BenchmarkId::new(format!("{source}/mf-parallel/threads={threads}"), &size),
                    mrf,
                    |b, mrf| b.iter(|| pool.install(|| par.run(mrf))),
                );
                group.bench_with_input(
                    BenchmarkId::new(format!("{source}/gibbs/threads={threads}"), &size),
                    mrf,
                    |b, mrf| {
                        let mut rng = ChaCha8Rng::seed_from_u64(7);
                        b.iter(|| pool.install(|| gibbs.run(mrf, &mut rng).expect("valid config")))
                    },
                );
            }
            let seq = MeanField {
                sweep: Sweep::Sequential,
                ..mf
            };
            group.bench_with_input(
                BenchmarkId::new(format!("{source}/mf-sequential/threads=1"), &size),
                mrf,
                |b, mrf| b.iter(|| seq.run(mrf)),
            );
        }
    }
    group.finish();
}

fn bench_residual(c: &mut Criterion) {
    let dir = TempDir::new("mfg");
    let n = 100_000;
    let iters = 5;
    let models = sources(n, 2, &dir);
    let mut group = c.benchmark_group("lbp_residual");
    configure(&mut group);
    let size = format!("n={n}");
    for (source, mrf) in &models {
        group.throughput(Throughput::Elements(
            (iters * mrf.num_directed_edges()) as u64,
        ));
        for schedule in [Schedule::Sequential, Schedule::Residual] {
            let bp = LoopyBp {
                max_iters: iters,
                tol: 0.0,
                beliefs: Beliefs::NodesOnly,
                schedule,
                ..LoopyBp::default()
            };
            group.bench_with_input(
                BenchmarkId::new(format!("{source}/{schedule:?}"), &size),
                mrf,
                |b, mrf| b.iter(|| bp.run(mrf)),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench_mf_gibbs, bench_residual);
criterion_main!(benches);
