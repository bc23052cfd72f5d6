//! Collective classification of Cora (Sen et al. 2008): hold out half of the labels, then
//! content only (CO), the iterative classification algorithm (ICA) and collective Gibbs
//! sampling (GS) with logistic regression as the local classifier, and their accuracy on
//! the held-out nodes. Without Cora under `$SRL_DATA_DIR` it runs on a synthetic
//! homophilous graph instead.
//!
//! `cargo run --release -p srl-infer --example collective`
#![allow(clippy::print_stdout)]

use rand::SeedableRng as _;
use srl_graph::{HoldOut, HomophilyParams, LinqsOptions, load_linqs};
use srl_infer::{CollectiveGibbs, ContentOnly, IterativeClassification};
use srl_learn::LocalLogisticRegression;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let dir =
        std::path::PathBuf::from(std::env::var("SRL_DATA_DIR").unwrap_or_default()).join("cora");
    let graph = if dir.exists() {
        load_linqs(&dir, "cora", &LinqsOptions::default())?.0
    } else {
        println!(
            "Cora skipped, looked at {}; using a synthetic graph",
            dir.display()
        );
        HomophilyParams {
            num_nodes: 500,
            ..HomophilyParams::default()
        }
        .generate(&mut rng)?
    };
    let held_out = HoldOut::random(&graph, 0.5, &mut rng)?;
    let (observed, lr) = (held_out.observed(), LocalLogisticRegression::default());
    let co = ContentOnly.run(observed, &lr, None)?;
    let ica = IterativeClassification::default().run(observed, &lr, None, &mut rng)?;
    let gibbs = CollectiveGibbs {
        burn_in: 50,
        samples: 200,
        ..Default::default()
    };
    let gs = gibbs.run(observed, &lr, None, &mut rng)?;
    for (name, r) in [("CO", co), ("ICA", ica), ("GS", gs)] {
        println!(
            "{name:>3}: accuracy {:.4}",
            r.accuracy_on(&held_out)?.unwrap_or(f64::NAN)
        );
    }
    Ok(())
}
