//! Every metric the reproduced papers report (see `docs/srl-eval.md` for the formulas).
//!
//! | metric | item | source |
//! |---|---|---|
//! | accuracy | [`accuracy`], [`Confusion::accuracy`] | Sen et al. 2008 |
//! | empirical agreement (ECA) | [`agreement`] | Choi et al. 2018, Def. 2 |
//! | confusion counts at a threshold | [`Confusion::at_threshold`] | |
//! | precision, recall | [`Confusion::precision`], [`Confusion::recall`] | |
//! | false-negative rate | [`Confusion::false_negative_rate`] | Yang et al. 2014 |
//! | F-beta (F5) | [`Confusion::f_beta`] | Yang et al. 2014, Eq. 4 |
//! | AUC-ROC | [`auc_roc`], [`RocCurve::auc`] | Mann-Whitney, ties ½ |
//! | weighted AUC-ROC | [`WeightedAuc`] | Yang et al. 2014, Eq. 5; Weng & Poon 2008 |
//! | AUC-PR | [`auc_pr`], [`RocCurve::auc_pr`] | Davis & Goadrich 2006 |
//! | misclassification cost | [`structured_cost`], [`structured_cost_with`] | Sen & Getoor 2006, §3 |
//! | mean, standard error | [`mean`], [`std_error`], [`Summary`] | |
//! | matched (M) average | [`MatchedAverage`] | Sen et al. 2008 |
//! | RMSE, MAE, R² | [`rmse`], [`mae`], [`r2_score`] | RDN-Boost regression (BoostSRL `-reg`) |
//! | Brier score | [`brier_score`] | Brier 1950 |
//! | reliability curve, expected calibration error | [`reliability_curve`] | Guo et al. 2017, §2 |
//! | Welch / paired t-test | [`welch_t_test`], [`paired_t_test`] | Welch 1947; Student-t from statrs |
//!
//! Binary metrics take `truth: &[bool]` (`true` = positive class) and `scores: &[f64]`
//! (higher = more positive). Every function validates its input and returns
//! [`EvalError`] instead of panicking.

mod calibration;
mod classification;
mod cost;
mod ranking;
mod regression;
mod significance;
mod stats;

pub use calibration::{ReliabilityBin, ReliabilityCurve, brier_score, reliability_curve};
pub use classification::{Confusion, accuracy, agreement, conditional_log_likelihood};
pub use cost::{CostBreakdown, CostTable, structured_cost, structured_cost_with};
pub use ranking::{RocCurve, RocPoint, WeightedAuc, auc_pr, auc_roc};
pub use regression::{mae, r2_score, rmse};
pub use significance::{TTest, paired_t_test, welch_t_test};
pub use stats::{MatchedAverage, Summary, mean, std_error};

use crate::error::EvalError;

/// Checks scores against truth: non-empty, same length, no NaN.
fn check_scores(scores: &[f64], truth: &[bool]) -> Result<(), EvalError> {
    classification::check_parallel(scores, "scores", truth, "truth")?;
    if let Some(index) = scores.iter().position(|s| s.is_nan()) {
        return Err(EvalError::NanValue {
            what: "scores",
            index,
        });
    }
    Ok(())
}
