//! # Message kernels over a block of variables (public API for other engines)
//!
//! The inner loops of srl-infer's flooding loopy BP and of its Gibbs sampler, over a
//! *block* of variables described by flat arrays (their local log-potential tables, slot
//! ranges and incoming messages) instead of a whole [`PairwiseMrf`](crate::PairwiseMrf), so
//! that another engine — srl-dist's timely workers, each holding a part of a model — runs
//! the very code srl-infer runs and gets its numbers to rounding (in practice bit for bit).
//! srl-infer's own flooding passes are thin wrappers over these functions.
//!
//! # Layout (shared by every function here)
//! A block has `n` variables (indices `0..n`, local to the block) and `S` incoming *slots*
//! (one per directed message into a block variable):
//! - the messages into variable `i` are slots `in_off[i]..in_off[i + 1]` (`in_off`:
//!   length `n + 1`, ascending, `in_off[0]` need not be 0);
//! - each slot `s` has a kernel index `in_kernel[s]`: the message *into* the slot's
//!   variable from its neighbour uses kernel `in_kernel[s]`, the message the variable
//!   sends *back* along the slot uses kernel `in_kernel[s] ^ 1` (kernels come in pairs,
//!   a table and its transpose, see [`KernelTables::push_table`]);
//! - kernel `q` is `log[off[q]..off[q + 1]]`, row-major `θ(x_src = a, x_tgt = b)` at
//!   `a · k_tgt + b`, with `exp[..] = exp(θ − max θ)` beside it.
//!
//! Two-state blocks carry one message ratio `r = m(1) / m(0)` per slot (the linear
//! domain of [`crate::linear`]); other blocks carry `k_i` log-message entries per slot,
//! normalised to `max = 0` ([`LogBlock`]).
//!
//! # Example
//! Two variables and one edge, as a block whose two slots deliver to each other; two
//! passes of the two-state kernel give srl-infer's marginals (BP is exact on a tree):
//! ```
//! use srl_infer::kernel::{
//!     BinaryBlock, KernelTables, VarKind, binary_belief, binary_pass, normalize_log,
//!     plan_variable,
//! };
//! use srl_infer::{LoopyBp, MrfParts, PairTable, PairwiseMrf};
//! let potts = PairTable::potts(2, 0.7, 0.0);
//! let unary = [0.3, 0.0, 0.0, -0.2];
//! let mut kernels = KernelTables::new();
//! kernels.push_table(&potts, 0.0);
//! // Slot 0: the message into variable 0 (from 1, the edge's second endpoint: transposed
//! // table, kernel 1); slot 1: into variable 1 (kernel 0, the table as stored).
//! let in_off = [0, 1, 2];
//! let in_kernel = [1u32, 0];
//! let mut lin = [0.0; 2];
//! let kind: Vec<VarKind> = (0..2)
//!     .map(|i| {
//!         let ranges = [kernels.range(in_kernel[i] as usize)];
//!         plan_variable(&unary[2 * i..2 * i + 2], None, true, ranges, &mut lin)
//!     })
//!     .collect();
//! let ratio: Vec<f64> = (0..2).map(|i| (unary[2 * i + 1] - unary[2 * i]).exp()).collect();
//! let block = BinaryBlock {
//!     in_off: &in_off,
//!     kind: &kind,
//!     unary_ratio: &ratio,
//!     unary_log: &unary,
//!     in_kernel: &in_kernel,
//!     kernel_off: &kernels.off,
//!     kernel_exp: &kernels.exp,
//! };
//! let (mut old, mut prev, mut logs) = (vec![1.0; 2], vec![1.0; 2], Vec::new());
//! for _ in 0..2 {
//!     let mut new = vec![1.0; 2];
//!     // The message sent back along slot s arrives in the other slot.
//!     binary_pass(&block, 0..2, &old, &mut prev, |s, r| new[1 - s] = r, &mut logs);
//!     old = new;
//! }
//! let mrf = PairwiseMrf::new(MrfParts {
//!     num_states: vec![2, 2],
//!     unary: unary.to_vec(),
//!     edges: vec![(0, 1)],
//!     edge_tables: vec![0],
//!     tables: vec![potts],
//!     evidence: vec![],
//! })?;
//! let reference = LoopyBp::default().run(&mrf);
//! for v in 0..2 {
//!     let mut b = binary_belief(kind[v], [unary[2 * v], unary[2 * v + 1]], &old[v..v + 1]);
//!     normalize_log(&mut b);
//!     assert!((b[1].exp() - reference.node(v)[1]).abs() < 1e-12);
//! }
//! # Ok::<(), srl_infer::InferError>(())
//! ```
//!
//! Sources: Pearl's sum-/max-product messages in the flooding schedule (see
//! [`crate::LoopyBp`]); the linear-domain bounds of [`crate::linear`]; chromatic Gibbs
//! (Gonzalez et al. 2011) for [`gibbs_scores`] / [`sample_index`] / [`gibbs_uniform`].

use std::ops::Range;

use crate::bp::{BpMode, add_term, cavity, robust_message, split_terms_start};
use crate::linear::{LINEAR_BUDGET, residual_of};
use crate::mrf::PairTable;

/// How a variable computes its outgoing messages on the linear (ratio) path.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// Belief as a product of linear messages, cavities as quotients (no `exp`/`ln`).
    Linear,
    /// Belief as a sum of `ln` messages: the linear budget ([`LINEAR_BUDGET`]) is exceeded.
    Log,
    /// Observed (two-state path only): the cavity is a point mass on this state.
    Clamped(u32),
}

/// Pairwise kernels in both orientations, flattened: table `t` pushed `t`-th gives
/// kernel `2t` (as stored, `rows × cols`) and `2t + 1` (transposed, `cols × rows`).
///
/// This is srl-infer's own kernel construction ([`crate::PairwiseMrf::new`] builds its
/// kernels with it).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTables {
    /// Kernel `q` occupies `off[q]..off[q + 1]` of `log` and `exp` (length `kernels + 1`).
    pub off: Vec<usize>,
    /// `log[off[q] + a · k_tgt + b] = θ(x_src = a, x_tgt = b)` (log-potentials, nats).
    pub log: Vec<f64>,
    /// `exp(log − max_q log)`: entries in `(0, 1]` when `safe[q]`.
    pub exp: Vec<f64>,
    /// Whether kernel `q`'s dynamic range (`max − min` of its log-values) is below 600
    /// nats, so the exp-domain sum-product kernels are exact to rounding.
    pub safe: Vec<bool>,
}

impl Default for KernelTables {
    fn default() -> Self {
        Self::new()
    }
}

impl KernelTables {
    /// No kernels yet.
    #[must_use]
    pub fn new() -> Self {
        Self {
            off: vec![0],
            log: Vec::new(),
            exp: Vec::new(),
            safe: Vec::new(),
        }
    }

    /// Appends `table` as two kernels: as stored (`θ(x_first, x_second)`) and transposed.
    /// Every value is stored minus `shift` (0 for ordinary models; srl-infer shifts each
    /// table of an extreme model by its maximum).
    pub fn push_table(&mut self, table: &PairTable, shift: f64) {
        for transposed in [false, true] {
            let (r, c) = if transposed {
                (table.cols, table.rows)
            } else {
                (table.rows, table.cols)
            };
            let start = self.log.len();
            for a in 0..r {
                for b in 0..c {
                    let x = if transposed {
                        table.log_values[b * table.cols + a]
                    } else {
                        table.log_values[a * table.cols + b]
                    };
                    self.log.push(x - shift);
                }
            }
            let slice = &self.log[start..];
            let mx = slice.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mn = slice.iter().copied().fold(f64::INFINITY, f64::min);
            let is_safe = slice.is_empty() || mx - mn < 600.0;
            self.exp.extend(slice.iter().map(|&x| (x - mx).exp()));
            self.safe.push(is_safe);
            self.off.push(self.log.len());
        }
    }

    /// Number of kernels (twice the tables pushed).
    #[must_use]
    pub fn len(&self) -> usize {
        self.safe.len()
    }

    /// Whether no table was pushed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.safe.is_empty()
    }

    /// Whether every kernel is exp-safe.
    #[must_use]
    pub fn all_safe(&self) -> bool {
        self.safe.iter().all(|&s| s)
    }

    /// Dynamic range (nats) of kernel `q`, `max − min` of its log-values (0 if empty).
    ///
    /// # Panics
    /// If `q >= self.len()`.
    #[must_use]
    pub fn range(&self, q: usize) -> f64 {
        kernel_range(&self.log[self.off[q]..self.off[q + 1]])
    }

    /// The borrowed view the kernels read (an ordinary, non-`robust` model).
    #[must_use]
    pub fn view(&self) -> KernelView<'_> {
        KernelView {
            off: &self.off,
            log: &self.log,
            exp: &self.exp,
            safe: &self.safe,
            robust: false,
        }
    }
}

/// Borrowed [`KernelTables`], plus whether the model is *extreme* (srl-infer's `-∞`-exact
/// path; always `false` for tables built by [`KernelTables`]).
#[derive(Copy, Clone, Debug)]
pub struct KernelView<'a> {
    /// See [`KernelTables::off`].
    pub off: &'a [usize],
    /// See [`KernelTables::log`].
    pub log: &'a [f64],
    /// See [`KernelTables::exp`].
    pub exp: &'a [f64],
    /// See [`KernelTables::safe`].
    pub safe: &'a [bool],
    /// Kernels shifted to `max = 0`, possibly holding `-∞`: messages take the exact
    /// log-domain path with `-∞` handling.
    pub robust: bool,
}

/// Dynamic range `max − min` (nats) of a kernel's log-values (0 for an empty kernel).
#[must_use]
pub fn kernel_range(log: &[f64]) -> f64 {
    let mx = log.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mn = log.iter().copied().fold(f64::INFINITY, f64::min);
    if log.is_empty() { 0.0 } else { mx - mn }
}

/// The linear-path plan of one variable: its kind and its linear unary `exp(θ − max θ)`
/// (written to `unary_lin`, same length as `unary`).
///
/// # Arguments
/// - `unary`: the variable's effective unary log-potentials (evidence applied: `-∞`
///   outside the observed state).
/// - `evidence`: its observed state, if any.
/// - `binary`: whether every variable of the model has two states (then an observed
///   variable is [`VarKind::Clamped`]).
/// - `incoming_ranges`: [`kernel_range`] of the kernel of each incoming slot.
///
/// A variable is [`VarKind::Linear`] when `R_v + Σ_s R_s + max_s R_s ≤`
/// [`LINEAR_BUDGET`] (`R_v`: the span of its finite unary entries), else
/// [`VarKind::Log`] (module docs of [`crate::linear`]).
///
/// # Panics
/// If `unary_lin.len() < unary.len()`.
#[inline]
pub fn plan_variable(
    unary: &[f64],
    evidence: Option<u32>,
    binary: bool,
    incoming_ranges: impl IntoIterator<Item = f64>,
    unary_lin: &mut [f64],
) -> VarKind {
    assert!(
        unary_lin.len() >= unary.len(),
        "plan_variable: unary_lin has {} slots for {} states",
        unary_lin.len(),
        unary.len()
    );
    let (mx, _) = crate::linear::unary_span(unary);
    for (o, &x) in unary_lin.iter_mut().zip(unary) {
        *o = (x - mx).exp();
    }
    variable_kind(unary, evidence, binary, incoming_ranges)
}

/// The kind [`plan_variable`] gives a variable, without its linear unary (the two-state
/// kernels, which use the unary ratio instead).
#[inline]
pub(crate) fn variable_kind(
    unary: &[f64],
    evidence: Option<u32>,
    binary: bool,
    incoming_ranges: impl IntoIterator<Item = f64>,
) -> VarKind {
    let (mx, mn) = crate::linear::unary_span(unary);
    let (mut sum, mut top) = (mx - mn, 0.0f64);
    for r in incoming_ranges {
        sum += r;
        top = top.max(r);
    }
    match evidence {
        Some(x) if binary => VarKind::Clamped(x),
        _ if sum + top <= LINEAR_BUDGET => VarKind::Linear,
        _ => VarKind::Log,
    }
}

/// A block of two-state variables for [`binary_pass`] (layout: module docs).
#[derive(Copy, Clone, Debug)]
pub struct BinaryBlock<'a> {
    /// Slot range of each variable (length `n + 1`).
    pub in_off: &'a [usize],
    /// Kind of each variable (length `n`), from [`plan_variable`].
    pub kind: &'a [VarKind],
    /// Linear unary ratio `u(1) / u(0) = exp(θ(1) − θ(0))` of each [`VarKind::Linear`]
    /// variable (length `n`; other entries unused).
    pub unary_ratio: &'a [f64],
    /// Effective unary log-potentials, two per variable (length `2n`; read for
    /// [`VarKind::Log`] variables).
    pub unary_log: &'a [f64],
    /// Kernel of the message into each slot (length `S`; the reverse uses `^ 1`).
    pub in_kernel: &'a [u32],
    /// [`KernelTables::off`] (every kernel `2 × 2`, so kernel `q` is entries `4q..4q + 4`
    /// of `kernel_exp`; only the length is read, to check that).
    pub kernel_off: &'a [usize],
    /// [`KernelTables::exp`].
    pub kernel_exp: &'a [f64],
}

/// One flooding compute pass of two-state sum-product BP in the linear domain over the
/// block variables `range`: each variable forms its belief from its incoming ratios
/// `old[s]` (indexed by slot) and computes the ratio it sends back along each of its
/// slots `s`.
///
/// For each slot, in order: the new ratio replaces `prev[s − in_off[range.start]]` (the
/// ratio sent along `s` in the previous pass: damping-free residual), then
/// `deliver(s, ratio)` hands it to the neighbour (srl-infer writes it into the
/// neighbour's incoming slot; srl-dist into that slot or a send buffer).
///
/// Returns the residual `max |ln m_new − ln m_old|` over the block's messages (the same
/// quantity as the log path's). `logs` is scratch (any content).
///
/// Requires (not checked beyond slice bounds): `old` has every slot of the range,
/// `prev` the range's slots, every kernel is `2 × 2` and exp-safe, every variable's
/// budget fits its kind. Exact to rounding for ordinary models (module docs of
/// [`crate::linear`]).
///
/// # Panics
/// On an index out of bounds of the given slices, or when `kernel_exp` does not hold
/// exactly four entries per kernel of `kernel_off`.
#[inline]
pub fn binary_pass(
    block: &BinaryBlock<'_>,
    range: Range<usize>,
    old: &[f64],
    prev: &mut [f64],
    deliver: impl FnMut(usize, f64),
    logs: &mut Vec<f64>,
) -> f64 {
    let first = block.in_off[range.start];
    binary_pass_with::<false>(
        block,
        range,
        |s| (block.in_kernel[s] ^ 1) as usize,
        |i| block.unary_log[2 * i + 1] - block.unary_log[2 * i],
        |i| old[i],
        |x| x,
        |s, r| std::mem::replace(&mut prev[s - first], r),
        deliver,
        |_| {},
        logs,
    )
}

/// [`binary_pass`] with the storage abstracted: `back_kernel(s)` is the kernel of the
/// message sent back along slot `s` (`in_kernel[s] ^ 1` in [`binary_pass`]; the block's
/// `in_kernel` is not read otherwise), `log_unary(i)` is the unary log-ratio
/// `θ_i(1) − θ_i(0)` of a [`VarKind::Log`] variable `i` (from `unary_log` in
/// [`binary_pass`]; the block's `unary_log` is not read otherwise), `load(s)` reads the
/// incoming ratio of slot `s`, `round` rounds a new ratio to its storage precision, `swap_prev(s, r)` stores the
/// ratio sent back along `s` and returns the previous one, `ahead(i)` is called before
/// variable `i` is computed (a hook for prefetching later variables' message slots; it
/// must not change any value).
///
/// `SHORT = false` is [`binary_pass`]'s arithmetic: the belief as one running product in
/// slot order, the cavity ratio `t = b / r_s`, then `(e₁ + t·e₃) / (e₀ + t·e₂)`: two
/// quotients in a row per message. `SHORT = true` (the `f32` storage of
/// [`crate::MessagePrecision::F32`], whose rounding to `f32` dwarfs the difference) forms
/// the belief as two interleaved partial products and the message as
/// `(e₁·r_s + b·e₃) / (e₀·r_s + b·e₂)`, one quotient: the same value to a few `f64` ulps
/// (both numerator and denominator are scaled by `r_s ∈ [e^-80, e^80]`, far from
/// overflow), with half the latency per message.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn binary_pass_with<const SHORT: bool>(
    block: &BinaryBlock<'_>,
    range: Range<usize>,
    back_kernel: impl Fn(usize) -> usize,
    log_unary: impl Fn(usize) -> f64,
    load: impl Fn(usize) -> f64,
    round: impl Fn(f64) -> f64,
    mut swap_prev: impl FnMut(usize, f64) -> f64,
    mut deliver: impl FnMut(usize, f64),
    mut ahead: impl FnMut(usize),
    logs: &mut Vec<f64>,
) -> f64 {
    let BinaryBlock {
        in_off,
        kind,
        unary_ratio,
        unary_log: _,
        in_kernel: _,
        kernel_off,
        kernel_exp,
    } = *block;
    // Every kernel is 2 × 2, so kernel `q` is row `q` of the `[f64; 4]` view (one bounds
    // check per message instead of three).
    let (kernel4, rest) = kernel_exp.as_chunks::<4>();
    assert!(
        rest.is_empty() && kernel_off.len() == kernel4.len() + 1,
        "binary_pass: {} kernel entries for {} kernels (every kernel must be 2 x 2)",
        kernel_exp.len(),
        kernel_off.len().saturating_sub(1)
    );
    let (mut hi, mut lo) = (1.0f64, 1.0f64);
    // Folds the change of one message into (hi, lo): the log-message is
    // (−max(ln r, 0), min(ln r, 0)), so its largest entry change is |ln(r_new / r_old)|
    // when both ratios sit on the same side of 1, else max(|ln r_new|, |ln r_old|).
    // (Forming the quotient only when a multiplication says it can move a bound gives the
    // same bounds and 16 fewer instructions per message, but measured 20 % slower in cache
    // at 10^4 variables and within noise at 10^6: the division is not the bottleneck.)
    let mut fold = |rn: f64, ro: f64| {
        if (rn >= 1.0) == (ro >= 1.0) {
            let q = rn / ro;
            hi = hi.max(q);
            lo = lo.min(q);
        } else {
            hi = hi.max(rn).max(ro);
            lo = lo.min(rn).min(ro);
        }
    };
    for i in range {
        ahead(i);
        let (s0, s1) = (in_off[i], in_off[i + 1]);
        match kind[i] {
            VarKind::Linear if SHORT => {
                let (mut b0, mut b1) = (unary_ratio[i], 1.0f64);
                let mut p = s0;
                while p + 1 < s1 {
                    b0 *= load(p);
                    b1 *= load(p + 1);
                    p += 2;
                }
                if p < s1 {
                    b0 *= load(p);
                }
                let bel = b0 * b1;
                for s in s0..s1 {
                    let r = load(s);
                    let e = &kernel4[back_kernel(s)];
                    let rn = round((e[1] * r + bel * e[3]) / (e[0] * r + bel * e[2]));
                    fold(rn, swap_prev(s, rn));
                    deliver(s, rn);
                }
            }
            VarKind::Linear => {
                let mut bel = unary_ratio[i];
                for p in s0..s1 {
                    bel *= load(p);
                }
                for s in s0..s1 {
                    let t = bel / load(s);
                    let e = &kernel4[back_kernel(s)];
                    let rn = round((e[1] + t * e[3]) / (e[0] + t * e[2]));
                    fold(rn, swap_prev(s, rn));
                    deliver(s, rn);
                }
            }
            VarKind::Clamped(x) => {
                let x = x as usize;
                for s in s0..s1 {
                    let e = &kernel4[back_kernel(s)];
                    let rn = round(e[2 * x + 1] / e[2 * x]);
                    fold(rn, swap_prev(s, rn));
                    deliver(s, rn);
                }
            }
            VarKind::Log => {
                logs.clear();
                logs.extend((s0..s1).map(|p| load(p).ln()));
                let mut bel = log_unary(i);
                for &l in logs.iter() {
                    bel += l;
                }
                for s in s0..s1 {
                    // Log-ratio of the cavity; the larger side gets weight 1.
                    let lt = bel - logs[s - s0];
                    let e = &kernel4[back_kernel(s)];
                    let rn = if lt <= 0.0 {
                        let w = lt.exp();
                        (e[1] + w * e[3]) / (e[0] + w * e[2])
                    } else {
                        let w = (-lt).exp();
                        (e[3] + w * e[1]) / (e[2] + w * e[0])
                    };
                    let rn = round(rn);
                    fold(rn, swap_prev(s, rn));
                    deliver(s, rn);
                }
            }
        }
    }
    residual_of(hi, lo)
}

/// The log-message `(−max(ln r, 0), min(ln r, 0))` (normalised to `max = 0`) of the
/// two-state ratio `r = m(1) / m(0)`.
#[inline]
#[must_use]
pub fn log_pair(r: f64) -> (f64, f64) {
    let lr = r.ln();
    if lr >= 0.0 { (-lr, 0.0) } else { (0.0, lr) }
}

/// Unnormalised log-belief `(b(0), b(1))` of a two-state variable of kind `kind` with
/// effective unary log-potentials `unary` and final incoming ratios `ratios` (the end of
/// srl-infer's linear two-state run; normalise with [`normalize_log`]).
#[inline]
#[must_use]
pub fn binary_belief(kind: VarKind, unary: [f64; 2], ratios: &[f64]) -> [f64; 2] {
    let [mut x0, mut x1] = unary;
    if kind == VarKind::Linear {
        // Product of ratios within e^{±600}: one ln per variable.
        let p: f64 = ratios.iter().product();
        x1 += p.ln();
    } else {
        for &x in ratios {
            let (l0, l1) = log_pair(x);
            x0 += l0;
            x1 += l1;
        }
    }
    [x0, x1]
}

/// Normalises log-beliefs in place to `log_sum_exp = 0` (srl-infer's marginals); a row
/// with no finite maximum becomes uniform.
pub fn normalize_log(x: &mut [f64]) {
    crate::marginals::normalize_log(x);
}

/// The log-message through kernel `q` from the sender's cavity `cav` (length `k_src`)
/// into `out` (length `k_tgt`), normalised to `max = 0`: sum-product in the exp domain
/// when kernel `q` is safe (one `exp` and one `ln` for `2 × 2`), else log-sum-exp;
/// max-product in the log domain; `robust` kernels take the `-∞`-exact path. `u` is
/// scratch of length `≥ k_src`.
///
/// # Panics
/// If the slices are shorter than the kernel's shape needs.
#[inline(always)]
pub fn log_message(
    mode: BpMode,
    ker: &KernelView<'_>,
    q: usize,
    cav: &[f64],
    out: &mut [f64],
    u: &mut [f64],
) {
    if ker.robust {
        robust_message(mode, ker, q, cav, out);
        return;
    }
    let ki = cav.len();
    let kj = out.len();
    let off = ker.off[q];
    match mode {
        BpMode::SumProduct if ker.safe[q] => {
            if ki == 2 && kj == 2 {
                let e = &ker.exp[off..off + 4];
                let (c0, c1) = (cav[0], cav[1]);
                let (n0, n1) = if c0 >= c1 {
                    let w = (c1 - c0).exp();
                    (e[0] + w * e[2], e[1] + w * e[3])
                } else {
                    let w = (c0 - c1).exp();
                    (e[2] + w * e[0], e[3] + w * e[1])
                };
                let lr = (n1 / n0).ln();
                if lr >= 0.0 {
                    out[0] = -lr;
                    out[1] = 0.0;
                } else {
                    out[0] = 0.0;
                    out[1] = lr;
                }
                return;
            }
            let cmax = cav.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            for (w, &c) in u[..ki].iter_mut().zip(cav) {
                *w = (c - cmax).exp();
            }
            out.iter_mut().for_each(|o| *o = 0.0);
            let table = &ker.exp[off..off + ki * kj];
            for (row, &w) in table.chunks_exact(kj).zip(&u[..ki]) {
                if w == 0.0 {
                    continue;
                }
                for (o, &t) in out.iter_mut().zip(row) {
                    *o += w * t;
                }
            }
            out.iter_mut().for_each(|o| *o = o.ln());
        }
        BpMode::SumProduct => {
            let table = &ker.log[off..off + ki * kj];
            for (b, o) in out.iter_mut().enumerate() {
                let mut mx = f64::NEG_INFINITY;
                for a in 0..ki {
                    mx = mx.max(cav[a] + table[a * kj + b]);
                }
                let mut sum = 0.0;
                for a in 0..ki {
                    sum += (cav[a] + table[a * kj + b] - mx).exp();
                }
                *o = mx + sum.ln();
            }
        }
        BpMode::MaxProduct => {
            let table = &ker.log[off..off + ki * kj];
            out.iter_mut().for_each(|o| *o = f64::NEG_INFINITY);
            for (row, &c) in table.chunks_exact(kj).zip(cav) {
                for (o, &t) in out.iter_mut().zip(row) {
                    *o = o.max(c + t);
                }
            }
        }
    }
    let mx = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    out.iter_mut().for_each(|o| *o -= mx);
}

/// Damping against the previous log-message `old` (`m ← (1 − λ) m + λ m_old`, then
/// renormalised to `max = 0`; no-op for `damping = 0`), and the residual
/// `max |m − m_old|` (entries `-∞` in both count as unchanged).
#[inline]
pub fn damp(out: &mut [f64], old: &[f64], damping: f64) -> f64 {
    if damping > 0.0 {
        let mut mx = f64::NEG_INFINITY;
        for (o, &p) in out.iter_mut().zip(old) {
            *o = (1.0 - damping) * *o + damping * p;
            mx = mx.max(*o);
        }
        if mx > f64::NEG_INFINITY {
            out.iter_mut().for_each(|o| *o -= mx);
        }
    }
    let mut r: f64 = 0.0;
    for (o, &p) in out.iter().zip(old) {
        r = r.max((o - p).abs());
    }
    r
}

/// A block of variables with any state counts for [`log_pass`] (layout: module docs).
#[derive(Copy, Clone, Debug)]
pub struct LogBlock<'a> {
    /// Unary row of each variable in `unary_log` (length `n + 1`; `k_i` is the difference).
    pub state_off: &'a [usize],
    /// Effective unary log-potentials (evidence applied), concatenated.
    pub unary_log: &'a [f64],
    /// Slot range of each variable (length `n + 1`).
    pub in_off: &'a [usize],
    /// Offset of variable `i`'s first incoming message in the message array (`k_i`
    /// entries per slot, slots in order).
    pub msg_base: &'a [usize],
    /// Per slot: offset of the message sent back along it in the source-grouped outgoing
    /// array (length `S + 1`; `k` of the neighbour is the difference).
    pub out_off: &'a [usize],
    /// Kernel of the message into each slot (the reverse uses `^ 1`).
    pub in_kernel: &'a [u32],
    /// The kernels.
    pub kernels: KernelView<'a>,
    /// The common state count of every variable and neighbour, or 0 if mixed.
    pub uniform_k: usize,
    /// Every kernel exp-safe and the model ordinary (enables the two-state fast path).
    pub all_safe: bool,
}

/// One flooding compute pass of log-domain BP (sum- or max-product, with damping) over
/// the block variables `range`: each variable sums its incoming log-messages `old` (the
/// `msg_base` layout) into its belief, and for each slot `s` computes the cavity, the
/// message through kernel `in_kernel[s] ^ 1` ([`log_message`]) and damping ([`damp`])
/// against the previous message, which it overwrites in `out_chunk` at
/// `out_off[s] − out_off[in_off[range.start]]`. Returns the largest change `max |m − m_old|`.
///
/// `scratch` needs `5 · max k` entries. On `robust` kernels cavities are exact with
/// `-∞` terms.
///
/// # Panics
/// On an index out of bounds of the given slices.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn log_pass(
    block: &LogBlock<'_>,
    mode: BpMode,
    damping: f64,
    range: Range<usize>,
    old: &[f64],
    out_chunk: &mut [f64],
    scratch: &mut [f64],
) -> f64 {
    let out0 = block.out_off[block.in_off[range.start]];
    let k = scratch.len() / 5;
    let (b, rest) = scratch.split_at_mut(k);
    let (cav, rest) = rest.split_at_mut(k);
    let (out, rest) = rest.split_at_mut(k);
    let (ninf, u) = rest.split_at_mut(k);
    let load = |i: usize| old[i];
    let extreme = block.kernels.robust;
    if mode == BpMode::SumProduct && block.uniform_k == 2 && block.all_safe {
        return binary_log_pass(block, damping, range, old, out_chunk, out0);
    }
    let mut residual: f64 = 0.0;
    for i in range {
        let (a0, a1) = (block.state_off[i], block.state_off[i + 1]);
        let ki = a1 - a0;
        let base = block.msg_base[i];
        let (s0, s1) = (block.in_off[i], block.in_off[i + 1]);
        let b = &mut b[..ki];
        let ninf = &mut ninf[..ki];
        if extreme {
            // Finite part and number of -∞ terms, so cavities never compute ∞ − ∞.
            split_terms_start(&block.unary_log[a0..a1], b, ninf);
            for p in (base..base + ki * (s1 - s0)).step_by(ki) {
                for a in 0..ki {
                    add_term(&mut b[a], &mut ninf[a], load(p + a));
                }
            }
        } else if ki == 2 {
            let (mut x0, mut x1) = (block.unary_log[a0], block.unary_log[a0 + 1]);
            for p in (base..base + 2 * (s1 - s0)).step_by(2) {
                x0 += load(p);
                x1 += load(p + 1);
            }
            b[0] = x0;
            b[1] = x1;
        } else {
            b.copy_from_slice(&block.unary_log[a0..a1]);
            for p in (base..base + ki * (s1 - s0)).step_by(ki) {
                for (a, x) in b.iter_mut().enumerate() {
                    *x += load(p + a);
                }
            }
        }
        for s in s0..s1 {
            let kj = if block.uniform_k > 0 {
                block.uniform_k
            } else {
                block.out_off[s + 1] - block.out_off[s]
            };
            let so = base + (s - s0) * ki;
            if extreme {
                for a in 0..ki {
                    cav[a] = cavity(b[a], ninf[a], load(so + a));
                }
            } else {
                for a in 0..ki {
                    cav[a] = b[a] - load(so + a);
                }
            }
            let out = &mut out[..kj];
            log_message(
                mode,
                &block.kernels,
                (block.in_kernel[s] ^ 1) as usize,
                &cav[..ki],
                out,
                u,
            );
            let oo = block.out_off[s] - out0;
            let prev = &mut out_chunk[oo..oo + kj];
            residual = residual.max(damp(out, prev, damping));
            prev.copy_from_slice(out);
        }
    }
    residual
}

/// [`log_pass`] specialised to sum-product with two states everywhere and exp-safe
/// kernels: one `exp` and one `ln` per message, no slices in the inner loop.
#[inline]
fn binary_log_pass(
    block: &LogBlock<'_>,
    damping: f64,
    range: Range<usize>,
    old: &[f64],
    out_chunk: &mut [f64],
    out0: usize,
) -> f64 {
    let load = |i: usize| old[i];
    let ker = &block.kernels;
    let mut residual: f64 = 0.0;
    for i in range {
        let base = block.msg_base[i];
        let (s0, s1) = (block.in_off[i], block.in_off[i + 1]);
        let u = &block.unary_log[2 * i..2 * i + 2];
        let (mut b0, mut b1) = (u[0], u[1]);
        for p in (base..base + 2 * (s1 - s0)).step_by(2) {
            b0 += load(p);
            b1 += load(p + 1);
        }
        for s in s0..s1 {
            let so = base + 2 * (s - s0);
            let c0 = b0 - load(so);
            let c1 = b1 - load(so + 1);
            let q = (block.in_kernel[s] ^ 1) as usize;
            let e = &ker.exp[ker.off[q]..ker.off[q] + 4];
            let (n0, n1) = if c0 >= c1 {
                let w = (c1 - c0).exp();
                (e[0] + w * e[2], e[1] + w * e[3])
            } else {
                let w = (c0 - c1).exp();
                (e[2] + w * e[0], e[3] + w * e[1])
            };
            let lr = (n1 / n0).ln();
            let (mut m0, mut m1) = if lr >= 0.0 { (-lr, 0.0) } else { (0.0, lr) };
            // Two states everywhere: the source-grouped offset of slot `s` is `2 s`.
            let oo = 2 * s - out0;
            let (p0, p1) = (out_chunk[oo], out_chunk[oo + 1]);
            if damping > 0.0 {
                m0 = (1.0 - damping) * m0 + damping * p0;
                m1 = (1.0 - damping) * m1 + damping * p1;
                let mx = m0.max(m1);
                m0 -= mx;
                m1 -= mx;
            }
            residual = residual.max((m0 - p0).abs()).max((m1 - p1).abs());
            out_chunk[oo] = m0;
            out_chunk[oo + 1] = m1;
        }
    }
    residual
}

/// Local log-conditional of a Gibbs variable given its neighbours' states:
/// `θ_v(x) + Σ_s θ_s(x_src(s), x)` into `out` (length `k_v`), the slots summed in order.
///
/// # Arguments
/// - `unary`: the variable's effective unary log-potentials (length `k_v`).
/// - `neighbours`: per incoming slot, the neighbour's current state and the kernel of the
///   message *into* the variable (`in_kernel[s]`: rows are the neighbour's states).
///
/// # Panics
/// If a kernel row is shorter than `k_v` or a state is out of range.
#[inline]
pub fn gibbs_scores(
    unary: &[f64],
    kernels: &KernelView<'_>,
    neighbours: impl IntoIterator<Item = (u32, u32)>,
    out: &mut [f64],
) {
    let kv = out.len();
    out.copy_from_slice(unary);
    for (a, q) in neighbours {
        let ko = kernels.off[q as usize] + a as usize * kv;
        for (o, &t) in out.iter_mut().zip(&kernels.log[ko..ko + kv]) {
            *o += t;
        }
    }
}

/// Samples a state index from the log-scores `s` with the uniform `u ∈ [0, 1)` by the
/// inverse CDF of `exp(s − max s)` (`p` is scratch of the same length); all `-∞` scores
/// draw uniformly. srl-infer's [`crate::Gibbs`] draw.
#[inline]
pub fn sample_index(s: &[f64], p: &mut [f64], u: f64) -> usize {
    crate::gibbs::sample_index(s, p, u)
}

/// The uniform in `[0, 1)` (53 random bits) that variable `v` uses in the Gibbs sweep
/// whose seed is `seed`: `SplitMix64(seed ⊕ SplitMix64(v))` (Steele, Lea & Flood 2014), so
/// draws depend on the variable, never on which thread or worker samples it.
#[inline]
#[must_use]
pub fn gibbs_uniform(seed: u64, v: usize) -> f64 {
    crate::gibbs::uniform(seed, v)
}

/// Greedy colouring of the free variables in index order (each takes the smallest colour
/// no earlier neighbour has; observed variables get `u32::MAX`), srl-infer's chromatic
/// Gibbs schedule: variables of one colour are never neighbours, so a colour class is
/// resampled in parallel.
///
/// # Arguments
/// - `in_off`, `in_src`: the graph as neighbour lists, `in_src[in_off[v]..in_off[v + 1]]`
///   the neighbours of `v` (ids `< in_off.len() − 1`).
/// - `observed`: whether variable `v` is observed (not sampled, not coloured).
///
/// # Returns
/// The colour of each variable and the number of colours.
///
/// # Panics
/// If a neighbour id is out of range.
#[must_use]
pub fn greedy_colours(
    in_off: &[usize],
    in_src: &[u32],
    observed: impl Fn(usize) -> bool,
) -> (Vec<u32>, u32) {
    let n = in_off.len().saturating_sub(1);
    let mut colour = vec![u32::MAX; n];
    let mut used: Vec<u32> = Vec::new();
    let mut num_colours = 0u32;
    for v in 0..n {
        if observed(v) {
            continue;
        }
        // Colours below 64 in a mask; the sorted list only when a neighbour has more.
        let mut mask = 0u64;
        let mut large = false;
        for &u in &in_src[in_off[v]..in_off[v + 1]] {
            // Only earlier variables are coloured yet: skip the read of a later one.
            if u as usize > v {
                continue;
            }
            let c = colour[u as usize];
            if c < 64 {
                mask |= 1 << c;
            } else if c != u32::MAX {
                large = true;
            }
        }
        let c = if !large || mask != u64::MAX {
            (!mask).trailing_zeros()
        } else {
            used.clear();
            for &u in &in_src[in_off[v]..in_off[v + 1]] {
                let c = colour[u as usize];
                if c != u32::MAX {
                    used.push(c);
                }
            }
            used.sort_unstable();
            used.dedup();
            let mut c = 0u32;
            for &u in &used {
                if u == c {
                    c += 1;
                } else {
                    break;
                }
            }
            c
        };
        colour[v] = c;
        num_colours = num_colours.max(c + 1);
    }
    (colour, num_colours)
}
