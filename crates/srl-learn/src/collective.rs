//! The collective-classification pipeline: one typed, documented job that `srl classify`,
//! `cargo xtask reproduce collective-classification` and srl-py's collective estimators
//! all call, so the same seed and inputs give the same numbers through every front-end.
//!
//! The method zoo of Sen, Namata, Bilgic, Getoor, Gallagher & Eliassi-Rad (2008),
//! "Collective classification in network data", AI Magazine 29(3), Table 3 (the
//! collective-classification slides' "Experimental results - real-world datasets"):
//!
//! | name | what | crate |
//! |---|---|---|
//! | `CO-x` | content only: the local classifier `x` on the words alone | srl-infer [`ContentOnly`] |
//! | `ICA-x` | iterative classification (Algorithm 1), count-aggregated neighbour labels | srl-infer [`IterativeClassification`] |
//! | `GS-x` | collective Gibbs sampling (Algorithm 2), 200 burn-in + 800 sweeps | srl-infer [`CollectiveGibbs`] |
//! | `LBP` | relational Markov network, loopy belief propagation at test time | [`RelationalMarkovNetwork`], srl-infer [`LoopyBp`] |
//! | `MF` | relational Markov network, mean field at test time | [`RelationalMarkovNetwork`], srl-infer [`MeanField`] |
//!
//! beside the graph learners of today (issue 32), through the same splits, names and
//! scoring:
//!
//! | name | what | module |
//! |---|---|---|
//! | `LP` | label propagation, Zhou et al. (2004), normalised, labelled nodes clamped | [`crate::propagation::LabelPropagation`] |
//! | `MLP` | two-layer perceptron on the row-normalised words (neural content only) | [`crate::neural`] |
//! | `GCN` | graph convolutional network, Kipf & Welling (2017) | [`crate::neural`] |
//! | `APPNP` | MLP then 10 steps of personalised PageRank (α 0.1), Klicpera et al. (2019) | [`crate::neural`] |
//! | `CS-MLP`, `CS-LR` | Correct & Smooth, Huang et al. (2021), over the MLP or content-only LR | [`crate::propagation::CorrectAndSmooth`] |
//!
//! with the local classifiers ([`LocalModel`]) `NB` (Bernoulli words + a Gaussian per
//! neighbour-label count, srl-bayes [`LocalBernoulliGaussianNaiveBayes`]), `MNB`
//! (multinomial naive Bayes over words and counts, srl-bayes [`LocalNaiveBayes`]) and `LR`
//! (L2-regularised multinomial logistic regression, [`LocalLogisticRegression`], whose
//! prior strength is chosen per split by an inner cross-validation on that split's
//! training nodes, [`LrPrior::Tuned`]).
//!
//! The sampling protocols ([`Protocol`]): `RS` (k random folds), `SS` (k class-stratified
//! snowball samples of `|V|/k` nodes; overlapping, scored per node) and `M` (the RS
//! predictions scored on the nodes the SS samples test, [`matched_accuracy`]); a single
//! random hold-out and explicit test sets; and the sparse-label protocol of Shchur et al.
//! (2018) ([`Protocol::Sparse`]: 20 training and 30 validation nodes per class on the
//! largest connected component, the rest tested), whose splits ([`EvalSplit`]) carry
//! validation nodes: hidden like the test nodes and not scored. The classic methods treat
//! them as unlabelled nodes (their LR prior is tuned on the training nodes alone, as
//! always); the neural methods stop early on them. Without validation nodes (RS, SS,
//! hold-out) the neural methods hold out [`CollectiveSettings::validation_fraction`] of
//! the training nodes for early stopping; LP and C&S never need any. The front-ends (`srl
//! classify --validation-mask`, srl-py's `fit(..., validation=...)`) give the neural
//! methods explicit validation nodes through the same splits ([`EvalSplit`],
//! [`transduce_with_validation`]).
//!
//! In every split the training nodes' labels are observed at test time: the test nodes'
//! neighbour features use the true labels of training neighbours and the current estimates
//! of test neighbours (ICA, GS), and the Markov network clamps the training nodes (LBP,
//! MF). The Markov network is trained by maximum pseudo-likelihood
//! ([`RelationalMarkovNetworkParams::fit_pseudo_likelihood`]; no inference inside
//! training), so test-time LBP and MF run to convergence (tolerance 1e-6, a 1000-iteration
//! safety cap); their iterations and convergence are reported per split.
//!
//! # Random streams
//! Every random draw comes from [`stream_rng`]`(seed, s)` (ChaCha8 seeded with `seed`, on
//! stream `s`), so results depend only on the seed and the streams, never on the thread
//! count or on which other methods run:
//! - test sets of a protocol: stream `1_000_000 + p` ([`Protocol::test_sets`],
//!   [`Protocol::splits`]), `p` the protocol stream;
//! - split `f` of protocol stream `p`: split stream `q = 64 p + f` ([`evaluate`]); for the
//!   sparse-label protocol `q = 2²⁴ + 4096 p + f` ([`SPARSE_SPLIT_STREAM_BASE`]);
//! - method `m` on split stream `q`, initialisation `i` ([`CollectiveMethod::stream`]):
//!   `16 q + m.stream_id()` for a classic method with `i = 0` (so the classic methods'
//!   numbers are those of the pipeline before the graph learners came), else `2⁶² + q ·
//!   2²⁴ + m.stream_id() · 2¹⁶ + i`; the LR inner cross-validation: stream `16 q + 15`;
//!   the neural methods' validation hold-out (when the split has no validation nodes):
//!   stream `16 q + 14`. CS-MLP's MLP is the MLP row's network (the MLP's stream).
//!
//! `cargo xtask reproduce collective-classification` uses protocol stream `4 d + r` for
//! data set `d` (Cora 0, Citeseer 1) and protocol `r` (RS 0, SS 1) with seed 20061001,
//! so `srl classify --folds 10 --seed 20061001` (protocol stream 0) on Cora gives the
//! experiment's Cora RS accuracies method by method.

use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_bayes::local::{LocalBernoulliGaussianNaiveBayes, LocalNaiveBayes};
use srl_eval::MatchedAverage;
use srl_eval::cv::{Folds, par_map};
use srl_graph::{HoldOut, KFold, NodeId, RelationalGraph, Split, stratified_snowball_splits};
use srl_infer::{
    Aggregator, CollectiveGibbs, CollectiveResult, ContentOnly, Convergence, FeatureRow,
    IterativeClassification, LocalClassifier, LoopyBp, MarginalInference, MeanField,
    aggregate_neighbors, fit_relational_classifier,
};

use crate::error::LearnError;
use crate::logreg::{Lambda, LocalLogisticRegression, LogisticRegressionParams, argmax};
use crate::mn::{RelationalMarkovNetwork, RelationalMarkovNetworkParams};
use crate::neural::{Architecture, NeuralData, NeuralParams};
use crate::propagation::{CorrectAndSmooth, CsrMatrix, LabelPropagation, normalize_rows};

/// The local classifier of a CO, ICA or GS method.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LocalModel {
    /// Naive Bayes as the paper's experiments need it: Bernoulli words and a Gaussian per
    /// neighbour-label count (srl-bayes [`LocalBernoulliGaussianNaiveBayes`], minimum
    /// standard deviation 1/6). Name `NB`.
    Nb,
    /// Multinomial naive Bayes over words and neighbour-label counts together (srl-bayes
    /// [`LocalNaiveBayes`], Laplace smoothing). Name `MNB` (not in the paper).
    Mnb,
    /// L2-regularised multinomial logistic regression ([`LocalLogisticRegression`]) with
    /// the prior of [`CollectiveSettings::lr_prior`]. Name `LR`.
    Lr,
}

impl LocalModel {
    /// Every local classifier, in the order `NB`, `MNB`, `LR`.
    pub const ALL: [LocalModel; 3] = [LocalModel::Nb, LocalModel::Mnb, LocalModel::Lr];

    /// The name used in results tables, the CLI (lower case) and srl-py: `NB`, `MNB`, `LR`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            LocalModel::Nb => "NB",
            LocalModel::Mnb => "MNB",
            LocalModel::Lr => "LR",
        }
    }
}

impl fmt::Display for LocalModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LocalModel {
    type Err = LearnError;

    /// Parses `nb`, `mnb` or `lr` (any case).
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] naming the accepted spellings.
    fn from_str(s: &str) -> Result<Self, LearnError> {
        match s.to_ascii_lowercase().as_str() {
            "nb" => Ok(LocalModel::Nb),
            "mnb" => Ok(LocalModel::Mnb),
            "lr" => Ok(LocalModel::Lr),
            _ => Err(LearnError::InvalidParameter {
                name: "local",
                message: format!(
                    "{s:?}: expected \"nb\" (Bernoulli-Gaussian naive Bayes), \"mnb\" \
                     (multinomial naive Bayes) or \"lr\" (logistic regression)"
                ),
            }),
        }
    }
}

/// One method of the zoo: a collective algorithm and, for CO/ICA/GS, its local classifier.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CollectiveMethod {
    /// Content only: the local classifier on the attributes alone.
    Co(LocalModel),
    /// Iterative classification with aggregated neighbour labels
    /// ([`CollectiveSettings::ica`]).
    Ica(LocalModel),
    /// Collective Gibbs sampling ([`CollectiveSettings::gs`]).
    Gs(LocalModel),
    /// Relational Markov network (pseudo-likelihood training), loopy BP at test time.
    Lbp,
    /// Relational Markov network (pseudo-likelihood training), mean field at test time.
    Mf,
    /// Label propagation (Zhou et al. 2004, normalised form, labelled nodes clamped;
    /// [`CollectiveSettings::lp`]): the graph alone, no features. Name `LP`.
    Lp,
    /// A two-layer perceptron on the row-normalised features ([`CollectiveSettings::mlp`]):
    /// the neural content-only baseline. Name `MLP`.
    Mlp,
    /// Graph convolutional network (Kipf & Welling 2017; [`CollectiveSettings::gcn`]).
    /// Name `GCN`.
    Gcn,
    /// APPNP (Klicpera et al. 2019): the MLP's scores propagated by personalised PageRank
    /// ([`CollectiveSettings::appnp`]). Name `APPNP`.
    Appnp,
    /// Correct & Smooth (Huang et al. 2021; [`CollectiveSettings::cs`]) over a base
    /// predictor. Names `CS-MLP`, `CS-LR`.
    Cs(CsBase),
}

/// The base predictor of Correct & Smooth.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CsBase {
    /// The MLP of [`CollectiveMethod::Mlp`] (the same network: it runs on the MLP's random
    /// stream, so CS-MLP corrects exactly the MLP row's predictions).
    Mlp,
    /// Content-only logistic regression (the model of CO-LR, with the split's LR prior).
    Lr,
}

impl CollectiveMethod {
    /// The paper's eight methods, in the experiment's row order.
    pub const PAPER: [CollectiveMethod; 8] = [
        CollectiveMethod::Co(LocalModel::Nb),
        CollectiveMethod::Co(LocalModel::Lr),
        CollectiveMethod::Ica(LocalModel::Nb),
        CollectiveMethod::Ica(LocalModel::Lr),
        CollectiveMethod::Gs(LocalModel::Nb),
        CollectiveMethod::Gs(LocalModel::Lr),
        CollectiveMethod::Lbp,
        CollectiveMethod::Mf,
    ];

    /// The ten rows of `cargo xtask reproduce collective-classification`: the paper's
    /// eight, then CO-MNB and ICA-MNB (GS-MNB is left out for time there).
    pub const EXPERIMENT: [CollectiveMethod; 10] = [
        CollectiveMethod::Co(LocalModel::Nb),
        CollectiveMethod::Co(LocalModel::Lr),
        CollectiveMethod::Ica(LocalModel::Nb),
        CollectiveMethod::Ica(LocalModel::Lr),
        CollectiveMethod::Gs(LocalModel::Nb),
        CollectiveMethod::Gs(LocalModel::Lr),
        CollectiveMethod::Lbp,
        CollectiveMethod::Mf,
        CollectiveMethod::Co(LocalModel::Mnb),
        CollectiveMethod::Ica(LocalModel::Mnb),
    ];

    /// The six graph learners, in the experiment's row order: LP, MLP, GCN, APPNP,
    /// CS-MLP, CS-LR.
    pub const GRAPH_LEARNERS: [CollectiveMethod; 6] = [
        CollectiveMethod::Lp,
        CollectiveMethod::Mlp,
        CollectiveMethod::Gcn,
        CollectiveMethod::Appnp,
        CollectiveMethod::Cs(CsBase::Mlp),
        CollectiveMethod::Cs(CsBase::Lr),
    ];

    /// The neural methods (those that need the `neural` feature): MLP, GCN, APPNP,
    /// CS-MLP.
    pub const NEURAL: [CollectiveMethod; 4] = [
        CollectiveMethod::Mlp,
        CollectiveMethod::Gcn,
        CollectiveMethod::Appnp,
        CollectiveMethod::Cs(CsBase::Mlp),
    ];

    /// The eleven classic methods (Sen et al. 2008's zoo with every local classifier).
    pub const CLASSIC: [CollectiveMethod; 11] = [
        CollectiveMethod::Co(LocalModel::Nb),
        CollectiveMethod::Co(LocalModel::Lr),
        CollectiveMethod::Ica(LocalModel::Nb),
        CollectiveMethod::Ica(LocalModel::Lr),
        CollectiveMethod::Gs(LocalModel::Nb),
        CollectiveMethod::Gs(LocalModel::Lr),
        CollectiveMethod::Lbp,
        CollectiveMethod::Mf,
        CollectiveMethod::Co(LocalModel::Mnb),
        CollectiveMethod::Ica(LocalModel::Mnb),
        CollectiveMethod::Gs(LocalModel::Mnb),
    ];

    /// All seventeen methods: the eleven classic ones, then the six graph learners.
    pub const ALL: [CollectiveMethod; 17] = [
        CollectiveMethod::Co(LocalModel::Nb),
        CollectiveMethod::Co(LocalModel::Lr),
        CollectiveMethod::Ica(LocalModel::Nb),
        CollectiveMethod::Ica(LocalModel::Lr),
        CollectiveMethod::Gs(LocalModel::Nb),
        CollectiveMethod::Gs(LocalModel::Lr),
        CollectiveMethod::Lbp,
        CollectiveMethod::Mf,
        CollectiveMethod::Co(LocalModel::Mnb),
        CollectiveMethod::Ica(LocalModel::Mnb),
        CollectiveMethod::Gs(LocalModel::Mnb),
        CollectiveMethod::Lp,
        CollectiveMethod::Mlp,
        CollectiveMethod::Gcn,
        CollectiveMethod::Appnp,
        CollectiveMethod::Cs(CsBase::Mlp),
        CollectiveMethod::Cs(CsBase::Lr),
    ];

    /// The results-table name: `CO-NB`, `ICA-LR`, `GS-MNB`, `LBP`, `MF`, `LP`, `GCN`,
    /// `CS-MLP`, ...
    #[must_use]
    pub const fn name(self) -> &'static str {
        use CollectiveMethod::{Appnp, Co, Cs, Gcn, Gs, Ica, Lbp, Lp, Mf, Mlp};
        use LocalModel::{Lr, Mnb, Nb};
        match self {
            Co(Nb) => "CO-NB",
            Co(Mnb) => "CO-MNB",
            Co(Lr) => "CO-LR",
            Ica(Nb) => "ICA-NB",
            Ica(Mnb) => "ICA-MNB",
            Ica(Lr) => "ICA-LR",
            Gs(Nb) => "GS-NB",
            Gs(Mnb) => "GS-MNB",
            Gs(Lr) => "GS-LR",
            Lbp => "LBP",
            Mf => "MF",
            Lp => "LP",
            Mlp => "MLP",
            Gcn => "GCN",
            Appnp => "APPNP",
            Cs(CsBase::Mlp) => "CS-MLP",
            Cs(CsBase::Lr) => "CS-LR",
        }
    }

    /// Whether the method is one of the eleven classic ones ([`CollectiveMethod::CLASSIC`]).
    #[must_use]
    pub const fn is_classic(self) -> bool {
        matches!(
            self,
            CollectiveMethod::Co(_)
                | CollectiveMethod::Ica(_)
                | CollectiveMethod::Gs(_)
                | CollectiveMethod::Lbp
                | CollectiveMethod::Mf
        )
    }

    /// Whether the method trains a neural network ([`CollectiveMethod::NEURAL`]).
    #[must_use]
    pub const fn is_neural(self) -> bool {
        matches!(
            self,
            CollectiveMethod::Mlp
                | CollectiveMethod::Gcn
                | CollectiveMethod::Appnp
                | CollectiveMethod::Cs(CsBase::Mlp)
        )
    }

    /// The local classifier of CO, ICA and GS (`None` for every other method).
    #[must_use]
    pub const fn local(self) -> Option<LocalModel> {
        match self {
            CollectiveMethod::Co(l) | CollectiveMethod::Ica(l) | CollectiveMethod::Gs(l) => Some(l),
            _ => None,
        }
    }

    /// The method's fixed random stream offset, in `0..=16`: its position in
    /// [`CollectiveMethod::ALL`] (classic methods `0..=10`, graph learners `11..=16`; see
    /// the module's "Random streams"). Fixed per method, so a method's numbers do not
    /// depend on which other methods run.
    #[must_use]
    pub fn stream_id(self) -> u64 {
        CollectiveMethod::ALL
            .iter()
            .position(|&m| m == self)
            .map_or(0, |i| i as u64)
    }

    /// The random stream of this method on split stream `split_stream`, initialisation
    /// `init` (module docs, "Random streams"): `16 · split_stream + stream_id` for a
    /// classic method's initialisation 0 (the streams of the original pipeline), else
    /// `2⁶² + split_stream · 2²⁴ + stream_id · 2¹⁶ + init` (`init < 2¹⁶`, `split_stream <
    /// 2³⁸`).
    #[must_use]
    pub fn stream(self, split_stream: u64, init: u64) -> u64 {
        if self.is_classic() && init == 0 {
            16 * split_stream + self.stream_id()
        } else {
            (1 << 62) | (split_stream << 24) | (self.stream_id() << 16) | (init & 0xffff)
        }
    }

    /// The method of an algorithm name (`co`, `ica`, `gs`, `lbp`, `mf`, `lp`, `mlp`,
    /// `gcn`, `appnp`, `cs` (= `cs-mlp`), `cs-lr`; any case) and a local classifier (used
    /// by CO, ICA and GS only).
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] for an unknown algorithm name.
    pub fn from_parts(algorithm: &str, local: LocalModel) -> Result<Self, LearnError> {
        match algorithm.to_ascii_lowercase().as_str() {
            "co" | "content_only" => Ok(CollectiveMethod::Co(local)),
            "ica" => Ok(CollectiveMethod::Ica(local)),
            "gs" | "gibbs" => Ok(CollectiveMethod::Gs(local)),
            "lbp" => Ok(CollectiveMethod::Lbp),
            "mf" | "mean_field" => Ok(CollectiveMethod::Mf),
            "lp" | "label_propagation" => Ok(CollectiveMethod::Lp),
            "mlp" => Ok(CollectiveMethod::Mlp),
            "gcn" => Ok(CollectiveMethod::Gcn),
            "appnp" => Ok(CollectiveMethod::Appnp),
            "cs" | "cs-mlp" => Ok(CollectiveMethod::Cs(CsBase::Mlp)),
            "cs-lr" => Ok(CollectiveMethod::Cs(CsBase::Lr)),
            _ => Err(LearnError::InvalidParameter {
                name: "method",
                message: format!(
                    "{algorithm:?}: expected co, ica, gs, lbp, mf, lp, mlp, gcn, appnp, cs \
                     (cs-mlp) or cs-lr"
                ),
            }),
        }
    }
}

impl fmt::Display for CollectiveMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CollectiveMethod {
    type Err = LearnError;

    /// Parses a results-table name (`ICA-LR`, `co-mnb`, `LBP`, ...; any case).
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] for an unknown name.
    fn from_str(s: &str) -> Result<Self, LearnError> {
        CollectiveMethod::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| LearnError::InvalidParameter {
                name: "method",
                message: format!(
                    "{s:?}: expected one of {}",
                    CollectiveMethod::ALL.map(CollectiveMethod::name).join(", ")
                ),
            })
    }
}

/// The prior of the logistic-regression local classifier.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum LrPrior {
    /// `λ = c · (training nodes)` with `c` chosen per split from
    /// [`CollectiveSettings::lr_grid`] by a [`CollectiveSettings::inner_folds`]-fold
    /// cross-validation on that split's training nodes (the experiment's protocol).
    Tuned,
    /// `λ = c · (training nodes)` with this `c` (finite, `>= 0`); no tuning.
    PerSample(f64),
}

/// Everything a collective-classification run is configured by. [`Default`] is the
/// setting of `cargo xtask reproduce collective-classification`.
#[derive(Clone, Debug)]
pub struct CollectiveSettings {
    /// ICA's settings (default: at most 100 iterations, count aggregation, random order,
    /// bootstrap from observed neighbours).
    pub ica: IterativeClassification,
    /// GS's settings (default: 200 burn-in + 800 sampling sweeps).
    pub gs: CollectiveGibbs,
    /// The Markov network's pseudo-likelihood training (default: L-BFGS, at most 500
    /// iterations, relative tolerance 1e-6).
    pub mn: RelationalMarkovNetworkParams,
    /// LBP at test time (default: flooding, tolerance 1e-6, at most 1000 iterations).
    pub lbp: LoopyBp,
    /// Mean field at test time (default: tolerance 1e-6, at most 1000 iterations).
    pub mf: MeanField,
    /// The LR prior (default [`LrPrior::Tuned`]).
    pub lr_prior: LrPrior,
    /// Grid of `c` in `λ = c · (training nodes)` for [`LrPrior::Tuned`] (default
    /// `[1e-3, 3e-3, 1e-2, 3e-2]`); non-empty, finite, `>= 0`.
    pub lr_grid: Vec<f64>,
    /// Folds of the LR inner cross-validation (default 2; `>= 2`).
    pub inner_folds: usize,
    /// Relative gradient tolerance of every LR fit (default 1e-5; finite, `> 0`).
    pub lr_tol: f64,
    /// Label propagation (default: `α` 0.99, labelled nodes clamped, tolerance 1e-6, at
    /// most 10 000 iterations).
    pub lp: LabelPropagation,
    /// Correct & Smooth (default: `α₁ = α₂ = 0.8`, tolerance 1e-6, at most 1000
    /// iterations each).
    pub cs: CorrectAndSmooth,
    /// The MLP's training (default [`NeuralParams::mlp`]).
    pub mlp: NeuralParams,
    /// GCN's training (default [`NeuralParams::gcn`]).
    pub gcn: NeuralParams,
    /// APPNP's training (default [`NeuralParams::appnp`]).
    pub appnp: NeuralParams,
    /// APPNP's propagation steps `K` (default 10, Klicpera et al. 2019, §6).
    pub appnp_steps: usize,
    /// APPNP's teleport probability `α` in `(0, 1]` (default 0.1).
    pub appnp_alpha: f64,
    /// When a split has no validation nodes (RS, SS, hold-out), the neural methods hold
    /// out this fraction of the training nodes (at least one node, rounded) for early
    /// stopping, drawn from the split's stream `16 q + 14` (default 0.1; in `(0, 1)`).
    pub validation_fraction: f64,
}

impl Default for CollectiveSettings {
    fn default() -> Self {
        Self {
            ica: IterativeClassification::default(),
            gs: CollectiveGibbs::default(),
            mn: RelationalMarkovNetworkParams {
                max_iters: 500,
                tol: 1e-6,
                ..RelationalMarkovNetworkParams::default()
            },
            lbp: LoopyBp {
                max_iters: 1000,
                ..LoopyBp::default()
            },
            mf: MeanField {
                max_iters: 1000,
                ..MeanField::default()
            },
            lr_prior: LrPrior::Tuned,
            lr_grid: vec![1e-3, 3e-3, 1e-2, 3e-2],
            inner_folds: 2,
            lr_tol: 1e-5,
            lp: LabelPropagation::default(),
            cs: CorrectAndSmooth::default(),
            mlp: NeuralParams::mlp(),
            gcn: NeuralParams::gcn(),
            appnp: NeuralParams::appnp(),
            appnp_steps: 10,
            appnp_alpha: 0.1,
            validation_fraction: 0.1,
        }
    }
}

fn invalid(name: &'static str, message: String) -> LearnError {
    LearnError::InvalidParameter { name, message }
}

impl CollectiveSettings {
    /// Checks the settings' ranges.
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] naming the field: an empty or non-finite/negative
    /// LR grid, `inner_folds < 2`, a non-positive `lr_tol`, a negative or non-finite
    /// [`LrPrior::PerSample`], zero ICA iterations, zero GS samples, zero LBP/MF iterations
    /// or a non-positive LBP/MF tolerance; invalid label propagation, Correct & Smooth or
    /// neural settings, an APPNP `α` outside `(0, 1]` or a validation fraction outside
    /// `(0, 1)`.
    pub fn validate(&self) -> Result<(), LearnError> {
        if self.lr_grid.is_empty() {
            return Err(invalid("lr_grid", "empty".into()));
        }
        if let Some(c) = self.lr_grid.iter().find(|c| !(c.is_finite() && **c >= 0.0)) {
            return Err(invalid("lr_grid", format!("{c}: must be finite and >= 0")));
        }
        if self.inner_folds < 2 {
            return Err(invalid(
                "inner_folds",
                format!("{}: must be at least 2", self.inner_folds),
            ));
        }
        if !(self.lr_tol.is_finite() && self.lr_tol > 0.0) {
            return Err(invalid(
                "lr_tol",
                format!("{}: must be finite and > 0", self.lr_tol),
            ));
        }
        if let LrPrior::PerSample(c) = self.lr_prior
            && !(c.is_finite() && c >= 0.0)
        {
            return Err(invalid(
                "lr_prior",
                format!("{c}: the per-sample prior strength must be finite and >= 0"),
            ));
        }
        if self.ica.max_iters == 0 {
            return Err(invalid("ica.max_iters", "0: must be at least 1".into()));
        }
        if self.gs.samples == 0 {
            return Err(invalid("gs.samples", "0: must be at least 1".into()));
        }
        for (name, iters, tol) in [
            ("lbp", self.lbp.max_iters, self.lbp.tol),
            ("mf", self.mf.max_iters, self.mf.tol),
        ] {
            if iters == 0 {
                return Err(invalid(name, "max_iters 0: must be at least 1".into()));
            }
            if !(tol.is_finite() && tol > 0.0) {
                return Err(invalid(name, format!("tol {tol}: must be finite and > 0")));
            }
        }
        self.lp.validate()?;
        self.cs.validate()?;
        self.mlp.validate("mlp")?;
        self.gcn.validate("gcn")?;
        self.appnp.validate("appnp")?;
        crate::propagation::check_unit_interval("appnp_alpha", self.appnp_alpha, true)?;
        if !(self.validation_fraction > 0.0 && self.validation_fraction < 1.0) {
            return Err(invalid(
                "validation_fraction",
                format!(
                    "{}: must be strictly between 0 and 1",
                    self.validation_fraction
                ),
            ));
        }
        Ok(())
    }
}

/// ChaCha8 seeded with `seed` on stream `stream`: the one source of randomness of the
/// pipeline (see the module's "Random streams").
#[must_use]
pub fn stream_rng(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(stream);
    r
}

/// What one method did on one split.
#[derive(Clone, Debug)]
pub struct MethodRun {
    /// The method.
    pub method: CollectiveMethod,
    /// Predicted label of each test node, in the split's test order (values `< k`).
    pub predicted: Vec<u32>,
    /// Class probabilities of each test node, row-major `test.len() x k`, rows summing to
    /// 1 (ICA: the local classifier's last estimate; GS: label frequencies over the
    /// sampling sweeps; LBP/MF: the node marginals).
    pub probabilities: Vec<f64>,
    /// Wall time of training plus inference, seconds (ICA and GS each include the one
    /// shared fit of their relational classifier; LR methods exclude the tuning).
    pub seconds: f64,
    /// How the iteration ended: ICA iterations, GS sweeps or LBP/MF iterations (CO: 0
    /// iterations, converged).
    pub convergence: Convergence,
}

/// Everything one split produced.
#[derive(Clone, Debug)]
pub struct SplitRun {
    /// The test nodes, in the order of every [`MethodRun`]'s rows.
    pub test: Vec<usize>,
    /// The split's validation nodes (hidden, not scored; empty for RS, SS, hold-out).
    pub validation: Vec<usize>,
    /// The initialisation ([`EvalSplit::init`]).
    pub init: u64,
    /// One entry per requested method, in the requested order.
    pub methods: Vec<MethodRun>,
    /// The LR `c` used (`None` when no LR method ran).
    pub lr_c: Option<f64>,
    /// Inner-CV accuracy of each grid value (empty unless the prior was tuned).
    pub lr_inner: Vec<f64>,
    /// Wall time of the inner CV, seconds.
    pub tune_seconds: f64,
}

fn lr(c: f64, tol: f64) -> LocalLogisticRegression {
    LocalLogisticRegression::new(LogisticRegressionParams {
        lambda: Lambda::PerSample(c),
        tol,
        ..LogisticRegressionParams::default()
    })
}

/// Chooses the LR prior strength by an inner cross-validation on the training nodes
/// `train` of one split: each training node's row is its words plus the counts of its
/// *observed* (training) neighbours' labels, the rows ICA and GS train their relational
/// LR on; the grid value with the highest inner accuracy wins (ties: the first). Returns
/// the chosen `c` and the inner accuracy of every grid value.
fn tune_lr(
    settings: &CollectiveSettings,
    hidden: &RelationalGraph,
    train: &[usize],
    rng: &mut ChaCha8Rng,
) -> Result<(f64, Vec<f64>), LearnError> {
    let (k, nf) = (hidden.num_labels(), hidden.num_features());
    let mut rel = vec![0.0; train.len() * k];
    let mut y = Vec::with_capacity(train.len());
    for (i, &v) in train.iter().enumerate() {
        aggregate_neighbors(
            Aggregator::Count,
            hidden,
            v,
            hidden.labels(),
            &mut rel[i * k..(i + 1) * k],
        );
        y.push(hidden.labels()[v].ok_or_else(|| LearnError::InvalidData {
            message: format!("training node {v} has no label"),
        })?);
    }
    let row = |i: usize| FeatureRow {
        attributes: hidden.attributes_of(NodeId::new(train[i])),
        num_attributes: nf,
        relational: &rel[i * k..(i + 1) * k],
    };
    let inner = KFold::random(train.len(), settings.inner_folds, rng)?;
    let mut correct = vec![0usize; settings.lr_grid.len()];
    let mut p = vec![0.0; k];
    for f in 0..inner.k() {
        let (fit_idx, test_idx): (Vec<usize>, Vec<usize>) =
            (0..train.len()).partition(|&i| inner.fold_of()[i] as usize != f);
        let rows: Vec<FeatureRow<'_>> = fit_idx.iter().map(|&i| row(i)).collect();
        let labels: Vec<u32> = fit_idx.iter().map(|&i| y[i]).collect();
        for (gi, &c) in settings.lr_grid.iter().enumerate() {
            let mut model = lr(c, settings.lr_tol);
            model
                .fit(&rows, &labels, None, k)
                .map_err(|e| LearnError::InvalidData {
                    message: format!("LR inner cross-validation, c = {c}: {e}"),
                })?;
            for &i in &test_idx {
                model.predict_proba(&row(i), &mut p);
                correct[gi] += usize::from(argmax(&p) as u32 == y[i]);
            }
        }
    }
    let acc: Vec<f64> = correct
        .iter()
        .map(|&c| c as f64 / train.len() as f64)
        .collect();
    Ok((settings.lr_grid[argmax(&acc)], acc))
}

/// A relational classifier fitted once per (local classifier, aggregator) and shared by
/// ICA and GS, with its fit time.
struct Fitted<C> {
    model: C,
    seconds: f64,
}

/// The three local prototypes of one split.
struct Prototypes {
    nb: LocalBernoulliGaussianNaiveBayes,
    mnb: LocalNaiveBayes,
    lr: LocalLogisticRegression,
}

/// Relational classifiers by aggregator, one cache per local classifier type.
#[derive(Default)]
struct RelationalCache {
    nb: Vec<(Aggregator, Fitted<LocalBernoulliGaussianNaiveBayes>)>,
    mnb: Vec<(Aggregator, Fitted<LocalNaiveBayes>)>,
    lr: Vec<(Aggregator, Fitted<LocalLogisticRegression>)>,
}

fn fit_into<C: LocalClassifier + Clone>(
    cache: &mut Vec<(Aggregator, Fitted<C>)>,
    hidden: &RelationalGraph,
    prototype: &C,
    aggregator: Aggregator,
) -> Result<(), LearnError> {
    if !cache.iter().any(|(a, _)| *a == aggregator) {
        let start = Instant::now();
        let model = fit_relational_classifier(hidden, prototype, aggregator, None)?;
        cache.push((
            aggregator,
            Fitted {
                model,
                seconds: start.elapsed().as_secs_f64(),
            },
        ));
    }
    Ok(())
}

/// ICA or GS with the cached relational classifier; returns the result and the fit time.
fn run_relational<C: LocalClassifier + Clone>(
    settings: &CollectiveSettings,
    ica: bool,
    hidden: &RelationalGraph,
    cache: &[(Aggregator, Fitted<C>)],
    rng: &mut ChaCha8Rng,
) -> Result<(CollectiveResult, f64), LearnError> {
    let aggregator = if ica {
        settings.ica.aggregator
    } else {
        settings.gs.aggregator
    };
    let (_, fitted) = cache
        .iter()
        .find(|(a, _)| *a == aggregator)
        .ok_or_else(|| LearnError::InvalidData {
            message: "relational classifier not fitted".into(),
        })?;
    let r = if ica {
        settings.ica.run_fitted(hidden, &fitted.model, rng)?
    } else {
        settings.gs.run_fitted(hidden, &fitted.model, rng)?
    };
    Ok((r, fitted.seconds))
}

/// LBP / MF: pseudo-likelihood training on the labelled non-test nodes, then the test
/// nodes' marginals with the training nodes clamped to their labels.
fn global<I: MarginalInference>(
    settings: &CollectiveSettings,
    hidden: &RelationalGraph,
    in_test: &[bool],
    test: &[usize],
    inference: &I,
    rng: &mut ChaCha8Rng,
) -> Result<(Vec<u32>, Vec<f64>, Convergence), LearnError> {
    let train: Vec<bool> = in_test
        .iter()
        .zip(hidden.labels())
        .map(|(&t, l)| !t && l.is_some())
        .collect();
    let model: RelationalMarkovNetwork = settings.mn.fit_pseudo_likelihood(hidden, &train)?;
    let m = model.marginals(hidden, hidden.labels(), inference, rng)?;
    let mut probabilities = Vec::with_capacity(test.len() * hidden.num_labels());
    let predicted = test
        .iter()
        .map(|&v| {
            let p = m.node(NodeId::new(v));
            probabilities.extend_from_slice(p);
            argmax(p) as u32
        })
        .collect();
    Ok((predicted, probabilities, m.convergence()))
}

fn check_methods(methods: &[CollectiveMethod]) -> Result<(), LearnError> {
    if methods.is_empty() {
        return Err(invalid("methods", "no method given".into()));
    }
    Ok(())
}

/// One split of an evaluation: the test nodes (scored), the validation nodes (hidden like
/// the test nodes and not scored; the neural methods' early-stopping set), the split's
/// random stream and the initialisation.
///
/// Every labelled node in neither set is a training node whose label stays observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalSplit {
    /// Test nodes: distinct indices `< n`, at least one; the order of the result rows.
    pub test: Vec<usize>,
    /// Validation nodes: distinct, labelled, disjoint from `test`; may be empty (the
    /// neural methods then hold out [`CollectiveSettings::validation_fraction`] of the
    /// training nodes).
    pub validation: Vec<usize>,
    /// The split stream `q` (module docs, "Random streams").
    pub stream: u64,
    /// The initialisation (random restart) `i < 2¹⁶`: 0 gives the original streams; the
    /// experiment runs the neural methods with several (Shchur et al. 2018, §4).
    pub init: u64,
}

/// Per-split state the graph learners share: the normalised adjacencies, the features,
/// the validation set and cached base predictions.
struct GraphLearnerCache {
    adjacency: Option<CsrMatrix>,
    adjacency_loops: Option<CsrMatrix>,
    features: Option<CsrMatrix>,
    /// (training nodes, validation nodes) of the neural methods.
    neural_sets: Option<(Vec<usize>, Vec<usize>)>,
    /// The MLP's probabilities (`n x k`), convergence and seconds, for CS-MLP.
    mlp: Option<(Vec<f64>, Convergence, f64)>,
}

impl GraphLearnerCache {
    fn adjacency(&mut self, g: &RelationalGraph) -> &CsrMatrix {
        self.adjacency
            .get_or_insert_with(|| CsrMatrix::normalized_adjacency(g, false))
    }

    fn adjacency_loops(&mut self, g: &RelationalGraph) -> &CsrMatrix {
        self.adjacency_loops
            .get_or_insert_with(|| CsrMatrix::normalized_adjacency(g, true))
    }
}

/// The neural methods' training and validation nodes: the split's validation nodes, or
/// `fraction` of the training nodes (at least one, leaving at least one) drawn from
/// `rng`; both sorted.
fn neural_sets(
    train: &[usize],
    validation: &[usize],
    fraction: f64,
    rng: &mut ChaCha8Rng,
) -> Result<(Vec<usize>, Vec<usize>), LearnError> {
    if !validation.is_empty() {
        let mut v = validation.to_vec();
        v.sort_unstable();
        return Ok((train.to_vec(), v));
    }
    if train.len() < 2 {
        return Err(LearnError::NoTrainingData {
            reason: format!(
                "the neural methods hold out validation nodes from the training nodes, and \
                 {} training node(s) leave none",
                train.len()
            ),
        });
    }
    let m = ((fraction * train.len() as f64).round() as usize).clamp(1, train.len() - 1);
    let mut shuffled = train.to_vec();
    rand::seq::SliceRandom::shuffle(&mut shuffled[..], rng);
    let mut val = shuffled[..m].to_vec();
    let mut fit = shuffled[m..].to_vec();
    val.sort_unstable();
    fit.sort_unstable();
    Ok((fit, val))
}

/// Content-only LR (CO-LR's model) fitted on the training nodes of `hidden`, its
/// probabilities for every node (`n x k`).
fn content_lr_all(
    hidden: &RelationalGraph,
    train: &[usize],
    model: &LocalLogisticRegression,
) -> Result<Vec<f64>, LearnError> {
    let (k, nf) = (hidden.num_labels(), hidden.num_features());
    let row = |v: usize| FeatureRow {
        attributes: hidden.attributes_of(NodeId::new(v)),
        num_attributes: nf,
        relational: &[],
    };
    let rows: Vec<FeatureRow<'_>> = train.iter().map(|&v| row(v)).collect();
    let y: Vec<u32> = train
        .iter()
        .map(|&v| hidden.labels()[v].unwrap_or(0))
        .collect();
    let mut m = model.clone();
    m.fit(&rows, &y, None, k)
        .map_err(|e| LearnError::InvalidData {
            message: format!("CS-LR base model: {e}"),
        })?;
    let mut z = vec![0.0; hidden.num_nodes() * k];
    for v in 0..hidden.num_nodes() {
        m.predict_proba(&row(v), &mut z[v * k..(v + 1) * k]);
    }
    Ok(z)
}

/// Trains the neural `method` on one split; returns `n x k` probabilities and the
/// convergence (`iterations` = epochs, `converged` = early stopping ended the training,
/// `max_residual` = the best validation loss).
fn run_neural(
    architecture: Architecture,
    params: &NeuralParams,
    graph: &RelationalGraph,
    hidden: &RelationalGraph,
    cache: &mut GraphLearnerCache,
    rng: &mut ChaCha8Rng,
) -> Result<(Vec<f64>, Convergence), LearnError> {
    if cache.features.is_none() {
        cache.features = Some(CsrMatrix::row_normalized_features(hidden)?);
    }
    let mlp = matches!(architecture, Architecture::Mlp);
    if !mlp {
        cache.adjacency_loops(hidden);
    }
    let empty = CsrMatrix::empty(0, 0);
    let adjacency = match (&cache.adjacency_loops, mlp) {
        (Some(a), false) => a,
        _ => &empty,
    };
    let (fit, val) = cache
        .neural_sets
        .as_ref()
        .ok_or_else(|| LearnError::InvalidData {
            message: "neural node sets not drawn".into(),
        })?;
    let features = cache
        .features
        .as_ref()
        .ok_or_else(|| LearnError::InvalidData {
            message: "features not built".into(),
        })?;
    let data = NeuralData {
        features,
        adjacency,
        labels: graph.labels(),
        train: fit,
        validation: val,
        num_classes: graph.num_labels(),
    };
    let out = crate::neural::train(architecture, params, &data, rng)?;
    Ok((
        out.probabilities,
        Convergence {
            converged: out.stopped_early,
            iterations: out.epochs,
            max_residual: out.best_validation_loss,
        },
    ))
}

/// Runs `methods` on one split: the nodes `test` are held out (their labels hidden), every
/// other labelled node is a training node whose label stays observed.
///
/// - `graph`: `n` nodes, `k` labels; labels of test nodes may be present (they are
///   hidden) or absent.
/// - `test`: distinct node indices `< n`, at least one; the order of the result rows.
/// - `seed`, `split_stream`: the random streams (module docs, "Random streams").
///
/// The same as [`run_eval_split`] with no validation nodes and initialisation 0.
///
/// # Errors
/// As [`run_eval_split`].
pub fn run_split(
    settings: &CollectiveSettings,
    methods: &[CollectiveMethod],
    graph: &RelationalGraph,
    test: &[usize],
    seed: u64,
    split_stream: u64,
) -> Result<SplitRun, LearnError> {
    run_eval_split(
        settings,
        methods,
        graph,
        &EvalSplit {
            test: test.to_vec(),
            validation: Vec::new(),
            stream: split_stream,
            init: 0,
        },
        seed,
    )
}

/// Runs `methods` on one split: the test and validation nodes are held out (their labels
/// hidden; only the test nodes are predicted and scored), every other labelled node is a
/// training node whose label stays observed. The classic methods treat the validation
/// nodes as unlabelled nodes; the neural methods stop early on them.
///
/// # Errors
/// [`LearnError::InvalidParameter`] for invalid `settings` or no method;
/// [`LearnError::InvalidData`] for an empty, out-of-range or repeated test set, a
/// validation node that is out of range, repeated, unlabelled or also a test node, or no
/// labelled training node; a method's own error (local classifier, inference, L-BFGS,
/// neural training).
pub fn run_eval_split(
    settings: &CollectiveSettings,
    methods: &[CollectiveMethod],
    graph: &RelationalGraph,
    split: &EvalSplit,
    seed: u64,
) -> Result<SplitRun, LearnError> {
    settings.validate()?;
    check_methods(methods)?;
    let (test, split_stream) = (&split.test[..], split.stream);
    let n = graph.num_nodes();
    let mut in_test = vec![false; n];
    for &v in test {
        if v >= n {
            return Err(LearnError::InvalidData {
                message: format!("test node {v} is out of range (the graph has {n} nodes)"),
            });
        }
        if std::mem::replace(&mut in_test[v], true) {
            return Err(LearnError::InvalidData {
                message: format!("test node {v} is listed twice"),
            });
        }
    }
    if test.is_empty() {
        return Err(LearnError::InvalidData {
            message: "the test set is empty".into(),
        });
    }
    if split.init > 0xffff {
        return Err(invalid(
            "init",
            format!("{}: must be below 65536", split.init),
        ));
    }
    let mut hidden_mask = in_test.clone();
    for &v in &split.validation {
        let why = if v >= n {
            Some(format!("out of range (the graph has {n} nodes)"))
        } else if in_test[v] {
            Some("also a test node".to_owned())
        } else if hidden_mask[v] {
            Some("listed twice".to_owned())
        } else if graph.labels()[v].is_none() {
            Some("unlabelled (a validation node needs a label to score)".to_owned())
        } else {
            None
        };
        if let Some(why) = why {
            return Err(LearnError::InvalidData {
                message: format!("validation node {v}: {why}"),
            });
        }
        hidden_mask[v] = true;
    }
    let train: Vec<usize> = (0..n)
        .filter(|&v| !hidden_mask[v] && graph.labels()[v].is_some())
        .collect();
    if train.is_empty() {
        return Err(LearnError::NoTrainingData {
            reason: "no labelled node outside the test set".into(),
        });
    }
    let held_out = HoldOut::new(graph, Split::from_test_mask(hidden_mask.clone()))?;
    let hidden = held_out.observed();
    let k = hidden.num_labels();
    let uses = |l: LocalModel| {
        methods.iter().any(|m| {
            m.local() == Some(l) || (l == LocalModel::Lr && *m == CollectiveMethod::Cs(CsBase::Lr))
        })
    };
    let (lr_c, lr_inner, tune_seconds) = match (uses(LocalModel::Lr), settings.lr_prior) {
        (false, _) => (None, Vec::new(), 0.0),
        (true, LrPrior::PerSample(c)) => (Some(c), Vec::new(), 0.0),
        (true, LrPrior::Tuned) => {
            let start = Instant::now();
            let mut rng = stream_rng(seed, split_stream * 16 + 15);
            let (c, acc) = tune_lr(settings, hidden, &train, &mut rng)?;
            (Some(c), acc, start.elapsed().as_secs_f64())
        }
    };
    let protos = Prototypes {
        nb: LocalBernoulliGaussianNaiveBayes::default(),
        mnb: LocalNaiveBayes::default(),
        lr: lr(lr_c.unwrap_or(1e-4), settings.lr_tol),
    };
    let mut cache = RelationalCache::default();
    for &m in methods {
        let (local, aggregator) = match m {
            CollectiveMethod::Ica(l) => (l, settings.ica.aggregator),
            CollectiveMethod::Gs(l) => (l, settings.gs.aggregator),
            _ => continue,
        };
        match local {
            LocalModel::Nb => fit_into(&mut cache.nb, hidden, &protos.nb, aggregator)?,
            LocalModel::Mnb => fit_into(&mut cache.mnb, hidden, &protos.mnb, aggregator)?,
            LocalModel::Lr => fit_into(&mut cache.lr, hidden, &protos.lr, aggregator)?,
        }
    }
    let mut graph_cache = GraphLearnerCache {
        adjacency: None,
        adjacency_loops: None,
        features: None,
        neural_sets: None,
        mlp: None,
    };
    if methods.iter().any(|m| m.is_neural()) {
        let mut rng = stream_rng(seed, split_stream * 16 + 14);
        graph_cache.neural_sets = Some(neural_sets(
            &train,
            &split.validation,
            settings.validation_fraction,
            &mut rng,
        )?);
    }
    let rows_of = |r: &CollectiveResult| -> (Vec<u32>, Vec<f64>) {
        let mut probabilities = Vec::with_capacity(test.len() * k);
        let predicted = test
            .iter()
            .map(|&v| {
                probabilities.extend_from_slice(r.proba(v));
                r.labels[v]
            })
            .collect();
        (predicted, probabilities)
    };
    // Test rows of an `n x k` probability matrix and their most probable classes.
    let test_rows = |p: &[f64]| -> (Vec<u32>, Vec<f64>) {
        let mut probabilities = Vec::with_capacity(test.len() * k);
        let predicted = test
            .iter()
            .map(|&v| {
                let row = &p[v * k..(v + 1) * k];
                probabilities.extend_from_slice(row);
                argmax(row) as u32
            })
            .collect();
        (predicted, probabilities)
    };
    let mut out = Vec::with_capacity(methods.len());
    for &method in methods {
        let mut rng = stream_rng(seed, method.stream(split_stream, split.init));
        let start = Instant::now();
        let mut extra = 0.0;
        let (predicted, probabilities, convergence) = match method {
            CollectiveMethod::Co(local) => {
                let r = match local {
                    LocalModel::Nb => ContentOnly.run(hidden, &protos.nb, None),
                    LocalModel::Mnb => ContentOnly.run(hidden, &protos.mnb, None),
                    LocalModel::Lr => ContentOnly.run(hidden, &protos.lr, None),
                }?;
                let (p, q) = rows_of(&r);
                // No iteration: 0 iterations, converged.
                let done = Convergence {
                    converged: true,
                    iterations: 0,
                    max_residual: 0.0,
                };
                (p, q, done)
            }
            CollectiveMethod::Ica(local) | CollectiveMethod::Gs(local) => {
                let ica = matches!(method, CollectiveMethod::Ica(_));
                let (r, fit) = match local {
                    LocalModel::Nb => run_relational(settings, ica, hidden, &cache.nb, &mut rng),
                    LocalModel::Mnb => run_relational(settings, ica, hidden, &cache.mnb, &mut rng),
                    LocalModel::Lr => run_relational(settings, ica, hidden, &cache.lr, &mut rng),
                }?;
                extra = fit;
                let (p, q) = rows_of(&r);
                (p, q, r.convergence)
            }
            CollectiveMethod::Lbp => {
                global(settings, hidden, &in_test, test, &settings.lbp, &mut rng)?
            }
            CollectiveMethod::Mf => {
                global(settings, hidden, &in_test, test, &settings.mf, &mut rng)?
            }
            CollectiveMethod::Lp => {
                let s = graph_cache.adjacency(hidden);
                let (mut f, conv) = settings.lp.run(s, hidden.labels(), k)?;
                normalize_rows(&mut f, k);
                let (p, q) = test_rows(&f);
                (p, q, conv)
            }
            CollectiveMethod::Mlp | CollectiveMethod::Cs(CsBase::Mlp) => {
                if graph_cache.mlp.is_none() {
                    // CS-MLP's base is the MLP row's network: the MLP's own stream.
                    let mut mlp_rng =
                        stream_rng(seed, CollectiveMethod::Mlp.stream(split_stream, split.init));
                    let t0 = Instant::now();
                    let (p, c) = run_neural(
                        Architecture::Mlp,
                        &settings.mlp,
                        graph,
                        hidden,
                        &mut graph_cache,
                        &mut mlp_rng,
                    )?;
                    graph_cache.mlp = Some((p, c, t0.elapsed().as_secs_f64()));
                }
                let (base, conv, secs) =
                    graph_cache
                        .mlp
                        .clone()
                        .ok_or_else(|| LearnError::InvalidData {
                            message: "MLP not trained".into(),
                        })?;
                if method == CollectiveMethod::Mlp {
                    // Its training time, even when CS-MLP ran (and trained it) first.
                    extra = secs - start.elapsed().as_secs_f64();
                    let (p, q) = test_rows(&base);
                    (p, q, conv)
                } else {
                    // The MLP's training time plus the correction and smoothing.
                    extra = secs - start.elapsed().as_secs_f64();
                    let s = graph_cache.adjacency(hidden);
                    let (z, cs_conv) = settings.cs.run(s, &base, hidden.labels(), k)?;
                    let (p, q) = test_rows(&z);
                    (p, q, cs_conv)
                }
            }
            CollectiveMethod::Gcn | CollectiveMethod::Appnp => {
                let (architecture, params) = if method == CollectiveMethod::Gcn {
                    (Architecture::Gcn, &settings.gcn)
                } else {
                    (
                        Architecture::Appnp {
                            steps: settings.appnp_steps,
                            alpha: settings.appnp_alpha,
                        },
                        &settings.appnp,
                    )
                };
                let (probs, conv) = run_neural(
                    architecture,
                    params,
                    graph,
                    hidden,
                    &mut graph_cache,
                    &mut rng,
                )?;
                let (p, q) = test_rows(&probs);
                (p, q, conv)
            }
            CollectiveMethod::Cs(CsBase::Lr) => {
                let base = content_lr_all(hidden, &train, &protos.lr)?;
                let s = graph_cache.adjacency(hidden);
                let (z, conv) = settings.cs.run(s, &base, hidden.labels(), k)?;
                let (p, q) = test_rows(&z);
                (p, q, conv)
            }
        };
        out.push(MethodRun {
            method,
            predicted,
            probabilities,
            seconds: start.elapsed().as_secs_f64() + extra,
            convergence,
        });
    }
    Ok(SplitRun {
        test: test.to_vec(),
        validation: split.validation.clone(),
        init: split.init,
        methods: out,
        lr_c,
        lr_inner,
        tune_seconds,
    })
}

/// One method run transductively on a graph whose unlabelled nodes are the ones to
/// predict (srl-py's estimators): every node with a label is observed.
#[derive(Clone, Debug)]
pub struct Transduction {
    /// The label of every node (`n`; observed nodes keep theirs).
    pub labels: Vec<u32>,
    /// `n x k` row-major class probabilities (observed nodes: a point mass).
    pub probabilities: Vec<f64>,
    /// How the method's iteration ended.
    pub convergence: Convergence,
    /// The LR `c` used, if the method uses LR.
    pub lr_c: Option<f64>,
}

/// Runs `method` on `graph` with the unlabelled nodes as the test set (split stream 0 of
/// `seed`): the pipeline behind srl-py's estimators. The neural methods hold out
/// [`CollectiveSettings::validation_fraction`] of the labelled nodes for early stopping;
/// [`transduce_with_validation`] gives them explicit validation nodes instead.
///
/// # Errors
/// As [`run_split`]; [`LearnError::InvalidData`] when every node is labelled (nothing to
/// predict).
pub fn transduce(
    settings: &CollectiveSettings,
    method: CollectiveMethod,
    graph: &RelationalGraph,
    seed: u64,
) -> Result<Transduction, LearnError> {
    transduce_split(settings, method, graph, Vec::new(), seed)
}

/// [`transduce`] with explicit validation nodes for the neural methods' early stopping
/// (MLP, GCN, APPNP, CS-MLP: [`CollectiveMethod::is_neural`]), the split the sparse-label
/// protocol ([`Protocol::Sparse`]) runs: an [`EvalSplit`] whose test nodes are the
/// unlabelled nodes and whose validation nodes are `validation`, through
/// [`run_eval_split`] on split stream 0 of `seed`, initialisation 0.
///
/// `validation` names labelled nodes. Their labels are hidden from the method like the
/// test nodes' (they are not training nodes: not in the training loss, not propagated by
/// CS-MLP's correct and smooth steps); the network is scored on them after every epoch
/// and the epoch with the lowest validation loss is kept ([`crate::neural`]). Every other
/// labelled node is a training node, and nothing is drawn at random from the training
/// nodes ([`CollectiveSettings::validation_fraction`] is unused). In the result the
/// validation nodes keep their given label (a point mass), as every labelled node does;
/// only the unlabelled nodes are predicted.
///
/// Use it when labels are few: with Shchur et al.'s (2018) 20 training nodes per class, a
/// random 10 % hold-out is 14 nodes on Cora, and early stopping on it can end the
/// training at epoch ~11 with a collapsed network; 30 validation nodes per class, as the
/// sparse-label protocol keeps, do not.
///
/// # Errors
/// [`LearnError::InvalidParameter`] (`validation`) for a method that does not stop early
/// (the classic methods, LP, CS-LR: the validation nodes would only hide labels from
/// them, so they are refused rather than ignored) or an empty `validation` (no
/// validation node: call [`transduce`]); [`LearnError::InvalidData`] for a validation
/// node out of range, listed twice or unlabelled (an unlabelled node is a test node
/// here); [`LearnError::NoTrainingData`] when every labelled node is a validation node;
/// otherwise as [`transduce`].
pub fn transduce_with_validation(
    settings: &CollectiveSettings,
    method: CollectiveMethod,
    graph: &RelationalGraph,
    validation: &[usize],
    seed: u64,
) -> Result<Transduction, LearnError> {
    check_validation_method(method, validation)?;
    let n = graph.num_nodes();
    let mut seen = vec![false; n];
    for &v in validation {
        let why = if v >= n {
            format!("out of range (the graph has {n} nodes)")
        } else if std::mem::replace(&mut seen[v], true) {
            "listed twice".to_owned()
        } else if graph.labels()[v].is_none() {
            "unlabelled: it is a node to predict (a test node), and a validation node \
             needs a label"
                .to_owned()
        } else {
            continue;
        };
        return Err(LearnError::InvalidData {
            message: format!("validation node {v}: {why}"),
        });
    }
    transduce_split(settings, method, graph, validation.to_vec(), seed)
}

/// Refuses explicit validation nodes that `method` would not use, and an empty set.
///
/// The front-ends (`srl classify --validation-mask`, srl-py's `fit(..., validation=)`)
/// call it before they build a split with validation nodes.
///
/// # Errors
/// [`LearnError::InvalidParameter`] (`validation`) for a method that is not neural
/// ([`CollectiveMethod::is_neural`]) or an empty `validation`.
pub fn check_validation_method(
    method: CollectiveMethod,
    validation: &[usize],
) -> Result<(), LearnError> {
    if !method.is_neural() {
        return Err(invalid(
            "validation",
            format!(
                "{method} does not stop early, and validation nodes are the early-stopping \
                 set of the neural methods (MLP, GCN, APPNP, CS-MLP); they would only hide \
                 labels from {method}"
            ),
        ));
    }
    if validation.is_empty() {
        return Err(invalid(
            "validation",
            "no validation node given (leave it out to hold out validation_fraction of the \
             labelled nodes instead)"
                .into(),
        ));
    }
    Ok(())
}

/// [`transduce`]'s body: the unlabelled nodes as test set, `validation` as the split's
/// validation nodes.
fn transduce_split(
    settings: &CollectiveSettings,
    method: CollectiveMethod,
    graph: &RelationalGraph,
    validation: Vec<usize>,
    seed: u64,
) -> Result<Transduction, LearnError> {
    let n = graph.num_nodes();
    let k = graph.num_labels();
    let mut labels: Vec<u32> = graph.labels().iter().map(|l| l.unwrap_or(0)).collect();
    let mut probabilities = vec![0.0; n * k];
    for (v, l) in graph.labels().iter().enumerate() {
        if let Some(l) = l
            && (*l as usize) < k
        {
            probabilities[v * k + *l as usize] = 1.0;
        }
    }
    let test: Vec<usize> = (0..n).filter(|&v| graph.labels()[v].is_none()).collect();
    if test.is_empty() {
        return Err(LearnError::InvalidData {
            message: "every node is observed: nothing to predict".into(),
        });
    }
    let mut split = run_eval_split(
        settings,
        &[method],
        graph,
        &EvalSplit {
            test: test.clone(),
            validation,
            stream: 0,
            init: 0,
        },
        seed,
    )?;
    let run = split.methods.pop().ok_or_else(|| LearnError::InvalidData {
        message: "no method ran".into(),
    })?;
    for (i, &v) in test.iter().enumerate() {
        labels[v] = run.predicted[i];
        probabilities[v * k..(v + 1) * k].copy_from_slice(&run.probabilities[i * k..(i + 1) * k]);
    }
    Ok(Transduction {
        labels,
        probabilities,
        convergence: run.convergence,
        lr_c: split.lr_c,
    })
}

/// How the test sets of an evaluation are drawn.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Protocol {
    /// `RS`: `k` random folds (every node tested once), `2 <= k <= n`.
    RandomFolds {
        /// Number of folds.
        k: usize,
    },
    /// `SS`: `k` class-stratified snowball samples of `|V| / k` nodes (srl-graph
    /// [`stratified_snowball_splits`]), each the test set of one split; samples overlap.
    Snowball {
        /// Number of samples.
        k: usize,
    },
    /// One random hold-out: a `test_fraction` of the nodes (rounded), in `(0, 1)`.
    HoldOut {
        /// Fraction of nodes held out.
        test_fraction: f64,
    },
    /// The sparse-label protocol of Shchur, Mumme, Bojchevski & Günnemann (2018),
    /// "Pitfalls of graph neural network evaluation", §4: on a connected graph (their
    /// largest connected component: [`largest_component`]), `splits` random splits of
    /// `train_per_class` training and `validation_per_class` validation nodes per class
    /// (theirs: 20 and 30, 100 splits); every other node is a test node. Only
    /// [`Protocol::splits`] draws it (the validation nodes must stay hidden).
    Sparse {
        /// Training nodes per class (`>= 1`).
        train_per_class: usize,
        /// Validation nodes per class (`>= 1`).
        validation_per_class: usize,
        /// Number of random splits, `1..=4096`.
        splits: usize,
    },
}

/// The split streams of [`Protocol::Sparse`] start here: split `f` of protocol stream `p`
/// is `2²⁴ + 4096 p + f`, far from the `64 p + f` of the other protocols.
pub const SPARSE_SPLIT_STREAM_BASE: u64 = 1 << 24;

/// The subgraph induced by the largest connected component (ties: the component of the
/// lowest node index), renumbered in increasing node order, and per new node its index in
/// `graph` (Shchur et al. 2018, §4: "we only consider the largest connected component").
///
/// # Errors
/// [`LearnError::InvalidData`] for a graph without nodes; a graph error from the
/// subgraph.
pub fn largest_component(
    graph: &RelationalGraph,
) -> Result<(RelationalGraph, Vec<NodeId>), LearnError> {
    let (comp, count) = graph.connected_components();
    if count == 0 {
        return Err(LearnError::InvalidData {
            message: "the graph has no node".into(),
        });
    }
    let mut size = vec![0usize; count];
    for &c in &comp {
        size[c as usize] += 1;
    }
    // The first largest (components are numbered in order of their lowest node).
    let best = (0..count).fold(0, |b, c| if size[c] > size[b] { c } else { b });
    let mask: Vec<bool> = comp.iter().map(|&c| c as usize == best).collect();
    Ok(graph.induced_subgraph(&mask)?)
}

impl Protocol {
    /// The splits of the protocol on `graph`, drawn from [`stream_rng`]`(seed, 1_000_000 +
    /// stream)`: for RS, SS and hold-out the [`Protocol::test_sets`] with no validation
    /// nodes and split streams `64 · stream + f` (as [`evaluate`]); for
    /// [`Protocol::Sparse`] per split and class (in class order) a uniformly random
    /// choice of the class's nodes, the first `train_per_class` training and the next
    /// `validation_per_class` validation nodes, split streams
    /// [`SPARSE_SPLIT_STREAM_BASE`]` + 4096 · stream + f`. Initialisation 0 throughout.
    ///
    /// # Errors
    /// As [`Protocol::test_sets`]; for `Sparse`: [`LearnError::InvalidParameter`] for a
    /// zero count or more than 4096 splits, [`LearnError::InvalidData`] for a graph that
    /// is not connected (restrict it with [`largest_component`] first), a class with fewer
    /// than `train_per_class + validation_per_class` nodes, or no test node left.
    pub fn splits(
        self,
        graph: &RelationalGraph,
        seed: u64,
        stream: u64,
    ) -> Result<Vec<EvalSplit>, LearnError> {
        let Protocol::Sparse {
            train_per_class,
            validation_per_class,
            splits,
        } = self
        else {
            return Ok(self
                .test_sets(graph, seed, stream)?
                .into_iter()
                .enumerate()
                .map(|(f, test)| EvalSplit {
                    test,
                    validation: Vec::new(),
                    stream: 64 * stream + f as u64,
                    init: 0,
                })
                .collect());
        };
        if train_per_class == 0 || validation_per_class == 0 {
            return Err(invalid(
                "per_class",
                "training and validation nodes per class must be at least 1".into(),
            ));
        }
        if splits == 0 || splits > 4096 {
            return Err(invalid(
                "splits",
                format!("{splits}: must be between 1 and 4096"),
            ));
        }
        let (_, components) = graph.connected_components();
        if components != 1 {
            return Err(LearnError::InvalidData {
                message: format!(
                    "the sparse-label protocol needs a connected graph (this one has {components} \
                     components): restrict it to its largest connected component first"
                ),
            });
        }
        let (n, k) = (graph.num_nodes(), graph.num_labels());
        let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); k];
        for (v, l) in graph.labels().iter().enumerate() {
            if let Some(l) = *l
                && (l as usize) < k
            {
                by_class[l as usize].push(v);
            }
        }
        let need = train_per_class + validation_per_class;
        if let Some(c) = by_class.iter().position(|nodes| nodes.len() < need) {
            return Err(LearnError::InvalidData {
                message: format!(
                    "class {c} has {} nodes, fewer than {train_per_class} training + \
                     {validation_per_class} validation nodes",
                    by_class[c].len()
                ),
            });
        }
        let mut rng = stream_rng(seed, 1_000_000 + stream);
        let mut out = Vec::with_capacity(splits);
        for f in 0..splits {
            let mut role = vec![0u8; n]; // 0 test, 1 training, 2 validation
            for nodes in &by_class {
                let mut nodes = nodes.clone();
                let (chosen, _) =
                    rand::seq::SliceRandom::partial_shuffle(&mut nodes[..], &mut rng, need);
                for (i, &v) in chosen.iter().enumerate() {
                    role[v] = if i < train_per_class { 1 } else { 2 };
                }
            }
            let test: Vec<usize> = (0..n).filter(|&v| role[v] == 0).collect();
            if test.is_empty() {
                return Err(LearnError::InvalidData {
                    message: "the sparse-label protocol leaves no test node".into(),
                });
            }
            out.push(EvalSplit {
                test,
                validation: (0..n).filter(|&v| role[v] == 2).collect(),
                stream: SPARSE_SPLIT_STREAM_BASE + 4096 * stream + f as u64,
                init: 0,
            });
        }
        Ok(out)
    }

    /// The test sets (node indices) of the protocol on `graph`, drawn from
    /// [`stream_rng`]`(seed, 1_000_000 + stream)`.
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] for `k < 2`, `k > n` or a fraction outside `(0,
    /// 1)`; [`LearnError::InvalidData`] when a hold-out would test no node or every node,
    /// or for [`Protocol::Sparse`], whose validation nodes a list of test sets cannot
    /// carry (use [`Protocol::splits`]).
    pub fn test_sets(
        self,
        graph: &RelationalGraph,
        seed: u64,
        stream: u64,
    ) -> Result<Vec<Vec<usize>>, LearnError> {
        let n = graph.num_nodes();
        let mut rng = stream_rng(seed, 1_000_000 + stream);
        let indices = |s: &Split| s.test_nodes().iter().map(|v| v.index()).collect();
        match self {
            Protocol::RandomFolds { k } | Protocol::Snowball { k } if k < 2 || k > n => {
                Err(invalid(
                    "folds",
                    format!("{k}: must be between 2 and the number of nodes ({n})"),
                ))
            }
            Protocol::RandomFolds { k } => Ok(KFold::random(n, k, &mut rng)?
                .splits()
                .map(|s| indices(&s))
                .collect()),
            Protocol::Snowball { k } => Ok(stratified_snowball_splits(graph, k, &mut rng)?
                .iter()
                .map(indices)
                .collect()),
            Protocol::HoldOut { test_fraction } => {
                if !(test_fraction > 0.0 && test_fraction < 1.0) {
                    return Err(invalid(
                        "test_fraction",
                        format!("{test_fraction}: must be strictly between 0 and 1"),
                    ));
                }
                let split = Split::random(n, test_fraction, &mut rng)?;
                let test: Vec<usize> = indices(&split);
                if test.is_empty() || test.len() == n {
                    return Err(LearnError::InvalidData {
                        message: format!(
                            "a test fraction of {test_fraction} of {n} nodes tests {} nodes",
                            test.len()
                        ),
                    });
                }
                Ok(vec![test])
            }
            Protocol::Sparse { .. } => Err(LearnError::InvalidData {
                message: "the sparse-label protocol has validation nodes: draw it with \
                          Protocol::splits and run it with evaluate_splits"
                    .into(),
            }),
        }
    }
}

/// Per-method results of one protocol.
#[derive(Clone, Debug)]
pub struct ProtocolResult {
    /// The methods, in the requested order (the `[method]` index below).
    pub methods: Vec<CollectiveMethod>,
    /// Every split's run (test nodes, per-method predictions and probabilities).
    pub splits: Vec<SplitRun>,
    /// Per split: the labelled test nodes (the scored ones), in test order.
    pub scored: Vec<Vec<usize>>,
    /// Per split, per method: whether each scored node was labelled correctly
    /// (`[split][method][i]`, aligned with `scored[split]`).
    pub correct: Vec<Vec<Vec<bool>>>,
    /// Split accuracies per method (`[method][split]`), on the labelled test nodes; NaN
    /// for a split without one.
    pub accuracy: Vec<Vec<f64>>,
    /// Per-node average per method: each node's accuracy over the splits that tested it,
    /// averaged over the labelled nodes tested at least once (the slides' SS score; the
    /// pooled accuracy for RS).
    pub per_node: Vec<f64>,
    /// Per-split wall time per method, seconds (`[method][split]`).
    pub seconds: Vec<Vec<f64>>,
    /// Iterations per method and split.
    pub iterations: Vec<Vec<usize>>,
    /// Convergence per method and split.
    pub converged: Vec<Vec<bool>>,
    /// LR prior strength per split (`c` of `λ = c · n`; empty when no LR method ran).
    pub lr_c: Vec<f64>,
    /// Inner-CV accuracy per grid value, averaged over the splits (empty unless tuned).
    pub lr_inner: Vec<f64>,
    /// Inner-CV wall time summed over the splits, seconds.
    pub tune_seconds: f64,
}

/// Runs `methods` on every split of `tests` (in parallel over splits, each split on its
/// own streams `64 · stream + split`) and scores them on the labelled test nodes.
///
/// The same as [`evaluate_splits`] with those split streams, no validation nodes and
/// initialisation 0.
///
/// # Errors
/// As [`run_split`]; [`LearnError::InvalidData`] for no test set or a test set naming a
/// node out of range or twice; the first failing split's error, naming the split.
pub fn evaluate(
    settings: &CollectiveSettings,
    methods: &[CollectiveMethod],
    graph: &RelationalGraph,
    tests: Vec<Vec<usize>>,
    seed: u64,
    stream: u64,
) -> Result<ProtocolResult, LearnError> {
    evaluate_with_validation(settings, methods, graph, tests, &[], seed, stream)
}

/// [`evaluate`] with the same validation nodes in every split (the early-stopping set of
/// the neural methods under the sparse-label protocol, e.g. `srl classify
/// --validation-mask`): they are hidden like the test nodes, taken out of every test set
/// and not scored. Same split streams `64 · stream + split`, initialisation 0; an empty
/// `validation` is [`evaluate`].
///
/// # Errors
/// As [`evaluate`] (checked on the test sets as given); as [`evaluate_splits`] for
/// validation nodes that are unlabelled, out of range or repeated, or a test set left
/// empty.
pub fn evaluate_with_validation(
    settings: &CollectiveSettings,
    methods: &[CollectiveMethod],
    graph: &RelationalGraph,
    tests: Vec<Vec<usize>>,
    validation: &[usize],
    seed: u64,
    stream: u64,
) -> Result<ProtocolResult, LearnError> {
    settings.validate()?;
    check_methods(methods)?;
    // The test sets' checks (and messages) of srl-eval's folds.
    Folds::new(graph.num_nodes(), tests.clone()).map_err(|e| LearnError::InvalidData {
        message: format!("test sets: {e}"),
    })?;
    let hidden: std::collections::HashSet<usize> = validation.iter().copied().collect();
    let splits = tests
        .into_iter()
        .enumerate()
        .map(|(f, test)| EvalSplit {
            test: test.into_iter().filter(|v| !hidden.contains(v)).collect(),
            validation: validation.to_vec(),
            stream: stream * 64 + f as u64,
            init: 0,
        })
        .collect();
    evaluate_splits(settings, methods, graph, splits, seed)
}

/// Runs `methods` on every split (in parallel over splits, on the rayon pool; each split
/// on its own streams) and scores them on the labelled test nodes.
///
/// # Errors
/// As [`run_eval_split`]; [`LearnError::InvalidData`] for no split; the first failing
/// split's error, naming the split.
pub fn evaluate_splits(
    settings: &CollectiveSettings,
    methods: &[CollectiveMethod],
    graph: &RelationalGraph,
    splits: Vec<EvalSplit>,
    seed: u64,
) -> Result<ProtocolResult, LearnError> {
    settings.validate()?;
    check_methods(methods)?;
    if splits.is_empty() {
        return Err(LearnError::InvalidData {
            message: "no split".into(),
        });
    }
    let indexed: Vec<(usize, &EvalSplit)> = splits.iter().enumerate().collect();
    let splits = par_map(&indexed, |&(i, split)| {
        run_eval_split(settings, methods, graph, split, seed).map_err(|e| LearnError::InvalidData {
            message: format!("split {}: {e}", i + 1),
        })
    })
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let m = methods.len();
    let labels = graph.labels();
    let mut res = ProtocolResult {
        methods: methods.to_vec(),
        scored: Vec::with_capacity(splits.len()),
        correct: vec![Vec::with_capacity(m); splits.len()],
        accuracy: vec![Vec::with_capacity(splits.len()); m],
        per_node: vec![0.0; m],
        seconds: vec![Vec::new(); m],
        iterations: vec![Vec::new(); m],
        converged: vec![Vec::new(); m],
        lr_c: splits.iter().filter_map(|r| r.lr_c).collect(),
        lr_inner: Vec::new(),
        tune_seconds: splits.iter().map(|r| r.tune_seconds).sum(),
        splits: Vec::new(),
    };
    if let Some(first) = splits.first()
        && !first.lr_inner.is_empty()
    {
        res.lr_inner = (0..first.lr_inner.len())
            .map(|g| splits.iter().map(|r| r.lr_inner[g]).sum::<f64>() / splits.len() as f64)
            .collect();
    }
    // Positions of the labelled test nodes within each split's test order.
    let positions: Vec<Vec<usize>> = splits
        .iter()
        .map(|s| {
            (0..s.test.len())
                .filter(|&i| labels[s.test[i]].is_some())
                .collect()
        })
        .collect();
    for (s, pos) in splits.iter().zip(&positions) {
        res.scored.push(pos.iter().map(|&i| s.test[i]).collect());
    }
    for mi in 0..m {
        let mut matched = MatchedAverage::new(graph.num_nodes());
        for (f, split) in splits.iter().enumerate() {
            let run = &split.methods[mi];
            let correct: Vec<bool> = positions[f]
                .iter()
                .map(|&i| Some(run.predicted[i]) == labels[split.test[i]])
                .collect();
            let hits = correct.iter().filter(|&&c| c).count();
            res.accuracy[mi].push(if correct.is_empty() {
                f64::NAN
            } else {
                hits as f64 / correct.len() as f64
            });
            if !correct.is_empty() {
                matched.add_split(&res.scored[f], &correct).map_err(|e| {
                    LearnError::InvalidData {
                        message: format!("scoring split {}: {e}", f + 1),
                    }
                })?;
            }
            res.correct[f].push(correct);
            res.seconds[mi].push(run.seconds);
            res.iterations[mi].push(run.convergence.iterations);
            res.converged[mi].push(run.convergence.converged);
        }
        res.per_node[mi] = matched.value().unwrap_or(f64::NAN);
    }
    res.splits = splits;
    Ok(res)
}

/// `M`: the RS predictions scored only on the nodes that at least one SS test set
/// contains, per method (so RS and SS are compared on the same nodes). `rs` must test
/// every node at most once (random folds); both results must hold the same methods.
///
/// # Errors
/// [`LearnError::InvalidData`] when the methods differ or no SS node was scored by RS.
pub fn matched_accuracy(
    num_nodes: usize,
    rs: &ProtocolResult,
    ss: &ProtocolResult,
) -> Result<Vec<f64>, LearnError> {
    if rs.methods != ss.methods {
        return Err(LearnError::InvalidData {
            message: "RS and SS results hold different methods".into(),
        });
    }
    let mut in_ss = vec![false; num_nodes];
    for &v in ss.splits.iter().flat_map(|s| &s.test) {
        if v < num_nodes {
            in_ss[v] = true;
        }
    }
    let mut out = Vec::with_capacity(rs.methods.len());
    for mi in 0..rs.methods.len() {
        let (mut hit, mut total) = (0usize, 0usize);
        for (f, scored) in rs.scored.iter().enumerate() {
            for (i, &v) in scored.iter().enumerate() {
                if v < num_nodes && in_ss[v] {
                    total += 1;
                    hit += usize::from(rs.correct[f][mi][i]);
                }
            }
        }
        if total == 0 {
            return Err(LearnError::InvalidData {
                message: "no node of the SS test sets is in an RS test set".into(),
            });
        }
        out.push(hit as f64 / total as f64);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use srl_graph::HomophilyParams;

    /// A small homophilous graph with weak attributes: neighbour labels carry most of the
    /// signal, so collective methods must beat content-only ones.
    fn graph() -> RelationalGraph {
        let p = HomophilyParams {
            num_nodes: 150,
            num_labels: 3,
            avg_degree: 6.0,
            homophily: 0.9,
            num_features: 12,
            feature_on: 0.3,
            feature_off: 0.12,
            ..HomophilyParams::default()
        };
        p.generate(&mut ChaCha8Rng::seed_from_u64(3))
            .expect("valid parameters")
    }

    fn small() -> CollectiveSettings {
        let mut s = CollectiveSettings::default();
        s.gs.burn_in = 20;
        s.gs.samples = 80;
        s
    }

    #[test]
    fn names_round_trip_and_streams_are_distinct() {
        let mut ids: Vec<u64> = CollectiveMethod::ALL
            .iter()
            .map(|m| m.stream_id())
            .collect();
        // Classic methods keep 16 q + id (id < 14: 14 and 15 are the split's validation
        // hold-out and LR tuning); every (method, split, init) stream is distinct.
        let mut streams = Vec::new();
        for m in CollectiveMethod::ALL {
            for q in [0, 1, 63, 64, SPARSE_SPLIT_STREAM_BASE + 4095] {
                for init in [0, 1, 19] {
                    streams.push(m.stream(q, init));
                }
            }
            if m.is_classic() {
                assert!(m.stream_id() < 14);
                assert_eq!(m.stream(3, 0), 48 + m.stream_id());
            } else {
                assert!(m.stream(0, 0) >= 1 << 62);
            }
        }
        let total = streams.len();
        streams.sort_unstable();
        streams.dedup();
        assert_eq!(streams.len(), total);
        assert_eq!(
            CollectiveMethod::CLASSIC.to_vec(),
            CollectiveMethod::ALL[..11].to_vec()
        );
        assert_eq!(
            CollectiveMethod::GRAPH_LEARNERS.to_vec(),
            CollectiveMethod::ALL[11..].to_vec()
        );
        for m in CollectiveMethod::ALL {
            assert_eq!(m.name().parse::<CollectiveMethod>().expect("parses"), m);
            assert_eq!(
                m.name()
                    .to_lowercase()
                    .parse::<CollectiveMethod>()
                    .expect("any case"),
                m
            );
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), CollectiveMethod::ALL.len());
        // The experiment's rows keep their historical streams (positions 0..10).
        for (i, m) in CollectiveMethod::EXPERIMENT.iter().enumerate() {
            assert_eq!(m.stream_id(), i as u64, "{m}");
        }
        assert!("ICA-XX".parse::<CollectiveMethod>().is_err());
        assert!("svm".parse::<LocalModel>().is_err());
        assert_eq!(
            CollectiveMethod::from_parts("gs", LocalModel::Mnb).expect("gs"),
            CollectiveMethod::Gs(LocalModel::Mnb)
        );
        assert_eq!(
            CollectiveMethod::from_parts("lbp", LocalModel::Nb).expect("lbp"),
            CollectiveMethod::Lbp
        );
        assert_eq!(
            CollectiveMethod::from_parts("cs", LocalModel::Nb).expect("cs"),
            CollectiveMethod::Cs(CsBase::Mlp)
        );
        assert_eq!(
            "cs-lr".parse::<CollectiveMethod>().expect("cs-lr"),
            CollectiveMethod::Cs(CsBase::Lr)
        );
        assert!(CollectiveMethod::from_parts("gat", LocalModel::Nb).is_err());
    }

    #[test]
    fn collective_methods_beat_content_only_and_results_are_independent_of_the_method_set() {
        let g = graph();
        let s = small();
        let tests = Protocol::RandomFolds { k: 3 }
            .test_sets(&g, 5, 0)
            .expect("folds");
        let all = evaluate(&s, &CollectiveMethod::CLASSIC, &g, tests.clone(), 5, 0).expect("runs");
        let mean = |r: &ProtocolResult, m: CollectiveMethod| {
            let i = r.methods.iter().position(|&x| x == m).expect("method");
            r.accuracy[i].iter().sum::<f64>() / r.accuracy[i].len() as f64
        };
        use CollectiveMethod::{Co, Gs, Ica, Lbp, Mf};
        use LocalModel::{Lr, Mnb, Nb};
        for (cc, co) in [
            (Ica(Nb), Co(Nb)),
            (Gs(Nb), Co(Nb)),
            (Ica(Mnb), Co(Mnb)),
            (Ica(Lr), Co(Lr)),
            (Gs(Lr), Co(Lr)),
            (Lbp, Co(Lr)),
            (Mf, Co(Lr)),
        ] {
            assert!(mean(&all, cc) > mean(&all, co) + 0.05, "{cc} vs {co}");
        }
        // A method alone gives exactly its numbers within the full set (fixed streams).
        for m in [Ica(Lr), Gs(Nb), Mf] {
            let one = evaluate(&s, &[m], &g, tests.clone(), 5, 0).expect("runs");
            assert_eq!(
                one.accuracy[0],
                all.accuracy[all.methods.iter().position(|&x| x == m).expect("m")]
            );
        }
        // RS folds partition the nodes: the per-node average is the pooled accuracy and
        // M against itself is the same number.
        let m = matched_accuracy(g.num_nodes(), &all, &all).expect("m");
        for (i, &x) in m.iter().enumerate() {
            assert!((x - all.per_node[i]).abs() < 1e-12);
        }
        assert_eq!(all.lr_c.len(), 3);
        assert!(all.lr_c.iter().all(|c| s.lr_grid.contains(c)));
        for (i, meth) in all.methods.iter().enumerate() {
            if matches!(meth, Lbp | Mf) {
                assert!(all.converged[i].iter().all(|&c| c), "{meth}");
            }
            for split in &all.splits {
                let run = &split.methods[i];
                let k = g.num_labels();
                for (r, &p) in run.probabilities.chunks(k).zip(&run.predicted) {
                    assert!((r.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{meth}");
                    assert!((p as usize) < k);
                }
            }
        }
    }

    #[test]
    fn matched_scores_rs_on_the_ss_nodes_only() {
        let g = graph();
        let s = small();
        let m = [CollectiveMethod::Co(LocalModel::Nb)];
        let rs = evaluate(
            &s,
            &m,
            &g,
            vec![(0..75).collect(), (75..150).collect()],
            1,
            0,
        )
        .expect("rs");
        let ss = evaluate(&s, &m, &g, vec![vec![1, 3], vec![3, 2]], 1, 1).expect("ss");
        let got = matched_accuracy(150, &rs, &ss).expect("m")[0];
        let hits = [1, 2, 3].iter().filter(|&&v| rs.correct[0][0][v]).count();
        assert!((got - hits as f64 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn transduce_predicts_the_unlabelled_nodes_and_keeps_the_rest() {
        let g = graph();
        let mut labels = g.labels().to_vec();
        for l in labels.iter_mut().skip(100) {
            *l = None;
        }
        let hidden = g.with_labels(labels).expect("labels");
        let t =
            transduce(&small(), CollectiveMethod::Ica(LocalModel::Lr), &hidden, 0).expect("runs");
        let k = g.num_labels();
        for v in 0..100 {
            assert_eq!(Some(t.labels[v]), g.labels()[v]);
            assert_eq!(t.probabilities[v * k + t.labels[v] as usize], 1.0);
        }
        assert!(t.lr_c.is_some());
        // Same as the split run with the unlabelled nodes as the test set.
        let test: Vec<usize> = (100..150).collect();
        let split = run_split(
            &small(),
            &[CollectiveMethod::Ica(LocalModel::Lr)],
            &g,
            &test,
            0,
            0,
        )
        .expect("split");
        assert_eq!(&t.labels[100..], &split.methods[0].predicted[..]);
        let all_known = transduce(&small(), CollectiveMethod::Lbp, &g, 0);
        assert!(all_known.is_err());
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        let g = graph();
        let s = small();
        let m = [CollectiveMethod::Co(LocalModel::Lr)];
        assert!(run_split(&s, &m, &g, &[], 0, 0).is_err());
        assert!(run_split(&s, &m, &g, &[150], 0, 0).is_err());
        assert!(run_split(&s, &m, &g, &[3, 3], 0, 0).is_err());
        assert!(run_split(&s, &[], &g, &[3], 0, 0).is_err());
        let all: Vec<usize> = (0..150).collect();
        assert!(run_split(&s, &m, &g, &all, 0, 0).is_err());
        for bad in [
            CollectiveSettings {
                lr_grid: vec![],
                ..small()
            },
            CollectiveSettings {
                lr_grid: vec![f64::NAN],
                ..small()
            },
            CollectiveSettings {
                inner_folds: 1,
                ..small()
            },
            CollectiveSettings {
                lr_prior: LrPrior::PerSample(-1.0),
                ..small()
            },
        ] {
            assert!(bad.validate().is_err());
            assert!(run_split(&bad, &m, &g, &[3], 0, 0).is_err());
        }
        for p in [
            Protocol::RandomFolds { k: 1 },
            Protocol::RandomFolds { k: 151 },
            Protocol::Snowball { k: 0 },
            Protocol::HoldOut { test_fraction: 0.0 },
            Protocol::HoldOut { test_fraction: 1.0 },
            Protocol::HoldOut {
                test_fraction: f64::NAN,
            },
        ] {
            assert!(p.test_sets(&g, 0, 0).is_err(), "{p:?}");
        }
    }

    #[test]
    fn same_seed_same_numbers() {
        let g = graph();
        let s = small();
        let tests = Protocol::Snowball { k: 2 }.test_sets(&g, 9, 1).expect("ss");
        let a = evaluate(&s, &CollectiveMethod::PAPER, &g, tests.clone(), 9, 1).expect("a");
        let b = evaluate(&s, &CollectiveMethod::PAPER, &g, tests, 9, 1).expect("b");
        assert_eq!(a.accuracy, b.accuracy);
        assert_eq!(a.per_node, b.per_node);
        assert_eq!(a.lr_c, b.lr_c);
    }

    /// The graph learners on the same folds as the classic methods: valid probabilities,
    /// the graph-based ones beat the content-only MLP on this homophilous graph, LP
    /// converges, and a method's numbers do not depend on the other methods run.
    #[test]
    #[cfg(feature = "neural")]
    fn graph_learners_run_through_the_pipeline() {
        let g = graph();
        let s = small();
        let tests = Protocol::RandomFolds { k: 3 }
            .test_sets(&g, 5, 0)
            .expect("folds");
        let mut methods = vec![CollectiveMethod::Co(LocalModel::Lr)];
        methods.extend(CollectiveMethod::GRAPH_LEARNERS);
        let all = evaluate(&s, &methods, &g, tests.clone(), 5, 0).expect("runs");
        let mean = |r: &ProtocolResult, m: CollectiveMethod| {
            let i = r.methods.iter().position(|&x| x == m).expect("method");
            r.accuracy[i].iter().sum::<f64>() / r.accuracy[i].len() as f64
        };
        use CollectiveMethod::{Appnp, Cs, Gcn, Lp, Mlp};
        for better in [Lp, Gcn, Appnp, Cs(CsBase::Mlp)] {
            assert!(mean(&all, better) > mean(&all, Mlp) + 0.05, "{better}");
        }
        assert!(mean(&all, Cs(CsBase::Lr)) > mean(&all, CollectiveMethod::Co(LocalModel::Lr)));
        let k = g.num_labels();
        for (i, m) in all.methods.iter().enumerate() {
            for split in &all.splits {
                let run = &split.methods[i];
                for r in run.probabilities.chunks(k) {
                    assert!((r.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{m}");
                }
            }
            if *m == Lp {
                assert!(all.converged[i].iter().all(|&c| c));
            }
        }
        // Alone, each gives its numbers within the full set (CS-MLP alone trains the MLP
        // on the MLP's stream).
        for m in [Gcn, Cs(CsBase::Mlp), Cs(CsBase::Lr)] {
            let one = evaluate(&s, &[m], &g, tests.clone(), 5, 0).expect("runs");
            let i = all.methods.iter().position(|&x| x == m).expect("m");
            assert_eq!(one.accuracy[0], all.accuracy[i], "{m}");
            for (a, b) in one.splits.iter().zip(&all.splits) {
                assert_eq!(
                    a.methods[0].probabilities, b.methods[i].probabilities,
                    "{m}"
                );
            }
        }
        // Another initialisation changes a neural method's numbers, not LP's.
        let again: Vec<EvalSplit> = Protocol::RandomFolds { k: 3 }
            .splits(&g, 5, 0)
            .expect("splits")
            .into_iter()
            .map(|sp| EvalSplit { init: 1, ..sp })
            .collect();
        let re = evaluate_splits(&s, &[Lp, Gcn], &g, again, 5).expect("runs");
        assert_eq!(re.accuracy[0], all.accuracy[1]);
        assert_ne!(
            re.splits[0].methods[1].probabilities,
            all.splits[0].methods[3].probabilities
        );
    }

    #[test]
    fn transduce_with_validation_is_the_split_with_validation_nodes() {
        let g = graph();
        let mut labels = g.labels().to_vec();
        for l in labels.iter_mut().skip(60) {
            *l = None;
        }
        let hidden = g.with_labels(labels).expect("labels");
        let mut s = small();
        s.gcn.max_epochs = 30;
        s.mlp.max_epochs = 30;
        let validation: Vec<usize> = (30..60).collect();
        let k = g.num_labels();
        for method in [CollectiveMethod::Gcn, CollectiveMethod::Cs(CsBase::Mlp)] {
            let t = transduce_with_validation(&s, method, &hidden, &validation, 5).expect("runs");
            // The split of the sparse-label protocol: validation nodes hidden, the
            // unlabelled nodes tested, split stream 0, init 0; the labelled nodes keep
            // their labels.
            let split = EvalSplit {
                test: (60..150).collect(),
                validation: validation.clone(),
                stream: 0,
                init: 0,
            };
            let run = run_eval_split(&s, &[method], &g, &split, 5).expect("split");
            for (i, v) in (60..150).enumerate() {
                assert_eq!(t.labels[v], run.methods[0].predicted[i]);
                assert_eq!(
                    t.probabilities[v * k..(v + 1) * k],
                    run.methods[0].probabilities[i * k..(i + 1) * k]
                );
            }
            for v in 0..60 {
                assert_eq!(Some(t.labels[v]), g.labels()[v]);
            }
            // Not the random hold-out of `transduce`.
            let plain = transduce(&s, method, &hidden, 5).expect("runs");
            assert_ne!(plain.probabilities, t.probabilities);
        }
        let err = |m: CollectiveMethod, v: &[usize]| {
            transduce_with_validation(&s, m, &hidden, v, 5)
                .expect_err("refused")
                .to_string()
        };
        let gcn = CollectiveMethod::Gcn;
        assert!(err(gcn, &[]).contains("no validation node"));
        assert!(err(gcn, &[150]).contains("validation node 150: out of range"));
        assert!(err(gcn, &[3, 3]).contains("validation node 3: listed twice"));
        assert!(err(gcn, &[70]).contains("validation node 70: unlabelled"));
        let all: Vec<usize> = (0..60).collect();
        assert!(matches!(
            transduce_with_validation(&s, gcn, &hidden, &all, 5),
            Err(LearnError::NoTrainingData { .. })
        ));
        for m in [
            CollectiveMethod::Lp,
            CollectiveMethod::Cs(CsBase::Lr),
            CollectiveMethod::Ica(LocalModel::Lr),
        ] {
            assert!(matches!(
                transduce_with_validation(&s, m, &hidden, &validation, 5),
                Err(LearnError::InvalidParameter {
                    name: "validation",
                    ..
                })
            ));
        }
    }

    #[test]
    fn sparse_protocol_splits_and_validation_nodes() {
        let g = graph();
        let (lcc, ids) = largest_component(&g).expect("lcc");
        assert_eq!(lcc.connected_components().1, 1);
        assert_eq!(ids.len(), lcc.num_nodes());
        let p = Protocol::Sparse {
            train_per_class: 5,
            validation_per_class: 3,
            splits: 4,
        };
        let splits = p.splits(&lcc, 7, 2).expect("splits");
        assert_eq!(splits.len(), 4);
        let k = lcc.num_labels();
        for (f, sp) in splits.iter().enumerate() {
            assert_eq!(sp.stream, SPARSE_SPLIT_STREAM_BASE + 4096 * 2 + f as u64);
            assert_eq!(sp.validation.len(), 3 * k);
            assert_eq!(sp.test.len(), lcc.num_nodes() - 8 * k);
            let mut per_class = vec![0; k];
            for &v in &sp.validation {
                per_class[lcc.labels()[v].expect("labelled") as usize] += 1;
                assert!(!sp.test.contains(&v));
            }
            assert!(per_class.iter().all(|&c| c == 3));
        }
        assert_ne!(splits[0].test, splits[1].test);
        assert_eq!(p.splits(&lcc, 7, 2).expect("again"), splits);
        assert!(p.test_sets(&lcc, 7, 2).is_err());
        // Validation nodes are hidden from every method: a split with validation nodes
        // trains on 5 per class; the run records them and predicts only the test nodes.
        let s = small();
        let res = evaluate_splits(
            &s,
            &[
                CollectiveMethod::Ica(LocalModel::Nb),
                CollectiveMethod::Lp,
                CollectiveMethod::Cs(CsBase::Lr),
            ],
            &lcc,
            splits[..2].to_vec(),
            7,
        )
        .expect("runs");
        for (sp, run) in splits.iter().zip(&res.splits) {
            assert_eq!(run.validation, sp.validation);
            assert_eq!(run.methods[0].predicted.len(), sp.test.len());
        }
        // More than the smallest class holds, a disconnected graph, bad counts.
        let too_many = Protocol::Sparse {
            train_per_class: 40,
            validation_per_class: 30,
            splits: 1,
        };
        assert!(too_many.splits(&lcc, 0, 0).is_err());
        for bad in [
            Protocol::Sparse {
                train_per_class: 0,
                validation_per_class: 3,
                splits: 1,
            },
            Protocol::Sparse {
                train_per_class: 1,
                validation_per_class: 1,
                splits: 0,
            },
            Protocol::Sparse {
                train_per_class: 1,
                validation_per_class: 1,
                splits: 5000,
            },
        ] {
            assert!(bad.splits(&lcc, 0, 0).is_err(), "{bad:?}");
        }
        let disconnected = RelationalGraph::disjoint_union(&[&lcc, &lcc])
            .expect("union")
            .0;
        assert!(p.splits(&disconnected, 0, 0).is_err());
        // A validation node that is also a test node, or unlabelled, is an error.
        let mut bad = splits[0].clone();
        bad.validation.push(bad.test[0]);
        assert!(run_eval_split(&s, &[CollectiveMethod::Lp], &lcc, &bad, 0).is_err());
        let bad = EvalSplit {
            init: 1 << 16,
            ..splits[0].clone()
        };
        assert!(run_eval_split(&s, &[CollectiveMethod::Lp], &lcc, &bad, 0).is_err());
    }
}
