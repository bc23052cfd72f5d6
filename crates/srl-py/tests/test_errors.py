"""Rust errors become Python exceptions: ValueError for bad input (srl.ParseError, with
filename and lineno, for a malformed line), OSError for files, srl.NotFittedError."""

import json

import numpy as np
import pytest

import srl


def test_exception_hierarchy():
    assert issubclass(srl.ParseError, ValueError)
    assert issubclass(srl.NotFittedError, ValueError)


def test_missing_folder_and_file(tmp_path, data):
    with pytest.raises(FileNotFoundError) as e:
        srl.Database.from_folder(str(tmp_path / "nope"))
    assert e.value.filename == str(tmp_path / "nope")
    (tmp_path / "train_pos.txt").write_text("p(a).\n")
    with pytest.raises(FileNotFoundError) as e:
        srl.Database.from_folder(str(tmp_path))
    assert e.value.filename.endswith("train_neg.txt")
    with pytest.raises(OSError):
        srl.PairwiseMRF.from_uai(str(tmp_path / "missing.uai"))
    with pytest.raises(FileNotFoundError):
        srl.BayesianNetwork.from_bif(str(tmp_path / "missing.bif"))
    with pytest.raises(FileNotFoundError):
        srl.BoostedRDN.from_json(str(tmp_path / "missing.json"))


def test_parse_errors_name_file_and_line(tmp_path):
    with pytest.raises(srl.ParseError) as e:
        srl.Database(pos=["cancer(a).", "cancer(b"], neg=["cancer(c)."])
    assert e.value.filename == "Database.pos" and e.value.lineno == 2
    assert str(e.value).startswith("Database.pos:2:")
    with pytest.raises(srl.ParseError) as e:
        srl.Database(modes=["smokes(+person).", "setParam: nodeSize"])
    assert e.value.lineno == 2
    for name in ["train_pos.txt", "train_neg.txt"]:
        (tmp_path / name).write_text("p(a).\n")
    (tmp_path / "train_facts.txt").write_text("q(a).\nq(a\n")
    with pytest.raises(srl.ParseError) as e:
        srl.Database.from_folder(str(tmp_path))
    assert e.value.filename.endswith("train_facts.txt") and e.value.lineno == 2
    bad_uai = tmp_path / "bad.uai"
    bad_uai.write_text("MARKOV\n2\n2 2\n1\n2 0 7\n")
    with pytest.raises(srl.ParseError) as e:
        srl.PairwiseMRF.from_uai(str(bad_uai))
    assert e.value.filename == str(bad_uai) and e.value.lineno >= 1
    bad_bif = tmp_path / "bad.bif"
    bad_bif.write_text("network x {\n}\nvariable A {\n  type discrete [ 2 ] { a, b };\n}\n"
                       "probability ( A ) {\n  table 0.5, zero;\n}\n")
    with pytest.raises(srl.ParseError) as e:
        srl.BayesianNetwork.from_bif(str(bad_bif))
    assert e.value.filename == str(bad_bif) and e.value.lineno == 7


def test_bad_boosting_input():
    db = srl.Database(pos=["t(a)."], neg=["t(b)."], facts=["f(a)."], modes=["f(+x).", "t(+x)."])
    with pytest.raises(ValueError, match="target"):
        srl.BoostedRDN().fit(db)
    with pytest.raises(ValueError, match="no atom of target"):
        srl.BoostedRDN(target="other").fit(db)
    with pytest.raises(ValueError, match="n_estimators"):
        srl.BoostedRDN(target="t", n_estimators=0).fit(db)
    with pytest.raises(ValueError, match="neg_pos_ratio"):
        srl.BoostedRDN(target="t", neg_pos_ratio=-1.0).fit(db)
    with pytest.raises(ValueError, match="preset"):
        srl.BoostedRDN(target="t", preset="nope").fit(db)
    with pytest.raises(ValueError, match="alpha"):
        srl.SoftBoostedRDN(target="t", alpha=float("nan"))
    with pytest.raises(ValueError, match="invalid parameter"):
        srl.BoostedRDN().set_params(alpha=1.0)
    with pytest.raises(ValueError, match="no usable examples"):
        srl.BoostedRDN(target="t").fit(srl.Database(pos=["t(a)."], modes=["t(+x)."]))
    with pytest.raises(srl.NotFittedError):
        srl.BoostedRDN(target="t").predict_proba(db)
    with pytest.raises(srl.NotFittedError):
        srl.BoostedRDN(target="t").to_json()
    m = srl.BoostedRDN(target="t", min_leaf_examples=1).fit(db)
    with pytest.raises(ValueError, match="threshold"):
        m.predict(db, threshold=2.0)


def test_bad_model_files(tmp_path):
    db = srl.Database(pos=["t(a)."], neg=["t(b)."], facts=["f(a)."], modes=["f(+x)."])
    text = srl.BoostedRDN(target="t", min_leaf_examples=1).fit(db).to_json()
    with pytest.raises(srl.ParseError) as e:
        srl.BoostedRDN.from_json_string("{\n\n  oops")
    assert e.value.lineno == 3
    env = json.loads(text)
    for key, value, msg in [("format", "x", "not an srl model file"),
                            ("version", 99, "version 99"),
                            ("kind", "naive-bayes", "holds a naive-bayes model")]:
        bad = dict(env, **{key: value})
        p = tmp_path / f"{key}.json"
        p.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=msg):
            srl.BoostedRDN.from_json(str(p))
    with pytest.raises(OSError):
        srl.BoostedRDN(target="t", min_leaf_examples=1).fit(db).to_json(
            str(tmp_path / "no" / "such" / "dir.json"))


def test_bad_mrf_input():
    u = np.zeros((3, 2))
    e = np.array([[0, 1], [1, 2]])
    t = np.zeros((2, 2))
    with pytest.raises(ValueError, match="unary"):
        srl.PairwiseMRF(np.zeros(3), e, t)
    with pytest.raises(ValueError, match="edges"):
        srl.PairwiseMRF(u, np.array([[0, 1, 2]]), t)
    with pytest.raises(ValueError, match="edges"):
        srl.PairwiseMRF(u, np.array([[0, -1]]), t)
    with pytest.raises(ValueError, match="node 5|names node 5"):
        srl.PairwiseMRF(u, np.array([[0, 5]]), t)
    with pytest.raises(ValueError, match="self-loop"):
        srl.PairwiseMRF(u, np.array([[1, 1]]), t)
    with pytest.raises(ValueError, match="pairwise"):
        srl.PairwiseMRF(u, e, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="pairwise"):
        srl.PairwiseMRF(u, e, np.zeros((5, 2, 2)))
    with pytest.raises(ValueError, match="not finite"):
        srl.PairwiseMRF(np.array([[0.0, np.nan]] * 3), e, t)
    with pytest.raises(ValueError, match="evidence"):
        srl.PairwiseMRF(u, e, t, evidence=[0, 0])
    with pytest.raises(ValueError, match="evidence"):
        srl.PairwiseMRF(u, e, t, evidence=[0, 7, -1])
    mrf = srl.PairwiseMRF(u, e, t)
    with pytest.raises(ValueError, match="schedule"):
        mrf.loopy_bp(schedule="random")
    with pytest.raises(ValueError, match="damping"):
        mrf.loopy_bp(damping=1.0)
    with pytest.raises(ValueError, match="sweep"):
        mrf.mean_field(sweep="x")
    with pytest.raises(ValueError, match="samples"):
        mrf.gibbs(samples=0)
    with pytest.raises(ValueError, match="exact inference"):
        srl.PairwiseMRF(np.zeros((30, 2)), [[i, (i + 1) % 30] for i in range(30)],
                        t).exact(enumeration_limit_log2=10)


def test_bad_trimming_input(data):
    net = srl.BayesianNetwork.from_bif(str(data / "tiny.bif"))
    with pytest.raises(ValueError, match="no variable"):
        net.trim("Z", "yes", ["A"], 0.5, 1)
    with pytest.raises(ValueError, match="no state"):
        net.trim("C", "maybe", ["A"], 0.5, 1)
    with pytest.raises(ValueError, match="no variable"):
        net.trim("C", "yes", ["A", "Q"], 0.5, 1)
    with pytest.raises(ValueError, match="costs"):
        net.trim("C", "yes", ["A", "B"], 0.5, 1, costs=[1.0])
    with pytest.raises(ValueError):
        net.trim("C", "yes", ["A", "B"], 1.5, 1)
    with pytest.raises(ValueError):
        net.trim("C", "yes", ["A"], 0.5, 1, costs=[-1.0])


def test_every_public_member_has_a_docstring():
    """Issue 34: help() shows a docstring for every public class, function, method and
    property of srl and srl.srlearn (exceptions' inherited ``args`` aside)."""
    import inspect

    import srl.srlearn

    missing = []
    for mod in (srl, srl.srlearn):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if not inspect.getdoc(obj):
                missing.append(f"{mod.__name__}.{name}")
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for m, _ in inspect.getmembers(obj):
                    if not m.startswith("_") and not inspect.getdoc(getattr(obj, m)):
                        missing.append(f"{mod.__name__}.{name}.{m}")
    assert not missing, missing
