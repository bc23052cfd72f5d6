//! An interrupted write leaves nothing behind: the test re-runs its own binary as a child
//! that installs the handler and writes an output forever, sends it SIGINT (and SIGTERM)
//! once the temporary file exists, and checks that the child exited with 130 and that the
//! folder is empty.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const CHILD: &str = "SRL_IO_INTERRUPT_CHILD";

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

/// The child's side: runs only when the parent sets `SRL_IO_INTERRUPT_CHILD`.
#[test]
fn child_writes_forever() {
    let Ok(out) = std::env::var(CHILD) else {
        return;
    };
    let out = Path::new(&out);
    assert!(srl_io::install_interrupt_cleanup());
    let _ = srl_io::write_atomic(out, false, |w| -> Result<(), srl_io::OutputError> {
        loop {
            w.write_all(&[b'x'; 4096])
                .map_err(|e| srl_io::OutputError::io(out, e))?;
            w.flush().map_err(|e| srl_io::OutputError::io(out, e))?;
            std::thread::sleep(Duration::from_millis(5));
        }
    });
}

fn interrupt_with(signal: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("big.MAR");
    let mut child = Command::new(std::env::current_exe().expect("exe"))
        .args([
            "--exact",
            "child_writes_forever",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, &out)
        .spawn()
        .expect("spawn");
    let t0 = Instant::now();
    // wait until the temporary file holds some bytes
    loop {
        let started = std::fs::read_dir(dir.path())
            .expect("read_dir")
            .flatten()
            .any(|e| e.metadata().map(|m| m.len() > 0).unwrap_or(false));
        if started {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "child never started writing"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let t1 = Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s.code();
        }
        if t1.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("child did not exit after {signal}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(code, Some(130), "exit status after {signal}");
    assert!(
        entries(dir.path()).is_empty(),
        "left behind after {signal}: {:?}",
        entries(dir.path())
    );
}

#[test]
fn sigint_during_a_write_leaves_no_partial_file() {
    interrupt_with("-INT");
}

#[test]
fn sigterm_during_a_write_leaves_no_partial_file() {
    interrupt_with("-TERM");
}
