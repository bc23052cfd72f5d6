//! Linear-domain (probability) flooding kernels for sum-product loopy BP on ordinary
//! models: messages are stored as probabilities normalised to `max = 1` (the log path's
//! `max = 0`), beliefs are products, cavities are quotients, so a message update needs no
//! `exp` and no `ln` (the log-domain kernel needs `k_i` of each per message).
//!
//! # When the linear domain is exact to rounding
//! Every kernel entry is `exp(θ − max θ) ∈ [e^{-R_q}, 1]` where `R_q < 600` is the kernel's
//! dynamic range (`max − min` of its log-values). A normalised message `m(x_j) ∝
//! Σ_{x_i} ψ(x_i, x_j) c(x_i)` then has entries in `[e^{-R_q}, 1]`, so the belief of a
//! variable `v` (its linear unary, normalised to `max = 1`, times its incoming messages)
//! has entries in `[e^{-(R_v + Σ_s R_s)}, 1]` (`R_v`: the range of `v`'s finite unary
//! log-potentials). A variable is **linear** when `R_v + Σ_s R_s + max_s R_s ≤`
//! [`LINEAR_BUDGET`] (600 nats): every belief, cavity and unnormalised outgoing message
//! then stays above `e^{-600}`, far from `f64` underflow (`e^{-708}`) and from subnormals,
//! and each product or quotient has relative rounding error `≤ 2^{-52}`. Other variables
//! (hubs of high degree or strong couplings) are **log** variables: they take the `ln` of
//! their incoming messages, sum them, and send `exp(cavity − max)` through the kernel, as
//! the log-domain kernel does. With two states everywhere a message is one number, the
//! ratio `r = m(1) / m(0)`.
//!
//! The path runs when the mode is sum-product, damping is 0 (log-domain damping is a
//! geometric mixture, which needs `ln` and `exp`), the model is ordinary and every kernel
//! is exp-safe (`R_q < 600`); otherwise [`crate::LoopyBp`] runs its log-domain kernels.
//! The residual is the same quantity as on the log path, `max |ln m_new − ln m_old|`,
//! computed from the ratios `m_new / m_old` (one `ln` per work block).

use std::ops::Range;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU32, AtomicU64};

use rayon::prelude::*;

use crate::bp::{MessagePrecision, deliver_messages, deliver_slots, node_blocks, split_by};
use crate::marginals::{Convergence, fmax, fmin};
use crate::mrf::PairwiseMrf;

/// Largest `R_v + Σ_s R_s + max_s R_s` (nats) of a variable computed in the linear
/// domain (see the module docs).
pub const LINEAR_BUDGET: f64 = 600.0;

/// Largest kernel dynamic range (nats) for which [`MessagePrecision::F32`] stores the
/// two-state ratios as `f32`: every ratio then lies in `[e^-80, e^80]`, inside the normal
/// `f32` range (`e^-87.3` to `e^88.7`), so rounding to `f32` has relative error `≤ 2^-24`.
/// Wider models run the `f64` storage.
pub const F32_MAX_RANGE: f64 = 80.0;

/// Storage of one two-state message ratio: `f64` (exact) or `f32` (rounded to nearest).
/// Arithmetic is `f64` either way; [`Ratio::round`] is the value as stored.
trait Ratio: Copy + Send + Sync {
    /// Whether the pass uses the one-quotient arithmetic (`binary_pass_with::<true>`).
    const SHORT: bool;
    type Atom: Send + Sync;
    fn atom(v: f64) -> Self::Atom;
    fn load(a: &Self::Atom) -> f64;
    fn store(a: &Self::Atom, v: f64);
    fn into_f64(a: Self::Atom) -> f64;
    fn round(v: f64) -> f64;
    fn of(v: f64) -> Self;
    fn get(self) -> f64;
}

impl Ratio for f64 {
    const SHORT: bool = false;
    type Atom = AtomicU64;
    #[inline]
    fn atom(v: f64) -> AtomicU64 {
        AtomicU64::new(v.to_bits())
    }
    #[inline]
    fn load(a: &AtomicU64) -> f64 {
        f64::from_bits(a.load(Relaxed))
    }
    #[inline]
    fn store(a: &AtomicU64, v: f64) {
        a.store(v.to_bits(), Relaxed);
    }
    #[inline]
    fn into_f64(a: AtomicU64) -> f64 {
        f64::from_bits(a.into_inner())
    }
    #[inline]
    fn round(v: f64) -> f64 {
        v
    }
    #[inline]
    fn of(v: f64) -> f64 {
        v
    }
    #[inline]
    fn get(self) -> f64 {
        self
    }
}

impl Ratio for f32 {
    const SHORT: bool = true;
    type Atom = AtomicU32;
    #[inline]
    fn atom(v: f64) -> AtomicU32 {
        AtomicU32::new((v as f32).to_bits())
    }
    #[inline]
    fn load(a: &AtomicU32) -> f64 {
        f64::from(f32::from_bits(a.load(Relaxed)))
    }
    #[inline]
    fn store(a: &AtomicU32, v: f64) {
        a.store((v as f32).to_bits(), Relaxed);
    }
    #[inline]
    fn into_f64(a: AtomicU32) -> f64 {
        f64::from(f32::from_bits(a.into_inner()))
    }
    #[inline]
    fn round(v: f64) -> f64 {
        f64::from(v as f32)
    }
    #[inline]
    fn of(v: f64) -> f32 {
        v as f32
    }
    #[inline]
    fn get(self) -> f64 {
        f64::from(self)
    }
}

/// How a variable computes its outgoing messages on the linear path.
use crate::kernel::VarKind as Kind;

/// Dynamic range of kernel `q` (`max − min` of its log-values).
fn kernel_range(mrf: &PairwiseMrf, q: usize) -> f64 {
    let ker = &mrf.kernels;
    crate::kernel::kernel_range(&ker.log[ker.off[q]..ker.off[q + 1]])
}

/// Per-variable plan: kind, and the linear unary normalised to `max = 1` (evidence: 0
/// outside the observed state).
pub(crate) struct Plan {
    kind: Vec<Kind>,
    unary_lin: Vec<f64>,
}

/// The largest entry of a variable's log-unary row and its smallest finite entry (the
/// row's contribution to the linear budget is their difference).
pub(crate) fn unary_span(row: &[f64]) -> (f64, f64) {
    let mx = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mn = row
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(f64::INFINITY, f64::min);
    (mx, mn)
}

fn plan(mrf: &PairwiseMrf, binary: bool) -> Plan {
    let n = mrf.num_nodes();
    let nk = mrf.kernels.off.len() - 1;
    let range: Vec<f64> = (0..nk).map(|q| kernel_range(mrf, q)).collect();
    let mut kind = Vec::with_capacity(n);
    let mut unary_lin = vec![0.0; mrf.eff_unary.len()];
    for v in 0..n {
        let (a, b) = (mrf.state_off[v], mrf.state_off[v + 1]);
        kind.push(crate::kernel::plan_variable(
            &mrf.eff_unary[a..b],
            mrf.evidence[v],
            binary,
            (mrf.in_off[v]..mrf.in_off[v + 1]).map(|s| range[mrf.in_kernel[s] as usize]),
            &mut unary_lin[a..b],
        ));
    }
    Plan { kind, unary_lin }
}

/// [`plan`] for the unit tests of other modules.
#[cfg(test)]
pub(crate) fn plan_for_tests(mrf: &PairwiseMrf, binary: bool) -> Plan {
    plan(mrf, binary)
}

/// Whether [`flooding`] applies to this run.
pub(crate) fn applies(mrf: &PairwiseMrf, sum_product: bool, damping: f64) -> bool {
    sum_product && damping == 0.0 && !mrf.extreme && mrf.kernels.all_safe
}

/// Result of a linear flooding run: log-messages in the usual target-grouped layout
/// (normalised to `max = 0`), or `None` when the caller only needs node beliefs, which are
/// then returned directly (unnormalised log-beliefs).
pub(crate) struct LinearRun {
    pub msgs: Vec<f64>,
    pub bel: Vec<f64>,
    pub convergence: Convergence,
}

/// Flooding sum-product LBP in the linear domain. Same schedule, normalisation,
/// residual and stopping rule as the log path; results agree with it to rounding.
/// `want_msgs`: also return the log-messages (for edge beliefs or a later warm start).
/// `init`: log-messages to start from (target-grouped, `max = 0`; `None`: uniform).
///
/// Returns `None` (the caller then runs the log-domain kernels) only when `init` does not
/// fit the linear domain (see [`init_fits`]); a cold start always runs here.
pub(crate) fn flooding(
    mrf: &PairwiseMrf,
    max_iters: usize,
    tol: f64,
    want_msgs: bool,
    init: Option<&[f64]>,
    precision: MessagePrecision,
) -> Option<LinearRun> {
    let binary = mrf.uniform_k == 2;
    let plan = plan(mrf, binary);
    if let Some(m) = init
        && !init_fits(mrf, &plan, m)
    {
        return None;
    }
    Some(if binary {
        if precision == MessagePrecision::F32 && f32_fits(mrf, init) {
            flooding_binary::<f32>(mrf, plan, max_iters, tol, want_msgs, init)
        } else {
            flooding_binary::<f64>(mrf, plan, max_iters, tol, want_msgs, init)
        }
    } else {
        match mrf.uniform_k {
            3 => flooding_uniform::<3>(mrf, plan, max_iters, tol, want_msgs, init),
            4 => flooding_uniform::<4>(mrf, plan, max_iters, tol, want_msgs, init),
            5 => flooding_uniform::<5>(mrf, plan, max_iters, tol, want_msgs, init),
            6 => flooding_uniform::<6>(mrf, plan, max_iters, tol, want_msgs, init),
            7 => flooding_uniform::<7>(mrf, plan, max_iters, tol, want_msgs, init),
            8 => flooding_uniform::<8>(mrf, plan, max_iters, tol, want_msgs, init),
            _ => flooding_general(mrf, plan, max_iters, tol, want_msgs, init),
        }
    })
}

/// Whether starting messages `init` (log, target-grouped) keep the linear path exact to
/// rounding: every entry finite and above `−700` (so its `exp` is a normal number), and
/// for every linear variable the budget of the module docs still holds with each
/// incoming kernel range `R_s` replaced by `max(R_s, spread of the starting message)`
/// (after one sweep every message is within its kernel's range again).
pub(crate) fn init_fits(mrf: &PairwiseMrf, plan: &Plan, init: &[f64]) -> bool {
    if init.iter().any(|&x| !(x.is_finite() && x > -700.0)) {
        return false;
    }
    let nk = mrf.kernels.off.len() - 1;
    let range: Vec<f64> = (0..nk).map(|q| kernel_range(mrf, q)).collect();
    (0..mrf.num_nodes()).all(|v| {
        if plan.kind[v] != Kind::Linear {
            return true;
        }
        let (a, b) = (mrf.state_off[v], mrf.state_off[v + 1]);
        let kv = b - a;
        let row = &mrf.eff_unary[a..b];
        let (mx, mn) = unary_span(row);
        let (mut sum, mut top) = (mx - mn, 0.0f64);
        for s in mrf.in_off[v]..mrf.in_off[v + 1] {
            let so = mrf.slot_offset(v, s);
            let m = &init[so..so + kv];
            let hi = m.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lo = m.iter().copied().fold(f64::INFINITY, f64::min);
            let r = range[mrf.in_kernel[s] as usize].max(hi - lo);
            sum += r;
            top = top.max(r);
        }
        sum + top <= LINEAR_BUDGET
    })
}

/// Whether every two-state ratio of a run stays within `e^{±`[`F32_MAX_RANGE`]`}` (so its
/// `f32` rounding has relative error `≤ 2^-24`): every kernel's range is at most
/// `F32_MAX_RANGE` (each message ratio then lies within `e^{±R_q}`) and so is every
/// starting log-ratio.
fn f32_fits(mrf: &PairwiseMrf, init: Option<&[f64]>) -> bool {
    let nk = mrf.kernels.off.len() - 1;
    (0..nk).all(|q| kernel_range(mrf, q) <= F32_MAX_RANGE)
        && init.is_none_or(|m| {
            m.chunks_exact(2)
                .all(|p| (p[1] - p[0]).abs() <= F32_MAX_RANGE)
        })
}

/// `max |ln x|` over the ratios folded into `(hi, lo)`.
pub(crate) fn residual_of(hi: f64, lo: f64) -> f64 {
    hi.ln().max(-lo.ln())
}

// ---------------------------------------------------------------------------------------
// General state counts.

/// Starting messages of the two-pass linear kernels: the incoming messages (target-grouped)
/// and the outgoing ones (source-grouped, the `out_off` layout), uniform (all 1) or the
/// exponentials of the log-messages `init` (normalised to `max = 0`, so these have
/// `max = 1`).
fn linear_start(mrf: &PairwiseMrf, init: Option<&[f64]>) -> (Vec<f64>, Vec<f64>) {
    match init {
        None => (
            vec![1.0; mrf.message_len()],
            vec![1.0; mrf.out_off[mrf.num_directed_edges()]],
        ),
        Some(m) => {
            let lin: Vec<f64> = m.iter().map(|x| x.exp()).collect();
            let outg = crate::bp::source_grouped(mrf, &lin);
            (lin, outg)
        }
    }
}

fn flooding_general(
    mrf: &PairwiseMrf,
    plan: Plan,
    max_iters: usize,
    tol: f64,
    want_msgs: bool,
    init: Option<&[f64]>,
) -> LinearRun {
    let (mut inc, mut outg) = linear_start(mrf, init);
    let out_node_off: Vec<usize> = mrf.in_off.iter().map(|&s| mrf.out_off[s]).collect();
    let bounds = node_blocks(mrf);
    let mut convergence = Convergence::start(mrf.num_edges() == 0);
    while !convergence.converged && convergence.iterations < max_iters {
        let chunks = split_by(&mut outg, &bounds, &out_node_off);
        let jobs: Vec<_> = bounds.windows(2).map(|w| w[0]..w[1]).zip(chunks).collect();
        let (old, plan) = (&inc, &plan);
        let residual = jobs
            .into_par_iter()
            .map_init(
                || (vec![0.0; 4 * mrf.max_states.max(1)], Vec::new()),
                |(scratch, logs), (range, out_chunk)| {
                    push_general(mrf, plan, range, old, out_chunk, scratch, logs)
                },
            )
            .reduce(|| 0.0, f64::max);
        deliver_messages(mrf, &bounds, &outg, &mut inc);
        convergence.record(residual, tol);
    }
    finish(mrf, &plan, inc, want_msgs, convergence)
}

/// Node beliefs (unnormalised log) from the final linear messages `lin` (target-grouped),
/// and the log-messages when `want_msgs`.
fn finish(
    mrf: &PairwiseMrf,
    plan: &Plan,
    lin: Vec<f64>,
    want_msgs: bool,
    convergence: Convergence,
) -> LinearRun {
    let mut bel = vec![0.0; mrf.eff_unary.len()];
    for v in 0..mrf.num_nodes() {
        let (a, b) = (mrf.state_off[v], mrf.state_off[v + 1]);
        let kv = b - a;
        let base = mrf.msg_base[v];
        let deg = mrf.in_off[v + 1] - mrf.in_off[v];
        let out = &mut bel[a..b];
        out.copy_from_slice(&mrf.eff_unary[a..b]);
        if plan.kind[v] == Kind::Linear {
            // The product stays within [e^-600, 1]: one ln per state.
            let mut prod = [1.0f64; 16];
            if kv <= prod.len() {
                for m in lin[base..base + kv * deg].chunks_exact(kv) {
                    for (p, x) in prod.iter_mut().zip(m) {
                        *p *= x;
                    }
                }
                for (o, p) in out.iter_mut().zip(&prod) {
                    *o += p.ln();
                }
                continue;
            }
        }
        for m in lin[base..base + kv * deg].chunks_exact(kv) {
            for (o, x) in out.iter_mut().zip(m) {
                *o += x.ln();
            }
        }
    }
    let msgs = if want_msgs {
        lin.iter().map(|x| x.ln()).collect()
    } else {
        Vec::new()
    };
    LinearRun {
        msgs,
        bel,
        convergence,
    }
}

/// The compute pass of linear flooding over the source nodes `range` (any state counts):
/// `old` holds every incoming message (target-grouped, `msg_base` layout); each source
/// forms its belief and overwrites its outgoing messages in `out_chunk` (the block's part
/// of the source-grouped `out_off` layout, where the previous messages sit for the
/// residual); [`deliver_messages`](crate::bp::deliver_messages) then hands them to their targets. Returns the block's
/// residual.
#[allow(clippy::too_many_arguments)]
fn push_general(
    mrf: &PairwiseMrf,
    plan: &Plan,
    range: Range<usize>,
    old: &[f64],
    out_chunk: &mut [f64],
    scratch: &mut [f64],
    logs: &mut Vec<f64>,
) -> f64 {
    let out0 = mrf.out_off[mrf.in_off[range.start]];
    let k = mrf.max_states.max(1);
    let (b, rest) = scratch.split_at_mut(k);
    let (u, rest) = rest.split_at_mut(k);
    let (out, _) = rest.split_at_mut(k);
    let load = |i: usize| old[i];
    let ker = &mrf.kernels;
    let (mut hi, mut lo) = (1.0f64, 1.0f64);
    for i in range {
        let ki = mrf.num_states[i] as usize;
        let base = mrf.msg_base[i];
        let (s0, s1) = (mrf.in_off[i], mrf.in_off[i + 1]);
        let (a0, a1) = (mrf.state_off[i], mrf.state_off[i + 1]);
        let b = &mut b[..ki];
        let linear = plan.kind[i] == Kind::Linear;
        if linear {
            b.copy_from_slice(&plan.unary_lin[a0..a1]);
            for p in (base..base + ki * (s1 - s0)).step_by(ki) {
                for (a, x) in b.iter_mut().enumerate() {
                    *x *= load(p + a);
                }
            }
        } else {
            b.copy_from_slice(&mrf.eff_unary[a0..a1]);
            logs.clear();
            for p in base..base + ki * (s1 - s0) {
                logs.push(load(p).ln());
            }
            for m in logs.chunks_exact(ki) {
                for (x, l) in b.iter_mut().zip(m) {
                    *x += l;
                }
            }
        }
        for s in s0..s1 {
            let kj = if mrf.uniform_k > 0 {
                mrf.uniform_k
            } else {
                mrf.num_states[mrf.in_src[s] as usize] as usize
            };
            let so = base + (s - s0) * ki;
            let u = &mut u[..ki];
            if linear {
                for (a, w) in u.iter_mut().enumerate() {
                    *w = b[a] / load(so + a);
                }
            } else {
                let l = &logs[so - base..so - base + ki];
                let mut cmax = f64::NEG_INFINITY;
                for (w, (&x, &y)) in u.iter_mut().zip(b.iter().zip(l)) {
                    *w = x - y;
                    cmax = cmax.max(*w);
                }
                u.iter_mut().for_each(|w| *w = (*w - cmax).exp());
            }
            let q = (mrf.in_kernel[s] ^ 1) as usize;
            let off = ker.off[q];
            let table = &ker.exp[off..off + ki * kj];
            let out = &mut out[..kj];
            out.iter_mut().for_each(|o| *o = 0.0);
            for (row, &w) in table.chunks_exact(kj).zip(u.iter()) {
                if w == 0.0 {
                    continue;
                }
                for (o, &t) in out.iter_mut().zip(row) {
                    *o += w * t;
                }
            }
            let mx = out.iter().copied().fold(0.0, f64::max);
            let inv = 1.0 / mx;
            let oo = mrf.out_off[s] - out0;
            let prev = &mut out_chunk[oo..oo + kj];
            for (o, p) in out.iter_mut().zip(prev.iter_mut()) {
                *o *= inv;
                let r = *o / *p;
                hi = hi.max(r);
                lo = lo.min(r);
                *p = *o;
            }
        }
    }
    residual_of(hi, lo)
}

/// Flooding for `K` states everywhere (`3 ≤ K ≤ 8`), in two passes per sweep, both over
/// plain `f64` arrays (no atomics):
/// 1. **compute** (parallel over source blocks): each source reads its own contiguous
///    incoming block, forms its belief and sends one message per slot into its own
///    contiguous block of the source-grouped array `outg`, where the previous message of
///    the same slot sits for the residual;
/// 2. **deliver** (parallel over target blocks): each target gathers its incoming block
///    from `outg` (the message arriving along slot `t` was sent along `in_rev[t]`).
///
/// Both passes stream through memory except the gather's reads, which are independent of
/// each other and so overlap; a push kernel that scatters each message into its target's
/// block instead stalls on one write miss after another (measured on Barabási–Albert
/// graphs, 10^5 nodes, `K = 7`: 1.5 times as fast as that kernel, see the srl-infer guide).
/// Same arithmetic in the same order as [`push_general`] (belief products in slot order,
/// cavity quotients, kernel rows in source-state order, normalisation by the maximum), so
/// the output equals it bit for bit, for any thread count.
fn flooding_uniform<const K: usize>(
    mrf: &PairwiseMrf,
    plan: Plan,
    max_iters: usize,
    tol: f64,
    want_msgs: bool,
    init: Option<&[f64]>,
) -> LinearRun {
    let (mut old, mut outg) = linear_start(mrf, init);
    let bounds = node_blocks(mrf);
    let mut convergence = Convergence::start(mrf.num_edges() == 0);
    while !convergence.converged && convergence.iterations < max_iters {
        let chunks = split_by(&mut outg, &bounds, &mrf.msg_base);
        let (old_r, plan_r) = (&old, &plan);
        let residual = bounds
            .windows(2)
            .map(|w| w[0]..w[1])
            .zip(chunks)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(range, out_chunk)| push_uniform::<K>(mrf, plan_r, range, old_r, out_chunk))
            .reduce(|| 0.0, f64::max);
        let (sent, _) = outg.as_chunks::<K>();
        let (inc, _) = old.as_chunks_mut::<K>();
        deliver_slots(mrf, sent, inc);
        convergence.record(residual, tol);
    }
    finish(mrf, &plan, old, want_msgs, convergence)
}

/// The compute pass of [`flooding_uniform`] over the source nodes `range`: `old` holds
/// every slot's incoming message (`K` entries per slot, target-grouped), `out_chunk` the
/// block's outgoing messages (source-grouped: the message sent back along slot `s` at
/// `K * (s - in_off[range.start])`), overwritten with the new ones. Returns the block's
/// residual. A kernel row times a zero cavity entry adds `+0.0`, which leaves every sum
/// unchanged, so the rows are not skipped as [`push_general`] skips them.
fn push_uniform<const K: usize>(
    mrf: &PairwiseMrf,
    plan: &Plan,
    range: Range<usize>,
    old: &[f64],
    out_chunk: &mut [f64],
) -> f64 {
    let (msgs, _) = old.as_chunks::<K>();
    let (prev_all, _) = out_chunk.as_chunks_mut::<K>();
    let s_first = mrf.in_off[range.start];
    let ker = &mrf.kernels;
    let (mut hi, mut lo) = (1.0f64, 1.0f64);
    for i in range {
        let (s0, s1) = (mrf.in_off[i], mrf.in_off[i + 1]);
        let incoming = &msgs[s0..s1];
        let linear = plan.kind[i] == Kind::Linear;
        let mut b = [0.0f64; K];
        if linear {
            b.copy_from_slice(&plan.unary_lin[K * i..K * i + K]);
            for m in incoming {
                for (x, y) in b.iter_mut().zip(m) {
                    *x *= y;
                }
            }
        } else {
            b.copy_from_slice(&mrf.eff_unary[K * i..K * i + K]);
            for m in incoming {
                for (x, y) in b.iter_mut().zip(m) {
                    *x += y.ln();
                }
            }
        }
        for (s, m) in (s0..s1).zip(incoming) {
            let mut u = [0.0f64; K];
            if linear {
                for (w, (&x, &y)) in u.iter_mut().zip(b.iter().zip(m)) {
                    *w = x / y;
                }
            } else {
                let mut cmax = f64::NEG_INFINITY;
                for (w, (&x, &y)) in u.iter_mut().zip(b.iter().zip(m)) {
                    *w = x - y.ln();
                    cmax = cmax.max(*w);
                }
                u.iter_mut().for_each(|w| *w = (*w - cmax).exp());
            }
            let q = (mrf.in_kernel[s] ^ 1) as usize;
            let (table, _) = ker.exp[ker.off[q]..ker.off[q] + K * K].as_chunks::<K>();
            let mut out = [0.0f64; K];
            for (row, &w) in table.iter().zip(u.iter()) {
                for (o, &t) in out.iter_mut().zip(row) {
                    *o += w * t;
                }
            }
            let mx = out.iter().copied().fold(0.0, fmax);
            let inv = 1.0 / mx;
            let prev = &mut prev_all[s - s_first];
            for (o, p) in out.iter_mut().zip(prev.iter_mut()) {
                *o *= inv;
                let r = *o / *p;
                hi = fmax(hi, r);
                lo = fmin(lo, r);
                *p = *o;
            }
        }
    }
    residual_of(hi, lo)
}

// ---------------------------------------------------------------------------------------
// Two states everywhere: one ratio per message.

use crate::kernel::log_pair;

/// The two-state linear kernel with ratios stored as `S` (`f64`, or `f32` for
/// [`MessagePrecision::F32`]); arithmetic is `f64`.
fn flooding_binary<S: Ratio>(
    mrf: &PairwiseMrf,
    plan: Plan,
    max_iters: usize,
    tol: f64,
    want_msgs: bool,
    init: Option<&[f64]>,
) -> LinearRun {
    let n = mrf.num_nodes();
    // Linear unary ratio u(1) / u(0) of each linear variable (0 elsewhere).
    let uratio: Vec<f64> = (0..n)
        .map(|v| {
            if plan.kind[v] == Kind::Linear {
                (mrf.eff_unary[2 * v + 1] - mrf.eff_unary[2 * v]).exp()
            } else {
                0.0
            }
        })
        .collect();
    let slots = mrf.num_directed_edges();
    let (mut inc_old, mut outg): (Vec<S::Atom>, Vec<S>) = match init {
        None => (
            (0..slots).map(|_| S::atom(1.0)).collect(),
            vec![S::of(1.0); slots],
        ),
        Some(m) => {
            // Ratio m(1) / m(0) of each log-message pair.
            let r: Vec<f64> = m.chunks_exact(2).map(|p| (p[1] - p[0]).exp()).collect();
            // Source-grouped: the message sent back along slot `s` is `r[in_rev[s]]`.
            let outg = (0..slots)
                .map(|s| S::of(r[mrf.in_rev[s] as usize]))
                .collect();
            (r.iter().map(|&x| S::atom(x)).collect(), outg)
        }
    };
    let mut inc_new: Vec<S::Atom> = (0..slots).map(|_| S::atom(1.0)).collect();
    // Source-grouped: the message sent back along slot `s` is `outg[s]`.
    let bounds = node_blocks(mrf);
    let mut convergence = Convergence::start(mrf.num_edges() == 0);
    while !convergence.converged && convergence.iterations < max_iters {
        let chunks = split_by(&mut outg, &bounds, &mrf.in_off);
        let jobs: Vec<_> = bounds.windows(2).map(|w| w[0]..w[1]).zip(chunks).collect();
        let (old, new, plan, uratio) = (&inc_old, &inc_new, &plan, &uratio);
        let residual = jobs
            .into_par_iter()
            .map_init(Vec::new, |logs, (range, out_chunk)| {
                push_binary::<S>(mrf, plan, uratio, range, old, new, out_chunk, logs)
            })
            .reduce(|| 0.0, f64::max);
        std::mem::swap(&mut inc_old, &mut inc_new);
        convergence.record(residual, tol);
    }
    let r: Vec<f64> = inc_old.into_iter().map(S::into_f64).collect();
    let mut bel = mrf.eff_unary.clone();
    for v in 0..n {
        let (s0, s1) = (mrf.in_off[v], mrf.in_off[v + 1]);
        let u = [bel[2 * v], bel[2 * v + 1]];
        let [x0, x1] = crate::kernel::binary_belief(plan.kind[v], u, &r[s0..s1]);
        bel[2 * v] = x0;
        bel[2 * v + 1] = x1;
    }
    let msgs = if want_msgs {
        let mut m = vec![0.0; 2 * slots];
        for (p, &x) in r.iter().enumerate() {
            let (l0, l1) = log_pair(x);
            m[2 * p] = l0;
            m[2 * p + 1] = l1;
        }
        m
    } else {
        Vec::new()
    };
    LinearRun {
        msgs,
        bel,
        convergence,
    }
}

/// One flooding pass over `range`, two states, one ratio per message (stored as `S`;
/// each new ratio is rounded to `S` before the residual sees it, so the residual is the
/// change of the stored messages). The pass is [`crate::kernel::binary_pass`]'s.
#[allow(clippy::too_many_arguments)]
fn push_binary<S: Ratio>(
    mrf: &PairwiseMrf,
    plan: &Plan,
    uratio: &[f64],
    range: Range<usize>,
    old: &[S::Atom],
    new: &[S::Atom],
    out_chunk: &mut [S],
    logs: &mut Vec<f64>,
) -> f64 {
    let out0 = mrf.in_off[range.start];
    let block = crate::kernel::BinaryBlock {
        in_off: &mrf.in_off,
        kind: &plan.kind,
        unary_ratio: uratio,
        unary_log: &mrf.eff_unary,
        in_kernel: &mrf.in_kernel,
        kernel_off: &mrf.kernels.off,
        kernel_exp: &mrf.kernels.exp,
    };
    let load = |i: usize| S::load(&old[i]);
    let swap_prev =
        |s: usize, rn: f64| std::mem::replace(&mut out_chunk[s - out0], S::of(rn)).get();
    let deliver = |s: usize, rn: f64| S::store(&new[mrf.in_rev[s] as usize], rn);
    if S::SHORT {
        crate::kernel::binary_pass_with::<true>(
            &block,
            range,
            load,
            S::round,
            swap_prev,
            deliver,
            logs,
        )
    } else {
        crate::kernel::binary_pass_with::<false>(
            &block,
            range,
            load,
            S::round,
            swap_prev,
            deliver,
            logs,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrf::{MrfParts, PairTable};

    /// A star whose centre's kernels sum past the budget: the centre is a log variable,
    /// the leaves linear, an observed leaf clamped (two-state plan only).
    #[test]
    fn plan_picks_log_variables_past_the_budget() {
        let n = 200;
        let mrf = PairwiseMrf::new(MrfParts {
            num_states: vec![2; n],
            unary: vec![0.0; 2 * n],
            edges: (1..n as u32).map(|v| (0, v)).collect(),
            edge_tables: vec![0; n - 1],
            tables: vec![PairTable::potts(2, 4.0, 0.0)],
            evidence: (0..n).map(|v| (v == 7).then_some(1)).collect(),
        })
        .unwrap();
        let p = plan(&mrf, true);
        assert_eq!(p.kind[0], Kind::Log);
        assert_eq!(p.kind[1], Kind::Linear);
        assert_eq!(p.kind[7], Kind::Clamped(1));
        let p = plan(&mrf, false);
        assert_eq!(p.kind[7], Kind::Linear);
        assert_eq!(&p.unary_lin[14..16], &[0.0, 1.0]);
        assert!(applies(&mrf, true, 0.0));
        assert!(!applies(&mrf, true, 0.1));
        assert!(!applies(&mrf, false, 0.0));
    }

    /// The two-pass kernel for `K` states everywhere equals the general push kernel bit
    /// for bit: messages, beliefs and residual, cold and warm started, on models with a
    /// log hub (a star centre past the budget), evidence and per-edge random tables, for
    /// every `K` it serves, with one thread and with four.
    #[test]
    fn uniform_kernel_equals_the_general_kernel_bit_for_bit() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for k in 3..=8usize {
            let n = 300;
            // A random tree plus chords, then a hub joined to 250 nodes.
            let mut edges: Vec<(u32, u32)> =
                (1..n as u32).map(|v| (rng.random_range(0..v), v)).collect();
            edges.extend(
                (0..100).map(|_| (rng.random_range(0..150), rng.random_range(150..n as u32))),
            );
            edges.extend((1..=250u32).map(|v| (0, v)));
            edges.sort_unstable();
            edges.dedup();
            edges.retain(|&(a, b)| a != b);
            let m = edges.len();
            let tables: Vec<PairTable> = (0..8)
                .map(|_| {
                    let logp: Vec<f64> = (0..k * k).map(|_| rng.random_range(-3.0..3.0)).collect();
                    PairTable::new(k, k, logp)
                })
                .collect();
            let mrf = PairwiseMrf::new(MrfParts {
                num_states: vec![k; n],
                unary: (0..n * k).map(|_| rng.random_range(-2.0..2.0)).collect(),
                edge_tables: (0..m).map(|_| rng.random_range(0..8)).collect(),
                edges,
                tables,
                evidence: (0..n)
                    .map(|v| (v % 37 == 5).then_some((v % k) as u32))
                    .collect(),
            })
            .unwrap();
            let p = plan(&mrf, false);
            assert_eq!(p.kind[0], Kind::Log, "k = {k}: the hub exceeds the budget");
            let bits = |r: &LinearRun| {
                let mut v: Vec<u64> = r.msgs.iter().chain(&r.bel).map(|x| x.to_bits()).collect();
                v.push(r.convergence.max_residual.to_bits());
                v.push(r.convergence.iterations as u64);
                v
            };
            let run = |threads: usize, uniform: bool, init: Option<&[f64]>| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| {
                    let p = plan(&mrf, false);
                    if uniform {
                        flooding(&mrf, 7, 1e-12, true, init, MessagePrecision::F64).unwrap()
                    } else {
                        flooding_general(&mrf, p, 7, 1e-12, true, init)
                    }
                })
            };
            let general = run(1, false, None);
            for threads in [1, 4] {
                assert_eq!(
                    bits(&run(threads, true, None)),
                    bits(&general),
                    "k = {k}, cold"
                );
            }
            let warm = general.msgs.clone();
            let general = run(1, false, Some(&warm));
            for threads in [1, 4] {
                assert_eq!(
                    bits(&run(threads, true, Some(&warm))),
                    bits(&general),
                    "k = {k}, warm"
                );
            }
        }
    }
}
