//! Several targets in one run (BoostSRL `-target a,b,c`): each target's model is the one
//! a run with that target alone learns; the other targets' positives are facts.

use std::path::{Path, PathBuf};

use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_boost::{
    BoostError, FolderAtoms, OtherTargets, SoftRfgbParams, TreeParams, fit_targets, load_split,
    parse_atoms, parse_background, parse_targets, target_path,
};

const BK: &str = "mode: smokes(+person).\nmode: friends(+person,-person).\nmode: cancer(+person).\nmode: stress(+person).";

fn atoms() -> Result<FolderAtoms, BoostError> {
    Ok(FolderAtoms {
        facts: parse_atoms(
            "friends(a,b).\nfriends(c,d).\nfriends(e,f).\nfriends(b,a).\nstress(a).\nstress(c).\nstress(g).",
            Path::new("facts.txt"),
        )?,
        pos: parse_atoms(
            "smokes(a).\nsmokes(c).\nsmokes(g).\ncancer(a).\ncancer(c).\ncancer(b).",
            Path::new("pos.txt"),
        )?,
        neg: parse_atoms(
            "smokes(b).\nsmokes(d).\nsmokes(e).\nsmokes(f).\ncancer(d).\ncancer(e).\ncancer(f).\ncancer(g).",
            Path::new("neg.txt"),
        )?,
        facts_path: PathBuf::from("facts.txt"),
    })
}

fn params() -> SoftRfgbParams {
    SoftRfgbParams {
        n_trees: 3,
        tree: TreeParams {
            min_leaf_examples: 1,
            ..TreeParams::boostsrl()
        },
        ..SoftRfgbParams::rfgb()
    }
}

#[test]
fn each_target_is_its_single_run() -> Result<(), BoostError> {
    let bk = parse_background(BK, Path::new("bk.txt"))?;
    let atoms = atoms()?;
    let targets = parse_targets("cancer,smokes")?;
    let p = params();
    let fits = fit_targets(&atoms, &targets, &bk, |split| {
        p.fit(
            &split.db,
            &bk,
            &split.examples,
            &mut ChaCha8Rng::seed_from_u64(3),
        )
    })?;
    assert_eq!(fits.len(), 2);
    for (fit, t) in fits.iter().zip(&targets) {
        assert_eq!(fit.model.target(), t);
        assert_eq!(fit.summary.target, *t);
        let single = atoms.split(t, &bk)?;
        let alone = p.fit(
            &single.db,
            &bk,
            &single.examples,
            &mut ChaCha8Rng::seed_from_u64(3),
        )?;
        assert_eq!(fit.model, alone);
    }
    // learning cancer, smokes's positives are facts (and the other way round)
    assert_eq!(fits[0].summary.facts.get("smokes"), Some(&3));
    assert_eq!(fits[1].summary.facts.get("cancer"), Some(&3));
    assert_eq!(fits[0].summary.other_positives_as_facts, 3);
    Ok(())
}

#[test]
fn targets_are_checked_before_learning() -> Result<(), BoostError> {
    let bk = parse_background(BK, Path::new("bk.txt"))?;
    let atoms = atoms()?;
    let mut calls = 0;
    // the second target has no atom: nothing is learned
    let e = fit_targets(&atoms, &parse_targets("cancer,flu")?, &bk, |_| {
        calls += 1;
        Ok(())
    })
    .expect_err("flu has no atom");
    assert!(e.to_string().contains("no atom of target `flu`"), "{e}");
    assert_eq!(calls, 0);
    // two names of one predicate
    let twice: Vec<String> = ["cancer", "smokes", "CANCER"].map(String::from).to_vec();
    let e = fit_targets(&atoms, &twice, &bk, |_| Ok(())).expect_err("cancer twice");
    assert!(
        e.to_string().contains("both name the predicate cancer"),
        "{e}"
    );
    for bad in ["", "a,,b", "a, A", " , "] {
        assert!(parse_targets(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_targets(" a ,b")?, ["a", "b"]);
    Ok(())
}

#[test]
fn output_names() {
    assert_eq!(
        target_path(Path::new("out/m.json"), "cancer"),
        Path::new("out/m.cancer.json")
    );
    assert_eq!(target_path(Path::new("m"), "cancer"), Path::new("m.cancer"));
    assert_eq!(
        target_path(Path::new("a.b.json"), "t"),
        Path::new("a.b.t.json")
    );
}

/// Reading the folder once gives the same split as [`load_split`].
#[test]
fn folder_atoms_split_is_load_split() -> Result<(), BoostError> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/advice");
    let bk = srl_boost::read_background(&dir.join("bk.txt"))?;
    let atoms = FolderAtoms::read(&dir.join("train"), "train")?;
    let a = atoms.split("cancer", &bk)?;
    let b = load_split(
        &dir.join("train"),
        "train",
        "cancer",
        &bk,
        OtherTargets::PositivesAsFacts,
    )?;
    assert_eq!(a.summary, b.summary);
    assert_eq!(a.examples.labels(), b.examples.labels());
    Ok(())
}
