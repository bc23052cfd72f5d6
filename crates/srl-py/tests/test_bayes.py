"""srl.BayesianNetwork: reading BIF and trimming a threshold classifier."""

import numpy as np
import pytest

import srl


def test_from_bif_reads_the_network(data):
    net = srl.BayesianNetwork.from_bif(str(data / "tiny.bif"))
    assert net.variables == ["C", "A", "B", "D"]
    assert net.states("C") == ["yes", "no"]
    assert net.parents("A") == ["C"]
    assert sorted(net.leaves) == ["A", "B", "D"]


def ECA_bruteforce(subset):
    """ECA of the trimmed classifier (best threshold) with the full one, by enumeration
    of tiny.bif (the test oracle; Choi & Van den Broeck 2018, Eq. for ECA)."""
    import itertools

    pc = {"yes": 0.4, "no": 0.6}
    cpt = {  # P(feature = t | C)
        "A": {"yes": 0.9, "no": 0.2},
        "B": {"yes": 0.7, "no": 0.4},
        "D": {"yes": 0.6, "no": 0.3},
    }
    feats = ["A", "B", "D"]

    def joint(x, c):
        p = pc[c]
        for f, v in zip(feats, x):
            p *= cpt[f][c] if v else 1 - cpt[f][c]
        return p

    full = {}
    for x in itertools.product([True, False], repeat=3):
        w = joint(x, "yes") + joint(x, "no")
        full[x] = (w, joint(x, "yes") / w >= 0.5)
    # trimmed posterior depends on the subset only; try every threshold cut
    groups = {}
    for x, (w, d) in full.items():
        key = tuple(x[i] for i in subset)
        groups.setdefault(key, []).append((w, d))
    post = {}
    for key in groups:
        py = sum(joint(x, "yes") for x in full if tuple(x[i] for i in subset) == key)
        pn = sum(joint(x, "no") for x in full if tuple(x[i] for i in subset) == key)
        post[key] = py / (py + pn)
    best = 0.0
    for t in sorted(set(post.values())) + [1.1]:
        agree = 0.0
        for key, items in groups.items():
            dec = post[key] >= t
            agree += sum(w for w, d in items if d == dec)
        best = max(best, agree)
    return best


def test_trim_matches_enumeration(data):
    net = srl.BayesianNetwork.from_bif(str(data / "tiny.bif"))
    full = net.trim("C", "yes", ["A", "B", "D"], threshold=0.5, budget=3)
    assert sorted(full.subset) == ["A", "B", "D"] and full.eca == pytest.approx(1.0)
    one = net.trim("C", "yes", ["A", "B", "D"], threshold=0.5, budget=1)
    assert len(one.subset) == 1 and one.cost == 1.0
    best = max(ECA_bruteforce([i]) for i in range(3))
    assert one.eca == pytest.approx(best, abs=1e-12)
    assert 0.0 <= one.threshold <= 1.0 and one.evaluations >= 1
    # state by index and features="leaves" give the same problem
    again = net.trim("C", 0, "leaves", threshold=0.5, budget=1)
    assert again.eca == pytest.approx(one.eca)
    # costs: A costs 5 and is out of a budget of 2
    cheap = net.trim("C", "yes", ["A", "B", "D"], 0.5, 2, costs=[5.0, 1.0, 1.0])
    assert "A" not in cheap.subset
    assert cheap.eca == pytest.approx(ECA_bruteforce([1, 2]), abs=1e-12)


def test_trim_max_table_is_checked_before_work(data):
    # issue 30: three binary features have 8 instantiations; a smaller limit is refused
    # with the estimate, 0 is refused, and a limit that fits gives the same answer
    net = srl.BayesianNetwork.from_bif(str(data / "tiny.bif"))
    fits = net.trim("C", "yes", ["A", "B", "D"], threshold=0.5, budget=1, max_table=8)
    default = net.trim("C", "yes", ["A", "B", "D"], threshold=0.5, budget=1)
    assert fits.eca == default.eca and fits.subset == default.subset
    with pytest.raises(ValueError, match="8 entries exceed the limit of 7"):
        net.trim("C", "yes", ["A", "B", "D"], threshold=0.5, budget=1, max_table=7)
    with pytest.raises(ValueError, match="max_table"):
        net.trim("C", "yes", ["A", "B", "D"], threshold=0.5, budget=1, max_table=0)
