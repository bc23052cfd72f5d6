"""srl.BoostedRDNRegressor and srl.srlearn.BoostedRDNRegressor: RDN-Boost regression
(issue 27 / 34) on the salary world of crates/srl-boost/tests/fixtures/regression, whose
BoostSRL -reg numbers are in crates/srl-boost/tests/regression.rs."""

import copy
import math
import pickle
from pathlib import Path

import numpy as np
import pytest

import srl

WORLD = Path(__file__).resolve().parents[2] / "srl-boost" / "tests" / "fixtures" / "regression"


def world():
    bk = WORLD / "train" / "train_bk.txt"
    train = srl.Database.from_folder(WORLD / "train", bk=bk)
    test = srl.Database.from_folder(WORLD / "test", prefix="test", bk=bk)
    return train, test


def test_regressor_equals_the_rust_model_and_round_trips(tmp_path):
    train, test = world()
    m = srl.BoostedRDNRegressor(target="salary", n_estimators=3)
    assert m.fit(train) is m
    pred = m.predict(test)
    truth = m.values(test)
    assert pred.shape == (12,) and truth[0] == 40.0
    # the numbers of crates/srl-boost/tests/regression.rs (same library call)
    mse = float(np.mean((pred - truth) ** 2))
    assert mse == pytest.approx(2.664399092970522, abs=1e-9)
    met = m.metrics(test)
    assert met["rmse"] == pytest.approx(math.sqrt(mse), abs=1e-12)
    assert m.score(test) == pytest.approx(met["r2"], abs=0) and met["r2"] > 0.98
    assert m.score(test, truth + 1.0) < met["r2"]
    assert len(m.estimators_) == 3 and m.target_ == "salary"
    assert m.train_mse_.shape == (4,) and m.train_mse_[-1] <= m.train_mse_[0]
    assert "numOfClauses=8" in (m.settings_ or "")
    # model file: the CLI's format, read back bit for bit
    path = tmp_path / "m.json"
    m.to_json(path)
    with pytest.raises(FileExistsError):
        m.to_json(path)
    back = srl.BoostedRDNRegressor.from_json(path)
    assert np.array_equal(back.predict(test), pred)
    assert back.get_params() == m.get_params()
    assert '"kind": "rdn-regression"' in path.read_text()
    for c in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert np.array_equal(c.predict(test), pred) and c.get_params() == m.get_params()
    u = pickle.loads(pickle.dumps(srl.BoostedRDNRegressor(target="salary")))
    with pytest.raises(srl.NotFittedError):
        u.predict(test)


def test_regressor_in_scikit_learn():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import clone, is_regressor
    from sklearn.utils.validation import check_is_fitted

    train, test = world()
    m = srl.BoostedRDNRegressor(target="salary", n_estimators=2, max_leaves=4)
    assert is_regressor(m)
    c = clone(m)
    assert c.get_params() == m.get_params() and c is not m
    with pytest.raises(sklearn.exceptions.NotFittedError):
        check_is_fitted(m)
    m.fit(train)
    check_is_fitted(m)
    assert len(m.estimators_[0]) <= 4


def test_bad_regression_input_is_a_clean_error():
    train, _ = world()
    with pytest.raises(ValueError, match="target is None"):
        srl.BoostedRDNRegressor().fit(train)
    with pytest.raises(ValueError, match="whole number"):
        srl.BoostedRDNRegressor(target="salary", n_estimators=-1).fit(train)
    with pytest.raises(ValueError, match="step"):
        srl.BoostedRDNRegressor(target="salary", step=0.0).fit(train)
    with pytest.raises(ValueError, match="preset"):
        srl.BoostedRDNRegressor(target="salary", preset="nope").fit(train)
    bad = srl.Database(pos=["regressionExample(y(a),1).", "regressionExample(y(b),inf)."],
                       facts=["f(a)."], modes=["f(+t)."])
    with pytest.raises(srl.ParseError) as e:
        srl.BoostedRDNRegressor(target="y").fit(bad)
    assert e.value.lineno == 2
    negs = srl.Database(pos=["regressionExample(y(a),1)."], neg=["y(b)."], facts=["f(a)."],
                        modes=["f(+t)."])
    with pytest.raises(ValueError, match="no negative examples"):
        srl.BoostedRDNRegressor(target="y").fit(negs)
    # a classification model file is not a regression model file
    clf = srl.BoostedRDN(target="y", n_estimators=1, min_leaf_examples=1).fit(
        srl.Database(pos=["y(a)."], neg=["y(b)."], facts=["f(a)."], modes=["f(+t)."]))
    with pytest.raises(ValueError, match="rdn-regression"):
        srl.BoostedRDNRegressor.from_json_string(clf.to_json())


def test_srlearn_regressor_runs_srlearns_flow():
    from srl.srlearn import Background, Database
    from srl.srlearn.rdn import BoostedRDNRegressor

    def db(folder, prefix):
        d = Database()
        d.pos = (WORLD / folder / f"{prefix}_pos.txt").read_text().split()
        d.facts = (WORLD / folder / f"{prefix}_facts.txt").read_text().split()
        return d

    train, test = db("train", "train"), db("test", "test")
    modes = ["senior(+person).", "phd(+person).", "advises(+person,-person).",
             "salary(+person)."]
    reg = BoostedRDNRegressor(background=Background(modes=modes), target="salary",
                              n_estimators=5)
    assert reg.fit(train) is reg
    p = reg.predict(test)
    assert p.shape == (12,) and np.isfinite(p).all()
    assert len(reg.estimators_) == 5
    with pytest.raises(AttributeError):
        reg.predict_proba(test)


def test_regressor_cross_validates_over_examples():
    pytest.importorskip("sklearn")
    from sklearn.model_selection import KFold, cross_val_score

    train, _ = world()
    m = srl.BoostedRDNRegressor(target="salary", n_estimators=2)
    y = m.fit(train).values(train)
    X = np.arange(len(y)).reshape(-1, 1)
    cv = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(m, X, y, cv=cv, params={"database": train})
    assert scores.shape == (3,) and (scores > 0.5).all()
    for s, (tr, te) in zip(scores, cv.split(X)):
        f = srl.BoostedRDNRegressor(target="salary", n_estimators=2).fit(
            srl._srl._select_regression(train, "salary", list(tr)))
        sub = srl._srl._select_regression(train, "salary", list(te))
        assert s == pytest.approx(f.score(sub), abs=1e-12)
    order = np.array([3, 1, 3])
    assert np.array_equal(m.predict(order, database=train), m.predict(train)[order])
    with pytest.raises(ValueError, match="index"):
        m.predict([999], database=train)
