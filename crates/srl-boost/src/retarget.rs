//! Building learning problems the shipped files do not state directly: a fact predicate
//! turned into the target with closed-world negatives (WebKB `courseta`, IMDB
//! `female_gender`), and a UCI table turned into facts (Heart, target `num > 0`).

use std::path::Path;

use crate::BoostError;
use crate::logic::{Background, Database, DatabaseBuilder, Examples, FxSet, ModeDecl};

/// Removes the facts of `pred` from `db` and makes them the positive examples; every
/// other tuple of `domains[0] × domains[1] × ...` is a negative (closed world).
///
/// # Arguments
/// * `domains` — one list of constant ids of `db` per argument of `pred`.
///
/// # Returns
/// The database without `pred`'s facts, and the examples (positives first, then
/// negatives in lexicographic order of the domain lists).
///
/// # Errors
/// [`BoostError::NoExamples`] if `pred` has no facts; [`BoostError::Arity`] if
/// `domains.len()` differs from its arity.
///
/// # Complexity
/// O(product of the domain sizes).
pub fn retarget_with_domains(
    db: Database,
    pred: &str,
    domains: &[Vec<u32>],
) -> Result<(Database, Examples), BoostError> {
    let mut b = db.into_builder();
    let Some((arity, tuples)) = b.take_facts(pred) else {
        return Err(BoostError::NoExamples {
            reason: format!("predicate `{pred}` has no facts to retarget"),
        });
    };
    if tuples.is_empty() {
        return Err(BoostError::NoExamples {
            reason: format!("predicate `{pred}` has no facts to retarget"),
        });
    }
    if domains.len() != arity {
        return Err(BoostError::Arity {
            pred: pred.to_owned(),
            expected: arity,
            found: domains.len(),
        });
    }
    let mut ex = Examples::new(pred, arity);
    let mut pos: FxSet<Vec<u32>> = FxSet::default();
    for t in tuples.chunks(arity.max(1)) {
        if pos.insert(t.to_vec()) {
            ex.push(t, true);
        }
    }
    let mut cur = vec![0usize; arity];
    let total: usize = domains.iter().map(Vec::len).product();
    let mut tuple = vec![0u32; arity];
    for _ in 0..total {
        for (k, &c) in cur.iter().enumerate() {
            tuple[k] = domains[k][c];
        }
        if !pos.contains(&tuple) {
            ex.push(&tuple, false);
        }
        for k in (0..arity).rev() {
            cur[k] += 1;
            if cur[k] < domains[k].len() {
                break;
            }
            cur[k] = 0;
        }
    }
    Ok((b.build(), ex))
}

/// [`retarget_with_domains`] with each argument's domain = the constants of its mode
/// type (first mode of `pred` in `bk`), as [`Database::constants_of_type`] finds them.
/// This is how the paper's WebKB `courseTA` task is built from the shipped files.
///
/// # Errors
/// [`BoostError::NoExamples`] if `pred` has no mode or no facts.
pub fn retarget_closed_world(
    db: Database,
    bk: &Background,
    pred: &str,
) -> Result<(Database, Examples), BoostError> {
    let Some(mode) = bk.mode_of(pred) else {
        return Err(BoostError::NoExamples {
            reason: format!("no mode declares the argument types of `{pred}`"),
        });
    };
    let domains: Vec<Vec<u32>> = mode
        .args
        .iter()
        .map(|a| db.constants_of_type(bk, &a.ty))
        .collect();
    retarget_with_domains(db, pred, &domains)
}

/// Column names of the processed UCI heart-disease files (`heart-disease.names`, §7).
pub const HEART_COLUMNS: [&str; 14] = [
    "age", "sex", "cp", "trestbps", "chol", "fbs", "restecg", "thalach", "exang", "oldpeak",
    "slope", "ca", "thal", "num",
];

/// Continuous heart columns, turned into quartile bins `q1..q4`.
const HEART_CONTINUOUS: [&str; 5] = ["age", "trestbps", "chol", "thalach", "oldpeak"];

/// Which rows of the UCI heart-disease tables are positive examples of `disease(p)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeartPositive {
    /// `num > 0`: any degree of disease.
    AnyDisease,
    /// `num == k` (Yang et al. 2014, Table I: `num == 1` over the four databases gives
    /// 265 positives and 655 negatives).
    NumEquals(u8),
}

/// A relational version of UCI heart-disease tables.
#[derive(Clone, Debug)]
pub struct HeartData {
    /// One constant per patient (`p1`, `p2`, ... in row order over the files) and one
    /// fact `column(patient, value)` per known cell.
    pub db: Database,
    /// Modes `column(+patient,#column)` and the target's `disease(+patient)`.
    pub background: Background,
    /// `disease(p)` for every row, labelled by the [`HeartPositive`] rule.
    pub examples: Examples,
}

/// Reads a processed UCI heart-disease file (14 comma-separated columns, `?` missing)
/// into facts: categorical columns keep their value (`cp(p1, v4)`), the continuous
/// columns (age, trestbps, chol, thalach, oldpeak) become quartile bins `q1..q4` whose
/// cut points are the table's own quartiles (unsupervised, no label used). Target
/// `disease(p)` ⇔ `num > 0`. [`heart_from_uci_tables`] with one file and
/// [`HeartPositive::AnyDisease`].
///
/// # Errors
/// [`BoostError::Io`]; [`BoostError::Parse`] (file, line) for a row without 14 fields
/// or a non-numeric value.
pub fn heart_from_uci(path: &Path) -> Result<HeartData, BoostError> {
    heart_from_uci_tables(&[path], HeartPositive::AnyDisease)
}

/// Reads several processed UCI heart-disease files (Cleveland, Hungarian,
/// Switzerland, VA: 14 comma-separated columns, `?` missing) into one relational
/// table, patients numbered `p1..` in file then row order. Categorical columns keep
/// their value (`cp(p1, v4)`); continuous columns (age, trestbps, chol, thalach,
/// oldpeak) become quartile bins `q1..q4` cut at the quartiles of all files' known
/// values together (unsupervised). Missing cells give no fact. Target `disease(p)`
/// labelled by `positive`.
///
/// # Errors
/// [`BoostError::Io`]; [`BoostError::Parse`] (file, line) for a row without 14 fields,
/// a non-numeric value or a missing `num`.
pub fn heart_from_uci_tables(
    paths: &[&Path],
    positive: HeartPositive,
) -> Result<HeartData, BoostError> {
    let mut rows: Vec<Vec<Option<f64>>> = Vec::new();
    for path in paths {
        read_heart_rows(path, &mut rows)?;
    }
    let path = paths.first().copied().unwrap_or(Path::new(""));
    let mut b = DatabaseBuilder::new();
    let mut bk = Background::default();
    let mut examples = Examples::new("disease", 1);
    let cuts: Vec<Option<[f64; 3]>> = HEART_COLUMNS
        .iter()
        .enumerate()
        .map(|(c, name)| {
            if !HEART_CONTINUOUS.contains(name) {
                return None;
            }
            let mut v: Vec<f64> = rows.iter().filter_map(|r| r[c]).collect();
            v.sort_by(f64::total_cmp);
            let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
            (!v.is_empty()).then(|| [q(0.25), q(0.5), q(0.75)])
        })
        .collect();
    for (c, name) in HEART_COLUMNS.iter().enumerate().take(13) {
        let m = ModeDecl::parse(&format!("{name}(+patient,#{name})")).map_err(|message| {
            BoostError::Parse {
                file: path.to_owned(),
                line: 0,
                message,
            }
        })?;
        bk.add_mode(m);
        b.declare(name, 2)?;
        let _ = c;
    }
    bk.add_mode(ModeDecl {
        pred: "disease".into(),
        args: vec![crate::ModeArg {
            kind: crate::ArgKind::Input,
            ty: "patient".into(),
        }],
    });
    for (i, r) in rows.iter().enumerate() {
        let p = b.intern(&format!("p{}", i + 1));
        for (c, name) in HEART_COLUMNS.iter().enumerate().take(13) {
            let Some(x) = r[c] else { continue };
            let val = match &cuts[c] {
                Some(q) => {
                    let bin = 1 + q.iter().filter(|&&t| x > t).count();
                    format!("q{bin}")
                }
                None => format!("v{x}"),
            };
            let v = b.intern(&val);
            b.add_fact_ids(name, &[p, v])?;
        }
        let num = r[13].unwrap_or(0.0);
        let label = match positive {
            HeartPositive::AnyDisease => num > 0.0,
            HeartPositive::NumEquals(k) => num == f64::from(k),
        };
        examples.push(&[p], label);
    }
    Ok(HeartData {
        db: b.build(),
        background: bk,
        examples,
    })
}

/// Appends the rows of one processed UCI heart file to `rows`.
fn read_heart_rows(path: &Path, rows: &mut Vec<Vec<Option<f64>>>) -> Result<(), BoostError> {
    let text = std::fs::read_to_string(path).map_err(|source| BoostError::Io {
        path: path.to_owned(),
        source,
    })?;
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        if f.len() != HEART_COLUMNS.len() {
            return Err(BoostError::Parse {
                file: path.to_owned(),
                line: i + 1,
                message: format!("expected 14 fields, found {}", f.len()),
            });
        }
        let mut row = Vec::with_capacity(14);
        for v in f {
            if v == "?" {
                row.push(None);
            } else {
                let x: f64 = v.parse().map_err(|_| BoostError::Parse {
                    file: path.to_owned(),
                    line: i + 1,
                    message: format!("`{v}` is not a number"),
                })?;
                row.push(Some(x));
            }
        }
        if row[13].is_none() {
            return Err(BoostError::Parse {
                file: path.to_owned(),
                line: i + 1,
                message: "missing class value `num`".into(),
            });
        }
        rows.push(row);
    }
    Ok(())
}

/// Adds the positive examples of `examples` to `db` as facts of their predicate (their
/// negatives are dropped): the step that makes a shipped target (WebKB `faculty`, IMDB
/// `workedUnder`) ordinary evidence before another predicate is retargeted.
///
/// # Errors
/// [`BoostError::Arity`] if the predicate already exists with another arity.
pub fn positives_into_facts(db: Database, examples: &Examples) -> Result<Database, BoostError> {
    let mut b = db.into_builder();
    b.declare(&examples.pred, examples.arity)?;
    for i in 0..examples.len() {
        if examples.labels()[i] {
            b.add_fact_ids(&examples.pred, examples.args(i))?;
        }
    }
    Ok(b.build())
}
