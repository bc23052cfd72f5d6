//! The `derived/*.nb.json` naive Bayes files of the TrimBN data set.

use std::path::Path;

use serde::Deserialize;

use super::read_text;
use crate::error::BayesError;
use crate::naive_bayes::NaiveBayes;
use crate::network::BayesianNetwork;

/// A trimming problem as shipped with the TrimBN models (Choi & Van den Broeck 2018): a
/// naive Bayes classifier, its decision rule and the feature costs and budget.
#[derive(Clone, Debug, PartialEq)]
pub struct TrimProblem {
    /// Network name (e.g. `bupa`).
    pub name: String,
    /// Name of the class node.
    pub class_name: String,
    /// Feature names, in the file's (the `f`-line) order.
    pub feature_names: Vec<String>,
    /// The model; its CPT rows are copied unnormalised from the source.
    pub model: NaiveBayes,
    /// The class state the rule tests ("decide `positive_state` iff
    /// `Pr(class = positive_state | evidence) ≥ threshold`").
    pub positive_state: usize,
    /// The decision threshold `T`.
    pub threshold: f64,
    /// The budget `B`.
    pub budget: f64,
    /// The cost of each feature.
    pub costs: Vec<f64>,
}

impl TrimProblem {
    /// The model as a Bayesian network (class node 0, features `1..=n` in file order).
    ///
    /// # Errors
    /// As [`NaiveBayes::to_bayesian_network`].
    pub fn to_bayesian_network(&self) -> Result<BayesianNetwork, BayesError> {
        self.model
            .to_bayesian_network(&self.class_name, &self.feature_names)
    }
}

#[derive(Deserialize)]
struct RawDecision {
    class_state: usize,
    threshold: f64,
}

#[derive(Deserialize)]
struct RawFeature {
    name: String,
    #[serde(default)]
    states: Option<usize>,
    cost: f64,
    cpt_given_class: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct RawNb {
    network: String,
    class_node: String,
    #[serde(default)]
    class_states: Option<usize>,
    class_prior: Vec<f64>,
    decision: RawDecision,
    budget: f64,
    features: Vec<RawFeature>,
}

/// Reads a TrimBN `nb.json` file.
///
/// # Errors
/// [`BayesError::Io`] if unreadable; otherwise as [`parse_trimbn_json`].
pub fn read_trimbn_json(path: &Path) -> Result<TrimProblem, BayesError> {
    let text = read_text(path)?;
    parse_trimbn_json(&text, &path.display().to_string())
}

/// Parses the JSON of a TrimBN `nb.json` file (`class_node`, `class_states` (optional),
/// `class_prior`, `decision.{class_state, threshold}`, `budget`, `features[i].{name,
/// states (optional), cost, cpt_given_class[c][x]}`).
///
/// Rows of `cpt_given_class` are **not** required to sum to 1 (the TrimBN files copy
/// them unnormalised from their source; see [`crate::BayesianNetwork`]); the class prior
/// must sum to 1 within 1e-6.
///
/// # Errors
/// [`BayesError::Parse`] (with the serde line) for malformed JSON, missing fields or
/// numbers out of the `f64` range; [`BayesError::InFile`] (naming the file and the
/// feature) for `class_states` of 0 or different from the prior's length, a class prior
/// that is empty, negative or does not sum to 1, a feature with 0 states, a row whose
/// length differs from `states` or from the other rows, a table without one row per
/// class, a negative entry or an all-zero row, a feature name that repeats or is the
/// class's, a bad threshold or budget, a non-positive cost, or a decision state out of
/// range.
pub fn parse_trimbn_json(text: &str, file: &str) -> Result<TrimProblem, BayesError> {
    let raw: RawNb =
        serde_json::from_str(text).map_err(|e| BayesError::parse(file, e.line(), e.to_string()))?;
    let bad = |m: String| BayesError::network(m).in_file(file);
    let n_classes = raw.class_prior.len();
    match raw.class_states {
        Some(0) => return Err(bad("`class_states` is 0 (a class needs states)".into())),
        Some(k) if k != n_classes => {
            return Err(bad(format!(
                "`class_states` is {k} but `class_prior` has {n_classes} entries"
            )));
        }
        _ => {}
    }
    if n_classes == 0 {
        return Err(bad("`class_prior` is empty".into()));
    }
    if let Some(p) = raw.class_prior.iter().find(|p| !p.is_finite() || **p < 0.0) {
        return Err(bad(format!(
            "`class_prior` of `{}` has entry {p}, not a finite non-negative number",
            raw.class_node
        )));
    }
    let prior_sum: f64 = raw.class_prior.iter().sum();
    if (prior_sum - 1.0).abs() > 1e-6 {
        return Err(bad(format!(
            "`class_prior` of `{}` sums to {prior_sum}, not 1",
            raw.class_node
        )));
    }
    let mut names = std::collections::HashSet::new();
    names.insert(raw.class_node.as_str());
    for f in &raw.features {
        let name = &f.name;
        if !names.insert(f.name.as_str()) {
            return Err(bad(format!(
                "feature name `{name}` repeats (or is the class's)"
            )));
        }
        if f.cpt_given_class.len() != n_classes {
            return Err(bad(format!(
                "feature `{name}`: `cpt_given_class` has {} rows, expected one per class ({n_classes})",
                f.cpt_given_class.len()
            )));
        }
        let k = f
            .states
            .unwrap_or_else(|| f.cpt_given_class.first().map_or(0, Vec::len));
        if k == 0 {
            return Err(bad(format!("feature `{name}` has 0 states")));
        }
        for (c, row) in f.cpt_given_class.iter().enumerate() {
            if row.len() != k {
                return Err(bad(format!(
                    "feature `{name}`: the row for class state {c} has {} entries, expected {k} (its states)",
                    row.len()
                )));
            }
            if let Some(x) = row.iter().find(|x| !x.is_finite() || **x < 0.0) {
                return Err(bad(format!(
                    "feature `{name}`: the row for class state {c} has entry {x}, not a finite non-negative number"
                )));
            }
            if row.iter().all(|&x| x == 0.0) {
                return Err(bad(format!(
                    "feature `{name}`: the row for class state {c} is all zero (not a distribution)"
                )));
            }
        }
        if !(f.cost > 0.0 && f.cost.is_finite()) {
            return Err(bad(format!(
                "feature `{name}` has cost {}, expected a positive number",
                f.cost
            )));
        }
    }
    let tables: Vec<Vec<Vec<f64>>> = raw
        .features
        .iter()
        .map(|f| f.cpt_given_class.clone())
        .collect();
    let model = NaiveBayes::from_tables(raw.class_prior, &tables).map_err(|e| e.in_file(file))?;
    if raw.decision.class_state >= model.n_classes() {
        return Err(bad(format!(
            "decision class state {} out of range (the class has {} states)",
            raw.decision.class_state,
            model.n_classes()
        )));
    }
    if !(0.0..=1.0).contains(&raw.decision.threshold) {
        return Err(bad(format!(
            "threshold {} outside [0, 1]",
            raw.decision.threshold
        )));
    }
    if !(raw.budget.is_finite() && raw.budget >= 0.0) {
        return Err(bad(format!(
            "budget {} is not a finite non-negative number",
            raw.budget
        )));
    }
    Ok(TrimProblem {
        name: raw.network,
        class_name: raw.class_node,
        feature_names: raw.features.iter().map(|f| f.name.clone()).collect(),
        costs: raw.features.iter().map(|f| f.cost).collect(),
        model,
        positive_state: raw.decision.class_state,
        threshold: raw.decision.threshold,
        budget: raw.budget,
    })
}
