//! Two-sample significance tests of a difference in means: Welch's unequal-variance t-test
//! and the paired t-test, two-sided, with p-values from the Student-t distribution of
//! `statrs`.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF as _, StudentsT};

use crate::error::EvalError;

/// The outcome of a t-test of `mean(a) − mean(b) = 0` against the two-sided alternative.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TTest {
    /// The t statistic (positive when `a`'s mean is larger).
    pub t: f64,
    /// Degrees of freedom (Welch–Satterthwaite for [`welch_t_test`], `n − 1` for
    /// [`paired_t_test`]).
    pub df: f64,
    /// Two-sided p-value `2 · P(T_df ≥ |t|)`, in `[0, 1]`.
    pub p_value: f64,
    /// `mean(a) − mean(b)` (the mean of the differences for the paired test).
    pub mean_difference: f64,
}

fn check(values: &[f64], what: &'static str) -> Result<(), EvalError> {
    if values.len() < 2 {
        return Err(EvalError::Undefined {
            metric: "t-test",
            reason: if values.is_empty() {
                "an empty sample"
            } else {
                "a sample of fewer than two values"
            },
        });
    }
    if let Some(index) = values.iter().position(|x| !x.is_finite()) {
        return Err(EvalError::NanValue { what, index });
    }
    Ok(())
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// Two-sided p-value of `t` under Student's t with `df` degrees of freedom; a zero standard
/// error gives `p = 1` for a zero difference and `p = 0` otherwise.
fn two_sided(diff: f64, se: f64, df: f64) -> Result<TTest, EvalError> {
    if se == 0.0 {
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        return Ok(TTest {
            t,
            df,
            p_value: p,
            mean_difference: diff,
        });
    }
    let t = diff / se;
    let dist = StudentsT::new(0.0, 1.0, df).map_err(|_| EvalError::InvalidParameter {
        name: "degrees of freedom",
        value: df,
        expected: "> 0",
    })?;
    let p = (2.0 * dist.sf(t.abs())).clamp(0.0, 1.0);
    Ok(TTest {
        t,
        df,
        p_value: p,
        mean_difference: diff,
    })
}

/// Welch's t-test (unequal variances) of `mean(a) = mean(b)`, two-sided.
///
/// `t = (x̄_a − x̄_b) / √(s_a²/n_a + s_b²/n_b)`, degrees of freedom by Welch–Satterthwaite
/// `(s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a − 1) + (s_b²/n_b)²/(n_b − 1))`; the p-value is
/// `2 · P(T_df ≥ |t|)`. Use it for independent samples (e.g. two methods on different
/// replicates); for two methods scored on the same folds prefer [`paired_t_test`].
///
/// # Errors
/// [`EvalError::Undefined`] if a sample has fewer than two values, [`EvalError::NanValue`]
/// for a non-finite value.
///
/// # References
/// Welch (1947), *The generalization of "Student's" problem when several different population
/// variances are involved*, Biometrika 34.
///
/// # Examples
/// ```
/// use srl_eval::metrics::welch_t_test;
/// let t = welch_t_test(&[27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4],
///     &[27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4])?;
/// assert!((t.t + 2.46).abs() < 0.01 && (t.p_value - 0.021).abs() < 0.001);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Result<TTest, EvalError> {
    check(a, "a")?;
    check(b, "b")?;
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (qa, qb) = (va / na, vb / nb);
    let se2 = qa + qb;
    let df = if se2 == 0.0 {
        na + nb - 2.0
    } else {
        se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0))
    };
    two_sided(ma - mb, se2.sqrt(), df)
}

/// The paired t-test of `mean(a − b) = 0`, two-sided: `t = d̄ / (s_d / √n)` with `n − 1`
/// degrees of freedom, `d_i = a_i − b_i`. For two methods scored on the same folds.
///
/// # Errors
/// [`EvalError::LengthMismatch`] if `a` and `b` differ in length, [`EvalError::Undefined`]
/// for fewer than two pairs, [`EvalError::NanValue`] for a non-finite value.
///
/// # Examples
/// ```
/// use srl_eval::metrics::paired_t_test;
/// let t = paired_t_test(&[1.0, 2.0, 3.0, 4.0], &[0.1, 1.0, 2.1, 3.0])?;
/// assert!((t.mean_difference - 0.95).abs() < 1e-12 && t.df == 3.0 && t.p_value < 0.001);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn paired_t_test(a: &[f64], b: &[f64]) -> Result<TTest, EvalError> {
    if a.len() != b.len() {
        return Err(EvalError::LengthMismatch {
            what: "b",
            expected: a.len(),
            found: b.len(),
        });
    }
    check(a, "a")?;
    check(b, "b")?;
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let (md, vd) = mean_var(&d);
    let n = d.len() as f64;
    two_sided(md, (vd / n).sqrt(), n - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wikipedia's Welch example A1 (t ≈ −2.46, df ≈ 24.99, p ≈ 0.021); the reference digits
    /// below were computed independently in Python (closed-form t and df, the tail by
    /// Simpson integration of the Student-t density).
    #[test]
    fn matches_independent_reference() {
        let a = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let b = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        // Welch: t = -2.455356, df = 24.98853, p = 0.021378
        let w = welch_t_test(&a, &b).unwrap();
        assert!((w.t - -2.455356).abs() < 1e-5, "{w:?}");
        assert!((w.df - 24.98853).abs() < 1e-4, "{w:?}");
        assert!((w.p_value - 0.021378).abs() < 1e-5, "{w:?}");
        // paired on the same data: t = d̄ / (s_d / √n)
        let p = paired_t_test(&a, &b).unwrap();
        let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x - y).collect();
        let (md, vd) = mean_var(&d);
        assert!((p.t - md / (vd / 15.0).sqrt()).abs() < 1e-12);
        assert_eq!(p.df, 14.0);
        // symmetric: swapping the samples flips t, keeps p
        let s = welch_t_test(&b, &a).unwrap();
        assert!((s.t + w.t).abs() < 1e-12 && (s.p_value - w.p_value).abs() < 1e-12);
    }

    #[test]
    fn t_distribution_tail_is_right() {
        // t = 2.776 with 4 df is the two-sided 5 % point
        let p = paired_t_test(&[2.776, 0.0, 0.0, 0.0, 0.0], &[0.0; 5]).unwrap();
        assert!(p.p_value > 0.0 && p.p_value < 1.0);
        let r = two_sided(2.776445105, 1.0, 4.0).unwrap();
        assert!((r.p_value - 0.05).abs() < 1e-6, "{r:?}");
    }

    #[test]
    fn degenerate_and_bad_input() {
        // identical samples: no difference, p = 1
        let same = paired_t_test(&[1.0, 2.0], &[1.0, 2.0]).unwrap();
        assert_eq!((same.t, same.p_value), (0.0, 1.0));
        // constant shift without spread: p = 0
        let shift = paired_t_test(&[2.0, 3.0], &[1.0, 2.0]).unwrap();
        assert_eq!(shift.p_value, 0.0);
        assert!(welch_t_test(&[1.0], &[1.0, 2.0]).is_err());
        assert!(welch_t_test(&[1.0, f64::NAN], &[1.0, 2.0]).is_err());
        assert!(paired_t_test(&[1.0, 2.0], &[1.0]).is_err());
    }
}
