//! BoostSRL `setParam:` lines: which ones shape learning here, and what became of each.
//!
//! [`SoftRfgbParams::fit`](crate::SoftRfgbParams::fit) applies the settings of the
//! background file it is given (unless
//! [`apply_background_settings`](crate::SoftRfgbParams::apply_background_settings) is
//! off) and records a [`SettingsReport`] in the model, so a BoostSRL user's files keep
//! their meaning and the caller can print what was honoured and what was not.

use serde::{Deserialize, Serialize};

use crate::boost::SoftRfgbParams;
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
/// Only the keys BoostSRL itself reads from a background file take effect, with BoostSRL's
/// meaning (`ILPouterLoop.overwriteParametersFromBK`, `WILLSetup`, BoostSRL 0.5.5 as
/// srlearn ships it), so a user's file learns what it learns in BoostSRL:
///
/// | key | effect |
/// |---|---|
/// | `maxTreeDepth` | `tree.max_depth` (integer ≥ 1: tests on a root-leaf path) |
/// | `nodeSize` | `tree.max_node_literals` (integer ≥ 1, capped to 2) |
/// | `numOfClauses` | at most N inner nodes (BoostSRL's `maxNumberOfClauses` counts the clauses its outer loop learns, one per inner node): `tree.max_leaves` = N + 1 |
/// | `numOfCycles` | at most N outer-loop cycles, each of which tests one node: also at most N inner nodes (`tree.max_leaves` ≤ N + 1) |
/// | `maxScoreToStop` | `tree.max_acceptable_node_score` (number ≥ 0) |
/// | `clauseLength` | `tree.max_clause_length` (BoostSRL's `maxTreeDepthInLiterals`, integer ≥ 1) |
/// | `recursion` | `recursion` (`true` / `false`; [`crate::recursion`]) |
///
/// Everything else is ignored with a reason, among them keys that look like settings but
/// that BoostSRL does not read from a background file: `treeDepth`,
/// `maxTreeDepthInNodes`, `maxNumberOfClauses`, `maxNumberOfLiteralsAtAnInteriorNode`,
/// `maxAcceptableNodeScoreToStop` (BoostSRL's names are those of the table; its trees on
/// a file saying `treeDepth=3` are five tests deep), and `negPosRatio`, `trees`, `step`,
/// `logPrior` (command-line flags in BoostSRL: `-negPosRatio`, `-trees`, `-step`; srl:
/// `--neg-ratio`, `--trees`, `--step`); `minLCTrees`/`incrLCTrees` (learning-curve
/// printing), `resampleNegs` (no effect in BoostSRL), `lineSearch` (not implemented),
/// `loadAllLibraries`/`loadAllBasicModes` (no Prolog libraries here), unknown keys, and
/// values that do not parse or are out of range.
pub fn apply_settings(params: &mut SoftRfgbParams, bk: &Background) -> SettingsReport {
    let mut report = SettingsReport::default();
    // BoostSRL's two caps on inner nodes, applied together at the end
    let (mut clauses, mut cycles): (Option<usize>, Option<usize>) = (None, None);
    let not_read = |flag: &str| -> Result<String, String> {
        Err(format!(
            "BoostSRL does not read this key from a background file; {flag}"
        ))
    };
    for (k, v) in &bk.settings {
        let key = k.to_ascii_lowercase();
        let int: Option<usize> = v.parse().ok();
        let num: Option<f64> = v.parse::<f64>().ok().filter(|x| x.is_finite());
        let outcome: Result<String, String> = match key.as_str() {
            "numofclauses" => match int {
                Some(n) if n >= 1 => {
                    clauses = Some(n);
                    Ok(format!("at most {n} inner nodes: tree.max_leaves = {}", n + 1))
                }
                _ => Err("expects an integer >= 1".into()),
            },
            "numofcycles" => match int {
                Some(n) if n >= 1 => {
                    cycles = Some(n);
                    Ok(format!(
                        "at most {n} outer-loop cycles, one node each: tree.max_leaves <= {}",
                        n + 1
                    ))
                }
                _ => Err("expects an integer >= 1".into()),
            },
            "maxtreedepth" => match int {
                Some(n) => {
                    let n = n.max(1);
                    params.tree.max_depth = n;
                    Ok(format!("tree.max_depth = {n}"))
                }
                None => Err("expects an integer >= 1".into()),
            },
            "nodesize" => match int {
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
            "maxscoretostop" => match num {
                Some(x) if x >= 0.0 => {
                    params.tree.max_acceptable_node_score = x;
                    Ok(format!("tree.max_acceptable_node_score = {x}"))
                }
                _ => Err("expects a number >= 0".into()),
            },
            "clauselength" => match int {
                Some(n) if n >= 1 => {
                    params.tree.max_clause_length = n;
                    Ok(format!("tree.max_clause_length = {n}"))
                }
                _ => Err("expects an integer >= 1".into()),
            },
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
            "treedepth" | "maxtreedepthinnodes" => not_read("its tree depth is maxTreeDepth"),
            "maxnumberofclauses" => not_read("its limit on inner nodes is numOfClauses"),
            "maxnumberofliteralsataninteriornode" => {
                not_read("its literals per node test are nodeSize")
            }
            "maxacceptablenodescoretostop" => not_read("its variance stop is maxScoreToStop"),
            "negposratio" => not_read("it is the command-line flag -negPosRatio (srl: --neg-ratio)"),
            "trees" | "numberoftrees" => not_read("it is the command-line flag -trees (srl: --trees)"),
            "step" | "steplength" => not_read("it is the command-line flag -step (srl: --step)"),
            "logprior" | "initiallogodds" => {
                not_read("BoostSRL's log prior is fixed at -1.8 (srl: SoftRfgbParams::initial_log_odds)")
            }
            "minlctrees" | "incrlctrees" => {
                Err("learning-curve printing (BoostSRL -lc), not a learning parameter".into())
            }
            "resamplenegs" => Err(match parse_bool(v) {
                Some(_) => "deprecated in BoostSRL, no effect there; sampling is set by --neg-ratio / negative_sampling".into(),
                None => "deprecated in BoostSRL; value is not a boolean".into(),
            }),
            "linesearch" => Err("line search is not implemented; steps have length `step`".into()),
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
    if let Some(inner) = [clauses, cycles].into_iter().flatten().min() {
        params.tree.max_leaves = inner + 1;
    }
    report
}
