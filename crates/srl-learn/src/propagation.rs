//! Sparse propagation on srl-graph's CSR graph: the normalised adjacency matrices of the
//! graph learners, label propagation (Zhou et al. 2004), Correct & Smooth (Huang et al.
//! 2021) and the personalised-PageRank propagation of APPNP (Klicpera et al. 2019).
//!
//! Everything here is plain sequential `f64` arithmetic on [`CsrMatrix`] (no threads), so
//! the same input gives the same bits on any machine and thread count. The neural methods
//! (the `neural` module, behind the `neural` feature) use the same matrices inside their
//! autodiff graph.
//!
//! Dense matrices are row-major `Vec<f64>`: an `n x d` matrix `X` has `X[i][j]` at
//! `x[i * d + j]`.

use srl_graph::{AttributeRow, NodeId, RelationalGraph};
use srl_infer::Convergence;

use crate::error::LearnError;

/// A sparse `rows x cols` matrix of `f64` in compressed sparse rows: row `i` holds the
/// entries `values[offsets[i]..offsets[i + 1]]` in the columns
/// `indices[offsets[i]..offsets[i + 1]]` (strictly increasing within a row).
#[derive(Clone, Debug, PartialEq)]
pub struct CsrMatrix {
    rows: usize,
    cols: usize,
    offsets: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
}

impl CsrMatrix {
    /// A matrix from its CSR arrays.
    ///
    /// # Errors
    /// [`LearnError::DimensionMismatch`] when `offsets.len() != rows + 1` or `indices` and
    /// `values` differ in length or from `offsets[rows]`; [`LearnError::InvalidData`] for
    /// decreasing offsets, a column `>= cols` or columns not strictly increasing within a
    /// row; [`LearnError::InvalidValue`] for a non-finite value.
    pub fn new(
        rows: usize,
        cols: usize,
        offsets: Vec<usize>,
        indices: Vec<u32>,
        values: Vec<f64>,
    ) -> Result<Self, LearnError> {
        if offsets.len() != rows + 1 {
            return Err(LearnError::DimensionMismatch {
                what: "CSR offsets",
                expected: rows + 1,
                found: offsets.len(),
            });
        }
        if indices.len() != values.len() || offsets[rows] != indices.len() || offsets[0] != 0 {
            return Err(LearnError::DimensionMismatch {
                what: "CSR indices and values",
                expected: offsets[rows],
                found: indices.len().min(values.len()),
            });
        }
        for i in 0..rows {
            let (a, b) = (offsets[i], offsets[i + 1]);
            if a > b {
                return Err(LearnError::InvalidData {
                    message: format!("CSR row {i}: offsets decrease"),
                });
            }
            let row = &indices[a..b];
            if row.windows(2).any(|w| w[0] >= w[1])
                || row.last().is_some_and(|&j| j as usize >= cols)
            {
                return Err(LearnError::InvalidData {
                    message: format!(
                        "CSR row {i}: columns must be strictly increasing and below {cols}"
                    ),
                });
            }
        }
        if let Some(i) = values.iter().position(|x| !x.is_finite()) {
            return Err(LearnError::InvalidValue {
                what: "CSR value",
                index: i,
                value: values[i],
            });
        }
        Ok(Self {
            rows,
            cols,
            offsets,
            indices,
            values,
        })
    }

    /// The `rows x cols` matrix with no stored entry.
    #[must_use]
    pub fn empty(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            offsets: vec![0; rows + 1],
            indices: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Number of rows.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    #[must_use]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Number of stored entries.
    #[must_use]
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Row `i` as `(columns, values)`.
    ///
    /// # Panics
    /// If `i >= rows`.
    #[must_use]
    pub fn row(&self, i: usize) -> (&[u32], &[f64]) {
        let (a, b) = (self.offsets[i], self.offsets[i + 1]);
        (&self.indices[a..b], &self.values[a..b])
    }

    /// The range of row `i`'s entries in [`CsrMatrix::values`] (and the column indices).
    ///
    /// # Panics
    /// If `i >= rows`.
    #[must_use]
    pub(crate) fn row_range(&self, i: usize) -> (usize, usize) {
        (self.offsets[i], self.offsets[i + 1])
    }

    /// The column indices of the stored entries, parallel to [`CsrMatrix::values`].
    #[must_use]
    pub(crate) fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// The same sparsity pattern with new values (parallel to the stored entries), e.g. a
    /// dropout mask applied to the entries.
    ///
    /// # Errors
    /// [`LearnError::DimensionMismatch`] for a length other than [`CsrMatrix::nnz`].
    pub fn with_values(&self, values: Vec<f64>) -> Result<Self, LearnError> {
        if values.len() != self.values.len() {
            return Err(LearnError::DimensionMismatch {
                what: "CSR values",
                expected: self.values.len(),
                found: values.len(),
            });
        }
        Ok(Self {
            values,
            ..self.clone()
        })
    }

    /// The stored values, parallel to the entries of the rows in order.
    #[must_use]
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// `self · x` for a dense row-major `cols x d` matrix `x`, into `out` (`rows x d`,
    /// overwritten). Sequential, so bit-for-bit reproducible.
    ///
    /// # Errors
    /// [`LearnError::DimensionMismatch`] when `x.len() != cols · d` or `out.len() != rows
    /// · d`.
    pub fn mul_dense_into(&self, x: &[f64], d: usize, out: &mut [f64]) -> Result<(), LearnError> {
        if x.len() != self.cols * d {
            return Err(LearnError::DimensionMismatch {
                what: "dense right-hand side",
                expected: self.cols * d,
                found: x.len(),
            });
        }
        if out.len() != self.rows * d {
            return Err(LearnError::DimensionMismatch {
                what: "dense product",
                expected: self.rows * d,
                found: out.len(),
            });
        }
        out.iter_mut().for_each(|o| *o = 0.0);
        for i in 0..self.rows {
            let o = &mut out[i * d..(i + 1) * d];
            let (cols, vals) = self.row(i);
            for (&j, &a) in cols.iter().zip(vals) {
                let xr = &x[j as usize * d..(j as usize + 1) * d];
                for (oc, &xc) in o.iter_mut().zip(xr) {
                    *oc += a * xc;
                }
            }
        }
        Ok(())
    }

    /// `self · x` as a new `rows x d` matrix (see [`CsrMatrix::mul_dense_into`]).
    ///
    /// # Errors
    /// As [`CsrMatrix::mul_dense_into`].
    pub fn mul_dense(&self, x: &[f64], d: usize) -> Result<Vec<f64>, LearnError> {
        let mut out = vec![0.0; self.rows * d];
        self.mul_dense_into(x, d, &mut out)?;
        Ok(out)
    }

    /// The transpose (`cols x rows`), entries sorted by column within each row.
    #[must_use]
    pub fn transpose(&self) -> Self {
        let mut counts = vec![0usize; self.cols + 1];
        for &j in &self.indices {
            counts[j as usize + 1] += 1;
        }
        for j in 0..self.cols {
            counts[j + 1] += counts[j];
        }
        let offsets = counts.clone();
        let mut next = counts;
        let mut indices = vec![0u32; self.nnz()];
        let mut values = vec![0.0; self.nnz()];
        for i in 0..self.rows {
            let (cols, vals) = self.row(i);
            for (&j, &a) in cols.iter().zip(vals) {
                let p = next[j as usize];
                indices[p] = i as u32;
                values[p] = a;
                next[j as usize] += 1;
            }
        }
        Self {
            rows: self.cols,
            cols: self.rows,
            offsets,
            indices,
            values,
        }
    }

    /// The graph's node attributes as an `n x f` CSR matrix, each row scaled to unit L1 norm
    /// (rows of zeros stay zero): the feature normalisation of Kipf & Welling (2017) and of
    /// every neural method here.
    ///
    /// # Errors
    /// [`LearnError::InvalidData`] for a graph whose attribute table is malformed (cannot
    /// happen for a [`RelationalGraph`] that passed its own checks).
    pub fn row_normalized_features(graph: &RelationalGraph) -> Result<Self, LearnError> {
        let (n, f) = (graph.num_nodes(), graph.num_features());
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        for v in 0..n {
            let start = values.len();
            match graph.attributes_of(NodeId::new(v)) {
                AttributeRow::Dense(xs) => {
                    for (j, &x) in xs.iter().enumerate() {
                        if x != 0.0 {
                            indices.push(j as u32);
                            values.push(x);
                        }
                    }
                }
                AttributeRow::Sparse {
                    indices: js,
                    values: xs,
                } => {
                    for (&j, &x) in js.iter().zip(xs) {
                        if x != 0.0 {
                            indices.push(j);
                            values.push(x);
                        }
                    }
                }
            }
            let norm: f64 = values[start..].iter().map(|x| x.abs()).sum();
            if norm > 0.0 {
                values[start..].iter_mut().for_each(|x| *x /= norm);
            }
            offsets.push(values.len());
        }
        Self::new(n, f, offsets, indices, values)
    }

    /// The symmetric normalised adjacency `D^{-1/2} A D^{-1/2}` of the graph (`n x n`),
    /// with `A` the 0/1 adjacency of [`RelationalGraph::neighbors`] (both directions of a
    /// directed graph; repeated neighbours and self-loops of the graph ignored) plus the
    /// identity when `self_loops` (then `D` counts the loop: `Ã = A + I`, `D̃ = D + I`,
    /// Kipf & Welling 2017, Eq. 2). A node of degree 0 has an empty row without
    /// self-loops.
    ///
    /// Label propagation (Zhou et al. 2004, §2: `S = D^{-1/2} W D^{-1/2}`) and Correct &
    /// Smooth (Huang et al. 2021, §3) use it without self-loops; GCN and APPNP with them.
    #[must_use]
    pub fn normalized_adjacency(graph: &RelationalGraph, self_loops: bool) -> Self {
        let n = graph.num_nodes();
        let mut nbrs: Vec<Vec<u32>> = Vec::with_capacity(n);
        for v in 0..n {
            let mut row: Vec<u32> = graph
                .neighbors(NodeId::new(v))
                .iter()
                .map(|w| w.0)
                .filter(|&w| w as usize != v)
                .collect();
            if self_loops {
                row.push(v as u32);
            }
            row.sort_unstable();
            row.dedup();
            nbrs.push(row);
        }
        let inv_sqrt: Vec<f64> = nbrs
            .iter()
            .map(|r| {
                if r.is_empty() {
                    0.0
                } else {
                    1.0 / (r.len() as f64).sqrt()
                }
            })
            .collect();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        let (mut indices, mut values) = (Vec::new(), Vec::new());
        for (v, row) in nbrs.iter().enumerate() {
            for &w in row {
                indices.push(w);
                values.push(inv_sqrt[v] * inv_sqrt[w as usize]);
            }
            offsets.push(indices.len());
        }
        Self {
            rows: n,
            cols: n,
            offsets,
            indices,
            values,
        }
    }
}

/// `Ok` when `alpha` is in (0, 1) — (0, 1] with `closed_right` — else
/// [`LearnError::InvalidParameter`] naming `name`: the range check of every damping or
/// teleport coefficient of the graph learners.
pub(crate) fn check_unit_interval(
    name: &'static str,
    alpha: f64,
    closed_right: bool,
) -> Result<(), LearnError> {
    let ok = alpha.is_finite() && alpha > 0.0 && (alpha < 1.0 || (closed_right && alpha == 1.0));
    if ok {
        Ok(())
    } else {
        Err(LearnError::InvalidParameter {
            name,
            message: format!(
                "{alpha}: must be in (0, 1{}",
                if closed_right { "]" } else { ")" }
            ),
        })
    }
}

fn check_iteration(name: &'static str, tol: f64, max_iters: usize) -> Result<(), LearnError> {
    if !(tol.is_finite() && tol > 0.0) {
        return Err(LearnError::InvalidParameter {
            name,
            message: format!("tolerance {tol}: must be finite and > 0"),
        });
    }
    if max_iters == 0 {
        return Err(LearnError::InvalidParameter {
            name,
            message: "max_iters 0: must be at least 1".into(),
        });
    }
    Ok(())
}

/// The one-hot `n x k` matrix of the observed labels (rows of unobserved nodes zero).
///
/// # Errors
/// [`LearnError::LabelOutOfRange`] for a label `>= k`.
pub fn one_hot(labels: &[Option<u32>], k: usize) -> Result<Vec<f64>, LearnError> {
    let mut y = vec![0.0; labels.len() * k];
    for (v, l) in labels.iter().enumerate() {
        if let Some(l) = *l {
            if l as usize >= k {
                return Err(LearnError::LabelOutOfRange {
                    index: v,
                    label: l as usize,
                    num_labels: k,
                });
            }
            y[v * k + l as usize] = 1.0;
        }
    }
    Ok(y)
}

/// Scales each row of a non-negative `n x k` matrix to sum 1; an all-zero (or negative
/// sum) row becomes uniform `1 / k`.
pub fn normalize_rows(x: &mut [f64], k: usize) {
    for row in x.chunks_mut(k.max(1)) {
        let s: f64 = row.iter().sum();
        if s > 0.0 && s.is_finite() {
            row.iter_mut().for_each(|p| *p /= s);
        } else {
            row.iter_mut().for_each(|p| *p = 1.0 / k as f64);
        }
    }
}

/// Label propagation in the normalised form of Zhou, Bousquet, Lal, Weston & Schölkopf
/// (2004), "Learning with local and global consistency", NIPS 16, §2 (the iteration
/// `F(t+1) = αSF(t) + (1 − α)Y` with `S = D^{-1/2} W D^{-1/2}`, `F(0) = Y`).
///
/// With [`LabelPropagation::clamp`] (the default) the labelled rows are reset to their
/// one-hot labels after every step (the labelled nodes are clamped), so the fixed point is
/// `F_U = α (I − α S_UU)^{-1} S_UL Y_L` on the unlabelled nodes `U`; without it the
/// iteration is Zhou et al.'s own, whose fixed point is `F* = (1 − α)(I − αS)^{-1} Y`
/// (their Eq. 1-2 and Theorem 1). The iteration stops when the largest change of an entry
/// of `F` is below [`LabelPropagation::tol`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct LabelPropagation {
    /// `α` in `(0, 1)`: the weight of the neighbours against the seed labels (default
    /// 0.99, Zhou et al.'s experiments, §4).
    pub alpha: f64,
    /// Stop when `max |F(t+1) − F(t)| < tol` (default 1e-6; finite, `> 0`).
    pub tol: f64,
    /// Iteration cap (default 10 000; `>= 1`).
    pub max_iters: usize,
    /// Reset the labelled rows to their labels after every step (default true).
    pub clamp: bool,
}

impl Default for LabelPropagation {
    fn default() -> Self {
        Self {
            alpha: 0.99,
            tol: 1e-6,
            max_iters: 10_000,
            clamp: true,
        }
    }
}

impl LabelPropagation {
    /// Checks the ranges of the fields.
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] for `α ∉ (0, 1)`, a non-positive or non-finite
    /// tolerance or `max_iters == 0`.
    pub fn validate(&self) -> Result<(), LearnError> {
        check_unit_interval("lp.alpha", self.alpha, false)?;
        check_iteration("lp", self.tol, self.max_iters)
    }

    /// Runs the iteration on `s` (`n x n`, usually [`CsrMatrix::normalized_adjacency`]
    /// without self-loops) from the observed `labels` (`n`, values `< k`).
    ///
    /// Returns `F` (`n x k`, row-major, not normalised) and how the iteration ended.
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] as [`LabelPropagation::validate`];
    /// [`LearnError::DimensionMismatch`] when `s` is not `n x n`;
    /// [`LearnError::LabelOutOfRange`]; [`LearnError::NoTrainingData`] when no node is
    /// labelled.
    pub fn run(
        &self,
        s: &CsrMatrix,
        labels: &[Option<u32>],
        k: usize,
    ) -> Result<(Vec<f64>, Convergence), LearnError> {
        self.validate()?;
        let n = labels.len();
        check_square(s, n)?;
        if labels.iter().all(Option::is_none) {
            return Err(LearnError::NoTrainingData {
                reason: "label propagation needs at least one labelled node".into(),
            });
        }
        let y = one_hot(labels, k)?;
        let mut f = y.clone();
        let mut next = vec![0.0; n * k];
        let mut conv = Convergence {
            converged: false,
            iterations: 0,
            max_residual: f64::INFINITY,
        };
        for it in 1..=self.max_iters {
            s.mul_dense_into(&f, k, &mut next)?;
            let mut residual: f64 = 0.0;
            for (v, label) in labels.iter().enumerate() {
                let clamped = self.clamp && label.is_some();
                for c in 0..k {
                    let i = v * k + c;
                    let x = if clamped {
                        y[i]
                    } else {
                        self.alpha * next[i] + (1.0 - self.alpha) * y[i]
                    };
                    residual = residual.max((x - f[i]).abs());
                    next[i] = x;
                }
            }
            std::mem::swap(&mut f, &mut next);
            conv.iterations = it;
            conv.max_residual = residual;
            if residual < self.tol {
                conv.converged = true;
                break;
            }
        }
        Ok((f, conv))
    }
}

fn check_square(s: &CsrMatrix, n: usize) -> Result<(), LearnError> {
    if s.rows() != n || s.cols() != n {
        return Err(LearnError::DimensionMismatch {
            what: "propagation matrix (rows and columns = nodes)",
            expected: n,
            found: if s.rows() == n { s.cols() } else { s.rows() },
        });
    }
    Ok(())
}

/// `X ← (1 − α) X₀ + α S X` from `X = X₀` until the largest change is below `tol` (at most
/// `max_iters` steps), each step's entries clipped to `[lo, hi]`: the propagation of
/// Correct & Smooth (Huang et al. 2021, Eq. 2 and 4, with the clipping of their reference
/// implementation).
fn restart_propagation(
    s: &CsrMatrix,
    x0: &[f64],
    d: usize,
    alpha: f64,
    (lo, hi): (f64, f64),
    tol: f64,
    max_iters: usize,
) -> Result<(Vec<f64>, Convergence), LearnError> {
    let mut x = x0.to_vec();
    let mut next = vec![0.0; x.len()];
    let mut conv = Convergence {
        converged: false,
        iterations: 0,
        max_residual: f64::INFINITY,
    };
    for it in 1..=max_iters {
        s.mul_dense_into(&x, d, &mut next)?;
        let mut residual: f64 = 0.0;
        for (i, nx) in next.iter_mut().enumerate() {
            let v = ((1.0 - alpha) * x0[i] + alpha * *nx).clamp(lo, hi);
            residual = residual.max((v - x[i]).abs());
            *nx = v;
        }
        std::mem::swap(&mut x, &mut next);
        conv.iterations = it;
        conv.max_residual = residual;
        if residual < tol {
            conv.converged = true;
            break;
        }
    }
    Ok((x, conv))
}

/// Correct & Smooth: Huang, He, Singh, Lim & Benson (2021), "Combining label propagation
/// and simple models out-performs graph neural networks", ICLR, §3.
///
/// From a base predictor's class probabilities `Z` (`n x k`):
/// 1. **Correct** (§3.2): the residuals `E₀ = Y − Z` on the training rows (zero
///    elsewhere) are propagated, `E ← (1 − α₁) E₀ + α₁ S E` (entries clipped to
///    `[−1, 1]`), and added back with the "autoscale" of Eq. 3: `Z' = Z + σ Ê_i / ‖Ê_i‖₁`
///    with `σ = Σ_{j ∈ train} ‖E₀_j‖₁ / |train|` (a scale that is infinite or above 1000
///    becomes 1, as in the reference implementation).
/// 2. **Smooth** (§3.3): the training rows of `Z'` are replaced by their one-hot labels
///    and `G ← (1 − α₂) G₀ + α₂ S G` (entries clipped to `[0, 1]`) is iterated.
///
/// Both iterations run until the largest change is below [`CorrectAndSmooth::tol`];
/// `S` is the normalised adjacency without self-loops. The result's rows are normalised
/// to sum 1.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CorrectAndSmooth {
    /// `α₁` of the correct step in `(0, 1]` (default 0.8).
    pub correct_alpha: f64,
    /// `α₂` of the smooth step in `(0, 1)` (default 0.8).
    pub smooth_alpha: f64,
    /// Stop each iteration when the largest change is below `tol` (default 1e-6).
    pub tol: f64,
    /// Cap of each iteration (default 1000; `>= 1`). With `α₁ = 1` the correct step does
    /// not converge in general and runs to the cap (the paper's fixed number of layers).
    pub max_iters: usize,
}

impl Default for CorrectAndSmooth {
    fn default() -> Self {
        Self {
            correct_alpha: 0.8,
            smooth_alpha: 0.8,
            tol: 1e-6,
            max_iters: 1000,
        }
    }
}

impl CorrectAndSmooth {
    /// Checks the ranges of the fields.
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] for `α₁ ∉ (0, 1]`, `α₂ ∉ (0, 1)`, a non-positive
    /// tolerance or `max_iters == 0`.
    pub fn validate(&self) -> Result<(), LearnError> {
        check_unit_interval("cs.correct_alpha", self.correct_alpha, true)?;
        check_unit_interval("cs.smooth_alpha", self.smooth_alpha, false)?;
        check_iteration("cs", self.tol, self.max_iters)
    }

    /// Corrects and smooths the base probabilities `base` (`n x k`, rows of a probability
    /// distribution) with the training labels `labels` (`n`; `Some` = a training node) on
    /// `s` (`n x n`).
    ///
    /// Returns the final `n x k` probabilities and the convergence of both steps together
    /// (`iterations`: the correct and the smooth step's iterations added up; `converged`
    /// when both converged).
    ///
    /// # Errors
    /// As [`CorrectAndSmooth::validate`]; [`LearnError::DimensionMismatch`] for a `base`
    /// or `s` of the wrong size; [`LearnError::InvalidValue`] for a non-finite base
    /// probability; [`LearnError::LabelOutOfRange`]; [`LearnError::NoTrainingData`]
    /// without a training node.
    pub fn run(
        &self,
        s: &CsrMatrix,
        base: &[f64],
        labels: &[Option<u32>],
        k: usize,
    ) -> Result<(Vec<f64>, Convergence), LearnError> {
        self.validate()?;
        let n = labels.len();
        check_square(s, n)?;
        if base.len() != n * k {
            return Err(LearnError::DimensionMismatch {
                what: "base predictions (nodes x labels)",
                expected: n * k,
                found: base.len(),
            });
        }
        if let Some(i) = base.iter().position(|x| !x.is_finite()) {
            return Err(LearnError::InvalidValue {
                what: "base probability",
                index: i,
                value: base[i],
            });
        }
        let y = one_hot(labels, k)?;
        let train: Vec<usize> = (0..n).filter(|&v| labels[v].is_some()).collect();
        if train.is_empty() {
            return Err(LearnError::NoTrainingData {
                reason: "Correct & Smooth needs at least one training node".into(),
            });
        }
        // Correct.
        let mut e0 = vec![0.0; n * k];
        for &v in &train {
            for c in 0..k {
                e0[v * k + c] = y[v * k + c] - base[v * k + c];
            }
        }
        let sigma = train
            .iter()
            .map(|&v| e0[v * k..(v + 1) * k].iter().map(|x| x.abs()).sum::<f64>())
            .sum::<f64>()
            / train.len() as f64;
        let (e, c1) = restart_propagation(
            s,
            &e0,
            k,
            self.correct_alpha,
            (-1.0, 1.0),
            self.tol,
            self.max_iters,
        )?;
        let mut g0 = base.to_vec();
        for v in 0..n {
            let row = &e[v * k..(v + 1) * k];
            let l1: f64 = row.iter().map(|x| x.abs()).sum();
            let mut scale = sigma / l1;
            if !scale.is_finite() || scale > 1000.0 {
                scale = 1.0;
            }
            for c in 0..k {
                g0[v * k + c] += scale * row[c];
            }
        }
        // Smooth.
        for &v in &train {
            g0[v * k..(v + 1) * k].copy_from_slice(&y[v * k..(v + 1) * k]);
        }
        let (mut g, c2) = restart_propagation(
            s,
            &g0,
            k,
            self.smooth_alpha,
            (0.0, 1.0),
            self.tol,
            self.max_iters,
        )?;
        normalize_rows(&mut g, k);
        Ok((
            g,
            Convergence {
                converged: c1.converged && c2.converged,
                iterations: c1.iterations + c2.iterations,
                max_residual: c1.max_residual.max(c2.max_residual),
            },
        ))
    }
}

/// The personalised-PageRank propagation of APPNP (Klicpera, Bojchevski & Günnemann
/// 2019, "Predict then propagate", ICLR, Eq. 3): `Z⁰ = H`, `Z^{t+1} = (1 − α) Â Z^t + α
/// H` for `t < K`, returned as `Z^K` (`n x d`). `Â` is the normalised adjacency with
/// self-loops.
///
/// # Errors
/// [`LearnError::DimensionMismatch`] for an `h` that is not `n x d` with `n` the size of
/// `a_hat`; [`LearnError::InvalidParameter`] for `α ∉ (0, 1]`.
pub fn appnp_propagate(
    a_hat: &CsrMatrix,
    h: &[f64],
    d: usize,
    steps: usize,
    alpha: f64,
) -> Result<Vec<f64>, LearnError> {
    check_unit_interval("appnp.alpha", alpha, true)?;
    let mut z = h.to_vec();
    let mut next = vec![0.0; z.len()];
    for _ in 0..steps {
        a_hat.mul_dense_into(&z, d, &mut next)?;
        for (i, x) in next.iter_mut().enumerate() {
            *x = (1.0 - alpha) * *x + alpha * h[i];
        }
        std::mem::swap(&mut z, &mut next);
    }
    Ok(z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use srl_graph::{Attributes, Directedness, LabelSet};

    /// The 5-node graph of the hand-computed references: edges 0-1, 1-2, 2-3, 3-4, 1-3
    /// (a triangle 1-2-3 with tails 0 and 4), labels 0: class 0, 4: class 1.
    fn five() -> RelationalGraph {
        let e = |a: usize, b: usize| (NodeId::new(a), NodeId::new(b));
        RelationalGraph::new(
            Vec::new(),
            Attributes::Dense {
                num_features: 2,
                values: vec![1.0, 0.0, 1.0, 1.0, 0.0, 2.0, 0.0, 1.0, 3.0, 1.0],
            },
            vec![Some(0), None, None, None, Some(1)],
            LabelSet::numbered(2),
            vec![e(0, 1), e(1, 2), e(2, 3), e(3, 4), e(1, 3)],
            Directedness::Undirected,
        )
        .expect("graph")
    }

    /// Reference numbers from numpy 2 (Python 3.11):
    /// ```text
    /// import numpy as np
    /// A = np.zeros((5, 5)); E = [(0,1),(1,2),(2,3),(3,4),(1,3)]
    /// for a, b in E: A[a, b] = A[b, a] = 1
    /// d = A.sum(1); S = A / np.sqrt(np.outer(d, d))
    /// Y = np.zeros((5, 2)); Y[0, 0] = 1; Y[4, 1] = 1; a = 0.9
    /// F = (1 - a) * np.linalg.solve(np.eye(5) - a * S, Y)           # unclamped
    /// U, L = [1, 2, 3], [0, 4]
    /// FU = a * np.linalg.solve(np.eye(3) - a * S[np.ix_(U, U)], S[np.ix_(U, L)] @ Y[L])
    /// ```
    #[test]
    fn label_propagation_matches_the_closed_forms() {
        let g = five();
        let s = CsrMatrix::normalized_adjacency(&g, false);
        let lp = LabelPropagation {
            alpha: 0.9,
            tol: 1e-13,
            max_iters: 100_000,
            clamp: false,
        };
        let (f, conv) = lp.run(&s, g.labels(), 2).expect("runs");
        assert!(conv.converged);
        // Closed form F = (1 - α)(I - αS)^{-1} Y, computed here by dense Gauss-Jordan.
        let closed = closed_form_unclamped(&s, g.labels(), 2, 0.9);
        for (a, b) in f.iter().zip(&closed) {
            assert!((a - b).abs() < 1e-10, "{a} vs {b}");
        }
        let numpy_unclamped = [
            [0.1974817961165049, 0.0712682038834952],
            [0.18760380409650773, 0.13715572232265694],
            [0.11932426932522999, 0.11932426932522999],
            [0.13715572232265696, 0.18760380409650776],
            [0.07126820388349521, 0.1974817961165049],
        ];
        for v in 0..5 {
            for c in 0..2 {
                assert!(
                    (f[v * 2 + c] - numpy_unclamped[v][c]).abs() < 1e-9,
                    "{v} {c}"
                );
            }
        }
        let clamped = LabelPropagation { clamp: true, ..lp };
        let (f, conv) = clamped.run(&s, g.labels(), 2).expect("runs");
        assert!(conv.converged);
        let numpy_clamped_u = [
            [0.8040557863401142, 0.40435175382421923],
            [0.443997281210158, 0.4439972812101579],
            [0.4043517538242193, 0.804055786340114],
        ];
        for (i, v) in [1, 2, 3].into_iter().enumerate() {
            for c in 0..2 {
                assert!(
                    (f[v * 2 + c] - numpy_clamped_u[i][c]).abs() < 1e-9,
                    "{v} {c}"
                );
            }
        }
        assert_eq!(&f[0..2], &[1.0, 0.0]);
        assert_eq!(&f[8..10], &[0.0, 1.0]);
    }

    fn closed_form_unclamped(s: &CsrMatrix, labels: &[Option<u32>], k: usize, a: f64) -> Vec<f64> {
        let n = labels.len();
        // M = I - a S, augmented with (1 - a) Y; Gauss-Jordan with partial pivoting.
        let y = one_hot(labels, k).expect("labels");
        let w = n + k;
        let mut m = vec![0.0; n * w];
        for i in 0..n {
            m[i * w + i] = 1.0;
            let (cols, vals) = s.row(i);
            for (&j, &x) in cols.iter().zip(vals) {
                m[i * w + j as usize] -= a * x;
            }
            for c in 0..k {
                m[i * w + n + c] = (1.0 - a) * y[i * k + c];
            }
        }
        for col in 0..n {
            let p = (col..n)
                .max_by(|&x, &y| m[x * w + col].abs().total_cmp(&m[y * w + col].abs()))
                .expect("rows");
            for j in 0..w {
                m.swap(col * w + j, p * w + j);
            }
            let d = m[col * w + col];
            for j in 0..w {
                m[col * w + j] /= d;
            }
            for r in 0..n {
                if r != col {
                    let f = m[r * w + col];
                    for j in 0..w {
                        m[r * w + j] -= f * m[col * w + j];
                    }
                }
            }
        }
        (0..n)
            .flat_map(|i| (0..k).map(move |c| (i, c)))
            .map(|(i, c)| m[i * w + n + c])
            .collect()
    }

    #[test]
    fn normalized_adjacency_and_features_by_hand() {
        let g = five();
        // degrees 1 3 2 3 1
        let s = CsrMatrix::normalized_adjacency(&g, false);
        assert_eq!(s.row(0).0, &[1]);
        assert!((s.row(0).1[0] - 1.0 / 3f64.sqrt()).abs() < 1e-15);
        assert!((s.row(1).1[1] - 1.0 / 6f64.sqrt()).abs() < 1e-15); // 1-2
        // with self-loops: degrees 2 4 3 4 2
        let a = CsrMatrix::normalized_adjacency(&g, true);
        assert_eq!(a.row(0).0, &[0, 1]);
        assert!((a.row(0).1[0] - 0.5).abs() < 1e-15);
        assert!((a.row(0).1[1] - 1.0 / 8f64.sqrt()).abs() < 1e-15);
        assert_eq!(a.transpose(), a);
        let x = CsrMatrix::row_normalized_features(&g).expect("features");
        assert_eq!(x.row(1), (&[0u32, 1][..], &[0.5, 0.5][..]));
        assert_eq!(x.row(4), (&[0u32, 1][..], &[0.75, 0.25][..]));
        // transpose of a rectangular matrix
        let t = x.transpose();
        assert_eq!((t.rows(), t.cols()), (2, 5));
        assert_eq!(t.transpose(), x);
        let dense = x.mul_dense(&[1.0, 2.0], 1).expect("product");
        assert_eq!(dense, vec![1.0, 1.5, 2.0, 2.0, 1.25]);
        assert!(x.mul_dense(&[1.0], 1).is_err());
    }

    /// APPNP's propagation against `Z_K` of numpy (Python 3.11, numpy 2):
    /// ```text
    /// At = A + np.eye(5); dt = At.sum(1); Ah = At / np.sqrt(np.outer(dt, dt))
    /// H = np.array([[1., 0], [0, 1], [2, -1], [0, 0], [1, 1]]); Z = H.copy()
    /// for _ in range(10): Z = 0.9 * Ah @ Z + 0.1 * H
    /// ```
    #[test]
    fn appnp_propagation_matches_numpy() {
        let g = five();
        let a = CsrMatrix::normalized_adjacency(&g, true);
        let h = [1.0, 0.0, 0.0, 1.0, 2.0, -1.0, 0.0, 0.0, 1.0, 1.0];
        let z = appnp_propagate(&a, &h, 2, 10, 0.1).expect("runs");
        let numpy = [
            [0.6233939879304675, 0.15367709254238496],
            [0.763268849472993, 0.2668724066340846],
            [0.852301139594045, 0.03645190491189312],
            [0.763268849472993, 0.2163406932713293],
            [0.6233939879304675, 0.30778079544324455],
        ];
        for v in 0..5 {
            for c in 0..2 {
                assert!((z[v * 2 + c] - numpy[v][c]).abs() < 1e-12, "{v} {c}");
            }
        }
        assert!(appnp_propagate(&a, &h, 2, 10, 0.0).is_err());
        assert!(appnp_propagate(&a, &h[..9], 2, 10, 0.1).is_err());
    }

    /// Correct & Smooth against numpy (Python 3.11, numpy 2), the same graph and labels:
    /// ```text
    /// Z = np.array([[.6, .4], [.7, .3], [.5, .5], [.2, .8], [.3, .7]])
    /// tr = [0, 4]; E0 = np.zeros((5, 2)); E0[tr] = Y[tr] - Z[tr]
    /// sig = np.abs(E0[tr]).sum(1).mean(); E = E0.copy()
    /// for _ in range(5000): E = np.clip(0.2 * E0 + 0.8 * S @ E, -1, 1)
    /// sc = sig / np.abs(E).sum(1, keepdims=True); sc[np.isinf(sc) | (sc > 1000)] = 1
    /// G0 = Z + sc * E; G0[tr] = Y[tr]; G = G0.copy()
    /// for _ in range(5000): G = np.clip(0.3 * G0 + 0.7 * S @ G, 0, 1)
    /// G / G.sum(1, keepdims=True)
    /// ```
    #[test]
    fn correct_and_smooth_matches_numpy() {
        let g = five();
        let s = CsrMatrix::normalized_adjacency(&g, false);
        let z = [0.6, 0.4, 0.7, 0.3, 0.5, 0.5, 0.2, 0.8, 0.3, 0.7];
        let cs = CorrectAndSmooth {
            correct_alpha: 0.8,
            smooth_alpha: 0.7,
            tol: 1e-14,
            max_iters: 5000,
        };
        let (p, conv) = cs.run(&s, &z, g.labels(), 2).expect("runs");
        assert!(conv.converged);
        let numpy = [
            [0.8326105640098176, 0.1673894359901825],
            [0.7247711738651333, 0.2752288261348667],
            [0.6298764438089348, 0.3701235561910652],
            [0.33442791367411845, 0.6655720863258815],
            [0.2033933023492719, 0.796606697650728],
        ];
        for v in 0..5 {
            for c in 0..2 {
                assert!(
                    (p[v * 2 + c] - numpy[v][c]).abs() < 1e-9,
                    "{v} {c}: {}",
                    p[v * 2 + c]
                );
            }
        }
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        let g = five();
        let s = CsrMatrix::normalized_adjacency(&g, false);
        for bad in [
            LabelPropagation {
                alpha: 1.0,
                ..LabelPropagation::default()
            },
            LabelPropagation {
                alpha: f64::NAN,
                ..LabelPropagation::default()
            },
            LabelPropagation {
                tol: 0.0,
                ..LabelPropagation::default()
            },
            LabelPropagation {
                max_iters: 0,
                ..LabelPropagation::default()
            },
        ] {
            assert!(bad.run(&s, g.labels(), 2).is_err());
        }
        let lp = LabelPropagation::default();
        assert!(lp.run(&s, &[None; 5], 2).is_err());
        assert!(lp.run(&s, &[Some(3), None, None, None, None], 2).is_err());
        assert!(lp.run(&s, &[Some(0), None], 2).is_err());
        let cs = CorrectAndSmooth::default();
        assert!(cs.run(&s, &[0.5; 9], g.labels(), 2).is_err());
        assert!(cs.run(&s, &[f64::NAN; 10], g.labels(), 2).is_err());
        assert!(
            CorrectAndSmooth {
                smooth_alpha: 1.0,
                ..cs
            }
            .validate()
            .is_err()
        );
        assert!(CsrMatrix::new(2, 2, vec![0, 1], vec![0], vec![1.0]).is_err());
        assert!(CsrMatrix::new(1, 2, vec![0, 2], vec![1, 0], vec![1.0, 1.0]).is_err());
        assert!(CsrMatrix::new(1, 2, vec![0, 1], vec![2], vec![1.0]).is_err());
        assert!(CsrMatrix::new(1, 2, vec![0, 1], vec![1], vec![f64::NAN]).is_err());
        assert!(CsrMatrix::new(1, 2, vec![0, 1], vec![1], vec![2.0]).is_ok());
    }
}
