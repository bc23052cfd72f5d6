//! Reading BoostSRL files: `*_facts.txt`, `*_pos.txt`, `*_neg.txt` (one ground atom per
//! line) and background files (`mode:` lines, bare srlearn-style modes, `setParam:`,
//! `okIfUnknown:`, `bridger:`, `usePrologVariables:`, `range:`, `queryPred:`, `import:`,
//! ground facts, and rules and `precompute:` blocks, which [`crate::rules`] evaluates into
//! derived facts when a split is loaded; a rule it cannot evaluate is reported).
//!
//! Tolerated, because the shipped files contain them: `//` and `%` line comments,
//! `/* ... */` blocks, CRLF line ends, a UTF-8 BOM, spaces after commas, duplicate lines,
//! atoms of several predicates in one pos/neg file, and a missing final newline.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::BoostError;
use crate::logic::{Background, Database, DatabaseBuilder, Examples, ModeDecl};

/// One ground atom read from a file, with its file and 1-based line (so that errors
/// found later, e.g. an arity clash in [`build_split`], can name them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Atom {
    /// Predicate name.
    pub pred: String,
    /// Constant names.
    pub args: Vec<String>,
    /// The file it was read from (the `path` given to [`parse_atoms`]).
    pub file: Arc<Path>,
    /// 1-based line in its file.
    pub line: usize,
}

/// Splits `name(a, b, c)` (optional trailing `.`) into the name and trimmed arguments.
/// Commas inside quotes or nested parentheses do not split.
pub(crate) fn split_atom(text: &str) -> Result<(&str, Vec<&str>), String> {
    let t = text.trim();
    let t = t.strip_suffix('.').unwrap_or(t).trim_end();
    let Some(open) = t.find('(') else {
        if t.is_empty() || !t.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(format!("not an atom: `{t}`"));
        }
        return Ok((t, Vec::new()));
    };
    let name = t[..open].trim();
    if name.is_empty() {
        return Err(format!("atom without predicate name: `{t}`"));
    }
    let Some(body) = t[open + 1..].strip_suffix(')') else {
        return Err(format!("unbalanced parentheses in `{t}`"));
    };
    let mut args = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0usize);
    for (i, c) in body.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth -= 1,
            (None, ',') if depth == 0 => {
                args.push(body[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if quote.is_some() || depth != 0 {
        return Err(format!("unbalanced quotes or parentheses in `{t}`"));
    }
    args.push(body[start..].trim());
    if args.iter().any(|a| a.is_empty()) {
        return Err(format!("empty argument in `{t}`"));
    }
    Ok((name, args))
}

/// The non-comment content of each line of a BoostSRL file (facts, examples,
/// background, advice and clause files): `(1-based line, trimmed text)`, blank lines
/// dropped. Comments: a line starting with `//` or `%`, `/* ... */` blocks (over
/// several lines too), a `//` after a statement's final `.`; a BOM and CR line ends
/// are tolerated.
pub(crate) fn clean_lines(text: &str) -> Vec<(usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut in_block = false;
    for (i, raw) in text.split('\n').enumerate() {
        let mut line = raw.strip_suffix('\r').unwrap_or(raw).to_owned();
        let mut kept = String::new();
        loop {
            if in_block {
                match line.find("*/") {
                    Some(e) => {
                        line = line[e + 2..].to_owned();
                        in_block = false;
                    }
                    None => {
                        line.clear();
                        break;
                    }
                }
            } else {
                match line.find("/*") {
                    Some(s) => {
                        kept.push_str(&line[..s]);
                        line = line[s + 2..].to_owned();
                        in_block = true;
                    }
                    None => {
                        kept.push_str(&line);
                        break;
                    }
                }
            }
        }
        let mut l = kept.trim().to_owned();
        if l.starts_with("//") || l.starts_with('%') {
            continue;
        }
        // A trailing `//` comment after the statement's final `.`.
        if let Some(p) = l.find(".//").or_else(|| l.find(". //")) {
            l.truncate(p + 1);
        }
        if !l.is_empty() {
            out.push((i + 1, l));
        }
    }
    out
}

/// The text of a BoostSRL file: a regular file (a device such as `/dev/zero` would be
/// read forever), UTF-8 (like every other reader of srl), without control bytes other
/// than tab, carriage return and newline.
pub(crate) fn read_text(path: &Path) -> Result<String, BoostError> {
    let io = |source| BoostError::Io {
        path: path.to_owned(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(io(std::io::Error::other(if meta.is_dir() {
            "a folder, not a file"
        } else {
            "not a regular file"
        })));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    let line_at = |pos: usize| 1 + bytes[..pos].iter().filter(|&&b| b == b'\n').count();
    if let Some(pos) = bytes
        .iter()
        .position(|&b| b < 0x20 && !matches!(b, b'\t' | b'\r' | b'\n'))
    {
        return Err(parse_err(
            path,
            line_at(pos),
            format!("control byte 0x{:02x}: not a text file", bytes[pos]),
        ));
    }
    String::from_utf8(bytes.clone()).map_err(|e| {
        parse_err(
            path,
            line_at(e.utf8_error().valid_up_to()),
            "not UTF-8 text (convert the file to UTF-8)",
        )
    })
}

pub(crate) fn parse_err(path: &Path, line: usize, message: impl Into<String>) -> BoostError {
    BoostError::Parse {
        file: path.to_owned(),
        line,
        message: message.into(),
    }
}

/// Reads a facts/pos/neg file: one ground atom per line, in file order (duplicates kept).
///
/// # Errors
/// [`BoostError::Io`] if the file cannot be read, [`BoostError::Parse`] naming the file
/// and 1-based line for a line that is not a ground atom.
pub fn read_atoms(path: &Path) -> Result<Vec<Atom>, BoostError> {
    parse_atoms(&read_text(path)?, path)
}

/// [`read_atoms`] on a string; `path` is only used in error messages.
///
/// # Errors
/// [`BoostError::Parse`] for a line that is not a ground atom.
pub fn parse_atoms(text: &str, path: &Path) -> Result<Vec<Atom>, BoostError> {
    let mut out = Vec::new();
    let file: Arc<Path> = Arc::from(path);
    for (line, l) in clean_lines(text) {
        let (name, args) = split_atom(&l).map_err(|m| parse_err(path, line, m))?;
        if let Some(a) = args.iter().find(|a| a.starts_with(['+', '-', '#', '`'])) {
            return Err(parse_err(
                path,
                line,
                format!("`{a}` looks like a mode argument, expected a ground atom"),
            ));
        }
        out.push(Atom {
            pred: name.to_owned(),
            args: args.iter().map(|a| unquote(a).to_owned()).collect(),
            file: Arc::clone(&file),
            line,
        });
    }
    Ok(out)
}

pub(crate) fn unquote(a: &str) -> &str {
    let a = a.trim();
    if a.len() >= 2
        && ((a.starts_with('"') && a.ends_with('"')) || (a.starts_with('\'') && a.ends_with('\'')))
    {
        &a[1..a.len() - 1]
    } else {
        a
    }
}

/// Reads a BoostSRL background file, following `import: "file".` relative to it.
///
/// # Errors
/// [`BoostError::Io`] for an unreadable file (also an imported one),
/// [`BoostError::Parse`] with file and line for a malformed mode, setting or atom.
pub fn read_background(path: &Path) -> Result<Background, BoostError> {
    let mut bk = Background::default();
    read_background_into(path, &mut bk, 0)?;
    Ok(bk)
}

/// [`read_background`] on a string; imports are resolved relative to `path`'s folder.
///
/// # Errors
/// As [`read_background`].
pub fn parse_background(text: &str, path: &Path) -> Result<Background, BoostError> {
    let mut bk = Background::default();
    parse_background_into(text, path, &mut bk, 0)?;
    Ok(bk)
}

fn read_background_into(path: &Path, bk: &mut Background, depth: usize) -> Result<(), BoostError> {
    let text = read_text(path)?;
    bk.files.push(path.to_path_buf());
    parse_background_into(&text, path, bk, depth)
}

fn pred_slash(s: &str) -> String {
    s.trim().trim_end_matches('.').trim().to_owned()
}

fn parse_background_into(
    text: &str,
    path: &Path,
    bk: &mut Background,
    depth: usize,
) -> Result<(), BoostError> {
    if depth > 16 {
        return Err(parse_err(path, 1, "import nesting deeper than 16"));
    }
    let lines = clean_lines(text);
    let mut i = 0;
    let file = path.display().to_string();
    // Arity of each fact predicate so far (earlier files included), to report a clash
    // with this file and line rather than later without either.
    let mut arities: HashMap<String, usize> = HashMap::new();
    for (p, args) in &bk.facts {
        arities.entry(p.clone()).or_insert(args.len());
    }
    while i < lines.len() {
        let (line, ref l) = lines[i];
        i += 1;
        // Multi-line statements: `precompute:` alone, or a rule continued over lines.
        let mut stmt = l.clone();
        if is_precompute_key(&stmt) || stmt.ends_with(":-") || stmt.ends_with(',') {
            while i < lines.len() && !stmt.ends_with('.') {
                if is_precompute_key(&stmt) && is_precompute_key(&lines[i].1) {
                    break;
                }
                stmt.push(' ');
                stmt.push_str(&lines[i].1);
                i += 1;
            }
        }
        let note = |bk: &mut Background, what: &str| {
            bk.notes.push(format!("{file}:{line}: {what}"));
        };
        let (key, rest) = match stmt.split_once(':') {
            Some((k, r)) if !k.contains('(') && !r.starts_with('-') => (k.trim(), r.trim()),
            _ => ("", stmt.as_str()),
        };
        match key {
            "mode" => {
                let m = ModeDecl::parse(rest).map_err(|m| parse_err(path, line, m))?;
                bk.add_mode(m);
            }
            "setParam" => {
                let body = rest.trim_end_matches(['.', ';']).trim();
                let Some((k, v)) = body.split_once('=') else {
                    return Err(parse_err(
                        path,
                        line,
                        format!("setParam without `=`: `{body}`"),
                    ));
                };
                bk.settings.push((k.trim().to_owned(), v.trim().to_owned()));
            }
            "okIfUnknown" => bk.ok_if_unknown.push(pred_slash(rest)),
            "bridger" => bk.bridgers.push(pred_slash(rest)),
            "queryPred" => bk.query_preds.push(pred_slash(rest)),
            "usePrologVariables" => {
                let v = rest.trim_end_matches('.').trim();
                // Sets how the rules that follow name their variables.
                bk.use_prolog_variables = Some(v.eq_ignore_ascii_case("true"));
            }
            "range" => {
                let body = rest.trim_end_matches('.').trim();
                let Some((ty, vals)) = body.split_once('=') else {
                    return Err(parse_err(
                        path,
                        line,
                        format!("range without `=`: `{body}`"),
                    ));
                };
                let vals = vals.trim().trim_start_matches('{').trim_end_matches('}');
                let vals: Vec<String> = vals
                    .split(',')
                    .map(|v| unquote(v).to_owned())
                    .filter(|v| !v.is_empty())
                    .collect();
                bk.ranges.insert(ty.trim().to_owned(), vals);
            }
            "import" => {
                let f = unquote(rest.trim_end_matches('.').trim());
                let target = path.parent().unwrap_or(Path::new(".")).join(f);
                read_background_into(&target, bk, depth + 1)?;
            }
            k if k.starts_with("precompute")
                && k["precompute".len()..].chars().all(|c| c.is_ascii_digit()) =>
            {
                add_rule(bk, rest, path, line)?;
            }
            "importLibrary" => note(bk, &format!("importLibrary {rest} ignored")),
            "" => {
                if stmt.contains(":-") {
                    add_rule(bk, &stmt, path, line)?;
                    continue;
                }
                let (name, args) = split_atom(&stmt).map_err(|m| parse_err(path, line, m))?;
                if args.iter().any(|a| a.starts_with(['+', '-', '#', '`'])) {
                    let m = ModeDecl::parse(&stmt).map_err(|m| parse_err(path, line, m))?;
                    bk.add_mode(m);
                } else {
                    let expected = *arities.entry(name.to_owned()).or_insert(args.len());
                    if expected != args.len() {
                        return Err(parse_err(
                            path,
                            line,
                            format!(
                                "predicate {name} used with arity {}, earlier with arity {expected}",
                                args.len()
                            ),
                        ));
                    }
                    bk.facts.push((
                        name.to_owned(),
                        args.iter().map(|a| unquote(a).to_owned()).collect(),
                    ));
                }
            }
            other => note(bk, &format!("`{other}:` line ignored")),
        }
    }
    Ok(())
}

/// `precompute:`, `precompute1:`, ... alone on a line.
fn is_precompute_key(s: &str) -> bool {
    s.strip_prefix("precompute")
        .and_then(|r| r.strip_suffix(':'))
        .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()))
}

/// Parses the rule `stmt` (at `path:line`) into `bk.rules`. An unsafe rule is an error;
/// a construct srl does not evaluate (other built-ins, `;`, function terms) is reported in
/// `bk.notes` and the rule left out.
fn add_rule(bk: &mut Background, stmt: &str, path: &Path, line: usize) -> Result<(), BoostError> {
    let prolog = bk.use_prolog_variables.unwrap_or(true);
    match crate::rules::parse_rule(stmt, prolog, path.to_path_buf(), line) {
        Ok(r) => {
            bk.rules.push(r);
            Ok(())
        }
        Err(m) if m.starts_with("unsafe rule") => Err(parse_err(path, line, m)),
        Err(m) => {
            bk.notes.push(format!(
                "{}:{line}: rule not evaluated: {m}; a mode over its head predicate matches no \
                 derived fact",
                path.display()
            ));
            Ok(())
        }
    }
}

impl Background {
    /// Appends `other`'s modes (without duplicates), settings, declarations and notes.
    pub fn merge(&mut self, other: Background) {
        for m in other.modes {
            self.add_mode(m);
        }
        self.settings.extend(other.settings);
        self.ok_if_unknown.extend(other.ok_if_unknown);
        self.bridgers.extend(other.bridgers);
        self.ranges.extend(other.ranges);
        self.query_preds.extend(other.query_preds);
        if other.use_prolog_variables.is_some() {
            self.use_prolog_variables = other.use_prolog_variables;
        }
        self.facts.extend(other.facts);
        self.notes.extend(other.notes);
        self.rules.extend(other.rules);
    }
}

/// `e` (an arity clash from the database builder) as a parse error at `a`'s file and line.
fn located(a: &Atom, e: &BoostError) -> BoostError {
    BoostError::Parse {
        file: a.file.to_path_buf(),
        line: a.line,
        message: e.to_string(),
    }
}

/// What to do with pos/neg atoms of predicates other than the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OtherTargets {
    /// Positive atoms of other predicates become facts (they are observed true atoms,
    /// as in BoostSRL's joint RDN setting); their negatives are dropped.
    PositivesAsFacts,
    /// Drop them.
    Ignore,
}

/// Counts describing one loaded split (for reports and snapshot tests).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitSummary {
    /// Target predicate.
    pub target: String,
    /// Distinct positive examples.
    pub pos: usize,
    /// Distinct negative examples.
    pub neg: usize,
    /// Distinct constants.
    pub constants: usize,
    /// Distinct facts per predicate.
    pub facts: BTreeMap<String, usize>,
    /// Duplicate lines dropped (facts, pos and neg together).
    pub duplicates: usize,
    /// pos/neg atoms of other predicates, per predicate.
    pub other_examples: BTreeMap<String, usize>,
    /// Of those, positives added as facts.
    pub other_positives_as_facts: usize,
    /// Atoms both in pos and neg (kept as positive).
    pub conflicting: usize,
    /// Facts derived by the background's rules, per predicate.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub derived: BTreeMap<String, usize>,
}

/// A loaded split: indexed facts, the target's examples, and its summary.
#[derive(Clone, Debug)]
pub struct Split {
    /// The facts (background facts included).
    pub db: Database,
    /// Examples of the target.
    pub examples: Examples,
    /// Counts.
    pub summary: SplitSummary,
}

/// Loads `dir/{prefix}_facts.txt`, `_pos.txt` and `_neg.txt` for `target`, adding the
/// ground facts of `bk` (BoostSRL's layout: `train/train_pos.txt`, ...). The target
/// predicate is matched exactly, else ignoring ASCII case (IMDB's `workedUnder`).
///
/// # Errors
/// [`BoostError::Io`] / [`BoostError::Parse`] (file and line) from the files, also when a
/// predicate occurs with two arities (the message names the clash);
/// [`BoostError::NoExamples`] if the files hold no atom of `target`.
pub fn load_split(
    dir: &Path,
    prefix: &str,
    target: &str,
    bk: &Background,
    other: OtherTargets,
) -> Result<Split, BoostError> {
    let f = |s: &str| -> PathBuf { dir.join(format!("{prefix}_{s}.txt")) };
    let facts = read_atoms(&f("facts"))?;
    let pos = read_atoms(&f("pos"))?;
    let neg = read_atoms(&f("neg"))?;
    build_split(&facts, &pos, &neg, target, bk, other, &f("facts"))
}

/// Builds a [`Split`] from atoms already read (see [`load_split`]).
///
/// # Errors
/// As [`load_split`]: an arity clash of an atom is a [`BoostError::Parse`] naming the
/// atom's own [`Atom::file`] and line; a clash among the facts of a hand-built `bk` (which
/// carry no line) is a [`BoostError::Arity`]. `facts_path` is not needed any more (atoms
/// carry their file) and is kept so that existing callers compile.
pub fn build_split(
    facts: &[Atom],
    pos: &[Atom],
    neg: &[Atom],
    target: &str,
    bk: &Background,
    other: OtherTargets,
    facts_path: &Path,
) -> Result<Split, BoostError> {
    let _ = facts_path;
    let mut summary = SplitSummary::default();
    let exact = pos.iter().chain(neg).any(|a| a.pred == target);
    let is_target = |p: &str| {
        if exact {
            p == target
        } else {
            p.eq_ignore_ascii_case(target)
        }
    };
    let tname = pos
        .iter()
        .chain(neg)
        .find(|a| is_target(&a.pred))
        .map(|a| a.pred.clone())
        .ok_or_else(|| BoostError::NoExamples {
            reason: format!("no atom of target `{target}` in the pos/neg files"),
        })?;
    summary.target = tname.clone();
    let mut b = DatabaseBuilder::new();
    for (p, args) in &bk.facts {
        if !b.add_fact(p, args)? {
            summary.duplicates += 1;
        }
    }
    for a in facts {
        let added = b.add_fact(&a.pred, &a.args).map_err(|e| located(a, &e))?;
        if !added {
            summary.duplicates += 1;
        }
    }
    let first = pos.iter().chain(neg).find(|a| is_target(&a.pred));
    let arity = first.map_or(0, |a| a.args.len());
    let mut seen: crate::logic::FxMap<Vec<u32>, bool> = Default::default();
    let mut order: Vec<Vec<u32>> = Vec::new();
    for (atoms, label) in [(pos, true), (neg, false)] {
        for a in atoms {
            if !is_target(&a.pred) {
                *summary.other_examples.entry(a.pred.clone()).or_default() += 1;
                if label
                    && other == OtherTargets::PositivesAsFacts
                    && b.add_fact(&a.pred, &a.args).map_err(|e| located(a, &e))?
                {
                    summary.other_positives_as_facts += 1;
                }
                continue;
            }
            if a.args.len() != arity {
                let (ffile, fline) = first.map_or((String::new(), 0), |f| {
                    (f.file.display().to_string(), f.line)
                });
                return Err(BoostError::Parse {
                    file: a.file.to_path_buf(),
                    line: a.line,
                    message: format!(
                        "target {} used with arity {}, but with arity {arity} at {ffile}:{fline}",
                        a.pred,
                        a.args.len()
                    ),
                });
            }
            let ids: Vec<u32> = a.args.iter().map(|c| b.intern(c)).collect();
            match seen.get(&ids) {
                Some(&l) if l == label => summary.duplicates += 1,
                Some(_) => summary.conflicting += 1,
                None => {
                    seen.insert(ids.clone(), label);
                    order.push(ids);
                }
            }
        }
    }
    // The background's rules, to a fixed point over every fact of the split.
    let max_derived = match bk
        .settings
        .iter()
        .rev()
        .find(|(k, _)| k.eq_ignore_ascii_case("maxDerivedFacts"))
    {
        Some((_, v)) => v
            .trim()
            .parse::<usize>()
            .map_err(|_| BoostError::NoExamples {
                reason: format!("setParam: maxDerivedFacts={v}: not a whole number"),
            })?,
        None => crate::rules::DEFAULT_MAX_DERIVED_FACTS,
    };
    let derived = crate::rules::evaluate(&bk.rules, &mut b, &[tname.as_str()], max_derived)?;
    summary.derived = derived.counts();
    let mut examples = Examples::new(&tname, arity);
    for ids in &order {
        let label = seen.get(ids).copied().unwrap_or(false);
        examples.push(ids, label);
    }
    let db = b.build();
    summary.pos = examples.n_pos();
    summary.neg = examples.n_neg();
    summary.constants = db.n_constants();
    for r in db.relations() {
        if !r.is_empty() {
            summary.facts.insert(r.name().to_owned(), r.len());
        }
    }
    // a mode whose arity contradicts the facts would silently match nothing
    for m in &bk.modes {
        let Some(p) = db.pred(&m.pred) else { continue };
        let found = db.relation(p).arity();
        if found != m.args.len() && !db.relation(p).is_empty() {
            let at = facts
                .iter()
                .chain(pos)
                .chain(neg)
                .find(|a| a.pred == m.pred && a.args.len() == found);
            let message = format!(
                "mode {}/{} contradicts the facts: {} has arity {found} in the data",
                m.pred,
                m.args.len(),
                m.pred
            );
            return Err(match at {
                Some(a) => BoostError::Parse {
                    file: a.file.to_path_buf(),
                    line: a.line,
                    message,
                },
                None => BoostError::Arity {
                    pred: m.pred.clone(),
                    found: m.args.len(),
                    expected: found,
                },
            });
        }
    }
    Ok(Split {
        db,
        examples,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_at(r: Result<Split, BoostError>) -> (PathBuf, usize, String) {
        match r {
            Err(BoostError::Parse {
                file,
                line,
                message,
            }) => (file, line, message),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    /// Issue 15: an arity clash used to name neither file nor line.
    #[test]
    fn arity_clashes_name_file_and_line() -> Result<(), BoostError> {
        let bk = Background::default();
        let facts = parse_atoms("f(a).\nf(b).\n", Path::new("facts.txt"))?;
        let pos = parse_atoms("t(a).\nt(b).\n", Path::new("pos.txt"))?;
        let neg = parse_atoms("t(c).\n\nt(c, d).\n", Path::new("neg.txt"))?;
        let split = |facts: &[Atom], pos: &[Atom], neg: &[Atom]| {
            build_split(
                facts,
                pos,
                neg,
                "t",
                &bk,
                OtherTargets::PositivesAsFacts,
                Path::new("facts.txt"),
            )
        };
        // the target with two arities: the neg file's line 3, and where the first was
        let (file, line, message) = parse_at(split(&facts, &pos, &neg));
        assert_eq!((file.as_path(), line), (Path::new("neg.txt"), 3));
        assert!(message.contains("pos.txt:1"), "{message}");
        // a fact with two arities: the facts file's line
        let facts2 = parse_atoms("f(a).\nf(a, b).\n", Path::new("facts2.txt"))?;
        let neg1 = parse_atoms("t(c).\n", Path::new("neg.txt"))?;
        let (file, line, _) = parse_at(split(&facts2, &pos, &neg1));
        assert_eq!((file.as_path(), line), (Path::new("facts2.txt"), 2));
        // another predicate's positive clashing with a fact: the pos file's line
        let pos2 = parse_atoms("t(a).\nf(a, b).\n", Path::new("pos2.txt"))?;
        let (file, line, _) = parse_at(split(&facts, &pos2, &neg1));
        assert_eq!((file.as_path(), line), (Path::new("pos2.txt"), 2));
        // a background file with two arities for one fact predicate
        let e =
            parse_background("g(a).\n\ng(a, b).\n", Path::new("bk.txt")).expect_err("arity clash");
        match e {
            BoostError::Parse { file, line, .. } => {
                assert_eq!((file.as_path(), line), (Path::new("bk.txt"), 3));
            }
            other => panic!("{other:?}"),
        }
        Ok(())
    }
}
