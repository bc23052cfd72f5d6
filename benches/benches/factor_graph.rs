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
//! - `factor_bp_bnlearn/NET/sweeps=100`: flooding loopy BP, one thread, 100 sweeps
//!   (tolerance 1e-300) on bnlearn networks read from `$SRL_DATA_DIR/bnlearn_bif` as
//!   factor graphs (one factor per CPT): hepar2, hailfinder, munin1, munin, pathfinder and
//!   diabetes, which run all 100 sweeps (checked before timing; alarm, win95pts, link,
//!   pigs and andes stop early when a sweep
//!   changes no message, so a rate per sweep would mislead); elements are
//!   factor-to-variable messages. Skipped, with a note, without the data directory.
//!   `cargo run --release -p srl-bayes --example network_to_uai -- NET.bif.gz NET.uai`
//!   writes the same model for libDAI (docs/srl-infer.md has both rates).
//!
//! - `vmath/{exp,ln}/{vmath,std}/512`: the batched `exp` and `ln` of
//!   `srl_infer::vmath` that the linear kernel's passes use, against a loop over
//!   `f64::exp` / `f64::ln`, on 512 values (`exp`: uniform in `[-30, 0]`; `ln`: uniform in
//!   `(0, 1]`); elements are values.
//!
//! Run: `cargo bench -p srl-benches --bench factor_graph` (about four minutes).

#![allow(clippy::print_stderr)] // the note of a skipped data set

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

fn bench_bnlearn(c: &mut Criterion) {
    let Some(dir) =
        std::env::var_os("SRL_DATA_DIR").map(|d| std::path::PathBuf::from(d).join("bnlearn_bif"))
    else {
        eprintln!("factor_bp_bnlearn: skipped, SRL_DATA_DIR is not set");
        return;
    };
    let sweeps = 100usize;
    let mut group = c.benchmark_group("factor_bp_bnlearn");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    for name in [
        "hepar2",
        "hailfinder",
        "munin1",
        "munin",
        "pathfinder",
        "diabetes",
    ] {
        let path = dir.join(format!("{name}.bif.gz"));
        if !path.exists() {
            eprintln!(
                "factor_bp_bnlearn: skipped {name}, looked at {}",
                path.display()
            );
            continue;
        }
        let (_, g) = srl_bayes::factor_graph::read_network_factor_graph(&path).expect("network");
        let edges: usize = g.factors().iter().map(|f| f.vars.len()).sum();
        group.throughput(Throughput::Elements((sweeps * edges) as u64));
        let bp = FactorBp {
            max_iters: sweeps,
            tolerance: 1e-300,
            ..FactorBp::default()
        };
        let done = bp.marginals(&g).expect("bp").convergence().iterations;
        assert_eq!(done, sweeps, "{name}: BP stopped after {done} sweeps");
        group.bench_with_input(
            BenchmarkId::new(name, format!("sweeps={sweeps}")),
            &g,
            |b, g| b.iter(|| pool.install(|| bp.marginals(g).expect("bp"))),
        );
    }
    group.finish();
}

fn bench_vmath(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let n = 512;
    let xe: Vec<f64> = (0..n).map(|_| rng.random_range(-30.0..=0.0)).collect();
    let xl: Vec<f64> = (0..n)
        .map(|_| rng.random_range(f64::MIN_POSITIVE..=1.0))
        .collect();
    let mut group = c.benchmark_group("vmath");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Elements(n as u64));
    let mut y = vec![0.0; n];
    group.bench_function(BenchmarkId::new("exp/vmath", n), |b| {
        b.iter(|| {
            y.copy_from_slice(&xe);
            srl_infer::vmath::exp_in_place(&mut y);
            std::hint::black_box(&y);
        });
    });
    group.bench_function(BenchmarkId::new("exp/std", n), |b| {
        b.iter(|| {
            for (o, &x) in y.iter_mut().zip(&xe) {
                *o = x.exp();
            }
            std::hint::black_box(&y);
        });
    });
    group.bench_function(BenchmarkId::new("ln/vmath", n), |b| {
        b.iter(|| {
            y.copy_from_slice(&xl);
            srl_infer::vmath::ln_in_place(&mut y);
            std::hint::black_box(&y);
        });
    });
    group.bench_function(BenchmarkId::new("ln/std", n), |b| {
        b.iter(|| {
            for (o, &x) in y.iter_mut().zip(&xl) {
                *o = x.ln();
            }
            std::hint::black_box(&y);
        });
    });
    group.finish();
}

criterion_group!(benches, bench, bench_bnlearn, bench_vmath);
criterion_main!(benches);
