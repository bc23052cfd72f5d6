//! Loopy belief propagation on a [`FactorGraph`] (Kschischang, Frey & Loeliger 2001;
//! Koller & Friedman 2009 §11.3): sum- and max-product with messages stored as
//! logarithms and each factor's messages computed in the linear domain where no term can
//! underflow (else in the log domain); flooding, sequential and residual schedules with
//! damping.

use rayon::prelude::*;

use super::table::lse;
use super::{FactorGraph, FactorMap, FactorMarginals};
use crate::error::InferError;
use crate::marginals::Convergence;

/// Loopy BP on a factor graph. Flooding schedule: every variable-to-factor message is
/// computed from the previous factor-to-variable messages, then every factor-to-variable
/// message from those (in parallel over factors; each factor's messages are computed on
/// their own, so the bits do not depend on the thread count). Sequential schedule: factor
/// by factor, each from the latest messages.
///
/// Messages are natural-log vectors normalised to a maximum of 0; damping mixes the
/// new factor-to-variable log-message with the old one, `(1 − λ)·new + λ·old`. The
/// residual of a sweep is the largest absolute change of a factor-to-variable
/// log-message entry (`-∞` to `-∞` is no change); the run has converged when it is below
/// `tolerance`. Evidence clamps a variable (its other states get `-∞`). On a factor graph
/// without cycles BP is exact after as many sweeps as the graph's diameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FactorBp {
    /// Sweep cap (default 1000, at least 1).
    pub max_iters: usize,
    /// Convergence tolerance on the residual (default 1e-9, positive and finite).
    pub tolerance: f64,
    /// Damping λ in `[0, 1)` (default 0).
    pub damping: f64,
    /// Update order (default [`FactorSchedule::Flooding`]).
    pub schedule: FactorSchedule,
}

/// The update order of [`FactorBp`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FactorSchedule {
    /// All factor-to-variable messages from the previous sweep's messages, in parallel
    /// over factors (the same bits for any thread count).
    #[default]
    Flooding,
    /// Factor by factor in index order, each from the latest messages (one thread;
    /// usually fewer sweeps, e.g. a chain in one forward sweep plus one backward).
    Sequential,
    /// Residual BP (Elidan, McGraw & Koller 2006) with factor-level lazy residuals (the
    /// residual estimates of Sutton & McCallum 2007, as [`crate::Schedule::Residual`]
    /// for pairwise models): the factor whose messages would change most sends all of
    /// them. Each factor carries a key: after its messages are computed, their largest
    /// residual (exact); every message later committed into one of its variables by
    /// another factor raises it by that message's change range `max Δ − min Δ` (an
    /// upper bound: a cavity change of range `ρ` changes no normalised log-message by
    /// more than `ρ`). Popping a factor computes its messages unless nothing reached it
    /// since they were computed, commits them and raises its neighbours' keys in `O(1)`
    /// each; no neighbour's messages are recomputed at a commit. Bucketed queue (a
    /// bucket spans a factor of 4 of keys, served whole in factor order); the first
    /// pass is a sequential sweep. Convergence is exact: when no key is at or above
    /// the tolerance, every factor whose key is an estimate is recomputed, and the run
    /// converges only if every pending residual is then below the tolerance. The
    /// iterations count work (factor-to-variable messages computed, divided by the
    /// number of edges) and `max_iters` caps it. One thread; deterministic.
    Residual,
}

impl Default for FactorBp {
    fn default() -> Self {
        Self {
            max_iters: 1000,
            tolerance: 1e-9,
            damping: 0.0,
            schedule: FactorSchedule::Flooding,
        }
    }
}

/// The message layout: one edge per (factor, scope position).
struct Layout {
    /// First edge of each factor (`factors + 1` entries).
    fedge: Vec<usize>,
    /// Variable of each edge.
    evar: Vec<u32>,
    /// Offset of each edge's message in the flat arrays (`edges + 1` entries).
    moff: Vec<usize>,
    /// The first state of each edge's variable in the per-state arrays (`Σ_v k_v`
    /// entries, variables in order): read in edge order, so that a sweep's only random
    /// access is the one into the belief sums.
    eoff: Vec<usize>,
    /// Edges of each variable, in ascending order (empty when the run does not need
    /// them: flooding without the variable-to-factor messages).
    vedges: Vec<Vec<usize>>,
    /// Cardinality of each edge's variable (`moff[e + 1] − moff[e]`), so that a factor's
    /// cardinalities are a slice, not a copy.
    ecard: Vec<usize>,
    /// Per edge of a factor, in the order of its linear table ([`LinearTables::row`]:
    /// the scope's order with the stored-last variable moved last): the cardinalities
    /// (`tcard`) and, per edge in scope order, the offset of its message within the
    /// factor's block laid out in the table's order (`toff`). Equal to `ecard` and the
    /// edge order's offsets for a factor kept in its scope's order.
    tcard: Vec<usize>,
    toff: Vec<u32>,
}

impl FactorBp {
    /// Checks the settings (the CLI calls this before reading any file).
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] naming `max_iterations` (0), `tolerance` (not
    /// positive and finite) or `damping` (outside `[0, 1)`).
    pub fn validate(&self) -> Result<(), InferError> {
        if self.max_iters == 0 {
            return Err(InferError::InvalidParameter {
                name: "max_iterations",
                value: "0".into(),
                reason: "must be at least 1",
            });
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(InferError::InvalidParameter {
                name: "tolerance",
                value: self.tolerance.to_string(),
                reason: "must be positive and finite",
            });
        }
        if !(0.0..1.0).contains(&self.damping) {
            return Err(InferError::InvalidParameter {
                name: "damping",
                value: self.damping.to_string(),
                reason: "must be in [0, 1)",
            });
        }
        Ok(())
    }

    fn layout(g: &FactorGraph, lt: &LinearTables, with_vedges: bool) -> Result<Layout, InferError> {
        let mut voff = Vec::with_capacity(g.num_vars() + 1);
        voff.push(0usize);
        for &kv in g.num_states() {
            let last = voff[voff.len() - 1];
            voff.push(last + kv);
        }
        let edges: usize = g.factors().iter().map(|f| f.vars.len()).sum();
        let mut fedge = Vec::with_capacity(g.factors().len() + 1);
        let mut evar = Vec::with_capacity(edges);
        let mut eoff = Vec::with_capacity(edges);
        let mut moff = Vec::with_capacity(edges + 1);
        moff.push(0);
        let mut vedges = vec![Vec::new(); if with_vedges { g.num_vars() } else { 0 }];
        fedge.push(0);
        let mut total = 0usize;
        for f in g.factors() {
            for &v in &f.vars {
                if with_vedges {
                    vedges[v as usize].push(evar.len());
                }
                evar.push(v);
                let (lo, hi) = (voff[v as usize], voff[v as usize + 1]);
                eoff.push(lo);
                total = total
                    .checked_add(hi - lo)
                    .filter(|&t| t <= crate::mrf::MAX_MODEL_ENTRIES)
                    .ok_or(InferError::TooLarge {
                        what: "message entries of factor-graph BP (limit 2^30)",
                        count: usize::MAX,
                    })?;
                moff.push(total);
            }
            fedge.push(evar.len());
        }
        let ecard: Vec<usize> = moff.windows(2).map(|w| w[1] - w[0]).collect();
        let (mut tcard, mut toff) = (Vec::with_capacity(edges), Vec::with_capacity(edges));
        for (f, fac) in g.factors().iter().enumerate() {
            let (e0, e1) = (fedge[f], fedge[f + 1]);
            let cards = &ecard[e0..e1];
            let row = lt.row[fac.table as usize];
            let base = moff[e0];
            if row == ROW_AS_IS || usize::from(row) >= cards.len() {
                tcard.extend_from_slice(cards);
                // a factor's block is below 2^30 entries (checked above)
                toff.extend(moff[e0..e1].iter().map(|&o| (o - base) as u32));
            } else {
                let r = usize::from(row);
                tcard.extend(
                    cards
                        .iter()
                        .enumerate()
                        .filter(|&(j, _)| j != r)
                        .map(|(_, &c)| c),
                );
                tcard.push(cards[r]);
                let n = moff[e1] - base;
                for j in 0..cards.len() {
                    let o = moff[e0 + j] - base;
                    toff.push(match j.cmp(&r) {
                        std::cmp::Ordering::Less => o,
                        std::cmp::Ordering::Equal => n - cards[r],
                        std::cmp::Ordering::Greater => o - cards[r],
                    } as u32);
                }
            }
        }
        Ok(Layout {
            fedge,
            evar,
            eoff,
            moff,
            vedges,
            ecard,
            tcard,
            toff,
        })
    }

    /// Runs BP to convergence or the cap; returns the messages, with the
    /// variable-to-factor messages recomputed from the final factor-to-variable ones
    /// when `with_vf` (else they are stale).
    fn run_state(&self, g: &FactorGraph, max: bool, with_vf: bool) -> Result<State, InferError> {
        self.validate()?;
        // parallel flooding sweeps run on a pool thread (`on_pool`): no hand-over per
        // sweep; serial ones (other schedules, small sweeps) on this thread
        let serial = flood_serial(g);
        let parallel = self.schedule == FactorSchedule::Flooding && !serial;
        crate::on_pool_if(parallel, || self.run_sweeps(g, max, with_vf, serial))
    }

    /// [`FactorBp::run_state`] after validation; `serial`: [`flood_serial`] of `g`.
    fn run_sweeps(
        &self,
        g: &FactorGraph,
        max: bool,
        with_vf: bool,
        serial: bool,
    ) -> Result<State, InferError> {
        let lt = LinearTables::new(g);
        let lay = Self::layout(g, &lt, with_vf || self.schedule != FactorSchedule::Flooding)?;
        let total = lay.moff[lay.moff.len() - 1];
        let alloc = || -> Result<Vec<f64>, InferError> {
            let mut m = Vec::new();
            m.try_reserve_exact(total)
                .map_err(|_| InferError::TooLarge {
                    what: "message entries of factor-graph BP to hold in memory",
                    count: total,
                })?;
            m.resize(total, 0.0);
            Ok(m)
        };
        let mut fv = alloc()?;
        let mut conv = Convergence::start(g.factors().is_empty());
        let mut sc = Scratch::default();
        // Sequential and residual: the belief sums are kept up to date as each factor's
        // messages change (the variable-to-factor messages are the sums minus the
        // receiver's own message, no per-edge gather over the variable's factors).
        let mut sums = BeliefSums::new(g);
        while !conv.converged
            && conv.iterations < self.max_iters
            && self.schedule == FactorSchedule::Sequential
        {
            let mut residual = 0.0f64;
            let mut msg = std::mem::take(&mut sc.msg);
            for f in 0..g.factors().len() {
                let r = lay.moff[lay.fedge[f]]..lay.moff[lay.fedge[f + 1]];
                msg.clear();
                msg.resize(r.len(), 0.0);
                flood_block_dispatched(g, f..f + 1, &lay, &lt, &sums, &fv, max, &mut msg, &mut sc);
                residual = residual.max(self.damp_fresh(&mut msg, &fv[r.clone()]));
                sums.commit(&lay, f, &mut fv, &msg);
            }
            sc.msg = msg;
            conv.record(residual, self.tolerance);
        }
        if self.schedule == FactorSchedule::Residual && !conv.converged {
            self.residual_updates(g, &lay, &lt, &mut sums, &mut fv, max, &mut conv);
        }
        // Flooding: the new factor-to-variable messages go to a second array (each
        // factor writes its own slice, in parallel, from the old messages only), then the
        // arrays swap: no allocation per message, the same bits for any thread count.
        let mut next = if self.schedule == FactorSchedule::Flooding && !conv.converged {
            alloc()?
        } else {
            Vec::new()
        };
        let nf = g.factors().len();
        while !conv.converged
            && conv.iterations < self.max_iters
            && self.schedule == FactorSchedule::Flooding
        {
            sums.fill(&lay, &fv);
            // blocks of consecutive factors, each with its slice of `next`: a block first
            // gathers all its incoming messages (independent loads the processor overlaps),
            // then computes its factors' messages from them
            let mut parts: Vec<(usize, usize, &mut [f64])> =
                Vec::with_capacity(nf.div_ceil(FLOOD_BLOCK));
            let mut rest: &mut [f64] = &mut next;
            for f0 in (0..nf).step_by(FLOOD_BLOCK) {
                let f1 = (f0 + FLOOD_BLOCK).min(nf);
                let len = lay.moff[lay.fedge[f1]] - lay.moff[lay.fedge[f0]];
                let (head, tail) = rest.split_at_mut(len);
                parts.push((f0, f1, head));
                rest = tail;
            }
            let block = |sc: &mut Scratch, (f0, f1, out): (usize, usize, &mut [f64])| {
                flood_block_dispatched(g, f0..f1, &lay, &lt, &sums, &fv, max, out, sc);
                let r = lay.moff[lay.fedge[f0]]..lay.moff[lay.fedge[f1]];
                self.damp_fresh(out, &fv[r])
            };
            // the largest change is the same in any order: serial and parallel sweeps
            // give the same bits
            let residual = if serial {
                parts
                    .into_iter()
                    .map(|part| block(&mut sc, part))
                    .fold(0.0f64, f64::max)
            } else {
                parts
                    .into_par_iter()
                    .map_init(Scratch::default, block)
                    .reduce(|| 0.0f64, f64::max)
            };
            std::mem::swap(&mut fv, &mut next);
            conv.record(residual, self.tolerance);
        }
        let vf = if with_vf {
            let mut vf = alloc()?;
            variable_messages(g, &lay, &fv, &mut vf);
            vf
        } else {
            Vec::new()
        };
        Ok(State {
            lay,
            fv,
            vf,
            sums,
            conv,
        })
    }

    /// Residual BP with factor-level lazy residuals (see [`FactorSchedule::Residual`]):
    /// a bucketed queue of the factors' keys; committing a factor's messages updates its
    /// variables' belief sums and raises the keys of the factors sharing a variable by
    /// the change range of the message, without recomputing their messages.
    #[allow(clippy::too_many_arguments)]
    fn residual_updates(
        &self,
        g: &FactorGraph,
        lay: &Layout,
        lt: &LinearTables,
        sums: &mut BeliefSums,
        fv: &mut [f64],
        max: bool,
        conv: &mut Convergence,
    ) {
        use crate::bp::{BucketQueue, change_range};
        let nf = g.factors().len();
        let edges = lay.evar.len();
        sums.fill(lay, fv);
        // The pending (damped) new messages of every factor in one flat array laid out
        // as `fv`: no allocation per update.
        let mut sc = Scratch::default();
        let mut pend = fv.to_vec();
        let pending_of =
            |f: usize, sums: &BeliefSums, fv: &[f64], pend: &mut [f64], sc: &mut Scratch| {
                let r = lay.moff[lay.fedge[f]]..lay.moff[lay.fedge[f + 1]];
                let out = &mut pend[r.clone()];
                flood_block_dispatched(g, f..f + 1, lay, lt, sums, fv, max, out, sc);
                crate::bp::priority(self.damp_fresh(out, &fv[r]))
            };
        // each variable's factors, flat (CSR), in edge order
        let mut vstart = vec![0usize; g.num_vars() + 1];
        for &v in &lay.evar {
            vstart[v as usize + 1] += 1;
        }
        for v in 0..g.num_vars() {
            vstart[v + 1] += vstart[v];
        }
        let mut vfac = vec![0u32; edges];
        let mut fill = vstart.clone();
        for f in 0..nf {
            for e in lay.fedge[f]..lay.fedge[f + 1] {
                let v = lay.evar[e] as usize;
                vfac[fill[v]] = f as u32;
                fill[v] += 1;
            }
        }
        drop(fill);
        // Factor-level lazy residuals (see `FactorSchedule::Residual`).
        let mut queue = BucketQueue::new(nf, self.tolerance);
        let damping = self.damping;
        // Commits factor `f`'s pending messages (largest residual `r`) and raises the
        // key of every other factor on each variable whose message changed by the
        // change's range.
        let commit = |f: usize,
                      r: f64,
                      sums: &mut BeliefSums,
                      fv: &mut [f64],
                      pend: &[f64],
                      queue: &mut BucketQueue| {
            for e in lay.fedge[f]..lay.fedge[f + 1] {
                let (lo, hi) = (lay.moff[e], lay.moff[e + 1]);
                let d = change_range(&pend[lo..hi], &fv[lo..hi]);
                if d <= 0.0 {
                    continue;
                }
                let v = lay.evar[e] as usize;
                for &f2 in &vfac[vstart[v]..vstart[v + 1]] {
                    let f2 = f2 as usize;
                    if f2 != f {
                        queue.raise(f2, d);
                    }
                }
            }
            let rf = lay.moff[lay.fedge[f]]..lay.moff[lay.fedge[f + 1]];
            sums.commit(lay, f, fv, &pend[rf]);
            // its cavities did not change (its own messages are left out of them)
            queue.committed(f, r, damping);
        };
        let cap = self.max_iters.saturating_mul(edges);
        let started = edges > 0 && edges <= cap;
        let mut computed = 0usize;
        if started {
            // a sequential sweep: each factor's messages are committed as they are
            // computed, unless all change by less than the tolerance (then they stay
            // pending, exact)
            for f in 0..nf {
                let r = pending_of(f, sums, fv, &mut pend, &mut sc);
                if r < self.tolerance || r <= 0.0 {
                    queue.node[f].r0 = r;
                } else {
                    commit(f, r, sums, fv, &pend, &mut queue);
                }
            }
            computed = edges;
        }
        let mut converged = nf == 0 || edges == 0;
        while started && !converged {
            let Some(f) = queue.pop() else {
                // every key is below the tolerance: recompute every factor whose key is
                // an estimate, then converged unless one is at or above the tolerance
                let stale: usize = (0..nf)
                    .filter(|&f| !queue.node[f].fresh)
                    .map(|f| lay.fedge[f + 1] - lay.fedge[f])
                    .sum();
                if computed + stale > cap {
                    break;
                }
                for f in 0..nf {
                    if !queue.node[f].fresh {
                        let r = pending_of(f, sums, fv, &mut pend, &mut sc);
                        let nk = &mut queue.node[f];
                        nk.r0 = r;
                        nk.fresh = true;
                        queue.set(f, r);
                    }
                }
                computed += stale;
                if queue.is_empty() {
                    converged = queue.node.iter().all(|nk| nk.r0 < self.tolerance);
                    break;
                }
                continue;
            };
            let a = lay.fedge[f + 1] - lay.fedge[f];
            // Load the neighbours' records now (independent loads, overlapping each
            // other and the message computation) rather than one dependent miss per
            // raise in the commit.
            let mut touch = 0u16;
            for &v in &lay.evar[lay.fedge[f]..lay.fedge[f + 1]] {
                let v = v as usize;
                for &f2 in &vfac[vstart[v]..vstart[v + 1]] {
                    touch ^= queue.node[f2 as usize].at;
                }
            }
            std::hint::black_box(touch);
            let mut r = queue.node[f].r0;
            if !queue.node[f].fresh {
                if computed + a > cap {
                    let key = queue.node[f].key();
                    queue.set(f, key);
                    break;
                }
                r = pending_of(f, sums, fv, &mut pend, &mut sc);
                computed += a;
            }
            commit(f, r, sums, fv, &pend, &mut queue);
        }
        conv.iterations = if edges == 0 {
            0
        } else {
            computed.div_ceil(edges)
        };
        conv.max_residual = if started || edges == 0 {
            queue.node.iter().map(|nk| nk.key()).fold(0.0, f64::max)
        } else {
            f64::INFINITY
        };
        conv.converged = converged;
    }

    /// Damps the fresh messages in `fresh` against `old` in place (`fresh` becomes the
    /// damped messages) and returns the largest change (`-∞` to `-∞` is none).
    fn damp_fresh(&self, fresh: &mut [f64], old: &[f64]) -> f64 {
        if self.damping > 0.0 {
            for (n, &o) in fresh.iter_mut().zip(old) {
                *n = (1.0 - self.damping) * *n + self.damping * o;
            }
        }
        largest_change(fresh, old)
    }

    /// Runs BP; returns the log-beliefs of every variable (normalised) and the report.
    fn run_logs(
        &self,
        g: &FactorGraph,
        max: bool,
    ) -> Result<(Vec<Vec<f64>>, Convergence), InferError> {
        let mut st = self.run_state(g, max, false)?;
        let beliefs = variable_beliefs(g, &mut st, max)?;
        Ok((beliefs, st.conv))
    }

    /// The Bethe approximation of `ln Z` at the sum-product fixed point reached:
    /// `Σ_f Σ_x b_f(x) (θ_f(x) − ln b_f(x)) + Σ_v (1 − d_v) H(b_v)`, with `b_f`, `b_v`
    /// the factor and variable beliefs and `d_v` the number of factors on `v` (Yedidia,
    /// Freeman & Weiss 2005). Exact on factor graphs without cycles; for attractive
    /// binary pairwise models it is a lower bound of `ln Z` (Ruozzi 2012). Returns the
    /// estimate and the run's convergence (the estimate means little when not converged).
    ///
    /// # Errors
    /// As [`FactorBp::marginals`].
    pub fn bethe_log_partition(&self, g: &FactorGraph) -> Result<(f64, Convergence), InferError> {
        let mut st = self.run_state(g, false, true)?;
        let beliefs = variable_beliefs(g, &mut st, false)?;
        let mut total = 0.0;
        for (v, b) in beliefs.iter().enumerate() {
            let d = st.lay.vedges[v].len() as f64;
            let h: f64 = b
                .iter()
                .filter(|&&l| l > f64::NEG_INFINITY)
                .map(|&l| -l.exp() * l)
                .sum();
            total += (1.0 - d) * h;
        }
        let k = g.num_states();
        for f in 0..g.factors().len() {
            let table = g.factor_table(f);
            let e0 = st.lay.fedge[f];
            let a = st.lay.fedge[f + 1] - e0;
            let cards: Vec<usize> = (0..a).map(|j| k[st.lay.evar[e0 + j] as usize]).collect();
            let mut logb = Vec::with_capacity(table.len());
            let mut ctr = vec![0usize; a];
            for &t in table {
                let mut s = t;
                for (j, &c) in ctr.iter().enumerate() {
                    s += st.vf[st.lay.moff[e0 + j] + c];
                }
                logb.push(s);
                odometer(&mut ctr[..a], &cards[..a]);
            }
            let z = lse(&logb);
            if z == f64::NEG_INFINITY {
                return Err(InferError::ZeroProbability {
                    node: None,
                    cause: "loopy BP finds every state of a factor impossible",
                });
            }
            for (&l, &t) in logb.iter().zip(table) {
                if l > f64::NEG_INFINITY {
                    let lb = l - z;
                    total += lb.exp() * (t - lb);
                }
            }
        }
        Ok((total, st.conv))
    }

    /// Sum-product marginals.
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] for bad settings; [`InferError::ZeroProbability`]
    /// when BP leaves a variable without a possible state; [`InferError::TooLarge`] past
    /// 2^30 message entries.
    pub fn marginals(&self, g: &FactorGraph) -> Result<FactorMarginals, InferError> {
        let mut st = self.run_state(g, false, false)?;
        // each belief `exp(b − max b)` normalised by its sum: one exponential per state
        st.sums.fill(&st.lay, &st.fv);
        let sums = &st.sums;
        let mut probs = Vec::with_capacity(g.num_vars());
        let mut off = 0;
        for (v, &kv) in g.num_states().iter().enumerate() {
            let mx = (off..off + kv)
                .map(|i| sums.belief(i))
                .fold(f64::NEG_INFINITY, f64::max);
            if mx == f64::NEG_INFINITY {
                return Err(InferError::ZeroProbability {
                    node: Some(v),
                    cause: "loopy BP finds every state impossible (evidence and zero potentials)",
                });
            }
            let mut p: Vec<f64> = (off..off + kv)
                .map(|i| (sums.belief(i) - mx).exp())
                .collect();
            let z: f64 = p.iter().sum();
            for x in &mut p {
                *x /= z;
            }
            probs.push(p);
            off += kv;
        }
        Ok(FactorMarginals::new(probs, st.conv))
    }

    /// Max-product: each variable's state of largest max-marginal (the lowest on ties).
    ///
    /// # Errors
    /// As [`FactorBp::marginals`]; [`InferError::ZeroProbability`] also when the decoded
    /// assignment breaks a zero potential.
    pub fn map(&self, g: &FactorGraph) -> Result<FactorMap, InferError> {
        let (logs, convergence) = self.run_logs(g, true)?;
        let states: Vec<usize> = logs
            .iter()
            .map(|b| {
                let mut arg = 0;
                for (s, &x) in b.iter().enumerate() {
                    if x > b[arg] {
                        arg = s;
                    }
                }
                arg
            })
            .collect();
        let log_score = g.log_score(&states)?;
        if log_score == f64::NEG_INFINITY {
            return Err(InferError::ZeroProbability {
                node: None,
                cause: "the max-product assignment breaks a zero potential; exact inference decides whether any assignment is possible",
            });
        }
        Ok(FactorMap {
            states,
            log_score,
            convergence,
        })
    }
}

/// The messages of a finished run.
struct State {
    lay: Layout,
    fv: Vec<f64>,
    vf: Vec<f64>,
    /// The belief sums' storage (not up to date: fill them from `fv`).
    sums: BeliefSums,
    conv: Convergence,
}

/// The largest change `|new − old|` between two messages of equal length (`0` where
/// both are equal, `-∞` to `-∞` included; `+∞` when a change is NaN), for the
/// convergence test. Four independent running maxima (the maximum is exact in any
/// order, so the same value as one running maximum), so no entry waits for the last.
fn largest_change(new: &[f64], old: &[f64]) -> f64 {
    let change = |n: f64, o: f64| if n == o { 0.0 } else { (n - o).abs() };
    let len = new.len().min(old.len());
    let (new, old) = (&new[..len], &old[..len]);
    let mut lane = [0.0f64; 4];
    let mut nan = false;
    let (nc, nr) = new.split_at(len - len % 4);
    let (oc, or) = old.split_at(len - len % 4);
    for (n4, o4) in nc.chunks_exact(4).zip(oc.chunks_exact(4)) {
        for l in 0..4 {
            let d = change(n4[l], o4[l]);
            nan |= d.is_nan();
            lane[l] = lane[l].max(d);
        }
    }
    for (&n, &o) in nr.iter().zip(or) {
        let d = change(n, o);
        nan |= d.is_nan();
        lane[0] = lane[0].max(d);
    }
    if nan {
        f64::INFINITY
    } else {
        lane[0].max(lane[1]).max(lane[2].max(lane[3]))
    }
}

/// Log-prior of state `s` of `v`: 0, or `-∞` when the evidence clamps `v` elsewhere.
fn prior(g: &FactorGraph, v: usize, s: usize) -> f64 {
    match g.evidence()[v] {
        Some(x) if x as usize != s => f64::NEG_INFINITY,
        _ => 0.0,
    }
}

/// Every variable-to-factor message from the factor-to-variable messages `fv`
/// (normalised to a maximum of 0).
fn variable_messages(g: &FactorGraph, lay: &Layout, fv: &[f64], vf: &mut [f64]) {
    for e in 0..lay.evar.len() {
        edge_message(g, lay, fv, vf, e);
    }
}

/// The variable-to-factor message of edge `e` from the other factors' messages to its
/// variable (normalised to a maximum of 0).
fn edge_message(g: &FactorGraph, lay: &Layout, fv: &[f64], vf: &mut [f64], e: usize) {
    let v = lay.evar[e] as usize;
    let out = &mut vf[lay.moff[e]..lay.moff[e + 1]];
    for (s, o) in out.iter_mut().enumerate() {
        *o = prior(g, v, s);
    }
    for &e2 in &lay.vedges[v] {
        if e2 != e {
            for (o, m) in out.iter_mut().zip(&fv[lay.moff[e2]..lay.moff[e2 + 1]]) {
                *o += m;
            }
        }
    }
    let m = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m > f64::NEG_INFINITY {
        for o in out.iter_mut() {
            *o -= m;
        }
    }
}

/// Normalised log-beliefs of every variable (log-sum-exp 0, or maximum 0 for max-product).
fn variable_beliefs(
    g: &FactorGraph,
    st: &mut State,
    max: bool,
) -> Result<Vec<Vec<f64>>, InferError> {
    // the evidence's log-prior plus the incoming messages in edge order, as the sweeps'
    // sums (the same additions in the same order as a per-variable loop)
    st.sums.fill(&st.lay, &st.fv);
    let sums = &st.sums;
    let mut beliefs = Vec::with_capacity(g.num_vars());
    let mut off = 0;
    for (v, &kv) in g.num_states().iter().enumerate() {
        let mut b: Vec<f64> = (off..off + kv).map(|i| sums.belief(i)).collect();
        off += kv;
        let z = if max {
            b.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        } else {
            lse(&b)
        };
        if z == f64::NEG_INFINITY {
            return Err(InferError::ZeroProbability {
                node: Some(v),
                cause: "loopy BP finds every state impossible (evidence and zero potentials)",
            });
        }
        for o in &mut b {
            *o -= z;
        }
        beliefs.push(b);
    }
    Ok(beliefs)
}

/// Per-thread scratch space of [`flood_block`]: no allocation per message.
#[derive(Default)]
struct Scratch {
    /// Sum-product accumulators, one per message entry of the factor.
    acc: Vec<f64>,
    /// The table position's state of each scope variable.
    ctr: Vec<usize>,
    /// Cardinality of each scope variable.
    cards: Vec<usize>,
    /// Offset of each scope variable's incoming message in `vf`.
    inc: Vec<usize>,
    /// Offset of each scope variable's outgoing message within `out`.
    outoff: Vec<usize>,
    /// The fresh messages of one factor (sequential and residual schedules).
    msg: Vec<f64>,
    /// The incoming variable-to-factor messages of one factor or block, computed from
    /// the variables' belief sums.
    inbuf: Vec<f64>,
    /// The block's incoming messages shifted to a maximum of 0, then (after the `exp`
    /// batch) in the linear domain.
    pbuf: Vec<f64>,
    /// Per factor of the block: whether the linear kernel takes it.
    linear: Vec<bool>,
    /// A table with a moved row variable: its unnormalised outgoing messages in the
    /// table's order.
    lo: Vec<f64>,
}

/// Each variable's sum of incoming factor-to-variable log-messages, kept as the sum of
/// the finite entries and the number of `-∞` ones, so that a variable-to-factor message
/// is the sum minus the receiver's own message without `∞ − ∞` (flooding: replaces the
/// per-edge gather over each variable's other factors). Until a `-∞` is seen (evidence,
/// or a hard zero reaching a message) no counts are kept, which halves the memory the
/// sweep reads at random.
struct BeliefSums {
    /// Per state: the sum of the finite incoming entries.
    fin: Vec<f64>,
    /// Per state: the number of `-∞` entries, the evidence's log-prior included; empty
    /// while there is none.
    ninf: Vec<u32>,
    /// `ninf` before any message: 1 for a state the evidence excludes (empty without
    /// evidence: all 0).
    init: Vec<u32>,
}

impl BeliefSums {
    fn new(g: &FactorGraph) -> Self {
        let total: usize = g.num_states().iter().sum();
        let mut init = Vec::new();
        if g.evidence().iter().any(Option::is_some) {
            init = vec![0u32; total];
            let mut off = 0;
            for (ev, &kv) in g.evidence().iter().zip(g.num_states()) {
                if let Some(x) = *ev {
                    for (s, slot) in init[off..off + kv].iter_mut().enumerate() {
                        if s != x as usize {
                            *slot = 1;
                        }
                    }
                }
                off += kv;
            }
        }
        Self {
            fin: vec![0.0; total],
            ninf: init.clone(),
            init,
        }
    }

    /// The counts before any message (the evidence's, or all 0).
    fn initial_counts(&self) -> Vec<u32> {
        if self.init.is_empty() {
            vec![0; self.fin.len()]
        } else {
            self.init.clone()
        }
    }

    /// Recomputes the sums from the factor-to-variable messages `fv` (edge order, one
    /// thread: the same bits for any thread count).
    fn fill(&mut self, lay: &Layout, fv: &[f64]) {
        self.fin.fill(0.0);
        if self.ninf.is_empty() {
            let mut clean = true;
            'edges: for (e, &b) in lay.eoff.iter().enumerate() {
                for (s, &m) in fv[lay.moff[e]..lay.moff[e + 1]].iter().enumerate() {
                    if m == f64::NEG_INFINITY {
                        clean = false;
                        break 'edges;
                    }
                    self.fin[b + s] += m;
                }
            }
            if clean {
                return;
            }
            // a `-∞` message: keep counts from now on
            self.fin.fill(0.0);
            self.ninf = self.initial_counts();
        }
        if self.init.is_empty() {
            self.ninf.fill(0);
        } else {
            self.ninf.copy_from_slice(&self.init);
        }
        for (e, &b) in lay.eoff.iter().enumerate() {
            for (s, &m) in fv[lay.moff[e]..lay.moff[e + 1]].iter().enumerate() {
                if m == f64::NEG_INFINITY {
                    self.ninf[b + s] += 1;
                } else {
                    self.fin[b + s] += m;
                }
            }
        }
    }

    /// Replaces factor `f`'s messages in `fv` by `new` (its slice, edge order) and
    /// updates its variables' sums by the differences (the counts exactly; the finite
    /// sums up to rounding, deterministic as the order is fixed).
    fn commit(&mut self, lay: &Layout, f: usize, fv: &mut [f64], new: &[f64]) {
        let base = lay.moff[lay.fedge[f]];
        if self.ninf.is_empty() && new.contains(&f64::NEG_INFINITY) {
            // no message held a `-∞` so far: the counts are the evidence's (none)
            self.ninf = self.initial_counts();
        }
        for e in lay.fedge[f]..lay.fedge[f + 1] {
            let b = lay.eoff[e];
            for i in lay.moff[e]..lay.moff[e + 1] {
                let (o, n) = (fv[i], new[i - base]);
                let j = b + i - lay.moff[e];
                match (o == f64::NEG_INFINITY, n == f64::NEG_INFINITY) {
                    (false, false) => self.fin[j] += n - o,
                    (true, false) => {
                        self.ninf[j] -= 1;
                        self.fin[j] += n;
                    }
                    (false, true) => {
                        self.ninf[j] += 1;
                        self.fin[j] -= o;
                    }
                    (true, true) => {}
                }
                fv[i] = n;
            }
        }
    }

    /// The log-belief sum of state `i` (`-∞` when an incoming entry is).
    fn belief(&self, i: usize) -> f64 {
        if self.ninf.get(i).is_some_and(|&n| n > 0) {
            f64::NEG_INFINITY
        } else {
            self.fin[i]
        }
    }

    /// Writes into `inc` the messages from the variable at `bo` to a factor whose own
    /// message to it is `own`: the sum minus `own`.
    fn without(&self, bo: usize, own: &[f64], inc: &mut [f64]) {
        let fin = &self.fin[bo..bo + own.len()];
        if self.ninf.is_empty() {
            for ((slot, &o), &f) in inc.iter_mut().zip(own).zip(fin) {
                *slot = f - o;
            }
            return;
        }
        let ninf = &self.ninf[bo..bo + own.len()];
        for (((slot, &o), &f), &n) in inc.iter_mut().zip(own).zip(fin).zip(ninf) {
            let own_inf = u32::from(o == f64::NEG_INFINITY);
            *slot = if n > own_inf {
                f64::NEG_INFINITY
            } else if own_inf == 1 {
                f
            } else {
                f - o
            };
        }
    }
}

/// Factors per block of the flooding sweep.
const FLOOD_BLOCK: usize = 64;
/// Table entries per sweep below which a flooding sweep is not parallelised.
const FLOOD_PARALLEL_MIN: usize = 1 << 15;

/// Whether a flooding sweep of `g` runs on the calling thread: a sweep over fewer than
/// [`FLOOD_PARALLEL_MIN`] table entries, or a pool of one thread (handing blocks to the
/// pool costs more than they take).
fn flood_serial(g: &FactorGraph) -> bool {
    let work: usize = (0..g.factors().len())
        .map(|f| g.factor_table(f).len())
        .sum();
    rayon::current_num_threads() == 1 || work < FLOOD_PARALLEL_MIN
}

/// [`flood_block`] run through [`pulp`]'s dispatch, compiled for the processor's vector
/// unit as well (AVX2 where there is one). The block's arithmetic has no fused
/// multiply-add and no reassociation on any target and its `exp` and `ln` are
/// [`crate::vmath`]'s (the same bits on every unit), so every unit gives the same bits.
#[allow(clippy::too_many_arguments)]
fn flood_block_dispatched(
    g: &FactorGraph,
    fs: std::ops::Range<usize>,
    lay: &Layout,
    lt: &LinearTables,
    b: &BeliefSums,
    fv: &[f64],
    max: bool,
    out: &mut [f64],
    sc: &mut Scratch,
) {
    struct Call<'a> {
        g: &'a FactorGraph,
        fs: std::ops::Range<usize>,
        lay: &'a Layout,
        lt: &'a LinearTables,
        b: &'a BeliefSums,
        fv: &'a [f64],
        max: bool,
        out: &'a mut [f64],
        sc: &'a mut Scratch,
    }
    impl pulp::WithSimd for Call<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: pulp::Simd>(self, _simd: S) {
            let Call {
                g,
                fs,
                lay,
                lt,
                b,
                fv,
                max,
                out,
                sc,
            } = self;
            flood_block(g, fs, lay, lt, b, fv, max, out, sc);
        }
    }
    crate::vmath::arch().dispatch(Call {
        g,
        fs,
        lay,
        lt,
        b,
        fv,
        max,
        out,
        sc,
    });
}

/// The new messages of the factors `fs` (flooding: a block of [`FLOOD_BLOCK`]
/// consecutive factors; sequential and residual: one factor), written to `out` (their
/// slice of the message array, edge order), with the incoming messages computed from
/// the belief sums `b` and the factors' current outgoing messages `fv`: the message
/// from `v` is `v`'s sum minus the factor's own message to `v`.
///
/// In four passes over the block, so that the transcendental functions run as two
/// vectorised batches ([`crate::vmath`]) instead of one call per entry:
/// 1. all incoming log-messages are gathered (independent loads), each shifted to a
///    maximum of 0, and each factor's spread checked (see [`linear_messages`]);
/// 2. one `exp` batch over the block turns the shifted messages into linear ones;
/// 3. each factor with a linear table and an acceptable spread computes its messages in
///    the linear domain, each written as ratios to its largest entry;
/// 4. one `ln` batch over the block turns the ratios into log-messages; the factors
///    the linear kernel declined then take the log-domain kernel.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn flood_block(
    g: &FactorGraph,
    fs: std::ops::Range<usize>,
    lay: &Layout,
    lt: &LinearTables,
    b: &BeliefSums,
    fv: &[f64],
    max: bool,
    out: &mut [f64],
    sc: &mut Scratch,
) {
    let (e0, e1) = (lay.fedge[fs.start], lay.fedge[fs.end]);
    let base = lay.moff[e0];
    let n = lay.moff[e1] - base;
    // grown, never cleared: `inc` is written whole before it is read; `p` is written for
    // the factors the linear kernel takes (the others' entries go through the `exp`
    // batch unread)
    let (mut hinc, mut hp) = (std::mem::take(&mut sc.inbuf), std::mem::take(&mut sc.pbuf));
    if hinc.len() < n {
        hinc.resize(n, 0.0);
        hp.resize(n, 0.0);
    }
    let (inc, p) = (&mut hinc[..n], &mut hp[..n]);
    for e in e0..e1 {
        let (lo, hi) = (lay.moff[e], lay.moff[e + 1]);
        b.without(lay.eoff[e], &fv[lo..hi], &mut inc[lo - base..hi - base]);
    }
    // pass 1: shifted messages and each factor's verdict
    let mut linear = std::mem::take(&mut sc.linear);
    linear.clear();
    for f in fs.clone() {
        let t = g.factors()[f].table as usize;
        let ok = match (lt.table(t, g.tables()[t].len()), edge_cards(lay, f)) {
            (Some((_, range, _)), Some(cards)) => {
                let r = lay.moff[lay.fedge[f]] - base..lay.moff[lay.fedge[f + 1]] - base;
                let toff = &lay.toff[lay.fedge[f]..lay.fedge[f + 1]];
                linear_inputs(range, cards, toff, &inc[r.clone()], &mut p[r])
            }
            _ => false,
        };
        linear.push(ok);
    }
    // pass 2
    crate::vmath::exp_in_place(p);
    // pass 3
    for (f, &ok) in fs.clone().zip(&linear) {
        if ok {
            let r = lay.moff[lay.fedge[f]] - base..lay.moff[lay.fedge[f + 1]] - base;
            let t = g.factors()[f].table as usize;
            if let Some((lin, _, row)) = lt.table(t, g.tables()[t].len()) {
                linear_ratios(lin, row, lay, f, max, &p[r.clone()], &mut out[r], sc);
            }
        }
    }
    // pass 4
    crate::vmath::ln_in_place(out);
    for (f, &ok) in fs.zip(&linear) {
        if !ok {
            let r = lay.moff[lay.fedge[f]] - base..lay.moff[lay.fedge[f + 1]] - base;
            log_factor_update(g, f, lay, &inc[r.clone()], max, &mut out[r], sc);
        }
    }
    (sc.inbuf, sc.pbuf, sc.linear) = (hinc, hp, linear);
}

/// The cardinality of each edge of factor `f` ([`Layout::ecard`]); `None` above
/// [`LIN_MAX_ARITY`].
#[inline(always)]
fn edge_cards(lay: &Layout, f: usize) -> Option<&[usize]> {
    let (e0, e1) = (lay.fedge[f], lay.fedge[f + 1]);
    (e1 - e0 <= LIN_MAX_ARITY).then(|| &lay.ecard[e0..e1])
}

/// Pass 1 of [`flood_block`] for one factor with a linear table of spread `range`:
/// shifts each incoming log-message (`inc`, edge order, over `cards`) to a maximum of 0
/// into `p`, the message of edge `j` at `toff[j]` (the table's order,
/// [`Layout::toff`]), and returns whether the linear kernel takes the factor: each
/// message has a possible state and the spread of table and messages is at most
/// [`LIN_MAX_RANGE`]. A factor of one variable is always taken (its message is its
/// table, whatever comes in; `p` is then left as it is).
#[inline(always)]
fn linear_inputs(range: f64, cards: &[usize], toff: &[u32], inc: &[f64], p: &mut [f64]) -> bool {
    if cards.len() == 1 {
        return true;
    }
    let mut spread = range;
    let mut off = 0;
    for (&c, &t) in cards.iter().zip(toff) {
        let t = t as usize;
        match shift_message(&inc[off..off + c], &mut p[t..t + c]) {
            Some(s) => spread += s,
            None => return false,
        }
        off += c;
    }
    spread <= LIN_MAX_RANGE
}

/// Writes `m − max m` into `d` (the shift to a maximum of 0 that the linear kernel's
/// `exp` batch takes) and returns the message's spread `max m − min finite m`; `None`
/// when the message has no possible state (all `-∞`; `d` is then NaN).
#[inline(always)]
fn shift_message(m: &[f64], d: &mut [f64]) -> Option<f64> {
    let (mut mx, mut mn) = (f64::NEG_INFINITY, f64::INFINITY);
    for &x in m {
        mx = mx.max(x);
        if x > f64::NEG_INFINITY {
            mn = mn.min(x);
        }
    }
    for (q, &x) in d.iter_mut().zip(m) {
        *q = x - mx;
    }
    (mx > f64::NEG_INFINITY).then_some(mx - mn)
}

/// Pass 3 of [`flood_block`] for factor `f` with linear table `lin` (its scope
/// position `row` stored last, or [`ROW_AS_IS`]): from the incoming linear messages `p`
/// (each with a maximum of 1, laid out in the table's order by [`linear_inputs`]) the
/// outgoing messages, each as ratios to its largest entry (all 0 for a message without
/// a positive entry), into `out` (edge order).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn linear_ratios(
    lin: &[f64],
    row: u8,
    lay: &Layout,
    f: usize,
    max: bool,
    p: &[f64],
    out: &mut [f64],
    sc: &mut Scratch,
) {
    let (e0, e1) = (lay.fedge[f], lay.fedge[f + 1]);
    let Some(cards) = edge_cards(lay, f) else {
        return;
    };
    if row == ROW_AS_IS {
        linear_unnormalised(lin, cards, max, p, out);
        ratios_to_max(cards, out);
    } else {
        // the kernel in the table's order into scratch, the ratios from there into
        // the edge order
        let n = p.len();
        let mut ho = std::mem::take(&mut sc.lo);
        ho.resize(n.max(ho.len()), 0.0);
        let pout = &mut ho[..n];
        linear_unnormalised(lin, &lay.tcard[e0..e1], max, p, pout);
        let mut off = 0;
        for (&c, &t) in cards.iter().zip(&lay.toff[e0..e1]) {
            let t = t as usize;
            ratios_into(&pout[t..t + c], &mut out[off..off + c]);
            off += c;
        }
        sc.lo = ho;
    }
}

/// The unnormalised linear messages `o` of a factor over `cards` (table order) from
/// its incoming linear messages `p`: [`binary3_core`] for three binary variables, else
/// [`linear_core`].
#[inline(always)]
fn linear_unnormalised(lin: &[f64], cards: &[usize], max: bool, p: &[f64], o: &mut [f64]) {
    if let (Ok(t), [2, 2, 2]) = (<&[f64; 8]>::try_from(lin), cards) {
        let (p0, p1, p2) = ([p[0], p[1]], [p[2], p[3]], [p[4], p[5]]);
        let m = if max {
            binary3_core::<true>(t, p0, p1, p2)
        } else {
            binary3_core::<false>(t, p0, p1, p2)
        };
        o[..6].copy_from_slice(m.as_flattened());
    } else if max {
        linear_core::<true>(lin, cards, p, o);
    } else {
        linear_core::<false>(lin, cards, p, o);
    }
}

/// Each message of `o` (over `cards`) divided by its largest entry (`x = max` gives
/// exactly 1, whose `ln` is exactly 0); a message without a positive entry becomes all
/// 0 (`-∞` after the `ln`).
#[inline(always)]
fn ratios_to_max(cards: &[usize], o: &mut [f64]) {
    let mut off = 0;
    for &c in cards {
        let m = &mut o[off..off + c];
        let mx = m.iter().copied().fold(0.0f64, f64::max);
        if mx > 0.0 {
            // a product by the reciprocal (within 1 ulp of the quotient), the maximum
            // itself exactly 1
            let inv = 1.0 / mx;
            for x in m.iter_mut() {
                *x = if *x == mx { 1.0 } else { *x * inv };
            }
        } else {
            m.fill(0.0);
        }
        off += c;
    }
}

/// [`ratios_to_max`] of one message `m` written to `d` (the same values).
#[inline(always)]
fn ratios_into(m: &[f64], d: &mut [f64]) {
    let mx = m.iter().copied().fold(0.0f64, f64::max);
    if mx > 0.0 {
        let inv = 1.0 / mx;
        for (y, &x) in d.iter_mut().zip(m) {
            *y = if x == mx { 1.0 } else { x * inv };
        }
    } else {
        d.fill(0.0);
    }
}

/// The log-domain kernel for factor `f` (the linear kernel declined it) from its
/// incoming log-messages `inc` (edge order, as `out`).
fn log_factor_update(
    g: &FactorGraph,
    f: usize,
    lay: &Layout,
    inc: &[f64],
    max: bool,
    out: &mut [f64],
    sc: &mut Scratch,
) {
    let k = g.num_states();
    let e0 = lay.fedge[f];
    let a = lay.fedge[f + 1] - e0;
    let base = lay.moff[e0];
    sc.cards.clear();
    sc.inc.clear();
    sc.outoff.clear();
    for j in 0..a {
        sc.cards.push(k[lay.evar[e0 + j] as usize]);
        sc.inc.push(lay.moff[e0 + j] - base);
        sc.outoff.push(lay.moff[e0 + j] - base);
    }
    factor_kernel(g.factor_table(f), a, inc, max, out, sc);
}

/// The largest arity and table size of a factor the linear-domain kernel takes (larger
/// ones take the log-domain kernel).
const LIN_MAX_ARITY: usize = 32;
const LIN_MAX_ENTRIES: usize = 1 << 20;
/// The most linear-table entries kept for one run (2^27: 1 GiB), so that a pool near
/// the model's limit (2^30 entries) is not copied whole; tables past it take the
/// log-domain kernel.
const LIN_MAX_TOTAL: usize = 1 << 27;
/// The largest spread (in nats) between the largest and the smallest non-zero product
/// of a table entry and its incoming messages that the linear-domain kernel accepts:
/// every non-zero product stays above `e^-600`, far from `f64`'s smallest normal
/// number (`e^-708`), so no term underflows.
const LIN_MAX_RANGE: f64 = 600.0;

/// Each pooled table in the linear domain, `exp(θ − max θ)` (a hard zero stays 0), with
/// its spread `max θ − min finite θ`; tables over [`LIN_MAX_ENTRIES`] entries, of a
/// spread over [`LIN_MAX_RANGE`], without a finite entry or past [`LIN_MAX_TOTAL`]
/// entries in all have none. When one scope variable has more states than the last
/// one (and every factor using the table has the same cardinalities), the linear table
/// is stored with that variable moved last ([`LinearTables::row`]), so the kernel's rows
/// run over the variable with the most states (e.g. pathfinder's 63-state `Fault`).
struct LinearTables {
    /// Offset of each pooled table in `lin` (`usize::MAX`: none).
    off: Vec<usize>,
    /// The spread of each pooled table.
    range: Vec<f64>,
    /// The scope position stored last in each pooled table's linear form
    /// ([`ROW_AS_IS`]: the scope's own order).
    row: Vec<u8>,
    /// The linear tables, one after the other.
    lin: Vec<f64>,
}

/// [`LinearTables::row`] of a table kept in its scope's order.
const ROW_AS_IS: u8 = u8::MAX;

impl LinearTables {
    /// The linear tables of `g`'s pool; none at all when their memory cannot be had
    /// (the log-domain kernel then runs everywhere).
    fn new(g: &FactorGraph) -> Self {
        let tables = g.tables();
        let mut off = vec![usize::MAX; tables.len()];
        let mut range = vec![f64::INFINITY; tables.len()];
        let mut row = vec![ROW_AS_IS; tables.len()];
        let bound: usize = tables
            .iter()
            .map(Vec::len)
            .filter(|&l| l <= LIN_MAX_ENTRIES)
            .fold(0usize, usize::saturating_add)
            .min(LIN_MAX_TOTAL);
        let mut lin = Vec::new();
        if lin.try_reserve_exact(bound).is_err() {
            return Self {
                off,
                range,
                row,
                lin,
            };
        }
        // the cardinalities of the first factor using each table, and whether every
        // factor using it has the same (only then can its rows be chosen per table)
        let k = g.num_states();
        let mut first = vec![usize::MAX; tables.len()];
        let mut mixed = vec![false; tables.len()];
        for (f, fac) in g.factors().iter().enumerate() {
            let t = fac.table as usize;
            if first[t] == usize::MAX {
                first[t] = f;
            } else if !mixed[t] {
                let other = &g.factors()[first[t]].vars;
                mixed[t] = other.len() != fac.vars.len()
                    || other
                        .iter()
                        .zip(&fac.vars)
                        .any(|(&a, &b)| k[a as usize] != k[b as usize]);
            }
        }
        let mut cards = Vec::new();
        // one pass per table: its maximum and smallest finite entry, then (the table
        // still in cache) its linear form
        for (i, t) in tables.iter().enumerate() {
            if t.len() > LIN_MAX_ENTRIES || lin.len() + t.len() > LIN_MAX_TOTAL {
                continue;
            }
            // the entries are finite or -∞ (a FactorGraph invariant)
            let (mut mx, mut lo) = (f64::NEG_INFINITY, f64::INFINITY);
            for &x in t {
                if x > mx {
                    mx = x;
                }
                if x < lo && x > f64::NEG_INFINITY {
                    lo = x;
                }
            }
            if !(mx > f64::NEG_INFINITY && mx - lo <= LIN_MAX_RANGE) {
                continue;
            }
            off[i] = lin.len();
            range[i] = mx - lo;
            cards.clear();
            if first[i] != usize::MAX && !mixed[i] {
                cards.extend(g.factors()[first[i]].vars.iter().map(|&v| k[v as usize]));
            }
            // the first variable with the most states, if it has more than the last
            let r = cards
                .iter()
                .enumerate()
                .fold(None, |best: Option<(usize, usize)>, (j, &c)| match best {
                    Some((_, bc)) if bc >= c => best,
                    _ => Some((j, c)),
                })
                .filter(|&(j, c)| j + 1 < cards.len() && c > cards[cards.len() - 1])
                .map(|(j, _)| j);
            match r {
                Some(r) if cards.len() <= LIN_MAX_ARITY => {
                    row[i] = r as u8;
                    // the scope's order with `r` moved last; an odometer over it reads
                    // the original table at the matching offsets
                    let strides = table_strides(&cards);
                    let order: Vec<usize> = (0..cards.len())
                        .filter(|&j| j != r)
                        .chain(std::iter::once(r))
                        .collect();
                    let pc: Vec<usize> = order.iter().map(|&j| cards[j]).collect();
                    let ps: Vec<usize> = order.iter().map(|&j| strides[j]).collect();
                    let mut ctr = vec![0usize; pc.len()];
                    for _ in 0..t.len() {
                        let o: usize = ctr.iter().zip(&ps).map(|(&c, &s)| c * s).sum();
                        lin.push((t[o] - mx).exp());
                        odometer(&mut ctr, &pc);
                    }
                }
                _ => lin.extend(t.iter().map(|&x| (x - mx).exp())),
            }
        }
        Self {
            off,
            range,
            row,
            lin,
        }
    }

    /// The linear table of pooled table `t` (of `len` entries), its spread and the
    /// scope position stored last ([`ROW_AS_IS`]: none moved), if it has one.
    #[inline]
    fn table(&self, t: usize, len: usize) -> Option<(&[f64], f64, u8)> {
        let o = self.off[t];
        (o != usize::MAX).then(|| (&self.lin[o..o + len], self.range[t], self.row[t]))
    }
}

/// Row-major strides of a table over `cards` (last variable fastest).
fn table_strides(cards: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; cards.len()];
    for j in (0..cards.len().saturating_sub(1)).rev() {
        s[j] = s[j + 1] * cards[j + 1];
    }
    s
}

/// One row of the linear kernel over the variable stored last: `o[s] ⊕= t[s] · pre`
/// for each state `s` and the return value `⊕_s t[s] · q[s]` (`⊕`: `+`, or `max` for
/// max-product). Rows of 8 or more entries accumulate the return value in four
/// interleaved lanes (combined as `(l₀ ⊕ l₁) ⊕ (l₂ ⊕ l₃)`), so the compiler can
/// vectorise both halves; shorter rows run one plain loop.
#[inline(always)]
fn kernel_row<const MAX: bool>(o: &mut [f64], t: &[f64], q: &[f64], pre: f64) -> f64 {
    let op = |x: f64, y: f64| if MAX { x.max(y) } else { x + y };
    let n = t.len();
    if n < 8 {
        let mut srow = 0.0;
        for ((slot, &tv), &qv) in o.iter_mut().zip(t).zip(q) {
            *slot = op(*slot, tv * pre);
            srow = op(srow, tv * qv);
        }
        return srow;
    }
    let (o, q) = (&mut o[..n], &q[..n]);
    for (slot, &tv) in o.iter_mut().zip(t) {
        *slot = op(*slot, tv * pre);
    }
    let mut lane = [0.0f64; 4];
    let (tc, tr) = t.split_at(n - n % 4);
    let (qc, qr) = q.split_at(n - n % 4);
    for (t4, q4) in tc.chunks_exact(4).zip(qc.chunks_exact(4)) {
        for l in 0..4 {
            lane[l] = op(lane[l], t4[l] * q4[l]);
        }
    }
    for (l, (&tv, &qv)) in tr.iter().zip(qr).enumerate() {
        lane[l] = op(lane[l], tv * qv);
    }
    op(op(lane[0], lane[1]), op(lane[2], lane[3]))
}

/// The unnormalised linear messages of a factor of three binary variables with linear
/// table `t` and incoming linear messages `p0`, `p1`, `p2`: the products over the last
/// variable are shared by the messages to the first two (`u`), the products of the first
/// two messages by the message to the third (`w`).
#[inline(always)]
fn binary3_core<const MAX: bool>(
    t: &[f64; 8],
    p0: [f64; 2],
    p1: [f64; 2],
    p2: [f64; 2],
) -> [[f64; 2]; 3] {
    let op = |x: f64, y: f64| if MAX { x.max(y) } else { x + y };
    // u[x0][x1] = Σ_x2 T(x0, x1, x2) p2(x2)
    let u = [
        [
            op(t[0] * p2[0], t[1] * p2[1]),
            op(t[2] * p2[0], t[3] * p2[1]),
        ],
        [
            op(t[4] * p2[0], t[5] * p2[1]),
            op(t[6] * p2[0], t[7] * p2[1]),
        ],
    ];
    let o0 = [
        op(u[0][0] * p1[0], u[0][1] * p1[1]),
        op(u[1][0] * p1[0], u[1][1] * p1[1]),
    ];
    let o1 = [
        op(p0[0] * u[0][0], p0[1] * u[1][0]),
        op(p0[0] * u[0][1], p0[1] * u[1][1]),
    ];
    let w = [p0[0] * p1[0], p0[0] * p1[1], p0[1] * p1[0], p0[1] * p1[1]];
    let o2 = [
        op(op(w[0] * t[0], w[1] * t[2]), op(w[2] * t[4], w[3] * t[6])),
        op(op(w[0] * t[1], w[1] * t[3]), op(w[2] * t[5], w[3] * t[7])),
    ];
    [o0, o1, o2]
}

/// A factor's messages in the linear domain, as [`flood_block`] computes them for a
/// block (here for one factor with its table in scope order, through the same passes
/// [`linear_inputs`], [`linear_unnormalised`] and [`ratios_to_max`]): the incoming
/// log-messages `inc` (edge order, `Σ cards` entries) are shifted to a maximum of 0 and
/// exponentiated, the message to `j` at `x_j` is `Σ_{x: x_j} T(x) Π_{i≠j} p_i(x_i)`
/// (max-product: the maximum) over the linear table `T = exp(θ − max θ)`, and its
/// logarithm relative to the message's largest entry is written to `out`. Exact in the
/// same sense as the log-domain kernel (a hard zero stays a zero, the receiver's own
/// message is left out rather than divided out); the arithmetic differs only in
/// rounding.
///
/// Returns false (nothing usable in `out`) when a variable's incoming message has no
/// possible state or the spread of table and messages exceeds [`LIN_MAX_RANGE`] (then a
/// product could underflow); the caller takes the log-domain kernel.
#[cfg(test)]
fn linear_messages<const MAX: bool>(
    lin: &[f64],
    table_range: f64,
    cards: &[usize],
    inc: &[f64],
    out: &mut [f64],
    p: &mut [f64],
) -> bool {
    let toff: Vec<u32> = cards
        .iter()
        .scan(0u32, |o, &c| {
            let t = *o;
            *o += c as u32;
            Some(t)
        })
        .collect();
    if !linear_inputs(table_range, cards, &toff, inc, p) {
        return false;
    }
    let off: usize = cards.iter().sum();
    crate::vmath::exp_in_place(&mut p[..off]);
    linear_unnormalised(lin, cards, MAX, &p[..off], out);
    ratios_to_max(cards, out);
    crate::vmath::ln_in_place(&mut out[..off]);
    true
}

/// The unnormalised linear messages `o` (edge order) of a factor with linear table
/// `lin` over `cards` from its incoming linear messages `p` (each with a maximum of 1):
/// the message to `j` at `x_j` is `Σ_{x: x_j} T(x) Π_{i≠j} p_i(x_i)` (max-product: the
/// maximum). Every non-zero product must stay a normal number (the callers' spread
/// checks). Three binary variables take [`binary3_core`] instead. A last variable of 2
/// to 7 states takes rows of that fixed length ([`FixedRow`]: the last variable's
/// message held in registers across rows, each row unrolled), any other [`kernel_row`];
/// both compute the same products and sums in the same order, so the same bits.
fn linear_core<const MAX: bool>(lin: &[f64], cards: &[usize], p: &[f64], o: &mut [f64]) {
    o.fill(0.0);
    match cards {
        // a constant factor sends no message
        [] => {}
        // one variable: the message is the table itself
        [_] => o[..lin.len()].copy_from_slice(lin),
        [.., 2] => linear_rows::<MAX, FixedRow<'_, MAX, 2>>(lin, cards, p, o),
        [.., 3] => linear_rows::<MAX, FixedRow<'_, MAX, 3>>(lin, cards, p, o),
        [.., 4] => linear_rows::<MAX, FixedRow<'_, MAX, 4>>(lin, cards, p, o),
        [.., 5] => linear_rows::<MAX, FixedRow<'_, MAX, 5>>(lin, cards, p, o),
        [.., 6] => linear_rows::<MAX, FixedRow<'_, MAX, 6>>(lin, cards, p, o),
        [.., 7] => linear_rows::<MAX, FixedRow<'_, MAX, 7>>(lin, cards, p, o),
        _ => linear_rows::<MAX, SliceRow<'_, MAX>>(lin, cards, p, o),
    }
}

/// The last variable's side of [`linear_rows`]: its outgoing message `o` (accumulated
/// over the rows) and its incoming message `q`, each of [`RowKernel::len`] entries.
trait RowKernel<'a>: Sized {
    fn new(o: &'a mut [f64], q: &'a [f64]) -> Self;
    /// Entries per row (the last variable's cardinality).
    fn len(&self) -> usize;
    /// [`kernel_row`] on row `t` with prefix product `pre`.
    fn row(&mut self, t: &[f64], pre: f64) -> f64;
    /// Writes the accumulated message back to `o`.
    fn finish(self);
}

/// [`RowKernel`] over the slices themselves ([`kernel_row`], any length).
struct SliceRow<'a, const MAX: bool> {
    o: &'a mut [f64],
    q: &'a [f64],
}

impl<'a, const MAX: bool> RowKernel<'a> for SliceRow<'a, MAX> {
    #[inline(always)]
    fn new(o: &'a mut [f64], q: &'a [f64]) -> Self {
        Self { o, q }
    }
    #[inline(always)]
    fn len(&self) -> usize {
        self.q.len()
    }
    #[inline(always)]
    fn row(&mut self, t: &[f64], pre: f64) -> f64 {
        kernel_row::<MAX>(self.o, t, self.q, pre)
    }
    #[inline(always)]
    fn finish(self) {}
}

/// [`RowKernel`] for a last variable of `N < 8` states: the message accumulated in an
/// array (registers) and written back once; each row is [`kernel_row`]'s short loop
/// unrolled (the same operations in the same order).
struct FixedRow<'a, const MAX: bool, const N: usize> {
    acc: [f64; N],
    q: [f64; N],
    o: &'a mut [f64],
}

impl<'a, const MAX: bool, const N: usize> RowKernel<'a> for FixedRow<'a, MAX, N> {
    #[inline(always)]
    fn new(o: &'a mut [f64], q: &'a [f64]) -> Self {
        let (mut acc, mut qa) = ([0.0; N], [0.0; N]);
        acc.copy_from_slice(&o[..N]);
        qa.copy_from_slice(&q[..N]);
        Self { acc, q: qa, o }
    }
    #[inline(always)]
    fn len(&self) -> usize {
        N
    }
    #[inline(always)]
    fn row(&mut self, t: &[f64], pre: f64) -> f64 {
        let op = |x: f64, y: f64| if MAX { x.max(y) } else { x + y };
        let t = &t[..N];
        let mut srow = 0.0;
        for ((a, &tv), &qv) in self.acc.iter_mut().zip(t).zip(&self.q) {
            *a = op(*a, tv * pre);
            srow = op(srow, tv * qv);
        }
        srow
    }
    #[inline(always)]
    fn finish(self) {
        self.o[..N].copy_from_slice(&self.acc);
    }
}

/// [`linear_core`] for two or more variables (`o` zeroed), the last variable's rows
/// through `R`.
#[inline(always)]
fn linear_rows<'a, const MAX: bool, R: RowKernel<'a>>(
    lin: &[f64],
    cards: &[usize],
    p: &'a [f64],
    o: &'a mut [f64],
) {
    let acc = |slot: &mut f64, w: f64| {
        if MAX {
            if w > *slot {
                *slot = w;
            }
        } else {
            *slot += w;
        }
    };
    match cards.len() {
        // not reached: `linear_core` handles these itself
        0 | 1 => {}
        // the rows below for one and two other variables, without the odometer and the
        // prefix and suffix products
        2 => {
            let (c0, c1) = (cards[0], cards[1]);
            let (p0, p1) = p[..c0 + c1].split_at(c0);
            let (o0, o1) = o[..c0 + c1].split_at_mut(c0);
            let mut last = R::new(o1, p1);
            let kl = last.len();
            for ((slot0, &q0), row) in o0.iter_mut().zip(p0).zip(lin.chunks_exact(kl)) {
                let srow = last.row(row, q0);
                acc(slot0, srow);
            }
            last.finish();
        }
        3 => {
            let (c0, c1, c2) = (cards[0], cards[1], cards[2]);
            let (p0, rest) = p[..c0 + c1 + c2].split_at(c0);
            let (p1, p2) = rest.split_at(c1);
            let (o0, rest) = o[..c0 + c1 + c2].split_at_mut(c0);
            let (o1, o2) = rest.split_at_mut(c1);
            let mut last = R::new(o2, p2);
            let kl = last.len();
            for ((slot0, &q0), block) in o0.iter_mut().zip(p0).zip(lin.chunks_exact(c1 * kl)) {
                let mut s0 = 0.0;
                for ((slot1, &q1), row) in o1.iter_mut().zip(p1).zip(block.chunks_exact(kl)) {
                    let srow = last.row(row, q0 * q1);
                    acc(&mut s0, srow * q1);
                    acc(slot1, srow * q0);
                }
                acc(slot0, s0);
            }
            last.finish();
        }
        a => {
            // blocks over the last two variables, each as the arity-3 kernel's inner
            // loops, nested as that kernel: `pre[l]` is the product of the messages
            // of the variables before `l` at the current position, `sub[l]` the running
            // sum (max) over the positions of `l` seen so far of `Σ T Π_{k ≥ l} p_k`
            // below them. A finished block hands its sum `s` to the last variable `l`
            // before the block: `o_l(x_l) ⊕= s · pre[l]`, `sub[l] ⊕= s · p_l(x_l)`;
            // when `l`'s positions are exhausted, `sub[l]` is handed up the same way.
            // An entry costs two products, a row three more, a block O(1) amortised.
            let mid = a - 2;
            let (km, kl) = (cards[mid], cards[a - 1]);
            let mut start = [0usize; LIN_MAX_ARITY];
            let mut s = 0;
            for j in 0..a {
                start[j] = s;
                s += cards[j];
            }
            let (p_others, rest) = p.split_at(start[mid]);
            let (p_mid, p_last) = rest[..km + kl].split_at(km);
            let (o_others, rest) = o.split_at_mut(start[mid]);
            let (o_mid, o_last) = rest[..km + kl].split_at_mut(km);
            let mut last = R::new(o_last, p_last);
            let mut ctr = [0usize; LIN_MAX_ARITY];
            let mut pre = [1.0f64; LIN_MAX_ARITY];
            let mut sub = [0.0f64; LIN_MAX_ARITY];
            for l in 0..mid {
                pre[l + 1] = pre[l] * p_others[start[l]];
            }
            for block in lin.chunks_exact(km * kl) {
                let outer = pre[mid];
                let mut val = 0.0;
                for ((slot, &q), row) in o_mid.iter_mut().zip(p_mid).zip(block.chunks_exact(kl)) {
                    let srow = last.row(row, outer * q);
                    acc(&mut val, srow * q);
                    acc(slot, srow * outer);
                }
                // hand `val` up until a variable still has positions left
                let mut l = mid;
                loop {
                    l -= 1;
                    let x = start[l] + ctr[l];
                    acc(&mut o_others[x], val * pre[l]);
                    acc(&mut sub[l], val * p_others[x]);
                    ctr[l] += 1;
                    if ctr[l] < cards[l] || l == 0 {
                        break;
                    }
                    ctr[l] = 0;
                    val = sub[l];
                    sub[l] = 0.0;
                }
                // the products below the variable that moved
                for k in l..mid {
                    pre[k + 1] = pre[k] * p_others[start[k] + ctr[k].min(cards[k] - 1)];
                }
            }
            last.finish();
        }
    }
}

/// The messages of a factor with table `table` and arity `a` from the incoming messages
/// in `vf` at `sc.inc` (cardinalities `sc.cards`, output offsets `sc.outoff`).
fn factor_kernel(
    table: &[f64],
    a: usize,
    vf: &[f64],
    max: bool,
    out: &mut [f64],
    sc: &mut Scratch,
) {
    out.fill(f64::NEG_INFINITY);
    sc.acc.clear();
    sc.acc.resize(out.len(), 0.0);
    let finite = (0..a).all(|i| {
        vf[sc.inc[i]..sc.inc[i] + sc.cards[i]]
            .iter()
            .all(|x| x.is_finite())
    });
    if finite && fast_factor_messages(table, a, vf, max, out, sc) {
        return;
    }
    out.fill(f64::NEG_INFINITY);
    sc.acc.clear();
    sc.acc.resize(out.len(), 0.0);
    // two passes: maxima, then (sum-product) the sums of exp(x - max)
    for pass in 0..if max { 1 } else { 2 } {
        sc.ctr.clear();
        sc.ctr.resize(a, 0);
        for &t in table {
            for j in 0..a {
                let mut s = t;
                for i in 0..a {
                    if i != j {
                        s += vf[sc.inc[i] + sc.ctr[i]];
                    }
                }
                let slot = sc.outoff[j] + sc.ctr[j];
                if pass == 0 {
                    if s > out[slot] {
                        out[slot] = s;
                    }
                } else if out[slot] > f64::NEG_INFINITY {
                    sc.acc[slot] += (s - out[slot]).exp();
                }
            }
            odometer(&mut sc.ctr[..a], &sc.cards[..a]);
        }
    }
    if !max {
        for (o, s) in out.iter_mut().zip(&sc.acc) {
            if *o > f64::NEG_INFINITY {
                *o += s.ln();
            }
        }
    }
    for j in 0..a {
        let r = sc.outoff[j]..sc.outoff[j] + sc.cards[j];
        let m = out[r.clone()]
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        if m > f64::NEG_INFINITY {
            for o in &mut out[r] {
                *o -= m;
            }
        }
    }
}

/// The factor's messages when every incoming message is finite: each table entry's full
/// sum `s_e = θ_e + Σ_i m_i(x_i)` once, then the message to `j` at state `x` is
/// `ln Σ_{e: x_j = x} exp(s_e) − m_j(x)` (max-product: the maximum), so a factor of `E`
/// entries costs `E` exponentials instead of `E·a`. Returns false (nothing usable in
/// `out`) when a group's maximum lies more than 600 nats below the factor's, where one
/// shared shift could underflow; the caller then takes the per-message path.
fn fast_factor_messages(
    table: &[f64],
    a: usize,
    vf: &[f64],
    max: bool,
    out: &mut [f64],
    sc: &mut Scratch,
) -> bool {
    let mut smax = f64::NEG_INFINITY;
    // pass 1: per-slot maxima (the max-product messages before the own-message removal)
    sc.ctr.clear();
    sc.ctr.resize(a, 0);
    for &t in table {
        let mut s = t;
        for i in 0..a {
            s += vf[sc.inc[i] + sc.ctr[i]];
        }
        smax = smax.max(s);
        for j in 0..a {
            let slot = sc.outoff[j] + sc.ctr[j];
            if s > out[slot] {
                out[slot] = s;
            }
        }
        odometer(&mut sc.ctr[..a], &sc.cards[..a]);
    }
    if !max {
        if out
            .iter()
            .any(|&m| m > f64::NEG_INFINITY && m < smax - 600.0)
        {
            return false;
        }
        // pass 2: one exponential per entry, shared by the entry's slots
        sc.ctr.fill(0);
        for &t in table {
            let mut s = t;
            for i in 0..a {
                s += vf[sc.inc[i] + sc.ctr[i]];
            }
            if s > f64::NEG_INFINITY {
                let w = (s - smax).exp();
                for j in 0..a {
                    sc.acc[sc.outoff[j] + sc.ctr[j]] += w;
                }
            }
            odometer(&mut sc.ctr[..a], &sc.cards[..a]);
        }
        for (o, &w) in out.iter_mut().zip(&sc.acc) {
            *o = if w > 0.0 {
                w.ln() + smax
            } else {
                f64::NEG_INFINITY
            };
        }
    }
    // remove each receiver's own incoming message, then normalise to a maximum of 0
    for j in 0..a {
        let r = sc.outoff[j]..sc.outoff[j] + sc.cards[j];
        remove_own(&mut out[r], &vf[sc.inc[j]..sc.inc[j] + sc.cards[j]]);
    }
    true
}

/// Advances `ctr` to the next table position over `cards` (last position fastest),
/// back to all zeros after the last one.
fn odometer(ctr: &mut [usize], cards: &[usize]) {
    for (c, &k) in ctr.iter_mut().zip(cards).rev() {
        *c += 1;
        if *c < k {
            return;
        }
        *c = 0;
    }
}

/// Subtracts the receiver's own incoming message `own` from the group sums `out`
/// (`-∞` stays), then normalises `out` to a maximum of 0.
fn remove_own(out: &mut [f64], own: &[f64]) {
    let mut m = f64::NEG_INFINITY;
    for (o, &mj) in out.iter_mut().zip(own) {
        if *o > f64::NEG_INFINITY {
            *o -= mj;
        }
        m = m.max(*o);
    }
    if m > f64::NEG_INFINITY {
        for o in out.iter_mut() {
            *o -= m;
        }
    }
}

#[cfg(test)]
mod kernel_tests {
    //! The linear-domain kernels against the log-domain one on random factors: arities
    //! 1-5, 1-4 states, hard zeros in the tables and in the incoming messages.
    use super::*;
    use rand::{RngExt as _, SeedableRng as _};
    use rand_chacha::ChaCha8Rng;

    fn log_kernel(table: &[f64], cards: &[usize], inc: &[f64], max: bool) -> Vec<f64> {
        let mut sc = Scratch::default();
        let mut off = 0;
        for &c in cards {
            sc.cards.push(c);
            sc.inc.push(off);
            sc.outoff.push(off);
            off += c;
        }
        let mut out = vec![0.0; inc.len()];
        factor_kernel(table, cards.len(), inc, max, &mut out, &mut sc);
        out
    }

    #[test]
    fn linear_kernels_equal_the_log_kernel() {
        let mut rng = ChaCha8Rng::seed_from_u64(28);
        let mut checked = [0usize; 3];
        for case in 0..4000 {
            let a = case % 6;
            let cards: Vec<usize> = if case % 3 == 0 && a == 3 {
                vec![2, 2, 2]
            } else if case % 7 == 6 && a <= 3 {
                // large factors: over 60 message entries, up to 64 000 table entries
                (0..a).map(|_| rng.random_range(20..=40usize)).collect()
            } else {
                (0..a).map(|_| rng.random_range(1..=4usize)).collect()
            };
            let size: usize = cards.iter().product();
            let zeros = case % 4 == 1;
            let table: Vec<f64> = (0..size)
                .map(|_| {
                    if zeros && rng.random_range(0..4) == 0 {
                        f64::NEG_INFINITY
                    } else {
                        rng.random_range(-8.0..8.0)
                    }
                })
                .collect();
            let mut inc = Vec::new();
            for &c in &cards {
                let keep = rng.random_range(0..c);
                for s in 0..c {
                    inc.push(if zeros && s != keep && rng.random_range(0..3) == 0 {
                        f64::NEG_INFINITY
                    } else {
                        rng.random_range(-20.0..0.0)
                    });
                }
            }
            let mx = table.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if mx == f64::NEG_INFINITY {
                continue;
            }
            let lo = table
                .iter()
                .copied()
                .filter(|x| x.is_finite())
                .fold(f64::INFINITY, f64::min);
            let lin: Vec<f64> = table.iter().map(|&x| (x - mx).exp()).collect();
            for max in [false, true] {
                let want = log_kernel(&table, &cards, &inc, max);
                let mut got = vec![0.0; inc.len()];
                let ok = if max {
                    linear_messages::<true>(
                        &lin,
                        mx - lo,
                        &cards,
                        &inc,
                        &mut got,
                        &mut vec![0.0; inc.len()],
                    )
                } else {
                    linear_messages::<false>(
                        &lin,
                        mx - lo,
                        &cards,
                        &inc,
                        &mut got,
                        &mut vec![0.0; inc.len()],
                    )
                };
                assert!(ok, "case {case}: the linear kernel declined");
                for (i, (&w, &g)) in want.iter().zip(&got).enumerate() {
                    assert!(
                        (w == f64::NEG_INFINITY && g == f64::NEG_INFINITY) || (w - g).abs() < 1e-12,
                        "case {case} max={max} cards={cards:?} entry {i}: log {w}, linear {g}"
                    );
                }
                checked[usize::from(cards == [2, 2, 2])] += 1;
                if inc.len() > 60 {
                    checked[2] += 1;
                }
            }
        }
        assert!(
            checked[0] > 1000 && checked[1] > 200 && checked[2] > 50,
            "{checked:?}"
        );
    }

    /// [`largest_change`] equals one running maximum with NaN as `+∞` (the test it
    /// replaced), on random messages with `-∞`, equal entries and NaN, of every length
    /// from 0 to 13.
    #[test]
    fn largest_change_is_one_running_maximum() {
        let chain = |new: &[f64], old: &[f64]| {
            let mut res = 0.0f64;
            for (&n, &o) in new.iter().zip(old) {
                let d = if n == o { 0.0 } else { (n - o).abs() };
                if d > res || d.is_nan() {
                    res = if d.is_nan() { f64::INFINITY } else { d };
                }
            }
            res
        };
        let mut rng = ChaCha8Rng::seed_from_u64(34);
        let draw = |rng: &mut ChaCha8Rng| match rng.random_range(0..10) {
            0 => f64::NEG_INFINITY,
            1 => 0.0,
            2 if rng.random_range(0..20) == 0 => f64::NAN,
            _ => rng.random_range(-30.0..0.0),
        };
        let (mut nans, mut infs) = (0, 0);
        for case in 0..20000 {
            let len = case % 14;
            let old: Vec<f64> = (0..len).map(|_| draw(&mut rng)).collect();
            let new: Vec<f64> = old
                .iter()
                .map(|&o| {
                    if rng.random_range(0..3) == 0 {
                        o
                    } else {
                        draw(&mut rng)
                    }
                })
                .collect();
            let (want, got) = (chain(&new, &old), largest_change(&new, &old));
            assert_eq!(want.to_bits(), got.to_bits(), "{new:?} against {old:?}");
            nans += usize::from(new.iter().chain(&old).any(|x| x.is_nan()));
            infs += usize::from(want == f64::INFINITY);
        }
        assert!(
            nans > 100 && infs > nans,
            "{nans} cases with NaN, {infs} infinite"
        );
    }

    /// The fixed-length rows ([`FixedRow`], a last variable of 2-7 states) give the
    /// same bits as [`kernel_row`]'s rows over slices, sum and max, arity 2 to 6.
    #[test]
    fn fixed_rows_equal_slice_rows() {
        fn fixed<const MAX: bool>(lin: &[f64], cards: &[usize], p: &[f64], o: &mut [f64]) {
            match cards.last() {
                Some(2) => linear_rows::<MAX, FixedRow<'_, MAX, 2>>(lin, cards, p, o),
                Some(3) => linear_rows::<MAX, FixedRow<'_, MAX, 3>>(lin, cards, p, o),
                Some(4) => linear_rows::<MAX, FixedRow<'_, MAX, 4>>(lin, cards, p, o),
                Some(5) => linear_rows::<MAX, FixedRow<'_, MAX, 5>>(lin, cards, p, o),
                Some(6) => linear_rows::<MAX, FixedRow<'_, MAX, 6>>(lin, cards, p, o),
                Some(7) => linear_rows::<MAX, FixedRow<'_, MAX, 7>>(lin, cards, p, o),
                _ => unreachable!(),
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(33);
        let mut nonzero = 0;
        for case in 0..3000 {
            let a = 2 + case % 5;
            let mut cards: Vec<usize> = (0..a - 1).map(|_| rng.random_range(1..=4usize)).collect();
            cards.push(2 + case % 6);
            let size: usize = cards.iter().product();
            let lin: Vec<f64> = (0..size)
                .map(|_| {
                    if rng.random_range(0..5) == 0 {
                        0.0
                    } else {
                        rng.random_range(0.0..1.0)
                    }
                })
                .collect();
            let n: usize = cards.iter().sum();
            let p: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..1.0)).collect();
            for max in [false, true] {
                let (mut want, mut got) = (vec![0.0; n], vec![0.0; n]);
                if max {
                    linear_rows::<true, SliceRow<'_, true>>(&lin, &cards, &p, &mut want);
                    fixed::<true>(&lin, &cards, &p, &mut got);
                } else {
                    linear_rows::<false, SliceRow<'_, false>>(&lin, &cards, &p, &mut want);
                    fixed::<false>(&lin, &cards, &p, &mut got);
                }
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&want),
                    bits(&got),
                    "case {case}, cards {cards:?}, max {max}"
                );
                nonzero += usize::from(want.iter().any(|&x| x > 0.0));
            }
        }
        assert!(nonzero > 5000, "{nonzero} cases with a positive message");
    }

    #[test]
    fn linear_kernel_declines_a_spread_that_could_underflow() {
        let table = [0.0, -500.0, 0.0, 0.0];
        let lin: Vec<f64> = table.iter().map(|&x: &f64| x.exp()).collect();
        // the 2 × 2 factor's linear kernel on incoming messages `inc`: taken or declined
        let takes = |inc: [f64; 4]| {
            let (mut out, mut p) = ([0.0; 4], [0.0; 4]);
            linear_messages::<false>(&lin, 500.0, &[2, 2], &inc, &mut out, &mut p)
        };
        assert!(!takes([0.0, -200.0, 0.0, 0.0]));
        assert!(takes([0.0, -50.0, 0.0, 0.0]));
        // a variable without a possible state goes to the log-domain kernel
        assert!(!takes([f64::NEG_INFINITY, f64::NEG_INFINITY, 0.0, 0.0]));
        let lin8 = [1.0; 8];
        let inc6 = [0.0, -700.0, 0.0, 0.0, 0.0, 0.0];
        let mut out6 = [0.0; 6];
        assert!(!linear_messages::<false>(
            &lin8,
            0.0,
            &[2, 2, 2],
            &inc6,
            &mut out6,
            &mut [0.0; 6]
        ));
    }
}
