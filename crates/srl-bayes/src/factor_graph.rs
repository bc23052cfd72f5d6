//! A [`BayesianNetwork`] as srl-infer's general [`FactorGraph`] (issue 28): one factor per
//! CPT over `parents ++ [child]`, so BIF and Hugin NET networks run through srl-infer's
//! exact (variable elimination) and loopy-BP inference without a second parser.
//!
//! The CPT layout (parents' joint state slowest, last parent fastest, then the child) is
//! exactly the UAI layout of a factor over `parents ++ [child]` with the child last, so
//! the table is copied in order and only its natural log is taken (a 0 becomes `-∞`, a
//! hard zero). Rows are not renormalised: like the rest of this crate the network is a
//! weighted model, so `ln Z` of the factor graph is `ln` of the total weight (0 when every
//! row sums to 1).

use std::path::Path;

use srl_infer::{FactorGraph, InferError};

use crate::error::BayesError;
use crate::network::BayesianNetwork;

impl BayesianNetwork {
    /// This network as a factor graph: variable `i` of the network is variable `i` of the
    /// graph (same cardinality), factor `i` is the CPT of variable `i` over
    /// `parents(i) ++ [i]` with log-probabilities. Identical CPTs share a table.
    ///
    /// # Errors
    /// [`InferError`] from [`FactorGraph::new`] / [`FactorGraph::add_factor`] (a network
    /// past the factor graph's size limits, or a probability whose log is beyond
    /// `±10^12`, which no finite positive `f64` reaches); a valid network gives none.
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
    /// let g = net.to_factor_graph()?;
    /// let m = srl_infer::VariableElimination::default().marginals(&g)?;
    /// assert!((m.node(1)[0] - (0.2 * 0.9 + 0.8 * 0.1)).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_factor_graph(&self) -> Result<FactorGraph, InferError> {
        let mut g = FactorGraph::new(self.cardinalities())?;
        let mut scope = Vec::new();
        let mut logs = Vec::new();
        for v in 0..self.len() {
            let cpt = self.cpt(v);
            scope.clear();
            scope.extend_from_slice(&cpt.parents);
            scope.push(v);
            logs.clear();
            logs.extend(cpt.probs.iter().map(|p| p.ln()));
            g.add_factor(&scope, &logs)?;
        }
        Ok(g)
    }
}

/// Whether `path` names a network file this module reads (`.bif`, `.bif.gz`, `.net`,
/// case-insensitive).
#[must_use]
pub fn is_network_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.ends_with(".bif") || name.ends_with(".bif.gz") || name.ends_with(".net")
}

/// Reads a BIF (`.bif`, `.bif.gz`) or Hugin NET (`.net`) network with srl-bayes's readers
/// and converts it ([`BayesianNetwork::to_factor_graph`]); also returns the network (for
/// its variable names).
///
/// # Errors
/// The readers' [`BayesError`]s (file and line); [`BayesError::Parse`] naming the file
/// for another extension or a network the factor graph cannot hold.
pub fn read_network_factor_graph(
    path: &Path,
) -> Result<(BayesianNetwork, FactorGraph), BayesError> {
    let name = path.display().to_string();
    let lower = name.to_ascii_lowercase();
    let net = if lower.ends_with(".bif") || lower.ends_with(".bif.gz") {
        crate::io::read_bif(path)?
    } else if lower.ends_with(".net") {
        crate::io::read_hugin_net(path)?
    } else {
        return Err(BayesError::parse(
            &name,
            1,
            "unknown network format (expected .bif, .bif.gz or .net)",
        ));
    };
    let g = net
        .to_factor_graph()
        .map_err(|e| BayesError::parse(&name, 1, format!("as a factor graph: {e}")))?;
    Ok((net, g))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{Cpt, Variable};

    #[test]
    fn cpt_layout_is_the_uai_layout() {
        // c has parents a (2 states) and b (3 states); c has 2 states
        let probs: Vec<f64> = (0..6)
            .flat_map(|r| {
                let p = 0.1 + 0.1 * f64::from(r);
                [p, 1.0 - p]
            })
            .collect();
        let net = BayesianNetwork::new(
            vec![
                Variable::numbered("a", 2),
                Variable::numbered("b", 3),
                Variable::numbered("c", 2),
            ],
            vec![
                Cpt {
                    parents: vec![],
                    probs: vec![0.5, 0.5],
                },
                Cpt {
                    parents: vec![],
                    probs: vec![0.2, 0.3, 0.5],
                },
                Cpt {
                    parents: vec![0, 1],
                    probs,
                },
            ],
        )
        .expect("net");
        let g = net.to_factor_graph().expect("graph");
        for a in 0..2 {
            for b in 0..3 {
                for c in 0..2 {
                    let x = [a, b, c];
                    let w = g.log_score(&x).expect("score").exp();
                    assert!((w - net.joint_weight(&x)).abs() < 1e-15, "{x:?}");
                }
            }
        }
        assert!(is_network_file(Path::new("x/ASIA.BIF.gz")));
        assert!(!is_network_file(Path::new("x.uai")));
    }
}
