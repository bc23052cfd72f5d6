//! Loopy belief propagation on a [`FactorGraph`] (Kschischang, Frey & Loeliger 2001;
//! Koller & Friedman 2009 §11.3): sum- and max-product in the log domain, flooding
//! schedule with damping.

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
    /// Residual BP (Elidan, McGraw & Koller 2006): always update the factor whose new
    /// messages differ most from its current ones (a priority queue of pending residuals,
    /// ties to the lower factor index; one thread). An iteration is as many updates as
    /// there are factors; converged when the largest pending residual is below the
    /// tolerance.
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
    /// Edges of each variable.
    vedges: Vec<Vec<usize>>,
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

    fn layout(g: &FactorGraph) -> Result<Layout, InferError> {
        let k = g.num_states();
        let mut fedge = Vec::with_capacity(g.factors().len() + 1);
        let mut evar = Vec::new();
        let mut moff = vec![0usize];
        let mut vedges = vec![Vec::new(); g.num_vars()];
        fedge.push(0);
        let mut total = 0usize;
        for f in g.factors() {
            for &v in &f.vars {
                vedges[v as usize].push(evar.len());
                evar.push(v);
                total = total
                    .checked_add(k[v as usize])
                    .filter(|&t| t <= crate::mrf::MAX_MODEL_ENTRIES)
                    .ok_or(InferError::TooLarge {
                        what: "message entries of factor-graph BP (limit 2^30)",
                        count: usize::MAX,
                    })?;
                moff.push(total);
            }
            fedge.push(evar.len());
        }
        Ok(Layout {
            fedge,
            evar,
            moff,
            vedges,
        })
    }

    /// Runs BP to convergence or the cap; returns the messages, with the
    /// variable-to-factor messages recomputed from the final factor-to-variable ones.
    fn run_state(&self, g: &FactorGraph, max: bool) -> Result<State, InferError> {
        self.validate()?;
        let lay = Self::layout(g)?;
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
        let mut vf = alloc()?;
        let mut conv = Convergence::start(g.factors().is_empty());
        let mut sc = Scratch::default();
        while !conv.converged
            && conv.iterations < self.max_iters
            && self.schedule == FactorSchedule::Sequential
        {
            let mut residual = 0.0f64;
            for f in 0..g.factors().len() {
                for e in lay.fedge[f]..lay.fedge[f + 1] {
                    edge_message(g, &lay, &fv, &mut vf, e);
                }
                factor_messages(g, f, &lay, &vf, max, &mut sc);
                let old = &mut fv[lay.moff[lay.fedge[f]]..lay.moff[lay.fedge[f + 1]]];
                residual = residual.max(self.damp_into(&sc.msg, old));
            }
            conv.record(residual, self.tolerance);
        }
        if self.schedule == FactorSchedule::Residual && !conv.converged {
            self.residual_updates(g, &lay, &mut fv, &mut vf, max, &mut conv);
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
        let mut sums = BeliefSums::new(g);
        while !conv.converged
            && conv.iterations < self.max_iters
            && self.schedule == FactorSchedule::Flooding
        {
            sums.fill(&lay, &fv);
            let mut parts: Vec<(usize, &mut [f64])> = Vec::with_capacity(nf);
            let mut rest: &mut [f64] = &mut next;
            for f in 0..nf {
                let len = lay.moff[lay.fedge[f + 1]] - lay.moff[lay.fedge[f]];
                let (head, tail) = rest.split_at_mut(len);
                parts.push((f, head));
                rest = tail;
            }
            let residual = parts
                .into_par_iter()
                .map_init(Scratch::default, |sc, (f, out)| {
                    factor_messages_from_sums(g, f, &lay, &sums, &fv, max, out, sc);
                    let old = &fv[lay.moff[lay.fedge[f]]..lay.moff[lay.fedge[f + 1]]];
                    self.damp_fresh(out, old)
                })
                .reduce(|| 0.0f64, f64::max);
            std::mem::swap(&mut fv, &mut next);
            conv.record(residual, self.tolerance);
        }
        variable_messages(g, &lay, &fv, &mut vf);
        Ok(State { lay, fv, vf, conv })
    }

    /// Residual BP: a max-heap of the factors' pending residuals (lazily invalidated by
    /// version numbers). Committing a factor's messages changes the variable-to-factor
    /// messages of its variables' other factors, whose pending messages are recomputed.
    fn residual_updates(
        &self,
        g: &FactorGraph,
        lay: &Layout,
        fv: &mut [f64],
        vf: &mut [f64],
        max: bool,
        conv: &mut Convergence,
    ) {
        use std::cmp::Ordering;
        use std::collections::BinaryHeap;
        #[derive(PartialEq)]
        struct Item(f64, std::cmp::Reverse<usize>, u64);
        impl Eq for Item {}
        impl PartialOrd for Item {
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                Some(self.cmp(o))
            }
        }
        impl Ord for Item {
            fn cmp(&self, o: &Self) -> Ordering {
                self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
            }
        }
        let nf = g.factors().len();
        variable_messages(g, lay, fv, vf);
        // pending[f] = the damped new messages of f and their residual
        // The pending (damped) new messages of every factor in one flat array laid out
        // as `fv`, and each factor's pending residual: no allocation per update.
        let mut sc = Scratch::default();
        let mut pend = fv.to_vec();
        let pending_of = |f: usize, fv: &[f64], vf: &[f64], pend: &mut [f64], sc: &mut Scratch| {
            let r = lay.moff[lay.fedge[f]]..lay.moff[lay.fedge[f + 1]];
            let out = &mut pend[r.clone()];
            factor_messages_into(g, f, lay, vf, max, out, sc);
            self.damp_fresh(out, &fv[r])
        };
        let mut residuals: Vec<f64> = (0..nf)
            .map(|f| pending_of(f, fv, vf, &mut pend, &mut sc))
            .collect();
        let mut version = vec![0u64; nf];
        let mut heap: BinaryHeap<Item> = residuals
            .iter()
            .enumerate()
            .map(|(f, r)| Item(*r, std::cmp::Reverse(f), 0))
            .collect();
        // factors sharing a variable with f (excluding f), each once
        let mut neighbours: Vec<usize> = Vec::new();
        let mut mark = vec![usize::MAX; nf];
        let mut factor_of_edge = vec![0usize; lay.evar.len()];
        for f in 0..nf {
            factor_of_edge[lay.fedge[f]..lay.fedge[f + 1]].fill(f);
        }
        let budget = self.max_iters.saturating_mul(nf.max(1));
        let mut updates = 0usize;
        while let Some(Item(r, std::cmp::Reverse(f), ver)) = heap.pop() {
            if ver != version[f] {
                continue;
            }
            if r < self.tolerance {
                // every pending residual is below the tolerance
                conv.iterations = updates.div_ceil(nf.max(1)).max(1);
                conv.max_residual = r;
                conv.converged = true;
                return;
            }
            if updates >= budget {
                heap.push(Item(r, std::cmp::Reverse(f), ver));
                break;
            }
            updates += 1;
            let rf = lay.moff[lay.fedge[f]]..lay.moff[lay.fedge[f + 1]];
            fv[rf.clone()].copy_from_slice(&pend[rf]);
            // variable-to-factor messages of f's variables to their other factors
            neighbours.clear();
            for e in lay.fedge[f]..lay.fedge[f + 1] {
                let v = lay.evar[e] as usize;
                for &e2 in &lay.vedges[v] {
                    let f2 = factor_of_edge[e2];
                    if f2 != f {
                        edge_message(g, lay, fv, vf, e2);
                        if mark[f2] != f {
                            mark[f2] = f;
                            neighbours.push(f2);
                        }
                    }
                }
            }
            for &f2 in &neighbours {
                mark[f2] = usize::MAX;
            }
            // f itself: its own incoming messages did not change; it is now up to date
            residuals[f] = 0.0;
            version[f] += 1;
            heap.push(Item(0.0, std::cmp::Reverse(f), version[f]));
            for &f2 in &neighbours {
                residuals[f2] = pending_of(f2, fv, vf, &mut pend, &mut sc);
                version[f2] += 1;
                heap.push(Item(residuals[f2], std::cmp::Reverse(f2), version[f2]));
            }
        }
        conv.iterations = updates.div_ceil(nf.max(1));
        conv.max_residual = heap
            .iter()
            .filter(|i| i.2 == version[i.1.0])
            .map(|i| i.0)
            .fold(0.0, f64::max);
        conv.converged = conv.max_residual < self.tolerance;
    }

    /// Damps the fresh messages in `fresh` against `old` in place (`fresh` becomes the
    /// damped messages) and returns the largest change (`-∞` to `-∞` is none).
    fn damp_fresh(&self, fresh: &mut [f64], old: &[f64]) -> f64 {
        let mut res = 0.0f64;
        for (n, &o) in fresh.iter_mut().zip(old) {
            if self.damping > 0.0 {
                *n = (1.0 - self.damping) * *n + self.damping * o;
            }
            let d = if *n == o { 0.0 } else { (*n - o).abs() };
            if d > res || d.is_nan() {
                res = if d.is_nan() { f64::INFINITY } else { d };
            }
        }
        res
    }

    /// Damps `fresh` against `old`, stores the result in `old` and returns the largest
    /// change (`-∞` to `-∞` is none).
    fn damp_into(&self, fresh: &[f64], old: &mut [f64]) -> f64 {
        let mut res = 0.0f64;
        for (&n, o) in fresh.iter().zip(old.iter_mut()) {
            let mut n = n;
            if self.damping > 0.0 {
                n = (1.0 - self.damping) * n + self.damping * *o;
            }
            let d = if n == *o { 0.0 } else { (n - *o).abs() };
            if d > res || d.is_nan() {
                res = if d.is_nan() { f64::INFINITY } else { d };
            }
            *o = n;
        }
        res
    }

    /// Runs BP; returns the log-beliefs of every variable (normalised) and the report.
    fn run_logs(
        &self,
        g: &FactorGraph,
        max: bool,
    ) -> Result<(Vec<Vec<f64>>, Convergence), InferError> {
        let st = self.run_state(g, max)?;
        let beliefs = variable_beliefs(g, &st, max)?;
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
        let st = self.run_state(g, false)?;
        let beliefs = variable_beliefs(g, &st, false)?;
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
                let mut j = a;
                while j > 0 {
                    j -= 1;
                    ctr[j] += 1;
                    if ctr[j] < cards[j] {
                        break;
                    }
                    ctr[j] = 0;
                }
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
        let (logs, conv) = self.run_logs(g, false)?;
        let probs = logs
            .into_iter()
            .map(|b| b.into_iter().map(f64::exp).collect())
            .collect();
        Ok(FactorMarginals::new(probs, conv))
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
    conv: Convergence,
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
fn variable_beliefs(g: &FactorGraph, st: &State, max: bool) -> Result<Vec<Vec<f64>>, InferError> {
    let k = g.num_states();
    let mut beliefs = Vec::with_capacity(g.num_vars());
    for (v, edges) in st.lay.vedges.iter().enumerate() {
        let mut b: Vec<f64> = (0..k[v]).map(|s| prior(g, v, s)).collect();
        for &e in edges {
            for (o, m) in b.iter_mut().zip(&st.fv[st.lay.moff[e]..st.lay.moff[e + 1]]) {
                *o += m;
            }
        }
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

/// Per-thread scratch space of [`factor_messages_into`]: no allocation per message.
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
    /// The incoming variable-to-factor messages of one factor, computed from the
    /// variables' belief sums (flooding).
    inbuf: Vec<f64>,
}

/// Each variable's sum of incoming factor-to-variable log-messages, kept as the sum of
/// the finite entries and the number of `-∞` ones, so that a variable-to-factor message
/// is the sum minus the receiver's own message without `∞ − ∞` (flooding: replaces the
/// per-edge gather over each variable's other factors).
struct BeliefSums {
    /// First state of each variable (`n + 1` entries).
    voff: Vec<usize>,
    /// Per state: the sum of the finite incoming entries and the number of `-∞` ones
    /// (side by side: one cache line per lookup).
    sum: Vec<(f64, u32)>,
}

impl BeliefSums {
    fn new(g: &FactorGraph) -> Self {
        let mut voff = Vec::with_capacity(g.num_vars() + 1);
        voff.push(0);
        for &kv in g.num_states() {
            let last = voff[voff.len() - 1];
            voff.push(last + kv);
        }
        let total = voff[voff.len() - 1];
        Self {
            voff,
            sum: vec![(0.0, 0); total],
        }
    }

    /// Recomputes the sums from the factor-to-variable messages `fv` (edge order, one
    /// thread: the same bits for any thread count).
    fn fill(&mut self, lay: &Layout, fv: &[f64]) {
        self.sum.fill((0.0, 0));
        for (e, &v) in lay.evar.iter().enumerate() {
            let b = self.voff[v as usize];
            for (s, &m) in fv[lay.moff[e]..lay.moff[e + 1]].iter().enumerate() {
                let slot = &mut self.sum[b + s];
                if m == f64::NEG_INFINITY {
                    slot.1 += 1;
                } else {
                    slot.0 += m;
                }
            }
        }
    }
}

/// The new (normalised, undamped) messages from factor `f` to each of its variables,
/// written into `out` (the factor's slice of the message array, edge after edge).
fn factor_messages_into(
    g: &FactorGraph,
    f: usize,
    lay: &Layout,
    vf: &[f64],
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
        sc.inc.push(lay.moff[e0 + j]);
        sc.outoff.push(lay.moff[e0 + j] - base);
    }
    factor_kernel(g.factor_table(f), a, vf, max, out, sc);
}

/// [`factor_messages_into`] with the incoming messages computed from the belief sums
/// `b` and the factor's current outgoing messages `fv` (flooding).
#[allow(clippy::too_many_arguments)]
fn factor_messages_from_sums(
    g: &FactorGraph,
    f: usize,
    lay: &Layout,
    b: &BeliefSums,
    fv: &[f64],
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
    let mut inbuf = std::mem::take(&mut sc.inbuf);
    inbuf.clear();
    for j in 0..a {
        let e = e0 + j;
        let v = lay.evar[e] as usize;
        let kv = k[v];
        sc.cards.push(kv);
        sc.inc.push(inbuf.len());
        sc.outoff.push(lay.moff[e] - base);
        let bo = b.voff[v];
        let start = inbuf.len();
        for (s, &own) in fv[lay.moff[e]..lay.moff[e + 1]].iter().enumerate() {
            let own_inf = u32::from(own == f64::NEG_INFINITY);
            let (fin, ninf) = b.sum[bo + s];
            let m = if ninf > own_inf {
                f64::NEG_INFINITY
            } else if own_inf == 1 {
                fin
            } else {
                fin - own
            } + prior(g, v, s);
            inbuf.push(m);
        }
        let _ = start;
    }
    factor_kernel(g.factor_table(f), a, &inbuf, max, out, sc);
    sc.inbuf = inbuf;
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
            let mut j = a;
            while j > 0 {
                j -= 1;
                sc.ctr[j] += 1;
                if sc.ctr[j] < sc.cards[j] {
                    break;
                }
                sc.ctr[j] = 0;
            }
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
    if a == 3 {
        return fast_arity3(table, vf, max, out, sc);
    }
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
        let mut j = a;
        while j > 0 {
            j -= 1;
            sc.ctr[j] += 1;
            if sc.ctr[j] < sc.cards[j] {
                break;
            }
            sc.ctr[j] = 0;
        }
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
            let mut j = a;
            while j > 0 {
                j -= 1;
                sc.ctr[j] += 1;
                if sc.ctr[j] < sc.cards[j] {
                    break;
                }
                sc.ctr[j] = 0;
            }
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

/// [`fast_factor_messages`] for a factor of three variables: nested loops over the
/// states (no odometer), the entries' full sums kept for the second pass.
fn fast_arity3(table: &[f64], vf: &[f64], max: bool, out: &mut [f64], sc: &mut Scratch) -> bool {
    let (c0, c1, c2) = (sc.cards[0], sc.cards[1], sc.cards[2]);
    let (m0, m1, m2) = (
        &vf[sc.inc[0]..sc.inc[0] + c0],
        &vf[sc.inc[1]..sc.inc[1] + c1],
        &vf[sc.inc[2]..sc.inc[2] + c2],
    );
    let (o0, o1, o2) = (sc.outoff[0], sc.outoff[1], sc.outoff[2]);
    let size = c0 * c1 * c2;
    let mut sums = [0.0f64; 64];
    if size > sums.len() || table.len() != size {
        return false;
    }
    let mut smax = f64::NEG_INFINITY;
    let mut idx = 0;
    for (x0, &a0) in m0.iter().enumerate() {
        for (x1, &a1) in m1.iter().enumerate() {
            let s01 = a0 + a1;
            for (x2, &a2) in m2.iter().enumerate() {
                let s = table[idx] + s01 + a2;
                sums[idx] = s;
                idx += 1;
                smax = smax.max(s);
                let (p0, p1, p2) = (o0 + x0, o1 + x1, o2 + x2);
                if s > out[p0] {
                    out[p0] = s;
                }
                if s > out[p1] {
                    out[p1] = s;
                }
                if s > out[p2] {
                    out[p2] = s;
                }
            }
        }
    }
    if !max {
        if out
            .iter()
            .any(|&m| m > f64::NEG_INFINITY && m < smax - 600.0)
        {
            return false;
        }
        let mut w = [0.0f64; 64];
        let len = out.len();
        if len > w.len() {
            return false;
        }
        let mut idx = 0;
        for x0 in 0..c0 {
            for x1 in 0..c1 {
                for x2 in 0..c2 {
                    let s = sums[idx];
                    idx += 1;
                    if s > f64::NEG_INFINITY {
                        let e = (s - smax).exp();
                        w[o0 + x0] += e;
                        w[o1 + x1] += e;
                        w[o2 + x2] += e;
                    }
                }
            }
        }
        for (o, &x) in out.iter_mut().zip(&w[..len]) {
            *o = if x > 0.0 {
                x.ln() + smax
            } else {
                f64::NEG_INFINITY
            };
        }
    }
    for (off, own) in [(o0, m0), (o1, m1), (o2, m2)] {
        remove_own(&mut out[off..off + own.len()], own);
    }
    true
}

/// The new messages of factor `f` (see [`factor_messages_into`]) in `sc.msg`.
fn factor_messages(
    g: &FactorGraph,
    f: usize,
    lay: &Layout,
    vf: &[f64],
    max: bool,
    sc: &mut Scratch,
) {
    let len = lay.moff[lay.fedge[f + 1]] - lay.moff[lay.fedge[f]];
    let mut msg = std::mem::take(&mut sc.msg);
    msg.clear();
    msg.resize(len, 0.0);
    factor_messages_into(g, f, lay, vf, max, &mut msg, sc);
    sc.msg = msg;
}
