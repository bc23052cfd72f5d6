//! Writes a BIF (`.bif`, `.bif.gz`) or Hugin NET network as a UAI `MARKOV` factor graph
//! (one factor per CPT, `FactorGraph::write_uai_to`), so that the same model can be run
//! by srl's factor-graph inference and by libDAI, merlin or PGMax:
//!
//! ```text
//! cargo run --release -p srl-bayes --example network_to_uai -- NETWORK.bif.gz OUT.uai
//! ```
//!
//! An existing `OUT.uai` is refused; the file is written to a temporary name first and
//! renamed, so an interrupted run leaves nothing behind.

#![allow(clippy::print_stdout)]

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        return Err("usage: network_to_uai NETWORK.bif[.gz]|NETWORK.net OUT.uai".into());
    };
    let out = Path::new(output);
    if out.exists() {
        return Err(format!("{output} exists; not overwritten").into());
    }
    if Path::new(input) == out {
        return Err("the output is the input".into());
    }
    let (_net, g) = srl_bayes::factor_graph::read_network_factor_graph(Path::new(input))?;
    let tmp = out.with_extension("uai.partial");
    g.write_uai_to(std::fs::File::create(&tmp)?)?;
    std::fs::rename(&tmp, out)?;
    let edges: usize = g.factors().iter().map(|f| f.vars.len()).sum();
    println!(
        "{input}: {} variables, {} factors, {edges} factor-variable edges, largest table {} entries -> {output}",
        g.num_vars(),
        g.factors().len(),
        g.tables().iter().map(Vec::len).max().unwrap_or(0)
    );
    Ok(())
}
