//! Threshold classifiers, same-decision probability, expected classification agreement
//! (ECA), MPA / MAA, and branch-and-bound trimming (Choi & Van den Broeck, IJCAI 2018).
//!
//! Everything here follows `shared/specs/trimming.md` (the paper's formulas, restored):
//! for a feature subset `Y` (bit mask over the classifier's features, bit `i` = feature
//! `i`) each instantiation `y` contributes three weights — `Pr(y, d)`, `Pr(y, ¬d)` and
//! `Pr(y) Q(y)` with `Q(y) = Σ_z Pr(z | y) α(y, z)` — and
//! - `MPA(Y) = Σ_y Pr(y) max(Q(y), 1 − Q(y))` (Definition 4, Eq. 2),
//! - `ECA(Y, T') = Σ_{y: Pr(d|y) ≥ T'} Pr(y) Q(y) + Σ_{y: Pr(d|y) < T'} Pr(y)(1 − Q(y))`
//!   (Eq. 3; with `T' = T` this is the E-SDP of Definition 6 / Proposition 4),
//! - `MAA(Y) = max_{T'} ECA(Y, T')` by the threshold sweep of Algorithm 2.
//!
//! **Normalisation.** Two CPT rows of the TrimBN models do not sum to 1 (heart
//! `CL12 | CL=s1`, hepatitis `HE15 | HE=s1`), so the model's total weight is not exactly 1.
//! Like the authors' tool, every agreement value here is the agreeing weight divided by the
//! total weight `Σ_x Pr(x)` (all "probabilities" are the network's weights, normalised
//! once at the end); posteriors `Pr(d | ·)` are ratios of weights and are unaffected.
//!
//! **Decision rule.** `α(x) = 1` iff `Pr(d | x) ≥ T`, evaluated as
//! `w_d (1 − T) ≥ T w_¬d e^{−10⁻⁹}` (a tolerance of 10⁻⁹ in log-odds so that both paths —
//! products of weights and sums of log-likelihood ratios — agree on exact ties).

use rayon::prelude::*;

use crate::error::BayesError;
use crate::naive_bayes::{FeatureKind, NaiveBayes};
use crate::network::BayesianNetwork;
use crate::ve::VariableElimination;

/// Log-odds tolerance of the decision rule (see the module docs).
pub const DECISION_TOL: f64 = 1e-9;

/// The decision `Pr(d) ≥ t` from the weights of `d` and `¬d`.
#[inline]
#[must_use]
pub fn decide(w_pos: f64, w_neg: f64, t: f64) -> bool {
    if t <= 0.0 {
        return true;
    }
    w_pos * (1.0 - t) >= t * w_neg * (-DECISION_TOL).exp()
}

/// A binary Bayesian classifier `α = (D, X, T)` over a network: `α(x) = 1` iff
/// `Pr(D = positive_state | x) ≥ threshold` (the class may have more than two states: the
/// test is the positive state against the rest).
#[derive(Clone, Debug, PartialEq)]
pub struct ThresholdClassifier {
    /// Class variable id `D`.
    pub class: usize,
    /// The positive class state `d`.
    pub positive_state: usize,
    /// Feature variable ids `X` (order defines feature indices 0..n).
    pub features: Vec<usize>,
    /// The threshold `T ∈ [0, 1]`.
    pub threshold: f64,
}

impl ThresholdClassifier {
    /// Validates the classifier against `net`.
    ///
    /// # Errors
    /// [`BayesError::InvalidQuery`] if an id or state is out of range, the class is a
    /// feature, a feature repeats, there are more than 63 features, or the threshold is
    /// outside `[0, 1]`.
    pub fn validate(&self, net: &BayesianNetwork) -> Result<(), BayesError> {
        if self.class >= net.len() || self.positive_state >= net.cardinality(self.class) {
            return Err(BayesError::query("class or positive state out of range"));
        }
        if !(0.0..=1.0).contains(&self.threshold) {
            return Err(BayesError::query("threshold outside [0, 1]"));
        }
        if self.features.len() > 63 {
            return Err(BayesError::query("at most 63 features"));
        }
        for (k, &f) in self.features.iter().enumerate() {
            if f >= net.len() || f == self.class || self.features[..k].contains(&f) {
                return Err(BayesError::query(format!(
                    "feature {f} out of range, the class, or repeated"
                )));
            }
        }
        Ok(())
    }

    /// Classifies a full instantiation `x` of the features (`x[i]` = state of feature
    /// `i`) by variable elimination.
    ///
    /// # Errors
    /// As [`VariableElimination::joint`]; [`BayesError::ZeroProbabilityEvidence`].
    pub fn classify(
        &self,
        net: &BayesianNetwork,
        ve: &VariableElimination,
        x: &[usize],
    ) -> Result<bool, BayesError> {
        let ev: Vec<(usize, usize)> = self
            .features
            .iter()
            .copied()
            .zip(x.iter().copied())
            .collect();
        let post = ve.posterior(net, self.class, &ev)?;
        let pos = post[self.positive_state];
        Ok(decide(pos, 1.0 - pos, self.threshold))
    }

    /// The same-decision probability (Definition 5):
    /// `SDP(d, T | H, e) = Σ_h Pr(h | e) 1[(Pr(d | h, e) ≥ T) = (Pr(d | e) ≥ T)]`.
    ///
    /// # Arguments
    /// - `evidence`: observed `(variable, state)` pairs `e`;
    /// - `hidden`: the variables `H` still to be observed (disjoint from `e` and the class).
    ///
    /// # Errors
    /// As [`VariableElimination::joint`]; [`BayesError::ZeroProbabilityEvidence`].
    pub fn same_decision_probability(
        &self,
        net: &BayesianNetwork,
        ve: &VariableElimination,
        evidence: &[(usize, usize)],
        hidden: &[usize],
    ) -> Result<f64, BayesError> {
        let mut scope = hidden.to_vec();
        scope.push(self.class);
        let f = ve.joint(net, &scope, evidence)?;
        let k = net.cardinality(self.class);
        let total = f.total();
        if total <= 0.0 {
            return Err(BayesError::ZeroProbabilityEvidence);
        }
        let (mut wd_all, mut wn_all) = (0.0, 0.0);
        for row in f.values().chunks(k) {
            let wd = row[self.positive_state];
            wd_all += wd;
            wn_all += row.iter().sum::<f64>() - wd;
        }
        let current = decide(wd_all, wn_all, self.threshold);
        let mut same = 0.0;
        for row in f.values().chunks(k) {
            let wd = row[self.positive_state];
            let m: f64 = row.iter().sum();
            if decide(wd, m - wd, self.threshold) == current {
                same += m;
            }
        }
        Ok(same / total)
    }
}

/// The three weights of one instantiation `y` of a feature subset.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct YStat {
    /// `Pr(y, d)` (unnormalised weight).
    pub pos_class: f64,
    /// `Pr(y, ¬d)`.
    pub neg_class: f64,
    /// `Pr(y) Q(y)`: the weight of completions `z` the original classifier calls positive.
    pub agree_pos: f64,
}

/// The value and a threshold attaining the maximum achievable agreement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agreement {
    /// `MAA(Y)` (normalised by the total weight).
    pub value: f64,
    /// A threshold `T'` realising it (midpoint of the optimal gap in the sweep).
    pub threshold: f64,
}

/// What branch-and-bound and the baselines need from a classifier: the per-instantiation
/// weights of any feature subset. Implemented by [`JointAgreement`] (any network, exact
/// tables) and [`NaiveBayesAgreement`] (naive Bayes, log-likelihood ratios).
pub trait AgreementModel: Sync {
    /// Number of features `n` (subsets are masks below `1 << n`).
    fn n_features(&self) -> usize;
    /// The original threshold `T`.
    fn threshold(&self) -> f64;
    /// `Σ_x Pr(x)`, the total weight (1 for a normalised network).
    fn total_weight(&self) -> f64;
    /// Whether the features are independent given the class (naive Bayes): then
    /// MAA = MPA and MAA is monotone (Proposition 3).
    fn conditionally_independent(&self) -> bool;
    /// Writes one [`YStat`] per instantiation `y` of `subset` into `out` (cleared first).
    fn subset_stats(&self, subset: u64, out: &mut Vec<YStat>);

    /// `MPA(subset)`, Definition 4 / Eq. 2.
    fn mpa(&self, subset: u64) -> f64 {
        let mut buf = Vec::new();
        self.subset_stats(subset, &mut buf);
        mpa_of(&buf) / self.total_weight()
    }
    /// `ECA(α, (D, Y, t))` with the trimmed threshold fixed at `t` (E-SDP when `t = T`).
    fn eca(&self, subset: u64, t: f64) -> f64 {
        let mut buf = Vec::new();
        self.subset_stats(subset, &mut buf);
        eca_of(&buf, t) / self.total_weight()
    }
    /// `MAA(subset)` and a threshold attaining it (Algorithm 2).
    fn maa(&self, subset: u64) -> Agreement {
        let mut buf = Vec::new();
        self.subset_stats(subset, &mut buf);
        let (v, t) = sweep(&mut buf);
        Agreement {
            value: v / self.total_weight(),
            threshold: t,
        }
    }
    /// `I(D; X_i)` in nats for the single feature `i`, used to order the branch-and-bound
    /// search ([`FeatureOrder::DecreasingInformation`]); not an agreement criterion.
    /// Default: [`AgreementModel::information_gain`] of `{i}`.
    fn feature_information(&self, i: usize) -> f64 {
        self.information_gain(1u64 << i)
    }
    /// The information gain `I(D; Y)` in nats.
    fn information_gain(&self, subset: u64) -> f64 {
        let mut buf = Vec::new();
        self.subset_stats(subset, &mut buf);
        info_gain_of(&buf)
    }
    /// `f` of each subset's statistics (as [`AgreementModel::subset_stats`] writes them, in
    /// some order of the instantiations; `f` may reorder the buffer), for each of `subsets`,
    /// in order. Default: one [`AgreementModel::subset_stats`] per subset, in parallel; a
    /// model may share work between subsets ([`JointAgreement`] walks the subset lattice).
    fn map_subsets(
        &self,
        subsets: &[u64],
        f: &(dyn Fn(&mut Vec<YStat>) -> f64 + Sync),
    ) -> Vec<f64> {
        subsets
            .par_iter()
            .map_init(Vec::new, |buf, &m| {
                self.subset_stats(m, buf);
                f(buf)
            })
            .collect()
    }
}

/// `Σ_y max(P⁺, M − P⁺)` (unnormalised).
#[must_use]
pub fn mpa_of(stats: &[YStat]) -> f64 {
    stats
        .iter()
        .map(|s| {
            let m = s.pos_class + s.neg_class;
            s.agree_pos.max(m - s.agree_pos)
        })
        .sum()
}

/// `Σ_y [Pr(d|y) ≥ t] P⁺ + [else] (M − P⁺)` (unnormalised).
#[must_use]
pub fn eca_of(stats: &[YStat], t: f64) -> f64 {
    stats
        .iter()
        .map(|s| {
            if decide(s.pos_class, s.neg_class, t) {
                s.agree_pos
            } else {
                s.pos_class + s.neg_class - s.agree_pos
            }
        })
        .sum()
}

/// The threshold sweep of Algorithm 2 (unnormalised value, threshold). Reorders `stats`.
#[must_use]
pub fn sweep(stats: &mut [YStat]) -> (f64, f64) {
    let post = |s: &YStat| {
        let m = s.pos_class + s.neg_class;
        if m > 0.0 { s.pos_class / m } else { 0.0 }
    };
    stats.sort_by(|a, b| post(a).total_cmp(&post(b)));
    let mut eca: f64 = stats.iter().map(|s| s.agree_pos).sum();
    let (mut best, mut best_t) = (eca, 0.0);
    let mut i = 0;
    while i < stats.len() {
        let p = post(&stats[i]);
        // the group of (nearly) equal posteriors starting at `i`; `stats[i]` always
        // belongs to it, so the sweep advances even when a posterior is NaN
        let mut j = i;
        while j < stats.len() && (j == i || post(&stats[j]) - p <= 1e-12 * p.max(1e-300)) {
            let s = &stats[j];
            eca += s.pos_class + s.neg_class - 2.0 * s.agree_pos;
            j += 1;
        }
        let next = if j < stats.len() {
            post(&stats[j])
        } else {
            1.0
        };
        if eca > best && (j < stats.len() || p < 1.0) {
            best = eca;
            best_t = 0.5 * (p + next);
        }
        i = j;
    }
    (best, best_t)
}

/// A key whose unsigned order is [`f64::total_cmp`]'s (sign-magnitude to two's
/// complement order, offset so negatives come first).
fn total_order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// The information gain `I(D; Y) = H(D) − H(D | Y)` in nats (Choi & Van den Broeck 2018,
/// Section 6.3's baseline) from the unnormalised weights `(Pr(y, d), Pr(y, ¬d))` of each
/// instantiation `y` of a feature subset (any order; weights ≥ 0). 0 for an empty or
/// all-zero table; no errors or panics.
pub fn info_gain_of(stats: &[YStat]) -> f64 {
    let h = |a: f64, b: f64| {
        let m = a + b;
        if m <= 0.0 {
            return 0.0;
        }
        let mut e = 0.0;
        for x in [a / m, b / m] {
            if x > 0.0 {
                e -= x * x.ln();
            }
        }
        e
    };
    let (mut wd, mut wn) = (0.0, 0.0);
    for s in stats {
        let (a, b) = (s.pos_class, s.neg_class);
        wd += a;
        wn += b;
    }
    let total = wd + wn;
    if total <= 0.0 {
        return 0.0;
    }
    let cond: f64 = stats
        .iter()
        .map(|s| {
            let (a, b) = (s.pos_class, s.neg_class);
            (a + b) / total * h(a, b)
        })
        .sum();
    h(wd, wn) - cond
}

/// The general-network path: the exact joint weights `Pr(x, d)`, `Pr(x, ¬d)` over every
/// instantiation `x` of the features, computed once by variable elimination ("compile
/// once"); each subset's statistics are then a marginal of that table.
///
/// **Shared work.** The per-instantiation statistics of a subset `Y` (`Pr(y, d)`,
/// `Pr(y, ¬d)`, `Pr(y) Q(y)`) are sums over `x`, so the table of any superset `V ⊇ Y`
/// marginalises to `Y`'s. Tables of at least [`JointAgreement::CACHE_MIN`] entries are
/// kept in a least-recently-used cache (at most twice the size of the full table in
/// total), and each evaluation starts from the smallest cached superset. Branch and bound
/// computes its bound on `U = I ∪ R` before searching below it, so the evaluations in a
/// subtree marginalise from `U`'s table (shrinking with every excluded feature) instead of
/// from the full joint.
#[derive(Debug)]
pub struct JointAgreement {
    cards: Vec<usize>,
    /// `(Pr(x, d), Pr(x, ¬d))` per full instantiation `x` (mixed radix over `order`, last
    /// fastest), shared by the models of every threshold; `Pr(x)·α(x)` is derived on reading
    base: std::sync::Arc<Vec<[f64; 2]>>,
    /// the radix order of `base`: feature indices, slowest first (the compilation's
    /// branch order)
    order: Vec<usize>,
    total: f64,
    threshold: f64,
    cache: std::sync::Mutex<Cache>,
    /// `I(D; X_i)` of every feature, computed once (one pass over `base`) and shared by the
    /// models of every threshold (it does not depend on the threshold)
    information: std::sync::Arc<std::sync::OnceLock<Vec<f64>>>,
}

#[derive(Debug, Default)]
struct Cache {
    entries: Vec<(u64, std::sync::Arc<Vec<YStat>>, u64)>,
    clock: u64,
    size: usize,
}

impl Clone for JointAgreement {
    fn clone(&self) -> Self {
        Self {
            cards: self.cards.clone(),
            base: std::sync::Arc::clone(&self.base),
            order: self.order.clone(),
            total: self.total,
            threshold: self.threshold,
            cache: std::sync::Mutex::default(),
            information: std::sync::Arc::clone(&self.information),
        }
    }
}

impl JointAgreement {
    /// Tables smaller than this are recomputed rather than cached.
    pub const CACHE_MIN: usize = 512;

    /// Builds the table `Pr(X, D)` by [`crate::compile::compile`]: the non-feature
    /// variables eliminated in the best greedy order (its peak checked before any table is
    /// built), then the feature instantiations enumerated with the features last.
    ///
    /// # Arguments
    /// - `ve`: its `max_entries` bounds the largest elimination table;
    /// - `max_instantiations`: the most feature instantiations (entries of the table).
    ///
    /// # Errors
    /// As [`ThresholdClassifier::validate`]; [`BayesError::TooLarge`] if the features have
    /// more than `max_instantiations` joint states or the elimination's peak table exceeds
    /// `ve.max_entries` (both known before work starts: [`crate::compile::plan`]).
    ///
    /// # Complexity
    /// The elimination's peak plus O(Π|X_i|) memory (two `f64` per instantiation); each
    /// subset evaluation is linear in the size of the smallest cached superset table.
    pub fn new(
        net: &BayesianNetwork,
        clf: &ThresholdClassifier,
        ve: &VariableElimination,
        max_instantiations: usize,
    ) -> Result<Self, BayesError> {
        clf.validate(net)?;
        let cards: Vec<usize> = clf.features.iter().map(|&f| net.cardinality(f)).collect();
        crate::factor::checked_size(&cards, max_instantiations)?;
        let c = crate::compile::compile(net, clf, ve.max_entries)?;
        Self::from_compiled(net, clf, c)
    }

    /// The agreement model of a joint compiled for `clf` on `net` ([`crate::compile::compile`]
    /// or [`crate::compile::compile_planned`]).
    ///
    /// # Errors
    /// As [`ThresholdClassifier::validate`]; [`BayesError::InvalidQuery`] if `compiled` does
    /// not have one weight pair per instantiation of `clf`'s features.
    pub fn from_compiled(
        net: &BayesianNetwork,
        clf: &ThresholdClassifier,
        compiled: crate::compile::CompiledJoint,
    ) -> Result<Self, BayesError> {
        clf.validate(net)?;
        let cards: Vec<usize> = clf.features.iter().map(|&f| net.cardinality(f)).collect();
        let len = cards.iter().try_fold(1usize, |a, &c| a.checked_mul(c));
        if len != Some(compiled.weights.len()) || compiled.order.len() != cards.len() {
            return Err(BayesError::query(
                "the compiled joint does not belong to this classifier's features",
            ));
        }
        Ok(Self {
            cards,
            base: std::sync::Arc::new(compiled.weights),
            order: compiled.order,
            total: compiled.total,
            threshold: clf.threshold,
            cache: std::sync::Mutex::default(),
            information: std::sync::Arc::default(),
        })
    }

    /// The same joint with the original classifier's threshold set to `threshold` (no new
    /// variable elimination; empty cache).
    ///
    /// # Errors
    /// [`BayesError::InvalidQuery`] if `threshold ∉ [0, 1]`.
    pub fn with_threshold(&self, threshold: f64) -> Result<Self, BayesError> {
        if !(0.0..=1.0).contains(&threshold) {
            return Err(BayesError::query("threshold outside [0, 1]"));
        }
        Ok(Self {
            cards: self.cards.clone(),
            base: std::sync::Arc::clone(&self.base),
            order: self.order.clone(),
            total: self.total,
            threshold,
            cache: std::sync::Mutex::default(),
            information: std::sync::Arc::clone(&self.information),
        })
    }

    /// `α(x)` for the instantiation with flat index `x` (mixed radix over the features,
    /// last fastest).
    ///
    /// # Panics
    /// If `x` is out of range.
    #[must_use]
    pub fn original_decision(&self, x: usize) -> bool {
        // digits of x in feature order, re-read in the table's radix order
        let n = self.cards.len();
        let mut digits = vec![0usize; n];
        let mut r = x;
        for i in (0..n).rev() {
            digits[i] = r % self.cards[i];
            r /= self.cards[i];
        }
        assert!(r == 0, "instantiation index out of range");
        let idx = self
            .order
            .iter()
            .fold(0usize, |acc, &i| acc * self.cards[i] + digits[i]);
        let [wd, wn] = self.base[idx];
        decide(wd, wn, self.threshold)
    }

    /// Number of cached marginal tables and their total entries (for tests and benches).
    #[must_use]
    pub fn cache_stats(&self) -> (usize, usize) {
        let c = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        (c.entries.len(), c.size)
    }

    /// Marginalises `src` (a table over the features `src_feats`, in that radix order, last
    /// fastest) onto `dst_mask` (a subset of them; the result in ascending feature order).
    fn marginalise<T>(
        &self,
        src_feats: &[usize],
        src: &[T],
        stat: impl Fn(&T) -> YStat,
        dst_mask: u64,
        out: &mut Vec<YStat>,
    ) {
        let feats = src_feats;
        let m = feats.len();
        // destination strides: ascending features, last fastest
        let mut dst_stride = vec![0usize; self.cards.len()];
        let mut size = 1usize;
        for i in (0..self.cards.len()).rev() {
            if dst_mask >> i & 1 == 1 && feats.contains(&i) {
                dst_stride[i] = size;
                size *= self.cards[i];
            }
        }
        let stride: Vec<usize> = feats.iter().map(|&f| dst_stride[f]).collect();
        out.clear();
        out.resize(size, YStat::default());
        if size == src.len() && feats.windows(2).all(|w| w[0] < w[1]) {
            for (o, x) in out.iter_mut().zip(src) {
                *o = stat(x);
            }
            return;
        }
        let cards: Vec<usize> = feats.iter().map(|&f| self.cards[f]).collect();
        // The sums run over `src` in order, each into its entry of a table over the kept
        // features in `src`'s radix order (so the writes move forward through it); when
        // that order is not ascending, the table is then copied into `out`'s order (a
        // permutation: every entry keeps its bits, and `out` is written once instead of
        // once per source entry at scattered places).
        let kept: Vec<usize> = (0..m).filter(|&k| stride[k] != 0).collect();
        let ascending = kept.windows(2).all(|w| feats[w[0]] < feats[w[1]]);
        let mut work_stride = vec![0usize; m];
        let mut w = 1usize;
        for &k in kept.iter().rev() {
            work_stride[k] = w;
            w *= cards[k];
        }
        let mut temp = Vec::new();
        let acc: &mut [YStat] = if ascending {
            out
        } else {
            temp.resize(size, YStat::default());
            &mut temp
        };
        // the fastest-varying run of summed-out features is a contiguous block
        let mut block = 1usize;
        let mut kk = m;
        while kk > 0 && stride[kk - 1] == 0 {
            kk -= 1;
            block *= cards[kk];
        }
        // above it, the fastest run of kept features: `run` consecutive entries of `acc`
        // (the fastest kept digits of the work order), each fed `block` source entries
        let mut jj = kk;
        let mut run = 1usize;
        while jj > 0 && stride[jj - 1] != 0 {
            jj -= 1;
            run *= cards[jj];
        }
        let add = |s: &mut YStat, x: &T| {
            let x = stat(x);
            s.pos_class += x.pos_class;
            s.neg_class += x.neg_class;
            s.agree_pos += x.agree_pos;
        };
        // with kept features last (no block), the run of summed-out features above them:
        // `drop` source runs of `run` entries each feed the same `run` entries of `acc`,
        // which are walked in tiles so that a tile stays in cache across the runs
        let mut top = jj;
        let mut drop = 1usize;
        if block == 1 {
            while top > 0 && stride[top - 1] == 0 {
                top -= 1;
                drop *= cards[top];
            }
        }
        /// Entries of `acc` per tile (72 KiB of statistics).
        const TILE: usize = 3072;
        // every entry of `acc` receives its source entries one at a time in increasing
        // source order, as a plain pass over `src` would add them
        let mut digits = vec![0usize; top];
        let mut y = 0usize;
        for chunk in src.chunks(drop * run * block) {
            let a = &mut acc[y..y + run];
            if block > 1 {
                for (s, xs) in a.iter_mut().zip(chunk.chunks_exact(block)) {
                    for x in xs {
                        add(s, x);
                    }
                }
            } else {
                for t0 in (0..run).step_by(TILE) {
                    let t1 = (t0 + TILE).min(run);
                    for part in chunk.chunks_exact(run) {
                        for (s, x) in a[t0..t1].iter_mut().zip(&part[t0..t1]) {
                            add(s, x);
                        }
                    }
                }
            }
            for k in (0..top).rev() {
                digits[k] += 1;
                y += work_stride[k];
                if digits[k] < cards[k] {
                    break;
                }
                y -= work_stride[k] * cards[k];
                digits[k] = 0;
            }
        }
        if !ascending {
            // temp in the kept features' radix order -> out in ascending feature order
            let digits: Vec<(usize, usize, usize)> = kept
                .iter()
                .map(|&k| (cards[k], work_stride[k], stride[k]))
                .collect();
            permute(&temp, out, &digits);
        }
    }

    /// The statistics of one base entry `[Pr(x, d), Pr(x, ¬d)]`: its two weights and
    /// `Pr(x)·α(x)` (the weight where the original classifier decides `d`).
    fn base_stat(&self) -> impl Fn(&[f64; 2]) -> YStat + Copy + use<> {
        let t = self.threshold;
        move |&[wd, wn]: &[f64; 2]| YStat {
            pos_class: wd,
            neg_class: wn,
            agree_pos: if decide(wd, wn, t) { wd + wn } else { 0.0 },
        }
    }

    /// `f` of a mutable copy of `subset`'s statistics.
    fn with_stats_mut<R>(&self, subset: u64, f: impl FnOnce(&mut Vec<YStat>) -> R) -> R {
        let mut buf = Vec::new();
        if let Some(t) = self.stats_table(subset, &mut buf) {
            buf.extend_from_slice(&t);
        }
        f(&mut buf)
    }

    /// `f` of `subset`'s statistics, read in place (a cached table is not copied).
    fn with_stats<R>(&self, subset: u64, f: impl FnOnce(&[YStat]) -> R) -> R {
        let mut buf = Vec::new();
        match self.stats_table(subset, &mut buf) {
            Some(t) => f(&t),
            None => f(&buf),
        }
    }

    /// The statistics of `subset` ([`AgreementModel::subset_stats`]): marginalised from
    /// the smallest cached superset, else from the base, into `out` (cleared first). A new
    /// table of at least [`Self::CACHE_MIN`] entries (other than the full set's, which is
    /// the base itself, read directly at 16 instead of 24 bytes an entry) moves from `out`
    /// into the least-recently-used cache and is returned from there (`out` left empty);
    /// so is a cached table of exactly `subset`. `None`: the statistics are in `out`.
    fn stats_table(&self, subset: u64, out: &mut Vec<YStat>) -> Option<std::sync::Arc<Vec<YStat>>> {
        let n = self.cards.len();
        let full: u64 = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let subset = subset & full;
        // the smallest cached superset, else the full table
        let src = {
            let mut c = self
                .cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            c.clock += 1;
            let now = c.clock;
            let best = c
                .entries
                .iter_mut()
                .filter(|e| e.0 & subset == subset)
                .min_by_key(|e| e.1.len());
            best.map(|e| {
                e.2 = now;
                (e.0, std::sync::Arc::clone(&e.1))
            })
        };
        match &src {
            Some((mask, table)) if *mask == subset => {
                out.clear();
                return Some(std::sync::Arc::clone(table));
            }
            Some((mask, table)) => {
                self.marginalise(&mask_to_vec(*mask), table, |s| *s, subset, out);
            }
            None => {
                let stat = self.base_stat();
                self.marginalise(&self.order, &self.base, stat, subset, out);
            }
        }
        if out.len() < Self::CACHE_MIN || (src.is_none() && subset == full) {
            return None;
        }
        let mut c = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if c.entries.iter().any(|e| e.0 == subset) {
            return None;
        }
        let cap = 2 * self.base.len();
        while c.size + out.len() > cap && !c.entries.is_empty() {
            let (k, _) = c
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.2)
                .map(|(k, e)| (k, e.2))
                .unwrap_or((0, 0));
            let e = c.entries.swap_remove(k);
            c.size -= e.1.len();
        }
        if c.size + out.len() > cap {
            return None;
        }
        let now = c.clock;
        c.size += out.len();
        let table = std::sync::Arc::new(std::mem::take(out));
        c.entries.push((subset, std::sync::Arc::clone(&table), now));
        Some(table)
    }
}

/// Copies the table `src` into `dst` with its digits rearranged: digit `j` has
/// `digits[j] = (cards, stride in src, stride in dst)` (both layouts dense). The copy runs
/// in tiles of the digits fastest in either layout (up to [`PERMUTE_RUN`] entries of each),
/// so that both the reads and the writes of a tile stay within a few cache lines per run.
fn permute<T: Copy>(src: &[T], dst: &mut [T], digits: &[(usize, usize, usize)]) {
    let mut by_dst: Vec<usize> = (0..digits.len()).collect();
    by_dst.sort_unstable_by_key(|&j| std::cmp::Reverse(digits[j].2));
    let mut by_src: Vec<usize> = (0..digits.len()).collect();
    by_src.sort_unstable_by_key(|&j| std::cmp::Reverse(digits[j].1));
    // the tile: the fastest digits of dst, then of src, each up to PERMUTE_RUN entries
    let mut tile = vec![false; digits.len()];
    for order in [&by_dst, &by_src] {
        let mut size = 1usize;
        for &j in order.iter().rev() {
            if size >= PERMUTE_RUN {
                break;
            }
            tile[j] = true;
            size *= digits[j].0;
        }
    }
    // the tile's entries in dst order: (dst offset, src offset)
    let inner: Vec<usize> = by_dst.iter().copied().filter(|&j| tile[j]).collect();
    let outer: Vec<usize> = by_dst.iter().copied().filter(|&j| !tile[j]).collect();
    let offsets = |set: &[usize]| {
        let mut offs = vec![(0usize, 0usize)];
        for &j in set {
            let (c, ss, ds) = digits[j];
            offs = offs
                .iter()
                .flat_map(|&(d, s)| (0..c).map(move |t| (d + t * ds, s + t * ss)))
                .collect();
        }
        offs
    };
    let within = offsets(&inner);
    let mut ctr = vec![0usize; outer.len()];
    let (mut d0, mut s0) = (0usize, 0usize);
    loop {
        for &(d, s) in &within {
            dst[d0 + d] = src[s0 + s];
        }
        let mut k = outer.len();
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            let (c, ss, ds) = digits[outer[k]];
            ctr[k] += 1;
            d0 += ds;
            s0 += ss;
            if ctr[k] < c {
                break;
            }
            d0 -= ds * c;
            s0 -= ss * c;
            ctr[k] = 0;
        }
    }
}

/// Entries per run of the fastest digits in [`permute`]'s tiles.
const PERMUTE_RUN: usize = 64;

impl JointAgreement {
    /// `I(D; X_i)` of every feature from one pass over the base table: each single-feature
    /// table accumulates its entries in increasing index order, as [`Self::marginalise`]
    /// does, so every value has the same bits as the per-feature evaluation.
    fn single_feature_information(&self) -> Vec<f64> {
        let n = self.cards.len();
        let cards: Vec<usize> = self.order.iter().map(|&f| self.cards[f]).collect();
        let mut tables: Vec<Vec<YStat>> = self
            .cards
            .iter()
            .map(|&c| vec![YStat::default(); c])
            .collect();
        let mut digits = vec![0usize; n];
        for &[wd, wn] in self.base.iter() {
            for (j, &f) in self.order.iter().enumerate() {
                let s = &mut tables[f][digits[j]];
                s.pos_class += wd;
                s.neg_class += wn;
            }
            for j in (0..n).rev() {
                digits[j] += 1;
                if digits[j] < cards[j] {
                    break;
                }
                digits[j] = 0;
            }
        }
        tables.iter().map(|t| info_gain_of(t)).collect()
    }
}

/// The optima of [`JointAgreement::exhaustive_multi`]: one walk of the subset lattice
/// evaluating every feasible subset's information gain and its MAA at each of several
/// original thresholds.
#[derive(Clone, Debug, PartialEq)]
pub struct ExhaustiveOptima {
    /// Number of feasible subsets evaluated (the empty set included).
    pub subsets: u64,
    /// The feasible subset (mask) of maximum `I(D; Y)` (ties to the smaller mask), and that
    /// value in nats: [`information_gain_selection`]'s choice.
    pub information_gain: (u64, f64),
    /// Per threshold (in the order given): the feasible subset (mask) of maximum MAA (ties
    /// to the smaller mask) and its normalised MAA as the lattice computed it:
    /// [`exhaustive_maa`]'s choice on [`JointAgreement::with_threshold`] of that threshold.
    pub maa: Vec<(u64, f64)>,
}

impl ExhaustiveOptima {
    /// The [`Trimming`] of `subset` on `model` (its MAA and threshold computed by `model`,
    /// as [`exhaustive_maa`] and [`information_gain_selection`] report their choice), with
    /// [`ExhaustiveOptima::subsets`] criterion evaluations.
    pub fn trimming<M: AgreementModel + ?Sized>(&self, model: &M, subset: u64) -> Trimming {
        let a = model.maa(subset);
        Trimming {
            subset: mask_to_vec(subset),
            threshold: a.threshold,
            eca: a.value,
            criterion_evaluations: self.subsets,
            bound_evaluations: 0,
            optimal: true,
        }
    }
}

/// The flat subset lattice (see [`JointAgreement::exhaustive_multi`]): each node's table is
/// one `Vec<f64>` of `width = 2 + thresholds` values per instantiation, `Pr(y, d)`,
/// `Pr(y, ¬d)` and `Pr(y)Q_k(y)` for each threshold `k`; each child sums its parent's
/// entries in the order of [`JointAgreement::map_subsets`]'s lattice, so every value has
/// the same bits.
struct FlatLattice<'a> {
    cards: &'a [usize],
    base: &'a [[f64; 2]],
    /// per base entry, bit `k` = the original classifier's decision at threshold `k`
    decisions: Vec<u16>,
    width: usize,
    /// wanted subsets, ascending; the answers are indexed by position here
    subsets: &'a [u64],
    /// whether a subset is wanted (the family must be downward closed below the root's
    /// descendants that are visited, as [`JointAgreement::map_subsets`] assumes)
    wanted: &'a (dyn Fn(u64) -> bool + Sync),
    /// values per wanted node, from its flat table (`nvalues` of them)
    eval: &'a NodeEval<'a>,
    nvalues: usize,
    /// whether `wanted` is downward closed (every subset of a wanted set is wanted): then a
    /// child whose kept features admit at most one more feature has its subtree summed
    /// block by block from its parent ([`FlatLattice::direct`])
    closed: bool,
    pools: std::sync::Mutex<Vec<Vec<Vec<f64>>>>,
}

/// The evaluation of a wanted lattice node: its values from its flat table.
type NodeEval<'a> = dyn Fn(&[f64], &mut Scratch, &mut [f64]) + Sync + 'a;

/// Per-task buffers of the flat lattice's evaluations.
#[derive(Default)]
struct Scratch {
    stats: Vec<YStat>,
    /// sort keys: a posterior's [`total_order_key`] above the entry's position
    order: Vec<u128>,
    /// [`FlatLattice::direct`]'s rows (each wanted table's entries of one block), the block
    /// it reduces with the buffer a kept feature's sub-block is summed in, and the wanted
    /// table gathered from the rows
    target: Vec<f64>,
    block: (Vec<f64>, Vec<f64>),
    table: Vec<f64>,
}

/// Answers of a lattice walk: subset positions and their `nvalues` values each.
#[derive(Default)]
struct Found {
    index: Vec<u32>,
    values: Vec<f64>,
}

impl FlatLattice<'_> {
    /// Writes the child of `src` (a table over `feats`, `width` values per entry; `None` =
    /// the base) without the feature at position `p` into `dst[..len]` and returns `len`
    /// (`dst` grows when needed and is never cleared). Each value is
    /// `((0 + x_0) + x_1) + …` over the dropped feature's states in order, in one pass;
    /// children of at least [`Self::PAR_VALUES`] values are written in parallel pieces
    /// (each value is computed alone, so the bits do not depend on the split).
    fn child(&self, src: Option<&[f64]>, feats: &[usize], p: usize, dst: &mut Vec<f64>) -> usize {
        let w = self.width;
        let c = self.cards[feats[p]];
        let inner: usize = feats[p + 1..].iter().map(|&g| self.cards[g]).product();
        let rows = match src {
            Some(t) => t.len() / w,
            None => self.base.len(),
        };
        let len = rows / c * w;
        if dst.len() < len {
            dst.resize(len, 0.0);
        }
        if len >= Self::PAR_VALUES {
            let piece = w << 12;
            dst[..len]
                .par_chunks_mut(piece)
                .enumerate()
                .for_each(|(j, d)| self.fill(src, c, inner, d, j * piece));
        } else {
            self.fill(src, c, inner, &mut dst[..len], 0);
        }
        len
    }

    /// Child values of at least this many are computed in parallel pieces.
    const PAR_VALUES: usize = 1 << 20;

    /// The child values `start..start + d.len()` of [`Self::child`] (`c` states of the
    /// dropped feature, `inner` entries below it; `start` and `d.len()` whole entries).
    fn fill(&self, src: Option<&[f64]>, c: usize, inner: usize, d: &mut [f64], start: usize) {
        let w = self.width;
        let bw = inner * w;
        let end = start + d.len();
        let (mut q, mut off) = (start, 0);
        while q < end {
            // block o (one state of the slower features), offset i inside it: the sources
            // are the runs of the c states, bw values apart
            let (o, i) = (q / bw, q % bw);
            let n = (bw - i).min(end - q);
            let out = &mut d[off..off + n];
            match src {
                Some(t) => {
                    let at = o * c * bw + i;
                    if c == 2 {
                        let (r0, r1) = (&t[at..at + n], &t[at + bw..at + bw + n]);
                        for ((a, &x), &y) in out.iter_mut().zip(r0).zip(r1) {
                            *a = (0.0 + x) + y;
                        }
                    } else {
                        for (a, &x) in out.iter_mut().zip(&t[at..at + n]) {
                            *a = 0.0 + x;
                        }
                        for st in 1..c {
                            let r = &t[at + st * bw..at + st * bw + n];
                            for (a, &x) in out.iter_mut().zip(r) {
                                *a += x;
                            }
                        }
                    }
                }
                None => {
                    let k = w - 2;
                    let at = o * c * inner + i / w;
                    let entries = n / w;
                    for st in 0..c {
                        let run = &self.base[at + st * inner..at + st * inner + entries];
                        let bits = &self.decisions[at + st * inner..at + st * inner + entries];
                        let first = st == 0;
                        let add = |a: &mut f64, x: f64| *a = if first { 0.0 } else { *a } + x;
                        for ((a, &[wd, wn]), &b) in out.chunks_mut(w).zip(run).zip(bits) {
                            add(&mut a[0], wd);
                            add(&mut a[1], wn);
                            for j in 0..k {
                                add(&mut a[2 + j], if b >> j & 1 == 1 { wd + wn } else { 0.0 });
                            }
                        }
                    }
                }
            }
            q += n;
            off += n;
        }
    }

    fn pool(&self) -> Vec<Vec<f64>> {
        self.pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
    }

    fn give_back(&self, pool: Vec<Vec<f64>>) {
        self.pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(pool);
    }

    /// The walk below `mask` (table `src` over `feats`, radix order; `from` as in
    /// [`JointAgreement::map_subsets`]'s lattice: children drop a feature at a position
    /// `≥ from`, and only while the features before it are wanted). `depth` (features
    /// dropped so far) indexes `pool`, so a pool's buffer at a depth never outgrows that
    /// depth's tables; the children of large tables run in parallel, each on a pool of its
    /// own.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        mask: u64,
        feats: &[usize],
        src: Option<&[f64]>,
        from: usize,
        depth: usize,
        pool: &mut Vec<Vec<f64>>,
        scratch: &mut Scratch,
        found: &mut Found,
    ) {
        if let Some(k) = (self.wanted)(mask)
            .then(|| self.subsets.binary_search(&mask).ok())
            .flatten()
        {
            let table: Vec<f64>;
            let t = match src {
                Some(t) => t,
                None => {
                    table = self.base_table();
                    &table
                }
            };
            let at = found.values.len();
            found.values.resize(at + self.nvalues, 0.0);
            (self.eval)(t, scratch, &mut found.values[at..]);
            found.index.push(k as u32);
        }
        let len = src.map_or(self.base.len(), |t| t.len() / self.width);
        let staying = |p: usize| feats[..p].iter().fold(0u64, |m, &g| m | 1u64 << g);
        let ps: Vec<usize> = (from..feats.len())
            .filter(|&p| (self.wanted)(staying(p)))
            .collect();
        // children in parallel below the largest tables only (2^20 entries): above, one
        // chain of tables is alive and each child is written in parallel pieces
        // ([`Self::child`]); in parallel there, every task in flight (stolen while another
        // waits) would hold its own chain of the largest tables
        if (1 << 16..1 << 20).contains(&len) && ps.len() > 1 {
            let parts: Vec<Found> = ps
                .par_iter()
                .map(|&p| {
                    let mut pool = self.pool();
                    let mut scratch = Scratch::default();
                    let mut f = Found::default();
                    self.visit_child(mask, feats, src, p, depth, &mut pool, &mut scratch, &mut f);
                    self.give_back(pool);
                    f
                })
                .collect();
            for f in parts {
                found.index.extend(f.index);
                found.values.extend(f.values);
            }
        } else {
            for p in ps {
                self.visit_child(mask, feats, src, p, depth, pool, scratch, found);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn visit_child(
        &self,
        mask: u64,
        feats: &[usize],
        src: Option<&[f64]>,
        p: usize,
        depth: usize,
        pool: &mut Vec<Vec<f64>>,
        scratch: &mut Scratch,
        found: &mut Found,
    ) {
        if self.closed && self.ends_here(feats, p) {
            self.direct(mask, feats, src, p, scratch, found);
            return;
        }
        if pool.len() <= depth {
            pool.resize_with(depth + 1, Vec::new);
        }
        let mut buf = std::mem::take(&mut pool[depth]);
        let len = self.child(src, feats, p, &mut buf);
        let mut rest = feats.to_vec();
        rest.remove(p);
        self.walk(
            mask & !(1u64 << feats[p]),
            &rest,
            Some(&buf[..len]),
            p,
            depth + 1,
            pool,
            scratch,
            found,
        );
        pool[depth] = buf;
    }

    /// Whether the walk below the child without `feats[p]` reaches only its kept
    /// features `feats[..p]` with at most one of the later features: no two features
    /// after `p` can join them together (for a downward-closed `wanted`, then the wanted
    /// nodes below the child are `feats[..p]` and `feats[..p]` with one later feature, and
    /// each of its nodes sums within one block per instantiation of `feats[..p]`), and
    /// there is at least one feature to drop after `p`.
    fn ends_here(&self, feats: &[usize], p: usize) -> bool {
        let staying = feats[..p].iter().fold(0u64, |m, &g| m | 1u64 << g);
        let later = &feats[(p + 1).min(feats.len())..];
        !later.is_empty()
            && later.iter().enumerate().all(|(j, &g)| {
                later[j + 1..]
                    .iter()
                    .all(|&h| !(self.wanted)(staying | 1u64 << g | 1u64 << h))
            })
    }

    /// The walk below the child without `feats[p]` when [`Self::ends_here`], block by
    /// block: for each instantiation `o` of the kept features `feats[..p]`, its block of
    /// `src` (`None` = the base) is summed over `feats[p]` into a small buffer, then the
    /// later features are dropped one after another, slowest first; before a feature `g`
    /// is dropped, each of its states' sub-blocks is summed down (into a second buffer,
    /// the features after `g` dropped the same way) to the entry `(o, state)` of the table of
    /// `feats[..p]` with `g`; what remains is entry `o` of `feats[..p]`'s table. These are
    /// the additions of the walk's chain of tables, in its order (`((0 + x_0) + x_1) + …`
    /// per dropped feature, as [`Self::child`]), so every value has their bits, and no
    /// table larger than the wanted ones is written: the child's subtree reads its
    /// parent's block once. Blocks are summed in parallel when the source is large (each
    /// alone: the same bits for any split).
    #[allow(clippy::too_many_arguments)]
    fn direct(
        &self,
        mask: u64,
        feats: &[usize],
        src: Option<&[f64]>,
        p: usize,
        scratch: &mut Scratch,
        found: &mut Found,
    ) {
        let dropped = feats[p..].iter().fold(0u64, |m, &g| m | 1u64 << g);
        let staying = mask & !dropped;
        let position = |m: u64| {
            (self.wanted)(m)
                .then(|| self.subsets.binary_search(&m).ok())
                .flatten()
        };
        let later = &feats[p + 1..];
        // the wanted tables: (position in `subsets`, offset in a block's row, states of
        // the later feature kept or 1 for `feats[..p]` alone)
        let mut targets: Vec<(usize, usize, usize)> = Vec::new();
        let mut row = 0;
        let mut keeps = vec![None; later.len()];
        for (j, &g) in later.iter().enumerate() {
            if let Some(k) = position(staying | 1u64 << g) {
                keeps[j] = Some(row);
                targets.push((k, row, self.cards[g]));
                row += self.cards[g] * self.width;
            }
        }
        let alone = position(staying);
        if let Some(k) = alone {
            targets.push((k, row, 1));
            row += self.width;
        }
        if targets.is_empty() {
            return;
        }
        let w = self.width;
        let c = self.cards[feats[p]];
        let block: usize = later.iter().map(|&g| self.cards[g]).product();
        let outer: usize = feats[..p].iter().map(|&g| self.cards[g]).product();
        // sums `t[..len * w]` (features `gs`, slowest first) down to its first entry
        let reduce = |t: &mut [f64], gs: &[usize], mut len: usize| {
            for &g in gs {
                let cg = self.cards[g];
                len /= cg;
                let b = len * w;
                if cg == 2 {
                    let (lo, hi) = t.split_at_mut(b);
                    for (a, &y) in lo.iter_mut().zip(&hi[..b]) {
                        *a = (0.0 + *a) + y;
                    }
                } else {
                    // the chain's `0 + x_0` (addition commutes bit for bit)
                    for a in &mut t[..b] {
                        *a += 0.0;
                    }
                    for st in 1..cg {
                        let (lo, hi) = t.split_at_mut(st * b);
                        for (a, &y) in lo[..b].iter_mut().zip(&hi[..b]) {
                            *a += y;
                        }
                    }
                }
            }
        };
        let one = |o: usize, bufs: &mut (Vec<f64>, Vec<f64>), out: &mut [f64]| {
            let (tmp, sub) = bufs;
            tmp.clear();
            tmp.resize(block * w, 0.0);
            self.fill(src, c, block, tmp, o * block * w);
            let mut len = block;
            for (j, &g) in later.iter().enumerate() {
                let cg = self.cards[g];
                let part = len / cg;
                if let Some(at) = keeps[j] {
                    for st in 0..cg {
                        let from = &tmp[st * part * w..(st + 1) * part * w];
                        let d = &mut out[at + st * w..at + (st + 1) * w];
                        let Some((&h, rest)) = later[j + 1..].split_first() else {
                            d.copy_from_slice(from);
                            continue;
                        };
                        // the first drop out of the block (as a child), the others in place
                        let (ch, half) = (self.cards[h], part / self.cards[h]);
                        sub.clear();
                        sub.resize(half * w, 0.0);
                        self.fill(Some(from), ch, half, sub, 0);
                        reduce(sub, rest, half);
                        d.copy_from_slice(&sub[..w]);
                    }
                }
                reduce(&mut tmp[..], &later[j..=j], len);
                len = part;
            }
            if alone.is_some() {
                out[row - w..row].copy_from_slice(&tmp[..w]);
            }
        };
        let mut rows = std::mem::take(&mut scratch.target);
        rows.clear();
        rows.resize(outer * row, 0.0);
        if outer > 1 && outer * c * block * w >= Self::PAR_VALUES {
            rows.par_chunks_mut(row)
                .enumerate()
                .for_each_init(Default::default, |bufs, (o, d)| one(o, bufs, d));
        } else {
            let mut bufs = std::mem::take(&mut scratch.block);
            for (o, d) in rows.chunks_mut(row).enumerate() {
                one(o, &mut bufs, d);
            }
            scratch.block = bufs;
        }
        // each wanted table from the blocks' rows (entries `(o, state)`, `o` slowest)
        let mut table = std::mem::take(&mut scratch.table);
        for &(k, at, states) in &targets {
            table.clear();
            for r in rows.chunks(row) {
                table.extend_from_slice(&r[at..at + states * w]);
            }
            let v = found.values.len();
            found.values.resize(v + self.nvalues, 0.0);
            (self.eval)(&table, scratch, &mut found.values[v..]);
            found.index.push(k as u32);
        }
        scratch.target = rows;
        scratch.table = table;
    }

    /// The base as a flat table (only when the full set itself is wanted).
    fn base_table(&self) -> Vec<f64> {
        let w = self.width;
        let mut t = vec![0.0; self.base.len() * w];
        for ((a, &[wd, wn]), &b) in t.chunks_mut(w).zip(self.base).zip(&self.decisions) {
            a[0] = wd;
            a[1] = wn;
            for j in 0..w - 2 {
                a[2 + j] = if b >> j & 1 == 1 { wd + wn } else { 0.0 };
            }
        }
        t
    }
}

impl JointAgreement {
    /// The flat lattice walk behind [`Self::exhaustive_multi`] and [`Self::map_subsets`]:
    /// `eval`'s `nvalues` values of every subset of `subsets` (ascending) that the lattice
    /// reaches (all of them when `wanted` is downward closed), by position. `closed` says
    /// that `wanted` is downward closed, which allows [`FlatLattice::direct`]'s shortcut
    /// (the same bits either way).
    fn flat_lattice(
        &self,
        thresholds: &[f64],
        subsets: &[u64],
        wanted: &(dyn Fn(u64) -> bool + Sync),
        nvalues: usize,
        eval: &NodeEval<'_>,
        closed: bool,
    ) -> (Vec<bool>, Vec<f64>) {
        let decisions: Vec<u16> = self
            .base
            .par_iter()
            .map(|&[wd, wn]| {
                thresholds
                    .iter()
                    .enumerate()
                    .fold(0u16, |b, (j, &t)| b | u16::from(decide(wd, wn, t)) << j)
            })
            .collect();
        let lat = FlatLattice {
            cards: &self.cards,
            base: &self.base,
            decisions,
            width: 2 + thresholds.len(),
            subsets,
            wanted,
            eval,
            nvalues,
            closed,
            pools: std::sync::Mutex::default(),
        };
        let n = self.cards.len();
        let full: u64 = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let mut found = Found::default();
        lat.walk(
            full,
            &self.order,
            None,
            0,
            0,
            &mut Vec::new(),
            &mut Scratch::default(),
            &mut found,
        );
        // each subset's values at its position (NaN where the lattice did not reach it)
        let mut values = vec![f64::NAN; subsets.len() * nvalues];
        let mut reached = vec![false; subsets.len()];
        for (j, &k) in found.index.iter().enumerate() {
            let k = k as usize;
            reached[k] = true;
            values[k * nvalues..(k + 1) * nvalues]
                .copy_from_slice(&found.values[j * nvalues..(j + 1) * nvalues]);
        }
        (reached, values)
    }

    /// Exhaustive search at several thresholds at once: one walk of the subset lattice
    /// (as [`AgreementModel::map_subsets`]) in which each table carries `Pr(y, d)`,
    /// `Pr(y, ¬d)` and `Pr(y)Q(y)` at every threshold of `thresholds`, so each feasible
    /// subset's marginal is built once and gives its information gain and its MAA at each
    /// threshold. Every value has the bits of the separate searches
    /// ([`information_gain_selection`] on this model, [`exhaustive_maa`] on
    /// [`Self::with_threshold`] of each threshold), so the same subsets are chosen, ties
    /// included; [`ExhaustiveOptima::trimming`] turns a choice into their [`Trimming`].
    ///
    /// # Arguments
    /// - `costs[i] > 0` per feature, `budget ≥ 0` (as [`feasible_subsets`]);
    /// - `thresholds`: at most 16 original thresholds in `[0, 1]`.
    ///
    /// # Errors
    /// As [`feasible_subsets`]; [`BayesError::InvalidQuery`] for a threshold outside
    /// `[0, 1]` or more than 16 thresholds.
    ///
    /// # Complexity
    /// The lattice's work (the sum of its nodes' parents' sizes) times `2 + thresholds`
    /// values per entry, instead of `3` values per entry once per search; memory: one table
    /// per lattice depth and thread.
    pub fn exhaustive_multi(
        &self,
        costs: &[f64],
        budget: f64,
        thresholds: &[f64],
    ) -> Result<ExhaustiveOptima, BayesError> {
        check_costs(self.n_features(), costs, budget)?;
        if thresholds.len() > 16 || thresholds.iter().any(|t| !(0.0..=1.0).contains(t)) {
            return Err(BayesError::query("at most 16 thresholds, each in [0, 1]"));
        }
        let subsets = feasible_subsets(costs, budget)?;
        let n = costs.len();
        let wanted = |m: u64| {
            let c: f64 = (0..n).filter(|&i| m >> i & 1 == 1).map(|i| costs[i]).sum();
            c <= budget + COST_EPS
        };
        let k = thresholds.len();
        let w = 2 + k;
        let total = self.total;
        let eval = |t: &[f64], s: &mut Scratch, out: &mut [f64]| {
            s.stats.clear();
            s.stats.extend(t.chunks(w).map(|e| YStat {
                pos_class: e[0],
                neg_class: e[1],
                agree_pos: 0.0,
            }));
            out[0] = info_gain_of(&s.stats);
            // the order of `sweep`'s (stable) sort by posterior, shared by every
            // threshold: keys (the posterior's `total_cmp` rank, position) are distinct,
            // so an unstable sort of them is that stable order
            s.order.clear();
            s.order.extend(s.stats.iter().enumerate().map(|(i, s)| {
                let m = s.pos_class + s.neg_class;
                let post = if m > 0.0 { s.pos_class / m } else { 0.0 };
                u128::from(total_order_key(post)) << 32 | i as u128
            }));
            s.order.sort_unstable();
            for j in 0..k {
                for (d, &key) in s.stats.iter_mut().zip(&s.order) {
                    let i = key as u32 as usize;
                    let e = &t[i * w..(i + 1) * w];
                    *d = YStat {
                        pos_class: e[0],
                        neg_class: e[1],
                        agree_pos: e[2 + j],
                    };
                }
                // already in sweep's order: its stable sort leaves it so
                out[1 + j] = sweep(&mut s.stats).0 / total;
            }
        };
        let (reached, values) =
            self.flat_lattice(thresholds, &subsets, &wanted, 1 + k, &eval, true);
        let mut optima = ExhaustiveOptima {
            subsets: subsets.len() as u64,
            information_gain: (0, f64::NEG_INFINITY),
            maa: vec![(0, f64::NEG_INFINITY); k],
        };
        let mut buf = Vec::new();
        for (j, &m) in subsets.iter().enumerate() {
            let v = if reached[j] {
                values[j * (1 + k)..(j + 1) * (1 + k)].to_vec()
            } else {
                // not reached (cannot happen for a downward-closed family): one evaluation
                let mut v = vec![self.information_gain(m)];
                for &t in thresholds {
                    let model = self.with_threshold(t)?;
                    model.subset_stats(m, &mut buf);
                    v.push(sweep(&mut buf).0 / total);
                }
                v
            };
            // ties to the smaller mask: masks ascend, so only a larger value replaces
            let better = |b: &(u64, f64), x: f64| x > b.1 || (x == b.1 && m < b.0);
            if better(&optima.information_gain, v[0]) {
                optima.information_gain = (m, v[0]);
            }
            for (o, &x) in optima.maa.iter_mut().zip(&v[1..]) {
                if better(o, x) {
                    *o = (m, x);
                }
            }
        }
        Ok(optima)
    }
}

impl AgreementModel for JointAgreement {
    fn map_subsets(
        &self,
        subsets: &[u64],
        f: &(dyn Fn(&mut Vec<YStat>) -> f64 + Sync),
    ) -> Vec<f64> {
        let n = self.cards.len();
        let full: u64 = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        let mut sorted: Vec<u64> = subsets.iter().map(|&m| m & full).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let set: std::collections::HashSet<u64> = sorted.iter().copied().collect();
        let wanted = |m: u64| set.contains(&m);
        let eval = |t: &[f64], s: &mut Scratch, out: &mut [f64]| {
            s.stats.clear();
            s.stats.extend(t.chunks(3).map(|e| YStat {
                pos_class: e[0],
                neg_class: e[1],
                agree_pos: e[2],
            }));
            out[0] = f(&mut s.stats);
        };
        // downward closed: every subset without one of its features is asked for too
        let closed = sorted.iter().all(|&m| {
            (0..n)
                .filter(|&i| m >> i & 1 == 1)
                .all(|i| set.contains(&(m & !(1u64 << i))))
        });
        let (reached, values) =
            self.flat_lattice(&[self.threshold], &sorted, &wanted, 1, &eval, closed);
        subsets
            .par_iter()
            .map_init(Vec::new, |buf, &m| {
                match sorted.binary_search(&(m & full)) {
                    Ok(k) if reached[k] => values[k],
                    _ => {
                        self.subset_stats(m, buf);
                        f(buf)
                    }
                }
            })
            .collect()
    }
    fn mpa(&self, subset: u64) -> f64 {
        self.with_stats(subset, mpa_of) / self.total
    }
    fn eca(&self, subset: u64, t: f64) -> f64 {
        self.with_stats(subset, |b| eca_of(b, t)) / self.total
    }
    fn maa(&self, subset: u64) -> Agreement {
        let (v, t) = self.with_stats_mut(subset, |b| sweep(b));
        Agreement {
            value: v / self.total,
            threshold: t,
        }
    }
    fn information_gain(&self, subset: u64) -> f64 {
        self.with_stats(subset, info_gain_of)
    }
    fn feature_information(&self, i: usize) -> f64 {
        self.information
            .get_or_init(|| self.single_feature_information())
            .get(i)
            .copied()
            .unwrap_or(0.0)
    }
    fn n_features(&self) -> usize {
        self.cards.len()
    }
    fn threshold(&self) -> f64 {
        self.threshold
    }
    fn total_weight(&self) -> f64 {
        self.total
    }
    fn conditionally_independent(&self) -> bool {
        false
    }
    fn subset_stats(&self, subset: u64, out: &mut Vec<YStat>) {
        if let Some(t) = self.stats_table(subset, out) {
            out.extend_from_slice(&t);
        }
    }
}

/// The naive Bayes path: `Pr(d | y, z)` is a sum of per-feature log-likelihood ratios and
/// `Z` is independent of `Y` given `D`, so
/// `Pr(y) Q(y) = Σ_c Pr(y, c) Pr(LLR(Z) ≥ τ − LLR(y) | c)`; the distribution of `LLR(Z)`
/// is enumerated meet-in-the-middle (`Z = Z₁ ∪ Z₂`, `Z₂` sorted once with suffix sums,
/// one binary search per `(y, z₁)`), so an evaluation costs
/// `O(|y| · |z₁| · log |z₂| + |z₂| log |z₂|)` instead of `O(|x|)`.
#[derive(Clone, Debug)]
pub struct NaiveBayesAgreement {
    cards: Vec<usize>,
    /// per feature, per state: (llr, θ_pos, θ_neg)
    theta: Vec<Vec<(f64, f64, f64)>>,
    mass_pos: Vec<f64>,
    mass_neg: Vec<f64>,
    prior_pos: f64,
    prior_neg: f64,
    tau: f64,
    total: f64,
    threshold: f64,
    has_zero: bool,
}

impl NaiveBayesAgreement {
    /// Prepares the trimming of a binary-class categorical naive Bayes.
    ///
    /// # Arguments
    /// - `positive_state`: the class state `d` the rule tests;
    /// - `threshold`: `T ∈ [0, 1]`.
    ///
    /// # Errors
    /// [`BayesError::InvalidQuery`] if the class is not binary, a feature is a count
    /// feature, there are more than 63 features, or `T ∉ [0, 1]`.
    pub fn new(nb: &NaiveBayes, positive_state: usize, threshold: f64) -> Result<Self, BayesError> {
        if nb.n_classes() != 2 || positive_state > 1 {
            return Err(BayesError::query(
                "the naive Bayes path needs a binary class",
            ));
        }
        if !(0.0..=1.0).contains(&threshold) {
            return Err(BayesError::query("threshold outside [0, 1]"));
        }
        if nb.n_features() > 63 {
            return Err(BayesError::query("at most 63 features"));
        }
        let neg = 1 - positive_state;
        let mut cards = Vec::new();
        let mut theta = Vec::new();
        let mut mass_pos = Vec::new();
        let mut mass_neg = Vec::new();
        for (i, k) in nb.feature_kinds().iter().enumerate() {
            let FeatureKind::Categorical { states } = *k else {
                return Err(BayesError::query(
                    "the naive Bayes path needs categorical features",
                ));
            };
            cards.push(states);
            let mut t = Vec::with_capacity(states);
            for s in 0..states {
                let (a, b) = (nb.prob(i, positive_state, s), nb.prob(i, neg, s));
                let llr = if a == 0.0 && b == 0.0 {
                    0.0
                } else {
                    a.ln() - b.ln()
                };
                t.push((llr, a, b));
            }
            mass_pos.push(t.iter().map(|e| e.1).sum());
            mass_neg.push(t.iter().map(|e| e.2).sum());
            theta.push(t);
        }
        let prior_pos = nb.class_prior()[positive_state];
        let prior_neg = nb.class_prior()[neg];
        let logit = if threshold <= 0.0 {
            f64::NEG_INFINITY
        } else if threshold >= 1.0 {
            f64::INFINITY
        } else {
            (threshold / (1.0 - threshold)).ln()
        };
        let tau = logit - DECISION_TOL - prior_pos.ln() + prior_neg.ln();
        let total = prior_pos * mass_pos.iter().product::<f64>()
            + prior_neg * mass_neg.iter().product::<f64>();
        if !total.is_finite() || theta.iter().flatten().any(|t| t.0.is_nan()) {
            return Err(BayesError::network(format!(
                "the total weight of the naive Bayes model is {total} or a likelihood ratio \
                 is not a number (entries too large: rows should sum to 1)"
            )));
        }
        if total <= 0.0 {
            return Err(BayesError::ZeroProbabilityEvidence);
        }
        let has_zero = prior_pos <= 0.0
            || prior_neg <= 0.0
            || theta
                .iter()
                .flatten()
                .any(|t: &(f64, f64, f64)| t.1 <= 0.0 || t.2 <= 0.0);
        Ok(Self {
            has_zero,
            cards,
            theta,
            mass_pos,
            mass_neg,
            prior_pos,
            prior_neg,
            tau,
            total,
            threshold,
        })
    }

    /// Checks that a branch-and-bound search ([`BranchAndBound::run`] and
    /// [`BranchAndBound::run_limited`]) over this model with `costs` and `budget` enumerates
    /// no table of more than `max_entries` instantiations (24 bytes each), so it cannot
    /// exhaust memory: the product of all cardinalities when some probability is zero
    /// (then every evaluation enumerates), else its square root (the split evaluations)
    /// and the product over the largest feasible subset (the final MAA; bounded by the
    /// largest cardinalities of as many features as the cheapest ones that fit).
    ///
    /// # Errors
    /// [`BayesError::TooLarge`] with the estimated entries (rounded down).
    pub fn check_search_size(
        &self,
        costs: &[f64],
        budget: f64,
        max_entries: f64,
    ) -> Result<(), BayesError> {
        let too_large = |entries: f64| BayesError::TooLarge {
            entries: entries.min(u128::MAX as f64) as u128,
            limit: max_entries as u128,
        };
        let all: f64 = self.cards.iter().map(|&k| k as f64).product();
        let split = if self.has_zero { all } else { all.sqrt() };
        if split > max_entries {
            return Err(too_large(split));
        }
        let mut sorted_costs = costs.to_vec();
        sorted_costs.sort_by(f64::total_cmp);
        let mut spent = 0.0;
        let fit = sorted_costs
            .iter()
            .take_while(|&&c| {
                spent += c;
                spent <= budget + COST_EPS
            })
            .count();
        let mut cards: Vec<f64> = self.cards.iter().map(|&k| k as f64).collect();
        cards.sort_by(|a, b| b.total_cmp(a));
        let largest: f64 = cards.iter().take(fit).product();
        if largest > max_entries {
            return Err(too_large(largest));
        }
        Ok(())
    }

    /// `(llr, w_pos, w_neg)` for every instantiation of `features` (first feature slowest).
    fn enumerate(&self, features: &[usize], start: (f64, f64, f64)) -> Vec<(f64, f64, f64)> {
        let size: usize = features.iter().map(|&f| self.cards[f]).product();
        let mut v = Vec::with_capacity(size);
        v.push(start);
        for &f in features {
            let old = std::mem::take(&mut v);
            v.reserve(old.len() * self.cards[f]);
            for e in &old {
                for t in &self.theta[f] {
                    v.push((e.0 + t.0, e.1 * t.1, e.2 * t.2));
                }
            }
        }
        v
    }

    /// `MPA(subset)` by the segment algorithm (see [`AgreementModel::mpa`], which picks
    /// the cheaper of this and [`NaiveBayesAgreement::mpa_enumerated`]); exposed for tests
    /// and benches. Requires no zero CPT entries for exactness at `±∞` log-ratios.
    #[must_use]
    pub fn mpa_segmented(&self, subset: u64) -> f64 {
        let n = self.cards.len();
        let ys: Vec<usize> = (0..n).filter(|&i| subset >> i & 1 == 1).collect();
        let zs: Vec<usize> = (0..n).filter(|&i| subset >> i & 1 == 0).collect();
        self.mpa_by_segments(&ys, &zs) / self.total
    }

    /// `MPA(subset)` by enumerating `y` with the meet-in-the-middle `LLR(Z)` distribution.
    #[must_use]
    pub fn mpa_enumerated(&self, subset: u64) -> f64 {
        let mut buf = Vec::new();
        self.subset_stats(subset, &mut buf);
        mpa_of(&buf) / self.total
    }

    /// Estimated work of the two MPA algorithms for `|Y|`, `|Z|` instantiation counts.
    fn costs(&self, ys: &[usize], zs: &[usize]) -> (f64, f64) {
        let ysize: f64 = ys.iter().map(|&i| self.cards[i] as f64).product();
        let zsize: f64 = zs.iter().map(|&i| self.cards[i] as f64).product();
        let z2 = zsize.sqrt().max(1.0);
        let z1 = zsize / z2;
        let a = ysize * (ysize.log2() + 1.0) + z1 * (ysize + z2) + z2 * (z2.log2() + 1.0);
        let y2 = ysize.sqrt().max(1.0);
        let y1 = ysize / y2;
        let subs = 2.0 * (zsize + 1.0);
        let b = zsize * (zsize.log2() + 1.0)
            + subs * (y1 + y2)
            + y1 * (y1.log2() + 1.0)
            + y2 * (y2.log2() + 1.0);
        (a, b)
    }

    /// Unnormalised `MPA(Y)` without enumerating `y`'s instantiations one by one: `Y` is
    /// split meet-in-the-middle (`Y₁` enumerated, `Y₂` sorted by LLR with prefix sums of
    /// its class weights). `Q` depends on `y` only through `L = LLR(y)` and is a step
    /// function of `L` with a break at each `τ − LLR(z)`; between breaks,
    /// `max(Pr(y)Q(y), Pr(y)(1 − Q(y)))` is the larger of two linear forms in
    /// `(Pr(y, d), Pr(y, ¬d))`, whose crossing (`Pr(y,d)/Pr(y,¬d) = ρ e^L`) adds at most one
    /// more break. Each `(y₁, segment)` pair is then two binary searches in `Y₂`.
    fn mpa_by_segments(&self, ys: &[usize], zs: &[usize]) -> f64 {
        let (mz_pos, mz_neg) = zs.iter().fold((1.0, 1.0), |(a, b), &i| {
            (a * self.mass_pos[i], b * self.mass_neg[i])
        });
        let mut zl = self.enumerate(zs, (0.0, 1.0, 1.0));
        // breakpoints b = τ − L_z ascending (L_z descending)
        zl.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        // segments: (lo, gp, gn) with g = weight of z with τ − L_z ≤ L, for L ≥ lo
        let mut segs: Vec<(f64, f64, f64)> = vec![(f64::NEG_INFINITY, 0.0, 0.0)];
        let (mut gp, mut gn) = (0.0, 0.0);
        let mut k = 0;
        while k < zl.len() {
            let b = self.tau - zl[k].0;
            let start = k;
            // `k == start` always advances (a NaN breakpoint never equals itself)
            while k < zl.len() && (k == start || self.tau - zl[k].0 == b) {
                gp += zl[k].1;
                gn += zl[k].2;
                k += 1;
            }
            segs.push((b, gp, gn));
        }
        // sub-segments with a fixed decision: (lo, coef_pos, coef_neg)
        let ln_rho = self.prior_pos.ln() - self.prior_neg.ln();
        let mut subs: Vec<(f64, f64, f64)> = Vec::with_capacity(2 * segs.len());
        for (j, &(lo, gp, gn)) in segs.iter().enumerate() {
            let hi = segs.get(j + 1).map_or(f64::INFINITY, |s| s.0);
            let pos = (gp, gn);
            let neg = (mz_pos - gp, mz_neg - gn);
            // positive wins iff a_p (2gp − Mp) + a_n (2gn − Mn) ≥ 0, a_p/a_n = ρ e^L
            let (a, b) = (2.0 * gp - mz_pos, 2.0 * gn - mz_neg);
            if a > 0.0 && b < 0.0 {
                // positive for L ≥ ln(−b/a) − ln ρ
                let s = (-b / a).ln() - ln_rho;
                if s <= lo {
                    subs.push((lo, pos.0, pos.1));
                } else if s >= hi {
                    subs.push((lo, neg.0, neg.1));
                } else {
                    subs.push((lo, neg.0, neg.1));
                    subs.push((s, pos.0, pos.1));
                }
            } else if a < 0.0 && b > 0.0 {
                // positive for L ≤ ln(b/−a) − ln ρ (does not happen by Claim 1, kept exact)
                let s = (b / -a).ln() - ln_rho;
                if s <= lo {
                    subs.push((lo, neg.0, neg.1));
                } else if s >= hi {
                    subs.push((lo, pos.0, pos.1));
                } else {
                    subs.push((lo, pos.0, pos.1));
                    subs.push((s, neg.0, neg.1));
                }
            } else if a >= 0.0 && b >= 0.0 {
                subs.push((lo, pos.0, pos.1));
            } else {
                subs.push((lo, neg.0, neg.1));
            }
        }
        // split Y: Y2 about sqrt(|Y|) instantiations
        let ysize: f64 = ys.iter().map(|&i| self.cards[i] as f64).product();
        let mut split = ys.len();
        let mut y2size = 1.0;
        while split > 0 && y2size * y2size < ysize {
            split -= 1;
            y2size *= self.cards[ys[split]] as f64;
        }
        let (y1f, y2f) = ys.split_at(split);
        let mut y2 = self.enumerate(y2f, (0.0, 1.0, 1.0));
        y2.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut pre_pos = vec![0.0; y2.len() + 1];
        let mut pre_neg = vec![0.0; y2.len() + 1];
        for k in 0..y2.len() {
            pre_pos[k + 1] = pre_pos[k] + y2[k].1;
            pre_neg[k + 1] = pre_neg[k] + y2[k].2;
        }
        let mut y1 = self.enumerate(y1f, (0.0, self.prior_pos, self.prior_neg));
        y1.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        // ptr[j] = first index in Y2 with L ≥ subs[j + 1].lo − L1; falls as L1 rises
        let mut ptr = vec![y2.len(); subs.len().saturating_sub(1)];
        let mut total = 0.0;
        for &(l1, ap, an) in &y1 {
            let mut lo_idx = 0;
            for (j, &(_, cp, cn)) in subs.iter().enumerate() {
                let hi_idx = if j + 1 < subs.len() {
                    let t = subs[j + 1].0 - l1;
                    let p = &mut ptr[j];
                    while *p > 0 && y2[*p - 1].0 >= t {
                        *p -= 1;
                    }
                    (*p).max(lo_idx)
                } else {
                    y2.len()
                };
                if hi_idx > lo_idx {
                    total += ap * cp * (pre_pos[hi_idx] - pre_pos[lo_idx])
                        + an * cn * (pre_neg[hi_idx] - pre_neg[lo_idx]);
                }
                lo_idx = hi_idx;
            }
        }
        total
    }
}

impl AgreementModel for NaiveBayesAgreement {
    fn feature_information(&self, i: usize) -> f64 {
        // class weights Pr(d) Pr(x_i | d), Pr(¬d) Pr(x_i | ¬d): O(|X_i|)
        let stats: Vec<YStat> = self.theta[i]
            .iter()
            .map(|&(_, a, b)| YStat {
                pos_class: self.prior_pos * a,
                neg_class: self.prior_neg * b,
                agree_pos: 0.0,
            })
            .collect();
        info_gain_of(&stats)
    }

    fn mpa(&self, subset: u64) -> f64 {
        let n = self.cards.len();
        let ys: Vec<usize> = (0..n).filter(|&i| subset >> i & 1 == 1).collect();
        let zs: Vec<usize> = (0..n).filter(|&i| subset >> i & 1 == 0).collect();
        let (a, b) = self.costs(&ys, &zs);
        if self.has_zero || a <= b {
            self.mpa_enumerated(subset)
        } else {
            self.mpa_by_segments(&ys, &zs) / self.total
        }
    }

    fn n_features(&self) -> usize {
        self.cards.len()
    }
    fn threshold(&self) -> f64 {
        self.threshold
    }
    fn total_weight(&self) -> f64 {
        self.total
    }
    fn conditionally_independent(&self) -> bool {
        true
    }
    fn subset_stats(&self, subset: u64, out: &mut Vec<YStat>) {
        let n = self.cards.len();
        let ys: Vec<usize> = (0..n).filter(|&i| subset >> i & 1 == 1).collect();
        let zs: Vec<usize> = (0..n).filter(|&i| subset >> i & 1 == 0).collect();
        let (mz_pos, mz_neg) = zs.iter().fold((1.0, 1.0), |(a, b), &i| {
            (a * self.mass_pos[i], b * self.mass_neg[i])
        });
        // split Z: Z2 gets features until its size reaches about sqrt(|Z|)
        let zsize: f64 = zs.iter().map(|&i| self.cards[i] as f64).product();
        let mut split = zs.len();
        let mut z2size = 1.0;
        while split > 0 && z2size * z2size < zsize {
            split -= 1;
            z2size *= self.cards[zs[split]] as f64;
        }
        let (z1f, z2f) = zs.split_at(split);
        let mut z2 = self.enumerate(z2f, (0.0, 1.0, 1.0));
        z2.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut suf_pos = vec![0.0; z2.len() + 1];
        let mut suf_neg = vec![0.0; z2.len() + 1];
        for k in (0..z2.len()).rev() {
            suf_pos[k] = suf_pos[k + 1] + z2[k].1;
            suf_neg[k] = suf_neg[k + 1] + z2[k].2;
        }
        let z1 = self.enumerate(z1f, (0.0, 1.0, 1.0));
        let mut yl = self.enumerate(&ys, (0.0, self.prior_pos, self.prior_neg));
        // y ascending by LLR: for a fixed z1 the threshold τ − L_y − L_z1 falls as L_y
        // rises, so the cut in Z2 only moves left (two pointers instead of searches)
        yl.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut agree = vec![0.0; yl.len()];
        for &(l1, w1p, w1n) in &z1 {
            let mut k = z2.len();
            for (j, &(ly, ap, an)) in yl.iter().enumerate() {
                let t = self.tau - ly - l1;
                while k > 0 && z2[k - 1].0 >= t {
                    k -= 1;
                }
                agree[j] += ap * w1p * suf_pos[k] + an * w1n * suf_neg[k];
            }
        }
        out.clear();
        out.extend(yl.iter().zip(&agree).map(|(&(_, ap, an), &a)| YStat {
            pos_class: ap * mz_pos,
            neg_class: an * mz_neg,
            agree_pos: a,
        }));
    }
}

/// The answer of a trimming search.
#[derive(Clone, Debug, PartialEq)]
pub struct Trimming {
    /// The chosen features (indices into the classifier's features, ascending).
    pub subset: Vec<usize>,
    /// The trimmed classifier's threshold `T'`.
    pub threshold: f64,
    /// Its ECA with the original classifier (normalised by the total weight).
    pub eca: f64,
    /// Number of MAA (or, for fixed-threshold search, E-SDP) evaluations.
    pub criterion_evaluations: u64,
    /// Number of MPA upper-bound evaluations.
    pub bound_evaluations: u64,
    /// Whether the search finished, so `subset` is proven optimal; `false` when a
    /// [`SearchLimits`] limit stopped [`BranchAndBound::run_limited`] early (then `subset`
    /// is the best subset found so far).
    pub optimal: bool,
}

impl Trimming {
    /// All evaluations (criterion + bound), the paper's "# Eval".
    #[must_use]
    pub fn evaluations(&self) -> u64 {
        self.criterion_evaluations + self.bound_evaluations
    }
}

/// The subset `subset` as ascending indices.
#[must_use]
pub fn mask_to_vec(subset: u64) -> Vec<usize> {
    (0..64).filter(|&i| subset >> i & 1 == 1).collect()
}

/// The mask of the indices `features`.
///
/// # Panics
/// If an index is ≥ 64.
#[must_use]
pub fn vec_to_mask(features: &[usize]) -> u64 {
    features.iter().fold(0u64, |m, &i| m | (1u64 << i))
}

fn check_costs(n: usize, costs: &[f64], budget: f64) -> Result<(), BayesError> {
    if costs.len() != n {
        return Err(BayesError::query(format!(
            "{} costs for {n} features",
            costs.len()
        )));
    }
    if costs.iter().any(|c| !(c.is_finite() && *c > 0.0)) || !budget.is_finite() || budget < 0.0 {
        return Err(BayesError::query(
            "costs must be positive and the budget non-negative",
        ));
    }
    Ok(())
}

const COST_EPS: f64 = 1e-9;

/// The order in which [`BranchAndBound`] branches on features (the paper does not fix one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FeatureOrder {
    /// The classifier's own feature order.
    Given,
    /// Decreasing single-feature `MPA({X_i})` (ties by index): strong features are
    /// included first, so a good incumbent is found at once, and excluded early in the
    /// other branches, where the bound `MPA(X \ E)` then drops fastest. Costs `n` MPA
    /// evaluations (counted as bound evaluations).
    DecreasingMpa,
    /// Decreasing single-feature mutual information `I(D; X_i)`
    /// ([`AgreementModel::feature_information`]; ties by index): the same idea without
    /// criterion evaluations (in naive Bayes it is read off the CPTs in `O(|X_i|)`).
    #[default]
    DecreasingInformation,
}

/// Branch-and-bound trimming (Algorithm 1 of Choi & Van den Broeck 2018).
///
/// Depth-first over a binary tree (at depth `i`, first include the `i`-th feature of the
/// branching order, then exclude it). At an include node with subset `I` within budget,
/// `MAA(I)` is computed — for every such node in general networks, and for naive Bayes
/// (`model.conditionally_independent()`) only when `I` exhausts the budget (no feature
/// outside `I` still fits), since there MAA = MPA is monotone (Proposition 3). At an
/// exclude node the subtree's subsets all lie inside `U = I ∪ R`, `R` = the undecided
/// features that still fit the remaining budget on their own; the bound `MPA(U)`
/// (Corollary 1 with Proposition 2: `U ⊆ X \ E`, equal to it while every undecided
/// feature fits, so `U` may be over budget) prunes the subtree when `≤` the best MAA so far.
///
/// Three exact refinements keep the search from spending more evaluations than the
/// subtree holds (without them branch and bound evaluated 50 subsets on bupa where
/// exhaustive search evaluates 22):
/// 1. a node where no undecided feature fits is a leaf (its subtree is `I` alone, already
///    evaluated): no more bounds along the chain of exclusions below a full `I`;
/// 2. in naive Bayes, when `U` itself fits the budget, `MPA(U) = MAA(U)` is the subtree's
///    optimum (monotone): one criterion evaluation closes the subtree;
/// 3. in general networks, when `R` has one feature the subtree holds one unevaluated
///    subset, which is evaluated instead of bounded.
///
/// | field | default | meaning |
/// |---|---|---|
/// | `order` | [`FeatureOrder::DecreasingInformation`] | branching order (with [`FeatureOrder::DecreasingMpa`], its `n` single-feature MPAs count as bound evaluations) |
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BranchAndBound {
    /// The branching order.
    pub order: FeatureOrder,
}

/// [`BranchAndBound::run`] with the default settings.
///
/// # Errors
/// As [`BranchAndBound::run`].
pub fn branch_and_bound<M: AgreementModel + ?Sized>(
    model: &M,
    costs: &[f64],
    budget: f64,
) -> Result<Trimming, BayesError> {
    BranchAndBound::default().run(model, costs, budget)
}

impl BranchAndBound {
    /// Finds the feasible subset of maximum MAA and a threshold realising it.
    ///
    /// # Arguments
    /// - `costs[i] > 0` per feature, `budget ≥ 0` (a subset is feasible iff its cost sum
    ///   is `≤ budget + 1e-9`).
    ///
    /// # Returns
    /// The optimal subset, a threshold realising it (from the sweep, Algorithm 2), its ECA,
    /// and the evaluation counts.
    ///
    /// # Errors
    /// [`BayesError::InvalidQuery`] for bad costs or budget.
    ///
    /// # Complexity
    /// Worst case `O(2^n)` evaluations; in practice far fewer (see `docs/srl-bayes.md`).
    pub fn run<M: AgreementModel + ?Sized>(
        &self,
        model: &M,
        costs: &[f64],
        budget: f64,
    ) -> Result<Trimming, BayesError> {
        self.run_limited(model, costs, budget, SearchLimits::default(), &mut |_| {})
    }

    /// [`BranchAndBound::run`] with limits on the search and a progress observer.
    ///
    /// `observer` is called after every evaluation (criterion or bound) with the counts so
    /// far, the best agreement found and the time spent; it must be cheap (a caller that
    /// draws a progress bar should rely on the bar's own rate limit). When a limit of
    /// `limits` is reached the search stops and the best subset found so far is returned
    /// with [`Trimming::optimal`] `false` (the result is then **not** proven optimal; its
    /// MAA and threshold are still exact for that subset). Without limits the search, its
    /// counts and its result are exactly those of [`BranchAndBound::run`].
    ///
    /// # Errors
    /// As [`BranchAndBound::run`].
    pub fn run_limited<M: AgreementModel + ?Sized>(
        &self,
        model: &M,
        costs: &[f64],
        budget: f64,
        limits: SearchLimits,
        observer: &mut dyn FnMut(&SearchProgress),
    ) -> Result<Trimming, BayesError> {
        let n = model.n_features();
        check_costs(n, costs, budget)?;
        let mut mpa_evals = 0u64;
        let order: Vec<usize> = match self.order {
            FeatureOrder::Given => (0..n).collect(),
            FeatureOrder::DecreasingMpa => {
                let single: Vec<f64> = (0..n).map(|i| model.mpa(1u64 << i)).collect();
                mpa_evals += n as u64;
                let mut o: Vec<usize> = (0..n).collect();
                o.sort_by(|&a, &b| single[b].total_cmp(&single[a]).then(a.cmp(&b)));
                o
            }
            FeatureOrder::DecreasingInformation => {
                let single: Vec<f64> = (0..n).map(|i| model.feature_information(i)).collect();
                let mut o: Vec<usize> = (0..n).collect();
                o.sort_by(|&a, &b| single[b].total_cmp(&single[a]).then(a.cmp(&b)));
                o
            }
        };
        let mut st = State {
            model,
            costs,
            budget,
            n,
            order,
            independent: model.conditionally_independent(),
            best: f64::NEG_INFINITY,
            best_subset: 0,
            found: false,
            maa_evals: 0,
            mpa_evals,
            buf: Vec::new(),
            limits,
            start: std::time::Instant::now(),
            stopped: false,
            observer,
        };
        st.evaluate(0, 0.0);
        st.search(0, 0, 0.0, f64::INFINITY);
        let a = model.maa(st.best_subset);
        Ok(Trimming {
            subset: mask_to_vec(st.best_subset),
            threshold: a.threshold,
            eca: a.value,
            criterion_evaluations: st.maa_evals,
            bound_evaluations: st.mpa_evals,
            optimal: !st.stopped,
        })
    }
}

/// Limits of [`BranchAndBound::run_limited`]; `None` = unlimited (the default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    /// Stop after this many evaluations (criterion + bound; the first evaluation, of the
    /// empty subset, is always made).
    pub max_evaluations: Option<u64>,
    /// Stop once this much wall-clock time has passed (checked after each evaluation).
    pub time_limit: Option<std::time::Duration>,
}

/// The state of a running search, as given to the observer of
/// [`BranchAndBound::run_limited`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchProgress {
    /// Criterion (MAA) evaluations so far.
    pub criterion_evaluations: u64,
    /// Bound (MPA) evaluations so far.
    pub bound_evaluations: u64,
    /// The best criterion value found so far (normalised MAA, or MPA in naive Bayes);
    /// `-inf` before the first.
    pub best: f64,
    /// Time since the search started.
    pub elapsed: std::time::Duration,
}

struct State<'a, M: ?Sized> {
    model: &'a M,
    costs: &'a [f64],
    budget: f64,
    n: usize,
    order: Vec<usize>,
    independent: bool,
    best: f64,
    best_subset: u64,
    found: bool,
    maa_evals: u64,
    mpa_evals: u64,
    buf: Vec<YStat>,
    limits: SearchLimits,
    start: std::time::Instant,
    stopped: bool,
    observer: &'a mut dyn FnMut(&SearchProgress),
}

impl<M: AgreementModel + ?Sized> State<'_, M> {
    /// Reports progress after an evaluation and sets `stopped` when a limit is reached.
    fn tick(&mut self) {
        let elapsed = self.start.elapsed();
        (self.observer)(&SearchProgress {
            criterion_evaluations: self.maa_evals,
            bound_evaluations: self.mpa_evals,
            best: self.best,
            elapsed,
        });
        if self
            .limits
            .max_evaluations
            .is_some_and(|m| self.maa_evals + self.mpa_evals >= m)
            || self.limits.time_limit.is_some_and(|t| elapsed >= t)
        {
            self.stopped = true;
        }
    }
    fn exhausts(&self, subset: u64, cost: f64) -> bool {
        (0..self.n).all(|j| subset >> j & 1 == 1 || cost + self.costs[j] > self.budget + COST_EPS)
    }
    fn offer(&mut self, subset: u64, v: f64) {
        if !self.found || v > self.best {
            self.best = v;
            self.best_subset = subset;
            self.found = true;
        }
    }
    fn evaluate(&mut self, subset: u64, cost: f64) {
        if self.independent && !self.exhausts(subset, cost) {
            return;
        }
        self.maa_evals += 1;
        let v = if self.independent {
            self.model.mpa(subset)
        } else {
            self.model.subset_stats(subset, &mut self.buf);
            sweep(&mut self.buf).0 / self.model.total_weight()
        };
        self.offer(subset, v);
        self.tick();
    }
    fn fits(&self, j: usize, cost: f64) -> bool {
        cost + self.costs[j] <= self.budget + COST_EPS
    }
    /// Depth-first search below a node at depth `i` with included set `inc` (cost
    /// `cost`, already evaluated) and subtree bound `ub`.
    fn search(&mut self, i: usize, inc: u64, cost: f64, ub: f64) {
        if self.stopped || i == self.n || (self.found && ub <= self.best) {
            return;
        }
        // the subtree's subsets are `inc` plus undecided features that still fit; if none
        // fits, the subtree is `inc` alone, already evaluated
        if !self.order[i..].iter().any(|&j| self.fits(j, cost)) {
            return;
        }
        let f = self.order[i];
        if self.fits(f, cost) {
            let inc2 = inc | 1 << f;
            self.evaluate(inc2, cost + self.costs[f]);
            self.search(i + 1, inc2, cost + self.costs[f], ub);
        }
        if self.stopped {
            return;
        }
        // exclude f: the subtree's subsets lie inside U = inc ∪ R, R = the undecided
        // features (after f) that fit the remaining budget on their own
        let r: Vec<usize> = self.order[i + 1..]
            .iter()
            .copied()
            .filter(|&j| self.fits(j, cost))
            .collect();
        if r.is_empty() {
            return;
        }
        let u = r.iter().fold(inc, |m, &j| m | 1 << j);
        let u_cost = cost + r.iter().map(|&j| self.costs[j]).sum::<f64>();
        if self.independent {
            if u_cost <= self.budget + COST_EPS {
                // MAA(U) = MPA(U) is monotone: U is the subtree's optimum; one evaluation
                self.maa_evals += 1;
                let v = self.model.mpa(u);
                self.offer(u, v);
                self.tick();
                return;
            }
        } else if r.len() == 1 {
            // a single unevaluated subset (inc + r): evaluating it costs what a bound would
            self.search(i + 1, inc, cost, ub);
            return;
        }
        self.mpa_evals += 1;
        let ub2 = self.model.mpa(u);
        self.tick();
        if self.stopped || (self.found && ub2 <= self.best) {
            return;
        }
        self.search(i + 1, inc, cost, ub2);
    }
}

/// The search of the authors' released tool (TrimBN, `src/trim/search.c`,
/// `search_best_subset_aux`; github.com/UCLA-StarAI/TrimBN), reimplemented from its
/// description for Table 6's extra row: an include/exclude depth-first search in the file
/// order of the features.
///
/// At each node (the features before `depth` decided, `I` included at cost `c`): stop if
/// `c ≥ budget` or every feature is decided; once an incumbent with positive agreement
/// exists, compute the bound `MPA(I ∪ {features from depth on})` (one bound evaluation) and
/// stop if it is *below* the incumbent; if the next feature fits, include it, compute
/// `MAA(I ∪ {it})` (one criterion evaluation; ties kept by lower cost) and recurse; then
/// recurse with it excluded. The empty set is never evaluated; the bound ignores the
/// budget (`U` is every undecided feature), and no node is a leaf before the last feature.
/// Exact (the bound is valid by Corollary 1), but it evaluates more than
/// [`BranchAndBound`].
///
/// # Errors
/// As [`BranchAndBound::run`].
pub fn include_exclude_search<M: AgreementModel + ?Sized>(
    model: &M,
    costs: &[f64],
    budget: f64,
) -> Result<Trimming, BayesError> {
    check_costs(model.n_features(), costs, budget)?;
    let n = model.n_features();
    if n > 63 {
        return Err(BayesError::query("at most 63 features"));
    }
    struct S<'a, M: AgreementModel + ?Sized> {
        model: &'a M,
        costs: &'a [f64],
        budget: f64,
        best: (f64, f64, u64),
        criterion: u64,
        bound: u64,
    }
    impl<M: AgreementModel + ?Sized> S<'_, M> {
        fn visit(&mut self, depth: usize, inc: u64, cost: f64) {
            let n = self.costs.len();
            if cost >= self.budget || depth >= n {
                return;
            }
            if self.best.0 > 0.0 {
                let undecided = ((1u64 << n) - 1) & !((1u64 << depth) - 1);
                self.bound += 1;
                if self.model.mpa(inc | undecided) < self.best.0 {
                    return;
                }
            }
            let c = cost + self.costs[depth];
            if c <= self.budget + COST_EPS {
                let with = inc | 1u64 << depth;
                self.criterion += 1;
                let v = self.model.maa(with).value;
                if v > self.best.0 || (v == self.best.0 && c < self.best.1) {
                    self.best = (v, c, with);
                }
                self.visit(depth + 1, with, c);
            }
            self.visit(depth + 1, inc, cost);
        }
    }
    let mut s = S {
        model,
        costs,
        budget,
        best: (0.0, f64::INFINITY, 0),
        criterion: 0,
        bound: 0,
    };
    s.visit(0, 0, 0.0);
    let m = s.best.2;
    let a = model.maa(m);
    Ok(Trimming {
        subset: mask_to_vec(m),
        threshold: a.threshold,
        eca: a.value,
        criterion_evaluations: s.criterion,
        bound_evaluations: s.bound,
        optimal: true,
    })
}

/// Every subset whose cost is within budget (including the empty set), ascending masks.
///
/// # Errors
/// [`BayesError::InvalidQuery`] for bad costs or more than 30 features.
pub fn feasible_subsets(costs: &[f64], budget: f64) -> Result<Vec<u64>, BayesError> {
    let n = costs.len();
    check_costs(n, costs, budget)?;
    if n > 30 {
        return Err(BayesError::query(
            "exhaustive search is limited to 30 features",
        ));
    }
    Ok((0u64..1 << n)
        .filter(|&m| {
            let c: f64 = (0..n).filter(|&i| m >> i & 1 == 1).map(|i| costs[i]).sum();
            c <= budget + COST_EPS
        })
        .collect())
}

/// The subset with the largest value (ties to the smaller mask).
fn best_of(subsets: &[u64], values: &[f64]) -> (u64, f64) {
    let mut best = (0u64, f64::NEG_INFINITY);
    for (&m, &v) in subsets.iter().zip(values) {
        if v > best.1 || (v == best.1 && m < best.0) {
            best = (m, v);
        }
    }
    best
}

/// Exhaustive trimming: `MAA` of every feasible subset (parallel with rayon); the oracle
/// for [`branch_and_bound`].
///
/// # Errors
/// As [`feasible_subsets`].
pub fn exhaustive_maa<M: AgreementModel + ?Sized>(
    model: &M,
    costs: &[f64],
    budget: f64,
) -> Result<Trimming, BayesError> {
    check_costs(model.n_features(), costs, budget)?;
    let subsets = feasible_subsets(costs, budget)?;
    let total = model.total_weight();
    let values = model.map_subsets(&subsets, &|b| sweep(b).0 / total);
    let (m, _) = best_of(&subsets, &values);
    let a = model.maa(m);
    Ok(Trimming {
        subset: mask_to_vec(m),
        threshold: a.threshold,
        eca: a.value,
        criterion_evaluations: subsets.len() as u64,
        bound_evaluations: 0,
        optimal: true,
    })
}

/// FS-SDD (Chen, Choi & Darwiche 2015; Choi et al. 2017): exhaustive feature selection by
/// expected same-decision probability, i.e. ECA with the threshold held at `T`, over every
/// feasible subset (the empty set included; the paper's counts exclude it).
///
/// # Errors
/// As [`feasible_subsets`].
pub fn fs_sdd<M: AgreementModel + ?Sized>(
    model: &M,
    costs: &[f64],
    budget: f64,
) -> Result<Trimming, BayesError> {
    check_costs(model.n_features(), costs, budget)?;
    let subsets = feasible_subsets(costs, budget)?;
    let t = model.threshold();
    let total = model.total_weight();
    let values = model.map_subsets(&subsets, &|b| eca_of(b, t) / total);
    let (m, v) = best_of(&subsets, &values);
    Ok(Trimming {
        subset: mask_to_vec(m),
        threshold: t,
        eca: v,
        criterion_evaluations: subsets.len() as u64,
        bound_evaluations: 0,
        optimal: true,
    })
}

/// Feature selection by information gain: the feasible subset maximising `I(D; Y)`
/// (exhaustive; ties to the smaller mask). Returned with its own `MAA` and threshold, so
/// the comparison with trimming is on agreement with an optimised threshold.
///
/// # Errors
/// As [`feasible_subsets`].
pub fn information_gain_selection<M: AgreementModel + ?Sized>(
    model: &M,
    costs: &[f64],
    budget: f64,
) -> Result<Trimming, BayesError> {
    check_costs(model.n_features(), costs, budget)?;
    let subsets = feasible_subsets(costs, budget)?;
    let gains = model.map_subsets(&subsets, &|b| info_gain_of(b));
    let (m, _) = best_of(&subsets, &gains);
    let a = model.maa(m);
    Ok(Trimming {
        subset: mask_to_vec(m),
        threshold: a.threshold,
        eca: a.value,
        criterion_evaluations: subsets.len() as u64,
        bound_evaluations: 0,
        optimal: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A model over `cards` (features `0..n`) whose base is `weights` in radix `order`.
    fn model(cards: Vec<usize>, order: Vec<usize>, weights: Vec<[f64; 2]>) -> JointAgreement {
        JointAgreement {
            cards,
            base: std::sync::Arc::new(weights),
            order,
            total: 1.0,
            threshold: 0.4,
            cache: std::sync::Mutex::default(),
            information: std::sync::Arc::default(),
        }
    }

    /// The definition of [`JointAgreement::marginalise`]'s bits: one pass over `src` in
    /// order, each entry added into its destination entry (ascending features, last
    /// fastest).
    fn plain_pass<T>(
        cards: &[usize],
        feats: &[usize],
        src: &[T],
        stat: impl Fn(&T) -> YStat,
        mask: u64,
    ) -> Vec<YStat> {
        let mut dst_stride = vec![0usize; cards.len()];
        let mut size = 1usize;
        for i in (0..cards.len()).rev() {
            if mask >> i & 1 == 1 && feats.contains(&i) {
                dst_stride[i] = size;
                size *= cards[i];
            }
        }
        let mut out = vec![YStat::default(); size];
        for (x, e) in src.iter().enumerate() {
            let (mut r, mut y) = (x, 0usize);
            for &f in feats.iter().rev() {
                y += (r % cards[f]) * dst_stride[f];
                r /= cards[f];
            }
            let s = stat(e);
            out[y].pos_class += s.pos_class;
            out[y].neg_class += s.neg_class;
            out[y].agree_pos += s.agree_pos;
        }
        out
    }

    fn bits(t: &[YStat]) -> Vec<[u64; 3]> {
        t.iter()
            .map(|s| {
                [
                    s.pos_class.to_bits(),
                    s.neg_class.to_bits(),
                    s.agree_pos.to_bits(),
                ]
            })
            .collect()
    }

    /// Cardinalities (1-4 states, 1-7 features), a radix order, weights and two masks.
    fn case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<[f64; 2]>, u64, u64)> {
        proptest::collection::vec(1usize..=4, 1..=7).prop_flat_map(|cards| {
            let n = cards.len();
            let len: usize = cards.iter().product();
            (
                Just(cards),
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
                proptest::collection::vec((0.0f64..1.0, 0.0f64..1.0), len)
                    .prop_map(|w| w.into_iter().map(|(a, b)| [a, b]).collect()),
                0u64..1 << n,
                0u64..1 << n,
            )
        })
    }

    /// Runs of kept entries longer than a tile (and summed-out runs above them, of more
    /// than one feature) keep the plain pass's bits.
    #[test]
    fn long_runs_are_tiled_without_changing_bits() {
        let cards = vec![3, 2, 2, 3500];
        let len: usize = cards.iter().product();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let weights: Vec<[f64; 2]> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                [
                    (x >> 11) as f64 / (1u64 << 53) as f64,
                    (x & 0xffff) as f64 / 65536.0,
                ]
            })
            .collect();
        for order in [vec![0, 1, 2, 3], vec![2, 1, 0, 3], vec![3, 0, 1, 2]] {
            let m = model(cards.clone(), order.clone(), weights.clone());
            let stat = m.base_stat();
            for mask in [0b1000u64, 0b1001, 0b1010, 0b1100, 0b0001, 0b1111] {
                let mut got = Vec::new();
                m.marginalise(&order, &weights, stat, mask, &mut got);
                let want = plain_pass(&cards, &order, &weights, stat, mask);
                assert_eq!(bits(&got), bits(&want), "order {order:?}, mask {mask:#b}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Marginals from the base (any radix order) and from a cached superset table
        /// (ascending order) have the bits of a plain pass, for every pattern of kept and
        /// summed-out features (runs, blocks, tiles and the final permutation).
        #[test]
        fn marginalise_is_a_plain_pass_bit_for_bit(
            (cards, order, weights, a, b) in case()
        ) {
            let m = model(cards.clone(), order.clone(), weights.clone());
            let stat = m.base_stat();
            let sup = a | b;
            let mut got = Vec::new();
            m.marginalise(&order, &weights, stat, sup, &mut got);
            let want = plain_pass(&cards, &order, &weights, stat, sup);
            prop_assert_eq!(bits(&got), bits(&want));
            // from the superset's table (ascending features) down to `a`
            let feats = mask_to_vec(sup);
            let mut sub = Vec::new();
            m.marginalise(&feats, &got, |s| *s, a, &mut sub);
            let want = plain_pass(&cards, &feats, &got, |s| *s, a);
            prop_assert_eq!(bits(&sub), bits(&want));
        }

        /// `subset_stats` through the cache (the smallest cached superset, tables returned
        /// without a copy, buffers reused) equals a fresh model's evaluation of the same
        /// subset from the same source, and the statistics' totals are the base's.
        #[test]
        fn cached_statistics_equal_the_marginals_of_their_source(
            (cards, order, weights, a, b) in case()
        ) {
            let m = model(cards.clone(), order.clone(), weights.clone());
            let mut first = Vec::new();
            m.subset_stats(a | b, &mut first);
            let mut second = Vec::new();
            m.subset_stats(a, &mut second);
            let fresh = model(cards, order, weights);
            let mut want = Vec::new();
            let cached = m.cache_stats().0 > 0;
            if cached {
                fresh.marginalise(&mask_to_vec(a | b), &first, |s| *s, a, &mut want);
            } else {
                fresh.subset_stats(a, &mut want);
            }
            prop_assert_eq!(bits(&second), bits(&want));
            let total = |t: &[YStat]| t.iter().map(|s| s.pos_class + s.neg_class).sum::<f64>();
            prop_assert!((total(&second) - total(&first)).abs() < 1e-9);
            // evaluating again (from the cache or the pool) changes nothing
            let again = m.mpa(a);
            prop_assert_eq!(again.to_bits(), (mpa_of(&second) / m.total).to_bits());
        }

        /// [`permute`] is the index map it describes.
        #[test]
        fn permute_is_the_index_map(
            cards in proptest::collection::vec(1usize..=5, 1..=6),
            shuffle in Just((0..6).collect::<Vec<usize>>()).prop_shuffle(),
        ) {
            let n = cards.len();
            let rank: Vec<usize> = shuffle.into_iter().filter(|&j| j < n).collect();
            // src: digits in index order; dst: digits in `rank` order (last fastest)
            let mut ss = vec![0usize; n];
            let mut ds = vec![0usize; n];
            let mut s = 1;
            for j in (0..n).rev() {
                ss[j] = s;
                s *= cards[j];
            }
            let mut d = 1;
            for &j in rank.iter().rev() {
                ds[j] = d;
                d *= cards[j];
            }
            let digits: Vec<(usize, usize, usize)> = (0..n).map(|j| (cards[j], ss[j], ds[j])).collect();
            let src: Vec<usize> = (0..s).collect();
            let mut dst = vec![usize::MAX; s];
            permute(&src, &mut dst, &digits);
            for (x, &v) in src.iter().enumerate() {
                let y: usize = (0..n).map(|j| (x / ss[j] % cards[j]) * ds[j]).sum();
                prop_assert_eq!(dst[y], v);
            }
        }

        /// [`total_order_key`] orders as [`f64::total_cmp`] (signed zeros, infinities,
        /// NaNs and subnormals included, as raw bit patterns).
        #[test]
        fn total_order_key_is_total_cmp(a in any::<u64>(), b in any::<u64>(), pick in 0usize..8) {
            let special = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN, 1e-310, 0.5];
            let (x, y) = (f64::from_bits(a), special[pick]);
            for (p, q) in [(x, y), (y, x), (x, f64::from_bits(b)), (x, x)] {
                prop_assert_eq!(total_order_key(p).cmp(&total_order_key(q)), p.total_cmp(&q));
            }
        }

        /// The flat lattice's shortcut for children whose kept features admit at most one
        /// more feature ([`FlatLattice::direct`]) gives every node's table the bits of the walk through
        /// the chain of tables (any cardinalities, radix order, costs, budget and
        /// thresholds): each reached table's entries, digested bit by bit.
        #[test]
        fn lattice_shortcut_keeps_every_tables_bits(
            (cards, order, weights, _, _) in case(),
            costs in proptest::collection::vec(1u32..=3, 7),
            budget in 0u32..=9,
            thresholds in proptest::collection::vec(0.0f64..=1.0, 1..=3),
        ) {
            let m = model(cards.clone(), order, weights);
            let n = cards.len();
            let costs: Vec<f64> = costs[..n].iter().map(|&c| f64::from(c)).collect();
            let budget = f64::from(budget);
            let subsets = feasible_subsets(&costs, budget).unwrap();
            let wanted = |s: u64| {
                (0..n).filter(|&i| s >> i & 1 == 1).map(|i| costs[i]).sum::<f64>() <= budget + COST_EPS
            };
            let eval = |t: &[f64], _: &mut Scratch, out: &mut [f64]| {
                let digest = t.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, v| {
                    (h ^ v.to_bits()).wrapping_mul(0x0100_0000_01b3)
                });
                out[0] = t.iter().sum();
                out[1] = f64::from_bits(digest >> 12);
                out[2] = t.len() as f64;
            };
            let fast = m.flat_lattice(&thresholds, &subsets, &wanted, 3, &eval, true);
            let chain = m.flat_lattice(&thresholds, &subsets, &wanted, 3, &eval, false);
            prop_assert_eq!(&fast.0, &chain.0);
            prop_assert!(fast.0.iter().all(|&r| r));
            let b = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
            prop_assert_eq!(b(&fast.1), b(&chain.1));
        }
    }
}
