//! One pipeline for the MRF inference job: "compute task T (marginals or the most
//! probable assignment) of this model with algorithm A", with the algorithms' names,
//! their defaults, the checks of their options, the feasibility check of the evidence, and
//! the UAI competition's output formats. The `srl mrf` command holds only argument parsing,
//! file I/O and printing around [`run_task`] (the rule of ARCHITECTURE.md: pipelines in the
//! libraries, front-ends thin).
//!
//! The vocabulary, used by the CLI, the docs and (with `_` for `-`) Python:
//!
//! | name | algorithm | tasks | aliases |
//! |---|---|---|---|
//! | `lbp` | [`LoopyBp`] (sum-product for MAR, max-product for MAP) | mar, map | `bp`, `loopy-bp` |
//! | `mean-field` | [`MeanField`] (MAP: the mode of each marginal) | mar, map | `mf`, `mean_field` |
//! | `gibbs` | [`Gibbs`] (MAP: the best state sampled) | mar, map | `gs` |
//! | `exact` | [`Exact`] (trees and forests, else enumeration) | mar, map | |
//! | `icm` | [`Icm`], iterated conditional modes | map | |
//!
//! UAI output formats (the competition's): `MAR` then one line `N k1 p1(0) … p1(k1−1) k2
//! …`; `MAP` then `N x1 … xN` ([`TaskOutcome::to_uai_string`]).

use rand::Rng;

use crate::factor_graph::{
    FactorBp, FactorGibbs, FactorGraph, FactorMap, FactorMarginals, FactorMeanField,
    FactorSchedule, VariableElimination, uai_map_string, uai_mar_string, uai_pr_string,
};
use crate::{
    BpMode, Convergence, Exact, Gibbs, Icm, InferError, LoopyBp, MapAssignment, Marginals,
    MeanField, PairwiseMrf, Schedule, Sweep,
};

/// What to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Task {
    /// The marginal distribution of every variable (UAI `MAR`).
    Mar,
    /// The most probable assignment (UAI `MAP`; for approximate algorithms, their best
    /// assignment).
    Map,
    /// The log partition function `ln Z` (UAI `PR`; for a Bayesian network with
    /// evidence, `ln P(evidence)`): by exact elimination on a factor graph
    /// ([`run_factor_task`]); the pairwise [`run_task`] refuses it.
    Pr,
}

impl Task {
    /// The task's name: `mar`, `map` or `pr`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Task::Mar => "mar",
            Task::Map => "map",
            Task::Pr => "pr",
        }
    }
}

/// The inference algorithm (names and aliases in the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Loopy belief propagation.
    Lbp,
    /// Mean field (naive variational).
    MeanField,
    /// Gibbs sampling.
    Gibbs,
    /// Exact inference (trees, forests, or enumeration of small models).
    Exact,
    /// Iterated conditional modes (MAP only).
    Icm,
}

impl Algorithm {
    /// Every algorithm, in the order of the docs.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Lbp,
        Algorithm::MeanField,
        Algorithm::Gibbs,
        Algorithm::Exact,
        Algorithm::Icm,
    ];

    /// The algorithm's name (`lbp`, `mean-field`, `gibbs`, `exact`, `icm`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Lbp => "lbp",
            Algorithm::MeanField => "mean-field",
            Algorithm::Gibbs => "gibbs",
            Algorithm::Exact => "exact",
            Algorithm::Icm => "icm",
        }
    }

    /// The algorithm of a name or alias (case-insensitive; `_` and `-` alike).
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] for an unknown name.
    pub fn from_name(name: &str) -> Result<Self, InferError> {
        let n = name.to_ascii_lowercase().replace('_', "-");
        Ok(match n.as_str() {
            "lbp" | "bp" | "loopy-bp" => Algorithm::Lbp,
            "mean-field" | "mf" | "meanfield" => Algorithm::MeanField,
            "gibbs" | "gs" => Algorithm::Gibbs,
            "exact" => Algorithm::Exact,
            "icm" => Algorithm::Icm,
            _ => {
                return Err(InferError::InvalidParameter {
                    name: "algorithm",
                    value: name.to_owned(),
                    reason: "not one of lbp, mean-field, gibbs, exact, icm",
                });
            }
        })
    }
}

/// The update schedule of the iterative algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScheduleChoice {
    /// Loopy BP: every message from the previous sweep's ([`Schedule::Flooding`]).
    Flooding,
    /// Loopy BP ([`Schedule::Sequential`]) or mean field ([`Sweep::Sequential`]).
    Sequential,
    /// Loopy BP: largest residual first ([`Schedule::Residual`]).
    Residual,
    /// Mean field: every variable from the previous sweep's ([`Sweep::Parallel`]).
    Parallel,
}

impl ScheduleChoice {
    /// The schedule of a name (case-insensitive): `flooding`, `sequential`, `residual`,
    /// `parallel`.
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] for an unknown name.
    pub fn from_name(name: &str) -> Result<Self, InferError> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "flooding" => ScheduleChoice::Flooding,
            "sequential" => ScheduleChoice::Sequential,
            "residual" => ScheduleChoice::Residual,
            "parallel" => ScheduleChoice::Parallel,
            _ => {
                return Err(InferError::InvalidParameter {
                    name: "schedule",
                    value: name.to_owned(),
                    reason: "not one of flooding, sequential, residual (loopy BP), sequential, parallel (mean field)",
                });
            }
        })
    }

    /// The schedule's name (`flooding`, `sequential`, `residual`, `parallel`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ScheduleChoice::Flooding => "flooding",
            ScheduleChoice::Sequential => "sequential",
            ScheduleChoice::Residual => "residual",
            ScheduleChoice::Parallel => "parallel",
        }
    }
}

/// The options of [`run_task`]; `None` takes the algorithm's own default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TaskOptions {
    /// Update schedule (loopy BP: flooding (default), sequential, residual; mean field:
    /// sequential (default), parallel).
    pub schedule: Option<ScheduleChoice>,
    /// Damping of loopy BP and mean field, in `[0, 1)`.
    pub damping: f64,
    /// Iteration cap of loopy BP, mean field and ICM, at least 1.
    pub max_iterations: Option<usize>,
    /// Convergence tolerance of loopy BP and mean field, finite and `>= 0`.
    pub tolerance: Option<f64>,
    /// Gibbs samples kept, at least 1.
    pub samples: usize,
    /// Gibbs sweeps discarded before sampling.
    pub burn_in: usize,
}

impl Default for TaskOptions {
    /// Each algorithm's defaults; Gibbs with 800 samples after 200 burn-in sweeps.
    fn default() -> Self {
        Self {
            schedule: None,
            damping: 0.0,
            max_iterations: None,
            tolerance: None,
            samples: 800,
            burn_in: 200,
        }
    }
}

/// An option error: `name` (the option), `value` (as given) and why it is refused.
fn bad(name: &'static str, value: String, reason: &'static str) -> Result<(), InferError> {
    Err(InferError::InvalidParameter {
        name,
        value,
        reason,
    })
}

impl TaskOptions {
    /// Checks the options for `task` by `algorithm` (before any work).
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`]: damping outside `[0, 1)`, a negative or
    /// non-finite tolerance, 0 iterations, 0 Gibbs samples, a schedule the algorithm does
    /// not have, ICM asked for marginals, the PR task (factor graphs only:
    /// [`TaskOptions::validate_factor`]).
    pub fn validate(&self, task: Task, algorithm: Algorithm) -> Result<(), InferError> {
        self.validate_shared(algorithm)?;
        let ok = match (algorithm, self.schedule) {
            (_, None) => true,
            (Algorithm::Lbp, Some(s)) => s != ScheduleChoice::Parallel,
            (Algorithm::MeanField, Some(s)) => {
                matches!(s, ScheduleChoice::Sequential | ScheduleChoice::Parallel)
            }
            _ => false,
        };
        if !ok {
            return bad(
                "schedule",
                format!("{:?} with {}", self.schedule, algorithm.name()),
                "does not apply (lbp: flooding, sequential, residual; mean-field: sequential, parallel; the others have none)",
            );
        }
        if algorithm == Algorithm::Icm && task == Task::Mar {
            return bad(
                "task",
                "mar".into(),
                "icm computes MAP only; ask for the map task",
            );
        }
        if task == Task::Pr {
            return bad(
                "task",
                "pr".into(),
                "the partition function is computed on a factor graph by exact elimination (run_factor_task; srl mrf --task pr)",
            );
        }
        Ok(())
    }

    /// The checks both model kinds share: iterations, Gibbs samples, damping, tolerance.
    fn validate_shared(&self, algorithm: Algorithm) -> Result<(), InferError> {
        if self.max_iterations == Some(0) {
            return bad("max-iterations", "0".into(), "must be at least 1");
        }
        if algorithm == Algorithm::Gibbs && self.samples == 0 {
            return bad("samples", "0".into(), "Gibbs needs at least one sample");
        }
        if !(0.0..1.0).contains(&self.damping) {
            return bad("damping", self.damping.to_string(), "must be in [0, 1)");
        }
        if let Some(t) = self.tolerance
            && !(t.is_finite() && t >= 0.0)
        {
            return bad("tolerance", t.to_string(), "must be a non-negative number");
        }
        Ok(())
    }

    /// Checks the options for `task` by `algorithm` on a general factor graph
    /// ([`run_factor_task`]), before any work: the checks of [`TaskOptions::validate`]
    /// that apply to every model (iterations, samples, damping, tolerance), then the
    /// factor-graph algorithms: `lbp`, `mean-field`, `gibbs` or `exact` for MAR, `lbp`
    /// or `exact` for MAP, `exact` for PR; loopy BP's schedules flooding, sequential and
    /// residual, mean field's sequential only.
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] naming the option (`algorithm`, `schedule`,
    /// `damping`, ...).
    pub fn validate_factor(&self, task: Task, algorithm: Algorithm) -> Result<(), InferError> {
        self.validate_shared(algorithm)?;
        let supported = matches!(
            (task, algorithm),
            (
                Task::Mar,
                Algorithm::Lbp | Algorithm::MeanField | Algorithm::Gibbs | Algorithm::Exact
            ) | (Task::Map, Algorithm::Lbp | Algorithm::Exact)
                | (Task::Pr, Algorithm::Exact)
        );
        if !supported {
            return bad(
                "algorithm",
                algorithm.name().into(),
                if task == Task::Pr {
                    "the partition function (task pr) is computed by exact elimination only: algorithm exact"
                } else {
                    "general factor graphs support lbp|mean-field|gibbs|exact for task mar and lbp|exact for task map"
                },
            );
        }
        match (algorithm, self.schedule) {
            (_, None)
            | (
                Algorithm::Lbp,
                Some(
                    ScheduleChoice::Flooding
                    | ScheduleChoice::Sequential
                    | ScheduleChoice::Residual,
                ),
            )
            | (Algorithm::MeanField, Some(ScheduleChoice::Sequential)) => Ok(()),
            (Algorithm::Lbp, Some(s)) => bad(
                "schedule",
                s.name().into(),
                "loopy BP on general factor graphs runs flooding|sequential|residual",
            ),
            (Algorithm::MeanField, Some(s)) => bad(
                "schedule",
                s.name().into(),
                "mean field on general factor graphs runs sequential",
            ),
            (_, Some(s)) => bad(
                "schedule",
                s.name().into(),
                "only loopy BP and mean field have a schedule",
            ),
        }
    }

    /// The factor-graph loopy BP of these options ([`run_factor_task`]).
    #[must_use]
    pub fn factor_bp(&self) -> FactorBp {
        let d = FactorBp::default();
        FactorBp {
            max_iters: self.max_iterations.unwrap_or(d.max_iters),
            tolerance: self.tolerance.unwrap_or(d.tolerance),
            damping: self.damping,
            schedule: match self.schedule {
                Some(ScheduleChoice::Sequential) => FactorSchedule::Sequential,
                Some(ScheduleChoice::Residual) => FactorSchedule::Residual,
                _ => FactorSchedule::Flooding,
            },
        }
    }

    /// The factor-graph mean field of these options ([`run_factor_task`]).
    #[must_use]
    pub fn factor_mean_field(&self) -> FactorMeanField {
        let d = FactorMeanField::default();
        FactorMeanField {
            max_iters: self.max_iterations.unwrap_or(d.max_iters),
            tolerance: self.tolerance.unwrap_or(d.tolerance),
            damping: self.damping,
        }
    }

    /// The factor-graph Gibbs sampler of these options, seeded with `seed`
    /// ([`run_factor_task`]).
    #[must_use]
    pub fn factor_gibbs(&self, seed: u64) -> FactorGibbs {
        FactorGibbs {
            burn_in: self.burn_in,
            samples: self.samples,
            seed,
            ..FactorGibbs::default()
        }
    }

    /// The loopy BP configuration of these options (sum-product; [`run_task`] switches to
    /// max-product for MAP).
    #[must_use]
    pub fn loopy_bp(&self) -> LoopyBp {
        let d = LoopyBp::default();
        LoopyBp {
            max_iters: self.max_iterations.unwrap_or(d.max_iters),
            tol: self.tolerance.unwrap_or(d.tol),
            damping: self.damping,
            schedule: match self.schedule {
                Some(ScheduleChoice::Sequential) => Schedule::Sequential,
                Some(ScheduleChoice::Residual) => Schedule::Residual,
                _ => Schedule::Flooding,
            },
            mode: BpMode::SumProduct,
            ..d
        }
    }

    /// The mean-field configuration of these options.
    #[must_use]
    pub fn mean_field(&self) -> MeanField {
        let d = MeanField::default();
        MeanField {
            max_iters: self.max_iterations.unwrap_or(d.max_iters),
            tol: self.tolerance.unwrap_or(d.tol),
            damping: self.damping,
            sweep: match self.schedule {
                Some(ScheduleChoice::Parallel) => Sweep::Parallel,
                _ => Sweep::Sequential,
            },
            ..d
        }
    }

    /// The Gibbs configuration of these options.
    #[must_use]
    pub fn gibbs(&self) -> Gibbs {
        Gibbs {
            burn_in: self.burn_in,
            samples: self.samples,
            ..Gibbs::default()
        }
    }
}

/// The result of [`run_task`].
#[derive(Clone, Debug)]
pub enum TaskOutcome {
    /// Marginals (task MAR).
    Mar(Marginals),
    /// An assignment (task MAP).
    Map(MapAssignment),
}

impl TaskOutcome {
    /// The run's convergence report.
    #[must_use]
    pub fn convergence(&self) -> Convergence {
        match self {
            TaskOutcome::Mar(m) => m.convergence(),
            TaskOutcome::Map(x) => x.convergence,
        }
    }

    /// The outcome in the UAI competition's output format (`MAR` or `MAP`, then one line;
    /// probabilities printed with round-trip precision).
    #[must_use]
    pub fn to_uai_string(&self) -> String {
        match self {
            TaskOutcome::Mar(m) => {
                let mut s = format!("MAR\n{}", m.num_nodes());
                for v in 0..m.num_nodes() {
                    let p = m.node(v);
                    s.push_str(&format!(" {}", p.len()));
                    for x in p {
                        s.push_str(&format!(" {x}"));
                    }
                }
                s.push('\n');
                s
            }
            TaskOutcome::Map(a) => {
                let mut s = format!("MAP\n{}", a.states.len());
                for x in &a.states {
                    s.push_str(&format!(" {x}"));
                }
                s.push('\n');
                s
            }
        }
    }
}

/// Runs `task` by `algorithm` on `mrf` with `options` (`rng` drives Gibbs sampling only).
///
/// Steps: the options are checked ([`TaskOptions::validate`]); the zero potentials and the
/// evidence are checked for a variable left without a possible state
/// ([`PairwiseMrf::check_feasible`]); the algorithm runs through its error-returning path
/// (loopy BP's `try_run` / `try_map`, so a variable BP finds impossible is an error, never
/// a uniform row); a MAP assignment of probability zero is an error.
///
/// # Errors
/// [`InferError::InvalidParameter`] for bad options; [`InferError::ZeroProbability`] when
/// the model and evidence leave a variable no state or the assignment found has
/// probability zero; [`InferError::ExactTooLarge`] for exact inference on a large loopy
/// model; [`InferError::NoFeasibleSample`] from Gibbs.
pub fn run_task<R: Rng + ?Sized>(
    mrf: &PairwiseMrf,
    task: Task,
    algorithm: Algorithm,
    options: &TaskOptions,
    rng: &mut R,
) -> Result<TaskOutcome, InferError> {
    options.validate(task, algorithm)?;
    mrf.check_feasible()?;
    let outcome = match (task, algorithm) {
        (Task::Mar, Algorithm::Lbp) => TaskOutcome::Mar(options.loopy_bp().try_run(mrf)?),
        (Task::Mar, Algorithm::MeanField) => TaskOutcome::Mar(options.mean_field().run(mrf)),
        (Task::Mar, Algorithm::Gibbs) => TaskOutcome::Mar(options.gibbs().run(mrf, rng)?.marginals),
        (Task::Mar, Algorithm::Exact) => TaskOutcome::Mar(Exact::default().marginals(mrf)?),
        (Task::Map, Algorithm::Lbp) => TaskOutcome::Map(options.loopy_bp().try_map(mrf)?),
        (Task::Map, Algorithm::MeanField) => {
            let m = options.mean_field().run(mrf);
            let states = m.decode();
            TaskOutcome::Map(MapAssignment {
                log_score: mrf.log_score(&states),
                states,
                convergence: m.convergence(),
            })
        }
        (Task::Map, Algorithm::Gibbs) => TaskOutcome::Map(options.gibbs().run(mrf, rng)?.best),
        (Task::Map, Algorithm::Exact) => TaskOutcome::Map(Exact::default().map(mrf)?),
        (Task::Map, Algorithm::Icm) => {
            let d = Icm::default();
            TaskOutcome::Map(
                Icm {
                    max_iters: options.max_iterations.unwrap_or(d.max_iters),
                }
                .run(mrf),
            )
        }
        // validate refuses them
        (Task::Pr, _) => {
            return Err(InferError::InvalidParameter {
                name: "task",
                value: "pr".into(),
                reason: "the partition function is computed on a factor graph by exact elimination (run_factor_task; srl mrf --task pr)",
            });
        }
        (Task::Mar, Algorithm::Icm) => {
            return Err(InferError::InvalidParameter {
                name: "task",
                value: "mar".into(),
                reason: "icm computes MAP only; ask for the map task",
            });
        }
    };
    if let TaskOutcome::Map(x) = &outcome
        && x.log_score == f64::NEG_INFINITY
    {
        return Err(InferError::ZeroProbability {
            node: None,
            cause: "the assignment found breaks a zero potential or the evidence; the model may admit none (exact inference decides)",
        });
    }
    Ok(outcome)
}

/// The result of [`run_factor_task`].
#[derive(Clone, Debug)]
pub enum FactorOutcome {
    /// Marginals (task MAR).
    Mar(FactorMarginals),
    /// An assignment (task MAP).
    Map(FactorMap),
    /// `ln Z`, natural logarithm (task PR; `-∞` when the evidence is impossible).
    Pr(f64),
}

impl FactorOutcome {
    /// The run's convergence report (exact elimination: converged, no residual).
    #[must_use]
    pub fn convergence(&self) -> Convergence {
        match self {
            FactorOutcome::Mar(m) => m.convergence(),
            FactorOutcome::Map(x) => x.convergence,
            FactorOutcome::Pr(_) => Convergence::exact(),
        }
    }

    /// The outcome in the UAI competition's output format: `MAR`, `MAP` or `PR` (then
    /// `log10 Z`) and one line ([`uai_mar_string`], [`uai_map_string`],
    /// [`uai_pr_string`]).
    #[must_use]
    pub fn to_uai_string(&self) -> String {
        match self {
            FactorOutcome::Mar(m) => uai_mar_string(m),
            FactorOutcome::Map(x) => uai_map_string(x),
            FactorOutcome::Pr(lz) => uai_pr_string(*lz),
        }
    }
}

/// Runs `task` by `algorithm` on the general factor graph `g` (any arity, a Bayesian
/// network's CPTs, evidence as set on `g`) with `options`; `seed` drives Gibbs sampling
/// only (the same seed, the same samples for any thread count). The factor-graph job of
/// `srl mrf` (UAI files with a factor of more than two variables, `BAYES` files, BIF and
/// NET networks, `--task pr`).
///
/// | task | algorithms |
/// |---|---|
/// | MAR | `lbp` ([`FactorBp`], sum-product), `mean-field` ([`FactorMeanField`]), `gibbs` ([`FactorGibbs`]), `exact` ([`VariableElimination`]) |
/// | MAP | `lbp` (max-product), `exact` (max-product elimination with traceback) |
/// | PR | `exact` (`ln Z` by elimination) |
///
/// # Errors
/// [`InferError::InvalidParameter`] for options the task and algorithm do not take
/// ([`TaskOptions::validate_factor`]); the algorithm's errors ([`InferError::ZeroProbability`]
/// when the model and evidence leave a variable no state or the assignment found has
/// probability zero, [`InferError::TooLarge`] past the elimination's size limit,
/// [`InferError::NoFeasibleSample`] from Gibbs).
pub fn run_factor_task(
    g: &FactorGraph,
    task: Task,
    algorithm: Algorithm,
    options: &TaskOptions,
    seed: u64,
) -> Result<FactorOutcome, InferError> {
    options.validate_factor(task, algorithm)?;
    let ve = VariableElimination::default();
    Ok(match (task, algorithm) {
        (Task::Mar, Algorithm::Lbp) => FactorOutcome::Mar(options.factor_bp().marginals(g)?),
        (Task::Mar, Algorithm::MeanField) => {
            FactorOutcome::Mar(options.factor_mean_field().marginals(g)?)
        }
        (Task::Mar, Algorithm::Gibbs) => {
            FactorOutcome::Mar(options.factor_gibbs(seed).marginals(g)?)
        }
        (Task::Mar, _) => FactorOutcome::Mar(ve.marginals(g)?),
        (Task::Map, Algorithm::Lbp) => FactorOutcome::Map(options.factor_bp().map(g)?),
        (Task::Map, _) => FactorOutcome::Map(ve.map(g)?),
        (Task::Pr, _) => FactorOutcome::Pr(ve.log_partition(g)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng as _;

    fn tiny() -> PairwiseMrf {
        PairwiseMrf::from_uai_str(
            "MARKOV\n2\n2 2\n3\n1 0\n1 1\n2 0 1\n2\n 1 3\n2\n 2 1\n4\n 2 1 1 2\n",
            "tiny.uai",
        )
        .expect("model")
    }

    #[test]
    fn names_and_aliases_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_name(a.name()).expect("name"), a);
        }
        for (alias, a) in [
            ("mf", Algorithm::MeanField),
            ("mean_field", Algorithm::MeanField),
            ("BP", Algorithm::Lbp),
            ("gs", Algorithm::Gibbs),
        ] {
            assert_eq!(Algorithm::from_name(alias).expect("alias"), a);
        }
        assert!(Algorithm::from_name("magic").is_err());
    }

    #[test]
    fn every_algorithm_runs_and_exact_values_are_known() {
        let mrf = tiny();
        let o = TaskOptions::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for a in Algorithm::ALL {
            for t in [Task::Mar, Task::Map] {
                let r = run_task(&mrf, t, a, &o, &mut rng);
                assert_eq!(
                    r.is_err(),
                    a == Algorithm::Icm && t == Task::Mar,
                    "{a:?} {t:?}"
                );
            }
        }
        let TaskOutcome::Mar(m) =
            run_task(&mrf, Task::Mar, Algorithm::Exact, &o, &mut rng).expect("exact")
        else {
            panic!("marginals")
        };
        // P(x0 = 1) = (6 + 6) / 17
        assert!((m.node(0)[1] - 12.0 / 17.0).abs() < 1e-12);
        let text = TaskOutcome::Mar(m).to_uai_string();
        assert!(text.starts_with("MAR\n2 2 "), "{text}");
    }

    #[test]
    fn bad_options_and_contradicting_evidence_are_errors() {
        let mrf = tiny();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for o in [
            TaskOptions {
                damping: 1.0,
                ..TaskOptions::default()
            },
            TaskOptions {
                tolerance: Some(f64::NAN),
                ..TaskOptions::default()
            },
            TaskOptions {
                max_iterations: Some(0),
                ..TaskOptions::default()
            },
            TaskOptions {
                schedule: Some(ScheduleChoice::Parallel),
                ..TaskOptions::default()
            },
        ] {
            let e = run_task(&mrf, Task::Mar, Algorithm::Lbp, &o, &mut rng).expect_err("bad");
            assert!(matches!(e, InferError::InvalidParameter { .. }), "{e}");
        }
        let eq = PairwiseMrf::from_uai_str("MARKOV\n2\n2 2\n1\n2 0 1\n4\n 1 0 0 1\n", "eq.uai")
            .expect("model")
            .with_evidence(vec![Some(0), Some(1)])
            .expect("evidence");
        for a in Algorithm::ALL {
            let e = run_task(&eq, Task::Map, a, &TaskOptions::default(), &mut rng)
                .expect_err("infeasible");
            assert!(
                matches!(e, InferError::ZeroProbability { .. }),
                "{a:?}: {e}"
            );
        }
    }

    /// A factor graph of three binary variables and one arity-3 factor (a tree).
    fn factor_tiny() -> FactorGraph {
        FactorGraph::from_uai_str(
            "MARKOV\n3\n2 2 2\n2\n3 0 1 2\n1 2\n8\n 1 2 3 4 5 6 7 8\n2\n 1 3\n",
            "tiny3.uai",
        )
        .expect("model")
        .0
    }

    #[test]
    fn factor_tasks_run_or_are_refused_by_name() {
        let g = factor_tiny();
        let o = TaskOptions {
            samples: 4000,
            ..TaskOptions::default()
        };
        for task in [Task::Mar, Task::Map, Task::Pr] {
            for a in Algorithm::ALL {
                let supported = matches!(
                    (task, a),
                    (
                        Task::Mar,
                        Algorithm::Lbp | Algorithm::MeanField | Algorithm::Gibbs | Algorithm::Exact
                    ) | (Task::Map, Algorithm::Lbp | Algorithm::Exact)
                        | (Task::Pr, Algorithm::Exact)
                );
                match run_factor_task(&g, task, a, &o, 7) {
                    Ok(_) => assert!(supported, "{task:?} {a:?} ran"),
                    Err(InferError::InvalidParameter { name, .. }) => {
                        assert!(!supported, "{task:?} {a:?}: refused");
                        assert_eq!(name, "algorithm");
                    }
                    Err(e) => panic!("{task:?} {a:?}: {e}"),
                }
            }
        }
        // exact values: Z = Σ_x φ(x0, x1, x2) ψ(x2) = (1 + 3 + 5 + 7) + 3 (2 + 4 + 6 + 8) = 76
        let FactorOutcome::Pr(lz) =
            run_factor_task(&g, Task::Pr, Algorithm::Exact, &o, 0).expect("pr")
        else {
            panic!("pr")
        };
        assert!((lz - 76f64.ln()).abs() < 1e-12, "{lz}");
        let exact = run_factor_task(&g, Task::Mar, Algorithm::Exact, &o, 0).expect("exact");
        let bp = run_factor_task(&g, Task::Mar, Algorithm::Lbp, &o, 0).expect("lbp");
        let (FactorOutcome::Mar(e), FactorOutcome::Mar(b)) = (&exact, &bp) else {
            panic!("marginals")
        };
        // P(x0 = 1) = (5 + 7 + 3 (6 + 8)) / 76 = 54 / 76; BP is exact on a tree
        assert!((e.node(0)[1] - 54.0 / 76.0).abs() < 1e-12);
        assert!((b.node(0)[1] - 54.0 / 76.0).abs() < 1e-9);
        assert!(exact.to_uai_string().starts_with("MAR\n3 2 "));
        let FactorOutcome::Map(x) =
            run_factor_task(&g, Task::Map, Algorithm::Exact, &o, 0).expect("map")
        else {
            panic!("map")
        };
        assert_eq!(x.states, vec![1, 1, 1]);
        // schedules: loopy BP's three, mean field's sequential only
        for (a, s, ok) in [
            (Algorithm::Lbp, ScheduleChoice::Residual, true),
            (Algorithm::Lbp, ScheduleChoice::Parallel, false),
            (Algorithm::MeanField, ScheduleChoice::Sequential, true),
            (Algorithm::MeanField, ScheduleChoice::Parallel, false),
            (Algorithm::Exact, ScheduleChoice::Flooding, false),
        ] {
            let o = TaskOptions {
                schedule: Some(s),
                ..TaskOptions::default()
            };
            assert_eq!(
                run_factor_task(&g, Task::Mar, a, &o, 0).is_ok(),
                ok,
                "{a:?} {s:?}"
            );
        }
    }

    #[test]
    fn schedule_names_round_trip() {
        for s in [
            ScheduleChoice::Flooding,
            ScheduleChoice::Sequential,
            ScheduleChoice::Residual,
            ScheduleChoice::Parallel,
        ] {
            assert_eq!(ScheduleChoice::from_name(s.name()).expect("name"), s);
        }
        assert!(ScheduleChoice::from_name("sideways").is_err());
    }

    #[test]
    fn the_pairwise_pipeline_refuses_pr() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let e = run_task(
            &tiny(),
            Task::Pr,
            Algorithm::Exact,
            &TaskOptions::default(),
            &mut rng,
        )
        .expect_err("pr");
        assert!(
            matches!(e, InferError::InvalidParameter { name: "task", .. }),
            "{e}"
        );
    }
}
