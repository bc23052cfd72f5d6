//! Naive Bayes: categorical (incl. binary) and multinomial count features, Laplace
//! smoothing, optional sample weights, missing values.

use serde::{Deserialize, Serialize};

use crate::error::BayesError;
use crate::network::{BayesianNetwork, Cpt, Variable};

/// The kind of one naive Bayes feature.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FeatureKind {
    /// A categorical feature with `states` values `0..states` (binary: `states = 2`),
    /// with its own table `Pr(x_i | class)`.
    Categorical {
        /// Number of values.
        states: usize,
    },
    /// A non-negative count (e.g. a word count). All count features of a model share one
    /// multinomial per class: `Pr(counts | c) ∝ Π_j θ_{c,j}^{n_j}`.
    Count,
}

/// Hyperparameters of [`NaiveBayes`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `alpha` | 1.0 | Laplace pseudo-count added to every feature cell | ≥ 0 |
/// | `prior_alpha` | 1.0 | pseudo-count added to every class count | ≥ 0 |
///
/// With both at 1 this is the "Laplace-smoothed" naive Bayes the TrimBN voting model
/// was learned with (class prior (267+1)/(435+2)) and the one that reproduces Table 2 of
/// Zadrozny et al. (2009).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NaiveBayesParams {
    /// Laplace pseudo-count for feature tables.
    pub alpha: f64,
    /// Pseudo-count for the class prior.
    pub prior_alpha: f64,
}

impl Default for NaiveBayesParams {
    fn default() -> Self {
        Self {
            alpha: 1.0,
            prior_alpha: 1.0,
        }
    }
}

/// A fitted (or read) naive Bayes model `Pr(c) Π_i Pr(x_i | c)`.
///
/// Inputs are dense rows of `f64`, one entry per feature: the state index of a
/// categorical feature (`0.0, 1.0, ...`), the count of a count feature; `NaN` marks a
/// missing value, which is marginalised out (skipped), exact in naive Bayes.
///
/// ```
/// use srl_bayes::{FeatureKind, NaiveBayesParams};
/// // two binary features, four rows, two classes
/// let x = [0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, f64::NAN];
/// let y = [0, 0, 1, 1];
/// let kinds = [FeatureKind::Categorical { states: 2 }; 2];
/// let nb = NaiveBayesParams::default().fit(&kinds, &x, &y, 2, None)?;
/// let p = nb.predict_proba(&[1.0, 1.0])?;
/// assert!(p[1] > p[0]);
/// # Ok::<(), srl_bayes::BayesError>(())
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NaiveBayes {
    n_classes: usize,
    class_prior: Vec<f64>,
    kinds: Vec<FeatureKind>,
    /// per feature: categorical `[c * states + s]`; count features: empty
    tables: Vec<Vec<f64>>,
    /// multinomial parameters `[c * n_count + j]` over the count features in order
    count_theta: Vec<f64>,
    count_index: Vec<usize>,
    /// `ln` of `class_prior`, `tables` and `count_theta`, computed on first use
    #[serde(skip)]
    logs: std::sync::OnceLock<Logs>,
}

impl PartialEq for NaiveBayes {
    fn eq(&self, other: &Self) -> bool {
        self.n_classes == other.n_classes
            && self.class_prior == other.class_prior
            && self.kinds == other.kinds
            && self.tables == other.tables
            && self.count_theta == other.count_theta
            && self.count_index == other.count_index
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Logs {
    prior: Vec<f64>,
    tables: Vec<Vec<f64>>,
    count_theta: Vec<f64>,
}

impl NaiveBayes {
    fn with_logs(self) -> Self {
        let _ = self.logs();
        self
    }
    fn logs(&self) -> &Logs {
        self.logs.get_or_init(|| Logs {
            prior: self.class_prior.iter().map(|p| p.ln()).collect(),
            tables: self
                .tables
                .iter()
                .map(|t| t.iter().map(|p| p.ln()).collect())
                .collect(),
            count_theta: self.count_theta.iter().map(|p| p.ln()).collect(),
        })
    }
}

impl NaiveBayesParams {
    /// Learns a naive Bayes model by (weighted) counting with Laplace smoothing.
    ///
    /// # Arguments
    /// - `kinds`: one per feature.
    /// - `x`: row-major `n_rows × kinds.len()`; `NaN` = missing.
    /// - `y`: class of each row, `< n_classes`.
    /// - `weights`: optional non-negative weight per row (default 1).
    ///
    /// # Returns
    /// `Pr(c) = (W_c + prior_alpha) / (W + n_classes·prior_alpha)`;
    /// `Pr(x_i = s | c) = (W_{c,i,s} + alpha) / (W_{c,i} + states·alpha)` where `W_{c,i}`
    /// counts only rows where feature `i` is observed; count features:
    /// `θ_{c,j} = (Σ w n_j + alpha) / (Σ w Σ_j n_j + n_count·alpha)`.
    ///
    /// # Errors
    /// [`BayesError::InvalidData`] for mismatched lengths, a class `≥ n_classes`, a
    /// categorical value that is not an integer in range, a negative or non-finite count,
    /// a bad weight, no rows, or a negative smoothing constant.
    ///
    /// # Complexity
    /// O(rows × features).
    pub fn fit(
        &self,
        kinds: &[FeatureKind],
        x: &[f64],
        y: &[u32],
        n_classes: usize,
        weights: Option<&[f64]>,
    ) -> Result<NaiveBayes, BayesError> {
        let nf = kinds.len();
        if !(self.alpha >= 0.0 && self.prior_alpha >= 0.0) {
            return Err(BayesError::data("smoothing constants must be non-negative"));
        }
        if n_classes == 0 || y.is_empty() {
            return Err(BayesError::data("no rows or no classes"));
        }
        if x.len() != y.len() * nf {
            return Err(BayesError::data(format!(
                "x has {} entries, expected {} rows × {nf}",
                x.len(),
                y.len()
            )));
        }
        if let Some(w) = weights
            && (w.len() != y.len() || w.iter().any(|v| !v.is_finite() || *v < 0.0))
        {
            return Err(BayesError::data(
                "weights must be one finite non-negative value per row",
            ));
        }
        let count_index: Vec<usize> = (0..nf)
            .filter(|&i| kinds[i] == FeatureKind::Count)
            .collect();
        let nc = count_index.len();
        let mut class_w = vec![0.0; n_classes];
        let mut cell: Vec<Vec<f64>> = kinds
            .iter()
            .map(|k| match k {
                FeatureKind::Categorical { states } => vec![0.0; n_classes * states],
                FeatureKind::Count => Vec::new(),
            })
            .collect();
        let mut observed: Vec<Vec<f64>> = vec![vec![0.0; n_classes]; nf];
        let mut count_w = vec![0.0; n_classes * nc];
        for (r, &c) in y.iter().enumerate() {
            let c = c as usize;
            if c >= n_classes {
                return Err(BayesError::data(format!(
                    "row {r}: class {c} ≥ {n_classes}"
                )));
            }
            let w = weights.map_or(1.0, |w| w[r]);
            class_w[c] += w;
            let row = &x[r * nf..(r + 1) * nf];
            let mut cj = 0;
            for (i, k) in kinds.iter().enumerate() {
                let v = row[i];
                match k {
                    FeatureKind::Categorical { states } => {
                        if v.is_nan() {
                            continue;
                        }
                        if v < 0.0 || v.fract() != 0.0 || v >= *states as f64 {
                            return Err(BayesError::data(format!(
                                "row {r}, feature {i}: value {v} not a state index"
                            )));
                        }
                        cell[i][c * states + v as usize] += w;
                        observed[i][c] += w;
                    }
                    FeatureKind::Count => {
                        if !v.is_nan() {
                            if !v.is_finite() || v < 0.0 {
                                return Err(BayesError::data(format!(
                                    "row {r}, feature {i}: bad count {v}"
                                )));
                            }
                            count_w[c * nc + cj] += w * v;
                        }
                        cj += 1;
                    }
                }
            }
        }
        let total_w: f64 = class_w.iter().sum();
        let denom = total_w + n_classes as f64 * self.prior_alpha;
        if denom <= 0.0 {
            return Err(BayesError::data("total weight is zero"));
        }
        let class_prior: Vec<f64> = class_w
            .iter()
            .map(|w| (w + self.prior_alpha) / denom)
            .collect();
        let mut tables = Vec::with_capacity(nf);
        for (i, k) in kinds.iter().enumerate() {
            match k {
                FeatureKind::Categorical { states } => {
                    let mut t = vec![0.0; n_classes * states];
                    for c in 0..n_classes {
                        let d = observed[i][c] + *states as f64 * self.alpha;
                        for s in 0..*states {
                            t[c * states + s] = if d > 0.0 {
                                (cell[i][c * states + s] + self.alpha) / d
                            } else {
                                1.0 / *states as f64
                            };
                        }
                    }
                    tables.push(t);
                }
                FeatureKind::Count => tables.push(Vec::new()),
            }
        }
        let mut count_theta = vec![0.0; n_classes * nc];
        for c in 0..n_classes {
            let row = &count_w[c * nc..(c + 1) * nc];
            let d: f64 = row.iter().sum::<f64>() + nc as f64 * self.alpha;
            for j in 0..nc {
                count_theta[c * nc + j] = if d > 0.0 {
                    (row[j] + self.alpha) / d
                } else {
                    1.0 / nc as f64
                };
            }
        }
        Ok(NaiveBayes {
            n_classes,
            class_prior,
            kinds: kinds.to_vec(),
            tables,
            count_theta,
            count_index,
            logs: std::sync::OnceLock::new(),
        }
        .with_logs())
    }
}

impl NaiveBayes {
    /// A categorical naive Bayes from given tables, e.g. read from a model file. Tables need
    /// not be normalised (see [`crate::trim`] on the TrimBN models).
    ///
    /// # Arguments
    /// - `class_prior[c]`;
    /// - `tables[i][c][s]` = `Pr(x_i = s | c)`; every feature must list `class_prior.len()`
    ///   rows of equal length ≥ 1.
    ///
    /// # Errors
    /// [`BayesError::InvalidNetwork`] on ragged tables or negative / non-finite entries.
    pub fn from_tables(
        class_prior: Vec<f64>,
        tables: &[Vec<Vec<f64>>],
    ) -> Result<Self, BayesError> {
        let n_classes = class_prior.len();
        if n_classes == 0 || class_prior.iter().any(|p| !p.is_finite() || *p < 0.0) {
            return Err(BayesError::network("bad class prior"));
        }
        let mut kinds = Vec::new();
        let mut flat = Vec::new();
        for (i, t) in tables.iter().enumerate() {
            let k = t.first().map_or(0, Vec::len);
            if t.len() != n_classes || k == 0 || t.iter().any(|r| r.len() != k) {
                return Err(BayesError::network(format!(
                    "table of feature {i} is ragged"
                )));
            }
            if t.iter().flatten().any(|p| !p.is_finite() || *p < 0.0) {
                return Err(BayesError::network(format!(
                    "table of feature {i} has a bad entry"
                )));
            }
            kinds.push(FeatureKind::Categorical { states: k });
            flat.push(t.iter().flatten().copied().collect());
        }
        Ok(Self {
            n_classes,
            class_prior,
            kinds,
            tables: flat,
            count_theta: Vec::new(),
            count_index: Vec::new(),
            logs: std::sync::OnceLock::new(),
        }
        .with_logs())
    }

    /// Number of classes.
    #[must_use]
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// Number of features.
    #[must_use]
    pub fn n_features(&self) -> usize {
        self.kinds.len()
    }

    /// `Pr(c)` for each class.
    #[must_use]
    pub fn class_prior(&self) -> &[f64] {
        &self.class_prior
    }

    /// The feature kinds.
    #[must_use]
    pub fn feature_kinds(&self) -> &[FeatureKind] {
        &self.kinds
    }

    /// `Pr(x_i = s | c)` of categorical feature `i` (0 for count features or out-of-range).
    #[must_use]
    pub fn prob(&self, feature: usize, class: usize, state: usize) -> f64 {
        match self.kinds.get(feature) {
            Some(FeatureKind::Categorical { states })
                if state < *states && class < self.n_classes =>
            {
                self.tables[feature][class * states + state]
            }
            _ => 0.0,
        }
    }

    /// `log Pr(c) + Σ_i log Pr(x_i | c)` for each class; missing (`NaN`) entries are skipped.
    ///
    /// # Errors
    /// [`BayesError::InvalidData`] if the row length is wrong or a categorical value is not
    /// a state index.
    pub fn log_joint(&self, row: &[f64]) -> Result<Vec<f64>, BayesError> {
        if row.len() != self.kinds.len() {
            return Err(BayesError::data(format!(
                "row has {} entries, model has {} features",
                row.len(),
                self.kinds.len()
            )));
        }
        let logs = self.logs();
        let nc = self.count_index.len();
        let mut out: Vec<f64> = logs.prior.clone();
        let mut cj = 0;
        for (i, k) in self.kinds.iter().enumerate() {
            let v = row[i];
            match k {
                FeatureKind::Categorical { states } => {
                    if v.is_nan() {
                        continue;
                    }
                    if v < 0.0 || v.fract() != 0.0 || v >= *states as f64 {
                        return Err(BayesError::data(format!(
                            "feature {i}: value {v} not a state index"
                        )));
                    }
                    for (c, o) in out.iter_mut().enumerate() {
                        *o += logs.tables[i][c * states + v as usize];
                    }
                }
                FeatureKind::Count => {
                    if !v.is_nan() && v != 0.0 {
                        for (c, o) in out.iter_mut().enumerate() {
                            *o += v * logs.count_theta[c * nc + cj];
                        }
                    }
                    cj += 1;
                }
            }
        }
        Ok(out)
    }

    /// The posterior `Pr(c | x)` over classes (log-sum-exp normalised).
    ///
    /// # Errors
    /// As [`NaiveBayes::log_joint`].
    pub fn predict_proba(&self, row: &[f64]) -> Result<Vec<f64>, BayesError> {
        let lj = self.log_joint(row)?;
        let m = lj.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !m.is_finite() {
            return Ok(vec![1.0 / self.n_classes as f64; self.n_classes]);
        }
        let e: Vec<f64> = lj.iter().map(|v| (v - m).exp()).collect();
        let z: f64 = e.iter().sum();
        Ok(e.into_iter().map(|v| v / z).collect())
    }

    /// The most probable class (lowest index on ties).
    ///
    /// # Errors
    /// As [`NaiveBayes::log_joint`].
    pub fn predict(&self, row: &[f64]) -> Result<u32, BayesError> {
        let p = self.log_joint(row)?;
        let mut best = 0;
        for c in 1..p.len() {
            if p[c] > p[best] {
                best = c;
            }
        }
        Ok(best as u32)
    }

    /// The log-likelihood ratio `log Pr(x | a) − log Pr(x | b)` of the observed features
    /// (the class prior is not included).
    ///
    /// # Errors
    /// As [`NaiveBayes::log_joint`]; [`BayesError::InvalidQuery`] for a class out of range.
    pub fn log_likelihood_ratio(&self, row: &[f64], a: usize, b: usize) -> Result<f64, BayesError> {
        if a >= self.n_classes || b >= self.n_classes {
            return Err(BayesError::query("class out of range"));
        }
        let lj = self.log_joint(row)?;
        Ok((lj[a] - self.class_prior[a].ln()) - (lj[b] - self.class_prior[b].ln()))
    }

    /// The model over the categorical features `features` only (the others marginalised,
    /// exact for naive Bayes).
    ///
    /// # Errors
    /// [`BayesError::InvalidQuery`] if an index is out of range.
    pub fn restrict(&self, features: &[usize]) -> Result<Self, BayesError> {
        if features.iter().any(|&f| f >= self.kinds.len()) {
            return Err(BayesError::query("feature index out of range"));
        }
        let mut kinds = Vec::new();
        let mut tables = Vec::new();
        let mut count_index = Vec::new();
        let mut count_theta_cols = Vec::new();
        for &f in features {
            kinds.push(self.kinds[f]);
            tables.push(self.tables[f].clone());
            if self.kinds[f] == FeatureKind::Count {
                count_index.push(kinds.len() - 1);
                count_theta_cols.push(self.count_index.iter().position(|&x| x == f).unwrap_or(0));
            }
        }
        let nc_old = self.count_index.len();
        let mut count_theta = Vec::new();
        for c in 0..self.n_classes {
            for &j in &count_theta_cols {
                count_theta.push(self.count_theta[c * nc_old + j]);
            }
        }
        Ok(Self {
            n_classes: self.n_classes,
            class_prior: self.class_prior.clone(),
            kinds,
            tables,
            count_theta,
            count_index,
            logs: std::sync::OnceLock::new(),
        }
        .with_logs())
    }

    /// The model as a Bayesian network: the class (variable 0, named `class_name`) is the
    /// only parent of every feature (variables `1..`, named by `feature_names`).
    ///
    /// # Errors
    /// [`BayesError::InvalidQuery`] if a feature is a count feature or the name count is
    /// wrong; [`BayesError::InvalidNetwork`] if names repeat.
    pub fn to_bayesian_network(
        &self,
        class_name: &str,
        feature_names: &[String],
    ) -> Result<BayesianNetwork, BayesError> {
        if feature_names.len() != self.kinds.len() {
            return Err(BayesError::query("one name per feature is needed"));
        }
        let mut vars = vec![Variable::numbered(class_name, self.n_classes)];
        let mut cpts = vec![Cpt {
            parents: vec![],
            probs: self.class_prior.clone(),
        }];
        for (i, k) in self.kinds.iter().enumerate() {
            let FeatureKind::Categorical { states } = k else {
                return Err(BayesError::query("count features have no CPT"));
            };
            vars.push(Variable::numbered(feature_names[i].clone(), *states));
            cpts.push(Cpt {
                parents: vec![0],
                probs: self.tables[i].clone(),
            });
        }
        BayesianNetwork::new(vars, cpts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laplace_counts_and_missing() -> Result<(), BayesError> {
        let x = [0.0, 1.0, f64::NAN, 1.0, 1.0, 0.0];
        let y = [0, 0, 1];
        let kinds = [FeatureKind::Categorical { states: 2 }; 2];
        let nb = NaiveBayesParams::default().fit(&kinds, &x, &y, 2, None)?;
        // class prior (2+1)/(3+2)
        assert!((nb.class_prior()[0] - 0.6).abs() < 1e-12);
        // feature 0 in class 0: observed once (row 0 value 0; row 1 missing): (1+1)/(1+2)
        assert!((nb.prob(0, 0, 0) - 2.0 / 3.0).abs() < 1e-12);
        // weights double row 2
        let nbw = NaiveBayesParams::default().fit(&kinds, &x, &y, 2, Some(&[1.0, 1.0, 2.0]))?;
        assert!((nbw.class_prior()[1] - 3.0 / 6.0).abs() < 1e-12);
        // a missing value is marginalised: same posterior as the restricted model
        let p = nb.predict_proba(&[f64::NAN, 1.0])?;
        let q = nb.restrict(&[1])?.predict_proba(&[1.0])?;
        assert!((p[0] - q[0]).abs() < 1e-12);
        Ok(())
    }

    #[test]
    fn multinomial_counts() -> Result<(), BayesError> {
        let kinds = [FeatureKind::Count; 3];
        let x = [3.0, 0.0, 1.0, 0.0, 2.0, 2.0];
        let nb = NaiveBayesParams::default().fit(&kinds, &x, &[0, 1], 2, None)?;
        // theta_{0,0} = (3+1)/(4+3)
        let lj = nb.log_joint(&[1.0, 0.0, 0.0])?;
        assert!((lj[0] - (0.5f64.ln() + (4.0f64 / 7.0).ln())).abs() < 1e-12);
        assert!(nb.predict(&[5.0, 0.0, 0.0])? == 0);
        Ok(())
    }
}
