//! Criterion benches for srl-learn: training time of the relational Markov network (MN)
//! and the cost-sensitive Markov network (CSMN) of Sen & Getoor (2006) on graphs from their
//! generator (Algorithms 1-2, ρ = 0.85, α = 0.25) of 300, 3 000 and 30 000 nodes, with
//! marginals from undamped loopy BP; two thirds of the nodes are the training set, as in
//! one fold of the paper's 3-fold CV. L-BFGS is capped at 20 iterations (id suffix
//! `iters<=20`) so the largest size stays within a few seconds per sample; the logistic
//! regression baseline is timed at the same sizes.
//!
//! Run with short settings, e.g.
//! `cargo bench -p srl-benches --bench learn -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_graph::{KFold, NodeId, SenGetoorParams, SyntheticGraph};
use srl_infer::LoopyBp;
use srl_learn::{
    CostSensitiveMarkovNetworkParams, Lambda, LogisticRegressionParams,
    RelationalMarkovNetworkParams,
};

const SIZES: [usize; 3] = [300, 3_000, 30_000];

fn data(n: usize) -> (SyntheticGraph, Vec<bool>) {
    let mut rng = ChaCha8Rng::seed_from_u64(2006);
    let syn = SenGetoorParams {
        num_nodes: n,
        ..SenGetoorParams::default()
    }
    .generate(&mut rng)
    .expect("valid generator parameters");
    let folds = KFold::random(n, 3, &mut rng).expect("n >= 3");
    let train = folds.split(0).train_mask();
    (syn, train)
}

fn training(c: &mut Criterion) {
    let mut g = c.benchmark_group("learn_fit");
    g.sample_size(10);
    let bp = LoopyBp::default();
    for n in SIZES {
        let (syn, train) = data(n);
        let id = format!("n={n}");
        g.bench_with_input(
            BenchmarkId::new("mn/sen_getoor/rho=0.85/lbp/iters<=20", &id),
            &(),
            |b, ()| {
                let p = RelationalMarkovNetworkParams {
                    max_iters: 20,
                    ..Default::default()
                };
                let mut rng = ChaCha8Rng::seed_from_u64(0);
                b.iter(|| p.fit(black_box(&syn.graph), &train, &bp, &mut rng))
            },
        );
        g.bench_with_input(
            BenchmarkId::new("csmn/sen_getoor/rho=0.85/lbp/iters<=20", &id),
            &(),
            |b, ()| {
                let p = CostSensitiveMarkovNetworkParams {
                    max_iters: 20,
                    ..Default::default()
                };
                let mut rng = ChaCha8Rng::seed_from_u64(0);
                b.iter(|| p.fit(black_box(&syn.graph), &syn.costs, &train, &bp, &mut rng))
            },
        );
        let rows: Vec<_> = (0..n)
            .filter(|&v| train[v])
            .map(|v| syn.graph.attributes_of(NodeId::new(v)))
            .collect();
        let labels: Vec<usize> = (0..n)
            .filter(|&v| train[v])
            .map(|v| syn.graph.label(NodeId::new(v)).unwrap_or(0))
            .collect();
        g.bench_with_input(
            BenchmarkId::new("logreg/sen_getoor/d=10", &id),
            &(),
            |b, ()| {
                let p = LogisticRegressionParams {
                    lambda: Lambda::PerSample(1e-4),
                    ..Default::default()
                };
                b.iter(|| p.fit_rows(black_box(&rows), 10, &labels, 2, None))
            },
        );
    }
    g.finish();
}

criterion_group!(benches, training);
criterion_main!(benches);
