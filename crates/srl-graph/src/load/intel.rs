//! The Intel Berkeley Research Lab sensor data (Bodik et al. 2004) as snapshot graphs
//! (Sen & Getoor 2006, Section 6.3).
//!
//! # Files
//! - readings (`data.txt`, or the shipped 5-day subset `data_2004-03-04_to_2004-03-08.txt.gz`):
//!   one reading per line, **single-space separated**, no header:
//!   `date time epoch moteid temperature humidity light voltage`. An empty field (two
//!   consecutive spaces) is a missing value; lines are split on single spaces, never
//!   collapsed. Every line must have exactly 8 fields.
//! - `mote_locs.txt`: `moteid x y` in metres, whitespace separated, one mote per line.
//!
//! # Snapshot graphs (our procedure)
//! The paper keeps readings without missing values, discretises temperature, humidity and
//! voltage into three values and light into three levels, links motes within 5 m, and
//! builds "snapshots such that each snapshot consists of readings from at least 50
//! different sensors with no two readings from the same sensor". It does not say how
//! readings are grouped. In the data, readings of one epoch are sparse: no epoch of the
//! 5-day subset has 50 motes with a complete reading (at most 48). So a snapshot here is a
//! **tumbling window of [`IntelParams::window_epochs`] consecutive epochs** (default 5, about
//! 2.5 minutes; windows start at the smallest epoch), keeping for each mote its first
//! complete reading in the window, and kept when at least [`IntelParams::min_motes`] motes
//! (default 50) have one. On the 5-day subset this gives 1163 snapshots.
//!
//! - Discretisation: equal-frequency cut points ([`EqualFrequencyBins`]) fitted on every
//!   complete reading of a located mote (temperature, humidity, voltage: attributes; light:
//!   the label, `low` / `medium` / `high`). Outliers (humidity −8983, voltage 0.035) are
//!   kept, as the paper only removes missing values; they fall in the extreme bins.
//! - Node attributes: a dense one-hot row of `3 · bins` columns, `[temperature bins,
//!   humidity bins, voltage bins]`.
//! - Edges: pairs of motes present in the snapshot at Euclidean distance `<=`
//!   [`IntelParams::radius_m`]. The paper reports 122 edges over 54 motes; `mote_locs.txt`
//!   gives **61** pairs within 5.0 m over the 54 motes (53 strictly closer than 5 m), 56
//!   among the 52 motes that have readings (motes 5 and 15 have none in the 5-day subset),
//!   and **54 among the 51 motes with a complete reading** (mote 28's light value is always
//!   missing in these days, so it never appears in a snapshot); motes 47 and 48 have no
//!   neighbour within 5 m. The paper's 122 is about twice 61, perhaps counting both
//!   directions; we keep undirected pairs.
//!
//! On the shipped subset: 476,518 readings, 15,255 with a missing value; cut points
//! temperature `[20.9586, 23.5164]` °C, humidity `[37.5737, 41.4444]` %, voltage
//! `[2.60491, 2.63964]` V, light `[101.2, 397.44]` lux; 1163 of 2880 windows kept, 50.4
//! motes per snapshot on average.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Lines, parse_f64, perr};
use crate::error::{GraphError, ParseErrorKind};
use crate::graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};

/// One sensor reading; missing values are `None`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntelReading {
    /// Epoch (a sequence number, about 31 s apart, shared by all motes).
    pub epoch: u32,
    /// Mote id.
    pub mote: u16,
    /// Temperature in °C.
    pub temperature: Option<f64>,
    /// Temperature-corrected relative humidity in %.
    pub humidity: Option<f64>,
    /// Light in lux.
    pub light: Option<f64>,
    /// Battery voltage in V.
    pub voltage: Option<f64>,
}

impl IntelReading {
    /// The four values `[temperature, humidity, light, voltage]` if none is missing.
    #[must_use]
    pub fn complete(&self) -> Option<[f64; 4]> {
        Some([
            self.temperature?,
            self.humidity?,
            self.light?,
            self.voltage?,
        ])
    }
}

/// A mote's position in the lab, in metres.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MoteLocation {
    /// Mote id.
    pub mote: u16,
    /// x coordinate (m).
    pub x: f64,
    /// y coordinate (m).
    pub y: f64,
}

/// Reads the readings file (plain or gzip).
///
/// # Errors
/// [`GraphError::Io`] for a missing file; [`GraphError::Parse`] with file and line for a
/// line without exactly 8 single-space-separated fields ([`ParseErrorKind::Truncated`] if
/// fewer, [`ParseErrorKind::FieldCount`] if more), a bad epoch / mote id / value
/// ([`ParseErrorKind::BadNumber`]), or non-UTF-8 text. Empty lines are skipped.
///
/// # Complexity
/// `O(file size)`.
pub fn read_readings(path: &Path) -> Result<Vec<IntelReading>, GraphError> {
    let mut lines = Lines::open(path)?;
    let path = lines.path().to_path_buf();
    let mut out = Vec::new();
    while let Some((line, text)) = lines.next_line()? {
        if text.is_empty() {
            continue;
        }
        let mut fields = [""; 8];
        let mut count = 0usize;
        for (i, f) in text.split(' ').enumerate() {
            if i < 8 {
                fields[i] = f;
            }
            count += 1;
        }
        let parsed = if count < 8 {
            Err(ParseErrorKind::Truncated {
                expected: 8,
                found: count,
            })
        } else if count > 8 {
            Err(ParseErrorKind::FieldCount {
                expected: 8,
                found: count,
            })
        } else {
            parse_reading(&fields)
        };
        out.push(parsed.map_err(|k| perr(&path, line, k))?);
    }
    Ok(out)
}

fn parse_reading(f: &[&str]) -> Result<IntelReading, ParseErrorKind> {
    let bad = |i: usize| ParseErrorKind::BadNumber {
        text: f[i].to_string(),
        field: i + 1,
    };
    let epoch = f[2].parse::<u32>().map_err(|_| bad(2))?;
    let mote = f[3].parse::<u16>().map_err(|_| bad(3))?;
    let opt = |i: usize| -> Result<Option<f64>, ParseErrorKind> {
        if f[i].is_empty() {
            Ok(None)
        } else {
            parse_f64(f[i], i + 1).map(Some)
        }
    };
    Ok(IntelReading {
        epoch,
        mote,
        temperature: opt(4)?,
        humidity: opt(5)?,
        light: opt(6)?,
        voltage: opt(7)?,
    })
}

/// Reads `mote_locs.txt`.
///
/// # Errors
/// [`GraphError::Io`]; [`GraphError::Parse`] with file and line for a line without 3
/// fields, a bad number, a duplicate mote id, non-UTF-8 text, or an empty file.
pub fn read_mote_locations(path: &Path) -> Result<Vec<MoteLocation>, GraphError> {
    let mut lines = Lines::open(path)?;
    let path = lines.path().to_path_buf();
    let mut out: Vec<MoteLocation> = Vec::new();
    while let Some((line, text)) = lines.next_line()? {
        let f: Vec<&str> = text.split_ascii_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f.len() != 3 {
            let kind = if f.len() < 3 {
                ParseErrorKind::Truncated {
                    expected: 3,
                    found: f.len(),
                }
            } else {
                ParseErrorKind::FieldCount {
                    expected: 3,
                    found: f.len(),
                }
            };
            return Err(perr(&path, line, kind));
        }
        let mote = f[0].parse::<u16>().map_err(|_| {
            perr(
                &path,
                line,
                ParseErrorKind::BadNumber {
                    text: f[0].into(),
                    field: 1,
                },
            )
        })?;
        let x = parse_f64(f[1], 2).map_err(|k| perr(&path, line, k))?;
        let y = parse_f64(f[2], 3).map_err(|k| perr(&path, line, k))?;
        if out.iter().any(|m| m.mote == mote) {
            return Err(perr(
                &path,
                line,
                ParseErrorKind::DuplicateNode {
                    id: mote.to_string(),
                },
            ));
        }
        out.push(MoteLocation { mote, x, y });
    }
    if out.is_empty() {
        return Err(perr(&path, 0, ParseErrorKind::Empty));
    }
    Ok(out)
}

/// Equal-frequency discretisation into `bins` values: cut points at the `i / bins`
/// quantiles of the fitted sample.
///
/// With the sample sorted as `s[0] <= … <= s[n-1]`, cut `i` (`1 <= i < bins`) is
/// `s[ceil(i · n / bins) − 1]`, and `bin(x)` is the number of cuts `c` with `x > c`
/// (so `x <= cut_1` is bin 0). Ties at a cut go to the lower bin, so bins can be unequal
/// when values repeat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EqualFrequencyBins {
    cuts: Vec<f64>,
}

impl EqualFrequencyBins {
    /// Fits the cut points to `values`.
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] if `bins == 0` or `values` is empty,
    /// [`GraphError::NonFinite`] for a NaN or infinite value.
    ///
    /// # Complexity
    /// `O(n log n)`.
    pub fn fit(values: &[f64], bins: usize) -> Result<Self, GraphError> {
        if bins == 0 || values.is_empty() {
            return Err(GraphError::InvalidParameter {
                name: "bins",
                value: format!("{bins} bins over {} values", values.len()),
                reason: "need bins >= 1 and at least one value".into(),
            });
        }
        if let Some(i) = values.iter().position(|x| !x.is_finite()) {
            return Err(GraphError::NonFinite {
                what: "value to discretise",
                index: i,
                value: values[i],
            });
        }
        let mut s = values.to_vec();
        s.sort_unstable_by(f64::total_cmp);
        let n = s.len();
        let cuts = (1..bins).map(|i| s[(i * n).div_ceil(bins) - 1]).collect();
        Ok(Self { cuts })
    }

    /// The cut points (`bins − 1`, non-decreasing).
    #[must_use]
    pub fn cuts(&self) -> &[f64] {
        &self.cuts
    }

    /// Number of bins.
    #[must_use]
    pub fn num_bins(&self) -> usize {
        self.cuts.len() + 1
    }

    /// The bin of `x`, in `0..num_bins()`.
    #[inline]
    #[must_use]
    pub fn bin(&self, x: f64) -> usize {
        self.cuts.partition_point(|&c| x > c)
    }
}

/// Settings of the snapshot construction (see the [module docs](self)).
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `radius_m` | 5.0 | link motes at distance `<=` this (m) | finite, `>= 0` |
/// | `window_epochs` | 5 | epochs per snapshot window | `>= 1` |
/// | `min_motes` | 50 | keep a window when this many motes have a complete reading | `>= 1` |
/// | `bins` | 3 | discretisation levels for every attribute and for light | `>= 2` |
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IntelParams {
    /// Edge radius in metres (paper: 5 m).
    pub radius_m: f64,
    /// Snapshot window length in epochs.
    pub window_epochs: u32,
    /// Minimum motes per snapshot (paper: 50).
    pub min_motes: usize,
    /// Levels per discretised variable (paper: 3).
    pub bins: usize,
}

impl Default for IntelParams {
    fn default() -> Self {
        Self {
            radius_m: 5.0,
            window_epochs: 5,
            min_motes: 50,
            bins: 3,
        }
    }
}

/// One snapshot: the motes with a reading in one window, as a labelled graph.
#[derive(Clone, Debug)]
pub struct IntelSnapshot {
    /// First epoch of the window.
    pub first_epoch: u32,
    /// Mote id of each node (node `i` is mote `motes[i]`), increasing.
    pub motes: Vec<u16>,
    /// Nodes = motes, attributes one-hot `[temperature, humidity, voltage]` bins, label =
    /// light level, edges = pairs within the radius.
    pub graph: RelationalGraph,
}

/// Counts describing how the snapshots were built.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntelReport {
    /// Readings in the file.
    pub readings: usize,
    /// Readings dropped for a missing value.
    pub incomplete: usize,
    /// Complete readings dropped because their mote has no location.
    pub unlocated: usize,
    /// Complete readings of located motes (the discretisation sample).
    pub complete: usize,
    /// Distinct motes with at least one reading (complete or not).
    pub motes_in_file: usize,
    /// Distinct located motes with a complete reading (the mote graph's nodes).
    pub motes_with_readings: usize,
    /// Motes that have readings but none complete (in the 5-day subset: mote 28, whose
    /// light value is always missing).
    pub motes_never_complete: Vec<u16>,
    /// Windows with at least one reading.
    pub windows: usize,
    /// Windows kept as snapshots.
    pub snapshots: usize,
}

/// The Intel-lab data as Sen & Getoor's snapshot graphs.
#[derive(Clone, Debug)]
pub struct IntelDataset {
    /// The snapshots, in time order.
    pub snapshots: Vec<IntelSnapshot>,
    /// The mote graph: every located mote with a complete reading, edges within the
    /// radius, no labels, no attributes (node `i` is mote `mote_ids[i]`).
    pub mote_graph: RelationalGraph,
    /// Mote id of each node of `mote_graph`.
    pub mote_ids: Vec<u16>,
    /// Cut points of temperature (°C).
    pub temperature: EqualFrequencyBins,
    /// Cut points of humidity (%).
    pub humidity: EqualFrequencyBins,
    /// Cut points of voltage (V).
    pub voltage: EqualFrequencyBins,
    /// Cut points of light (lux): the label levels.
    pub light: EqualFrequencyBins,
    /// What was read and dropped.
    pub report: IntelReport,
}

/// The label names for `bins` light levels: `low`, `medium`, `high` for 3, else
/// `level0`, `level1`, ….
fn light_labels(bins: usize) -> LabelSet {
    if bins == 3 {
        LabelSet::new(vec!["low".into(), "medium".into(), "high".into()])
            .unwrap_or_else(|_| LabelSet::numbered(3))
    } else {
        LabelSet::numbered(bins)
    }
}

/// Pairs of `motes` (indices into the slice) at distance `<= radius`, as node pairs.
fn radius_edges(locs: &[MoteLocation], radius: f64) -> Vec<(NodeId, NodeId)> {
    let mut edges = Vec::new();
    for i in 0..locs.len() {
        for j in i + 1..locs.len() {
            let (dx, dy) = (locs[i].x - locs[j].x, locs[i].y - locs[j].y);
            if (dx * dx + dy * dy).sqrt() <= radius {
                edges.push((NodeId::new(i), NodeId::new(j)));
            }
        }
    }
    edges
}

/// The graph of the given motes with an edge for every pair within `radius` metres
/// (Euclidean, inclusive), nodes in the order given, named by mote id, unlabelled, no
/// attributes.
///
/// # Errors
/// [`GraphError::InvalidParameter`] for a negative or non-finite radius.
///
/// # Complexity
/// `O(n²)` (54 motes).
pub fn mote_graph(locs: &[MoteLocation], radius: f64) -> Result<RelationalGraph, GraphError> {
    check_radius(radius)?;
    RelationalGraph::new(
        locs.iter().map(|m| m.mote.to_string()).collect(),
        Attributes::none(locs.len()),
        vec![None; locs.len()],
        LabelSet::default(),
        radius_edges(locs, radius),
        Directedness::Undirected,
    )
}

fn check_radius(radius: f64) -> Result<(), GraphError> {
    if radius.is_finite() && radius >= 0.0 {
        Ok(())
    } else {
        Err(GraphError::InvalidParameter {
            name: "radius_m",
            value: radius.to_string(),
            reason: "must be finite and >= 0".into(),
        })
    }
}

/// Builds the snapshot graphs from parsed readings and mote locations (procedure in the
/// [module docs](self)).
///
/// # Errors
/// [`GraphError::InvalidParameter`] for parameters outside the ranges of [`IntelParams`]
/// or when no complete reading of a located mote exists.
///
/// # Complexity
/// `O(R log R)` for `R` readings (sorting), plus `O(s · 50²)` for `s` snapshots' edges.
///
/// # References
/// Sen & Getoor 2006, Section 6.3.
pub fn build_snapshots(
    readings: &[IntelReading],
    locations: &[MoteLocation],
    params: &IntelParams,
) -> Result<IntelDataset, GraphError> {
    check_radius(params.radius_m)?;
    if params.window_epochs == 0 || params.min_motes == 0 || params.bins < 2 {
        return Err(GraphError::InvalidParameter {
            name: "IntelParams",
            value: format!("{params:?}"),
            reason: "need window_epochs >= 1, min_motes >= 1, bins >= 2".into(),
        });
    }
    let max_mote = locations.iter().map(|m| m.mote as usize).max().unwrap_or(0);
    let mut loc_of = vec![None; max_mote + 1];
    for m in locations {
        loc_of[m.mote as usize] = Some(*m);
    }
    let mut report = IntelReport {
        readings: readings.len(),
        ..IntelReport::default()
    };
    // (epoch, mote, file order, values) of complete readings of located motes.
    let mut complete: Vec<(u32, u16, usize, [f64; 4])> = Vec::new();
    for (i, r) in readings.iter().enumerate() {
        let Some(v) = r.complete() else {
            report.incomplete += 1;
            continue;
        };
        if loc_of.get(r.mote as usize).copied().flatten().is_none() {
            report.unlocated += 1;
            continue;
        }
        complete.push((r.epoch, r.mote, i, v));
    }
    report.complete = complete.len();
    if complete.is_empty() {
        return Err(GraphError::InvalidParameter {
            name: "readings",
            value: format!("{} readings", readings.len()),
            reason: "no complete reading of a located mote".into(),
        });
    }
    let column = |j: usize| -> Vec<f64> { complete.iter().map(|c| c.3[j]).collect() };
    let temperature = EqualFrequencyBins::fit(&column(0), params.bins)?;
    let humidity = EqualFrequencyBins::fit(&column(1), params.bins)?;
    let light = EqualFrequencyBins::fit(&column(2), params.bins)?;
    let voltage = EqualFrequencyBins::fit(&column(3), params.bins)?;

    let motes_seen: BTreeSet<u16> = complete.iter().map(|c| c.1).collect();
    let motes_any: BTreeSet<u16> = readings.iter().map(|r| r.mote).collect();
    report.motes_in_file = motes_any.len();
    report.motes_with_readings = motes_seen.len();
    report.motes_never_complete = motes_any
        .iter()
        .copied()
        .filter(|m| !motes_seen.contains(m) && loc_of.get(*m as usize).copied().flatten().is_some())
        .collect();
    let seen_locs: Vec<MoteLocation> = motes_seen
        .iter()
        .filter_map(|&m| loc_of[m as usize])
        .collect();
    let mote_graph = mote_graph(&seen_locs, params.radius_m)?;
    let mote_ids: Vec<u16> = motes_seen.iter().copied().collect();

    let first = complete.iter().map(|c| c.0).min().unwrap_or(0);
    let w = params.window_epochs;
    // Sort by (window, mote, epoch, file order): the first reading of each mote per window
    // comes first in its run.
    complete.sort_unstable_by_key(|c| ((c.0 - first) / w, c.1, c.0, c.2));
    let b = params.bins;
    let labels = light_labels(b);
    let mut snapshots = Vec::new();
    let mut start = 0;
    while start < complete.len() {
        let win = (complete[start].0 - first) / w;
        let mut end = start;
        let mut chosen: Vec<usize> = Vec::new();
        while end < complete.len() && (complete[end].0 - first) / w == win {
            if chosen
                .last()
                .is_none_or(|&p| complete[p].1 != complete[end].1)
            {
                chosen.push(end);
            }
            end += 1;
        }
        report.windows += 1;
        if chosen.len() >= params.min_motes {
            let motes: Vec<u16> = chosen.iter().map(|&i| complete[i].1).collect();
            let locs: Vec<MoteLocation> =
                motes.iter().filter_map(|&m| loc_of[m as usize]).collect();
            let mut values = vec![0.0; chosen.len() * 3 * b];
            let mut node_labels = Vec::with_capacity(chosen.len());
            for (v, &i) in chosen.iter().enumerate() {
                let x = complete[i].3;
                let row = &mut values[v * 3 * b..(v + 1) * 3 * b];
                row[temperature.bin(x[0])] = 1.0;
                row[b + humidity.bin(x[1])] = 1.0;
                row[2 * b + voltage.bin(x[3])] = 1.0;
                node_labels.push(Some(light.bin(x[2]) as u32));
            }
            let graph = RelationalGraph::new(
                motes.iter().map(u16::to_string).collect(),
                Attributes::Dense {
                    num_features: 3 * b,
                    values,
                },
                node_labels,
                labels.clone(),
                radius_edges(&locs, params.radius_m),
                Directedness::Undirected,
            )?;
            snapshots.push(IntelSnapshot {
                first_epoch: first + win * w,
                motes,
                graph,
            });
        }
        start = end;
    }
    report.snapshots = snapshots.len();
    Ok(IntelDataset {
        snapshots,
        mote_graph,
        mote_ids,
        temperature,
        humidity,
        voltage,
        light,
        report,
    })
}

/// The readings file in `dir`: `data.txt`, `data.txt.gz`, or else the first (by name)
/// `data_*.txt[.gz]`.
///
/// # Errors
/// [`GraphError::Io`] naming `dir/data.txt` when none exists or `dir` cannot be listed.
pub fn find_readings_file(dir: &Path) -> Result<PathBuf, GraphError> {
    if let Ok(p) = super::find_plain_or_gz(dir, "data.txt") {
        return Ok(p);
    }
    let io = |source| GraphError::Io {
        path: dir.join("data.txt"),
        source,
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("data_") && (n.ends_with(".txt") || n.ends_with(".txt.gz"))
            })
        })
        .collect();
    found.sort();
    found.into_iter().next().ok_or_else(|| {
        io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no data.txt[.gz] or data_*.txt[.gz]",
        ))
    })
}

/// Loads `dir` (readings file found by [`find_readings_file`], and `dir/mote_locs.txt`)
/// and builds the snapshots.
///
/// # Errors
/// As [`read_readings`], [`read_mote_locations`] and [`build_snapshots`].
pub fn load_intel(dir: &Path, params: &IntelParams) -> Result<IntelDataset, GraphError> {
    let readings = read_readings(&find_readings_file(dir)?)?;
    let locs = read_mote_locations(&dir.join("mote_locs.txt"))?;
    build_snapshots(&readings, &locs, params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_frequency_cuts() {
        let v: Vec<f64> = (1..=9).map(f64::from).collect();
        let b = EqualFrequencyBins::fit(&v, 3).expect("ok");
        assert_eq!(b.cuts(), &[3.0, 6.0]);
        let counts = v.iter().fold([0; 3], |mut c, &x| {
            c[b.bin(x)] += 1;
            c
        });
        assert_eq!(counts, [3, 3, 3]);
        assert_eq!(b.bin(-1e9), 0);
        assert_eq!(b.bin(1e9), 2);
        assert!(EqualFrequencyBins::fit(&[], 3).is_err());
        assert!(EqualFrequencyBins::fit(&[f64::NAN], 3).is_err());
    }

    fn reading(epoch: u32, mote: u16, light: Option<f64>) -> IntelReading {
        IntelReading {
            epoch,
            mote,
            temperature: Some(f64::from(mote)),
            humidity: Some(f64::from(epoch)),
            light,
            voltage: Some(2.5),
        }
    }

    #[test]
    fn snapshots_take_first_reading_per_mote_per_window() {
        let locs = vec![
            MoteLocation {
                mote: 1,
                x: 0.0,
                y: 0.0,
            },
            MoteLocation {
                mote: 2,
                x: 3.0,
                y: 4.0,
            },
            MoteLocation {
                mote: 3,
                x: 10.0,
                y: 0.0,
            },
        ];
        let r = vec![
            reading(10, 1, Some(1.0)),
            reading(11, 1, Some(100.0)),
            reading(12, 2, Some(50.0)),
            reading(13, 3, None),
            reading(14, 3, Some(9.0)),
            reading(15, 1, Some(2.0)),
            reading(16, 9, Some(2.0)),
        ];
        let p = IntelParams {
            window_epochs: 5,
            min_motes: 3,
            ..IntelParams::default()
        };
        let d = build_snapshots(&r, &locs, &p).expect("ok");
        assert_eq!(d.report.incomplete, 1);
        assert_eq!(d.report.unlocated, 1);
        assert_eq!(d.report.windows, 2);
        assert_eq!(d.snapshots.len(), 1);
        let s = &d.snapshots[0];
        assert_eq!(s.first_epoch, 10);
        assert_eq!(s.motes, vec![1, 2, 3]);
        // distance 1-2 is exactly 5 m: linked; 3 is 10 m from 1.
        assert_eq!(s.graph.num_edges(), 1);
        // mote 1's first reading (light 1.0) is its label: the lowest level.
        assert_eq!(s.graph.label(NodeId(0)), Some(0));
        assert_eq!(d.mote_graph.num_nodes(), 3);
        assert_eq!(s.graph.num_features(), 9);
    }
}
