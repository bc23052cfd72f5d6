//! Property tests of every srl-boost reader (issue 15): random bytes and random mutations
//! of a valid file (byte flips, truncations, duplicated, deleted and swapped lines, hostile
//! tokens, huge numbers) never panic and never abort; they load or give an error. Readers:
//! BoostSRL facts / pos / neg files (and a split built from what parses), background files
//! (modes, settings, imports, facts), the UCI heart-disease table, and model files (issue
//! 25: an RFGB and an MLN-Boost model file, mutated; whatever loads also predicts, without
//! a panic and in finite time, since loading checks the trees).
//!
//! Cases per property: `SRL_PROPTEST_CASES` (default 256, what CI runs);
//! `SRL_PROPTEST_CASES=10000 cargo test -p srl-boost --release --test readers_proptest` is
//! the full run.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rand::SeedableRng as _;
use srl_boost::model_file::{ModelFile, Provenance};
use srl_boost::{
    Background, MlnBoost, MlnBoostParams, OtherTargets, SoftRfgb, SoftRfgbParams, Split,
    TreeParams, build_split, heart_from_uci, parse_atoms, parse_background,
};

// The case count and the mutation strategies, one copy for the four reader test files.
#[path = "../../../testkit/reader_mutations.rs"]
mod reader_mutations;
use reader_mutations::*;

const FACTS: &str = "professor(ann).\nprofessor(bob).\nstudent(cat).\nstudent(dan).\npublication(t1, ann).\npublication(t1, cat).\nhasposition(ann, faculty).\n";
const POS: &str = "advisedby(cat, ann).\nadvisedby(dan, bob).\nsameperson(cat,cat).\n";
const NEG: &str = "advisedby(cat,bob).\nadvisedby(dan,ann).\n// comment\n";
const BK: &str = "// tiny background\nusePrologVariables: true.\nsetParam: treeDepth=3.\nsetParam: nodeSize = 2.\nqueryPred: advisedby/2.\n\nmode: advisedby(+person, +person).\nmode: professor(+person).\nmode: publication(-title, +person).\nmode: hasposition(+person, #position).\nmode: inphase(+person, +phase!1).\nokIfUnknown: multiclass_inphase/1.\nbridger: publication/2.\nrange: position={faculty,faculty_adjunct}.\nimport: \"extra_bk.txt\".\n/*\nmode: never_seen(+person).\n*/\nprecompute:\ncount_pubs(P, C) :- publication(S, P), all(T, publication(T, P), L), C is length(L).\nposition(faculty).\nstudent(+person).\n";
const HEART: &str = "63.0,1.0,1.0,145.0,233.0,1.0,2.0,150.0,0.0,2.3,3.0,0.0,6.0,0\n67.0,1.0,4.0,160.0,286.0,0.0,2.0,108.0,1.0,1.5,2.0,3.0,3.0,2\n67.0,1.0,4.0,120.0,229.0,0.0,2.0,129.0,1.0,2.6,2.0,2.0,7.0,1\n37.0,1.0,3.0,130.0,250.0,0.0,0.0,187.0,0.0,3.5,3.0,?,3.0,0\n";

const EXTRA: &[&str] = &[
    "advisedby",
    "professor",
    "ann",
    "(",
    ")",
    "(a,b)",
    "+person",
    "-person",
    "#position",
    "mode:",
    "setParam:",
    "import:",
    "range:",
    "bridger:",
    "precompute:",
    ":-",
    "\"x\"",
    "/*",
    "*/",
    "a(b).",
];

/// Parsing and building a split from what parses; only a panic fails.
fn atoms(facts: &str, pos: &str, neg: &str) {
    let (Ok(f), Ok(p), Ok(n)) = (
        parse_atoms(facts, Path::new("facts.txt")),
        parse_atoms(pos, Path::new("pos.txt")),
        parse_atoms(neg, Path::new("neg.txt")),
    ) else {
        return;
    };
    let bk = Background::default();
    for target in ["advisedby", "ADVISEDBY", "professor"] {
        for other in [OtherTargets::PositivesAsFacts, OtherTargets::Ignore] {
            if let Ok(s) = build_split(&f, &p, &n, target, &bk, other, Path::new("facts.txt")) {
                assert_eq!(s.summary.pos + s.summary.neg, s.examples.len());
            }
        }
    }
}

/// The background is parsed as if in a folder that does not exist, so an `import:` is an
/// I/O error and never reads some other file.
fn background(text: &str) {
    let _ = parse_background(text, Path::new("/nonexistent-srl-boost-dir/background.txt"));
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("srl-boost-readers-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

/// The split and the two model files (RFGB, MLN-Boost) the model mutations start from: the
/// CLI's smokers fixture (crates/srl-cli/tests/fixtures/boost) and its RFGB model file,
/// and an MLN-Boost model learned on it here.
fn models() -> &'static (Split, String, String) {
    static M: std::sync::OnceLock<(Split, String, String)> = std::sync::OnceLock::new();
    M.get_or_init(|| {
        let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("../srl-cli/tests/fixtures");
        let bk = srl_boost::read_background(&fx.join("boost/bk.txt")).expect("bk");
        let split = srl_boost::load_split(
            &fx.join("boost/train"),
            "train",
            "cancer",
            &bk,
            OtherTargets::PositivesAsFacts,
        )
        .expect("split");
        let rdn = std::fs::read_to_string(fx.join("boost_model.json")).expect("model");
        let params = SoftRfgbParams {
            n_trees: 3,
            tree: TreeParams {
                min_leaf_examples: 1,
                ..TreeParams::boostsrl()
            },
            ..SoftRfgbParams::default()
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let prov = Provenance {
            data: "d".into(),
            seed: Some(3),
            srl_version: "0".into(),
            command: "test".into(),
        };
        let mln = MlnBoostParams::from_rfgb(&params)
            .fit(&split.db, &bk, &split.examples, &mut rng)
            .expect("mln");
        let mln = ModelFile::wrap(
            srl_boost::model_file::KIND_MLN_BOOST,
            mln,
            serde_json::json!({}),
            prov,
        )
        .to_json_string()
        .expect("json");
        (split, rdn, mln)
    })
}

/// A model file's text: if it loads, it predicts (and show's printing works).
fn model_text(text: &str) {
    let (split, _, _) = models();
    if let Ok(f) = ModelFile::<SoftRfgb>::parse(text, srl_boost::model_file::KIND_SOFT_RFGB) {
        let _ = f.model.predict_proba(&split.db, &split.examples);
        for t in f.model.trees() {
            let _ = t.to_string();
            let _ = t.clauses();
        }
    }
    if let Ok(f) = ModelFile::<MlnBoost>::parse(text, srl_boost::model_file::KIND_MLN_BOOST) {
        let _ = f.model.predict_proba(&split.db, &split.examples);
        let _ = f.model.to_string();
    }
}

const MODEL_EXTRA: &[&str] = &[
    "0",
    "1",
    "-1",
    "65535",
    "65536",
    "1e999",
    "null",
    "\"Var\"",
    "\"yes\": 0,",
    "\"no\": 0,",
    "[]",
    "{}",
    "\"Leaf\"",
    "\"Split\"",
    "\"step\": 0,",
    "\"\"",
];

fn heart(bytes: &[u8]) {
    let p = scratch("heart").join("heart.data");
    std::fs::write(&p, bytes).expect("write");
    let _ = heart_from_uci(&p);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..500)) {
        let t = String::from_utf8_lossy(&bytes);
        atoms(&t, POS, NEG);
        atoms(FACTS, &t, &t);
        background(&t);
        heart(&bytes);
    }

    #[test]
    fn random_printable_text_never_panics(t in "[ -~\n\t]{0,300}") {
        atoms(&t, &t, NEG);
        background(&t);
    }

    #[test]
    fn mutated_atoms_never_panic(ef in edits(), ep in edits(), en in edits()) {
        let m = |s: &str, e: &[Edit]| String::from_utf8_lossy(&mutate(s.as_bytes(), e, EXTRA)).into_owned();
        atoms(&m(FACTS, &ef), &m(POS, &ep), &m(NEG, &en));
    }

    #[test]
    fn mutated_background_never_panics(e in edits()) {
        background(&String::from_utf8_lossy(&mutate(BK.as_bytes(), &e, EXTRA)));
    }

    #[test]
    fn mutated_model_files_never_panic_or_hang(e in edits(), mln in any::<bool>()) {
        let (_, rdn, m) = models();
        let base = if mln { m } else { rdn };
        model_text(&String::from_utf8_lossy(&mutate(base.as_bytes(), &e, MODEL_EXTRA)));
    }

    #[test]
    fn mutated_heart_table_never_panics(e in edits()) {
        heart(&mutate(HEART.as_bytes(), &e, &["?", "14", "0.0", ",,"]));
    }
}

#[test]
fn the_valid_model_files_load_and_predict() {
    let (split, rdn, mln) = models();
    let f = ModelFile::<SoftRfgb>::parse(rdn, srl_boost::model_file::KIND_SOFT_RFGB).expect("rdn");
    assert_eq!(
        f.model
            .predict_proba(&split.db, &split.examples)
            .expect("p")
            .len(),
        split.examples.len()
    );
    ModelFile::<MlnBoost>::parse(mln, srl_boost::model_file::KIND_MLN_BOOST).expect("mln");
    // a cycle edited in is refused when read (it hung prediction before)
    let cyc = rdn.replacen("\"yes\": 1", "\"yes\": 0", 1);
    assert_ne!(&cyc, rdn, "the model has a split to edit");
    let e = ModelFile::<SoftRfgb>::parse(&cyc, srl_boost::model_file::KIND_SOFT_RFGB)
        .expect_err("cycle");
    assert!(e.to_string().contains("reached twice"), "{e}");
}

#[test]
fn the_valid_samples_load() {
    let f = parse_atoms(FACTS, Path::new("facts.txt")).expect("facts");
    let p = parse_atoms(POS, Path::new("pos.txt")).expect("pos");
    let n = parse_atoms(NEG, Path::new("neg.txt")).expect("neg");
    let s = build_split(
        &f,
        &p,
        &n,
        "advisedby",
        &Background::default(),
        OtherTargets::Ignore,
        Path::new("facts.txt"),
    )
    .expect("split");
    assert_eq!((s.summary.pos, s.summary.neg), (2, 2));
    let bk = BK.replace("import: \"extra_bk.txt\".\n", "");
    assert!(parse_background(&bk, Path::new("bk.txt")).is_ok());
    let h = scratch("valid").join("heart.data");
    std::fs::write(&h, HEART).expect("write");
    assert_eq!(heart_from_uci(&h).expect("heart").examples.len(), 4);
}
