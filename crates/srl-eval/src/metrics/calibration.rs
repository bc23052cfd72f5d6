//! Calibration of predicted class probabilities: the Brier score and the reliability
//! curve with its expected calibration error. Expected-cost decisions
//! (`srl_learn::min_expected_cost`, Sen & Getoor 2006 §4 for the node-only rule) are
//! only as good as the probabilities they take, so their reports carry these checks.

use serde::{Deserialize, Serialize};

use crate::error::EvalError;

/// Checks an `n × k` row-major probability matrix against `n` labels below `k`.
fn check_proba(proba: &[f64], k: usize, truth: &[u32]) -> Result<usize, EvalError> {
    if k == 0 {
        return Err(EvalError::InvalidParameter {
            name: "k",
            value: 0.0,
            expected: "at least 1 class",
        });
    }
    let n = truth.len();
    if n == 0 {
        return Err(EvalError::Empty { what: "truth" });
    }
    let want = n.checked_mul(k).ok_or(EvalError::LengthMismatch {
        what: "probabilities",
        expected: usize::MAX,
        found: proba.len(),
    })?;
    if proba.len() != want {
        return Err(EvalError::LengthMismatch {
            what: "probabilities",
            expected: want,
            found: proba.len(),
        });
    }
    if let Some(index) = proba
        .iter()
        .position(|p| !(p.is_finite() && (0.0..=1.0).contains(p)))
    {
        return Err(EvalError::InvalidParameter {
            name: "probabilities",
            value: proba[index],
            expected: "finite probabilities in [0, 1]",
        });
    }
    if let Some(index) = truth.iter().position(|&t| t as usize >= k) {
        return Err(EvalError::LabelOutOfRange {
            what: "truth",
            index,
            label: truth[index],
            num_labels: k,
        });
    }
    Ok(n)
}

/// The multiclass Brier score (Brier 1950): `(1/n) Σ_i Σ_c (p_ic − [y_i = c])²`.
///
/// # Arguments
/// - `proba`: `n × k` row-major predicted probabilities in `[0, 1]` (rows are not
///   required to sum to 1; the score of an unnormalised row is what it is).
/// - `k`: number of classes, `>= 1`.
/// - `truth`: `n` labels in `0..k`.
///
/// # Returns
/// A value in `[0, 2]`, lower is better; 0 for certain, correct predictions. For two
/// classes it is twice scikit-learn's `brier_score_loss(y, p_positive)` (which sums over
/// the positive class only).
///
/// # Errors
/// [`EvalError::Empty`] without rows, [`EvalError::LengthMismatch`] when `proba` is not
/// `n × k`, [`EvalError::InvalidParameter`] for `k = 0` or a probability outside `[0, 1]`
/// (NaN included), [`EvalError::LabelOutOfRange`] for a label `>= k`.
///
/// # Examples
/// ```
/// let b = srl_eval::metrics::brier_score(&[0.8, 0.2, 0.3, 0.7], 2, &[0, 0])?;
/// // (0.2² + 0.2²) + (0.7² + 0.7²), averaged over 2 rows
/// assert!((b - 0.53).abs() < 1e-12);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn brier_score(proba: &[f64], k: usize, truth: &[u32]) -> Result<f64, EvalError> {
    let n = check_proba(proba, k, truth)?;
    let total: f64 = proba
        .chunks_exact(k)
        .zip(truth)
        .map(|(row, &t)| {
            row.iter()
                .enumerate()
                .map(|(c, &p)| {
                    let d = p - if c == t as usize { 1.0 } else { 0.0 };
                    d * d
                })
                .sum::<f64>()
        })
        .sum();
    Ok(total / n as f64)
}

/// One bin of a [`ReliabilityCurve`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityBin {
    /// Lower edge of the bin (inclusive), in `[0, 1]`.
    pub lower: f64,
    /// Upper edge (exclusive, but the last bin includes 1).
    pub upper: f64,
    /// Number of predictions in the bin.
    pub count: usize,
    /// Mean predicted probability of the bin's predictions (NaN for an empty bin).
    pub mean_predicted: f64,
    /// Fraction of the bin's predictions that came true (NaN for an empty bin).
    pub observed_frequency: f64,
}

/// A reliability curve (reliability diagram) with its expected calibration error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityCurve {
    /// `bins` equal-width bins over `[0, 1]`, empty ones included.
    pub bins: Vec<ReliabilityBin>,
    /// `ECE = Σ_b (count_b / n) · |observed_frequency_b − mean_predicted_b|`, in `[0, 1]`.
    pub expected_calibration_error: f64,
}

/// The reliability curve of predicted probabilities: predictions are put in `bins`
/// equal-width bins of `[0, 1]` by their probability, and each bin's mean predicted
/// probability is set beside how often those predictions came true.
///
/// - `class = Some(c)`: the one-vs-rest curve of class `c` — every row's `p_ic`, "came
///   true" meaning `y_i = c` (scikit-learn's `calibration_curve(y == c, p[:, c],
///   n_bins=bins, strategy="uniform")`, which drops the empty bins this keeps).
/// - `class = None`: the top-label curve (Guo et al. 2017, "On calibration of modern
///   neural networks", §2) — each row's largest probability (the first class on ties),
///   "came true" meaning that class is the label; its ECE is their expected calibration
///   error.
///
/// # Arguments
/// As [`brier_score`], plus `bins >= 1`.
///
/// # Errors
/// As [`brier_score`]; [`EvalError::InvalidParameter`] for `bins = 0` or a class `>= k`.
///
/// # Examples
/// ```
/// use srl_eval::metrics::reliability_curve;
/// let r = reliability_curve(&[0.9, 0.1, 0.8, 0.2, 0.3, 0.7], 2, &[0, 1, 1], 2, None)?;
/// // top-label confidences 0.9, 0.8, 0.7 all fall in [0.5, 1]; two of three came true
/// assert_eq!(r.bins[1].count, 3);
/// assert!((r.bins[1].observed_frequency - 2.0 / 3.0).abs() < 1e-12);
/// assert!((r.expected_calibration_error - (0.8 - 2.0 / 3.0)).abs() < 1e-12);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn reliability_curve(
    proba: &[f64],
    k: usize,
    truth: &[u32],
    bins: usize,
    class: Option<usize>,
) -> Result<ReliabilityCurve, EvalError> {
    let n = check_proba(proba, k, truth)?;
    if bins == 0 {
        return Err(EvalError::InvalidParameter {
            name: "bins",
            value: 0.0,
            expected: "at least 1",
        });
    }
    if let Some(c) = class.filter(|&c| c >= k) {
        return Err(EvalError::InvalidParameter {
            name: "class",
            value: c as f64,
            expected: "a class index below k",
        });
    }
    let mut count = vec![0usize; bins];
    let mut sum_p = vec![0.0f64; bins];
    let mut hits = vec![0usize; bins];
    for (row, &t) in proba.chunks_exact(k).zip(truth) {
        let (c, p) = match class {
            Some(c) => (c, row[c]),
            None => row
                .iter()
                .copied()
                .enumerate()
                .fold((0, f64::NEG_INFINITY), |best, (c, p)| {
                    if p > best.1 { (c, p) } else { best }
                }),
        };
        // p in [0, 1]: the bin index floor(p · bins), 1 itself in the last bin
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let b = ((p * bins as f64) as usize).min(bins - 1);
        count[b] += 1;
        sum_p[b] += p;
        hits[b] += usize::from(c == t as usize);
    }
    let mut ece = 0.0;
    let out = (0..bins)
        .map(|b| {
            let (mean_predicted, observed_frequency) = if count[b] == 0 {
                (f64::NAN, f64::NAN)
            } else {
                let m = sum_p[b] / count[b] as f64;
                let f = hits[b] as f64 / count[b] as f64;
                ece += count[b] as f64 / n as f64 * (f - m).abs();
                (m, f)
            };
            ReliabilityBin {
                lower: b as f64 / bins as f64,
                upper: (b + 1) as f64 / bins as f64,
                count: count[b],
                mean_predicted,
                observed_frequency,
            }
        })
        .collect();
    Ok(ReliabilityCurve {
        bins: out,
        expected_calibration_error: ece,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brier_equals_twice_sklearns_binary_loss() {
        // sklearn.metrics.brier_score_loss([1, 0, 1, 1], [0.9, 0.3, 0.6, 0.2]) = 0.225
        let p1 = [0.9, 0.3, 0.6, 0.2];
        let proba: Vec<f64> = p1.iter().flat_map(|&p| [1.0 - p, p]).collect();
        let b = brier_score(&proba, 2, &[1, 0, 1, 1]).unwrap();
        assert!((b - 2.0 * 0.225).abs() < 1e-12, "{b}");
    }

    #[test]
    fn one_vs_rest_curve_equals_sklearns_calibration_curve() {
        // sklearn.calibration.calibration_curve([0,0,1,1,1], [0.1,0.4,0.35,0.8,0.9],
        //   n_bins=2): prob_true [1/3, 1.0], prob_pred [0.2833.., 0.85]
        let p1 = [0.1, 0.4, 0.35, 0.8, 0.9];
        let proba: Vec<f64> = p1.iter().flat_map(|&p| [1.0 - p, p]).collect();
        let r = reliability_curve(&proba, 2, &[0, 0, 1, 1, 1], 2, Some(1)).unwrap();
        assert_eq!(r.bins.len(), 2);
        assert!((r.bins[0].observed_frequency - 1.0 / 3.0).abs() < 1e-12);
        assert!((r.bins[0].mean_predicted - 0.85 / 3.0).abs() < 1e-12);
        assert!((r.bins[1].observed_frequency - 1.0).abs() < 1e-12);
        assert!((r.bins[1].mean_predicted - 0.85).abs() < 1e-12);
        let ece = 0.6 * (0.85 / 3.0 - 1.0 / 3.0f64).abs() + 0.4 * 0.15;
        assert!((r.expected_calibration_error - ece).abs() < 1e-12);
    }

    #[test]
    fn empty_bins_are_kept_and_perfect_calibration_has_zero_ece() {
        let proba = [1.0, 0.0, 0.0, 1.0];
        let r = reliability_curve(&proba, 2, &[0, 1], 4, None).unwrap();
        assert_eq!(
            r.bins.iter().map(|b| b.count).collect::<Vec<_>>(),
            [0, 0, 0, 2]
        );
        assert!(r.bins[0].mean_predicted.is_nan());
        assert_eq!(r.expected_calibration_error, 0.0);
        assert_eq!(brier_score(&proba, 2, &[0, 1]).unwrap(), 0.0);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            brier_score(&[], 2, &[]),
            Err(EvalError::Empty { .. })
        ));
        assert!(matches!(
            brier_score(&[0.5, 0.5], 2, &[0, 1]),
            Err(EvalError::LengthMismatch { .. })
        ));
        assert!(matches!(
            brier_score(&[f64::NAN, 0.5], 2, &[0]),
            Err(EvalError::InvalidParameter { .. })
        ));
        assert!(matches!(
            brier_score(&[1.5, 0.5], 2, &[0]),
            Err(EvalError::InvalidParameter { .. })
        ));
        assert!(matches!(
            brier_score(&[0.5, 0.5], 2, &[2]),
            Err(EvalError::LabelOutOfRange { .. })
        ));
        assert!(matches!(
            brier_score(&[1.0], 0, &[0]),
            Err(EvalError::InvalidParameter { .. })
        ));
        assert!(matches!(
            reliability_curve(&[0.5, 0.5], 2, &[0], 0, None),
            Err(EvalError::InvalidParameter { .. })
        ));
        assert!(matches!(
            reliability_curve(&[0.5, 0.5], 2, &[0], 3, Some(2)),
            Err(EvalError::InvalidParameter { .. })
        ));
    }
}
