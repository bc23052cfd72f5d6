"""Reference values for crates/srl-eval/tests/eval.rs.

Run once (Python 3.11, scikit-learn 1.9.1, numpy 2.4.6, scipy 1.17.1):

    pip install scikit-learn
    python3 crates/srl-eval/tests/reference/sklearn_reference.py

and paste the printed numbers into the `reference` module of tests/eval.rs.

- accuracy, precision, recall, F5, FNR (= 1 - recall), AUC-ROC: scikit-learn.
- AUC-PR: scikit-learn has no Davis & Goadrich interpolation (its average_precision is
  the step-wise sum, printed for comparison only), so `dg_auc_pr` below is an independent,
  exact (fractions.Fraction) implementation of the D&G procedure of their AUCCalculator.
- Weighted AUC-ROC (Yang et al. 2014, Eq. 5): `weighted_auc` below integrates 1 - FPR over
  each TPR strip numerically (scipy's adaptive quadrature over scikit-learn's ROC curve,
  given the curve's breakpoints), independent of the Rust strip sweep, which integrates each
  segment in closed form.
"""

from fractions import Fraction

import numpy as np
from scipy.integrate import quad
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    fbeta_score,
    precision_score,
    recall_score,
    roc_auc_score,
    roc_curve,
)

FIXTURES = {
    # Ties at 0.8 and 0.6 (mixed classes).
    "ties": (
        [0.9, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.4, 0.3, 0.2],
        [1, 1, 0, 1, 0, 1, 0, 0, 1, 0],
    ),
    # The example of AUCCalculator's documentation (no ties).
    "auccalc": (
        [0.9, 0.8, 0.7, 0.6, 0.55, 0.54, 0.53, 0.52, 0.51, 0.505],
        [1, 1, 0, 1, 1, 1, 0, 0, 1, 0],
    ),
    # Imbalanced; the top tie group holds 3 positives and 1 negative (first PR point has
    # TP > 1), more tie groups below.
    "imbalanced": (
        [1.0, 1.0, 1.0, 1.0, 0.7, 0.7, 0.5, 0.5, 0.5, 0.2, 0.2, 0.1, 0.1, 0.0, 0.0],
        [1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0],
    ),
}
THRESHOLD = 0.5  # predicted positive iff score >= THRESHOLD


def confusion_points(scores, labels):
    """(TP, FP) after each distinct score, scores descending (ties form one point)."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    pts, tp, fp = [], 0, 0
    for j, i in enumerate(order):
        tp += labels[i]
        fp += 1 - labels[i]
        if j + 1 == len(order) or scores[order[j + 1]] != scores[i]:
            pts.append((tp, fp))
    return pts, tp, fp


def dg_auc_pr(scores, labels):
    """Davis & Goadrich 2006 AUC-PR, as their AUCCalculator computes it, in exact rationals."""
    pts, P, N = confusion_points(scores, labels)
    pts = sorted(set((Fraction(a), Fraction(b)) for a, b in pts))
    pts = [p for p in pts if p[0] != 0]
    tp1, fp1 = pts[0]
    if tp1 > 1:
        pts.insert(0, (Fraction(1), fp1 / tp1))
    if (P, N) not in pts:
        pts.append((Fraction(P), Fraction(N)))
    # Interpolate every integer TP between consecutive points.
    dense = [pts[0]]
    for (ta, fa), (tb, fb) in zip(pts, pts[1:]):
        if tb - ta > 1:
            skew = (fb - fa) / (tb - ta)
            t = ta + 1
            while t < tb:
                dense.append((t, fa + (t - ta) * skew))
                t += 1
        dense.append((tb, fb))
    rec = [t / P for t, _ in dense]
    prec = [t / (t + f) for t, f in dense]
    area = rec[0] * prec[0]
    for i in range(1, len(dense)):
        area += (rec[i] - rec[i - 1]) * (prec[i] + prec[i - 1]) / 2
    return area


def weighted_auc(scores, labels, n=5, gamma=0.8):
    w = [1 - gamma]
    for x in range(1, n + 1):
        nxt = w[-1] * gamma + (1 - gamma)
        w.append(nxt / (1 - gamma) if x == n else nxt)
    fpr, tpr, _ = roc_curve(labels, scores, drop_intermediate=False)

    def one_minus_fpr(t):
        # FPR as a function of TPR along the piecewise-linear curve: on the rising segment
        # from the last point at tpr_i to the first at tpr_{i+1}. np.interp picks the last
        # of repeated xp values for x just above them, which is that segment's start.
        return 1.0 - np.interp(t, tpr, fpr)

    total = 0.0
    for x in range(n + 1):
        lo, hi = x / (n + 1), (x + 1) / (n + 1)
        # Adaptive Gauss-Kronrod, told where the curve's kinks and jumps are.
        kinks = [t for t in tpr if lo < t < hi]
        area, _err = quad(one_minus_fpr, lo, hi, points=kinks or None, epsabs=1e-13, limit=200)
        total += w[x] * area
    return total


def main():
    for name, (scores, labels) in FIXTURES.items():
        y = np.array(labels)
        s = np.array(scores)
        pred = (s >= THRESHOLD).astype(int)
        print(f"// {name}")
        print(f"accuracy = {accuracy_score(y, pred)!r}")
        print(f"precision = {precision_score(y, pred)!r}")
        print(f"recall = {recall_score(y, pred)!r}")
        print(f"fnr = {1 - recall_score(y, pred)!r}")
        print(f"f5 = {fbeta_score(y, pred, beta=5)!r}")
        print(f"auc_roc = {roc_auc_score(y, s)!r}")
        print(f"average_precision (sklearn, step-wise; not D&G) = {average_precision_score(y, s)!r}")
        print(f"auc_pr_dg = {float(dg_auc_pr(scores, labels))!r}  # exact {dg_auc_pr(scores, labels)}")
        print(f"weighted_auc (N=5, gamma=0.8) = {float(weighted_auc(scores, labels))!r}")
        print(f"weighted_auc (N=3, gamma=0.5) = {float(weighted_auc(scores, labels, n=3, gamma=0.5))!r}")


if __name__ == "__main__":
    main()
