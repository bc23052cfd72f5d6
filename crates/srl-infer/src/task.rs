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
}

impl Task {
    /// The task's name: `mar` or `map`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Task::Mar => "mar",
            Task::Map => "map",
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

impl TaskOptions {
    /// Checks the options for `task` by `algorithm` (before any work).
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`]: damping outside `[0, 1)`, a negative or
    /// non-finite tolerance, 0 iterations, 0 Gibbs samples, a schedule the algorithm does
    /// not have, ICM asked for marginals.
    pub fn validate(&self, task: Task, algorithm: Algorithm) -> Result<(), InferError> {
        let bad = |name, value: String, reason| {
            Err(InferError::InvalidParameter {
                name,
                value,
                reason,
            })
        };
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
        Ok(())
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
        // validate refuses it
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
}
