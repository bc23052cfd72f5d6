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
                let name = c.word()?;
                let line = c.line();
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
                        states = Some(s);
                    } else {
                        c.skip_statement()?;
                    }
                }
                let states = states.ok_or_else(|| {
                    BayesError::parse(file, line, format!("node `{name}` has no states"))
                })?;
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
                        let mut v = Vec::new();
                        loop {
                            let t = c.next()?;
                            match t.text.as_str() {
                                "(" | ")" if !t.quoted => {}
                                ";" if !t.quoted => break,
                                _ => v.push(t.text.parse::<f64>().map_err(|_| {
                                    BayesError::parse(
                                        file,
                                        t.line,
                                        format!("expected a number, found `{}`", t.text),
                                    )
                                })?),
                            }
                        }
                        data = Some(v);
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
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    BayesianNetwork::new(variables, cpts)
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
