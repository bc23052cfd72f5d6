//! Prints, with full precision (`{:?}` of every `f64`), the marginals, MAP assignments and
//! convergence reports of every algorithm on a set of seeded ordinary models (finite
//! potentials, small dynamic range): trees, cycles, grids and power-law graphs, k = 2, 3
//! and mixed, with and without evidence and damping.
//!
//! Its output is diffed between two versions of the crate to prove that a change keeps
//! ordinary-model outputs bit-identical:
//!
//! `cargo run -p srl-infer --release --example bit_identity > out.txt`

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_infer::{
    BpMode, Exact, Gibbs, Icm, LoopyBp, Marginals, MeanField, MrfParts, PairTable, PairwiseMrf,
    Schedule, Sweep,
};

fn model(seed: u64, n: usize, kind: u32, ks: &[usize], evidence: bool, scale: f64) -> PairwiseMrf {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let num_states: Vec<usize> = (0..n).map(|_| ks[rng.random_range(0..ks.len())]).collect();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    match kind {
        // Random tree.
        0 => {
            for v in 1..n as u32 {
                edges.push((rng.random_range(0..v), v));
            }
        }
        // Cycle plus chords.
        1 => {
            for v in 0..n as u32 {
                edges.push((v, (v + 1) % n as u32));
            }
            for _ in 0..n / 3 {
                let (a, b) = (rng.random_range(0..n as u32), rng.random_range(0..n as u32));
                if a != b {
                    edges.push((a, b));
                }
            }
        }
        // Preferential attachment, m = 2.
        _ => {
            let mut ends: Vec<u32> = vec![0];
            for v in 1..n as u32 {
                for _ in 0..2 {
                    let u = ends[rng.random_range(0..ends.len())];
                    if u != v {
                        edges.push((u, v));
                        ends.push(u);
                        ends.push(v);
                    }
                }
            }
        }
    }
    let mut tables = Vec::new();
    let mut edge_tables = Vec::new();
    for &(u, v) in &edges {
        let (ku, kv) = (num_states[u as usize], num_states[v as usize]);
        edge_tables.push(tables.len() as u32);
        tables.push(PairTable::from_fn(ku, kv, |_, _| {
            scale * rng.random_range(-1.0..1.0)
        }));
    }
    let total: usize = num_states.iter().sum();
    let unary = (0..total)
        .map(|_| scale * rng.random_range(-1.0..1.0))
        .collect();
    let evidence = if evidence {
        num_states
            .iter()
            .map(|&k| {
                if rng.random_range(0.0..1.0) < 0.2 {
                    Some(rng.random_range(0..k as u32))
                } else {
                    None
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    PairwiseMrf::new(MrfParts {
        num_states,
        unary,
        edges,
        edge_tables,
        tables,
        evidence,
    })
    .expect("valid model")
}

#[allow(clippy::print_stdout)]
fn print_marginals(name: &str, m: &Marginals, n: usize, ne: usize) {
    println!("{name} {:?} logZ={:?}", m.convergence(), m.log_partition());
    for v in 0..n {
        println!("  node {v} {:?} {:?}", m.node(v), m.node_log(v));
    }
    for e in 0..ne {
        if let Some(p) = m.edge(e) {
            println!("  edge {e} {p:?} {:?}", m.edge_log(e).unwrap_or(&[]));
        }
    }
}

#[allow(clippy::print_stdout)]
fn main() {
    let mut id = 0u64;
    for kind in 0..3 {
        for ks in [&[2usize][..], &[3], &[2, 3, 4], &[7]] {
            for evidence in [false, true] {
                for scale in [0.5, 3.0, 250.0] {
                    for n in [5usize, 9, 60] {
                        id += 1;
                        let mrf = model(id, n, kind, ks, evidence, scale);
                        let ne = mrf.num_edges();
                        println!(
                            "model {id} kind={kind} ks={ks:?} ev={evidence} scale={scale} n={n}"
                        );
                        for schedule in
                            [Schedule::Flooding, Schedule::Sequential, Schedule::Residual]
                        {
                            for mode in [BpMode::SumProduct, BpMode::MaxProduct] {
                                for damping in [0.0, 0.3] {
                                    let bp = LoopyBp {
                                        schedule,
                                        mode,
                                        damping,
                                        max_iters: 50,
                                        ..LoopyBp::default()
                                    };
                                    let name = format!("bp {schedule:?} {mode:?} d={damping}");
                                    print_marginals(&name, &bp.run(&mrf), n, ne);
                                }
                            }
                            let bp = LoopyBp {
                                schedule,
                                max_iters: 50,
                                ..LoopyBp::default()
                            };
                            println!("bp-map {schedule:?} {:?}", bp.map(&mrf));
                        }
                        for sweep in [Sweep::Sequential, Sweep::Parallel] {
                            for damping in [0.0, 0.4] {
                                let mf = MeanField {
                                    sweep,
                                    damping,
                                    max_iters: 60,
                                    ..MeanField::default()
                                };
                                let m = mf.run(&mrf);
                                print_marginals(&format!("mf {sweep:?} d={damping}"), &m, n, ne);
                                println!(
                                    "mf-violation {:?}",
                                    MeanField::fixed_point_violation(&mrf, &m)
                                );
                            }
                        }
                        let mut rng = ChaCha8Rng::seed_from_u64(id ^ 77);
                        let g = Gibbs {
                            burn_in: 20,
                            samples: 40,
                            ..Gibbs::default()
                        }
                        .run(&mrf, &mut rng)
                        .expect("valid");
                        print_marginals("gibbs", &g.marginals, n, ne);
                        println!("gibbs-best {:?}", g.best);
                        println!("icm {:?}", Icm::default().run(&mrf));
                        let ex = Exact::default();
                        match ex.marginals(&mrf) {
                            Ok(m) => print_marginals("exact", &m, n, ne),
                            Err(e) => println!("exact error {e}"),
                        }
                        println!("exact-logz {:?}", ex.log_partition(&mrf).ok());
                        println!("exact-map {:?}", ex.map(&mrf).ok());
                        if n <= 9 {
                            match ex.enumerate_marginals(&mrf) {
                                Ok(m) => print_marginals("enum", &m, n, ne),
                                Err(e) => println!("enum error {e}"),
                            }
                        }
                        println!("forest {:?}", Exact::is_forest(&mrf));
                        println!("score {:?}", mrf.log_score(&vec![0; n]));
                    }
                }
            }
        }
    }
}
