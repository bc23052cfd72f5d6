//! A plain CSV node/edge pair, for graphs from elsewhere.
//!
//! Format (comma-separated, no quoting, surrounding spaces of a field trimmed, empty lines
//! skipped):
//! - `nodes.csv`: header `id,label,f1,…,fF` (the first two column names must be `id` and
//!   `label`; the rest name the `F >= 0` features), then one row per node:
//!   `<id>,<label>,<x_1>,…,<x_F>`. An empty label means unlabelled. Features are finite
//!   numbers, stored sparse ([`Attributes::Sparse`]: the non-zero entries of each row, as
//!   the LINQS reader stores words), so a bag-of-words table of thousands of columns costs
//!   memory and time in proportion to its non-zeros, not to `n x F`.
//! - `edges.csv`: header `src,dst`, then one row per edge `<id>,<id>`. Every id must be
//!   defined in `nodes.csv` ([`ParseErrorKind::UnknownNode`] otherwise); self-loops and
//!   repeated pairs are dropped and counted in [`RelationalGraph::cleanup`].
//!
//! ```text
//! id,label,degree_wt,age
//! n1,spam,0.5,3
//! n2,,1.0,7
//! ```

use std::collections::HashMap;
use std::path::Path;

use super::{Lines, exact_field_count, parse_f64, perr};
use crate::error::{GraphError, ParseErrorKind};
use crate::graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};

/// Options of [`load_csv`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    /// Undirected (default) or directed (`src → dst`).
    pub directedness: Directedness,
    /// The label set, in label order; `None` (default): the distinct non-empty labels,
    /// sorted. When set, any other label is a [`ParseErrorKind::UnknownLabel`] error.
    pub labels: Option<Vec<String>>,
}

impl Default for CsvOptions {
    fn default() -> Self {
        Self {
            directedness: Directedness::Undirected,
            labels: None,
        }
    }
}

/// A graph read by [`load_csv`] and its feature column names.
#[derive(Clone, Debug)]
pub struct CsvGraph {
    /// The graph (node names = the `id` column).
    pub graph: RelationalGraph,
    /// Names of the feature columns, from the header.
    pub feature_names: Vec<String>,
}

fn split(text: &str) -> Vec<&str> {
    text.split(',').map(str::trim).collect()
}

/// Loads a `nodes.csv` / `edges.csv` pair (format in the [module docs](self)).
///
/// # Errors
/// [`GraphError::Io`] for a missing file; [`GraphError::Parse`] with file and 1-based line
/// for a bad header, a row with too few fields ([`ParseErrorKind::Truncated`]) or a wrong
/// number of features, a bad number, an unknown label (when fixed), a duplicate id, an
/// unknown id in `edges.csv`, non-UTF-8 text, or a `nodes.csv` without rows.
///
/// # Complexity
/// `O(file size + m log m)`.
pub fn load_csv(nodes: &Path, edges: &Path, options: &CsvOptions) -> Result<CsvGraph, GraphError> {
    let mut lines = Lines::open(nodes)?;
    let path = lines.path().to_path_buf();
    let Some((hline, header)) = next_nonempty(&mut lines)? else {
        return Err(perr(&path, 0, ParseErrorKind::Empty));
    };
    let header = split(header);
    if header.len() < 2 || header[0] != "id" || header[1] != "label" {
        return Err(perr(
            &path,
            hline,
            ParseErrorKind::BadHeader {
                reason: "nodes.csv must start with `id,label`".into(),
            },
        ));
    }
    let feature_names: Vec<String> = header[2..].iter().map(|s| (*s).to_string()).collect();
    let f = feature_names.len();
    let mut ids = Vec::new();
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut raw_labels: Vec<(usize, String)> = Vec::new();
    // CSR rows: the non-zero features of each node.
    let (mut offsets, mut indices, mut values) = (vec![0usize], Vec::new(), Vec::new());
    while let Some((line, text)) = next_nonempty(&mut lines)? {
        // Count the fields first (no allocation per row), then parse them in one pass.
        let found = text.bytes().filter(|&b| b == b',').count() + 1;
        if found < 2 {
            return Err(perr(
                &path,
                line,
                ParseErrorKind::Truncated {
                    expected: f + 2,
                    found,
                },
            ));
        }
        if found != f + 2 {
            return Err(perr(
                &path,
                line,
                ParseErrorKind::FeatureCount {
                    expected: f,
                    found: found - 2,
                },
            ));
        }
        let mut fields = text.split(',').map(str::trim);
        let id = fields.next().unwrap_or_default();
        let label = fields.next().unwrap_or_default();
        if index.contains_key(id) {
            return Err(perr(
                &path,
                line,
                ParseErrorKind::DuplicateNode { id: id.into() },
            ));
        }
        for (j, x) in fields.enumerate() {
            let x = parse_f64(x, j + 3).map_err(|k| perr(&path, line, k))?;
            if x != 0.0 {
                indices.push(j as u32);
                values.push(x);
            }
        }
        offsets.push(indices.len());
        index.insert(id.to_string(), ids.len() as u32);
        ids.push(id.to_string());
        raw_labels.push((line, label.to_string()));
    }
    if ids.is_empty() {
        return Err(perr(&path, 0, ParseErrorKind::Empty));
    }
    let names = match &options.labels {
        Some(l) => l.clone(),
        None => {
            let mut l: Vec<String> = raw_labels
                .iter()
                .filter(|(_, s)| !s.is_empty())
                .map(|(_, s)| s.clone())
                .collect();
            l.sort();
            l.dedup();
            l
        }
    };
    let label_set = LabelSet::new(names)?;
    let mut labels = Vec::with_capacity(ids.len());
    for (line, raw) in &raw_labels {
        if raw.is_empty() {
            labels.push(None);
            continue;
        }
        match label_set.index_of(raw) {
            Some(c) => labels.push(Some(c as u32)),
            None => {
                return Err(perr(
                    &path,
                    *line,
                    ParseErrorKind::UnknownLabel { label: raw.clone() },
                ));
            }
        }
    }

    let mut lines = Lines::open(edges)?;

    let path = lines.path().to_path_buf();
    let Some((hline, header)) = next_nonempty(&mut lines)? else {
        return Err(perr(&path, 0, ParseErrorKind::Empty));
    };
    if split(header) != ["src", "dst"] {
        return Err(perr(
            &path,
            hline,
            ParseErrorKind::BadHeader {
                reason: "edges.csv must start with `src,dst`".into(),
            },
        ));
    }
    let mut edge_list = Vec::new();
    while let Some((line, text)) = next_nonempty(&mut lines)? {
        let fields = split(text);
        exact_field_count(&path, line, fields.len(), 2)?;
        let mut ends = [NodeId(0); 2];
        for (slot, id) in ends.iter_mut().zip(&fields) {
            *slot = NodeId(*index.get(*id).ok_or_else(|| {
                perr(
                    &path,
                    line,
                    ParseErrorKind::UnknownNode { id: (*id).into() },
                )
            })?);
        }
        edge_list.push((ends[0], ends[1]));
    }
    let graph = RelationalGraph::new(
        ids,
        Attributes::Sparse {
            num_features: f,
            offsets,
            indices,
            values,
        },
        labels,
        label_set,
        edge_list,
        options.directedness,
    )?;
    Ok(CsvGraph {
        graph,
        feature_names,
    })
}

fn next_nonempty(lines: &mut Lines) -> Result<Option<(usize, &str)>, GraphError> {
    loop {
        // Re-borrow per iteration: the returned slice borrows `lines`.
        let (line, empty) = match lines.next_line()? {
            None => return Ok(None),
            Some((line, text)) => (line, text.trim().is_empty()),
        };
        if !empty {
            return Ok(lines.current().map(|t| (line, t)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_are_stored_sparse_with_their_values() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (n, e) = (dir.path().join("n.csv"), dir.path().join("e.csv"));
        std::fs::write(&n, "id,label,a,b,c\nx,p,0,1.5,0\ny,,0,0,0\nz,q,-2,0,3\n").expect("w");
        std::fs::write(&e, "src,dst\nx,y\n").expect("w");
        let g = load_csv(&n, &e, &CsvOptions::default())
            .expect("loads")
            .graph;
        let Attributes::Sparse {
            num_features,
            offsets,
            indices,
            values,
        } = g.attributes()
        else {
            panic!("dense attributes")
        };
        assert_eq!(*num_features, 3);
        assert_eq!(offsets, &[0, 1, 1, 3]);
        assert_eq!(indices, &[1, 0, 2]);
        assert_eq!(values, &[1.5, -2.0, 3.0]);
        let dense: Vec<Vec<f64>> = (0..3)
            .map(|v| {
                let mut row = vec![0.0; 3];
                g.attributes_of(NodeId::new(v)).for_each(|j, x| row[j] = x);
                row
            })
            .collect();
        assert_eq!(
            dense,
            vec![
                vec![0.0, 1.5, 0.0],
                vec![0.0, 0.0, 0.0],
                vec![-2.0, 0.0, 3.0]
            ]
        );
        assert_eq!(g.labels(), &[Some(0), None, Some(1)]);
    }
}
