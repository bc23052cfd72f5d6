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

use std::path::PathBuf;

use anyhow::{Context as _, bail};
use clap::{Args, ValueEnum};
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use srl_infer::{
    BpMode, Convergence, Exact, Gibbs, Icm, LoopyBp, MapAssignment, Marginals, MeanField,
    PairwiseMrf, Schedule, Sweep,
};

use crate::ui::{Ui, check_outputs, write_to};

/// What to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Task {
    /// Marginal of every variable (UAI `MAR`).
    Mar,
    /// Most probable joint assignment (UAI `MAP`).
    Map,
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
    /// The model, UAI `MARKOV` format with factors of one or two variables.
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

/// The result of one run.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Marginals.
    Mar(Marginals),
    /// An assignment.
    Map(MapAssignment),
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

fn check(a: &MrfArgs) -> anyhow::Result<()> {
    if a.max_iterations == Some(0) {
        bail!("--max-iterations 0: must be at least 1");
    }
    if a.algorithm == Algorithm::Gibbs && a.samples == 0 {
        bail!("--samples 0: Gibbs needs at least one sample");
    }
    if !(0.0..1.0).contains(&a.damping) {
        bail!("--damping {}: must be in [0, 1)", a.damping);
    }
    if let Some(t) = a.tolerance
        && !(t.is_finite() && t >= 0.0)
    {
        bail!("--tolerance {t}: must be a non-negative number");
    }
    let ok = match (a.algorithm, a.schedule) {
        (_, None) => true,
        (Algorithm::Lbp, Some(s)) => s != ScheduleArg::Parallel,
        (Algorithm::MeanField, Some(s)) => {
            matches!(s, ScheduleArg::Sequential | ScheduleArg::Parallel)
        }
        _ => false,
    };
    if !ok {
        bail!(
            "--schedule {:?} does not apply to --algorithm {:?}",
            a.schedule,
            a.algorithm
        );
    }
    if a.algorithm == Algorithm::Icm && a.task == Task::Mar {
        bail!("--algorithm icm computes MAP only; use --task map");
    }
    Ok(())
}

fn lbp(a: &MrfArgs) -> LoopyBp {
    let d = LoopyBp::default();
    LoopyBp {
        max_iters: a.max_iterations.unwrap_or(d.max_iters),
        tol: a.tolerance.unwrap_or(d.tol),
        damping: a.damping,
        schedule: match a.schedule {
            Some(ScheduleArg::Sequential) => Schedule::Sequential,
            Some(ScheduleArg::Residual) => Schedule::Residual,
            _ => Schedule::Flooding,
        },
        mode: BpMode::SumProduct,
        ..d
    }
}

fn mean_field(a: &MrfArgs) -> MeanField {
    let d = MeanField::default();
    MeanField {
        max_iters: a.max_iterations.unwrap_or(d.max_iters),
        tol: a.tolerance.unwrap_or(d.tol),
        damping: a.damping,
        sweep: match a.schedule {
            Some(ScheduleArg::Parallel) => Sweep::Parallel,
            _ => Sweep::Sequential,
        },
        ..d
    }
}

/// Runs the requested inference on `mrf` (the tests call this to compare with the
/// library).
///
/// # Errors
/// Bad options; exact inference on a model too large to enumerate; Gibbs parameters.
pub fn infer(a: &MrfArgs, mrf: &PairwiseMrf) -> anyhow::Result<Outcome> {
    check(a)?;
    let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
    let gibbs = Gibbs {
        burn_in: a.burn_in,
        samples: a.samples,
        ..Gibbs::default()
    };
    // contradicting evidence or constraints are an error, never uniform marginals
    mrf.check_feasible().context(match &a.evidence {
        Some(ev) => format!(
            "the model {} with the evidence {}",
            a.model.display(),
            ev.display()
        ),
        None => format!("the model {}", a.model.display()),
    })?;
    let outcome = match (a.task, a.algorithm) {
        (Task::Mar, Algorithm::Lbp) => Outcome::Mar(lbp(a).try_run(mrf)?),
        (Task::Mar, Algorithm::MeanField) => Outcome::Mar(mean_field(a).run(mrf)),
        (Task::Mar, Algorithm::Gibbs) => Outcome::Mar(gibbs.run(mrf, &mut rng)?.marginals),
        (Task::Mar, Algorithm::Exact) => Outcome::Mar(Exact::default().marginals(mrf)?),
        (Task::Map, Algorithm::Lbp) => Outcome::Map(lbp(a).try_map(mrf)?),
        (Task::Map, Algorithm::MeanField) => {
            let m = mean_field(a).run(mrf);
            let states = m.decode();
            Outcome::Map(MapAssignment {
                log_score: mrf.log_score(&states),
                states,
                convergence: m.convergence(),
            })
        }
        (Task::Map, Algorithm::Gibbs) => Outcome::Map(gibbs.run(mrf, &mut rng)?.best),
        (Task::Map, Algorithm::Exact) => Outcome::Map(Exact::default().map(mrf)?),
        (Task::Map, Algorithm::Icm) => {
            let d = Icm::default();
            Outcome::Map(
                Icm {
                    max_iters: a.max_iterations.unwrap_or(d.max_iters),
                }
                .run(mrf),
            )
        }
        (Task::Mar, Algorithm::Icm) => bail!("--algorithm icm computes MAP only"),
    };
    if let Outcome::Map(x) = &outcome
        && x.log_score == f64::NEG_INFINITY
    {
        bail!(
            "{}: the assignment {} found has probability zero (it breaks a zero potential or the evidence); the model may admit none: try --algorithm exact",
            a.model.display(),
            value_name(a.algorithm)
        );
    }
    Ok(outcome)
}

/// The UAI `MAR` text of `m`.
pub fn mar_text(m: &Marginals) -> String {
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

/// The UAI `MAP` text of `a`.
pub fn map_text(a: &MapAssignment) -> String {
    let mut s = format!("MAP\n{}", a.states.len());
    for x in &a.states {
        s.push_str(&format!(" {x}"));
    }
    s.push('\n');
    s
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
    check(a)?;
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
    let (text, conv, score) = match &outcome {
        Outcome::Mar(m) => (mar_text(m), m.convergence(), None),
        Outcome::Map(x) => (map_text(x), x.convergence, Some(x.log_score)),
    };
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
            Outcome::Mar(m) => {
                summary["marginals"] = json!(
                    (0..m.num_nodes())
                        .map(|v| m.node(v).to_vec())
                        .collect::<Vec<_>>()
                );
            }
            Outcome::Map(x) => {
                summary["states"] = json!(x.states);
                summary["log_score"] = json!(x.log_score);
            }
        }
        ui.summary(&summary, "")?;
    }
    Ok(())
}
