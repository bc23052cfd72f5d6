"""Cost-sensitive decisions for any probabilistic classifier: :class:`CostSensitiveClassifier`.

The decision rule runs in Rust (srl-learn's ``min_expected_cost``: Sen & Getoor 2006 §4's
node-only rule, Elkan 2001 Eq. 1), and so do the calibration checks (srl-eval's
``brier_score`` and ``reliability_curve``); the optional recalibration is scikit-learn's
``CalibratedClassifierCV`` (Platt's sigmoid or isotonic regression) fitted on a held-out
validation split. This module holds parameters and conversions only.
"""

from __future__ import annotations

import numbers
from typing import Any, Dict, Optional

import numpy as np

from . import _srl

_PARAMS = ("estimator", "cost_matrix", "calibration", "validation_fraction", "random_state")


def _clone(estimator: Any) -> Any:
    """scikit-learn's ``clone`` when scikit-learn is installed, else a new instance from
    ``get_params()`` (what ``clone`` does for a flat estimator)."""
    try:
        from sklearn.base import clone  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - CI installs scikit-learn
        return type(estimator)(**estimator.get_params(deep=False))
    return clone(estimator)


class CostSensitiveClassifier:
    """Wraps any classifier with ``predict_proba`` (srl's or scikit-learn's) and predicts
    the class of least expected cost,

    ``y_i = argmin_a sum_t C_i[a, t] * P(t | x_i)``,

    with one cost matrix for all examples or one per example (costs that depend on the
    example, e.g. on an amount). Without a cost matrix it predicts the most probable
    class. scikit-learn's ``TunedThresholdClassifierCV`` / ``FixedThresholdClassifier`` are
    binary-only; this handles any number of classes.

    The decision is only as good as the probabilities: :meth:`calibration_report` gives
    their Brier score and reliability curve, and ``calibration="sigmoid"`` (Platt) or
    ``"isotonic"`` refits them on a validation split held out of ``fit``'s data.

    Parameters
    ----------
    estimator : object
        A classifier with ``fit(X, y)``, ``predict_proba(X)`` and ``classes_`` (cloned by
        ``fit``; the given object is not changed).
    cost_matrix : array of float, shape (k, k), optional
        ``cost_matrix[a, t]``: the cost of predicting class ``classes_[a]`` when the truth
        is ``classes_[t]`` (rows = predicted, columns = true, as in srl-graph's
        ``CostMatrix`` and Sen & Getoor 2006). Any finite values (negative = benefit).
        Default: the 0-1 loss, i.e. the most probable class.
    calibration : {None, "sigmoid", "isotonic"}
        Recalibrate the probabilities on a stratified validation split of
        ``validation_fraction`` of the training rows (scikit-learn's
        ``CalibratedClassifierCV``, needs scikit-learn); the estimator is fitted on the
        rest. Default None: the estimator's own probabilities, fitted on every row.
    validation_fraction : float in (0, 1)
        The share of rows held out for the recalibration (only with ``calibration``).
    random_state : int or None
        Seed of the validation split (same seed, same split).

    Attributes
    ----------
    estimator_ : the fitted clone of ``estimator``.
    calibrated_ : the fitted ``CalibratedClassifierCV`` or None.
    classes_ : ndarray, shape (k,) -- the estimator's classes, the cost matrices' order.
    n_features_in_ : int -- when the estimator defines it.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression  # doctest: +SKIP
    >>> costs = [[0, 10], [1, 0]]  # a missed positive costs 10, a false alarm 1
    >>> clf = srl.CostSensitiveClassifier(LogisticRegression(), cost_matrix=costs)
    >>> clf.fit(X, y).predict(X)  # doctest: +SKIP
    """

    def __init__(self, estimator: Any, cost_matrix: Any = None,
                 calibration: Optional[str] = None, validation_fraction: float = 0.25,
                 random_state: Optional[int] = None) -> None:
        self.estimator = estimator
        self.cost_matrix = cost_matrix
        self.calibration = calibration
        self.validation_fraction = validation_fraction
        self.random_state = random_state

    # -- scikit-learn's parameter protocol, nested parameters included -------------------
    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor arguments; with ``deep``, also the estimator's as
        ``estimator__NAME``."""
        out = {k: getattr(self, k) for k in _PARAMS}
        if deep and hasattr(self.estimator, "get_params"):
            for k, v in self.estimator.get_params(deep=True).items():
                out[f"estimator__{k}"] = v
        return out

    def set_params(self, **params: Any) -> "CostSensitiveClassifier":
        """Sets constructor arguments, and the estimator's as ``estimator__NAME``; returns
        ``self``. Raises ValueError for an unknown name."""
        nested: Dict[str, Any] = {}
        for k, v in params.items():
            head, sep, rest = k.partition("__")
            if sep and head == "estimator":
                nested[rest] = v
            elif k in _PARAMS:
                setattr(self, k, v)
            else:
                raise ValueError(f"invalid parameter {k!r}; valid parameters: "
                                 + ", ".join(_PARAMS))
        if nested:
            self.estimator.set_params(**nested)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in _PARAMS)
        return f"srl.CostSensitiveClassifier({args})"

    def __sklearn_tags__(self):
        """scikit-learn's tags (imported lazily): a classifier, with the estimator's input
        tags where it has them."""
        from sklearn.utils import get_tags  # type: ignore[import-untyped]

        tags = get_tags(self.estimator)
        tags.estimator_type = "classifier"
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "estimator_")

    # -- fitting ---------------------------------------------------------------------------
    def _check_params(self) -> None:
        if self.calibration not in (None, "sigmoid", "isotonic"):
            raise ValueError(f"calibration = {self.calibration!r}: expected None, "
                             "'sigmoid' or 'isotonic'")
        v = self.validation_fraction
        if not (isinstance(v, numbers.Real) and 0.0 < float(v) < 1.0):
            raise ValueError(f"validation_fraction = {v!r}: expected a number in (0, 1)")
        if not hasattr(self.estimator, "predict_proba"):
            raise ValueError(f"estimator {self.estimator!r} has no predict_proba")

    def fit(self, X: Any, y: Any, **fit_params: Any) -> "CostSensitiveClassifier":
        """Fits a clone of the estimator (and the recalibration, if asked) and checks the
        cost matrix against its classes.

        Parameters
        ----------
        X : array-like, shape (n, d) -- whatever the estimator takes.
        y : array-like, shape (n,) -- class labels.
        **fit_params : passed to the estimator's ``fit`` (sliced to the fitting rows when
            ``calibration`` holds rows out and the value is an array of length n).

        Returns
        -------
        self

        Raises
        ------
        ValueError for bad parameters, a cost matrix that is not (k, k) for the k classes
        the estimator learned, or non-finite costs; ImportError for ``calibration``
        without scikit-learn.
        """
        self._check_params()
        for attr in ("estimator_", "calibrated_", "classes_", "n_features_in_"):
            self.__dict__.pop(attr, None)
        est = _clone(self.estimator)
        calibrated = None
        if self.calibration is None:
            est.fit(X, y, **fit_params)
        else:
            from sklearn.calibration import CalibratedClassifierCV  # type: ignore[import-untyped]
            from sklearn.model_selection import train_test_split  # type: ignore[import-untyped]
            from sklearn.utils import _safe_indexing  # type: ignore[import-untyped]

            n = len(y)
            rows = np.arange(n)
            yy = np.asarray(y)
            fit_rows, val_rows = train_test_split(
                rows, test_size=float(self.validation_fraction),
                random_state=self.random_state, stratify=yy)
            sliced = {k: (_safe_indexing(v, fit_rows) if hasattr(v, "__len__")
                          and len(v) == n else v) for k, v in fit_params.items()}
            est.fit(_safe_indexing(X, fit_rows), yy[fit_rows], **sliced)
            try:  # scikit-learn >= 1.6
                from sklearn.frozen import FrozenEstimator  # type: ignore[import-untyped]

                calibrated = CalibratedClassifierCV(FrozenEstimator(est),
                                                    method=self.calibration)
            except ImportError:  # pragma: no cover - older scikit-learn
                calibrated = CalibratedClassifierCV(est, method=self.calibration, cv="prefit")
            calibrated.fit(_safe_indexing(X, val_rows), yy[val_rows])
        classes = np.asarray(est.classes_)
        if self.cost_matrix is not None:
            self._shared_costs(len(classes))
        self.estimator_ = est
        self.calibrated_ = calibrated
        self.classes_ = classes
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        return self

    # -- prediction ------------------------------------------------------------------------
    def _fitted(self) -> None:
        if not hasattr(self, "estimator_"):
            raise _srl.NotFittedError(
                "this CostSensitiveClassifier is not fitted yet; call fit first")

    def _shared_costs(self, k: int) -> np.ndarray:
        c = np.asarray(self.cost_matrix, dtype=np.float64)
        if c.shape != (k, k):
            raise ValueError(f"cost_matrix: expected shape ({k}, {k}) for the {k} classes "
                             f"the estimator learned, got {c.shape}")
        if not np.isfinite(c).all():
            raise ValueError("cost_matrix: every cost must be finite")
        return c

    def _costs(self, costs: Any, n: int) -> np.ndarray:
        k = len(self.classes_)
        if costs is None:
            if self.cost_matrix is None:
                return 1.0 - np.eye(k)
            return self._shared_costs(k)
        c = np.asarray(costs, dtype=np.float64)
        if c.shape not in ((k, k), (n, k, k)):
            raise ValueError(f"costs: expected shape ({k}, {k}) or ({n}, {k}, {k}), "
                             f"got {c.shape}")
        return c

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n, k) in ``classes_`` order: the recalibrated ones
        when ``calibration`` is set, else the estimator's."""
        self._fitted()
        model = self.calibrated_ if self.calibrated_ is not None else self.estimator_
        return np.asarray(model.predict_proba(X), dtype=np.float64)

    def _decide(self, X: Any, costs: Any):
        p = self.predict_proba(X)
        return _srl._min_expected_cost(p, self._costs(costs, p.shape[0]))

    def predict(self, X: Any, costs: Any = None) -> np.ndarray:
        """The class of least expected cost for each row.

        Parameters
        ----------
        X : array-like, shape (n, d).
        costs : array of float, shape (k, k) or (n, k, k), optional -- cost matrices for
            these rows (rows = predicted, columns = true); default ``cost_matrix``.

        Returns
        -------
        ndarray, shape (n,) -- labels from ``classes_``.

        Raises
        ------
        srl.NotFittedError before ``fit``; ValueError for costs of the wrong shape or
        non-finite values, or probabilities that are negative or not finite.
        """
        labels, _ = self._decide(X, costs)
        return self.classes_[labels]

    def expected_cost(self, X: Any, costs: Any = None) -> np.ndarray:
        """The expected cost ``sum_t C_i[a_i, t] P(t | x_i)`` of each row's decision
        ``a_i``, shape (n,), in the costs' units (arguments as :meth:`predict`)."""
        _, expected = self._decide(X, costs)
        return expected

    def _label_index(self, y: Any) -> np.ndarray:
        y = np.asarray(y)
        idx = np.searchsorted(self.classes_, y)
        idx = np.clip(idx, 0, len(self.classes_) - 1)
        bad = self.classes_[idx] != y
        if bad.any():
            raise ValueError(f"y holds labels the estimator never saw: "
                             f"{np.unique(y[bad])[:5].tolist()}")
        return idx.astype(np.int64)

    def mean_cost(self, X: Any, y: Any, costs: Any = None) -> float:
        """The realised cost of :meth:`predict` against the true labels ``y``, averaged
        over the rows: ``(1/n) sum_i C_i[predicted_i, y_i]``. Use it (negated) as a
        scikit-learn ``scoring`` to tune for cost."""
        labels, _ = self._decide(X, costs)
        t = self._label_index(y)
        realised = _srl._realised_costs([int(a) for a in labels], [int(b) for b in t],
                                        self._costs(costs, len(t)))
        return float(np.mean(realised))

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy of :meth:`predict` (scikit-learn's classifier ``score``; see
        :meth:`mean_cost` for the cost)."""
        pred = self.predict(X)
        return float(np.average(pred == np.asarray(y), weights=sample_weight))

    def calibration_report(self, X: Any, y: Any, n_bins: int = 10,
                           class_index: Optional[int] = None) -> Dict[str, Any]:
        """How well the probabilities the decisions use are calibrated on ``(X, y)``.

        Parameters
        ----------
        X, y : held-out rows and their labels.
        n_bins : int >= 1 -- equal-width bins over [0, 1].
        class_index : int, optional -- the one-vs-rest curve of ``classes_[class_index]``
            (scikit-learn's ``calibration_curve`` with ``strategy="uniform"``, empty bins
            kept); default the top-label curve (Guo et al. 2017).

        Returns
        -------
        dict with ``brier`` (multiclass Brier score, ``mean sum_c (p_c - [y = c])^2``, in
        [0, 2]; twice scikit-learn's binary ``brier_score_loss``), ``ece`` (expected
        calibration error in [0, 1]) and ``bins``: a dict of arrays of shape (n_bins,),
        ``lower``, ``upper``, ``count``, ``mean_predicted`` and ``observed_frequency``
        (NaN for an empty bin).
        """
        p = self.predict_proba(X)
        t = self._label_index(y)
        if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 1:
            raise ValueError(f"n_bins = {n_bins!r}: expected a whole number >= 1")
        ci = -1 if class_index is None else int(class_index)
        brier, ece, lo, hi, count, mean_p, freq = _srl._calibration_report(
            p, t, int(n_bins), ci)
        return {
            "brier": brier,
            "ece": ece,
            "bins": {"lower": lo, "upper": hi, "count": count,
                     "mean_predicted": mean_p, "observed_frequency": freq},
        }
