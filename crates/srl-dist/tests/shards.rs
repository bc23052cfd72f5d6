//! Sharded runs: `partition_uai` + `DistBp::run_shards` equal srl-infer's flooding
//! `LoopyBp` on the same UAI file to 1e-12 for 1, 2 and 4 parts and every partitioner;
//! the locality-aware partitioners cut fewer edges than hashing; sharded Gibbs equals
//! srl-infer bit for bit; hostile shard files (model shards and ICA's graph shards) give
//! typed errors.

use std::path::Path;
use std::sync::Arc;

mod common;

use common::{random_mrf, random_mrf_small_range};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_dist::stream::{assign, cut_edges};
use srl_dist::{
    DistBp, DistError, GraphShard, Shard, Strategy, barabasi_albert_mrf, partition_graph,
    partition_uai, read_graph_shards, read_shards,
};
use srl_infer::{BpMode, LoopyBp, PairwiseMrf, read_uai_evidence};

fn config(workers: usize) -> timely::Config {
    if workers == 1 {
        timely::Config::thread()
    } else {
        timely::Config::process(workers)
    }
}

/// `common::random_mrf` (mixed state counts, a wide table, parallel edges) without its
/// evidence (the evidence goes to a separate file).
fn mixed_mrf(n: usize, rng: &mut impl Rng) -> PairwiseMrf {
    let mut parts = random_mrf(n, rng).to_parts();
    parts.evidence = Vec::new();
    PairwiseMrf::new(parts).expect("valid model")
}

/// Writes `mrf` (and evidence `ev`) as UAI files in `dir`; returns srl-infer's model read
/// back from them (the reference reads what the partitioner reads).
fn write_model(dir: &Path, mrf: &PairwiseMrf, ev: Option<&[Option<u32>]>) -> PairwiseMrf {
    let uai = dir.join("model.uai");
    mrf.write_uai(&uai).expect("write UAI");
    let back = PairwiseMrf::read_uai(&uai).expect("read UAI");
    match ev {
        Some(ev) => {
            let with = back.clone().with_evidence(ev.to_vec()).expect("evidence");
            std::fs::write(dir.join("model.uai.evid"), with.evidence_to_uai_string())
                .expect("write evidence");
            let read = read_uai_evidence(dir.join("model.uai.evid"), back.num_nodes())
                .expect("read evidence");
            back.with_evidence(read).expect("evidence")
        }
        None => back,
    }
}

fn assert_sharded_equal(dir: &Path, reference: &PairwiseMrf, bp: LoopyBp, with_evidence: bool) {
    let single = bp.run(reference);
    let uai = dir.join("model.uai");
    let evid = dir.join("model.uai.evid");
    for parts in [1usize, 2, 4] {
        for strategy in [
            Strategy::Range,
            Strategy::Hash,
            Strategy::Ldg,
            Strategy::Fennel,
        ] {
            let out = dir.join(format!("{strategy:?}-{parts}"));
            let report = partition_uai(
                &uai,
                with_evidence.then_some(evid.as_path()),
                parts,
                strategy,
                &out,
                false,
            )
            .expect("partition");
            assert_eq!(
                report.part_nodes.iter().sum::<u64>(),
                reference.num_nodes() as u64
            );
            let shards = read_shards(&out, 0..parts).expect("read shards");
            let dist = DistBp::from_loopy(&bp)
                .run_shards(shards, config(parts))
                .expect("sharded run");
            let (a, b) = (single.convergence(), dist.convergence());
            assert_eq!(a.iterations, b.iterations, "{parts} parts, {strategy:?}");
            assert_eq!(a.converged, b.converged);
            for v in 0..reference.num_nodes() {
                let y = dist.node(v).expect("every node held");
                for (p, q) in single.node(v).iter().zip(y) {
                    assert!(
                        (p - q).abs() <= 1e-12,
                        "node {v}: {p} vs {q} ({parts} parts, {strategy:?})"
                    );
                }
            }
        }
    }
}

#[test]
fn sharded_two_state_marginals_equal_srl_infer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mrf = barabasi_albert_mrf(600, 2, 0.6, &mut rng).expect("model");
    let reference = write_model(dir.path(), &mrf, None);
    let bp = LoopyBp {
        max_iters: 80,
        tol: 1e-11,
        ..LoopyBp::default()
    };
    assert_sharded_equal(dir.path(), &reference, bp, false);
}

#[test]
fn sharded_mixed_damped_max_product_with_evidence_equal_srl_infer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let mrf = mixed_mrf(120, &mut rng);
    let ev: Vec<Option<u32>> = (0..120).map(|v| (v % 7 == 2).then_some(1)).collect();
    let reference = write_model(dir.path(), &mrf, Some(&ev));
    for (mode, damping) in [(BpMode::SumProduct, 0.3), (BpMode::MaxProduct, 0.0)] {
        let sub = dir.path().join(format!("{mode:?}"));
        std::fs::create_dir(&sub).expect("dir");
        for f in ["model.uai", "model.uai.evid"] {
            std::fs::copy(dir.path().join(f), sub.join(f)).expect("copy");
        }
        let bp = LoopyBp {
            max_iters: 60,
            tol: 1e-10,
            damping,
            mode,
            ..LoopyBp::default()
        };
        assert_sharded_equal(&sub, &reference, bp, true);
    }
}

#[test]
fn sharded_gibbs_equals_srl_infer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let mut parts = random_mrf_small_range(80, &mut rng).to_parts();
    parts.evidence = Vec::new();
    let mrf = PairwiseMrf::new(parts).expect("valid model");
    let ev: Vec<Option<u32>> = (0..80).map(|v| (v % 9 == 4).then_some(0)).collect();
    let reference = write_model(dir.path(), &mrf, Some(&ev));
    let g = srl_infer::Gibbs {
        burn_in: 10,
        samples: 40,
        thinning: 2,
        beliefs: srl_infer::Beliefs::NodesOnly,
        ..srl_infer::Gibbs::default()
    };
    let seed = ChaCha8Rng::seed_from_u64(77);
    let single = g.run(&reference, &mut seed.clone()).expect("gibbs");
    for parts in [1usize, 2, 4] {
        let out = dir.path().join(format!("g{parts}"));
        partition_uai(
            &dir.path().join("model.uai"),
            Some(&dir.path().join("model.uai.evid")),
            parts,
            Strategy::Ldg,
            &out,
            false,
        )
        .expect("partition");
        let shards = read_shards(&out, 0..parts).expect("shards");
        let dist = srl_dist::DistGibbs::from_gibbs(&g)
            .run_shards(shards, config(parts), &seed)
            .expect("sharded gibbs");
        assert_eq!(
            single.marginals.convergence().max_residual,
            dist.convergence().max_residual
        );
        for v in 0..reference.num_nodes() {
            assert_eq!(
                single.marginals.node(v),
                dist.node(v).expect("held"),
                "node {v}, {parts} parts"
            );
        }
    }
}

#[test]
fn locality_aware_partitioners_cut_fewer_edges_than_hashing() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let n = 20_000;
    let edges = barabasi_albert_mrf(n, 2, 0.5, &mut rng).expect("model");
    let list: Vec<(u32, u32)> = (0..edges.num_edges())
        .map(|e| {
            let (a, b) = edges.edge(e);
            (a as u32, b as u32)
        })
        .collect();
    let mut in_off = vec![0usize];
    let mut in_src = Vec::new();
    for v in 0..n {
        in_src.extend(edges.neighbors(v).map(|(u, _)| u as u32));
        in_off.push(in_src.len());
    }
    for parts in [2usize, 4, 8] {
        let cut = |s| cut_edges(&list, &assign(s, &in_off, &in_src, parts));
        let (hash, ldg, fennel) = (
            cut(Strategy::Hash),
            cut(Strategy::Ldg),
            cut(Strategy::Fennel),
        );
        assert!(
            ldg < hash && fennel < hash,
            "{parts} parts: hash {hash}, ldg {ldg}, fennel {fennel}"
        );
    }
}

/// FNV-1a 64, the shard checksum (to forge files that pass it).
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// `bytes` with its checksum recomputed.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    let n = bytes.len() - 8;
    let h = fnv(&bytes[..n]);
    bytes[n..].copy_from_slice(&h.to_le_bytes());
    bytes
}

fn shard_error(path: &Path, bytes: &[u8]) -> (u64, String) {
    std::fs::write(path, bytes).expect("write");
    match Shard::read(path) {
        Err(DistError::Shard {
            file,
            offset,
            message,
        }) => {
            assert_eq!(file, path);
            (offset, message)
        }
        other => panic!("expected a shard error, got {other:?}"),
    }
}

#[test]
fn hostile_shard_files_give_typed_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mrf = mixed_mrf(40, &mut rng);
    write_model(dir.path(), &mrf, None);
    let out = dir.path().join("s");
    partition_uai(
        &dir.path().join("model.uai"),
        None,
        2,
        Strategy::Hash,
        &out,
        false,
    )
    .expect("partition");
    let good = std::fs::read(srl_dist::shard_file(&out, 0)).expect("shard");
    assert!(Shard::read(&srl_dist::shard_file(&out, 0)).is_ok());
    let bad = dir.path().join("bad.shard");
    // Truncated anywhere: the lengths no longer match the header (or the header is cut).
    for cut in [0, 5, 50, 95, 96, 200, good.len() - 1] {
        let (_, msg) = shard_error(&bad, &good[..cut]);
        assert!(
            msg.contains("ends") || msg.contains("bytes"),
            "cut {cut}: {msg}"
        );
    }
    // Wrong magic, wrong version.
    let mut b = good.clone();
    b[0] = b'X';
    assert_eq!(shard_error(&bad, &b).0, 0);
    let mut b = good.clone();
    b[8..12].copy_from_slice(&7u32.to_le_bytes());
    let (off, msg) = shard_error(&bad, &b);
    assert!(off == 8 && msg.contains("version 7"), "{msg}");
    // Huge counts: rejected against the file length before any allocation.
    for field in 0..6 {
        for value in [u64::MAX, 1 << 40, u64::MAX / 20 + 1] {
            let mut b = good.clone();
            let at = 48 + 8 * field;
            b[at..at + 8].copy_from_slice(&value.to_le_bytes());
            let (off, msg) = shard_error(&bad, &b);
            assert_eq!(off, 48, "{msg}");
        }
    }
    // Part out of range.
    let mut b = good.clone();
    b[12..16].copy_from_slice(&9u32.to_le_bytes());
    assert_eq!(shard_error(&bad, &b).0, 12);
    // Out-of-range variable id (first variable record), with a valid checksum.
    let mut b = good.clone();
    b[96..100].copy_from_slice(&1000u32.to_le_bytes());
    let (off, msg) = shard_error(&bad, &resealed(b));
    assert!(off == 96 && msg.contains("1000"), "{msg}");
    // A neighbour id out of range in the first slot, resealed: found by the slot check.
    let s = Shard::read(&srl_dist::shard_file(&out, 0)).expect("shard");
    let slots_at = 96 + 20 * s.nodes.len() + 8 * s.unary.len();
    let mut b = good.clone();
    b[slots_at..slots_at + 4].copy_from_slice(&5000u32.to_le_bytes());
    let (off, msg) = shard_error(&bad, &resealed(b));
    assert!(off == slots_at as u64 && msg.contains("5000"), "{msg}");
    // A kernel index past the tables.
    let mut b = good.clone();
    b[slots_at + 4..slots_at + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    let (off, _) = shard_error(&bad, &resealed(b));
    assert_eq!(off, slots_at as u64 + 4);
    // A NaN unary potential.
    let mut b = good.clone();
    let u = 96 + 20 * s.nodes.len();
    b[u..u + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    let (off, msg) = shard_error(&bad, &resealed(b));
    assert!(off == u as u64 && msg.contains("NaN"), "{msg}");
    // Any flipped byte without resealing: a checksum or an earlier check, never a panic.
    for i in (0..good.len()).step_by(7) {
        let mut b = good.clone();
        b[i] ^= 0x5a;
        let _ = shard_error(&bad, &b);
    }
    // Shards of another model run together: every worker stops with a typed error.
    let other = dir.path().join("o");
    std::fs::create_dir(&other).expect("dir");
    let mrf2 = mixed_mrf(40, &mut rng);
    mrf2.write_uai(other.join("model.uai")).expect("write");
    partition_uai(
        &other.join("model.uai"),
        None,
        2,
        Strategy::Range,
        &other.join("s"),
        false,
    )
    .expect("partition");
    let mixed = vec![
        Shard::read(&srl_dist::shard_file(&out, 0)).expect("a"),
        Shard::read(&srl_dist::shard_file(&other.join("s"), 1)).expect("b"),
    ];
    let r = DistBp::default().run_shards(mixed, config(2));
    assert!(matches!(r, Err(DistError::Inconsistent(_))), "{r:?}");
    // A shard for the wrong worker count.
    let one = read_shards(&out, 0..1).expect("one");
    let r = DistBp::default().run_shards(one, config(1));
    assert!(matches!(r, Err(DistError::Argument(_))), "{r:?}");
}

#[test]
fn partition_refuses_outputs_it_must_not_write() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mrf = Arc::new(mixed_mrf(20, &mut rng));
    mrf.write_uai(dir.path().join("model.uai")).expect("write");
    let uai = dir.path().join("model.uai");
    let out = dir.path().join("s");
    partition_uai(&uai, None, 2, Strategy::Ldg, &out, false).expect("first");
    // Existing shards: only with force.
    assert!(matches!(
        partition_uai(&uai, None, 2, Strategy::Ldg, &out, false),
        Err(DistError::Output(_))
    ));
    partition_uai(&uai, None, 2, Strategy::Ldg, &out, true).expect("forced");
    // A malformed model: a typed error with file and line.
    std::fs::write(dir.path().join("bad.uai"), "MARKOV\n2\n2 2\n1\n2 0 0\n").expect("write");
    match partition_uai(
        &dir.path().join("bad.uai"),
        None,
        2,
        Strategy::Ldg,
        &dir.path().join("b"),
        false,
    ) {
        Err(DistError::Parse { line, message, .. }) => {
            assert_eq!(line, 5, "{message}");
        }
        other => panic!("{other:?}"),
    }
}

/// Two hostile inputs found in review: a UAI file declaring more states than any part
/// could hold (it aborted allocating 32 GB before the cap of srl-infer's reader was
/// applied here too), and a shard whose flags call every table exp-safe while one spans
/// more than 600 nats (it would have run the exp-domain kernels and given wrong
/// marginals silently).
#[test]
fn huge_cardinalities_and_forged_safety_flags_are_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let huge = dir.path().join("huge.uai");
    std::fs::write(&huge, "MARKOV\n1\n4000000000\n0\n").expect("write");
    match partition_uai(&huge, None, 2, Strategy::Hash, &dir.path().join("h"), false) {
        Err(DistError::Parse { line, message, .. }) => {
            assert_eq!(line, 3, "{message}");
            assert!(message.contains("too large to hold"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // one pairwise table from 1e-300 to 1: ln range about 690 nats, so not exp-safe
    let wide = dir.path().join("wide.uai");
    std::fs::write(&wide, "MARKOV\n2\n2 2\n1\n2 0 1\n\n4\n1 1e-300 1e-300 1\n").expect("write");
    let out = dir.path().join("w");
    partition_uai(&wide, None, 1, Strategy::Range, &out, false).expect("partition");
    let good = std::fs::read(srl_dist::shard_file(&out, 0)).expect("shard");
    assert!(Shard::read(&srl_dist::shard_file(&out, 0)).is_ok());
    assert_eq!(good[20], 0, "the writer does not call this table safe");
    let mut b = good.clone();
    b[20] = 1;
    let (_, msg) = shard_error(&dir.path().join("bad.shard"), &resealed(b));
    assert!(msg.contains("exp-safe"), "{msg}");
}

fn graph_shard_error(path: &Path, bytes: &[u8]) -> (u64, String) {
    std::fs::write(path, bytes).expect("write");
    match GraphShard::read(path) {
        Err(DistError::Shard {
            file,
            offset,
            message,
        }) => {
            assert_eq!(file, path);
            (offset, message)
        }
        other => panic!("expected a shard error, got {other:?}"),
    }
}

/// Graph shards (sharded ICA): truncated, corrupt, forged feature rows and labels, and a
/// shard of the wrong kind given to BP or ICA are typed errors naming the file and offset.
#[test]
fn hostile_graph_shard_files_give_typed_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let g = common::featured_graph(60, 3, 5, false, 7);
    let out = dir.path().join("g");
    partition_graph(&g, 2, Strategy::Ldg, &out, false, &[]).expect("partition");
    let file = srl_dist::shard_file(&out, 0);
    let good = std::fs::read(&file).expect("shard");
    let s = GraphShard::read(&file).expect("a good shard reads");
    let bad = dir.path().join("bad.shard");
    // Truncated anywhere.
    for cut in [0, 5, 30, 87, 88, 150, good.len() - 1] {
        let (_, msg) = graph_shard_error(&bad, &good[..cut]);
        assert!(
            msg.contains("ends") || msg.contains("bytes"),
            "cut {cut}: {msg}"
        );
    }
    // Wrong checksum.
    let mut b = good.clone();
    let last = b.len() - 1;
    b[last] ^= 1;
    let (off, msg) = graph_shard_error(&bad, &b);
    assert!(off == last as u64 - 7 && msg.contains("checksum"), "{msg}");
    // Huge section counts: rejected against the file length before any allocation.
    for field in 0..4 {
        for value in [u64::MAX, 1 << 40, u64::MAX / 12 + 1] {
            let mut b = good.clone();
            let at = 56 + 8 * field;
            b[at..at + 8].copy_from_slice(&value.to_le_bytes());
            assert_eq!(graph_shard_error(&bad, &b).0, 56);
        }
    }
    // Wrong feature length: a dense row declaring F + 1 values (resealed).
    let mut b = good.clone();
    b[100..104].copy_from_slice(&6u32.to_le_bytes());
    let (off, msg) = graph_shard_error(&bad, &resealed(b));
    assert!(off == 100 && msg.contains("6 stored features"), "{msg}");
    // A label past the label count, a NaN feature value.
    let mut b = good.clone();
    b[92..96].copy_from_slice(&3u32.to_le_bytes());
    let (off, msg) = graph_shard_error(&bad, &resealed(b));
    assert!(off == 92 && msg.contains("label 3 of 3"), "{msg}");
    let vals_at = good.len() - 8 - 8 * s.feat_val.len();
    let mut b = good.clone();
    b[vals_at..vals_at + 8].copy_from_slice(&f64::NAN.to_le_bytes());
    let (off, msg) = graph_shard_error(&bad, &resealed(b));
    assert!(off == vals_at as u64 && msg.contains("NaN"), "{msg}");
    // A neighbour that is neither owned nor in the halo.
    let adj_at = 88 + 16 * s.nodes.len();
    let stranger = (0..60u32)
        .find(|&v| s.owner_of(v).is_none())
        .expect("a node this shard does not know");
    let mut b = good.clone();
    b[adj_at..adj_at + 4].copy_from_slice(&stranger.to_le_bytes());
    let (off, msg) = graph_shard_error(&bad, &resealed(b));
    assert!(off == adj_at as u64 && msg.contains("neither"), "{msg}");
    // Sparse rows: a column past the feature count.
    let sg = common::featured_graph(60, 3, 5, true, 8);
    let sout = dir.path().join("sparse");
    partition_graph(&sg, 1, Strategy::Range, &sout, false, &[]).expect("partition");
    let sfile = srl_dist::shard_file(&sout, 0);
    let sgood = std::fs::read(&sfile).expect("shard");
    let ss = GraphShard::read(&sfile).expect("a good sparse shard reads");
    assert!(ss.sparse && !ss.feat_idx.is_empty());
    let idx_at = sgood.len() - 8 - 12 * ss.feat_idx.len();
    let mut b = sgood.clone();
    b[idx_at..idx_at + 4].copy_from_slice(&5u32.to_le_bytes());
    let (off, msg) = graph_shard_error(&bad, &resealed(b));
    assert!(
        off == idx_at as u64 && msg.contains("column 5 of 5"),
        "{msg}"
    );
    // Any flipped byte without resealing: a typed error, never a panic.
    for i in (0..good.len()).step_by(5) {
        let mut b = good.clone();
        b[i] ^= 0x5a;
        let _ = graph_shard_error(&bad, &b);
    }
    // The wrong kind: a graph shard given to BP / Gibbs, a model shard given to ICA.
    match read_shards(&out, 0..2) {
        Err(DistError::Shard {
            offset, message, ..
        }) => assert!(offset == 20 && message.contains("graph shard"), "{message}"),
        other => panic!("{other:?}"),
    }
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mrf = mixed_mrf(20, &mut rng);
    write_model(dir.path(), &mrf, None);
    let model_out = dir.path().join("m");
    partition_uai(
        &dir.path().join("model.uai"),
        None,
        2,
        Strategy::Hash,
        &model_out,
        false,
    )
    .expect("partition");
    match read_graph_shards(&model_out, 0..2) {
        Err(DistError::Shard {
            offset, message, ..
        }) => assert!(offset == 20 && message.contains("model shard"), "{message}"),
        other => panic!("{other:?}"),
    }
    // partition_graph follows srl-io's rules: existing shards only with force, never an input.
    assert!(matches!(
        partition_graph(&g, 2, Strategy::Ldg, &out, false, &[]),
        Err(DistError::Output(_))
    ));
    partition_graph(&g, 2, Strategy::Ldg, &out, true, &[]).expect("forced");
    assert!(matches!(
        partition_graph(&g, 1, Strategy::Ldg, &out, true, &[file.as_path()]),
        Err(DistError::Output(_))
    ));
    assert!(matches!(
        partition_graph(&g, 0, Strategy::Ldg, &out, true, &[]),
        Err(DistError::Argument(_))
    ));
}
