//! Results of inference: marginals, MAP assignments, convergence reports.

use serde::{Deserialize, Serialize};

use crate::mrf::PairwiseMrf;
use rayon::prelude::*;

/// Variables per block of [`Marginals::from_unnormalized`]'s parallel normalisation.
const NORMALIZE_BLOCK: usize = 1 << 14;

/// How an iterative algorithm ended. Non-convergence is reported here, never hidden and
/// never an error.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    /// Whether the stopping criterion (residual `< tol`, labels stable, …) was met before
    /// the iteration cap.
    pub converged: bool,
    /// Iterations (sweeps) performed.
    pub iterations: usize,
    /// The last residual: the largest change of a log-message (LBP), of a belief (mean
    /// field), a split-half marginal difference (Gibbs), or the fraction of labels changed
    /// (ICA); `0` for exact methods.
    pub max_residual: f64,
}

impl Convergence {
    /// The report of an exact (non-iterative) method.
    #[must_use]
    pub fn exact() -> Self {
        Self {
            converged: true,
            iterations: 1,
            max_residual: 0.0,
        }
    }

    /// The report before the first sweep: not converged, no iterations, residual `∞`; or,
    /// when `nothing_to_do` (e.g. a model without edges for message passing), converged
    /// after 0 iterations with residual 0.
    pub(crate) fn start(nothing_to_do: bool) -> Self {
        Self {
            converged: nothing_to_do,
            iterations: 0,
            max_residual: if nothing_to_do { 0.0 } else { f64::INFINITY },
        }
    }

    /// Counts one more sweep that ended with `residual`; converged when it is below `tol`.
    pub(crate) fn record(&mut self, residual: f64, tol: f64) {
        self.iterations += 1;
        self.max_residual = residual;
        self.converged = residual < tol;
    }
}

/// `max(a, b)` for operands that are never NaN: [`f64::max`]'s value up to the sign of a
/// zero (which no later operation in the kernels can tell apart), in one instruction
/// instead of five.
#[inline]
pub(crate) fn fmax(a: f64, b: f64) -> f64 {
    if b > a { b } else { a }
}

/// `min(a, b)` for operands that are never NaN (see [`fmax`]).
#[inline]
pub(crate) fn fmin(a: f64, b: f64) -> f64 {
    if b < a { b } else { a }
}

/// Which beliefs an algorithm materialises.
///
/// Edge beliefs cost `Σ_e k_u k_v` floats (twice: log and probability), e.g. 784 MB for
/// 10^6 edges at `k = 7`, so large runs can skip them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Beliefs {
    /// Node marginals only.
    NodesOnly,
    /// Node and edge (pairwise) marginals.
    #[default]
    NodesAndEdges,
}

/// Node (and optionally edge) marginals of a [`PairwiseMrf`], in probability and log space.
///
/// For max-product runs these are the normalised *max-marginals*.
/// Rows are normalised: every node row sums to 1 (up to rounding), every edge table too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Marginals {
    node_off: Vec<usize>,
    node_log: Vec<f64>,
    node_prob: Vec<f64>,
    edge_off: Vec<usize>,
    edge_log: Vec<f64>,
    edge_prob: Vec<f64>,
    convergence: Convergence,
    log_partition: Option<f64>,
}

/// `log Σ exp(x)` with max subtraction; `-∞` for an empty or all `-∞` slice.
#[inline]
#[must_use]
pub fn log_sum_exp(x: &[f64]) -> f64 {
    let mx = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if mx == f64::NEG_INFINITY {
        return mx;
    }
    mx + x.iter().map(|&v| (v - mx).exp()).sum::<f64>().ln()
}

/// Normalises unnormalised log-values in place so that `Σ exp = 1`; all `-∞` becomes
/// uniform.
///
/// Subtracts the maximum first and then the log of the shifted sum, never `max + ln Σ` as
/// one number: at magnitudes like `1e14` (diverging BP on hard constraints) `ulp(max)` is
/// about `0.02`, and rounding `max + ln Σ` would leave the row summing to `1 ± 1 %`.
pub(crate) fn normalize_log(x: &mut [f64]) {
    let mx = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let l = if mx == f64::NEG_INFINITY || mx.is_nan() {
        f64::NAN
    } else {
        x.iter().map(|&v| (v - mx).exp()).sum::<f64>().ln()
    };
    if !l.is_finite() {
        let u = -(x.len() as f64).ln();
        x.iter_mut().for_each(|v| *v = u);
    } else {
        x.iter_mut().for_each(|v| *v = (*v - mx) - l);
    }
}

impl Marginals {
    /// Builds marginals from *unnormalised* log-beliefs laid out as the model's states
    /// (`mrf.state_offsets()`) and edges (`k_u * k_v` per edge, row-major), normalising
    /// each row. `edge_log` may be empty (no edge beliefs).
    pub(crate) fn from_unnormalized(
        mrf: &PairwiseMrf,
        mut node_log: Vec<f64>,
        mut edge_log: Vec<f64>,
        convergence: Convergence,
    ) -> Self {
        let node_off = mrf.state_off.clone();
        let n = mrf.num_nodes();
        // blocks of variables normalised in parallel when there are two or more (each
        // variable on its own: the same bits for any thread count; a smaller model stays
        // on the calling thread, no hand-over to the pool)
        let node_prob = if n > NORMALIZE_BLOCK {
            let bounds: Vec<usize> = (0..n).step_by(NORMALIZE_BLOCK).chain([n]).collect();
            let chunks = crate::bp::split_by(&mut node_log, &bounds, &node_off);
            chunks
                .into_par_iter()
                .zip(bounds.par_windows(2))
                .for_each(|(chunk, w)| {
                    let base = node_off[w[0]];
                    for v in w[0]..w[1] {
                        normalize_log(&mut chunk[node_off[v] - base..node_off[v + 1] - base]);
                    }
                });
            node_log.par_iter().map(|x| x.exp()).collect()
        } else {
            for v in 0..n {
                normalize_log(&mut node_log[node_off[v]..node_off[v + 1]]);
            }
            node_log.iter().map(|x| x.exp()).collect()
        };
        let (edge_off, edge_prob) = if edge_log.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            let off = edge_offsets(mrf);
            for e in 0..mrf.num_edges() {
                normalize_log(&mut edge_log[off[e]..off[e + 1]]);
            }
            let p = edge_log.iter().map(|x| x.exp()).collect();
            (off, p)
        };
        Self {
            node_off,
            node_log,
            node_prob,
            edge_off,
            edge_log,
            edge_prob,
            convergence,
            log_partition: None,
        }
    }

    /// Builds marginals from probabilities (already normalised rows), e.g. Gibbs counts.
    pub(crate) fn from_probabilities(
        mrf: &PairwiseMrf,
        node_prob: Vec<f64>,
        edge_prob: Vec<f64>,
        convergence: Convergence,
    ) -> Self {
        // `ln 0 = -∞` and `ln 1 = 0` without the library call: the same values, and
        // sample frequencies (Gibbs with few samples) are mostly exactly 0 or 1, where
        // libm's `ln(0)` takes its slow error path
        let ln = |&p: &f64| {
            if p == 0.0 {
                f64::NEG_INFINITY
            } else if p == 1.0 {
                0.0
            } else {
                p.ln()
            }
        };
        let node_log = node_prob.iter().map(ln).collect();
        let edge_log = edge_prob.iter().map(ln).collect();
        let edge_off = if edge_prob.is_empty() {
            Vec::new()
        } else {
            edge_offsets(mrf)
        };
        Self {
            node_off: mrf.state_off.clone(),
            node_log,
            node_prob,
            edge_off,
            edge_log,
            edge_prob,
            convergence,
            log_partition: None,
        }
    }

    pub(crate) fn set_log_partition(&mut self, z: f64) {
        self.log_partition = Some(z);
    }

    /// Number of variables.
    #[must_use]
    pub fn num_nodes(&self) -> usize {
        self.node_off.len().saturating_sub(1)
    }

    /// `P(x_v = ·)`, length `k_v`, sums to 1.
    ///
    /// # Panics
    /// If `v >= num_nodes()`.
    #[must_use]
    pub fn node(&self, v: usize) -> &[f64] {
        &self.node_prob[self.node_off[v]..self.node_off[v + 1]]
    }

    /// `log P(x_v = ·)` (may hold `-∞`, e.g. outside an observed state).
    ///
    /// # Panics
    /// If `v >= num_nodes()`.
    #[must_use]
    pub fn node_log(&self, v: usize) -> &[f64] {
        &self.node_log[self.node_off[v]..self.node_off[v + 1]]
    }

    /// All node probabilities, flat in the model's state layout.
    #[must_use]
    pub fn node_all(&self) -> &[f64] {
        &self.node_prob
    }

    /// Whether edge marginals were computed (see [`Beliefs`]).
    #[must_use]
    pub fn has_edges(&self) -> bool {
        !self.edge_off.is_empty()
    }

    /// `P(x_u = a, x_v = b)` of edge `e = (u, v)`, row-major `k_u x k_v`; `None` if edge
    /// beliefs were not computed.
    ///
    /// # Panics
    /// If edge beliefs exist and `e >= m`.
    #[must_use]
    pub fn edge(&self, e: usize) -> Option<&[f64]> {
        self.has_edges()
            .then(|| &self.edge_prob[self.edge_off[e]..self.edge_off[e + 1]])
    }

    /// `log P(x_u = a, x_v = b)` of edge `e`, as [`Marginals::edge`].
    ///
    /// # Panics
    /// If edge beliefs exist and `e >= m`.
    #[must_use]
    pub fn edge_log(&self, e: usize) -> Option<&[f64]> {
        self.has_edges()
            .then(|| &self.edge_log[self.edge_off[e]..self.edge_off[e + 1]])
    }

    /// How the algorithm ended.
    #[must_use]
    pub fn convergence(&self) -> Convergence {
        self.convergence
    }

    /// `log Z`, when the algorithm computes it (only [`crate::Exact`]).
    #[must_use]
    pub fn log_partition(&self) -> Option<f64> {
        self.log_partition
    }

    /// The most probable state of `v` (smallest index on ties).
    ///
    /// # Panics
    /// If `v >= num_nodes()`.
    #[must_use]
    pub fn argmax(&self, v: usize) -> u32 {
        argmax(self.node(v)) as u32
    }

    /// [`Marginals::argmax`] of every variable.
    #[must_use]
    pub fn decode(&self) -> Vec<u32> {
        (0..self.num_nodes()).map(|v| self.argmax(v)).collect()
    }
}

/// Index of the largest value (first on ties); 0 for an empty slice.
#[inline]
pub(crate) fn argmax(x: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        if v > x[best] {
            best = i;
        }
    }
    best
}

/// Offsets of the flat edge-belief layout (`k_u * k_v` per edge).
pub(crate) fn edge_offsets(mrf: &PairwiseMrf) -> Vec<usize> {
    let mut off = Vec::with_capacity(mrf.num_edges() + 1);
    off.push(0);
    for &(u, v) in &mrf.edges {
        let k = mrf.num_states[u as usize] as usize * mrf.num_states[v as usize] as usize;
        off.push(off[off.len() - 1] + k);
    }
    off
}

/// A full assignment (MAP estimate or energy-minimisation result).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapAssignment {
    /// One state per variable (observed variables keep their evidence).
    pub states: Vec<u32>,
    /// Its unnormalised log-probability, [`PairwiseMrf::log_score`].
    pub log_score: f64,
    /// How the algorithm ended.
    pub convergence: Convergence,
}

impl MapAssignment {
    pub(crate) fn new(mrf: &PairwiseMrf, states: Vec<u32>, convergence: Convergence) -> Self {
        let log_score = mrf.log_score(&states);
        Self {
            states,
            log_score,
            convergence,
        }
    }
}
