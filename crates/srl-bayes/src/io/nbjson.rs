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
    cost: f64,
    cpt_given_class: Vec<Vec<f64>>,
}

#[derive(Deserialize)]
struct RawNb {
    network: String,
    class_node: String,
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

/// Parses the JSON of a TrimBN `nb.json` file (`class_node`, `class_prior`,
/// `decision.{class_state, threshold}`, `budget`, `features[i].{name, cost,
/// cpt_given_class[c][x]}`).
///
/// # Errors
/// [`BayesError::Parse`] (with the serde line) for malformed JSON or missing fields;
/// [`BayesError::InvalidNetwork`] for ragged tables, a bad threshold, a non-positive cost
/// or a decision state out of range.
pub fn parse_trimbn_json(text: &str, file: &str) -> Result<TrimProblem, BayesError> {
    let raw: RawNb =
        serde_json::from_str(text).map_err(|e| BayesError::parse(file, e.line(), e.to_string()))?;
    let tables: Vec<Vec<Vec<f64>>> = raw
        .features
        .iter()
        .map(|f| f.cpt_given_class.clone())
        .collect();
    let model = NaiveBayes::from_tables(raw.class_prior, &tables)?;
    if raw.decision.class_state >= model.n_classes() {
        return Err(BayesError::network("decision class state out of range"));
    }
    if !(0.0..=1.0).contains(&raw.decision.threshold) {
        return Err(BayesError::network("threshold outside [0, 1]"));
    }
    if raw
        .features
        .iter()
        .any(|f| !(f.cost > 0.0 && f.cost.is_finite()))
    {
        return Err(BayesError::network("feature costs must be positive"));
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
