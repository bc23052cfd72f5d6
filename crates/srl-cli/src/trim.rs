//! `srl trim NETWORK`: the feature subset within a budget that maximises the expected
//! classification agreement (ECA) with the full classifier, by branch and bound, and the
//! new decision threshold (Choi & Van den Broeck 2018, Sections 4-5).
//!
//! Networks: BIF (`.bif`, `.bif.gz`), Hugin `.net`, UAI `BAYES` (`.uai`; variables
//! `0..n`, states `s0…`), or a TrimBN naive-Bayes JSON (`.json`, which carries its class,
//! threshold, budget and costs; the options override them).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, anyhow, bail};
use clap::Args;
use serde_json::json;
use srl_bayes::trim::{BranchAndBound, JointAgreement, NaiveBayesAgreement, Trimming};
use srl_bayes::{BayesianNetwork, ThresholdClassifier, VariableElimination};

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
}

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
) -> anyhow::Result<(BayesianNetwork, Option<srl_bayes::io::TrimProblem>)> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if name.ends_with(".json") {
        let p = srl_bayes::io::read_trimbn_json(path)?;
        Ok((p.to_bayesian_network()?, Some(p)))
    } else if name.ends_with(".bif") || name.ends_with(".bif.gz") {
        Ok((srl_bayes::io::read_bif(path)?, None))
    } else if name.ends_with(".net") {
        Ok((srl_bayes::io::read_hugin_net(path)?, None))
    } else if name.ends_with(".uai") {
        Ok((srl_bayes::io::read_uai(path)?.to_bayesian_network()?, None))
    } else {
        bail!(
            "{}: unknown network format (expected .bif, .bif.gz, .net, .uai or .json)",
            path.display()
        )
    }
}

fn var_id(net: &BayesianNetwork, name: &str, path: &Path) -> anyhow::Result<usize> {
    net.id(name).with_context(|| path.display().to_string())
}

fn read_costs(path: &Path, names: &[String]) -> anyhow::Result<Vec<f64>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut costs = vec![None; names.len()];
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
        costs[k] = Some(c);
    }
    costs
        .into_iter()
        .zip(names)
        .map(|(c, n)| c.ok_or_else(|| anyhow!("{}: no cost for feature {n:?}", path.display())))
        .collect()
}

fn problem(a: &TrimArgs) -> anyhow::Result<Problem> {
    let (net, nb) = read_network(&a.network)?;
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
    let p = problem(a)?;
    p.clf.validate(&p.net).context("checking the classifier")?;
    ui.note(&format!(
        "srl trim: class {}={}, {} features, threshold {}, budget {}",
        p.net.variable(p.clf.class).name,
        p.net.variable(p.clf.class).states[p.clf.positive_state],
        p.clf.features.len(),
        p.clf.threshold,
        p.budget
    ));
    let pb = ui.spinner("branch and bound");
    let t0 = Instant::now();
    let bb = BranchAndBound::default();
    let t: Trimming = match &p.nb {
        Some(nb) => {
            let m = NaiveBayesAgreement::new(&nb.model, nb.positive_state, p.clf.threshold)?;
            bb.run(&m, &p.costs, p.budget)?
        }
        None => {
            let ve = VariableElimination::default();
            let m = JointAgreement::new(&p.net, &p.clf, &ve, 1 << 22)
                .context("tabulating Pr(features, class)")?;
            bb.run(&m, &p.costs, p.budget)?
        }
    };
    let secs = t0.elapsed().as_secs_f64();
    pb.finish_and_clear();
    let subset: Vec<String> = t
        .subset
        .iter()
        .map(|&i| p.net.variable(p.clf.features[i]).name.clone())
        .collect();
    let cost: f64 = t.subset.iter().map(|&i| p.costs[i]).sum();
    let summary = json!({
        "command": "trim",
        "subset": subset,
        "cost": cost,
        "threshold": t.threshold,
        "eca": t.eca,
        "evaluations": t.evaluations(),
        "seconds": secs,
    });
    let text = format!(
        "subset     {}\ncost       {cost} of budget {}\nthreshold  {}\nECA        {:.6}\nevaluations {}\ntime       {secs:.3} s\n",
        if subset.is_empty() {
            "(none)".to_owned()
        } else {
            subset.join(",")
        },
        p.budget,
        t.threshold,
        t.eca,
        t.evaluations()
    );
    ui.summary(&summary, &text)
}
