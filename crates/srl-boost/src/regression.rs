//! RDN-Boost regression (BoostSRL `-reg`): functional gradient boosting of relational
//! regression trees under squared loss on numeric targets.
//!
//! Examples are BoostSRL's `regressionExample(target(args), value).` lines of the
//! positive-examples file ([`load_regression_split`]). The model
//! `F(x) = F₀ + step · Σ_m tree_m(x)` starts at `F₀ = 0` (BoostSRL's start: its first
//! tree's leaves are the mean target values of their examples) and each tree is fitted
//! to the residuals `y − F(x)`, the negative gradient of `½ (y − F)²`, on every example
//! (no sampling: a regression example has no negatives).
//!
//! References: Natarajan, Khot, Kersting, Shavlik (2015), *Boosted Statistical
//! Relational Learners*, SpringerBriefs, ch. 3 (functional gradient boosting with any
//! differentiable loss); Friedman (2001), "Greedy function approximation", Alg. 2
//! (LS_Boost); BoostSRL's `-reg` mode.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::boost::SoftRfgbParams;
use crate::error::BoostError;
use crate::logic::{Background, Database, Examples};
use crate::reader::{Atom, OtherTargets, SplitSummary, build_split, read_atoms, split_atom};
use crate::settings::SettingsReport;
use crate::tree::{RelationalRegressionTree, TreeParams};

/// A loaded regression split: the facts, the target's examples (all marked positive, for
/// the tree code) and one numeric value per example.
#[derive(Clone, Debug)]
pub struct RegressionSplit {
    /// The facts (background facts and derived facts included).
    pub db: Database,
    /// The target's examples, in file order without duplicates.
    pub examples: Examples,
    /// `values[i]`: the target value of example `i` (finite).
    pub values: Vec<f64>,
    /// Counts (`pos` = number of regression examples, `neg` = 0).
    pub summary: SplitSummary,
}

/// Reads `regressionExample(atom, value).` lines (BoostSRL's regression examples): the
/// inner ground atom as an [`Atom`] of the file and line, and the value.
///
/// # Errors
/// [`BoostError::Parse`] naming the file and line for a line of another predicate, a
/// malformed inner atom, or a value that is not a finite number.
pub fn regression_examples(atoms: &[Atom]) -> Result<Vec<(Atom, f64)>, BoostError> {
    atoms
        .iter()
        .map(|a| {
            let bad = |message: String| BoostError::Parse {
                file: a.file.to_path_buf(),
                line: a.line,
                message,
            };
            if !a.pred.eq_ignore_ascii_case("regressionExample") || a.args.len() != 2 {
                return Err(bad(format!(
                    "`{}/{}`: a regression example is `regressionExample(target(args), value).`",
                    a.pred,
                    a.args.len()
                )));
            }
            let (name, args) = split_atom(&a.args[0]).map_err(bad)?;
            if args.is_empty() {
                return Err(bad(format!(
                    "`{}`: the example must be an atom with arguments",
                    a.args[0]
                )));
            }
            let value: f64 = a.args[1]
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| bad(format!("value `{}` is not a finite number", a.args[1])))?;
            Ok((
                Atom {
                    pred: name.to_owned(),
                    args: args.iter().map(|s| (*s).to_owned()).collect(),
                    file: a.file.clone(),
                    line: a.line,
                },
                value,
            ))
        })
        .collect()
}

/// Builds a [`RegressionSplit`] from atoms already read: `examples` are the
/// `regressionExample(...)` atoms of the positive-examples file (see
/// [`regression_examples`]); facts and background as in [`build_split`].
///
/// # Errors
/// As [`regression_examples`] and [`build_split`]; [`BoostError::Parse`] (file and line)
/// for the same example given twice with different values;
/// [`BoostError::NoExamples`] without an example of `target`.
pub fn build_regression_split(
    facts: &[Atom],
    examples: &[Atom],
    target: &str,
    bk: &Background,
    facts_path: &Path,
) -> Result<RegressionSplit, BoostError> {
    let parsed = regression_examples(examples)?;
    let mut value_of: BTreeMap<(String, Vec<String>), (f64, &Atom)> = BTreeMap::new();
    for (atom, v) in &parsed {
        let key = (atom.pred.to_ascii_lowercase(), atom.args.clone());
        if let Some((old, first)) = value_of.get(&key) {
            if old.to_bits() != v.to_bits() {
                return Err(BoostError::Parse {
                    file: atom.file.to_path_buf(),
                    line: atom.line,
                    message: format!(
                        "{}({}) has value {v} here and {old} at {}:{}",
                        atom.pred,
                        atom.args.join(","),
                        first.file.display(),
                        first.line
                    ),
                });
            }
        } else {
            value_of.insert(key, (*v, atom));
        }
    }
    let atoms: Vec<Atom> = parsed.iter().map(|(a, _)| a.clone()).collect();
    let split = build_split(
        facts,
        &atoms,
        &[],
        target,
        bk,
        OtherTargets::Ignore,
        facts_path,
    )?;
    let mut values = Vec::with_capacity(split.examples.len());
    for i in 0..split.examples.len() {
        let args: Vec<String> = split
            .examples
            .args(i)
            .iter()
            .map(|&c| split.db.constant_name(c).to_owned())
            .collect();
        let key = (split.examples.pred.to_ascii_lowercase(), args);
        let (v, _) = value_of.get(&key).ok_or_else(|| BoostError::NoExamples {
            reason: format!("example {} has no value", split.examples.atom(i, &split.db)),
        })?;
        values.push(*v);
    }
    Ok(RegressionSplit {
        db: split.db,
        examples: split.examples,
        values,
        summary: split.summary,
    })
}

/// Loads `dir/{prefix}_facts.txt` and the `regressionExample(...)` lines of
/// `dir/{prefix}_pos.txt` for `target` (BoostSRL's `-reg` layout; a `_neg.txt` file, if
/// present, must hold no example: regression has no negatives).
///
/// # Errors
/// [`BoostError::Io`] / [`BoostError::Parse`] (file and line) from the files, a
/// [`BoostError::Parse`] for an atom in the negatives file, and as
/// [`build_regression_split`].
pub fn load_regression_split(
    dir: &Path,
    prefix: &str,
    target: &str,
    bk: &Background,
) -> Result<RegressionSplit, BoostError> {
    let f = |s: &str| -> PathBuf { dir.join(format!("{prefix}_{s}.txt")) };
    let facts = read_atoms(&f("facts"))?;
    let pos = read_atoms(&f("pos"))?;
    if f("neg").exists()
        && let Some(a) = read_atoms(&f("neg"))?.first()
    {
        return Err(BoostError::Parse {
            file: a.file.to_path_buf(),
            line: a.line,
            message: "a regression split has no negative examples (BoostSRL -reg reads \
                      regressionExample(...) lines from the positives file)"
                .into(),
        });
    }
    build_regression_split(&facts, &pos, target, bk, &f("facts"))
}

/// Hyperparameters of [`RegressionRfgb`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `n_trees` | 10 | M, boosting iterations (BoostSRL `-trees`) | ≥ 1 |
/// | `tree` | [`TreeParams::boostsrl`] | tree induction | see there |
/// | `step` | 1 | step length multiplying each tree | > 0 |
/// | `initial_value` | 0 | F₀, every example's value before the first tree (BoostSRL's) | finite |
/// | `apply_background_settings` | true | apply the background's `setParam:` lines (as RFGB) | bool |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RegressionRfgbParams {
    /// Number of trees M.
    pub n_trees: usize,
    /// Tree induction parameters.
    pub tree: TreeParams,
    /// Step length.
    pub step: f64,
    /// F₀.
    pub initial_value: f64,
    /// Whether [`fit`](Self::fit) applies the background's `setParam:` settings.
    pub apply_background_settings: bool,
}

impl Default for RegressionRfgbParams {
    fn default() -> Self {
        Self {
            n_trees: 10,
            tree: TreeParams::boostsrl(),
            step: 1.0,
            initial_value: 0.0,
            apply_background_settings: true,
        }
    }
}

impl RegressionRfgbParams {
    /// The regression parameters sharing RFGB's tree limits, number of trees, step and
    /// `apply_background_settings` (F₀ = 0), so that a front-end builds them as it builds
    /// RFGB's (preset, `setParam:` lines, explicit options) and converts once, as
    /// [`crate::MlnBoostParams::from_rfgb`] does for MLN-Boost.
    #[must_use]
    pub fn from_rfgb(p: &SoftRfgbParams) -> Self {
        Self {
            n_trees: p.n_trees,
            tree: p.tree.clone(),
            step: p.step,
            initial_value: 0.0,
            apply_background_settings: p.apply_background_settings,
        }
    }

    /// Learns M relational regression trees by least-squares functional gradient
    /// boosting: `F = F₀` for every example; for m = 1..M fit a
    /// [`RelationalRegressionTree`] to the residuals `r_i = y_i − F(x_i)` of all examples
    /// and add it (times `step`) to `F`.
    ///
    /// With `apply_background_settings`, the background's `setParam:` lines are applied
    /// first, as [`SoftRfgbParams::fit`] does (tree limits, `-trees`, `step`; the
    /// log-odds and sampling settings have no meaning here and are reported as
    /// applied to RFGB's fields only).
    ///
    /// # Arguments
    /// * `db`, `bk` — facts and modes (see [`TreeParams::fit`]).
    /// * `examples` — the target's examples over `db`'s constants.
    /// * `values` — one finite target value per example.
    ///
    /// # Errors
    /// [`BoostError::InvalidParam`] for bad parameters, a length mismatch or a
    /// non-finite value; [`BoostError::NoModes`]; [`BoostError::NoExamples`] without
    /// examples.
    ///
    /// # Complexity
    /// M tree inductions over all examples.
    pub fn fit(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        values: &[f64],
    ) -> Result<RegressionRfgb, BoostError> {
        let mut params = self.clone();
        let settings = if self.apply_background_settings {
            // RFGB's setParam handling, on the fields the two share
            let mut soft = SoftRfgbParams {
                n_trees: params.n_trees,
                tree: params.tree.clone(),
                step: params.step,
                ..SoftRfgbParams::default()
            };
            let report = soft.apply_settings(bk);
            if soft.recursion {
                return Err(BoostError::InvalidParam {
                    name: "recursion",
                    message: "setParam: recursion=true: recursive targets are learned for RDN and MLN-Boost models; RDN-Boost regression has none".into(),
                });
            }
            params = Self {
                initial_value: params.initial_value,
                ..Self::from_rfgb(&soft)
            };
            report
        } else {
            SettingsReport::default()
        };
        let bad = |name, message: String| Err(BoostError::InvalidParam { name, message });
        if params.n_trees == 0 {
            return bad("n_trees", "must be at least 1".into());
        }
        if !(params.step.is_finite() && params.step > 0.0) {
            return bad("step", "must be positive".into());
        }
        if !params.initial_value.is_finite() {
            return bad("initial_value", "must be finite".into());
        }
        if values.len() != examples.len() {
            return bad(
                "values",
                format!("{} values for {} examples", values.len(), examples.len()),
            );
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return bad("values", format!("value {i} = {} is not finite", values[i]));
        }
        if bk.modes.is_empty() {
            return Err(BoostError::NoModes);
        }
        if examples.is_empty() {
            return Err(BoostError::NoExamples {
                reason: format!("no regression example of {}", examples.pred),
            });
        }
        let mut f = vec![params.initial_value; examples.len()];
        let mut trees = Vec::with_capacity(params.n_trees);
        let mut history = Vec::with_capacity(params.n_trees + 1);
        history.push(mean_squared_error(values, &f));
        for _ in 0..params.n_trees {
            let residual: Vec<f64> = values.iter().zip(&f).map(|(y, fx)| y - fx).collect();
            let (tree, fitted) = params
                .tree
                .fit_assign_counted(db, bk, examples, &residual, None, false)?;
            for (fx, v) in f.iter_mut().zip(fitted) {
                *fx += params.step * v;
            }
            history.push(mean_squared_error(values, &f));
            trees.push(tree);
        }
        Ok(RegressionRfgb {
            target: examples.pred.clone(),
            arity: examples.arity,
            step: params.step,
            initial_value: params.initial_value,
            trees,
            n_train: examples.len(),
            train_mse: history,
            settings,
        })
    }
}

fn mean_squared_error(y: &[f64], f: &[f64]) -> f64 {
    let n = y.len().max(1) as f64;
    y.iter().zip(f).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / n
}

/// A fitted RDN-Boost regression model: `F(x) = F₀ + step · Σ_m tree_m(x)`, in the
/// target's units.
///
/// Serialises with serde (trees store predicate and constant names); deserialising
/// checks the whole model ([`RegressionRfgb::validate`] and each tree's checks), so an
/// edited model file is refused when read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RegressionRfgbRepr")]
pub struct RegressionRfgb {
    target: String,
    arity: usize,
    step: f64,
    initial_value: f64,
    trees: Vec<RelationalRegressionTree>,
    n_train: usize,
    train_mse: Vec<f64>,
    #[serde(default)]
    settings: SettingsReport,
}

/// The serialised form of [`RegressionRfgb`], checked by `TryFrom` into it.
#[derive(Deserialize)]
struct RegressionRfgbRepr {
    target: String,
    arity: usize,
    step: f64,
    initial_value: f64,
    trees: Vec<RelationalRegressionTree>,
    n_train: usize,
    train_mse: Vec<f64>,
    #[serde(default)]
    settings: SettingsReport,
}

impl TryFrom<RegressionRfgbRepr> for RegressionRfgb {
    type Error = String;

    fn try_from(r: RegressionRfgbRepr) -> Result<Self, String> {
        let m = Self {
            target: r.target,
            arity: r.arity,
            step: r.step,
            initial_value: r.initial_value,
            trees: r.trees,
            n_train: r.n_train,
            train_mse: r.train_mse,
            settings: r.settings,
        };
        m.validate()?;
        Ok(m)
    }
}

impl RegressionRfgb {
    /// Checks the model as a model file read from disk needs: a target name, F₀ finite,
    /// a step finite and `> 0`, every tree over the model's target and arity.
    ///
    /// # Errors
    /// A message naming the field or the tree at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.target.is_empty() {
            return Err("empty target name".into());
        }
        if !self.initial_value.is_finite() {
            return Err(format!(
                "initial_value = {} is not finite",
                self.initial_value
            ));
        }
        crate::boost::check_step_and_trees(self.step, &self.trees, &self.target, self.arity)
    }

    /// The trees, in boosting order.
    pub fn trees(&self) -> &[RelationalRegressionTree] {
        &self.trees
    }

    /// The target predicate.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The target's arity.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// The step length.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// F₀.
    pub fn initial_value(&self) -> f64 {
        self.initial_value
    }

    /// Number of training examples.
    pub fn n_train(&self) -> usize {
        self.n_train
    }

    /// Training mean squared error before the first tree and after each tree
    /// (`n_trees + 1` values, target units squared): the convergence record.
    pub fn train_mse(&self) -> &[f64] {
        &self.train_mse
    }

    /// The background settings applied when fitting.
    pub fn settings(&self) -> &SettingsReport {
        &self.settings
    }

    /// `F(x)` for each example, in the target's units.
    ///
    /// # Errors
    /// [`BoostError::TargetMismatch`] for examples of another predicate.
    pub fn predict(&self, db: &Database, examples: &Examples) -> Result<Vec<f64>, BoostError> {
        let mut f = vec![self.initial_value; examples.len()];
        for t in &self.trees {
            for (s, v) in f.iter_mut().zip(t.predict(db, examples)?) {
                *s += self.step * v;
            }
        }
        Ok(f)
    }
}

impl std::fmt::Display for RegressionRfgb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "% RDN-Boost regression model for {}/{} ({} trees, step {}, initial value {})",
            self.target,
            self.arity,
            self.trees.len(),
            self.step,
            self.initial_value
        )?;
        for (i, t) in self.trees.iter().enumerate() {
            writeln!(f, "% tree {}", i + 1)?;
            write!(f, "{t}")?;
        }
        Ok(())
    }
}
