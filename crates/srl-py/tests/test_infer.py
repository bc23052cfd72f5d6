"""srl.PairwiseMRF: construction from numpy and UAI, loopy BP, mean field, Gibbs, exact."""

import itertools
import threading

import numpy as np
import pytest

import srl


def chain(n=4, k=2, seed=0):
    rng = np.random.default_rng(seed)
    unary = rng.normal(size=(n, k))
    edges = np.array([[i, i + 1] for i in range(n - 1)])
    pairwise = rng.normal(size=(n - 1, k, k))
    return unary, edges, pairwise


def brute_force(unary, edges, pairwise, evidence=None):
    """Marginals and log Z by enumeration, in numpy (the test oracle)."""
    n, k = unary.shape
    logw = {}
    for x in itertools.product(range(k), repeat=n):
        if evidence is not None and any(e >= 0 and e != xi for e, xi in zip(evidence, x)):
            continue
        s = sum(unary[v, x[v]] for v in range(n))
        for e, (u, v) in enumerate(edges):
            t = pairwise if pairwise.ndim == 2 else pairwise[e]
            s += t[x[u], x[v]]
        logw[x] = s
    m = max(logw.values())
    z = sum(np.exp(w - m) for w in logw.values())
    marg = np.zeros((n, k))
    for x, w in logw.items():
        for v in range(n):
            marg[v, x[v]] += np.exp(w - m) / z
    return marg, m + np.log(z)


def test_exact_and_bp_on_a_tree_match_enumeration():
    unary, edges, pairwise = chain(n=5, k=3)
    mrf = srl.PairwiseMRF(unary, edges, pairwise)
    assert (mrf.num_nodes, mrf.num_edges) == (5, 4)
    assert mrf.num_states.tolist() == [3] * 5
    want, logz = brute_force(unary, edges, pairwise)
    ex = mrf.exact()
    assert ex.nodes.shape == (5, 3) and ex.nodes.dtype == np.float64
    np.testing.assert_allclose(ex.nodes, want, atol=1e-12)
    assert ex.log_partition == pytest.approx(logz, abs=1e-10)
    bp = mrf.loopy_bp()
    assert bp.convergence.converged
    np.testing.assert_allclose(bp.nodes, want, atol=1e-8)
    assert bp.log_partition is None
    assert bp.map_state.tolist() == want.argmax(axis=1).tolist()


def test_uai_grid_with_evidence(data):
    mrf = srl.PairwiseMRF.from_uai(str(data / "grid.uai"), evidence=str(data / "grid.uai.evid"))
    assert mrf.num_nodes == 9 and mrf.num_edges == 12
    ex = mrf.exact()
    np.testing.assert_allclose(ex.nodes[4], [0.0, 1.0], atol=1e-12)  # evidence: x4 = 1
    np.testing.assert_allclose(ex.nodes.sum(axis=1), 1.0)
    bp = mrf.loopy_bp(schedule="sequential", damping=0.1)
    assert bp.convergence.converged and bp.convergence.iterations >= 1
    assert np.abs(bp.nodes - ex.nodes).max() < 0.05  # loopy: close, not equal
    for schedule in ["flooding", "residual"]:
        assert np.abs(mrf.loopy_bp(schedule=schedule).nodes - ex.nodes).max() < 0.05
    # the UAI text round-trips
    assert "MARKOV" in mrf.to_uai()


def test_mean_field_gibbs_and_evidence_from_numpy():
    unary, edges, pairwise = chain(n=6, k=2, seed=4)
    evidence = np.array([-1, 1, -1, -1, 0, -1])
    mrf = srl.PairwiseMRF(unary, edges, pairwise, evidence=evidence)
    want, _ = brute_force(unary, edges, pairwise, evidence)
    mf = mrf.mean_field()
    assert mf.convergence.converged
    np.testing.assert_allclose(mf.nodes[[1, 4]], [[0, 1], [1, 0]])
    # on a chain with clamps, the free parts are trees or single nodes: mean field is
    # not exact but close here
    assert np.abs(mf.nodes - want).max() < 0.2
    g = mrf.gibbs(samples=20000, burn_in=500, seed=7)
    assert np.abs(g.nodes - want).max() < 0.02
    again = mrf.gibbs(samples=20000, burn_in=500, seed=7)
    assert np.array_equal(g.nodes, again.nodes)  # seeded
    assert g.map_state.shape == (6,) and g.map_state[1] == 1


def test_shared_table_and_max_product():
    unary = np.array([[0.5, 0.0], [0.0, 0.0], [0.0, 0.2]])
    edges = [[0, 1], [1, 2]]
    potts = np.array([[1.0, 0.0], [0.0, 1.0]])
    mrf = srl.PairwiseMRF(unary, edges, potts)
    want, _ = brute_force(unary, np.array(edges), potts)
    np.testing.assert_allclose(mrf.exact().nodes, want, atol=1e-12)
    mp = mrf.loopy_bp(max_product=True)
    assert mp.map_state.tolist() == [0, 0, 0]


def test_zero_potentials_and_no_edges():
    # -inf is a zero potential; a model without edges is allowed
    unary = np.array([[0.0, -np.inf], [0.3, 0.1]])
    mrf = srl.PairwiseMRF(unary, np.zeros((0, 2), dtype=np.int64), np.zeros((2, 2)))
    ex = mrf.exact()
    assert ex.nodes[0].tolist() == [1.0, 0.0]
    mrf2 = srl.PairwiseMRF(unary, [], np.zeros((2, 2)))
    assert mrf2.num_edges == 0


def test_inference_runs_in_threads():
    """Inference releases the GIL; results do not depend on the thread."""
    unary, edges, pairwise = chain(n=200, k=3, seed=1)
    mrf = srl.PairwiseMRF(unary, edges, pairwise)
    want = mrf.loopy_bp().nodes
    out = [None] * 4

    def work(i):
        out[i] = mrf.loopy_bp().nodes

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for o in out:
        assert np.array_equal(o, want)
