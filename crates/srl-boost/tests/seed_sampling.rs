//! BoostSRL's seed-based candidate sampling (`TreeParams::seed_sampling`): off, srl
//! scores every candidate test; on, only tests that one of a few random seed examples of
//! the node satisfies, as BoostSRL's ILP inner loop does.

use std::path::{Path, PathBuf};

use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_boost::{
    OtherTargets, SeedSampling, SoftRfgb, SoftRfgbParams, TreeNode, load_split, read_background,
};

fn tiny() -> (srl_boost::Background, srl_boost::Split) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny");
    let bk = read_background(&dir.join("background.txt")).expect("bk");
    let split = load_split(
        &dir.join("train"),
        "train",
        "advisedby",
        &bk,
        OtherTargets::PositivesAsFacts,
    )
    .expect("split");
    (bk, split)
}

fn fit(
    bk: &srl_boost::Background,
    split: &srl_boost::Split,
    sampling: Option<usize>,
    seed: u64,
) -> SoftRfgb {
    let mut p = SoftRfgbParams::default();
    p.tree.min_leaf_examples = 1;
    p.tree.seed_sampling = sampling.map(|seeds| SeedSampling { seeds, seed: 0 });
    p.fit(
        &split.db,
        bk,
        &split.examples,
        &mut ChaCha8Rng::seed_from_u64(seed),
    )
    .expect("fit")
}

#[test]
fn seeds_covering_every_example_change_nothing() {
    // every example a seed: a test no seed satisfies covers no example, and such a test
    // is never a split, so the trees are the exhaustive search's
    let (bk, split) = tiny();
    let plain = fit(&bk, &split, None, 3);
    let all = fit(&bk, &split, Some(100_000), 3);
    assert_eq!(plain.trees(), all.trees());
}

#[test]
fn seed_sampling_is_seeded_and_restricts_the_search() {
    let (bk, split) = tiny();
    let a = fit(&bk, &split, Some(1), 5);
    let b = fit(&bk, &split, Some(1), 5);
    assert_eq!(a.trees(), b.trees(), "same seed, same trees");
    // one seed per node: some fits must miss the exhaustive search's trees
    let plain = fit(&bk, &split, None, 5);
    let differ = (0..20)
        .filter(|&s| fit(&bk, &split, Some(1), s).trees() != fit(&bk, &split, None, s).trees())
        .count();
    assert!(differ > 0, "one seed per node never changed a tree");
    let _ = plain;
    // the same on a 2-thread pool
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    let c = pool.install(|| fit(&bk, &split, Some(1), 5));
    assert_eq!(a.trees(), c.trees());
    let mut bad = SoftRfgbParams::default();
    bad.tree.seed_sampling = Some(SeedSampling { seeds: 0, seed: 0 });
    assert!(
        bad.fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0)
        )
        .is_err()
    );
}

/// UW-CSE fold 1 `advisedby`: BoostSRL's first tree has the root `professor(B)`
/// (`java -jar BoostSRL.jar -l -train train/ -target advisedby -trees 10`, srlearn 0.5.5),
/// srl's with seed 1 `hasposition(B, faculty)`. The two roots score almost alike, and which
/// one wins depends on the negatives drawn for the tree (seeds 6 and 8 of
/// `srl boost learn --seed` give `professor(B)` with or without seed sampling); the seeds
/// of the candidate search change the nodes below.
#[test]
fn uwcse_seed_sampling_changes_trees_not_the_negatives() {
    let dir = std::env::var_os("SRL_DATA_DIR")
        .map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
        .join("boostsrl_uwcse");
    if !dir.is_dir() {
        eprintln!("skipped: looked for {}", dir.display());
        return;
    }
    let bk = read_background(&dir.join("background.txt")).expect("bk");
    let train = load_split(
        &dir.join("fold1/train"),
        "train",
        "advisedby",
        &bk,
        OtherTargets::PositivesAsFacts,
    )
    .expect("train");
    let root = |m: &SoftRfgb| match &m.trees()[0].nodes()[0] {
        TreeNode::Split { test, .. } => test
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        TreeNode::Leaf { .. } => String::new(),
    };
    let fit = |sampling: Option<usize>, seed: u64| {
        let mut p = SoftRfgbParams::default();
        p.tree.seed_sampling = sampling.map(|seeds| SeedSampling { seeds, seed: 0 });
        p.fit(
            &train.db,
            &bk,
            &train.examples,
            &mut ChaCha8Rng::seed_from_u64(seed),
        )
        .expect("fit")
    };
    let mut roots = std::collections::BTreeSet::new();
    let mut differ = 0;
    for seed in 1..=8 {
        let (a, b) = (fit(None, seed), fit(Some(10), seed));
        // the same negatives: the sampled candidate search keeps the tree sets
        assert_eq!(a.tree_sets(), b.tree_sets());
        roots.insert(root(&a));
        differ += usize::from(a.trees() != b.trees());
    }
    assert!(
        roots.contains("professor(B)") && roots.contains("hasposition(B, faculty)"),
        "{roots:?}"
    );
    eprintln!("{differ} of 8 seeds: sampled search changed the model; roots {roots:?}");
    assert!(differ > 0, "ten seeds per node never changed a model");
}
