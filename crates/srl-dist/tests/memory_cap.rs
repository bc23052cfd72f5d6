//! Four `srl-dist run --shards` processes on 127.0.0.1, each under an address-space cap
//! (`prlimit --as`) that the whole model does not fit in (checked: one process loading the
//! whole model under the same cap fails), compute srl-infer's marginals to 1e-12.
//! Bounded by a timeout; the processes are killed if the test fails.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Children, free_port, read_marginals};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_dist::{Strategy, barabasi_albert_mrf, partition_uai};
use srl_infer::{Beliefs, LoopyBp, PairwiseMrf};

const TIMEOUT: Duration = Duration::from_secs(100);
/// Variables of the model: big enough that one process holding it needs about 150 MB of
/// address space, small enough for a debug build in CI.
const N: usize = 200_000;
/// The cap: a shard process needs 60 to 80 MB of address space (binary, nine threads'
/// stacks, timely's buffers included; with one malloc arena, `MALLOC_ARENA_MAX=1`: each
/// further glibc arena reserves 64 MB of address space), the whole model more than 120 MB.
const CAP: u64 = 100_000_000;
const ITERS: usize = 15;

fn capped(args: &[&std::ffi::OsStr]) -> Command {
    let mut c = Command::new("prlimit");
    c.arg(format!("--as={CAP}"))
        .arg(env!("CARGO_BIN_EXE_srl-dist"))
        .args(args)
        .env("MALLOC_ARENA_MAX", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn wait_all(children: &mut Children) {
    let start = Instant::now();
    loop {
        if children
            .0
            .iter_mut()
            .all(|c| matches!(c.try_wait(), Ok(Some(_))))
        {
            return;
        }
        assert!(start.elapsed() < TIMEOUT, "srl-dist processes timed out");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn four_capped_processes_on_loopback_equal_srl_infer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let uai = dir.path().join("ba.uai");
    barabasi_albert_mrf(N, 2, 0.5, &mut rng)
        .expect("model")
        .write_uai(&uai)
        .expect("write UAI");
    let shards = dir.path().join("shards");
    let report = partition_uai(&uai, None, 4, Strategy::Ldg, &shards, false).expect("partition");
    assert_eq!(report.part_nodes.len(), 4);

    // The whole model does not fit under the cap.
    let iters = ITERS.to_string();
    let mut whole = Children(vec![
        capped(&[
            "--uai".as_ref(),
            uai.as_os_str(),
            "--max-iters".as_ref(),
            iters.as_ref(),
        ])
        .spawn()
        .expect("spawn prlimit srl-dist"),
    ]);
    wait_all(&mut whole);
    let out = whole.0.remove(0).wait_with_output().expect("output");
    assert!(
        !out.status.success(),
        "the whole model fits in {CAP} bytes: the cap proves nothing"
    );

    let hosts = dir.path().join("hosts.txt");
    let ports: Vec<u16> = (0..4).map(|_| free_port()).collect();
    let text: String = ports.iter().map(|p| format!("127.0.0.1:{p}\n")).collect();
    std::fs::write(&hosts, text).expect("host file");
    let outs: Vec<_> = (0..4)
        .map(|p| dir.path().join(format!("p{p}.txt")))
        .collect();
    let mut children = Children(Vec::new());
    for (p, out) in outs.iter().enumerate() {
        let p = p.to_string();
        let child = capped(&[
            "run".as_ref(),
            "--shards".as_ref(),
            shards.as_os_str(),
            "-w".as_ref(),
            "1".as_ref(),
            "-n".as_ref(),
            "4".as_ref(),
            "-p".as_ref(),
            p.as_ref(),
            "-h".as_ref(),
            hosts.as_os_str(),
            "--max-iters".as_ref(),
            iters.as_ref(),
            "--tol".as_ref(),
            "0".as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ])
        .spawn()
        .expect("spawn prlimit srl-dist");
        children.0.push(child);
    }
    wait_all(&mut children);
    for c in children.0.drain(..) {
        let out = c.wait_with_output().expect("process output");
        assert!(
            out.status.success(),
            "a capped shard process failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // The reference reads the same file.
    let mrf = PairwiseMrf::read_uai(&uai).expect("read UAI");
    let reference = LoopyBp {
        max_iters: ITERS,
        tol: 0.0,
        beliefs: Beliefs::NodesOnly,
        ..LoopyBp::default()
    }
    .run(&mrf);
    let mut seen = vec![false; mrf.num_nodes()];
    for out in &outs {
        for (v, p) in read_marginals(out) {
            assert!(!seen[v], "node {v} held twice");
            seen[v] = true;
            for (a, b) in reference.node(v).iter().zip(&p) {
                assert!((a - b).abs() <= 1e-12, "node {v}: {a} vs {b}");
            }
        }
    }
    assert!(seen.iter().all(|&s| s), "every node held once");
}
