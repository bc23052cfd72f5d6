//! Criterion benches for srl-boost: one relational regression tree and 10-tree RFGB per
//! BoostSRL domain (fold 1), plus the loader.
//!
//! Data is read from `$SRL_DATA_DIR` (default `/work/shared/data`); a domain whose folder
//! is absent is skipped. Run with short settings, e.g.
//! `cargo bench -p srl-benches --bench boost -- --warm-up-time 1 --measurement-time 3`.
//! Benchmark ids: `boost_tree/<domain>_<target>/fold1`,
//! `boost_rfgb/<domain>_<target>/fold1/trees=10/neg=<ratio>`.

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

/// (folder, target, training negative ratio for the boosting bench; None = all)
const DOMAINS: [(&str, &str, Option<f64>); 3] = [
    ("boostsrl_webkb", "faculty", Some(2.0)),
    ("boostsrl_uwcse", "advisedby", Some(2.0)),
    ("boostsrl_cora", "samebib", Some(2.0)),
];

fn boost(c: &mut Criterion) {
    for (folder, target, ratio) in DOMAINS {
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

        // One tree on the RFGB gradients at ψ = 0 (I − 0.5), over the sampled examples.
        let sample = match ratio {
            Some(r) => split
                .examples
                .subsample_negatives(r, &mut ChaCha8Rng::seed_from_u64(0)),
            None => split.examples.clone(),
        };
        let grad: Vec<f64> = sample
            .labels()
            .iter()
            .map(|&l| if l { 0.5 } else { -0.5 })
            .collect();
        let mut g = c.benchmark_group("boost_tree");
        g.sample_size(10);
        g.bench_function(BenchmarkId::new(&name, "fold1"), |b| {
            b.iter(|| TreeParams::default().fit(&split.db, &bk, black_box(&sample), &grad, None))
        });
        g.finish();

        let params = SoftRfgbParams {
            negative_sampling: ratio.map_or(NegativeSampling::All, NegativeSampling::Ratio),
            ..SoftRfgbParams::default()
        };
        let mut g = c.benchmark_group("boost_rfgb");
        g.sample_size(10);
        let id = format!(
            "fold1/trees={}/neg={}",
            params.n_trees,
            ratio.map_or("all".to_owned(), |r| r.to_string())
        );
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
