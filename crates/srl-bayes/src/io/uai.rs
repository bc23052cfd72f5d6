//! The UAI inference-competition model format (`MARKOV` and `BAYES` preambles).

use std::path::Path;

use super::read_text;
use crate::error::BayesError;
use crate::factor::Factor;
use crate::network::{BayesianNetwork, Cpt, Variable};

/// The preamble keyword of a UAI file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UaiNetworkType {
    /// `BAYES`: one conditional table per variable.
    Bayes,
    /// `MARKOV`: arbitrary non-negative factors.
    Markov,
}

/// A parsed UAI model: variable cardinalities and factors (scopes as written, tables
/// row-major with the last scope variable fastest, as the format specifies).
#[derive(Clone, Debug, PartialEq)]
pub struct UaiModel {
    /// The preamble keyword.
    pub network_type: UaiNetworkType,
    /// Cardinality of each variable (variables are numbered from 0).
    pub cardinalities: Vec<usize>,
    /// The factors, in file order.
    pub factors: Vec<Factor>,
}

/// Reads a UAI model file.
///
/// # Errors
/// [`BayesError::Io`] if unreadable; otherwise as [`parse_uai`].
pub fn read_uai(path: &Path) -> Result<UaiModel, BayesError> {
    let text = read_text(path)?;
    parse_uai(&text, &path.display().to_string())
}

/// Parses UAI text: the preamble (`MARKOV` or `BAYES`, variable count, cardinalities,
/// factor count, one scope line per factor) then each factor's table (entry count, values).
///
/// # Errors
/// [`BayesError::Parse`] with the file and 1-based line for a bad token, a wrong count, a
/// model of no variables, an out-of-range variable or a bad table (also one of more than
/// [`super::MAX_TABLE_ENTRIES`] entries).
pub fn parse_uai(text: &str, file: &str) -> Result<UaiModel, BayesError> {
    let mut toks = text
        .lines()
        .enumerate()
        .flat_map(|(i, l)| l.split_whitespace().map(move |w| (w, i + 1)))
        .peekable();
    let mut last_line = 1;
    let mut next = |what: &str| -> Result<(String, usize), BayesError> {
        match toks.next() {
            Some((w, l)) => {
                last_line = l;
                Ok((w.to_string(), l))
            }
            None => Err(BayesError::parse(
                file,
                last_line,
                format!("unexpected end of file, expected {what}"),
            )),
        }
    };
    let int = |(w, l): (String, usize)| -> Result<usize, BayesError> {
        w.parse::<usize>().map_err(|_| {
            BayesError::parse(
                file,
                l,
                format!("expected a non-negative integer, found `{w}`"),
            )
        })
    };
    let (kind, l) = next("the preamble")?;
    let network_type = match kind.as_str() {
        "BAYES" => UaiNetworkType::Bayes,
        "MARKOV" => UaiNetworkType::Markov,
        _ => {
            return Err(BayesError::parse(
                file,
                l,
                format!("expected MARKOV or BAYES, found `{kind}`"),
            ));
        }
    };
    let (w, l) = next("the variable count")?;
    let n = int((w, l))?;
    if n == 0 {
        return Err(BayesError::parse(file, l, "no variables (an empty model)"));
    }
    // Capacities are capped: a count read from the file is not trusted for allocation.
    let mut cardinalities = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        let t = next("a cardinality")?;
        let line = t.1;
        let c = int(t)?;
        if c == 0 {
            return Err(BayesError::parse(file, line, "cardinality 0"));
        }
        cardinalities.push(c);
    }
    let m = int(next("the factor count")?)?;
    let mut scopes = Vec::with_capacity(m.min(1 << 16));
    for _ in 0..m {
        let arity = int(next("a scope size")?)?;
        let mut scope = Vec::with_capacity(arity.min(64));
        for _ in 0..arity {
            let t = next("a variable id")?;
            let line = t.1;
            let v = int(t)?;
            if v >= n {
                return Err(BayesError::parse(
                    file,
                    line,
                    format!("variable {v} out of range"),
                ));
            }
            scope.push(v);
        }
        scopes.push(scope);
    }
    let mut factors = Vec::with_capacity(m);
    for scope in scopes {
        let t = next("a table size")?;
        let line = t.1;
        let size = int(t)?;
        let cards: Vec<usize> = scope.iter().map(|&v| cardinalities[v]).collect();
        if super::table_size(&cards, 1) != Some(size) {
            return Err(BayesError::parse(
                file,
                line,
                format!(
                    "table size {size} does not match its scope (or exceeds {} entries)",
                    super::MAX_TABLE_ENTRIES
                ),
            ));
        }
        let mut values = Vec::with_capacity(size.min(1 << 16));
        for _ in 0..size {
            let (w, l) = next("a table value")?;
            values.push(w.parse::<f64>().map_err(|_| {
                BayesError::parse(file, l, format!("expected a number, found `{w}`"))
            })?);
        }
        factors.push(
            Factor::new(scope, cards, values)
                .map_err(|e| BayesError::parse(file, line, e.to_string()))?,
        );
    }
    Ok(UaiModel {
        network_type,
        cardinalities,
        factors,
    })
}

impl UaiModel {
    /// Interprets the factors as the CPTs of a Bayesian network (variables named `v0`,
    /// `v1`, …, states `s0`, `s1`, …).
    ///
    /// Each factor must be a conditional table of exactly one variable: the standard `BAYES`
    /// convention puts the child **last** in the scope; files written column-major (e.g. by
    /// TensorInference.jl, whose `asia.uai` says `MARKOV` but holds CPTs with the child
    /// first) are accepted too. For each factor the child is the last scope variable if the
    /// table sums to 1 over it for every parent state (tolerance 1e-6), else the first one
    /// if that holds; each variable must be the child of exactly one factor.
    ///
    /// # Errors
    /// [`BayesError::InvalidNetwork`] if some factor is not a conditional table, a variable
    /// is the child of no factor or of two, or the result has a cycle.
    pub fn to_bayesian_network(&self) -> Result<BayesianNetwork, BayesError> {
        self.convert(false).map(|(net, _)| net)
    }

    /// As [`UaiModel::to_bayesian_network`], but a factor that is a conditional table of
    /// neither its first nor its last variable is taken as the table of its **last**
    /// variable (the `BAYES` convention) with every row divided by its sum. Returns the
    /// network and the number of rows rescaled (0 when every table was conditional).
    ///
    /// # Errors
    /// [`BayesError::InvalidNetwork`] if a variable is the child of no factor or of two,
    /// a row is all zero, or the result has a cycle.
    pub fn to_bayesian_network_normalized(&self) -> Result<(BayesianNetwork, usize), BayesError> {
        self.convert(true)
    }

    fn convert(&self, normalize: bool) -> Result<(BayesianNetwork, usize), BayesError> {
        let n = self.cardinalities.len();
        let name = |v: usize| format!("v{v}");
        let mut cpts: Vec<Option<Cpt>> = vec![None; n];
        let mut rescaled = 0usize;
        for (fi, f) in self.factors.iter().enumerate() {
            let vars = f.vars();
            if vars.is_empty() {
                return Err(BayesError::network(format!(
                    "factor {fi} has an empty scope"
                )));
            }
            let mut candidates = vec![vars.len() - 1];
            if vars.len() > 1 {
                candidates.push(0);
            }
            let mut chosen = None;
            let mut first_bad: Option<(usize, f64)> = None;
            for &pos in &candidates {
                let child = vars[pos];
                let mut order: Vec<usize> = vars.iter().copied().filter(|&v| v != child).collect();
                order.push(child);
                let g = f.permute(&order)?;
                let k = self.cardinalities[child];
                let bad = g
                    .values()
                    .chunks(k)
                    .enumerate()
                    .find(|(_, r)| (r.iter().sum::<f64>() - 1.0).abs() >= 1e-6)
                    .map(|(i, r)| (i, r.iter().sum::<f64>()));
                match bad {
                    None => {
                        chosen = Some((
                            child,
                            order[..order.len() - 1].to_vec(),
                            g.values().to_vec(),
                        ));
                        break;
                    }
                    Some(b) => {
                        if first_bad.is_none() {
                            first_bad = Some(b);
                        }
                    }
                }
            }
            if chosen.is_none() && normalize {
                let child = vars[vars.len() - 1];
                let k = self.cardinalities[child];
                let mut probs = f.values().to_vec();
                for row in probs.chunks_mut(k) {
                    let sum: f64 = row.iter().sum();
                    if (sum - 1.0).abs() >= 1e-6 && sum > 0.0 {
                        let max = row.iter().copied().fold(0.0, f64::max);
                        row.iter_mut().for_each(|x| *x /= max);
                        let sum: f64 = row.iter().sum();
                        row.iter_mut().for_each(|x| *x /= sum);
                        rescaled += 1;
                    }
                }
                chosen = Some((child, vars[..vars.len() - 1].to_vec(), probs));
            }
            let (child, parents, probs) = chosen.ok_or_else(|| {
                let child = vars[vars.len() - 1];
                let parents = &vars[..vars.len() - 1];
                let (row, sum) = first_bad.unwrap_or((0, f64::NAN));
                let mut rest = row;
                let mut parts = Vec::new();
                for &p in parents.iter().rev() {
                    let k = self.cardinalities[p].max(1);
                    parts.push(format!("{} = s{}", name(p), rest % k));
                    rest /= k;
                }
                parts.reverse();
                BayesError::network(format!(
                    "factor {fi} is not a conditional table of its first or last variable: \
                     the CPT of `{}` has a row ({}) that sums to {sum}, not 1 \
                     (normalise it, e.g. `srl trim --normalize`)",
                    name(child),
                    if parts.is_empty() {
                        "the root".to_string()
                    } else {
                        parts.join(", ")
                    }
                ))
            })?;
            if cpts[child].is_some() {
                return Err(BayesError::network(format!(
                    "variable `{}` is the child of two factors",
                    name(child)
                )));
            }
            cpts[child] = Some(Cpt { parents, probs });
        }
        let cpts = cpts
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                c.ok_or_else(|| {
                    BayesError::network(format!("variable `v{i}` has no conditional table"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let variables = self
            .cardinalities
            .iter()
            .enumerate()
            .map(|(i, &k)| Variable::numbered(format!("v{i}"), k))
            .collect();
        BayesianNetwork::new(variables, cpts).map(|net| (net, rescaled))
    }
}
