//! The srl book's Rust code blocks as doc-tests.
//!
//! Each chapter of `docs/SUMMARY.md` whose blocks compile is included here as the doc
//! comment of an empty module, so `cargo test --workspace` (the doc-tests of
//! `srl-benches`, which includes this file under `cfg(doctest)`) compiles and runs every
//! ```` ```rust ```` block, and fails on an untagged block that is not Rust.
//! `cargo xtask book --check` fails when a chapter is neither included nor listed in
//! `NOT_YET_COMPILED` below with the reason.
//!
//! NOT_YET_COMPILED (chapter: reason): none.

#[doc = include_str!("../docs/README.md")]
pub mod introduction {}

#[doc = include_str!("../docs/getting-started.md")]
pub mod getting_started {}

#[doc = include_str!("../docs/cookbook.md")]
pub mod cookbook {}

#[doc = include_str!("../docs/cookbook/boost-boostsrl-folder.md")]
pub mod cookbook_boost_boostsrl_folder {}

#[doc = include_str!("../docs/cookbook/classify-graph-csv.md")]
pub mod cookbook_classify_graph_csv {}

#[doc = include_str!("../docs/cookbook/bp-uai-file.md")]
pub mod cookbook_bp_uai_file {}

#[doc = include_str!("../docs/cookbook/trim-bif-classifier.md")]
pub mod cookbook_trim_bif_classifier {}

#[doc = include_str!("../docs/cookbook/distribute-bp.md")]
pub mod cookbook_distribute_bp {}

#[doc = include_str!("../docs/cookbook/python.md")]
pub mod cookbook_python {}

#[doc = include_str!("../docs/cookbook/reproduce-paper.md")]
pub mod cookbook_reproduce_paper {}

#[doc = include_str!("../docs/srl-cli.md")]
pub mod srl_cli {}

#[doc = include_str!("../docs/srl-dist.md")]
pub mod srl_dist {}

#[doc = include_str!("../docs/python.md")]
pub mod python {}

#[doc = include_str!("../docs/papers/README.md")]
pub mod papers {}

#[doc = include_str!("../docs/papers/sen-getoor-2006.md")]
pub mod sen_getoor_2006 {}

#[doc = include_str!("../docs/papers/collective-classification.md")]
pub mod collective_classification {}

#[doc = include_str!("../docs/papers/soft-rfgb.md")]
pub mod soft_rfgb {}

#[doc = include_str!("../docs/papers/uknn.md")]
pub mod uknn {}

#[doc = include_str!("../docs/papers/trimming.md")]
pub mod trimming {}

#[doc = include_str!("../docs/papers/datasets.md")]
pub mod datasets {}

#[doc = include_str!("../docs/performance.md")]
pub mod performance {}

#[doc = include_str!("../docs/srl-graph.md")]
pub mod srl_graph {}

#[doc = include_str!("../docs/srl-infer.md")]
pub mod srl_infer {}

#[doc = include_str!("../docs/srl-learn.md")]
pub mod srl_learn {}

#[doc = include_str!("../docs/srl-boost.md")]
pub mod srl_boost {}

#[doc = include_str!("../docs/srl-bayes.md")]
pub mod srl_bayes {}

#[doc = include_str!("../docs/srl-eval.md")]
pub mod srl_eval {}

#[doc = include_str!("../docs/collective-classification.md")]
pub mod collective_classification_chapter {}
