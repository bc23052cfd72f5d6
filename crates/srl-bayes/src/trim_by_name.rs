//! Trimming a general Bayesian network by names: one builder over the [`trim`](crate::trim)
//! machinery (variable ids by name, state by name, [`ThresholdClassifier`],
//! [`JointAgreement`], [`BranchAndBound`]).
//!
//! Without it, trimming takes five steps: look up the class and feature ids, find the
//! positive state's position, build a [`ThresholdClassifier`], tabulate `Pr(X, D)` with
//! [`JointAgreement::new`] and run [`branch_and_bound`](crate::trim::branch_and_bound).
//! With it:
//!
//! ```
//! use srl_bayes::{BayesianNetwork, Cpt, Variable};
//! // D -> A, D -> B: two noisy sensors of a binary class
//! let var = |n: &str| Variable { name: n.into(), states: vec!["no".into(), "yes".into()] };
//! let net = BayesianNetwork::new(
//!     vec![var("d"), var("a"), var("b")],
//!     vec![
//!         Cpt { parents: vec![], probs: vec![0.7, 0.3] },
//!         Cpt { parents: vec![0], probs: vec![0.9, 0.1, 0.2, 0.8] },
//!         Cpt { parents: vec![0], probs: vec![0.6, 0.4, 0.4, 0.6] },
//!     ],
//! )?;
//! let t = net.trim("d", "yes").features(["a", "b"]).threshold(0.5).budget(1.0).run()?;
//! assert_eq!(t.features, ["a"]); // the better sensor alone
//! assert!(t.trimming.eca > 0.9);
//! # Ok::<(), srl_bayes::BayesError>(())
//! ```
//!
//! Source: Choi & Van den Broeck (2018), *On robust trimming of Bayesian network
//! classifiers*, IJCAI, Sections 4-5 (ECA, MAA, Algorithm 1).

use crate::error::BayesError;
use crate::network::BayesianNetwork;
use crate::trim::{BranchAndBound, FeatureOrder, JointAgreement, ThresholdClassifier, Trimming};
use crate::ve::VariableElimination;

/// A trimming problem stated by names; built by [`BayesianNetwork::trim`], run by
/// [`TrimByName::run`].
///
/// | setter | default | meaning |
/// |---|---|---|
/// | [`features`](TrimByName::features) | every leaf but the class | candidate features, by name |
/// | [`threshold`](TrimByName::threshold) | `0.5` | `T`: predict the positive state iff `Pr(d \| x) ≥ T`, in `[0, 1]` |
/// | [`budget`](TrimByName::budget) | required | `B ≥ 0`, the largest total cost of the kept features |
/// | [`costs`](TrimByName::costs) | 1 per feature | cost of each feature, parallel to the features, each `> 0` |
/// | [`max_table`](TrimByName::max_table) | [`default_max_table`](crate::compile::default_max_table) | limit on `Π_i \|X_i\|` and on the compilation's largest table (entries), as `srl trim --max-table` |
/// | [`order`](TrimByName::order) | [`FeatureOrder::DecreasingInformation`] | branching order |
#[derive(Clone, Debug)]
#[must_use = "a trimming problem does nothing until `.run()`"]
pub struct TrimByName<'a> {
    net: &'a BayesianNetwork,
    class: String,
    positive_state: String,
    features: Option<Vec<String>>,
    threshold: f64,
    budget: Option<f64>,
    costs: Option<Vec<f64>>,
    max_table: usize,
    order: FeatureOrder,
}

/// The answer of [`TrimByName::run`]: the kept features by name, next to the index-based
/// [`Trimming`] and the classifier it trimmed.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedTrimming {
    /// Names of the kept features, in the classifier's feature order.
    pub features: Vec<String>,
    /// Their total cost.
    pub cost: f64,
    /// The search result (`subset` indexes `classifier.features`; `threshold` is `T'`,
    /// `eca` the expected classification agreement with the full classifier).
    pub trimming: Trimming,
    /// The full classifier (ids resolved from the names).
    pub classifier: ThresholdClassifier,
}

impl BayesianNetwork {
    /// Starts a trimming problem for the class variable `class` with positive state
    /// `positive_state` (both by name; checked by [`TrimByName::run`]).
    pub fn trim<'a>(&'a self, class: &str, positive_state: &str) -> TrimByName<'a> {
        TrimByName {
            net: self,
            class: class.to_string(),
            positive_state: positive_state.to_string(),
            features: None,
            threshold: 0.5,
            budget: None,
            costs: None,
            max_table: crate::compile::default_max_table(),
            order: FeatureOrder::default(),
        }
    }

    /// The index of state `state` of variable `id`.
    ///
    /// # Errors
    /// [`BayesError::UnknownState`] if the variable has no such state.
    ///
    /// # Panics
    /// If `id >= self.len()`.
    pub fn state_id(&self, id: usize, state: &str) -> Result<usize, BayesError> {
        let v = self.variable(id);
        v.states
            .iter()
            .position(|s| s == state)
            .ok_or_else(|| BayesError::UnknownState {
                variable: v.name.clone(),
                state: state.to_string(),
                states: v.states.join(", "),
            })
    }
}

impl TrimByName<'_> {
    /// The candidate features, by variable name (default: every leaf but the class).
    pub fn features<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.features = Some(names.into_iter().map(|s| s.as_ref().to_string()).collect());
        self
    }

    /// The threshold `T` of the full classifier (default 0.5).
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }

    /// The budget `B` on the total cost of the kept features (required).
    pub fn budget(mut self, budget: f64) -> Self {
        self.budget = Some(budget);
        self
    }

    /// One cost per feature, in the order of [`TrimByName::features`] (default 1 each).
    pub fn costs(mut self, costs: impl IntoIterator<Item = f64>) -> Self {
        self.costs = Some(costs.into_iter().collect());
        self
    }

    /// The limit on the features' joint states and on the compilation's largest table, in
    /// entries (default [`crate::compile::default_max_table`]: a quarter of the machine's
    /// memory at 64 bytes per entry); checked on the plan before any table is built.
    pub fn max_table(mut self, limit: usize) -> Self {
        self.max_table = limit;
        self
    }

    /// The branching order of branch and bound.
    pub fn order(mut self, order: FeatureOrder) -> Self {
        self.order = order;
        self
    }

    /// The full [`ThresholdClassifier`] with every name resolved to an id.
    ///
    /// # Errors
    /// [`BayesError::UnknownVariable`] for an unknown class or feature name,
    /// [`BayesError::UnknownState`] for an unknown positive state, and as
    /// [`ThresholdClassifier::validate`] (class among the features, a repeated feature,
    /// more than 63 features, threshold outside `[0, 1]`); [`BayesError::InvalidQuery`]
    /// when there is no feature.
    pub fn classifier(&self) -> Result<ThresholdClassifier, BayesError> {
        let class = self.net.id(&self.class)?;
        let positive_state = self.net.state_id(class, &self.positive_state)?;
        let features: Vec<usize> = match &self.features {
            Some(names) => names
                .iter()
                .map(|n| self.net.id(n))
                .collect::<Result<_, _>>()?,
            None => self
                .net
                .leaves()
                .into_iter()
                .filter(|&v| v != class)
                .collect(),
        };
        if features.is_empty() {
            return Err(BayesError::query("no features to trim"));
        }
        let clf = ThresholdClassifier {
            class,
            positive_state,
            features,
            threshold: self.threshold,
        };
        clf.validate(self.net)?;
        Ok(clf)
    }

    /// Compiles `Pr(X, D)` ([`JointAgreement::new`], [`crate::compile`]) and runs branch
    /// and bound ([`BranchAndBound::run`]).
    ///
    /// # Errors
    /// As [`TrimByName::classifier`]; [`BayesError::InvalidQuery`] when no budget was set,
    /// the costs are not one positive number per feature, or the budget is negative;
    /// [`BayesError::TooLarge`] past `max_table` (before any table is built);
    /// [`BayesError::ZeroProbabilityEvidence`].
    ///
    /// # Complexity
    /// One compilation (its plan's operations), `O(Π_i |X_i|)` memory, worst case
    /// `O(2^n)` subset evaluations.
    pub fn run(&self) -> Result<NamedTrimming, BayesError> {
        let classifier = self.classifier()?;
        let budget = self
            .budget
            .ok_or_else(|| BayesError::query("no budget: call `.budget(b)` before `.run()`"))?;
        let n = classifier.features.len();
        let costs = self.costs.clone().unwrap_or_else(|| vec![1.0; n]);
        let ve = VariableElimination {
            max_entries: self.max_table,
        };
        let model = JointAgreement::new(self.net, &classifier, &ve, self.max_table)?;
        let trimming = BranchAndBound { order: self.order }.run(&model, &costs, budget)?;
        let features = trimming
            .subset
            .iter()
            .map(|&i| self.net.variable(classifier.features[i]).name.clone())
            .collect();
        let cost = trimming.subset.iter().map(|&i| costs[i]).sum();
        Ok(NamedTrimming {
            features,
            cost,
            trimming,
            classifier,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{Cpt, Variable};

    fn net() -> BayesianNetwork {
        let var = |n: &str| Variable {
            name: n.into(),
            states: vec!["no".into(), "yes".into()],
        };
        BayesianNetwork::new(
            vec![var("d"), var("a"), var("b"), var("c")],
            vec![
                Cpt {
                    parents: vec![],
                    probs: vec![0.7, 0.3],
                },
                Cpt {
                    parents: vec![0],
                    probs: vec![0.9, 0.1, 0.2, 0.8],
                },
                Cpt {
                    parents: vec![0],
                    probs: vec![0.6, 0.4, 0.4, 0.6],
                },
                Cpt {
                    parents: vec![0],
                    probs: vec![0.8, 0.2, 0.3, 0.7],
                },
            ],
        )
        .expect("valid")
    }

    #[test]
    fn by_name_equals_by_id() {
        let net = net();
        let named = net
            .trim("d", "yes")
            .features(["a", "b", "c"])
            .threshold(0.4)
            .budget(2.0)
            .costs([1.0, 0.5, 1.0])
            .run()
            .expect("runs");
        let clf = ThresholdClassifier {
            class: 0,
            positive_state: 1,
            features: vec![1, 2, 3],
            threshold: 0.4,
        };
        let ve = VariableElimination::default();
        let m = JointAgreement::new(&net, &clf, &ve, 1 << 10).expect("table");
        let by_id = BranchAndBound::default()
            .run(&m, &[1.0, 0.5, 1.0], 2.0)
            .expect("runs");
        assert_eq!(named.trimming, by_id);
        assert_eq!(named.classifier, clf);
        let names: Vec<&str> = by_id.subset.iter().map(|&i| ["a", "b", "c"][i]).collect();
        assert_eq!(named.features, names);
        // default features: the leaves but the class
        let leaves = net.trim("d", "yes").budget(3.0).run().expect("runs");
        assert_eq!(leaves.classifier.features, vec![1, 2, 3]);
        assert_eq!(leaves.features.len(), 3);
        assert!((leaves.trimming.eca - 1.0).abs() < 1e-9);
    }

    #[test]
    fn max_table_is_checked_before_work() {
        // a, b, c binary: 8 instantiations
        let net = net();
        let small = net
            .trim("d", "yes")
            .features(["a", "b", "c"])
            .budget(1.0)
            .max_table(7)
            .run()
            .expect_err("8 instantiations > 7");
        assert!(
            matches!(
                small,
                BayesError::TooLarge {
                    entries: 8,
                    limit: 7
                }
            ),
            "{small}"
        );
        let fits = net
            .trim("d", "yes")
            .features(["a", "b", "c"])
            .budget(1.0)
            .max_table(8)
            .run()
            .expect("fits");
        let default = net
            .trim("d", "yes")
            .features(["a", "b", "c"])
            .budget(1.0)
            .run()
            .expect("default limit");
        assert_eq!(fits, default);
    }

    #[test]
    fn unknown_names_are_typed_errors() {
        let net = net();
        let err = net.trim("x", "yes").budget(1.0).run().expect_err("no x");
        assert!(matches!(err, BayesError::UnknownVariable { ref name } if name == "x"));
        let err = net
            .trim("d", "maybe")
            .budget(1.0)
            .run()
            .expect_err("no state");
        assert!(
            matches!(err, BayesError::UnknownState { ref state, .. } if state == "maybe"),
            "{err}"
        );
        let err = net
            .trim("d", "yes")
            .features(["a", "zz"])
            .budget(1.0)
            .run()
            .expect_err("no zz");
        assert!(matches!(err, BayesError::UnknownVariable { ref name } if name == "zz"));
        let err = net.trim("d", "yes").run().expect_err("no budget");
        assert!(matches!(err, BayesError::InvalidQuery { .. }));
        let err = net
            .trim("d", "yes")
            .features(["a", "d"])
            .budget(1.0)
            .run()
            .expect_err("class as feature");
        assert!(matches!(err, BayesError::InvalidQuery { .. }));
        let err = net
            .trim("d", "yes")
            .features(["a"])
            .costs([1.0, 2.0])
            .budget(1.0)
            .run()
            .expect_err("two costs for one feature");
        assert!(matches!(err, BayesError::InvalidQuery { .. }));
    }
}
