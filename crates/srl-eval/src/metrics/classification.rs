//! Label metrics: accuracy, agreement (ECA), and the binary confusion counts with the
//! ratios derived from them (precision, recall, false-negative rate, F-beta).

use serde::{Deserialize, Serialize};

use crate::error::EvalError;
use crate::metrics::check_scores;

/// Checks that two parallel slices are non-empty and of equal length.
pub(crate) fn check_parallel<A, B>(
    first: &[A],
    first_name: &'static str,
    second: &[B],
    second_name: &'static str,
) -> Result<(), EvalError> {
    if first.is_empty() {
        return Err(EvalError::Empty { what: first_name });
    }
    if first.len() != second.len() {
        return Err(EvalError::LengthMismatch {
            what: second_name,
            expected: first.len(),
            found: second.len(),
        });
    }
    Ok(())
}

/// Accuracy: the fraction of instances whose predicted label equals the true label.
///
/// `accuracy = |{i : predicted[i] = truth[i]}| / n`.
///
/// # Arguments
/// - `predicted`: one predicted label per instance (any comparable label type).
/// - `truth`: the true labels, parallel to `predicted`.
///
/// # Returns
/// A value in `[0, 1]`.
///
/// # Errors
/// [`EvalError::Empty`] if `predicted` is empty, [`EvalError::LengthMismatch`] if the lengths
/// differ.
///
/// # Complexity
/// `O(n)`.
///
/// # References
/// The metric of collective classification (Sen et al. 2008, "Collective classification in
/// network data", AI Magazine; the course slides' Cora/Citeseer tables).
///
/// # Examples
/// ```
/// let acc = srl_eval::metrics::accuracy(&[0, 1, 2, 2], &[0, 1, 1, 2])?;
/// assert_eq!(acc, 0.75);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn accuracy<T: PartialEq>(predicted: &[T], truth: &[T]) -> Result<f64, EvalError> {
    check_parallel(predicted, "predicted", truth, "truth")?;
    let same = predicted.iter().zip(truth).filter(|(p, t)| p == t).count();
    Ok(same as f64 / predicted.len() as f64)
}

/// Mean conditional log-likelihood (CLL) of binary predictions: `(1/n) Σ ln P(yᵢ)` with
/// `P(yᵢ) = pᵢ` for a positive and `1 − pᵢ` for a negative, each `pᵢ` clipped to
/// `[1e-12, 1 − 1e-12]` so that one confident mistake costs a large but finite penalty
/// (at most `ln 1e-12 ≈ −27.6` per instance). Range `[−27.6, 0]`, higher is better; the
/// CLL column of Yang et al. 2014 (Soft-RFGB) and BoostSRL's test report.
///
/// # Errors
/// [`EvalError::Empty`], [`EvalError::LengthMismatch`], [`EvalError::NanValue`] (a NaN
/// probability).
///
/// # Examples
/// ```
/// let cll = srl_eval::metrics::conditional_log_likelihood(&[0.5, 0.5], &[true, false])?;
/// assert!((cll - 0.5f64.ln()).abs() < 1e-15);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn conditional_log_likelihood(probs: &[f64], truth: &[bool]) -> Result<f64, EvalError> {
    check_parallel(probs, "probabilities", truth, "truth")?;
    if let Some(index) = probs.iter().position(|p| p.is_nan()) {
        return Err(EvalError::NanValue {
            what: "probabilities",
            index,
        });
    }
    let sum: f64 = truth
        .iter()
        .zip(probs)
        .map(|(&y, &p)| {
            let p = p.clamp(1e-12, 1.0 - 1e-12);
            if y { p.ln() } else { (1.0 - p).ln() }
        })
        .sum();
    Ok(sum / probs.len() as f64)
}

/// Empirical classification agreement: the fraction of instances two classifiers label the
/// same (the empirical counterpart of the expected classification agreement, ECA).
///
/// `agreement = |{i : a[i] = b[i]}| / n`, the plug-in estimate of
/// `ECA(α, β) = Σ_x Pr(x) · 1[α(x) = β(x)]` on a test set drawn from `Pr`.
///
/// # Arguments
/// - `a`: labels given by the first (e.g. original) classifier to each test instance.
/// - `b`: labels given by the second (e.g. trimmed) classifier, parallel to `a`.
///
/// # Returns
/// A value in `[0, 1]`; 1 when the classifiers agree everywhere.
///
/// # Errors
/// [`EvalError::Empty`] if `a` is empty, [`EvalError::LengthMismatch`] if the lengths differ.
///
/// # Complexity
/// `O(n)`.
///
/// # References
/// Choi, Darwiche et al. 2018, "Robust trimming of Bayesian network classifiers",
/// Definition 2 (ECA); the empirical agreement is what their experiments report on a test
/// split.
///
/// # Examples
/// ```
/// let eca = srl_eval::metrics::agreement(&[true, true, false, false], &[true, false, false, false])?;
/// assert_eq!(eca, 0.75);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn agreement<T: PartialEq>(a: &[T], b: &[T]) -> Result<f64, EvalError> {
    check_parallel(a, "a", b, "b")?;
    let same = a.iter().zip(b).filter(|(x, y)| x == y).count();
    Ok(same as f64 / a.len() as f64)
}

/// Binary confusion counts: true/false positives and negatives.
///
/// Built from hard predictions ([`Confusion::from_predictions`]) or from scores and a
/// threshold ([`Confusion::at_threshold`]); the ratio metrics are methods. Counts are `u64`
/// so that sums over folds do not overflow.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    /// Positives predicted positive.
    pub true_pos: u64,
    /// Negatives predicted positive.
    pub false_pos: u64,
    /// Negatives predicted negative.
    pub true_neg: u64,
    /// Positives predicted negative.
    pub false_neg: u64,
}

impl Confusion {
    /// Counts from hard binary predictions (`true` = positive class).
    ///
    /// # Errors
    /// [`EvalError::Empty`] for empty input, [`EvalError::LengthMismatch`] if `truth` is not
    /// as long as `predicted`.
    ///
    /// # Complexity
    /// `O(n)`.
    ///
    /// # Examples
    /// ```
    /// use srl_eval::metrics::Confusion;
    /// let c = Confusion::from_predictions(&[true, true, false, false], &[true, false, true, false])?;
    /// assert_eq!((c.true_pos, c.false_pos, c.false_neg, c.true_neg), (1, 1, 1, 1));
    /// # Ok::<(), srl_eval::EvalError>(())
    /// ```
    pub fn from_predictions(predicted: &[bool], truth: &[bool]) -> Result<Self, EvalError> {
        check_parallel(predicted, "predicted", truth, "truth")?;
        let mut c = Self::default();
        for (&p, &t) in predicted.iter().zip(truth) {
            c.add(p, t);
        }
        Ok(c)
    }

    /// Counts at a decision threshold: instance `i` is predicted positive iff
    /// `scores[i] >= threshold`.
    ///
    /// Yang et al. 2014 (Section V.C) use the positive fraction `#pos / (#pos + #neg)` of the
    /// test set as the threshold on predicted probabilities; pass it here.
    ///
    /// # Arguments
    /// - `scores`: one score per instance (a probability or any real; higher = more positive).
    /// - `truth`: `true` for positive instances, parallel to `scores`.
    /// - `threshold`: any non-NaN real (`±inf` allowed).
    ///
    /// # Errors
    /// [`EvalError::Empty`], [`EvalError::LengthMismatch`], [`EvalError::NanValue`] for a NaN
    /// score, [`EvalError::InvalidParameter`] for a NaN threshold.
    ///
    /// # Complexity
    /// `O(n)`.
    ///
    /// # Examples
    /// ```
    /// use srl_eval::metrics::Confusion;
    /// let c = Confusion::at_threshold(&[0.9, 0.4, 0.6, 0.1], &[true, true, false, false], 0.5)?;
    /// assert_eq!(c.false_negative_rate()?, 0.5);
    /// # Ok::<(), srl_eval::EvalError>(())
    /// ```
    pub fn at_threshold(scores: &[f64], truth: &[bool], threshold: f64) -> Result<Self, EvalError> {
        check_scores(scores, truth)?;
        if threshold.is_nan() {
            return Err(EvalError::InvalidParameter {
                name: "threshold",
                value: threshold,
                expected: "a number (not NaN)",
            });
        }
        let mut c = Self::default();
        for (&s, &t) in scores.iter().zip(truth) {
            c.add(s >= threshold, t);
        }
        Ok(c)
    }

    /// Adds one instance with prediction `predicted` and truth `truth`.
    pub fn add(&mut self, predicted: bool, truth: bool) {
        match (predicted, truth) {
            (true, true) => self.true_pos += 1,
            (true, false) => self.false_pos += 1,
            (false, false) => self.true_neg += 1,
            (false, true) => self.false_neg += 1,
        }
    }

    /// Element-wise sum (pooling the counts of several folds).
    #[must_use]
    pub fn merged(self, other: Self) -> Self {
        Self {
            true_pos: self.true_pos + other.true_pos,
            false_pos: self.false_pos + other.false_pos,
            true_neg: self.true_neg + other.true_neg,
            false_neg: self.false_neg + other.false_neg,
        }
    }

    /// Number of instances counted.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.true_pos + self.false_pos + self.true_neg + self.false_neg
    }

    /// Number of truly positive instances, `TP + FN`.
    #[must_use]
    pub fn positives(&self) -> u64 {
        self.true_pos + self.false_neg
    }

    /// Number of truly negative instances, `TN + FP`.
    #[must_use]
    pub fn negatives(&self) -> u64 {
        self.true_neg + self.false_pos
    }

    /// Accuracy `(TP + TN) / n`, in `[0, 1]`.
    ///
    /// # Errors
    /// [`EvalError::Undefined`] if no instance was counted.
    pub fn accuracy(&self) -> Result<f64, EvalError> {
        ratio(
            self.true_pos + self.true_neg,
            self.total(),
            "accuracy",
            "no instances",
        )
    }

    /// Precision `TP / (TP + FP)`, in `[0, 1]`.
    ///
    /// # Errors
    /// [`EvalError::Undefined`] if nothing is predicted positive.
    pub fn precision(&self) -> Result<f64, EvalError> {
        ratio(
            self.true_pos,
            self.true_pos + self.false_pos,
            "precision",
            "no predicted positives",
        )
    }

    /// Recall (true-positive rate) `TP / (TP + FN)`, in `[0, 1]`.
    ///
    /// # Errors
    /// [`EvalError::Undefined`] if there is no positive instance.
    pub fn recall(&self) -> Result<f64, EvalError> {
        ratio(
            self.true_pos,
            self.positives(),
            "recall",
            "no positive instances",
        )
    }

    /// False-negative rate `FN / (FN + TP)` = `1 − recall`, in `[0, 1]`.
    ///
    /// # Errors
    /// [`EvalError::Undefined`] if there is no positive instance.
    ///
    /// # References
    /// Yang et al. 2014, "Learning from imbalanced data in relational domains: a soft margin
    /// approach", Section V.B, first metric.
    pub fn false_negative_rate(&self) -> Result<f64, EvalError> {
        ratio(
            self.false_neg,
            self.positives(),
            "false_negative_rate",
            "no positive instances",
        )
    }

    /// The F-measure `F_δ = (1 + δ²) · P · R / (δ² · P + R)` (Yang et al. 2014, Eq. 4); `F5`
    /// is `delta = 5`.
    ///
    /// Computed in the equivalent count form `(1 + δ²) TP / ((1 + δ²) TP + δ² FN + FP)`, which
    /// agrees with Eq. 4 whenever `P` and `R` are defined and not both zero, and gives 0 (as
    /// scikit-learn's `fbeta_score` does) when `TP = 0` but some positive exists in the truth
    /// or the prediction.
    ///
    /// # Arguments
    /// - `delta`: the recall weight `δ > 0`, finite (`δ → ∞` tends to recall, `δ → 0` to
    ///   precision).
    ///
    /// # Returns
    /// A value in `[0, 1]`.
    ///
    /// # Errors
    /// [`EvalError::InvalidParameter`] for `δ` not finite and positive;
    /// [`EvalError::Undefined`] if there is no positive instance and no predicted positive.
    ///
    /// # References
    /// Yang et al. 2014, Section V.B, Eq. 4 (after van Rijsbergen 1979).
    ///
    /// # Examples
    /// ```
    /// use srl_eval::metrics::Confusion;
    /// let c = Confusion { true_pos: 3, false_pos: 1, true_neg: 4, false_neg: 2 };
    /// let (p, r) = (0.75, 0.6);
    /// let eq4 = 26.0 * p * r / (25.0 * p + r);
    /// assert!((c.f_beta(5.0)? - eq4).abs() < 1e-12);
    /// # Ok::<(), srl_eval::EvalError>(())
    /// ```
    pub fn f_beta(&self, delta: f64) -> Result<f64, EvalError> {
        if !(delta.is_finite() && delta > 0.0) {
            return Err(EvalError::InvalidParameter {
                name: "delta",
                value: delta,
                expected: "a finite number > 0",
            });
        }
        let d2 = delta * delta;
        let tp = self.true_pos as f64;
        let denom = (1.0 + d2) * tp + d2 * self.false_neg as f64 + self.false_pos as f64;
        if denom == 0.0 {
            return Err(EvalError::Undefined {
                metric: "f_beta",
                reason: "no positive instances and no predicted positives",
            });
        }
        Ok((1.0 + d2) * tp / denom)
    }
}

fn ratio(num: u64, den: u64, metric: &'static str, reason: &'static str) -> Result<f64, EvalError> {
    if den == 0 {
        Err(EvalError::Undefined { metric, reason })
    } else {
        Ok(num as f64 / den as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_and_errors() {
        assert_eq!(accuracy(&[1, 2, 3], &[1, 2, 4]).unwrap(), 2.0 / 3.0);
        assert_eq!(
            accuracy::<u32>(&[], &[]),
            Err(EvalError::Empty { what: "predicted" })
        );
        assert!(matches!(
            accuracy(&[1], &[1, 2]),
            Err(EvalError::LengthMismatch {
                expected: 1,
                found: 2,
                ..
            })
        ));
        assert_eq!(agreement(&['a', 'b'], &['a', 'b']).unwrap(), 1.0);
    }

    #[test]
    fn confusion_ratios() {
        let c = Confusion::at_threshold(
            &[0.9, 0.8, 0.7, 0.3, 0.2, 0.5],
            &[true, true, false, true, false, false],
            0.5,
        )
        .unwrap();
        assert_eq!(
            c,
            Confusion {
                true_pos: 2,
                false_pos: 2,
                true_neg: 1,
                false_neg: 1
            }
        );
        assert_eq!(c.precision().unwrap(), 0.5);
        assert_eq!(c.recall().unwrap(), 2.0 / 3.0);
        assert_eq!(c.false_negative_rate().unwrap(), 1.0 / 3.0);
        assert_eq!(c.accuracy().unwrap(), 0.5);
        // F1 = harmonic mean of P and R.
        let f1 = 2.0 * 0.5 * (2.0 / 3.0) / (0.5 + 2.0 / 3.0);
        assert!((c.f_beta(1.0).unwrap() - f1).abs() < 1e-15);
    }

    #[test]
    fn undefined_ratios_are_errors() {
        let none_predicted = Confusion {
            true_pos: 0,
            false_pos: 0,
            true_neg: 3,
            false_neg: 2,
        };
        assert!(matches!(
            none_predicted.precision(),
            Err(EvalError::Undefined { .. })
        ));
        assert_eq!(none_predicted.f_beta(5.0).unwrap(), 0.0);
        let all_negative = Confusion {
            true_neg: 4,
            ..Confusion::default()
        };
        assert!(all_negative.recall().is_err());
        assert!(all_negative.false_negative_rate().is_err());
        assert!(all_negative.f_beta(5.0).is_err());
        assert!(Confusion::default().accuracy().is_err());
        assert!(all_negative.f_beta(0.0).is_err());
        assert!(all_negative.f_beta(f64::NAN).is_err());
        assert!(Confusion::at_threshold(&[0.1], &[true], f64::NAN).is_err());
        assert!(matches!(
            Confusion::at_threshold(&[0.1, f64::NAN], &[true, false], 0.5),
            Err(EvalError::NanValue { index: 1, .. })
        ));
    }

    #[test]
    fn f_beta_limits() {
        let c = Confusion {
            true_pos: 3,
            false_pos: 5,
            true_neg: 1,
            false_neg: 1,
        };
        let (p, r) = (c.precision().unwrap(), c.recall().unwrap());
        assert!((c.f_beta(1e4).unwrap() - r).abs() < 1e-6);
        assert!((c.f_beta(1e-4).unwrap() - p).abs() < 1e-6);
    }
}
