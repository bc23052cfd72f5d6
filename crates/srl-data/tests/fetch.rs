//! `fetch` against a local HTTP server on 127.0.0.1 started by the test: a good download,
//! a bad checksum, an interrupted transfer, an archive with a `../` entry, and a present
//! file that fails verification. The server answers a bounded number of requests and
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
        },
        FileSum {
            path: "tiny.content.gz",
            sha256: leak("0".repeat(64)),
            plain_sha256: Some(leak(srl_data::sha256_bytes(CONTENT))),
        },
        FileSum {
            path: "table.csv",
            sha256: leak(table_sum),
            plain_sha256: None,
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
