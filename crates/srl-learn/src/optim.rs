//! The one place this crate calls an optimiser: argmin's L-BFGS with a Moré-Thuente line
//! search over `Vec<f64>`, wrapped so that each learner only supplies one closure that
//! returns the objective and fills the gradient.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{
    CostFunction, Error as ArgminError, Executor, Gradient, KV, State as _, TerminationReason,
    TerminationStatus,
};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use serde::{Deserialize, Serialize};

use crate::error::LearnError;

/// How a gradient-based fit ended: what argmin reports, kept with a fitted model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// L-BFGS iterations run.
    pub iterations: u64,
    /// Objective (negative log posterior, up to a constant) at the returned weights; for
    /// [`crate::LogisticRegression`] divided by the total sample weight, for the Markov
    /// networks by the number of training nodes.
    pub objective: f64,
    /// Euclidean norm of the gradient of that objective at the returned weights.
    pub grad_norm: f64,
    /// Whether argmin stopped on its own tolerance (gradient or cost change) rather than
    /// on the iteration limit.
    pub converged: bool,
    /// argmin's termination status, as text.
    pub termination: String,
    /// Objective evaluations (each with its gradient) the optimiser asked for, the
    /// line searches' included (0 in reports written before this field existed).
    #[serde(default)]
    pub evaluations: u64,
}

/// Objective with a cached gradient: argmin asks for the cost and the gradient at the
/// same point separately; one evaluation computes both.
/// A point with its objective and gradient.
type Evaluated = (Vec<f64>, f64, Vec<f64>);

struct Problem<F> {
    f: F,
    /// Evaluations in total, and since the last L-BFGS iteration ended (reset by
    /// [`IterationEnd`]).
    evals: AtomicU64,
    since_iter: Arc<AtomicU64>,
    /// Most evaluations one L-BFGS iteration (its line search) may take, if capped.
    ls_cap: Option<u64>,
    cache: Mutex<Option<Evaluated>>,
    /// The lowest finite objective seen and its point, returned if argmin fails midway
    /// (e.g. a line search that cannot progress on an approximate gradient).
    best: Mutex<Option<(Vec<f64>, f64)>>,
}

impl<F: Fn(&[f64], &mut [f64]) -> f64> Problem<F> {
    fn cached(&self, x: &[f64]) -> bool {
        self.cache
            .lock()
            .ok()
            .is_some_and(|g| g.as_ref().is_some_and(|(cx, _, _)| cx.as_slice() == x))
    }

    fn eval(&self, x: &[f64]) -> (f64, Vec<f64>) {
        if let Ok(guard) = self.cache.lock()
            && let Some((cx, c, g)) = guard.as_ref()
            && cx.as_slice() == x
        {
            return (*c, g.clone());
        }
        let mut g = vec![0.0; x.len()];
        self.evals.fetch_add(1, Ordering::Relaxed);
        self.since_iter.fetch_add(1, Ordering::Relaxed);
        let c = (self.f)(x, &mut g);
        if c.is_finite()
            && let Ok(mut best) = self.best.lock()
            && best.as_ref().is_none_or(|(_, b)| c < *b)
        {
            *best = Some((x.to_vec(), c));
        }
        if let Ok(mut guard) = self.cache.lock() {
            *guard = Some((x.to_vec(), c, g.clone()));
        }
        (c, g)
    }
}

impl<F: Fn(&[f64], &mut [f64]) -> f64> CostFunction for Problem<F> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Self::Param) -> Result<f64, ArgminError> {
        if let Some(cap) = self.ls_cap
            && self.since_iter.load(Ordering::Relaxed) >= cap
            && !self.cached(p)
        {
            return Err(ArgminError::msg(format!(
                "the line search used its {cap} objective evaluations without meeting the \
                 Wolfe conditions (inexact gradient)"
            )));
        }
        let (c, _) = self.eval(p);
        if c.is_finite() {
            Ok(c)
        } else {
            Err(ArgminError::msg("objective is not finite"))
        }
    }
}

impl<F: Fn(&[f64], &mut [f64]) -> f64> Gradient for Problem<F> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, p: &Self::Param) -> Result<Vec<f64>, ArgminError> {
        Ok(self.eval(p).1)
    }
}

/// Resets the per-iteration evaluation count after every L-BFGS iteration.
struct IterationEnd(Arc<AtomicU64>);

impl<I> Observe<I> for IterationEnd {
    fn observe_iter(&mut self, _state: &I, _kv: &KV) -> Result<(), ArgminError> {
        self.0.store(0, Ordering::Relaxed);
        Ok(())
    }
}

/// Minimises `f` from `x0` with argmin's L-BFGS (memory `memory`, Moré-Thuente line
/// search), stopping when the gradient norm falls below `tol_grad`, the cost change
/// below `tol_cost`, or after `max_iters` iterations.
///
/// `f(x, grad)` returns the objective at `x` and writes its gradient into `grad`.
///
/// # Errors
/// [`LearnError::Optimization`] when argmin fails (e.g. a non-finite objective).
pub(crate) fn minimize<F>(
    f: F,
    x0: Vec<f64>,
    max_iters: u64,
    tol_grad: f64,
    tol_cost: f64,
    memory: usize,
) -> Result<(Vec<f64>, FitReport), LearnError>
where
    F: Fn(&[f64], &mut [f64]) -> f64,
{
    minimize_capped(f, x0, max_iters, tol_grad, tol_cost, memory, None)
}

/// [`minimize`] with at most `ls_cap` objective evaluations per L-BFGS iteration (the
/// safeguard of L-BFGS-B's `maxls`, 20 in scipy): argmin's Moré-Thuente search has no
/// evaluation limit and, on a gradient that disagrees with the objective (approximate
/// inference), narrows its interval to a relative width of 1e-10, 30-40 evaluations. When
/// the cap is reached the run stops at the best iterate so far, reported as not converged
/// with the reason in `termination`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn minimize_capped<F>(
    f: F,
    x0: Vec<f64>,
    max_iters: u64,
    tol_grad: f64,
    tol_cost: f64,
    memory: usize,
    ls_cap: Option<u64>,
) -> Result<(Vec<f64>, FitReport), LearnError>
where
    F: Fn(&[f64], &mut [f64]) -> f64,
{
    let opt_err = |e: ArgminError| LearnError::Optimization {
        reason: e.to_string(),
    };
    let since_iter = Arc::new(AtomicU64::new(0));
    let problem = Problem {
        f,
        evals: AtomicU64::new(0),
        since_iter: Arc::clone(&since_iter),
        ls_cap,
        cache: Mutex::new(None),
        best: Mutex::new(None),
    };
    if x0.is_empty() {
        let mut g = Vec::new();
        let c = (problem.f)(&x0, &mut g);
        return Ok((
            x0,
            FitReport {
                iterations: 0,
                objective: c,
                grad_norm: 0.0,
                converged: true,
                termination: "no parameters".into(),
                evaluations: 1,
            },
        ));
    }
    let linesearch = MoreThuenteLineSearch::new();
    let solver = LBFGS::new(linesearch, memory.max(1))
        .with_tolerance_grad(tol_grad)
        .map_err(opt_err)?
        .with_tolerance_cost(tol_cost)
        .map_err(opt_err)?;
    // The executor consumes the problem; keep a shared handle to the best point seen so a
    // failed run still returns it.
    let problem = std::sync::Arc::new(problem);
    let res = Executor::new(Shared(std::sync::Arc::clone(&problem)), solver)
        .configure(|s| s.param(x0).max_iters(max_iters))
        .add_observer(IterationEnd(since_iter), ObserverMode::Always)
        .run();
    let (x, iterations, termination, converged) = match res {
        Ok(res) => {
            let state = res.state();
            let status = state.get_termination_status();
            let converged = matches!(
                status,
                TerminationStatus::Terminated(TerminationReason::SolverConverged)
            );
            let x = state
                .get_best_param()
                .cloned()
                .ok_or_else(|| LearnError::Optimization {
                    reason: "argmin returned no parameters".into(),
                })?;
            (x, state.get_iter(), status.to_string(), converged)
        }
        Err(e) => {
            let best = problem.best.lock().ok().and_then(|b| b.clone());
            match best {
                // A line search that cannot make progress (typical near the optimum of an
                // objective whose gradient comes from approximate inference): keep the best
                // point seen and report that argmin stopped early.
                Some((x, _)) => {
                    let (_, g) = problem.eval(&x);
                    let norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
                    (x, 0, format!("stopped: {e}"), norm <= tol_grad)
                }
                None => return Err(opt_err(e)),
            }
        }
    };
    let (objective, g) = problem.eval(&x);
    let grad_norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    Ok((
        x,
        FitReport {
            iterations,
            objective,
            grad_norm,
            converged,
            termination,
            evaluations: problem.evals.load(Ordering::Relaxed),
        },
    ))
}

/// A shared handle so the caller keeps access to the problem argmin consumes.
struct Shared<F>(std::sync::Arc<Problem<F>>);

impl<F: Fn(&[f64], &mut [f64]) -> f64> CostFunction for Shared<F> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Self::Param) -> Result<f64, ArgminError> {
        self.0.cost(p)
    }
}

impl<F: Fn(&[f64], &mut [f64]) -> f64> Gradient for Shared<F> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, p: &Self::Param) -> Result<Vec<f64>, ArgminError> {
        self.0.gradient(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimises_a_quadratic() {
        // f(x) = (x0 - 1)^2 + 10 (x1 + 2)^2
        let f = |x: &[f64], g: &mut [f64]| {
            g[0] = 2.0 * (x[0] - 1.0);
            g[1] = 20.0 * (x[1] + 2.0);
            (x[0] - 1.0).powi(2) + 10.0 * (x[1] + 2.0).powi(2)
        };
        let (x, rep) = minimize(f, vec![0.0, 0.0], 100, 1e-10, 0.0, 5).unwrap();
        assert!(
            (x[0] - 1.0).abs() < 1e-6 && (x[1] + 2.0).abs() < 1e-6,
            "{x:?}"
        );
        assert!(rep.converged, "{rep:?}");
        assert!(rep.objective < 1e-10);
        assert!(rep.evaluations >= rep.iterations, "{rep:?}");
    }

    #[test]
    fn caps_the_line_search_on_an_inconsistent_gradient() {
        // The objective is flat along x1 but the "gradient" says it rises: no step can
        // meet the Wolfe conditions.
        let f = |x: &[f64], g: &mut [f64]| {
            g[0] = 2.0 * (x[0] - 1.0);
            g[1] = 1.0;
            (x[0] - 1.0).powi(2)
        };
        let (_, free) = minimize(f, vec![0.0, 0.0], 100, 1e-10, 0.0, 5).unwrap();
        let (x, capped) = minimize_capped(f, vec![0.0, 0.0], 100, 1e-10, 0.0, 5, Some(7)).unwrap();
        assert!(!capped.converged, "{capped:?}");
        assert!(
            capped.termination.contains("7 objective evaluations"),
            "{capped:?}"
        );
        // every iteration: at most 7 evaluations (+1 at the start, +1 for the report)
        assert!(
            capped.evaluations <= 7 * (capped.iterations + 1) + 2,
            "{capped:?}"
        );
        assert!(
            capped.evaluations < free.evaluations,
            "{capped:?} vs {free:?}"
        );
        assert!(x.iter().all(|v| v.is_finite()));
    }
}
