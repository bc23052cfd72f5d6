"""Tabular classifiers with scikit-learn's estimator contract (issue 34):
:class:`LogisticRegression`, :class:`NaiveBayes` and :class:`UKNN`.

Each learner runs in Rust (srl-learn ``LogisticRegressionParams::fit`` / ``Uknn``,
srl-bayes ``NaiveBayesParams::fit``, through ``srl._srl``); these classes only keep the
constructor arguments, validate and convert ``X`` / ``y`` (labels of any hashable kind
are mapped to ``0..k-1`` and back), and hold the fitted Rust model. They do not import
scikit-learn: ``__sklearn_tags__`` imports it lazily, when scikit-learn asks for the tags.
Fitted models pickle (and ``copy.deepcopy``) through the Rust model's serde JSON, bit for
bit.
"""

from __future__ import annotations

import numbers
import sys
import warnings
from typing import Any, Dict, Optional, Tuple

import numpy as np
import scipy.sparse as sp  # type: ignore[import-untyped]

from . import _srl


def _data_conversion_warning() -> type:
    """scikit-learn's ``DataConversionWarning`` once scikit-learn has been imported, else
    ``UserWarning`` (srl never imports scikit-learn for this)."""
    if sys.modules.get("sklearn") is None:
        return UserWarning
    try:
        from sklearn.exceptions import DataConversionWarning  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - a broken scikit-learn
        return UserWarning
    return DataConversionWarning


_NOT_FITTED: Dict[str, type] = {}


def _not_fitted_error() -> type:
    """The exception for an estimator used before ``fit``: :class:`srl.NotFittedError` (a
    ``ValueError``); once scikit-learn has been imported, a subclass that is also
    ``sklearn.exceptions.NotFittedError``, which scikit-learn's checks expect. srl never
    imports scikit-learn for this."""
    if sys.modules.get("sklearn") is None:
        return _srl.NotFittedError
    if "sk" not in _NOT_FITTED:
        try:
            from sklearn.exceptions import NotFittedError as SkNotFitted
        except ImportError:  # pragma: no cover - a broken scikit-learn
            return _srl.NotFittedError
        _NOT_FITTED["sk"] = type("NotFittedError", (_srl.NotFittedError, SkNotFitted), {
            "__module__": "srl",
            "__doc__": "srl.NotFittedError that is also sklearn.exceptions.NotFittedError.",
        })
    return _NOT_FITTED["sk"]


def _feature_names(X) -> Optional[np.ndarray]:
    """The column names of a data frame when they are all strings, else ``None``."""
    cols = getattr(X, "columns", None)
    if cols is None or sp.issparse(X):
        return None
    names = np.asarray(list(cols), dtype=object)
    if len(names) and all(isinstance(c, str) for c in names):
        return names
    return None


def _shape_msg(n: int, d: int) -> str:
    return f"(shape=({n}, {d}))"


def _convert_X(X, owner: str, allow_nan: bool):
    """``X`` as what ``srl._srl`` reads: a C-contiguous float64 (n, d) array or the CSR
    parts ``(indptr, indices, data, d)``; plus its shape.

    Raises ValueError for complex values, fewer or more than 2 dimensions, no sample, no
    feature, NaN (unless ``allow_nan``) or infinity; TypeError for entries that are not
    numbers.
    """
    if X is None:
        raise ValueError(f"{owner}: X is None; expected a 2-dimensional array")
    if sp.issparse(X):
        if np.issubdtype(X.dtype, np.complexfloating):
            raise ValueError("Complex data not supported")
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-dimensional X, got {X.ndim} dimensions")
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()
        X.sort_indices()
        data = X.data
        n, d = X.shape
    else:
        raw = X if isinstance(X, np.ndarray) else np.asarray(X)
        if np.iscomplexobj(raw):
            raise ValueError("Complex data not supported")
        arr = np.asarray(raw, dtype=np.float64)
        if arr.ndim != 2:
            if arr.ndim == 1:
                raise ValueError(
                    f"Expected 2D array, got 1D array instead: {arr!r}.\nReshape your data "
                    "either using array.reshape(-1, 1) if your data has a single feature or "
                    "array.reshape(1, -1) if it contains a single sample.")
            raise ValueError(f"Expected a 2-dimensional X, got shape {arr.shape}")
        n, d = arr.shape
        data = arr
    if n == 0:
        raise ValueError(f"Found array with 0 sample(s) {_shape_msg(n, d)} while a minimum "
                         "of 1 is required.")
    if d == 0:
        raise ValueError(f"Found array with 0 feature(s) {_shape_msg(n, d)} while a minimum "
                         "of 1 is required.")
    if np.isinf(data).any():
        raise ValueError("Input X contains infinity or a value too large for "
                         "dtype('float64').")
    if not allow_nan and np.isnan(data).any():
        raise ValueError(f"Input X contains NaN. {owner} does not accept missing values.")
    if sp.issparse(X):
        native: Any = (np.ascontiguousarray(X.indptr, dtype=np.int64),
                       np.ascontiguousarray(X.indices, dtype=np.int64),
                       np.ascontiguousarray(X.data, dtype=np.float64), int(d))
    else:
        native = np.ascontiguousarray(data, dtype=np.float64)
    return native, n, d, data


def _check_labels(y) -> np.ndarray:
    """``y`` as a 1-dimensional array of class labels.

    Raises ValueError for ``None``, complex values, NaN / infinity, a 2-D ``y`` with more
    than one column, or real-valued (continuous) targets; warns (DataConversionWarning)
    for a column vector.
    """
    if y is None:
        raise ValueError("this classifier requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if np.iscomplexobj(y):
        raise ValueError("Complex data not supported")
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please "
                      "change the shape of y to (n_samples, ), for example using ravel().",
                      _data_conversion_warning(), stacklevel=3)
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    if y.dtype.kind == "f":
        if np.isnan(y).any():
            raise ValueError("Input y contains NaN.")
        if np.isinf(y).any():
            raise ValueError("Input y contains infinity or a value too large for "
                             "dtype('float64').")
        if (y != np.round(y)).any():
            raise ValueError("Unknown label type: continuous. A classifier needs class "
                             "labels (integers, strings, ...), not real-valued targets.")
    elif y.dtype.kind == "O":
        reals = [v for v in y if isinstance(v, numbers.Real) and not isinstance(v, bool)]
        if any(v != v for v in reals):
            raise ValueError("Input y contains NaN.")
        if any(float(v) != round(float(v)) for v in reals if np.isfinite(float(v))):
            raise ValueError("Unknown label type: continuous. A classifier needs class "
                             "labels (integers, strings, ...), not real-valued targets.")
    elif y.dtype.kind not in "biuUS":
        raise ValueError(f"Unknown label type: y of dtype {y.dtype}")
    return y


def _check_sample_weight(sample_weight, n: int) -> Optional[np.ndarray]:
    """``sample_weight`` as (n,) float64 (``None`` stays ``None``).

    Raises ValueError for the wrong shape, NaN / infinity, a negative weight or weights
    that are all zero.
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n,)}!")
    if not np.isfinite(w).all():
        raise ValueError("sample_weight contains NaN or infinity")
    if (w < 0).any():
        raise ValueError("Negative values in sample_weight: weights must be >= 0")
    if not (w > 0).any():
        raise ValueError("Sample weights must contain at least one non-zero number (all "
                         "weights are zero)")
    return np.ascontiguousarray(w)


def _check_real(name: str, value, low: float, *, strict: bool, allow_inf: bool = False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} = {value!r}: expected a real number")
    v = float(value)
    ok = (v > low if strict else v >= low) and (np.isfinite(v) or (allow_inf and v > 0))
    if not ok:
        raise ValueError(f"{name} = {value!r}: expected a {'finite ' if not allow_inf else ''}"
                         f"number {'>' if strict else '>='} {low}")
    return v


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} = {value!r}: expected a whole number >= {low}")
    return int(value)


class _TabularClassifier:
    """Shared scikit-learn machinery: parameters, input checks, label mapping, tags."""

    _params: Tuple[str, ...] = ()
    _allow_nan = False
    _positive_only = False
    _poor_score = False

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor arguments, the very objects given (scikit-learn's
        ``get_params``; ``deep`` has no effect: no parameter is an estimator)."""
        return {k: getattr(self, k) for k in self._params}

    def set_params(self, **params):
        """Sets constructor arguments by name (checked by the next ``fit``); returns
        ``self``.

        Raises
        ------
        ValueError
            An unknown name.
        """
        for k in params:
            if k not in self._params:
                raise ValueError(f"invalid parameter {k!r} for {type(self).__name__}; valid "
                                 "parameters: " + ", ".join(self._params))
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._params)
        return f"srl.{type(self).__name__}({args})"

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "_model")

    def __sklearn_tags__(self):
        """scikit-learn's tags (imported lazily: srl does not depend on scikit-learn): a
        multi-class classifier of dense or sparse 2-D arrays."""
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
            classifier_tags=ClassifierTags(multi_class=True, multi_label=False,
                                           poor_score=self._poor_score),
            input_tags=InputTags(sparse=True, allow_nan=self._allow_nan,
                                 positive_only=self._positive_only),
        )

    def _check_fitted(self) -> None:
        if not hasattr(self, "_model"):
            raise _not_fitted_error()(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with "
                "appropriate arguments before using this estimator.")

    def _fit_inputs(self, X, y, sample_weight=None):
        """Checks and converts the training data; sets ``n_features_in_``,
        ``feature_names_in_``, ``classes_``; returns ``(native X, dense-or-sparse values,
        class indices (n,) int64, weights)``."""
        labels = _check_labels(y)
        native, n, d, data = _convert_X(X, type(self).__name__, self._allow_nan)
        if labels.shape[0] != n:
            raise ValueError("Found input variables with inconsistent numbers of samples: "
                             f"[{n}, {labels.shape[0]}]")
        weights = _check_sample_weight(sample_weight, n)
        try:
            classes, codes = np.unique(labels, return_inverse=True)
        except TypeError as e:
            raise ValueError(f"Unknown label type: labels that cannot be sorted ({e})") from None
        self.classes_ = classes
        self.n_features_in_ = d
        names = _feature_names(X)
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return native, data, np.ascontiguousarray(codes.ravel(), dtype=np.int64), weights

    def _predict_input(self, X):
        """Checks ``X`` against the fitted model; returns what ``srl._srl`` reads.

        Raises srl.NotFittedError before ``fit``; ValueError for a different number of
        features (or other feature names) than at ``fit`` and for bad values."""
        self._check_fitted()
        fitted_names = getattr(self, "feature_names_in_", None)
        names = _feature_names(X)
        if fitted_names is not None and names is not None:
            if len(names) != len(fitted_names) or (names != fitted_names).any():
                raise ValueError("The feature names should match those that were passed "
                                 "during fit.")
        elif fitted_names is not None:
            warnings.warn(f"X does not have valid feature names, but {type(self).__name__} "
                          "was fitted with feature names", UserWarning, stacklevel=3)
        elif names is not None:
            warnings.warn(f"X has feature names, but {type(self).__name__} was fitted "
                          "without feature names", UserWarning, stacklevel=3)
        if sp.issparse(X) or hasattr(X, "shape"):
            shape = X.shape
            if len(shape) == 2 and shape[1] != self.n_features_in_:
                raise ValueError(f"X has {shape[1]} features, but {type(self).__name__} is "
                                 f"expecting {self.n_features_in_} features as input.")
        native, _, d, data = _convert_X(X, type(self).__name__, self._allow_nan)
        if d != self.n_features_in_:
            raise ValueError(f"X has {d} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input.")
        self._check_values(data)
        return native

    def _check_values(self, data) -> None:
        """Model-specific value checks of X (after the generic ones)."""

    def predict(self, X):
        """The most probable class of each row.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix, shape (n, n_features_in_)

        Returns
        -------
        numpy.ndarray, shape (n,), of ``classes_``' dtype.

        Raises
        ------
        srl.NotFittedError
            Before ``fit``.
        ValueError
            The wrong number of features, or values the model cannot take.
        """
        native = self._predict_input(X)
        codes, _ = self._model.predict(native)
        return self.classes_[codes]

    def predict_proba(self, X):
        """Class probabilities, columns in the order of ``classes_``.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix, shape (n, n_features_in_)

        Returns
        -------
        numpy.ndarray, shape (n, len(classes_)), float64, rows summing to 1.

        Raises
        ------
        srl.NotFittedError
            Before ``fit``.
        ValueError
            As ``predict``.
        """
        native = self._predict_input(X)
        return self._model.predict_proba(native)

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy of ``predict(X)`` against ``y`` (scikit-learn's classifier ``score``).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix, shape (n, n_features_in_)
        y : array-like, shape (n,) -- true labels.
        sample_weight : array-like, shape (n,), optional -- weights of the rows.

        Returns
        -------
        float in [0, 1]: the (weighted) share of rows predicted correctly.

        Raises
        ------
        srl.NotFittedError
            Before ``fit``.
        ValueError
            As ``predict``; ``y`` or ``sample_weight`` of the wrong length.
        """
        pred = self.predict(X)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.shape != pred.shape:
            raise ValueError(f"y has {y.shape[0]} labels for {pred.shape[0]} rows of X")
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        return float(np.average(pred == y, weights=w))


class LogisticRegression(_TabularClassifier):
    """Multinomial logistic regression with an L2 (Gaussian) prior, fitted by L-BFGS in
    Rust (srl-learn ``LogisticRegression``): the LOGREG baseline of Sen & Getoor (2006).

    The weights ``W`` (k x d) and intercepts ``b`` maximise the posterior, i.e. minimise

    ``J(W, b) = sum_i s_i * [log sum_c exp(W_c x_i + b_c) - (W_{y_i} x_i + b_{y_i})] +
    lambda * ||W||^2``

    (``s_i`` the sample weights; intercepts are not penalised). ``P(y = c | x)`` is the
    softmax over all ``k`` classes, also for ``k = 2``.

    Parameters
    ----------
    C : float or None, default None
        scikit-learn's inverse regularisation strength: ``lambda = 1 / (2 C)``, so
        ``srl.LogisticRegression(C=C)`` minimises the objective of scikit-learn's
        ``LogisticRegression(C=C)`` (multinomial, ``penalty="l2"``) divided by ``C``: the
        same model. ``C = inf`` removes the prior. ``None``: the prior grows with the
        training set, ``lambda = lambda_per_sample * sum_i s_i``.
    lambda_per_sample : float, default 1e-4
        The prior per unit of sample weight when ``C`` is None; ``1e-4`` is Sen & Getoor
        (2006, Section 6)'s ``lambda = |Y| * 10^-4`` (after Zhang & Oles 2001). Ignored
        when ``C`` is given.
    fit_intercept : bool, default True
        Fit one unpenalised intercept per class.
    max_iter : int, default 500
        L-BFGS iteration limit (``>= 1``); ``converged_`` says whether it was reached.
    tol : float, default 1e-8
        Stop when the gradient norm divided by the total sample weight is below ``tol``.

    Attributes
    ----------
    classes_ : ndarray (k,) -- the labels, sorted.
    n_features_in_ : int
    feature_names_in_ : ndarray of str -- only when ``X`` was a data frame with string
        column names.
    coef_ : ndarray (k, n_features_in_) float64 -- ``W`` (one row per class, also for two
        classes, where scikit-learn reports the single row ``W_1 - W_0``).
    intercept_ : ndarray (k,) float64 -- ``b`` (zeros without ``fit_intercept``).
    lambda_ : float -- the prior strength used.
    n_iter_ : int -- L-BFGS iterations run.
    converged_ : bool
    """

    _params = ("C", "lambda_per_sample", "fit_intercept", "max_iter", "tol")

    def __init__(self, C: Optional[float] = None, lambda_per_sample: float = 1e-4,
                 fit_intercept: bool = True, max_iter: int = 500, tol: float = 1e-8):
        self.C = C
        self.lambda_per_sample = lambda_per_sample
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y, sample_weight=None):
        """Fits the model (in Rust, releasing the GIL).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix, shape (n, d) -- finite real values.
        y : array-like, shape (n,) -- class labels (any sortable kind: ints, strings, ...).
        sample_weight : array-like, shape (n,), optional -- finite weights >= 0, not all
            zero; weight ``s`` counts a row ``s`` times.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Bad parameters, NaN or infinity in ``X``, shapes that disagree, real-valued
            ``y``, bad weights, or a failing optimiser.
        """
        C = None if self.C is None else _check_real("C", self.C, 0.0, strict=True,
                                                      allow_inf=True)
        lam = _check_real("lambda_per_sample", self.lambda_per_sample, 0.0, strict=False)
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept = {self.fit_intercept!r}: expected a bool")
        max_iter = _check_int("max_iter", self.max_iter, 1)
        tol = _check_real("tol", self.tol, 0.0, strict=True)
        native, _, codes, weights = self._fit_inputs(X, y, sample_weight)
        model = _srl._LogisticRegressionModel.fit(
            native, codes, len(self.classes_), weights, C, lam, bool(self.fit_intercept),
            max_iter, tol)
        self._model = model
        self.coef_ = model.coef
        self.intercept_ = model.intercept
        self.lambda_ = model.lambda_
        self.n_iter_ = model.n_iter
        self.converged_ = model.converged
        return self


class NaiveBayes(_TabularClassifier):
    """Naive Bayes ``P(c) prod_j P(x_j | c)`` with Laplace smoothing, learned by counting in
    Rust (srl-bayes ``NaiveBayes``, the model of Zadrozny et al. 2009's context weights
    and of the TrimBN experiments).

    Two kinds of feature:

    * count features (the default for every column): finite values ``>= 0`` (word counts,
      indicators, frequencies); all count features of a class share one multinomial,
      ``P(x | c) ∝ prod_j theta_cj ** x_j`` with
      ``theta_cj = (sum_i s_i x_ij + alpha) / (sum_i s_i sum_j x_ij + d_count * alpha)``
      -- scikit-learn's ``MultinomialNB``;
    * categorical features (``categorical_features``): whole numbers ``0, 1, ...``; a
      feature's states are ``0..max`` of its training values, each with its own table
      ``P(x_j = v | c) = (W_cjv + alpha) / (W_cj + states * alpha)`` -- scikit-learn's
      ``CategoricalNB``. A value above the fitted states at predict time is a ValueError.

    ``NaN`` marks a missing value and is left out of the product (exact marginalisation in
    naive Bayes), at ``fit`` and at ``predict``. The class prior is
    ``P(c) = (W_c + prior_alpha) / (W + k * prior_alpha)`` (``W`` sums of sample weights).

    Negative values are rejected: naive Bayes over counts or categories has no meaning
    for them (scikit-learn's tag ``positive_only``). Sparse ``X`` is accepted; the Rust
    model reads dense rows, so ``fit`` holds an ``n x d`` dense copy (``predict`` one row
    at a time).

    Parameters
    ----------
    alpha : float, default 1.0
        Laplace pseudo-count of every feature cell (``>= 0``).
    prior_alpha : float, default 1.0
        Pseudo-count added to every class count of the prior (``>= 0``).
    categorical_features : array-like of int or bool, optional
        The categorical columns, as indices or a boolean mask of length ``n_features``;
        ``None``: every column is a count.

    Attributes
    ----------
    classes_ : ndarray (k,) -- the labels, sorted.
    n_features_in_ : int
    feature_names_in_ : ndarray of str -- only for a data frame with string column names.
    class_prior_ : ndarray (k,) float64 -- ``P(c)``.
    n_categories_ : ndarray (n_features_in_,) int64 -- states of each categorical feature,
        0 for a count feature.
    """

    _params = ("alpha", "prior_alpha", "categorical_features")
    _allow_nan = True
    _positive_only = True
    # As scikit-learn's discrete naive Bayes models: a multinomial over shifted Gaussian
    # blobs (scikit-learn's training-accuracy check) sees only the feature proportions.
    _poor_score = True

    def __init__(self, alpha: float = 1.0, prior_alpha: float = 1.0,
                 categorical_features=None):
        self.alpha = alpha
        self.prior_alpha = prior_alpha
        self.categorical_features = categorical_features

    def _categorical_mask(self, d: int) -> np.ndarray:
        cf = self.categorical_features
        if cf is None:
            return np.zeros(d, dtype=bool)
        arr = np.asarray(cf)
        if arr.dtype == bool:
            if arr.shape != (d,):
                raise ValueError(f"categorical_features: a mask needs {d} entries, got "
                                 f"shape {arr.shape}")
            return np.ascontiguousarray(arr)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise ValueError("categorical_features: expected column indices or a boolean "
                             f"mask, got {cf!r}")
        if arr.size and (arr.min() < -d or arr.max() >= d):
            raise ValueError(f"categorical_features: an index is outside 0..{d}")
        mask = np.zeros(d, dtype=bool)
        mask[arr] = True
        return mask

    def _check_values(self, data) -> None:
        if (data < 0).any():
            raise ValueError("Negative values in data passed to NaiveBayes: count and "
                             "categorical features must be >= 0")

    def fit(self, X, y, sample_weight=None):
        """Learns the class prior and the feature tables by (weighted) counting.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix, shape (n, d) -- values ``>= 0`` (whole
            numbers in categorical columns); ``NaN`` = missing.
        y : array-like, shape (n,) -- class labels (any sortable kind).
        sample_weight : array-like, shape (n,), optional -- finite weights >= 0, not all
            zero.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Negative smoothing, a bad ``categorical_features``, negative values or
            infinity in ``X``, a categorical value that is not a whole number, shapes
            that disagree, real-valued ``y``, bad weights.
        """
        alpha = _check_real("alpha", self.alpha, 0.0, strict=False)
        prior_alpha = _check_real("prior_alpha", self.prior_alpha, 0.0, strict=False)
        native, data, codes, weights = self._fit_inputs(X, y, sample_weight)
        mask = self._categorical_mask(self.n_features_in_)
        self._check_values(data)
        model = _srl._NaiveBayesModel.fit(native, codes, len(self.classes_), weights, alpha,
                                          prior_alpha, mask)
        self._model = model
        self.class_prior_ = model.class_prior
        self.n_categories_ = model.n_categories
        return self


class UKNN(_TabularClassifier):
    """uK-NN: K-nearest neighbours with context weights (Zadrozny, Pappa, Meira, Gonçalves,
    Rocha & Salles 2009, Section 5), in Rust (srl-learn ``Uknn``).

    To classify for a target context ``c_t``, each training example ``i`` gets the weight
    ``w_i = P(c = c_t | x_i, y_i) / P(c = c_t)`` (e.g. from a :class:`NaiveBayes` fitted to
    predict the context); pass them as ``context_weights`` to ``predict`` /
    ``predict_proba``. Without them every weight is 1: plain K-NN.

    Parameters
    ----------
    n_neighbors : int, default 3
        The paper's ``k`` (``>= 1``; capped at the training-set size).
    metric : {"cosine", "dot", "euclidean"}, default "cosine"
        Closeness: cosine similarity (the paper's), dot product (shared terms of binary
        term vectors, the paper's toy example) or Euclidean distance.
    weighting : {"voting", "distance", "both", "none"}, default "voting"
        Where the context weights enter: the votes (class score ``S_c = sum_{i <= k} w_i
        [y_i = c]``, the paper's u3-NN), the closeness (similarity x ``w``, distance /
        ``w``; one vote each), both, or nowhere (plain K-NN).

    ``predict_proba`` returns the class scores normalised to sum to 1 (the weighted share
    of the neighbours' votes; uniform when all votes weigh 0): the paper defines no
    probability, so these are not calibrated. Ties go to the class listed first in
    ``classes_``; equally close neighbours to the lower training row.

    Attributes
    ----------
    classes_ : ndarray (k,) -- the labels, sorted.
    n_features_in_ : int
    feature_names_in_ : ndarray of str -- only for a data frame with string column names.
    n_samples_fit_ : int -- stored training rows (the length ``context_weights`` needs).
    """

    _params = ("n_neighbors", "metric", "weighting")

    def __init__(self, n_neighbors: int = 3, metric: str = "cosine",
                 weighting: str = "voting"):
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.weighting = weighting

    def fit(self, X, y):
        """Stores the training set (uK-NN is lazy).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix, shape (n, d) -- finite real values
            (stored densely: n x d floats).
        y : array-like, shape (n,) -- class labels (any sortable kind).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``n_neighbors < 1``, an unknown ``metric`` or ``weighting``, NaN or infinity
            in ``X``, shapes that disagree, real-valued ``y``.
        """
        k = _check_int("n_neighbors", self.n_neighbors, 1)
        for name, allowed in (("metric", ("cosine", "dot", "euclidean")),
                              ("weighting", ("voting", "distance", "both", "none"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} = {getattr(self, name)!r}: expected one of "
                                 + ", ".join(map(repr, allowed)))
        native, _, codes, _ = self._fit_inputs(X, y)
        self._model = _srl._UknnModel.fit(native, codes, len(self.classes_), k, self.metric,
                                          self.weighting)
        self.n_samples_fit_ = self._model.n_train
        return self

    def _weights(self, context_weights) -> Optional[np.ndarray]:
        if context_weights is None:
            return None
        w = np.ascontiguousarray(context_weights, dtype=np.float64)
        n = self._model.n_train
        if w.shape != (n,):
            raise ValueError(f"context_weights: expected shape ({n},) (one weight per "
                             f"training row), got {w.shape}")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("context_weights must be finite and >= 0")
        return w

    def predict(self, X, context_weights=None):
        """The winning class of each row: the class with the largest (weighted) vote of
        the ``n_neighbors`` closest training rows.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix, shape (n, n_features_in_)
        context_weights : array-like, shape (n_samples_fit_,), optional
            The target context's weight of each training row, finite ``>= 0``
            (``P(c_t | x_i, y_i) / P(c_t)``); ``None``: all 1 (plain K-NN).

        Returns
        -------
        numpy.ndarray, shape (n,), of ``classes_``' dtype.

        Raises
        ------
        srl.NotFittedError
            Before ``fit``.
        ValueError
            The wrong number of features, NaN or infinity, bad ``context_weights``.
        """
        native = self._predict_input(X)
        codes, _ = self._model.predict(native, self._weights(context_weights))
        return self.classes_[codes]

    def predict_proba(self, X, context_weights=None):
        """Normalised class scores ``S_c / sum_c' S_c'`` (not calibrated probabilities).

        Parameters
        ----------
        X : array-like or scipy.sparse matrix, shape (n, n_features_in_)
        context_weights : array-like, shape (n_samples_fit_,), optional -- as ``predict``.

        Returns
        -------
        numpy.ndarray, shape (n, len(classes_)), float64, rows summing to 1.

        Raises
        ------
        srl.NotFittedError
            Before ``fit``.
        ValueError
            As ``predict``.
        """
        native = self._predict_input(X)
        return self._model.predict(native, self._weights(context_weights))[1]

    def neighbors(self, X, context_weights=None):
        """The training rows ``predict`` lets vote for each row of ``X``, closest first.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix, shape (n, n_features_in_)
        context_weights : array-like, shape (n_samples_fit_,), optional -- as ``predict``
            (they change the neighbours under ``weighting="distance"`` or ``"both"``).

        Returns
        -------
        numpy.ndarray, shape (n, min(n_neighbors, n_samples_fit_)), int64 -- training row
        indices.

        Raises
        ------
        srl.NotFittedError
            Before ``fit``.
        ValueError
            As ``predict``.
        """
        native = self._predict_input(X)
        return self._model.kneighbors(native, self._weights(context_weights))
