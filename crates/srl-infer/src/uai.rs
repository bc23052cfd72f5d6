//! UAI `MARKOV` model files and `.evid` evidence files (the format of the UAI inference
//! competitions, read by libDAI, PGMax, merlin, …).
//!
//! Model file: `MARKOV`, the number of variables, their cardinalities, the number of
//! factors, one scope per factor (`size v1 v2 …`), then one table per factor (`count`
//! followed by the non-negative potential values, **last scope variable fastest**).
//! Only factors of scope size 0 (constants, ignored), 1 (unary) and 2 (pairwise) are
//! supported; values must be finite and non-negative (a 0 is a hard constraint: its
//! log-potential is `-∞`, see [`crate::mrf::ORDINARY_ABS_LOG_POTENTIAL`]).
//!
//! # Reading large and hostile files
//! The model reader streams: it tokenises a buffered reader one token at a time (no
//! whole-file string, no token list), so its working memory is the model itself plus one
//! table. Nothing is allocated from a header count before the data behind it has been
//! read, and every size is checked with checked arithmetic against
//! [`MAX_UAI_STATES`] and [`MAX_UAI_TABLE_ENTRIES`], so a file declaring 10^12 states or
//! 4.9·10^9 factors gives an [`InferError::Parse`] naming the file and line, never an
//! allocation failure. Identical pairwise tables (same shape, same bit patterns after
//! `ln`) are stored once in the model's table pool: a Potts model with 2·10^6 edges read
//! from a file holds one table, not 2·10^6.
//!
//! Evidence file: `k v1 x1 v2 x2 …` (UAI 2010+), or the older form with a leading sample
//! count `1` (`1 k v1 x1 …`).

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::error::InferError;
use crate::mrf::{MrfParts, PairTable, PairwiseMrf};

/// The largest total number of states `Σ_v k_v` a UAI model may declare (2^30, the
/// model limit [`crate::mrf::MAX_MODEL_ENTRIES`]): the unary potentials alone then take
/// 8 GiB. Larger models are rejected while the header is read, before anything is
/// allocated; within the limit, the unary array is reserved fallibly, so a machine (or a
/// memory cap) without room for it gives [`InferError::TooLarge`], never an abort.
pub const MAX_UAI_STATES: usize = crate::mrf::MAX_MODEL_ENTRIES;

/// The largest number of entries one UAI factor table may declare (2^31, i.e. 16 GiB
/// of `f64`): a pairwise factor over two variables of 2^32 states each is rejected with
/// a parse error instead of overflowing `k_u · k_v`.
pub const MAX_UAI_TABLE_ENTRIES: usize = 1 << 31;

/// The longest token the model reader accepts; a longer one (say a number with 300 digits)
/// is an error rather than silently cut to a different number.
const MAX_TOKEN_BYTES: usize = 256;

/// A streaming whitespace tokenizer over a buffered reader, tracking 1-based lines.
struct Stream<R> {
    reader: R,
    file: PathBuf,
    /// The current token's bytes (reused), at most [`MAX_TOKEN_BYTES`].
    token: Vec<u8>,
    /// The current token was longer than [`MAX_TOKEN_BYTES`] (its tail was not kept).
    truncated: bool,
    /// Line of the reader's position (1-based).
    line: usize,
    /// Line of the last token read (where an unexpected end of file is reported).
    last_token_line: usize,
}

impl<R: BufRead> Stream<R> {
    fn new(reader: R, file: &Path) -> Self {
        Self {
            reader,
            file: file.to_path_buf(),
            token: Vec::with_capacity(32),
            truncated: false,
            line: 1,
            last_token_line: 1,
        }
    }

    fn err(&self, line: usize, message: impl Into<String>) -> InferError {
        InferError::Parse {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }

    fn io(&self, source: std::io::Error) -> InferError {
        InferError::Io {
            file: self.file.clone(),
            source,
        }
    }

    /// Reads the next token into `self.token`; returns its line, or `None` at end of input.
    ///
    /// Whitespace is `u8::is_ascii_whitespace`; any other control byte is an error (binary
    /// data: `/dev/zero` would otherwise be one endless token). A token longer than
    /// [`MAX_TOKEN_BYTES`] keeps its first [`MAX_TOKEN_BYTES`] bytes and sets
    /// `self.truncated`; the rest of it is never read. The buffer is scanned a slice at a
    /// time (skip whitespace, find the token's end, copy it once).
    fn advance(&mut self) -> Result<Option<usize>, InferError> {
        self.token.clear();
        self.truncated = false;
        let mut start_line = None;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io(e)),
            };
            if buf.is_empty() {
                return Ok(start_line);
            }
            let mut i = 0;
            if start_line.is_none() {
                while let Some(&b) = buf.get(i)
                    && b.is_ascii_whitespace()
                {
                    if b == b'\n' {
                        self.line += 1;
                    }
                    i += 1;
                }
                if i == buf.len() {
                    self.reader.consume(i);
                    continue;
                }
                start_line = Some(self.line);
                self.last_token_line = self.line;
            }
            let rest = &buf[i..];
            let end = rest
                .iter()
                .position(u8::is_ascii_whitespace)
                .unwrap_or(rest.len());
            let room = MAX_TOKEN_BYTES - self.token.len();
            // the bytes looked at: the token's up to one past the room left (as a byte at a
            // time would: a control byte there is an error, any other one a truncation)
            let seen = &rest[..end.min(room + 1)];
            if let Some(&b) = seen.iter().find(|b| b.is_ascii_control()) {
                return Err(self.err(
                    self.line,
                    format!("control byte 0x{b:02x}: not a text file"),
                ));
            }
            if end > room {
                self.token.extend_from_slice(&rest[..room]);
                self.truncated = true;
                self.reader.consume(i + room);
                return Ok(start_line);
            }
            self.token.extend_from_slice(&rest[..end]);
            let finished = end < rest.len();
            self.reader.consume(i + end);
            if finished {
                return Ok(start_line);
            }
        }
    }

    fn next(&mut self, what: &str) -> Result<(&str, usize), InferError> {
        match self.advance()? {
            Some(line) if self.truncated => Err(self.err(
                line,
                format!("expected {what}, found a token longer than {MAX_TOKEN_BYTES} bytes"),
            )),
            Some(line) => match std::str::from_utf8(&self.token) {
                Ok(t) => Ok((t, line)),
                Err(_) => Err(self.err(line, format!("expected {what}, found non-UTF-8 bytes"))),
            },
            None => Err(self.err(
                self.last_token_line,
                format!("unexpected end of file, expected {what}"),
            )),
        }
    }

    fn usize(&mut self, what: &str) -> Result<(usize, usize), InferError> {
        let (t, line) = self.next(what)?;
        match t.parse::<usize>() {
            Ok(x) => Ok((x, line)),
            Err(_) => {
                let message = format!("expected {what} (a non-negative integer), found {t:?}");
                Err(self.err(line, message))
            }
        }
    }

    fn f64(&mut self, what: &str) -> Result<(f64, usize), InferError> {
        let (t, line) = self.next(what)?;
        match t.parse::<f64>() {
            Ok(x) => Ok((x, line)),
            Err(_) => {
                let message = format!("expected {what} (a number), found {t:?}");
                Err(self.err(line, message))
            }
        }
    }

    fn done(&mut self) -> Result<(), InferError> {
        match self.advance()? {
            Some(line) => {
                let t = String::from_utf8_lossy(&self.token).into_owned();
                Err(self.err(line, format!("unexpected trailing token {t:?}")))
            }
            None => Ok(()),
        }
    }
}

/// Whitespace tokens of a small in-memory text with their 1-based line numbers (evidence
/// files, whose two layouts are told apart by their token count).
struct Tokens<'a> {
    toks: Vec<(&'a str, usize)>,
    pos: usize,
    file: PathBuf,
    last_line: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str, file: &Path) -> Self {
        let toks: Vec<(&str, usize)> = text
            .lines()
            .enumerate()
            .flat_map(|(i, l)| l.split_whitespace().map(move |t| (t, i + 1)))
            .collect();
        let last_line = text.lines().count().max(1);
        Self {
            toks,
            pos: 0,
            file: file.to_path_buf(),
            last_line,
        }
    }

    fn err(&self, line: usize, message: impl Into<String>) -> InferError {
        InferError::Parse {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }

    fn next(&mut self, what: &str) -> Result<(&'a str, usize), InferError> {
        let t = self.toks.get(self.pos).copied().ok_or_else(|| {
            self.err(
                self.last_line,
                format!("unexpected end of file, expected {what}"),
            )
        })?;
        self.pos += 1;
        Ok(t)
    }

    fn usize(&mut self, what: &str) -> Result<(usize, usize), InferError> {
        let (t, line) = self.next(what)?;
        t.parse::<usize>().map(|x| (x, line)).map_err(|_| {
            self.err(
                line,
                format!("expected {what} (a non-negative integer), found {t:?}"),
            )
        })
    }

    fn done(&self) -> Result<(), InferError> {
        match self.toks.get(self.pos) {
            Some(&(t, line)) => Err(self.err(line, format!("unexpected trailing token {t:?}"))),
            None => Ok(()),
        }
    }
}

/// One factor scope: its size (0, 1 or 2), its variables, their cardinalities (read once
/// while the scopes are parsed, so the table pass does not look them up again at
/// scattered places) and the line it was declared on, in 24 bytes.
#[derive(Clone, Copy)]
struct Scope {
    /// `line << 2 | size` (a line number below `2^62`: a file that long cannot exist).
    line_len: u64,
    vars: [u32; 2],
    cards: [u32; 2],
}

impl Scope {
    fn len(&self) -> usize {
        (self.line_len & 3) as usize
    }

    fn line(&self) -> usize {
        (self.line_len >> 2) as usize
    }
}

/// The pool of distinct pairwise tables, keyed by a hash of shape and bit patterns.
#[derive(Default)]
struct TablePool {
    tables: Vec<PairTable>,
    by_hash: HashMap<u64, Vec<u32>>,
}

impl TablePool {
    /// The index of a table equal (bit for bit) to `rows x cols` `logs`, adding it if new.
    fn intern(&mut self, rows: usize, cols: usize, logs: &[f64]) -> u32 {
        let mut h = DefaultHasher::new();
        (rows, cols).hash(&mut h);
        for x in logs {
            x.to_bits().hash(&mut h);
        }
        let candidates = self.by_hash.entry(h.finish()).or_default();
        for &t in candidates.iter() {
            let tab = &self.tables[t as usize];
            if tab.rows == rows
                && tab.cols == cols
                && tab
                    .log_values
                    .iter()
                    .zip(logs)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            {
                return t;
            }
        }
        let t = self.tables.len() as u32;
        self.tables.push(PairTable::new(rows, cols, logs.to_vec()));
        candidates.push(t);
        t
    }
}

/// A potential of a UAI file that is not what it says: today a positive number written in
/// the file that underflows to 0 in `f64` (e.g. `1e-400`), which the model then holds as
/// a hard zero (an impossible state).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UaiWarning {
    /// The file (or source name).
    pub file: PathBuf,
    /// 1-based line of the value.
    pub line: usize,
    /// What happened.
    pub message: String,
}

impl std::fmt::Display for UaiWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

/// At most this many warnings are kept one by one; the rest are counted in a last one.
const MAX_WARNINGS: usize = 20;

/// Whether a number token is written as zero (`0`, `0.0`, `-0`, `0e5`, ...): only zero
/// digits before the exponent.
fn written_as_zero(token: &str) -> bool {
    let mantissa = token.split(['e', 'E']).next().unwrap_or(token);
    !mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

/// Parses a UAI `MARKOV` model from a buffered reader (see [`PairwiseMrf::from_uai_str`]).
fn parse_markov<R: BufRead>(reader: R, source: &Path) -> Result<PairwiseMrf, InferError> {
    parse_markov_warn(reader, source).map(|(m, _)| m)
}

/// [`parse_markov`] with the warnings of the file.
fn parse_markov_warn<R: BufRead>(
    reader: R,
    source: &Path,
) -> Result<(PairwiseMrf, Vec<UaiWarning>), InferError> {
    let mut warnings: Vec<UaiWarning> = Vec::new();
    let mut underflows = 0usize;
    let mut t = Stream::new(reader, source);
    let (kind, line) = t.next("the model type")?;
    if !kind.eq_ignore_ascii_case("MARKOV") {
        let message = format!("expected MARKOV, found {kind:?}");
        return Err(t.err(line, message));
    }
    let (n, line) = t.usize("the number of variables")?;
    if n > u32::MAX as usize {
        return Err(t.err(
            line,
            format!("{n} variables: more than the 2^32 - 1 a model can index"),
        ));
    }
    // Capacities are capped: the data behind a header count must be read before it is
    // trusted (a file declaring 10^12 variables ends long before that).
    let mut num_states = Vec::with_capacity(n.min(1 << 16));
    let mut total_states = 0usize;
    for _ in 0..n {
        let (k, line) = t.usize("a cardinality")?;
        if k == 0 {
            return Err(t.err(line, "cardinality 0"));
        }
        total_states = total_states
            .checked_add(k)
            .filter(|&s| s <= MAX_UAI_STATES)
            .ok_or_else(|| {
                t.err(
                    line,
                    format!(
                        "cardinality {k} brings the model's total number of states past \
                         {MAX_UAI_STATES} (too large to hold)"
                    ),
                )
            })?;
        num_states.push(k);
    }
    let (f, _) = t.usize("the number of factors")?;
    let mut scopes: Vec<Scope> = Vec::with_capacity(f.min(1 << 16));
    for _ in 0..f {
        let (size, line) = t.usize("a scope size")?;
        if size > 2 {
            return Err(t.err(
                line,
                format!(
                    "factor of {size} variables; only unary and pairwise factors are supported"
                ),
            ));
        }
        let mut scope = Scope {
            line_len: ((line as u64) << 2) | size as u64,
            vars: [0; 2],
            cards: [1; 2],
        };
        for i in 0..size {
            let (v, vline) = t.usize("a variable index")?;
            if v >= n {
                return Err(t.err(vline, format!("variable {v} out of range (n = {n})")));
            }
            if i == 1 && scope.vars[0] as usize == v {
                return Err(t.err(vline, format!("variable {v} repeated in a scope")));
            }
            scope.vars[i] = v as u32;
            // at most MAX_UAI_STATES (checked above), so it fits
            scope.cards[i] = num_states[v] as u32;
        }
        let expected = scope.cards[..size]
            .iter()
            .try_fold(1usize, |acc, &k| acc.checked_mul(k as usize))
            .filter(|&e| e <= MAX_UAI_TABLE_ENTRIES);
        if expected.is_none() {
            return Err(t.err(
                line,
                format!(
                    "the factor's table would have more than {MAX_UAI_TABLE_ENTRIES} entries \
                     (too large to hold)"
                ),
            ));
        }
        scopes.push(scope);
    }
    let mut off = Vec::with_capacity(n + 1);
    off.push(0usize);
    for &k in &num_states {
        off.push(off[off.len() - 1] + k);
    }
    let mut unary: Vec<f64> = Vec::new();
    unary
        .try_reserve_exact(total_states)
        .map_err(|_| InferError::TooLarge {
            what: "states to hold in memory (the unary potentials)",
            count: total_states,
        })?;
    unary.resize(total_states, 0.0);
    let pairwise = scopes.iter().filter(|s| s.len() == 2).count();
    let mut edges = Vec::with_capacity(pairwise);
    let mut edge_tables = Vec::with_capacity(pairwise);
    let mut pool = TablePool::default();
    let mut logs: Vec<f64> = Vec::new();
    for scope in &scopes {
        let vars = &scope.vars[..scope.len()];
        let expected: usize = scope.cards.iter().map(|&k| k as usize).product();
        let (count, line) = t.usize("a table size")?;
        if count != expected {
            let message = format!(
                "table has {count} entries, the scope declared on line {} needs {expected}",
                scope.line()
            );
            return Err(t.err(line, message));
        }
        logs.clear();
        for _ in 0..count {
            let (x, line) = t.f64("a potential value")?;
            // A zero is a hard constraint: its log-potential is -∞.
            if !(x.is_finite() && x >= 0.0) {
                let message = format!("potential {x} is not non-negative and finite");
                return Err(t.err(line, message));
            }
            if x == 0.0 && !written_as_zero(std::str::from_utf8(&t.token).unwrap_or("")) {
                underflows += 1;
                if warnings.len() < MAX_WARNINGS {
                    let token = String::from_utf8_lossy(&t.token).into_owned();
                    warnings.push(UaiWarning {
                        file: source.to_path_buf(),
                        line,
                        message: format!(
                            "potential {token} underflows to 0 in f64 and is read as a hard zero (an impossible state)"
                        ),
                    });
                }
            }
            logs.push(x.ln());
        }
        match *vars {
            [] => {}
            [v] => {
                let v = v as usize;
                for (u, l) in unary[off[v]..off[v + 1]].iter_mut().zip(&logs) {
                    *u += l;
                }
            }
            [a, b] => {
                edges.push((a, b));
                let [ka, kb] = scope.cards.map(|k| k as usize);
                edge_tables.push(pool.intern(ka, kb, &logs));
            }
            _ => unreachable!("scopes have at most two variables"),
        }
    }
    t.done()?;
    if underflows > warnings.len() {
        warnings.push(UaiWarning {
            file: source.to_path_buf(),
            line: t.last_token_line,
            message: format!(
                "{} more potentials underflow to 0 and are read as hard zeros ({underflows} in all)",
                underflows - warnings.len()
            ),
        });
    }
    // the scopes (24 bytes a factor) are freed before the model is built beside the parts
    drop((scopes, off, logs));
    let mrf = PairwiseMrf::new(MrfParts {
        num_states,
        unary,
        edges,
        edge_tables,
        tables: pool.tables,
        evidence: Vec::new(),
    })
    .map_err(|e| in_file(source, e))?;
    Ok((mrf, warnings))
}

/// A validation error of [`PairwiseMrf::new`] on a model read from `source`, with the
/// file named (the value's line is not known after parsing).
pub(crate) fn in_file(source: &Path, e: InferError) -> InferError {
    match e {
        e @ (InferError::Parse { .. } | InferError::Io { .. }) => e,
        other => InferError::InFile {
            file: source.to_path_buf(),
            source: Box::new(other),
        },
    }
}

impl PairwiseMrf {
    /// Parses a UAI `MARKOV` model from `text`; `source` names it in errors.
    ///
    /// Several unary factors on one variable add up; each pairwise factor becomes one edge
    /// (in file order). Pairwise tables that are identical bit for bit share one entry of
    /// the table pool ([`PairwiseMrf::tables`]). Evidence is empty.
    ///
    /// # Errors
    /// [`InferError::Parse`] (file and 1-based line) for a malformed file, a factor with
    /// more than two variables, a repeated variable in a scope, a potential `< 0` or
    /// non-finite, more than `u32::MAX` variables, a total of more than
    /// [`MAX_UAI_STATES`] states or a table of more than [`MAX_UAI_TABLE_ENTRIES`]
    /// entries; the validation errors of [`PairwiseMrf::new`].
    ///
    /// # Examples
    /// ```
    /// use srl_infer::PairwiseMrf;
    /// let text = "MARKOV\n2\n2 2\n2\n1 0\n2 0 1\n\n2 1.0 3.0\n4 2.0 1.0 1.0 2.0\n";
    /// let mrf = PairwiseMrf::from_uai_str(text, "tiny.uai")?;
    /// assert_eq!(mrf.unary(0)[1], 3f64.ln());
    /// let back = PairwiseMrf::from_uai_str(&mrf.to_uai_string(), "again.uai")?;
    /// assert!((back.pair_table(0).get(0, 0) - 2f64.ln()).abs() < 1e-15);
    /// # Ok::<(), srl_infer::InferError>(())
    /// ```
    pub fn from_uai_str(text: &str, source: impl AsRef<Path>) -> Result<Self, InferError> {
        parse_markov(text.as_bytes(), source.as_ref())
    }

    /// Parses a UAI `MARKOV` model from any buffered reader, streaming (see the
    /// [module documentation](crate::uai) for the memory bound); `source` names it in
    /// errors.
    ///
    /// # Errors
    /// [`InferError::Io`] if reading fails, else as [`PairwiseMrf::from_uai_str`].
    pub fn from_uai_reader(
        reader: impl BufRead,
        source: impl AsRef<Path>,
    ) -> Result<Self, InferError> {
        parse_markov(reader, source.as_ref())
    }

    /// Reads a UAI `MARKOV` file (see [`PairwiseMrf::from_uai_str`]).
    ///
    /// # Errors
    /// [`InferError::Io`] if the file cannot be read, else as
    /// [`PairwiseMrf::from_uai_str`].
    pub fn read_uai(path: impl AsRef<Path>) -> Result<Self, InferError> {
        Self::read_uai_with_warnings(path).map(|(m, _)| m)
    }

    /// [`PairwiseMrf::read_uai`], with the file's warnings: positive potentials that
    /// underflow to 0 in `f64` (say `1e-400`) and so become hard zeros, each with file and
    /// line (the first 20, then a count). A front-end prints them.
    ///
    /// # Errors
    /// As [`PairwiseMrf::read_uai`].
    pub fn read_uai_with_warnings(
        path: impl AsRef<Path>,
    ) -> Result<(Self, Vec<UaiWarning>), InferError> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|source| InferError::Io {
            file: path.to_path_buf(),
            source,
        })?;
        if file.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(InferError::Io {
                file: path.to_path_buf(),
                source: std::io::Error::other("is a folder, not a UAI file"),
            });
        }
        parse_markov_warn(BufReader::with_capacity(1 << 16, file), path)
    }

    /// The model as a UAI `MARKOV` file: one unary factor per variable (in variable order)
    /// then one pairwise factor per edge (in edge order), potentials `exp(θ)` printed with
    /// round-trip precision. Evidence is not included (see
    /// [`PairwiseMrf::evidence_to_uai_string`]). For large models prefer
    /// [`PairwiseMrf::write_uai`] or [`PairwiseMrf::write_uai_to`], which stream.
    #[must_use]
    pub fn to_uai_string(&self) -> String {
        let mut out = Vec::new();
        // Writing into a Vec cannot fail, and every byte written is ASCII.
        let _ = self.write_uai_to(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Streams the model in the layout of [`PairwiseMrf::to_uai_string`] to `out`
    /// (unbuffered: wrap files in a [`std::io::BufWriter`]).
    ///
    /// # Errors
    /// The first error `out` returns.
    pub fn write_uai_to(&self, mut out: impl Write) -> std::io::Result<()> {
        let n = self.num_nodes();
        writeln!(out, "MARKOV\n{n}")?;
        for (v, k) in self.num_states.iter().enumerate() {
            let sep = if v + 1 == n { "" } else { " " };
            write!(out, "{k}{sep}")?;
        }
        writeln!(out)?;
        writeln!(out, "{}", n + self.num_edges())?;
        for v in 0..n {
            writeln!(out, "1 {v}")?;
        }
        for &(u, v) in &self.edges {
            writeln!(out, "2 {u} {v}")?;
        }
        for v in 0..n {
            let vals = self.unary(v);
            write!(out, "\n{}\n", vals.len())?;
            for x in vals {
                write!(out, " {:?}", x.exp())?;
            }
            writeln!(out)?;
        }
        for e in 0..self.num_edges() {
            let tab = self.pair_table(e);
            writeln!(out, "\n{}", tab.log_values.len())?;
            for row in tab.log_values.chunks(tab.cols.max(1)) {
                for x in row {
                    write!(out, " {:?}", x.exp())?;
                }
                writeln!(out)?;
            }
        }
        Ok(())
    }

    /// Writes the model as a UAI `MARKOV` file to `path` (streamed through a buffer; see
    /// [`PairwiseMrf::to_uai_string`] for the layout). An existing file is replaced.
    ///
    /// # Errors
    /// [`InferError::Io`].
    pub fn write_uai(&self, path: impl AsRef<Path>) -> Result<(), InferError> {
        let path = path.as_ref();
        let io = |source| InferError::Io {
            file: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::create(path).map_err(io)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
        self.write_uai_to(&mut w).map_err(io)?;
        w.flush().map_err(io)
    }

    /// The model's evidence as a UAI `.evid` line (`k v1 x1 v2 x2 …`).
    #[must_use]
    pub fn evidence_to_uai_string(&self) -> String {
        let obs: Vec<String> = self
            .evidence
            .iter()
            .enumerate()
            .filter_map(|(v, e)| e.map(|x| format!("{v} {x}")))
            .collect();
        let mut s = obs.len().to_string();
        for o in obs {
            s.push(' ');
            s.push_str(&o);
        }
        s.push('\n');
        s
    }
}

/// Parses a UAI evidence file for a model with `num_nodes` variables into the
/// [`MrfParts::evidence`] layout (apply it with [`PairwiseMrf::with_evidence`], which also
/// checks the states against the cardinalities).
///
/// # Errors
/// [`InferError::Parse`] (file, line) for malformed text, a variable `>= num_nodes` or a
/// variable observed twice with different states.
///
/// # Examples
/// ```
/// let ev = srl_infer::parse_uai_evidence("2 0 1 3 0\n", "x.evid", 4)?;
/// assert_eq!(ev, vec![Some(1), None, None, Some(0)]);
/// # Ok::<(), srl_infer::InferError>(())
/// ```
pub fn parse_uai_evidence(
    text: &str,
    source: impl AsRef<Path>,
    num_nodes: usize,
) -> Result<Vec<Option<u32>>, InferError> {
    let mut t = Tokens::new(text, source.as_ref());
    let mut ev = vec![None; num_nodes];
    if t.toks.is_empty() {
        return Ok(ev);
    }
    let first: usize = t.toks[0].0.parse().unwrap_or(usize::MAX);
    let len = t.toks.len();
    // Old format: "1 k v x ..." (one sample).
    if !(first != usize::MAX && len == 1 + 2 * first)
        && first == 1
        && len >= 2
        && t.toks[1].0.parse::<usize>().is_ok_and(|k| len == 2 + 2 * k)
    {
        t.pos = 1;
    }
    let (k, _) = t.usize("the number of observed variables")?;
    for _ in 0..k {
        let (v, line) = t.usize("a variable index")?;
        let (x, xline) = t.usize("an observed state")?;
        if v >= num_nodes {
            return Err(t.err(line, format!("variable {v} out of range (n = {num_nodes})")));
        }
        let x = u32::try_from(x).map_err(|_| t.err(xline, format!("state {x} too large")))?;
        if let Some(prev) = ev[v]
            && prev != x
        {
            return Err(t.err(line, format!("variable {v} observed as {prev} and {x}")));
        }
        ev[v] = Some(x);
    }
    t.done()?;
    Ok(ev)
}

/// Reads a UAI evidence file (see [`parse_uai_evidence`]).
///
/// # Errors
/// [`InferError::Io`], else as [`parse_uai_evidence`].
pub fn read_uai_evidence(
    path: impl AsRef<Path>,
    num_nodes: usize,
) -> Result<Vec<Option<u32>>, InferError> {
    use std::io::Read as _;
    let path = path.as_ref();
    let io = |source| InferError::Io {
        file: path.to_path_buf(),
        source,
    };
    // an evidence file lists each variable at most once: 2 numbers of at most 20 digits
    // per variable; a longer file (say /dev/zero) is refused without reading it all
    let cap = (num_nodes as u64)
        .saturating_mul(48)
        .saturating_add(1 << 20);
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(InferError::Parse {
            file: path.to_path_buf(),
            line: 1,
            message: format!(
                "evidence file longer than {cap} bytes, more than {num_nodes} observed variables can take"
            ),
        });
    }
    if let Some(pos) = bytes
        .iter()
        .position(|b| b.is_ascii_control() && !b.is_ascii_whitespace())
    {
        let line = 1 + bytes[..pos].iter().filter(|&&b| b == b'\n').count();
        return Err(InferError::Parse {
            file: path.to_path_buf(),
            line,
            message: format!("control byte 0x{:02x}: not a text file", bytes[pos]),
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let pos = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..pos].iter().filter(|&&b| b == b'\n').count();
        InferError::Parse {
            file: path.to_path_buf(),
            line,
            message: "not UTF-8 text".into(),
        }
    })?;
    parse_uai_evidence(&text, path, num_nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "MARKOV
3
2 2 3
3
1 0
2 0 1
2 1 2

2
 0.436 0.564

4
 0.128 0.872
 0.920 0.080

6
 0.210 0.333 0.457
 0.811 0.100 0.189
";

    #[test]
    fn huge_and_tiny_potentials_round_trip_in_short_form() {
        // written with Display, 1e308 became a 309-digit decimal that the reader's
        // 256-byte token limit rejected (found by the reader proptest, issue 15)
        let text = "MARKOV\n1\n2\n1\n1 0\n2\n 1e308 1e-300\n";
        let mrf = PairwiseMrf::from_uai_str(text, "huge.uai").unwrap();
        let copy = mrf.to_uai_string();
        assert!(copy.lines().all(|l| l.len() < 64), "{copy}");
        let back = PairwiseMrf::from_uai_str(&copy, "copy.uai").unwrap();
        assert_eq!(back.unary(0), mrf.unary(0));
    }

    #[test]
    fn control_bytes_stop_the_reader_and_endless_tokens_are_not_read_to_the_end() {
        let e = PairwiseMrf::from_uai_str("MARKOV\n1\n2\x00\n", "nul.uai").unwrap_err();
        assert!(
            e.to_string().contains("nul.uai:3: control byte 0x00"),
            "{e}"
        );
        // an endless stream of NULs (like /dev/zero) ends at the first byte
        let zeros = std::io::repeat(0u8);
        let e = PairwiseMrf::from_uai_reader(std::io::BufReader::new(zeros), "z").unwrap_err();
        assert!(e.to_string().contains("control byte"), "{e}");
        // an endless token of digits stops after MAX_TOKEN_BYTES
        let digits = std::io::Read::chain(&b"MARKOV\n"[..], std::io::repeat(b'7'));
        let e = PairwiseMrf::from_uai_reader(std::io::BufReader::new(digits), "d").unwrap_err();
        assert!(e.to_string().contains("longer than"), "{e}");
    }

    #[test]
    fn total_states_are_checked_before_allocating() {
        let e = PairwiseMrf::from_uai_str("MARKOV\n1\n2147483648\n0\n", "h.uai").unwrap_err();
        assert!(e.to_string().contains("h.uai:3"), "{e}");
        let e = PairwiseMrf::from_uai_str("MARKOV\n2\n1073741824 1\n0\n", "h.uai").unwrap_err();
        assert!(e.to_string().contains("past 1073741824"), "{e}");
    }

    #[test]
    fn underflowing_potentials_are_warned_about_with_their_line() {
        let dir = std::env::temp_dir().join(format!("srl-uai-warn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("u.uai");
        std::fs::write(&p, "MARKOV\n1\n3\n1\n1 0\n3\n 1e-400 0.0e7 1\n").unwrap();
        let (mrf, w) = PairwiseMrf::read_uai_with_warnings(&p).unwrap();
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].line, 7);
        assert!(
            w[0].to_string()
                .contains("u.uai:7: potential 1e-400 underflows")
        );
        assert_eq!(mrf.unary(0)[0], f64::NEG_INFINITY);
        assert!(written_as_zero("0") && written_as_zero("-0.000e9") && !written_as_zero("1e-400"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn evidence_contradicting_hard_zeros_is_found_by_arc_consistency() {
        let text = "MARKOV\n3\n2 2 2\n2\n2 0 1\n2 1 2\n4\n 1 0 0 1\n4\n 1 0 0 1\n";
        let mrf = PairwiseMrf::from_uai_str(text, "eq.uai").unwrap();
        mrf.check_feasible().unwrap();
        // x0 = 0 and x2 = 1 through a chain of equalities: infeasible, found two hops away
        let bad = mrf.with_evidence(vec![Some(0), None, Some(1)]).unwrap();
        let e = bad.check_feasible().unwrap_err();
        assert!(
            matches!(e, InferError::ZeroProbability { node: Some(_), .. }),
            "{e}"
        );
        let ok = mrf.with_evidence(vec![Some(1), None, Some(1)]).unwrap();
        ok.check_feasible().unwrap();
        // an odd cycle of "differ" constraints: infeasible, but arc consistent (documented)
        let cyc = "MARKOV\n3\n2 2 2\n3\n2 0 1\n2 1 2\n2 0 2\n4 0 1 1 0\n4 0 1 1 0\n4 0 1 1 0\n";
        let m = PairwiseMrf::from_uai_str(cyc, "cyc.uai").unwrap();
        m.check_feasible().unwrap();
        assert!(crate::Exact::default().marginals(&m).is_err());
    }

    #[test]
    fn parses_and_round_trips() {
        let mrf = PairwiseMrf::from_uai_str(SAMPLE, "sample.uai").unwrap();
        assert_eq!(mrf.num_nodes(), 3);
        assert_eq!(mrf.num_edges(), 2);
        assert_eq!(mrf.unary(0), &[0.436f64.ln(), 0.564f64.ln()]);
        // last variable fastest: entry (x1 = 1, x2 = 0) is the 4th value.
        assert_eq!(mrf.pair_table(1).get(1, 0), 0.811f64.ln());
        let again = PairwiseMrf::from_uai_str(&mrf.to_uai_string(), "again.uai").unwrap();
        for e in 0..2 {
            for (a, b) in mrf
                .pair_table(e)
                .log_values
                .iter()
                .zip(&again.pair_table(e).log_values)
            {
                assert!((a - b).abs() < 1e-14);
            }
        }
        let ev = parse_uai_evidence("1\n2 2 1 0 1\n", "old.evid", 3).unwrap();
        assert_eq!(ev, vec![Some(1), None, Some(1)]);
        let with = mrf.with_evidence(ev).unwrap();
        assert_eq!(with.evidence_to_uai_string(), "2 0 1 2 1\n");
    }

    #[test]
    fn errors_name_file_and_line() {
        // A zero is a hard constraint (log-potential -∞), a negative value an error.
        let zero = SAMPLE.replace("0.920", "0");
        let mrf = PairwiseMrf::from_uai_str(&zero, "zero.uai").unwrap();
        assert!(!mrf.is_ordinary());
        assert!(
            mrf.unary_all().contains(&f64::NEG_INFINITY)
                || mrf
                    .tables()
                    .iter()
                    .any(|t| t.log_values.contains(&f64::NEG_INFINITY))
        );
        let bad = SAMPLE.replace("0.920", "-0.5");
        match PairwiseMrf::from_uai_str(&bad, "bad.uai") {
            Err(InferError::Parse { file, line, .. }) => {
                assert_eq!(file, PathBuf::from("bad.uai"));
                assert_eq!(line, 14);
            }
            other => panic!("{other:?}"),
        }
        let bad = SAMPLE.replace("2 1 2\n", "3 0 1 2\n");
        assert!(matches!(
            PairwiseMrf::from_uai_str(&bad, "b.uai"),
            Err(InferError::Parse { line: 7, .. })
        ));
        let bad = SAMPLE.replace("MARKOV", "BAYES");
        assert!(matches!(
            PairwiseMrf::from_uai_str(&bad, "b.uai"),
            Err(InferError::Parse { line: 1, .. })
        ));
        assert!(matches!(
            PairwiseMrf::from_uai_str("MARKOV\n2\n2", "short.uai"),
            Err(InferError::Parse { line: 3, .. })
        ));
        assert!(matches!(
            parse_uai_evidence("1 5 0", "e.evid", 3),
            Err(InferError::Parse { line: 1, .. })
        ));
    }

    fn parse_err_line(text: &str) -> (usize, String) {
        match PairwiseMrf::from_uai_str(text, "h.uai") {
            Err(InferError::Parse { line, message, .. }) => (line, message),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn hostile_headers_give_parse_errors_before_allocating() {
        // One variable of 10^12 states: rejected on the cardinality's line.
        let (line, msg) = parse_err_line("MARKOV\n1\n1000000000000\n0\n");
        assert_eq!(line, 3);
        assert!(msg.contains("too large"), "{msg}");
        // Two variables of 2^32 states and a pairwise factor: k_u * k_v overflows.
        let (line, _) = parse_err_line("MARKOV\n2\n4294967296 4294967296\n1\n2 0 1\n");
        assert_eq!(line, 3);
        // Two variables of 2^20 states: within the state budget, but the pairwise
        // table (2^40 entries) is not.
        let (line, msg) = parse_err_line("MARKOV\n2\n1048576 1048576\n1\n2 0 1\n");
        assert_eq!(line, 5);
        assert!(msg.contains("more than"), "{msg}");
        // A declared factor count of 4.9e9 with no factors behind it: end of file.
        let (line, msg) = parse_err_line("MARKOV\n1\n2\n4900000000\n");
        assert_eq!(line, 4);
        assert!(msg.contains("end of file"), "{msg}");
        // A huge variable count is reported as such, not as "cardinality 0".
        let (line, msg) = parse_err_line("MARKOV\n99999999999\n2 2\n");
        assert_eq!(line, 2);
        assert!(msg.contains("variables"), "{msg}");
        let (_, msg) = parse_err_line("MARKOV\n99999\n2 2\n");
        assert!(msg.contains("end of file"), "{msg}");
        // A token too long to keep is an error, not a truncated number.
        let long = format!("MARKOV\n1\n2\n1\n1 0\n2 1 1{}\n", "0".repeat(300));
        let (line, msg) = parse_err_line(&long);
        assert_eq!(line, 6);
        assert!(msg.contains("longer than"), "{msg}");
        // A usize that does not parse at all.
        let (line, _) = parse_err_line("MARKOV\n1\n99999999999999999999999\n");
        assert_eq!(line, 3);
    }

    #[test]
    fn identical_tables_are_pooled_and_streaming_equals_text() {
        // A 4-cycle of Potts factors, one with other values, plus a repeated unary factor.
        let text = "MARKOV\n4\n2 2 2 2\n6\n2 0 1\n2 1 2\n2 2 3\n2 3 0\n1 0\n1 0\n\
                    4 2 1 1 2\n4 2 1 1 2\n4 2 1 1 2\n4 3 1 1 3\n2 1 2\n2 1 2\n";
        let mrf = PairwiseMrf::from_uai_str(text, "cycle.uai").unwrap();
        assert_eq!(mrf.num_edges(), 4);
        assert_eq!(mrf.tables().len(), 2);
        assert_eq!(mrf.edge_tables(), &[0, 0, 0, 1]);
        assert!((mrf.unary(0)[1] - 2.0 * 2f64.ln()).abs() < 1e-15);
        // A reader with a tiny buffer splits tokens across refills.
        let tiny = std::io::BufReader::with_capacity(3, text.as_bytes());
        let streamed = PairwiseMrf::from_uai_reader(tiny, "cycle.uai").unwrap();
        assert_eq!(streamed.to_parts(), mrf.to_parts());
        // Lines are still counted across refills.
        let bad = text.replace("4 3 1 1 3", "4 3 1 x 3");
        let tiny = std::io::BufReader::with_capacity(2, bad.as_bytes());
        match PairwiseMrf::from_uai_reader(tiny, "bad.uai") {
            Err(InferError::Parse { line, .. }) => assert_eq!(line, 14),
            other => panic!("{other:?}"),
        }
    }

    /// The tokens of `bytes` read one byte at a time (the reader's rules: whitespace
    /// separates, another control byte is an error, a token keeps its first
    /// `MAX_TOKEN_BYTES` bytes and the next one decides: a control byte is an error,
    /// another byte a truncation, after which the next token starts there), with their
    /// lines and truncation flags, then the error if any: the oracle of the buffered scan.
    #[allow(clippy::type_complexity)]
    fn byte_at_a_time(bytes: &[u8]) -> (Vec<(Vec<u8>, usize, bool)>, Option<String>) {
        let (mut toks, mut line, mut i) = (Vec::new(), 1usize, 0usize);
        loop {
            let (mut tok, mut start, mut truncated) = (Vec::new(), None, false);
            while let Some(&b) = bytes.get(i) {
                if b.is_ascii_whitespace() {
                    if start.is_some() {
                        break;
                    }
                    if b == b'\n' {
                        line += 1;
                    }
                } else if b.is_ascii_control() {
                    let e = format!("b.uai:{line}: control byte 0x{b:02x}: not a text file");
                    return (toks, Some(e));
                } else {
                    start.get_or_insert(line);
                    if tok.len() == MAX_TOKEN_BYTES {
                        truncated = true;
                        break;
                    }
                    tok.push(b);
                }
                i += 1;
            }
            match start {
                Some(l) => toks.push((tok, l, truncated)),
                None => return (toks, None),
            }
        }
    }

    fn cases() -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(256)
    }

    /// Tokens that stress a reader: huge, negative, non-numeric, special floats.
    const HOSTILE: [&str; 12] = [
        "0",
        "1",
        "3",
        "-1",
        "4294967296",
        "18446744073709551615",
        "99999999999999999999",
        "nan",
        "inf",
        "1e308",
        "x",
        "MARKOV",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(cases()))]

        /// Random bytes never panic the reader.
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..400)) {
            let _ = PairwiseMrf::from_uai_reader(bytes.as_slice(), "random.uai");
            let text = String::from_utf8_lossy(&bytes);
            let _ = parse_uai_evidence(&text, "random.evid", 3);
        }

        /// The reader scans its buffer a slice at a time: whatever the bytes, every buffer
        /// capacity gives the same model or the same error (file, line and message) as a
        /// buffer of one byte, which is the byte-at-a-time reading. The inputs mix valid
        /// files, whitespace and newlines, control bytes, and tokens around
        /// `MAX_TOKEN_BYTES` long.
        #[test]
        fn every_buffer_size_reads_alike(
            pieces in proptest::collection::vec((0usize..8, 0usize..300), 1..24),
            cap in 2usize..600,
        ) {
            let mut bytes: Vec<u8> = Vec::new();
            for (kind, len) in pieces {
                match kind {
                    0 => bytes.extend_from_slice(SAMPLE.as_bytes()),
                    1 => {
                        let near = [MAX_TOKEN_BYTES - 1, MAX_TOKEN_BYTES, MAX_TOKEN_BYTES + 1];
                        let n = near.get(len % 6).copied().unwrap_or(len);
                        bytes.extend(std::iter::repeat_n(b'7', n));
                    }
                    2 => bytes.extend_from_slice(b" \t"),
                    3 => bytes.extend_from_slice(b"\r\n\x0c"),
                    4 => bytes.push((len % 32) as u8),
                    5 => bytes.extend_from_slice(HOSTILE[len % HOSTILE.len()].as_bytes()),
                    6 => bytes.push(0x80 + (len % 128) as u8),
                    _ => bytes.extend_from_slice(b"MARKOV\n1\n2\n1\n1 0\n2 "),
                }
            }
            let read = |c: usize| {
                let r = std::io::BufReader::with_capacity(c, bytes.as_slice());
                PairwiseMrf::from_uai_reader(r, "b.uai")
                    .map(|m| m.to_uai_string())
                    .map_err(|e| e.to_string())
            };
            proptest::prop_assert_eq!(read(cap), read(1));
            // the tokens themselves, against the byte-at-a-time oracle
            let mut st = Stream::new(
                std::io::BufReader::with_capacity(cap, bytes.as_slice()),
                Path::new("b.uai"),
            );
            let mut got = Vec::new();
            let err = loop {
                match st.advance() {
                    Ok(Some(line)) => got.push((st.token.clone(), line, st.truncated)),
                    Ok(None) => break None,
                    Err(e) => break Some(e.to_string()),
                }
            };
            proptest::prop_assert_eq!((got, err), byte_at_a_time(&bytes));
        }

        /// Random token mutations of a valid file never panic and never yield a model
        /// that disagrees with its own cardinalities.
        #[test]
        fn mutated_files_never_panic(
            edits in proptest::collection::vec((0usize..64, 0usize..HOSTILE.len(), 0u8..3), 1..6)
        ) {
            let mut toks: Vec<String> = SAMPLE.split_whitespace().map(str::to_string).collect();
            for (pos, h, op) in edits {
                let p = pos % (toks.len() + 1);
                match op {
                    0 if p < toks.len() => toks[p] = HOSTILE[h].to_string(),
                    1 if p < toks.len() => { toks.remove(p); }
                    _ => toks.insert(p, HOSTILE[h].to_string()),
                }
            }
            if let Ok(mrf) = PairwiseMrf::from_uai_str(&toks.join(" "), "mutated.uai") {
                proptest::prop_assert_eq!(mrf.unary_all().len(), mrf.state_offsets()[mrf.num_nodes()]);
            }
        }
    }
}
