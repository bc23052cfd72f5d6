//! Distributed synchronous ICA gives the same labels for 1, 2 and 4 workers and both
//! partitions, equal to a single-process synchronous ICA written here from srl-infer's
//! public pieces (the classifier trained once by `fit_relational_classifier`).

use std::sync::Arc;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_dist::{DistIca, Partition, barabasi_albert};
use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};
use srl_infer::{
    Aggregator, FeatureRow, LocalClassifier, aggregate_neighbors, fit_relational_classifier,
};

/// Class frequencies times `1 + 2 · (neighbour count of the class)`, normalised.
#[derive(Clone, Debug, Default)]
struct Votes {
    prior: Vec<f64>,
}

#[derive(Debug, thiserror::Error)]
#[error("no rows")]
struct NoRows;

impl LocalClassifier for Votes {
    type Error = NoRows;
    fn fit(
        &mut self,
        rows: &[FeatureRow<'_>],
        labels: &[u32],
        _: Option<&[f64]>,
        k: usize,
    ) -> Result<(), NoRows> {
        if rows.is_empty() {
            return Err(NoRows);
        }
        self.prior = vec![1.0; k];
        labels.iter().for_each(|&c| self.prior[c as usize] += 1.0);
        Ok(())
    }
    fn predict_proba(&self, row: &FeatureRow<'_>, out: &mut [f64]) {
        for (c, o) in out.iter_mut().enumerate() {
            *o = self.prior[c] * (1.0 + 2.0 * row.relational.get(c).copied().unwrap_or(0.0));
        }
        let z: f64 = out.iter().sum();
        out.iter_mut().for_each(|o| *o /= z);
    }
}

fn argmax(x: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        if v > x[best] {
            best = i;
        }
    }
    best
}

/// Synchronous ICA on one process: bootstrap from observed labels, then every unknown
/// node reclassified from the previous iteration's labels until nothing changes.
fn jacobi_ica(
    g: &RelationalGraph,
    c: &Votes,
    agg: Aggregator,
    max_iters: usize,
) -> (Vec<u32>, usize) {
    let k = g.num_labels();
    let observed = g.labels();
    let unknown: Vec<usize> = (0..g.num_nodes())
        .filter(|&v| observed[v].is_none())
        .collect();
    let (mut buf, mut p) = (vec![0.0; k], vec![0.0; k]);
    let mut predict = |v: usize, labels: &[Option<u32>]| {
        aggregate_neighbors(agg, g, v, labels, &mut buf);
        let row = FeatureRow {
            attributes: g.attributes_of(NodeId::new(v)),
            num_attributes: g.num_features(),
            relational: &buf,
        };
        c.predict_proba(&row, &mut p);
        argmax(&p) as u32
    };
    let mut labels = observed.to_vec();
    let boot: Vec<u32> = unknown.iter().map(|&v| predict(v, observed)).collect();
    for (&v, &l) in unknown.iter().zip(&boot) {
        labels[v] = Some(l);
    }
    let mut iters = 0;
    while iters < max_iters {
        let next: Vec<u32> = unknown.iter().map(|&v| predict(v, &labels)).collect();
        let mut changed = 0;
        for (&v, &l) in unknown.iter().zip(&next) {
            if labels[v] != Some(l) {
                changed += 1;
                labels[v] = Some(l);
            }
        }
        iters += 1;
        if changed == 0 {
            break;
        }
    }
    (labels.iter().map(|l| l.unwrap_or(0)).collect(), iters)
}

#[test]
fn synchronous_ica_labels_are_identical_for_1_2_4_workers() {
    let n = 400;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let edges: Vec<(NodeId, NodeId)> = barabasi_albert(n, 2, &mut rng)
        .into_iter()
        .map(|(a, b)| (NodeId::new(a as usize), NodeId::new(b as usize)))
        .collect();
    let labels: Vec<Option<u32>> = (0..n)
        .map(|v| (rng.random_range(0.0..1.0) < 0.3).then_some(u32::from(v % 5 < 2)))
        .collect();
    let g = RelationalGraph::new(
        Vec::new(),
        Attributes::none(n),
        labels,
        LabelSet::numbered(2),
        edges,
        Directedness::Undirected,
    )
    .expect("graph");
    let fitted =
        fit_relational_classifier(&g, &Votes::default(), Aggregator::Count, None).expect("fit");
    let (want, iters) = jacobi_ica(&g, &fitted, Aggregator::Count, 50);
    assert!(
        iters > 1,
        "the test graph should need more than one iteration"
    );
    let (g, fitted) = (Arc::new(g), Arc::new(fitted));
    for workers in [1, 2, 4] {
        for partition in [Partition::Range, Partition::Hash] {
            let got = DistIca {
                max_iters: 50,
                aggregator: Aggregator::Count,
                partition,
            }
            .run_threads(Arc::clone(&g), Arc::clone(&fitted), workers)
            .expect("ica");
            assert_eq!(got.convergence().iterations, iters);
            let labels: Vec<u32> = (0..n).map(|v| got.label(v).expect("held")).collect();
            assert_eq!(labels, want, "{workers} workers, {partition:?}");
        }
    }
}
