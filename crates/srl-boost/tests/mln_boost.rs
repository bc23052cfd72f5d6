//! MLN-Boost (Khot et al. 2011): regression values and gradients on a hand-built world
//! whose counts of true groundings are known, the limits of clauses whose groundings are
//! all true or all false, the printed MLN, serialisation and seeding.

use std::path::{Path, PathBuf};

use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_boost::{
    Background, MlnBoost, MlnBoostParams, NegativeSampling, OtherTargets, SoftRfgbParams, TreeNode,
    TreeParams, build_split, load_split, mln_gradient, parse_atoms, parse_background,
    read_background, sigmoid,
};

/// cancer(X) with friends(+person,-person): a has 3 friends, b 2, c and d none.
fn world(facts: &str) -> (Background, srl_boost::Split) {
    let bk = parse_background(
        "mode: friends(+person,-person).\nmode: cancer(+person).",
        Path::new("bk.txt"),
    )
    .expect("bk");
    let facts = parse_atoms(facts, Path::new("facts.txt")).expect("facts");
    let pos = parse_atoms("cancer(a).\ncancer(b).", Path::new("pos.txt")).expect("pos");
    let neg = parse_atoms("cancer(c).\ncancer(d).", Path::new("neg.txt")).expect("neg");
    let split = build_split(
        &facts,
        &pos,
        &neg,
        "cancer",
        &bk,
        OtherTargets::Ignore,
        Path::new("facts.txt"),
    )
    .expect("split");
    (bk, split)
}

const FRIENDS: &str = "friends(a,x1).\nfriends(a,x2).\nfriends(a,x3).\nfriends(b,x1).\nfriends(b,x2).\nfriends(x1,x2).";

/// One tree, one split, ψ₀ = 0, every example, background settings off.
fn one_split() -> MlnBoostParams {
    MlnBoostParams {
        n_trees: 1,
        initial_log_odds: 0.0,
        negative_sampling: NegativeSampling::All,
        apply_background_settings: false,
        tree: TreeParams {
            max_leaves: 2,
            min_leaf_examples: 1,
            ..TreeParams::boostsrl()
        },
        ..MlnBoostParams::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn hand_built_world_regression_values_and_gradients() {
    let (bk, split) = world(FRIENDS);
    let model = one_split()
        .fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0),
        )
        .expect("fit");
    let tree = &model.trees()[0];
    assert!(tree.per_grounding());
    // The only useful test: friends(A, B). a has 3 groundings of B, b has 2; c and d
    // fail it and keep their root count 1.
    let TreeNode::Split { test, .. } = &tree.nodes()[0] else {
        panic!("root is a leaf: {tree}");
    };
    assert_eq!(test.len(), 1);
    assert_eq!(test[0].to_string(), "friends(A, B)");
    let counts: Vec<u64> = tree
        .leaf_counts(&split.db, &split.examples)
        .expect("counts")
        .into_iter()
        .map(|(_, n)| n)
        .collect();
    assert_eq!(counts, vec![3, 2, 1, 1]);
    // ψ₀ = 0: p = 1/2, Δ = +1/2 for a, b and −1/2 for c, d.
    // True leaf: w = Σ nΔ / Σ n² = (3·½ + 2·½) / (9 + 4) = 2.5 / 13.
    // False leaf: w = (−½ − ½) / (1 + 1) = −½.
    let w_yes = 2.5 / 13.0;
    let w_no = -0.5;
    let psi = model
        .decision_function(&split.db, &split.examples)
        .expect("psi");
    let want = [3.0 * w_yes, 2.0 * w_yes, w_no, w_no];
    for (g, w) in psi.iter().zip(want) {
        assert!(close(*g, w), "{psi:?} vs {want:?}");
    }
    // The per-example regression values of the tree are the same weighted counts.
    let values = tree.predict(&split.db, &split.examples).expect("values");
    for (g, w) in values.iter().zip(want) {
        assert!(close(*g, w));
    }
    // Gradient I(y = 1) − P(y = 1 | MB).
    let grads = model.gradients(&split.db, &split.examples).expect("grads");
    let labels = [true, true, false, false];
    for ((g, w), y) in grads.iter().zip(want).zip(labels) {
        let hand = if y {
            1.0 - 1.0 / (1.0 + (-w).exp())
        } else {
            -1.0 / (1.0 + (-w).exp())
        };
        assert!(close(*g, hand), "{g} vs {hand}");
        assert!(close(*g, mln_gradient(y, sigmoid(w))));
    }
    // The probabilities are sigmoid of ψ.
    let p = model.predict_proba(&split.db, &split.examples).expect("p");
    assert!(close(p[0], sigmoid(7.5 / 13.0)));
    assert!(close(p[2], sigmoid(-0.5)));
}

#[test]
fn counts_drive_the_leaf_weight_unlike_rdn_boosting() {
    // The RDN tree's leaf is the mean gradient (½), whatever the counts; the MLN
    // leaf is a weight per grounding, so the same split gives different values.
    let (bk, split) = world(FRIENDS);
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let rdn = one_split()
        .as_rfgb()
        .fit(&split.db, &bk, &split.examples, &mut rng)
        .expect("rdn");
    let psi = rdn
        .decision_function(&split.db, &split.examples)
        .expect("psi");
    assert!(close(psi[0], 0.5) && close(psi[1], 0.5) && close(psi[2], -0.5));
    assert!(!rdn.trees()[0].per_grounding());
    // With every count 1 the two coincide: give each person exactly one friend.
    let (bk1, split1) = world("friends(a,x1).\nfriends(b,x2).");
    let mln = one_split()
        .fit(&split1.db, &bk1, &split1.examples, &mut rng)
        .expect("mln");
    let rdn1 = one_split()
        .as_rfgb()
        .fit(&split1.db, &bk1, &split1.examples, &mut rng)
        .expect("rdn");
    assert_eq!(
        mln.decision_function(&split1.db, &split1.examples)
            .expect("psi"),
        rdn1.decision_function(&split1.db, &split1.examples)
            .expect("psi")
    );
}

#[test]
fn clauses_with_all_groundings_true_or_false_give_the_limits() {
    let (bk, split) = world(FRIENDS);
    let model = one_split()
        .fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0),
        )
        .expect("fit");
    let w_yes = 2.5 / 13.0;
    // A world of k + 1 persons where e is friends with every other one: every grounding
    // of friends(e, B) is true, n = k, ψ = k·w grows linearly and P → 1. f has no
    // friend: every grounding of friends(f, B) is false, the clause contributes
    // nothing and f gets the false leaf's clause, true for its one grounding: ψ = −½.
    for k in [1usize, 2, 5, 20, 200] {
        let mut facts = String::new();
        for j in 0..k {
            facts.push_str(&format!("friends(e,p{j}).\n"));
        }
        let facts = parse_atoms(&facts, Path::new("f.txt")).expect("facts");
        let pos = parse_atoms("cancer(e).", Path::new("p.txt")).expect("pos");
        let neg = parse_atoms("cancer(f).", Path::new("n.txt")).expect("neg");
        let s = build_split(
            &facts,
            &pos,
            &neg,
            "cancer",
            &bk,
            OtherTargets::Ignore,
            Path::new("f.txt"),
        )
        .expect("split");
        let psi = model.decision_function(&s.db, &s.examples).expect("psi");
        assert!(close(psi[0], k as f64 * w_yes), "k = {k}: {psi:?}");
        assert!(close(psi[1], -0.5));
        let p = model.predict_proba(&s.db, &s.examples).expect("p");
        assert!(close(p[0], sigmoid(k as f64 * w_yes)));
        if k == 200 {
            assert!(p[0] > 1.0 - 1e-16, "{p:?}");
            let g = model.gradients(&s.db, &s.examples).expect("g");
            assert!(g[0].abs() < 1e-15, "{g:?}");
            assert!(close(g[1], -sigmoid(-0.5)));
        }
    }
}

#[test]
fn printed_mln_matches_the_counts() {
    let (bk, split) = world(FRIENDS);
    let model = one_split()
        .fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(0),
        )
        .expect("fit");
    let clauses = model.clauses();
    assert_eq!(clauses.len(), 3);
    assert_eq!(clauses[0], (0.0, "cancer(a)".to_owned()));
    assert!(close(clauses[1].0, 2.5 / 13.0));
    assert_eq!(clauses[1].1, "friends(a, b) => cancer(a)");
    assert!(close(clauses[2].0, -0.5));
    assert_eq!(clauses[2].1, "!(EXIST b (friends(a, b))) => cancer(a)");
    let text = model.to_string();
    assert!(text.contains("MLN-Boost model for cancer/1"), "{text}");
    assert!(text.contains("-0.500000  !(EXIST b (friends(a, b))) => cancer(a)"));
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn tiny() -> (Background, srl_boost::Split) {
    let dir = fixtures().join("tiny");
    let bk = read_background(&dir.join("background.txt")).expect("background");
    let split = load_split(
        &dir.join("train"),
        "train",
        "advisedby",
        &bk,
        OtherTargets::PositivesAsFacts,
    )
    .expect("split");
    (bk, split)
}

#[test]
fn learned_model_round_trips_through_serde_and_predicts_the_same() {
    let (bk, split) = tiny();
    let params = MlnBoostParams {
        n_trees: 3,
        negative_sampling: NegativeSampling::All,
        tree: TreeParams {
            min_leaf_examples: 1,
            ..TreeParams::default()
        },
        ..MlnBoostParams::default()
    };
    let model = params
        .fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(5),
        )
        .expect("fit");
    assert_eq!(model.trees().len(), 3);
    assert!(model.trees().iter().all(|t| t.per_grounding()));
    assert_eq!(model.train_log_likelihood().len(), 4);
    let json = serde_json::to_string(&model).expect("save");
    let back: MlnBoost = serde_json::from_str(&json).expect("load");
    assert_eq!(back, model);
    assert_eq!(
        back.predict_proba(&split.db, &split.examples).expect("p"),
        model.predict_proba(&split.db, &split.examples).expect("p")
    );
    assert_eq!(back.to_string(), model.to_string());
    // A plain RFGB tree does not write the per-grounding flag (older files unchanged).
    let rfgb = SoftRfgbParams {
        n_trees: 1,
        negative_sampling: NegativeSampling::All,
        ..SoftRfgbParams::default()
    }
    .fit(
        &split.db,
        &bk,
        &split.examples,
        &mut ChaCha8Rng::seed_from_u64(5),
    )
    .expect("rfgb");
    assert!(
        !serde_json::to_string(&rfgb)
            .expect("json")
            .contains("per_grounding")
    );
}

#[test]
fn same_seed_same_model() {
    let (bk, split) = tiny();
    let params = MlnBoostParams {
        n_trees: 3,
        negative_sampling: NegativeSampling::PerTree(1.0),
        tree: TreeParams {
            min_leaf_examples: 1,
            ..TreeParams::default()
        },
        ..MlnBoostParams::default()
    };
    let fit = |seed| {
        params
            .fit(
                &split.db,
                &bk,
                &split.examples,
                &mut ChaCha8Rng::seed_from_u64(seed),
            )
            .expect("fit")
    };
    let a = fit(9);
    assert_eq!(a, fit(9));
    assert_eq!(a.tree_sets(), fit(9).tree_sets());
    // Same result on one rayon thread as on the default pool.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    assert_eq!(pool.install(|| fit(9)), a);
}

#[test]
fn invalid_parameters_are_errors() {
    let (bk, split) = tiny();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let bad = MlnBoostParams {
        n_trees: 0,
        ..MlnBoostParams::default()
    };
    assert!(bad.fit(&split.db, &bk, &split.examples, &mut rng).is_err());
    let only_pos = split.examples.subset(&[0]);
    assert!(
        MlnBoostParams::default()
            .fit(&split.db, &bk, &only_pos, &mut rng)
            .is_err()
    );
}

#[test]
fn uwcse_fold1_advisedby_if_present() {
    let dir = std::env::var_os("SRL_DATA_DIR")
        .map_or_else(|| PathBuf::from("/work/shared/data"), PathBuf::from)
        .join("boostsrl_uwcse");
    if !dir.is_dir() {
        return;
    }
    let bk = read_background(&dir.join("background.txt")).expect("bk");
    let train = load_split(
        &dir.join("fold1/train"),
        "train",
        "advisedby",
        &bk,
        OtherTargets::PositivesAsFacts,
    )
    .expect("train");
    let test = load_split(
        &dir.join("fold1/test"),
        "test",
        "advisedby",
        &bk,
        OtherTargets::PositivesAsFacts,
    )
    .expect("test");
    let model = MlnBoostParams::default()
        .fit(
            &train.db,
            &bk,
            &train.examples,
            &mut ChaCha8Rng::seed_from_u64(1),
        )
        .expect("fit");
    let p = model.predict_proba(&test.db, &test.examples).expect("p");
    let y = test.examples.labels();
    let mean = |want: bool| {
        let v: Vec<f64> = p
            .iter()
            .zip(y)
            .filter(|(_, l)| **l == want)
            .map(|(p, _)| *p)
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    };
    assert!(
        mean(true) > mean(false) + 0.2,
        "{} {}",
        mean(true),
        mean(false)
    );
}
