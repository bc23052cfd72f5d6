//! Integration tests of srl-infer: exact oracles, property tests, determinism, collective
//! classification with a tiny in-test local classifier.
#![allow(clippy::unwrap_used, clippy::needless_range_loop)]

use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};
use srl_infer::{
    Aggregator, Beliefs, Bootstrap, BpKernel, BpMode, CollectiveGibbs, Exact, FeatureRow, Gibbs,
    Icm, InferError, IterativeClassification, LocalClassifier, LoopyBp, MapInference,
    MarginalInference, Marginals, MeanField, MrfParts, NodeOrdering, PairTable, PairwiseMrf,
    Schedule, Sweep,
};

/// A random model on the given edges: cardinalities in `1..=max_k`, potentials uniform in
/// `[-s, s]`, each edge with its own table, optional random evidence.
fn random_model(
    rng: &mut ChaCha8Rng,
    n: usize,
    edges: Vec<(u32, u32)>,
    max_k: usize,
    s: f64,
    evidence: bool,
) -> PairwiseMrf {
    let ks: Vec<usize> = (0..n).map(|_| rng.random_range(1..=max_k)).collect();
    let total: usize = ks.iter().sum();
    let unary = (0..total).map(|_| rng.random_range(-s..=s)).collect();
    let tables = edges
        .iter()
        .map(|&(u, v)| {
            PairTable::from_fn(ks[u as usize], ks[v as usize], |_, _| {
                rng.random_range(-s..=s)
            })
        })
        .collect();
    let evidence = if evidence {
        ks.iter()
            .map(|&k| rng.random_bool(0.25).then(|| rng.random_range(0..k) as u32))
            .collect()
    } else {
        Vec::new()
    };
    PairwiseMrf::new(MrfParts {
        num_states: ks,
        unary,
        edge_tables: (0..edges.len() as u32).collect(),
        edges,
        tables,
        evidence,
    })
    .unwrap()
}

fn random_tree_edges(rng: &mut ChaCha8Rng, n: usize, forest: bool) -> Vec<(u32, u32)> {
    let mut edges = Vec::new();
    for i in 1..n {
        if forest && !rng.random_bool(0.8) {
            continue;
        }
        let p = rng.random_range(0..i) as u32;
        // Random orientation exercises transposed kernels.
        edges.push(if rng.random_bool(0.5) {
            (p, i as u32)
        } else {
            (i as u32, p)
        });
    }
    edges
}

fn random_loopy_edges(rng: &mut ChaCha8Rng, n: usize, extra: usize) -> Vec<(u32, u32)> {
    let mut edges = random_tree_edges(rng, n, false);
    for _ in 0..extra {
        let u = rng.random_range(0..n) as u32;
        let v = rng.random_range(0..n) as u32;
        if u != v {
            edges.push((u, v));
        }
    }
    edges
}

fn assert_close(a: &Marginals, b: &Marginals, mrf: &PairwiseMrf, tol: f64, edges: bool) {
    for v in 0..mrf.num_nodes() {
        for (x, y) in a.node(v).iter().zip(b.node(v)) {
            assert!(
                (x - y).abs() <= tol,
                "node {v}: {:?} vs {:?}",
                a.node(v),
                b.node(v)
            );
        }
    }
    if edges {
        for e in 0..mrf.num_edges() {
            let (ea, eb) = (a.edge(e).unwrap(), b.edge(e).unwrap());
            for (x, y) in ea.iter().zip(eb) {
                assert!((x - y).abs() <= tol, "edge {e}: {ea:?} vs {eb:?}");
            }
        }
    }
}

fn assert_rows_sum_to_one(m: &Marginals, mrf: &PairwiseMrf) {
    for v in 0..mrf.num_nodes() {
        let s: f64 = m.node(v).iter().sum();
        assert!((s - 1.0).abs() < 1e-9, "node {v} sums to {s}");
        let sl: f64 = m.node_log(v).iter().map(|x| x.exp()).sum();
        assert!((sl - 1.0).abs() < 1e-9, "node {v} log row sums to {sl}");
    }
    if m.has_edges() {
        for e in 0..mrf.num_edges() {
            let s: f64 = m.edge(e).unwrap().iter().sum();
            assert!((s - 1.0).abs() < 1e-9, "edge {e} sums to {s}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn lbp_is_exact_on_trees(seed in any::<u64>(), n in 1usize..12, forest in any::<bool>(),
                             evidence in any::<bool>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let edges = random_tree_edges(&mut rng, n, forest);
        let mrf = random_model(&mut rng, n, edges, 3, 2.0, evidence);
        let exact = Exact::default().marginals(&mrf).unwrap();
        let enumerated = Exact::default().enumerate_marginals(&mrf).unwrap();
        assert_close(&exact, &enumerated, &mrf, 1e-10, true);
        prop_assert!((exact.log_partition().unwrap() - enumerated.log_partition().unwrap()).abs() < 1e-9);
        for schedule in [Schedule::Flooding, Schedule::Sequential, Schedule::Residual] {
            let bp = LoopyBp { schedule, tol: 1e-13, max_iters: 200, ..LoopyBp::default() }.run(&mrf);
            prop_assert!(bp.convergence().converged, "{schedule:?} {:?}", bp.convergence());
            assert_close(&bp, &exact, &mrf, 1e-9, true);
            assert_rows_sum_to_one(&bp, &mrf);
            let map = LoopyBp { schedule, tol: 1e-13, max_iters: 200, ..LoopyBp::default() }.map(&mrf);
            let best = Exact::default().map(&mrf).unwrap();
            let brute = enumerate_map_score(&mrf);
            prop_assert!((best.log_score - brute).abs() < 1e-9);
            prop_assert!((map.log_score - brute).abs() < 1e-9, "{schedule:?}: {} vs {}", map.log_score, brute);
        }
    }

    #[test]
    fn approximate_marginals_are_normalised(seed in any::<u64>(), n in 2usize..9) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let edges = random_loopy_edges(&mut rng, n, n);
        let mrf = random_model(&mut rng, n, edges, 3, 1.5, true);
        assert_rows_sum_to_one(&LoopyBp::default().run(&mrf), &mrf);
        assert_rows_sum_to_one(&LoopyBp { mode: BpMode::MaxProduct, ..LoopyBp::default() }.run(&mrf), &mrf);
        assert_rows_sum_to_one(&LoopyBp { schedule: Schedule::Residual, damping: 0.3, ..LoopyBp::default() }.run(&mrf), &mrf);
        assert_rows_sum_to_one(&MeanField::default().run(&mrf), &mrf);
        assert_rows_sum_to_one(&Exact::default().marginals(&mrf).unwrap(), &mrf);
        let g = Gibbs { burn_in: 10, samples: 50, ..Gibbs::default() }.run(&mrf, &mut rng).unwrap();
        assert_rows_sum_to_one(&g.marginals, &mrf);
        // ICM reaches a local maximum: no single flip improves.
        let icm = Icm::default().run(&mrf);
        prop_assert!(icm.convergence.converged);
        let mut x = icm.states.clone();
        for v in 0..n {
            if mrf.evidence(v).is_some() { continue; }
            let keep = x[v];
            for s in 0..mrf.num_states(v) as u32 {
                x[v] = s;
                prop_assert!(mrf.log_score(&x) <= icm.log_score + 1e-12);
            }
            x[v] = keep;
        }
    }

    #[test]
    fn mean_field_reaches_its_fixed_point(seed in any::<u64>(), n in 2usize..10) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let edges = random_loopy_edges(&mut rng, n, n);
        let mrf = random_model(&mut rng, n, edges, 3, 1.0, true);
        let mf = MeanField { tol: 1e-12, max_iters: 5000, ..MeanField::default() }.run(&mrf);
        prop_assert!(mf.convergence().converged);
        prop_assert!(MeanField::fixed_point_violation(&mrf, &mf) < 1e-10);
    }
}

fn enumerate_map_score(mrf: &PairwiseMrf) -> f64 {
    let n = mrf.num_nodes();
    let mut x: Vec<u32> = (0..n)
        .map(|v| mrf.evidence(v).unwrap_or(0) as u32)
        .collect();
    let mut best = f64::NEG_INFINITY;
    loop {
        best = best.max(mrf.log_score(&x));
        let mut carry = true;
        for v in 0..n {
            if mrf.evidence(v).is_some() {
                continue;
            }
            x[v] += 1;
            if (x[v] as usize) < mrf.num_states(v) {
                carry = false;
                break;
            }
            x[v] = 0;
        }
        if carry {
            return best;
        }
    }
}

#[test]
fn gibbs_matches_exact_on_small_loopy_graphs() {
    // Fixed seeds, 8 random loopy models with up to 7 variables.
    for seed in 0..8u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(1000 + seed);
        let n = rng.random_range(3..=7);
        let edges = random_loopy_edges(&mut rng, n, 3);
        let mrf = random_model(&mut rng, n, edges, 3, 1.0, seed % 2 == 0);
        let exact = Exact::default().enumerate_marginals(&mrf).unwrap();
        let g = Gibbs {
            burn_in: 500,
            samples: 40_000,
            ..Gibbs::default()
        }
        .run(&mrf, &mut rng)
        .unwrap();
        assert_close(&g.marginals, &exact, &mrf, 0.02, true);
        assert!(g.marginals.convergence().converged);
        // The best visited state of a long chain on a tiny model is the MAP.
        let map = Exact::default().map(&mrf).unwrap();
        assert!((g.best.log_score - map.log_score).abs() < 1e-9);
    }
}

#[test]
fn same_seed_same_bits_and_thread_count_independence() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let n = 3000;
    let edges = random_loopy_edges(&mut rng, n, 2 * n);
    let mrf = random_model(&mut rng, n, edges, 4, 1.0, true);
    let pool = |t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };
    let bp = LoopyBp {
        max_iters: 15,
        damping: 0.2,
        ..LoopyBp::default()
    };
    let a = pool(1).install(|| bp.run(&mrf));
    let b = pool(3).install(|| bp.run(&mrf));
    assert_eq!(a, b);
    let mf = MeanField {
        sweep: Sweep::Parallel,
        damping: 0.5,
        max_iters: 10,
        ..MeanField::default()
    };
    assert_eq!(
        pool(1).install(|| mf.run(&mrf)),
        pool(3).install(|| mf.run(&mrf))
    );
    let gibbs = Gibbs {
        burn_in: 5,
        samples: 20,
        ..Gibbs::default()
    };
    let g1 = pool(1).install(|| gibbs.run(&mrf, &mut ChaCha8Rng::seed_from_u64(9)).unwrap());
    let g2 = pool(3).install(|| gibbs.run(&mrf, &mut ChaCha8Rng::seed_from_u64(9)).unwrap());
    assert_eq!(g1, g2);
    let g3 = gibbs.run(&mrf, &mut ChaCha8Rng::seed_from_u64(10)).unwrap();
    assert_ne!(g1.marginals, g3.marginals);
}

#[test]
fn non_convergence_is_reported() {
    // A frustrated triangle with strong antiferromagnetic couplings.
    let mrf = PairwiseMrf::new(MrfParts {
        num_states: vec![2; 3],
        unary: vec![0.1, 0.0, 0.0, 0.2, 0.3, 0.0],
        edges: vec![(0, 1), (1, 2), (2, 0)],
        edge_tables: vec![0; 3],
        tables: vec![PairTable::potts(2, -3.0, 0.0)],
        evidence: vec![],
    })
    .unwrap();
    for schedule in [Schedule::Flooding, Schedule::Sequential, Schedule::Residual] {
        let m = LoopyBp {
            max_iters: 2,
            tol: 1e-12,
            schedule,
            ..LoopyBp::default()
        }
        .run(&mrf);
        let c = m.convergence();
        assert!(!c.converged, "{schedule:?}");
        assert!(c.iterations <= 2);
        assert!(c.max_residual > 1e-12);
    }
    let mf = MeanField {
        max_iters: 1,
        tol: 1e-12,
        ..MeanField::default()
    }
    .run(&mrf);
    assert!(!mf.convergence().converged);
    assert_eq!(mf.convergence().iterations, 1);
}

#[test]
fn invalid_input_is_rejected_with_typed_errors() {
    let parts = MrfParts {
        num_states: vec![2, 2],
        unary: vec![0.0; 4],
        edges: vec![(0, 1)],
        edge_tables: vec![0],
        tables: vec![PairTable::new(2, 2, vec![0.0, f64::INFINITY, 0.0, 0.0])],
        evidence: vec![],
    };
    assert!(matches!(
        PairwiseMrf::new(parts.clone()),
        Err(InferError::NonFinite { index: 1, .. })
    ));
    let mut p = parts.clone();
    p.tables[0].log_values[1] = f64::NAN;
    assert!(matches!(
        PairwiseMrf::new(p),
        Err(InferError::NonFinite { index: 1, .. })
    ));
    // -∞ (a zero potential) is a hard constraint, accepted; huge finite values are not.
    let mut p = parts.clone();
    p.tables[0].log_values[1] = f64::NEG_INFINITY;
    assert!(PairwiseMrf::new(p).is_ok());
    let mut p = parts.clone();
    p.tables[0].log_values[1] = -1e15;
    assert!(matches!(
        PairwiseMrf::new(p),
        Err(InferError::ExtremeValue { index: 1, .. })
    ));
    let mut p = parts.clone();
    p.tables[0] = PairTable::new(2, 2, vec![0.0; 3]);
    assert!(matches!(
        PairwiseMrf::new(p),
        Err(InferError::TableSize { .. })
    ));
    let mut p = parts;
    p.tables[0] = PairTable::potts(2, 0.0, 0.0);
    p.edges[0] = (0, 7);
    assert!(matches!(
        PairwiseMrf::new(p),
        Err(InferError::NodeOutOfRange { node: 7, .. })
    ));
    let ok = PairwiseMrf::new(MrfParts {
        num_states: vec![2],
        unary: vec![0.0, 0.0],
        ..MrfParts::default()
    })
    .unwrap();
    let r = Gibbs {
        samples: 0,
        ..Gibbs::default()
    }
    .run(&ok, &mut ChaCha8Rng::seed_from_u64(0));
    assert!(matches!(
        r,
        Err(InferError::InvalidParameter {
            name: "samples",
            ..
        })
    ));
}

#[test]
fn uai_round_trip_preserves_marginals() {
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let edges = random_loopy_edges(&mut rng, 6, 4);
    let mrf = random_model(&mut rng, 6, edges, 3, 1.0, true);
    let dir = std::env::temp_dir().join(format!("srl-infer-uai-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.uai");
    mrf.write_uai(&path).unwrap();
    std::fs::write(dir.join("model.uai.evid"), mrf.evidence_to_uai_string()).unwrap();
    let back = PairwiseMrf::read_uai(&path).unwrap();
    let ev = srl_infer::read_uai_evidence(dir.join("model.uai.evid"), 6).unwrap();
    let back = back.with_evidence(ev).unwrap();
    let a = Exact::default().marginals(&mrf).unwrap();
    let b = Exact::default().marginals(&back).unwrap();
    assert_close(&a, &b, &mrf, 1e-12, false);
    assert!(matches!(
        PairwiseMrf::read_uai(dir.join("missing.uai")),
        Err(InferError::Io { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn extra_terms_equal_a_rebuilt_model() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let edges = random_loopy_edges(&mut rng, 5, 3);
    let mrf = random_model(&mut rng, 5, edges, 2, 1.0, false);
    let extra: Vec<f64> = (0..mrf.unary_all().len()).map(|i| i as f64 * 0.1).collect();
    let a = mrf.with_extra_unary(&extra).unwrap();
    let mut parts = mrf.to_parts();
    for (u, x) in parts.unary.iter_mut().zip(&extra) {
        *u += x;
    }
    let b = PairwiseMrf::new(parts).unwrap();
    let x = [1u32, 0, 1, 1, 0];
    let x: Vec<u32> = x
        .iter()
        .enumerate()
        .map(|(v, &s)| s.min(b.num_states(v) as u32 - 1))
        .collect();
    assert_eq!(a.log_score(&x), b.log_score(&x));
}

/// Learners are generic over the traits.
fn marginals_with<I: MarginalInference>(alg: &I, mrf: &PairwiseMrf) -> Marginals {
    alg.infer_marginals(mrf, &mut ChaCha8Rng::seed_from_u64(1))
        .unwrap()
}

fn map_with<I: MapInference>(alg: &I, mrf: &PairwiseMrf) -> f64 {
    alg.infer_map(mrf, &mut ChaCha8Rng::seed_from_u64(1))
        .unwrap()
        .log_score
}

#[test]
fn traits_swap_algorithms() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let edges = random_tree_edges(&mut rng, 8, false);
    let mrf = random_model(&mut rng, 8, edges, 3, 1.0, false);
    let exact = marginals_with(&Exact::default(), &mrf);
    assert_close(
        &marginals_with(&LoopyBp::default(), &mrf),
        &exact,
        &mrf,
        1e-6,
        true,
    );
    let mf = marginals_with(&MeanField::default(), &mrf);
    assert_rows_sum_to_one(&mf, &mrf);
    let g = marginals_with(
        &Gibbs {
            samples: 20_000,
            ..Gibbs::default()
        },
        &mrf,
    );
    assert_close(&g, &exact, &mrf, 0.03, false);
    let best = map_with(&Exact::default(), &mrf);
    assert!((map_with(&LoopyBp::default(), &mrf) - best).abs() < 1e-9);
    assert!(map_with(&Icm::default(), &mrf) <= best + 1e-12);
    assert!(map_with(&Gibbs::default(), &mrf) <= best + 1e-12);
    let nodes_only = LoopyBp {
        beliefs: Beliefs::NodesOnly,
        ..LoopyBp::default()
    }
    .run(&mrf);
    assert!(!nodes_only.has_edges() && nodes_only.edge(0).is_none());
}

// ---------------------------------------------------------------------------------------
// Collective classification with a tiny weighted softmax-regression classifier.

/// Multinomial logistic regression trained by full-batch gradient ascent on the weighted
/// log-likelihood with a small L2 penalty. Only for tests; the real LR lives in srl-learn.
#[derive(Clone, Debug, Default)]
struct TinySoftmax {
    w: Vec<f64>,
    k: usize,
    d: usize,
}

impl LocalClassifier for TinySoftmax {
    type Error = std::convert::Infallible;

    fn fit(
        &mut self,
        rows: &[FeatureRow<'_>],
        labels: &[u32],
        weights: Option<&[f64]>,
        num_classes: usize,
    ) -> Result<(), Self::Error> {
        self.k = num_classes;
        self.d = rows.first().map_or(0, FeatureRow::dim) + 1;
        self.w = vec![0.0; self.k * self.d];
        let mut p = vec![0.0; self.k];
        let total: f64 = weights.map_or(rows.len() as f64, |w| w.iter().sum());
        for _ in 0..300 {
            let mut grad = vec![0.0; self.w.len()];
            for (i, row) in rows.iter().enumerate() {
                let wi = weights.map_or(1.0, |w| w[i]);
                self.predict_proba(row, &mut p);
                for c in 0..self.k {
                    let g = wi * (f64::from(u8::from(labels[i] as usize == c)) - p[c]);
                    let base = c * self.d;
                    grad[base + self.d - 1] += g;
                    row.for_each(|j, x| grad[base + j] += g * x);
                }
            }
            for (w, g) in self.w.iter_mut().zip(&grad) {
                *w += 0.5 * (g / total - 1e-3 * *w);
            }
        }
        Ok(())
    }

    fn predict_proba(&self, row: &FeatureRow<'_>, out: &mut [f64]) {
        for (c, o) in out.iter_mut().enumerate() {
            let w = &self.w[c * self.d..(c + 1) * self.d];
            *o = row.dot(w) + w[self.d - 1];
        }
        let mx = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = out.iter().map(|x| (x - mx).exp()).sum();
        out.iter_mut().for_each(|x| *x = (*x - mx).exp() / z);
    }
}

/// Two communities of `n/2` nodes with homophilous edges; attributes are a weak noisy
/// signal (sparse, 2 columns); 40% of the nodes labelled.
fn community_graph(seed: u64, n: usize, attribute_noise: f64) -> (RelationalGraph, Vec<u32>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let truth: Vec<u32> = (0..n).map(|v| u32::from(v >= n / 2)).collect();
    let mut edges = Vec::new();
    for v in 0..n {
        for _ in 0..3 {
            let same = rng.random_bool(0.9);
            let w = loop {
                let w = rng.random_range(0..n);
                if (truth[w] == truth[v]) == same && w != v {
                    break w;
                }
            };
            edges.push((NodeId::new(v), NodeId::new(w)));
        }
    }
    let mut offsets = vec![0];
    let mut indices = Vec::new();
    let mut values = Vec::new();
    for &t in &truth {
        let c = if rng.random_bool(attribute_noise) {
            1 - t
        } else {
            t
        };
        indices.push(c);
        values.push(1.0);
        offsets.push(indices.len());
    }
    let labels = truth
        .iter()
        .map(|&t| rng.random_bool(0.4).then_some(t))
        .collect();
    let g = RelationalGraph::new(
        Vec::new(),
        Attributes::Sparse {
            num_features: 2,
            offsets,
            indices,
            values,
        },
        labels,
        LabelSet::numbered(2),
        edges,
        Directedness::Undirected,
    )
    .unwrap();
    (g, truth)
}

fn accuracy(g: &RelationalGraph, pred: &[u32], truth: &[u32]) -> f64 {
    let test: Vec<usize> = (0..g.num_nodes())
        .filter(|&v| g.label(NodeId::new(v)).is_none())
        .collect();
    test.iter().filter(|&&v| pred[v] == truth[v]).count() as f64 / test.len() as f64
}

#[test]
fn ica_and_gibbs_use_the_neighbours() {
    let (g, truth) = community_graph(21, 300, 0.4);
    // Content only: the attributes are right 60% of the time.
    let content = IterativeClassification {
        max_iters: 0,
        bootstrap: Bootstrap::ContentOnly,
        ..IterativeClassification::default()
    }
    .run(
        &g,
        &TinySoftmax::default(),
        None,
        &mut ChaCha8Rng::seed_from_u64(1),
    )
    .unwrap();
    let acc_content = accuracy(&g, &content.labels, &truth);
    for bootstrap in [Bootstrap::KnownNeighbours, Bootstrap::ContentOnly] {
        for aggregator in [
            Aggregator::Count,
            Aggregator::Proportion,
            Aggregator::Exists,
            Aggregator::Mode,
        ] {
            for ordering in [NodeOrdering::Fixed, NodeOrdering::Random] {
                let ica = IterativeClassification {
                    bootstrap,
                    aggregator,
                    ordering,
                    ..IterativeClassification::default()
                }
                .run(
                    &g,
                    &TinySoftmax::default(),
                    None,
                    &mut ChaCha8Rng::seed_from_u64(2),
                )
                .unwrap();
                let acc = accuracy(&g, &ica.labels, &truth);
                if aggregator == Aggregator::Exists {
                    // With ~6 neighbours nearly every node sees both classes, so "exists"
                    // carries little signal here (checked in the unit tests instead).
                    continue;
                }
                assert!(
                    acc > acc_content + 0.15 && acc > 0.85,
                    "{bootstrap:?} {aggregator:?} {ordering:?}: {acc} vs content {acc_content}"
                );
                assert!(ica.convergence.converged, "{:?}", ica.convergence);
            }
        }
    }
    let gs_cfg = CollectiveGibbs {
        burn_in: 20,
        samples: 80,
        ..CollectiveGibbs::default()
    };
    let gs = gs_cfg
        .run(
            &g,
            &TinySoftmax::default(),
            None,
            &mut ChaCha8Rng::seed_from_u64(3),
        )
        .unwrap();
    let acc = accuracy(&g, &gs.labels, &truth);
    assert!(acc > 0.85, "GS accuracy {acc}");
    for v in 0..g.num_nodes() {
        let s: f64 = gs.proba(v).iter().sum();
        assert!((s - 1.0).abs() < 1e-12);
    }
    let again = gs_cfg
        .run(
            &g,
            &TinySoftmax::default(),
            None,
            &mut ChaCha8Rng::seed_from_u64(3),
        )
        .unwrap();
    assert_eq!(gs, again);
    // Observed nodes keep their labels.
    for v in 0..g.num_nodes() {
        if let Some(c) = g.label(NodeId::new(v)) {
            assert_eq!(gs.labels[v], c);
        }
    }
}

#[test]
fn sample_weights_reach_the_classifier() {
    let (g, _) = community_graph(4, 60, 0.0);
    let w = vec![0.0; 60];
    let r = IterativeClassification::default().run(
        &g,
        &TinySoftmax::default(),
        Some(&w[..10]),
        &mut ChaCha8Rng::seed_from_u64(0),
    );
    assert!(matches!(r, Err(InferError::DimensionMismatch { .. })));
    let unl = g.with_labels(vec![None; 60]).unwrap();
    assert!(matches!(
        IterativeClassification::default().run(
            &unl,
            &TinySoftmax::default(),
            None,
            &mut ChaCha8Rng::seed_from_u64(0)
        ),
        Err(InferError::NoLabelledNodes)
    ));
}

#[test]
fn binary_fast_paths_match_the_generic_kernels() {
    // The same binary model with and without a disconnected 3-state dummy variable: the
    // dummy disables the k = 2 specialisations, so both code paths are compared.
    for seed in 0..6u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(500 + seed);
        let n = 40;
        let edges = random_loopy_edges(&mut rng, n, if seed % 2 == 0 { 0 } else { 15 });
        let m = edges.len();
        let unary: Vec<f64> = (0..2 * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let tables: Vec<PairTable> = (0..m)
            .map(|_| PairTable::from_fn(2, 2, |_, _| rng.random_range(-0.7..0.7)))
            .collect();
        let binary = PairwiseMrf::new(MrfParts {
            num_states: vec![2; n],
            unary: unary.clone(),
            edges: edges.clone(),
            edge_tables: (0..m as u32).collect(),
            tables: tables.clone(),
            evidence: Vec::new(),
        })
        .unwrap();
        let mut padded_unary = unary;
        padded_unary.extend([0.1, 0.2, 0.3]);
        let mut ks = vec![2; n];
        ks.push(3);
        let padded = PairwiseMrf::new(MrfParts {
            num_states: ks,
            unary: padded_unary,
            edges,
            edge_tables: (0..m as u32).collect(),
            tables,
            evidence: Vec::new(),
        })
        .unwrap();
        let bp = LoopyBp {
            damping: if seed % 3 == 0 { 0.3 } else { 0.0 },
            tol: 1e-12,
            max_iters: 500,
            ..LoopyBp::default()
        };
        let (a, b) = (bp.run(&binary), bp.run(&padded));
        assert!(a.convergence().converged);
        for v in 0..n {
            for (x, y) in a.node(v).iter().zip(b.node(v)) {
                assert!((x - y).abs() < 1e-12, "bp node {v}");
            }
        }
        if seed % 2 == 0 {
            let exact = Exact::default().marginals(&binary).unwrap();
            assert_close(&a, &exact, &binary, 1e-9, true);
        }
        for sweep in [Sweep::Sequential, Sweep::Parallel] {
            let mf = MeanField {
                sweep,
                damping: 0.5,
                tol: 1e-12,
                max_iters: 2000,
                ..MeanField::default()
            };
            let (a, b) = (mf.run(&binary), mf.run(&padded));
            assert!(a.convergence().converged, "{sweep:?}");
            for v in 0..n {
                for (x, y) in a.node(v).iter().zip(b.node(v)) {
                    assert!((x - y).abs() < 1e-10, "mf node {v}");
                }
            }
            assert!(MeanField::fixed_point_violation(&padded, &b) < 1e-10);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Hard constraints (zero potentials, -∞ log-potentials) and extreme finite values.

/// A random model with zero potentials: each unary and pairwise entry is `-∞` with
/// probability `p_zero`, every unary row and table gets a constant `offset` (a huge offset
/// must not change the distribution). `None` when construction refuses the model (a row or
/// table of zeros, evidence on a zero state): that refusal is itself checked to be a
/// `ZeroProbability`.
#[allow(clippy::too_many_arguments)]
fn hard_model(
    rng: &mut ChaCha8Rng,
    n: usize,
    edges: Vec<(u32, u32)>,
    max_k: usize,
    p_zero: f64,
    offset: f64,
    evidence: bool,
) -> Option<PairwiseMrf> {
    let ks: Vec<usize> = (0..n).map(|_| rng.random_range(1..=max_k)).collect();
    let total: usize = ks.iter().sum();
    let entry = |rng: &mut ChaCha8Rng| {
        if rng.random_bool(p_zero) {
            f64::NEG_INFINITY
        } else {
            rng.random_range(-2.0..=2.0) + offset
        }
    };
    let unary = (0..total).map(|_| entry(rng)).collect();
    let tables = edges
        .iter()
        .map(|&(u, v)| {
            let (ku, kv) = (ks[u as usize], ks[v as usize]);
            let vals = (0..ku * kv).map(|_| entry(rng)).collect();
            PairTable::new(ku, kv, vals)
        })
        .collect();
    let evidence = if evidence {
        ks.iter()
            .map(|&k| rng.random_bool(0.2).then(|| rng.random_range(0..k) as u32))
            .collect()
    } else {
        Vec::new()
    };
    match PairwiseMrf::new(MrfParts {
        num_states: ks,
        unary,
        edge_tables: (0..edges.len() as u32).collect(),
        edges,
        tables,
        evidence,
    }) {
        Ok(m) => Some(m),
        Err(InferError::ZeroProbability { .. }) => None,
        Err(e) => panic!("unexpected error {e}"),
    }
}

fn assert_no_nan(m: &Marginals, mrf: &PairwiseMrf) {
    for v in 0..mrf.num_nodes() {
        assert!(
            m.node(v).iter().all(|x| !x.is_nan()),
            "node {v}: {:?}",
            m.node(v)
        );
        assert!(
            m.node_log(v).iter().all(|x| !x.is_nan()),
            "node {v}: {:?}",
            m.node_log(v)
        );
    }
    for e in 0..if m.has_edges() { mrf.num_edges() } else { 0 } {
        assert!(m.edge(e).unwrap().iter().all(|x| !x.is_nan()), "edge {e}");
        assert!(
            m.edge_log(e).unwrap().iter().all(|x| !x.is_nan()),
            "edge {e}"
        );
    }
    assert!(!m.convergence().max_residual.is_nan());
}

fn assert_rows_normalised(m: &Marginals, mrf: &PairwiseMrf, tol: f64) {
    for v in 0..mrf.num_nodes() {
        let s: f64 = m.node(v).iter().sum();
        assert!((s - 1.0).abs() < tol, "node {v} sums to {s}");
    }
    for e in 0..if m.has_edges() { mrf.num_edges() } else { 0 } {
        let s: f64 = m.edge(e).unwrap().iter().sum();
        assert!((s - 1.0).abs() < tol, "edge {e} sums to {s}");
    }
}

fn is_zero_probability<T>(r: &Result<T, InferError>) -> bool {
    matches!(r, Err(InferError::ZeroProbability { .. }))
}

/// Every algorithm on `mrf`: no NaN, rows normalised, errors only of the documented kinds.
fn run_everything_without_nan(mrf: &PairwiseMrf, seed: u64) {
    for schedule in [Schedule::Flooding, Schedule::Sequential, Schedule::Residual] {
        for mode in [BpMode::SumProduct, BpMode::MaxProduct] {
            for damping in [0.0, 0.4] {
                let bp = LoopyBp {
                    schedule,
                    mode,
                    damping,
                    max_iters: 60,
                    ..LoopyBp::default()
                };
                let m = bp.run(mrf);
                assert_no_nan(&m, mrf);
                // On loopy graphs with zero potentials BP's finite log-messages can grow
                // without bound (a diverging run, reported as not converged); rounding at
                // that magnitude leaves rows normalised only to about 1e-4.
                assert_rows_normalised(&m, mrf, 1e-3);
                let r = bp.try_run(mrf);
                assert!(r.is_ok() || is_zero_probability(&r));
                assert!(!bp.map(mrf).log_score.is_nan());
            }
        }
    }
    for sweep in [Sweep::Sequential, Sweep::Parallel] {
        let m = MeanField {
            sweep,
            max_iters: 60,
            ..MeanField::default()
        }
        .run(mrf);
        assert_no_nan(&m, mrf);
        assert_rows_sum_to_one(&m, mrf);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    match (Gibbs {
        burn_in: 10,
        samples: 30,
        ..Gibbs::default()
    })
    .run(mrf, &mut rng)
    {
        Ok(g) => {
            assert_no_nan(&g.marginals, mrf);
            assert_rows_sum_to_one(&g.marginals, mrf);
            assert!(!g.best.log_score.is_nan());
        }
        Err(InferError::NoFeasibleSample { .. }) => {}
        Err(e) => panic!("gibbs: {e}"),
    }
    assert!(!Icm::default().run(mrf).log_score.is_nan());
    let ex = Exact::default();
    match ex.marginals(mrf) {
        Ok(m) => {
            assert_no_nan(&m, mrf);
            assert_rows_sum_to_one(&m, mrf);
            assert!(m.log_partition().unwrap().is_finite());
        }
        Err(InferError::ZeroProbability { .. } | InferError::ExactTooLarge { .. }) => {}
        Err(e) => panic!("exact: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Trees with zero potentials and huge offsets: tree pass = enumeration, loopy BP (all
    /// schedules) = exact, max-product finds the MAP score, infeasibility found by both.
    #[test]
    fn hard_constraints_are_exact_on_trees(seed in any::<u64>(), n in 1usize..9,
                                           forest in any::<bool>(), evidence in any::<bool>(),
                                           p_zero in 0.0f64..0.45,
                                           offset in prop::sample::select(vec![0.0, 3e4, -7e5, 2e8])) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let edges = random_tree_edges(&mut rng, n, forest);
        let Some(mrf) = hard_model(&mut rng, n, edges, 3, p_zero, offset, evidence) else {
            return Ok(());
        };
        let ex = Exact::default();
        let (tree, enumerated) = (ex.marginals(&mrf), ex.enumerate_marginals(&mrf));
        prop_assert_eq!(is_zero_probability(&tree), is_zero_probability(&enumerated));
        let brute = enumerate_map_score(&mrf);
        for schedule in [Schedule::Flooding, Schedule::Sequential, Schedule::Residual] {
            let bp = LoopyBp { schedule, tol: 1e-13, max_iters: 200, ..LoopyBp::default() };
            let run = bp.try_run(&mrf);
            let map = bp.try_map(&mrf);
            match (&tree, &enumerated) {
                (Ok(t), Ok(e)) => {
                    assert_close(t, e, &mrf, 1e-9, true);
                    let (zt, ze) = (t.log_partition().unwrap(), e.log_partition().unwrap());
                    prop_assert!((zt - ze).abs() <= 1e-9 * zt.abs().max(1.0), "{zt} {ze}");
                    let run = run.unwrap();
                    prop_assert!(run.convergence().converged, "{schedule:?} {:?}", run.convergence());
                    assert_close(&run, t, &mrf, 1e-9, true);
                    let map = map.unwrap();
                    prop_assert!((map.log_score - brute).abs() <= 1e-9 * brute.abs().max(1.0),
                                 "{schedule:?}: {} vs {brute}", map.log_score);
                    let best = ex.map(&mrf).unwrap();
                    prop_assert!((best.log_score - brute).abs() <= 1e-9 * brute.abs().max(1.0));
                }
                _ => {
                    prop_assert!(brute == f64::NEG_INFINITY);
                    prop_assert!(is_zero_probability(&run), "{schedule:?}: {:?}", run.map(|m| m.convergence()));
                    prop_assert!(is_zero_probability(&map));
                    prop_assert!(is_zero_probability(&ex.map(&mrf)));
                    prop_assert!(is_zero_probability(&ex.log_partition(&mrf)));
                }
            }
        }
        run_everything_without_nan(&mrf, seed);
    }

    /// Loopy models with zero potentials and huge offsets: nothing returns NaN, and a
    /// huge constant offset does not change the exact answer.
    #[test]
    fn extreme_models_never_give_nan(seed in any::<u64>(), n in 2usize..8,
                                     p_zero in 0.0f64..0.4,
                                     offset in prop::sample::select(vec![3e4, -2e6, 5e8, -1e11])) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let edges = random_loopy_edges(&mut rng, n, n);
        let mut rng2 = rng.clone();
        let Some(mrf) = hard_model(&mut rng, n, edges.clone(), 3, p_zero, offset, true) else {
            return Ok(());
        };
        let plain = hard_model(&mut rng2, n, edges, 3, p_zero, 0.0, true).unwrap();
        run_everything_without_nan(&mrf, seed);
        let ex = Exact::default();
        match (ex.enumerate_marginals(&mrf), ex.enumerate_marginals(&plain)) {
            // Rounding of `x + offset` moves each value by up to ulp(offset) / 2.
            (Ok(a), Ok(b)) => assert_close(&a, &b, &mrf, 1e-4 * (offset.abs() * 1e-11).max(1e-5), true),
            (a, b) => prop_assert!(is_zero_probability(&a) && is_zero_probability(&b)),
        }
    }
}

/// A 4-cycle whose every log-potential is `c`: the uniform distribution.
fn constant_cycle(c: f64) -> Result<PairwiseMrf, InferError> {
    PairwiseMrf::new(MrfParts {
        num_states: vec![2; 4],
        unary: vec![c; 8],
        edges: vec![(0, 1), (1, 2), (2, 3), (3, 0)],
        edge_tables: vec![0; 4],
        tables: vec![PairTable::potts(2, c, c)],
        evidence: vec![],
    })
}

#[test]
fn extreme_finite_values_are_exact_or_refused() {
    for c in [-1e11, 1e11, -5e5, 1e12, -1e12] {
        let mrf = constant_cycle(c).unwrap();
        assert!(!mrf.is_ordinary());
        let ex = Exact::default().marginals(&mrf).unwrap();
        assert_eq!(ex.node(0), &[0.5, 0.5], "c = {c}");
        let z = ex.log_partition().unwrap();
        let want = 8.0 * c + 16f64.ln();
        assert!(
            (z - want).abs() <= 1e-15 * want.abs().max(1.0),
            "{z} vs {want}"
        );
        for schedule in [Schedule::Flooding, Schedule::Sequential, Schedule::Residual] {
            for mode in [BpMode::SumProduct, BpMode::MaxProduct] {
                let bp = LoopyBp {
                    schedule,
                    mode,
                    ..LoopyBp::default()
                }
                .run(&mrf);
                assert!(bp.convergence().converged);
                assert_eq!(bp.node(2), &[0.5, 0.5], "c = {c} {schedule:?}");
            }
        }
        for sweep in [Sweep::Sequential, Sweep::Parallel] {
            let mf = MeanField {
                sweep,
                ..MeanField::default()
            }
            .run(&mrf);
            assert_eq!(mf.node(1), &[0.5, 0.5], "c = {c} {sweep:?}");
        }
    }
    // Beyond 10^12 a finite value is refused (f64 sums would be off by more than 1e-4).
    for c in [-1e15, -1e17, 1e308, -1e308] {
        assert!(
            matches!(constant_cycle(c), Err(InferError::ExtremeValue { .. })),
            "c = {c}"
        );
    }
    // An ordinary model keeps the fast path.
    assert!(constant_cycle(-50.0).unwrap().is_ordinary());
}

/// `x0 ≠ x1 ≠ x2` (k = 2) with `θ_0 = (ln 3, 0)`: only (0,1,0) and (1,0,1) are possible,
/// `P(x0 = 0) = 3/4`.
fn not_equal_chain(evidence: Vec<Option<u32>>) -> Result<PairwiseMrf, InferError> {
    PairwiseMrf::new(MrfParts {
        num_states: vec![2; 3],
        unary: vec![3f64.ln(), 0.0, 0.0, 0.0, 0.0, 0.0],
        edges: vec![(0, 1), (1, 2)],
        edge_tables: vec![0, 0],
        tables: vec![PairTable::potts(2, f64::NEG_INFINITY, 0.0)],
        evidence,
    })
}

#[test]
fn hard_constraints_are_handled_exactly() {
    let mrf = not_equal_chain(vec![]).unwrap();
    let ex = Exact::default().marginals(&mrf).unwrap();
    assert!((ex.node(0)[0] - 0.75).abs() < 1e-15);
    assert!((ex.node(1)[1] - 0.75).abs() < 1e-15);
    assert_eq!(ex.edge(0).unwrap()[0], 0.0);
    assert!((ex.log_partition().unwrap() - 4f64.ln()).abs() < 1e-15);
    let en = Exact::default().enumerate_marginals(&mrf).unwrap();
    for v in 0..3 {
        assert!((en.node(v)[0] - ex.node(v)[0]).abs() < 1e-15);
    }
    for schedule in [Schedule::Flooding, Schedule::Sequential, Schedule::Residual] {
        for damping in [0.0, 0.5] {
            let bp = LoopyBp {
                schedule,
                damping,
                tol: 1e-12,
                max_iters: 500,
                ..LoopyBp::default()
            };
            let m = bp.try_run(&mrf).unwrap();
            assert!(m.convergence().converged);
            assert!(
                (m.node(2)[0] - 0.75).abs() < 1e-12,
                "{schedule:?} {:?}",
                m.node(2)
            );
            assert_eq!(m.edge(1).unwrap()[3], 0.0);
            assert_eq!(bp.try_map(&mrf).unwrap().states, vec![0, 1, 0]);
        }
    }
    assert_eq!(Exact::default().map(&mrf).unwrap().states, vec![0, 1, 0]);
    let icm = Icm::default().run(&mrf);
    assert_eq!(icm.log_score, f64::NEG_INFINITY.max(icm.log_score));
    // Mean field and Gibbs: exact zeros where a neighbour's state is certain.
    let mf = MeanField::default().run(&mrf);
    assert_no_nan(&mf, &mrf);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let g = Gibbs::default().run(&mrf, &mut rng).unwrap();
    assert_no_nan(&g.marginals, &mrf);
    // Every drawn state satisfies the constraints: x1 = 1 - x0 in every sample.
    assert_eq!(g.marginals.edge(0).unwrap()[0], 0.0);
    assert_eq!(g.marginals.edge(0).unwrap()[3], 0.0);
    assert!(g.best.log_score.is_finite());

    // Evidence contradicting the constraints: x0 = 0 forces x1 = 1, x2 = 0, not 1.
    let bad = not_equal_chain(vec![Some(0), None, Some(1)]).unwrap();
    assert!(matches!(
        Exact::default().marginals(&bad),
        Err(InferError::ZeroProbability { .. })
    ));
    assert!(matches!(
        Exact::default().enumerate_marginals(&bad),
        Err(InferError::ZeroProbability { node: None, .. })
    ));
    for schedule in [Schedule::Flooding, Schedule::Sequential, Schedule::Residual] {
        let bp = LoopyBp {
            schedule,
            ..LoopyBp::default()
        };
        assert!(matches!(
            bp.try_run(&bad),
            Err(InferError::ZeroProbability { node: Some(_), .. })
        ));
        let m = bp.run(&bad);
        assert!(!m.convergence().converged);
        assert_no_nan(&m, &bad);
        assert!(matches!(
            bp.try_map(&bad),
            Err(InferError::ZeroProbability { .. })
        ));
    }
    run_everything_without_nan(&bad, 5);

    // Local contradictions are found when the model is built.
    let mut p = not_equal_chain(vec![]).unwrap().to_parts();
    p.unary[2] = f64::NEG_INFINITY;
    p.unary[3] = f64::NEG_INFINITY;
    assert!(matches!(
        PairwiseMrf::new(p),
        Err(InferError::ZeroProbability { node: Some(1), .. })
    ));
    let mut p = not_equal_chain(vec![]).unwrap().to_parts();
    p.unary[5] = f64::NEG_INFINITY;
    p.evidence = vec![None, None, Some(1)];
    assert!(matches!(
        PairwiseMrf::new(p),
        Err(InferError::ZeroProbability { node: Some(2), .. })
    ));
}

#[test]
fn hard_constraints_survive_a_uai_round_trip() {
    let mrf = not_equal_chain(vec![]).unwrap();
    let text = mrf.to_uai_string();
    let back = PairwiseMrf::from_uai_str(&text, "neq.uai").unwrap();
    assert_eq!(back.pair_table(0).get(0, 0), f64::NEG_INFINITY);
    let m = LoopyBp::default().try_run(&back).unwrap();
    assert!((m.node(0)[0] - 0.75).abs() < 1e-12);
}

#[test]
fn huge_tables_are_refused_before_allocation() {
    assert!(matches!(
        PairTable::try_potts(100_000, 1.0, 0.0),
        Err(InferError::TooLarge { .. })
    ));
    assert!(matches!(
        PairTable::try_potts(20_000, 1.0, 0.0),
        Err(InferError::TooLarge { .. })
    ));
    assert!(matches!(
        PairTable::try_from_fn(1 << 40, 1 << 40, |_, _| 0.0),
        Err(InferError::TooLarge { .. })
    ));
    assert!(PairTable::try_potts(7, 1.0, 0.0).is_ok());
    // A table struct claiming a huge shape is refused by the model before its kernels.
    let parts = MrfParts {
        num_states: vec![1 << 14, 1 << 14],
        unary: vec![0.0; 1 << 15],
        edges: vec![(0, 1)],
        edge_tables: vec![0],
        tables: vec![PairTable::new(1 << 14, 1 << 14, Vec::new())],
        evidence: vec![],
    };
    assert!(matches!(
        PairwiseMrf::new(parts),
        Err(InferError::TooLarge { .. })
    ));
}

// ---------------------------------------------------------------------------------------
// Linear-domain (probability) kernels against the log-domain kernels.

/// A loopy model with `k_v` states from `ks`, weak random tables (`±0.5`), 10 % evidence,
/// a parallel edge, and a hub (node 0) joined to `hub_degree` nodes by a table of range
/// `hub_range` (so `Σ` of its kernels' ranges can pass the 600-nat linear budget and the
/// hub runs in the log domain while the rest run linear).
fn hub_model(seed: u64, ks: Vec<usize>, hub_degree: usize, hub_range: f64) -> PairwiseMrf {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = ks.len();
    let mut edges = random_loopy_edges(&mut rng, n, n / 2);
    edges.push(edges[0]);
    let weak = edges.len();
    edges.extend((1..=hub_degree.min(n - 1)).map(|v| (0, v as u32)));
    let mut tables = Vec::new();
    let mut edge_tables = Vec::new();
    for (e, &(u, v)) in edges.iter().enumerate() {
        let (ku, kv) = (ks[u as usize], ks[v as usize]);
        let s = if e < weak { 0.5 } else { hub_range / 2.0 };
        tables.push(PairTable::from_fn(ku, kv, |a, b| {
            if e >= weak && a == 0 && b == 0 {
                s
            } else if e >= weak && a == 1 % ku && b == 0 {
                -s
            } else {
                rng.random_range(-0.5 * s..=0.5 * s)
            }
        }));
        edge_tables.push(e as u32);
    }
    let unary = ks
        .iter()
        .flat_map(|&k| {
            (0..k)
                .map(|_| rng.random_range(-1.0..1.0))
                .collect::<Vec<_>>()
        })
        .collect();
    let evidence = ks
        .iter()
        .enumerate()
        .map(|(v, &k)| (v > 0 && rng.random_bool(0.1)).then(|| rng.random_range(0..k) as u32))
        .collect();
    PairwiseMrf::new(MrfParts {
        num_states: ks,
        unary,
        edges,
        edge_tables,
        tables,
        evidence,
    })
    .unwrap()
}

#[test]
fn linear_kernels_match_the_log_kernels() {
    let mut shapes: Vec<(String, Vec<usize>)> = [2usize, 3, 4, 7, 9]
        .iter()
        .map(|&k| (format!("k={k}"), vec![k; 200]))
        .collect();
    shapes.push(("mixed".into(), (0..200).map(|v| 1 + v % 4).collect()));
    for (seed, (name, ks)) in shapes.into_iter().enumerate() {
        for hub_range in [1.0, 5.0] {
            let mrf = hub_model(seed as u64, ks.clone(), 150, hub_range);
            for (iters, tol) in [(300, 1e-12), (7, 0.0)] {
                let run = |kernel| {
                    LoopyBp {
                        max_iters: iters,
                        tol,
                        kernel,
                        ..LoopyBp::default()
                    }
                    .run(&mrf)
                };
                let (lin, log) = (run(BpKernel::Auto), run(BpKernel::Log));
                let (a, b) = (lin.convergence(), log.convergence());
                assert_eq!(a.iterations, b.iterations, "{name}, range {hub_range}");
                assert_eq!(a.converged, b.converged, "{name}, range {hub_range}");
                assert!(
                    (a.max_residual - b.max_residual).abs() <= 1e-12 * (1.0 + b.max_residual),
                    "{name}: residual {a:?} vs {b:?}"
                );
                for v in 0..mrf.num_nodes() {
                    for (x, y) in lin.node_log(v).iter().zip(log.node_log(v)) {
                        assert!(
                            x == y || (x - y).abs() <= 1e-10,
                            "{name} node {v}: {x} vs {y}"
                        );
                    }
                }
                for e in 0..mrf.num_edges() {
                    for (x, y) in lin.edge(e).unwrap().iter().zip(log.edge(e).unwrap()) {
                        assert!((x - y).abs() <= 1e-12, "{name} edge {e}: {x} vs {y}");
                    }
                }
            }
        }
    }
}

#[test]
fn linear_kernels_are_independent_of_the_thread_count() {
    let pool = |t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };
    for ks in [
        vec![2; 4000],
        vec![5; 4000],
        (0..4000).map(|v| 2 + v % 3).collect(),
    ] {
        let mrf = hub_model(11, ks, 900, 1.0);
        let bp = LoopyBp {
            max_iters: 12,
            ..LoopyBp::default()
        };
        let a = pool(1).install(|| bp.run(&mrf));
        let b = pool(3).install(|| bp.run(&mrf));
        assert_eq!(a, b);
    }
}
