"""The tabular classifiers srl.LogisticRegression, srl.NaiveBayes and srl.UKNN (issue 34):
scikit-learn's estimator checks, references (scikit-learn's own estimators, the uK-NN toy
example of Zadrozny et al. 2009), pickling bit for bit, clone and cross-validation."""

import copy
import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import srl

try:
    import sklearn  # noqa: F401
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:  # scikit-learn is optional for srl; the contract tests need it
    parametrize_with_checks = None

needs_sklearn = pytest.mark.skipif(parametrize_with_checks is None,
                                   reason="scikit-learn is not installed")

# Checks of scikit-learn's estimator contract that cannot apply, with the reason (the same
# list is in docs/python.md). Every other check of scikit-learn's check_estimator runs;
# with scikit-learn 1.9 all of them pass, so the lists are empty. (NaiveBayes's tags
# positive_only, poor_score and allow_nan describe the model, as scikit-learn's own naive
# Bayes models' tags do; they are not exemptions.)
EXPECTED_FAILED = {
    "LogisticRegression": {},
    "NaiveBayes": {},
    "UKNN": {},
}


def _estimators():
    return [srl.LogisticRegression(), srl.NaiveBayes(), srl.UKNN()]


if parametrize_with_checks is not None:
    # srl's estimators are not subclasses of sklearn.base.BaseEstimator (srl does not
    # depend on scikit-learn): scikit-learn warns about that while collecting the checks.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Estimator .* does not inherit from")
        _contract = parametrize_with_checks(
            _estimators(),
            expected_failed_checks=lambda est: EXPECTED_FAILED[type(est).__name__],
        )

    @pytest.mark.filterwarnings("ignore:Estimator .* does not inherit from")
    @_contract
    def test_scikit_learn_estimator_checks(estimator, check):
        check(estimator)


@needs_sklearn
@pytest.mark.filterwarnings("ignore:Estimator .* does not inherit from")
@pytest.mark.parametrize("estimator", _estimators(), ids=lambda e: type(e).__name__)
def test_check_estimator_passes(estimator):
    """The same checks through scikit-learn's ``check_estimator`` itself: every check
    passes or is skipped for a missing optional package (pandas, the array API)."""
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(
        estimator, expected_failed_checks=EXPECTED_FAILED[type(estimator).__name__],
        on_skip=None, on_fail="raise")
    statuses = {r["status"] for r in results}
    assert statuses <= {"passed", "skipped"}, statuses
    assert sum(r["status"] == "passed" for r in results) >= 50


@needs_sklearn
def test_check_estimator_with_array_api_dispatch_passes_every_check():
    """With ``SCIPY_ARRAY_API=1`` (read when scipy is imported, hence a fresh process)
    scikit-learn also runs ``check_array_api_input`` (numpy inputs with array-API dispatch
    on): then no check fails, and none is skipped except the pandas ones where pandas is
    not installed (.ci/run installs it)."""
    code = (
        "import collections, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "import srl\n"
        "from sklearn.utils.estimator_checks import check_estimator\n"
        "for e in (srl.LogisticRegression(), srl.NaiveBayes(), srl.UKNN()):\n"
        "    r = check_estimator(e, on_skip=None, on_fail=None)\n"
        "    bad = [(x['check_name'], x['status'], str(x['exception'])[:300]) for x in r\n"
        "           if x['status'] != 'passed'\n"
        "           and not (x['status'] == 'skipped' and 'pandas' in str(x['exception']))]\n"
        "    assert not bad, (type(e).__name__, bad)\n"
        "    assert any(x['check_name'] == 'check_array_api_input' for x in r)\n"
    )
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def _fixture():
    """The data set of srl-learn's logreg.rs test (scikit-learn reference values)."""
    X = np.array([[1, 0, 2], [.5, 1, 0], [0, 0, 1], [2, 1, 0], [0, 3, 1], [1, 1, 1],
                  [0, 2, 0], [3, 0, .5], [.5, .5, 2.5], [1.5, 2, 0]])
    y = np.array([0, 1, 2, 0, 1, 2, 1, 0, 2, 1])
    sw = np.array([1, 2, .5, 1, 1, 3, 1, .5, 2, 1.])
    return X, y, sw


@needs_sklearn
@pytest.mark.parametrize("weighted", [False, True])
def test_logistic_regression_equals_scikit_learn_with_c_one_over_two_lambda(weighted):
    from sklearn.linear_model import LogisticRegression as SkLR

    X, y, sw = _fixture()
    w = sw if weighted else None
    lam = 0.25
    ours = srl.LogisticRegression(C=1 / (2 * lam), tol=1e-12).fit(X, y, sample_weight=w)
    ref = SkLR(C=1 / (2 * lam), tol=1e-12, max_iter=10000).fit(X, y, sample_weight=w)
    probe = np.array([[1, 2, .5], [0, 0, 0], [3, 1, 2]])
    np.testing.assert_allclose(ours.predict_proba(probe), ref.predict_proba(probe),
                               atol=1e-6)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    assert ours.lambda_ == lam
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@needs_sklearn
def test_logistic_regression_default_prior_is_per_sample():
    """C=None: lambda = 1e-4 x n, i.e. scikit-learn's C = 1 / (2 x 1e-4 x n)."""
    from sklearn.linear_model import LogisticRegression as SkLR

    X, y, _ = _fixture()
    ours = srl.LogisticRegression().fit(X, y)
    assert ours.lambda_ == pytest.approx(1e-4 * len(y))
    ref = SkLR(C=1 / (2e-4 * len(y)), tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-4)


def test_logistic_regression_sparse_equals_dense_and_labels_map_back():
    X, y, sw = _fixture()
    labels = np.array(["cat", "dog", "emu"])[y]
    dense = srl.LogisticRegression(C=2.0).fit(X, labels, sample_weight=sw)
    sparse = srl.LogisticRegression(C=2.0).fit(sp.csr_matrix(X), labels, sample_weight=sw)
    np.testing.assert_allclose(dense.predict_proba(X), sparse.predict_proba(sp.csc_matrix(X)),
                               atol=1e-9)
    assert list(dense.classes_) == ["cat", "dog", "emu"]
    assert dense.predict(X).dtype == labels.dtype
    assert dense.coef_.shape == (3, 3) and dense.intercept_.shape == (3,)
    assert set(dense.predict(X)) <= {"cat", "dog", "emu"}


@needs_sklearn
def test_naive_bayes_counts_equal_multinomial_nb():
    """Count features with prior_alpha=0 are scikit-learn's MultinomialNB (whose class
    prior is the empirical frequency)."""
    from sklearn.naive_bayes import MultinomialNB

    rng = np.random.default_rng(3)
    X = rng.poisson(2.0, size=(40, 6)).astype(float)
    y = rng.integers(0, 3, size=40)
    sw = rng.uniform(0.5, 2.0, size=40)
    ours = srl.NaiveBayes(alpha=1.0, prior_alpha=0.0).fit(X, y, sample_weight=sw)
    ref = MultinomialNB(alpha=1.0).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), rtol=1e-10)
    np.testing.assert_allclose(ours.class_prior_, np.exp(ref.class_log_prior_), rtol=1e-12)
    assert (ours.n_categories_ == 0).all()


@needs_sklearn
def test_naive_bayes_categorical_equals_categorical_nb_and_nan_is_missing():
    from sklearn.naive_bayes import CategoricalNB

    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(50, 4)).astype(float)
    y = rng.integers(0, 2, size=50)
    ours = srl.NaiveBayes(alpha=1.0, prior_alpha=0.0,
                          categorical_features=[0, 1, 2, 3]).fit(X, y)
    ref = CategoricalNB(alpha=1.0).fit(X.astype(int), y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X.astype(int)),
                               rtol=1e-10)
    assert list(ours.n_categories_) == [3, 3, 3, 3]
    # a missing value is left out: the posterior of the model without that column
    probe = X[:5].copy()
    probe[:, 1] = np.nan
    ref3 = CategoricalNB(alpha=1.0).fit(X[:, [0, 2, 3]].astype(int), y)
    np.testing.assert_allclose(ours.predict_proba(probe),
                               ref3.predict_proba(X[:5, [0, 2, 3]].astype(int)), rtol=1e-10)
    # a state never seen in training is an error, as is a negative value
    with pytest.raises(ValueError, match="state"):
        ours.predict(np.array([[5.0, 0, 0, 0]]))
    with pytest.raises(ValueError, match="Negative values"):
        ours.predict(np.array([[-1.0, 0, 0, 0]]))
    mask = srl.NaiveBayes(categorical_features=np.array([True, True, True, True])).fit(X, y)
    np.testing.assert_array_equal(mask.n_categories_, ours.n_categories_)


def _toy():
    """Table 1 of Zadrozny et al. (2009) as binary term vectors over a..e, classes 1 / 2,
    and the weights of Table 2 (P(2001 | terms, class) / P(2001), as printed)."""
    docs = ["abd", "abe", "bcd", "bde", "cde", "abc"]
    X = np.array([[1.0 if t in d else 0.0 for t in "abcde"] for d in docs])
    y = np.array([1, 2, 2, 2, 1, 1])
    w = np.array([0.8, 1.906, 0.458, 1.2, 0.2, 1.28])
    return X, y, w


def test_uknn_paper_toy_example():
    X, y, w = _toy()
    q = np.array([[1.0, 0.0, 1.0, 0.0, 1.0]])  # {a, c, e}
    knn = srl.UKNN(n_neighbors=3, metric="dot", weighting="voting").fit(X, y)
    assert knn.predict(q)[0] == 1  # 3-NN: documents 2, 5, 6 vote 1, 1, 2 -> class 1
    np.testing.assert_array_equal(knn.neighbors(q), [[1, 4, 5]])
    assert knn.predict(q, context_weights=w)[0] == 2  # u3-NN: 1.906 against 1.48
    np.testing.assert_allclose(knn.predict_proba(q, context_weights=w),
                               [[1.48 / 3.386, 1.906 / 3.386]], rtol=1e-12)
    np.testing.assert_allclose(knn.predict_proba(q), [[2 / 3, 1 / 3]], rtol=1e-12)
    plain = srl.UKNN(n_neighbors=3, metric="dot", weighting="none").fit(X, y)
    assert plain.predict(q, context_weights=w)[0] == 1  # weights ignored
    dist = srl.UKNN(n_neighbors=3, metric="cosine", weighting="distance").fit(X, y)
    np.testing.assert_array_equal(dist.neighbors(q, context_weights=w), [[1, 5, 3]])
    with pytest.raises(ValueError, match="context_weights"):
        knn.predict(q, context_weights=w[:3])
    with pytest.raises(ValueError, match="context_weights"):
        knn.predict(q, context_weights=-w)


@needs_sklearn
def test_uknn_without_context_weights_is_scikit_learn_knn():
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 4))
    y = rng.integers(0, 3, size=60)
    probe = rng.normal(size=(25, 4))
    ours = srl.UKNN(n_neighbors=5, metric="euclidean").fit(X, y)
    ref = KNeighborsClassifier(n_neighbors=5).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(probe), ref.predict_proba(probe),
                               rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(sp.csr_matrix(probe)), ref.predict(probe))
    np.testing.assert_array_equal(np.sort(ours.neighbors(probe), axis=1),
                                  np.sort(ref.kneighbors(probe, return_distance=False),
                                          axis=1))


def _fitted():
    X, y, sw = _fixture()
    return [
        (srl.LogisticRegression(C=1.5).fit(X, y, sample_weight=sw), X),
        (srl.NaiveBayes(categorical_features=[2]).fit(np.round(X), y), np.round(X)),
        (srl.UKNN(n_neighbors=2).fit(X, y), X),
    ]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_pickle_and_deepcopy_are_bit_for_bit(index):
    est, X = _fitted()[index]
    before = est.predict_proba(X)
    for back in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est), copy.copy(est)):
        after = back.predict_proba(X)
        assert before.tobytes() == after.tobytes()
        assert back.get_params() == est.get_params()
        np.testing.assert_array_equal(back.classes_, est.classes_)
        assert back._model.to_json() == est._model.to_json()
    if isinstance(est, srl.LogisticRegression):
        back = pickle.loads(pickle.dumps(est))
        assert back.coef_.tobytes() == est.coef_.tobytes()


@needs_sklearn
def test_clone_and_cross_val_score():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, cross_val_score

    rng = np.random.default_rng(6)
    X = np.abs(rng.normal(size=(90, 5))) + np.repeat(np.eye(3, 5) * 2, 30, axis=0)
    y = np.repeat(["a", "b", "c"], 30)
    for est in (srl.LogisticRegression(C=10.0), srl.NaiveBayes(alpha=0.5),
                srl.UKNN(n_neighbors=5, metric="euclidean")):
        c = clone(est)
        assert type(c) is type(est) and c.get_params() == est.get_params()
        assert not hasattr(c, "classes_")
        scores = cross_val_score(est, X, y, cv=3)
        assert scores.shape == (3,) and (scores > 0.6).all(), scores
    grid = GridSearchCV(srl.LogisticRegression(), {"C": [None, 0.1, 10.0]}, cv=3).fit(X, y)
    assert grid.best_params_["C"] in (None, 0.1, 10.0)
    assert grid.predict(X[:4]).dtype == y.dtype


def test_errors():
    X, y, _ = _fixture()
    for est in _estimators():
        with pytest.raises(srl.NotFittedError, match="not fitted"):
            est.predict(X)
        assert isinstance(srl.NotFittedError("x"), ValueError)
        est.fit(X, y)
        with pytest.raises(ValueError, match="X has 2 features, but .* expecting 3"):
            est.predict(X[:, :2])
        with pytest.raises(ValueError, match="Reshape your data"):
            est.predict(X[0])
        with pytest.raises(ValueError, match="continuous"):
            type(est)().fit(X, y + 0.5)
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            type(est)().fit(X, y[:4])
        with pytest.raises(ValueError, match="invalid parameter"):
            est.set_params(nope=1)
        with pytest.raises(ValueError, match="infinity"):
            type(est)().fit(np.where(X > 2, np.inf, X), y)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        srl.LogisticRegression().fit(bad, y)
    with pytest.raises(ValueError, match="NaN"):
        srl.UKNN().fit(bad, y)
    srl.NaiveBayes().fit(bad, y)  # NaN = missing
    with pytest.raises(ValueError, match="C = 0"):
        srl.LogisticRegression(C=0).fit(X, y)
    with pytest.raises(ValueError, match="max_iter"):
        srl.LogisticRegression(max_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="metric"):
        srl.UKNN(metric="manhattan").fit(X, y)
    with pytest.raises(ValueError, match="n_neighbors"):
        srl.UKNN(n_neighbors=0).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        srl.NaiveBayes(alpha=-1).fit(X, y)
    with pytest.raises(ValueError, match="categorical_features"):
        srl.NaiveBayes(categorical_features=[7]).fit(X, y)
    with pytest.raises(ValueError, match="whole|state"):
        srl.NaiveBayes(categorical_features=[0]).fit(X + 0.25, y)


def test_constructor_stores_arguments_as_given():
    marker = object()
    est = srl.LogisticRegression(C=marker)  # type: ignore[arg-type]
    assert est.get_params()["C"] is marker
    assert repr(srl.UKNN()) == "srl.UKNN(n_neighbors=3, metric='cosine', weighting='voting')"


def test_package_imports_without_scikit_learn():
    code = (
        "import sys; sys.modules['sklearn'] = None\n"
        "import numpy as np, srl\n"
        "X = np.array([[0., 1.], [1., 0.], [0., 2.], [2., 0.]]); y = [0, 1, 0, 1]\n"
        "for e in (srl.LogisticRegression(), srl.NaiveBayes(), srl.UKNN(n_neighbors=1)):\n"
        "    assert list(e.fit(X, y).predict(X)) == y, e\n"
        "assert 'sklearn' not in {m.split('.')[0] for m in sys.modules if sys.modules[m]}\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
