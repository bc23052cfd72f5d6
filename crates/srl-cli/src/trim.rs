//! `srl trim NETWORK`: the feature subset within a budget that maximises the expected
//! classification agreement (ECA) with the full classifier, by branch and bound, and the
//! new decision threshold (Choi & Van den Broeck 2018, Sections 4-5).
//!
//! Networks: BIF (`.bif`, `.bif.gz`), Hugin `.net`, UAI `BAYES` (`.uai`; variables
//! `0..n`, states `s0…`), or a TrimBN naive-Bayes JSON (`.json`, which carries its class,
//! threshold, budget and costs; the options override them).
//!
//! CPT rows must sum to 1 within 1e-6 (1e-4 for a TrimBN JSON, whose numbers are rounded
//! to five digits) unless `--normalize` rescales them (with a warning saying how many).
//! `--max-evaluations` / `--time-limit` bound the search; a search stopped by them reports
//! the best subset found and says that it is not proven optimal (`"optimal": false`).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use clap::Args;
use serde_json::json;
use srl_bayes::compile::default_max_table;
use srl_bayes::trim::{
    BranchAndBound, JointAgreement, NaiveBayesAgreement, SearchLimits, SearchProgress, Trimming,
};
use srl_bayes::{BayesianNetwork, NaiveBayes, ThresholdClassifier};

use crate::ui::Ui;

/// `srl trim`.
#[derive(Args, Debug)]
pub struct TrimArgs {
    /// The network: .bif, .bif.gz, .net, .uai or a TrimBN .json.
    pub network: PathBuf,
    /// Class variable and its positive state, `VAR=STATE` (state by name or index).
    #[arg(long)]
    pub class: Option<String>,
    /// Feature variables, comma-separated, or `leaves` (every leaf but the class).
    #[arg(long)]
    pub features: Option<String>,
    /// Decision threshold T: predict the positive state iff Pr(state | x) ≥ T.
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Budget B on the summed cost of the kept features.
    #[arg(long)]
    pub budget: Option<f64>,
    /// Feature costs, one `name cost` (or `name,cost`) per line; default 1 each.
    #[arg(long)]
    pub costs: Option<PathBuf>,
    /// Rescale CPT rows that do not sum to 1 (within 1e-6) instead of rejecting them.
    #[arg(long)]
    pub normalize: bool,
    /// Stop the search after N evaluations and report the best subset found (not proven
    /// optimal).
    #[arg(long, value_name = "N")]
    pub max_evaluations: Option<u64>,
    /// Stop the search after SECONDS and report the best subset found (not proven optimal).
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
    /// The largest table (entries) compiling the network may build, and the most feature
    /// instantiations; default: a quarter of this machine's memory at 64 bytes per entry
    /// (`srl_bayes::compile::default_max_table`).
    #[arg(long, value_name = "ENTRIES")]
    pub max_table: Option<usize>,
}

/// Row-sum tolerance of BIF, NET and UAI networks.
const ROW_TOL: f64 = 1e-6;
/// Row-sum tolerance of TrimBN JSON networks (five significant digits).
const JSON_ROW_TOL: f64 = 1e-4;
/// The largest costs file read (a costs file has one line per feature).
const MAX_COSTS_BYTES: u64 = 16 << 20;

/// The trimming problem after reading and defaults.
struct Problem {
    net: BayesianNetwork,
    clf: ThresholdClassifier,
    budget: f64,
    costs: Vec<f64>,
    /// The naive-Bayes form of a TrimBN JSON (fast agreement), if the features are its own.
    nb: Option<srl_bayes::io::TrimProblem>,
}

fn read_network(
    path: &Path,
    normalize: bool,
    ui: Ui,
) -> anyhow::Result<(BayesianNetwork, Option<srl_bayes::io::TrimProblem>)> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let file = path.display().to_string();
    let (mut net, mut nb, tol, mut rescaled) = if name.ends_with(".json") {
        let p = srl_bayes::io::read_trimbn_json(path)?;
        let net = p.to_bayesian_network().map_err(|e| e.in_file(&file))?;
        (net, Some(p), JSON_ROW_TOL, 0)
    } else if name.ends_with(".bif") || name.ends_with(".bif.gz") {
        (srl_bayes::io::read_bif(path)?, None, ROW_TOL, 0)
    } else if name.ends_with(".net") {
        (srl_bayes::io::read_hugin_net(path)?, None, ROW_TOL, 0)
    } else if name.ends_with(".uai") {
        let m = srl_bayes::io::read_uai(path)?;
        let (net, rescaled) = if normalize {
            m.to_bayesian_network_normalized()
        } else {
            m.to_bayesian_network().map(|n| (n, 0))
        }
        .map_err(|e| e.in_file(&file))?;
        (net, None, ROW_TOL, rescaled)
    } else {
        bail!(
            "{}: unknown network format (expected .bif, .bif.gz, .net, .uai or .json)",
            path.display()
        )
    };
    if normalize {
        let changed = net.normalize_rows(tol);
        rescaled += changed;
        if changed > 0
            && let Some(p) = nb.as_mut()
        {
            // the naive-Bayes form follows the rescaled network: class prior = CPT of
            // node 0, feature i = CPT of node i + 1 (one row per class)
            let tables: Vec<Vec<Vec<f64>>> = (1..net.len())
                .map(|v| {
                    net.cpt(v)
                        .probs
                        .chunks(net.cardinality(v))
                        .map(<[f64]>::to_vec)
                        .collect()
                })
                .collect();
            p.model = NaiveBayes::from_tables(net.cpt(0).probs.clone(), &tables)
                .map_err(|e| e.in_file(&file))?;
        }
        if rescaled > 0 {
            ui.note(&format!(
                "warning: {file}: --normalize rescaled {rescaled} CPT row(s) that did not sum to 1"
            ));
        }
    } else {
        net.check_row_sums(tol)
            .map_err(|e| anyhow!("{}; use --normalize to rescale such rows", e.in_file(&file)))?;
    }
    Ok((net, nb))
}

fn var_id(net: &BayesianNetwork, name: &str, path: &Path) -> anyhow::Result<usize> {
    net.id(name).with_context(|| path.display().to_string())
}

fn read_costs(path: &Path, names: &[String]) -> anyhow::Result<Vec<f64>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_COSTS_BYTES + 1).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > MAX_COSTS_BYTES {
        bail!(
            "{}: costs file larger than {MAX_COSTS_BYTES} bytes",
            path.display()
        );
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| anyhow!("{}: not UTF-8 text ({e})", path.display()))?;
    let mut costs: Vec<Option<(f64, usize)>> = vec![None; names.len()];
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let err = |m: String| anyhow!("{}:{}: {m}", path.display(), i + 1);
        let mut parts = l
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|s| !s.is_empty());
        let (Some(name), Some(c), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(err(format!("expected `name cost`, found {l:?}")));
        };
        let c: f64 = c
            .parse()
            .map_err(|_| err(format!("cost {c:?} is not a number")))?;
        if !(c.is_finite() && c > 0.0) {
            return Err(err(format!("cost {c} must be positive")));
        }
        let k = names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| err(format!("{name:?} is not one of the features")))?;
        if let Some((_, first)) = costs[k] {
            return Err(err(format!(
                "a second cost for feature {name:?} (the first is on line {first})"
            )));
        }
        costs[k] = Some((c, i + 1));
    }
    costs
        .into_iter()
        .zip(names)
        .map(|(c, n)| {
            c.map(|(c, _)| c)
                .ok_or_else(|| anyhow!("{}: no cost for feature {n:?}", path.display()))
        })
        .collect()
}

fn problem(a: &TrimArgs, ui: Ui) -> anyhow::Result<Problem> {
    if let Some(t) = a.threshold
        && !(0.0..=1.0).contains(&t)
    {
        bail!("--threshold {t:?}: must be a number in [0, 1]");
    }
    if let Some(b) = a.budget
        && !(b.is_finite() && b >= 0.0)
    {
        bail!("--budget {b:?}: must be a finite non-negative number");
    }
    if a.max_table == Some(0) {
        bail!("--max-table 0: must be at least 1");
    }
    if a.max_evaluations == Some(0) {
        bail!("--max-evaluations 0: must be at least 1");
    }
    if let Some(t) = a.time_limit
        && !(t.is_finite() && t > 0.0 && t <= 1e9)
    {
        bail!("--time-limit {t:?}: must be a positive number of seconds (at most 1e9)");
    }
    let (net, nb) = read_network(&a.network, a.normalize, ui)?;
    let (class, positive_state) = match (&a.class, &nb) {
        (Some(spec), _) => {
            let (var, state) = spec
                .split_once('=')
                .ok_or_else(|| anyhow!("--class {spec:?}: expected VAR=STATE"))?;
            let id = var_id(&net, var, &a.network)?;
            // By name first, then by index.
            let s = net.state_id(id, state).or_else(|e| {
                let k = state
                    .parse::<usize>()
                    .ok()
                    .filter(|&k| k < net.cardinality(id));
                k.ok_or(e).with_context(|| format!("--class {spec:?}"))
            })?;
            (id, s)
        }
        (None, Some(p)) => (0, p.positive_state),
        (None, None) => bail!("--class VAR=STATE is required for this network"),
    };
    let features: Vec<usize> = match (a.features.as_deref(), &nb) {
        (Some("leaves"), _) => net.leaves().into_iter().filter(|&v| v != class).collect(),
        (Some(list), _) => list
            .split(',')
            .map(|f| var_id(&net, f.trim(), &a.network))
            .collect::<anyhow::Result<_>>()?,
        (None, Some(p)) => (1..=p.feature_names.len()).collect(),
        (None, None) => bail!("--features A,B,... or --features leaves is required"),
    };
    if features.is_empty() {
        bail!("no features to trim");
    }
    for (k, &f) in features.iter().enumerate() {
        let name = &net.variable(f).name;
        if f == class {
            bail!(
                "{}: the class `{name}` cannot be one of the features",
                a.network.display()
            );
        }
        if features[..k].contains(&f) {
            bail!("{}: feature `{name}` is listed twice", a.network.display());
        }
    }
    if features.len() > 63 {
        bail!(
            "{}: {} features; trimming handles at most 63",
            a.network.display(),
            features.len()
        );
    }
    let threshold = a
        .threshold
        .or(nb.as_ref().map(|p| p.threshold))
        .ok_or_else(|| anyhow!("--threshold is required for this network"))?;
    let budget = a
        .budget
        .or(nb.as_ref().map(|p| p.budget))
        .ok_or_else(|| anyhow!("--budget is required for this network"))?;
    let names: Vec<String> = features
        .iter()
        .map(|&f| net.variable(f).name.clone())
        .collect();
    let costs = match (&a.costs, &nb) {
        (Some(p), _) => read_costs(p, &names)?,
        (None, Some(p)) if features == (1..=p.feature_names.len()).collect::<Vec<_>>() => {
            p.costs.clone()
        }
        _ => vec![1.0; features.len()],
    };
    // The fast naive-Bayes agreement applies when the class and features are the file's own.
    let nb = nb.filter(|p| {
        class == 0
            && positive_state == p.positive_state
            && features == (1..=p.feature_names.len()).collect::<Vec<_>>()
    });
    Ok(Problem {
        clf: ThresholdClassifier {
            class,
            positive_state,
            features,
            threshold,
        },
        net,
        budget,
        costs,
        nb,
    })
}

/// Runs `srl trim`.
///
/// # Errors
/// Unreadable or malformed input (file and line), unknown names, bad threshold or budget,
/// a network whose features have too many joint states.
pub fn run(a: &TrimArgs, ui: Ui) -> anyhow::Result<()> {
    let p = problem(a, ui)?;
    p.clf
        .validate(&p.net)
        .with_context(|| format!("checking the classifier on {}", a.network.display()))?;
    ui.note(&format!(
        "srl trim: class {}={}, {} features, threshold {}, budget {}",
        p.net.variable(p.clf.class).name,
        p.net.variable(p.clf.class).states[p.clf.positive_state],
        p.clf.features.len(),
        p.clf.threshold,
        p.budget
    ));
    let limits = SearchLimits {
        max_evaluations: a.max_evaluations,
        time_limit: a.time_limit.map(Duration::from_secs_f64),
    };
    let pb = match a.max_evaluations {
        Some(m) => ui.progress(m, "branch and bound (evaluations)"),
        None => ui.spinner("branch and bound"),
    };
    // the bar is redrawn at most every 100 ms (an evaluation can take microseconds)
    let mut next_draw = Duration::ZERO;
    let mut observer = |s: &SearchProgress| {
        if s.elapsed >= next_draw {
            next_draw = s.elapsed + Duration::from_millis(100);
            let n = s.criterion_evaluations + s.bound_evaluations;
            pb.set_position(n);
            pb.set_message(format!(
                "branch and bound: {n} evaluations, best agreement {:.6}",
                s.best
            ));
        }
    };
    let t0 = Instant::now();
    let bb = BranchAndBound::default();
    let t: Trimming = match &p.nb {
        Some(nb) => {
            let m = NaiveBayesAgreement::new(&nb.model, nb.positive_state, p.clf.threshold)
                .map_err(|e| e.in_file(&a.network.display().to_string()))?;
            // 2^26 instantiations of 24 bytes: 1.5 GiB, within a 4 GiB address space
            m.check_search_size(&p.costs, p.budget, f64::from(1u32 << 26))
                .map_err(|e| e.in_file(&a.network.display().to_string()))
                .context("the features have too many joint states for the naive-Bayes search")?;
            bb.run_limited(&m, &p.costs, p.budget, limits, &mut observer)?
        }
        None => {
            let max_table = a.max_table.unwrap_or_else(default_max_table);
            // the plan (scopes only) gives the size and work before any table is built
            let plan = srl_bayes::compile::plan(&p.net, &p.clf, max_table)
                .map_err(|e| e.in_file(&a.network.display().to_string()))?;
            let describe = format!(
                "{} feature instantiations, largest table {} entries, about {:.1e} operations",
                plan.instantiations, plan.peak_entries, plan.operations as f64
            );
            let need = plan.instantiations.max(plan.peak_entries);
            if need > max_table as u128 {
                bail!(
                    "{}: compiling Pr(features, class) needs {describe}, above the limit of {max_table} entries \
                     (--max-table ENTRIES raises it; fewer features shrink it)",
                    a.network.display()
                );
            }
            if plan.operations > 1_000_000_000 {
                ui.note(&format!("compiling Pr(features, class): {describe}"));
            }
            let in_file = |e: srl_bayes::BayesError| e.in_file(&a.network.display().to_string());
            let compiled = srl_bayes::compile::compile_planned(&p.net, &p.clf, plan, max_table)
                .map_err(in_file)
                .context("compiling Pr(features, class)")?;
            let m = JointAgreement::from_compiled(&p.net, &p.clf, compiled).map_err(in_file)?;
            bb.run_limited(&m, &p.costs, p.budget, limits, &mut observer)?
        }
    };
    let secs = t0.elapsed().as_secs_f64();
    pb.finish_and_clear();
    if !t.optimal {
        ui.note(&format!(
            "warning: the search stopped at its limit after {} evaluations: the subset is the best found, NOT proven optimal",
            t.evaluations()
        ));
    }
    let subset: Vec<String> = t
        .subset
        .iter()
        .map(|&i| p.net.variable(p.clf.features[i]).name.clone())
        .collect();
    // `+ 0.0` turns the empty sum's -0.0 into 0
    let cost: f64 = t.subset.iter().map(|&i| p.costs[i]).sum::<f64>() + 0.0;
    let summary = json!({
        "command": "trim",
        "subset": subset,
        "cost": cost,
        "threshold": t.threshold,
        "eca": t.eca,
        "evaluations": t.evaluations(),
        "optimal": t.optimal,
        "seconds": secs,
    });
    let text = format!(
        "subset     {}\ncost       {cost} of budget {}\nthreshold  {}\nECA        {:.6}\nevaluations {}\noptimal    {}\ntime       {secs:.3} s\n",
        if subset.is_empty() {
            "(none)".to_owned()
        } else {
            subset.join(",")
        },
        p.budget,
        t.threshold,
        t.eca,
        t.evaluations(),
        if t.optimal {
            "yes (search complete)"
        } else {
            "NOT proven optimal (search stopped at --max-evaluations / --time-limit; best subset found)"
        }
    );
    ui.summary(&summary, &text)
}
