//! Criterion bench of loopy BP on a general factor graph (issue 28): `n = 10^5` binary
//! variables and `m = 10^5` factors, each over 3 distinct random variables with its own
//! random table (natural-log entries uniform in `[-1, 1]`, seeded ChaCha8), read back
//! from a UAI `MARKOV` file written in a temporary directory (so the bench runs what
//! `srl mrf` runs on that file):
//!
//! - `factor_bp/flooding/threads=T/n=100000/sweeps=10`, `factor_bp/{sequential,residual}/
//!   threads=1/...`: 10 sweeps (`tolerance` 1e-300, so every run does all of them);
//!   elements are factor-to-variable messages (`10 · 3m`), so `elem/s` is messages per
//!   second, including the run's setup and final beliefs.
//!
//! The same UAI file for a run of libDAI: `SRL_FACTOR_UAI=/path/model.uai cargo bench -p
//! srl-benches --bench factor_graph` also writes the model there (docs/srl-infer.md has
//! the libDAI command and both rates).
//!
//! Run: `cargo bench -p srl-benches --bench factor_graph` (about a minute).

use std::fmt::Write as _;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use srl_infer::FactorGraph;
use srl_infer::factor_graph::{FactorBp, FactorSchedule};

/// The bench's model as UAI `MARKOV` text: `n` binary variables, `m` factors of 3.
fn model_uai(n: usize, m: usize, seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = String::with_capacity(m * 120);
    let _ = writeln!(out, "MARKOV\n{n}");
    out.push_str(&"2 ".repeat(n));
    let _ = writeln!(out, "\n{m}");
    let mut tables = Vec::with_capacity(m);
    for _ in 0..m {
        let mut s = [0usize; 3];
        loop {
            for x in &mut s {
                *x = rng.random_range(0..n);
            }
            if s[0] != s[1] && s[1] != s[2] && s[0] != s[2] {
                break;
            }
        }
        let _ = writeln!(out, "3 {} {} {}", s[0], s[1], s[2]);
        tables.push(
            (0..8)
                .map(|_| rng.random_range(-1.0..1.0f64))
                .collect::<Vec<_>>(),
        );
    }
    for t in tables {
        out.push_str("8\n");
        for x in t {
            let _ = write!(out, " {:e}", x.exp());
        }
        out.push('\n');
    }
    out
}

fn bench(c: &mut Criterion) {
    let (n, m, sweeps) = (100_000usize, 100_000usize, 10usize);
    let text = model_uai(n, m, 28);
    if let Some(path) = std::env::var_os("SRL_FACTOR_UAI") {
        std::fs::write(&path, &text).expect("writing SRL_FACTOR_UAI");
    }
    let dir = std::env::temp_dir().join(format!("srl-factor-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("model.uai");
    std::fs::write(&file, &text).expect("write");
    let (g, _, _) = FactorGraph::read_uai(&file).expect("read");
    let _ = std::fs::remove_dir_all(&dir);
    let mut group = c.benchmark_group("factor_bp");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements((sweeps * 3 * m) as u64));
    let size = format!("n={n}/sweeps={sweeps}");
    let runs = [
        ("flooding", FactorSchedule::Flooding, 1usize),
        ("flooding", FactorSchedule::Flooding, 2),
        ("sequential", FactorSchedule::Sequential, 1),
        ("residual", FactorSchedule::Residual, 1),
    ];
    for (name, schedule, threads) in runs {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let bp = FactorBp {
            max_iters: sweeps,
            tolerance: 1e-300,
            schedule,
            ..FactorBp::default()
        };
        group.bench_with_input(
            BenchmarkId::new(format!("{name}/threads={threads}"), &size),
            &g,
            |b, g| b.iter(|| pool.install(|| bp.marginals(g).expect("bp"))),
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
