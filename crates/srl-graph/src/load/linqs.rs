//! The LINQS citation-graph format (Cora, Citeseer; Sen et al. 2008).
//!
//! - `NAME.content`: one node per line, fields separated by tabs (a line without tabs may
//!   separate them by runs of ASCII whitespace): `<id> <x_1> … <x_F> <label>`. In a
//!   tab-separated line an empty field (a trailing tab, two tabs in a row) is an error
//!   naming the field ([`ParseErrorKind::EmptyLabel`], [`ParseErrorKind::EmptyField`]). Ids are strings (Citeseer mixes numeric and
//!   textual ids) compared exactly. Features are numbers (0/1 word indicators in Cora and
//!   Citeseer) and are stored as sparse rows: only non-zeros are kept. Every line must have
//!   the feature count of the first.
//! - `NAME.cites`: one link per line, `<cited id> <citing id>` ("a b" means b cites a).
//!
//! Either file may be gzip-compressed and called `NAME.content.gz` / `NAME.cites.gz`.
//!
//! Quirks handled and counted in [`LinqsReport`] rather than rejected: self-loops
//! (Citeseer has 124), links naming ids missing from `.content` (Citeseer: 17 lines, 15
//! ids; dropped), links given in both directions (Cora: 151 pairs; merged into one
//! undirected edge, so Cora has 5278 undirected edges for 5429 lines).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Lines, exact_field_count, find_plain_or_gz, parse_f64, perr};
use crate::error::{GraphError, ParseErrorKind};
use crate::graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};

/// Options of [`load_linqs`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinqsOptions {
    /// Undirected (default; citing and cited merged) or directed (citing → cited).
    pub directedness: Directedness,
    /// The label set, in label order. `None` (default): the distinct labels of
    /// `.content`, sorted by name. `Some`: any other label is a
    /// [`ParseErrorKind::UnknownLabel`] error.
    pub labels: Option<Vec<String>>,
}

impl Default for LinqsOptions {
    fn default() -> Self {
        Self {
            directedness: Directedness::Undirected,
            labels: None,
        }
    }
}

/// What [`load_linqs`] read and what it dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinqsReport {
    /// The `.content` file read.
    pub content_path: PathBuf,
    /// The `.cites` file read.
    pub cites_path: PathBuf,
    /// Nodes (lines of `.content`).
    pub nodes: usize,
    /// Features per node.
    pub features: usize,
    /// Stored non-zero feature values.
    pub nonzeros: usize,
    /// Number of labels.
    pub labels: usize,
    /// Non-empty lines of `.cites`.
    pub cite_lines: usize,
    /// Lines `x x` (dropped).
    pub self_loops: usize,
    /// Lines naming an id missing from `.content` (dropped).
    pub dangling_lines: usize,
    /// The distinct missing ids, sorted.
    pub dangling_ids: Vec<String>,
    /// The 1-based line of `.cites` of the first dangling line, if any (for a front-end's
    /// warning).
    pub first_dangling_line: Option<usize>,
    /// Lines that repeat an earlier pair (for undirected graphs: in either direction)
    /// and were merged.
    pub merged_duplicates: usize,
    /// Edges of the graph.
    pub edges: usize,
}

/// Loads `dir/NAME.content[.gz]` and `dir/NAME.cites[.gz]`.
///
/// # Returns
/// The graph (node names = paper ids, sparse attributes, labels from the last column,
/// undirected or directed edges) and a [`LinqsReport`] of what was read and dropped.
///
/// # Errors
/// [`GraphError::Io`] for a missing or unreadable file; [`GraphError::Parse`] with file and
/// line for a truncated line, a wrong feature count, an empty label or field, a bad
/// number, an unknown label (when [`LinqsOptions::labels`] is set), a duplicate node id,
/// non-UTF-8 text, or an empty `.content`.
///
/// # Complexity
/// `O(total file size + m log m)`.
///
/// # Examples
/// ```no_run
/// use srl_graph::load::linqs::{LinqsOptions, load_linqs};
/// let (g, report) = load_linqs("/data/cora".as_ref(), "cora", &LinqsOptions::default())?;
/// assert_eq!((g.num_nodes(), g.num_edges()), (2708, 5278));
/// assert_eq!(report.merged_duplicates, 151);
/// # Ok::<(), srl_graph::GraphError>(())
/// ```
///
/// # References
/// Sen, Namata, Bilgic, Getoor, Gallagher, Eliassi-Rad (2008), *Collective classification
/// in network data*, AI Magazine 29(3) (the Cora and Citeseer graphs).
pub fn load_linqs(
    dir: &Path,
    name: &str,
    options: &LinqsOptions,
) -> Result<(RelationalGraph, LinqsReport), GraphError> {
    let content = find_plain_or_gz(dir, &format!("{name}.content"))?;
    let cites = find_plain_or_gz(dir, &format!("{name}.cites"))?;
    load_linqs_files(&content, &cites, options)
}

/// Like [`load_linqs`], with the two file paths given explicitly.
///
/// # Errors
/// As [`load_linqs`].
pub fn load_linqs_files(
    content: &Path,
    cites: &Path,
    options: &LinqsOptions,
) -> Result<(RelationalGraph, LinqsReport), GraphError> {
    let mut lines = Lines::open(content)?;
    let path = lines.path().to_path_buf();
    let mut ids: Vec<String> = Vec::new();
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut raw_labels: Vec<String> = Vec::new();
    let mut offsets = vec![0usize];
    let mut indices: Vec<u32> = Vec::new();
    let mut values: Vec<f64> = Vec::new();
    let mut num_features: Option<usize> = None;
    let mut label_lines: Vec<usize> = Vec::new();
    while let Some((line, text)) = lines.next_line()? {
        if text.trim().is_empty() {
            continue;
        }
        let fields = content_fields(text).map_err(|k| perr(&path, line, k))?;
        if fields.len() < 2 {
            return Err(perr(
                &path,
                line,
                ParseErrorKind::Truncated {
                    expected: 2,
                    found: fields.len(),
                },
            ));
        }
        let f = fields.len() - 2;
        match num_features {
            None => num_features = Some(f),
            Some(expected) if expected != f => {
                return Err(perr(
                    &path,
                    line,
                    ParseErrorKind::FeatureCount { expected, found: f },
                ));
            }
            Some(_) => {}
        }
        let id = fields[0];
        if index.contains_key(id) {
            return Err(perr(
                &path,
                line,
                ParseErrorKind::DuplicateNode { id: id.into() },
            ));
        }
        for (j, &x) in fields[1..=f].iter().enumerate() {
            let value = match x {
                "0" => continue,
                "1" => 1.0,
                _ => parse_f64(x, j + 2).map_err(|k| perr(&path, line, k))?,
            };
            if value != 0.0 {
                indices.push(j as u32);
                values.push(value);
            }
        }
        offsets.push(indices.len());
        index.insert(id.to_string(), ids.len() as u32);
        ids.push(id.to_string());
        raw_labels.push(fields[f + 1].to_string());
        label_lines.push(line);
    }
    let Some(num_features) = num_features else {
        return Err(perr(&path, 0, ParseErrorKind::Empty));
    };
    let names = match &options.labels {
        Some(l) => l.clone(),
        None => {
            let mut l = raw_labels.clone();
            l.sort();
            l.dedup();
            l
        }
    };
    let label_set = LabelSet::new(names)?;
    let mut labels = Vec::with_capacity(ids.len());
    for (raw, &line) in raw_labels.iter().zip(&label_lines) {
        match label_set.index_of(raw) {
            Some(c) => labels.push(Some(c as u32)),
            None => {
                return Err(perr(
                    &path,
                    line,
                    ParseErrorKind::UnknownLabel { label: raw.clone() },
                ));
            }
        }
    }
    let mut report = LinqsReport {
        content_path: content.to_path_buf(),
        cites_path: cites.to_path_buf(),
        nodes: ids.len(),
        features: num_features,
        nonzeros: values.len(),
        labels: label_set.len(),
        ..LinqsReport::default()
    };

    let mut lines = Lines::open(cites)?;

    let path = lines.path().to_path_buf();
    let mut edges = Vec::new();
    let mut dangling = Vec::new();
    while let Some((line, text)) = lines.next_line()? {
        if text.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = text.split_ascii_whitespace().collect();
        exact_field_count(&path, line, fields.len(), 2)?;
        report.cite_lines += 1;
        let (cited, citing) = (fields[0], fields[1]);
        if cited == citing {
            report.self_loops += 1;
            continue;
        }
        match (index.get(cited), index.get(citing)) {
            (Some(&a), Some(&b)) => edges.push((NodeId(b), NodeId(a))),
            (a, b) => {
                report.dangling_lines += 1;
                report.first_dangling_line.get_or_insert(line);
                if a.is_none() {
                    dangling.push(cited.to_string());
                }
                if b.is_none() {
                    dangling.push(citing.to_string());
                }
            }
        }
    }
    dangling.sort();
    dangling.dedup();
    // every link names an unknown id: the two files do not belong together (a 0-edge
    // graph would be a silent wrong answer)
    if report.dangling_lines > 0 && report.dangling_lines + report.self_loops == report.cite_lines {
        let line = report.first_dangling_line.unwrap_or(1);
        return Err(perr(
            &path,
            line,
            ParseErrorKind::NoKnownLinks {
                links: report.cite_lines - report.self_loops,
                first: dangling.first().cloned().unwrap_or_default(),
            },
        ));
    }
    report.dangling_ids = dangling;
    let graph = RelationalGraph::new(
        ids,
        Attributes::Sparse {
            num_features,
            offsets,
            indices,
            values,
        },
        labels,
        label_set,
        edges,
        options.directedness,
    )?;
    report.merged_duplicates = graph.cleanup().duplicates;
    report.edges = graph.num_edges();
    Ok((graph, report))
}

/// The fields of a `.content` line. A line with tabs is split at each tab (fields
/// trimmed of other whitespace), so that an empty field is seen and reported
/// ([`ParseErrorKind::EmptyLabel`] for the last one, [`ParseErrorKind::EmptyField`]
/// otherwise) instead of being merged away and shifting every later field; a line without
/// tabs is split at runs of ASCII whitespace.
fn content_fields(text: &str) -> Result<Vec<&str>, ParseErrorKind> {
    if !text.contains('\t') {
        return Ok(text.split_ascii_whitespace().collect());
    }
    let fields: Vec<&str> = text
        .trim_end_matches([' ', '\r'])
        .split('\t')
        .map(|f| f.trim_matches(|c: char| c.is_ascii_whitespace()))
        .collect();
    let n = fields.len();
    if let Some(i) = fields.iter().position(|f| f.is_empty()) {
        return Err(if i + 1 == n && n > 1 {
            ParseErrorKind::EmptyLabel
        } else {
            ParseErrorKind::EmptyField { field: i + 1 }
        });
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cites_naming_only_unknown_ids_is_an_error_and_some_are_counted() {
        let d = std::env::temp_dir().join(format!("srl-linqs-dangling-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("mkdir");
        let content = write(&d, "t.content", b"a\t1\tx\nb\t0\ty\n");
        let all = write(&d, "all.cites", b"a\ta\nzz\tyy\nqq\ta\n");
        let e =
            load_linqs_files(&content, &all, &LinqsOptions::default()).expect_err("all dangling");
        let msg = e.to_string();
        assert!(
            msg.contains("all.cites:2") && msg.contains("none of the 2 links"),
            "{msg}"
        );
        let some = write(&d, "some.cites", b"a\tb\nzz\ta\n");
        let (g, r) = load_linqs_files(&content, &some, &LinqsOptions::default()).expect("load");
        assert_eq!(
            (g.num_edges(), r.dangling_lines, r.first_dangling_line),
            (1, 1, Some(2))
        );
        std::fs::remove_dir_all(&d).expect("rm");
    }

    fn write(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write");
        p
    }

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("srl-graph-linqs-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    }

    #[test]
    fn reads_quirks_and_counts_them() {
        let d = tmp("ok");
        write(&d, "t.content", b"a\t1\t0\tX\nb\t0\t0\tY\nc\t1\t1\tX\n");
        write(&d, "t.cites", b"a\tb\nb\ta\nc\tc\nzz\ta\na\tc\n");
        let (g, r) = load_linqs(&d, "t", &LinqsOptions::default()).expect("loads");
        assert_eq!(g.num_nodes(), 3);
        assert_eq!(g.num_edges(), 2);
        assert_eq!(g.label_set().names(), &["X".to_string(), "Y".to_string()]);
        assert_eq!(g.label(NodeId(1)), Some(1));
        assert_eq!(r.self_loops, 1);
        assert_eq!(r.dangling_lines, 1);
        assert_eq!(r.dangling_ids, vec!["zz".to_string()]);
        assert_eq!(r.merged_duplicates, 1);
        assert_eq!(r.nonzeros, 3);
        assert_eq!(g.attributes_of(NodeId(2)).to_dense(2), vec![1.0, 1.0]);
        let (gd, _) = load_linqs(
            &d,
            "t",
            &LinqsOptions {
                directedness: Directedness::Directed,
                labels: None,
            },
        )
        .expect("loads");
        // "a b": b cites a, stored citing -> cited.
        assert_eq!(gd.num_edges(), 3);
        assert!(gd.edge_list().contains(&(NodeId(1), NodeId(0))));
        assert!(gd.edge_list().contains(&(NodeId(2), NodeId(0))));
    }

    #[test]
    fn missing_file_names_the_path() {
        let d = tmp("missing");
        let e = load_linqs(&d, "nope", &LinqsOptions::default()).expect_err("missing");
        assert!(e.to_string().contains("nope.content"), "{e}");
    }
}
