//! One worker's part of a *graph* for sharded ICA ([`GraphShard`]): its nodes' feature
//! vectors, observed labels and adjacency, and the halo (neighbours owned by other parts,
//! with their owner and observed label). Written by [`partition_graph`] (e.g. from a LINQS
//! or CSV graph), one file per part in the same folder layout, magic, version, checksum and
//! atomic writing as the model shards of [`crate::shard`]; a graph shard is marked by
//! flags bit 1 ([`FLAG_GRAPH`]), so [`crate::Shard::read`] refuses it and
//! [`GraphShard::read`] refuses a model shard, each with a [`DistError::Shard`].
//!
//! # File format (version 1, little-endian)
//! | bytes | content |
//! |---|---|
//! | 8 | magic `SRLSHRD\0` |
//! | 4 | version (1) |
//! | 4 × 3 | part, parts, flags (bit 1 set: graph shard; bit 2: sparse feature rows) |
//! | 8 × 2 | nodes and edges of the whole graph |
//! | 4 × 2 | label count `k` (≥ 1), feature count `F` of the whole graph |
//! | 8 | nodes of the whole graph without an observed label |
//! | 8 × 4 | local nodes `n`, adjacency entries `A`, halo `H`, feature entries `E` |
//! | 16 · n | per node (ascending global ids): id, observed label (`u32::MAX`: unknown), degree, stored features (`F` when dense) (`u32` each) |
//! | 4 · A | adjacency: neighbour ids (`u32`), grouped by node, in the graph's neighbour order |
//! | 12 · H | per halo node (ascending ids): id, owner part, observed label (`u32` each) |
//! | 4 · E | sparse rows only: feature column indices (`u32`, increasing within a row) |
//! | 8 · E | feature values (`f64`, finite), grouped by node |
//! | 8 | FNV-1a 64 hash of every byte before it |
//!
//! [`GraphShard::read`] checks the declared counts against the file length with checked
//! arithmetic before allocating anything, then every id, label, degree, feature count and
//! column, value and the checksum, and reports the first problem as [`DistError::Shard`]
//! with the file and byte offset.

use std::io::{BufWriter, Write};
use std::path::Path;

use srl_graph::{AttributeRow, Attributes, NodeId, RelationalGraph};

use crate::error::DistError;
use crate::shard::{
    FLAG_GRAPH, HashingWriter, NONE, Reader, SHARD_MAGIC, SHARD_VERSION, shard_file,
};
use crate::stream::{PartitionReport, Strategy, assign};

/// Flags bit of a graph shard whose feature rows are sparse.
pub const FLAG_SPARSE: u32 = 4;
const HEADER_BYTES: u64 = 88;

/// One part of a graph for sharded ICA: the nodes a worker owns with their features,
/// observed labels and neighbour lists, and the halo. See the module docs for the file.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphShard {
    /// This part (`0..parts`).
    pub part: u32,
    /// Number of parts.
    pub parts: u32,
    /// Nodes of the whole graph.
    pub num_nodes: u64,
    /// Edges of the whole graph.
    pub num_edges: u64,
    /// Labels `k` of the whole graph (its label count, at least 1).
    pub num_labels: u32,
    /// Feature columns `F` of the whole graph.
    pub num_features: u32,
    /// Nodes of the whole graph without an observed label (the denominator of ICA's
    /// fraction of changed labels).
    pub num_unknown: u64,
    /// Feature rows are sparse (column indices and values) rather than dense (`F` values).
    pub sparse: bool,
    /// Owned nodes, ascending global ids.
    pub nodes: Vec<u32>,
    /// Observed label of each owned node, [`NONE`] if unknown.
    pub labels: Vec<u32>,
    /// Neighbour range of each owned node in [`GraphShard::adj`] (length `nodes + 1`).
    pub adj_off: Vec<usize>,
    /// Global ids of the neighbours, in the graph's neighbour order
    /// ([`RelationalGraph::neighbors`]: both directions, ascending).
    pub adj: Vec<u32>,
    /// Feature range of each owned node in [`GraphShard::feat_val`] (length `nodes + 1`).
    pub feat_off: Vec<usize>,
    /// Column of each stored feature value (sparse rows only; empty when dense).
    pub feat_idx: Vec<u32>,
    /// Feature values, grouped by node.
    pub feat_val: Vec<f64>,
    /// Neighbours owned elsewhere: `(global id, owner part, observed label or NONE)`,
    /// ascending ids.
    pub halo: Vec<(u32, u32, u32)>,
}

impl GraphShard {
    /// The shard of `part` of `graph` when node `v` belongs to part `owner[v]` (`parts`
    /// parts). Features are stored as the graph stores them (dense or sparse), so a
    /// classifier sees the same rows as on the whole graph.
    ///
    /// # Errors
    /// [`DistError::Argument`] if `owner` does not have one entry `< parts` per node,
    /// `part >= parts`, `parts` does not fit in `u32`, or the graph has `2^32 − 1` nodes or
    /// more, or more than `2^32 − 1` features or labels.
    pub fn from_graph(
        graph: &RelationalGraph,
        owner: &[u32],
        part: usize,
        parts: usize,
    ) -> Result<Self, DistError> {
        let n = graph.num_nodes();
        if owner.len() != n
            || owner.iter().any(|&o| o as usize >= parts)
            || part >= parts
            || u32::try_from(parts).is_err()
        {
            return Err(DistError::Argument(format!(
                "part {part} of {parts}: the owner list must give each of the {n} nodes a part below {parts}"
            )));
        }
        let too_big = |what: &str, x: usize| {
            DistError::Argument(format!(
                "{x} {what}: a graph shard holds fewer than 2^32 - 1"
            ))
        };
        if n >= NONE as usize {
            return Err(too_big("nodes", n));
        }
        let num_features = u32::try_from(graph.num_features())
            .map_err(|_| too_big("features", graph.num_features()))?;
        let num_labels = u32::try_from(graph.num_labels().max(1))
            .ok()
            .filter(|&k| k < NONE)
            .ok_or_else(|| too_big("labels", graph.num_labels()))?;
        let sparse = matches!(graph.attributes(), Attributes::Sparse { .. });
        let observed = graph.labels();
        let mut s = Self::empty(part, parts);
        s.num_nodes = n as u64;
        s.num_edges = graph.num_edges() as u64;
        s.num_labels = num_labels;
        s.num_features = num_features;
        s.num_unknown = observed.iter().filter(|l| l.is_none()).count() as u64;
        s.sparse = sparse;
        for v in (0..n).filter(|&v| owner[v] as usize == part) {
            s.nodes.push(v as u32);
            s.labels.push(observed[v].unwrap_or(NONE));
            for &u in graph.neighbors(NodeId::new(v)) {
                let u = u.index();
                s.adj.push(u as u32);
                if owner[u] as usize != part {
                    s.halo
                        .push((u as u32, owner[u], observed[u].unwrap_or(NONE)));
                }
            }
            s.adj_off.push(s.adj.len());
            match graph.attributes_of(NodeId::new(v)) {
                AttributeRow::Dense(x) => s.feat_val.extend_from_slice(x),
                AttributeRow::Sparse { indices, values } => {
                    s.feat_idx.extend_from_slice(indices);
                    s.feat_val.extend_from_slice(values);
                }
            }
            s.feat_off.push(s.feat_val.len());
        }
        s.halo.sort_unstable();
        s.halo.dedup();
        Ok(s)
    }

    /// A shard without nodes for `part` of `parts` (of a graph without nodes).
    #[must_use]
    pub fn empty(part: usize, parts: usize) -> Self {
        Self {
            part: part as u32,
            parts: parts as u32,
            num_nodes: 0,
            num_edges: 0,
            num_labels: 1,
            num_features: 0,
            num_unknown: 0,
            sparse: false,
            nodes: Vec::new(),
            labels: Vec::new(),
            adj_off: vec![0],
            adj: Vec::new(),
            feat_off: vec![0],
            feat_idx: Vec::new(),
            feat_val: Vec::new(),
            halo: Vec::new(),
        }
    }

    /// The feature row of owned node `i` (local index, `0..nodes.len()`), dense or sparse
    /// as in the graph the shard was cut from.
    ///
    /// # Panics
    /// If `i >= nodes.len()`.
    #[must_use]
    pub fn attributes(&self, i: usize) -> AttributeRow<'_> {
        let (a, b) = (self.feat_off[i], self.feat_off[i + 1]);
        if self.sparse {
            AttributeRow::Sparse {
                indices: &self.feat_idx[a..b],
                values: &self.feat_val[a..b],
            }
        } else {
            AttributeRow::Dense(&self.feat_val[a..b])
        }
    }

    /// Writes the shard to `path` atomically (srl-io: never over an input, over an existing
    /// file only with `force`).
    ///
    /// # Errors
    /// [`DistError::Output`] / [`DistError::Io`] from srl-io and the file system.
    pub fn write(&self, path: &Path, force: bool) -> Result<(), DistError> {
        srl_io::write_atomic(path, force, |f| -> Result<(), DistError> {
            let io = |source| DistError::Io {
                file: path.to_path_buf(),
                source,
            };
            let mut w = HashingWriter::new(BufWriter::new(f));
            self.encode(&mut w).map_err(io)?;
            let h = w.hash;
            let mut inner = w.inner;
            inner.write_all(&h.to_le_bytes()).map_err(io)?;
            inner.flush().map_err(io)
        })
    }

    fn encode(&self, w: &mut impl Write) -> std::io::Result<()> {
        w.write_all(&SHARD_MAGIC)?;
        let flags = FLAG_GRAPH | if self.sparse { FLAG_SPARSE } else { 0 };
        for x in [SHARD_VERSION, self.part, self.parts, flags] {
            w.write_all(&x.to_le_bytes())?;
        }
        w.write_all(&self.num_nodes.to_le_bytes())?;
        w.write_all(&self.num_edges.to_le_bytes())?;
        w.write_all(&self.num_labels.to_le_bytes())?;
        w.write_all(&self.num_features.to_le_bytes())?;
        w.write_all(&self.num_unknown.to_le_bytes())?;
        for x in [
            self.nodes.len(),
            self.adj.len(),
            self.halo.len(),
            self.feat_val.len(),
        ] {
            w.write_all(&(x as u64).to_le_bytes())?;
        }
        for i in 0..self.nodes.len() {
            let deg = (self.adj_off[i + 1] - self.adj_off[i]) as u32;
            let nnz = (self.feat_off[i + 1] - self.feat_off[i]) as u32;
            for x in [self.nodes[i], self.labels[i], deg, nnz] {
                w.write_all(&x.to_le_bytes())?;
            }
        }
        for x in &self.adj {
            w.write_all(&x.to_le_bytes())?;
        }
        for &(id, owner, label) in &self.halo {
            for x in [id, owner, label] {
                w.write_all(&x.to_le_bytes())?;
            }
        }
        for x in &self.feat_idx {
            w.write_all(&x.to_le_bytes())?;
        }
        for x in &self.feat_val {
            w.write_all(&x.to_le_bytes())?;
        }
        Ok(())
    }

    /// Reads and validates a graph shard file (module docs). The result is consistent:
    /// ids in range and ascending, every neighbour owned or in the halo, labels below `k`,
    /// dense rows of exactly `F` values, sparse columns increasing and below `F`, every
    /// value finite.
    ///
    /// # Errors
    /// [`DistError::Io`] if the file cannot be read; [`DistError::Shard`] naming the file
    /// and byte offset of the first problem (bad magic or version, a model shard rather
    /// than a graph shard, a count that does not match the file length, an id, label or
    /// column out of range, a feature row of the wrong length, a non-finite value, a wrong
    /// checksum).
    pub fn read(path: &Path) -> Result<Self, DistError> {
        let (mut r, len) = Reader::open(path)?;
        parse(&mut r, len)
    }

    /// Owner part of global node `id` when it is owned or in the halo.
    #[must_use]
    pub fn owner_of(&self, id: u32) -> Option<u32> {
        if self.nodes.binary_search(&id).is_ok() {
            return Some(self.part);
        }
        let i = self.halo.binary_search_by_key(&id, |h| h.0).ok()?;
        Some(self.halo[i].1)
    }
}

#[allow(clippy::too_many_lines)]
fn parse<R: std::io::Read>(r: &mut Reader<R>, file_len: u64) -> Result<GraphShard, DistError> {
    let magic = r.bytes::<8>("the magic")?;
    if magic != SHARD_MAGIC {
        return Err(r.err(0, "not an srl-dist shard (wrong magic bytes)"));
    }
    let version = r.u32("the version")?;
    if version != SHARD_VERSION {
        return Err(r.err(
            8,
            format!("shard format version {version}, this srl-dist reads version {SHARD_VERSION}"),
        ));
    }
    let part = r.u32("the part")?;
    let parts = r.u32("the part count")?;
    if parts == 0 || part >= parts {
        return Err(r.err(12, format!("part {part} of {parts} parts")));
    }
    let flags = r.u32("the flags")?;
    if flags & FLAG_GRAPH == 0 {
        return Err(r.err(
            20,
            "a model shard (potentials, for BP or Gibbs), not a graph shard for ICA",
        ));
    }
    if flags & !(FLAG_GRAPH | FLAG_SPARSE) != 0 {
        return Err(r.err(20, format!("unknown flags {flags:#x}")));
    }
    let sparse = flags & FLAG_SPARSE != 0;
    let num_nodes = r.u64("the node count")?;
    if num_nodes >= u64::from(NONE) {
        return Err(r.err(24, format!("{num_nodes} nodes: 2^32 - 1 or more")));
    }
    let num_edges = r.u64("the edge count")?;
    let num_labels = r.u32("the label count")?;
    if num_labels == 0 || num_labels == NONE {
        return Err(r.err(40, format!("{num_labels} labels")));
    }
    let num_features = r.u32("the feature count")?;
    let num_unknown = r.u64("the unknown-node count")?;
    if num_unknown > num_nodes {
        return Err(r.err(48, format!("{num_unknown} unknown nodes of {num_nodes}")));
    }
    let mut counts = [0u64; 4];
    for c in &mut counts {
        *c = r.u64("a section count")?;
    }
    let [n, adj, halo, entries] = counts;
    let entry_bytes = if sparse { 12 } else { 8 };
    let expected = [(n, 16u64), (adj, 4), (halo, 12), (entries, entry_bytes)]
        .iter()
        .try_fold(HEADER_BYTES + 8, |acc, &(c, b)| {
            c.checked_mul(b).and_then(|x| acc.checked_add(x))
        });
    match expected {
        Some(e) if e == file_len => {}
        Some(e) => {
            return Err(r.err(
                56,
                format!("the section counts need {e} bytes, the file has {file_len}"),
            ));
        }
        None => return Err(r.err(56, "the section counts overflow")),
    }
    if n.checked_add(halo).is_none_or(|t| t > num_nodes) {
        return Err(r.err(
            56,
            format!("{n} local and {halo} halo nodes of {num_nodes}"),
        ));
    }
    let (n, adj, halo, entries) = (n as usize, adj as usize, halo as usize, entries as usize);
    let mut s = GraphShard {
        part,
        parts,
        num_nodes,
        num_edges,
        num_labels,
        num_features,
        num_unknown,
        sparse,
        nodes: Vec::with_capacity(n),
        labels: Vec::with_capacity(n),
        adj_off: Vec::with_capacity(n + 1),
        adj: Vec::with_capacity(adj),
        feat_off: Vec::with_capacity(n + 1),
        feat_idx: Vec::with_capacity(if sparse { entries } else { 0 }),
        feat_val: Vec::with_capacity(entries),
        halo: Vec::with_capacity(halo),
    };
    s.adj_off.push(0);
    s.feat_off.push(0);
    for _ in 0..n {
        let at = r.offset;
        let id = r.u32("a node id")?;
        let label = r.u32("a label")?;
        let deg = r.u32("a degree")?;
        let nnz = r.u32("a feature count")?;
        if u64::from(id) >= num_nodes || s.nodes.last().is_some_and(|&p| p >= id) {
            return Err(r.err(at, format!("node id {id} out of range or not ascending")));
        }
        if label != NONE && label >= num_labels {
            return Err(r.err(at + 4, format!("node {id}: label {label} of {num_labels}")));
        }
        let end = (s.adj_off[s.adj_off.len() - 1] as u64)
            .checked_add(u64::from(deg))
            .filter(|&e| e <= adj as u64)
            .ok_or_else(|| {
                r.err(
                    at + 8,
                    format!("node {id}: degree {deg} past the {adj} adjacency entries"),
                )
            })?;
        if (!sparse && nnz != num_features) || (sparse && nnz > num_features) {
            return Err(r.err(
                at + 12,
                format!(
                    "node {id}: {nnz} stored features, the graph has {num_features} ({})",
                    if sparse {
                        "sparse rows: at most that"
                    } else {
                        "dense rows: exactly that"
                    }
                ),
            ));
        }
        let fend = (s.feat_off[s.feat_off.len() - 1] as u64)
            .checked_add(u64::from(nnz))
            .filter(|&e| e <= entries as u64)
            .ok_or_else(|| {
                r.err(
                    at + 12,
                    format!("node {id}: {nnz} features past the {entries} feature entries"),
                )
            })?;
        s.nodes.push(id);
        s.labels.push(label);
        s.adj_off.push(end as usize);
        s.feat_off.push(fend as usize);
    }
    if s.adj_off[n] != adj || s.feat_off[n] != entries {
        return Err(r.err(
            r.offset,
            format!(
                "the nodes hold {} adjacency and {} feature entries, the header says {adj} and {entries}",
                s.adj_off[n], s.feat_off[n]
            ),
        ));
    }
    let adj_at = r.offset;
    for _ in 0..adj {
        s.adj.push(r.u32("a neighbour id")?);
    }
    for _ in 0..halo {
        let at = r.offset;
        let id = r.u32("a halo id")?;
        let owner = r.u32("a halo owner")?;
        let label = r.u32("a halo label")?;
        if u64::from(id) >= num_nodes
            || s.halo.last().is_some_and(|h| h.0 >= id)
            || s.nodes.binary_search(&id).is_ok()
        {
            return Err(r.err(
                at,
                format!("halo id {id} out of range, repeated or owned here"),
            ));
        }
        if owner >= parts || owner == part {
            return Err(r.err(at + 4, format!("halo node {id}: owner {owner} of {parts}")));
        }
        if label != NONE && label >= num_labels {
            return Err(r.err(
                at + 8,
                format!("halo node {id}: label {label} of {num_labels}"),
            ));
        }
        s.halo.push((id, owner, label));
    }
    if sparse {
        for i in 0..n {
            for j in s.feat_off[i]..s.feat_off[i + 1] {
                let at = r.offset;
                let c = r.u32("a feature column")?;
                let increasing = j == s.feat_off[i] || s.feat_idx[j - 1] < c;
                if c >= num_features || !increasing {
                    return Err(r.err(
                        at,
                        format!(
                            "node {}: feature column {c} of {num_features} out of range or not increasing",
                            s.nodes[i]
                        ),
                    ));
                }
                s.feat_idx.push(c);
            }
        }
    }
    for _ in 0..entries {
        let at = r.offset;
        let x = f64::from_le_bytes(r.bytes::<8>("a feature value")?);
        if !x.is_finite() {
            return Err(r.err(at, format!("feature value {x} is not finite")));
        }
        s.feat_val.push(x);
    }
    let hash = r.hash;
    let stored = r.u64("the checksum")?;
    if stored != hash {
        return Err(r.err(r.offset - 8, "checksum mismatch: the file is corrupt"));
    }
    for (j, &u) in s.adj.iter().enumerate() {
        if s.owner_of(u).is_none() {
            return Err(r.err(
                adj_at + 4 * j as u64,
                format!("neighbour {u} is neither owned nor in the halo"),
            ));
        }
    }
    Ok(s)
}

/// Reads the graph shards `parts` of the folder `dir` (files `part-NNNNN.shard`), e.g.
/// those of this process's workers.
///
/// # Errors
/// As [`GraphShard::read`].
pub fn read_graph_shards(
    dir: &Path,
    parts: std::ops::Range<usize>,
) -> Result<Vec<GraphShard>, DistError> {
    parts
        .map(|p| GraphShard::read(&shard_file(dir, p)))
        .collect()
}

/// Partitions `graph` into `parts` graph shards written to `out_dir/part-NNNNN.shard`
/// (module docs) with the partitioner `strategy` over the graph's neighbour lists (as
/// [`crate::partition_uai`]). `inputs` are the files the graph was read from: no shard may
/// be one of them. The whole graph is in memory (srl-graph's readers load it whole); each
/// shard file holds only its part. `num_colours` of the report is 0 (ICA needs no colouring).
///
/// # Errors
/// [`DistError::Argument`] for `parts = 0` or more than 2^20 parts, or a graph too large
/// for the format (2^32 − 1 nodes or more); [`DistError::Output`] if a shard exists and
/// `force` is false or would overwrite an input; [`DistError::Io`].
pub fn partition_graph(
    graph: &RelationalGraph,
    parts: usize,
    strategy: Strategy,
    out_dir: &Path,
    force: bool,
    inputs: &[&Path],
) -> Result<PartitionReport, DistError> {
    let n = graph.num_nodes();
    if n >= NONE as usize {
        return Err(DistError::Argument(format!(
            "{n} nodes: a graph shard holds fewer than 2^32 - 1"
        )));
    }
    let files = crate::shard::prepare_outputs(parts, out_dir, inputs, force)?;
    let (offsets, adj, _) = graph.csr();
    let in_src: Vec<u32> = adj.iter().map(|u| u.index() as u32).collect();
    let owner = assign(strategy, offsets, &in_src, parts);
    for (p, file) in files.iter().enumerate() {
        GraphShard::from_graph(graph, &owner, p, parts)?.write(file, force)?;
    }
    let mut part_nodes = vec![0u64; parts];
    owner.iter().for_each(|&o| part_nodes[o as usize] += 1);
    let cut = graph
        .edge_list()
        .iter()
        .filter(|(a, b)| owner[a.index()] != owner[b.index()])
        .count() as u64;
    Ok(PartitionReport {
        strategy,
        num_nodes: n as u64,
        num_edges: graph.num_edges() as u64,
        cut_edges: cut,
        part_nodes,
        num_colours: 0,
        files,
    })
}
