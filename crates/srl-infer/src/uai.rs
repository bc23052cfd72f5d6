//! UAI `MARKOV` model files and `.evid` evidence files (the format of the UAI inference
//! competitions, read by libDAI, PGMax, merlin, …).
//!
//! Model file: `MARKOV`, the number of variables, their cardinalities, the number of
//! factors, one scope per factor (`size v1 v2 …`), then one table per factor (`count`
//! followed by the non-negative potential values, **last scope variable fastest**).
//! Only factors of scope size 0 (constants, ignored), 1 (unary) and 2 (pairwise) are
//! supported; values must be strictly positive (our log-potentials are finite).
//!
//! Evidence file: `k v1 x1 v2 x2 …` (UAI 2010+), or the older form with a leading sample
//! count `1` (`1 k v1 x1 …`).

use std::path::{Path, PathBuf};

use crate::error::InferError;
use crate::mrf::{MrfParts, PairTable, PairwiseMrf};

/// Whitespace tokens with their 1-based line numbers.
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

    fn f64(&mut self, what: &str) -> Result<(f64, usize), InferError> {
        let (t, line) = self.next(what)?;
        t.parse::<f64>()
            .map(|x| (x, line))
            .map_err(|_| self.err(line, format!("expected {what} (a number), found {t:?}")))
    }

    fn done(&self) -> Result<(), InferError> {
        match self.toks.get(self.pos) {
            Some(&(t, line)) => Err(self.err(line, format!("unexpected trailing token {t:?}"))),
            None => Ok(()),
        }
    }
}

impl PairwiseMrf {
    /// Parses a UAI `MARKOV` model from `text`; `source` names it in errors.
    ///
    /// Several unary factors on one variable add up; each pairwise factor becomes one edge
    /// with its own table (in file order). Evidence is empty.
    ///
    /// # Errors
    /// [`InferError::Parse`] (file and 1-based line) for a malformed file, a factor with
    /// more than two variables, a repeated variable in a scope, or a potential `<= 0` or
    /// non-finite; the validation errors of [`PairwiseMrf::new`].
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
        let mut t = Tokens::new(text, source.as_ref());
        let (kind, line) = t.next("the model type")?;
        if !kind.eq_ignore_ascii_case("MARKOV") {
            return Err(t.err(line, format!("expected MARKOV, found {kind:?}")));
        }
        let (n, _) = t.usize("the number of variables")?;
        let mut num_states = Vec::with_capacity(n.min(1 << 24));
        for _ in 0..n {
            let (k, line) = t.usize("a cardinality")?;
            if k == 0 {
                return Err(t.err(line, "cardinality 0"));
            }
            num_states.push(k);
        }
        let (f, _) = t.usize("the number of factors")?;
        let mut scopes = Vec::with_capacity(f.min(1 << 24));
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
            let mut scope = Vec::with_capacity(size);
            for _ in 0..size {
                let (v, line) = t.usize("a variable index")?;
                if v >= n {
                    return Err(t.err(line, format!("variable {v} out of range (n = {n})")));
                }
                if scope.contains(&v) {
                    return Err(t.err(line, format!("variable {v} repeated in a scope")));
                }
                scope.push(v);
            }
            scopes.push((scope, line));
        }
        let mut off = vec![0usize];
        for &k in &num_states {
            off.push(off[off.len() - 1] + k);
        }
        let mut unary = vec![0.0; off[n]];
        let mut edges = Vec::new();
        let mut tables = Vec::new();
        for (scope, _) in &scopes {
            let expected: usize = scope.iter().map(|&v| num_states[v]).product();
            let (count, line) = t.usize("a table size")?;
            if count != expected {
                return Err(t.err(
                    line,
                    format!("table has {count} entries, its scope needs {expected}"),
                ));
            }
            let mut logs = Vec::with_capacity(count);
            for _ in 0..count {
                let (x, line) = t.f64("a potential value")?;
                if !(x.is_finite() && x > 0.0) {
                    return Err(t.err(
                        line,
                        format!("potential {x} is not positive and finite (zeros are unsupported)"),
                    ));
                }
                logs.push(x.ln());
            }
            match scope.as_slice() {
                [] => {}
                [v] => {
                    for (u, l) in unary[off[*v]..off[*v + 1]].iter_mut().zip(&logs) {
                        *u += l;
                    }
                }
                [a, b] => {
                    edges.push((*a as u32, *b as u32));
                    tables.push(PairTable::new(num_states[*a], num_states[*b], logs));
                }
                _ => unreachable!("scopes have at most two variables"),
            }
        }
        t.done()?;
        let edge_tables = (0..edges.len() as u32).collect();
        Self::new(MrfParts {
            num_states,
            unary,
            edges,
            edge_tables,
            tables,
            evidence: Vec::new(),
        })
    }

    /// Reads a UAI `MARKOV` file (see [`PairwiseMrf::from_uai_str`]).
    ///
    /// # Errors
    /// [`InferError::Io`] if the file cannot be read, else as
    /// [`PairwiseMrf::from_uai_str`].
    pub fn read_uai(path: impl AsRef<Path>) -> Result<Self, InferError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| InferError::Io {
            file: path.to_path_buf(),
            source,
        })?;
        Self::from_uai_str(&text, path)
    }

    /// The model as a UAI `MARKOV` file: one unary factor per variable (in variable order)
    /// then one pairwise factor per edge (in edge order), potentials `exp(θ)` printed with
    /// round-trip precision. Evidence is not included (see
    /// [`PairwiseMrf::evidence_to_uai_string`]).
    #[must_use]
    pub fn to_uai_string(&self) -> String {
        use std::fmt::Write;
        let n = self.num_nodes();
        let mut s = String::new();
        let _ = writeln!(s, "MARKOV\n{n}");
        let cards: Vec<String> = self.num_states.iter().map(u32::to_string).collect();
        let _ = writeln!(s, "{}", cards.join(" "));
        let _ = writeln!(s, "{}", n + self.num_edges());
        for v in 0..n {
            let _ = writeln!(s, "1 {v}");
        }
        for &(u, v) in &self.edges {
            let _ = writeln!(s, "2 {u} {v}");
        }
        for v in 0..n {
            let vals: Vec<String> = self.unary(v).iter().map(|x| x.exp().to_string()).collect();
            let _ = writeln!(s, "\n{}\n {}", vals.len(), vals.join(" "));
        }
        for e in 0..self.num_edges() {
            let tab = self.pair_table(e);
            let _ = writeln!(s, "\n{}", tab.log_values.len());
            for row in tab.log_values.chunks(tab.cols.max(1)) {
                let vals: Vec<String> = row.iter().map(|x| x.exp().to_string()).collect();
                let _ = writeln!(s, " {}", vals.join(" "));
            }
        }
        s
    }

    /// Writes [`PairwiseMrf::to_uai_string`] to `path`.
    ///
    /// # Errors
    /// [`InferError::Io`].
    pub fn write_uai(&self, path: impl AsRef<Path>) -> Result<(), InferError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_uai_string()).map_err(|source| InferError::Io {
            file: path.to_path_buf(),
            source,
        })
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
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| InferError::Io {
        file: path.to_path_buf(),
        source,
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
        let bad = SAMPLE.replace("0.920", "0");
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
}
