//! Synchronous (flooding) loopy BP as a timely dataflow: one halo exchange per superstep.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use srl_infer::{BpMode, Convergence, LoopyBp, PairwiseMrf, log_sum_exp};
use timely::worker::Worker;

use crate::error::DistError;
use crate::halo::{Halo, Routed};
use crate::partition::{Partition, Partitioner};

/// Largest log-potential magnitude this crate accepts, the bound of srl-infer's *ordinary*
/// models (`srl_infer`'s `ORDINARY_ABS_LOG_POTENTIAL`, `10^4`): beyond it (or with a `-∞`
/// potential) srl-infer shifts every table and takes a `-∞`-exact path that is not
/// reproduced here.
pub const MAX_ABS_LOG_POTENTIAL: f64 = 1e4;

/// Bytes of one packet's fixed fields on the wire (bincode, fixed-width integers: `to`,
/// `from` 4 each, `round`, `residual`, two vector lengths 8 each); the values add 8 bytes
/// each. timely adds its own per-batch message header (not counted).
pub const PACKET_HEADER_BYTES: u64 = 40;

/// What one worker sends another in one superstep (round 0: the setup, `ids` names the
/// messages in send order; round `t ≥ 1`: the `t`-th iteration's messages, in that order).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Packet {
    to: u32,
    from: u32,
    round: u64,
    residual: f64,
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
/// Because each worker computes its messages with the same arithmetic in the same order
/// as srl-infer, the marginals agree to rounding (the tests check `1e-12`).
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
/// Round 0 tells each neighbour worker which of its messages arrive in which order
/// (message ids, once); round `t ≥ 1` carries only the values (`k_j` floats per cut
/// message) and the sender's residual. Every pair of workers exchanges one packet per
/// round, so the residual reduction needs no second exchange.
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
    /// How variables are assigned to workers.
    pub partition: Partition,
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
    /// Payload bytes sent to other workers per iteration: `8 · Σ k_target` over the cut
    /// messages plus [`PACKET_HEADER_BYTES`] per destination worker.
    pub bytes_sent_per_iter: u64,
    /// Bytes of the one-off setup round (message ids, 8 bytes each, plus headers).
    pub setup_bytes: u64,
    /// Seconds spent in the iterations (compute and exchange), wall clock.
    pub seconds: f64,
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
}

/// One oriented pairwise kernel `θ(x_src = a, x_tgt = b)` at `a * cols + b`, with its
/// exp-domain copy `exp(θ − max θ)` and whether its dynamic range is below 600 nats
/// (the same construction and test as srl-infer's kernels).
pub(crate) struct Kernel {
    cols: usize,
    pub(crate) log: Vec<f64>,
    exp: Vec<f64>,
    safe: bool,
}

impl Kernel {
    fn new(rows: usize, cols: usize, f: impl Fn(usize, usize) -> f64) -> Self {
        let mut log = Vec::with_capacity(rows * cols);
        for a in 0..rows {
            for b in 0..cols {
                log.push(f(a, b));
            }
        }
        let mx = log.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mn = log.iter().copied().fold(f64::INFINITY, f64::min);
        let safe = log.is_empty() || mx - mn < 600.0;
        let exp = log.iter().map(|&x| (x - mx).exp()).collect();
        Self {
            cols,
            log,
            exp,
            safe,
        }
    }
}

/// Marks a destination as a remote worker (low bits) rather than a local offset.
const REMOTE: u64 = 1 << 63;

/// One worker's share of the model: its variables, their incoming message slots (grouped
/// by target, in the model's neighbour order) and, per slot, the reverse message this
/// worker sends and where it goes.
pub(crate) struct Part {
    pub(crate) peers: usize,
    pub(crate) nodes: Vec<u32>,
    /// Local state offsets (length `nodes + 1`).
    pub(crate) st_off: Vec<usize>,
    /// Unary log-potentials with evidence applied (`-∞` outside the observed state).
    pub(crate) eff: Vec<f64>,
    /// Slot range of each local variable (length `nodes + 1`).
    pub(crate) in_off: Vec<usize>,
    /// Offset of each local variable's first incoming slot in the message arrays.
    pub(crate) base: Vec<usize>,
    /// Per slot: offset of the outgoing message in the source-grouped array (length
    /// `slots + 1`).
    pub(crate) out_off: Vec<usize>,
    /// Per slot: kernel of the outgoing message.
    pub(crate) kern: Vec<u32>,
    /// Per slot: local offset of the outgoing message's destination, or `REMOTE | worker`.
    pub(crate) dest: Vec<u64>,
    pub(crate) kernels: Vec<Kernel>,
    /// Incoming message array length.
    pub(crate) inc_len: usize,
    /// Message keys (`2 e + side`) sent to each worker, in send order.
    pub(crate) send_ids: Vec<Vec<u64>>,
    /// Sorted `(key, offset)` of every incoming slot.
    pub(crate) keys: Vec<(u64, usize)>,
    /// Per slot: number of states of the message's target.
    pub(crate) out_k: Vec<u32>,
    /// Per slot: global id of the slot's source variable.
    pub(crate) src: Vec<u32>,
}

/// Key of the directed message along edge `e` into `target` (`2 e + [target is the second
/// endpoint]`).
#[inline]
fn msg_key(mrf: &PairwiseMrf, e: usize, target: usize) -> u64 {
    2 * e as u64 + u64::from(mrf.edge(e).1 == target)
}

impl Part {
    pub(crate) fn build(mrf: &PairwiseMrf, p: &dyn Partitioner, me: usize, peers: usize) -> Self {
        let n = mrf.num_nodes();
        let nodes: Vec<u32> = (0..n)
            .filter(|&v| p.owner(v, n, peers) == me)
            .map(|v| v as u32)
            .collect();
        let mut st_off = vec![0];
        let mut eff = Vec::new();
        let mut in_off = vec![0];
        let mut base = Vec::with_capacity(nodes.len());
        let mut out_off = vec![0];
        let (mut kern, mut dest, mut out_k, mut srcs) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut keys = Vec::new();
        let mut send_ids = vec![Vec::new(); peers];
        let mut table_map: Vec<u32> = vec![u32::MAX; mrf.tables().len()];
        let mut kernels = Vec::new();
        let mut inc_len = 0;
        for &v in &nodes {
            let v = v as usize;
            let kv = mrf.num_states(v);
            let ev = mrf.evidence(v);
            eff.extend(mrf.unary(v).iter().enumerate().map(|(x, &t)| match ev {
                Some(s) if s != x => f64::NEG_INFINITY,
                _ => t,
            }));
            st_off.push(eff.len());
            base.push(inc_len);
            for (src, e) in mrf.neighbors(v) {
                keys.push((msg_key(mrf, e, v), inc_len));
                inc_len += kv;
                let ks = mrf.num_states(src);
                out_off.push(out_off[out_off.len() - 1] + ks);
                out_k.push(ks as u32);
                srcs.push(src as u32);
                let t = mrf.edge_tables()[e] as usize;
                if table_map[t] == u32::MAX {
                    table_map[t] = (kernels.len() / 2) as u32;
                    let tab = mrf.pair_table(e);
                    let (r, c) = (tab.rows, tab.cols);
                    let vals = &tab.log_values;
                    kernels.push(Kernel::new(r, c, |a, b| vals[a * c + b]));
                    kernels.push(Kernel::new(c, r, |a, b| vals[b * c + a]));
                }
                // The message v → src uses the table as stored when v is the first
                // endpoint, transposed otherwise.
                let transposed = mrf.edge(e).0 != v;
                kern.push(2 * table_map[t] + u32::from(transposed));
                let w = p.owner(src, n, peers);
                if w == me {
                    dest.push(msg_key(mrf, e, src));
                } else {
                    send_ids[w].push(msg_key(mrf, e, src));
                    dest.push(REMOTE | w as u64);
                }
            }
            in_off.push(kern.len());
        }
        keys.sort_unstable();
        let mut part = Self {
            peers,
            nodes,
            st_off,
            eff,
            in_off,
            base,
            out_off,
            kern,
            dest,
            kernels,
            inc_len,
            send_ids,
            keys,
            out_k,
            src: srcs,
        };
        for s in 0..part.dest.len() {
            if part.dest[s] & REMOTE == 0 {
                part.dest[s] = part.lookup(part.dest[s]) as u64;
            }
        }
        part
    }

    /// Offset of the incoming slot with message key `key`.
    ///
    /// # Panics
    /// If no local slot has that key (the partition disagreed between workers: a broken
    /// [`Partitioner`]).
    fn lookup(&self, key: u64) -> usize {
        let i = self.keys.binary_search_by_key(&key, |&(k, _)| k).expect(
            "every message sent here targets a slot of this worker (deterministic partitioner)",
        );
        self.keys[i].1
    }

    fn remote_per_peer(&self) -> Vec<u64> {
        let mut vals = vec![0u64; self.peers];
        for (s, &d) in self.dest.iter().enumerate() {
            if d & REMOTE != 0 {
                vals[(d & !REMOTE) as usize] += u64::from(self.out_k[s]);
            }
        }
        vals
    }

    /// One flooding pass: every local variable sends all its messages from the incoming
    /// messages `old`; local ones land in `new`, remote ones are appended to `send`.
    /// Returns the local max residual.
    #[allow(clippy::too_many_arguments)]
    fn sweep(
        &self,
        mode: BpMode,
        damping: f64,
        old: &[f64],
        new: &mut [f64],
        outg: &mut [f64],
        send: &mut [Vec<f64>],
        scratch: &mut [f64],
    ) -> f64 {
        let k = scratch.len() / 4;
        let (b, rest) = scratch.split_at_mut(k);
        let (cav, rest) = rest.split_at_mut(k);
        let (out, u) = rest.split_at_mut(k);
        let mut residual: f64 = 0.0;
        for i in 0..self.nodes.len() {
            let ki = self.st_off[i + 1] - self.st_off[i];
            let b = &mut b[..ki];
            b.copy_from_slice(&self.eff[self.st_off[i]..self.st_off[i + 1]]);
            let (s0, s1) = (self.in_off[i], self.in_off[i + 1]);
            let bs = self.base[i];
            for m in old[bs..bs + ki * (s1 - s0)].chunks_exact(ki) {
                for (x, &y) in b.iter_mut().zip(m) {
                    *x += y;
                }
            }
            for s in s0..s1 {
                let so = bs + (s - s0) * ki;
                for a in 0..ki {
                    cav[a] = b[a] - old[so + a];
                }
                let (o0, o1) = (self.out_off[s], self.out_off[s + 1]);
                let out = &mut out[..o1 - o0];
                message(
                    mode,
                    &self.kernels[self.kern[s] as usize],
                    &cav[..ki],
                    out,
                    u,
                );
                let prev = &mut outg[o0..o1];
                residual = residual.max(finish(out, prev, damping));
                prev.copy_from_slice(out);
                let d = self.dest[s];
                if d & REMOTE == 0 {
                    let d = d as usize;
                    new[d..d + out.len()].copy_from_slice(out);
                } else {
                    send[(d & !REMOTE) as usize].extend_from_slice(out);
                }
            }
        }
        residual
    }

    /// Normalised log-beliefs of the local variables from the incoming messages `msgs`.
    fn beliefs(&self, msgs: &[f64]) -> Vec<f64> {
        let mut bel = self.eff.clone();
        for i in 0..self.nodes.len() {
            let (a, z) = (self.st_off[i], self.st_off[i + 1]);
            let ki = z - a;
            let b = &mut bel[a..z];
            let bs = self.base[i];
            let slots = self.in_off[i + 1] - self.in_off[i];
            for m in msgs[bs..bs + ki * slots].chunks_exact(ki) {
                for (x, &y) in b.iter_mut().zip(m) {
                    *x += y;
                }
            }
            let lz = log_sum_exp(b);
            if lz == f64::NEG_INFINITY || lz.is_nan() {
                let uni = -(ki as f64).ln();
                b.iter_mut().for_each(|x| *x = uni);
            } else {
                b.iter_mut().for_each(|x| *x -= lz);
            }
        }
        bel
    }
}

/// The log-message from the sender's cavity `cav` through kernel `ker` into `out`,
/// normalised to `max = 0` (srl-infer's message arithmetic, operation for operation).
#[inline]
fn message(mode: BpMode, ker: &Kernel, cav: &[f64], out: &mut [f64], u: &mut [f64]) {
    let ki = cav.len();
    let kj = out.len();
    debug_assert_eq!(ker.cols, kj);
    match mode {
        BpMode::SumProduct if ker.safe => {
            if ki == 2 && kj == 2 {
                let e = &ker.exp[..4];
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
            for (row, &w) in ker.exp.chunks_exact(kj).zip(&u[..ki]) {
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
            let table = &ker.log;
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
            out.iter_mut().for_each(|o| *o = f64::NEG_INFINITY);
            for (row, &c) in ker.log.chunks_exact(kj).zip(cav) {
                for (o, &t) in out.iter_mut().zip(row) {
                    *o = o.max(c + t);
                }
            }
        }
    }
    let mx = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    out.iter_mut().for_each(|o| *o -= mx);
}

/// Damping against the previous message, renormalisation, residual `max |new − old|`.
#[inline]
fn finish(out: &mut [f64], old: &[f64], damping: f64) -> f64 {
    if damping > 0.0 {
        let mut mx = f64::NEG_INFINITY;
        for (o, &p) in out.iter_mut().zip(old) {
            *o = (1.0 - damping) * *o + damping * p;
            mx = mx.max(*o);
        }
        out.iter_mut().for_each(|o| *o -= mx);
    }
    let mut r: f64 = 0.0;
    for (o, &p) in out.iter().zip(old) {
        r = r.max((o - p).abs());
    }
    r
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
    pub fn run_worker(&self, worker: &mut Worker, mrf: &PairwiseMrf) -> WorkerOutput {
        self.run_worker_with(worker, mrf, &self.partition)
    }

    /// [`DistBp::run_worker`] with a custom [`Partitioner`] (the hook for a better
    /// partition than id ranges or hashing).
    ///
    /// # Panics
    /// If the partitioner is not deterministic across workers (a message then arrives at
    /// a worker that does not own its target).
    pub fn run_worker_with(
        &self,
        worker: &mut Worker,
        mrf: &PairwiseMrf,
        partitioner: &dyn Partitioner,
    ) -> WorkerOutput {
        let (me, peers) = (worker.index(), worker.peers());
        let part = Part::build(mrf, partitioner, me, peers);
        let mut halo: Halo<Packet> = Halo::new(worker);
        let mut stats = WorkerStats {
            nodes: part.nodes.len() as u64,
            messages_per_iter: part.dest.len() as u64,
            remote_messages_per_iter: part.dest.iter().filter(|&&d| d & REMOTE != 0).count() as u64,
            ..WorkerStats::default()
        };
        let per_peer = part.remote_per_peer();
        stats.bytes_sent_per_iter = (0..peers)
            .filter(|&w| w != me)
            .map(|w| 8 * per_peer[w] + PACKET_HEADER_BYTES)
            .sum();
        // Round 0: tell every other worker which messages it will receive, in order.
        let mut round = 0u64;
        for w in (0..peers).filter(|&w| w != me) {
            stats.setup_bytes += 8 * part.send_ids[w].len() as u64 + PACKET_HEADER_BYTES;
            halo.send(Packet {
                to: w as u32,
                from: me as u32,
                round,
                residual: 0.0,
                ids: part.send_ids[w].clone(),
                vals: Vec::new(),
            });
        }
        // Per sender: (offset, k) of each incoming slot, in the sender's order.
        let mut recv_off: Vec<Vec<(usize, usize)>> = vec![Vec::new(); peers];
        for p in halo.deliver(worker, round) {
            recv_off[p.from as usize] = p
                .ids
                .iter()
                .map(|&key| {
                    let o = part.lookup(key);
                    (o, part.ko(o))
                })
                .collect();
        }
        let k = part
            .st_off
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(1);
        let k = k
            .max(part.out_k.iter().copied().max().unwrap_or(1) as usize)
            .max(1);
        let mut scratch = vec![0.0; 4 * k];
        let mut old = vec![0.0; part.inc_len];
        let mut new = vec![0.0; part.inc_len];
        let mut outg = vec![0.0; part.out_off[part.out_off.len() - 1]];
        let damping = self.damping();
        let none = mrf.num_edges() == 0;
        let mut convergence = Convergence {
            converged: none,
            iterations: 0,
            max_residual: if none { 0.0 } else { f64::INFINITY },
        };
        let start = std::time::Instant::now();
        while !convergence.converged && convergence.iterations < self.max_iters {
            round += 1;
            let mut send: Vec<Vec<f64>> = per_peer
                .iter()
                .map(|&c| Vec::with_capacity(c as usize))
                .collect();
            let mut residual = part.sweep(
                self.mode,
                damping,
                &old,
                &mut new,
                &mut outg,
                &mut send,
                &mut scratch,
            );
            for (w, vals) in send.into_iter().enumerate() {
                if w != me {
                    halo.send(Packet {
                        to: w as u32,
                        from: me as u32,
                        round,
                        residual,
                        ids: Vec::new(),
                        vals,
                    });
                }
            }
            for p in halo.deliver(worker, round) {
                residual = residual.max(p.residual);
                let offs = &recv_off[p.from as usize];
                let mut at = 0;
                for &(o, ko) in offs {
                    new[o..o + ko].copy_from_slice(&p.vals[at..at + ko]);
                    at += ko;
                }
            }
            std::mem::swap(&mut old, &mut new);
            convergence.iterations += 1;
            convergence.max_residual = residual;
            convergence.converged = residual < self.tol;
        }
        stats.seconds = start.elapsed().as_secs_f64();
        let node_log = part.beliefs(&old);
        WorkerOutput {
            worker: me,
            nodes: part.nodes.clone(),
            node_off: part.st_off.clone(),
            node_log,
            convergence,
            stats,
        }
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
        let guards = timely::execute(config, move |worker| cfg.run_worker(worker, &mrf))
            .map_err(DistError::Timely)?;
        let outputs = guards
            .join()
            .into_iter()
            .collect::<Result<Vec<_>, String>>()
            .map_err(DistError::Timely)?;
        Ok(DistMarginals::from_outputs(outputs))
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
        let config = if workers <= 1 {
            timely::Config::thread()
        } else {
            timely::Config::process(workers)
        };
        self.run(mrf, config)
    }
}

impl Part {
    /// Number of states of the variable whose incoming slot starts at offset `o`.
    #[inline]
    fn ko(&self, o: usize) -> usize {
        // base is ascending: the variable is the last one whose base is <= o.
        let i = self.base.partition_point(|&b| b <= o) - 1;
        self.st_off[i + 1] - self.st_off[i]
    }
}
