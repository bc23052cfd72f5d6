//! Discrete Bayesian networks: variables, conditional probability tables, validation.

use serde::{Deserialize, Serialize};

use crate::error::BayesError;
use crate::factor::Factor;

/// A discrete variable: a name and its state names (at least one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variable {
    /// The variable's name (unique in its network).
    pub name: String,
    /// The state names, in index order.
    pub states: Vec<String>,
}

impl Variable {
    /// A variable with states named `s0`, `s1`, ….
    #[must_use]
    pub fn numbered(name: impl Into<String>, cardinality: usize) -> Self {
        Self {
            name: name.into(),
            states: (0..cardinality).map(|s| format!("s{s}")).collect(),
        }
    }

    /// Number of states.
    #[must_use]
    pub fn cardinality(&self) -> usize {
        self.states.len()
    }
}

/// A conditional probability table `Pr(child | parents)`.
///
/// `probs` has one row per joint parent state (mixed radix over `parents` in the listed
/// order, **last parent fastest**), each row holding the child's states:
/// `probs[row * child_card + child_state]`. Root variables have one row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cpt {
    /// Parent variable ids.
    pub parents: Vec<usize>,
    /// The table, `rows × child cardinality`, rows as described above.
    pub probs: Vec<f64>,
}

/// A discrete Bayesian network: variables and one CPT each, over a directed acyclic graph.
///
/// Rows of a CPT are expected to sum to 1 but this is **not enforced** (only a row of
/// zeros, which is no distribution at all, is rejected): the TrimBN models
/// of Choi & Van den Broeck (2018) ship two rows that do not (see
/// [`BayesianNetwork::max_row_deviation`]); every computation in this crate treats the
/// network as a weighted model and normalises by the total weight where a probability is
/// needed.
///
/// ```
/// use srl_bayes::{BayesianNetwork, Cpt, Variable};
/// let net = BayesianNetwork::new(
///     vec![Variable::numbered("rain", 2), Variable::numbered("wet", 2)],
///     vec![
///         Cpt { parents: vec![], probs: vec![0.2, 0.8] },
///         Cpt { parents: vec![0], probs: vec![0.9, 0.1, 0.1, 0.9] },
///     ],
/// )?;
/// assert!((net.joint_weight(&[0, 0]) - 0.18).abs() < 1e-12);
/// # Ok::<(), srl_bayes::BayesError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BayesianNetwork {
    variables: Vec<Variable>,
    cpts: Vec<Cpt>,
    topo: Vec<usize>,
}

impl BayesianNetwork {
    /// Builds and validates a network.
    ///
    /// # Errors
    /// [`BayesError::InvalidNetwork`] if the CPT count differs from the variable count,
    /// names repeat, a variable has no states, a parent id is out of range or repeats, the
    /// graph has a cycle, a table has the wrong size, an entry is negative or not finite,
    /// or a row is all zero (the message names the variable and the parent states of the
    /// row).
    ///
    /// # Complexity
    /// O(total CPT size + edges).
    pub fn new(variables: Vec<Variable>, cpts: Vec<Cpt>) -> Result<Self, BayesError> {
        let n = variables.len();
        if cpts.len() != n {
            return Err(BayesError::network(format!(
                "{n} variables but {} CPTs",
                cpts.len()
            )));
        }
        let mut names = std::collections::HashSet::new();
        for v in &variables {
            if v.states.is_empty() {
                return Err(BayesError::network(format!(
                    "variable `{}` has no states",
                    v.name
                )));
            }
            if !names.insert(v.name.as_str()) {
                return Err(BayesError::network(format!(
                    "variable name `{}` repeats",
                    v.name
                )));
            }
        }
        for (i, c) in cpts.iter().enumerate() {
            let mut rows = 1usize;
            for (k, &p) in c.parents.iter().enumerate() {
                if p >= n || p == i || c.parents[..k].contains(&p) {
                    return Err(BayesError::network(format!(
                        "variable `{}` has an invalid parent id {p}",
                        variables[i].name
                    )));
                }
                rows = rows.saturating_mul(variables[p].cardinality());
            }
            let want = rows.saturating_mul(variables[i].cardinality());
            if c.probs.len() != want {
                return Err(BayesError::network(format!(
                    "CPT of `{}` has {} entries, expected {want}",
                    variables[i].name,
                    c.probs.len()
                )));
            }
            if let Some(x) = c.probs.iter().find(|x| !x.is_finite() || **x < 0.0) {
                return Err(BayesError::network(format!(
                    "CPT of `{}` has entry {x}, not a finite non-negative number",
                    variables[i].name
                )));
            }
            let k = variables[i].cardinality();
            if let Some(row) = c.probs.chunks(k).position(|r| r.iter().all(|&x| x == 0.0)) {
                return Err(BayesError::network(format!(
                    "CPT of `{}`: the row for {} is all zero (not a distribution)",
                    variables[i].name,
                    describe_row(&variables, &c.parents, row)
                )));
            }
        }
        // Kahn's algorithm
        let mut indeg: Vec<usize> = cpts.iter().map(|c| c.parents.len()).collect();
        let mut children = vec![Vec::new(); n];
        for (i, c) in cpts.iter().enumerate() {
            for &p in &c.parents {
                children[p].push(i);
            }
        }
        let mut stack: Vec<usize> = (0..n).rev().filter(|&i| indeg[i] == 0).collect();
        let mut topo = Vec::with_capacity(n);
        while let Some(v) = stack.pop() {
            topo.push(v);
            for &c in children[v].iter().rev() {
                indeg[c] -= 1;
                if indeg[c] == 0 {
                    stack.push(c);
                }
            }
        }
        if topo.len() != n {
            let mut on_cycle: Vec<&str> = (0..n)
                .filter(|&i| indeg[i] > 0)
                .map(|i| variables[i].name.as_str())
                .collect();
            on_cycle.truncate(10);
            return Err(BayesError::network(format!(
                "the graph has a directed cycle (through or below `{}`)",
                on_cycle.join("`, `")
            )));
        }
        Ok(Self {
            variables,
            cpts,
            topo,
        })
    }

    /// Number of variables.
    #[must_use]
    pub fn len(&self) -> usize {
        self.variables.len()
    }

    /// Whether the network has no variables.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.variables.is_empty()
    }

    /// All variables, indexed by id.
    #[must_use]
    pub fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// Variable `id`.
    ///
    /// # Panics
    /// If `id >= self.len()`.
    #[must_use]
    pub fn variable(&self, id: usize) -> &Variable {
        &self.variables[id]
    }

    /// Number of states of variable `id`.
    ///
    /// # Panics
    /// If `id >= self.len()`.
    #[must_use]
    pub fn cardinality(&self, id: usize) -> usize {
        self.variables[id].cardinality()
    }

    /// All cardinalities, indexed by id.
    #[must_use]
    pub fn cardinalities(&self) -> Vec<usize> {
        self.variables.iter().map(Variable::cardinality).collect()
    }

    /// The id of the variable called `name`.
    ///
    /// # Errors
    /// [`BayesError::UnknownVariable`] if there is none.
    pub fn id(&self, name: &str) -> Result<usize, BayesError> {
        self.variables
            .iter()
            .position(|v| v.name == name)
            .ok_or_else(|| BayesError::UnknownVariable {
                name: name.to_string(),
            })
    }

    /// The CPT of variable `id`.
    ///
    /// # Panics
    /// If `id >= self.len()`.
    #[must_use]
    pub fn cpt(&self, id: usize) -> &Cpt {
        &self.cpts[id]
    }

    /// Parent ids of variable `id`.
    ///
    /// # Panics
    /// If `id >= self.len()`.
    #[must_use]
    pub fn parents(&self, id: usize) -> &[usize] {
        &self.cpts[id].parents
    }

    /// Child ids of variable `id`, ascending.
    #[must_use]
    pub fn children(&self, id: usize) -> Vec<usize> {
        (0..self.len())
            .filter(|&c| self.cpts[c].parents.contains(&id))
            .collect()
    }

    /// Variables without parents, ascending.
    #[must_use]
    pub fn roots(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|&c| self.cpts[c].parents.is_empty())
            .collect()
    }

    /// Variables without children, ascending.
    #[must_use]
    pub fn leaves(&self) -> Vec<usize> {
        let mut has_child = vec![false; self.len()];
        for c in &self.cpts {
            for &p in &c.parents {
                has_child[p] = true;
            }
        }
        (0..self.len()).filter(|&i| !has_child[i]).collect()
    }

    /// A topological order (parents before children).
    #[must_use]
    pub fn topological_order(&self) -> &[usize] {
        &self.topo
    }

    /// `Pr(var = state | parents = parent_states)` (`parent_states` parallel to
    /// [`BayesianNetwork::parents`]).
    ///
    /// # Panics
    /// If an index is out of range.
    #[must_use]
    pub fn prob(&self, var: usize, parent_states: &[usize], state: usize) -> f64 {
        let c = &self.cpts[var];
        let mut row = 0;
        for (k, &p) in c.parents.iter().enumerate() {
            row = row * self.cardinality(p) + parent_states[k];
        }
        c.probs[row * self.cardinality(var) + state]
    }

    /// The product of all CPT entries at a full assignment (`assignment[id]` = state of
    /// variable `id`): the joint probability when every row sums to 1.
    ///
    /// # Panics
    /// If `assignment` has the wrong length or a state is out of range.
    #[must_use]
    pub fn joint_weight(&self, assignment: &[usize]) -> f64 {
        assert_eq!(assignment.len(), self.len(), "assignment length");
        let mut w = 1.0;
        for (i, c) in self.cpts.iter().enumerate() {
            let mut row = 0;
            for &p in &c.parents {
                row = row * self.cardinality(p) + assignment[p];
            }
            w *= c.probs[row * self.cardinality(i) + assignment[i]];
        }
        w
    }

    /// The largest `|row sum − 1|` over all CPT rows (0 for a proper network).
    #[must_use]
    pub fn max_row_deviation(&self) -> f64 {
        let mut worst: f64 = 0.0;
        for (i, c) in self.cpts.iter().enumerate() {
            let k = self.cardinality(i);
            for row in c.probs.chunks(k) {
                worst = worst.max((row.iter().sum::<f64>() - 1.0).abs());
            }
        }
        worst
    }

    /// The first CPT row (in variable order) whose sum differs from 1 by more than `tol`,
    /// as `(variable id, row, sum)`; `None` when every row sums to 1 within `tol`.
    /// Rows are numbered as in [`Cpt`] (last parent fastest).
    #[must_use]
    pub fn first_unnormalized_row(&self, tol: f64) -> Option<(usize, usize, f64)> {
        self.cpts.iter().enumerate().find_map(|(i, c)| {
            let k = self.cardinality(i);
            c.probs.chunks(k).enumerate().find_map(|(r, row)| {
                let sum: f64 = row.iter().sum();
                ((sum - 1.0).abs() > tol).then_some((i, r, sum))
            })
        })
    }

    /// Number of CPT rows whose sum differs from 1 by more than `tol`.
    #[must_use]
    pub fn unnormalized_rows(&self, tol: f64) -> usize {
        self.cpts
            .iter()
            .enumerate()
            .map(|(i, c)| {
                c.probs
                    .chunks(self.cardinality(i))
                    .filter(|row| (row.iter().sum::<f64>() - 1.0).abs() > tol)
                    .count()
            })
            .sum()
    }

    /// Checks that every CPT row sums to 1 within `tol` (e.g. `1e-6`).
    ///
    /// # Errors
    /// [`BayesError::InvalidNetwork`] naming the variable, the parent states of the first
    /// bad row and its sum.
    pub fn check_row_sums(&self, tol: f64) -> Result<(), BayesError> {
        match self.first_unnormalized_row(tol) {
            None => Ok(()),
            Some((v, r, sum)) => Err(BayesError::network(format!(
                "CPT of `{}`, {}: the row sums to {sum}, not 1 (tolerance {tol}; {} such rows)",
                self.variables[v].name,
                self.describe_row(v, r),
                self.unnormalized_rows(tol)
            ))),
        }
    }

    /// Divides every CPT row whose sum differs from 1 by more than `tol` by its sum (rows
    /// within `tol` are left bit-identical) and returns how many rows changed.
    ///
    /// Cannot fail: rows are non-negative, finite and not all zero (checked by
    /// [`BayesianNetwork::new`]); a row whose sum overflows to infinity is first scaled by
    /// its largest entry, so the result is finite.
    pub fn normalize_rows(&mut self, tol: f64) -> usize {
        let mut changed = 0;
        for (i, c) in self.cpts.iter_mut().enumerate() {
            let k = self.variables[i].cardinality().max(1);
            for row in c.probs.chunks_mut(k) {
                let sum: f64 = row.iter().sum();
                if (sum - 1.0).abs() <= tol {
                    continue;
                }
                changed += 1;
                if !sum.is_finite() {
                    let max = row.iter().copied().fold(0.0, f64::max);
                    row.iter_mut().for_each(|x| *x /= max);
                }
                let sum: f64 = row.iter().sum();
                row.iter_mut().for_each(|x| *x /= sum);
            }
        }
        changed
    }

    /// Row `row` of variable `var`'s CPT as text: `row 3 (A = a1, B = b0)` (the parents'
    /// states, last parent fastest), or `the root (no parents)`.
    ///
    /// # Panics
    /// If `var` or `row` is out of range.
    #[must_use]
    pub fn describe_row(&self, var: usize, row: usize) -> String {
        describe_row(&self.variables, &self.cpts[var].parents, row)
    }

    /// The CPT of variable `id` as a factor over `parents..., id` (child last).
    ///
    /// # Panics
    /// If `id >= self.len()`.
    #[must_use]
    pub fn factor(&self, id: usize) -> Factor {
        let c = &self.cpts[id];
        let mut vars = c.parents.clone();
        vars.push(id);
        let cards: Vec<usize> = vars.iter().map(|&v| self.cardinality(v)).collect();
        // validated in `new`, so this cannot fail
        Factor::new(vars, cards, c.probs.clone()).unwrap_or_else(|_| Factor::scalar(0.0))
    }

    /// The ancestors of `vars` together with `vars` themselves, as a membership mask.
    #[must_use]
    pub fn ancestral_set(&self, vars: &[usize]) -> Vec<bool> {
        let mut keep = vec![false; self.len()];
        let mut stack: Vec<usize> = vars.to_vec();
        while let Some(v) = stack.pop() {
            if v < self.len() && !keep[v] {
                keep[v] = true;
                stack.extend_from_slice(&self.cpts[v].parents);
            }
        }
        keep
    }
}

/// `row` of a CPT with `parents` as text: `A = a1, B = b0` (the parents' states, last
/// parent fastest), or `the root` when there are no parents.
pub(crate) fn describe_row(variables: &[Variable], parents: &[usize], row: usize) -> String {
    if parents.is_empty() {
        return "the root (no parents)".to_string();
    }
    let mut rest = row;
    let mut parts = Vec::with_capacity(parents.len());
    for &p in parents.iter().rev() {
        let k = variables[p].cardinality().max(1);
        let state = &variables[p].states[rest % k];
        parts.push(format!("{} = {state}", variables[p].name));
        rest /= k;
    }
    parts.reverse();
    format!("row {row} ({})", parts.join(", "))
}
