//! Relational functional gradient boosting (RFGB, Natarajan et al. 2012) and its
//! soft-margin variant Soft-RFGB (Yang et al. 2014): one type, with cost parameters
//! α (false negatives) and β (false positives); α = β = 0 is RFGB exactly.

use serde::{Deserialize, Serialize};

use crate::BoostError;
use crate::advice::{Advice, AdviceUse, advice_gradient};
use crate::logic::{Background, Database, Examples};
use crate::settings::SettingsReport;
use crate::tree::{RelationalRegressionTree, TreeParams};

/// The logistic function `1 / (1 + e^{-x})`, computed without overflow.
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// The Soft-RFGB functional gradient of one example (Yang et al. 2014, Eq. 3 and
/// Fig. 1a): `Δ = I(y = 1) − λ·p` with
/// `λ = 1 / (p + (1 − p)·e^α)` for a positive and `λ = 1 / (p + (1 − p)·e^{−β})` for
/// a negative example.
///
/// When the example's cost term is zero (α = 0 for a positive, β = 0 for a negative)
/// λ = 1 mathematically and the function returns the RFGB gradient `I(y = 1) − p`
/// (Eq. 2) *exactly*, so α = β = 0 reproduces plain RFGB bit for bit (computing
/// `1/(p + (1 − p))` in floating point would not always give exactly 1).
///
/// # Arguments
/// * `positive` — the example's label.
/// * `p` — the current probability `P(y = 1 | x) = sigmoid(ψ)`, in [0, 1].
///
/// # Returns
/// The gradient, in [−1, 1].
///
/// # Example
/// ```
/// use srl_boost::soft_gradient;
/// assert_eq!(soft_gradient(true, 0.3, 0.0, 0.0), 1.0 - 0.3);
/// // α > 0 pushes positives harder: Δ is closer to 1.
/// assert!(soft_gradient(true, 0.3, 2.0, 0.0) > 0.7);
/// // β < 0 forgives negatives: Δ is closer to 0.
/// assert!(soft_gradient(false, 0.6, 0.0, -4.0) > -0.6);
/// ```
pub fn soft_gradient(positive: bool, p: f64, alpha: f64, beta: f64) -> f64 {
    if positive {
        if alpha == 0.0 {
            1.0 - p
        } else {
            1.0 - p / (p + (1.0 - p) * alpha.exp())
        }
    } else if beta == 0.0 {
        -p
    } else {
        -p / (p + (1.0 - p) * (-beta).exp())
    }
}

/// Negative-example subsampling (BoostSRL's `-negPosRatio`).
///
/// A ratio `r` keeps every positive and `round(r × #pos)` negatives drawn uniformly
/// without replacement from the caller's RNG (every negative when there are fewer).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum NegativeSampling {
    /// Use every negative for every tree.
    All,
    /// Draw the negatives once, before the first tree, and use them for every tree.
    Once(f64),
    /// Draw a fresh set of negatives for every tree (BoostSRL's behaviour; its
    /// default ratio is 2). Each tree's gradients are computed on its own sample, with
    /// the model learned so far.
    PerTree(f64),
}

impl NegativeSampling {
    fn ratio(self) -> Option<f64> {
        match self {
            NegativeSampling::All => None,
            NegativeSampling::Once(r) | NegativeSampling::PerTree(r) => Some(r),
        }
    }

    /// The training examples (indices into `examples`) of each of `n_trees` trees:
    /// every positive, in order, then the kept negatives in increasing index order.
    /// [`SoftRfgbParams::fit`] draws its samples with exactly this function, so the
    /// same `rng` state gives the same sets.
    ///
    /// Draws from `rng` once (`Once`), once per tree (`PerTree`), or never (`All`, or
    /// when the ratio asks for at least as many negatives as exist).
    pub fn tree_sets<R: rand::Rng + ?Sized>(
        self,
        examples: &Examples,
        n_trees: usize,
        rng: &mut R,
    ) -> Vec<Vec<usize>> {
        let labels = examples.labels();
        let pos: Vec<usize> = (0..labels.len()).filter(|&i| labels[i]).collect();
        let neg: Vec<usize> = (0..labels.len()).filter(|&i| !labels[i]).collect();
        let draw = |r: f64, rng: &mut R| -> Vec<usize> {
            let want = ((pos.len() as f64) * r).round().max(0.0) as usize;
            let mut idx = pos.clone();
            if want >= neg.len() {
                idx.extend_from_slice(&neg);
            } else {
                let mut chosen = rand::seq::index::sample(rng, neg.len(), want).into_vec();
                chosen.sort_unstable();
                idx.extend(chosen.into_iter().map(|k| neg[k]));
            }
            idx
        };
        match self {
            NegativeSampling::All => vec![(0..labels.len()).collect(); n_trees],
            NegativeSampling::Once(r) => vec![draw(r, rng); n_trees],
            NegativeSampling::PerTree(r) => (0..n_trees).map(|_| draw(r, rng)).collect(),
        }
    }
}

/// BoostSRL's initial value of the functional gradient, ψ₀ = logPrior = −1.8
/// (probability sigmoid(−1.8) ≈ 0.1419).
pub const BOOSTSRL_LOG_PRIOR: f64 = -1.8;

/// Hyperparameters of [`SoftRfgb`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `n_trees` | 10 | M, boosting iterations (BoostSRL `-trees`, as in the paper's runs) | ≥ 1 |
/// | `alpha` | 0 | α, cost of a false negative (Yang et al. Sec. III) | finite |
/// | `beta` | 0 | β, cost of a false positive | finite |
/// | `tree` | [`TreeParams::boostsrl`] | tree induction | see there |
/// | `negative_sampling` | `PerTree(2.0)` | BoostSRL `-negPosRatio` 2, drawn afresh for every tree | `All` or ratio > 0 |
/// | `step` | 1 | step length multiplying each tree (BoostSRL `-step`) | > 0 |
/// | `initial_log_odds` | −1.8 | ψ₀, the model's starting value (BoostSRL `logPrior`) | finite |
/// | `apply_background_settings` | true | apply the background file's `setParam:` lines in [`fit`](Self::fit) | bool |
/// | `recursion` | false | recursive target (BoostSRL `setParam: recursion=true`): clauses may test the target's other atoms through `recursive_T`, prediction samples them jointly ([`crate::recursion`]) | bool |
///
/// α = β = 0 is RFGB ("Hard Margin" in the paper); `n_trees = 1` is the paper's
/// "No Boosting" single tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SoftRfgbParams {
    /// Number of trees M.
    pub n_trees: usize,
    /// α (false-negative cost).
    pub alpha: f64,
    /// β (false-positive cost).
    pub beta: f64,
    /// Tree induction parameters.
    pub tree: TreeParams,
    /// Negative subsampling.
    pub negative_sampling: NegativeSampling,
    /// Step length.
    pub step: f64,
    /// ψ₀: every example's value before the first tree, in log-odds.
    pub initial_log_odds: f64,
    /// Whether [`fit`](Self::fit) applies the background's `setParam:` settings
    /// (see [`apply_settings`](crate::settings::apply_settings)) on top of these
    /// parameters.
    pub apply_background_settings: bool,
    /// Recursive target (BoostSRL `setParam: recursion=true`; [`crate::recursion`]):
    /// the examples' atoms are the query relation `recursive_T` that node tests may
    /// read (never an example's own atom), and the model predicts by Gibbs sampling.
    pub recursion: bool,
}

/// RFGB is Soft-RFGB with α = β = 0.
pub type RfgbParams = SoftRfgbParams;
/// A fitted RFGB model is a fitted Soft-RFGB model with α = β = 0.
pub type Rfgb = SoftRfgb;

impl Default for SoftRfgbParams {
    fn default() -> Self {
        Self {
            n_trees: 10,
            alpha: 0.0,
            beta: 0.0,
            tree: TreeParams::boostsrl(),
            negative_sampling: NegativeSampling::PerTree(2.0),
            step: 1.0,
            initial_log_odds: BOOSTSRL_LOG_PRIOR,
            apply_background_settings: true,
            recursion: false,
        }
    }
}

impl SoftRfgbParams {
    /// Plain RFGB (α = β = 0) with the other defaults.
    pub fn rfgb() -> Self {
        Self::default()
    }

    /// Soft-RFGB with the given α, β and the other defaults.
    pub fn soft(alpha: f64, beta: f64) -> Self {
        Self {
            alpha,
            beta,
            ..Self::default()
        }
    }

    /// Applies the `setParam:` settings of `bk` to these parameters and reports which
    /// were applied and which ignored (see [`crate::settings::apply_settings`]).
    pub fn apply_settings(&mut self, bk: &Background) -> SettingsReport {
        crate::settings::apply_settings(self, bk)
    }

    fn validate(&self) -> Result<(), BoostError> {
        let bad = |name, message: &str| {
            Err(BoostError::InvalidParam {
                name,
                message: message.to_owned(),
            })
        };
        if self.n_trees == 0 {
            return bad("n_trees", "must be at least 1");
        }
        if !self.alpha.is_finite() {
            return bad("alpha", "must be finite");
        }
        if !self.beta.is_finite() {
            return bad("beta", "must be finite");
        }
        if !(self.step.is_finite() && self.step > 0.0) {
            return bad("step", "must be positive");
        }
        if !self.initial_log_odds.is_finite() {
            return bad("initial_log_odds", "must be finite");
        }
        if let Some(r) = self.negative_sampling.ratio()
            && !(r.is_finite() && r > 0.0)
        {
            return bad("negative_sampling", "ratio must be positive");
        }
        Ok(())
    }

    /// Learns M regression trees by functional gradient ascent on the (soft-margin)
    /// pseudo-log-likelihood: ψ = ψ₀ (`initial_log_odds`) for every example; for
    /// m = 1..M, take tree m's training set (all examples, the once-drawn sample, or a
    /// fresh sample: [`NegativeSampling::tree_sets`]), compute each of its examples'
    /// gradient with [`soft_gradient`] at `p = sigmoid(ψ_{m−1})` (GENSOFTMEGS,
    /// Fig. 1a), fit a [`RelationalRegressionTree`] to them, and add it (times `step`)
    /// to ψ. With per-tree sampling, a negative drawn for tree m that was left out of
    /// earlier samples first gets the earlier trees' values (ψ is always the full
    /// model's value).
    ///
    /// When `apply_background_settings` is on, the `setParam:` lines of `bk` are
    /// applied first; the model keeps the [`SettingsReport`]
    /// ([`SoftRfgb::settings`]).
    ///
    /// # Arguments
    /// * `db`, `bk` — facts and modes (see [`TreeParams::fit`]).
    /// * `examples` — labelled target atoms over `db`'s constants.
    /// * `rng` — only used for negative subsampling.
    ///
    /// # Errors
    /// [`BoostError::InvalidParam`] for bad parameters; [`BoostError::NoExamples`] if
    /// there is no positive or no negative example.
    ///
    /// # Complexity
    /// M tree inductions over the (sampled) examples, plus, with per-tree sampling,
    /// at most M·(M−1)/2 evaluations of earlier trees on newly drawn negatives.
    ///
    /// # References
    /// Yang, Kersting, Natarajan et al. (2014), "Learning from imbalanced data in
    /// relational domains: a soft margin approach", ICDM, Sec. III, Eq. 3, Fig. 1a;
    /// Natarajan et al. (2012), Machine Learning 86(1).
    pub fn fit<R: rand::Rng + ?Sized>(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        rng: &mut R,
    ) -> Result<SoftRfgb, BoostError> {
        self.fit_with(db, bk, examples, rng, StepLearner::Tree, None)
            .map(|(m, _)| m)
    }

    /// [`fit`](Self::fit) with expert advice (knowledge-based RFGB, Odom et al. 2015;
    /// BoostSRL `-adviceFile FILE -adviceWt W`): each example's gradient is
    /// [`advice_gradient`]`(data gradient, n_t − n_f, weight)`, the data gradient being
    /// [`soft_gradient`] (so with α = β = 0 it is `w·(n_t − n_f) + (1 − w)·(I − p)`), and
    /// `n_t − n_f` the example's [`Advice::counts`]. The model records the advice used
    /// ([`SoftRfgb::advice`]).
    ///
    /// # Arguments
    /// * `db`, `bk`, `examples`, `rng` — as [`fit`](Self::fit).
    /// * `advice` — the advice file read by [`Advice::read`]; pieces naming other
    ///   targets are left out.
    /// * `weight` — `w` in [0, 1] (BoostSRL's default
    ///   [`BOOSTSRL_ADVICE_WEIGHT`](crate::BOOSTSRL_ADVICE_WEIGHT) = 0.5).
    ///
    /// # Errors
    /// As [`fit`](Self::fit); [`BoostError::InvalidParam`] (`advice_weight`) for a
    /// weight outside [0, 1] ([`advice_weight`](crate::advice_weight)); the errors of [`Advice::counts`].
    ///
    /// # References
    /// Odom, Khot, Porter & Natarajan (2015), "Knowledge-based probabilistic logic
    /// learning", AAAI; BoostSRL `LearnBoostedRDN.buildDataSet`.
    pub fn fit_with_advice<R: rand::Rng + ?Sized>(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        advice: &Advice,
        weight: f64,
        rng: &mut R,
    ) -> Result<SoftRfgb, BoostError> {
        let weight = crate::fit::advice_weight(Some(weight))?;
        let counts = advice.counts(db, bk, examples)?;
        let record = AdviceUse {
            file: advice.file.display().to_string(),
            weight,
            pieces: advice.pieces_for(&examples.pred),
            preferred_examples: counts.iter().filter(|&&c| c > 0.0).count(),
            avoided_examples: counts.iter().filter(|&&c| c < 0.0).count(),
        };
        let (mut model, _) = self.fit_with(
            db,
            bk,
            examples,
            rng,
            StepLearner::Tree,
            Some((&counts, weight)),
        )?;
        model.advice = Some(record);
        Ok(model)
    }

    /// [`fit`](Self::fit) with what each boosting step learns ([`StepLearner`]): RFGB's
    /// tree, MLN-Boost's tree ([`TreeParams::fit_mln`]) or MLN-Boost's clauses
    /// ([`crate::clauses`]); everything else is shared. `advice`: each example's
    /// `n_t − n_f` and the weight `w` ([`advice_gradient`]); `None` leaves the gradients
    /// untouched (bit for bit). Returns the model (its trees flattened in step order)
    /// and the number of trees of each step.
    pub(crate) fn fit_with<R: rand::Rng + ?Sized>(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        rng: &mut R,
        learner: StepLearner<'_>,
        advice: Option<(&[f64], f64)>,
    ) -> Result<(SoftRfgb, Vec<usize>), BoostError> {
        let mut params = self.clone();
        let settings = if self.apply_background_settings {
            params.apply_settings(bk)
        } else {
            SettingsReport::default()
        };
        params.validate()?;
        if bk.modes.is_empty() {
            return Err(BoostError::NoModes);
        }
        if examples.n_pos() == 0 || examples.n_neg() == 0 {
            return Err(BoostError::NoExamples {
                reason: format!(
                    "{} positives and {} negatives of {}",
                    examples.n_pos(),
                    examples.n_neg(),
                    examples.pred
                ),
            });
        }
        // A recursive target: its examples' atoms become the query relation
        // `recursive_T`, true for the positives (crate::recursion).
        let recursive = params
            .recursion
            .then(|| crate::recursion::recursive_predicate(bk, &examples.pred));
        let augmented;
        let db = match &recursive {
            Some(name) => {
                augmented =
                    crate::recursion::with_recursive_atoms(db, name, examples, examples.labels())?
                        .0;
                &augmented
            }
            None => db,
        };
        let sets = params
            .negative_sampling
            .tree_sets(examples, params.n_trees, rng);
        let labels = examples.labels();
        let n = examples.len();
        let mut psi = vec![params.initial_log_odds; n];
        // Number of boosting steps already added into psi[i].
        let mut applied = vec![0usize; n];
        // The trees of each step (one, or one per clause).
        let mut steps: Vec<Vec<RelationalRegressionTree>> = Vec::with_capacity(params.n_trees);
        let mut history = Vec::with_capacity(params.n_trees + 1);
        let mut n_train = 0;
        for (m, idx) in sets.iter().enumerate() {
            // Bring examples that sat out earlier steps up to date, step by step.
            for (t, step_trees) in steps.iter().enumerate() {
                let stale: Vec<usize> = idx.iter().copied().filter(|&i| applied[i] <= t).collect();
                if stale.is_empty() {
                    continue;
                }
                let sub = examples.subset(&stale);
                for tree in step_trees {
                    let values = tree.predict(db, &sub)?;
                    for (&i, v) in stale.iter().zip(values) {
                        psi[i] += params.step * v;
                    }
                }
            }
            let train = examples.subset(idx);
            let tl: Vec<bool> = idx.iter().map(|&i| labels[i]).collect();
            let tpsi: Vec<f64> = idx.iter().map(|&i| psi[i]).collect();
            if m == 0 {
                history.push(log_likelihood(&tl, &tpsi));
            }
            let mut grad: Vec<f64> = tl
                .iter()
                .zip(&tpsi)
                .map(|(&l, &s)| soft_gradient(l, sigmoid(s), params.alpha, params.beta))
                .collect();
            if let Some((counts, w)) = advice {
                for (g, &i) in grad.iter_mut().zip(idx) {
                    *g = advice_gradient(*g, counts[i], w);
                }
            }
            // BoostSRL's seed sampling: each tree's node seeds come from the fit's
            // generator (nothing is drawn when it is off)
            let mut tree_params = params.tree.clone();
            if let Some(s) = tree_params.seed_sampling.as_mut() {
                s.seed = rng.next_u64();
            }
            let (step_trees, values) = match learner {
                StepLearner::Tree | StepLearner::MlnTree => {
                    let per_grounding = matches!(learner, StepLearner::MlnTree);
                    let (tree, values) = tree_params.fit_assign_counted(
                        db,
                        bk,
                        &train,
                        &grad,
                        None,
                        per_grounding,
                    )?;
                    (vec![tree], values)
                }
                StepLearner::MlnClauses(c) => {
                    let (n_clauses, max_len) = c.schedule.at_step(m);
                    tree_params.fit_clauses(
                        db,
                        bk,
                        &train,
                        &grad,
                        n_clauses,
                        max_len,
                        c.beam_width,
                    )?
                }
            };
            for (&i, v) in idx.iter().zip(values) {
                psi[i] += params.step * v;
                applied[i] = m + 1;
            }
            let after: Vec<f64> = idx.iter().map(|&i| psi[i]).collect();
            history.push(log_likelihood(&tl, &after));
            n_train = n_train.max(idx.len());
            steps.push(step_trees);
        }
        let per_step: Vec<usize> = steps.iter().map(Vec::len).collect();
        let trees: Vec<RelationalRegressionTree> = steps.into_iter().flatten().collect();
        Ok((
            SoftRfgb {
                target: examples.pred.clone(),
                arity: examples.arity,
                alpha: params.alpha,
                beta: params.beta,
                step: params.step,
                initial_log_odds: params.initial_log_odds,
                trees,
                n_train,
                train_log_likelihood: history,
                settings,
                tree_sets: sets,
                advice: None,
                recursion: recursive,
            },
            per_step,
        ))
    }
}

/// What one boosting step of [`SoftRfgbParams::fit_with`] learns.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StepLearner<'a> {
    /// RFGB's relational regression tree.
    Tree,
    /// MLN-Boost's tree, leaves weighted per true grounding ([`TreeParams::fit_mln`]).
    MlnTree,
    /// MLN-Boost's clauses (BoostSRL `-mlnClause`; [`crate::clauses`]).
    MlnClauses(&'a crate::clauses::MlnClauseParams),
}

/// `psi0 + step · Σ tree(x)` over `trees` for each example, with the database as it is
/// (no sampling of recursive atoms): a boosted model's log-odds.
///
/// # Errors
/// [`BoostError::TargetMismatch`] for examples of another predicate than the trees'.
pub(crate) fn log_odds<'a>(
    trees: impl IntoIterator<Item = &'a RelationalRegressionTree>,
    psi0: f64,
    step: f64,
    db: &Database,
    examples: &Examples,
) -> Result<Vec<f64>, BoostError> {
    let mut psi = vec![psi0; examples.len()];
    for t in trees {
        for (s, v) in psi.iter_mut().zip(t.predict(db, examples)?) {
            *s += step * v;
        }
    }
    Ok(psi)
}

/// Mean log-likelihood `(1/n) Σ log P(yᵢ | ψᵢ)`.
fn log_likelihood(labels: &[bool], psi: &[f64]) -> f64 {
    let n = labels.len().max(1) as f64;
    labels
        .iter()
        .zip(psi)
        .map(|(&l, &s)| {
            let z = if l { s } else { -s };
            // log sigmoid(z), stable
            if z >= 0.0 {
                -(-z).exp().ln_1p()
            } else {
                z - z.exp().ln_1p()
            }
        })
        .sum::<f64>()
        / n
}

/// The model-file checks shared by the boosted models: a step finite and `> 0`, every tree
/// over the model's target (ignoring ASCII case) and arity.
///
/// # Errors
/// A message naming the step or the tree at fault.
pub(crate) fn check_step_and_trees(
    step: f64,
    trees: &[RelationalRegressionTree],
    target: &str,
    arity: usize,
) -> Result<(), String> {
    if !(step.is_finite() && step > 0.0) {
        return Err(format!("step = {step} must be a positive number"));
    }
    for (i, t) in trees.iter().enumerate() {
        if !t.target().eq_ignore_ascii_case(target) || t.arity() != arity {
            return Err(format!(
                "tree {i} is over {}/{}, the model over {target}/{arity}",
                t.target(),
                t.arity(),
            ));
        }
    }
    Ok(())
}

/// A fitted (Soft-)RFGB model: `P(target | x) = sigmoid(ψ₀ + step · Σ_m tree_m(x))`.
///
/// Serialises with serde (trees store predicate and constant names, so a model can be
/// applied to another [`Database`] with the same vocabulary). ψ₀ is saved with the
/// model; a model saved before ψ₀ existed loads with ψ₀ = 0, the value it was trained
/// with. The per-tree training sets ([`tree_sets`](Self::tree_sets)) are not saved
/// and do not take part in `==`.
///
/// Deserialising checks the whole model ([`SoftRfgb::validate`], and each tree's
/// [`RelationalRegressionTree::validate`]), so an edited model file is refused when read.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "SoftRfgbRepr")]
pub struct SoftRfgb {
    target: String,
    arity: usize,
    alpha: f64,
    beta: f64,
    step: f64,
    #[serde(default)]
    initial_log_odds: f64,
    trees: Vec<RelationalRegressionTree>,
    n_train: usize,
    train_log_likelihood: Vec<f64>,
    #[serde(default)]
    settings: SettingsReport,
    #[serde(skip)]
    tree_sets: Vec<Vec<usize>>,
    /// The advice the model was learned with; absent (and not written) without advice,
    /// so model files of older versions load unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    advice: Option<AdviceUse>,
    /// The recursive predicate (`recursive_T`) of a model learned with
    /// `recursion` on; absent (and not written) otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    recursion: Option<String>,
}

impl PartialEq for SoftRfgb {
    fn eq(&self, o: &Self) -> bool {
        self.target == o.target
            && self.arity == o.arity
            && self.alpha.to_bits() == o.alpha.to_bits()
            && self.beta.to_bits() == o.beta.to_bits()
            && self.step.to_bits() == o.step.to_bits()
            && self.initial_log_odds.to_bits() == o.initial_log_odds.to_bits()
            && self.trees == o.trees
            && self.n_train == o.n_train
            && self.train_log_likelihood == o.train_log_likelihood
            && self.settings == o.settings
            && self.advice == o.advice
            && self.recursion == o.recursion
    }
}

/// The serialised form of [`SoftRfgb`], checked by `TryFrom` into it.
#[derive(Deserialize)]
struct SoftRfgbRepr {
    target: String,
    arity: usize,
    alpha: f64,
    beta: f64,
    step: f64,
    #[serde(default)]
    initial_log_odds: f64,
    trees: Vec<RelationalRegressionTree>,
    n_train: usize,
    train_log_likelihood: Vec<f64>,
    #[serde(default)]
    settings: SettingsReport,
    #[serde(default)]
    advice: Option<AdviceUse>,
    #[serde(default)]
    recursion: Option<String>,
}

impl TryFrom<SoftRfgbRepr> for SoftRfgb {
    type Error = String;

    fn try_from(r: SoftRfgbRepr) -> Result<Self, String> {
        let m = Self {
            target: r.target,
            arity: r.arity,
            alpha: r.alpha,
            beta: r.beta,
            step: r.step,
            initial_log_odds: r.initial_log_odds,
            trees: r.trees,
            n_train: r.n_train,
            train_log_likelihood: r.train_log_likelihood,
            settings: r.settings,
            tree_sets: Vec::new(),
            advice: r.advice,
            recursion: r.recursion,
        };
        m.validate()?;
        Ok(m)
    }
}

impl SoftRfgb {
    /// Checks the model as a model file read from disk needs (the trees are checked as
    /// they are read): a target name; α, β and ψ₀ finite; a step finite and `> 0`; every
    /// tree over the model's target and arity.
    ///
    /// # Errors
    /// A message naming the field or the tree at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.target.is_empty() {
            return Err("empty target name".into());
        }
        for (name, v) in [
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("initial_log_odds", self.initial_log_odds),
        ] {
            if !v.is_finite() {
                return Err(format!("{name} = {v} is not finite"));
            }
        }
        if let Some(a) = &self.advice {
            a.validate()?;
        }
        check_step_and_trees(self.step, &self.trees, &self.target, self.arity)?;
        // A tree testing recursive_T needs the model to say it is recursive, or
        // prediction would read no recursive atom at all.
        let name = format!("{}{}", crate::recursion::RECURSIVE_PREFIX, self.target);
        match &self.recursion {
            Some(r) if !r.eq_ignore_ascii_case(&name) => Err(format!(
                "recursion = {r}: the recursive predicate of target {} is {name}",
                self.target
            )),
            None if self
                .trees
                .iter()
                .any(|t| crate::recursion::tree_tests(t, &name)) =>
            {
                Err(format!(
                    "a tree tests {name} but the model has no `recursion` field: recursive models are predicted by Gibbs sampling"
                ))
            }
            _ => Ok(()),
        }
    }

    /// The recursive predicate (`recursive_T`) of a model learned with
    /// `setParam: recursion=true` ([`crate::recursion`]), `None` otherwise.
    pub fn recursion(&self) -> Option<&str> {
        self.recursion.as_deref()
    }

    /// True when some tree tests the recursive predicate: prediction then samples the
    /// examples' atoms jointly ([`predict_proba_with`](Self::predict_proba_with)).
    pub fn is_recursive(&self) -> bool {
        self.recursion.as_deref().is_some_and(|r| {
            self.trees
                .iter()
                .any(|t| crate::recursion::tree_tests(t, r))
        })
    }

    /// The advice the model was learned with ([`SoftRfgbParams::fit_with_advice`]),
    /// `None` for a model learned from the data alone.
    pub fn advice(&self) -> Option<&AdviceUse> {
        self.advice.as_ref()
    }

    /// The trees, in learning order.
    pub fn trees(&self) -> &[RelationalRegressionTree] {
        &self.trees
    }

    /// Target predicate.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// α used in training.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// β used in training.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// Step length multiplying every tree.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// Arity of the target predicate.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// ψ₀, the log-odds every prediction starts from.
    pub fn initial_log_odds(&self) -> f64 {
        self.initial_log_odds
    }

    /// Largest number of training examples one tree was fitted to (after
    /// subsampling).
    pub fn n_train(&self) -> usize {
        self.n_train
    }

    /// The `setParam:` settings of the background file, applied or ignored.
    pub fn settings(&self) -> &SettingsReport {
        &self.settings
    }

    /// The training examples (indices into the examples given to
    /// [`SoftRfgbParams::fit`]) of each tree, in tree order; empty for a model loaded
    /// from disk.
    pub fn tree_sets(&self) -> &[Vec<usize>] {
        &self.tree_sets
    }

    /// Mean training log-likelihood before the first tree and after each tree
    /// (`n_trees + 1` values), the convergence record. Each value after tree m is over
    /// tree m's training set (with per-tree sampling, a different set per tree).
    pub fn train_log_likelihood(&self) -> &[f64] {
        &self.train_log_likelihood
    }

    /// ψ(x) = ψ₀ + step · Σ_m tree_m(x) for each example; for a recursive model
    /// ([`is_recursive`](Self::is_recursive)) the log-odds of the Gibbs marginals of
    /// [`predict_proba`](Self::predict_proba).
    ///
    /// # Errors
    /// [`BoostError::TargetMismatch`] for examples of another predicate.
    pub fn decision_function(
        &self,
        db: &Database,
        examples: &Examples,
    ) -> Result<Vec<f64>, BoostError> {
        self.decision_function_with(db, examples, &crate::GibbsInference::default())
    }

    /// [`decision_function`](Self::decision_function) with the Gibbs sampler's settings of
    /// a recursive model (the log-odds `ln(p / (1 − p))` of
    /// [`predict_proba_with`](Self::predict_proba_with)'s marginals, ±∞ for a marginal
    /// of 1 or 0); a model that is not recursive ignores `inference`.
    ///
    /// # Errors
    /// As [`predict_proba_with`](Self::predict_proba_with).
    pub fn decision_function_with(
        &self,
        db: &Database,
        examples: &Examples,
        inference: &crate::GibbsInference,
    ) -> Result<Vec<f64>, BoostError> {
        if self.is_recursive() {
            return Ok(self
                .predict_proba_with(db, examples, inference)?
                .into_iter()
                .map(|p| (p / (1.0 - p)).ln())
                .collect());
        }
        log_odds(&self.trees, self.initial_log_odds, self.step, db, examples)
    }

    /// `P(y = 1 | x) = sigmoid(ψ(x))` for each example (Eq. 1); for a recursive model
    /// the marginals of [`predict_proba_with`](Self::predict_proba_with) with
    /// [`GibbsInference::default`](crate::GibbsInference::default) (BoostSRL's 20
    /// burn-in and 200 kept sweeps, seed 0).
    ///
    /// # Errors
    /// [`BoostError::TargetMismatch`] for examples of another predicate; for a
    /// recursive model, [`BoostError::InvalidParam`] when `db` states facts of the
    /// recursive predicate.
    pub fn predict_proba(
        &self,
        db: &Database,
        examples: &Examples,
    ) -> Result<Vec<f64>, BoostError> {
        self.predict_proba_with(db, examples, &crate::GibbsInference::default())
    }

    /// [`predict_proba`](Self::predict_proba) with the Gibbs sampler's settings for a
    /// recursive model: every example's atom is a query variable, sampled jointly
    /// ([`crate::recursion`]); a model that is not recursive ignores `inference`.
    ///
    /// # Errors
    /// As [`predict_proba`](Self::predict_proba); [`BoostError::InvalidParam`]
    /// (`samples`) for `inference.samples == 0`.
    pub fn predict_proba_with(
        &self,
        db: &Database,
        examples: &Examples,
        inference: &crate::GibbsInference,
    ) -> Result<Vec<f64>, BoostError> {
        match self.recursion.as_deref() {
            Some(name) if self.is_recursive() => crate::recursion::gibbs_marginals(
                &self.trees,
                self.initial_log_odds,
                self.step,
                name,
                db,
                examples,
                inference,
            ),
            _ => Ok(
                log_odds(&self.trees, self.initial_log_odds, self.step, db, examples)?
                    .into_iter()
                    .map(sigmoid)
                    .collect(),
            ),
        }
    }

    /// Labels at `threshold` (`p ≥ threshold` is positive).
    ///
    /// # Errors
    /// As [`predict_proba`](Self::predict_proba).
    pub fn predict(
        &self,
        db: &Database,
        examples: &Examples,
        threshold: f64,
    ) -> Result<Vec<bool>, BoostError> {
        Ok(self
            .predict_proba(db, examples)?
            .into_iter()
            .map(|p| p >= threshold)
            .collect())
    }
}

impl std::fmt::Display for SoftRfgb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "% Soft-RFGB model for {}/{} (alpha = {}, beta = {}, {} trees, step {}, initial log-odds {})",
            self.target,
            self.arity,
            self.alpha,
            self.beta,
            self.trees.len(),
            self.step,
            self.initial_log_odds
        )?;
        for (i, t) in self.trees.iter().enumerate() {
            writeln!(f, "% tree {}", i + 1)?;
            write!(f, "{t}")?;
        }
        Ok(())
    }
}
