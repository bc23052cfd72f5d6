//! Exact inference by variable elimination, and a brute-force enumeration oracle.

use crate::error::BayesError;
use crate::factor::{Factor, checked_size};
use crate::network::BayesianNetwork;

/// Variable elimination (Zhang & Poole 1994; Darwiche 2009, ch. 6) with a greedy
/// min-size elimination order and barren-node pruning (only the ancestors of the query and
/// evidence variables take part).
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `max_entries` | 2^26 | largest intermediate table allowed | ≥ 1 |
///
/// ```
/// use srl_bayes::{BayesianNetwork, Cpt, Variable, VariableElimination};
/// let net = BayesianNetwork::new(
///     vec![Variable::numbered("rain", 2), Variable::numbered("wet", 2)],
///     vec![
///         Cpt { parents: vec![], probs: vec![0.2, 0.8] },
///         Cpt { parents: vec![0], probs: vec![0.9, 0.1, 0.1, 0.9] },
///     ],
/// )?;
/// let post = VariableElimination::default().posterior(&net, 0, &[(1, 0)])?;
/// assert!((post[0] - 0.18 / (0.18 + 0.08)).abs() < 1e-12);
/// # Ok::<(), srl_bayes::BayesError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VariableElimination {
    /// The largest intermediate factor (number of entries) allowed before giving up with
    /// [`BayesError::TooLarge`].
    pub max_entries: usize,
}

impl Default for VariableElimination {
    fn default() -> Self {
        Self {
            max_entries: 1 << 26,
        }
    }
}

impl VariableElimination {
    /// The unnormalised joint `Pr(query, evidence)` as a factor whose scope is `query` in
    /// the given order. Its total is `Pr(evidence)`.
    ///
    /// # Arguments
    /// - `query`: distinct variable ids (may be empty: the result is the scalar `Pr(e)`).
    /// - `evidence`: `(variable id, state)` pairs, disjoint from `query`.
    ///
    /// # Errors
    /// [`BayesError::InvalidQuery`] for out-of-range ids or states, duplicates, or overlap
    /// of query and evidence; [`BayesError::TooLarge`] if an intermediate factor would
    /// exceed `max_entries`.
    ///
    /// # Complexity
    /// Exponential in the induced width of the chosen order, linear in network size.
    pub fn joint(
        &self,
        net: &BayesianNetwork,
        query: &[usize],
        evidence: &[(usize, usize)],
    ) -> Result<Factor, BayesError> {
        check_query(net, query, evidence)?;
        let mut relevant: Vec<usize> = query.to_vec();
        relevant.extend(evidence.iter().map(|e| e.0));
        let keep = net.ancestral_set(&relevant);
        let mut factors: Vec<Factor> = (0..net.len())
            .filter(|&v| keep[v])
            .map(|v| {
                let mut f = net.factor(v);
                for &(ev, s) in evidence {
                    f = f.reduce(ev, s);
                }
                f
            })
            .collect();
        factors.retain(|f| !f.vars().is_empty() || f.values()[0] != 1.0);
        let to_eliminate: Vec<usize> = (0..net.len())
            .filter(|&v| keep[v] && !query.contains(&v) && !evidence.iter().any(|e| e.0 == v))
            .collect();
        let f = eliminate(
            factors,
            &to_eliminate,
            &net.cardinalities(),
            self.max_entries,
        )?;
        // add any query variable that no factor mentions (cannot happen for BN CPTs, but
        // keeps the scope contract)
        let mut f = f;
        for &q in query {
            if !f.vars().contains(&q) {
                let c = net.cardinality(q);
                f = f.product(
                    &Factor::new(vec![q], vec![c], vec![1.0; c])?,
                    self.max_entries,
                )?;
            }
        }
        f.permute(query)
    }

    /// The posterior `Pr(var | evidence)` as a vector over `var`'s states.
    ///
    /// # Errors
    /// As [`VariableElimination::joint`], plus [`BayesError::ZeroProbabilityEvidence`].
    pub fn posterior(
        &self,
        net: &BayesianNetwork,
        var: usize,
        evidence: &[(usize, usize)],
    ) -> Result<Vec<f64>, BayesError> {
        let f = self.joint(net, &[var], evidence)?;
        let t = f.total();
        if t <= 0.0 {
            return Err(BayesError::ZeroProbabilityEvidence);
        }
        Ok(f.values().iter().map(|x| x / t).collect())
    }
}

fn check_query(
    net: &BayesianNetwork,
    query: &[usize],
    evidence: &[(usize, usize)],
) -> Result<(), BayesError> {
    for (k, &q) in query.iter().enumerate() {
        if q >= net.len() || query[..k].contains(&q) {
            return Err(BayesError::query(format!(
                "query variable {q} out of range or repeated"
            )));
        }
    }
    for (k, &(v, s)) in evidence.iter().enumerate() {
        if v >= net.len() || s >= net.cardinality(v) {
            return Err(BayesError::query(format!(
                "evidence ({v}, {s}) out of range"
            )));
        }
        if query.contains(&v) || evidence[..k].iter().any(|e| e.0 == v) {
            return Err(BayesError::query(format!(
                "evidence variable {v} repeated or queried"
            )));
        }
    }
    Ok(())
}

/// Sums the variables `eliminate_vars` out of the product of `factors`, choosing at each
/// step the variable whose elimination creates the smallest table (greedy min-size), and
/// returns the product of what remains.
///
/// # Arguments
/// - `cards[v]`: cardinality of variable `v` (every variable in any scope must be covered).
///
/// # Errors
/// [`BayesError::TooLarge`] if a product would exceed `max_entries`;
/// [`BayesError::InvalidNetwork`] on inconsistent cardinalities.
pub fn eliminate(
    mut factors: Vec<Factor>,
    eliminate_vars: &[usize],
    cards: &[usize],
    max_entries: usize,
) -> Result<Factor, BayesError> {
    let mut remaining: Vec<usize> = eliminate_vars.to_vec();
    while !remaining.is_empty() {
        // pick the variable with the smallest resulting scope
        let mut best = (usize::MAX, 0usize);
        for (k, &v) in remaining.iter().enumerate() {
            let mut scope: Vec<usize> = Vec::new();
            for f in factors.iter().filter(|f| f.vars().contains(&v)) {
                for &u in f.vars() {
                    if !scope.contains(&u) {
                        scope.push(u);
                    }
                }
            }
            let sc: Vec<usize> = scope.iter().map(|&u| cards[u]).collect();
            let size = checked_size(&sc, usize::MAX).unwrap_or(usize::MAX);
            if size < best.0 {
                best = (size, k);
            }
        }
        let v = remaining.swap_remove(best.1);
        let (with, without): (Vec<Factor>, Vec<Factor>) =
            factors.into_iter().partition(|f| f.vars().contains(&v));
        factors = without;
        if with.is_empty() {
            continue;
        }
        let mut prod = with[0].clone();
        for f in &with[1..] {
            prod = prod.product(f, max_entries)?;
        }
        factors.push(prod.sum_out(v));
    }
    let mut result = Factor::scalar(1.0);
    for f in &factors {
        result = result.product(f, max_entries)?;
    }
    Ok(result)
}

/// Brute-force oracle: the unnormalised joint `Pr(query, evidence)` by summing
/// [`BayesianNetwork::joint_weight`] over every full assignment. Scope = `query` in order.
///
/// # Errors
/// [`BayesError::InvalidQuery`] as in [`VariableElimination::joint`];
/// [`BayesError::TooLarge`] if the network has more than 2^22 joint states.
///
/// # Complexity
/// O(product of all cardinalities × network size). For tests on small networks.
pub fn enumerate_joint(
    net: &BayesianNetwork,
    query: &[usize],
    evidence: &[(usize, usize)],
) -> Result<Factor, BayesError> {
    check_query(net, query, evidence)?;
    let cards = net.cardinalities();
    let total = checked_size(&cards, 1 << 22)?;
    let qcards: Vec<usize> = query.iter().map(|&q| cards[q]).collect();
    let qsize: usize = qcards.iter().product();
    let mut values = vec![0.0; qsize];
    let mut a = vec![0usize; net.len()];
    for _ in 0..total {
        if evidence.iter().all(|&(v, s)| a[v] == s) {
            let mut idx = 0;
            for &q in query {
                idx = idx * cards[q] + a[q];
            }
            values[idx] += net.joint_weight(&a);
        }
        for k in (0..a.len()).rev() {
            a[k] += 1;
            if a[k] < cards[k] {
                break;
            }
            a[k] = 0;
        }
    }
    Factor::new(query.to_vec(), qcards, values)
}
