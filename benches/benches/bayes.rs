//! Criterion benches for srl-bayes: branch-and-bound trimming of the seven TrimBN naive
//! Bayes models (T = 0.5, unit costs, budget floor(n/3)), with the three branching orders;
//! hepatitis at Table 6's settings (each threshold); Figure 7's largest network (win95pts,
//! 16 leaves) and its largest joint (hailfinder, 6.1·10^7 instantiations); the
//! two naive-Bayes MPA algorithms on hepatitis; the general (joint-table) path and
//! variable elimination on seeded random networks.
//!
//! The TrimBN models are read from `$SRL_DATA_DIR/trimbn_networks` (default
//! `/work/shared/data`); those benches are skipped when absent. Run with short settings:
//! `cargo bench -p srl-benches --bench bayes -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::measurement::WallTime;
use criterion::{
    BatchSize, BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main,
};
use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use srl_bayes::io::read_trimbn_json;
use srl_bayes::trim::{
    AgreementModel, BranchAndBound, FeatureOrder, JointAgreement, NaiveBayesAgreement,
};
use srl_bayes::{BayesianNetwork, Cpt, ThresholdClassifier, Variable, VariableElimination};

fn data_dir() -> PathBuf {
    std::env::var_os("SRL_DATA_DIR")
        .map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
}

/// The win95pts classes drawn by `cargo xtask reproduce trimming` (seed 20061001).
const FIGURE7_CLASSES: [&str; 3] = ["PrtPaper", "PrtPScript", "PrntrAccptsTrtyp"];

fn trimbn(c: &mut Criterion) {
    let dir = data_dir().join("trimbn_networks/derived");
    if !dir.is_dir() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("{} missing: skipping trim/*", dir.display());
        }
        return;
    }
    let mut g = c.benchmark_group("trim");
    g.sample_size(10);
    for name in [
        "bupa",
        "pima",
        "ident",
        "anatomy",
        "heart",
        "voting",
        "hepatitis",
    ] {
        let Ok(p) = read_trimbn_json(&dir.join(format!("{name}.nb.json"))) else {
            continue;
        };
        let n = p.feature_names.len();
        let budget = (n / 3) as f64;
        let Ok(model) = NaiveBayesAgreement::new(&p.model, p.positive_state, 0.5) else {
            continue;
        };
        for (order, label) in [
            (
                FeatureOrder::DecreasingInformation,
                "decreasing_information",
            ),
            (FeatureOrder::DecreasingMpa, "decreasing_mpa"),
            (FeatureOrder::Given, "given"),
        ] {
            let id = BenchmarkId::new(format!("bnb/{label}"), format!("{name}/n={n}/T=0.5"));
            g.bench_function(id, |b| {
                b.iter(|| BranchAndBound { order }.run(black_box(&model), &p.costs, budget));
            });
        }
        if name == "hepatitis" {
            // Table 6's settings: unit costs, budget floor(n/3), each threshold
            let unit = vec![1.0; n];
            for t in [0.1, 0.3, 0.5, 0.7, 0.9] {
                let Ok(m) = NaiveBayesAgreement::new(&p.model, p.positive_state, t) else {
                    continue;
                };
                g.bench_function(
                    BenchmarkId::new("table6/hepatitis", format!("n={n}/budget={budget}/T={t}")),
                    |b| {
                        b.iter(|| BranchAndBound::default().run(black_box(&m), &unit, budget));
                    },
                );
            }
            let all = (1u64 << n) - 1;
            for k in [6usize, 12, 17] {
                let s = (1u64 << k) - 1;
                g.bench_function(
                    BenchmarkId::new("mpa_enumerated/hepatitis", format!("y={k}")),
                    |b| {
                        b.iter(|| model.mpa_enumerated(black_box(s)));
                    },
                );
                g.bench_function(
                    BenchmarkId::new("mpa_segmented/hepatitis", format!("y={k}")),
                    |b| {
                        b.iter(|| model.mpa_segmented(black_box(s)));
                    },
                );
            }
            let _ = all;
        }
    }
    g.finish();
}

/// A seeded random network: variable 0 binary root, the rest with up to two earlier
/// parents, cardinality 2.
/// Branch and bound (default order) on a fresh copy of `model`, its cache empty, per run.
fn bench_bnb<M: AgreementModel + Clone>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    id: BenchmarkId,
    model: &M,
    costs: &[f64],
    budget: f64,
) {
    g.bench_function(id, |b| {
        b.iter_batched(
            || model.clone(),
            |m| BranchAndBound::default().run(&m, costs, budget),
            BatchSize::LargeInput,
        );
    });
}

fn random_network(n: usize, seed: u64) -> BayesianNetwork {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut vars = Vec::new();
    let mut cpts = Vec::new();
    for i in 0..n {
        vars.push(Variable::numbered(format!("v{i}"), 2));
        let mut parents: Vec<usize> = Vec::new();
        if i > 0 {
            parents.push(rng.random_range(0..i));
            let q = rng.random_range(0..i);
            if !parents.contains(&q) {
                parents.push(q);
            }
        }
        let rows = 1usize << parents.len();
        let mut probs = Vec::new();
        for _ in 0..rows {
            let p: f64 = rng.random_range(0.05..0.95);
            probs.extend([p, 1.0 - p]);
        }
        cpts.push(Cpt { parents, probs });
    }
    BayesianNetwork::new(vars, cpts).expect("valid network")
}

fn general(c: &mut Criterion) {
    let mut g = c.benchmark_group("general");
    g.sample_size(10);
    let ve = VariableElimination::default();
    for n in [20usize, 40] {
        let net = random_network(n, 5);
        let leaves = net.leaves();
        let features: Vec<usize> = leaves
            .iter()
            .copied()
            .filter(|&v| v != 0)
            .take(12)
            .collect();
        let clf = ThresholdClassifier {
            class: 0,
            positive_state: 0,
            features: features.clone(),
            threshold: 0.5,
        };
        g.bench_function(
            BenchmarkId::new("ve_joint", format!("n={n}/features={}", features.len())),
            |b| {
                b.iter(|| JointAgreement::new(black_box(&net), &clf, &ve, 1 << 20));
            },
        );
        let Ok(model) = JointAgreement::new(&net, &clf, &ve, 1 << 20) else {
            continue;
        };
        let f = features.len();
        g.bench_function(
            BenchmarkId::new("maa", format!("n={n}/features={f}")),
            |b| {
                b.iter(|| model.maa(black_box(0b1011)));
            },
        );
        let costs = vec![1.0; f];
        bench_bnb(
            &mut g,
            BenchmarkId::new("bnb", format!("n={n}/features={f}/budget={}", f / 3)),
            &model,
            &costs,
            (f / 3) as f64,
        );
    }
    g.finish();
}

/// Figure 7 on win95pts (76 variables, 16 leaves as features, budget 5), with the classes
/// the `trimming` experiment draws: the joint compiled once (`srl_bayes::compile`), then
/// branch and bound from an empty cache at each threshold; branch and bound on hailfinder
/// (13 leaves, budget 4, class LLIW at T = 0.3: 19 evaluations, bounds over 12 leaves from
/// the 6.1·10^7-entry joint); and compiling water (8 leaves, 27648 instantiations, a peak
/// table of 7·10^6 entries) for one class.
fn figure7(c: &mut Criterion) {
    let path = data_dir().join("bnlearn_bif/win95pts.bif.gz");
    let Ok(net) = srl_bayes::io::read_bif(&path) else {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("{} missing: skipping figure7/*", path.display());
        }
        return;
    };
    let mut g = c.benchmark_group("figure7");
    g.sample_size(10);
    let ve = VariableElimination {
        max_entries: 1 << 25,
    };
    let features = net.leaves();
    let f = features.len();
    let costs = vec![1.0; f];
    let budget = (f / 3) as f64;
    for class_name in FIGURE7_CLASSES {
        let Ok(class) = net.id(class_name) else {
            continue;
        };
        let clf = ThresholdClassifier {
            class,
            positive_state: 0,
            features: features.clone(),
            threshold: 0.5,
        };
        g.bench_function(
            BenchmarkId::new("compile/win95pts", format!("{class_name}/features={f}")),
            |b| {
                b.iter(|| JointAgreement::new(black_box(&net), &clf, &ve, 1 << 24));
            },
        );
        let Ok(joint) = JointAgreement::new(&net, &clf, &ve, 1 << 24) else {
            continue;
        };
        for t in [0.1, 0.5, 0.9] {
            let Ok(model) = joint.with_threshold(t) else {
                continue;
            };
            bench_bnb(
                &mut g,
                BenchmarkId::new(
                    "bnb/win95pts",
                    format!("{class_name}/features={f}/budget={budget}/T={t}"),
                ),
                &model,
                &costs,
                budget,
            );
        }
    }
    // hailfinder (13 leaves, 6.1·10^7 instantiations): branch and bound's bounds
    // marginalise the whole joint into tables of 10^7 entries
    let hailfinder = data_dir().join("bnlearn_bif/hailfinder.bif.gz");
    if let Ok(net) = srl_bayes::io::read_bif(&hailfinder)
        && let Ok(class) = net.id("LLIW")
    {
        let features = net.leaves();
        let f = features.len();
        let clf = ThresholdClassifier {
            class,
            positive_state: 0,
            features,
            threshold: 0.3,
        };
        let costs = vec![1.0; f];
        let budget = (f / 3) as f64;
        if let Ok(model) = srl_bayes::compile::compile(&net, &clf, 1 << 26)
            .and_then(|c| JointAgreement::from_compiled(&net, &clf, c))
        {
            bench_bnb(
                &mut g,
                BenchmarkId::new(
                    "bnb/hailfinder",
                    format!("LLIW/features={f}/budget={budget}/T=0.3"),
                ),
                &model,
                &costs,
                budget,
            );
        }
    }
    let water = data_dir().join("bnlearn_bif/water.bif.gz");
    if let Ok(net) = srl_bayes::io::read_bif(&water)
        && let Ok(class) = net.id("CKNI_12_00")
    {
        let clf = ThresholdClassifier {
            class,
            positive_state: 0,
            features: net.leaves(),
            threshold: 0.5,
        };
        g.bench_function("compile/water/CKNI_12_00/features=8", |b| {
            b.iter(|| srl_bayes::compile::compile(black_box(&net), &clf, 1 << 26));
        });
    }
    g.finish();
}

criterion_group!(benches, trimbn, general, figure7);
criterion_main!(benches);
