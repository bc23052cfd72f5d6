//! Robust trimming of a Bayesian network classifier by names (Choi & Van den Broeck,
//! IJCAI 2018): the classifier `Pr(lung = yes | features) ≥ 0.5` on the Asia network, the
//! feature subset of total cost at most 2 that agrees best with it (ECA), and the new
//! threshold. Reads `$SRL_DATA_DIR/bnlearn_bif/asia.bif.gz`; without it, prints
//! "skipped" and exits 0.
//!
//! `cargo run --release -p srl-bayes --example trim_by_name`
#![allow(clippy::print_stdout)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::path::PathBuf::from(std::env::var("SRL_DATA_DIR").unwrap_or_default())
        .join("bnlearn_bif/asia.bif.gz");
    if !path.exists() {
        println!("skipped, looked at {}", path.display());
        return Ok(());
    }
    let net = srl_bayes::io::read_bif(&path)?;
    let t = net
        .trim("lung", "yes")
        .features(["smoke", "xray", "dysp", "asia"])
        .threshold(0.5)
        .budget(2.0)
        .run()?;
    println!(
        "keep {:?} (cost {}), threshold {:.4}, ECA {:.4}, {} evaluations",
        t.features,
        t.cost,
        t.trimming.threshold,
        t.trimming.eca,
        t.trimming.evaluations()
    );
    Ok(())
}
