"""Three srl-boost options on the boosting estimators, as `srl boost learn / predict`
expose them: recursive targets (the background's `setParam: recursion=true.`, Gibbs
prediction: `gibbs_burn_in`, `gibbs_samples`, `recursion_`), BoostSRL's seed-based
candidate sampling (`seed_examples`, `--seed-examples N`) and MLN-Boost by clauses
(`BoostedMLN(mln_clause=True, n_mln_clauses=, mln_clause_length=)`, `--mln-clause`)."""

import copy
import inspect
import json
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import srl

FIXTURES = Path(__file__).resolve().parents[2] / "srl-boost" / "tests" / "fixtures"
# smokers in 20 friend communities per split (docs/srl-boost.md, Recursive targets)
RECURSION = FIXTURES / "recursion"
BOOSTED = (srl.BoostedRDN, srl.SoftBoostedRDN, srl.BoostedMLN)


def recursion_world():
    """The fixture's train and test folders with the separate background file (which
    sets `recursion=true` and `nodeSize=2` and declares `recursive_smokes`)."""
    bk = RECURSION / "background.txt"
    train = srl.Database.from_folder(RECURSION / "train", bk=bk)
    test = srl.Database.from_folder(RECURSION / "test", prefix="test", bk=bk)
    return train, test


def smokers(data):
    return (srl.Database.from_folder(data / "boost" / "train"),
            srl.Database.from_folder(data / "boost" / "test", prefix="test"))


# `srl boost learn` / `srl boost predict` on the recursion fixture with their default
# seed 1 (the default random_state too), 10 trees, 20 burn-in and 200 kept sweeps; the
# probability column of p.tsv in the order of test.examples("smokes"), as printed:
#   srl boost learn --train train --bk background.txt --target smokes --model m.json
#   srl boost predict --model m.json --test test --bk background.txt --out p.tsv
# and the first twelve with `--seed 2` (the Gibbs seed; the model is the same: the 54
# negatives are fewer than 2 per positive, so every seed keeps them all).
CLI_SEED1 = [
    0.7816263188147089,
    0.7578814987862103,
    0.8552770602289705,
    0.6292904843547883,
    0.6846571493344916,
    0.7549874648380113,
    0.7265672990162195,
    0.8706692328837184,
    0.763548080105697,
    0.8704574340872191,
    0.7221809550365463,
    0.8706145857419003,
    0.8004050207187405,
    0.6379309917484663,
    0.8626983532377415,
    0.8555403013668271,
    0.6370218685249586,
    0.7383964360524736,
    0.8617415063781462,
    0.6489931112215698,
    0.8554383039376227,
    0.8607846595185511,
    0.6944803181666108,
    0.7059276637838215,
    0.6812808541367841,
    0.6965916582280383,
    0.3672994206802079,
    0.8333743416336169,
    0.26169240440303304,
    0.8041261345604286,
    0.8445978843150135,
    0.8462373417229604,
    0.8613587676343083,
    0.8056647057170552,
    0.7637088722406716,
    0.8598362516624788,
    0.33667977043055985,
    0.7624973629489205,
    0.8674680015141975,
    0.8640792295477655,
    0.6969434995928164,
    0.8563621260808528,
    0.29095045137038367,
    0.6974036790668908,
    0.6969963890112958,
    0.3322818833682016,
    0.5671688853986794,
    0.7686641215973,
    0.26766380146672597,
    0.4122978627191221,
    0.7065835384907654,
    0.6486687247333132,
    0.585912026891059,
    0.7039492740221533,
    0.6861369771460017,
    0.48783289822705356,
    0.8526862106892388,
    0.6280397275214379,
    0.8419647434665375,
    0.27248736715524735,
    0.834701320047463,
    0.7576947406461568,
    0.6823629079892563,
    0.8651060780630949,
    0.7099141652450076,
    0.8700190863959526,
    0.8694907796544465,
    0.8697670331659413,
    0.8668068013175985,
    0.8638966904268182,
    0.7265672990162195,
    0.8668888764058813,
    0.8710793995740214,
    0.7098157154662439,
    0.8399971468899511,
    0.34460794162506686,
    0.8545296718390348,
    0.7125090500482094,
    0.1741505547332728,
    0.2760417570200516,
    0.8437366265403806,
    0.8195481746260814,
    0.2995540475065341,
    0.8582094538700044,
    0.5170135649286796,
    0.2634899058376362,
    0.7027987027981533,
    0.2764004696201152,
    0.16941721303455023,
    0.2643405040567911,
    0.2006306411937393,
    0.06325834140950976,
    0.06044194816773882,
    0.33642289448265417,
    0.47221816748309736,
    0.21958440481670272,
    0.27823490250351063,
    0.19337336479657183,
    0.14763352251568318,
    0.6356819653690489,
    0.3875731581150111,
    0.6302351012086269,
    0.7605236368452362,
    0.6250263739637183,
    0.2681846563039922,
    0.20843924388961468,
    0.3672994206802079,
    0.33449893489099247,
    0.5974784443033233,
    0.7070645783116202,
    0.3181446635911874,
    0.47620528603518403,
    0.2706580788018716,
    0.18367914790958398,
    0.343694463490257,
    0.4865757206913879,
    0.7671534914850849,
    0.7364072997017602,
    0.736854011234048,
    0.8705325106536174,
]
CLI_SEED2_FIRST12 = [
    0.7844911330744049,
    0.7537682071474893,
    0.8548475583052709,
    0.621573817862477,
    0.6734347481271378,
    0.7508540288871334,
    0.7265672990162195,
    0.8647293760355312,
    0.7665065425928559,
    0.8713528440342234,
    0.7185250435701646,
    0.8714895662643245,
]


def test_recursive_rdn_predicts_by_gibbs_sampling():
    train, test = recursion_world()
    m = srl.BoostedRDN(target="smokes").fit(train)
    assert m.recursion_ == "recursive_smokes"
    assert any("recursive_smokes" in c for tree in m.estimators_ for c in tree)
    p = m.predict_proba(test)
    atoms, y = test.examples("smokes")
    assert p.shape == (120,) == y.shape and p.dtype == np.float64
    assert ((p >= 0) & (p <= 1)).all()
    assert p[y].mean() > p[~y].mean()
    # the Gibbs seed is random_state: same seed, same marginals; another, others
    assert np.array_equal(m.predict_proba(test), p)
    again = srl.BoostedRDN(target="smokes", random_state=1).fit(train)
    assert np.array_equal(again.predict_proba(test), p)
    other = srl.BoostedRDN(target="smokes", random_state=2).fit(train)
    assert not np.array_equal(other.predict_proba(test), p)
    # the sweeps change the estimate; set_params on a fitted model applies at once
    fewer = srl.BoostedRDN(target="smokes", gibbs_burn_in=2, gibbs_samples=10).fit(train)
    assert fewer.to_json().split('"model"')[1] == m.to_json().split('"model"')[1]
    pf = fewer.predict_proba(test)
    assert not np.array_equal(pf, p) and ((pf >= 0) & (pf <= 1)).all()
    m.set_params(gibbs_burn_in=2, gibbs_samples=10)
    assert np.array_equal(m.predict_proba(test), pf)
    m.set_params(gibbs_burn_in=20, gibbs_samples=200)
    assert np.array_equal(m.predict_proba(test), p)
    m.set_params(gibbs_burn_in=0)
    assert not np.array_equal(m.predict_proba(test), p)
    m.set_params(gibbs_burn_in=20)
    # log-odds of the marginals, predictions, accuracy
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(m.decision_function(test), np.log(p / (1 - p)),
                                   rtol=1e-12)
    assert np.array_equal(m.predict(test), p >= 0.5)
    assert m.score(test) == float(((p >= 0.5) == y).mean())
    # pickling, deepcopy and model files keep the arguments and the marginals
    m.set_params(gibbs_samples=50, random_state=3)
    p50 = m.predict_proba(test)
    for back in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m),
                 srl.BoostedRDN.from_json_string(m.to_json())):
        assert back.get_params() == m.get_params() and back.recursion_ == "recursive_smokes"
        assert np.array_equal(back.predict_proba(test), p50)


def test_recursive_models_of_every_estimator():
    train, test = recursion_world()
    for cls in BOOSTED:
        m = cls(target="smokes", n_estimators=3, gibbs_samples=30).fit(train)
        assert m.recursion_ == "recursive_smokes", cls
        p = m.predict_proba(test)
        assert ((p >= 0) & (p <= 1)).all() and np.array_equal(m.predict_proba(test), p)
        assert not np.array_equal(m.set_params(random_state=9).predict_proba(test), p)


def test_without_recursion_gibbs_arguments_are_ignored(data):
    train, test = smokers(data)
    a = srl.BoostedRDN(target="cancer", min_leaf_examples=1).fit(train)
    b = srl.BoostedRDN(target="cancer", min_leaf_examples=1, gibbs_burn_in=0,
                       gibbs_samples=1).fit(train)
    assert a.recursion_ is None and b.recursion_ is None
    assert np.array_equal(a.predict_proba(test), b.predict_proba(test))
    assert np.array_equal(a.decision_function(test), b.decision_function(test))


def test_recursion_needs_the_setting_and_a_mode():
    train, _ = recursion_world()
    # use_setparam=False ignores `setParam: recursion=true.`: the mode on
    # recursive_smokes cannot take effect, and fit says so (as srl boost learn)
    with pytest.warns(UserWarning, match="mode recursive_smokes: the background does not set"):
        m = srl.BoostedRDN(target="smokes", n_estimators=2, use_setparam=False).fit(train)
    assert m.recursion_ is None
    # the setting without a mode on recursive_smokes
    modes = [x for x in train.modes if "recursive" not in x] + ["setParam: recursion=true."]
    db = srl.Database(pos=train.pos, neg=train.neg, facts=train.facts, modes=modes)
    with pytest.warns(UserWarning, match="no mode declares recursive_smokes"):
        m = srl.BoostedRDN(target="smokes", n_estimators=2).fit(db)
    assert m.recursion_ == "recursive_smokes"
    # with both there is nothing to say
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        srl.BoostedRDN(target="smokes", n_estimators=2).fit(train)


def test_gibbs_samples_zero_is_a_value_error_at_fit_and_predict(data):
    train, test = recursion_world()
    for cls in BOOSTED:
        with pytest.raises(ValueError, match=r"gibbs_samples = 0: .*at least one Gibbs sweep"):
            cls(target="smokes", n_estimators=2, gibbs_samples=0).fit(train)
    m = srl.BoostedRDN(target="smokes", n_estimators=2).fit(train)
    m.set_params(gibbs_samples=0)
    for f in (m.predict_proba, m.decision_function, m.predict, m.score):
        with pytest.raises(ValueError, match="gibbs_samples = 0"):
            f(test)
    # an attribute set directly is seen by the next prediction too
    m.gibbs_samples = 5
    assert m.predict_proba(test).shape == (120,)
    with pytest.raises(ValueError, match="whole number"):
        srl.BoostedRDN(target="smokes", gibbs_burn_in=-1)
    # a model that is not recursive checks it as well (the argument is wrong either way)
    s, st = smokers(data)
    n = srl.BoostedMLN(target="cancer", n_estimators=2).fit(s)
    with pytest.raises(ValueError, match="gibbs_samples = 0"):
        n.set_params(gibbs_samples=0).predict_proba(st)


def test_recursive_model_equals_the_clis():
    """`srl boost learn` + `srl boost predict` with --seed S (negatives and Gibbs) give
    the numbers of BoostedRDN(random_state=S) (the CLI's run is in the comment above)."""
    train, test = recursion_world()
    m = srl.BoostedRDN(target="smokes").fit(train)
    assert m.predict_proba(test).tolist() == CLI_SEED1
    m2 = srl.BoostedRDN(target="smokes", random_state=2).fit(train)
    assert m2.predict_proba(test)[:12].tolist() == CLI_SEED2_FIRST12


def test_seed_examples_are_deterministic_and_recorded(data):
    train, test = smokers(data)
    for cls in BOOSTED:
        a = cls(target="cancer", min_leaf_examples=1, seed_examples=2, random_state=4)
        b = clone_of(a)
        a.fit(train)
        b.fit(train)
        assert a.to_json() == b.to_json(), cls
        assert np.array_equal(a.predict_proba(test), b.predict_proba(test))
        env = json.loads(a.to_json())
        # the library parameters as `srl boost learn --seed-examples 2` writes them
        assert env["parameters"]["tree"]["seed_sampling"] == {"seeds": 2, "seed": 0}
        assert env["parameters"]["estimator"]["params"]["seed_examples"] == 2
        # a CLI file (no estimator arguments) gives seed_examples back from the tree's
        del env["parameters"]["estimator"]
        back = cls.from_json_string(json.dumps(env))
        assert back.get_params()["seed_examples"] == 2
        assert np.array_equal(back.predict_proba(test), a.predict_proba(test))
        # without seed sampling the file has no such field
        plain = json.loads(cls(target="cancer", n_estimators=1).fit(train).to_json())
        assert "seed_sampling" not in plain["parameters"]["tree"]
    # one seed per node prunes candidates: the trees change (with the same negatives)
    full = srl.BoostedRDN(target="cancer", min_leaf_examples=1, random_state=4).fit(train)
    one = srl.BoostedRDN(target="cancer", min_leaf_examples=1, random_state=4,
                         seed_examples=1).fit(train)
    assert full.estimators_ != one.estimators_
    for cls in BOOSTED:
        with pytest.raises(ValueError, match=r"seed_examples = 0: draw at least one seed"):
            cls(target="cancer", seed_examples=0).fit(train)
        with pytest.raises(ValueError, match="whole number"):
            cls(target="cancer", seed_examples=-3)


def clone_of(est):
    return type(est)(**est.get_params())


def test_mln_by_clauses(data):
    train, test = smokers(data)
    m = srl.BoostedMLN(target="cancer", mln_clause=True).fit(train)
    steps = m.clauses_per_step_
    assert steps and all(k >= 1 for k in steps) and len(steps) <= 10
    # BoostSRL's schedule: at most 20 // (m + 1) clauses at step m
    assert all(k <= 20 // (i + 1) for i, k in enumerate(steps))
    assert sum(steps) == len(m.estimators_)
    assert "clause-based" in str(m) and "mln_clause=True" in repr(m)
    p = m.predict_proba(test)
    _, y = test.examples("cancer")
    assert ((p > 0) & (p < 1)).all() and p[y].mean() > p[~y].mean()
    # tree-based MLN-Boost has no clause steps
    trees = srl.BoostedMLN(target="cancer", n_estimators=3).fit(train)
    assert trees.clauses_per_step_ == [] and "tree-based" in str(trees)
    # fixed sizes (BoostSRL -numMLNClause / -mlnClauseLen, as their names promise)
    f = srl.BoostedMLN(target="cancer", n_estimators=4, mln_clause=True, n_mln_clauses=2,
                       mln_clause_length=1).fit(train)
    assert 1 <= len(f.clauses_per_step_) <= 4 and max(f.clauses_per_step_) <= 2
    # each clause is a one-split tree (body: weight, else 0) of one literal
    bodies = [t[0].split(":-")[1].split("⇒")[0] for t in f.estimators_]
    assert all(len(t) == 2 for t in f.estimators_) and all(b.count("(") == 1 for b in bodies)
    # the model file: the library's `clauses` as `srl boost learn --mln-clause` writes it
    env = json.loads(f.to_json())
    assert env["parameters"]["clauses"]["schedule"] == {"Fixed": {"clauses": 2, "length": 1}}
    assert env["model"]["clause_steps"] == f.clauses_per_step_
    for back in (pickle.loads(pickle.dumps(f)), copy.deepcopy(f),
                 srl.BoostedMLN.from_json_string(f.to_json())):
        assert back.get_params() == f.get_params()
        assert back.clauses_per_step_ == f.clauses_per_step_
        assert np.array_equal(back.predict_proba(test), f.predict_proba(test))
    # a CLI file (no estimator arguments): mln_clause and the sizes from `clauses`
    del env["parameters"]["estimator"]
    cli = srl.BoostedMLN.from_json_string(json.dumps(env)).get_params()
    assert (cli["mln_clause"], cli["n_mln_clauses"], cli["mln_clause_length"]) == (True, 2, 1)
    env = json.loads(m.to_json())
    del env["parameters"]["estimator"]
    cli = srl.BoostedMLN.from_json_string(json.dumps(env)).get_params()
    assert (cli["mln_clause"], cli["n_mln_clauses"], cli["mln_clause_length"]) == (True, None, None)
    # several targets by clauses
    models = srl.fit_targets(srl.BoostedMLN(n_estimators=2, mln_clause=True), train, "cancer")
    assert models["cancer"].clauses_per_step_


@pytest.mark.parametrize("kw,match", [
    ({"n_mln_clauses": 2}, r"n_mln_clauses 2 and mln_clause_length none: the two go together"),
    ({"mln_clause_length": 2}, r"n_mln_clauses none and mln_clause_length 2: the two go together"),
    ({"mln_clause": True, "n_mln_clauses": 3}, "give both or neither"),
    ({"n_mln_clauses": 2, "mln_clause_length": 2}, r"give mln_clause=True too"),
    ({"mln_clause": True, "n_mln_clauses": 0, "mln_clause_length": 2},
     r"n_mln_clauses 0: learn at least one clause per step"),
    ({"mln_clause": True, "n_mln_clauses": 2, "mln_clause_length": 0},
     r"mln_clause_length 0: a clause body has at least one literal"),
])
def test_mln_clause_arguments_are_checked_as_the_cli_does(data, kw, match):
    train, _ = smokers(data)
    m = srl.BoostedMLN(target="cancer", n_estimators=2, **kw)
    with pytest.raises(ValueError, match=match):
        m.fit(train)
    assert not m.__sklearn_is_fitted__()


def test_the_rdn_estimators_have_no_clause_arguments():
    for cls in (srl.BoostedRDN, srl.SoftBoostedRDN):
        assert "mln_clause" not in cls().get_params()
        with pytest.raises(TypeError):
            cls(mln_clause=True)
        with pytest.raises(ValueError, match="invalid parameter 'n_mln_clauses'"):
            cls().set_params(n_mln_clauses=2)


def test_get_params_follow_the_constructor_and_round_trip():
    new = {"seed_examples": 3, "gibbs_burn_in": 5, "gibbs_samples": 7}
    mln = {"mln_clause": True, "n_mln_clauses": 4, "mln_clause_length": 2}
    for cls in BOOSTED:
        # every argument, in the constructor's order (the Python class and the Rust one)
        names = list(inspect.signature(cls).parameters)
        assert list(cls().get_params()) == names
        assert list(srl._srl.__dict__[cls.__name__].get_params(cls())) == names
        defaults = cls().get_params()
        assert (defaults["seed_examples"], defaults["gibbs_burn_in"],
                defaults["gibbs_samples"]) == (None, 20, 200)
        kw = {**new, **(mln if cls is srl.BoostedMLN else {})}
        m = cls(target="cancer", **kw)
        assert all(m.get_params()[k] == v for k, v in kw.items())
        r = repr(m)
        assert "seed_examples=3" in r and "gibbs_burn_in=5" in r and "gibbs_samples=7" in r
        assert "gibbs" not in repr(cls(target="cancer"))
        if cls is srl.BoostedMLN:
            assert "mln_clause=True, n_mln_clauses=4, mln_clause_length=2" in r
        for c in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), clone_of(m)):
            assert type(c) is cls and c.get_params() == m.get_params()
        u = cls(target="cancer").set_params(**kw)
        assert u.get_params() == m.get_params()
        with pytest.raises(ValueError, match="gibbs_samples"):
            cls().set_params(gibbs_samples="many")


def test_sklearn_clone_keeps_the_new_arguments():
    base = pytest.importorskip("sklearn.base")
    m = srl.BoostedMLN(target="cancer", seed_examples=2, gibbs_samples=9, mln_clause=True,
                       n_mln_clauses=1, mln_clause_length=1)
    c = base.clone(m)
    assert c.get_params() == m.get_params()


def test_a_model_file_without_the_new_arguments_loads_with_their_defaults(data):
    train, test = smokers(data)
    for cls in BOOSTED:
        m = cls(target="cancer", n_estimators=2, min_leaf_examples=1).fit(train)
        env = json.loads(m.to_json())
        params = env["parameters"]["estimator"]["params"]
        for k in ("seed_examples", "gibbs_burn_in", "gibbs_samples", "mln_clause",
                  "n_mln_clauses", "mln_clause_length"):
            params.pop(k, None)
        back = cls.from_json_string(json.dumps(env))
        assert back.get_params() == m.get_params()
        assert np.array_equal(back.predict_proba(test), m.predict_proba(test))


def test_regression_refuses_a_recursive_target():
    world = FIXTURES / "regression"
    train = srl.Database.from_folder(world / "train", bk=world / "train" / "train_bk.txt")
    db = srl.Database(pos=train.pos, facts=train.facts,
                      modes=train.modes + ["setParam: recursion=true."])
    with pytest.raises(ValueError, match="recursion=true: recursive targets are learned for RDN"):
        srl.BoostedRDNRegressor(target="salary", n_estimators=1).fit(db)
    # use_setparam=False ignores the line
    srl.BoostedRDNRegressor(target="salary", n_estimators=1, use_setparam=False).fit(db)
