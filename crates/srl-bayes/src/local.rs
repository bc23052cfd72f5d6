//! Naive Bayes as srl-infer's [`LocalClassifier`], for iterative classification and
//! collective Gibbs sampling: [`LocalNaiveBayes`] (one multinomial over all features) and
//! [`LocalBernoulliGaussianNaiveBayes`] (Bernoulli attribute columns, a Gaussian per
//! aggregated neighbour-label feature, as a Weka-style naive Bayes treats binary and
//! numeric features, the variant the collective-classification experiments report).

use srl_infer::{FeatureRow, LocalClassifier};

use crate::error::BayesError;
use crate::naive_bayes::NaiveBayesParams;

/// Multinomial naive Bayes over the non-negative entries of a [`FeatureRow`] (attribute
/// columns such as word indicators, then the aggregated neighbour-label features): the
/// [`crate::FeatureKind::Count`] model of [`NaiveBayesParams::fit`] — same estimator,
/// `Pr(c) = (W_c + prior_alpha) / (W + K prior_alpha)`,
/// `θ_{c,j} = (Σ w x_j + alpha) / (Σ w Σ_j x_j + dim · alpha)` — computed sparsely
/// (one pass over the stored entries), `Pr(c | x) ∝ Pr(c) Π_j θ_{c,j}^{x_j}`.
///
/// ```
/// use srl_bayes::local::LocalNaiveBayes;
/// use srl_graph::AttributeRow;
/// use srl_infer::{FeatureRow, LocalClassifier};
/// let a = [1.0, 0.0];
/// let b = [0.0, 1.0];
/// let row = |x| FeatureRow { attributes: AttributeRow::Dense(x), num_attributes: 2, relational: &[] };
/// let mut nb = LocalNaiveBayes::default();
/// nb.fit(&[row(&a), row(&b)], &[0, 1], None, 2)?;
/// let mut p = [0.0; 2];
/// nb.predict_proba(&row(&a), &mut p);
/// assert!(p[0] > 0.5);
/// # Ok::<(), srl_bayes::BayesError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocalNaiveBayes {
    /// Smoothing constants.
    pub params: NaiveBayesParams,
    log_prior: Vec<f64>,
    /// `[c * dim + j]`
    log_theta: Vec<f64>,
    dim: usize,
}

impl LocalClassifier for LocalNaiveBayes {
    type Error = BayesError;

    fn fit(
        &mut self,
        rows: &[FeatureRow<'_>],
        labels: &[u32],
        weights: Option<&[f64]>,
        num_classes: usize,
    ) -> Result<(), BayesError> {
        if rows.is_empty() || rows.len() != labels.len() || num_classes == 0 {
            return Err(BayesError::data(
                "need one label per row, at least one row and one class",
            ));
        }
        if let Some(w) = weights
            && (w.len() != rows.len() || w.iter().any(|v| !v.is_finite() || *v < 0.0))
        {
            return Err(BayesError::data(
                "weights must be one finite non-negative value per row",
            ));
        }
        let dim = rows[0].dim();
        let mut counts = vec![0.0; num_classes * dim];
        let mut class_w = vec![0.0; num_classes];
        let mut bad = None;
        for (r, (row, &c)) in rows.iter().zip(labels).enumerate() {
            let c = c as usize;
            if c >= num_classes || row.dim() != dim {
                return Err(BayesError::data(format!(
                    "row {r}: label out of range or wrong dimension"
                )));
            }
            let w = weights.map_or(1.0, |w| w[r]);
            class_w[c] += w;
            row.for_each(|j, x| {
                if !(x.is_finite() && x >= 0.0) {
                    bad = Some(r);
                } else {
                    counts[c * dim + j] += w * x;
                }
            });
        }
        if let Some(r) = bad {
            return Err(BayesError::data(format!(
                "row {r}: feature values must be finite and non-negative"
            )));
        }
        let p = self.params;
        let total: f64 = class_w.iter().sum::<f64>() + num_classes as f64 * p.prior_alpha;
        if total <= 0.0 {
            return Err(BayesError::data("total weight is zero"));
        }
        self.log_prior = class_w
            .iter()
            .map(|w| ((w + p.prior_alpha) / total).ln())
            .collect();
        self.log_theta = vec![0.0; num_classes * dim];
        for c in 0..num_classes {
            let row = &counts[c * dim..(c + 1) * dim];
            let d = row.iter().sum::<f64>() + dim as f64 * p.alpha;
            for (j, r) in row.iter().enumerate() {
                self.log_theta[c * dim + j] = if d > 0.0 {
                    ((r + p.alpha) / d).ln()
                } else {
                    -(dim as f64).ln()
                };
            }
        }
        self.dim = dim;
        Ok(())
    }

    fn predict_proba(&self, row: &FeatureRow<'_>, out: &mut [f64]) {
        let k = self.log_prior.len();
        if k == 0 || out.len() != k {
            let u = 1.0 / out.len().max(1) as f64;
            out.iter_mut().for_each(|o| *o = u);
            return;
        }
        out.copy_from_slice(&self.log_prior);
        let dim = self.dim;
        row.for_each(|j, x| {
            if j < dim && x != 0.0 {
                for (c, o) in out.iter_mut().enumerate() {
                    *o += x * self.log_theta[c * dim + j];
                }
            }
        });
        let m = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut z = 0.0;
        for o in out.iter_mut() {
            *o = (*o - m).exp();
            z += *o;
        }
        for o in out.iter_mut() {
            *o /= z;
        }
    }
}

/// Hyperparameters of [`LocalBernoulliGaussianNaiveBayes`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `alpha` | 1.0 | Laplace pseudo-count of each Bernoulli cell: `p = (n_cj + α) / (N_c + 2α)` | `> 0` |
/// | `prior_alpha` | 1.0 | pseudo-count added to every class count of the prior | `≥ 0` |
/// | `min_std` | 1/6 | lower bound on each Gaussian's standard deviation | `> 0` |
///
/// `min_std = 1/6` is Weka's `NormalEstimator` floor `precision / (2 · 3)` at precision 1,
/// the spacing of neighbour-label counts; it keeps a class whose training nodes all have
/// the same count (variance 0) from giving every other count probability 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BernoulliGaussianParams {
    /// Laplace pseudo-count of the Bernoulli tables.
    pub alpha: f64,
    /// Pseudo-count of the class prior.
    pub prior_alpha: f64,
    /// Lower bound on a Gaussian standard deviation.
    pub min_std: f64,
}

impl Default for BernoulliGaussianParams {
    fn default() -> Self {
        Self {
            alpha: 1.0,
            prior_alpha: 1.0,
            min_std: 1.0 / 6.0,
        }
    }
}

/// Naive Bayes with a Bernoulli factor per attribute column and a Gaussian factor per
/// relational (aggregated neighbour-label) feature of a [`FeatureRow`]:
///
/// ```text
/// log Pr(c | x, r) = log Pr(c) + Σ_j [x_j ≠ 0] log p_cj + [x_j = 0] log(1 − p_cj)
///                    + Σ_i log N(r_i; μ_ci, σ_ci²) + const
/// p_cj = (Σ_{v ∈ c} w_v [x_vj ≠ 0] + α) / (W_c + 2α)
/// μ_ci, σ_ci² = weighted mean and variance of r_i over class c, σ_ci ≥ min_std
/// Pr(c) = (W_c + prior_alpha) / (W + K prior_alpha)
/// ```
///
/// This is how a Weka-style naive Bayes treats binary word indicators and numeric count
/// features; the collective-classification experiment reports it as the NB of Sen et al.
/// (2008)'s table (the slides name only "naive Bayes"). Unlike the multinomial
/// [`LocalNaiveBayes`], the neighbour counts do not share one distribution with the
/// words, so one strongly homophilous count cannot outweigh dozens of word indicators by
/// construction. Prediction is sparse: `O(nnz · k + r · k)` per row, using the precomputed
/// `Σ_j log(1 − p_cj)` per class.
///
/// ```
/// use srl_bayes::local::LocalBernoulliGaussianNaiveBayes;
/// use srl_graph::AttributeRow;
/// use srl_infer::{FeatureRow, LocalClassifier};
/// let (a, b) = ([1.0, 0.0], [0.0, 1.0]);
/// let (ra, rb) = ([3.0, 0.0], [0.0, 2.0]);
/// let row = |x, r| FeatureRow { attributes: AttributeRow::Dense(x), num_attributes: 2, relational: r };
/// let mut nb = LocalBernoulliGaussianNaiveBayes::default();
/// nb.fit(&[row(&a, &ra), row(&b, &rb)], &[0, 1], None, 2)?;
/// let mut p = [0.0; 2];
/// nb.predict_proba(&row(&a, &ra), &mut p);
/// assert!(p[0] > 0.9);
/// # Ok::<(), srl_bayes::BayesError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocalBernoulliGaussianNaiveBayes {
    /// Smoothing constants.
    pub params: BernoulliGaussianParams,
    k: usize,
    num_attributes: usize,
    num_relational: usize,
    /// `log Pr(c) + Σ_j log(1 − p_cj)`, per class.
    base: Vec<f64>,
    /// `log p_cj − log(1 − p_cj)`, `[c * num_attributes + j]`.
    delta: Vec<f64>,
    /// Gaussian means, `1 / σ` and `log σ`, `[c * num_relational + i]`.
    mean: Vec<f64>,
    inv_std: Vec<f64>,
    log_std: Vec<f64>,
}

impl LocalBernoulliGaussianNaiveBayes {
    /// An unfitted model with the given smoothing constants.
    #[must_use]
    pub fn new(params: BernoulliGaussianParams) -> Self {
        Self {
            params,
            ..Self::default()
        }
    }
}

impl LocalClassifier for LocalBernoulliGaussianNaiveBayes {
    type Error = BayesError;

    fn fit(
        &mut self,
        rows: &[FeatureRow<'_>],
        labels: &[u32],
        weights: Option<&[f64]>,
        num_classes: usize,
    ) -> Result<(), BayesError> {
        let p = self.params;
        let valid = p.alpha.is_finite()
            && p.alpha > 0.0
            && p.prior_alpha.is_finite()
            && p.prior_alpha >= 0.0
            && p.min_std.is_finite()
            && p.min_std > 0.0;
        if !valid {
            return Err(BayesError::data(format!(
                "invalid smoothing constants {p:?}: need alpha > 0, prior_alpha >= 0, min_std > 0"
            )));
        }
        if rows.is_empty() || rows.len() != labels.len() || num_classes == 0 {
            return Err(BayesError::data(
                "need one label per row, at least one row and one class",
            ));
        }
        if let Some(w) = weights
            && (w.len() != rows.len() || w.iter().any(|v| !v.is_finite() || *v < 0.0))
        {
            return Err(BayesError::data(
                "weights must be one finite non-negative value per row",
            ));
        }
        let (na, nr, k) = (
            rows[0].num_attributes,
            rows[0].relational.len(),
            num_classes,
        );
        let mut present = vec![0.0; k * na];
        let mut class_w = vec![0.0; k];
        let mut sum = vec![0.0; k * nr];
        let mut sum2 = vec![0.0; k * nr];
        for (r, (row, &c)) in rows.iter().zip(labels).enumerate() {
            let c = c as usize;
            if c >= k || row.num_attributes != na || row.relational.len() != nr {
                return Err(BayesError::data(format!(
                    "row {r}: label {c} out of range 0..{k} or dimension other than row 0's"
                )));
            }
            if let Some(i) = row.relational.iter().position(|x| !x.is_finite()) {
                return Err(BayesError::data(format!(
                    "row {r}: relational feature {i} is not finite"
                )));
            }
            let w = weights.map_or(1.0, |w| w[r]);
            class_w[c] += w;
            row.attributes.for_each(|j, x| {
                if x != 0.0 && j < na {
                    present[c * na + j] += w;
                }
            });
            for (i, &x) in row.relational.iter().enumerate() {
                sum[c * nr + i] += w * x;
                sum2[c * nr + i] += w * x * x;
            }
        }
        let total: f64 = class_w.iter().sum::<f64>() + k as f64 * p.prior_alpha;
        if total <= 0.0 {
            return Err(BayesError::data("total weight is zero"));
        }
        self.base = vec![0.0; k];
        self.delta = vec![0.0; k * na];
        self.mean = vec![0.0; k * nr];
        let mut std = vec![p.min_std; k * nr];
        for c in 0..k {
            let mut base = ((class_w[c] + p.prior_alpha) / total).ln();
            let denom = class_w[c] + 2.0 * p.alpha;
            for j in 0..na {
                let q = (present[c * na + j] + p.alpha) / denom;
                let (lp, lq) = (q.ln(), (1.0 - q).ln());
                base += lq;
                self.delta[c * na + j] = lp - lq;
            }
            self.base[c] = base;
            if class_w[c] > 0.0 {
                for i in 0..nr {
                    let m = sum[c * nr + i] / class_w[c];
                    let var = (sum2[c * nr + i] / class_w[c] - m * m).max(0.0);
                    self.mean[c * nr + i] = m;
                    std[c * nr + i] = var.sqrt().max(p.min_std);
                }
            }
        }
        self.inv_std = std.iter().map(|s| 1.0 / s).collect();
        self.log_std = std.iter().map(|s| s.ln()).collect();
        self.k = k;
        self.num_attributes = na;
        self.num_relational = nr;
        Ok(())
    }

    /// Class probabilities (log space, then normalised). Attribute columns beyond the
    /// fitted `num_attributes` and relational features beyond the fitted count are
    /// ignored; an unfitted model or an `out` of the wrong length gets the uniform
    /// distribution.
    fn predict_proba(&self, row: &FeatureRow<'_>, out: &mut [f64]) {
        let k = self.k;
        if k == 0 || out.len() != k {
            let u = 1.0 / out.len().max(1) as f64;
            out.iter_mut().for_each(|o| *o = u);
            return;
        }
        out.copy_from_slice(&self.base);
        let na = self.num_attributes;
        row.attributes.for_each(|j, x| {
            if j < na && x != 0.0 {
                for (c, o) in out.iter_mut().enumerate() {
                    *o += self.delta[c * na + j];
                }
            }
        });
        let nr = self.num_relational;
        for (i, &x) in row.relational.iter().enumerate().take(nr) {
            for (c, o) in out.iter_mut().enumerate() {
                let j = c * nr + i;
                let z = (x - self.mean[j]) * self.inv_std[j];
                *o += -0.5 * z * z - self.log_std[j];
            }
        }
        let m = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut z = 0.0;
        for o in out.iter_mut() {
            *o = (*o - m).exp();
            z += *o;
        }
        for o in out.iter_mut() {
            *o /= z;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::naive_bayes::FeatureKind;
    use srl_graph::AttributeRow;

    /// Direct (dense, unoptimised) evaluation of the Bernoulli + Gaussian model.
    #[test]
    fn bernoulli_gaussian_matches_its_formula() -> Result<(), BayesError> {
        let x = [1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let rel = [0.0, 2.0, 1.0, 3.0, 2.0, 2.0, 0.0, 1.0];
        let y = [0u32, 1, 1, 0];
        let w = [1.0, 0.5, 2.0, 1.5];
        let rows: Vec<FeatureRow<'_>> = (0..4)
            .map(|r| FeatureRow {
                attributes: AttributeRow::Dense(&x[r * 3..r * 3 + 3]),
                num_attributes: 3,
                relational: &rel[r * 2..r * 2 + 2],
            })
            .collect();
        let mut nb = LocalBernoulliGaussianNaiveBayes::default();
        nb.fit(&rows, &y, Some(&w), 2)?;
        let min_std = 1.0 / 6.0;
        for r in 0..4 {
            let mut logp = [0.0; 2];
            for c in 0..2u32 {
                let wc: f64 = (0..4).filter(|&i| y[i] == c).map(|i| w[i]).sum();
                let mut lp = ((wc + 1.0) / (5.0 + 2.0)).ln();
                for j in 0..3 {
                    let n: f64 = (0..4)
                        .filter(|&i| y[i] == c && x[i * 3 + j] != 0.0)
                        .map(|i| w[i])
                        .sum();
                    let q = (n + 1.0) / (wc + 2.0);
                    lp += if x[r * 3 + j] != 0.0 {
                        q.ln()
                    } else {
                        (1.0 - q).ln()
                    };
                }
                for i in 0..2 {
                    let m: f64 = (0..4)
                        .filter(|&t| y[t] == c)
                        .map(|t| w[t] * rel[t * 2 + i])
                        .sum::<f64>()
                        / wc;
                    let v: f64 = (0..4)
                        .filter(|&t| y[t] == c)
                        .map(|t| w[t] * (rel[t * 2 + i] - m).powi(2))
                        .sum::<f64>()
                        / wc;
                    let s = v.sqrt().max(min_std);
                    let z = (rel[r * 2 + i] - m) / s;
                    lp += -0.5 * z * z - s.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln();
                }
                logp[c as usize] = lp;
            }
            let p0 = 1.0 / (1.0 + (logp[1] - logp[0]).exp());
            let mut p = [0.0; 2];
            nb.predict_proba(&rows[r], &mut p);
            assert!((p[0] - p0).abs() < 1e-12, "row {r}: {p:?} vs {p0}");
        }
        // Sparse rows give the same answer as dense ones.
        let idx = [0u32, 2];
        let vals = [1.0, 1.0];
        let sparse = FeatureRow {
            attributes: AttributeRow::Sparse {
                indices: &idx,
                values: &vals,
            },
            num_attributes: 3,
            relational: &rel[0..2],
        };
        let (mut a, mut b) = ([0.0; 2], [0.0; 2]);
        nb.predict_proba(&sparse, &mut a);
        nb.predict_proba(&rows[0], &mut b);
        assert!((a[0] - b[0]).abs() < 1e-12);
        // Bad input is a typed error.
        assert!(nb.fit(&rows, &y[..3], None, 2).is_err());
        assert!(nb.fit(&rows, &[0, 1, 2, 0], None, 2).is_err());
        let bad = LocalBernoulliGaussianNaiveBayes::new(BernoulliGaussianParams {
            min_std: 0.0,
            ..Default::default()
        });
        assert!(bad.clone().fit(&rows, &y, None, 2).is_err());
        Ok(())
    }

    #[test]
    fn matches_dense_multinomial_naive_bayes() -> Result<(), BayesError> {
        let x = [2.0, 0.0, 1.0, 0.0, 3.0, 1.0, 1.0, 1.0, 0.0];
        let rel = [0.5, 1.5, 0.0];
        let y = [0, 1, 1];
        let w = [1.0, 0.5, 2.0];
        let rows: Vec<FeatureRow<'_>> = (0..3)
            .map(|r| FeatureRow {
                attributes: AttributeRow::Dense(&x[r * 3..r * 3 + 3]),
                num_attributes: 3,
                relational: &rel[r..r + 1],
            })
            .collect();
        let mut local = LocalNaiveBayes::default();
        local.fit(&rows, &y, Some(&w), 2)?;
        let dense: Vec<f64> = (0..3)
            .flat_map(|r| x[r * 3..r * 3 + 3].iter().copied().chain([rel[r]]))
            .collect();
        let nb =
            NaiveBayesParams::default().fit(&[FeatureKind::Count; 4], &dense, &y, 2, Some(&w))?;
        for r in 0..3 {
            let mut p = [0.0; 2];
            local.predict_proba(&rows[r], &mut p);
            let q = nb.predict_proba(&dense[r * 4..r * 4 + 4])?;
            assert!((p[0] - q[0]).abs() < 1e-12);
        }
        Ok(())
    }
}
