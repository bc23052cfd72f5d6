//! Background rules end to end (issue 27): a predicate a rule derives is learned from
//! exactly as if its facts were written out, and rule errors name their file and line.

use std::path::Path;

use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_boost::{BoostError, OtherTargets, SoftRfgbParams, load_split, read_background};

const MODES: &str = "mode: advisedby(+person, +person).\n\
                     mode: stud(+person).\nmode: publication(-title, +person).\n\
                     mode: publication(+title, -person).\n";

fn folder(dir: &Path, bk: &str, extra_facts: &str) {
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny/train");
    std::fs::create_dir_all(dir.join("train")).expect("mkdir");
    for f in ["train_pos.txt", "train_neg.txt"] {
        std::fs::copy(tiny.join(f), dir.join("train").join(f)).expect("copy");
    }
    let facts = std::fs::read_to_string(tiny.join("train_facts.txt")).expect("facts");
    std::fs::write(
        dir.join("train/train_facts.txt"),
        format!("{facts}{extra_facts}"),
    )
    .expect("write");
    std::fs::write(dir.join("bk.txt"), bk).expect("write");
}

fn learn(dir: &Path) -> serde_json::Value {
    let bk = read_background(&dir.join("bk.txt")).expect("background");
    let split = load_split(
        &dir.join("train"),
        "train",
        "advisedby",
        &bk,
        OtherTargets::PositivesAsFacts,
    )
    .expect("split");
    let params = SoftRfgbParams {
        n_trees: 4,
        ..SoftRfgbParams::default()
    };
    let model = params
        .fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(5),
        )
        .expect("fit");
    serde_json::to_value(model.trees()).expect("json")
}

#[test]
fn a_derived_predicate_learns_as_its_written_out_facts() {
    let t = tempfile::tempdir().expect("tempdir");
    let (a, b) = (t.path().join("rule"), t.path().join("facts"));
    folder(
        &a,
        &format!("{MODES}usePrologVariables: true.\nprecompute:\nstud(X) :- student(X).\n"),
        "",
    );
    folder(
        &b,
        MODES,
        "stud(cat).\nstud(dan).\nstud(eve).\nstud(fay).\n",
    );
    let with_rule = learn(&a);
    assert_eq!(with_rule, learn(&b));
    // and the rule's predicate is used: some tree tests stud(...)
    assert!(with_rule.to_string().contains("stud"), "{with_rule}");
}

#[test]
fn rule_errors_name_file_and_line() {
    let t = tempfile::tempdir().expect("tempdir");
    let bk = t.path().join("bk.txt");
    std::fs::write(&bk, "mode: p(+person).\np(X) :- \\+ q(X).\n").expect("write");
    match read_background(&bk) {
        Err(BoostError::Parse {
            file,
            line,
            message,
        }) => {
            assert_eq!((file.as_path(), line), (bk.as_path(), 2));
            assert!(message.contains("unsafe rule"), "{message}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    // an unsupported construct is reported with its line, not silently dropped
    std::fs::write(&bk, "mode: p(+person).\np(X) :- q(X) ; r(X).\n").expect("write");
    let b = read_background(&bk).expect("reads");
    assert!(b.rules.is_empty());
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("bk.txt:2") && n.contains("not evaluated")),
        "{:?}",
        b.notes
    );
}
