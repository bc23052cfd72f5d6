//! The neural graph learners: an MLP on the content features, GCN (Kipf & Welling 2017)
//! and APPNP (Klicpera, Bojchevski & Günnemann 2019), trained full-batch on the CPU with
//! candle (`candle-core` / `candle-nn` 0.9.1: tensors, reverse-mode autodiff, Adam).
//!
//! The sparse products (features times the first layer's weights, the normalised
//! adjacency times a dense matrix) are candle custom operations on srl-learn's own
//! [`CsrMatrix`] (forward `M · X`, backward `Mᵀ · G`; for the features without a
//! transposed copy, and with the dropped-out values beside the one structure), sequential
//! loops in the tensors' type; the hidden layer's bias, ReLU and dropout are one custom
//! operation whose backward pass repeats candle's arithmetic in candle's order; the small
//! dense products of the second layer are candle's `matmul` (the `gemm` crate). Every
//! random draw (Glorot initialisation, dropout masks) comes from the caller's ChaCha8
//! stream, so the same stream gives the same bits for any thread count (the test
//! `same_bits_for_any_thread_count` in `tests/neural_threads.rs` runs the training under
//! `RAYON_NUM_THREADS=1` and `2` and compares the bits).
//!
//! Shapes: `n` nodes, `f` features, `h` hidden units, `k` classes; dense matrices are
//! row-major `Vec<f64>`.

use rand_chacha::ChaCha8Rng;

use crate::error::LearnError;
use crate::propagation::CsrMatrix;

#[cfg(feature = "neural")]
mod backend;

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
    /// The tensors' floating-point type (default [`Precision::F32`], as the papers'
    /// implementations train; [`Precision::F64`] for reference checks). Adam's moments
    /// are `f64` either way.
    pub precision: Precision,
}

/// The floating-point type of a network's weights and activations.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// 32-bit (about twice as fast as `F64` here: half the memory traffic).
    #[default]
    F32,
    /// 64-bit.
    F64,
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
            precision: Precision::F32,
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

    /// APPNP's network with the hyperparameters of Klicpera et al. (2019, §6): 64 hidden
    /// units, dropout 0.5, learning rate 0.01, weight decay 5e-3; at most 200 epochs with
    /// patience 10 here (theirs: up to 10 000 epochs, patience 100). Dropout acts on the
    /// network only, never inside the propagation ([`Architecture::Appnp`]).
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

/// Trains `architecture` with `params` on `data` by full-batch Adam on the mean
/// cross-entropy of the training nodes plus the first layer's L2 penalty, with early
/// stopping on the validation nodes, and returns the probabilities of the best epoch.
///
/// Random draws, in order, from `rng`: `W₁` (`f x h`, Glorot uniform), `W₂` (`h x k`),
/// then per epoch the input dropout mask (one draw per stored feature value) and the
/// hidden dropout mask (`n x h`); biases start at 0.
///
/// # Errors
/// [`LearnError::InvalidParameter`] for invalid `params` or APPNP settings, or when
/// srl-learn was built without its `neural` feature; [`LearnError::DimensionMismatch`]
/// for matrices that do not fit `n`; [`LearnError::NoTrainingData`] /
/// [`LearnError::InvalidData`] / [`LearnError::LabelOutOfRange`] for bad node sets or
/// labels; [`LearnError::Optimization`] for a candle error or a non-finite loss.
pub fn train(
    architecture: Architecture,
    params: &NeuralParams,
    data: &NeuralData<'_>,
    rng: &mut ChaCha8Rng,
) -> Result<NeuralFit, LearnError> {
    params.validate("neural")?;
    #[cfg(feature = "neural")]
    {
        backend::train(architecture, params, data, rng)
    }
    #[cfg(not(feature = "neural"))]
    {
        let _ = (architecture, data, rng);
        Err(LearnError::InvalidParameter {
            name: "method",
            message: "the neural methods (MLP, GCN, APPNP, CS-MLP) need srl-learn's `neural` \
                      feature, which this build leaves out"
                .into(),
        })
    }
}
