//! Ranking metrics over scores: the ROC curve, AUC-ROC, weighted AUC-ROC (Yang et al. 2014,
//! Eq. 5) and AUC-PR with the Davis & Goadrich (2006) interpolation.

use rayon::slice::ParallelSliceMut;
use serde::{Deserialize, Serialize};

use crate::error::EvalError;
use crate::metrics::check_scores;

/// One point of a [`RocCurve`]: the confusion counts when every instance scoring at least
/// `threshold` is predicted positive.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RocPoint {
    /// A distinct score of the input; the point predicts `score >= threshold` positive.
    pub threshold: f64,
    /// Positives scoring `>= threshold`.
    pub true_pos: u64,
    /// Negatives scoring `>= threshold`.
    pub false_pos: u64,
}

/// The ROC curve of a scoring: one point per distinct score, in decreasing score order.
///
/// Instances with equal scores form a single point (ties are one threshold), so the curve
/// joins its points by straight segments: the area under it is the Mann-Whitney statistic with
/// ties counted 1/2. The curve starts at `(0, 0)`, which is implicit (not stored), and its last
/// point is `(P, N)`.
///
/// Building it sorts the scores (`O(n log n)`: the positives' and the negatives' scores are
/// sorted apart as integer keys, in parallel with rayon, then merged); every metric of this
/// module is then a linear pass over the points, so compute several metrics from one curve.
///
/// # Examples
/// ```
/// use srl_eval::metrics::{RocCurve, WeightedAuc};
/// let curve = RocCurve::new(&[0.9, 0.8, 0.8, 0.1], &[true, true, false, false])?;
/// assert_eq!(curve.points().len(), 3); // 0.8 is one point
/// assert_eq!(curve.auc()?, 0.875);
/// let w = WeightedAuc::default().score(&curve)?;
/// assert!(w < curve.auc()?);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RocCurve {
    points: Vec<RocPoint>,
    positives: u64,
    negatives: u64,
}

impl RocCurve {
    /// Builds the curve of `scores` against `truth`.
    ///
    /// # Arguments
    /// - `scores`: one score per instance; higher means "more positive". Any non-NaN real
    ///   (`±inf` allowed); `-0.0` and `0.0` are the same score.
    /// - `truth`: `true` for positive instances, parallel to `scores`.
    ///
    /// # Errors
    /// [`EvalError::Empty`], [`EvalError::LengthMismatch`], [`EvalError::NanValue`]. A single
    /// class is accepted here; the metrics that need both classes report it.
    ///
    /// # Complexity
    /// `O(n log n)` time (parallel sort), `O(n)` memory (8 bytes per instance plus the
    /// points).
    pub fn new(scores: &[f64], truth: &[bool]) -> Result<Self, EvalError> {
        check_scores(scores, truth)?;
        // Sort the positives' and the negatives' scores apart, as order-preserving integer
        // keys (8 bytes each, integer compares), then merge the two descending runs.
        let mut pos = Vec::new();
        let mut neg = Vec::new();
        for (&s, &t) in scores.iter().zip(truth) {
            if t {
                pos.push(order_key(s));
            } else {
                neg.push(order_key(s));
            }
        }
        pos.par_sort_unstable_by(|a, b| b.cmp(a));
        neg.par_sort_unstable_by(|a, b| b.cmp(a));
        let mut points = Vec::new();
        let (mut i, mut j) = (0usize, 0usize);
        while i < pos.len() || j < neg.len() {
            // The next threshold is the larger head of the two runs.
            let k = match (pos.get(i), neg.get(j)) {
                (Some(&a), Some(&b)) => a.max(b),
                (Some(&a), None) => a,
                (None, Some(&b)) => b,
                (None, None) => break,
            };
            while pos.get(i) == Some(&k) {
                i += 1;
            }
            while neg.get(j) == Some(&k) {
                j += 1;
            }
            points.push(RocPoint {
                threshold: from_order_key(k),
                true_pos: i as u64,
                false_pos: j as u64,
            });
        }
        Ok(Self {
            points,
            positives: pos.len() as u64,
            negatives: neg.len() as u64,
        })
    }

    /// The points in decreasing threshold order (the implicit origin excluded); the last one
    /// is `(P, N)`.
    #[must_use]
    pub fn points(&self) -> &[RocPoint] {
        &self.points
    }

    /// Number of positive instances `P`.
    #[must_use]
    pub fn positives(&self) -> u64 {
        self.positives
    }

    /// Number of negative instances `N`.
    #[must_use]
    pub fn negatives(&self) -> u64 {
        self.negatives
    }

    /// `(FPR, TPR)` coordinates including the origin, for plotting.
    ///
    /// # Errors
    /// [`EvalError::SingleClass`] if a class is absent (a rate would divide by zero).
    pub fn rates(&self) -> Result<Vec<(f64, f64)>, EvalError> {
        self.both_classes("roc_curve")?;
        let (p, n) = (self.positives as f64, self.negatives as f64);
        Ok(std::iter::once((0.0, 0.0))
            .chain(
                self.points
                    .iter()
                    .map(|q| (q.false_pos as f64 / n, q.true_pos as f64 / p)),
            )
            .collect())
    }

    fn both_classes(&self, metric: &'static str) -> Result<(), EvalError> {
        if self.positives == 0 || self.negatives == 0 {
            Err(EvalError::SingleClass {
                metric,
                positives: self.positives,
                negatives: self.negatives,
            })
        } else {
            Ok(())
        }
    }

    /// Area under the ROC curve, the curve interpolated linearly between points (trapezoids).
    ///
    /// Equals the Mann-Whitney probability `Pr(s⁺ > s⁻) + ½ Pr(s⁺ = s⁻)` over pairs of a
    /// positive and a negative instance; computed exactly in integer arithmetic
    /// (`Σ ΔFP · (TP_prev + TP) / (2 P N)`) and rounded once.
    ///
    /// # Returns
    /// A value in `[0, 1]`; 1 for a perfect ranking, 0.5 for all-equal scores.
    ///
    /// # Errors
    /// [`EvalError::SingleClass`] if only one class is present.
    ///
    /// # Complexity
    /// `O(points)`.
    ///
    /// # References
    /// Fawcett 2006, "An introduction to ROC analysis", Algorithm 3 (trapezoids with ties);
    /// Hanley & McNeil 1982 for the Mann-Whitney equivalence.
    pub fn auc(&self) -> Result<f64, EvalError> {
        self.both_classes("auc_roc")?;
        let (mut prev_tp, mut prev_fp) = (0u64, 0u64);
        let mut twice_area: u128 = 0;
        for q in &self.points {
            let dfp = u128::from(q.false_pos - prev_fp);
            twice_area += dfp * u128::from(q.true_pos + prev_tp);
            prev_tp = q.true_pos;
            prev_fp = q.false_pos;
        }
        let denom = 2.0 * self.positives as f64 * self.negatives as f64;
        Ok(twice_area as f64 / denom)
    }

    /// Area under the precision-recall curve with the Davis & Goadrich (2006) interpolation,
    /// as computed by their AUCCalculator (the evaluation BoostSRL runs).
    ///
    /// Procedure, on the confusion points `(TP, FP)` of this curve:
    /// 1. points with `TP = 0` are dropped (their precision is undefined);
    /// 2. if the first remaining point has `TP₁ > 1`, the point `(1, FP₁ / TP₁)` is put before
    ///    it (the first precision, extended down to one true positive);
    /// 3. between consecutive points `A → B`, every intermediate integer `TP_A + x`
    ///    (`x = 1 … TP_B − TP_A`) gets `FP = FP_A + x · (FP_B − FP_A) / (TP_B − TP_A)`: the
    ///    D&G interpolation, which is a straight line in ROC space but a curve in PR space;
    /// 4. the area is the rectangle from recall 0 to the first point's recall at its precision,
    ///    plus trapezoids between consecutive (interpolated) points in (recall, precision).
    ///
    /// # Returns
    /// A value in `(0, 1]`; 1 for a perfect ranking, and 1 when every instance is positive.
    ///
    /// # Errors
    /// [`EvalError::SingleClass`] if there is no positive instance (recall is undefined).
    ///
    /// # Complexity
    /// `O(points + P)`: one step per true positive.
    ///
    /// # References
    /// Davis & Goadrich 2006, "The relationship between precision-recall and ROC curves",
    /// ICML, Section 4 (interpolation); AUCCalculator 0.2 (`Confusion.calculateAUCPR` with
    /// minimum recall 0), used by BoostSRL and hence by Yang et al. 2014.
    pub fn auc_pr(&self) -> Result<f64, EvalError> {
        if self.positives == 0 {
            return Err(EvalError::SingleClass {
                metric: "auc_pr",
                positives: 0,
                negatives: self.negatives,
            });
        }
        let p_total = self.positives as f64;
        let mut real = self.points.iter().filter(|q| q.true_pos > 0);
        // A positive exists, so some point has TP > 0.
        let Some(first) = real.next() else {
            return Err(EvalError::SingleClass {
                metric: "auc_pr",
                positives: 0,
                negatives: self.negatives,
            });
        };
        // Start point (TP = 1, or the first real point if it already has TP = 1).
        let start_fp = first.false_pos as f64 / first.true_pos as f64;
        let (mut a_tp, mut a_fp) = (1.0f64, start_fp);
        let mut prev_recall = 1.0 / p_total;
        let mut prev_prec = 1.0 / (1.0 + start_fp);
        let mut area = prev_recall * prev_prec;
        for q in std::iter::once(first).chain(real) {
            let (b_tp, b_fp) = (q.true_pos as f64, q.false_pos as f64);
            let steps = q.true_pos - a_tp as u64;
            if steps > 0 {
                let skew = (b_fp - a_fp) / steps as f64;
                for x in 1..=steps {
                    let tp = a_tp + x as f64;
                    let fp = a_fp + x as f64 * skew;
                    let recall = tp / p_total;
                    let prec = tp / (tp + fp);
                    area += (recall - prev_recall) * 0.5 * (prec + prev_prec);
                    prev_recall = recall;
                    prev_prec = prec;
                }
            } else {
                // Same recall, more false positives: precision drops, no area.
                prev_prec = b_tp / (b_tp + b_fp);
            }
            a_tp = b_tp;
            a_fp = b_fp;
        }
        Ok(area)
    }
}

/// A `u64` whose unsigned order is the numeric order of the (non-NaN) `x`; `-0.0` and `0.0`
/// get the same key.
#[inline]
fn order_key(x: f64) -> u64 {
    let bits = (x + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The inverse of [`order_key`].
#[inline]
fn from_order_key(k: u64) -> f64 {
    if k >> 63 == 1 {
        f64::from_bits(k & !(1 << 63))
    } else {
        f64::from_bits(!k)
    }
}

/// Area under the ROC curve of `scores` against `truth` (ties as one point; trapezoids).
///
/// Shorthand for `RocCurve::new(scores, truth)?.auc()`; see [`RocCurve::auc`].
///
/// # Errors
/// [`EvalError::Empty`], [`EvalError::LengthMismatch`], [`EvalError::NanValue`],
/// [`EvalError::SingleClass`].
///
/// # Complexity
/// `O(n log n)` (the sort).
///
/// # Examples
/// ```
/// let auc = srl_eval::metrics::auc_roc(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true])?;
/// assert_eq!(auc, 0.75);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn auc_roc(scores: &[f64], truth: &[bool]) -> Result<f64, EvalError> {
    RocCurve::new(scores, truth)?.auc()
}

/// Area under the precision-recall curve with the Davis & Goadrich interpolation.
///
/// Shorthand for `RocCurve::new(scores, truth)?.auc_pr()`; see [`RocCurve::auc_pr`].
///
/// # Errors
/// [`EvalError::Empty`], [`EvalError::LengthMismatch`], [`EvalError::NanValue`],
/// [`EvalError::SingleClass`] when no instance is positive.
///
/// # Complexity
/// `O(n log n)` (the sort).
///
/// # Examples
/// ```
/// let ap = srl_eval::metrics::auc_pr(&[0.9, 0.8, 0.1], &[true, true, false])?;
/// assert_eq!(ap, 1.0);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn auc_pr(scores: &[f64], truth: &[bool]) -> Result<f64, EvalError> {
    RocCurve::new(scores, truth)?.auc_pr()
}

/// Weighted AUC-ROC of Yang et al. 2014 (Eq. 5, after Weng & Poon 2008): the ROC plot's
/// true-positive-rate axis is cut into `N + 1` equal horizontal strips and the area of each
/// strip under the curve is weighted, the top (high-recall) strips most.
///
/// Weights: `W(0) = 1 − γ`; `W(x) = W(x−1) γ + (1 − γ)` for `0 < x < N`;
/// `W(N) = (W(N−1) γ + (1 − γ)) / (1 − γ)`. In closed form `W(x) = 1 − γ^{x+1}` for `x < N`
/// and `W(N) = 1 + γ + … + γ^N`, so the weights sum to `N + 1` and a perfect ranking (every
/// strip full, area `1/(N+1)` each) scores exactly 1. Score `= Σ_x W(x) · A_x`, where `A_x`
/// is the integral of `1 − FPR` over strip `x`'s TPR range `[x/(N+1), (x+1)/(N+1)]`, the ROC
/// curve interpolated linearly between its points and ties in scores forming one point.
/// With `γ = 0` every weight is 1 and the score is the plain AUC-ROC; a random ranking (the
/// diagonal) scores `≈ 0.243` with the defaults.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `n` | 5 | `N`: the plot has `N + 1` strips, `x = 0` the bottom one | `1 <= n <= 10^6` |
/// | `gamma` | 0.8 | `γ`: how much weight moves up to the high-recall strips | `0 <= gamma < 1` |
///
/// The defaults are the paper's (Section V.B: "N = 5 and γ = 0.8"); the weights are then
/// 0.2, 0.36, 0.488, 0.5904, 0.67232, 3.68928.
///
/// # References
/// Yang, Khot, Kersting, Natarajan 2014, "Learning from imbalanced data in relational
/// domains: a soft margin approach", ICDM, Section V.B, Eq. 5 (with their correction
/// `W(0) = 1 − γ`); Weng & Poon 2008, "A new evaluation measure for imbalanced datasets",
/// AusDM.
///
/// # Examples
/// ```
/// use srl_eval::metrics::WeightedAuc;
/// let w = WeightedAuc::default();
/// let weights = w.weights()?;
/// assert!((weights.iter().sum::<f64>() - 6.0).abs() < 1e-12);
/// let perfect = w.compute(&[0.9, 0.8, 0.3, 0.1], &[true, true, false, false])?;
/// assert!((perfect - 1.0).abs() < 1e-12);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WeightedAuc {
    /// `N` in Eq. 5: the TPR axis is cut into `N + 1` strips. In `1..=10^6`.
    pub n: usize,
    /// `γ` in Eq. 5, in `[0, 1)`.
    pub gamma: f64,
}

/// Largest `N` accepted (a guard against absurd allocations; the paper uses 5).
const MAX_STRIPS: usize = 1_000_000;

impl Default for WeightedAuc {
    /// The paper's settings, `N = 5`, `γ = 0.8`.
    fn default() -> Self {
        Self { n: 5, gamma: 0.8 }
    }
}

impl WeightedAuc {
    fn validate(&self) -> Result<(), EvalError> {
        if self.n == 0 || self.n > MAX_STRIPS {
            return Err(EvalError::InvalidParameter {
                name: "n",
                value: self.n as f64,
                expected: "1 <= n <= 1000000",
            });
        }
        if !(self.gamma >= 0.0 && self.gamma < 1.0) {
            return Err(EvalError::InvalidParameter {
                name: "gamma",
                value: self.gamma,
                expected: "0 <= gamma < 1",
            });
        }
        Ok(())
    }

    /// The strip weights `W(0), …, W(N)` of Eq. 5, bottom strip first; they sum to `N + 1`.
    ///
    /// # Errors
    /// [`EvalError::InvalidParameter`] for `n` outside `1..=10^6` or `gamma` outside `[0, 1)`.
    pub fn weights(&self) -> Result<Vec<f64>, EvalError> {
        self.validate()?;
        let g = self.gamma;
        let mut w = Vec::with_capacity(self.n + 1);
        w.push(1.0 - g);
        for x in 1..=self.n {
            let next = w[x - 1] * g + (1.0 - g);
            w.push(if x == self.n { next / (1.0 - g) } else { next });
        }
        Ok(w)
    }

    /// The weighted AUC-ROC of a ROC curve.
    ///
    /// # Returns
    /// A value in `[0, 1]` (1 for a perfect ranking).
    ///
    /// # Errors
    /// [`EvalError::InvalidParameter`] for bad parameters, [`EvalError::SingleClass`] if a
    /// class is absent.
    ///
    /// # Complexity
    /// `O(points + N)`.
    pub fn score(&self, curve: &RocCurve) -> Result<f64, EvalError> {
        let weights = self.weights()?;
        curve.both_classes("weighted_auc_roc")?;
        let strips = (self.n + 1) as f64;
        let (p, n) = (curve.positives as f64, curve.negatives as f64);
        let mut total = 0.0;
        let (mut t0, mut f0) = (0.0f64, 0.0f64);
        // Strips are visited bottom-up as the curve's TPR grows.
        let mut x = 0usize;
        for q in &curve.points {
            let (t1, f1) = (q.true_pos as f64 / p, q.false_pos as f64 / n);
            if t1 > t0 {
                // The segment (f0, t0) → (f1, t1); FPR is linear in TPR along it.
                loop {
                    let lo = (x as f64 / strips).max(t0);
                    let hi = ((x + 1) as f64 / strips).min(t1);
                    if hi > lo {
                        let mid = 0.5 * (lo + hi);
                        let fpr_mid = f0 + (f1 - f0) * (mid - t0) / (t1 - t0);
                        total += weights[x] * (hi - lo) * (1.0 - fpr_mid);
                    }
                    // Move to the next strip only if this segment reaches past this one.
                    if x < self.n && t1 > (x + 1) as f64 / strips {
                        x += 1;
                    } else {
                        break;
                    }
                }
            }
            t0 = t1;
            f0 = f1;
        }
        Ok(total)
    }

    /// The weighted AUC-ROC of `scores` against `truth`: [`RocCurve::new`] then
    /// [`WeightedAuc::score`].
    ///
    /// # Errors
    /// As [`RocCurve::new`] and [`WeightedAuc::score`].
    ///
    /// # Complexity
    /// `O(n log n + N)`.
    pub fn compute(&self, scores: &[f64], truth: &[bool]) -> Result<f64, EvalError> {
        self.validate()?;
        self.score(&RocCurve::new(scores, truth)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_weights() {
        let w = WeightedAuc::default().weights().unwrap();
        let expect = [0.2, 0.36, 0.488, 0.5904, 0.67232, 3.68928];
        assert_eq!(w.len(), 6);
        for (a, b) in w.iter().zip(expect) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
        assert!((w.iter().sum::<f64>() - 6.0).abs() < 1e-12);
    }

    #[test]
    fn weights_sum_to_strips_for_any_gamma() {
        for n in 1..8 {
            for g in [0.0, 0.1, 0.5, 0.9, 0.99] {
                let w = WeightedAuc { n, gamma: g }.weights().unwrap();
                let s: f64 = w.iter().sum();
                assert!((s - (n + 1) as f64).abs() < 1e-9, "n={n} g={g} sum={s}");
            }
        }
    }

    #[test]
    fn bad_parameters() {
        for (n, g) in [
            (0, 0.5),
            (usize::MAX, 0.5),
            (5, 1.0),
            (5, -0.1),
            (5, f64::NAN),
        ] {
            assert!(matches!(
                WeightedAuc { n, gamma: g }.weights(),
                Err(EvalError::InvalidParameter { .. })
            ));
        }
    }

    #[test]
    fn diagonal_curve_has_closed_form() {
        // Each threshold adds one positive and one negative: the ROC curve is the diagonal.
        let k = 60;
        let scores: Vec<f64> = (0..2 * k).map(|i| (i / 2) as f64).collect();
        let truth: Vec<bool> = (0..2 * k).map(|i| i % 2 == 0).collect();
        let curve = RocCurve::new(&scores, &truth).unwrap();
        assert_eq!(curve.auc().unwrap(), 0.5);
        // A_x = (11 - 2x) / 72 for strips of height 1/6 under FPR = TPR.
        let w = WeightedAuc::default().weights().unwrap();
        let expect: f64 = (0..6).map(|x| w[x] * (11.0 - 2.0 * x as f64) / 72.0).sum();
        let got = WeightedAuc::default().score(&curve).unwrap();
        assert!((got - expect).abs() < 1e-12, "{got} vs {expect}");
        assert!((expect - 0.243_253_333_333_333_3).abs() < 1e-12);
    }

    #[test]
    fn gamma_zero_is_plain_auc() {
        let scores = [0.3, 0.1, 0.7, 0.7, 0.2, 0.9, 0.5, 0.5, 0.4];
        let truth = [true, false, true, false, false, true, true, false, false];
        let curve = RocCurve::new(&scores, &truth).unwrap();
        for n in 1..7 {
            let w = WeightedAuc { n, gamma: 0.0 }.score(&curve).unwrap();
            assert!((w - curve.auc().unwrap()).abs() < 1e-12);
        }
    }

    #[test]
    fn single_class_and_nan() {
        assert!(matches!(
            auc_roc(&[0.1, 0.2], &[true, true]),
            Err(EvalError::SingleClass {
                positives: 2,
                negatives: 0,
                ..
            })
        ));
        assert!(auc_pr(&[0.1, 0.2], &[false, false]).is_err());
        assert_eq!(auc_pr(&[0.1, 0.2], &[true, true]).unwrap(), 1.0);
        assert!(
            WeightedAuc::default()
                .compute(&[0.1, 0.2], &[false, false])
                .is_err()
        );
        assert!(matches!(
            auc_roc(&[0.1, f64::NAN], &[true, false]),
            Err(EvalError::NanValue { index: 1, .. })
        ));
        assert!(matches!(auc_roc(&[], &[]), Err(EvalError::Empty { .. })));
    }

    #[test]
    fn order_keys_preserve_order_and_round_trip() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -1.5,
            -f64::MIN_POSITIVE,
            0.0,
            f64::MIN_POSITIVE,
            0.25,
            3.0,
            f64::MAX,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(order_key(w[0]) < order_key(w[1]), "{} < {}", w[0], w[1]);
        }
        for x in xs {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
        assert_eq!(order_key(-0.0), order_key(0.0));
    }

    #[test]
    fn negative_zero_ties_with_zero() {
        let c = RocCurve::new(&[0.0, -0.0, 1.0], &[true, false, true]).unwrap();
        assert_eq!(c.points().len(), 2);
        assert_eq!(c.auc().unwrap(), 0.75);
    }
}
