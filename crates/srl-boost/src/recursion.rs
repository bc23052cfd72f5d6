//! Recursive targets (BoostSRL's `setParam: recursion=true`): the target predicate may
//! be tested in its own clauses, through the predicate `recursive_T`, and prediction
//! infers the test atoms jointly by Gibbs sampling.
//!
//! **Learning.** With recursion on, the atoms of the target `T` become a *query
//! relation* `recursive_T` ([`crate::DatabaseBuilder::add_query_relation`]): every example
//! is a row, true for the positives and false for the negatives (BoostSRL adds the
//! positives as `recursive_T` facts, `WILLSetup.prepareFactsForJoint`). Modes on
//! `recursive_T` (usually with BoostSRL's `` ` `` "not a head variable" argument,
//! [`crate::ArgKind::NotHead`]) let a node test ask about *other* atoms of the target, e.g.
//! `smokes(A) :- friends(A, B), recursive_smokes(B)`. The example's own atom is never
//! a solution of such a literal: an RDN's conditional distribution of `Y_i` is given the
//! other variables (Neville & Jensen 2007, Sec. 3), so `friends(B, A),
//! recursive_smokes(A)` cannot read the label being predicted.
//!
//! **Prediction.** The test atoms' truths are unknown, so the conditionals are chained
//! by Gibbs sampling as BoostSRL's `SingleModelSampler` does: every test atom starts
//! false; a sweep visits the atoms in order and draws each from
//! `P(Y_i = 1 | the others' current values) = sigmoid(ψ(i))`, setting its
//! `recursive_T` row at once; `burn_in` sweeps are discarded, then `samples` sweeps
//! are kept (BoostSRL: 20 and 200). The reported probability of an atom is the mean of
//! its conditional probability over the kept sweeps (the Rao-Blackwellised estimate of
//! the marginal; BoostSRL counts the sampled values, which has the same expectation and
//! a larger variance). Trees that test no `recursive_T` atom are evaluated once; only
//! the others are re-evaluated per step.

use rand::SeedableRng as _;
use serde::{Deserialize, Serialize};

use crate::BoostError;
use crate::boost::sigmoid;
use crate::logic::{Background, Database, Examples, PredId};
use crate::tree::RelationalRegressionTree;

/// BoostSRL's prefix of a recursive target's predicate (`WILLSetup.recursivePredPrefix`).
pub const RECURSIVE_PREFIX: &str = "recursive_";

/// BoostSRL's burn-in sweeps of recursive inference (`SingleModelSampler.burnInSteps`).
pub const BOOSTSRL_BURN_IN: usize = 20;

/// BoostSRL's kept sweeps of recursive inference (`SingleModelSampler.numOfSamples`).
pub const BOOSTSRL_SAMPLES: usize = 200;

/// The predicate through which clauses test target `target`'s other atoms:
/// `recursive_<target>`, spelled as the background's modes spell it when a mode names
/// it (compared ignoring ASCII case, as BoostSRL's `workedUnder` / `recursive_workedunder`
/// files need), else `recursive_<target>`.
///
/// # Example
/// ```
/// use srl_boost::{parse_background, recursive_predicate};
/// let bk = parse_background("mode: recursive_workedunder(+person, `person).", "bk.txt".as_ref()).unwrap();
/// assert_eq!(recursive_predicate(&bk, "workedUnder"), "recursive_workedunder");
/// assert_eq!(recursive_predicate(&bk, "smokes"), "recursive_smokes");
/// ```
pub fn recursive_predicate(bk: &Background, target: &str) -> String {
    let name = format!("{RECURSIVE_PREFIX}{target}");
    bk.modes
        .iter()
        .find(|m| m.pred.eq_ignore_ascii_case(&name))
        .map_or(name, |m| m.pred.clone())
}

/// Warnings about modes on the targets' recursive predicates that cannot take effect,
/// one message per target concerned (front-ends print them: `srl boost learn` on stderr,
/// srl-py as `UserWarning`s): with `recursion` off, a mode on `recursive_T` matches no
/// atom (BoostSRL treats the predicate as unknown as well); with it on, a target whose
/// `recursive_T` no mode declares can learn no recursive clause.
///
/// # Example
/// ```
/// use srl_boost::{parse_background, recursion::mode_warnings};
/// let bk = parse_background("mode: p(+t).\nmode: recursive_p(`t).", "bk.txt".as_ref()).unwrap();
/// assert_eq!(mode_warnings(&bk, &["p".to_owned()], true).len(), 0);
/// assert!(mode_warnings(&bk, &["p".to_owned()], false)[0].contains("recursion=true"));
/// ```
pub fn mode_warnings(bk: &Background, targets: &[String], recursion: bool) -> Vec<String> {
    let mut out = Vec::new();
    for t in targets {
        let name = recursive_predicate(bk, t);
        let declared = bk.modes.iter().any(|m| m.pred == name);
        if declared && !recursion {
            out.push(format!(
                "mode {name}: the background does not set `setParam: recursion=true.`, so {name} has no atoms and no clause can test it"
            ));
        } else if recursion && !declared {
            out.push(format!(
                "setParam: recursion=true, but no mode declares {name}: no clause of {t} can test its other atoms"
            ));
        }
    }
    out
}

/// `db` with the query relation `name` over `examples`' atoms, each true as given by
/// `truth` (one per example): the database recursive clauses are learned and sampled
/// on. Returns it with the relation and each example's row.
///
/// # Errors
/// [`BoostError::InvalidParam`] if `name` already has facts in `db` or the lengths
/// disagree; [`BoostError::Arity`] if `name` exists with another arity.
pub(crate) fn with_recursive_atoms(
    db: &Database,
    name: &str,
    examples: &Examples,
    truth: &[bool],
) -> Result<(Database, PredId, Vec<u32>), BoostError> {
    let mut atoms = Vec::with_capacity(examples.len() * examples.arity);
    for i in 0..examples.len() {
        atoms.extend_from_slice(examples.args(i));
    }
    let mut b = db.clone().into_builder();
    let (p, rows) = b.add_query_relation(name, examples.arity, &atoms, truth)?;
    Ok((b.build(), p, rows))
}

/// Whether `tree` tests predicate `name` (ASCII case ignored) in some node.
pub(crate) fn tree_tests(tree: &RelationalRegressionTree, name: &str) -> bool {
    tree.nodes().iter().any(|n| match n {
        crate::tree::TreeNode::Split { test, .. } => {
            test.iter().any(|l| l.pred.eq_ignore_ascii_case(name))
        }
        crate::tree::TreeNode::Leaf { .. } => false,
    })
}

/// The Gibbs sampler of a recursive model's test atoms ([module docs](self)).
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `burn_in` | 20 ([`BOOSTSRL_BURN_IN`]) | sweeps discarded before the estimate | ≥ 0 |
/// | `samples` | 200 ([`BOOSTSRL_SAMPLES`]) | sweeps averaged into the marginals | ≥ 1 |
/// | `seed` | 0 | seed of the ChaCha8 generator: the same seed gives the same marginals | any |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GibbsInference {
    /// Sweeps discarded first (burn-in).
    pub burn_in: usize,
    /// Sweeps whose conditional probabilities are averaged.
    pub samples: usize,
    /// Seed of the sampler's generator.
    pub seed: u64,
}

impl Default for GibbsInference {
    /// BoostSRL's 20 burn-in and 200 kept sweeps, seed 0.
    fn default() -> Self {
        Self {
            burn_in: BOOSTSRL_BURN_IN,
            samples: BOOSTSRL_SAMPLES,
            seed: 0,
        }
    }
}

impl GibbsInference {
    /// Checks the settings.
    ///
    /// # Errors
    /// [`BoostError::InvalidParam`] (`samples`) for `samples == 0`.
    pub fn validate(&self) -> Result<(), BoostError> {
        if self.samples == 0 {
            return Err(BoostError::InvalidParam {
                name: "samples",
                message: "Gibbs sampling needs at least one kept sweep".into(),
            });
        }
        Ok(())
    }
}

/// The marginals of `examples` under a recursive model with ψ₀ `psi0`, step `step`,
/// trees `trees` and recursive predicate `name`, by Gibbs sampling over the examples'
/// atoms ([module docs](self)). `db` must not state facts of `name`.
///
/// # Errors
/// [`BoostError::TargetMismatch`] for examples of another predicate (from the trees);
/// the errors of [`GibbsInference::validate`] and of adding the query relation.
///
/// # Complexity
/// `(burn_in + samples) × n` evaluations of the trees that test `name` on one
/// example each, plus one evaluation of the others over all examples.
pub(crate) fn gibbs_marginals(
    trees: &[RelationalRegressionTree],
    psi0: f64,
    step: f64,
    name: &str,
    db: &Database,
    examples: &Examples,
    inference: &GibbsInference,
) -> Result<Vec<f64>, BoostError> {
    inference.validate()?;
    let n = examples.len();
    let (mut db, p, rows) = with_recursive_atoms(db, name, examples, &vec![false; n])?;
    let (dynamic, fixed): (
        Vec<&RelationalRegressionTree>,
        Vec<&RelationalRegressionTree>,
    ) = trees.iter().partition(|t| tree_tests(t, name));
    let base = crate::boost::log_odds(fixed, psi0, step, &db, examples)?;
    if dynamic.is_empty() {
        return Ok(base.into_iter().map(sigmoid).collect());
    }
    let compiled: Vec<crate::tree::CompiledTree> = dynamic.iter().map(|t| t.compile(&db)).collect();
    let mut scratch = crate::tree::EvalScratch::default();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(inference.seed);
    let mut sum = vec![0.0; n];
    for sweep in 0..inference.burn_in + inference.samples {
        let keep = sweep >= inference.burn_in;
        for i in 0..n {
            let mut psi = base[i];
            for t in &compiled {
                psi += step * t.value(&db, examples.args(i), &mut scratch);
            }
            let pr = sigmoid(psi);
            if keep {
                sum[i] += pr;
            }
            let u: f64 = rand::RngExt::random(&mut rng);
            db.set_truth(p, rows[i], u < pr)?;
        }
    }
    let k = inference.samples as f64;
    Ok(sum.into_iter().map(|s| s / k).collect())
}
