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
//!
//! Group `mn_cora` (needs `SRL_DATA_DIR` with `cora/`, skipped otherwise): MN training on
//! the training nodes of one Cora 10-fold random-sampling fold (2437 nodes, 1433 words, 7
//! labels), as the `collective-classification` experiment trains it, by maximum
//! likelihood with loopy-BP marginals (the old experiment setting: L-BFGS ≤ 30
//! iterations, LBP ≤ 20 iterations at tolerance 1e-3) and by maximum pseudo-likelihood
//! (L-BFGS ≤ 500 iterations, tolerance 1e-6, no inference). The test accuracy of both
//! models (LBP at test time, training labels clamped) is printed to stderr once, so the
//! speed-up is read at equal accuracy:
//! `SRL_DATA_DIR=/work/shared/data cargo bench -p srl-benches --bench learn -- mn_cora`.
//!
//! Group `graph_learners_cora` (needs `SRL_DATA_DIR` with `cora/`): the training of GCN,
//! the MLP and APPNP (issue 32's defaults) and label propagation on the first split of
//! Shchur et al.'s sparse-label protocol on Cora's largest connected component (2485
//! nodes; 140 training, 210 validation nodes), as the `collective-classification`
//! experiment runs them:
//! `SRL_DATA_DIR=/work/shared/data cargo bench -p srl-benches --bench learn -- graph_learners_cora`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_graph::{
    KFold, LinqsOptions, NodeId, RelationalGraph, SenGetoorParams, SyntheticGraph, load_linqs,
};
use srl_infer::LoopyBp;
use srl_learn::{
    CostSensitiveMarkovNetworkParams, Lambda, LogisticRegressionParams, RelationalMarkovNetwork,
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
        let labels: Vec<u32> = (0..n)
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

/// Cora with fold 0 of a seeded 10-fold RS split: the graph with the test labels hidden,
/// the training mask and the true labels.
fn cora_fold() -> Option<(RelationalGraph, Vec<bool>, Vec<Option<u32>>)> {
    let dir = std::path::PathBuf::from(std::env::var_os("SRL_DATA_DIR")?).join("cora");
    let (graph, _) = load_linqs(&dir, "cora", &LinqsOptions::default()).ok()?;
    let mut rng = ChaCha8Rng::seed_from_u64(20061001);
    let split = KFold::random(graph.num_nodes(), 10, &mut rng)
        .ok()?
        .split(0);
    let truth = graph.labels().to_vec();
    let hidden = graph
        .with_labels(split.observed_labels(&graph).ok()?)
        .ok()?;
    Some((hidden, split.train_mask(), truth))
}

/// Test accuracy of `model` with LBP at test time, training labels clamped.
fn test_accuracy(
    model: &RelationalMarkovNetwork,
    hidden: &RelationalGraph,
    train: &[bool],
    truth: &[Option<u32>],
) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let m = model
        .marginals(hidden, hidden.labels(), &LoopyBp::default(), &mut rng)
        .expect("inference runs");
    let (mut hit, mut total) = (0usize, 0usize);
    for v in (0..hidden.num_nodes()).filter(|&v| !train[v]) {
        let p = m.node(NodeId::new(v));
        let best = (0..p.len()).fold(0, |b, a| if p[a] > p[b] { a } else { b });
        hit += usize::from(truth[v] == Some(best as u32));
        total += 1;
    }
    hit as f64 / total.max(1) as f64
}

#[allow(clippy::print_stderr)]
fn mn_cora(c: &mut Criterion) {
    let Some((hidden, train, truth)) = cora_fold() else {
        eprintln!("mn_cora: skipped, set SRL_DATA_DIR to a folder with cora/");
        return;
    };
    let likelihood = RelationalMarkovNetworkParams {
        max_iters: 30,
        ..RelationalMarkovNetworkParams::default()
    };
    let bp = LoopyBp {
        max_iters: 20,
        tol: 1e-3,
        ..LoopyBp::default()
    };
    let pseudo = RelationalMarkovNetworkParams {
        max_iters: 500,
        tol: 1e-6,
        ..RelationalMarkovNetworkParams::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let a = likelihood
        .fit(&hidden, &train, &bp, &mut rng)
        .expect("likelihood fit");
    let b = pseudo
        .fit_pseudo_likelihood(&hidden, &train)
        .expect("pseudo-likelihood fit");
    eprintln!(
        "mn_cora: test accuracy (LBP, training labels clamped): likelihood/lbp {:.4} \
         ({} L-BFGS iterations), pseudo-likelihood {:.4} ({} L-BFGS iterations, {})",
        test_accuracy(&a, &hidden, &train, &truth),
        a.report().iterations,
        test_accuracy(&b, &hidden, &train, &truth),
        b.report().iterations,
        b.report().termination,
    );
    let mut g = c.benchmark_group("mn_cora");
    g.sample_size(10);
    g.bench_function("fit/likelihood/lbp<=20,tol=1e-3/iters<=30", |bench| {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        bench.iter(|| likelihood.fit(black_box(&hidden), &train, &bp, &mut rng))
    });
    g.bench_function("fit/pseudo_likelihood/iters<=500", |bench| {
        bench.iter(|| pseudo.fit_pseudo_likelihood(black_box(&hidden), &train))
    });
    g.finish();
}

/// Issue 32's graph learners on the first sparse-label split of Cora's largest connected
/// component (the experiment's split of Cora: protocol stream 2, seed 20061001).
fn graph_learners_cora(c: &mut Criterion) {
    use srl_learn::collective::{Protocol, largest_component};
    use srl_learn::neural::{Architecture, NeuralData, NeuralParams, train};
    use srl_learn::propagation::{CsrMatrix, LabelPropagation};
    let Some(dir) =
        std::env::var_os("SRL_DATA_DIR").map(|d| std::path::PathBuf::from(d).join("cora"))
    else {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("graph_learners_cora: skipped, set SRL_DATA_DIR to a folder with cora/");
        }
        return;
    };
    let Ok((graph, _)) = load_linqs(&dir, "cora", &LinqsOptions::default()) else {
        return;
    };
    let (lcc, _) = largest_component(&graph).expect("Cora has nodes");
    let split = Protocol::Sparse {
        train_per_class: 20,
        validation_per_class: 30,
        splits: 1,
    }
    .splits(&lcc, 20_061_001, 2)
    .expect("Cora's classes hold 50 nodes")
    .remove(0);
    let mut hidden_mask = vec![false; lcc.num_nodes()];
    for &v in split.test.iter().chain(&split.validation) {
        hidden_mask[v] = true;
    }
    let training: Vec<usize> = (0..lcc.num_nodes()).filter(|&v| !hidden_mask[v]).collect();
    let observed: Vec<Option<u32>> = (0..lcc.num_nodes())
        .map(|v| {
            if hidden_mask[v] {
                None
            } else {
                lcc.labels()[v]
            }
        })
        .collect();
    let x = CsrMatrix::row_normalized_features(&lcc).expect("features");
    let a = CsrMatrix::normalized_adjacency(&lcc, true);
    let s = CsrMatrix::normalized_adjacency(&lcc, false);
    let data = NeuralData {
        features: &x,
        adjacency: &a,
        labels: lcc.labels(),
        train: &training,
        validation: &split.validation,
        num_classes: lcc.num_labels(),
    };
    let mut g = c.benchmark_group("graph_learners_cora");
    g.sample_size(10);
    for (name, arch, params) in [
        ("gcn", Architecture::Gcn, NeuralParams::gcn()),
        ("mlp", Architecture::Mlp, NeuralParams::mlp()),
        (
            "appnp",
            Architecture::Appnp {
                steps: 10,
                alpha: 0.1,
            },
            NeuralParams::appnp(),
        ),
    ] {
        g.bench_function(format!("train/{name}"), |bench| {
            bench.iter(|| {
                let mut rng = ChaCha8Rng::seed_from_u64(0);
                train(arch, &params, black_box(&data), &mut rng)
            })
        });
    }
    g.bench_function("lp", |bench| {
        bench.iter(|| LabelPropagation::default().run(black_box(&s), &observed, lcc.num_labels()))
    });
    g.finish();
}

criterion_group!(benches, training, mn_cora, graph_learners_cora);
criterion_main!(benches);
