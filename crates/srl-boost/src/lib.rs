//! # srl-boost: relational regression trees, RFGB and Soft-RFGB
//!
//! The srl book's chapter on this crate: [srl-boost](../../srl-boost.html); the papers' reproductions:
//! [Reproductions](../../papers/index.html) (links work in the book built by `cargo xtask book`).
//!
//! First-order learning on BoostSRL-format data. Sits beside srl-learn and srl-bayes
//! (it depends on none of them; see ARCHITECTURE.md): xtask feeds it files and scores
//! its probabilities with srl-eval.
//!
//! * Data ([`logic`]): constants interned per [`Database`], predicates, ground facts with
//!   argument-position indexes, [`Examples`] of a target, [`ModeDecl`]s and the rest of a
//!   [`Background`] file.
//! * Reading ([`reader`]): [`read_atoms`], [`read_background`], [`load_split`] accept the
//!   BoostSRL files as shipped; errors name file and line.
//! * Retargeting ([`retarget`]): a fact predicate as target with closed-world negatives
//!   ([`retarget_closed_world`], WebKB `courseta`), a UCI table as facts
//!   ([`heart_from_uci`], [`heart_from_uci_tables`]: the four UCI databases with
//!   `num == 1` positive, Yang et al.'s 265 / 655).
//! * [`RelationalRegressionTree`] via [`TreeParams::fit`]: TILDE-style first-order
//!   regression trees, best-first, at most L leaves.
//! * [`SoftRfgb`] via [`SoftRfgbParams::fit`]: RFGB (α = β = 0) and Soft-RFGB
//!   (Yang et al. 2014, Eq. 3, Fig. 1a), with BoostSRL's conventions by default:
//!   ψ₀ = −1.8 ([`BOOSTSRL_LOG_PRIOR`]), negatives drawn 2:1 afresh for every tree
//!   ([`NegativeSampling::PerTree`]), BoostSRL's tree limits ([`TreeParams::boostsrl`];
//!   [`TreeParams::two_literal`] is the named two-literal alternative), an
//!   unsplittable root returning 0, and the background file's `setParam:` lines applied
//!   and reported ([`settings`], [`SoftRfgb::settings`]).
//! * [`RegressionRfgb`] via [`RegressionRfgbParams::fit`] ([`regression`]): RDN-Boost
//!   regression (BoostSRL `-reg`), least-squares boosting on `regressionExample(...)`
//!   targets read by [`load_regression_split`].
//! * [`MlnBoost`] via [`MlnBoostParams::fit`] ([`mln`]): MLN-Boost (Khot et al. 2011),
//!   boosted Markov logic networks, the tree-based learner of BoostSRL's `-mln`: each
//!   tree's paths are weighted clauses, an example's regression value is the clause
//!   weight times its number of true groundings ([`TreeParams::fit_mln`]), and
//!   `Display` prints the clauses in Alchemy's MLN syntax.
//! * Advice ([`advice`]): knowledge-based RFGB (Odom et al. 2015, BoostSRL
//!   `-adviceFile`): [`Advice::read`] reads the advice and clause files,
//!   [`SoftRfgbParams::fit_with_advice`] learns with the gradient
//!   `w·(n_t − n_f) + (1 − w)·(I − p)` ([`advice_gradient`]).
//! * One call per target for the front-ends ([`fit`]): [`fit_boosted`] learns the
//!   [`BoostKind`] a run asks for (MLN-Boost, RFGB with advice, RFGB / Soft-RFGB) and
//!   [`advice_weight`] checks BoostSRL's `-adviceWt` (default 0.5).
//! * Several targets ([`joint`]): BoostSRL's `-target a,b,c`, one model per target
//!   ([`fit_targets`] over [`FolderAtoms`]), the other targets' positives as facts.
//!
//! ```
//! use rand::SeedableRng as _;
//! use srl_boost::{parse_atoms, parse_background, build_split, OtherTargets, SoftRfgbParams};
//! use std::path::Path;
//!
//! let bk = parse_background("mode: smokes(+person).\nmode: friends(+person,-person).\nmode: cancer(+person).", Path::new("bk.txt")).unwrap();
//! let facts = parse_atoms("smokes(a).\nsmokes(b).\nfriends(c,a).\nfriends(d,e).", Path::new("facts.txt")).unwrap();
//! let pos = parse_atoms("cancer(a).\ncancer(b).\ncancer(c).", Path::new("pos.txt")).unwrap();
//! let neg = parse_atoms("cancer(d).\ncancer(e).\ncancer(f).", Path::new("neg.txt")).unwrap();
//! let split = build_split(&facts, &pos, &neg, "cancer", &bk, OtherTargets::Ignore, Path::new("facts.txt")).unwrap();
//! let mut params = SoftRfgbParams::rfgb();
//! params.tree.min_leaf_examples = 1;
//! let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0);
//! let model = params.fit(&split.db, &bk, &split.examples, &mut rng).unwrap();
//! let p = model.predict_proba(&split.db, &split.examples).unwrap();
//! assert!(p[0] > 0.5 && p[5] < 0.5);
//! ```

pub mod advice;
pub mod boost;
pub mod clauses;
pub mod error;
pub mod fit;
pub mod joint;
pub mod logic;
pub mod mln;
pub mod model_file;
pub mod reader;
pub mod recursion;
pub mod regression;
pub mod retarget;
pub mod rules;
pub mod settings;
pub mod tree;

pub use advice::{
    Advice, AdviceClause, AdvicePiece, AdviceUse, BOOSTSRL_ADVICE_WEIGHT, advice_gradient,
};
pub use boost::{
    BOOSTSRL_LOG_PRIOR, NegativeSampling, Rfgb, RfgbParams, SoftRfgb, SoftRfgbParams, sigmoid,
    soft_gradient,
};
pub use clauses::{BOOSTSRL_CLAUSE_BEAM, ClauseOptionNames, ClauseSchedule, MlnClauseParams};
pub use error::BoostError;
pub use fit::{BoostKind, BoostedModel, advice_weight, fit_boosted};
pub use joint::{FolderAtoms, TargetFit, fit_targets, parse_targets, target_path};
pub use logic::{
    ArgKind, Background, Database, DatabaseBuilder, Examples, Interner, ModeArg, ModeDecl, PredId,
    Relation,
};
pub use mln::{MlnBoost, MlnBoostParams, mln_gradient};
pub use reader::{
    Atom, OtherTargets, Split, SplitSummary, build_split, load_split, parse_atoms,
    parse_background, read_atoms, read_background,
};
pub use recursion::{
    BOOSTSRL_BURN_IN, BOOSTSRL_SAMPLES, GibbsInference, RECURSIVE_PREFIX, recursive_predicate,
};
pub use regression::{
    RegressionRfgb, RegressionRfgbParams, RegressionSplit, build_regression_split,
    load_regression_split, regression_examples,
};
pub use retarget::{
    HEART_COLUMNS, HeartData, HeartPositive, heart_from_uci, heart_from_uci_tables,
    positives_into_facts, retarget_closed_world, retarget_with_domains,
};
pub use settings::{SettingOutcome, SettingsReport, apply_settings};
pub use tree::{
    Literal, RelationalRegressionTree, SeedSampling, Term, TreeNode, TreeParams, UnsplitRoot,
};
