//! Runs loopy BP (and optionally mean field / Gibbs) on a seeded Barabási–Albert graph, to
//! measure wall time and peak memory outside criterion:
//!
//! `cargo run -p srl-infer --release --example powerlaw_lbp -- 1000000 2 10 [MODEL.uai|-] [SCHEDULE] [PRECISION] [lbp-only]`
//! (arguments: nodes, states, iterations, optionally a UAI file or `-` for none, the
//! LBP schedule `flooding` (default), `sequential` or `residual`, the message storage
//! `f64` (default) or `f32`, see [`MessagePrecision`], and `lbp-only` to skip the mean
//! field and Gibbs runs that otherwise follow), e.g. under
//! `/usr/bin/time -v`. With a UAI path the model goes through the file: it is written there
//! first if the file does not exist, then read back with [`PairwiseMrf::read_uai`], so the
//! run measures the reader's time and peak memory too (an existing file is read, never
//! overwritten, and the model is then not built in the process: the peak is the reader's
//! and the run's).

#[path = "common/cpu.rs"]
mod cpu;
#[path = "common/powerlaw_model.rs"]
mod powerlaw_model;

use std::time::Instant;

use cpu::cpu_seconds;
use powerlaw_model::{powerlaw_mrf, powerlaw_rng};

use srl_infer::{
    Beliefs, Gibbs, LoopyBp, MeanField, MessagePrecision, PairwiseMrf, Schedule, Sweep,
};

#[allow(clippy::print_stdout)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let uai = raw
        .get(3)
        .filter(|p| p.as_str() != "-")
        .map(std::path::PathBuf::from);
    let schedule = match raw.get(4).map(String::as_str) {
        None | Some("flooding") => Schedule::Flooding,
        Some("sequential") => Schedule::Sequential,
        Some("residual") => Schedule::Residual,
        Some(other) => return Err(format!("unknown schedule {other:?}").into()),
    };
    let precision = match raw.get(5).map(String::as_str) {
        None | Some("f64") => MessagePrecision::F64,
        Some("f32") => MessagePrecision::F32,
        Some(other) => return Err(format!("unknown precision {other:?} (f64 or f32)").into()),
    };
    let lbp_only = match raw.get(6).map(String::as_str) {
        None => false,
        Some("lbp-only") => true,
        Some(other) => return Err(format!("unknown last argument {other:?} (lbp-only)").into()),
    };
    let args: Vec<usize> = raw
        .iter()
        .take(3)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let n = args.first().copied().unwrap_or(100_000);
    let k = args.get(1).copied().unwrap_or(2);
    let iters = args.get(2).copied().unwrap_or(10);
    // with an existing UAI file the model is not built in this process (its peak memory
    // is then the reader's and the run's alone)
    let built = match &uai {
        Some(path) if path.exists() => None,
        _ => Some(powerlaw_mrf(n, k, 42)?),
    };
    let mut rng = match &built {
        Some((_, rng)) => rng.clone(),
        None => powerlaw_rng(n, k, 42),
    };
    let mrf = match uai {
        Some(path) => {
            if let Some((mrf, _)) = built {
                mrf.write_uai(&path)?;
            }
            let (t, c) = (Instant::now(), cpu_seconds());
            let read = PairwiseMrf::read_uai(&path)?;
            println!(
                "read {}: wall {:.3} s, cpu {:.2} s, {} edges, {} distinct tables",
                path.display(),
                t.elapsed().as_secs_f64(),
                cpu_seconds() - c,
                read.num_edges(),
                read.tables().len()
            );
            read
        }
        None => built.map(|(m, _)| m).ok_or("no model")?,
    };
    let m = mrf.num_edges();
    let (t, c) = (Instant::now(), cpu_seconds());
    let bp = LoopyBp {
        max_iters: iters,
        tol: 0.0,
        beliefs: Beliefs::NodesOnly,
        schedule,
        precision,
        ..LoopyBp::default()
    }
    .run(&mrf);
    let (s, cs) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
    // Message updates computed: the reported iterations are full-sweep equivalents for
    // every schedule (residual BP may stop early).
    let done = bp.convergence().iterations;
    let msgs = (done * 2 * m) as f64;
    println!(
        "lbp {schedule:?} {precision:?} n={n} m={m} k={k} iters={done}: wall {s:.3} s ({:.3e} msg/s, \
         {:.2} it/s), cpu {cs:.2} s ({:.3e} msg/cpu-s), residual {:.3e}",
        msgs / s,
        done as f64 / s,
        msgs / cs,
        bp.convergence().max_residual,
    );
    if lbp_only {
        return Ok(());
    }
    let (t, c) = (Instant::now(), cpu_seconds());
    let mf = MeanField {
        max_iters: iters,
        tol: 0.0,
        sweep: Sweep::Parallel,
        beliefs: Beliefs::NodesOnly,
        ..MeanField::default()
    }
    .run(&mrf);
    let (s, cs) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
    println!(
        "mean field: wall {:.2} sweeps/s, cpu {:.2} sweeps/cpu-s, residual {:.3e}",
        iters as f64 / s,
        iters as f64 / cs,
        mf.convergence().max_residual
    );
    let (t, c) = (Instant::now(), cpu_seconds());
    let g = Gibbs {
        burn_in: iters.saturating_sub(1),
        samples: 1,
        beliefs: Beliefs::NodesOnly,
        ..Gibbs::default()
    }
    .run(&mrf, &mut rng)?;
    let (s, cs) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
    println!(
        "gibbs: wall {:.2} sweeps/s, cpu {:.2} sweeps/cpu-s, best log-score {:.3}",
        iters as f64 / s,
        iters as f64 / cs,
        g.best.log_score
    );
    Ok(())
}
