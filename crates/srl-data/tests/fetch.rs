//! `fetch` against a local HTTP server on 127.0.0.1 started by the test: a good download,
//! a bad checksum, an interrupted transfer, an archive with a `../` entry, a present
//! file that fails verification, archives with huge entries (listed and unlisted), stale
//! staging folders of interrupted runs, and SIGTERM during a download. The server answers a bounded number of requests and
//! stops after 60 s at the latest.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use srl_data::{DataError, Dataset, FetchOptions, FileSum, Source, SourceKind, Transform};

/// How the server answers a path.
#[derive(Clone)]
enum Reply {
    Full(Vec<u8>),
    /// Announce the full length, send only the first half, close.
    Truncated(Vec<u8>),
    /// Announce the full length, send the first half, then wait 30 s before closing
    /// (a stalled transfer, for the interrupt test).
    Stall(Vec<u8>),
}

/// Starts the server; returns its base address `http://127.0.0.1:PORT`.
fn serve(routes: HashMap<String, Reply>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let addr = listener.local_addr().expect("addr");
    listener.set_nonblocking(true).expect("nonblocking");
    let routes = Arc::new(routes);
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut served = 0;
        while Instant::now() < deadline && served < 50 {
            let Ok((mut s, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            };
            served += 1;
            let _ = s.set_nonblocking(false);
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&req);
            let path = text.split_whitespace().nth(1).unwrap_or("/").to_owned();
            match routes.get(&path) {
                Some(Reply::Full(b)) => {
                    let _ = write!(
                        s,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        b.len()
                    );
                    let _ = s.write_all(b);
                }
                Some(Reply::Truncated(b)) => {
                    let _ = write!(
                        s,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        b.len()
                    );
                    let _ = s.write_all(&b[..b.len() / 2]);
                }
                Some(Reply::Stall(b)) => {
                    let _ = write!(
                        s,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        b.len()
                    );
                    let _ = s.write_all(&b[..b.len() / 2]);
                    let _ = s.flush();
                    std::thread::sleep(Duration::from_secs(30));
                }
                None => {
                    let _ = write!(
                        s,
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    );
                }
            }
            let _ = s.flush();
        }
    });
    format!("http://{addr}")
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in entries {
        w.start_file(*name, opts).expect("zip entry");
        w.write_all(bytes).expect("zip write");
    }
    w.finish().expect("zip finish").into_inner()
}

const README: &[u8] = b"a tiny data set\n";
const TABLE: &[u8] = b"1,2\n3,4";
const CONTENT: &[u8] = b"p1\t0\t1\tA\np2\t1\t0\tB\n";

/// A data set of three files: two from a zip (one stored gzip-compressed), one raw file
/// with a header line prepended. `table_sum` overrides the raw file's recorded sum.
fn dataset(
    base: &str,
    zip_path: &str,
    raw_path: &str,
    table_sum: Option<&str>,
) -> &'static Dataset {
    let table_sum =
        table_sum.map_or_else(|| srl_data::sha256_bytes(b"x,y\n1,2\n3,4\n"), str::to_owned);
    let files: &'static [FileSum] = Box::leak(Box::new([
        FileSum {
            path: "README",
            sha256: leak(srl_data::sha256_bytes(README)),
            plain_sha256: None,
            size: 1 << 20,
            plain_size: None,
        },
        FileSum {
            path: "tiny.content.gz",
            sha256: leak("0".repeat(64)),
            plain_sha256: Some(leak(srl_data::sha256_bytes(CONTENT))),
            size: 1 << 20,
            plain_size: Some(1 << 20),
        },
        FileSum {
            path: "table.csv",
            sha256: leak(table_sum),
            plain_sha256: None,
            size: 1 << 20,
            plain_size: None,
        },
    ]));
    let sources: &'static [Source] = Box::leak(Box::new([
        Source {
            kind: SourceKind::Zip,
            url: leak(format!("{base}{zip_path}")),
            dest: "",
            transform: Transform::Gzip,
        },
        Source {
            kind: SourceKind::Raw,
            url: leak(format!("{base}{raw_path}")),
            dest: "table.csv",
            transform: Transform::PrependLine("x,y"),
        },
    ]));
    Box::leak(Box::new(Dataset {
        name: "tiny",
        used_by: "tests",
        files,
        sources,
    }))
}

fn opts() -> FetchOptions<'static> {
    FetchOptions {
        timeout: Duration::from_secs(20),
        ..FetchOptions::default()
    }
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn routes() -> HashMap<String, Reply> {
    let good_zip = zip_of(&[
        ("tiny/README", README),
        ("tiny/tiny.content", CONTENT),
        ("tiny/extra.bin", b"not wanted"),
    ]);
    let evil_zip = zip_of(&[("tiny/README", README), ("../evil.txt", b"escaped")]);
    let mut r = HashMap::new();
    r.insert("/good.zip".to_owned(), Reply::Full(good_zip.clone()));
    r.insert("/cut.zip".to_owned(), Reply::Truncated(good_zip));
    r.insert("/evil.zip".to_owned(), Reply::Full(evil_zip));
    r.insert("/table.data".to_owned(), Reply::Full(TABLE.to_vec()));
    r
}

#[test]
fn good_download_installs_and_verifies() {
    let base = serve(routes());
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let ds = dataset(&base, "/good.zip", "/table.data", None);
    let rep = srl_data::fetch(ds, &data, &opts()).expect("fetch");
    assert_eq!(rep.installed.len(), 3, "{rep:?}");
    let v = srl_data::verify(&data, ds);
    assert_eq!(v.ok(), 3);
    assert!(
        !data.join("tiny/extra.bin").exists(),
        "only registered files are extracted"
    );
    assert_eq!(
        entries(&data),
        vec!["tiny".to_owned()],
        "no staging folder left"
    );
    // A second run finds everything in place and downloads nothing.
    let again = srl_data::fetch(ds, &data, &opts()).expect("fetch again");
    assert!(again.installed.is_empty() && again.already_ok.len() == 3);
}

#[test]
fn bad_checksum_is_rejected_and_leaves_nothing() {
    let base = serve(routes());
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let ds = dataset(&base, "/good.zip", "/table.data", Some(&"ab".repeat(32)));
    let e = srl_data::fetch(ds, &data, &opts()).expect_err("bad sum");
    assert!(
        matches!(e, DataError::Checksum { ref path, .. } if path == "table.csv"),
        "{e}"
    );
    assert!(
        entries(&data).is_empty(),
        "left behind: {:?}",
        entries(&data)
    );
}

#[test]
fn interrupted_transfer_fails_cleanly_and_a_rerun_succeeds() {
    let base = serve(routes());
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let cut = dataset(&base, "/cut.zip", "/table.data", None);
    let e = srl_data::fetch(cut, &data, &opts()).expect_err("interrupted");
    assert!(matches!(e, DataError::Http { .. }), "{e}");
    assert!(
        e.to_string().contains("interrupted") || e.to_string().contains("bytes"),
        "{e}"
    );
    assert!(
        entries(&data).is_empty(),
        "left behind: {:?}",
        entries(&data)
    );
    let good = dataset(&base, "/good.zip", "/table.data", None);
    let rep = srl_data::fetch(good, &data, &opts()).expect("rerun");
    assert_eq!(rep.installed.len(), 3);
}

#[test]
fn archive_entry_escaping_the_folder_is_refused() {
    let base = serve(routes());
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let ds = dataset(&base, "/evil.zip", "/table.data", None);
    let e = srl_data::fetch(ds, &data, &opts()).expect_err("unsafe entry");
    assert!(
        matches!(e, DataError::UnsafeEntry { ref entry, .. } if entry == "../evil.txt"),
        "{e}"
    );
    assert!(
        entries(&data).is_empty(),
        "left behind: {:?}",
        entries(&data)
    );
    assert!(!tmp.path().join("evil.txt").exists());
    assert_eq!(entries(tmp.path()), vec!["data".to_owned()]);
}

#[test]
fn failing_present_file_is_kept_without_force() {
    let base = serve(routes());
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("tiny")).expect("mkdir");
    std::fs::write(data.join("tiny/README"), "edited by hand\n").expect("write");
    let ds = dataset(&base, "/good.zip", "/table.data", None);
    let e = srl_data::fetch(ds, &data, &opts()).expect_err("would overwrite");
    assert!(matches!(e, DataError::WouldOverwrite { .. }), "{e}");
    assert_eq!(
        std::fs::read_to_string(data.join("tiny/README")).expect("read"),
        "edited by hand\n"
    );
    let force = FetchOptions {
        force: true,
        ..opts()
    };
    srl_data::fetch(ds, &data, &force).expect("forced");
    assert_eq!(srl_data::verify(&data, ds).ok(), 3);
}

fn tar_gz(build: impl FnOnce(&mut tar::Builder<flate2::write::GzEncoder<Vec<u8>>>)) -> Vec<u8> {
    let enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(enc);
    build(&mut b);
    b.into_inner().expect("tar").finish().expect("gzip")
}

fn file_header(len: usize) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_size(len as u64);
    h.set_mode(0o644);
    h.set_entry_type(tar::EntryType::Regular);
    h
}

/// A tar.gz source: a good archive installs; one with a symbolic link pointing outside
/// the folder is refused before anything is written.
#[test]
fn tar_gz_archives_and_links() {
    let good = tar_gz(|b| {
        b.append_data(&mut file_header(README.len()), "tiny/README", README)
            .expect("entry");
    });
    let evil = tar_gz(|b| {
        b.append_data(&mut file_header(README.len()), "tiny/README", README)
            .expect("entry");
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(tar::EntryType::Symlink);
        h.set_size(0);
        b.append_link(&mut h, "tiny/passwd", "../../../etc/passwd")
            .expect("link");
    });
    let mut routes = HashMap::new();
    routes.insert("/good.tar.gz".to_owned(), Reply::Full(good));
    routes.insert("/evil.tar.gz".to_owned(), Reply::Full(evil));
    let base = serve(routes);
    let files: &'static [FileSum] = Box::leak(Box::new([FileSum {
        path: "README",
        sha256: leak(srl_data::sha256_bytes(README)),
        plain_sha256: None,
        size: README.len() as u64,
        plain_size: None,
    }]));
    let ds = |path: &str| -> &'static Dataset {
        let sources: &'static [Source] = Box::leak(Box::new([Source {
            kind: SourceKind::TarGz,
            url: leak(format!("{base}{path}")),
            dest: "",
            transform: Transform::None,
        }]));
        Box::leak(Box::new(Dataset {
            name: "tarred",
            used_by: "tests",
            files,
            sources,
        }))
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let e = srl_data::fetch(ds("/evil.tar.gz"), &data, &opts()).expect_err("link");
    assert!(matches!(e, DataError::UnsafeEntry { .. }), "{e}");
    assert!(
        entries(&data).is_empty(),
        "left behind: {:?}",
        entries(&data)
    );
    let rep = srl_data::fetch(ds("/good.tar.gz"), &data, &opts()).expect("good tar.gz");
    assert_eq!(rep.installed, vec!["README".to_owned()]);
}

/// A one-file data set (`README`, recorded size `README.len()`) from one archive.
fn readme_dataset(base: &str, path: &str, kind: SourceKind) -> &'static Dataset {
    let files: &'static [FileSum] = Box::leak(Box::new([FileSum {
        path: "README",
        sha256: leak(srl_data::sha256_bytes(README)),
        plain_sha256: None,
        size: README.len() as u64,
        plain_size: None,
    }]));
    let sources: &'static [Source] = Box::leak(Box::new([Source {
        kind,
        url: leak(format!("{base}{path}")),
        dest: "",
        transform: Transform::None,
    }]));
    Box::leak(Box::new(Dataset {
        name: "capped",
        used_by: "tests",
        files,
        sources,
    }))
}

/// The process's peak resident memory in bytes (Linux; `None` elsewhere).
fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Issue 25: a small tar.gz holding an unlisted 400 MiB entry (zeros) before the listed
/// file installs the listed file without reading the big entry into memory (the old
/// code read every entry whole: 600 MiB took the process to 685 MB).
#[test]
fn unlisted_huge_tar_entry_is_skipped_unread() {
    const HUGE: u64 = 400 << 20;
    let archive = tar_gz(|b| {
        let mut h = tar::Header::new_gnu();
        h.set_size(HUGE);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, "tiny/huge.bin", std::io::repeat(0).take(HUGE))
            .expect("huge entry");
        b.append_data(&mut file_header(README.len()), "tiny/README", README)
            .expect("entry");
    });
    assert!(archive.len() < 4 << 20, "{} bytes", archive.len());
    let mut routes = HashMap::new();
    routes.insert("/bomb.tar.gz".to_owned(), Reply::Full(archive));
    let base = serve(routes);
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let ds = readme_dataset(&base, "/bomb.tar.gz", SourceKind::TarGz);
    let rep = srl_data::fetch(ds, &data, &opts()).expect("fetch");
    assert_eq!(rep.installed, vec!["README".to_owned()]);
    assert!(!data.join("capped/huge.bin").exists());
    if let Some(peak) = peak_rss() {
        assert!(peak < 200 << 20, "peak resident memory {peak} bytes");
    }
}

/// A listed entry larger than the registry's size is refused after reading at most
/// cap + 1 bytes of it (zeros: a 64 MiB deflated zip entry, a 512 MiB tar.gz entry), and
/// nothing is left.
#[test]
fn listed_entry_over_its_cap_is_refused() {
    const HUGE: u64 = 1 << 30;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .compression_level(Some(1))
        .large_file(true);
    w.start_file("README", o).expect("zip entry");
    // 64 MiB written, claimed by nothing: the test reads far less than that.
    std::io::copy(&mut std::io::repeat(0).take(HUGE >> 4), &mut w).expect("zip write");
    let archive = w.finish().expect("zip finish").into_inner();
    let tarred = tar_gz(|b| {
        let mut h = tar::Header::new_gnu();
        h.set_size(HUGE / 2);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, "README", std::io::repeat(0).take(HUGE / 2))
            .expect("huge entry");
    });
    let mut routes = HashMap::new();
    routes.insert("/big.zip".to_owned(), Reply::Full(archive));
    routes.insert("/big.tar.gz".to_owned(), Reply::Full(tarred));
    let base = serve(routes);
    for (path, kind) in [
        ("/big.zip", SourceKind::Zip),
        ("/big.tar.gz", SourceKind::TarGz),
    ] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let data = tmp.path().join("data");
        let ds = readme_dataset(&base, path, kind);
        let e = srl_data::fetch(ds, &data, &opts()).expect_err("over the cap");
        assert!(
            matches!(e, DataError::TooLarge { cap, .. } if cap == README.len() as u64),
            "{path}: {e}"
        );
        assert!(e.to_string().contains("README"), "{e}");
        assert!(
            entries(&data).is_empty(),
            "{path}: left behind: {:?}",
            entries(&data)
        );
    }
    if let Some(peak) = peak_rss() {
        assert!(peak < 200 << 20, "peak resident memory {peak} bytes");
    }
}

/// A plain download is capped by its file's recorded size too.
#[test]
fn raw_download_over_its_cap_is_refused() {
    let mut routes = HashMap::new();
    routes.insert("/big.txt".to_owned(), Reply::Full(vec![b'x'; 4096]));
    let base = serve(routes);
    let files: &'static [FileSum] = Box::leak(Box::new([FileSum {
        path: "README",
        sha256: leak(srl_data::sha256_bytes(README)),
        plain_sha256: None,
        size: README.len() as u64,
        plain_size: None,
    }]));
    let sources: &'static [Source] = Box::leak(Box::new([Source {
        kind: SourceKind::Raw,
        url: leak(format!("{base}/big.txt")),
        dest: "README",
        transform: Transform::None,
    }]));
    let ds: &'static Dataset = Box::leak(Box::new(Dataset {
        name: "raw",
        used_by: "tests",
        files,
        sources,
    }));
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let e = srl_data::fetch(ds, &data, &opts()).expect_err("over the cap");
    assert!(
        matches!(e, DataError::Http { ref message, .. } if message.contains("limit")),
        "{e}"
    );
    assert!(entries(&data).is_empty(), "{:?}", entries(&data));
}

/// Staging folders of dead processes are removed by the next run (with a message); a
/// live process's folder is kept.
#[test]
fn stale_staging_folders_are_removed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path();
    let dead = data.join(".tiny.srl-partial-4000000000");
    let live = data.join(".tiny.srl-partial-1");
    let other = data.join("tiny.srl-partial-notes");
    for d in [&dead, &live] {
        std::fs::create_dir_all(d.join("sub")).expect("mkdir");
        std::fs::write(d.join("sub/x.part"), "half").expect("write");
    }
    std::fs::write(&other, "kept").expect("write");
    let notes = std::cell::RefCell::new(Vec::new());
    let note = |m: &str| notes.borrow_mut().push(m.to_owned());
    let removed = srl_data::remove_stale_staging(data, &note);
    assert_eq!(removed, vec![dead.clone()]);
    assert!(!dead.exists());
    if cfg!(target_os = "linux") {
        assert!(live.exists(), "process 1 runs: its folder is kept");
    }
    assert!(other.exists());
    let notes = notes.into_inner();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("interrupted") && notes[0].contains("4000000000"),
        "{notes:?}"
    );
    // fetch runs the cleanup itself before staging.
    std::fs::create_dir_all(&dead).expect("mkdir");
    let base = serve(routes());
    let ds = dataset(&base, "/good.zip", "/table.data", None);
    srl_data::fetch(ds, data, &opts()).expect("fetch");
    assert!(!dead.exists());
}

/// Child half of [`sigterm_during_fetch_removes_the_staging_folder`]: installs srl-io's
/// handler and fetches from a stalling server (run only by that test).
#[test]
#[ignore = "run as a child process by sigterm_during_fetch_removes_the_staging_folder"]
fn child_fetch_until_killed() {
    let (Some(base), Some(data)) = (
        std::env::var_os("SRL_DATA_TEST_BASE"),
        std::env::var_os("SRL_DATA_TEST_DIR"),
    ) else {
        panic!("run by sigterm_during_fetch_removes_the_staging_folder only");
    };
    assert!(srl_io::install_interrupt_cleanup());
    let ds = readme_dataset(&base.to_string_lossy(), "/stall.zip", SourceKind::Zip);
    let r = srl_data::fetch(ds, Path::new(&data), &opts());
    panic!("the fetch should have been killed, it returned {r:?}");
}

/// SIGTERM while a download stalls: the child exits (status 130) and its staging folder
/// is gone.
#[test]
fn sigterm_during_fetch_removes_the_staging_folder() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let mut routes = HashMap::new();
    routes.insert(
        "/stall.zip".to_owned(),
        Reply::Stall(zip_of(&[("README", README)])),
    );
    let base = serve(routes);
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--ignored",
            "--exact",
            "child_fetch_until_killed",
            "--test-threads=1",
        ])
        .env("SRL_DATA_TEST_BASE", &base)
        .env("SRL_DATA_TEST_DIR", &data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn child");
    let staging = data.join(format!(".capped.srl-partial-{}", child.id()));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !staging.join(".download-0.part").exists() {
        assert!(
            Instant::now() < deadline,
            "the child never started its download"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the child did not exit after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(exit.code(), Some(130), "{exit:?}");
    assert!(
        !staging.exists(),
        "staging folder left: {}",
        staging.display()
    );
    assert!(entries(&data).is_empty(), "{:?}", entries(&data));
}

/// A tar.gz whose GNU long-name header claims 256 MiB (the tar crate would read it whole
/// into memory) is refused before that header is read.
#[test]
fn huge_tar_long_name_header_is_refused() {
    const HUGE: u64 = 256 << 20;
    let archive = tar_gz(|b| {
        let mut h = tar::Header::new_gnu();
        h.set_size(HUGE);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::GNULongName);
        h.set_path("././@LongLink").expect("path");
        h.set_cksum();
        b.append(&h, std::io::repeat(b'a').take(HUGE))
            .expect("long name");
        b.append_data(&mut file_header(README.len()), "README", README)
            .expect("entry");
    });
    let mut routes = HashMap::new();
    routes.insert("/long.tar.gz".to_owned(), Reply::Full(archive));
    let base = serve(routes);
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let ds = readme_dataset(&base, "/long.tar.gz", SourceKind::TarGz);
    let e = srl_data::fetch(ds, &data, &opts()).expect_err("huge long name");
    assert!(
        matches!(e, DataError::Archive { ref message, .. } if message.contains("extension header")),
        "{e}"
    );
    assert!(entries(&data).is_empty(), "{:?}", entries(&data));
    if let Some(peak) = peak_rss() {
        assert!(peak < 200 << 20, "peak resident memory {peak} bytes");
    }
}
