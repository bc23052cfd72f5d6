//! Naive mean field (relaxation labelling): the slides' fixed point.

use std::ops::Range;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::bp::{node_blocks, split_by};
use crate::marginals::{Beliefs, Convergence, Marginals, edge_offsets, fmax};
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
/// With two states everywhere on an ordinary model ([`PairwiseMrf::is_ordinary`]) a
/// faster path keeps `q(0)` and `q(1)` in two flat arrays and folds each pairwise table
/// into two coefficients, so a neighbour costs one read of its `q(1)` and one
/// multiply-add (one addition with a single shared table), and an update one `exp`; the
/// neighbour reads of a batch of 256 variables are gathered before their `exp`s. The
/// parallel sweep performs the general path's sum in another grouping and the sequential
/// sweep adds the changes of neighbours updated earlier in the same batch as a correction,
/// so results agree with the general path to rounding (`1e-12` in the unit tests), not bit
/// for bit; both remain independent of the thread count. With `K` states everywhere
/// (`3 ≤ K ≤ 8`) on an ordinary model a path specialised to `K` views beliefs and tables as
/// rows of `K` and copies the neighbour beliefs of a batch of variables before updating
/// it; it performs the general path's operations in the same order, so its results equal
/// the general path's bit for bit (unit-tested).
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
        let eff = mrf.eff_unary();
        let (mut f0, mut f1) = (eff[2 * j], eff[2 * j + 1]);
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
    out.copy_from_slice(&mrf.eff_unary()[mrf.state_off[j]..mrf.state_off[j + 1]]);
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

/// Adds the expected log-potential of one slot to the field `f` of a `K`-state variable:
/// `f(c) += Σ_r q_src(r) · t(r, c)` with the kernel rows `table` (`K` of them) in
/// source-state order, as [`mf_update`] adds them. Unlike [`mf_update`] a row of source
/// belief `0` is not skipped: on an ordinary model the table is finite, so it adds
/// `±0.0`, which changes no sum (at most the sign of a zero field, and `exp(±0 − max)` is
/// the same), and no branch waits on the scattered read of the neighbour's belief.
#[inline]
fn add_slot<const K: usize>(f: &mut [f64; K], table: &[[f64; K]], qi: &[f64; K]) {
    for (row, &p) in table.iter().zip(qi) {
        for (x, &w) in f.iter_mut().zip(row) {
            *x += p * w;
        }
    }
}

/// The belief `softmax(f)` of a `K`-state field as [`mf_update`] computes it: maximum,
/// `exp(f − max)` summed in state order, quotients. An ordinary field is finite at every
/// free state and at an observed state, so the maximum is finite.
#[inline]
fn softmax_row<const K: usize>(mut f: [f64; K]) -> [f64; K] {
    let mx = f.iter().copied().fold(f64::NEG_INFINITY, fmax);
    let mut z = 0.0;
    for x in &mut f {
        *x = (*x - mx).exp();
        z += *x;
    }
    for x in &mut f {
        *x /= z;
    }
    f
}

/// The `K`-state view of an ordinary model for [`MeanField::run_uniform`]: unary rows, and
/// the kernel pool as rows (kernel `t` is rows `t·K .. t·K + K`, every kernel being
/// `K × K`).
struct UniformView<'a, const K: usize> {
    mrf: &'a PairwiseMrf,
    unary: &'a [[f64; K]],
    kernels: &'a [[f64; K]],
}

impl<'a, const K: usize> UniformView<'a, K> {
    fn of(mrf: &'a PairwiseMrf) -> Self {
        debug_assert!(!mrf.extreme && mrf.uniform_k == K);
        debug_assert!((0..mrf.kernels.off.len()).all(|t| mrf.kernels.off[t] == t * K * K));
        Self {
            mrf,
            unary: mrf.eff_unary().as_chunks::<K>().0,
            kernels: mrf.kernels.log.as_chunks::<K>().0,
        }
    }

    /// The kernel rows of slot `s`.
    #[inline]
    fn table(&self, s: usize) -> &'a [[f64; K]] {
        let t = K * self.mrf.in_kernel[s] as usize;
        &self.kernels[t..t + K]
    }

    /// The last node of the batch starting at `start`: as many nodes as fit in
    /// [`GATHER_SLOTS`] incoming slots, at least one.
    #[inline]
    fn batch_end(&self, start: usize, end: usize) -> usize {
        let in_off = &self.mrf.in_off;
        let mut e = start + 1;
        while e < end && in_off[e + 1] - in_off[start] <= GATHER_SLOTS {
            e += 1;
        }
        e
    }

    /// Copies the beliefs of the sources of the slots of nodes `start..end` into `buf`
    /// (one row per slot); `false` (nothing copied) when they do not fit.
    #[inline]
    fn gather(&self, q: &[[f64; K]], start: usize, end: usize, buf: &mut [[f64; K]]) -> bool {
        let (lo, hi) = (self.mrf.in_off[start], self.mrf.in_off[end]);
        if hi - lo > buf.len() {
            return false;
        }
        for (b, &i) in buf.iter_mut().zip(&self.mrf.in_src[lo..hi]) {
            *b = q[i as usize];
        }
        true
    }
}

/// Incoming slots per gathered batch of the `K`-state sweeps: the batch's neighbour
/// beliefs are copied first (independent scattered loads the processor overlaps; computed
/// in place, each update's field waited on its neighbours' cache misses one update at a
/// time), then the batch is updated from the copies.
const GATHER_SLOTS: usize = 512;

/// `(1 − λ) x + λ old` as the general sweeps compute it; with `λ = 0` that is `x` itself
/// bit for bit (`1 · x = x`, and `x + 0 · old = x + 0 = x` for a probability `x ≥ +0`),
/// so the arithmetic is skipped.
#[inline]
fn damp(x: f64, old: f64, damping: f64) -> f64 {
    if damping == 0.0 {
        x
    } else {
        (1.0 - damping) * x + damping * old
    }
}

/// Coefficients of the binary fast path: with two states everywhere the field difference
/// of target `j` is `d_j = θ_j(1) − θ_j(0) + Σ_s (a_s + b_s · q_src(1))`, where kernel `t`
/// of slot `s` gives `a_s = t(0, 1) − t(0, 0)` and `b_s = t(1, 1) − t(1, 0) − a_s`
/// (`q(0) t(0, ·) + q(1) t(1, ·)` with `q(0) = 1 − q(1)`).
pub(crate) struct BinaryCoefs {
    /// `(a, b)` of every kernel, indexed like [`crate::mrf::Kernels::off`].
    per_kernel: Vec<(f64, f64)>,
    /// `Some((a, b))` when every kernel has the same coefficients (one shared table, e.g.
    /// a Potts table read from a UAI file): `d_j = Δθ_j + deg_j · a + b · Σ_s q_src(1)`.
    shared: Option<(f64, f64)>,
}

impl BinaryCoefs {
    /// `None` unless the model is ordinary with two states everywhere.
    pub(crate) fn of(mrf: &PairwiseMrf) -> Option<Self> {
        if mrf.uniform_k != 2 || mrf.extreme {
            return None;
        }
        let ker = &mrf.kernels;
        let per_kernel: Vec<(f64, f64)> = ker
            .off
            .windows(2)
            .map(|w| {
                let t = &ker.log[w[0]..w[1]];
                let a = t[1] - t[0];
                (a, t[3] - t[2] - a)
            })
            .collect();
        let shared = match per_kernel.split_first() {
            Some((&first, rest)) if rest.iter().all(|&c| c == first) => Some(first),
            _ => None,
        };
        Some(Self { per_kernel, shared })
    }

    /// The neighbour parts of the fields of the variables at the positions `start..end`
    /// of `slots` (the model's variables, or the degree-sorted positions of
    /// [`DegreeLayout`]) from the `q(1)` array into `g`: `Σ_s q_src(1)` for a shared
    /// kernel, `Σ_s (a_s + b_s q_src(1))` otherwise, each summed in slot order.
    ///
    /// With per-slot kernels the `q(1)`s of all the batch's slots are first copied into
    /// `vals` in one loop whose length does not depend on the degrees (the scattered
    /// loads, kept in flight together), then summed from there. A shared kernel sums
    /// straight from `q(1)`: measured on the 10^6-node Barabási–Albert model
    /// (2026-12-02), the copy made the sequential sweep about 5 % slower (medians of 8
    /// interleaved runs) and the parallel one no faster, and 10 % slower in cache.
    #[inline]
    fn gather(
        &self,
        slots: Slots<'_>,
        q1: &[f64],
        start: usize,
        g: &mut [f64],
        vals: &mut Vec<f64>,
    ) {
        let end = start + g.len();
        let s0 = slots.off[start];
        let src = &slots.src[s0..slots.off[end]];
        if self.shared.is_some() {
            for (j, slot) in (start..end).zip(g.iter_mut()) {
                let mut acc = 0.0;
                for &i in &src[slots.off[j] - s0..slots.off[j + 1] - s0] {
                    acc += q1[i as usize];
                }
                *slot = acc;
            }
            return;
        }
        vals.clear();
        vals.extend(src.iter().map(|&i| q1[i as usize]));
        for (j, slot) in (start..end).zip(g.iter_mut()) {
            let (lo, hi) = (slots.off[j], slots.off[j + 1]);
            let mut acc = 0.0;
            for (&x, &q) in vals[lo - s0..hi - s0].iter().zip(&slots.kernel[lo..hi]) {
                let (a, b) = self.per_kernel[q as usize];
                acc += a + b * x;
            }
            *slot = acc;
        }
    }

    /// The slope `b_s` of slot `s`.
    #[inline]
    fn slope(&self, mrf: &PairwiseMrf, s: usize) -> f64 {
        match self.shared {
            Some((_, b)) => b,
            None => self.per_kernel[mrf.in_kernel[s] as usize].1,
        }
    }

    /// The part of every variable's field difference that does not depend on the
    /// beliefs, computed once per run: `Δθ_j + deg_j · a` for a shared kernel, `Δθ_j`
    /// otherwise (`Δθ_j = θ_j(1) − θ_j(0)`), `n` entries. Streaming this one array per
    /// sweep instead of the unary pairs and the offsets keeps more of the `q(1)` array,
    /// the one read at scattered places, in cache.
    fn base(&self, mrf: &PairwiseMrf) -> Vec<f64> {
        let eff = mrf.eff_unary();
        (0..mrf.num_nodes())
            .map(|j| {
                let du = eff[2 * j + 1] - eff[2 * j];
                match self.shared {
                    Some((a, _)) => du + (mrf.in_off[j + 1] - mrf.in_off[j]) as f64 * a,
                    None => du,
                }
            })
            .collect()
    }

    /// The field difference `d_j` from `j`'s entry `c` of [`BinaryCoefs::base`] and
    /// [`BinaryCoefs::gather`]'s value `g`: `c + b · g` for a shared kernel, `c + g`
    /// otherwise (the same operations in the same order as summing it all at once).
    #[inline]
    fn field(&self, c: f64, g: f64) -> f64 {
        match self.shared {
            Some((_, b)) => c + b * g,
            None => c + g,
        }
    }
}

/// The slots the binary sweeps read, by position: position `p` has the slots
/// `off[p]..off[p + 1]` of `src` (sources) and `kernel` (kernel indices).
#[derive(Clone, Copy)]
struct Slots<'a> {
    off: &'a [usize],
    src: &'a [u32],
    kernel: &'a [u32],
}

impl<'a> Slots<'a> {
    /// The model's own slots: position `j` is variable `j`.
    fn of_model(mrf: &'a PairwiseMrf) -> Self {
        Self {
            off: &mrf.in_off,
            src: &mrf.in_src,
            kernel: &mrf.in_kernel,
        }
    }
}

/// The variables of the parallel (Jacobi) binary sweep in the order it visits them:
/// each batch of [`BATCH`] variables (counted from the start of its block of
/// [`node_blocks`], as [`sweep_parallel_block`] cuts them) by increasing degree
/// ([`crate::bp::by_degree`]), with the batch's slots, kernel indices and field constants copied into
/// that order. The loops over each variable's slots then come in runs of one length,
/// whose ends the processor predicts (in index order a Barabási–Albert graph's degrees
/// change at nearly every variable). Every field is the same sum in the same slot order
/// and a Jacobi sweep's result does not depend on the order of its updates, so the
/// output is the same to the bit.
///
/// Memory at `n` variables and `S` slots: `20 n + 4 S` bytes (`+ 4 S` with per-slot
/// kernels); at 10^6 two-state variables of a Barabási–Albert graph about 36 MB.
struct DegreeLayout {
    /// Variable at each position.
    var: Vec<u32>,
    /// Slot offsets per position (`n + 1` entries).
    off: Vec<usize>,
    /// Source of each slot, by position.
    src: Vec<u32>,
    /// Kernel of each slot, by position (empty for one shared kernel).
    kernel: Vec<u32>,
    /// [`BinaryCoefs::base`] by position.
    base: Vec<f64>,
}

impl DegreeLayout {
    fn new(mrf: &PairwiseMrf, coefs: &BinaryCoefs, base: &[f64], bounds: &[usize]) -> Self {
        let n = mrf.num_nodes();
        let mut var = vec![0u32; n];
        for w in bounds.windows(2) {
            for b in (w[0]..w[1]).step_by(BATCH) {
                let deg = |i: usize| mrf.in_off[b + i + 1] - mrf.in_off[b + i];
                let len = (b + BATCH).min(w[1]) - b;
                crate::bp::by_degree(len, deg, |r, i| var[b + r] = (b + i) as u32);
            }
        }
        let with_kernel = coefs.shared.is_none();
        let mut off = Vec::with_capacity(n + 1);
        let mut src = Vec::with_capacity(mrf.in_src.len());
        let mut kernel = Vec::with_capacity(if with_kernel { mrf.in_src.len() } else { 0 });
        off.push(0);
        for &v in &var {
            let (lo, hi) = (mrf.in_off[v as usize], mrf.in_off[v as usize + 1]);
            src.extend_from_slice(&mrf.in_src[lo..hi]);
            if with_kernel {
                kernel.extend_from_slice(&mrf.in_kernel[lo..hi]);
            }
            off.push(src.len());
        }
        let base = var.iter().map(|&v| base[v as usize]).collect();
        Self {
            var,
            off,
            src,
            kernel,
            base,
        }
    }

    fn slots(&self) -> Slots<'_> {
        Slots {
            off: &self.off,
            src: &self.src,
            kernel: &self.kernel,
        }
    }
}

/// Variables per batch of the binary sweeps: the neighbour sums of a batch are gathered
/// first (independent scattered loads the processor overlaps), then the batch's `exp`s.
const BATCH: usize = 256;

/// `(q(0), q(1)) = (1, e^d) / (1 + e^d)` with one `exp`, accurate in both tails; `d = ±∞`
/// (an observed variable) gives a point mass.
#[inline]
fn logistic_pair(d: f64) -> (f64, f64) {
    if d >= 0.0 {
        let e = (-d).exp();
        let z = 1.0 + e;
        (e / z, 1.0 / z)
    } else {
        let e = d.exp();
        let z = 1.0 + e;
        (1.0 / z, e / z)
    }
}

/// New `(q(0), q(1))` of a variable from its field difference `d`, damped against `old`,
/// and the largest change.
#[inline]
fn damped(d: f64, old: (f64, f64), damping: f64) -> ((f64, f64), f64) {
    let (x0, x1) = logistic_pair(d);
    let new = if damping == 0.0 {
        (x0, x1)
    } else {
        (
            (1.0 - damping) * x0 + damping * old.0,
            (1.0 - damping) * x1 + damping * old.1,
        )
    };
    (new, (new.0 - old.0).abs().max((new.1 - old.1).abs()))
}

/// The slots of the sequential binary sweep whose source was updated earlier in the same
/// batch of [`BATCH`] variables (`start ≤ src < target`, batches from 0), as
/// `(target, slot)` in target and slot order: the only slots [`sweep_sequential`]
/// corrects, found once per run instead of testing every slot in every sweep.
fn in_batch_slots(mrf: &PairwiseMrf) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for j in 0..mrf.num_nodes() {
        let start = j - j % BATCH;
        for s in mrf.in_off[j]..mrf.in_off[j + 1] {
            if (start..j).contains(&(mrf.in_src[s] as usize)) {
                out.push((j as u32, s as u32));
            }
        }
    }
    out
}

/// One Gauss–Seidel sweep in index order; returns the largest change. `q0` and `q1` hold
/// the beliefs `q(0)` and `q(1)` of every variable (the fields read only `q1`, 8 bytes
/// per neighbour), `base` the fields' constant parts ([`BinaryCoefs::base`]). Each batch
/// gathers its neighbour sums from `q1` as it stands at the batch start, then, updating in
/// order, adds `b_s · (new − old)` for every neighbour updated earlier in the same batch
/// (the slots `fix` of [`in_batch_slots`]), so each field uses the latest beliefs as the
/// sequential schedule requires (the sum is regrouped, so rounding differs from a plain
/// in-order sum).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn sweep_sequential(
    coefs: &BinaryCoefs,
    mrf: &PairwiseMrf,
    base: &[f64],
    fix: &[(u32, u32)],
    q0: &mut [f64],
    q1: &mut [f64],
    damping: f64,
    vals: &mut Vec<f64>,
) -> f64 {
    let n = q1.len();
    let mut g = [0.0; BATCH];
    let mut before = [0.0; BATCH];
    let mut r: f64 = 0.0;
    let mut start = 0;
    let mut fix = fix.iter().peekable();
    while start < n {
        let end = (start + BATCH).min(n);
        coefs.gather(Slots::of_model(mrf), q1, start, &mut g[..end - start], vals);
        before[..end - start].copy_from_slice(&q1[start..end]);
        for j in start..end {
            let mut gj = g[j - start];
            while let Some(&(_, s)) = fix.next_if(|&&(t, _)| t as usize == j) {
                let (s, i) = (s as usize, mrf.in_src[s as usize] as usize);
                gj += coefs.slope(mrf, s) * (q1[i] - before[i - start]);
            }
            let ((a, b), rj) = damped(coefs.field(base[j], gj), (q0[j], q1[j]), damping);
            q0[j] = a;
            q1[j] = b;
            r = r.max(rj);
        }
        start = end;
    }
    r
}

/// The arguments of one [`sweep_sequential`] call, run through [`pulp`]'s dispatch so
/// that the sweep is compiled for the processor's vector unit as well (AVX2 where there
/// is one). The same operations on every unit (no fused multiply-add, no
/// reassociation), so the same bits.
struct SequentialSweep<'a> {
    coefs: &'a BinaryCoefs,
    mrf: &'a PairwiseMrf,
    base: &'a [f64],
    fix: &'a [(u32, u32)],
    q0: &'a mut [f64],
    q1: &'a mut [f64],
    damping: f64,
    vals: &'a mut Vec<f64>,
}

impl pulp::WithSimd for SequentialSweep<'_> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> f64 {
        let SequentialSweep {
            coefs,
            mrf,
            base,
            fix,
            q0,
            q1,
            damping,
            vals,
        } = self;
        sweep_sequential(coefs, mrf, base, fix, q0, q1, damping, vals)
    }
}

/// The arguments of one [`sweep_parallel_block`] call, dispatched like
/// [`SequentialSweep`].
struct ParallelBlock<'a> {
    coefs: &'a BinaryCoefs,
    lay: &'a DegreeLayout,
    cur1: &'a [f64],
    start: usize,
    out0: &'a mut [f64],
    out1: &'a mut [f64],
    damping: f64,
    vals: &'a mut Vec<f64>,
}

impl pulp::WithSimd for ParallelBlock<'_> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> f64 {
        let ParallelBlock {
            coefs,
            lay,
            cur1,
            start,
            out0,
            out1,
            damping,
            vals,
        } = self;
        sweep_parallel_block(coefs, lay, cur1, start, out0, out1, damping, vals)
    }
}

/// A Jacobi sweep of the variables `start..start + out1.len()` (a block of
/// [`node_blocks`]), visited in the order of `lay`: fields from the previous `q(1)`s
/// `cur1`, new beliefs into `out0` (the `q(0)`s, holding the previous ones on entry) and
/// `out1` (the next `q(1)` array), both indexed by variable; returns the largest change.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn sweep_parallel_block(
    coefs: &BinaryCoefs,
    lay: &DegreeLayout,
    cur1: &[f64],
    start: usize,
    out0: &mut [f64],
    out1: &mut [f64],
    damping: f64,
    vals: &mut Vec<f64>,
) -> f64 {
    let mut g = [0.0; BATCH];
    let mut r: f64 = 0.0;
    for (b, (o0, o1)) in out0
        .chunks_mut(BATCH)
        .zip(out1.chunks_mut(BATCH))
        .enumerate()
    {
        let first = start + b * BATCH;
        let g = &mut g[..o1.len()];
        coefs.gather(lay.slots(), cur1, first, g, vals);
        for (p, &gp) in (first..).zip(g.iter()) {
            let j = lay.var[p] as usize;
            let i = j - first;
            let ((a, b), rj) = damped(coefs.field(lay.base[p], gp), (o0[i], cur1[j]), damping);
            o0[i] = a;
            o1[i] = b;
            r = r.max(rj);
        }
    }
    r
}

impl MeanField {
    /// Mean field with two states everywhere on an ordinary model: beliefs as two flat
    /// arrays `q(0)`, `q(1)` (the field reads only `q(1)`, 8 bytes per neighbour; they are
    /// interleaved into the result layout once, at the end), one `exp` per update, the
    /// kernel folded into two coefficients and a per-variable constant (see
    /// [`BinaryCoefs`]).
    /// Same fixed point, schedule, damping, residual and stopping rule as the general
    /// path; results agree with it to rounding.
    fn run_binary(&self, mrf: &PairwiseMrf, coefs: &BinaryCoefs, damping: f64) -> Marginals {
        let n = mrf.num_nodes();
        let eff = mrf.eff_unary();
        let (mut q0, mut q1): (Vec<f64>, Vec<f64>) = (0..n)
            .map(|v| logistic_pair(eff[2 * v + 1] - eff[2 * v]))
            .unzip();
        let base = coefs.base(mrf);
        let mut conv = Convergence::start(false);
        match self.sweep {
            Sweep::Sequential => {
                let mut vals = Vec::new();
                let fix = in_batch_slots(mrf);
                while !conv.converged && conv.iterations < self.max_iters {
                    let r = crate::vmath::arch().dispatch(SequentialSweep {
                        coefs,
                        mrf,
                        base: &base,
                        fix: &fix,
                        q0: &mut q0,
                        q1: &mut q1,
                        damping,
                        vals: &mut vals,
                    });
                    conv.record(r, self.tol);
                }
            }
            Sweep::Parallel => {
                let bounds = node_blocks(mrf);
                let lay = DegreeLayout::new(mrf, coefs, &base, &bounds);
                let mut next1 = q1.clone();
                while !conv.converged && conv.iterations < self.max_iters {
                    let (cur1, lay) = (&q1[..], &lay);
                    let r = split_pair(&mut q0, &mut next1, &bounds)
                        .into_par_iter()
                        .map_init(Vec::new, |vals, (start, o0, o1)| {
                            crate::vmath::arch().dispatch(ParallelBlock {
                                coefs,
                                lay,
                                cur1,
                                start,
                                out0: o0,
                                out1: o1,
                                damping,
                                vals,
                            })
                        })
                        .reduce(|| 0.0, f64::max);
                    std::mem::swap(&mut q1, &mut next1);
                    conv.record(r, self.tol);
                }
            }
        }
        drop(base);
        let q = q0.iter().zip(&q1).flat_map(|(&a, &b)| [a, b]).collect();
        self.finish(mrf, q, conv)
    }

    /// Edge beliefs (if asked for) and the [`Marginals`].
    fn finish(&self, mrf: &PairwiseMrf, q: Vec<f64>, conv: Convergence) -> Marginals {
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
        // parallel sweeps on a pool thread (`on_pool`): no hand-over per sweep; the
        // sequential schedule on this thread
        crate::on_pool_if(self.sweep == Sweep::Parallel, || {
            if let Some(coefs) = BinaryCoefs::of(mrf) {
                return self.run_binary(mrf, &coefs, damping);
            }
            if mrf.extreme {
                return self.run_general(mrf, damping);
            }
            match mrf.uniform_k {
                3 => self.run_uniform::<3>(mrf, damping),
                4 => self.run_uniform::<4>(mrf, damping),
                5 => self.run_uniform::<5>(mrf, damping),
                6 => self.run_uniform::<6>(mrf, damping),
                7 => self.run_uniform::<7>(mrf, damping),
                8 => self.run_uniform::<8>(mrf, damping),
                _ => self.run_general(mrf, damping),
            }
        })
    }

    /// The starting beliefs `softmax(θ_v)` of every variable, in the state-offset layout.
    fn start_beliefs(mrf: &PairwiseMrf) -> Vec<f64> {
        let mut q = vec![0.0; mrf.eff_unary().len()];
        for v in 0..mrf.num_nodes() {
            let (a, b) = (mrf.state_off[v], mrf.state_off[v + 1]);
            let s = &mrf.eff_unary()[a..b];
            let mx = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = s.iter().map(|x| (x - mx).exp()).sum();
            for (o, x) in q[a..b].iter_mut().zip(s) {
                *o = (x - mx).exp() / z;
            }
        }
        q
    }

    /// `K` states everywhere on an ordinary model (`3 ≤ K ≤ 8`): beliefs, unary rows and
    /// kernels viewed as arrays of `K` (one bounds check per row, the loops over a row
    /// unrolled), the neighbour beliefs of a batch gathered before it is updated (see
    /// [`GATHER_SLOTS`]), fields by [`add_slot`], beliefs by [`softmax_row`]. Same start,
    /// schedule, damping, residual and stopping rule as [`MeanField::run_general`], and
    /// the same arithmetic in the same order: the output equals it bit for bit, for any
    /// thread count.
    fn run_uniform<const K: usize>(&self, mrf: &PairwiseMrf, damping: f64) -> Marginals {
        let view = UniformView::<K>::of(mrf);
        let n = mrf.num_nodes();
        let mut q = Self::start_beliefs(mrf);
        let mut conv = Convergence::start(false);
        match self.sweep {
            Sweep::Sequential => {
                let (rows, _) = q.as_chunks_mut::<K>();
                let mut buf = vec![[0.0; K]; GATHER_SLOTS];
                while !conv.converged && conv.iterations < self.max_iters {
                    let mut r: f64 = 0.0;
                    let mut start = 0;
                    while start < n {
                        let end = view.batch_end(start, n);
                        let gathered = view.gather(rows, start, end, &mut buf);
                        let base = mrf.in_off[start];
                        for j in start..end {
                            let mut f = view.unary[j];
                            for s in mrf.in_off[j]..mrf.in_off[j + 1] {
                                let i = mrf.in_src[s] as usize;
                                // Gauss–Seidel: a source updated earlier in this batch is
                                // read anew (its copy is stale), like every source when
                                // the batch did not fit the buffer.
                                let qi = if gathered && !(start..j).contains(&i) {
                                    &buf[s - base]
                                } else {
                                    &rows[i]
                                };
                                add_slot(&mut f, view.table(s), qi);
                            }
                            let x = softmax_row(f);
                            for (&x, old) in x.iter().zip(&mut rows[j]) {
                                let new = damp(x, *old, damping);
                                r = fmax(r, (new - *old).abs());
                                *old = new;
                            }
                        }
                        start = end;
                    }
                    conv.record(r, self.tol);
                }
            }
            Sweep::Parallel => {
                let bounds = node_blocks(mrf);
                let mut next = q.clone();
                while !conv.converged && conv.iterations < self.max_iters {
                    let chunks = split_by(&mut next, &bounds, &mrf.state_off);
                    let jobs: Vec<(Range<usize>, &mut [f64])> =
                        bounds.windows(2).map(|w| w[0]..w[1]).zip(chunks).collect();
                    let (cur, _) = q.as_chunks::<K>();
                    let r = jobs
                        .into_par_iter()
                        .map_init(
                            || vec![[0.0; K]; GATHER_SLOTS],
                            |buf, (range, chunk)| {
                                let (out, _) = chunk.as_chunks_mut::<K>();
                                let first = range.start;
                                let mut r: f64 = 0.0;
                                let mut start = first;
                                while start < range.end {
                                    let end = view.batch_end(start, range.end);
                                    let gathered = view.gather(cur, start, end, buf);
                                    let base = mrf.in_off[start];
                                    for j in start..end {
                                        let mut f = view.unary[j];
                                        for s in mrf.in_off[j]..mrf.in_off[j + 1] {
                                            let qi = if gathered {
                                                &buf[s - base]
                                            } else {
                                                &cur[mrf.in_src[s] as usize]
                                            };
                                            add_slot(&mut f, view.table(s), qi);
                                        }
                                        let x = softmax_row(f);
                                        let o = &mut out[j - first];
                                        for ((&x, &old), o) in x.iter().zip(&cur[j]).zip(o) {
                                            *o = damp(x, old, damping);
                                            r = fmax(r, (*o - old).abs());
                                        }
                                    }
                                    start = end;
                                }
                                r
                            },
                        )
                        .reduce(|| 0.0, fmax);
                    std::mem::swap(&mut q, &mut next);
                    conv.record(r, self.tol);
                }
            }
        }
        self.finish(mrf, q, conv)
    }

    /// Any model: beliefs in the state-offset layout, updates by [`mf_update`].
    fn run_general(&self, mrf: &PairwiseMrf, damping: f64) -> Marginals {
        let n = mrf.num_nodes();
        let mut q = Self::start_beliefs(mrf);
        let mut conv = Convergence::start(false);
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
        self.finish(mrf, q, conv)
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
        assert_eq!(q.len(), mrf.eff_unary().len(), "marginals of another model");
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

/// The node blocks `bounds` of two per-node arrays, as `(first node, chunk of a, chunk of
/// b)`.
fn split_pair<'a>(
    a: &'a mut [f64],
    b: &'a mut [f64],
    bounds: &[usize],
) -> Vec<(usize, &'a mut [f64], &'a mut [f64])> {
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    let (mut ra, mut rb) = (a, b);
    for w in bounds.windows(2) {
        let len = w[1] - w[0];
        let (ha, ta) = std::mem::take(&mut ra).split_at_mut(len);
        let (hb, tb) = std::mem::take(&mut rb).split_at_mut(len);
        out.push((w[0], ha, hb));
        ra = ta;
        rb = tb;
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use rand::{RngExt, SeedableRng};

    use super::*;
    use crate::mrf::{MrfParts, PairTable};

    /// An ordinary model with `k` states everywhere on `n` variables: a random tree, a
    /// chain (neighbours updated just before in the same batch), a hub joined to
    /// variables `1..=hub` (past [`GATHER_SLOTS`] when `hub > 512`), random per-edge
    /// tables from a pool of six (log-potentials in `(-1.5, 1.5)`), random unary, and
    /// evidence on every 13th variable.
    pub(crate) fn k_state_model(k: usize, n: usize, hub: usize, seed: u64) -> PairwiseMrf {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut edges: Vec<(u32, u32)> =
            (1..n as u32).map(|v| (rng.random_range(0..v), v)).collect();
        edges.extend((1..n as u32).map(|v| (v - 1, v)));
        edges.extend((1..=hub as u32).map(|v| (0, v)));
        edges.sort_unstable();
        edges.dedup();
        let m = edges.len();
        let tables: Vec<PairTable> = (0..6)
            .map(|_| PairTable::from_fn(k, k, |_, _| rng.random_range(-1.5..1.5)))
            .collect();
        let mrf = PairwiseMrf::new(MrfParts {
            num_states: vec![k; n],
            unary: (0..n * k).map(|_| rng.random_range(-2.0..2.0)).collect(),
            edge_tables: (0..m).map(|_| rng.random_range(0..6)).collect(),
            edges,
            tables,
            evidence: (0..n)
                .map(|v| (v % 13 == 4).then_some((v % k) as u32))
                .collect(),
        })
        .unwrap();
        assert!(!mrf.extreme && mrf.uniform_k == k);
        mrf
    }

    /// Every output bit of a mean-field run: node and edge beliefs, residual, iterations.
    fn mf_bits(mrf: &PairwiseMrf, m: &Marginals) -> Vec<u64> {
        let mut v: Vec<u64> = m.node_all().iter().map(|x| x.to_bits()).collect();
        for e in 0..mrf.num_edges() {
            v.extend(m.edge(e).unwrap().iter().map(|x| x.to_bits()));
        }
        let c = m.convergence();
        v.push(c.max_residual.to_bits());
        v.push(c.iterations as u64);
        v.push(u64::from(c.converged));
        v
    }

    /// The `K`-state path computes what the general path computes, bit for bit: both
    /// sweeps, with and without damping, stopped by the cap or by the tolerance, with one
    /// thread and with four, for every `K` it serves.
    #[test]
    fn uniform_path_equals_the_general_path_bit_for_bit() {
        for k in 3..=8usize {
            let mrf = k_state_model(k, 3000, 600, k as u64);
            for sweep in [Sweep::Sequential, Sweep::Parallel] {
                for (damping, max_iters, tol) in [(0.0, 12, 0.0), (0.5, 40, 1e-7)] {
                    let mf = MeanField {
                        max_iters,
                        tol,
                        damping,
                        sweep,
                        ..MeanField::default()
                    };
                    let general = mf_bits(&mrf, &mf.run_general(&mrf, damping));
                    for threads in [1, 4] {
                        let pool = rayon::ThreadPoolBuilder::new()
                            .num_threads(threads)
                            .build()
                            .unwrap();
                        let fast = pool.install(|| mf_bits(&mrf, &mf.run(&mrf)));
                        assert!(
                            fast == general,
                            "k {k} {sweep:?} damping {damping} threads {threads}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn binary_path_equals_the_general_path() {
        // 700 variables: several batches, with ring neighbours inside a batch, so the
        // Gauss–Seidel correction for neighbours updated earlier in the batch is exercised.
        for (seed, n) in [(1, 5), (2, 40), (3, 700), (4, 700)] {
            for shared in [true, false] {
                for evidence in [false, true] {
                    let mrf = crate::test_models::binary_ring_model(
                        n,
                        shared,
                        evidence,
                        (0.4, 0.6),
                        seed,
                    );
                    let coefs = BinaryCoefs::of(&mrf).unwrap();
                    assert_eq!(coefs.shared.is_some(), shared);
                    for sweep in [Sweep::Sequential, Sweep::Parallel] {
                        for damping in [0.0, 0.5] {
                            let mf = MeanField {
                                max_iters: 25,
                                tol: 0.0,
                                damping,
                                sweep,
                                ..MeanField::default()
                            };
                            let a = mf.run_binary(&mrf, &coefs, damping);
                            let b = mf.run_general(&mrf, damping);
                            let (ca, cb) = (a.convergence(), b.convergence());
                            assert_eq!(ca.iterations, cb.iterations);
                            assert!((ca.max_residual - cb.max_residual).abs() < 1e-12);
                            for v in 0..n {
                                for (x, y) in a.node(v).iter().zip(b.node(v)) {
                                    assert!((x - y).abs() < 1e-12, "{sweep:?} node {v}");
                                }
                            }
                            for e in 0..mrf.num_edges() {
                                for (x, y) in a.edge(e).unwrap().iter().zip(b.edge(e).unwrap()) {
                                    assert!((x - y).abs() < 1e-12, "{sweep:?} edge {e}");
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The parallel sweep visits each batch by degree ([`DegreeLayout`]); a Jacobi sweep's
    /// result does not depend on that order, so the output equals a sweep in index order
    /// (the same field sums in slot order, the same logistic), bit for bit, with one
    /// shared kernel and with per-edge kernels, damped, over several blocks.
    #[test]
    fn degree_layout_sweep_equals_the_index_order_sweep_bit_for_bit() {
        for shared in [true, false] {
            let mrf = crate::test_models::binary_ring_model(3000, shared, true, (0.4, 0.6), 11);
            let coefs = BinaryCoefs::of(&mrf).unwrap();
            let base = coefs.base(&mrf);
            let bounds = node_blocks(&mrf);
            assert!(bounds.len() > 3);
            let lay = DegreeLayout::new(&mrf, &coefs, &base, &bounds);
            assert!(lay.var.iter().enumerate().any(|(p, &v)| v as usize != p));
            let n = mrf.num_nodes();
            let eff = mrf.eff_unary();
            let (mut q0, mut q1): (Vec<f64>, Vec<f64>) = (0..n)
                .map(|v| logistic_pair(eff[2 * v + 1] - eff[2 * v]))
                .unzip();
            let (mut g, mut vals) = ([0.0], Vec::new());
            for sweeps in 1..=3 {
                let (mut n0, mut n1) = (q0.clone(), q1.clone());
                for j in 0..n {
                    coefs.gather(Slots::of_model(&mrf), &q1, j, &mut g, &mut vals);
                    let ((a, b), _) = damped(coefs.field(base[j], g[0]), (q0[j], q1[j]), 0.5);
                    n0[j] = a;
                    n1[j] = b;
                }
                (q0, q1) = (n0, n1);
                let mf = MeanField {
                    max_iters: sweeps,
                    tol: 0.0,
                    damping: 0.5,
                    sweep: Sweep::Parallel,
                    beliefs: Beliefs::NodesOnly,
                };
                let m = mf.run_binary(&mrf, &coefs, 0.5);
                for v in 0..n {
                    let got = m.node(v);
                    assert_eq!(
                        got[0].to_bits(),
                        q0[v].to_bits(),
                        "shared {shared} node {v}"
                    );
                    assert_eq!(
                        got[1].to_bits(),
                        q1[v].to_bits(),
                        "shared {shared} node {v}"
                    );
                }
            }
        }
    }

    #[test]
    fn logistic_pair_is_accurate_in_both_tails() {
        for d in [-800.0, -40.0, -1.0, 0.0, 1e-300, 2.5, 40.0, 800.0] {
            let (a, b) = logistic_pair(d);
            let mx = f64::max(0.0, d);
            let (e0, e1) = ((0.0 - mx).exp(), (d - mx).exp());
            let (r0, r1) = (e0 / (e0 + e1), e1 / (e0 + e1));
            assert!((a - r0).abs() <= 1e-15 * r0.max(1e-300), "{d}");
            assert!((b - r1).abs() <= 1e-15 * r1.max(1e-300), "{d}");
        }
        assert_eq!(logistic_pair(f64::INFINITY), (0.0, 1.0));
        assert_eq!(logistic_pair(f64::NEG_INFINITY), (1.0, 0.0));
    }
}
