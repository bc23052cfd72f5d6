"""srl: statistical relational learning in Rust, from Python.

Thin bindings over the Rust crates of the srl workspace (guide: docs/python.md and the
book's Python chapter; every algorithm runs in
Rust; this package converts arguments and results and maps errors):

* Boosting (srl-boost): :class:`Database`, :class:`BoostedRDN`, :class:`SoftBoostedRDN`,
  :class:`BoostedMLN` (srlearn's names, scikit-learn's ``fit`` / ``predict`` / ``predict_proba`` /
  ``get_params``; model files shared with the ``srl`` command); expert advice through
  ``advice=`` (Odom et al. 2015, BoostSRL ``-adviceFile``); :func:`fit_targets` for
  several targets in one run (BoostSRL ``-target a,b,c``); recursive targets
  (``setParam: recursion=true``, predicted by Gibbs sampling: ``gibbs_burn_in``,
  ``gibbs_samples``), BoostSRL's seed examples (``seed_examples=``) and MLN-Boost by
  clauses (``BoostedMLN(mln_clause=True)``, BoostSRL ``-mln -mlnClause``).
* Inference (srl-infer): :class:`PairwiseMRF` with ``loopy_bp``, ``mean_field``,
  ``gibbs``, ``exact`` returning :class:`Marginals`; :class:`FactorGraph` (factors of any
  arity, UAI files, BIF/NET networks) with ``marginals``, ``map``, ``log_partition``.
* Bayesian networks (srl-bayes): :class:`BayesianNetwork` (``from_bif``, ``trim``).
* Cost-sensitive decisions (srl-learn, srl-eval): :class:`CostSensitiveClassifier` wraps
  any classifier with ``predict_proba`` and predicts the class of least expected cost
  under one or per-example cost matrices, with a calibration report and optional
  Platt / isotonic recalibration.
* Collective classification (srl-graph, srl-infer, srl-learn): :func:`load_linqs`,
  :class:`ICA`, :class:`CollectiveGibbs`, :class:`ContentOnly` and the global
  :class:`MarkovNetwork`, and the graph learners :class:`LabelPropagation`,
  :class:`MLP`, :class:`GCN`, :class:`APPNP` and :class:`CorrectAndSmooth`, over (X,
  edges, observed mask), on the pipeline of ``srl classify``.
* Tabular classifiers (srl-learn, srl-bayes) with scikit-learn's estimator contract:
  :class:`LogisticRegression`, :class:`NaiveBayes`, :class:`UKNN` (uK-NN with context
  weights).

Errors: ``ValueError`` for bad input (:class:`ParseError`, a ``ValueError`` with
``filename`` and ``lineno``, for a malformed line of a file), ``OSError`` for files that
cannot be read or written, :class:`NotFittedError` (a ``ValueError``) for an estimator
used before ``fit``.
"""

from ._srl import (  # noqa: F401
    __version__,
    BayesianNetwork,
    Convergence,
    Database,
    FactorGraph,
    Marginals,
    NotFittedError,
    PairwiseMRF,
    ParseError,
    Trimming,
)
from ._boost import (  # noqa: F401
    BoostedMLN,
    BoostedRDN,
    BoostedRDNRegressor,
    SoftBoostedRDN,
    fit_targets,
)
from ._cost import CostSensitiveClassifier  # noqa: F401
from ._collective import (  # noqa: F401
    APPNP,
    CollectiveGibbs,
    ContentOnly,
    CorrectAndSmooth,
    GCN,
    Graph,
    ICA,
    LabelPropagation,
    MLP,
    MarkovNetwork,
    NodeSplitter,
    load_linqs,
)
from ._tabular import LogisticRegression, NaiveBayes, UKNN  # noqa: F401

__all__ = [
    "APPNP",
    "BayesianNetwork",
    "BoostedMLN",
    "BoostedRDN",
    "BoostedRDNRegressor",
    "CollectiveGibbs",
    "ContentOnly",
    "Convergence",
    "CorrectAndSmooth",
    "CostSensitiveClassifier",
    "Database",
    "FactorGraph",
    "GCN",
    "Graph",
    "ICA",
    "LabelPropagation",
    "LogisticRegression",
    "MLP",
    "Marginals",
    "MarkovNetwork",
    "NaiveBayes",
    "NodeSplitter",
    "NotFittedError",
    "PairwiseMRF",
    "ParseError",
    "SoftBoostedRDN",
    "Trimming",
    "UKNN",
    "fit_targets",
    "load_linqs",
]
