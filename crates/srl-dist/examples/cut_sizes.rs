//! Edge cuts of the partitioners (range, hash, LDG, Fennel) on the seeded Barabási–Albert
//! benchmark graph and on Cora, for 2, 4 and 8 parts.
//!
//! `SRL_DATA_DIR=/path/to/data cargo run --release -p srl-dist --example cut_sizes -- [N]`
//! (`N`: Barabási–Albert nodes, default 10^6; Cora is read from `$SRL_DATA_DIR/cora` and
//! skipped when absent). Prints one line per graph, parts and partitioner: cut edges, their
//! share, and the largest part's load (variables plus slots) over the mean.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_dist::Strategy;
use srl_dist::stream::{assign, cut_edges, neighbour_lists};
use srl_graph::{LinqsOptions, load_linqs};

#[allow(clippy::print_stdout)]
fn report(name: &str, n: usize, edges: &[(u32, u32)]) {
    let (in_off, in_src, _) = neighbour_lists(n, edges);
    for parts in [2usize, 4, 8] {
        for s in [
            Strategy::Range,
            Strategy::Hash,
            Strategy::Ldg,
            Strategy::Fennel,
        ] {
            let owner = assign(s, &in_off, &in_src, parts);
            let cut = cut_edges(edges, &owner);
            let mut load = vec![0usize; parts];
            for v in 0..n {
                load[owner[v] as usize] += 1 + in_off[v + 1] - in_off[v];
            }
            let mean = load.iter().sum::<usize>() as f64 / parts as f64;
            let max = load.iter().copied().max().unwrap_or(0) as f64;
            println!(
                "{name} n={n} m={} parts={parts} {s:?}: cut={cut} ({:.1}%) load_max/mean={:.2}",
                edges.len(),
                100.0 * cut as f64 / edges.len().max(1) as f64,
                max / mean.max(1.0)
            );
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1_000_000);
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let ba = srl_graph::generate::barabasi_albert(n, 2, &mut rng);
    report("barabasi-albert", n, &ba);
    if let Ok(dir) = std::env::var("SRL_DATA_DIR") {
        let path = std::path::Path::new(&dir);
        if path.join("cora").exists() {
            let (g, _) = load_linqs(&path.join("cora"), "cora", &LinqsOptions::default())?;
            let edges: Vec<(u32, u32)> = g.edge_list().iter().map(|&(u, v)| (u.0, v.0)).collect();
            report("cora", g.num_nodes(), &edges);
        }
    }
    Ok(())
}
