//! Criterion benches for srl-eval: the ranking metrics on 10^4 … 10^6 scores.
//!
//! Every ranking metric sorts the scores once (`RocCurve::new`, a parallel unstable sort)
//! and then makes a linear pass; the `from_curve` group shows the cost of the passes alone,
//! so callers know to build one `RocCurve` and read several metrics from it.
//!
//! Run: `cargo bench -p srl-benches --bench eval -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_eval::metrics::{RocCurve, WeightedAuc, auc_pr, auc_roc};

/// `n` scores with 10% positives; positives score higher on average (AUC ≈ 0.8), all scores
/// distinct with probability 1.
fn instances(n: usize, seed: u64) -> (Vec<f64>, Vec<bool>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let truth: Vec<bool> = (0..n).map(|_| rng.random_bool(0.1)).collect();
    let scores = truth
        .iter()
        .map(|&t| rng.random::<f64>() + if t { 0.4 } else { 0.0 })
        .collect();
    (scores, truth)
}

fn ranking(c: &mut Criterion) {
    let mut group = c.benchmark_group("eval_ranking");
    group.sample_size(10);
    for n in [10_000usize, 100_000, 1_000_000] {
        let (scores, truth) = instances(n, 2014);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("auc_roc", format!("n={n}")), &n, |b, _| {
            b.iter(|| auc_roc(black_box(&scores), black_box(&truth)));
        });
        let w = WeightedAuc::default();
        group.bench_with_input(
            BenchmarkId::new("weighted_auc_roc/N=5/gamma=0.8", format!("n={n}")),
            &n,
            |b, _| b.iter(|| w.compute(black_box(&scores), black_box(&truth))),
        );
        group.bench_with_input(
            BenchmarkId::new("auc_pr_dg", format!("n={n}")),
            &n,
            |b, _| {
                b.iter(|| auc_pr(black_box(&scores), black_box(&truth)));
            },
        );
    }
    group.finish();
}

fn from_curve(c: &mut Criterion) {
    let mut group = c.benchmark_group("eval_from_curve");
    group.sample_size(10);
    let n = 1_000_000usize;
    let (scores, truth) = instances(n, 2014);
    let curve = RocCurve::new(&scores, &truth).expect("valid instances");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new("auc", format!("n={n}")), |b| {
        b.iter(|| black_box(&curve).auc());
    });
    group.bench_function(BenchmarkId::new("weighted_auc", format!("n={n}")), |b| {
        b.iter(|| WeightedAuc::default().score(black_box(&curve)));
    });
    group.bench_function(BenchmarkId::new("auc_pr_dg", format!("n={n}")), |b| {
        b.iter(|| black_box(&curve).auc_pr());
    });
    group.finish();
}

criterion_group!(benches, ranking, from_curve);
criterion_main!(benches);
