//! CSV tables and their encoding into categorical features (equal-frequency
//! discretisation of numeric columns; an empty cell or `?` is missing).
//!
//! Bad cells are errors naming the file and line, never silently encoded: a cell that
//! parses as a non-finite number (`NaN`, `inf`), a missing class, a non-number in a
//! numeric column (when encoding rows not seen while fitting).

use std::path::Path;

use crate::error::BayesError;
use crate::naive_bayes::FeatureKind;

/// A CSV table with a header line: every cell kept as trimmed text, with the file name
/// and the line of each row for error messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvTable {
    /// Column names.
    pub header: Vec<String>,
    /// Rows of cells, each as long as the header.
    pub rows: Vec<Vec<String>>,
    /// The file name used in error messages (`<string>` style names for in-memory text).
    pub file: String,
    /// 1-based line of each row in the file, parallel to `rows` (a row without an entry,
    /// as in a table built by hand, is reported as line 0).
    pub lines: Vec<usize>,
}

impl CsvTable {
    /// Reads a comma-separated file with a header line (no quoting; the UCI files need
    /// none).
    ///
    /// # Errors
    /// [`BayesError::Io`] if unreadable; as [`CsvTable::parse`] otherwise.
    pub fn read(path: &Path) -> Result<Self, BayesError> {
        let text = crate::io::read_text(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses CSV text; blank lines are skipped. Cells are trimmed; an empty cell is kept
    /// as `""` and read as missing by [`TableEncoder`].
    ///
    /// # Errors
    /// [`BayesError::Parse`] with the 1-based line if a row has the wrong number of cells
    /// or there is no header.
    pub fn parse(text: &str, file: &str) -> Result<Self, BayesError> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty());
        let (_, head) = lines
            .next()
            .ok_or_else(|| BayesError::parse(file, 1, "empty file"))?;
        let header: Vec<String> = head.split(',').map(|s| s.trim().to_string()).collect();
        let mut rows = Vec::new();
        let mut row_lines = Vec::new();
        for (i, l) in lines {
            let row: Vec<String> = l.split(',').map(|s| s.trim().to_string()).collect();
            if row.len() != header.len() {
                return Err(BayesError::parse(
                    file,
                    i + 1,
                    format!("{} cells, header has {}", row.len(), header.len()),
                ));
            }
            rows.push(row);
            row_lines.push(i + 1);
        }
        Ok(Self {
            header,
            rows,
            file: file.to_string(),
            lines: row_lines,
        })
    }

    /// The 1-based file line of row `r` (0 if unknown).
    #[must_use]
    pub fn line_of(&self, r: usize) -> usize {
        self.lines.get(r).copied().unwrap_or(0)
    }

    /// A parse error at row `r`.
    fn err_at(&self, r: usize, message: impl Into<String>) -> BayesError {
        BayesError::parse(&self.file, self.line_of(r), message)
    }

    /// Index of column `name`.
    ///
    /// # Errors
    /// [`BayesError::UnknownVariable`] if absent.
    pub fn column(&self, name: &str) -> Result<usize, BayesError> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| BayesError::UnknownVariable {
                name: name.to_string(),
            })
    }

    /// Rewrites every cell of column `col` with `f` (e.g. to binarise a class).
    pub fn map_column(&mut self, col: usize, f: impl Fn(&str) -> String) {
        for r in &mut self.rows {
            if let Some(c) = r.get_mut(col) {
                *c = f(c);
            }
        }
    }
}

/// How [`TableEncoder`] turns columns into categorical features.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `bins` | 2 | equal-frequency bins per numeric column | ≥ 1 |
/// | `max_categorical` | 5 | a numeric column with at most this many distinct values is kept categorical | ≥ 1 |
/// | `missing` | `"?"` | the cell text that marks a missing value (an empty cell is always missing too) | any |
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncoderParams {
    /// Number of equal-frequency bins for numeric columns.
    pub bins: usize,
    /// Distinct-value count up to which a numeric column is treated as categorical.
    pub max_categorical: usize,
    /// The missing-value marker (besides the empty cell, which is always missing).
    pub missing: String,
}

impl Default for EncoderParams {
    fn default() -> Self {
        Self {
            bins: 2,
            max_categorical: 5,
            missing: "?".to_string(),
        }
    }
}

/// The encoding of one feature column.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnEncoding {
    /// Categorical: the state names in index order (sorted numerically when all parse as
    /// numbers, else lexicographically).
    Categorical(Vec<String>),
    /// Numeric, discretised: ascending cut points; value `v` goes to bin
    /// `#{cuts ≤ v}` (so `cuts.len() + 1` bins).
    Numeric(Vec<f64>),
}

/// A fitted encoder from CSV columns to categorical features.
///
/// Numeric columns (every non-missing cell parses as a number and there are more than
/// `max_categorical` distinct values) are discretised into `bins` equal-frequency bins on
/// the fitting rows: the cut points are midpoints between the sorted values at ranks
/// `⌊k n / bins⌋ − 1` and `⌊k n / bins⌋` (`k = 1..bins`), duplicates dropped, so tied values
/// never straddle a cut. Everything else is categorical. Missing cells (empty or the
/// `missing` marker) stay missing and are counted in [`EncodedData::missing`]; categorical
/// values unseen during fitting are encoded as missing and counted too.
#[derive(Clone, Debug, PartialEq)]
pub struct TableEncoder {
    /// Feature column indices in the table.
    pub feature_columns: Vec<usize>,
    /// Their encodings, parallel to `feature_columns`.
    pub encodings: Vec<ColumnEncoding>,
    /// The class column index.
    pub class_column: usize,
    /// Class state names, in index order.
    pub class_states: Vec<String>,
    /// The missing marker (the empty cell is missing too).
    pub missing: String,
}

/// Whether `cell` is missing: empty, or equal to the marker.
fn is_missing(cell: &str, marker: &str) -> bool {
    cell.is_empty() || cell == marker
}

/// Checks that no cell of `rows` parses as a non-finite number (`NaN`, `inf`, ...): such a
/// cell would be a number no bin can hold.
fn check_finite(table: &CsvTable, rows: &[usize], marker: &str) -> Result<(), BayesError> {
    for &r in rows {
        for (col, cell) in table.rows[r].iter().enumerate() {
            if !is_missing(cell, marker) && cell.parse::<f64>().is_ok_and(|v| !v.is_finite()) {
                return Err(table.err_at(
                    r,
                    format!(
                        "column `{}`: `{cell}` is not a finite number (write a missing value as \
                         an empty cell or `{marker}`)",
                        table.header[col]
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Checks that every index of `rows` is a row of `table` as long as its header.
fn check_rows(table: &CsvTable, rows: &[usize]) -> Result<(), BayesError> {
    for &r in rows {
        match table.rows.get(r) {
            None => {
                return Err(BayesError::data(format!(
                    "row index {r} out of range for {} rows",
                    table.rows.len()
                )));
            }
            Some(row) if row.len() != table.header.len() => {
                return Err(table.err_at(
                    r,
                    format!("{} cells, header has {}", row.len(), table.header.len()),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Rows encoded for [`crate::NaiveBayesParams::fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedData {
    /// Feature names.
    pub feature_names: Vec<String>,
    /// Feature kinds (all categorical).
    pub kinds: Vec<FeatureKind>,
    /// Row-major `n_rows × n_features`, state indices as `f64`, `NaN` = missing.
    pub x: Vec<f64>,
    /// Class index per row.
    pub y: Vec<u32>,
    /// Number of missing cells per feature (including unseen categorical values).
    pub missing: Vec<usize>,
}

impl EncodedData {
    /// Number of rows.
    #[must_use]
    pub fn n_rows(&self) -> usize {
        self.y.len()
    }

    /// Row `r` as a slice.
    ///
    /// # Panics
    /// If `r` is out of range.
    #[must_use]
    pub fn row(&self, r: usize) -> &[f64] {
        let nf = self.kinds.len();
        &self.x[r * nf..(r + 1) * nf]
    }

    /// The rows `rows` (in that order) as a new data set.
    ///
    /// # Panics
    /// If an index is out of range.
    #[must_use]
    pub fn subset_rows(&self, rows: &[usize]) -> Self {
        let mut x = Vec::with_capacity(rows.len() * self.kinds.len());
        let mut missing = vec![0; self.kinds.len()];
        for &r in rows {
            x.extend_from_slice(self.row(r));
            for (i, v) in self.row(r).iter().enumerate() {
                if v.is_nan() {
                    missing[i] += 1;
                }
            }
        }
        Self {
            feature_names: self.feature_names.clone(),
            kinds: self.kinds.clone(),
            x,
            y: rows.iter().map(|&r| self.y[r]).collect(),
            missing,
        }
    }
}

impl TableEncoder {
    /// Fits the encoder on `fit_rows` of `table` (all rows when `None`); every column but
    /// the class becomes a feature.
    ///
    /// # Errors
    /// [`BayesError::UnknownVariable`] if the class column is absent;
    /// [`BayesError::Parse`] naming the file and line if a fitting row has a missing class
    /// (empty or the marker) or a cell that parses as a non-finite number;
    /// [`BayesError::InvalidData`] if there are no fitting rows, a row index is out of range,
    /// or `bins` is 0.
    pub fn fit(
        table: &CsvTable,
        class: &str,
        params: &EncoderParams,
        fit_rows: Option<&[usize]>,
    ) -> Result<Self, BayesError> {
        if params.bins == 0 {
            return Err(BayesError::data("bins must be at least 1"));
        }
        let class_column = table.column(class)?;
        let all: Vec<usize> = (0..table.rows.len()).collect();
        let rows = fit_rows.unwrap_or(&all);
        if rows.is_empty() {
            return Err(BayesError::data("no rows to fit the encoder on"));
        }
        check_rows(table, rows)?;
        if let Some(&r) = rows
            .iter()
            .find(|&&r| is_missing(&table.rows[r][class_column], &params.missing))
        {
            return Err(table.err_at(
                r,
                format!(
                    "the class `{class}` is missing (empty or `{}`)",
                    params.missing
                ),
            ));
        }
        check_finite(table, rows, &params.missing)?;
        let distinct_sorted = |col: usize| -> Vec<String> {
            let mut v: Vec<String> = rows
                .iter()
                .map(|&r| table.rows[r][col].clone())
                .filter(|s| !is_missing(s, &params.missing))
                .collect();
            let numeric = v.iter().all(|s| s.parse::<f64>().is_ok());
            if numeric {
                v.sort_by(|a, b| {
                    a.parse::<f64>()
                        .unwrap_or(0.0)
                        .total_cmp(&b.parse::<f64>().unwrap_or(0.0))
                });
            } else {
                v.sort();
            }
            v.dedup();
            v
        };
        let class_states = distinct_sorted(class_column);
        let mut feature_columns = Vec::new();
        let mut encodings = Vec::new();
        for col in 0..table.header.len() {
            if col == class_column {
                continue;
            }
            feature_columns.push(col);
            let states = distinct_sorted(col);
            let mut nums: Vec<f64> = Vec::new();
            let numeric = rows.iter().all(|&r| {
                let s = &table.rows[r][col];
                if is_missing(s, &params.missing) {
                    return true;
                }
                match s.parse::<f64>() {
                    Ok(v) => {
                        nums.push(v);
                        true
                    }
                    Err(_) => false,
                }
            });
            if numeric && states.len() > params.max_categorical {
                nums.sort_by(f64::total_cmp);
                let n = nums.len();
                let mut cuts: Vec<f64> = Vec::new();
                for k in 1..params.bins {
                    let idx = k * n / params.bins;
                    if idx == 0 || idx >= n {
                        continue;
                    }
                    // move the cut to the end of a run of ties
                    let mut j = idx;
                    while j < n && nums[j] == nums[j - 1] {
                        j += 1;
                    }
                    if j >= n {
                        continue;
                    }
                    let c = 0.5 * (nums[j - 1] + nums[j]);
                    if cuts.last().is_none_or(|&l| c > l) {
                        cuts.push(c);
                    }
                }
                encodings.push(ColumnEncoding::Numeric(cuts));
            } else {
                encodings.push(ColumnEncoding::Categorical(states));
            }
        }
        Ok(Self {
            feature_columns,
            encodings,
            class_column,
            class_states,
            missing: params.missing.clone(),
        })
    }

    /// Encodes `rows` of `table` (all rows when `None`).
    ///
    /// # Errors
    /// [`BayesError::Parse`] naming the file and line if a class value is missing or unseen
    /// while fitting, a cell of a numeric column does not parse as a number, or a cell
    /// parses as a non-finite number; [`BayesError::InvalidData`] if a row index is out of
    /// range or the table has fewer columns than the encoder.
    pub fn encode(
        &self,
        table: &CsvTable,
        rows: Option<&[usize]>,
    ) -> Result<EncodedData, BayesError> {
        let all: Vec<usize> = (0..table.rows.len()).collect();
        let rows = rows.unwrap_or(&all);
        check_rows(table, rows)?;
        let width = self
            .feature_columns
            .iter()
            .chain([&self.class_column])
            .max()
            .map_or(0, |&c| c + 1);
        if table.header.len() < width {
            return Err(BayesError::data(format!(
                "the table has {} columns, the encoder needs {width}",
                table.header.len()
            )));
        }
        check_finite(table, rows, &self.missing)?;
        let nf = self.feature_columns.len();
        let mut x = Vec::with_capacity(rows.len() * nf);
        let mut y = Vec::with_capacity(rows.len());
        let mut missing = vec![0; nf];
        for &r in rows {
            let row = &table.rows[r];
            let c = &row[self.class_column];
            if is_missing(c, &self.missing) {
                return Err(table.err_at(
                    r,
                    format!("the class is missing (empty or `{}`)", self.missing),
                ));
            }
            let ci = self
                .class_states
                .iter()
                .position(|s| s == c)
                .ok_or_else(|| {
                    table.err_at(r, format!("class `{c}` was not seen while fitting"))
                })?;
            y.push(ci as u32);
            for (k, (&col, enc)) in self.feature_columns.iter().zip(&self.encodings).enumerate() {
                let s = &row[col];
                let v = if is_missing(s, &self.missing) {
                    None
                } else {
                    match enc {
                        ColumnEncoding::Categorical(states) => {
                            states.iter().position(|t| t == s).map(|p| p as f64)
                        }
                        ColumnEncoding::Numeric(cuts) => {
                            let v: f64 = s.parse().map_err(|_| {
                                table.err_at(
                                    r,
                                    format!(
                                        "column `{}`: `{s}` is not a number",
                                        table.header[col]
                                    ),
                                )
                            })?;
                            Some(cuts.iter().filter(|&&c| c <= v).count() as f64)
                        }
                    }
                };
                match v {
                    Some(v) => x.push(v),
                    None => {
                        missing[k] += 1;
                        x.push(f64::NAN);
                    }
                }
            }
        }
        let kinds = self
            .encodings
            .iter()
            .map(|e| FeatureKind::Categorical {
                states: match e {
                    ColumnEncoding::Categorical(s) => s.len().max(1),
                    ColumnEncoding::Numeric(c) => c.len() + 1,
                },
            })
            .collect();
        Ok(EncodedData {
            feature_names: self
                .feature_columns
                .iter()
                .map(|&c| table.header[c].clone())
                .collect(),
            kinds,
            x,
            y,
            missing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_frequency_bins_and_missing() -> Result<(), BayesError> {
        let t = CsvTable::parse("a,b,c\n1,x,p\n2,y,n\n3,?,p\n4,x,n\n5,x,p\n6,y,n\n", "t.csv")?;
        let enc = TableEncoder::fit(&t, "c", &EncoderParams::default(), None)?;
        assert_eq!(enc.encodings[0], ColumnEncoding::Numeric(vec![3.5]));
        let d = enc.encode(&t, None)?;
        assert_eq!(d.missing, vec![0, 1]);
        assert_eq!(d.row(0)[0], 0.0);
        assert_eq!(d.row(3)[0], 1.0);
        assert!(d.row(2)[1].is_nan());
        assert_eq!(d.y, vec![1, 0, 1, 0, 1, 0]);
        Ok(())
    }
}
