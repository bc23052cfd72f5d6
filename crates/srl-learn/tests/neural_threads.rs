//! Same seed, same bits for any thread count: the graph learners (and candle's CPU
//! `matmul`, which splits its work over `RAYON_NUM_THREADS` threads) through the pipeline,
//! run in child processes with `RAYON_NUM_THREADS=1` and `2`.
//!
//! The parent test starts this test binary twice with the ignored test
//! `child_prints_the_bits` and compares what the two children print.
#![cfg(feature = "neural")]

use std::process::Command;

use rand::SeedableRng as _;
use srl_graph::HomophilyParams;
use srl_learn::collective::{CollectiveMethod, CollectiveSettings, Protocol, evaluate_splits};

/// A graph large enough that candle's `matmul` of the hidden layer (`n x 64` by `64 x k`,
/// and its transposes in the backward pass) is split over the threads (gemm runs
/// single-threaded below about 48·48·256 multiply-adds).
fn bits() -> String {
    let g = HomophilyParams {
        num_nodes: 2500,
        num_labels: 5,
        avg_degree: 4.0,
        homophily: 0.8,
        num_features: 200,
        feature_on: 0.2,
        feature_off: 0.05,
        ..HomophilyParams::default()
    }
    .generate(&mut rand_chacha::ChaCha8Rng::seed_from_u64(11))
    .expect("graph");
    let mut s = CollectiveSettings::default();
    for p in [&mut s.mlp, &mut s.gcn, &mut s.appnp] {
        p.max_epochs = 10;
        p.patience = 10;
    }
    let splits = Protocol::RandomFolds { k: 3 }
        .splits(&g, 3, 0)
        .expect("splits");
    let mut methods = CollectiveMethod::GRAPH_LEARNERS.to_vec();
    methods.push(CollectiveMethod::Ica(srl_learn::LocalModel::Nb));
    let res = evaluate_splits(&s, &methods, &g, splits, 3).expect("runs");
    // FNV-1a over every probability's bits, per method.
    res.methods
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for split in &res.splits {
                for p in &split.methods[i].probabilities {
                    for b in p.to_bits().to_le_bytes() {
                        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                    }
                }
            }
            format!("{m}={h:016x}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
#[ignore = "a child of same_bits_for_any_thread_count"]
fn child_prints_the_bits() {
    let b = bits();
    #[allow(clippy::print_stdout)]
    {
        println!("BITS {b}");
    }
}

#[test]
fn same_bits_for_any_thread_count() {
    let exe = std::env::current_exe().expect("test binary");
    let run = |threads: &str| {
        let out = Command::new(&exe)
            .args([
                "--exact",
                "child_prints_the_bits",
                "--ignored",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .expect("child runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.split_once("BITS ").map(|(_, b)| b.trim().to_owned()))
            .expect("a BITS line")
    };
    let one = run("1");
    let two = run("2");
    assert_eq!(one, two);
    assert!(one.contains("GCN="));
}
