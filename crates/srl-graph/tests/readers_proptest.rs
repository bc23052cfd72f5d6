//! Property tests of every srl-graph reader (issue 15): random bytes and random mutations
//! of a valid file (byte flips, truncations, duplicated, deleted and swapped lines, hostile
//! tokens, huge numbers) never panic and never abort; they load or give an error. Readers:
//! LINQS (`.content` + `.cites`, plain and gzip), the CSV node/edge pair, and the Intel lab
//! readings and mote locations (with the snapshot graphs built from what loads).
//!
//! Cases per property: `SRL_PROPTEST_CASES` (default 256, what CI runs);
//! `SRL_PROPTEST_CASES=10000 cargo test -p srl-graph --release --test readers_proptest` is
//! the full run.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use srl_graph::load::intel::{build_snapshots, read_mote_locations, read_readings};
use srl_graph::load::linqs::load_linqs_files;
use srl_graph::{CsvOptions, Directedness, GraphError, IntelParams, LinqsOptions, load_csv};

// The case count and the mutation strategies, one copy for the four reader test files.
#[path = "../../../testkit/reader_mutations.rs"]
mod reader_mutations;
use reader_mutations::*;

const CONTENT: &str = "p1\t1\t0\t0\tA\np2\t0\t1\t0\tB\np3\t1\t1\t1\tA\n\np4\t0\t0\t0.5\tC\n";
const CITES: &str = "p1\tp2\np2\tp1\np3\tp3\np9\tp1\np4\tp2\n";
const NODES: &str = "id,label,f1,f2\nn1,spam,0.5,3\nn2,,1.0,7\nn3,ham,2,-1\n";
const EDGES: &str = "src,dst\nn1,n2\nn2,n3\nn3,n3\n";
const READINGS: &str = "2004-03-04 00:00:26.98 14285 1 20.5 35.8 46.92 2.65\n2004-03-04 00:00:27.98 14285 2 20.6 35.9  2.64\n2004-03-04 00:00:28.98 14286 2 20.7 36.0 300.5 2.64\n2004-03-04 00:00:29.98 14287 3 21.0 30.0 10.0 2.60\n2004-03-04 00:00:57.05 14290 1 20.5 35.8 46.92 2.65\n";
const MOTES: &str = "1 0 0\n2 3 4\n3 10 0\n";

const LINQS_EXTRA: &[&str] = &["p1", "p2", "A", "B", "\t\t", "1\t", "0.5"];
const CSV_EXTRA: &[&str] = &["id,label", "src,dst", "n1", "n2", ",,", "1e400", ",x"];
const INTEL_EXTRA: &[&str] = &["2004-03-04", "00:00:26.98", "65536", "4294967295", "  "];

/// A per-test scratch folder (tests of this file run in parallel threads).
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("srl-graph-readers-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

fn put(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).expect("write");
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).expect("gzip");
    e.finish().expect("gzip")
}

/// A load that succeeded or failed with a typed error is fine; only a panic fails.
fn linqs(dir: &Path, content: &[u8], cites: &[u8]) {
    let (c, k) = (dir.join("t.content"), dir.join("t.cites"));
    put(&c, content);
    put(&k, cites);
    for d in [Directedness::Undirected, Directedness::Directed] {
        let o = LinqsOptions {
            directedness: d,
            ..LinqsOptions::default()
        };
        if let Ok((g, r)) = load_linqs_files(&c, &k, &o) {
            assert_eq!(g.num_nodes(), r.nodes);
            assert_eq!(g.num_edges(), r.edges);
        }
    }
    let fixed = LinqsOptions {
        labels: Some(vec!["A".into(), "B".into()]),
        ..LinqsOptions::default()
    };
    let _ = load_linqs_files(&c, &k, &fixed);
}

fn csv(dir: &Path, nodes: &[u8], edges: &[u8]) {
    let (n, e) = (dir.join("nodes.csv"), dir.join("edges.csv"));
    put(&n, nodes);
    put(&e, edges);
    if let Ok(g) = load_csv(&n, &e, &CsvOptions::default()) {
        assert_eq!(g.graph.num_features(), g.feature_names.len());
    }
}

fn intel(dir: &Path, readings: &[u8], motes: &[u8]) {
    let (r, m) = (dir.join("readings.txt"), dir.join("mote_locs.txt"));
    put(&r, readings);
    put(&m, motes);
    let (Ok(rs), Ok(ms)) = (read_readings(&r), read_mote_locations(&m)) else {
        return;
    };
    let params = IntelParams {
        window_epochs: 2,
        min_motes: 1,
        ..IntelParams::default()
    };
    let _ = build_snapshots(&rs, &ms, &params);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn linqs_random_bytes_never_panic(
        a in proptest::collection::vec(any::<u8>(), 0..400),
        b in proptest::collection::vec(any::<u8>(), 0..200),
        gz in any::<bool>(),
    ) {
        let d = scratch("linqs-bytes");
        if gz {
            linqs(&d, &gzip(&a), &gzip(&b));
        } else {
            linqs(&d, &a, &b);
        }
    }

    #[test]
    fn linqs_mutations_never_panic(ec in edits(), ek in edits(), gz in any::<bool>()) {
        let d = scratch("linqs-mut");
        let c = mutate(CONTENT.as_bytes(), &ec, LINQS_EXTRA);
        let k = mutate(CITES.as_bytes(), &ek, LINQS_EXTRA);
        if gz {
            // also a corrupt gzip stream: flip bytes of the compressed file
            linqs(&d, &mutate(&gzip(&c), &ec[..1], &[]), &gzip(&k));
        } else {
            linqs(&d, &c, &k);
        }
    }

    #[test]
    fn csv_random_bytes_never_panic(
        a in proptest::collection::vec(any::<u8>(), 0..400),
        b in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let d = scratch("csv-bytes");
        csv(&d, &a, &b);
        // with valid headers, so the rows are parsed
        let mut n = b"id,label,f1\n".to_vec();
        n.extend_from_slice(&a);
        let mut e = b"src,dst\n".to_vec();
        e.extend_from_slice(&b);
        csv(&d, &n, &e);
    }

    #[test]
    fn csv_mutations_never_panic(en in edits(), ee in edits()) {
        let d = scratch("csv-mut");
        csv(
            &d,
            &mutate(NODES.as_bytes(), &en, CSV_EXTRA),
            &mutate(EDGES.as_bytes(), &ee, CSV_EXTRA),
        );
    }

    #[test]
    fn intel_random_bytes_never_panic(
        a in proptest::collection::vec(any::<u8>(), 0..400),
        b in proptest::collection::vec(any::<u8>(), 0..100),
    ) {
        let d = scratch("intel-bytes");
        intel(&d, &a, &b);
        intel(&d, &a, MOTES.as_bytes());
    }

    #[test]
    fn intel_mutations_never_panic(er in edits(), em in edits()) {
        let d = scratch("intel-mut");
        intel(
            &d,
            &mutate(READINGS.as_bytes(), &er, INTEL_EXTRA),
            &mutate(MOTES.as_bytes(), &em, INTEL_EXTRA),
        );
    }
}

#[test]
fn the_valid_samples_load() -> Result<(), GraphError> {
    let d = scratch("valid");
    let (c, k) = (d.join("t.content"), d.join("t.cites"));
    put(&c, CONTENT.as_bytes());
    put(&k, CITES.as_bytes());
    let (g, _) = load_linqs_files(&c, &k, &LinqsOptions::default())?;
    assert_eq!(g.num_nodes(), 4);
    let (n, e) = (d.join("nodes.csv"), d.join("edges.csv"));
    put(&n, NODES.as_bytes());
    put(&e, EDGES.as_bytes());
    assert_eq!(
        load_csv(&n, &e, &CsvOptions::default())?.graph.num_nodes(),
        3
    );
    let (r, m) = (d.join("readings.txt"), d.join("mote_locs.txt"));
    put(&r, READINGS.as_bytes());
    put(&m, MOTES.as_bytes());
    assert_eq!(read_readings(&r)?.len(), 5);
    assert_eq!(read_mote_locations(&m)?.len(), 3);
    Ok(())
}
