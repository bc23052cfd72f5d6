//! Cross-validation protocols over closures: the driver knows folds of instance indices, not
//! models.
//!
//! Build [`Folds`] from test folds (the training set of a fold is every other instance: k-fold
//! random sampling, and snowball sampling whose test sets may overlap) or from explicit
//! train/test splits, then run a closure per fold with [`cross_validate`],
//! [`try_cross_validate`] or [`par_cross_validate`], and aggregate with [`summarize`].
//!
//! ```
//! use srl_eval::cv::{Folds, cross_validate, summarize};
//! use srl_eval::metrics::accuracy;
//! // 6 instances, 3 folds; a "model" that predicts the majority label of its training set.
//! let labels = [0, 0, 1, 0, 1, 0];
//! let folds = Folds::new(6, vec![vec![0, 1], vec![2, 3], vec![4, 5]])?;
//! let accs = cross_validate(&folds, |fold| {
//!     let ones = fold.train.iter().filter(|&&i| labels[i] == 1).count();
//!     let majority = usize::from(2 * ones > fold.train.len());
//!     let predicted: Vec<usize> = fold.test.iter().map(|_| majority).collect();
//!     let truth: Vec<usize> = fold.test.iter().map(|&i| labels[i]).collect();
//!     accuracy(&predicted, &truth)
//! })
//! .into_iter()
//! .collect::<Result<Vec<f64>, _>>()?;
//! let s = summarize(&accs, |&a| a)?;
//! assert!((s.mean - 4.0 / 6.0).abs() < 1e-12);
//! # Ok::<(), srl_eval::EvalError>(())
//! ```

use rayon::prelude::*;

use crate::error::EvalError;
use crate::metrics::Summary;

/// One fold handed to the closure: its number, training and test instances, and a test mask.
#[derive(Copy, Clone, Debug)]
pub struct Fold<'a> {
    /// 0-based fold number.
    pub index: usize,
    /// Training instances, ascending when derived from test folds.
    pub train: &'a [usize],
    /// Test instances, in the order given.
    pub test: &'a [usize],
    /// `in_test[i]` is `true` iff instance `i` is in `test` (length `num_items`); handy for
    /// collective classification, where the training labels are the observed ones.
    pub in_test: &'a [bool],
}

/// A validated set of folds over instances `0..num_items`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Folds {
    num_items: usize,
    test: Vec<Vec<usize>>,
    /// Explicit training sets; `None` means "the complement of the test set".
    train: Option<Vec<Vec<usize>>>,
}

fn check_set(what: String, set: &[usize], seen: &mut [bool]) -> Result<(), EvalError> {
    let n = seen.len();
    for &i in set {
        if i >= n {
            return Err(EvalError::IndexOutOfRange {
                what,
                index: i,
                len: n,
            });
        }
        if seen[i] {
            return Err(EvalError::DuplicateIndex { what, index: i });
        }
        seen[i] = true;
    }
    Ok(())
}

impl Folds {
    /// Folds given by their test sets; each fold trains on every instance not in its test
    /// set. Test sets of different folds may overlap (snowball sampling) or not (k-fold).
    ///
    /// # Arguments
    /// - `num_items`: number of instances `n` (for graph nodes, `num_nodes`).
    /// - `test_folds`: one test set per fold, instance indices in `0..n`.
    ///
    /// # Errors
    /// [`EvalError::Empty`] if there is no fold or a test set is empty,
    /// [`EvalError::IndexOutOfRange`] for an index `>= n`, [`EvalError::DuplicateIndex`] if
    /// an index repeats within one test set.
    ///
    /// # Complexity
    /// `O(k n)` time for `k` folds, `O(n)` scratch.
    pub fn new(num_items: usize, test_folds: Vec<Vec<usize>>) -> Result<Self, EvalError> {
        if test_folds.is_empty() {
            return Err(EvalError::Empty { what: "folds" });
        }
        let mut seen = vec![false; num_items];
        for (f, test) in test_folds.iter().enumerate() {
            if test.is_empty() {
                return Err(EvalError::Empty {
                    what: "a fold's test set",
                });
            }
            seen.iter_mut().for_each(|s| *s = false);
            check_set(format!("test set of fold {f}"), test, &mut seen)?;
        }
        Ok(Self {
            num_items,
            test: test_folds,
            train: None,
        })
    }

    /// Folds given by explicit `(train, test)` splits (instances in neither are unused).
    ///
    /// # Errors
    /// As [`Folds::new`], plus [`EvalError::DuplicateIndex`] if an instance is in both the
    /// training and the test set of a split.
    ///
    /// # Complexity
    /// `O(k n)`.
    pub fn from_splits(
        num_items: usize,
        splits: Vec<(Vec<usize>, Vec<usize>)>,
    ) -> Result<Self, EvalError> {
        if splits.is_empty() {
            return Err(EvalError::Empty { what: "folds" });
        }
        let mut seen = vec![false; num_items];
        for (f, (train, test)) in splits.iter().enumerate() {
            if test.is_empty() {
                return Err(EvalError::Empty {
                    what: "a fold's test set",
                });
            }
            seen.iter_mut().for_each(|s| *s = false);
            check_set(format!("test set of fold {f}"), test, &mut seen)?;
            check_set(format!("training set of fold {f}"), train, &mut seen)?;
        }
        let (train, test) = splits.into_iter().unzip();
        Ok(Self {
            num_items,
            test,
            train: Some(train),
        })
    }

    /// Number of folds `k`.
    #[must_use]
    pub fn len(&self) -> usize {
        self.test.len()
    }

    /// Always `false`: a [`Folds`] has at least one fold.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.test.is_empty()
    }

    /// Number of instances `n`.
    #[must_use]
    pub fn num_items(&self) -> usize {
        self.num_items
    }

    /// The test set of fold `f`, or `None` if `f >= len()`.
    #[must_use]
    pub fn test(&self, f: usize) -> Option<&[usize]> {
        self.test.get(f).map(Vec::as_slice)
    }

    /// Fills the mask and training buffer of fold `f` and returns the fold.
    fn fold<'a>(&'a self, f: usize, mask: &'a mut Vec<bool>, buf: &'a mut Vec<usize>) -> Fold<'a> {
        let test = &self.test[f];
        mask.clear();
        mask.resize(self.num_items, false);
        for &i in test {
            mask[i] = true;
        }
        let train: &[usize] = match &self.train {
            Some(train) => &train[f],
            None => {
                buf.clear();
                buf.extend((0..self.num_items).filter(|&i| !mask[i]));
                buf
            }
        };
        Fold {
            index: f,
            train,
            test,
            in_test: mask,
        }
    }
}

/// Runs `f` on every fold in order and collects its results.
///
/// # Arguments
/// - `folds`: the validated folds.
/// - `f`: called once per fold with a [`Fold`]; it fits a model on `fold.train` and scores
///   it on `fold.test` (return a `Result` and collect, or use [`try_cross_validate`]).
///
/// # Returns
/// One result per fold, in fold order.
///
/// # Complexity
/// `O(k n)` besides the closure (one training set and mask per fold, buffers reused).
pub fn cross_validate<R>(folds: &Folds, mut f: impl FnMut(Fold<'_>) -> R) -> Vec<R> {
    let (mut mask, mut buf) = (Vec::new(), Vec::new());
    (0..folds.len())
        .map(|k| f(folds.fold(k, &mut mask, &mut buf)))
        .collect()
}

/// Runs a fallible `f` on every fold in order, stopping at the first error.
///
/// # Errors
/// The first error `f` returns.
///
/// # Complexity
/// As [`cross_validate`].
pub fn try_cross_validate<R, E>(
    folds: &Folds,
    mut f: impl FnMut(Fold<'_>) -> Result<R, E>,
) -> Result<Vec<R>, E> {
    let (mut mask, mut buf) = (Vec::new(), Vec::new());
    (0..folds.len())
        .map(|k| f(folds.fold(k, &mut mask, &mut buf)))
        .collect()
}

/// Runs `f` on the folds in parallel (rayon) and collects the results in fold order.
///
/// The closure must not depend on the order folds run in: derive any randomness from
/// `fold.index` (e.g. one seeded generator per fold).
///
/// # Complexity
/// As [`cross_validate`], spread over the rayon pool; `O(n)` scratch per running fold.
pub fn par_cross_validate<R: Send>(folds: &Folds, f: impl Fn(Fold<'_>) -> R + Sync) -> Vec<R> {
    (0..folds.len())
        .into_par_iter()
        .map(|k| {
            let (mut mask, mut buf) = (Vec::new(), Vec::new());
            f(folds.fold(k, &mut mask, &mut buf))
        })
        .collect()
}

/// Maps `f` over independent tasks (e.g. the (setting, replicate, fold) runs of an
/// experiment) on the rayon pool and returns the results in task order.
///
/// Running the tasks *inside* the pool lets nested parallel code (e.g. loopy BP's
/// parallel sweeps) run on the same workers instead of handing work across threads. The
/// results do not depend on the thread count as long as `f` derives any randomness from its
/// task alone (one seeded generator per task).
///
/// # Examples
/// ```
/// let squares = srl_eval::cv::par_map(&[1, 2, 3], |x| x * x);
/// assert_eq!(squares, vec![1, 4, 9]);
/// ```
pub fn par_map<T: Sync, U: Send>(tasks: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let f = &f;
    tasks.par_iter().map(f).collect()
}

/// Mean, standard deviation and standard error of one metric over per-fold results.
///
/// # Errors
/// As [`Summary::of`]: [`EvalError::Empty`] for no results, [`EvalError::NanValue`] if the
/// metric is NaN for a fold.
pub fn summarize<R>(results: &[R], metric: impl Fn(&R) -> f64) -> Result<Summary, EvalError> {
    let values: Vec<f64> = results.iter().map(metric).collect();
    Summary::of(&values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complement_training_sets() {
        let folds = Folds::new(5, vec![vec![3, 0], vec![1, 2], vec![4, 2]]).unwrap();
        let seen = cross_validate(&folds, |f| {
            assert_eq!(f.in_test.len(), 5);
            for &i in f.test {
                assert!(f.in_test[i]);
            }
            (f.index, f.train.to_vec(), f.test.to_vec())
        });
        assert_eq!(
            seen,
            vec![
                (0, vec![1, 2, 4], vec![3, 0]),
                (1, vec![0, 3, 4], vec![1, 2]),
                (2, vec![0, 1, 3], vec![4, 2]),
            ]
        );
        let par = par_cross_validate(&folds, |f| (f.index, f.train.to_vec(), f.test.to_vec()));
        assert_eq!(par, seen);
    }

    #[test]
    fn explicit_splits_and_errors() {
        let folds = Folds::from_splits(4, vec![(vec![0], vec![1, 2])]).unwrap();
        let r = try_cross_validate(&folds, |f| Ok::<_, EvalError>(f.train.len())).unwrap();
        assert_eq!(r, vec![1]);
        assert!(matches!(
            Folds::from_splits(4, vec![(vec![1], vec![1, 2])]),
            Err(EvalError::DuplicateIndex { index: 1, .. })
        ));
        assert!(matches!(
            Folds::new(3, vec![vec![0, 3]]),
            Err(EvalError::IndexOutOfRange { index: 3, .. })
        ));
        assert!(matches!(
            Folds::new(3, vec![vec![0, 0]]),
            Err(EvalError::DuplicateIndex { .. })
        ));
        assert!(Folds::new(3, vec![]).is_err());
        assert!(Folds::new(3, vec![vec![]]).is_err());
        let err = try_cross_validate(&folds, |_| Err::<(), _>("boom"));
        assert_eq!(err, Err("boom"));
    }
}
