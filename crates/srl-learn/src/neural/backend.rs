//! The candle implementation of [`super::train`].

use std::sync::Arc;

use candle_core::backprop::GradStore;
use candle_core::{
    CpuStorage, CustomOp1, CustomOp2, DType, Device, Layout, Shape, Tensor, Var, WithDType,
};
use rand::{Rng as _, RngExt as _};
use rand_chacha::ChaCha8Rng;

use super::{Architecture, NeuralData, NeuralFit, NeuralParams, Precision};
use crate::error::LearnError;
use crate::propagation::CsrMatrix;

fn candle_err(e: candle_core::Error) -> LearnError {
    LearnError::Optimization {
        reason: format!("candle: {e}"),
    }
}

/// A constant linear map of a dense `rows x d` matrix: `M · X` for a sparse `M`, or
/// APPNP's `steps` personalised-PageRank steps `Z ← (1 − α) M Z + α X` from `Z = X`
/// (linear in `X`: `P = (1 − α)^K M^K + α Σ_{t<K} ((1 − α) M)^t`). The backward pass
/// applies the transpose: the same map with `Mᵀ`.
struct SparseMap {
    m: Arc<CsrMatrix>,
    mt: Arc<CsrMatrix>,
    /// `None`: the product `M · X`; `Some((K, α))`: the propagation.
    ppr: Option<(usize, f64)>,
}

/// Row `i` of `M · X` into `o` (`D` values, overwritten): `o = Σ_j m_ij x_j` over the
/// stored entries of row `i` in order, then, for the propagation, `o ← keep · o +
/// restart · r` with `r` row `i` of the restart matrix. The width `D` is a constant so
/// that the loops over a row unroll and vectorise; the arithmetic, operation by
/// operation, is that of [`csr_row_dyn`].
#[inline(always)]
fn csr_row<T: WithDType, const D: usize>(
    cols: &[u32],
    vals: &[f64],
    x: &[T],
    o: &mut [T],
    restart: Option<(T, T, &[T])>,
) {
    let mut acc = [T::from_f64(0.0); D];
    for (&j, &a) in cols.iter().zip(vals) {
        let a = T::from_f64(a);
        let j = j as usize * D;
        let xr = &x[j..j + D];
        for c in 0..D {
            acc[c] += a * xr[c];
        }
    }
    if let Some((keep, restart, r)) = restart {
        for c in 0..D {
            acc[c] = keep * acc[c] + restart * r[c];
        }
    }
    o.copy_from_slice(&acc);
}

/// [`csr_row`] for any width `d`.
fn csr_row_dyn<T: WithDType>(
    cols: &[u32],
    vals: &[f64],
    x: &[T],
    d: usize,
    o: &mut [T],
    restart: Option<(T, T, &[T])>,
) {
    o.fill(T::from_f64(0.0));
    for (&j, &a) in cols.iter().zip(vals) {
        let a = T::from_f64(a);
        let xr = &x[j as usize * d..(j as usize + 1) * d];
        for (oc, &xc) in o.iter_mut().zip(xr) {
            *oc += a * xc;
        }
    }
    if let Some((keep, restart, r)) = restart {
        for (oc, &rc) in o.iter_mut().zip(r) {
            *oc = keep * *oc + restart * rc;
        }
    }
}

/// `out = m · x` (with `values` in place of `m`'s stored values, parallel to them) for a
/// dense row-major `m.cols() x d` matrix `x` of any float type, sequential as
/// [`CsrMatrix::mul_dense`]; with `restart = Some((keep, restart, r))` each row is then
/// `keep · out + restart · r` (one propagation step). `out` is `m.rows() x d`.
fn csr_mul_into<T: WithDType>(
    m: &CsrMatrix,
    values: &[f64],
    x: &[T],
    d: usize,
    out: &mut [T],
    restart: Option<(T, T, &[T])>,
) {
    macro_rules! rows {
        ($($w:literal)*) => {
            match d {
                $($w => for i in 0..m.rows() {
                    let (a, b) = m.row_range(i);
                    csr_row::<T, $w>(
                        &m.indices()[a..b],
                        &values[a..b],
                        x,
                        &mut out[i * $w..(i + 1) * $w],
                        restart.map(|(k, s, r)| (k, s, &r[i * $w..(i + 1) * $w])),
                    );
                },)*
                _ => for i in 0..m.rows() {
                    let (a, b) = m.row_range(i);
                    csr_row_dyn(
                        &m.indices()[a..b],
                        &values[a..b],
                        x,
                        d,
                        &mut out[i * d..(i + 1) * d],
                        restart.map(|(k, s, r)| (k, s, &r[i * d..(i + 1) * d])),
                    );
                },
            }
        };
    }
    rows!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 32 64);
}

/// `m · x` as a new matrix (see [`csr_mul_into`]).
fn csr_mul<T: WithDType>(m: &CsrMatrix, values: &[f64], x: &[T], d: usize) -> Vec<T> {
    let mut out = vec![T::from_f64(0.0); m.rows() * d];
    csr_mul_into(m, values, x, d, &mut out, None);
    out
}

/// `mᵀ · g` for a dense row-major `m.rows() x d` matrix `g` without forming `mᵀ`: row `i`
/// of `g` scaled by `m_ij` is added to row `j` of the result, the rows `i` in increasing
/// order. Row `j` of the result is thus the same sum in the same order as row `j` of
/// [`CsrMatrix::transpose`] times `g` (whose entries are sorted by `i`): the same bits.
fn csr_mul_transposed<T: WithDType>(m: &CsrMatrix, values: &[f64], g: &[T], d: usize) -> Vec<T> {
    let mut out = vec![T::from_f64(0.0); m.cols() * d];
    for i in 0..m.rows() {
        let (a, b) = m.row_range(i);
        let gr = &g[i * d..(i + 1) * d];
        for (&j, &v) in m.indices()[a..b].iter().zip(&values[a..b]) {
            let v = T::from_f64(v);
            let o = &mut out[j as usize * d..(j as usize + 1) * d];
            for (oc, &gc) in o.iter_mut().zip(gr) {
                *oc += v * gc;
            }
        }
    }
    out
}

impl SparseMap {
    fn apply<T: WithDType>(&self, x: &[T], d: usize) -> candle_core::Result<Vec<T>> {
        if x.len() != self.m.cols() * d {
            candle_core::bail!(
                "sparse product: {} values for {} x {d}",
                x.len(),
                self.m.cols()
            );
        }
        let vals = self.m.values();
        Ok(match self.ppr {
            None => csr_mul(&self.m, vals, x, d),
            Some((steps, alpha)) => {
                // As crate::propagation::appnp_propagate, in T; two buffers in turn.
                let (keep, restart) = (T::from_f64(1.0 - alpha), T::from_f64(alpha));
                let mut z = x.to_vec();
                let mut next = vec![T::from_f64(0.0); z.len()];
                for _ in 0..steps {
                    csr_mul_into(&self.m, vals, &z, d, &mut next, Some((keep, restart, x)));
                    std::mem::swap(&mut z, &mut next);
                }
                z
            }
        })
    }
}

impl CustomOp1 for SparseMap {
    fn name(&self) -> &'static str {
        "srl-sparse-map"
    }

    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (rows, d) = layout.shape().dims2()?;
        if rows != self.m.cols() {
            candle_core::bail!(
                "sparse product: {} columns against {rows} rows",
                self.m.cols()
            );
        }
        let Some((a, b)) = layout.contiguous_offsets() else {
            candle_core::bail!("sparse product: contiguous input only");
        };
        let out = match storage {
            CpuStorage::F64(data) => CpuStorage::F64(self.apply(&data[a..b], d)?),
            CpuStorage::F32(data) => CpuStorage::F32(self.apply(&data[a..b], d)?),
            _ => candle_core::bail!("sparse product: f32 or f64 only"),
        };
        Ok((out, Shape::from((self.m.rows(), d))))
    }

    fn bwd(
        &self,
        _arg: &Tensor,
        _res: &Tensor,
        grad_res: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let g = grad_res.contiguous()?;
        Ok(Some(g.apply_op1(SparseMap {
            m: Arc::clone(&self.mt),
            mt: Arc::clone(&self.m),
            ppr: self.ppr,
        })?))
    }
}

fn spmm(m: &Arc<CsrMatrix>, mt: &Arc<CsrMatrix>, x: &Tensor) -> candle_core::Result<Tensor> {
    x.contiguous()?.apply_op1(SparseMap {
        m: Arc::clone(m),
        mt: Arc::clone(mt),
        ppr: None,
    })
}

/// The sparse features times a dense matrix, `X · W` (`X` with the values `values`,
/// e.g. after dropout), or, `transposed`, `Xᵀ · G` by [`csr_mul_transposed`]: the first
/// layer's product and its gradient with respect to `W` without a transposed copy of
/// `X` (none per epoch for the dropped-out `X`). `X` itself needs no gradient.
struct FeatureProduct {
    x: Arc<CsrMatrix>,
    values: Arc<Vec<f64>>,
    transposed: bool,
}

impl CustomOp1 for FeatureProduct {
    fn name(&self) -> &'static str {
        "srl-feature-product"
    }

    fn cpu_fwd(
        &self,
        storage: &CpuStorage,
        layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (rows, d) = layout.shape().dims2()?;
        let (inner, outer) = if self.transposed {
            (self.x.rows(), self.x.cols())
        } else {
            (self.x.cols(), self.x.rows())
        };
        if rows != inner {
            candle_core::bail!("feature product: {inner} rows expected, {rows} given");
        }
        let Some((a, b)) = layout.contiguous_offsets() else {
            candle_core::bail!("feature product: contiguous input only");
        };
        let (x, vals) = (&*self.x, &self.values[..]);
        let out = match (storage, self.transposed) {
            (CpuStorage::F64(s), false) => CpuStorage::F64(csr_mul(x, vals, &s[a..b], d)),
            (CpuStorage::F32(s), false) => CpuStorage::F32(csr_mul(x, vals, &s[a..b], d)),
            (CpuStorage::F64(s), true) => CpuStorage::F64(csr_mul_transposed(x, vals, &s[a..b], d)),
            (CpuStorage::F32(s), true) => CpuStorage::F32(csr_mul_transposed(x, vals, &s[a..b], d)),
            _ => candle_core::bail!("feature product: f32 or f64 only"),
        };
        Ok((out, Shape::from((outer, d))))
    }

    fn bwd(
        &self,
        _arg: &Tensor,
        _res: &Tensor,
        grad_res: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let g = grad_res.contiguous()?;
        Ok(Some(g.apply_op1(FeatureProduct {
            x: Arc::clone(&self.x),
            values: Arc::clone(&self.values),
            transposed: !self.transposed,
        })?))
    }
}

/// The hidden layer's dropout multipliers in the network's float type.
#[derive(Clone, Debug)]
enum Mask {
    F32(Arc<Vec<f32>>),
    F64(Arc<Vec<f64>>),
}

/// The float types of the networks, with candle's ReLU (`max(v, 0)`).
trait Float: WithDType {
    fn relu(self) -> Self;
    /// The dropout multipliers of this type, if `mask` holds them.
    fn mask(mask: &Mask) -> Option<&[Self]>;
}

impl Float for f32 {
    fn relu(self) -> Self {
        self.max(0f32)
    }
    fn mask(mask: &Mask) -> Option<&[Self]> {
        match mask {
            Mask::F32(m) => Some(m),
            Mask::F64(_) => None,
        }
    }
}

impl Float for f64 {
    fn relu(self) -> Self {
        self.max(0f64)
    }
    fn mask(mask: &Mask) -> Option<&[Self]> {
        match mask {
            Mask::F64(m) => Some(m),
            Mask::F32(_) => None,
        }
    }
}

/// The hidden layer after its linear map `P` (`n x h`): `H = ReLU(P + b₁) ⊙ M` with the
/// dropout multipliers `M` (none: `H = ReLU(P + b₁)`), in one pass instead of candle's
/// broadcast, add, ReLU and multiplication, and its backward pass in one pass instead of
/// about a dozen `n x h` tensors (candle also differentiates with respect to the constant
/// mask). The arithmetic is candle's, operation for operation: forward `(p + b).max(0) ·
/// m`; backward, for the output gradient `G`, `R = 0 + G · m` (without mask `R = G`),
/// `S = 0 + R · [p + b ≥ 0]`, the gradient of `P` is `S` and that of `b₁` the column sums
/// of `S` from 0 in row order (candle's `sum_keepdim(0)` of a contiguous matrix); candle
/// then adds both to zero gradients, as it does for its own operations.
struct HiddenLayer {
    mask: Option<Mask>,
}

impl HiddenLayer {
    fn forward<T: Float>(&self, p: &[T], b: &[T]) -> candle_core::Result<Vec<T>> {
        let h = b.len();
        let mut out = vec![T::from_f64(0.0); p.len()];
        for (orow, prow) in out.chunks_exact_mut(h).zip(p.chunks_exact(h)) {
            for ((o, &pv), &bv) in orow.iter_mut().zip(prow).zip(b) {
                *o = (pv + bv).relu();
            }
        }
        if let Some(mask) = &self.mask {
            let Some(m) = T::mask(mask) else {
                candle_core::bail!("hidden layer: mask of another float type");
            };
            for (o, &mv) in out.iter_mut().zip(m) {
                *o *= mv;
            }
        }
        Ok(out)
    }

    /// `(gradient of P, gradient of b₁)`.
    fn backward<T: Float>(
        &self,
        p: &[T],
        b: &[T],
        g: &[T],
    ) -> candle_core::Result<(Vec<T>, Vec<T>)> {
        let (h, zero, one) = (b.len(), T::from_f64(0.0), T::from_f64(1.0));
        // R = 0 + G · m (candle's gradient of the product's left factor), or G.
        let mut gp: Vec<T> = match &self.mask {
            Some(mask) => {
                let Some(m) = T::mask(mask) else {
                    candle_core::bail!("hidden layer: mask of another float type");
                };
                g.iter().zip(m).map(|(&gv, &mv)| zero + gv * mv).collect()
            }
            None => g.to_vec(),
        };
        // S = 0 + R · [p + b ≥ 0]; the bias gradient sums S's rows in order.
        let mut gb = vec![zero; h];
        for (srow, prow) in gp.chunks_exact_mut(h).zip(p.chunks_exact(h)) {
            for (((sv, &pv), &bv), acc) in srow.iter_mut().zip(prow).zip(b).zip(gb.iter_mut()) {
                let on = if pv + bv >= zero { one } else { zero };
                *sv = zero + *sv * on;
                *acc += *sv;
            }
        }
        Ok((gp, gb))
    }
}

impl CustomOp2 for HiddenLayer {
    fn name(&self) -> &'static str {
        "srl-hidden-layer"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let (n, h) = l1.shape().dims2()?;
        if l2.shape().dims1()? != h {
            candle_core::bail!("hidden layer: bias of another width");
        }
        if let Some(m) = &self.mask {
            let len = match m {
                Mask::F32(v) => v.len(),
                Mask::F64(v) => v.len(),
            };
            if len != n * h {
                candle_core::bail!("hidden layer: mask of another size");
            }
        }
        let (Some((a1, b1)), Some((a2, b2))) = (l1.contiguous_offsets(), l2.contiguous_offsets())
        else {
            candle_core::bail!("hidden layer: contiguous input only");
        };
        let out = match (s1, s2) {
            (CpuStorage::F32(p), CpuStorage::F32(b)) => {
                CpuStorage::F32(self.forward(&p[a1..b1], &b[a2..b2])?)
            }
            (CpuStorage::F64(p), CpuStorage::F64(b)) => {
                CpuStorage::F64(self.forward(&p[a1..b1], &b[a2..b2])?)
            }
            _ => candle_core::bail!("hidden layer: f32 or f64 only, one type"),
        };
        Ok((out, Shape::from((n, h))))
    }

    fn bwd(
        &self,
        arg1: &Tensor,
        arg2: &Tensor,
        _res: &Tensor,
        grad_res: &Tensor,
    ) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let (dev, shape) = (arg1.device(), arg1.shape());
        let (gp, gb) = match arg1.dtype() {
            DType::F32 => {
                let (gp, gb) = self.backward::<f32>(
                    &arg1.flatten_all()?.to_vec1()?,
                    &arg2.to_vec1()?,
                    &grad_res.flatten_all()?.to_vec1()?,
                )?;
                (Tensor::from_vec(gp, shape, dev)?, Tensor::new(gb, dev)?)
            }
            _ => {
                let (gp, gb) = self.backward::<f64>(
                    &arg1.flatten_all()?.to_vec1()?,
                    &arg2.to_vec1()?,
                    &grad_res.flatten_all()?.to_vec1()?,
                )?;
                (Tensor::from_vec(gp, shape, dev)?, Tensor::new(gb, dev)?)
            }
        };
        Ok((Some(gp), Some(gb)))
    }
}

/// Glorot & Bengio (2010) uniform initialisation `U(−r, r)`, `r = √(6 / (fan_in +
/// fan_out))`, of a `fan_in x fan_out` matrix, row-major, from `rng`.
fn glorot(fan_in: usize, fan_out: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let r = (6.0 / (fan_in + fan_out) as f64).sqrt();
    (0..fan_in * fan_out)
        .map(|_| (2.0 * rng.random::<f64>() - 1.0) * r)
        .collect()
}

/// The inverted-dropout multipliers of `len` units: 0 when a uniform 32-bit draw falls
/// below `p · 2³²` (probability `p` up to 2⁻³²), else `1 / (1 − p)`. The draws are the
/// little-endian 32-bit words of `rng.fill_bytes` over `4 · len` bytes, filled 4 KiB at
/// a time: ChaCha's block generator hands out whole words, so the stream is that of one
/// `fill_bytes` (test `dropout_mask_is_the_single_fill_stream`).
fn dropout_mask<T: WithDType>(len: usize, p: f64, rng: &mut ChaCha8Rng) -> Vec<T> {
    let (zero, keep) = (T::from_f64(0.0), T::from_f64(1.0 / (1.0 - p)));
    // p < 1 (validated), so p · 2³² < 2³²: the threshold is a u32 (the old u64 compare).
    let threshold = (p * 4_294_967_296.0) as u64;
    let threshold = u32::try_from(threshold).unwrap_or(u32::MAX);
    let mut out = vec![zero; len];
    let mut bytes = [0u8; 4096];
    for chunk in out.chunks_mut(bytes.len() / 4) {
        let words = &mut bytes[..4 * chunk.len()];
        rng.fill_bytes(words);
        for (o, w) in chunk.iter_mut().zip(words.chunks_exact(4)) {
            let r = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
            *o = if r < threshold { zero } else { keep };
        }
    }
    out
}

/// glibc's malloc hands the freed memory of large tensors back to the kernel at every
/// epoch (page faults were half of an MLP's training time on Cora). Freeing one mapped
/// 24 MiB block raises glibc's dynamic mmap threshold to 24 MiB and its trim threshold to
/// 48 MiB, so the tensors are reused from the heap; elsewhere this is one short-lived
/// allocation.
fn keep_tensor_memory() {
    let block: Vec<u8> = Vec::with_capacity(24 << 20);
    drop(std::hint::black_box(block));
}

/// Adam (Kingma & Ba 2015, Algorithm 1; β₁ 0.9, β₂ 0.999, ε 1e-8) with its moments in
/// plain `f64` vectors updated in place: the arithmetic of candle-nn's `AdamW` without
/// weight decay, operation for operation (in `f64`, the parameter then rounded to its
/// type), but one pass over each parameter instead of fifteen tensor operations (each a
/// new allocation).
struct Adam {
    lr: f64,
    t: i32,
    state: Vec<(Var, Vec<f64>, Vec<f64>)>,
}

impl Adam {
    const BETA1: f64 = 0.9;
    const BETA2: f64 = 0.999;
    const EPS: f64 = 1e-8;

    fn new(vars: &[&Var], lr: f64) -> Self {
        Self {
            lr,
            t: 0,
            state: vars
                .iter()
                .map(|v| {
                    let len = v.elem_count();
                    ((*v).clone(), vec![0.0; len], vec![0.0; len])
                })
                .collect(),
        }
    }

    /// One update of the parameters `theta` with the gradient `g` and the moments `m`,
    /// `v`, in `f64` (`T` to `f64` exactly, back by rounding: candle's `to_dtype`).
    fn update<T: WithDType>(
        lr: f64,
        scale_m: f64,
        scale_v: f64,
        m: &mut [f64],
        v: &mut [f64],
        g: &[T],
        mut theta: Vec<T>,
    ) -> Vec<T> {
        for i in 0..theta.len() {
            let gi = g[i].to_f64();
            m[i] = m[i] * Self::BETA1 + gi * (1.0 - Self::BETA1);
            v[i] = v[i] * Self::BETA2 + (gi * gi) * (1.0 - Self::BETA2);
            let adjusted = (m[i] * scale_m) / ((v[i] * scale_v).sqrt() + Self::EPS);
            theta[i] = T::from_f64(theta[i].to_f64() - adjusted * lr);
        }
        theta
    }

    fn step(&mut self, grads: &GradStore) -> candle_core::Result<()> {
        self.t += 1;
        let scale_m = 1.0 / (1.0 - Self::BETA1.powi(self.t));
        let scale_v = 1.0 / (1.0 - Self::BETA2.powi(self.t));
        for (var, m, v) in &mut self.state {
            let Some(g) = grads.get(var) else {
                continue;
            };
            let (lr, theta) = (self.lr, var.as_tensor().flatten_all()?);
            let g = g.flatten_all()?;
            let updated = match var.dtype() {
                DType::F32 => Tensor::from_vec(
                    Self::update(
                        lr,
                        scale_m,
                        scale_v,
                        m,
                        v,
                        &g.to_vec1::<f32>()?,
                        theta.to_vec1()?,
                    ),
                    var.shape(),
                    var.device(),
                )?,
                _ => Tensor::from_vec(
                    Self::update(
                        lr,
                        scale_m,
                        scale_v,
                        m,
                        v,
                        &g.to_vec1::<f64>()?,
                        theta.to_vec1()?,
                    ),
                    var.shape(),
                    var.device(),
                )?,
            };
            var.set(&updated)?;
        }
        Ok(())
    }
}

struct Model {
    w1: Var,
    b1: Var,
    w2: Var,
    b2: Var,
}

/// The constant matrices of one training.
struct Context {
    architecture: Architecture,
    x: Arc<CsrMatrix>,
    /// `X`'s own values (the evaluation's input, without dropout).
    x_values: Arc<Vec<f64>>,
    a: Arc<CsrMatrix>,
    at: Arc<CsrMatrix>,
}

impl Context {
    fn new(architecture: Architecture, data: &NeuralData<'_>) -> Self {
        let graph_based = !matches!(architecture, Architecture::Mlp);
        let (a, at) = if graph_based {
            (data.adjacency.clone(), data.adjacency.transpose())
        } else {
            let empty = CsrMatrix::empty(0, 0);
            (empty.clone(), empty)
        };
        Self {
            architecture,
            x: Arc::new(data.features.clone()),
            x_values: Arc::new(data.features.values().to_vec()),
            a: Arc::new(a),
            at: Arc::new(at),
        }
    }

    /// The scores `n x k` for the input feature values `x_values` (`X`'s or a dropped-out
    /// copy, parallel to `X`'s stored entries) and the hidden layer's dropout multipliers
    /// (`None`: no dropout).
    fn forward(
        &self,
        model: &Model,
        x_values: &Arc<Vec<f64>>,
        hidden_mask: Option<&Mask>,
    ) -> candle_core::Result<Tensor> {
        let xw = model
            .w1
            .as_tensor()
            .contiguous()?
            .apply_op1(FeatureProduct {
                x: Arc::clone(&self.x),
                values: Arc::clone(x_values),
                transposed: false,
            })?;
        let pre = if matches!(self.architecture, Architecture::Gcn) {
            spmm(&self.a, &self.at, &xw)?
        } else {
            xw
        };
        let hid = pre.contiguous()?.apply_op2(
            model.b1.as_tensor(),
            HiddenLayer {
                mask: hidden_mask.cloned(),
            },
        )?;
        let hw = hid.matmul(model.w2.as_tensor())?;
        match self.architecture {
            Architecture::Gcn => spmm(&self.a, &self.at, &hw)?.broadcast_add(model.b2.as_tensor()),
            Architecture::Mlp => hw.broadcast_add(model.b2.as_tensor()),
            Architecture::Appnp { steps, alpha } => hw
                .broadcast_add(model.b2.as_tensor())?
                .contiguous()?
                .apply_op1(SparseMap {
                    m: Arc::clone(&self.a),
                    mt: Arc::clone(&self.at),
                    ppr: Some((steps, alpha)),
                }),
        }
    }
}

/// Mean negative log-likelihood of the softmax of `scores` on the rows `rows` with the
/// classes `y`.
fn nll(scores: &Tensor, rows: &Tensor, y: &Tensor) -> candle_core::Result<Tensor> {
    let logp = candle_nn::ops::log_softmax(&scores.index_select(rows, 0)?, 1)?;
    candle_nn::loss::nll(&logp, y)
}

/// The training objective: [`nll`] on the training rows plus `weight_decay · ‖W₁‖² / 2`.
fn training_loss(
    model: &Model,
    scores: &Tensor,
    rows: &Tensor,
    y: &Tensor,
    weight_decay: f64,
) -> candle_core::Result<Tensor> {
    let loss = nll(scores, rows, y)?;
    if weight_decay > 0.0 {
        let l2 = (model.w1.as_tensor().sqr()?.sum_all()? * (weight_decay / 2.0))?;
        loss + l2
    } else {
        Ok(loss)
    }
}

fn check_nodes(
    name: &'static str,
    nodes: &[usize],
    data: &NeuralData<'_>,
) -> Result<(), LearnError> {
    let n = data.labels.len();
    if nodes.is_empty() {
        return Err(LearnError::NoTrainingData {
            reason: format!("no {name} node"),
        });
    }
    let mut seen = vec![false; n];
    for &v in nodes {
        if v >= n || std::mem::replace(&mut seen[v], true) {
            return Err(LearnError::InvalidData {
                message: format!("{name} node {v}: out of range (n = {n}) or repeated"),
            });
        }
        match data.labels[v] {
            Some(l) if (l as usize) < data.num_classes => {}
            Some(l) => {
                return Err(LearnError::LabelOutOfRange {
                    index: v,
                    label: l as usize,
                    num_labels: data.num_classes,
                });
            }
            None => {
                return Err(LearnError::InvalidData {
                    message: format!("{name} node {v} has no label"),
                });
            }
        }
    }
    Ok(())
}

/// See [`super::train`] (parameters already validated).
pub(super) fn train(
    architecture: Architecture,
    params: &NeuralParams,
    data: &NeuralData<'_>,
    rng: &mut ChaCha8Rng,
) -> Result<NeuralFit, LearnError> {
    keep_tensor_memory();
    let n = data.labels.len();
    let k = data.num_classes;
    let (f, h) = (data.features.cols(), params.hidden);
    if k == 0 {
        return Err(LearnError::InvalidData {
            message: "no class".into(),
        });
    }
    if data.features.rows() != n {
        return Err(LearnError::DimensionMismatch {
            what: "feature rows (nodes)",
            expected: n,
            found: data.features.rows(),
        });
    }
    if !matches!(architecture, Architecture::Mlp)
        && (data.adjacency.rows() != n || data.adjacency.cols() != n)
    {
        return Err(LearnError::DimensionMismatch {
            what: "adjacency (nodes x nodes)",
            expected: n,
            found: data.adjacency.rows(),
        });
    }
    if let Architecture::Appnp { alpha, .. } = architecture {
        crate::propagation::check_unit_interval("appnp.alpha", alpha, true)?;
    }
    check_nodes("training", data.train, data)?;
    check_nodes("validation", data.validation, data)?;
    let dev = Device::Cpu;
    let dtype = match params.precision {
        Precision::F32 => DType::F32,
        Precision::F64 => DType::F64,
    };
    let weights = |v: Vec<f64>, rows: usize, cols: usize| {
        Tensor::from_vec(v, (rows, cols), &dev)
            .and_then(|t| t.to_dtype(dtype))
            .and_then(|t| Var::from_tensor(&t))
            .map_err(candle_err)
    };
    let model = Model {
        w1: weights(glorot(f, h, rng), f, h)?,
        b1: Var::zeros(h, dtype, &dev).map_err(candle_err)?,
        w2: weights(glorot(h, k, rng), h, k)?,
        b2: Var::zeros(k, dtype, &dev).map_err(candle_err)?,
    };
    let mut adam = Adam::new(
        &[&model.w1, &model.b1, &model.w2, &model.b2],
        params.learning_rate,
    );
    let ctx = Context::new(architecture, data);
    let idx =
        |nodes: &[usize]| Tensor::new(nodes.iter().map(|&v| v as u32).collect::<Vec<u32>>(), &dev);
    let target = |nodes: &[usize]| {
        Tensor::new(
            nodes
                .iter()
                .map(|&v| data.labels[v].unwrap_or(0))
                .collect::<Vec<u32>>(),
            &dev,
        )
    };
    let (train_idx, train_y) = (
        idx(data.train).map_err(candle_err)?,
        target(data.train).map_err(candle_err)?,
    );
    let (val_idx, val_y) = (
        idx(data.validation).map_err(candle_err)?,
        target(data.validation).map_err(candle_err)?,
    );

    let mut best = NeuralFit {
        probabilities: Vec::new(),
        epochs: 0,
        best_epoch: 0,
        best_validation_loss: f64::INFINITY,
        stopped_early: false,
    };
    let mut since_best = 0usize;
    let mut best_scores: Option<Tensor> = None;
    for epoch in 1..=params.max_epochs {
        // Training step with dropout.
        // Sparse dropout: the stored values of X times the mask, same structure.
        let xd = if params.dropout > 0.0 {
            let mask: Vec<f64> = dropout_mask(ctx.x.nnz(), params.dropout, rng);
            Arc::new(
                ctx.x_values
                    .iter()
                    .zip(&mask)
                    .map(|(v, m)| v * m)
                    .collect::<Vec<f64>>(),
            )
        } else {
            Arc::clone(&ctx.x_values)
        };
        let hidden_mask = if params.dropout > 0.0 {
            Some(match dtype {
                DType::F32 => Mask::F32(Arc::new(dropout_mask(n * h, params.dropout, rng))),
                _ => Mask::F64(Arc::new(dropout_mask(n * h, params.dropout, rng))),
            })
        } else {
            None
        };
        let step = || -> candle_core::Result<(f64, GradStore)> {
            let scores = ctx.forward(&model, &xd, hidden_mask.as_ref())?;
            let loss = training_loss(&model, &scores, &train_idx, &train_y, params.weight_decay)?;
            let value = loss.to_dtype(DType::F64)?.to_scalar::<f64>()?;
            Ok((value, loss.backward()?))
        };
        let (loss, grads) = step().map_err(candle_err)?;
        if !loss.is_finite() {
            return Err(LearnError::Optimization {
                reason: format!("non-finite training loss {loss} at epoch {epoch}"),
            });
        }
        adam.step(&grads).map_err(candle_err)?;
        // Evaluation without dropout.
        let eval = || -> candle_core::Result<(f64, Tensor)> {
            let scores = ctx.forward(&model, &ctx.x_values, None)?.detach();
            let val = nll(&scores, &val_idx, &val_y)?
                .to_dtype(DType::F64)?
                .to_scalar::<f64>()?;
            Ok((val, scores))
        };
        let (val_loss, scores) = eval().map_err(candle_err)?;
        best.epochs = epoch;
        if val_loss < best.best_validation_loss {
            best.best_validation_loss = val_loss;
            best.best_epoch = epoch;
            // The softmax of the best epoch's scores is taken once, after the training.
            best_scores = Some(scores);
            since_best = 0;
        } else {
            since_best += 1;
            if since_best >= params.patience {
                best.stopped_early = epoch < params.max_epochs;
                break;
            }
        }
    }
    if let Some(scores) = best_scores {
        let mut probs = candle_nn::ops::softmax(&scores, 1)
            .and_then(|p| p.flatten_all())
            .and_then(|p| p.to_dtype(DType::F64))
            .and_then(|p| p.to_vec1::<f64>())
            .map_err(candle_err)?;
        // Rows of an f32 softmax sum to 1 within ~1e-7 only: renormalise in f64.
        crate::propagation::normalize_rows(&mut probs, k);
        best.probabilities = probs;
    }
    if best.probabilities.len() != n * k {
        return Err(LearnError::Optimization {
            reason: "no epoch had a finite validation loss".into(),
        });
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng as _;
    use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};

    /// The 5-node graph of `propagation`'s tests (edges 0-1, 1-2, 2-3, 3-4, 1-3) with
    /// three features and labels 0 1 1 1 1 (training nodes 0, 2, 4).
    fn five() -> RelationalGraph {
        let e = |a: usize, b: usize| (NodeId::new(a), NodeId::new(b));
        RelationalGraph::new(
            Vec::new(),
            Attributes::Dense {
                num_features: 3,
                values: vec![1., 0., 1., 1., 1., 0., 0., 2., 1., 0., 1., 0., 3., 1., 0.],
            },
            vec![Some(0), Some(0), Some(1), Some(1), Some(1)],
            LabelSet::numbered(2),
            vec![e(0, 1), e(1, 2), e(2, 3), e(3, 4), e(1, 3)],
            Directedness::Undirected,
        )
        .expect("graph")
    }

    fn fixed_model() -> Model {
        let dev = Device::Cpu;
        let var = |v: Vec<f64>, s: &[usize]| Var::from_vec(v, s, &dev).expect("var");
        Model {
            w1: var(vec![0.5, -0.3, 0.2, 0.8, -0.6, 0.1], &[3, 2]),
            b1: var(vec![0.05, -0.02], &[2]),
            w2: var(vec![1.0, -0.5, -0.7, 0.9], &[2, 2]),
            b2: var(vec![0.1, -0.1], &[2]),
        }
    }

    /// One forward and backward step of each network at fixed weights, against a
    /// hand-derived forward and backward pass in numpy (no autodiff), Python 3.11, numpy
    /// 2.4.6: `python3 ref_gcn.py` with the script
    /// ```text
    /// import numpy as np
    /// A = np.zeros((5, 5)); E = [(0,1),(1,2),(2,3),(3,4),(1,3)]
    /// for a, b in E: A[a, b] = A[b, a] = 1
    /// At = A + np.eye(5); dt = At.sum(1); Ah = At / np.sqrt(np.outer(dt, dt))
    /// X = np.array([[1., 0, 1], [1, 1, 0], [0, 2, 1], [0, 1, 0], [3, 1, 0]])
    /// X = X / np.abs(X).sum(1, keepdims=True)
    /// W1 = np.array([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]]); b1 = np.array([0.05, -0.02])
    /// W2 = np.array([[1.0, -0.5], [-0.7, 0.9]]); b2 = np.array([0.1, -0.1])
    /// T = [0, 2, 4]; y = np.array([0, 1, 1]); wd = 5e-4
    /// def run(arch):
    ///     P = X @ W1
    ///     Q = (Ah @ P if arch == "gcn" else P) + b1
    ///     H = np.maximum(Q, 0); R = H @ W2
    ///     if arch == "gcn": S = Ah @ R + b2
    ///     elif arch == "mlp": S = R + b2
    ///     else:
    ///         H0 = R + b2; Zs = [H0]
    ///         for _ in range(10): Zs.append(0.9 * Ah @ Zs[-1] + 0.1 * H0)
    ///         S = Zs[-1]
    ///     m = S.max(1, keepdims=True); lse = m + np.log(np.exp(S - m).sum(1, keepdims=True))
    ///     logp = S - lse
    ///     loss = -logp[T, y].mean() + wd / 2 * (W1 ** 2).sum()
    ///     dS = np.zeros_like(S); sm = np.exp(logp)
    ///     for i, t in enumerate(T):
    ///         dS[t] = sm[t]; dS[t, y[i]] -= 1
    ///     dS /= len(T)
    ///     if arch == "gcn": db2 = dS.sum(0); dR = Ah.T @ dS
    ///     elif arch == "mlp": db2 = dS.sum(0); dR = dS
    ///     else:
    ///         dZ = dS; dH0 = np.zeros_like(dS)
    ///         for _ in range(10):
    ///             dH0 += 0.1 * dZ; dZ = 0.9 * Ah.T @ dZ
    ///         dH0 += dZ; db2 = dH0.sum(0); dR = dH0
    ///     dW2 = H.T @ dR; dH = dR @ W2.T; dQ = dH * (Q > 0); db1 = dQ.sum(0)
    ///     dP = Ah.T @ dQ if arch == "gcn" else dQ
    ///     dW1 = X.T @ dP + wd * W1
    ///     return loss, dW1, db1, dW2, db2
    /// ```
    #[test]
    fn one_forward_backward_step_matches_hand_computed_numbers() {
        let g = five();
        let x = CsrMatrix::row_normalized_features(&g).expect("x");
        let a = CsrMatrix::normalized_adjacency(&g, true);
        let data = NeuralData {
            features: &x,
            adjacency: &a,
            labels: g.labels(),
            train: &[0, 2, 4],
            validation: &[1, 3],
            num_classes: 2,
        };
        type Reference = (f64, [f64; 6], [f64; 2], [f64; 4], [f64; 2]);
        let cases: [(Architecture, Reference); 3] = [
            (
                Architecture::Gcn,
                (
                    0.6828566302800392,
                    [
                        0.07467565940112911,
                        -0.07953737002787103,
                        0.19806560364520331,
                        -0.21076331055488354,
                        -0.007807809147699075,
                        0.008058329757545682,
                    ],
                    [0.25354858983684214, -0.2704518291592983],
                    [
                        0.06265871027337784,
                        -0.06265871027337785,
                        0.08681535492287813,
                        -0.08681535492287815,
                    ],
                    [0.18749157776129008, -0.1874915777612901],
                ),
            ),
            (
                Architecture::Mlp,
                (
                    0.7536338146708086,
                    [
                        0.15527529965660833,
                        -0.00015,
                        0.08928893344282962,
                        -0.1195831768586283,
                        -0.11284150067188052,
                        -0.05994158842931415,
                    ],
                    [0.13167273242755742, -0.17997476528794246],
                    [
                        0.11297264902758417,
                        -0.1129726490275842,
                        0.061491378140046994,
                        -0.061491378140047,
                    ],
                    [0.20026604992333563, -0.2002660499233357],
                ),
            ),
            (
                Architecture::Appnp {
                    steps: 10,
                    alpha: 0.1,
                },
                (
                    0.6887333612647765,
                    [
                        0.0738720704312724,
                        -0.018994216480798024,
                        0.11324618573978848,
                        -0.14840329587980183,
                        -0.012708445887540738,
                        -0.02616062681078086,
                    ],
                    [0.17435981028352016, -0.19385813917138073],
                    [
                        0.05040222027352956,
                        -0.050402220273529565,
                        0.07008329478578285,
                        -0.07008329478578286,
                    ],
                    [0.16538479879256085, -0.1653847987925609],
                ),
            ),
        ];
        let dev = Device::Cpu;
        let rows = Tensor::new(vec![0u32, 2, 4], &dev).expect("rows");
        let y = Tensor::new(vec![0u32, 1, 1], &dev).expect("y");
        for (arch, (want_loss, dw1, db1, dw2, db2)) in cases {
            let ctx = Context::new(arch, &data);
            let model = fixed_model();
            let scores = ctx.forward(&model, &ctx.x_values, None).expect("forward");
            let loss = training_loss(&model, &scores, &rows, &y, 5e-4).expect("loss");
            let got = loss.to_scalar::<f64>().expect("scalar");
            assert!((got - want_loss).abs() < 1e-12, "{arch:?}: loss {got}");
            let grads = loss.backward().expect("backward");
            for (var, want) in [
                (&model.w1, &dw1[..]),
                (&model.b1, &db1[..]),
                (&model.w2, &dw2[..]),
                (&model.b2, &db2[..]),
            ] {
                let g = grads
                    .get(var)
                    .expect("gradient")
                    .flatten_all()
                    .and_then(|t| t.to_vec1::<f64>())
                    .expect("values");
                for (a, b) in g.iter().zip(want) {
                    assert!((a - b).abs() < 1e-12, "{arch:?}: gradient {a} vs {b}");
                }
            }
        }
    }

    /// The dropout mask drawn 4 KiB at a time is the one of a single `fill_bytes` (the
    /// earlier implementation), across chunk boundaries.
    #[test]
    fn dropout_mask_is_the_single_fill_stream() {
        let single = |len: usize, p: f64, rng: &mut ChaCha8Rng| -> Vec<f32> {
            let threshold = (p * 4_294_967_296.0) as u64;
            let mut bytes = vec![0u8; 4 * len];
            rng.fill_bytes(&mut bytes);
            bytes
                .chunks_exact(4)
                .map(|w| {
                    let r = u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
                    if r < threshold { 0.0 } else { 2.0 }
                })
                .collect()
        };
        for len in [1, 7, 1024, 1025, 5000] {
            let (mut r1, mut r2) = (ChaCha8Rng::seed_from_u64(3), ChaCha8Rng::seed_from_u64(3));
            assert_eq!(
                dropout_mask::<f32>(len, 0.5, &mut r1),
                single(len, 0.5, &mut r2)
            );
            assert_eq!(r1.random::<u64>(), r2.random::<u64>());
        }
    }

    /// The width-specialised products and the transposed product without a transpose are
    /// the bits of the plain loops over `M` and `Mᵀ`.
    #[test]
    fn sparse_products_match_the_plain_loops_bit_for_bit() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let (rows, cols) = (37, 23);
        let (mut offsets, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for _ in 0..rows {
            for j in 0..cols {
                if rng.random::<f64>() < 0.3 {
                    indices.push(j as u32);
                    values.push(rng.random::<f64>() - 0.3);
                }
            }
            offsets.push(indices.len());
        }
        let m = CsrMatrix::new(rows, cols, offsets, indices, values).expect("csr");
        let mt = m.transpose();
        for d in [1, 3, 7, 16, 20, 64] {
            let x: Vec<f32> = (0..cols * d).map(|_| rng.random::<f32>() - 0.5).collect();
            let mut plain = vec![0f32; rows * d];
            for i in 0..rows {
                csr_row_dyn(
                    m.row(i).0,
                    m.row(i).1,
                    &x,
                    d,
                    &mut plain[i * d..(i + 1) * d],
                    None,
                );
            }
            assert_eq!(csr_mul(&m, m.values(), &x, d), plain, "d = {d}");
            let g: Vec<f32> = (0..rows * d).map(|_| rng.random::<f32>() - 0.5).collect();
            let mut via_t = vec![0f32; cols * d];
            for j in 0..cols {
                let (c, v) = mt.row(j);
                csr_row_dyn(c, v, &g, d, &mut via_t[j * d..(j + 1) * d], None);
            }
            assert_eq!(csr_mul_transposed(&m, m.values(), &g, d), via_t, "d = {d}");
        }
    }

    #[test]
    fn training_fits_the_training_nodes_and_is_reproducible() {
        let g = five();
        let x = CsrMatrix::row_normalized_features(&g).expect("x");
        let a = CsrMatrix::normalized_adjacency(&g, true);
        let data = NeuralData {
            features: &x,
            adjacency: &a,
            labels: g.labels(),
            train: &[0, 2, 4],
            validation: &[1, 3],
            num_classes: 2,
        };
        for precision in [Precision::F32, Precision::F64] {
            let params = NeuralParams {
                max_epochs: 300,
                patience: 300,
                dropout: 0.0,
                precision,
                ..NeuralParams::gcn()
            };
            for arch in [
                Architecture::Mlp,
                Architecture::Gcn,
                Architecture::Appnp {
                    steps: 10,
                    alpha: 0.1,
                },
            ] {
                let run = |seed| {
                    crate::neural::train(arch, &params, &data, &mut ChaCha8Rng::seed_from_u64(seed))
                        .expect("trains")
                };
                let (a1, a2) = (run(1), run(1));
                assert_eq!(a1.probabilities, a2.probabilities, "{arch:?}");
                assert_eq!(a1.epochs, 300);
                assert!(!a1.stopped_early);
                for r in a1.probabilities.chunks(2) {
                    assert!((r[0] + r[1] - 1.0).abs() < 1e-12);
                }
                let with_dropout = NeuralParams {
                    dropout: 0.5,
                    ..params
                };
                let d1 = crate::neural::train(
                    arch,
                    &with_dropout,
                    &data,
                    &mut ChaCha8Rng::seed_from_u64(2),
                )
                .expect("trains");
                let d2 = crate::neural::train(
                    arch,
                    &with_dropout,
                    &data,
                    &mut ChaCha8Rng::seed_from_u64(2),
                )
                .expect("trains");
                assert_eq!(d1.probabilities, d2.probabilities);
            }
        }
    }

    #[test]
    fn bad_input_is_a_typed_error() {
        let g = five();
        let x = CsrMatrix::row_normalized_features(&g).expect("x");
        let a = CsrMatrix::normalized_adjacency(&g, true);
        let ok = NeuralData {
            features: &x,
            adjacency: &a,
            labels: g.labels(),
            train: &[0, 2, 4],
            validation: &[1, 3],
            num_classes: 2,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let p = NeuralParams::gcn();
        for bad in [
            NeuralParams { hidden: 0, ..p },
            NeuralParams { dropout: 1.0, ..p },
            NeuralParams {
                learning_rate: f64::NAN,
                ..p
            },
            NeuralParams {
                weight_decay: -1.0,
                ..p
            },
            NeuralParams { patience: 0, ..p },
        ] {
            assert!(crate::neural::train(Architecture::Gcn, &bad, &ok, &mut rng).is_err());
        }
        let unlabelled = [Some(0), None, Some(1), Some(1), Some(1)];
        for data in [
            NeuralData { train: &[], ..ok },
            NeuralData {
                validation: &[5],
                ..ok
            },
            NeuralData {
                train: &[0, 0],
                ..ok
            },
            NeuralData {
                labels: &unlabelled,
                ..ok
            },
            NeuralData {
                num_classes: 1,
                ..ok
            },
            NeuralData {
                labels: &[Some(0), Some(1)],
                ..ok
            },
        ] {
            assert!(crate::neural::train(Architecture::Gcn, &p, &data, &mut rng).is_err());
        }
        let appnp = Architecture::Appnp {
            steps: 10,
            alpha: 0.0,
        };
        assert!(crate::neural::train(appnp, &p, &ok, &mut rng).is_err());
    }
}
