//! The Bayesian network Interchange Format (BIF 0.15, as written by bnlearn and pgmpy).

use std::collections::HashMap;
use std::path::Path;

use super::{Comments, Cursor, read_text, tokenize};
use crate::error::BayesError;
use crate::network::{BayesianNetwork, Cpt, Variable};

/// Reads a BIF file (gzip-compressed or plain) into a network.
///
/// # Errors
/// [`BayesError::Io`] if unreadable; otherwise as [`parse_bif`].
pub fn read_bif(path: &Path) -> Result<BayesianNetwork, BayesError> {
    let text = read_text(path)?;
    parse_bif(&text, &path.display().to_string())
}

/// Parses BIF text: `network NAME { }`, `variable NAME { type discrete [ k ] { s1, ... }; }`
/// and `probability ( CHILD | P1, P2 ) { (p1state, p2state) v1, v2, ...; }` blocks. Root
/// tables use `table v1, ...;`. A `table` line in a block with parents is read as in
/// pgmpy: child state slowest, then the parents' joint states (last parent fastest). A
/// `default` line fills every parent row not listed. `property` lines are ignored.
///
/// # Errors
/// [`BayesError::Parse`] with `file` and the 1-based line of the offending token, also for
/// a text that declares no variable (empty, blank or comments only), a parent listed
/// twice, a table of more than [`super::MAX_TABLE_ENTRIES`] entries, and a CPT row whose
/// entries are all zero (no conditional distribution; the message names the variable and
/// the parent states of the row); [`BayesError::InvalidNetwork`] if the result is not a
/// valid network (a variable without a probability block, cycles, ...).
pub fn parse_bif(text: &str, file: &str) -> Result<BayesianNetwork, BayesError> {
    let toks = tokenize(text, Comments::CStyle, file)?;
    let mut c = Cursor::new(&toks, file);
    let mut variables: Vec<Variable> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    // (child, parents, rows: Option<Vec<f64>> per row, line)
    struct Block {
        child: usize,
        parents: Vec<usize>,
        probs: Vec<f64>,
        /// which parent rows were given (a row or the table)
        given: Vec<bool>,
        line: usize,
    }
    let mut blocks: Vec<Block> = Vec::new();
    let mut total_entries = 0usize;
    while let Some(t) = c.peek() {
        match t.text.as_str() {
            "network" => {
                c.next()?;
                while c.peek().is_some_and(|t| t.text != "{") {
                    c.next()?;
                }
                c.skip_block()?;
            }
            "variable" => {
                c.next()?;
                let name = c.word()?;
                let line = c.line();
                c.expect("{")?;
                let mut states: Option<Vec<String>> = None;
                while !c.eat("}") {
                    let kline = c.line();
                    let key = c.word()?;
                    if key == "type" {
                        let kind = c.word()?;
                        if kind != "discrete" {
                            return Err(
                                c.err(format!("variable `{name}` has unsupported type `{kind}`"))
                            );
                        }
                        c.expect("[")?;
                        let k = c.number()?;
                        c.expect("]")?;
                        c.expect("{")?;
                        let mut s = Vec::new();
                        while !c.eat("}") {
                            s.push(c.word()?);
                            c.eat(",");
                        }
                        c.expect(";")?;
                        if (s.len() as f64 - k).abs() > 0.0 {
                            return Err(BayesError::parse(
                                file,
                                kline,
                                format!(
                                    "variable `{name}` declares {k} states but lists {}",
                                    s.len()
                                ),
                            ));
                        }
                        states = Some(s);
                    } else {
                        c.skip_statement()?;
                    }
                }
                let states = states.ok_or_else(|| {
                    BayesError::parse(file, line, format!("variable `{name}` has no type"))
                })?;
                if states.is_empty() {
                    return Err(BayesError::parse(
                        file,
                        line,
                        format!("variable `{name}` has no states"),
                    ));
                }
                if let Some(s) = super::repeated_state(&states) {
                    return Err(BayesError::parse(
                        file,
                        line,
                        format!("variable `{name}` lists state `{s}` twice"),
                    ));
                }
                if index.insert(name.clone(), variables.len()).is_some() {
                    return Err(BayesError::parse(
                        file,
                        line,
                        format!("variable `{name}` declared twice"),
                    ));
                }
                variables.push(Variable { name, states });
            }
            "probability" => {
                c.next()?;
                let line = c.line();
                c.expect("(")?;
                let lookup = |c: &Cursor<'_>, n: &str| {
                    index
                        .get(n)
                        .copied()
                        .ok_or_else(|| c.err(format!("unknown variable `{n}`")))
                };
                let child_name = c.word()?;
                let child = lookup(&c, &child_name)?;
                let mut parents = Vec::new();
                if c.eat("|") {
                    while !c.eat(")") {
                        let p = c.word()?;
                        let id = lookup(&c, &p)?;
                        if parents.contains(&id) || id == child {
                            return Err(c.err(format!(
                                "`{p}` is listed twice in the probability block of `{child_name}`"
                            )));
                        }
                        parents.push(id);
                        c.eat(",");
                    }
                } else {
                    c.expect(")")?;
                }
                let k = variables[child].cardinality();
                let pcards: Vec<usize> = parents
                    .iter()
                    .map(|&p| variables[p].cardinality())
                    .collect();
                let rows = super::table_size(&pcards, 1)
                    .ok_or_else(|| c.err(format!("the CPT of `{child_name}` is too large")))?;
                let size = super::table_size(&[rows, k], 1)
                    .ok_or_else(|| c.err(format!("the CPT of `{child_name}` is too large")))?;
                total_entries = total_entries
                    .checked_add(size)
                    .filter(|&t| t <= super::MAX_TABLE_ENTRIES)
                    .ok_or_else(|| {
                        c.err(format!(
                            "the CPTs up to `{child_name}` exceed {} entries together",
                            super::MAX_TABLE_ENTRIES
                        ))
                    })?;
                let mut probs: Vec<f64> = vec![0.0; size];
                let mut given = vec![false; rows];
                let mut default: Option<Vec<f64>> = None;
                c.expect("{")?;
                while !c.eat("}") {
                    let sline = c.line();
                    if c.eat("(") {
                        let mut row = 0usize;
                        for (j, &p) in parents.iter().enumerate() {
                            let s = c.word()?;
                            let si = variables[p]
                                .states
                                .iter()
                                .position(|x| *x == s)
                                .ok_or_else(|| {
                                    c.err(format!(
                                        "`{s}` is not a state of `{}`",
                                        variables[p].name
                                    ))
                                })?;
                            row = row * pcards[j] + si;
                            c.eat(",");
                        }
                        c.expect(")")?;
                        let vals = read_numbers(&mut c)?;
                        if vals.len() != k {
                            return Err(BayesError::parse(
                                file,
                                sline,
                                format!(
                                    "row of `{child_name}` has {} values, expected {k}",
                                    vals.len()
                                ),
                            ));
                        }
                        if given[row] {
                            return Err(BayesError::parse(
                                file,
                                sline,
                                format!(
                                    "the row for {} of `{child_name}` is given twice",
                                    crate::network::describe_row(&variables, &parents, row)
                                ),
                            ));
                        }
                        for (s, v) in vals.into_iter().enumerate() {
                            probs[row * k + s] = v;
                        }
                        given[row] = true;
                    } else {
                        let key = c.word()?;
                        match key.as_str() {
                            "table" => {
                                let vals = read_numbers(&mut c)?;
                                if given.iter().any(|&g| g) {
                                    return Err(BayesError::parse(
                                        file,
                                        sline,
                                        format!(
                                            "`table` of `{child_name}` after rows or a second `table`"
                                        ),
                                    ));
                                }
                                if vals.len() != rows * k {
                                    return Err(BayesError::parse(
                                        file,
                                        sline,
                                        format!(
                                            "table of `{child_name}` has {} values, expected {}",
                                            vals.len(),
                                            rows * k
                                        ),
                                    ));
                                }
                                // child slowest, parent rows fastest
                                for s in 0..k {
                                    for r in 0..rows {
                                        probs[r * k + s] = vals[s * rows + r];
                                    }
                                }
                                given.iter_mut().for_each(|g| *g = true);
                            }
                            "default" => {
                                let vals = read_numbers(&mut c)?;
                                if vals.len() != k {
                                    return Err(BayesError::parse(
                                        file,
                                        sline,
                                        format!(
                                            "`default` row of `{child_name}` has {} values, expected {k}",
                                            vals.len()
                                        ),
                                    ));
                                }
                                if default.is_some() {
                                    return Err(BayesError::parse(
                                        file,
                                        sline,
                                        format!("second `default` row for `{child_name}`"),
                                    ));
                                }
                                default = Some(vals);
                            }
                            _ => c.skip_statement()?,
                        }
                    }
                }
                if let Some(vals) = default {
                    for r in 0..rows {
                        if !given[r] {
                            for s in 0..k {
                                probs[r * k + s] = vals[s];
                            }
                            given[r] = true;
                        }
                    }
                }
                blocks.push(Block {
                    child,
                    parents,
                    probs,
                    given,
                    line,
                });
            }
            other => return Err(c.err(format!("unexpected `{other}` at top level"))),
        }
    }
    if variables.is_empty() {
        return Err(BayesError::parse(
            file,
            c.line(),
            "no variable declared (an empty network)",
        ));
    }
    let mut cpts: Vec<Option<Cpt>> = vec![None; variables.len()];
    for b in blocks {
        if cpts[b.child].is_some() {
            return Err(BayesError::parse(
                file,
                b.line,
                format!("second probability block for `{}`", variables[b.child].name),
            ));
        }
        if let Some(row) = b.given.iter().position(|&g| !g) {
            return Err(BayesError::parse(
                file,
                b.line,
                format!(
                    "CPT of `{}` misses the row for {} (and no `default`)",
                    variables[b.child].name,
                    crate::network::describe_row(&variables, &b.parents, row)
                ),
            ));
        }
        let probs = b.probs;
        super::check_rows(&variables, b.child, &b.parents, &probs)
            .map_err(|m| BayesError::parse(file, b.line, m))?;
        cpts[b.child] = Some(Cpt {
            parents: b.parents,
            probs,
        });
    }
    let cpts = cpts
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            c.ok_or_else(|| {
                BayesError::network(format!(
                    "variable `{}` has no probability block",
                    variables[i].name
                ))
                .in_file(file)
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    BayesianNetwork::new(variables, cpts).map_err(|e| e.in_file(file))
}

/// Numbers separated by commas up to `;`.
fn read_numbers(c: &mut Cursor<'_>) -> Result<Vec<f64>, BayesError> {
    let mut v = Vec::new();
    while !c.eat(";") {
        v.push(c.number()?);
        c.eat(",");
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows_table_and_reports_lines() -> Result<(), BayesError> {
        let text = "network x {\n}\nvariable A {\n  type discrete [ 2 ] { a0, a1 };\n}\nvariable B {\n type discrete [ 2 ] { b0, b1 };\n}\nprobability ( A ) {\n  table 0.3, 0.7;\n}\nprobability ( B | A ) {\n  (a1) 0.4, 0.6;\n  (a0) 0.9, 0.1;\n}\n";
        let net = parse_bif(text, "t.bif")?;
        assert!((net.prob(1, &[0], 0) - 0.9).abs() < 1e-12);
        assert!((net.prob(1, &[1], 1) - 0.6).abs() < 1e-12);
        let bad = text.replace("(a0) 0.9, 0.1;", "(a9) 0.9, 0.1;");
        match parse_bif(&bad, "t.bif") {
            Err(BayesError::Parse { line, .. }) => assert_eq!(line, 14),
            other => panic!("expected a parse error, got {other:?}"),
        }
        Ok(())
    }
}
