//! Synchronous (flooding) loopy BP as a timely dataflow: one halo exchange per superstep.

use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use srl_infer::kernel::{
    BinaryBlock, KernelTables, LogBlock, VarKind, binary_belief, binary_pass, log_pass,
    normalize_log, plan_variable,
};
use srl_infer::{BpMode, Convergence, LoopyBp, PairwiseMrf};
use timely::worker::Worker;

use crate::error::DistError;
use crate::halo::{Halo, Routed};
use crate::partition::{Partition, Partitioner, splitmix64};
use crate::shard::{NONE, Shard, shard_file};

/// Largest log-potential magnitude this crate accepts, the bound of srl-infer's *ordinary*
/// models (`srl_infer`'s `ORDINARY_ABS_LOG_POTENTIAL`, `10^4`): beyond it (or with a `-∞`
/// potential) srl-infer shifts every table and takes a `-∞`-exact path that is not
/// reproduced here.
pub const MAX_ABS_LOG_POTENTIAL: f64 = 1e4;

/// Bytes of one packet's fixed fields on the wire (bincode, fixed-width integers: `to`,
/// `from` 4 each, `round`, `residual`, `first`, two vector lengths 8 each); the values add
/// 8 bytes each. timely adds its own per-batch message header (not counted).
pub const PACKET_HEADER_BYTES: u64 = 48;

/// Most values in one packet (256 KiB): a peer's cut messages of one round go in packets of
/// at most this many values, split at message boundaries, so that timely's network buffers
/// (1 MiB, doubled to fit a larger message and kept) stay at their initial size.
pub const CHUNK_VALUES: usize = 1 << 15;

/// What one worker sends another in one superstep (rounds 0 and 1: the setup check,
/// `ids` = count and key hash of the cut messages, then the verdict in `residual`; round
/// `t ≥ 2`: one iteration's cut messages in the agreed order, key order, in packets of at
/// most [`CHUNK_VALUES`] values starting with message `first`).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Packet {
    to: u32,
    from: u32,
    round: u64,
    residual: f64,
    /// Index (in the agreed order) of the first message in `vals`.
    first: u64,
    ids: Vec<u64>,
    vals: Vec<f64>,
}

impl Routed for Packet {
    fn to(&self) -> u32 {
        self.to
    }
    fn round(&self) -> u64 {
        self.round
    }
}

/// Distributed synchronous loopy belief propagation: the same algorithm, normalisation and
/// damping as srl-infer's [`LoopyBp`] with [`srl_infer::Schedule::Flooding`], run by timely
/// workers that each own a part of the variables.
///
/// Messages `m_{i→j}(x_j)` are log-space, normalised to `max_x m(x) = 0`, start at 0;
/// damping mixes log-messages `m ← (1 − λ) m_new + λ m_old` and renormalises; the residual
/// is the largest `|m_new − m_old|` over all messages, reduced across workers (max) every
/// iteration, and the run stops when it is below `tol` or after `max_iters` iterations.
/// Each worker runs srl-infer's own flooding pass over its variables
/// ([`srl_infer::kernel::binary_pass`] on two-state models without damping, where
/// srl-infer takes its linear-domain kernel and messages are ratios `m(1)/m(0)`;
/// [`srl_infer::kernel::log_pass`] otherwise), so the marginals agree with srl-infer's to
/// rounding (the tests check `1e-12`). Where srl-infer takes its linear-domain kernels
/// for more than two states (every table exp-safe, no damping, sum-product) srl-dist
/// still runs `log_pass`: the same messages up to rounding, not bit for bit.
///
/// | field | default | meaning |
/// |---|---|---|
/// | `max_iters` | 100 | iteration cap |
/// | `tol` | 1e-6 | stop when the global max residual is below it |
/// | `damping` | 0 | `λ`; NaN counts as 0, others are clamped into `[0, 0.99]` |
/// | `mode` | `SumProduct` | sum- or max-product |
/// | `partition` | `Range` | see [`Partition`] |
///
/// # Dataflow
/// One timely input of packets, exchanged by destination worker, into a sink that files
/// them per worker; a probe tells the worker when round `t` has been delivered everywhere.
/// Every worker sends a peer its cut messages in ascending message-key order (`2 e +
/// side`), which both sides know from their shards, so no message ids cross the network:
/// two tiny setup rounds only check that the shards agree (count and hash of the keys per
/// pair of workers). Round `t` carries only the values and the sender's residual: one
/// `f64` per cut message (the ratio `m(1)/m(0)`) on the two-state linear path, `k_j`
/// log-values otherwise, in packets of at most [`CHUNK_VALUES`] values (at least one per
/// pair of workers and round, so the residual reduction needs no second exchange).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistBp {
    /// Iteration cap.
    pub max_iters: usize,
    /// Convergence tolerance on the largest log-message change.
    pub tol: f64,
    /// Damping `λ ∈ [0, 1)`.
    pub damping: f64,
    /// Sum- or max-product.
    pub mode: BpMode,
    /// How variables are assigned to workers (whole-model runs; a sharded run uses the
    /// partition its shards were written with).
    pub partition: Partition,
    /// Worker 0 writes one line per iteration to stderr (iteration, global residual,
    /// messages exchanged by all workers); the binary sets it when stderr is a terminal.
    #[serde(default)]
    pub progress: bool,
}

impl Default for DistBp {
    fn default() -> Self {
        Self::from_loopy(&LoopyBp::default())
    }
}

/// Traffic and work of one worker over a run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkerStats {
    /// Variables owned.
    pub nodes: u64,
    /// Directed messages the worker computes per iteration (`Σ deg` of its variables).
    pub messages_per_iter: u64,
    /// Of those, messages to variables of other workers (cut messages).
    pub remote_messages_per_iter: u64,
    /// Payload bytes sent to other workers per iteration: 8 bytes per value of the cut
    /// messages (one per message on the two-state linear path, `k_target` otherwise) plus
    /// [`PACKET_HEADER_BYTES`] per destination worker.
    pub bytes_sent_per_iter: u64,
    /// Bytes of the two setup rounds (headers and three `u64` per peer).
    pub setup_bytes: u64,
    /// Seconds spent in the iterations (compute and exchange), wall clock.
    pub seconds: f64,
    /// Of those, seconds computing messages (the rest is exchange and waiting).
    pub compute_seconds: f64,
    /// Payload bytes sent to other workers over the whole run (`bytes_sent_per_iter` times
    /// the iterations).
    pub bytes_sent: u64,
}

/// The result of one worker: marginals of its own variables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkerOutput {
    /// Worker index.
    pub worker: usize,
    /// Owned variables, ascending.
    pub nodes: Vec<u32>,
    /// Row offsets into `node_log` (length `nodes.len() + 1`).
    pub node_off: Vec<usize>,
    /// Normalised log-marginals of the owned variables, concatenated (`k_v` each).
    pub node_log: Vec<f64>,
    /// The global convergence report (identical on every worker).
    pub convergence: Convergence,
    /// Traffic and work.
    pub stats: WorkerStats,
}

/// Marginals of the variables held by this process's workers (all of them when the run
/// is one process).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistMarginals {
    nodes: Vec<u32>,
    off: Vec<usize>,
    log: Vec<f64>,
    prob: Vec<f64>,
    convergence: Convergence,
    stats: Vec<WorkerStats>,
    workers: Vec<usize>,
}

impl DistMarginals {
    /// Gathers worker outputs (any order) into one table sorted by variable.
    #[must_use]
    pub fn from_outputs(mut outputs: Vec<WorkerOutput>) -> Self {
        outputs.sort_by_key(|o| o.worker);
        let convergence = outputs.first().map_or(
            Convergence {
                converged: true,
                iterations: 0,
                max_residual: 0.0,
            },
            |o| o.convergence,
        );
        let mut rows: Vec<(u32, &[f64])> = Vec::new();
        for o in &outputs {
            for (i, &v) in o.nodes.iter().enumerate() {
                rows.push((v, &o.node_log[o.node_off[i]..o.node_off[i + 1]]));
            }
        }
        rows.sort_by_key(|r| r.0);
        let mut off = vec![0];
        let mut log = Vec::new();
        let mut nodes = Vec::with_capacity(rows.len());
        for (v, r) in rows {
            nodes.push(v);
            log.extend_from_slice(r);
            off.push(log.len());
        }
        let prob = log.iter().map(|x| x.exp()).collect();
        Self {
            nodes,
            off,
            log,
            prob,
            convergence,
            stats: outputs.iter().map(|o| o.stats).collect(),
            workers: outputs.iter().map(|o| o.worker).collect(),
        }
    }

    /// Variables held, ascending.
    #[must_use]
    pub fn nodes(&self) -> &[u32] {
        &self.nodes
    }

    /// Marginal probabilities of variable `v` (length `k_v`), or `None` if another process
    /// holds it.
    #[must_use]
    pub fn node(&self, v: usize) -> Option<&[f64]> {
        let i = self.nodes.binary_search(&u32::try_from(v).ok()?).ok()?;
        Some(&self.prob[self.off[i]..self.off[i + 1]])
    }

    /// Log-marginals of variable `v`, or `None` if another process holds it.
    #[must_use]
    pub fn node_log(&self, v: usize) -> Option<&[f64]> {
        let i = self.nodes.binary_search(&u32::try_from(v).ok()?).ok()?;
        Some(&self.log[self.off[i]..self.off[i + 1]])
    }

    /// The global convergence report.
    #[must_use]
    pub fn convergence(&self) -> Convergence {
        self.convergence
    }

    /// Per-worker statistics of this process's workers, by worker index.
    #[must_use]
    pub fn stats(&self) -> &[WorkerStats] {
        &self.stats
    }

    /// The cluster-wide indices of this process's workers, in the order of
    /// [`DistMarginals::stats`].
    #[must_use]
    pub fn workers(&self) -> &[usize] {
        &self.workers
    }
}

/// A slot whose reverse message has no destination (inconsistent shard or a part too large
/// for 32-bit offsets).
const MISSING: u32 = u32::MAX;

/// Marks an unknown neighbour in [`Part::build`].
const UNKNOWN: u32 = u32::MAX;

/// One worker's share of the model, built from its [`Shard`]: its variables, their
/// incoming slots (grouped by variable, in edge order: srl-infer's order), the kernels, and
/// per slot the keys of the message in and of the reverse message out.
pub(crate) struct Part {
    pub(crate) me: usize,
    pub(crate) peers: usize,
    pub(crate) nodes: Vec<u32>,
    /// Local state offsets (length `nodes + 1`).
    pub(crate) st_off: Vec<usize>,
    /// Unary log-potentials with evidence applied (`-∞` outside the observed state).
    pub(crate) eff: Vec<f64>,
    /// Evidence of each variable ([`NONE`]: free).
    pub(crate) evidence: Vec<u32>,
    /// Gibbs colour of each variable ([`NONE`]: observed).
    pub(crate) colour: Vec<u32>,
    pub(crate) num_colours: usize,
    /// Slot range of each local variable (length `nodes + 1`).
    pub(crate) in_off: Vec<usize>,
    /// Offset of each local variable's first incoming log-message entry (`k_v` per slot).
    pub(crate) msg_base: Vec<usize>,
    /// Per slot: offset of the outgoing log-message in the source-grouped array (length
    /// `slots + 1`; the difference is the neighbour's state count).
    pub(crate) out_off: Vec<usize>,
    /// Per slot: kernel of the message into the slot's variable (the reverse uses `^ 1`).
    pub(crate) in_kernel: Vec<u32>,
    pub(crate) kernels: KernelTables,
    /// Per slot: global id of the neighbour.
    pub(crate) src: Vec<u32>,
    /// Per slot: the neighbour's owner.
    pub(crate) src_owner: Vec<u32>,
    /// Per slot: key (`2 e + [target is the second endpoint]`) of the message in.
    in_key: Vec<u64>,
    /// Common state count of the whole model (0: mixed) and whether every kernel is safe.
    uniform_k: usize,
    all_safe: bool,
    /// Edges of the whole model.
    num_edges: u64,
}

impl Part {
    /// Builds the part from its shard (consumed: its arrays move into the part).
    pub(crate) fn build(shard: Shard, me: usize, peers: usize) -> Self {
        let nl = shard.nodes.len();
        let mut st_off = Vec::with_capacity(nl + 1);
        st_off.push(0);
        let mut eff = Vec::with_capacity(shard.unary.len());
        let mut msg_base = Vec::with_capacity(nl);
        let slots = shard.num_slots();
        let mut out_off = Vec::with_capacity(slots + 1);
        out_off.push(0);
        let mut src_owner = Vec::with_capacity(slots);
        let mut in_key = Vec::with_capacity(slots);
        let mut base = 0;
        for i in 0..nl {
            let kv = shard.num_states[i] as usize;
            let (a, z) = (st_off[i], st_off[i] + kv);
            let ev = shard.evidence[i];
            eff.extend(shard.unary[a..z].iter().enumerate().map(|(x, &t)| {
                if ev != NONE && ev as usize != x {
                    f64::NEG_INFINITY
                } else {
                    t
                }
            }));
            st_off.push(z);
            msg_base.push(base);
            for s in shard.in_off[i]..shard.in_off[i + 1] {
                let u = shard.slot_src[s];
                base += kv;
                let ks = shard.states_of(u).unwrap_or(1) as usize;
                out_off.push(out_off[out_off.len() - 1] + ks);
                src_owner.push(shard.owner_of(u).unwrap_or(UNKNOWN));
                in_key.push(
                    2 * shard.slot_edge[s] + u64::from(shard.slot_kernel[s].is_multiple_of(2)),
                );
            }
        }
        let mut kernels = KernelTables::new();
        for t in &shard.tables {
            kernels.push_table(t, 0.0);
        }
        Self {
            me,
            peers,
            st_off,
            eff,
            num_colours: shard.num_colours as usize,
            msg_base,
            out_off,
            kernels,
            src_owner,
            in_key,
            uniform_k: shard.uniform_k as usize,
            all_safe: shard.all_safe,
            num_edges: shard.num_edges,
            nodes: shard.nodes,
            evidence: shard.evidence,
            colour: shard.colour,
            in_off: shard.in_off,
            in_kernel: shard.slot_kernel,
            src: shard.slot_src,
        }
    }

    /// Key of the message sent back along slot `s` (the same edge, the other side).
    #[inline]
    fn out_key(&self, s: usize) -> u64 {
        self.in_key[s] ^ 1
    }

    fn slots(&self) -> usize {
        self.src.len()
    }
}

/// Where every message goes and comes from in one message layout (`width(s)` entries per
/// message: 1 for two-state ratios, `k_target` for log-messages).
struct Routes {
    /// Incoming message array length (local part).
    inc_len: usize,
    /// Per slot: offset where the message sent back along the slot goes (an incoming
    /// offset, or `inc_len + ` a position in a send buffer).
    dest: Vec<u32>,
    /// Send buffer of each peer: `inc_len + send_off[w] .. inc_len + send_off[w + 1]`.
    send_off: Vec<usize>,
    /// Per peer: the packets of a round, as `(first message, value range)` in the send
    /// buffer (relative to `send_off[w]`), at most [`CHUNK_VALUES`] values each; at least
    /// one (possibly empty) packet per peer.
    chunks: Vec<Vec<(u64, std::ops::Range<usize>)>>,
    /// Per peer: `(offset, width)` of each message it sends here, in its send order.
    recv: Vec<Vec<(usize, usize)>>,
    /// Per peer: messages sent to it per iteration, and a hash of their keys in order.
    send_check: Vec<(u64, u64)>,
    /// Per peer: the same for the messages received from it.
    recv_check: Vec<(u64, u64)>,
}

fn key_hash(h: u64, key: u64) -> u64 {
    splitmix64(h ^ key)
}

impl Routes {
    /// `ratio`: one entry per message (two-state ratios), else `k_target` entries.
    #[allow(clippy::needless_range_loop)] // parallel per-slot arrays
    fn new(part: &Part, ratio: bool) -> Self {
        let slots = part.slots();
        let peers = part.peers;
        let mut inc_at = Vec::with_capacity(slots);
        for i in 0..part.nodes.len() {
            let kv = part.st_off[i + 1] - part.st_off[i];
            for s in part.in_off[i]..part.in_off[i + 1] {
                inc_at.push(if ratio {
                    s
                } else {
                    part.msg_base[i] + (s - part.in_off[i]) * kv
                });
            }
        }
        let inc_len = if ratio {
            slots
        } else {
            part.st_off
                .windows(2)
                .zip(part.in_off.windows(2))
                .map(|(a, b)| (a[1] - a[0]) * (b[1] - b[0]))
                .sum()
        };
        let width_out = |s: usize| {
            if ratio {
                1
            } else {
                part.out_off[s + 1] - part.out_off[s]
            }
        };
        // Local targets by key; remote messages per peer in key order (both sides sort the
        // same keys, so no setup round is needed to agree on the order).
        let mut local: Vec<(u64, usize)> = Vec::new();
        let mut out_remote: Vec<Vec<(u64, usize)>> = vec![Vec::new(); peers];
        let mut in_remote: Vec<Vec<(u64, usize, usize)>> = vec![Vec::new(); peers];
        for i in 0..part.nodes.len() {
            let kv = part.st_off[i + 1] - part.st_off[i];
            for s in part.in_off[i]..part.in_off[i + 1] {
                let w = part.src_owner[s] as usize;
                if w == part.me {
                    local.push((part.in_key[s], inc_at[s]));
                } else if w < peers {
                    out_remote[w].push((part.out_key(s), s));
                    in_remote[w].push((part.in_key[s], inc_at[s], if ratio { 1 } else { kv }));
                }
            }
        }
        local.sort_unstable();
        // Offsets are u32 (half the index traffic of the pass); a part whose messages need
        // more than 2^32 - 1 entries is refused by the caller (`dest` then holds MISSING).
        let mut dest = vec![MISSING; slots];
        for s in 0..slots {
            if part.src_owner[s] as usize == part.me
                && let Ok(j) = local.binary_search_by_key(&part.out_key(s), |x| x.0)
            {
                dest[s] = u32::try_from(local[j].1).unwrap_or(MISSING);
            }
        }
        let mut send_off = vec![0usize; peers + 1];
        let mut send_check = vec![(0u64, 0u64); peers];
        let mut chunks = vec![Vec::new(); peers];
        for w in 0..peers {
            out_remote[w].sort_unstable();
            let mut at = send_off[w];
            let mut chunk = (0u64, 0usize);
            for (j, &(key, s)) in out_remote[w].iter().enumerate() {
                let width = width_out(s);
                let here = at - send_off[w];
                if here > chunk.1 && here + width - chunk.1 > CHUNK_VALUES {
                    chunks[w].push((chunk.0, chunk.1..at - send_off[w]));
                    chunk = (j as u64, at - send_off[w]);
                }
                dest[s] = u32::try_from(inc_len + at).unwrap_or(MISSING);
                at += width;
                send_check[w] = (send_check[w].0 + 1, key_hash(send_check[w].1, key));
            }
            chunks[w].push((chunk.0, chunk.1..at - send_off[w]));
            send_off[w + 1] = at;
        }
        let mut recv_check = vec![(0u64, 0u64); peers];
        let recv = in_remote
            .into_iter()
            .enumerate()
            .map(|(w, mut list)| {
                list.sort_unstable();
                for &(key, _, _) in &list {
                    recv_check[w] = (recv_check[w].0 + 1, key_hash(recv_check[w].1, key));
                }
                list.into_iter().map(|(_, o, k)| (o, k)).collect()
            })
            .collect();
        Self {
            inc_len,
            dest,
            send_off,
            chunks,
            recv,
            send_check,
            recv_check,
        }
    }
}

/// Checks that `mrf` is an ordinary model (every log-potential finite and at most
/// [`MAX_ABS_LOG_POTENTIAL`] in magnitude).
///
/// # Errors
/// [`DistError::ExtremeModel`] naming the first offending value.
pub fn check_ordinary(mrf: &PairwiseMrf) -> Result<(), DistError> {
    let bad = |x: f64| !x.is_finite() || x.abs() > MAX_ABS_LOG_POTENTIAL;
    if let Some((i, &x)) = mrf.unary_all().iter().enumerate().find(|(_, x)| bad(**x)) {
        return Err(DistError::ExtremeModel {
            what: "unary log-potential",
            index: i,
            value: x,
        });
    }
    for (t, tab) in mrf.tables().iter().enumerate() {
        if let Some(&x) = tab.log_values.iter().find(|x| bad(**x)) {
            return Err(DistError::ExtremeModel {
                what: "pairwise table",
                index: t,
                value: x,
            });
        }
    }
    Ok(())
}

/// The greedy colouring of the whole model (srl-infer's), for [`Shard::from_mrf`].
pub(crate) fn model_colours(mrf: &PairwiseMrf) -> (Vec<u32>, u32) {
    let n = mrf.num_nodes();
    let mut in_off = Vec::with_capacity(n + 1);
    in_off.push(0);
    let mut in_src = Vec::with_capacity(mrf.num_directed_edges());
    for v in 0..n {
        in_src.extend(mrf.neighbors(v).map(|(u, _)| u as u32));
        in_off.push(in_src.len());
    }
    srl_infer::kernel::greedy_colours(&in_off, &in_src, |v| mrf.evidence(v).is_some())
}

impl DistBp {
    /// The distributed twin of a [`LoopyBp`] configuration (its schedule and beliefs
    /// fields do not apply: the schedule is flooding, only node marginals are computed).
    #[must_use]
    pub fn from_loopy(bp: &LoopyBp) -> Self {
        Self {
            max_iters: bp.max_iters,
            tol: bp.tol,
            damping: bp.damping,
            mode: bp.mode,
            partition: Partition::Range,
            progress: false,
        }
    }

    fn damping(&self) -> f64 {
        if self.damping.is_nan() {
            0.0
        } else {
            self.damping.clamp(0.0, 0.99)
        }
    }

    /// Runs this worker's part inside an existing timely execution, with the built-in
    /// [`Partition`] in `self.partition`. Every worker of the execution must call it with
    /// the same model and configuration.
    ///
    /// # Errors
    /// As [`DistBp::run_worker_shard`].
    pub fn run_worker(
        &self,
        worker: &mut Worker,
        mrf: &PairwiseMrf,
    ) -> Result<WorkerOutput, DistError> {
        self.run_worker_with(worker, mrf, &self.partition)
    }

    /// [`DistBp::run_worker`] with a custom [`Partitioner`] (the hook for a better
    /// partition than id ranges or hashing; it must be deterministic).
    ///
    /// # Errors
    /// As [`DistBp::run_worker_shard`].
    pub fn run_worker_with(
        &self,
        worker: &mut Worker,
        mrf: &PairwiseMrf,
        partitioner: &dyn Partitioner,
    ) -> Result<WorkerOutput, DistError> {
        let (me, peers) = (worker.index(), worker.peers());
        // Gibbs colours are not needed for BP.
        let colour: Vec<u32> = (0..mrf.num_nodes())
            .map(|v| if mrf.evidence(v).is_some() { NONE } else { 0 })
            .collect();
        let shard = Shard::from_mrf(mrf, partitioner, me, peers, &colour, 1);
        self.run_worker_owned(worker, shard)
    }

    /// Runs this worker's part from its shard (worker `w` of `W` runs part `w` of `W`);
    /// every worker of the execution must call it (with its own shard) or
    /// [`DistBp::run_worker_with`] with the same configuration.
    ///
    /// Two setup rounds check, before any iteration, that the shards agree: every pair
    /// of workers expects the same cut messages (count and a hash of their keys). If any
    /// worker's check fails, every worker returns the error.
    ///
    /// # Errors
    /// [`DistError::Argument`] if the shard is for another part or part count;
    /// [`DistError::Inconsistent`] if the shards disagree.
    ///
    /// # Panics
    /// If the shard's own arrays disagree (lengths, offsets, kernel indices): a shard from
    /// [`Shard::read`] or [`Shard::from_mrf`] never does; one assembled by hand from the
    /// public fields may.
    pub fn run_worker_shard(
        &self,
        worker: &mut Worker,
        shard: &Shard,
    ) -> Result<WorkerOutput, DistError> {
        self.run_worker_owned(worker, shard.clone())
    }

    /// [`DistBp::run_worker_shard`] consuming the shard (its arrays move into the worker's
    /// state, so the shard is not held twice).
    #[allow(clippy::needless_range_loop, clippy::too_many_lines)] // parallel per-variable arrays
    fn run_worker_owned(
        &self,
        worker: &mut Worker,
        shard: Shard,
    ) -> Result<WorkerOutput, DistError> {
        let (me, peers) = (worker.index(), worker.peers());
        let mut halo: Halo<Packet> = Halo::new(worker);
        let mut problem: Option<DistError> = None;
        if shard.part as usize != me || shard.parts as usize != peers {
            problem = Some(DistError::Argument(format!(
                "worker {me} of {peers} was given shard {} of {}",
                shard.part, shard.parts
            )));
        }
        let part = Part::build(shard, me, peers);
        let ratio = self.mode == BpMode::SumProduct
            && self.damping() == 0.0
            && part.uniform_k == 2
            && part.all_safe;
        let routes = Routes::new(&part, ratio);
        if problem.is_none() && routes.dest.contains(&MISSING) {
            problem = Some(DistError::Inconsistent(format!(
                "worker {me}: a message to one of its own variables has no slot (the shard is inconsistent), or the part needs more than 2^32 - 1 message entries (use more parts)"
            )));
        }
        // Setup round 0: message counts and key hashes per pair; round 1: every verdict.
        let mut round = 0u64;
        let cut_here: u64 = routes.send_check.iter().map(|c| c.0).sum();
        for w in (0..peers).filter(|&w| w != me) {
            let (count, hash) = routes.send_check[w];
            halo.send(Packet {
                to: w as u32,
                from: me as u32,
                round,
                residual: 0.0,
                first: 0,
                ids: vec![count, hash, cut_here],
                vals: Vec::new(),
            });
        }
        let mut cut_total = cut_here;
        for p in halo.deliver(worker, round) {
            let from = p.from as usize;
            let got = (
                p.ids.first().copied().unwrap_or(0),
                p.ids.get(1).copied().unwrap_or(0),
            );
            cut_total += p.ids.get(2).copied().unwrap_or(0);
            if problem.is_none() && routes.recv_check.get(from) != Some(&got) {
                problem = Some(DistError::Inconsistent(format!(
                    "worker {from} sends worker {me} {} messages per iteration, worker {me} expects {} (or their ids differ): the shards do not belong together",
                    got.0,
                    routes.recv_check.get(from).map_or(0, |c| c.0)
                )));
            }
        }
        round += 1;
        for w in (0..peers).filter(|&w| w != me) {
            halo.send(Packet {
                to: w as u32,
                from: me as u32,
                round,
                residual: f64::from(u8::from(problem.is_some())),
                first: 0,
                ids: Vec::new(),
                vals: Vec::new(),
            });
        }
        let mut failed_elsewhere = None;
        for p in halo.deliver(worker, round) {
            if p.residual != 0.0 {
                failed_elsewhere = Some(p.from);
            }
        }
        if let Some(e) = problem {
            return Err(e);
        }
        if let Some(w) = failed_elsewhere {
            return Err(DistError::Inconsistent(format!(
                "worker {w} found its shard inconsistent with the others"
            )));
        }
        let mut stats = WorkerStats {
            nodes: part.nodes.len() as u64,
            messages_per_iter: part.slots() as u64,
            remote_messages_per_iter: cut_here,
            ..WorkerStats::default()
        };
        stats.bytes_sent_per_iter = (0..peers)
            .filter(|&w| w != me)
            .map(|w| {
                8 * (routes.send_off[w + 1] - routes.send_off[w]) as u64
                    + PACKET_HEADER_BYTES * routes.chunks[w].len() as u64
            })
            .sum();
        stats.setup_bytes = 2 * (peers.saturating_sub(1) as u64) * PACKET_HEADER_BYTES
            + 24 * (peers.saturating_sub(1) as u64);
        let total = routes.inc_len + routes.send_off[peers];
        let init = if ratio { 1.0 } else { 0.0 };
        let mut old = vec![init; total];
        let mut new = vec![init; total];
        let prev_len = if ratio {
            part.slots()
        } else {
            part.out_off[part.slots()]
        };
        let mut prev = vec![init; prev_len];
        let kmax = part
            .st_off
            .windows(2)
            .map(|w| w[1] - w[0])
            .chain(part.out_off.windows(2).map(|w| w[1] - w[0]))
            .max()
            .unwrap_or(1)
            .max(1);
        let mut scratch = vec![0.0; 5 * kmax];
        let mut logs = Vec::new();
        let kind: Vec<VarKind>;
        let unary_ratio: Vec<f64>;
        if ratio {
            let ranges: Vec<f64> = (0..part.kernels.len())
                .map(|q| part.kernels.range(q))
                .collect();
            let mut lin = [0.0; 2];
            kind = (0..part.nodes.len())
                .map(|i| {
                    let ev = part.evidence[i];
                    plan_variable(
                        &part.eff[2 * i..2 * i + 2],
                        (ev != NONE).then_some(ev),
                        true,
                        part.in_kernel[part.in_off[i]..part.in_off[i + 1]]
                            .iter()
                            .map(|&q| ranges[q as usize]),
                        &mut lin,
                    )
                })
                .collect();
            unary_ratio = (0..part.nodes.len())
                .map(|i| {
                    if kind[i] == VarKind::Linear {
                        (part.eff[2 * i + 1] - part.eff[2 * i]).exp()
                    } else {
                        0.0
                    }
                })
                .collect();
        } else {
            kind = Vec::new();
            unary_ratio = Vec::new();
        }
        let damping = self.damping();
        let none = part.num_edges == 0;
        let mut convergence = Convergence {
            converged: none,
            iterations: 0,
            max_residual: if none { 0.0 } else { f64::INFINITY },
        };
        let mut broken: Option<DistError> = None;
        let start = Instant::now();
        let nl = part.nodes.len();
        // values received from each peer this superstep (reused, not allocated per round)
        let mut got = vec![0usize; peers];
        while !convergence.converged && convergence.iterations < self.max_iters {
            round += 1;
            let t0 = Instant::now();
            let mut residual = if ratio {
                let block = BinaryBlock {
                    in_off: &part.in_off,
                    kind: &kind,
                    unary_ratio: &unary_ratio,
                    unary_log: &part.eff,
                    in_kernel: &part.in_kernel,
                    kernel_off: &part.kernels.off,
                    kernel_exp: &part.kernels.exp,
                };
                let dest = &routes.dest;
                binary_pass(
                    &block,
                    0..nl,
                    &old,
                    &mut prev,
                    |s, r| new[dest[s] as usize] = r,
                    &mut logs,
                )
            } else {
                let block = LogBlock {
                    state_off: &part.st_off,
                    unary_log: &part.eff,
                    in_off: &part.in_off,
                    msg_base: &part.msg_base,
                    out_off: &part.out_off,
                    in_kernel: &part.in_kernel,
                    kernels: part.kernels.view(),
                    uniform_k: part.uniform_k,
                    all_safe: part.all_safe,
                };
                let r = log_pass(
                    &block,
                    self.mode,
                    damping,
                    0..nl,
                    &old,
                    &mut prev,
                    &mut scratch,
                );
                for (s, &d) in routes.dest.iter().enumerate() {
                    let d = d as usize;
                    let m = &prev[part.out_off[s]..part.out_off[s + 1]];
                    new[d..d + m.len()].copy_from_slice(m);
                }
                r
            };
            stats.compute_seconds += t0.elapsed().as_secs_f64();
            for w in (0..peers).filter(|&w| w != me) {
                let base = routes.inc_len + routes.send_off[w];
                for (first, r) in &routes.chunks[w] {
                    halo.send(Packet {
                        to: w as u32,
                        from: me as u32,
                        round,
                        residual,
                        first: *first,
                        ids: Vec::new(),
                        vals: new[base + r.start..base + r.end].to_vec(),
                    });
                }
            }
            got.fill(0);
            for p in halo.deliver(worker, round) {
                residual = residual.max(p.residual);
                let from = p.from as usize;
                let offs = routes.recv.get(from).map_or(&[][..], Vec::as_slice);
                match scatter(offs, p.first, &p.vals, &mut new) {
                    Some(count) => got[from] += count,
                    None => {
                        broken.get_or_insert_with(|| {
                            DistError::Inconsistent(format!(
                                "worker {from} sent {} values from message {} in round {round}, which do not fit what worker {me} expects",
                                p.vals.len(),
                                p.first
                            ))
                        });
                    }
                }
            }
            for (w, offs) in routes.recv.iter().enumerate() {
                if got[w] != offs.len() {
                    broken.get_or_insert_with(|| {
                        DistError::Inconsistent(format!(
                            "worker {me} received {} of the {} messages of worker {w} in round {round}",
                            got[w],
                            offs.len()
                        ))
                    });
                }
            }
            std::mem::swap(&mut old, &mut new);
            convergence.iterations += 1;
            convergence.max_residual = residual;
            convergence.converged = residual < self.tol;
            stats.bytes_sent += stats.bytes_sent_per_iter;
            if self.progress && me == 0 {
                progress_line(convergence.iterations, residual, cut_total);
            }
        }
        stats.seconds = start.elapsed().as_secs_f64();
        if let Some(e) = broken {
            return Err(e);
        }
        let mut node_log = part.eff.clone();
        for i in 0..nl {
            let (a, z) = (part.st_off[i], part.st_off[i + 1]);
            let (s0, s1) = (part.in_off[i], part.in_off[i + 1]);
            let b = &mut node_log[a..z];
            if ratio {
                let x = binary_belief(kind[i], [b[0], b[1]], &old[s0..s1]);
                b.copy_from_slice(&x);
            } else {
                let kv = z - a;
                let base = part.msg_base[i];
                for m in old[base..base + kv * (s1 - s0)].chunks_exact(kv) {
                    for (x, &y) in b.iter_mut().zip(m) {
                        *x += y;
                    }
                }
            }
            normalize_log(b);
        }
        Ok(WorkerOutput {
            worker: me,
            nodes: part.nodes.clone(),
            node_off: part.st_off.clone(),
            node_log,
            convergence,
            stats,
        })
    }

    /// Runs on a timely execution described by `config` (`timely::Config::thread()`,
    /// `timely::Config::process(w)`, or a cluster configuration, e.g. from
    /// `timely::Config::from_args`), and gathers the marginals of this process's workers.
    ///
    /// # Errors
    /// [`DistError::ExtremeModel`] for a model outside srl-infer's ordinary range;
    /// [`DistError::Timely`] if timely cannot start (e.g. a cluster peer is unreachable) or
    /// a worker fails.
    pub fn run(
        &self,
        mrf: Arc<PairwiseMrf>,
        config: timely::Config,
    ) -> Result<DistMarginals, DistError> {
        check_ordinary(&mrf)?;
        let cfg = *self;
        gather(timely::execute(config, move |worker| {
            cfg.run_worker(worker, &mrf)
        }))
    }

    /// Runs from shards: this process's workers run the parts `shards` holds, in worker
    /// order (worker `w` of the execution runs the shard whose `part` is `w`; a process
    /// with workers `a..b` of the cluster passes the shards `a..b`, e.g. from
    /// [`read_shards`]). Each process reads only its own shards.
    ///
    /// # Errors
    /// [`DistError::Argument`] if a worker finds no shard for its index;
    /// [`DistError::Inconsistent`] if the shards do not belong together; [`DistError::Timely`]
    /// as [`DistBp::run`].
    pub fn run_shards(
        &self,
        shards: Vec<Shard>,
        config: timely::Config,
    ) -> Result<DistMarginals, DistError> {
        let cfg = *self;
        let shards = ShardSlots::new(shards);
        gather(timely::execute(config, move |worker| {
            match shards.take(worker.index()) {
                Some(shard) => cfg.run_worker_owned(worker, shard),
                None => {
                    // Take part in the setup rounds so the others stop too.
                    let empty = Shard::empty(worker.index(), worker.peers());
                    cfg.run_worker_owned(worker, empty)
                        .and(Err(no_shard(worker.index())))
                }
            }
        }))
    }

    /// [`DistBp::run`] on `workers` threads of this process.
    ///
    /// # Errors
    /// As [`DistBp::run`].
    pub fn run_threads(
        &self,
        mrf: Arc<PairwiseMrf>,
        workers: usize,
    ) -> Result<DistMarginals, DistError> {
        self.run(mrf, threads_config(workers))
    }
}

/// A shard of either kind, by the part it holds.
pub(crate) trait PartOf {
    /// The part index.
    fn part_index(&self) -> usize;
}

impl PartOf for Shard {
    fn part_index(&self) -> usize {
        self.part as usize
    }
}

impl PartOf for crate::graph_shard::GraphShard {
    fn part_index(&self) -> usize {
        self.part as usize
    }
}

/// This process's shards (model or graph shards), handed to its worker threads by part
/// index.
pub(crate) struct ShardSlots<S>(Arc<Vec<std::sync::Mutex<Option<S>>>>);

impl<S> Clone for ShardSlots<S> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<S: PartOf> ShardSlots<S> {
    pub(crate) fn new(shards: Vec<S>) -> Self {
        Self(Arc::new(
            shards
                .into_iter()
                .map(|s| std::sync::Mutex::new(Some(s)))
                .collect(),
        ))
    }

    /// The shard of part `worker`, once.
    pub(crate) fn take(&self, worker: usize) -> Option<S> {
        self.0.iter().find_map(|m| {
            let mut g = m.lock().ok()?;
            if g.as_ref().is_some_and(|s| s.part_index() == worker) {
                g.take()
            } else {
                None
            }
        })
    }
}

pub(crate) fn no_shard(worker: usize) -> DistError {
    DistError::Argument(format!("no shard for worker {worker} in this process"))
}

/// `timely::Config` for `workers` threads of this process (one thread: no channels).
pub(crate) fn threads_config(workers: usize) -> timely::Config {
    if workers <= 1 {
        timely::Config::thread()
    } else {
        timely::Config::process(workers)
    }
}

/// Joins timely's workers and gathers their marginals (the first worker error wins).
fn gather(
    guards: Result<timely::communication::WorkerGuards<Result<WorkerOutput, DistError>>, String>,
) -> Result<DistMarginals, DistError> {
    Ok(DistMarginals::from_outputs(join_workers(guards)?))
}

/// Joins timely's workers and collects their outputs in worker order (timely's error or
/// the first worker error wins).
pub(crate) fn join_workers<T: Send + 'static>(
    guards: Result<timely::communication::WorkerGuards<Result<T, DistError>>, String>,
) -> Result<Vec<T>, DistError> {
    guards
        .map_err(DistError::Timely)?
        .join()
        .into_iter()
        .map(|r| r.map_err(DistError::Timely).and_then(|x| x))
        .collect()
}

/// Copies the messages `first, first + 1, ...` of a packet (`vals`, in the sender's order)
/// into their slots `offs[j] = (offset, width)`; returns how many, or `None` if the values
/// do not end at a message boundary or run past the list.
fn scatter(offs: &[(usize, usize)], first: u64, vals: &[f64], new: &mut [f64]) -> Option<usize> {
    let mut j = usize::try_from(first).ok()?;
    let mut at = 0;
    let start = j;
    while at < vals.len() {
        let &(o, k) = offs.get(j)?;
        let v = vals.get(at..at + k)?;
        new.get_mut(o..o + k)?.copy_from_slice(v);
        at += k;
        j += 1;
    }
    Some(j - start)
}

/// One progress line on stderr (worker 0, when [`DistBp::progress`] is set).
#[allow(clippy::print_stderr)]
fn progress_line(iteration: usize, residual: f64, cut: u64) {
    eprintln!("srl-dist: iteration {iteration} residual {residual:.3e} messages exchanged {cut}");
}

/// Reads the shards `parts` of the folder `dir` (files `part-NNNNN.shard`), e.g. those of
/// this process's workers.
///
/// # Errors
/// As [`Shard::read`].
pub fn read_shards(
    dir: &std::path::Path,
    parts: std::ops::Range<usize>,
) -> Result<Vec<Shard>, DistError> {
    parts.map(|p| Shard::read(&shard_file(dir, p))).collect()
}
