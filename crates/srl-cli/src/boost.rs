//! `srl boost learn | predict | show`: RFGB, Soft-RFGB and MLN-Boost on BoostSRL-format
//! folders.
//!
//! A BoostSRL folder `DIR` holds `PREFIX_pos.txt`, `PREFIX_neg.txt`, `PREFIX_facts.txt`
//! and usually `PREFIX_bk.txt` (modes, `setParam:`, `import: "../bk.txt".`), PREFIX being
//! `train` for `learn` and `test` for `predict`, as BoostSRL reads them.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand, ValueEnum};
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use srl_boost::{
    Background, Database, Examples, GibbsInference, MlnBoost, MlnBoostParams, NegativeSampling,
    OtherTargets, RegressionRfgb, RegressionRfgbParams, SettingsReport, SoftRfgb, SoftRfgbParams,
    TreeParams,
};

use crate::model::{
    ModelFile, ModelFileIo as _, ModelKind as _, Provenance, ProvenanceNow as _, peek_kind,
};
use crate::ui::{Ui, check_outputs, write_to};

/// `srl boost ...`.
#[derive(Subcommand, Debug)]
pub enum BoostCmd {
    /// Learn an RFGB / Soft-RFGB / MLN-Boost model from a BoostSRL folder (BoostSRL `-l
    /// -train DIR`).
    Learn(LearnArgs),
    /// Score a BoostSRL test folder with a learned model (BoostSRL `-i -model DIR -test DIR`).
    Predict(PredictArgs),
    /// Print a model's trees as clauses.
    Show(ShowArgs),
}

/// Tree and boosting settings to start from.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Preset {
    /// BoostSRL's settings: `TreeParams::boostsrl` (13 leaves = 12 inner nodes, depth 5, one literal per
    /// node test) and the library's boosting defaults (ψ0 = −1.8, 2:1 negatives drawn
    /// afresh for every tree).
    Boostsrl,
    /// `TreeParams::two_literal` (8 leaves, depth 3, node tests of up to two literals) with
    /// the same boosting settings.
    TwoLiteral,
}

/// What the boosted trees represent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModelType {
    /// A relational dependency network: RFGB / Soft-RFGB (BoostSRL's default).
    Rdn,
    /// A Markov logic network: MLN-Boost, Khot et al. 2011, tree-based (BoostSRL `-mln`):
    /// each tree path is a clause weighted per true grounding. Takes no `--alpha`/`--beta`.
    Mln,
    /// RDN-Boost regression (BoostSRL `-reg`): least-squares boosting on the
    /// `regressionExample(target(args), value).` lines of the positives file (no
    /// negatives). Takes no `--alpha`/`--beta`/`--neg-ratio`. Same as `--regression`.
    Regression,
}

/// `srl boost learn`.
#[derive(Args, Debug)]
pub struct LearnArgs {
    /// Model learned: `rdn` (RFGB / Soft-RFGB), `mln` (MLN-Boost, BoostSRL `-mln`) or
    /// `regression` (RDN-Boost regression, BoostSRL `-reg`).
    #[arg(long, value_enum, default_value = "rdn")]
    pub model_type: ModelType,
    /// RDN-Boost regression (BoostSRL `-reg`): the same as `--model-type regression`.
    #[arg(long)]
    pub regression: bool,
    /// MLN-Boost by clauses (BoostSRL `-mln -mlnClause`): each step learns weighted
    /// clauses instead of a tree; needs `--model-type mln`. Without `--num-mln-clauses` /
    /// `--mln-clause-length`, BoostSRL's own schedule: step m (from 0) learns at most
    /// 20 / (m + 1) clauses of at most m / 4 + 1 literals.
    #[arg(long)]
    pub mln_clause: bool,
    /// Clauses per step with `--mln-clause` (BoostSRL `-numMLNClause`, which its learning
    /// loop overrides); needs `--mln-clause-length` too.
    #[arg(long)]
    pub num_mln_clauses: Option<usize>,
    /// Literals per clause body with `--mln-clause` (BoostSRL `-mlnClauseLen`, which its
    /// learning loop overrides); needs `--num-mln-clauses` too.
    #[arg(long)]
    pub mln_clause_length: Option<usize>,
    /// BoostSRL training folder (holds PREFIX_pos.txt, PREFIX_neg.txt, PREFIX_facts.txt).
    #[arg(long)]
    pub train: PathBuf,
    /// Target predicate (matched exactly, else ignoring case), or a comma-separated
    /// list `a,b,c` (BoostSRL `-target a,b,c`): one model per target, each learned with
    /// the other targets' positives as facts, written to `--model` with `.TARGET`
    /// before its extension (`out.json` → `out.a.json`, `out.b.json`, ...).
    #[arg(long)]
    pub target: String,
    /// Advice file (BoostSRL `-adviceFile`; knowledge-based RFGB, Odom et al. 2015):
    /// pieces of three lines (preferred labels, avoided labels, clause file). RDN models
    /// only.
    #[arg(long)]
    pub advice: Option<PathBuf>,
    /// Weight w of the advice in the gradient `w·(n_t − n_f) + (1 − w)·(I − p)`, in
    /// [0, 1] (BoostSRL `-adviceWt`, default 0.5); needs `--advice`.
    #[arg(long, allow_hyphen_values = true)]
    pub advice_weight: Option<f64>,
    /// Number of boosted trees (BoostSRL `-trees`).
    #[arg(long, default_value_t = 10)]
    pub trees: usize,
    /// Starting settings.
    #[arg(long, value_enum, default_value = "boostsrl")]
    pub preset: Preset,
    /// Soft-RFGB α, cost of a false negative (0 with --beta 0 is RFGB).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub alpha: f64,
    /// Soft-RFGB β, cost of a false positive.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    pub beta: f64,
    /// Negatives kept per positive (BoostSRL `-negPosRatio`); 0 keeps every negative.
    #[arg(long)]
    pub neg_ratio: Option<f64>,
    /// Step length multiplying each tree (BoostSRL `-step`).
    #[arg(long, default_value_t = 1.0)]
    pub step: f64,
    /// Seed of the negative sampling (and of `--seed-examples`' draws).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// BoostSRL's seed-based candidate sampling: at every node, score only the tests
    /// that at least one of N seed examples, drawn at random from the node's examples,
    /// satisfies (BoostSRL draws ceil(5 · negPosRatio) = 10). Off by default: srl scores
    /// every candidate test, the main reason its trees can differ from BoostSRL's.
    #[arg(long)]
    pub seed_examples: Option<usize>,
    /// Background file (default: DIR/PREFIX_bk.txt when it exists).
    #[arg(long)]
    pub bk: Option<PathBuf>,
    /// Do not apply the background's `setParam:` lines (tree size, node size, negPosRatio).
    #[arg(long)]
    pub ignore_setparam: bool,
    /// File-name prefix inside the folder.
    #[arg(long, default_value = "train")]
    pub prefix: String,
    /// Where to write the model (JSON); with several targets, the template of their
    /// files (`out.json` → `out.TARGET.json`).
    #[arg(long)]
    pub model: PathBuf,
}

/// `srl boost predict`.
#[derive(Args, Debug)]
pub struct PredictArgs {
    /// Model file written by `srl boost learn`; with several `--target`s, the template
    /// given to `srl boost learn --model` (`out.json` reads `out.TARGET.json`).
    #[arg(long)]
    pub model: PathBuf,
    /// The target(s) to score (BoostSRL `-target a,b,c`): one name checks that the model
    /// is of that target; a comma-separated list scores each target's model (files named
    /// from the `--model` template) and prints the metrics per target. Default: the
    /// model's target.
    #[arg(long)]
    pub target: Option<String>,
    /// BoostSRL test folder.
    #[arg(long)]
    pub test: PathBuf,
    /// Background file (default: DIR/PREFIX_bk.txt when it exists).
    #[arg(long)]
    pub bk: Option<PathBuf>,
    /// File-name prefix inside the folder.
    #[arg(long, default_value = "test")]
    pub prefix: String,
    /// Probability at or above which an atom is predicted true (FNR, F-beta).
    #[arg(long, default_value_t = 0.5)]
    pub threshold: f64,
    /// β of the F-beta score.
    #[arg(long, default_value_t = 1.0)]
    pub f_beta: f64,
    /// Per-atom probabilities (TSV: atom, label, probability); default: not written.
    /// With several targets, a template as `--model` (`p.tsv` → `p.TARGET.tsv`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Score only R negatives per positive, drawn uniformly without replacement with
    /// `--seed` (BoostSRL `-testNegPosRatio R`, whose default is 2); `-1`, as in
    /// BoostSRL, and srl's default score every negative.
    #[arg(long, allow_hyphen_values = true)]
    pub test_neg_pos_ratio: Option<f64>,
    /// Seed of `--test-neg-pos-ratio`'s draw and of the Gibbs sampler of a recursive
    /// model.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Recursive models (`setParam: recursion=true`): Gibbs sweeps discarded before the
    /// marginals are averaged (BoostSRL: 20).
    #[arg(long, default_value_t = srl_boost::BOOSTSRL_BURN_IN)]
    pub burn_in: usize,
    /// Recursive models: Gibbs sweeps averaged into the marginals (BoostSRL: 200).
    #[arg(long, default_value_t = srl_boost::BOOSTSRL_SAMPLES)]
    pub samples: usize,
}

/// `srl boost show`.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Model file written by `srl boost learn`.
    #[arg(long)]
    pub model: PathBuf,
}

/// Runs a `srl boost` subcommand.
///
/// # Errors
/// Unreadable or malformed input (file and line), bad parameters, unwritable output.
pub fn run(cmd: &BoostCmd, ui: Ui) -> anyhow::Result<()> {
    match cmd {
        BoostCmd::Learn(a) => learn(a, ui),
        BoostCmd::Predict(a) => predict(a, ui),
        BoostCmd::Show(a) => show(a, ui),
    }
}

/// The regular files directly inside a BoostSRL folder: the inputs an output must not
/// overwrite (the reader takes its pos, neg, facts and bk files from there).
fn folder_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default()
}

fn paths(v: &[PathBuf]) -> Vec<&Path> {
    v.iter().map(PathBuf::as_path).collect()
}

fn background(dir: &Path, prefix: &str, bk: Option<&Path>) -> anyhow::Result<Background> {
    if !dir.is_dir() {
        bail!("{}: no such folder", dir.display());
    }
    let path = match bk {
        Some(p) => p.to_path_buf(),
        None => {
            let p = dir.join(format!("{prefix}_bk.txt"));
            if !p.is_file() {
                return Ok(Background::default());
            }
            p
        }
    };
    Ok(srl_boost::read_background(&path)?)
}

/// The parameters of `learn`: the preset, then the background's `setParam:` lines
/// (unless `--ignore-setparam`), then the options given on the command line (so an
/// explicit `--neg-ratio` wins over a `setParam: negPosRatio`).
///
/// # Errors
/// A negative or non-finite `--neg-ratio`.
pub fn params(
    a: &LearnArgs,
    bk: &Background,
) -> anyhow::Result<(SoftRfgbParams, Option<SettingsReport>)> {
    let mut p = SoftRfgbParams {
        tree: match a.preset {
            Preset::Boostsrl => TreeParams::boostsrl(),
            Preset::TwoLiteral => TreeParams::two_literal(),
        },
        ..SoftRfgbParams::default()
    };
    let report = (!a.ignore_setparam).then(|| p.apply_settings(bk));
    // Applied here, in this order; fit must not apply them again on top of the options.
    p.apply_background_settings = false;
    p.n_trees = a.trees;
    p.alpha = a.alpha;
    p.beta = a.beta;
    p.step = a.step;
    if let Some(k) = a.seed_examples {
        if k == 0 {
            bail!("--seed-examples 0: draw at least one seed example per node");
        }
        p.tree.seed_sampling = Some(srl_boost::SeedSampling { seeds: k, seed: 0 });
    }
    if let Some(r) = a.neg_ratio {
        if !(r.is_finite() && r >= 0.0) {
            bail!("--neg-ratio {r}: must be a non-negative number");
        }
        p.negative_sampling = match (r, p.negative_sampling) {
            (0.0, _) => NegativeSampling::All,
            (r, NegativeSampling::Once(_)) => NegativeSampling::Once(r),
            (r, _) => NegativeSampling::PerTree(r),
        };
    }
    Ok((p, report))
}

/// Prints the background's skipped statements (rules, `precompute:` blocks, ignored
/// lines) as warnings with their file and line.
fn warn_notes(ui: Ui, who: &str, bk: &Background) {
    for n in &bk.notes {
        ui.note(&format!("{who}: warning: {n}"));
    }
}

/// Warns about modes on a target's `recursive_T` predicate that cannot take effect:
/// without `setParam: recursion=true` no `recursive_T` atom exists (BoostSRL treats
/// them as unknown too), and with it, a target without such a mode learns no recursive
/// clause.
fn warn_recursive_modes(ui: Ui, bk: &Background, targets: &[String], recursion: bool) {
    for w in srl_boost::recursion::mode_warnings(bk, targets, recursion) {
        ui.note(&format!("srl boost learn: warning: {w}"));
    }
}

/// Prints what loading the examples dropped or merged.
fn warn_split(ui: Ui, who: &str, s: &srl_boost::SplitSummary) {
    if !s.derived.is_empty() {
        let each: Vec<String> = s.derived.iter().map(|(p, n)| format!("{p} {n}")).collect();
        ui.note(&format!(
            "{who}: the background's rules derived {} fact(s): {}",
            s.derived.values().sum::<usize>(),
            each.join(", ")
        ));
    }
    if s.conflicting > 0 {
        ui.note(&format!(
            "{who}: warning: {} atom(s) of {} are in both the pos and the neg file; kept as positive (as BoostSRL does)",
            s.conflicting, s.target
        ));
    }
}

/// The clause learner's settings of `--mln-clause` (BoostSRL `-mlnClause`), checked:
/// `None` without it.
///
/// # Errors
/// `--mln-clause` without `--model-type mln`; one of `--num-mln-clauses` /
/// `--mln-clause-length` without the other or without `--mln-clause`; a zero.
fn mln_clause_params(a: &LearnArgs) -> anyhow::Result<Option<srl_boost::MlnClauseParams>> {
    let names = srl_boost::ClauseOptionNames {
        enable: "--mln-clause",
        clauses: "--num-mln-clauses",
        length: "--mln-clause-length",
    };
    let params = srl_boost::MlnClauseParams::from_options(
        a.mln_clause,
        a.num_mln_clauses,
        a.mln_clause_length,
        names,
    )
    .map_err(|e| match e {
        srl_boost::BoostError::InvalidParam { message, .. } => anyhow::anyhow!(message),
        e => e.into(),
    })?;
    if params.is_some() && (a.model_type != ModelType::Mln || a.regression) {
        bail!(
            "--mln-clause learns an MLN by clauses (BoostSRL -mln -mlnClause): give --model-type mln"
        );
    }
    Ok(params)
}

/// Checks `learn`'s numbers before any work.
fn check_learn_flags(a: &LearnArgs) -> anyhow::Result<()> {
    if a.trees == 0 {
        bail!("--trees 0: learn at least one tree");
    }
    if !(a.step.is_finite() && a.step > 0.0) {
        bail!("--step {}: must be a positive number", a.step);
    }
    for (flag, v) in [("--alpha", a.alpha), ("--beta", a.beta)] {
        if !v.is_finite() {
            bail!("{flag} {v}: must be a finite number");
        }
    }
    if let Some(r) = a.neg_ratio
        && !(r.is_finite() && r >= 0.0)
    {
        bail!("--neg-ratio {r}: must be a non-negative number");
    }
    Ok(())
}

fn learn(a: &LearnArgs, ui: Ui) -> anyhow::Result<()> {
    check_learn_flags(a)?;
    let targets = srl_boost::parse_targets(&a.target).context("--target")?;
    let regression = a.regression || a.model_type == ModelType::Regression;
    if a.advice.is_some() && (regression || a.model_type == ModelType::Mln) {
        bail!(
            "--advice: knowledge-based RFGB learns an RDN (--model-type rdn), as BoostSRL's -adviceFile does"
        );
    }
    if a.advice_weight.is_some() && a.advice.is_none() {
        bail!("--advice-weight weighs the advice of --advice FILE; give the advice file too");
    }
    let advice_weight = srl_boost::advice_weight(a.advice_weight).map_err(|_| {
        anyhow::anyhow!(
            "--advice-weight {}: must be a number in [0, 1]",
            a.advice_weight.unwrap_or(srl_boost::BOOSTSRL_ADVICE_WEIGHT)
        )
    })?;
    if regression {
        if a.regression && !matches!(a.model_type, ModelType::Rdn | ModelType::Regression) {
            bail!("--regression learns a regression model; it does not go with --model-type mln");
        }
        if targets.len() > 1 {
            bail!(
                "--target {}: a regression model is learned for one target at a time",
                a.target
            );
        }
        return learn_regression(a, ui);
    }
    let clause_params = mln_clause_params(a)?;
    if a.model_type == ModelType::Mln && (a.alpha != 0.0 || a.beta != 0.0) {
        bail!(
            "--alpha {} --beta {}: the soft margin is for --model-type rdn; MLN-Boost takes neither",
            a.alpha,
            a.beta
        );
    }
    // one target: --model as given; several: --model is the template of their files
    let outputs: Vec<PathBuf> = if targets.len() == 1 {
        vec![a.model.clone()]
    } else {
        targets
            .iter()
            .map(|t| srl_boost::target_path(&a.model, t))
            .collect()
    };
    let mut inputs = folder_files(&a.train);
    inputs.extend(a.bk.clone());
    inputs.extend(a.advice.clone());
    check_outputs(ui, &paths(&inputs), &paths(&outputs))?;
    let bk = background(&a.train, &a.prefix, a.bk.as_deref())?;
    // the background's imports are inputs too
    check_outputs(ui, &paths(&bk.files), &paths(&outputs))?;
    warn_notes(ui, "srl boost learn", &bk);
    let advice = match &a.advice {
        Some(path) => {
            let adv = srl_boost::Advice::read(path)?;
            let clause_files: Vec<PathBuf> =
                adv.pieces.iter().map(|p| p.clause_file.clone()).collect();
            check_outputs(ui, &paths(&clause_files), &paths(&outputs))?;
            Some(adv)
        }
        None => None,
    };
    let (params, settings) = params(a, &bk)?;
    if let Some(r) = settings.as_ref().filter(|r| !r.is_empty()) {
        ui.note(&format!("srl boost learn: setParam: {r}"));
    }
    warn_recursive_modes(ui, &bk, &targets, params.recursion);
    let atoms = srl_boost::FolderAtoms::read(&a.train, &a.prefix)?;
    if let Some(adv) = &advice {
        // a label must name a predicate of the pos/neg files (else a typo); advice on a
        // predicate that is not a --target here is not used, and said so
        for l in adv.unused_labels(&targets, &atoms)? {
            ui.note(&format!(
                "srl boost learn: warning: the advice on {l} is not used: {l} is not a --target of this run"
            ));
        }
    }
    let pb = ui.spinner("learning trees");
    let t0 = std::time::Instant::now();
    let mlnp = MlnBoostParams {
        clauses: clause_params,
        ..MlnBoostParams::from_rfgb(&params)
    };
    let kind = match (a.model_type, clause_params) {
        (ModelType::Mln, Some(c)) => srl_boost::BoostKind::MlnClauses(c),
        (ModelType::Mln, None) => srl_boost::BoostKind::Mln,
        // regression went to learn_regression above
        (ModelType::Rdn | ModelType::Regression, _) => srl_boost::BoostKind::Rdn,
    };
    let fits = srl_boost::fit_targets(&atoms, &targets, &bk, |split| {
        warn_split(ui, "srl boost learn", &split.summary);
        ui.note(&format!(
            "srl boost learn: {} positives, {} negatives of {}, {} facts, {} trees",
            split.summary.pos,
            split.summary.neg,
            split.summary.target,
            split.db.n_facts(),
            params.n_trees
        ));
        // a fresh generator per target: each model is the one `--target T` alone learns
        let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
        let advice = advice.as_ref().map(|adv| (adv, advice_weight));
        let model = srl_boost::fit_boosted(
            &params,
            kind,
            advice,
            &split.db,
            &bk,
            &split.examples,
            &mut rng,
        )?;
        Ok(Boosted::from(model))
    })
    .context("learning the model")?;
    pb.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let provenance = Provenance::now(&a.train, Some(a.seed));
    let mut summaries = Vec::with_capacity(fits.len());
    let mut text = String::new();
    for (fit, out) in fits.into_iter().zip(&outputs) {
        let (trees, n_train, ll, psi0, advice_use) = match &fit.model {
            Boosted::Rdn(m) => {
                let mut p = serde_json::to_value(&params)?;
                if let (Some(adv), Some(obj)) = (m.advice(), p.as_object_mut()) {
                    obj.insert("advice_weight".into(), json!(adv.weight));
                }
                let file = ModelFile::new(m.clone(), p, provenance.clone());
                file.save(ui, out)?;
                (
                    m.trees().len(),
                    m.n_train(),
                    m.train_log_likelihood().last().copied(),
                    m.initial_log_odds(),
                    m.advice().cloned(),
                )
            }
            Boosted::Mln(m) => {
                let file =
                    ModelFile::new(m.clone(), serde_json::to_value(&mlnp)?, provenance.clone());
                file.save(ui, out)?;
                (
                    m.trees().len(),
                    m.n_train(),
                    m.train_log_likelihood().last().copied(),
                    m.initial_log_odds(),
                    None,
                )
            }
            Boosted::Reg(_) => unreachable!("learn_regression handles regression"),
        };
        let model = &fit.model;
        let mut summary = json!({
            "command": "boost learn",
            "model_type": model.kind(),
            "target": model.target(),
            "positives": fit.summary.pos,
            "negatives": fit.summary.neg,
            "derived_facts": fit.summary.derived,
            "trees": trees,
            "train_examples_used": n_train,
            "train_log_likelihood": ll,
            "initial_log_odds": psi0,
            "settings": settings.as_ref().map(ToString::to_string),
            "clauses_per_step": match model {
                Boosted::Mln(m) if m.is_clause_based() => Some(m.clauses_per_step().to_vec()),
                _ => None,
            },
            "seconds": secs,
            "model": out.display().to_string(),
        });
        if let (Some(adv), Some(obj)) = (&advice_use, summary.as_object_mut()) {
            obj.insert("advice".into(), serde_json::to_value(adv)?);
        }
        summaries.push(summary);
        let advised = advice_use.map_or_else(String::new, |u| {
            format!(
                " with advice (weight {}; {} training examples preferred, {} avoided)",
                u.weight, u.preferred_examples, u.avoided_examples
            )
        });
        let what = match model {
            Boosted::Mln(m) if m.is_clause_based() => format!(
                "{trees} {} clauses in {} steps",
                model.kind(),
                m.clauses_per_step().len()
            ),
            _ => format!("{trees} {} trees", model.kind()),
        };
        text.push_str(&format!(
            "learned {what} for {}{advised} in {secs:.2} s; mean training log-likelihood {:.4}; model written to {}\n",
            model.target(),
            ll.unwrap_or(f64::NAN),
            out.display()
        ));
    }
    let summary = if summaries.len() == 1 {
        summaries.swap_remove(0)
    } else {
        json!({ "command": "boost learn", "targets": summaries, "seconds": secs })
    };
    ui.summary(&summary, &text)
}

/// `learn` for RDN-Boost regression: the preset's trees, the background's `setParam:`
/// lines and `--trees` / `--step`, on the folder's `regressionExample(...)` lines.
fn learn_regression(a: &LearnArgs, ui: Ui) -> anyhow::Result<()> {
    if a.alpha != 0.0 || a.beta != 0.0 || a.neg_ratio.is_some() {
        bail!(
            "--alpha / --beta / --neg-ratio: a regression model has no negatives and no margin; \
             leave them out with --regression"
        );
    }
    let mut inputs = folder_files(&a.train);
    inputs.extend(a.bk.clone());
    check_outputs(ui, &paths(&inputs), &[&a.model])?;
    let bk = background(&a.train, &a.prefix, a.bk.as_deref())?;
    check_outputs(ui, &paths(&bk.files), &[&a.model])?;
    warn_notes(ui, "srl boost learn", &bk);
    let (rfgb, settings) = params(a, &bk)?;
    if let Some(r) = settings.as_ref().filter(|r| !r.is_empty()) {
        ui.note(&format!("srl boost learn: setParam: {r}"));
    }
    if rfgb.recursion {
        bail!(
            "setParam: recursion=true: recursive targets are learned for RDN and MLN-Boost models; RDN-Boost regression has none"
        );
    }
    // applied in `params`, in the order of the classification options
    let params = RegressionRfgbParams::from_rfgb(&rfgb);
    let split = srl_boost::load_regression_split(&a.train, &a.prefix, &a.target, &bk)?;
    warn_split(ui, "srl boost learn", &split.summary);
    ui.note(&format!(
        "srl boost learn: {} regression examples of {}, {} facts, {} trees",
        split.examples.len(),
        split.summary.target,
        split.db.n_facts(),
        params.n_trees
    ));
    let pb = ui.spinner("learning trees");
    let t0 = std::time::Instant::now();
    let m = params
        .fit(&split.db, &bk, &split.examples, &split.values)
        .context("learning the model")?;
    let file = ModelFile::new(
        m,
        serde_json::to_value(&params)?,
        Provenance::now(&a.train, None),
    );
    file.save(ui, &a.model)?;
    pb.finish_and_clear();
    let secs = t0.elapsed().as_secs_f64();
    let m = &file.model;
    let mse = m.train_mse().last().copied().unwrap_or(f64::NAN);
    let summary = json!({
        "command": "boost learn",
        "model_type": RegressionRfgb::KIND,
        "target": m.target(),
        "examples": split.examples.len(),
        "derived_facts": split.summary.derived,
        "trees": m.trees().len(),
        "train_mse": m.train_mse(),
        "settings": settings.as_ref().map(ToString::to_string),
        "seconds": secs,
        "model": a.model.display().to_string(),
    });
    let text = format!(
        "learned {} regression trees for {} in {secs:.2} s; training RMSE {:.6}; model written to {}\n",
        m.trees().len(),
        m.target(),
        mse.sqrt(),
        a.model.display()
    );
    ui.summary(&summary, &text)
}

/// A learned boosted model of any type, as stored in a model file.
#[derive(Clone, Debug)]
pub enum Boosted {
    /// RFGB / Soft-RFGB (`kind` `soft-rfgb`).
    Rdn(SoftRfgb),
    /// MLN-Boost (`kind` `mln-boost`).
    Mln(MlnBoost),
    /// RDN-Boost regression (`kind` `rdn-regression`).
    Reg(RegressionRfgb),
}

impl From<srl_boost::BoostedModel> for Boosted {
    fn from(m: srl_boost::BoostedModel) -> Self {
        match m {
            srl_boost::BoostedModel::Rdn(m) => Self::Rdn(m),
            srl_boost::BoostedModel::Mln(m) => Self::Mln(m),
        }
    }
}

impl Boosted {
    /// Loads a `soft-rfgb` or `mln-boost` model file with its envelope's provenance.
    ///
    /// # Errors
    /// As [`ModelFile::load`]; a file of another kind names both accepted kinds.
    pub fn load(path: &Path) -> anyhow::Result<(Self, ModelFile<serde_json::Value>)> {
        let kind = peek_kind(path)?;
        if kind == MlnBoost::KIND {
            let f = ModelFile::<MlnBoost>::load(path)?;
            let env = envelope(&f);
            Ok((Boosted::Mln(f.model), env))
        } else if kind == RegressionRfgb::KIND {
            let f = ModelFile::<RegressionRfgb>::load(path)?;
            let env = envelope(&f);
            Ok((Boosted::Reg(f.model), env))
        } else {
            // Checks the version, and names the kind when it is neither.
            let f = ModelFile::<SoftRfgb>::load(path)?;
            let env = envelope(&f);
            Ok((Boosted::Rdn(f.model), env))
        }
    }

    /// The model file's `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Boosted::Rdn(_) => SoftRfgb::KIND,
            Boosted::Mln(_) => MlnBoost::KIND,
            Boosted::Reg(_) => RegressionRfgb::KIND,
        }
    }

    /// Target predicate.
    pub fn target(&self) -> &str {
        match self {
            Boosted::Rdn(m) => m.target(),
            Boosted::Mln(m) => m.target(),
            Boosted::Reg(m) => m.target(),
        }
    }

    /// P(target atom true) for each example; a recursive model samples the examples'
    /// atoms jointly with `inference`.
    ///
    /// # Errors
    /// Examples of another target; a regression model (it predicts values).
    pub fn predict_proba(
        &self,
        db: &Database,
        ex: &Examples,
        inference: &GibbsInference,
    ) -> anyhow::Result<Vec<f64>> {
        Ok(match self {
            Boosted::Rdn(m) => m.predict_proba_with(db, ex, inference)?,
            Boosted::Mln(m) => m.predict_proba_with(db, ex, inference)?,
            Boosted::Reg(_) => bail!("a regression model predicts values, not probabilities"),
        })
    }

    /// True for a model whose trees test the target's other atoms (`recursive_T`):
    /// its predictions are Gibbs marginals over all the test atoms.
    pub fn is_recursive(&self) -> bool {
        match self {
            Boosted::Rdn(m) => m.is_recursive(),
            Boosted::Mln(m) => m.is_recursive(),
            Boosted::Reg(_) => false,
        }
    }
}

/// The envelope of a loaded file without its model.
fn envelope<M>(f: &ModelFile<M>) -> ModelFile<serde_json::Value> {
    ModelFile {
        format: f.format.clone(),
        version: f.version,
        kind: f.kind.clone(),
        provenance: f.provenance.clone(),
        parameters: f.parameters.clone(),
        model: serde_json::Value::Null,
    }
}

/// Scores of one test folder: per-atom probabilities and the metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored {
    /// `pred(a,b)` of each test atom.
    pub atoms: Vec<String>,
    /// Labels (pos file = true).
    pub labels: Vec<bool>,
    /// P(atom true).
    pub probs: Vec<f64>,
}

/// Loads `dir` and scores it with `model`.
///
/// # Errors
/// As the readers; a model of another target.
/// With `test_neg_pos_ratio = Some(r)`, only `round(r · #pos)` negatives drawn with
/// `seed` are scored (BoostSRL `-testNegPosRatio`). A recursive model's atoms are
/// inferred jointly over the whole folder (Gibbs sampling with `inference`) and the
/// sample is drawn for reporting afterwards, as BoostSRL does.
#[allow(clippy::too_many_arguments)]
pub fn score(
    model: &Boosted,
    dir: &Path,
    prefix: &str,
    bk: &Background,
    test_neg_pos_ratio: Option<f64>,
    seed: u64,
    inference: &GibbsInference,
    ui: Ui,
) -> anyhow::Result<Scored> {
    let split = srl_boost::load_split(
        dir,
        prefix,
        model.target(),
        bk,
        OtherTargets::PositivesAsFacts,
    )?;
    warn_split(ui, "srl boost predict", &split.summary);
    let idx: Vec<usize> = match test_neg_pos_ratio {
        Some(r) => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            NegativeSampling::Once(r)
                .tree_sets(&split.examples, 1, &mut rng)
                .swap_remove(0)
        }
        None => (0..split.examples.len()).collect(),
    };
    let probs = if model.is_recursive() {
        // every atom of the folder is a query variable of the joint inference
        let all = model.predict_proba(&split.db, &split.examples, inference)?;
        idx.iter().map(|&i| all[i]).collect()
    } else {
        model.predict_proba(&split.db, &split.examples.subset(&idx), inference)?
    };
    let ex = &split.examples;
    Ok(Scored {
        atoms: idx.iter().map(|&i| ex.atom(i, &split.db)).collect(),
        labels: idx.iter().map(|&i| ex.labels()[i]).collect(),
        probs,
    })
}

fn predict(a: &PredictArgs, ui: Ui) -> anyhow::Result<()> {
    if !(0.0..=1.0).contains(&a.threshold) {
        bail!("--threshold {}: must be in [0, 1]", a.threshold);
    }
    if !(a.f_beta.is_finite() && a.f_beta > 0.0) {
        bail!("--f-beta {}: must be a positive number", a.f_beta);
    }
    if a.samples == 0 {
        bail!("--samples 0: a recursive model's marginals average at least one Gibbs sweep");
    }
    if let Some(r) = a.test_neg_pos_ratio
        && !(r == -1.0 || (r.is_finite() && r > 0.0))
    {
        bail!("--test-neg-pos-ratio {r}: must be a positive number, or -1 to score every negative");
    }
    let test_neg_pos_ratio = a.test_neg_pos_ratio.filter(|&r| r != -1.0);
    let targets = a
        .target
        .as_deref()
        .map(srl_boost::parse_targets)
        .transpose()
        .context("--target")?;
    // (target to check, model file, per-atom output) of each model scored
    let jobs: Vec<(Option<String>, PathBuf, Option<PathBuf>)> = match targets {
        Some(ts) if ts.len() > 1 => ts
            .into_iter()
            .map(|t| {
                let model = srl_boost::target_path(&a.model, &t);
                let out = a.out.as_deref().map(|o| srl_boost::target_path(o, &t));
                (Some(t), model, out)
            })
            .collect(),
        ts => vec![(ts.and_then(|mut v| v.pop()), a.model.clone(), a.out.clone())],
    };
    let outs: Vec<PathBuf> = jobs.iter().filter_map(|j| j.2.clone()).collect();
    if !outs.is_empty() {
        let mut inputs = folder_files(&a.test);
        inputs.extend(jobs.iter().map(|j| j.1.clone()));
        inputs.extend(a.bk.clone());
        check_outputs(ui, &paths(&inputs), &paths(&outs))?;
    }
    let bk = background(&a.test, &a.prefix, a.bk.as_deref())?;
    if !outs.is_empty() {
        // the background's imports are inputs too
        check_outputs(ui, &paths(&bk.files), &paths(&outs))?;
    }
    warn_notes(ui, "srl boost predict", &bk);
    let models = jobs
        .iter()
        .map(|(t, path, _)| {
            let (model, _) = Boosted::load(path)?;
            if let Some(t) = t
                && !model.target().eq_ignore_ascii_case(t)
            {
                bail!(
                    "{}: the model is of target {}, not {t}",
                    path.display(),
                    model.target()
                );
            }
            Ok(model)
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let [Boosted::Reg(m)] = models.as_slice() {
        if test_neg_pos_ratio.is_some() {
            bail!("--test-neg-pos-ratio: a regression model's test folder has no negatives");
        }
        return predict_regression(a, m, &bk, ui);
    }
    if models.iter().any(|m| matches!(m, Boosted::Reg(_))) {
        bail!("--target: a regression model is scored one target at a time");
    }
    let mut summaries = Vec::with_capacity(models.len());
    let mut text = String::new();
    for (model, (_, _, out)) in models.iter().zip(&jobs) {
        let (summary, t) = predict_one(a, model, &bk, test_neg_pos_ratio, out.as_deref(), ui)?;
        summaries.push(summary);
        text.push_str(&t);
    }
    let summary = if summaries.len() == 1 {
        summaries.swap_remove(0)
    } else {
        json!({ "command": "boost predict", "targets": summaries })
    };
    ui.summary(&summary, &text)
}

/// Scores the test folder with one classification model: its JSON summary and text.
fn predict_one(
    a: &PredictArgs,
    model: &Boosted,
    bk: &Background,
    test_neg_pos_ratio: Option<f64>,
    out: Option<&Path>,
    ui: Ui,
) -> anyhow::Result<(serde_json::Value, String)> {
    let inference = GibbsInference {
        burn_in: a.burn_in,
        samples: a.samples,
        seed: a.seed,
    };
    let s = score(
        model,
        &a.test,
        &a.prefix,
        bk,
        test_neg_pos_ratio,
        a.seed,
        &inference,
        ui,
    )?;
    let metric = |r: Result<f64, srl_eval::EvalError>| r.map_or(f64::NAN, |v| v);
    let auc_roc = metric(srl_eval::metrics::auc_roc(&s.probs, &s.labels));
    let auc_pr = metric(srl_eval::metrics::auc_pr(&s.probs, &s.labels));
    let cll = metric(srl_eval::metrics::conditional_log_likelihood(
        &s.probs, &s.labels,
    ));
    let conf = srl_eval::metrics::Confusion::at_threshold(&s.probs, &s.labels, a.threshold)?;
    let fnr = metric(conf.false_negative_rate());
    let fb = metric(conf.f_beta(a.f_beta));
    if let Some(out) = out {
        write_to(ui, Some(out), |w| {
            writeln!(w, "atom\tlabel\tprobability")?;
            for ((atom, &y), p) in s.atoms.iter().zip(&s.labels).zip(&s.probs) {
                writeln!(w, "{atom}\t{}\t{p}", u8::from(y))?;
            }
            Ok(())
        })?;
    }
    let pos = s.labels.iter().filter(|&&y| y).count();
    let summary = json!({
        "command": "boost predict",
        "model_type": model.kind(),
        "target": model.target(),
        "examples": s.labels.len(),
        "positives": pos,
        "auc_roc": auc_roc,
        "auc_pr": auc_pr,
        "cll": cll,
        "threshold": a.threshold,
        "test_neg_pos_ratio": test_neg_pos_ratio,
        "gibbs": model.is_recursive().then(|| json!({
            "burn_in": a.burn_in, "samples": a.samples, "seed": a.seed,
        })),
        "fnr": fnr,
        "f_beta": fb,
        "beta": a.f_beta,
        "out": out.map(|p| p.display().to_string()),
    });
    let text = format!(
        "{} test atoms of {} ({pos} positive)\nAUC-ROC  {auc_roc:.6}\nAUC-PR   {auc_pr:.6}\nCLL      {cll:.6}\nat threshold {}: FNR {fnr:.6}, F{} {fb:.6}\n",
        s.labels.len(),
        model.target(),
        a.threshold,
        a.f_beta
    );
    Ok((summary, text))
}

/// `predict` for a regression model: values for the folder's `regressionExample(...)`
/// lines, RMSE / MAE / R² against their values, TSV `atom, value, prediction`.
fn predict_regression(
    a: &PredictArgs,
    m: &RegressionRfgb,
    bk: &Background,
    ui: Ui,
) -> anyhow::Result<()> {
    let split = srl_boost::load_regression_split(&a.test, &a.prefix, m.target(), bk)?;
    warn_split(ui, "srl boost predict", &split.summary);
    let pred = m.predict(&split.db, &split.examples)?;
    let y = &split.values;
    let metric = |r: Result<f64, srl_eval::EvalError>| r.map_or(f64::NAN, |v| v);
    let rmse = metric(srl_eval::metrics::rmse(&pred, y));
    let mae = metric(srl_eval::metrics::mae(&pred, y));
    let r2 = metric(srl_eval::metrics::r2_score(&pred, y));
    if let Some(out) = &a.out {
        write_to(ui, Some(out), |w| {
            writeln!(w, "atom\tvalue\tprediction")?;
            for (i, (v, p)) in y.iter().zip(&pred).enumerate() {
                writeln!(w, "{}\t{v}\t{p}", split.examples.atom(i, &split.db))?;
            }
            Ok(())
        })?;
    }
    let summary = json!({
        "command": "boost predict",
        "model_type": RegressionRfgb::KIND,
        "target": m.target(),
        "examples": y.len(),
        "rmse": rmse,
        "mae": mae,
        "r2": r2,
        "out": a.out.as_ref().map(|p| p.display().to_string()),
    });
    let text = format!(
        "{} test examples of {}\nRMSE  {rmse:.6}\nMAE   {mae:.6}\nR²    {r2:.6}\n",
        y.len(),
        m.target()
    );
    ui.summary(&summary, &text)
}

fn show(a: &ShowArgs, ui: Ui) -> anyhow::Result<()> {
    let (model, file) = Boosted::load(&a.model)?;
    let m = match model {
        Boosted::Rdn(m) => m,
        Boosted::Mln(m) => return show_mln(a, &m, &file, ui),
        Boosted::Reg(m) => return show_regression(a, &m, &file, ui),
    };
    let m = &m;
    let mut text = format!(
        "% {}\n% target {}, alpha {}, beta {}, psi0 {}, {} trees\n",
        origin(a, &file),
        m.target(),
        m.alpha(),
        m.beta(),
        m.initial_log_odds(),
        m.trees().len()
    );
    if let Some(adv) = m.advice() {
        text.push_str(&format!(
            "% learned with advice {} (weight {}; {} piece(s) on {}; {} training examples preferred, {} avoided)\n",
            adv.file,
            adv.weight,
            adv.pieces,
            m.target(),
            adv.preferred_examples,
            adv.avoided_examples
        ));
    }
    if let Some(r) = m.recursion() {
        text.push_str(&format!(
            "% recursive target: clauses test {r} (the other atoms of {}){}\n",
            m.target(),
            if m.is_recursive() {
                "; predictions are Gibbs marginals over all test atoms"
            } else {
                ", but no tree uses it"
            }
        ));
    }
    let trees = tree_clauses(m.trees(), &mut text);
    let mut summary = json!({
        "command": "boost show",
        "model_type": SoftRfgb::KIND,
        "recursion": m.recursion(),
        "target": m.target(),
        "alpha": m.alpha(),
        "beta": m.beta(),
        "initial_log_odds": m.initial_log_odds(),
        "step": m.step(),
        "provenance": file.provenance,
        "trees": trees,
    });
    if let (Some(adv), Some(obj)) = (m.advice(), summary.as_object_mut()) {
        obj.insert("advice".into(), serde_json::to_value(adv)?);
    }
    ui.summary(&summary, &text)
}

/// The first line of `show`'s text: the model file, its format and version, and where it
/// came from (srl version, data, seed).
fn origin(a: &ShowArgs, file: &ModelFile<serde_json::Value>) -> String {
    format!(
        "srl model {} (format {} version {}), learned by srl {} from {} (seed {})",
        a.model.display(),
        file.format,
        file.version,
        file.provenance.srl_version,
        file.provenance.data,
        file.provenance
            .seed
            .map_or_else(|| "-".to_owned(), |s| s.to_string()),
    )
}

/// `show` for an MLN-Boost model: the weighted clauses in Alchemy's MLN syntax.
fn show_mln(
    a: &ShowArgs,
    m: &MlnBoost,
    file: &ModelFile<serde_json::Value>,
    ui: Ui,
) -> anyhow::Result<()> {
    let text = format!("// {}\n{m}", origin(a, file));
    let clauses: Vec<serde_json::Value> = m
        .clauses()
        .into_iter()
        .map(|(w, c)| json!({ "weight": w, "formula": c }))
        .collect();
    // one object per tree, as for RDN models: its clauses as Alchemy lines `weight formula`
    let trees: Vec<serde_json::Value> = m
        .trees()
        .iter()
        .map(|t| {
            let lines: Vec<String> = t
                .mln_formulas()
                .into_iter()
                .map(|(w, f)| format!("{w} {f}"))
                .collect();
            json!({ "clauses": lines })
        })
        .collect();
    let summary = json!({
        "command": "boost show",
        "model_type": MlnBoost::KIND,
        "target": m.target(),
        "initial_log_odds": m.initial_log_odds(),
        "step": m.step(),
        "provenance": file.provenance,
        "trees": trees,
        "clauses": clauses,
        "clauses_per_step": m.is_clause_based().then(|| m.clauses_per_step().to_vec()),
    });
    ui.summary(&summary, &text)
}

/// Appends each tree's clauses to `text` under a `% Tree N` line and returns them as the
/// JSON `trees` list (one `{"clauses": [...]}` object per tree).
fn tree_clauses(
    trees: &[srl_boost::RelationalRegressionTree],
    text: &mut String,
) -> Vec<serde_json::Value> {
    let mut out = Vec::with_capacity(trees.len());
    for (i, t) in trees.iter().enumerate() {
        text.push_str(&format!("% Tree {}\n", i + 1));
        let clauses = t.clauses();
        for c in &clauses {
            text.push_str(c);
            text.push('\n');
        }
        out.push(json!({ "clauses": clauses }));
    }
    out
}

/// `show` for a regression model: each tree's clauses (leaf values in the target's units).
fn show_regression(
    a: &ShowArgs,
    m: &RegressionRfgb,
    file: &ModelFile<serde_json::Value>,
    ui: Ui,
) -> anyhow::Result<()> {
    let mut text = format!(
        "% {}\n% regression target {}, initial value {}, step {}, {} trees\n",
        origin(a, file),
        m.target(),
        m.initial_value(),
        m.step(),
        m.trees().len()
    );
    let trees = tree_clauses(m.trees(), &mut text);
    let summary = json!({
        "command": "boost show",
        "model_type": RegressionRfgb::KIND,
        "target": m.target(),
        "initial_value": m.initial_value(),
        "step": m.step(),
        "provenance": file.provenance,
        "trees": trees,
    });
    ui.summary(&summary, &text)
}
