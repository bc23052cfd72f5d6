//! Distributed synchronous ICA gives the same labels for 1, 2 and 4 workers and both
//! partitions, equal to a single-process synchronous ICA written here from srl-infer's
//! public pieces (the classifier trained once by `fit_relational_classifier`); sharded ICA
//! (graph shards written by `partition_graph`, each worker reading only its own) gives the
//! labels of the whole-graph run for 1, 2 and 4 shards, on generated graphs with dense and
//! sparse features, across two timely processes on loopback, and on Cora when
//! `SRL_DATA_DIR` has it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

mod common;

use common::featured_graph;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_dist::{
    DistError, DistIca, GraphShard, Partition, Strategy, barabasi_albert, partition_graph,
    read_graph_shards,
};
use srl_graph::{Attributes, Directedness, LabelSet, LinqsOptions, NodeId, RelationalGraph};
use srl_infer::{
    Aggregator, FeatureRow, LocalClassifier, aggregate_neighbors, fit_relational_classifier,
};

/// Class frequencies times `1 + 2 · (neighbour count of the class)`, normalised.
#[derive(Clone, Debug, Default)]
struct Votes {
    prior: Vec<f64>,
}

#[derive(Debug, thiserror::Error)]
#[error("no rows")]
struct NoRows;

impl LocalClassifier for Votes {
    type Error = NoRows;
    fn fit(
        &mut self,
        rows: &[FeatureRow<'_>],
        labels: &[u32],
        _: Option<&[f64]>,
        k: usize,
    ) -> Result<(), NoRows> {
        if rows.is_empty() {
            return Err(NoRows);
        }
        self.prior = vec![1.0; k];
        labels.iter().for_each(|&c| self.prior[c as usize] += 1.0);
        Ok(())
    }
    fn predict_proba(&self, row: &FeatureRow<'_>, out: &mut [f64]) {
        for (c, o) in out.iter_mut().enumerate() {
            *o = self.prior[c] * (1.0 + 2.0 * row.relational.get(c).copied().unwrap_or(0.0));
        }
        let z: f64 = out.iter().sum();
        out.iter_mut().for_each(|o| *o /= z);
    }
}

fn argmax(x: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        if v > x[best] {
            best = i;
        }
    }
    best
}

/// Synchronous ICA on one process: bootstrap from observed labels, then every unknown
/// node reclassified from the previous iteration's labels until nothing changes.
fn jacobi_ica(
    g: &RelationalGraph,
    c: &Votes,
    agg: Aggregator,
    max_iters: usize,
) -> (Vec<u32>, usize) {
    let k = g.num_labels();
    let observed = g.labels();
    let unknown: Vec<usize> = (0..g.num_nodes())
        .filter(|&v| observed[v].is_none())
        .collect();
    let (mut buf, mut p) = (vec![0.0; k], vec![0.0; k]);
    let mut predict = |v: usize, labels: &[Option<u32>]| {
        aggregate_neighbors(agg, g, v, labels, &mut buf);
        let row = FeatureRow {
            attributes: g.attributes_of(NodeId::new(v)),
            num_attributes: g.num_features(),
            relational: &buf,
        };
        c.predict_proba(&row, &mut p);
        argmax(&p) as u32
    };
    let mut labels = observed.to_vec();
    let boot: Vec<u32> = unknown.iter().map(|&v| predict(v, observed)).collect();
    for (&v, &l) in unknown.iter().zip(&boot) {
        labels[v] = Some(l);
    }
    let mut iters = 0;
    while iters < max_iters {
        let next: Vec<u32> = unknown.iter().map(|&v| predict(v, &labels)).collect();
        let mut changed = 0;
        for (&v, &l) in unknown.iter().zip(&next) {
            if labels[v] != Some(l) {
                changed += 1;
                labels[v] = Some(l);
            }
        }
        iters += 1;
        if changed == 0 {
            break;
        }
    }
    (labels.iter().map(|l| l.unwrap_or(0)).collect(), iters)
}

#[test]
fn synchronous_ica_labels_are_identical_for_1_2_4_workers() {
    let n = 400;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let edges: Vec<(NodeId, NodeId)> = barabasi_albert(n, 2, &mut rng)
        .into_iter()
        .map(|(a, b)| (NodeId::new(a as usize), NodeId::new(b as usize)))
        .collect();
    let labels: Vec<Option<u32>> = (0..n)
        .map(|v| (rng.random_range(0.0..1.0) < 0.3).then_some(u32::from(v % 5 < 2)))
        .collect();
    let g = RelationalGraph::new(
        Vec::new(),
        Attributes::none(n),
        labels,
        LabelSet::numbered(2),
        edges,
        Directedness::Undirected,
    )
    .expect("graph");
    let fitted =
        fit_relational_classifier(&g, &Votes::default(), Aggregator::Count, None).expect("fit");
    let (want, iters) = jacobi_ica(&g, &fitted, Aggregator::Count, 50);
    assert!(
        iters > 1,
        "the test graph should need more than one iteration"
    );
    let (g, fitted) = (Arc::new(g), Arc::new(fitted));
    for workers in [1, 2, 4] {
        for partition in [Partition::Range, Partition::Hash] {
            let got = DistIca {
                max_iters: 50,
                aggregator: Aggregator::Count,
                partition,
            }
            .run_threads(Arc::clone(&g), Arc::clone(&fitted), workers)
            .expect("ica");
            assert_eq!(got.convergence().iterations, iters);
            let labels: Vec<u32> = (0..n).map(|v| got.label(v).expect("held")).collect();
            assert_eq!(labels, want, "{workers} workers, {partition:?}");
        }
    }
}

/// A feature-aware test classifier: class prior times `1 + 2 r_c` times
/// `exp(x · (μ_c − μ))` (class centroids of the training rows' attributes), normalised.
#[derive(Clone, Debug, Default)]
struct Centroids {
    prior: Vec<f64>,
    /// `k × F` centroid differences.
    w: Vec<f64>,
    nf: usize,
}

impl LocalClassifier for Centroids {
    type Error = NoRows;
    fn fit(
        &mut self,
        rows: &[FeatureRow<'_>],
        labels: &[u32],
        _: Option<&[f64]>,
        k: usize,
    ) -> Result<(), NoRows> {
        let first = rows.first().ok_or(NoRows)?;
        let nf = first.num_attributes;
        let (mut sum, mut all, mut count) = (vec![0.0; k * nf], vec![0.0; nf], vec![0.0f64; k]);
        for (r, &c) in rows.iter().zip(labels) {
            let c = c as usize;
            count[c] += 1.0;
            r.attributes.for_each(|j, x| {
                sum[c * nf + j] += x;
                all[j] += x;
            });
        }
        let total = rows.len() as f64;
        self.w = (0..k * nf)
            .map(|i| sum[i] / count[i / nf].max(1.0) - all[i % nf] / total)
            .collect();
        self.prior = count.iter().map(|c| 1.0 + c).collect();
        self.nf = nf;
        Ok(())
    }
    fn predict_proba(&self, row: &FeatureRow<'_>, out: &mut [f64]) {
        for (c, o) in out.iter_mut().enumerate() {
            let dot = row.attributes.dot(&self.w[c * self.nf..(c + 1) * self.nf]);
            *o = self.prior[c]
                * (1.0 + 2.0 * row.relational.get(c).copied().unwrap_or(0.0))
                * dot.clamp(-30.0, 30.0).exp();
        }
        let z: f64 = out.iter().sum();
        out.iter_mut().for_each(|o| *o /= z);
    }
}

/// Whole-graph `DistIca` labels (1 worker) and the sharded labels for 1, 2 and 4 parts
/// (each part count by `strategies`, each worker reading only its shard) are equal, for
/// every aggregator; returns the iterations of the Count run.
fn assert_sharded_ica_equal(g: RelationalGraph, dir: &Path, strategies: &[Strategy]) -> usize {
    let n = g.num_nodes();
    let mut iterations = 0;
    for aggregator in [
        Aggregator::Count,
        Aggregator::Proportion,
        Aggregator::Exists,
        Aggregator::Mode,
    ] {
        let fitted = Arc::new(
            fit_relational_classifier(&g, &Centroids::default(), aggregator, None).expect("fit"),
        );
        let ica = DistIca {
            max_iters: 30,
            aggregator,
            partition: Partition::Range,
        };
        let g = Arc::new(g.clone());
        let whole = ica
            .run_threads(Arc::clone(&g), Arc::clone(&fitted), 1)
            .expect("whole-graph ICA");
        if aggregator == Aggregator::Count {
            iterations = whole.convergence().iterations;
        }
        let want: Vec<u32> = (0..n).map(|v| whole.label(v).expect("held")).collect();
        for &strategy in strategies {
            for parts in [1usize, 2, 4] {
                let out = dir.join(format!("{aggregator:?}-{strategy:?}-{parts}"));
                let report =
                    partition_graph(&g, parts, strategy, &out, false, &[]).expect("partition");
                assert_eq!(report.part_nodes.iter().sum::<u64>(), n as u64);
                let shards = read_graph_shards(&out, 0..parts).expect("read shards");
                for s in &shards {
                    assert!(
                        s.nodes.len() < n || parts == 1,
                        "a shard holds only its part"
                    );
                }
                let got = ica
                    .run_shards_threads(shards, Arc::clone(&fitted), parts)
                    .expect("sharded ICA");
                let labels: Vec<u32> = (0..n).map(|v| got.label(v).expect("held")).collect();
                assert_eq!(labels, want, "{aggregator:?}, {strategy:?}, {parts} parts");
                assert_eq!(got.convergence(), whole.convergence());
                for v in 0..n {
                    assert_eq!(got.proba(v), whole.proba(v), "node {v}");
                }
            }
        }
    }
    iterations
}

#[test]
fn sharded_ica_equals_whole_graph_ica_for_1_2_4_shards() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (sparse, seed) in [(false, 3), (true, 4)] {
        let g = featured_graph(300, 3, 6, sparse, seed);
        let iterations = assert_sharded_ica_equal(
            g,
            &dir.path().join(format!("sparse-{sparse}")),
            &[Strategy::Range, Strategy::Hash, Strategy::Ldg],
        );
        assert!(
            iterations > 1,
            "the test graph should need more than one iteration"
        );
    }
}

#[test]
fn sharded_ica_equals_whole_graph_ica_on_cora() {
    let Some(dir) = std::env::var_os("SRL_DATA_DIR").map(|d| PathBuf::from(d).join("cora")) else {
        eprintln!("skipping: SRL_DATA_DIR not set (wants SRL_DATA_DIR/cora)");
        return;
    };
    if !dir.is_dir() {
        eprintln!("skipping: {} not found", dir.display());
        return;
    }
    let (g, _) = srl_graph::load_linqs(&dir, "cora", &LinqsOptions::default()).expect("Cora");
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let hidden: Vec<Option<u32>> = g
        .labels()
        .iter()
        .map(|&l| l.filter(|_| rng.random_range(0.0..1.0) < 0.5))
        .collect();
    let g = g.with_labels(hidden).expect("labels");
    eprintln!(
        "Cora: {} nodes, {} features ({}), {} labels",
        g.num_nodes(),
        g.num_features(),
        if matches!(g.attributes(), Attributes::Sparse { .. }) {
            "sparse"
        } else {
            "dense"
        },
        g.num_labels()
    );
    let tmp = tempfile::tempdir().expect("temp dir");
    let iterations = assert_sharded_ica_equal(g, tmp.path(), &[Strategy::Ldg]);
    eprintln!("Cora: {iterations} ICA iterations (Count)");
}

#[test]
fn mismatched_graph_shards_are_inconsistent_on_every_worker() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let g = featured_graph(120, 3, 4, false, 6);
    let fitted = Arc::new(
        fit_relational_classifier(&g, &Centroids::default(), Aggregator::Count, None).expect("fit"),
    );
    partition_graph(&g, 2, Strategy::Range, &a, false, &[]).expect("partition");
    partition_graph(&g, 2, Strategy::Hash, &b, false, &[]).expect("partition");
    // part 0 of one partition with part 1 of another
    let shards = vec![
        GraphShard::read(&srl_dist::shard_file(&a, 0)).expect("read"),
        GraphShard::read(&srl_dist::shard_file(&b, 1)).expect("read"),
    ];
    let err = DistIca::default()
        .run_shards_threads(shards, Arc::clone(&fitted), 2)
        .expect_err("inconsistent shards");
    assert!(matches!(err, DistError::Inconsistent(_)), "{err}");
    // a missing shard: worker 1 has none
    let one = read_graph_shards(&a, 0..1).expect("read");
    let err = DistIca::default()
        .run_shards_threads(one, fitted, 2)
        .expect_err("missing shard");
    assert!(
        matches!(err, DistError::Inconsistent(_) | DistError::Argument(_)),
        "{err}"
    );
}

/// `srl-dist partition --nodes --edges` writes graph shards of a CSV graph with a seeded
/// fraction of its labels kept; ICA on them equals the whole-graph run on the same labels;
/// the binary refuses to overwrite them without `--force`, and `run --shards` (loopy BP)
/// refuses graph shards with a typed message.
#[test]
fn partition_command_writes_graph_shards_from_csv() {
    let dir = tempfile::tempdir().expect("temp dir");
    let g = featured_graph(150, 3, 4, false, 10);
    let mut nodes = String::from("id,label,f1,f2,f3,f4\n");
    for v in 0..g.num_nodes() {
        let row = g.attributes_of(NodeId::new(v)).to_dense(4);
        let label = g.labels()[v].map_or(String::new(), |c| format!("c{c}"));
        let feats: Vec<String> = row.iter().map(|x| format!("{x:?}")).collect();
        nodes.push_str(&format!("n{v},{label},{}\n", feats.join(",")));
    }
    let mut edges = String::from("src,dst\n");
    for &(a, b) in g.edge_list() {
        edges.push_str(&format!("n{},n{}\n", a.index(), b.index()));
    }
    let (nodes_csv, edges_csv) = (dir.path().join("nodes.csv"), dir.path().join("edges.csv"));
    std::fs::write(&nodes_csv, nodes).expect("write");
    std::fs::write(&edges_csv, edges).expect("write");
    let out = dir.path().join("shards");
    let partition = |force: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_srl-dist"));
        c.arg("partition")
            .arg("--nodes")
            .arg(&nodes_csv)
            .arg("--edges")
            .arg(&edges_csv)
            .args(["--parts", "2", "--observe", "0.6", "--seed", "3", "--out"])
            .arg(&out);
        if force {
            c.arg("--force");
        }
        c.output().expect("srl-dist runs")
    };
    let first = partition(false);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let again = partition(false);
    assert!(!again.status.success(), "existing shards need --force");
    assert!(partition(true).status.success());
    // The same graph and kept labels in process (the binary's seeded rule).
    let g = srl_graph::load_csv(&nodes_csv, &edges_csv, &srl_graph::CsvOptions::default())
        .expect("csv")
        .graph;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let kept: Vec<Option<u32>> = g
        .labels()
        .iter()
        .map(|&l| l.filter(|_| rng.random_range(0.0..1.0) < 0.6))
        .collect();
    let g = Arc::new(g.with_labels(kept).expect("labels"));
    let fitted = Arc::new(
        fit_relational_classifier(&g, &Centroids::default(), Aggregator::Count, None).expect("fit"),
    );
    let ica = DistIca::default();
    let whole = ica
        .run_threads(Arc::clone(&g), Arc::clone(&fitted), 1)
        .expect("whole");
    let shards = read_graph_shards(&out, 0..2).expect("read");
    assert_eq!(
        shards[0].num_unknown,
        g.labels().iter().filter(|l| l.is_none()).count() as u64
    );
    let got = ica.run_shards_threads(shards, fitted, 2).expect("sharded");
    for v in 0..g.num_nodes() {
        assert_eq!(got.label(v), whole.label(v), "node {v}");
    }
    let bp = std::process::Command::new(env!("CARGO_BIN_EXE_srl-dist"))
        .args(["run", "-w", "2", "--shards"])
        .arg(&out)
        .output()
        .expect("srl-dist runs");
    let err = String::from_utf8_lossy(&bp.stderr);
    assert!(!bp.status.success() && err.contains("graph shard"), "{err}");
}

/// Two timely processes of one cluster on 127.0.0.1 (`-n 2 -p 0/1`, here two threads of
/// the test, each with its own execution and TCP connections), each reading only its own
/// graph shard: the union of their labels is the whole-graph run's. Bounded by a timeout.
#[test]
fn sharded_ica_two_processes_on_loopback() {
    let dir = tempfile::tempdir().expect("temp dir");
    let g = featured_graph(200, 3, 5, true, 12);
    let fitted = Arc::new(
        fit_relational_classifier(&g, &Centroids::default(), Aggregator::Proportion, None)
            .expect("fit"),
    );
    let ica = DistIca {
        max_iters: 30,
        aggregator: Aggregator::Proportion,
        partition: Partition::Range,
    };
    let whole = ica
        .run_threads(Arc::new(g.clone()), Arc::clone(&fitted), 1)
        .expect("whole");
    let out = dir.path().join("shards");
    partition_graph(&g, 2, Strategy::Fennel, &out, false, &[]).expect("partition");
    let hosts = dir.path().join("hosts.txt");
    let (p0, p1) = (common::free_port(), common::free_port());
    std::fs::write(&hosts, format!("127.0.0.1:{p0}\n127.0.0.1:{p1}\n")).expect("host file");
    let (tx, rx) = std::sync::mpsc::channel();
    for p in 0..2usize {
        let (tx, out, hosts, fitted) =
            (tx.clone(), out.clone(), hosts.clone(), Arc::clone(&fitted));
        std::thread::spawn(move || {
            let args: Vec<String> = ["srl-dist", "-w", "1", "-n", "2", "-p"]
                .into_iter()
                .map(String::from)
                .chain([p.to_string(), "-h".into(), hosts.display().to_string()])
                .collect();
            let r = timely::Config::from_args(args.into_iter())
                .map_err(DistError::Timely)
                .and_then(|config| {
                    let mine = read_graph_shards(&out, p..p + 1)?;
                    ica.run_shards(mine, fitted, config)
                });
            let _ = tx.send((p, r));
        });
    }
    let mut seen = vec![false; g.num_nodes()];
    for _ in 0..2 {
        let (p, r) = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("both processes finish within 120 s");
        let labels = r.expect("sharded ICA");
        assert!(!labels.nodes().is_empty(), "process {p} owns nodes");
        assert_eq!(labels.convergence(), whole.convergence());
        for &v in labels.nodes() {
            let v = v as usize;
            assert!(!seen[v], "node {v} held twice");
            seen[v] = true;
            assert_eq!(labels.label(v), whole.label(v), "node {v}");
        }
    }
    assert!(seen.iter().all(|&s| s), "every node held once");
}
