//! Criterion bench for srl-dist: one timely worker of flooding loopy BP
//! (`DistBp::from_loopy(&bp).run_threads(model, 1)`) beside srl-infer's flooding
//! `LoopyBp::run` on one rayon thread, on the benchmark model of
//! `crates/srl-dist/examples/bp_speed.rs` (seeded Barabási–Albert, `m0 = 2`, `k = 2`,
//! Potts coupling 0.5, unary uniform in `[-1, 1)`, seed 42), 5 iterations with `tol = 0`,
//! at `SRL_DIST_BENCH_N` nodes (default 10^5, so the whole bench takes well under a
//! minute).
//!
//! Throughput is directed-message updates (`iterations · 2m` elements), so `elem/s` is
//! messages per second. Three functions in the group `dist_bp`:
//! - `srl-infer threads=1`: the whole `LoopyBp::run` (plan, iterations, marginals);
//! - `srl-dist workers=1 iterations`: the worker's iteration time (compute and exchange,
//!   `WorkerStats::seconds`), without timely's start-up and the building of the part;
//! - `srl-dist workers=1 whole call`: the whole `run_threads` call, start-up included.
//!
//! Before the group, the per-iteration exchange volume of 2 and 4 workers (range and hash
//! partitions) is printed to stderr (volumes, not times).
//!
//! Run: `cargo bench -p srl-benches --bench dist` (times on a loaded machine measure the
//! load; `docs/srl-dist.md` gives quiet-machine numbers of `bp_speed` at 10^6 nodes).

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_dist::{DistBp, Partition, barabasi_albert_mrf};
use srl_infer::{Beliefs, LoopyBp, Schedule};

const ITERS: usize = 5;

fn bench_dist(c: &mut Criterion) {
    let n: usize = std::env::var("SRL_DIST_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mrf = Arc::new(barabasi_albert_mrf(n, 2, 0.5, &mut rng).expect("model"));
    let m2 = mrf.num_directed_edges();
    let bp = LoopyBp {
        max_iters: ITERS,
        tol: 0.0,
        beliefs: Beliefs::NodesOnly,
        schedule: Schedule::Flooding,
        ..LoopyBp::default()
    };
    #[allow(clippy::print_stderr)]
    for workers in [2usize, 4] {
        for partition in [Partition::Range, Partition::Hash] {
            let out = DistBp {
                partition,
                ..DistBp::from_loopy(&bp)
            }
            .run_threads(Arc::clone(&mrf), workers)
            .expect("run");
            let s = out.stats();
            let bytes: u64 = s.iter().map(|w| w.bytes_sent_per_iter).sum();
            let cut: u64 = s.iter().map(|w| w.remote_messages_per_iter).sum();
            let setup: u64 = s.iter().map(|w| w.setup_bytes).sum();
            eprintln!(
                "n={n} m={} workers={workers} {partition:?}: cut messages/iter={cut} ({:.1}%), \
                 bytes/iter={bytes}, setup bytes={setup}",
                mrf.num_edges(),
                100.0 * cut as f64 / m2 as f64
            );
        }
    }

    let mut group = c.benchmark_group("dist_bp");
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements((ITERS * m2) as u64));
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    group.bench_function(format!("srl-infer threads=1 n={n}"), |b| {
        b.iter(|| one.install(|| bp.run(&mrf)));
    });
    let cfg = DistBp::from_loopy(&bp);
    group.bench_function(format!("srl-dist workers=1 iterations n={n}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let out = cfg.run_threads(Arc::clone(&mrf), 1).expect("run");
                let s = out.stats().iter().map(|w| w.seconds).fold(0.0, f64::max);
                total += Duration::from_secs_f64(s);
            }
            total
        });
    });
    group.bench_function(format!("srl-dist workers=1 whole call n={n}"), |b| {
        b.iter(|| cfg.run_threads(Arc::clone(&mrf), 1).expect("run"));
    });
    group.finish();
}

criterion_group!(benches, bench_dist);
criterion_main!(benches);
