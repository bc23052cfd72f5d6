//! The Rust side of the Python parity test (`tests/test_boost.py::test_imdb_fold1_matches_rust`):
//! RFGB on IMDB `workedunder` fold 1 through the srl-boost API alone (no bindings), with
//! the settings `srl.BoostedRDN(target="workedunder")` uses by default: BoostSRL tree
//! preset, the background's `setParam:` lines, 10 trees, negatives 2:1 drawn afresh per
//! tree from ChaCha8 seeded 1. Prints the test probabilities (shortest round-trip decimal, as Python's `repr`).
//!
//! ```sh
//! cargo run -p srl-py --example imdb_boost_probs -- /work/shared/data/boostsrl_imdb/workedunder_5fold/Fold1
//! ```

use std::path::{Path, PathBuf};

use rand::SeedableRng as _;
use srl_boost::{Background, OtherTargets, SoftRfgbParams, TreeParams};

fn background(dir: &Path, prefix: &str) -> Result<Background, srl_boost::BoostError> {
    let p = dir.join(format!("{prefix}_bk.txt"));
    if p.is_file() {
        srl_boost::read_background(&p)
    } else {
        Ok(Background::default())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fold: PathBuf = std::env::args()
        .nth(1)
        .ok_or("usage: imdb_boost_probs FOLD_DIR (holding train/ and test/)")?
        .into();
    let (train, test) = (fold.join("train"), fold.join("test"));
    let bk = background(&train, "train")?;
    let mut params = SoftRfgbParams {
        tree: TreeParams::boostsrl(),
        ..SoftRfgbParams::default()
    };
    params.apply_settings(&bk);
    params.apply_background_settings = false;
    params.n_trees = 10;
    let split = srl_boost::load_split(
        &train,
        "train",
        "workedunder",
        &bk,
        OtherTargets::PositivesAsFacts,
    )?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let model = params.fit(&split.db, &bk, &split.examples, &mut rng)?;
    let tbk = background(&test, "test")?;
    let ts = srl_boost::load_split(
        &test,
        "test",
        "workedunder",
        &tbk,
        OtherTargets::PositivesAsFacts,
    )?;
    let p = model.predict_proba(&ts.db, &ts.examples)?;
    // `{:?}` is the shortest text that reads back to the same f64, as Python's repr.
    let text: Vec<String> = p.iter().map(|x| format!("{x:?}")).collect();
    #[allow(clippy::print_stdout)]
    {
        println!("n = {}", p.len());
        println!("probs = [{}]", text.join(", "));
    }
    Ok(())
}
