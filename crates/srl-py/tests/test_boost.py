"""srl.Database, srl.BoostedRDN, srl.SoftBoostedRDN: fitting, prediction, parameters and
model files."""

import json

import numpy as np
import pytest

import srl

SMOKERS = dict(
    pos=["cancer(a).", "cancer(b).", "cancer(c).", "cancer(g)."],
    neg=["cancer(d).", "cancer(e).", "cancer(f).", "cancer(h)."],
    facts=[
        "smokes(a).", "smokes(b).", "smokes(g).", "friends(c,a).", "friends(d,e).",
        "friends(h,e).", "stress(c).",
    ],
    # srlearn's style (bare modes) and BoostSRL's style (`mode:`) are both accepted.
    modes=["smokes(+person).", "mode: friends(+person,-person).", "stress(+person).",
           "cancer(+person)."],
)


def small_rdn(cls=srl.BoostedRDN, **kw):
    # min_leaf_examples=1: the toy problem has 8 examples.
    return cls(target="cancer", n_estimators=5, min_leaf_examples=1, **kw)


def test_database_from_lists_round_trips_the_atoms():
    db = srl.Database(**SMOKERS)
    assert db.pos == SMOKERS["pos"]
    assert db.neg == SMOKERS["neg"]
    assert db.facts == SMOKERS["facts"]
    assert db.modes[1] == "friends(+person,-person)."
    atoms, labels = db.examples("cancer")
    assert atoms == SMOKERS["pos"] + SMOKERS["neg"]
    assert labels.dtype == np.bool_ and labels.tolist() == [True] * 4 + [False] * 4


def test_boosted_rdn_separates_the_toy_problem():
    db = srl.Database(**SMOKERS)
    model = small_rdn().fit(db)
    p = model.predict_proba(db)
    assert p.shape == (8,) and p.dtype == np.float64
    assert ((p >= 0) & (p <= 1)).all()
    assert p[:4].min() > p[4:].max()
    assert model.predict(db).tolist() == (p >= 0.5).tolist()
    assert model.predict(db, threshold=0.0).all()
    # log-odds and probabilities agree
    np.testing.assert_allclose(1 / (1 + np.exp(-model.decision_function(db))), p, rtol=1e-12)
    assert len(model.estimators_) == 5
    assert model.target_ == "cancer"
    ll = model.train_log_likelihood_
    assert ll.shape == (6,) and ll[-1] > ll[0]
    assert "cancer" in str(model)


def test_same_seed_same_model_other_seed_other_sample(data):
    db = srl.Database.from_folder(data / "boost" / "train")
    a = srl.BoostedRDN(target="cancer", neg_pos_ratio=1.0, random_state=3).fit(db)
    b = srl.BoostedRDN(target="cancer", neg_pos_ratio=1.0, random_state=3).fit(db)
    assert np.array_equal(a.predict_proba(db), b.predict_proba(db))
    assert a.to_json() == b.to_json()


def test_get_params_set_params_and_clone():
    m = srl.SoftBoostedRDN(target="cancer", n_estimators=7, alpha=1.5, beta=-2.0,
                           neg_pos_ratio=3.0)
    p = m.get_params()
    assert p["target"] == "cancer" and p["n_estimators"] == 7
    assert p["alpha"] == 1.5 and p["beta"] == -2.0 and p["neg_pos_ratio"] == 3.0
    clone = srl.SoftBoostedRDN(**p)  # scikit-learn's clone pattern
    assert clone.get_params() == p
    assert m.set_params(n_estimators=3, beta=0.0) is m
    assert m.get_params()["n_estimators"] == 3 and m.get_params()["beta"] == 0.0
    assert "alpha" not in srl.BoostedRDN().get_params()


def test_soft_rfgb_with_zero_costs_is_rfgb_and_alpha_raises_recall(data):
    train = srl.Database.from_folder(data / "boost" / "train")
    test = srl.Database.from_folder(data / "boost" / "test", prefix="test")
    rfgb = srl.BoostedRDN(target="cancer", min_leaf_examples=1).fit(train)
    soft0 = srl.SoftBoostedRDN(target="cancer", min_leaf_examples=1).fit(train)
    assert np.array_equal(rfgb.predict_proba(test), soft0.predict_proba(test))
    soft = srl.SoftBoostedRDN(target="cancer", alpha=2.0, beta=0.0,
                              min_leaf_examples=1).fit(train)
    _, y = train.examples("cancer")
    # alpha > 0 weighs false negatives more: positives' probabilities do not drop.
    assert soft.predict_proba(train)[y].mean() >= rfgb.predict_proba(train)[y].mean()


def test_model_file_round_trip(tmp_path, data):
    train = srl.Database.from_folder(data / "boost" / "train")
    test = srl.Database.from_folder(data / "boost" / "test", prefix="test")
    for cls, extra in [(srl.BoostedRDN, {}), (srl.SoftBoostedRDN, {"alpha": 1.0, "beta": -1.0})]:
        m = cls(target="cancer", min_leaf_examples=1, random_state=5, **extra).fit(train)
        path = tmp_path / f"{cls.__name__}.json"
        assert m.to_json(str(path)) is None
        envelope = json.loads(path.read_text())
        # The envelope of `srl boost learn` (crates/srl-cli/src/model.rs).
        assert envelope["format"] == "srl-model"
        assert envelope["version"] == 1
        assert envelope["kind"] == "soft-rfgb"
        assert envelope["provenance"]["seed"] == 5
        assert envelope["parameters"]["n_trees"] == 10
        assert envelope["parameters"]["estimator"]["class"] == cls.__name__
        # an existing file is kept unless overwrite=True (the CLI's --force)
        with pytest.raises(FileExistsError, match="overwrite=True"):
            m.to_json(str(path))
        assert m.to_json(str(path), overwrite=True) is None
        assert not [p for p in tmp_path.iterdir() if "srl-tmp" in p.name]
        back = cls.from_json(str(path))
        assert back.get_params() == m.get_params()
        assert np.array_equal(back.predict_proba(test), m.predict_proba(test))
        assert back.estimators_ == m.estimators_
        text = m.to_json()
        assert np.array_equal(cls.from_json_string(text).predict_proba(test),
                              m.predict_proba(test))


def test_cli_style_model_file_without_estimator_params(tmp_path, data):
    """A file written by `srl boost learn` has no parameters.estimator: the arguments
    come from the model."""
    train = srl.Database.from_folder(data / "boost" / "train")
    m = srl.SoftBoostedRDN(target="cancer", alpha=0.5, n_estimators=4).fit(train)
    envelope = json.loads(m.to_json())
    del envelope["parameters"]["estimator"]
    back = srl.SoftBoostedRDN.from_json_string(json.dumps(envelope))
    p = back.get_params()
    assert p["target"] == "cancer" and p["n_estimators"] == 4 and p["alpha"] == 0.5
    assert np.array_equal(back.predict_proba(train), m.predict_proba(train))


# `srl.BoostedRDN` and the Rust API give the same probabilities on IMDB fold 1, seed 1.
# Rust side (srl-boost alone, no bindings), printed by:
#   SRL_DATA_DIR=/work/shared/data cargo run -p srl-py --example imdb_boost_probs -- \
#       "$SRL_DATA_DIR/boostsrl_imdb/workedunder_5fold/Fold1"
# (each value is the shortest decimal that reads back to the same float64).
IMDB_FOLD1_RUST_N = 168
IMDB_FOLD1_RUST_PROBS = [
    0.7955138757445126, 0.7687147736466399, 0.7955138757445126, 0.7955138757445126,
    0.7687147736466399, 0.7955138757445126, 0.7955138757445126, 0.7955138757445126,
    0.7687147736466399, 0.7955138757445126, 0.7955138757445126, 0.7955138757445126,
    0.7687147736466399, 0.7687147736466399, 0.7955138757445126, 0.7955138757445126,
    0.7687147736466399, 0.7955138757445126, 0.7955138757445126, 0.7955138757445126,
    0.7955138757445126, 0.7687147736466399, 0.7955138757445126, 0.7955138757445126,
    0.7687147736466399, 0.7687147736466399, 0.7687147736466399, 0.7687147736466399,
    0.7687147736466399, 0.7687147736466399, 0.7955138757445126, 0.7955138757445126,
    0.7687147736466399, 0.7955138757445126, 0.7955138757445126, 0.7955138757445126,
    0.7955138757445126, 0.7687147736466399, 0.7955138757445126, 0.7687147736466399,
    0.7955138757445126, 0.7687147736466399, 0.7687147736466399, 0.7687147736466399,
    0.7687147736466399, 0.7687147736466399, 0.7687147736466399, 0.7955138757445126,
    0.7687147736466399, 0.7955138757445126, 0.7687147736466399, 0.7687147736466399,
    0.7955138757445126, 0.7687147736466399, 0.7687147736466399, 0.7955138757445126,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.7955138757445126, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.7687147736466399, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.7687147736466399, 0.0604419481677386, 0.7955138757445126, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.7687147736466399, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.7687147736466399, 0.0604419481677386,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.7955138757445126,
    0.0604419481677386, 0.0604419481677386, 0.0604419481677386, 0.7955138757445126,
    0.0604419481677386, 0.7687147736466399, 0.0604419481677386, 0.0604419481677386,
]


def test_imdb_fold1_matches_rust(srl_data_dir):
    fold = srl_data_dir / "boostsrl_imdb" / "workedunder_5fold" / "Fold1"
    if not fold.is_dir():
        pytest.skip(f"{fold} is missing")
    train = srl.Database.from_folder(fold / "train")
    test = srl.Database.from_folder(fold / "test", prefix="test")
    model = srl.BoostedRDN(target="workedunder", n_estimators=10, random_state=1).fit(train)
    p = model.predict_proba(test)
    assert p.shape == (IMDB_FOLD1_RUST_N,)
    assert p.tolist() == IMDB_FOLD1_RUST_PROBS


def test_boosted_mln_fits_predicts_and_round_trips(tmp_path, data):
    train = srl.Database.from_folder(data / "boost" / "train")
    test = srl.Database.from_folder(data / "boost" / "test", prefix="test")
    mln = srl.BoostedMLN(target="cancer", n_estimators=5, min_leaf_examples=1).fit(train)
    p = mln.predict_proba(test)
    _, y = test.examples("cancer")
    assert p.shape == y.shape and ((p > 0) & (p < 1)).all()
    assert p[y].mean() > p[~y].mean()
    assert len(mln.estimators_) == 5 and mln.train_log_likelihood_.shape == (6,)
    path = tmp_path / "mln.json"
    mln.to_json(str(path))
    env = json.loads(path.read_text())
    assert env["kind"] == "mln-boost" and env["parameters"]["estimator"]["class"] == "BoostedMLN"
    back = srl.BoostedMLN.from_json(str(path))
    assert np.array_equal(back.predict_proba(test), p)
    assert back.get_params() == mln.get_params()
    # the kinds are checked both ways
    with pytest.raises(ValueError, match="holds a mln-boost model"):
        srl.BoostedRDN.from_json(str(path))
    rdn = srl.BoostedRDN(target="cancer", min_leaf_examples=1).fit(train)
    with pytest.raises(ValueError, match="holds a soft-rfgb model"):
        srl.BoostedMLN.from_json_string(rdn.to_json())
