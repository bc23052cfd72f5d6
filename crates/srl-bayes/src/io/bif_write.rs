//! Writing a network as BIF 0.15 text that [`super::parse_bif`] (and bnlearn / pgmpy) read
//! back.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::BayesError;
use crate::network::BayesianNetwork;

/// Whether `name` can be written bare: non-empty, and only characters that the BIF
/// tokenizer keeps inside one word and that cannot open a comment.
fn is_bare(name: &str) -> bool {
    !name.is_empty()
        && !name.contains("//")
        && !name.contains("/*")
        && name
            .chars()
            .all(|c| !c.is_whitespace() && !"{}()[];,|\"".contains(c))
}

/// `name` as a BIF token: bare when possible, else in double quotes.
///
/// # Errors
/// [`BayesError::InvalidNetwork`] if `name` contains a double quote (BIF strings have no
/// escape, so such a name cannot be written).
fn token(name: &str, what: &str) -> Result<String, BayesError> {
    if name.contains('"') {
        return Err(BayesError::network(format!(
            "{what} `{name}` contains a double quote, which BIF cannot write"
        )));
    }
    Ok(if is_bare(name) {
        name.to_string()
    } else {
        format!("\"{name}\"")
    })
}

/// The network as BIF text: a `network` block named `name`, one `variable` block per
/// variable in id order (`type discrete [ k ] { s1, s2, ... };`), then one `probability`
/// block per variable in id order: `table v1, ...;` for a root, one `(p1, p2) v1, ...;`
/// line per joint parent state (last parent fastest) otherwise. Names that are not plain
/// words are quoted; probabilities are written with Rust's shortest round-trip formatting,
/// so [`super::parse_bif`] gives back a network equal to `net` (same variables, state
/// names, parent order and bit-identical tables).
///
/// # Errors
/// [`BayesError::InvalidNetwork`] if a variable or state name contains a double quote,
/// or `name` does.
///
/// # Complexity
/// O(total CPT size × number of parents).
///
/// # Examples
/// ```
/// use srl_bayes::io::{parse_bif, to_bif_string};
/// use srl_bayes::{BayesianNetwork, Cpt, Variable};
/// let net = BayesianNetwork::new(
///     vec![Variable::numbered("rain", 2), Variable::numbered("wet grass", 2)],
///     vec![
///         Cpt { parents: vec![], probs: vec![0.2, 0.8] },
///         Cpt { parents: vec![0], probs: vec![0.9, 0.1, 0.1, 0.9] },
///     ],
/// )?;
/// let text = to_bif_string(&net, "garden")?;
/// assert_eq!(parse_bif(&text, "garden.bif")?, net);
/// # Ok::<(), srl_bayes::BayesError>(())
/// ```
pub fn to_bif_string(net: &BayesianNetwork, name: &str) -> Result<String, BayesError> {
    let mut out = String::new();
    // `write!` to a String cannot fail.
    let _ = writeln!(out, "network {} {{\n}}", token(name, "network name")?);
    let names: Vec<String> = net
        .variables()
        .iter()
        .map(|v| token(&v.name, "variable name"))
        .collect::<Result<_, _>>()?;
    let mut states: Vec<Vec<String>> = Vec::with_capacity(net.len());
    for (i, v) in net.variables().iter().enumerate() {
        let s: Vec<String> = v
            .states
            .iter()
            .map(|s| token(s, "state name"))
            .collect::<Result<_, _>>()?;
        let _ = writeln!(
            out,
            "variable {} {{\n  type discrete [ {} ] {{ {} }};\n}}",
            names[i],
            s.len(),
            s.join(", ")
        );
        states.push(s);
    }
    for i in 0..net.len() {
        let cpt = net.cpt(i);
        let k = net.cardinality(i);
        let row_text = |row: &[f64]| {
            row.iter()
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if cpt.parents.is_empty() {
            let _ = writeln!(
                out,
                "probability ( {} ) {{\n  table {};\n}}",
                names[i],
                row_text(&cpt.probs)
            );
            continue;
        }
        let parents: Vec<&str> = cpt.parents.iter().map(|&p| names[p].as_str()).collect();
        let _ = writeln!(
            out,
            "probability ( {} | {} ) {{",
            names[i],
            parents.join(", ")
        );
        let pcards: Vec<usize> = cpt.parents.iter().map(|&p| net.cardinality(p)).collect();
        let mut idx = vec![0usize; pcards.len()];
        for row in cpt.probs.chunks(k) {
            let label: Vec<&str> = cpt
                .parents
                .iter()
                .zip(&idx)
                .map(|(&p, &s)| states[p][s].as_str())
                .collect();
            let _ = writeln!(out, "  ({}) {};", label.join(", "), row_text(row));
            // next joint parent state, last parent fastest
            for j in (0..idx.len()).rev() {
                idx[j] += 1;
                if idx[j] < pcards[j] {
                    break;
                }
                idx[j] = 0;
            }
        }
        out.push_str("}\n");
    }
    Ok(out)
}

/// Writes `net` as BIF (see [`to_bif_string`]) to `path`, naming the network after the
/// file stem.
///
/// # Errors
/// [`BayesError::InvalidNetwork`] as [`to_bif_string`]; [`BayesError::Io`] naming `path`
/// if the file cannot be written.
pub fn write_bif(net: &BayesianNetwork, path: &Path) -> Result<(), BayesError> {
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .map(|s| s.trim_end_matches(".bif"))
        .filter(|s| !s.contains('"'))
        .unwrap_or("network");
    let text = to_bif_string(net, name)?;
    std::fs::write(path, text).map_err(|source| BayesError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::parse_bif;
    use crate::network::{Cpt, Variable};

    #[test]
    fn odd_names_are_quoted_and_read_back() -> Result<(), BayesError> {
        let net = BayesianNetwork::new(
            vec![
                Variable {
                    name: "a b".into(),
                    states: vec!["x,y".into(), "".into(), ">=7.5".into()],
                },
                Variable {
                    name: "table".into(),
                    states: vec!["(".into(), "//c".into()],
                },
            ],
            vec![
                Cpt {
                    parents: vec![],
                    probs: vec![0.1, 0.2, 0.7],
                },
                Cpt {
                    parents: vec![0],
                    probs: vec![1e-300, 1.0, 0.5, 0.5, 1.0 / 3.0, 2.0 / 3.0],
                },
            ],
        )?;
        let text = to_bif_string(&net, "odd")?;
        assert_eq!(parse_bif(&text, "odd.bif")?, net);
        let bad = BayesianNetwork::new(
            vec![Variable {
                name: "q\"".into(),
                states: vec!["s".into()],
            }],
            vec![Cpt {
                parents: vec![],
                probs: vec![1.0],
            }],
        )?;
        assert!(matches!(
            to_bif_string(&bad, "x"),
            Err(BayesError::InvalidNetwork { .. })
        ));
        Ok(())
    }
}
