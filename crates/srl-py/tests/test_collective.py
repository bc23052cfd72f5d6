"""Collective classification: load_linqs and the transductive estimators over
(X, edges, observed mask)."""

import numpy as np
import pytest
import scipy.sparse as sp

import srl


def read_fixture(data):
    """The fixture graph parsed in plain Python (the oracle of load_linqs)."""
    rows = [line.split("\t") for line in (data / "graph.content").read_text().splitlines()]
    ids = [r[0] for r in rows]
    X = np.array([[float(v) for v in r[1:-1]] for r in rows])
    names = sorted({r[-1] for r in rows})
    y = np.array([names.index(r[-1]) for r in rows])
    pairs = set()
    for line in (data / "graph.cites").read_text().splitlines():
        a, b = line.split("\t")
        if a != b and a in ids and b in ids:
            pairs.add(tuple(sorted((ids.index(a), ids.index(b)))))
    return X, y, pairs, names, ids


def test_load_linqs_matches_the_files(data):
    X, y, edges, labels, nodes = srl.load_linqs(data, name="graph", return_names=True)
    Xo, yo, pairs, names, ids = read_fixture(data)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64
    assert np.array_equal(X.toarray(), Xo)
    assert y.dtype == np.int64 and np.array_equal(y, yo)
    assert labels == names and nodes == ids
    assert edges.shape == (len(pairs), 2) and edges.dtype == np.int64
    assert {tuple(sorted(e)) for e in edges.tolist()} == pairs
    # the .content path itself works too
    X2, y2, e2 = srl.load_linqs(data / "graph.content")
    assert np.array_equal(X2.toarray(), Xo) and np.array_equal(e2, edges)


def split(n, seed=0, frac=0.5):
    return np.random.default_rng(seed).random(n) < frac


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning")
@pytest.mark.parametrize("est", [
    srl.ContentOnly(), srl.ContentOnly(local="nb"), srl.ContentOnly(local="mnb"),
    srl.ICA(), srl.ICA(local="nb", aggregator="proportion", ordering="fixed",
                       bootstrap="content_only"),
    srl.ICA(local="mnb"), srl.ICA(lr_lambda=0.01),
    srl.CollectiveGibbs(burn_in=20, samples=100),
    srl.CollectiveGibbs(local="mnb", burn_in=20, samples=100), srl.MarkovNetwork(),
    srl.MarkovNetwork(inference="mf"), srl.MarkovNetwork(inference="mean_field"),
])
def test_every_estimator_labels_the_hidden_nodes(data, est):
    X, y, edges = srl.load_linqs(data, name="graph")
    observed = split(len(y), seed=3)  # 14 of 24 nodes observed
    pred = est.fit_predict(X, y, edges, observed)
    proba = est.predict_proba()
    assert pred.shape == y.shape and proba.shape == (len(y), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    assert np.array_equal(pred[observed], y[observed])  # observed nodes keep their label
    assert isinstance(est.convergence_, srl.Convergence)
    assert list(est.classes_) == [0, 1]
    # the two classes are separable from the attributes and the edges mostly link
    # nodes of one class: every method beats chance on the hidden nodes
    assert (pred[~observed] == y[~observed]).mean() > 0.6
    # dense X and y = -1 for hidden nodes give the same answer
    again = type(est)(**est.get_params()).fit_predict(
        X.toarray(), np.where(observed, y, -1), edges)
    assert np.array_equal(again, pred)


def test_seeded_and_parameters(data):
    X, y, edges = srl.load_linqs(data, name="graph")
    obs = split(len(y), seed=3)
    a = srl.CollectiveGibbs(burn_in=10, samples=50, random_state=5).fit(X, y, edges, obs)
    b = srl.CollectiveGibbs(burn_in=10, samples=50, random_state=5).fit(X, y, edges, obs)
    assert np.array_equal(a.predict_proba(), b.predict_proba())
    ica = srl.ICA(max_iters=7)
    assert ica.get_params()["max_iters"] == 7
    assert ica.set_params(max_iters=3) is ica and ica.max_iters == 3
    with pytest.raises(ValueError, match="invalid parameter"):
        ica.set_params(alpha=1)
    assert "ICA(" in repr(ica)


def test_one_vocabulary_old_spellings_warn(data):
    """``inference="mean_field"`` is the old spelling of ``"mf"`` (same numbers, a
    DeprecationWarning); ``local="nb"`` changed meaning (a FutureWarning names "mnb")."""
    X, y, edges = srl.load_linqs(data, name="graph")
    obs = split(len(y), seed=3)
    mf = srl.MarkovNetwork(inference="mf").fit(X, y, edges, obs)
    with pytest.warns(DeprecationWarning, match='"mf"'):
        old = srl.MarkovNetwork(inference="mean_field").fit(X, y, edges, obs)
    assert np.array_equal(mf.predict_proba(), old.predict_proba())
    assert mf.convergence_.converged
    with pytest.warns(FutureWarning, match="mnb"):
        srl.ICA(local="nb").fit(X, y, edges, obs)
    # the pipeline's LR prior: tuned by default, fixed with lr_lambda
    a = srl.ICA(lr_lambda=0.01, random_state=1).fit(X, y, edges, obs).predict_proba()
    b = srl.ICA(lr_lambda=0.01, random_state=1).fit(X, y, edges, obs).predict_proba()
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="lr_prior"):
        srl.ICA(lr_lambda=-1.0).fit(X, y, edges, obs)
    with pytest.raises(ValueError, match="inference"):
        srl.MarkovNetwork(inference="gibbs").fit(X, y, edges, obs)


def test_collective_errors(tmp_path, data):
    X, y, edges = srl.load_linqs(data, name="graph")
    with pytest.raises(srl.NotFittedError):
        srl.ICA().predict()
    with pytest.raises(ValueError, match="rows"):
        srl.ICA().fit(X, y[:-1], edges)
    with pytest.raises(ValueError, match="labels are 0..2"):
        srl.ICA(n_classes=2).fit(X, np.where(y == 1, 5, y), edges)
    with pytest.raises(ValueError, match="edges"):
        srl.ICA().fit(X, y, np.array([[0, 1, 2]]))
    with pytest.raises(ValueError):
        srl.ICA().fit(X, y, np.array([[0, 999]]))
    with pytest.raises(ValueError, match="aggregator"):
        srl.ICA(aggregator="sum").fit(X, y, edges, split(len(y)))
    with pytest.raises(ValueError, match="local"):
        srl.ContentOnly(local="svm").fit(X, y, edges, split(len(y)))
    with pytest.raises(ValueError):
        srl.ICA().fit(X, y, edges, np.zeros(len(y), dtype=bool))  # nothing observed
    with pytest.raises(FileNotFoundError):
        srl.load_linqs(tmp_path, name="nope")
    (tmp_path / "bad.content").write_text("n0\t1\t0\ta\nn1\t1\tx\tb\n")
    (tmp_path / "bad.cites").write_text("n0\tn1\n")
    with pytest.raises(srl.ParseError) as e:
        srl.load_linqs(tmp_path, name="bad")
    assert e.value.lineno == 2 and e.value.filename.endswith("bad.content")


def test_cora_ica_beats_content_only(srl_data_dir):
    """Sen et al. 2008 (and the slides): on Cora, ICA with logistic regression is more
    accurate than content only (slides: 0.8796 vs 0.77 with 10-fold CV)."""
    cora = srl_data_dir / "cora"
    if not cora.is_dir():
        pytest.skip(f"{cora} is missing")
    X, y, edges = srl.load_linqs(cora)
    assert X.shape == (2708, 1433) and edges.shape == (5278, 2)
    obs = split(len(y), seed=1, frac=0.9)
    co = srl.ContentOnly().fit_predict(X, y, edges, obs)
    ica = srl.ICA().fit_predict(X, y, edges, obs)
    acc_co = (co[~obs] == y[~obs]).mean()
    acc_ica = (ica[~obs] == y[~obs]).mean()
    assert acc_ica > acc_co and acc_ica > 0.8
