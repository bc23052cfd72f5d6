//! Helpers shared by the integration tests: random models, loopback ports, child
//! processes killed on drop, the marginals files of `--out`.
#![allow(dead_code)] // each test file uses a subset

use std::net::TcpListener;
use std::path::Path;
use std::process::Child;

use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};
use srl_infer::{MrfParts, PairTable, PairwiseMrf};

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Kills every child still running when dropped (a failed assertion or a timeout).
pub struct Children(pub Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

pub fn read_marginals(path: &Path) -> Vec<(usize, Vec<f64>)> {
    let text = std::fs::read_to_string(path).expect("output written");
    text.lines()
        .map(|l| {
            let mut it = l.split_whitespace();
            let v = it.next().and_then(|x| x.parse().ok()).expect("node id");
            (v, it.map(|x| x.parse().expect("probability")).collect())
        })
        .collect()
}

/// A random loopy model: a ring plus random chords and one parallel edge, `k_v ∈ {2, 3}`.
pub fn random_mrf(n: usize, rng: &mut impl Rng) -> PairwiseMrf {
    let num_states: Vec<usize> = (0..n).map(|v| if v % 3 == 0 { 3 } else { 2 }).collect();
    let unary = num_states
        .iter()
        .flat_map(|&k| (0..k).collect::<Vec<_>>())
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let mut edges: Vec<(u32, u32)> = (0..n as u32).map(|v| (v, (v + 1) % n as u32)).collect();
    for _ in 0..n {
        let (a, b) = (rng.random_range(0..n as u32), rng.random_range(0..n as u32));
        if a != b {
            edges.push((a, b));
        }
    }
    edges.push(edges[0]);
    // One table per (k_u, k_v) shape and variant: variant 1 spans more than 600 nats.
    let mut tables = Vec::new();
    let mut index = std::collections::HashMap::new();
    let edge_tables = edges
        .iter()
        .enumerate()
        .map(|(e, &(a, b))| {
            let shape = (num_states[a as usize], num_states[b as usize], e % 3 == 1);
            *index.entry(shape).or_insert_with(|| {
                let (r, c, wide) = shape;
                let scale = if wide { 400.0 } else { 0.8 };
                let vals = (0..r * c)
                    .map(|_| rng.random_range(-scale..scale))
                    .collect();
                tables.push(PairTable::new(r, c, vals));
                tables.len() as u32 - 1
            })
        })
        .collect();
    let evidence = (0..n)
        .map(|v| (v % 11 == 5).then_some((v % 2) as u32))
        .collect();
    PairwiseMrf::new(MrfParts {
        num_states,
        unary,
        edges,
        edge_tables,
        tables,
        evidence,
    })
    .expect("valid random model")
}

/// [`random_mrf`] without the wide table (Gibbs samples are exact integers of counts; the
/// wide table would only freeze the chain).
pub fn random_mrf_small_range(n: usize, rng: &mut impl Rng) -> PairwiseMrf {
    let m = random_mrf(n, rng);
    let mut parts = m.to_parts();
    for t in &mut parts.tables {
        t.log_values
            .iter_mut()
            .for_each(|x| *x = x.clamp(-1.5, 1.5));
    }
    PairwiseMrf::new(parts).expect("valid")
}

/// A Barabási–Albert graph with `k` classes, homophilous features (class signal plus
/// noise in `nf` columns, dense or with about a third of the entries zero and stored
/// sparse) and 30 % of the labels known (seeded).
pub fn featured_graph(n: usize, k: u32, nf: usize, sparse: bool, seed: u64) -> RelationalGraph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let edges: Vec<(NodeId, NodeId)> = srl_dist::barabasi_albert(n, 2, &mut rng)
        .into_iter()
        .map(|(a, b)| (NodeId::new(a as usize), NodeId::new(b as usize)))
        .collect();
    let truth: Vec<u32> = (0..n).map(|v| (v as u32 * 7 + v as u32 / 3) % k).collect();
    let mut dense = vec![0.0; n * nf];
    for v in 0..n {
        for j in 0..nf {
            let signal = if j % k as usize == truth[v] as usize {
                0.6
            } else {
                0.0
            };
            let x: f64 = signal + rng.random_range(-1.0..1.0);
            dense[v * nf + j] = if sparse && x.abs() < 0.3 { 0.0 } else { x };
        }
    }
    let attributes = if sparse {
        let (mut offsets, mut indices, mut values) = (vec![0], Vec::new(), Vec::new());
        for v in 0..n {
            for j in 0..nf {
                let x = dense[v * nf + j];
                if x != 0.0 {
                    indices.push(j as u32);
                    values.push(x);
                }
            }
            offsets.push(indices.len());
        }
        Attributes::Sparse {
            num_features: nf,
            offsets,
            indices,
            values,
        }
    } else {
        Attributes::Dense {
            num_features: nf,
            values: dense,
        }
    };
    let labels: Vec<Option<u32>> = truth
        .iter()
        .map(|&c| (rng.random_range(0.0..1.0) < 0.3).then_some(c))
        .collect();
    RelationalGraph::new(
        Vec::new(),
        attributes,
        labels,
        LabelSet::numbered(k as usize),
        edges,
        Directedness::Undirected,
    )
    .expect("graph")
}
