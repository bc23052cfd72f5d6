"""Follow-up: is the epoch-11 collapse of the srl.GCN / srl.APPNP Python estimators the
estimator's random hold-out (not a bug of the Python path)?

Rebuilds, from each saved split, the node sets the Python estimators use, and runs them
through the exact-protocol paths (srl-rust driver = run_eval_split with explicit
validation nodes, and PyG's pyg_side.py):
  ho10 : fit on a random 90 % of the 20/class train nodes, early-stop on the other 10 %
         (srl.GCN(validation_fraction=0.1) observing train; 126 + 14 on Cora)
  ho60 : fit on a random 40 % of the 50/class train+val nodes, early-stop on the other
         60 % (srl.GCN(validation_fraction=0.6) observing train+val; 140 + 210 on Cora)
Hold-outs from numpy default_rng(1000 + split). Usage (py-venv):
    python holdout_check.py N_SPLITS
"""
import json
import os
import subprocess
import sys

import numpy as np

import sparse_reference as R

N = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def main():
    out = {}
    for var, frac, use_val in (("ho10", 0.1, False), ("ho60", 0.6, True)):
        d = os.path.join(R.WORK, var)
        os.makedirs(d, exist_ok=True)
        for ds in R.DATA:
            lines = []
            for s in range(N):
                tr, va, te = R.split(ds, s)
                pool = np.concatenate([tr, va]) if use_val else tr
                rest_test = te if use_val else np.sort(np.concatenate([te, va]))
                perm = np.random.default_rng(1000 + s).permutation(pool)
                m = int(round(frac * len(pool)))
                v2, t2 = np.sort(perm[:m]), np.sort(perm[m:])
                # test = the split's test nodes only (scored); for ho10 the split's
                # validation nodes are unlabelled extra nodes, as in the Python run.
                np.savez(os.path.join(d, f"{ds}_split{s}.npz"), train=t2, val=v2, test=te)
                for name, arr in (("train", t2), ("val", v2), ("test", rest_test)):
                    lines.append(name + " " + " ".join(map(str, arr)) + "\n")
            with open(os.path.join(d, f"{ds}_splits.txt"), "w") as f:
                f.writelines(lines)
            res = subprocess.run([R.DRIVER, os.path.join(R.WORK, f"{ds}_graph.txt"),
                                  os.path.join(d, f"{ds}_splits.txt"), "1"],
                                 check=True, capture_output=True, text=True).stdout
            out[f"{var} {ds} srl-rust"] = [l.split() for l in res.splitlines() if "Lp" not in l]
            print(var, ds, "srl-rust", " ".join(f"{x[2]}:{x[4]}:{100*float(x[3]):.0f}" for x in out[f"{var} {ds} srl-rust"]), flush=True)
        subprocess.run(["nice", "-n", "10", R.PYG_PY, os.path.join(R.HERE, "pyg_side.py"), R.WORK, d,
                        os.path.join(d, "pyg.json"), str(N), "1"], check=True,
                       stdout=open(os.path.join(d, "pyg.log"), "w"), stderr=subprocess.DEVNULL)
        for r in json.load(open(os.path.join(d, "pyg.json"))):
            out.setdefault(f"{var} {r['dataset']} pyg", []).append([r["split"], 0, r["method"], r["acc"], r["epochs"]])
        for ds in R.DATA:
            print(var, ds, "pyg", " ".join(f"{x[2]}:{x[4]}:{100*float(x[3]):.0f}" for x in out[f"{var} {ds} pyg"]), flush=True)
    with open(os.path.join(R.HERE, "holdout_check.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
