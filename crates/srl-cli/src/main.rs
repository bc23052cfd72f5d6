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
//! stdout as one JSON object, also on failure), and `--force` (replace existing outputs).
//! Errors print one line `srl: error: ...` naming the file and line at fault and exit with
//! status 1; a stdout closed early by its reader (`srl ... --json | head -1`) ends the run
//! quietly with status 141 (128 + SIGPIPE, as a Unix tool). Outputs are checked before
//! the work (an output that is an input is refused, an existing one needs `--force`, the
//! folder must be writable), written under a temporary name, renamed only on success, and
//! removed on an interrupt (srl-io).

mod boost;
mod classify;
mod data;
mod model;
mod mrf;
mod trim;
mod ui;

use std::io::Write as _;

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
    /// Print the summary on stdout as one JSON object (on failure: an object with an
    /// `error` field; the exit status is kept). Layout: docs/srl-cli.md, version 1.
    #[arg(long, global = true)]
    json: bool,
    /// Replace output files that exist (without it a command stops before the work
    /// with "exists; add --force"). An output that is one of the command's inputs is
    /// refused even with --force.
    #[arg(long, global = true)]
    force: bool,
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

impl Command {
    /// The subcommand as typed, for the `command` field of JSON output.
    fn name(&self) -> &'static str {
        match self {
            Command::Boost(boost::BoostCmd::Learn(_)) => "boost learn",
            Command::Boost(boost::BoostCmd::Predict(_)) => "boost predict",
            Command::Boost(boost::BoostCmd::Show(_)) => "boost show",
            Command::Classify(_) => "classify",
            Command::Mrf(_) => "mrf",
            Command::Trim(_) => "trim",
            Command::Data(data::DataCmd::Fetch(_)) => "data fetch",
            Command::Data(data::DataCmd::Verify(_)) => "data verify",
            Command::Data(data::DataCmd::List) => "data list",
        }
    }
}

fn ui_of(cli: &Cli) -> Ui {
    Ui {
        quiet: cli.quiet,
        json: cli.json,
        force: cli.force,
        command: cli.command.name(),
    }
}

fn run(cli: &Cli) -> anyhow::Result<()> {
    let ui = ui_of(cli);
    match &cli.command {
        Command::Boost(c) => boost::run(c, ui),
        Command::Classify(a) => classify::run(a, ui),
        Command::Mrf(a) => mrf::run(a, ui),
        Command::Trim(a) => trim::run(a, ui),
        Command::Data(c) => data::run(c, ui),
    }
}

/// The JSON error object of a failed command (`--json`): `{"srl_json": 1, "command":
/// ..., "error": {"message": the whole message, "causes": [outermost first]}}`.
fn json_error(ui: &Ui, e: &anyhow::Error) -> serde_json::Value {
    let causes: Vec<String> = e.chain().map(ToString::to_string).collect();
    ui.envelope(&serde_json::json!({
        "error": { "message": format!("{e:#}"), "causes": causes }
    }))
}

#[allow(clippy::print_stderr)]
fn main() -> std::process::ExitCode {
    // An interrupt removes every half-written output before the process exits (130).
    srl_io::install_interrupt_cleanup();
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // the reader of stdout went away (`srl ... | head -1`): it wanted no more; end
        // quietly, with the status of a Unix tool ended by SIGPIPE
        Err(e) if ui::is_stdout_closed(&e) => std::process::ExitCode::from(ui::EXIT_STDOUT_CLOSED),
        Err(e) => {
            eprintln!("srl: error: {e:#}");
            if cli.json {
                let ui = ui_of(&cli);
                if let Ok(text) = serde_json::to_string_pretty(&json_error(&ui, &e)) {
                    // a closed stdout loses the JSON copy of the error printed above;
                    // the status stays the error's
                    let mut out = ui::stdout();
                    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
                }
            }
            std::process::ExitCode::FAILURE
        }
    }
}
