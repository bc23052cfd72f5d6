//! Times loopy BP on a general factor graph read from a UAI `MARKOV` or `BAYES` file and
//! prints a fingerprint of the marginals, so two builds (or thread counts) can be
//! compared bit for bit:
//!
//! `cargo run -p srl-infer --release --example factor_bp_speed -- MODEL.uai SWEEPS [SCHEDULES] [RUNS] [TOL]`
//!
//! `SCHEDULES` is a comma-separated subset of `flooding`, `sequential`, `residual`
//! (default `flooding`); `RUNS` repeats each (default 3). Each run does `SWEEPS` sweeps
//! (`tolerance` `TOL`, default 1e-300 as `benches/factor_graph.rs` and libDAI's
//! `tol=1e-300`: every sweep unless one changes no message at all; with a larger `TOL`
//! the run stops when converged, and the line says so) on the rayon pool of
//! `RAYON_NUM_THREADS` threads, setup and final marginals included.
//! A message is one factor-to-variable message, so the rate is
//! `SWEEPS · Σ_f |scope(f)|` per second, per wall second and per CPU second
//! (`/proc/self/stat`; the machine may be shared). The bench's model:
//! `SRL_FACTOR_UAI=ho.uai cargo bench -p srl-benches --bench factor_graph -- --list`.

#[path = "common/cpu.rs"]
mod cpu;

use std::time::Instant;

use cpu::cpu_seconds;
use srl_infer::FactorGraph;
use srl_infer::factor_graph::{FactorBp, FactorSchedule};

#[allow(clippy::print_stdout, clippy::print_stderr)]
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!(
            "usage: factor_bp_speed MODEL.uai SWEEPS [flooding,sequential,residual] [RUNS] [TOL]"
        );
        std::process::exit(2);
    }
    let (g, kind, _) = match FactorGraph::read_uai(&args[1]) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let sweeps: usize = args[2].parse().unwrap_or(10).max(1);
    let schedules = args.get(3).map_or("flooding", String::as_str);
    let runs: usize = args.get(4).and_then(|r| r.parse().ok()).unwrap_or(3).max(1);
    let tolerance: f64 = args.get(5).and_then(|t| t.parse().ok()).unwrap_or(1e-300);
    let edges: usize = g.factors().iter().map(|f| f.vars.len()).sum();
    println!(
        "{}: {kind:?}, {} variables, {} factors, {edges} factor-variable edges, {} threads",
        args[1],
        g.num_vars(),
        g.factors().len(),
        rayon::current_num_threads()
    );
    for name in schedules.split(',') {
        let schedule = match name {
            "flooding" => FactorSchedule::Flooding,
            "sequential" => FactorSchedule::Sequential,
            "residual" => FactorSchedule::Residual,
            other => {
                eprintln!("unknown schedule {other}");
                std::process::exit(2);
            }
        };
        let bp = FactorBp {
            max_iters: sweeps,
            tolerance,
            schedule,
            ..FactorBp::default()
        };
        for _ in 0..runs {
            let (t, c) = (Instant::now(), cpu_seconds());
            let m = match bp.marginals(&g) {
                Ok(m) => m,
                Err(e) => {
                    eprintln!("error: {e}");
                    std::process::exit(1);
                }
            };
            let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
            let msgs = (m.convergence().iterations * edges) as f64;
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            for v in 0..m.num_nodes() {
                for p in m.node(v) {
                    for b in p.to_bits().to_le_bytes() {
                        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                    }
                }
            }
            println!(
                "{name}: {} sweeps{}, {:.6} s wall, {:.3} s CPU, {:.3e} messages/s wall, {:.3e} per CPU second, fingerprint {h:016x}",
                m.convergence().iterations,
                if m.convergence().converged {
                    " (converged)"
                } else {
                    ""
                },
                wall,
                cpu,
                msgs / wall,
                msgs / cpu.max(1e-9),
            );
        }
    }
}
