//! Result tables: the rows every `cargo xtask reproduce` experiment writes, as JSON and
//! Markdown.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// One measured number: a (dataset, method, metric) cell, its value, the paper's value if
/// the paper states one, and any further settings (`rho`, `alpha`, `fold`, `stderr`, …)
/// as extra JSON fields.
///
/// Serialises flat: `{"dataset": .., "method": .., "metric": .., "value": .., "paper": ..,
/// <extra fields>}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultRow {
    /// Dataset name (e.g. `cora`, `synthetic`).
    pub dataset: String,
    /// Method name (e.g. `ICA-LR`, `CSMN`); `-` for dataset statistics.
    pub method: String,
    /// Metric name (e.g. `accuracy`, `cost`, `nodes`).
    pub metric: String,
    /// Our value. Non-finite values serialise as JSON `null`.
    pub value: f64,
    /// The paper's value for the same cell, if it states one.
    pub paper: Option<f64>,
    /// Further columns (settings, standard errors, counts), in key order.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl ResultRow {
    /// A row with no paper value and no extra columns.
    #[must_use]
    pub fn new(
        dataset: impl Into<String>,
        method: impl Into<String>,
        metric: impl Into<String>,
        value: f64,
    ) -> Self {
        Self {
            dataset: dataset.into(),
            method: method.into(),
            metric: metric.into(),
            value,
            paper: None,
            extra: BTreeMap::new(),
        }
    }

    /// Sets the paper's value.
    #[must_use]
    pub fn paper(mut self, paper: Option<f64>) -> Self {
        self.paper = paper;
        self
    }

    /// Adds an extra column (a setting like `rho`, or `stderr`).
    #[must_use]
    pub fn with(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.extra.insert(key.into(), value.into());
        self
    }
}

/// The results of one experiment run: what `OUT/NAME/results.json` holds.
///
/// JSON shape: `{"experiment": NAME, "seed": N, "quick": bool, "rows": [ResultRow...],
/// "notes": [..], "skipped": [..]}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultsTable {
    /// Experiment name (the argument of `cargo xtask reproduce`).
    pub experiment: String,
    /// The seed every random choice of the run derives from.
    pub seed: u64,
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// The measured cells.
    pub rows: Vec<ResultRow>,
    /// Free-text notes printed under the table (settings, caveats, data subsets).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Parts that did not run, each with the reason (e.g. the data path that was missing).
    #[serde(default)]
    pub skipped: Vec<String>,
}

impl ResultsTable {
    /// An empty table.
    #[must_use]
    pub fn new(experiment: impl Into<String>, seed: u64, quick: bool) -> Self {
        Self {
            experiment: experiment.into(),
            seed,
            quick,
            ..Self::default()
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: ResultRow) {
        self.rows.push(row);
    }

    /// Pretty-printed JSON.
    ///
    /// # Errors
    /// Only if serde_json fails, which it does not for these types.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// Parses a table written by [`ResultsTable::to_json`].
    ///
    /// # Errors
    /// The serde_json error for malformed input.
    pub fn from_json(s: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(s)
    }

    /// A Markdown report: a heading, one table with columns dataset, method, the extra
    /// columns present in any row (sorted), metric, ours, paper; then notes and skipped
    /// parts. Values print with 4 significant decimals (integers as integers).
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# {}\n", self.experiment);
        let _ = writeln!(
            out,
            "seed {}, {} run\n",
            self.seed,
            if self.quick { "quick" } else { "full" }
        );
        if !self.rows.is_empty() {
            let mut keys: Vec<&String> = self.rows.iter().flat_map(|r| r.extra.keys()).collect();
            keys.sort();
            keys.dedup();
            let any_paper = self.rows.iter().any(|r| r.paper.is_some());
            let mut header = vec!["dataset".to_string(), "method".to_string()];
            header.extend(keys.iter().map(|k| (*k).clone()));
            header.push("metric".into());
            header.push("ours".into());
            if any_paper {
                header.push("paper".into());
            }
            let _ = writeln!(out, "| {} |", header.join(" | "));
            let numeric = 1 + usize::from(any_paper);
            let mut rule = "|---".repeat(header.len() - numeric);
            rule.push_str(&"|---:".repeat(numeric));
            let _ = writeln!(out, "{rule}|");
            for r in &self.rows {
                let mut cells = vec![r.dataset.clone(), r.method.clone()];
                for k in &keys {
                    cells.push(r.extra.get(*k).map_or(String::new(), json_cell));
                }
                cells.push(r.metric.clone());
                cells.push(format_value(r.value));
                if any_paper {
                    cells.push(r.paper.map_or(String::new(), format_value));
                }
                let _ = writeln!(out, "| {} |", cells.join(" | "));
            }
            out.push('\n');
        }
        for n in &self.notes {
            let _ = writeln!(out, "- {n}");
        }
        if !self.skipped.is_empty() {
            let _ = writeln!(out, "\n## Skipped\n");
            for s in &self.skipped {
                let _ = writeln!(out, "- {s}");
            }
        }
        out
    }
}

fn json_cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), format_value),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Formats a number for a report: integers without decimals, others with 4 decimals,
/// non-finite as `NaN`/`inf`.
#[must_use]
pub fn format_value(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_and_shape() {
        let mut t = ResultsTable::new("datasets", 7, true);
        t.push(ResultRow::new("cora", "-", "nodes", 2708.0));
        t.push(
            ResultRow::new("synthetic", "CSMN", "cost", 0.123_456)
                .paper(Some(0.2))
                .with("rho", 0.5),
        );
        let j = t.to_json().unwrap();
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["experiment"], "datasets");
        assert_eq!(v["rows"][1]["rho"], 0.5);
        assert_eq!(v["rows"][0]["paper"], serde_json::Value::Null);
        assert_eq!(ResultsTable::from_json(&j).unwrap(), t);
    }

    #[test]
    fn markdown_snapshot() {
        let mut t = ResultsTable::new("demo", 1, false);
        t.push(ResultRow::new("cora", "ICA-LR", "accuracy", 0.875_12).paper(Some(0.8796)));
        t.push(ResultRow::new("cora", "CO-LR", "accuracy", 0.77).with("protocol", "RS"));
        t.notes.push("a note".into());
        t.skipped.push("citeseer: missing /x/citeseer".into());
        insta::assert_snapshot!(t.to_markdown());
    }
}
