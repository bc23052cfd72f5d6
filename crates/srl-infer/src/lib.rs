//! # srl-infer: inference on pairwise Markov networks and collective classification
//!
//! The srl book's chapter on this crate: [srl-infer](../../srl-infer.html); the papers' reproductions:
//! [Reproductions](../../papers/index.html) (links work in the book built by `cargo xtask book`).
//!
//! Sits directly above `srl-graph` (the data layer) and below the learners (`srl-learn`,
//! `srl-boost`, `srl-bayes`), which use it through the [`MarginalInference`],
//! [`MapInference`] and [`LocalClassifier`] traits defined here.
//!
//! - [`PairwiseMrf`]: variables with `k_v` states, unary and pairwise **log**-potentials
//!   (pairwise tables shared through a pool), evidence as clamps; built step by step with
//!   [`MrfBuilder`], or from [`MrfParts`] (the flat low-level description), a
//!   [`srl_graph::RelationalGraph`] or a UAI `MARKOV` file, validated once by
//!   [`PairwiseMrf::new`]. Learners add cost terms with
//!   [`PairwiseMrf::with_extra_unary`] / [`PairwiseMrf::with_extra_pairwise`].
//! - [`Marginals`] (node and edge, probability and log space) with a [`Convergence`]
//!   report; [`MapAssignment`].
//! - Algorithms (the config struct *is* the algorithm): [`LoopyBp`] (sum/max-product,
//!   damping, [`Schedule::Flooding`] in parallel / `Sequential` / `Residual`),
//!   [`MeanField`], [`Gibbs`] (chromatic, parallel, seeded by the caller's RNG),
//!   [`Exact`] (forest BP or enumeration, the test oracle), [`Icm`].
//! - Collective classification: [`IterativeClassification`] (ICA) and
//!   [`CollectiveGibbs`] (GS) over a [`LocalClassifier`], with [`Aggregator`]s count,
//!   proportion, exists, mode.
//!
//! Sources: the collective-classification slides (LBP, mean field, ICA, GS) and Sen &
//! Getoor, *Cost-sensitive learning with conditional Markov networks*, ICML 2006 (LBP for
//! MNs, the marginal and MAP steps of CSMN).
//!
//! ```
//! use srl_infer::{Exact, LoopyBp, MrfBuilder, PairTable, Schedule};
//! // A 4-cycle with an attractive Potts coupling; node 3 observed.
//! let mut b = MrfBuilder::new();
//! let x: Vec<usize> = (0..4).map(|_| b.add_variable(2)).collect();
//! b.set_unary(x[0], &[0.2, 0.0]).set_unary(x[2], &[0.0, 0.1]);
//! let potts = PairTable::potts(2, 0.5, 0.0); // one table, shared by the four edges
//! for i in 0..4 {
//!     b.add_edge(x[i], x[(i + 1) % 4], &potts);
//! }
//! b.observe(x[3], 1);
//! let mrf = b.build()?;
//! let exact = Exact::default().marginals(&mrf)?;
//! let bp = LoopyBp { schedule: Schedule::Residual, ..LoopyBp::default() }.run(&mrf);
//! assert!(bp.convergence().converged);
//! // Loopy BP is approximate on a cycle, but close here.
//! assert!((bp.node(1)[1] - exact.node(1)[1]).abs() < 0.01);
//! assert_eq!(bp.node(3), &[0.0, 1.0]); // observed
//! # Ok::<(), srl_infer::InferError>(())
//! ```

pub mod bp;
pub mod builder;
pub mod collective;
pub mod error;
pub mod exact;
pub mod factor_graph;
pub mod gibbs;
pub mod kernel;
pub mod linear;
pub mod map;
pub mod marginals;
pub mod mean_field;
pub mod mrf;
pub mod task;
pub mod uai;
pub mod vmath;

#[cfg(test)]
mod test_models;

pub use bp::{BpKernel, BpMessages, BpMode, LoopyBp, MessagePrecision, Schedule};
pub use builder::MrfBuilder;
pub use collective::{
    Aggregator, Bootstrap, CollectiveGibbs, CollectiveResult, ContentOnly, FeatureRow,
    IterativeClassification, LocalClassifier, NodeOrdering, aggregate_labels, aggregate_neighbors,
    fit_relational_classifier,
};
pub use error::InferError;
pub use exact::Exact;
pub use factor_graph::{FactorBp, FactorGraph, VariableElimination};
pub use gibbs::{Gibbs, GibbsRun};
pub use map::{Icm, MapInference, MarginalInference};
pub use marginals::{Beliefs, Convergence, MapAssignment, Marginals, log_sum_exp};
pub use mean_field::{MeanField, Sweep};
pub use mrf::{MrfParts, PairTable, PairwiseMrf};
pub use task::{
    Algorithm, FactorOutcome, ScheduleChoice, Task, TaskOptions, TaskOutcome, run_factor_task,
    run_task,
};
pub use uai::{UaiWarning, parse_uai_evidence, read_uai_evidence};

/// Runs `f` on a thread of the current rayon pool: inline when the caller is one of its
/// workers, else on a worker while the caller waits (as [`rayon::scope`] does).
///
/// The algorithms' sweep loops run their parallel steps (a colour class, a flooding pass)
/// with rayon. Called from a thread outside the pool, each such step is handed to the pool
/// and the caller blocks until it is done: two thread wake-ups per step, which on a model of
/// 10^4 variables cost as much as the step itself (Gibbs, 2000 sweeps, one thread:
/// 1.00-1.18 s outside the pool, 0.54-0.69 s inside it; `mf_gibbs_speed FILE.uai 2000
/// gibbs`, 2026-12-02, docs/srl-infer.md). Run inside
/// the pool, a step's parallel iterator starts on the current worker and the other
/// workers steal from it. The arithmetic is the same, so results keep their bits.
pub(crate) fn on_pool<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::scope(|_| f())
}

/// [`on_pool`] when `parallel` (the run has parallel steps), else `f` on the calling
/// thread: a run whose sweeps are all serial (a sequential schedule, a sweep too small to
/// share) gains nothing from a worker and would pay the two wake-ups of the hand-over,
/// which on a small model are most of the run (factor-graph BP on bnlearn's pigs, two
/// sweeps: 0.20-0.24 ms with the hand-over, see docs/srl-infer.md).
pub(crate) fn on_pool_if<T: Send>(parallel: bool, f: impl FnOnce() -> T + Send) -> T {
    if parallel { on_pool(f) } else { f() }
}

/// Asks the processor to bring the cache line holding `x` into every cache level
/// (`prefetcht0` on x86-64 through `safe_arch`; nothing elsewhere). A hint: it never
/// faults and changes no value, only whether a later load of `x` finds it in cache.
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(x);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
