//! Expert advice for RFGB: knowledge-based probabilistic logic learning (KBPLL; Odom,
//! Khot, Porter & Natarajan, "Knowledge-based probabilistic logic learning", AAAI 2015),
//! BoostSRL's `-adviceFile FILE` / `-adviceWt W`.
//!
//! A piece of advice says that for the examples a set of clauses covers, some labels
//! are **preferred** (more likely) and others **avoided** (less likely). For a binary
//! target `t` the labels are `t` (the atom is true) and `!t` (it is false). Learning
//! with advice replaces each example's functional gradient by
//!
//! ```text
//! Δ(xᵢ) = w · (n_t(xᵢ) − n_f(xᵢ)) + (1 − w) · (I(yᵢ = 1) − P(yᵢ = 1 | ψ(xᵢ)))
//! ```
//!
//! where `n_t(xᵢ)` is the number of pieces of advice that cover `xᵢ` and prefer `t`,
//! `n_f(xᵢ)` the number that cover it and avoid `t` ([`Advice::counts`]), and `w` the
//! advice weight ([`advice_gradient`]; BoostSRL's `-adviceWt`, default
//! [`BOOSTSRL_ADVICE_WEIGHT`] = 0.5). This is the gradient as BoostSRL computes it
//! (`LearnBoostedRDN.buildDataSet`: `adviceWt · advice + (1 − adviceWt) · (I − p)`,
//! the advice counts from `RunBoostedRDN.evaluateAdvice`), the paper's advice gradient
//! (Sec. "Knowledge-based RFGB") with the trade-off weight on the advice term. Every
//! example is scaled, also one no advice covers (its gradient is `(1 − w)(I − p)`).
//!
//! # Files (BoostSRL's format)
//!
//! The **advice file** holds pieces of advice, three lines each (blank lines and
//! comments are skipped in both kinds of file, as in every BoostSRL file srl reads: `//`
//! or `%` lines, `/* */` blocks, a `//` after a statement's `.`; error lines count them):
//!
//! ```text
//! cancer            preferred labels, comma-separated
//! !cancer           avoided labels, comma-separated
//! cancer_advice.txt the clause file: which examples the advice covers
//! ```
//!
//! A label `t` counts: `t` on the first line adds 1 to `n_t`, on the second line 1 to
//! `n_f`. A label `!t` (t false) is accepted and counts nothing, as in BoostSRL: in the
//! binary case "prefer `t`, avoid `!t`" is the same advice as "prefer `t`", and
//! "prefer `!t`, avoid `t`" the same as "avoid `t`". A clause-file path is relative to
//! the advice file's folder (BoostSRL: to the working directory; the same when BoostSRL
//! is run from the advice file's folder, as its Toy-Advice example is).
//!
//! A **clause file** lists weighted clauses over one of the piece's labels (for every
//! target the piece names, the head stands for that target, as BoostSRL renames it),
//! read as an ordered decision list (the BoostSRL wiki, "Learning with Advice"): the first clause
//! whose head matches the example and whose body holds decides; a positive weight means
//! the advice covers the example, a negative one that it does not; an example no clause
//! matches is not covered.
//!
//! ```text
//! 4.0 cancer(A) :- smokes(A).
//! 4.0 cancer(A) :- friends(A, B), smokes(B).
//! -4.0 cancer(A) :- !.
//! ```
//!
//! Variables follow Prolog (a name starting with an upper-case letter or `_`); other
//! names, numbers and quoted names are constants. Body goals are joined by `,` or `^`;
//! a final `!` (cut) is dropped, and a body of only `!` (or no body, `4.0 cancer(A).`)
//! always holds. Body literals are positive atoms of the facts (background facts, the
//! facts file, other targets' positives, atoms derived by the background's rules);
//! negation and comparisons are refused with the clause's file and line (define them as
//! a rule in the background file and use the rule's predicate instead).
//!
//! # Differences from BoostSRL
//!
//! BoostSRL evaluates a clause whose body has variables outside the head by summing
//! weight × number of groundings over all clauses instead of taking the first match;
//! srl always takes the first match (the decision-list reading its documentation
//! describes). BoostSRL prints a message and goes on when a label names no target, a
//! line is missing or a clause file does not exist; srl refuses the file with its file
//! and line ([`BoostError::Parse`]).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::BoostError;
use crate::logic::{Background, Database, Examples};
use crate::reader::{clean_lines, parse_err, read_text, split_atom, unquote};
use crate::tree::{CompiledConjunction, Literal, Term};

/// BoostSRL's default advice weight (`-adviceWt`, `CommandLineArguments.adviceWtVal`).
pub const BOOSTSRL_ADVICE_WEIGHT: f64 = 0.5;

/// The knowledge-based functional gradient of one example (Odom et al. 2015, as BoostSRL
/// computes it): `w · advice + (1 − w) · data_gradient`.
///
/// # Arguments
/// * `data_gradient` — the example's gradient without advice: `I(y = 1) − p` for RFGB
///   ([`soft_gradient`](crate::soft_gradient) with α = β = 0), in [−1, 1].
/// * `advice` — `n_t(x) − n_f(x)`, the pieces of advice covering the example that
///   prefer its target minus those that avoid it ([`Advice::counts`]); an integer.
/// * `weight` — `w`, the advice weight, in [0, 1] (0: the data alone, 1: the advice
///   alone).
///
/// # Returns
/// The gradient; in [−(w·|advice|) − (1 − w), w·|advice| + (1 − w)].
///
/// # Example
/// ```
/// use srl_boost::advice_gradient;
/// // a positive at p = 0.2 that one piece of advice prefers: 0.5·1 + 0.5·0.8
/// assert_eq!(advice_gradient(1.0 - 0.2, 1.0, 0.5), 0.9);
/// // no advice: the data gradient, halved
/// assert_eq!(advice_gradient(-0.4, 0.0, 0.5), -0.2);
/// ```
pub fn advice_gradient(data_gradient: f64, advice: f64, weight: f64) -> f64 {
    weight * advice + (1.0 - weight) * data_gradient
}

/// One clause of a clause file: `weight head :- body.`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdviceClause {
    /// The clause's weight: positive if the advice covers the examples the clause
    /// matches, negative if it does not (0: it does not). Finite.
    pub weight: f64,
    /// The head's predicate (one of the piece's labels) as written.
    pub head_pred: String,
    /// The head's arguments: variables `Term::Var(0..)` (numbered in order of first
    /// occurrence) or constants.
    pub head: Vec<Term>,
    /// The body's positive literals (the cut removed), over the head's variables and
    /// existential ones numbered after them.
    pub body: Vec<Literal>,
    /// Number of distinct variables of the clause (head and body).
    pub n_vars: usize,
    /// The clause file.
    pub file: PathBuf,
    /// 1-based line of the clause in its file.
    pub line: usize,
}

/// One piece of advice: preferred and avoided labels and the clauses saying which
/// examples it covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdvicePiece {
    /// Preferred labels as written (`t` or `!t`), in order.
    pub preferred: Vec<String>,
    /// Avoided labels as written.
    pub avoided: Vec<String>,
    /// The clause file, resolved against the advice file's folder.
    pub clause_file: PathBuf,
    /// The clauses, in file order (a decision list).
    pub clauses: Vec<AdviceClause>,
    /// The advice file.
    pub file: PathBuf,
    /// 1-based line of the piece's preferred-labels line.
    pub line: usize,
}

impl AdvicePiece {
    /// This piece's count for `target`: +1 if it prefers `target`, −1 if it avoids it,
    /// 0 otherwise (`!t` labels count nothing; names compared ignoring ASCII case).
    pub fn sign(&self, target: &str) -> i32 {
        let has = |v: &[String]| v.iter().any(|l| l.eq_ignore_ascii_case(target));
        i32::from(has(&self.preferred)) - i32::from(has(&self.avoided))
    }
}

/// An advice file with its clause files, read by [`Advice::read`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// The pieces of advice, in file order.
    pub pieces: Vec<AdvicePiece>,
    /// The advice file.
    pub file: PathBuf,
}

/// What a model learned with advice records ([`SoftRfgb::advice`](crate::SoftRfgb::advice)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdviceUse {
    /// The advice file, as given.
    pub file: String,
    /// The advice weight `w`, in [0, 1].
    pub weight: f64,
    /// Pieces of advice in the file that name the target (preferred or avoided).
    pub pieces: usize,
    /// Training examples with `n_t − n_f > 0`.
    pub preferred_examples: usize,
    /// Training examples with `n_t − n_f < 0`.
    pub avoided_examples: usize,
}

impl AdviceUse {
    /// Checks a recorded use read from a model file: a weight in [0, 1].
    ///
    /// # Errors
    /// A message naming the weight.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.weight) {
            return Err(format!(
                "advice weight {} is not a number in [0, 1]",
                self.weight
            ));
        }
        Ok(())
    }
}

/// Splits a label line on commas; labels are trimmed, a label is a name optionally
/// prefixed by `!`.
fn labels(text: &str, path: &Path, line: usize) -> Result<Vec<String>, BoostError> {
    let mut out = Vec::new();
    for raw in text.split(',') {
        let l = raw.trim();
        let name = l.strip_prefix('!').unwrap_or(l).trim();
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(parse_err(
                path,
                line,
                format!("`{l}` is not a label (a target name, or `!name` for the target false)"),
            ));
        }
        out.push(if l.starts_with('!') {
            format!("!{name}")
        } else {
            name.to_owned()
        });
    }
    Ok(out)
}

impl Advice {
    /// Reads an advice file and every clause file it names.
    ///
    /// # Errors
    /// [`BoostError::Io`] for an unreadable advice or clause file (not a regular file,
    /// not UTF-8 text); [`BoostError::Parse`] with the file and line for a piece that is
    /// not three lines, a malformed label, a label both preferred and avoided, a piece
    /// with no label to count, a clause that is not `WEIGHT head :- body.`, a
    /// non-finite weight, a head over a predicate that is not one of the piece's labels,
    /// heads of two predicates or arities in one file, a negation or comparison in a
    /// body, or a clause file without clauses.
    pub fn read(path: &Path) -> Result<Advice, BoostError> {
        let text = read_text(path)?;
        Self::parse(&text, path)
    }

    /// [`read`](Self::read) on the advice file's text; `path` names it in errors and
    /// locates the clause files (read from disk).
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn parse(text: &str, path: &Path) -> Result<Advice, BoostError> {
        let lines = clean_lines(text);
        if lines.is_empty() {
            return Err(parse_err(
                path,
                1,
                "no advice: the file has no piece of advice (three lines: preferred labels, avoided labels, clause file)",
            ));
        }
        let folder = path.parent().unwrap_or(Path::new("."));
        let mut pieces = Vec::new();
        for chunk in lines.chunks(3) {
            let line = chunk[0].0;
            if chunk.len() < 3 {
                let missing = if chunk.len() == 1 {
                    "the avoided labels and the clause file"
                } else {
                    "the clause file"
                };
                return Err(parse_err(
                    path,
                    line,
                    format!("a piece of advice is three lines; this one ends before {missing}"),
                ));
            }
            let preferred = labels(&chunk[0].1, path, chunk[0].0)?;
            let avoided = labels(&chunk[1].1, path, chunk[1].0)?;
            if let Some(both) = preferred
                .iter()
                .find(|l| !l.starts_with('!') && avoided.iter().any(|a| a.eq_ignore_ascii_case(l)))
            {
                return Err(parse_err(
                    path,
                    chunk[1].0,
                    format!("label `{both}` is both preferred (line {line}) and avoided"),
                ));
            }
            let plain: Vec<&String> = preferred
                .iter()
                .chain(&avoided)
                .filter(|l| !l.starts_with('!'))
                .collect();
            if plain.is_empty() {
                return Err(parse_err(
                    path,
                    line,
                    "this piece of advice prefers and avoids only `!` labels: it counts for no target (write `t` on the preferred or the avoided line)",
                ));
            }
            let clause_file = folder.join(unquote(&chunk[2].1));
            if !clause_file.is_file() {
                return Err(parse_err(
                    path,
                    chunk[2].0,
                    format!(
                        "clause file {} does not exist (paths are relative to the advice file's folder)",
                        clause_file.display()
                    ),
                ));
            }
            let ctext = read_text(&clause_file)?;
            let clauses = parse_clauses(&ctext, &clause_file)?;
            let head = &clauses[0].head_pred;
            if !plain.iter().any(|l| l.eq_ignore_ascii_case(head)) {
                return Err(parse_err(
                    &clause_file,
                    clauses[0].line,
                    format!(
                        "the clauses are over `{head}`, which is not a label of the advice at {}:{line} ({})",
                        path.display(),
                        plain
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            pieces.push(AdvicePiece {
                preferred,
                avoided,
                clause_file,
                clauses,
                file: path.to_path_buf(),
                line,
            });
        }
        Ok(Advice {
            pieces,
            file: path.to_path_buf(),
        })
    }

    /// The target names the labels of the advice name (without `!`), in sorted order.
    pub fn labels(&self) -> BTreeSet<String> {
        self.pieces
            .iter()
            .flat_map(|p| p.preferred.iter().chain(&p.avoided))
            .map(|l| l.trim_start_matches('!').to_owned())
            .collect()
    }

    /// Checks that every label names one of `targets` (ignoring ASCII case): a label of
    /// no predicate would be silently ignored (a typo). `srl boost learn` passes the
    /// targets learned and the other predicates of the pos/neg files (advice on those is
    /// not used in that run, and reported).
    ///
    /// # Errors
    /// [`BoostError::Parse`] naming the advice file, the piece's line and the label.
    pub fn check_targets(&self, targets: &[&str]) -> Result<(), BoostError> {
        for p in &self.pieces {
            for l in p.preferred.iter().chain(&p.avoided) {
                let name = l.trim_start_matches('!');
                if !targets.iter().any(|t| t.eq_ignore_ascii_case(name)) {
                    return Err(parse_err(
                        &p.file,
                        p.line,
                        format!(
                            "label `{l}` names none of the targets ({})",
                            targets.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The check a learning run makes ([`Advice::check_targets`] against the targets
    /// learned and every other predicate of the examples in `atoms`' positive and
    /// negative files, as `srl boost learn` and srl-py do), returning the labels that are
    /// not a target of this run: their advice is not used, and the caller says so.
    ///
    /// # Errors
    /// As [`Advice::check_targets`].
    pub fn unused_labels(
        &self,
        targets: &[String],
        atoms: &crate::FolderAtoms,
    ) -> Result<Vec<String>, BoostError> {
        let example_preds = atoms
            .pos
            .iter()
            .chain(&atoms.neg)
            .map(|at| at.pred.as_str());
        let mut known: Vec<&str> = targets.iter().map(String::as_str).collect();
        for p in example_preds {
            if !known.iter().any(|k| k.eq_ignore_ascii_case(p)) {
                known.push(p);
            }
        }
        self.check_targets(&known)?;
        Ok(self
            .labels()
            .into_iter()
            .filter(|l| !targets.iter().any(|t| t.eq_ignore_ascii_case(l)))
            .collect())
    }

    /// The number of pieces of advice that name `target` (preferred or avoided).
    pub fn pieces_for(&self, target: &str) -> usize {
        self.pieces.iter().filter(|p| p.sign(target) != 0).count()
    }

    /// `n_t(xᵢ) − n_f(xᵢ)` for each example of `examples` (the advice gradient before
    /// weighting): for each piece of advice naming the examples' target, +1 (it prefers
    /// the target) or −1 (it avoids it) if the piece's clauses cover the example (the
    /// first clause whose head matches and whose body holds in `db` has a positive
    /// weight).
    ///
    /// # Arguments
    /// * `db` — the facts; the examples' constants are ids of `db`.
    /// * `bk` — the modes: a body predicate must have facts in `db` or a mode.
    /// * `examples` — atoms of one target.
    ///
    /// # Returns
    /// One integer-valued count per example, in example order.
    ///
    /// # Errors
    /// [`BoostError::Parse`] at a clause's file and line whose head has another arity
    /// than the target, or whose body uses a predicate with neither facts nor a mode,
    /// or with another arity than its facts.
    ///
    /// # Complexity
    /// The clauses of each piece naming the target are compiled once per call (their
    /// head constants and body joins against `db`); then, for each example and piece,
    /// at most one join per clause (the join of a node test,
    /// [`TreeParams::fit`](crate::TreeParams::fit)).
    pub fn counts(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
    ) -> Result<Vec<f64>, BoostError> {
        let target = &examples.pred;
        let mut out = vec![0.0; examples.len()];
        for piece in &self.pieces {
            let sign = piece.sign(target);
            if sign == 0 {
                continue;
            }
            for c in &piece.clauses {
                check_clause(c, db, bk, examples.arity)?;
            }
            // compiled once per call (one fit), not once per example
            let clauses: Vec<CompiledClause> = piece
                .clauses
                .iter()
                .map(|c| CompiledClause::new(c, db))
                .collect();
            let mut scratch = Vec::new();
            for (i, o) in out.iter_mut().enumerate() {
                let args = examples.args(i);
                let first = clauses.iter().find(|c| c.matches(db, args, &mut scratch));
                if first.is_some_and(|c| c.weight > 0.0) {
                    *o += f64::from(sign);
                }
            }
        }
        Ok(out)
    }
}

/// Errors of a clause against the data: head arity, unknown body predicates.
fn check_clause(
    c: &AdviceClause,
    db: &Database,
    bk: &Background,
    arity: usize,
) -> Result<(), BoostError> {
    if c.head.len() != arity {
        return Err(parse_err(
            &c.file,
            c.line,
            format!(
                "head {}/{} has another arity than the target's examples ({arity})",
                c.head_pred,
                c.head.len()
            ),
        ));
    }
    for l in &c.body {
        match db.pred(&l.pred) {
            Some(p) if db.relation(p).arity() != l.args.len() && !db.relation(p).is_empty() => {
                return Err(parse_err(
                    &c.file,
                    c.line,
                    format!(
                        "{}/{} has arity {} in the facts",
                        l.pred,
                        l.args.len(),
                        db.relation(p).arity()
                    ),
                ));
            }
            Some(_) => {}
            None if bk.mode_of(&l.pred).is_some() => {}
            None => {
                return Err(parse_err(
                    &c.file,
                    c.line,
                    format!(
                        "predicate {}/{} has no fact and no mode (a typo?)",
                        l.pred,
                        l.args.len()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A head argument of a compiled clause.
enum HeadArg {
    /// Variable number `.0`.
    Var(usize),
    /// A constant: its id in the database, `None` if the database does not know it
    /// (the head matches no example).
    Const(Option<u32>),
}

/// An advice clause compiled against the database of one fit: the head's constants
/// resolved to ids, the body's join built ([`CompiledConjunction`]).
struct CompiledClause {
    weight: f64,
    head: Vec<HeadArg>,
    /// The head's variables: one more than the largest head variable number.
    n_head: usize,
    body: CompiledConjunction,
}

impl CompiledClause {
    fn new(c: &AdviceClause, db: &Database) -> Self {
        let head: Vec<HeadArg> = c
            .head
            .iter()
            .map(|t| match t {
                Term::Var(v) => HeadArg::Var(*v as usize),
                Term::Const(name) => HeadArg::Const(db.constant(name)),
            })
            .collect();
        let n_head = head
            .iter()
            .filter_map(|h| match h {
                HeadArg::Var(v) => Some(v + 1),
                HeadArg::Const(_) => None,
            })
            .max()
            .unwrap_or(0);
        Self {
            weight: c.weight,
            head,
            n_head,
            body: CompiledConjunction::new(db, &c.body, n_head, c.n_vars),
        }
    }

    /// Whether the head matches the example `args` and the body holds in `db`.
    fn matches(&self, db: &Database, args: &[u32], scratch: &mut Vec<u32>) -> bool {
        let mut bound: Vec<Option<u32>> = vec![None; self.n_head];
        for (h, &a) in self.head.iter().zip(args) {
            match *h {
                HeadArg::Const(id) => {
                    if id != Some(a) {
                        return false;
                    }
                }
                HeadArg::Var(v) => match bound[v] {
                    Some(b) if b != a => return false,
                    _ => bound[v] = Some(a),
                },
            }
        }
        let bound: Vec<u32> = bound.into_iter().map(|b| b.unwrap_or(0)).collect();
        self.body.holds(db, &bound, scratch)
    }
}

/// Splits a clause body on top-level `,` and `^`.
fn body_goals(text: &str) -> Vec<&str> {
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0usize);
    let mut out = Vec::new();
    for (i, ch) in text.char_indices() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(ch),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ',' | '^') if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(text[start..].trim());
    out
}

fn is_var(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
}

/// Parses the clauses of a clause file: statements ending in `.`, possibly over several
/// lines.
fn parse_clauses(text: &str, path: &Path) -> Result<Vec<AdviceClause>, BoostError> {
    let mut out: Vec<AdviceClause> = Vec::new();
    let mut stmt = String::new();
    let mut start = 0;
    for (line, l) in clean_lines(text) {
        if stmt.is_empty() {
            start = line;
        } else {
            stmt.push(' ');
        }
        stmt.push_str(&l);
        if stmt.ends_with('.') {
            let c = parse_clause(&stmt, path, start)?;
            if let Some(first) = out.first()
                && (first.head_pred != c.head_pred || first.head.len() != c.head.len())
            {
                return Err(parse_err(
                    path,
                    start,
                    format!(
                        "head {}/{} differs from the file's first head {}/{} (line {}): one clause file advises one target",
                        c.head_pred,
                        c.head.len(),
                        first.head_pred,
                        first.head.len(),
                        first.line
                    ),
                ));
            }
            out.push(c);
            stmt.clear();
        }
    }
    if !stmt.is_empty() {
        return Err(parse_err(
            path,
            start,
            "the last clause does not end with `.`",
        ));
    }
    if out.is_empty() {
        return Err(parse_err(
            path,
            1,
            "no clause: a clause file lists `WEIGHT target(Args) :- body.` lines",
        ));
    }
    Ok(out)
}

/// Parses `WEIGHT head :- body.` (or `WEIGHT head.`).
fn parse_clause(stmt: &str, path: &Path, line: usize) -> Result<AdviceClause, BoostError> {
    let err = |m: String| parse_err(path, line, m);
    let body_text = stmt.strip_suffix('.').unwrap_or(stmt).trim();
    let Some((w, rest)) = body_text.split_once(char::is_whitespace) else {
        return Err(err(format!(
            "`{stmt}` is not `WEIGHT target(Args) :- body.`"
        )));
    };
    let weight: f64 = w.parse().map_err(|_| {
        err(format!(
            "`{w}` is not a weight: a clause is `WEIGHT target(Args) :- body.` (4.0 where the advice applies, -4.0 where not)"
        ))
    })?;
    if !weight.is_finite() {
        return Err(err(format!("weight {w} is not a finite number")));
    }
    let (head_text, body) = match rest.split_once(":-") {
        Some((h, b)) => (h.trim(), Some(b.trim())),
        None => (rest.trim(), None),
    };
    let (hname, hargs) = split_atom(head_text).map_err(|m| err(format!("head: {m}")))?;
    let mut vars: HashMap<String, u16> = HashMap::new();
    let mut next: u16 = 0;
    let mut anon = 0usize;
    let mut term = |a: &str, vars: &mut HashMap<String, u16>| -> Term {
        if is_var(a) {
            let key = if a == "_" {
                anon += 1;
                format!("_#{anon}")
            } else {
                a.to_owned()
            };
            let v = *vars.entry(key).or_insert_with(|| {
                next += 1;
                next - 1
            });
            Term::Var(v)
        } else {
            Term::Const(unquote(a).to_owned())
        }
    };
    let head: Vec<Term> = hargs.iter().map(|a| term(a, &mut vars)).collect();
    let mut lits = Vec::new();
    if let Some(body) = body {
        if body.is_empty() {
            return Err(err("empty body after `:-`".into()));
        }
        let goals = body_goals(body);
        let n = goals.len();
        for (k, g) in goals.into_iter().enumerate() {
            if g == "!" {
                if k + 1 != n {
                    return Err(err(
                        "a cut `!` is only accepted as the last goal of a clause".into(),
                    ));
                }
                continue;
            }
            if g == "true" {
                continue;
            }
            if g.starts_with("\\+") || g.starts_with("not(") || g.starts_with("not ") {
                return Err(err(format!(
                    "`{g}`: negation is not evaluated in advice clauses; define the condition as a rule in the background file and use its predicate"
                )));
            }
            let (name, args) = split_atom(g).map_err(|m| {
                err(format!(
                    "`{g}`: {m} (advice bodies are positive atoms; comparisons and other built-ins are not evaluated here)"
                ))
            })?;
            let mut seen_new: Vec<&str> = Vec::new();
            for a in &args {
                if is_var(a) && *a != "_" && !vars.contains_key(*a) {
                    if seen_new.contains(a) {
                        return Err(err(format!(
                            "`{g}`: variable {a} occurs twice in the literal that introduces it; not supported (bind it in an earlier literal)"
                        )));
                    }
                    seen_new.push(a);
                }
            }
            let args = args.iter().map(|a| term(a, &mut vars)).collect();
            lits.push(Literal {
                pred: name.to_owned(),
                args,
            });
        }
    }
    // head variables first: `term` numbered them 0.. in order of first occurrence
    Ok(AdviceClause {
        weight,
        head_pred: hname.to_owned(),
        head,
        body: lits,
        n_vars: usize::from(next),
        file: path.to_path_buf(),
        line,
    })
}
