//! Criterion bench for srl-dist: flooding loopy BP on a seeded Barabási–Albert model
//! (`m0 = 2`, `k = 2`, Potts coupling 0.5, unary uniform in `[-1, 1)`) with 1 and 2 timely
//! workers (threads of one process), beside srl-infer's flooding `LoopyBp` on one rayon
//! thread, at `SRL_DIST_BENCH_N` nodes (default 10^6).
//!
//! Throughput is directed-message updates (`iterations · 2m` elements). For srl-dist the
//! measured time is the workers' iteration time (compute and exchange, the slowest worker,
//! from `WorkerStats::seconds`): timely start-up and partition building are excluded and
//! printed separately. The per-iteration exchange volume (payload bytes between workers) is
//! printed to stderr for range and hash partitions.
//!
//! Run: `cargo bench -p srl-benches --bench dist`

use std::sync::Arc;
use std::time::{Duration, Instant};

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
        .unwrap_or(1_000_000);
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
            let t = Instant::now();
            let out = DistBp {
                partition,
                ..DistBp::from_loopy(&bp)
            }
            .run_threads(Arc::clone(&mrf), workers)
            .expect("run");
            let total = t.elapsed().as_secs_f64();
            let s = out.stats();
            let iter_s = s.iter().map(|w| w.seconds).fold(0.0, f64::max);
            let bytes: u64 = s.iter().map(|w| w.bytes_sent_per_iter).sum();
            let cut: u64 = s.iter().map(|w| w.remote_messages_per_iter).sum();
            let setup: u64 = s.iter().map(|w| w.setup_bytes).sum();
            eprintln!(
                "n={n} m={} workers={workers} {partition:?}: cut messages/iter={cut} ({:.1}%), \
                 bytes/iter={bytes}, setup bytes={setup}, run {total:.2}s of which iterations {iter_s:.2}s",
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
    for workers in [1usize, 2] {
        let cfg = DistBp::from_loopy(&bp);
        group.bench_function(format!("srl-dist workers={workers} range n={n}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let out = cfg.run_threads(Arc::clone(&mrf), workers).expect("run");
                    let s = out.stats().iter().map(|w| w.seconds).fold(0.0, f64::max);
                    total += Duration::from_secs_f64(s);
                }
                total
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_dist);
criterion_main!(benches);
