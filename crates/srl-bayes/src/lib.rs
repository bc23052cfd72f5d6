//! # srl-bayes: Bayesian-network classifiers and their robust trimming
//!
//! The srl book's chapter on this crate: [srl-bayes](../../srl-bayes.html); the papers' reproductions:
//! [Reproductions](../../papers/index.html) (links work in the book built by `cargo xtask book`).
//!
//! Sits beside srl-learn and srl-boost, above srl-infer and srl-graph (it depends on
//! neither sibling). It holds:
//! - [`BayesianNetwork`]: discrete variables and CPTs, read from BIF ([`io::read_bif`], gzip
//!   or plain), Hugin NET ([`io::read_hugin_net`]), UAI ([`io::read_uai`]) and the TrimBN
//!   `nb.json` files ([`io::read_trimbn_json`]); exact inference by
//!   [`VariableElimination`] with a brute-force oracle ([`ve::enumerate_joint`]);
//! - [`NaiveBayes`]: categorical / binary / count features, Laplace smoothing, sample
//!   weights, missing values, learned from CSV tables via [`data::TableEncoder`];
//! - [`trim`]: threshold classifiers, SDP / E-SDP, ECA, MPA, MAA, branch-and-bound
//!   trimming (Choi & Van den Broeck, IJCAI 2018) on general networks
//!   ([`trim::JointAgreement`]) and naive Bayes ([`trim::NaiveBayesAgreement`]), and the
//!   baselines FS-SDD and information gain; [`BayesianNetwork::trim`] states a trimming
//!   problem by variable and state names ([`trim_by_name`]);
//! - [`local::LocalNaiveBayes`]: multinomial naive Bayes as srl-infer's
//!   `LocalClassifier` (for ICA / collective Gibbs).
//!
//! ```
//! use srl_bayes::NaiveBayes;
//! use srl_bayes::trim::{NaiveBayesAgreement, branch_and_bound, exhaustive_maa};
//! // class prior and Pr(x_i | c) of three binary features
//! let nb = NaiveBayes::from_tables(
//!     vec![0.6, 0.4],
//!     &[
//!         vec![vec![0.9, 0.1], vec![0.2, 0.8]],
//!         vec![vec![0.6, 0.4], vec![0.5, 0.5]],
//!         vec![vec![0.7, 0.3], vec![0.3, 0.7]],
//!     ],
//! )?;
//! let model = NaiveBayesAgreement::new(&nb, 0, 0.5)?;
//! let best = branch_and_bound(&model, &[1.0; 3], 1.0)?;
//! assert_eq!(best.subset, vec![0]);
//! assert!((best.eca - exhaustive_maa(&model, &[1.0; 3], 1.0)?.eca).abs() < 1e-12);
//! # Ok::<(), srl_bayes::BayesError>(())
//! ```

pub mod compile;
pub mod data;
pub mod error;
pub mod factor;
pub mod factor_graph;
pub mod io;
pub mod local;
pub mod naive_bayes;
pub mod network;
pub mod trim;
pub mod trim_by_name;
pub mod ve;

pub use error::BayesError;
pub use factor::Factor;
pub use naive_bayes::{FeatureKind, NaiveBayes, NaiveBayesParams};
pub use network::{BayesianNetwork, Cpt, Variable};
pub use trim::{
    BranchAndBound, FeatureOrder, SearchLimits, SearchProgress, ThresholdClassifier, Trimming,
};
pub use trim_by_name::{NamedTrimming, TrimByName};
pub use ve::VariableElimination;
