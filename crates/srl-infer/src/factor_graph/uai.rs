//! UAI `MARKOV` and `BAYES` model files of any arity as [`FactorGraph`]s, and the UAI
//! `MAR`, `MAP` and `PR` output writers.
//!
//! The reader streams one token at a time from a buffered reader: a control byte is an
//! error (binary data), a token longer than 256 bytes is an error, every size is checked
//! with checked arithmetic before anything is allocated from it, and table values are
//! pushed as they are read (a header that lies about its sizes allocates nothing it does
//! not read). Errors are [`InferError::Parse`] with the file and the 1-based line.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::{FactorGraph, FactorMap, FactorMarginals, MAX_ARITY, MAX_FACTOR_GRAPH_ENTRIES};
use crate::error::InferError;
use crate::uai::{UaiWarning, in_file};

/// The kind of a UAI model file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UaiKind {
    /// `MARKOV`: a Markov network (factors of non-negative potentials).
    Markov,
    /// `BAYES`: a Bayesian network; each table is the CPT of its scope's last variable
    /// given the others (each row over the last variable sums to 1).
    Bayes,
}

/// A BAYES row may differ from 1 by at most this much (tables of published UAI files are
/// often rounded to 4–6 digits).
pub const BAYES_ROW_TOLERANCE: f64 = 1e-3;

/// Longest accepted token in bytes.
const TOKEN_CAP: usize = 256;

/// Whitespace-separated words of a buffered reader with 1-based line numbers.
struct Lexer<R> {
    src: R,
    path: PathBuf,
    word: String,
    at_line: usize,
    word_line: usize,
}

impl<R: BufRead> Lexer<R> {
    fn fail(&self, line: usize, msg: impl Into<String>) -> InferError {
        InferError::Parse {
            file: self.path.clone(),
            line,
            message: msg.into(),
        }
    }

    /// Fills `self.word` with the next word; `false` at end of input.
    fn step(&mut self) -> Result<bool, InferError> {
        self.word.clear();
        let mut bytes: Vec<u8> = Vec::new();
        'outer: loop {
            let chunk = match self.src.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(InferError::Io {
                        file: self.path.clone(),
                        source,
                    });
                }
            };
            if chunk.is_empty() {
                break;
            }
            let mut taken = 0;
            while taken < chunk.len() {
                let c = chunk[taken];
                if c.is_ascii_whitespace() {
                    if !bytes.is_empty() {
                        self.src.consume(taken);
                        break 'outer;
                    }
                    if c == b'\n' {
                        self.at_line += 1;
                    }
                } else if c.is_ascii_control() {
                    let line = self.at_line;
                    return Err(self.fail(line, format!("control byte 0x{c:02x}: not a text file")));
                } else {
                    if bytes.is_empty() {
                        self.word_line = self.at_line;
                    }
                    if bytes.len() == TOKEN_CAP {
                        let line = self.word_line;
                        return Err(
                            self.fail(line, format!("a token longer than {TOKEN_CAP} bytes"))
                        );
                    }
                    bytes.push(c);
                }
                taken += 1;
            }
            self.src.consume(taken);
        }
        if bytes.is_empty() {
            return Ok(false);
        }
        match String::from_utf8(bytes) {
            Ok(s) => {
                self.word = s;
                Ok(true)
            }
            Err(_) => {
                let line = self.word_line;
                Err(self.fail(line, "non-UTF-8 bytes"))
            }
        }
    }

    fn want(&mut self, what: &str) -> Result<usize, InferError> {
        if self.step()? {
            Ok(self.word_line)
        } else {
            let line = self.word_line;
            Err(self.fail(line, format!("unexpected end of file, expected {what}")))
        }
    }

    fn count(&mut self, what: &str) -> Result<(usize, usize), InferError> {
        let line = self.want(what)?;
        self.word.parse::<usize>().map(|x| (x, line)).map_err(|_| {
            let msg = format!(
                "expected {what} (a non-negative integer), found {:?}",
                self.word
            );
            self.fail(line, msg)
        })
    }

    fn number(&mut self, what: &str) -> Result<(f64, usize), InferError> {
        let line = self.want(what)?;
        self.word.parse::<f64>().map(|x| (x, line)).map_err(|_| {
            let msg = format!("expected {what} (a number), found {:?}", self.word);
            self.fail(line, msg)
        })
    }
}

fn lexer<R: BufRead>(src: R, path: &Path) -> Lexer<R> {
    Lexer {
        src,
        path: path.to_path_buf(),
        word: String::new(),
        at_line: 1,
        word_line: 1,
    }
}

/// Reads the header and scopes of a UAI file: its kind, cardinalities, scopes (with the
/// line of each).
#[allow(clippy::type_complexity)]
fn header<R: BufRead>(
    lx: &mut Lexer<R>,
    stop_at_higher_order: bool,
) -> Result<(UaiKind, Vec<usize>, Vec<(Vec<usize>, usize)>, bool), InferError> {
    let line = lx.want("the model type")?;
    let kind = if lx.word.eq_ignore_ascii_case("MARKOV") {
        UaiKind::Markov
    } else if lx.word.eq_ignore_ascii_case("BAYES") {
        UaiKind::Bayes
    } else {
        let msg = format!("expected MARKOV or BAYES, found {:?}", lx.word);
        return Err(lx.fail(line, msg));
    };
    if stop_at_higher_order && kind == UaiKind::Bayes {
        return Ok((kind, Vec::new(), Vec::new(), true));
    }
    let (n, line) = lx.count("the number of variables")?;
    if n > u32::MAX as usize {
        return Err(lx.fail(line, format!("{n} variables: more than 2^32 - 1")));
    }
    let mut cards = Vec::with_capacity(n.min(1 << 16));
    let mut total = 0usize;
    for _ in 0..n {
        let (k, line) = lx.count("a cardinality")?;
        if k == 0 {
            return Err(lx.fail(line, "cardinality 0"));
        }
        total = match total
            .checked_add(k)
            .filter(|&t| t <= MAX_FACTOR_GRAPH_ENTRIES)
        {
            Some(t) => t,
            None => {
                let msg = format!(
                    "cardinality {k} brings the total number of states past {MAX_FACTOR_GRAPH_ENTRIES}"
                );
                return Err(lx.fail(line, msg));
            }
        };
        cards.push(k);
    }
    let (nf, line) = lx.count("the number of factors")?;
    if nf > u32::MAX as usize {
        return Err(lx.fail(line, format!("{nf} factors: more than 2^32 - 1")));
    }
    let mut scopes = Vec::with_capacity(nf.min(1 << 16));
    for _ in 0..nf {
        let (a, line) = lx.count("a scope size")?;
        if stop_at_higher_order && a > 2 {
            return Ok((kind, cards, scopes, true));
        }
        if a > MAX_ARITY {
            return Err(lx.fail(
                line,
                format!("scope of {a} variables, more than {MAX_ARITY}"),
            ));
        }
        if kind == UaiKind::Bayes && a == 0 {
            return Err(lx.fail(line, "a BAYES factor needs at least its child variable"));
        }
        let mut vars = Vec::with_capacity(a);
        let mut entries = 1usize;
        for _ in 0..a {
            let (v, vline) = lx.count("a variable index")?;
            if v >= n {
                return Err(lx.fail(vline, format!("variable {v} out of range (n = {n})")));
            }
            if vars.contains(&v) {
                return Err(lx.fail(vline, format!("variable {v} repeated in a scope")));
            }
            entries = match entries
                .checked_mul(cards[v])
                .filter(|&e| e <= MAX_FACTOR_GRAPH_ENTRIES)
            {
                Some(e) => e,
                None => {
                    return Err(lx.fail(
                        line,
                        format!(
                            "the factor's table would have more than {MAX_FACTOR_GRAPH_ENTRIES} entries (too large to hold)"
                        ),
                    ));
                }
            };
            vars.push(v);
        }
        scopes.push((vars, line));
    }
    Ok((kind, cards, scopes, false))
}

/// Whether the UAI file at `path` needs the general factor-graph path: it is `BAYES`, or
/// a `MARKOV` file with a factor of more than two variables. Only the header and scopes
/// are read. A file this scan cannot read (missing, malformed before its first
/// higher-order scope) gives `false`, so the pairwise reader reports its error as before.
#[must_use]
pub fn uai_needs_factor_graph(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut lx = lexer(BufReader::new(file), path);
    matches!(header(&mut lx, true), Ok((_, _, _, true)))
}

fn written_zero(token: &str) -> bool {
    let digits = token.split(['e', 'E']).next().unwrap_or(token);
    digits.bytes().all(|b| !b.is_ascii_digit() || b == b'0')
}

impl FactorGraph {
    /// Parses a UAI `MARKOV` or `BAYES` model of any arity from `reader` (`source` names
    /// it in errors). Potentials are non-negative and finite, stored as their natural
    /// logs (0 → `-∞`, a hard zero); for `BAYES`, every row of a table (the last scope
    /// variable's states for one joint state of the others) must sum to 1 within
    /// [`BAYES_ROW_TOLERANCE`]. Returns the model, its kind and warnings (positive values
    /// that underflow to 0, at most 20 listed).
    ///
    /// # Errors
    /// [`InferError::Parse`] (file, line) for malformed text, out-of-range or repeated
    /// scope variables, arities beyond [`MAX_ARITY`], tables of the wrong length or past
    /// 2^30 entries, negative/NaN/infinite values, BAYES rows that do not sum to 1;
    /// [`InferError::InFile`] for a model [`FactorGraph::add_factor`] refuses.
    pub fn from_uai_reader<R: BufRead>(
        reader: R,
        source: impl AsRef<Path>,
    ) -> Result<(Self, UaiKind, Vec<UaiWarning>), InferError> {
        let source = source.as_ref();
        let mut lx = lexer(reader, source);
        let (kind, cards, scopes, _) = header(&mut lx, false)?;
        let mut g = FactorGraph::new(cards.clone()).map_err(|e| in_file(source, e))?;
        let mut warnings = Vec::new();
        let mut underflows = 0usize;
        let mut logs: Vec<f64> = Vec::new();
        for (vars, sline) in &scopes {
            let expected: usize = vars.iter().map(|&v| cards[v]).product();
            let (count, line) = lx.count("a table size")?;
            if count != expected {
                let msg = format!(
                    "table has {count} entries, the scope of {} variables declared on line {sline} needs {expected}",
                    vars.len()
                );
                return Err(lx.fail(line, msg));
            }
            logs.clear();
            let child = vars.last().map_or(1, |&v| cards[v]);
            let mut row_sum = 0.0;
            let mut row_line = line;
            for i in 0..count {
                let (x, vline) = lx.number("a potential value")?;
                if !(x.is_finite() && x >= 0.0) {
                    return Err(lx.fail(
                        vline,
                        format!("potential {x} is not non-negative and finite"),
                    ));
                }
                if x == 0.0 && !written_zero(&lx.word) {
                    underflows += 1;
                    if warnings.len() < 20 {
                        warnings.push(UaiWarning {
                            file: source.to_path_buf(),
                            line: vline,
                            message: format!(
                                "potential {} underflows to 0 in f64 and is read as a hard zero (an impossible state)",
                                lx.word
                            ),
                        });
                    }
                }
                if kind == UaiKind::Bayes {
                    if i % child == 0 {
                        row_sum = 0.0;
                        row_line = vline;
                    }
                    row_sum += x;
                    if i % child == child - 1 && (row_sum - 1.0).abs() > BAYES_ROW_TOLERANCE {
                        let msg = format!(
                            "BAYES table row {} (from line {row_line}) sums to {row_sum}, not 1 (tolerance {BAYES_ROW_TOLERANCE})",
                            i / child
                        );
                        return Err(lx.fail(vline, msg));
                    }
                }
                logs.push(x.ln());
            }
            g.add_factor(vars, &logs).map_err(|e| in_file(source, e))?;
        }
        if lx.step()? {
            let msg = format!("unexpected trailing token {:?}", lx.word);
            let line = lx.word_line;
            return Err(lx.fail(line, msg));
        }
        if underflows > warnings.len() {
            warnings.push(UaiWarning {
                file: source.to_path_buf(),
                line: lx.word_line,
                message: format!(
                    "{} more potentials underflow to 0 and are read as hard zeros ({underflows} in all)",
                    underflows - warnings.len()
                ),
            });
        }
        Ok((g, kind, warnings))
    }

    /// [`FactorGraph::from_uai_reader`] on a string.
    ///
    /// # Errors
    /// As [`FactorGraph::from_uai_reader`].
    pub fn from_uai_str(
        text: &str,
        source: impl AsRef<Path>,
    ) -> Result<(Self, UaiKind, Vec<UaiWarning>), InferError> {
        Self::from_uai_reader(text.as_bytes(), source)
    }

    /// [`FactorGraph::from_uai_reader`] on the file at `path`.
    ///
    /// # Errors
    /// [`InferError::Io`] when it cannot be opened, else as
    /// [`FactorGraph::from_uai_reader`].
    pub fn read_uai(
        path: impl AsRef<Path>,
    ) -> Result<(Self, UaiKind, Vec<UaiWarning>), InferError> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|source| InferError::Io {
            file: path.to_path_buf(),
            source,
        })?;
        Self::from_uai_reader(BufReader::new(file), path)
    }
}

impl FactorGraph {
    /// Writes the model as a UAI `MARKOV` file to `out`: the variables' cardinalities,
    /// each factor's scope (in table order, last variable fastest, as the reader reads
    /// it) and its table of potentials `exp(θ)` with round-trip precision (a hard zero as
    /// `0`). Reading the text back with [`FactorGraph::read_uai`] gives the same scopes
    /// and the log-tables up to the rounding of `ln(exp(θ))` (at most a few ulps). The
    /// evidence is not part of a model file (UAI keeps it in a separate `.evid` file).
    /// The text is streamed: nothing is built in memory.
    ///
    /// # Errors
    /// The writer's I/O errors.
    pub fn write_uai_to(&self, out: impl std::io::Write) -> std::io::Result<()> {
        use std::io::Write as _;
        let mut out = std::io::BufWriter::new(out);
        writeln!(out, "MARKOV\n{}", self.num_vars())?;
        let mut first = true;
        for k in self.num_states() {
            write!(out, "{}{k}", if first { "" } else { " " })?;
            first = false;
        }
        writeln!(out, "\n{}", self.factors().len())?;
        for f in self.factors() {
            write!(out, "{}", f.vars.len())?;
            for v in &f.vars {
                write!(out, " {v}")?;
            }
            writeln!(out)?;
        }
        for f in 0..self.factors().len() {
            let t = self.factor_table(f);
            write!(out, "\n{}\n", t.len())?;
            for (i, &x) in t.iter().enumerate() {
                write!(out, "{}{}", if i == 0 { "" } else { " " }, x.exp())?;
            }
            writeln!(out)?;
        }
        out.flush()
    }
}

/// Marginals in the UAI `MAR` output format: `MAR`, then one line
/// `N k1 p1(0) … k2 …` (probabilities with round-trip precision).
#[must_use]
pub fn uai_mar_string(m: &FactorMarginals) -> String {
    use std::fmt::Write as _;
    let mut s = format!("MAR\n{}", m.num_nodes());
    for v in 0..m.num_nodes() {
        let p = m.node(v);
        let _ = write!(s, " {}", p.len());
        for x in p {
            let _ = write!(s, " {x}");
        }
    }
    s.push('\n');
    s
}

/// An assignment in the UAI `MAP` output format: `MAP`, then `N x1 … xN`.
#[must_use]
pub fn uai_map_string(a: &FactorMap) -> String {
    use std::fmt::Write as _;
    let mut s = format!("MAP\n{}", a.states.len());
    for x in &a.states {
        let _ = write!(s, " {x}");
    }
    s.push('\n');
    s
}

/// `ln Z` in the UAI `PR` output format: `PR`, then `log10 Z` (the competition's base;
/// `-inf` when the evidence is impossible).
#[must_use]
pub fn uai_pr_string(log_z: f64) -> String {
    format!("PR\n{}\n", log_z / std::f64::consts::LN_10)
}
