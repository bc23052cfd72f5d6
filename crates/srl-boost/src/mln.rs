//! MLN-Boost: functional-gradient boosting of Markov logic networks (Khot, Natarajan,
//! Kersting & Shavlik, "Learning Markov logic networks via functional gradient
//! boosting", ICDM 2011), the tree-based learner that BoostSRL's `-mln` runs by default.
//!
//! An MLN over the target predicate is a set of weighted clauses `wⱼ : target(x) ⇐ bodyⱼ`.
//! Given the rest of the world (the target atom's Markov blanket),
//! `P(x = 1 | MB(x)) = sigmoid(ψ(x))` with `ψ(x) = ψ₀ + Σⱼ wⱼ nⱼ(x)`, where `nⱼ(x)` is
//! the number of groundings of clause j whose truth depends on x: the groundings of the
//! clause's other variables that make its body true (Sec. 3). The functional gradient
//! of the pseudo-log-likelihood at an example is `Δ = I(y = 1) − P(y = 1 | MB(y))`.
//! Each boosting step fits one relational regression tree to the Δ's; every
//! root-to-leaf path is a clause whose weight is the leaf value, fitted by count-weighted
//! least squares `w = Σ nᵢΔᵢ / Σ nᵢ²` ([`TreeParams::fit_mln`]). ψ₀ is BoostSRL's log
//! prior (−1.8), which its MLN inference also adds.
//!
//! Everything but the trees is [`SoftRfgbParams`]' boosting loop with α = β = 0
//! (negative sampling, step, `setParam:` lines), so the two learners are compared on
//! equal terms.

use serde::{Deserialize, Serialize};

use crate::BoostError;
use crate::boost::{NegativeSampling, SoftRfgb, SoftRfgbParams, StepLearner, sigmoid};
use crate::clauses::MlnClauseParams;
use crate::logic::{Background, Database, Examples};
use crate::settings::SettingsReport;
use crate::tree::{RelationalRegressionTree, TreeParams};

/// The MLN-Boost functional gradient of one example (Khot et al. 2011, Sec. 3):
/// `Δ = I(y = 1) − p` with `p = P(y = 1 | MB(y))`, in [−1, 1].
///
/// # Example
/// ```
/// assert_eq!(srl_boost::mln_gradient(true, 0.25), 0.75);
/// assert_eq!(srl_boost::mln_gradient(false, 0.25), -0.25);
/// ```
pub fn mln_gradient(positive: bool, p: f64) -> f64 {
    if positive { 1.0 - p } else { -p }
}

/// Hyperparameters of [`MlnBoost`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `n_trees` | 10 | boosting steps (BoostSRL `-trees`) | ≥ 1 |
/// | `tree` | [`TreeParams::boostsrl`] | tree induction (BoostSRL's `-mln` uses its RDN tree limits) | see there |
/// | `negative_sampling` | `PerTree(2.0)` | BoostSRL `-negPosRatio` 2, drawn afresh per tree | `All` or ratio > 0 |
/// | `step` | 1 | step length multiplying each tree | > 0 |
/// | `initial_log_odds` | −1.8 | ψ₀ (BoostSRL's log prior, added by its MLN inference too) | finite |
/// | `apply_background_settings` | true | apply the background's `setParam:` lines in [`fit`](Self::fit) | bool |
/// | `recursion` | false | recursive target, as [`SoftRfgbParams::recursion`] | bool |
/// | `clauses` | `None` | `Some`: each step learns weighted clauses instead of a tree (BoostSRL `-mlnClause`, [`crate::clauses`]) | see [`MlnClauseParams`] |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MlnBoostParams {
    /// Number of trees.
    pub n_trees: usize,
    /// Tree induction parameters.
    pub tree: TreeParams,
    /// Negative subsampling.
    pub negative_sampling: NegativeSampling,
    /// Step length.
    pub step: f64,
    /// ψ₀ in log-odds.
    pub initial_log_odds: f64,
    /// Whether [`fit`](Self::fit) applies the background's `setParam:` lines.
    pub apply_background_settings: bool,
    /// Recursive target (BoostSRL `setParam: recursion=true`), as
    /// [`SoftRfgbParams::recursion`]: the model's conditionals are sampled jointly at
    /// prediction.
    pub recursion: bool,
    /// MLN-Boost by clauses (BoostSRL `-mlnClause`; [`crate::clauses`]): `None` learns
    /// one tree per step (BoostSRL's `-mln` default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clauses: Option<MlnClauseParams>,
}

impl Default for MlnBoostParams {
    fn default() -> Self {
        Self::from_rfgb(&SoftRfgbParams::default())
    }
}

impl MlnBoostParams {
    /// The same settings as RFGB parameters (α = β = 0).
    pub fn as_rfgb(&self) -> SoftRfgbParams {
        SoftRfgbParams {
            n_trees: self.n_trees,
            alpha: 0.0,
            beta: 0.0,
            tree: self.tree.clone(),
            negative_sampling: self.negative_sampling,
            step: self.step,
            initial_log_odds: self.initial_log_odds,
            apply_background_settings: self.apply_background_settings,
            recursion: self.recursion,
        }
    }

    /// The MLN-Boost parameters of RFGB parameters (α and β dropped).
    pub fn from_rfgb(p: &SoftRfgbParams) -> Self {
        Self {
            n_trees: p.n_trees,
            tree: p.tree.clone(),
            negative_sampling: p.negative_sampling,
            step: p.step,
            initial_log_odds: p.initial_log_odds,
            apply_background_settings: p.apply_background_settings,
            recursion: p.recursion,
            clauses: None,
        }
    }

    /// Applies the `setParam:` lines of `bk` (as [`SoftRfgbParams::apply_settings`]).
    pub fn apply_settings(&mut self, bk: &Background) -> SettingsReport {
        let mut r = self.as_rfgb();
        let report = r.apply_settings(bk);
        *self = Self::from_rfgb(&r);
        report
    }

    /// Learns `n_trees` MLN-Boost trees by functional gradient ascent on the
    /// pseudo-log-likelihood: ψ = ψ₀ for every example; for each tree, take its
    /// training set ([`NegativeSampling::tree_sets`]), compute every example's
    /// [`mln_gradient`] at `p = sigmoid(ψ)`, fit a tree with
    /// [`TreeParams::fit_mln`] and add `step ×` its weighted counts to ψ.
    ///
    /// # Errors
    /// [`BoostError::InvalidParam`] for bad parameters; [`BoostError::NoExamples`] if
    /// there is no positive or no negative example.
    ///
    /// # Complexity
    /// As [`SoftRfgbParams::fit`], with [`TreeParams::fit_mln`]'s counting joins.
    ///
    /// With [`clauses`](Self::clauses) set, each step learns weighted clauses instead of
    /// a tree ([`crate::clauses`]); the model keeps how many per step
    /// ([`MlnBoost::clauses_per_step`]).
    ///
    /// # References
    /// Khot et al. (2011), ICDM, Sec. 3-4 (tree-based MLN-Boost; the clause-based
    /// representation with `clauses`).
    pub fn fit<R: rand::Rng + ?Sized>(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        rng: &mut R,
    ) -> Result<MlnBoost, BoostError> {
        let learner = match &self.clauses {
            Some(c) => {
                c.validate()?;
                StepLearner::MlnClauses(c)
            }
            None => StepLearner::MlnTree,
        };
        let (model, per_step) = self
            .as_rfgb()
            .fit_with(db, bk, examples, rng, learner, None)?;
        Ok(MlnBoost {
            model,
            clause_steps: if self.clauses.is_some() {
                per_step
            } else {
                Vec::new()
            },
        })
    }
}

/// A learned boosted MLN for one target predicate: ψ₀ plus, per tree, one weighted
/// clause per leaf. `P(target(x) | MB) = sigmoid(ψ₀ + step · Σ_trees w_leaf(x) · n_leaf(x))`.
///
/// Serialises with serde (clauses store predicate and constant names, so a model can be
/// applied to another [`Database`] of the same vocabulary). `Display` prints the MLN
/// (see [`clauses`](Self::clauses)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "MlnBoostRepr")]
pub struct MlnBoost {
    model: SoftRfgb,
    /// For a model learned by clauses: the number of clauses (one-split trees) of each
    /// boosting step, in order; empty for tree-based MLN-Boost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    clause_steps: Vec<usize>,
}

/// The serialised form of [`MlnBoost`], checked by `TryFrom` into it.
#[derive(Deserialize)]
struct MlnBoostRepr {
    model: SoftRfgb,
    #[serde(default)]
    clause_steps: Vec<usize>,
}

impl TryFrom<MlnBoostRepr> for MlnBoost {
    type Error = String;

    fn try_from(r: MlnBoostRepr) -> Result<Self, String> {
        if let Some(i) = r.model.trees().iter().position(|t| !t.per_grounding()) {
            return Err(format!(
                "tree {i} is not an MLN-Boost tree (per_grounding is false)"
            ));
        }
        let total = r
            .clause_steps
            .iter()
            .try_fold(0usize, |a, &b| a.checked_add(b));
        if !r.clause_steps.is_empty() && total != Some(r.model.trees().len()) {
            return Err(format!(
                "clause_steps add up to {} clauses, the model has {} trees",
                total.map_or_else(|| "more than usize::MAX".to_owned(), |t| t.to_string()),
                r.model.trees().len()
            ));
        }
        Ok(Self {
            model: r.model,
            clause_steps: r.clause_steps,
        })
    }
}

impl MlnBoost {
    /// For a model learned by clauses (BoostSRL `-mlnClause`; [`crate::clauses`]): how
    /// many clauses each boosting step learned (the trees are the clauses in step
    /// order); empty for tree-based MLN-Boost.
    pub fn clauses_per_step(&self) -> &[usize] {
        &self.clause_steps
    }

    /// True for a model learned by clauses.
    pub fn is_clause_based(&self) -> bool {
        !self.clause_steps.is_empty()
    }

    /// The trees (each with [`RelationalRegressionTree::per_grounding`] set).
    pub fn trees(&self) -> &[RelationalRegressionTree] {
        self.model.trees()
    }

    /// Target predicate.
    pub fn target(&self) -> &str {
        self.model.target()
    }

    /// ψ₀.
    pub fn initial_log_odds(&self) -> f64 {
        self.model.initial_log_odds()
    }

    /// Step length.
    pub fn step(&self) -> f64 {
        self.model.step()
    }

    /// Largest training set of one tree.
    pub fn n_train(&self) -> usize {
        self.model.n_train()
    }

    /// The background's `setParam:` lines, applied or ignored.
    pub fn settings(&self) -> &SettingsReport {
        self.model.settings()
    }

    /// Training examples of each tree (empty for a loaded model).
    pub fn tree_sets(&self) -> &[Vec<usize>] {
        self.model.tree_sets()
    }

    /// Mean training log-likelihood before the first tree and after each tree.
    pub fn train_log_likelihood(&self) -> &[f64] {
        self.model.train_log_likelihood()
    }

    /// ψ(x) = ψ₀ + step · Σ_trees w_leaf(x) · n_leaf(x): the log-odds of each example
    /// given the rest of the world in `db`.
    ///
    /// # Errors
    /// [`BoostError::TargetMismatch`] for examples of another predicate.
    pub fn decision_function(
        &self,
        db: &Database,
        examples: &Examples,
    ) -> Result<Vec<f64>, BoostError> {
        self.model.decision_function(db, examples)
    }

    /// `P(y = 1 | MB(y)) = sigmoid(ψ)` for each example.
    ///
    /// # Errors
    /// As [`decision_function`](Self::decision_function).
    pub fn predict_proba(
        &self,
        db: &Database,
        examples: &Examples,
    ) -> Result<Vec<f64>, BoostError> {
        self.model.predict_proba(db, examples)
    }

    /// [`decision_function`](Self::decision_function) with the Gibbs sampler's settings
    /// of a recursive model ([`SoftRfgb::decision_function_with`]).
    ///
    /// # Errors
    /// As [`SoftRfgb::decision_function_with`].
    pub fn decision_function_with(
        &self,
        db: &Database,
        examples: &Examples,
        inference: &crate::GibbsInference,
    ) -> Result<Vec<f64>, BoostError> {
        self.model.decision_function_with(db, examples, inference)
    }

    /// [`predict_proba`](Self::predict_proba) with the Gibbs sampler's settings for a
    /// recursive model ([`SoftRfgb::predict_proba_with`]: the same sampler over the
    /// model's conditionals `sigmoid(ψ)`).
    ///
    /// # Errors
    /// As [`SoftRfgb::predict_proba_with`].
    pub fn predict_proba_with(
        &self,
        db: &Database,
        examples: &Examples,
        inference: &crate::GibbsInference,
    ) -> Result<Vec<f64>, BoostError> {
        self.model.predict_proba_with(db, examples, inference)
    }

    /// True when some tree tests the recursive predicate (`recursive_T`): prediction
    /// then samples the examples' atoms jointly.
    pub fn is_recursive(&self) -> bool {
        self.model.is_recursive()
    }

    /// The recursive predicate of a model learned with `setParam: recursion=true`.
    pub fn recursion(&self) -> Option<&str> {
        self.model.recursion()
    }

    /// Labels at `threshold` (`p ≥ threshold` is positive).
    ///
    /// # Errors
    /// As [`decision_function`](Self::decision_function).
    pub fn predict(
        &self,
        db: &Database,
        examples: &Examples,
        threshold: f64,
    ) -> Result<Vec<bool>, BoostError> {
        self.model.predict(db, examples, threshold)
    }

    /// The functional gradient `I(y = 1) − P(y = 1 | MB(y))` of each (labelled)
    /// example under this model: what the next tree would be fitted to.
    ///
    /// # Errors
    /// As [`decision_function`](Self::decision_function).
    pub fn gradients(&self, db: &Database, examples: &Examples) -> Result<Vec<f64>, BoostError> {
        Ok(self
            .decision_function(db, examples)?
            .into_iter()
            .zip(examples.labels())
            .map(|(psi, &y)| mln_gradient(y, sigmoid(psi)))
            .collect())
    }

    /// The MLN as `(weight, formula)` in Alchemy's syntax: first the unit clause
    /// `target(a, ..)` with weight ψ₀, then every tree's leaves
    /// ([`RelationalRegressionTree::mln_formulas`]) with weight `step × leaf value`.
    pub fn clauses(&self) -> Vec<(f64, String)> {
        let head_vars: Vec<String> = (0..self.model.arity() as u16)
            .map(|v| crate::tree::var_name(v).to_lowercase())
            .collect();
        let mut out = vec![(
            self.initial_log_odds(),
            format!("{}({})", self.target(), head_vars.join(", ")),
        )];
        let clause_based = self.is_clause_based();
        for t in self.trees() {
            out.extend(
                t.mln_formulas()
                    .into_iter()
                    // a clause's false branch carries no formula (weight 0)
                    .filter(|(w, _)| !(clause_based && *w == 0.0))
                    .map(|(w, f)| (self.step() * w, f)),
            );
        }
        out
    }
}

impl std::fmt::Display for MlnBoost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_clause_based() {
            writeln!(
                f,
                "// MLN-Boost model for {}/{} ({} clauses in {} steps, step {}, initial log-odds {}; Khot et al. 2011, clause-based)",
                self.target(),
                self.model.arity(),
                self.trees().len(),
                self.clause_steps.len(),
                self.step(),
                self.initial_log_odds()
            )?;
        } else {
            writeln!(
                f,
                "// MLN-Boost model for {}/{} ({} trees, step {}, initial log-odds {}; Khot et al. 2011, tree-based)",
                self.target(),
                self.model.arity(),
                self.trees().len(),
                self.step(),
                self.initial_log_odds()
            )?;
        }
        writeln!(
            f,
            "// P(target | rest of the world) = sigmoid(sum over clauses of weight x true groundings)"
        )?;
        let head_vars: Vec<String> = (0..self.model.arity() as u16)
            .map(|v| crate::tree::var_name(v).to_lowercase())
            .collect();
        writeln!(
            f,
            "{:.6}  {}({})",
            self.initial_log_odds(),
            self.target(),
            head_vars.join(", ")
        )?;
        if self.is_clause_based() {
            let mut trees = self.trees().iter();
            for (m, &k) in self.clause_steps.iter().enumerate() {
                writeln!(f, "// step {} ({k} clauses)", m + 1)?;
                for t in trees.by_ref().take(k) {
                    for (w, c) in t.mln_formulas() {
                        if w != 0.0 {
                            writeln!(f, "{:.6}  {c}", self.step() * w)?;
                        }
                    }
                }
            }
            return Ok(());
        }
        for (i, t) in self.trees().iter().enumerate() {
            writeln!(f, "// tree {}", i + 1)?;
            for (w, c) in t.mln_formulas() {
                writeln!(f, "{:.6}  {c}", self.step() * w)?;
            }
        }
        Ok(())
    }
}
