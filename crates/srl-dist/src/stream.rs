//! Sharding a UAI model: [`partition_uai`] streams a `MARKOV` file and writes one
//! [`Shard`] file per part, so that each worker later reads only its own part.
//!
//! The file is read twice. The first pass keeps only the graph (the scopes: 8 bytes per
//! factor, then neighbour lists of 8 bytes per directed edge) to partition it and colour
//! it; the second pass streams the potential tables and appends each to a spool file of
//! the part(s) that need it (a cut edge's table goes to both). Each shard is then
//! assembled from its spool alone, one part at a time, so with `P > 1` parts the
//! partitioner never holds more than the graph and one part's potentials.
//!
//! Partitioners ([`Strategy`]): id ranges, hashing, and two one-pass streaming heuristics
//! over the variables in id order, each placed where most of its already placed
//! neighbours are, with a balance term: LDG (Stanton & Kliot, *Streaming graph
//! partitioning for large distributed graphs*, KDD 2012) and Fennel (Tsourakakis,
//! Gkantsidis, Radunovic & Vojnovic, *FENNEL: streaming graph partitioning for massive
//! scale graphs*, WSDM 2014).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use srl_infer::PairTable;

use crate::bp::MAX_ABS_LOG_POTENTIAL;
use crate::error::DistError;
use crate::partition::splitmix64;
use crate::shard::{NONE, Shard};

/// How [`assign`] places variables on parts.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Strategy {
    /// Contiguous id ranges, as [`crate::Partition::Range`].
    #[default]
    Range,
    /// SplitMix64 of the id modulo the parts, as [`crate::Partition::Hash`].
    Hash,
    /// Linear deterministic greedy (Stanton & Kliot 2012), weighted: variable `v` (weight
    /// `w_v = 1 + deg v`) goes to the part maximising `|N(v) ∩ P_i| · (1 − L_i / C)` among
    /// those with room (`L_i + w_v ≤ C`), where `L_i` is the part's load (sum of weights)
    /// and `C = ⌈Σ w / P⌉`; ties (and variables with no placed neighbour) go to the
    /// lightest part, then the lowest index.
    Ldg,
    /// Fennel (Tsourakakis et al. 2014), weighted like [`Strategy::Ldg`]: maximise
    /// `|N(v) ∩ P_i| − α γ (L_i / w̄)^{γ − 1}` with `γ = 1.5`, `α = √P · m / n^{1.5}`,
    /// `w̄` the mean weight, over parts with room under the cap `1.1 · Σ w / P`.
    Fennel,
}

impl Strategy {
    /// Parses `range`, `hash`, `ldg` or `fennel`.
    ///
    /// # Errors
    /// [`DistError::Argument`] for another name.
    pub fn from_name(name: &str) -> Result<Self, DistError> {
        match name {
            "range" => Ok(Self::Range),
            "hash" => Ok(Self::Hash),
            "ldg" => Ok(Self::Ldg),
            "fennel" => Ok(Self::Fennel),
            _ => Err(DistError::Argument(format!(
                "partitioner {name:?} is not range|hash|ldg|fennel"
            ))),
        }
    }
}

/// The owner part of each variable of the graph `in_off` / `in_src` (neighbour lists:
/// `in_src[in_off[v]..in_off[v + 1]]`), for `parts ≥ 1` parts. Deterministic; the
/// streaming strategies visit the variables in id order.
///
/// # Panics
/// If a neighbour id is out of range.
#[must_use]
pub fn assign(strategy: Strategy, in_off: &[usize], in_src: &[u32], parts: usize) -> Vec<u32> {
    let n = in_off.len().saturating_sub(1);
    let parts = parts.max(1);
    match strategy {
        Strategy::Range => (0..n)
            .map(|v| ((v as u128 * parts as u128) / n.max(1) as u128) as u32)
            .collect(),
        Strategy::Hash => (0..n)
            .map(|v| (splitmix64(v as u64) % parts as u64) as u32)
            .collect(),
        Strategy::Ldg | Strategy::Fennel => {
            // Loads are weighted by 1 + degree (a variable's share of a worker's memory
            // and work: its states and its message slots), so hubs do not pile up.
            let weight = |v: usize| (1 + in_off[v + 1] - in_off[v]) as f64;
            let total: f64 = (0..n).map(weight).sum();
            let m = in_src.len() as f64 / 2.0;
            let cap_ldg = (total / parts as f64).ceil().max(1.0);
            let alpha = (parts as f64).sqrt() * m / (n as f64).powf(1.5).max(1.0);
            // Fennel's balance term in node units: load / mean weight.
            let mean_w = (total / n.max(1) as f64).max(1.0);
            let cap_fennel = (1.1 * total / parts as f64).ceil().max(1.0);
            let mut owner = vec![NONE; n];
            let mut load = vec![0.0f64; parts];
            let mut near = vec![0u32; parts];
            for v in 0..n {
                near.iter_mut().for_each(|x| *x = 0);
                for &u in &in_src[in_off[v]..in_off[v + 1]] {
                    let o = owner[u as usize];
                    if o != NONE {
                        near[o as usize] += 1;
                    }
                }
                let wv = weight(v);
                let mut best: Option<(f64, f64, usize)> = None;
                for p in 0..parts {
                    let l = load[p];
                    let score = if strategy == Strategy::Ldg {
                        if l + wv > cap_ldg {
                            continue;
                        }
                        f64::from(near[p]) * (1.0 - l / cap_ldg)
                    } else {
                        if l + wv > cap_fennel {
                            continue;
                        }
                        f64::from(near[p]) - alpha * 1.5 * (l / mean_w).sqrt()
                    };
                    // Higher score, then lighter part, then lower index.
                    if best.is_none_or(|(bs, bl, _)| score > bs || (score == bs && l < bl)) {
                        best = Some((score, l, p));
                    }
                }
                // Every part over capacity (a heavy hub late in the stream): the lightest.
                let p = best.map_or_else(
                    || (0..parts).fold(0, |b, p| if load[p] < load[b] { p } else { b }),
                    |b| b.2,
                );
                owner[v] = p as u32;
                load[p] += wv;
            }
            owner
        }
    }
}

/// Edges whose endpoints have different owners.
#[must_use]
pub fn cut_edges(edges: &[(u32, u32)], owner: &[u32]) -> u64 {
    edges
        .iter()
        .filter(|&&(a, b)| owner[a as usize] != owner[b as usize])
        .count() as u64
}

/// What [`partition_uai`] did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartitionReport {
    /// The partitioner.
    pub strategy: Strategy,
    /// Variables of the model.
    pub num_nodes: u64,
    /// Pairwise factors (edges).
    pub num_edges: u64,
    /// Edges cut by the partition (each costs two messages per iteration).
    pub cut_edges: u64,
    /// Variables per part.
    pub part_nodes: Vec<u64>,
    /// Colours of the greedy Gibbs colouring.
    pub num_colours: u32,
    /// The shard files written.
    pub files: Vec<PathBuf>,
}

/// Longest token accepted (a longer one is an error, never silently cut).
const MAX_TOKEN: usize = 256;
/// Largest number of entries of one factor table.
const MAX_TABLE: usize = 1 << 31;

/// A whitespace tokenizer over a reader, with 1-based lines.
struct Tokens<R> {
    r: R,
    file: PathBuf,
    tok: Vec<u8>,
    line: usize,
    tok_line: usize,
}

impl<R: BufRead> Tokens<R> {
    fn err(&self, line: usize, message: impl Into<String>) -> DistError {
        DistError::Parse {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }

    fn next(&mut self, what: &str) -> Result<&str, DistError> {
        self.tok.clear();
        loop {
            let buf = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(DistError::Io {
                        file: self.file.clone(),
                        source,
                    });
                }
            };
            if buf.is_empty() {
                break;
            }
            let mut used = 0;
            let mut done = false;
            for &b in buf {
                if b.is_ascii_whitespace() {
                    if !self.tok.is_empty() {
                        done = true;
                        break;
                    }
                    if b == b'\n' {
                        self.line += 1;
                    }
                } else if b.is_ascii_control() || self.tok.len() >= MAX_TOKEN {
                    let line = self.line;
                    return Err(self.err(
                        line,
                        format!("expected {what}: a control byte 0x{b:02x} or a token over {MAX_TOKEN} bytes"),
                    ));
                } else {
                    if self.tok.is_empty() {
                        self.tok_line = self.line;
                    }
                    self.tok.push(b);
                }
                used += 1;
            }
            self.r.consume(used);
            if done {
                break;
            }
        }
        if self.tok.is_empty() {
            let line = self.line;
            return Err(self.err(line, format!("unexpected end of file, expected {what}")));
        }
        std::str::from_utf8(&self.tok).map_err(|_| DistError::Parse {
            file: self.file.clone(),
            line: self.tok_line,
            message: format!("expected {what}, found non-UTF-8 bytes"),
        })
    }

    fn usize(&mut self, what: &str) -> Result<usize, DistError> {
        let t = self.next(what)?;
        match t.parse::<usize>() {
            Ok(x) => Ok(x),
            Err(_) => {
                let message = format!("expected {what} (a non-negative integer), found {t:?}");
                Err(self.err(self.tok_line, message))
            }
        }
    }

    fn f64(&mut self, what: &str) -> Result<f64, DistError> {
        let t = self.next(what)?;
        match t.parse::<f64>() {
            Ok(x) => Ok(x),
            Err(_) => {
                let message = format!("expected {what} (a number), found {t:?}");
                Err(self.err(self.tok_line, message))
            }
        }
    }
}

fn open_tokens(path: &Path) -> Result<Tokens<BufReader<std::fs::File>>, DistError> {
    let f = std::fs::File::open(path).map_err(|source| DistError::Io {
        file: path.to_path_buf(),
        source,
    })?;
    Ok(Tokens {
        r: BufReader::with_capacity(1 << 16, f),
        file: path.to_path_buf(),
        tok: Vec::with_capacity(32),
        line: 1,
        tok_line: 1,
    })
}

/// The header and scopes of a UAI `MARKOV` file (pass 1).
struct Graph {
    num_states: Vec<u32>,
    /// Per factor: `[a, b]`, `[a, NONE]` (unary) or `[NONE, NONE]` (constant).
    scopes: Vec<[u32; 2]>,
    edges: Vec<(u32, u32)>,
}

fn read_graph<R: BufRead>(t: &mut Tokens<R>) -> Result<Graph, DistError> {
    let kind = t.next("the model type")?;
    if !kind.eq_ignore_ascii_case("MARKOV") {
        let message = format!("expected MARKOV, found {kind:?}");
        return Err(t.err(t.tok_line, message));
    }
    let n = t.usize("the number of variables")?;
    if n >= u32::MAX as usize {
        return Err(t.err(t.tok_line, format!("{n} variables: more than 2^32 - 2")));
    }
    let mut num_states = Vec::with_capacity(n.min(1 << 16));
    // the same cap as srl-infer's reader: the parts' unary arrays hold every state
    let mut total_states = 0usize;
    for _ in 0..n {
        let k = t.usize("a cardinality")?;
        if k == 0 || k > u32::MAX as usize {
            return Err(t.err(t.tok_line, format!("cardinality {k}")));
        }
        total_states = total_states
            .checked_add(k)
            .filter(|&s| s <= srl_infer::uai::MAX_UAI_STATES)
            .ok_or_else(|| {
                t.err(
                    t.tok_line,
                    format!(
                        "cardinality {k} brings the model's total number of states past {} (too large to hold)",
                        srl_infer::uai::MAX_UAI_STATES
                    ),
                )
            })?;
        num_states.push(k as u32);
    }
    let f = t.usize("the number of factors")?;
    let mut scopes = Vec::with_capacity(f.min(1 << 16));
    let mut edges = Vec::new();
    for _ in 0..f {
        let size = t.usize("a scope size")?;
        if size > 2 {
            return Err(t.err(
                t.tok_line,
                format!(
                    "factor of {size} variables; only unary and pairwise factors are supported"
                ),
            ));
        }
        let mut sc = [NONE; 2];
        for slot in sc.iter_mut().take(size) {
            let v = t.usize("a variable index")?;
            if v >= n {
                return Err(t.err(t.tok_line, format!("variable {v} out of range (n = {n})")));
            }
            *slot = v as u32;
        }
        if size == 2 {
            if sc[0] == sc[1] {
                return Err(t.err(
                    t.tok_line,
                    format!("variable {} repeated in a scope", sc[0]),
                ));
            }
            let entries = (num_states[sc[0] as usize] as usize)
                .checked_mul(num_states[sc[1] as usize] as usize)
                .filter(|&e| e <= MAX_TABLE);
            if entries.is_none() {
                return Err(t.err(t.tok_line, "the factor's table is too large to hold"));
            }
            edges.push((sc[0], sc[1]));
        }
        scopes.push(sc);
    }
    Ok(Graph {
        num_states,
        scopes,
        edges,
    })
}

/// Neighbour lists of the graph on `n` variables with edge list `edges`, each list in edge
/// order (srl-infer's slot order): `(in_off, in_src, in_edge)`, the neighbours of `v` at
/// `in_src[in_off[v]..in_off[v + 1]]` and the edges they come by in `in_edge`.
///
/// # Panics
/// If an endpoint is `>= n`.
#[must_use]
pub fn neighbour_lists(n: usize, edges: &[(u32, u32)]) -> (Vec<usize>, Vec<u32>, Vec<u32>) {
    let mut deg = vec![0usize; n + 1];
    for &(a, b) in edges {
        deg[a as usize + 1] += 1;
        deg[b as usize + 1] += 1;
    }
    for v in 0..n {
        deg[v + 1] += deg[v];
    }
    let in_off = deg;
    let mut cursor = in_off.clone();
    let mut in_src = vec![0u32; 2 * edges.len()];
    let mut in_edge = vec![0u32; 2 * edges.len()];
    for (e, &(a, b)) in edges.iter().enumerate() {
        for (x, y) in [(b, a), (a, b)] {
            let c = &mut cursor[x as usize];
            in_src[*c] = y;
            in_edge[*c] = e as u32;
            *c += 1;
        }
    }
    (in_off, in_src, in_edge)
}

/// Spool record tags.
const UNARY: u8 = 0;
const PAIR: u8 = 1;

/// Partitions the UAI `MARKOV` model `model` (with optional UAI evidence) into `parts`
/// shards written to `out_dir/part-NNNNN.shard` (see [`crate::shard`]), streaming the file
/// (module docs). The edge and variable numbering is the file's (edges: pairwise factors in
/// file order), the same as `srl_infer::PairwiseMrf::read_uai`, so the shards' marginals
/// equal srl-infer's on the file.
///
/// # Errors
/// [`DistError::Parse`] naming the file and line of a malformed model (also for a zero
/// potential or a log-potential beyond `1e4`, which srl-dist does not run);
/// [`DistError::Infer`] for bad evidence; [`DistError::Argument`] for `parts = 0` or more
/// than 2^20 parts, or more than 2^32 − 1 edges; [`DistError::Output`] if a shard exists
/// and `force` is false or would overwrite the model; [`DistError::Io`].
pub fn partition_uai(
    model: &Path,
    evidence: Option<&Path>,
    parts: usize,
    strategy: Strategy,
    out_dir: &Path,
    force: bool,
) -> Result<PartitionReport, DistError> {
    let mut inputs = vec![model];
    inputs.extend(evidence);
    let files = crate::shard::prepare_outputs(parts, out_dir, &inputs, force)?;
    // Pass 1: the graph.
    let mut t = open_tokens(model)?;
    let g = read_graph(&mut t)?;
    let n = g.num_states.len();
    if g.edges.len() >= u32::MAX as usize {
        return Err(DistError::Argument(format!(
            "{} edges: more than 2^32 - 1",
            g.edges.len()
        )));
    }
    let ev: Vec<Option<u32>> = match evidence {
        Some(p) => srl_infer::read_uai_evidence(p, n)?.into_iter().collect(),
        None => vec![None; n],
    };
    for (v, e) in ev.iter().enumerate() {
        if let Some(x) = *e
            && x >= g.num_states[v]
        {
            return Err(DistError::Argument(format!(
                "evidence: variable {v} observed in state {x} of {}",
                g.num_states[v]
            )));
        }
    }
    let (in_off, in_src, in_edge) = neighbour_lists(n, &g.edges);
    let owner = assign(strategy, &in_off, &in_src, parts);
    let (colour, num_colours) =
        srl_infer::kernel::greedy_colours(&in_off, &in_src, |v| ev[v].is_some());
    // Pass 2: stream the tables into one spool per part, skipping the header.
    let spools: Vec<PathBuf> = (0..parts)
        .map(|p| out_dir.join(format!(".part-{p:05}.spool.tmp")))
        .collect();
    let result = spool_and_assemble(
        model,
        &g,
        &ev,
        &in_off,
        &in_src,
        &in_edge,
        &owner,
        &colour,
        num_colours,
        &spools,
        &files,
        force,
    );
    for s in &spools {
        let _ = std::fs::remove_file(s);
    }
    result?;
    let mut part_nodes = vec![0u64; parts];
    owner.iter().for_each(|&o| part_nodes[o as usize] += 1);
    Ok(PartitionReport {
        strategy,
        num_nodes: n as u64,
        num_edges: g.edges.len() as u64,
        cut_edges: cut_edges(&g.edges, &owner),
        part_nodes,
        num_colours,
        files,
    })
}

#[allow(clippy::too_many_arguments)]
fn spool_and_assemble(
    model: &Path,
    g: &Graph,
    ev: &[Option<u32>],
    in_off: &[usize],
    in_src: &[u32],
    in_edge: &[u32],
    owner: &[u32],
    colour: &[u32],
    num_colours: u32,
    spools: &[PathBuf],
    files: &[PathBuf],
    force: bool,
) -> Result<bool, DistError> {
    let n = g.num_states.len();
    let io = |file: &Path| {
        let file = file.to_path_buf();
        move |source| DistError::Io {
            file: file.clone(),
            source,
        }
    };
    let mut t = open_tokens(model)?;
    // Skip the header and scopes (already validated by pass 1).
    t.next("the model type")?;
    for _ in 0..2 + n {
        t.next("the header")?;
    }
    for sc in &g.scopes {
        let size = sc.iter().filter(|&&x| x != NONE).count();
        for _ in 0..=size {
            t.next("a scope")?;
        }
    }
    let mut writers = spools
        .iter()
        .map(|p| {
            std::fs::File::create(p)
                .map(|f| BufWriter::with_capacity(1 << 16, f))
                .map_err(io(p))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut logs: Vec<f64> = Vec::new();
    let mut all_safe = true;
    let mut edge = 0u64;
    for sc in &g.scopes {
        let expected: usize = sc
            .iter()
            .filter(|&&x| x != NONE)
            .map(|&v| g.num_states[v as usize] as usize)
            .product();
        let count = t.usize("a table size")?;
        if count != expected {
            let line = t.tok_line;
            return Err(t.err(
                line,
                format!("table has {count} entries, its scope needs {expected}"),
            ));
        }
        logs.clear();
        for _ in 0..count {
            let x = t.f64("a potential value")?;
            let l = x.ln();
            if !(x.is_finite() && x > 0.0) || l.abs() > MAX_ABS_LOG_POTENTIAL {
                let line = t.tok_line;
                return Err(t.err(
                    line,
                    format!("potential {x}: srl-dist runs ordinary models only (positive, |ln x| <= 1e4)"),
                ));
            }
            logs.push(l);
        }
        let (tag, id, dests) = match *sc {
            [NONE, _] => continue,
            [a, NONE] => (UNARY, u64::from(a), [owner[a as usize], NONE]),
            [a, b] => {
                if srl_infer::kernel::kernel_range(&logs) >= 600.0 {
                    all_safe = false;
                }
                edge += 1;
                let (oa, ob) = (owner[a as usize], owner[b as usize]);
                (PAIR, edge - 1, [oa, if ob == oa { NONE } else { ob }])
            }
        };
        for d in dests.into_iter().filter(|&d| d != NONE) {
            let w = &mut writers[d as usize];
            let mut rec = Vec::with_capacity(13 + 8 * logs.len());
            rec.push(tag);
            rec.extend_from_slice(&id.to_le_bytes());
            rec.extend_from_slice(&(logs.len() as u32).to_le_bytes());
            for x in &logs {
                rec.extend_from_slice(&x.to_le_bytes());
            }
            w.write_all(&rec).map_err(io(&spools[d as usize]))?;
        }
    }
    for (w, p) in writers.into_iter().zip(spools) {
        w.into_inner()
            .map_err(|e| DistError::Io {
                file: p.clone(),
                source: e.into_error(),
            })?
            .sync_all()
            .map_err(io(p))?;
    }
    let uniform_k = match g.num_states.first() {
        Some(&k) if g.num_states.iter().all(|&x| x == k) => k,
        _ => 0,
    };
    // Assemble each part from its spool.
    let parts = files.len();
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); parts];
    for (v, &o) in owner.iter().enumerate() {
        members[o as usize].push(v as u32);
    }
    for (p, nodes) in members.into_iter().enumerate() {
        let mut unary_off = Vec::with_capacity(nodes.len() + 1);
        unary_off.push(0usize);
        for &v in &nodes {
            unary_off.push(unary_off[unary_off.len() - 1] + g.num_states[v as usize] as usize);
        }
        let mut unary = vec![0.0f64; unary_off[nodes.len()]];
        let mut tables: Vec<PairTable> = Vec::new();
        let mut pool: HashMap<Vec<u64>, u32> = HashMap::new();
        let mut edge_table: HashMap<u64, u32> = HashMap::new();
        let mut r = BufReader::with_capacity(
            1 << 16,
            std::fs::File::open(&spools[p]).map_err(io(&spools[p]))?,
        );
        let mut head = [0u8; 13];
        loop {
            match r.read_exact(&mut head) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                Err(e) => return Err(io(&spools[p])(e)),
            }
            let id = u64::from_le_bytes(head[1..9].try_into().unwrap_or_default());
            let len = u32::from_le_bytes(head[9..13].try_into().unwrap_or_default()) as usize;
            let mut vals = vec![0.0f64; len];
            let mut b = [0u8; 8];
            for x in &mut vals {
                r.read_exact(&mut b).map_err(io(&spools[p]))?;
                *x = f64::from_le_bytes(b);
            }
            if head[0] == UNARY {
                if let Ok(i) = nodes.binary_search(&(id as u32)) {
                    for (u, l) in unary[unary_off[i]..unary_off[i + 1]].iter_mut().zip(&vals) {
                        *u += l;
                    }
                }
            } else {
                let (a, bb) = g.edges[id as usize];
                let (ka, kb) = (g.num_states[a as usize], g.num_states[bb as usize]);
                // Pooled by shape and bit pattern, as srl-infer's reader pools.
                let mut key = vec![u64::from(ka), u64::from(kb)];
                key.extend(vals.iter().map(|x| x.to_bits()));
                let next = tables.len() as u32;
                let ti = *pool.entry(key).or_insert(next);
                if ti == next {
                    tables.push(PairTable::new(ka as usize, kb as usize, vals));
                }
                edge_table.insert(id, ti);
            }
        }
        if let Some((i, x)) = unary
            .iter()
            .enumerate()
            .find(|(_, x)| !x.is_finite() || x.abs() > MAX_ABS_LOG_POTENTIAL)
        {
            return Err(DistError::ExtremeModel {
                what: "summed unary log-potential (state offset in its part)",
                index: i,
                value: *x,
            });
        }
        let mut s = Shard {
            part: p as u32,
            parts: parts as u32,
            num_nodes: n as u64,
            num_edges: g.edges.len() as u64,
            uniform_k,
            all_safe: true,
            num_colours,
            num_states: nodes.iter().map(|&v| g.num_states[v as usize]).collect(),
            evidence: nodes
                .iter()
                .map(|&v| ev[v as usize].unwrap_or(NONE))
                .collect(),
            colour: nodes.iter().map(|&v| colour[v as usize]).collect(),
            unary,
            in_off: vec![0],
            slot_src: Vec::new(),
            slot_kernel: Vec::new(),
            slot_edge: Vec::new(),
            halo: Vec::new(),
            tables,
            nodes,
        };
        for &v in &s.nodes {
            for j in in_off[v as usize]..in_off[v as usize + 1] {
                let (u, e) = (in_src[j], u64::from(in_edge[j]));
                let ti = edge_table.get(&e).copied().unwrap_or(0);
                // Into v from the edge's first endpoint: the table as stored.
                let o = u32::from(g.edges[e as usize].0 == v);
                s.slot_src.push(u);
                s.slot_kernel.push(2 * ti + o);
                s.slot_edge.push(e);
                if owner[u as usize] != p as u32 {
                    s.halo
                        .push((u, owner[u as usize], g.num_states[u as usize]));
                }
            }
            s.in_off.push(s.slot_src.len());
        }
        s.halo.sort_unstable();
        s.halo.dedup();
        s.all_safe = all_safe;
        s.write(&files[p], force)?;
    }
    Ok(all_safe)
}
