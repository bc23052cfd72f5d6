//! Regression metrics: root mean squared error, mean absolute error and the coefficient
//! of determination R², for RDN-Boost regression (BoostSRL `-reg` reports the mean
//! squared error; scikit-learn's `mean_squared_error`, `mean_absolute_error`,
//! `r2_score` are the same formulas).

use crate::error::EvalError;
use crate::metrics::classification::check_parallel;

fn check(predicted: &[f64], truth: &[f64]) -> Result<(), EvalError> {
    check_parallel(predicted, "predicted", truth, "truth")?;
    for (what, v) in [("predicted", predicted), ("truth", truth)] {
        if let Some(index) = v.iter().position(|x| !x.is_finite()) {
            return Err(EvalError::InvalidParameter {
                name: what,
                value: v[index],
                expected: "finite values",
            });
        }
    }
    Ok(())
}

/// Root mean squared error `sqrt((1/n) Σ (ŷᵢ − yᵢ)²)`, in the target's units, `>= 0`.
///
/// # Errors
/// [`EvalError::Empty`], [`EvalError::LengthMismatch`], [`EvalError::InvalidParameter`]
/// for a value that is not finite.
///
/// # Examples
/// ```
/// let r = srl_eval::metrics::rmse(&[1.0, 3.0], &[2.0, 3.0])?;
/// assert!((r - 0.5f64.sqrt()).abs() < 1e-15);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn rmse(predicted: &[f64], truth: &[f64]) -> Result<f64, EvalError> {
    check(predicted, truth)?;
    let n = predicted.len() as f64;
    Ok((predicted
        .iter()
        .zip(truth)
        .map(|(p, t)| (p - t) * (p - t))
        .sum::<f64>()
        / n)
        .sqrt())
}

/// Mean absolute error `(1/n) Σ |ŷᵢ − yᵢ|`, in the target's units, `>= 0`.
///
/// # Errors
/// As [`rmse`].
pub fn mae(predicted: &[f64], truth: &[f64]) -> Result<f64, EvalError> {
    check(predicted, truth)?;
    let n = predicted.len() as f64;
    Ok(predicted
        .iter()
        .zip(truth)
        .map(|(p, t)| (p - t).abs())
        .sum::<f64>()
        / n)
}

/// Coefficient of determination `R² = 1 − Σ (ŷᵢ − yᵢ)² / Σ (yᵢ − ȳ)²`, at most 1
/// (negative for predictions worse than the mean).
///
/// # Errors
/// As [`rmse`]; [`EvalError::Undefined`] when every true value is the same (zero
/// variance).
///
/// # Examples
/// ```
/// let r2 = srl_eval::metrics::r2_score(&[1.0, 2.0, 3.5], &[1.0, 2.0, 3.0])?;
/// // 1 − 0.25 / 2
/// assert!((r2 - 0.875).abs() < 1e-15);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn r2_score(predicted: &[f64], truth: &[f64]) -> Result<f64, EvalError> {
    check(predicted, truth)?;
    let n = truth.len() as f64;
    let mean = truth.iter().sum::<f64>() / n;
    let ss_tot: f64 = truth.iter().map(|t| (t - mean) * (t - mean)).sum();
    if ss_tot == 0.0 {
        return Err(EvalError::Undefined {
            metric: "r2_score",
            reason: "every true value is the same",
        });
    }
    let ss_res: f64 = predicted
        .iter()
        .zip(truth)
        .map(|(p, t)| (p - t) * (p - t))
        .sum();
    Ok(1.0 - ss_res / ss_tot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_scikit_learns_numbers() {
        // sklearn.metrics: mean_squared_error(y, p) ** 0.5, mean_absolute_error, r2_score
        // with y = [3, -0.5, 2, 7], p = [2.5, 0.0, 2, 8]: 0.6123724356957945, 0.5,
        // 0.9486081370449679 (scikit-learn's documented example values)
        let y = [3.0, -0.5, 2.0, 7.0];
        let p = [2.5, 0.0, 2.0, 8.0];
        assert!((rmse(&p, &y).unwrap() - 0.612_372_435_695_794_5).abs() < 1e-15);
        assert!((mae(&p, &y).unwrap() - 0.5).abs() < 1e-15);
        assert!((r2_score(&p, &y).unwrap() - 0.948_608_137_044_967_9).abs() < 1e-15);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(rmse(&[], &[]), Err(EvalError::Empty { .. })));
        assert!(matches!(
            mae(&[1.0], &[1.0, 2.0]),
            Err(EvalError::LengthMismatch { .. })
        ));
        assert!(matches!(
            rmse(&[f64::NAN], &[1.0]),
            Err(EvalError::InvalidParameter { .. })
        ));
        assert!(matches!(
            r2_score(&[1.0, 2.0], &[3.0, 3.0]),
            Err(EvalError::Undefined { .. })
        ));
    }
}
