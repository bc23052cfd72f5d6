//! End-to-end tests of srl-learn on graphs from the Sen & Getoor generator.

#![allow(clippy::unwrap_used, clippy::needless_range_loop)]

use proptest::prelude::*;
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_graph::{KFold, NodeId, SenGetoorParams, SyntheticGraph};
use srl_infer::LoopyBp;
use srl_learn::{
    CostCliques, CostSensitiveMarkovNetwork, CostSensitiveMarkovNetworkParams, CsmnInference,
    GraphMarginals, PolishedMaxProduct, RelationalMarkovNetworkParams, expected_cost_decision,
};

fn data(rho: f64, seed: u64) -> (SyntheticGraph, Vec<bool>, Vec<Option<u32>>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let syn = SenGetoorParams {
        num_nodes: 150,
        rho,
        ..SenGetoorParams::default()
    }
    .generate(&mut rng)
    .unwrap();
    let split = KFold::random(150, 3, &mut rng).unwrap().split(0);
    let ev = split.observed_labels(&syn.graph).unwrap();
    (syn, split.train_mask(), ev)
}

fn accuracy(syn: &SyntheticGraph, train: &[bool], y: &[u32]) -> f64 {
    let test: Vec<usize> = (0..y.len()).filter(|&v| !train[v]).collect();
    let right = test
        .iter()
        .filter(|&&v| Some(y[v]) == syn.graph.labels()[v])
        .count();
    right as f64 / test.len() as f64
}

#[test]
fn same_seed_same_models_and_predictions() {
    let run = || {
        let (syn, train, ev) = data(0.9, 5);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let bp = LoopyBp::default();
        let m = CostSensitiveMarkovNetworkParams::default()
            .fit(&syn.graph, &syn.costs, &train, &bp, &mut rng)
            .unwrap();
        let p = m
            .predict(
                &syn.graph,
                &syn.costs,
                &ev,
                &CsmnInference::default(),
                &bp,
                &PolishedMaxProduct::default(),
                &mut rng,
            )
            .unwrap();
        (m, p)
    };
    let (a, pa) = run();
    let (b, pb) = run();
    assert_eq!(a, b);
    assert_eq!(pa, pb);
    // a saved model predicts the same after loading
    let back: CostSensitiveMarkovNetwork =
        serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert_eq!(back.layout(), a.layout());
}

#[test]
fn links_help_when_labels_are_correlated() {
    // rho = 1: every link joins two nodes of the same class; with the training labels
    // observed, the MN must beat its own attribute-only (independent) marginals.
    let (syn, train, ev) = data(1.0, 9);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let bp = LoopyBp::default();
    let mn = RelationalMarkovNetworkParams::default()
        .fit(&syn.graph, &train, &bp, &mut rng)
        .unwrap();
    assert!(mn.report().converged, "{:?}", mn.report());
    let mu = mn.marginals(&syn.graph, &ev, &bp, &mut rng).unwrap();
    let map = PolishedMaxProduct::default();
    let mn_dec = expected_cost_decision(
        &syn.graph,
        &syn.costs,
        &ev,
        &mu,
        CostCliques::NodesAndEdges,
        &map,
        &mut rng,
    )
    .unwrap();
    // edge weights favour equal labels
    let e = &mn.weights()[mn.layout().edge_offset()..];
    assert!(e[0] > e[1] && e[3] > e[1], "{e:?}");
    // the same node potentials without edges
    let k = 2;
    let scores = mn.layout().node_scores(&syn.graph, mn.weights());
    let mut node = vec![0.0; 150 * k];
    for v in 0..150 {
        let z = (scores[v * k].exp() + scores[v * k + 1].exp()).ln();
        for a in 0..k {
            node[v * k + a] = (scores[v * k + a] - z).exp();
        }
    }
    let iid = GraphMarginals::independent(&syn.graph, node).unwrap();
    let iid_dec = expected_cost_decision(
        &syn.graph,
        &syn.costs,
        &ev,
        &iid,
        CostCliques::NodesOnly,
        &map,
        &mut rng,
    )
    .unwrap();
    let (a_mn, a_iid) = (
        accuracy(&syn, &train, &mn_dec.labels),
        accuracy(&syn, &train, &iid_dec.labels),
    );
    assert!(a_mn > a_iid + 0.1, "MN {a_mn} vs independent {a_iid}");
    for v in 0..150 {
        if train[v] {
            assert_eq!(Some(mn_dec.labels[v]), syn.graph.labels()[v]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    /// MN marginals are distributions and observed nodes are one-hot, for any seed.
    #[test]
    fn marginals_are_distributions(seed in 0u64..1000) {
        let (syn, train, ev) = data(0.8, seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let bp = LoopyBp::default();
        let mn = RelationalMarkovNetworkParams { max_iters: 5, ..Default::default() }
            .fit(&syn.graph, &train, &bp, &mut rng)
            .unwrap();
        let mu = mn.marginals(&syn.graph, &ev, &bp, &mut rng).unwrap();
        for v in 0..150 {
            let p = mu.node(NodeId::new(v));
            prop_assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
            if let Some(l) = ev[v] {
                prop_assert_eq!(p[l as usize], 1.0);
            }
        }
        for e in 0..syn.graph.num_edges() {
            let t = mu.edge(srl_graph::EdgeId::new(e));
            prop_assert!((t.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        }
    }
}
