//! `cargo xtask`: the project's automation. `reproduce` runs the papers' experiments and
//! writes tables and plots; `data` lists and verifies the data directory.
//!
//! This is the only crate that prints, reads experiment files and knows the papers' tables.

mod book;
mod context;
mod data;
mod experiments;
mod plot;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};

use crate::context::{Context, resolve_data_dir};

#[derive(Parser)]
#[command(name = "xtask", about = "srl project automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the papers' experiments and write OUT/NAME/results.{json,md} (+ SVG plots).
    Reproduce {
        /// Experiment names, or `all` (the default). `--list` shows them.
        names: Vec<String>,
        /// Small sizes and few folds (seconds; what CI runs).
        #[arg(long)]
        quick: bool,
        /// The data directory (default: $SRL_DATA_DIR, else data/ in the repo).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Seed of every random choice.
        #[arg(long, default_value_t = 20_061_001)]
        seed: u64,
        /// Output directory.
        #[arg(long, default_value = "target/reproduce")]
        out: PathBuf,
        /// Also copy the tables and plots of a full run into docs/results/NAME/.
        #[arg(long)]
        publish: bool,
        /// List the experiments and exit.
        #[arg(long)]
        list: bool,
    },
    /// List each dataset folder as present or missing and verify the sha256 sums its
    /// SOURCE.md records; with `--fetch`, download data sets first (as `srl data fetch`).
    Data {
        /// The data directory (default: $SRL_DATA_DIR, else data/ in the repo).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Download, verify and install these data sets (`all`: every downloadable one).
        #[arg(long, num_args = 1..)]
        fetch: Vec<String>,
        /// With --fetch: replace present files that fail verification.
        #[arg(long)]
        force: bool,
    },
    /// Regenerate the book's generated pages (docs/papers/) from docs/results and build the
    /// book with the API docs into target/book/; `--check` only fails on a stale page.
    Book {
        /// Fail if a generated page differs from what docs/results gives; build nothing.
        #[arg(long)]
        check: bool,
        /// Run as the mdBook preprocessor (book/book.toml); the rest are mdBook's arguments.
        #[arg(long, hide = true)]
        preprocess: bool,
        /// mdBook's arguments to the preprocessor (`supports html`).
        #[arg(hide = true)]
        args: Vec<String>,
    },
}

fn repo_root() -> PathBuf {
    // xtask/ sits one level below the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The nearest existing ancestor of `p` (itself if it exists), canonical.
fn canonical_existing(p: &Path) -> Option<PathBuf> {
    p.ancestors().find_map(|a| std::fs::canonicalize(a).ok())
}

/// `reproduce --out` must not lie inside the data directory (an input of every
/// experiment): its `results.*` files would be written among the data sets.
fn refuse_out_in_data(out: &Path, data_dir: &Path) -> anyhow::Result<()> {
    if let (Some(o), Ok(d)) = (canonical_existing(out), std::fs::canonicalize(data_dir))
        && o.starts_with(&d)
    {
        bail!(
            "--out {} is inside the data directory {}: the results would be written among the data sets; choose another folder",
            out.display(),
            data_dir.display()
        );
    }
    Ok(())
}

#[allow(clippy::print_stdout, clippy::print_stderr)]
fn main() -> anyhow::Result<()> {
    // an interrupt removes half-written result files
    srl_io::install_interrupt_cleanup();
    let cli = Cli::parse();
    let root = repo_root();
    match cli.command {
        Command::Book {
            check,
            preprocess,
            args,
        } => {
            if preprocess {
                book::preprocess(&root, &args)
            } else {
                book::run(&root, check)
            }
        }
        Command::Data {
            data_dir,
            fetch,
            force,
        } => {
            let dir = resolve_data_dir(data_dir, &root);
            if !fetch.is_empty() {
                let failed = data::fetch(&dir, &fetch, force)?;
                if failed > 0 {
                    bail!("{failed} data set(s) could not be fetched");
                }
            }
            let bad = data::report(&dir)?;
            if bad > 0 {
                bail!("{bad} file(s) failed their sha256 check");
            }
            Ok(())
        }
        Command::Reproduce {
            names,
            quick,
            data_dir,
            seed,
            out,
            publish,
            list,
        } => {
            let registry = experiments::all();
            let named_only = experiments::by_name_only();
            if list {
                for e in &registry {
                    println!("{:28} {}", e.name, e.about);
                }
                for e in &named_only {
                    println!("{:28} {} [run by name only, not by `all`]", e.name, e.about);
                }
                return Ok(());
            }
            if publish && quick {
                bail!("--publish copies full runs only; drop --quick");
            }
            let wanted: Vec<&experiments::Experiment> =
                if names.is_empty() || names.iter().any(|n| n == "all") {
                    registry.iter().collect()
                } else {
                    let mut v = Vec::new();
                    for n in &names {
                        match registry.iter().chain(&named_only).find(|e| e.name == n) {
                            Some(e) => v.push(e),
                            None => bail!(
                                "unknown experiment {n:?}; known: {}",
                                registry
                                    .iter()
                                    .chain(&named_only)
                                    .map(|e| e.name)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        }
                    }
                    v
                };
            let data_dir = resolve_data_dir(data_dir, &root);
            let out = if out.is_absolute() {
                out
            } else {
                root.join(out)
            };
            refuse_out_in_data(&out, &data_dir)?;
            eprintln!(
                "reproduce: {} experiment(s), data dir {}, seed {seed}, {}",
                wanted.len(),
                data_dir.display(),
                if quick { "quick" } else { "full" }
            );
            if !data_dir.exists() {
                eprintln!(
                    "reproduce: data dir {} does not exist; experiments that need data are skipped",
                    data_dir.display()
                );
            }
            for e in wanted {
                let ctx = Context {
                    data_dir: data_dir.clone(),
                    quick,
                    seed,
                    out_dir: out.join(e.name),
                    name: e.name.to_string(),
                };
                std::fs::create_dir_all(&ctx.out_dir)
                    .with_context(|| format!("creating {}", ctx.out_dir.display()))?;
                let t0 = Instant::now();
                let mut report = (e.run)(&ctx).with_context(|| format!("experiment {}", e.name))?;
                let secs = t0.elapsed().as_secs_f64();
                report.table.notes.push(run_time_note(secs));
                // xtask's own result folder: replaced on every run, atomically (an
                // interrupt leaves the previous run's files, never half of a new one)
                let json = report.table.to_json()?;
                srl_io::write_bytes_atomic(&ctx.out_file("results.json"), true, json.as_bytes())?;
                let md = report.table.to_markdown();
                srl_io::write_bytes_atomic(&ctx.out_file("results.md"), true, md.as_bytes())?;
                for (file, svg) in &report.plots {
                    srl_io::write_bytes_atomic(&ctx.out_file(file), true, svg.as_bytes())?;
                }
                println!("{md}");
                for s in &report.table.skipped {
                    eprintln!("[{}] {s}", e.name);
                }
                eprintln!(
                    "[{}] done in {secs:.1} s: {} rows, {} plot(s), written to {}",
                    e.name,
                    report.table.rows.len(),
                    report.plots.len(),
                    ctx.out_dir.display()
                );
                if publish {
                    let dest = root.join("docs/results").join(e.name);
                    std::fs::create_dir_all(&dest)?;
                    for f in std::iter::once("results.json".to_string())
                        .chain(std::iter::once("results.md".to_string()))
                        .chain(report.plots.iter().map(|(f, _)| f.clone()))
                    {
                        std::fs::copy(ctx.out_file(&f), dest.join(&f))
                            .with_context(|| format!("publishing {f}"))?;
                    }
                    eprintln!("[{}] published to {}", e.name, dest.display());
                }
            }
            Ok(())
        }
    }
}

/// The note every results table ends with: this run's wall time, the machine's cores and
/// its load average when the run ended (from /proc/loadavg where there is one), so a
/// chapter can say how long `cargo xtask reproduce NAME` takes and under what load.
fn run_time_note(secs: f64) -> String {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned());
    format!("{RUN_TIME_NOTE} {secs:.1} s wall on {cores} cores, load average {load} at the end")
}

/// How [`run_time_note`] starts (the book finds the note by it).
pub const RUN_TIME_NOTE: &str = "run time:";
