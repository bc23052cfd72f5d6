//! The registry of experiments `cargo xtask reproduce` knows, one module per paper artifact.

use crate::context::{Context, Report};

mod collective;
mod collective_synthetic;
mod datasets;
mod sen_getoor;
mod soft_rfgb;
mod trimming;
mod uknn;

/// One reproducible experiment.
pub struct Experiment {
    /// The name given to `cargo xtask reproduce NAME`.
    pub name: &'static str,
    /// One line: paper, figure or table.
    pub about: &'static str,
    /// Runs it. A missing dataset is not an error: it goes into the table's `skipped`
    /// list with the path that was looked for.
    pub run: fn(&Context) -> anyhow::Result<Report>,
}

/// Every experiment, in the order `all` runs them.
pub fn all() -> Vec<Experiment> {
    vec![
        // one line per experiment module
        datasets::experiment(),
        sen_getoor::synthetic(),
        sen_getoor::intel(),
        collective::experiment(),
        collective_synthetic::experiment(),
        soft_rfgb::experiment(),
        trimming::experiment(),
        uknn::experiment(),
    ]
}

/// Experiments run only when named (too long for `all`), listed after the others.
pub fn by_name_only() -> Vec<Experiment> {
    vec![trimming::large()]
}
