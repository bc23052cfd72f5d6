//! The graph learners and the classic methods under the sparse-label protocol of Shchur
//! et al. (2018) on a LINQS data set: mean ± standard deviation of the test accuracy over
//! the splits, and the wall time per method.
//!
//! `cargo run --release -p srl-learn --example graph_learners -- DATA_DIR NAME [SPLITS]
//! [METHOD...]`, e.g. `... -- /work/shared/data/cora cora 10 GCN LP`; `SRL_PROTOCOL=rs`
//! runs SPLITS-fold random sampling of the whole graph instead, `SRL_EPOCHS=N` caps the
//! neural methods' epochs at N.

use std::path::PathBuf;
use std::time::Instant;

use srl_graph::{LinqsOptions, load_linqs};
use srl_learn::collective::{
    CollectiveMethod, CollectiveSettings, Protocol, evaluate_splits, largest_component,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        return Err("usage: graph_learners DATA_DIR NAME [SPLITS] [METHOD...]".into());
    }
    let (graph, _) = load_linqs(&PathBuf::from(&args[0]), &args[1], &LinqsOptions::default())?;
    let (lcc, _) = largest_component(&graph)?;
    let splits: usize = args.get(2).map_or(Ok(10), |s| s.parse())?;
    let methods: Vec<CollectiveMethod> = if args.len() > 3 {
        args[3..]
            .iter()
            .map(|m| m.parse())
            .collect::<Result<_, _>>()?
    } else {
        CollectiveMethod::GRAPH_LEARNERS.to_vec()
    };
    // SRL_PROTOCOL=rs: `splits`-fold random sampling of the whole graph instead.
    let rs = std::env::var("SRL_PROTOCOL").is_ok_and(|p| p == "rs");
    let (protocol, lcc) = if rs {
        (Protocol::RandomFolds { k: splits }, graph)
    } else {
        (
            Protocol::Sparse {
                train_per_class: 20,
                validation_per_class: 30,
                splits,
            },
            lcc,
        )
    };
    let mut settings = CollectiveSettings::default();
    if let Ok(e) = std::env::var("SRL_EPOCHS") {
        let e: usize = e.parse()?;
        for p in [&mut settings.mlp, &mut settings.gcn, &mut settings.appnp] {
            p.max_epochs = e;
        }
    }
    let t0 = Instant::now();
    let res = evaluate_splits(
        &settings,
        &methods,
        &lcc,
        protocol.splits(&lcc, 20061001, 2)?,
        20061001,
    )?;
    let mut out = format!(
        "{} LCC: {} nodes; {splits} splits in {:.1} s\n",
        args[1],
        lcc.num_nodes(),
        t0.elapsed().as_secs_f64()
    );
    for (i, m) in res.methods.iter().enumerate() {
        let acc = &res.accuracy[i];
        let mean = acc.iter().sum::<f64>() / acc.len() as f64;
        let sd = (acc.iter().map(|a| (a - mean).powi(2)).sum::<f64>()
            / (acc.len().max(2) - 1) as f64)
            .sqrt();
        let secs = res.seconds[i].iter().sum::<f64>() / acc.len() as f64;
        let epochs = res.iterations[i].iter().sum::<usize>() as f64 / acc.len() as f64;
        out.push_str(&format!(
            "{:8} {:6.2} ± {:4.2}   {secs:7.3} s/split   {epochs:7.1} iterations\n",
            m.name(),
            100.0 * mean,
            100.0 * sd
        ));
    }
    std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes())?;
    Ok(())
}
