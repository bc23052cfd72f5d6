//! Criterion benches for MLN-Boost (Khot et al. 2011, tree-based, `MlnBoostParams`):
//! 10 trees on IMDB `workedUnder` and UW-CSE `advisedby`, fold 1, BoostSRL's settings
//! (`TreeParams::boostsrl`, ψ₀ = −1.8, negatives 2:1 drawn afresh per tree), beside RFGB
//! (RDN boosting) with the very same settings on the same data, so the cost of counting
//! true groundings shows as the difference.
//!
//! Data is read from `$SRL_DATA_DIR` (default `/work/shared/data`); an absent domain is
//! skipped. Run e.g. `cargo bench -p srl-benches --bench mln_boost -- --warm-up-time 1
//! --measurement-time 5`. Benchmark ids: `mln_boost/<domain>_<target>/fold1/trees=10`,
//! `mln_boost_rfgb/<domain>_<target>/fold1/trees=10`.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_boost::{Background, MlnBoostParams, OtherTargets, Split, load_split, read_background};

fn data_dir() -> PathBuf {
    std::env::var_os("SRL_DATA_DIR")
        .map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
}

#[allow(clippy::print_stderr)]
fn skip(what: &str) {
    eprintln!("{what}: skipping");
}

/// (name, background file, fold-1 training folder, target), relative to the data dir.
const DOMAINS: [(&str, &str, &str, &str); 2] = [
    (
        "imdb_workedunder",
        "boostsrl_imdb/workedunder_5fold/Fold1/imdb_bk.txt",
        "boostsrl_imdb/workedunder_5fold/Fold1/train",
        "workedUnder",
    ),
    (
        "uwcse_advisedby",
        "boostsrl_uwcse/background.txt",
        "boostsrl_uwcse/fold1/train",
        "advisedby",
    ),
];

fn load(bk: &Path, train: &Path, target: &str) -> Option<(Background, Split)> {
    let bk = read_background(bk).ok()?;
    let split = load_split(train, "train", target, &bk, OtherTargets::PositivesAsFacts).ok()?;
    Some((bk, split))
}

fn mln_boost(c: &mut Criterion) {
    let root = data_dir();
    for (name, bk, train, target) in DOMAINS {
        let Some((bk, split)) = load(&root.join(bk), &root.join(train), target) else {
            skip(&root.join(train).display().to_string());
            continue;
        };
        let params = MlnBoostParams::default();
        let id = format!("fold1/trees={}", params.n_trees);
        let mut g = c.benchmark_group("mln_boost");
        g.sample_size(10);
        g.bench_function(BenchmarkId::new(name, &id), |b| {
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
        let rfgb = params.as_rfgb();
        let mut g = c.benchmark_group("mln_boost_rfgb");
        g.sample_size(10);
        g.bench_function(BenchmarkId::new(name, &id), |b| {
            b.iter(|| {
                rfgb.fit(
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

criterion_group!(benches, mln_boost);
criterion_main!(benches);
