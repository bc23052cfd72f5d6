//! Pairwise Markov random fields with log-potentials, shared pairwise tables and evidence.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use srl_graph::RelationalGraph;

use crate::error::InferError;
use crate::kernel::{KernelTables, KernelView};

/// Largest accepted magnitude of a finite log-potential, `10^12`. Beyond it the `f64`
/// rounding of a sum of log-potentials (`|x| · 2^-52`) passes `10^-4` nats, so finite values
/// that large are rejected with [`InferError::ExtremeValue`]; a hard zero is `-∞`.
pub const MAX_ABS_LOG_POTENTIAL: f64 = 1e12;

/// Models whose log-potentials are all finite and at most this large in magnitude (`10^4`)
/// are *ordinary*: every algorithm runs its fast path on the values as given. A model with
/// a `-∞` (zero potential) or a larger finite value runs the *extreme* path: every unary
/// row and every pairwise table is shifted by its own maximum (a constant factor, so the
/// distribution is unchanged; `log Z` is shifted back), and the message, cavity and
/// normalisation steps treat `-∞` exactly (no `∞ − ∞`).
pub const ORDINARY_ABS_LOG_POTENTIAL: f64 = 1e4;

/// Largest pairwise table, `2^26` entries (512 MiB of `f64`); larger tables are refused
/// with [`InferError::TooLarge`] before anything is allocated (a `100000 x 100000` Potts
/// table would need 80 GB).
pub const MAX_TABLE_ENTRIES: usize = 1 << 26;

/// Largest total of the model's derived arrays, `2^30` entries (8 GiB of `f64` each): the
/// message array (`Σ_v deg(v) · k_v`) and the message kernels (`2 ·` the pool size).
/// Checked by [`PairwiseMrf::new`] before any of them is allocated.
pub const MAX_MODEL_ENTRIES: usize = 1 << 30;

/// A pairwise log-potential table `log ψ(x_u, x_v)` of shape `rows x cols`, row-major:
/// `log_values[a * cols + b]` is the log-potential of `x_u = a, x_v = b` where `u` is the
/// first endpoint of the edge using the table.
///
/// Tables live in a pool ([`MrfParts::tables`]); edges refer to them by index, so a model
/// with 10^6 edges and one shared (e.g. Potts) table stores one table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairTable {
    /// Number of states of the edge's first endpoint.
    pub rows: usize,
    /// Number of states of the edge's second endpoint.
    pub cols: usize,
    /// `rows * cols` log-potentials, row-major (finite or `-∞` for a zero potential, at
    /// most [`MAX_ABS_LOG_POTENTIAL`] in magnitude; checked by [`PairwiseMrf::new`]).
    pub log_values: Vec<f64>,
}

impl PairTable {
    /// A table from its row-major log-values (validated later by [`PairwiseMrf::new`]).
    #[must_use]
    pub fn new(rows: usize, cols: usize, log_values: Vec<f64>) -> Self {
        Self {
            rows,
            cols,
            log_values,
        }
    }

    /// The `k x k` Potts table: `log ψ(a, b) = same` if `a == b`, else `different`.
    ///
    /// ```
    /// let t = srl_infer::PairTable::potts(2, 1.0, 0.0);
    /// assert_eq!(t.log_values, vec![1.0, 0.0, 0.0, 1.0]);
    /// ```
    ///
    /// # Panics
    /// If `k * k > MAX_TABLE_ENTRIES` (see [`PairTable::try_potts`], which returns an
    /// error instead).
    #[must_use]
    pub fn potts(k: usize, same: f64, different: f64) -> Self {
        match Self::try_potts(k, same, different) {
            Ok(t) => t,
            Err(e) => panic!("PairTable::potts({k}): {e}"),
        }
    }

    /// [`PairTable::potts`], or [`InferError::TooLarge`] (before allocating) when the table
    /// would have more than [`MAX_TABLE_ENTRIES`] entries.
    ///
    /// ```
    /// use srl_infer::{InferError, PairTable};
    /// assert!(matches!(PairTable::try_potts(100_000, 1.0, 0.0), Err(InferError::TooLarge { .. })));
    /// assert_eq!(PairTable::try_potts(2, 1.0, 0.0)?.log_values, vec![1.0, 0.0, 0.0, 1.0]);
    /// # Ok::<(), InferError>(())
    /// ```
    ///
    /// # Errors
    /// [`InferError::TooLarge`].
    pub fn try_potts(k: usize, same: f64, different: f64) -> Result<Self, InferError> {
        Self::try_from_fn(k, k, |a, b| if a == b { same } else { different })
    }

    /// A table with `log ψ(a, b) = f(a, b)`.
    ///
    /// # Panics
    /// If `rows * cols > MAX_TABLE_ENTRIES` (see [`PairTable::try_from_fn`]).
    #[must_use]
    pub fn from_fn(rows: usize, cols: usize, f: impl FnMut(usize, usize) -> f64) -> Self {
        match Self::try_from_fn(rows, cols, f) {
            Ok(t) => t,
            Err(e) => panic!("PairTable::from_fn({rows}, {cols}): {e}"),
        }
    }

    /// [`PairTable::from_fn`], or [`InferError::TooLarge`] (before allocating) when
    /// `rows * cols` overflows or exceeds [`MAX_TABLE_ENTRIES`].
    ///
    /// # Errors
    /// [`InferError::TooLarge`].
    pub fn try_from_fn(
        rows: usize,
        cols: usize,
        mut f: impl FnMut(usize, usize) -> f64,
    ) -> Result<Self, InferError> {
        let size = table_entries(rows, cols)?;
        let mut log_values = Vec::with_capacity(size);
        for a in 0..rows {
            for b in 0..cols {
                log_values.push(f(a, b));
            }
        }
        Ok(Self::new(rows, cols, log_values))
    }

    /// `log ψ(a, b)`.
    ///
    /// # Panics
    /// If `a >= rows` or `b >= cols`.
    #[inline]
    #[must_use]
    pub fn get(&self, a: usize, b: usize) -> f64 {
        assert!(a < self.rows && b < self.cols, "table index out of range");
        self.log_values[a * self.cols + b]
    }

    /// The transposed table (`cols x rows`).
    #[must_use]
    pub fn transposed(&self) -> Self {
        Self::from_fn(self.cols, self.rows, |a, b| {
            self.log_values[b * self.cols + a]
        })
    }
}

/// `rows * cols`, or [`InferError::TooLarge`] past [`MAX_TABLE_ENTRIES`].
fn table_entries(rows: usize, cols: usize) -> Result<usize, InferError> {
    match rows.checked_mul(cols) {
        Some(s) if s <= MAX_TABLE_ENTRIES => Ok(s),
        _ => Err(InferError::TooLarge {
            what: "entries in one pairwise table",
            count: rows.saturating_mul(cols),
        }),
    }
}

/// Checks one log-potential: `-∞` is a zero potential (allowed); NaN and `+∞` are
/// [`InferError::NonFinite`]; a finite value beyond [`MAX_ABS_LOG_POTENTIAL`] is
/// [`InferError::ExtremeValue`]. Returns whether the value makes the model *extreme*
/// (see [`ORDINARY_ABS_LOG_POTENTIAL`]).
fn check_value(what: &'static str, index: usize, value: f64) -> Result<bool, InferError> {
    if value == f64::NEG_INFINITY {
        return Ok(true);
    }
    if !value.is_finite() {
        return Err(InferError::NonFinite { what, index, value });
    }
    if value.abs() > MAX_ABS_LOG_POTENTIAL {
        return Err(InferError::ExtremeValue {
            what,
            index,
            value,
            limit: MAX_ABS_LOG_POTENTIAL,
        });
    }
    Ok(value.abs() > ORDINARY_ABS_LOG_POTENTIAL)
}

/// Largest value of a slice (`-∞` when empty or all `-∞`).
fn max_of(x: &[f64]) -> f64 {
    x.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// The raw description of a pairwise MRF, validated by [`PairwiseMrf::new`].
///
/// The model is `P(x) ∝ exp( Σ_v θ_v(x_v) + Σ_{e=(u,v)} θ_e(x_u, x_v) )` restricted to the
/// assignments that agree with the evidence.
///
/// All fields are public so a learner can build or modify a model freely (e.g. add cost
/// terms, as the CSMN learner of Sen & Getoor 2006, §5, needs) and have it checked once.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MrfParts {
    /// `k_v >= 1` states per variable.
    pub num_states: Vec<usize>,
    /// Unary log-potentials, flat: variable `v` owns `Σ_{w<v} k_w ..` the next `k_v` entries.
    pub unary: Vec<f64>,
    /// Edges `(u, v)`, `u != v`, both `< num_states.len()`. Parallel edges are allowed
    /// (their potentials multiply).
    pub edges: Vec<(u32, u32)>,
    /// For each edge, the index of its table in `tables` (shape `k_u x k_v`).
    pub edge_tables: Vec<u32>,
    /// The pool of pairwise tables.
    pub tables: Vec<PairTable>,
    /// Observed (clamped) variables: `Some(state)`; empty means no evidence, otherwise
    /// length `num_states.len()`.
    pub evidence: Vec<Option<u32>>,
}

/// Pairwise kernels (each table in both orientations) flattened for message passing.
#[derive(Clone, Debug)]
pub(crate) struct Kernels {
    /// Kernel `q` occupies `off[q]..off[q + 1]` of `log` and `exp`.
    pub off: Vec<usize>,
    /// `log[off + a * tgt_k + b] = θ(x_src = a, x_tgt = b)`.
    pub log: Vec<f64>,
    /// `exp(log - max_q)`, entries in `(0, 1]` when `safe[q]`.
    pub exp: Vec<f64>,
    /// Whether the dynamic range of kernel `q` is small enough (`< 600` nats) for the
    /// exp-domain sum-product kernel to be exact to rounding.
    pub safe: Vec<bool>,
    /// Every kernel is `safe` (never on an extreme model).
    pub all_safe: bool,
    /// The model is extreme (see [`ORDINARY_ABS_LOG_POTENTIAL`]): kernels are shifted to
    /// `max = 0`, may hold `-∞`, and messages take the `-∞`-exact path.
    pub robust: bool,
}

impl Kernels {
    /// The borrowed view the public kernels of [`crate::kernel`] read.
    #[inline(always)]
    pub(crate) fn view(&self) -> KernelView<'_> {
        KernelView {
            off: &self.off,
            log: &self.log,
            exp: &self.exp,
            safe: &self.safe,
            robust: self.robust,
        }
    }
}

/// A validated pairwise Markov random field over discrete variables, plus the flat
/// directed-message layout used by the message-passing algorithms.
///
/// Build it with [`PairwiseMrf::new`] (from [`MrfParts`]), [`PairwiseMrf::from_graph`] or
/// [`PairwiseMrf::read_uai`]; construction is the only fallible step. Evidence is kept as
/// clamps: a clamped variable behaves as if its unary log-potential were `-∞` outside its
/// observed state.
///
/// # Layout
/// Directed messages are grouped by target variable: the messages *into* `v` occupy slots
/// `in_off[v]..in_off[v+1]`, so a belief is a contiguous sum. Each slot knows its source,
/// the slot of the reverse message and its pairwise kernel. Memory on top of the parts:
/// `O(Σ k_v)` words (a second copy of the unary potentials only with evidence or on an
/// extreme model), 12 bytes per directed message (source, reverse slot, kernel), 4 per
/// edge and the table pool; the `K`-state and log-domain kernels add their message offsets
/// (16 bytes per directed message) and [`PairwiseMrf::neighbors`] the edge of each slot (4)
/// on first use. At 10^6 two-state variables and 2·10^6 edges the model read from UAI
/// holds 124 MB (`VmRSS`; 241 MB before 2026-12-02).
#[derive(Clone, Debug)]
pub struct PairwiseMrf {
    pub(crate) num_states: Vec<u32>,
    pub(crate) state_off: Vec<usize>,
    pub(crate) unary: Vec<f64>,
    /// Unary with evidence applied (`-∞` outside observed states); on an extreme model
    /// each row is first shifted by its maximum. Empty when it equals `work_unary` (no
    /// evidence): read it through [`PairwiseMrf::eff_unary`].
    eff_unary_own: Vec<f64>,
    /// The unary log-potentials the algorithms use, without evidence: `unary` itself on an
    /// ordinary model (then empty), each row shifted by its maximum on an extreme one. Read
    /// it through [`PairwiseMrf::work_unary`].
    work_unary_own: Vec<f64>,
    /// Whether the model is extreme (a `-∞` or a value beyond
    /// [`ORDINARY_ABS_LOG_POTENTIAL`]).
    pub(crate) extreme: bool,
    /// `Σ_v max θ_v + Σ_e max θ_e` subtracted by the shifts of an extreme model (0 on an
    /// ordinary one): `log Z = log Z_work + shift`.
    pub(crate) shift: f64,
    pub(crate) edges: Vec<(u32, u32)>,
    pub(crate) edge_tables: Vec<u32>,
    pub(crate) tables: Vec<PairTable>,
    pub(crate) evidence: Vec<Option<u32>>,
    pub(crate) in_off: Vec<usize>,
    pub(crate) in_src: Vec<u32>,
    pub(crate) in_rev: Vec<u32>,
    pub(crate) in_kernel: Vec<u32>,
    /// Slot of the message `u → v` of edge `e = (u, v)`.
    pub(crate) edge_slot: Vec<u32>,
    pub(crate) kernels: Kernels,
    pub(crate) max_states: usize,
    /// `Σ_v deg(v) · k_v`, the length of a flat message array.
    pub(crate) message_len: usize,
    /// The message offsets of the `K`-state and log-domain kernels, built on first use
    /// ([`PairwiseMrf::offsets`]): the two-state linear kernels, mean field and Gibbs
    /// never need them (72 MB at 10^6 two-state variables and 2·10^6 edges).
    pub(crate) offsets: OnceLock<MessageOffsets>,
    /// Edge of each slot, built on first use ([`PairwiseMrf::neighbors`]).
    pub(crate) in_edge: OnceLock<Vec<u32>>,
    /// `k` if every variable has `k` states, else 0.
    pub(crate) uniform_k: usize,
}

/// Offsets of the flat message layouts (see [`PairwiseMrf::offsets`]).
#[derive(Clone, Debug)]
pub(crate) struct MessageOffsets {
    /// Message storage offset of node `v`'s incoming block; slot `s` of `v` starts at
    /// `msg_base[v] + (s - in_off[v]) * k_v` (length `n + 1`).
    pub(crate) msg_base: Vec<usize>,
    /// Offset (in the target-grouped message layout) of the reverse slot `in_rev[s]`.
    pub(crate) rev_off: Vec<usize>,
    /// Source-grouped layout of outgoing messages: the message *sent back* along slot `s`
    /// (i.e. `in_rev[s]`, over the states of `in_src[s]`) occupies
    /// `out_off[s]..out_off[s + 1]`.
    pub(crate) out_off: Vec<usize>,
}

impl MessageOffsets {
    /// Offset into the message array of slot `s` whose target is `v` in `mrf` (the model
    /// these offsets were built for): [`PairwiseMrf::slot_offset`] without the lookup of
    /// the offsets, for loops that hold them already.
    #[inline]
    pub(crate) fn slot(&self, mrf: &PairwiseMrf, v: usize, s: usize) -> usize {
        self.msg_base[v] + (s - mrf.in_off[v]) * mrf.num_states[v] as usize
    }
}

impl PairwiseMrf {
    /// Validates `parts` and builds the model.
    ///
    /// # Errors
    /// - [`InferError::ZeroStates`] for `k_v == 0`;
    /// - [`InferError::DimensionMismatch`] when `unary`, `edge_tables` or `evidence` have the
    ///   wrong length;
    /// - [`InferError::NonFinite`] for a NaN or `+∞` log-potential (`-∞`, a zero potential
    ///   or hard constraint, is allowed);
    /// - [`InferError::ExtremeValue`] for a finite log-potential beyond
    ///   [`MAX_ABS_LOG_POTENTIAL`];
    /// - [`InferError::ZeroProbability`] when a variable's unary row is all `-∞`, the
    ///   evidence picks a state whose unary is `-∞`, or an edge uses an all-`-∞` table
    ///   (deeper contradictions are found by the algorithms: [`crate::Exact`],
    ///   [`crate::LoopyBp::try_run`]);
    /// - [`InferError::NodeOutOfRange`] / [`InferError::SelfLoop`] for a bad edge;
    /// - [`InferError::TableOutOfRange`], [`InferError::TableSize`], [`InferError::TableShape`]
    ///   for a bad pairwise table;
    /// - [`InferError::EvidenceOutOfRange`];
    /// - [`InferError::TooLarge`] past `u32::MAX` variables, edges or states, a table of
    ///   more than [`MAX_TABLE_ENTRIES`] entries, or derived arrays past
    ///   [`MAX_MODEL_ENTRIES`] (checked before they are allocated).
    ///
    /// # Complexity
    /// `O(n + m + Σ k_v + pool size)`.
    ///
    /// # Examples
    /// ```
    /// use srl_infer::{InferError, MrfParts, PairTable, PairwiseMrf};
    /// let parts = MrfParts {
    ///     num_states: vec![2, 2],
    ///     unary: vec![0.0, 0.5, 0.0, 0.0],
    ///     edges: vec![(0, 1)],
    ///     edge_tables: vec![0],
    ///     tables: vec![PairTable::potts(2, 1.0, 0.0)],
    ///     evidence: vec![],
    /// };
    /// let mrf = PairwiseMrf::new(parts.clone())?;
    /// assert_eq!(mrf.num_edges(), 1);
    /// let mut bad = parts;
    /// bad.unary[1] = f64::NAN;
    /// assert!(matches!(PairwiseMrf::new(bad), Err(InferError::NonFinite { .. })));
    /// # Ok::<(), InferError>(())
    /// ```
    pub fn new(parts: MrfParts) -> Result<Self, InferError> {
        let MrfParts {
            num_states,
            unary,
            edges,
            edge_tables,
            tables,
            evidence,
        } = parts;
        let n = num_states.len();
        if n > u32::MAX as usize {
            return Err(InferError::TooLarge {
                what: "variables",
                count: n,
            });
        }
        let mut state_off = Vec::with_capacity(n + 1);
        state_off.push(0usize);
        let mut ks = Vec::with_capacity(n);
        let mut max_states = 0usize;
        for (v, &k) in num_states.iter().enumerate() {
            if k == 0 {
                return Err(InferError::ZeroStates { node: v });
            }
            if k > u32::MAX as usize {
                return Err(InferError::TooLarge {
                    what: "states of one variable",
                    count: k,
                });
            }
            max_states = max_states.max(k);
            ks.push(k as u32);
            let end = state_off[v].checked_add(k).ok_or(InferError::TooLarge {
                what: "states in total",
                count: k,
            })?;
            state_off.push(end);
        }
        let total = state_off[n];
        if unary.len() != total {
            return Err(InferError::DimensionMismatch {
                what: "unary log-potentials",
                expected: total,
                found: unary.len(),
            });
        }
        let mut extreme = false;
        for (i, &x) in unary.iter().enumerate() {
            extreme |= check_value("unary log-potential", i, x)?;
        }
        for v in 0..n {
            if max_of(&unary[state_off[v]..state_off[v + 1]]) == f64::NEG_INFINITY {
                return Err(InferError::ZeroProbability {
                    node: Some(v),
                    cause: "all its unary potentials are zero",
                });
            }
        }
        let m = edges.len();
        if 2 * m > u32::MAX as usize {
            return Err(InferError::TooLarge {
                what: "edges",
                count: m,
            });
        }
        if edge_tables.len() != m {
            return Err(InferError::DimensionMismatch {
                what: "edge table indices",
                expected: m,
                found: edge_tables.len(),
            });
        }
        for (t, tab) in tables.iter().enumerate() {
            table_entries(tab.rows, tab.cols)?;
            if tab.rows.checked_mul(tab.cols) != Some(tab.log_values.len()) {
                return Err(InferError::TableSize {
                    table: t,
                    rows: tab.rows,
                    cols: tab.cols,
                    found: tab.log_values.len(),
                });
            }
            for (i, &x) in tab.log_values.iter().enumerate() {
                extreme |= check_value("pairwise log-potential", i, x)?;
            }
        }
        // The kernels hold every table twice (both orientations).
        let pool_entries = tables
            .iter()
            .try_fold(0usize, |acc, t| acc.checked_add(t.log_values.len()))
            .and_then(|x| x.checked_mul(2))
            .filter(|&x| x <= MAX_MODEL_ENTRIES);
        if pool_entries.is_none() {
            return Err(InferError::TooLarge {
                what: "pairwise table entries in the pool (kernels)",
                count: tables.iter().map(|t| t.log_values.len()).sum::<usize>(),
            });
        }
        for (e, (&(u, v), &t)) in edges.iter().zip(&edge_tables).enumerate() {
            for w in [u, v] {
                if w as usize >= n {
                    return Err(InferError::NodeOutOfRange {
                        edge: e,
                        node: w as usize,
                        num_nodes: n,
                    });
                }
            }
            if u == v {
                return Err(InferError::SelfLoop {
                    edge: e,
                    node: u as usize,
                });
            }
            let tab = tables.get(t as usize).ok_or(InferError::TableOutOfRange {
                edge: e,
                table: t as usize,
                num_tables: tables.len(),
            })?;
            let (rows, cols) = (num_states[u as usize], num_states[v as usize]);
            if max_of(&tab.log_values) == f64::NEG_INFINITY && !tab.log_values.is_empty() {
                return Err(InferError::ZeroProbability {
                    node: None,
                    cause: "a pairwise table used by an edge is zero everywhere",
                });
            }
            if tab.rows != rows || tab.cols != cols {
                return Err(InferError::TableShape {
                    edge: e,
                    table: t as usize,
                    rows,
                    cols,
                    found_rows: tab.rows,
                    found_cols: tab.cols,
                });
            }
        }
        let evidence = if evidence.is_empty() {
            vec![None; n]
        } else {
            evidence
        };
        if evidence.len() != n {
            return Err(InferError::DimensionMismatch {
                what: "evidence",
                expected: n,
                found: evidence.len(),
            });
        }
        for (v, ev) in evidence.iter().enumerate() {
            if let Some(s) = *ev {
                if s as usize >= num_states[v] {
                    return Err(InferError::EvidenceOutOfRange {
                        node: v,
                        state: s as usize,
                        num_states: num_states[v],
                    });
                }
                if unary[state_off[v] + s as usize] == f64::NEG_INFINITY {
                    return Err(InferError::ZeroProbability {
                        node: Some(v),
                        cause: "the evidence sets it to a state whose unary potential is zero",
                    });
                }
            }
        }
        // Message array: Σ_v deg(v) k_v entries.
        let mut deg = vec![0usize; n];
        for &(u, v) in &edges {
            deg[u as usize] += 1;
            deg[v as usize] += 1;
        }
        let msg_entries = deg
            .iter()
            .zip(&num_states)
            .try_fold(0usize, |acc, (&d, &k)| acc.checked_add(d.checked_mul(k)?))
            .filter(|&x| x <= MAX_MODEL_ENTRIES);
        drop(deg);
        if msg_entries.is_none() {
            return Err(InferError::TooLarge {
                what: "message entries (Σ degree · states)",
                count: usize::MAX,
            });
        }
        Ok(Self::build(
            ks,
            state_off,
            unary,
            edges,
            edge_tables,
            tables,
            evidence,
            max_states,
            extreme,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        num_states: Vec<u32>,
        state_off: Vec<usize>,
        unary: Vec<f64>,
        edges: Vec<(u32, u32)>,
        edge_tables: Vec<u32>,
        tables: Vec<PairTable>,
        evidence: Vec<Option<u32>>,
        max_states: usize,
        extreme: bool,
    ) -> Self {
        let n = num_states.len();
        let mut shift = 0.0;
        // shifted copies only where they differ from `unary` (extreme models, evidence)
        let mut work_unary = if extreme { unary.clone() } else { Vec::new() };
        // Per-table shifts (extreme models only): every table's maximum is finite
        // (all-zero tables used by an edge were refused).
        let table_max: Vec<f64> = if extreme {
            tables
                .iter()
                .map(|t| {
                    let m = max_of(&t.log_values);
                    if m.is_finite() { m } else { 0.0 }
                })
                .collect()
        } else {
            Vec::new()
        };
        if extreme {
            for v in 0..n {
                let row = &mut work_unary[state_off[v]..state_off[v + 1]];
                let m = max_of(row);
                row.iter_mut().for_each(|x| *x -= m);
                shift += m;
            }
            for &t in &edge_tables {
                shift += table_max[t as usize];
            }
        }
        let has_evidence = evidence.iter().any(Option::is_some);
        let mut eff_unary = match (has_evidence, extreme) {
            (false, _) => Vec::new(),
            (true, true) => work_unary.clone(),
            (true, false) => unary.clone(),
        };
        for (v, ev) in evidence.iter().enumerate() {
            if let Some(s) = *ev {
                for (x, val) in eff_unary[state_off[v]..state_off[v + 1]]
                    .iter_mut()
                    .enumerate()
                {
                    if x != s as usize {
                        *val = f64::NEG_INFINITY;
                    }
                }
            }
        }
        // Incoming CSR grouped by target, slots in edge order within each block.
        let mut in_off = vec![0usize; n + 1];
        for &(u, v) in &edges {
            in_off[u as usize + 1] += 1;
            in_off[v as usize + 1] += 1;
        }
        for v in 0..n {
            in_off[v + 1] += in_off[v];
        }
        let slots = in_off[n];
        let mut cursor = in_off[..n].to_vec();
        let mut in_src = vec![0u32; slots];
        let mut in_rev = vec![0u32; slots];
        let mut in_kernel = vec![0u32; slots];
        let mut edge_slot = vec![0u32; edges.len()];
        for (e, (&(u, v), &t)) in edges.iter().zip(&edge_tables).enumerate() {
            let s_uv = cursor[v as usize];
            cursor[v as usize] += 1;
            let s_vu = cursor[u as usize];
            cursor[u as usize] += 1;
            in_src[s_uv] = u;
            in_src[s_vu] = v;
            in_rev[s_uv] = s_vu as u32;
            in_rev[s_vu] = s_uv as u32;
            in_kernel[s_uv] = 2 * t;
            in_kernel[s_vu] = 2 * t + 1;
            edge_slot[e] = s_uv as u32;
        }
        let message_len = (0..n)
            .map(|v| (in_off[v + 1] - in_off[v]) * num_states[v] as usize)
            .sum();
        let uniform_k = match num_states.first() {
            Some(&k) if num_states.iter().all(|&x| x == k) => k as usize,
            _ => 0,
        };
        let mut kt = KernelTables::new();
        for (ti, tab) in tables.iter().enumerate() {
            kt.push_table(tab, if extreme { table_max[ti] } else { 0.0 });
        }
        let KernelTables {
            off,
            log,
            exp,
            safe,
        } = kt;
        Self {
            num_states,
            state_off,
            unary,
            eff_unary_own: eff_unary,
            work_unary_own: work_unary,
            extreme,
            shift,
            edges,
            edge_tables,
            tables,
            evidence,
            in_off,
            in_src,
            in_rev,
            in_kernel,
            edge_slot,
            kernels: Kernels {
                off,
                log,
                exp,
                all_safe: !extreme && safe.iter().all(|&x| x),
                safe,
                robust: extreme,
            },
            max_states,
            message_len,
            offsets: OnceLock::new(),
            in_edge: OnceLock::new(),
            uniform_k,
        }
    }

    /// A model over the nodes and edges of `graph`, each variable with `num_states` states
    /// (usually `graph.num_labels()`).
    ///
    /// # Arguments
    /// - `unary`: `n * num_states` log-potentials, node-major.
    /// - `edge_tables`: one index into `tables` per graph edge (in `EdgeId` order), or empty
    ///   to use table 0 for every edge.
    /// - `tables`: the pool of `num_states x num_states` tables.
    /// - `evidence`: see [`MrfParts::evidence`]; pass `graph.labels().to_vec()` to clamp
    ///   the labelled nodes.
    ///
    /// Edge `e` of the graph becomes edge `e` of the model (same endpoints and order).
    ///
    /// # Errors
    /// As [`PairwiseMrf::new`].
    pub fn from_graph(
        graph: &RelationalGraph,
        num_states: usize,
        unary: Vec<f64>,
        edge_tables: Vec<u32>,
        tables: Vec<PairTable>,
        evidence: Vec<Option<u32>>,
    ) -> Result<Self, InferError> {
        let m = graph.num_edges();
        let edge_tables = if edge_tables.is_empty() {
            vec![0; m]
        } else {
            edge_tables
        };
        Self::new(MrfParts {
            num_states: vec![num_states; graph.num_nodes()],
            unary,
            edges: graph.edge_list().iter().map(|&(u, v)| (u.0, v.0)).collect(),
            edge_tables,
            tables,
            evidence,
        })
    }

    /// A copy of the model's description, for modification and re-validation.
    #[must_use]
    pub fn to_parts(&self) -> MrfParts {
        MrfParts {
            num_states: self.num_states.iter().map(|&k| k as usize).collect(),
            unary: self.unary.clone(),
            edges: self.edges.clone(),
            edge_tables: self.edge_tables.clone(),
            tables: self.tables.clone(),
            evidence: self.evidence.clone(),
        }
    }

    /// A copy with `extra[i]` added to every unary log-potential (same flat layout as
    /// [`PairwiseMrf::unary_all`]), e.g. expected-cost terms.
    ///
    /// # Errors
    /// [`InferError::DimensionMismatch`] or [`InferError::NonFinite`].
    pub fn with_extra_unary(&self, extra: &[f64]) -> Result<Self, InferError> {
        if extra.len() != self.unary.len() {
            return Err(InferError::DimensionMismatch {
                what: "extra unary terms",
                expected: self.unary.len(),
                found: extra.len(),
            });
        }
        let mut parts = self.to_parts();
        for (u, x) in parts.unary.iter_mut().zip(extra) {
            *u += x;
        }
        Self::new(parts)
    }

    /// A copy where edge `e`'s table becomes `table(e) + extra_tables[extra_of_edge[e]]`
    /// (entrywise sum of log-potentials). Sharing is kept: edges with the same
    /// `(base table, extra table)` pair share one table in the result.
    ///
    /// # Errors
    /// [`InferError::DimensionMismatch`] if `extra_of_edge.len() != num_edges()`, and the
    /// table errors of [`PairwiseMrf::new`] (index range, shape, finiteness).
    pub fn with_extra_pairwise(
        &self,
        extra_of_edge: &[u32],
        extra_tables: &[PairTable],
    ) -> Result<Self, InferError> {
        if extra_of_edge.len() != self.edges.len() {
            return Err(InferError::DimensionMismatch {
                what: "extra pairwise table indices",
                expected: self.edges.len(),
                found: extra_of_edge.len(),
            });
        }
        let mut pool: Vec<PairTable> = Vec::new();
        let mut seen = std::collections::HashMap::new();
        let mut new_idx = Vec::with_capacity(self.edges.len());
        for (e, (&t, &x)) in self.edge_tables.iter().zip(extra_of_edge).enumerate() {
            let idx = match seen.get(&(t, x)) {
                Some(&i) => i,
                None => {
                    let base = &self.tables[t as usize];
                    let add = extra_tables
                        .get(x as usize)
                        .ok_or(InferError::TableOutOfRange {
                            edge: e,
                            table: x as usize,
                            num_tables: extra_tables.len(),
                        })?;
                    if add.rows != base.rows
                        || add.cols != base.cols
                        || add.log_values.len() != base.log_values.len()
                    {
                        return Err(InferError::TableShape {
                            edge: e,
                            table: x as usize,
                            rows: base.rows,
                            cols: base.cols,
                            found_rows: add.rows,
                            found_cols: add.cols,
                        });
                    }
                    let sum = base
                        .log_values
                        .iter()
                        .zip(&add.log_values)
                        .map(|(a, b)| a + b)
                        .collect();
                    pool.push(PairTable::new(base.rows, base.cols, sum));
                    let i = (pool.len() - 1) as u32;
                    seen.insert((t, x), i);
                    i
                }
            };
            new_idx.push(idx);
        }
        let mut parts = self.to_parts();
        parts.tables = pool;
        parts.edge_tables = new_idx;
        Self::new(parts)
    }

    /// A copy with different evidence (`Some(state)` clamps; empty clears all evidence).
    ///
    /// # Errors
    /// [`InferError::DimensionMismatch`] or [`InferError::EvidenceOutOfRange`].
    pub fn with_evidence(&self, evidence: Vec<Option<u32>>) -> Result<Self, InferError> {
        let mut parts = self.to_parts();
        parts.evidence = evidence;
        Self::new(parts)
    }

    /// Whether the model is *ordinary* (every log-potential finite and at most
    /// [`ORDINARY_ABS_LOG_POTENTIAL`] in magnitude), so the algorithms take their fast
    /// paths; otherwise (a zero potential or a huge value) they take the `-∞`-exact path.
    #[must_use]
    pub fn is_ordinary(&self) -> bool {
        !self.extreme
    }

    /// Number of variables `n`.
    #[inline]
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        self.num_states.len()
    }

    /// Number of edges `m`.
    #[inline]
    #[must_use]
    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Number of directed messages, `2m`.
    #[inline]
    #[must_use]
    pub fn num_directed_edges(&self) -> usize {
        2 * self.edges.len()
    }

    /// Number of states `k_v` of variable `v`.
    ///
    /// # Panics
    /// If `v >= n`.
    #[inline]
    #[must_use]
    pub fn num_states(&self, v: usize) -> usize {
        self.num_states[v] as usize
    }

    /// Largest `k_v` (0 for an empty model).
    #[must_use]
    pub fn max_states(&self) -> usize {
        self.max_states
    }

    /// Offsets of the flat per-state layout: variable `v` owns `offsets[v]..offsets[v+1]`
    /// (length `n + 1`).
    #[must_use]
    pub fn state_offsets(&self) -> &[usize] {
        &self.state_off
    }

    /// Unary log-potentials `θ_v(·)` of variable `v` (length `k_v`; evidence not applied).
    ///
    /// # Panics
    /// If `v >= n`.
    #[must_use]
    pub fn unary(&self, v: usize) -> &[f64] {
        &self.unary[self.state_off[v]..self.state_off[v + 1]]
    }

    /// All unary log-potentials, flat (see [`PairwiseMrf::state_offsets`]).
    #[must_use]
    pub fn unary_all(&self) -> &[f64] {
        &self.unary
    }

    /// Endpoints `(u, v)` of edge `e`.
    ///
    /// # Panics
    /// If `e >= m`.
    #[must_use]
    pub fn edge(&self, e: usize) -> (usize, usize) {
        let (u, v) = self.edges[e];
        (u as usize, v as usize)
    }

    /// All edges.
    #[must_use]
    pub fn edges(&self) -> &[(u32, u32)] {
        &self.edges
    }

    /// The pairwise table of edge `e` (`k_u x k_v`).
    ///
    /// # Panics
    /// If `e >= m`.
    #[must_use]
    pub fn pair_table(&self, e: usize) -> &PairTable {
        &self.tables[self.edge_tables[e] as usize]
    }

    /// Table index of each edge.
    #[must_use]
    pub fn edge_tables(&self) -> &[u32] {
        &self.edge_tables
    }

    /// The table pool.
    #[must_use]
    pub fn tables(&self) -> &[PairTable] {
        &self.tables
    }

    /// Observed state of `v`, if clamped.
    ///
    /// # Panics
    /// If `v >= n`.
    #[must_use]
    pub fn evidence(&self, v: usize) -> Option<usize> {
        self.evidence[v].map(|s| s as usize)
    }

    /// Evidence of all variables.
    #[must_use]
    pub fn evidence_all(&self) -> &[Option<u32>] {
        &self.evidence
    }

    /// Neighbours of `v` with the edge joining them, in edge order (a neighbour appears once
    /// per parallel edge).
    pub fn neighbors(&self, v: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let in_edge = self.in_edge();
        (self.in_off[v]..self.in_off[v + 1])
            .map(move |s| (self.in_src[s] as usize, in_edge[s] as usize))
    }

    /// Unnormalised log-probability `Σ_v θ_v(x_v) + Σ_e θ_e(x_u, x_v)` of a full
    /// assignment; `-∞` if it contradicts the evidence.
    ///
    /// # Panics
    /// If `x.len() != n` or a state is out of range.
    #[must_use]
    pub fn log_score(&self, x: &[u32]) -> f64 {
        assert_eq!(x.len(), self.num_nodes(), "assignment length");
        let mut s = 0.0;
        for (v, &xv) in x.iter().enumerate() {
            assert!(xv < self.num_states[v], "state out of range");
            s += self.eff_unary()[self.state_off[v] + xv as usize];
        }
        for (&(u, v), &t) in self.edges.iter().zip(&self.edge_tables) {
            let tab = &self.tables[t as usize];
            s += tab.log_values[x[u as usize] as usize * tab.cols + x[v as usize] as usize];
        }
        s
    }

    /// Checks that the zero potentials (hard constraints) and the evidence leave every
    /// variable at least one possible state, by arc consistency (AC-3): a state of `u` is
    /// dropped when its unary log-potential is `-∞` (a zero potential, or another state
    /// observed) or when every still-possible state of a neighbour gives the pair `-∞`;
    /// dropping repeats to a fixed point. A variable left with no state proves that the
    /// model and evidence admit no assignment of positive probability (the converse does
    /// not hold: arc consistency is a necessary condition, so a model that passes can still
    /// be infeasible, which [`crate::LoopyBp::try_run`] or [`crate::Exact`] may then
    /// detect). A model without `-∞` entries passes at once.
    ///
    /// Front-ends call this before inference so that contradicting evidence is an error
    /// instead of uniform or arbitrary marginals (issue 25).
    ///
    /// # Errors
    /// [`InferError::ZeroProbability`] naming the first variable left without a state.
    ///
    /// # Complexity
    /// `O(m · k^3)` in the worst case (`m` edges, `k` states), `O(n + table entries)` for a
    /// model without zeros.
    pub fn check_feasible(&self) -> Result<(), InferError> {
        let neg = f64::NEG_INFINITY;
        let zero_tables: Vec<bool> = self
            .tables
            .iter()
            .map(|t| t.log_values.contains(&neg))
            .collect();
        let any_zero_unary = self.eff_unary().contains(&neg);
        if !any_zero_unary && !zero_tables.iter().any(|&z| z) {
            return Ok(());
        }
        let infeasible = |v: usize| InferError::ZeroProbability {
            node: Some(v),
            cause: "the zero potentials and the evidence leave it no possible state (arc consistency)",
        };
        let n = self.num_nodes();
        let mut alive: Vec<bool> = self.eff_unary().iter().map(|&x| x != neg).collect();
        for v in 0..n {
            if !alive[self.state_off[v]..self.state_off[v + 1]].contains(&true) {
                return Err(infeasible(v));
            }
        }
        // worklist of variables whose domain shrank: their neighbours are revised
        let mut queued = vec![true; n];
        let mut queue: std::collections::VecDeque<usize> = (0..n).collect();
        while let Some(w) = queue.pop_front() {
            queued[w] = false;
            for (u, e) in self.neighbors(w) {
                let t = self.edge_tables[e] as usize;
                if !zero_tables[t] {
                    continue;
                }
                let tab = &self.tables[t];
                let (a, _) = self.edge(e);
                // revise u against w
                let mut changed = false;
                for su in 0..self.num_states[u] as usize {
                    if !alive[self.state_off[u] + su] {
                        continue;
                    }
                    let supported = (0..self.num_states[w] as usize).any(|sw| {
                        alive[self.state_off[w] + sw]
                            && if a == u {
                                tab.get(su, sw) != neg
                            } else {
                                tab.get(sw, su) != neg
                            }
                    });
                    if !supported {
                        alive[self.state_off[u] + su] = false;
                        changed = true;
                    }
                }
                if changed {
                    if !alive[self.state_off[u]..self.state_off[u + 1]].contains(&true) {
                        return Err(infeasible(u));
                    }
                    if !queued[u] {
                        queued[u] = true;
                        queue.push_back(u);
                    }
                }
            }
        }
        Ok(())
    }

    /// Offset into the message array of slot `s` whose target is `v`.
    #[inline]
    pub(crate) fn slot_offset(&self, v: usize, s: usize) -> usize {
        self.offsets().slot(self, v, s)
    }

    /// Unary log-potentials with evidence applied (`-∞` outside observed states), each
    /// row shifted by its maximum on an extreme model (layout of
    /// [`PairwiseMrf::unary_all`]).
    #[inline]
    pub(crate) fn eff_unary(&self) -> &[f64] {
        if self.eff_unary_own.is_empty() {
            self.work_unary()
        } else {
            &self.eff_unary_own
        }
    }

    /// The unary log-potentials the algorithms use, without evidence: `unary` itself on
    /// an ordinary model, each row shifted by its maximum on an extreme one.
    #[inline]
    pub(crate) fn work_unary(&self) -> &[f64] {
        if self.extreme {
            &self.work_unary_own
        } else {
            &self.unary
        }
    }

    /// Total length of a flat message array.
    pub(crate) fn message_len(&self) -> usize {
        self.message_len
    }

    /// The message offsets of the `K`-state and log-domain kernels, built on the first
    /// call (`O(n + slots)`; `(n + 1 + 2 · slots + 1)` words) and kept.
    pub(crate) fn offsets(&self) -> &MessageOffsets {
        self.offsets.get_or_init(|| {
            let n = self.num_nodes();
            let (in_off, ks) = (&self.in_off, &self.num_states);
            let slots = in_off[n];
            let mut msg_base = Vec::with_capacity(n + 1);
            msg_base.push(0usize);
            for v in 0..n {
                msg_base.push(msg_base[v] + (in_off[v + 1] - in_off[v]) * ks[v] as usize);
            }
            let rev_off: Vec<usize> = (0..slots)
                .map(|s| {
                    let t = self.in_rev[s] as usize;
                    let j = self.in_src[s] as usize;
                    msg_base[j] + (t - in_off[j]) * ks[j] as usize
                })
                .collect();
            let mut out_off = Vec::with_capacity(slots + 1);
            out_off.push(0usize);
            for s in 0..slots {
                out_off.push(out_off[s] + ks[self.in_src[s] as usize] as usize);
            }
            MessageOffsets {
                msg_base,
                rev_off,
                out_off,
            }
        })
    }

    /// The edge of each slot, built on the first call (`O(m)`) and kept.
    fn in_edge(&self) -> &[u32] {
        self.in_edge.get_or_init(|| {
            let mut in_edge = vec![0u32; self.in_src.len()];
            for (e, &s) in self.edge_slot.iter().enumerate() {
                in_edge[s as usize] = e as u32;
                in_edge[self.in_rev[s as usize] as usize] = e as u32;
            }
            in_edge
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts() -> MrfParts {
        MrfParts {
            num_states: vec![2, 3, 2],
            unary: vec![0.0; 7],
            edges: vec![(0, 1), (2, 1)],
            edge_tables: vec![0, 1],
            tables: vec![
                PairTable::from_fn(2, 3, |a, b| (a * 3 + b) as f64),
                PairTable::from_fn(2, 3, |a, b| -((a * 3 + b) as f64)),
            ],
            evidence: vec![],
        }
    }

    #[test]
    fn layout_and_scores() {
        let mrf = PairwiseMrf::new(parts()).unwrap();
        assert_eq!(mrf.num_directed_edges(), 4);
        assert_eq!(mrf.message_len(), 2 + 3 * 2 + 2);
        let nb: Vec<_> = mrf.neighbors(1).collect();
        assert_eq!(nb, vec![(0, 0), (2, 1)]);
        assert_eq!(mrf.neighbors(2).collect::<Vec<_>>(), vec![(1, 1)]);
        assert_eq!(mrf.log_score(&[1, 2, 0]), 5.0 - 2.0);
        for s in 0..4 {
            // The target of slot `s` is the source of its reverse slot.
            let t = mrf.in_src[mrf.in_rev[s] as usize] as usize;
            assert!(mrf.in_off[t] <= s && s < mrf.in_off[t + 1]);
        }
    }

    /// The lazily built message offsets and slot edges, and the unary views that are
    /// shared with `unary` when they equal it, give what the eager arrays held.
    #[test]
    fn lazy_layout_and_shared_unary() {
        let mut p = parts();
        p.edges.push((0, 1)); // a parallel edge
        p.edge_tables.push(0);
        let mrf = PairwiseMrf::new(p.clone()).unwrap();
        let off = mrf.offsets();
        // node 1 (3 states) has three incoming slots, nodes 0 and 2 (2 states) two and one
        assert_eq!(off.msg_base, vec![0, 4, 13, 15]);
        assert_eq!(mrf.message_len(), 15);
        for s in 0..mrf.num_directed_edges() {
            let (t, j) = (mrf.in_rev[s] as usize, mrf.in_src[s] as usize);
            assert_eq!(off.rev_off[s], mrf.slot_offset(j, t));
            let k = mrf.num_states(j);
            assert_eq!(off.out_off[s + 1] - off.out_off[s], k);
        }
        assert_eq!(
            mrf.neighbors(1).collect::<Vec<_>>(),
            vec![(0, 0), (2, 1), (0, 2)]
        );
        assert_eq!(mrf.neighbors(0).collect::<Vec<_>>(), vec![(1, 0), (1, 2)]);
        assert!(mrf.eff_unary_own.is_empty() && mrf.work_unary_own.is_empty());
        assert_eq!(mrf.eff_unary(), mrf.unary_all());
        // evidence: its own copy, `-∞` outside the observed state; `work_unary` shared
        p.evidence = vec![None, Some(2), None];
        let ev = PairwiseMrf::new(p.clone()).unwrap();
        assert_eq!(
            &ev.eff_unary()[2..5],
            &[f64::NEG_INFINITY, f64::NEG_INFINITY, 0.0]
        );
        assert_eq!(ev.work_unary(), ev.unary_all());
        // an extreme model: rows shifted by their maxima, evidence on top
        p.unary[0] = f64::NEG_INFINITY;
        p.unary[1] = 3.0;
        let ex = PairwiseMrf::new(p).unwrap();
        assert_eq!(&ex.work_unary()[..2], &[f64::NEG_INFINITY, 0.0]);
        assert_eq!(
            &ex.eff_unary()[..5],
            &[
                f64::NEG_INFINITY,
                0.0,
                f64::NEG_INFINITY,
                f64::NEG_INFINITY,
                0.0
            ]
        );
        assert_eq!(ex.unary(0), &[f64::NEG_INFINITY, 3.0]);
    }

    #[test]
    fn rejects_bad_parts() {
        let mut p = parts();
        p.edges[1] = (1, 1);
        assert!(matches!(
            PairwiseMrf::new(p),
            Err(InferError::SelfLoop { edge: 1, node: 1 })
        ));
        let mut p = parts();
        p.edge_tables[0] = 5;
        assert!(matches!(
            PairwiseMrf::new(p),
            Err(InferError::TableOutOfRange { table: 5, .. })
        ));
        let mut p = parts();
        p.tables[1].log_values[2] = f64::INFINITY;
        assert!(matches!(
            PairwiseMrf::new(p),
            Err(InferError::NonFinite { .. })
        ));
        let mut p = parts();
        p.edges[1] = (1, 2);
        assert!(matches!(
            PairwiseMrf::new(p),
            Err(InferError::TableShape { .. })
        ));
        let mut p = parts();
        p.evidence = vec![None, Some(3), None];
        assert!(matches!(
            PairwiseMrf::new(p),
            Err(InferError::EvidenceOutOfRange { .. })
        ));
        let mut p = parts();
        p.num_states[0] = 0;
        assert!(matches!(
            PairwiseMrf::new(p),
            Err(InferError::ZeroStates { node: 0 })
        ));
        let mut p = parts();
        p.unary.pop();
        assert!(matches!(
            PairwiseMrf::new(p),
            Err(InferError::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn extra_terms_keep_sharing() {
        let mrf = PairwiseMrf::new(MrfParts {
            num_states: vec![2; 4],
            unary: vec![0.0; 8],
            edges: vec![(0, 1), (1, 2), (2, 3)],
            edge_tables: vec![0, 0, 0],
            tables: vec![PairTable::potts(2, 1.0, 0.0)],
            evidence: vec![],
        })
        .unwrap();
        let extra = [PairTable::potts(2, 0.0, 2.0), PairTable::potts(2, 0.5, 0.0)];
        let m2 = mrf.with_extra_pairwise(&[0, 1, 0], &extra).unwrap();
        assert_eq!(m2.tables().len(), 2);
        assert_eq!(m2.pair_table(2).log_values, vec![1.0, 2.0, 2.0, 1.0]);
        assert_eq!(m2.pair_table(1).log_values, vec![1.5, 0.0, 0.0, 1.5]);
        let m3 = mrf.with_extra_unary(&[1.0; 8]).unwrap();
        assert_eq!(m3.unary(3), &[1.0, 1.0]);
        assert!(mrf.with_extra_unary(&[1.0; 3]).is_err());
    }
}
