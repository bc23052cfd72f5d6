//! MLN-Boost by clauses (Khot, Natarajan, Kersting & Shavlik, ICDM 2011, the
//! clause-based representation of the gradient; BoostSRL `-mln -mlnClause`): each
//! boosting step learns a *set* of weighted clauses instead of one tree.
//!
//! At step m the functional gradients `Δᵢ = I(yᵢ = 1) − P(yᵢ = 1 | MB)` of the step's
//! examples are fitted by up to C clauses `w_c : target(head) ⇐ body_c`, one at a time:
//! a clause's value for example i is `w_c · n_c(i)`, `n_c(i)` the number of groundings of
//! its body's new variables that make the body true for the example (its true
//! groundings), and its weight is the count-weighted least-squares fit
//! `w = Σ rᵢ nᵢ / Σ nᵢ²` to the current residuals `r` (first the gradients). The body is
//! found by beam search (BoostSRL's inner loop, beam width 10): bodies grow one mode
//! literal at a time up to L literals, each scored by the reduction of squared error
//! `(Σ rᵢ nᵢ)² / Σ nᵢ²`; the best body of any length wins. Then the covered examples'
//! residuals lose the clause's value, `rᵢ ← rᵢ − w·nᵢ`, and the next clause is fitted to
//! what is left (Khot et al.: clauses fitted in turn to the gradients' residuals). An
//! example's ψ is ψ₀ plus, over all steps and clauses, `step · w_c · n_c`.
//!
//! Covering, as BoostSRL's ILP outer loop does it: a step stops adding clauses once 90 %
//! of its examples are covered by some clause (`minFractionOfPosCoveredToStop`), and as
//! BoostSRL draws each clause's seed from the uncovered examples, a clause must cover at
//! least one example no earlier clause of the step covers. On IMDB `workedUnder` both
//! BoostSRL and srl thus learn two clauses in the first step (`actor(B)`, `director(B)`,
//! which together cover everyone).
//!
//! How many clauses and how long: BoostSRL's `-numMLNClause` (default 5) and
//! `-mlnClauseLen` (default 2) are overwritten by its learning loop before every step
//! (`LearnBoostedRDN.learnRDN`): step m (from 0) learns at most `20 / (m + 1)` clauses of
//! at most `m / 4 + 1` literals (integer division), so its flags have no effect. That
//! schedule is [`ClauseSchedule::BoostSrl`], the default; [`ClauseSchedule::Fixed`] uses
//! the flags' values at every step, as their names promise.
//!
//! Two differences from BoostSRL's code, both corrections: BoostSRL subtracts the weight
//! `w` from a covered example's residual whatever its count (`ILPouterLoop`, "Update
//! gradients"), where the clause's value is `w·n`; and its inner loop draws candidate
//! literals from seed examples, where this search scores every mode literal.
//!
//! A clause is stored as a one-split [`RelationalRegressionTree`](crate::RelationalRegressionTree) with
//! [`per_grounding`](crate::RelationalRegressionTree::per_grounding) set: the test is the body,
//! the true leaf the weight, the false leaf 0, so the model files, prediction and the
//! Alchemy printer of tree-based MLN-Boost serve it unchanged.

use serde::{Deserialize, Serialize};

use crate::BoostError;

/// How many clauses, of how many literals, each boosting step learns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClauseSchedule {
    /// BoostSRL's loop: step m (from 0) learns at most `20 / (m + 1)` clauses of at most
    /// `m / 4 + 1` literals (20, 10, 6, 5, 4, 3, 2, 2, 2, 2 clauses of 1, 1, 1, 1, 2, 2,
    /// 2, 2, 3, 3 literals for ten steps).
    BoostSrl,
    /// The same number of clauses and literals at every step (BoostSRL's
    /// `-numMLNClause` and `-mlnClauseLen`, as their names say).
    Fixed {
        /// Clauses per step (≥ 1).
        clauses: usize,
        /// Literals per clause body (≥ 1).
        length: usize,
    },
}

impl ClauseSchedule {
    /// `(clauses, literals)` of step `m` (0-based).
    ///
    /// # Example
    /// ```
    /// use srl_boost::ClauseSchedule;
    /// assert_eq!(ClauseSchedule::BoostSrl.at_step(0), (20, 1));
    /// assert_eq!(ClauseSchedule::BoostSrl.at_step(4), (4, 2));
    /// assert_eq!(ClauseSchedule::BoostSrl.at_step(9), (2, 3));
    /// assert_eq!(ClauseSchedule::Fixed { clauses: 5, length: 2 }.at_step(7), (5, 2));
    /// ```
    pub fn at_step(&self, m: usize) -> (usize, usize) {
        match *self {
            ClauseSchedule::BoostSrl => (20 / (m + 1), m / 4 + 1),
            ClauseSchedule::Fixed { clauses, length } => (clauses, length),
        }
    }
}

/// BoostSRL's beam width of the clause search (`LearnBoostedRDN`, `beamWidth = 10`).
pub const BOOSTSRL_CLAUSE_BEAM: usize = 10;

/// Settings of MLN-Boost by clauses ([module docs](self)).
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `schedule` | [`ClauseSchedule::BoostSrl`] | clauses and literals per step | `Fixed` values ≥ 1 |
/// | `beam_width` | 10 ([`BOOSTSRL_CLAUSE_BEAM`]) | bodies kept per length in the search | ≥ 1 |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MlnClauseParams {
    /// Clauses and body length per step.
    pub schedule: ClauseSchedule,
    /// Beam width of the body search.
    pub beam_width: usize,
}

impl Default for MlnClauseParams {
    /// BoostSRL's schedule and beam width.
    fn default() -> Self {
        Self {
            schedule: ClauseSchedule::BoostSrl,
            beam_width: BOOSTSRL_CLAUSE_BEAM,
        }
    }
}

/// The names a front-end gives the clause options, for [`MlnClauseParams::from_options`]'s
/// messages: `srl boost learn`'s flags (`--mln-clause`, ...) or srl-py's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClauseOptionNames<'a> {
    /// The switch (`--mln-clause`, `mln_clause=True`).
    pub enable: &'a str,
    /// Clauses per step (`--num-mln-clauses`, `n_mln_clauses`).
    pub clauses: &'a str,
    /// Literals per clause (`--mln-clause-length`, `mln_clause_length`).
    pub length: &'a str,
}

impl MlnClauseParams {
    /// The clause learner of a run from a front-end's options, checked once for every
    /// front-end (`srl boost learn`, srl-py's `BoostedMLN`): `None` when `enable` is
    /// false; BoostSRL's schedule ([`ClauseSchedule::BoostSrl`]) when neither size is
    /// given; a [`ClauseSchedule::Fixed`] of both sizes otherwise. BoostSRL's loop
    /// overrides either `-numMLNClause` or `-mlnClauseLen` alone, so the two go together.
    ///
    /// # Errors
    /// [`BoostError::InvalidParam`] (`mln_clause`), with a message naming the options by
    /// `names`, for one size without the other, a size without `enable`, or a zero.
    ///
    /// # Example
    /// ```
    /// use srl_boost::{ClauseOptionNames, ClauseSchedule, MlnClauseParams};
    /// let names = ClauseOptionNames { enable: "--mln-clause", clauses: "--num-mln-clauses", length: "--mln-clause-length" };
    /// assert_eq!(MlnClauseParams::from_options(false, None, None, names).unwrap(), None);
    /// let p = MlnClauseParams::from_options(true, Some(3), Some(2), names).unwrap().unwrap();
    /// assert_eq!(p.schedule, ClauseSchedule::Fixed { clauses: 3, length: 2 });
    /// assert!(MlnClauseParams::from_options(true, Some(3), None, names).is_err());
    /// assert!(MlnClauseParams::from_options(false, Some(3), Some(2), names).is_err());
    /// ```
    pub fn from_options(
        enable: bool,
        clauses: Option<usize>,
        length: Option<usize>,
        names: ClauseOptionNames<'_>,
    ) -> Result<Option<Self>, BoostError> {
        let bad = |message: String| {
            Err(BoostError::InvalidParam {
                name: "mln_clause",
                message,
            })
        };
        let show = |v: Option<usize>| v.map_or_else(|| "none".to_owned(), |v| v.to_string());
        let fixed = match (clauses, length) {
            (None, None) => None,
            (Some(c), Some(l)) => Some((c, l)),
            (c, l) => {
                return bad(format!(
                    "{} {} and {} {}: the two go together (BoostSRL's loop overrides either one alone); give both or neither",
                    names.clauses,
                    show(c),
                    names.length,
                    show(l)
                ));
            }
        };
        if !enable {
            if fixed.is_some() {
                return bad(format!(
                    "{} / {} shape the clauses of {}; give {} too",
                    names.clauses, names.length, names.enable, names.enable
                ));
            }
            return Ok(None);
        }
        let schedule = match fixed {
            None => ClauseSchedule::BoostSrl,
            Some((0, _)) => {
                return bad(format!(
                    "{} 0: learn at least one clause per step",
                    names.clauses
                ));
            }
            Some((_, 0)) => {
                return bad(format!(
                    "{} 0: a clause body has at least one literal",
                    names.length
                ));
            }
            Some((clauses, length)) => ClauseSchedule::Fixed { clauses, length },
        };
        Ok(Some(Self {
            schedule,
            ..Self::default()
        }))
    }

    /// Checks the settings.
    ///
    /// # Errors
    /// [`BoostError::InvalidParam`] for a beam width of 0 or a `Fixed` schedule with 0
    /// clauses or 0 literals.
    pub fn validate(&self) -> Result<(), BoostError> {
        let bad = |name, message: &str| {
            Err(BoostError::InvalidParam {
                name,
                message: message.to_owned(),
            })
        };
        if self.beam_width == 0 {
            return bad("beam_width", "must be at least 1");
        }
        if let ClauseSchedule::Fixed { clauses, length } = self.schedule {
            if clauses == 0 {
                return bad("clauses", "must be at least 1 per step");
            }
            if length == 0 {
                return bad("clause_length", "must be at least 1 literal");
            }
        }
        Ok(())
    }
}
