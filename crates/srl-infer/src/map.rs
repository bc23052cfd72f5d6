//! MAP / energy minimisation (ICM) and the traits that let learners swap algorithms.

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::bp::LoopyBp;
use crate::error::InferError;
use crate::exact::Exact;
use crate::gibbs::{Gibbs, local_scores};
use crate::marginals::{Convergence, MapAssignment, Marginals, argmax};
use crate::mean_field::MeanField;
use crate::mrf::PairwiseMrf;

/// An algorithm that computes (approximate) marginals of a [`PairwiseMrf`].
///
/// Learners are generic over it (e.g. the CSMN gradient of Sen & Getoor 2006 §5.1 needs
/// clique marginals of a modified model). Deterministic algorithms ignore `rng`.
pub trait MarginalInference {
    /// Node (and, if configured, edge) marginals with a convergence report.
    ///
    /// # Errors
    /// Algorithm-specific: [`InferError::ExactTooLarge`] for [`Exact`],
    /// [`InferError::InvalidParameter`] for a bad [`Gibbs`] configuration; LBP and mean
    /// field never fail.
    fn infer_marginals<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> Result<Marginals, InferError>;
}

/// An algorithm that computes an (approximate) MAP assignment
/// `argmax_x Σ θ_v(x_v) + Σ θ_e(x_u, x_v)` (e.g. the `y`-step of CSMN inference, Sen &
/// Getoor 2006 §5.2). Deterministic algorithms ignore `rng`.
pub trait MapInference {
    /// The assignment with its log-score and a convergence report.
    ///
    /// # Errors
    /// As [`MarginalInference::infer_marginals`].
    fn infer_map<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> Result<MapAssignment, InferError>;
}

/// Iterated conditional modes (Besag 1986): starting from an assignment, repeatedly set
/// each free variable to the state maximising its local conditional
/// `θ_v(x) + Σ_j θ_vj(x, x_j)`, in index order, until a sweep changes nothing. Each move
/// never decreases the log-score, so ICM stops at a local maximum.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `max_iters` | 100 | sweep cap | `≥ 0` |
///
/// `Convergence::max_residual` is the number of variables changed in the last sweep.
///
/// # Examples
/// ```
/// use srl_infer::{Exact, Icm, MrfParts, PairTable, PairwiseMrf};
/// let mrf = PairwiseMrf::new(MrfParts {
///     num_states: vec![2, 2],
///     unary: vec![1.0, 0.0, 0.0, 0.2],
///     edges: vec![(0, 1)],
///     edge_tables: vec![0],
///     tables: vec![PairTable::potts(2, 1.0, 0.0)],
///     evidence: vec![],
/// })?;
/// let icm = Icm::default().run(&mrf);
/// assert_eq!(icm.states, vec![0, 0]);
/// assert_eq!(icm.log_score, Exact::default().map(&mrf)?.log_score);
/// # Ok::<(), srl_infer::InferError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Icm {
    /// Sweep cap.
    pub max_iters: usize,
}

impl Default for Icm {
    fn default() -> Self {
        Self { max_iters: 100 }
    }
}

impl Icm {
    /// ICM from the unary argmax (evidence respected).
    #[must_use]
    pub fn run(&self, mrf: &PairwiseMrf) -> MapAssignment {
        let init: Vec<u32> = (0..mrf.num_nodes())
            .map(|v| argmax(&mrf.eff_unary()[mrf.state_off[v]..mrf.state_off[v + 1]]) as u32)
            .collect();
        self.climb(mrf, init)
    }

    /// ICM from a given assignment (e.g. a max-product or Gibbs result); observed
    /// variables are reset to their evidence.
    ///
    /// # Errors
    /// [`InferError::DimensionMismatch`] if `init.len() != n`,
    /// [`InferError::EvidenceOutOfRange`] for a state `>= k_v`.
    pub fn run_from(&self, mrf: &PairwiseMrf, init: &[u32]) -> Result<MapAssignment, InferError> {
        if init.len() != mrf.num_nodes() {
            return Err(InferError::DimensionMismatch {
                what: "initial assignment",
                expected: mrf.num_nodes(),
                found: init.len(),
            });
        }
        let mut x = init.to_vec();
        for (v, xv) in x.iter_mut().enumerate() {
            if *xv >= mrf.num_states[v] {
                return Err(InferError::EvidenceOutOfRange {
                    node: v,
                    state: *xv as usize,
                    num_states: mrf.num_states[v] as usize,
                });
            }
            if let Some(s) = mrf.evidence[v] {
                *xv = s;
            }
        }
        Ok(self.climb(mrf, x))
    }

    fn climb(&self, mrf: &PairwiseMrf, mut x: Vec<u32>) -> MapAssignment {
        let mut s = vec![0.0; mrf.max_states.max(1)];
        let mut conv = Convergence::start(false);
        while !conv.converged && conv.iterations < self.max_iters {
            let mut changed = 0usize;
            for v in 0..mrf.num_nodes() {
                if mrf.evidence[v].is_some() {
                    continue;
                }
                let kv = mrf.num_states[v] as usize;
                local_scores(mrf, &x, v, &mut s[..kv]);
                let best = argmax(&s[..kv]);
                if s[best] > s[x[v] as usize] {
                    x[v] = best as u32;
                    changed += 1;
                }
            }
            conv.iterations += 1;
            conv.max_residual = changed as f64;
            conv.converged = changed == 0;
        }
        MapAssignment::new(mrf, x, conv)
    }
}

impl MarginalInference for LoopyBp {
    fn infer_marginals<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        _rng: &mut R,
    ) -> Result<Marginals, InferError> {
        Ok(self.run(mrf))
    }
}

impl MapInference for LoopyBp {
    fn infer_map<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        _rng: &mut R,
    ) -> Result<MapAssignment, InferError> {
        Ok(self.map(mrf))
    }
}

impl MarginalInference for MeanField {
    fn infer_marginals<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        _rng: &mut R,
    ) -> Result<Marginals, InferError> {
        Ok(self.run(mrf))
    }
}

impl MarginalInference for Gibbs {
    fn infer_marginals<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> Result<Marginals, InferError> {
        Ok(self.run(mrf, rng)?.marginals)
    }
}

impl MapInference for Gibbs {
    fn infer_map<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> Result<MapAssignment, InferError> {
        Ok(self.run(mrf, rng)?.best)
    }
}

impl MarginalInference for Exact {
    fn infer_marginals<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        _rng: &mut R,
    ) -> Result<Marginals, InferError> {
        self.marginals(mrf)
    }
}

impl MapInference for Exact {
    fn infer_map<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        _rng: &mut R,
    ) -> Result<MapAssignment, InferError> {
        self.map(mrf)
    }
}

impl MapInference for Icm {
    fn infer_map<R: Rng + ?Sized>(
        &self,
        mrf: &PairwiseMrf,
        _rng: &mut R,
    ) -> Result<MapAssignment, InferError> {
        Ok(self.run(mrf))
    }
}
