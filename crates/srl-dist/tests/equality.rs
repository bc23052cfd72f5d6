//! srl-dist's flooding loopy BP equals srl-infer's `LoopyBp` (flooding) to 1e-12 for 1, 2
//! and 4 workers (threads of one process), both partitions, sum- and max-product, with and
//! without damping, on random loopy models with mixed state counts, several tables (one
//! beyond the 600-nat exp-domain range), parallel edges and evidence.

use std::sync::Arc;

mod common;

use common::{random_mrf, random_mrf_small_range};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_dist::{DistBp, Partition, barabasi_albert_mrf};
use srl_infer::{BpMode, LoopyBp, MrfParts, PairTable, PairwiseMrf, Schedule};

fn assert_equal(mrf: &Arc<PairwiseMrf>, bp: LoopyBp, workers: usize, partition: Partition) {
    let single = bp.run(mrf);
    let dist = DistBp {
        partition,
        ..DistBp::from_loopy(&bp)
    }
    .run_threads(Arc::clone(mrf), workers)
    .expect("distributed run");
    let (a, b) = (single.convergence(), dist.convergence());
    assert_eq!(
        a.iterations, b.iterations,
        "{workers} workers, {partition:?}"
    );
    assert_eq!(a.converged, b.converged);
    assert!((a.max_residual - b.max_residual).abs() <= 1e-12 || a.max_residual == b.max_residual);
    assert_eq!(dist.nodes().len(), mrf.num_nodes());
    for v in 0..mrf.num_nodes() {
        let x = single.node(v);
        let y = dist.node(v).expect("every node present");
        for (p, q) in x.iter().zip(y) {
            assert!(
                (p - q).abs() <= 1e-12,
                "node {v}: {x:?} vs {y:?} ({workers} workers, {partition:?}, {:?})",
                bp.mode
            );
        }
    }
}

#[test]
fn flooding_lbp_equals_srl_infer_for_1_2_4_workers() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let mrf = Arc::new(random_mrf(90, &mut rng));
    for mode in [BpMode::SumProduct, BpMode::MaxProduct] {
        for damping in [0.0, 0.3] {
            let bp = LoopyBp {
                max_iters: 40,
                tol: 1e-9,
                damping,
                mode,
                schedule: Schedule::Flooding,
                ..LoopyBp::default()
            };
            for workers in [1, 2, 4] {
                for partition in [Partition::Range, Partition::Hash] {
                    assert_equal(&mrf, bp, workers, partition);
                }
            }
        }
    }
}

#[test]
fn converges_like_srl_infer_on_a_power_law_graph() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mrf = Arc::new(barabasi_albert_mrf(3000, 2, 0.5, &mut rng).expect("model"));
    let bp = LoopyBp {
        max_iters: 200,
        tol: 1e-8,
        ..LoopyBp::default()
    };
    assert!(bp.run(&mrf).convergence().converged);
    for workers in [2, 4] {
        assert_equal(&mrf, bp, workers, Partition::Hash);
    }
}

#[test]
fn a_model_without_edges_needs_no_iteration() {
    let mrf = Arc::new(
        PairwiseMrf::new(MrfParts {
            num_states: vec![2, 3],
            unary: vec![0.1, 0.2, 0.0, 1.0, -1.0],
            ..MrfParts::default()
        })
        .expect("model"),
    );
    assert_equal(&mrf, LoopyBp::default(), 2, Partition::Range);
}

#[test]
fn extreme_models_are_refused() {
    let mrf = Arc::new(
        PairwiseMrf::new(MrfParts {
            num_states: vec![2, 2],
            unary: vec![0.0, 2e4, 0.0, 0.0],
            edges: vec![(0, 1)],
            edge_tables: vec![0],
            tables: vec![PairTable::potts(2, 1.0, 0.0)],
            evidence: vec![],
        })
        .expect("model"),
    );
    let err = DistBp::default().run_threads(mrf, 1);
    assert!(matches!(
        err,
        Err(srl_dist::DistError::ExtremeModel { index: 1, .. })
    ));
}

#[test]
fn chromatic_gibbs_equals_srl_infer_for_1_2_4_workers() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let mrf = Arc::new(random_mrf_small_range(60, &mut rng));
    let g = srl_infer::Gibbs {
        burn_in: 20,
        samples: 60,
        thinning: 2,
        beliefs: srl_infer::Beliefs::NodesOnly,
        ..srl_infer::Gibbs::default()
    };
    let seed = ChaCha8Rng::seed_from_u64(99);
    let single = g.run(&mrf, &mut seed.clone()).expect("gibbs");
    let mut last: Option<Vec<u32>> = None;
    for workers in [1, 2, 4] {
        for partition in [Partition::Range, Partition::Hash] {
            let dist = srl_dist::DistGibbs {
                partition,
                ..srl_dist::DistGibbs::from_gibbs(&g)
            }
            .run_threads(Arc::clone(&mrf), workers, &seed)
            .expect("distributed gibbs");
            let (a, b) = (single.marginals.convergence(), dist.convergence());
            assert_eq!(a.iterations, b.iterations);
            assert_eq!(
                a.max_residual, b.max_residual,
                "{workers} workers {partition:?}"
            );
            for v in 0..mrf.num_nodes() {
                assert_eq!(
                    single.marginals.node(v),
                    dist.node(v).expect("node held"),
                    "node {v}, {workers} workers, {partition:?}"
                );
            }
            let states: Vec<u32> = (0..mrf.num_nodes())
                .map(|v| dist.last_state(v).expect("node held"))
                .collect();
            if let Some(prev) = &last {
                assert_eq!(prev, &states, "last sample differs at {workers} workers");
            }
            last = Some(states);
        }
    }
}
