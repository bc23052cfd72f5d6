//! General factor graphs: discrete variables and factors of **any arity** over log-domain
//! tables (issue 28), the general counterpart of the pairwise [`crate::PairwiseMrf`].
//!
//! - [`FactorGraph`]: variables with cardinalities `k_v ≥ 1`, factors over scopes of
//!   distinct variables, each with a table of natural-log potentials in the UAI layout
//!   (**last scope variable fastest**), identical tables pooled by bit pattern, evidence
//!   as clamps, hard zeros exact as `-∞`.
//! - Readers: UAI `MARKOV` and `BAYES` files of any arity ([`FactorGraph::read_uai`]);
//!   evidence through [`crate::read_uai_evidence`] and [`FactorGraph::with_evidence`];
//!   Bayesian networks (BIF, Hugin NET) through srl-bayes's `to_factor_graph` conversion.
//! - Exact inference by variable elimination with a greedy weighted min-fill order
//!   ([`VariableElimination`]): marginals, MAP with traceback, `ln Z`.
//! - Loopy belief propagation ([`FactorBp`]): sum- and max-product, flooding,
//!   sequential or residual schedule, damping, log domain, same bits for any thread
//!   count; the Bethe estimate of `ln Z` ([`FactorBp::bethe_log_partition`]).
//! - Naive mean field ([`FactorMeanField`]) and Gibbs sampling blocked over a colouring
//!   ([`FactorGibbs`]; per-variable random streams, the same samples for any thread
//!   count).
//! - Writers of the UAI `MAR`, `MAP` and `PR` outputs ([`uai_mar_string`],
//!   [`uai_map_string`], [`uai_pr_string`]).
//!
//! The pairwise path ([`crate::PairwiseMrf`], [`crate::LoopyBp`], …) is untouched: a
//! pairwise model keeps its faster special-case kernels.
//!
//! Sources: Koller & Friedman, *Probabilistic Graphical Models* (2009), ch. 9 (variable
//! elimination, min-fill) and ch. 11 (loopy BP on factor graphs, Bethe); the UAI
//! inference competition's file formats (UAI 2010–2022).
//!
//! ```
//! use srl_infer::factor_graph::{FactorGraph, VariableElimination};
//! // one factor over three binary variables: x0 XOR x1 XOR x2 is impossible when 1
//! let mut g = FactorGraph::new(vec![2, 2, 2])?;
//! let table: Vec<f64> = (0..8u32)
//!     .map(|i| if i.count_ones() % 2 == 1 { f64::NEG_INFINITY } else { 0.0 })
//!     .collect();
//! g.add_factor(&[0, 1, 2], &table)?;
//! let ve = VariableElimination::default();
//! assert!((ve.log_partition(&g)? - 4f64.ln()).abs() < 1e-12);
//! let g = g.with_evidence(vec![Some(1), Some(1), None])?;
//! assert_eq!(ve.marginals(&g)?.node(2), &[1.0, 0.0]);
//! # Ok::<(), srl_infer::InferError>(())
//! ```

mod approx;
mod bp;
mod exact;
mod table;
mod uai;

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

pub use approx::{FactorGibbs, FactorMeanField};
pub use bp::{FactorBp, FactorSchedule};
pub use exact::VariableElimination;
pub use uai::{
    BAYES_ROW_TOLERANCE, UaiKind, uai_map_string, uai_mar_string, uai_needs_factor_graph,
    uai_pr_string,
};

use crate::error::InferError;
use crate::marginals::Convergence;
use crate::mrf::MAX_ABS_LOG_POTENTIAL;

/// The largest number of entries one factor table may hold (2^31, 16 GiB of `f64`);
/// checked with checked arithmetic before the table is allocated.
pub const MAX_FACTOR_TABLE_ENTRIES: usize = 1 << 31;

/// The largest total number of entries of all distinct (pooled) tables, and the largest
/// total number of states `Σ_v k_v` (2^30 each, the pairwise model's limit).
pub const MAX_FACTOR_GRAPH_ENTRIES: usize = crate::mrf::MAX_MODEL_ENTRIES;

/// The largest scope size (arity) of one factor. Variables of one state are legal in a
/// scope, so the table size alone does not bound the arity.
pub const MAX_ARITY: usize = 1024;

/// One factor: its scope (distinct variables, in table order) and its table in the pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactorScope {
    /// The variables, last one fastest in the table.
    pub vars: Vec<u32>,
    /// Index of the table in [`FactorGraph::tables`].
    pub table: u32,
}

/// A discrete factor graph with log-domain tables, the general (any-arity) model.
///
/// The unnormalised log-probability of a full assignment `x` is
/// `Σ_f θ_f(x_{scope(f)})` (natural logarithms; `-∞` is a hard zero), restricted to the
/// assignments that agree with the evidence. Invariants (checked by every constructor):
/// `1 ≤ k_v`, `Σ_v k_v ≤ 2^30`, at most `u32::MAX` variables and factors, every scope of
/// distinct in-range variables with at most [`MAX_ARITY`] entries, every table of exactly
/// `Π k` entries (at most [`MAX_FACTOR_TABLE_ENTRIES`]), the pooled tables together at
/// most [`MAX_FACTOR_GRAPH_ENTRIES`] entries, every value `-∞` or finite with magnitude at
/// most [`MAX_ABS_LOG_POTENTIAL`], evidence states `< k_v`.
#[derive(Clone, Debug, PartialEq)]
pub struct FactorGraph {
    num_states: Vec<usize>,
    factors: Vec<FactorScope>,
    tables: Vec<Vec<f64>>,
    pool_entries: usize,
    by_hash: HashMap<u64, Vec<u32>>,
    evidence: Vec<Option<u32>>,
}

fn too_large(what: &'static str, count: usize) -> InferError {
    InferError::TooLarge { what, count }
}

impl FactorGraph {
    /// A factor graph with variables of `num_states[v]` states and no factors (the uniform
    /// distribution).
    ///
    /// # Errors
    /// [`InferError::ZeroStates`] for a `k_v = 0`; [`InferError::TooLarge`] for more than
    /// `u32::MAX` variables or `Σ k_v > 2^30`.
    pub fn new(num_states: Vec<usize>) -> Result<Self, InferError> {
        if num_states.len() > u32::MAX as usize {
            return Err(too_large("variables", num_states.len()));
        }
        let mut total = 0usize;
        for (v, &k) in num_states.iter().enumerate() {
            if k == 0 {
                return Err(InferError::ZeroStates { node: v });
            }
            total = total
                .checked_add(k)
                .filter(|&t| t <= MAX_FACTOR_GRAPH_ENTRIES)
                .ok_or_else(|| too_large("states in all (limit 2^30)", usize::MAX))?;
        }
        let n = num_states.len();
        Ok(Self {
            num_states,
            factors: Vec::new(),
            tables: Vec::new(),
            pool_entries: 0,
            by_hash: HashMap::new(),
            evidence: vec![None; n],
        })
    }

    /// The number of entries of a table over `scope`, checked: distinct in-range variables,
    /// at most [`MAX_ARITY`] of them, at most [`MAX_FACTOR_TABLE_ENTRIES`] entries.
    ///
    /// # Errors
    /// [`InferError::NodeOutOfRange`] (with `edge` = the factor index the scope would get),
    /// [`InferError::SelfLoop`] for a repeated variable, [`InferError::TooLarge`].
    pub fn table_len(&self, scope: &[usize]) -> Result<usize, InferError> {
        let f = self.factors.len();
        if scope.len() > MAX_ARITY {
            return Err(too_large(
                "variables in one factor's scope (limit 1024)",
                scope.len(),
            ));
        }
        let mut len = 1usize;
        for (i, &v) in scope.iter().enumerate() {
            if v >= self.num_states.len() {
                return Err(InferError::NodeOutOfRange {
                    edge: f,
                    node: v,
                    num_nodes: self.num_states.len(),
                });
            }
            if scope[..i].contains(&v) {
                return Err(InferError::SelfLoop { edge: f, node: v });
            }
            len = len
                .checked_mul(self.num_states[v])
                .filter(|&l| l <= MAX_FACTOR_TABLE_ENTRIES)
                .ok_or_else(|| too_large("entries in one factor table (limit 2^31)", usize::MAX))?;
        }
        Ok(len)
    }

    /// Adds a factor over `scope` (distinct variables; an empty scope is a constant) with
    /// the natural-log potentials `log_table` (`Π_{v ∈ scope} k_v` values, last scope
    /// variable fastest; `-∞` is a hard zero). A table equal bit for bit to one already in
    /// the pool is shared. Returns the factor's index.
    ///
    /// # Errors
    /// As [`FactorGraph::table_len`]; [`InferError::DimensionMismatch`] for a table of
    /// the wrong length; [`InferError::NonFinite`] for NaN or `+∞`;
    /// [`InferError::ExtremeValue`] beyond ±[`MAX_ABS_LOG_POTENTIAL`];
    /// [`InferError::TooLarge`] past `u32::MAX` factors or 2^30 pooled entries.
    pub fn add_factor(&mut self, scope: &[usize], log_table: &[f64]) -> Result<usize, InferError> {
        let len = self.table_len(scope)?;
        if log_table.len() != len {
            return Err(InferError::DimensionMismatch {
                what: "factor table",
                expected: len,
                found: log_table.len(),
            });
        }
        if self.factors.len() >= u32::MAX as usize {
            return Err(too_large("factors", self.factors.len() + 1));
        }
        for (i, &x) in log_table.iter().enumerate() {
            if x.is_nan() || x == f64::INFINITY {
                return Err(InferError::NonFinite {
                    what: "log-potential",
                    index: i,
                    value: x,
                });
            }
            if x.is_finite() && x.abs() > MAX_ABS_LOG_POTENTIAL {
                return Err(InferError::ExtremeValue {
                    what: "log-potential",
                    index: i,
                    value: x,
                    limit: MAX_ABS_LOG_POTENTIAL,
                });
            }
        }
        let table = self.intern(log_table)?;
        self.factors.push(FactorScope {
            vars: scope.iter().map(|&v| v as u32).collect(),
            table,
        });
        Ok(self.factors.len() - 1)
    }

    fn intern(&mut self, logs: &[f64]) -> Result<u32, InferError> {
        let mut h = DefaultHasher::new();
        logs.len().hash(&mut h);
        for x in logs {
            x.to_bits().hash(&mut h);
        }
        let key = h.finish();
        if let Some(c) = self.by_hash.get(&key) {
            for &t in c {
                let tab = &self.tables[t as usize];
                if tab.len() == logs.len()
                    && tab
                        .iter()
                        .zip(logs)
                        .all(|(a, b)| a.to_bits() == b.to_bits())
                {
                    return Ok(t);
                }
            }
        }
        let entries = self
            .pool_entries
            .checked_add(logs.len())
            .filter(|&e| e <= MAX_FACTOR_GRAPH_ENTRIES)
            .ok_or_else(|| {
                too_large("entries of distinct factor tables (limit 2^30)", usize::MAX)
            })?;
        let mut copy = Vec::new();
        copy.try_reserve_exact(logs.len())
            .map_err(|_| too_large("factor table entries to hold in memory", logs.len()))?;
        copy.extend_from_slice(logs);
        let t = self.tables.len() as u32;
        self.tables.push(copy);
        self.pool_entries = entries;
        self.by_hash.entry(key).or_default().push(t);
        Ok(t)
    }

    /// The same model with `evidence[v] = Some(x)` clamping variable `v` to state `x`
    /// (`evidence.len()` = the number of variables; replaces any earlier evidence).
    ///
    /// # Errors
    /// [`InferError::DimensionMismatch`] for a wrong length,
    /// [`InferError::EvidenceOutOfRange`] for a state `≥ k_v`.
    pub fn with_evidence(mut self, evidence: Vec<Option<u32>>) -> Result<Self, InferError> {
        if evidence.len() != self.num_states.len() {
            return Err(InferError::DimensionMismatch {
                what: "evidence",
                expected: self.num_states.len(),
                found: evidence.len(),
            });
        }
        for (v, e) in evidence.iter().enumerate() {
            if let Some(x) = *e
                && x as usize >= self.num_states[v]
            {
                return Err(InferError::EvidenceOutOfRange {
                    node: v,
                    state: x as usize,
                    num_states: self.num_states[v],
                });
            }
        }
        self.evidence = evidence;
        Ok(self)
    }

    /// Number of variables.
    #[must_use]
    pub fn num_vars(&self) -> usize {
        self.num_states.len()
    }

    /// Cardinalities `k_v`, one per variable.
    #[must_use]
    pub fn num_states(&self) -> &[usize] {
        &self.num_states
    }

    /// The factors (scopes and table indices), in the order added.
    #[must_use]
    pub fn factors(&self) -> &[FactorScope] {
        &self.factors
    }

    /// The pool of distinct log-tables (natural logs, last scope variable fastest).
    #[must_use]
    pub fn tables(&self) -> &[Vec<f64>] {
        &self.tables
    }

    /// The log-table of factor `f`.
    ///
    /// # Panics
    /// If `f >= factors().len()`.
    #[must_use]
    pub fn factor_table(&self, f: usize) -> &[f64] {
        &self.tables[self.factors[f].table as usize]
    }

    /// The evidence, one entry per variable.
    #[must_use]
    pub fn evidence(&self) -> &[Option<u32>] {
        &self.evidence
    }

    /// Whether every factor has at most two variables (the model fits
    /// [`crate::PairwiseMrf`]).
    #[must_use]
    pub fn is_pairwise(&self) -> bool {
        self.factors.iter().all(|f| f.vars.len() <= 2)
    }

    /// The unnormalised log-probability `Σ_f θ_f(x)` of a full assignment (`-∞` if it
    /// breaks a hard zero or the evidence).
    ///
    /// # Errors
    /// [`InferError::DimensionMismatch`] for a wrong length,
    /// [`InferError::EvidenceOutOfRange`] for a state `≥ k_v`.
    pub fn log_score(&self, states: &[usize]) -> Result<f64, InferError> {
        if states.len() != self.num_states.len() {
            return Err(InferError::DimensionMismatch {
                what: "assignment",
                expected: self.num_states.len(),
                found: states.len(),
            });
        }
        for (v, &x) in states.iter().enumerate() {
            if x >= self.num_states[v] {
                return Err(InferError::EvidenceOutOfRange {
                    node: v,
                    state: x,
                    num_states: self.num_states[v],
                });
            }
            if let Some(e) = self.evidence[v]
                && e as usize != x
            {
                return Ok(f64::NEG_INFINITY);
            }
        }
        let mut s = 0.0;
        for f in &self.factors {
            let mut idx = 0usize;
            for &v in &f.vars {
                idx = idx * self.num_states[v as usize] + states[v as usize];
            }
            s += self.tables[f.table as usize][idx];
        }
        Ok(s)
    }
}

/// Per-variable marginals of a [`FactorGraph`] with the run's convergence report.
#[derive(Clone, Debug, PartialEq)]
pub struct FactorMarginals {
    probs: Vec<Vec<f64>>,
    convergence: Convergence,
}

impl FactorMarginals {
    pub(crate) fn new(probs: Vec<Vec<f64>>, convergence: Convergence) -> Self {
        Self { probs, convergence }
    }

    /// Number of variables.
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        self.probs.len()
    }

    /// `P(x_v = s)` for `s < k_v` (sums to 1; a point mass for an observed variable).
    ///
    /// # Panics
    /// If `v >= num_nodes()`.
    #[must_use]
    pub fn node(&self, v: usize) -> &[f64] {
        &self.probs[v]
    }

    /// How the run ended ([`Convergence::exact`] for variable elimination).
    #[must_use]
    pub fn convergence(&self) -> Convergence {
        self.convergence
    }
}

/// A joint assignment of a [`FactorGraph`] with its unnormalised log-probability.
#[derive(Clone, Debug, PartialEq)]
pub struct FactorMap {
    /// One state per variable.
    pub states: Vec<usize>,
    /// [`FactorGraph::log_score`] of `states`.
    pub log_score: f64,
    /// How the run ended.
    pub convergence: Convergence,
}
