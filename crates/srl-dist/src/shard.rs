//! One worker's part of a model (a *shard*): its variables, their factors and the halo, in
//! memory ([`Shard`]) and as a compact versioned binary file ([`Shard::write`],
//! [`Shard::read`]).
//!
//! # File format (version 1, little-endian)
//! | bytes | content |
//! |---|---|
//! | 8 | magic `SRLSHRD\0` |
//! | 4 | version (1) |
//! | 4 × 3 | part, parts, flags (bit 0: every kernel of the whole model exp-safe; bit 1 never: it marks a graph shard, [`crate::graph_shard`]) |
//! | 8 × 2 | variables and edges of the whole model |
//! | 4 × 2 | common state count of the whole model (0: mixed), colours of the whole model |
//! | 8 × 6 | local variables `n`, slots `S`, halo `H`, tables `T`, table values, unary values |
//! | 20 · n | per variable: global id, states, evidence (`u32::MAX`: none), colour (`u32::MAX`: observed), degree (`u32` each) |
//! | 8 · Σk | unary log-potentials (`f64`) |
//! | 16 · S | per slot (grouped by variable, in edge order): neighbour id, kernel (`2 t + o`) `u32`, edge id `u64` |
//! | 12 · H | per halo variable (ascending ids): id, owner part, states (`u32` each) |
//! | 8 · T | per table: rows, cols (`u32`) |
//! | 8 · Σ rows·cols | table log-potentials (`f64`, row-major) |
//! | 8 | FNV-1a 64 hash of every byte before it |
//!
//! Slot `s` of variable `v` is the message into `v` from its neighbour along edge `e`;
//! its kernel `2 t + o` is table `t` as stored (`o = 0`: rows are the neighbour's states,
//! so the neighbour is the edge's first endpoint) or transposed (`o = 1`).
//!
//! [`Shard::read`] checks the declared counts against the file's length with checked
//! arithmetic before allocating anything, then every id, count, shape and value, and
//! reports the first problem as [`DistError::Shard`] with the file and byte offset.

use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use srl_infer::{PairTable, PairwiseMrf};

use crate::bp::MAX_ABS_LOG_POTENTIAL;
use crate::error::DistError;
use crate::partition::Partitioner;

/// First bytes of a shard file.
pub const SHARD_MAGIC: [u8; 8] = *b"SRLSHRD\0";
/// The shard format version this crate writes and reads.
pub const SHARD_VERSION: u32 = 1;
/// "None" in the evidence and colour columns.
pub const NONE: u32 = u32::MAX;
/// Flags bit of a *graph* shard (features, labels and adjacency for ICA, see
/// [`crate::graph_shard`]); a model shard (this module) never has it.
pub const FLAG_GRAPH: u32 = 2;
const HEADER_BYTES: u64 = 96;

/// One part of a model: the variables a worker owns, the factors touching them, and the
/// halo (neighbours owned by other parts). See the module docs for the file layout.
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    /// This part (`0..parts`).
    pub part: u32,
    /// Number of parts.
    pub parts: u32,
    /// Variables of the whole model.
    pub num_nodes: u64,
    /// Pairwise factors (edges) of the whole model.
    pub num_edges: u64,
    /// Common state count of every variable of the whole model, 0 if mixed.
    pub uniform_k: u32,
    /// Every pairwise kernel of the whole model spans less than 600 nats (srl-infer's
    /// `all_safe`: with `uniform_k = 2` it selects the linear two-state kernel).
    pub all_safe: bool,
    /// Colours of the whole model's greedy colouring (srl-infer's, in variable order).
    pub num_colours: u32,
    /// Owned variables, ascending global ids.
    pub nodes: Vec<u32>,
    /// States of each owned variable.
    pub num_states: Vec<u32>,
    /// Observed state of each owned variable, [`NONE`] if free.
    pub evidence: Vec<u32>,
    /// Gibbs colour of each owned variable, [`NONE`] if observed.
    pub colour: Vec<u32>,
    /// Unary log-potentials (without evidence), concatenated (`num_states[i]` each).
    pub unary: Vec<f64>,
    /// Slot range of each owned variable (length `nodes + 1`).
    pub in_off: Vec<usize>,
    /// Per slot: global id of the neighbour the message comes from.
    pub slot_src: Vec<u32>,
    /// Per slot: kernel of the message into the variable (`2 t + o`, see module docs).
    pub slot_kernel: Vec<u32>,
    /// Per slot: global edge id.
    pub slot_edge: Vec<u64>,
    /// Neighbours owned elsewhere: `(global id, owner part, states)`, ascending ids.
    pub halo: Vec<(u32, u32, u32)>,
    /// The pairwise tables the slots use (log-potentials).
    pub tables: Vec<PairTable>,
}

impl Shard {
    /// The shard of `part` when `partitioner` splits `mrf` into `parts`, with the Gibbs
    /// colours `colour` of the whole model (`srl_infer::kernel::greedy_colours`) and
    /// `num_colours`. Tables are shared as in `mrf` (only those the part uses).
    ///
    /// # Panics
    /// If `colour.len() != mrf.num_nodes()` or the partitioner returns an owner `>= parts`.
    #[must_use]
    pub fn from_mrf(
        mrf: &PairwiseMrf,
        partitioner: &dyn Partitioner,
        part: usize,
        parts: usize,
        colour: &[u32],
        num_colours: u32,
    ) -> Self {
        let n = mrf.num_nodes();
        let owner = |v: usize| partitioner.owner(v, n, parts);
        let nodes: Vec<u32> = (0..n)
            .filter(|&v| owner(v) == part)
            .map(|v| v as u32)
            .collect();
        let kernels_safe = mrf
            .tables()
            .iter()
            .all(|t| srl_infer::kernel::kernel_range(&t.log_values) < 600.0);
        let uniform_k = match (0..n).map(|v| mrf.num_states(v)).next() {
            Some(k) if (0..n).all(|v| mrf.num_states(v) == k) => k as u32,
            _ => 0,
        };
        let mut s = Self {
            part: part as u32,
            parts: parts as u32,
            num_nodes: n as u64,
            num_edges: mrf.num_edges() as u64,
            uniform_k,
            all_safe: kernels_safe,
            num_colours,
            num_states: Vec::with_capacity(nodes.len()),
            evidence: Vec::with_capacity(nodes.len()),
            colour: Vec::with_capacity(nodes.len()),
            unary: Vec::new(),
            in_off: vec![0],
            slot_src: Vec::new(),
            slot_kernel: Vec::new(),
            slot_edge: Vec::new(),
            halo: Vec::new(),
            tables: Vec::new(),
            nodes,
        };
        let mut table_map = vec![u32::MAX; mrf.tables().len()];
        for &v in &s.nodes {
            let v = v as usize;
            s.num_states.push(mrf.num_states(v) as u32);
            s.evidence.push(mrf.evidence(v).map_or(NONE, |x| x as u32));
            s.colour.push(colour[v]);
            s.unary.extend_from_slice(mrf.unary(v));
            for (src, e) in mrf.neighbors(v) {
                let t = mrf.edge_tables()[e] as usize;
                if table_map[t] == u32::MAX {
                    table_map[t] = s.tables.len() as u32;
                    s.tables.push(mrf.tables()[t].clone());
                }
                // Into v from the edge's first endpoint: the table as stored.
                let o = u32::from(mrf.edge(e).1 != v);
                s.slot_src.push(src as u32);
                s.slot_kernel.push(2 * table_map[t] + o);
                s.slot_edge.push(e as u64);
                let w = owner(src);
                if w != part {
                    s.halo
                        .push((src as u32, w as u32, mrf.num_states(src) as u32));
                }
            }
            s.in_off.push(s.slot_src.len());
        }
        s.halo.sort_unstable();
        s.halo.dedup();
        s
    }

    /// A shard without variables for `part` of `parts` (of a model with no variables).
    #[must_use]
    pub fn empty(part: usize, parts: usize) -> Self {
        Self {
            part: part as u32,
            parts: parts as u32,
            num_nodes: 0,
            num_edges: 0,
            uniform_k: 0,
            all_safe: true,
            num_colours: 0,
            nodes: Vec::new(),
            num_states: Vec::new(),
            evidence: Vec::new(),
            colour: Vec::new(),
            unary: Vec::new(),
            in_off: vec![0],
            slot_src: Vec::new(),
            slot_kernel: Vec::new(),
            slot_edge: Vec::new(),
            halo: Vec::new(),
            tables: Vec::new(),
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
        let table_values: usize = self.tables.iter().map(|t| t.log_values.len()).sum();
        w.write_all(&SHARD_MAGIC)?;
        for x in [
            SHARD_VERSION,
            self.part,
            self.parts,
            u32::from(self.all_safe),
        ] {
            w.write_all(&x.to_le_bytes())?;
        }
        w.write_all(&self.num_nodes.to_le_bytes())?;
        w.write_all(&self.num_edges.to_le_bytes())?;
        w.write_all(&self.uniform_k.to_le_bytes())?;
        w.write_all(&self.num_colours.to_le_bytes())?;
        for x in [
            self.nodes.len(),
            self.slot_src.len(),
            self.halo.len(),
            self.tables.len(),
            table_values,
            self.unary.len(),
        ] {
            w.write_all(&(x as u64).to_le_bytes())?;
        }
        for i in 0..self.nodes.len() {
            let deg = (self.in_off[i + 1] - self.in_off[i]) as u32;
            for x in [
                self.nodes[i],
                self.num_states[i],
                self.evidence[i],
                self.colour[i],
                deg,
            ] {
                w.write_all(&x.to_le_bytes())?;
            }
        }
        for x in &self.unary {
            w.write_all(&x.to_le_bytes())?;
        }
        for s in 0..self.slot_src.len() {
            w.write_all(&self.slot_src[s].to_le_bytes())?;
            w.write_all(&self.slot_kernel[s].to_le_bytes())?;
            w.write_all(&self.slot_edge[s].to_le_bytes())?;
        }
        for &(id, owner, k) in &self.halo {
            for x in [id, owner, k] {
                w.write_all(&x.to_le_bytes())?;
            }
        }
        for t in &self.tables {
            w.write_all(&(t.rows as u32).to_le_bytes())?;
            w.write_all(&(t.cols as u32).to_le_bytes())?;
        }
        for t in &self.tables {
            for x in &t.log_values {
                w.write_all(&x.to_le_bytes())?;
            }
        }
        Ok(())
    }

    /// Reads and validates a shard file (module docs). The result is consistent: ids in
    /// range, slots pointing at owned or halo variables, kernels matching the state counts,
    /// every value finite within srl-dist's ordinary range.
    ///
    /// # Errors
    /// [`DistError::Io`] if the file cannot be read; [`DistError::Shard`] naming the file
    /// and byte offset of the first problem (bad magic or version, a count that does not
    /// match the file length, an id or state out of range, a repeated id, a table shape
    /// that does not match, a non-finite or extreme value, a wrong checksum).
    pub fn read(path: &Path) -> Result<Self, DistError> {
        let (mut r, len) = Reader::open(path)?;
        r.parse(len)
    }

    /// Number of local slots (directed messages into owned variables).
    #[must_use]
    pub fn num_slots(&self) -> usize {
        self.slot_src.len()
    }

    /// States of global variable `v` when it is owned or in the halo.
    #[must_use]
    pub fn states_of(&self, v: u32) -> Option<u32> {
        if let Ok(i) = self.nodes.binary_search(&v) {
            return Some(self.num_states[i]);
        }
        let i = self.halo.binary_search_by_key(&v, |h| h.0).ok()?;
        Some(self.halo[i].2)
    }

    /// Owner part of global variable `v` when it is owned or in the halo.
    #[must_use]
    pub fn owner_of(&self, v: u32) -> Option<u32> {
        if self.nodes.binary_search(&v).is_ok() {
            return Some(self.part);
        }
        let i = self.halo.binary_search_by_key(&v, |h| h.0).ok()?;
        Some(self.halo[i].1)
    }
}

/// The file name of part `p` in a shard folder: `part-00003.shard`.
#[must_use]
pub fn shard_file(dir: &Path, part: usize) -> PathBuf {
    dir.join(format!("part-{part:05}.shard"))
}

/// The shard files `out_dir/part-NNNNN.shard` of a partition into `parts` parts, after
/// checking the part count (1 to 2^20), creating `out_dir` and checking the files against
/// `inputs` and `force` ([`srl_io::check_outputs`]); what both partitioners do first.
///
/// # Errors
/// [`DistError::Argument`] for `parts = 0` or more than 2^20; [`DistError::Io`] if the
/// folder cannot be created; [`DistError::Output`] if a shard exists and `force` is false
/// or would overwrite an input.
pub(crate) fn prepare_outputs(
    parts: usize,
    out_dir: &Path,
    inputs: &[&Path],
    force: bool,
) -> Result<Vec<PathBuf>, DistError> {
    if parts == 0 || parts > 1 << 20 {
        return Err(DistError::Argument(format!(
            "--parts {parts}: need 1 to 2^20"
        )));
    }
    if !out_dir.exists() {
        std::fs::create_dir_all(out_dir).map_err(|source| DistError::Io {
            file: out_dir.to_path_buf(),
            source,
        })?;
    }
    let files: Vec<PathBuf> = (0..parts).map(|p| shard_file(out_dir, p)).collect();
    let outs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    srl_io::check_outputs(inputs, &outs, force)?;
    Ok(files)
}

pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

pub(crate) fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// A writer that hashes what passes through it (FNV-1a 64).
pub(crate) struct HashingWriter<W> {
    pub(crate) inner: W,
    pub(crate) hash: u64,
}

impl<W: Write> HashingWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner,
            hash: FNV_OFFSET,
        }
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hash = fnv(self.hash, &buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A checksumming reader of little-endian fields that reports byte offsets.
pub(crate) struct Reader<R> {
    pub(crate) file: PathBuf,
    pub(crate) inner: R,
    pub(crate) offset: u64,
    pub(crate) hash: u64,
}

impl Reader<std::io::BufReader<std::fs::File>> {
    /// Opens a shard file of either kind for reading from offset 0, with its length.
    ///
    /// # Errors
    /// [`DistError::Io`] naming the file if it cannot be opened or its length read.
    pub(crate) fn open(path: &Path) -> Result<(Self, u64), DistError> {
        let io = |source| DistError::Io {
            file: path.to_path_buf(),
            source,
        };
        let f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        Ok((
            Reader {
                file: path.to_path_buf(),
                inner: std::io::BufReader::new(f),
                offset: 0,
                hash: FNV_OFFSET,
            },
            len,
        ))
    }
}

impl<R: Read> Reader<R> {
    pub(crate) fn err(&self, offset: u64, message: impl Into<String>) -> DistError {
        DistError::Shard {
            file: self.file.clone(),
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], DistError> {
        let mut b = [0u8; N];
        self.inner.read_exact(&mut b).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                self.err(self.offset, format!("file ends inside {what}"))
            } else {
                DistError::Io {
                    file: self.file.clone(),
                    source: e,
                }
            }
        })?;
        self.offset += N as u64;
        self.hash = fnv(self.hash, &b);
        Ok(b)
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, DistError> {
        self.bytes::<4>(what).map(u32::from_le_bytes)
    }

    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, DistError> {
        self.bytes::<8>(what).map(u64::from_le_bytes)
    }

    /// An ordinary log-potential: finite, `|x| <= MAX_ABS_LOG_POTENTIAL`.
    fn value(&mut self, what: &str) -> Result<f64, DistError> {
        let at = self.offset;
        let x = f64::from_le_bytes(self.bytes::<8>(what)?);
        if !x.is_finite() || x.abs() > MAX_ABS_LOG_POTENTIAL {
            return Err(self.err(
                at,
                format!("{what} {x} is outside the ordinary range |x| <= 1e4"),
            ));
        }
        Ok(x)
    }

    #[allow(clippy::too_many_lines)]
    fn parse(&mut self, file_len: u64) -> Result<Shard, DistError> {
        let magic = self.bytes::<8>("the magic")?;
        if magic != SHARD_MAGIC {
            return Err(self.err(0, "not an srl-dist shard (wrong magic bytes)"));
        }
        let version = self.u32("the version")?;
        if version != SHARD_VERSION {
            return Err(self.err(
                8,
                format!(
                    "shard format version {version}, this srl-dist reads version {SHARD_VERSION}"
                ),
            ));
        }
        let part = self.u32("the part")?;
        let parts = self.u32("the part count")?;
        if parts == 0 || part >= parts {
            return Err(self.err(12, format!("part {part} of {parts} parts")));
        }
        let flags = self.u32("the flags")?;
        if flags & FLAG_GRAPH != 0 {
            return Err(self.err(
                20,
                "a graph shard (features and labels, for ICA), not a model shard for BP or Gibbs",
            ));
        }
        if flags > 1 {
            return Err(self.err(20, format!("unknown flags {flags:#x}")));
        }
        let num_nodes = self.u64("the variable count")?;
        if num_nodes > u64::from(u32::MAX) {
            return Err(self.err(24, format!("{num_nodes} variables: more than 2^32 - 1")));
        }
        let num_edges = self.u64("the edge count")?;
        let uniform_k = self.u32("the common state count")?;
        let num_colours = self.u32("the colour count")?;
        let mut counts = [0u64; 6];
        for c in &mut counts {
            *c = self.u64("a section count")?;
        }
        let [n, slots, halo, tables, table_values, unary_values] = counts;
        // Every section's size from the counts, checked against the file before any
        // allocation.
        let expected = [
            (n, 20u64),
            (unary_values, 8),
            (slots, 16),
            (halo, 12),
            (tables, 8),
            (table_values, 8),
        ]
        .iter()
        .try_fold(HEADER_BYTES + 8, |acc, &(c, b)| {
            c.checked_mul(b).and_then(|x| acc.checked_add(x))
        });
        match expected {
            Some(e) if e == file_len => {}
            Some(e) => {
                return Err(self.err(
                    48,
                    format!("the section counts need {e} bytes, the file has {file_len}"),
                ));
            }
            None => return Err(self.err(48, "the section counts overflow")),
        }
        if n > num_nodes || halo > num_nodes {
            return Err(self.err(
                48,
                format!("{n} local and {halo} halo variables of {num_nodes}"),
            ));
        }
        let (n, slots, halo, tables) = (n as usize, slots as usize, halo as usize, tables as usize);
        let mut s = Shard {
            part,
            parts,
            num_nodes,
            num_edges,
            uniform_k,
            all_safe: flags & 1 == 1,
            num_colours,
            nodes: Vec::with_capacity(n),
            num_states: Vec::with_capacity(n),
            evidence: Vec::with_capacity(n),
            colour: Vec::with_capacity(n),
            unary: Vec::with_capacity(unary_values as usize),
            in_off: Vec::with_capacity(n + 1),
            slot_src: Vec::with_capacity(slots),
            slot_kernel: Vec::with_capacity(slots),
            slot_edge: Vec::with_capacity(slots),
            halo: Vec::with_capacity(halo),
            tables: Vec::with_capacity(tables),
        };
        s.in_off.push(0);
        let mut states_total = 0u64;
        for _ in 0..n {
            let at = self.offset;
            let id = self.u32("a variable id")?;
            let k = self.u32("a state count")?;
            let ev = self.u32("an evidence state")?;
            let c = self.u32("a colour")?;
            let deg = self.u32("a degree")?;
            if u64::from(id) >= num_nodes || s.nodes.last().is_some_and(|&p| p >= id) {
                return Err(self.err(
                    at,
                    format!("variable id {id} out of range or not ascending"),
                ));
            }
            if k == 0 || (uniform_k != 0 && k != uniform_k) {
                return Err(self.err(at + 4, format!("variable {id} has {k} states")));
            }
            if ev != NONE && ev >= k {
                return Err(self.err(at + 8, format!("variable {id}: evidence state {ev} of {k}")));
            }
            if (ev == NONE) != (c != NONE) || (c != NONE && c >= num_colours) {
                return Err(self.err(
                    at + 12,
                    format!("variable {id}: colour {c} (of {num_colours}) with evidence {ev}"),
                ));
            }
            let end = (s.in_off[s.in_off.len() - 1] as u64)
                .checked_add(u64::from(deg))
                .filter(|&e| e <= slots as u64)
                .ok_or_else(|| {
                    self.err(
                        at + 16,
                        format!("variable {id}: degree {deg} past the {slots} slots"),
                    )
                })?;
            states_total += u64::from(k);
            s.nodes.push(id);
            s.num_states.push(k);
            s.evidence.push(ev);
            s.colour.push(c);
            s.in_off.push(end as usize);
        }
        if states_total != unary_values || s.in_off[n] != slots {
            return Err(self.err(
                self.offset,
                format!(
                    "the variables hold {states_total} states and {} slots, the header says {unary_values} and {slots}",
                    s.in_off[n]
                ),
            ));
        }
        for _ in 0..unary_values {
            let x = self.value("unary log-potential")?;
            s.unary.push(x);
        }
        let slots_at = self.offset;
        for _ in 0..slots {
            s.slot_src.push(self.u32("a neighbour id")?);
            s.slot_kernel.push(self.u32("a kernel index")?);
            s.slot_edge.push(self.u64("an edge id")?);
        }
        for _ in 0..halo {
            let at = self.offset;
            let id = self.u32("a halo id")?;
            let owner = self.u32("a halo owner")?;
            let k = self.u32("a halo state count")?;
            if u64::from(id) >= num_nodes
                || s.halo.last().is_some_and(|h| h.0 >= id)
                || s.nodes.binary_search(&id).is_ok()
            {
                return Err(self.err(
                    at,
                    format!("halo id {id} out of range, repeated or owned here"),
                ));
            }
            if owner >= parts || owner == part {
                return Err(self.err(
                    at + 4,
                    format!("halo variable {id}: owner {owner} of {parts}"),
                ));
            }
            if k == 0 || (uniform_k != 0 && k != uniform_k) {
                return Err(self.err(at + 8, format!("halo variable {id} has {k} states")));
            }
            s.halo.push((id, owner, k));
        }
        let mut shapes = Vec::with_capacity(tables);
        let mut total = 0u64;
        for _ in 0..tables {
            let at = self.offset;
            let rows = self.u32("table rows")?;
            let cols = self.u32("table columns")?;
            total = u64::from(rows)
                .checked_mul(u64::from(cols))
                .and_then(|x| total.checked_add(x))
                .filter(|&t| t <= table_values && rows > 0 && cols > 0)
                .ok_or_else(|| {
                    self.err(
                        at,
                        format!("table shape {rows} x {cols} past the {table_values} values"),
                    )
                })?;
            shapes.push((rows as usize, cols as usize));
        }
        if total != table_values {
            return Err(self.err(
                self.offset,
                format!("tables hold {total} values, the header says {table_values}"),
            ));
        }
        for &(rows, cols) in &shapes {
            let at = self.offset;
            let mut vals = Vec::with_capacity(rows * cols);
            for _ in 0..rows * cols {
                vals.push(self.value("pairwise log-potential")?);
            }
            // the flag lets the runs take the exp-domain kernels: a table it does not fit
            // would give wrong marginals, not an error, so it is checked here
            if s.all_safe && srl_infer::kernel::kernel_range(&vals) >= 600.0 {
                return Err(self.err(
                    at,
                    "a table spans 600 nats or more, but the flags say every table is exp-safe",
                ));
            }
            s.tables.push(PairTable::new(rows, cols, vals));
        }
        let hash = self.hash;
        let stored = self.u64("the checksum")?;
        if stored != hash {
            return Err(self.err(self.offset - 8, "checksum mismatch: the file is corrupt"));
        }
        // Slots: neighbours known, kernels in range and of the right shape, keys unique.
        let mut keys = Vec::with_capacity(slots);
        for i in 0..n {
            let kv = s.num_states[i] as usize;
            for sl in s.in_off[i]..s.in_off[i + 1] {
                let at = slots_at + 16 * sl as u64;
                let (src, q, e) = (s.slot_src[sl], s.slot_kernel[sl], s.slot_edge[sl]);
                let ks = s.states_of(src).filter(|_| src != s.nodes[i]).ok_or_else(|| {
                    self.err(at, format!("slot of variable {}: neighbour {src} is neither owned nor in the halo", s.nodes[i]))
                })? as usize;
                let t = (q / 2) as usize;
                let shape_ok = shapes.get(t).is_some_and(|&(r, c)| {
                    if q % 2 == 0 {
                        (r, c) == (ks, kv)
                    } else {
                        (r, c) == (kv, ks)
                    }
                });
                if !shape_ok {
                    return Err(self.err(
                        at + 4,
                        format!(
                            "slot of variable {}: kernel {q} does not fit {ks} x {kv} states",
                            s.nodes[i]
                        ),
                    ));
                }
                if e >= num_edges {
                    return Err(self.err(at + 8, format!("edge id {e} of {num_edges}")));
                }
                keys.push((2 * e + u64::from(q.is_multiple_of(2)), at));
            }
        }
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(self.err(w[1].1, format!("message {} appears twice", w[1].0)));
        }
        Ok(s)
    }
}
