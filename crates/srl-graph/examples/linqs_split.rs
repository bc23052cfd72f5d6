//! Loads Cora (LINQS `.content` / `.cites`) and splits its nodes three ways: a random
//! hold-out of half the labels (what a collective classifier is run on), 10 random folds,
//! and 10 class-stratified snowball samples (Sen et al. 2008, "Sampling"). Reads
//! `$SRL_DATA_DIR/cora`; without it, prints "skipped" and exits 0.
//!
//! `cargo run --release -p srl-graph --example linqs_split`
#![allow(clippy::print_stdout)]

use rand::SeedableRng as _;
use srl_graph::{HoldOut, KFold, LinqsOptions, load_linqs, stratified_snowball_splits};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir =
        std::path::PathBuf::from(std::env::var("SRL_DATA_DIR").unwrap_or_default()).join("cora");
    if !dir.exists() {
        println!("skipped, looked at {}", dir.display());
        return Ok(());
    }
    let (graph, report) = load_linqs(&dir, "cora", &LinqsOptions::default())?;
    let (_, components) = graph.connected_components();
    println!(
        "{} nodes, {} edges, {} words, {} labels, {components} components, homophily {:.3} ({report:?})",
        graph.num_nodes(),
        graph.num_edges(),
        graph.num_features(),
        graph.num_labels(),
        graph.homophily().unwrap_or(f64::NAN),
    );
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let held_out = HoldOut::random(&graph, 0.5, &mut rng)?;
    let observed = held_out.observed().labels().iter().flatten().count();
    println!(
        "hold-out: {} nodes held out, {observed} labels observed",
        held_out.nodes().len()
    );
    let folds = KFold::random(graph.num_nodes(), 10, &mut rng)?;
    let sizes: Vec<usize> = folds.splits().map(|s| s.num_test()).collect();
    println!("10 random folds of sizes {sizes:?}");
    let snowballs = stratified_snowball_splits(&graph, 10, &mut rng)?;
    let first = &snowballs[0];
    let (within, _) = first.test_nodes().iter().fold((0, 0), |(w, t), &v| {
        let n = graph.neighbors(v);
        (
            w + n.iter().filter(|u| first.test_mask()[u.index()]).count(),
            t + n.len(),
        )
    });
    println!(
        "snowball 0: {} nodes, {within} edge ends inside the sample",
        first.num_test()
    );
    Ok(())
}
