//! Compiles a network for trimming (issue 30): for each of the first three non-leaf roots
//! as the class, with every leaf as a feature, prints the elimination plan (heuristic and
//! peak table, known before any table is built) and the compile time.
//!
//! ```text
//! cargo run --release -p srl-bayes --example compile_network -- NETWORK.bif[.gz] [MAX_TABLE]
//! ```
//! Without an argument it compiles a small built-in network. `SRL_CLASSES=a,b,c` names the
//! classes instead (e.g. the ones the `trimming` experiment draws); `SRL_LEAVES=k` keeps the
//! first `k` leaves as the features (a smaller problem of the same network, for timing).

#![allow(clippy::print_stdout)]

use std::time::Instant;

use srl_bayes::compile::CompiledJoint;
use srl_bayes::compile::{candidate_plans, compile_planned, plan};
use srl_bayes::trim::{BranchAndBound, JointAgreement, exhaustive_maa, information_gain_selection};
use srl_bayes::{BayesError, BayesianNetwork, Cpt, ThresholdClassifier, Variable};

/// With `SRL_SEARCH` set: the `trimming` experiment's Figure 7 protocol on the compiled
/// joint (unit costs, budget max(1, floor(n/3)), then at each threshold branch and bound and
/// the exhaustive check), timed. `SRL_SEARCH=separate` runs information gain once and each
/// threshold's exhaustive check as its own lattice walk (`information_gain_selection`,
/// `exhaustive_maa`); otherwise one walk serves all (`JointAgreement::exhaustive_multi`),
/// as the experiment does; `SRL_SEARCH=bnb` runs branch and bound alone.
fn search(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
    c: CompiledJoint,
) -> Result<(), Box<dyn std::error::Error>> {
    const THRESHOLDS: [f64; 5] = [0.1, 0.3, 0.5, 0.7, 0.9];
    let n = clf.features.len();
    let budget = (n / 3).max(1) as f64;
    let costs = vec![1.0; n];
    let joint = JointAgreement::from_compiled(net, clf, c)?;
    let mode = std::env::var("SRL_SEARCH").unwrap_or_default();
    let t = Instant::now();
    let multi = if mode == "bnb" {
        None
    } else if mode == "separate" {
        let ig = information_gain_selection(&joint, &costs, budget)?;
        println!(
            "  information gain {:?} in {:.3} s",
            ig.subset,
            t.elapsed().as_secs_f64()
        );
        None
    } else {
        let m = joint.exhaustive_multi(&costs, budget, &THRESHOLDS)?;
        println!(
            "  one lattice walk ({} subsets: information gain and MAA at {} thresholds) in {:.3} s; information gain {:?}",
            m.subsets,
            THRESHOLDS.len(),
            t.elapsed().as_secs_f64(),
            srl_bayes::trim::mask_to_vec(m.information_gain.0)
        );
        Some(m)
    };
    for (k, t) in THRESHOLDS.into_iter().enumerate() {
        let model = joint.with_threshold(t)?;
        let s = Instant::now();
        let bb = BranchAndBound::default().run(&model, &costs, budget)?;
        let bnb = s.elapsed().as_secs_f64();
        let s = Instant::now();
        let ex = match &multi {
            Some(m) => m.trimming(&model, m.maa[k].0),
            None if mode == "bnb" => bb.clone(),
            None => exhaustive_maa(&model, &costs, budget)?,
        };
        println!(
            "  T = {t}: bnb {:.3} s ({} evaluations, ECA {:.15}), exhaustive {:.3} s (ECA {:.15}, {:?})",
            bnb,
            bb.evaluations(),
            bb.eca,
            s.elapsed().as_secs_f64(),
            ex.eca,
            ex.subset
        );
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let net = match args.get(1) {
        Some(p) => srl_bayes::io::read_bif(std::path::Path::new(p))?,
        None => BayesianNetwork::new(
            vec![
                Variable::numbered("disease", 2),
                Variable::numbered("test1", 2),
                Variable::numbered("test2", 2),
            ],
            vec![
                Cpt {
                    parents: vec![],
                    probs: vec![0.1, 0.9],
                },
                Cpt {
                    parents: vec![0],
                    probs: vec![0.9, 0.1, 0.2, 0.8],
                },
                Cpt {
                    parents: vec![0],
                    probs: vec![0.7, 0.3, 0.0, 1.0],
                },
            ],
        )?,
    };
    let max_table: usize = match args.get(2) {
        Some(s) => s.parse()?,
        None => 1 << 26,
    };
    let mut leaves = net.leaves();
    if let Some(k) = std::env::var("SRL_LEAVES")
        .ok()
        .and_then(|k| k.parse().ok())
    {
        leaves.truncate(k);
    }
    let classes: Vec<usize> = match std::env::var("SRL_CLASSES") {
        Ok(names) => names
            .split(',')
            .map(|n| {
                (0..net.len())
                    .find(|&v| net.variable(v).name == n)
                    .ok_or_else(|| format!("no variable {n}"))
            })
            .collect::<Result<_, _>>()?,
        Err(_) => net
            .roots()
            .into_iter()
            .filter(|r| !leaves.contains(r))
            .take(3)
            .collect(),
    };
    for class in classes {
        let clf = ThresholdClassifier {
            class,
            positive_state: 0,
            features: leaves.clone(),
            threshold: 0.5,
        };
        let t = Instant::now();
        let p = plan(&net, &clf, max_table)?;
        let planned = t.elapsed().as_secs_f64();
        println!(
            "class {} ({} states): {} leaves, {} instantiations; {} with context limit {:?}, class {:?}{}: {} variables summed first, {} steps after, peak table {}, about {:.2e} operations (planned in {:.3} s)",
            net.variable(class).name,
            net.cardinality(class),
            leaves.len(),
            p.instantiations,
            p.heuristic.name(),
            p.context_limit,
            p.class,
            p.complement.as_ref().map_or_else(String::new, |c| format!(
                " (complement: {} with context limit {:?}, class {:?}, {:.2e} operations)",
                c.heuristic.name(),
                c.context_limit,
                c.class,
                c.operations as f64
            )),
            p.order.len(),
            p.steps.len(),
            p.peak_entries,
            p.operations as f64,
            planned
        );
        if std::env::var_os("SRL_SHOW_PLANS").is_some() {
            for c in candidate_plans(&net, &clf, max_table)? {
                println!(
                    "  candidate {} limit {:?}: peak {}, {:.2e} operations, branch order {:?}",
                    c.heuristic.name(),
                    c.context_limit,
                    c.peak_entries,
                    c.operations as f64,
                    c.branch_order()
                );
            }
        }
        let t = Instant::now();
        let c = match compile_planned(&net, &clf, p, max_table) {
            Ok(c) => c,
            Err(e @ BayesError::TooLarge { .. }) => {
                println!("  not compiled: {e}");
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        // a checksum of every weight's bits (FNV-1a), to compare two builds' compilations
        let digest = c
            .weights
            .iter()
            .flatten()
            .fold(0xcbf2_9ce4_8422_2325_u64, |h, w| {
                (h ^ w.to_bits()).wrapping_mul(0x0100_0000_01b3)
            });
        println!(
            "  compiled in {:.3} s; total weight {:.12}; weights digest {digest:016x}",
            t.elapsed().as_secs_f64(),
            c.total
        );
        if std::env::var_os("SRL_SEARCH").is_some() {
            search(&net, &clf, c)?;
        }
    }
    Ok(())
}
