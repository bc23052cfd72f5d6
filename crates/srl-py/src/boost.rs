//! `srl.Database`, `srl.BoostedRDN`, `srl.SoftBoostedRDN`, `srl.BoostedMLN`: RFGB,
//! Soft-RFGB and MLN-Boost (srl-boost) with srlearn's names and scikit-learn's methods;
//! expert advice (`advice=`, srl-boost's `fit_with_advice`) and several targets in one
//! run (`_fit_targets`, srl-boost's `fit_targets`, behind `srl.fit_targets`).

use std::path::{Path, PathBuf};

use numpy::{IntoPyArray as _, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_boost::{
    Advice, AdviceUse, Atom, Background, BoostKind, BoostedModel, ClauseSchedule, FolderAtoms,
    GibbsInference, MlnBoost, MlnBoostParams, MlnClauseParams, NegativeSampling,
    RelationalRegressionTree, SeedSampling, SoftRfgb, SoftRfgbParams, Split, TreeParams,
};

use crate::errors::{self, value_error};
use crate::model_file::{self, KIND_MLN_BOOST, KIND_SOFT_RFGB, ModelFile, Provenance};

pyo3::create_exception!(
    srl,
    NotFittedError,
    pyo3::exceptions::PyValueError,
    "An estimator was used before `fit` (or `from_json`). A ValueError, as scikit-learn's."
);

/// The data of an `srl.Database`: the atoms of its examples and facts (srl-boost's
/// `FolderAtoms`, as `srl boost learn` reads a folder), its background and where it came
/// from.
#[derive(Clone, Debug)]
pub struct DbData {
    /// Positives, negatives, facts and the facts file (named in arity errors).
    pub(crate) atoms: FolderAtoms,
    pub(crate) bk: Background,
    /// The folder it was read from, or `<python lists>`.
    pub(crate) source: String,
}

impl DbData {
    /// The learning problem of `target` (positives of other predicates become facts, as
    /// `srl boost learn` does): srl-boost's `FolderAtoms::split`.
    fn split(&self, target: &str) -> Result<Split, srl_boost::BoostError> {
        self.atoms.split(target, &self.bk)
    }
}

fn render(a: &Atom) -> String {
    format!("{}({}).", a.pred, a.args.join(","))
}

/// Parses a list of one-per-item atoms; the pseudo-file `Database.{what}` and the 1-based
/// item number name a bad item.
fn parse_list(items: &[String], what: &str) -> PyResult<Vec<Atom>> {
    let name = format!("Database.{what}");
    for (i, s) in items.iter().enumerate() {
        if s.contains('\n') {
            return Err(errors::parse_error(
                Path::new(&name),
                i + 1,
                "one atom per list item (the item holds a line break)",
            ));
        }
    }
    srl_boost::parse_atoms(&items.join("\n"), Path::new(&name)).map_err(errors::boost)
}

/// A BoostSRL-style relational database: positive and negative examples, facts, and the
/// background (modes, `setParam:` settings).
///
/// `Database(pos=[...], neg=[...], facts=[...], modes=[...])` takes lists of strings, one
/// ground atom per item (`"advisedby(person1,person2)."`, trailing period optional) and one
/// background line per mode item (`"advisedby(+person,-person)."` as srlearn writes them, or
/// BoostSRL's `"mode: advisedby(+person,-person)."`; `"setParam: nodeSize=1."` lines are
/// accepted too). `Database.from_folder(path)` reads a BoostSRL folder.
///
/// Raises `srl.ParseError` (a ValueError) for a malformed item, naming
/// `Database.pos` / `.neg` / `.facts` / `.modes` and the 1-based item number as the line.
#[pyclass(module = "srl", name = "Database", frozen)]
pub struct PyDatabase {
    pub(crate) data: DbData,
}

#[pymethods]
impl PyDatabase {
    #[new]
    #[pyo3(signature = (pos = None, neg = None, facts = None, modes = None))]
    fn new(
        pos: Option<Vec<String>>,
        neg: Option<Vec<String>>,
        facts: Option<Vec<String>>,
        modes: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let modes = modes.unwrap_or_default();
        for (i, s) in modes.iter().enumerate() {
            if s.contains('\n') {
                return Err(errors::parse_error(
                    Path::new("Database.modes"),
                    i + 1,
                    "one background line per list item (the item holds a line break)",
                ));
            }
        }
        let bk = srl_boost::parse_background(&modes.join("\n"), Path::new("Database.modes"))
            .map_err(errors::boost)?;
        Ok(Self {
            data: DbData {
                atoms: FolderAtoms {
                    pos: parse_list(&pos.unwrap_or_default(), "pos")?,
                    neg: parse_list(&neg.unwrap_or_default(), "neg")?,
                    facts: parse_list(&facts.unwrap_or_default(), "facts")?,
                    facts_path: PathBuf::from("Database.facts"),
                },
                bk,
                source: "<python lists>".to_owned(),
            },
        })
    }

    /// Reads a BoostSRL folder: `PREFIX_pos.txt`, `PREFIX_neg.txt`, `PREFIX_facts.txt` and
    /// the background `bk` (default `PREFIX_bk.txt` in the folder when it exists; its
    /// `import:` lines are followed).
    ///
    /// Raises `OSError` (`FileNotFoundError`, ...) for a missing folder or file and
    /// `srl.ParseError` with file and line for a malformed line.
    #[staticmethod]
    #[pyo3(signature = (path, prefix = "train", bk = None))]
    fn from_folder(
        py: Python<'_>,
        path: PathBuf,
        prefix: &str,
        bk: Option<PathBuf>,
    ) -> PyResult<Self> {
        if !path.is_dir() {
            let e = std::io::Error::from(std::io::ErrorKind::NotFound);
            return Err(errors::os_error(&path, "no such folder", &e));
        }
        let prefix = prefix.to_owned();
        py.detach(move || {
            let f = |s: &str| path.join(format!("{prefix}_{s}.txt"));
            let bk_path = bk.or_else(|| Some(f("bk")).filter(|p| p.is_file()));
            let bk = match bk_path {
                Some(p) => srl_boost::read_background(&p)?,
                None => Background::default(),
            };
            // pos, neg, facts: the order the files are read (the first missing one
            // is the error)
            Ok(DbData {
                atoms: FolderAtoms {
                    pos: srl_boost::read_atoms(&f("pos"))?,
                    neg: srl_boost::read_atoms(&f("neg"))?,
                    facts: srl_boost::read_atoms(&f("facts"))?,
                    facts_path: f("facts"),
                },
                bk,
                source: path.display().to_string(),
            })
        })
        .map(|data| Self { data })
        .map_err(errors::boost)
    }

    /// Pickle support: the whole database (atoms with their files and lines, the
    /// background with modes, settings, rules, ...) as JSON text, rebuilt by
    /// `srl._srl._database_from_state`; `copy.deepcopy` goes the same way.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let atoms = |v: &[Atom]| -> serde_json::Value {
            v.iter()
                .map(|a| serde_json::json!([a.pred, a.args, a.file.display().to_string(), a.line]))
                .collect()
        };
        let state = serde_json::json!({
            "pos": atoms(&self.data.atoms.pos),
            "neg": atoms(&self.data.atoms.neg),
            "facts": atoms(&self.data.atoms.facts),
            "bk": self.data.bk,
            "source": self.data.source,
            "facts_path": self.data.atoms.facts_path,
        });
        let f = py.import("srl._srl")?.getattr("_database_from_state")?;
        Ok((f, (state.to_string(),)))
    }

    /// Positive examples, one `pred(a,b).` string each, in input order.
    #[getter]
    fn pos(&self) -> Vec<String> {
        self.data.atoms.pos.iter().map(render).collect()
    }

    /// Negative examples, one `pred(a,b).` string each.
    #[getter]
    fn neg(&self) -> Vec<String> {
        self.data.atoms.neg.iter().map(render).collect()
    }

    /// Facts, one `pred(a,b).` string each (background-file facts not included).
    #[getter]
    fn facts(&self) -> Vec<String> {
        self.data.atoms.facts.iter().map(render).collect()
    }

    /// Mode declarations as `pred(+type,-type).` strings.
    #[getter]
    fn modes(&self) -> Vec<String> {
        self.data.bk.modes.iter().map(|m| format!("{m}.")).collect()
    }

    /// `setParam:` settings of the background, as `(key, value)` pairs in order.
    #[getter]
    fn settings(&self) -> Vec<(String, String)> {
        self.data.bk.settings.clone()
    }

    /// The examples of `target` in the order `predict_proba` scores them (distinct
    /// positives first, then distinct negatives, each in input order): a list of atom
    /// strings and a bool array of labels (shape `(n,)`).
    ///
    /// Raises ValueError when there is no example of `target`.
    fn examples<'py>(
        &self,
        py: Python<'py>,
        target: &str,
    ) -> PyResult<(Vec<String>, Bound<'py, PyArray1<bool>>)> {
        let split = py
            .detach(|| self.data.split(target))
            .map_err(errors::boost)?;
        let ex = &split.examples;
        let atoms = (0..ex.len())
            .map(|i| format!("{}.", ex.atom(i, &split.db)))
            .collect();
        Ok((atoms, ex.labels().to_vec().into_pyarray(py)))
    }

    /// A database with the same facts, background and other predicates' examples, and
    /// only the examples of `target` at `indices` (positions in `examples(target)`'s
    /// order; repeats count once). The examples keep that order, so position `j` of the
    /// new database's `examples(target)` is the `j`-th smallest selected index. This is
    /// how the boosting estimators take scikit-learn's cross-validation folds
    /// (`fit(indices, y, database=db)`).
    ///
    /// Raises ValueError for an index outside `0..n` or no example of `target`.
    fn select(&self, py: Python<'_>, target: &str, indices: Vec<i64>) -> PyResult<Self> {
        let split = py
            .detach(|| self.data.split(target))
            .map_err(errors::boost)?;
        let ex = &split.examples;
        let n = ex.len();
        let mut keep: std::collections::HashSet<(Vec<String>, bool)> =
            std::collections::HashSet::new();
        for &i in &indices {
            let j = usize::try_from(i).ok().filter(|&j| j < n).ok_or_else(|| {
                value_error(format!(
                    "index {i}: {target} has {n} examples (indices 0..{n})"
                ))
            })?;
            let args = ex
                .args(j)
                .iter()
                .map(|&c| split.db.constant_name(c).to_owned())
                .collect();
            keep.insert((args, ex.labels()[j]));
        }
        let tpred = ex.pred.clone();
        let pick = |atoms: &[Atom], label: bool| -> Vec<Atom> {
            atoms
                .iter()
                .filter(|a| {
                    a.pred != tpred
                        || keep.contains(&(a.args.clone(), label))
                        // a conflicting atom (in pos and neg) is a positive example
                        || (!label && keep.contains(&(a.args.clone(), true)))
                })
                .cloned()
                .collect()
        };
        Ok(Self {
            data: DbData {
                atoms: FolderAtoms {
                    pos: pick(&self.data.atoms.pos, true),
                    neg: pick(&self.data.atoms.neg, false),
                    facts: self.data.atoms.facts.clone(),
                    facts_path: self.data.atoms.facts_path.clone(),
                },
                bk: self.data.bk.clone(),
                source: self.data.source.clone(),
            },
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "srl.Database({} pos, {} neg, {} facts, {} modes; {})",
            self.data.atoms.pos.len(),
            self.data.atoms.neg.len(),
            self.data.atoms.facts.len(),
            self.data.bk.modes.len(),
            self.data.source
        )
    }
}

/// Constructor arguments shared by the boosting estimators.
#[derive(Clone, Debug, PartialEq)]
pub struct BoostConfig {
    pub(crate) target: Option<String>,
    pub(crate) n_estimators: usize,
    pub(crate) alpha: f64,
    pub(crate) beta: f64,
    pub(crate) neg_pos_ratio: Option<f64>,
    pub(crate) resample_negatives: bool,
    pub(crate) step: f64,
    pub(crate) preset: String,
    pub(crate) max_tree_depth: Option<usize>,
    pub(crate) node_size: Option<usize>,
    pub(crate) max_leaves: Option<usize>,
    pub(crate) min_leaf_examples: Option<usize>,
    pub(crate) use_setparam: bool,
    pub(crate) random_state: u64,
    /// The advice file (BoostSRL `-adviceFile`; `BoostedRDN`, `SoftBoostedRDN` only).
    pub(crate) advice: Option<PathBuf>,
    /// The advice weight w (BoostSRL `-adviceWt`), checked by `fit`.
    pub(crate) advice_weight: f64,
    /// BoostSRL's seed examples per node (`TreeParams::seed_sampling`, `srl boost learn
    /// --seed-examples N`); None scores every candidate test. Checked (≥ 1) by `fit`.
    pub(crate) seed_examples: Option<usize>,
    /// Gibbs burn-in sweeps of a recursive model's prediction (`GibbsInference::burn_in`,
    /// `srl boost predict --burn-in`).
    pub(crate) gibbs_burn_in: usize,
    /// Gibbs sweeps averaged by a recursive model's prediction
    /// (`GibbsInference::samples`, `srl boost predict --samples`); checked (≥ 1) by `fit`
    /// and by every prediction.
    pub(crate) gibbs_samples: usize,
    /// MLN-Boost by clauses (BoostSRL `-mlnClause`; `BoostedMLN` only).
    pub(crate) mln_clause: bool,
    /// Clauses per step with `mln_clause` (BoostSRL `-numMLNClause`; with
    /// `mln_clause_length`).
    pub(crate) n_mln_clauses: Option<usize>,
    /// Literals per clause body with `mln_clause` (BoostSRL `-mlnClauseLen`; with
    /// `n_mln_clauses`).
    pub(crate) mln_clause_length: Option<usize>,
}

impl Default for BoostConfig {
    fn default() -> Self {
        Self {
            target: None,
            n_estimators: 10,
            alpha: 0.0,
            beta: 0.0,
            neg_pos_ratio: None,
            resample_negatives: true,
            step: 1.0,
            preset: "boostsrl".to_owned(),
            max_tree_depth: None,
            node_size: None,
            max_leaves: None,
            min_leaf_examples: None,
            use_setparam: true,
            random_state: 1,
            advice: None,
            advice_weight: srl_boost::BOOSTSRL_ADVICE_WEIGHT,
            seed_examples: None,
            gibbs_burn_in: srl_boost::BOOSTSRL_BURN_IN,
            gibbs_samples: srl_boost::BOOSTSRL_SAMPLES,
            mln_clause: false,
            n_mln_clauses: None,
            mln_clause_length: None,
        }
    }
}

/// The tree limits a `preset` argument names: `"boostsrl"` or `"two_literal"`.
///
/// # Errors
/// `ValueError` for any other name.
fn preset_tree(preset: &str) -> PyResult<TreeParams> {
    match preset {
        "boostsrl" => Ok(TreeParams::boostsrl()),
        "two_literal" => Ok(TreeParams::two_literal()),
        other => Err(value_error(format!(
            "preset {other:?}: expected \"boostsrl\" or \"two_literal\""
        ))),
    }
}

/// The keys of `get_params` in order; `soft` adds alpha and beta; the RDN estimators
/// (`mln` false) have advice and advice_weight, `BoostedMLN` (`mln`) the clause learner's
/// mln_clause, n_mln_clauses and mln_clause_length.
fn param_names(soft: bool, mln: bool) -> Vec<&'static str> {
    let mut v = vec!["target", "n_estimators"];
    if soft {
        v.extend(["alpha", "beta"]);
    }
    v.extend([
        "neg_pos_ratio",
        "resample_negatives",
        "step",
        "preset",
        "max_tree_depth",
        "node_size",
        "max_leaves",
        "min_leaf_examples",
        "use_setparam",
        "random_state",
    ]);
    if !mln {
        v.extend(["advice", "advice_weight"]);
    }
    v.extend(["seed_examples", "gibbs_burn_in", "gibbs_samples"]);
    if mln {
        v.extend(["mln_clause", "n_mln_clauses", "mln_clause_length"]);
    }
    v
}

impl BoostConfig {
    /// The library parameters: the preset, then the background's `setParam:` lines
    /// (`use_setparam`), then the explicit arguments, in the order of `srl boost learn`.
    pub(crate) fn params(&self, bk: &Background) -> PyResult<(SoftRfgbParams, Option<String>)> {
        let tree = preset_tree(&self.preset)?;
        let mut p = SoftRfgbParams {
            tree,
            ..SoftRfgbParams::default()
        };
        let report = self.use_setparam.then(|| p.apply_settings(bk).to_string());
        p.apply_background_settings = false;
        if self.n_estimators == 0 {
            return Err(value_error("n_estimators = 0: must be at least 1"));
        }
        p.n_trees = self.n_estimators;
        p.alpha = self.alpha;
        p.beta = self.beta;
        p.step = self.step;
        let ratio = match self.neg_pos_ratio {
            Some(r) if !(r.is_finite() && r >= 0.0) => {
                return Err(value_error(format!(
                    "neg_pos_ratio = {r}: must be a non-negative number (0 keeps every negative)"
                )));
            }
            Some(r) => Some(r),
            None => match p.negative_sampling {
                NegativeSampling::All => None,
                NegativeSampling::Once(r) | NegativeSampling::PerTree(r) => Some(r),
            },
        };
        p.negative_sampling = match ratio {
            None | Some(0.0) => NegativeSampling::All,
            Some(r) if self.resample_negatives => NegativeSampling::PerTree(r),
            Some(r) => NegativeSampling::Once(r),
        };
        if let Some(d) = self.max_tree_depth {
            p.tree.max_depth = d;
        }
        if let Some(n) = self.node_size {
            p.tree.max_node_literals = n;
        }
        if let Some(l) = self.max_leaves {
            p.tree.max_leaves = l;
        }
        if let Some(m) = self.min_leaf_examples {
            p.tree.min_leaf_examples = m;
        }
        if let Some(k) = self.seed_examples {
            // as `srl boost learn --seed-examples N`: the library draws each tree's seed
            // from the fit's generator
            if k == 0 {
                return Err(value_error(
                    "seed_examples = 0: draw at least one seed example per node (BoostSRL's seed examples; None scores every candidate test)",
                ));
            }
            p.tree.seed_sampling = Some(SeedSampling { seeds: k, seed: 0 });
        }
        self.gibbs()?;
        if srl_boost::advice_weight(Some(self.advice_weight)).is_err() {
            return Err(value_error(format!(
                "advice_weight = {}: must be a number in [0, 1] (BoostSRL -adviceWt; 0: the data alone, 1: the advice alone)",
                self.advice_weight
            )));
        }
        Ok((p, report))
    }

    /// The Gibbs sampler of a recursive model's prediction (`srl boost predict --burn-in
    /// --samples --seed`): `gibbs_burn_in`, `gibbs_samples`, seeded by `random_state`.
    ///
    /// # Errors
    /// `ValueError` for `gibbs_samples = 0` (srl-boost's `GibbsInference::validate`).
    fn gibbs(&self) -> PyResult<GibbsInference> {
        let g = GibbsInference {
            burn_in: self.gibbs_burn_in,
            samples: self.gibbs_samples,
            seed: self.random_state,
        };
        g.validate().map_err(|_| {
            value_error(format!(
                "gibbs_samples = {}: a recursive model's marginals average at least one Gibbs sweep (BoostSRL: 200)",
                self.gibbs_samples
            ))
        })?;
        Ok(g)
    }

    /// What `fit` learns (srl-boost's `BoostKind`): RFGB for the RDN estimators;
    /// MLN-Boost, by trees or, with `mln_clause`, by clauses (BoostSRL `-mln
    /// -mlnClause`), for `BoostedMLN`. The clause arguments are checked as `srl boost
    /// learn` checks `--mln-clause`, `--num-mln-clauses` and `--mln-clause-length`.
    ///
    /// # Errors
    /// `ValueError` for one of `n_mln_clauses` / `mln_clause_length` without the other
    /// or without `mln_clause`, or a zero.
    fn boost_kind(&self, mln: bool) -> PyResult<BoostKind> {
        if !mln {
            // the RDN estimators have no clause arguments (not in `param_names`)
            return Ok(BoostKind::Rdn);
        }
        let names = srl_boost::ClauseOptionNames {
            enable: "mln_clause=True",
            clauses: "n_mln_clauses",
            length: "mln_clause_length",
        };
        let clauses = MlnClauseParams::from_options(
            self.mln_clause,
            self.n_mln_clauses,
            self.mln_clause_length,
            names,
        )
        .map_err(|e| match e {
            srl_boost::BoostError::InvalidParam { message, .. } => value_error(message),
            e => errors::boost(e),
        })?;
        Ok(clauses.map_or(BoostKind::Mln, BoostKind::MlnClauses))
    }

    /// The advice file as a string (lossy for a path that is not UTF-8).
    fn advice_str(&self) -> Option<String> {
        self.advice.as_ref().map(|p| p.display().to_string())
    }

    fn to_dict<'py>(&self, py: Python<'py>, soft: bool, mln: bool) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for k in param_names(soft, mln) {
            match k {
                "target" => d.set_item(k, self.target.clone())?,
                "n_estimators" => d.set_item(k, self.n_estimators)?,
                "alpha" => d.set_item(k, self.alpha)?,
                "beta" => d.set_item(k, self.beta)?,
                "neg_pos_ratio" => d.set_item(k, self.neg_pos_ratio)?,
                "resample_negatives" => d.set_item(k, self.resample_negatives)?,
                "step" => d.set_item(k, self.step)?,
                "preset" => d.set_item(k, self.preset.clone())?,
                "max_tree_depth" => d.set_item(k, self.max_tree_depth)?,
                "node_size" => d.set_item(k, self.node_size)?,
                "max_leaves" => d.set_item(k, self.max_leaves)?,
                "min_leaf_examples" => d.set_item(k, self.min_leaf_examples)?,
                "use_setparam" => d.set_item(k, self.use_setparam)?,
                "random_state" => d.set_item(k, self.random_state)?,
                "advice" => d.set_item(k, self.advice_str())?,
                "advice_weight" => d.set_item(k, self.advice_weight)?,
                "seed_examples" => d.set_item(k, self.seed_examples)?,
                "gibbs_burn_in" => d.set_item(k, self.gibbs_burn_in)?,
                "gibbs_samples" => d.set_item(k, self.gibbs_samples)?,
                "mln_clause" => d.set_item(k, self.mln_clause)?,
                "n_mln_clauses" => d.set_item(k, self.n_mln_clauses)?,
                "mln_clause_length" => d.set_item(k, self.mln_clause_length)?,
                _ => {}
            }
        }
        Ok(d)
    }

    fn set(&mut self, key: &str, v: &Bound<'_, PyAny>, soft: bool, mln: bool) -> PyResult<()> {
        if !param_names(soft, mln).contains(&key) {
            return Err(value_error(format!(
                "invalid parameter {key:?}; valid parameters: {}",
                param_names(soft, mln).join(", ")
            )));
        }
        let mut assign = || -> PyResult<()> {
            match key {
                "target" => self.target = v.extract()?,
                "n_estimators" => self.n_estimators = v.extract()?,
                "alpha" => self.alpha = v.extract()?,
                "beta" => self.beta = v.extract()?,
                "neg_pos_ratio" => self.neg_pos_ratio = v.extract()?,
                "resample_negatives" => self.resample_negatives = v.extract()?,
                "step" => self.step = v.extract()?,
                "preset" => self.preset = v.extract()?,
                "max_tree_depth" => self.max_tree_depth = v.extract()?,
                "node_size" => self.node_size = v.extract()?,
                "max_leaves" => self.max_leaves = v.extract()?,
                "min_leaf_examples" => self.min_leaf_examples = v.extract()?,
                "use_setparam" => self.use_setparam = v.extract()?,
                "random_state" => self.random_state = v.extract()?,
                "advice" => self.advice = v.extract()?,
                "advice_weight" => self.advice_weight = v.extract()?,
                "seed_examples" => self.seed_examples = v.extract()?,
                "gibbs_burn_in" => self.gibbs_burn_in = v.extract()?,
                "gibbs_samples" => self.gibbs_samples = v.extract()?,
                "mln_clause" => self.mln_clause = v.extract()?,
                "n_mln_clauses" => self.n_mln_clauses = v.extract()?,
                "mln_clause_length" => self.mln_clause_length = v.extract()?,
                _ => {}
            }
            Ok(())
        };
        // a value of the wrong type: a TypeError naming the parameter
        assign().map_err(|e| {
            let py = v.py();
            if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
                pyo3::exceptions::PyTypeError::new_err(format!("{key}: {}", e.value(py)))
            } else {
                e
            }
        })
    }

    fn to_json(&self, soft: bool, mln: bool) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        let put = |m: &mut serde_json::Map<String, serde_json::Value>, k: &str, v| {
            m.insert(k.to_owned(), v);
        };
        put(&mut m, "target", serde_json::json!(self.target));
        put(&mut m, "n_estimators", serde_json::json!(self.n_estimators));
        if soft {
            put(&mut m, "alpha", serde_json::json!(self.alpha));
            put(&mut m, "beta", serde_json::json!(self.beta));
        }
        put(
            &mut m,
            "neg_pos_ratio",
            serde_json::json!(self.neg_pos_ratio),
        );
        put(
            &mut m,
            "resample_negatives",
            serde_json::json!(self.resample_negatives),
        );
        put(&mut m, "step", serde_json::json!(self.step));
        put(&mut m, "preset", serde_json::json!(self.preset));
        put(
            &mut m,
            "max_tree_depth",
            serde_json::json!(self.max_tree_depth),
        );
        put(&mut m, "node_size", serde_json::json!(self.node_size));
        put(&mut m, "max_leaves", serde_json::json!(self.max_leaves));
        put(
            &mut m,
            "min_leaf_examples",
            serde_json::json!(self.min_leaf_examples),
        );
        put(&mut m, "use_setparam", serde_json::json!(self.use_setparam));
        put(&mut m, "random_state", serde_json::json!(self.random_state));
        if !mln {
            put(&mut m, "advice", serde_json::json!(self.advice_str()));
            put(
                &mut m,
                "advice_weight",
                serde_json::json!(self.advice_weight),
            );
        }
        put(
            &mut m,
            "seed_examples",
            serde_json::json!(self.seed_examples),
        );
        put(
            &mut m,
            "gibbs_burn_in",
            serde_json::json!(self.gibbs_burn_in),
        );
        put(
            &mut m,
            "gibbs_samples",
            serde_json::json!(self.gibbs_samples),
        );
        if mln {
            put(&mut m, "mln_clause", serde_json::json!(self.mln_clause));
            put(
                &mut m,
                "n_mln_clauses",
                serde_json::json!(self.n_mln_clauses),
            );
            put(
                &mut m,
                "mln_clause_length",
                serde_json::json!(self.mln_clause_length),
            );
        }
        serde_json::Value::Object(m)
    }

    /// The arguments stored in a model file (`parameters.estimator.params`), or, for a
    /// file written by `srl boost learn`, the ones the model itself records (with the
    /// library parameters' seed sampling and clause schedule). An argument the file does
    /// not store (a file written before it existed) takes that value, else its default.
    fn from_file(file: &ModelFile, model: &Model) -> Self {
        let (alpha, beta) = model.alpha_beta();
        let mut c = Self {
            target: Some(model.target().to_owned()),
            n_estimators: model.trees().len().max(1),
            alpha,
            beta,
            random_state: file.provenance.seed.unwrap_or(1),
            advice: model.advice().map(|a| PathBuf::from(&a.file)),
            advice_weight: model
                .advice()
                .map_or(srl_boost::BOOSTSRL_ADVICE_WEIGHT, |a| a.weight),
            ..Self::default()
        };
        // what the library parameters record (`srl boost learn --seed-examples N`,
        // `--mln-clause [--num-mln-clauses C --mln-clause-length L]`)
        let lib = &file.parameters;
        c.seed_examples = lib
            .get("tree")
            .and_then(|t| t.get("seed_sampling"))
            .and_then(|s| serde_json::from_value::<SeedSampling>(s.clone()).ok())
            .map(|s| s.seeds);
        let clauses = lib
            .get("clauses")
            .and_then(|v| serde_json::from_value::<MlnClauseParams>(v.clone()).ok());
        c.mln_clause = clauses.is_some() || model.is_clause_based();
        // boosting steps: a clause-based model has several trees (clauses) per step
        if model.is_clause_based() {
            c.n_estimators = model.clauses_per_step().len();
        }
        if let Some(n) = lib
            .get("n_trees")
            .and_then(serde_json::Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n > 0)
        {
            c.n_estimators = n;
        }
        if let Some(MlnClauseParams {
            schedule: ClauseSchedule::Fixed { clauses, length },
            ..
        }) = clauses
        {
            c.n_mln_clauses = Some(clauses);
            c.mln_clause_length = Some(length);
        }
        let Some(p) = file
            .parameters
            .get("estimator")
            .and_then(|e| e.get("params"))
        else {
            return c;
        };
        let s = |k: &str| p.get(k).and_then(serde_json::Value::as_str);
        let f = |k: &str| p.get(k).and_then(serde_json::Value::as_f64);
        let u = |k: &str| {
            p.get(k)
                .and_then(serde_json::Value::as_u64)
                .and_then(|v| usize::try_from(v).ok())
        };
        let b = |k: &str| p.get(k).and_then(serde_json::Value::as_bool);
        if let Some(t) = s("target") {
            c.target = Some(t.to_owned());
        }
        if let Some(n) = u("n_estimators") {
            c.n_estimators = n;
        }
        c.neg_pos_ratio = f("neg_pos_ratio");
        c.resample_negatives = b("resample_negatives").unwrap_or(true);
        c.step = f("step").unwrap_or(1.0);
        if let Some(v) = s("preset") {
            v.clone_into(&mut c.preset);
        }
        c.max_tree_depth = u("max_tree_depth");
        c.node_size = u("node_size");
        c.max_leaves = u("max_leaves");
        c.min_leaf_examples = u("min_leaf_examples");
        c.use_setparam = b("use_setparam").unwrap_or(true);
        if let Some(r) = p.get("random_state").and_then(serde_json::Value::as_u64) {
            c.random_state = r;
        }
        if let Some(a) = s("advice") {
            c.advice = Some(PathBuf::from(a));
        }
        if let Some(w) = f("advice_weight") {
            c.advice_weight = w;
        }
        // arguments added later: kept from above when the file has no such key
        let given_u = |k: &str| -> Option<Option<usize>> {
            p.get(k)
                .map(|v| v.as_u64().and_then(|v| usize::try_from(v).ok()))
        };
        if let Some(v) = given_u("seed_examples") {
            c.seed_examples = v;
        }
        if let Some(Some(v)) = given_u("gibbs_burn_in") {
            c.gibbs_burn_in = v;
        }
        if let Some(Some(v)) = given_u("gibbs_samples") {
            c.gibbs_samples = v;
        }
        if let Some(v) = b("mln_clause") {
            c.mln_clause = v;
        }
        if let Some(v) = given_u("n_mln_clauses") {
            c.n_mln_clauses = v;
        }
        if let Some(v) = given_u("mln_clause_length") {
            c.mln_clause_length = v;
        }
        c
    }

    fn repr(&self, class: &str, soft: bool) -> String {
        let mut parts = vec![match &self.target {
            Some(t) => format!("target={t:?}"),
            None => "target=None".to_owned(),
        }];
        parts.push(format!("n_estimators={}", self.n_estimators));
        if soft {
            parts.push(format!("alpha={}", self.alpha));
            parts.push(format!("beta={}", self.beta));
        }
        if let Some(r) = self.neg_pos_ratio {
            parts.push(format!("neg_pos_ratio={r}"));
        }
        parts.push(format!("random_state={}", self.random_state));
        if let Some(a) = &self.advice {
            parts.push(format!("advice={:?}", a.display().to_string()));
            parts.push(format!("advice_weight={}", self.advice_weight));
        }
        if let Some(k) = self.seed_examples {
            parts.push(format!("seed_examples={k}"));
        }
        if self.gibbs_burn_in != srl_boost::BOOSTSRL_BURN_IN {
            parts.push(format!("gibbs_burn_in={}", self.gibbs_burn_in));
        }
        if self.gibbs_samples != srl_boost::BOOSTSRL_SAMPLES {
            parts.push(format!("gibbs_samples={}", self.gibbs_samples));
        }
        if self.mln_clause {
            parts.push("mln_clause=True".to_owned());
        }
        if let Some(c) = self.n_mln_clauses {
            parts.push(format!("n_mln_clauses={c}"));
        }
        if let Some(l) = self.mln_clause_length {
            parts.push(format!("mln_clause_length={l}"));
        }
        format!("srl.{class}({})", parts.join(", "))
    }
}

/// A fitted boosted model: RFGB / Soft-RFGB or MLN-Boost.
#[derive(Clone, Debug)]
pub enum Model {
    /// `srl_boost::SoftRfgb` (BoostedRDN, SoftBoostedRDN).
    Rdn(SoftRfgb),
    /// `srl_boost::MlnBoost` (BoostedMLN).
    Mln(MlnBoost),
}

impl Model {
    fn target(&self) -> &str {
        match self {
            Self::Rdn(m) => m.target(),
            Self::Mln(m) => m.target(),
        }
    }
    fn trees(&self) -> &[RelationalRegressionTree] {
        match self {
            Self::Rdn(m) => m.trees(),
            Self::Mln(m) => m.trees(),
        }
    }
    fn alpha_beta(&self) -> (f64, f64) {
        match self {
            Self::Rdn(m) => (m.alpha(), m.beta()),
            Self::Mln(_) => (0.0, 0.0),
        }
    }
    /// The advice an RDN was learned with (None for MLN-Boost, which takes none).
    fn advice(&self) -> Option<&AdviceUse> {
        match self {
            Self::Rdn(m) => m.advice(),
            Self::Mln(_) => None,
        }
    }
    fn train_log_likelihood(&self) -> &[f64] {
        match self {
            Self::Rdn(m) => m.train_log_likelihood(),
            Self::Mln(m) => m.train_log_likelihood(),
        }
    }
    /// The recursive predicate (`recursive_T`) of a model learned with `setParam:
    /// recursion=true`.
    fn recursion(&self) -> Option<&str> {
        match self {
            Self::Rdn(m) => m.recursion(),
            Self::Mln(m) => m.recursion(),
        }
    }
    /// Clauses learned per step by clause-based MLN-Boost (empty otherwise).
    fn clauses_per_step(&self) -> &[usize] {
        match self {
            Self::Rdn(_) => &[],
            Self::Mln(m) => m.clauses_per_step(),
        }
    }
    fn is_clause_based(&self) -> bool {
        !self.clauses_per_step().is_empty()
    }
    /// P(true), or the log-odds with `log_odds`, of each example; a recursive model's
    /// atoms are sampled jointly with `inference` (srl-boost's `predict_proba_with`,
    /// which a model that is not recursive ignores), and its log-odds are those of the
    /// marginals, as srl-boost's `decision_function` gives them.
    fn scores(
        &self,
        db: &srl_boost::Database,
        ex: &srl_boost::Examples,
        log_odds: bool,
        inference: &GibbsInference,
    ) -> Result<Vec<f64>, srl_boost::BoostError> {
        match (self, log_odds) {
            (Self::Rdn(m), true) => m.decision_function_with(db, ex, inference),
            (Self::Rdn(m), false) => m.predict_proba_with(db, ex, inference),
            (Self::Mln(m), true) => m.decision_function_with(db, ex, inference),
            (Self::Mln(m), false) => m.predict_proba_with(db, ex, inference),
        }
    }
    fn text(&self) -> String {
        match self {
            Self::Rdn(m) => m.to_string(),
            Self::Mln(m) => m.to_string(),
        }
    }
    fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        match self {
            Self::Rdn(m) => serde_json::to_value(m),
            Self::Mln(m) => serde_json::to_value(m),
        }
    }
}

/// A fitted model and where it came from.
#[derive(Clone, Debug)]
pub struct Fitted {
    model: Model,
    params: SoftRfgbParams,
    /// The clause learner's settings of clause-based MLN-Boost (the model file's
    /// `parameters.clauses`, as `srl boost learn --mln-clause` writes them).
    clauses: Option<MlnClauseParams>,
    data: String,
    settings: Option<String>,
}

/// The state of a boosting estimator.
#[derive(Clone, Debug, Default)]
pub struct BoostCore {
    /// MLN-Boost instead of RFGB.
    mln: bool,
    cfg: BoostConfig,
    fitted: Option<Fitted>,
}

/// Learns the model of one target's `split` from a generator seeded by `seed`:
/// srl-boost's `fit_boosted` (`kind`: MLN-Boost by trees or by clauses, or RFGB: with
/// `advice`, the advice and its weight, or RFGB / Soft-RFGB).
fn fit_split(
    params: &SoftRfgbParams,
    kind: BoostKind,
    seed: u64,
    bk: &Background,
    split: &Split,
    advice: Option<(&Advice, f64)>,
) -> Result<Model, srl_boost::BoostError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (db, ex) = (&split.db, &split.examples);
    Ok(
        match srl_boost::fit_boosted(params, kind, advice, db, bk, ex, &mut rng)? {
            BoostedModel::Rdn(m) => Model::Rdn(m),
            BoostedModel::Mln(m) => Model::Mln(m),
        },
    )
}

/// The clause learner's settings of `kind` (None unless MLN-Boost by clauses).
fn clause_params(kind: BoostKind) -> Option<MlnClauseParams> {
    match kind {
        BoostKind::MlnClauses(c) => Some(c),
        BoostKind::Rdn | BoostKind::Mln => None,
    }
}

/// Warns (`UserWarning`) about modes on a target's recursive predicate `recursive_T`
/// that cannot take effect, as `srl boost learn` does: without recursion (no `setParam:
/// recursion=true.` applied) no `recursive_T` atom exists, and with it, a target that no
/// mode lets a clause test learns no recursive clause.
fn warn_recursive_modes(
    py: Python<'_>,
    bk: &Background,
    targets: &[String],
    recursion: bool,
) -> PyResult<()> {
    for msg in srl_boost::recursion::mode_warnings(bk, targets, recursion) {
        let msg = std::ffi::CString::new(msg).unwrap_or_default();
        let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
        PyErr::warn(py, &category, &msg, 2)?;
    }
    Ok(())
}

impl BoostCore {
    fn fit(&mut self, py: Python<'_>, db: &DbData) -> PyResult<()> {
        let target = self.cfg.target.clone().ok_or_else(|| {
            value_error(
                "target is None: give the target predicate, e.g. BoostedRDN(target=\"advisedby\")",
            )
        })?;
        let (params, settings) = self.cfg.params(&db.bk)?;
        let kind = self.cfg.boost_kind(self.mln)?;
        warn_recursive_modes(py, &db.bk, std::slice::from_ref(&target), params.recursion)?;
        let advice = self.advice(py, db, std::slice::from_ref(&target))?;
        let (seed, weight) = (self.cfg.random_state, self.cfg.advice_weight);
        let model = py
            .detach(|| {
                let split = db.split(&target)?;
                let advice = advice.as_ref().map(|a| (a, weight));
                fit_split(&params, kind, seed, &db.bk, &split, advice)
            })
            .map_err(errors::boost)?;
        self.fitted = Some(Fitted {
            model,
            params,
            clauses: clause_params(kind),
            data: db.source.clone(),
            settings,
        });
        Ok(())
    }

    /// One fitted model per target of `targets` with these parameters (srl-boost's
    /// `fit_targets`, BoostSRL `-target a,b,c`): every target is checked before any is
    /// learned, then each is learned in order from its own split (the other targets'
    /// positives as facts) with a generator seeded by `random_state`, so each model is
    /// the one `fit` with that target alone learns.
    fn fit_targets(
        &self,
        py: Python<'_>,
        db: &DbData,
        targets: &[String],
    ) -> PyResult<Vec<Fitted>> {
        let (params, settings) = self.cfg.params(&db.bk)?;
        let kind = self.cfg.boost_kind(self.mln)?;
        warn_recursive_modes(py, &db.bk, targets, params.recursion)?;
        let advice = self.advice(py, db, targets)?;
        let (seed, weight) = (self.cfg.random_state, self.cfg.advice_weight);
        let fits = py
            .detach(|| {
                srl_boost::fit_targets(&db.atoms, targets, &db.bk, |split| {
                    let advice = advice.as_ref().map(|a| (a, weight));
                    fit_split(&params, kind, seed, &db.bk, split, advice)
                })
            })
            .map_err(errors::boost)?;
        Ok(fits
            .into_iter()
            .map(|f| Fitted {
                model: f.model,
                params: params.clone(),
                clauses: clause_params(kind),
                data: db.source.clone(),
                settings: settings.clone(),
            })
            .collect())
    }

    /// The advice file of `advice`, read (with its clause files) and checked against `db`
    /// for a fit of `targets`, as `srl boost learn --advice` does: every label must name
    /// a predicate of the positive or negative examples (else a typo: srl.ParseError with
    /// the advice file and line); advice on a predicate that is not one of `targets` is
    /// not used, and a `UserWarning` says so. None without `advice`.
    fn advice(&self, py: Python<'_>, db: &DbData, targets: &[String]) -> PyResult<Option<Advice>> {
        let Some(path) = &self.cfg.advice else {
            return Ok(None);
        };
        // BoostedMLN takes no advice argument; fit_boosted refuses MLN with advice
        let advice = py.detach(|| Advice::read(path)).map_err(errors::boost)?;
        let unused = advice
            .unused_labels(targets, &db.atoms)
            .map_err(errors::boost)?;
        for l in unused {
            let msg = format!(
                "the advice on {l} in {} is not used: {l} is not a target of this fit",
                path.display()
            );
            let msg = std::ffi::CString::new(msg).unwrap_or_default();
            let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
            PyErr::warn(py, &category, &msg, 2)?;
        }
        Ok(Some(advice))
    }

    fn fitted(&self) -> PyResult<&Fitted> {
        self.fitted.as_ref().ok_or_else(|| {
            NotFittedError::new_err(
                "this estimator is not fitted yet: call fit(database) or load it with from_json",
            )
        })
    }

    /// P(true) (or log-odds) of each example of the fitted target in `db`; a recursive
    /// model samples them jointly with the Gibbs arguments (checked at every call).
    fn scores(&self, py: Python<'_>, db: &DbData, log_odds: bool) -> PyResult<Vec<f64>> {
        let f = self.fitted()?;
        let inference = self.cfg.gibbs()?;
        py.detach(|| {
            let split = db.split(f.model.target())?;
            f.model
                .scores(&split.db, &split.examples, log_odds, &inference)
        })
        .map_err(errors::boost)
    }

    fn model_file(&self, class: &str, soft: bool) -> PyResult<ModelFile> {
        let f = self.fitted()?;
        let mut parameters = if self.mln {
            // as `srl boost learn --model-type mln [--mln-clause]` writes them
            serde_json::to_value(MlnBoostParams {
                clauses: f.clauses,
                ..MlnBoostParams::from_rfgb(&f.params)
            })
        } else {
            serde_json::to_value(&f.params)
        }
        .map_err(value_error)?;
        if let serde_json::Value::Object(m) = &mut parameters {
            // as `srl boost learn --advice` writes it
            if let Some(a) = f.model.advice() {
                m.insert("advice_weight".to_owned(), serde_json::json!(a.weight));
            }
            m.insert(
                "estimator".to_owned(),
                serde_json::json!({ "class": class, "params": self.cfg.to_json(soft, self.mln) }),
            );
        }
        Ok(ModelFile {
            format: model_file::FORMAT.to_owned(),
            version: model_file::VERSION,
            kind: self.kind().to_owned(),
            provenance: Provenance {
                data: f.data.clone(),
                seed: Some(self.cfg.random_state),
                srl_version: env!("CARGO_PKG_VERSION").to_owned(),
                command: format!("{}.fit (Python bindings)", self.cfg.repr(class, soft)),
            },
            parameters,
            model: f.model.to_json().map_err(value_error)?,
        })
    }

    fn kind(&self) -> &'static str {
        if self.mln {
            KIND_MLN_BOOST
        } else {
            KIND_SOFT_RFGB
        }
    }

    fn from_model_file(file: ModelFile, mln: bool, source: &Path) -> PyResult<Self> {
        let malformed = |e: serde_json::Error| {
            value_error(format!("{}: malformed model: {e}", source.display()))
        };
        let model = if mln {
            Model::Mln(serde_json::from_value(file.model.clone()).map_err(malformed)?)
        } else {
            Model::Rdn(serde_json::from_value(file.model.clone()).map_err(malformed)?)
        };
        let (alpha, beta) = model.alpha_beta();
        let (params, clauses) = if mln {
            serde_json::from_value::<MlnBoostParams>(file.parameters.clone())
                .map(|p| (p.as_rfgb(), p.clauses))
                .unwrap_or_default()
        } else {
            let p = serde_json::from_value::<SoftRfgbParams>(file.parameters.clone())
                .unwrap_or_else(|_| SoftRfgbParams::soft(alpha, beta));
            (p, None)
        };
        Ok(Self {
            mln,
            cfg: BoostConfig::from_file(&file, &model),
            fitted: Some(Fitted {
                params,
                clauses,
                data: file.provenance.data.clone(),
                settings: None,
                model,
            }),
        })
    }
}

/// The methods shared by `BoostedRDN`, `BoostedMLN` and `SoftBoostedRDN`.
macro_rules! boost_methods {
    ($ty:ident, $name:literal, $soft:expr, { $($ctor:tt)* }) => {
        #[pymethods]
        impl $ty {
            $($ctor)*

            /// Learns `n_estimators` relational regression trees on `database` (the
            /// examples of `target`; positives of other predicates become facts). Releases
            /// the GIL while learning. Returns `self`.
            ///
            /// Raises ValueError for no target, no positive or no negative example, bad
            /// parameters, or a predicate used with two arities.
            fn fit<'py>(
                mut slf: PyRefMut<'py, Self>,
                database: PyRef<'py, PyDatabase>,
            ) -> PyResult<PyRefMut<'py, Self>> {
                let py = slf.py();
                slf.core.fit(py, &database.data)?;
                Ok(slf)
            }

            /// P(target atom is true) for each example of the target in `database`, in
            /// the order of `database.examples(target)`: float64 array of shape `(n,)`
            /// (srlearn's convention: the positive class only).
            ///
            /// Raises srl.NotFittedError before `fit`; ValueError without examples.
            fn predict_proba<'py>(
                &self,
                py: Python<'py>,
                database: PyRef<'py, PyDatabase>,
            ) -> PyResult<Bound<'py, PyArray1<f64>>> {
                Ok(self
                    .core
                    .scores(py, &database.data, false)?
                    .into_pyarray(py))
            }

            /// The log-odds ψ(x) = ψ₀ + step·Σ trees, shape `(n,)` (nats).
            fn decision_function<'py>(
                &self,
                py: Python<'py>,
                database: PyRef<'py, PyDatabase>,
            ) -> PyResult<Bound<'py, PyArray1<f64>>> {
                Ok(self.core.scores(py, &database.data, true)?.into_pyarray(py))
            }

            /// `predict_proba(database) >= threshold`: bool array of shape `(n,)`.
            #[pyo3(signature = (database, threshold = 0.5))]
            fn predict<'py>(
                &self,
                py: Python<'py>,
                database: PyRef<'py, PyDatabase>,
                threshold: f64,
            ) -> PyResult<Bound<'py, PyArray1<bool>>> {
                if !(0.0..=1.0).contains(&threshold) {
                    return Err(value_error(format!(
                        "threshold = {threshold}: must be in [0, 1]"
                    )));
                }
                let p = self.core.scores(py, &database.data, false)?;
                Ok(p
                    .into_iter()
                    .map(|p| p >= threshold)
                    .collect::<Vec<_>>()
                    .into_pyarray(py))
            }

            /// The constructor arguments as a dict (scikit-learn's `get_params`).
            #[pyo3(signature = (deep = true))]
            fn get_params<'py>(
                &self,
                py: Python<'py>,
                deep: bool,
            ) -> PyResult<Bound<'py, PyDict>> {
                let _ = deep;
                self.core.cfg.to_dict(py, $soft, Self::MLN)
            }

            /// Sets constructor arguments by name; returns `self`. A fitted model is kept
            /// until the next `fit`. Raises ValueError for an unknown name.
            #[pyo3(signature = (**params))]
            fn set_params<'py>(
                mut slf: PyRefMut<'py, Self>,
                params: Option<&Bound<'py, PyDict>>,
            ) -> PyResult<PyRefMut<'py, Self>> {
                if let Some(p) = params {
                    let mut cfg = slf.core.cfg.clone();
                    for (k, v) in p.iter() {
                        let k: String = k.extract()?;
                        cfg.set(&k, &v, $soft, Self::MLN)?;
                    }
                    slf.core.cfg = cfg;
                }
                Ok(slf)
            }

            /// Writes the fitted model as an srl model file (format `srl-model`, version 1,
            /// kind `soft-rfgb`: the file of `srl boost learn`, readable by
            /// `srl boost predict`) to `path`, atomically; without `path` returns the JSON
            /// text. An existing file is replaced only with `overwrite=True` (as `--force`
            /// of the CLI). Raises srl.NotFittedError before `fit`, FileExistsError for an
            /// existing file without `overwrite`, OSError if the file cannot be written.
            #[pyo3(signature = (path = None, *, overwrite = false))]
            fn to_json(&self, path: Option<PathBuf>, overwrite: bool) -> PyResult<Option<String>> {
                let text = model_file::to_string(&self.core.model_file($name, $soft)?)?;
                match path {
                    Some(p) => model_file::write_atomic(&p, &text, overwrite).map(|()| None),
                    None => Ok(Some(text)),
                }
            }

            /// Reads a model file written by `to_json` or by `srl boost learn`.
            ///
            /// Raises OSError for an unreadable file, srl.ParseError (file and line) for
            /// text that is not a model, ValueError for another format, version or kind.
            #[staticmethod]
            fn from_json(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
                let file = py.detach(|| model_file::load(&path, Self::KIND))?;
                Ok(Self {
                    core: BoostCore::from_model_file(file, Self::MLN, &path)?,
                })
            }

            /// `from_json` on JSON text (errors name `<string>`).
            #[staticmethod]
            fn from_json_string(text: &str) -> PyResult<Self> {
                let source = Path::new("<string>");
                let file = model_file::parse(text, source, Self::KIND)?;
                Ok(Self {
                    core: BoostCore::from_model_file(file, Self::MLN, source)?,
                })
            }

            /// Replaces this estimator's parameters and fitted model by those of the model
            /// file text `text` (what `to_json()` returns): the way `srl.BoostedRDN` and
            /// its siblings load a file into an instance of their own class, and unpickle.
            ///
            /// Raises srl.ParseError / ValueError as `from_json_string`.
            fn _load_model_text(&mut self, text: &str) -> PyResult<()> {
                let source = Path::new("<string>");
                let file = model_file::parse(text, source, Self::KIND)?;
                self.core = BoostCore::from_model_file(file, Self::MLN, source)?;
                Ok(())
            }

            /// Whether `fit` or a model file has given this estimator a model.
            fn __sklearn_is_fitted__(&self) -> bool {
                self.core.fitted.is_some()
            }

            /// The learned trees, one list of clause strings per tree
            /// (`advisedby(A,B) :- publication(C,A), publication(C,B). 0.86`).
            #[getter]
            fn estimators_(&self) -> PyResult<Vec<Vec<String>>> {
                Ok(self
                    .core
                    .fitted()?
                    .model
                    .trees()
                    .iter()
                    .map(|t| t.clauses())
                    .collect())
            }

            /// How often each predicate is a splitting criterion over all trees (each
            /// inner node's literals once): `{predicate: count}`; the Python class turns
            /// it into `feature_importances_` (a `collections.Counter`, as srlearn's).
            fn _feature_counts(&self) -> PyResult<std::collections::BTreeMap<String, usize>> {
                let mut out = std::collections::BTreeMap::new();
                for t in self.core.fitted()?.model.trees() {
                    for (p, c) in t.feature_counts() {
                        *out.entry(p).or_insert(0) += c;
                    }
                }
                Ok(out)
            }

            /// The target predicate of the fitted model.
            #[getter]
            fn target_(&self) -> PyResult<String> {
                Ok(self.core.fitted()?.model.target().to_owned())
            }

            /// Mean training log-likelihood before the first tree and after each tree:
            /// float64 array of shape `(n_estimators + 1,)` (nats per example).
            #[getter]
            fn train_log_likelihood_<'py>(
                &self,
                py: Python<'py>,
            ) -> PyResult<Bound<'py, PyArray1<f64>>> {
                Ok(self
                    .core
                    .fitted()?
                    .model
                    .train_log_likelihood()
                    .to_vec()
                    .into_pyarray(py))
            }

            /// The advice the fitted model was learned with (`advice=`; Odom et al. 2015),
            /// as the model file records it: `{"file", "weight", "pieces" (pieces of
            /// advice naming the target), "preferred_examples", "avoided_examples"
            /// (training examples with n_t − n_f > 0, < 0)}`; None without advice (always
            /// for BoostedMLN).
            #[getter]
            fn advice_<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
                let Some(a) = self.core.fitted()?.model.advice() else {
                    return Ok(None);
                };
                let d = PyDict::new(py);
                d.set_item("file", &a.file)?;
                d.set_item("weight", a.weight)?;
                d.set_item("pieces", a.pieces)?;
                d.set_item("preferred_examples", a.preferred_examples)?;
                d.set_item("avoided_examples", a.avoided_examples)?;
                Ok(Some(d))
            }

            /// Learns one model per estimator of `estimators` on `database` with this
            /// estimator's parameters, each for the `target` of that estimator (unfitted
            /// instances of this class with the same parameters: what `srl.fit_targets`
            /// builds), through srl-boost's `fit_targets` (BoostSRL `-target a,b,c`):
            /// every target is checked before any is learned. Releases the GIL.
            ///
            /// Raises ValueError for an estimator without target, a target without
            /// examples, two names of one predicate, and as `fit`.
            fn _fit_targets<'py>(
                &self,
                py: Python<'py>,
                database: PyRef<'py, PyDatabase>,
                estimators: Vec<Bound<'py, Self>>,
            ) -> PyResult<()> {
                let mut targets = Vec::with_capacity(estimators.len());
                for e in &estimators {
                    let t = e.try_borrow()?.core.cfg.target.clone();
                    targets.push(t.ok_or_else(|| value_error("an estimator without target"))?);
                }
                let fits = self.core.fit_targets(py, &database.data, &targets)?;
                for (e, f) in estimators.iter().zip(fits) {
                    e.try_borrow_mut()?.core.fitted = Some(f);
                }
                Ok(())
            }

            /// The background's `setParam:` lines applied or ignored in `fit` (None when
            /// `use_setparam=False` or after `from_json`).
            #[getter]
            fn settings_(&self) -> PyResult<Option<String>> {
                Ok(self.core.fitted()?.settings.clone())
            }

            /// The recursive predicate of a model learned with the background's
            /// `setParam: recursion=true.` (BoostSRL's recursion; `"recursive_smokes"` for
            /// target `smokes`), else None. When some tree tests it, `predict_proba`,
            /// `decision_function`, `predict` and `score` sample the examples' atoms
            /// jointly (Gibbs sampling with `gibbs_burn_in`, `gibbs_samples`, seeded by
            /// `random_state`).
            #[getter]
            fn recursion_(&self) -> PyResult<Option<String>> {
                Ok(self.core.fitted()?.model.recursion().map(str::to_owned))
            }

            /// The trees as text (BoostSRL-style clauses, one tree after another).
            fn __str__(&self) -> String {
                match &self.core.fitted {
                    Some(f) => f.model.text(),
                    None => self.__repr__(),
                }
            }

            fn __repr__(&self) -> String {
                self.core.cfg.repr($name, $soft)
            }
        }
    };
}

/// RFGB: a boosted relational dependency network for one target predicate (Natarajan et
/// al. 2012; srlearn's `BoostedRDN`), learned by srl-boost with BoostSRL's conventions.
///
/// Defaults are BoostSRL's own, as `srl boost learn` uses them (same settings, same seed:
/// a bit-identical model): `n_estimators=10`, `preset="boostsrl"` (at most 13 leaves =
/// 12 inner nodes, depth 5, one literal per node), `neg_pos_ratio=None` (BoostSRL's 2),
/// negatives redrawn for every tree, `random_state=1`. srlearn's
/// defaults differ (`node_size=2`, `max_tree_depth=3`): pass those two to get srlearn's
/// limits.
///
/// `advice` / `advice_weight` (default 0.5): knowledge-based RFGB (Odom et al. 2015;
/// BoostSRL `-adviceFile` / `-adviceWt`), srl-boost's `fit_with_advice`; the file is read
/// and the weight checked (in [0, 1]) by `fit`.
///
/// `seed_examples` (default None): BoostSRL's seed-based candidate sampling
/// (`TreeParams::seed_sampling`, `srl boost learn --seed-examples N`): at every node only
/// the tests that one of N random seed examples of the node satisfies are scored
/// (BoostSRL draws 10); None scores every candidate test; 0 is a ValueError at `fit`.
///
/// `gibbs_burn_in` (default 20), `gibbs_samples` (default 200): the Gibbs sweeps
/// discarded and averaged when a recursive model (the background's `setParam:
/// recursion=true.`; `recursion_`) predicts (BoostSRL's `SingleModelSampler`; `srl boost
/// predict --burn-in --samples`), seeded by `random_state` as `--seed`; models that are
/// not recursive ignore them. `gibbs_samples = 0` is a ValueError at `fit` and predict.
#[pyclass(module = "srl._srl", name = "BoostedRDN", subclass)]
pub struct BoostedRdn {
    core: BoostCore,
}

impl BoostedRdn {
    const KIND: &'static str = KIND_SOFT_RFGB;
    const MLN: bool = false;
}

// The constructors' `advice_weight = 0.5` is written as a literal so that Python's
// signature shows it; it is BoostSRL's default, srl-boost's constant.
const _: () = assert!(srl_boost::BOOSTSRL_ADVICE_WEIGHT == 0.5);
// Likewise `gibbs_burn_in = 20, gibbs_samples = 200`: BoostSRL's sweeps, srl-boost's
// `GibbsInference::default()`.
const _: () = assert!(srl_boost::BOOSTSRL_BURN_IN == 20 && srl_boost::BOOSTSRL_SAMPLES == 200);

impl BoostConfig {
    /// The keyword arguments shared by every estimator's constructor (`alpha`, `beta` and
    /// the advice at their defaults).
    #[allow(clippy::too_many_arguments)]
    fn unweighted(
        target: Option<String>,
        n_estimators: usize,
        neg_pos_ratio: Option<f64>,
        resample_negatives: bool,
        step: f64,
        preset: &str,
        max_tree_depth: Option<usize>,
        node_size: Option<usize>,
        max_leaves: Option<usize>,
        min_leaf_examples: Option<usize>,
        use_setparam: bool,
        random_state: u64,
    ) -> Self {
        Self {
            target,
            n_estimators,
            neg_pos_ratio,
            resample_negatives,
            step,
            preset: preset.to_owned(),
            max_tree_depth,
            node_size,
            max_leaves,
            min_leaf_examples,
            use_setparam,
            random_state,
            ..Self::default()
        }
    }
}

/// `boost_methods!` with the constructor of the estimators that have no `alpha`/`beta`:
/// `BoostedRDN` (`advice`: with `advice` and `advice_weight`, knowledge-based RFGB) and
/// `BoostedMLN` (`no_advice`: MLN-Boost takes no advice, as BoostSRL's `-adviceFile`
/// applies to RDNs).
macro_rules! unweighted_boost_methods {
    ($ty:ident, $name:literal, advice) => {
        boost_methods!($ty, $name, false, {
            #[new]
            #[pyo3(signature = (
                                target = None, n_estimators = 10, *, neg_pos_ratio = None,
                                resample_negatives = true, step = 1.0, preset = "boostsrl",
                                max_tree_depth = None, node_size = None, max_leaves = None,
                                min_leaf_examples = None, use_setparam = true, random_state = 1,
                                advice = None, advice_weight = 0.5, seed_examples = None,
                                gibbs_burn_in = 20, gibbs_samples = 200
                            ))]
            #[allow(clippy::too_many_arguments)]
            fn new(
                target: Option<String>,
                n_estimators: usize,
                neg_pos_ratio: Option<f64>,
                resample_negatives: bool,
                step: f64,
                preset: &str,
                max_tree_depth: Option<usize>,
                node_size: Option<usize>,
                max_leaves: Option<usize>,
                min_leaf_examples: Option<usize>,
                use_setparam: bool,
                random_state: u64,
                advice: Option<PathBuf>,
                advice_weight: f64,
                seed_examples: Option<usize>,
                gibbs_burn_in: usize,
                gibbs_samples: usize,
            ) -> Self {
                Self {
                    core: BoostCore {
                        cfg: BoostConfig {
                            advice,
                            advice_weight,
                            seed_examples,
                            gibbs_burn_in,
                            gibbs_samples,
                            ..BoostConfig::unweighted(
                                target,
                                n_estimators,
                                neg_pos_ratio,
                                resample_negatives,
                                step,
                                preset,
                                max_tree_depth,
                                node_size,
                                max_leaves,
                                min_leaf_examples,
                                use_setparam,
                                random_state,
                            )
                        },
                        fitted: None,
                        mln: Self::MLN,
                    },
                }
            }
        });
    };
    ($ty:ident, $name:literal, no_advice) => {
        boost_methods!($ty, $name, false, {
            #[new]
            #[pyo3(signature = (
                                target = None, n_estimators = 10, *, neg_pos_ratio = None,
                                resample_negatives = true, step = 1.0, preset = "boostsrl",
                                max_tree_depth = None, node_size = None, max_leaves = None,
                                min_leaf_examples = None, use_setparam = true, random_state = 1,
                                seed_examples = None, gibbs_burn_in = 20, gibbs_samples = 200,
                                mln_clause = false, n_mln_clauses = None,
                                mln_clause_length = None
                            ))]
            #[allow(clippy::too_many_arguments)]
            fn new(
                target: Option<String>,
                n_estimators: usize,
                neg_pos_ratio: Option<f64>,
                resample_negatives: bool,
                step: f64,
                preset: &str,
                max_tree_depth: Option<usize>,
                node_size: Option<usize>,
                max_leaves: Option<usize>,
                min_leaf_examples: Option<usize>,
                use_setparam: bool,
                random_state: u64,
                seed_examples: Option<usize>,
                gibbs_burn_in: usize,
                gibbs_samples: usize,
                mln_clause: bool,
                n_mln_clauses: Option<usize>,
                mln_clause_length: Option<usize>,
            ) -> Self {
                Self {
                    core: BoostCore {
                        cfg: BoostConfig {
                            seed_examples,
                            gibbs_burn_in,
                            gibbs_samples,
                            mln_clause,
                            n_mln_clauses,
                            mln_clause_length,
                            ..BoostConfig::unweighted(
                                target,
                                n_estimators,
                                neg_pos_ratio,
                                resample_negatives,
                                step,
                                preset,
                                max_tree_depth,
                                node_size,
                                max_leaves,
                                min_leaf_examples,
                                use_setparam,
                                random_state,
                            )
                        },
                        fitted: None,
                        mln: Self::MLN,
                    },
                }
            }

            /// Clause-based MLN-Boost (`mln_clause=True`): how many clauses each boosting
            /// step learned (`estimators_` holds the clauses in step order, each as a
            /// one-split tree); an empty list for tree-based MLN-Boost. srl-boost's
            /// `MlnBoost::clauses_per_step`.
            #[getter]
            fn clauses_per_step_(&self) -> PyResult<Vec<usize>> {
                Ok(self.core.fitted()?.model.clauses_per_step().to_vec())
            }
        });
    };
}

unweighted_boost_methods!(BoostedRdn, "BoostedRDN", advice);

/// MLN-Boost: a boosted Markov logic network for one target predicate (Khot et al. 2011,
/// the tree-based learner of BoostSRL's `-mln`; srlearn's `BoostedMLN`): each leaf is a
/// weighted clause whose weight multiplies its number of true groundings. Same arguments
/// and methods as `BoostedRDN` without the advice; model files have kind `mln-boost`.
///
/// `mln_clause=True`: MLN-Boost by clauses (BoostSRL `-mln -mlnClause`, `srl boost learn
/// --mln-clause`; srl-boost's `BoostKind::MlnClauses`): each step learns weighted clauses
/// instead of a tree (`clauses_per_step_`). Without `n_mln_clauses` /
/// `mln_clause_length`, BoostSRL's own schedule (step m from 0 learns at most 20 / (m + 1)
/// clauses of at most m / 4 + 1 literals); with both (BoostSRL `-numMLNClause`,
/// `-mlnClauseLen`; ≥ 1), those sizes at every step. One without the other, either
/// without `mln_clause`, or a 0 is a ValueError at `fit`.
#[pyclass(module = "srl._srl", name = "BoostedMLN", subclass)]
pub struct BoostedMln {
    core: BoostCore,
}

impl BoostedMln {
    const KIND: &'static str = KIND_MLN_BOOST;
    const MLN: bool = true;
}

unweighted_boost_methods!(BoostedMln, "BoostedMLN", no_advice);

/// Soft-RFGB (Yang et al. 2014): RFGB whose gradients weigh false negatives by `alpha` and
/// false positives by `beta` (Eq. 3); `alpha = beta = 0` is RFGB.
#[pyclass(module = "srl._srl", name = "SoftBoostedRDN", subclass)]
pub struct SoftBoostedRdn {
    core: BoostCore,
}

impl SoftBoostedRdn {
    const KIND: &'static str = KIND_SOFT_RFGB;
    const MLN: bool = false;
}

boost_methods!(SoftBoostedRdn, "SoftBoostedRDN", true, {
    #[new]
    #[pyo3(signature = (
        target = None, n_estimators = 10, alpha = 0.0, beta = 0.0, *, neg_pos_ratio = None,
        resample_negatives = true, step = 1.0, preset = "boostsrl",
        max_tree_depth = None, node_size = None, max_leaves = None, min_leaf_examples = None,
        use_setparam = true, random_state = 1, advice = None,
        advice_weight = 0.5, seed_examples = None, gibbs_burn_in = 20, gibbs_samples = 200
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        target: Option<String>,
        n_estimators: usize,
        alpha: f64,
        beta: f64,
        neg_pos_ratio: Option<f64>,
        resample_negatives: bool,
        step: f64,
        preset: &str,
        max_tree_depth: Option<usize>,
        node_size: Option<usize>,
        max_leaves: Option<usize>,
        min_leaf_examples: Option<usize>,
        use_setparam: bool,
        random_state: u64,
        advice: Option<PathBuf>,
        advice_weight: f64,
        seed_examples: Option<usize>,
        gibbs_burn_in: usize,
        gibbs_samples: usize,
    ) -> PyResult<Self> {
        if !(alpha.is_finite() && beta.is_finite()) {
            return Err(value_error(format!(
                "alpha = {alpha}, beta = {beta}: must be finite"
            )));
        }
        Ok(Self {
            core: BoostCore {
                cfg: BoostConfig {
                    alpha,
                    beta,
                    advice,
                    advice_weight,
                    seed_examples,
                    gibbs_burn_in,
                    gibbs_samples,
                    ..BoostConfig::unweighted(
                        target,
                        n_estimators,
                        neg_pos_ratio,
                        resample_negatives,
                        step,
                        preset,
                        max_tree_depth,
                        node_size,
                        max_leaves,
                        min_leaf_examples,
                        use_setparam,
                        random_state,
                    )
                },
                fitted: None,
                mln: Self::MLN,
            },
        })
    }
});

/// The target names of `targets`, a comma-separated string (BoostSRL's `-target a,b,c`)
/// or a sequence of names, through srl-boost's `parse_targets`: trimmed, none empty, none
/// twice (ignoring ASCII case).
///
/// Raises ValueError for an empty list, an empty name or a repeated one; TypeError for
/// another type.
#[pyfunction]
pub fn _parse_targets(targets: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let list = match targets.extract::<String>() {
        Ok(s) => s,
        Err(_) => targets.extract::<Vec<String>>()?.join(","),
    };
    srl_boost::parse_targets(&list).map_err(errors::boost)
}

/// Rebuilds a `Database` pickled by `Database.__reduce__` (JSON state text).
///
/// Raises ValueError for state text that is not such a state.
#[pyfunction]
pub fn _database_from_state(state: &str) -> PyResult<PyDatabase> {
    let bad = |e: &dyn std::fmt::Display| value_error(format!("not a pickled srl.Database: {e}"));
    let v: serde_json::Value = serde_json::from_str(state).map_err(|e| bad(&e))?;
    let atoms = |key: &str| -> PyResult<Vec<Atom>> {
        let list = v[key]
            .as_array()
            .ok_or_else(|| bad(&format!("no `{key}` list")))?;
        list.iter()
            .map(|a| {
                let (pred, args, file, line): (String, Vec<String>, String, usize) =
                    serde_json::from_value(a.clone()).map_err(|e| bad(&e))?;
                Ok(Atom {
                    pred,
                    args,
                    file: std::sync::Arc::from(Path::new(&file)),
                    line,
                })
            })
            .collect()
    };
    Ok(PyDatabase {
        data: DbData {
            atoms: FolderAtoms {
                pos: atoms("pos")?,
                neg: atoms("neg")?,
                facts: atoms("facts")?,
                facts_path: serde_json::from_value(v["facts_path"].clone()).map_err(|e| bad(&e))?,
            },
            bk: serde_json::from_value(v["bk"].clone()).map_err(|e| bad(&e))?,
            source: v["source"].as_str().unwrap_or("<pickle>").to_owned(),
        },
    })
}
