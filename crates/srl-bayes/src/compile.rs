//! Compiling a network for the trimming queries: the joint weights `Pr(x, d)` and
//! `Pr(x, ¬d)` of every instantiation `x` of the features (Choi & Van den Broeck 2018,
//! Section 5, "compile once"; `shared/specs/trimming.md`).
//!
//! The computation is variable elimination (Zhang & Poole 1994; Darwiche 2009, ch. 6) in
//! which the features are **branched on** (conditioned, one table per state: Darwiche
//! 2009, ch. 8, recursive conditioning) instead of summed out, and the class is kept:
//!
//! 1. **Plan** (scopes only, before any table is built). A greedy order over the interaction
//!    graph: sum out the cheapest remaining variable (weighted min-fill, min-fill or min-size;
//!    Kjærulff 1990, Darwiche 2009 Section 6.6) while its table stays within a *context
//!    limit*; otherwise branch on a feature of that variable's table (the one with fewest
//!    states), which removes the feature from the graph without fill-in but multiplies all
//!    later work by its number of states. Several heuristics and context limits (from "sum
//!    everything first", the features-constrained-last order of a compiled jointree, down to
//!    tables of 16 entries) are planned, and the plan with the fewest estimated operations
//!    whose largest table fits the limit is kept, among them [`RANDOM_PLANS`] seeded
//!    perturbations per limit ([`EXTRA_RANDOM_PLANS`] more under the best limit when the
//!    best still needs over [`EXTRA_PLANS_ABOVE`] operations); [`plan`] reports it (peak
//!    table, operations), so a caller can refuse early with the estimate. **Class split**
//!    ([`ClassMode`]): the class kept to the end multiplies every table holding it by its
//!    number of states; the alternative is two class-free runs, `Pr(x, d)` with the class
//!    fixed to `d` (evidence) and `Pr(x, ¬d)` with it fixed to the other state (two
//!    states) or summed with `d`'s CPT entries zeroed, and the cheaper of the two forms
//!    (total estimated operations) is kept.
//! 2. **Stage one**: the sums before the first branch run once, on ordinary tables.
//! 3. **Enumeration**: the branches form a depth-first search over the feature
//!    instantiations in the plan's branch order (its first feature slowest); at each depth
//!    a precompiled program reduces the tables that mention the branched feature and runs
//!    the sums scheduled there, on buffers allocated once per thread. **Determinism** is
//!    used: a table that becomes all zero (zero CPT entries) prunes its subtree. The first
//!    feature's states run in parallel (rayon, disjoint output blocks: the same bits for
//!    any thread count).
//!
//! The output has the two weights `Pr(x, d)`, `Pr(x, ¬d)` of each feature instantiation in
//! the plan's branch order (mixed radix, [`CompiledJoint::order`]); the trimming code
//! ([`crate::trim::JointAgreement`]) derives every threshold's decisions from them.

use rayon::prelude::*;

use crate::error::BayesError;
use crate::factor::Factor;
use crate::network::BayesianNetwork;
use crate::trim::ThresholdClassifier;

/// A greedy elimination-order heuristic (Darwiche 2009, Section 6.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderHeuristic {
    /// The variable whose elimination adds the least fill-in weight: the sum over the new
    /// edges `(a, b)` of `|a| · |b|` (Kjærulff's weighted min-fill); ties by min-size.
    WeightedMinFill,
    /// The variable whose elimination adds the fewest new edges; ties by min-size.
    MinFill,
    /// The variable whose elimination creates the smallest table.
    MinSize,
}

impl OrderHeuristic {
    /// Every heuristic, in the preference order used on ties.
    pub const ALL: [Self; 3] = [Self::WeightedMinFill, Self::MinFill, Self::MinSize];

    /// The heuristic's name (`weighted-min-fill`, `min-fill`, `min-size`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::WeightedMinFill => "weighted-min-fill",
            Self::MinFill => "min-fill",
            Self::MinSize => "min-size",
        }
    }
}

/// One step of a plan after stage one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Branch on the feature at this position of the classifier's feature list.
    Branch(usize),
    /// Sum out this network variable.
    Sum(usize),
}

/// An elimination-and-branching plan with its cost, computed on scopes only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EliminationPlan {
    /// Stage one: variables summed out before any branch, in order (network ids).
    pub order: Vec<usize>,
    /// The steps after stage one (branches and the sums between them).
    pub steps: Vec<Step>,
    /// The heuristic that chose the sums.
    pub heuristic: OrderHeuristic,
    /// The context limit (entries) under which a variable was summed rather than a feature
    /// branched; `None`: every variable summed before any branch (features last).
    pub context_limit: Option<u128>,
    /// The largest table the plan builds (entries; saturating).
    pub peak_entries: u128,
    /// Estimated operations: the sizes of all tables built, each times the number of
    /// branches it is built in, plus the output (saturating).
    pub operations: u128,
    /// The number of feature instantiations `Π|X_i|` (the output's length).
    pub instantiations: u128,
    /// How the class enters this plan's tables.
    pub class: ClassMode,
    /// With the class split ([`ClassMode::Fixed`]): the plan of the second weight
    /// `Pr(x, ¬d)`; this plan then computes `Pr(x, d)` alone, and its `peak_entries` and
    /// `operations` are the totals of both (the larger peak, the sum of the operations).
    pub complement: Option<Box<EliminationPlan>>,
}

/// How a plan treats the class `D` (Darwiche 2009, ch. 6: evidence as indicators).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassMode {
    /// Kept to the end: every state of the class in the tables, both weights from one run.
    Kept,
    /// Fixed to this state (evidence): the class leaves every table, and the run gives one
    /// weight per instantiation (`Pr(x, D = state)`).
    Fixed(usize),
    /// Summed out like any other variable with this state excluded (its CPT entries
    /// zeroed): the run gives `Pr(x, D ≠ state)`.
    Without(usize),
}

impl EliminationPlan {
    /// The branch order: feature positions, slowest-varying first.
    #[must_use]
    pub fn branch_order(&self) -> Vec<usize> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Branch(f) => Some(*f),
                Step::Sum(_) => None,
            })
            .collect()
    }
}

/// Bytes per table entry assumed by [`default_max_table`]: the compiled weights (16 bytes
/// per instantiation) plus the trimming search's cache of marginal tables (at most twice
/// the instantiations, 24 bytes each). The exhaustive searches over the subset lattice
/// (`JointAgreement::map_subsets`: exhaustive MAA, FS-SDD, information gain) also hold a
/// 24-byte copy of the base table and, on each of up to `min(threads, features)` threads,
/// a first-level child table of at least half its size: with many threads they can pass
/// this budget.
pub const BYTES_PER_ENTRY: u64 = 64;

/// The default table limit: a quarter of the machine's memory (`MemTotal` of
/// `/proc/meminfo`; 8 GiB where that cannot be read) divided by [`BYTES_PER_ENTRY`],
/// within `[2^20, 2^31]` entries (about 10^8 on a 24 GiB machine).
#[must_use]
pub fn default_max_table() -> usize {
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(8 << 30, |kb| kb.saturating_mul(1024));
    let entries = mem / 4 / BYTES_PER_ENTRY;
    usize::try_from(entries.clamp(1 << 20, 1 << 31)).unwrap_or(1 << 31)
}

/// The context limits tried by [`plan`] (`None` = sum everything first).
const CONTEXT_LIMITS: [Option<u128>; 8] = [
    None,
    Some(1 << 24),
    Some(1 << 20),
    Some(1 << 16),
    Some(1 << 12),
    Some(1 << 8),
    Some(1 << 6),
    Some(1 << 4),
];

/// The symbolic state of a plan: the interaction graph over the variables not yet summed
/// or branched.
struct Graph<'a> {
    adj: Vec<Vec<usize>>,
    cards: &'a [usize],
}

impl Graph<'_> {
    fn clique_size(&self, v: usize) -> u128 {
        self.adj[v].iter().fold(self.cards[v] as u128, |s, &u| {
            s.saturating_mul(self.cards[u] as u128)
        })
    }

    fn fill(&self, v: usize, weighted: bool) -> u128 {
        let nb = &self.adj[v];
        let mut f: u128 = 0;
        for (i, &a) in nb.iter().enumerate() {
            for &b in &nb[i + 1..] {
                if !self.adj[a].contains(&b) {
                    f = f.saturating_add(if weighted {
                        (self.cards[a] as u128).saturating_mul(self.cards[b] as u128)
                    } else {
                        1
                    });
                }
            }
        }
        f
    }

    fn sum_out(&mut self, v: usize) {
        let nb = std::mem::take(&mut self.adj[v]);
        for &a in &nb {
            self.adj[a].retain(|&u| u != v);
            for &b in &nb {
                if a != b && !self.adj[a].contains(&b) {
                    self.adj[a].push(b);
                }
            }
        }
    }

    fn branch(&mut self, f: usize) {
        let nb = std::mem::take(&mut self.adj[f]);
        for &a in &nb {
            self.adj[a].retain(|&u| u != f);
        }
    }
}

/// One candidate plan: greedy sums by `heuristic` under `limit`, branching otherwise; with
/// a `seed`, every choice randomly perturbed.
fn plan_with(
    scopes: &[Vec<usize>],
    cards: &[usize],
    eliminate: &[usize],
    features: &[usize],
    class_card: usize,
    (heuristic, limit, seed): (OrderHeuristic, Option<u128>, Option<u64>),
) -> EliminationPlan {
    let mut rng = seed.map(SplitMix);
    let mut g = Graph {
        adj: vec![Vec::new(); cards.len()],
        cards,
    };
    for s in scopes {
        for &a in s {
            for &b in s {
                if a != b && !g.adj[a].contains(&b) {
                    g.adj[a].push(b);
                }
            }
        }
    }
    let mut remaining: Vec<usize> = eliminate.to_vec();
    remaining.sort_unstable();
    let mut unbranched: Vec<usize> = (0..features.len()).collect();
    let mut order = Vec::new();
    let mut steps = Vec::new();
    let (mut peak, mut ops, mut branches) = (0u128, 0u128, 1u128);
    loop {
        // the cheapest variable to sum out by the heuristic, with its table size
        // (a seeded plan picks any of them)
        let feature_in = |v: usize, g: &Graph<'_>, pick: Option<u64>| {
            let inside = unbranched
                .iter()
                .copied()
                .filter(|&f| g.adj[v].contains(&features[f]));
            match pick {
                None => inside.min_by_key(|&f| (cards[features[f]], f)),
                Some(r) => {
                    let all: Vec<usize> = inside.collect();
                    let n = all.len() as u64;
                    (n > 0).then(|| all[usize::try_from(r % n).unwrap_or(0)])
                }
            }
        };
        // the heuristic's choice among the variables whose table fits the limit (a seeded
        // plan scales each score by a random factor in [1, 2))
        let mut eligible: Option<(u128, u128, usize, u128)> = None;
        for (k, &v) in remaining.iter().enumerate() {
            let size = g.clique_size(v);
            if limit.is_some_and(|l| size > l) {
                continue;
            }
            let mut fill = match heuristic {
                OrderHeuristic::MinSize => 0,
                OrderHeuristic::MinFill => g.fill(v, false),
                OrderHeuristic::WeightedMinFill => g.fill(v, true),
            };
            let mut key = size;
            if let Some(r) = rng.as_mut() {
                let u = u128::from(r.next() >> 11);
                let scale = |x: u128| x.saturating_add(x.saturating_mul(u) >> 53);
                fill = scale(fill);
                key = scale(key);
            }
            if eligible.is_none_or(|(bf, bk, _, _)| (fill, key) < (bf, bk)) {
                eligible = Some((fill, key, k, size));
            }
        }
        // otherwise take the smallest table: branch on its feature with the fewest states
        // if it has one, else sum its variable all the same
        let smallest = remaining
            .iter()
            .enumerate()
            .map(|(k, &v)| (g.clique_size(v), k))
            .min();
        let mut branch_on = None;
        let sum = match (eligible, smallest) {
            (Some((_, _, k, size)), _) => Some((size, k)),
            (None, Some((size, k))) => {
                match feature_in(remaining[k], &g, rng.as_mut().map(SplitMix::next)) {
                    Some(f) => {
                        branch_on = Some(f);
                        None
                    }
                    None => Some((size, k)),
                }
            }
            (None, None) => None,
        };
        if let Some((size, k)) = sum {
            let v = remaining.remove(k);
            peak = peak.max(size);
            ops = ops.saturating_add(branches.saturating_mul(size));
            g.sum_out(v);
            if steps.is_empty() {
                order.push(v);
            } else {
                steps.push(Step::Sum(v));
            }
            continue;
        }
        let branch_on = branch_on.or_else(|| unbranched.first().copied());
        let Some(f) = branch_on else { break };
        unbranched.retain(|&u| u != f);
        let size = g.clique_size(features[f]);
        branches = branches.saturating_mul(cards[features[f]] as u128);
        ops = ops.saturating_add(branches.saturating_mul(size));
        g.branch(features[f]);
        steps.push(Step::Branch(f));
    }
    let instantiations = features
        .iter()
        .fold(1u128, |s, &f| s.saturating_mul(cards[f] as u128));
    ops = ops.saturating_add(branches.saturating_mul(class_card as u128));
    EliminationPlan {
        order,
        steps,
        heuristic,
        context_limit: limit,
        peak_entries: peak,
        operations: ops,
        instantiations,
        class: ClassMode::Kept,
        complement: None,
    }
}

/// A small seeded generator (`SplitMix64`) for the randomised plans.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The variables taking part (the ancestral set of the features and the class) and the
/// variables to sum out.
fn relevant(net: &BayesianNetwork, clf: &ThresholdClassifier) -> (Vec<usize>, Vec<usize>) {
    let mut keep_vars = clf.features.clone();
    keep_vars.push(clf.class);
    let keep = net.ancestral_set(&keep_vars);
    let vars: Vec<usize> = (0..net.len()).filter(|&v| keep[v]).collect();
    let eliminate: Vec<usize> = vars
        .iter()
        .copied()
        .filter(|v| !keep_vars.contains(v))
        .collect();
    (vars, eliminate)
}

/// The factors of one run (the CPTs of the relevant variables, the class's as `mode`
/// says) and the variables it sums out.
fn problem(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
    mode: ClassMode,
) -> (Vec<Factor>, Vec<usize>) {
    let (vars, mut eliminate) = relevant(net, clf);
    let c = clf.class;
    let factors = vars
        .iter()
        .map(|&v| {
            let f = net.factor(v);
            match mode {
                ClassMode::Kept => f,
                ClassMode::Fixed(s) => f.reduce(c, s),
                ClassMode::Without(s) if v == c => {
                    // the class is its own CPT's last variable
                    let k = net.cardinality(c);
                    let values = f
                        .values()
                        .iter()
                        .enumerate()
                        .map(|(i, &x)| if i % k == s { 0.0 } else { x })
                        .collect();
                    Factor::new(f.vars().to_vec(), f.cards().to_vec(), values).unwrap_or(f)
                }
                ClassMode::Without(_) => f,
            }
        })
        .collect();
    if matches!(mode, ClassMode::Without(_)) {
        eliminate.push(c);
    }
    (factors, eliminate)
}

/// Number of seeded randomised plans per context limit in [`candidate_plans`] (their
/// heuristics cycle through [`OrderHeuristic::ALL`]).
pub const RANDOM_PLANS: u64 = 12;

/// Seeded plans that [`candidate_plans`] adds to each form (class kept, fixed, complement)
/// under the context limit of that form's cheapest plan when the cheapest plan of the
/// first round still needs more than [`EXTRA_PLANS_ABOVE`] operations (a compilation of
/// tens of seconds, against about a second of planning).
pub const EXTRA_RANDOM_PLANS: u64 = 244;

/// The estimated operations above which [`candidate_plans`] tries [`EXTRA_RANDOM_PLANS`].
pub const EXTRA_PLANS_ABOVE: u128 = 20_000_000_000;

/// The plans of one run: with `heuristics`, each heuristic under each context limit
/// first; then the seeded perturbations `seeds` of them under each of `limits`. Planned
/// in parallel, returned in this order.
fn run_plans(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
    mode: ClassMode,
    (seeds, limits): (std::ops::Range<u64>, &[Option<u128>]),
    heuristics: bool,
) -> Vec<EliminationPlan> {
    let (factors, eliminate) = problem(net, clf, mode);
    let cards = net.cardinalities();
    let scopes: Vec<Vec<usize>> = factors.iter().map(|f| f.vars().to_vec()).collect();
    let k = match mode {
        ClassMode::Kept => net.cardinality(clf.class),
        ClassMode::Fixed(_) | ClassMode::Without(_) => 1,
    };
    let mut jobs = Vec::new();
    if heuristics {
        for limit in CONTEXT_LIMITS {
            for h in OrderHeuristic::ALL {
                jobs.push((h, limit, None));
            }
        }
    }
    for seed in seeds {
        for &limit in limits {
            jobs.push((OrderHeuristic::ALL[(seed % 3) as usize], limit, Some(seed)));
        }
    }
    jobs.into_par_iter()
        .map(|job| {
            let mut p = plan_with(&scopes, &cards, &eliminate, &clf.features, k, job);
            p.class = mode;
            p
        })
        .collect()
}

/// The cheapest of `plans` whose peak fits `max_table` (ties: the earlier), else the one
/// with the smallest peak.
fn cheapest(plans: &[EliminationPlan], max_table: u128) -> Option<EliminationPlan> {
    let mut fitting: Option<&EliminationPlan> = None;
    let mut smallest: Option<&EliminationPlan> = None;
    for p in plans {
        if p.peak_entries <= max_table && fitting.is_none_or(|b| p.operations < b.operations) {
            fitting = Some(p);
        }
        if smallest.is_none_or(|b| p.peak_entries < b.peak_entries) {
            smallest = Some(p);
        }
    }
    fitting.or(smallest).cloned()
}

/// The class-split candidate: the cheapest plan for `Pr(x, d)` with the cheapest plan for
/// `Pr(x, ¬d)` as its complement.
fn split(
    fixed: &[EliminationPlan],
    rest: &[EliminationPlan],
    limit: u128,
) -> Option<EliminationPlan> {
    let (mut a, b) = (cheapest(fixed, limit)?, cheapest(rest, limit)?);
    a.peak_entries = a.peak_entries.max(b.peak_entries);
    a.operations = a.operations.saturating_add(b.operations);
    a.complement = Some(Box::new(b));
    Some(a)
}

/// Every candidate plan for compiling `clf`'s features and class with tables of at most
/// `max_table` entries. With the class kept ([`ClassMode::Kept`]): each [`OrderHeuristic`]
/// under each context limit (from `None`, sum everything first, down to 16 entries), in
/// that order (limits outer), then [`RANDOM_PLANS`] seeded perturbations per limit. Then
/// the class split: the cheapest plan with the class fixed to the positive state (`Pr(x,
/// d)`) whose complement is the cheapest plan for `Pr(x, ¬d)` (the class fixed to the
/// other state if it has two, else summed without the positive state); for a class of many
/// states the split removes a factor `|D|` from every table holding the class. Last, when
/// the cheapest of these needs more than [`EXTRA_PLANS_ABOVE`] operations,
/// [`EXTRA_RANDOM_PLANS`] more seeded perturbations of each form under the context limit
/// of its cheapest plan (kept, and a new split from all plans), so a compilation of
/// minutes gets a wider search (andes: 7.3·10^10 → 2.9·10^10 estimated operations for
/// one class). Deterministic: the seeds are fixed and the plans are listed in this order
/// for any number of threads.
///
/// # Errors
/// As [`ThresholdClassifier::validate`].
pub fn candidate_plans(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
    max_table: usize,
) -> Result<Vec<EliminationPlan>, BayesError> {
    clf.validate(net)?;
    let d = clf.positive_state;
    let rest_mode = if net.cardinality(clf.class) == 2 {
        ClassMode::Fixed(1 - d)
    } else {
        ClassMode::Without(d)
    };
    let limit = max_table as u128;
    let first = (0..RANDOM_PLANS, &CONTEXT_LIMITS[..]);
    let mut out = run_plans(net, clf, ClassMode::Kept, first.clone(), true);
    let kept_len = out.len();
    let mut fixed = run_plans(net, clf, ClassMode::Fixed(d), first.clone(), true);
    let mut rest = run_plans(net, clf, rest_mode, first, true);
    out.extend(split(&fixed, &rest, limit));
    if cheapest(&out, limit).is_some_and(|p| p.operations > EXTRA_PLANS_ABOVE) {
        // more seeds for each form, under the context limit of its cheapest plan so far
        let more = |plans: &[EliminationPlan], mode: ClassMode| {
            let best = cheapest(plans, limit).and_then(|p| p.context_limit);
            let seeds = RANDOM_PLANS..RANDOM_PLANS + EXTRA_RANDOM_PLANS;
            run_plans(net, clf, mode, (seeds, &[best]), false)
        };
        let kept = more(&out[..kept_len], ClassMode::Kept);
        let f = more(&fixed, ClassMode::Fixed(d));
        let r = more(&rest, rest_mode);
        out.extend(kept);
        fixed.extend(f);
        rest.extend(r);
        out.extend(split(&fixed, &rest, limit));
    }
    Ok(out)
}

/// The plan for compiling `clf`'s features and class: among [`candidate_plans`], the one
/// with the fewest estimated operations whose largest table has at most `max_table`
/// entries (ties: the earlier candidate); if none fits, the one with the smallest peak.
///
/// # Errors
/// As [`ThresholdClassifier::validate`].
pub fn plan(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
    max_table: usize,
) -> Result<EliminationPlan, BayesError> {
    cheapest(&candidate_plans(net, clf, max_table)?, max_table as u128)
        .ok_or_else(|| BayesError::query("no plan (internal)"))
}

/// Where a table of the enumeration lives.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A stage-one table (shared, read-only).
    Shared(usize),
    /// A table built during the search (one buffer per thread).
    Local(usize),
}

/// A table of the program: its slot and scope.
#[derive(Clone, Debug)]
struct Table {
    slot: Slot,
    vars: Vec<usize>,
    cards: Vec<usize>,
}

impl Table {
    fn strides(&self) -> Vec<usize> {
        Factor::strides(&self.cards)
    }
}

/// One operation of a depth's program.
#[derive(Debug)]
enum Op {
    /// `dst[i] = src[map[i] + state · stride]` (fix the branched feature).
    Reduce {
        src: Slot,
        dst: usize,
        stride: usize,
        map: Vec<usize>,
    },
    /// `dst[i] = big[i] · small[map[i]]` (a reduced table multiplied into a table whose
    /// scope contains its own).
    Absorb {
        big: Slot,
        small: Slot,
        dst: usize,
        map: Vec<usize>,
    },
    /// `dst[i] = Σ_t Π_k src_k[offset_k(i, t)]` over the table `(dst scope, v)`, `v` last.
    SumProduct {
        srcs: Vec<(Slot, Vec<usize>)>,
        cards: Vec<usize>,
        dst: usize,
    },
}

/// The compiled program: stage-one tables, one op list per depth, the final tables.
#[derive(Debug)]
struct Program {
    shared: Vec<Vec<f64>>,
    local_sizes: Vec<usize>,
    /// per depth: the branched feature's cardinality, its ops, the new local slots
    depths: Vec<(usize, Vec<Op>, Vec<usize>)>,
    /// the tables left at the end (scopes ⊆ {class}) with their class stride
    finals: Vec<(Slot, usize)>,
    /// the class's number of states
    k: usize,
}

/// The compiled joint: the weights `(Pr(x, d), Pr(x, ¬d))` of every feature instantiation
/// `x` in [`CompiledJoint::order`] (mixed radix, first slowest), and the total weight.
#[derive(Clone, Debug)]
pub struct CompiledJoint {
    /// `[Pr(x, d), Pr(x, ¬d)]` per instantiation `x` (unnormalised weights; `¬d` is every
    /// other class state).
    pub weights: Vec<[f64; 2]>,
    /// The radix order of `weights`: positions in the classifier's feature list, slowest first
    /// (a permutation of `0..n`).
    pub order: Vec<usize>,
    /// `Σ_x Pr(x)` (the network's total weight, 1 when every CPT row sums to 1).
    pub total: f64,
    /// The plan that was used.
    pub plan: EliminationPlan,
}

/// Compiles `Pr(features, class)` as the module docs describe.
///
/// # Arguments
/// - `max_table`: the largest table (entries) the plan may build and the most feature
///   instantiations the output may have; both checked on the plan before any table is built.
///
/// # Errors
/// As [`ThresholdClassifier::validate`]; [`BayesError::TooLarge`] (with the best plan's
/// peak or the number of instantiations) above `max_table`;
/// [`BayesError::InvalidNetwork`] if the joint weight is not finite;
/// [`BayesError::ZeroProbabilityEvidence`] if it is zero.
pub fn compile(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
    max_table: usize,
) -> Result<CompiledJoint, BayesError> {
    let plan = plan(net, clf, max_table)?;
    compile_planned(net, clf, plan, max_table)
}

/// [`compile`] with a plan the caller already made by [`plan`] for the same `net` and
/// `clf` (so a front end can report the plan before the work without planning twice).
///
/// # Errors
/// As [`compile`]; [`BayesError::InvalidQuery`] for a plan made for other features
/// (its branches are not each of `clf`'s features once, or its instantiation count is
/// not theirs).
pub fn compile_planned(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
    plan: EliminationPlan,
    max_table: usize,
) -> Result<CompiledJoint, BayesError> {
    clf.validate(net)?;
    let states = clf
        .features
        .iter()
        .try_fold(1u128, |a, &f| a.checked_mul(net.cardinality(f) as u128));
    let d = clf.positive_state;
    let k = net.cardinality(clf.class);
    let fits = |p: &EliminationPlan| {
        let mut order = p.branch_order();
        order.sort_unstable();
        order.iter().copied().eq(0..clf.features.len()) && states == Some(p.instantiations)
    };
    let modes_fit = match (plan.class, plan.complement.as_deref()) {
        (ClassMode::Kept, None) => true,
        (ClassMode::Fixed(a), Some(c)) => {
            a == d
                && fits(c)
                && c.complement.is_none()
                && match c.class {
                    ClassMode::Fixed(b) => k == 2 && b == 1 - d,
                    ClassMode::Without(b) => b == d,
                    ClassMode::Kept => false,
                }
        }
        _ => false,
    };
    if !fits(&plan) || !modes_fit {
        return Err(BayesError::query(
            "the elimination plan was made for other features or another positive state than \
             this classifier's",
        ));
    }
    let limit = max_table as u128;
    for entries in [plan.instantiations, plan.peak_entries] {
        if entries > limit {
            return Err(BayesError::TooLarge { entries, limit });
        }
    }
    let order = plan.branch_order();
    let mut weights = run_plan(net, clf, &plan, max_table)?;
    if let Some(c) = plan.complement.as_deref() {
        // Pr(x, ¬d) in the complement's radix order, moved to this plan's
        let rest = run_plan(net, clf, c, max_table)?;
        let cards: Vec<usize> = order
            .iter()
            .map(|&f| net.cardinality(clf.features[f]))
            .collect();
        let c_order = c.branch_order();
        let c_strides = Factor::strides(
            &c_order
                .iter()
                .map(|&f| net.cardinality(clf.features[f]))
                .collect::<Vec<_>>(),
        );
        let strides: Vec<usize> = order
            .iter()
            .map(|f| c_strides[c_order.iter().position(|g| g == f).unwrap_or(0)])
            .collect();
        for (w, off) in weights.iter_mut().zip(odometer_offsets(&cards, &strides)) {
            w[1] = rest[off][0];
        }
    }
    let mut total = 0.0;
    let mut finite = true;
    for &[wd, wn] in &weights {
        finite &= wd.is_finite() && wn.is_finite();
        total += wd + wn;
    }
    if !total.is_finite() || !finite {
        return Err(BayesError::network(format!(
            "the joint weight of the features and the class is {total}, not a finite \
             number (CPT entries too large: rows should sum to 1)"
        )));
    }
    if total <= 0.0 {
        return Err(BayesError::ZeroProbabilityEvidence);
    }
    Ok(CompiledJoint {
        weights,
        order,
        total,
        plan,
    })
}

/// One run of a plan (not its complement): `[Pr(x, d), Pr(x, ¬d)]` per instantiation with
/// the class kept, `[weight, 0]` with the class fixed or summed.
fn run_plan(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
    plan: &EliminationPlan,
    max_table: usize,
) -> Result<Vec<[f64; 2]>, BayesError> {
    let program = build_program(net, clf, plan, max_table)?;
    let len = usize::try_from(plan.instantiations)
        .map_err(|_| BayesError::query("too many instantiations"))?;
    let mut weights = vec![[0.0f64; 2]; len];
    let run = Run {
        p: &program,
        positive: match plan.class {
            ClassMode::Kept => clf.positive_state,
            ClassMode::Fixed(_) | ClassMode::Without(_) => 0,
        },
    };
    if program.depths.is_empty() {
        let mut bufs = run.buffers();
        weights[0] = run.finish(&mut bufs);
    } else {
        let c0 = program.depths[0].0;
        weights
            .par_chunks_mut(len / c0)
            .enumerate()
            .for_each(|(s0, out)| {
                let mut bufs = run.buffers();
                if run.step(0, s0, &mut bufs) {
                    run.descend(1, &mut bufs, out);
                }
            });
    }
    Ok(weights)
}

/// Runs stage one and turns the plan's steps into per-depth programs.
fn build_program(
    net: &BayesianNetwork,
    clf: &ThresholdClassifier,
    plan: &EliminationPlan,
    max_table: usize,
) -> Result<Program, BayesError> {
    let (mut factors, _) = problem(net, clf, plan.class);
    for &v in &plan.order {
        let (with, without): (Vec<Factor>, Vec<Factor>) =
            factors.into_iter().partition(|f| f.vars().contains(&v));
        factors = without;
        let mut it = with.into_iter();
        let Some(mut prod) = it.next() else { continue };
        for f in it {
            prod = prod.product(&f, max_table)?;
        }
        factors.push(prod.sum_out(v));
    }
    let mut shared = Vec::new();
    let mut live: Vec<Table> = factors
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            let t = Table {
                slot: Slot::Shared(i),
                vars: f.vars().to_vec(),
                cards: f.cards().to_vec(),
            };
            shared.push(f.values().to_vec());
            t
        })
        .collect();
    let mut local_sizes = Vec::new();
    let new_local = |size: usize, sizes: &mut Vec<usize>| {
        sizes.push(size);
        sizes.len() - 1
    };
    let mut depths: Vec<(usize, Vec<Op>, Vec<usize>)> = Vec::new();
    for step in &plan.steps {
        match *step {
            Step::Branch(fp) => {
                let f = clf.features[fp];
                let mut ops = Vec::new();
                let mut fresh = Vec::new();
                for t in &mut live {
                    let Some(p) = t.vars.iter().position(|&u| u == f) else {
                        continue;
                    };
                    let strides = t.strides();
                    let mut vars = t.vars.clone();
                    let mut cards = t.cards.clone();
                    vars.remove(p);
                    cards.remove(p);
                    let size: usize = cards.iter().product();
                    // src index of each dst entry with the feature's digit at 0
                    let src_strides: Vec<usize> = (0..t.vars.len())
                        .filter(|&j| j != p)
                        .map(|j| strides[j])
                        .collect();
                    let map = odometer_offsets(&cards, &src_strides);
                    let dst = new_local(size, &mut local_sizes);
                    ops.push(Op::Reduce {
                        src: t.slot,
                        dst,
                        stride: strides[p],
                        map,
                    });
                    fresh.push(dst);
                    *t = Table {
                        slot: Slot::Local(dst),
                        vars,
                        cards,
                    };
                }
                // multiply each reduced table into the smallest other table containing its
                // scope, so the number of tables stays small
                let mut k = 0;
                while k < live.len() {
                    let is_fresh = matches!(live[k].slot, Slot::Local(i) if fresh.contains(&i));
                    let host = (0..live.len())
                        .filter(|&u| {
                            u != k && live[k].vars.iter().all(|v| live[u].vars.contains(v))
                        })
                        .min_by_key(|&u| (live[u].cards.iter().product::<usize>(), u));
                    let (true, Some(u)) = (is_fresh, host) else {
                        k += 1;
                        continue;
                    };
                    let small = live[k].clone();
                    let big = live[u].clone();
                    let st = small.strides();
                    let per_digit: Vec<usize> = big
                        .vars
                        .iter()
                        .map(|v| small.vars.iter().position(|w| w == v).map_or(0, |j| st[j]))
                        .collect();
                    let map = odometer_offsets(&big.cards, &per_digit);
                    let size: usize = big.cards.iter().product();
                    let dst = new_local(size, &mut local_sizes);
                    ops.push(Op::Absorb {
                        big: big.slot,
                        small: small.slot,
                        dst,
                        map,
                    });
                    fresh.push(dst);
                    live[u] = Table {
                        slot: Slot::Local(dst),
                        vars: big.vars,
                        cards: big.cards,
                    };
                    live.remove(k);
                    k = 0;
                }
                // check for zeros only the tables this depth leaves live
                fresh.retain(|i| {
                    live.iter()
                        .any(|t| matches!(t.slot, Slot::Local(j) if j == *i))
                });
                depths.push((net.cardinality(f), ops, fresh));
            }
            Step::Sum(v) => {
                let (with, without): (Vec<Table>, Vec<Table>) =
                    live.into_iter().partition(|t| t.vars.contains(&v));
                live = without;
                if with.is_empty() {
                    continue;
                }
                // the product's scope: the union without v, then v last
                let mut scope: Vec<usize> = Vec::new();
                for t in &with {
                    for &u in &t.vars {
                        if u != v && !scope.contains(&u) {
                            scope.push(u);
                        }
                    }
                }
                scope.push(v);
                let cards: Vec<usize> = scope.iter().map(|&u| net.cardinality(u)).collect();
                let srcs: Vec<(Slot, Vec<usize>)> = with
                    .iter()
                    .map(|t| {
                        let st = t.strides();
                        let per_digit = scope
                            .iter()
                            .map(|u| t.vars.iter().position(|w| w == u).map_or(0, |j| st[j]))
                            .collect();
                        (t.slot, per_digit)
                    })
                    .collect();
                let out_cards = cards[..cards.len() - 1].to_vec();
                let size: usize = out_cards.iter().product();
                let dst = new_local(size, &mut local_sizes);
                let Some(last) = depths.last_mut() else {
                    return Err(BayesError::query("plan sums before a branch (internal)"));
                };
                last.1.push(Op::SumProduct { srcs, cards, dst });
                last.2.push(dst);
                live.push(Table {
                    slot: Slot::Local(dst),
                    vars: scope[..scope.len() - 1].to_vec(),
                    cards: out_cards,
                });
            }
        }
    }
    let mut finals = Vec::new();
    for t in &live {
        let mut class_stride = 0;
        let st = t.strides();
        for (j, &u) in t.vars.iter().enumerate() {
            if u == clf.class {
                class_stride = st[j];
            } else {
                return Err(BayesError::query(format!(
                    "variable {u} left after the plan (internal)"
                )));
            }
        }
        finals.push((t.slot, class_stride));
    }
    Ok(Program {
        shared,
        local_sizes,
        depths,
        finals,
        k: match plan.class {
            ClassMode::Kept => net.cardinality(clf.class),
            ClassMode::Fixed(_) | ClassMode::Without(_) => 1,
        },
    })
}

/// The offsets `Σ_j digit_j · strides[j]` of every joint state of `cards` (mixed radix,
/// last fastest).
fn odometer_offsets(cards: &[usize], strides: &[usize]) -> Vec<usize> {
    let size: usize = cards.iter().product();
    let mut out = Vec::with_capacity(size);
    let mut digits = vec![0usize; cards.len()];
    let mut off = 0usize;
    for _ in 0..size {
        out.push(off);
        for j in (0..cards.len()).rev() {
            digits[j] += 1;
            off += strides[j];
            if digits[j] < cards[j] {
                break;
            }
            off -= strides[j] * cards[j];
            digits[j] = 0;
        }
    }
    out
}

/// `out[i] = Σ_t Π_k tables[k][offset_k(i, t)]` over the mixed radix `cards` (the last
/// digit `t` summed), `strides[k][j]` = table `k`'s stride of digit `j` (0 if absent);
/// `offs` (one per table) and `digits` (one per digit) are zeroed scratch. The fastest
/// kept digit runs as an inner loop (each table's offset a multiple of its stride), the
/// others by the odometer of [`sum_product_loop`]; every entry is the same sum of the same
/// products, in the same order, as one odometer step per output.
fn sum_product_kernel(
    tables: &[&[f64]],
    strides: &[&[usize]],
    cards: &[usize],
    out: &mut [f64],
    offs: &mut [usize],
    digits: &mut [usize],
) {
    let m = cards.len();
    let inner = cards[m - 1];
    let last = |k: usize| strides[k][m - 1];
    // the stride of the fastest kept digit (none when only the summed digit is left)
    let run = |k: usize| if m >= 2 { strides[k][m - 2] } else { 0 };
    match tables.len() {
        1 => {
            let (a, sa, ra) = (tables[0], last(0), run(0));
            sum_product_loop(out, cards, strides, offs, digits, |o, i| {
                let oa = o[0] + i * ra;
                (0..inner).map(|t| a[oa + t * sa]).sum()
            });
        }
        2 => {
            let (a, sa, ra, b, sb, rb) = (tables[0], last(0), run(0), tables[1], last(1), run(1));
            sum_product_loop(out, cards, strides, offs, digits, |o, i| {
                let (oa, ob) = (o[0] + i * ra, o[1] + i * rb);
                (0..inner).map(|t| a[oa + t * sa] * b[ob + t * sb]).sum()
            });
        }
        3 => {
            let (a, sa, ra, b, sb, rb, c, sc, rc) = (
                tables[0],
                last(0),
                run(0),
                tables[1],
                last(1),
                run(1),
                tables[2],
                last(2),
                run(2),
            );
            sum_product_loop(out, cards, strides, offs, digits, |o, i| {
                let (oa, ob, oc) = (o[0] + i * ra, o[1] + i * rb, o[2] + i * rc);
                (0..inner)
                    .map(|t| a[oa + t * sa] * b[ob + t * sb] * c[oc + t * sc])
                    .sum()
            });
        }
        _ => sum_product_loop(out, cards, strides, offs, digits, |o, i| {
            (0..inner)
                .map(|t| {
                    tables
                        .iter()
                        .zip(o)
                        .enumerate()
                        .map(|(k, (tab, &off))| tab[off + i * run(k) + t * last(k)])
                        .product::<f64>()
                })
                .sum()
        }),
    }
}

/// The loops of [`sum_product_kernel`]: `out[i] = entry(offsets, r)` with `r` the fastest
/// kept digit (an inner loop) and the offsets of the slower digits advanced by each
/// table's strides (an odometer per run of that digit).
fn sum_product_loop(
    out: &mut [f64],
    cards: &[usize],
    strides: &[&[usize]],
    offs: &mut [usize],
    digits: &mut [usize],
    entry: impl Fn(&[usize], usize) -> f64,
) {
    let m = cards.len();
    if m < 2 {
        for o in out.iter_mut() {
            *o = entry(offs, 0);
        }
        return;
    }
    let runs = cards[m - 2];
    for chunk in out.chunks_mut(runs) {
        for (r, o) in chunk.iter_mut().enumerate() {
            *o = entry(offs, r);
        }
        for j in (0..m - 2).rev() {
            digits[j] += 1;
            for (off, st) in offs.iter_mut().zip(strides) {
                *off += st[j];
            }
            if digits[j] < cards[j] {
                break;
            }
            for (off, st) in offs.iter_mut().zip(strides) {
                *off -= st[j] * cards[j];
            }
            digits[j] = 0;
        }
    }
}

/// One search's read-only context.
struct Run<'a> {
    p: &'a Program,
    positive: usize,
}

impl Run<'_> {
    fn buffers(&self) -> Vec<Vec<f64>> {
        self.p.local_sizes.iter().map(|&n| vec![0.0; n]).collect()
    }

    fn read<'b>(&'b self, slot: Slot, bufs: &'b [Vec<f64>]) -> &'b [f64] {
        match slot {
            Slot::Shared(i) => &self.p.shared[i],
            Slot::Local(i) => &bufs[i],
        }
    }

    /// Runs depth `d`'s program with its feature in `state`; false if a new table is all
    /// zero (the subtree has zero weight).
    fn step(&self, d: usize, state: usize, bufs: &mut [Vec<f64>]) -> bool {
        let (_, ops, fresh) = &self.p.depths[d];
        for op in ops {
            match op {
                Op::Reduce {
                    src,
                    dst,
                    stride,
                    map,
                } => {
                    let mut out = std::mem::take(&mut bufs[*dst]);
                    let src = self.read(*src, bufs);
                    let base = state * stride;
                    for (o, &m) in out.iter_mut().zip(map) {
                        *o = src[base + m];
                    }
                    bufs[*dst] = out;
                }
                Op::Absorb {
                    big,
                    small,
                    dst,
                    map,
                } => {
                    let mut out = std::mem::take(&mut bufs[*dst]);
                    let b = self.read(*big, bufs);
                    let t = self.read(*small, bufs);
                    for ((o, &x), &m) in out.iter_mut().zip(b).zip(map) {
                        *o = x * t[m];
                    }
                    bufs[*dst] = out;
                }
                Op::SumProduct { srcs, cards, dst } => {
                    let mut out = std::mem::take(&mut bufs[*dst]);
                    self.sum_product(srcs, cards, &mut out, bufs);
                    bufs[*dst] = out;
                }
            }
        }
        fresh.iter().all(|&i| bufs[i].iter().any(|&x| x != 0.0))
    }

    fn sum_product(
        &self,
        srcs: &[(Slot, Vec<usize>)],
        cards: &[usize],
        out: &mut [f64],
        bufs: &[Vec<f64>],
    ) {
        /// Scratch kept on the stack (no allocation per search node) up to this many
        /// sources and digits.
        const SMALL: usize = 16;
        let m = cards.len();
        let n = srcs.len();
        if n > SMALL || m > SMALL {
            let tables: Vec<&[f64]> = srcs.iter().map(|(s, _)| self.read(*s, bufs)).collect();
            let strides: Vec<&[usize]> = srcs.iter().map(|(_, st)| st.as_slice()).collect();
            let mut offs = vec![0usize; n];
            let mut digits = vec![0usize; m];
            sum_product_kernel(&tables, &strides, cards, out, &mut offs, &mut digits);
            return;
        }
        let empty: &[f64] = &[];
        let mut tables = [empty; SMALL];
        let mut strides: [&[usize]; SMALL] = [&[]; SMALL];
        for (k, (slot, st)) in srcs.iter().enumerate() {
            tables[k] = self.read(*slot, bufs);
            strides[k] = st;
        }
        let mut offs = [0usize; SMALL];
        let mut digits = [0usize; SMALL];
        sum_product_kernel(
            &tables[..n],
            &strides[..n],
            cards,
            out,
            &mut offs[..n],
            &mut digits[..m],
        );
    }

    /// `[Pr(x, d), Pr(x, ¬d)]` of one full instantiation from the final tables.
    fn finish(&self, bufs: &mut [Vec<f64>]) -> [f64; 2] {
        let k = self.p.k;
        let mut row = [0.0f64; 64];
        let mut heap;
        let row: &mut [f64] = if k <= 64 {
            &mut row[..k]
        } else {
            heap = vec![0.0; k];
            &mut heap
        };
        row.fill(1.0);
        for &(slot, cs) in &self.p.finals {
            let t = self.read(slot, bufs);
            for (d, r) in row.iter_mut().enumerate() {
                *r *= t[d * cs];
            }
        }
        let wd = row[self.positive];
        let wn = row.iter().sum::<f64>() - wd;
        [wd, wn]
    }

    /// Fills `out`: the instantiations extending the branches above depth `d`.
    fn descend(&self, d: usize, bufs: &mut [Vec<f64>], out: &mut [[f64; 2]]) {
        if d == self.p.depths.len() {
            out[0] = self.finish(bufs);
            return;
        }
        let c = self.p.depths[d].0;
        let block = out.len() / c;
        for (s, chunk) in out.chunks_mut(block).enumerate() {
            if self.step(d, s, bufs) {
                self.descend(d + 1, bufs, chunk);
            }
        }
    }
}
