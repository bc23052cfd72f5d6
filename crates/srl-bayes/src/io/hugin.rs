//! The Hugin NET format (the format of SamIam and of the TrimBN toolchain).

use std::collections::HashMap;
use std::path::Path;

use super::{Comments, Cursor, read_text, tokenize};
use crate::error::BayesError;
use crate::network::{BayesianNetwork, Cpt, Variable};

/// Reads a Hugin `.net` file into a network.
///
/// # Errors
/// [`BayesError::Io`] if unreadable; otherwise as [`parse_hugin_net`].
pub fn read_hugin_net(path: &Path) -> Result<BayesianNetwork, BayesError> {
    let text = read_text(path)?;
    parse_hugin_net(&text, &path.display().to_string())
}

/// Parses Hugin NET text: an optional `net { ... }` block, `node NAME { states = ("a"
/// "b"); ... }` (also `discrete node`), and `potential ( CHILD | P1 P2 ) { data = ( ... );
/// }`. The `data` table is nested parentheses over the parents in the listed order with
/// the child innermost, i.e. exactly this crate's [`Cpt`] layout (last parent fastest,
/// child fastest of all). Other attributes (`label`, `position`, ...) are ignored. `%`
/// starts a comment.
///
/// # Errors
/// [`BayesError::Parse`] with the file and 1-based line, also for a text that declares no
/// node (empty, blank or comments only), a parent listed twice, a `data` table of the wrong
/// size, and a table row whose entries are all zero (the message names the node and the
/// parent states of the row); [`BayesError::InvalidNetwork`] if a node has no potential or
/// the network is invalid. Continuous, decision and utility nodes are rejected.
pub fn parse_hugin_net(text: &str, file: &str) -> Result<BayesianNetwork, BayesError> {
    let toks = tokenize(text, Comments::Percent, file)?;
    let mut c = Cursor::new(&toks, file);
    let mut variables: Vec<Variable> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut cpts: Vec<Option<Cpt>> = Vec::new();
    while let Some(t) = c.peek() {
        match t.text.as_str() {
            "net" | "class" => {
                c.next()?;
                while c.peek().is_some_and(|t| t.text != "{") {
                    c.next()?;
                }
                c.skip_block()?;
            }
            "discrete" => {
                c.next()?;
            }
            "continuous" | "decision" | "utility" => {
                return Err(c.err(format!("{} nodes are not supported", t.text)));
            }
            "node" => {
                c.next()?;
                let line = c.line();
                let name = c.word()?;
                c.expect("{")?;
                let mut states = None;
                while !c.eat("}") {
                    let key = c.word()?;
                    c.expect("=")?;
                    if key == "states" {
                        c.expect("(")?;
                        let mut s = Vec::new();
                        while !c.eat(")") {
                            s.push(c.word()?);
                        }
                        c.expect(";")?;
                        if states.is_some() {
                            return Err(BayesError::parse(
                                file,
                                line,
                                format!("node `{name}` has two `states` lines"),
                            ));
                        }
                        states = Some(s);
                    } else {
                        c.skip_statement()?;
                    }
                }
                let states = states.ok_or_else(|| {
                    BayesError::parse(file, line, format!("node `{name}` has no states"))
                })?;
                if states.is_empty() {
                    return Err(BayesError::parse(
                        file,
                        line,
                        format!("node `{name}` has no states"),
                    ));
                }
                if let Some(s) = super::repeated_state(&states) {
                    return Err(BayesError::parse(
                        file,
                        line,
                        format!("node `{name}` lists state `{s}` twice"),
                    ));
                }
                if index.insert(name.clone(), variables.len()).is_some() {
                    return Err(BayesError::parse(
                        file,
                        line,
                        format!("node `{name}` declared twice"),
                    ));
                }
                variables.push(Variable { name, states });
                cpts.push(None);
            }
            "potential" => {
                c.next()?;
                let line = c.line();
                c.expect("(")?;
                let lookup = |c: &Cursor<'_>, n: &str| {
                    index
                        .get(n)
                        .copied()
                        .ok_or_else(|| c.err(format!("unknown node `{n}`")))
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
                                "`{p}` is listed twice in the potential of `{child_name}`"
                            )));
                        }
                        parents.push(id);
                    }
                } else if !c.eat(")") {
                    return Err(c.err("potentials over several child nodes are not supported"));
                }
                c.expect("{")?;
                let mut data = None;
                while !c.eat("}") {
                    let key = c.word()?;
                    c.expect("=")?;
                    if key == "data" {
                        if data.is_some() {
                            return Err(
                                c.err(format!("second `data` in the potential of `{child_name}`"))
                            );
                        }
                        let mut names: Vec<&str> = parents
                            .iter()
                            .map(|&p| variables[p].name.as_str())
                            .collect();
                        names.push(&child_name);
                        let mut dims: Vec<usize> = parents
                            .iter()
                            .map(|&p| variables[p].cardinality())
                            .collect();
                        dims.push(variables[child].cardinality());
                        data = Some(read_data(&mut c, file, &child_name, &names, &dims)?);
                    } else {
                        c.skip_statement()?;
                    }
                }
                let probs = data.ok_or_else(|| {
                    BayesError::parse(
                        file,
                        line,
                        format!("potential of `{child_name}` has no data"),
                    )
                })?;
                if cpts[child].is_some() {
                    return Err(BayesError::parse(
                        file,
                        line,
                        format!("second potential for `{child_name}`"),
                    ));
                }
                let mut cards: Vec<usize> = parents
                    .iter()
                    .map(|&p| variables[p].cardinality())
                    .collect();
                cards.push(variables[child].cardinality());
                if super::table_size(&cards, 1) != Some(probs.len()) {
                    return Err(BayesError::parse(
                        file,
                        line,
                        format!(
                            "potential of `{child_name}` has {} values, its scope needs {}",
                            probs.len(),
                            cards
                                .iter()
                                .try_fold(1usize, |a, &k| a.checked_mul(k))
                                .map_or_else(|| "more than 2^64".to_string(), |n| n.to_string())
                        ),
                    ));
                }
                super::check_rows(&variables, child, &parents, &probs)
                    .map_err(|m| BayesError::parse(file, line, m))?;
                cpts[child] = Some(Cpt { parents, probs });
            }
            other => return Err(c.err(format!("unexpected `{other}` at top level"))),
        }
    }
    if variables.is_empty() {
        return Err(BayesError::parse(
            file,
            c.line(),
            "no node declared (an empty network)",
        ));
    }
    let cpts = cpts
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            c.ok_or_else(|| {
                BayesError::network(format!("node `{}` has no potential", variables[i].name))
                    .in_file(file)
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    BayesianNetwork::new(variables, cpts).map_err(|e| e.in_file(file))
}

/// One parenthesised group of a `data` table.
struct Group {
    line: usize,
    depth: usize,
    numbers: usize,
    groups: usize,
}

/// Reads a `data = ( ... );` table (the cursor is after `=`) and checks its parentheses:
/// balanced, one outer group, and nested along `dims` (the parents' cardinalities, then
/// the child's; `names` parallel): a table of `D` levels has `dims[d - 1]` groups inside
/// each group of level `d < D`, and each innermost group holds the product of
/// `dims[D - 1..]` numbers (so a flat list of all values is accepted too).
fn read_data(
    c: &mut Cursor<'_>,
    file: &str,
    child: &str,
    names: &[&str],
    dims: &[usize],
) -> Result<Vec<f64>, BayesError> {
    let mut values = Vec::new();
    let mut stack: Vec<Group> = Vec::new();
    let mut done: Vec<Group> = Vec::new();
    let mut closed_outer = false;
    let err =
        |line: usize, m: String| BayesError::parse(file, line, format!("data of `{child}`: {m}"));
    loop {
        let t = c.next()?;
        let punct = !t.quoted;
        match t.text.as_str() {
            "(" if punct => {
                if closed_outer {
                    return Err(err(
                        t.line,
                        "a second outer `(` group (misnested parentheses)".into(),
                    ));
                }
                if let Some(top) = stack.last_mut() {
                    top.groups += 1;
                }
                stack.push(Group {
                    line: t.line,
                    depth: stack.len() + 1,
                    numbers: 0,
                    groups: 0,
                });
            }
            ")" if punct => {
                let g = stack
                    .pop()
                    .ok_or_else(|| err(t.line, "`)` without a matching `(`".into()))?;
                if stack.is_empty() {
                    closed_outer = true;
                }
                done.push(g);
            }
            ";" if punct => {
                if let Some(open) = stack.last() {
                    return Err(err(
                        t.line,
                        format!("the `(` of line {} is not closed before `;`", open.line),
                    ));
                }
                if !closed_outer {
                    return Err(err(t.line, "expected a `( ... )` table".into()));
                }
                break;
            }
            "{" | "}" | "=" | "|" | "[" | "]" | "," if punct => {
                return Err(err(
                    t.line,
                    format!("unexpected `{}` (unbalanced parentheses?)", t.text),
                ));
            }
            _ => {
                let v = t.text.parse::<f64>().map_err(|_| {
                    BayesError::parse(
                        file,
                        t.line,
                        format!("expected a number, found `{}`", t.text),
                    )
                })?;
                let top = stack.last_mut().ok_or_else(|| {
                    err(
                        t.line,
                        format!("number `{}` outside the parentheses", t.text),
                    )
                })?;
                top.numbers += 1;
                values.push(v);
            }
        }
    }
    let depth = done.iter().map(|g| g.depth).max().unwrap_or(1);
    if depth > dims.len() {
        return Err(err(
            done.iter()
                .find(|g| g.depth == depth)
                .map_or(c.line(), |g| g.line),
            format!(
                "{depth} levels of parentheses, but the potential has only {} variables",
                dims.len()
            ),
        ));
    }
    let leaf: usize = dims[depth - 1..]
        .iter()
        .try_fold(1usize, |a, &k| a.checked_mul(k))
        .unwrap_or(usize::MAX);
    for g in &done {
        if g.numbers > 0 && g.groups > 0 {
            return Err(err(
                g.line,
                "a group mixes numbers and `(` groups (misnested parentheses)".into(),
            ));
        }
        if g.depth < depth {
            if g.groups != dims[g.depth - 1] {
                return Err(err(
                    g.line,
                    format!(
                        "a group at level {} holds {} groups, expected {} (the states of `{}`); misnested parentheses",
                        g.depth,
                        g.groups,
                        dims[g.depth - 1],
                        names[g.depth - 1]
                    ),
                ));
            }
        } else if g.numbers != leaf {
            return Err(err(
                g.line,
                format!(
                    "an innermost group holds {} numbers, expected {leaf} (the joint states of `{}`)",
                    g.numbers,
                    names[depth - 1..].join("`, `")
                ),
            ));
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_data() -> Result<(), BayesError> {
        let text = "net\n{\n}\nnode C\n{\n  states = (\"s0\" \"s1\");\n}\nnode F\n{\n  states = (\"s0\" \"s1\");\n  label = \"f\";\n}\npotential ( C )\n{\n  data = ( 0.6 0.4 );\n}\npotential ( F | C )\n{\n  data = ( ( 0.9 0.1 ) ( 0.2 0.8 ) ); % comment\n}\n";
        let net = parse_hugin_net(text, "t.net")?;
        assert!((net.prob(1, &[1], 0) - 0.2).abs() < 1e-12);
        assert!(matches!(
            parse_hugin_net(&text.replace("0.2 0.8", "0.2 x"), "t.net"),
            Err(BayesError::Parse { line: 19, .. })
        ));
        Ok(())
    }
}
