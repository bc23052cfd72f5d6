//! Criterion benches for srl-boost: one relational regression tree and 10-tree RFGB per
//! BoostSRL domain (fold 1), plus the loader. WebKB and UW-CSE use the BoostSRL preset
//! (`TreeParams::boostsrl`: 13 leaves, depth 5, one literal per test); Cora `samebib`
//! uses the two-literal setting (`TreeParams::two_literal`), the one that learns it from
//! the shipped modes. Boosting samples negatives 2:1 afresh for every tree (BoostSRL's
//! default) with ψ₀ = −1.8.
//!
//! Data is read from `$SRL_DATA_DIR` (default `/work/shared/data`); a domain whose folder
//! is absent is skipped. Run with short settings, e.g.
//! `cargo bench -p srl-benches --bench boost -- --warm-up-time 1 --measurement-time 3`.
//! Benchmark ids: `boost_tree/<domain>_<target>/fold1`,
//! `boost_rfgb/<domain>_<target>/fold1/trees=10/neg=<ratio>/<preset>`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_boost::{
    NegativeSampling, OtherTargets, SoftRfgbParams, TreeParams, load_split, read_background,
};

fn data_dir() -> PathBuf {
    std::env::var_os("SRL_DATA_DIR")
        .map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
}

#[allow(clippy::print_stderr)]
fn skip(what: &str) {
    eprintln!("{what}: skipping");
}

/// (folder, target, per-tree training negative ratio, tree preset name)
const DOMAINS: [(&str, &str, f64, &str); 3] = [
    ("boostsrl_webkb", "faculty", 2.0, "boostsrl"),
    ("boostsrl_uwcse", "advisedby", 2.0, "boostsrl"),
    ("boostsrl_cora", "samebib", 2.0, "2-literal"),
];

fn boost(c: &mut Criterion) {
    for (folder, target, ratio, preset) in DOMAINS {
        let tree = if preset == "boostsrl" {
            TreeParams::boostsrl()
        } else {
            TreeParams::two_literal()
        };
        let dir = data_dir().join(folder);
        if !dir.is_dir() {
            skip(&dir.display().to_string());
            continue;
        }
        let Ok(bk) = read_background(&dir.join("background.txt")) else {
            skip(&format!("{folder}: unreadable background"));
            continue;
        };
        let Ok(split) = load_split(
            &dir.join("fold1/train"),
            "train",
            target,
            &bk,
            OtherTargets::PositivesAsFacts,
        ) else {
            skip(&format!("{folder}: unreadable fold1"));
            continue;
        };
        let name = format!("{}_{target}", folder.trim_start_matches("boostsrl_"));
        let mut g = c.benchmark_group("boost_load");
        g.sample_size(10);
        g.bench_function(BenchmarkId::new(&name, "fold1"), |b| {
            b.iter(|| {
                load_split(
                    black_box(&dir.join("fold1/train")),
                    "train",
                    target,
                    &bk,
                    OtherTargets::PositivesAsFacts,
                )
            })
        });
        g.finish();

        // One tree on the RFGB gradients at ψ = 0 (I − 0.5), over one 2:1 sample.
        let sample = split
            .examples
            .subsample_negatives(ratio, &mut ChaCha8Rng::seed_from_u64(0));
        let grad: Vec<f64> = sample
            .labels()
            .iter()
            .map(|&l| if l { 0.5 } else { -0.5 })
            .collect();
        let mut g = c.benchmark_group("boost_tree");
        g.sample_size(10);
        g.bench_function(BenchmarkId::new(&name, format!("fold1/{preset}")), |b| {
            b.iter(|| tree.fit(&split.db, &bk, black_box(&sample), &grad, None))
        });
        g.finish();

        let params = SoftRfgbParams {
            negative_sampling: NegativeSampling::PerTree(ratio),
            tree: tree.clone(),
            ..SoftRfgbParams::default()
        };
        let mut g = c.benchmark_group("boost_rfgb");
        g.sample_size(10);
        let id = format!("fold1/trees={}/neg={ratio}/{preset}", params.n_trees);
        g.bench_function(BenchmarkId::new(&name, id), |b| {
            b.iter(|| {
                params.fit(
                    &split.db,
                    &bk,
                    black_box(&split.examples),
                    &mut ChaCha8Rng::seed_from_u64(1),
                )
            })
        });
        g.finish();
    }
}

criterion_group!(benches, boost);
criterion_main!(benches);
