//! uK-NN: K-nearest neighbours with context weights (Zadrozny, Pappa, Meira, Gonçalves,
//! Rocha & Salles, "Exploiting Contexts to Deal with Uncertainty in Classification",
//! 2009, Section 5).
//!
//! To classify a test example from target context `c_t`, each training example `i` gets
//! the importance weight `w_i = P(c = c_t | x_i, y_i) / P(c = c_t)` (Theorem 3.1: training
//! on the reweighted distribution minimises the expected loss in context `c_t`). The
//! weights depend on the target context, so they are passed per query
//! ([`Uknn::predict`]); this crate does not estimate them (the paper uses naive Bayes,
//! see `srl_bayes::NaiveBayes`; xtask combines the two).

use serde::{Deserialize, Serialize};

use crate::error::LearnError;

/// How closeness is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Metric {
    /// Cosine similarity `Σ p_i q_i / sqrt(Σ p_i² Σ q_i²)` (the paper's `d_pq`; larger is
    /// closer; 0 when a vector is all zeros).
    Cosine,
    /// Dot product `Σ p_i q_i` (larger is closer); on binary term vectors, the number of
    /// shared terms used in the paper's toy example.
    Dot,
    /// Euclidean distance (smaller is closer).
    Euclidean,
}

/// Where the context weights enter (Section 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Weighting {
    /// Plain K-NN: weights ignored.
    None,
    /// Weighted voting: same neighbours, class score `S_c = Σ_{i ≤ k} w_i [y_i = c]`.
    Voting,
    /// Weighted distance: neighbours chosen by the weighted closeness (similarity × `w`,
    /// the paper's suggestion for similarities; distance / `w` for Euclidean), one vote
    /// each.
    Distance,
    /// Both: weighted closeness and weighted votes.
    Both,
}

/// Hyperparameters of [`Uknn`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `k` | 3 | neighbours | ≥ 1 |
/// | `metric` | `Cosine` | closeness measure | — |
/// | `weighting` | `Voting` | where the weights enter | — |
///
/// The defaults are the paper's u3-NN with weighted voting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UknnParams {
    /// Number of neighbours.
    pub k: usize,
    /// Closeness measure.
    pub metric: Metric,
    /// Where the context weights enter.
    pub weighting: Weighting,
}

impl Default for UknnParams {
    fn default() -> Self {
        Self {
            k: 3,
            metric: Metric::Cosine,
            weighting: Weighting::Voting,
        }
    }
}

/// A lazy uK-NN classifier: the stored training set.
///
/// Serialises with serde (parameters, training rows, norms, labels), so a fitted model
/// can be saved and loaded; a loaded model predicts exactly as the original.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Uknn {
    params: UknnParams,
    x: Vec<f64>,
    dim: usize,
    norms: Vec<f64>,
    labels: Vec<u32>,
    n_classes: usize,
}

/// One uK-NN decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UknnPrediction {
    /// The winning class (lowest index on a tie).
    pub class: u32,
    /// Score of each class (sum of votes).
    pub scores: Vec<f64>,
    /// The neighbours, closest first (training row indices).
    pub neighbors: Vec<usize>,
}

impl UknnPrediction {
    /// The class scores normalised to sum to 1, `S_c / Σ_c' S_c'` (the share of the
    /// neighbours' votes each class received, weighted as the votes were): a
    /// probability-like output with the same ordering as [`UknnPrediction::scores`], so
    /// its first largest entry is [`UknnPrediction::class`]. Uniform (`1 / n_classes`)
    /// when every score is 0 (e.g. all neighbours have context weight 0).
    ///
    /// This is not a calibrated probability: uK-NN (Zadrozny et al. 2009, Section 5)
    /// defines only the vote.
    #[must_use]
    pub fn normalized_scores(&self) -> Vec<f64> {
        let total: f64 = self.scores.iter().sum();
        if total > 0.0 {
            self.scores.iter().map(|s| s / total).collect()
        } else {
            let k = self.scores.len().max(1);
            vec![1.0 / k as f64; self.scores.len()]
        }
    }
}

impl UknnParams {
    /// Stores the training set.
    ///
    /// # Arguments
    /// - `x`: row-major `n × dim` feature matrix;
    /// - `labels[i] < n_classes`.
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] if `k = 0` or `dim = 0`;
    /// [`LearnError::InvalidData`] if the shapes disagree, the set is empty, a value is
    /// not finite or a label is out of range.
    pub fn fit(
        &self,
        x: Vec<f64>,
        dim: usize,
        labels: Vec<u32>,
        n_classes: usize,
    ) -> Result<Uknn, LearnError> {
        if self.k == 0 {
            return Err(LearnError::InvalidParameter {
                name: "k",
                message: "must be at least 1".into(),
            });
        }
        if dim == 0 {
            return Err(LearnError::InvalidParameter {
                name: "dim",
                message: "must be at least 1".into(),
            });
        }
        if labels.is_empty() || x.len() != labels.len() * dim {
            return Err(LearnError::InvalidData {
                message: format!(
                    "x has {} values for {} rows of {dim}",
                    x.len(),
                    labels.len()
                ),
            });
        }
        if x.iter().any(|v| !v.is_finite()) {
            return Err(LearnError::InvalidData {
                message: "non-finite feature value".into(),
            });
        }
        if let Some(l) = labels.iter().find(|&&l| l as usize >= n_classes) {
            return Err(LearnError::InvalidData {
                message: format!("label {l} ≥ {n_classes}"),
            });
        }
        let norms = x
            .chunks(dim)
            .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
            .collect();
        Ok(Uknn {
            params: *self,
            x,
            dim,
            norms,
            labels,
            n_classes,
        })
    }
}

impl Uknn {
    /// Number of training examples.
    #[must_use]
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether the training set is empty (never, after a successful fit).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The hyperparameters the model was fitted with.
    #[must_use]
    pub fn params(&self) -> &UknnParams {
        &self.params
    }

    /// Number of classes `n_classes` given to [`UknnParams::fit`].
    #[must_use]
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// Number of features `dim` of each training row (and of every query).
    #[must_use]
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Closeness of training row `i` to `q` (larger is closer; Euclidean is negated).
    fn closeness(&self, q: &[f64], qnorm: f64, i: usize) -> f64 {
        let row = &self.x[i * self.dim..(i + 1) * self.dim];
        match self.params.metric {
            Metric::Dot => row.iter().zip(q).map(|(a, b)| a * b).sum(),
            Metric::Cosine => {
                let d = self.norms[i] * qnorm;
                if d > 0.0 {
                    row.iter().zip(q).map(|(a, b)| a * b).sum::<f64>() / d
                } else {
                    0.0
                }
            }
            Metric::Euclidean => -row
                .iter()
                .zip(q)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt(),
        }
    }

    /// Classifies `query` for a target context whose training-example weights are
    /// `weights` (`w_i = P(c_t | x_i, y_i) / P(c_t)`, one per training row, ≥ 0; pass
    /// `None`-style all-ones weights for plain K-NN).
    ///
    /// Neighbours: the `k` training rows of largest closeness (weighted by `w` under
    /// [`Weighting::Distance`] / [`Weighting::Both`]: similarity × `w`, Euclidean
    /// distance / `w`), ties broken by lower row index. Votes: `w_i` under
    /// [`Weighting::Voting`] / [`Weighting::Both`], else 1.
    ///
    /// # Errors
    /// [`LearnError::InvalidData`] if `query` has the wrong length or a non-finite value,
    /// or `weights` has the wrong length or a negative / non-finite entry.
    ///
    /// # Complexity
    /// O(n · dim + n log k).
    pub fn predict(&self, query: &[f64], weights: &[f64]) -> Result<UknnPrediction, LearnError> {
        if query.len() != self.dim || query.iter().any(|v| !v.is_finite()) {
            return Err(LearnError::InvalidData {
                message: format!("query must have {} finite values", self.dim),
            });
        }
        if weights.len() != self.len() || weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err(LearnError::InvalidData {
                message: format!("need {} finite non-negative weights", self.len()),
            });
        }
        let qnorm = query.iter().map(|v| v * v).sum::<f64>().sqrt();
        let weighted_distance =
            matches!(self.params.weighting, Weighting::Distance | Weighting::Both);
        let weighted_vote = matches!(self.params.weighting, Weighting::Voting | Weighting::Both);
        let mut scored: Vec<(f64, usize)> = (0..self.len())
            .map(|i| {
                let c = self.closeness(query, qnorm, i);
                let c = if weighted_distance {
                    match self.params.metric {
                        Metric::Euclidean => {
                            if weights[i] > 0.0 {
                                c / weights[i]
                            } else {
                                f64::NEG_INFINITY
                            }
                        }
                        Metric::Cosine | Metric::Dot => c * weights[i],
                    }
                } else {
                    c
                };
                (c, i)
            })
            .collect();
        let k = self.params.k.min(scored.len());
        let cmp = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if k < scored.len() {
            scored.select_nth_unstable_by(k - 1, cmp);
            scored.truncate(k);
        }
        scored.sort_by(cmp);
        let mut scores = vec![0.0; self.n_classes];
        for &(_, i) in &scored {
            scores[self.labels[i] as usize] += if weighted_vote { weights[i] } else { 1.0 };
        }
        let mut class = 0;
        for c in 1..self.n_classes {
            if scores[c] > scores[class] {
                class = c;
            }
        }
        Ok(UknnPrediction {
            class: class as u32,
            scores,
            neighbors: scored.into_iter().map(|p| p.1).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 1 of the paper as binary term vectors over a..e; classes 1/2 → 0/1.
    fn toy() -> (Vec<f64>, Vec<u32>) {
        let docs = ["abd", "abe", "bcd", "bde", "cde", "abc"];
        let x = docs
            .iter()
            .flat_map(|d| {
                "abcde"
                    .chars()
                    .map(move |t| if d.contains(t) { 1.0 } else { 0.0 })
            })
            .collect();
        (x, vec![0, 1, 1, 1, 0, 0])
    }

    /// The paper's Table 2 weights (P(2001 | terms, class) / P(2001)), as printed.
    const W: [f64; 6] = [0.8, 1.906, 0.458, 1.2, 0.2, 1.28];

    #[test]
    fn toy_example_3nn_vs_u3nn() -> Result<(), LearnError> {
        let (x, y) = toy();
        let q = [1.0, 0.0, 1.0, 0.0, 1.0]; // {a, c, e}
        let plain = UknnParams {
            k: 3,
            metric: Metric::Dot,
            weighting: Weighting::None,
        }
        .fit(x.clone(), 5, y.clone(), 2)?;
        let p = plain.predict(&q, &W)?;
        assert_eq!(p.neighbors, vec![1, 4, 5]); // documents 2, 5, 6
        assert_eq!(p.class, 0); // 3-NN: class 1
        let u = UknnParams {
            k: 3,
            metric: Metric::Dot,
            weighting: Weighting::Voting,
        }
        .fit(x, 5, y, 2)?;
        let p = u.predict(&q, &W)?;
        assert_eq!(p.neighbors, vec![1, 4, 5]);
        assert!((p.scores[1] - 1.906).abs() < 1e-12);
        assert!((p.scores[0] - 1.48).abs() < 1e-12);
        assert_eq!(p.class, 1); // u3-NN: class 2
        Ok(())
    }

    #[test]
    fn weighted_distance_changes_neighbours() -> Result<(), LearnError> {
        let (x, y) = toy();
        let q = [1.0, 0.0, 1.0, 0.0, 1.0];
        let m = UknnParams {
            k: 3,
            metric: Metric::Cosine,
            weighting: Weighting::Distance,
        }
        .fit(x.clone(), 5, y.clone(), 2)?;
        // cosine × w: doc2 2/3·1.906, doc6 2/3·1.28, doc4 1/3·1.2 = 0.4 > doc5 2/3·0.2
        let p = m.predict(&q, &W)?;
        assert_eq!(p.neighbors, vec![1, 5, 3]);
        assert_eq!(p.scores, vec![1.0, 2.0]);
        let both = UknnParams {
            weighting: Weighting::Both,
            ..UknnParams::default()
        }
        .fit(x, 5, y, 2)?;
        let p = both.predict(&q, &W)?;
        assert!((p.scores[1] - (1.906 + 1.2)).abs() < 1e-12);
        Ok(())
    }

    #[test]
    fn serde_round_trip_and_normalized_scores() -> Result<(), LearnError> {
        let (x, y) = toy();
        let q = [1.0, 0.0, 1.0, 0.0, 1.0];
        let m = UknnParams::default().fit(x, 5, y, 2)?;
        let text = serde_json::to_string(&m).map_err(|e| LearnError::InvalidData {
            message: e.to_string(),
        })?;
        let back: Uknn = serde_json::from_str(&text).map_err(|e| LearnError::InvalidData {
            message: e.to_string(),
        })?;
        assert_eq!(back, m);
        let p = back.predict(&q, &W)?;
        assert_eq!(p, m.predict(&q, &W)?);
        let s = p.normalized_scores();
        assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        assert!((s[1] - p.scores[1] / (p.scores[0] + p.scores[1])).abs() < 1e-15);
        let zero = m.predict(&q, &[0.0; 6])?;
        assert_eq!(zero.normalized_scores(), vec![0.5, 0.5]);
        Ok(())
    }

    #[test]
    fn euclidean_and_errors() -> Result<(), LearnError> {
        let m = UknnParams {
            k: 1,
            metric: Metric::Euclidean,
            weighting: Weighting::Distance,
        }
        .fit(vec![0.0, 1.0, 3.0], 1, vec![0, 1, 1], 2)?;
        // distances 0.4, 0.6, 2.6; weights 0.1, 1, 1 → 4.0, 0.6, 2.6
        let p = m.predict(&[0.4], &[0.1, 1.0, 1.0])?;
        assert_eq!(p.neighbors, vec![1]);
        assert!(m.predict(&[0.4], &[1.0]).is_err());
        assert!(m.predict(&[f64::NAN], &[1.0; 3]).is_err());
        assert!(
            UknnParams {
                k: 0,
                ..UknnParams::default()
            }
            .fit(vec![1.0], 1, vec![0], 1)
            .is_err()
        );
        assert!(UknnParams::default().fit(vec![1.0], 1, vec![3], 2).is_err());
        Ok(())
    }
}
