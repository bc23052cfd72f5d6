//! # srl-eval: metrics, protocols and result tables
//!
//! The srl book's chapter on this crate: [srl-eval](../../srl-eval.html); the papers' reproductions:
//! [Reproductions](../../papers/index.html) (links work in the book built by `cargo xtask book`).
//!
//! The evaluation layer of srl. It knows no model: it works on labels, scores, costs and
//! folds of instance indices, so every learner (srl-learn, srl-boost, srl-bayes) is scored
//! the same way by `cargo xtask reproduce`. In the crate graph it sits beside the learners,
//! under xtask, and depends only on srl-graph (for [`srl_graph::NodeId`] /
//! [`srl_graph::EdgeId`] in the structured cost).
//!
//! - [`metrics`]: accuracy, empirical agreement (ECA), [`metrics::Confusion`] (precision,
//!   recall, false-negative rate, F-beta), [`metrics::RocCurve`] (AUC-ROC, weighted AUC-ROC
//!   via [`metrics::WeightedAuc`], AUC-PR with the Davis & Goadrich interpolation), the
//!   structured misclassification cost of Sen & Getoor, [`metrics::Summary`] (mean, standard
//!   error) and the matched average of snowball sampling ([`metrics::MatchedAverage`]);
//! - [`cv`]: cross-validation over closures ([`cv::Folds`], [`cv::cross_validate`]);
//! - [`table`]: [`ResultRow`] / [`ResultsTable`], the rows every experiment writes to
//!   `results.json` and `results.md`;
//! - [`EvalError`]: every invalid input (empty, length mismatch, NaN, single class, …) is
//!   reported as an error, never a panic.
//!
//! Formulas and sources of each metric: `docs/srl-eval.md`.
//!
//! ```
//! use srl_eval::metrics::{Confusion, RocCurve, WeightedAuc};
//! use srl_eval::{ResultRow, ResultsTable};
//!
//! let scores = [0.95, 0.8, 0.7, 0.6, 0.55, 0.4, 0.3, 0.1];
//! let truth = [true, true, false, true, false, false, true, false];
//! let curve = RocCurve::new(&scores, &truth)?;
//! assert_eq!(curve.auc()?, 0.75);
//! let wauc = WeightedAuc::default().score(&curve)?; // N = 5, γ = 0.8 (Yang et al. 2014)
//! assert!(wauc > 0.0 && wauc < curve.auc()?);
//!
//! // Threshold at the positive fraction, as Yang et al. do for FNR and F5.
//! let c = Confusion::at_threshold(&scores, &truth, 0.5)?;
//! assert_eq!(c.false_negative_rate()?, 0.25);
//!
//! let mut table = ResultsTable::new("demo", 1, true);
//! table.push(ResultRow::new("toy", "scorer", "auc_roc", curve.auc()?));
//! table.push(ResultRow::new("toy", "scorer", "f5", c.f_beta(5.0)?));
//! assert_eq!(table.rows.len(), 2);
//! # Ok::<(), srl_eval::EvalError>(())
//! ```

pub mod cv;
pub mod error;
pub mod metrics;
pub mod table;

pub use error::EvalError;
pub use metrics::{
    Confusion, CostBreakdown, CostTable, MatchedAverage, RocCurve, Summary, WeightedAuc,
};
pub use table::{ResultRow, ResultsTable, format_value};
