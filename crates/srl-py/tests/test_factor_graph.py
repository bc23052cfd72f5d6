"""srl.FactorGraph: factors of any arity through srl-infer's run_factor_task (the job
`srl mrf` runs on UAI files of any arity and BIF/NET networks), checked against
enumeration in numpy."""

import copy
import itertools
import pickle

import numpy as np
import pytest

import srl

# Three binary variables, a factor over all three (potentials 1..8, last variable fastest)
# and a unary factor on x2 (1, 3): Z = (1 + 3 + 5 + 7) + 3 (2 + 4 + 6 + 8) = 76.
TREE = "MARKOV\n3\n2 2 2\n2\n3 0 1 2\n1 2\n8\n 1 2 3 4 5 6 7 8\n2\n 1 3\n"

# A loopy model: four ternary/binary variables, two 3-variable factors sharing two
# variables, a hard zero.
LOOPY = (
    "MARKOV\n4\n2 3 2 2\n3\n3 0 1 2\n3 1 2 3\n1 3\n"
    "12\n 1 2 0 3 1 1 2 5 1 1 4 2\n"
    "12\n 2 1 1 3 1 2 2 1 3 1 1 2\n"
    "2\n 1 4\n"
)


def write(tmp_path, text, name="m.uai"):
    p = tmp_path / name
    p.write_text(text)
    return p


def enumerate_model(text):
    """Brute-force marginals and ln Z of a UAI MARKOV text (scopes last-fastest)."""
    tok = text.split()
    n = int(tok[1])
    cards = [int(t) for t in tok[2 : 2 + n]]
    i = 2 + n
    nf = int(tok[i])
    i += 1
    scopes = []
    for _ in range(nf):
        a = int(tok[i])
        scopes.append([int(t) for t in tok[i + 1 : i + 1 + a]])
        i += 1 + a
    tables = []
    for sc in scopes:
        size = int(tok[i])
        vals = np.array([float(t) for t in tok[i + 1 : i + 1 + size]])
        tables.append(vals.reshape([cards[v] for v in sc]))
        i += 1 + size
    marg = [np.zeros(k) for k in cards]
    z = 0.0
    for x in itertools.product(*[range(k) for k in cards]):
        w = 1.0
        for sc, t in zip(scopes, tables):
            w *= t[tuple(x[v] for v in sc)]
        z += w
        for v, s in enumerate(x):
            marg[v][s] += w
    return [m / z for m in marg], np.log(z)


def test_tree_matches_enumeration_for_every_algorithm(tmp_path):
    g = srl.FactorGraph.from_uai(write(tmp_path, TREE))
    assert (g.num_vars, g.num_factors) == (3, 2)
    assert g.num_states.tolist() == [2, 2, 2]
    want, lz = enumerate_model(TREE)
    assert g.log_partition() == pytest.approx(np.log(76.0), abs=1e-12)
    assert lz == pytest.approx(np.log(76.0), abs=1e-12)
    for algorithm, tol in [("exact", 1e-12), ("lbp", 1e-9), ("gibbs", 0.03)]:
        m = g.marginals(algorithm, samples=20000, seed=3)
        assert m.nodes.shape == (3, 2)
        for v in range(3):
            np.testing.assert_allclose(m.nodes[v], want[v], atol=tol, err_msg=algorithm)
    for schedule in ["flooding", "sequential", "residual"]:
        m = g.marginals("lbp", schedule=schedule)
        assert m.convergence.converged
        np.testing.assert_allclose(m.nodes[0], want[0], atol=1e-9)
    states, score, conv = g.map("exact")
    # the largest product: φ(1, 1, 1) = 8 times ψ(x2 = 1) = 3
    assert states.tolist() == [1, 1, 1] and score == pytest.approx(np.log(24.0))
    assert conv.converged
    assert g.map("lbp")[0].tolist() == [1, 1, 1]


def test_loopy_model_with_a_hard_zero(tmp_path):
    g = srl.FactorGraph.from_uai(write(tmp_path, LOOPY))
    want, lz = enumerate_model(LOOPY)
    assert g.log_partition() == pytest.approx(lz, abs=1e-12)
    exact = g.marginals("exact")
    # padded to the largest number of states: x0 has 2 of 3 columns
    assert exact.nodes.shape == (4, 3) and exact.nodes[0, 2] == 0.0
    for v, w in enumerate(want):
        np.testing.assert_allclose(exact.nodes[v, : len(w)], w, atol=1e-12)
    bp = g.marginals("lbp", damping=0.3)
    assert bp.convergence.converged
    assert np.abs(bp.nodes - exact.nodes).max() < 0.1
    mf = g.marginals("mean-field")
    assert np.allclose(mf.nodes.sum(axis=1), 1.0)


def test_evidence_file_and_bayes(tmp_path):
    model = write(tmp_path, TREE)
    ev = write(tmp_path, "1 2 1\n", "m.uai.evid")
    g = srl.FactorGraph.from_uai(model, evidence=ev)
    m = g.marginals("exact")
    assert m.nodes[2].tolist() == [0.0, 1.0]
    # P(x0 = 1 | x2 = 1) = (6 + 8) / (2 + 4 + 6 + 8)
    assert m.nodes[0, 1] == pytest.approx(14.0 / 20.0, abs=1e-12)
    # ln P(x2 = 1) up to Z: ln(3 * 20)
    assert g.log_partition() == pytest.approx(np.log(60.0), abs=1e-12)
    bayes = write(tmp_path, "BAYES\n2\n2 2\n2\n1 0\n2 0 1\n2\n 0.3 0.7\n4\n 0.9 0.1 0.2 0.8\n", "b.uai")
    b = srl.FactorGraph.from_uai(bayes)
    assert b.log_partition() == pytest.approx(0.0, abs=1e-12)
    # P(x1 = 1) = 0.3 * 0.1 + 0.7 * 0.8
    assert b.marginals("exact").nodes[1, 1] == pytest.approx(0.59, abs=1e-12)


def test_network_file(srl_data_dir):
    path = srl_data_dir / "bnlearn_bif" / "asia.bif.gz"
    if not path.exists():
        pytest.skip(f"looked at {path}")
    g = srl.FactorGraph.from_network(path)
    assert (g.num_vars, g.num_factors) == (8, 8)
    m = g.marginals("exact")
    assert np.allclose(m.nodes.sum(axis=1), 1.0)
    assert abs(g.log_partition()) < 1e-9
    bp = g.marginals("lbp")
    assert np.abs(bp.nodes - m.nodes).max() < 0.05


def test_pickle_and_uai_round_trip(tmp_path):
    g = srl.FactorGraph.from_uai(write(tmp_path, LOOPY), evidence=write(tmp_path, "1 3 1\n", "e"))
    for h in [pickle.loads(pickle.dumps(g)), copy.deepcopy(g)]:
        assert (h.num_vars, h.num_factors) == (g.num_vars, g.num_factors)
        np.testing.assert_array_equal(h.marginals("exact").nodes, g.marginals("exact").nodes)
        assert h.log_partition() == g.log_partition()
    back = srl.FactorGraph.from_uai(write(tmp_path, g.to_uai(), "back.uai"))
    # the evidence is not part of a model file
    assert back.log_partition() == pytest.approx(enumerate_model(LOOPY)[1], abs=1e-12)
    with pytest.raises(ValueError, match="not a pickled srl.FactorGraph"):
        srl._srl._factor_graph_from_state("{}")


def test_bad_options_and_files_are_errors(tmp_path):
    g = srl.FactorGraph.from_uai(write(tmp_path, TREE))
    with pytest.raises(ValueError, match="algorithm"):
        g.marginals("icm")
    with pytest.raises(ValueError, match="algorithm"):
        g.map("gibbs")
    with pytest.raises(ValueError, match="schedule"):
        g.marginals("lbp", schedule="parallel")
    with pytest.raises(ValueError, match="schedule"):
        g.marginals("mean-field", schedule="residual")
    with pytest.raises(ValueError, match="schedule"):
        g.marginals("lbp", schedule="sideways")
    with pytest.raises(ValueError, match="damping"):
        g.marginals("lbp", damping=1.0)
    with pytest.raises(ValueError, match="samples"):
        g.marginals("gibbs", samples=0)
    with pytest.raises(srl.ParseError) as e:
        srl.FactorGraph.from_uai(write(tmp_path, "MARKOV\n2\n2 2\n1\n3 0 1 2\n", "bad.uai"))
    assert e.value.lineno >= 1
    with pytest.raises(OSError):
        srl.FactorGraph.from_uai(tmp_path / "missing.uai")
    with pytest.raises(srl.ParseError):
        srl.FactorGraph.from_network(write(tmp_path, "MARKOV\n", "x.txt"))


def test_pickled_state_is_validated_as_a_file_is():
    """A hand-edited pickle state is a ValueError naming it, never a panic."""
    one = 0x3FF0000000000000  # the bits of 1.0
    bad_states = [
        '{"num_states": [2], "factors": [[[1], [0, 0]]], "evidence": [null]}',  # variable 1 of 1
        '{"num_states": [2], "factors": [[[0], [0]]], "evidence": [null]}',  # 1 entry for 2 states
        '{"num_states": [2], "factors": [], "evidence": [5]}',  # state 5 of 2
        '{"num_states": [2], "factors": [], "evidence": []}',  # evidence of the wrong length
        '{"num_states": [0], "factors": [], "evidence": [null]}',  # no state
        f'{{"num_states": [2, 2], "factors": [[[0, 0], [{one}, {one}, {one}, {one}]]], "evidence": [null, null]}}',
    ]
    for state in bad_states:
        with pytest.raises(ValueError, match="not a pickled srl.FactorGraph"):
            srl._srl._factor_graph_from_state(state)
