//! # srl-graph: the data layer of srl
//!
//! The srl book's chapter on this crate: [srl-graph](../../srl-graph.html); the papers' reproductions:
//! [Reproductions](../../papers/index.html) (links work in the book built by `cargo xtask book`).
//!
//! The lowest crate of the workspace: every other srl crate may depend on it; it depends
//! on none of them (`srl-infer`, `srl-eval` → `srl-graph`). It holds:
//! - [`RelationalGraph`]: nodes with dense or sparse attribute rows, optional labels from a
//!   named [`LabelSet`], undirected or directed edges, neighbour lists in CSR form, indexed by
//!   our own [`NodeId`] / [`EdgeId`];
//! - [`cost`]: misclassification cost matrices of node and edge cliques ([`CostMatrix`],
//!   [`EdgeCostMatrix`], [`CostModel`] shared or per clique, the Intel-lab matrices) and the
//!   structured cost of a labelling (Sen & Getoor 2006);
//! - [`load`]: loaders for LINQS `.content`/`.cites` (Cora, Citeseer), a CSV node/edge
//!   pair, and the Intel-lab sensor readings as snapshot graphs, with errors naming file
//!   and line;
//! - [`generate`]: the Sen & Getoor (2006) synthetic generator ([`SenGetoorParams`]) and a
//!   homophily / link-density generator ([`HomophilyParams`]) that scales to 10^6 nodes;
//! - [`split`]: k-fold random and stratified folds ([`KFold`]), snowball sampling
//!   ([`snowball_splits`], class-stratified [`stratified_snowball_splits`]), train/test
//!   masks ([`Split`]).
//!
//! Library code never prints and never seeds its own random generator: randomised
//! functions take `&mut R` with `R: rand::Rng + ?Sized`.
//!
//! ```
//! use rand::SeedableRng as _;
//! use srl_graph::{Attributes, Directedness, KFold, LabelSet, NodeId, RelationalGraph, SenGetoorParams};
//! let g = RelationalGraph::new(
//!     Vec::new(),
//!     Attributes::none(3),
//!     vec![Some(0), Some(1), None],
//!     LabelSet::numbered(2),
//!     vec![(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))],
//!     Directedness::Undirected,
//! )?;
//! assert_eq!(g.neighbors(NodeId(1)), &[NodeId(0), NodeId(2)]);
//!
//! // A synthetic graph with its cost matrices, and 3 folds over its nodes.
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
//! let s = SenGetoorParams::default().generate(&mut rng)?;
//! let folds = KFold::random(s.graph.num_nodes(), 3, &mut rng)?;
//! let truth: Vec<u32> = s.graph.labels().iter().map(|l| l.unwrap_or(0)).collect();
//! let cost = s.costs.misclassification_cost(&s.graph, &truth, &truth, Some(folds.split(0).test_mask()))?;
//! assert_eq!(cost.total(), 0.0);
//! # Ok::<(), srl_graph::GraphError>(())
//! ```

pub mod cost;
pub mod error;
pub mod generate;
pub mod graph;
pub mod load;
pub mod split;

pub use cost::{
    CostBreakdown, CostMatrix, CostModel, EdgeCostMatrix, LevelScaling, transpose_pairs,
};
pub use error::{GraphError, ParseErrorKind};
pub use generate::{
    DegreeModel, HomophilyParams, SenGetoorParams, SenGetoorReport, SyntheticGraph, barabasi_albert,
};
pub use graph::{
    AttributeRow, Attributes, Directedness, EdgeCleanup, EdgeId, LabelSet, NodeId, RelationalGraph,
};
pub use load::csv::{CsvGraph, CsvOptions, load_csv};
pub use load::intel::{
    EqualFrequencyBins, IntelDataset, IntelParams, IntelReading, IntelReport, IntelSnapshot,
    MoteLocation, load_intel,
};
pub use load::linqs::{LinqsOptions, LinqsReport, load_linqs};
pub use split::{HoldOut, KFold, Split, snowball_splits, stratified_snowball_splits};
