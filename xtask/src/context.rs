//! What every experiment gets: where the data is, quick or full, the seed, where to write.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use rand::SeedableRng as _;
use rand_chacha::ChaCha8Rng;
use srl_eval::ResultsTable;

/// The run-wide settings passed to each experiment.
#[derive(Clone, Debug)]
pub struct Context {
    /// The data directory (`--data-dir`, else `SRL_DATA_DIR`, else `data/` in the repo).
    pub data_dir: PathBuf,
    /// `--quick`: small sizes and few folds, for CI.
    pub quick: bool,
    /// The seed every random choice derives from.
    pub seed: u64,
    /// This experiment's output folder, `OUT/NAME`.
    pub out_dir: PathBuf,
    /// The experiment's name.
    pub name: String,
}

impl Context {
    /// `data_dir/rel` if it exists.
    pub fn data_path(&self, rel: &str) -> Option<PathBuf> {
        let p = self.data_dir.join(rel);
        p.exists().then_some(p)
    }

    /// `data_dir/rel` if it exists, else the message to put in the table's `skipped`
    /// list ("DATASET: skipped, missing PATH").
    pub fn require(&self, rel: &str) -> Result<PathBuf, String> {
        let p = self.data_dir.join(rel);
        if p.exists() {
            Ok(p)
        } else {
            Err(format!(
                "{rel}: skipped, data not found at {}; {}",
                p.display(),
                fetch_hint(rel, &self.data_dir)
            ))
        }
    }

    /// A portable seeded generator for stream `stream` of this run: same seed and stream,
    /// same numbers, on every platform.
    pub fn rng(&self, stream: u64) -> ChaCha8Rng {
        let mut r = ChaCha8Rng::seed_from_u64(self.seed);
        r.set_stream(stream);
        r
    }

    /// An empty results table for this experiment.
    pub fn table(&self) -> ResultsTable {
        ResultsTable::new(self.name.clone(), self.seed, self.quick)
    }

    /// A progress bar of `len` steps, drawn only when stderr is a terminal.
    pub fn progress(&self, len: u64, msg: &str) -> ProgressBar {
        if !std::io::stderr().is_terminal() {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        if let Ok(style) =
            ProgressStyle::with_template("{msg:30} [{elapsed_precise}] {wide_bar} {pos}/{len}")
        {
            pb.set_style(style);
        }
        pb.set_message(format!("{}: {msg}", self.name));
        pb
    }

    /// Prints a progress line to stderr (library crates never print; xtask does).
    #[allow(clippy::print_stderr)]
    pub fn log(&self, msg: &str) {
        eprintln!("[{}] {msg}", self.name);
    }

    /// Path of a file in this experiment's output folder.
    pub fn out_file(&self, file: &str) -> PathBuf {
        self.out_dir.join(file)
    }
}

/// A finished experiment: its table and any SVG plots.
#[derive(Debug)]
pub struct Report {
    /// The rows, notes and skipped parts.
    pub table: ResultsTable,
    /// `(file name, SVG text)` pairs written beside `results.json`.
    pub plots: Vec<(String, String)>,
}

impl Report {
    /// A report with no plots.
    pub fn new(table: ResultsTable) -> Self {
        Self {
            table,
            plots: Vec::new(),
        }
    }
}

/// Resolves the data directory: `--data-dir`, else `SRL_DATA_DIR`, else `ROOT/data`.
pub fn resolve_data_dir(flag: Option<PathBuf>, root: &Path) -> PathBuf {
    flag.or_else(|| std::env::var_os("SRL_DATA_DIR").map(PathBuf::from))
        .unwrap_or_else(|| root.join("data"))
}

/// How to get the data set holding `rel` (its first path component, a name of srl-data's
/// registry): the `srl data fetch` command into `data_dir`, or where its SOURCE.md says it
/// comes from when it has no download address.
pub fn fetch_hint(rel: &str, data_dir: &Path) -> String {
    let name = rel.split(['/', '\\']).next().unwrap_or(rel);
    match srl_data::DATASETS.iter().find(|d| d.name == name) {
        Some(d) if !d.sources.is_empty() => format!(
            "`srl data fetch {name} --data-dir {dir}` (or `cargo xtask data --data-dir {dir} \
             --fetch {name}`) gets it",
            dir = data_dir.display()
        ),
        Some(_) => format!(
            "{name} has no download address: its SOURCE.md in the shared data names the origin"
        ),
        None => format!("{name} is not in srl-data's registry (`srl data list`)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_data_set_says_how_to_get_it() {
        let dir = Path::new("/nowhere/data");
        let downloadable = srl_data::DATASETS
            .iter()
            .find(|d| !d.sources.is_empty())
            .expect("a downloadable data set");
        let hint = fetch_hint(&format!("{}/x.txt", downloadable.name), dir);
        assert!(
            hint.contains(&format!(
                "srl data fetch {} --data-dir /nowhere/data",
                downloadable.name
            )),
            "{hint}"
        );
        if let Some(offline) = srl_data::DATASETS.iter().find(|d| d.sources.is_empty()) {
            assert!(fetch_hint(offline.name, dir).contains("no download address"));
        }
        assert!(fetch_hint("nope", dir).contains("not in srl-data's registry"));
    }
}
