//! Issue 30: the compiled form of the trimming queries (`srl_bayes::compile`) equals the
//! tabulated joint of plain variable elimination, entry by entry, on random networks (with
//! zero CPT entries, multi-state classes and features) and on the bnlearn networks where
//! both run; its plan reports the peak before work and refuses above the limit.

#![allow(clippy::print_stderr)] // the note of a skipped data set

use std::path::PathBuf;

use rand::{Rng as _, RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use srl_bayes::compile::{
    ClassMode, CompiledJoint, candidate_plans, compile, compile_planned, plan,
};
use srl_bayes::io::read_bif;
use srl_bayes::{
    BayesError, BayesianNetwork, Cpt, ThresholdClassifier, Variable, VariableElimination,
};

fn data(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("SRL_DATA_DIR")?;
    let p = PathBuf::from(dir)
        .join("bnlearn_bif")
        .join(format!("{name}.bif.gz"));
    p.exists().then_some(p)
}

/// A random DAG over `n` variables (parents among the earlier ones, at most 3), 2-3
/// states, CPT rows with about a fifth of the entries zero.
fn random_network(rng: &mut ChaCha8Rng, n: usize) -> BayesianNetwork {
    let vars: Vec<Variable> = (0..n)
        .map(|i| Variable::numbered(format!("v{i}"), 2 + (rng.next_u32() % 2) as usize))
        .collect();
    let mut cpts = Vec::new();
    for i in 0..n {
        let mut parents = Vec::new();
        for p in 0..i {
            if parents.len() < 3 && rng.next_u32().is_multiple_of(3) {
                parents.push(p);
            }
        }
        let rows: usize = parents.iter().map(|&p| vars[p].cardinality()).product();
        let k = vars[i].cardinality();
        let mut probs = Vec::new();
        for _ in 0..rows {
            let mut row: Vec<f64> = (0..k)
                .map(|_| {
                    if rng.next_u32().is_multiple_of(5) {
                        0.0
                    } else {
                        f64::from(rng.next_u32() % 1000 + 1)
                    }
                })
                .collect();
            if row.iter().all(|&x| x == 0.0) {
                row[0] = 1.0;
            }
            let s: f64 = row.iter().sum();
            probs.extend(row.iter().map(|x| x / s));
        }
        cpts.push(Cpt { parents, probs });
    }
    BayesianNetwork::new(vars, cpts).expect("valid random network")
}

/// Compiled statistics against `VariableElimination::joint` over (features, class): the
/// chosen plan's, and those of the first plan, the last seeded one (class kept) and the
/// class split (fixed to the positive state, with its complement).
fn check_against_ve(net: &BayesianNetwork, clf: &ThresholdClassifier, what: &str) {
    let chosen = compile(net, clf, 1 << 26).expect("compiles");
    let plans = candidate_plans(net, clf, 1 << 26).expect("plans");
    let split = plans.iter().rposition(|p| p.complement.is_some());
    assert_eq!(
        split,
        Some(plans.len() - 1),
        "{what}: the split is the last candidate"
    );
    let kept_last = plans.len() - 2;
    assert_eq!(plans[kept_last].class, ClassMode::Kept);
    assert!(matches!(plans[plans.len() - 1].class, ClassMode::Fixed(s) if s == clf.positive_state));
    let mut runs = vec![("chosen", chosen)];
    for (name, k) in [
        ("first", 0),
        ("seeded", kept_last),
        ("split", plans.len() - 1),
    ] {
        let c = compile_planned(net, clf, plans[k].clone(), 1 << 26).expect("compiles");
        runs.push((name, c));
    }
    for (name, c) in runs {
        check_one(net, clf, &c, &format!("{what} ({name} plan)"));
    }
}

fn check_one(net: &BayesianNetwork, clf: &ThresholdClassifier, c: &CompiledJoint, what: &str) {
    let mut scope = clf.features.clone();
    scope.push(clf.class);
    let f = VariableElimination {
        max_entries: 1 << 26,
    }
    .joint(net, &scope, &[])
    .expect("tabulates");
    let k = net.cardinality(clf.class);
    assert_eq!(c.weights.len() * k, f.values().len(), "{what}");
    let scale = f.total();
    let cards: Vec<usize> = clf.features.iter().map(|&v| net.cardinality(v)).collect();
    for (x, row) in f.values().chunks(k).enumerate() {
        // x is in feature order (last fastest); the compiled table is in `c.order`
        let mut digits = vec![0usize; cards.len()];
        let mut r = x;
        for i in (0..cards.len()).rev() {
            digits[i] = r % cards[i];
            r /= cards[i];
        }
        let idx = c.order.iter().fold(0, |a, &i| a * cards[i] + digits[i]);
        let [pos, neg] = c.weights[idx];
        let wd = row[clf.positive_state];
        let wn = row.iter().sum::<f64>() - wd;
        assert!(
            (pos - wd).abs() <= 1e-12 * scale && (neg - wn).abs() <= 1e-12 * scale,
            "{what} x = {x}: ({pos}, {neg}) vs ({wd}, {wn})"
        );
    }
    assert!((c.total - scale).abs() <= 1e-12 * scale, "{what}: total");
}

#[test]
fn compiled_joint_equals_variable_elimination_on_random_networks() {
    let mut rng = ChaCha8Rng::seed_from_u64(30);
    for case in 0..60 {
        let n = 6 + case % 7;
        let net = random_network(&mut rng, n);
        let class = rng.random_range(0..n);
        let features: Vec<usize> = (0..n)
            .filter(|&v| v != class && rng.next_u32().is_multiple_of(2))
            .collect();
        let clf = ThresholdClassifier {
            class,
            positive_state: rng.random_range(0..net.cardinality(class)),
            features,
            threshold: 0.5,
        };
        check_against_ve(&net, &clf, &format!("case {case}"));
    }
}

#[test]
fn plan_limits_are_checked_before_work() -> Result<(), BayesError> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let net = random_network(&mut rng, 12);
    let clf = ThresholdClassifier {
        class: 0,
        positive_state: 0,
        features: net.leaves().into_iter().filter(|&v| v != 0).collect(),
        threshold: 0.5,
    };
    // every plan fits a generous limit; the chosen one is the cheapest that fits
    let p = plan(&net, &clf, 1 << 26)?;
    let cheapest = candidate_plans(&net, &clf, 1 << 26)?
        .into_iter()
        .filter(|c| c.peak_entries <= 1 << 26)
        .map(|c| c.operations)
        .min();
    assert_eq!(Some(p.operations), cheapest);
    assert_eq!(p.branch_order().len(), clf.features.len());
    let tight = usize::try_from(p.peak_entries.max(p.instantiations)).expect("small");
    let q = plan(&net, &clf, tight)?;
    assert!(q.peak_entries <= tight as u128);
    assert!(compile(&net, &clf, tight).is_ok());
    // fewer entries than instantiations: refused with the number needed
    let n = usize::try_from(p.instantiations).expect("small");
    match compile(&net, &clf, n - 1) {
        Err(BayesError::TooLarge { entries, limit }) => {
            assert_eq!(entries, n as u128);
            assert_eq!(limit, (n - 1) as u128);
        }
        other => panic!("expected TooLarge, got {:?}", other.map(|c| c.plan)),
    }
    Ok(())
}

/// The bnlearn networks where plain variable elimination also tabulates the joint of the
/// leaves and a root class (the roots are the first three non-leaf roots in file order).
#[test]
fn compiled_joint_equals_variable_elimination_on_bnlearn_networks() {
    for name in [
        "asia",
        "cancer",
        "sachs",
        "child",
        "insurance",
        "alarm",
        "win95pts",
    ] {
        let Some(path) = data(name) else {
            eprintln!("skipped {name}: SRL_DATA_DIR/bnlearn_bif/{name}.bif.gz not found");
            continue;
        };
        let net = read_bif(&path).expect("network");
        let leaves = net.leaves();
        for class in net
            .roots()
            .into_iter()
            .filter(|r| !leaves.contains(r))
            .take(3)
        {
            let clf = ThresholdClassifier {
                class,
                positive_state: 0,
                features: leaves.clone(),
                threshold: 0.3,
            };
            check_against_ve(&net, &clf, &format!("{name}/{class}"));
        }
    }
}

/// The shared subset lattice of `JointAgreement::map_subsets` gives each subset's own MAA,
/// E-SDP and information gain, so exhaustive search, FS-SDD and information-gain selection
/// on it equal one-subset-at-a-time evaluation.
#[test]
fn subset_lattice_equals_per_subset_evaluation() -> Result<(), BayesError> {
    use srl_bayes::trim::{
        AgreementModel as _, JointAgreement, eca_of, feasible_subsets, information_gain_selection,
        sweep,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    for case in 0..20 {
        let net = random_network(&mut rng, 10);
        let class = rng.random_range(0..3);
        let features: Vec<usize> = (0..10).filter(|&v| v != class).take(7).collect();
        let clf = ThresholdClassifier {
            class,
            positive_state: 0,
            features,
            threshold: 0.4,
        };
        let joint = JointAgreement::new(&net, &clf, &VariableElimination::default(), 1 << 20)?;
        // the single-feature information of one pass, shared by every threshold's model,
        // has the bits of the per-feature evaluation
        let other = joint.with_threshold(0.7)?;
        for i in 0..7 {
            let one = joint.information_gain(1u64 << i);
            assert_eq!(
                joint.feature_information(i).to_bits(),
                one.to_bits(),
                "case {case}"
            );
            assert_eq!(
                other.feature_information(i).to_bits(),
                one.to_bits(),
                "case {case}"
            );
        }
        let costs = [1.0; 7];
        let subsets = feasible_subsets(&costs, 3.0)?;
        let total = joint.total_weight();
        let maa = joint.map_subsets(&subsets, &|b| sweep(b).0 / total);
        let esdp = joint.map_subsets(&subsets, &|b| eca_of(b, 0.4) / total);
        let mut best_ig = (0u64, f64::NEG_INFINITY);
        for (k, &m) in subsets.iter().enumerate() {
            let own = joint.maa(m).value;
            assert!(
                (maa[k] - own).abs() < 1e-12,
                "case {case} {m:#b}: MAA {} vs {own}",
                maa[k]
            );
            let own = joint.eca(m, 0.4);
            assert!(
                (esdp[k] - own).abs() < 1e-12,
                "case {case} {m:#b}: E-SDP {} vs {own}",
                esdp[k]
            );
            let ig = joint.information_gain(m);
            if ig > best_ig.1 + 1e-12 {
                best_ig = (m, ig);
            }
        }
        let sel = information_gain_selection(&joint, &costs, 3.0)?;
        let chosen = srl_bayes::trim::vec_to_mask(&sel.subset);
        assert!(
            (joint.information_gain(chosen) - best_ig.1).abs() < 1e-12,
            "case {case}: information gain of the selection"
        );
    }
    Ok(())
}

/// The subset lattice as `JointAgreement::map_subsets` walked it before the flat lattice
/// (kept here as the reference): `f` of every wanted subset's statistics over the compiled
/// joint `base` (radix order `order`) at threshold `t`.
fn reference_lattice(
    cards: &[usize],
    base: &[[f64; 2]],
    order: &[usize],
    t: f64,
    wanted: &std::collections::HashSet<u64>,
    f: &dyn Fn(&mut Vec<srl_bayes::trim::YStat>) -> f64,
) -> std::collections::HashMap<u64, f64> {
    use srl_bayes::trim::{YStat, decide};
    #[allow(clippy::too_many_arguments)]
    fn walk(
        cards: &[usize],
        mask: u64,
        feats: &[usize],
        table: &[YStat],
        from: usize,
        wanted: &std::collections::HashSet<u64>,
        f: &dyn Fn(&mut Vec<YStat>) -> f64,
        out: &mut std::collections::HashMap<u64, f64>,
    ) {
        if wanted.contains(&mask) {
            let mut buf = table.to_vec();
            out.insert(mask, f(&mut buf));
        }
        for p in from..feats.len() {
            let staying = feats[..p].iter().fold(0u64, |m, &g| m | 1u64 << g);
            if !wanted.contains(&staying) {
                continue;
            }
            let c = cards[feats[p]];
            let inner: usize = feats[p + 1..].iter().map(|&g| cards[g]).product();
            let mut child = vec![YStat::default(); table.len() / c];
            for (o, block) in table.chunks(c * inner).enumerate() {
                let dst = &mut child[o * inner..(o + 1) * inner];
                for run in block.chunks(inner) {
                    for (d, x) in dst.iter_mut().zip(run) {
                        d.pos_class += x.pos_class;
                        d.neg_class += x.neg_class;
                        d.agree_pos += x.agree_pos;
                    }
                }
            }
            let mut rest = feats.to_vec();
            rest.remove(p);
            walk(
                cards,
                mask & !(1u64 << feats[p]),
                &rest,
                &child,
                p,
                wanted,
                f,
                out,
            );
        }
    }
    let root: Vec<YStat> = base
        .iter()
        .map(|&[wd, wn]| YStat {
            pos_class: wd,
            neg_class: wn,
            agree_pos: if decide(wd, wn, t) { wd + wn } else { 0.0 },
        })
        .collect();
    let full = (1u64 << cards.len()) - 1;
    let mut out = std::collections::HashMap::new();
    walk(cards, full, order, &root, 0, wanted, f, &mut out);
    out
}

/// One walk of the flat lattice (`JointAgreement::exhaustive_multi`) chooses, at every
/// threshold, the subsets of the separate searches (`exhaustive_maa` on each threshold's
/// model, `information_gain_selection`), ties included, with the bits of the lattice the
/// searches used before it (`reference_lattice`), on random networks (multi-state
/// features, zero entries, costs that are not unit) and on bnlearn networks.
#[test]
fn exhaustive_multi_equals_the_separate_searches_bit_for_bit() -> Result<(), BayesError> {
    use srl_bayes::trim::{
        AgreementModel as _, JointAgreement, exhaustive_maa, feasible_subsets,
        information_gain_selection, sweep, vec_to_mask,
    };
    const THRESHOLDS: [f64; 6] = [0.1, 0.3, 0.5, 0.7, 0.9, 0.0];
    let check = |net: &BayesianNetwork,
                 clf: &ThresholdClassifier,
                 costs: &[f64],
                 budget: f64,
                 what: &str|
     -> Result<(), BayesError> {
        let c = compile(net, clf, 1 << 24)?;
        let (base, order) = (c.weights.clone(), c.order.clone());
        let cards: Vec<usize> = clf.features.iter().map(|&f| net.cardinality(f)).collect();
        let joint = JointAgreement::from_compiled(net, clf, c)?;
        let multi = joint.exhaustive_multi(costs, budget, &THRESHOLDS)?;
        let subsets = feasible_subsets(costs, budget)?;
        assert_eq!(multi.subsets, subsets.len() as u64, "{what}");
        let wanted: std::collections::HashSet<u64> = subsets.iter().copied().collect();
        let total = joint.total_weight();
        // the reference choice: the largest value, ties to the smaller mask
        let best = |values: &std::collections::HashMap<u64, f64>| {
            let mut b = (0u64, f64::NEG_INFINITY);
            for &m in &subsets {
                let v = values[&m];
                if v > b.1 || (v == b.1 && m < b.0) {
                    b = (m, v);
                }
            }
            b
        };
        // I(D; Y) as the crate computes it (the model's own information gain of a table)
        let info = |s: &mut Vec<srl_bayes::trim::YStat>| srl_bayes::trim::info_gain_of(s);
        let ig_ref = best(&reference_lattice(
            &cards, &base, &order, 0.5, &wanted, &info,
        ));
        assert_eq!(multi.information_gain.0, ig_ref.0, "{what}: IG subset");
        assert_eq!(
            multi.information_gain.1.to_bits(),
            ig_ref.1.to_bits(),
            "{what}: IG value"
        );
        let sel = information_gain_selection(&joint, costs, budget)?;
        assert_eq!(vec_to_mask(&sel.subset), ig_ref.0, "{what}: IG selection");
        for (k, &t) in THRESHOLDS.iter().enumerate() {
            let maa_ref = best(&reference_lattice(
                &cards,
                &base,
                &order,
                t,
                &wanted,
                &|b| sweep(b).0 / total,
            ));
            assert_eq!(multi.maa[k].0, maa_ref.0, "{what} T={t}: subset");
            assert_eq!(
                multi.maa[k].1.to_bits(),
                maa_ref.1.to_bits(),
                "{what} T={t}: MAA"
            );
            // the separate search on a fresh model reports the same Trimming
            let model = joint.with_threshold(t)?;
            let ex = exhaustive_maa(&model, costs, budget)?;
            let model = joint.with_threshold(t)?;
            assert_eq!(multi.trimming(&model, multi.maa[k].0), ex, "{what} T={t}");
        }
        Ok(())
    };
    let mut rng = ChaCha8Rng::seed_from_u64(47);
    for case in 0..12 {
        let net = random_network(&mut rng, 11);
        let class = rng.random_range(0..3);
        let features: Vec<usize> = (0..11).filter(|&v| v != class).take(8).collect();
        let clf = ThresholdClassifier {
            class,
            positive_state: 0,
            features,
            threshold: 0.5,
        };
        let costs: Vec<f64> = (0..8)
            .map(|_| f64::from(rng.random_range(1..4u32)))
            .collect();
        let budget = f64::from(rng.random_range(2..7u32));
        check(&net, &clf, &costs, budget, &format!("random case {case}"))?;
    }
    // 19 two-state features (a joint of 2^19 entries): the lattice's largest children are
    // written in parallel pieces
    let mut vars = vec![Variable::numbered("class", 2)];
    let mut cpts = vec![Cpt {
        parents: vec![],
        probs: vec![0.3, 0.7],
    }];
    for i in 1..=19 {
        vars.push(Variable::numbered(format!("f{i}"), 2));
        let parents = if i % 3 == 0 { vec![0, i - 1] } else { vec![0] };
        let rows = 1 << parents.len();
        let mut probs = Vec::new();
        for _ in 0..rows {
            let a = f64::from(rng.random_range(1..100u32)) / 100.0;
            probs.extend([a, 1.0 - a]);
        }
        cpts.push(Cpt { parents, probs });
    }
    let net = BayesianNetwork::new(vars, cpts)?;
    let clf = ThresholdClassifier {
        class: 0,
        positive_state: 0,
        features: (1..=19).collect(),
        threshold: 0.5,
    };
    check(&net, &clf, &[1.0; 19], 2.0, "19 two-state features")?;
    for (name, classes) in [
        ("asia", &["smoke", "asia"][..]),
        ("alarm", &["INTUBATION", "LVFAILURE", "MINVOLSET"][..]),
        ("insurance", &["Age"][..]),
        ("win95pts", &["PrtPaper", "PrntrAccptsTrtyp"][..]),
        ("water", &["C_NI_12_00"][..]),
        ("sachs", &["PKC"][..]),
    ] {
        let Some(path) = data(name) else {
            eprintln!("skipping {name}: SRL_DATA_DIR/bnlearn_bif/{name}.bif.gz not found");
            continue;
        };
        let net = read_bif(&path)?;
        let leaves = net.leaves();
        for cname in classes {
            let class = (0..net.len())
                .find(|&v| net.variable(v).name == *cname)
                .expect("class in the network");
            let n = leaves.len();
            let clf = ThresholdClassifier {
                class,
                positive_state: 0,
                features: leaves.clone(),
                threshold: 0.5,
            };
            check(
                &net,
                &clf,
                &vec![1.0; n],
                (n / 3).max(1) as f64,
                &format!("{name}/{cname}"),
            )?;
        }
    }
    Ok(())
}

/// `JointAgreement::subset_stats` from the compiled joint (in a radix order that is not
/// ascending) has, entry by entry, the bits of the direct sum in that order: each
/// instantiation's weights added in increasing index of the joint, written in ascending
/// feature order (as before the sums went through a table in the joint's order).
#[test]
fn subset_stats_from_the_joint_sum_in_its_order() -> Result<(), BayesError> {
    use srl_bayes::trim::{AgreementModel as _, JointAgreement, YStat, decide};
    let mut rng = ChaCha8Rng::seed_from_u64(53);
    let mut permuted = 0;
    for case in 0..12 {
        let net = random_network(&mut rng, 11);
        let class = rng.random_range(0..3);
        let features: Vec<usize> = (0..11).filter(|&v| v != class).take(7).collect();
        let t = 0.3;
        let clf = ThresholdClassifier {
            class,
            positive_state: 0,
            features,
            threshold: t,
        };
        let mut c = compile(&net, &clf, 1 << 24)?;
        // the same weights read in a shuffled radix order (another joint, as good for the
        // check), so that the orders of most subsets are not ascending
        for j in (1..7).rev() {
            let k = rng.random_range(0..=j);
            c.order.swap(j, k);
        }
        let (base, order) = (c.weights.clone(), c.order.clone());
        let cards: Vec<usize> = clf.features.iter().map(|&f| net.cardinality(f)).collect();
        let joint = JointAgreement::from_compiled(&net, &clf, c)?;
        for mask in 0u64..1 << 7 {
            // the reference: odometer over the joint's digits, each entry added at its
            // ascending-order position
            let mut stride = [0usize; 7];
            let mut size = 1usize;
            for i in (0..7).rev() {
                if mask >> i & 1 == 1 {
                    stride[i] = size;
                    size *= cards[i];
                }
            }
            let mut want = vec![YStat::default(); size];
            let mut digits = vec![0usize; 7];
            for &[wd, wn] in &base {
                let y: usize = order
                    .iter()
                    .zip(&digits)
                    .map(|(&f, &d)| d * stride[f])
                    .sum();
                let s = &mut want[y];
                s.pos_class += wd;
                s.neg_class += wn;
                s.agree_pos += if decide(wd, wn, t) { wd + wn } else { 0.0 };
                for j in (0..7).rev() {
                    digits[j] += 1;
                    if digits[j] < cards[order[j]] {
                        break;
                    }
                    digits[j] = 0;
                }
            }
            let kept: Vec<usize> = order
                .iter()
                .copied()
                .filter(|&f| mask >> f & 1 == 1)
                .collect();
            permuted += usize::from(kept.windows(2).any(|w| w[0] > w[1]));
            // a fresh model: the statistics come from the joint itself
            let fresh = joint.with_threshold(t)?;
            let mut got = Vec::new();
            fresh.subset_stats(mask, &mut got);
            assert_eq!(got.len(), want.len(), "case {case} {mask:#b}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(
                    [g.pos_class, g.neg_class, g.agree_pos].map(f64::to_bits),
                    [w.pos_class, w.neg_class, w.agree_pos].map(f64::to_bits),
                    "case {case} {mask:#b}"
                );
            }
        }
    }
    assert!(permuted > 0, "no subset whose joint order is not ascending");
    Ok(())
}
