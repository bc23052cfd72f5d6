//! Usage: srl_sparse_driver GRAPH.txt SPLITS.txt INITS
//! GRAPH.txt: "n d k", then n lines "label j:v j:v ...", then "m", then m lines "u v".
//! SPLITS.txt: per split three lines: "train i i ...", "val i i ...", "test i i ...".
//! Prints one line per (split, init, method): split init method accuracy epochs seconds.
use srl_graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};
use srl_learn::collective::{CollectiveMethod, CollectiveSettings, EvalSplit, run_eval_split};
use std::io::Write;

fn nums(line: &str) -> Vec<usize> {
    line.split_whitespace().skip(1).map(|t| t.parse().unwrap()).collect()
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let g = std::fs::read_to_string(&a[1]).unwrap();
    let inits: u64 = a[3].parse().unwrap();
    let mut lines = g.lines();
    let h: Vec<usize> = lines.next().unwrap().split_whitespace().map(|t| t.parse().unwrap()).collect();
    let (n, d, k) = (h[0], h[1], h[2]);
    let (mut offsets, mut indices, mut values, mut labels) = (vec![0usize], Vec::new(), Vec::new(), Vec::new());
    let mut y = Vec::new();
    for _ in 0..n {
        let mut it = lines.next().unwrap().split_whitespace();
        let c: u32 = it.next().unwrap().parse().unwrap();
        labels.push(Some(c));
        y.push(c);
        for t in it {
            let (j, v) = t.split_once(':').unwrap();
            indices.push(j.parse::<u32>().unwrap());
            values.push(v.parse::<f64>().unwrap());
        }
        offsets.push(indices.len());
    }
    let m: usize = lines.next().unwrap().trim().parse().unwrap();
    let mut edges = Vec::with_capacity(m);
    for _ in 0..m {
        let p: Vec<usize> = lines.next().unwrap().split_whitespace().map(|t| t.parse().unwrap()).collect();
        edges.push((NodeId::new(p[0]), NodeId::new(p[1])));
    }
    let graph = RelationalGraph::new(
        Vec::new(),
        Attributes::Sparse { num_features: d, offsets, indices, values },
        labels,
        LabelSet::numbered(k),
        edges,
        Directedness::Undirected,
    )
    .unwrap();
    let s = std::fs::read_to_string(&a[2]).unwrap();
    let sl: Vec<&str> = s.lines().collect();
    let settings = CollectiveSettings::default();
    let out = std::io::stdout();
    for (si, chunk) in sl.chunks(3).enumerate() {
        let (train, val, test) = (nums(chunk[0]), nums(chunk[1]), nums(chunk[2]));
        assert_eq!(train.len() + val.len() + test.len(), n);
        for init in 0..inits {
            let methods: Vec<CollectiveMethod> = if init == 0 {
                vec![CollectiveMethod::Lp, CollectiveMethod::Gcn, CollectiveMethod::Appnp]
            } else {
                vec![CollectiveMethod::Gcn, CollectiveMethod::Appnp]
            };
            let split = EvalSplit { test: test.clone(), validation: val.clone(), stream: si as u64, init };
            let run = run_eval_split(&settings, &methods, &graph, &split, 0).unwrap();
            for mr in &run.methods {
                let correct = run.test.iter().zip(&mr.predicted).filter(|&(&v, &p)| y[v] == p).count();
                writeln!(
                    out.lock(),
                    "{si} {init} {:?} {:.6} {} {:.3}",
                    mr.method,
                    correct as f64 / run.test.len() as f64,
                    mr.convergence.iterations,
                    mr.seconds
                )
                .unwrap();
            }
        }
    }
}
