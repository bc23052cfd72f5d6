//! # srl-graph: the data layer of srl
//!
//! The lowest crate of the workspace (every other srl crate may depend on it; it depends
//! on none of them). It holds:
//! - [`RelationalGraph`]: nodes with dense or sparse attribute rows, optional labels from a
//!   named [`LabelSet`], undirected or directed edges, neighbour lists in CSR form, indexed by
//!   our own [`NodeId`] / [`EdgeId`];
//!
//! ```
//! use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};
//! let g = RelationalGraph::new(
//!     Vec::new(),
//!     Attributes::none(3),
//!     vec![Some(0), Some(1), None],
//!     LabelSet::numbered(2),
//!     vec![(NodeId(0), NodeId(1)), (NodeId(1), NodeId(2))],
//!     Directedness::Undirected,
//! )?;
//! assert_eq!(g.neighbors(NodeId(1)), &[NodeId(0), NodeId(2)]);
//! # Ok::<(), srl_graph::GraphError>(())
//! ```

pub mod error;
pub mod graph;

pub use error::GraphError;
pub use graph::{
    AttributeRow, Attributes, Directedness, EdgeCleanup, EdgeId, LabelSet, NodeId, RelationalGraph,
};
