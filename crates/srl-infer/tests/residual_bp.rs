//! Residual BP (`Schedule::Residual`, node-level lazy residuals): it reaches sequential
//! BP's fixed point, with a small multiple of sequential's work on a power-law graph,
//! deterministically, and its `converged` flag is exact.
#![allow(clippy::unwrap_used)]

#[path = "../examples/common/powerlaw_model.rs"]
mod powerlaw_model;

use srl_infer::{BpMode, LoopyBp, PairwiseMrf, Schedule};

/// The `powerlaw_lbp` example's model (Barabási–Albert, 2 edges per new node, `k`
/// states, random unary terms, one Potts table of strength 0.5).
fn ba_model(n: usize, k: usize, seed: u64) -> PairwiseMrf {
    powerlaw_model::powerlaw_mrf(n, k, seed).unwrap().0
}

fn bp(schedule: Schedule, tol: f64) -> LoopyBp {
    LoopyBp {
        schedule,
        tol,
        max_iters: 1000,
        ..LoopyBp::default()
    }
}

fn max_node_diff(mrf: &PairwiseMrf, a: &srl_infer::Marginals, b: &srl_infer::Marginals) -> f64 {
    (0..mrf.num_nodes())
        .flat_map(|v| a.node(v).iter().zip(b.node(v)).map(|(x, y)| (x - y).abs()))
        .fold(0.0, f64::max)
}

#[test]
fn residual_reaches_sequentials_fixed_point_with_comparable_work() {
    for k in [2, 3] {
        let mrf = ba_model(3000, k, 7);
        let seq = bp(Schedule::Sequential, 1e-6).run(&mrf);
        let res = bp(Schedule::Residual, 1e-6).run(&mrf);
        assert!(seq.convergence().converged && res.convergence().converged);
        assert!(res.convergence().max_residual < 1e-6);
        let (ws, wr) = (seq.convergence().iterations, res.convergence().iterations);
        // Work counts (messages computed / 2m) do not depend on the machine's load.
        assert!(
            wr <= 2 * ws,
            "k = {k}: residual work {wr} vs sequential {ws}"
        );
        // The same fixed point: with a tighter tolerance both agree to ~1e-6.
        let seq = bp(Schedule::Sequential, 1e-9).run(&mrf);
        let res = bp(Schedule::Residual, 1e-9).run(&mrf);
        assert!(seq.convergence().converged && res.convergence().converged);
        let d = max_node_diff(&mrf, &seq, &res);
        assert!(d < 1e-6, "k = {k}: marginals differ by {d}");
    }
}

#[test]
fn residual_damped_and_max_product_reach_fixed_points() {
    let mrf = ba_model(1500, 2, 11);
    for (damping, mode) in [
        (0.5, BpMode::SumProduct),
        (0.0, BpMode::MaxProduct),
        (0.3, BpMode::MaxProduct),
    ] {
        let cfg = |schedule| LoopyBp {
            damping,
            mode,
            ..bp(schedule, 1e-10)
        };
        let (res, msgs) = cfg(Schedule::Residual).run_from(&mrf, None).unwrap();
        assert!(res.convergence().converged, "{damping} {mode:?}");
        assert!(res.convergence().max_residual < 1e-10);
        // A fixed point of the sequential updates: one sequential sweep from residual's
        // messages changes no message by 1e-10.
        let (again, _) = cfg(Schedule::Sequential)
            .run_from(&mrf, Some(&msgs))
            .unwrap();
        assert!(again.convergence().converged, "{damping} {mode:?}");
        assert_eq!(again.convergence().iterations, 1, "{damping} {mode:?}");
        // Undamped max-product has several fixed points on this loopy graph (flooding and
        // sequential already end at different ones); elsewhere the schedules agree.
        if damping > 0.0 {
            let seq = cfg(Schedule::Sequential).run(&mrf);
            let d = max_node_diff(&mrf, &seq, &res);
            assert!(d < 1e-7, "{damping} {mode:?}: marginals differ by {d}");
        }
    }
}

#[test]
fn residual_is_deterministic_and_caps_its_work() {
    let mrf = ba_model(2000, 2, 3);
    let a = bp(Schedule::Residual, 1e-6).run(&mrf);
    let b = bp(Schedule::Residual, 1e-6).run(&mrf);
    assert_eq!(a, b);
    for max_iters in [0, 1, 2, 3, 5] {
        let r = LoopyBp {
            max_iters,
            ..bp(Schedule::Residual, 1e-12)
        }
        .run(&mrf);
        assert!(!r.convergence().converged);
        assert!(r.convergence().iterations <= max_iters);
    }
    // tol = 0 is never met: the run stops at the cap (or at an exact fixed point).
    let r = LoopyBp {
        max_iters: 40,
        ..bp(Schedule::Residual, 0.0)
    }
    .run(&mrf);
    assert!(!r.convergence().converged);
    assert!(r.convergence().iterations <= 40);
}

#[test]
fn residual_warm_start_from_the_fixed_point_only_verifies() {
    let mrf = ba_model(2000, 2, 5);
    let cfg = bp(Schedule::Residual, 1e-8);
    let (cold, msgs) = cfg.run_from(&mrf, None).unwrap();
    assert!(cold.convergence().converged);
    let (warm, _) = cfg.run_from(&mrf, Some(&msgs)).unwrap();
    assert!(warm.convergence().converged);
    // One pass computes every pending message; nothing is above the tolerance.
    assert_eq!(warm.convergence().iterations, 1);
    assert!(max_node_diff(&mrf, &cold, &warm) < 1e-8);
}
