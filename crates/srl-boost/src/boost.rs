//! Relational functional gradient boosting (RFGB, Natarajan et al. 2012) and its
//! soft-margin variant Soft-RFGB (Yang et al. 2014): one type, with cost parameters
//! α (false negatives) and β (false positives); α = β = 0 is RFGB exactly.

use serde::{Deserialize, Serialize};

use crate::BoostError;
use crate::logic::{Background, Database, Examples};
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

/// Negative-example subsampling before boosting (BoostSRL's `-negPosRatio`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum NegativeSampling {
    /// Use every negative.
    All,
    /// Keep `ratio × #pos` negatives, drawn uniformly without replacement once before
    /// the first tree (BoostSRL's default ratio is 2).
    Ratio(f64),
}

/// Hyperparameters of [`SoftRfgb`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `n_trees` | 10 | M, boosting iterations (BoostSRL `-trees`, as in the paper's runs) | ≥ 1 |
/// | `alpha` | 0 | α, cost of a false negative (Yang et al. Sec. III) | finite |
/// | `beta` | 0 | β, cost of a false positive | finite |
/// | `tree` | [`TreeParams::default`] | tree induction | see there |
/// | `negative_sampling` | `Ratio(2.0)` | BoostSRL `-negPosRatio` default 2 | `All` or ratio > 0 |
/// | `step` | 1 | step length multiplying each tree (BoostSRL `-step`) | > 0 |
///
/// α = β = 0 is RFGB ("Hard Margin" in the paper); `n_trees = 1` is the paper's
/// "No Boosting" single tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
            tree: TreeParams::default(),
            negative_sampling: NegativeSampling::Ratio(2.0),
            step: 1.0,
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
        if let NegativeSampling::Ratio(r) = self.negative_sampling
            && !(r.is_finite() && r > 0.0)
        {
            return bad("negative_sampling", "ratio must be positive");
        }
        Ok(())
    }

    /// Learns M regression trees by functional gradient ascent on the (soft-margin)
    /// pseudo-log-likelihood: ψ₀ = 0; for m = 1..M, compute each training example's
    /// gradient with [`soft_gradient`] at `p = sigmoid(ψ_{m−1})` (GENSOFTMEGS, Fig. 1a),
    /// fit a [`RelationalRegressionTree`] to them, and add it (times `step`) to ψ.
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
    /// M tree inductions over the (sampled) examples.
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
        self.validate()?;
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
        let train = match self.negative_sampling {
            NegativeSampling::All => examples.clone(),
            NegativeSampling::Ratio(r) => examples.subsample_negatives(r, rng),
        };
        let labels = train.labels().to_vec();
        let mut psi = vec![0.0; train.len()];
        let mut grad = vec![0.0; train.len()];
        let mut trees = Vec::with_capacity(self.n_trees);
        let mut history = Vec::with_capacity(self.n_trees + 1);
        history.push(log_likelihood(&labels, &psi));
        for _ in 0..self.n_trees {
            for i in 0..train.len() {
                grad[i] = soft_gradient(labels[i], sigmoid(psi[i]), self.alpha, self.beta);
            }
            let (tree, values) = self.tree.fit_assign(db, bk, &train, &grad, None)?;
            for i in 0..train.len() {
                psi[i] += self.step * values[i];
            }
            history.push(log_likelihood(&labels, &psi));
            trees.push(tree);
        }
        Ok(SoftRfgb {
            target: examples.pred.clone(),
            arity: examples.arity,
            alpha: self.alpha,
            beta: self.beta,
            step: self.step,
            trees,
            n_train: train.len(),
            train_log_likelihood: history,
        })
    }
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

/// A fitted (Soft-)RFGB model: `P(target | x) = sigmoid(step · Σ_m tree_m(x))`.
///
/// Serialises with serde (trees store predicate and constant names, so a model can be
/// applied to another [`Database`] with the same vocabulary).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SoftRfgb {
    target: String,
    arity: usize,
    alpha: f64,
    beta: f64,
    step: f64,
    trees: Vec<RelationalRegressionTree>,
    n_train: usize,
    train_log_likelihood: Vec<f64>,
}

impl SoftRfgb {
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

    /// Number of training examples after subsampling.
    pub fn n_train(&self) -> usize {
        self.n_train
    }

    /// Mean training log-likelihood before the first tree and after each tree
    /// (`n_trees + 1` values), the convergence record.
    pub fn train_log_likelihood(&self) -> &[f64] {
        &self.train_log_likelihood
    }

    /// ψ(x) = step · Σ_m tree_m(x) for each example.
    ///
    /// # Errors
    /// [`BoostError::TargetMismatch`] for examples of another predicate.
    pub fn decision_function(
        &self,
        db: &Database,
        examples: &Examples,
    ) -> Result<Vec<f64>, BoostError> {
        let mut psi = vec![0.0; examples.len()];
        for t in &self.trees {
            for (s, v) in psi.iter_mut().zip(t.predict(db, examples)?) {
                *s += self.step * v;
            }
        }
        Ok(psi)
    }

    /// `P(y = 1 | x) = sigmoid(ψ(x))` for each example (Eq. 1).
    ///
    /// # Errors
    /// [`BoostError::TargetMismatch`] for examples of another predicate.
    pub fn predict_proba(
        &self,
        db: &Database,
        examples: &Examples,
    ) -> Result<Vec<f64>, BoostError> {
        Ok(self
            .decision_function(db, examples)?
            .into_iter()
            .map(sigmoid)
            .collect())
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
            "% Soft-RFGB model for {}/{} (alpha = {}, beta = {}, {} trees, step {})",
            self.target,
            self.arity,
            self.alpha,
            self.beta,
            self.trees.len(),
            self.step
        )?;
        for (i, t) in self.trees.iter().enumerate() {
            writeln!(f, "% tree {}", i + 1)?;
            write!(f, "{t}")?;
        }
        Ok(())
    }
}
