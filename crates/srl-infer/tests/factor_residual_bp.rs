//! Residual BP on general factor graphs with factor-level lazy residuals
//! (`FactorSchedule::Residual`, issue 28): the sequential schedule's fixed point, work
//! within a small factor of sequential's, an exact convergence check, the work cap,
//! damping and max-product, the same bits on every run.

use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use srl_infer::factor_graph::{FactorBp, FactorGraph, FactorSchedule};

/// `n` binary variables and `n` factors over 3 distinct random variables with tables
/// `U(-coupling, coupling)` (the shape of the criterion bench's model), plus `hard`
/// factors over two variables with one zero entry each.
fn model(n: usize, coupling: f64, hard: usize, seed: u64) -> FactorGraph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = FactorGraph::new(vec![2; n]).expect("model");
    for _ in 0..n {
        let mut s = [0usize; 3];
        loop {
            for x in &mut s {
                *x = rng.random_range(0..n);
            }
            if s[0] != s[1] && s[1] != s[2] && s[0] != s[2] {
                break;
            }
        }
        let t: Vec<f64> = (0..8)
            .map(|_| rng.random_range(-coupling..coupling))
            .collect();
        g.add_factor(&s, &t).expect("factor");
    }
    for _ in 0..hard {
        let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
        if a != b {
            let mut t = vec![0.0; 4];
            t[rng.random_range(0..4usize)] = f64::NEG_INFINITY;
            g.add_factor(&[a, b], &t).expect("factor");
        }
    }
    g
}

fn bp(schedule: FactorSchedule, tolerance: f64) -> FactorBp {
    FactorBp {
        schedule,
        tolerance,
        max_iters: 1000,
        ..FactorBp::default()
    }
}

fn max_diff(
    a: &srl_infer::factor_graph::FactorMarginals,
    b: &srl_infer::factor_graph::FactorMarginals,
) -> f64 {
    let mut d = 0.0f64;
    for v in 0..a.num_nodes() {
        for (x, y) in a.node(v).iter().zip(b.node(v)) {
            d = d.max((x - y).abs());
        }
    }
    d
}

#[test]
fn residual_reaches_the_sequential_fixed_point_with_bounded_work() {
    for (coupling, hard, seed) in [(1.0, 0, 1u64), (1.5, 0, 2), (1.0, 300, 3)] {
        let g = model(3000, coupling, hard, seed);
        let seq = bp(FactorSchedule::Sequential, 1e-9)
            .marginals(&g)
            .expect("sequential");
        let res = bp(FactorSchedule::Residual, 1e-9)
            .marginals(&g)
            .expect("residual");
        let (cs, cr) = (seq.convergence(), res.convergence());
        assert!(cs.converged && cr.converged, "{cs:?} {cr:?}");
        // the convergence check is exact: every pending residual is below the tolerance
        assert!(cr.max_residual < 1e-9, "{cr:?}");
        let d = max_diff(&seq, &res);
        assert!(d < 1e-6, "coupling {coupling}: marginals differ by {d}");
        // lazy keys: no neighbour is recomputed at a commit, so the work stays within a
        // small factor of sequential's (the eager queue recomputed about six factors per
        // commit here)
        assert!(
            cr.iterations <= 2 * cs.iterations + 1,
            "coupling {coupling}: residual work {} vs sequential {}",
            cr.iterations,
            cs.iterations
        );
    }
}

#[test]
fn residual_is_deterministic_and_respects_the_cap() {
    let g = model(2000, 1.5, 100, 5);
    let a = bp(FactorSchedule::Residual, 1e-9).marginals(&g).expect("a");
    let b = bp(FactorSchedule::Residual, 1e-9).marginals(&g).expect("b");
    assert_eq!(a, b, "same bits on every run");
    // a cap of one sweep of work: the first (sequential) pass only, not converged
    let capped = FactorBp {
        max_iters: 1,
        ..bp(FactorSchedule::Residual, 1e-12)
    }
    .marginals(&g)
    .expect("capped");
    assert!(!capped.convergence().converged);
    assert!(
        capped.convergence().iterations <= 1,
        "{:?}",
        capped.convergence()
    );
}

#[test]
fn damped_and_max_product_residual_runs_reach_fixed_points() {
    let g = model(1500, 1.0, 50, 9);
    let seq = bp(FactorSchedule::Sequential, 1e-10)
        .marginals(&g)
        .expect("seq");
    let damped = FactorBp {
        damping: 0.3,
        ..bp(FactorSchedule::Residual, 1e-10)
    }
    .marginals(&g)
    .expect("damped");
    assert!(damped.convergence().converged, "{:?}", damped.convergence());
    assert!(max_diff(&seq, &damped) < 1e-6);
    // max-product on a factor tree (three-variable factors sharing one variable
    // along a chain: exact): the residual decoding scores as the sequential one
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut tree = FactorGraph::new(vec![2; 401]).expect("tree");
    for i in (0..400).step_by(2) {
        let t: Vec<f64> = (0..8).map(|_| rng.random_range(-2.0..2.0)).collect();
        tree.add_factor(&[i, i + 1, i + 2], &t).expect("factor");
    }
    let ms = bp(FactorSchedule::Sequential, 1e-10)
        .map(&tree)
        .expect("seq map");
    let mr = bp(FactorSchedule::Residual, 1e-10)
        .map(&tree)
        .expect("res map");
    assert!(ms.convergence.converged && mr.convergence.converged);
    assert!(
        (ms.log_score - mr.log_score).abs() < 1e-9,
        "{} vs {}",
        ms.log_score,
        mr.log_score
    );
}
