//! First-order regression trees (TILDE-style, Blockeel & De Raedt 1998), grown the way
//! RFGB's FITRELREGRESSIONTREE grows them (Natarajan et al. 2012; Yang et al. 2014,
//! Sec. III): each inner node tests a conjunction of literals produced by the mode
//! declarations, with variables bound along the path from the root; the split score is
//! the squared error of the regression values around each branch's mean; leaves hold the
//! mean value; at most `max_leaves` leaves, expanded best-first.
//!
//! Evaluation works on *binding tables*: each node keeps, per example, the substitutions
//! of the path's variables that satisfy the path's true-branch literals. A candidate test
//! is checked by a depth-first join from each substitution using the argument-position
//! indexes of [`Relation`], stopping at the first solution; no memory is
//! allocated per example. Candidate tests are scored in parallel with rayon.

use std::fmt;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::BoostError;
use crate::logic::{ArgKind, Background, Database, Examples, Relation};

/// A term of a learned literal: a clause variable (0.. = the head's arguments, then
/// variables introduced along the path) or a named constant.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Term {
    /// Variable number `v` (printed `A`, `B`, ...).
    Var(u16),
    /// A constant, by name.
    Const(String),
}

/// A literal `pred(t1, ..., tn)` of a learned node test.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Literal {
    /// Predicate name.
    pub pred: String,
    /// Arguments.
    pub args: Vec<Term>,
}

/// A node of a [`RelationalRegressionTree`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TreeNode {
    /// A leaf with its regression value.
    Leaf {
        /// Mean (weighted) target value of the training examples that reached it.
        value: f64,
        /// Number of training examples that reached it.
        n_examples: usize,
    },
    /// An inner node: if the conjunction `test` (with the path's variables bound) has a
    /// solution, go to `yes`, else to `no`. New variables of `test` are in scope below
    /// `yes` only.
    Split {
        /// The conjunction tested.
        test: Vec<Literal>,
        /// Index of the child for examples satisfying `test`.
        yes: usize,
        /// Index of the child for the others.
        no: usize,
        /// Reduction of squared error obtained by the split.
        gain: f64,
    },
}

/// What a tree whose root admits no split returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnsplitRoot {
    /// A leaf returning 0: the tree adds nothing to ψ (BoostSRL's behaviour: a
    /// boosting iteration that learns no clause contributes no regression value).
    Zero,
    /// A leaf returning the weighted mean target (the plain regression-tree answer).
    Mean,
}

/// Hyperparameters of [`RelationalRegressionTree`] induction.
///
/// | field | [`default`](Self::default) = [`boostsrl`](Self::boostsrl) | [`two_literal`](Self::two_literal) | meaning | valid range |
/// |---|---|---|---|---|
/// | `max_leaves` | 13 | 8 | L, leaves expanded best-first (BoostSRL: at most `maxNumberOfClauses` = `numOfClauses` inner nodes, so L = 12 + 1) | ≥ 1 |
/// | `max_depth` | 5 | 3 | tests on a root-leaf path (BoostSRL `maxTreeDepthInNodes`, `treeDepth`) | ≥ 0 |
/// | `max_node_literals` | 1 | 2 | literals in one node test (BoostSRL `maxNumberOfLiteralsAtAnInteriorNode`, `nodeSize`) | 1 or 2 |
/// | `max_clause_length` | 12 | 6 | true-branch literals on a path (clause body length; BoostSRL `maxTreeDepthInLiterals`, `clauseLength`) | ≥ 1 |
/// | `min_leaf_examples` | 2 | 2 | examples each branch of a split must receive | ≥ 1 |
/// | `max_acceptable_node_score` | 0.003 | 0 | a non-root node whose weighted variance per unit weight is ≤ this stays a leaf (BoostSRL `maxAcceptableNodeScoreToStop`) | finite, ≥ 0 |
/// | `unsplit_root` | `Zero` | `Zero` | value of a tree whose root cannot be split | [`UnsplitRoot`] |
/// | `max_bindings_per_example` | 10 000 | 10 000 | substitutions kept per example in a true branch | ≥ 1 |
/// | `outputs_bind_existing` | true | true | a `-type` argument may also reuse a variable of that type | bool |
/// | `seed_sampling` | `None` | `None` | BoostSRL's seed-based candidate sampling ([`SeedSampling`]) | seeds ≥ 1 |
///
/// A two-literal test is a literal introducing new variables followed by one that uses
/// at least one of them (a bridger, as BoostSRL's lookahead). A literal of a
/// `bridger:` predicate is never tried alone and is always followed by one more literal,
/// even when `max_node_literals` is 1: BoostSRL does not count bridgers towards a
/// node's literals (`maxFreeBridgersInBody`). When more than
/// `max_bindings_per_example` substitutions satisfy an example's path, only the first
/// ones are kept (reported by [`RelationalRegressionTree::truncated_examples`]).
///
/// BoostSRL's `maxNodesToConsider` (10) has no counterpart here: it bounds the ILP
/// search nodes BoostSRL expands while looking for one node's clause, whereas this
/// learner scores every candidate test of a node exhaustively.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TreeParams {
    /// Maximum number of leaves L.
    pub max_leaves: usize,
    /// Maximum number of tests from root to leaf.
    pub max_depth: usize,
    /// Maximum literals in one node test (1 or 2).
    pub max_node_literals: usize,
    /// Maximum number of true-branch literals on a path.
    pub max_clause_length: usize,
    /// Minimum examples per branch.
    pub min_leaf_examples: usize,
    /// BoostSRL's `maxAcceptableNodeScoreToStop`: a node below the root whose
    /// weighted squared error divided by its total weight is at most this value is not
    /// split further. 0 disables the rule.
    pub max_acceptable_node_score: f64,
    /// What a tree returns when its root cannot be split.
    pub unsplit_root: UnsplitRoot,
    /// Cap on materialised substitutions per example.
    pub max_bindings_per_example: usize,
    /// Whether a `-type` argument may also reuse an existing variable of its type
    /// (Aleph's reading of output modes) besides introducing a new one.
    pub outputs_bind_existing: bool,
    /// BoostSRL's seed-based candidate sampling (off by default, `None`): at every node
    /// only tests true for at least one of a few randomly drawn "seed" examples of the
    /// node are scored ([`SeedSampling`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_sampling: Option<SeedSampling>,
}

/// BoostSRL's seed-based candidate sampling (`ILPouterLoop.numberPosSeedsToUse`,
/// `LearnOneClause.clausesMustCoverFractPosSeeds`): at each node BoostSRL draws
/// `ceil(5 · negPosRatio)` (10 for its default ratio 2) seed examples at random from
/// the examples that reach the node and keeps only candidate tests that at least one
/// seed satisfies; a `#` argument takes only constants that make the literal true for
/// some seed (its bottom-clause constants). This learner otherwise scores every
/// candidate, so it can only find the same or a better-scoring test than BoostSRL; the
/// option reproduces BoostSRL's search, the main reason its trees can differ from
/// srl's (a test true for no seed is never considered there).
///
/// The seeds of node k of a tree are drawn from a ChaCha8 stream seeded by `seed` and
/// k, so a fit is the same for any thread count; the boosting loop draws each tree's
/// `seed` from the fit's generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedSampling {
    /// Seed examples per node (≥ 1; BoostSRL: 10).
    pub seeds: usize,
    /// Seed of the draws.
    pub seed: u64,
}

impl Default for TreeParams {
    /// [`TreeParams::boostsrl`].
    fn default() -> Self {
        Self::boostsrl()
    }
}

impl TreeParams {
    /// BoostSRL's tree limits for RDN boosting (BoostSRL 0.5.5, `WILLSetup`): at most 12
    /// inner nodes (`maxNumberOfClauses` 12: its outer loop learns one clause per inner
    /// node, so a tree has up to 13 leaves, as BoostSRL's own trees on UW-CSE do), depth 5
    /// (`maxTreeDepthInNodes`: tests on a root-leaf path), one literal per node test
    /// (`maxNumberOfLiteralsAtAnInteriorNode`), at most 12 literals on a path
    /// (`maxTreeDepthInLiterals` = max(4, (5 + 1)·(1 + 1 free bridger))),
    /// `maxAcceptableNodeScoreToStop` 0.003, an unsplittable root returning 0. The preset
    /// of every result labelled RFGB, No Boosting or Soft-RFGB.
    pub fn boostsrl() -> Self {
        Self {
            max_leaves: 13,
            max_depth: 5,
            max_node_literals: 1,
            max_clause_length: 12,
            min_leaf_examples: 2,
            max_acceptable_node_score: 0.003,
            unsplit_root: UnsplitRoot::Zero,
            max_bindings_per_example: 10_000,
            outputs_bind_existing: true,
            seed_sampling: None,
        }
    }

    /// The two-literal setting: 8 leaves, depth 3, node tests of up to two literals
    /// (a literal introducing variables plus one consuming them: BoostSRL's bridger
    /// lookahead without `bridger:` declarations), no variance stop. Its tests
    /// `title(A,C), title(B,C)` are what let Cora `samebib` learn from the shipped
    /// modes, which declare no bridgers. Reported as its own method, `RFGB (2-literal)`.
    pub fn two_literal() -> Self {
        Self {
            max_leaves: 8,
            max_depth: 3,
            max_node_literals: 2,
            max_clause_length: 6,
            max_acceptable_node_score: 0.0,
            ..Self::boostsrl()
        }
    }

    fn validate(&self) -> Result<(), BoostError> {
        let bad = |name, message: &str| {
            Err(BoostError::InvalidParam {
                name,
                message: message.to_owned(),
            })
        };
        if self.max_leaves == 0 {
            return bad("max_leaves", "must be at least 1");
        }
        if !(1..=2).contains(&self.max_node_literals) {
            return bad("max_node_literals", "must be 1 or 2");
        }
        if self.max_clause_length == 0 {
            return bad("max_clause_length", "must be at least 1");
        }
        if self.min_leaf_examples == 0 {
            return bad("min_leaf_examples", "must be at least 1");
        }
        if self.max_bindings_per_example == 0 {
            return bad("max_bindings_per_example", "must be at least 1");
        }
        if !(self.max_acceptable_node_score.is_finite() && self.max_acceptable_node_score >= 0.0) {
            return bad("max_acceptable_node_score", "must be finite and >= 0");
        }
        if self.seed_sampling.is_some_and(|s| s.seeds == 0) {
            return bad("seed_sampling", "seeds must be at least 1");
        }
        Ok(())
    }

    /// Fits a regression tree to `targets` (one per example) over the facts of `db`,
    /// refining through the modes of `bk`.
    ///
    /// # Arguments
    /// * `db` — indexed facts; the examples' constants are ids of `db`.
    /// * `bk` — mode declarations (the target's own modes type the head variables and
    ///   are never used in the body: no recursion).
    /// * `examples` — ground atoms of the target (labels are not used here).
    /// * `targets` — regression values, `examples.len()` of them.
    /// * `weights` — optional non-negative example weights (default all 1).
    ///
    /// # Returns
    /// The tree; `predict` on the training examples gives each one's leaf value.
    ///
    /// # Errors
    /// [`BoostError::InvalidParam`] for bad parameters or mismatched lengths,
    /// [`BoostError::NoExamples`] for an empty example set.
    ///
    /// # Complexity
    /// Per expanded node: O(candidate tests × substitutions × join cost); the join on a
    /// bound argument is a CSR lookup.
    ///
    /// # References
    /// Blockeel & De Raedt (1998), top-down induction of first-order logical decision
    /// trees; Natarajan et al. (2012) FITRELREGRESSIONTREE; Yang et al. (2014) Sec. III.
    pub fn fit(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        targets: &[f64],
        weights: Option<&[f64]>,
    ) -> Result<RelationalRegressionTree, BoostError> {
        self.fit_assign(db, bk, examples, targets, weights)
            .map(|(t, _)| t)
    }

    /// Fits an MLN-Boost tree (Khot et al. 2011, the tree-based learner): the same
    /// induction as [`fit`](Self::fit), but each root-to-leaf path is a weighted clause
    /// `target(head) :- path` and an example's regression value is the leaf's weight
    /// times `n`, its number of true groundings of that clause (the substitutions of
    /// the path's variables that satisfy the path's true-branch literals; 1 at the
    /// root). A leaf's weight is the count-weighted least-squares fit
    /// `Σ wᵢ nᵢ Δᵢ / Σ wᵢ nᵢ²` and a split's score is the squared error
    /// `Σ wᵢ Δᵢ² − (Σ wᵢ nᵢ Δᵢ)² / Σ wᵢ nᵢ²` of each branch, where an example on a
    /// test's false branch keeps its count at the tested node (the negated test holds
    /// for every grounding of the node's clause). BoostSRL's `-mln` computes the same
    /// sums (`BranchStats`).
    ///
    /// The returned tree has [`per_grounding`](RelationalRegressionTree::per_grounding)
    /// set: [`predict`](RelationalRegressionTree::predict) returns weight × count.
    ///
    /// # Errors
    /// As [`fit`](Self::fit).
    ///
    /// # Complexity
    /// As [`fit`](Self::fit), except that scoring a test enumerates every solution of
    /// its join (to count them) instead of stopping at the first one: per node,
    /// O(candidate tests × Σ substitutions × solutions per substitution × posting
    /// length), each literal joined through the argument indexes, never the cross
    /// product of the variables' domains. Counts are exact unless an example has more
    /// than `max_bindings_per_example` substitutions at a node
    /// ([`RelationalRegressionTree::truncated_examples`]).
    ///
    /// # References
    /// Khot, Natarajan, Kersting & Shavlik (2011), "Learning Markov logic networks via
    /// functional gradient boosting", ICDM, Sec. 3 (the gradient and the counts) and the
    /// tree-based representation of Sec. 4.
    pub fn fit_mln(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        targets: &[f64],
        weights: Option<&[f64]>,
    ) -> Result<RelationalRegressionTree, BoostError> {
        self.fit_assign_counted(db, bk, examples, targets, weights, true)
            .map(|(t, _)| t)
    }

    /// MLN-Boost's clauses for one boosting step (BoostSRL `-mlnClause`;
    /// [`crate::clauses`]): up to `n_clauses` weighted clauses, each found by a beam
    /// search of width `beam` over bodies of at most `max_len` mode literals and fitted
    /// to the residuals the earlier clauses left. Each clause is returned as a one-split
    /// tree with [`per_grounding`](RelationalRegressionTree::per_grounding) set (the test
    /// is the body, the true leaf the weight, the false leaf 0), with each example's
    /// summed value `Σ_c w_c · n_c`. Fewer clauses come back when no body reduces the
    /// squared error (or covers `min_leaf_examples` examples).
    ///
    /// # Errors
    /// As [`fit`](Self::fit).
    ///
    /// # Complexity
    /// Per clause and body length: `beam × candidate literals` counting joins
    /// ([`fit_mln`](Self::fit_mln)'s), scored in parallel; only the `beam` best bodies are
    /// materialised.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fit_clauses(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        targets: &[f64],
        n_clauses: usize,
        max_len: usize,
        beam: usize,
    ) -> Result<(Vec<RelationalRegressionTree>, Vec<f64>), BoostError> {
        self.validate()?;
        let n = examples.len();
        if n == 0 {
            return Err(BoostError::NoExamples {
                reason: "empty example set".into(),
            });
        }
        if targets.len() != n {
            return Err(BoostError::InvalidParam {
                name: "targets",
                message: format!("expected {n} values (one per example)"),
            });
        }
        let ones = vec![1.0; n];
        let mut residual = targets.to_vec();
        let mut values = vec![0.0; n];
        let mut trees = Vec::new();
        let zeros = vec![0.0; n];
        let mut covered = vec![false; n];
        let mut n_covered = 0usize;
        for _ in 0..n_clauses {
            // BoostSRL's outer loop stops once 90 % of the examples are covered
            // (ILPouterLoop.minFractionOfPosCoveredToStop)
            if n_covered as f64 >= CLAUSE_COVERAGE_TO_STOP * n as f64 {
                break;
            }
            let learner = Learner::new(self, db, bk, examples, &residual, &ones, true);
            let Some((node, weight, gain, truncated)) =
                learner.best_clause(max_len, beam.max(1), &zeros, &covered)
            else {
                break;
            };
            for &e in &node.ex {
                if !covered[e as usize] {
                    covered[e as usize] = true;
                    n_covered += 1;
                }
            }
            let test: Vec<Literal> = node.path.iter().map(|l| learner.literal_of(l)).collect();
            for (i, &e) in node.ex.iter().enumerate() {
                let v = weight * node.n_rows(i) as f64;
                residual[e as usize] -= v;
                values[e as usize] += v;
            }
            trees.push(RelationalRegressionTree {
                target: examples.pred.clone(),
                arity: examples.arity,
                nodes: vec![
                    TreeNode::Split {
                        test,
                        yes: 1,
                        no: 2,
                        gain,
                    },
                    TreeNode::Leaf {
                        value: weight,
                        n_examples: node.ex.len(),
                    },
                    TreeNode::Leaf {
                        value: 0.0,
                        n_examples: n - node.ex.len(),
                    },
                ],
                truncated,
                per_grounding: true,
            });
        }
        Ok((trees, values))
    }

    /// [`fit`](Self::fit) that also returns each training example's leaf value.
    pub(crate) fn fit_assign(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        targets: &[f64],
        weights: Option<&[f64]>,
    ) -> Result<(RelationalRegressionTree, Vec<f64>), BoostError> {
        self.fit_assign_counted(db, bk, examples, targets, weights, false)
    }

    /// [`fit`](Self::fit) (`counts` false) or [`fit_mln`](Self::fit_mln) (`counts`
    /// true), also returning each training example's regression value.
    pub(crate) fn fit_assign_counted(
        &self,
        db: &Database,
        bk: &Background,
        examples: &Examples,
        targets: &[f64],
        weights: Option<&[f64]>,
        counts: bool,
    ) -> Result<(RelationalRegressionTree, Vec<f64>), BoostError> {
        self.validate()?;
        let n = examples.len();
        if n == 0 {
            return Err(BoostError::NoExamples {
                reason: "empty example set".into(),
            });
        }
        if targets.len() != n || weights.is_some_and(|w| w.len() != n) {
            return Err(BoostError::InvalidParam {
                name: "targets",
                message: format!("expected {n} values (one per example)"),
            });
        }
        let ones;
        let w = match weights {
            Some(w) => w,
            None => {
                ones = vec![1.0; n];
                &ones
            }
        };
        let learner = Learner::new(self, db, bk, examples, targets, w, counts);
        Ok(learner.grow())
    }
}

/// A first-order regression tree over one target predicate. Node 0 is the root.
///
/// Printing (`Display`) shows the tree as nested tests; [`clauses`](Self::clauses) gives
/// one clause per leaf (false branches as `\+ (...)`).
///
/// Deserialising checks the whole tree ([`RelationalRegressionTree::validate`]): a model
/// file edited by hand into a cycle, an index out of range or a variable out of scope is
/// refused when it is read, never met as a panic or an endless loop at prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TreeRepr")]
pub struct RelationalRegressionTree {
    target: String,
    arity: usize,
    nodes: Vec<TreeNode>,
    truncated: usize,
    /// MLN-Boost tree: leaf values are clause weights per true grounding.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    per_grounding: bool,
}

/// The serialised form of [`RelationalRegressionTree`], checked by `TryFrom` into it.
#[derive(Deserialize)]
struct TreeRepr {
    target: String,
    arity: usize,
    nodes: Vec<TreeNode>,
    truncated: usize,
    #[serde(default)]
    per_grounding: bool,
}

impl TryFrom<TreeRepr> for RelationalRegressionTree {
    type Error = String;

    fn try_from(r: TreeRepr) -> Result<Self, String> {
        let t = Self {
            target: r.target,
            arity: r.arity,
            nodes: r.nodes,
            truncated: r.truncated,
            per_grounding: r.per_grounding,
        };
        t.validate()?;
        Ok(t)
    }
}

/// The deepest tree [`RelationalRegressionTree::validate`] accepts (printing recurses
/// once per level; BoostSRL's trees have depth at most 10 or so).
pub const MAX_TREE_DEPTH: usize = 1024;

impl RelationalRegressionTree {
    /// Checks the tree's structure, as a model file read from disk needs: at least one
    /// node; from the root, every child index in range and every node reached exactly once
    /// (a tree: no cycle, no shared subtree, no unreachable node), depth at most
    /// [`MAX_TREE_DEPTH`]; every split has a non-empty test whose literals name a
    /// predicate, and whose variables are either in scope (the head's `arity`
    /// arguments and those introduced by true branches above) or introduced in order
    /// (the next free number); leaf values finite, split gains not NaN; a target name and
    /// an arity of at most 64.
    ///
    /// # Errors
    /// A message naming the node and what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if self.target.is_empty() {
            return Err("the tree has an empty target name".into());
        }
        if self.arity > 64 {
            return Err(format!("target arity {} (at most 64)", self.arity));
        }
        if self.nodes.is_empty() {
            return Err(format!("the tree of {} has no nodes", self.target));
        }
        let n = self.nodes.len();
        let mut seen = vec![false; n];
        // (node, variables in scope, depth)
        let mut stack = vec![(0usize, self.arity, 0usize)];
        seen[0] = true;
        while let Some((i, width, depth)) = stack.pop() {
            if depth > MAX_TREE_DEPTH {
                return Err(format!(
                    "node {i} is at depth {depth}, deeper than {MAX_TREE_DEPTH}"
                ));
            }
            match &self.nodes[i] {
                TreeNode::Leaf { value, .. } => {
                    if !value.is_finite() {
                        return Err(format!("node {i}: leaf value {value} is not finite"));
                    }
                }
                TreeNode::Split {
                    test,
                    yes,
                    no,
                    gain,
                } => {
                    if gain.is_nan() {
                        return Err(format!("node {i}: gain is NaN"));
                    }
                    if test.is_empty() {
                        return Err(format!("node {i}: a split with an empty test"));
                    }
                    let mut introduced: Vec<u16> = Vec::new();
                    for l in test {
                        if l.pred.is_empty() {
                            return Err(format!("node {i}: a literal without a predicate"));
                        }
                        for t in &l.args {
                            if let Term::Var(v) = *t {
                                let vu = v as usize;
                                if vu < width || introduced.contains(&v) {
                                    continue;
                                }
                                let next = width + introduced.len();
                                if vu != next {
                                    return Err(format!(
                                        "node {i}: variable {} of {} is out of scope (in scope: {width} variables; a new one must be number {next})",
                                        var_name(v),
                                        l.pred
                                    ));
                                }
                                introduced.push(v);
                            }
                        }
                    }
                    for (child, w) in [(*yes, width + introduced.len()), (*no, width)] {
                        if child >= n {
                            return Err(format!(
                                "node {i}: child {child} out of range ({n} nodes)"
                            ));
                        }
                        if seen[child] {
                            return Err(format!(
                                "node {i}: child {child} is reached twice (a cycle or a shared subtree)"
                            ));
                        }
                        seen[child] = true;
                        stack.push((child, w, depth + 1));
                    }
                }
            }
        }
        if let Some(j) = seen.iter().position(|&s| !s) {
            return Err(format!("node {j} is not reachable from the root"));
        }
        Ok(())
    }

    /// The nodes; index 0 is the root.
    pub fn nodes(&self) -> &[TreeNode] {
        &self.nodes
    }

    /// How often each predicate is used as a splitting criterion: the literals of every
    /// inner node's test, counted once per node (predicate name → count). The feature
    /// importance srlearn reports (its `feature_importances_` counts the literals of
    /// BoostSRL's clause bodies, where a path's literals recur once per clause below it,
    /// so its numbers are larger on deep trees).
    #[must_use]
    pub fn feature_counts(&self) -> std::collections::BTreeMap<String, usize> {
        let mut out = std::collections::BTreeMap::new();
        for n in &self.nodes {
            if let TreeNode::Split { test, .. } = n {
                for l in test {
                    *out.entry(l.pred.clone()).or_insert(0) += 1;
                }
            }
        }
        out
    }

    /// Target predicate name.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Arity of the target predicate.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, TreeNode::Leaf { .. }))
            .count()
    }

    /// Training examples whose substitutions were cut at `max_bindings_per_example`
    /// somewhere in the tree (0 means the joins were exact).
    pub fn truncated_examples(&self) -> usize {
        self.truncated
    }

    /// True for an MLN-Boost tree ([`TreeParams::fit_mln`]): each leaf value is the
    /// weight of the leaf's clause per true grounding, and
    /// [`predict`](Self::predict) multiplies it by the example's count.
    pub fn per_grounding(&self) -> bool {
        self.per_grounding
    }

    /// The regression value of each example: its leaf's value, times its number of
    /// true groundings of the leaf's clause for an MLN-Boost tree
    /// ([`per_grounding`](Self::per_grounding); Khot et al. 2011, ψ = Σⱼ wⱼ nⱼ(x) over
    /// the tree's clauses, of which only the reached leaf's has groundings).
    ///
    /// # Errors
    /// [`BoostError::TargetMismatch`] if the examples are of another predicate/arity.
    pub fn predict(&self, db: &Database, examples: &Examples) -> Result<Vec<f64>, BoostError> {
        let leaves = self.leaf_counts(db, examples)?;
        Ok(leaves
            .iter()
            .map(|&(l, n)| match self.nodes[l] {
                TreeNode::Leaf { value, .. } if self.per_grounding => value * n as f64,
                TreeNode::Leaf { value, .. } => value,
                TreeNode::Split { .. } => 0.0,
            })
            .collect())
    }

    /// The leaf (node index) each example reaches.
    ///
    /// # Errors
    /// [`BoostError::TargetMismatch`] if the examples are of another predicate/arity.
    pub fn leaf_of(&self, db: &Database, examples: &Examples) -> Result<Vec<usize>, BoostError> {
        Ok(self
            .leaf_counts(db, examples)?
            .into_iter()
            .map(|(l, _)| l)
            .collect())
    }

    /// The leaf (node index) each example reaches and its number of true groundings of
    /// that leaf's clause: the substitutions of the path's variables satisfying every
    /// true-branch test on the path (1 for a leaf reached through false branches only).
    /// Joins are exact (no `max_bindings_per_example` cap).
    ///
    /// # Errors
    /// [`BoostError::TargetMismatch`] if the examples are of another predicate/arity.
    ///
    /// # Complexity
    /// Materialises every substitution along each example's path: O(Σ substitutions ×
    /// posting-list length) per level, through the argument indexes.
    pub fn leaf_counts(
        &self,
        db: &Database,
        examples: &Examples,
    ) -> Result<Vec<(usize, u64)>, BoostError> {
        if examples.arity != self.arity || !examples.pred.eq_ignore_ascii_case(&self.target) {
            return Err(BoostError::TargetMismatch {
                model: self.target.clone(),
                model_arity: self.arity,
                examples: examples.pred.clone(),
                examples_arity: examples.arity,
            });
        }
        let mut out = vec![(0usize, 0u64); examples.len()];
        let root = NodeData::root(examples, (0..examples.len() as u32).collect());
        let mut stack = vec![(0usize, root)];
        let cap = usize::MAX;
        while let Some((idx, node)) = stack.pop() {
            match &self.nodes[idx] {
                TreeNode::Leaf { .. } => {
                    for (i, &e) in node.ex.iter().enumerate() {
                        out[e as usize] = (idx, node.n_rows(i) as u64);
                    }
                }
                TreeNode::Split { test, yes, no, .. } => {
                    let lits = compile_test(db, test, node.width, self.arity);
                    let new_width = node.width + count_free(&lits);
                    let (y, n, _) = split_node(db, &node, &lits, new_width, cap, true);
                    stack.push((*yes, y));
                    stack.push((*no, n));
                }
            }
        }
        Ok(out)
    }

    /// The tree compiled against `db` for many single-example evaluations
    /// ([`CompiledTree::value`]): each test's literals resolved to `db`'s relations and
    /// constants once. Valid while `db`'s predicates and constants stay the same (a
    /// query relation's truths may change).
    pub(crate) fn compile(&self, db: &Database) -> CompiledTree {
        let mut nodes = vec![CNode::Leaf(0.0); self.nodes.len()];
        let mut stack = vec![(0usize, self.arity)];
        let mut max_width = self.arity;
        while let Some((i, width)) = stack.pop() {
            match &self.nodes[i] {
                TreeNode::Leaf { value, .. } => nodes[i] = CNode::Leaf(*value),
                TreeNode::Split { test, yes, no, .. } => {
                    let lits = compile_test(db, test, width, self.arity);
                    let new_width = width + count_free(&lits);
                    max_width = max_width.max(new_width);
                    nodes[i] = CNode::Split {
                        lits,
                        new_width,
                        yes: *yes,
                        no: *no,
                    };
                    stack.push((*yes, new_width));
                    stack.push((*no, width));
                }
            }
        }
        CompiledTree {
            nodes,
            arity: self.arity,
            max_width,
            per_grounding: self.per_grounding,
        }
    }

    /// One clause per leaf, root-to-leaf: `head :- lits, \+ (lits), ... ⇒ value`.
    pub fn clauses(&self) -> Vec<String> {
        let head = head_string(&self.target, self.arity);
        let mut out = Vec::new();
        let mut stack: Vec<(usize, Vec<String>)> = vec![(0, Vec::new())];
        while let Some((i, body)) = stack.pop() {
            match &self.nodes[i] {
                TreeNode::Leaf { value, n_examples } => {
                    let b = if body.is_empty() {
                        "true".to_owned()
                    } else {
                        body.join(", ")
                    };
                    out.push(format!("{head} :- {b}. ⇒ {value:.4} (n={n_examples})"));
                }
                TreeNode::Split { test, yes, no, .. } => {
                    let t = conj_string(test);
                    let mut nb = body.clone();
                    nb.push(format!("\\+ ({t})"));
                    stack.push((*no, nb));
                    let mut yb = body;
                    yb.push(t);
                    stack.push((*yes, yb));
                }
            }
        }
        out
    }

    /// The tree as weighted first-order formulas in Alchemy's MLN syntax, one per leaf:
    /// `(weight, "body => head")`, variables in lower case, constants quoted, `^` for
    /// and, `!` for not. A false branch becomes `!(EXIST v (path ^ test))`, the test
    /// conjoined with the true-branch literals above it and closed over their
    /// variables, so that each formula's true groundings are exactly the counts
    /// [`leaf_counts`](Self::leaf_counts) gives (the tree's routing: an example takes a
    /// false branch when no substitution satisfies the test). A leaf with an empty
    /// body is the unit clause `head`. The weight is the leaf value (per grounding for
    /// an MLN-Boost tree).
    pub fn mln_formulas(&self) -> Vec<(f64, String)> {
        let head = mln_atom(&self.target, &head_terms(self.arity));
        let arity = self.arity as u16;
        let mut out = Vec::new();
        let mut stack: Vec<(usize, Vec<Literal>, Vec<String>)> = vec![(0, Vec::new(), Vec::new())];
        while let Some((i, pos, negs)) = stack.pop() {
            match &self.nodes[i] {
                TreeNode::Leaf { value, .. } => {
                    let mut body: Vec<String> = pos.iter().map(mln_literal).collect();
                    body.extend(negs);
                    let f = if body.is_empty() {
                        head.clone()
                    } else {
                        format!("{} => {head}", body.join(" ^ "))
                    };
                    out.push((*value, f));
                }
                TreeNode::Split { test, yes, no, .. } => {
                    let mut inner = pos.clone();
                    inner.extend(test.iter().cloned());
                    let mut vars: Vec<u16> = inner
                        .iter()
                        .flat_map(|l| &l.args)
                        .filter_map(|t| match t {
                            Term::Var(v) if *v >= arity => Some(*v),
                            _ => None,
                        })
                        .collect();
                    vars.sort_unstable();
                    vars.dedup();
                    let conj = inner
                        .iter()
                        .map(mln_literal)
                        .collect::<Vec<_>>()
                        .join(" ^ ");
                    let neg = if vars.is_empty() {
                        format!("!({conj})")
                    } else {
                        let names: Vec<String> =
                            vars.iter().map(|&v| var_name(v).to_lowercase()).collect();
                        format!("!(EXIST {} ({conj}))", names.join(","))
                    };
                    let mut nn = negs.clone();
                    nn.push(neg);
                    stack.push((*no, pos.clone(), nn));
                    stack.push((*yes, inner, negs));
                }
            }
        }
        out
    }

    fn fmt_node(&self, f: &mut fmt::Formatter<'_>, i: usize, indent: usize) -> fmt::Result {
        let pad = "  ".repeat(indent);
        match &self.nodes[i] {
            TreeNode::Leaf { value, n_examples } => {
                writeln!(f, "{pad}{value:.4}  (n={n_examples})")
            }
            TreeNode::Split { test, yes, no, .. } => {
                writeln!(f, "{pad}if {} then", conj_string(test))?;
                self.fmt_node(f, *yes, indent + 1)?;
                writeln!(f, "{pad}else")?;
                self.fmt_node(f, *no, indent + 1)
            }
        }
    }
}

impl fmt::Display for RelationalRegressionTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} :-", head_string(&self.target, self.arity))?;
        self.fmt_node(f, 0, 1)
    }
}

/// `A`, `B`, ..., `Z`, `A1`, ...
pub(crate) fn var_name(v: u16) -> String {
    let l = (b'A' + (v % 26) as u8) as char;
    if v < 26 {
        l.to_string()
    } else {
        format!("{l}{}", v / 26)
    }
}

fn head_terms(arity: usize) -> Vec<Term> {
    (0..arity as u16).map(Term::Var).collect()
}

/// An atom in Alchemy's syntax: lower-case variables, quoted constants.
fn mln_atom(pred: &str, args: &[Term]) -> String {
    let a: Vec<String> = args
        .iter()
        .map(|t| match t {
            Term::Var(v) => var_name(*v).to_lowercase(),
            Term::Const(c) => format!("\"{}\"", c.replace('"', "\\\"")),
        })
        .collect();
    format!("{pred}({})", a.join(", "))
}

fn mln_literal(l: &Literal) -> String {
    mln_atom(&l.pred, &l.args)
}

fn head_string(target: &str, arity: usize) -> String {
    let vars: Vec<String> = (0..arity as u16).map(var_name).collect();
    format!("{target}({})", vars.join(", "))
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.pred)?;
        for (i, t) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match t {
                Term::Var(v) => f.write_str(&var_name(*v))?,
                Term::Const(c) => f.write_str(c)?,
            }
        }
        f.write_str(")")
    }
}

fn conj_string(test: &[Literal]) -> String {
    test.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The fraction of a step's examples covered after which MLN-Boost's clause learner
/// stops adding clauses (BoostSRL `ILPouterLoop.minFractionOfPosCoveredToStop`).
pub(crate) const CLAUSE_COVERAGE_TO_STOP: f64 = 0.9;

/// A node of a [`CompiledTree`].
#[derive(Clone, Debug)]
enum CNode {
    Leaf(f64),
    Split {
        lits: Vec<CLit>,
        new_width: usize,
        yes: usize,
        no: usize,
    },
}

/// A [`RelationalRegressionTree`] compiled against one database
/// ([`RelationalRegressionTree::compile`]): the value of one example at a time without
/// compiling tests or allocating per call (Gibbs sampling of recursive targets
/// evaluates each example's trees once per sweep).
#[derive(Clone, Debug)]
pub(crate) struct CompiledTree {
    nodes: Vec<CNode>,
    arity: usize,
    max_width: usize,
    per_grounding: bool,
}

/// Buffers reused by [`CompiledTree::value`].
#[derive(Clone, Debug, Default)]
pub(crate) struct EvalScratch {
    rows: Vec<u32>,
    next: Vec<u32>,
    bind: Vec<u32>,
}

impl CompiledTree {
    /// The regression value of the example with arguments `args` (the tree's arity of
    /// them): the leaf it reaches, times its true groundings for an MLN-Boost tree;
    /// the same number as [`RelationalRegressionTree::predict`] on that example.
    pub(crate) fn value(&self, db: &Database, args: &[u32], s: &mut EvalScratch) -> f64 {
        debug_assert_eq!(args.len(), self.arity);
        s.rows.clear();
        s.rows.extend_from_slice(args);
        if s.bind.len() < self.max_width {
            s.bind.resize(self.max_width, 0);
        }
        let mut width = self.arity;
        let mut i = 0;
        loop {
            match &self.nodes[i] {
                CNode::Leaf(v) => {
                    return if self.per_grounding {
                        v * (s.rows.len() / width.max(1)) as f64
                    } else {
                        *v
                    };
                }
                CNode::Split {
                    lits,
                    new_width,
                    yes,
                    no,
                } => {
                    s.next.clear();
                    let rows = std::mem::take(&mut s.rows);
                    let w = width.max(1);
                    for row in rows.chunks_exact(w) {
                        s.bind[..width].copy_from_slice(&row[..width]);
                        conj_collect(
                            db,
                            lits,
                            0,
                            &mut s.bind,
                            *new_width,
                            &mut s.next,
                            0,
                            usize::MAX,
                        );
                    }
                    s.rows = rows;
                    if s.next.is_empty() {
                        i = *no;
                    } else {
                        std::mem::swap(&mut s.rows, &mut s.next);
                        width = *new_width;
                        i = *yes;
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Compiled literals and joins (the hot path).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CArg {
    /// Already bound: the value is in binding slot `.0`.
    Bound(u16),
    /// A constant id.
    Const(u32),
    /// A new variable: write the matching value into slot `.0`.
    Free(u16),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct CLit {
    /// Relation index; `None` = never true (unknown predicate or constant).
    rel: Option<u32>,
    args: Vec<CArg>,
    all_bound: bool,
    /// Over a query relation (a recursive target's atoms): a row counts only while it
    /// is true ([`Relation::is_active`]).
    masked: bool,
    /// For a literal over the recursive target's own atoms: the head's arity `k`; a
    /// tuple equal to the head binding (slots `0..k`) is never a solution, so an
    /// example's conditional never reads its own atom (Neville & Jensen 2007: an RDN's
    /// conditional of `Y_i` is given the other variables). 0: no exclusion.
    not_self: u8,
}

impl CLit {
    fn new(rel: Option<u32>, args: Vec<CArg>) -> Self {
        let all_bound = args.iter().all(|a| !matches!(a, CArg::Free(_)));
        Self {
            rel,
            args,
            all_bound,
            masked: false,
            not_self: 0,
        }
    }

    /// [`CLit::new`] with the flags of a literal over a query relation of `db`: rows
    /// are filtered by their truth, and when the relation has the head's arity
    /// `head_arity` (the recursive target's own atoms), the head's atom is excluded.
    fn in_db(db: &Database, rel: Option<u32>, args: Vec<CArg>, head_arity: usize) -> Self {
        let mut l = Self::new(rel, args);
        if let Some(r) = rel {
            let relation = &db.relations()[r as usize];
            if relation.is_query() {
                l.masked = true;
                if relation.arity() == head_arity && head_arity <= u8::MAX as usize {
                    l.not_self = head_arity as u8;
                }
            }
        }
        l
    }

    /// Whether row `r` (tuple `t`) of `rel` may be a solution under binding `b`: a
    /// query relation's row must be true, and not the head's own atom.
    #[inline]
    fn row_ok(&self, rel: &Relation, r: u32, t: &[u32], b: &[u32]) -> bool {
        !self.masked
            || (rel.is_active(r) && (self.not_self == 0 || t != &b[..self.not_self as usize]))
    }
}

fn count_free(lits: &[CLit]) -> usize {
    lits.iter()
        .flat_map(|l| &l.args)
        .filter(|a| matches!(a, CArg::Free(_)))
        .count()
}

fn compile_test(db: &Database, test: &[Literal], width: usize, head_arity: usize) -> Vec<CLit> {
    let mut introduced: Vec<u16> = Vec::new();
    test.iter()
        .map(|l| {
            let mut rel = db
                .pred(&l.pred)
                .filter(|&p| db.relation(p).arity() == l.args.len())
                .map(|p| p.0);
            let args = l
                .args
                .iter()
                .map(|t| match t {
                    Term::Var(v) if (*v as usize) < width || introduced.contains(v) => {
                        CArg::Bound(*v)
                    }
                    Term::Var(v) => CArg::Free(*v),
                    Term::Const(c) => match db.constant(c) {
                        Some(id) => CArg::Const(id),
                        None => {
                            rel = None;
                            CArg::Const(u32::MAX)
                        }
                    },
                })
                .collect::<Vec<_>>();
            for a in &args {
                if let CArg::Free(v) = *a {
                    introduced.push(v);
                }
            }
            CLit::in_db(db, rel, args, head_arity)
        })
        .collect()
}

/// A conjunction compiled against one database, for [`CompiledConjunction::holds`]
/// on many bindings (the advice clauses of a fit, [`crate::Advice::counts`]): the same
/// compiled join as a node test ([`conj_exists`]), built once instead of per call.
#[derive(Clone, Debug)]
pub(crate) struct CompiledConjunction {
    lits: Vec<CLit>,
    /// Variables `0..width` are bound by the caller.
    width: usize,
    /// Binding slots: one more than the largest variable number (at least `width`).
    slots: usize,
}

impl CompiledConjunction {
    /// Compiles `body` against `db` with the clause variables `0..width` bound by the
    /// caller (variables numbered from `width` are existential; `n_vars` is one more
    /// than the largest variable number). A literal of an unknown predicate or
    /// constant, or of another arity than the facts, is false.
    ///
    /// A variable must not occur twice in the literal that introduces it (the join
    /// binds each argument position independently); [`crate::advice`] refuses such
    /// clauses.
    pub(crate) fn new(db: &Database, body: &[Literal], width: usize, n_vars: usize) -> Self {
        Self {
            lits: compile_test(db, body, width, width),
            width,
            slots: n_vars.max(width),
        }
    }

    /// Whether the conjunction has a solution in `db` (the database it was compiled
    /// against) with variables `0..width` bound to the constant ids `bound`
    /// (`bound.len()` = `width`). `scratch` is reused between calls.
    pub(crate) fn holds(&self, db: &Database, bound: &[u32], scratch: &mut Vec<u32>) -> bool {
        debug_assert_eq!(bound.len(), self.width);
        scratch.clear();
        scratch.resize(self.slots, 0);
        scratch[..bound.len()].copy_from_slice(bound);
        conj_exists(db, &self.lits, 0, scratch)
    }
}

/// The facts of `rel` that can match `lit` under binding `b`: the shortest posting
/// list among the bound arguments, or every row if none is bound.
#[inline]
fn postings<'a>(rel: &'a Relation, lit: &CLit, b: &[u32]) -> Option<&'a [u32]> {
    let mut best: Option<&[u32]> = None;
    for (pos, a) in lit.args.iter().enumerate() {
        let c = match *a {
            CArg::Bound(s) => b[s as usize],
            CArg::Const(c) => c,
            CArg::Free(_) => continue,
        };
        let rows = rel.rows_with(pos, c);
        if best.is_none_or(|r| rows.len() < r.len()) {
            best = Some(rows);
        }
    }
    best
}

#[inline]
fn tuple_matches(lit: &CLit, t: &[u32], b: &[u32]) -> bool {
    lit.args.iter().zip(t).all(|(a, &v)| match *a {
        CArg::Bound(s) => b[s as usize] == v,
        CArg::Const(c) => c == v,
        CArg::Free(_) => true,
    })
}

/// Posting lists up to this long are scanned instead of hashing the ground tuple.
const SCAN_POSTINGS: usize = 16;

#[inline]
fn ground_holds(rel: &Relation, lit: &CLit, b: &[u32]) -> bool {
    let mut key = [0u32; 8];
    if lit.args.len() <= 8 {
        let n = lit.args.len();
        for (k, a) in lit.args.iter().enumerate() {
            key[k] = match *a {
                CArg::Bound(s) => b[s as usize],
                CArg::Const(c) => c,
                CArg::Free(_) => return false,
            };
        }
        // The shortest posting list among the arguments: empty means false, short
        // ones are scanned (cheaper than hashing the tuple).
        let mut best: Option<&[u32]> = None;
        for (pos, &c) in key[..n].iter().enumerate() {
            let rows = rel.rows_with(pos, c);
            if rows.is_empty() {
                return false;
            }
            if best.is_none_or(|r| rows.len() < r.len()) {
                best = Some(rows);
            }
        }
        let key = &key[..n];
        if lit.not_self > 0 && key == &b[..lit.not_self as usize] {
            return false;
        }
        match best {
            Some(rows) if rows.len() <= SCAN_POSTINGS => rows
                .iter()
                .any(|&r| rel.is_active(r) && rel.tuple(r).iter().zip(key).all(|(x, y)| x == y)),
            // a query relation's set holds only its true rows
            _ => rel.contains(key),
        }
    } else {
        let key: Vec<u32> = lit
            .args
            .iter()
            .map(|a| match *a {
                CArg::Bound(s) => b[s as usize],
                CArg::Const(c) => c,
                CArg::Free(_) => u32::MAX,
            })
            .collect();
        if lit.not_self > 0 && key[..] == b[..lit.not_self as usize] {
            return false;
        }
        rel.contains(&key)
    }
}

/// True if `lits[k..]` has a solution extending binding `b` (slots of free variables
/// are overwritten).
fn conj_exists(db: &Database, lits: &[CLit], k: usize, b: &mut [u32]) -> bool {
    let Some(lit) = lits.get(k) else {
        return true;
    };
    let Some(p) = lit.rel else { return false };
    let rel = &db.relations()[p as usize];
    if lit.all_bound {
        return ground_holds(rel, lit, b) && conj_exists(db, lits, k + 1, b);
    }
    let last = k + 1 == lits.len();
    match postings(rel, lit, b) {
        Some(rows) => {
            for &r in rows {
                let t = rel.tuple(r);
                if tuple_matches(lit, t, b) && lit.row_ok(rel, r, t, b) {
                    if last {
                        return true;
                    }
                    bind(lit, t, b);
                    if conj_exists(db, lits, k + 1, b) {
                        return true;
                    }
                }
            }
            false
        }
        None => {
            for r in 0..rel.n_rows() as u32 {
                let t = rel.tuple(r);
                if !lit.row_ok(rel, r, t, b) {
                    continue;
                }
                if last {
                    return true;
                }
                bind(lit, t, b);
                if conj_exists(db, lits, k + 1, b) {
                    return true;
                }
            }
            false
        }
    }
}

/// The number of solutions of `lits[k..]` extending binding `b` (slots of free
/// variables are overwritten): the true groundings of the conjunction's new variables.
/// Each literal is joined through the shortest posting list among its bound arguments
/// ([`postings`]); only a literal with no bound argument scans its relation.
///
/// # Complexity
/// O(Σ over partial solutions of the posting-list length scanned at the next literal):
/// the join's output size times the index fan-out, never the cross product of the
/// variables' domains.
fn conj_count(db: &Database, lits: &[CLit], k: usize, b: &mut [u32]) -> u64 {
    let Some(lit) = lits.get(k) else {
        return 1;
    };
    let Some(p) = lit.rel else { return 0 };
    let rel = &db.relations()[p as usize];
    if lit.all_bound {
        return if ground_holds(rel, lit, b) {
            conj_count(db, lits, k + 1, b)
        } else {
            0
        };
    }
    let mut n = 0;
    match postings(rel, lit, b) {
        Some(rows) => {
            for &r in rows {
                let t = rel.tuple(r);
                if tuple_matches(lit, t, b) && lit.row_ok(rel, r, t, b) {
                    bind(lit, t, b);
                    n += conj_count(db, lits, k + 1, b);
                }
            }
        }
        None => {
            for r in 0..rel.n_rows() as u32 {
                let t = rel.tuple(r);
                if lit.row_ok(rel, r, t, b) {
                    bind(lit, t, b);
                    n += conj_count(db, lits, k + 1, b);
                }
            }
        }
    }
    n
}

/// The variable bound above a test that the test reads, and whether it reads more
/// than one (then nothing is memoised).
fn reads(width: usize, test: &Test) -> (Option<u16>, bool) {
    let mut read: Option<u16> = None;
    // A literal excluding the head's own atom reads the head's variables too.
    let mut many = test.lits.iter().any(|l| l.not_self > 0);
    for a in test.lits.iter().flat_map(|l| &l.args) {
        if let CArg::Bound(v) = *a
            && (v as usize) < width
        {
            match read {
                None => read = Some(v),
                Some(r) if r == v => {}
                Some(_) => many = true,
            }
        }
    }
    (read, many)
}

#[inline]
fn bind(lit: &CLit, t: &[u32], b: &mut [u32]) {
    for (a, &v) in lit.args.iter().zip(t) {
        if let CArg::Free(s) = *a {
            b[s as usize] = v;
        }
    }
}

/// Appends every solution of `lits[k..]` extending `b` (its first `width` slots) to
/// `out`, stopping after `cap` rows in `out` beyond `base`; returns false if cut.
#[allow(clippy::too_many_arguments)]
fn conj_collect(
    db: &Database,
    lits: &[CLit],
    k: usize,
    b: &mut [u32],
    width: usize,
    out: &mut Vec<u32>,
    base: usize,
    cap: usize,
) -> bool {
    if (out.len() - base) / width.max(1) >= cap {
        return false;
    }
    let Some(lit) = lits.get(k) else {
        out.extend_from_slice(&b[..width]);
        return true;
    };
    let Some(p) = lit.rel else { return true };
    let rel = &db.relations()[p as usize];
    if lit.all_bound {
        if ground_holds(rel, lit, b) {
            return conj_collect(db, lits, k + 1, b, width, out, base, cap);
        }
        return true;
    }
    let all: Vec<u32>;
    let rows = match postings(rel, lit, b) {
        Some(r) => r,
        None => {
            all = (0..rel.n_rows() as u32).collect();
            &all
        }
    };
    for &r in rows {
        let t = rel.tuple(r);
        if tuple_matches(lit, t, b) && lit.row_ok(rel, r, t, b) {
            bind(lit, t, b);
            if !conj_collect(db, lits, k + 1, b, width, out, base, cap) {
                return false;
            }
        }
    }
    true
}

// ---------------------------------------------------------------------------------
// Nodes and binding tables.

/// Examples at a node with their substitutions: rows `start[i]..start[i+1]` (each
/// `width` wide) belong to example `ex[i]`.
#[derive(Clone)]
struct NodeData {
    ex: Vec<u32>,
    start: Vec<u32>,
    rows: Vec<u32>,
    width: usize,
    var_types: Vec<u16>,
    path: Vec<CLit>,
    depth: usize,
    clause_len: usize,
}

impl NodeData {
    fn root(examples: &Examples, ex: Vec<u32>) -> Self {
        let width = examples.arity;
        let mut rows = Vec::with_capacity(ex.len() * width);
        let mut start = Vec::with_capacity(ex.len() + 1);
        start.push(0);
        for (i, &e) in ex.iter().enumerate() {
            rows.extend_from_slice(examples.args(e as usize));
            start.push(i as u32 + 1);
        }
        Self {
            ex,
            start,
            rows,
            width,
            var_types: Vec::new(),
            path: Vec::new(),
            depth: 0,
            clause_len: 0,
        }
    }

    /// Number of substitutions of example `i` (its true groundings of the path's
    /// clause; 1 at the root).
    #[inline]
    fn n_rows(&self, i: usize) -> usize {
        (self.start[i + 1] - self.start[i]) as usize
    }

    #[inline]
    fn rows_of(&self, i: usize) -> std::slice::ChunksExact<'_, u32> {
        let w = self.width.max(1);
        let (s, e) = (self.start[i] as usize, self.start[i + 1] as usize);
        self.rows[s * w..e * w].chunks_exact(w)
    }
}

/// Splits `node` by `lits`: (true child with extended substitutions, false child,
/// number of examples whose substitutions were cut at `cap`). With `keep_no` false the
/// false child is left empty (candidate scoring only needs the true child).
fn split_node(
    db: &Database,
    node: &NodeData,
    lits: &[CLit],
    new_width: usize,
    cap: usize,
    keep_no: bool,
) -> (NodeData, NodeData, usize) {
    let mut yes = NodeData {
        ex: Vec::new(),
        start: vec![0],
        rows: Vec::new(),
        width: new_width,
        var_types: Vec::new(),
        path: Vec::new(),
        depth: node.depth + 1,
        clause_len: node.clause_len + lits.len(),
    };
    let mut no = NodeData {
        ex: Vec::new(),
        start: vec![0],
        rows: Vec::new(),
        width: node.width,
        var_types: node.var_types.clone(),
        path: node.path.clone(),
        depth: node.depth + 1,
        clause_len: node.clause_len,
    };
    let mut scratch = vec![0u32; new_width.max(node.width)];
    let mut truncated = 0;
    let w = new_width.max(1);
    for (i, &e) in node.ex.iter().enumerate() {
        let before = yes.rows.len();
        let mut complete = true;
        for row in node.rows_of(i) {
            scratch[..node.width].copy_from_slice(&row[..node.width]);
            if !conj_collect(
                db,
                lits,
                0,
                &mut scratch,
                new_width,
                &mut yes.rows,
                before,
                cap,
            ) {
                complete = false;
                break;
            }
        }
        if !complete {
            truncated += 1;
        }
        if yes.rows.len() > before {
            yes.ex.push(e);
            yes.start.push((yes.rows.len() / w) as u32);
        } else if keep_no {
            no.ex.push(e);
            for row in node.rows_of(i) {
                no.rows.extend_from_slice(row);
            }
            no.start.push((no.rows.len() / node.width.max(1)) as u32);
        }
    }
    (yes, no, truncated)
}

// ---------------------------------------------------------------------------------
// The learner.

/// The type of head argument `k` when the target has no mode: the mode type whose
/// argument positions hold the example constants most often (first 500 examples).
fn infer_head_type(db: &Database, bk: &Background, examples: &Examples, k: usize) -> String {
    let mut best = (0usize, String::new());
    let n = examples.len().min(500);
    for m in &bk.modes {
        let Some(p) = db.pred(&m.pred) else { continue };
        let rel = db.relation(p);
        if rel.arity() != m.args.len() {
            continue;
        }
        for (pos, a) in m.args.iter().enumerate() {
            if a.kind == ArgKind::Constant {
                continue;
            }
            let hits = (0..n)
                .filter(|&i| !rel.rows_with(pos, examples.args(i)[k]).is_empty())
                .count();
            if hits > best.0 {
                best = (hits, a.ty.clone());
            }
        }
    }
    best.1
}

#[derive(Clone, Debug)]
struct CMode {
    rel: u32,
    args: Vec<(ArgKind, u16)>,
    consts: Vec<Vec<u32>>,
    bridger: bool,
}

#[derive(Clone, Debug)]
struct Test {
    lits: Vec<CLit>,
    new_types: Vec<u16>,
}

/// Sufficient statistics of a branch for the count-weighted least-squares fit
/// `min_v Σ wᵢ (yᵢ − v·cᵢ)²`, where `cᵢ` is example i's number of true groundings of the
/// branch's clause (MLN-Boost, Khot et al. 2011) or 1 (a plain regression tree, whose
/// fit is the weighted mean: with every `cᵢ = 1`, `nn = w` and `ny = y` bit for bit).
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    n: usize,
    /// Σ w
    w: f64,
    /// Σ w y
    y: f64,
    /// Σ w y²
    q: f64,
    /// Σ w c²
    nn: f64,
    /// Σ w c y
    ny: f64,
}

impl Stats {
    #[inline]
    fn add(&mut self, w: f64, y: f64) {
        self.add_counted(w, y, 1.0);
    }
    #[inline]
    fn add_counted(&mut self, w: f64, y: f64, c: f64) {
        self.n += 1;
        self.w += w;
        self.y += w * y;
        self.q += w * y * y;
        let wc = w * c;
        self.ny += wc * y;
        self.nn += wc * c;
    }
    fn sub(&self, o: &Stats) -> Stats {
        Stats {
            n: self.n - o.n,
            w: self.w - o.w,
            y: self.y - o.y,
            q: self.q - o.q,
            nn: self.nn - o.nn,
            ny: self.ny - o.ny,
        }
    }
    /// Weighted squared error of the least-squares fit: `Σ w y² − (Σ w c y)² / Σ w c²`
    /// (around the weighted mean when every c = 1).
    fn sse(&self) -> f64 {
        if self.nn <= 0.0 {
            0.0
        } else {
            (self.q - self.ny * self.ny / self.nn).max(0.0)
        }
    }
    /// The least-squares value `Σ w c y / Σ w c²` (the weighted mean when every c = 1).
    fn mean(&self) -> f64 {
        if self.nn <= 0.0 {
            0.0
        } else {
            self.ny / self.nn
        }
    }
}

struct Candidate {
    test: Test,
    gain: f64,
}

struct Learner<'a> {
    p: &'a TreeParams,
    db: &'a Database,
    examples: &'a Examples,
    y: &'a [f64],
    w: &'a [f64],
    modes: Vec<CMode>,
    head_types: Vec<u16>,
    /// MLN-Boost: fit leaves by count-weighted least squares over the number of true
    /// groundings of each example's path clause.
    counts: bool,
}

impl<'a> Learner<'a> {
    fn new(
        p: &'a TreeParams,
        db: &'a Database,
        bk: &Background,
        examples: &'a Examples,
        y: &'a [f64],
        w: &'a [f64],
        counts: bool,
    ) -> Self {
        let mut types: Vec<String> = Vec::new();
        let mut ty = |s: &str| -> u16 {
            if let Some(i) = types.iter().position(|t| t == s) {
                return i as u16;
            }
            types.push(s.to_owned());
            (types.len() - 1) as u16
        };
        let target = &examples.pred;
        let head_types = match bk
            .modes
            .iter()
            .find(|m| m.pred.eq_ignore_ascii_case(target) && m.args.len() == examples.arity)
        {
            Some(m) => m.args.iter().map(|a| ty(&a.ty)).collect(),
            None => (0..examples.arity)
                .map(|k| ty(&infer_head_type(db, bk, examples, k)))
                .collect(),
        };
        let mut modes = Vec::new();
        for m in &bk.modes {
            if m.pred.eq_ignore_ascii_case(target) {
                continue;
            }
            let Some(pid) = db.pred(&m.pred) else {
                continue;
            };
            let rel = db.relation(pid);
            if rel.arity() != m.args.len() || rel.is_empty() {
                continue;
            }
            let args: Vec<(ArgKind, u16)> = m.args.iter().map(|a| (a.kind, ty(&a.ty))).collect();
            let consts = m
                .args
                .iter()
                .enumerate()
                .map(|(pos, a)| {
                    if a.kind != ArgKind::Constant {
                        return Vec::new();
                    }
                    let mut c = rel.constants_at(pos);
                    if let Some(r) = bk.ranges.get(&a.ty) {
                        let allowed: Vec<u32> = r.iter().filter_map(|n| db.constant(n)).collect();
                        c.retain(|x| allowed.contains(x));
                    }
                    c
                })
                .collect();
            let bridger = bk
                .bridgers
                .iter()
                .any(|b| b.split('/').next() == Some(m.pred.as_str()));
            modes.push(CMode {
                rel: pid.0,
                args,
                consts,
                bridger,
            });
        }
        Self {
            p,
            db,
            examples,
            y,
            w,
            modes,
            head_types,
            counts,
        }
    }

    /// Literals from every mode over the variables `var_types` (slots 0..), new
    /// variables at slots `base..`. If `must_use` is given, an input must be bound to
    /// a slot in that range.
    fn gen_lits(
        &self,
        var_types: &[u16],
        base: usize,
        must_use: Option<(usize, usize)>,
    ) -> Vec<(CLit, Vec<u16>, bool)> {
        let mut out = Vec::new();
        for m in &self.modes {
            let mut partial: Vec<(Vec<CArg>, Vec<u16>)> = vec![(Vec::new(), Vec::new())];
            for (pos, &(kind, t)) in m.args.iter().enumerate() {
                let mut next = Vec::new();
                for (args, new_types) in &partial {
                    match kind {
                        ArgKind::Input => {
                            for (v, &vt) in var_types.iter().enumerate() {
                                if vt == t {
                                    let mut a = args.clone();
                                    a.push(CArg::Bound(v as u16));
                                    next.push((a, new_types.clone()));
                                }
                            }
                        }
                        ArgKind::Output => {
                            if self.p.outputs_bind_existing {
                                for (v, &vt) in var_types.iter().enumerate() {
                                    if vt == t {
                                        let mut a = args.clone();
                                        a.push(CArg::Bound(v as u16));
                                        next.push((a, new_types.clone()));
                                    }
                                }
                            }
                            let mut a = args.clone();
                            a.push(CArg::Free((base + new_types.len()) as u16));
                            let mut nt = new_types.clone();
                            nt.push(t);
                            next.push((a, nt));
                        }
                        ArgKind::Constant => {
                            for &c in &m.consts[pos] {
                                let mut a = args.clone();
                                a.push(CArg::Const(c));
                                next.push((a, new_types.clone()));
                            }
                        }
                        ArgKind::NotHead => {
                            // an existing variable that is not the head's (slots
                            // 0..arity hold the head's arguments)
                            for (v, &vt) in var_types.iter().enumerate().skip(self.examples.arity) {
                                if vt == t {
                                    let mut a = args.clone();
                                    a.push(CArg::Bound(v as u16));
                                    next.push((a, new_types.clone()));
                                }
                            }
                        }
                    }
                }
                partial = next;
            }
            for (args, new_types) in partial {
                if let Some((lo, hi)) = must_use {
                    let uses = args.iter().any(
                        |a| matches!(*a, CArg::Bound(s) if (s as usize) >= lo && (s as usize) < hi),
                    );
                    if !uses {
                        continue;
                    }
                }
                out.push((
                    CLit::in_db(self.db, Some(m.rel), args, self.examples.arity),
                    new_types,
                    m.bridger,
                ));
            }
        }
        out
    }

    /// Candidate tests grouped by their first literal: `(first, single test allowed,
    /// two-literal tests starting with it)`.
    fn candidate_tests(&self, node: &NodeData) -> Vec<(Test, bool, Vec<Test>)> {
        let room = self.p.max_clause_length.saturating_sub(node.clause_len);
        if room == 0 || node.depth >= self.p.max_depth {
            return Vec::new();
        }
        let w = node.width;
        let firsts = self.gen_lits(&node.var_types, w, None);
        let mut groups = Vec::new();
        for (lit, new_types, bridger) in firsts {
            if lit.all_bound && node.path.contains(&lit) {
                continue;
            }
            let mut pairs = Vec::new();
            // A bridger is free (BoostSRL's `maxFreeBridgersInBody`): it always comes
            // with one more literal, even when node tests have one literal.
            if (self.p.max_node_literals >= 2 || bridger) && room >= 2 && !new_types.is_empty() {
                let mut scope = node.var_types.clone();
                scope.extend_from_slice(&new_types);
                let seconds =
                    self.gen_lits(&scope, w + new_types.len(), Some((w, w + new_types.len())));
                for (l2, nt2, _) in seconds {
                    let mut all_types = new_types.clone();
                    all_types.extend(nt2);
                    pairs.push(Test {
                        lits: vec![lit.clone(), l2],
                        new_types: all_types,
                    });
                }
            }
            if bridger && pairs.is_empty() {
                continue;
            }
            groups.push((
                Test {
                    lits: vec![lit],
                    new_types,
                },
                !bridger,
                pairs,
            ));
        }
        groups
    }

    /// The statistics of `node`'s examples; with counting on, each example's count is
    /// its number of substitutions at `node` (the true groundings of the path's clause).
    fn stats_of(&self, node: &NodeData) -> Stats {
        let mut s = Stats::default();
        if self.counts {
            for (i, &e) in node.ex.iter().enumerate() {
                s.add_counted(
                    self.w[e as usize],
                    self.y[e as usize],
                    node.n_rows(i) as f64,
                );
            }
            return s;
        }
        for &e in &node.ex {
            s.add(self.w[e as usize], self.y[e as usize]);
        }
        s
    }

    /// The statistics of `sub`'s examples counted as at the parent (`old[e]` = example
    /// e's count at the parent): what the parent's false branch loses to `sub`.
    fn stats_with(&self, sub: &NodeData, old: &[f64]) -> Stats {
        let mut s = Stats::default();
        for &e in &sub.ex {
            let e = e as usize;
            s.add_counted(self.w[e], self.y[e], old[e]);
        }
        s
    }

    /// The true-branch statistics of `test` at `node` and, second, the statistics the
    /// node's false branch loses to it. Without counting the two are the same;
    /// with counting (`old` = every example's count at `node`, by example id) the
    /// first counts each example's true groundings of the extended clause and the
    /// second its groundings at `node`.
    fn eval(
        &self,
        node: &NodeData,
        test: &Test,
        scratch: &mut Vec<u32>,
        old: Option<&[f64]>,
    ) -> (Stats, Stats) {
        if let Some(old) = old {
            return self.eval_counts(node, test, scratch, old);
        }
        let s = self.eval_exists(node, test, scratch);
        (s, s)
    }

    /// MLN-Boost's true-branch statistics: example e's count is the number of
    /// solutions of `test` summed over its substitutions at `node`, each solution
    /// enumerated by [`conj_count`] through the argument indexes. Like
    /// [`eval_exists`](Self::eval_exists), a test reading at most one variable bound
    /// above it is memoised per constant (its count, 8 bytes per constant).
    fn eval_counts(
        &self,
        node: &NodeData,
        test: &Test,
        scratch: &mut Vec<u32>,
        old: &[f64],
    ) -> (Stats, Stats) {
        let need = node.width + test.new_types.len();
        if scratch.len() < need {
            scratch.resize(need, 0);
        }
        let (read, many) = reads(node.width, test);
        let memo_on = !many && node.ex.len() > 64;
        let mut memo = if memo_on {
            vec![
                u64::MAX;
                if read.is_some() {
                    self.db.n_constants()
                } else {
                    1
                }
            ]
        } else {
            Vec::new()
        };
        let mut yes = Stats::default();
        let mut lost = Stats::default();
        for (i, &e) in node.ex.iter().enumerate() {
            let mut c: u64 = 0;
            for row in node.rows_of(i) {
                let key = read.map_or(0, |v| row[v as usize] as usize);
                if memo_on && memo[key] != u64::MAX {
                    c += memo[key];
                    continue;
                }
                scratch[..node.width].copy_from_slice(&row[..node.width]);
                let k = conj_count(self.db, &test.lits, 0, scratch);
                if memo_on {
                    memo[key] = k;
                }
                c += k;
            }
            if c > 0 {
                let e = e as usize;
                yes.add_counted(self.w[e], self.y[e], c as f64);
                lost.add_counted(self.w[e], self.y[e], old[e]);
            }
        }
        (yes, lost)
    }

    /// The true-branch statistics of `test` at `node` (an example is in it when one
    /// substitution satisfies the test).
    ///
    /// A test's truth for a substitution depends only on the variables bound before it
    /// that it reads; when it reads at most one, results are memoised per constant
    /// (one byte per constant), so each distinct value is joined once.
    fn eval_exists(&self, node: &NodeData, test: &Test, scratch: &mut Vec<u32>) -> Stats {
        let need = node.width + test.new_types.len();
        if scratch.len() < need {
            scratch.resize(need, 0);
        }
        let (read, many) = reads(node.width, test);
        let mut s = Stats::default();
        if !many && node.ex.len() > 64 {
            let memo_len = if read.is_some() {
                self.db.n_constants()
            } else {
                1
            };
            let mut memo = vec![0u8; memo_len];
            for (i, &e) in node.ex.iter().enumerate() {
                for row in node.rows_of(i) {
                    let key = read.map_or(0, |v| row[v as usize] as usize);
                    let hit = match memo[key] {
                        1 => true,
                        2 => false,
                        _ => {
                            scratch[..node.width].copy_from_slice(&row[..node.width]);
                            let h = conj_exists(self.db, &test.lits, 0, scratch);
                            memo[key] = if h { 1 } else { 2 };
                            h
                        }
                    };
                    if hit {
                        s.add(self.w[e as usize], self.y[e as usize]);
                        break;
                    }
                }
            }
            return s;
        }
        for (i, &e) in node.ex.iter().enumerate() {
            for row in node.rows_of(i) {
                scratch[..node.width].copy_from_slice(&row[..node.width]);
                if conj_exists(self.db, &test.lits, 0, scratch) {
                    s.add(self.w[e as usize], self.y[e as usize]);
                    break;
                }
            }
        }
        s
    }

    /// Scores of a group: the single test (if allowed) and every two-literal test.
    /// The first literal's solutions are materialised once; each second literal is then
    /// checked from them.
    fn score_group(
        &self,
        node: &NodeData,
        total: &Stats,
        group: &(Test, bool, Vec<Test>),
        scratch: &mut Vec<u32>,
        old: Option<&[f64]>,
    ) -> Vec<Option<f64>> {
        let min = self.p.min_leaf_examples;
        let score = |(yes, lost): (Stats, Stats)| {
            let no = total.sub(&lost);
            (yes.n >= min && no.n >= min).then(|| yes.sse() + no.sse())
        };
        let (first, single, pairs) = group;
        let mut out = Vec::with_capacity(pairs.len() + 1);
        if pairs.is_empty() {
            out.push(score(self.eval(node, first, scratch, old)));
            return out;
        }
        let w1 = node.width + first.new_types.len();
        let (t1, _, _) = split_node(
            self.db,
            node,
            &first.lits,
            w1,
            self.p.max_bindings_per_example,
            false,
        );
        if *single {
            let yes = self.stats_of(&t1);
            let lost = old.map_or(yes, |o| self.stats_with(&t1, o));
            out.push(score((yes, lost)));
        }
        for t in pairs {
            let second = Test {
                lits: t.lits[1..].to_vec(),
                new_types: t.new_types[first.new_types.len()..].to_vec(),
            };
            out.push(score(self.eval(&t1, &second, scratch, old)));
        }
        out
    }

    /// The seed examples of node `id` under BoostSRL's seed-based sampling: indices
    /// into `node.ex`, at most `seeds` of them drawn without replacement.
    fn seeds_of(&self, node: &NodeData, id: usize) -> Option<Vec<usize>> {
        use rand::SeedableRng as _;
        let s = self.p.seed_sampling?;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
            s.seed ^ (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let n = node.ex.len();
        let mut idx = rand::seq::index::sample(&mut rng, n, s.seeds.min(n)).into_vec();
        idx.sort_unstable();
        Some(idx)
    }

    /// Whether `test` holds for at least one of the node's examples at `seeds` (indices
    /// into `node.ex`).
    fn covers_a_seed(
        &self,
        node: &NodeData,
        lits: &[CLit],
        new_width: usize,
        seeds: &[usize],
        scratch: &mut Vec<u32>,
    ) -> bool {
        if scratch.len() < new_width.max(node.width) {
            scratch.resize(new_width.max(node.width), 0);
        }
        seeds.iter().any(|&i| {
            node.rows_of(i).any(|row| {
                scratch[..node.width].copy_from_slice(&row[..node.width]);
                conj_exists(self.db, lits, 0, scratch)
            })
        })
    }

    fn best_split(&self, node: &NodeData, id: usize) -> Option<Candidate> {
        if node.ex.len() < 2 * self.p.min_leaf_examples {
            return None;
        }
        let total = self.stats_of(node);
        // BoostSRL's maxAcceptableNodeScoreToStop: a branch whose variance per unit
        // weight is already this small becomes a leaf (never tested at the root).
        if node.depth > 0
            && self.p.max_acceptable_node_score > 0.0
            && total.w > 0.0
            && total.sse() / total.w <= self.p.max_acceptable_node_score
        {
            return None;
        }
        let mut groups = self.candidate_tests(node);
        if let Some(seeds) = self.seeds_of(node, id) {
            // BoostSRL scores only tests some seed example satisfies
            let mut scratch = Vec::new();
            let w = node.width;
            groups.retain_mut(|(first, single, pairs)| {
                let first_ok = self.covers_a_seed(
                    node,
                    &first.lits,
                    w + first.new_types.len(),
                    &seeds,
                    &mut scratch,
                );
                if !first_ok {
                    return false;
                }
                pairs.retain(|t| {
                    self.covers_a_seed(node, &t.lits, w + t.new_types.len(), &seeds, &mut scratch)
                });
                *single || !pairs.is_empty()
            });
        }
        if groups.is_empty() {
            return None;
        }
        let parent = total.sse();
        // With counting, every example's count at this node (by example id): the
        // false branch of a test keeps these counts (Khot et al.: the groundings of
        // the parent's clause).
        let old: Option<Vec<f64>> = self.counts.then(|| {
            let mut v = vec![0.0; self.examples.len()];
            for (i, &e) in node.ex.iter().enumerate() {
                v[e as usize] = node.n_rows(i) as f64;
            }
            v
        });
        let old = old.as_deref();
        let scored: Vec<Vec<Option<f64>>> = groups
            .par_iter()
            .map_init(Vec::new, |scratch, g| {
                self.score_group(node, &total, g, scratch, old)
            })
            .collect();
        let mut best: Option<(usize, usize, f64)> = None;
        for (gi, scores) in scored.iter().enumerate() {
            for (k, s) in scores.iter().enumerate() {
                if let Some(s) = *s
                    && best.is_none_or(|(_, _, b)| s < b)
                {
                    best = Some((gi, k, s));
                }
            }
        }
        let (gi, k, score) = best?;
        let (first, single, pairs) = &groups[gi];
        let test = match (single, k) {
            (true, 0) => first.clone(),
            (true, k) => pairs[k - 1].clone(),
            (false, k) => pairs[k].clone(),
        };
        let gain = parent - score;
        // Ignore rounding-level gains (relative to the node's Σ w·y²).
        (gain > 1e-10 * total.q && gain > 0.0).then_some(Candidate { test, gain })
    }

    fn literal_of(&self, lit: &CLit) -> Literal {
        let pred = lit.rel.map_or_else(String::new, |r| {
            self.db.relations()[r as usize].name().to_owned()
        });
        let args = lit
            .args
            .iter()
            .map(|a| match *a {
                CArg::Bound(s) | CArg::Free(s) => Term::Var(s),
                CArg::Const(c) => Term::Const(self.db.constant_name(c).to_owned()),
            })
            .collect();
        Literal { pred, args }
    }

    /// The body (a node holding the examples it covers with their true groundings) of
    /// the best clause for the learner's targets (the residuals), by beam search over
    /// bodies of 1..=`max_len` literals; with its weight `Σ rᵢnᵢ / Σ nᵢ²`, its reduction of
    /// squared error `(Σ rᵢnᵢ)² / Σ nᵢ²` and the number of examples whose groundings were
    /// cut at `max_bindings_per_example`. `None` when no body covers
    /// `min_leaf_examples` examples or reduces the error above rounding.
    ///
    /// As BoostSRL's seeds are drawn from the examples no clause covers yet, the
    /// clause returned must cover at least one example that `covered` marks false.
    fn best_clause(
        &self,
        max_len: usize,
        beam: usize,
        zeros: &[f64],
        covered: &[bool],
    ) -> Option<(NodeData, f64, f64, usize)> {
        let n = self.examples.len();
        let mut root = NodeData::root(self.examples, (0..n as u32).collect());
        root.var_types = self.head_types.clone();
        let total_q: f64 = self.y.iter().map(|r| r * r).sum();
        let mut frontier: Vec<NodeData> = vec![root];
        let mut best: Option<(f64, NodeData, usize)> = None;
        let cap = self.p.max_bindings_per_example;
        for _ in 0..max_len.min(self.p.max_clause_length) {
            // every one-literal refinement of every body in the beam
            let mut cands: Vec<(usize, Test)> = Vec::new();
            for (b, node) in frontier.iter().enumerate() {
                for (lit, new_types, _) in self.gen_lits(&node.var_types, node.width, None) {
                    if lit.all_bound && node.path.contains(&lit) {
                        continue;
                    }
                    cands.push((
                        b,
                        Test {
                            lits: vec![lit],
                            new_types,
                        },
                    ));
                }
            }
            let min = self.p.min_leaf_examples;
            let scores: Vec<Option<f64>> = cands
                .par_iter()
                .map_init(Vec::new, |scratch, (b, t)| {
                    let (yes, _) = self.eval_counts(&frontier[*b], t, scratch, zeros);
                    (yes.n >= min && yes.nn > 0.0).then(|| yes.ny * yes.ny / yes.nn)
                })
                .collect();
            let mut order: Vec<usize> = (0..cands.len()).filter(|&k| scores[k].is_some()).collect();
            // best first; ties keep the generation order (deterministic)
            order.sort_by(|&a, &b| {
                scores[b]
                    .partial_cmp(&scores[a])
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(a.cmp(&b))
            });
            let mut next = Vec::with_capacity(beam);
            for k in order {
                let score = scores[k].unwrap_or(0.0);
                let best_score = best.as_ref().map(|(s, _, _)| *s);
                // the beam is full and no later body can beat the best clause
                if next.len() >= beam && best_score.is_some_and(|b| score <= b) {
                    break;
                }
                let (b, t) = &cands[k];
                let node = &frontier[*b];
                let new_width = node.width + t.new_types.len();
                let (mut child, _, cut) = split_node(self.db, node, &t.lits, new_width, cap, false);
                child.var_types = node.var_types.clone();
                child.var_types.extend_from_slice(&t.new_types);
                child.path = node.path.clone();
                child.path.extend(t.lits.iter().cloned());
                let new_coverage = child.ex.iter().any(|&e| !covered[e as usize]);
                if new_coverage && best_score.is_none_or(|s| score > s) {
                    best = Some((score, child.clone(), cut));
                }
                if next.len() < beam {
                    next.push(child);
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        let (gain, node, cut) = best?;
        if !(gain > 1e-10 * total_q && gain > 0.0) {
            return None;
        }
        let (mut ny, mut nn) = (0.0, 0.0);
        for (i, &e) in node.ex.iter().enumerate() {
            let c = node.n_rows(i) as f64;
            ny += c * self.y[e as usize];
            nn += c * c;
        }
        Some((node, ny / nn, gain, cut))
    }

    fn grow(self) -> (RelationalRegressionTree, Vec<f64>) {
        let n = self.examples.len();
        let mut root = NodeData::root(self.examples, (0..n as u32).collect());
        root.var_types = self.head_types.clone();
        let mut nodes: Vec<TreeNode> = vec![TreeNode::Leaf {
            value: 0.0,
            n_examples: n,
        }];
        let first = self.best_split(&root, 0);
        let root_unsplittable = first.is_none();
        let mut open: Vec<(usize, NodeData, Option<Candidate>)> = vec![(0, root, first)];
        let mut leaves = 1;
        let mut truncated = 0;
        while leaves < self.p.max_leaves {
            let mut pick: Option<usize> = None;
            for (k, (_, _, c)) in open.iter().enumerate() {
                if let Some(c) = c
                    && pick.is_none_or(|j| open[j].2.as_ref().is_some_and(|b| c.gain > b.gain))
                {
                    pick = Some(k);
                }
            }
            let Some(k) = pick else { break };
            let (idx, node, cand) = open.swap_remove(k);
            let Some(cand) = cand else { break };
            let new_width = node.width + cand.test.new_types.len();
            let (mut yes, no, cut) = split_node(
                self.db,
                &node,
                &cand.test.lits,
                new_width,
                self.p.max_bindings_per_example,
                true,
            );
            truncated += cut;
            yes.var_types = node.var_types.clone();
            yes.var_types.extend_from_slice(&cand.test.new_types);
            yes.path = node.path.clone();
            yes.path.extend(cand.test.lits.iter().cloned());
            let yi = nodes.len();
            let ni = yi + 1;
            nodes.push(TreeNode::Leaf {
                value: 0.0,
                n_examples: yes.ex.len(),
            });
            nodes.push(TreeNode::Leaf {
                value: 0.0,
                n_examples: no.ex.len(),
            });
            nodes[idx] = TreeNode::Split {
                test: cand.test.lits.iter().map(|l| self.literal_of(l)).collect(),
                yes: yi,
                no: ni,
                gain: cand.gain,
            };
            leaves += 1;
            let cy = if leaves < self.p.max_leaves {
                self.best_split(&yes, yi)
            } else {
                None
            };
            let cn = if leaves < self.p.max_leaves {
                self.best_split(&no, ni)
            } else {
                None
            };
            open.push((yi, yes, cy));
            open.push((ni, no, cn));
        }
        let mut values = vec![0.0; n];
        for (idx, node, _) in &open {
            let s = self.stats_of(node);
            let v = if root_unsplittable && self.p.unsplit_root == UnsplitRoot::Zero {
                0.0
            } else {
                s.mean()
            };
            nodes[*idx] = TreeNode::Leaf {
                value: v,
                n_examples: node.ex.len(),
            };
            for (k, &e) in node.ex.iter().enumerate() {
                values[e as usize] = if self.counts {
                    v * node.n_rows(k) as f64
                } else {
                    v
                };
            }
        }
        (
            RelationalRegressionTree {
                target: self.examples.pred.clone(),
                arity: self.examples.arity,
                nodes,
                truncated,
                per_grounding: self.counts,
            },
            values,
        )
    }
}
