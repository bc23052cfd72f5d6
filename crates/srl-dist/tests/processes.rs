//! Two `srl-dist` processes on 127.0.0.1 (timely `-n 2 -p 0/1` with a host file of two
//! free ports) compute the same marginals as srl-infer's flooding `LoopyBp` to 1e-12. The
//! processes are bounded by a timeout and killed if it passes.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Children, free_port, read_marginals};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use srl_dist::barabasi_albert_mrf;
use srl_infer::{LoopyBp, PairwiseMrf};

const TIMEOUT: Duration = Duration::from_secs(120);

#[test]
fn two_processes_on_loopback_equal_srl_infer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = ChaCha8Rng::seed_from_u64(29);
    let model = barabasi_albert_mrf(400, 3, 0.6, &mut rng).expect("model");
    let uai = dir.path().join("ba.uai");
    model.write_uai(&uai).expect("write UAI");
    // The reference reads the same file the processes read.
    let mrf = PairwiseMrf::read_uai(&uai).expect("read UAI");
    let bp = LoopyBp {
        max_iters: 60,
        tol: 1e-10,
        damping: 0.2,
        ..LoopyBp::default()
    };
    let reference = bp.run(&mrf);

    let hosts = dir.path().join("hosts.txt");
    let (p0, p1) = (free_port(), free_port());
    std::fs::write(&hosts, format!("127.0.0.1:{p0}\n127.0.0.1:{p1}\n")).expect("host file");
    let outs = [dir.path().join("p0.txt"), dir.path().join("p1.txt")];
    let mut children = Children(Vec::new());
    for (p, out) in outs.iter().enumerate() {
        let child = Command::new(env!("CARGO_BIN_EXE_srl-dist"))
            .args(["-w", "1", "-n", "2", "-p", &p.to_string(), "-h"])
            .arg(&hosts)
            .arg("--uai")
            .arg(&uai)
            .args(["--max-iters", "60", "--tol", "1e-10", "--damping", "0.2"])
            .args(["--partition", "hash", "--out"])
            .arg(out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn srl-dist");
        children.0.push(child);
    }
    let start = Instant::now();
    loop {
        let done = children
            .0
            .iter_mut()
            .all(|c| matches!(c.try_wait(), Ok(Some(_))));
        if done {
            break;
        }
        assert!(start.elapsed() < TIMEOUT, "srl-dist processes timed out");
        std::thread::sleep(Duration::from_millis(50));
    }
    for c in children.0.drain(..) {
        let out = c.wait_with_output().expect("process output");
        assert!(
            out.status.success(),
            "srl-dist failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let summary = String::from_utf8_lossy(&out.stdout);
        let iters = format!("iterations={} ", reference.convergence().iterations);
        assert!(summary.contains(&iters), "{summary} vs {iters}");
    }
    let mut seen = vec![false; mrf.num_nodes()];
    for out in &outs {
        let rows = read_marginals(out);
        assert!(!rows.is_empty(), "each process owns nodes");
        for (v, p) in rows {
            assert!(!seen[v], "node {v} held twice");
            seen[v] = true;
            for (a, b) in reference.node(v).iter().zip(&p) {
                assert!((a - b).abs() <= 1e-12, "node {v}: {a} vs {b}");
            }
        }
    }
    assert!(seen.iter().all(|&s| s), "every node held once");
}
