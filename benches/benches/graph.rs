//! Criterion benches for srl-graph: the LINQS loader on Cora, the generators at 10^4 to
//! 10^6 nodes, CSR construction and neighbour iteration at 10^7 edges.
//!
//! Cora is read from `$SRL_DATA_DIR/cora` (default `/work/shared/data/cora`); the bench is
//! skipped when it is absent. Run with short settings, e.g.
//! `cargo bench -p srl-benches --bench graph -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use srl_graph::{
    Attributes, DegreeModel, Directedness, HomophilyParams, LabelSet, LinqsOptions, NodeId,
    RelationalGraph, SenGetoorParams, load_linqs,
};

fn linqs(c: &mut Criterion) {
    let dir = std::env::var_os("SRL_DATA_DIR")
        .map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
        .join("cora");
    if !dir.is_dir() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("{} missing: skipping linqs/cora", dir.display());
        }
        return;
    }
    let mut g = c.benchmark_group("linqs");
    g.sample_size(10);
    g.bench_function("cora", |b| {
        b.iter(|| load_linqs(black_box(&dir), "cora", &LinqsOptions::default()))
    });
    g.finish();
}

fn generators(c: &mut Criterion) {
    let mut g = c.benchmark_group("generate");
    g.sample_size(10);
    for n in [10_000usize, 100_000, 1_000_000] {
        let p = HomophilyParams {
            num_nodes: n,
            avg_degree: 10.0,
            homophily: 0.8,
            num_labels: 5,
            ..HomophilyParams::default()
        };
        g.bench_with_input(
            BenchmarkId::new("homophily/uniform/d=10/k=5", format!("n={n}")),
            &p,
            |b, p| {
                let mut rng = ChaCha8Rng::seed_from_u64(1);
                b.iter(|| p.generate(&mut rng));
            },
        );
        let pl = HomophilyParams {
            degree: DegreeModel::PowerLaw { exponent: 2.5 },
            ..p.clone()
        };
        g.bench_with_input(
            BenchmarkId::new("homophily/powerlaw2.5/d=10/k=5", format!("n={n}")),
            &pl,
            |b, p| {
                let mut rng = ChaCha8Rng::seed_from_u64(1);
                b.iter(|| p.generate(&mut rng));
            },
        );
        let sg = SenGetoorParams {
            num_nodes: n,
            ..SenGetoorParams::default()
        };
        g.bench_with_input(
            BenchmarkId::new("sen_getoor/rho=0.85/alpha=0.25", format!("n={n}")),
            &sg,
            |b, p| {
                let mut rng = ChaCha8Rng::seed_from_u64(1);
                b.iter(|| p.generate(&mut rng));
            },
        );
    }
    g.finish();
}

fn csr(c: &mut Criterion) {
    let (n, m) = (1_000_000usize, 10_000_000usize);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let edges: Vec<(NodeId, NodeId)> = (0..m)
        .map(|_| {
            (
                NodeId::new(rng.random_range(0..n)),
                NodeId::new(rng.random_range(0..n)),
            )
        })
        .collect();
    let build = |edges: Vec<(NodeId, NodeId)>| {
        RelationalGraph::new(
            Vec::new(),
            Attributes::none(n),
            vec![None; n],
            LabelSet::numbered(2),
            edges,
            Directedness::Undirected,
        )
    };
    let mut g = c.benchmark_group("csr");
    g.sample_size(10);
    g.bench_function(BenchmarkId::new("build", "n=1000000/m=10000000"), |b| {
        b.iter_batched(|| edges.clone(), build, BatchSize::LargeInput)
    });
    let Ok(graph) = build(edges) else {
        return;
    };
    g.bench_function(
        BenchmarkId::new("neighbour_sum", "n=1000000/m=10000000"),
        |b| {
            b.iter(|| {
                let mut s = 0u64;
                for v in graph.nodes() {
                    for w in graph.neighbors(v) {
                        s += u64::from(w.0);
                    }
                }
                black_box(s)
            })
        },
    );
    g.finish();
}

criterion_group!(benches, linqs, generators, csr);
criterion_main!(benches);
