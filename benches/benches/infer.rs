//! Criterion benches for srl-infer on seeded power-law (Barabási–Albert, m = 2) models:
//! k = 2 at 10^5 and 10^6 nodes and k = 7 at 10^5 nodes, each twice: the model **built**
//! in the bench (one shared Potts table) and the same model **written to a UAI file** in a
//! temporary directory and read back with [`PairwiseMrf::read_uai`] (the path of a real
//! UAI input; the reader pools identical tables).
//!
//! Groups (throughput in criterion's `elements`):
//! - `loopy_bp`: flooding LBP on a 1-thread and a 2-thread rayon pool; elements are
//!   directed-message updates (`iterations · 2m`), so `elem/s` is messages per second.
//! - `loopy_bp_precision`: the 10^6-node, k = 2 model read from UAI, 20 flooding
//!   iterations (so the per-run setup, about 0.1 s, weighs less than in `loopy_bp`'s 2),
//!   `f64` and `f32` message storage ([`MessagePrecision`]), 1 and 2 threads: the
//!   two-state targets of the inference-speed issue.
//! - `lbp_schedules`: sequential vs residual LBP at 10^5 nodes (single-threaded; residual
//!   with `tol = 0` runs to its work cap of `max_iters · 2m` messages computed, so both
//!   report messages computed per second).
//! - `mean_field` (parallel sweep) and `gibbs` (chromatic): elements are variable updates
//!   (`sweeps · n`).
//!
//! Run: `cargo bench -p srl-benches --bench infer` (a few minutes; add a filter such as
//! `-- loopy_bp/uai` to run part of it).

use std::time::Duration;

#[path = "common/powerlaw.rs"]
mod powerlaw;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use powerlaw::{TempDir, sources};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_infer::{Beliefs, Gibbs, LoopyBp, MeanField, MessagePrecision, Schedule, Sweep};

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

fn iterations_for(n: usize) -> usize {
    if n <= 100_000 { 5 } else { 2 }
}

fn configure(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
}

fn bench_inference(c: &mut Criterion) {
    let pools = [(1usize, pool(1)), (2, pool(2))];
    let dir = TempDir::new("infer");
    for &(n, k) in &[(100_000usize, 2usize), (1_000_000, 2), (100_000, 7)] {
        let models = sources(n, k, &dir);
        let iters = iterations_for(n);
        let size = format!("n={n}/k={k}");

        let mut group = c.benchmark_group("loopy_bp");
        configure(&mut group);
        let bp = LoopyBp {
            max_iters: iters,
            tol: 0.0,
            beliefs: Beliefs::NodesOnly,
            schedule: Schedule::Flooding,
            ..LoopyBp::default()
        };
        for (source, mrf) in &models {
            group.throughput(Throughput::Elements(
                (iters * mrf.num_directed_edges()) as u64,
            ));
            for (threads, pool) in &pools {
                group.bench_with_input(
                    BenchmarkId::new(format!("{source}/flooding/threads={threads}"), &size),
                    mrf,
                    |b, mrf| b.iter(|| pool.install(|| bp.run(mrf))),
                );
            }
        }
        group.finish();

        if n == 1_000_000 && k == 2 {
            let mut group = c.benchmark_group("loopy_bp_precision");
            configure(&mut group);
            group.measurement_time(Duration::from_secs(10));
            let iters = 20;
            for (source, mrf) in models.iter().filter(|(s, _)| *s == "uai") {
                group.throughput(Throughput::Elements(
                    (iters * mrf.num_directed_edges()) as u64,
                ));
                for precision in [MessagePrecision::F64, MessagePrecision::F32] {
                    let bp = LoopyBp {
                        max_iters: iters,
                        tol: 0.0,
                        beliefs: Beliefs::NodesOnly,
                        schedule: Schedule::Flooding,
                        precision,
                        ..LoopyBp::default()
                    };
                    for (threads, pool) in &pools {
                        group.bench_with_input(
                            BenchmarkId::new(
                                format!("{source}/{precision:?}/iters={iters}/threads={threads}"),
                                &size,
                            ),
                            mrf,
                            |b, mrf| b.iter(|| pool.install(|| bp.run(mrf))),
                        );
                    }
                }
            }
            group.finish();
        }

        if n <= 100_000 {
            let mut group = c.benchmark_group("lbp_schedules");
            configure(&mut group);
            for (source, mrf) in &models {
                group.throughput(Throughput::Elements(
                    (iters * mrf.num_directed_edges()) as u64,
                ));
                for schedule in [Schedule::Sequential, Schedule::Residual] {
                    let cfg = LoopyBp { schedule, ..bp };
                    group.bench_with_input(
                        BenchmarkId::new(format!("{source}/{schedule:?}/threads=1"), &size),
                        mrf,
                        |b, mrf| b.iter(|| cfg.run(mrf)),
                    );
                }
            }
            group.finish();
        }

        let (_, built) = &models[0];
        let mut group = c.benchmark_group("mean_field");
        configure(&mut group);
        group.throughput(Throughput::Elements((iters * n) as u64));
        let mf = MeanField {
            max_iters: iters,
            tol: 0.0,
            sweep: Sweep::Parallel,
            beliefs: Beliefs::NodesOnly,
            ..MeanField::default()
        };
        for (threads, pool) in &pools {
            group.bench_with_input(
                BenchmarkId::new(format!("built/parallel/threads={threads}"), &size),
                built,
                |b, mrf| b.iter(|| pool.install(|| mf.run(mrf))),
            );
        }
        group.finish();

        let mut group = c.benchmark_group("gibbs");
        configure(&mut group);
        group.throughput(Throughput::Elements((iters * n) as u64));
        let gibbs = Gibbs {
            burn_in: iters - 1,
            samples: 1,
            thinning: 1,
            beliefs: Beliefs::NodesOnly,
            ..Gibbs::default()
        };
        for (threads, pool) in &pools {
            group.bench_with_input(
                BenchmarkId::new(format!("built/chromatic/threads={threads}"), &size),
                built,
                |b, mrf| {
                    let mut rng = ChaCha8Rng::seed_from_u64(7);
                    b.iter(|| pool.install(|| gibbs.run(mrf, &mut rng).expect("valid config")))
                },
            );
        }
        group.finish();
    }
}

criterion_group!(benches, bench_inference);
criterion_main!(benches);
