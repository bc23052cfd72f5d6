//! [`MrfBuilder`]: a pairwise Markov random field built one variable, one potential and
//! one edge at a time, for programs that write a model by hand. [`MrfParts`] stays the
//! low-level path (flat arrays, what learners and readers fill in bulk); both end in
//! [`PairwiseMrf::new`], so a model built either way is the same model.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::error::InferError;
use crate::mrf::{MAX_MODEL_ENTRIES, MrfParts, PairTable, PairwiseMrf};

/// Builds a [`PairwiseMrf`] step by step: [`add_variable`](Self::add_variable),
/// [`set_unary`](Self::set_unary), [`add_edge`](Self::add_edge), [`observe`](Self::observe),
/// then [`build`](Self::build).
///
/// The model is `P(x) ∝ exp( Σ_v θ_v(x_v) + Σ_{e=(u,v)} θ_e(x_u, x_v) )` over the
/// assignments that agree with the observations; every potential is a **log**-potential
/// (`0` is a factor of 1, `-∞` a hard zero).
///
/// - Variables are numbered `0, 1, …` in the order they are added; the number
///   [`add_variable`](Self::add_variable) returns is the index that
///   [`Marginals::node`](crate::Marginals::node) and
///   [`MapAssignment::states`](crate::MapAssignment) use. A new variable has all unary
///   log-potentials 0 (uniform) until [`set_unary`](Self::set_unary).
/// - Edges are numbered `0, 1, …` in the order they are added (the index of
///   [`Marginals::edge`](crate::Marginals::edge)). The table of edge `(u, v)` is
///   `k_u x k_v`, row `a` for `x_u = a`. Identical tables (same shape, same bits) are stored
///   once, as the UAI reader does: passing one Potts table to 10^6 edges keeps one table.
///   Parallel edges are allowed (their potentials multiply), as in [`MrfParts`].
/// - [`observe`](Self::observe) clamps a variable (evidence); a later call for the same
///   variable replaces the earlier state.
///
/// # Errors
/// The adding methods never fail on the spot: the first error is kept and returned by
/// [`build`](Self::build) (later calls are still accepted, so a program needs one `?`).
/// A call that names a variable not added yet is [`InferError::UnknownVariable`]; a unary
/// row of the wrong length is [`InferError::DimensionMismatch`]; an observed state `>= k`
/// is [`InferError::EvidenceOutOfRange`]; too many variables or states is
/// [`InferError::TooLarge`] (checked before allocating). Everything else is checked by
/// [`PairwiseMrf::new`] with its own errors: NaN or `+∞` potentials
/// ([`InferError::NonFinite`], with the flat index `state_offsets()[v] + state` for a unary
/// value and the index in the table for a pairwise one), values beyond
/// [`crate::mrf::MAX_ABS_LOG_POTENTIAL`], a zero state count, self-loops, a table whose
/// shape does not match its edge's cardinalities ([`InferError::TableShape`]) or whose
/// value vector is not `rows * cols` long ([`InferError::TableSize`]), zero probability.
///
/// # Examples
/// A 4-cycle of binary variables with an attractive Potts coupling (one shared table),
/// one variable observed, then loopy BP against the exact answer and the MAP state:
/// ```
/// use srl_infer::{Exact, LoopyBp, MrfBuilder, PairTable};
/// let mut b = MrfBuilder::new();
/// let x: Vec<usize> = (0..4).map(|_| b.add_variable(2)).collect();
/// b.set_unary(x[0], &[0.2, 0.0]).set_unary(x[2], &[0.0, 0.1]);
/// let potts = PairTable::potts(2, 0.5, 0.0);
/// for i in 0..4 {
///     b.add_edge(x[i], x[(i + 1) % 4], &potts);
/// }
/// b.observe(x[3], 1);
/// let mrf = b.build()?;
/// assert_eq!(mrf.tables().len(), 1); // the four edges share one table
///
/// let bp = LoopyBp::default().run(&mrf);
/// let exact = Exact::default().marginals(&mrf)?;
/// assert!(bp.convergence().converged);
/// assert!((bp.node(x[1])[1] - exact.node(x[1])[1]).abs() < 0.01);
/// assert_eq!(bp.node(x[3]), &[0.0, 1.0]); // observed
/// let map = Exact::default().map(&mrf)?;
/// assert_eq!(map.states[x[3]], 1);
/// # Ok::<(), srl_infer::InferError>(())
/// ```
/// Mistakes surface at `build` as typed errors:
/// ```
/// use srl_infer::{InferError, MrfBuilder, PairTable};
/// let mut b = MrfBuilder::new();
/// let (u, v) = (b.add_variable(2), b.add_variable(3));
/// b.add_edge(u, v, &PairTable::potts(2, 1.0, 0.0)); // needs 2 x 3
/// assert!(matches!(b.build(), Err(InferError::TableShape { rows: 2, cols: 3, .. })));
///
/// let mut b = MrfBuilder::new();
/// b.add_variable(2);
/// b.observe(5, 0);
/// assert!(matches!(b.build(), Err(InferError::UnknownVariable { node: 5, .. })));
/// ```
#[derive(Debug, Default)]
pub struct MrfBuilder {
    num_states: Vec<usize>,
    /// `state_off[v]..state_off[v + 1]` are variable `v`'s unary entries.
    state_off: Vec<usize>,
    unary: Vec<f64>,
    edges: Vec<(u32, u32)>,
    edge_tables: Vec<u32>,
    pool: TablePool,
    evidence: Vec<Option<u32>>,
    /// The first error of any call, returned by `build`.
    error: Option<InferError>,
}

impl MrfBuilder {
    /// An empty builder.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a variable with `num_states` states (`k >= 1`) and uniform unary potentials;
    /// returns its index (`0, 1, …` in order of addition).
    ///
    /// A zero `num_states` is [`InferError::ZeroStates`] and more than `u32::MAX` variables,
    /// more than `u32::MAX` states, or more than [`MAX_MODEL_ENTRIES`] states in total is
    /// [`InferError::TooLarge`], both from [`build`](Self::build); the index is returned
    /// either way.
    pub fn add_variable(&mut self, num_states: usize) -> usize {
        let v = self.num_states.len();
        if self.state_off.is_empty() {
            self.state_off.push(0);
        }
        let start = self.unary.len();
        let too_large = if v >= u32::MAX as usize {
            Some(("variables", v + 1))
        } else if num_states > u32::MAX as usize {
            Some(("states of one variable", num_states))
        } else if start.saturating_add(num_states) > MAX_MODEL_ENTRIES {
            Some(("states in total", start.saturating_add(num_states)))
        } else {
            None
        };
        let k = match too_large {
            Some((what, count)) => {
                self.fail(InferError::TooLarge { what, count });
                1 // a placeholder: build fails anyway
            }
            None => num_states,
        };
        self.num_states.push(k);
        self.unary.resize(start + k, 0.0);
        self.state_off.push(start + k);
        self.evidence.push(None);
        v
    }

    /// Sets the unary log-potentials `θ_v(0..k_v)` of variable `v` (replacing earlier ones).
    ///
    /// Errors (from [`build`](Self::build)): [`InferError::UnknownVariable`] when `v` was not
    /// added, [`InferError::DimensionMismatch`] when `log_potentials.len() != k_v`; NaN and
    /// `+∞` are refused by [`PairwiseMrf::new`].
    pub fn set_unary(&mut self, v: usize, log_potentials: &[f64]) -> &mut Self {
        if self.check_variable("MrfBuilder::set_unary", v) {
            let row = &mut self.unary[self.state_off[v]..self.state_off[v + 1]];
            if row.len() == log_potentials.len() {
                row.copy_from_slice(log_potentials);
            } else {
                let expected = row.len();
                self.fail(InferError::DimensionMismatch {
                    what: "unary log-potentials of one variable (MrfBuilder::set_unary)",
                    expected,
                    found: log_potentials.len(),
                });
            }
        }
        self
    }

    /// Adds the edge `(u, v)` with the `k_u x k_v` log-potential table `table`
    /// (`table.get(a, b)` for `x_u = a, x_v = b`); returns the edge's index (`0, 1, …` in
    /// order of addition). The table is copied into the model's pool unless an identical
    /// one (same shape and bit patterns) is already there, in which case the edge shares it.
    ///
    /// Errors (from [`build`](Self::build)): [`InferError::UnknownVariable`] when `u` or `v`
    /// was not added; a self-loop, a shape that does not match `k_u x k_v`, a value vector
    /// of the wrong length and NaN values are refused by [`PairwiseMrf::new`].
    pub fn add_edge(&mut self, u: usize, v: usize, table: &PairTable) -> usize {
        let e = self.edges.len();
        let ok = self.check_variable("MrfBuilder::add_edge", u)
            & self.check_variable("MrfBuilder::add_edge", v);
        // Both endpoints are < u32::MAX when they name added variables.
        let (u, v) = if ok { (u as u32, v as u32) } else { (0, 0) };
        self.edges.push((u, v));
        let t = self.pool.intern(table);
        self.edge_tables.push(t);
        e
    }

    /// Observes variable `v` in state `state` (clamps it; its marginal becomes a point
    /// mass). A second call for the same variable replaces the first.
    ///
    /// Errors (from [`build`](Self::build)): [`InferError::UnknownVariable`] when `v` was not
    /// added, [`InferError::EvidenceOutOfRange`] when `state >= k_v`; observing a state whose
    /// unary potential is `-∞` is [`InferError::ZeroProbability`] from [`PairwiseMrf::new`].
    pub fn observe(&mut self, v: usize, state: usize) -> &mut Self {
        if self.check_variable("MrfBuilder::observe", v) {
            let k = self.num_states[v];
            if state < k {
                // k <= u32::MAX, so state fits.
                self.evidence[v] = Some(state as u32);
            } else {
                self.fail(InferError::EvidenceOutOfRange {
                    node: v,
                    state,
                    num_states: k,
                });
            }
        }
        self
    }

    /// Number of variables added so far.
    #[must_use]
    pub fn num_variables(&self) -> usize {
        self.num_states.len()
    }

    /// Number of edges added so far.
    #[must_use]
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Validates the model and builds it.
    ///
    /// # Errors
    /// The first error of any earlier call (see [`MrfBuilder`]), else every error of
    /// [`PairwiseMrf::new`].
    ///
    /// # Complexity
    /// `O(n + m + Σ k_v + pool size)`, as [`PairwiseMrf::new`].
    pub fn build(self) -> Result<PairwiseMrf, InferError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        PairwiseMrf::new(MrfParts {
            num_states: self.num_states,
            unary: self.unary,
            edges: self.edges,
            edge_tables: self.edge_tables,
            tables: self.pool.tables,
            evidence: self.evidence,
        })
    }

    /// Whether `v` names an added variable; records [`InferError::UnknownVariable`] if not.
    fn check_variable(&mut self, call: &'static str, v: usize) -> bool {
        let n = self.num_states.len();
        if v < n {
            true
        } else {
            self.fail(InferError::UnknownVariable {
                call,
                node: v,
                num_nodes: n,
            });
            false
        }
    }

    /// Keeps the first error.
    fn fail(&mut self, e: InferError) {
        self.error.get_or_insert(e);
    }
}

/// The pool of distinct pairwise tables, keyed by a hash of shape and bit patterns (the
/// same rule as the UAI reader's pool: two tables are shared when every value has the same
/// bits, so `0.0` and `-0.0` stay distinct and NaN tables are compared by bits).
#[derive(Clone, Debug, Default)]
struct TablePool {
    tables: Vec<PairTable>,
    by_hash: HashMap<u64, Vec<u32>>,
}

impl TablePool {
    /// The index of a table equal (bit for bit) to `table`, adding a copy if new.
    fn intern(&mut self, table: &PairTable) -> u32 {
        let mut h = DefaultHasher::new();
        (table.rows, table.cols, table.log_values.len()).hash(&mut h);
        for x in &table.log_values {
            x.to_bits().hash(&mut h);
        }
        let candidates = self.by_hash.entry(h.finish()).or_default();
        for &t in candidates.iter() {
            let old = &self.tables[t as usize];
            if old.rows == table.rows
                && old.cols == table.cols
                && old.log_values.len() == table.log_values.len()
                && old
                    .log_values
                    .iter()
                    .zip(&table.log_values)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            {
                return t;
            }
        }
        // At most one table per edge, and PairwiseMrf::new refuses more than u32::MAX / 2
        // edges, so a pool index past u32 only happens on a model `build` refuses.
        let t = u32::try_from(self.tables.len()).unwrap_or(u32::MAX);
        self.tables.push(table.clone());
        candidates.push(t);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Exact, LoopyBp};

    /// The doc example's model written as `MrfParts`.
    fn cycle_parts() -> MrfParts {
        MrfParts {
            num_states: vec![2; 4],
            unary: vec![0.2, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0],
            edges: vec![(0, 1), (1, 2), (2, 3), (3, 0)],
            edge_tables: vec![0; 4],
            tables: vec![PairTable::potts(2, 0.5, 0.0)],
            evidence: vec![None, None, None, Some(1)],
        }
    }

    fn cycle_builder() -> MrfBuilder {
        let mut b = MrfBuilder::new();
        let x: Vec<usize> = (0..4).map(|_| b.add_variable(2)).collect();
        assert_eq!(x, vec![0, 1, 2, 3]);
        b.set_unary(0, &[0.2, 0.0]).set_unary(2, &[0.0, 0.1]);
        for i in 0..4 {
            assert_eq!(
                b.add_edge(i, (i + 1) % 4, &PairTable::potts(2, 0.5, 0.0)),
                i
            );
        }
        b.observe(3, 1);
        b
    }

    #[test]
    fn equals_the_parts_path() {
        let b = cycle_builder();
        assert_eq!((b.num_variables(), b.num_edges()), (4, 4));
        let built = b.build().unwrap();
        let direct = PairwiseMrf::new(cycle_parts()).unwrap();
        assert_eq!(built.to_parts(), direct.to_parts());
        assert_eq!(built.tables().len(), 1);
        let (mb, md) = (
            LoopyBp::default().run(&built),
            LoopyBp::default().run(&direct),
        );
        for v in 0..4 {
            assert_eq!(mb.node(v), md.node(v));
        }
        let (eb, ed) = (
            Exact::default().marginals(&built).unwrap(),
            Exact::default().marginals(&direct).unwrap(),
        );
        assert_eq!(eb.log_partition(), ed.log_partition());
    }

    #[test]
    fn tables_are_shared_by_bits_only() {
        let mut b = MrfBuilder::new();
        let v: Vec<usize> = [2, 2, 3].iter().map(|&k| b.add_variable(k)).collect();
        let a = PairTable::potts(2, 1.0, 0.0);
        let neg_zero = PairTable::new(2, 2, vec![1.0, -0.0, 0.0, 1.0]);
        let rect = PairTable::from_fn(2, 3, |i, j| (i + j) as f64);
        b.add_edge(v[0], v[1], &a);
        b.add_edge(v[1], v[0], &a.clone());
        b.add_edge(v[0], v[1], &neg_zero); // parallel edge, a different table by bits
        b.add_edge(v[0], v[2], &rect);
        b.add_edge(v[1], v[2], &rect);
        let mrf = b.build().unwrap();
        assert_eq!(mrf.edge_tables(), &[0, 0, 1, 2, 2]);
        assert_eq!(mrf.tables(), &[a, neg_zero, rect]);
    }

    #[test]
    fn empty_and_unobserved_models() {
        let mrf = MrfBuilder::new().build().unwrap();
        assert_eq!(mrf.num_nodes(), 0);
        let mut b = MrfBuilder::new();
        b.add_variable(3);
        let mrf = b.build().unwrap();
        assert_eq!(mrf.evidence_all(), &[None]);
        assert_eq!(mrf.unary(0), &[0.0; 3]);
    }

    #[test]
    fn observe_replaces_and_set_unary_replaces() {
        let mut b = MrfBuilder::new();
        let v = b.add_variable(3);
        b.observe(v, 2).observe(v, 1);
        b.set_unary(v, &[1.0, 2.0, 3.0])
            .set_unary(v, &[0.5, 0.0, 0.0]);
        let mrf = b.build().unwrap();
        assert_eq!(mrf.evidence(v), Some(1));
        assert_eq!(mrf.unary(v), &[0.5, 0.0, 0.0]);
    }

    fn err(b: MrfBuilder) -> InferError {
        b.build().expect_err("the builder must refuse this model")
    }

    #[test]
    fn unknown_variables() {
        for call in 0..4 {
            let mut b = MrfBuilder::new();
            let v = b.add_variable(2);
            let t = PairTable::potts(2, 0.0, 0.0);
            match call {
                0 => _ = b.set_unary(7, &[0.0, 0.0]),
                1 => _ = b.observe(7, 0),
                2 => _ = b.add_edge(v, 7, &t),
                _ => _ = b.add_edge(usize::MAX, v, &t),
            }
            match err(b) {
                InferError::UnknownVariable {
                    call: name,
                    node,
                    num_nodes: 1,
                } => {
                    assert!(name.starts_with("MrfBuilder::"));
                    assert_eq!(node, if call == 3 { usize::MAX } else { 7 });
                }
                other => panic!("call {call}: {other}"),
            }
        }
        // A variable added later does not make an earlier call valid.
        let mut b = MrfBuilder::new();
        b.observe(0, 0);
        b.add_variable(2);
        let e = err(b);
        assert!(matches!(
            e,
            InferError::UnknownVariable {
                node: 0,
                num_nodes: 0,
                ..
            }
        ));
        assert_eq!(
            e.to_string(),
            "MrfBuilder::observe: variable 0 does not exist, the builder has 0 variables"
        );
    }

    #[test]
    fn first_error_wins() {
        let mut b = MrfBuilder::new();
        let v = b.add_variable(2);
        b.observe(v, 5);
        b.set_unary(9, &[]);
        assert!(matches!(
            err(b),
            InferError::EvidenceOutOfRange {
                node: 0,
                state: 5,
                num_states: 2
            }
        ));
    }

    #[test]
    fn bad_values_and_shapes() {
        // Unary row of the wrong length.
        let mut b = MrfBuilder::new();
        let v = b.add_variable(2);
        b.set_unary(v, &[0.0, 1.0, 2.0]);
        assert!(matches!(
            err(b),
            InferError::DimensionMismatch {
                expected: 2,
                found: 3,
                ..
            }
        ));
        // NaN and +inf unary: flat index state_offsets()[v] + state.
        for bad in [f64::NAN, f64::INFINITY] {
            let mut b = MrfBuilder::new();
            b.add_variable(3);
            let v = b.add_variable(2);
            b.set_unary(v, &[0.0, bad]);
            assert!(matches!(
                err(b),
                InferError::NonFinite {
                    what: "unary log-potential",
                    index: 4,
                    ..
                }
            ));
        }
        // NaN in a table.
        let mut b = MrfBuilder::new();
        let (u, v) = (b.add_variable(2), b.add_variable(2));
        b.add_edge(u, v, &PairTable::new(2, 2, vec![0.0, 0.0, f64::NAN, 0.0]));
        assert!(matches!(
            err(b),
            InferError::NonFinite {
                what: "pairwise log-potential",
                index: 2,
                ..
            }
        ));
        // Beyond MAX_ABS_LOG_POTENTIAL.
        let mut b = MrfBuilder::new();
        let v = b.add_variable(2);
        b.set_unary(v, &[1e15, 0.0]);
        assert!(matches!(err(b), InferError::ExtremeValue { .. }));
        // Table of the wrong shape (the transposed one).
        let mut b = MrfBuilder::new();
        let (u, v) = (b.add_variable(2), b.add_variable(3));
        b.add_edge(u, v, &PairTable::from_fn(3, 2, |_, _| 0.0));
        assert!(matches!(
            err(b),
            InferError::TableShape {
                edge: 0,
                table: 0,
                rows: 2,
                cols: 3,
                found_rows: 3,
                found_cols: 2
            }
        ));
        // Table whose values are not rows * cols.
        let mut b = MrfBuilder::new();
        let (u, v) = (b.add_variable(2), b.add_variable(2));
        b.add_edge(u, v, &PairTable::new(2, 2, vec![0.0; 3]));
        assert!(matches!(
            err(b),
            InferError::TableSize {
                table: 0,
                found: 3,
                ..
            }
        ));
        // Self-loop.
        let mut b = MrfBuilder::new();
        let v = b.add_variable(2);
        b.add_edge(v, v, &PairTable::potts(2, 1.0, 0.0));
        assert!(matches!(err(b), InferError::SelfLoop { edge: 0, node: 0 }));
        // Zero states.
        let mut b = MrfBuilder::new();
        b.add_variable(2);
        b.add_variable(0);
        assert!(matches!(err(b), InferError::ZeroStates { node: 1 }));
        // Evidence on a zero-potential state; all-zero table.
        let mut b = MrfBuilder::new();
        let v = b.add_variable(2);
        b.set_unary(v, &[f64::NEG_INFINITY, 0.0]).observe(v, 0);
        assert!(matches!(
            err(b),
            InferError::ZeroProbability { node: Some(0), .. }
        ));
        let mut b = MrfBuilder::new();
        let (u, v) = (b.add_variable(2), b.add_variable(2));
        b.add_edge(
            u,
            v,
            &PairTable::potts(2, f64::NEG_INFINITY, f64::NEG_INFINITY),
        );
        assert!(matches!(
            err(b),
            InferError::ZeroProbability { node: None, .. }
        ));
    }

    #[test]
    fn sizes_are_checked_before_allocating() {
        let mut b = MrfBuilder::new();
        let v = b.add_variable(usize::MAX);
        assert_eq!(v, 0);
        // Later calls on the placeholder do not panic.
        b.set_unary(v, &[0.0]).observe(v, 0);
        b.add_variable(2);
        b.add_edge(0, 1, &PairTable::potts(2, 0.0, 0.0));
        assert!(matches!(
            err(b),
            InferError::TooLarge {
                what: "states of one variable",
                ..
            }
        ));
        let mut b = MrfBuilder::new();
        b.add_variable(MAX_MODEL_ENTRIES + 1);
        assert!(matches!(
            err(b),
            InferError::TooLarge {
                what: "states in total",
                ..
            }
        ));
    }
}
