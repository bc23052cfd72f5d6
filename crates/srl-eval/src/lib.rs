//! # srl-eval: metrics, protocols and result tables
//!
//! Knows no model: it works on labels, scores, costs and folds (see ARCHITECTURE.md).
//! Depends only on srl-graph's id types at most.

pub mod table;

pub use table::{ResultRow, ResultsTable, format_value};
