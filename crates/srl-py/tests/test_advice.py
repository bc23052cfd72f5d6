"""Expert advice (knowledge-based RFGB, Odom et al. 2015; BoostSRL -adviceFile /
-adviceWt) through ``advice=`` / ``advice_weight=``, and several targets in one run
(BoostSRL -target a,b,c) through ``srl.fit_targets``. The learning is srl-boost's
(``SoftRfgbParams::fit_with_advice``, ``fit_targets``); these tests check that the
bindings reach it and keep scikit-learn's parameter contract."""

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import srl

# srl-boost's worked example (crates/srl-boost/tests/fixtures/advice, its README): six
# training examples where `stress` separates the labels by chance, a test set where
# `smokes` decides, and the advice "smokers get cancer"
FIXTURE = Path(__file__).parents[2] / "srl-boost" / "tests" / "fixtures" / "advice"
ADVICE = FIXTURE / "advice.txt"


def auc(p, y):
    """AUC-ROC by ranks (ties count half)."""
    p, y = np.asarray(p), np.asarray(y, dtype=bool)
    pos, neg = p[y], p[~y]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return wins / (len(pos) * len(neg))


@pytest.fixture
def scarce():
    return (srl.Database.from_folder(FIXTURE / "train"),
            srl.Database.from_folder(FIXTURE / "test", prefix="test"))


def test_advice_makes_up_for_scarce_data_as_the_rust_example(scarce):
    """crates/srl-boost/tests/advice.rs `advice_helps_scarce_data`: BoostSRL's defaults,
    seed 1; from the data alone the test AUC-ROC is 0.5, with the advice at w = 0.5 it
    is 0.833 (docs/srl-boost.md, Advice)."""
    train, test = scarce
    _, y = test.examples("cancer")
    plain = srl.BoostedRDN(target="cancer").fit(train)
    advised = srl.BoostedRDN(target="cancer", advice=ADVICE).fit(train)
    assert auc(plain.predict_proba(test), y) <= 0.5 + 1e-9
    assert auc(advised.predict_proba(test), y) == pytest.approx(5 / 6)
    # the data alone split on stress first, the advice makes the first tree split on smokes
    assert plain.estimators_[0][0].startswith("cancer(A) :- stress(A).")
    assert advised.estimators_[0][0].startswith("cancer(A) :- smokes(A).")
    assert plain.advice_ is None
    assert advised.advice_ == {"file": str(ADVICE), "weight": 0.5, "pieces": 1,
                               "preferred_examples": 2, "avoided_examples": 0}
    # the model file records it as `srl boost learn --advice` writes it, and reads back
    f = json.loads(advised.to_json())
    assert f["model"]["advice"]["weight"] == 0.5
    assert f["parameters"]["advice_weight"] == 0.5
    again = srl.BoostedRDN.from_json_string(advised.to_json())
    assert again.advice_ == advised.advice_
    assert again.get_params()["advice"] == str(ADVICE)
    assert np.array_equal(again.predict_proba(test), advised.predict_proba(test))
    # w = 0: the data alone (the same trees); Soft-RFGB takes advice too
    zero = srl.BoostedRDN(target="cancer", advice=ADVICE, advice_weight=0.0).fit(train)
    assert zero.estimators_ == plain.estimators_
    soft = srl.SoftBoostedRDN(target="cancer", alpha=0.0, beta=0.0, advice=ADVICE).fit(train)
    assert soft.estimators_ == advised.estimators_


@pytest.mark.parametrize("weight", [1.5, -0.1, math.nan, math.inf])
def test_advice_weight_outside_0_1_is_a_value_error_of_fit(scarce, weight):
    train, _ = scarce
    # stored unchanged by the constructor and set_params (scikit-learn's contract) ...
    m = srl.BoostedRDN(target="cancer", advice=ADVICE, advice_weight=weight)
    assert m.get_params()["advice_weight"] is weight
    with pytest.raises(ValueError, match=r"advice_weight = .*\[0, 1\]"):
        m.fit(train)
    assert not m.__sklearn_is_fitted__()
    # ... also without advice, and after set_params
    m = srl.SoftBoostedRDN(target="cancer").set_params(advice_weight=weight)
    with pytest.raises(ValueError, match="advice_weight"):
        m.fit(train)
    m.set_params(advice_weight=0.25).fit(train)


def test_advice_parameter_errors(scarce, tmp_path):
    train, _ = scarce
    with pytest.raises(ValueError, match="advice_weight"):
        srl.BoostedRDN(target="cancer").set_params(advice_weight="heavy")
    with pytest.raises(ValueError, match="advice"):
        srl.BoostedRDN(target="cancer").set_params(advice=3)
    # MLN-Boost takes no advice (BoostSRL applies it to RDNs; the CLI refuses it too)
    with pytest.raises(TypeError):
        srl.BoostedMLN(target="cancer", advice=ADVICE)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="invalid parameter 'advice'"):
        srl.BoostedMLN(target="cancer").set_params(advice=ADVICE)
    assert "advice" not in srl.BoostedMLN().get_params()
    # the file is read by fit: a missing one is an OSError naming it
    with pytest.raises(FileNotFoundError, match="none.txt"):
        srl.BoostedRDN(target="cancer", advice=tmp_path / "none.txt").fit(train)
    # a malformed one: srl.ParseError with its file and line
    (tmp_path / "c.txt").write_text("4.0 cancer(A) :- smokes(A).\n")
    bad = tmp_path / "advice.txt"
    bad.write_text("cancer\ncancer\nc.txt\n")
    with pytest.raises(srl.ParseError, match="both preferred") as e:
        srl.BoostedRDN(target="cancer", advice=bad).fit(train)
    assert (e.value.filename, e.value.lineno) == (str(bad), 2)
    # a label naming no predicate of the examples is a typo
    bad.write_text("cancr\n!cancr\nc.txt\n")
    (tmp_path / "c.txt").write_text("4.0 cancr(A) :- smokes(A).\n")
    with pytest.raises(srl.ParseError, match="names none of the targets"):
        srl.BoostedRDN(target="cancer", advice=bad).fit(train)


# two targets: cancer and smokes, each with positives and negatives
TWO = dict(
    pos=["cancer(a).", "cancer(b).", "cancer(c).", "smokes(a).", "smokes(b).", "smokes(g)."],
    neg=["cancer(d).", "cancer(e).", "cancer(f).", "cancer(g).", "smokes(c).", "smokes(d).",
         "smokes(e).", "smokes(f)."],
    facts=["friends(a,b).", "friends(c,a).", "friends(d,e).", "friends(b,a).", "stress(a).",
           "stress(c).", "stress(g)."],
    modes=["smokes(+person).", "friends(+person,-person).", "stress(+person).",
           "cancer(+person)."],
)


@pytest.mark.parametrize("cls,extra", [
    (srl.BoostedRDN, {}),
    (srl.SoftBoostedRDN, {"alpha": 0.5, "beta": -0.5}),
    (srl.BoostedMLN, {}),
])
def test_fit_targets_equals_the_single_target_fits(cls, extra):
    db = srl.Database(**TWO)
    template = cls(n_estimators=3, min_leaf_examples=1, random_state=5, **extra)
    for targets in ("cancer, smokes", ["cancer", "smokes"], ("cancer", "smokes")):
        models = srl.fit_targets(template, db, targets)
        assert list(models) == ["cancer", "smokes"]
        for t, m in models.items():
            assert type(m) is cls and m.target == t and m.target_ == t
            single = cls(target=t, n_estimators=3, min_leaf_examples=1, random_state=5,
                         **extra).fit(db)
            assert m.get_params() == single.get_params()
            assert m.estimators_ == single.estimators_
            assert np.array_equal(m.predict_proba(db), single.predict_proba(db))
            assert m.to_json() == single.to_json()
    # the template keeps its parameters and stays unfitted
    assert template.target is None and not template.__sklearn_is_fitted__()


def test_fit_targets_with_advice_gives_each_model_its_pieces(tmp_path):
    db = srl.Database(**TWO)
    (tmp_path / "c.txt").write_text("4.0 cancer(A) :- stress(A).\n-4.0 cancer(A) :- !.\n")
    advice = tmp_path / "advice.txt"
    advice.write_text("cancer\n!cancer\nc.txt\n")
    template = srl.BoostedRDN(n_estimators=3, min_leaf_examples=1, advice=advice)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every label names a target: no warning
        models = srl.fit_targets(template, db, "cancer,smokes")
    assert models["cancer"].advice_["pieces"] == 1
    assert models["smokes"].advice_["pieces"] == 0
    # a single fit of smokes with that advice: it is not used, and said so
    with pytest.warns(UserWarning, match="advice on cancer .* is not used"):
        single = srl.BoostedRDN(target="smokes", n_estimators=3, min_leaf_examples=1,
                                advice=advice).fit(db)
    assert models["smokes"].to_json() == single.to_json()


def test_fit_targets_errors():
    db = srl.Database(**TWO)
    m = srl.BoostedRDN(n_estimators=2, min_leaf_examples=1)
    for bad, msg in (("cancer,,smokes", "empty target name"), ("cancer,CANCER", "twice"),
                     ([], "empty target name"), ("cancer,friends", "no atom of target")):
        with pytest.raises(ValueError, match=msg):
            srl.fit_targets(m, db, bad)
    with pytest.raises(TypeError, match="one target at a time"):
        srl.fit_targets(srl.BoostedRDNRegressor(), db, "cancer")  # type: ignore[type-var]
    with pytest.raises(TypeError):
        srl.fit_targets(m, db, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_estimators"):
        srl.fit_targets(srl.BoostedRDN(n_estimators=0), db, "cancer")
