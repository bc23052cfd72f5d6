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
//! with the local classifiers ([`LocalModel`]) `NB` (Bernoulli words + a Gaussian per
//! neighbour-label count, srl-bayes [`LocalBernoulliGaussianNaiveBayes`]), `MNB`
//! (multinomial naive Bayes over words and counts, srl-bayes [`LocalNaiveBayes`]) and `LR`
//! (L2-regularised multinomial logistic regression, [`LocalLogisticRegression`], whose
//! prior strength is chosen per split by an inner cross-validation on that split's
//! training nodes, [`LrPrior::Tuned`]).
//!
//! The sampling protocols ([`Protocol`]): `RS` (k random folds), `SS` (k class-stratified
//! snowball samples of `|V|/k` nodes; overlapping, scored per node) and `M` (the RS
//! predictions scored on the nodes the SS samples test, [`matched_accuracy`]); plus a
//! single random hold-out and explicit test sets.
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
//! - test sets of a protocol: stream `1_000_000 + p` ([`Protocol::test_sets`]), `p` the
//!   protocol stream;
//! - split `f` of protocol stream `p`: split stream `q = 64 p + f` ([`evaluate`]);
//! - method `m` on split stream `q`: stream `16 q + m.stream_id()`
//!   ([`CollectiveMethod::stream_id`]); the LR inner cross-validation: stream `16 q + 15`.
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
use srl_eval::cv::{Folds, par_cross_validate};
use srl_graph::{HoldOut, KFold, NodeId, RelationalGraph, Split, stratified_snowball_splits};
use srl_infer::{
    Aggregator, CollectiveGibbs, CollectiveResult, ContentOnly, Convergence, FeatureRow,
    IterativeClassification, LocalClassifier, LoopyBp, MarginalInference, MeanField,
    aggregate_neighbors, fit_relational_classifier,
};

use crate::error::LearnError;
use crate::logreg::{Lambda, LocalLogisticRegression, LogisticRegressionParams, argmax};
use crate::mn::{RelationalMarkovNetwork, RelationalMarkovNetworkParams};

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

    /// All eleven methods.
    pub const ALL: [CollectiveMethod; 11] = [
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

    /// The results-table name: `CO-NB`, `ICA-LR`, `GS-MNB`, `LBP`, `MF`, ...
    #[must_use]
    pub const fn name(self) -> &'static str {
        use CollectiveMethod::{Co, Gs, Ica, Lbp, Mf};
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
        }
    }

    /// The local classifier (`None` for LBP and MF).
    #[must_use]
    pub const fn local(self) -> Option<LocalModel> {
        match self {
            CollectiveMethod::Co(l) | CollectiveMethod::Ica(l) | CollectiveMethod::Gs(l) => Some(l),
            CollectiveMethod::Lbp | CollectiveMethod::Mf => None,
        }
    }

    /// The method's fixed random stream offset within a split, in `0..=10`: its position
    /// in [`CollectiveMethod::ALL`] (see the module's "Random streams"). Fixed per method,
    /// so a method's numbers do not depend on which other methods run.
    #[must_use]
    pub fn stream_id(self) -> u64 {
        CollectiveMethod::ALL
            .iter()
            .position(|&m| m == self)
            .map_or(0, |i| i as u64)
    }

    /// The method of an algorithm name (`co`, `ica`, `gs`, `lbp`, `mf`; any case) and a
    /// local classifier (ignored for LBP and MF).
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
            _ => Err(LearnError::InvalidParameter {
                name: "method",
                message: format!("{algorithm:?}: expected co, ica, gs, lbp or mf"),
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
    /// or a non-positive LBP/MF tolerance.
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

/// Runs `methods` on one split: the nodes `test` are held out (their labels hidden), every
/// other labelled node is a training node whose label stays observed.
///
/// - `graph`: `n` nodes, `k` labels; labels of test nodes may be present (they are
///   hidden) or absent.
/// - `test`: distinct node indices `< n`, at least one; the order of the result rows.
/// - `seed`, `split_stream`: the random streams (module docs, "Random streams").
///
/// # Errors
/// [`LearnError::InvalidParameter`] for invalid `settings` or no method;
/// [`LearnError::InvalidData`] for an empty, out-of-range or repeated test set or no
/// labelled training node; a method's own error (local classifier, inference, L-BFGS).
pub fn run_split(
    settings: &CollectiveSettings,
    methods: &[CollectiveMethod],
    graph: &RelationalGraph,
    test: &[usize],
    seed: u64,
    split_stream: u64,
) -> Result<SplitRun, LearnError> {
    settings.validate()?;
    check_methods(methods)?;
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
    let train: Vec<usize> = (0..n)
        .filter(|&v| !in_test[v] && graph.labels()[v].is_some())
        .collect();
    if train.is_empty() {
        return Err(LearnError::NoTrainingData {
            reason: "no labelled node outside the test set".into(),
        });
    }
    let held_out = HoldOut::new(graph, Split::from_test_mask(in_test.clone()))?;
    let hidden = held_out.observed();
    let k = hidden.num_labels();
    let uses = |l: LocalModel| methods.iter().any(|m| m.local() == Some(l));
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
    let mut out = Vec::with_capacity(methods.len());
    for &method in methods {
        let mut rng = stream_rng(seed, split_stream * 16 + method.stream_id());
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
/// `seed`): the pipeline behind srl-py's `ContentOnly`, `ICA`, `CollectiveGibbs` and
/// `MarkovNetwork`.
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
    let mut split = run_split(settings, &[method], graph, &test, seed, 0)?;
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
}

impl Protocol {
    /// The test sets (node indices) of the protocol on `graph`, drawn from
    /// [`stream_rng`]`(seed, 1_000_000 + stream)`.
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] for `k < 2`, `k > n` or a fraction outside `(0,
    /// 1)`; [`LearnError::InvalidData`] when a hold-out would test no node or every node.
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
    settings.validate()?;
    check_methods(methods)?;
    let folds = Folds::new(graph.num_nodes(), tests).map_err(|e| LearnError::InvalidData {
        message: format!("test sets: {e}"),
    })?;
    let splits = par_cross_validate(&folds, |fold| {
        run_split(
            settings,
            methods,
            graph,
            fold.test,
            seed,
            stream * 64 + fold.index as u64,
        )
        .map_err(|e| LearnError::InvalidData {
            message: format!("split {}: {e}", fold.index + 1),
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
    fn names_round_trip_and_stream_ids_are_distinct_and_below_15() {
        let mut ids: Vec<u64> = CollectiveMethod::ALL
            .iter()
            .map(|m| m.stream_id())
            .collect();
        for m in CollectiveMethod::ALL {
            assert_eq!(m.name().parse::<CollectiveMethod>().expect("parses"), m);
            assert_eq!(
                m.name()
                    .to_lowercase()
                    .parse::<CollectiveMethod>()
                    .expect("any case"),
                m
            );
            assert!(m.stream_id() < 15);
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
    }

    #[test]
    fn collective_methods_beat_content_only_and_results_are_independent_of_the_method_set() {
        let g = graph();
        let s = small();
        let tests = Protocol::RandomFolds { k: 3 }
            .test_sets(&g, 5, 0)
            .expect("folds");
        let all = evaluate(&s, &CollectiveMethod::ALL, &g, tests.clone(), 5, 0).expect("runs");
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
}
