//! CSV tables and their encoding into categorical features (equal-frequency
//! discretisation of numeric columns, `?` as missing).

use std::path::Path;

use crate::error::BayesError;
use crate::naive_bayes::FeatureKind;

/// A CSV table with a header line: every cell kept as trimmed text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvTable {
    /// Column names.
    pub header: Vec<String>,
    /// Rows of cells, each as long as the header.
    pub rows: Vec<Vec<String>>,
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

    /// Parses CSV text; blank lines are skipped.
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
        }
        Ok(Self { header, rows })
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
/// | `missing` | `"?"` | the cell text that marks a missing value | any |
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncoderParams {
    /// Number of equal-frequency bins for numeric columns.
    pub bins: usize,
    /// Distinct-value count up to which a numeric column is treated as categorical.
    pub max_categorical: usize,
    /// The missing-value marker.
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
/// never straddle a cut. Everything else is categorical. Missing cells stay missing;
/// categorical values unseen during fitting are encoded as missing and counted.
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
    /// The missing marker.
    pub missing: String,
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
    /// [`BayesError::InvalidData`] if a fitting row has a missing class, there are no
    /// fitting rows, or `bins` is 0.
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
        let distinct_sorted = |col: usize| -> Vec<String> {
            let mut v: Vec<String> = rows
                .iter()
                .map(|&r| table.rows[r][col].clone())
                .filter(|s| *s != params.missing)
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
        if rows
            .iter()
            .any(|&r| table.rows[r][class_column] == params.missing)
        {
            return Err(BayesError::data("a row has a missing class"));
        }
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
                if *s == params.missing {
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
    /// [`BayesError::InvalidData`] if a class value is missing or unseen while fitting, or
    /// a numeric cell does not parse.
    pub fn encode(
        &self,
        table: &CsvTable,
        rows: Option<&[usize]>,
    ) -> Result<EncodedData, BayesError> {
        let all: Vec<usize> = (0..table.rows.len()).collect();
        let rows = rows.unwrap_or(&all);
        let nf = self.feature_columns.len();
        let mut x = Vec::with_capacity(rows.len() * nf);
        let mut y = Vec::with_capacity(rows.len());
        let mut missing = vec![0; nf];
        for &r in rows {
            let row = &table.rows[r];
            let c = &row[self.class_column];
            let ci = self
                .class_states
                .iter()
                .position(|s| s == c)
                .ok_or_else(|| BayesError::data(format!("row {}: class `{c}` unknown", r + 1)))?;
            y.push(ci as u32);
            for (k, (&col, enc)) in self.feature_columns.iter().zip(&self.encodings).enumerate() {
                let s = &row[col];
                let v = if *s == self.missing {
                    None
                } else {
                    match enc {
                        ColumnEncoding::Categorical(states) => {
                            states.iter().position(|t| t == s).map(|p| p as f64)
                        }
                        ColumnEncoding::Numeric(cuts) => {
                            let v: f64 = s.parse().map_err(|_| {
                                BayesError::data(format!("row {}: `{s}` is not a number", r + 1))
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
