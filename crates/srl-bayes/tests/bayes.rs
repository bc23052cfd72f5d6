//! Integration tests for srl-bayes: exact oracles (enumeration) for VE, ECA, MPA and MAA;
//! branch and bound against exhaustive search; the TrimBN reference optima; the uK-NN toy
//! example's naive Bayes context probabilities (Zadrozny et al. 2009, Table 2).

use std::path::PathBuf;

use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use srl_bayes::data::{ColumnEncoding, CsvTable, EncoderParams, TableEncoder};
use srl_bayes::io::{
    parse_bif, parse_hugin_net, read_bif, read_hugin_net, read_trimbn_json, read_uai,
    to_bif_string, write_bif,
};
use srl_bayes::trim::{
    AgreementModel, BranchAndBound, FeatureOrder, JointAgreement, NaiveBayesAgreement,
    branch_and_bound, decide, exhaustive_maa, feasible_subsets, fs_sdd, information_gain_selection,
    mask_to_vec,
};
use srl_bayes::ve::enumerate_joint;
use srl_bayes::{
    BayesError, BayesianNetwork, Cpt, FeatureKind, NaiveBayes, NaiveBayesParams,
    ThresholdClassifier, Variable, VariableElimination,
};

fn data_dir() -> Option<PathBuf> {
    let d = PathBuf::from(std::env::var_os("SRL_DATA_DIR")?);
    d.exists().then_some(d)
}

macro_rules! need_data {
    ($rel:expr) => {
        match data_dir().map(|d| d.join($rel)).filter(|p| p.exists()) {
            Some(p) => p,
            None => {
                eprintln!("skipping: SRL_DATA_DIR/{} not available", $rel);
                return Ok(());
            }
        }
    };
}

/// A random network over `n` variables (cardinality 2 or 3), each with up to 2 earlier
/// parents, random CPT rows.
fn random_network(rng: &mut ChaCha8Rng, n: usize) -> BayesianNetwork {
    let mut vars = Vec::new();
    let mut cpts = Vec::new();
    for i in 0..n {
        let k = if i == 0 {
            2
        } else {
            rng.random_range(2..4usize)
        };
        vars.push(Variable::numbered(format!("v{i}"), k));
        let mut parents = Vec::new();
        for _ in 0..rng.random_range(0..3usize).min(i) {
            let p = rng.random_range(0..i);
            if !parents.contains(&p) {
                parents.push(p);
            }
        }
        if i > 0 && parents.is_empty() && rng.random_bool(0.7) {
            parents.push(0);
        }
        let rows: usize = parents
            .iter()
            .map(|&p: &usize| vars[p].cardinality())
            .product();
        let mut probs = Vec::new();
        for _ in 0..rows {
            let raw: Vec<f64> = (0..k).map(|_| rng.random_range(0.05..1.0)).collect();
            let s: f64 = raw.iter().sum();
            probs.extend(raw.iter().map(|x| x / s));
        }
        cpts.push(Cpt { parents, probs });
    }
    BayesianNetwork::new(vars, cpts).expect("valid random network")
}

/// Per-`x` weights `(Pr(x, d), Pr(x, ¬d))` over the features by brute-force enumeration.
fn brute_weights(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
) -> (Vec<usize>, Vec<(f64, f64)>) {
    let mut scope = clf.features.clone();
    scope.push(clf.class);
    let f = enumerate_joint(net, &scope, &[]).expect("small network");
    let k = net.cardinality(clf.class);
    let cards = clf.features.iter().map(|&v| net.cardinality(v)).collect();
    let w = f
        .values()
        .chunks(k)
        .map(|r| {
            (
                r[clf.positive_state],
                r.iter().sum::<f64>() - r[clf.positive_state],
            )
        })
        .collect();
    (cards, w)
}

/// The `y` index of flat feature instantiation `x` under `subset`.
fn project(cards: &[usize], subset: u64, mut x: usize) -> usize {
    let n = cards.len();
    let mut digits = vec![0; n];
    for i in (0..n).rev() {
        digits[i] = x % cards[i];
        x /= cards[i];
    }
    let mut y = 0;
    for i in 0..n {
        if subset >> i & 1 == 1 {
            y = y * cards[i] + digits[i];
        }
    }
    y
}

/// ECA, MPA and MAA straight from Definitions 2-4, by enumeration.
fn brute_eca(cards: &[usize], w: &[(f64, f64)], t: f64, subset: u64, t2: f64) -> f64 {
    let ysize: usize = (0..cards.len())
        .filter(|&i| subset >> i & 1 == 1)
        .map(|i| cards[i])
        .product();
    let mut py = vec![(0.0, 0.0); ysize];
    for (x, &(a, b)) in w.iter().enumerate() {
        let y = project(cards, subset, x);
        py[y].0 += a;
        py[y].1 += b;
    }
    let total: f64 = w.iter().map(|p| p.0 + p.1).sum();
    let mut agree = 0.0;
    for (x, &(a, b)) in w.iter().enumerate() {
        let y = project(cards, subset, x);
        if decide(a, b, t) == decide(py[y].0, py[y].1, t2) {
            agree += a + b;
        }
    }
    agree / total
}

fn brute_mpa(cards: &[usize], w: &[(f64, f64)], t: f64, subset: u64) -> f64 {
    let ysize: usize = (0..cards.len())
        .filter(|&i| subset >> i & 1 == 1)
        .map(|i| cards[i])
        .product();
    let mut q = vec![(0.0, 0.0); ysize];
    for (x, &(a, b)) in w.iter().enumerate() {
        let y = project(cards, subset, x);
        if decide(a, b, t) {
            q[y].0 += a + b;
        } else {
            q[y].1 += a + b;
        }
    }
    let total: f64 = w.iter().map(|p| p.0 + p.1).sum();
    q.iter().map(|p| p.0.max(p.1)).sum::<f64>() / total
}

fn brute_maa(cards: &[usize], w: &[(f64, f64)], t: f64, subset: u64) -> f64 {
    let ysize: usize = (0..cards.len())
        .filter(|&i| subset >> i & 1 == 1)
        .map(|i| cards[i])
        .product();
    let mut py = vec![(0.0, 0.0); ysize];
    for (x, &(a, b)) in w.iter().enumerate() {
        let y = project(cards, subset, x);
        py[y].0 += a;
        py[y].1 += b;
    }
    // candidate thresholds: every posterior Pr(d|y) (positive iff ≥ it) and above all
    let mut cands: Vec<f64> = py
        .iter()
        .filter(|p| p.0 + p.1 > 0.0)
        .map(|p| p.0 / (p.0 + p.1))
        .collect();
    cands.push(0.0);
    let mut best: f64 = 0.0;
    for &c in &cands {
        let all_pos = brute_eca_post(cards, w, t, subset, &py, |p| p >= c - 1e-15);
        let all_above = brute_eca_post(cards, w, t, subset, &py, |p| p > c + 1e-15);
        best = best.max(all_pos).max(all_above);
    }
    best
}

fn brute_eca_post(
    cards: &[usize],
    w: &[(f64, f64)],
    t: f64,
    subset: u64,
    py: &[(f64, f64)],
    beta: impl Fn(f64) -> bool,
) -> f64 {
    let total: f64 = w.iter().map(|p| p.0 + p.1).sum();
    let mut agree = 0.0;
    for (x, &(a, b)) in w.iter().enumerate() {
        let y = project(cards, subset, x);
        let m = py[y].0 + py[y].1;
        let post = if m > 0.0 { py[y].0 / m } else { 0.0 };
        if decide(a, b, t) == beta(post) {
            agree += a + b;
        }
    }
    agree / total
}

#[test]
fn variable_elimination_matches_enumeration_on_random_networks() -> Result<(), BayesError> {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let ve = VariableElimination::default();
    for _ in 0..20 {
        let net = random_network(&mut rng, 8);
        let q = rng.random_range(0..8usize);
        let e = (q + 1 + rng.random_range(0..7usize)) % 8;
        let ev = [(e, rng.random_range(0..net.cardinality(e)))];
        let a = ve.joint(&net, &[q], &ev)?;
        let b = enumerate_joint(&net, &[q], &ev)?;
        for (x, y) in a.values().iter().zip(b.values()) {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
        let pair = ve.joint(&net, &[e, q], &[])?;
        let pair_b = enumerate_joint(&net, &[e, q], &[])?;
        for (x, y) in pair.values().iter().zip(pair_b.values()) {
            assert!((x - y).abs() < 1e-12);
        }
    }
    Ok(())
}

#[test]
fn asia_bif_uai_ve_and_enumeration_agree() -> Result<(), BayesError> {
    let bif = need_data!("bnlearn_bif/asia.bif.gz");
    let uai = need_data!("uai_asia/asia.uai");
    let net = read_bif(&bif)?;
    assert_eq!(net.len(), 8);
    let ve = VariableElimination::default();
    let dysp = net.id("dysp")?;
    let lung = net.id("lung")?;
    let xray = net.id("xray")?;
    let ev = [(dysp, 0), (xray, 0)];
    let a = ve.posterior(&net, lung, &ev)?;
    let b = enumerate_joint(&net, &[lung], &ev)?.normalized();
    assert!((a[0] - b.values()[0]).abs() < 1e-12);
    for v in 0..8 {
        let a = ve.joint(&net, &[v], &[])?;
        let b = enumerate_joint(&net, &[v], &[])?;
        assert!((a.values()[0] - b.values()[0]).abs() < 1e-12);
    }
    // the UAI file holds the same CPTs (variables in BIF declaration order, state 0 = yes)
    let model = read_uai(&uai)?;
    let unet = model.to_bayesian_network()?;
    let mut a = vec![0usize; 8];
    for _ in 0..256 {
        assert!((unet.joint_weight(&a) - net.joint_weight(&a)).abs() < 1e-12);
        for k in (0..8).rev() {
            a[k] += 1;
            if a[k] < 2 {
                break;
            }
            a[k] = 0;
        }
    }
    // VE directly on the MARKOV factors
    let f = srl_bayes::ve::eliminate(
        model.factors.clone(),
        &[0, 1, 2, 4, 5, 6, 7],
        &model.cardinalities,
        1 << 20,
    )?;
    let direct = enumerate_joint(&net, &[lung], &[])?;
    assert!((f.normalized().values()[0] - direct.values()[0]).abs() < 1e-12);
    Ok(())
}

#[test]
fn agreement_matches_definitions_on_random_networks() -> Result<(), BayesError> {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let ve = VariableElimination::default();
    for round in 0..12 {
        let net = random_network(&mut rng, 7);
        let features: Vec<usize> = (1..7).filter(|_| rng.random_bool(0.8)).collect();
        let t = [0.2, 0.5, 0.7][round % 3];
        let clf = ThresholdClassifier {
            class: 0,
            positive_state: 0,
            features: features.clone(),
            threshold: t,
        };
        let model = JointAgreement::new(&net, &clf, &ve, 1 << 20)?;
        let (cards, w) = brute_weights(&net, &clf);
        let n = features.len();
        let mut prev_mpa = vec![0.0; 1 << n];
        for s in 0u64..1 << n {
            let maa = model.maa(s);
            let mpa = model.mpa(s);
            assert!((mpa - brute_mpa(&cards, &w, t, s)).abs() < 1e-10);
            assert!((model.eca(s, t) - brute_eca(&cards, &w, t, s, t)).abs() < 1e-10);
            assert!((model.eca(s, 0.37) - brute_eca(&cards, &w, t, s, 0.37)).abs() < 1e-10);
            assert!((maa.value - brute_maa(&cards, &w, t, s)).abs() < 1e-10);
            // the reported threshold realises the MAA
            assert!((model.eca(s, maa.threshold) - maa.value).abs() < 1e-10);
            // Proposition 1 and 2
            assert!(maa.value <= mpa + 1e-12);
            for i in 0..n {
                if s >> i & 1 == 1 {
                    assert!(prev_mpa[(s & !(1 << i)) as usize] <= mpa + 1e-12);
                }
            }
            prev_mpa[s as usize] = mpa;
            // E-SDP equals the SDP averaged over y (Proposition 4), checked via VE
            if s != 0 && s.count_ones() <= 2 && round < 3 {
                let ys: Vec<usize> = mask_to_vec(s).iter().map(|&i| features[i]).collect();
                let hidden: Vec<usize> = features
                    .iter()
                    .copied()
                    .filter(|f| !ys.contains(f))
                    .collect();
                let pys = ve.joint(&net, &ys, &[])?;
                let mut esdp = 0.0;
                let ycards: Vec<usize> = ys.iter().map(|&v| net.cardinality(v)).collect();
                for (yi, py) in pys.values().iter().enumerate() {
                    let mut rest = yi;
                    let mut ev = vec![(0, 0); ys.len()];
                    for k in (0..ys.len()).rev() {
                        ev[k] = (ys[k], rest % ycards[k]);
                        rest /= ycards[k];
                    }
                    esdp += py * clf.same_decision_probability(&net, &ve, &ev, &hidden)?;
                }
                assert!((esdp - model.eca(s, t)).abs() < 1e-10);
            }
        }
        // branch and bound = exhaustive, with random costs
        let costs: Vec<f64> = (0..n).map(|_| rng.random_range(0.5..2.0)).collect();
        let budget = costs.iter().sum::<f64>() / 2.5;
        let bb = branch_and_bound(&model, &costs, budget)?;
        let ex = exhaustive_maa(&model, &costs, budget)?;
        assert!(
            (bb.eca - ex.eca).abs() < 1e-12,
            "round {round}: {bb:?} vs {ex:?}"
        );
        let fs = fs_sdd(&model, &costs, budget)?;
        assert!(fs.eca <= bb.eca + 1e-12);
        let ig = information_gain_selection(&model, &costs, budget)?;
        assert!(ig.eca <= bb.eca + 1e-12);
    }
    Ok(())
}

fn random_nb(rng: &mut ChaCha8Rng, n: usize, unnormalised: bool) -> NaiveBayes {
    let p = rng.random_range(0.2..0.8);
    let tables: Vec<Vec<Vec<f64>>> = (0..n)
        .map(|_| {
            let k = rng.random_range(2..4usize);
            (0..2)
                .map(|_| {
                    let raw: Vec<f64> = (0..k).map(|_| rng.random_range(0.05..1.0)).collect();
                    let s: f64 = raw.iter().sum::<f64>()
                        * if unnormalised {
                            rng.random_range(0.97..1.03)
                        } else {
                            1.0
                        };
                    raw.iter().map(|x| x / s).collect()
                })
                .collect()
        })
        .collect();
    NaiveBayes::from_tables(vec![p, 1.0 - p], &tables).expect("valid tables")
}

#[test]
fn naive_bayes_path_matches_general_path_and_maa_equals_mpa() -> Result<(), BayesError> {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let ve = VariableElimination::default();
    for round in 0..10 {
        let n = 7;
        let nb = random_nb(&mut rng, n, round % 2 == 1);
        let names: Vec<String> = (0..n).map(|i| format!("f{i}")).collect();
        let net = nb.to_bayesian_network("C", &names)?;
        let t = [0.3, 0.5, 0.8][round % 3];
        let pos = round % 2;
        let fast = NaiveBayesAgreement::new(&nb, pos, t)?;
        let clf = ThresholdClassifier {
            class: 0,
            positive_state: pos,
            features: (1..=n).collect(),
            threshold: t,
        };
        let slow = JointAgreement::new(&net, &clf, &ve, 1 << 20)?;
        assert!((fast.total_weight() - slow.total_weight()).abs() < 1e-12);
        for s in 0u64..1 << n {
            let (a, b) = (fast.mpa(s), slow.mpa(s));
            assert!((a - b).abs() < 1e-10, "mpa {s}: {a} vs {b}");
            assert!(
                (fast.mpa_segmented(s) - b).abs() < 1e-10,
                "segmented mpa {s}"
            );
            assert!((fast.mpa_enumerated(s) - b).abs() < 1e-10);
            assert!((fast.eca(s, t) - slow.eca(s, t)).abs() < 1e-10);
            // Proposition 3: MAA = MPA under conditional independence
            assert!((slow.maa(s).value - b).abs() < 1e-10);
        }
        let costs = vec![1.0; n];
        let bb = branch_and_bound(&fast, &costs, 2.0)?;
        let ex = exhaustive_maa(&slow, &costs, 2.0)?;
        // optima may tie (a feature that changes no decision), so compare values
        assert!(bb.subset.len() <= 2);
        assert!((bb.eca - ex.eca).abs() < 1e-10);
        assert!((slow.maa(srl_bayes::trim::vec_to_mask(&bb.subset)).value - ex.eca).abs() < 1e-10);
        let bb_general = branch_and_bound(&slow, &costs, 2.0)?;
        assert!((bb_general.eca - ex.eca).abs() < 1e-10);
        // only budget-exhausting subsets are evaluated on the naive Bayes path
        assert!(bb.criterion_evaluations <= 21);
    }
    Ok(())
}

#[test]
fn rejects_bad_classifiers_and_budgets() -> Result<(), BayesError> {
    let nb = random_nb(&mut ChaCha8Rng::seed_from_u64(1), 3, false);
    assert!(NaiveBayesAgreement::new(&nb, 0, 1.5).is_err());
    assert!(NaiveBayesAgreement::new(&nb, 2, 0.5).is_err());
    let m = NaiveBayesAgreement::new(&nb, 0, 0.5)?;
    assert!(branch_and_bound(&m, &[1.0, 1.0], 1.0).is_err());
    assert!(branch_and_bound(&m, &[1.0, -1.0, 1.0], 1.0).is_err());
    Ok(())
}

const NETWORKS: [&str; 7] = [
    "bupa",
    "pima",
    "ident",
    "anatomy",
    "heart",
    "voting",
    "hepatitis",
];

struct Reference {
    eca: f64,
    subset: Vec<String>,
}

fn reference(dir: &std::path::Path, name: &str) -> Option<Reference> {
    let text = std::fs::read_to_string(dir.join("reference_results.tsv")).ok()?;
    let line = text.lines().find(|l| l.split('\t').next() == Some(name))?;
    let cells: Vec<&str> = line.split('\t').collect();
    Some(Reference {
        eca: cells[5].parse().ok()?,
        subset: cells[6].split(',').map(str::to_string).collect(),
    })
}

const ORDERS: [FeatureOrder; 3] = [
    FeatureOrder::Given,
    FeatureOrder::DecreasingMpa,
    FeatureOrder::DecreasingInformation,
];

#[test]
fn branch_and_bound_is_exact_for_every_order_cost_and_budget() -> Result<(), BayesError> {
    let mut rng = ChaCha8Rng::seed_from_u64(29);
    let ve = VariableElimination::default();
    for round in 0..24 {
        let n = rng.random_range(5..10usize);
        let t = [0.1, 0.3, 0.5, 0.7, 0.9][round % 5];
        let unit = round % 2 == 0;
        let costs: Vec<f64> = (0..n)
            .map(|_| {
                if unit {
                    1.0
                } else {
                    rng.random_range(0.5..2.0)
                }
            })
            .collect();
        let total: f64 = costs.iter().sum();
        // naive Bayes path
        let nb = random_nb(&mut rng, n, round % 3 == 0);
        let model = NaiveBayesAgreement::new(&nb, round % 2, t)?;
        // general path on a random network (features = all non-class variables)
        let net = random_network(&mut rng, 7);
        let clf = ThresholdClassifier {
            class: 0,
            positive_state: 0,
            features: (1..7).collect(),
            threshold: t,
        };
        let joint = JointAgreement::new(&net, &clf, &ve, 1 << 20)?;
        for frac in [0.0, 0.2, 0.34, 0.5, 0.8, 1.0] {
            let budget = (total * frac).floor();
            let ex = exhaustive_maa(&model, &costs, budget)?;
            let jcosts = &costs[..6.min(n)];
            let jcosts: Vec<f64> = jcosts
                .iter()
                .copied()
                .chain(std::iter::repeat(1.0))
                .take(6)
                .collect();
            let jbudget = (jcosts.iter().sum::<f64>() * frac).floor();
            let jex = exhaustive_maa(&joint, &jcosts, jbudget)?;
            for order in ORDERS {
                let bb = BranchAndBound { order }.run(&model, &costs, budget)?;
                assert!(
                    (bb.eca - ex.eca).abs() < 1e-12,
                    "round {round} {order:?} budget {budget}: {bb:?} vs {ex:?}"
                );
                let cost: f64 = bb.subset.iter().map(|&i| costs[i]).sum();
                assert!(cost <= budget + 1e-9);
                let jb = BranchAndBound { order }.run(&joint, &jcosts, jbudget)?;
                assert!(
                    (jb.eca - jex.eca).abs() < 1e-12,
                    "general round {round} {order:?} budget {jbudget}: {jb:?} vs {jex:?}"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn joint_agreement_cache_gives_the_uncached_statistics() -> Result<(), BayesError> {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let ve = VariableElimination::default();
    for round in 0..3 {
        let net = random_network(&mut rng, 12);
        let clf = ThresholdClassifier {
            class: 0,
            positive_state: 0,
            features: (1..12).collect(),
            threshold: [0.3, 0.5, 0.8][round],
        };
        let model = JointAgreement::new(&net, &clf, &ve, 1 << 22)?;
        let n = 11;
        let costs = vec![1.0; n];
        let bb = branch_and_bound(&model, &costs, 4.0)?;
        // branch and bound filled the cache with supersets' tables
        assert!(model.cache_stats().0 > 0, "nothing cached");
        let cold = model.clone();
        assert_eq!(cold.cache_stats(), (0, 0));
        for _ in 0..300 {
            let s: u64 = rng.random_range(0..1u64 << n);
            let (a, b) = (model.maa(s), cold.clone().maa(s));
            // same value; the thresholds may differ by rounding (sums in another order)
            assert!((a.value - b.value).abs() < 1e-12, "{s}: {a:?} vs {b:?}");
            assert!((cold.eca(s, a.threshold) - b.value).abs() < 1e-12);
            assert!((model.mpa(s) - cold.clone().mpa(s)).abs() < 1e-12);
        }
        let ex = exhaustive_maa(&cold, &costs, 4.0)?;
        assert!((bb.eca - ex.eca).abs() < 1e-12, "round {round}");
    }
    Ok(())
}

#[test]
fn trimbn_table6_protocol_is_exact_and_evaluates_fewer_than_exhaustive() -> Result<(), BayesError> {
    let dir = need_data!("trimbn_networks");
    for name in ["bupa", "pima", "ident", "anatomy", "heart"] {
        let p = read_trimbn_json(&dir.join(format!("derived/{name}.nb.json")))?;
        let n = p.feature_names.len();
        let costs = vec![1.0; n];
        let budget = (n / 3) as f64;
        let feasible = feasible_subsets(&costs, budget)?.len() as u64;
        for t in [0.1, 0.3, 0.5, 0.7, 0.9] {
            let model = NaiveBayesAgreement::new(&p.model, p.positive_state, t)?;
            let bb = branch_and_bound(&model, &costs, budget)?;
            let ex = exhaustive_maa(&model, &costs, budget)?;
            assert!((bb.eca - ex.eca).abs() < 1e-12, "{name} T={t}");
            // every criterion and bound evaluation counted; fewer than exhaustive search
            assert!(
                bb.evaluations() < feasible,
                "{name} T={t}: {} evaluations, {feasible} feasible subsets",
                bb.evaluations()
            );
        }
    }
    Ok(())
}

#[test]
fn trimbn_networks_branch_and_bound_matches_exhaustive_and_reference() -> Result<(), BayesError> {
    let dir = need_data!("trimbn_networks");
    for name in NETWORKS {
        let p = read_trimbn_json(&dir.join(format!("derived/{name}.nb.json")))?;
        // the Hugin file holds the same model
        let hnet = read_hugin_net(&dir.join(format!("derived/{name}.net")))?;
        let jnet = p.to_bayesian_network()?;
        let class = hnet.id(&p.class_name)?;
        for (i, f) in p.feature_names.iter().enumerate() {
            let h = hnet.id(f)?;
            assert_eq!(hnet.parents(h), &[class]);
            for c in 0..2 {
                for s in 0..2 {
                    assert_eq!(hnet.prob(h, &[c], s), jnet.prob(i + 1, &[c], s));
                }
            }
        }
        let model = NaiveBayesAgreement::new(&p.model, p.positive_state, p.threshold)?;
        let bb = branch_and_bound(&model, &p.costs, p.budget)?;
        let names: Vec<String> = bb
            .subset
            .iter()
            .map(|&i| p.feature_names[i].clone())
            .collect();
        let r = reference(&dir, name).expect("reference row");
        assert_eq!(names, r.subset, "{name}");
        assert!(
            (bb.eca - r.eca).abs() < 5e-7,
            "{name}: {} vs {}",
            bb.eca,
            r.eca
        );
        // the reference optimum is with the threshold held at 0.5; so must be ours
        let fixed = model.eca(srl_bayes::trim::vec_to_mask(&bb.subset), p.threshold);
        assert!((fixed - r.eca).abs() < 5e-7);
        // exhaustive over every feasible subset (the smaller networks, debug-mode time)
        if p.feature_names.len() <= 13 {
            let ex = exhaustive_maa(&model, &p.costs, p.budget)?;
            assert_eq!(ex.subset, bb.subset, "{name}");
            assert!((ex.eca - bb.eca).abs() < 1e-12);
        }
    }
    Ok(())
}

#[test]
fn zadrozny_table2_context_probabilities() -> Result<(), BayesError> {
    // Table 1: terms a..e as binary features plus the document class (1/2 → 0/1) as a
    // feature; the "class" of this naive Bayes is the year (2000 → 0, 2001 → 1).
    let docs: [(&str, u32, u32); 6] = [
        ("abd", 0, 0),
        ("abe", 1, 1),
        ("bcd", 1, 0),
        ("bde", 1, 1),
        ("cde", 0, 0),
        ("abc", 0, 1),
    ];
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (terms, class, year) in docs {
        for t in ['a', 'b', 'c', 'd', 'e'] {
            x.push(if terms.contains(t) { 1.0 } else { 0.0 });
        }
        x.push(f64::from(class));
        y.push(year);
    }
    let kinds = [FeatureKind::Categorical { states: 2 }; 6];
    let nb = NaiveBayesParams::default().fit(&kinds, &x, &y, 2, None)?;
    let table2 = [0.4, 0.953, 0.229, 0.6, 0.1, 0.64];
    let weights = [0.8, 1.906, 0.458, 1.2, 0.2, 1.28];
    let p2001 = 3.0 / 6.0;
    let mut w = Vec::new();
    for d in 0..6 {
        let p = nb.predict_proba(&x[d * 6..(d + 1) * 6])?[1];
        assert!((p - table2[d]).abs() < 5e-4, "doc {}: {p}", d + 1);
        assert!((p / p2001 - weights[d]).abs() < 1e-3);
        w.push(p / p2001);
    }
    // u3-NN with weighted voting for {a, c, e} from 2001: neighbours 2, 5, 6 (most shared
    // terms); class 2 gets w2 = 1.906, class 1 gets w5 + w6 = 1.48
    let class2 = w[1];
    let class1 = w[4] + w[5];
    assert!((class2 - 1.906).abs() < 1e-3 && (class1 - 1.48).abs() < 1e-3);
    assert!(class2 > class1);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Input validation (issue 15): inputs that used to load silently wrong.

/// A parse error's file and line, or a panic with what came instead.
fn parse_at<T: std::fmt::Debug>(r: Result<T, BayesError>) -> (String, usize, String) {
    match r {
        Err(BayesError::Parse {
            file,
            line,
            message,
        }) => (file, line, message),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

/// 12 distinct numbers in column `x` (so it is numeric: more than `max_categorical = 5`
/// distinct values), a categorical column `c`, a class `y`; `cell` replaces row 3's
/// column `col` (0 = x, 1 = c, 2 = y); the header is line 1, row `r` is line `r + 2`.
fn uci_table(col: usize, cell: &str) -> String {
    let mut s = String::from("x,c,y\n");
    for r in 0..12 {
        let mut cells = [
            format!("{}", r * 10),
            if r % 2 == 0 { "a" } else { "b" }.to_string(),
            if r % 3 == 0 { "p" } else { "n" }.to_string(),
        ];
        if r == 3 {
            cells[col] = cell.to_string();
        }
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    s
}

#[test]
fn uci_empty_numeric_cell_is_missing_and_counted() -> Result<(), BayesError> {
    let t = CsvTable::parse(&uci_table(0, ""), "t.csv")?;
    let enc = TableEncoder::fit(&t, "y", &EncoderParams::default(), None)?;
    // still numeric (2 equal-frequency bins), not a 12-state categorical column
    assert!(
        matches!(&enc.encodings[0], ColumnEncoding::Numeric(c) if c.len() == 1),
        "{:?}",
        enc.encodings[0]
    );
    let d = enc.encode(&t, None)?;
    assert_eq!(d.missing, vec![1, 0]);
    assert!(d.row(3)[0].is_nan());
    assert_eq!(d.kinds[0], FeatureKind::Categorical { states: 2 });
    Ok(())
}

#[test]
fn uci_nan_cell_is_an_error_naming_file_and_line() {
    for bad in ["NaN", "nan", "inf", "-inf"] {
        let t = CsvTable::parse(&uci_table(0, bad), "t.csv").expect("parses as text");
        let (file, line, message) =
            parse_at(TableEncoder::fit(&t, "y", &EncoderParams::default(), None));
        assert_eq!((file.as_str(), line), ("t.csv", 5), "{message}");
        assert!(
            message.contains(bad) && message.contains("`x`"),
            "{message}"
        );
        // an encoder fitted on clean rows rejects it at encoding time too
        let enc = TableEncoder::fit(&t, "y", &EncoderParams::default(), Some(&[0, 1, 2, 4, 5]))
            .expect("clean rows");
        let (_, line, _) = parse_at(enc.encode(&t, None));
        assert_eq!(line, 5);
    }
}

#[test]
fn uci_empty_class_cell_is_an_error_naming_file_and_line() {
    let t = CsvTable::parse(&uci_table(2, ""), "t.csv").expect("parses as text");
    let (file, line, message) =
        parse_at(TableEncoder::fit(&t, "y", &EncoderParams::default(), None));
    assert_eq!((file.as_str(), line), ("t.csv", 5), "{message}");
    assert!(message.contains("class"), "{message}");
    // not a third class when the encoder was fitted without that row
    let enc = TableEncoder::fit(&t, "y", &EncoderParams::default(), Some(&[0, 1, 2, 4]))
        .expect("clean rows");
    assert_eq!(enc.class_states.len(), 2);
    let (_, line, _) = parse_at(enc.encode(&t, None));
    assert_eq!(line, 5);
    let q = CsvTable::parse(&uci_table(2, "?"), "q.csv").expect("parses as text");
    assert_eq!(
        parse_at(TableEncoder::fit(&q, "y", &EncoderParams::default(), None)).1,
        5
    );
}

#[test]
fn uci_empty_categorical_cell_is_missing_like_the_marker() -> Result<(), BayesError> {
    for cell in ["", "?"] {
        let t = CsvTable::parse(&uci_table(1, cell), "t.csv")?;
        let enc = TableEncoder::fit(&t, "y", &EncoderParams::default(), None)?;
        assert_eq!(
            enc.encodings[1],
            ColumnEncoding::Categorical(vec!["a".into(), "b".into()]),
            "cell {cell:?}"
        );
        let d = enc.encode(&t, None)?;
        assert_eq!(d.missing, vec![0, 1]);
        assert!(d.row(3)[1].is_nan());
    }
    Ok(())
}

#[test]
fn empty_bif_and_hugin_net_are_errors_not_empty_networks() {
    for text in [
        "",
        "\n\n  \n\t\n",
        "// only a comment\n",
        "network x {\n}\n",
    ] {
        let (file, _, message) = parse_at(parse_bif(text, "e.bif"));
        assert_eq!(file, "e.bif");
        assert!(message.contains("no variable"), "{message}");
    }
    for text in ["", "\n\n\n", "% only a comment\n", "net\n{\n}\n"] {
        let (file, _, message) = parse_at(parse_hugin_net(text, "e.net"));
        assert_eq!(file, "e.net");
        assert!(message.contains("no node"), "{message}");
    }
}

const TWO_NODE_BIF: &str = "network x {\n}\nvariable A {\n  type discrete [ 2 ] { a0, a1 };\n}\nvariable B {\n  type discrete [ 2 ] { b0, b1 };\n}\nprobability ( A ) {\n  table 0.3, 0.7;\n}\nprobability ( B | A ) {\n  (a0) 0.9, 0.1;\n  (a1) 0.4, 0.6;\n}\n";

#[test]
fn all_zero_cpt_row_is_an_error_naming_variable_and_row() {
    let bad = TWO_NODE_BIF.replace("(a1) 0.4, 0.6;", "(a1) 0, 0.0;");
    let (_, line, message) = parse_at(parse_bif(&bad, "z.bif"));
    assert_eq!(line, 12, "{message}");
    assert!(
        message.contains("`B`") && message.contains("A = a1") && message.contains("all zero"),
        "{message}"
    );
    let root = TWO_NODE_BIF.replace("table 0.3, 0.7;", "table 0, 0;");
    let (_, line, message) = parse_at(parse_bif(&root, "z.bif"));
    assert_eq!(line, 9);
    assert!(
        message.contains("`A`") && message.contains("root"),
        "{message}"
    );
    let net = "node C\n{\n  states = (\"s0\" \"s1\");\n}\nnode F\n{\n  states = (\"s0\" \"s1\");\n}\npotential ( C )\n{\n  data = ( 0.6 0.4 );\n}\npotential ( F | C )\n{\n  data = ( ( 0.9 0.1 ) ( 0 0 ) );\n}\n";
    let (_, line, message) = parse_at(parse_hugin_net(net, "z.net"));
    assert_eq!(line, 13);
    assert!(
        message.contains("`F`") && message.contains("C = s1"),
        "{message}"
    );
    // the constructor rejects it too, for networks built in code
    let e = BayesianNetwork::new(
        vec![Variable::numbered("A", 2), Variable::numbered("B", 2)],
        vec![
            Cpt {
                parents: vec![],
                probs: vec![0.5, 0.5],
            },
            Cpt {
                parents: vec![0],
                probs: vec![0.0, 0.0, 0.5, 0.5],
            },
        ],
    )
    .expect_err("zero row");
    let m = e.to_string();
    assert!(m.contains("`B`") && m.contains("A = s0"), "{m}");
}

#[test]
fn io_error_prints_the_path_and_leaves_the_cause_to_the_chain() {
    let e = read_bif(std::path::Path::new("/nonexistent/x.bif")).expect_err("missing");
    let top = e.to_string();
    let cause = std::error::Error::source(&e).map(ToString::to_string);
    assert!(top.contains("/nonexistent/x.bif"), "{top}");
    let cause = cause.expect("the I/O error is the source");
    assert!(
        !top.contains(&cause),
        "cause printed twice: {top} / {cause}"
    );
}

#[test]
fn bif_writer_round_trips_random_networks() -> Result<(), BayesError> {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    for n in 1..12 {
        let net = random_network(&mut rng, n);
        let text = to_bif_string(&net, "random")?;
        assert_eq!(parse_bif(&text, "random.bif")?, net);
    }
    Ok(())
}

/// Every BIF network of the bnlearn repository and every TrimBN Hugin network: read, write
/// as BIF, read back: equal (same variables, states, parent order, bit-identical tables),
/// and writing the copy again gives the same text.
#[test]
fn bif_writer_round_trips_bnlearn_and_trimbn_networks() -> Result<(), BayesError> {
    let Some(dir) = data_dir() else {
        eprintln!("skipping: SRL_DATA_DIR not set");
        return Ok(());
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for sub in ["bnlearn_bif", "trimbn_networks/derived"] {
        if let Ok(entries) = std::fs::read_dir(dir.join(sub)) {
            files.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| {
                        let n = p.to_string_lossy();
                        n.ends_with(".bif.gz") || n.ends_with(".bif") || n.ends_with(".net")
                    }),
            );
        }
    }
    files.sort();
    if files.is_empty() {
        eprintln!("skipping: no BIF or NET networks under {}", dir.display());
        return Ok(());
    }
    let out = std::env::temp_dir().join(format!("srl-bayes-bif-rt-{}", std::process::id()));
    std::fs::create_dir_all(&out).map_err(|source| BayesError::Io {
        path: out.clone(),
        source,
    })?;
    for f in &files {
        let net = if f.to_string_lossy().ends_with(".net") {
            read_hugin_net(f)?
        } else {
            read_bif(f)?
        };
        let name = f
            .file_name()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        let copy = out.join(format!("{name}.bif"));
        write_bif(&net, &copy)?;
        let back = read_bif(&copy)?;
        assert!(back == net, "{}: the copy differs", f.display());
        assert_eq!(
            to_bif_string(&back, "x")?,
            to_bif_string(&net, "x")?,
            "{}",
            f.display()
        );
        eprintln!(
            "{name}: {} variables round-trip; rows off 1 by > 1e-6: {} (max {:e})",
            net.len(),
            net.unnormalized_rows(1e-6),
            net.max_row_deviation()
        );
    }
    let _ = std::fs::remove_dir_all(&out);
    Ok(())
}
