//! LOGREG and CSMN (Sen & Getoor 2006) on one seeded synthetic graph of their generator:
//! a third of the labels held out, logistic regression on the node attributes against the
//! cost-sensitive Markov network with the observed labels as evidence, scored by accuracy
//! and by the structured misclassification cost on the held-out nodes.
//!
//! `cargo run --release -p srl-learn --example sen_getoor`
#![allow(clippy::print_stdout)]

use rand::SeedableRng as _;
use srl_graph::{HoldOut, SenGetoorParams};
use srl_infer::LoopyBp;
use srl_learn::PolishedMaxProduct;
use srl_learn::{CostSensitiveMarkovNetworkParams, CsmnInference, LogisticRegressionParams};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let syn = SenGetoorParams {
        num_nodes: 300,
        ..SenGetoorParams::default()
    }
    .generate(&mut rng)?;
    let (graph, costs) = (&syn.graph, &syn.costs);
    let held_out = HoldOut::random(graph, 1.0 / 3.0, &mut rng)?;
    let observed = held_out.observed();
    let train = held_out.split().train_mask();
    // LOGREG: attributes only.
    let rows: Vec<_> = observed
        .nodes()
        .filter(|&v| train[v.index()])
        .map(|v| graph.attributes_of(v))
        .collect();
    let y: Vec<u32> = observed.labels().iter().flatten().copied().collect();
    let lr = LogisticRegressionParams::default().fit_rows(
        &rows,
        graph.num_features(),
        &y,
        graph.num_labels(),
        None,
    )?;
    let lr_labels: Vec<u32> = graph
        .nodes()
        .map(|v| lr.predict(graph.attributes_of(v)))
        .collect();
    // CSMN: trained on the observed nodes, predicting with their labels as evidence.
    let bp = LoopyBp::default();
    let csmn =
        CostSensitiveMarkovNetworkParams::default().fit(graph, costs, &train, &bp, &mut rng)?;
    let pred = csmn.predict(
        graph,
        costs,
        observed.labels(),
        &CsmnInference::default(),
        &bp,
        &PolishedMaxProduct::default(),
        &mut rng,
    )?;
    let truth: Vec<u32> = graph.labels().iter().map(|l| l.unwrap_or(0)).collect();
    let test = held_out.split().test_mask();
    for (name, labels) in [("LOGREG", &lr_labels), ("CSMN", &pred.labels)] {
        let cost = costs.misclassification_cost(graph, labels, &truth, Some(test))?;
        println!(
            "{name:>6}: accuracy {:.3}, misclassification cost {:.1}",
            held_out.accuracy(labels)?.unwrap_or(f64::NAN),
            cost.total()
        );
    }
    Ok(())
}
