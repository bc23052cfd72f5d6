"""The scikit-learn estimator contract (issue 34, first part): clone, pickle and
deepcopy bit for bit, is_classifier / check_is_fitted, score and classes_, ValueError for
negative whole numbers. Skips without scikit-learn (CI installs it)."""

import copy
import pickle
from pathlib import Path

import numpy as np
import pytest

import srl

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone, is_classifier  # noqa: E402
from sklearn.exceptions import NotFittedError as SkNotFitted  # noqa: E402
from sklearn.utils.validation import check_is_fitted  # noqa: E402

# knowledge-based RFGB's advice (Odom et al. 2015): the worked example's advice file of
# srl-boost's tests ("smokers get cancer"), which fits this suite's smokers data as well
ADVICE = Path(__file__).parents[2] / "srl-boost" / "tests" / "fixtures" / "advice" / "advice.txt"

BOOSTED = [
    (srl.BoostedRDN, {}),
    (srl.SoftBoostedRDN, {"alpha": 1.0, "beta": -0.5}),
    (srl.BoostedMLN, {}),
    (srl.BoostedRDN, {"advice": ADVICE, "advice_weight": 0.3}),
    (srl.SoftBoostedRDN, {"alpha": 1.0, "beta": -0.5, "advice": str(ADVICE)}),
]


@pytest.mark.parametrize("cls,extra", BOOSTED)
def test_boosting_estimators_clone_pickle_score(data, cls, extra):
    train = srl.Database.from_folder(data / "boost" / "train")
    test = srl.Database.from_folder(data / "boost" / "test", prefix="test")
    m = cls(target="cancer", n_estimators=4, min_leaf_examples=1, random_state=7, **extra)
    assert is_classifier(m)
    with pytest.raises(SkNotFitted):
        check_is_fitted(m)
    c = clone(m)
    assert type(c) is cls and c.get_params() == m.get_params() and c is not m
    for k, v in m.get_params().items():
        assert c.get_params()[k] is v or c.get_params()[k] == v, k
    assert m.fit(train) is m
    check_is_fitted(m)
    assert list(m.classes_) == [False, True]
    p = m.predict_proba(test)
    # pickle and deepcopy go through the model file: predictions equal bit for bit
    for back in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        assert type(back) is cls
        assert back.get_params() == m.get_params()
        assert np.array_equal(back.predict_proba(test), p)
        assert back.to_json() == m.to_json()
    # an unfitted estimator pickles to an unfitted one
    u = pickle.loads(pickle.dumps(cls(target="cancer", n_estimators=2)))
    with pytest.raises(SkNotFitted):
        check_is_fitted(u)
    # score: accuracy against the database's labels, or a given y
    s = m.score(test)
    _, y = test.examples("cancer")
    assert 0.0 <= s <= 1.0
    assert s == float((m.predict(test) == y).mean())
    assert m.score(test, ~y) == pytest.approx(1.0 - s)
    # a fitted clone is unfitted
    with pytest.raises(SkNotFitted):
        check_is_fitted(clone(m))
    # the advice: kept as given by clone and pickle, recorded by the model
    if "advice" in extra:
        assert c.get_params()["advice"] == extra["advice"]
        assert back.advice_ == m.advice_ and m.advice_["pieces"] == 1
        assert m.get_params()["advice_weight"] == extra.get("advice_weight", 0.5)


def test_negative_whole_numbers_are_value_errors():
    for kw in ({"n_estimators": -1}, {"max_tree_depth": -2}, {"random_state": -5},
               {"n_estimators": 2.5}):
        with pytest.raises(ValueError, match="whole number"):
            srl.BoostedRDN(target="t", **kw)
    m = srl.BoostedRDN(target="t")
    with pytest.raises(ValueError, match="whole number"):
        m.set_params(node_size=-1)
    with pytest.raises(ValueError, match="invalid parameter"):
        m.set_params(nope=1)
    assert m.get_params()["node_size"] is None


def test_collective_estimators_clone_and_pickle(data):
    X, y, edges = srl.load_linqs(data, name="graph")
    observed = np.random.default_rng(3).random(len(y)) < 0.5
    for est in (srl.ICA(random_state=2), srl.MarkovNetwork(inference="mf"),
                srl.ContentOnly(local="mnb")):
        c = clone(est)
        assert c.get_params() == est.get_params()
        est.fit(X, y, edges, observed)
        back = pickle.loads(pickle.dumps(est))
        assert np.array_equal(back.predict_proba(), est.predict_proba())
        assert back.convergence_ == est.convergence_
        assert np.array_equal(copy.deepcopy(est).predict(), est.predict())


def test_convergence_pickles():
    c = srl.Convergence(True, 12, 1e-7)
    assert pickle.loads(pickle.dumps(c)) == c
    assert repr(c).startswith("srl.Convergence(converged=True, iterations=12")


def test_database_pickles_with_its_background(data):
    db = srl.Database.from_folder(data / "boost" / "train")
    back = pickle.loads(pickle.dumps(db))
    assert back.pos == db.pos and back.neg == db.neg and back.facts == db.facts
    assert back.modes == db.modes and back.settings == db.settings
    m = srl.BoostedRDN(target="cancer", n_estimators=3, min_leaf_examples=1).fit(db)
    m2 = srl.BoostedRDN(target="cancer", n_estimators=3, min_leaf_examples=1).fit(back)
    assert m.to_json() == m2.to_json()
    assert np.array_equal(m.predict_proba(copy.deepcopy(db)), m.predict_proba(db))
    lists = srl.Database(pos=["p(a)."], neg=["p(b)."], facts=["q(a)."],
                         modes=["p(+t).", "q(+t)."])
    assert pickle.loads(pickle.dumps(lists)).facts == ["q(a)."]
    with pytest.raises(ValueError, match="pickled srl.Database"):
        srl._srl._database_from_state("{}")


def test_cross_val_score_over_nodes(data):
    """Collective estimators inside scikit-learn's cross-validation: the graph goes in
    whole through params={"graph": ...}, the folds are the pipeline's RS / SS samples."""
    from sklearn.model_selection import cross_val_score

    X, y, edges = srl.load_linqs(data, name="graph")
    g = srl.Graph(X, edges)
    nodes = np.arange(len(y)).reshape(-1, 1)
    for splitter in (srl.NodeSplitter(3, random_state=1),
                     srl.NodeSplitter(3, sampling="snowball", random_state=1, edges=edges)):
        folds = list(splitter.split(nodes, y))
        assert len(folds) == 3
        if splitter.sampling == "random":
            tested = np.sort(np.concatenate([t for _, t in folds]))
            assert np.array_equal(tested, np.arange(len(y)))  # every node once
        for est in (srl.ICA(random_state=2), srl.ContentOnly(local="mnb"),
                    srl.MarkovNetwork(inference="mf")):
            scores = cross_val_score(est, nodes, y, cv=splitter, params={"graph": g})
            manual = [
                clone_fit(est, nodes[tr], y[tr], g).score(nodes[te], y[te])
                for tr, te in folds
            ]
            assert np.allclose(scores, manual) and (0 <= scores).all() and (scores <= 1).all()
    # predictions for given nodes; bad inputs
    est = srl.ICA(n_classes=2).fit(nodes[:12], y[:12], graph=g)
    assert est.predict(nodes[12:]).shape == (len(y) - 12,)
    assert est.predict_proba([0, 1]).shape == (2, 2)
    with pytest.raises(ValueError, match="node indices"):
        srl.ICA().fit([0, 999], [0, 1], graph=g)
    with pytest.raises(ValueError, match="snowball"):
        list(srl.NodeSplitter(3, sampling="snowball").split(nodes, y))
    with pytest.raises(ValueError, match="sampling"):
        list(srl.NodeSplitter(3, sampling="stratified").split(nodes, y))


def clone_fit(est, X, y, g):
    return clone(est).fit(X, y, graph=g)


def test_every_rust_backed_object_pickles_and_deep_copies(data):
    """Issue 34: PairwiseMRF, Marginals, BayesianNetwork and Trimming round-trip through
    pickle and copy.deepcopy, and compute the same numbers bit for bit afterwards."""
    # a model with a zero potential (-inf) and evidence, and one read from UAI
    unary = np.array([[0.3, -np.inf], [0.0, 0.7], [-0.2, 0.1]])
    pair = np.array([[1.0, -0.5], [-0.5, 1.0]])
    mrf = srl.PairwiseMRF(unary, [[0, 1], [1, 2], [0, 2]], pair, evidence=[-1, -1, 1])
    grid = srl.PairwiseMRF.from_uai(data / "grid.uai", evidence=data / "grid.uai.evid")
    for m in (mrf, grid):
        for back in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
            assert type(back) is srl.PairwiseMRF
            assert back.to_uai() == m.to_uai()
            assert np.array_equal(back.num_states, m.num_states)
            a, b = m.loopy_bp(), back.loopy_bp()
            assert np.array_equal(a.nodes, b.nodes)
            assert np.array_equal(m.exact().nodes, back.exact().nodes)
            assert m.exact().log_partition == back.exact().log_partition
    # Marginals: arrays, convergence and log Z exactly
    marg = mrf.exact()
    for back in (pickle.loads(pickle.dumps(marg)), copy.deepcopy(marg)):
        assert np.array_equal(back.nodes, marg.nodes)
        assert np.array_equal(back.map_state, marg.map_state)
        assert back.convergence == marg.convergence
        assert back.log_partition == marg.log_partition
    g = grid.gibbs(samples=50, burn_in=10, seed=3)
    gb = pickle.loads(pickle.dumps(g))
    assert gb.log_partition is None and np.array_equal(gb.map_state, g.map_state)
    with pytest.raises(ValueError, match="map_state"):
        srl.Marginals(np.zeros((2, 2)), np.zeros(3), srl.Convergence(True, 1, 0.0))
    # BayesianNetwork and Trimming
    net = srl.BayesianNetwork.from_bif(data / "tiny.bif")
    t = net.trim("C", "yes", "leaves", threshold=0.5, budget=2)
    for back in (pickle.loads(pickle.dumps(net)), copy.deepcopy(net)):
        assert back.variables == net.variables and back.leaves == net.leaves
        assert all(back.parents(v) == net.parents(v) for v in net.variables)
        assert back.trim("C", "yes", "leaves", threshold=0.5, budget=2) == t
        assert repr(back) == repr(net)
    assert pickle.loads(pickle.dumps(t)) == t and copy.deepcopy(t) == t
    # corrupted states are ValueErrors, never crashes
    for bad in ("{}", "[]", '{"num_states": [2]}', "nope"):
        with pytest.raises(ValueError, match="pickled srl.PairwiseMRF"):
            srl._srl._pairwise_mrf_from_state(bad)
        with pytest.raises(ValueError, match="pickled srl.BayesianNetwork"):
            srl._srl._bayesian_network_from_state(bad)
    state = mrf.__reduce__()[1][0].replace('"num_states":[2,2,2]', '"num_states":[2,2]')
    with pytest.raises(ValueError, match="pickled srl.PairwiseMRF"):
        srl._srl._pairwise_mrf_from_state(state)


@pytest.mark.parametrize("cls,extra", BOOSTED)
def test_boosting_estimators_cross_validate_over_examples(data, cls, extra):
    """Issue 34: cross_val_score / GridSearchCV for the boosting estimators: X holds
    indices into database.examples(target), the database goes in whole through
    params={"database": db} and each fold learns from its examples only (facts and
    background whole), equal to fitting on db.select(target, train indices)."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score

    db = srl.Database.from_folder(data / "boost" / "train")
    atoms, y = db.examples("cancer")
    X = np.arange(len(y)).reshape(-1, 1)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    m = cls(target="cancer", n_estimators=3, min_leaf_examples=1, random_state=7, **extra)
    scores = cross_val_score(m, X, y, cv=cv, params={"database": db})
    assert scores.shape == (3,) and ((0 <= scores) & (scores <= 1)).all()
    for s, (tr, te) in zip(scores, cv.split(X, y)):
        fold = clone(m).fit(db.select("cancer", list(tr)))
        p = fold.predict_proba(db.select("cancer", list(te)))
        # predictions come back in X's order: the selection is sorted, te is sorted too
        assert np.array_equal(clone(m).fit(X[tr], y[tr], database=db)
                              .predict_proba(X[te], database=db), p)
        assert s == pytest.approx(float(((p >= 0.5) == y[te]).mean()))
    # any order and repeats of X map back
    full = clone(m).fit(db)
    order = np.array([5, 0, 5, 2])
    assert np.array_equal(full.predict_proba(order, database=db),
                          full.predict_proba(db)[order])
    assert np.array_equal(full.predict(order, database=db),
                          full.predict(db)[order])
    grid = GridSearchCV(m, {"n_estimators": [1, 2]}, cv=cv).fit(X, y, database=db)
    assert grid.best_params_["n_estimators"] in (1, 2)
    with pytest.raises(ValueError, match="index"):
        full.predict_proba([len(y)], database=db)
    with pytest.raises(ValueError, match="example indices"):
        full.predict_proba(np.array([0.5]), database=db)
    assert atoms[0].startswith("cancer(")
