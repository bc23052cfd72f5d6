//! Naive Bayes as srl-infer's [`LocalClassifier`], for iterative classification and
//! collective Gibbs sampling.

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::naive_bayes::FeatureKind;
    use srl_graph::AttributeRow;

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
