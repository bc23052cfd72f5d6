"""Type stubs of the compiled module ``srl._srl`` (crates/srl-py/src). Shapes are given as
``(n,)``, ``(n, k)``; probabilities in [0, 1]; log-potentials and log-odds in nats."""

from os import PathLike
from typing import Any, Dict, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
from typing_extensions import disjoint_base, final
import numpy.typing as npt

__version__: str
_Path = Union[str, PathLike]

class ParseError(ValueError):
    """A malformed line of an input file; ``filename`` and 1-based ``lineno`` set."""
    filename: str
    lineno: int

class NotFittedError(ValueError):
    """An estimator used before ``fit`` (or ``from_json``)."""

@final
class Database:
    """BoostSRL-style relational data: examples, facts, background (modes, setParam).

    Raises ParseError naming ``Database.pos`` / ``.neg`` / ``.facts`` / ``.modes`` and the
    1-based item as the line for a malformed item."""
    def __new__(
        cls,
        pos: Optional[Sequence[str]] = None,
        neg: Optional[Sequence[str]] = None,
        facts: Optional[Sequence[str]] = None,
        modes: Optional[Sequence[str]] = None,
    ) -> "Database": ...
    @staticmethod
    def from_folder(path: _Path, prefix: str = "train", bk: Optional[_Path] = None) -> "Database":
        """Reads PREFIX_pos.txt, PREFIX_neg.txt, PREFIX_facts.txt and the background
        (``bk`` or PREFIX_bk.txt). OSError for missing files, ParseError (file, line)."""
    @property
    def pos(self) -> List[str]: ...
    @property
    def neg(self) -> List[str]: ...
    @property
    def facts(self) -> List[str]: ...
    @property
    def modes(self) -> List[str]: ...
    @property
    def settings(self) -> List[Tuple[str, str]]: ...
    def select(self, target: str, indices: Sequence[int]) -> "Database":
        """The same facts and background with only the examples of ``target`` at
        ``indices`` (positions in ``examples(target)``), in that order."""
    def examples(self, target: str) -> Tuple[List[str], npt.NDArray[np.bool_]]:
        """Atoms of ``target`` in scoring order and their labels, shape (n,)."""

class _Boosted:
    def __sklearn_is_fitted__(self) -> bool: ...
    def _feature_counts(self) -> Dict[str, int]: ...
    def fit(self, database: Database) -> "_Boosted":
        """Learns the trees (GIL released). ValueError for no target/examples, bad
        parameters."""
    def predict_proba(self, database: Database) -> npt.NDArray[np.float64]:
        """P(atom true), shape (n,), in the order of ``database.examples(target)``."""
    def decision_function(self, database: Database) -> npt.NDArray[np.float64]:
        """Log-odds psi(x), shape (n,), nats."""
    def predict(self, database: Database, threshold: float = 0.5) -> npt.NDArray[np.bool_]:
        """``predict_proba(database) >= threshold``, shape (n,)."""
    def get_params(self, deep: bool = True) -> Dict[str, Any]: ...
    def set_params(self, **params: Any) -> "_Boosted": ...
    def to_json(
        self, path: Optional[_Path] = None, *, overwrite: bool = False
    ) -> Optional[str]:
        """srl model file (format srl-model, version 1): written to ``path`` or returned.

        An existing ``path`` is replaced only with ``overwrite=True`` (FileExistsError
        otherwise), as ``--force`` of the ``srl`` command."""
    @property
    def estimators_(self) -> List[List[str]]:
        """Clauses of each tree."""
    @property
    def target_(self) -> str: ...
    @property
    def train_log_likelihood_(self) -> npt.NDArray[np.float64]:
        """Shape (n_estimators + 1,), mean log-likelihood per example (nats)."""
    @property
    def settings_(self) -> Optional[str]: ...
    @property
    def advice_(self) -> Optional[Dict[str, Any]]:
        """The advice the model was learned with (Odom et al. 2015; ``advice=``):
        ``file``, ``weight``, ``pieces``, ``preferred_examples``, ``avoided_examples``;
        None without advice."""
    @property
    def recursion_(self) -> Optional[str]:
        """The recursive predicate (``recursive_<target>``) of a model learned with
        ``setParam: recursion=true.``, else None; such a model predicts by Gibbs
        sampling (``gibbs_burn_in``, ``gibbs_samples``, seed ``random_state``)."""
    def _fit_targets(self, database: Database, estimators: Sequence[Any]) -> None:
        """Fits each estimator of ``estimators`` (same class and parameters, its own
        ``target``) through srl-boost's ``fit_targets`` (BoostSRL ``-target a,b,c``)."""

def _parse_targets(targets: Union[str, Sequence[str]]) -> List[str]:
    """srl-boost's ``parse_targets`` on ``"a,b,c"`` or a list of names (ValueError for an
    empty or repeated name)."""

@disjoint_base
class BoostedRDN(_Boosted):
    """RFGB (Natarajan et al. 2012) with BoostSRL's conventions; srlearn's names.

    Defaults are BoostSRL's own, as ``srl boost learn`` uses them: ``n_estimators=10``,
    ``preset="boostsrl"`` (at most 13 leaves = 12 inner nodes, depth 5, one literal per node),
    ``neg_pos_ratio=None`` (BoostSRL's 2),
    ``random_state=1``. srlearn's defaults differ (``node_size=2``,
    ``max_tree_depth=3``): pass those two to get srlearn's limits.

    ``advice`` / ``advice_weight``: knowledge-based RFGB (Odom et al. 2015; BoostSRL
    ``-adviceFile`` / ``-adviceWt``), the advice file read and the weight checked
    (in [0, 1]) by ``fit``.

    ``seed_examples``: BoostSRL's seed-based candidate sampling (``--seed-examples N``;
    None scores every candidate, 0 is a ValueError). ``gibbs_burn_in`` (20) and
    ``gibbs_samples`` (200, >= 1): the Gibbs sweeps of a recursive model's prediction
    (``srl boost predict --burn-in --samples``), seeded by ``random_state``."""
    def __new__(
        cls,
        target: Optional[str] = None,
        n_estimators: int = 10,
        *,
        neg_pos_ratio: Optional[float] = None,
        resample_negatives: bool = True,
        step: float = 1.0,
        preset: Literal["boostsrl", "two_literal"] = "boostsrl",
        max_tree_depth: Optional[int] = None,
        node_size: Optional[int] = None,
        max_leaves: Optional[int] = None,
        min_leaf_examples: Optional[int] = None,
        use_setparam: bool = True,
        random_state: int = 1,
        advice: Optional[_Path] = None,
        advice_weight: float = 0.5,
        seed_examples: Optional[int] = None,
        gibbs_burn_in: int = 20,
        gibbs_samples: int = 200,
    ) -> "BoostedRDN": ...
    @staticmethod
    def from_json(path: _Path) -> "BoostedRDN":
        """OSError, ParseError (file, line), ValueError (format, version, kind)."""
    @staticmethod
    def from_json_string(text: str) -> "BoostedRDN": ...

@disjoint_base
class SoftBoostedRDN(_Boosted):
    """Soft-RFGB (Yang et al. 2014): false negatives cost ``alpha``, false positives
    ``beta`` (Eq. 3); alpha = beta = 0 is RFGB."""
    def __new__(
        cls,
        target: Optional[str] = None,
        n_estimators: int = 10,
        alpha: float = 0.0,
        beta: float = 0.0,
        *,
        neg_pos_ratio: Optional[float] = None,
        resample_negatives: bool = True,
        step: float = 1.0,
        preset: Literal["boostsrl", "two_literal"] = "boostsrl",
        max_tree_depth: Optional[int] = None,
        node_size: Optional[int] = None,
        max_leaves: Optional[int] = None,
        min_leaf_examples: Optional[int] = None,
        use_setparam: bool = True,
        random_state: int = 1,
        advice: Optional[_Path] = None,
        advice_weight: float = 0.5,
        seed_examples: Optional[int] = None,
        gibbs_burn_in: int = 20,
        gibbs_samples: int = 200,
    ) -> "SoftBoostedRDN": ...
    @staticmethod
    def from_json(path: _Path) -> "SoftBoostedRDN": ...
    @staticmethod
    def from_json_string(text: str) -> "SoftBoostedRDN": ...

@disjoint_base
class BoostedMLN(_Boosted):
    """MLN-Boost (Khot et al. 2011); the arguments of BoostedRDN without the advice;
    kind ``mln-boost``. ``mln_clause=True``: MLN-Boost by clauses (BoostSRL ``-mln
    -mlnClause``), BoostSRL's schedule, or ``n_mln_clauses`` clauses of
    ``mln_clause_length`` literals per step (both or neither, each >= 1)."""
    def __new__(
        cls,
        target: Optional[str] = None,
        n_estimators: int = 10,
        *,
        neg_pos_ratio: Optional[float] = None,
        resample_negatives: bool = True,
        step: float = 1.0,
        preset: Literal["boostsrl", "two_literal"] = "boostsrl",
        max_tree_depth: Optional[int] = None,
        node_size: Optional[int] = None,
        max_leaves: Optional[int] = None,
        min_leaf_examples: Optional[int] = None,
        use_setparam: bool = True,
        random_state: int = 1,
        seed_examples: Optional[int] = None,
        gibbs_burn_in: int = 20,
        gibbs_samples: int = 200,
        mln_clause: bool = False,
        n_mln_clauses: Optional[int] = None,
        mln_clause_length: Optional[int] = None,
    ) -> "BoostedMLN": ...
    @property
    def clauses_per_step_(self) -> List[int]:
        """Clauses learned by each step of clause-based MLN-Boost; empty for trees."""
    @staticmethod
    def from_json(path: _Path) -> "BoostedMLN": ...
    @staticmethod
    def from_json_string(text: str) -> "BoostedMLN": ...

@final
class Convergence:
    def __new__(cls, converged: bool, iterations: int, max_residual: float) -> "Convergence": ...
    @property
    def converged(self) -> bool: ...
    @property
    def iterations(self) -> int: ...
    @property
    def max_residual(self) -> float: ...

@final
class Marginals:
    def __new__(
        cls,
        nodes: npt.ArrayLike,
        map_state: npt.ArrayLike,
        convergence: Convergence,
        log_partition: Optional[float] = None,
    ) -> "Marginals":
        """nodes (n, k), map_state (n,); the record the inference routines return
        (pickles exactly)."""
    @property
    def nodes(self) -> npt.NDArray[np.float64]:
        """P(x_v = s), shape (n, k_max); rows sum to 1."""
    @property
    def convergence(self) -> Convergence: ...
    @property
    def log_partition(self) -> Optional[float]:
        """log Z (nats), exact inference only."""
    @property
    def map_state(self) -> npt.NDArray[np.int64]:
        """Shape (n,): best visited state (Gibbs) or per-node argmax."""

@final
class PairwiseMRF:
    """P(x) ∝ exp(Σ θ_v(x_v) + Σ θ_uv(x_u, x_v)); ValueError for bad shapes/values."""
    def __new__(
        cls,
        unary: npt.ArrayLike,
        edges: npt.ArrayLike,
        pairwise: npt.ArrayLike,
        evidence: Optional[npt.ArrayLike] = None,
    ) -> "PairwiseMRF":
        """unary (n, k); edges (m, 2); pairwise (k, k) shared or (m, k, k); evidence
        (n,) with -1 = unobserved. Log-potentials in nats, -inf = zero potential."""
    @staticmethod
    def from_uai(path: _Path, evidence: Optional[_Path] = None) -> "PairwiseMRF": ...
    @property
    def num_nodes(self) -> int: ...
    @property
    def num_edges(self) -> int: ...
    @property
    def num_states(self) -> npt.NDArray[np.int64]: ...
    def to_uai(self) -> str: ...
    def loopy_bp(
        self,
        max_iters: int = 100,
        tol: float = 1e-6,
        damping: float = 0.0,
        schedule: Literal["flooding", "sequential", "residual"] = "flooding",
        max_product: bool = False,
    ) -> Marginals: ...
    def mean_field(
        self,
        max_iters: int = 200,
        tol: float = 1e-6,
        damping: float = 0.0,
        sweep: Literal["sequential", "parallel"] = "sequential",
    ) -> Marginals: ...
    def gibbs(
        self,
        samples: int = 800,
        burn_in: int = 200,
        thinning: int = 1,
        seed: int = 0,
        split_tol: float = 0.05,
    ) -> Marginals: ...
    def exact(self, enumeration_limit_log2: int = 20) -> Marginals: ...

@final
class FactorGraph:
    """P(x) ∝ exp(Σ_f θ_f(x_scope(f))), factors of any arity (srl-infer's FactorGraph);
    the methods run srl-infer's run_factor_task, the job of ``srl mrf``."""
    @staticmethod
    def from_uai(path: _Path, evidence: Optional[_Path] = None) -> "FactorGraph":
        """UAI MARKOV or BAYES of any arity; OSError, srl.ParseError (file, line)."""
    @staticmethod
    def from_network(path: _Path) -> "FactorGraph":
        """A BIF (.bif, .bif.gz) or Hugin .net network, one factor per CPT."""
    @property
    def num_vars(self) -> int: ...
    @property
    def num_factors(self) -> int: ...
    @property
    def num_states(self) -> npt.NDArray[np.int64]: ...
    def to_uai(self) -> str: ...
    def marginals(
        self,
        algorithm: Literal["lbp", "mean-field", "gibbs", "exact"] = "lbp",
        schedule: Optional[Literal["flooding", "sequential", "residual"]] = None,
        damping: float = 0.0,
        max_iterations: Optional[int] = None,
        tolerance: Optional[float] = None,
        samples: int = 800,
        burn_in: int = 200,
        seed: int = 0,
    ) -> Marginals:
        """UAI MAR; nodes (n, k) padded with 0 past a variable's states; ValueError for
        options the algorithm does not take or a variable left no state."""
    def map(
        self,
        algorithm: Literal["exact", "lbp"] = "exact",
        schedule: Optional[Literal["flooding", "sequential", "residual"]] = None,
        damping: float = 0.0,
        max_iterations: Optional[int] = None,
        tolerance: Optional[float] = None,
    ) -> Tuple[npt.NDArray[np.int64], float, Convergence]:
        """UAI MAP: (states (n,), log score in nats, convergence)."""
    def log_partition(self) -> float:
        """ln Z (nats) by exact elimination; ln P(evidence) for a Bayesian network."""

@final
class Trimming:
    subset: List[str]
    threshold: float
    eca: float
    cost: float
    evaluations: int
    def __new__(
        cls, subset: List[str], threshold: float, eca: float, cost: float, evaluations: int
    ) -> "Trimming": ...

@final
class BayesianNetwork:
    @staticmethod
    def from_bif(path: _Path) -> "BayesianNetwork": ...
    @staticmethod
    def from_file(path: _Path) -> "BayesianNetwork": ...
    @property
    def variables(self) -> List[str]: ...
    @property
    def leaves(self) -> List[str]: ...
    def states(self, name: str) -> List[str]: ...
    def parents(self, name: str) -> List[str]: ...
    def trim(
        self,
        class_var: str,
        state: Union[str, int],
        features: Union[Sequence[str], Literal["leaves"]],
        threshold: float,
        budget: float,
        costs: Optional[Sequence[float]] = None,
        max_table: Optional[int] = None,
    ) -> Trimming:
        """Branch-and-bound trimming (Choi & Van den Broeck 2018); ValueError for bad
        names, threshold outside [0, 1], bad costs or budget, max_table 0, or a
        compilation needing more than max_table entries."""

def _pairwise_mrf_from_state(state: str) -> PairwiseMRF: ...
def _factor_graph_from_state(state: str) -> FactorGraph: ...
def _bayesian_network_from_state(state: str) -> BayesianNetwork: ...
def _min_expected_cost(
    proba: npt.ArrayLike, costs: npt.ArrayLike
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def _realised_costs(
    labels: Sequence[int], truth: Sequence[int], costs: npt.ArrayLike
) -> npt.NDArray[np.float64]: ...
def _calibration_report(
    proba: npt.ArrayLike, y: npt.ArrayLike, n_bins: int, class_index: int
) -> Tuple[
    float,
    float,
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
]: ...
@final
class _RdnRegressionModel:
    def predict(
        self, database: Database
    ) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
    @property
    def estimators(self) -> List[List[str]]: ...
    def feature_counts(self) -> Dict[str, int]: ...
    @property
    def target(self) -> str: ...
    @property
    def train_mse(self) -> npt.NDArray[np.float64]: ...
    @property
    def settings(self) -> Optional[str]: ...
    def to_json(self, class_name: str, estimator: str, seed_free_command: str) -> str: ...

def _fit_rdn_regression(
    database: Database,
    target: str,
    n_estimators: int,
    step: float,
    preset: str,
    max_tree_depth: Optional[int],
    node_size: Optional[int],
    max_leaves: Optional[int],
    min_leaf_examples: Optional[int],
    use_setparam: bool,
) -> _RdnRegressionModel: ...
def _rdn_regression_from_json(
    text: str, source: Optional[_Path] = None
) -> Tuple[_RdnRegressionModel, str]: ...
def _write_model_text(path: _Path, text: str, overwrite: bool) -> None: ...
def _select_regression(database: Database, target: str, indices: Sequence[int]) -> Database: ...
def _regression_metrics(
    predicted: Sequence[float], truth: Sequence[float]
) -> Tuple[float, float, float]: ...
def _load_linqs(dir: _Path, name: str, directed: bool = False) -> Tuple[Any, ...]: ...
def _run_collective(
    method: str,
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.int64],
    data: npt.NDArray[np.float64],
    num_features: int,
    y: npt.NDArray[np.int64],
    n_classes: int,
    edges: npt.NDArray[np.int64],
    directed: bool,
    options: Dict[str, Any],
    validation: Optional[npt.NDArray[np.int64]] = None,
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], Convergence]: ...

def _database_from_state(state: str) -> Database:
    """Rebuilds a pickled :class:`Database` (``Database.__reduce__``'s JSON state).
    Raises ValueError for other text."""

def _collective_defaults() -> Dict[str, Dict[str, Any]]:
    """The pipeline's defaults of the graph learners' parameters (srl-learn's
    ``CollectiveSettings::default()``): ``{"lp", "cs", "mlp", "gcn", "appnp"}`` -> dict
    of constructor parameter -> default."""

def _node_test_sets(sampling: str, k: int, seed: int, y: Any, n_classes: int,
                    edges: Any) -> List[Any]:
    """The RS / SS test sets of srl-learn's pipeline (int64 arrays of node indices)."""

# Tabular classifiers (src/tabular.rs): the fitted Rust models behind srl.LogisticRegression,
# srl.NaiveBayes and srl.UKNN. ``x`` is a C-contiguous float64 (n, d) array or the CSR parts
# ``(indptr int64 (n + 1,), indices int64 (nnz,), data float64 (nnz,), d)``; labels are class
# indices 0..n_classes-1 (int64). Each pickles through its serde JSON, bit for bit.
_X = Any
_Predictions = Tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]

@final
class _LogisticRegressionModel:
    """A fitted multinomial logistic regression with an L2 prior (srl-learn)."""
    @staticmethod
    def fit(x: _X, y: npt.NDArray[np.int64], n_classes: int,
            sample_weight: Optional[npt.NDArray[np.float64]], c: Optional[float],
            lambda_per_sample: float, fit_intercept: bool, max_iter: int,
            tol: float) -> "_LogisticRegressionModel":
        """``c``: lambda = 1 / (2 c); None: lambda = lambda_per_sample x total weight.
        ValueError for bad parameters or data."""
    def predict_proba(self, x: _X) -> npt.NDArray[np.float64]:
        """(n, k) P(y = c | x). ValueError for the wrong number of features."""
    def predict(self, x: _X) -> _Predictions:
        """(labels (n,), probabilities (n, k))."""
    @property
    def coef(self) -> npt.NDArray[np.float64]:
        """(k, d) weights."""
    @property
    def intercept(self) -> npt.NDArray[np.float64]:
        """(k,) intercepts."""
    @property
    def lambda_(self) -> float: ...
    @property
    def n_iter(self) -> int: ...
    @property
    def converged(self) -> bool: ...
    def to_json(self) -> str: ...

@final
class _NaiveBayesModel:
    """A fitted naive Bayes model (srl-bayes): count and categorical features, NaN = missing."""
    @staticmethod
    def fit(x: _X, y: npt.NDArray[np.int64], n_classes: int,
            sample_weight: Optional[npt.NDArray[np.float64]], alpha: float,
            prior_alpha: float, categorical: npt.NDArray[np.bool_]) -> "_NaiveBayesModel":
        """``categorical``: (d,) mask; the other features are counts. ValueError for bad
        values."""
    def predict_proba(self, x: _X) -> npt.NDArray[np.float64]:
        """(n, k) Pr(c | x)."""
    def predict(self, x: _X) -> _Predictions:
        """(labels (n,), probabilities (n, k))."""
    @property
    def class_prior(self) -> npt.NDArray[np.float64]:
        """(k,) Pr(c)."""
    @property
    def n_categories(self) -> npt.NDArray[np.int64]:
        """(d,) states per categorical feature, 0 for a count feature."""
    def to_json(self) -> str: ...

@final
class _UknnModel:
    """A fitted uK-NN classifier (srl-learn; Zadrozny et al. 2009)."""
    @staticmethod
    def fit(x: _X, y: npt.NDArray[np.int64], n_classes: int, k: int,
            metric: Literal["cosine", "dot", "euclidean"],
            weighting: Literal["none", "voting", "distance", "both"]) -> "_UknnModel": ...
    def predict(self, x: _X,
                weights: Optional[npt.NDArray[np.float64]] = None) -> _Predictions:
        """(labels (n,), normalised class scores (n, k)); ``weights``: (n_train,) context
        weights, None = all 1."""
    def kneighbors(self, x: _X,
                   weights: Optional[npt.NDArray[np.float64]] = None) -> npt.NDArray[np.int64]:
        """(n, min(k, n_train)) training row indices, closest first."""
    @property
    def n_train(self) -> int: ...
    def to_json(self) -> str: ...

def _tabular_from_json(kind: Literal["logistic_regression", "naive_bayes", "uknn"],
                       text: str) -> Any:
    """Rebuilds a pickled tabular model. ValueError for an unknown kind or bad text."""
