//! Horn-clause background knowledge: the rules and `precompute:` blocks of a BoostSRL
//! background file, evaluated bottom-up into derived facts before learning.
//!
//! BoostSRL data sets define derived predicates with Prolog rules, usually under
//! `precompute:` (`precompute1:`, `precompute2:`, ... for later stages); a mode over such a
//! predicate matches the derived facts. srl evaluates the rules to a fixed point over all
//! facts of a split (background facts, the `_facts.txt` file, other targets' positives) by
//! **semi-naive evaluation**, stratum by stratum (a predicate used under negation or inside
//! an aggregate is computed completely first: **stratified negation**), and adds the
//! derived facts to the database, as BoostSRL's precompute does.
//!
//! Supported body goals, left to right (a variable must be bound by an earlier goal before
//! a negation, comparison or aggregate uses it: the rule is **safe**):
//! - `p(T1, ..., Tn)`: a fact or derived fact;
//! - `\+ p(...)`, `not(p(...))`: negation as failure;
//! - `X \= Y`, `X \== Y` (differ), `X == Y`, `X = Y` (equal; `=` binds an unbound side),
//!   `X < Y`, `X > Y`, `X =< Y`, `X >= Y` (numbers);
//! - `member(X, [a, b, 3])`;
//! - `all(Template, Goal, L)` followed by `N is length(L)` (the number of distinct
//!   `Template` solutions of `Goal`) or `addList(L, N)` (their sum); `Goal` is a
//!   conjunction of atoms joined by `,` or `^` whose variables are the template's,
//!   variables bound earlier in the rule, or existential ones.
//!
//! Variables follow `usePrologVariables:`: with `true` (or no such line) a name starting
//! with an upper-case letter or `_` is a variable (Prolog); with `false` one starting with a
//! lower-case letter is (BoostSRL's default logic notation). Numbers and quoted names are
//! constants. Anything else (other built-ins, function terms, `;`, `->`, cuts) is not
//! evaluated: the reader keeps the rule out and reports it with its file and line
//! ([`crate::Background::notes`]), never silently.
//!
//! Source: BoostSRL's background-file language (starling-lab/BoostSRL wiki, "Advanced
//! Parameters", precompute); semi-naive evaluation and stratification as in Abiteboul,
//! Hull & Vianu, *Foundations of Databases* (1995), chapters 13 and 15.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::BoostError;
use crate::logic::DatabaseBuilder;

/// The default cap on derived facts per split (all predicates together): a derivation that
/// would pass it stops with [`BoostError::Parse`] naming the rule.
pub const DEFAULT_MAX_DERIVED_FACTS: usize = 10_000_000;

/// A term of a rule: a variable (index into the rule's variables) or a constant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Term {
    /// Variable number `i` of the rule (`Rule::vars[i]` is its name).
    Var(usize),
    /// A constant (its name, quotes removed).
    Const(String),
}

/// An atom `pred(t1, ..., tn)` of a rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleAtom {
    /// Predicate name.
    pub pred: String,
    /// Arguments.
    pub args: Vec<Term>,
}

/// A comparison operator of a rule body.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CmpOp {
    /// `\=` or `\==`: the two terms differ.
    Differ,
    /// `==`, or `=` with both sides bound: the terms are equal.
    Equal,
    /// `=` with one unbound variable side: binds it.
    Unify,
    /// `<` on numbers.
    Less,
    /// `>` on numbers.
    Greater,
    /// `=<` on numbers.
    LessEq,
    /// `>=` on numbers.
    GreaterEq,
}

/// How an `all/3` aggregate is reduced.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reduce {
    /// `N is length(L)`: the number of distinct template solutions.
    Count,
    /// `addList(L, N)`: the sum of the (numeric) distinct template solutions.
    Sum,
}

/// One goal of a rule body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Goal {
    /// A positive atom.
    Pos(RuleAtom),
    /// Negation as failure (`\+ atom`, `not(atom)`).
    Neg(RuleAtom),
    /// A comparison.
    Cmp(CmpOp, Term, Term),
    /// `member(X, [c1, ..., ck])`.
    Member(Term, Vec<String>),
    /// `all(Template, Goal, L)` reduced into `out`.
    Aggregate {
        /// Template variables.
        template: Vec<usize>,
        /// The conjunction whose solutions are collected.
        goal: Vec<RuleAtom>,
        /// Count or sum.
        reduce: Reduce,
        /// The variable receiving the result.
        out: usize,
    },
}

/// A rule `head :- body.` of a background file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// The head atom.
    pub head: RuleAtom,
    /// The body goals, evaluated left to right.
    pub body: Vec<Goal>,
    /// Variable names, indexed by [`Term::Var`].
    pub vars: Vec<String>,
    /// The file the rule is written in.
    pub file: PathBuf,
    /// Its 1-based line.
    pub line: usize,
}

/// Splits `text` on top-level `sep` (outside parentheses, brackets and quotes).
fn split_top(text: &str, sep: char) -> Vec<&str> {
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0usize);
    let mut out = Vec::new();
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                out.push(text[start..i].trim());
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(text[start..].trim());
    out
}

/// The rule being parsed: variable names and the variable convention.
struct Scope {
    vars: Vec<String>,
    prolog: bool,
    anon: usize,
}

impl Scope {
    fn is_var(&self, t: &str) -> bool {
        let Some(c) = t.chars().next() else {
            return false;
        };
        if t.chars().any(|c| !(c.is_alphanumeric() || c == '_')) {
            return false;
        }
        if self.prolog {
            c.is_uppercase() || c == '_'
        } else {
            c.is_lowercase() || c == '_'
        }
    }

    fn term(&mut self, t: &str) -> Result<Term, String> {
        let t = t.trim();
        if t.is_empty() {
            return Err("empty argument".into());
        }
        if t.contains(['(', '[', ')', ']', ' ']) && !t.starts_with(['"', '\'']) {
            return Err(format!(
                "`{t}`: function terms and lists are not supported here"
            ));
        }
        if t == "_" {
            self.anon += 1;
            self.vars.push(format!("_{}", self.anon));
            return Ok(Term::Var(self.vars.len() - 1));
        }
        if self.is_var(t) {
            let i = match self.vars.iter().position(|v| v == t) {
                Some(i) => i,
                None => {
                    self.vars.push(t.to_owned());
                    self.vars.len() - 1
                }
            };
            return Ok(Term::Var(i));
        }
        let unq = if t.len() >= 2
            && ((t.starts_with('"') && t.ends_with('"'))
                || (t.starts_with('\'') && t.ends_with('\'')))
        {
            &t[1..t.len() - 1]
        } else {
            t
        };
        Ok(Term::Const(unq.to_owned()))
    }

    fn atom(&mut self, text: &str) -> Result<RuleAtom, String> {
        let (name, args) = crate::reader::split_atom(text)?;
        if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(format!("`{text}`: not an atom"));
        }
        let args = args
            .iter()
            .map(|a| self.term(a))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RuleAtom {
            pred: name.to_owned(),
            args,
        })
    }

    fn var(&mut self, text: &str) -> Result<usize, String> {
        match self.term(text)? {
            Term::Var(i) => Ok(i),
            Term::Const(c) => Err(format!("`{c}` must be a variable here")),
        }
    }
}

/// Parses the statement `head :- body` (without the final `.`) written at `file:line`;
/// `prolog_variables` is the `usePrologVariables:` convention in force.
///
/// # Errors
/// A message for a construct srl does not evaluate or an unsafe rule (the reader adds
/// the file and line).
pub fn parse_rule(
    stmt: &str,
    prolog_variables: bool,
    file: PathBuf,
    line: usize,
) -> Result<Rule, String> {
    let stmt = stmt.trim().trim_end_matches('.').trim();
    let Some((head, body)) = stmt.split_once(":-") else {
        return Err(format!("`{stmt}` is not a rule (no `:-`)"));
    };
    if body.contains(';') || body.contains("->") || body.contains('!') {
        return Err("disjunction (`;`), if-then (`->`) and cut (`!`) are not supported".into());
    }
    let mut scope = Scope {
        vars: Vec::new(),
        prolog: prolog_variables,
        anon: 0,
    };
    let head = scope.atom(head)?;
    let goals = split_top(body, ',');
    let mut out = Vec::new();
    let mut i = 0;
    while i < goals.len() {
        let g = goals[i];
        i += 1;
        if g.is_empty() {
            return Err("empty goal in the body".into());
        }
        if let Some(rest) = g.strip_prefix("\\+") {
            out.push(Goal::Neg(scope.atom(rest)?));
            continue;
        }
        if let Some(inner) = g.strip_prefix("not(").and_then(|r| r.strip_suffix(')')) {
            out.push(Goal::Neg(scope.atom(inner)?));
            continue;
        }
        if let Some(inner) = g.strip_prefix("member(").and_then(|r| r.strip_suffix(')')) {
            let parts = split_top(inner, ',');
            let [x, list] = parts.as_slice() else {
                return Err(format!("`{g}`: member/2 takes two arguments"));
            };
            let Some(items) = list.strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
                return Err(format!("`{g}`: member/2 needs a list of constants"));
            };
            let x = scope.term(x)?;
            let mut consts = Vec::new();
            for it in split_top(items, ',') {
                match scope.term(it)? {
                    Term::Const(c) => consts.push(c),
                    Term::Var(_) => {
                        return Err(format!("`{g}`: the list must hold constants only"));
                    }
                }
            }
            out.push(Goal::Member(x, consts));
            continue;
        }
        if let Some(inner) = g.strip_prefix("all(").and_then(|r| r.strip_suffix(')')) {
            let parts = split_top(inner, ',');
            let [template, goal, list] = parts.as_slice() else {
                return Err(format!("`{g}`: all/3 takes three arguments"));
            };
            let template_vars = match template.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                Some(items) => split_top(items, ',')
                    .into_iter()
                    .map(|v| scope.var(v))
                    .collect::<Result<Vec<_>, _>>()?,
                None => vec![scope.var(template)?],
            };
            let goal = goal.trim();
            let goal_text = match goal.strip_prefix('(').and_then(|g| g.strip_suffix(')')) {
                Some(inner) => inner,
                None => goal,
            };
            let mut conj = Vec::new();
            for part in split_top(goal_text, ',') {
                for a in split_top(part, '^') {
                    if !a.contains('(') && scope.is_var(a) {
                        continue; // `Var^Goal`: an existential marker
                    }
                    conj.push(scope.atom(a)?);
                }
            }
            // The reduction that must follow: `N is length(L)` or `addList(L, N)`.
            let Some(next) = goals.get(i).copied() else {
                return Err(format!(
                    "`{g}`: all/3 must be followed by `N is length(L)` or `addList(L, N)`"
                ));
            };
            i += 1;
            let list = list.trim();
            let (reduce, out_var) = if let Some((n, rhs)) = next.split_once(" is ") {
                let rhs = rhs.trim().replace(' ', "");
                if rhs != format!("length({list})") {
                    return Err(format!(
                        "`{next}`: only `N is length({list})` may follow all/3"
                    ));
                }
                (Reduce::Count, scope.var(n)?)
            } else if let Some(inner) = next
                .strip_prefix("addList(")
                .and_then(|r| r.strip_suffix(')'))
            {
                let p = split_top(inner, ',');
                let [l, n] = p.as_slice() else {
                    return Err(format!("`{next}`: addList/2 takes two arguments"));
                };
                if l.trim() != list {
                    return Err(format!(
                        "`{next}`: addList must read the list `{list}` of all/3"
                    ));
                }
                (Reduce::Sum, scope.var(n)?)
            } else {
                return Err(format!(
                    "`{next}`: all/3 must be followed by `N is length({list})` or `addList({list}, N)`"
                ));
            };
            out.push(Goal::Aggregate {
                template: template_vars,
                goal: conj,
                reduce,
                out: out_var,
            });
            continue;
        }
        let ops: [(&str, CmpOp); 8] = [
            ("\\==", CmpOp::Differ),
            ("\\=", CmpOp::Differ),
            ("==", CmpOp::Equal),
            ("=<", CmpOp::LessEq),
            (">=", CmpOp::GreaterEq),
            ("<", CmpOp::Less),
            (">", CmpOp::Greater),
            ("=", CmpOp::Unify),
        ];
        if !g.contains('(')
            || g.find(['=', '<', '>'])
                .is_some_and(|p| p < g.find('(').unwrap_or(usize::MAX))
        {
            if let Some((op, kind)) = ops.iter().find(|(op, _)| g.contains(op)) {
                let (a, b) = g.split_once(op).unwrap_or((g, ""));
                out.push(Goal::Cmp(*kind, scope.term(a)?, scope.term(b)?));
                continue;
            }
            if g.contains(" is ") {
                return Err(format!(
                    "`{g}`: arithmetic (`is`) is supported only after all/3"
                ));
            }
        }
        let atom = scope.atom(g)?;
        if BUILTINS.contains(&atom.pred.as_str()) {
            return Err(format!(
                "`{g}`: the built-in {}/{} is not supported",
                atom.pred,
                atom.args.len()
            ));
        }
        out.push(Goal::Pos(atom));
    }
    let rule = Rule {
        head,
        body: out,
        vars: scope.vars,
        file,
        line,
    };
    check_safe(&rule)?;
    Ok(rule)
}

/// Prolog built-ins that would otherwise be read as facts of an unknown predicate.
const BUILTINS: [&str; 14] = [
    "findall",
    "setof",
    "bagof",
    "length",
    "nth",
    "nth0",
    "nth1",
    "append",
    "atom",
    "number",
    "var",
    "nonvar",
    "call",
    "countProofs",
];

/// Every head variable and every variable a negation, comparison or reduction reads must
/// be bound by an earlier goal (left to right).
fn check_safe(r: &Rule) -> Result<(), String> {
    let mut bound = vec![false; r.vars.len()];
    let unbound = |bound: &[bool], t: &Term| match t {
        Term::Var(i) if !bound[*i] => Some(r.vars[*i].clone()),
        _ => None,
    };
    for g in &r.body {
        match g {
            Goal::Pos(a) => a.args.iter().for_each(|t| {
                if let Term::Var(i) = t {
                    bound[*i] = true;
                }
            }),
            Goal::Neg(a) => {
                if let Some(v) = a.args.iter().find_map(|t| unbound(&bound, t)) {
                    return Err(format!(
                        "unsafe rule: variable {v} appears under negation before a positive goal binds it"
                    ));
                }
            }
            Goal::Cmp(CmpOp::Unify, a, b) => match (unbound(&bound, a), unbound(&bound, b)) {
                (Some(v), Some(_)) => {
                    return Err(format!("unsafe rule: `=` with both sides unbound ({v})"));
                }
                _ => {
                    for t in [a, b] {
                        if let Term::Var(i) = t {
                            bound[*i] = true;
                        }
                    }
                }
            },
            Goal::Cmp(_, a, b) => {
                if let Some(v) = [a, b].into_iter().find_map(|t| unbound(&bound, t)) {
                    return Err(format!(
                        "unsafe rule: variable {v} is compared before a positive goal binds it"
                    ));
                }
            }
            Goal::Member(t, _) => {
                if let Term::Var(i) = t {
                    bound[*i] = true;
                }
            }
            Goal::Aggregate { out, .. } => bound[*out] = true,
        }
    }
    if let Some(v) = r.head.args.iter().find_map(|t| unbound(&bound, t)) {
        return Err(format!(
            "unsafe rule: head variable {v} is not bound by the body"
        ));
    }
    Ok(())
}

/// A relation under evaluation: distinct tuples and an index on each argument position.
#[derive(Default)]
struct Rel {
    arity: usize,
    tuples: Vec<Vec<u32>>,
    set: HashSet<Vec<u32>>,
    /// `index[pos][c]` = rows whose argument `pos` is `c`.
    index: Vec<HashMap<u32, Vec<usize>>>,
}

impl Rel {
    fn new(arity: usize) -> Self {
        Self {
            arity,
            index: vec![HashMap::new(); arity],
            ..Self::default()
        }
    }

    fn insert(&mut self, t: Vec<u32>) -> bool {
        if self.set.contains(&t) {
            return false;
        }
        let row = self.tuples.len();
        for (pos, &c) in t.iter().enumerate() {
            self.index[pos].entry(c).or_default().push(row);
        }
        self.set.insert(t.clone());
        self.tuples.push(t);
        true
    }
}

/// What evaluation derived: facts per predicate, in derivation order (constant ids).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Derived {
    /// Per head predicate: arity and the new tuples (not already stated as facts).
    pub facts: BTreeMap<String, (usize, Vec<Vec<u32>>)>,
}

impl Derived {
    /// The number of derived facts per predicate.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        self.facts
            .iter()
            .map(|(p, (_, t))| (p.clone(), t.len()))
            .collect()
    }
}

fn rule_err(r: &Rule, message: impl Into<String>) -> BoostError {
    BoostError::Parse {
        file: r.file.clone(),
        line: r.line,
        message: message.into(),
    }
}

/// The strata of `rules`: rules grouped so that every predicate a rule reads under
/// negation or inside an aggregate is completed in an earlier group.
///
/// # Errors
/// [`BoostError::Parse`] naming a rule on a cycle through negation or an aggregate
/// (not stratifiable).
pub fn stratify(rules: &[Rule]) -> Result<Vec<Vec<usize>>, BoostError> {
    let heads: HashSet<&str> = rules.iter().map(|r| r.head.pred.as_str()).collect();
    // stratum[p] = least stratum of head predicate p; iterate to a fixed point.
    let mut stratum: HashMap<&str, usize> = heads.iter().map(|&h| (h, 0)).collect();
    let n = heads.len();
    loop {
        let mut changed = false;
        for r in rules {
            let mut need = 0;
            for g in &r.body {
                let (preds, strict): (Vec<&str>, bool) = match g {
                    Goal::Pos(a) => (vec![a.pred.as_str()], false),
                    Goal::Neg(a) => (vec![a.pred.as_str()], true),
                    Goal::Aggregate { goal, .. } => {
                        (goal.iter().map(|a| a.pred.as_str()).collect(), true)
                    }
                    _ => (Vec::new(), false),
                };
                for p in preds {
                    if let Some(&s) = stratum.get(p) {
                        need = need.max(s + usize::from(strict));
                    }
                }
            }
            let h = r.head.pred.as_str();
            if stratum[h] < need {
                if need > n {
                    return Err(rule_err(
                        r,
                        format!(
                            "the rules for {h} depend on themselves through negation or an \
                             aggregate (not stratifiable)"
                        ),
                    ));
                }
                stratum.insert(h, need);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let top = stratum.values().copied().max().unwrap_or(0);
    let mut out = vec![Vec::new(); top + 1];
    for (i, r) in rules.iter().enumerate() {
        out[stratum[r.head.pred.as_str()]].push(i);
    }
    Ok(out.into_iter().filter(|s| !s.is_empty()).collect())
}

/// Evaluates `rules` over the facts of `db` to a fixed point (semi-naive, stratified) and
/// adds every derived fact to `db`; returns what was derived. At most `max_derived` new
/// facts in total.
///
/// # Errors
/// [`BoostError::Parse`] naming the rule's file and line: a head predicate that is also a
/// `target` of the split (recursive targets are not supported), an arity clash with the
/// facts, a rule set that is not stratifiable, a numeric comparison of a non-number, or a
/// derivation past `max_derived` facts.
pub fn evaluate(
    rules: &[Rule],
    db: &mut DatabaseBuilder,
    targets: &[&str],
    max_derived: usize,
) -> Result<Derived, BoostError> {
    if rules.is_empty() {
        return Ok(Derived::default());
    }
    for r in rules {
        if targets.iter().any(|t| *t == r.head.pred) {
            return Err(rule_err(
                r,
                format!(
                    "this rule defines the target predicate {}: recursive targets are not \
                     supported (rules may define background predicates only)",
                    r.head.pred
                ),
            ));
        }
    }
    let strata = stratify(rules)?;
    // Relations: every predicate a rule mentions, seeded with the stated facts.
    let mut rels: HashMap<String, Rel> = HashMap::new();
    let arity_of = |pred: &str, arity: usize, r: &Rule, rels: &mut HashMap<String, Rel>| {
        if let Some(rel) = rels.get(pred) {
            if rel.arity != arity {
                return Err(rule_err(
                    r,
                    format!(
                        "{pred} used with arity {arity}, elsewhere with arity {}",
                        rel.arity
                    ),
                ));
            }
            return Ok(());
        }
        let mut rel = Rel::new(arity);
        if let Some((a, flat)) = db.facts_of(pred) {
            if a != arity {
                return Err(rule_err(
                    r,
                    format!("{pred} used with arity {arity}, but its facts have arity {a}"),
                ));
            }
            if a > 0 {
                for t in flat.chunks_exact(a) {
                    rel.insert(t.to_vec());
                }
            } else if !flat.is_empty() || db.n_facts_of(pred) > 0 {
                rel.insert(Vec::new());
            }
        }
        rels.insert(pred.to_owned(), rel);
        Ok(())
    };
    for r in rules {
        arity_of(&r.head.pred, r.head.args.len(), r, &mut rels)?;
        for g in &r.body {
            match g {
                Goal::Pos(a) | Goal::Neg(a) => arity_of(&a.pred, a.args.len(), r, &mut rels)?,
                Goal::Aggregate { goal, .. } => {
                    for a in goal {
                        arity_of(&a.pred, a.args.len(), r, &mut rels)?;
                    }
                }
                _ => {}
            }
        }
    }
    // Constants of the rules, interned once.
    let names: Vec<&str> = rules.iter().flat_map(rule_constants).collect();
    let mut consts: HashMap<String, u32> = HashMap::new();
    for c in names {
        if !consts.contains_key(c) {
            consts.insert(c.to_owned(), db.intern(c));
        }
    }
    let mut derived = Derived::default();
    let mut total = 0usize;
    let base = u32::try_from(db.num_constants()).map_err(|_| BoostError::NoExamples {
        reason: "more than 2^32 constants".into(),
    })?;
    let mut numbers = Consts {
        db,
        base,
        names: Vec::new(),
        ids: HashMap::new(),
        numbers: HashMap::new(),
    };
    for stratum in &strata {
        let in_stratum: HashSet<&str> = stratum
            .iter()
            .map(|&i| rules[i].head.pred.as_str())
            .collect();
        // First round: every rule on the full relations; then semi-naive rounds where
        // one recursive body atom reads only the previous round's new tuples.
        let mut delta: HashMap<String, Vec<Vec<u32>>> = HashMap::new();
        let mut first = true;
        loop {
            let mut new: HashMap<String, Vec<Vec<u32>>> = HashMap::new();
            for &ri in stratum {
                let r = &rules[ri];
                let recursive: Vec<usize> = r
                    .body
                    .iter()
                    .enumerate()
                    .filter(
                        |(_, g)| matches!(g, Goal::Pos(a) if in_stratum.contains(a.pred.as_str())),
                    )
                    .map(|(i, _)| i)
                    .collect();
                let variants: Vec<Option<usize>> = if first {
                    vec![None]
                } else {
                    recursive.iter().map(|&i| Some(i)).collect()
                };
                for v in variants {
                    let mut heads = Vec::new();
                    let ctx = Eval {
                        rule: r,
                        rels: &rels,
                        delta: v.map(|i| (i, &delta)),
                        consts: &consts,
                    };
                    let mut binding = vec![None; r.vars.len()];
                    ctx.solve(0, &mut binding, &mut heads, &mut numbers)?;
                    for t in heads {
                        let rel = &rels[&r.head.pred];
                        if !rel.set.contains(&t) {
                            new.entry(r.head.pred.clone()).or_default().push(t);
                        }
                    }
                }
            }
            let mut any = false;
            delta.clear();
            for (pred, tuples) in new {
                let rel = rels.get_mut(&pred).ok_or_else(|| BoostError::NoExamples {
                    reason: format!("internal: relation {pred} missing"),
                })?;
                for t in tuples {
                    if rel.insert(t.clone()) {
                        any = true;
                        total += 1;
                        if total > max_derived {
                            let r = stratum
                                .iter()
                                .map(|&i| &rules[i])
                                .find(|r| r.head.pred == pred)
                                .unwrap_or(&rules[stratum[0]]);
                            return Err(rule_err(
                                r,
                                format!(
                                    "the rules derive more than {max_derived} facts (at {pred}); \
                                     raise the limit (setParam: maxDerivedFacts=N) if that is intended"
                                ),
                            ));
                        }
                        delta.entry(pred.clone()).or_default().push(t.clone());
                        derived
                            .facts
                            .entry(pred.clone())
                            .or_insert_with(|| (rel.arity, Vec::new()))
                            .1
                            .push(t);
                    }
                }
            }
            first = false;
            if !any {
                break;
            }
        }
    }
    let extra = numbers.names;
    let mut remap = Vec::with_capacity(extra.len());
    for name in &extra {
        remap.push(db.intern(name));
    }
    for (pred, (_, tuples)) in &mut derived.facts {
        for t in tuples.iter_mut() {
            for c in t.iter_mut() {
                if *c >= base {
                    *c = remap[(*c - base) as usize];
                }
            }
            db.add_fact_ids(pred, t)?;
        }
    }
    Ok(derived)
}

/// Every constant a rule names (head, body, lists).
fn rule_constants(r: &Rule) -> Vec<&str> {
    fn of<'a>(ts: &'a [Term], out: &mut Vec<&'a str>) {
        for t in ts {
            if let Term::Const(c) = t {
                out.push(c);
            }
        }
    }
    let mut out = Vec::new();
    of(&r.head.args, &mut out);
    for g in &r.body {
        match g {
            Goal::Pos(a) | Goal::Neg(a) => of(&a.args, &mut out),
            Goal::Cmp(_, a, b) => {
                of(std::slice::from_ref(a), &mut out);
                of(std::slice::from_ref(b), &mut out);
            }
            Goal::Member(t, cs) => {
                of(std::slice::from_ref(t), &mut out);
                out.extend(cs.iter().map(String::as_str));
            }
            Goal::Aggregate { goal, .. } => {
                for a in goal {
                    of(&a.args, &mut out);
                }
            }
        }
    }
    out
}

/// Constants made during evaluation (aggregate results), numbered from `base` on, and the
/// numeric values of constants, parsed once.
struct Consts<'a> {
    db: &'a DatabaseBuilder,
    base: u32,
    names: Vec<String>,
    ids: HashMap<String, u32>,
    numbers: HashMap<u32, Option<f64>>,
}

impl Consts<'_> {
    fn name(&self, c: u32) -> &str {
        if c < self.base {
            self.db.constant_name(c)
        } else {
            &self.names[(c - self.base) as usize]
        }
    }

    fn number(&mut self, c: u32) -> Option<f64> {
        if let Some(&x) = self.numbers.get(&c) {
            return x;
        }
        let x = self.name(c).trim().parse::<f64>().ok();
        self.numbers.insert(c, x);
        x
    }

    /// The id of `text`: the database's if it has it, else a new one.
    fn intern(&mut self, text: &str) -> u32 {
        if let Some(id) = self.db.constant_id(text) {
            return id;
        }
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = self.base + self.names.len() as u32;
        self.names.push(text.to_owned());
        self.ids.insert(text.to_owned(), id);
        id
    }
}

/// New tuples per predicate (a semi-naive round's delta).
type Tuples = HashMap<String, Vec<Vec<u32>>>;

/// One rule's evaluation context.
struct Eval<'a> {
    rule: &'a Rule,
    rels: &'a HashMap<String, Rel>,
    /// `(body position, new tuples per predicate)`: that body atom reads only these.
    delta: Option<(usize, &'a Tuples)>,
    consts: &'a HashMap<String, u32>,
}

impl Eval<'_> {
    fn value(&self, t: &Term, b: &[Option<u32>]) -> Option<u32> {
        match t {
            Term::Var(i) => b[*i],
            Term::Const(c) => self.consts.get(c).copied(),
        }
    }

    /// Tuples of `a` compatible with the bindings: (candidates from an index on a bound
    /// position, or all).
    fn matches(
        &self,
        a: &RuleAtom,
        rows: &[Vec<u32>],
        rel: Option<&Rel>,
        b: &[Option<u32>],
    ) -> Vec<usize> {
        if let Some(rel) = rel {
            for (pos, t) in a.args.iter().enumerate() {
                if let Some(c) = self.value(t, b) {
                    return rel.index[pos].get(&c).cloned().unwrap_or_default();
                }
            }
        }
        (0..rows.len()).collect()
    }

    /// Binds `a`'s variables to tuple `t` if consistent; returns the newly bound vars.
    fn unify(&self, a: &RuleAtom, t: &[u32], b: &mut [Option<u32>]) -> Option<Vec<usize>> {
        let mut set = Vec::new();
        for (arg, &c) in a.args.iter().zip(t) {
            match arg {
                Term::Const(k) => {
                    if self.consts.get(k) != Some(&c) {
                        for &i in &set {
                            b[i] = None;
                        }
                        return None;
                    }
                }
                Term::Var(i) => match b[*i] {
                    Some(v) if v != c => {
                        for &i in &set {
                            b[i] = None;
                        }
                        return None;
                    }
                    Some(_) => {}
                    None => {
                        b[*i] = Some(c);
                        set.push(*i);
                    }
                },
            }
        }
        Some(set)
    }

    fn holds(&self, a: &RuleAtom, b: &[Option<u32>]) -> bool {
        let Some(rel) = self.rels.get(&a.pred) else {
            return false;
        };
        let t: Option<Vec<u32>> = a.args.iter().map(|t| self.value(t, b)).collect();
        t.is_some_and(|t| rel.set.contains(&t))
    }

    fn solve(
        &self,
        pos: usize,
        b: &mut Vec<Option<u32>>,
        out: &mut Vec<Vec<u32>>,
        nums: &mut Consts<'_>,
    ) -> Result<(), BoostError> {
        let Some(goal) = self.rule.body.get(pos) else {
            let head: Option<Vec<u32>> = self
                .rule
                .head
                .args
                .iter()
                .map(|t| self.value(t, b))
                .collect();
            if let Some(h) = head {
                out.push(h);
            }
            return Ok(());
        };
        match goal {
            Goal::Pos(a) => {
                let rel = self.rels.get(&a.pred);
                let (rows, indexed): (&[Vec<u32>], Option<&Rel>) = match self.delta {
                    Some((p, d)) if p == pos => {
                        (d.get(&a.pred).map_or(&[][..], |v| v.as_slice()), None)
                    }
                    _ => (rel.map_or(&[][..], |r| r.tuples.as_slice()), rel),
                };
                for row in self.matches(a, rows, indexed, b) {
                    if let Some(set) = self.unify(a, &rows[row], b) {
                        self.solve(pos + 1, b, out, nums)?;
                        for i in set {
                            b[i] = None;
                        }
                    }
                }
            }
            Goal::Neg(a) => {
                if !self.holds(a, b) {
                    self.solve(pos + 1, b, out, nums)?;
                }
            }
            Goal::Cmp(op, x, y) => {
                let (vx, vy) = (self.value(x, b), self.value(y, b));
                let ok = match (op, vx, vy) {
                    (CmpOp::Unify, None, Some(v)) | (CmpOp::Unify, Some(v), None) => {
                        let var = match (x, y) {
                            (Term::Var(i), _) if vx.is_none() => *i,
                            (_, Term::Var(i)) => *i,
                            _ => return Ok(()),
                        };
                        b[var] = Some(v);
                        self.solve(pos + 1, b, out, nums)?;
                        b[var] = None;
                        return Ok(());
                    }
                    (CmpOp::Differ, Some(p), Some(q)) => p != q,
                    (CmpOp::Equal | CmpOp::Unify, Some(p), Some(q)) => p == q,
                    (_, Some(p), Some(q)) => {
                        let (Some(pn), Some(qn)) = (nums.number(p), nums.number(q)) else {
                            return Err(rule_err(
                                self.rule,
                                format!(
                                    "numeric comparison of `{}` and `{}`, which are not both numbers",
                                    nums.name(p),
                                    nums.name(q)
                                ),
                            ));
                        };
                        let (p, q) = (pn, qn);
                        match op {
                            CmpOp::Less => p < q,
                            CmpOp::Greater => p > q,
                            CmpOp::LessEq => p <= q,
                            _ => p >= q,
                        }
                    }
                    _ => false,
                };
                if ok {
                    self.solve(pos + 1, b, out, nums)?;
                }
            }
            Goal::Member(t, list) => {
                for c in list {
                    let Some(&id) = self.consts.get(c) else {
                        continue;
                    };
                    match (t, self.value(t, b)) {
                        (_, Some(v)) if v == id => self.solve(pos + 1, b, out, nums)?,
                        (_, Some(_)) => {}
                        (Term::Var(i), None) => {
                            b[*i] = Some(id);
                            self.solve(pos + 1, b, out, nums)?;
                            b[*i] = None;
                        }
                        (Term::Const(_), None) => {}
                    }
                }
            }
            Goal::Aggregate {
                template,
                goal,
                reduce,
                out: var,
            } => {
                // Distinct template solutions of the conjunction under the bindings so far.
                let mut sols: HashSet<Vec<u32>> = HashSet::new();
                let sub = Eval {
                    rule: self.rule,
                    rels: self.rels,
                    delta: None,
                    consts: self.consts,
                };
                let mut local = b.clone();
                sub.conj(goal, 0, &mut local, template, &mut sols);
                if sols.is_empty() {
                    return Ok(()); // all/3 fails on no solution
                }
                let value = match reduce {
                    Reduce::Count => sols.len() as f64,
                    Reduce::Sum => {
                        let mut s = 0.0;
                        for t in &sols {
                            let Some(&c) = t.first() else { continue };
                            let Some(x) = nums.number(c) else {
                                return Err(rule_err(
                                    self.rule,
                                    format!(
                                        "addList over `{}`, which is not a number",
                                        nums.name(c)
                                    ),
                                ));
                            };
                            s += x;
                        }
                        s
                    }
                };
                let text = if value.fract() == 0.0 && value.abs() < 9.0e15 {
                    format!("{}", value as i64)
                } else {
                    format!("{value}")
                };
                let id = nums.intern(&text);
                match b[*var] {
                    Some(v) if v != id => {}
                    Some(_) => self.solve(pos + 1, b, out, nums)?,
                    None => {
                        b[*var] = Some(id);
                        self.solve(pos + 1, b, out, nums)?;
                        b[*var] = None;
                    }
                }
            }
        }
        Ok(())
    }

    /// Solutions of the conjunction `goal[i..]`, collected as template tuples.
    fn conj(
        &self,
        goal: &[RuleAtom],
        i: usize,
        b: &mut Vec<Option<u32>>,
        template: &[usize],
        sols: &mut HashSet<Vec<u32>>,
    ) {
        let Some(a) = goal.get(i) else {
            let t: Option<Vec<u32>> = template.iter().map(|&v| b[v]).collect();
            if let Some(t) = t {
                sols.insert(t);
            }
            return;
        };
        let Some(rel) = self.rels.get(&a.pred) else {
            return;
        };
        for row in self.matches(a, &rel.tuples, Some(rel), b) {
            if let Some(set) = self.unify(a, &rel.tuples[row], b) {
                self.conj(goal, i + 1, b, template, sols);
                for v in set {
                    b[v] = None;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rule(text: &str, line: usize) -> Rule {
        parse_rule(text, true, PathBuf::from("bk.txt"), line).expect("parses")
    }

    fn db_with(facts: &[(&str, &[&str])]) -> DatabaseBuilder {
        let mut b = DatabaseBuilder::new();
        for (p, args) in facts {
            b.add_fact(p, args).expect("fact");
        }
        b
    }

    /// The facts of `pred` in `b`, as sorted name tuples.
    fn facts(b: &DatabaseBuilder, pred: &str) -> Vec<Vec<String>> {
        let Some((a, flat)) = b.facts_of(pred) else {
            return Vec::new();
        };
        let mut v: Vec<Vec<String>> = flat
            .chunks_exact(a.max(1))
            .map(|t| t.iter().map(|&c| b.constant_name(c).to_owned()).collect())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn recursion_computes_the_transitive_closure() {
        let mut b = db_with(&[
            ("parent", &["ann", "bob"]),
            ("parent", &["bob", "cid"]),
            ("parent", &["cid", "dee"]),
        ]);
        let rules = [
            rule("ancestor(X, Y) :- parent(X, Y).", 1),
            rule("ancestor(X, Z) :- parent(X, Y), ancestor(Y, Z).", 2),
        ];
        let d = evaluate(&rules, &mut b, &["target"], 1000).expect("evaluates");
        assert_eq!(d.counts()["ancestor"], 6);
        let want: Vec<Vec<String>> = [
            ("ann", "bob"),
            ("ann", "cid"),
            ("ann", "dee"),
            ("bob", "cid"),
            ("bob", "dee"),
            ("cid", "dee"),
        ]
        .iter()
        .map(|(a, c)| vec![(*a).to_owned(), (*c).to_owned()])
        .collect();
        assert_eq!(facts(&b, "ancestor"), want);
    }

    #[test]
    fn negation_comparisons_member_and_aggregates() {
        let mut b = db_with(&[
            ("person", &["ann"]),
            ("person", &["bob"]),
            ("person", &["cid"]),
            ("parent", &["ann", "bob"]),
            ("publication", &["t1", "ann"]),
            ("publication", &["t2", "ann"]),
            ("publication", &["t3", "ann"]),
            ("publication", &["t1", "bob"]),
            ("score", &["ann", "2"]),
            ("score", &["bob", "5"]),
        ]);
        let rules = [
            rule("haspar(X) :- parent(Y, X).", 1),
            rule("orphan(X) :- person(X), \\+ haspar(X).", 2),
            rule("other(X, Y) :- person(X), person(Y), X \\= Y.", 3),
            rule(
                "npubs(P, N) :- publication(T, P), all(Title, publication(Title, P), L), N is length(L).",
                4,
            ),
            rule("many(P, K) :- npubs(P, N), member(K, [1, 2, 3]), N > K.", 5),
            rule(
                "total(N) :- score(ann, S), all(V, P^score(P, V), L), addList(L, N).",
                6,
            ),
            rule(
                "coauthor(A, B) :- publication(T, A), publication(T, B), A \\== B.",
                7,
            ),
        ];
        let d = evaluate(&rules, &mut b, &["target"], 1000).expect("evaluates");
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        assert_eq!(facts(&b, "orphan"), vec![s(&["ann"]), s(&["cid"])]);
        assert_eq!(d.counts()["other"], 6);
        assert_eq!(facts(&b, "npubs"), vec![s(&["ann", "3"]), s(&["bob", "1"])]);
        assert_eq!(facts(&b, "many"), vec![s(&["ann", "1"]), s(&["ann", "2"])]);
        assert_eq!(facts(&b, "total"), vec![s(&["7"])]);
        assert_eq!(
            facts(&b, "coauthor"),
            vec![s(&["ann", "bob"]), s(&["bob", "ann"])]
        );
    }

    #[test]
    fn bad_rules_are_errors_or_reported() {
        let p = |t: &str| parse_rule(t, true, PathBuf::from("bk.txt"), 9);
        assert!(
            p("p(X) :- \\+ q(X).")
                .expect_err("unsafe")
                .starts_with("unsafe rule")
        );
        assert!(
            p("p(X, Y) :- q(X).")
                .expect_err("unsafe")
                .starts_with("unsafe rule")
        );
        assert!(
            p("p(X) :- q(Y), X < Y.")
                .expect_err("unsafe")
                .starts_with("unsafe rule")
        );
        assert!(
            !p("p(X) :- q(X) ; r(X).")
                .expect_err("disjunction")
                .starts_with("unsafe")
        );
        assert!(p("p(X) :- q(X), findall(Y, r(Y), L).").is_err());
        assert!(p("p(X) :- q(X), N is X + 1.").is_err());
        assert!(p("p(f(X)) :- q(X).").is_err());
        // lower-case variables under usePrologVariables: false
        let r = parse_rule("p(x) :- q(x, Bob).", false, PathBuf::from("b"), 1).expect("ok");
        assert_eq!(r.vars, ["x"]);
        assert_eq!(
            r.body,
            vec![Goal::Pos(RuleAtom {
                pred: "q".into(),
                args: vec![Term::Var(0), Term::Const("Bob".into())],
            })]
        );
        // not stratifiable
        let mut b = db_with(&[("r", &["a"])]);
        let rules = [
            rule("p(X) :- r(X), \\+ q(X).", 3),
            rule("q(X) :- r(X), \\+ p(X).", 4),
        ];
        let e = evaluate(&rules, &mut b, &[], 100)
            .expect_err("cycle")
            .to_string();
        assert!(
            e.contains("bk.txt") && e.contains("not stratifiable"),
            "{e}"
        );
        // the limit stops a large derivation with the rule's file and line
        let mut b = DatabaseBuilder::new();
        for i in 0..100 {
            b.add_fact("n", &[i.to_string()]).expect("fact");
        }
        let e = evaluate(&[rule("pair(X, Y) :- n(X), n(Y).", 12)], &mut b, &[], 500)
            .expect_err("limit")
            .to_string();
        assert!(e.contains("bk.txt:12") && e.contains("500"), "{e}");
        // a rule may not define the target; arity clashes name the rule
        let mut b = db_with(&[("r", &["a"])]);
        let e = evaluate(&[rule("t(X) :- r(X).", 2)], &mut b, &["t"], 10)
            .expect_err("target")
            .to_string();
        assert!(e.contains("target predicate t"), "{e}");
        let e = evaluate(&[rule("p(X) :- r(X, Y).", 5)], &mut b, &[], 10)
            .expect_err("arity")
            .to_string();
        assert!(e.contains("bk.txt:5") && e.contains("arity"), "{e}");
        let mut b = db_with(&[("v", &["a", "x"])]);
        let e = evaluate(&[rule("p(X) :- v(X, Y), Y > 3.", 6)], &mut b, &[], 10)
            .expect_err("not a number")
            .to_string();
        assert!(e.contains("not both numbers"), "{e}");
    }

    /// A random positive rule: head predicate, body atoms `(predicate, [var, var])`, head
    /// variables.
    type TestRule = (usize, Vec<(usize, [usize; 2])>, [usize; 2]);

    /// The naive oracle: apply every (positive) rule to the full relations until nothing
    /// changes, on name tuples.
    fn naive(
        facts: &[(String, Vec<String>)],
        rules: &[TestRule],
        preds: &[&str],
    ) -> std::collections::BTreeSet<(String, Vec<String>)> {
        let mut known: std::collections::BTreeSet<(String, Vec<String>)> =
            facts.iter().cloned().collect();
        loop {
            let mut new = Vec::new();
            for (head, body, hvars) in rules {
                // enumerate assignments of variables 0..3 over the domain
                let dom: Vec<String> = (0..4).map(|i| format!("c{i}")).collect();
                for a in &dom {
                    for b in &dom {
                        for c in &dom {
                            let val = [a, b, c];
                            let ok = body.iter().all(|(p, vs)| {
                                known.contains(&(
                                    preds[*p].to_owned(),
                                    vec![val[vs[0]].clone(), val[vs[1]].clone()],
                                ))
                            });
                            if ok {
                                let t = (
                                    preds[*head].to_owned(),
                                    vec![val[hvars[0]].clone(), val[hvars[1]].clone()],
                                );
                                if !known.contains(&t) {
                                    new.push(t);
                                }
                            }
                        }
                    }
                }
            }
            if new.is_empty() {
                return known;
            }
            known.extend(new);
        }
    }

    proptest! {
        /// Semi-naive evaluation derives exactly the naive fixed point on random positive,
        /// possibly recursive, programs over binary predicates.
        #[test]
        fn semi_naive_equals_naive(
            edb in proptest::collection::vec((0usize..2, 0usize..4, 0usize..4), 0..12),
            prog in proptest::collection::vec(
                (2usize..4, proptest::collection::vec((0usize..4, [0usize..3, 0usize..3]), 1..3), [0usize..3, 0usize..3]),
                1..4,
            ),
        ) {
            let preds = ["e", "f", "p", "q"];
            let vars = ["A", "B", "C"];
            // keep the safe rules only (every head variable in the body)
            let prog: Vec<_> = prog
                .into_iter()
                .filter(|(_, body, h)| h.iter().all(|v| body.iter().any(|(_, vs)| vs.contains(v))))
                .collect();
            prop_assume!(!prog.is_empty());
            let facts: Vec<(String, Vec<String>)> = edb
                .iter()
                .map(|(p, a, b)| (preds[*p].to_owned(), vec![format!("c{a}"), format!("c{b}")]))
                .collect();
            let mut b = DatabaseBuilder::new();
            for i in 0..4 {
                b.intern(&format!("c{i}"));
            }
            for (p, args) in &facts {
                b.add_fact(p, args).expect("fact");
            }
            let rules: Vec<Rule> = prog
                .iter()
                .enumerate()
                .map(|(i, (h, body, hv))| {
                    let body: Vec<String> = body
                        .iter()
                        .map(|(p, vs)| format!("{}({}, {})", preds[*p], vars[vs[0]], vars[vs[1]]))
                        .collect();
                    rule(
                        &format!("{}({}, {}) :- {}.", preds[*h], vars[hv[0]], vars[hv[1]], body.join(", ")),
                        i + 1,
                    )
                })
                .collect();
            evaluate(&rules, &mut b, &[], 100_000).expect("evaluates");
            let oracle = naive(&facts, &prog, &preds);
            for p in preds {
                let got: Vec<Vec<String>> = facts_of_all(&b, p);
                let want: Vec<Vec<String>> = oracle
                    .iter()
                    .filter(|(q, _)| q == p)
                    .map(|(_, t)| t.clone())
                    .collect();
                prop_assert_eq!(got, want, "{}", p);
            }
        }
    }

    fn facts_of_all(b: &DatabaseBuilder, pred: &str) -> Vec<Vec<String>> {
        let mut v = facts(b, pred);
        v.dedup();
        v
    }
}
