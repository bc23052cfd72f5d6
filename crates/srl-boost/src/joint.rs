//! Several targets in one run: BoostSRL's `-target a,b,c`.
//!
//! BoostSRL learns one boosted model per target of the list, over the same training
//! folder: each target's examples are its atoms in the pos/neg files, and the positive
//! atoms of the other targets are observed facts its trees may test (through their
//! modes), as in a relational dependency network learned from fully observed data
//! (`RunBoostedRDN.learn`, one `LearnBoostedRDN` per target). srl does the same: each
//! target's split is [`build_split`] with [`OtherTargets::PositivesAsFacts`], and its
//! model is learned independently of the others, so the model of a target is the one a
//! run with that target alone learns (with the same seed). BoostSRL interleaves the
//! targets tree by tree; with observed targets the order does not change any model.
//!
//! The files: [`FolderAtoms::read`] reads the folder once; [`fit_targets`] checks every
//! target before learning any and learns them in list order; [`parse_targets`] reads the
//! comma-separated list and [`target_path`] names each target's output file.

use std::path::{Path, PathBuf};

use crate::BoostError;
use crate::logic::Background;
use crate::reader::{Atom, OtherTargets, Split, SplitSummary, build_split, read_atoms};

/// Splits BoostSRL's `-target a,b,c` into target names: trimmed, none empty, no name
/// twice (ignoring ASCII case, as targets are matched).
///
/// # Errors
/// [`BoostError::InvalidParam`] (`target`) for an empty list, an empty name (`a,,b`) or
/// a repeated one.
///
/// # Example
/// ```
/// let t = srl_boost::parse_targets("cancer, smokes").unwrap();
/// assert_eq!(t, ["cancer", "smokes"]);
/// assert!(srl_boost::parse_targets("cancer,,smokes").is_err());
/// ```
pub fn parse_targets(list: &str) -> Result<Vec<String>, BoostError> {
    let bad = |message: String| BoostError::InvalidParam {
        name: "target",
        message,
    };
    let mut out: Vec<String> = Vec::new();
    for t in list.split(',') {
        let t = t.trim();
        if t.is_empty() {
            return Err(bad(format!(
                "`{list}`: an empty target name (write `a,b,c`)"
            )));
        }
        if out.iter().any(|o| o.eq_ignore_ascii_case(t)) {
            return Err(bad(format!("`{list}`: target {t} is listed twice")));
        }
        out.push(t.to_owned());
    }
    Ok(out)
}

/// The output file of `target` in a run over several targets: `template` with
/// `.target` put before its extension (`out.json` → `out.cancer.json`, `model` →
/// `model.cancer`), in the same folder.
///
/// # Example
/// ```
/// use std::path::Path;
/// let p = srl_boost::target_path(Path::new("runs/out.json"), "cancer");
/// assert_eq!(p, Path::new("runs/out.cancer.json"));
/// ```
pub fn target_path(template: &Path, target: &str) -> PathBuf {
    let stem = template
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match template.extension() {
        Some(ext) => format!("{stem}.{target}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{target}"),
    };
    template.with_file_name(name)
}

/// The atoms of a BoostSRL folder (`PREFIX_facts.txt`, `_pos.txt`, `_neg.txt`), read
/// once for the splits of several targets.
#[derive(Clone, Debug)]
pub struct FolderAtoms {
    /// The facts file's atoms.
    pub facts: Vec<Atom>,
    /// The positives file's atoms (every predicate).
    pub pos: Vec<Atom>,
    /// The negatives file's atoms.
    pub neg: Vec<Atom>,
    /// The facts file.
    pub facts_path: PathBuf,
}

impl FolderAtoms {
    /// Reads `dir/{prefix}_facts.txt`, `_pos.txt` and `_neg.txt` (as [`crate::load_split`]).
    ///
    /// # Errors
    /// [`BoostError::Io`] / [`BoostError::Parse`] from the files.
    pub fn read(dir: &Path, prefix: &str) -> Result<Self, BoostError> {
        let f = |s: &str| -> PathBuf { dir.join(format!("{prefix}_{s}.txt")) };
        Ok(Self {
            facts: read_atoms(&f("facts"))?,
            pos: read_atoms(&f("pos"))?,
            neg: read_atoms(&f("neg"))?,
            facts_path: f("facts"),
        })
    }

    /// The predicate of the pos/neg atoms `target` names: an exact match, else one
    /// ignoring ASCII case (as [`build_split`] matches it); `None` if none.
    pub fn resolve(&self, target: &str) -> Option<&str> {
        let all = || self.pos.iter().chain(&self.neg);
        all()
            .find(|a| a.pred == target)
            .or_else(|| all().find(|a| a.pred.eq_ignore_ascii_case(target)))
            .map(|a| a.pred.as_str())
    }

    /// The split of `target`: its examples, every fact, the other predicates' positives
    /// as facts ([`OtherTargets::PositivesAsFacts`]).
    ///
    /// # Errors
    /// As [`build_split`].
    pub fn split(&self, target: &str, bk: &Background) -> Result<Split, BoostError> {
        build_split(
            &self.facts,
            &self.pos,
            &self.neg,
            target,
            bk,
            OtherTargets::PositivesAsFacts,
            &self.facts_path,
        )
    }
}

/// One target's result in [`fit_targets`].
#[derive(Clone, Debug)]
pub struct TargetFit<M> {
    /// The target's split counts (its name as in the files, examples, facts).
    pub summary: SplitSummary,
    /// The learned model.
    pub model: M,
}

/// Learns one model per target with `fit` (BoostSRL `-target a,b,c`): every target is
/// checked first (it has atoms in the pos/neg files; no two names denote the same
/// predicate), then, in list order, its split is built ([`FolderAtoms::split`]) and
/// `fit` called on it. The splits are built one at a time (one database in memory).
///
/// # Arguments
/// * `atoms` — the training folder's atoms.
/// * `targets` — target names ([`parse_targets`]), at least one.
/// * `bk` — the background (modes, rules, facts) shared by all targets.
/// * `fit` — learns a model from a target's split (e.g. [`crate::SoftRfgbParams::fit`]
///   with a fresh RNG per target, so that each model is the one a single-target run
///   learns).
///
/// # Errors
/// [`BoostError::InvalidParam`] (`target`) for an empty list or two names of one
/// predicate; [`BoostError::NoExamples`] naming the first target without atoms; the
/// errors of [`build_split`] and of `fit`.
pub fn fit_targets<M>(
    atoms: &FolderAtoms,
    targets: &[String],
    bk: &Background,
    mut fit: impl FnMut(&Split) -> Result<M, BoostError>,
) -> Result<Vec<TargetFit<M>>, BoostError> {
    if targets.is_empty() {
        return Err(BoostError::InvalidParam {
            name: "target",
            message: "no target to learn".into(),
        });
    }
    let mut resolved: Vec<&str> = Vec::with_capacity(targets.len());
    for t in targets {
        let Some(p) = atoms.resolve(t) else {
            return Err(BoostError::NoExamples {
                reason: format!("no atom of target `{t}` in the pos/neg files"),
            });
        };
        if let Some(k) = resolved.iter().position(|r| *r == p) {
            return Err(BoostError::InvalidParam {
                name: "target",
                message: format!("{} and {t} both name the predicate {p}", targets[k]),
            });
        }
        resolved.push(p);
    }
    let mut out = Vec::with_capacity(targets.len());
    for t in targets {
        let split = atoms.split(t, bk)?;
        let model = fit(&split)?;
        out.push(TargetFit {
            summary: split.summary,
            model,
        });
    }
    Ok(out)
}
