//! Times mean field and Gibbs sampling on a model read from a UAI file, and prints a
//! fingerprint of every output so two builds can be compared bit for bit:
//!
//! `cargo run -p srl-infer --release --example mf_gibbs_speed -- MODEL.uai SWEEPS [WHICH]`
//!
//! `WHICH` is a comma-separated subset of `mf-seq`, `mf-par`, `gibbs` (default: all three),
//! `lbp-seq`, `lbp-res`, `lbp-flood`. Each run does `SWEEPS` sweeps with `tol = 0` (mean
//! field) or `SWEEPS - 1` burn-in sweeps plus one counted sample (Gibbs, seeded
//! `ChaCha8Rng::seed_from_u64(7)`), node beliefs only, on the rayon pool of
//! `RAYON_NUM_THREADS` threads. The rate is variable updates (`SWEEPS · n`) per wall second
//! and per CPU second (`/proc/self/stat`; the machine may be shared), including each run's
//! setup and its final marginals. With `MFG_DUMP_DIR=DIR` set, each of these three jobs
//! also writes its node probabilities to `DIR/JOB.bin` (little-endian `f64`, after the
//! timing), to compare two builds' outputs. `lbp-seq` / `lbp-res` / `lbp-flood` run
//! sequential / residual / flooding loopy BP with the default `tol = 1e-6` and at most
//! `SWEEPS · 2m` messages, and print whether they converged, the work done (iterations =
//! messages computed / 2m), messages/s and a fingerprint of the marginals. Build a model
//! with `examples/powerlaw_lbp.rs` (it writes its Barabási–Albert model to the UAI path
//! given).

#[path = "common/cpu.rs"]
mod cpu;

use std::time::Instant;

use cpu::cpu_seconds;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_infer::{Beliefs, Gibbs, LoopyBp, Marginals, MeanField, PairwiseMrf, Schedule, Sweep};

/// FNV-1a over the bits of every node probability: equal fingerprints mean equal outputs.
fn fingerprint(m: &Marginals) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for v in 0..m.num_nodes() {
        for p in m.node(v) {
            for b in p.to_bits().to_le_bytes() {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}

#[allow(clippy::print_stdout)]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let (Some(path), Some(sweeps)) = (raw.first(), raw.get(1)) else {
        return Err(
            "usage: mf_gibbs_speed MODEL.uai SWEEPS [mf-seq,mf-par,gibbs,lbp-seq,lbp-res,lbp-flood]".into(),
        );
    };
    let sweeps: usize = sweeps.parse()?;
    let which = raw.get(2).map_or("mf-seq,mf-par,gibbs", String::as_str);
    let (t, c) = (Instant::now(), cpu_seconds());
    let mrf = PairwiseMrf::read_uai(path)?;
    let n = mrf.num_nodes();
    println!(
        "read {path}: {n} variables, {} edges, {} tables, wall {:.2} s, cpu {:.2} s, threads {}",
        mrf.num_edges(),
        mrf.tables().len(),
        t.elapsed().as_secs_f64(),
        cpu_seconds() - c,
        rayon::current_num_threads()
    );
    let updates = (sweeps * n) as f64;
    for job in which.split(',') {
        let (t, c0) = (Instant::now(), cpu_seconds());
        let (m, extra) = match job {
            "mf-seq" | "mf-par" => {
                let m = MeanField {
                    max_iters: sweeps,
                    tol: 0.0,
                    sweep: if job == "mf-seq" {
                        Sweep::Sequential
                    } else {
                        Sweep::Parallel
                    },
                    beliefs: Beliefs::NodesOnly,
                    ..MeanField::default()
                }
                .run(&mrf);
                let r = m.convergence().max_residual;
                (m, format!("residual {r:.6e}"))
            }
            "gibbs" => {
                let g = Gibbs {
                    burn_in: sweeps.saturating_sub(1),
                    samples: 1,
                    beliefs: Beliefs::NodesOnly,
                    ..Gibbs::default()
                }
                .run(&mrf, &mut ChaCha8Rng::seed_from_u64(7))?;
                let s = g.best.log_score;
                (g.marginals, format!("best log-score {s:.9}"))
            }
            "lbp-seq" | "lbp-res" | "lbp-flood" => {
                let m = LoopyBp {
                    max_iters: sweeps,
                    beliefs: Beliefs::NodesOnly,
                    schedule: match job {
                        "lbp-seq" => Schedule::Sequential,
                        "lbp-res" => Schedule::Residual,
                        _ => Schedule::Flooding,
                    },
                    ..LoopyBp::default()
                }
                .run(&mrf);
                let c = m.convergence();
                let (s, cs) = (t.elapsed().as_secs_f64(), cpu_seconds() - c0);
                let msgs = (c.iterations * mrf.num_directed_edges()) as f64;
                println!(
                    "{job}: converged {} after {} iterations (cap {sweeps}), residual {:.3e}, \
                     wall {s:.3} s ({:.3e} msg/s), cpu {cs:.2} s ({:.3e} msg/cpu-s), \
                     fingerprint {:016x}",
                    c.converged,
                    c.iterations,
                    c.max_residual,
                    msgs / s,
                    msgs / cs,
                    fingerprint(&m)
                );
                continue;
            }
            other => return Err(format!("unknown job {other:?}").into()),
        };
        let (s, cs) = (t.elapsed().as_secs_f64(), cpu_seconds() - c0);
        if let Ok(dir) = std::env::var("MFG_DUMP_DIR") {
            // Node probabilities as little-endian f64, to compare two builds' outputs.
            let bytes: Vec<u8> = (0..m.num_nodes())
                .flat_map(|v| m.node(v).to_vec())
                .flat_map(f64::to_le_bytes)
                .collect();
            std::fs::write(std::path::Path::new(&dir).join(format!("{job}.bin")), bytes)?;
        }
        println!(
            "{job}: {sweeps} sweeps, wall {s:.3} s ({:.3e} updates/s), cpu {cs:.2} s \
             ({:.3e} updates/cpu-s), {extra}, fingerprint {:016x}",
            updates / s,
            updates / cs,
            fingerprint(&m)
        );
    }
    Ok(())
}
