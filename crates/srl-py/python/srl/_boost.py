"""The boosting estimators as scikit-learn estimators: parameters stored exactly as given,
``get_params`` / ``set_params`` / ``clone``, ``score``, ``classes_``, scikit-learn tags,
``pickle`` and ``copy.deepcopy`` through the model-file format the ``srl`` command writes.

Every computation runs in Rust (``srl._srl``, srl-boost); these classes only keep the
constructor arguments and convert.
"""

from __future__ import annotations

import numbers
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np

from . import _srl

_COMMON = ("neg_pos_ratio", "resample_negatives", "step", "preset", "max_tree_depth",
           "node_size", "max_leaves", "min_leaf_examples", "use_setparam", "random_state")
# knowledge-based RFGB (BoostedRDN, SoftBoostedRDN; not BoostedMLN)
_ADVICE = ("advice", "advice_weight")
# every boosting estimator, after the advice: BoostSRL's seed examples, then the Gibbs
# sampler of a recursive model's prediction
_SEARCH = ("seed_examples", "gibbs_burn_in", "gibbs_samples")
# MLN-Boost by clauses (BoostedMLN only)
_MLN_CLAUSE = ("mln_clause", "n_mln_clauses", "mln_clause_length")
_WHOLE = ("n_estimators", "max_tree_depth", "node_size", "max_leaves", "min_leaf_examples",
          "random_state", "seed_examples", "gibbs_burn_in", "gibbs_samples",
          "n_mln_clauses", "mln_clause_length")


def _check_whole(params: Dict[str, Any]) -> None:
    """Negative or non-integral whole-number parameters are a ValueError (Rust would raise
    OverflowError or TypeError)."""
    for k in _WHOLE:
        v = params.get(k)
        if v is None or isinstance(v, bool):
            continue
        if not isinstance(v, numbers.Integral) or v < 0:
            raise ValueError(f"{k} = {v!r}: expected a whole number >= 0")


def _fold_indices(est, X, database, target: Optional[str], select):
    """``(select(database, target, sorted unique indices), inverse)`` for scikit-learn's
    ``X`` of example indices (shape (n,) or (n, 1)); without ``database`` the one given to
    ``fit`` (kept as ``est._fit_database``). ``inverse`` maps the selection's order back
    to ``X``'s. Raises ValueError for non-integer ``X`` or no database."""
    if database is None:
        database = getattr(est, "_fit_database", None)
        if database is None:
            raise ValueError("X is not an srl.Database: pass database=db to give "
                             "example indices")
    idx = np.asarray(X).reshape(-1)
    if idx.dtype.kind not in "iu":
        raise ValueError("with database=..., X holds example indices (integers) into "
                         "database.examples(target)")
    uniq, inverse = np.unique(idx, return_inverse=True)
    tgt = target if target is not None else est.target_
    return select(database, str(tgt), [int(i) for i in uniq]), inverse


def _rebuild(cls, params: Dict[str, Any], model_text: Optional[str]):
    """Unpickles a boosting estimator: ``cls(**params)``, then the fitted model, if any,
    from its model-file text."""
    est = cls(**params)
    if model_text is not None:
        _srl_base(cls)._load_model_text(est, model_text)
    return est


def _srl_base(cls):
    for b in cls.__mro__:
        if b.__module__ == "srl._srl":
            return b
    raise TypeError(f"{cls.__name__} has no srl._srl base")


class _Boosted:
    """Shared scikit-learn machinery of the boosting estimators."""

    _params: Tuple[str, ...] = ()

    if TYPE_CHECKING:  # provided by the srl._srl base class
        target_: str

        def __sklearn_is_fitted__(self) -> bool: ...

        target: Optional[str]

        def to_json(self, path: Any = None, *, overwrite: bool = False) -> Optional[str]: ...

    def __new__(cls, *args, **kwargs):
        names = cls._params
        given = dict(zip(names, args))
        given.update(kwargs)
        _check_whole(given)
        return super().__new__(cls, *args, **kwargs)  # type: ignore[call-arg]

    def _store(self, params: Dict[str, Any]) -> None:
        for k, v in params.items():
            object.__setattr__(self, k, v)

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor arguments, the very objects given (scikit-learn's
        ``get_params``; ``deep`` has no effect: no parameter is an estimator)."""
        return {k: getattr(self, k) for k in self._params}

    @property
    def feature_importances_(self):
        """How often each predicate is used as a splitting criterion over all trees (each
        inner node's literals once), a ``collections.Counter`` as srlearn's
        ``feature_importances_`` (which counts BoostSRL's clause bodies, so its counts are
        larger on deep trees). Raises srl.NotFittedError before ``fit``."""
        from collections import Counter

        return Counter(self._feature_counts())  # type: ignore[attr-defined]

    def set_params(self, **params):
        """Sets constructor arguments by name; returns ``self``. A fitted model is kept
        until the next ``fit``.

        Raises
        ------
        ValueError
            An unknown name, a negative whole number, or a value of the wrong type.
        """
        for k in params:
            if k not in self._params:
                raise ValueError(f"invalid parameter {k!r}; valid parameters: "
                                 + ", ".join(self._params))
        _check_whole(params)
        try:
            _srl_base(type(self)).set_params(self, **params)
        except TypeError as e:
            raise ValueError(str(e)) from None
        self._store(params)
        return self

    def _sync_params(self) -> None:
        """Hands the stored constructor arguments to the Rust estimator (``fit`` checks
        them there, prediction the Gibbs arguments): a negative whole number or a value
        of the wrong type is a ValueError, as in ``set_params``."""
        _check_whole(self.get_params())
        try:
            _srl_base(type(self)).set_params(self, **self.get_params())
        except TypeError as e:
            raise ValueError(str(e)) from None

    def _fold(self, X, database, target: Optional[str] = None):
        """``(database.select(target, unique indices), inverse)`` for scikit-learn's
        ``X`` of example indices (shape (n,) or (n, 1)) with ``database=``; ``inverse``
        maps the selection's order back to ``X``'s."""
        return _fold_indices(self, X, database, target,
                             lambda db, t, idx: db.select(t, idx))

    def fit(self, X=None, y=None, *, database=None):
        """Learns ``n_estimators`` relational regression trees for ``target``. Releases
        the GIL. Returns ``self``.

        Two ways to give the data:

        * ``fit(database)``: an :class:`srl.Database` (``y`` is ignored: the labels are
          the database's positive and negative examples);
        * ``fit(X, y, database=db)``: ``X`` holds indices into ``db.examples(target)``
          (shape (n,) or (n, 1)) and only those examples are learned from (facts and
          background whole): the form scikit-learn's ``cross_val_score`` /
          ``GridSearchCV`` use with ``params={"database": db}``. The estimator keeps
          ``db`` for ``predict`` / ``score`` on indices without ``database=`` (scikit-learn's
          scorers pass none); it is not pickled.

        Raises
        ------
        ValueError
            No target, no positive or negative example, bad parameters, an index out of
            range, or a predicate used with two arities.
        """
        self.__dict__.pop("_fit_database", None)
        if database is not None:
            if self.target is None:  # type: ignore[attr-defined]
                raise ValueError("target is None: give the target predicate")
            X, _ = self._fold(X, database, self.target)  # type: ignore[attr-defined]
        elif X is None:
            raise ValueError("fit needs a database: fit(database) or fit(X, y, database=db)")
        base = _srl_base(type(self))
        self._sync_params()
        out = base.fit(self, X)
        if database is not None:
            # predict / score with indices and no database= use it (scikit-learn's
            # scorers pass no fit parameters); not pickled
            object.__setattr__(self, "_fit_database", database)
        return out

    def predict_proba(self, X, *, database=None) -> np.ndarray:
        """P(target atom is true) for each example: of ``X`` (an :class:`srl.Database`, in
        the order of ``X.examples(target_)``), or, with ``database=db``, of the examples
        at the indices ``X`` in ``db.examples(target_)``, in ``X``'s order. float64 (n,).
        A recursive model (``recursion_``) samples the examples jointly (Gibbs sampling:
        ``gibbs_burn_in``, ``gibbs_samples``, seed ``random_state``).
        Raises srl.NotFittedError before ``fit``; ValueError for ``gibbs_samples=0``."""
        base = _srl_base(type(self))
        self._sync_params()
        if database is None and isinstance(X, _srl.Database):
            return base.predict_proba(self, X)
        sub, inverse = self._fold(X, database)
        return base.predict_proba(self, sub)[inverse]

    def decision_function(self, X, *, database=None) -> np.ndarray:
        """The log-odds ψ(x) = ψ₀ + step·Σ trees (nats), shape (n,); ``X`` and
        ``database`` as :meth:`predict_proba`; a recursive model's are the log-odds of
        its Gibbs marginals."""
        base = _srl_base(type(self))
        self._sync_params()
        if database is None and isinstance(X, _srl.Database):
            return base.decision_function(self, X)
        sub, inverse = self._fold(X, database)
        return base.decision_function(self, sub)[inverse]

    def predict(self, X, threshold: float = 0.5, *, database=None) -> np.ndarray:
        """``predict_proba(X, database=database) >= threshold``: bool array (n,).
        Raises ValueError for a threshold outside [0, 1]."""
        base = _srl_base(type(self))
        self._sync_params()
        if database is None and isinstance(X, _srl.Database):
            return base.predict(self, X, threshold)
        sub, inverse = self._fold(X, database)
        return base.predict(self, sub, threshold)[inverse]

    @property
    def classes_(self) -> np.ndarray:
        """``array([False, True])``: a target atom is false or true (after ``fit``)."""
        if not self.__sklearn_is_fitted__():
            raise AttributeError("classes_: the estimator is not fitted")
        return np.array([False, True])

    def score(self, X, y=None, *, database=None) -> float:
        """Accuracy of ``predict`` (threshold 0.5) against the labels (scikit-learn's
        classifier ``score``): ``score(database, y=None)`` uses the database's labels of
        the target unless ``y`` is given; ``score(X, y, database=db)`` scores the
        examples at the indices ``X`` against ``y`` (their labels when ``y`` is None).

        Returns
        -------
        float in [0, 1].

        Raises
        ------
        srl.NotFittedError before ``fit``; ValueError for a ``y`` of the wrong length.
        """
        pred = np.asarray(self.predict(X, database=database))
        if y is None:
            if isinstance(X, _srl.Database):
                _, y = X.examples(self.target_)
            else:
                db = database if database is not None else getattr(self, "_fit_database")
                _, labels = db.examples(self.target_)
                y = np.asarray(labels)[np.asarray(X).reshape(-1)]
        y = np.asarray(y, dtype=bool).ravel()
        if y.shape != pred.shape:
            raise ValueError(f"y has {y.shape[0]} labels, the database {pred.shape[0]} examples")
        return float((pred == y).mean())

    def __sklearn_tags__(self):
        """scikit-learn's tags (imported lazily: srl does not depend on scikit-learn): a
        binary classifier over a relational database, not over an array."""
        from sklearn.utils import (  # type: ignore[import-untyped]
            ClassifierTags,
            InputTags,
            Tags,
            TargetTags,
        )

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=False),
            transformer_tags=None,
            regressor_tags=None,
            classifier_tags=ClassifierTags(multi_class=False),
            input_tags=InputTags(two_d_array=False),
        )

    def __reduce__(self):
        model = self.to_json() if self.__sklearn_is_fitted__() else None
        return (_rebuild, (type(self), self.get_params(), model))

    def __deepcopy__(self, memo):
        f, args = self.__reduce__()
        return f(*args)

    def __copy__(self):
        return self.__deepcopy__({})

    @classmethod
    def from_json(cls, path):
        """Reads a model file written by ``to_json`` or by ``srl boost learn`` into an
        instance of this class (its parameters are the file's).

        Raises
        ------
        OSError for an unreadable file; srl.ParseError (file and line) for text that is
        not a model; ValueError for another format, version or kind.
        """
        base = _srl_base(cls)
        loaded = base.from_json(os.fspath(path))
        return cls._from_base(loaded)

    @classmethod
    def from_json_string(cls, text: str):
        """``from_json`` on JSON text (errors name ``<string>``)."""
        return cls._from_base(_srl_base(cls).from_json_string(text))

    @classmethod
    def _from_base(cls, loaded):
        params = _srl_base(cls).get_params(loaded)
        est = cls(**params)
        _srl_base(cls)._load_model_text(est, loaded.to_json())
        return est

    def __repr__(self) -> str:
        return _srl_base(type(self)).__repr__(self)


# The Python fit / predict / predict_proba / decision_function widen the Rust methods
# (X of example indices with database=..., for scikit-learn's cross-validation), which
# mypy reports as a conflict between the two bases.
class BoostedRDN(_Boosted, _srl.BoostedRDN):  # type: ignore[misc]
    """RFGB: a boosted relational dependency network for one target predicate
    (Natarajan et al. 2012; srlearn's ``BoostedRDNClassifier``), learned by srl-boost.

    Parameters
    ----------
    target : str, optional
        The target predicate (required by ``fit``; matched exactly, else ignoring case).
    n_estimators : int, default 10
        Trees (BoostSRL ``-trees``).
    neg_pos_ratio : float, optional
        Negatives per positive; None: BoostSRL's 2 (BoostSRL reads it only as the flag -negPosRatio, never from a background file);
        0 keeps every negative.
    resample_negatives : bool, default True
        Draw the negatives afresh for every tree (BoostSRL) or once.
    step : float, default 1.0
        Step length multiplying each tree.
    preset : {"boostsrl", "two_literal"}, default "boostsrl"
        Tree limits: BoostSRL's own (at most 13 leaves = 12 inner nodes, depth 5, one literal per node) or
        8 leaves, depth 3, two-literal node tests.
    max_tree_depth, node_size, max_leaves, min_leaf_examples : int, optional
        Override the preset (srlearn's ``max_tree_depth``, ``node_size``; srlearn's
        defaults are ``node_size=2, max_tree_depth=3``).
    use_setparam : bool, default True
        Apply the background's ``setParam:`` lines before the explicit arguments.
    random_state : int, default 1
        Seed of the negative sampling and of ``seed_examples``' draws (ChaCha8; same
        seed, same model; the model equals ``srl boost learn``'s with the same settings
        bit for bit), and of a recursive model's Gibbs sampler (``srl boost predict
        --seed``).
    advice : str or os.PathLike, optional
        Expert advice: knowledge-based RFGB (Odom, Khot, Porter & Natarajan,
        "Knowledge-based probabilistic logic learning", AAAI 2015), BoostSRL's
        ``-adviceFile``, ``srl boost learn --advice``. An advice file in BoostSRL's format
        (pieces of three lines: preferred labels, avoided labels, clause file; clause-file
        paths relative to the advice file's folder; docs/srl-boost.md, Advice). Each
        example's gradient becomes ``w * (n_t - n_f) + (1 - w) * (I - p)``, ``n_t`` /
        ``n_f`` the pieces covering it that prefer / avoid the target (srl-boost's
        ``SoftRfgbParams.fit_with_advice``). Read by ``fit``: srl.ParseError (file and
        line) for a malformed advice or clause file or a label naming no predicate of the
        examples, OSError for a missing one; advice on a predicate other than ``target``
        is not used (a ``UserWarning``). None: no advice.
    advice_weight : float, default 0.5
        ``w``, the weight of the advice (BoostSRL's ``-adviceWt``, default 0.5;
        ``--advice-weight``): 0 the data alone, 1 the advice alone. ``fit`` raises
        ValueError for a value outside [0, 1] (also without ``advice``).
    seed_examples : int, optional
        BoostSRL's seed-based candidate sampling (``srl boost learn --seed-examples N``;
        srl-boost's ``TreeParams.seed_sampling``): at every node, score only the tests
        that at least one of ``seed_examples`` seed examples, drawn at random from the
        node's examples, satisfies (BoostSRL draws ``ceil(5 * negPosRatio)`` = 10). The
        draws come from the fit's generator (``random_state``): same seed, same model.
        None (default): every candidate test is scored. ``fit`` raises ValueError for 0.
    gibbs_burn_in : int, default 20
        Recursive models only (the background's ``setParam: recursion=true.``; see
        ``recursion_``): Gibbs sweeps discarded before the marginals are averaged
        (BoostSRL's 20; ``srl boost predict --burn-in``).
    gibbs_samples : int, default 200
        Recursive models only: Gibbs sweeps averaged into the marginals (BoostSRL's 200;
        ``srl boost predict --samples``); >= 1, ValueError for 0 at ``fit`` and at
        prediction. The sampler is seeded by ``random_state`` (as ``srl boost predict
        --seed``): the same seed gives the same probabilities. A model that is not
        recursive ignores both.

    A recursive target (BoostSRL's ``setParam: recursion=true.`` in the background, with
    ``use_setparam=True``) lets the trees test the target's *other* atoms through
    ``recursive_<target>`` (docs/srl-boost.md, Recursive targets). Such a model predicts
    all the examples of the database given to ``predict_proba`` / ``decision_function`` /
    ``predict`` / ``score`` jointly, by Gibbs sampling (with ``database=`` and indices:
    the selected examples only). ``fit`` warns (``UserWarning``) about a mode on
    ``recursive_<target>`` without the setting, and about the setting without such a
    mode, as ``srl boost learn`` does.

    Attributes (after ``fit``)
    --------------------------
    estimators_ : list of list of str, the trees' clauses; target_ : str;
    train_log_likelihood_ : ndarray (n_estimators + 1,); settings_ : str or None;
    advice_ : dict or None, what the model was learned with (``file``, ``weight``,
    ``pieces``, ``preferred_examples``, ``avoided_examples``); recursion_ : str or None,
    the recursive predicate (``"recursive_smokes"``) of a model learned with
    ``setParam: recursion=true.``; classes_ : ndarray [False, True].

    Several targets: :func:`srl.fit_targets` (BoostSRL ``-target a,b,c``).
    """

    _params = ("target", "n_estimators") + _COMMON + _ADVICE + _SEARCH

    def __init__(self, target: Optional[str] = None, n_estimators: int = 10, *,
                 neg_pos_ratio: Optional[float] = None, resample_negatives: bool = True,
                 step: float = 1.0, preset: str = "boostsrl",
                 max_tree_depth: Optional[int] = None, node_size: Optional[int] = None,
                 max_leaves: Optional[int] = None, min_leaf_examples: Optional[int] = None,
                 use_setparam: bool = True, random_state: int = 1,
                 advice: Optional[Union[str, "os.PathLike[str]"]] = None,
                 advice_weight: float = 0.5, seed_examples: Optional[int] = None,
                 gibbs_burn_in: int = 20, gibbs_samples: int = 200):
        self._store({k: v for k, v in locals().items() if k != "self"})


class BoostedMLN(_Boosted, _srl.BoostedMLN):  # type: ignore[misc]
    """MLN-Boost (Khot et al. 2011): each tree path is a clause weighted per true
    grounding (BoostSRL ``-mln``), or, with ``mln_clause=True``, weighted clauses learned
    one by one per step (BoostSRL ``-mln -mlnClause``). Parameters and attributes as
    :class:`BoostedRDN` (``seed_examples``, ``gibbs_burn_in``, ``gibbs_samples`` and
    ``recursion_`` included), without ``advice`` / ``advice_weight`` (BoostSRL applies
    advice to RDNs; ``srl boost learn --advice`` refuses ``--model-type mln``).

    Parameters
    ----------
    mln_clause : bool, default False
        MLN-Boost by clauses (BoostSRL ``-mln -mlnClause``; ``srl boost learn --mln-clause``;
        srl-boost's ``BoostKind.MlnClauses``, docs/srl-boost.md, By clauses): each
        boosting step fits a set of weighted clauses to the step's gradients, each clause's
        body found by beam search (width 10). Without ``n_mln_clauses`` /
        ``mln_clause_length``, BoostSRL's own schedule: step m (from 0) learns at most
        ``20 // (m + 1)`` clauses of at most ``m // 4 + 1`` literals.
    n_mln_clauses : int, optional
        Clauses per step with ``mln_clause=True`` (BoostSRL ``-numMLNClause``,
        ``--num-mln-clauses``; >= 1); needs ``mln_clause_length`` too.
    mln_clause_length : int, optional
        Literals per clause body with ``mln_clause=True`` (BoostSRL ``-mlnClauseLen``,
        ``--mln-clause-length``; >= 1); needs ``n_mln_clauses`` too.

    ``fit`` raises ValueError, worded as ``srl boost learn``'s, for one of
    ``n_mln_clauses`` / ``mln_clause_length`` without the other (BoostSRL's loop
    overrides either one alone) or without ``mln_clause=True``, and for a 0.

    Attributes (after ``fit``)
    --------------------------
    As :class:`BoostedRDN` (``advice_`` is always None), and clauses_per_step_ : list of
    int, how many clauses each step learned (``estimators_`` holds the clauses in step
    order, one one-split tree each); empty for tree-based MLN-Boost.
    """

    _params = ("target", "n_estimators") + _COMMON + _SEARCH + _MLN_CLAUSE

    def __init__(self, target: Optional[str] = None, n_estimators: int = 10, *,
                 neg_pos_ratio: Optional[float] = None, resample_negatives: bool = True,
                 step: float = 1.0, preset: str = "boostsrl",
                 max_tree_depth: Optional[int] = None, node_size: Optional[int] = None,
                 max_leaves: Optional[int] = None, min_leaf_examples: Optional[int] = None,
                 use_setparam: bool = True, random_state: int = 1,
                 seed_examples: Optional[int] = None, gibbs_burn_in: int = 20,
                 gibbs_samples: int = 200, mln_clause: bool = False,
                 n_mln_clauses: Optional[int] = None,
                 mln_clause_length: Optional[int] = None):
        self._store({k: v for k, v in locals().items() if k != "self"})


class SoftBoostedRDN(_Boosted, _srl.SoftBoostedRDN):  # type: ignore[misc]
    """Soft-RFGB (Yang et al. 2014): false negatives cost ``alpha``, false positives
    ``beta`` (Eq. 3); ``alpha = beta = 0`` is RFGB. Other parameters and attributes as
    :class:`BoostedRDN`.

    Parameters
    ----------
    alpha, beta : float, default 0
        The soft-margin costs of Eq. 3 (finite).
    advice, advice_weight
        As :class:`BoostedRDN`: with advice the data term of the gradient is Eq. 3's
        soft gradient, ``w * (n_t - n_f) + (1 - w) * soft_gradient``.
    """

    _params = ("target", "n_estimators", "alpha", "beta") + _COMMON + _ADVICE + _SEARCH

    def __init__(self, target: Optional[str] = None, n_estimators: int = 10,
                 alpha: float = 0.0, beta: float = 0.0, *,
                 neg_pos_ratio: Optional[float] = None, resample_negatives: bool = True,
                 step: float = 1.0, preset: str = "boostsrl",
                 max_tree_depth: Optional[int] = None, node_size: Optional[int] = None,
                 max_leaves: Optional[int] = None, min_leaf_examples: Optional[int] = None,
                 use_setparam: bool = True, random_state: int = 1,
                 advice: Optional[Union[str, "os.PathLike[str]"]] = None,
                 advice_weight: float = 0.5, seed_examples: Optional[int] = None,
                 gibbs_burn_in: int = 20, gibbs_samples: int = 200):
        self._store({k: v for k, v in locals().items() if k != "self"})


_B = TypeVar("_B", BoostedRDN, SoftBoostedRDN, BoostedMLN)


def fit_targets(estimator: _B, database: "_srl.Database",
                targets: Union[str, Sequence[str]]) -> Dict[str, _B]:
    """Several targets in one run (BoostSRL ``-target a,b,c``; ``srl boost learn --target
    a,b,c``): one fitted model per target, learned by srl-boost's ``fit_targets``.

    A function rather than a ``target=[...]`` option: an estimator stays one model of
    one target, so ``predict_proba``, ``score``, ``to_json`` and scikit-learn's
    cross-validation keep their meaning; the result holds one estimator per target.

    Each target's examples are its atoms in the database's positives and negatives; the
    other predicates' positives (the other targets' too) are facts its trees may test
    through their modes, as BoostSRL's joint setting. Every target is checked (it has
    examples; no two names denote one predicate) before any is learned; then each is
    learned in list order from a generator seeded by ``random_state``, so each model is
    the one ``estimator`` with ``target=t`` alone learns (bit for bit). With ``advice``,
    each model gets the pieces of advice naming its target.

    Parameters
    ----------
    estimator : BoostedRDN, SoftBoostedRDN or BoostedMLN
        The parameters (its own ``target`` is not used; it is left unfitted).
    database : srl.Database
    targets : str or sequence of str
        ``"a,b,c"`` as BoostSRL writes it, or ``["a", "b", "c"]``.

    Returns
    -------
    dict of str to estimator
        ``{target: fitted estimator}`` in the order given: each a new instance of
        ``estimator``'s class, its parameters ``estimator``'s with ``target`` set.

    Raises
    ------
    TypeError
        ``estimator`` is not a boosting classifier (regression learns one target at a
        time, as ``srl boost learn --regression``).
    ValueError
        An empty list, an empty or repeated name, a target without examples, two names
        of one predicate, and whatever ``fit`` raises.
    """
    if not isinstance(estimator, _Boosted):
        raise TypeError(f"fit_targets takes BoostedRDN, SoftBoostedRDN or BoostedMLN, "
                        f"not {type(estimator).__name__} (regression learns one target "
                        "at a time)")
    names: List[str] = _srl._parse_targets(targets)
    params = estimator.get_params()
    estimator._sync_params()
    models = {t: type(estimator)(**{**params, "target": t}) for t in names}
    _srl_base(type(estimator))._fit_targets(estimator, database, list(models.values()))
    return models


_REG_PARAMS = ("target", "n_estimators", "step", "preset", "max_tree_depth", "node_size",
               "max_leaves", "min_leaf_examples", "use_setparam")


def _rebuild_regressor(params: Dict[str, Any], model_text: Optional[str]):
    """Unpickles a :class:`BoostedRDNRegressor`: the constructor, then the fitted model,
    if any, from its model-file text."""
    est = BoostedRDNRegressor(**params)
    if model_text is not None:
        est._model, _ = _srl._rdn_regression_from_json(model_text)
    return est


class BoostedRDNRegressor:
    """RDN-Boost regression (BoostSRL ``-reg``; srlearn's ``BoostedRDNRegressor``):
    least-squares functional gradient boosting of relational regression trees on numeric
    targets, learned by srl-boost (``RegressionRfgbParams``; docs/srl-boost.md,
    Regression).

    The database's positives are BoostSRL's regression examples,
    ``regressionExample(target(args), value).``; it has no negatives. The model is
    ``F(x) = step * sum_m tree_m(x)`` from ``F0 = 0``, as BoostSRL's.

    Parameters
    ----------
    target : str, optional
        The target predicate (required by ``fit``; matched exactly, else ignoring case).
    n_estimators : int, default 10
        Trees (BoostSRL ``-trees``).
    step : float, default 1.0
        Step length multiplying each tree (> 0).
    preset : {"boostsrl", "two_literal"}, default "boostsrl"
        Tree limits to start from (as :class:`BoostedRDN`).
    max_tree_depth, node_size, max_leaves, min_leaf_examples : int, optional
        Override the preset.
    use_setparam : bool, default True
        Apply the background's ``setParam:`` lines before the explicit arguments.

    Attributes (after ``fit``)
    --------------------------
    estimators_ : list of list of str -- the trees' clauses (leaf values in the target's
        units); target_ : str; train_mse_ : ndarray (n_estimators + 1,), the training
        mean squared error before the first tree and after each (the convergence
        record); settings_ : str or None.

    Raises
    ------
    ValueError from ``fit`` for bad parameters (negative or fractional whole numbers
    too), no target, no example; srl.ParseError (file and line) for a malformed
    ``regressionExample``; srl.NotFittedError before ``fit``.
    """

    def __init__(self, target: Optional[str] = None, n_estimators: int = 10, *,
                 step: float = 1.0, preset: str = "boostsrl",
                 max_tree_depth: Optional[int] = None, node_size: Optional[int] = None,
                 max_leaves: Optional[int] = None, min_leaf_examples: Optional[int] = None,
                 use_setparam: bool = True):
        self.target = target
        self.n_estimators = n_estimators
        self.step = step
        self.preset = preset
        self.max_tree_depth = max_tree_depth
        self.node_size = node_size
        self.max_leaves = max_leaves
        self.min_leaf_examples = min_leaf_examples
        self.use_setparam = use_setparam

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor arguments, the very objects given (scikit-learn's
        ``get_params``)."""
        return {k: getattr(self, k) for k in _REG_PARAMS}

    def set_params(self, **params: Any) -> "BoostedRDNRegressor":
        """Sets constructor arguments by name; returns ``self``. Raises ValueError for an
        unknown name."""
        for k, v in params.items():
            if k not in _REG_PARAMS:
                raise ValueError(f"invalid parameter {k!r}; valid parameters: "
                                 + ", ".join(_REG_PARAMS))
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in _REG_PARAMS)
        return f"srl.BoostedRDNRegressor({args})"

    def __sklearn_tags__(self):
        """scikit-learn's tags (imported lazily): a regressor over a relational
        database, not over an array."""
        from sklearn.utils import InputTags, RegressorTags, Tags, TargetTags  # type: ignore[import-untyped]

        return Tags(estimator_type="regressor", target_tags=TargetTags(required=False),
                    transformer_tags=None, regressor_tags=RegressorTags(),
                    classifier_tags=None, input_tags=InputTags(two_d_array=False))

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "_model")

    def __reduce__(self):
        text = self.to_json() if hasattr(self, "_model") else None
        return (_rebuild_regressor, (self.get_params(), text))

    def _fold(self, X, database, target: Optional[str] = None):
        return _fold_indices(self, X, database, target, _srl._select_regression)

    def fit(self, X: Any = None, y: Any = None, *,
            database: Any = None) -> "BoostedRDNRegressor":
        """Learns the trees (releases the GIL); returns ``self``. ``fit(database)``: an
        :class:`srl.Database` whose positives are ``regressionExample(...)`` atoms (``y``
        ignored: the values are in the examples); ``fit(X, y, database=db)``: only the
        examples at the indices ``X`` of the regression split (the form of scikit-learn's
        cross-validation with ``params={"database": db}``; ``db`` is kept for ``predict``
        / ``score`` on indices, not pickled)."""
        _check_whole({k: getattr(self, k) for k in _REG_PARAMS if k in _WHOLE})
        if self.target is None:
            raise ValueError("target is None: give the target predicate, e.g. "
                             "BoostedRDNRegressor(target=\"medv\")")
        self.__dict__.pop("_model", None)
        self.__dict__.pop("_fit_database", None)
        if database is not None:
            X, _ = self._fold(X, database, self.target)
        elif X is None:
            raise ValueError("fit needs a database: fit(database) or fit(X, y, database=db)")
        self._model = _srl._fit_rdn_regression(
            X, str(self.target), int(self.n_estimators), float(self.step),
            str(self.preset), self.max_tree_depth, self.node_size, self.max_leaves,
            self.min_leaf_examples, bool(self.use_setparam))
        if database is not None:
            self._fit_database = database
        return self

    def _fitted(self):
        if not hasattr(self, "_model"):
            raise _srl.NotFittedError("this BoostedRDNRegressor is not fitted yet: call "
                                      "fit(database) or load it with from_json")
        return self._model

    def _values_and_predictions(self, X: Any, database: Any):
        model = self._fitted()
        if database is None and isinstance(X, _srl.Database):
            return model.predict(X)
        sub, inverse = self._fold(X, database)
        values, pred = model.predict(sub)
        return values[inverse], pred[inverse]

    def predict(self, X: Any, *, database: Any = None) -> np.ndarray:
        """Predicted values of the database's regression examples of ``target_`` (or of
        the examples at the indices ``X`` with ``database=``, in ``X``'s order), float64
        of shape (n,), target units."""
        return self._values_and_predictions(X, database)[1]

    def values(self, X: Any, *, database: Any = None) -> np.ndarray:
        """The true values written in the regression examples, float64 (n,)."""
        return self._values_and_predictions(X, database)[0]

    def score(self, X: Any, y: Any = None, *, database: Any = None) -> float:
        """R² of :meth:`predict` against the examples' values, or against ``y`` (shape
        (n,)) when given (scikit-learn's regressor ``score``; srl-eval's ``r2_score``)."""
        values, pred = self._values_and_predictions(X, database)
        truth = values if y is None else np.asarray(y, dtype=np.float64)
        return _srl._regression_metrics(list(pred), list(truth))[2]

    def metrics(self, database: Any) -> Dict[str, float]:
        """``{"rmse", "mae", "r2"}`` of :meth:`predict` on the database (srl-eval)."""
        values, pred = self._fitted().predict(database)
        rmse, mae, r2 = _srl._regression_metrics(list(pred), list(values))
        return {"rmse": rmse, "mae": mae, "r2": r2}

    @property
    def estimators_(self):
        """The trees' clauses, one list per tree."""
        return self._fitted().estimators

    @property
    def target_(self) -> str:
        """The target predicate the model was learned for."""
        return self._fitted().target

    @property
    def feature_importances_(self):
        """How often each predicate is a splitting criterion over all trees, a
        ``collections.Counter`` (as the boosting classifiers' ``feature_importances_``)."""
        from collections import Counter

        return Counter(self._fitted().feature_counts())

    @property
    def train_mse_(self) -> np.ndarray:
        """Training mean squared error before the first tree and after each."""
        return self._fitted().train_mse

    @property
    def settings_(self) -> Optional[str]:
        """The background settings applied when fitting, or None."""
        return self._fitted().settings

    def to_json(self, path: Any = None, *, overwrite: bool = False) -> Optional[str]:
        """The model file (``kind`` ``rdn-regression``, the file of ``srl boost learn
        --regression``): returned as text without ``path``, else written atomically
        (FileExistsError for an existing file unless ``overwrite``)."""
        import json

        params = {k: getattr(self, k) for k in _REG_PARAMS}
        text = self._fitted().to_json("BoostedRDNRegressor", json.dumps(params),
                                      f"{self!r}.fit (Python bindings)")
        if path is None:
            return text
        _srl._write_model_text(os.fspath(path), text, overwrite)
        return None

    @classmethod
    def from_json(cls, path: Any) -> "BoostedRDNRegressor":
        """Reads a model file written by ``to_json`` or ``srl boost learn --regression``."""
        p = os.fspath(path)
        with open(p, encoding="utf-8") as f:
            return cls._from_text(f.read(), p)

    @classmethod
    def from_json_string(cls, text: str) -> "BoostedRDNRegressor":
        """As :meth:`from_json`, from the file's text."""
        return cls._from_text(text, None)

    @classmethod
    def _from_text(cls, text: str, source: Optional[str]) -> "BoostedRDNRegressor":
        import json

        model, estimator = _srl._rdn_regression_from_json(text, source)
        info = json.loads(estimator)
        params = info.get("params", {}) if isinstance(info, dict) else {}
        est = cls(**{k: v for k, v in params.items() if k in _REG_PARAMS})
        est.target = model.target
        est._model = model
        return est
