//! Integration tests of srl-eval: reference values computed independently (scikit-learn and
//! an exact Davis & Goadrich implementation, see `tests/reference/sklearn_reference.py`), and
//! property tests against brute-force oracles.

use proptest::prelude::*;
use srl_eval::EvalError;
use srl_eval::cv::{Folds, cross_validate};
use srl_eval::metrics::{
    Confusion, CostTable, MatchedAverage, RocCurve, WeightedAuc, accuracy, agreement, auc_pr,
    auc_roc, structured_cost, structured_cost_with,
};
use srl_graph::NodeId;

/// Reference values. Produced once with
///
/// ```text
/// pip install scikit-learn   # scikit-learn 1.9.1, numpy 2.4.6, scipy 1.17.1, Python 3.11.7
/// python3 crates/srl-eval/tests/reference/sklearn_reference.py
/// ```
///
/// accuracy / precision / recall / F5 / FNR at threshold 0.5 (`score >= 0.5` positive) and
/// AUC-ROC come from scikit-learn (`accuracy_score`, `precision_score`, `recall_score`,
/// `fbeta_score(beta=5)`, `1 - recall_score`, `roc_auc_score`). scikit-learn has no Davis &
/// Goadrich interpolation: `auc_pr` is the script's exact-rational implementation of the
/// AUCCalculator procedure (its `average_precision_score`, step-wise, is printed there for
/// comparison: 0.70873, 0.84167, 0.62980 — not the same quantity). `wauc` is the script's
/// numerical integration of Eq. 5 over scikit-learn's `roc_curve` (scipy `quad`, adaptive
/// Gauss-Kronrod with the curve's breakpoints), hence the looser tolerance.
mod reference {
    pub struct Fixture {
        pub name: &'static str,
        pub scores: &'static [f64],
        pub truth: &'static [u8],
        pub accuracy: f64,
        pub precision: f64,
        pub recall: f64,
        pub fnr: f64,
        pub f5: f64,
        pub auc_roc: f64,
        pub auc_pr: f64,
        /// N = 5, γ = 0.8.
        pub wauc: f64,
        /// N = 3, γ = 0.5.
        pub wauc_3_05: f64,
    }

    pub const FIXTURES: [Fixture; 3] = [
        Fixture {
            name: "ties",
            scores: &[0.9, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.4, 0.3, 0.2],
            truth: &[1, 1, 0, 1, 0, 1, 0, 0, 1, 0],
            accuracy: 0.6,
            precision: 0.5714285714285714,
            recall: 0.8,
            fnr: 0.19999999999999996,
            f5: 0.7878787878787878,
            auc_roc: 0.7,
            auc_pr: 0.746031746031746, // exact 47/63
            wauc: 0.407648,
            wauc_3_05: 0.5553125,
        },
        Fixture {
            name: "auccalc",
            scores: &[0.9, 0.8, 0.7, 0.6, 0.55, 0.54, 0.53, 0.52, 0.51, 0.505],
            truth: &[1, 1, 0, 1, 1, 1, 0, 0, 1, 0],
            accuracy: 0.6,
            precision: 0.6,
            recall: 1.0,
            fnr: 0.0,
            f5: 0.975,
            auc_roc: 0.75,
            auc_pr: 0.8243055555555555, // exact 1187/1440
            wauc: 0.46589333333333327,
            wauc_3_05: 0.640625,
        },
        Fixture {
            name: "imbalanced",
            scores: &[
                1.0, 1.0, 1.0, 1.0, 0.7, 0.7, 0.5, 0.5, 0.5, 0.2, 0.2, 0.1, 0.1, 0.0, 0.0,
            ],
            truth: &[1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0],
            accuracy: 0.6,
            precision: 0.4444444444444444,
            recall: 0.8,
            fnr: 0.19999999999999996,
            f5: 0.7761194029850746,
            auc_roc: 0.7799999999999999,
            auc_pr: 0.6343434343434343, // exact 314/495
            wauc: 0.5793116444444444,
            wauc_3_05: 0.6776562500000001,
        },
    ];
}

fn bools(t: &[u8]) -> Vec<bool> {
    t.iter().map(|&x| x == 1).collect()
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: ours {a}, reference {b}");
}

#[test]
fn matches_scikit_learn_and_davis_goadrich_reference() {
    for f in &reference::FIXTURES {
        let truth = bools(f.truth);
        let c = Confusion::at_threshold(f.scores, &truth, 0.5).unwrap();
        let name = f.name;
        close(c.accuracy().unwrap(), f.accuracy, 1e-12, name);
        close(c.precision().unwrap(), f.precision, 1e-12, name);
        close(c.recall().unwrap(), f.recall, 1e-12, name);
        close(c.false_negative_rate().unwrap(), f.fnr, 1e-12, name);
        close(c.f_beta(5.0).unwrap(), f.f5, 1e-12, name);
        let predicted: Vec<bool> = f.scores.iter().map(|&s| s >= 0.5).collect();
        close(
            accuracy(&predicted, &truth).unwrap(),
            f.accuracy,
            1e-12,
            name,
        );
        let curve = RocCurve::new(f.scores, &truth).unwrap();
        close(curve.auc().unwrap(), f.auc_roc, 1e-12, name);
        close(auc_roc(f.scores, &truth).unwrap(), f.auc_roc, 1e-12, name);
        close(curve.auc_pr().unwrap(), f.auc_pr, 1e-12, name);
        close(auc_pr(f.scores, &truth).unwrap(), f.auc_pr, 1e-12, name);
        let w = WeightedAuc::default().score(&curve).unwrap();
        close(w, f.wauc, 1e-10, name);
        let w = WeightedAuc { n: 3, gamma: 0.5 }.score(&curve).unwrap();
        close(w, f.wauc_3_05, 1e-10, name);
    }
}

/// The values AUCCalculator's own test suite asserts (`ConfusionTest.java`,
/// `testConfusionFromPredictions1` and `2`, minimum recall 0).
#[test]
fn matches_auccalculator_test_suite() {
    let scores = [0.9, 0.8, 0.7, 0.6, 0.55, 0.54, 0.53, 0.52, 0.51, 0.505];
    let truth = bools(&[1, 1, 0, 1, 1, 1, 0, 0, 1, 0]);
    close(
        auc_pr(&scores, &truth).unwrap(),
        0.8243055555555555,
        1e-15,
        "1",
    );
    close(auc_roc(&scores, &truth).unwrap(), 0.75, 0.0, "1");
    let scores = [0.75, 0.85, 0.6, 0.4, 0.0001];
    let truth = bools(&[0, 0, 0, 0, 1]);
    close(auc_pr(&scores, &truth).unwrap(), 0.2, 1e-15, "2");
    close(auc_roc(&scores, &truth).unwrap(), 0.0, 0.0, "2");
}

#[test]
fn invalid_inputs_are_typed_errors() {
    assert!(matches!(auc_roc(&[], &[]), Err(EvalError::Empty { .. })));
    assert!(matches!(
        auc_roc(&[0.1, 0.2], &[true]),
        Err(EvalError::LengthMismatch {
            expected: 2,
            found: 1,
            ..
        })
    ));
    assert!(matches!(
        auc_pr(&[f64::NAN, 0.2], &[true, false]),
        Err(EvalError::NanValue { index: 0, .. })
    ));
    assert!(matches!(
        WeightedAuc::default().compute(&[0.3, 0.2], &[false, false]),
        Err(EvalError::SingleClass { positives: 0, .. })
    ));
    assert!(matches!(
        auc_roc(&[0.3, 0.2], &[true, true]),
        Err(EvalError::SingleClass { negatives: 0, .. })
    ));
    assert!(matches!(
        accuracy(&[1u32], &[]),
        Err(EvalError::LengthMismatch { .. })
    ));
    assert!(matches!(
        agreement::<bool>(&[], &[]),
        Err(EvalError::Empty { .. })
    ));
    // Errors render as lowercase messages without a period.
    let msg = auc_roc(&[0.3, 0.2], &[true, true]).unwrap_err().to_string();
    assert_eq!(
        msg,
        "auc_roc is undefined with a single class present (2 positives, 0 negatives)"
    );
}

/// Brute-force Mann-Whitney: `Pr(s⁺ > s⁻) + ½ Pr(s⁺ = s⁻)` over all pairs.
fn mann_whitney(scores: &[f64], truth: &[bool]) -> f64 {
    let (mut num, mut pairs) = (0.0, 0.0);
    for (i, &si) in scores.iter().enumerate() {
        for (j, &sj) in scores.iter().enumerate() {
            if truth[i] && !truth[j] {
                pairs += 1.0;
                if si > sj {
                    num += 1.0;
                } else if si == sj {
                    num += 0.5;
                }
            }
        }
    }
    num / pairs
}

/// Numerical Eq. 5: midpoint rule over each TPR strip of `1 - FPR(t)`, where `FPR(t)` is
/// the smallest FPR at which the linearly interpolated ROC curve reaches TPR `t`.
/// `rates` are the curve's `(FPR, TPR)` points from the origin, `weights` the strip weights.
fn weighted_auc_numeric(rates: &[(f64, f64)], weights: &[f64], grid: usize) -> f64 {
    let strips = weights.len() as f64;
    let fpr_at = |t: f64| -> f64 {
        for w in rates.windows(2) {
            let ((f0, t0), (f1, t1)) = (w[0], w[1]);
            if t1 > t0 && t <= t1 && t >= t0 {
                return f0 + (f1 - f0) * (t - t0) / (t1 - t0);
            }
        }
        1.0
    };
    let mut total = 0.0;
    for (x, w) in weights.iter().enumerate() {
        let lo = x as f64 / strips;
        let h = 1.0 / strips / grid as f64;
        let area: f64 = (0..grid)
            .map(|i| (1.0 - fpr_at(lo + (i as f64 + 0.5) * h)) * h)
            .sum();
        total += w * area;
    }
    total
}

/// Scores with ties (a few distinct values) and both classes present.
fn scored_instances(max_len: usize) -> impl Strategy<Value = (Vec<f64>, Vec<bool>)> {
    prop::collection::vec((0u8..8, any::<bool>()), 2..max_len)
        .prop_filter("both classes", |v| {
            v.iter().any(|x| x.1) && v.iter().any(|x| !x.1)
        })
        .prop_map(|v| {
            let scores = v.iter().map(|x| f64::from(x.0) / 7.0).collect();
            let truth = v.iter().map(|x| x.1).collect();
            (scores, truth)
        })
}

proptest! {
    #[test]
    fn roc_points_are_brute_force_counts(
        v in prop::collection::vec((-3i8..4, any::<bool>()), 1..40),
    ) {
        // Scores with ties, negatives, and both zeros.
        let scores: Vec<f64> = v
            .iter()
            .map(|x| if x.0 == -3 { -0.0 } else { f64::from(x.0) * 0.5 })
            .collect();
        let truth: Vec<bool> = v.iter().map(|x| x.1).collect();
        let curve = RocCurve::new(&scores, &truth).unwrap();
        let mut distinct = scores.iter().map(|&s| s + 0.0).collect::<Vec<f64>>();
        distinct.sort_by(|a, b| b.total_cmp(a));
        distinct.dedup();
        prop_assert_eq!(curve.points().len(), distinct.len());
        for (q, &t) in curve.points().iter().zip(&distinct) {
            prop_assert_eq!(q.threshold, t);
            let c = Confusion::at_threshold(&scores, &truth, t).unwrap();
            prop_assert_eq!((q.true_pos, q.false_pos), (c.true_pos, c.false_pos));
        }
        prop_assert_eq!(curve.positives(), truth.iter().filter(|&&t| t).count() as u64);
        prop_assert_eq!(curve.negatives(), truth.iter().filter(|&&t| !t).count() as u64);
    }

    #[test]
    fn auc_is_mann_whitney((scores, truth) in scored_instances(40)) {
        let auc = auc_roc(&scores, &truth).unwrap();
        prop_assert!((auc - mann_whitney(&scores, &truth)).abs() < 1e-12);
        prop_assert!((0.0..=1.0).contains(&auc));
    }

    #[test]
    fn ranking_metrics_invariant_under_monotone_transforms(
        (scores, truth) in scored_instances(40),
        a in 0.1f64..5.0,
        b in -3.0f64..3.0,
    ) {
        // Strictly increasing transforms: affine with a > 0, exp, and a cubic.
        let transformed: Vec<Vec<f64>> = vec![
            scores.iter().map(|s| a * s + b).collect(),
            scores.iter().map(|s| (a * s).exp()).collect(),
            scores.iter().map(|s| (s - 0.5).powi(3) + b).collect(),
        ];
        let c0 = RocCurve::new(&scores, &truth).unwrap();
        let w = WeightedAuc::default();
        for t in &transformed {
            let c = RocCurve::new(t, &truth).unwrap();
            prop_assert_eq!(c.auc().unwrap(), c0.auc().unwrap());
            prop_assert_eq!(c.auc_pr().unwrap(), c0.auc_pr().unwrap());
            prop_assert_eq!(w.score(&c).unwrap(), w.score(&c0).unwrap());
        }
    }

    #[test]
    fn ranking_metrics_in_unit_interval(
        (scores, truth) in scored_instances(40),
        n in 1usize..8,
        gamma in 0.0f64..0.99,
    ) {
        let c = RocCurve::new(&scores, &truth).unwrap();
        let w = WeightedAuc { n, gamma }.score(&c).unwrap();
        prop_assert!((-1e-12..=1.0 + 1e-12).contains(&w), "wauc {}", w);
        let pr = c.auc_pr().unwrap();
        prop_assert!(pr > 0.0 && pr <= 1.0 + 1e-12, "auc_pr {}", pr);
    }

    #[test]
    fn weighted_auc_of_perfect_ranking_is_one(
        pos in 1usize..30,
        neg in 1usize..30,
        n in 1usize..10,
        gamma in 0.0f64..0.99,
    ) {
        let scores: Vec<f64> = (0..pos + neg).map(|i| -(i as f64)).collect();
        let truth: Vec<bool> = (0..pos + neg).map(|i| i < pos).collect();
        let w = WeightedAuc { n, gamma }.compute(&scores, &truth).unwrap();
        prop_assert!((w - 1.0).abs() < 1e-12, "{}", w);
        prop_assert_eq!(auc_pr(&scores, &truth).unwrap(), 1.0);
    }

    #[test]
    fn weighted_auc_matches_numeric_integration(
        (scores, truth) in scored_instances(16),
        n in 1usize..6,
        gamma in 0.0f64..0.95,
    ) {
        let c = RocCurve::new(&scores, &truth).unwrap();
        let params = WeightedAuc { n, gamma };
        let exact = params.score(&c).unwrap();
        let numeric =
            weighted_auc_numeric(&c.rates().unwrap(), &params.weights().unwrap(), 4000);
        // The midpoint rule errs by at most h per jump of FPR(t) (≤ 16 jumps), times W ≤ 20.
        prop_assert!((exact - numeric).abs() < 2e-3, "exact {} numeric {}", exact, numeric);
        // γ = 0 is the plain AUC.
        let plain = WeightedAuc { n, gamma: 0.0 }.score(&c).unwrap();
        prop_assert!((plain - c.auc().unwrap()).abs() < 1e-12);
    }

    #[test]
    fn cost_of_truth_is_zero_with_zero_diagonals(
        labels in prop::collection::vec(0u32..3, 2..20),
        raw_edges in prop::collection::vec((0usize..20, 0usize..20), 0..30),
        seed_costs in prop::collection::vec(0.0f64..2.0, 81),
    ) {
        let k = 3usize;
        let n = labels.len();
        let edges: Vec<(NodeId, NodeId)> = raw_edges
            .iter()
            .map(|&(u, v)| (NodeId::new(u % n), NodeId::new(v % n)))
            .collect();
        let mut node = seed_costs[..9].to_vec();
        for y in 0..k {
            node[y * k + y] = 0.0;
        }
        let mut edge = seed_costs.clone();
        for p in 0..k * k {
            edge[p * k * k + p] = 0.0;
        }
        let truth: Vec<Option<u32>> = labels.iter().map(|&y| Some(y)).collect();
        let c = structured_cost(
            &labels, &truth, k, &edges, CostTable::Shared(&node), CostTable::Shared(&edge),
        ).unwrap();
        prop_assert_eq!(c.total(), 0.0);
        prop_assert_eq!((c.nodes, c.edges), (n, edges.len()));
        // Any other labelling costs >= 0, and the slice and closure forms agree.
        let other: Vec<u32> = labels.iter().map(|&y| (y + 1) % 3).collect();
        let a = structured_cost(
            &other, &truth, k, &edges, CostTable::Shared(&node), CostTable::Shared(&edge),
        ).unwrap();
        let b = structured_cost_with(
            &other, &truth, k, &edges,
            |_, y, t| node[y as usize * k + t as usize],
            |_, y, t| {
                let py = y[0] as usize * k + y[1] as usize;
                let pt = t[0] as usize * k + t[1] as usize;
                edge[py * k * k + pt]
            },
        ).unwrap();
        prop_assert!(a.total() >= 0.0);
        prop_assert_eq!(a, b);
    }

    #[test]
    fn confusion_identities(
        (scores, truth) in scored_instances(40),
        threshold in 0.0f64..1.0,
    ) {
        let c = Confusion::at_threshold(&scores, &truth, threshold).unwrap();
        prop_assert_eq!(c.total(), scores.len() as u64);
        let r = c.recall().unwrap();
        prop_assert!((r + c.false_negative_rate().unwrap() - 1.0).abs() < 1e-15);
        if let Ok(p) = c.precision() && p + r > 0.0 {
            let eq4 = 26.0 * p * r / (25.0 * p + r);
            prop_assert!((c.f_beta(5.0).unwrap() - eq4).abs() < 1e-12);
        }
        let predicted: Vec<bool> = scores.iter().map(|&s| s >= threshold).collect();
        prop_assert_eq!(accuracy(&predicted, &truth).unwrap(), c.accuracy().unwrap());
        prop_assert_eq!(agreement(&predicted, &truth).unwrap(), c.accuracy().unwrap());
    }

    #[test]
    fn kfold_train_and_test_partition(n in 1usize..60, k in 1usize..8) {
        let k = k.min(n);
        let test: Vec<Vec<usize>> = (0..k).map(|f| (f..n).step_by(k).collect()).collect();
        let folds = Folds::new(n, test).unwrap();
        let ok = cross_validate(&folds, |fold| {
            let mut all: Vec<usize> = fold.train.iter().chain(fold.test).copied().collect();
            all.sort_unstable();
            all == (0..n).collect::<Vec<_>>()
                && fold.test.iter().all(|&i| fold.in_test[i])
                && fold.train.iter().all(|&i| !fold.in_test[i])
        });
        prop_assert!(ok.iter().all(|&b| b));
    }

    #[test]
    fn matched_average_of_disjoint_folds_is_pooled_accuracy(
        correct in prop::collection::vec(any::<bool>(), 1..50),
        k in 1usize..5,
    ) {
        let n = correct.len();
        let mut m = MatchedAverage::new(n);
        for f in 0..k.min(n) {
            let tested: Vec<usize> = (f..n).step_by(k.min(n)).collect();
            let c: Vec<bool> = tested.iter().map(|&i| correct[i]).collect();
            m.add_split(&tested, &c).unwrap();
        }
        let pooled = correct.iter().filter(|&&c| c).count() as f64 / n as f64;
        prop_assert!((m.value().unwrap() - pooled).abs() < 1e-12);
    }
}
