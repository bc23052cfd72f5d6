//! Knowledge-based RFGB (Odom et al. 2015, BoostSRL `-adviceFile`): the advice file
//! reader, the advice counts, the gradient equation, and a worked example where advice
//! makes up for scarce training data.

use std::path::{Path, PathBuf};

use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_boost::{
    Advice, BoostError, NegativeSampling, OtherTargets, SoftRfgbParams, TreeParams, UnsplitRoot,
    advice_gradient, build_split, load_split, parse_atoms, parse_background, read_background,
    sigmoid,
};

fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(p)
}

/// Writes `files` into a fresh folder and reads `advice.txt` from it.
fn advice_in(files: &[(&str, &str)]) -> (tempfile::TempDir, Result<Advice, BoostError>) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let a = Advice::read(&dir.path().join("advice.txt"));
    (dir, a)
}

fn parse_error(r: Result<Advice, BoostError>) -> (String, usize, String) {
    match r {
        Err(BoostError::Parse {
            file,
            line,
            message,
        }) => (
            file.file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
            line,
            message,
        ),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

const BK: &str = "mode: smokes(+person).\nmode: friends(+person,-person).\nmode: stress(+person).\nmode: cancer(+person).";
const FACTS: &str = "smokes(a).\nsmokes(b).\nfriends(c,a).\nfriends(d,e).\nstress(e).";
const POS: &str = "cancer(a).\ncancer(c).";
const NEG: &str = "cancer(b).\ncancer(d).\ncancer(e).";

/// The advice counts on a hand-made example: two pieces, one preferring cancer for
/// smokers, one avoiding it for people with a smoking friend (first clause decides).
#[test]
fn counts_follow_the_clauses() -> Result<(), BoostError> {
    let (_dir, advice) = advice_in(&[
        (
            "advice.txt",
            "cancer\n!cancer\nsmokers.txt\n\n!cancer\ncancer\nfriends.txt\n",
        ),
        (
            "smokers.txt",
            "4.0 cancer(A) :- smokes(A).\n-4.0 cancer(A) :- !.\n",
        ),
        (
            "friends.txt",
            "-4.0 cancer(e).\n4.0 cancer(A) :- friends(A, B) ^ smokes(B).\n4.0 cancer(d) :- !.\n",
        ),
    ]);
    let advice = advice?;
    assert_eq!(advice.pieces.len(), 2);
    assert_eq!(advice.pieces[0].sign("cancer"), 1);
    assert_eq!(advice.pieces[1].sign("cancer"), -1);
    let bk = parse_background(BK, Path::new("bk.txt"))?;
    let split = build_split(
        &parse_atoms(FACTS, Path::new("facts.txt"))?,
        &parse_atoms(POS, Path::new("pos.txt"))?,
        &parse_atoms(NEG, Path::new("neg.txt"))?,
        "cancer",
        &bk,
        OtherTargets::Ignore,
        Path::new("facts.txt"),
    )?;
    let names: Vec<String> = (0..split.examples.len())
        .map(|i| split.examples.atom(i, &split.db))
        .collect();
    assert_eq!(
        names,
        [
            "cancer(a)",
            "cancer(c)",
            "cancer(b)",
            "cancer(d)",
            "cancer(e)"
        ]
    );
    let counts = advice.counts(&split.db, &bk, &split.examples)?;
    // a: smoker (+1); c: a smoking friend (−1); b: smoker (+1); d: only the third
    // clause of friends.txt (−1); e: its first clause has weight −4 (0)
    assert_eq!(counts, [1.0, -1.0, 1.0, -1.0, 0.0]);
    assert_eq!(advice.pieces_for("cancer"), 2);
    advice.check_targets(&["cancer"])?;
    let (_, line, message) =
        parse_error(advice.check_targets(&["smokes"]).map(|()| advice.clone()));
    assert_eq!(line, 1);
    assert!(message.contains("names none of the targets"), "{message}");
    Ok(())
}

/// The gradient is exactly `w·(n_t − n_f) + (1 − w)·(I − p)` (Odom et al. 2015, as
/// BoostSRL's `LearnBoostedRDN.buildDataSet` computes it): one tree whose root cannot
/// split returns the mean gradient (`UnsplitRoot::Mean`), so ψ after it is ψ₀ plus the
/// mean of the equation's values, and the advice-free model gets the plain RFGB mean.
#[test]
fn gradient_is_the_equation() -> Result<(), BoostError> {
    let (_dir, advice) = advice_in(&[
        ("advice.txt", "cancer\n!cancer\nsmokers.txt\n"),
        (
            "smokers.txt",
            "4.0 cancer(A) :- smokes(A).\n-4.0 cancer(A) :- !.\n",
        ),
    ]);
    let advice = advice?;
    let bk = parse_background(BK, Path::new("bk.txt"))?;
    let split = build_split(
        &parse_atoms(FACTS, Path::new("facts.txt"))?,
        &parse_atoms(POS, Path::new("pos.txt"))?,
        &parse_atoms(NEG, Path::new("neg.txt"))?,
        "cancer",
        &bk,
        OtherTargets::Ignore,
        Path::new("facts.txt"),
    )?;
    let mut params = SoftRfgbParams::rfgb();
    params.n_trees = 1;
    params.negative_sampling = NegativeSampling::All;
    params.tree = TreeParams {
        max_leaves: 1,
        unsplit_root: UnsplitRoot::Mean,
        ..TreeParams::boostsrl()
    };
    let w = 0.3;
    let psi0 = params.initial_log_odds;
    let p0 = sigmoid(psi0);
    let labels = split.examples.labels().to_vec();
    let counts = advice.counts(&split.db, &bk, &split.examples)?;
    assert_eq!(counts, [1.0, 0.0, 1.0, 0.0, 0.0]);
    let by_hand: Vec<f64> = labels
        .iter()
        .zip(&counts)
        .map(|(&y, &c)| w * c + (1.0 - w) * (f64::from(u8::from(y)) - p0))
        .collect();
    for ((&y, &c), &h) in labels.iter().zip(&counts).zip(&by_hand) {
        assert_eq!(advice_gradient(f64::from(u8::from(y)) - p0, c, w), h);
    }
    let mean = by_hand.iter().sum::<f64>() / by_hand.len() as f64;
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let m = params.fit_with_advice(&split.db, &bk, &split.examples, &advice, w, &mut rng)?;
    let psi = m.decision_function(&split.db, &split.examples)?;
    for v in &psi {
        assert!((v - (psi0 + mean)).abs() < 1e-12, "{v} vs {}", psi0 + mean);
    }
    let rec = m.advice().expect("advice recorded");
    assert_eq!(rec.weight, w);
    assert_eq!(
        (rec.pieces, rec.preferred_examples, rec.avoided_examples),
        (1, 2, 0)
    );
    // without advice: the plain RFGB gradient's mean
    let plain = params.fit(&split.db, &bk, &split.examples, &mut rng)?;
    assert!(plain.advice().is_none());
    let plain_mean = labels
        .iter()
        .map(|&y| f64::from(u8::from(y)) - p0)
        .sum::<f64>()
        / labels.len() as f64;
    for v in plain.decision_function(&split.db, &split.examples)? {
        assert!((v - (psi0 + plain_mean)).abs() < 1e-12);
    }
    // weight 0: the data alone, bit for bit the same model as `fit` (advice recorded)
    let mut r1 = ChaCha8Rng::seed_from_u64(5);
    let mut r2 = ChaCha8Rng::seed_from_u64(5);
    let p = SoftRfgbParams {
        tree: TreeParams {
            min_leaf_examples: 1,
            ..TreeParams::boostsrl()
        },
        ..SoftRfgbParams::rfgb()
    };
    let a = p.fit(&split.db, &bk, &split.examples, &mut r1)?;
    let b = p.fit_with_advice(&split.db, &bk, &split.examples, &advice, 0.0, &mut r2)?;
    assert_eq!(a.trees(), b.trees());
    // a weight outside [0, 1] is refused
    for bad in [-0.1, 1.5, f64::NAN] {
        let e = p
            .fit_with_advice(&split.db, &bk, &split.examples, &advice, bad, &mut r2)
            .expect_err("bad weight");
        assert!(matches!(
            e,
            BoostError::InvalidParam {
                name: "advice_weight",
                ..
            }
        ));
    }
    Ok(())
}

/// A model file written with advice records it; one without advice has no `advice`
/// field (older files load unchanged).
#[test]
fn model_records_advice() -> Result<(), Box<dyn std::error::Error>> {
    let dir = fixture("advice");
    let bk = read_background(&dir.join("bk.txt"))?;
    let split = load_split(
        &dir.join("train"),
        "train",
        "cancer",
        &bk,
        OtherTargets::PositivesAsFacts,
    )?;
    let advice = Advice::read(&dir.join("advice.txt"))?;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let params = SoftRfgbParams::rfgb();
    let m = params.fit_with_advice(&split.db, &bk, &split.examples, &advice, 0.5, &mut rng)?;
    let text = serde_json::to_string(&m)?;
    assert!(text.contains("\"advice\""), "{text}");
    let back: srl_boost::SoftRfgb = serde_json::from_str(&text)?;
    assert_eq!(back, m);
    let plain = params.fit(&split.db, &bk, &split.examples, &mut rng)?;
    let text = serde_json::to_string(&plain)?;
    assert!(!text.contains("\"advice\""), "{text}");
    // an edited weight is refused when read
    let bad = serde_json::to_string(&m)?.replace("\"weight\":0.5", "\"weight\":2.0");
    let e = serde_json::from_str::<srl_boost::SoftRfgb>(&bad).expect_err("weight 2");
    assert!(e.to_string().contains("advice weight"), "{e}");
    Ok(())
}

/// AUC-ROC of `probs` against `labels` (ties count one half).
fn auc(probs: &[f64], labels: &[bool]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (i, &pi) in probs.iter().enumerate() {
        for (j, &pj) in probs.iter().enumerate() {
            if labels[i] && !labels[j] {
                den += 1.0;
                num += if pi > pj {
                    1.0
                } else if pi == pj {
                    0.5
                } else {
                    0.0
                };
            }
        }
    }
    num / den
}

/// The worked example (`tests/fixtures/advice`, see its README): 2 positives and 4
/// negatives in which `stress` separates the labels by chance. From the data alone the
/// model follows `stress` and ranks the test set (cancer = smokes) at chance (AUC-ROC
/// 0.5); with the advice "smokers get cancer" (weight 0.5, BoostSRL's default) its
/// AUC-ROC is 0.833 (the data term still pulls towards `stress`).
///
/// BoostSRL.jar (the build srlearn 0.5.5 ships) on the same folder, with `bk.txt` copied
/// to `train/train_bk.txt` and `test/test_bk.txt`:
/// `java -jar BoostSRL.jar -l -train train/ -target cancer -adviceFile advice.txt -trees 10`
/// then `java -jar BoostSRL.jar -i -model train/models/ -test test/ -target cancer
/// -trees 10 -aucJarPath DIR -testNegPosRatio -1`. Its advice counts
/// (`train/gradients_cancer.adv_grad`) are srl's: 1 for a0 and a2 (the smokers), 0 for
/// the others. Its trees, though, are the same with and without `-adviceFile` (every
/// leaf 0.19148 in tree 1, the mean plain RFGB gradient; no class of that jar but
/// `CommandLineArguments` mentions `getAdviceWt`: that build computes the counts but does
/// not put them in the gradient), and both runs
/// rank the test set at AUC-ROC 0.500 (AUC-PR 0.500, CLL −0.773).
#[test]
fn advice_helps_scarce_data() -> Result<(), Box<dyn std::error::Error>> {
    let dir = fixture("advice");
    let bk = read_background(&dir.join("bk.txt"))?;
    let train = load_split(
        &dir.join("train"),
        "train",
        "cancer",
        &bk,
        OtherTargets::PositivesAsFacts,
    )?;
    let test = load_split(
        &dir.join("test"),
        "test",
        "cancer",
        &bk,
        OtherTargets::PositivesAsFacts,
    )?;
    let advice = Advice::read(&dir.join("advice.txt"))?;
    let params = SoftRfgbParams::rfgb();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let plain = params.fit(&train.db, &bk, &train.examples, &mut rng)?;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let advised =
        params.fit_with_advice(&train.db, &bk, &train.examples, &advice, 0.5, &mut rng)?;
    let labels = test.examples.labels();
    let auc_plain = auc(&plain.predict_proba(&test.db, &test.examples)?, labels);
    let auc_advised = auc(&advised.predict_proba(&test.db, &test.examples)?, labels);
    eprintln!("test AUC-ROC: data alone {auc_plain}, with advice {auc_advised}");
    assert!(auc_plain <= 0.5 + 1e-9, "data alone: AUC {auc_plain}");
    assert!(auc_advised >= 0.8, "with advice: AUC {auc_advised}");
    Ok(())
}

/// Malformed advice files are refused with the file and line at fault.
#[test]
fn bad_advice_files_name_file_and_line() {
    let clauses = ("c.txt", "4.0 cancer(A) :- smokes(A).\n");
    // (files, file at fault, its line, text of the message)
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, usize, &'a str);
    let cases: &[Case<'_>] = &[
        (
            &[("advice.txt", "cancer\n!cancer\n"), clauses],
            "advice.txt",
            1,
            "three lines",
        ),
        (
            &[("advice.txt", "cancer\ncancer\nc.txt\n"), clauses],
            "advice.txt",
            2,
            "both preferred",
        ),
        (
            &[("advice.txt", "!cancer\n!cancer\nc.txt\n"), clauses],
            "advice.txt",
            1,
            "only `!` labels",
        ),
        (
            &[("advice.txt", "can cer\n!cancer\nc.txt\n"), clauses],
            "advice.txt",
            1,
            "not a label",
        ),
        (
            &[("advice.txt", "cancer\n!cancer\nnone.txt\n"), clauses],
            "advice.txt",
            3,
            "does not exist",
        ),
        (
            &[
                ("advice.txt", "cancer\n!cancer\nc.txt\n"),
                ("c.txt", "cancer(A) :- smokes(A).\n"),
            ],
            "c.txt",
            1,
            "is not a weight",
        ),
        (
            &[
                ("advice.txt", "cancer\n!cancer\nc.txt\n"),
                (
                    "c.txt",
                    "4.0 cancer(A) :- smokes(A).\nNaN cancer(A) :- !.\n",
                ),
            ],
            "c.txt",
            2,
            "not a finite number",
        ),
        (
            &[
                ("advice.txt", "cancer\n!cancer\nc.txt\n"),
                ("c.txt", "4.0 cancer(A) :- \\+ smokes(A).\n"),
            ],
            "c.txt",
            1,
            "negation",
        ),
        (
            &[
                ("advice.txt", "cancer\n!cancer\nc.txt\n"),
                ("c.txt", "4.0 cancer(A) :- !, smokes(A).\n"),
            ],
            "c.txt",
            1,
            "last goal",
        ),
        (
            &[
                ("advice.txt", "cancer\n!cancer\nc.txt\n"),
                ("c.txt", "4.0 cancer(A) :- smokes(A).\n-4.0 flu(A) :- !.\n"),
            ],
            "c.txt",
            2,
            "one clause file advises one target",
        ),
        (
            &[
                ("advice.txt", "cancer\n!cancer\nc.txt\n"),
                ("c.txt", "4.0 flu(A) :- smokes(A).\n"),
            ],
            "c.txt",
            1,
            "not a label",
        ),
        (
            &[
                ("advice.txt", "cancer\n!cancer\nc.txt\n"),
                ("c.txt", "4.0 cancer(A) :- smokes(A)\n"),
            ],
            "c.txt",
            1,
            "does not end with",
        ),
        (
            &[
                ("advice.txt", "cancer\n!cancer\nc.txt\n"),
                ("c.txt", "% nothing\n"),
            ],
            "c.txt",
            1,
            "no clause",
        ),
        (
            &[("advice.txt", "\n// only a comment\n"), clauses],
            "advice.txt",
            1,
            "no advice",
        ),
    ];
    for (files, file, line, text) in cases {
        let (_dir, r) = advice_in(files);
        let (f, l, m) = parse_error(r);
        assert_eq!((f.as_str(), l), (*file, *line), "{m}");
        assert!(m.contains(text), "{file}:{line}: `{m}` lacks `{text}`");
    }
}

/// A body predicate with neither facts nor a mode, and a head of another arity than
/// the target, are refused when the advice is evaluated (file and line of the clause).
#[test]
fn clauses_are_checked_against_the_data() -> Result<(), BoostError> {
    let bk = parse_background(BK, Path::new("bk.txt"))?;
    let split = build_split(
        &parse_atoms(FACTS, Path::new("facts.txt"))?,
        &parse_atoms(POS, Path::new("pos.txt"))?,
        &parse_atoms(NEG, Path::new("neg.txt"))?,
        "cancer",
        &bk,
        OtherTargets::Ignore,
        Path::new("facts.txt"),
    )?;
    for (clauses, line, text) in [
        (
            "4.0 cancer(A) :- smokes(A).\n4.0 cancer(A) :- smoke(A).\n",
            2,
            "no fact and no mode",
        ),
        ("4.0 cancer(A, B) :- smokes(A).\n", 1, "another arity"),
        (
            "4.0 cancer(A) :- smokes(A, A).\n",
            1,
            "arity 1 in the facts",
        ),
    ] {
        let (_dir, advice) = advice_in(&[
            ("advice.txt", "cancer\n!cancer\nc.txt\n"),
            ("c.txt", clauses),
        ]);
        let advice = advice?;
        let e = advice
            .counts(&split.db, &bk, &split.examples)
            .expect_err("bad clause");
        let (_, l, m) = parse_error(Err(e));
        assert_eq!(l, line, "{m}");
        assert!(m.contains(text), "`{m}` lacks `{text}`");
    }
    Ok(())
}

/// `fit_boosted`, the front-ends' one call, learns exactly the model of the fit it
/// chooses (same seed, same trees, same advice record), refuses advice with MLN-Boost,
/// and `advice_weight` applies BoostSRL's default and the [0, 1] check.
#[test]
fn fit_boosted_is_the_chosen_fit() -> Result<(), Box<dyn std::error::Error>> {
    use srl_boost::{BoostKind, BoostedModel, MlnBoostParams, advice_weight, fit_boosted};
    let dir = fixture("advice");
    let bk = read_background(&dir.join("bk.txt"))?;
    let split = load_split(
        &dir.join("train"),
        "train",
        "cancer",
        &bk,
        OtherTargets::PositivesAsFacts,
    )?;
    let (db, ex) = (&split.db, &split.examples);
    let advice = Advice::read(&dir.join("advice.txt"))?;
    let params = SoftRfgbParams::rfgb();
    let rng = || ChaCha8Rng::seed_from_u64(3);
    let w = advice_weight(None)?;
    assert_eq!(w, srl_boost::BOOSTSRL_ADVICE_WEIGHT);
    let with = params.fit_with_advice(db, &bk, ex, &advice, w, &mut rng())?;
    match fit_boosted(
        &params,
        BoostKind::Rdn,
        Some((&advice, w)),
        db,
        &bk,
        ex,
        &mut rng(),
    )? {
        BoostedModel::Rdn(m) => assert_eq!(m, with),
        BoostedModel::Mln(_) => panic!("an RDN was asked for"),
    }
    let plain = params.fit(db, &bk, ex, &mut rng())?;
    match fit_boosted(&params, BoostKind::Rdn, None, db, &bk, ex, &mut rng())? {
        BoostedModel::Rdn(m) => assert_eq!(m, plain),
        BoostedModel::Mln(_) => panic!("an RDN was asked for"),
    }
    let mln = MlnBoostParams::from_rfgb(&params).fit(db, &bk, ex, &mut rng())?;
    match fit_boosted(&params, BoostKind::Mln, None, db, &bk, ex, &mut rng())? {
        BoostedModel::Mln(m) => assert_eq!(m.trees(), mln.trees()),
        BoostedModel::Rdn(_) => panic!("MLN-Boost was asked for"),
    }
    let e = fit_boosted(
        &params,
        BoostKind::Mln,
        Some((&advice, w)),
        db,
        &bk,
        ex,
        &mut rng(),
    )
    .expect_err("MLN-Boost takes no advice");
    assert!(matches!(e, BoostError::InvalidParam { name: "advice", .. }));
    for bad in [-0.1, 1.5, f64::NAN] {
        let e = advice_weight(Some(bad)).expect_err("bad weight");
        assert!(matches!(
            e,
            BoostError::InvalidParam {
                name: "advice_weight",
                ..
            }
        ));
    }
    Ok(())
}

/// Advice and clause files skip comments as the other BoostSRL files do (`//`, `%`,
/// `/* */` over lines), and error lines still count every line of the file.
#[test]
fn advice_files_skip_comments() {
    let (_dir, a) = advice_in(&[
        (
            "advice.txt",
            "/* smokers\n   get cancer */\ncancer\n% avoided:\n!cancer\nc.txt\n",
        ),
        (
            "c.txt",
            "// first\n4.0 cancer(A) :- smokes(A). // a note\n-4.0 cancer(A).\n",
        ),
    ]);
    let a = a.expect("read");
    assert_eq!(a.pieces.len(), 1);
    assert_eq!(a.pieces[0].line, 3);
    assert_eq!(a.pieces[0].preferred, ["cancer"]);
    assert_eq!(a.pieces[0].avoided, ["!cancer"]);
    let lines: Vec<usize> = a.pieces[0].clauses.iter().map(|c| c.line).collect();
    assert_eq!(lines, [2, 3]);
    let (_dir, e) = advice_in(&[
        ("advice.txt", "/* a\n b */\n\ncancer\n!cancer\nc.txt\n"),
        ("c.txt", "% x\n\n4.0 cancer(A) :- \\+ smokes(A).\n"),
    ]);
    let (file, line, _) = parse_error(e);
    assert_eq!((file.as_str(), line), ("c.txt", 3));
}
