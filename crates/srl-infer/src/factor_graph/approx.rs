//! Mean field and Gibbs sampling on a [`FactorGraph`] of any arity (issue 28): the
//! general counterparts of the pairwise [`crate::MeanField`] and [`crate::Gibbs`].

use rand::{RngExt as _, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::{FactorGraph, FactorMarginals};
use crate::error::InferError;
use crate::marginals::Convergence;

/// Each variable's factors with the variable's stride in the factor's table (UAI layout,
/// last scope variable fastest).
struct Adjacency {
    /// `(factor, stride of the variable in that factor's table)` per variable.
    of: Vec<Vec<(usize, usize)>>,
    /// Strides of every scope position, per factor.
    strides: Vec<Vec<usize>>,
}

fn adjacency(g: &FactorGraph) -> Adjacency {
    let k = g.num_states();
    let mut of = vec![Vec::new(); g.num_vars()];
    let mut strides = Vec::with_capacity(g.factors().len());
    for (f, scope) in g.factors().iter().enumerate() {
        let mut st = vec![0usize; scope.vars.len()];
        let mut s = 1usize;
        for (j, &v) in scope.vars.iter().enumerate().rev() {
            st[j] = s;
            s *= k[v as usize];
        }
        for (j, &v) in scope.vars.iter().enumerate() {
            of[v as usize].push((f, st[j]));
        }
        strides.push(st);
    }
    Adjacency { of, strides }
}

/// Log-prior of state `s` of `v`: 0, or `-∞` when the evidence clamps `v` elsewhere.
fn prior(g: &FactorGraph, v: usize, s: usize) -> f64 {
    match g.evidence()[v] {
        Some(x) if x as usize != s => f64::NEG_INFINITY,
        _ => 0.0,
    }
}

/// Normalises log-weights into probabilities in place (`None` when all are `-∞`).
fn softmax(logits: &mut [f64]) -> Option<()> {
    let m = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return None;
    }
    let mut z = 0.0;
    for l in logits.iter_mut() {
        *l = (*l - m).exp();
        z += *l;
    }
    for l in logits.iter_mut() {
        *l /= z;
    }
    Some(())
}

/// Naive mean field on a factor graph: a fully factorised `q(x) = Π_v q_v(x_v)` updated
/// variable by variable, `q_v(s) ∝ exp(Σ_{f ∋ v} E_{q}[θ_f(x) | x_v = s])` with `θ` the
/// natural-log potentials (Koller & Friedman 2009, §11.5.1), in index order (each update
/// sees the latest beliefs), optionally damped. A configuration of positive `q`-weight
/// with a zero potential (`θ = -∞`) excludes the state, so hard zeros stay exact. The
/// residual of a sweep is the largest change of a belief; converged below `tolerance`.
/// Evidence clamps a variable to a point mass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FactorMeanField {
    /// Sweep cap (default 1000, at least 1).
    pub max_iters: usize,
    /// Convergence tolerance on the largest belief change (default 1e-9, positive).
    pub tolerance: f64,
    /// Damping λ in `[0, 1)`: `q ← (1 − λ)·q_new + λ·q_old` (default 0).
    pub damping: f64,
}

impl Default for FactorMeanField {
    fn default() -> Self {
        Self {
            max_iters: 1000,
            tolerance: 1e-9,
            damping: 0.0,
        }
    }
}

fn check_common(max_iters: usize, tolerance: f64, damping: f64) -> Result<(), InferError> {
    if max_iters == 0 {
        return Err(InferError::InvalidParameter {
            name: "max_iterations",
            value: "0".into(),
            reason: "must be at least 1",
        });
    }
    if !(tolerance.is_finite() && tolerance > 0.0) {
        return Err(InferError::InvalidParameter {
            name: "tolerance",
            value: tolerance.to_string(),
            reason: "must be positive and finite",
        });
    }
    if !(0.0..1.0).contains(&damping) {
        return Err(InferError::InvalidParameter {
            name: "damping",
            value: damping.to_string(),
            reason: "must be in [0, 1)",
        });
    }
    Ok(())
}

impl FactorMeanField {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] naming `max_iterations`, `tolerance` or `damping`.
    pub fn validate(&self) -> Result<(), InferError> {
        check_common(self.max_iters, self.tolerance, self.damping)
    }

    /// The mean-field beliefs of every variable.
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] for bad settings; [`InferError::ZeroProbability`]
    /// when an update leaves a variable without a possible state.
    pub fn marginals(&self, g: &FactorGraph) -> Result<FactorMarginals, InferError> {
        self.validate()?;
        let k = g.num_states();
        let adj = adjacency(g);
        let mut q: Vec<Vec<f64>> = (0..g.num_vars())
            .map(|v| {
                let mut b: Vec<f64> = (0..k[v]).map(|s| prior(g, v, s)).collect();
                softmax(&mut b)
                    .map(|()| b)
                    .ok_or(InferError::ZeroProbability {
                        node: Some(v),
                        cause: "the evidence leaves no state",
                    })
            })
            .collect::<Result<_, _>>()?;
        let mut conv = Convergence::start(g.factors().is_empty());
        let mut logits = Vec::new();
        let mut acc = Vec::new();
        while !conv.converged && conv.iterations < self.max_iters {
            let mut residual = 0.0f64;
            for v in 0..g.num_vars() {
                if g.evidence()[v].is_some() {
                    continue;
                }
                logits.clear();
                logits.extend((0..k[v]).map(|s| prior(g, v, s)));
                for &(f, stride_v) in &adj.of[v] {
                    let scope = &g.factors()[f].vars;
                    let table = g.factor_table(f);
                    let strides = &adj.strides[f];
                    acc.clear();
                    acc.resize(k[v], 0.0);
                    // E_q[θ_f | x_v = s]: over the table, weight Π_{u ≠ v} q_u(x_u)
                    for (i, &t) in table.iter().enumerate() {
                        let mut w = 1.0;
                        let mut s_v = 0;
                        for (j, &u) in scope.iter().enumerate() {
                            let x = (i / strides[j]) % k[u as usize];
                            if u as usize == v {
                                s_v = x;
                            } else {
                                w *= q[u as usize][x];
                            }
                        }
                        debug_assert_eq!((i / stride_v) % k[v], s_v);
                        if w > 0.0 {
                            if t == f64::NEG_INFINITY {
                                acc[s_v] = f64::NEG_INFINITY;
                            } else {
                                acc[s_v] += w * t;
                            }
                        }
                    }
                    for (l, a) in logits.iter_mut().zip(&acc) {
                        *l += a;
                    }
                }
                if softmax(&mut logits).is_none() {
                    return Err(InferError::ZeroProbability {
                        node: Some(v),
                        cause: "mean field finds every state impossible (zero potentials)",
                    });
                }
                for (s, &n) in logits.iter().enumerate() {
                    let old = q[v][s];
                    let new = (1.0 - self.damping) * n + self.damping * old;
                    residual = residual.max((new - old).abs());
                    q[v][s] = new;
                }
            }
            conv.record(residual, self.tolerance);
        }
        Ok(FactorMarginals::new(q, conv))
    }
}

/// Gibbs sampling on a factor graph, **blocked over a colouring**: variables that share no
/// factor get the same colour (greedy, in index order), and all variables of a colour
/// are resampled at once from their full conditionals (in parallel; each variable draws
/// from its own ChaCha8 stream `seed`/`v`, so the samples do not depend on the thread
/// count). Marginals are state frequencies over `samples` sweeps after `burn_in`. The
/// convergence report is a split-half diagnostic: the largest difference between the
/// frequencies of the first and the second half of the samples, converged below
/// `split_tol`. Evidence clamps a variable. Starts from one greedy pass from state 0
/// (each variable takes its most probable state given the others) so that a model with
/// hard zeros starts from a possible state when one is found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FactorGibbs {
    /// Burn-in sweeps (default 200).
    pub burn_in: usize,
    /// Counted sweeps (default 800, at least 2).
    pub samples: usize,
    /// Seed of the per-variable streams (default 1).
    pub seed: u64,
    /// Split-half tolerance of the convergence report (default 0.05, in `(0, 1]`).
    pub split_tol: f64,
}

impl Default for FactorGibbs {
    fn default() -> Self {
        Self {
            burn_in: 200,
            samples: 800,
            seed: 1,
            split_tol: 0.05,
        }
    }
}

impl FactorGibbs {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] naming `samples` (below 2) or `split_tol`.
    pub fn validate(&self) -> Result<(), InferError> {
        if self.samples < 2 {
            return Err(InferError::InvalidParameter {
                name: "samples",
                value: self.samples.to_string(),
                reason: "must be at least 2 (the split-half diagnostic)",
            });
        }
        if !(self.split_tol > 0.0 && self.split_tol <= 1.0) {
            return Err(InferError::InvalidParameter {
                name: "split_tol",
                value: self.split_tol.to_string(),
                reason: "must be in (0, 1]",
            });
        }
        Ok(())
    }

    /// State frequencies of every variable.
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] for bad settings; [`InferError::ZeroProbability`]
    /// when the chain sits in a state of probability zero (a variable's conditional is
    /// zero for every state): exact inference or BP then decide whether any state is
    /// possible.
    pub fn marginals(&self, g: &FactorGraph) -> Result<FactorMarginals, InferError> {
        self.validate()?;
        // the sweeps on a pool thread (`on_pool`): no hand-over per colour class
        crate::on_pool(|| self.run_chain(g))
    }

    /// [`Self::marginals`] after validation.
    fn run_chain(&self, g: &FactorGraph) -> Result<FactorMarginals, InferError> {
        let n = g.num_vars();
        let k = g.num_states();
        let adj = adjacency(g);
        // greedy colouring of the interaction graph
        let mut colour = vec![usize::MAX; n];
        let mut used: Vec<usize> = Vec::new();
        let mut ncol = 0;
        for v in 0..n {
            used.clear();
            for &(f, _) in &adj.of[v] {
                for &u in &g.factors()[f].vars {
                    let c = colour[u as usize];
                    if u as usize != v && c != usize::MAX {
                        used.push(c);
                    }
                }
            }
            used.sort_unstable();
            used.dedup();
            let c = (0..).find(|c| used.binary_search(c).is_err()).unwrap_or(0);
            colour[v] = c;
            ncol = ncol.max(c + 1);
        }
        let mut by_colour: Vec<Vec<usize>> = vec![Vec::new(); ncol];
        for v in 0..n {
            if g.evidence()[v].is_none() {
                by_colour[colour[v]].push(v);
            }
        }
        // the conditional log-weights of v's states given x
        let conditional = |v: usize, x: &[usize], out: &mut Vec<f64>| {
            out.clear();
            out.extend((0..k[v]).map(|s| prior(g, v, s)));
            for &(f, stride_v) in &adj.of[v] {
                let scope = &g.factors()[f].vars;
                let strides = &adj.strides[f];
                let mut base = 0;
                for (j, &u) in scope.iter().enumerate() {
                    if u as usize != v {
                        base += x[u as usize] * strides[j];
                    }
                }
                let table = g.factor_table(f);
                for (s, o) in out.iter_mut().enumerate() {
                    *o += table[base + s * stride_v];
                }
            }
        };
        let mut x: Vec<usize> = (0..n)
            .map(|v| g.evidence()[v].map_or(0, |s| s as usize))
            .collect();
        let mut buf = Vec::new();
        for v in 0..n {
            if g.evidence()[v].is_some() {
                continue;
            }
            conditional(v, &x, &mut buf);
            let mut best = x[v];
            for (s, &l) in buf.iter().enumerate() {
                if l > buf[best] {
                    best = s;
                }
            }
            x[v] = best;
        }
        let mut rngs: Vec<ChaCha8Rng> = (0..n)
            .map(|v| {
                let mut r = ChaCha8Rng::seed_from_u64(self.seed);
                r.set_stream(v as u64);
                r
            })
            .collect();
        let half = self.samples / 2;
        let zeros = || -> Vec<Vec<u64>> { k.iter().map(|&kv| vec![0u64; kv]).collect() };
        let mut counts = [zeros(), zeros()];
        for sweep in 0..self.burn_in + self.samples {
            for vars in &by_colour {
                // resample the colour at once: each variable reads only other colours
                let fresh: Vec<Result<usize, usize>> = vars
                    .par_iter()
                    .map(|&v| {
                        let mut w = Vec::with_capacity(k[v]);
                        conditional(v, &x, &mut w);
                        let mut r = rngs[v].clone();
                        let pick = sample(&mut w, &mut r);
                        (pick, r)
                    })
                    .collect::<Vec<_>>()
                    .into_iter()
                    .zip(vars)
                    .map(|((pick, r), &v)| {
                        rngs[v] = r;
                        pick.ok_or(v)
                    })
                    .collect();
                for (res, &v) in fresh.into_iter().zip(vars) {
                    match res {
                        Ok(s) => x[v] = s,
                        Err(v) => {
                            return Err(InferError::ZeroProbability {
                                node: Some(v),
                                cause: "Gibbs sits in a state of probability zero (every \
                                        state of this variable is impossible given the \
                                        others)",
                            });
                        }
                    }
                }
            }
            if sweep >= self.burn_in {
                let h = usize::from(sweep - self.burn_in >= half);
                for v in 0..n {
                    counts[h][v][x[v]] += 1;
                }
            }
        }
        let (n1, n2) = (half as f64, (self.samples - half) as f64);
        let mut split = 0.0f64;
        let probs: Vec<Vec<f64>> = (0..n)
            .map(|v| {
                (0..k[v])
                    .map(|s| {
                        let (a, b) = (counts[0][v][s] as f64, counts[1][v][s] as f64);
                        split = split.max((a / n1 - b / n2).abs());
                        (a + b) / self.samples as f64
                    })
                    .collect()
            })
            .collect();
        let conv = Convergence {
            converged: split < self.split_tol,
            iterations: self.burn_in + self.samples,
            max_residual: split,
        };
        Ok(FactorMarginals::new(probs, conv))
    }
}

/// Draws a state from log-weights `w` (turned into probabilities in place); `None` when
/// every weight is `-∞`.
fn sample(w: &mut [f64], rng: &mut ChaCha8Rng) -> Option<usize> {
    softmax(w)?;
    let u: f64 = rng.random();
    let mut c = 0.0;
    for (s, &p) in w.iter().enumerate() {
        c += p;
        if u < c {
            return Some(s);
        }
    }
    w.iter().rposition(|&p| p > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::factor_graph::VariableElimination;

    /// A loopy model of 3-variable factors over 6 variables (binary and ternary) with a
    /// hard zero, from a fixed pseudo-random table.
    fn model() -> FactorGraph {
        let mut g = FactorGraph::new(vec![2, 3, 2, 2, 3, 2]).expect("vars");
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as f64 / (1u64 << 31) as f64) - 0.5
        };
        for scope in [[0u32, 1, 2], [2, 3, 4], [4, 5, 0], [1, 3, 5]] {
            let size: usize = scope.iter().map(|&v| g.num_states()[v as usize]).product();
            let mut t: Vec<f64> = (0..size).map(|_| next()).collect();
            if scope[0] == 2 {
                t[0] = f64::NEG_INFINITY;
            }
            g.add_factor(&scope.map(|v| v as usize), &t)
                .expect("factor");
        }
        g
    }

    #[test]
    fn mean_field_is_exact_without_interactions_and_a_fixed_point_otherwise() {
        // unary factors only: mean field = exact
        let mut g = FactorGraph::new(vec![3, 2]).expect("vars");
        g.add_factor(&[0], &[0.1, -0.4, 1.0]).expect("f");
        g.add_factor(&[1], &[f64::NEG_INFINITY, 0.0]).expect("f");
        let exact = VariableElimination::default().marginals(&g).expect("ve");
        let mf = FactorMeanField::default().marginals(&g).expect("mf");
        for v in 0..2 {
            for (a, b) in mf.node(v).iter().zip(exact.node(v)) {
                assert!((a - b).abs() < 1e-12);
            }
        }
        // loopy model: converges to a fixed point of distributions
        let g = model();
        let m = FactorMeanField::default().marginals(&g).expect("mf");
        assert!(m.convergence().converged, "{:?}", m.convergence());
        for v in 0..g.num_vars() {
            assert!((m.node(v).iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        // evidence is a point mass
        let g = model()
            .with_evidence(vec![None, Some(2), None, None, None, None])
            .expect("e");
        let m = FactorMeanField::default().marginals(&g).expect("mf");
        assert_eq!(m.node(1), &[0.0, 0.0, 1.0]);
        assert!(
            FactorMeanField {
                max_iters: 0,
                ..Default::default()
            }
            .marginals(&g)
            .is_err()
        );
    }

    #[test]
    fn gibbs_approaches_exact_and_is_the_same_for_any_thread_count() {
        let g = model();
        let exact = VariableElimination::default().marginals(&g).expect("ve");
        let gibbs = FactorGibbs {
            burn_in: 500,
            samples: 40_000,
            seed: 3,
            ..FactorGibbs::default()
        };
        let m = gibbs.marginals(&g).expect("gibbs");
        for v in 0..g.num_vars() {
            for (a, b) in m.node(v).iter().zip(exact.node(v)) {
                assert!((a - b).abs() < 0.02, "v{v}: {a} vs {b}");
            }
        }
        assert!(m.convergence().converged);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("pool")
            .install(|| gibbs.marginals(&g).expect("gibbs"));
        for v in 0..g.num_vars() {
            assert_eq!(one.node(v), m.node(v));
        }
        // the hard zero is respected: x2 = x3 = x4 = 0 never appears jointly, and
        // a state with zero exact probability gets no sample
        for v in 0..g.num_vars() {
            for (a, b) in m.node(v).iter().zip(exact.node(v)) {
                if *b == 0.0 {
                    assert_eq!(*a, 0.0);
                }
            }
        }
        assert!(
            FactorGibbs {
                samples: 1,
                ..FactorGibbs::default()
            }
            .marginals(&g)
            .is_err()
        );
    }
}
