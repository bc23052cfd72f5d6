//! The learner a run asks for, as one call: the entry point of the front-ends
//! (`srl boost learn`, srl-py's `BoostedRDN` / `SoftBoostedRDN` / `BoostedMLN` and
//! `srl.fit_targets`), so the choice between MLN-Boost, RFGB with expert advice and plain
//! RFGB / Soft-RFGB, and the check of the advice weight, are written once.
//!
//! * [`advice_weight`] — BoostSRL's `-adviceWt`: the weight given (default
//!   [`BOOSTSRL_ADVICE_WEIGHT`]), checked to be in [0, 1].
//! * [`fit_boosted`] — one target's model from its split: [`BoostKind::Mln`] learns
//!   MLN-Boost ([`MlnBoostParams::from_rfgb`], then [`MlnBoostParams::fit`]);
//!   [`BoostKind::Rdn`] learns RFGB / Soft-RFGB ([`SoftRfgbParams::fit`]), or with
//!   advice knowledge-based RFGB (Odom et al. 2015, BoostSRL `-adviceFile` /
//!   `-adviceWt`; [`SoftRfgbParams::fit_with_advice`]).

use crate::BoostError;
use crate::advice::{Advice, BOOSTSRL_ADVICE_WEIGHT};
use crate::boost::{SoftRfgb, SoftRfgbParams};
use crate::clauses::MlnClauseParams;
use crate::logic::{Background, Database, Examples};
use crate::mln::{MlnBoost, MlnBoostParams};

/// Which boosted model [`fit_boosted`] learns (BoostSRL's `-mln` and `-mlnClause` flags
/// or not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoostKind {
    /// A relational dependency network: RFGB / Soft-RFGB ([`SoftRfgb`]), the only kind
    /// that takes expert advice.
    Rdn,
    /// MLN-Boost (Khot et al. 2011; BoostSRL `-mln`), one tree per step, [`MlnBoost`].
    Mln,
    /// MLN-Boost by clauses (BoostSRL `-mln -mlnClause`; [`crate::clauses`]): weighted
    /// clauses per step, [`MlnBoost`].
    MlnClauses(MlnClauseParams),
}

/// A model learned by [`fit_boosted`].
#[derive(Clone, Debug)]
pub enum BoostedModel {
    /// RFGB / Soft-RFGB, with or without advice ([`SoftRfgb::advice`] records it).
    Rdn(SoftRfgb),
    /// MLN-Boost.
    Mln(MlnBoost),
}

/// The advice weight `w` of a run (BoostSRL `-adviceWt`; Odom et al. 2015): `given`, or
/// BoostSRL's default [`BOOSTSRL_ADVICE_WEIGHT`] = 0.5 when `None`, checked to be a
/// number in [0, 1] (0: the data alone, 1: the advice alone).
///
/// # Errors
/// [`BoostError::InvalidParam`] (`advice_weight`) for a weight outside [0, 1] or NaN.
///
/// # Example
/// ```
/// assert_eq!(srl_boost::advice_weight(None).unwrap(), 0.5);
/// assert_eq!(srl_boost::advice_weight(Some(1.0)).unwrap(), 1.0);
/// assert!(srl_boost::advice_weight(Some(1.5)).is_err());
/// assert!(srl_boost::advice_weight(Some(f64::NAN)).is_err());
/// ```
pub fn advice_weight(given: Option<f64>) -> Result<f64, BoostError> {
    let w = given.unwrap_or(BOOSTSRL_ADVICE_WEIGHT);
    if (0.0..=1.0).contains(&w) {
        Ok(w)
    } else {
        Err(BoostError::InvalidParam {
            name: "advice_weight",
            message: format!("{w} is not a number in [0, 1]"),
        })
    }
}

/// Learns one target's model of the kind a run asks for, from `params` (the RFGB
/// parameters a front-end built: preset, background settings, its arguments):
///
/// * [`BoostKind::Mln`]: MLN-Boost with the same trees, sampling and step
///   ([`MlnBoostParams::from_rfgb`]`(params)`[`.fit`](MlnBoostParams::fit)); it takes no
///   advice. [`BoostKind::MlnClauses`]: the same with weighted clauses per step.
/// * [`BoostKind::Rdn`] with `advice = Some((advice, w))`: knowledge-based RFGB (Odom et
///   al. 2015, BoostSRL `-adviceFile FILE -adviceWt W`),
///   [`SoftRfgbParams::fit_with_advice`].
/// * [`BoostKind::Rdn`] without advice: RFGB / Soft-RFGB, [`SoftRfgbParams::fit`].
///
/// # Arguments
/// * `params` — the RFGB / Soft-RFGB parameters.
/// * `kind` — the model to learn.
/// * `advice` — the advice read by [`Advice::read`] and its weight `w` in [0, 1]
///   ([`advice_weight`]); pieces naming other targets are left out.
/// * `db`, `bk`, `examples` — one target's split (e.g. [`crate::FolderAtoms::split`]):
///   the facts, the background (modes, settings), the target's examples.
/// * `rng` — the generator of negative sampling; the same seed learns the same model.
///
/// # Errors
/// [`BoostError::InvalidParam`] (`advice`) for advice with [`BoostKind::Mln`]
/// (knowledge-based RFGB learns an RDN, as BoostSRL's `-adviceFile` does); otherwise
/// the errors of the fit called (a weight outside [0, 1], no modes, no examples, ...).
pub fn fit_boosted<R: rand::Rng + ?Sized>(
    params: &SoftRfgbParams,
    kind: BoostKind,
    advice: Option<(&Advice, f64)>,
    db: &Database,
    bk: &Background,
    examples: &Examples,
    rng: &mut R,
) -> Result<BoostedModel, BoostError> {
    match (kind, advice) {
        (BoostKind::Mln | BoostKind::MlnClauses(_), Some(_)) => Err(BoostError::InvalidParam {
            name: "advice",
            message: "knowledge-based RFGB learns an RDN, as BoostSRL's -adviceFile does; MLN-Boost takes no advice".into(),
        }),
        (BoostKind::Mln, None) => MlnBoostParams::from_rfgb(params)
            .fit(db, bk, examples, rng)
            .map(BoostedModel::Mln),
        (BoostKind::MlnClauses(c), None) => MlnBoostParams {
            clauses: Some(c),
            ..MlnBoostParams::from_rfgb(params)
        }
        .fit(db, bk, examples, rng)
        .map(BoostedModel::Mln),
        (BoostKind::Rdn, Some((a, w))) => params
            .fit_with_advice(db, bk, examples, a, w, rng)
            .map(BoostedModel::Rdn),
        (BoostKind::Rdn, None) => params.fit(db, bk, examples, rng).map(BoostedModel::Rdn),
    }
}
