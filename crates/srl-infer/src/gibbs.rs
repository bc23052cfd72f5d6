//! Gibbs sampling on a pairwise MRF (chromatic systematic scan).

use rand::Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::InferError;
use crate::marginals::{
    Beliefs, Convergence, MapAssignment, Marginals, argmax, edge_offsets, fmax,
};
use crate::mrf::PairwiseMrf;
use crate::vmath;

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
/// Every weight `exp(s − max)` of a conditional is computed by [`crate::vmath::exp`]
/// (within 1 ulp of the C library's; exactly 1 at the largest score; exactly 0 for
/// `s − max < −708`, [`crate::vmath::EXP_FLUSH_BELOW`], so a state that much less likely
/// than the best, probability below `e^-708 ≈ 3·10^-308`, is never drawn where the C
/// library's subnormal weight would almost never draw it), scalar in the general path and
/// srl-dist, as vectorised batches in the fast paths, with the same bits.
///
/// With two states everywhere on an ordinary model ([`PairwiseMrf::is_ordinary`]) a
/// faster path keeps the states in bytes (`n` bytes, so the scattered reads of the
/// neighbours' states mostly hit the cache), reads each slot's kernel row from a 2 × 2
/// copy (one shared copy when every table is the same), gathers a batch of conditionals
/// before sampling it, and computes one `exp` per update instead of two (the larger
/// weight is `exp(0) = 1`), a batch at a time. It performs the same additions in the same
/// order and draws with the same uniforms, so for a given generator state its samples,
/// counts, best state and diagnostics equal the general path's bit for bit
/// (unit-tested), and srl-dist's distributed sampler still equals it. With `K` states
/// everywhere (`3 ≤ K ≤ 8`) on an ordinary model a path specialised to `K` keeps the
/// states in bytes, reads unary and kernel rows as arrays of `K`, gathers a batch's
/// scores and then their weights' `exp`s as one batch before sampling it; its output
/// too equals the general path's bit for bit (unit-tested). Both fast paths read a colour
/// class's unary rows and slots from a copy laid out in class order (sequential streams
/// instead of reads at the class's scattered variable indices; `8·K + 8` bytes per
/// variable and 4-8 per slot more memory during the run).
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
    uniform_hashed(seed, variable_hash(v))
}

/// The part of [`uniform`] that depends on the variable alone (the same in every sweep,
/// so a run may compute it once per variable).
#[inline]
fn variable_hash(v: usize) -> u64 {
    splitmix64(v as u64)
}

/// [`uniform`] from the seed and [`variable_hash`]`(v)`: the same value.
#[inline]
fn uniform_hashed(seed: u64, hash: u64) -> f64 {
    let x = splitmix64(seed ^ hash);
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Greedy colouring of the free variables in index order; returns the classes as
/// `(offsets, nodes)`.
pub(crate) fn colour_classes(mrf: &PairwiseMrf) -> (Vec<usize>, Vec<u32>) {
    let (colour, num_colours) =
        crate::kernel::greedy_colours(&mrf.in_off, &mrf.in_src, |v| mrf.evidence[v].is_some());
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

/// Size of the largest colour class.
fn largest_class(coff: &[usize]) -> usize {
    coff.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
}

/// The free variables' unary rows and slots copied into colour-class order, so that a
/// class is resampled from three sequential streams (unary rows, slot offsets, slots)
/// instead of reading `eff_unary`, `in_off` and `in_src` at the scattered indices of its
/// variables; only the neighbours' states (bits or bytes, in cache) are read at scattered
/// places. Each colour class is cut into pieces of [`CHUNK`] variables from its start
/// (the pieces the sweeps hand to the rayon pool), and inside a piece the positions hold
/// its variables by increasing degree ([`crate::bp::by_degree`]; ties in class order): the sweeps'
/// score loops then run through many variables of one degree in a row, so the processor
/// predicts where each variable's loop over its slots ends (in class order a
/// Barabási–Albert graph's degrees change at nearly every variable, and each
/// mispredicted exit costs the loads in flight; 10-13 % of a two-state sweep at 10^6).
/// `local[p]` says which variable of its piece position `p` holds, so results are
/// written back in class order and the draws, scores and sums are the same to the bit.
/// The slots of a position are the model's in the model's order.
///
/// Memory: `8·K + 18` bytes per free variable and 4 bytes per slot of a free variable (8
/// with `kernel`), built in one pass over the classes (at 10^6 two-state variables of a
/// Barabási–Albert graph, 4·10^6 slots: 50 MB).
struct ClassLayout<const K: usize> {
    /// `eff_unary` row of the variable at each position.
    unary: Vec<[f64; K]>,
    /// Slot offsets into `src` / `kernel` per position (`cnodes.len() + 1` entries).
    off: Vec<usize>,
    /// Source (neighbour) of each slot.
    src: Vec<u32>,
    /// Kernel of each slot; empty when the caller needs none (one shared 2 × 2 table).
    kernel: Vec<u32>,
    /// Index, within its piece of [`CHUNK`] variables of its class, of the variable at
    /// each position (`cnodes[class start + piece · CHUNK + local[p]]`).
    local: Vec<u16>,
    /// [`variable_hash`] of the variable at each position.
    hash: Vec<u64>,
}

impl<const K: usize> ClassLayout<K> {
    /// The layout of the colour classes `coff`, `cnodes` of [`colour_classes`] (requires
    /// `K` states everywhere); `with_kernels` copies the slots' kernel indices too.
    fn new(mrf: &PairwiseMrf, coff: &[usize], cnodes: &[u32], with_kernels: bool) -> Self {
        debug_assert_eq!(mrf.uniform_k, K);
        let (rows, _) = mrf.eff_unary().as_chunks::<K>();
        let deg = |v: u32| mrf.in_off[v as usize + 1] - mrf.in_off[v as usize];
        let slots: usize = cnodes.iter().map(|&v| deg(v)).sum();
        let mut unary = Vec::with_capacity(cnodes.len());
        let mut off = Vec::with_capacity(cnodes.len() + 1);
        let mut src = Vec::with_capacity(slots);
        let mut kernel = Vec::with_capacity(if with_kernels { slots } else { 0 });
        let mut local = Vec::with_capacity(cnodes.len());
        off.push(0);
        let mut idx: Vec<u16> = Vec::with_capacity(CHUNK);
        let mut order = Vec::with_capacity(cnodes.len());
        for w in coff.windows(2) {
            for b in (w[0]..w[1]).step_by(CHUNK) {
                let batch = &cnodes[b..(b + CHUNK).min(w[1])];
                idx.clear();
                idx.resize(batch.len(), 0);
                crate::bp::by_degree(batch.len(), |i| deg(batch[i]), |r, i| idx[r] = i as u16);
                local.extend_from_slice(&idx);
                order.extend(idx.iter().map(|&i| cnodes[b + usize::from(i)]));
            }
        }
        let hash = order.iter().map(|&v| variable_hash(v as usize)).collect();
        for v in order {
            let v = v as usize;
            let (lo, hi) = (mrf.in_off[v], mrf.in_off[v + 1]);
            unary.push(rows[v]);
            src.extend_from_slice(&mrf.in_src[lo..hi]);
            if with_kernels {
                kernel.extend_from_slice(&mrf.in_kernel[lo..hi]);
            }
            off.push(src.len());
        }
        Self {
            unary,
            off,
            src,
            kernel,
            local,
            hash,
        }
    }
}

/// Local log-conditional of `v` given the others: `θ_v(x) + Σ_j θ_vj(x, x_j)` into `out`
/// ([`crate::kernel::gibbs_scores`]).
#[inline]
pub(crate) fn local_scores(mrf: &PairwiseMrf, state: &[u32], v: usize, out: &mut [f64]) {
    let slots = mrf.in_off[v]..mrf.in_off[v + 1];
    crate::kernel::gibbs_scores(
        &mrf.eff_unary()[mrf.state_off[v]..mrf.state_off[v + 1]],
        &mrf.kernels.view(),
        slots.map(|s| (state[mrf.in_src[s] as usize], mrf.in_kernel[s])),
        out,
    );
}

/// The state whose weight interval holds `t` when the positive weights `p` are laid end to
/// end in state order (`0 ≤ t <` their sum): the last state with positive weight when
/// rounding puts `t` at or past the end.
#[inline]
fn inverse_cdf(p: &[f64], mut t: f64) -> usize {
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

/// Samples a state index from log-scores `s` with the uniform `u` (`p` is scratch).
#[inline]
pub(crate) fn sample_index(s: &[f64], p: &mut [f64], u: f64) -> usize {
    let mx = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if mx == f64::NEG_INFINITY {
        // Every state excluded by zero potentials (the chain is in a state of probability
        // zero; extreme models only): draw uniformly so the chain can leave it.
        return ((u * s.len() as f64) as usize).min(s.len().saturating_sub(1));
    }
    let mut total = 0.0;
    for (q, &x) in p.iter_mut().zip(s) {
        *q = vmath::exp(x - mx);
        total += *q;
    }
    inverse_cdf(p, u * total)
}

/// [`local_scores`] with `K` states everywhere: `θ_v + Σ_s kernel_s(x_src, ·)` summed in
/// the same order (unary, then the slots in order), so equal bit for bit, for the variable
/// at position `p` of `layout`. States are bytes (`n` bytes, so the scattered reads of the
/// neighbours' states stay in cache), kernel `t` is rows `t·K .. t·K + K` of `kernels`
/// (every kernel is `K × K`).
#[inline]
fn uniform_scores<const K: usize>(
    layout: &ClassLayout<K>,
    kernels: &[[f64; K]],
    state: &[u8],
    p: usize,
) -> [f64; K] {
    let mut s = layout.unary[p];
    let (lo, hi) = (layout.off[p], layout.off[p + 1]);
    for (&i, &t) in layout.src[lo..hi].iter().zip(&layout.kernel[lo..hi]) {
        let row = &kernels[K * t as usize + usize::from(state[i as usize])];
        for (x, &w) in s.iter_mut().zip(row) {
            *x += w;
        }
    }
    s
}

/// The weights of [`sample_index`] for `K` finite log-scores `s`, before their `exp`:
/// `s − max` (`≤ 0`, 0 at the largest score).
#[inline]
fn shifted_scores<const K: usize>(s: &[f64; K]) -> [f64; K] {
    let mx = s.iter().copied().fold(f64::NEG_INFINITY, fmax);
    s.map(|x| x - mx)
}

/// [`sample_index`] from its weights `w = exp(shifted_scores(s))` (computed for a whole
/// batch by [`vmath::exp_in_place`], the same bits as its scalar `exp`): the weights
/// summed in state order, then the same scan.
#[inline]
fn draw_uniform<const K: usize>(w: &[f64; K], u: f64) -> usize {
    let total = w.iter().fold(0.0, |t, &q| t + q);
    inverse_cdf(w, u * total)
}

/// The binary fast path's view of the model: two states everywhere, ordinary (finite)
/// potentials. Each slot's kernel is looked up as a row pair `t(x_src, 0), t(x_src, 1)`.
struct BinaryTables {
    /// The 2 × 2 log-kernels, indexed like [`crate::mrf::Kernels::off`].
    per_kernel: Vec<[f64; 4]>,
    /// `Some` when every kernel holds the same values (one shared table).
    shared: Option<[f64; 4]>,
}

impl BinaryTables {
    fn of(mrf: &PairwiseMrf) -> Option<Self> {
        if mrf.uniform_k != 2 || mrf.extreme {
            return None;
        }
        let ker = &mrf.kernels;
        let per_kernel: Vec<[f64; 4]> = ker
            .off
            .windows(2)
            .map(|w| {
                [
                    ker.log[w[0]],
                    ker.log[w[0] + 1],
                    ker.log[w[0] + 2],
                    ker.log[w[0] + 3],
                ]
            })
            .collect();
        let shared = match per_kernel.split_first() {
            Some((first, rest))
                if rest
                    .iter()
                    .all(|t| t.iter().zip(first).all(|(a, b)| a.to_bits() == b.to_bits())) =>
            {
                Some(*first)
            }
            _ => None,
        };
        Some(Self { per_kernel, shared })
    }

    /// `(s0, s1)`: [`local_scores`] of the variable at position `p` of `layout` with the
    /// states as bytes (0 or 1), summed in the same order (unary, then the slots in
    /// order), so the values are the same to the bit.
    #[inline]
    fn scores(&self, layout: &ClassLayout<2>, state: &[u8], p: usize) -> (f64, f64) {
        let mut s = layout.unary[p];
        let (lo, hi) = (layout.off[p], layout.off[p + 1]);
        match &self.shared {
            Some(t) => {
                let rows = [[t[0], t[1]], [t[2], t[3]]];
                for &i in &layout.src[lo..hi] {
                    let r = rows[usize::from(state[i as usize] & 1)];
                    s[0] += r[0];
                    s[1] += r[1];
                }
            }
            None => {
                for (&i, &q) in layout.src[lo..hi].iter().zip(&layout.kernel[lo..hi]) {
                    let t = &self.per_kernel[q as usize];
                    let b = 2 * usize::from(state[i as usize] & 1);
                    s[0] += t[b];
                    s[1] += t[b + 1];
                }
            }
        }
        (s[0], s[1])
    }
}

/// The argument of [`draw_binary`]'s one `exp`: the smaller score minus the larger
/// (`≤ 0`).
#[inline]
fn smaller_minus_larger(s0: f64, s1: f64) -> f64 {
    if s0 >= s1 { s1 - s0 } else { s0 - s1 }
}

/// [`sample_index`] for two finite log-scores, the same arithmetic to the bit, with its
/// one `exp` given: `e = exp(smaller_minus_larger(s0, s1))`, computed for a whole batch
/// by [`vmath::exp_in_place`]. The larger score's weight is `exp(0) = 1` exactly, the
/// smaller's is `e`; `sample_index` returns 0 when `t = u (p0 + p1) < p0`, else the last
/// state of positive weight (1 when `p1 > 0`, else 0).
#[inline]
fn draw_binary(s0: f64, s1: f64, e: f64, u: f64) -> bool {
    // The weights are selected by masks instead of branches (the comparison is as
    // unpredictable as the draws).
    let m = u64::from(s0 >= s1).wrapping_neg();
    let (one, eb) = (1.0f64.to_bits(), e.to_bits());
    let p0 = f64::from_bits((one & m) | (eb & !m));
    let p1 = f64::from_bits((eb & m) | (one & !m));
    let zero = (p0 > 0.0) & (u * (p0 + p1) < p0);
    !zero & (p1 > 0.0)
}

/// Sweeps whose seeds are drawn ahead and run in one call of [`crate::on_pool`].
const SWEEPS_PER_CALL: usize = 256;

/// Runs `body(sweep, seed)` for `sweep = 1..=total` in order, `seed` the caller's
/// generator's next `u64` for that sweep (drawn in the same order as one `next_u64` per
/// sweep, so the draws are unchanged), the sweeps on a thread of the rayon pool in runs
/// of [`SWEEPS_PER_CALL`] ([`crate::on_pool`]: one hand-over per run instead of one per
/// colour class). The generator stays on the caller's thread (it need not be `Send`).
fn for_each_sweep<R: Rng + ?Sized>(
    rng: &mut R,
    total: usize,
    mut body: impl FnMut(usize, u64) + Send,
) {
    let mut seeds = Vec::with_capacity(total.min(SWEEPS_PER_CALL));
    let mut done = 0;
    while done < total {
        let m = (total - done).min(SWEEPS_PER_CALL);
        seeds.clear();
        seeds.extend((0..m).map(|_| rng.next_u64()));
        let (run, body) = (&seeds, &mut body);
        crate::on_pool(move || {
            for (i, &seed) in run.iter().enumerate() {
                body(done + 1 + i, seed);
            }
        });
        done += m;
    }
}

/// Variables per batch of a colour class on the binary path: the batch's scores are
/// gathered first (independent scattered loads the processor overlaps), then sampled.
const BATCH: usize = 256;

/// Variables per parallel piece of a colour class.
const CHUNK: usize = 4 * BATCH;
const _: () = assert!(
    CHUNK <= 1 << 16,
    "ClassLayout::local holds piece indices as u16"
);

/// Counted samples and the best visited state, shared by both paths.
struct Tally {
    counts: Vec<u32>,
    /// The counts after the first half of the samples (taken when it is reached).
    first_half: Vec<u32>,
    edge_counts: Vec<u32>,
    eoff: Vec<usize>,
    collected: usize,
    half: usize,
}

impl Tally {
    fn new(mrf: &PairwiseMrf, with_edges: bool, samples: usize) -> Self {
        let eoff = if with_edges {
            edge_offsets(mrf)
        } else {
            vec![0]
        };
        Self {
            counts: vec![0u32; mrf.eff_unary().len()],
            first_half: Vec::new(),
            edge_counts: vec![0u32; eoff[eoff.len() - 1]],
            eoff,
            collected: 0,
            half: samples / 2,
        }
    }

    /// Counts one sample given by `state_of(v)`.
    fn add(&mut self, mrf: &PairwiseMrf, state_of: impl Fn(usize) -> usize) {
        let n = mrf.num_nodes();
        for v in 0..n {
            self.counts[mrf.state_off[v] + state_of(v)] += 1;
        }
        if !self.edge_counts.is_empty() {
            for (e, &(u, v)) in mrf.edges.iter().enumerate() {
                let kv = mrf.num_states[v as usize] as usize;
                self.edge_counts
                    [self.eoff[e] + state_of(u as usize) * kv + state_of(v as usize)] += 1;
            }
        }
        self.collected += 1;
        if self.collected == self.half {
            self.first_half = self.counts.clone();
        }
    }

    fn finish(
        self,
        mrf: &PairwiseMrf,
        gibbs: &Gibbs,
        total: usize,
        best: Vec<u32>,
    ) -> Result<GibbsRun, InferError> {
        let Self {
            counts,
            first_half,
            edge_counts,
            collected,
            half,
            ..
        } = self;
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
            converged: max_residual <= gibbs.split_tol,
            iterations: total,
            max_residual,
        };
        Ok(GibbsRun {
            marginals: Marginals::from_probabilities(mrf, node, edge, conv),
            best: MapAssignment::new(mrf, best, conv),
        })
    }
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
    /// [`InferError::InvalidParameter`] if `samples == 0`, `thinning == 0` or the sweep
    /// count `burn_in + samples * thinning` does not fit in `usize`;
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
        if self
            .samples
            .checked_mul(self.thinning)
            .and_then(|s| s.checked_add(self.burn_in))
            .is_none()
        {
            return Err(InferError::InvalidParameter {
                name: "burn_in + samples * thinning",
                value: format!("{} + {} * {}", self.burn_in, self.samples, self.thinning),
                reason: "the number of sweeps must fit in usize",
            });
        }
        let (coff, cnodes) = colour_classes(mrf);
        if let Some(tables) = BinaryTables::of(mrf) {
            return self.run_binary(mrf, rng, &tables, &coff, &cnodes);
        }
        if mrf.extreme {
            return self.run_general(mrf, rng, &coff, &cnodes);
        }
        match mrf.uniform_k {
            3 => self.run_uniform::<3, R>(mrf, rng, &coff, &cnodes),
            4 => self.run_uniform::<4, R>(mrf, rng, &coff, &cnodes),
            5 => self.run_uniform::<5, R>(mrf, rng, &coff, &cnodes),
            6 => self.run_uniform::<6, R>(mrf, rng, &coff, &cnodes),
            7 => self.run_uniform::<7, R>(mrf, rng, &coff, &cnodes),
            8 => self.run_uniform::<8, R>(mrf, rng, &coff, &cnodes),
            _ => self.run_general(mrf, rng, &coff, &cnodes),
        }
    }

    /// `K` states everywhere on an ordinary model (`3 ≤ K ≤ 8`): states as bytes, unary
    /// rows and kernels viewed as arrays of `K`, scores by [`uniform_scores`], draws by
    /// [`draw_uniform`]; a batch of a colour class has its scores gathered before it is
    /// sampled (independent scattered loads the processor overlaps), then its weights'
    /// `exp`s computed as one vectorised batch. Same colour classes,
    /// uniforms, scores and draws as [`Gibbs::run_general`], bit for bit.
    fn run_uniform<const K: usize, R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        rng: &mut R,
        coff: &[usize],
        cnodes: &[u32],
    ) -> Result<GibbsRun, InferError> {
        debug_assert!(!mrf.extreme && mrf.uniform_k == K && K <= 256);
        debug_assert!((0..mrf.kernels.off.len()).all(|t| mrf.kernels.off[t] == t * K * K));
        let (unary, _) = mrf.eff_unary().as_chunks::<K>();
        let (kernels, _) = mrf.kernels.log.as_chunks::<K>();
        let layout = ClassLayout::<K>::new(mrf, coff, cnodes, true);
        let start: Vec<u32> = unary.iter().map(|row| argmax(row) as u32).collect();
        let mut score = mrf.log_score(&start);
        let mut state: Vec<u8> = start.iter().map(|&x| x as u8).collect();
        drop(start);
        let mut best = state.clone();
        let mut best_score = score;
        let mut tally = Tally::new(mrf, self.beliefs == Beliefs::NodesAndEdges, self.samples);
        let mut upd: Vec<(u8, f64)> = vec![(0, 0.0); largest_class(coff)];
        let total = self.burn_in + self.samples * self.thinning;
        for_each_sweep(rng, total, |sweep, seed| {
            for c in 0..coff.len() - 1 {
                let class = &cnodes[coff[c]..coff[c + 1]];
                let buf = &mut upd[..class.len()];
                let cur = &state;
                let layout = &layout;
                buf.par_chunks_mut(CHUNK)
                    .zip(class.par_chunks(CHUNK))
                    .enumerate()
                    .for_each(|(chunk, (out, vars))| {
                        let mut sc = [[0.0; K]; BATCH];
                        let mut w = [[0.0; K]; BATCH];
                        let start = coff[c] + chunk * CHUNK;
                        for first in (start..start + vars.len()).step_by(BATCH) {
                            let n = (start + vars.len() - first).min(BATCH);
                            for (p, (slot, w)) in (first..).zip(sc[..n].iter_mut().zip(&mut w)) {
                                *slot = uniform_scores::<K>(layout, kernels, cur, p);
                                *w = shifted_scores(slot);
                            }
                            vmath::exp_in_place(w[..n].as_flattened_mut());
                            let local = &layout.local[first..first + n];
                            let hash = &layout.hash[first..first + n];
                            for (((&i, &h), s), w) in local.iter().zip(hash).zip(&sc).zip(&w) {
                                let i = usize::from(i);
                                let v = vars[i] as usize;
                                let x = draw_uniform::<K>(w, uniform_hashed(seed, h));
                                out[i] = (x as u8, s[x] - s[usize::from(cur[v])]);
                            }
                        }
                    });
                for (&v, &(x, d)) in class.iter().zip(buf.iter()) {
                    state[v as usize] = x;
                    score += d;
                }
            }
            if score > best_score {
                best_score = score;
                best.copy_from_slice(&state);
            }
            if self.counted(sweep) {
                tally.add(mrf, |v| usize::from(state[v]));
            }
        });
        let best = best.iter().map(|&x| u32::from(x)).collect();
        tally.finish(mrf, self, total, best)
    }

    /// Any model: states as `u32`, scores by [`local_scores`].
    fn run_general<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        rng: &mut R,
        coff: &[usize],
        cnodes: &[u32],
    ) -> Result<GibbsRun, InferError> {
        let n = mrf.num_nodes();
        let mut state: Vec<u32> = (0..n)
            .map(|v| argmax(&mrf.eff_unary()[mrf.state_off[v]..mrf.state_off[v + 1]]) as u32)
            .collect();
        let mut score = mrf.log_score(&state);
        let mut best = state.clone();
        let mut best_score = score;
        let mut tally = Tally::new(mrf, self.beliefs == Beliefs::NodesAndEdges, self.samples);
        let mut upd: Vec<(u32, f64)> = vec![(0, 0.0); largest_class(coff)];
        let k = mrf.max_states.max(1);
        let total = self.burn_in + self.samples * self.thinning;
        for_each_sweep(rng, total, |sweep, seed| {
            for c in 0..coff.len() - 1 {
                let class = &cnodes[coff[c]..coff[c + 1]];
                let buf = &mut upd[..class.len()];
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
            if feasible && self.counted(sweep) {
                tally.add(mrf, |v| state[v] as usize);
            }
        });
        tally.finish(mrf, self, total, best)
    }

    /// Whether the state after sweep `sweep` (1-based) is a counted sample.
    fn counted(&self, sweep: usize) -> bool {
        sweep > self.burn_in && (sweep - self.burn_in).is_multiple_of(self.thinning)
    }

    /// Two states everywhere, ordinary model: the states as bytes (`n` bytes, so a
    /// neighbour's state is one load, mostly from cache), the kernel rows by
    /// [`BinaryTables`], one `exp` per update ([`draw_binary`]), computed for a batch at
    /// a time by [`vmath::exp_in_place`]. Same colour classes,
    /// uniforms, scores and draws as [`Gibbs::run_general`], bit for bit.
    fn run_binary<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        rng: &mut R,
        tables: &BinaryTables,
        coff: &[usize],
        cnodes: &[u32],
    ) -> Result<GibbsRun, InferError> {
        let n = mrf.num_nodes();
        let eff = mrf.eff_unary();
        // `argmax` of the unary row: state 1 only when strictly larger.
        let start: Vec<u32> = (0..n)
            .map(|v| u32::from(eff[2 * v + 1] > eff[2 * v]))
            .collect();
        let mut score = mrf.log_score(&start);
        let mut state: Vec<u8> = start.iter().map(|&x| x as u8).collect();
        drop(start);
        let mut best = state.clone();
        let mut best_score = score;
        let mut tally = Tally::new(mrf, self.beliefs == Beliefs::NodesAndEdges, self.samples);
        let mut upd: Vec<(bool, f64)> = vec![(false, 0.0); largest_class(coff)];
        let layout = ClassLayout::<2>::new(mrf, coff, cnodes, tables.shared.is_none());
        let total = self.burn_in + self.samples * self.thinning;
        for_each_sweep(rng, total, |sweep, seed| {
            for c in 0..coff.len() - 1 {
                let class = &cnodes[coff[c]..coff[c + 1]];
                let buf = &mut upd[..class.len()];
                let cur = &state;
                let layout = &layout;
                buf.par_chunks_mut(CHUNK)
                    .zip(class.par_chunks(CHUNK))
                    .enumerate()
                    .for_each(|(chunk, (out, vars))| {
                        let start = coff[c] + chunk * CHUNK;
                        vmath::arch().dispatch(BinaryChunk {
                            tables,
                            layout,
                            cur,
                            start,
                            vars,
                            out,
                            seed,
                        });
                    });
                for (&v, &(x, d)) in class.iter().zip(buf.iter()) {
                    state[v as usize] = u8::from(x);
                    score += d;
                }
            }
            if score > best_score {
                best_score = score;
                best.copy_from_slice(&state);
            }
            if self.counted(sweep) {
                tally.add(mrf, |v| usize::from(state[v]));
            }
        });
        let best = best.into_iter().map(u32::from).collect();
        tally.finish(mrf, self, total, best)
    }
}

/// One piece of a colour class in [`Gibbs::run_binary`]: the draws of the positions
/// `start..start + vars.len()` of the class layout, into `out` (by class index), run
/// through [`pulp`]'s dispatch so that it is compiled for the processor's vector unit as
/// well (AVX2 where there is one; the same operations, so the same draws).
struct BinaryChunk<'a> {
    tables: &'a BinaryTables,
    layout: &'a ClassLayout<2>,
    cur: &'a [u8],
    start: usize,
    vars: &'a [u32],
    out: &'a mut [(bool, f64)],
    seed: u64,
}

impl pulp::WithSimd for BinaryChunk<'_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let BinaryChunk {
            tables,
            layout,
            cur,
            start,
            vars,
            out,
            seed,
        } = self;
        let mut sc = [(0.0, 0.0); BATCH];
        let mut ex = [0.0; BATCH];
        for first in (start..start + vars.len()).step_by(BATCH) {
            let m = (start + vars.len() - first).min(BATCH);
            for (p, slot) in (first..).zip(&mut sc[..m]) {
                *slot = tables.scores(layout, cur, p);
            }
            let ex = &mut ex[..m];
            for (e, &(s0, s1)) in ex.iter_mut().zip(&sc) {
                *e = smaller_minus_larger(s0, s1);
            }
            vmath::exp_in_place(ex);
            let local = &layout.local[first..first + m];
            let hash = &layout.hash[first..first + m];
            for (((&i, &h), &(s0, s1)), &e) in local.iter().zip(hash).zip(&sc).zip(ex.iter()) {
                let i = usize::from(i);
                let v = vars[i] as usize;
                let x = draw_binary(s0, s1, e, uniform_hashed(seed, h));
                let s = [s0, s1];
                out[i] = (x, s[usize::from(x)] - s[usize::from(cur[v] & 1)]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::mrf::{MrfParts, PairTable};

    /// The binary path changes how the chain is computed, not what it draws: for the same
    /// generator state it returns the general path's marginals, edge counts, best state
    /// and diagnostics bit for bit (so srl-dist's chromatic Gibbs still equals it too).
    #[test]
    fn binary_path_draws_what_the_general_path_draws() {
        let configs = [
            Gibbs {
                burn_in: 3,
                samples: 9,
                thinning: 2,
                ..Gibbs::default()
            },
            Gibbs {
                burn_in: 0,
                samples: 1,
                beliefs: Beliefs::NodesOnly,
                ..Gibbs::default()
            },
        ];
        // 3000 variables: classes larger than one parallel chunk (4 · BATCH).
        for (seed, n, scale) in [(1, 6, 0.7), (2, 50, 0.7), (3, 3000, 0.7), (4, 200, 400.0)] {
            for shared in [true, false] {
                for evidence in [false, true] {
                    let mrf = crate::test_models::binary_ring_model(
                        n,
                        shared,
                        evidence,
                        (scale, scale),
                        seed,
                    );
                    let tables = BinaryTables::of(&mrf).unwrap();
                    assert_eq!(tables.shared.is_some(), shared);
                    let (coff, cnodes) = colour_classes(&mrf);
                    for g in &configs {
                        let mut r1 = ChaCha8Rng::seed_from_u64(seed);
                        let mut r2 = r1.clone();
                        let a = g
                            .run_binary(&mrf, &mut r1, &tables, &coff, &cnodes)
                            .unwrap();
                        let b = g.run_general(&mrf, &mut r2, &coff, &cnodes).unwrap();
                        assert_eq!(a, b, "n {n} shared {shared} evidence {evidence}");
                        assert_eq!(r1.next_u64(), r2.next_u64());
                    }
                }
            }
        }
    }

    /// The sweeps get the generator's outputs in order, one per sweep, across runs of
    /// [`SWEEPS_PER_CALL`], and the generator ends where one draw per sweep leaves it.
    #[test]
    fn sweeps_get_one_seed_each_in_order() {
        for total in [
            0,
            1,
            SWEEPS_PER_CALL - 1,
            SWEEPS_PER_CALL,
            2 * SWEEPS_PER_CALL + 3,
        ] {
            let mut r1 = ChaCha8Rng::seed_from_u64(5);
            let mut r2 = r1.clone();
            let mut got = Vec::new();
            for_each_sweep(&mut r1, total, |sweep, seed| got.push((sweep, seed)));
            let want: Vec<(usize, u64)> = (1..=total).map(|s| (s, r2.next_u64())).collect();
            assert_eq!(got, want);
            assert_eq!(r1.next_u64(), r2.next_u64());
        }
    }

    /// A run longer than one hand-over to the pool draws the same as the same run from
    /// inside a pool (where `on_pool` runs inline) and with a generator that is not `Send`
    /// (`dyn Rng`), on every path.
    #[test]
    fn runs_in_and_out_of_the_pool_draw_the_same() {
        let g = Gibbs {
            burn_in: SWEEPS_PER_CALL + 7,
            samples: 40,
            thinning: 3,
            ..Gibbs::default()
        };
        let binary = crate::test_models::binary_ring_model(300, false, true, (0.7, 0.7), 9);
        let parts = |k: usize| MrfParts {
            num_states: vec![k; 40],
            unary: (0..40 * k)
                .map(|i| ((i * 37 % 11) as f64 - 5.0) * 0.1)
                .collect(),
            edges: (0..40).map(|v| (v, (v + 1) % 40)).collect(),
            edge_tables: vec![0; 40],
            tables: vec![PairTable::potts(k, 0.4, 0.0)],
            evidence: vec![],
        };
        let three = PairwiseMrf::new(parts(3)).unwrap();
        let nine = PairwiseMrf::new(parts(9)).unwrap();
        for mrf in [&binary, &three, &nine] {
            let outside = g.run(mrf, &mut ChaCha8Rng::seed_from_u64(1)).unwrap();
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap();
            let inside = pool.install(|| g.run(mrf, &mut ChaCha8Rng::seed_from_u64(1)).unwrap());
            let mut chacha = ChaCha8Rng::seed_from_u64(1);
            let dynamic: &mut dyn Rng = &mut chacha;
            let unsized_rng = g.run(mrf, dynamic).unwrap();
            assert_eq!(gibbs_bits(mrf, &outside), gibbs_bits(mrf, &inside));
            assert_eq!(gibbs_bits(mrf, &outside), gibbs_bits(mrf, &unsized_rng));
        }
    }

    /// A sweep count past `usize` is an error, not a silently wrapped count.
    #[test]
    fn sweep_count_overflow_is_an_error() {
        let mrf = crate::test_models::binary_ring_model(6, true, false, (0.7, 0.7), 1);
        for g in [
            Gibbs {
                samples: usize::MAX / 2,
                thinning: 3,
                ..Gibbs::default()
            },
            Gibbs {
                burn_in: usize::MAX,
                samples: 1,
                thinning: 1,
                ..Gibbs::default()
            },
        ] {
            let e = g.run(&mrf, &mut ChaCha8Rng::seed_from_u64(1)).unwrap_err();
            assert!(matches!(e, InferError::InvalidParameter { .. }), "{e}");
        }
    }

    /// Every output bit of a Gibbs run: node and edge frequencies, diagnostics, the best
    /// state and its score.
    fn gibbs_bits(mrf: &PairwiseMrf, g: &GibbsRun) -> Vec<u64> {
        let m = &g.marginals;
        let mut v: Vec<u64> = m.node_all().iter().map(|x| x.to_bits()).collect();
        for e in 0..mrf.num_edges() {
            v.extend(m.edge(e).map_or(&[][..], |x| x).iter().map(|x| x.to_bits()));
        }
        for c in [m.convergence(), g.best.convergence] {
            v.extend([c.max_residual.to_bits(), c.iterations as u64]);
            v.push(u64::from(c.converged));
        }
        v.extend(g.best.states.iter().map(|&x| u64::from(x)));
        v.push(g.best.log_score.to_bits());
        v
    }

    /// The `K`-state path draws what the general path draws, bit for bit, for the same
    /// generator state: counts, edge counts, diagnostics, best state and score, with one
    /// thread and with four (classes of 3000 variables span several parallel chunks), for
    /// every `K` it serves.
    #[test]
    fn uniform_path_draws_what_the_general_path_draws() {
        let configs = [
            Gibbs {
                burn_in: 3,
                samples: 9,
                thinning: 2,
                ..Gibbs::default()
            },
            Gibbs {
                burn_in: 0,
                samples: 1,
                beliefs: Beliefs::NodesOnly,
                ..Gibbs::default()
            },
        ];
        for k in 3..=8usize {
            let mrf = crate::mean_field::tests::k_state_model(k, 6000, 600, 10 + k as u64);
            let (coff, cnodes) = colour_classes(&mrf);
            for g in &configs {
                let mut r1 = ChaCha8Rng::seed_from_u64(k as u64);
                let general = g.run_general(&mrf, &mut r1, &coff, &cnodes).unwrap();
                let after = r1.next_u64();
                for threads in [1, 4] {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap();
                    let mut r2 = ChaCha8Rng::seed_from_u64(k as u64);
                    let fast = pool.install(|| g.run(&mrf, &mut r2)).unwrap();
                    assert!(
                        gibbs_bits(&mrf, &fast) == gibbs_bits(&mrf, &general),
                        "k {k} threads {threads}"
                    );
                    assert_eq!(r2.next_u64(), after);
                }
            }
        }
    }

    /// The parts of the `K`-state path equal the general parts bit for bit on their own
    /// (a change of rounding in a score rarely changes a draw, so the whole-run test alone
    /// would miss it): [`uniform_scores`] is [`local_scores`] at random states, and
    /// [`draw_uniform`] is [`sample_index`] on random scores, tied scores, and uniforms
    /// at the edges of the cumulative weights.
    #[test]
    fn uniform_parts_equal_the_general_parts() {
        use rand::RngExt;
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        fn check<const K: usize>(mrf: &PairwiseMrf, rng: &mut ChaCha8Rng) {
            let kernels = mrf.kernels.log.as_chunks::<K>().0;
            let n = mrf.num_nodes();
            let all: Vec<u32> = (0..n as u32).collect();
            // one class from 0: position `q` holds variable `q - q % CHUNK + local[q]`
            let layout = ClassLayout::<K>::new(mrf, &[0, n], &all, true);
            let mut out = [0.0; K];
            let mut p = [0.0; K];
            for _ in 0..3 {
                let state: Vec<u32> = (0..n).map(|_| rng.random_range(0..K as u32)).collect();
                let bytes: Vec<u8> = state.iter().map(|&x| x as u8).collect();
                for q in 0..n {
                    let v = q - q % CHUNK + usize::from(layout.local[q]);
                    local_scores(mrf, &state, v, &mut out);
                    let fast = uniform_scores::<K>(&layout, kernels, &bytes, q);
                    assert!(
                        fast.iter()
                            .zip(&out)
                            .all(|(a, b)| a.to_bits() == b.to_bits())
                    );
                }
            }
            for trial in 0..20_000 {
                let mut s = [0.0; K];
                for x in &mut s {
                    // Few distinct values: ties, and the maximum more than once.
                    *x = if trial % 2 == 0 {
                        f64::from(rng.random_range(-3i32..3)) * 0.7
                    } else {
                        rng.random_range(-40.0..40.0)
                    };
                }
                let mut us = vec![rng.random::<f64>(), 0.0, 0.999_999_999_999];
                // A uniform at each cumulative weight boundary.
                let mx = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let w: Vec<f64> = s.iter().map(|x| vmath::exp(x - mx)).collect();
                let total: f64 = w.iter().sum();
                let mut acc = 0.0;
                for x in &w {
                    acc += x;
                    us.push(acc / total);
                }
                for u in us.into_iter().filter(|u| (0.0..1.0).contains(u)) {
                    let w = shifted_scores(&s).map(vmath::exp);
                    assert_eq!(draw_uniform::<K>(&w, u), sample_index(&s, &mut p, u));
                }
            }
        }
        for k in 3..=8usize {
            let mrf = crate::mean_field::tests::k_state_model(k, 2500, 100, k as u64);
            match k {
                3 => check::<3>(&mrf, &mut rng),
                4 => check::<4>(&mrf, &mut rng),
                5 => check::<5>(&mrf, &mut rng),
                6 => check::<6>(&mrf, &mut rng),
                7 => check::<7>(&mrf, &mut rng),
                _ => check::<8>(&mrf, &mut rng),
            }
        }
    }

    #[test]
    fn draw_binary_is_sample_index() {
        let mut p = [0.0; 2];
        let scores = [0.0, 1.5, -1.5, 800.0, -800.0, 0.3];
        for &s0 in &scores {
            for &s1 in &scores {
                for u in [0.0, 0.1, 0.18, 0.5, 0.82, 0.999_999] {
                    let x = sample_index(&[s0, s1], &mut p, u);
                    let e = vmath::exp(smaller_minus_larger(s0, s1));
                    assert_eq!(usize::from(draw_binary(s0, s1, e, u)), x, "{s0} {s1} {u}");
                }
            }
        }
    }

    /// The greedy colouring as first written (sorted list of neighbour colours).
    fn reference_colours(mrf: &PairwiseMrf) -> Vec<u32> {
        let n = mrf.num_nodes();
        let mut colour = vec![u32::MAX; n];
        for v in 0..n {
            if mrf.evidence[v].is_some() {
                continue;
            }
            let mut used: Vec<u32> = mrf
                .neighbors(v)
                .map(|(u, _)| colour[u])
                .filter(|&c| c != u32::MAX)
                .collect();
            used.sort_unstable();
            used.dedup();
            colour[v] = used
                .iter()
                .enumerate()
                .find(|&(i, &c)| c != i as u32)
                .map_or(used.len() as u32, |(i, _)| i as u32);
        }
        colour
    }

    #[test]
    fn by_degree_is_a_stable_sort_on_capped_degrees() {
        use crate::bp::{DEGREE_BUCKETS, by_degree};
        use rand::RngExt;
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let mut got = Vec::new();
        for len in [0, 1, 2, 7, 300, CHUNK] {
            let deg: Vec<usize> = (0..len)
                .map(|i| match i % 3 {
                    0 => rng.random_range(0..5),
                    1 => rng.random_range(0..200),
                    _ => rng.random_range(60..70),
                })
                .collect();
            got.clear();
            got.resize(len, 0);
            by_degree(len, |i| deg[i], |r, i| got[r] = i as u16);
            let mut want: Vec<u16> = (0..len as u16).collect();
            want.sort_by_key(|&i| deg[usize::from(i)].min(DEGREE_BUCKETS - 1));
            assert_eq!(got, want, "len {len}");
        }
    }

    #[test]
    fn colouring_is_greedy_smallest_free_colour() {
        // A clique of 70 (70 colours: the mask's overflow path) plus a sparse tail.
        let mut edges = Vec::new();
        for a in 0..70u32 {
            for b in a + 1..70 {
                edges.push((a, b));
            }
        }
        for v in 70..200u32 {
            edges.push((v - 1, v));
            edges.push((v % 70, v));
            edges.push(((v * 7) % 70 + 1, v));
        }
        let m = edges.len();
        let n = 200;
        let mrf = PairwiseMrf::new(MrfParts {
            num_states: vec![2; n],
            unary: vec![0.0; 2 * n],
            edges,
            edge_tables: vec![0; m],
            tables: vec![PairTable::potts(2, 0.1, 0.0)],
            evidence: (0..n)
                .map(|v| (v >= 70 && v % 11 == 5).then_some(0))
                .collect(),
        })
        .unwrap();
        let reference = reference_colours(&mrf);
        let (off, nodes) = colour_classes(&mrf);
        assert_eq!(off.len() - 1, 70);
        for c in 0..off.len() - 1 {
            for &v in &nodes[off[c]..off[c + 1]] {
                assert_eq!(reference[v as usize], c as u32);
            }
        }
        assert_eq!(
            off[off.len() - 1],
            reference.iter().filter(|&&c| c != u32::MAX).count()
        );
    }
}
