//! # srl-dist: loopy belief propagation beyond one machine, on timely dataflow
//!
//! The srl book's chapter on this crate: [srl-dist](../../srl-dist.html); the papers' reproductions:
//! [Reproductions](../../papers/index.html) (links work in the book built by `cargo xtask book`).
//!
//! Sits above `srl-infer` and `srl-graph`, beside the learners. It runs srl-infer's
//! synchronous (flooding) loopy BP — sum- and max-product, damping, the same log-space
//! normalisation `max_x m(x) = 0` — as a [timely dataflow](https://docs.rs/timely) whose
//! workers each own a part of the variables: one thread, several threads, or several
//! processes on several machines (timely's `-w/-n/-p/-h` arguments), with results equal
//! to single-machine [`srl_infer::LoopyBp`] to rounding.
//!
//! - [`Partition`] / [`Partitioner`]: edge-cut partitions (node-id ranges, hashing, or
//!   your own) of a whole model that every process reads;
//! - [`partition_uai`] / [`Strategy`]: streams a UAI model into one [`Shard`] file per part
//!   (range, hash, LDG or Fennel partitioners; the Gibbs colouring computed once), so that
//!   each worker reads only its own part ([`read_shards`], [`DistBp::run_shards`],
//!   [`DistGibbs::run_shards`]);
//! - [`DistBp`]: the algorithm; [`DistBp::run_threads`] and [`DistBp::run`] start timely,
//!   [`DistBp::run_worker`] runs inside an execution you started;
//! - [`DistGibbs`], [`DistIca`]: chromatic Gibbs and synchronous ICA;
//! - [`partition_graph`] / [`GraphShard`]: writes one graph shard per part of a graph
//!   (a part's node features, observed labels, neighbour lists and halo), so that sharded
//!   ICA ([`read_graph_shards`], [`DistIca::run_shards`]) holds no whole graph anywhere;
//! - [`barabasi_albert_mrf`]: the seeded power-law benchmark model.
//!
//! The message passing itself is srl-infer's: the workers call the public kernels of
//! [`srl_infer::kernel`] over their block of variables.
//!
//! Each iteration is one superstep: every worker computes all messages its variables
//! send, keeps those to its own variables, and sends the cut ones (the *halo*) to their
//! owners in packets of bounded size per destination worker, with its local max
//! residual; after the
//! exchange every worker knows the global max residual and decides to stop with the
//! others. Guide: `docs/srl-dist.md`.
//!
//! ```
//! use std::sync::Arc;
//! use srl_dist::DistBp;
//! use srl_infer::{LoopyBp, MrfParts, PairTable, PairwiseMrf};
//! let mrf = Arc::new(PairwiseMrf::new(MrfParts {
//!     num_states: vec![2; 4],
//!     unary: vec![0.2, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0],
//!     edges: vec![(0, 1), (1, 2), (2, 3), (3, 0)],
//!     edge_tables: vec![0; 4],
//!     tables: vec![PairTable::potts(2, 0.5, 0.0)],
//!     evidence: vec![],
//! })?);
//! let single = LoopyBp::default().run(&mrf);
//! let dist = DistBp::from_loopy(&LoopyBp::default()).run_threads(Arc::clone(&mrf), 2)?;
//! for v in 0..4 {
//!     let (a, b) = (single.node(v), dist.node(v).expect("one process holds every node"));
//!     assert!(a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bp;
pub mod error;
pub mod generate;
pub mod gibbs;
pub mod graph_shard;
mod halo;
pub mod ica;
pub mod partition;
pub mod shard;
pub mod stream;

pub use bp::{DistBp, DistMarginals, WorkerOutput, WorkerStats, check_ordinary, read_shards};
pub use error::DistError;
pub use generate::{barabasi_albert, barabasi_albert_mrf};
pub use gibbs::{DistGibbs, DistSamples, GibbsOutput};
pub use graph_shard::{GraphShard, partition_graph, read_graph_shards};
pub use ica::{DistIca, DistLabels, IcaOutput};
pub use partition::{Partition, Partitioner, splitmix64};
pub use shard::{Shard, shard_file};
pub use stream::{PartitionReport, Strategy, partition_uai};
