//! Loopy belief propagation (sum-product and max-product) in log space.

use std::ops::Range;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::InferError;
use crate::kernel::{KernelView, LogBlock};
use crate::marginals::{Beliefs, Convergence, MapAssignment, Marginals, argmax, edge_offsets};
use crate::mrf::{Kernels, PairwiseMrf};

/// Order in which messages are updated.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Schedule {
    /// Synchronous (Jacobi) updates: every message of iteration `t + 1` is computed from
    /// the messages of iteration `t`. Parallel over target variables with rayon; the result
    /// does not depend on the number of threads.
    #[default]
    Flooding,
    /// Asynchronous (Gauss–Seidel) updates in variable order: variable `i` sends all its
    /// messages using the latest incoming ones. Single-threaded.
    Sequential,
    /// Residual belief propagation (Elidan, McGraw & Koller 2006) with node-level lazy
    /// residuals (the "residual estimates" of Sutton & McCallum 2007; Knoll et al. 2015):
    /// the node whose outgoing messages would change most sends all of them. Each node
    /// carries a key: after its messages are computed, their largest residual `r₀`
    /// (exact); every message later committed *into* the node raises it, by the change of
    /// the node's log-odds belief since (two states, ordinary model: the key is
    /// `r₀ + |Δ log-odds|`, an estimate) or by the message's change range
    /// `max Δ − min Δ` (otherwise: an upper bound, as a cavity change of range `ρ`
    /// changes no normalised log-message by more than `ρ`). Popping a node computes its
    /// `deg` messages (`O(deg · k²)`, beliefs read from its contiguous incoming block as in
    /// [`Schedule::Sequential`]) unless nothing reached it since they were computed,
    /// commits them all and raises each target's key in `O(1)`; no message out of the
    /// targets is recomputed, which made the eager version cost `E[deg²]/E[deg]` messages
    /// per commit on power-law graphs. The queue is bucketed (a bucket spans a factor of 4
    /// of keys; see `BucketQueue`) and a bucket is served whole, in node order. The first
    /// pass is a sequential sweep (a node whose messages all change by less than `tol`
    /// keeps them pending).
    ///
    /// Convergence is exact: when no key is at or above `tol`, the pending messages of
    /// every node whose key is an estimate are recomputed (counted as work); the run
    /// reports `converged: true` only if then every pending message changes its committed
    /// one by less than `tol` (`max_residual` is that largest change), else it goes on.
    /// The reported iterations count work: message updates *computed* (including the
    /// first sweep and the verification), divided by `2m`, so they compare with the sweeps
    /// of the other schedules; `max_iters` caps that work (at most `max_iters · 2m`
    /// message updates computed; a run stopped by the cap reports the largest key, an
    /// estimate, as `max_residual`). With damping a committed message is not its own fixed
    /// point: the node's key stays at the largest change just committed. Single-threaded
    /// and deterministic.
    Residual,
}

/// Semiring of the message updates.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BpMode {
    /// `m(x_j) = log Σ_{x_i} exp(θ_ij(x_i, x_j) + cavity(x_i))`: marginals.
    #[default]
    SumProduct,
    /// `m(x_j) = max_{x_i} θ_ij(x_i, x_j) + cavity(x_i)`: max-marginals and MAP decoding.
    MaxProduct,
}

/// Loopy belief propagation on a [`PairwiseMrf`] (the slides' LBP, Yedidia, Freeman &
/// Weiss 2000 as used by Sen & Getoor 2006 §6.2).
///
/// Messages `m_{i→j}(x_j)` live in log space in one flat array indexed by directed edge
/// (`2m` messages, `k_j` entries each), normalised so that `max_x m(x) = 0`; initial
/// messages are 0 (uniform). Beliefs are `b_i ∝ exp(θ_i + Σ_k m_{k→i})`.
/// Damping mixes log-messages: `m ← (1 − λ) m_new + λ m_old`.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `max_iters` | 100 | iteration cap | `≥ 0` |
/// | `tol` | 1e-6 | stop when the largest change of a log-message is below it | `≥ 0` |
/// | `damping` | 0 | `λ` above | `[0, 1)`; values outside are clamped into `[0, 0.99]` |
/// | `schedule` | `Flooding` | see [`Schedule`] | |
/// | `mode` | `SumProduct` | see [`BpMode`] | |
/// | `beliefs` | `NodesAndEdges` | see [`Beliefs`] | |
/// | `kernel` | `Auto` | see [`BpKernel`] | |
/// | `precision` | `F64` | message storage of the two-state linear kernel, see [`MessagePrecision`] | |
///
/// # Zero potentials and extreme values
/// On a model that is not [ordinary](PairwiseMrf::is_ordinary) (a `-∞` log-potential or
/// a finite one beyond [`crate::mrf::ORDINARY_ABS_LOG_POTENTIAL`]) every schedule and
/// mode takes a log-domain path that is exact with `-∞`: tables and unary rows are shifted
/// to `max = 0`, beliefs are kept as a finite sum plus a count of `-∞` terms so a cavity
/// never computes `∞ − ∞`, and an all-`-∞` message stays unnormalised. BP's zeros are
/// sound (a state excluded by BP has probability zero), so a variable left with no state
/// means the evidence and constraints admit no assignment: [`LoopyBp::try_run`] reports
/// it as [`InferError::ZeroProbability`]. On loopy graphs with zero potentials the finite
/// parts of the messages can grow without bound (the run then reports no convergence).
/// Ordinary models run the fast kernels below, unchanged.
///
/// # Complexity
/// One iteration costs `O(Σ_{(i,j)} k_i k_j)` (each directed message once). Flooding
/// sum-product without damping on an ordinary model whose tables span less than 600
/// nats runs the linear-domain kernels of [`crate::linear`] ([`BpKernel::Auto`]): no
/// `exp` or `ln` per message (variables past the linear budget excepted), one number per
/// message when every variable has two states. Otherwise, with `k = 2` and tables of
/// dynamic range below 600 nats the update uses one `exp` and one `ln` per message, and
/// `k_i` of each in general. Memory: two message arrays (`2 · Σ_j deg(j) k_j` floats,
/// `2 · 2m` in the two-state linear kernel) and a source-grouped copy for flooding.
///
/// # Examples
/// ```
/// use srl_infer::{Exact, LoopyBp, MrfParts, PairTable, PairwiseMrf};
/// // A 3-node chain is a tree: LBP is exact.
/// let mrf = PairwiseMrf::new(MrfParts {
///     num_states: vec![2; 3],
///     unary: vec![0.3, 0.0, 0.0, 0.0, 0.0, -0.2],
///     edges: vec![(0, 1), (1, 2)],
///     edge_tables: vec![0, 0],
///     tables: vec![PairTable::potts(2, 1.0, 0.0)],
///     evidence: vec![],
/// })?;
/// let bp = LoopyBp::default().run(&mrf);
/// assert!(bp.convergence().converged);
/// let exact = Exact::default().marginals(&mrf)?;
/// assert!((bp.node(1)[0] - exact.node(1)[0]).abs() < 1e-12);
/// # Ok::<(), srl_infer::InferError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoopyBp {
    /// Iteration cap.
    pub max_iters: usize,
    /// Convergence tolerance on the largest log-message change.
    pub tol: f64,
    /// Damping `λ ∈ [0, 1)`.
    pub damping: f64,
    /// Message schedule.
    pub schedule: Schedule,
    /// Sum- or max-product.
    pub mode: BpMode,
    /// Whether to compute edge beliefs.
    pub beliefs: Beliefs,
    /// Message arithmetic of the flooding sum-product kernel (see [`BpKernel`]).
    #[serde(default)]
    pub kernel: BpKernel,
    /// Storage precision of the messages of the two-state linear flooding kernel (see
    /// [`MessagePrecision`]; every other path computes and stores in `f64`).
    #[serde(default)]
    pub precision: MessagePrecision,
}

/// Storage precision of the messages of flooding sum-product BP when every variable has
/// two states and the linear-domain kernel of [`crate::linear`] runs
/// ([`BpKernel::Auto`], no damping, an ordinary model). Arithmetic is `f64` either way;
/// only the stored message ratios `r = m(1) / m(0)` (the two message arrays and the
/// source-grouped copy for the residual) change width, which halves the memory traffic
/// of the kernel. On every other path (more than two states, the log-domain kernels,
/// damping, max-product, other schedules) [`MessagePrecision::F32`] is ignored and the run
/// is exactly the `f64` one.
///
/// # Error bound of `F32`
/// Each stored ratio is `r` rounded to the nearest `f32`, so its relative error is at most
/// `2^-24` and each stored log-message `ln r` is perturbed by at most
/// `|ln(1 ± 2^-24)| ≤ 2^-24 · (1 + 2^-24)` per store (≈ `6.0e-8`). A variable of degree
/// `d` sums `d` such log-messages, so its log-belief (and each outgoing cavity) carries at
/// most `d · 2^-24` of storage error per sweep before propagation; BP then propagates it
/// like any perturbation of the messages (damped by the kernels' contraction on a
/// convergent model, so the fixed point of the `f32` run differs from the `f64` one by a
/// small multiple of that; the tests measure marginals within `1e-5` of `F64`'s on
/// random small models and a `10^4`-node Barabási–Albert model).
///
/// The residual is computed from the stored (rounded) ratios, so it has a floor of a few
/// `f32` ulps (`≈ 1e-7` in `ln r`, more near high-degree variables): tolerances below
/// about `1e-6` cannot be reached reliably. A run whose tolerance is below the floor does
/// not stop early: it runs to `max_iters` and reports `converged = false` with the
/// residual it reached (never a false convergence).
///
/// `f32` holds ratios within about `e^{±87}` as normal numbers. A model with a kernel
/// whose dynamic range exceeds [`crate::linear::F32_MAX_RANGE`] nats (or a warm start
/// with a message that wide) therefore runs the `f64` path even when `F32` is asked for.
/// Results stay independent of the thread count with either precision.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum MessagePrecision {
    /// Messages stored as `f64` (the default; bit-identical to srl-infer before this option).
    #[default]
    F64,
    /// Two-state linear-kernel messages stored as `f32` (error bound above).
    F32,
}

/// Arithmetic of flooding sum-product message updates.
///
/// The default, [`BpKernel::Auto`], runs the linear-domain (probability) kernels of
/// [`crate::linear`] when they are exact to rounding (undamped sum-product on an ordinary
/// model whose kernels span less than 600 nats) and the log-domain kernels otherwise. The
/// two agree to rounding (the tests compare them at `1e-12` on the messages' logs).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BpKernel {
    /// Linear domain where exact to rounding, else log domain.
    #[default]
    Auto,
    /// Always the log-domain kernels (`k` `exp` and `k` `ln` per message for `k > 2`;
    /// one of each for `k = 2`): the arithmetic of srl-infer 0.1 before the linear kernels.
    Log,
}

impl Default for LoopyBp {
    fn default() -> Self {
        Self {
            max_iters: 100,
            tol: 1e-6,
            damping: 0.0,
            schedule: Schedule::Flooding,
            mode: BpMode::SumProduct,
            beliefs: Beliefs::NodesAndEdges,
            kernel: BpKernel::Auto,
            precision: MessagePrecision::F64,
        }
    }
}

/// Slots per parallel work block (blocks are fixed by the graph, not by the thread count).
const BLOCK_SLOTS: usize = 4096;

impl LoopyBp {
    /// Runs belief propagation and returns the (max-)marginals with a convergence report.
    ///
    /// # Returns
    /// Node beliefs (and edge beliefs if `beliefs == NodesAndEdges`); for
    /// [`BpMode::MaxProduct`] these are normalised max-marginals. Observed variables get a
    /// point mass on their state.
    ///
    /// With zero potentials (hard constraints) a variable can end with every state at
    /// probability zero (BP's zeros are sound: the evidence and constraints then admit no
    /// assignment); its row is then uniform and the report says `converged: false`.
    /// [`LoopyBp::try_run`] returns [`InferError::ZeroProbability`] instead.
    #[must_use]
    pub fn run(&self, mrf: &PairwiseMrf) -> Marginals {
        let (m, _) = self.run_checked(mrf);
        m
    }

    /// [`LoopyBp::run`], or [`InferError::ZeroProbability`] naming the first variable
    /// left with probability zero in every state by the zero potentials and the evidence.
    ///
    /// # Errors
    /// [`InferError::ZeroProbability`] (only possible on a model with `-∞` entries).
    pub fn try_run(&self, mrf: &PairwiseMrf) -> Result<Marginals, InferError> {
        match self.run_checked(mrf) {
            (m, None) => Ok(m),
            (_, Some(v)) => Err(zero_error(v)),
        }
    }

    /// Warm start: [`LoopyBp::try_run`] starting from the messages `init` (e.g. those a
    /// previous run ended in, on a model of the same structure whose potentials moved a
    /// little, as between two objective evaluations of a gradient-based learner) instead
    /// of uniform ones, returning the messages this run ends in as well.
    ///
    /// Same schedules, modes, damping, kernels, residual and stopping rule as
    /// [`LoopyBp::run`]; only the starting point differs. `init = None` is a cold start:
    /// its marginals are bit-identical to [`LoopyBp::run`]'s (same code path). Starting
    /// from a fixed point of the model, a run stops after one sweep (flooding and
    /// sequential; residual BP after computing the `2m` candidates), and a converged warm
    /// run ends at a fixed point within `tol` like a cold one (on models with one fixed
    /// point, the same marginals to the precision `tol` allows; with several, it tends to
    /// stay at the one it started near). The result does not depend on the number of
    /// threads.
    ///
    /// # Arguments
    /// - `mrf`: the model.
    /// - `init`: log-messages laid out for `mrf` ([`BpMessages`] of a run on a model with the
    ///   same variables, state counts and edges; the potentials may differ), or `None`.
    ///
    /// # Returns
    /// The marginals (as [`LoopyBp::run`]) and the final messages.
    ///
    /// # Errors
    /// [`InferError::DimensionMismatch`] when `init` has not [`BpMessages::len`] equal to
    /// the model's message length (`Σ_v deg(v) k_v`); [`InferError::NonFinite`] for a NaN
    /// or `+∞` entry in `init` (`-∞` is a valid log-message entry);
    /// [`InferError::ZeroProbability`] as [`LoopyBp::try_run`].
    ///
    /// # Examples
    /// ```
    /// use srl_infer::{LoopyBp, MrfParts, PairTable, PairwiseMrf};
    /// let parts = |c: f64| MrfParts {
    ///     num_states: vec![2; 3],
    ///     unary: vec![0.3, 0.0, 0.0, 0.1, 0.0, -0.2],
    ///     edges: vec![(0, 1), (1, 2), (2, 0)],
    ///     edge_tables: vec![0; 3],
    ///     tables: vec![PairTable::potts(2, c, 0.0)],
    ///     evidence: vec![],
    /// };
    /// let bp = LoopyBp { tol: 1e-12, ..LoopyBp::default() };
    /// let (_, msgs) = bp.run_from(&PairwiseMrf::new(parts(0.50))?, None)?;
    /// // A nearby model starts from the previous messages and needs fewer sweeps.
    /// let next = PairwiseMrf::new(parts(0.51))?;
    /// let (warm, _) = bp.run_from(&next, Some(&msgs))?;
    /// let cold = bp.run(&next);
    /// assert!(warm.convergence().iterations < cold.convergence().iterations);
    /// assert!((warm.node(0)[0] - cold.node(0)[0]).abs() < 1e-9);
    /// # Ok::<(), srl_infer::InferError>(())
    /// ```
    pub fn run_from(
        &self,
        mrf: &PairwiseMrf,
        init: Option<&BpMessages>,
    ) -> Result<(Marginals, BpMessages), InferError> {
        if let Some(m) = init {
            if m.log.len() != mrf.message_len() {
                return Err(InferError::DimensionMismatch {
                    what: "initial BP messages",
                    expected: mrf.message_len(),
                    found: m.log.len(),
                });
            }
            if let Some(i) = m.log.iter().position(|x| x.is_nan() || *x == f64::INFINITY) {
                return Err(InferError::NonFinite {
                    what: "initial BP message entry",
                    index: i,
                    value: m.log[i],
                });
            }
        }
        let mut state = self.run_messages_from(mrf, init.map(|m| m.log.as_slice()), true);
        if let Some(v) = state.mark_zero(mrf) {
            return Err(zero_error(v));
        }
        let edge_log = match self.beliefs {
            Beliefs::NodesAndEdges => edge_beliefs(mrf, &state.msgs, &state.bel),
            Beliefs::NodesOnly => Vec::new(),
        };
        let msgs = BpMessages { log: state.msgs };
        let m = Marginals::from_unnormalized(mrf, state.bel, edge_log, state.convergence);
        Ok((m, msgs))
    }

    fn run_checked(&self, mrf: &PairwiseMrf) -> (Marginals, Option<usize>) {
        let mut state = self.run_messages(mrf);
        let dead = state.mark_zero(mrf);
        let edge_log = match self.beliefs {
            Beliefs::NodesAndEdges => edge_beliefs(mrf, &state.msgs, &state.bel),
            Beliefs::NodesOnly => Vec::new(),
        };
        let m = Marginals::from_unnormalized(mrf, state.bel, edge_log, state.convergence);
        (m, dead)
    }

    /// Max-product decoding: runs with [`BpMode::MaxProduct`] (whatever `self.mode` is) and
    /// takes the argmax of every max-marginal (ties: smallest state). Exact on forests when
    /// the MAP is unique.
    ///
    /// With zero potentials, a variable left with no state of positive max-marginal gets
    /// state 0 and the report says `converged: false` ([`LoopyBp::try_map`] errs instead).
    #[must_use]
    pub fn map(&self, mrf: &PairwiseMrf) -> MapAssignment {
        self.map_checked(mrf).0
    }

    /// [`LoopyBp::map`], or [`InferError::ZeroProbability`] as [`LoopyBp::try_run`].
    ///
    /// # Errors
    /// [`InferError::ZeroProbability`] (only possible on a model with `-∞` entries).
    pub fn try_map(&self, mrf: &PairwiseMrf) -> Result<MapAssignment, InferError> {
        match self.map_checked(mrf) {
            (m, None) => Ok(m),
            (_, Some(v)) => Err(zero_error(v)),
        }
    }

    fn map_checked(&self, mrf: &PairwiseMrf) -> (MapAssignment, Option<usize>) {
        let cfg = Self {
            mode: BpMode::MaxProduct,
            ..*self
        };
        let mut state = cfg.run_messages(mrf);
        let dead = state.mark_zero(mrf);
        let states = (0..mrf.num_nodes())
            .map(|v| argmax(&state.bel[mrf.state_off[v]..mrf.state_off[v + 1]]) as u32)
            .collect();
        (MapAssignment::new(mrf, states, state.convergence), dead)
    }

    fn damping(&self) -> f64 {
        if self.damping.is_nan() {
            0.0
        } else {
            self.damping.clamp(0.0, 0.99)
        }
    }

    fn run_messages(&self, mrf: &PairwiseMrf) -> BpState {
        self.run_messages_from(mrf, None, false)
    }

    /// The schedule's run from `init` (log-messages of length `mrf.message_len()`, checked
    /// by the caller) or from uniform messages; `want_msgs`: the linear kernels return the
    /// messages even without edge beliefs.
    fn run_messages_from(
        &self,
        mrf: &PairwiseMrf,
        init: Option<&[f64]>,
        want_msgs: bool,
    ) -> BpState {
        // flooding sweeps on a pool thread (`on_pool`): no hand-over per pass; the serial
        // schedules on this thread
        crate::on_pool_if(self.schedule == Schedule::Flooding, || {
            match self.schedule {
                Schedule::Flooding => self.flooding(mrf, init, want_msgs),
                Schedule::Sequential => self.sequential(mrf, init),
                Schedule::Residual => self.residual(mrf, init),
            }
        })
    }

    fn flooding(&self, mrf: &PairwiseMrf, init: Option<&[f64]>, want_msgs: bool) -> BpState {
        let damping = self.damping();
        if self.kernel == BpKernel::Auto
            && crate::linear::applies(mrf, self.mode == BpMode::SumProduct, damping)
        {
            // `None` only for a warm start that does not fit the linear domain.
            if let Some(run) = crate::linear::flooding(
                mrf,
                self.max_iters,
                self.tol,
                want_msgs || self.beliefs == Beliefs::NodesAndEdges,
                init,
                self.precision,
            ) {
                return BpState {
                    msgs: run.msgs,
                    bel: run.bel,
                    convergence: run.convergence,
                };
            }
        }
        let off = mrf.offsets();
        let len = mrf.message_len();
        // Incoming messages, grouped by target (read contiguously by their target).
        let mut inc: Vec<f64> = match init {
            None => vec![0.0; len],
            Some(m) => m.to_vec(),
        };
        // Outgoing messages, grouped by source: each pass overwrites its sources' blocks
        // (the previous messages there give damping and residuals), then every target
        // gathers its incoming block from them (`deliver_messages`).
        let mut outg = match init {
            None => vec![0.0; off.out_off[mrf.num_directed_edges()]],
            Some(m) => source_grouped(mrf, m),
        };
        let out_node_off: Vec<usize> = mrf.in_off.iter().map(|&s| off.out_off[s]).collect();
        let bounds = node_blocks(mrf);
        let mut convergence = Convergence::start(mrf.num_edges() == 0);
        while !convergence.converged && convergence.iterations < self.max_iters {
            let chunks = split_by(&mut outg, &bounds, &out_node_off);
            let jobs: Vec<_> = bounds.windows(2).map(|w| w[0]..w[1]).zip(chunks).collect();
            let old = &inc;
            let residual = jobs
                .into_par_iter()
                .map_init(
                    || vec![0.0; 5 * mrf.max_states.max(1)],
                    |scratch, (range, out_chunk)| {
                        push_block(mrf, self.mode, damping, range, old, out_chunk, scratch)
                    },
                )
                .reduce(|| 0.0, f64::max);
            deliver_messages(mrf, &bounds, &outg, &mut inc);
            convergence.record(residual, self.tol);
        }
        let msgs = inc;
        let bel = all_beliefs(mrf, &msgs);
        BpState {
            msgs,
            bel,
            convergence,
        }
    }

    fn sequential(&self, mrf: &PairwiseMrf, init: Option<&[f64]>) -> BpState {
        let off = mrf.offsets();
        let n = mrf.num_nodes();
        let damping = self.damping();
        let k = mrf.max_states.max(1);
        let mut msgs = match init {
            None => vec![0.0; mrf.message_len()],
            Some(m) => m.to_vec(),
        };
        let (mut b, mut cav, mut out, mut scratch) =
            (vec![0.0; k], vec![0.0; k], vec![0.0; k], vec![0.0; k]);
        let mut ninf = vec![0.0; k];
        let mut convergence = Convergence::start(mrf.num_edges() == 0);
        // Source-grouped copy of the outgoing messages: damping and residuals read it
        // contiguously, so the only scattered access per message is the write.
        let mut outg = match init {
            None => vec![0.0; off.out_off[mrf.num_directed_edges()]],
            Some(m) => source_grouped(mrf, m),
        };
        while !convergence.converged && convergence.iterations < self.max_iters {
            let mut residual: f64 = 0.0;
            for i in 0..n {
                let ki = mrf.num_states[i] as usize;
                if mrf.extreme {
                    split_terms_into(mrf, &msgs, i, &mut b[..ki], &mut ninf[..ki]);
                } else {
                    belief_into(mrf, &msgs, i, &mut b[..ki]);
                }
                for s in mrf.in_off[i]..mrf.in_off[i + 1] {
                    let (o0, o1) = (off.out_off[s], off.out_off[s + 1]);
                    let kj = o1 - o0;
                    let so = off.slot(mrf, i, s);
                    if mrf.extreme {
                        for a in 0..ki {
                            cav[a] = cavity(b[a], ninf[a], msgs[so + a]);
                        }
                    } else {
                        for a in 0..ki {
                            cav[a] = b[a] - msgs[so + a];
                        }
                    }
                    message(
                        self.mode,
                        &mrf.kernels,
                        (mrf.in_kernel[s] ^ 1) as usize,
                        &cav[..ki],
                        &mut out[..kj],
                        &mut scratch,
                    );
                    let r = finish(&mut out[..kj], &outg[o0..o1], damping);
                    residual = residual.max(r);
                    outg[o0..o1].copy_from_slice(&out[..kj]);
                    let to = off.rev_off[s];
                    msgs[to..to + kj].copy_from_slice(&out[..kj]);
                }
            }
            convergence.record(residual, self.tol);
        }
        let bel = all_beliefs(mrf, &msgs);
        BpState {
            msgs,
            bel,
            convergence,
        }
    }

    fn residual(&self, mrf: &PairwiseMrf, init: Option<&[f64]>) -> BpState {
        let off = mrf.offsets();
        let n = mrf.num_nodes();
        let damping = self.damping();
        let k = mrf.max_states.max(1);
        let slots = mrf.num_directed_edges();
        // Committed messages grouped by target (a node's belief sums its block), plus two
        // source-grouped arrays: the committed messages again and the pending candidates.
        // Slot `s` of node `j`'s block holds, in the source-grouped arrays, the message
        // sent *back* along it (from `j` to `in_src[s]`), so computing every message out of
        // `j` reads and writes contiguous memory; a commit makes one scattered write (and
        // updates the target's 32-byte `NodeKey`).
        let mut msgs = match init {
            None => vec![0.0; mrf.message_len()],
            Some(m) => m.to_vec(),
        };
        let out_len = off.out_off[slots];
        let mut sent = match init {
            None => vec![0.0; out_len],
            Some(m) => source_grouped(mrf, m),
        };
        let mut cand = vec![0.0; out_len];
        let (mut b, mut ninf) = (vec![0.0; k], vec![0.0; k]);
        let (mut cav, mut scratch) = (vec![0.0; k], vec![0.0; k]);
        // Computes the pending messages out of `j` (every slot of `j`'s block) into `cand`
        // from the committed messages, as the sequential schedule does; returns their
        // largest residual. On an extreme model the belief is kept as a finite part and a
        // count of -∞ terms, so a cavity never computes ∞ − ∞.
        let mut send_all = |msgs: &[f64], sent: &[f64], cand: &mut [f64], j: usize| {
            let kj = mrf.num_states[j] as usize;
            if mrf.extreme {
                split_terms_into(mrf, msgs, j, &mut b[..kj], &mut ninf[..kj]);
            } else {
                belief_into(mrf, msgs, j, &mut b[..kj]);
            }
            let mut r: f64 = 0.0;
            for s in mrf.in_off[j]..mrf.in_off[j + 1] {
                let (o0, o1) = (off.out_off[s], off.out_off[s + 1]);
                let so = off.slot(mrf, j, s);
                if mrf.extreme {
                    for a in 0..kj {
                        cav[a] = cavity(b[a], ninf[a], msgs[so + a]);
                    }
                } else {
                    for a in 0..kj {
                        cav[a] = b[a] - msgs[so + a];
                    }
                }
                let out = &mut cand[o0..o1];
                let q = (mrf.in_kernel[s] ^ 1) as usize;
                message(self.mode, &mrf.kernels, q, &cav[..kj], out, &mut scratch);
                r = r.max(finish(out, &sent[o0..o1], damping));
            }
            priority(r)
        };
        // Node-level lazy residuals (the queue's `NodeKey`s): see `Schedule::Residual`.
        let mut queue = BucketQueue::new(n, self.tol);
        let cap = self.max_iters.saturating_mul(slots);
        // The first pass computes every message (one sweep of work): skipped, with the
        // run not converged, when the cap is below one sweep.
        let started = slots > 0 && slots <= cap;
        let mut computed = 0;
        if started {
            // A sequential sweep: each node's messages are committed as they are computed,
            // unless all their residuals are below the tolerance (then they stay pending,
            // exact: a warm start at the fixed point costs this one sweep).
            for j in 0..n {
                let r = send_all(&msgs, &sent, &mut cand, j);
                if r < self.tol || r <= 0.0 {
                    queue.node[j].r0 = r;
                } else {
                    commit_node(mrf, damping, j, r, &mut msgs, &mut sent, &cand, &mut queue);
                }
            }
            computed = slots;
        }
        let mut converged = slots == 0;
        while started && !converged {
            let Some(j) = queue.pop() else {
                // Every key is below the tolerance (or zero): verify exactly. Recompute the
                // pending messages of every node whose key is an estimate; stop (not
                // converged) if that work does not fit under the cap.
                let stale: usize = (0..n)
                    .filter(|&v| !queue.node[v].fresh)
                    .map(|v| mrf.in_off[v + 1] - mrf.in_off[v])
                    .sum();
                if computed + stale > cap {
                    break;
                }
                for v in 0..n {
                    if !queue.node[v].fresh {
                        let r = send_all(&msgs, &sent, &mut cand, v);
                        queue.node[v] = NodeKey {
                            r0: r,
                            acc: 0.0,
                            at: queue.node[v].at,
                            fresh: true,
                        };
                        queue.set(v, r);
                    }
                }
                computed += stale;
                // Every key is exact now: converged unless one is at or above the tolerance
                // (then continue), or stuck at an exact fixed point with `tol = 0`.
                if queue.is_empty() {
                    converged = queue.node.iter().all(|nk| nk.r0 < self.tol);
                    break;
                }
                continue;
            };
            let deg = mrf.in_off[j + 1] - mrf.in_off[j];
            // Load the targets' records now (independent loads, overlapping each other and
            // the message computation) rather than one dependent miss per commit below.
            let mut touch = 0;
            for s in mrf.in_off[j]..mrf.in_off[j + 1] {
                touch ^= queue.node[mrf.in_src[s] as usize].at;
            }
            std::hint::black_box(touch);
            let mut r = queue.node[j].r0;
            if !queue.node[j].fresh {
                // Stop before the work passes the cap (`j` stays queued).
                if computed + deg > cap {
                    let kj = queue.node[j].key();
                    queue.set(j, kj);
                    break;
                }
                r = send_all(&msgs, &sent, &mut cand, j);
                computed += deg;
            }
            commit_node(mrf, damping, j, r, &mut msgs, &mut sent, &cand, &mut queue);
        }
        let max_residual = if started || slots == 0 {
            queue.node.iter().map(NodeKey::key).fold(0.0, f64::max)
        } else {
            f64::INFINITY
        };
        // Work in full-sweep equivalents: message updates computed / 2m.
        let iterations = if slots == 0 {
            0
        } else {
            computed.div_ceil(slots)
        };
        let bel = all_beliefs(mrf, &msgs);
        BpState {
            msgs,
            bel,
            convergence: Convergence {
                converged,
                iterations,
                max_residual,
            },
        }
    }
}

/// Loopy BP's messages `m_{i→j}(x_j)` in log space, normalised to `max = 0` (an all-`-∞`
/// message on a model with zero potentials stays unnormalised), in the model's
/// target-grouped layout: the messages into variable `v` are contiguous, `k_v` entries per
/// incoming edge, in the order of `v`'s neighbours. Produced by [`LoopyBp::run_from`] to
/// warm-start a later run on a model with the same structure (variables, state counts,
/// edges; the potentials may differ).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BpMessages {
    log: Vec<f64>,
}

impl BpMessages {
    /// Uniform messages (all entries 0) for `mrf`: starting from them is a cold start.
    #[must_use]
    pub fn uniform(mrf: &PairwiseMrf) -> Self {
        Self {
            log: vec![0.0; mrf.message_len()],
        }
    }

    /// Number of entries, `Σ_v deg(v) k_v`.
    #[must_use]
    pub fn len(&self) -> usize {
        self.log.len()
    }

    /// Whether there are no entries (a model without edges).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// The log-message entries in the layout described on the type.
    #[must_use]
    pub fn as_slice(&self) -> &[f64] {
        &self.log
    }
}

/// The source-grouped copy of target-grouped messages `msgs`: the message sent back along
/// slot `s` (from `s`'s owner to `in_src[s]`) at `out_off[s]..out_off[s + 1]`.
pub(crate) fn source_grouped(mrf: &PairwiseMrf, msgs: &[f64]) -> Vec<f64> {
    let off = mrf.offsets();
    let slots = mrf.num_directed_edges();
    let mut out = vec![0.0; off.out_off[slots]];
    for s in 0..slots {
        let (o0, o1) = (off.out_off[s], off.out_off[s + 1]);
        let to = off.rev_off[s];
        out[o0..o1].copy_from_slice(&msgs[to..to + (o1 - o0)]);
    }
    out
}

struct BpState {
    msgs: Vec<f64>,
    bel: Vec<f64>,
    convergence: Convergence,
}

impl BpState {
    /// On an extreme model: the first variable whose belief is `-∞` in every state (then
    /// the run is reported as not converged). Ordinary models never have one.
    fn mark_zero(&mut self, mrf: &PairwiseMrf) -> Option<usize> {
        if !mrf.extreme {
            return None;
        }
        let dead = (0..mrf.num_nodes()).find(|&v| {
            self.bel[mrf.state_off[v]..mrf.state_off[v + 1]]
                .iter()
                .all(|&x| x == f64::NEG_INFINITY)
        });
        if dead.is_some() {
            self.convergence.converged = false;
        }
        dead
    }
}

fn zero_error(v: usize) -> InferError {
    InferError::ZeroProbability {
        node: Some(v),
        cause: "belief propagation excluded every state (the zero potentials and the \
                evidence admit no assignment)",
    }
}

/// Node blocks of about [`BLOCK_SLOTS`] incoming slots each; boundaries in node indices,
/// starting at 0 and ending at `n`.
pub(crate) fn node_blocks(mrf: &PairwiseMrf) -> Vec<usize> {
    let n = mrf.num_nodes();
    let mut bounds = vec![0];
    let mut start_slot = 0;
    for v in 0..n {
        let end = mrf.in_off[v + 1] + (v + 1);
        if end - start_slot >= BLOCK_SLOTS {
            bounds.push(v + 1);
            start_slot = end;
        }
    }
    if *bounds.last().unwrap_or(&0) != n {
        bounds.push(n);
    }
    bounds
}

/// Degrees from this one on share the last bucket of [`by_degree`] (such long loops gain
/// little from a predicted exit).
pub(crate) const DEGREE_BUCKETS: usize = 64;

/// The indices `0..len` by increasing `deg(i)`, stably (ties, and all degrees of
/// [`DEGREE_BUCKETS`]` − 1` or more, in index order), handed over as `place(rank, i)`: a
/// counting sort, `O(len)`. The two-state sweeps (Gibbs, mean field, flooding BP) visit
/// the variables of a batch or block in this order, so their loops over each variable's
/// slots end where the processor predicts.
pub(crate) fn by_degree(
    len: usize,
    deg: impl Fn(usize) -> usize,
    mut place: impl FnMut(usize, usize),
) {
    let bucket = |i: usize| deg(i).min(DEGREE_BUCKETS - 1);
    let mut next = [0usize; DEGREE_BUCKETS + 1];
    for i in 0..len {
        next[bucket(i) + 1] += 1;
    }
    for b in 1..=DEGREE_BUCKETS {
        next[b] += next[b - 1];
    }
    for i in 0..len {
        let b = bucket(i);
        place(next[b], i);
        next[b] += 1;
    }
}

/// [`deliver_slots`] over the flat layouts: each target block `bounds[b]..bounds[b + 1]`
/// gathers its incoming messages (target-grouped, `msg_base` layout) from `sent` (the
/// source-grouped `out_off` layout), for any state counts.
pub(crate) fn deliver_messages(mrf: &PairwiseMrf, bounds: &[usize], sent: &[f64], inc: &mut [f64]) {
    let off = mrf.offsets();
    if mrf.uniform_k == 2 {
        let (sent, _) = sent.as_chunks::<2>();
        let (inc, _) = inc.as_chunks_mut::<2>();
        deliver_slots(mrf, sent, inc);
        return;
    }
    let chunks = split_by(inc, bounds, &off.msg_base);
    bounds
        .windows(2)
        .zip(chunks)
        .collect::<Vec<_>>()
        .into_par_iter()
        .for_each(|(w, block)| {
            let mut at = 0;
            for t in mrf.in_off[w[0]]..mrf.in_off[w[1]] {
                let r = mrf.in_rev[t] as usize;
                let m = &sent[off.out_off[r]..off.out_off[r + 1]];
                block[at..at + m.len()].copy_from_slice(m);
                at += m.len();
            }
        });
}

/// Slots per parallel job of [`deliver_slots`].
const DELIVER_SLOTS: usize = 1 << 13;
/// How many slots ahead [`deliver_slots`] requests the cache line of the message it will
/// gather.
const DELIVER_AHEAD: usize = 16;

/// The deliver pass of the two-pass flooding kernels: each target gathers its incoming
/// messages from the senders' outgoing ones, `inc[t] = sent[in_rev[t]]` (the message
/// arriving along slot `t` was sent back along slot `in_rev[t]`). `sent` and `inc` hold
/// one message (`T`: a two-state ratio, or a `[f64; K]` row) per directed slot. The reads
/// are scattered but independent of each other, so they overlap; the writes stream.
pub(crate) fn deliver_slots<T: Copy + Send + Sync>(mrf: &PairwiseMrf, sent: &[T], inc: &mut [T]) {
    inc.par_chunks_mut(DELIVER_SLOTS)
        .enumerate()
        .for_each(|(c, block)| {
            let rev = &mrf.in_rev[c * DELIVER_SLOTS..];
            for (i, (m, &r)) in block.iter_mut().zip(rev).enumerate() {
                // the message DELIVER_AHEAD slots on requested now (a hint, no value read)
                if let Some(&ra) = rev.get(i + DELIVER_AHEAD) {
                    crate::prefetch(&sent[ra as usize]);
                }
                *m = sent[r as usize];
            }
        });
}

/// Splits `data` into the chunks `off[bounds[b]]..off[bounds[b+1]]`.
pub(crate) fn split_by<'a, T>(
    data: &'a mut [T],
    bounds: &[usize],
    off: &[usize],
) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    let mut rest = data;
    for w in bounds.windows(2) {
        let len = off[w[1]] - off[w[0]];
        let (a, b) = std::mem::take(&mut rest).split_at_mut(len);
        out.push(a);
        rest = b;
    }
    out
}

/// Unnormalised log-belief of `v`: `θ_v + Σ_{s into v} m_s`.
#[inline]
pub(crate) fn belief_into(mrf: &PairwiseMrf, msgs: &[f64], v: usize, out: &mut [f64]) {
    let off = mrf.offsets();
    let kv = out.len();
    out.copy_from_slice(&mrf.eff_unary()[mrf.state_off[v]..mrf.state_off[v + 1]]);
    let base = off.msg_base[v];
    let deg = mrf.in_off[v + 1] - mrf.in_off[v];
    if kv == 2 {
        let (mut a, mut b) = (out[0], out[1]);
        for m in msgs[base..base + 2 * deg].chunks_exact(2) {
            a += m[0];
            b += m[1];
        }
        out[0] = a;
        out[1] = b;
    } else {
        for m in msgs[base..base + kv * deg].chunks_exact(kv) {
            for (o, x) in out.iter_mut().zip(m) {
                *o += x;
            }
        }
    }
}

fn all_beliefs(mrf: &PairwiseMrf, msgs: &[f64]) -> Vec<f64> {
    let mut bel = vec![0.0; mrf.eff_unary().len()];
    for v in 0..mrf.num_nodes() {
        let (a, b) = (mrf.state_off[v], mrf.state_off[v + 1]);
        belief_into(mrf, msgs, v, &mut bel[a..b]);
    }
    bel
}

/// One flooding compute pass over the source nodes `range`: each node sums its incoming
/// block of `old` (contiguous), then sends one message per neighbour into `out_chunk`,
/// the block's part of the source-grouped outgoing messages, where the previous messages
/// sit for damping and the residual ([`deliver_messages`] then hands the new ones to
/// their targets). Returns the residual. The pass is [`crate::kernel::log_pass`].
#[allow(clippy::too_many_arguments)]
fn push_block(
    mrf: &PairwiseMrf,
    mode: BpMode,
    damping: f64,
    range: Range<usize>,
    old: &[f64],
    out_chunk: &mut [f64],
    scratch: &mut [f64],
) -> f64 {
    let off = mrf.offsets();
    let block = LogBlock {
        state_off: &mrf.state_off,
        unary_log: mrf.eff_unary(),
        in_off: &mrf.in_off,
        msg_base: &off.msg_base,
        out_off: &off.out_off,
        in_kernel: &mrf.in_kernel,
        kernels: mrf.kernels.view(),
        uniform_k: mrf.uniform_k,
        all_safe: mrf.kernels.all_safe,
    };
    crate::kernel::log_pass(&block, mode, damping, range, old, out_chunk, scratch)
}

/// Computes the log-message for kernel `q` from the sender's cavity `cav` (length
/// `k_src`) into `out` (length `k_tgt`), normalised to `max = 0`
/// ([`crate::kernel::log_message`]).
#[inline(always)]
pub(crate) fn message(
    mode: BpMode,
    ker: &Kernels,
    q: usize,
    cav: &[f64],
    out: &mut [f64],
    u: &mut [f64],
) {
    crate::kernel::log_message(mode, &ker.view(), q, cav, out, u);
}

/// The message of kernel `q` on an extreme model, in the log domain, exact with `-∞`
/// entries (a zero potential or an excluded state contributes nothing; an all-`-∞` cavity
/// gives an all-`-∞` message, left unnormalised).
pub(crate) fn robust_message(
    mode: BpMode,
    ker: &KernelView<'_>,
    q: usize,
    cav: &[f64],
    out: &mut [f64],
) {
    let ki = cav.len();
    let kj = out.len();
    let off = ker.off[q];
    let table = &ker.log[off..off + ki * kj];
    for (b, o) in out.iter_mut().enumerate() {
        let mut mx = f64::NEG_INFINITY;
        for a in 0..ki {
            mx = mx.max(cav[a] + table[a * kj + b]);
        }
        *o = if mx == f64::NEG_INFINITY || mode == BpMode::MaxProduct {
            mx
        } else {
            let mut sum = 0.0;
            for a in 0..ki {
                sum += (cav[a] + table[a * kj + b] - mx).exp();
            }
            mx + sum.ln()
        };
    }
    let mx = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if mx > f64::NEG_INFINITY {
        out.iter_mut().for_each(|o| *o -= mx);
    }
}

/// Starts split sums from `init`: finite values into `fin`, `-∞` counted in `ninf`.
#[inline]
pub(crate) fn split_terms_start(init: &[f64], fin: &mut [f64], ninf: &mut [f64]) {
    for ((f, c), &x) in fin.iter_mut().zip(ninf.iter_mut()).zip(init) {
        *f = 0.0;
        *c = 0.0;
        add_term(f, c, x);
    }
}

/// The belief of `v` (extreme models) as split sums: finite part and `-∞` count.
pub(crate) fn split_terms_into(
    mrf: &PairwiseMrf,
    msgs: &[f64],
    v: usize,
    fin: &mut [f64],
    ninf: &mut [f64],
) {
    let off = mrf.offsets();
    let kv = fin.len();
    split_terms_start(
        &mrf.eff_unary()[mrf.state_off[v]..mrf.state_off[v + 1]],
        fin,
        ninf,
    );
    let base = off.msg_base[v];
    let deg = mrf.in_off[v + 1] - mrf.in_off[v];
    for m in msgs[base..base + kv * deg].chunks_exact(kv) {
        for a in 0..kv {
            add_term(&mut fin[a], &mut ninf[a], m[a]);
        }
    }
}

/// Adds the log-term `x` to a split sum.
#[inline]
pub(crate) fn add_term(fin: &mut f64, ninf: &mut f64, x: f64) {
    if x == f64::NEG_INFINITY {
        *ninf += 1.0;
    } else {
        *fin += x;
    }
}

/// The split sum without the term `m` (a cavity): exact with `-∞` terms.
#[inline]
pub(crate) fn cavity(fin: f64, ninf: f64, m: f64) -> f64 {
    if m == f64::NEG_INFINITY {
        if ninf <= 1.0 { fin } else { f64::NEG_INFINITY }
    } else if ninf > 0.0 {
        f64::NEG_INFINITY
    } else {
        fin - m
    }
}

/// Applies damping against the old message, renormalises, returns `max |new − old|`
/// ([`crate::kernel::damp`]).
#[inline]
fn finish(out: &mut [f64], old: &[f64], damping: f64) -> f64 {
    crate::kernel::damp(out, old, damping)
}

/// A residual as a queue key: NaN (from `-∞` entries) becomes `∞`, so the message is
/// recomputed rather than lost in the order.
#[inline]
pub(crate) fn priority(r: f64) -> f64 {
    if r.is_nan() { f64::INFINITY } else { r }
}

/// The change range `max_x d(x) − min_x d(x)` of `d = new − old` (entries equal in both,
/// `-∞` included, count as 0; a change to or from `-∞` gives `∞`). Adding `d` to a
/// cavity changes every log-message computed from it, once normalised to `max = 0`, by at
/// most this much in every entry: sum- and max-product updates do not expand it (the
/// message is a positive combination of the cavity's exponentials), and normalisation
/// moves an entry by at most the range.
#[inline]
pub(crate) fn change_range(new: &[f64], old: &[f64]) -> f64 {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (&a, &b) in new.iter().zip(old) {
        let d = if a == b { 0.0 } else { a - b };
        if !d.is_finite() {
            return f64::INFINITY;
        }
        lo = lo.min(d);
        hi = hi.max(d);
    }
    if hi >= lo { hi - lo } else { 0.0 }
}

/// Unnormalised log edge beliefs `θ_uv(a,b) + cavity_u(a) + cavity_v(b)`.
pub(crate) fn edge_beliefs(mrf: &PairwiseMrf, msgs: &[f64], bel: &[f64]) -> Vec<f64> {
    let off = edge_offsets(mrf);
    let mut out = vec![0.0; off[off.len() - 1]];
    let m = mrf.num_edges();
    let bounds: Vec<usize> = (0..m)
        .step_by(BLOCK_SLOTS)
        .chain(std::iter::once(m))
        .collect();
    let chunks = split_by(&mut out, &bounds, &off);
    // Extreme models: split beliefs so that cavities are exact with -∞ terms.
    let (mut fin, mut ninf) = (Vec::new(), Vec::new());
    if mrf.extreme {
        fin = vec![0.0; bel.len()];
        ninf = vec![0.0; bel.len()];
        for v in 0..mrf.num_nodes() {
            let (a, b) = (mrf.state_off[v], mrf.state_off[v + 1]);
            split_terms_into(mrf, msgs, v, &mut fin[a..b], &mut ninf[a..b]);
        }
    }
    let cav = |i: usize, m: f64| {
        if mrf.extreme {
            cavity(fin[i], ninf[i], m)
        } else {
            bel[i] - m
        }
    };
    chunks
        .into_par_iter()
        .zip(bounds.par_windows(2))
        .for_each(|(chunk, w)| {
            let base = off[w[0]];
            for e in w[0]..w[1] {
                let (u, v) = mrf.edges[e];
                let (u, v) = (u as usize, v as usize);
                let (ku, kv) = (mrf.num_states[u] as usize, mrf.num_states[v] as usize);
                let s = mrf.edge_slot[e] as usize;
                let r = mrf.in_rev[s] as usize;
                let (mo_u, mo_v) = (mrf.slot_offset(u, r), mrf.slot_offset(v, s));
                let (bu, bv) = (mrf.state_off[u], mrf.state_off[v]);
                // Kernel 2t is table t as given (shifted to max 0 on an extreme model).
                let ko = mrf.kernels.off[2 * mrf.edge_tables[e] as usize];
                let tab = &mrf.kernels.log[ko..ko + ku * kv];
                let dst = &mut chunk[off[e] - base..off[e + 1] - base];
                for a in 0..ku {
                    let cu = cav(bu + a, msgs[mo_u + a]);
                    for b in 0..kv {
                        let cv = cav(bv + b, msgs[mo_v + b]);
                        dst[a * kv + b] = cu + cv + tab[a * kv + b];
                    }
                }
            }
        });
    out
}

/// Residual BP's commit: every pending message out of `j` (in `cand`, largest residual `r`)
/// becomes the committed one (`msgs`, `sent`), each target's key rises by the estimate of
/// the change it causes, and `j`'s key becomes 0 (or, with damping, `r`: its next damped
/// updates are pending).
#[allow(clippy::too_many_arguments)]
fn commit_node(
    mrf: &PairwiseMrf,
    damping: f64,
    j: usize,
    r: f64,
    msgs: &mut [f64],
    sent: &mut [f64],
    cand: &[f64],
    queue: &mut BucketQueue,
) {
    let off = mrf.offsets();
    // Commit every message out of `j` and raise its target's key.
    for s in mrf.in_off[j]..mrf.in_off[j + 1] {
        let t = mrf.in_src[s] as usize;
        let (o0, o1) = (off.out_off[s], off.out_off[s + 1]);
        let to = off.rev_off[s];
        let (new, old) = (&cand[o0..o1], &sent[o0..o1]);
        for (m, &x) in msgs[to..to + (o1 - o0)].iter_mut().zip(new) {
            *m = x;
        }
        if o1 - o0 == 2 && !mrf.extreme {
            // Two states: the change of `t`'s belief since its messages were
            // computed is one number, the change of its log-odds.
            if new[0] == old[0] && new[1] == old[1] {
                continue;
            }
            let nk = &mut queue.node[t];
            nk.acc += ((new[1] - old[1]) - (new[0] - old[0])) as f32;
            nk.fresh = false;
            let key = nk.key();
            queue.set(t, key);
        } else {
            let d = change_range(new, old);
            if d > 0.0 {
                queue.raise(t, d);
            }
        }
    }
    let (o0, o1) = (off.out_off[mrf.in_off[j]], off.out_off[mrf.in_off[j + 1]]);
    // An element loop: the blocks are short, a `memcpy` call costs more.
    for (x, &c) in sent[o0..o1].iter_mut().zip(&cand[o0..o1]) {
        *x = c;
    }
    queue.committed(j, r, damping);
}

/// Residual BP's record of a node (16 bytes, so one cache line holds four). Its key is
/// `r0 + |acc|`.
#[derive(Copy, Clone, Debug)]
#[repr(align(16))]
pub(crate) struct NodeKey {
    /// The largest residual of the node's pending messages when last computed (or an
    /// estimate after a damped commit), plus, for a node with more than two states or on
    /// an extreme model, the change range of every message committed into it since.
    pub(crate) r0: f64,
    /// For a two-state node on an ordinary model: the change of its log-odds belief since
    /// its messages were last computed.
    /// Kept in `f32`: it only orders the queue.
    pub(crate) acc: f32,
    /// The node's bucket in [`BucketQueue`] (`NONE` when not queued).
    pub(crate) at: u16,
    /// Whether nothing was committed into the node since its messages were computed.
    pub(crate) fresh: bool,
}

impl NodeKey {
    /// The node's queue key (NaN read as `∞`).
    #[inline]
    pub(crate) fn key(&self) -> f64 {
        if self.fresh {
            self.r0
        } else {
            priority(self.r0 + f64::from(self.acc.abs()))
        }
    }
}

/// Priority queue of residual BP's nodes by key, in buckets: the bucket of a key `≥ tol`
/// (and `> 0`) is its bit pattern's top bits (`bits >> 54`, monotone in the key; a bucket
/// spans a factor of 4); smaller keys are not queued. Raising a key within its bucket
/// costs nothing; moving it pushes the node onto its new bucket and leaves the old entry
/// behind, skipped when popped (`at` records each node's bucket). A pop serves the
/// highest non-empty bucket whole, in increasing node order (memory order, so a bucket's
/// nodes are visited like a partial sequential sweep); nodes raised meanwhile wait for
/// their turn. Deterministic; within a factor 4 of the largest key.
pub(crate) struct BucketQueue {
    buckets: Vec<Vec<u32>>,
    /// The rest of the bucket being served, in decreasing node order (served from the end).
    batch: Vec<u32>,
    /// Per node: its residual record and its bucket (`at`).
    pub(crate) node: Vec<NodeKey>,
    top: usize,
    entries: usize,
    tol: f64,
}

impl BucketQueue {
    const NONE: u16 = u16::MAX;
    /// Buckets: every bucket index of a positive key, `∞` included.
    const SHIFT: u32 = 54;
    const BUCKETS: usize = (0x7ff0_0000_0000_0000_u64 >> Self::SHIFT) as usize + 1;

    pub(crate) fn new(n: usize, tol: f64) -> Self {
        Self {
            buckets: vec![Vec::new(); Self::BUCKETS],
            batch: Vec::new(),
            node: vec![
                NodeKey {
                    r0: 0.0,
                    acc: 0.0,
                    at: Self::NONE,
                    fresh: true,
                };
                n
            ],
            top: 0,
            entries: 0,
            tol,
        }
    }

    #[inline]
    fn bucket(&self, key: f64) -> u16 {
        // NaN is dropped too (never passed: keys go through `priority`).
        if key.is_nan() || key < self.tol || key <= 0.0 {
            Self::NONE
        } else {
            (key.to_bits() >> Self::SHIFT) as u16
        }
    }

    /// Sets node `v`'s key (queues, moves or drops it).
    #[inline(always)]
    pub(crate) fn set(&mut self, v: usize, key: f64) {
        let b = self.bucket(key);
        if b == self.node[v].at {
            return;
        }
        self.node[v].at = b;
        if b != Self::NONE {
            let b = usize::from(b);
            self.buckets[b].push(v as u32);
            self.top = self.top.max(b);
            self.entries += 1;
            if self.entries > 2 * self.node.len() + 1024 {
                self.compact();
            }
        }
    }

    /// Drops the stale entries: refills every bucket in node order.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        self.buckets.iter_mut().for_each(Vec::clear);
        for (v, nk) in self.node.iter().enumerate() {
            if nk.at != Self::NONE {
                self.buckets[usize::from(nk.at)].push(v as u32);
            }
        }
        self.entries = self.node.iter().filter(|nk| nk.at != Self::NONE).count();
    }

    /// Removes and returns a node of (about) the largest key, `None` if no key is queued.
    pub(crate) fn pop(&mut self) -> Option<usize> {
        if let Some(v) = self.batch.pop() {
            return Some(v as usize);
        }
        loop {
            let top = self.top;
            if !self.buckets[top].is_empty() {
                let mut bucket = std::mem::take(&mut self.buckets[top]);
                self.entries -= bucket.len();
                for &v in &bucket {
                    if usize::from(self.node[v as usize].at) == top {
                        self.node[v as usize].at = Self::NONE;
                        self.batch.push(v);
                    }
                }
                bucket.clear();
                self.buckets[top] = bucket;
                self.batch.sort_unstable_by(|a, b| b.cmp(a));
                if let Some(v) = self.batch.pop() {
                    return Some(v as usize);
                }
            }
            if top == 0 {
                return None;
            }
            self.top -= 1;
        }
    }

    /// Raises node `v`'s key by `d` (the change range of a message committed into it:
    /// its key becomes an estimate).
    #[inline]
    pub(crate) fn raise(&mut self, v: usize, d: f64) {
        let nk = &mut self.node[v];
        nk.r0 += d;
        nk.fresh = false;
        let key = nk.key();
        self.set(v, key);
    }

    /// Node `v`'s key after its pending messages (largest residual `r`) were committed:
    /// 0, exactly, as the pending messages are the ones just committed; with damping
    /// `r` (a damped commit is not the messages' fixed point: their next damped updates
    /// are pending, estimated by the largest change just committed).
    #[inline]
    pub(crate) fn committed(&mut self, v: usize, r: f64, damping: f64) {
        let nk = &mut self.node[v];
        nk.acc = 0.0;
        if damping > 0.0 {
            nk.fresh = r <= 0.0;
            nk.r0 = r;
        } else {
            nk.fresh = true;
            nk.r0 = 0.0;
        }
        let key = nk.r0;
        self.set(v, key);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.batch.is_empty() && self.node.iter().all(|nk| nk.at == Self::NONE)
    }
}

#[cfg(test)]
mod warm_start_tests {
    //! [`LoopyBp::run_from`]: a cold start is the old path bit for bit, a warm start ends
    //! where a cold one does, faster, for every schedule and kernel.

    use rand::{RngExt as _, SeedableRng as _};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::mrf::{MrfParts, PairTable};

    /// A `side x side` grid with diagonals (loopy), `k` states, random unary terms and one
    /// random table per edge scaled by `coupling`; every random term is scaled by
    /// `1 + eps` (a nearby model for the same seed); `extreme`: one zero potential per
    /// table; `observed`: every 7th variable clamped.
    fn grid(
        side: usize,
        k: usize,
        coupling: f64,
        eps: f64,
        seed: u64,
        extreme: bool,
        observed: bool,
    ) -> PairwiseMrf {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = side * side;
        let mut edges = Vec::new();
        for r in 0..side {
            for c in 0..side {
                let v = (r * side + c) as u32;
                if c + 1 < side {
                    edges.push((v, v + 1));
                }
                if r + 1 < side {
                    edges.push((v, v + side as u32));
                }
                if r + 1 < side && c + 1 < side {
                    edges.push((v, v + side as u32 + 1));
                }
            }
        }
        let unary = (0..n * k)
            .map(|_| rng.random_range(-1.0..1.0) * (1.0 + eps))
            .collect();
        let tables = (0..edges.len())
            .map(|_| {
                let mut t = PairTable::from_fn(k, k, |a, b| coupling * f64::from(u8::from(a == b)));
                for x in &mut t.log_values {
                    *x = (*x + rng.random_range(-0.5..0.5) * coupling) * (1.0 + eps);
                }
                if extreme {
                    t.log_values[1] = f64::NEG_INFINITY;
                }
                t
            })
            .collect();
        PairwiseMrf::new(MrfParts {
            num_states: vec![k; n],
            unary,
            edge_tables: (0..edges.len() as u32).collect(),
            edges,
            tables,
            evidence: (0..n)
                .map(|v| (observed && v % 7 == 3).then_some((v % k) as u32))
                .collect(),
        })
        .unwrap()
    }

    /// Every configuration the runs can take: schedule, kernel, damping, mode.
    fn configs() -> Vec<LoopyBp> {
        let mut out = Vec::new();
        for schedule in [Schedule::Flooding, Schedule::Sequential, Schedule::Residual] {
            for kernel in [BpKernel::Auto, BpKernel::Log] {
                for damping in [0.0, 0.3] {
                    for mode in [BpMode::SumProduct, BpMode::MaxProduct] {
                        out.push(LoopyBp {
                            schedule,
                            kernel,
                            damping,
                            mode,
                            max_iters: 60,
                            ..LoopyBp::default()
                        });
                    }
                }
            }
        }
        out
    }

    #[test]
    fn cold_start_is_bit_identical_to_run() {
        for (k, extreme, observed) in [(2, false, false), (3, false, true), (2, true, false)] {
            let mrf = grid(6, k, 1.2, 0.0, 11, extreme, observed);
            for bp in configs() {
                let old = bp.run(&mrf);
                let (cold, msgs) = bp.run_from(&mrf, None).unwrap();
                assert!(cold == old, "{bp:?} k {k}");
                assert_eq!(msgs.len(), mrf.message_len());
                // Uniform messages given explicitly are the same start.
                let (uni, msgs2) = bp.run_from(&mrf, Some(&BpMessages::uniform(&mrf))).unwrap();
                assert!(uni == old, "{bp:?} k {k} (uniform start)");
                assert_eq!(msgs2, msgs);
            }
        }
    }

    #[test]
    fn warm_start_ends_where_a_cold_start_does_in_fewer_sweeps() {
        let (mut compared, mut skipped) = (0, 0);
        for (k, extreme, observed) in [(2, false, false), (3, false, true), (2, true, false)] {
            let a = grid(7, k, 0.8, 0.0, 5, extreme, observed);
            let b = grid(7, k, 0.8, 0.02, 5, extreme, observed);
            for bp in configs() {
                if bp.mode == BpMode::MaxProduct && extreme {
                    continue;
                }
                let bp = LoopyBp {
                    tol: 1e-13,
                    max_iters: 5000,
                    ..bp
                };
                let (_, msgs) = bp.run_from(&a, None).unwrap();
                let cold = bp.run(&b);
                if !cold.convergence().converged {
                    // (zero potentials on a loopy graph: the finite parts of the messages
                    // can grow without bound, see the type's docs)
                    assert!(extreme, "{bp:?} k {k}: {:?}", cold.convergence());
                    skipped += 1;
                    continue;
                }
                compared += 1;
                let (warm, end) = bp.run_from(&b, Some(&msgs)).unwrap();
                assert!(
                    warm.convergence().converged,
                    "{bp:?}: {:?}",
                    warm.convergence()
                );
                // (max-product's max-marginals converge in no fewer sweeps from a nearby
                // model's messages here; the fixed point is the same)
                assert!(
                    bp.mode == BpMode::MaxProduct
                        || warm.convergence().iterations < cold.convergence().iterations,
                    "{bp:?} k {k}: warm {:?} cold {:?}",
                    warm.convergence(),
                    cold.convergence()
                );
                for v in 0..b.num_nodes() {
                    for (x, y) in warm.node(v).iter().zip(cold.node(v)) {
                        assert!((x - y).abs() < 1e-9, "{bp:?} k {k} node {v}: {x} vs {y}");
                    }
                }
                for e in 0..b.num_edges() {
                    let (x, y) = (warm.edge(e).unwrap(), cold.edge(e).unwrap());
                    for (x, y) in x.iter().zip(y) {
                        assert!((x - y).abs() < 1e-9, "{bp:?} k {k} edge {e}");
                    }
                }
                // Restarting at the fixed point (found to 1e-13): one sweep at tolerance
                // 1e-9 (residual BP: the 2m candidates, one sweep's work), same marginals.
                let loose = LoopyBp { tol: 1e-9, ..bp };
                let (again, _) = loose.run_from(&b, Some(&end)).unwrap();
                assert_eq!(
                    again.convergence().iterations,
                    1,
                    "{bp:?} k {k} extreme {extreme}: {:?} after {:?}",
                    again.convergence(),
                    warm.convergence()
                );
                assert!(again.convergence().converged);
                for v in 0..b.num_nodes() {
                    for (x, y) in again.node(v).iter().zip(warm.node(v)) {
                        assert!((x - y).abs() < 1e-12, "{bp:?}");
                    }
                }
            }
        }
        assert!(
            compared >= 56 && skipped <= 8,
            "{compared} compared, {skipped} skipped"
        );
    }

    #[test]
    fn warm_flooding_does_not_depend_on_the_thread_count() {
        // 60 x 60 grid with diagonals: about 21 000 slots, several parallel blocks.
        for k in [2, 3] {
            let a = grid(60, k, 0.9, 0.0, 3, false, false);
            let b = grid(60, k, 0.9, 0.05, 3, false, false);
            for kernel in [BpKernel::Auto, BpKernel::Log] {
                let bp = LoopyBp {
                    kernel,
                    max_iters: 30,
                    ..LoopyBp::default()
                };
                let (_, msgs) = bp.run_from(&a, None).unwrap();
                let run = |threads: usize| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap()
                        .install(|| bp.run_from(&b, Some(&msgs)).unwrap())
                };
                assert_eq!(run(1), run(2), "k {k} {kernel:?}");
                assert_eq!(run(2), run(3), "k {k} {kernel:?}");
            }
        }
    }

    #[test]
    fn starts_outside_the_linear_domain_fall_back_to_the_log_kernels() {
        for k in [2, 3] {
            // weak couplings: one fixed point, whatever the start
            let mrf = grid(6, k, 0.3, 0.0, 9, false, false);
            let bp = LoopyBp {
                tol: 1e-13,
                max_iters: 5000,
                ..LoopyBp::default()
            };
            // A valid but extreme start: every message puts e^-650 on state 0.
            let mut far = BpMessages::uniform(&mrf);
            for m in far.log.chunks_exact_mut(k) {
                m[0] = -650.0;
            }
            let plan = crate::linear::plan_for_tests(&mrf, k == 2);
            assert!(!crate::linear::init_fits(&mrf, &plan, far.as_slice()));
            let (warm, _) = bp.run_from(&mrf, Some(&far)).unwrap();
            let log = LoopyBp {
                kernel: BpKernel::Log,
                ..bp
            };
            let (warm_log, _) = log.run_from(&mrf, Some(&far)).unwrap();
            assert_eq!(warm, warm_log, "k {k}: the same log-domain run");
            let cold = bp.run(&mrf);
            assert!(warm.convergence().converged);
            for v in 0..mrf.num_nodes() {
                for (x, y) in warm.node(v).iter().zip(cold.node(v)) {
                    assert!((x - y).abs() < 1e-9, "k {k} node {v}");
                }
            }
        }
    }

    #[test]
    fn rejects_starting_messages_of_the_wrong_shape_or_value() {
        let mrf = grid(4, 2, 1.0, 0.0, 1, false, false);
        let other = grid(5, 2, 1.0, 0.0, 1, false, false);
        let bp = LoopyBp::default();
        let (_, msgs) = bp.run_from(&other, None).unwrap();
        assert!(matches!(
            bp.run_from(&mrf, Some(&msgs)),
            Err(InferError::DimensionMismatch { .. })
        ));
        let mut bad = BpMessages::uniform(&mrf);
        bad.log[5] = f64::NAN;
        assert!(matches!(
            bp.run_from(&mrf, Some(&bad)),
            Err(InferError::NonFinite { index: 5, .. })
        ));
        bad.log[5] = f64::INFINITY;
        assert!(matches!(
            bp.run_from(&mrf, Some(&bad)),
            Err(InferError::NonFinite { index: 5, .. })
        ));
    }
}
