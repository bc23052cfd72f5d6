"""srl.CostSensitiveClassifier (issue 34): expected-cost decisions over any classifier's
probabilities, per-example costs, the calibration report and Platt / isotonic
recalibration, inside scikit-learn's tooling. Skips without scikit-learn (CI installs
it)."""

import copy
import pickle

import numpy as np
import pytest

import srl

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.calibration import calibration_curve  # noqa: E402
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import brier_score_loss  # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402


def data(k=3, n=600, seed=0):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0,
                               n_classes=k, n_clusters_per_class=1, random_state=seed)
    names = np.array(["a", "b", "c", "d"])[:k]
    return X, names[y]


def brute_decisions(p, costs):
    n, k = p.shape
    c = np.broadcast_to(costs, (n, k, k)) if costs.ndim == 2 else costs
    exp = np.einsum("nat,nt->na", c, p)
    return exp.argmin(axis=1), exp.min(axis=1)


def test_decisions_equal_the_expected_cost_rule():
    X, y = data()
    costs = np.array([[0.0, 5.0, 1.0], [1.0, 0.0, 8.0], [2.0, 1.0, 0.0]])
    clf = srl.CostSensitiveClassifier(LogisticRegression(max_iter=500), cost_matrix=costs)
    assert clf.fit(X, y) is clf
    assert list(clf.classes_) == ["a", "b", "c"] and clf.n_features_in_ == 6
    p = clf.predict_proba(X)
    want, want_cost = brute_decisions(p, costs)
    assert np.array_equal(clf.predict(X), clf.classes_[want])
    assert np.allclose(clf.expected_cost(X), want_cost, rtol=0, atol=1e-12)
    # without costs: the most probable class, as the estimator predicts
    plain = srl.CostSensitiveClassifier(LogisticRegression(max_iter=500)).fit(X, y)
    assert np.array_equal(plain.predict(X), plain.estimator_.predict(X))
    # per-example costs: row i uses its own matrix
    rng = np.random.default_rng(4)
    per = rng.uniform(-1, 5, size=(len(y), 3, 3))
    want, _ = brute_decisions(p, per)
    assert np.array_equal(clf.predict(X, costs=per), clf.classes_[want])
    # realised cost of the decisions against the truth
    t = np.searchsorted(clf.classes_, y)
    pred = np.searchsorted(clf.classes_, clf.predict(X))
    assert clf.mean_cost(X, y) == pytest.approx(costs[pred, t].mean(), abs=1e-12)
    assert clf.score(X, y) == pytest.approx(float((clf.predict(X) == y).mean()))
    # asymmetric costs trade accuracy for cost: less cost than the plain decision
    assert clf.mean_cost(X, y) <= plain.mean_cost(X, y, costs=costs) + 1e-12


def test_binary_costs_move_the_threshold():
    """With C(predict 0 | true 1) = 10 and C(predict 1 | true 0) = 1, a positive is
    predicted from P(1) > 1/11 on (Elkan 2001, Eq. 2)."""
    X, y = data(k=2)
    clf = srl.CostSensitiveClassifier(GaussianNB(), cost_matrix=[[0, 10], [1, 0]]).fit(X, y)
    p1 = clf.predict_proba(X)[:, 1]
    pred = clf.predict(X)
    assert np.array_equal(pred == "b", p1 > 1 / 11)


def test_calibration_report_matches_scikit_learn():
    X, y = data(k=2, n=400)
    clf = srl.CostSensitiveClassifier(GaussianNB()).fit(X[:200], y[:200])
    rep = clf.calibration_report(X[200:], y[200:], n_bins=5, class_index=1)
    p1 = clf.predict_proba(X[200:])[:, 1]
    truth = (y[200:] == "b").astype(int)
    assert rep["brier"] == pytest.approx(2 * brier_score_loss(truth, p1), abs=1e-12)
    frac, mean = calibration_curve(truth, p1, n_bins=5)
    kept = rep["bins"]["count"] > 0
    assert np.allclose(rep["bins"]["observed_frequency"][kept], frac, atol=1e-12)
    assert np.allclose(rep["bins"]["mean_predicted"][kept], mean, atol=1e-12)
    assert rep["bins"]["count"].sum() == 200 and 0 <= rep["ece"] <= 1
    top = clf.calibration_report(X[200:], y[200:])
    assert len(top["bins"]["lower"]) == 10 and top["brier"] == rep["brier"]
    with pytest.raises(ValueError, match="n_bins"):
        clf.calibration_report(X, y, n_bins=0)
    with pytest.raises(ValueError, match="never saw"):
        clf.calibration_report(X[:3], ["a", "zz", "b"])


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_recalibration_on_a_validation_split(method):
    X, y = data(k=3, n=900, seed=2)
    clf = srl.CostSensitiveClassifier(GaussianNB(), calibration=method,
                                      validation_fraction=0.3, random_state=5)
    clf.fit(X[:600], y[:600])
    assert clf.calibrated_ is not None
    p = clf.predict_proba(X[600:])
    assert p.shape == (300, 3) and np.allclose(p.sum(axis=1), 1.0)
    # the estimator saw 70 % of the rows; same seed, same split and probabilities
    again = clone(clf).fit(X[:600], y[:600])
    assert np.array_equal(again.predict_proba(X[600:]), p)
    rep = clf.calibration_report(X[600:], y[600:])
    assert 0 <= rep["brier"] <= 2


def test_scikit_learn_contract_clone_pickle_cross_validate():
    X, y = data()
    costs = np.array([[0.0, 5.0, 1.0], [1.0, 0.0, 8.0], [2.0, 1.0, 0.0]])
    clf = srl.CostSensitiveClassifier(LogisticRegression(max_iter=300), cost_matrix=costs)
    assert is_classifier(clf)
    c = clone(clf)
    assert np.array_equal(c.get_params()["cost_matrix"], costs)
    assert c.get_params()["estimator__C"] == 1.0
    clf.fit(X, y)
    for back in (pickle.loads(pickle.dumps(clf)), copy.deepcopy(clf)):
        assert np.array_equal(back.predict(X), clf.predict(X))
        assert np.array_equal(back.predict_proba(X), clf.predict_proba(X))
    scores = cross_val_score(clf, X, y, cv=3)
    assert scores.shape == (3,) and (scores > 0.5).all()
    # tuning for cost: GridSearchCV over the wrapped estimator's parameter
    grid = GridSearchCV(clf, {"estimator__C": [0.1, 1.0]}, cv=3,
                        scoring=lambda est, X, y: -est.mean_cost(X, y))
    grid.fit(X, y)
    assert grid.best_params_["estimator__C"] in (0.1, 1.0)
    # srl's own estimators go in as well (the collective ones predict over a graph;
    # here a boosting-free tabular check with the wrapped scikit-learn estimator suffices)
    with pytest.raises(ValueError, match="invalid parameter"):
        clf.set_params(nope=1)


def test_bad_input_is_a_value_error():
    X, y = data()
    with pytest.raises(srl.NotFittedError):
        srl.CostSensitiveClassifier(GaussianNB()).predict(X)
    with pytest.raises(ValueError, match=r"cost_matrix: expected shape \(3, 3\)"):
        srl.CostSensitiveClassifier(GaussianNB(), cost_matrix=np.zeros((2, 2))).fit(X, y)
    with pytest.raises(ValueError, match="finite"):
        srl.CostSensitiveClassifier(GaussianNB(),
                                    cost_matrix=[[0, np.nan, 1], [1, 0, 1], [1, 1, 0]]).fit(X, y)
    with pytest.raises(ValueError, match="calibration"):
        srl.CostSensitiveClassifier(GaussianNB(), calibration="platt").fit(X, y)
    with pytest.raises(ValueError, match="validation_fraction"):
        srl.CostSensitiveClassifier(GaussianNB(), calibration="sigmoid",
                                    validation_fraction=1.5).fit(X, y)
    with pytest.raises(ValueError, match="predict_proba"):
        srl.CostSensitiveClassifier(object()).fit(X, y)
    clf = srl.CostSensitiveClassifier(GaussianNB()).fit(X, y)
    with pytest.raises(ValueError, match="costs: expected shape"):
        clf.predict(X, costs=np.zeros((4, 4)))
    with pytest.raises(ValueError, match="cost"):
        clf.predict(X[:2], costs=np.full((2, 3, 3), np.inf))
    # the Rust call checks what it is given, too
    with pytest.raises(ValueError, match="probability"):
        srl._srl._min_expected_cost([[np.nan, 1.0]], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="costs"):
        srl._srl._min_expected_cost([[0.5, 0.5]], np.zeros(3))
