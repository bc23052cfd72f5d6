//! Exact inference: enumeration for small models and two-pass belief propagation on
//! forests. The oracle every approximate algorithm is tested against.

use serde::{Deserialize, Serialize};

use crate::bp::{BpMode, add_term, cavity, split_terms_start};
use crate::error::InferError;
use crate::marginals::{Convergence, MapAssignment, Marginals, argmax, edge_offsets, log_sum_exp};
use crate::mrf::PairwiseMrf;

/// Exact marginals, `log Z` and MAP.
///
/// Observed variables are conditioned on first (their edges become unary terms of the
/// free neighbours). Then:
/// - if the free variables with the free–free edges form a **forest**, two-pass
///   (collect/distribute) sum- or max-product on each tree, `O(Σ_e k_u k_v)`;
/// - else, if the free variables have at most `2^enumeration_limit_log2` joint states
///   ("≤ 20 binary-equivalent variables" by default), **enumeration** of all joint states,
///   `O(Π k_v · (n + m))`;
/// - else [`InferError::ExactTooLarge`].
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `enumeration_limit_log2` | 20 | largest `log2 Π_{free} k_v` enumerated | `0..=30` sensible |
///
/// # Examples
/// ```
/// use srl_infer::{Exact, MrfParts, PairTable, PairwiseMrf};
/// let mrf = PairwiseMrf::new(MrfParts {
///     num_states: vec![2, 2],
///     unary: vec![0.0, 0.0, 0.0, 0.0],
///     edges: vec![(0, 1)],
///     edge_tables: vec![0],
///     tables: vec![PairTable::potts(2, 2f64.ln(), 0.0)],
///     evidence: vec![],
/// })?;
/// let m = Exact::default().marginals(&mrf)?;
/// // P(x0 = x1) = 2·2 / (2·2 + 2) = 2/3, split over two equal states.
/// assert!((m.edge(0).unwrap()[0] - 1.0 / 3.0).abs() < 1e-12);
/// assert!((m.log_partition().unwrap() - 6f64.ln()).abs() < 1e-12);
/// # Ok::<(), srl_infer::InferError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exact {
    /// Enumeration limit as `log2` of the number of joint states of the free variables.
    pub enumeration_limit_log2: u32,
}

impl Default for Exact {
    fn default() -> Self {
        Self {
            enumeration_limit_log2: 20,
        }
    }
}

/// The model with evidence absorbed.
struct Reduced {
    free: Vec<bool>,
    /// Unary log-potentials of free variables with clamped-neighbour terms added.
    unary: Vec<f64>,
    /// Free–free edges (indices into the model's edges).
    free_edges: Vec<usize>,
    /// Log-potential of the clamped part (constant).
    constant: f64,
}

/// The log-table of edge `e` as the algorithms see it (`rows x cols`, row-major): kernel
/// `2t` of its table `t`, i.e. the table as given on an ordinary model and shifted to
/// `max = 0` on an extreme one.
fn edge_table(mrf: &PairwiseMrf, e: usize) -> (&[f64], usize, usize) {
    let (u, v) = mrf.edges[e];
    let (rows, cols) = (
        mrf.num_states[u as usize] as usize,
        mrf.num_states[v as usize] as usize,
    );
    let o = mrf.kernels.off[2 * mrf.edge_tables[e] as usize];
    (&mrf.kernels.log[o..o + rows * cols], rows, cols)
}

/// `log_score` of the working (possibly shifted) model: equals
/// [`PairwiseMrf::log_score`] on an ordinary model and `log_score − shift` on an extreme
/// one (evidence applied).
fn work_score(mrf: &PairwiseMrf, x: &[u32]) -> f64 {
    if !mrf.extreme {
        return mrf.log_score(x);
    }
    let mut s = 0.0;
    for (v, &xv) in x.iter().enumerate() {
        s += mrf.eff_unary()[mrf.state_off[v] + xv as usize];
    }
    for e in 0..mrf.num_edges() {
        let (u, v) = mrf.edges[e];
        let (tab, _, cols) = edge_table(mrf, e);
        s += tab[x[u as usize] as usize * cols + x[v as usize] as usize];
    }
    s
}

/// `x + mrf.shift` on an extreme model (the shifted model's `log Z` back to the model's
/// own), `x` untouched on an ordinary one.
fn with_shift(mrf: &PairwiseMrf, x: f64) -> f64 {
    if mrf.extreme { x + mrf.shift } else { x }
}

fn zero_error(node: Option<usize>) -> InferError {
    InferError::ZeroProbability {
        node,
        cause: "the zero potentials and the evidence admit no assignment (exact)",
    }
}

fn reduce(mrf: &PairwiseMrf) -> Reduced {
    let n = mrf.num_nodes();
    let free: Vec<bool> = (0..n).map(|v| mrf.evidence[v].is_none()).collect();
    let mut unary = mrf.work_unary().to_vec();
    let mut constant = 0.0;
    for v in 0..n {
        if let Some(s) = mrf.evidence[v] {
            constant += mrf.work_unary()[mrf.state_off[v] + s as usize];
        }
    }
    let mut free_edges = Vec::new();
    for (e, &(u, v)) in mrf.edges.iter().enumerate() {
        let (u, v) = (u as usize, v as usize);
        let (tab, rows, cols) = edge_table(mrf, e);
        match (mrf.evidence[u], mrf.evidence[v]) {
            (None, None) => free_edges.push(e),
            (None, Some(b)) => {
                for a in 0..rows {
                    unary[mrf.state_off[u] + a] += tab[a * cols + b as usize];
                }
            }
            (Some(a), None) => {
                for b in 0..cols {
                    unary[mrf.state_off[v] + b] += tab[a as usize * cols + b];
                }
            }
            (Some(a), Some(b)) => constant += tab[a as usize * cols + b as usize],
        }
    }
    Reduced {
        free,
        unary,
        free_edges,
        constant,
    }
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn combine(mode: BpMode, xs: &[f64]) -> f64 {
    match mode {
        BpMode::SumProduct => log_sum_exp(xs),
        BpMode::MaxProduct => xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

/// Result of the two-pass algorithm on the free forest.
struct TreePass {
    /// Unnormalised log-beliefs (sum: marginals; max: max-marginals), flat.
    bel: Vec<f64>,
    /// Unnormalised log edge beliefs in the model's edge layout.
    edge: Vec<f64>,
    /// `Σ_roots combine(belief_root)` plus the constant.
    log_z: f64,
    /// Decoded states (max mode only; evidence kept).
    states: Vec<u32>,
    /// A root whose belief is `-∞` everywhere (probability zero), if any.
    dead: Option<usize>,
}

impl Exact {
    /// Whether the free part of `mrf` (after conditioning on evidence) is a forest.
    #[must_use]
    pub fn is_forest(mrf: &PairwiseMrf) -> bool {
        let r = reduce(mrf);
        let mut parent: Vec<usize> = (0..mrf.num_nodes()).collect();
        for &e in &r.free_edges {
            let (u, v) = mrf.edges[e];
            let (a, b) = (find(&mut parent, u as usize), find(&mut parent, v as usize));
            if a == b {
                return false;
            }
            parent[a] = b;
        }
        true
    }

    fn log2_states(mrf: &PairwiseMrf) -> f64 {
        (0..mrf.num_nodes())
            .filter(|&v| mrf.evidence[v].is_none())
            .map(|v| f64::from(mrf.num_states[v]).log2())
            .sum()
    }

    fn check_enumerable(&self, mrf: &PairwiseMrf) -> Result<(), InferError> {
        let l = Self::log2_states(mrf);
        if l > f64::from(self.enumeration_limit_log2) + 1e-9 {
            return Err(InferError::ExactTooLarge {
                log2_states: l,
                limit_log2: self.enumeration_limit_log2,
            });
        }
        Ok(())
    }

    /// Exact node and edge marginals and `log Z` (in [`Marginals::log_partition`]).
    ///
    /// # Errors
    /// [`InferError::ExactTooLarge`] when the model is neither a forest nor enumerable.
    pub fn marginals(&self, mrf: &PairwiseMrf) -> Result<Marginals, InferError> {
        if Self::is_forest(mrf) {
            let t = tree_pass(mrf, BpMode::SumProduct);
            if t.log_z == f64::NEG_INFINITY {
                return Err(zero_error(t.dead));
            }
            let mut m = Marginals::from_unnormalized(mrf, t.bel, t.edge, Convergence::exact());
            m.set_log_partition(t.log_z);
            Ok(m)
        } else {
            self.enumerate_marginals(mrf)
        }
    }

    /// Marginals by enumeration only (no forest shortcut), e.g. to cross-check the tree
    /// algorithm.
    ///
    /// # Errors
    /// [`InferError::ExactTooLarge`] past the enumeration limit.
    pub fn enumerate_marginals(&self, mrf: &PairwiseMrf) -> Result<Marginals, InferError> {
        self.check_enumerable(mrf)?;
        let (work_log_z, _, _) = enumerate_summary(mrf);
        if work_log_z == f64::NEG_INFINITY {
            return Err(zero_error(None));
        }
        let log_z = with_shift(mrf, work_log_z);
        let mut node = vec![0.0; mrf.eff_unary().len()];
        let eoff = edge_offsets(mrf);
        let mut edge = vec![0.0; eoff[eoff.len() - 1]];
        for_each_state(mrf, |x, s| {
            let p = (s - work_log_z).exp();
            for (v, &xv) in x.iter().enumerate() {
                node[mrf.state_off[v] + xv as usize] += p;
            }
            for (e, &(u, v)) in mrf.edges.iter().enumerate() {
                let kv = mrf.num_states[v as usize] as usize;
                edge[eoff[e] + x[u as usize] as usize * kv + x[v as usize] as usize] += p;
            }
        });
        let mut m = Marginals::from_probabilities(mrf, node, edge, Convergence::exact());
        m.set_log_partition(log_z);
        Ok(m)
    }

    /// `log Z = log Σ_x exp(log_score(x))` over assignments agreeing with the evidence.
    ///
    /// # Errors
    /// As [`Exact::marginals`].
    pub fn log_partition(&self, mrf: &PairwiseMrf) -> Result<f64, InferError> {
        let (z, dead) = if Self::is_forest(mrf) {
            let t = tree_pass(mrf, BpMode::SumProduct);
            (t.log_z, t.dead)
        } else {
            self.check_enumerable(mrf)?;
            (with_shift(mrf, enumerate_summary(mrf).0), None)
        };
        if z == f64::NEG_INFINITY {
            return Err(zero_error(dead));
        }
        Ok(z)
    }

    /// The exact MAP assignment (max-product on forests, enumeration otherwise; ties:
    /// the first maximiser found).
    ///
    /// # Errors
    /// As [`Exact::marginals`].
    pub fn map(&self, mrf: &PairwiseMrf) -> Result<MapAssignment, InferError> {
        if Self::is_forest(mrf) {
            let t = tree_pass(mrf, BpMode::MaxProduct);
            if t.log_z == f64::NEG_INFINITY {
                return Err(zero_error(t.dead));
            }
            Ok(MapAssignment::new(mrf, t.states, Convergence::exact()))
        } else {
            self.check_enumerable(mrf)?;
            let (z, best, _) = enumerate_summary(mrf);
            if z == f64::NEG_INFINITY {
                return Err(zero_error(None));
            }
            Ok(MapAssignment::new(mrf, best, Convergence::exact()))
        }
    }
}

/// Calls `f(x, log_score(x))` for every joint state agreeing with the evidence (first
/// free variable fastest).
fn for_each_state(mrf: &PairwiseMrf, mut f: impl FnMut(&[u32], f64)) {
    let n = mrf.num_nodes();
    let free: Vec<usize> = (0..n).filter(|&v| mrf.evidence[v].is_none()).collect();
    let mut x: Vec<u32> = (0..n).map(|v| mrf.evidence[v].unwrap_or(0)).collect();
    loop {
        f(&x, work_score(mrf, &x));
        let mut carry = true;
        for &v in &free {
            x[v] += 1;
            if x[v] < mrf.num_states[v] {
                carry = false;
                break;
            }
            x[v] = 0;
        }
        if carry {
            break;
        }
    }
}

/// `(log Z, first maximiser, its score)` by enumeration, streaming (`log Z = -∞` and an
/// all-zero maximiser when no assignment has positive probability).
fn enumerate_summary(mrf: &PairwiseMrf) -> (f64, Vec<u32>, f64) {
    let (mut mx, mut sum) = (f64::NEG_INFINITY, 0.0);
    let mut best = vec![0; mrf.num_nodes()];
    for_each_state(mrf, |x, s| {
        if s == f64::NEG_INFINITY {
            // Probability zero (extreme models only): contributes nothing.
        } else if s > mx {
            sum = sum * (mx - s).exp() + 1.0;
            mx = s;
            best = x.to_vec();
        } else {
            sum += (s - mx).exp();
        }
    });
    if mx == f64::NEG_INFINITY {
        return (mx, best, mx);
    }
    // On an extreme model these are of the shifted model: add `mrf.shift` for the
    // model's own (see `with_shift`).
    (mx + sum.ln(), best, mx)
}

fn tree_pass(mrf: &PairwiseMrf, mode: BpMode) -> TreePass {
    let n = mrf.num_nodes();
    let r = reduce(mrf);
    let off = &mrf.state_off;
    let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for &e in &r.free_edges {
        let (u, v) = mrf.edges[e];
        adj[u as usize].push((v as usize, e));
        adj[v as usize].push((u as usize, e));
    }
    // θ_e(x_child = a, x_parent = b), whatever the edge orientation.
    let theta = |e: usize, child: usize, a: usize, b: usize| {
        let (tab, _, cols) = edge_table(mrf, e);
        if mrf.edges[e].0 as usize == child {
            tab[a * cols + b]
        } else {
            tab[b * cols + a]
        }
    };
    let mut order = Vec::with_capacity(n);
    let mut parent = vec![usize::MAX; n];
    let mut parent_edge = vec![usize::MAX; n];
    let mut visited = vec![false; n];
    let mut roots = Vec::new();
    for s in 0..n {
        if !r.free[s] || visited[s] {
            continue;
        }
        roots.push(s);
        visited[s] = true;
        let start = order.len();
        order.push(s);
        let mut head = start;
        while head < order.len() {
            let v = order[head];
            head += 1;
            for &(w, e) in &adj[v] {
                if !visited[w] {
                    visited[w] = true;
                    parent[w] = v;
                    parent_edge[w] = e;
                    order.push(w);
                }
            }
        }
    }
    // Upward pass.
    let mut up_acc = r.unary.clone();
    // msg_up[v]: message from v to its parent, over x_parent, at msg_up_off[v].
    let mut msg_up_off = vec![0usize; n + 1];
    for v in 0..n {
        let kp = if parent[v] == usize::MAX {
            0
        } else {
            mrf.num_states[parent[v]] as usize
        };
        msg_up_off[v + 1] = msg_up_off[v] + kp;
    }
    let mut msg_up = vec![0.0; msg_up_off[n]];
    let mut buf = Vec::new();
    for &v in order.iter().rev() {
        let p = parent[v];
        if p == usize::MAX {
            continue;
        }
        let e = parent_edge[v];
        let (kv, kp) = (mrf.num_states[v] as usize, mrf.num_states[p] as usize);
        for b in 0..kp {
            buf.clear();
            for a in 0..kv {
                buf.push(up_acc[off[v] + a] + theta(e, v, a, b));
            }
            let m = combine(mode, &buf);
            msg_up[msg_up_off[v] + b] = m;
            up_acc[off[p] + b] += m;
        }
    }
    // Extreme models: every belief also as split sums (finite part, number of -∞ terms)
    // of its unary, its children's messages and (below) its parent's, so that a cavity
    // never computes ∞ − ∞.
    let (mut fin, mut ninf) = (Vec::new(), Vec::new());
    if mrf.extreme {
        fin = vec![0.0; r.unary.len()];
        ninf = vec![0.0; r.unary.len()];
        split_terms_start(&r.unary, &mut fin, &mut ninf);
        for v in 0..n {
            let p = parent[v];
            if p != usize::MAX {
                for b in 0..mrf.num_states[p] as usize {
                    add_term(
                        &mut fin[off[p] + b],
                        &mut ninf[off[p] + b],
                        msg_up[msg_up_off[v] + b],
                    );
                }
            }
        }
    }
    // Downward pass: full belief = up_acc + msg_down.
    let mut bel = up_acc.clone();
    for &v in &order {
        let p = parent[v];
        if p == usize::MAX {
            continue;
        }
        let e = parent_edge[v];
        let (kv, kp) = (mrf.num_states[v] as usize, mrf.num_states[p] as usize);
        for a in 0..kv {
            buf.clear();
            for b in 0..kp {
                let up = msg_up[msg_up_off[v] + b];
                let cav = if mrf.extreme {
                    cavity(fin[off[p] + b], ninf[off[p] + b], up)
                } else {
                    bel[off[p] + b] - up
                };
                buf.push(cav + theta(e, v, a, b));
            }
            let down = combine(mode, &buf);
            bel[off[v] + a] = up_acc[off[v] + a] + down;
            if mrf.extreme {
                add_term(&mut fin[off[v] + a], &mut ninf[off[v] + a], down);
            }
        }
    }
    // Clamped variables: point masses.
    for v in 0..n {
        if let Some(s) = mrf.evidence[v] {
            for x in 0..mrf.num_states[v] {
                bel[off[v] + x as usize] = if x == s { 0.0 } else { f64::NEG_INFINITY };
            }
        }
    }
    let mut log_z = r.constant;
    let mut dead = None;
    for &s in &roots {
        let z = combine(mode, &bel[off[s]..off[s + 1]]);
        if z == f64::NEG_INFINITY && dead.is_none() {
            dead = Some(s);
        }
        log_z += z;
    }
    if mrf.extreme {
        log_z += mrf.shift;
    }
    // Edge beliefs.
    let eoff = edge_offsets(mrf);
    let mut edge = vec![f64::NEG_INFINITY; eoff[eoff.len() - 1]];
    let mut is_child_edge = vec![usize::MAX; mrf.num_edges()];
    for v in 0..n {
        if parent_edge[v] != usize::MAX {
            is_child_edge[parent_edge[v]] = v;
        }
    }
    for (e, &(u, w)) in mrf.edges.iter().enumerate() {
        let (u, w) = (u as usize, w as usize);
        let (ku, kw) = (mrf.num_states[u] as usize, mrf.num_states[w] as usize);
        let dst = &mut edge[eoff[e]..eoff[e + 1]];
        let child = is_child_edge[e];
        if child != usize::MAX {
            let p = parent[child];
            for a in 0..ku {
                for b in 0..kw {
                    let (xc, xp) = if child == u { (a, b) } else { (b, a) };
                    let up = msg_up[msg_up_off[child] + xp];
                    dst[a * kw + b] = if mrf.extreme {
                        up_acc[off[child] + xc]
                            + cavity(fin[off[p] + xp], ninf[off[p] + xp], up)
                            + theta(e, child, xc, xp)
                    } else {
                        up_acc[off[child] + xc] + bel[off[p] + xp] - up + theta(e, child, xc, xp)
                    };
                }
            }
        } else {
            // At least one endpoint is clamped: product of the node beliefs.
            for a in 0..ku {
                for b in 0..kw {
                    dst[a * kw + b] = bel[off[u] + a] + bel[off[w] + b];
                }
            }
        }
    }
    // Decoding (max mode).
    let mut states: Vec<u32> = (0..n).map(|v| mrf.evidence[v].unwrap_or(0)).collect();
    if mode == BpMode::MaxProduct {
        for &v in &order {
            let kv = mrf.num_states[v] as usize;
            let p = parent[v];
            buf.clear();
            for a in 0..kv {
                let mut x = up_acc[off[v] + a];
                if p != usize::MAX {
                    x += theta(parent_edge[v], v, a, states[p] as usize);
                }
                buf.push(x);
            }
            states[v] = argmax(&buf) as u32;
        }
    }
    TreePass {
        bel,
        edge,
        log_z,
        states,
        dead,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mrf::{MrfParts, PairTable};

    fn chain(evidence: Vec<Option<u32>>) -> PairwiseMrf {
        PairwiseMrf::new(MrfParts {
            num_states: vec![2, 3, 2, 2],
            unary: vec![0.1, -0.3, 0.2, 0.0, 0.7, 0.4, -0.1, 0.3, 0.0],
            edges: vec![(1, 0), (1, 2), (3, 2)],
            edge_tables: vec![0, 1, 2],
            tables: vec![
                PairTable::from_fn(3, 2, |a, b| 0.3 * (a as f64) - 0.5 * (b as f64) + 0.1),
                PairTable::from_fn(3, 2, |a, b| if a == b { 0.9 } else { -0.2 }),
                PairTable::potts(2, 0.8, 0.0),
            ],
            evidence,
        })
        .unwrap()
    }

    #[test]
    fn tree_equals_enumeration() {
        for ev in [
            vec![],
            vec![None, Some(2), None, None],
            vec![Some(1), None, None, Some(0)],
        ] {
            let mrf = chain(ev);
            assert!(Exact::is_forest(&mrf));
            let ex = Exact::default();
            let t = ex.marginals(&mrf).unwrap();
            let e = ex.enumerate_marginals(&mrf).unwrap();
            for v in 0..4 {
                for (a, b) in t.node(v).iter().zip(e.node(v)) {
                    assert!((a - b).abs() < 1e-12);
                }
            }
            for ed in 0..3 {
                for (a, b) in t.edge(ed).unwrap().iter().zip(e.edge(ed).unwrap()) {
                    assert!((a - b).abs() < 1e-12, "{a} {b}");
                }
            }
            assert!((t.log_partition().unwrap() - e.log_partition().unwrap()).abs() < 1e-12);
            let map = ex.map(&mrf).unwrap();
            let (_, _, best) = enumerate_summary(&mrf);
            assert!((map.log_score - best).abs() < 1e-12);
        }
    }

    #[test]
    fn too_large_is_an_error() {
        let n = 22;
        let mut edges: Vec<(u32, u32)> = (0..n - 1).map(|i| (i, i + 1)).collect();
        edges.push((0, n - 1));
        let mrf = PairwiseMrf::new(MrfParts {
            num_states: vec![2; n as usize],
            unary: vec![0.0; 2 * n as usize],
            edge_tables: vec![0; edges.len()],
            edges,
            tables: vec![PairTable::potts(2, 1.0, 0.0)],
            evidence: vec![],
        })
        .unwrap();
        assert!(!Exact::is_forest(&mrf));
        assert!(matches!(
            Exact::default().marginals(&mrf),
            Err(InferError::ExactTooLarge { .. })
        ));
    }
}
