//! Times one 10-tree RFGB fit on Cora `samebib` fold 1 under the BoostSRL preset with
//! bridgers (`author/2`, `title/2`, `venue/2`) and under the two-literal setting.
//! Data from `$SRL_DATA_DIR` (default `/work/shared/data`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use rand::SeedableRng as _;
use srl_boost::{OtherTargets, SoftRfgbParams, TreeParams, load_split, read_background};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::var_os("SRL_DATA_DIR")
        .map_or_else(|| "/work/shared/data".into(), std::path::PathBuf::from)
        .join("boostsrl_cora");
    let mut bk = read_background(&root.join("background.txt"))?;
    let train = load_split(
        &root.join("fold1/train"),
        "train",
        "samebib",
        &bk,
        OtherTargets::PositivesAsFacts,
    )?;
    let two = SoftRfgbParams {
        tree: TreeParams::two_literal(),
        ..SoftRfgbParams::default()
    };
    let t = std::time::Instant::now();
    let m = two.fit(
        &train.db,
        &bk,
        &train.examples,
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(1),
    )?;
    println!(
        "two-literal: {:.2} s, {} trees",
        t.elapsed().as_secs_f64(),
        m.trees().len()
    );
    bk.bridgers
        .extend(["author/2", "title/2", "venue/2"].map(String::from));
    let t = std::time::Instant::now();
    let m = SoftRfgbParams::default().fit(
        &train.db,
        &bk,
        &train.examples,
        &mut rand_chacha::ChaCha8Rng::seed_from_u64(1),
    )?;
    println!("boostsrl + bridgers: {:.2} s", t.elapsed().as_secs_f64());
    println!("{}", m.trees()[0]);
    Ok(())
}
