//! General factor graphs (issue 28): exact variable elimination against brute-force
//! enumeration on random small higher-order models, loopy BP against exact on factor
//! trees, the UAI MARKOV/BAYES reader of any arity.

use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_infer::InferError;
use srl_infer::factor_graph::{
    FactorBp, FactorGraph, FactorSchedule, UaiKind, VariableElimination, uai_map_string,
    uai_mar_string, uai_pr_string,
};

/// Every full assignment of `k` (first variable slowest).
fn assignments(k: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &kv in k {
        out = out
            .into_iter()
            .flat_map(|a| {
                (0..kv).map(move |s| {
                    let mut b = a.clone();
                    b.push(s);
                    b
                })
            })
            .collect();
    }
    out
}

fn lse(xs: &[f64]) -> f64 {
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// (ln Z, marginals, best score) by enumeration.
fn brute(g: &FactorGraph) -> (f64, Vec<Vec<f64>>, f64) {
    let all = assignments(g.num_states());
    let scores: Vec<f64> = all.iter().map(|a| g.log_score(a).expect("score")).collect();
    let z = lse(&scores);
    let mut marg: Vec<Vec<f64>> = g.num_states().iter().map(|&k| vec![0.0; k]).collect();
    for (a, s) in all.iter().zip(&scores) {
        for (v, &x) in a.iter().enumerate() {
            marg[v][x] += (s - z).exp();
        }
    }
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (z, marg, best)
}

/// A random model: `n` variables of 1–3 states, factors of arity 0–4, some hard zeros.
fn random_model(seed: u64, n: usize, nf: usize, zeros: bool) -> FactorGraph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let k: Vec<usize> = (0..n).map(|_| rng.random_range(1..=3)).collect();
    let mut g = FactorGraph::new(k.clone()).expect("model");
    for _ in 0..nf {
        let arity = rng.random_range(0..=n.min(4));
        let mut scope: Vec<usize> = Vec::new();
        while scope.len() < arity {
            let v = rng.random_range(0..n);
            if !scope.contains(&v) {
                scope.push(v);
            }
        }
        let len: usize = scope.iter().map(|&v| k[v]).product();
        let t: Vec<f64> = (0..len)
            .map(|_| {
                if zeros && rng.random_bool(0.15) {
                    f64::NEG_INFINITY
                } else {
                    rng.random_range(-2.0..2.0)
                }
            })
            .collect();
        g.add_factor(&scope, &t).expect("factor");
    }
    g
}

fn random_evidence(g: &FactorGraph, seed: u64) -> Vec<Option<u32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    g.num_states()
        .iter()
        .map(|&k| rng.random_bool(0.3).then(|| rng.random_range(0..k) as u32))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn exact_equals_brute_force(seed in 0u64..1_000_000, n in 1usize..7, nf in 0usize..8,
                                zeros: bool, with_evidence: bool) {
        let mut g = random_model(seed, n, nf, zeros);
        if with_evidence {
            let ev = random_evidence(&g, seed);
            g = g.with_evidence(ev).expect("evidence");
        }
        let (z, marg, best) = brute(&g);
        let ve = VariableElimination::default();
        let lz = ve.log_partition(&g).expect("pr");
        if z == f64::NEG_INFINITY {
            prop_assert_eq!(lz, f64::NEG_INFINITY);
            let is_zero = matches!(ve.marginals(&g), Err(InferError::ZeroProbability { .. }));
            prop_assert!(is_zero);
            let is_zero = matches!(ve.map(&g), Err(InferError::ZeroProbability { .. }));
            prop_assert!(is_zero);
        } else {
            prop_assert!((lz - z).abs() < 1e-9, "ln Z {} vs {}", lz, z);
            let m = ve.marginals(&g).expect("marginals");
            for (v, row) in marg.iter().enumerate() {
                for (a, b) in m.node(v).iter().zip(row) {
                    prop_assert!((a - b).abs() < 1e-9, "var {} {} vs {}", v, a, b);
                }
            }
            let map = ve.map(&g).expect("map");
            prop_assert!((map.log_score - best).abs() < 1e-9, "MAP {} vs {}", map.log_score, best);
            prop_assert_eq!(g.log_score(&map.states).expect("score"), map.log_score);
        }
    }

    #[test]
    fn bethe_is_a_lower_bound_on_attractive_binary_grids(seed in 0u64..1_000_000) {
        // Ruozzi (2012): Z_Bethe <= Z for log-supermodular binary pairwise models
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut g = FactorGraph::new(vec![2; 9]).expect("model");
        for v in 0..9 {
            let h = rng.random_range(-1.0..1.0);
            g.add_factor(&[v], &[0.0, h]).expect("field");
        }
        for r in 0..3 {
            for c in 0..3 {
                let v = r * 3 + c;
                let mut pair = |u: usize, w: usize| {
                    let j: f64 = rng.random_range(0.0..0.6);
                    g.add_factor(&[u, w], &[j, 0.0, 0.0, j]).expect("coupling");
                };
                if c < 2 {
                    pair(v, v + 1);
                }
                if r < 2 {
                    pair(v, v + 3);
                }
            }
        }
        let exact = VariableElimination::default().log_partition(&g).expect("exact");
        let bp = FactorBp { damping: 0.2, ..FactorBp::default() };
        let (bethe, conv) = bp.bethe_log_partition(&g).expect("bethe");
        prop_assume!(conv.converged);
        prop_assert!(bethe <= exact + 1e-9, "Bethe {} above ln Z {}", bethe, exact);
        prop_assert!(exact - bethe < 0.5, "Bethe {} far below ln Z {}", bethe, exact);
    }

    #[test]
    fn bp_is_exact_on_factor_trees(seed in 0u64..1_000_000, nf in 1usize..6, with_evidence: bool) {
        // a factor tree: each factor joins one old variable and 0-2 new ones
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut k = vec![rng.random_range(1..=3usize)];
        let mut scopes = Vec::new();
        for _ in 0..nf {
            let old = rng.random_range(0..k.len());
            let mut scope = vec![old];
            for _ in 0..rng.random_range(0..=2) {
                k.push(rng.random_range(1..=3));
                scope.push(k.len() - 1);
            }
            // shuffle the position of the old variable
            let p = rng.random_range(0..scope.len());
            scope.swap(0, p);
            scopes.push(scope);
        }
        let mut g = FactorGraph::new(k.clone()).expect("model");
        for s in &scopes {
            let len: usize = s.iter().map(|&v| k[v]).product();
            let t: Vec<f64> = (0..len).map(|_| rng.random_range(-2.0..2.0)).collect();
            g.add_factor(s, &t).expect("factor");
        }
        if with_evidence {
            let ev = random_evidence(&g, seed);
            g = g.with_evidence(ev).expect("evidence");
        }
        let exact = VariableElimination::default().marginals(&g).expect("exact");
        for schedule in [FactorSchedule::Flooding, FactorSchedule::Sequential, FactorSchedule::Residual] {
            let bp = FactorBp { schedule, ..FactorBp::default() }.marginals(&g).expect("bp");
            prop_assert!(bp.convergence().converged);
            for v in 0..g.num_vars() {
                for (a, b) in bp.node(v).iter().zip(exact.node(v)) {
                    prop_assert!((a - b).abs() < 1e-9, "{:?} var {} bp {} exact {}", schedule, v, a, b);
                }
            }
        }
        let (z, _, best) = brute(&g);
        let (bethe, conv) = FactorBp::default().bethe_log_partition(&g).expect("bethe");
        prop_assert!(conv.converged);
        prop_assert!((bethe - z).abs() < 1e-9, "Bethe {} vs ln Z {}", bethe, z);
        let map = FactorBp::default().map(&g).expect("max-product");
        // continuous random tables: the maximiser is unique, so max-product finds it
        prop_assert!((map.log_score - best).abs() < 1e-9);
    }
}

#[test]
fn bp_is_deterministic_and_close_on_a_loopy_model() {
    let g = random_model(7, 8, 10, false);
    let bp = FactorBp {
        damping: 0.3,
        ..FactorBp::default()
    };
    let a = bp.marginals(&g).expect("bp");
    let b = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool")
        .install(|| bp.marginals(&g).expect("bp"));
    assert_eq!(a, b, "same bits for any thread count");
    let seq = FactorBp {
        schedule: FactorSchedule::Sequential,
        ..bp
    }
    .marginals(&g)
    .expect("sequential");
    assert!(a.convergence().converged && seq.convergence().converged);
    for v in 0..g.num_vars() {
        for (x, y) in a.node(v).iter().zip(seq.node(v)) {
            assert!((x - y).abs() < 1e-6, "the same fixed point: {x} vs {y}");
        }
    }
    for v in 0..g.num_vars() {
        assert!((a.node(v).iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
    // residual BP reaches the same fixed point, with no more updates than flooding
    let res = FactorBp {
        schedule: FactorSchedule::Residual,
        ..bp
    }
    .marginals(&g)
    .expect("residual");
    assert!(res.convergence().converged, "{:?}", res.convergence());
    assert!(res.convergence().iterations <= a.convergence().iterations);
    for v in 0..g.num_vars() {
        for (x, y) in a.node(v).iter().zip(res.node(v)) {
            assert!((x - y).abs() < 1e-6, "the same fixed point: {x} vs {y}");
        }
    }
    // and max-product with the residual schedule decodes a possible state
    let map = FactorBp {
        schedule: FactorSchedule::Residual,
        ..FactorBp::default()
    }
    .map(&g)
    .expect("map");
    assert!(map.log_score.is_finite());
}

#[test]
fn uai_markov_of_arity_three_and_bayes() {
    let text = "MARKOV\n3\n2 2 2\n2\n3 0 1 2\n1 2\n8\n 1 2 3 4 5 6 7 8\n2\n 1 3\n";
    let (g, kind, w) = FactorGraph::from_uai_str(text, "m.uai").expect("model");
    assert_eq!(kind, UaiKind::Markov);
    assert!(w.is_empty());
    assert!(!g.is_pairwise());
    // Z = Σ_{x0 x1} (t(x0,x1,0)·1 + t(x0,x1,1)·3) = (1+3+5+7) + 3(2+4+6+8) = 76
    let lz = VariableElimination::default()
        .log_partition(&g)
        .expect("pr");
    assert!((lz - 76f64.ln()).abs() < 1e-12);
    let pr = uai_pr_string(lz);
    let log10: f64 = pr
        .strip_prefix("PR\n")
        .and_then(|t| t.trim().parse().ok())
        .expect("PR");
    assert!((log10 - 76f64.log10()).abs() < 1e-12, "{pr}");
    let bayes = "BAYES\n3\n2 2 2\n3\n1 0\n1 1\n3 0 1 2\n2 0.3 0.7\n2 0.6 0.4\n8\n 1 0 0.5 0.5 0.2 0.8 0 1\n";
    let (g, kind, _) = FactorGraph::from_uai_str(bayes, "b.uai").expect("bayes");
    assert_eq!(kind, UaiKind::Bayes);
    let ve = VariableElimination::default();
    assert!(ve.log_partition(&g).expect("pr").abs() < 1e-12);
    let m = ve.marginals(&g).expect("mar");
    // P(x2 = 1) = .3·.6·0 + .3·.4·.5 + .7·.6·.8 + .7·.4·1
    let p = 0.3 * 0.4 * 0.5 + 0.7 * 0.6 * 0.8 + 0.7 * 0.4;
    assert!((m.node(2)[1] - p).abs() < 1e-12);
    assert!(uai_mar_string(&m).starts_with("MAR\n3 2 "));
    let map = ve.map(&g).expect("map");
    assert_eq!(uai_map_string(&map), "MAP\n3 1 0 1\n");
}

#[test]
fn uai_hostile_inputs_are_parse_errors_with_lines() {
    for (text, needle) in [
        (
            "MARKOV\n3\n2 2 2\n1\n3 0 1 2\n7\n 1 1 1 1 1 1 1\n",
            "m.uai:6",
        ),
        (
            "BAYES\n2\n2 2\n2\n1 0\n2 0 1\n2 0.5 0.5\n4\n 0.5 0.6 0.5 0.5\n",
            "sums to",
        ),
        ("MARKOV\n3\n2 2 2\n1\n3 0 1 1\n", "repeated"),
        (
            "MARKOV\n40\n2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2 2\n1\n40 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39\n",
            "too large",
        ),
        ("MARKOV\n1\n2\n1\n2000 0\n", "more than 1024"),
        ("MARKOV\n1\n2\n1\n1 0\n2 1 -1\n", "not non-negative"),
        ("MARKOV\n1\n2\n1\n1 0\n2 1 1\n9\n", "trailing"),
        ("MARKOV\n1\n2\n1\n1 0\n2 1\n", "end of file"),
        ("FOO\n", "MARKOV or BAYES"),
    ] {
        let e = FactorGraph::from_uai_str(text, "m.uai").expect_err(needle);
        let s = e.to_string();
        assert!(s.contains(needle), "{s} lacks {needle}");
        assert!(s.contains("m.uai"), "{s}");
    }
}

#[test]
fn elimination_size_limit_names_the_peak() {
    // a 3x3 grid's treewidth is 3: peak 2^4 entries
    let mut g = FactorGraph::new(vec![2; 9]).expect("model");
    for r in 0..3 {
        for c in 0..3 {
            let v = r * 3 + c;
            if c < 2 {
                g.add_factor(&[v, v + 1], &[0.0, 1.0, 1.0, 0.0]).expect("f");
            }
            if r < 2 {
                g.add_factor(&[v, v + 3], &[0.0, 1.0, 1.0, 0.0]).expect("f");
            }
        }
    }
    assert_eq!(g.tables().len(), 1, "identical tables pooled");
    let ve = VariableElimination {
        max_table_entries: 8,
        ..VariableElimination::default()
    };
    let e = ve.log_partition(&g).expect_err("limit");
    assert!(e.to_string().contains("16"), "{e}");
    assert_eq!(
        VariableElimination::default()
            .peak_table_entries(&g)
            .expect("peak"),
        16
    );
}

#[test]
fn factor_graph_rejects_bad_tables() {
    let mut g = FactorGraph::new(vec![2, 3]).expect("model");
    assert!(matches!(
        g.add_factor(&[0, 1], &[0.0; 5]),
        Err(InferError::DimensionMismatch { .. })
    ));
    assert!(matches!(
        g.add_factor(&[0, 1], &[f64::NAN; 6]),
        Err(InferError::NonFinite { .. })
    ));
    assert!(matches!(
        g.add_factor(&[0, 2], &[0.0; 4]),
        Err(InferError::NodeOutOfRange { .. })
    ));
    assert!(matches!(
        FactorGraph::new(vec![2, 0]),
        Err(InferError::ZeroStates { .. })
    ));
    assert!(g.clone().with_evidence(vec![Some(2), None]).is_err());
}

#[test]
fn long_chains_are_linear_and_marginal_work_is_bounded() {
    // 50 000 binary variables, factors over (i, i+1, i+2): planning and elimination are
    // linear, so PR, MAP and marginals are quick; a tight work limit is an error
    let n = 50_000;
    let mut g = FactorGraph::new(vec![2; n]).expect("model");
    let t: Vec<f64> = (0..8).map(|i| f64::from(i) * 0.1).collect();
    for i in 0..n - 2 {
        g.add_factor(&[i, i + 1, i + 2], &t).expect("factor");
    }
    assert_eq!(g.tables().len(), 1);
    let ve = VariableElimination::default();
    assert!(ve.log_partition(&g).expect("pr").is_finite());
    let map = ve.map(&g).expect("map");
    assert_eq!(map.states, vec![1; n], "every factor prefers all ones");
    // two passes over the clique tree: linear too
    let m = ve.marginals(&g).expect("marginals");
    for v in [0, 1, n / 2, n - 1] {
        assert!(
            (m.node(v).iter().sum::<f64>() - 1.0).abs() < 1e-12,
            "{v}: {:?}",
            m.node(v)
        );
        assert!(m.node(v)[1] > 0.5, "ones are favoured");
    }
    let tight = VariableElimination {
        max_marginal_work: 1000,
        ..VariableElimination::default()
    };
    let e = tight.marginals(&g).expect_err("too much work");
    assert!(
        matches!(e, InferError::TooLarge { .. }) && e.to_string().contains("loopy BP"),
        "{e}"
    );
}

/// Mean field on the factor-graph path equals the pairwise kernel's sequential mean field
/// on a pairwise model read from one UAI file by both readers.
#[test]
fn factor_mean_field_equals_the_pairwise_kernel() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../srl-cli/tests/fixtures/grid.uai");
    let pairwise = srl_infer::PairwiseMrf::read_uai(&path).expect("pairwise");
    let (g, _, _) = FactorGraph::read_uai(&path).expect("factor graph");
    let mf = srl_infer::MeanField {
        max_iters: 10_000,
        tol: 1e-12,
        ..srl_infer::MeanField::default()
    }
    .run(&pairwise);
    let fmf = srl_infer::factor_graph::FactorMeanField {
        max_iters: 10_000,
        tolerance: 1e-12,
        ..Default::default()
    }
    .marginals(&g)
    .expect("factor mean field");
    assert!(mf.convergence().converged && fmf.convergence().converged);
    for v in 0..g.num_vars() {
        for (a, b) in mf.node(v).iter().zip(fmf.node(v)) {
            assert!(
                (a - b).abs() < 1e-9,
                "var {v}: pairwise {a} vs factor graph {b}"
            );
        }
    }
}

/// Loopy BP equals PGMax's factor-graph BP (float64) on random higher-order models
/// (factors of two and three binary or ternary variables plus unary factors, loopy) where
/// both converge: `tests/fixtures/pgmax_bp.txt`, written by `tests/fixtures/pgmax_reference.py`
/// (PGMax 0.6.1, jax 0.4.30, x64; the command is in the script).
#[test]
fn bp_equals_pgmax_on_higher_order_models() {
    let text = include_str!("fixtures/pgmax_bp.txt");
    let mut checked = 0;
    for block in text.split("=== model").skip(1) {
        let (model, marg) = block
            .split_once("--- pgmax marginals")
            .expect("fixture layout");
        let model = model.split_once('\n').expect("header line").1;
        let (g, _, _) =
            FactorGraph::from_uai_str(model, std::path::Path::new("pgmax_bp.txt")).expect("uai");
        let want: Vec<Vec<f64>> = marg
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                l.split_whitespace()
                    .map(|x| x.parse().expect("f64"))
                    .collect()
            })
            .collect();
        assert_eq!(want.len(), g.num_vars());
        let has_higher = g.factors().iter().any(|f| f.vars.len() == 3);
        assert!(has_higher, "a 3-variable factor in every model");
        for schedule in [
            FactorSchedule::Flooding,
            FactorSchedule::Sequential,
            FactorSchedule::Residual,
        ] {
            let bp = FactorBp {
                tolerance: 1e-13,
                max_iters: 20_000,
                schedule,
                ..FactorBp::default()
            }
            .marginals(&g)
            .expect("bp");
            assert!(bp.convergence().converged, "{schedule:?}");
            for (v, w) in want.iter().enumerate() {
                for (a, b) in bp.node(v).iter().zip(w) {
                    assert!(
                        (a - b).abs() < 1e-9,
                        "{schedule:?} var {v}: srl {a} vs PGMax {b}"
                    );
                }
            }
        }
        checked += 1;
    }
    assert_eq!(checked, 6);
}

/// `write_uai_to` then the reader: the same scopes and log-tables (hard zeros exact, the
/// rest to the rounding of `ln(exp(θ))`), for random models of arity 0-4 with zeros.
#[test]
fn uai_writer_round_trips() {
    for seed in 0..40u64 {
        let g = random_model(seed, 6, 7, seed % 2 == 0);
        let mut text = Vec::new();
        g.write_uai_to(&mut text).expect("write");
        let text = String::from_utf8(text).expect("utf-8");
        let (back, kind, _) =
            FactorGraph::from_uai_str(&text, "round-trip.uai").expect("read back");
        assert_eq!(kind, UaiKind::Markov);
        assert_eq!(back.num_states(), g.num_states());
        assert_eq!(back.factors().len(), g.factors().len());
        for f in 0..g.factors().len() {
            assert_eq!(
                back.factors()[f].vars,
                g.factors()[f].vars,
                "seed {seed} factor {f}"
            );
            for (&a, &b) in back.factor_table(f).iter().zip(g.factor_table(f)) {
                assert!(
                    (a == f64::NEG_INFINITY && b == f64::NEG_INFINITY)
                        || (a - b).abs() <= 1e-12 * b.abs().max(1.0),
                    "seed {seed} factor {f}: {a} vs {b}"
                );
            }
        }
    }
}

/// A factor's scope order is a relabelling: listing the variable with the most states
/// first (its linear table is then stored with that variable moved last, the rows run
/// over it) or last (the table as given) gives the same marginals, sum- and max-product,
/// flooding and sequential, to rounding.
#[test]
fn scope_order_does_not_change_bp() {
    use rand::RngExt as _;
    let mut rng = ChaCha8Rng::seed_from_u64(33);
    // variables 0..4 with 2, 3, 2, 9, 4 states; loopy: factors over (3, 0, 1), (3, 2),
    // (3, 1, 4, 2), (0, 2), (4, 0)
    let k = vec![2usize, 3, 2, 9, 4];
    let scopes: Vec<Vec<usize>> = vec![
        vec![3, 0, 1],
        vec![3, 2],
        vec![3, 1, 4, 2],
        vec![0, 2],
        vec![4, 0],
    ];
    let tables: Vec<Vec<f64>> = scopes
        .iter()
        .map(|s| {
            let len: usize = s.iter().map(|&v| k[v]).product();
            (0..len)
                .map(|_| {
                    if rng.random_bool(0.1) {
                        f64::NEG_INFINITY
                    } else {
                        rng.random_range(-2.0..2.0)
                    }
                })
                .collect()
        })
        .collect();
    // the same factors with the first scope variable moved last, tables permuted
    let moved = |s: &[usize], t: &[f64]| -> (Vec<usize>, Vec<f64>) {
        let cards: Vec<usize> = s.iter().map(|&v| k[v]).collect();
        let mut ns: Vec<usize> = s[1..].to_vec();
        ns.push(s[0]);
        let rest: usize = cards[1..].iter().product();
        let mut nt = vec![0.0; t.len()];
        for (i, &x) in t.iter().enumerate() {
            // i = first · rest + tail  →  tail · k_first + first
            let (first, tail) = (i / rest, i % rest);
            nt[tail * cards[0] + first] = x;
        }
        (ns, nt)
    };
    let mut a = FactorGraph::new(k.clone()).expect("a");
    let mut b = FactorGraph::new(k.clone()).expect("b");
    for (s, t) in scopes.iter().zip(&tables) {
        a.add_factor(s, t).expect("factor a");
        let (ns, nt) = moved(s, t);
        b.add_factor(&ns, &nt).expect("factor b");
    }
    for schedule in [FactorSchedule::Flooding, FactorSchedule::Sequential] {
        let bp = FactorBp {
            schedule,
            max_iters: 200,
            tolerance: 1e-12,
            ..FactorBp::default()
        };
        let (ma, mb) = (bp.marginals(&a).expect("a"), bp.marginals(&b).expect("b"));
        assert!(ma.convergence().converged && mb.convergence().converged);
        for v in 0..k.len() {
            for (x, y) in ma.node(v).iter().zip(mb.node(v)) {
                assert!(
                    (x - y).abs() < 1e-12,
                    "{schedule:?} variable {v}: {x} vs {y}"
                );
            }
        }
        let (pa, pb) = (bp.map(&a).expect("map a"), bp.map(&b).expect("map b"));
        assert_eq!(pa.states, pb.states);
    }
}
