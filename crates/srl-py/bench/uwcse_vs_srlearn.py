"""Fit time and AUC-ROC of srl.BoostedRDN and srlearn's BoostedRDNClassifier (the BoostSRL
jar) on UW-CSE advisedby fold 1, one implementation per process.

    python uwcse_vs_srlearn.py srl     DATA_DIR [srl_preset|srlearn_settings]
    python uwcse_vs_srlearn.py srlearn DATA_DIR

srlearn runs in its own virtual environment (pip install srlearn; java on PATH); it is
never a dependency of srl. Prints one JSON line: impl, settings, fit_seconds,
predict_seconds, auc_roc, n_test. Both sides: 10 trees, negatives 2:1 per tree, modes
from boostsrl_uwcse/background.txt. srlearn's defaults are node_size=2,
max_tree_depth=3, number_of_clauses=100; `srlearn_settings` gives srl the same limits,
`srl_preset` is srl's BoostSRL preset (13 leaves = 12 inner nodes, depth 5, one literal per node).
"""

import json
import sys
import time
from pathlib import Path

import numpy as np


def auc_roc(p, y):
    """Mann-Whitney AUC with ties counted one half."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=bool)
    order = np.argsort(p, kind="mergesort")
    ranks = np.empty(len(p))
    sp = p[order]
    i = 0
    while i < len(p):
        j = i
        while j + 1 < len(p) and sp[j + 1] == sp[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    npos, nneg = y.sum(), (~y).sum()
    return float((ranks[y].sum() - npos * (npos + 1) / 2) / (npos * nneg))


def main():
    which, data = sys.argv[1], Path(sys.argv[2])
    settings = sys.argv[3] if len(sys.argv) > 3 else "srlearn_settings"
    root = data / "boostsrl_uwcse"
    fold = root / "fold1"
    modes = [l.strip() for l in (root / "background.txt").read_text().splitlines() if l.strip()]
    if which == "srl":
        import srl
        rd = lambda f: [l.strip() for l in f.read_text().splitlines() if l.strip()]
        def db(split):
            d = fold / split
            return srl.Database(pos=rd(d / f"{split}_pos.txt"), neg=rd(d / f"{split}_neg.txt"),
                                facts=rd(d / f"{split}_facts.txt"), modes=modes)
        train, test = db("train"), db("test")
        kw = dict(max_tree_depth=3, node_size=2, max_leaves=100) if settings == "srlearn_settings" else {}
        clf = srl.BoostedRDN(target="advisedby", n_estimators=10, neg_pos_ratio=2.0, **kw)
        t0 = time.perf_counter()
        clf.fit(train)
        t1 = time.perf_counter()
        p = clf.predict_proba(test)
        t2 = time.perf_counter()
        _, y = test.examples("advisedby")
    else:
        from srlearn import Background, Database
        from srlearn.rdn import BoostedRDNClassifier
        def db(split):
            d = fold / split
            return Database.from_files(pos=d / f"{split}_pos.txt", neg=d / f"{split}_neg.txt",
                                       facts=d / f"{split}_facts.txt", lazy_load=False)
        train, test = db("train"), db("test")
        bk = Background(modes=modes)
        clf = BoostedRDNClassifier(background=bk, target="advisedby", n_estimators=10,
                                   node_size=2, max_tree_depth=3, neg_pos_ratio=2)
        t0 = time.perf_counter()
        clf.fit(train)
        t1 = time.perf_counter()
        # srlearn's predict_proba parses the jar's results with numpy.loadtxt(delimiter=") "),
        # which numpy >= 1.23 rejects (and Python 3.11 has no older numpy); run its
        # inference and read the same file the same way (a `!` line is a negative whose
        # value is P(false)).
        clf._run_inference(test)
        t2 = time.perf_counter()
        res = clf.file_system.files.TEST_DIR.joinpath("results_" + clf.target + ".db")
        pos, neg = [], []
        for line in res.read_text().splitlines():
            if not line.strip():
                continue
            atom, value = line.rsplit(" ", 1)
            (neg if atom.startswith("!") else pos).append(float(value))
        p = np.array(pos + [1 - v for v in neg])
        y = np.arange(len(p)) < len(pos)
        settings = "srlearn defaults"
    print(json.dumps(dict(impl=which, settings=settings, fit_seconds=t1 - t0,
                          predict_seconds=t2 - t1, auc_roc=auc_roc(p, y), n_test=len(p))))


if __name__ == "__main__":
    main()
