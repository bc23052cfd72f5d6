//! # `srl`: the command-line tool for srl on your own data
//!
//! The top of the workspace beside xtask: it reads the user's files, calls the library
//! crates (srl-boost, srl-learn, srl-bayes, srl-infer, srl-graph, srl-eval, srl-data) and
//! writes results. Install with `cargo install --path crates/srl-cli`.
//!
//! ```text
//! srl boost learn --train DIR --target PRED --model M.json     # RFGB / Soft-RFGB (BoostSRL folders)
//! srl boost predict --model M.json --test DIR --out P.tsv      # AUC-ROC, AUC-PR, CLL, FNR, F-beta
//! srl boost show --model M.json                                # the trees as clauses
//! srl classify --content X.content --cites X.cites --method ica --local lr --folds 10
//! srl mrf MODEL.uai --evidence MODEL.uai.evid --task mar --algorithm lbp --out MODEL.MAR
//! srl trim NET.bif --class D=yes --features leaves --threshold 0.5 --budget 3
//! srl data fetch cora --data-dir data && srl data verify --data-dir data
//! ```
//!
//! Every subcommand takes `--quiet` (no messages on stderr) and `--json` (the summary on
//! stdout as one JSON object). Errors print one line `srl: error: ...` naming the file and
//! line at fault and exit with status 1; output files are written under a temporary name
//! and renamed only on success.

mod boost;
mod classify;
mod data;
mod model;
mod mrf;
mod trim;
mod ui;

use clap::{Parser, Subcommand};

use crate::ui::Ui;

#[derive(Parser, Debug)]
#[command(
    name = "srl",
    version,
    about = "Statistical relational learning on your own data: relational boosting, collective classification, MRF inference, classifier trimming, datasets"
)]
struct Cli {
    /// No messages or progress bars on stderr (errors still print).
    #[arg(long, global = true)]
    quiet: bool,
    /// Print the summary on stdout as one JSON object.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Relational functional-gradient boosting (RFGB, Soft-RFGB) on BoostSRL folders.
    #[command(subcommand)]
    Boost(boost::BoostCmd),
    /// Collective classification of a graph's nodes (CO, ICA, Gibbs, loopy BP, mean field).
    Classify(Box<classify::ClassifyArgs>),
    /// Inference on a pairwise Markov network in UAI format (MAR or MAP).
    Mrf(mrf::MrfArgs),
    /// Robust trimming of a Bayesian-network classifier's features (ECA branch and bound).
    Trim(trim::TrimArgs),
    /// Download and verify the data sets the experiments use.
    #[command(subcommand)]
    Data(data::DataCmd),
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let ui = Ui {
        quiet: cli.quiet,
        json: cli.json,
    };
    match &cli.command {
        Command::Boost(c) => boost::run(c, ui),
        Command::Classify(a) => classify::run(a, ui),
        Command::Mrf(a) => mrf::run(a, ui),
        Command::Trim(a) => trim::run(a, ui),
        Command::Data(c) => data::run(c, ui),
    }
}

#[allow(clippy::print_stderr)]
fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("srl: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
