//! Learns a boosted MLN (MLN-Boost, Khot et al. 2011) for UW-CSE `advisedby` on fold 1,
//! prints its weighted clauses in Alchemy's syntax and the mean test probability of the
//! positive and negative atoms. Data from `$SRL_DATA_DIR` (default `/work/shared/data`).
//!
//! `cargo run --release -p srl-boost --example mln_boost`
#![allow(clippy::print_stdout)]

use rand::SeedableRng as _;
use srl_boost::{MlnBoostParams, OtherTargets, load_split, read_background};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::var_os("SRL_DATA_DIR")
        .map_or_else(|| "/work/shared/data".into(), std::path::PathBuf::from)
        .join("boostsrl_uwcse");
    let bk = read_background(&root.join("background.txt"))?;
    let split = |prefix: &str| {
        load_split(
            &root.join("fold1").join(prefix),
            prefix,
            "advisedby",
            &bk,
            OtherTargets::PositivesAsFacts,
        )
    };
    let (train, test) = (split("train")?, split("test")?);
    let t = std::time::Instant::now();
    let model = MlnBoostParams::default().fit(
        &train.db,
        &bk,
        &train.examples,
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(1),
    )?;
    let secs = t.elapsed().as_secs_f64();
    println!("{model}");
    let p = model.predict_proba(&test.db, &test.examples)?;
    let mean = |want: bool| {
        let v: Vec<f64> = p
            .iter()
            .zip(test.examples.labels())
            .filter(|(_, y)| **y == want)
            .map(|(p, _)| *p)
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    println!(
        "// learned in {secs:.3} s; mean test P: positives {:.3}, negatives {:.3}",
        mean(true),
        mean(false)
    );
    Ok(())
}
