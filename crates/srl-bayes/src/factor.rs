//! Discrete factors (non-negative tables over a few variables) and their algebra.

use crate::error::BayesError;

/// A non-negative table over discrete variables.
///
/// `vars[k]` has `cards[k]` states; `values` is row-major over `vars` with the **last**
/// variable changing fastest, so `values.len() == cards.iter().product()`. Variable ids are
/// those of the network (or UAI model) the factor came from. Values are plain
/// probabilities or weights (not logs); a factor need not be normalised.
#[derive(Clone, Debug, PartialEq)]
pub struct Factor {
    vars: Vec<usize>,
    cards: Vec<usize>,
    values: Vec<f64>,
}

impl Factor {
    /// Builds a factor, checking the table size, distinct variables, and finite
    /// non-negative values.
    ///
    /// # Errors
    /// [`BayesError::InvalidNetwork`] if `vars` and `cards` differ in length, a variable
    /// repeats, a cardinality is 0, the table has the wrong length, or a value is negative
    /// or not finite.
    pub fn new(vars: Vec<usize>, cards: Vec<usize>, values: Vec<f64>) -> Result<Self, BayesError> {
        if vars.len() != cards.len() {
            return Err(BayesError::network(
                "factor scope and cardinalities differ in length",
            ));
        }
        for (i, v) in vars.iter().enumerate() {
            if vars[..i].contains(v) {
                return Err(BayesError::network(format!(
                    "variable {v} repeats in a factor scope"
                )));
            }
        }
        if cards.contains(&0) {
            return Err(BayesError::network("a variable has no states"));
        }
        let size = cards
            .iter()
            .try_fold(1usize, |a, &k| a.checked_mul(k))
            .ok_or_else(|| BayesError::network("factor table size overflows"))?;
        if values.len() != size {
            return Err(BayesError::network(format!(
                "factor table has {} values, its scope needs {size}",
                values.len()
            )));
        }
        if let Some(x) = values.iter().find(|x| !x.is_finite() || **x < 0.0) {
            return Err(BayesError::network(format!(
                "factor value {x} is not a finite non-negative number"
            )));
        }
        Ok(Self {
            vars,
            cards,
            values,
        })
    }

    /// The constant factor with one entry `value` and an empty scope.
    #[must_use]
    pub fn scalar(value: f64) -> Self {
        Self {
            vars: Vec::new(),
            cards: Vec::new(),
            values: vec![value],
        }
    }

    /// The scope (variable ids), in table order.
    #[must_use]
    pub fn vars(&self) -> &[usize] {
        &self.vars
    }

    /// Cardinalities, parallel to [`Factor::vars`].
    #[must_use]
    pub fn cards(&self) -> &[usize] {
        &self.cards
    }

    /// The table, row-major with the last variable fastest.
    #[must_use]
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Sum of all entries.
    #[must_use]
    pub fn total(&self) -> f64 {
        self.values.iter().sum()
    }

    /// Row-major strides of the scope (last variable stride 1).
    pub(crate) fn strides(cards: &[usize]) -> Vec<usize> {
        let mut s = vec![1; cards.len()];
        for k in (0..cards.len().saturating_sub(1)).rev() {
            s[k] = s[k + 1] * cards[k + 1];
        }
        s
    }

    /// The entry at the joint state `states` (parallel to `vars`).
    ///
    /// # Panics
    /// If `states` has the wrong length or a state is out of range.
    #[must_use]
    pub fn get(&self, states: &[usize]) -> f64 {
        assert_eq!(states.len(), self.vars.len(), "state vector length");
        let strides = Self::strides(&self.cards);
        let mut idx = 0;
        for k in 0..states.len() {
            assert!(states[k] < self.cards[k], "state out of range");
            idx += states[k] * strides[k];
        }
        self.values[idx]
    }

    /// The pointwise product, over the union of the scopes (this factor's variables first,
    /// then the other's new ones).
    ///
    /// # Errors
    /// [`BayesError::TooLarge`] if the product table would exceed `limit` entries;
    /// [`BayesError::InvalidNetwork`] if a shared variable has different cardinalities.
    ///
    /// # Complexity
    /// O(size of the result × scope length).
    pub fn product(&self, other: &Self, limit: usize) -> Result<Self, BayesError> {
        let mut vars = self.vars.clone();
        let mut cards = self.cards.clone();
        for (k, v) in other.vars.iter().enumerate() {
            match vars.iter().position(|x| x == v) {
                Some(p) => {
                    if cards[p] != other.cards[k] {
                        return Err(BayesError::network(format!(
                            "variable {v} has cardinality {} in one factor and {} in another",
                            cards[p], other.cards[k]
                        )));
                    }
                }
                None => {
                    vars.push(*v);
                    cards.push(other.cards[k]);
                }
            }
        }
        let size = checked_size(&cards, limit)?;
        let sa = Self::strides(&self.cards);
        let sb = Self::strides(&other.cards);
        // stride of each result variable in a and b (0 if absent)
        let mut stride_a = vec![0; vars.len()];
        let mut stride_b = vec![0; vars.len()];
        for (k, v) in vars.iter().enumerate() {
            if let Some(p) = self.vars.iter().position(|x| x == v) {
                stride_a[k] = sa[p];
            }
            if let Some(p) = other.vars.iter().position(|x| x == v) {
                stride_b[k] = sb[p];
            }
        }
        let mut values = Vec::with_capacity(size);
        let mut digits = vec![0usize; vars.len()];
        let (mut ia, mut ib) = (0usize, 0usize);
        for _ in 0..size {
            values.push(self.values[ia] * other.values[ib]);
            // odometer increment, last variable fastest
            for k in (0..vars.len()).rev() {
                digits[k] += 1;
                ia += stride_a[k];
                ib += stride_b[k];
                if digits[k] < cards[k] {
                    break;
                }
                ia -= stride_a[k] * cards[k];
                ib -= stride_b[k] * cards[k];
                digits[k] = 0;
            }
        }
        Ok(Self {
            vars,
            cards,
            values,
        })
    }

    /// Sums out variable `var` (a no-op copy if it is not in the scope).
    ///
    /// # Complexity
    /// O(table size).
    #[must_use]
    pub fn sum_out(&self, var: usize) -> Self {
        let Some(p) = self.vars.iter().position(|x| *x == var) else {
            return self.clone();
        };
        let card = self.cards[p];
        let inner: usize = self.cards[p + 1..].iter().product();
        let outer: usize = self.cards[..p].iter().product();
        let mut values = vec![0.0; outer * inner];
        for o in 0..outer {
            for s in 0..card {
                let base = (o * card + s) * inner;
                let dst = o * inner;
                for i in 0..inner {
                    values[dst + i] += self.values[base + i];
                }
            }
        }
        let mut vars = self.vars.clone();
        let mut cards = self.cards.clone();
        vars.remove(p);
        cards.remove(p);
        Self {
            vars,
            cards,
            values,
        }
    }

    /// Fixes `var` to `state` and drops it from the scope (a copy if `var` is absent).
    ///
    /// # Panics
    /// If `state` is out of range for `var`.
    #[must_use]
    pub fn reduce(&self, var: usize, state: usize) -> Self {
        let Some(p) = self.vars.iter().position(|x| *x == var) else {
            return self.clone();
        };
        let card = self.cards[p];
        assert!(state < card, "evidence state out of range");
        let inner: usize = self.cards[p + 1..].iter().product();
        let outer: usize = self.cards[..p].iter().product();
        let mut values = Vec::with_capacity(outer * inner);
        for o in 0..outer {
            let base = (o * card + state) * inner;
            values.extend_from_slice(&self.values[base..base + inner]);
        }
        let mut vars = self.vars.clone();
        let mut cards = self.cards.clone();
        vars.remove(p);
        cards.remove(p);
        Self {
            vars,
            cards,
            values,
        }
    }

    /// The same table with its scope reordered to `order` (a permutation of the scope).
    ///
    /// # Errors
    /// [`BayesError::InvalidQuery`] if `order` is not a permutation of the scope.
    pub fn permute(&self, order: &[usize]) -> Result<Self, BayesError> {
        if order.len() != self.vars.len() || !order.iter().all(|v| self.vars.contains(v)) {
            return Err(BayesError::query(
                "permutation does not match the factor scope",
            ));
        }
        let pos: Vec<usize> = order
            .iter()
            .map(|v| self.vars.iter().position(|x| x == v).unwrap_or(0))
            .collect();
        let cards: Vec<usize> = pos.iter().map(|&p| self.cards[p]).collect();
        let old_strides = Self::strides(&self.cards);
        let strides: Vec<usize> = pos.iter().map(|&p| old_strides[p]).collect();
        let size = self.values.len();
        let mut values = Vec::with_capacity(size);
        let mut digits = vec![0usize; cards.len()];
        let mut idx = 0usize;
        for _ in 0..size {
            values.push(self.values[idx]);
            for k in (0..cards.len()).rev() {
                digits[k] += 1;
                idx += strides[k];
                if digits[k] < cards[k] {
                    break;
                }
                idx -= strides[k] * cards[k];
                digits[k] = 0;
            }
        }
        Ok(Self {
            vars: order.to_vec(),
            cards,
            values,
        })
    }

    /// Divides every entry by the total (left unchanged when the total is 0).
    #[must_use]
    pub fn normalized(mut self) -> Self {
        let t = self.total();
        if t > 0.0 {
            for x in &mut self.values {
                *x /= t;
            }
        }
        self
    }
}

/// The product of `cards`, or [`BayesError::TooLarge`] above `limit`.
pub(crate) fn checked_size(cards: &[usize], limit: usize) -> Result<usize, BayesError> {
    let mut size: u128 = 1;
    for &c in cards {
        size = size.saturating_mul(c as u128);
    }
    if size > limit as u128 {
        return Err(BayesError::TooLarge {
            entries: size,
            limit: limit as u128,
        });
    }
    Ok(size as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_sum_out_and_reduce() -> Result<(), BayesError> {
        let a = Factor::new(vec![0], vec![2], vec![0.3, 0.7])?;
        let b = Factor::new(vec![1, 0], vec![2, 2], vec![0.9, 0.2, 0.1, 0.8])?;
        let p = a.product(&b, 1 << 20)?;
        assert_eq!(p.vars(), &[0, 1]);
        // p(x0=0,x1=1) = 0.3 * b(x1=1,x0=0) = 0.3 * 0.1
        assert!((p.get(&[0, 1]) - 0.03).abs() < 1e-12);
        let m = p.sum_out(0);
        assert!((m.get(&[0]) - (0.3 * 0.9 + 0.7 * 0.2)).abs() < 1e-12);
        assert!((m.total() - p.total()).abs() < 1e-12);
        let r = p.reduce(1, 1);
        assert!((r.get(&[1]) - 0.7 * 0.8).abs() < 1e-12);
        let q = p.permute(&[1, 0])?;
        assert!((q.get(&[1, 0]) - p.get(&[0, 1])).abs() < 1e-12);
        Ok(())
    }

    #[test]
    fn rejects_bad_tables() {
        assert!(Factor::new(vec![0], vec![2], vec![0.3]).is_err());
        assert!(Factor::new(vec![0], vec![2], vec![-0.3, 1.0]).is_err());
        assert!(Factor::new(vec![0, 0], vec![2, 2], vec![0.25; 4]).is_err());
    }
}
