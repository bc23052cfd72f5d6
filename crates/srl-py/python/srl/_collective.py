"""Collective classification over (X, edges, observed mask): LINQS loading and the
scikit-learn-style transductive estimators. Parameters and array conversion live here;
every method runs in Rust through ``srl._srl`` on srl-learn's collective-classification
pipeline (``srl_learn::collective``), the one ``srl classify`` and ``cargo xtask
reproduce collective-classification`` run: the same method names (CO, ICA, GS, LBP, MF
x NB, MNB, LR; the graph learners LP, MLP, GCN, APPNP, CS-MLP, CS-LR), the same defaults
(LR prior tuned per fit by inner cross-validation on the observed nodes, the Markov
network trained by pseudo-likelihood, the graph learners' hyperparameters read from the
library by ``_srl._collective_defaults()``) and the same random streams
(``random_state=S`` gives ``srl classify --train-mask M --seed S``'s numbers)."""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Optional, Tuple

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]

from . import _srl


def load_linqs(path, name: Optional[str] = None, directed: bool = False,
               return_names: bool = False):
    """Read a LINQS data set (``NAME.content`` and ``NAME.cites``, plain or ``.gz``).

    Parameters
    ----------
    path : str or os.PathLike
        The folder holding the two files, or the ``.content`` file itself.
    name : str, optional
        The file stem (default: the folder's name, e.g. ``cora``).
    directed : bool
        Keep citations as directed edges (citing -> cited); default undirected, merged.
    return_names : bool
        Also return the label names (index = class) and the node ids.

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n, d), float64 -- the word features.
    y : numpy.ndarray, shape (n,), int64 -- class indices (labels sorted by name).
    edges : numpy.ndarray, shape (m, 2), int64 -- node index pairs (0-based).
    label_names, node_ids : list of str -- only with ``return_names=True``.

    Raises
    ------
    OSError (FileNotFoundError) for a missing file; srl.ParseError (a ValueError) with
    file and line for a malformed line.
    """
    path = os.fspath(path)
    base = os.path.basename(path)
    if base.endswith(".content") or base.endswith(".content.gz"):
        name = name or base.split(".content")[0]
        path = os.path.dirname(path) or "."
    if name is None:
        name = os.path.basename(os.path.normpath(path))
    indptr, indices, data, shape, y, edges, labels, nodes = _srl._load_linqs(
        path, name, directed)
    X = sp.csr_matrix((data, indices, indptr), shape=shape)
    if return_names:
        return X, y, edges, labels, nodes
    return X, y, edges


def _as_csr(X) -> sp.csr_matrix:
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X: expected a 2-dimensional array, got shape {X.shape}")
        X = sp.csr_matrix(X)
    X = X.copy()
    X.sum_duplicates()
    X.sort_indices()
    X.eliminate_zeros()
    return X


class _CollectiveEstimator:
    """Shared machinery: parameters, fit, results."""

    _method = ""
    _params: Tuple[str, ...] = ()

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor arguments as a dict (scikit-learn's ``get_params``)."""
        return {k: getattr(self, k) for k in self._params}

    def set_params(self, **params):
        """Set constructor arguments by name; returns ``self``. Raises ValueError for
        an unknown name."""
        for k, v in params.items():
            if k not in self._params:
                raise ValueError(f"invalid parameter {k!r}; valid parameters: "
                                 + ", ".join(self._params))
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._params)
        return f"srl.{type(self).__name__}({args})"

    def fit(self, X, y, edges=None, observed=None, directed: bool = False, *,
            graph: Optional["Graph"] = None, validation=None):
        """Run the method on the graph and keep its labelling (transductive).

        Two ways to give the graph:

        * ``fit(X, y, edges, observed=None)``: ``X`` holds every node's attributes;
        * ``fit(nodes, y, graph=srl.Graph(X, edges))``: ``nodes`` are the indices of the
          observed nodes (shape (m,) or (m, 1)) and ``y`` their labels; every other node
          of the graph is predicted. This is the form scikit-learn's ``cross_val_score``
          / ``GridSearchCV`` use with :class:`srl.NodeSplitter` and
          ``params={"graph": graph}`` (the graph is not an array, so scikit-learn passes
          it whole instead of slicing it by the fold).

        Parameters
        ----------
        X : array or scipy.sparse matrix, shape (n, d) -- node attributes.
        y : array, shape (n,), int -- class indices 0..k-1; -1 marks a node whose label
            is unknown.
        edges : array, shape (m, 2), int -- node index pairs (0-based); self-loops and
            duplicates are dropped.
        observed : array of bool, shape (n,), optional -- the nodes whose label is
            visible to the method (default: ``y >= 0``). The others are predicted.
        directed : bool -- treat ``edges`` as directed (neighbours are still taken in
            both directions).
        validation : array of bool, shape (n,), optional -- the neural methods' (MLP,
            GCN, APPNP, CorrectAndSmooth with ``base="mlp"``) early-stopping nodes: a
            subset of the observed nodes whose labels are hidden from training (not in
            the training loss, not propagated by C&S) and only score each epoch; the
            epoch with the lowest validation loss is kept. The other observed nodes are
            the training nodes, and ``validation_fraction`` is unused. Default ``None``:
            hold out ``validation_fraction`` of the observed nodes at random. Pass it
            when labels are few (Shchur et al. 2018: 20 training and 30 validation nodes
            per class): a random 10 % hold-out of 140 observed nodes can stop the
            training at epoch ~11 with a collapsed network (srl and PyTorch Geometric
            alike). Validation nodes keep their label in ``transduction_``, as observed
            nodes do. The other estimators refuse it (ValueError): they do not stop
            early, and the nodes would only hide labels from them. In the
            ``graph=`` form it is a mask over the graph's nodes. The same split as
            ``srl classify --train-mask M --validation-mask V``: the observed nodes are
            M and V.

        Sets ``transduction_`` (n,) int64, ``label_distributions_`` (n, k) float64,
        ``convergence_`` (srl.Convergence), ``classes_`` (k,) and returns ``self``.

        Raises ValueError for mismatched shapes, labels outside 0..k-1, edges naming
        missing nodes, no observed node, or a failing local classifier; for a
        ``validation`` that is not a boolean mask of n entries, selects no node or a
        node that is not observed, leaves no training node, or is given to an estimator
        that does not stop early.
        """
        if graph is not None:
            nodes = np.asarray(X, dtype=np.int64).ravel()
            labels = np.asarray(y, dtype=np.int64).ravel()
            if nodes.shape != labels.shape:
                raise ValueError(f"{nodes.shape[0]} nodes but {labels.shape[0]} labels")
            n_all = graph.X.shape[0]
            if nodes.size and (nodes.min() < 0 or nodes.max() >= n_all):
                raise ValueError(f"node indices must be in 0..{n_all}")
            full = np.full(n_all, -1, dtype=np.int64)
            full[nodes] = labels
            self.n_features_in_ = graph.X.shape[1]
            return self.fit(graph.X, full, graph.edges, None, graph.directed,
                            validation=validation)
        if edges is None:
            raise ValueError("give edges (or graph=srl.Graph(X, edges) with node indices as X)")
        X = _as_csr(X)
        y = np.asarray(y, dtype=np.int64).ravel()
        n = X.shape[0]
        if y.shape[0] != n:
            raise ValueError(f"X has {n} rows, y has {y.shape[0]} entries")
        if observed is None:
            observed = y >= 0
        observed = np.asarray(observed, dtype=bool).ravel()
        if observed.shape[0] != n:
            raise ValueError(f"observed: expected {n} entries, found {observed.shape[0]}")
        if (y[observed] < 0).any():
            raise ValueError("observed nodes need a label (y >= 0)")
        val_nodes = None
        if validation is not None:
            val_nodes = _validation_nodes(validation, observed)
        edges = np.ascontiguousarray(edges, dtype=np.int64)
        if edges.size == 0:
            edges = edges.reshape(0, 2)
        if edges.ndim != 2 or edges.shape[1] != 2:
            raise ValueError(f"edges: expected shape (m, 2), got {edges.shape}")
        n_classes = getattr(self, "n_classes", None)
        k = n_classes if n_classes else int(y.max(initial=-1)) + 1
        if k < 1:
            raise ValueError("no labels: y has no entry >= 0 and n_classes is not given")
        hidden_y = np.where(observed, y, -1).astype(np.int64)
        options = {k_: getattr(self, k_) for k_ in self._params}
        _warn_renamed(options)
        labels, probs, conv = _srl._run_collective(
            self._method,
            np.ascontiguousarray(X.indptr, dtype=np.int64),
            np.ascontiguousarray(X.indices, dtype=np.int64),
            np.ascontiguousarray(X.data, dtype=np.float64),
            X.shape[1], hidden_y, k, edges, bool(directed), options, val_nodes)
        self.transduction_ = labels
        self.label_distributions_ = probs
        self.convergence_ = conv
        self.classes_ = np.arange(k)
        return self

    def _check(self):
        if not hasattr(self, "transduction_"):
            raise _srl.NotFittedError(
                f"this {type(self).__name__} is not fitted yet: call fit(X, y, edges, observed)")

    def predict(self, nodes=None):
        """The label of every node, shape (n,), int64 (observed nodes keep theirs); with
        ``nodes`` (indices, shape (m,) or (m, 1)) only theirs, shape (m,)."""
        self._check()
        if nodes is None:
            return self.transduction_
        return self.transduction_[np.asarray(nodes, dtype=np.int64).ravel()]

    def predict_proba(self, nodes=None):
        """Class probabilities of every node, shape (n, k), float64 (observed nodes: a
        point mass on their label); with ``nodes`` only theirs, shape (m, k)."""
        self._check()
        if nodes is None:
            return self.label_distributions_
        return self.label_distributions_[np.asarray(nodes, dtype=np.int64).ravel()]

    def score(self, nodes, y) -> float:
        """Accuracy of ``predict(nodes)`` against ``y`` (scikit-learn's classifier
        ``score``: with :class:`srl.NodeSplitter`, the fold's held-out nodes)."""
        y = np.asarray(y, dtype=np.int64).ravel()
        pred = self.predict(nodes)
        if pred.shape != y.shape:
            raise ValueError(f"{pred.shape[0]} nodes but {y.shape[0]} labels")
        return float((pred == y).mean())

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "transduction_")

    def __sklearn_tags__(self):
        """scikit-learn's tags, imported lazily: a classifier of graph nodes."""
        from sklearn.utils import (  # type: ignore[import-untyped]
            ClassifierTags,
            InputTags,
            Tags,
            TargetTags,
        )

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            transformer_tags=None,
            regressor_tags=None,
            classifier_tags=ClassifierTags(),
            input_tags=InputTags(),
        )

    def fit_predict(self, X, y, edges=None, observed=None, directed: bool = False, *,
                    validation=None):
        """``fit(...)`` then ``predict()``."""
        return self.fit(X, y, edges, observed, directed, validation=validation).predict()


class Graph:
    """A graph for the collective estimators' ``fit(nodes, y, graph=...)`` form: ``X``
    (n, d) node attributes (array or scipy.sparse), ``edges`` (m, 2) node index pairs,
    ``directed``. Not an array, so scikit-learn's cross-validation passes it whole."""

    def __init__(self, X, edges, directed: bool = False):
        self.X = _as_csr(X)
        edges = np.ascontiguousarray(edges, dtype=np.int64)
        self.edges = edges.reshape(0, 2) if edges.size == 0 else edges
        self.directed = bool(directed)

    def __repr__(self) -> str:
        return f"srl.Graph({self.X.shape[0]} nodes, {self.X.shape[1]} features, {len(self.edges)} edges)"


class NodeSplitter:
    """Cross-validation over the nodes of a graph with the protocols of Sen et al. 2008,
    drawn by srl-learn's pipeline (the folds ``srl classify --folds K --sampling ...
    --seed S`` uses):

    * ``sampling="random"`` (RS): ``n_splits`` random folds, every node tested once;
    * ``sampling="snowball"`` (SS): ``n_splits`` class-stratified snowball samples of
      ``n / n_splits`` nodes (samples may overlap); needs ``edges`` and the labels ``y``.

    ``split(X, y=None, groups=None)`` yields ``(train, test)`` index arrays over the
    rows of ``X`` (the nodes), as scikit-learn's splitters do.
    """

    def __init__(self, n_splits: int = 10, sampling: str = "random", random_state: int = 0,
                 edges=None):
        self.n_splits = n_splits
        self.sampling = sampling
        self.random_state = random_state
        self.edges = edges

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """The number of folds, ``n_splits`` (scikit-learn's splitter protocol; the
        arguments are ignored)."""
        return self.n_splits

    def split(self, X, y=None, groups=None):
        """Yields ``(train, test)`` index arrays, one pair per fold.

        Parameters
        ----------
        X : sequence, shape (n,) or (n, 1) -- the graph's nodes (only its length is used).
        y : array, shape (n,), int -- labels (needed by snowball sampling).
        groups : ignored.

        Yields
        ------
        train, test : ndarray of int64 -- positions in ``X``; the test sets are the
            pipeline's random (RS) or snowball (SS) samples, as ``srl classify --folds``.

        Raises
        ------
        ValueError for snowball sampling without ``edges`` or ``y``, or an unknown
        sampling.
        """
        n = len(X)
        if self.sampling == "snowball" and (self.edges is None or y is None):
            raise ValueError("snowball sampling needs edges (NodeSplitter(edges=...)) and y")
        labels = (np.asarray(y, dtype=np.int64).ravel() if y is not None
                  else np.full(n, -1, dtype=np.int64))
        k = int(labels.max(initial=-1)) + 1
        edges = (np.ascontiguousarray(self.edges, dtype=np.int64).reshape(-1, 2)
                 if self.edges is not None else np.zeros((0, 2), dtype=np.int64))
        if isinstance(self.random_state, bool) or not isinstance(self.random_state, int) \
                or self.random_state < 0:
            raise ValueError(f"random_state = {self.random_state!r}: expected an int >= 0")
        tests = _srl._node_test_sets(self.sampling, int(self.n_splits), self.random_state,
                                     labels, max(k, 1), edges)
        for test in tests:
            mask = np.ones(n, dtype=bool)
            mask[test] = False
            yield np.flatnonzero(mask), np.asarray(test, dtype=np.int64)


def _validation_nodes(validation, observed: np.ndarray) -> np.ndarray:
    """The indices of a ``validation`` mask (bool, shape (n,), a subset of ``observed``);
    ValueError naming the offending value otherwise."""
    v = np.asarray(validation)
    n = observed.shape[0]
    if v.dtype != np.bool_:
        raise ValueError(f"validation: expected a boolean mask of {n} entries (as observed), "
                         f"got dtype {v.dtype}")
    v = v.ravel()
    if v.shape[0] != n:
        raise ValueError(f"validation: expected {n} entries, found {v.shape[0]}")
    nodes = np.flatnonzero(v).astype(np.int64)
    if nodes.size == 0:
        raise ValueError("validation: no node selected (pass validation=None to hold out "
                         "validation_fraction of the observed nodes instead)")
    hidden = nodes[~observed[nodes]]
    if hidden.size:
        raise ValueError(f"validation node {int(hidden[0])} is not observed: validation "
                         "nodes are observed nodes (with a label) held out of training")
    return nodes


def _warn_renamed(options: Dict[str, Any]) -> None:
    """Tell users of spellings whose meaning or name changed (issue 26's one vocabulary)."""
    if options.get("local") == "nb":
        warnings.warn(
            'local="nb" is the naive Bayes of the paper\'s NB rows (Bernoulli words, a '
            "Gaussian per neighbour-label count); the multinomial naive Bayes it named in "
            'earlier versions is local="mnb"', FutureWarning, stacklevel=3)
    if options.get("inference") == "mean_field":
        warnings.warn('inference="mean_field" is deprecated: use inference="mf"',
                      DeprecationWarning, stacklevel=3)


_LOCAL_DOC = """``local`` -- "lr" (LR: L2-regularised logistic regression, srl-learn), "nb"
    (NB: Bernoulli words and a Gaussian per neighbour-label count, srl-bayes, the paper's
    NB rows) or "mnb" (MNB: multinomial naive Bayes, srl-bayes); ``lr_lambda`` -- the LR
    prior per training node, lambda = lr_lambda x (observed nodes); ``None`` (default)
    chooses it from {0.001, 0.003, 0.01, 0.03} by 2-fold cross-validation on the observed
    nodes, as the experiment does"""


class ContentOnly(_CollectiveEstimator):
    """Content-only baseline (CO; Sen et al. 2008): the local classifier fitted on the
    observed nodes' attributes labels every other node from its attributes alone.

    Parameters: ``local``, ``lr_lambda`` (below); ``n_classes`` -- k (default:
    ``max(y) + 1``).
    """

    _method = "content_only"
    _params = ("local", "lr_lambda", "n_classes")

    def __init__(self, local: str = "lr", lr_lambda: Optional[float] = None,
                 n_classes: Optional[int] = None):
        self.local = local
        self.lr_lambda = lr_lambda
        self.n_classes = n_classes


class ICA(_CollectiveEstimator):
    """Iterative classification (Sen et al. 2008, Algorithm 1): a local classifier over
    attributes plus aggregated neighbour labels, re-applied to the unknown nodes until
    their labels stop changing or ``max_iters`` iterations.

    Parameters: ``local`` ("lr" | "nb" | "mnb") and ``lr_lambda`` (below);
    ``aggregator`` ("count" | "proportion" | "exists" | "mode"); ``max_iters`` (100);
    ``ordering`` ("random" | "fixed"); ``bootstrap`` ("known_neighbours" |
    "content_only"); ``random_state`` (seed of the orderings and the LR tuning folds);
    ``n_classes``.
    """

    _method = "ica"
    _params = ("local", "lr_lambda", "aggregator", "max_iters", "ordering", "bootstrap",
               "random_state", "n_classes")

    def __init__(self, local: str = "lr", lr_lambda: Optional[float] = None,
                 aggregator: str = "count", max_iters: int = 100,
                 ordering: str = "random", bootstrap: str = "known_neighbours",
                 random_state: int = 0, n_classes: Optional[int] = None):
        self.local = local
        self.lr_lambda = lr_lambda
        self.aggregator = aggregator
        self.max_iters = max_iters
        self.ordering = ordering
        self.bootstrap = bootstrap
        self.random_state = random_state
        self.n_classes = n_classes


class CollectiveGibbs(_CollectiveEstimator):
    """Collective Gibbs sampling (Sen et al. 2008, Algorithm 2): the ICA local model
    sampled instead of maximised; ``label_distributions_`` are label frequencies over
    ``samples`` sweeps after ``burn_in``.

    Parameters: as :class:`ICA` with ``burn_in`` (200) and ``samples`` (800) instead
    of ``max_iters``.
    """

    _method = "gibbs"
    _params = ("local", "lr_lambda", "aggregator", "burn_in", "samples", "ordering",
               "bootstrap", "random_state", "n_classes")

    def __init__(self, local: str = "lr", lr_lambda: Optional[float] = None,
                 aggregator: str = "count", burn_in: int = 200,
                 samples: int = 800, ordering: str = "random",
                 bootstrap: str = "known_neighbours", random_state: int = 0,
                 n_classes: Optional[int] = None):
        self.local = local
        self.lr_lambda = lr_lambda
        self.aggregator = aggregator
        self.burn_in = burn_in
        self.samples = samples
        self.ordering = ordering
        self.bootstrap = bootstrap
        self.random_state = random_state
        self.n_classes = n_classes


class MarkovNetwork(_CollectiveEstimator):
    """A global method (LBP or MF; Sen et al. 2008): a relational Markov network (node
    features x class, one symmetric class x class edge table, srl-learn's
    ``RelationalMarkovNetwork``) trained on the observed nodes by maximum
    pseudo-likelihood, then queried for the rest with loopy BP or mean field and the
    observed labels clamped, as ``srl classify --method lbp|mf`` and the experiment do.

    Parameters: ``inference`` ("lbp" | "mf"; "mean_field" is accepted with a
    DeprecationWarning); ``max_iters`` (default 1000, a safety cap) and ``tol`` (1e-6)
    of that inference; ``random_state``; ``n_classes``. ``convergence_`` says whether
    the inference converged.
    """

    _method = "markov_network"
    _params = ("inference", "max_iters", "tol", "random_state", "n_classes")

    def __init__(self, inference: str = "lbp", max_iters: int = 1000, tol: float = 1e-6,
                 random_state: int = 0, n_classes: Optional[int] = None):
        self.inference = inference
        self.max_iters = max_iters
        self.tol = tol
        self.random_state = random_state
        self.n_classes = n_classes


for _cls in (ContentOnly, ICA, CollectiveGibbs):
    _cls.__doc__ = (_cls.__doc__ or "") + "\n    " + _LOCAL_DOC + ".\n"


# The graph learners (issue 32). Their defaults are the pipeline's
# (``CollectiveSettings::default()`` in srl-learn, the settings of ``srl classify`` and the
# experiment), read once from the extension module rather than restated here.
_DEFAULTS: Dict[str, Dict[str, Any]] = _srl._collective_defaults()
_LP = _DEFAULTS["lp"]
_CS = _DEFAULTS["cs"]
_MLP = _DEFAULTS["mlp"]
_GCN = _DEFAULTS["gcn"]
_APPNP = _DEFAULTS["appnp"]

_NEURAL_PARAMS = ("hidden", "dropout", "learning_rate", "weight_decay", "max_epochs",
                  "patience", "precision", "validation_fraction")

_NEURAL_DOC = """Training (srl-learn's ``neural`` module on candle, full-batch Adam on the
    CPU; ``label_distributions_`` are the softmax outputs of the epoch with the lowest
    validation loss): ``hidden`` -- hidden units (int >= 1); ``dropout`` -- in [0, 1),
    on the input features and the hidden layer; ``learning_rate`` -- Adam's step (> 0);
    ``weight_decay`` -- L2 penalty on the first layer (>= 0); ``max_epochs`` (>= 1) and
    ``patience`` (>= 1) -- early stopping on the validation loss; ``precision`` --
    "f32" (default, as the papers train) or "f64"; ``validation_fraction`` -- in (0, 1),
    the share of the observed nodes held out (from the seed's stream) as the
    early-stopping set unless ``fit(..., validation=mask)`` names it (do so with few
    labels: 20 per class observed and 30 per class as validation, as Shchur et al. 2018;
    a random 10 % hold-out of 140 nodes can stop at epoch ~11 and collapse, in srl and
    PyTorch Geometric alike); ``random_state`` -- the seed (int >= 0) of the initialisation,
    the dropout masks and that hold-out: the same seed gives the same numbers bit for
    bit; ``n_classes`` -- k (default ``max(y) + 1``). ``convergence_``: ``iterations`` =
    epochs run, ``converged`` = early stopping ended the training, ``max_residual`` = the
    best validation loss. Defaults are the library's (``srl classify`` and the
    experiment use the same). Raises ValueError naming the parameter for a value of the
    wrong type or out of range, and for NaN / infinite attributes; the neural methods
    need at least two observed nodes (one is held out for validation)."""


class LabelPropagation(_CollectiveEstimator):
    """Label propagation (LP; Zhou, Bousquet, Lal, Weston & Schölkopf 2004, "Learning
    with local and global consistency", NIPS 16), as ``srl classify --method lp``: the
    observed labels (one-hot, (n, k)) spread over the symmetrically normalised adjacency
    ``S = D^-1/2 A D^-1/2`` by ``F <- alpha S F + (1 - alpha) Y`` until the largest change
    is below ``tol`` or ``max_iters`` iterations; with ``clamp`` the observed nodes are
    reset to their labels after every step. Uses the graph only (``X`` is checked, not
    used). ``label_distributions_`` are the rows of ``F`` normalised to sum to 1 (a node
    no label reaches gets the uniform distribution). Deterministic: no seed.

    Parameters: ``alpha`` -- in (0, 1); ``tol`` -- > 0; ``max_iters`` -- >= 1;
    ``clamp`` -- bool; ``n_classes``. Defaults are the library's. Raises ValueError
    naming the parameter for a value of the wrong type or out of range.
    """

    _method = "lp"
    _params = ("alpha", "tol", "max_iters", "clamp", "n_classes")

    def __init__(self, alpha: float = _LP["alpha"], tol: float = _LP["tol"],
                 max_iters: int = _LP["max_iters"], clamp: bool = _LP["clamp"],
                 n_classes: Optional[int] = None):
        self.alpha = alpha
        self.tol = tol
        self.max_iters = max_iters
        self.clamp = clamp
        self.n_classes = n_classes


class MLP(_CollectiveEstimator):
    """A two-layer perceptron on the row-normalised attributes (the graph learners'
    neural content-only baseline; the ``MLP`` row of the experiment, ``srl classify
    --method mlp``): ``Z = drop(ReLU(drop(X) W1 + b1)) W2 + b2``, trained on the observed
    nodes. The edges are not used. Not scikit-learn's ``MLPClassifier``: it follows the
    transductive ``fit(X, y, edges, observed)`` contract of the estimators here.

    """

    _method = "mlp"
    _params = _NEURAL_PARAMS + ("random_state", "n_classes")

    def __init__(self, hidden: int = _MLP["hidden"], dropout: float = _MLP["dropout"],
                 learning_rate: float = _MLP["learning_rate"],
                 weight_decay: float = _MLP["weight_decay"],
                 max_epochs: int = _MLP["max_epochs"], patience: int = _MLP["patience"],
                 precision: str = _MLP["precision"],
                 validation_fraction: float = _MLP["validation_fraction"],
                 random_state: int = 0, n_classes: Optional[int] = None):
        self.hidden = hidden
        self.dropout = dropout
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.max_epochs = max_epochs
        self.patience = patience
        self.precision = precision
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.n_classes = n_classes


class GCN(_CollectiveEstimator):
    """Graph convolutional network (Kipf & Welling 2017, "Semi-supervised classification
    with graph convolutional networks", ICLR, Eq. 9), as ``srl classify --method gcn``:
    ``Z = A' drop(ReLU(A' drop(X) W1 + b1)) W2 + b2`` with ``A' = D~^-1/2 (A + I)
    D~^-1/2`` over the row-normalised attributes, trained on the observed nodes. Default
    hyperparameters: the paper's (16 hidden units, dropout 0.5, learning rate 0.01,
    weight decay 5e-4, 200 epochs, patience 10), as the library sets them.

    """

    _method = "gcn"
    _params = _NEURAL_PARAMS + ("random_state", "n_classes")

    def __init__(self, hidden: int = _GCN["hidden"], dropout: float = _GCN["dropout"],
                 learning_rate: float = _GCN["learning_rate"],
                 weight_decay: float = _GCN["weight_decay"],
                 max_epochs: int = _GCN["max_epochs"], patience: int = _GCN["patience"],
                 precision: str = _GCN["precision"],
                 validation_fraction: float = _GCN["validation_fraction"],
                 random_state: int = 0, n_classes: Optional[int] = None):
        self.hidden = hidden
        self.dropout = dropout
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.max_epochs = max_epochs
        self.patience = patience
        self.precision = precision
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.n_classes = n_classes


class APPNP(_CollectiveEstimator):
    """APPNP (Klicpera, Bojchevski & Günnemann 2019, "Predict then propagate: graph
    neural networks meet personalized PageRank", ICLR, Eq. 3-4), as ``srl classify
    --method appnp``: the MLP's scores ``H``, then ``steps`` steps of ``Z <- (1 - alpha)
    A' Z + alpha H`` (``A'`` as in :class:`GCN`), trained end to end through the
    propagation.

    Parameters beyond the training ones below: ``steps`` -- propagation steps K (int >=
    0); ``alpha`` -- teleport probability in (0, 1].
    """

    _method = "appnp"
    _params = _NEURAL_PARAMS + ("steps", "alpha", "random_state", "n_classes")

    def __init__(self, hidden: int = _APPNP["hidden"], dropout: float = _APPNP["dropout"],
                 learning_rate: float = _APPNP["learning_rate"],
                 weight_decay: float = _APPNP["weight_decay"],
                 max_epochs: int = _APPNP["max_epochs"], patience: int = _APPNP["patience"],
                 precision: str = _APPNP["precision"],
                 validation_fraction: float = _APPNP["validation_fraction"],
                 steps: int = _APPNP["steps"], alpha: float = _APPNP["alpha"],
                 random_state: int = 0, n_classes: Optional[int] = None):
        self.hidden = hidden
        self.dropout = dropout
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.max_epochs = max_epochs
        self.patience = patience
        self.precision = precision
        self.validation_fraction = validation_fraction
        self.steps = steps
        self.alpha = alpha
        self.random_state = random_state
        self.n_classes = n_classes


class CorrectAndSmooth(_CollectiveEstimator):
    """Correct & Smooth (C&S; Huang, He, Singh, Lim & Benson 2021, "Combining label
    propagation and simple models out-performs graph neural networks", ICLR), as ``srl
    classify --method cs --cs-base mlp|lr``: a base predictor's class probabilities, then
    its residual errors on the observed nodes propagated over ``S = D^-1/2 A D^-1/2``
    (the *correct* step, ``correct_alpha``, autoscaled) and the corrected guesses
    propagated with the observed labels (the *smooth* step, ``smooth_alpha``), each until
    the largest change is below ``tol`` or ``max_iters`` iterations.

    Parameters: ``base`` -- "mlp" (CS-MLP: the network of :class:`MLP`, the same numbers
    for the same seed and training parameters) or "lr" (CS-LR: the content-only logistic
    regression of ``ContentOnly(local="lr")``, prior ``lr_lambda``: ``None`` tunes it by
    2-fold cross-validation on the observed nodes); ``correct_alpha`` -- in (0, 1];
    ``smooth_alpha`` -- in (0, 1); ``tol`` -- > 0; ``max_iters`` -- >= 1; the MLP's
    training parameters below (used with ``base="mlp"`` only); ``random_state`` (also
    the LR tuning folds); ``n_classes``. ``convergence_`` is that of the smoothing.
    """

    _method = "cs"
    _params = ("base", "correct_alpha", "smooth_alpha", "tol", "max_iters", "lr_lambda") \
        + _NEURAL_PARAMS + ("random_state", "n_classes")

    def __init__(self, base: str = "mlp", correct_alpha: float = _CS["correct_alpha"],
                 smooth_alpha: float = _CS["smooth_alpha"], tol: float = _CS["tol"],
                 max_iters: int = _CS["max_iters"], lr_lambda: Optional[float] = None,
                 hidden: int = _MLP["hidden"], dropout: float = _MLP["dropout"],
                 learning_rate: float = _MLP["learning_rate"],
                 weight_decay: float = _MLP["weight_decay"],
                 max_epochs: int = _MLP["max_epochs"], patience: int = _MLP["patience"],
                 precision: str = _MLP["precision"],
                 validation_fraction: float = _MLP["validation_fraction"],
                 random_state: int = 0, n_classes: Optional[int] = None):
        self.base = base
        self.correct_alpha = correct_alpha
        self.smooth_alpha = smooth_alpha
        self.tol = tol
        self.max_iters = max_iters
        self.lr_lambda = lr_lambda
        self.hidden = hidden
        self.dropout = dropout
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.max_epochs = max_epochs
        self.patience = patience
        self.precision = precision
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.n_classes = n_classes


for _neural in (MLP, GCN, APPNP, CorrectAndSmooth):
    _neural.__doc__ = (_neural.__doc__ or "") + "\n    " + _NEURAL_DOC + "\n"
