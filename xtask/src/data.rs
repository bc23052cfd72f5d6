//! `cargo xtask data`: which dataset folders are present, and do their files match the
//! sha256 sums their SOURCE.md records?

use std::io::Read as _;
use std::path::Path;

use sha2::{Digest as _, Sha256};

/// The dataset folders the experiments know, with what uses them.
pub const DATASETS: &[(&str, &str)] = &[
    ("cora", "datasets, collective-classification"),
    ("citeseer", "datasets, collective-classification"),
    ("intel_lab", "datasets, sen-getoor-intel"),
    ("boostsrl_cora", "soft-rfgb"),
    ("boostsrl_imdb", "soft-rfgb"),
    ("boostsrl_uwcse", "soft-rfgb"),
    ("boostsrl_webkb", "soft-rfgb"),
    ("heart_uci", "soft-rfgb"),
    ("trimbn_networks", "trimming"),
    ("bnlearn_bif", "trimming"),
    ("uai_asia", "trimming"),
    ("uci_pima", "trimming"),
    ("uci_bupa", "trimming"),
    ("uci_heart_statlog", "trimming"),
    ("uci_heart_cleveland", "trimming"),
    ("uci_voting", "trimming"),
    ("uci_hepatitis", "trimming"),
    ("uci_glass", "trimming"),
    ("sotu", "uknn"),
];

/// `(relative path, sha256)` for each table row of a SOURCE.md that names a file and a
/// 64-hex-digit sum.
pub fn recorded_sums(source_md: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in source_md.lines() {
        let t = line.trim();
        if !t.starts_with('|') {
            continue;
        }
        let cells: Vec<&str> = t
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().trim_matches('`').trim())
            .collect();
        let Some(file) = cells.first() else { continue };
        let sum = cells
            .iter()
            .skip(1)
            .find(|c| c.len() == 64 && c.chars().all(|ch| ch.is_ascii_hexdigit()));
        if let Some(sum) = sum
            && !file.is_empty()
        {
            out.push(((*file).to_string(), sum.to_ascii_lowercase()));
        }
    }
    out
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Prints the report; returns how many files failed their check (mismatch or unreadable).
#[allow(clippy::print_stdout)]
pub fn report(dir: &Path) -> anyhow::Result<usize> {
    println!("data directory: {}", dir.display());
    let mut bad = 0;
    for (name, used_by) in DATASETS {
        let folder = dir.join(name);
        if !folder.is_dir() {
            println!(
                "{name:22} missing  (looked for {}; used by {used_by})",
                folder.display()
            );
            continue;
        }
        let Ok(md) = std::fs::read_to_string(folder.join("SOURCE.md")) else {
            println!("{name:22} present  (no SOURCE.md: nothing to verify)");
            continue;
        };
        let sums = recorded_sums(&md);
        let (mut ok, mut absent) = (0, 0);
        let mut failures = Vec::new();
        for (file, sum) in &sums {
            let p = folder.join(file);
            if !p.is_file() {
                absent += 1;
                continue;
            }
            match sha256_file(&p) {
                Ok(s) if s == *sum => ok += 1,
                Ok(s) => failures.push(format!("{file}: sha256 {s}, SOURCE.md says {sum}")),
                Err(e) => failures.push(format!("{file}: {e}")),
            }
        }
        bad += failures.len();
        println!(
            "{name:22} present  {ok}/{} sums ok{}{}",
            sums.len(),
            if absent > 0 {
                format!(", {absent} listed file(s) absent")
            } else {
                String::new()
            },
            if failures.is_empty() {
                String::new()
            } else {
                format!(", {} FAILED", failures.len())
            }
        );
        for f in failures {
            println!("    {f}");
        }
    }
    Ok(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_source_md_tables() {
        let md = "## Files\n| file | bytes | sha256 |\n|---|---:|---|\n| `README` | 1560 | `ecfcfcdc830c6fe49a148c318044cd65d8335c9442c6ba5d9fba1bcee9bc7a0d` |\n| x | 1 | not-a-sum |\n";
        let s = recorded_sums(md);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].0, "README");
        assert!(s[0].1.starts_with("ecfc"));
    }
}
