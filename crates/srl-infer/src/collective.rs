//! Collective classification with local classifiers: the iterative classification
//! algorithm (ICA) and collective Gibbs sampling (GS), as in the slides ("Local methods")
//! and Sen et al., "Collective classification in network data", AI Magazine 2008,
//! Algorithms 1 and 2.

use rand::seq::SliceRandom;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};
use srl_graph::{AttributeRow, GraphError, HoldOut, NodeId, RelationalGraph};

use crate::error::InferError;
use crate::marginals::{Convergence, argmax};

/// How neighbour labels are turned into a fixed-length feature vector (length `k`, one
/// entry per class), the slides' "choice of aggregation".
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Aggregator {
    /// `r_c` = number of labelled neighbours with label `c` (the slides' experiments).
    #[default]
    Count,
    /// `r_c` = that count divided by the number of labelled neighbours (0 if none).
    Proportion,
    /// `r_c` = 1 if some neighbour has label `c`, else 0.
    Exists,
    /// One-hot of the most frequent neighbour label (ties: smallest label; all 0 if no
    /// labelled neighbour).
    Mode,
}

/// Computes the aggregated neighbour-label features of `v` into `out` (length `k`).
///
/// # Arguments
/// - `labels`: current label of every node (`None`: unknown, skipped).
/// - Neighbours are [`RelationalGraph::neighbors`] (both directions for directed graphs).
///
/// # Panics
/// If `v` is out of range or a label is `>= out.len()`.
pub fn aggregate_neighbors(
    aggregator: Aggregator,
    graph: &RelationalGraph,
    v: usize,
    labels: &[Option<u32>],
    out: &mut [f64],
) {
    aggregate_labels(
        aggregator,
        graph.neighbors(NodeId::new(v)).iter().map(|w| w.index()),
        labels,
        out,
    );
}

/// [`aggregate_neighbors`] over any neighbour list: the aggregated labels of the nodes
/// `neighbours` (indices into `labels`) into `out` (length `k`, one entry per label),
/// in the order given (the same arithmetic, so the same features, for a caller that
/// holds the neighbour lists itself, such as srl-dist's sharded ICA).
///
/// # Panics
/// If a neighbour is `>= labels.len()` or a label is `>= out.len()`.
pub fn aggregate_labels(
    aggregator: Aggregator,
    neighbours: impl IntoIterator<Item = usize>,
    labels: &[Option<u32>],
    out: &mut [f64],
) {
    out.iter_mut().for_each(|x| *x = 0.0);
    let mut total = 0usize;
    for w in neighbours {
        if let Some(c) = labels[w] {
            out[c as usize] += 1.0;
            total += 1;
        }
    }
    match aggregator {
        Aggregator::Count => {}
        Aggregator::Proportion => {
            if total > 0 {
                let t = total as f64;
                out.iter_mut().for_each(|x| *x /= t);
            }
        }
        Aggregator::Exists => out
            .iter_mut()
            .for_each(|x| *x = f64::from(u8::from(*x > 0.0))),
        Aggregator::Mode => {
            if total > 0 {
                let m = argmax(out);
                out.iter_mut().for_each(|x| *x = 0.0);
                out[m] = 1.0;
            }
        }
    }
}

/// One feature vector of a local classifier: the node's attribute row (borrowed from the
/// graph, sparse or dense, never copied) followed by `relational.len()` aggregated
/// neighbour-label features.
///
/// Feature index space: `0..num_attributes` are attribute columns,
/// `num_attributes..num_attributes + relational.len()` the relational features.
#[derive(Copy, Clone, Debug)]
pub struct FeatureRow<'a> {
    /// The node's attributes.
    pub attributes: AttributeRow<'a>,
    /// Number of attribute columns (the graph's `num_features()`).
    pub num_attributes: usize,
    /// Aggregated neighbour-label features (empty for a content-only classifier).
    pub relational: &'a [f64],
}

impl FeatureRow<'_> {
    /// Total dimension `num_attributes + relational.len()`.
    #[must_use]
    pub fn dim(&self) -> usize {
        self.num_attributes + self.relational.len()
    }

    /// Calls `f(j, x_j)` for every stored entry: the attribute row's entries (non-zeros
    /// for sparse rows), then every relational feature.
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(usize, f64)) {
        self.attributes.for_each(&mut f);
        for (i, &x) in self.relational.iter().enumerate() {
            f(self.num_attributes + i, x);
        }
    }

    /// Dot product with a dense weight vector of length at least `dim()`.
    ///
    /// # Panics
    /// If `w` is shorter than `dim()`.
    #[inline]
    #[must_use]
    pub fn dot(&self, w: &[f64]) -> f64 {
        let a = self.attributes.dot(&w[..self.num_attributes]);
        let r: f64 = self
            .relational
            .iter()
            .zip(&w[self.num_attributes..self.dim()])
            .map(|(x, y)| x * y)
            .sum();
        a + r
    }
}

/// A classifier usable inside ICA and collective Gibbs sampling. Implemented above this
/// crate (logistic regression in srl-learn, naive Bayes in srl-bayes).
///
/// The classifier must accept rows of one fixed [`FeatureRow::dim`] per fit; ICA fits a
/// fresh clone of the prototype it is given.
pub trait LocalClassifier {
    /// The classifier's own error type (wrapped in [`InferError::LocalClassifier`]).
    type Error: std::error::Error + Send + Sync + 'static;

    /// Fits on `rows` with class labels in `0..num_classes` and optional non-negative
    /// sample weights (parallel to `rows`).
    ///
    /// # Errors
    /// Whatever the implementation rejects.
    fn fit(
        &mut self,
        rows: &[FeatureRow<'_>],
        labels: &[u32],
        weights: Option<&[f64]>,
        num_classes: usize,
    ) -> Result<(), Self::Error>;

    /// Class probabilities of `row` into `out` (length `num_classes`, summing to 1).
    fn predict_proba(&self, row: &FeatureRow<'_>, out: &mut [f64]);
}

/// Order in which unknown nodes are visited in each iteration.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum NodeOrdering {
    /// Increasing node index.
    Fixed,
    /// A fresh uniformly random permutation each iteration (the slides: ICA is robust to
    /// simple random orderings).
    #[default]
    Random,
}

/// How the first labels of the unknown nodes are obtained before iterating.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Bootstrap {
    /// The relational classifier with neighbour features aggregated over the *observed*
    /// neighbours only (unknown neighbours contribute nothing), as Sen et al. 2008,
    /// Algorithm 1 ("compute a_i using only X ∩ N_i"). Needs one classifier.
    #[default]
    KnownNeighbours,
    /// A second, content-only classifier (a clone of the prototype fitted on the
    /// attributes alone, empty relational part) labels the unknown nodes from their
    /// attributes ("bootstrap from attributes").
    ContentOnly,
}

/// Output of collective classification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectiveResult {
    /// Predicted label of every node (observed nodes keep their label).
    pub labels: Vec<u32>,
    /// `n x k` row-major class probabilities (observed nodes: point mass).
    pub probabilities: Vec<f64>,
    /// Number of classes `k`.
    pub num_classes: usize,
    /// How the iteration ended.
    pub convergence: Convergence,
}

impl CollectiveResult {
    /// Class probabilities of node `v`.
    ///
    /// # Panics
    /// If `v >= n`.
    #[must_use]
    pub fn proba(&self, v: usize) -> &[f64] {
        &self.probabilities[v * self.num_classes..(v + 1) * self.num_classes]
    }

    /// Predicted label of node `v`.
    ///
    /// # Panics
    /// If `v` is out of range.
    #[must_use]
    pub fn label(&self, v: NodeId) -> u32 {
        self.labels[v.index()]
    }

    /// Accuracy on the held-out nodes: the share of `held_out`'s nodes with a known true
    /// label whose predicted label is that label ([`HoldOut::accuracy`]).
    ///
    /// # Returns
    /// A value in `[0, 1]`, or `None` when no held-out node has a known label.
    ///
    /// # Errors
    /// [`GraphError::DimensionMismatch`] if `held_out` is over a graph with a different
    /// number of nodes.
    pub fn accuracy_on(&self, held_out: &HoldOut) -> Result<Option<f64>, GraphError> {
        held_out.accuracy(&self.labels)
    }
}

/// Content-only classification (CO; Sen et al. 2008, "content only" baseline): a clone of
/// the local classifier is fitted on the labelled nodes' attributes alone (empty
/// relational part) and labels every unlabelled node from its attributes; neighbour
/// labels are never used. The baseline the collective methods are compared against, with
/// the same [`LocalClassifier`]s and the same [`CollectiveResult`].
///
/// `convergence` is always `{ converged: true, iterations: 0, max_residual: 0 }`.
///
/// ```
/// # use rand::SeedableRng as _;
/// # use srl_graph::{Attributes, Directedness, HoldOut, LabelSet, RelationalGraph};
/// # use srl_infer::{ContentOnly, FeatureRow, LocalClassifier};
/// # #[derive(Clone)] struct Prior(Vec<f64>);
/// # impl LocalClassifier for Prior {
/// #     type Error = std::convert::Infallible;
/// #     fn fit(&mut self, _: &[FeatureRow<'_>], y: &[u32], _: Option<&[f64]>, k: usize) -> Result<(), Self::Error> {
/// #         self.0 = vec![0.0; k]; y.iter().for_each(|&c| self.0[c as usize] += 1.0); Ok(())
/// #     }
/// #     fn predict_proba(&self, _: &FeatureRow<'_>, out: &mut [f64]) {
/// #         let z: f64 = self.0.iter().sum(); out.iter_mut().zip(&self.0).for_each(|(o, p)| *o = p / z);
/// #     }
/// # }
/// let graph = RelationalGraph::new(Vec::new(), Attributes::none(4),
///     vec![Some(1), Some(1), Some(0), Some(1)], LabelSet::numbered(2), Vec::new(),
///     Directedness::Undirected)?;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
/// let held_out = HoldOut::random(&graph, 0.5, &mut rng)?;
/// // A classifier that only knows the class prior predicts the majority class.
/// let result = ContentOnly.run(held_out.observed(), &Prior(Vec::new()), None)?;
/// assert!(result.accuracy_on(&held_out)?.is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentOnly;

impl ContentOnly {
    /// Fits a clone of `prototype` on the labelled nodes of `graph` (attributes only) and
    /// predicts every unlabelled node.
    ///
    /// # Arguments
    /// - `weights`: optional per-node sample weights (length `n`; only labelled nodes'
    ///   weights are used).
    ///
    /// # Returns
    /// Observed nodes keep their label (point-mass probabilities); unlabelled nodes get
    /// the classifier's probabilities and their most probable class (lowest index on ties).
    ///
    /// # Errors
    /// [`InferError::InvalidLabels`] for an empty label set, [`InferError::NoLabelledNodes`],
    /// [`InferError::DimensionMismatch`] for bad weights, [`InferError::LocalClassifier`].
    ///
    /// # Complexity
    /// One fit on the labelled nodes plus one prediction per unlabelled node.
    pub fn run<C: LocalClassifier + Clone>(
        &self,
        graph: &RelationalGraph,
        prototype: &C,
        weights: Option<&[f64]>,
    ) -> Result<CollectiveResult, InferError> {
        let (k, known, unknown) = observed_nodes(graph, weights)?;
        let observed = graph.labels();
        let mut probs = vec![0.0; graph.num_nodes() * k];
        for &v in &known {
            if let Some(c) = observed[v] {
                probs[v * k + c as usize] = 1.0;
            }
        }
        content_only_probs(graph, prototype, &known, &unknown, weights, k, &mut probs)?;
        let labels = (0..graph.num_nodes())
            .map(|v| observed[v].unwrap_or_else(|| argmax(&probs[v * k..(v + 1) * k]) as u32))
            .collect();
        Ok(CollectiveResult {
            labels,
            probabilities: probs,
            num_classes: k,
            convergence: Convergence {
                converged: true,
                iterations: 0,
                max_residual: 0.0,
            },
        })
    }
}

/// Fits a clone of `prototype` on the `known` nodes' attributes (empty relational part)
/// and writes its class probabilities of the `unknown` nodes into their rows of `probs`.
fn content_only_probs<C: LocalClassifier + Clone>(
    graph: &RelationalGraph,
    prototype: &C,
    known: &[usize],
    unknown: &[usize],
    weights: Option<&[f64]>,
    k: usize,
    probs: &mut [f64],
) -> Result<(), InferError> {
    let nf = graph.num_features();
    let observed = graph.labels();
    let y: Vec<u32> = known.iter().filter_map(|&v| observed[v]).collect();
    let w: Option<Vec<f64>> = weights.map(|w| known.iter().map(|&v| w[v]).collect());
    let row = |v: usize| FeatureRow {
        attributes: graph.attributes_of(NodeId::new(v)),
        num_attributes: nf,
        relational: &[],
    };
    let content_rows: Vec<FeatureRow<'_>> = known.iter().map(|&v| row(v)).collect();
    let mut content = prototype.clone();
    content
        .fit(&content_rows, &y, w.as_deref(), k)
        .map_err(wrap)?;
    for &v in unknown {
        content.predict_proba(&row(v), &mut probs[v * k..(v + 1) * k]);
    }
    Ok(())
}

/// Trained state shared by ICA and GS.
struct Prepared<C> {
    k: usize,
    unknown: Vec<usize>,
    relational: C,
    labels: Vec<Option<u32>>,
    probs: Vec<f64>,
}

fn wrap<E: std::error::Error + Send + Sync + 'static>(e: E) -> InferError {
    InferError::LocalClassifier {
        source: Box::new(e),
    }
}

/// Checks the graph and weights and lists the observed and unknown nodes.
fn observed_nodes(
    graph: &RelationalGraph,
    weights: Option<&[f64]>,
) -> Result<(usize, Vec<usize>, Vec<usize>), InferError> {
    let n = graph.num_nodes();
    let k = graph.num_labels();
    if k == 0 {
        return Err(InferError::InvalidLabels {
            reason: "the graph has an empty label set".into(),
        });
    }
    if let Some(w) = weights
        && w.len() != n
    {
        return Err(InferError::DimensionMismatch {
            what: "sample weights",
            expected: n,
            found: w.len(),
        });
    }
    let observed = graph.labels();
    let known: Vec<usize> = (0..n).filter(|&v| observed[v].is_some()).collect();
    if known.is_empty() {
        return Err(InferError::NoLabelledNodes);
    }
    let unknown: Vec<usize> = (0..n).filter(|&v| observed[v].is_none()).collect();
    Ok((k, known, unknown))
}

/// Trains a clone of `prototype` as the relational classifier of ICA and GS: on the
/// labelled nodes of `graph`, with their attributes and the `aggregator` of their
/// *labelled* neighbours' labels (step 1 of [`IterativeClassification`]).
///
/// Pass the result to [`IterativeClassification::run_fitted`] and
/// [`CollectiveGibbs::run_fitted`] to run both on one trained classifier (what `run`
/// does internally, once per call).
///
/// # Errors
/// [`InferError::InvalidLabels`] for an empty label set, [`InferError::NoLabelledNodes`],
/// [`InferError::DimensionMismatch`] for bad weights, [`InferError::LocalClassifier`].
pub fn fit_relational_classifier<C: LocalClassifier + Clone>(
    graph: &RelationalGraph,
    prototype: &C,
    aggregator: Aggregator,
    weights: Option<&[f64]>,
) -> Result<C, InferError> {
    let (k, known, _) = observed_nodes(graph, weights)?;
    let observed = graph.labels();
    let nf = graph.num_features();
    let mut rel = vec![0.0; known.len() * k];
    for (i, &v) in known.iter().enumerate() {
        aggregate_neighbors(aggregator, graph, v, observed, &mut rel[i * k..(i + 1) * k]);
    }
    let y: Vec<u32> = known.iter().filter_map(|&v| observed[v]).collect();
    let w: Option<Vec<f64>> = weights.map(|w| known.iter().map(|&v| w[v]).collect());
    let rows: Vec<FeatureRow<'_>> = known
        .iter()
        .enumerate()
        .map(|(i, &v)| FeatureRow {
            attributes: graph.attributes_of(NodeId::new(v)),
            num_attributes: nf,
            relational: &rel[i * k..(i + 1) * k],
        })
        .collect();
    let mut relational = prototype.clone();
    relational.fit(&rows, &y, w.as_deref(), k).map_err(wrap)?;
    Ok(relational)
}

/// Trains the relational classifier on the labelled nodes (neighbour features from the
/// observed labels) and bootstraps the unknown nodes.
fn prepare<C: LocalClassifier + Clone>(
    graph: &RelationalGraph,
    prototype: &C,
    aggregator: Aggregator,
    bootstrap: Bootstrap,
    weights: Option<&[f64]>,
) -> Result<Prepared<C>, InferError> {
    let relational = fit_relational_classifier(graph, prototype, aggregator, weights)?;
    bootstrap_with(graph, relational, prototype, aggregator, bootstrap, weights)
}

/// Bootstraps the unknown nodes with a trained `relational` classifier (`prototype` is
/// cloned for [`Bootstrap::ContentOnly`]).
fn bootstrap_with<C: LocalClassifier + Clone>(
    graph: &RelationalGraph,
    relational: C,
    prototype: &C,
    aggregator: Aggregator,
    bootstrap: Bootstrap,
    weights: Option<&[f64]>,
) -> Result<Prepared<C>, InferError> {
    let (k, known, unknown) = observed_nodes(graph, weights)?;
    let n = graph.num_nodes();
    let observed: Vec<Option<u32>> = graph.labels().to_vec();
    let nf = graph.num_features();
    let mut probs = vec![0.0; n * k];
    for &v in &known {
        if let Some(c) = observed[v] {
            probs[v * k + c as usize] = 1.0;
        }
    }
    let mut labels = observed.clone();
    let mut buf = vec![0.0; k];
    match bootstrap {
        Bootstrap::KnownNeighbours => {
            for &v in &unknown {
                aggregate_neighbors(aggregator, graph, v, &observed, &mut buf);
                let row = FeatureRow {
                    attributes: graph.attributes_of(NodeId::new(v)),
                    num_attributes: nf,
                    relational: &buf,
                };
                relational.predict_proba(&row, &mut probs[v * k..(v + 1) * k]);
            }
        }
        Bootstrap::ContentOnly => {
            content_only_probs(graph, prototype, &known, &unknown, weights, k, &mut probs)?;
        }
    }
    for &v in &unknown {
        labels[v] = Some(argmax(&probs[v * k..(v + 1) * k]) as u32);
    }
    Ok(Prepared {
        k,
        unknown,
        relational,
        labels,
        probs,
    })
}

fn order<R: Rng + ?Sized>(ordering: NodeOrdering, nodes: &mut [usize], rng: &mut R) {
    match ordering {
        NodeOrdering::Fixed => nodes.sort_unstable(),
        NodeOrdering::Random => nodes.shuffle(rng),
    }
}

/// The iterative classification algorithm (ICA; slides "ICA mechanics"; Sen et al. 2008,
/// Algorithm 1; Lu & Getoor 2003).
///
/// 1. Train the local classifier on the labelled nodes, with their attributes and the
///    aggregate of their labelled neighbours' labels.
/// 2. Bootstrap the unknown nodes (see [`Bootstrap`]).
/// 3. Repeat until no label changes or `max_iters`: visit the unknown nodes in `ordering`,
///    recompute each node's neighbour aggregate from the current labels (observed and
///    estimated) and set its label to the classifier's most probable class.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `max_iters` | 100 | iteration cap | `≥ 0` |
/// | `aggregator` | `Count` | neighbour-label aggregation | |
/// | `ordering` | `Random` | node visiting order | |
/// | `bootstrap` | `KnownNeighbours` | initial labels | |
///
/// `Convergence::max_residual` is the fraction of unknown labels changed in the last
/// iteration. `probabilities` are the classifier's last outputs.
///
/// # Complexity
/// Per iteration `O(m + Σ_v predict(v))`; features are never densified (attribute rows
/// are borrowed, only the `k` relational values are computed).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IterativeClassification {
    /// Iteration cap.
    pub max_iters: usize,
    /// Aggregation of neighbour labels.
    pub aggregator: Aggregator,
    /// Visiting order.
    pub ordering: NodeOrdering,
    /// Bootstrap method.
    pub bootstrap: Bootstrap,
}

impl Default for IterativeClassification {
    fn default() -> Self {
        Self {
            max_iters: 100,
            aggregator: Aggregator::Count,
            ordering: NodeOrdering::Random,
            bootstrap: Bootstrap::KnownNeighbours,
        }
    }
}

impl IterativeClassification {
    /// Runs ICA on `graph`: nodes with `Some` label are observed (training), nodes with
    /// `None` are classified.
    ///
    /// # Arguments
    /// - `prototype`: an unfitted classifier; clones are fitted.
    /// - `weights`: optional per-node sample weights (length `n`; only labelled nodes'
    ///   weights are used).
    /// - `rng`: used for [`NodeOrdering::Random`].
    ///
    /// # Errors
    /// [`InferError::InvalidLabels`] for an empty label set, [`InferError::NoLabelledNodes`],
    /// [`InferError::DimensionMismatch`] for bad weights, [`InferError::LocalClassifier`].
    pub fn run<C: LocalClassifier + Clone, R: Rng + ?Sized>(
        &self,
        graph: &RelationalGraph,
        prototype: &C,
        weights: Option<&[f64]>,
        rng: &mut R,
    ) -> Result<CollectiveResult, InferError> {
        let prepared = prepare(graph, prototype, self.aggregator, self.bootstrap, weights)?;
        Ok(self.iterate(graph, prepared, rng))
    }

    /// Runs ICA with a relational classifier already trained by
    /// [`fit_relational_classifier`] on this `graph` with this `aggregator` (steps 2-3
    /// only; no sample weights). [`Bootstrap::ContentOnly`] refits a clone of `fitted` on
    /// the attributes alone.
    ///
    /// # Errors
    /// As [`IterativeClassification::run`].
    pub fn run_fitted<C: LocalClassifier + Clone, R: Rng + ?Sized>(
        &self,
        graph: &RelationalGraph,
        fitted: &C,
        rng: &mut R,
    ) -> Result<CollectiveResult, InferError> {
        let prepared = bootstrap_with(
            graph,
            fitted.clone(),
            fitted,
            self.aggregator,
            self.bootstrap,
            None,
        )?;
        Ok(self.iterate(graph, prepared, rng))
    }

    /// Steps 3 of ICA from a bootstrapped state.
    fn iterate<C: LocalClassifier, R: Rng + ?Sized>(
        &self,
        graph: &RelationalGraph,
        prepared: Prepared<C>,
        rng: &mut R,
    ) -> CollectiveResult {
        let Prepared {
            k,
            mut unknown,
            relational,
            mut labels,
            mut probs,
        } = prepared;
        let nf = graph.num_features();
        let mut buf = vec![0.0; k];
        let mut conv = Convergence {
            converged: unknown.is_empty(),
            iterations: 0,
            max_residual: 0.0,
        };
        while !conv.converged && conv.iterations < self.max_iters {
            order(self.ordering, &mut unknown, rng);
            let mut changed = 0usize;
            for &v in &unknown {
                aggregate_neighbors(self.aggregator, graph, v, &labels, &mut buf);
                let row = FeatureRow {
                    attributes: graph.attributes_of(NodeId::new(v)),
                    num_attributes: nf,
                    relational: &buf,
                };
                let p = &mut probs[v * k..(v + 1) * k];
                relational.predict_proba(&row, p);
                let c = argmax(p) as u32;
                if labels[v] != Some(c) {
                    changed += 1;
                    labels[v] = Some(c);
                }
            }
            conv.iterations += 1;
            conv.max_residual = changed as f64 / unknown.len() as f64;
            conv.converged = changed == 0;
        }
        CollectiveResult {
            labels: labels.iter().map(|l| l.unwrap_or(0)).collect(),
            probabilities: probs,
            num_classes: k,
            convergence: conv,
        }
    }
}

/// Collective Gibbs sampling for classification (GS; slides "The mechanics of GS for CC";
/// Sen et al. 2008, Algorithm 2; Macskassy & Provost 2007).
///
/// Training and bootstrap as [`IterativeClassification`]; then each sweep visits the
/// unknown nodes in `ordering` and *samples* a label from the local classifier's
/// conditional given the current neighbour labels. The first `burn_in` sweeps are
/// discarded, the next `samples` are counted; marginals are the label frequencies and the
/// predicted label is the most frequent one.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `burn_in` | 200 | sweeps discarded (slides) | `≥ 0` |
/// | `samples` | 800 | sweeps counted (slides) | `≥ 1` |
/// | `aggregator` | `Count` | neighbour-label aggregation | |
/// | `ordering` | `Random` | node visiting order | |
/// | `bootstrap` | `KnownNeighbours` | initial labels | |
/// | `split_tol` | 0.05 | split-half diagnostic threshold | `≥ 0` |
///
/// `Convergence`: `iterations` = sweeps, `max_residual` = largest difference between the
/// first-half and second-half label frequencies, `converged = max_residual <= split_tol`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectiveGibbs {
    /// Sweeps discarded.
    pub burn_in: usize,
    /// Sweeps counted.
    pub samples: usize,
    /// Aggregation of neighbour labels.
    pub aggregator: Aggregator,
    /// Visiting order.
    pub ordering: NodeOrdering,
    /// Bootstrap method.
    pub bootstrap: Bootstrap,
    /// Split-half diagnostic threshold.
    pub split_tol: f64,
}

impl Default for CollectiveGibbs {
    fn default() -> Self {
        Self {
            burn_in: 200,
            samples: 800,
            aggregator: Aggregator::Count,
            ordering: NodeOrdering::Random,
            bootstrap: Bootstrap::KnownNeighbours,
            split_tol: 0.05,
        }
    }
}

impl CollectiveGibbs {
    /// Runs collective Gibbs sampling (arguments as [`IterativeClassification::run`]).
    ///
    /// # Errors
    /// As [`IterativeClassification::run`], plus [`InferError::InvalidParameter`] if
    /// `samples == 0`.
    pub fn run<C: LocalClassifier + Clone, R: Rng + ?Sized>(
        &self,
        graph: &RelationalGraph,
        prototype: &C,
        weights: Option<&[f64]>,
        rng: &mut R,
    ) -> Result<CollectiveResult, InferError> {
        self.check()?;
        let prepared = prepare(graph, prototype, self.aggregator, self.bootstrap, weights)?;
        Ok(self.sample(graph, prepared, rng))
    }

    /// Runs collective Gibbs sampling with a relational classifier already trained by
    /// [`fit_relational_classifier`] on this `graph` with this `aggregator` (no sample
    /// weights); see [`IterativeClassification::run_fitted`].
    ///
    /// # Errors
    /// As [`CollectiveGibbs::run`].
    pub fn run_fitted<C: LocalClassifier + Clone, R: Rng + ?Sized>(
        &self,
        graph: &RelationalGraph,
        fitted: &C,
        rng: &mut R,
    ) -> Result<CollectiveResult, InferError> {
        self.check()?;
        let prepared = bootstrap_with(
            graph,
            fitted.clone(),
            fitted,
            self.aggregator,
            self.bootstrap,
            None,
        )?;
        Ok(self.sample(graph, prepared, rng))
    }

    fn check(&self) -> Result<(), InferError> {
        if self.samples == 0 {
            return Err(InferError::InvalidParameter {
                name: "samples",
                value: "0".into(),
                reason: "must be at least 1",
            });
        }
        Ok(())
    }

    /// The sweeps, from a bootstrapped state.
    fn sample<C: LocalClassifier, R: Rng + ?Sized>(
        &self,
        graph: &RelationalGraph,
        prepared: Prepared<C>,
        rng: &mut R,
    ) -> CollectiveResult {
        let Prepared {
            k,
            mut unknown,
            relational,
            mut labels,
            mut probs,
        } = prepared;
        let n = graph.num_nodes();
        let nf = graph.num_features();
        let mut buf = vec![0.0; k];
        let mut p = vec![0.0; k];
        let mut counts = vec![0u32; n * k];
        let mut first = vec![0u32; n * k];
        let half = self.samples / 2;
        let total = self.burn_in + self.samples;
        for sweep in 1..=total {
            order(self.ordering, &mut unknown, rng);
            for &v in &unknown {
                aggregate_neighbors(self.aggregator, graph, v, &labels, &mut buf);
                let row = FeatureRow {
                    attributes: graph.attributes_of(NodeId::new(v)),
                    num_attributes: nf,
                    relational: &buf,
                };
                relational.predict_proba(&row, &mut p);
                let total_p: f64 = p.iter().sum();
                let mut u = rng.random::<f64>() * total_p;
                let mut c = argmax(&p);
                for (i, &q) in p.iter().enumerate() {
                    if u < q {
                        c = i;
                        break;
                    }
                    u -= q;
                }
                labels[v] = Some(c as u32);
            }
            if sweep > self.burn_in {
                for &v in &unknown {
                    if let Some(c) = labels[v] {
                        counts[v * k + c as usize] += 1;
                    }
                }
                if sweep - self.burn_in == half {
                    first.copy_from_slice(&counts);
                }
            }
        }
        let ns = self.samples as f64;
        let mut max_residual: f64 = 0.0;
        for &v in &unknown {
            let row = &mut probs[v * k..(v + 1) * k];
            for c in 0..k {
                let all = counts[v * k + c];
                row[c] = f64::from(all) / ns;
                if half > 0 {
                    let f1 = f64::from(first[v * k + c]) / half as f64;
                    let f2 = f64::from(all - first[v * k + c]) / (self.samples - half) as f64;
                    max_residual = max_residual.max((f1 - f2).abs());
                }
            }
            labels[v] = Some(argmax(row) as u32);
        }
        if half == 0 && !unknown.is_empty() {
            max_residual = f64::INFINITY;
        }
        CollectiveResult {
            labels: labels.iter().map(|l| l.unwrap_or(0)).collect(),
            probabilities: probs,
            num_classes: k,
            convergence: Convergence {
                converged: max_residual <= self.split_tol,
                iterations: total,
                max_residual,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use srl_graph::{Attributes, Directedness, LabelSet};

    /// A minimal classifier: class frequencies times `1 + 2 · (neighbour count)`.
    #[derive(Clone, Debug, Default)]
    struct Votes {
        prior: Vec<f64>,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("no rows")]
    struct NoRows;

    impl LocalClassifier for Votes {
        type Error = NoRows;
        fn fit(
            &mut self,
            rows: &[FeatureRow<'_>],
            labels: &[u32],
            _: Option<&[f64]>,
            k: usize,
        ) -> Result<(), NoRows> {
            if rows.is_empty() {
                return Err(NoRows);
            }
            self.prior = vec![1.0; k];
            labels.iter().for_each(|&c| self.prior[c as usize] += 1.0);
            Ok(())
        }
        fn predict_proba(&self, row: &FeatureRow<'_>, out: &mut [f64]) {
            for (c, o) in out.iter_mut().enumerate() {
                *o = self.prior[c] * (1.0 + 2.0 * row.relational.get(c).copied().unwrap_or(0.0));
            }
            let z: f64 = out.iter().sum();
            out.iter_mut().for_each(|o| *o /= z);
        }
    }

    #[test]
    fn run_fitted_equals_run() {
        use rand::SeedableRng as _;
        let n = |i| NodeId::new(i);
        let edges = (0..11).map(|i| (n(i), n(i + 1))).collect();
        let labels = (0..12)
            .map(|i| (i % 3 == 0).then_some((i / 6) as u32))
            .collect();
        let g = RelationalGraph::new(
            Vec::new(),
            Attributes::none(12),
            labels,
            LabelSet::numbered(2),
            edges,
            Directedness::Undirected,
        )
        .unwrap();
        let fitted =
            fit_relational_classifier(&g, &Votes::default(), Aggregator::Count, None).unwrap();
        let rng = || rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let ica = IterativeClassification::default();
        let a = ica.run(&g, &Votes::default(), None, &mut rng()).unwrap();
        let b = ica.run_fitted(&g, &fitted, &mut rng()).unwrap();
        assert_eq!(a, b);
        let gs = CollectiveGibbs {
            burn_in: 5,
            samples: 20,
            ..CollectiveGibbs::default()
        };
        let a = gs.run(&g, &Votes::default(), None, &mut rng()).unwrap();
        let b = gs.run_fitted(&g, &fitted, &mut rng()).unwrap();
        assert_eq!(a, b);
        assert!(
            CollectiveGibbs { samples: 0, ..gs }
                .run_fitted(&g, &fitted, &mut rng())
                .is_err()
        );
    }

    #[test]
    fn content_only_is_the_content_bootstrap_without_iterations() {
        use rand::SeedableRng as _;
        let n = |i| NodeId::new(i);
        let g = RelationalGraph::new(
            Vec::new(),
            Attributes::none(8),
            (0..8)
                .map(|i| (i % 2 == 0).then_some((i / 4) as u32))
                .collect(),
            LabelSet::numbered(2),
            (0..7).map(|i| (n(i), n(i + 1))).collect(),
            Directedness::Undirected,
        )
        .unwrap();
        let co = ContentOnly.run(&g, &Votes::default(), None).unwrap();
        let ica = IterativeClassification {
            max_iters: 0,
            bootstrap: Bootstrap::ContentOnly,
            ..IterativeClassification::default()
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let via_ica = ica.run(&g, &Votes::default(), None, &mut rng).unwrap();
        assert_eq!(co.labels, via_ica.labels);
        assert_eq!(co.probabilities, via_ica.probabilities);
        assert!(co.convergence.converged);
        // observed nodes keep their labels
        for v in (0..8).step_by(2) {
            assert_eq!(Some(co.label(n(v))), g.label(n(v)));
        }
        let held_out = HoldOut::new(
            &g,
            srl_graph::Split::from_test_mask((0..8).map(|i| i % 4 == 0).collect()),
        )
        .unwrap();
        let acc = co.accuracy_on(&held_out).unwrap().unwrap();
        assert!((0.0..=1.0).contains(&acc));
    }

    #[test]
    fn aggregators() {
        let n = |i| NodeId::new(i);
        let g = RelationalGraph::new(
            Vec::new(),
            Attributes::none(5),
            vec![None; 5],
            LabelSet::numbered(3),
            vec![(n(0), n(1)), (n(0), n(2)), (n(0), n(3)), (n(0), n(4))],
            Directedness::Undirected,
        )
        .unwrap();
        let labels = [None, Some(2), Some(0), Some(2), None];
        let mut out = [0.0; 3];
        aggregate_neighbors(Aggregator::Count, &g, 0, &labels, &mut out);
        assert_eq!(out, [1.0, 0.0, 2.0]);
        aggregate_neighbors(Aggregator::Proportion, &g, 0, &labels, &mut out);
        assert_eq!(out, [1.0 / 3.0, 0.0, 2.0 / 3.0]);
        aggregate_neighbors(Aggregator::Exists, &g, 0, &labels, &mut out);
        assert_eq!(out, [1.0, 0.0, 1.0]);
        aggregate_neighbors(Aggregator::Mode, &g, 0, &labels, &mut out);
        assert_eq!(out, [0.0, 0.0, 1.0]);
        aggregate_neighbors(Aggregator::Mode, &g, 4, &labels, &mut out);
        assert_eq!(out, [0.0, 0.0, 0.0]);
        aggregate_neighbors(Aggregator::Proportion, &g, 1, &labels, &mut out);
        assert_eq!(out, [0.0, 0.0, 0.0]);
    }
}
