//! Loaders: the only library code of srl that reads files.
//!
//! - [`linqs`]: the LINQS citation graphs (Cora, Citeseer): `NAME.content` + `NAME.cites`,
//!   plain or gzip-compressed.
//! - [`csv`]: a plain `nodes.csv` / `edges.csv` pair.
//! - [`intel`]: the Intel Berkeley lab sensor readings and mote locations, turned into the
//!   snapshot graphs of Sen & Getoor (2006, Section 6.3).
//!
//! Every parse error is a [`GraphError::Parse`] naming the file and the 1-based line, with
//! a [`crate::ParseErrorKind`] saying what is wrong; a missing file is a
//! [`GraphError::Io`] naming the path. Files are read line by line; a file whose first two
//! bytes are the gzip magic `1f 8b` is decompressed on the fly, whatever its name.

pub mod csv;
pub mod intel;
pub mod linqs;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::error::{GraphError, ParseErrorKind};

/// Reads a (possibly gzip-compressed) text file line by line, tracking 1-based line
/// numbers and rejecting non-UTF-8 lines with the file and line.
/// The longest line the line readers (LINQS, CSV, Intel lab) accept, bytes (64 MiB: a
/// dense CSV row of 10^6 features fits); a longer one is
/// [`ParseErrorKind::LineTooLong`], so an endless line (say `/dev/zero`) is never read
/// into memory whole.
pub const MAX_LINE_BYTES: usize = 1 << 26;

pub(crate) struct Lines {
    path: PathBuf,
    reader: Box<dyn BufRead>,
    buf: Vec<u8>,
    line: usize,
}

impl Lines {
    /// Opens `path`; gzip is detected from the magic bytes.
    pub(crate) fn open(path: &Path) -> Result<Self, GraphError> {
        let io = |source| GraphError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = BufReader::new(File::open(path).map_err(io)?);
        let gz = file.fill_buf().map_err(io)?.starts_with(&[0x1f, 0x8b]);
        let reader: Box<dyn BufRead> = if gz {
            Box::new(BufReader::with_capacity(
                1 << 16,
                flate2::bufread::MultiGzDecoder::new(file),
            ))
        } else {
            Box::new(file)
        };
        Ok(Self {
            path: path.to_path_buf(),
            reader,
            buf: Vec::with_capacity(1 << 12),
            line: 0,
        })
    }

    /// The file being read.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The next line without its `\n` / `\r\n`, with its 1-based number; `None` at the end.
    ///
    /// A line longer than [`MAX_LINE_BYTES`] ([`ParseErrorKind::LineTooLong`], read no
    /// further) or holding a control byte ([`ParseErrorKind::ControlByte`]) is an error.
    pub(crate) fn next_line(&mut self) -> Result<Option<(usize, &str)>, GraphError> {
        use std::io::Read as _;
        self.buf.clear();
        let read = (&mut self.reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(|source| GraphError::Io {
                path: self.path.clone(),
                source,
            })?;
        if read == 0 {
            return Ok(None);
        }
        self.line += 1;
        if self.buf.len() > MAX_LINE_BYTES {
            return Err(perr(
                &self.path,
                self.line,
                ParseErrorKind::LineTooLong {
                    limit: MAX_LINE_BYTES,
                },
            ));
        }
        if let Some(&byte) = self
            .buf
            .iter()
            .find(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\r' | b'\n'))
        {
            return Err(perr(
                &self.path,
                self.line,
                ParseErrorKind::ControlByte { byte },
            ));
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        let line = self.line;
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some((line, s))),
            Err(_) => Err(GraphError::Parse {
                path: self.path.clone(),
                line,
                kind: ParseErrorKind::NonUtf8,
            }),
        }
    }

    /// The line last returned by [`Lines::next_line`] (empty before the first call).
    pub(crate) fn current(&self) -> Option<&str> {
        std::str::from_utf8(&self.buf).ok()
    }
}

/// A parse error at 1-based `line` of `path`.
pub(crate) fn perr(path: &Path, line: usize, kind: ParseErrorKind) -> GraphError {
    GraphError::Parse {
        path: path.to_path_buf(),
        line,
        kind,
    }
}

/// Checks that a line has exactly `expected` fields: fewer is
/// [`ParseErrorKind::Truncated`], more is [`ParseErrorKind::FieldCount`], both naming
/// `path` and the 1-based `line`.
pub(crate) fn exact_field_count(
    path: &Path,
    line: usize,
    found: usize,
    expected: usize,
) -> Result<(), GraphError> {
    if found < expected {
        return Err(perr(
            path,
            line,
            ParseErrorKind::Truncated { expected, found },
        ));
    }
    if found > expected {
        return Err(perr(
            path,
            line,
            ParseErrorKind::FieldCount { expected, found },
        ));
    }
    Ok(())
}

/// Parses a finite `f64` from field `field` (1-based) of a line.
pub(crate) fn parse_f64(text: &str, field: usize) -> Result<f64, ParseErrorKind> {
    match text.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(ParseErrorKind::BadNumber {
            text: text.to_string(),
            field,
        }),
    }
}

/// The first of `dir/name` and `dir/name.gz` that exists, else an `Io` error naming the
/// plain path.
pub(crate) fn find_plain_or_gz(dir: &Path, name: &str) -> Result<PathBuf, GraphError> {
    let plain = dir.join(name);
    if plain.is_file() {
        return Ok(plain);
    }
    let gz = dir.join(format!("{name}.gz"));
    if gz.is_file() {
        return Ok(gz);
    }
    Err(GraphError::Io {
        path: plain,
        source: std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("neither {name} nor {name}.gz exists"),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_bytes_and_endless_lines_are_errors_with_their_line() {
        let d = std::env::temp_dir().join(format!("srl-lines-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("mkdir");
        let p = d.join("nul.txt");
        std::fs::write(&p, b"a\tb\r\nc\x00d\n").expect("write");
        let mut l = Lines::open(&p).expect("open");
        assert_eq!(l.next_line().expect("line 1"), Some((1, "a\tb")));
        let e = l.next_line().expect_err("NUL");
        assert!(
            e.to_string().contains("nul.txt:2: control byte 0x00"),
            "{e}"
        );
        std::fs::remove_dir_all(&d).expect("rm");
        // /dev/zero: the first "line" is endless NULs; reading stops at the limit
        if Path::new("/dev/zero").exists() {
            let mut z = Lines::open(Path::new("/dev/zero")).expect("open");
            let e = z.next_line().expect_err("endless");
            assert!(e.to_string().contains("longer than"), "{e}");
        }
    }
}
