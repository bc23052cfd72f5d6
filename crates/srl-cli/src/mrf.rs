//! `srl mrf MODEL.uai`: marginals (MAR) or the most probable assignment (MAP) of a
//! pairwise Markov network in the UAI competition format, written in the competition's
//! output formats:
//!
//! ```text
//! MAR                                   MAP
//! N  k1 p1(0) … p1(k1−1)  k2 …          N  x1 x2 … xN
//! ```
//!
//! (one line after the header; probabilities of observed variables are a point mass).
//!
//! General models (issue 28): a UAI `MARKOV` file with a factor of more than two
//! variables, a UAI `BAYES` file, a BIF (`.bif`, `.bif.gz`) or Hugin (`.net`) network, or
//! `--task pr` run on srl-infer's factor-graph path (`--algorithm lbp|exact`; PR, the
//! log10 partition function / probability of the evidence, by exact elimination only).
//! Pairwise UAI files keep the pairwise path and its output bit for bit.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use srl_infer::{Convergence, PairwiseMrf, ScheduleChoice, TaskOptions, TaskOutcome};

use crate::ui::{Ui, check_outputs, write_to};

/// What to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Task {
    /// Marginal of every variable (UAI `MAR`).
    Mar,
    /// Most probable joint assignment (UAI `MAP`).
    Map,
    /// log10 of the partition function, the probability of the evidence for a Bayesian
    /// network (UAI `PR`; exact elimination on the factor-graph path).
    Pr,
}

/// The inference algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Algorithm {
    /// Loopy belief propagation (sum-product for MAR, max-product for MAP).
    Lbp,
    /// Naive mean field (MAP: the argmax of each belief).
    MeanField,
    /// Gibbs sampling (MAP: the best state visited).
    Gibbs,
    /// Exact: trees/forests by belief propagation, small models by enumeration.
    Exact,
    /// Iterated conditional modes (MAP only).
    Icm,
}

/// Update schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScheduleArg {
    /// LBP: synchronous updates (the default).
    Flooding,
    /// LBP and mean field: in variable order, latest values (mean field's default).
    Sequential,
    /// LBP: residual belief propagation.
    Residual,
    /// Mean field: all variables from the previous sweep.
    Parallel,
}

/// `srl mrf`.
#[derive(Args, Debug)]
pub struct MrfArgs {
    /// The model: UAI `MARKOV` or `BAYES` (any arity), BIF (.bif, .bif.gz) or Hugin .net.
    pub model: PathBuf,
    /// UAI evidence file (`k v1 x1 v2 x2 …`).
    #[arg(long)]
    pub evidence: Option<PathBuf>,
    /// MAR (marginals) or MAP (assignment).
    #[arg(long, value_enum, default_value = "mar")]
    pub task: Task,
    /// Inference algorithm.
    #[arg(long, value_enum, default_value = "lbp")]
    pub algorithm: Algorithm,
    /// Update schedule (LBP: flooding|sequential|residual; mean field: sequential|parallel).
    #[arg(long, value_enum)]
    pub schedule: Option<ScheduleArg>,
    /// Damping λ in [0, 1) (LBP, mean field).
    #[arg(long, default_value_t = 0.0)]
    pub damping: f64,
    /// Iteration cap (LBP, mean field, ICM); default: the library's.
    #[arg(long)]
    pub max_iterations: Option<usize>,
    /// Convergence tolerance (LBP, mean field); default: the library's (1e-6).
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// Gibbs: counted samples.
    #[arg(long, default_value_t = 800)]
    pub samples: usize,
    /// Gibbs: burn-in sweeps.
    #[arg(long, default_value_t = 200)]
    pub burn_in: usize,
    /// Gibbs: seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output file (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Loads the model (and evidence) named by `a`.
///
/// # Errors
/// Unreadable or malformed files (file and line).
pub fn load(a: &MrfArgs, ui: Ui) -> anyhow::Result<PairwiseMrf> {
    let (mrf, warnings) = PairwiseMrf::read_uai_with_warnings(&a.model)?;
    for w in &warnings {
        ui.note(&format!("srl mrf: warning: {w}"));
    }
    match &a.evidence {
        Some(ev) => {
            let e = srl_infer::read_uai_evidence(ev, mrf.num_nodes())?;
            mrf.with_evidence(e)
                .with_context(|| format!("applying the evidence of {}", ev.display()))
        }
        None => Ok(mrf),
    }
}

/// The library's task, algorithm and options of `a`.
fn task_of(a: &MrfArgs) -> (srl_infer::Task, srl_infer::Algorithm, TaskOptions) {
    let task = match a.task {
        Task::Mar => srl_infer::Task::Mar,
        Task::Map => srl_infer::Task::Map,
        Task::Pr => srl_infer::Task::Pr,
    };
    let algorithm = match a.algorithm {
        Algorithm::Lbp => srl_infer::Algorithm::Lbp,
        Algorithm::MeanField => srl_infer::Algorithm::MeanField,
        Algorithm::Gibbs => srl_infer::Algorithm::Gibbs,
        Algorithm::Exact => srl_infer::Algorithm::Exact,
        Algorithm::Icm => srl_infer::Algorithm::Icm,
    };
    let options = TaskOptions {
        schedule: a.schedule.map(|s| match s {
            ScheduleArg::Flooding => ScheduleChoice::Flooding,
            ScheduleArg::Sequential => ScheduleChoice::Sequential,
            ScheduleArg::Residual => ScheduleChoice::Residual,
            ScheduleArg::Parallel => ScheduleChoice::Parallel,
        }),
        damping: a.damping,
        max_iterations: a.max_iterations,
        tolerance: a.tolerance,
        samples: a.samples,
        burn_in: a.burn_in,
    };
    (task, algorithm, options)
}

/// The library's option errors in the command's words (`--damping 1.5: must be in
/// [0, 1)`).
fn as_flag(e: srl_infer::InferError) -> anyhow::Error {
    match e {
        srl_infer::InferError::InvalidParameter {
            name,
            value,
            reason,
        } => anyhow::anyhow!("--{name} {value}: {reason}"),
        other => other.into(),
    }
}

/// Runs the requested inference on `mrf` through the library's pipeline
/// ([`srl_infer::run_task`]; the tests call this to compare with the library).
///
/// # Errors
/// As [`srl_infer::run_task`], with the model and evidence files named.
pub fn infer(a: &MrfArgs, mrf: &PairwiseMrf) -> anyhow::Result<TaskOutcome> {
    let (task, algorithm, options) = task_of(a);
    options.validate(task, algorithm).map_err(as_flag)?;
    let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
    srl_infer::run_task(mrf, task, algorithm, &options, &mut rng).with_context(|| {
        match &a.evidence {
            Some(ev) => format!(
                "the model {} with the evidence {}",
                a.model.display(),
                ev.display()
            ),
            None => format!("the model {}", a.model.display()),
        }
    })
}

/// The command-line spelling of an option value (`mean-field`, `mar`).
fn value_name<V: ValueEnum>(v: V) -> String {
    v.to_possible_value()
        .map_or_else(String::new, |p| p.get_name().to_owned())
}

fn convergence_json(c: &Convergence) -> serde_json::Value {
    json!({"converged": c.converged, "iterations": c.iterations, "max_residual": c.max_residual})
}

/// Runs `srl mrf`.
///
/// # Errors
/// See [`load`] and [`infer`]; unwritable output.
pub fn run(a: &MrfArgs, ui: Ui) -> anyhow::Result<()> {
    if a.task == Task::Pr
        || srl_bayes::factor_graph::is_network_file(&a.model)
        || srl_infer::factor_graph::uai_needs_factor_graph(&a.model)
    {
        return run_general(a, ui);
    }
    {
        let (task, algorithm, options) = task_of(a);
        options.validate(task, algorithm).map_err(as_flag)?;
    }
    if let Some(out) = &a.out {
        let inputs: Vec<&std::path::Path> = std::iter::once(a.model.as_path())
            .chain(a.evidence.as_deref())
            .collect();
        check_outputs(ui, &inputs, &[out])?;
    }
    let mrf = load(a, ui)?;
    let pb = ui.spinner("inference");
    let t0 = std::time::Instant::now();
    let outcome = infer(a, &mrf)?;
    pb.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let text = outcome.to_uai_string();
    let conv = outcome.convergence();
    let score = match &outcome {
        TaskOutcome::Mar(_) => None,
        TaskOutcome::Map(x) => Some(x.log_score),
    };
    debug_assert!(a.task != Task::Pr, "PR runs on the factor-graph path");
    ui.note(&format!(
        "srl mrf: {} by {} on {} variables, {} edges: {} after {} iterations (max residual {:.3e}), {secs:.3} s{}",
        value_name(a.task).to_uppercase(),
        value_name(a.algorithm),
        mrf.num_nodes(),
        mrf.num_edges(),
        if conv.converged {
            "converged"
        } else {
            "NOT converged"
        },
        conv.iterations,
        conv.max_residual,
        score.map_or_else(String::new, |s| format!(", log score {s:.6}"))
    ));
    if a.out.is_some() || !ui.json {
        write_to(ui, a.out.as_deref(), |w| Ok(w.write_all(text.as_bytes())?))?;
    }
    if ui.json {
        let mut summary = json!({
            "command": "mrf",
            "task": value_name(a.task).to_uppercase(),
            "algorithm": value_name(a.algorithm),
            "variables": mrf.num_nodes(),
            "edges": mrf.num_edges(),
            "convergence": convergence_json(&conv),
            "seconds": secs,
            "out": a.out.as_ref().map(|p| p.display().to_string()),
        });
        match &outcome {
            TaskOutcome::Mar(m) => {
                summary["marginals"] = json!(
                    (0..m.num_nodes())
                        .map(|v| m.node(v).to_vec())
                        .collect::<Vec<_>>()
                );
            }
            TaskOutcome::Map(x) => {
                summary["states"] = json!(x.states);
                summary["log_score"] = json!(x.log_score);
            }
        }
        ui.summary(&summary, "")?;
    }
    Ok(())
}

/// Loads a general model: a BIF/NET network through srl-bayes, else a UAI file of any
/// arity; then the evidence.
fn load_general(a: &MrfArgs, ui: Ui) -> anyhow::Result<srl_infer::FactorGraph> {
    let g = if srl_bayes::factor_graph::is_network_file(&a.model) {
        srl_bayes::factor_graph::read_network_factor_graph(&a.model)?.1
    } else {
        let (g, _, warnings) = srl_infer::FactorGraph::read_uai(&a.model)?;
        for w in &warnings {
            ui.note(&format!("srl mrf: warning: {w}"));
        }
        g
    };
    match &a.evidence {
        Some(ev) => {
            let e = srl_infer::read_uai_evidence(ev, g.num_vars())?;
            g.with_evidence(e)
                .with_context(|| format!("applying the evidence of {}", ev.display()))
        }
        None => Ok(g),
    }
}

/// `srl mrf` on the factor-graph path: the library's [`srl_infer::run_factor_task`]
/// between loading and printing.
fn run_general(a: &MrfArgs, ui: Ui) -> anyhow::Result<()> {
    let (task, algorithm, options) = task_of(a);
    options.validate_factor(task, algorithm).map_err(as_flag)?;
    if let Some(out) = &a.out {
        let inputs: Vec<&std::path::Path> = std::iter::once(a.model.as_path())
            .chain(a.evidence.as_deref())
            .collect();
        check_outputs(ui, &inputs, &[out])?;
    }
    let g = load_general(a, ui)?;
    let context = || match &a.evidence {
        Some(ev) => format!(
            "the model {} with the evidence {}",
            a.model.display(),
            ev.display()
        ),
        None => format!("the model {}", a.model.display()),
    };
    let pb = ui.spinner("inference");
    let t0 = std::time::Instant::now();
    let outcome =
        srl_infer::run_factor_task(&g, task, algorithm, &options, a.seed).with_context(context)?;
    let mut summary = json!({
        "command": "mrf",
        "task": value_name(a.task).to_uppercase(),
        "algorithm": value_name(a.algorithm),
        "variables": g.num_vars(),
        "factors": g.factors().len(),
        "out": a.out.as_ref().map(|p| p.display().to_string()),
    });
    let extra = match &outcome {
        srl_infer::FactorOutcome::Mar(m) => {
            summary["marginals"] = json!(
                (0..m.num_nodes())
                    .map(|v| m.node(v).to_vec())
                    .collect::<Vec<_>>()
            );
            String::new()
        }
        srl_infer::FactorOutcome::Map(x) => {
            summary["states"] = json!(x.states);
            summary["log_score"] = json!(x.log_score);
            format!(", log score {:.6}", x.log_score)
        }
        srl_infer::FactorOutcome::Pr(lz) => {
            if *lz == f64::NEG_INFINITY {
                ui.note(&format!(
                    "srl mrf: warning: {} has probability zero (PR is -inf)",
                    context()
                ));
            }
            summary["log_z"] = json!(lz);
            summary["log10_z"] = json!(lz / std::f64::consts::LN_10);
            format!(", ln Z {lz:.9}")
        }
    };
    let (text, conv) = (outcome.to_uai_string(), outcome.convergence());
    pb.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    ui.note(&format!(
        "srl mrf: {} by {} on {} variables, {} factors (general factor graph): {} after {} iterations (max residual {:.3e}), {secs:.3} s{extra}",
        value_name(a.task).to_uppercase(),
        value_name(a.algorithm),
        g.num_vars(),
        g.factors().len(),
        if conv.converged {
            "converged"
        } else {
            "NOT converged"
        },
        conv.iterations,
        conv.max_residual,
    ));
    if a.out.is_some() || !ui.json {
        write_to(ui, a.out.as_deref(), |w| Ok(w.write_all(text.as_bytes())?))?;
    }
    if ui.json {
        summary["convergence"] = convergence_json(&conv);
        summary["seconds"] = json!(secs);
        ui.summary(&summary, "")?;
    }
    Ok(())
}
