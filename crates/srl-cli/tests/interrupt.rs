//! Interrupted runs leave nothing behind (issue 25: 3 of 22 SIGINTs during a large
//! `srl mrf` write used to leave 6-12 MB partial files). `srl mrf` runs on a chain model of
//! 200 000 binary variables with `--out`, and is sent SIGINT or SIGTERM at spread-out
//! moments (reading, inference, writing, or after it finished); whatever the moment, the
//! folder holds afterwards either nothing or the complete output, never a temporary file.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const N: usize = 200_000;

fn chain_uai(n: usize) -> String {
    let mut s = String::with_capacity(n * 40);
    let _ = writeln!(s, "MARKOV\n{n}");
    s.push_str(&"2 ".repeat(n));
    let _ = writeln!(s, "\n{}", 2 * n - 1);
    for i in 0..n {
        let _ = writeln!(s, "1 {i}");
    }
    for i in 0..n - 1 {
        let _ = writeln!(s, "2 {i} {}", i + 1);
    }
    for i in 0..n {
        let a = 1.0 + (i % 7) as f64 * 0.1;
        let _ = writeln!(s, "2\n {a} 1.0");
    }
    for _ in 0..n - 1 {
        s.push_str("4\n 2.0 1.0 1.0 2.0\n");
    }
    s
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn interrupts_at_any_moment_leave_no_partial_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("chain.uai");
    std::fs::write(&model, chain_uai(N)).expect("write model");
    // how long a whole run takes here, to spread the interrupts over it
    let t0 = Instant::now();
    let full = dir.path().join("full.MAR");
    let st = Command::new(env!("CARGO_BIN_EXE_srl"))
        .args(["--quiet", "mrf"])
        .arg(&model)
        .args(["--task", "mar", "--algorithm", "lbp", "--out"])
        .arg(&full)
        .status()
        .expect("run srl");
    assert!(st.success());
    let whole = t0.elapsed();
    let complete = std::fs::read_to_string(&full).expect("read");
    std::fs::remove_file(&full).expect("rm");
    let trials = 12u32;
    let mut interrupted = 0;
    for k in 0..trials {
        let out = dir.path().join(format!("out{k}.MAR"));
        let mut child = Command::new(env!("CARGO_BIN_EXE_srl"))
            .args(["--quiet", "mrf"])
            .arg(&model)
            .args(["--task", "mar", "--algorithm", "lbp", "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(whole.mul_f64(f64::from(k) / f64::from(trials)));
        let signal = if k % 2 == 0 { "-INT" } else { "-TERM" };
        let _ = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status();
        let t1 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if t1.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!("srl mrf did not stop after {signal}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let names = entries(dir.path());
        assert!(
            !names.iter().any(|n| n.contains("srl-tmp")),
            "trial {k} ({signal}): a temporary file was left: {names:?}"
        );
        match status.code() {
            Some(0) => assert_eq!(
                std::fs::read_to_string(&out).expect("complete output"),
                complete,
                "trial {k}: a finished run wrote the whole output"
            ),
            // 130: the handler ran; None: the signal came before `main` installed it,
            // when nothing can have been written yet
            // (a signal that lands after the atomic rename, while the process exits,
            // finds the whole output in place: whole or nothing, never a part)
            Some(130) | None => {
                interrupted += 1;
                if out.exists() {
                    assert_eq!(
                        std::fs::read_to_string(&out).expect("output"),
                        complete,
                        "trial {k}: an interrupted run left a partial {out:?}"
                    );
                }
            }
            other => panic!("trial {k} ({signal}): exit {other:?}"),
        }
        let _ = std::fs::remove_file(&out);
    }
    // at least the early trials were interrupted mid-run
    assert!(interrupted >= 1, "no trial was interrupted");
}
