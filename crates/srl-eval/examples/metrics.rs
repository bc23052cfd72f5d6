//! Scoring two classifiers the way `cargo xtask reproduce` does: accuracy per fold, mean
//! ± standard error, the paired t-test over the folds (statrs' Student t), and AUC-ROC /
//! AUC-PR / F5 of one fold's scores. The fold accuracies and scores are fixed numbers
//! (no model needed: srl-eval knows none).
//!
//! `cargo run -p srl-eval --example metrics`
#![allow(clippy::print_stdout)]

use srl_eval::metrics::{Confusion, RocCurve, Summary, accuracy, paired_t_test};

fn main() -> Result<(), srl_eval::EvalError> {
    // One fold's predictions against the truth.
    let acc = accuracy(&[0u32, 1, 1, 2, 0, 2], &[0, 1, 2, 2, 0, 1])?;
    println!("fold accuracy {acc:.3}");
    // Two methods on the same ten folds.
    let a = [0.84, 0.86, 0.83, 0.88, 0.85, 0.87, 0.82, 0.86, 0.85, 0.84];
    let b = [0.80, 0.83, 0.81, 0.84, 0.82, 0.85, 0.80, 0.83, 0.81, 0.82];
    for (name, x) in [("A", &a), ("B", &b)] {
        let s = Summary::of(x)?;
        println!(
            "{name}: {:.4} ± {:.4}",
            s.mean,
            s.std_error.unwrap_or(f64::NAN)
        );
    }
    let t = paired_t_test(&a, &b)?;
    println!(
        "paired t = {:.2}, df = {}, p = {:.2e}",
        t.t, t.df, t.p_value
    );
    // Ranking metrics of one fold's scores.
    let scores = [0.95, 0.8, 0.7, 0.6, 0.55, 0.4, 0.3, 0.1];
    let truth = [true, true, false, true, false, false, true, false];
    let curve = RocCurve::new(&scores, &truth)?;
    let f5 = Confusion::at_threshold(&scores, &truth, 0.5)?.f_beta(5.0)?;
    println!(
        "AUC-ROC {:.3}, AUC-PR {:.3}, F5 {f5:.3}",
        curve.auc()?,
        curve.auc_pr()?
    );
    Ok(())
}
