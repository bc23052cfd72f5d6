//! Aggregation over folds and splits: mean, standard error, and the matched (M) average of
//! snowball sampling.

use serde::{Deserialize, Serialize};

use crate::error::EvalError;

fn check_values(values: &[f64]) -> Result<(), EvalError> {
    if values.is_empty() {
        return Err(EvalError::Empty { what: "values" });
    }
    if let Some(index) = values.iter().position(|x| x.is_nan()) {
        return Err(EvalError::NanValue {
            what: "values",
            index,
        });
    }
    Ok(())
}

/// Arithmetic mean `Σ x_i / n`.
///
/// # Errors
/// [`EvalError::Empty`] for no values, [`EvalError::NanValue`] if a value is NaN.
///
/// # Complexity
/// `O(n)`.
///
/// # Examples
/// ```
/// assert_eq!(srl_eval::metrics::mean(&[1.0, 2.0, 6.0])?, 3.0);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn mean(values: &[f64]) -> Result<f64, EvalError> {
    check_values(values)?;
    Ok(values.iter().sum::<f64>() / values.len() as f64)
}

/// Standard error of the mean, `s / √n` with `s² = Σ (x_i − x̄)² / (n − 1)` the unbiased
/// sample variance (what papers report as "± stderr" over folds).
///
/// # Errors
/// [`EvalError::NanValue`] for a NaN value; [`EvalError::Undefined`] for fewer than two
/// values ([`EvalError::Empty`] for none).
///
/// # Complexity
/// `O(n)` (two passes).
///
/// # Examples
/// ```
/// let se = srl_eval::metrics::std_error(&[1.0, 2.0, 3.0])?;
/// assert!((se - (1.0f64 / 3.0).sqrt()).abs() < 1e-15);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
pub fn std_error(values: &[f64]) -> Result<f64, EvalError> {
    Summary::of(values)?.std_error.ok_or(EvalError::Undefined {
        metric: "std_error",
        reason: "fewer than two values",
    })
}

/// Mean, sample standard deviation and standard error of a set of values (e.g. one metric
/// over the folds of a cross-validation).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Unbiased sample standard deviation (`n − 1` denominator); `None` when `n < 2`.
    pub std_dev: Option<f64>,
    /// Standard error of the mean `std_dev / √n`; `None` when `n < 2`.
    pub std_error: Option<f64>,
}

impl Summary {
    /// Summarises `values`.
    ///
    /// # Errors
    /// [`EvalError::Empty`] for no values, [`EvalError::NanValue`] if a value is NaN.
    ///
    /// # Complexity
    /// `O(n)`.
    ///
    /// # Examples
    /// ```
    /// use srl_eval::metrics::Summary;
    /// let s = Summary::of(&[0.8, 0.9])?;
    /// assert!((s.mean - 0.85).abs() < 1e-15);
    /// assert!((s.std_error.unwrap() - 0.05).abs() < 1e-12);
    /// # Ok::<(), srl_eval::EvalError>(())
    /// ```
    pub fn of(values: &[f64]) -> Result<Self, EvalError> {
        let m = mean(values)?;
        let n = values.len();
        let (std_dev, std_error) = if n < 2 {
            (None, None)
        } else {
            let ss: f64 = values.iter().map(|x| (x - m) * (x - m)).sum();
            let sd = (ss / (n - 1) as f64).sqrt();
            (Some(sd), Some(sd / (n as f64).sqrt()))
        };
        Ok(Self {
            n,
            mean: m,
            std_dev,
            std_error,
        })
    }
}

/// The matched (M) average of snowball sampling: average each instance's score over the
/// splits that tested it, then average over the instances tested at least once.
///
/// Snowball samples overlap, so the plain mean over splits weighs nodes tested several
/// times more; the matched average counts every tested node once. Feed it per-split results
/// with [`MatchedAverage::add_split`] (correct / incorrect per tested node, for accuracy) or
/// [`MatchedAverage::add`] (any per-instance value), then read [`MatchedAverage::value`].
///
/// # References
/// Sen, Namata, Bilgic, Getoor, Gallagher, Eliassi-Rad 2008, "Collective classification in
/// network data", AI Magazine, Section on evaluation (snowball sampling, "matched" average);
/// the course slides' Table "SS / RS / M".
///
/// # Examples
/// ```
/// use srl_eval::metrics::MatchedAverage;
/// let mut m = MatchedAverage::new(4);
/// m.add_split(&[0, 1], &[true, false])?;
/// m.add_split(&[1, 2], &[true, true])?; // node 1 tested twice: its accuracy is 1/2
/// // nodes 0, 1, 2 have accuracies 1, 1/2, 1; node 3 was never tested.
/// assert!((m.value()? - 2.5 / 3.0).abs() < 1e-15);
/// assert_eq!(m.instances_tested(), 3);
/// # Ok::<(), srl_eval::EvalError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedAverage {
    sum: Vec<f64>,
    count: Vec<u32>,
}

impl MatchedAverage {
    /// An accumulator over instances `0..num_instances` (for graph nodes, `NodeId::index`).
    #[must_use]
    pub fn new(num_instances: usize) -> Self {
        Self {
            sum: vec![0.0; num_instances],
            count: vec![0; num_instances],
        }
    }

    /// Records one split's results: `correct[i]` says whether instance `tested[i]` was
    /// classified correctly.
    ///
    /// # Errors
    /// [`EvalError::LengthMismatch`] if the slices differ in length,
    /// [`EvalError::IndexOutOfRange`] for an instance `>= num_instances`. On error nothing
    /// is recorded.
    ///
    /// # Complexity
    /// `O(len)`.
    pub fn add_split(&mut self, tested: &[usize], correct: &[bool]) -> Result<(), EvalError> {
        if tested.len() != correct.len() {
            return Err(EvalError::LengthMismatch {
                what: "correct",
                expected: tested.len(),
                found: correct.len(),
            });
        }
        self.check_indices(tested)?;
        for (&i, &c) in tested.iter().zip(correct) {
            self.sum[i] += f64::from(u8::from(c));
            self.count[i] += 1;
        }
        Ok(())
    }

    /// Records `value` (e.g. 0/1 correctness, or a per-node cost) for `instance` in one split.
    ///
    /// # Errors
    /// [`EvalError::IndexOutOfRange`] for an instance `>= num_instances`,
    /// [`EvalError::NanValue`] for a NaN value.
    pub fn add(&mut self, instance: usize, value: f64) -> Result<(), EvalError> {
        self.check_indices(&[instance])?;
        if value.is_nan() {
            return Err(EvalError::NanValue {
                what: "value",
                index: instance,
            });
        }
        self.sum[instance] += value;
        self.count[instance] += 1;
        Ok(())
    }

    fn check_indices(&self, tested: &[usize]) -> Result<(), EvalError> {
        let len = self.sum.len();
        match tested.iter().find(|&&i| i >= len) {
            Some(&index) => Err(EvalError::IndexOutOfRange {
                what: "tested instance".into(),
                index,
                len,
            }),
            None => Ok(()),
        }
    }

    /// Number of instances tested in at least one split.
    #[must_use]
    pub fn instances_tested(&self) -> usize {
        self.count.iter().filter(|&&c| c > 0).count()
    }

    /// The average of `instance` over the splits that tested it, `None` if none did.
    #[must_use]
    pub fn instance_average(&self, instance: usize) -> Option<f64> {
        match self.count.get(instance) {
            Some(&c) if c > 0 => Some(self.sum[instance] / f64::from(c)),
            _ => None,
        }
    }

    /// The matched average: the mean over tested instances of their per-instance averages.
    ///
    /// # Errors
    /// [`EvalError::Empty`] if no instance has been tested.
    ///
    /// # Complexity
    /// `O(num_instances)`.
    pub fn value(&self) -> Result<f64, EvalError> {
        let (mut total, mut k) = (0.0, 0usize);
        for (s, &c) in self.sum.iter().zip(&self.count) {
            if c > 0 {
                total += s / f64::from(c);
                k += 1;
            }
        }
        if k == 0 {
            Err(EvalError::Empty {
                what: "tested instances",
            })
        } else {
            Ok(total / k as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_values() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.mean, 5.0);
        let sd = (32.0f64 / 7.0).sqrt();
        assert!((s.std_dev.unwrap() - sd).abs() < 1e-12);
        assert!((s.std_error.unwrap() - sd / 8f64.sqrt()).abs() < 1e-12);
        let one = Summary::of(&[3.0]).unwrap();
        assert_eq!((one.std_dev, one.std_error), (None, None));
        assert!(std_error(&[3.0]).is_err());
        assert!(mean(&[]).is_err());
        assert!(matches!(
            mean(&[1.0, f64::NAN]),
            Err(EvalError::NanValue { index: 1, .. })
        ));
    }

    #[test]
    fn matched_average_differs_from_split_mean() {
        let mut m = MatchedAverage::new(3);
        // Split A tests nodes 0 and 1 (both right), split B tests node 1 (wrong).
        m.add_split(&[0, 1], &[true, true]).unwrap();
        m.add_split(&[1], &[false]).unwrap();
        // Per node: 1 and 0.5, so matched = 0.75; the mean of the split accuracies is
        // (1 + 0) / 2 = 0.5 and the pooled accuracy 2/3.
        assert_eq!(m.value().unwrap(), 0.75);
        assert_eq!(m.instance_average(1), Some(0.5));
        assert_eq!(m.instance_average(2), None);
        assert_eq!(m.instances_tested(), 2);
        assert!(m.add_split(&[3], &[true]).is_err());
        assert!(m.add_split(&[0, 1], &[true]).is_err());
        assert!(m.add(0, f64::NAN).is_err());
        m.add(2, 0.25).unwrap();
        assert!((m.value().unwrap() - (1.0 + 0.5 + 0.25) / 3.0).abs() < 1e-15);
        assert!(MatchedAverage::new(2).value().is_err());
    }
}
