//! Gibbs sampling on a pairwise MRF (chromatic systematic scan).

use rand::Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::InferError;
use crate::marginals::{Beliefs, Convergence, MapAssignment, Marginals, argmax, edge_offsets};
use crate::mrf::PairwiseMrf;

/// Gibbs sampling: marginals from state counts, MAP from the best visited state
/// (slides, "Gibbs sampling": burn-in, then sample and count).
///
/// The scan is *chromatic*: the free variables are greedily coloured (no edge inside a
/// colour class) and each sweep resamples the classes in order; variables of one class are
/// conditionally independent, so they are resampled in parallel with rayon. This is a
/// systematic-scan Gibbs sampler with the same stationary distribution as the
/// one-variable-at-a-time scan. Randomness: one `u64` is drawn from the caller's `rng`
/// per sweep and expanded per variable with SplitMix64, so the output depends only on the
/// `rng` state, never on the number of threads.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `burn_in` | 200 | sweeps discarded | `≥ 0` |
/// | `samples` | 800 | samples counted | `≥ 1` |
/// | `thinning` | 1 | sweeps per counted sample | `≥ 1` |
/// | `beliefs` | `NodesAndEdges` | count pairs too | |
/// | `split_tol` | 0.05 | convergence diagnostic threshold | `≥ 0` |
///
/// Convergence is diagnosed, not guaranteed: `max_residual` is the largest difference
/// between the marginals of the first and second half of the samples, and `converged` is
/// `max_residual <= split_tol`. `iterations` is the number of sweeps.
///
/// # Complexity
/// `O(Σ_{(i,j)} k_j + Σ k_v)` per sweep; memory `O(n + Σ k_v)` (+ edge counts).
///
/// # Examples
/// ```
/// use rand::SeedableRng;
/// use srl_infer::{Exact, Gibbs, MrfParts, PairTable, PairwiseMrf};
/// let mrf = PairwiseMrf::new(MrfParts {
///     num_states: vec![2, 2, 2],
///     unary: vec![0.5, 0.0, 0.0, 0.0, 0.0, 0.3],
///     edges: vec![(0, 1), (1, 2), (0, 2)],
///     edge_tables: vec![0, 0, 0],
///     tables: vec![PairTable::potts(2, 0.4, 0.0)],
///     evidence: vec![],
/// })?;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
/// let g = Gibbs { samples: 20_000, ..Gibbs::default() }.run(&mrf, &mut rng)?;
/// let exact = Exact::default().marginals(&mrf)?;
/// assert!((g.marginals.node(1)[0] - exact.node(1)[0]).abs() < 0.02);
/// # Ok::<(), srl_infer::InferError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gibbs {
    /// Sweeps discarded before counting.
    pub burn_in: usize,
    /// Number of counted samples.
    pub samples: usize,
    /// Sweeps between counted samples.
    pub thinning: usize,
    /// Whether to count edge (pair) states.
    pub beliefs: Beliefs,
    /// Split-half diagnostic threshold for [`Convergence::converged`].
    pub split_tol: f64,
}

impl Default for Gibbs {
    fn default() -> Self {
        Self {
            burn_in: 200,
            samples: 800,
            thinning: 1,
            beliefs: Beliefs::NodesAndEdges,
            split_tol: 0.05,
        }
    }
}

/// Output of [`Gibbs::run`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GibbsRun {
    /// Empirical marginals (state frequencies over the counted samples).
    pub marginals: Marginals,
    /// The highest-scoring state visited at the end of a sweep (including the start).
    pub best: MapAssignment,
}

#[inline]
fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Uniform in `[0, 1)` for variable `v` in the sweep with seed `seed`.
#[inline]
pub(crate) fn uniform(seed: u64, v: usize) -> f64 {
    let x = splitmix64(seed ^ splitmix64(v as u64));
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Greedy colouring of the free variables in index order; returns the classes as
/// `(offsets, nodes)`.
pub(crate) fn colour_classes(mrf: &PairwiseMrf) -> (Vec<usize>, Vec<u32>) {
    let n = mrf.num_nodes();
    let mut colour = vec![u32::MAX; n];
    let mut used: Vec<u32> = Vec::new();
    let mut num_colours = 0u32;
    for v in 0..n {
        if mrf.evidence[v].is_some() {
            continue;
        }
        used.clear();
        for s in mrf.in_off[v]..mrf.in_off[v + 1] {
            let c = colour[mrf.in_src[s] as usize];
            if c != u32::MAX {
                used.push(c);
            }
        }
        used.sort_unstable();
        used.dedup();
        let mut c = 0u32;
        for &u in &used {
            if u == c {
                c += 1;
            } else {
                break;
            }
        }
        colour[v] = c;
        num_colours = num_colours.max(c + 1);
    }
    let mut off = vec![0usize; num_colours as usize + 1];
    for &c in &colour {
        if c != u32::MAX {
            off[c as usize + 1] += 1;
        }
    }
    for c in 0..num_colours as usize {
        off[c + 1] += off[c];
    }
    let mut cursor = off.clone();
    let mut nodes = vec![0u32; off[num_colours as usize]];
    for (v, &c) in colour.iter().enumerate() {
        if c != u32::MAX {
            nodes[cursor[c as usize]] = v as u32;
            cursor[c as usize] += 1;
        }
    }
    (off, nodes)
}

/// Local log-conditional of `v` given the others: `θ_v(x) + Σ_j θ_vj(x, x_j)` into `out`.
#[inline]
pub(crate) fn local_scores(mrf: &PairwiseMrf, state: &[u32], v: usize, out: &mut [f64]) {
    let kv = out.len();
    out.copy_from_slice(&mrf.eff_unary[mrf.state_off[v]..mrf.state_off[v + 1]]);
    for s in mrf.in_off[v]..mrf.in_off[v + 1] {
        let a = state[mrf.in_src[s] as usize] as usize;
        let ko = mrf.kernels.off[mrf.in_kernel[s] as usize] + a * kv;
        for (o, &t) in out.iter_mut().zip(&mrf.kernels.log[ko..ko + kv]) {
            *o += t;
        }
    }
}

/// Samples a state index from log-scores `s` with the uniform `u` (`p` is scratch).
#[inline]
fn sample_index(s: &[f64], p: &mut [f64], u: f64) -> usize {
    let mx = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if mx == f64::NEG_INFINITY {
        // Every state excluded by zero potentials (the chain is in a state of probability
        // zero; extreme models only): draw uniformly so the chain can leave it.
        return ((u * s.len() as f64) as usize).min(s.len().saturating_sub(1));
    }
    let mut total = 0.0;
    for (q, &x) in p.iter_mut().zip(s) {
        *q = (x - mx).exp();
        total += *q;
    }
    let mut t = u * total;
    let mut last = 0;
    for (x, &q) in p.iter().enumerate() {
        if q > 0.0 {
            last = x;
            if t < q {
                return x;
            }
            t -= q;
        }
    }
    last
}

impl Gibbs {
    /// Runs `burn_in + samples · thinning` sweeps.
    ///
    /// With zero potentials (hard constraints) the chain starts at the unary argmax, which
    /// may have probability zero; while it does, a variable whose every state is excluded
    /// draws uniformly, and draws of probability zero are not collected (the marginals
    /// average the collected ones). Once the chain is in a state of positive probability
    /// it stays in such states.
    ///
    /// # Errors
    /// [`InferError::InvalidParameter`] if `samples == 0` or `thinning == 0`;
    /// [`InferError::NoFeasibleSample`] if no collected draw had positive probability.
    pub fn run<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> Result<GibbsRun, InferError> {
        if self.samples == 0 {
            return Err(InferError::InvalidParameter {
                name: "samples",
                value: "0".into(),
                reason: "must be at least 1",
            });
        }
        if self.thinning == 0 {
            return Err(InferError::InvalidParameter {
                name: "thinning",
                value: "0".into(),
                reason: "must be at least 1",
            });
        }
        let n = mrf.num_nodes();
        let (coff, cnodes) = colour_classes(mrf);
        let mut state: Vec<u32> = (0..n)
            .map(|v| argmax(&mrf.eff_unary[mrf.state_off[v]..mrf.state_off[v + 1]]) as u32)
            .collect();
        let mut score = mrf.log_score(&state);
        let mut best = state.clone();
        let mut best_score = score;
        let with_edges = self.beliefs == Beliefs::NodesAndEdges;
        let eoff = if with_edges {
            edge_offsets(mrf)
        } else {
            vec![0]
        };
        let mut counts = vec![0u32; mrf.eff_unary.len()];
        let mut first_half = vec![0u32; mrf.eff_unary.len()];
        let half = self.samples / 2;
        let mut edge_counts = vec![0u32; eoff[eoff.len() - 1]];
        let mut upd: Vec<(u32, f64)> = vec![(0, 0.0); cnodes.len()];
        let k = mrf.max_states.max(1);
        let total = self.burn_in + self.samples * self.thinning;
        let mut collected = 0usize;
        for sweep in 1..=total {
            let seed = rng.next_u64();
            for c in 0..coff.len() - 1 {
                let class = &cnodes[coff[c]..coff[c + 1]];
                let buf = &mut upd[coff[c]..coff[c + 1]];
                let cur = &state;
                buf.par_iter_mut()
                    .zip(class.par_iter())
                    .with_min_len(512)
                    .for_each_init(
                        || vec![0.0; 2 * k],
                        |scr, (slot, &v)| {
                            let v = v as usize;
                            let kv = mrf.num_states[v] as usize;
                            let (s, p) = scr.split_at_mut(k);
                            let s = &mut s[..kv];
                            local_scores(mrf, cur, v, s);
                            let x = sample_index(s, &mut p[..kv], uniform(seed, v));
                            *slot = (x as u32, s[x] - s[cur[v] as usize]);
                        },
                    );
                for (&v, &(x, d)) in class.iter().zip(buf.iter()) {
                    state[v as usize] = x;
                    score += d;
                }
            }
            if mrf.extreme {
                // Deltas may be ∞ − ∞ with zero potentials: rescore (O(n + m), as a sweep).
                score = mrf.log_score(&state);
            }
            if score > best_score {
                best_score = score;
                best.copy_from_slice(&state);
            }
            let feasible = score > f64::NEG_INFINITY || !mrf.extreme;
            if feasible
                && sweep > self.burn_in
                && (sweep - self.burn_in).is_multiple_of(self.thinning)
            {
                for v in 0..n {
                    counts[mrf.state_off[v] + state[v] as usize] += 1;
                }
                if with_edges {
                    for (e, &(u, v)) in mrf.edges.iter().enumerate() {
                        let kv = mrf.num_states[v as usize] as usize;
                        edge_counts[eoff[e]
                            + state[u as usize] as usize * kv
                            + state[v as usize] as usize] += 1;
                    }
                }
                collected += 1;
                if collected == half {
                    first_half.copy_from_slice(&counts);
                }
            }
        }
        if collected == 0 {
            return Err(InferError::NoFeasibleSample { sweeps: total });
        }
        // `collected == samples` unless zero potentials made some draws infeasible.
        let ns = collected as f64;
        let node: Vec<f64> = counts.iter().map(|&c| f64::from(c) / ns).collect();
        let edge: Vec<f64> = edge_counts.iter().map(|&c| f64::from(c) / ns).collect();
        let max_residual = if half == 0 || collected <= half {
            f64::INFINITY
        } else {
            let (h1, h2) = (half as f64, collected.saturating_sub(half) as f64);
            counts
                .iter()
                .zip(&first_half)
                .map(|(&all, &first)| (f64::from(first) / h1 - f64::from(all - first) / h2).abs())
                .fold(0.0, f64::max)
        };
        let conv = Convergence {
            converged: max_residual <= self.split_tol,
            iterations: total,
            max_residual,
        };
        Ok(GibbsRun {
            marginals: Marginals::from_probabilities(mrf, node, edge, conv),
            best: MapAssignment::new(mrf, best, conv),
        })
    }
}
