//! Exact inference on a [`FactorGraph`] by variable elimination (Koller & Friedman 2009,
//! §9.3–9.4) with a greedy weighted min-fill order.

use std::collections::BTreeSet;

use super::table::{LogTable, lse, sum_onto};
use super::{FactorGraph, FactorMap, FactorMarginals};
use crate::error::InferError;
use crate::marginals::Convergence;

/// Exact inference by variable elimination.
///
/// The elimination order is greedy **weighted min-fill** over the free (unobserved,
/// more than one state) variables: at each step, among the variables whose elimination
/// table `k_v · Π_{u ∈ N(v)} k_u` fits [`VariableElimination::max_table_entries`], the
/// one whose elimination adds the fewest fill edges, ties broken by the smaller table,
/// then by the lower index. The whole elimination is simulated before any table is
/// allocated: when at some step no variable fits, the result is an
/// [`InferError::TooLarge`] whose count is the smallest table that step would need (a
/// lower bound of the peak, e.g. 2^30 for a clique of 30 binary variables). Planning
/// keeps the scores in a priority queue and rescores only the variables whose fill count
/// an elimination changes (near-linear on sparse models).
///
/// All work is in the log domain (`-∞` hard zeros stay exact). Marginals take an upward
/// and a downward pass over the clique tree of the elimination, on one thread (so the
/// bits do not depend on the thread count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VariableElimination {
    /// The largest intermediate table allowed, in entries (default 2^27, 1 GiB of `f64`).
    pub max_table_entries: usize,
    /// The largest total size of the cliques (the elimination tables of all steps)
    /// [`VariableElimination::marginals`] goes through, in entries (default 2^28): it
    /// bounds both the work (a few passes over each clique) and the messages kept.
    pub max_marginal_work: usize,
}

impl Default for VariableElimination {
    fn default() -> Self {
        Self {
            max_table_entries: 1 << 27,
            max_marginal_work: 1 << 28,
        }
    }
}

/// The evidence, plus every variable of one state clamped to it: such a variable changes
/// no table size, and leaving it free would only cost planning time (a scope of 1000
/// one-state variables is a 1000-clique for min-fill).
fn clamps(g: &FactorGraph) -> Vec<Option<u32>> {
    g.evidence()
        .iter()
        .zip(g.num_states())
        .map(|(&e, &k)| if k == 1 { Some(0) } else { e })
        .collect()
}

/// Shifts `vals` to a maximum of 0 and returns the shift (0 when all are `-∞`).
fn normalise(vals: &mut [f64]) -> f64 {
    let m = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return 0.0;
    }
    for v in vals.iter_mut() {
        *v -= m;
    }
    m
}

/// The elimination order and the peak table size of a model.
struct Plan {
    order: Vec<u32>,
    peak: usize,
    /// `Σ` of the elimination tables' sizes: the work of one elimination.
    work: usize,
}

impl VariableElimination {
    fn plan(&self, g: &FactorGraph) -> Result<Plan, InferError> {
        let n = g.num_vars();
        let k = g.num_states();
        let free: Vec<bool> = clamps(g).iter().map(Option::is_none).collect();
        let mut adj: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); n];
        for f in g.factors() {
            let fv: Vec<u32> = f
                .vars
                .iter()
                .copied()
                .filter(|&v| free[v as usize])
                .collect();
            for &a in &fv {
                for &b in &fv {
                    if a != b {
                        adj[a as usize].insert(b);
                    }
                }
            }
        }
        let limit = self.max_table_entries;
        // The key of a variable: (over the limit, fill edges, table size, index). Fill
        // edges are counted only within the limit (then the degree is below log2(limit),
        // every variable having at least two states), so scoring stays cheap.
        let key = |v: u32, adj: &[BTreeSet<u32>]| -> (bool, usize, usize, u32) {
            let w = adj[v as usize]
                .iter()
                .try_fold(k[v as usize], |acc, &u| acc.checked_mul(k[u as usize]))
                .unwrap_or(usize::MAX);
            if w > limit {
                return (true, 0, w, v);
            }
            let nb = &adj[v as usize];
            let mut fill = 0usize;
            for (i, &a) in nb.iter().enumerate() {
                for &b in nb.iter().skip(i + 1) {
                    if !adj[a as usize].contains(&b) {
                        fill += 1;
                    }
                }
            }
            (false, fill, w, v)
        };
        let mut keys: Vec<(bool, usize, usize, u32)> = Vec::with_capacity(n);
        let mut queue = BTreeSet::new();
        for v in 0..n as u32 {
            let kv = key(v, &adj);
            keys.push(kv);
            if free[v as usize] {
                queue.insert(kv);
            }
        }
        let mut order = Vec::new();
        let mut peak = 1usize;
        let mut work = 0usize;
        while let Some(first) = queue.pop_first() {
            let (over, _, w, v) = first;
            if over {
                return Err(InferError::TooLarge {
                    what: "entries (at least) in the largest variable-elimination table \
                           (min-fill order), beyond VariableElimination::max_table_entries \
                           (2^27 by default)",
                    count: w,
                });
            }
            peak = peak.max(w);
            work = work.saturating_add(w);
            let nb: Vec<u32> = adj[v as usize].iter().copied().collect();
            let mut touched: BTreeSet<u32> = nb.iter().copied().collect();
            for (i, &a) in nb.iter().enumerate() {
                adj[a as usize].remove(&v);
                for &b in &nb[i + 1..] {
                    if adj[a as usize].insert(b) {
                        adj[b as usize].insert(a);
                        // a new edge a-b changes the fill count of their common neighbours
                        let (small, large) = if adj[a as usize].len() < adj[b as usize].len() {
                            (a, b)
                        } else {
                            (b, a)
                        };
                        for &c in &adj[small as usize] {
                            if c != large && adj[large as usize].contains(&c) {
                                touched.insert(c);
                            }
                        }
                    }
                }
            }
            adj[v as usize].clear();
            order.push(v);
            for u in touched {
                if queue.remove(&keys[u as usize]) {
                    let ku = key(u, &adj);
                    keys[u as usize] = ku;
                    queue.insert(ku);
                }
            }
        }
        Ok(Plan { order, peak, work })
    }

    /// The largest intermediate table (entries) the elimination of `g` would build, after
    /// the evidence; `usize::MAX` when it overflows.
    ///
    /// # Errors
    /// [`InferError::TooLarge`] when it exceeds [`Self::max_table_entries`].
    pub fn peak_table_entries(&self, g: &FactorGraph) -> Result<usize, InferError> {
        self.plan(g).map(|p| p.peak)
    }

    /// Eliminates `order` from `bag` (sum when `!max`); with `keep`, each eliminated
    /// variable's combined table (its neighbours, then the variable fastest) for traceback.
    /// Returns the tables left (scalars, or tables over variables not in `order`).
    fn eliminate(
        g: &FactorGraph,
        bag: Vec<LogTable>,
        order: &[u32],
        max: bool,
        mut keep: Option<&mut Vec<LogTable>>,
    ) -> Result<Vec<LogTable>, InferError> {
        let k = g.num_states();
        let mut slots: Vec<Option<LogTable>> = bag.into_iter().map(Some).collect();
        let mut occ: Vec<Vec<usize>> = vec![Vec::new(); g.num_vars()];
        for (i, t) in slots.iter().enumerate() {
            if let Some(t) = t {
                for &v in &t.vars {
                    occ[v as usize].push(i);
                }
            }
        }
        for &x in order {
            let ids = std::mem::take(&mut occ[x as usize]);
            let mine: Vec<LogTable> = ids.iter().filter_map(|&i| slots[i].take()).collect();
            let mut vars: Vec<u32> = mine
                .iter()
                .flat_map(|t| t.vars.iter().copied())
                .filter(|&v| v != x)
                .collect::<BTreeSet<u32>>()
                .into_iter()
                .collect();
            vars.push(x);
            let cards: Vec<usize> = vars.iter().map(|&v| k[v as usize]).collect();
            let size: usize = cards.iter().product(); // bounded by the plan's peak
            let refs: Vec<&LogTable> = mine.iter().collect();
            let vals = LogTable::combine(&refs, &vars, &cards, size)?;
            let kx = k[x as usize];
            let reduced: Vec<f64> = vals
                .chunks_exact(kx)
                .map(|c| {
                    if max {
                        c.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                    } else {
                        lse(c)
                    }
                })
                .collect();
            let out_vars = vars[..vars.len() - 1].to_vec();
            let out_cards = cards[..cards.len() - 1].to_vec();
            if let Some(keep) = keep.as_deref_mut() {
                keep.push(LogTable { vars, cards, vals });
            }
            for &v in &out_vars {
                occ[v as usize].push(slots.len());
            }
            slots.push(Some(LogTable {
                vars: out_vars,
                cards: out_cards,
                vals: reduced,
            }));
        }
        Ok(slots.into_iter().flatten().collect())
    }

    fn initial(g: &FactorGraph) -> Vec<LogTable> {
        let clamp = clamps(g);
        (0..g.factors().len())
            .map(|f| LogTable::reduced(g, f, &clamp))
            .collect()
    }

    /// `ln Z`: the natural log of the sum of `exp(Σ_f θ_f)` over the assignments that
    /// agree with the evidence (the UAI `PR` task's quantity in natural log; `-∞` when the
    /// evidence has probability zero). For a Bayesian network with normalised CPTs this
    /// is `ln P(evidence)`.
    ///
    /// # Errors
    /// [`InferError::TooLarge`] as described on the type.
    pub fn log_partition(&self, g: &FactorGraph) -> Result<f64, InferError> {
        let plan = self.plan(g)?;
        let bag = Self::eliminate(g, Self::initial(g), &plan.order, false, None)?;
        Ok(bag.iter().map(|t| t.vals[0]).sum())
    }

    /// The marginal of every variable given the evidence (a point mass for an observed
    /// one), by two passes over the clique tree the elimination order defines: the
    /// upward pass is the elimination of [`VariableElimination::log_partition`] keeping
    /// each message, the downward pass sends each clique's message back to the cliques
    /// that fed it (products without the receiver's own message, no division, so hard
    /// zeros stay exact), and each variable's marginal is read from the clique that
    /// eliminated it.
    ///
    /// # Errors
    /// [`InferError::TooLarge`] as described on the type, or when the cliques together
    /// exceed [`VariableElimination::max_marginal_work`] entries;
    /// [`InferError::ZeroProbability`] when the evidence and the hard zeros leave no
    /// assignment of positive probability.
    pub fn marginals(&self, g: &FactorGraph) -> Result<FactorMarginals, InferError> {
        let plan = self.plan(g)?;
        if plan.work > self.max_marginal_work {
            return Err(InferError::TooLarge {
                what: "entries in all the cliques of exact marginals, beyond \
                       VariableElimination::max_marginal_work (2^28 by default); use loopy BP",
                count: plan.work,
            });
        }
        let k = g.num_states();
        let clamp = clamps(g);
        // upward pass: store[i] holds initial tables, then each clique's message
        let mut store: Vec<LogTable> = Self::initial(g);
        let mut occ: Vec<Vec<usize>> = vec![Vec::new(); g.num_vars()];
        for (i, t) in store.iter().enumerate() {
            for &v in &t.vars {
                occ[v as usize].push(i);
            }
        }
        let mut taken = vec![false; store.len()];
        // per clique: its variables (x last), the store ids it consumed, its message id
        let mut cliques: Vec<(Vec<u32>, Vec<usize>, Vec<usize>)> =
            Vec::with_capacity(plan.order.len());
        let mut producer: Vec<Option<usize>> = vec![None; store.len()];
        // messages are shifted to a maximum of 0 (magnitudes stay small, so rounding
        // stays at the level of the values, not of ln Z); the shifts add up here
        let mut log_offset = 0.0f64;
        for (ci, &x) in plan.order.iter().enumerate() {
            let ids: Vec<usize> = std::mem::take(&mut occ[x as usize])
                .into_iter()
                .filter(|&i| !std::mem::replace(&mut taken[i], true))
                .collect();
            let mut vars: Vec<u32> = ids
                .iter()
                .flat_map(|&i| store[i].vars.iter().copied())
                .filter(|&v| v != x)
                .collect::<BTreeSet<u32>>()
                .into_iter()
                .collect();
            vars.push(x);
            let cards: Vec<usize> = vars.iter().map(|&v| k[v as usize]).collect();
            let size: usize = cards.iter().product();
            let refs: Vec<&LogTable> = ids.iter().map(|&i| &store[i]).collect();
            let vals = LogTable::combine(&refs, &vars, &cards, size)?;
            let mut msg = sum_onto(&vals, &vars, &cards, &vars[..vars.len() - 1]);
            log_offset += normalise(&mut msg.vals);
            let id = store.len();
            for &v in &msg.vars {
                occ[v as usize].push(id);
            }
            store.push(msg);
            taken.push(false);
            producer.push(Some(ci));
            cliques.push((vars, cards, ids));
        }
        let log_z: f64 = log_offset
            + (0..store.len())
                .filter(|&i| !taken[i])
                .map(|i| store[i].vals.iter().copied().fold(0.0, |a, b| a + b))
                .sum::<f64>();
        if log_z == f64::NEG_INFINITY {
            return Err(InferError::ZeroProbability {
                node: None,
                cause: "the evidence and the zero potentials admit no assignment",
            });
        }
        // downward pass, parents (later cliques) first
        let mut down: Vec<Option<LogTable>> = vec![None; cliques.len()];
        let mut probs: Vec<Vec<f64>> = k.iter().map(|&kv| vec![0.0; kv]).collect();
        for ci in (0..cliques.len()).rev() {
            let (vars, cards, ids) = &cliques[ci];
            let size: usize = cards.iter().product();
            let from_parent = down[ci].take();
            let mut refs: Vec<&LogTable> = ids.iter().map(|&i| &store[i]).collect();
            if let Some(d) = &from_parent {
                refs.push(d);
            }
            let belief = LogTable::combine(&refs, vars, cards, size)?;
            let x = vars[vars.len() - 1];
            let bx = sum_onto(&belief, vars, cards, &[x]);
            let m = bx.vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = bx.vals.iter().map(|&l| (l - m).exp()).collect();
            let total: f64 = p.iter().sum();
            probs[x as usize] = p.iter().map(|q| q / total).collect();
            for (pos, &id) in ids.iter().enumerate() {
                let Some(child) = producer[id] else { continue };
                let mut others: Vec<&LogTable> = ids
                    .iter()
                    .enumerate()
                    .filter(|&(p, _)| p != pos)
                    .map(|(_, &i)| &store[i])
                    .collect();
                if let Some(d) = &from_parent {
                    others.push(d);
                }
                let vals = LogTable::combine(&others, vars, cards, size)?;
                let mut d = sum_onto(&vals, vars, cards, &store[id].vars);
                normalise(&mut d.vals);
                down[child] = Some(d);
            }
        }
        for (v, c) in clamp.iter().enumerate() {
            if let Some(x) = *c {
                let mut p = vec![0.0; k[v]];
                p[x as usize] = 1.0;
                probs[v] = p;
            }
        }
        Ok(FactorMarginals::new(probs, Convergence::exact()))
    }

    /// A most probable assignment given the evidence (max-product elimination with
    /// traceback; among ties, the lowest state of each variable in reverse elimination
    /// order). Every elimination table is kept for the traceback, so their total must
    /// also fit [`VariableElimination::max_table_entries`].
    ///
    /// # Errors
    /// [`InferError::TooLarge`] as described on the type;
    /// [`InferError::ZeroProbability`] when no assignment has positive probability.
    pub fn map(&self, g: &FactorGraph) -> Result<FactorMap, InferError> {
        let plan = self.plan(g)?;
        if plan.work > self.max_table_entries {
            return Err(InferError::TooLarge {
                what: "entries of the elimination tables MAP keeps for its traceback, beyond \
                       VariableElimination::max_table_entries (2^27 by default); use loopy BP",
                count: plan.work,
            });
        }
        let mut kept = Vec::with_capacity(plan.order.len());
        let bag = Self::eliminate(g, Self::initial(g), &plan.order, true, Some(&mut kept))?;
        let best: f64 = bag.iter().map(|t| t.vals[0]).sum();
        if best == f64::NEG_INFINITY {
            return Err(InferError::ZeroProbability {
                node: None,
                cause: "the evidence and the zero potentials admit no assignment",
            });
        }
        let mut states: Vec<usize> = clamps(g)
            .iter()
            .map(|e| e.map_or(0, |x| x as usize))
            .collect();
        for t in kept.iter().rev() {
            let r = t.vars.len() - 1;
            let mut off = 0usize;
            for j in 0..r {
                off = off * t.cards[j] + states[t.vars[j] as usize];
            }
            let kx = t.cards[r];
            let block = &t.vals[off * kx..(off + 1) * kx];
            let mut arg = 0;
            for (s, &val) in block.iter().enumerate() {
                if val > block[arg] {
                    arg = s;
                }
            }
            states[t.vars[r] as usize] = arg;
        }
        let log_score = g.log_score(&states)?;
        Ok(FactorMap {
            states,
            log_score,
            convergence: Convergence::exact(),
        })
    }
}
