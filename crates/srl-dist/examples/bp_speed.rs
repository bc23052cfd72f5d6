//! One-worker speed of srl-dist beside srl-infer's flooding `LoopyBp` on the benchmark
//! model (Barabási–Albert, `m0 = 2`, `k = 2`, coupling 0.5, seed 42), 5 iterations.
//!
//! Run with one rayon thread for srl-infer's one-thread rate:
//! `RAYON_NUM_THREADS=1 cargo run --release -p srl-dist --example bp_speed -- 1000000`
//! (the first argument is the node count, default 10^6; a second argument `infer`,
//! `infer-damped`, `dist` or `build` runs srl-infer (or one srl-dist worker) once, or only builds the model, for instruction
//! counts; `uai PATH` writes the model as a UAI file). Prints the directed messages per second
//! of each (best of 3 runs; srl-dist's time is its iteration time, without start-up;
//! srl-infer's whole run, and its run minus a run of 0 iterations).

use std::sync::Arc;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_dist::{DistBp, barabasi_albert_mrf};
use srl_infer::{Beliefs, LoopyBp};

#[allow(clippy::print_stdout)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mrf = Arc::new(barabasi_albert_mrf(n, 2, 0.5, &mut rng)?);
    let iters = 5;
    let msgs = (iters * mrf.num_directed_edges()) as f64;
    let bp = LoopyBp {
        max_iters: iters,
        tol: 0.0,
        beliefs: Beliefs::NodesOnly,
        ..LoopyBp::default()
    };
    // `infer` / `infer-damped` / `build`: one run of srl-infer only (for instruction counts
    // with `valgrind --tool=callgrind`, the difference to `build` is the run's cost).
    match std::env::args().nth(2).as_deref() {
        Some("build") => return Ok(()),
        Some("uai") => {
            let path = std::env::args().nth(3).ok_or("uai needs a path")?;
            mrf.write_uai(&path)?;
            return Ok(());
        }
        Some("infer") => {
            let _ = bp.run(&mrf);
            return Ok(());
        }
        Some("dist") => {
            let _ = DistBp::from_loopy(&bp).run_threads(Arc::clone(&mrf), 1)?;
            return Ok(());
        }
        Some("infer-damped") => {
            let _ = LoopyBp { damping: 0.3, ..bp }.run(&mrf);
            return Ok(());
        }
        _ => {}
    }
    let mut best_infer = f64::INFINITY;
    let mut best_fixed = f64::INFINITY;
    let mut best_dist = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        let m = bp.run(&mrf);
        best_infer = best_infer.min(t.elapsed().as_secs_f64());
        assert_eq!(m.convergence().iterations, iters);
        // srl-infer's cost outside the iterations (plan, beliefs, marginals): a run of 0
        // iterations.
        let t = Instant::now();
        let _ = LoopyBp { max_iters: 0, ..bp }.run(&mrf);
        best_fixed = best_fixed.min(t.elapsed().as_secs_f64());
        let d = DistBp::from_loopy(&bp).run_threads(Arc::clone(&mrf), 1)?;
        let s = d.stats().iter().map(|w| w.seconds).fold(0.0, f64::max);
        best_dist = best_dist.min(s);
    }
    let infer_iters = (best_infer - best_fixed).max(1e-9);
    println!(
        "n={n} srl-infer: {:.3e} messages/s ({best_infer:.3} s; iterations only {:.3e}/s, {infer_iters:.3} s), \
         srl-dist 1 worker: {:.3e} messages/s ({best_dist:.3} s), ratio {:.2} (iterations only {:.2})",
        msgs / best_infer,
        msgs / infer_iters,
        msgs / best_dist,
        best_infer / best_dist,
        infer_iters / best_dist
    );
    Ok(())
}
