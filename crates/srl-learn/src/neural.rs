//! The neural graph learners: an MLP on the content features, GCN (Kipf & Welling 2017)
//! and APPNP (Klicpera, Bojchevski & Günnemann 2019), trained full-batch on the CPU with
//! candle (`candle-core` / `candle-nn` 0.9.1: tensors, reverse-mode autodiff, Adam).
//!
//! The sparse products (features times the first layer's weights, the normalised
//! adjacency times a dense matrix) are a candle custom operation on srl-learn's own
//! [`CsrMatrix`] (forward `M · X`, backward `Mᵀ · G`), sequential `f64` loops; the small
//! dense products of the second layer are candle's `matmul` (the `gemm` crate). Every
//! random draw (Glorot initialisation, dropout masks) comes from the caller's ChaCha8
//! stream, so the same stream gives the same bits for any thread count (the test
//! `same_bits_for_any_thread_count` in `tests/neural_threads.rs` runs the training under
//! `RAYON_NUM_THREADS=1` and `2` and compares the bits).
//!
//! Shapes: `n` nodes, `f` features, `h` hidden units, `k` classes; dense matrices are
//! row-major `Vec<f64>`.

use std::sync::Arc;

use candle_core::backprop::GradStore;
use candle_core::{CpuStorage, CustomOp1, DType, Device, Layout, Shape, Tensor, Var};
use candle_nn::Optimizer as _;
use rand::RngExt as _;
use rand_chacha::ChaCha8Rng;

use crate::error::LearnError;
use crate::propagation::CsrMatrix;

/// Hyperparameters of one neural method (defaults: [`NeuralParams::gcn`],
/// [`NeuralParams::mlp`], [`NeuralParams::appnp`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct NeuralParams {
    /// Hidden units `h` of the one hidden layer (`>= 1`).
    pub hidden: usize,
    /// Dropout probability in `[0, 1)`, applied to the input features (to the stored
    /// non-zeros: sparse dropout) and to the hidden layer during training.
    pub dropout: f64,
    /// Adam's learning rate (`> 0`; β₁ 0.9, β₂ 0.999, ε 1e-8).
    pub learning_rate: f64,
    /// L2 penalty on the first layer's weights only, added to the loss as
    /// `weight_decay · ‖W₁‖² / 2` (TensorFlow's `l2_loss`, as Kipf & Welling's code does);
    /// finite, `>= 0`.
    pub weight_decay: f64,
    /// Epoch cap (`>= 1`; one full-batch Adam step per epoch).
    pub max_epochs: usize,
    /// Early stopping: stop after this many epochs without a new lowest validation loss
    /// (`>= 1`); the result is the model of the epoch with the lowest validation loss.
    pub patience: usize,
}

impl NeuralParams {
    /// GCN as Kipf & Welling (2017, §5.2 and Appendix B) trained it: 16 hidden units,
    /// dropout 0.5, learning rate 0.01, weight decay 5e-4, at most 200 epochs, patience
    /// 10 on the validation loss.
    #[must_use]
    pub const fn gcn() -> Self {
        Self {
            hidden: 16,
            dropout: 0.5,
            learning_rate: 0.01,
            weight_decay: 5e-4,
            max_epochs: 200,
            patience: 10,
        }
    }

    /// The MLP baseline: 64 hidden units, otherwise GCN's training (dropout 0.5, learning
    /// rate 0.01, weight decay 5e-4, 200 epochs, patience 10).
    #[must_use]
    pub const fn mlp() -> Self {
        Self {
            hidden: 64,
            ..Self::gcn()
        }
    }

    /// APPNP's network as Klicpera et al. (2019, §6) trained it: 64 hidden units, dropout
    /// 0.5, learning rate 0.01, weight decay 5e-3; at most 200 epochs with patience 10
    /// here (theirs: up to 10 000 epochs, patience 100).
    #[must_use]
    pub const fn appnp() -> Self {
        Self {
            hidden: 64,
            weight_decay: 5e-3,
            ..Self::gcn()
        }
    }

    /// Checks the ranges of the fields.
    ///
    /// # Errors
    /// [`LearnError::InvalidParameter`] naming the field.
    pub fn validate(&self, name: &'static str) -> Result<(), LearnError> {
        let bad = |what: String| {
            Err(LearnError::InvalidParameter {
                name,
                message: what,
            })
        };
        if self.hidden == 0 {
            return bad("hidden 0: must be at least 1".into());
        }
        if !(self.dropout >= 0.0 && self.dropout < 1.0) {
            return bad(format!("dropout {}: must be in [0, 1)", self.dropout));
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return bad(format!(
                "learning rate {}: must be finite and > 0",
                self.learning_rate
            ));
        }
        if !(self.weight_decay.is_finite() && self.weight_decay >= 0.0) {
            return bad(format!(
                "weight decay {}: must be finite and >= 0",
                self.weight_decay
            ));
        }
        if self.max_epochs == 0 || self.patience == 0 {
            return bad("max_epochs and patience must be at least 1".into());
        }
        Ok(())
    }
}

/// The network between the features and the class scores.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Architecture {
    /// `Z = drop(ReLU(drop(X) W₁ + b₁)) W₂ + b₂`: the features alone.
    Mlp,
    /// Kipf & Welling (2017), Eq. 9: `Z = Â drop(ReLU(Â drop(X) W₁ + b₁)) W₂ + b₂` with
    /// `Â = D̃^{-1/2}(A + I)D̃^{-1/2}` (biases as in PyTorch Geometric's `GCNConv`).
    Gcn,
    /// Klicpera et al. (2019), Eq. 3-4: the MLP's scores `H`, then `steps` propagation
    /// steps `Z ← (1 − α) Â Z + α H` (trained end to end through the propagation; no
    /// dropout on `Â`).
    Appnp {
        /// Propagation steps `K` (paper: 10).
        steps: usize,
        /// Teleport probability `α` in `(0, 1]` (paper: 0.1).
        alpha: f64,
    },
}

/// What one training produced.
#[derive(Clone, Debug)]
pub struct NeuralFit {
    /// Class probabilities of every node (`n x k`, softmax of the scores without dropout)
    /// at the epoch with the lowest validation loss.
    pub probabilities: Vec<f64>,
    /// Epochs run.
    pub epochs: usize,
    /// The epoch (1-based) whose model is returned.
    pub best_epoch: usize,
    /// Its validation loss (mean negative log-likelihood).
    pub best_validation_loss: f64,
    /// Whether early stopping ended the training before [`NeuralParams::max_epochs`].
    pub stopped_early: bool,
}

/// The data of one training: row-normalised features, the normalised adjacency with
/// self-loops (unused by [`Architecture::Mlp`]), the labels and the node sets.
#[derive(Copy, Clone, Debug)]
pub struct NeuralData<'a> {
    /// `n x f` features ([`CsrMatrix::row_normalized_features`]).
    pub features: &'a CsrMatrix,
    /// `n x n` `Â` ([`CsrMatrix::normalized_adjacency`] with self-loops).
    pub adjacency: &'a CsrMatrix,
    /// Labels (`n`); every training and validation node must have one, `< k`.
    pub labels: &'a [Option<u32>],
    /// Training nodes (non-empty, distinct, `< n`).
    pub train: &'a [usize],
    /// Validation nodes for early stopping (non-empty, distinct, `< n`).
    pub validation: &'a [usize],
    /// Number of classes `k >= 1`.
    pub num_classes: usize,
}

fn candle_err(e: candle_core::Error) -> LearnError {
    LearnError::Optimization {
        reason: format!("candle: {e}"),
    }
}

/// `M · X` for a constant sparse `M` and a dense `X` (`M.cols() x d`), backward `Mᵀ · G`.
struct SparseMul {
    m: Arc<CsrMatrix>,
    mt: Arc<CsrMatrix>,
}

impl CustomOp1 for SparseMul {
    fn name(&self) -> &'static str {
        "srl-sparse-mul"
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
        let CpuStorage::F64(data) = storage else {
            candle_core::bail!("sparse product: f64 only");
        };
        let Some((a, b)) = layout.contiguous_offsets() else {
            candle_core::bail!("sparse product: contiguous input only");
        };
        let out = self
            .m
            .mul_dense(&data[a..b], d)
            .map_err(|e| candle_core::Error::Msg(e.to_string()))?;
        Ok((CpuStorage::F64(out), Shape::from((self.m.rows(), d))))
    }

    fn bwd(
        &self,
        _arg: &Tensor,
        _res: &Tensor,
        grad_res: &Tensor,
    ) -> candle_core::Result<Option<Tensor>> {
        let g = grad_res.contiguous()?;
        Ok(Some(g.apply_op1(SparseMul {
            m: Arc::clone(&self.mt),
            mt: Arc::clone(&self.m),
        })?))
    }
}

fn spmm(m: &Arc<CsrMatrix>, mt: &Arc<CsrMatrix>, x: &Tensor) -> candle_core::Result<Tensor> {
    x.contiguous()?.apply_op1(SparseMul {
        m: Arc::clone(m),
        mt: Arc::clone(mt),
    })
}

/// Glorot & Bengio (2010) uniform initialisation `U(−r, r)`, `r = √(6 / (fan_in +
/// fan_out))`, of a `fan_in x fan_out` matrix, row-major, from `rng`.
fn glorot(fan_in: usize, fan_out: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let r = (6.0 / (fan_in + fan_out) as f64).sqrt();
    (0..fan_in * fan_out)
        .map(|_| (2.0 * rng.random::<f64>() - 1.0) * r)
        .collect()
}

/// The inverted-dropout multipliers of `len` units: `1 / (1 − p)` with probability
/// `1 − p`, else 0.
fn dropout_mask(len: usize, p: f64, rng: &mut ChaCha8Rng) -> Vec<f64> {
    let keep = 1.0 / (1.0 - p);
    (0..len)
        .map(|_| if rng.random::<f64>() < p { 0.0 } else { keep })
        .collect()
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
    xt: Arc<CsrMatrix>,
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
            xt: Arc::new(data.features.transpose()),
            a: Arc::new(a),
            at: Arc::new(at),
        }
    }

    /// The scores `n x k` for the input features `xm` (`X` or a dropped-out copy, with its
    /// transpose) and the hidden layer's dropout multipliers (`None`: no dropout).
    fn forward(
        &self,
        model: &Model,
        xm: (&Arc<CsrMatrix>, &Arc<CsrMatrix>),
        hidden_mask: Option<&Tensor>,
    ) -> candle_core::Result<Tensor> {
        let xw = spmm(xm.0, xm.1, model.w1.as_tensor())?;
        let pre = if matches!(self.architecture, Architecture::Gcn) {
            spmm(&self.a, &self.at, &xw)?
        } else {
            xw
        };
        let mut hid = pre.broadcast_add(model.b1.as_tensor())?.relu()?;
        if let Some(m) = hidden_mask {
            hid = (hid * m)?;
        }
        let hw = hid.matmul(model.w2.as_tensor())?;
        match self.architecture {
            Architecture::Gcn => spmm(&self.a, &self.at, &hw)?.broadcast_add(model.b2.as_tensor()),
            Architecture::Mlp => hw.broadcast_add(model.b2.as_tensor()),
            Architecture::Appnp { steps, alpha } => {
                let h0 = hw.broadcast_add(model.b2.as_tensor())?;
                let restart = (&h0 * alpha)?;
                let mut z = h0;
                for _ in 0..steps {
                    z = ((spmm(&self.a, &self.at, &z)? * (1.0 - alpha))? + &restart)?;
                }
                Ok(z)
            }
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

/// Trains `architecture` with `params` on `data` by full-batch Adam on the mean
/// cross-entropy of the training nodes plus the first layer's L2 penalty, with early
/// stopping on the validation nodes, and returns the probabilities of the best epoch.
///
/// Random draws, in order, from `rng`: `W₁` (`f x h`), `W₂` (`h x k`), then per epoch
/// the input dropout mask (one draw per stored feature value) and the hidden dropout
/// mask (`n x h`); biases start at 0.
///
/// # Errors
/// [`LearnError::InvalidParameter`] for invalid `params` or APPNP settings;
/// [`LearnError::DimensionMismatch`] for matrices that do not fit `n`;
/// [`LearnError::NoTrainingData`] / [`LearnError::InvalidData`] /
/// [`LearnError::LabelOutOfRange`] for bad node sets or labels;
/// [`LearnError::Optimization`] for a candle error or a non-finite loss.
pub fn train(
    architecture: Architecture,
    params: &NeuralParams,
    data: &NeuralData<'_>,
    rng: &mut ChaCha8Rng,
) -> Result<NeuralFit, LearnError> {
    params.validate("neural")?;
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
    if let Architecture::Appnp { alpha, .. } = architecture
        && !(alpha.is_finite() && alpha > 0.0 && alpha <= 1.0)
    {
        return Err(LearnError::InvalidParameter {
            name: "appnp.alpha",
            message: format!("{alpha}: must be in (0, 1]"),
        });
    }
    check_nodes("training", data.train, data)?;
    check_nodes("validation", data.validation, data)?;
    let dev = Device::Cpu;
    let model = Model {
        w1: Var::from_vec(glorot(f, h, rng), (f, h), &dev).map_err(candle_err)?,
        b1: Var::zeros(h, DType::F64, &dev).map_err(candle_err)?,
        w2: Var::from_vec(glorot(h, k, rng), (h, k), &dev).map_err(candle_err)?,
        b2: Var::zeros(k, DType::F64, &dev).map_err(candle_err)?,
    };
    let mut adam = candle_nn::AdamW::new(
        vec![
            model.w1.clone(),
            model.b1.clone(),
            model.w2.clone(),
            model.b2.clone(),
        ],
        candle_nn::ParamsAdamW {
            lr: params.learning_rate,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
        },
    )
    .map_err(candle_err)?;
    let ctx = Context::new(architecture, data);
    let (x, xt) = (Arc::clone(&ctx.x), Arc::clone(&ctx.xt));
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
    for epoch in 1..=params.max_epochs {
        // Training step with dropout.
        let (xd, xdt) = if params.dropout > 0.0 {
            let mask = dropout_mask(x.nnz(), params.dropout, rng);
            let vals: Vec<f64> = x.values().iter().zip(&mask).map(|(v, m)| v * m).collect();
            let xd = x.with_values(vals)?;
            let xdt = xd.transpose();
            (Arc::new(xd), Arc::new(xdt))
        } else {
            (Arc::clone(&x), Arc::clone(&xt))
        };
        let hidden_mask = if params.dropout > 0.0 {
            Some(
                Tensor::from_vec(dropout_mask(n * h, params.dropout, rng), (n, h), &dev)
                    .map_err(candle_err)?,
            )
        } else {
            None
        };
        let step = || -> candle_core::Result<(f64, GradStore)> {
            let scores = ctx.forward(&model, (&xd, &xdt), hidden_mask.as_ref())?;
            let loss = training_loss(&model, &scores, &train_idx, &train_y, params.weight_decay)?;
            let value = loss.to_scalar::<f64>()?;
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
            let scores = ctx.forward(&model, (&x, &xt), None)?.detach();
            let val = nll(&scores, &val_idx, &val_y)?.to_scalar::<f64>()?;
            Ok((val, scores))
        };
        let (val_loss, scores) = eval().map_err(candle_err)?;
        best.epochs = epoch;
        if val_loss < best.best_validation_loss {
            best.best_validation_loss = val_loss;
            best.best_epoch = epoch;
            let probs = candle_nn::ops::softmax(&scores, 1)
                .and_then(|p| p.flatten_all())
                .and_then(|p| p.to_vec1::<f64>())
                .map_err(candle_err)?;
            best.probabilities = probs;
            since_best = 0;
        } else {
            since_best += 1;
            if since_best >= params.patience {
                best.stopped_early = epoch < params.max_epochs;
                break;
            }
        }
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
            let scores = ctx
                .forward(&model, (&ctx.x, &ctx.xt), None)
                .expect("forward");
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
        let params = NeuralParams {
            max_epochs: 300,
            patience: 300,
            dropout: 0.0,
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
                train(arch, &params, &data, &mut ChaCha8Rng::seed_from_u64(seed)).expect("trains")
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
            let d1 = train(
                arch,
                &with_dropout,
                &data,
                &mut ChaCha8Rng::seed_from_u64(2),
            )
            .expect("trains");
            let d2 = train(
                arch,
                &with_dropout,
                &data,
                &mut ChaCha8Rng::seed_from_u64(2),
            )
            .expect("trains");
            assert_eq!(d1.probabilities, d2.probabilities);
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
            assert!(train(Architecture::Gcn, &bad, &ok, &mut rng).is_err());
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
            assert!(train(Architecture::Gcn, &p, &data, &mut rng).is_err());
        }
        let appnp = Architecture::Appnp {
            steps: 10,
            alpha: 0.0,
        };
        assert!(train(appnp, &p, &ok, &mut rng).is_err());
    }
}
