//! # srl-learn: learners for statistical relational learning
//!
//! The srl book's chapter on this crate: [srl-learn](../../srl-learn.html); the papers' reproductions:
//! [Reproductions](../../papers/index.html) (links work in the book built by `cargo xtask book`).
//!
//! Sits above srl-infer and srl-graph, and above srl-bayes and srl-eval for one reason: it
//! holds the collective-classification pipeline, which wires srl-bayes's local naive Bayes
//! classifiers and srl-eval's folds beside its own learners. It holds:
//! - [`collective`]: the one collective-classification pipeline (CO, ICA, GS, LBP, MF ×
//!   NB, MNB, LR; the RS/SS/M protocols of Sen et al. 2008; beside them label
//!   propagation, MLP, GCN, APPNP and Correct & Smooth, and the sparse-label protocol of
//!   Shchur et al. 2018) that `srl classify`, `cargo xtask reproduce
//!   collective-classification` and srl-py's estimators call;
//! - [`propagation`]: sparse propagation on the graph's CSR form (normalised adjacency,
//!   label propagation, Correct & Smooth, APPNP's propagation);
//! - [`neural`]: the MLP, GCN and APPNP, trained on the CPU with candle (the default-on
//!   `neural` feature);
//! - [`LogisticRegression`]: multinomial logistic regression with an L2 prior, fitted by
//!   argmin's L-BFGS (the *LOGREG* baseline of Sen & Getoor 2006), also usable as srl-infer's
//!   `LocalClassifier` ([`LocalLogisticRegression`]);
//! - [`RelationalMarkovNetwork`] (*MN*, Taskar et al. 2002) and [`CostSensitiveMarkovNetwork`]
//!   (*CSMN*, Sen & Getoor 2006, §5), log-linear models over node and edge cliques trained
//!   with marginals from any `srl_infer::MarginalInference`;
//! - [`expected_cost_decision`]: the expected-cost labelling of Sen & Getoor (2006, §4) from
//!   node and edge marginals, a pairwise energy minimised by MAP inference;
//! - [`uknn`]: uK-NN, K-nearest neighbours with per-example context weights
//!   (Zadrozny et al. 2009): weighted voting, weighted distance, or both. The weights
//!   `P(c = c_t | x, y) / P(c = c_t)` are an input: any probabilistic classifier may supply
//!   them (the experiments use srl-bayes' naive Bayes, combined in xtask).
//!
//! ```
//! use srl_learn::uknn::{Metric, UknnParams, Weighting};
//! let x = vec![1.0, 0.0, 0.9, 0.1, 0.0, 1.0];
//! let model = UknnParams { k: 1, metric: Metric::Cosine, weighting: Weighting::Voting }
//!     .fit(x, 2, vec![0, 0, 1], 2)?;
//! let p = model.predict(&[1.0, 0.05], &[1.0, 1.0, 1.0])?;
//! assert_eq!(p.class, 0);
//! # Ok::<(), srl_learn::LearnError>(())
//! ```

pub mod collective;
pub mod csmn;
pub mod decision;
pub mod error;
pub mod logreg;
pub mod mn;
pub mod neural;
mod optim;
pub mod propagation;
pub mod relational;
pub mod uknn;

pub use collective::{
    CollectiveMethod, CollectiveSettings, CsBase, EvalSplit, LocalModel, LrPrior, MethodRun,
    Protocol, ProtocolResult, SplitRun, Transduction,
};
pub use csmn::{
    CostSensitiveMarkovNetwork, CostSensitiveMarkovNetworkParams, CsmnInference, CsmnPrediction,
};
pub use decision::{
    CostCliques, CostDecisions, Decision, ExampleCosts, PolishedMaxProduct, expected_cost_decision,
    min_expected_cost, realised_costs,
};
pub use error::LearnError;
pub use logreg::{Lambda, LocalLogisticRegression, LogisticRegression, LogisticRegressionParams};
pub use mn::{RelationalMarkovNetwork, RelationalMarkovNetworkParams, WarmStartInference};
pub use optim::FitReport;
pub use relational::{EdgeWeights, GraphMarginals, Layout};
