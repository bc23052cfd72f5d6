//! MRF inference on a 4 x 4 grid of binary variables: build the model with `MrfBuilder`
//! (one shared Potts table, a field on each variable, one corner observed), run loopy BP
//! and the exact oracle, compare their marginals and MAP assignments.
//!
//! `cargo run -p srl-infer --example mrf_inference` (also run by `cargo test -p srl-infer`).
#![allow(clippy::print_stdout)]

use srl_infer::{Exact, LoopyBp, MrfBuilder, PairTable};

/// Builds and solves the grid; public so the crate's tests run it.
pub fn main() -> Result<(), srl_infer::InferError> {
    let side = 4;
    let mut b = MrfBuilder::new();
    let x: Vec<usize> = (0..side * side).map(|_| b.add_variable(2)).collect();
    for (i, &v) in x.iter().enumerate() {
        b.set_unary(v, &[0.0, 0.5 * ((i * 7 % 5) as f64 - 2.0)]);
    }
    let potts = PairTable::potts(2, 0.3, 0.0); // shared by all 24 edges
    for r in 0..side {
        for c in 0..side {
            if c + 1 < side {
                b.add_edge(x[r * side + c], x[r * side + c + 1], &potts);
            }
            if r + 1 < side {
                b.add_edge(x[r * side + c], x[(r + 1) * side + c], &potts);
            }
        }
    }
    b.observe(x[0], 1);
    let mrf = b.build()?;

    let bp = LoopyBp::default().run(&mrf);
    let exact = Exact::default().marginals(&mrf)?;
    let err = x
        .iter()
        .map(|&v| (bp.node(v)[1] - exact.node(v)[1]).abs())
        .fold(0.0, f64::max);
    println!(
        "loopy BP: converged {} after {} iterations; max |P_bp(x=1) - P_exact(x=1)| = {err:.4}",
        bp.convergence().converged,
        bp.convergence().iterations
    );
    let (bp_map, exact_map) = (LoopyBp::default().map(&mrf), Exact::default().map(&mrf)?);
    println!(
        "MAP: max-product {:?} (log score {:.4}), exact {:?} (log score {:.4})",
        bp_map.states, bp_map.log_score, exact_map.states, exact_map.log_score
    );
    assert!(err < 0.05 && bp_map.log_score <= exact_map.log_score + 1e-9);
    Ok(())
}
