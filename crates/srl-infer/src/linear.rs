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
//!
//! With `K = 3..8` states everywhere, a message through a **Potts** kernel (a `K × K`
//! table whose exp entries are bit-identical on the diagonal, `d`, and off it, `c`) takes
//! the `O(K)` form `out[x] = c · Σ_{y ≠ x} u[y] + d · u[x]` (Felzenszwalb & Huttenlocher
//! 2006, Sec. 2.1 and 3.1) instead of the `K × K` matrix product: the same sums in another
//! order, so it rounds differently, by a few ulps per message entry.

use std::ops::Range;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU32, AtomicU64};

use rayon::prelude::*;

use crate::bp::{MessagePrecision, deliver_messages, node_blocks, split_by};
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
/// outside the observed state; empty in the two-state plan, whose kernels use the unary
/// ratio).
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
    let eff = mrf.eff_unary();
    let ranges =
        |v: usize| (mrf.in_off[v]..mrf.in_off[v + 1]).map(|s| range[mrf.in_kernel[s] as usize]);
    if binary {
        // the two-state kernels use the unary ratio, not the linear unary; each
        // variable's kind on its own (in parallel on a large model, the same kinds)
        let par = mrf.num_directed_edges() >= 4 * SETUP_MIN_LEN;
        let kind = collect_maybe_par(n, par, |v| {
            let u = &eff[mrf.state_off[v]..mrf.state_off[v + 1]];
            crate::kernel::variable_kind(u, mrf.evidence[v], true, ranges(v))
        });
        return Plan {
            kind,
            unary_lin: Vec::new(),
        };
    }
    let mut kind = Vec::with_capacity(n);
    let mut unary_lin = vec![0.0; eff.len()];
    for v in 0..n {
        let (a, b) = (mrf.state_off[v], mrf.state_off[v + 1]);
        let (u, ev) = (&eff[a..b], mrf.evidence[v]);
        kind.push(crate::kernel::plan_variable(
            u,
            ev,
            false,
            ranges(v),
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
    flooding_with(mrf, max_iters, tol, want_msgs, init, precision, true)
}

/// [`flooding`], with the `O(K)` Potts form of the `K`-state kernel on (`potts`: what
/// srl-infer runs) or off (every message a matrix product, the arithmetic of
/// [`push_general`]; the unit tests compare the two).
fn flooding_with(
    mrf: &PairwiseMrf,
    max_iters: usize,
    tol: f64,
    want_msgs: bool,
    init: Option<&[f64]>,
    precision: MessagePrecision,
    potts: bool,
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
        let (m, t, w) = (max_iters, tol, want_msgs);
        match mrf.uniform_k {
            3 => flooding_uniform::<3>(mrf, plan, m, t, w, init, potts),
            4 => flooding_uniform::<4>(mrf, plan, m, t, w, init, potts),
            5 => flooding_uniform::<5>(mrf, plan, m, t, w, init, potts),
            6 => flooding_uniform::<6>(mrf, plan, m, t, w, init, potts),
            7 => flooding_uniform::<7>(mrf, plan, m, t, w, init, potts),
            8 => flooding_uniform::<8>(mrf, plan, m, t, w, init, potts),
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
        let row = &mrf.eff_unary()[a..b];
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
    let off = mrf.offsets();
    match init {
        None => (
            vec![1.0; mrf.message_len()],
            vec![1.0; off.out_off[mrf.num_directed_edges()]],
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
    let off = mrf.offsets();
    let (mut inc, mut outg) = linear_start(mrf, init);
    let out_node_off: Vec<usize> = mrf.in_off.iter().map(|&s| off.out_off[s]).collect();
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
    drop(outg);
    let incoming = |v: usize, t: usize| {
        let k = mrf.num_states[v] as usize;
        let at = off.msg_base[v] + (t - mrf.in_off[v]) * k;
        &inc[at..at + k]
    };
    finish(mrf, &plan, incoming, want_msgs, convergence)
}

/// Node beliefs (unnormalised log) from the final linear messages, and the log-messages
/// (target-grouped, the `msg_base` layout) when `want_msgs`: `incoming(v, t)` is the
/// message arriving at variable `v` along its slot `t` (`k_v` entries).
fn finish<'a>(
    mrf: &PairwiseMrf,
    plan: &Plan,
    incoming: impl Fn(usize, usize) -> &'a [f64],
    want_msgs: bool,
    convergence: Convergence,
) -> LinearRun {
    let mut bel = vec![0.0; mrf.eff_unary().len()];
    for v in 0..mrf.num_nodes() {
        let (a, b) = (mrf.state_off[v], mrf.state_off[v + 1]);
        let kv = b - a;
        let slots = mrf.in_off[v]..mrf.in_off[v + 1];
        let out = &mut bel[a..b];
        out.copy_from_slice(&mrf.eff_unary()[a..b]);
        if plan.kind[v] == Kind::Linear {
            // The product stays within [e^-600, 1]: one ln per state.
            let mut prod = [1.0f64; 16];
            if kv <= prod.len() {
                for t in slots {
                    for (p, x) in prod.iter_mut().zip(incoming(v, t)) {
                        *p *= x;
                    }
                }
                for (o, p) in out.iter_mut().zip(&prod) {
                    *o += p.ln();
                }
                continue;
            }
        }
        for t in slots {
            for (o, x) in out.iter_mut().zip(incoming(v, t)) {
                *o += x.ln();
            }
        }
    }
    let msgs = if want_msgs {
        let mut m = Vec::with_capacity(mrf.message_len());
        for v in 0..mrf.num_nodes() {
            for t in mrf.in_off[v]..mrf.in_off[v + 1] {
                m.extend(incoming(v, t).iter().map(|x| x.ln()));
            }
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
    let off = mrf.offsets();
    let out0 = off.out_off[mrf.in_off[range.start]];
    let k = mrf.max_states.max(1);
    let (b, rest) = scratch.split_at_mut(k);
    let (u, rest) = rest.split_at_mut(k);
    let (out, _) = rest.split_at_mut(k);
    let load = |i: usize| old[i];
    let ker = &mrf.kernels;
    let (mut hi, mut lo) = (1.0f64, 1.0f64);
    for i in range {
        let ki = mrf.num_states[i] as usize;
        let base = off.msg_base[i];
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
            b.copy_from_slice(&mrf.eff_unary()[a0..a1]);
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
            let t0 = ker.off[q];
            let table = &ker.exp[t0..t0 + ki * kj];
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
            let oo = off.out_off[s] - out0;
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

/// Flooding for `K` states everywhere (`3 ≤ K ≤ 8`), one pass per sweep over two plain
/// `f64` arrays of source-grouped messages (no atomics), `sent` (the previous sweep's)
/// and `next`, swapped after each sweep. The pass runs in parallel over source blocks:
/// each source gathers its incoming messages from `sent` (the message arriving along
/// slot `t` was sent back along `in_rev[t]`; the cache lines requested a few variables
/// ahead), forms its belief and writes one message per slot into its own contiguous block
/// of `next`, comparing it with the previous message of the same slot in `sent` for the
/// residual. The final beliefs read the last messages where they lie.
///
/// The pass streams through memory except the gathered reads, which are independent of
/// each other and so overlap; a push kernel that scatters each message into its target's
/// block instead stalls on one write miss after another (measured on Barabási–Albert
/// graphs, 10^5 nodes, `K = 7`: 1.5 times as fast as that kernel, see the srl-infer
/// guide). Until 2026-12-02 the gather was a delivery pass of its own, between the
/// sweeps, into a target-grouped array; gathering in the pass spares a write and a read
/// of every message per sweep (`K = 7`, 100 sweeps: 1.25-1.3 times as fast).
/// Same arithmetic in the same order as [`push_general`] (belief products in slot order,
/// cavity quotients, kernel rows in source-state order, normalisation by the maximum), so
/// with `potts = false` the output equals it bit for bit, for any thread count.
///
/// With `potts = true` (srl-infer's runs) the Potts kernels are found once per run
/// ([`potts_forms`]) and their messages take the `O(K)` form of [`PottsForm`]
/// (Felzenszwalb & Huttenlocher 2006, Sec. 2.1 and 3.1), other kernels the matrix product:
/// the output is then the same to a few ulps per message entry, not bit for bit (the unit
/// tests bound the marginals' difference by `1e-12`), and still the same for any thread
/// count. A run without Potts kernels is the `potts = false` run.
#[allow(clippy::too_many_arguments)]
fn flooding_uniform<const K: usize>(
    mrf: &PairwiseMrf,
    plan: Plan,
    max_iters: usize,
    tol: f64,
    want_msgs: bool,
    init: Option<&[f64]>,
    potts: bool,
) -> LinearRun {
    let off = mrf.offsets();
    let forms = if potts {
        potts_forms(mrf, K)
    } else {
        Vec::new()
    };
    // Decided once per run: without a Potts kernel the pass never reads `forms`.
    let any_potts = forms.iter().any(|&f| f != PottsForm::Matrix);
    // `sent`: the messages sent back along each slot (source-grouped), which the pass
    // gathers its incoming messages from (`sent[in_rev[t]]` arrives along slot `t`);
    // `next`: the new ones, the buffers swapped after each sweep. The incoming messages
    // of `linear_start` are those gathered, so their array is reused as `next` (its
    // values are never read).
    let (mut next, mut sent) = linear_start(mrf, init);
    let bounds = node_blocks(mrf);
    let mut convergence = Convergence::start(mrf.num_edges() == 0);
    while !convergence.converged && convergence.iterations < max_iters {
        let chunks = split_by(&mut next, &bounds, &off.msg_base);
        let (sent_r, plan_r, forms_r) = (&sent, &plan, &forms[..]);
        let residual = bounds
            .windows(2)
            .map(|w| w[0]..w[1])
            .zip(chunks)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(range, out_chunk)| {
                // compiled for the processor's vector unit too (AVX2 where there is one)
                crate::vmath::arch().dispatch(UniformPass::<K> {
                    potts: any_potts,
                    mrf,
                    plan: plan_r,
                    forms: forms_r,
                    range,
                    sent: sent_r,
                    out_chunk,
                })
            })
            .reduce(|| 0.0, f64::max);
        std::mem::swap(&mut sent, &mut next);
        convergence.record(residual, tol);
    }
    // the final incoming messages gathered where they lie
    drop(next);
    let rev = &mrf.in_rev;
    let incoming = |_: usize, t: usize| &sent[K * rev[t] as usize..K * rev[t] as usize + K];
    finish(mrf, &plan, incoming, want_msgs, convergence)
}

/// The arguments of one [`push_uniform`] call, run through [`pulp`]'s dispatch so that
/// the pass is compiled for the processor's vector unit as well: AVX2 where there is
/// one, the divisions and products of a `K`-state message in 4 lanes instead of SSE2's
/// 2 (`K = 7` at 10^5, 100 sweeps: about 4 % faster, 6 alternating pairs). The pass has
/// no fused multiply-add and no reassociation on any target (Rust never contracts or
/// reorders floating-point operations), so every vector unit gives the same bits; the
/// unit test `uniform_kernel_equals_the_general_kernel_bit_for_bit` compares it with the
/// undispatched general pass. (A closure passed through the dispatch is not inlined into
/// it, so the pass's arguments travel in this struct.)
struct UniformPass<'a, const K: usize> {
    /// [`push_uniform`]'s `POTTS`.
    potts: bool,
    mrf: &'a PairwiseMrf,
    plan: &'a Plan,
    forms: &'a [PottsForm],
    range: Range<usize>,
    sent: &'a [f64],
    out_chunk: &'a mut [f64],
}

impl<const K: usize> pulp::WithSimd for UniformPass<'_, K> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> f64 {
        let UniformPass {
            potts,
            mrf,
            plan,
            forms,
            range,
            sent,
            out_chunk,
        } = self;
        if potts {
            push_uniform::<K, true>(mrf, plan, forms, range, sent, out_chunk)
        } else {
            push_uniform::<K, false>(mrf, plan, forms, range, sent, out_chunk)
        }
    }
}

/// How [`push_uniform`] sends a message through one kernel, found once per run by
/// [`potts_forms`].
///
/// A kernel is **Potts** when its table is square (`K × K`) and in its exp table
/// (`exp(θ − max θ)`, what the product reads) every diagonal entry is bit-identical to
/// every other (`d`) and every off-diagonal entry too (`c`). Then
/// `Σ_y u[y] · t[y][x] = c · Σ_{y ≠ x} u[y] + d · u[x]`, which costs `O(K)` instead of the
/// `K²` multiply-adds of the product: the Potts message of Felzenszwalb & Huttenlocher
/// (2006, "Efficient belief propagation for early vision", Sec. 2.1 and 3.1), there in
/// the min-sum form, here in the sum-product one. Two forms, so that every term added is
/// nonnegative as in the product: the relative rounding error of an entry is at most
/// `(K + 1) · 2^-53` to first order (the product's: `K · 2^-53`) for any coupling
/// strength, so the two differ by a few ulps per entry:
/// - `d ≥ c` (attractive, or a constant table): `out[x] = c·S + (d − c)·u[x]` with
///   `S = Σ_y u[y]`, `d − c` rounded once per run;
/// - `d < c` (repulsive): `out[x] = c·(P[x] + Q[x]) + d·u[x]` with the prefix sums
///   `P[x] = Σ_{y < x} u[y]` and suffix sums `Q[x] = Σ_{y > x} u[y]`. The attractive
///   form would subtract here (`(d − c) < 0`), and for a cavity `u` dominated by one entry
///   `x` it would lose about `log2(c / d)` bits of `out[x]` to cancellation (all 53 of
///   them, even a zero message, once `c / d > 2^53`); the leave-one-out sums lose none.
///
/// The sums are in another order than the product's, so a Potts message equals the
/// product's to those few ulps, not bit for bit.
#[derive(Copy, Clone, Debug, PartialEq)]
pub(crate) enum PottsForm {
    /// Not a Potts table: the `K × K` matrix product.
    Matrix,
    /// `d ≥ c`: `out[x] = c·S + gap·u[x]`, `gap = d − c`.
    Attractive {
        /// The off-diagonal entry.
        c: f64,
        /// Diagonal minus off-diagonal entry (rounded once).
        gap: f64,
    },
    /// `d < c`: `out[x] = c·(Σ_{y ≠ x} u[y]) + d·u[x]` from prefix and suffix sums.
    Repulsive {
        /// The off-diagonal entry.
        c: f64,
        /// The diagonal entry.
        d: f64,
    },
}

/// The [`PottsForm`] of a `k × k` exp table (row-major): Potts when every diagonal entry
/// has the bits of `table[0]` and every off-diagonal entry those of `table[1]`, else
/// [`PottsForm::Matrix`] (also for `k < 2` or `table.len() ≠ k²`). Such a table is
/// symmetric; the comparison is exact (one differing bit anywhere: not Potts).
pub(crate) fn potts_form(table: &[f64], k: usize) -> PottsForm {
    if k < 2 || table.len() != k * k {
        return PottsForm::Matrix;
    }
    let (d, c) = (table[0], table[1]);
    let (d_bits, c_bits) = (d.to_bits(), c.to_bits());
    let potts = table.chunks_exact(k).enumerate().all(|(a, row)| {
        row.iter()
            .enumerate()
            .all(|(b, &t)| t.to_bits() == if a == b { d_bits } else { c_bits })
    });
    if !potts {
        PottsForm::Matrix
    } else if d >= c {
        PottsForm::Attractive { c, gap: d - c }
    } else {
        PottsForm::Repulsive { c, d }
    }
}

/// The [`PottsForm`] of every kernel of `mrf` (indexed like [`crate::mrf::Kernels::off`]),
/// as a `k × k` table: kernels `2t` and `2t + 1` come from table `t`, so a kernel whose
/// table is not `k × k` is [`PottsForm::Matrix`].
pub(crate) fn potts_forms(mrf: &PairwiseMrf, k: usize) -> Vec<PottsForm> {
    let ker = &mrf.kernels;
    (0..ker.off.len() - 1)
        .map(|q| {
            let t = &mrf.tables[q / 2];
            if t.rows == k && t.cols == k {
                potts_form(&ker.exp[ker.off[q]..ker.off[q + 1]], k)
            } else {
                PottsForm::Matrix
            }
        })
        .collect()
}

/// The unnormalised message `out[x] = Σ_y u[y] · t[y][x]` of [`push_uniform`] through
/// kernel `q` of form `form` (`t`: `exp[off[q]..off[q] + K²]`, read only for
/// [`PottsForm::Matrix`]): the matrix product in source-state order, or the `O(K)` Potts
/// form ([`PottsForm`]).
#[inline(always)]
fn uniform_message<const K: usize>(
    form: PottsForm,
    off: &[usize],
    exp: &[f64],
    q: usize,
    u: &[f64; K],
) -> [f64; K] {
    let mut out = [0.0f64; K];
    match form {
        PottsForm::Matrix => {
            let (table, _) = exp[off[q]..off[q] + K * K].as_chunks::<K>();
            for (row, &w) in table.iter().zip(u.iter()) {
                for (o, &t) in out.iter_mut().zip(row) {
                    *o += w * t;
                }
            }
        }
        PottsForm::Attractive { c, gap } => {
            let cs = c * u.iter().fold(0.0, |a, &w| a + w);
            for (o, &w) in out.iter_mut().zip(u) {
                *o = cs + gap * w;
            }
        }
        PottsForm::Repulsive { c, d } => {
            // out[x] ← P[x] (prefix sums), then c·(P[x] + Q[x]) + d·u[x] from the right.
            let mut acc = 0.0;
            for (o, &w) in out.iter_mut().zip(u) {
                *o = acc;
                acc += w;
            }
            let mut acc = 0.0;
            for (o, &w) in out.iter_mut().zip(u).rev() {
                *o = c * (*o + acc) + d * w;
                acc += w;
            }
        }
    }
    out
}

/// `out.iter().copied().fold(0.0, fmax)` by halves (`K = 7`: three steps instead of
/// seven in a chain): the largest entry, `0.0` when none is larger. The entries are taken
/// as `fmax(0.0, x)` first, which drops a NaN as the chain does (a NaN never passes
/// [`fmax`]'s comparison); the maximum of numbers is the same in any order.
#[inline(always)]
fn max_entry<const K: usize>(out: &[f64; K]) -> f64 {
    let mut a = out.map(|x| fmax(0.0, x));
    let mut w = K;
    while w > 1 {
        let h = w.div_ceil(2);
        for i in 0..w / 2 {
            a[i] = fmax(a[i], a[i + h]);
        }
        w = h;
    }
    a.first().copied().unwrap_or(0.0)
}

/// Whether the ratio `o / p` of a new and an old message entry, rounded, surely lies in
/// the running bounds `[lo, hi]` of a residual, by two multiplications instead of a
/// division: `o < fl(hi · p)` and `o > fl(lo · p)`. Rounding is monotone and `o` is a
/// float, so `o ≥ hi · p` would give `o ≥ fl(hi · p)`; hence the first gives
/// `o / p < hi` exactly and `fl(o / p) ≤ hi` (`hi` is a float too), and likewise the
/// second `fl(o / p) ≥ lo`, in the subnormal range, on underflow and on overflow
/// alike. It may fail for a quotient within the bounds (which is then divided out and
/// changes nothing), never hold for one outside. A zero `p` or a NaN fails it, so
/// `0 / 0` (skipped by the running bounds) and `x / 0` are divided as before.
#[inline(always)]
fn ratio_inside(o: f64, p: f64, hi: f64, lo: f64) -> bool {
    (o < hi * p) & (o > lo * p)
}

/// The compute pass of [`flooding_uniform`] over the source nodes `range`: `sent` holds
/// every slot's previous outgoing message (`K` entries per slot, source-grouped: the
/// message sent back along slot `s` at `K * s`), so the message arriving along slot `t`
/// is gathered from `sent[in_rev[t]]` (the cache lines requested [`PREFETCH_NODES`]
/// variables ahead) and the previous message along `s`, for the residual, is `sent[s]`.
/// `out_chunk` receives the block's new messages (at `K * (s - in_off[range.start])`).
/// Gathering here instead of in a separate delivery pass spares a write and a read of
/// every message per sweep, with the same values. Returns the block's residual. A kernel
/// row times a zero cavity entry adds `+0.0`, which leaves every sum unchanged, so the
/// rows are not skipped as [`push_general`] skips them.
///
/// `POTTS`: whether some kernel is Potts; then the message through kernel `q` takes
/// `forms[q]` (one load per slot, the `O(K)` form of [`PottsForm`] for a Potts kernel,
/// the matrix product otherwise). `POTTS = false` never reads `forms` (every message the
/// matrix product, bit for bit [`push_general`]'s).
#[inline(always)]
fn push_uniform<const K: usize, const POTTS: bool>(
    mrf: &PairwiseMrf,
    plan: &Plan,
    forms: &[PottsForm],
    range: Range<usize>,
    sent: &[f64],
    out_chunk: &mut [f64],
) -> f64 {
    let (msgs, _) = sent.as_chunks::<K>();
    let (out_all, _) = out_chunk.as_chunks_mut::<K>();
    let s_first = mrf.in_off[range.start];
    let ker = &mrf.kernels;
    let rev = &mrf.in_rev;
    let n = mrf.num_nodes();
    let (mut hi, mut lo) = (1.0f64, 1.0f64);
    for i in range {
        let (s0, s1) = (mrf.in_off[i], mrf.in_off[i + 1]);
        // the scattered messages PREFETCH_NODES variables on requested now (a hint)
        let j = i + PREFETCH_NODES;
        if j < n {
            for &r in &rev[mrf.in_off[j]..mrf.in_off[j + 1]] {
                let m = &msgs[r as usize];
                crate::prefetch(&m[0]);
                crate::prefetch(&m[K - 1]);
            }
        }
        let incoming = |s: usize| &msgs[rev[s] as usize];
        let linear = plan.kind[i] == Kind::Linear;
        let mut b = [0.0f64; K];
        if linear {
            b.copy_from_slice(&plan.unary_lin[K * i..K * i + K]);
            for s in s0..s1 {
                for (x, y) in b.iter_mut().zip(incoming(s)) {
                    *x *= y;
                }
            }
        } else {
            b.copy_from_slice(&mrf.eff_unary()[K * i..K * i + K]);
            for s in s0..s1 {
                for (x, y) in b.iter_mut().zip(incoming(s)) {
                    *x += y.ln();
                }
            }
        }
        for s in s0..s1 {
            let m = incoming(s);
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
            let form = if POTTS { forms[q] } else { PottsForm::Matrix };
            let mut out = uniform_message::<K>(form, &ker.off, &ker.exp, q, &u);
            let inv = 1.0 / max_entry(&out);
            let prev = &msgs[s];
            // the ratios are divided out only when one of them may pass `hi` or `lo`
            // (`ratio_inside`): the same `hi` and `lo` as dividing every entry
            let mut inside = true;
            for (o, &p) in out.iter_mut().zip(prev) {
                *o *= inv;
                inside &= ratio_inside(*o, p, hi, lo);
            }
            if !inside {
                for (&o, &p) in out.iter().zip(prev) {
                    let r = o / p;
                    hi = fmax(hi, r);
                    lo = fmin(lo, r);
                }
            }
            out_all[s - s_first] = out;
        }
    }
    residual_of(hi, lo)
}

// ---------------------------------------------------------------------------------------
// Two states everywhere: one ratio per message.

use crate::kernel::log_pair;

/// The two-state pass's own order of the variables and their slots: inside each block of
/// [`node_blocks`] the variables by increasing degree ([`crate::bp::by_degree`]: ties in
/// index order, degrees of 63 and more as one), and the slots, messages and kernels of
/// position `p` at `off[p]..off[p + 1]`, in the variable's own slot order.
///
/// In index order a Barabási–Albert graph's degrees change at nearly every variable, and
/// the pass's two loops over each variable's slots end where the processor did not
/// predict; in degree order they run in long stretches of one length, and all of the
/// pass's arrays are still read from start to end. Each variable's messages are the same
/// operations on the same values and the residual is a maximum, so the run's output is
/// the same to the bit. Measured on the 10^6-node model, 40 f32 sweeps on one thread:
/// a UAI file renumbered this way ran 25-35 % faster than the file's own order.
///
/// Memory at `n` variables and `S` slots: `12 n + 8 S` bytes (at 10^6 two-state
/// variables of a Barabási–Albert graph, 4·10^6 slots: 44 MB), `12 n + 4 S` (28 MB) when
/// every kernel is one table, plus `8 n` while it is built.
struct DegreeOrder {
    /// The variable at each position.
    var: Vec<u32>,
    /// Slot offsets per position (`n + 1` entries).
    off: Vec<usize>,
    /// Kernel of the message into each position slot ([`PairwiseMrf::in_kernel`]'s);
    /// empty when every kernel of the model is the same table (then kernel 0 serves
    /// every message, and the pass streams 4 bytes less per message).
    kernel: Vec<u32>,
    /// The position slot of the reverse message of each position slot.
    rev: Vec<u32>,
}

impl DegreeOrder {
    /// The order of `mrf`'s blocks `bounds`; each block on its own (on the rayon pool when
    /// `par`: the same order).
    fn new(mrf: &PairwiseMrf, bounds: &[usize], par: bool, with_kernel: bool) -> Self {
        let n = mrf.num_nodes();
        let slots = mrf.num_directed_edges();
        let in_off = &mrf.in_off;
        // A block's positions hold its variables, and so its slots hold the block's
        // model slots: every array below splits into the blocks' own pieces.
        let (mut var, mut off) = (vec![0u32; n], vec![0usize; n + 1]);
        // how far each variable's slots move: position slot = model slot + shift
        let mut shift = vec![0i64; n];
        let mut off_pieces = node_pieces(&mut off[1..], bounds);
        let first = |w: &[usize], var: &mut [u32], off: &mut [usize], shift: &mut [i64]| {
            let deg = |i: usize| in_off[w[0] + i + 1] - in_off[w[0] + i];
            crate::bp::by_degree(w[1] - w[0], deg, |r, i| var[r] = (w[0] + i) as u32);
            // slot offsets (the block's slots start where its model slots do)
            let mut t = in_off[w[0]];
            for (&v, o) in var.iter().zip(off.iter_mut()) {
                let v = v as usize;
                shift[v - w[0]] = t as i64 - in_off[v] as i64;
                t += in_off[v + 1] - in_off[v];
                *o = t;
            }
        };
        let var_pieces = node_pieces(&mut var, bounds);
        let shift_pieces = node_pieces(&mut shift, bounds);
        let jobs = bounds
            .windows(2)
            .zip(var_pieces)
            .zip(off_pieces.drain(..))
            .zip(shift_pieces);
        if par {
            jobs.collect::<Vec<_>>()
                .into_par_iter()
                .for_each(|(((w, a), b), c)| first(w, a, b, c));
        } else {
            jobs.for_each(|(((w, a), b), c)| first(w, a, b, c));
        }
        drop(off_pieces);
        let mut kernel = vec![0u32; if with_kernel { slots } else { 0 }];
        let mut rev = vec![0u32; slots];
        let second = |w: &[usize], ker: &mut [u32], rv: &mut [u32]| {
            let base = in_off[w[0]];
            for (p, &v) in (w[0]..w[1]).zip(&var[w[0]..w[1]]) {
                let (lo, hi) = (in_off[v as usize], in_off[v as usize + 1]);
                let t = off[p] - base;
                if with_kernel {
                    ker[t..t + hi - lo].copy_from_slice(&mrf.in_kernel[lo..hi]);
                }
                // the reverse of a message from `u` is a slot of `u`'s, moved by `u`'s shift
                let back = mrf.in_rev[lo..hi].iter().zip(&mrf.in_src[lo..hi]);
                for (r, (&m, &u)) in rv[t..t + hi - lo].iter_mut().zip(back) {
                    *r = (i64::from(m) + shift[u as usize]) as u32;
                }
            }
        };
        let kernel_pieces = if with_kernel {
            split_by(&mut kernel, bounds, in_off)
        } else {
            bounds.windows(2).map(|_| &mut [][..]).collect()
        };
        let jobs = bounds
            .windows(2)
            .zip(kernel_pieces)
            .zip(split_by(&mut rev, bounds, in_off));
        if par {
            jobs.collect::<Vec<_>>()
                .into_par_iter()
                .for_each(|((w, a), b)| second(w, a, b));
        } else {
            jobs.for_each(|((w, a), b)| second(w, a, b));
        }
        Self {
            var,
            off,
            kernel,
            rev,
        }
    }

    /// The model slot of each position slot, in position order (`(position slot, model
    /// slot)` pairs, for the starting and the returned log-messages).
    fn slot_pairs<'a>(&'a self, mrf: &'a PairwiseMrf) -> impl Iterator<Item = (usize, usize)> + 'a {
        self.var
            .iter()
            .zip(self.off.windows(2))
            .flat_map(move |(&v, w)| {
                let lo = mrf.in_off[v as usize];
                (w[0]..w[1]).zip(lo..)
            })
    }
}

/// `x` (one entry per variable) cut into the pieces of the node blocks `bounds`.
fn node_pieces<'a, T>(x: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    let mut rest = x;
    for w in bounds.windows(2) {
        let (a, b) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
        out.push(a);
        rest = b;
    }
    out
}

/// The two-state linear kernel with ratios stored as `S` (`f64`, or `f32` for
/// [`MessagePrecision::F32`]); arithmetic is `f64`. The message arrays are laid out in
/// the positions of [`DegreeOrder`].
fn flooding_binary<S: Ratio>(
    mrf: &PairwiseMrf,
    plan: Plan,
    max_iters: usize,
    tol: f64,
    want_msgs: bool,
    init: Option<&[f64]>,
) -> LinearRun {
    let n = mrf.num_nodes();
    let eff = mrf.eff_unary();
    // the setup and the final beliefs of a large model run in parallel like the sweeps
    // (each entry on its own: the same values for any thread count; the arrays are first
    // touched there too); a small one stays on the calling thread
    let slots = mrf.num_directed_edges();
    let par = slots >= 4 * SETUP_MIN_LEN;
    let bounds = node_blocks(mrf);
    // one table for every message (e.g. a shared symmetric Ising or Potts table): the
    // kernel of a slot need not be stored
    let (kernel4, _) = mrf.kernels.exp.as_chunks::<4>();
    let one_kernel = kernel4.split_first().is_some_and(|(k0, rest)| {
        let bits = |k: &[f64; 4]| k.map(f64::to_bits);
        rest.iter().all(|k| bits(k) == bits(k0))
    });
    let ord = DegreeOrder::new(mrf, &bounds, par, !one_kernel);
    // Kind of each position's variable, and its unary: the linear ratio u(1) / u(0) of a
    // `Linear` variable, the log-ratio θ(1) − θ(0) of a `Log` one (0 for a clamped one).
    let kind: Vec<Kind> = collect_maybe_par(n, par, |p| plan.kind[ord.var[p] as usize]);
    let uratio: Vec<f64> = collect_maybe_par(n, par, |p| {
        let v = ord.var[p] as usize;
        match plan.kind[v] {
            Kind::Linear => (eff[2 * v + 1] - eff[2 * v]).exp(),
            Kind::Log => eff[2 * v + 1] - eff[2 * v],
            Kind::Clamped(_) => 0.0,
        }
    });
    drop(plan);
    let ones = |len: usize| -> Vec<S::Atom> { collect_maybe_par(len, par, |_| S::atom(1.0)) };
    let (mut inc_old, mut outg): (Vec<S::Atom>, Vec<S>) = match init {
        None => (ones(slots), collect_maybe_par(slots, par, |_| S::of(1.0))),
        Some(m) => {
            // Ratio m(1) / m(0) of each log-message pair (model slots).
            let r: Vec<f64> = m.chunks_exact(2).map(|p| (p[1] - p[0]).exp()).collect();
            let (mut inc, mut out) = (Vec::with_capacity(slots), Vec::with_capacity(slots));
            // Source-grouped: the message sent back along slot `s` is `r[in_rev[s]]`.
            for (_, s) in ord.slot_pairs(mrf) {
                inc.push(S::atom(r[s]));
                out.push(S::of(r[mrf.in_rev[s] as usize]));
            }
            (inc, out)
        }
    };
    let mut inc_new: Vec<S::Atom> = ones(slots);
    // Source-grouped: the message sent back along position slot `t` is `outg[t]`.
    let mut convergence = Convergence::start(mrf.num_edges() == 0);
    while !convergence.converged && convergence.iterations < max_iters {
        let chunks = split_by(&mut outg, &bounds, &ord.off);
        let jobs: Vec<_> = bounds.windows(2).map(|w| w[0]..w[1]).zip(chunks).collect();
        let (old, new) = (&inc_old, &inc_new);
        let block = crate::kernel::BinaryBlock {
            in_off: &ord.off,
            kind: &kind,
            unary_ratio: &uratio,
            unary_log: &[],
            in_kernel: &ord.kernel,
            kernel_off: &mrf.kernels.off,
            kernel_exp: &mrf.kernels.exp,
        };
        let residual = jobs
            .into_par_iter()
            .map_init(Vec::new, |logs, (range, out_chunk)| {
                crate::vmath::arch().dispatch(BinaryPassCall::<S> {
                    block: &block,
                    one_kernel,
                    kernel: &ord.kernel,
                    rev: &ord.rev,
                    range,
                    old,
                    new,
                    out_chunk,
                    logs,
                })
            })
            .reduce(|| 0.0, f64::max);
        std::mem::swap(&mut inc_old, &mut inc_new);
        convergence.record(residual, tol);
    }
    // the final ratios are read from `inc_old` where they lie (no `f64` copy of them),
    // the other two message arrays freed first: the run's peak memory is the model's,
    // the order's and the three arrays', not more
    drop((inc_new, outg));
    let mut bel = mrf.eff_unary().to_vec();
    let chunks = split_by(&mut bel, &bounds, &mrf.state_off);
    // a block's positions hold the block's variables, so each writes its own chunk
    let beliefs = |r: &mut Vec<f64>, (chunk, w): (&mut [f64], &[usize])| {
        for p in w[0]..w[1] {
            let v = ord.var[p] as usize;
            r.clear();
            r.extend(inc_old[ord.off[p]..ord.off[p + 1]].iter().map(S::load));
            let b = &mut chunk[2 * (v - w[0])..2 * (v - w[0]) + 2];
            let [x0, x1] = crate::kernel::binary_belief(kind[p], [b[0], b[1]], r);
            b[0] = x0;
            b[1] = x1;
        }
    };
    if par {
        let work = chunks.into_par_iter().zip(bounds.par_windows(2));
        work.for_each_init(Vec::new, beliefs);
    } else {
        let mut r = Vec::new();
        for part in chunks.into_iter().zip(bounds.windows(2)) {
            beliefs(&mut r, part);
        }
    }
    let msgs = if want_msgs {
        let mut m = vec![0.0; 2 * slots];
        for (t, s) in ord.slot_pairs(mrf) {
            let (l0, l1) = log_pair(S::load(&inc_old[t]));
            m[2 * s] = l0;
            m[2 * s + 1] = l1;
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

/// The arguments of one [`push_binary`] call, run through [`pulp`]'s dispatch like
/// [`UniformPass`]: the two-state pass compiled for AVX2 where there is one (VEX
/// encodings; the same operations, so the same bits). On the 10^6-node model, 100 f32
/// sweeps on one thread: 2.16-2.27 → 1.84-1.98 s (4 alternating pairs), f64 2.51-2.54
/// → 2.25-2.32 s, two threads 1.27-1.31 → 1.09-1.13 s.
struct BinaryPassCall<'a, 'b, S: Ratio> {
    block: &'a crate::kernel::BinaryBlock<'b>,
    one_kernel: bool,
    kernel: &'a [u32],
    rev: &'a [u32],
    range: Range<usize>,
    old: &'a [S::Atom],
    new: &'a [S::Atom],
    out_chunk: &'a mut [S],
    logs: &'a mut Vec<f64>,
}

impl<S: Ratio> pulp::WithSimd for BinaryPassCall<'_, '_, S> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<D: pulp::Simd>(self, _simd: D) -> f64 {
        let BinaryPassCall {
            block,
            one_kernel,
            kernel,
            rev,
            range,
            old,
            new,
            out_chunk,
            logs,
        } = self;
        if one_kernel {
            push_binary::<S>(block, |_| 0, rev, range, old, new, out_chunk, logs)
        } else {
            let back = |s: usize| (kernel[s] ^ 1) as usize;
            push_binary::<S>(block, back, rev, range, old, new, out_chunk, logs)
        }
    }
}

/// Entries per parallel piece of the two-state run's setup (its arrays of ratios).
const SETUP_MIN_LEN: usize = 1 << 14;

/// `(0..len).map(f)` collected, on the rayon pool in pieces of at least
/// [`SETUP_MIN_LEN`] when `par` (the same values either way).
fn collect_maybe_par<T: Send>(
    len: usize,
    par: bool,
    f: impl Fn(usize) -> T + Sync + Send,
) -> Vec<T> {
    if par {
        (0..len)
            .into_par_iter()
            .with_min_len(SETUP_MIN_LEN)
            .map(f)
            .collect()
    } else {
        (0..len).map(f).collect()
    }
}

/// How many variables ahead the two-state pass requests the cache lines of its
/// scattered message stores.
const PREFETCH_NODES: usize = 16;

/// One flooding pass over the positions `range` of [`DegreeOrder`] (`block` in its
/// order, its `unary_ratio` holding a `Log` position's log-ratio `θ(1) − θ(0)` and its
/// `unary_log` unused; `rev` the order's reverse slots), two states, one ratio per message (stored as `S`;
/// each new ratio is rounded to `S` before the residual sees it, so the residual is the
/// change of the stored messages). The pass is [`crate::kernel::binary_pass`]'s.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn push_binary<S: Ratio>(
    block: &crate::kernel::BinaryBlock<'_>,
    back_kernel: impl Fn(usize) -> usize,
    rev: &[u32],
    range: Range<usize>,
    old: &[S::Atom],
    new: &[S::Atom],
    out_chunk: &mut [S],
    logs: &mut Vec<f64>,
) -> f64 {
    let in_off = block.in_off;
    let out0 = in_off[range.start];
    let load = |i: usize| S::load(&old[i]);
    // a `Log` position's unary log-ratio sits in `unary_ratio` (see `flooding_binary`)
    let log_unary = |p: usize| block.unary_ratio[p];
    let swap_prev =
        |s: usize, rn: f64| std::mem::replace(&mut out_chunk[s - out0], S::of(rn)).get();
    let deliver = |s: usize, rn: f64| S::store(&new[rev[s] as usize], rn);
    // the scattered stores' cache lines requested PREFETCH_NODES positions ahead
    let n = in_off.len() - 1;
    let ahead = |i: usize| {
        let j = i + PREFETCH_NODES;
        if j < n {
            for s in in_off[j]..in_off[j + 1] {
                crate::prefetch(&new[rev[s] as usize]);
            }
        }
    };
    if S::SHORT {
        crate::kernel::binary_pass_with::<true>(
            block,
            range,
            back_kernel,
            log_unary,
            load,
            S::round,
            swap_prev,
            deliver,
            ahead,
            logs,
        )
    } else {
        crate::kernel::binary_pass_with::<false>(
            block,
            range,
            back_kernel,
            log_unary,
            load,
            S::round,
            swap_prev,
            deliver,
            ahead,
            logs,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrf::{MrfParts, PairTable};

    /// A two-state model large enough for the parallel setup and final beliefs (at
    /// least `4 · SETUP_MIN_LEN` slots, evidence and random tables): the same bits on a
    /// pool of one thread and of two, and at convergence the same marginals as the
    /// sequential schedule (a different path, the same fixed point) to 1e-9.
    #[test]
    fn large_two_state_run_is_the_same_on_any_pool() {
        use crate::bp::{LoopyBp, Schedule};
        let mrf = crate::test_models::binary_ring_model(30_000, false, true, (0.0, 1.0), 5);
        assert!(mrf.num_directed_edges() >= 4 * SETUP_MIN_LEN);
        let run = |threads: usize, schedule: Schedule| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                LoopyBp {
                    max_iters: 500,
                    tol: 1e-13,
                    schedule,
                    ..LoopyBp::default()
                }
                .run(&mrf)
            })
        };
        let bits = |m: &crate::Marginals| -> Vec<u64> {
            (0..mrf.num_nodes())
                .flat_map(|v| m.node(v).iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                .collect()
        };
        let (one, two) = (run(1, Schedule::Flooding), run(2, Schedule::Flooding));
        assert!(one.convergence().converged, "{:?}", one.convergence());
        assert_eq!(bits(&one), bits(&two));
        let seq = run(1, Schedule::Sequential);
        assert!(seq.convergence().converged, "{:?}", seq.convergence());
        for v in 0..mrf.num_nodes() {
            for (a, b) in one.node(v).iter().zip(seq.node(v)) {
                assert!((a - b).abs() < 1e-9, "variable {v}: {a} against {b}");
            }
        }
    }

    /// [`DegreeOrder`] on a model of varied degrees (ring, chords, a hub past the last
    /// bucket), serial and parallel alike: each block's positions are its variables by
    /// capped degree, stably; every position slot carries its model slot's kernel; the
    /// reverse slots are an involution matching the model's. A two-state run that starts
    /// from messages (mapped into the order) and returns them (mapped back) after no
    /// sweep returns what it was given, to rounding of `exp` / `ln`.
    #[test]
    fn degree_order_is_a_blockwise_permutation_by_degree() {
        use rand::RngExt;
        let n = 30_000u32;
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let mut edges: Vec<(u32, u32)> = (0..n).map(|v| (v, (v + 1) % n)).collect();
        edges.extend((0..n / 2).map(|_| (rng.random_range(0..n), rng.random_range(0..n))));
        edges.retain(|&(a, b)| a != b);
        edges.extend((1..200u32).map(|v| (0, v * 7)));
        let tables: Vec<PairTable> = (0..5)
            .map(|_| PairTable::from_fn(2, 2, |_, _| rng.random_range(-1.0..1.0)))
            .collect();
        let mrf = PairwiseMrf::new(MrfParts {
            num_states: vec![2; n as usize],
            unary: (0..2 * n).map(|_| rng.random_range(-1.0..1.0)).collect(),
            edge_tables: (0..edges.len() as u32).map(|e| e % 5).collect(),
            edges,
            tables,
            evidence: Vec::new(),
        })
        .unwrap();
        let bounds = node_blocks(&mrf);
        let cap = crate::bp::DEGREE_BUCKETS - 1;
        let deg = |v: usize| (mrf.in_off[v + 1] - mrf.in_off[v]).min(cap);
        let serial = DegreeOrder::new(&mrf, &bounds, false, true);
        let par = DegreeOrder::new(&mrf, &bounds, true, true);
        assert_eq!(
            (&serial.var, &serial.off, &serial.kernel, &serial.rev),
            (&par.var, &par.off, &par.kernel, &par.rev)
        );
        let bare = DegreeOrder::new(&mrf, &bounds, true, false);
        assert!(bare.kernel.is_empty());
        assert_eq!(
            (&serial.var, &serial.off, &serial.rev),
            (&bare.var, &bare.off, &bare.rev)
        );
        let ord = serial;
        assert!(ord.var.iter().enumerate().any(|(p, &v)| v as usize != p));
        for w in bounds.windows(2) {
            let mut want: Vec<u32> = (w[0] as u32..w[1] as u32).collect();
            want.sort_by_key(|&v| deg(v as usize));
            assert_eq!(&ord.var[w[0]..w[1]], &want[..]);
        }
        let pairs: Vec<(usize, usize)> = ord.slot_pairs(&mrf).collect();
        assert_eq!(pairs.len(), mrf.num_directed_edges());
        let mut pslot = vec![usize::MAX; pairs.len()];
        for &(t, s) in &pairs {
            assert_eq!(ord.kernel[t], mrf.in_kernel[s]);
            pslot[s] = t;
        }
        for &(t, s) in &pairs {
            assert_eq!(ord.rev[t] as usize, pslot[mrf.in_rev[s] as usize]);
            assert_eq!(ord.rev[ord.rev[t] as usize] as usize, t);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let init: Vec<f64> = (0..mrf.num_directed_edges())
            .flat_map(|_| {
                let x: f64 = rng.random_range(-3.0..3.0);
                if x < 0.0 { [0.0, x] } else { [-x, 0.0] }
            })
            .collect();
        let run = flooding(&mrf, 0, 0.0, true, Some(&init), MessagePrecision::F64).unwrap();
        for (a, b) in run.msgs.iter().zip(&init) {
            assert!((a - b).abs() < 1e-14, "{a} against {b}");
        }
    }

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
    /// every `K` it serves, with one thread and with four. (Random tables are never Potts,
    /// so the Potts form does not run here; with Potts tables the kernel equals the
    /// general one with the Potts form off, see `potts_and_matrix_kernels_mix`.)
    /// `ratio_inside` never holds for a quotient outside the bounds: random old entries
    /// over the whole range (subnormals, zero, tiny and large ones) and new entries a
    /// few ulps around `hi · p` and `lo · p`, for bounds from 1 to `∞` (`hi`) and from
    /// 1 to 0 (`lo`); and it does hold for quotients well inside, so the division is in
    /// fact skipped.
    #[test]
    fn ratio_inside_never_skips_a_new_bound() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(33);
        let his = [1.0, 1.0 + f64::EPSILON, 1.5, 3.7e5, 1e300, f64::INFINITY];
        let los = [1.0, 1.0 - f64::EPSILON / 2.0, 0.25, 1e-7, 1e-300, 0.0];
        let near = |x: f64, rng: &mut rand_chacha::ChaCha8Rng| {
            let ulps: i64 = rng.random_range(-3..=3);
            if x.is_finite() && x > 0.0 {
                f64::from_bits((x.to_bits() as i64 + ulps).max(0) as u64)
            } else {
                x
            }
        };
        let (mut held, mut inside_well, mut well) = (0usize, 0usize, 0usize);
        for &hi in &his {
            for &lo in &los {
                for _ in 0..20_000 {
                    let p = match rng.random_range(0..6) {
                        0 => 0.0,
                        1 => f64::from_bits(rng.random_range(1..1u64 << 52)), // subnormal
                        2 => 2f64.powf(rng.random_range(-1074.0..-1000.0)),
                        _ => 2f64.powf(rng.random_range(-60.0..0.0)),
                    };
                    let o = match rng.random_range(0..4) {
                        0 => near(hi * p, &mut rng),
                        1 => near(lo * p, &mut rng),
                        2 => p * rng.random_range(0.0..2.0),
                        _ => near(p, &mut rng),
                    };
                    if ratio_inside(o, p, hi, lo) {
                        let r = o / p;
                        assert!(
                            r <= hi && r >= lo,
                            "o = {o:e}, p = {p:e}, r = {r:e} outside [{lo:e}, {hi:e}]"
                        );
                        held += 1;
                    }
                }
                // quotients well inside: the test holds
                if hi > 1.5 && lo < 0.5 {
                    well += 1000;
                    for _ in 0..1000 {
                        let p = 2f64.powf(rng.random_range(-60.0..0.0));
                        inside_well += usize::from(ratio_inside(p, p, hi, lo));
                    }
                }
            }
        }
        assert!(held > 100_000, "the test held {held} times");
        assert_eq!(well, 3 * 4 * 1000);
        assert_eq!(inside_well, well, "the test holds well inside the bounds");
    }

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

    // -----------------------------------------------------------------------------------
    // The O(K) Potts form of `push_uniform`.

    use rand::{RngExt as _, SeedableRng as _};
    use rand_chacha::ChaCha8Rng;

    /// A Potts table `k × k` with coupling `β = same − different` of magnitude in
    /// `strength`, attractive or repulsive at random, `different` in `[-1, 1]`.
    fn random_potts(rng: &mut ChaCha8Rng, k: usize, strength: Range<f64>) -> PairTable {
        let beta = rng.random_range(strength);
        let beta = if rng.random_bool(0.5) { beta } else { -beta };
        let different = rng.random_range(-1.0..1.0);
        PairTable::potts(k, different + beta, different)
    }

    /// A random model with `k` states everywhere over `n` nodes: node 0 a hub joined to
    /// nodes `1..=hub` through table 0, a random tree plus `n / 3` chords drawing their
    /// tables from `1..draw` (table 0 if `draw ≤ 1`; tables from `draw` on stay unused),
    /// random unary terms in `[-2, 2]`, every 37th node observed.
    fn random_model(
        rng: &mut ChaCha8Rng,
        k: usize,
        n: usize,
        hub: u32,
        tables: Vec<PairTable>,
        draw: usize,
    ) -> PairwiseMrf {
        assert!((hub as usize) < n && draw <= tables.len());
        let pick = |rng: &mut ChaCha8Rng| {
            if draw > 1 {
                rng.random_range(1..draw as u32)
            } else {
                0
            }
        };
        // (a, b, table); the hub's edges first so that they win the dedup.
        let mut edges: Vec<(u32, u32, u32)> = (1..=hub).map(|v| (0, v, 0)).collect();
        for v in 1..n as u32 {
            let t = pick(rng);
            edges.push((rng.random_range(0..v), v, t));
        }
        for _ in 0..n / 3 {
            let (a, b) = (rng.random_range(0..n as u32), rng.random_range(0..n as u32));
            let t = pick(rng);
            edges.push((a.min(b), a.max(b), t));
        }
        edges.retain(|&(a, b, _)| a != b);
        edges.sort_by_key(|&(a, b, _)| (a, b));
        edges.dedup_by_key(|&mut (a, b, _)| (a, b));
        PairwiseMrf::new(MrfParts {
            num_states: vec![k; n],
            unary: (0..n * k).map(|_| rng.random_range(-2.0..2.0)).collect(),
            edges: edges.iter().map(|&(a, b, _)| (a, b)).collect(),
            edge_tables: edges.iter().map(|&(_, _, t)| t).collect(),
            tables,
            evidence: (0..n)
                .map(|v| (v % 37 == 5).then_some((v % k) as u32))
                .collect(),
        })
        .unwrap()
    }

    /// A linear flooding run with messages, the Potts form on or off.
    fn run(
        mrf: &PairwiseMrf,
        potts: bool,
        iters: usize,
        tol: f64,
        init: Option<&[f64]>,
    ) -> LinearRun {
        flooding_with(mrf, iters, tol, true, init, MessagePrecision::F64, potts).unwrap()
    }

    fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(f)
    }

    /// Every bit of a run: log-messages, log-beliefs, residual, iterations, convergence.
    fn run_bits(r: &LinearRun) -> Vec<u64> {
        let mut v: Vec<u64> = r.msgs.iter().chain(&r.bel).map(|x| x.to_bits()).collect();
        v.push(r.convergence.max_residual.to_bits());
        v.push(r.convergence.iterations as u64);
        v.push(u64::from(r.convergence.converged));
        v
    }

    /// How far two runs of one model are apart: `(max |Δp|` over the node marginals,
    /// `max |Δ ln m|` over the messages (their relative difference), `|Δ residual|)`.
    fn run_diff(a: &LinearRun, b: &LinearRun, k: usize) -> (f64, f64, f64) {
        let marginals = |r: &LinearRun| -> Vec<f64> {
            r.bel
                .chunks_exact(k)
                .flat_map(|row| {
                    let mut x = row.to_vec();
                    crate::marginals::normalize_log(&mut x);
                    x.into_iter().map(f64::exp)
                })
                .collect()
        };
        let dp = marginals(a)
            .iter()
            .zip(&marginals(b))
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert_eq!(a.msgs.len(), b.msgs.len());
        let dm = a
            .msgs
            .iter()
            .zip(&b.msgs)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        let dr = (a.convergence.max_residual - b.convergence.max_residual).abs();
        (dp, dm, dr)
    }

    /// The Potts form against the matrix form on random Potts models (`K = 3..8`, 260 to
    /// 2500 nodes, evidence, a hub of degree 250 past the budget, so a [`Kind::Log`]
    /// variable, two to five Potts tables, attractive and repulsive, couplings from 0.1 to
    /// 2 nats, the hub's from 2.5 to 3.5): after up to 200 sweeps (tolerance `1e-10`) the
    /// node marginals agree to `1e-12` (absolute), the messages to `1e-12` relative
    /// (`|Δ ln m|`), the residuals to `1e-12` (absolute), and the iteration counts and
    /// convergence flags are equal; the Potts run is the same bit for bit with 1 and 2
    /// threads (the larger models have several parallel blocks).
    ///
    /// About half the runs converge; the others oscillate at the hub (residual near its
    /// coupling) and still agree (largest differences seen: `7e-15` in the marginals,
    /// `4e-14` in the messages). Stronger couplings (6 nats, a hub at 5) make some runs
    /// chaotic, where any rounding difference grows — one ulp in one starting message of
    /// the matrix form alone moved the marginals by `4e-13` in 30 sweeps — so the forms
    /// are compared at such couplings message by message instead
    /// (`potts_messages_match_the_product_to_a_few_ulps`).
    mod potts_proptest {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig {
                cases: 48,
                rng_seed: proptest::test_runner::RngSeed::Fixed(20_260_417),
                ..ProptestConfig::default()
            })]

            #[test]
            fn potts_form_matches_the_matrix_form(seed in any::<u64>(), k in 3usize..=8,
                                                  n in 260usize..2500, extra in 1usize..5) {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut tables = vec![random_potts(&mut rng, k, 2.5..3.5)];
                tables.extend((0..extra).map(|_| random_potts(&mut rng, k, 0.1..2.0)));
                let draw = tables.len();
                let mrf = random_model(&mut rng, k, n, 250, tables, draw);
                prop_assert_eq!(plan(&mrf, false).kind[0], Kind::Log);
                let forms = potts_forms(&mrf, k);
                prop_assert!(forms.iter().all(|&f| f != PottsForm::Matrix));
                let fast = run(&mrf, true, 200, 1e-10, None);
                let slow = run(&mrf, false, 200, 1e-10, None);
                let (dp, dm, dr) = run_diff(&fast, &slow, k);
                prop_assert!(dp <= 1e-12 && dm <= 1e-12 && dr <= 1e-12, "{dp:e} {dm:e} {dr:e}");
                prop_assert_eq!(fast.convergence.iterations, slow.convergence.iterations);
                prop_assert_eq!(fast.convergence.converged, slow.convergence.converged);
                let bits = |threads| {
                    in_pool(threads, || run_bits(&run(&mrf, true, 200, 1e-10, None)))
                };
                prop_assert_eq!(bits(1), bits(2));
            }
        }
    }

    /// The `O(K)` forms against the product, message by message, on kernels from a
    /// constant table to a 250-nat coupling, attractive and repulsive, and cavities from
    /// uniform to one entry dominating by `e^150` or more (within the linear budget: every
    /// product above `e^-550`), some with a zero entry: every entry agrees to
    /// `(2K + 2) · 2^-53` relative (the two first-order bounds, `K + 1` and `K` units, plus
    /// one). Returns the largest relative difference.
    fn forms_match_the_product<const K: usize>(rng: &mut ChaCha8Rng) -> f64 {
        let mut worst: f64 = 0.0;
        for beta in [
            0.0, 0.3, 2.0, 10.0, 40.0, 250.0, -0.3, -2.0, -10.0, -40.0, -250.0,
        ] {
            let different = rng.random_range(-1.0..1.0);
            let mut kt = crate::kernel::KernelTables::new();
            kt.push_table(&PairTable::potts(K, different + beta, different), 0.0);
            let form = potts_form(&kt.exp[..K * K], K);
            match form {
                PottsForm::Attractive { .. } => assert!(beta >= 0.0),
                PottsForm::Repulsive { .. } => assert!(beta < 0.0),
                PottsForm::Matrix => panic!("potts table not detected"),
            }
            for trial in 0..200 {
                let mut u = [0.0f64; K];
                let spread: f64 = [0.0, 1.0, 30.0, 300.0][trial % 4];
                // One entry dominating by at least e^(spread / 2) every third trial (the
                // worst case of a cancelling form).
                let low = if trial % 3 == 0 { spread / 2.0 } else { 0.0 };
                for w in &mut u {
                    *w = (-rng.random_range(low..=spread)).exp();
                }
                if trial % 3 == 0 {
                    u[rng.random_range(0..K)] = 1.0;
                }
                if trial % 5 == 0 {
                    u[rng.random_range(0..K)] = 0.0; // an observed cavity's zero
                }
                let fast = uniform_message::<K>(form, &kt.off, &kt.exp, 0, &u);
                let slow = uniform_message::<K>(PottsForm::Matrix, &kt.off, &kt.exp, 0, &u);
                for (&f, &m) in fast.iter().zip(&slow) {
                    assert!(m > 0.0 || u.iter().all(|&w| w == 0.0));
                    let rel = (f - m).abs() / m;
                    assert!(
                        rel <= (2 * K + 2) as f64 * 2f64.powi(-53),
                        "K {K} β {beta}: {f:e} vs {m:e} (u = {u:?})"
                    );
                    worst = worst.max(rel);
                }
            }
        }
        worst
    }

    #[test]
    fn potts_messages_match_the_product_to_a_few_ulps() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let worst = [
            forms_match_the_product::<3>(&mut rng),
            forms_match_the_product::<4>(&mut rng),
            forms_match_the_product::<5>(&mut rng),
            forms_match_the_product::<6>(&mut rng),
            forms_match_the_product::<7>(&mut rng),
            forms_match_the_product::<8>(&mut rng),
        ];
        let units = worst.map(|w| w / 2f64.powi(-53));
        eprintln!("largest relative difference per K = 3..8, in units of 2^-53: {units:?}");
    }

    /// A model mixing Potts kernels (attractive, repulsive, constant) with non-Potts ones
    /// (random, and Potts but for one entry), `K = 3..8`, 3000 nodes (several parallel
    /// blocks), a log hub of degree 1000 at 0.7 nats (every run converges): only the Potts
    /// kernels are detected, in both orientations; the Potts-on run agrees with the matrix form to `1e-12` (marginals and
    /// residual absolute, messages relative), cold and warm started, with the same
    /// iterations, and does take the Potts form (some bit differs); the matrix form is
    /// [`push_general`]'s bit for bit; the Potts-on run is bit for bit the same with 1 and
    /// 2 threads.
    #[test]
    fn potts_and_matrix_kernels_mix() {
        const HUB: u32 = 1000;
        const HUB_BETA: f64 = 0.7;
        let mut rng = ChaCha8Rng::seed_from_u64(2006);
        for k in 3..=8usize {
            let mut nearly = PairTable::potts(k, 1.1, 0.2);
            nearly.log_values[k * k - 2] += 1e-9;
            let tables = vec![
                PairTable::potts(k, HUB_BETA, 0.0),
                PairTable::potts(k, 1.2, -0.3),
                PairTable::potts(k, -0.5, 1.0),
                PairTable::potts(k, -3.0, 0.0),
                PairTable::new(
                    k,
                    k,
                    (0..k * k).map(|_| rng.random_range(-1.0..1.0)).collect(),
                ),
                nearly,
                PairTable::potts(k, 0.4, 0.4),
            ];
            let draw = tables.len();
            let mrf = random_model(&mut rng, k, 3000, HUB, tables, draw);
            assert_eq!(plan(&mrf, false).kind[0], Kind::Log);
            assert!(node_blocks(&mrf).len() > 2, "several blocks");
            let forms = potts_forms(&mrf, k);
            let class: Vec<u8> = forms
                .iter()
                .map(|f| match f {
                    PottsForm::Matrix => 0,
                    PottsForm::Attractive { .. } => 1,
                    PottsForm::Repulsive { .. } => 2,
                })
                .collect();
            assert_eq!(class, [1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1], "k = {k}");
            assert_eq!(forms[12], PottsForm::Attractive { c: 1.0, gap: 0.0 });
            let cold = |potts| run(&mrf, potts, 100, 1e-10, None);
            let (fast, slow) = (cold(true), cold(false));
            let general = flooding_general(&mrf, plan(&mrf, false), 100, 1e-10, true, None);
            assert_eq!(run_bits(&slow), run_bits(&general), "k = {k}");
            assert_ne!(
                run_bits(&fast),
                run_bits(&slow),
                "k = {k}: the Potts form ran"
            );
            let (dp, dm, dr) = run_diff(&fast, &slow, k);
            assert!(
                dp <= 1e-12 && dm <= 1e-12 && dr <= 1e-12,
                "k = {k}: {dp:e} {dm:e} {dr:e}"
            );
            assert_eq!(fast.convergence.iterations, slow.convergence.iterations);
            assert_eq!(fast.convergence.converged, slow.convergence.converged);
            // Warm: from the cold run's messages after 10 sweeps.
            let start = run(&mrf, true, 10, 0.0, None).msgs;
            let warm = |potts| run(&mrf, potts, 100, 1e-10, Some(&start));
            let (dp2, dm2, dr2) = run_diff(&warm(true), &warm(false), k);
            assert!(
                dp2 <= 1e-12 && dm2 <= 1e-12 && dr2 <= 1e-12,
                "k = {k} warm: {dp2:e} {dm2:e} {dr2:e}"
            );
            let bits = |threads, init: Option<&[f64]>| {
                in_pool(threads, || run_bits(&run(&mrf, true, 100, 1e-10, init)))
            };
            assert_eq!(bits(1, None), bits(2, None), "k = {k}");
            assert_eq!(bits(1, Some(&start)), bits(2, Some(&start)), "k = {k} warm");
            eprintln!(
                "k = {k}: {:?}, Potts vs matrix |Δp| {dp:.1e} |Δ ln m| {dm:.1e} |Δr| {dr:.1e}; \
                 warm {dp2:.1e} {dm2:.1e} {dr2:.1e}",
                fast.convergence
            );
        }
    }

    /// The detection is exact: a Potts exp table with any one entry one ulp up or down is
    /// not Potts, nor a shifted (permuted) Potts pattern, a table of the wrong size, or a
    /// `1 × 1` one; in a model, a table Potts but for one log-entry (`+1e-9`) and a `2 × 8`
    /// table whose 16 entries read as `4 × 4` would be Potts give matrix kernels, and the
    /// Potts-on run is then the matrix run bit for bit.
    #[test]
    fn potts_detection_is_exact() {
        for k in 2..=8usize {
            let mut kt = crate::kernel::KernelTables::new();
            kt.push_table(&PairTable::potts(k, 0.7, -0.4), 0.0);
            let t = kt.exp[..k * k].to_vec();
            let (d, c) = (t[0], t[1]);
            assert_eq!(potts_form(&t, k), PottsForm::Attractive { c, gap: d - c });
            assert_eq!(d, 1.0);
            for i in 0..k * k {
                for step in [1i64, -1] {
                    let mut u = t.clone();
                    u[i] = f64::from_bits((u[i].to_bits() as i64 + step) as u64);
                    assert_eq!(
                        potts_form(&u, k),
                        PottsForm::Matrix,
                        "k {k} entry {i} {step:+}"
                    );
                }
            }
            let shifted: Vec<f64> = (0..k * k)
                .map(|i| if (i / k + 1) % k == i % k { d } else { c })
                .collect();
            // (with two states the shifted pattern is the repulsive Potts table)
            if k > 2 {
                assert_eq!(potts_form(&shifted, k), PottsForm::Matrix);
            }
            assert_eq!(potts_form(&t[..k * k - 1], k), PottsForm::Matrix);
            assert_eq!(potts_form(&t, k + 1), PottsForm::Matrix);
            let r = [0.25, 1.0, 1.0, 0.25];
            assert_eq!(potts_form(&r, 2), PottsForm::Repulsive { c: 1.0, d: 0.25 });
        }
        assert_eq!(potts_form(&[1.0], 1), PottsForm::Matrix);

        let k = 4;
        let mut nearly = PairTable::potts(k, 1.3, 0.2);
        nearly.log_values[6] += 1e-9;
        let mut nearly_diagonal = PairTable::potts(k, -0.8, 0.5);
        nearly_diagonal.log_values[10] -= 1e-9;
        let wide = PairTable::from_fn(2, 8, |a, b| if (a * 8 + b) % 5 == 0 { 1.0 } else { 0.0 });
        let mut kt = crate::kernel::KernelTables::new();
        kt.push_table(&wide, 0.0);
        assert_ne!(
            potts_form(&kt.exp[..16], 4),
            PottsForm::Matrix,
            "reads as 4 × 4 Potts"
        );
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let tables = vec![nearly, nearly_diagonal, wide];
        let mrf = random_model(&mut rng, k, 400, 250, tables, 2);
        assert_eq!(potts_forms(&mrf, k), vec![PottsForm::Matrix; 6]);
        let (a, b) = (
            run(&mrf, true, 50, 1e-10, None),
            run(&mrf, false, 50, 1e-10, None),
        );
        assert_eq!(run_bits(&a), run_bits(&b));
    }
}
