//! BoostSRL `setParam:` lines: which ones shape learning here, and what became of each.
//!
//! [`SoftRfgbParams::fit`](crate::SoftRfgbParams::fit) applies the settings of the
//! background file it is given (unless
//! [`apply_background_settings`](crate::SoftRfgbParams::apply_background_settings) is
//! off) and records a [`SettingsReport`] in the model, so a BoostSRL user's files keep
//! their meaning and the caller can print what was honoured and what was not.

use serde::{Deserialize, Serialize};

use crate::boost::{NegativeSampling, SoftRfgbParams};
use crate::logic::Background;

/// One `setParam: key=value` line and what was done with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingOutcome {
    /// The key as written in the file.
    pub key: String,
    /// The value as written.
    pub value: String,
    /// For an applied setting, the parameter it set (`tree.max_leaves = 8`); for an
    /// ignored one, why it was ignored.
    pub note: String,
}

/// The `setParam:` settings of a background file, split into those applied to the
/// learning parameters and those ignored (with the reason).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingsReport {
    /// Settings that changed a parameter, in file order.
    pub applied: Vec<SettingOutcome>,
    /// Settings that did not, in file order.
    pub ignored: Vec<SettingOutcome>,
}

impl SettingsReport {
    /// True if the file had no `setParam:` line.
    pub fn is_empty(&self) -> bool {
        self.applied.is_empty() && self.ignored.is_empty()
    }
}

impl std::fmt::Display for SettingsReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_empty() {
            return f.write_str("no setParam: lines");
        }
        let mut first = true;
        for (tag, list) in [("applied", &self.applied), ("ignored", &self.ignored)] {
            for s in list {
                if !first {
                    f.write_str("; ")?;
                }
                first = false;
                write!(f, "{tag} {}={} ({})", s.key, s.value, s.note)?;
            }
        }
        Ok(())
    }
}

fn parse_bool(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" => Some(true),
        "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Applies the `setParam:` settings of `bk` to `params`, last one winning, and reports
/// each. Keys are compared case-insensitively.
///
/// | key | effect |
/// |---|---|
/// | `numOfClauses`, `maxNumberOfClauses` | `tree.max_leaves` (integer ≥ 1) |
/// | `maxTreeDepth`, `treeDepth`, `maxTreeDepthInNodes` | `tree.max_depth` (integer ≥ 0) |
/// | `nodeSize`, `maxNumberOfLiteralsAtAnInteriorNode` | `tree.max_node_literals` (integer ≥ 1, capped to 2) |
/// | `maxAcceptableNodeScoreToStop` | `tree.max_acceptable_node_score` (number ≥ 0) |
/// | `negPosRatio` | ratio of the negative sampling (> 0; a negative value uses every negative) |
/// | `trees`, `numberOfTrees` | `n_trees` (integer ≥ 1) |
/// | `step`, `stepLength` | `step` (number > 0) |
/// | `logPrior`, `initialLogOdds` | `initial_log_odds` (finite number) |
/// | `recursion` | `recursion` (`true` / `false`; [`crate::recursion`]) |
///
/// Everything else is ignored with a reason: `numOfCycles` (bounds BoostSRL's ILP
/// inner-loop calls per tree; this learner expands nodes until `max_leaves`),
/// `minLCTrees`/`incrLCTrees` (learning-curve printing), `resampleNegs` (deprecated
/// in BoostSRL, no effect), `lineSearch` (not implemented), `loadAllLibraries`/`loadAllBasicModes` (no Prolog
/// libraries here), unknown keys, and values that do not parse or are out of range.
pub fn apply_settings(params: &mut SoftRfgbParams, bk: &Background) -> SettingsReport {
    let mut report = SettingsReport::default();
    for (k, v) in &bk.settings {
        let key = k.to_ascii_lowercase();
        let int: Option<usize> = v.parse().ok();
        let num: Option<f64> = v.parse::<f64>().ok().filter(|x| x.is_finite());
        let outcome: Result<String, String> = match key.as_str() {
            "numofclauses" | "maxnumberofclauses" => match int {
                Some(n) if n >= 1 => {
                    params.tree.max_leaves = n;
                    Ok(format!("tree.max_leaves = {n}"))
                }
                _ => Err("expects an integer >= 1".into()),
            },
            "maxtreedepth" | "treedepth" | "maxtreedepthinnodes" => match int {
                Some(n) => {
                    params.tree.max_depth = n;
                    Ok(format!("tree.max_depth = {n}"))
                }
                None => Err("expects an integer >= 0".into()),
            },
            "nodesize" | "maxnumberofliteralsataninteriornode" => match int {
                Some(n) if n >= 1 => {
                    params.tree.max_node_literals = n.min(2);
                    if n > 2 {
                        Ok("tree.max_node_literals = 2 (capped: node tests have at most 2 literals here)".into())
                    } else {
                        Ok(format!("tree.max_node_literals = {n}"))
                    }
                }
                _ => Err("expects an integer >= 1".into()),
            },
            "maxacceptablenodescoretostop" => match num {
                Some(x) if x >= 0.0 => {
                    params.tree.max_acceptable_node_score = x;
                    Ok(format!("tree.max_acceptable_node_score = {x}"))
                }
                _ => Err("expects a number >= 0".into()),
            },
            "negposratio" => match num {
                Some(r) if r > 0.0 => {
                    params.negative_sampling = match params.negative_sampling {
                        NegativeSampling::Once(_) => NegativeSampling::Once(r),
                        _ => NegativeSampling::PerTree(r),
                    };
                    Ok(format!("negative_sampling = {:?}", params.negative_sampling))
                }
                Some(r) if r < 0.0 => {
                    params.negative_sampling = NegativeSampling::All;
                    Ok("negative_sampling = All".into())
                }
                _ => Err("expects a non-zero number".into()),
            },
            "trees" | "numberoftrees" => match int {
                Some(n) if n >= 1 => {
                    params.n_trees = n;
                    Ok(format!("n_trees = {n}"))
                }
                _ => Err("expects an integer >= 1".into()),
            },
            "step" | "steplength" => match num {
                Some(x) if x > 0.0 => {
                    params.step = x;
                    Ok(format!("step = {x}"))
                }
                _ => Err("expects a number > 0".into()),
            },
            "logprior" | "initiallogodds" => match num {
                Some(x) => {
                    params.initial_log_odds = x;
                    Ok(format!("initial_log_odds = {x}"))
                }
                None => Err("expects a finite number".into()),
            },
            "numofcycles" | "maxnumberofcycles" => Err(
                "bounds BoostSRL's ILP inner-loop calls per tree; this learner expands nodes until max_leaves".into(),
            ),
            "minlctrees" | "incrlctrees" => {
                Err("learning-curve printing (BoostSRL -lc), not a learning parameter".into())
            }
            "resamplenegs" => Err(match parse_bool(v) {
                Some(_) => "deprecated in BoostSRL, no effect there; sampling is set by negPosRatio / negative_sampling".into(),
                None => "deprecated in BoostSRL; value is not a boolean".into(),
            }),
            "linesearch" => Err("line search is not implemented; steps have length `step`".into()),
            "recursion" => match parse_bool(v) {
                Some(b) => {
                    params.recursion = b;
                    Ok(format!(
                        "recursion = {b}{}",
                        if b {
                            " (the target's atoms are the query relation recursive_T; prediction samples them jointly)"
                        } else {
                            ""
                        }
                    ))
                }
                None => Err("expects true or false".into()),
            },
            "loadalllibraries" | "loadallbasicmodes" => {
                Err("no Prolog libraries or basic modes exist here".into())
            }
            _ => Err("unknown setting".into()),
        };
        let (list, note) = match outcome {
            Ok(n) => (&mut report.applied, n),
            Err(n) => (&mut report.ignored, n),
        };
        list.push(SettingOutcome {
            key: k.clone(),
            value: v.clone(),
            note,
        });
    }
    report
}
