//! Multinomial logistic regression with an L2 (Gaussian "shrinkage") prior, fitted as a
//! MAP estimate with argmin's L-BFGS — the *LOGREG* baseline of Sen & Getoor (2006) and
//! the local classifier of collective classification.

use serde::{Deserialize, Serialize};
use srl_graph::{AttributeRow, Attributes};
use srl_infer::{FeatureRow, LocalClassifier};

use crate::error::LearnError;
use crate::optim::{FitReport, minimize};

/// A feature row: calls `f(j, x_j)` for its stored entries (private abstraction over
/// [`AttributeRow`] and [`FeatureRow`]).
pub(crate) trait Row {
    fn entries(&self, f: impl FnMut(usize, f64));
}

impl Row for AttributeRow<'_> {
    #[inline]
    fn entries(&self, f: impl FnMut(usize, f64)) {
        self.for_each(f);
    }
}

impl Row for FeatureRow<'_> {
    #[inline]
    fn entries(&self, f: impl FnMut(usize, f64)) {
        self.for_each(f);
    }
}

/// The strength `λ` of the prior `p(W) ∝ exp(-λ ‖W‖²)` (intercepts are not penalised).
///
/// Sen & Getoor (2006, Section 6) give LOGREG `λ = |Y| · 10⁻⁴`, `|Y|` the number of
/// training samples (after Zhang & Oles 2001), which is [`Lambda::PerSample`]`(1e-4)`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Lambda {
    /// `λ` as given (`>= 0`).
    Fixed(f64),
    /// `λ = c · Σ_i s_i`, the total sample weight (the sample count when unweighted).
    PerSample(f64),
}

impl Lambda {
    fn resolve(self, total_weight: f64) -> f64 {
        match self {
            Self::Fixed(l) => l,
            Self::PerSample(c) => c * total_weight,
        }
    }
}

/// Hyperparameters of [`LogisticRegression`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `lambda` | `PerSample(1e-4)` | prior strength `λ` in `λ ‖W‖²` (Sen & Getoor 2006, §6) | `>= 0` |
/// | `fit_intercept` | `true` | one unpenalised intercept per class | |
/// | `max_iters` | `500` | L-BFGS iteration limit | `>= 1` |
/// | `tol` | `1e-8` | stop when ‖∇J‖ / Σ s_i is below `tol` | `> 0` |
/// | `memory` | `10` | L-BFGS history length | `>= 1` |
///
/// The objective minimised is the negative log posterior
///
/// ```text
/// J(W, b) = Σ_i s_i · [ log Σ_c exp(W_c · x_i + b_c) − (W_{y_i} · x_i + b_{y_i}) ] + λ ‖W‖²
/// ```
///
/// with sample weights `s_i` (1 when none are given). It equals scikit-learn's
/// `LogisticRegression(C, fit_intercept=True)` objective `C · Σ_i s_i ℓ_i + ½ ‖W‖²` divided
/// by `C` when `C = 1 / (2λ)`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogisticRegressionParams {
    /// Prior strength.
    pub lambda: Lambda,
    /// Fit one unpenalised intercept per class.
    pub fit_intercept: bool,
    /// L-BFGS iteration limit.
    pub max_iters: u64,
    /// Relative gradient-norm tolerance.
    pub tol: f64,
    /// L-BFGS memory.
    pub memory: usize,
}

impl Default for LogisticRegressionParams {
    fn default() -> Self {
        Self {
            lambda: Lambda::PerSample(1e-4),
            fit_intercept: true,
            max_iters: 500,
            tol: 1e-8,
            memory: 10,
        }
    }
}

/// A fitted multinomial logistic regression: `P(y = c | x) ∝ exp(W_c · x + b_c)`.
///
/// Serialises with serde (weights, intercepts, the fit report), so a fitted model can be
/// saved and loaded.
///
/// # Example
/// ```
/// use srl_graph::Attributes;
/// use srl_learn::{Lambda, LogisticRegressionParams};
/// let x = Attributes::Dense { num_features: 1, values: vec![-2.0, -1.0, 1.0, 2.0] };
/// let y = [0, 0, 1, 1];
/// let params = LogisticRegressionParams { lambda: Lambda::Fixed(0.1), ..Default::default() };
/// let model = params.fit(&x, &y, 2, None)?;
/// let p = model.predict_proba(x.row(3));
/// assert!(p[1] > 0.9 && (p[0] + p[1] - 1.0).abs() < 1e-12);
/// # Ok::<(), srl_learn::LearnError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogisticRegression {
    num_classes: usize,
    num_features: usize,
    /// Row-major `k x d`.
    weights: Vec<f64>,
    /// Length `k` (zeros when no intercept was fitted).
    intercepts: Vec<f64>,
    lambda: f64,
    report: FitReport,
}

impl LogisticRegressionParams {
    fn validate(&self) -> Result<(), LearnError> {
        let bad = |name: &'static str, value: String, reason: &str| {
            Err(LearnError::InvalidParameter {
                name,
                message: format!("{value}: {reason}"),
            })
        };
        let l = match self.lambda {
            Lambda::Fixed(l) | Lambda::PerSample(l) => l,
        };
        if !(l.is_finite() && l >= 0.0) {
            return bad("lambda", l.to_string(), "must be finite and >= 0");
        }
        if self.max_iters == 0 {
            return bad("max_iters", "0".into(), "must be >= 1");
        }
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return bad("tol", self.tol.to_string(), "must be finite and > 0");
        }
        if self.memory == 0 {
            return bad("memory", "0".into(), "must be >= 1");
        }
        Ok(())
    }

    /// Fits on every row of an attribute table.
    ///
    /// # Arguments
    /// - `x`: `n x d` attributes (dense or sparse).
    /// - `labels`: `n` labels in `0..num_classes` (`u32`, the label type of
    ///   `RelationalGraph::labels` and srl-infer's `LocalClassifier::fit`).
    /// - `num_classes`: `k >= 1`.
    /// - `sample_weights`: optional `n` finite weights `>= 0`.
    ///
    /// # Errors
    /// As [`LogisticRegressionParams::fit_rows`].
    pub fn fit(
        &self,
        x: &Attributes,
        labels: &[u32],
        num_classes: usize,
        sample_weights: Option<&[f64]>,
    ) -> Result<LogisticRegression, LearnError> {
        let rows: Vec<AttributeRow<'_>> = (0..x.num_rows()).map(|v| x.row(v)).collect();
        self.fit_rows(&rows, x.num_features(), labels, num_classes, sample_weights)
    }

    /// Fits on explicit rows (e.g. the labelled nodes of a graph).
    ///
    /// # Arguments
    /// - `rows`: `n` attribute rows, each with column indices `< num_features`.
    /// - `labels`: `n` labels in `0..num_classes` (`u32`, the label type of
    ///   `RelationalGraph::labels` and srl-infer's `LocalClassifier::fit`).
    /// - `sample_weights`: optional `n` finite weights `>= 0` (weight `s` counts a row `s`
    ///   times; the prior is not reweighted).
    ///
    /// # Returns
    /// The MAP weights. Non-convergence within `max_iters` is not an error: see
    /// [`LogisticRegression::report`].
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] for bad hyperparameters or `num_classes == 0`,
    /// [`LearnError::DimensionMismatch`] for lengths that disagree or a column index
    /// `>= num_features`, [`LearnError::LabelOutOfRange`], [`LearnError::InvalidValue`] for
    /// a bad weight or a non-finite attribute, [`LearnError::NoTrainingData`] when the total
    /// weight is 0, [`LearnError::Optimization`] if argmin fails.
    ///
    /// # Complexity
    /// `O(iters · nnz · k)` time, `O(k · d)` memory beyond the input.
    pub fn fit_rows(
        &self,
        rows: &[AttributeRow<'_>],
        num_features: usize,
        labels: &[u32],
        num_classes: usize,
        sample_weights: Option<&[f64]>,
    ) -> Result<LogisticRegression, LearnError> {
        self.fit_generic(rows, num_features, labels, num_classes, sample_weights)
    }

    fn fit_generic<T: Row>(
        &self,
        rows: &[T],
        num_features: usize,
        labels: &[u32],
        num_classes: usize,
        sample_weights: Option<&[f64]>,
    ) -> Result<LogisticRegression, LearnError> {
        self.validate()?;
        let (n, d, k) = (rows.len(), num_features, num_classes);
        if k == 0 {
            return Err(LearnError::InvalidParameter {
                name: "num_classes",
                message: "0: must be >= 1".into(),
            });
        }
        if labels.len() != n {
            return Err(LearnError::DimensionMismatch {
                what: "labels",
                expected: n,
                found: labels.len(),
            });
        }
        if let Some(w) = sample_weights {
            if w.len() != n {
                return Err(LearnError::DimensionMismatch {
                    what: "sample weights",
                    expected: n,
                    found: w.len(),
                });
            }
            if let Some(i) = w.iter().position(|s| !(s.is_finite() && *s >= 0.0)) {
                return Err(LearnError::InvalidValue {
                    what: "sample weight",
                    index: i,
                    value: w[i],
                });
            }
        }
        for (i, (&y, row)) in labels.iter().zip(rows).enumerate() {
            if y as usize >= k {
                return Err(LearnError::LabelOutOfRange {
                    index: i,
                    label: y as usize,
                    num_labels: k,
                });
            }
            check_row(row, d, i)?;
        }
        let weight = |i: usize| sample_weights.map_or(1.0, |w| w[i]);
        let total: f64 = (0..n).map(weight).sum();
        if total <= 0.0 {
            return Err(LearnError::NoTrainingData {
                reason: format!("{n} samples with total weight {total}"),
            });
        }
        let lambda = self.lambda.resolve(total);
        let kd = k * d;
        let fit_intercept = self.fit_intercept;
        let objective = |theta: &[f64], grad: &mut [f64]| -> f64 {
            grad.fill(0.0);
            let (w, b) = theta.split_at(kd);
            let mut scores = vec![0.0; k];
            let mut value = 0.0;
            for (i, row) in rows.iter().enumerate() {
                let s = weight(i);
                if s == 0.0 {
                    continue;
                }
                scores_into(w, b, fit_intercept, row, d, &mut scores);
                let y = labels[i] as usize;
                let score_y = scores[y];
                // scores now become probabilities; the loss is log Σ exp − score of y.
                let lse = softmax_in_place(&mut scores);
                value += s * (lse - score_y);
                for c in 0..k {
                    let r = s * (scores[c] - f64::from(u8::from(c == y)));
                    if r != 0.0 {
                        let gw = &mut grad[c * d..(c + 1) * d];
                        row.entries(|j, xj| gw[j] += r * xj);
                        if fit_intercept {
                            grad[kd + c] += r;
                        }
                    }
                }
            }
            for (g, &wj) in grad[..kd].iter_mut().zip(w) {
                *g += 2.0 * lambda * wj;
            }
            // Scaled by 1 / Σ s_i (same minimiser): the gradient tolerance becomes relative
            // and L-BFGS's first line search starts at a sensible step for any n.
            let scale = 1.0 / total;
            grad.iter_mut().for_each(|g| *g *= scale);
            (value + lambda * w.iter().map(|v| v * v).sum::<f64>()) * scale
        };
        let dim = kd + if fit_intercept { k } else { 0 };
        let (theta, report) = minimize(
            objective,
            vec![0.0; dim],
            self.max_iters,
            self.tol,
            0.0,
            self.memory,
        )?;
        let (w, b) = theta.split_at(kd);
        Ok(LogisticRegression {
            num_classes: k,
            num_features: d,
            weights: w.to_vec(),
            intercepts: if fit_intercept {
                b.to_vec()
            } else {
                vec![0.0; k]
            },
            lambda,
            report,
        })
    }
}

/// Checks that a row's column indices are `< d` and its values finite.
fn check_row<T: Row>(row: &T, d: usize, i: usize) -> Result<(), LearnError> {
    let mut bad: Option<LearnError> = None;
    row.entries(|j, x| {
        if bad.is_none() {
            if j >= d {
                bad = Some(LearnError::DimensionMismatch {
                    what: "attribute column index (num_features)",
                    expected: d,
                    found: j + 1,
                });
            } else if !x.is_finite() {
                bad = Some(LearnError::InvalidValue {
                    what: "attribute value of row",
                    index: i,
                    value: x,
                });
            }
        }
    });
    bad.map_or(Ok(()), Err)
}

/// `scores[c] = W_c · x + b_c`.
#[inline]
fn scores_into<T: Row>(
    w: &[f64],
    b: &[f64],
    fit_intercept: bool,
    row: &T,
    d: usize,
    scores: &mut [f64],
) {
    for (c, s) in scores.iter_mut().enumerate() {
        *s = if fit_intercept { b[c] } else { 0.0 };
    }
    row.entries(|j, x| {
        for (c, s) in scores.iter_mut().enumerate() {
            *s += w[c * d + j] * x;
        }
    });
}

/// Replaces `scores` by `softmax(scores)` and returns `log Σ exp(scores)`.
#[inline]
pub(crate) fn softmax_in_place(scores: &mut [f64]) -> f64 {
    let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut z = 0.0;
    for s in scores.iter_mut() {
        *s = (*s - m).exp();
        z += *s;
    }
    for s in scores.iter_mut() {
        *s /= z;
    }
    m + z.ln()
}

impl LogisticRegression {
    /// Number of classes `k`.
    #[must_use]
    pub fn num_classes(&self) -> usize {
        self.num_classes
    }

    /// Number of features `d`.
    #[must_use]
    pub fn num_features(&self) -> usize {
        self.num_features
    }

    /// The `k x d` weight matrix, row-major (`[c * d + j]`).
    #[must_use]
    pub fn coefficients(&self) -> &[f64] {
        &self.weights
    }

    /// The `k` intercepts (zeros if none were fitted).
    #[must_use]
    pub fn intercepts(&self) -> &[f64] {
        &self.intercepts
    }

    /// The resolved prior strength `λ` used.
    #[must_use]
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// How the optimiser ended.
    #[must_use]
    pub fn report(&self) -> &FitReport {
        &self.report
    }

    /// Writes `log P(y = c | x)` for every class into `out` (length `k`).
    ///
    /// # Panics
    /// If `out.len() != k` or a column index of `x` is `>= d`.
    pub fn log_proba_into(&self, x: AttributeRow<'_>, out: &mut [f64]) {
        assert_eq!(out.len(), self.num_classes, "output length must be k");
        scores_into(
            &self.weights,
            &self.intercepts,
            true,
            &x,
            self.num_features,
            out,
        );
        let m = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + out.iter().map(|s| (s - m).exp()).sum::<f64>().ln();
        out.iter_mut().for_each(|s| *s -= lse);
    }

    /// Writes `P(y = c | x)` for every class into `out` (length `k`; sums to 1).
    ///
    /// # Panics
    /// If `out.len() != k` or a column index of `x` is `>= d`.
    pub fn predict_proba_into(&self, x: AttributeRow<'_>, out: &mut [f64]) {
        assert_eq!(out.len(), self.num_classes, "output length must be k");
        scores_into(
            &self.weights,
            &self.intercepts,
            true,
            &x,
            self.num_features,
            out,
        );
        softmax_in_place(out);
    }

    /// `P(y = c | x)` for `c in 0..k`.
    ///
    /// # Panics
    /// If a column index of `x` is `>= d`.
    #[must_use]
    pub fn predict_proba(&self, x: AttributeRow<'_>) -> Vec<f64> {
        let mut out = vec![0.0; self.num_classes];
        self.predict_proba_into(x, &mut out);
        out
    }

    /// The most probable class (lowest index on ties).
    ///
    /// # Panics
    /// If a column index of `x` is `>= d`.
    #[must_use]
    pub fn predict(&self, x: AttributeRow<'_>) -> u32 {
        argmax(&self.predict_proba(x)) as u32
    }
}

/// A [`LogisticRegression`] as srl-infer's [`LocalClassifier`] (the local model of
/// iterative classification / collective Gibbs sampling): holds its hyperparameters and,
/// once fitted, the model. Before the first fit it predicts the uniform distribution.
///
/// # Example
/// ```
/// use srl_graph::AttributeRow;
/// use srl_infer::{FeatureRow, LocalClassifier};
/// use srl_learn::LocalLogisticRegression;
/// let rows: Vec<FeatureRow<'_>> = [[0.0], [1.0]]
///     .iter()
///     .map(|r| FeatureRow { attributes: AttributeRow::Dense(&r[..]), num_attributes: 1, relational: &[] })
///     .collect();
/// let mut lr = LocalLogisticRegression::default();
/// lr.fit(&rows, &[0, 1], None, 2)?;
/// let mut p = [0.0; 2];
/// lr.predict_proba(&rows[1], &mut p);
/// assert!(p[1] > 0.5);
/// # Ok::<(), srl_learn::LearnError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LocalLogisticRegression {
    /// Hyperparameters used by each fit.
    pub params: LogisticRegressionParams,
    model: Option<LogisticRegression>,
}

impl LocalLogisticRegression {
    /// An unfitted classifier with these hyperparameters.
    #[must_use]
    pub fn new(params: LogisticRegressionParams) -> Self {
        Self {
            params,
            model: None,
        }
    }

    /// The fitted model, if any.
    #[must_use]
    pub fn model(&self) -> Option<&LogisticRegression> {
        self.model.as_ref()
    }
}

impl LocalClassifier for LocalLogisticRegression {
    type Error = LearnError;

    /// Fits a fresh model on `rows` (attributes then relational features; all rows must
    /// have the same [`FeatureRow::dim`]).
    ///
    /// # Errors
    /// As [`LogisticRegressionParams::fit_rows`]; [`LearnError::DimensionMismatch`] when
    /// rows differ in dimension.
    fn fit(
        &mut self,
        rows: &[FeatureRow<'_>],
        labels: &[u32],
        weights: Option<&[f64]>,
        num_classes: usize,
    ) -> Result<(), LearnError> {
        let d = rows.first().map_or(0, FeatureRow::dim);
        if let Some(r) = rows.iter().find(|r| r.dim() != d) {
            return Err(LearnError::DimensionMismatch {
                what: "feature row dimension",
                expected: d,
                found: r.dim(),
            });
        }
        self.model = Some(
            self.params
                .fit_generic(rows, d, labels, num_classes, weights)?,
        );
        Ok(())
    }

    /// Class probabilities; uniform before the first fit.
    ///
    /// # Panics
    /// If `out.len()` differs from the fitted number of classes or the row is wider than
    /// the rows the model was fitted on.
    fn predict_proba(&self, row: &FeatureRow<'_>, out: &mut [f64]) {
        match &self.model {
            Some(m) => {
                assert_eq!(out.len(), m.num_classes, "output length must be k");
                scores_into(&m.weights, &m.intercepts, true, row, m.num_features, out);
                softmax_in_place(out);
            }
            None => {
                let u = 1.0 / out.len().max(1) as f64;
                out.fill(u);
            }
        }
    }
}

/// Index of the largest value (lowest index on ties; 0 for an empty slice).
#[must_use]
pub(crate) fn argmax(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> (Attributes, Vec<u32>, Vec<f64>) {
        let x = vec![
            [1.0, 0.0, 2.0],
            [0.5, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [2.0, 1.0, 0.0],
            [0.0, 3.0, 1.0],
            [1.0, 1.0, 1.0],
            [0.0, 2.0, 0.0],
            [3.0, 0.0, 0.5],
            [0.5, 0.5, 2.5],
            [1.5, 2.0, 0.0],
        ];
        let values = x.iter().flatten().copied().collect();
        let y = vec![0, 1, 2, 0, 1, 2, 1, 0, 2, 1];
        let w = vec![1.0, 2.0, 0.5, 1.0, 1.0, 3.0, 1.0, 0.5, 2.0, 1.0];
        (
            Attributes::Dense {
                num_features: 3,
                values,
            },
            y,
            w,
        )
    }

    fn assert_close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < tol, "{a:?} vs {b:?}");
        }
    }

    /// Reference values from scikit-learn 1.9.1 (Python 3.11), produced by:
    ///
    /// ```text
    /// python3 -c '
    /// import numpy as np; from sklearn.linear_model import LogisticRegression
    /// X = np.array([[1,0,2],[.5,1,0],[0,0,1],[2,1,0],[0,3,1],[1,1,1],[0,2,0],[3,0,.5],[.5,.5,2.5],[1.5,2,0]])
    /// y = np.array([0,1,2,0,1,2,1,0,2,1]); sw = np.array([1,2,.5,1,1,3,1,.5,2,1.])
    /// lam = 0.25   # ours: λ‖W‖²; sklearn: ‖W‖²/(2C) + Σ loss  =>  C = 1/(2λ) = 2
    /// for w in (None, sw):
    ///     m = LogisticRegression(C=1/(2*lam), tol=1e-12, max_iter=10000).fit(X, y, sample_weight=w)
    ///     print(m.coef_.ravel().tolist(), m.intercept_.tolist(), m.predict_proba([[1,2,.5]]).tolist())'
    /// ```
    #[test]
    #[allow(clippy::type_complexity)]
    fn matches_scikit_learn_multinomial_with_c_equal_one_over_two_lambda() {
        let (x, y, sw) = fixture();
        let params = LogisticRegressionParams {
            lambda: Lambda::Fixed(0.25),
            tol: 1e-12,
            ..Default::default()
        };
        let probe = Attributes::Dense {
            num_features: 3,
            values: vec![1.0, 2.0, 0.5],
        };
        let cases: [(Option<&[f64]>, [f64; 9], [f64; 3], [f64; 3]); 2] = [
            (
                None,
                [
                    1.2551487435385593,
                    -0.853454269072196,
                    0.2462758547664923,
                    -0.6787403175334059,
                    1.1508793912301665,
                    -0.8457680500960615,
                    -0.5764084260051536,
                    -0.29742512215796973,
                    0.5994921953295695,
                ],
                [-0.6804116205164895, 0.16586790300198573, 0.5145437175145021],
                [0.07314808321776303, 0.7864441854882839, 0.1404077312939532],
            ),
            (
                Some(&sw),
                [
                    1.2904547594052582,
                    -1.1291266715617287,
                    0.26877520811831623,
                    -0.9962390593377448,
                    1.1701532375854677,
                    -1.1735814110383962,
                    -0.29421570006751313,
                    -0.04102656602373874,
                    0.9048062029200801,
                ],
                [-0.7535213533681075, 0.591278209021446, 0.16224314434666265],
                [0.03840925341657516, 0.7232722138513192, 0.23831853273210563],
            ),
        ];
        for (w, coef, icpt, proba) in cases {
            let m = params.fit(&x, &y, 3, w).unwrap();
            assert!(m.report().grad_norm < 1e-6, "{:?}", m.report());
            assert_close(m.coefficients(), &coef, 1e-5);
            // softmax intercepts are defined up to a common shift: compare centred values
            let mean = m.intercepts().iter().sum::<f64>() / 3.0;
            let centred: Vec<f64> = m.intercepts().iter().map(|b| b - mean).collect();
            assert_close(&centred, &icpt, 1e-5);
            assert_close(&m.predict_proba(probe.row(0)), &proba, 1e-6);
        }
    }

    #[test]
    fn sparse_and_dense_rows_give_the_same_model() {
        let (x, y, sw) = fixture();
        let Attributes::Dense { values, .. } = &x else {
            unreachable!()
        };
        let (mut offsets, mut indices, mut vals) = (vec![0], Vec::new(), Vec::new());
        for row in values.chunks(3) {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    indices.push(j as u32);
                    vals.push(v);
                }
            }
            offsets.push(indices.len());
        }
        let sparse = Attributes::Sparse {
            num_features: 3,
            offsets,
            indices,
            values: vals,
        };
        let p = LogisticRegressionParams::default();
        let a = p.fit(&x, &y, 3, Some(&sw)).unwrap();
        let b = p.fit(&sparse, &y, 3, Some(&sw)).unwrap();
        assert_close(a.coefficients(), b.coefficients(), 1e-9);
    }

    #[test]
    fn integer_weights_equal_repeated_rows() {
        let x = Attributes::Dense {
            num_features: 1,
            values: vec![0.0, 1.0, 2.0, 1.0],
        };
        let rep = Attributes::Dense {
            num_features: 1,
            values: vec![0.0, 1.0, 1.0, 1.0, 2.0, 1.0],
        };
        let p = LogisticRegressionParams {
            lambda: Lambda::Fixed(0.1),
            ..Default::default()
        };
        let a = p
            .fit(&x, &[0, 1, 1, 0], 2, Some(&[1.0, 3.0, 1.0, 1.0]))
            .unwrap();
        let b = p.fit(&rep, &[0, 1, 1, 1, 1, 0], 2, None).unwrap();
        assert_close(a.coefficients(), b.coefficients(), 1e-7);
    }

    #[test]
    fn serde_round_trip_and_bad_input() {
        let (x, y, _) = fixture();
        let m = LogisticRegressionParams::default()
            .fit(&x, &y, 3, None)
            .unwrap();
        let s = serde_json::to_string(&m).unwrap();
        let back: LogisticRegression = serde_json::from_str(&s).unwrap();
        assert_close(
            &back.predict_proba(x.row(2)),
            &m.predict_proba(x.row(2)),
            1e-12,
        );
        let p = LogisticRegressionParams::default();
        assert!(matches!(
            p.fit(&x, &y[..3], 3, None),
            Err(LearnError::DimensionMismatch { .. })
        ));
        assert!(matches!(
            p.fit(&x, &y, 2, None),
            Err(LearnError::LabelOutOfRange { .. })
        ));
        let w = vec![-1.0; 10];
        assert!(matches!(
            p.fit(&x, &y, 3, Some(&w)),
            Err(LearnError::InvalidValue { .. })
        ));
        let bad = LogisticRegressionParams {
            lambda: Lambda::Fixed(f64::NAN),
            ..Default::default()
        };
        assert!(matches!(
            bad.fit(&x, &y, 3, None),
            Err(LearnError::InvalidParameter { .. })
        ));
    }
}
