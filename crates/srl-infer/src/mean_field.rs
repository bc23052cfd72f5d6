//! Naive mean field (relaxation labelling): the slides' fixed point.

use std::ops::Range;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bp::{node_blocks, split_by};
use crate::marginals::{Beliefs, Convergence, Marginals, edge_offsets};
use crate::mrf::PairwiseMrf;

/// Update order of mean field.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sweep {
    /// Gauss–Seidel: variables updated in index order using the latest beliefs. Without
    /// damping each update maximises the mean-field lower bound over one variable's
    /// belief, so the bound never decreases and, being bounded, its value converges.
    /// That guarantees no particular number of sweeps: on large loopy models with strong
    /// couplings the beliefs can still be moving by `1e-4` after 100 sweeps (seen on
    /// Barabási–Albert graphs of 10^5 nodes), so read [`crate::Convergence`] rather than
    /// assume `tol` was reached. Single-threaded.
    #[default]
    Sequential,
    /// Jacobi: all variables updated from the previous sweep's beliefs, in parallel with
    /// rayon (result independent of the thread count). May oscillate without damping.
    Parallel,
}

/// Naive mean field on a [`PairwiseMrf`]: the fully factorised `q(x) = Π_i b_i(x_i)`
/// closest in KL(q‖p), found by iterating the fixed point (slides, "Relaxation labeling
/// via mean-field")
///
/// `b_i(x_i) ∝ exp( θ_i(x_i) + Σ_{j ∈ N(i)} Σ_{x_j} b_j(x_j) θ_ij(x_i, x_j) )`,
///
/// i.e. `b_i ∝ φ_i Π_j Π_{x_j} η_ij(x_i, x_j)^{b_j(x_j)}`. Beliefs start at
/// `softmax(θ_i)`; damping mixes probabilities, `b ← (1 − λ) b_new + λ b_old`.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `max_iters` | 200 | sweep cap | `≥ 0` |
/// | `tol` | 1e-6 | stop when the largest belief change is below it | `≥ 0` |
/// | `damping` | 0 | `λ` | `[0, 1)`, clamped into `[0, 0.99]` |
/// | `sweep` | `Sequential` | see [`Sweep`] | |
/// | `beliefs` | `NodesAndEdges` | edge beliefs are `b_u ⊗ b_v` | |
///
/// # Complexity
/// `O(Σ_{(i,j)} k_i k_j)` per sweep.
///
/// # Examples
/// ```
/// use srl_infer::{MeanField, MrfParts, PairTable, PairwiseMrf};
/// let mrf = PairwiseMrf::new(MrfParts {
///     num_states: vec![2, 2],
///     unary: vec![1.0, 0.0, 0.0, 0.0],
///     edges: vec![(0, 1)],
///     edge_tables: vec![0],
///     tables: vec![PairTable::potts(2, 0.5, 0.0)],
///     evidence: vec![],
/// })?;
/// let m = MeanField::default().run(&mrf);
/// assert!(m.convergence().converged);
/// assert!(m.node(1)[0] > 0.5); // pulled towards node 0's preferred state
/// # Ok::<(), srl_infer::InferError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeanField {
    /// Sweep cap.
    pub max_iters: usize,
    /// Convergence tolerance on the largest belief change (probability units).
    pub tol: f64,
    /// Damping `λ`.
    pub damping: f64,
    /// Update order.
    pub sweep: Sweep,
    /// Whether to materialise edge beliefs.
    pub beliefs: Beliefs,
}

impl Default for MeanField {
    fn default() -> Self {
        Self {
            max_iters: 200,
            tol: 1e-6,
            damping: 0.0,
            sweep: Sweep::Sequential,
            beliefs: Beliefs::NodesAndEdges,
        }
    }
}

/// New belief of `j` from the current beliefs `q` (a full-length array) into `out`
/// (length `k_j`, probabilities). The caller applies damping. Returns `false` (and copies
/// `j`'s current belief into `out`) when zero potentials give every state of `j` an
/// expected log-potential of `-∞` under the current beliefs (extreme models only).
#[inline]
pub(crate) fn mf_update(mrf: &PairwiseMrf, q: &[f64], j: usize, out: &mut [f64]) -> bool {
    let kj = out.len();
    if mrf.uniform_k == 2 && !mrf.extreme {
        let ker = &mrf.kernels;
        let (mut f0, mut f1) = (mrf.eff_unary[2 * j], mrf.eff_unary[2 * j + 1]);
        for s in mrf.in_off[j]..mrf.in_off[j + 1] {
            let i = mrf.in_src[s] as usize;
            let (q0, q1) = (q[2 * i], q[2 * i + 1]);
            let o = ker.off[mrf.in_kernel[s] as usize];
            let t = &ker.log[o..o + 4];
            f0 += q0 * t[0] + q1 * t[2];
            f1 += q0 * t[1] + q1 * t[3];
        }
        let mx = f0.max(f1);
        let (e0, e1) = ((f0 - mx).exp(), (f1 - mx).exp());
        let z = e0 + e1;
        out[0] = e0 / z;
        out[1] = e1 / z;
        return true;
    }
    out.copy_from_slice(&mrf.eff_unary[mrf.state_off[j]..mrf.state_off[j + 1]]);
    for s in mrf.in_off[j]..mrf.in_off[j + 1] {
        let i = mrf.in_src[s] as usize;
        let ki = mrf.num_states[i] as usize;
        let ko = mrf.kernels.off[mrf.in_kernel[s] as usize];
        let table = &mrf.kernels.log[ko..ko + ki * kj];
        let qi = &q[mrf.state_off[i]..mrf.state_off[i] + ki];
        for (row, &p) in table.chunks_exact(kj).zip(qi) {
            if p == 0.0 {
                continue;
            }
            for (o, &t) in out.iter_mut().zip(row) {
                *o += p * t;
            }
        }
    }
    let mx = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if mx == f64::NEG_INFINITY {
        // Only on extreme models (ordinary fields are finite at a free variable's states
        // and at an observed state): keep the current belief.
        out.copy_from_slice(&q[mrf.state_off[j]..mrf.state_off[j + 1]]);
        return false;
    }
    let mut z = 0.0;
    for o in out.iter_mut() {
        *o = (*o - mx).exp();
        z += *o;
    }
    out.iter_mut().for_each(|o| *o /= z);
    true
}

impl MeanField {
    /// Iterates the mean-field fixed point and returns the beliefs with a convergence
    /// report (observed variables: point masses).
    ///
    /// Zero potentials (`-∞`) are exact: a state paired with positive belief mass to a
    /// zero potential gets belief 0. Mean field can then leave a variable with no
    /// admissible state under the current beliefs even on a satisfiable model; that
    /// variable keeps its belief and the report says `converged: false` for as long as it
    /// lasts (its fixed-point violation is `∞`).
    #[must_use]
    pub fn run(&self, mrf: &PairwiseMrf) -> Marginals {
        let damping = if self.damping.is_nan() {
            0.0
        } else {
            self.damping.clamp(0.0, 0.99)
        };
        let n = mrf.num_nodes();
        let mut q = vec![0.0; mrf.eff_unary.len()];
        for v in 0..n {
            let (a, b) = (mrf.state_off[v], mrf.state_off[v + 1]);
            let s = &mrf.eff_unary[a..b];
            let mx = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = s.iter().map(|x| (x - mx).exp()).sum();
            for (o, x) in q[a..b].iter_mut().zip(s) {
                *o = (x - mx).exp() / z;
            }
        }
        let mut conv = Convergence {
            converged: false,
            iterations: 0,
            max_residual: f64::INFINITY,
        };
        let k = mrf.max_states.max(1);
        // `stuck`: a variable whose every state got an expected log-potential of -∞ in
        // the last sweep (zero potentials): its belief was kept, the run is not converged.
        match self.sweep {
            Sweep::Sequential => {
                let mut out = vec![0.0; k];
                while !conv.converged && conv.iterations < self.max_iters {
                    let mut r: f64 = 0.0;
                    let mut stuck = false;
                    for j in 0..n {
                        let (a, b) = (mrf.state_off[j], mrf.state_off[j + 1]);
                        let o = &mut out[..b - a];
                        stuck |= !mf_update(mrf, &q, j, o);
                        for (x, old) in o.iter_mut().zip(&mut q[a..b]) {
                            let new = (1.0 - damping) * *x + damping * *old;
                            r = r.max((new - *old).abs());
                            *old = new;
                        }
                    }
                    conv.iterations += 1;
                    conv.max_residual = r;
                    conv.converged = r < self.tol && !stuck;
                }
            }
            Sweep::Parallel => {
                let bounds = node_blocks(mrf);
                let mut next = q.clone();
                while !conv.converged && conv.iterations < self.max_iters {
                    let chunks = split_by(&mut next, &bounds, &mrf.state_off);
                    let jobs: Vec<(Range<usize>, &mut [f64])> =
                        bounds.windows(2).map(|w| w[0]..w[1]).zip(chunks).collect();
                    let cur = &q;
                    let (r, st) = jobs
                        .into_par_iter()
                        .map(|(range, chunk)| {
                            let base = mrf.state_off[range.start];
                            let mut r: f64 = 0.0;
                            let mut st = false;
                            for j in range {
                                let (a, b) = (mrf.state_off[j], mrf.state_off[j + 1]);
                                let o = &mut chunk[a - base..b - base];
                                st |= !mf_update(mrf, cur, j, o);
                                for (x, &old) in o.iter_mut().zip(&cur[a..b]) {
                                    *x = (1.0 - damping) * *x + damping * old;
                                    r = r.max((*x - old).abs());
                                }
                            }
                            (r, st)
                        })
                        .reduce(|| (0.0, false), |a, b| (a.0.max(b.0), a.1 || b.1));
                    let stuck = st;
                    std::mem::swap(&mut q, &mut next);
                    conv.iterations += 1;
                    conv.max_residual = r;
                    conv.converged = r < self.tol && !stuck;
                }
            }
        }
        let edge = match self.beliefs {
            Beliefs::NodesOnly => Vec::new(),
            Beliefs::NodesAndEdges => {
                let off = edge_offsets(mrf);
                let mut e = vec![0.0; off[off.len() - 1]];
                for (ei, &(u, v)) in mrf.edges.iter().enumerate() {
                    let (u, v) = (u as usize, v as usize);
                    let qu = &q[mrf.state_off[u]..mrf.state_off[u + 1]];
                    let qv = &q[mrf.state_off[v]..mrf.state_off[v + 1]];
                    let kv = qv.len();
                    for (a, &pa) in qu.iter().enumerate() {
                        for (b, &pb) in qv.iter().enumerate() {
                            e[off[ei] + a * kv + b] = pa * pb;
                        }
                    }
                }
                e
            }
        };
        Marginals::from_probabilities(mrf, q, edge, conv)
    }

    /// The largest violation `max_i ‖b_i − update_i(b)‖_∞` of the fixed-point equation by
    /// the node beliefs of `m` (for checking a mean-field solution); `∞` when zero
    /// potentials exclude every state of a variable under `m`.
    ///
    /// # Panics
    /// If `m` was not computed for `mrf` (different layout).
    #[must_use]
    pub fn fixed_point_violation(mrf: &PairwiseMrf, m: &Marginals) -> f64 {
        let q = m.node_all();
        assert_eq!(q.len(), mrf.eff_unary.len(), "marginals of another model");
        let mut out = vec![0.0; mrf.max_states.max(1)];
        let mut r: f64 = 0.0;
        for j in 0..mrf.num_nodes() {
            let (a, b) = (mrf.state_off[j], mrf.state_off[j + 1]);
            let o = &mut out[..b - a];
            if !mf_update(mrf, q, j, o) {
                return f64::INFINITY;
            }
            for (x, y) in o.iter().zip(&q[a..b]) {
                r = r.max((x - y).abs());
            }
        }
        r
    }
}
