//! `cargo xtask data`: which dataset folders are present, and do their files match the
//! sha256 sums the registry of srl-data records (taken from each folder's SOURCE.md)?
//! `cargo xtask data --fetch NAME…` downloads missing data sets with the same code as
//! `srl data fetch`.

use std::path::Path;

/// Prints the report; returns how many files failed their check (mismatch or unreadable).
///
/// # Errors
/// The data directory does not exist, is not a directory or cannot be read (a mistyped
/// `--data-dir` is an error, not a report of everything missing).
#[allow(clippy::print_stdout)]
pub fn report(dir: &Path) -> anyhow::Result<usize> {
    srl_data::check_data_dir(dir)?;
    println!("data directory: {}", dir.display());
    let mut bad = 0;
    for ds in srl_data::DATASETS {
        let folder = dir.join(ds.name);
        if !folder.is_dir() {
            println!(
                "{:22} missing  (looked for {}; used by {}{})",
                ds.name,
                folder.display(),
                ds.used_by,
                if ds.sources.is_empty() {
                    ""
                } else {
                    "; `cargo xtask data --fetch` downloads it"
                }
            );
            continue;
        }
        let r = srl_data::verify(dir, ds);
        let failed = r.failed();
        bad += failed.len();
        println!("{:22} present  {}", ds.name, r.summary());
        for (f, s) in failed {
            println!(
                "    {}: {} (the registry's sum is SOURCE.md's)",
                f.path,
                s.describe(f)
            );
        }
    }
    Ok(bad)
}

/// Downloads, verifies and installs the named data sets (`all`: every one that has a
/// download address) into `dir`; returns how many failed.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub fn fetch(dir: &Path, names: &[String], force: bool) -> anyhow::Result<usize> {
    let all = names.iter().any(|n| n == "all");
    let selected: Vec<&'static srl_data::Dataset> = if all {
        srl_data::DATASETS
            .iter()
            .filter(|d| !d.sources.is_empty())
            .collect()
    } else {
        names
            .iter()
            .map(|n| srl_data::find(n))
            .collect::<Result<_, _>>()?
    };
    let note = |m: &str| eprintln!("{m}");
    let opts = srl_data::FetchOptions {
        force,
        note: &note,
        ..srl_data::FetchOptions::default()
    };
    let mut failed = 0;
    for ds in selected {
        match srl_data::fetch(ds, dir, &opts) {
            Ok(r) => println!(
                "{:22} {} installed, {} already verified, {} not downloadable",
                ds.name,
                r.installed.len(),
                r.already_ok.len(),
                r.not_downloadable.len()
            ),
            Err(e) => {
                failed += 1;
                println!("{:22} FAILED: {e}", ds.name);
            }
        }
    }
    Ok(failed)
}
