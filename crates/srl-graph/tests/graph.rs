//! Integration tests of srl-graph: loaders on tiny fixtures (good and malformed input),
//! property tests of splits and generators, and (when `SRL_DATA_DIR` is set) the counts of
//! the real Cora and Citeseer files.
#![allow(clippy::print_stderr)] // skipped real-data checks say so on stderr

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use srl_graph::load::intel::{build_snapshots, read_mote_locations, read_readings};
use srl_graph::load::linqs::load_linqs_files;
use srl_graph::{
    Attributes, CsvOptions, Directedness, GraphError, HomophilyParams, IntelParams, KFold,
    LabelSet, LinqsOptions, NodeId, ParseErrorKind, RelationalGraph, SenGetoorParams, load_csv,
    load_linqs, snowball_splits,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Asserts a parse error at `file`:`line` and returns its kind.
fn parse_error(e: GraphError, file: &str, line: usize) -> ParseErrorKind {
    let msg = e.to_string();
    match e {
        GraphError::Parse {
            path,
            line: l,
            kind,
        } => {
            assert!(path.ends_with(file), "{msg}");
            assert_eq!(l, line, "{msg}");
            assert!(
                msg.contains(file) && msg.contains(&format!(":{line}:")),
                "{msg}"
            );
            kind
        }
        other => panic!("expected a parse error, got {other}"),
    }
}

#[derive(Serialize)]
struct GraphSummary {
    nodes: usize,
    edges: usize,
    labels: Vec<String>,
    features: usize,
    node_names: Vec<String>,
    node_labels: Vec<Option<u32>>,
    edge_list: Vec<(u32, u32)>,
    dense_rows: Vec<Vec<f64>>,
}

fn summary(g: &RelationalGraph) -> GraphSummary {
    GraphSummary {
        nodes: g.num_nodes(),
        edges: g.num_edges(),
        labels: g.label_set().names().to_vec(),
        features: g.num_features(),
        node_names: g.node_names().to_vec(),
        node_labels: g.labels().to_vec(),
        edge_list: g.edge_list().iter().map(|&(u, v)| (u.0, v.0)).collect(),
        dense_rows: g
            .nodes()
            .map(|v| g.attributes_of(v).to_dense(g.num_features()))
            .collect(),
    }
}

#[test]
fn linqs_fixture_plain_and_gzip_agree() {
    let opts = LinqsOptions::default();
    let (g, r) =
        load_linqs_files(&fixture("tiny.content"), &fixture("tiny.cites"), &opts).expect("loads");
    let (gz, rz) = load_linqs(&fixture(""), "gz", &opts).expect("loads gz");
    assert!(rz.content_path.ends_with("gz.content.gz"));
    assert_eq!(summary(&g).edge_list, summary(&gz).edge_list);
    assert_eq!(
        (r.self_loops, r.dangling_lines, r.merged_duplicates),
        (1, 1, 1)
    );
    assert_eq!(r.dangling_ids, vec!["ghost".to_string()]);
    insta::assert_json_snapshot!("linqs_tiny", summary(&g));
}

#[test]
fn linqs_malformed_inputs_name_file_and_line() {
    let cites = fixture("tiny.cites");
    let o = LinqsOptions::default();
    let load = |c: &str| load_linqs_files(&fixture(c), &cites, &o).expect_err("must fail");
    assert_eq!(
        parse_error(load("truncated.content"), "truncated.content", 2),
        ParseErrorKind::Truncated {
            expected: 2,
            found: 1
        }
    );
    assert_eq!(
        parse_error(load("featcount.content"), "featcount.content", 2),
        ParseErrorKind::FeatureCount {
            expected: 3,
            found: 2
        }
    );
    assert!(matches!(
        parse_error(load("badnum.content"), "badnum.content", 2),
        ParseErrorKind::BadNumber { field: 3, .. }
    ));
    assert_eq!(
        parse_error(load("nonutf8.content"), "nonutf8.content", 2),
        ParseErrorKind::NonUtf8
    );
    let fixed = LinqsOptions {
        labels: Some(vec!["A".into(), "B".into()]),
        ..LinqsOptions::default()
    };
    let e = load_linqs_files(&fixture("unknown.content"), &cites, &fixed).expect_err("fails");
    assert_eq!(
        parse_error(e, "unknown.content", 2),
        ParseErrorKind::UnknownLabel { label: "Z".into() }
    );
    let e = load_linqs_files(&fixture("tiny.content"), &fixture("truncated.cites"), &o)
        .expect_err("fails");
    assert_eq!(
        parse_error(e, "truncated.cites", 1),
        ParseErrorKind::Truncated {
            expected: 2,
            found: 1
        }
    );
    let e = load_linqs(&fixture(""), "absent", &o).expect_err("missing");
    assert!(matches!(&e, GraphError::Io { path, .. } if path.ends_with("absent.content")));
}

/// Issue 15: a LINQS line with an empty label (a trailing tab) used to be reported as a
/// wrong feature count; an empty field inside a line shifted every later field.
#[test]
fn linqs_empty_label_and_empty_field_are_named() {
    let dir = std::env::temp_dir().join(format!("srl-graph-empty-label-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let cites = dir.join("e.cites");
    std::fs::write(&cites, "p1\tp2\n").expect("write");
    let o = LinqsOptions::default();
    for (name, text, want) in [
        (
            "label.content",
            "p1\t1\t0\tA\np2\t0\t1\t\n",
            ParseErrorKind::EmptyLabel,
        ),
        (
            "label_cr.content",
            "p1\t1\t0\tA\r\np2\t0\t1\t \r\n",
            ParseErrorKind::EmptyLabel,
        ),
        (
            "field.content",
            "p1\t1\t0\tA\np2\t0\t\t1\tB\n",
            ParseErrorKind::EmptyField { field: 3 },
        ),
        (
            "id.content",
            "p1\t1\t0\tA\n\t0\t1\tB\n",
            ParseErrorKind::EmptyField { field: 1 },
        ),
    ] {
        let content = dir.join(name);
        std::fs::write(&content, text).expect("write");
        let e = load_linqs_files(&content, &cites, &o).expect_err("must fail");
        assert_eq!(parse_error(e, name, 2), want, "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn io_error_cause_is_printed_once() {
    let e = load_linqs(&fixture(""), "absent", &LinqsOptions::default()).expect_err("missing");
    let top = e.to_string();
    let cause = std::error::Error::source(&e)
        .map(ToString::to_string)
        .expect("the I/O error is the source");
    assert!(top.contains("absent.content"), "{top}");
    assert!(
        !top.contains(&cause),
        "cause printed twice: {top} / {cause}"
    );
}

#[test]
fn csv_fixture_and_errors() {
    let o = CsvOptions::default();
    let g = load_csv(&fixture("nodes.csv"), &fixture("edges.csv"), &o).expect("loads");
    assert_eq!(g.feature_names, vec!["f1".to_string(), "f2".to_string()]);
    assert_eq!(g.graph.cleanup().self_loops, 1);
    insta::assert_json_snapshot!("csv_nodes", summary(&g.graph));
    let e = load_csv(&fixture("nodes_featcount.csv"), &fixture("edges.csv"), &o).expect_err("x");
    assert_eq!(
        parse_error(e, "nodes_featcount.csv", 2),
        ParseErrorKind::FeatureCount {
            expected: 2,
            found: 1
        }
    );
    let e = load_csv(&fixture("nodes.csv"), &fixture("edges_unknown.csv"), &o).expect_err("x");
    assert_eq!(
        parse_error(e, "edges_unknown.csv", 2),
        ParseErrorKind::UnknownNode { id: "n9".into() }
    );
    let e = load_csv(&fixture("nodes_badheader.csv"), &fixture("edges.csv"), &o).expect_err("x");
    assert!(matches!(
        parse_error(e, "nodes_badheader.csv", 1),
        ParseErrorKind::BadHeader { .. }
    ));
    let fixed = CsvOptions {
        labels: Some(vec!["spam".into()]),
        ..CsvOptions::default()
    };
    let e = load_csv(&fixture("nodes.csv"), &fixture("edges.csv"), &fixed).expect_err("x");
    assert_eq!(
        parse_error(e, "nodes.csv", 4),
        ParseErrorKind::UnknownLabel {
            label: "ham".into()
        }
    );
    let e = load_csv(&fixture("missing.csv"), &fixture("edges.csv"), &o).expect_err("x");
    assert!(matches!(e, GraphError::Io { .. }));
    assert!(e.to_string().contains("missing.csv"));
}

#[test]
fn intel_fixture_and_errors() {
    let r = read_readings(&fixture("readings_ok.txt")).expect("parses");
    assert_eq!(r.len(), 5);
    assert_eq!(r[1].light, None);
    assert_eq!(r[1].voltage, Some(2.64));
    let locs = read_mote_locations(&fixture("mote_locs.txt")).expect("parses");
    assert_eq!(locs.len(), 3);
    let p = IntelParams {
        window_epochs: 5,
        min_motes: 3,
        ..IntelParams::default()
    };
    let d = build_snapshots(&r, &locs, &p).expect("builds");
    assert_eq!(d.snapshots.len(), 1);
    #[derive(Serialize)]
    struct IntelSummary {
        report: srl_graph::IntelReport,
        light_cuts: Vec<f64>,
        temperature_cuts: Vec<f64>,
        first_epoch: u32,
        motes: Vec<u16>,
        graph: GraphSummary,
    }
    insta::assert_json_snapshot!(
        "intel_tiny",
        IntelSummary {
            report: d.report.clone(),
            light_cuts: d.light.cuts().to_vec(),
            temperature_cuts: d.temperature.cuts().to_vec(),
            first_epoch: d.snapshots[0].first_epoch,
            motes: d.snapshots[0].motes.clone(),
            graph: summary(&d.snapshots[0].graph),
        }
    );
    let e = read_readings(&fixture("readings_truncated.txt")).expect_err("fails");
    assert_eq!(
        parse_error(e, "readings_truncated.txt", 3),
        ParseErrorKind::Truncated {
            expected: 8,
            found: 7
        }
    );
    let e = read_readings(&fixture("readings_badnum.txt")).expect_err("fails");
    assert_eq!(
        parse_error(e, "readings_badnum.txt", 2),
        ParseErrorKind::BadNumber {
            text: "abc".into(),
            field: 6
        }
    );
    let e = read_readings(&fixture("nope.txt")).expect_err("fails");
    assert!(matches!(e, GraphError::Io { .. }));
}

fn data_dir() -> Option<PathBuf> {
    match std::env::var_os("SRL_DATA_DIR") {
        Some(d) => Some(PathBuf::from(d)),
        None => {
            eprintln!("SRL_DATA_DIR unset: skipping real-data checks");
            None
        }
    }
}

#[test]
fn real_cora_and_citeseer_counts() {
    let Some(dir) = data_dir() else { return };
    let o = LinqsOptions::default();
    let cora = dir.join("cora");
    if cora.is_dir() {
        let (g, r) = load_linqs(&cora, "cora", &o).expect("cora loads");
        assert_eq!(
            (
                g.num_nodes(),
                g.num_edges(),
                g.num_labels(),
                g.num_features()
            ),
            (2708, 5278, 7, 1433)
        );
        assert_eq!(
            (r.cite_lines, r.merged_duplicates, r.self_loops),
            (5429, 151, 0)
        );
        assert_eq!((r.dangling_lines, r.nonzeros), (0, 49_216));
        assert_eq!(g.isolated_nodes(), 0);
    } else {
        eprintln!("{} missing: skipping Cora", cora.display());
    }
    let citeseer = dir.join("citeseer");
    if citeseer.is_dir() {
        let (g, r) = load_linqs(&citeseer, "citeseer", &o).expect("citeseer loads");
        assert_eq!(
            (
                g.num_nodes(),
                g.num_edges(),
                g.num_labels(),
                g.num_features()
            ),
            (3312, 4536, 6, 3703)
        );
        assert_eq!(
            (
                r.cite_lines,
                r.self_loops,
                r.dangling_lines,
                r.dangling_ids.len()
            ),
            (4732, 124, 17, 15)
        );
        assert_eq!(g.isolated_nodes(), 48);
        assert_eq!(r.nonzeros, 105_165);
    } else {
        eprintln!("{} missing: skipping Citeseer", citeseer.display());
    }
}

fn random_graph(n: usize, m: usize, seed: u64) -> RelationalGraph {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    use rand::RngExt as _;
    let edges = (0..m)
        .map(|_| {
            (
                NodeId::new(rng.random_range(0..n)),
                NodeId::new(rng.random_range(0..n)),
            )
        })
        .collect();
    RelationalGraph::new(
        Vec::new(),
        Attributes::none(n),
        (0..n).map(|_| Some(rng.random_range(0..3u32))).collect(),
        LabelSet::numbered(3),
        edges,
        Directedness::Undirected,
    )
    .expect("valid")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn kfold_partitions_nodes(n in 1usize..300, k in 1usize..12, seed in any::<u64>()) {
        prop_assume!(k <= n);
        let f = KFold::random(n, k, &mut ChaCha8Rng::seed_from_u64(seed)).expect("valid");
        let mut seen = vec![0u32; n];
        let mut sizes = Vec::new();
        for s in f.splits() {
            sizes.push(s.num_test());
            for v in s.test_nodes() {
                seen[v.index()] += 1;
            }
            let train = s.train_mask();
            prop_assert!(train.iter().zip(s.test_mask()).all(|(a, b)| a != b));
        }
        prop_assert!(seen.iter().all(|&c| c == 1));
        let (lo, hi) = (sizes.iter().min().copied(), sizes.iter().max().copied());
        prop_assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1));
        let again = KFold::random(n, k, &mut ChaCha8Rng::seed_from_u64(seed)).expect("valid");
        prop_assert_eq!(f, again);
    }

    #[test]
    fn stratified_partitions_nodes(strata in proptest::collection::vec(0usize..4, 1..200), k in 1usize..6, seed in any::<u64>()) {
        prop_assume!(k <= strata.len());
        let f = KFold::stratified(&strata, k, &mut ChaCha8Rng::seed_from_u64(seed)).expect("valid");
        let mut seen = vec![0u32; strata.len()];
        for s in f.splits() {
            for v in s.test_nodes() {
                seen[v.index()] += 1;
            }
        }
        prop_assert!(seen.iter().all(|&c| c == 1));
        // every stratum is spread evenly: per fold counts differ by at most one.
        for st in 0..4 {
            let counts: Vec<usize> = f.splits().map(|s| s.test_nodes().iter().filter(|v| strata[v.index()] == st).count()).collect();
            let (lo, hi) = (counts.iter().min().copied().unwrap_or(0), counts.iter().max().copied().unwrap_or(0));
            prop_assert!(hi - lo <= 1);
        }
    }

    #[test]
    fn snowball_sizes_and_determinism(n in 2usize..200, m in 0usize..400, k in 1usize..8, seed in any::<u64>()) {
        prop_assume!(k <= n);
        let g = random_graph(n, m, seed);
        let a = snowball_splits(&g, k, &mut ChaCha8Rng::seed_from_u64(seed)).expect("valid");
        let b = snowball_splits(&g, k, &mut ChaCha8Rng::seed_from_u64(seed)).expect("valid");
        prop_assert_eq!(&a, &b);
        let size = ((n as f64) / (k as f64)).round().max(1.0) as usize;
        for s in &a {
            prop_assert_eq!(s.num_test(), size);
        }
    }

    #[test]
    fn snowball_stays_in_component(n in 10usize..120, seed in any::<u64>()) {
        // A connected graph (a path plus random chords): every test set is connected.
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        use rand::RngExt as _;
        let mut edges: Vec<(NodeId, NodeId)> = (0..n - 1).map(|i| (NodeId::new(i), NodeId::new(i + 1))).collect();
        for _ in 0..n / 3 {
            edges.push((NodeId::new(rng.random_range(0..n)), NodeId::new(rng.random_range(0..n))));
        }
        let g = RelationalGraph::new(Vec::new(), Attributes::none(n), (0..n).map(|i| Some((i % 2) as u32)).collect(), LabelSet::numbered(2), edges, Directedness::Undirected).expect("valid");
        for s in snowball_splits(&g, 3, &mut rng).expect("valid") {
            let t = s.test_mask();
            let labels: Vec<Option<u32>> = (0..n).map(|v| t[v].then_some(0)).collect();
            // Restrict to test nodes: connected components among them.
            let edges: Vec<(NodeId, NodeId)> = g.edge_list().iter().copied().filter(|&(u, v)| t[u.index()] && t[v.index()]).collect();
            let sub = RelationalGraph::new(Vec::new(), Attributes::none(n), labels, LabelSet::numbered(1), edges, Directedness::Undirected).expect("valid");
            let (_, comps) = sub.connected_components();
            // components = 1 (the snowball) + the non-test nodes, each isolated.
            prop_assert_eq!(comps, 1 + (n - s.num_test()));
        }
    }

    #[test]
    fn csr_matches_a_naive_oracle(n in 1usize..60, raw in proptest::collection::vec((0u32..60, 0u32..60), 0..300), directed in any::<bool>()) {
        let edges: Vec<(NodeId, NodeId)> = raw.iter().map(|&(u, v)| (NodeId(u % n as u32), NodeId(v % n as u32))).collect();
        let d = if directed { Directedness::Directed } else { Directedness::Undirected };
        let g = RelationalGraph::new(Vec::new(), Attributes::none(n), vec![None; n], LabelSet::numbered(1), edges.clone(), d).expect("valid");
        let mut expect: Vec<(NodeId, NodeId)> = edges
            .iter()
            .filter(|(u, v)| u != v)
            .map(|&(u, v)| if !directed && u > v { (v, u) } else { (u, v) })
            .collect();
        expect.sort_unstable();
        expect.dedup();
        prop_assert_eq!(g.edge_list(), &expect[..]);
        for v in g.nodes() {
            let mut nb: Vec<(NodeId, u32)> = expect
                .iter()
                .enumerate()
                .filter_map(|(e, &(a, b))| if a == v { Some((b, e as u32)) } else if b == v { Some((a, e as u32)) } else { None })
                .collect();
            nb.sort_unstable();
            let got: Vec<(NodeId, u32)> = g.neighbors(v).iter().copied().zip(g.incident_edges(v).iter().map(|e| e.0)).collect();
            prop_assert_eq!(got, nb);
        }
    }

    #[test]
    fn generators_are_deterministic(seed in any::<u64>(), rho in 0.5f64..=1.0, alpha in 0.0f64..0.5) {
        let p = SenGetoorParams { num_nodes: 120, rho, alpha, ..SenGetoorParams::default() };
        let a = p.generate(&mut ChaCha8Rng::seed_from_u64(seed)).expect("valid");
        let b = p.generate(&mut ChaCha8Rng::seed_from_u64(seed)).expect("valid");
        prop_assert_eq!(a.graph.edge_list(), b.graph.edge_list());
        prop_assert_eq!(a.graph.labels(), b.graph.labels());
        prop_assert_eq!(&a.costs, &b.costs);
        prop_assert_eq!(a.graph.num_nodes(), 120);
        let h = HomophilyParams { num_nodes: 500, ..HomophilyParams::default() };
        let x = h.generate(&mut ChaCha8Rng::seed_from_u64(seed)).expect("valid");
        let y = h.generate(&mut ChaCha8Rng::seed_from_u64(seed)).expect("valid");
        prop_assert_eq!(x.edge_list(), y.edge_list());
        prop_assert_eq!(x.attributes(), y.attributes());
    }
}
