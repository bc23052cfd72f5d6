//! Readers for model files: BIF (plain or gzip), Hugin NET, UAI, and the TrimBN
//! `nb.json` naive Bayes files; a BIF writer ([`to_bif_string`], [`write_bif`]) whose
//! output [`parse_bif`] reads back to an equal network. The only code in this crate that touches the file system
//! (together with [`crate::data::CsvTable::read`]).

mod bif;
mod bif_write;
mod hugin;
mod nbjson;
mod uai;

pub use bif::{parse_bif, read_bif};
pub use bif_write::{to_bif_string, write_bif};
pub use hugin::{parse_hugin_net, read_hugin_net};
pub use nbjson::{TrimProblem, parse_trimbn_json, read_trimbn_json};
pub use uai::{UaiModel, UaiNetworkType, parse_uai, read_uai};

use std::io::Read as _;
use std::path::Path;

use crate::error::BayesError;

/// The largest model file a reader accepts: 16 MiB (after decompression). The largest
/// bnlearn BIF file (diabetes) is 5.5 MB; a larger input (or `/dev/zero`, or a gzip bomb) is an
/// error, not an allocation that could exhaust memory.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads a whole file as UTF-8 text, gunzipping it when it starts with the gzip magic
/// bytes.
///
/// # Errors
/// [`BayesError::Io`] if the file cannot be read or decompressed;
/// [`BayesError::Parse`] (line 1) if it is not UTF-8 or larger than [`MAX_FILE_BYTES`].
pub fn read_text(path: &Path) -> Result<String, BayesError> {
    let io = |source| BayesError::Io {
        path: path.to_path_buf(),
        source,
    };
    let too_big = || {
        BayesError::parse(
            &path.display().to_string(),
            1,
            format!("file larger than {MAX_FILE_BYTES} bytes (decompressed)"),
        )
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_big());
    }
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(io)?;
        if out.len() as u64 > MAX_FILE_BYTES {
            return Err(too_big());
        }
        out
    } else {
        bytes
    };
    String::from_utf8(bytes)
        .map_err(|_| BayesError::parse(&path.display().to_string(), 1, "file is not UTF-8"))
}

/// The largest table (entries of one CPT or factor) a reader accepts: 2^27 entries. The
/// largest CPT of the bnlearn repository has far fewer; a larger declared table is an
/// error, not an allocation that could abort the process.
pub const MAX_TABLE_ENTRIES: usize = 1 << 27;

/// The product of `init` and `cards`, if it does not overflow and is at most
/// [`MAX_TABLE_ENTRIES`].
pub(crate) fn table_size(cards: &[usize], init: usize) -> Option<usize> {
    cards
        .iter()
        .try_fold(init, |a, &k| a.checked_mul(k))
        .filter(|&n| n <= MAX_TABLE_ENTRIES)
}

/// Checks the entries of a CPT (layout of [`crate::Cpt`]): every entry finite and
/// non-negative, and no row all zero; the message names the variable and the parent
/// states of the first bad row.
pub(crate) fn check_rows(
    variables: &[crate::Variable],
    child: usize,
    parents: &[usize],
    probs: &[f64],
) -> Result<(), String> {
    let k = variables[child].cardinality().max(1);
    let describe = |row| crate::network::describe_row(variables, parents, row);
    if let Some(pos) = probs.iter().position(|x| !x.is_finite() || *x < 0.0) {
        return Err(format!(
            "CPT of `{}` has entry {} in the row for {}, not a finite non-negative number",
            variables[child].name,
            probs[pos],
            describe(pos / k)
        ));
    }
    match probs.chunks(k).position(|r| r.iter().all(|&x| x == 0.0)) {
        None => Ok(()),
        Some(row) => Err(format!(
            "CPT of `{}`: the row for {} is all zero (not a distribution)",
            variables[child].name,
            describe(row)
        )),
    }
}

/// The first state name that appears twice in `states`, if any.
pub(crate) fn repeated_state(states: &[String]) -> Option<&str> {
    let mut seen = std::collections::HashSet::new();
    states
        .iter()
        .find(|s| !seen.insert(s.as_str()))
        .map(String::as_str)
}

/// A token with its 1-based line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tok {
    pub text: String,
    pub line: usize,
    pub quoted: bool,
}

/// Comment syntax of a format.
#[derive(Clone, Copy)]
pub(crate) enum Comments {
    /// `//` to end of line and `/* ... */` (BIF).
    CStyle,
    /// `%` to end of line (Hugin NET).
    Percent,
}

/// Splits `text` into words, quoted strings and the punctuation `{}()[];,|` (plus `=` for
/// Hugin NET; BIF state names such as `>=7.5` keep their `=`).
pub(crate) fn tokenize(text: &str, comments: Comments, file: &str) -> Result<Vec<Tok>, BayesError> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut line = 1;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        match comments {
            Comments::CStyle if c == '/' && chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            Comments::CStyle if c == '/' && chars.get(i + 1) == Some(&'*') => {
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
                continue;
            }
            Comments::Percent if c == '%' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        if c == '"' {
            let start_line = line;
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\n' {
                    line += 1;
                }
                s.push(chars[i]);
                i += 1;
            }
            if i >= chars.len() {
                return Err(BayesError::parse(file, start_line, "unterminated string"));
            }
            i += 1;
            out.push(Tok {
                text: s,
                line: start_line,
                quoted: true,
            });
            continue;
        }
        let punct = match comments {
            Comments::CStyle => "{}()[];,|",
            Comments::Percent => "{}()[];,|=",
        };
        if punct.contains(c) {
            out.push(Tok {
                text: c.to_string(),
                line,
                quoted: false,
            });
            i += 1;
            continue;
        }
        let mut s = String::new();
        while i < chars.len()
            && !chars[i].is_whitespace()
            && !punct.contains(chars[i])
            && chars[i] != '"'
        {
            s.push(chars[i]);
            i += 1;
        }
        out.push(Tok {
            text: s,
            line,
            quoted: false,
        });
    }
    Ok(out)
}

/// A cursor over tokens with error helpers.
pub(crate) struct Cursor<'a> {
    toks: &'a [Tok],
    pos: usize,
    file: &'a str,
}

impl<'a> Cursor<'a> {
    pub fn new(toks: &'a [Tok], file: &'a str) -> Self {
        Self { toks, pos: 0, file }
    }
    pub fn peek(&self) -> Option<&'a Tok> {
        self.toks.get(self.pos)
    }
    pub fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map_or(1, |t| t.line)
    }
    pub fn err(&self, msg: impl Into<String>) -> BayesError {
        BayesError::parse(self.file, self.line(), msg)
    }
    pub fn next(&mut self) -> Result<&'a Tok, BayesError> {
        let t = self
            .toks
            .get(self.pos)
            .ok_or_else(|| self.err("unexpected end of file"))?;
        self.pos += 1;
        Ok(t)
    }
    pub fn expect(&mut self, s: &str) -> Result<(), BayesError> {
        let t = self.next()?;
        if t.text == s && !t.quoted {
            Ok(())
        } else {
            self.pos -= 1;
            Err(self.err(format!("expected `{s}`, found `{}`", t.text)))
        }
    }
    pub fn eat(&mut self, s: &str) -> bool {
        if self.peek().is_some_and(|t| t.text == s && !t.quoted) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    pub fn word(&mut self) -> Result<String, BayesError> {
        let t = self.next()?;
        if !t.quoted && "{}()[];,|=".contains(t.text.as_str()) {
            self.pos -= 1;
            return Err(self.err(format!("expected a name, found `{}`", t.text)));
        }
        Ok(t.text.clone())
    }
    pub fn number(&mut self) -> Result<f64, BayesError> {
        let t = self.next()?;
        t.text.parse::<f64>().map_err(|_| {
            BayesError::parse(
                self.file,
                t.line,
                format!("expected a number, found `{}`", t.text),
            )
        })
    }
    /// Skips a balanced `{ ... }` block (the cursor is at `{`).
    pub fn skip_block(&mut self) -> Result<(), BayesError> {
        self.expect("{")?;
        let mut depth = 1;
        while depth > 0 {
            let t = self.next()?;
            if !t.quoted {
                if t.text == "{" {
                    depth += 1;
                } else if t.text == "}" {
                    depth -= 1;
                }
            }
        }
        Ok(())
    }
    /// Skips to just after the next `;`. A `{` or `}` before it is an error (an
    /// unbalanced brace: a block that is not closed would otherwise swallow the next one).
    pub fn skip_statement(&mut self) -> Result<(), BayesError> {
        loop {
            let t = self.next()?;
            if t.quoted {
                continue;
            }
            match t.text.as_str() {
                ";" => return Ok(()),
                "{" | "}" => {
                    self.pos -= 1;
                    return Err(self.err(format!(
                        "expected `;` before `{}` (unbalanced braces: a block not closed?)",
                        t.text
                    )));
                }
                _ => {}
            }
        }
    }
}
