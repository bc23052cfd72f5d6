//! `cargo xtask book`: the srl book (mdBook, `book/book.toml`, source directory `docs/`).
//!
//! * [`generate`] writes the generated chapters `docs/papers/*.md`: each paper's tables in
//!   the paper's layout with our number beside the paper's, read from the published
//!   `docs/results/NAME/results.json`, every SVG of `docs/results/NAME/` embedded, and the
//!   hand-written parts from `book/papers/*.md` (what the paper claims, the protocol, why a
//!   cell does not reproduce). `--check` compares instead of writing and fails on a stale page.
//! * [`build`] runs `cargo doc --workspace --no-deps`, the pinned mdbook
//!   (`scripts/install-mdbook`) into `target/book/`, and copies the rustdoc output to
//!   `target/book/api/`, so the book and the API docs link each other with relative links.
//! * [`preprocess`] is the mdBook preprocessor (`book.toml`: `cargo xtask book --preprocess`):
//!   it links every code span naming a type of an srl crate (`` `RelationalGraph` ``) to its
//!   rustdoc page under `api/`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use srl_eval::{ResultRow, ResultsTable};

mod paper_figures;

/// The library crates whose rustdoc the book links, lowest first (a name defined in two
/// crates links to the first).
const CRATES: [&str; 8] = [
    "srl_graph",
    "srl_infer",
    "srl_learn",
    "srl_boost",
    "srl_bayes",
    "srl_eval",
    "srl_data",
    "srl_dist",
];

/// One generated chapter: `docs/papers/{slug}.md` from `book/papers/{slug}.md` and the
/// listed experiments' `results.json`.
struct Chapter {
    slug: &'static str,
    experiments: &'static [&'static str],
    render: fn(&Inputs<'_>, &mut String),
}

const CHAPTERS: [Chapter; 6] = [
    Chapter {
        slug: "sen-getoor-2006",
        experiments: &["sen-getoor-synthetic", "sen-getoor-intel"],
        render: sen_getoor,
    },
    Chapter {
        slug: "collective-classification",
        experiments: &["collective-classification", "collective-synthetic"],
        render: collective,
    },
    Chapter {
        slug: "soft-rfgb",
        experiments: &["soft-rfgb"],
        render: soft_rfgb,
    },
    Chapter {
        slug: "uknn",
        experiments: &["uknn"],
        render: uknn,
    },
    Chapter {
        slug: "trimming",
        experiments: &["trimming", "trimming-large"],
        render: trimming,
    },
    Chapter {
        slug: "datasets",
        experiments: &["datasets"],
        render: datasets,
    },
];

/// What a chapter renderer reads: the published tables by experiment name.
struct Inputs<'a> {
    tables: &'a BTreeMap<String, ResultsTable>,
}

impl Inputs<'_> {
    fn table(&self, name: &str) -> Option<&ResultsTable> {
        self.tables.get(name)
    }
}

/// Entry point of `cargo xtask book [--check]`.
///
/// # Errors
/// A results.json that does not parse, a stale page under `--check`, or a failing
/// `cargo doc` / mdbook run.
pub fn run(root: &Path, check: bool) -> anyhow::Result<()> {
    let pages = generate(root)?;
    let uncovered = doctest_coverage(root)?;
    if !uncovered.is_empty() {
        bail!(
            "book chapter(s) neither compiled by book/doctests.rs nor listed there as not yet compiled: {}",
            uncovered.join(", ")
        );
    }
    if check {
        let mut stale = Vec::new();
        for (path, text) in &pages {
            let old = std::fs::read_to_string(path).unwrap_or_default();
            if &old != text {
                stale.push(
                    path.strip_prefix(root)
                        .unwrap_or(path)
                        .display()
                        .to_string(),
                );
            }
        }
        if !stale.is_empty() {
            bail!(
                "generated book page(s) out of date: {}; run `cargo xtask book`",
                stale.join(", ")
            );
        }
        log(&format!(
            "book: {} generated page(s) up to date",
            pages.len()
        ));
        return Ok(());
    }
    for (path, text) in &pages {
        if std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            log(&format!("book: wrote {}", path.display()));
        }
    }
    build(root)
}

#[allow(clippy::print_stderr)]
fn log(msg: &str) {
    eprintln!("{msg}");
}

/// The generated pages, `(path, text)`: one per [`CHAPTERS`] entry plus the overview
/// `docs/papers/README.md`.
///
/// # Errors
/// A missing hand-written part or a results.json that does not parse.
pub fn generate(root: &Path) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let mut tables = BTreeMap::new();
    for ch in &CHAPTERS {
        for &e in ch.experiments {
            let p = root.join("docs/results").join(e).join("results.json");
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            let t = ResultsTable::from_json(&text)
                .with_context(|| format!("parsing {}", p.display()))?;
            tables.insert(e.to_owned(), t);
        }
    }
    let inputs = Inputs { tables: &tables };
    let mut pages = Vec::new();
    let paper_figs = paper_figures::paper_figures(&inputs)?;
    let mut overview = String::new();
    overview.push_str(GENERATED);
    overview.push_str(
        "# Reproductions\n\nOne chapter per paper: what it claims, the protocol we run, its tables \
         in its own layout with our number beside the paper's (`ours (paper)`), every figure, \
         and what does not reproduce and why. Every number on these pages is read from the \
         published `docs/results/NAME/results.json` (a full run of `cargo xtask reproduce NAME \
         --publish`) by `cargo xtask book`; none is typed by hand.\n\n",
    );
    let mut rows = Vec::new();
    for ch in &CHAPTERS {
        let hand_path = root.join("book/papers").join(format!("{}.md", ch.slug));
        let hand = std::fs::read_to_string(&hand_path)
            .with_context(|| format!("reading {}", hand_path.display()))?;
        let (head, tail) = hand.split_once(SPLIT).unwrap_or((hand.as_str(), ""));
        let mut out = String::new();
        out.push_str(GENERATED);
        out.push_str(head.trim_end());
        out.push_str("\n\n");
        reproduce_section(ch.experiments, &inputs, &mut out);
        (ch.render)(&inputs, &mut out);
        for &e in ch.experiments {
            flat_paper_cells(&inputs, e, &mut out);
        }
        for &e in ch.experiments {
            figures(root, e, &mut out)?;
        }
        let mine: Vec<_> = paper_figs.iter().filter(|f| f.chapter == ch.slug).collect();
        if !mine.is_empty() {
            out.push_str("### Figures: our numbers beside the paper's\n\n");
            for f in mine {
                let _ = writeln!(
                    out,
                    "![{}](figures/{})\n\n*{}* (`docs/papers/figures/{}`, generated from the published results by `cargo xtask book`)\n",
                    f.file.trim_end_matches(".svg"),
                    f.file,
                    f.caption,
                    f.file
                );
            }
        }
        if !tail.trim().is_empty() {
            out.push_str(tail.trim());
            out.push('\n');
        }
        for &e in ch.experiments {
            if let Some(t) = inputs.table(e) {
                run_notes(t, &mut out);
            }
        }
        let title = head
            .lines()
            .find_map(|l| l.strip_prefix("# "))
            .unwrap_or(ch.slug);
        let (mut with_paper, mut close) = (0, 0);
        for &e in ch.experiments {
            if let Some(t) = inputs.table(e) {
                for r in &t.rows {
                    if let Some(p) = r.paper {
                        with_paper += 1;
                        if (r.value - p).abs() <= 0.02_f64.max(0.05 * p.abs()) {
                            close += 1;
                        }
                    }
                }
            }
        }
        rows.push(vec![
            format!("[{title}]({}.md)", ch.slug),
            ch.experiments
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", "),
            with_paper.to_string(),
            close.to_string(),
        ]);
        pages.push((
            root.join("docs/papers").join(format!("{}.md", ch.slug)),
            out,
        ));
    }
    overview.push_str(&md_table(
        &[
            "chapter",
            "experiments",
            "cells with a paper number",
            "of which within 0.02 or 5 %",
        ],
        &[false, false, true, true],
        &rows,
    ));
    overview.push_str(
        "\nThe last column is a rough gauge only: a cell can miss by more for a reason the \
         chapter explains (a different data subset, a protocol the paper leaves open), and \
         many claims are about orderings rather than single cells.\n",
    );
    pages.push((root.join("docs/papers/README.md"), overview));
    for f in paper_figs {
        pages.push((root.join("docs/papers/figures").join(&f.file), f.svg));
    }
    pages.extend(guides_with_blocks(root, &inputs)?);
    for page in ["getting-started.md", "performance.md"] {
        let src = root.join("book").join(page);
        let hand =
            std::fs::read_to_string(&src).with_context(|| format!("reading {}", src.display()))?;
        let mut out = String::from(GENERATED);
        out.push_str(&fill_blocks(&expand_includes(root, &hand)?, &inputs)?);
        pages.push((root.join("docs").join(page), out));
    }
    Ok(pages)
}

/// The chapter's "Reproduce it" section: the data sets each experiment needs (srl-data's
/// registry, `used_by`) with the `srl data fetch` command, the `cargo xtask reproduce`
/// command, and the published run's time and load (its `run time:` note).
fn reproduce_section(experiments: &[&str], inp: &Inputs<'_>, out: &mut String) {
    let _ = writeln!(out, "## Reproduce it\n");
    let mut fetch: Vec<&str> = Vec::new();
    let mut offline: Vec<&str> = Vec::new();
    for d in srl_data::DATASETS {
        if experiments
            .iter()
            .any(|e| d.used_by.split(", ").any(|u| u == *e))
        {
            if d.sources.is_empty() {
                offline.push(d.name);
            } else {
                fetch.push(d.name);
            }
        }
    }
    out.push_str("```sh\n");
    if !fetch.is_empty() {
        let _ = writeln!(
            out,
            "srl data fetch {} --data-dir DATA   # the data it needs, verified",
            fetch.join(" ")
        );
    }
    for e in experiments {
        let data = if fetch.is_empty() && offline.is_empty() {
            ""
        } else {
            " --data-dir DATA"
        };
        let _ = writeln!(out, "cargo xtask reproduce {e}{data}");
    }
    out.push_str("```\n\n");
    if fetch.is_empty() && offline.is_empty() {
        out.push_str("No data needed: the experiment generates its inputs from the seed.\n\n");
    }
    if !offline.is_empty() {
        let _ = writeln!(
            out,
            "Without a download address (their SOURCE.md names the origin): {}.\n",
            offline.join(", ")
        );
    }
    for e in experiments {
        let note = inp.table(e).and_then(|t| {
            t.notes
                .iter()
                .find_map(|n| n.strip_prefix(crate::RUN_TIME_NOTE))
        });
        if let Some(n) = note {
            let _ = writeln!(out, "- `{e}`, the published run: {}.", n.trim());
        }
    }
    out.push('\n');
}

/// Opens a block of a hand-written guide that `cargo xtask book` fills from the published
/// results: `<!-- generated: KEY -->` ... `<!-- end generated -->` (keys in [`block`]).
const BLOCK_START: &str = "<!-- generated: ";
/// Closes a generated block.
const BLOCK_END: &str = "<!-- end generated -->";

/// The hand-written guides (`docs/*.md`) that hold generated blocks, with every block
/// refilled from the results: so a number a guide quotes from a run cannot go stale
/// (`cargo xtask book --check` fails until `cargo xtask book` rewrites it).
///
/// # Errors
/// An unreadable guide, an unknown key, or a block without its end line.
fn guides_with_blocks(root: &Path, inp: &Inputs<'_>) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .context("reading docs/")?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    if let Ok(dir) = std::fs::read_dir(root.join("docs/cookbook")) {
        guides.extend(
            dir.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "md")),
        );
    }
    guides.sort();
    // The README quotes results too (its "What it measures today" table).
    guides.push(root.join("README.md"));
    for path in guides {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        // Pages generated whole (docs/performance.md ...) are filled where they are made.
        if text.starts_with(GENERATED)
            || (!text.contains(BLOCK_START) && !text.contains(QUOTE_START))
        {
            continue;
        }
        let filled = fill_blocks(&text, inp).with_context(|| format!("{}", path.display()))?;
        out.push((path, filled));
    }
    Ok(out)
}

/// Opens a number a guide quotes inline from a published run:
/// `<!-- q: EXPERIMENT|DATASET|METHOD|METRIC[|KEY=VALUE ...][|paper][|.N][|x100] -->NUMBER<!-- /q -->`.
/// `cargo xtask book` rewrites NUMBER from the one row of `docs/results/EXPERIMENT/results.json`
/// that matches (extra fields compared as printed: `protocol=RS`, `rho=0.8`), with N decimals
/// (default 4), its `paper` value instead with `paper`, times 100 with `x100`; the comment
/// renders invisible, so the reader sees the number only.
const QUOTE_START: &str = "<!-- q: ";
/// Closes an inline quote.
const QUOTE_END: &str = "<!-- /q -->";

/// The number an inline quote's `spec` (the text between [`QUOTE_START`] and ` -->`) names.
///
/// # Errors
/// A malformed spec, an unknown experiment, no matching row or several, or a quoted paper
/// value the row does not have.
fn quote(spec: &str, inp: &Inputs<'_>) -> anyhow::Result<String> {
    let parts: Vec<&str> = spec.split('|').map(str::trim).collect();
    let [experiment, dataset, method, metric, rest @ ..] = parts.as_slice() else {
        bail!("quote {spec:?}: needs EXPERIMENT|DATASET|METHOD|METRIC");
    };
    let t = inp
        .table(experiment)
        .with_context(|| format!("quote {spec:?}: no docs/results/{experiment}/results.json"))?;
    let (mut decimals, mut paper, mut scale) = (4usize, false, 1.0);
    let mut fields = Vec::new();
    for p in rest {
        if *p == "paper" {
            paper = true;
        } else if *p == "x100" {
            scale = 100.0;
        } else if let Some(d) = p.strip_prefix('.') {
            decimals = d
                .parse()
                .with_context(|| format!("quote {spec:?}: decimals {p:?}"))?;
        } else if let Some((k, v)) = p.split_once('=') {
            fields.push((k, v));
        } else {
            bail!("quote {spec:?}: unknown part {p:?}");
        }
    }
    let printed = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let rows: Vec<&ResultRow> = t
        .rows
        .iter()
        .filter(|r| r.dataset == *dataset && r.method == *method && r.metric == *metric)
        .filter(|r| {
            fields
                .iter()
                .all(|(k, v)| r.extra.get(*k).is_some_and(|x| printed(x) == *v))
        })
        .collect();
    let row = match rows.as_slice() {
        [r] => *r,
        [] => bail!("quote {spec:?}: no row of {experiment} matches"),
        more => bail!(
            "quote {spec:?}: {} rows of {experiment} match; add KEY=VALUE parts",
            more.len()
        ),
    };
    let v = if paper {
        row.paper
            .with_context(|| format!("quote {spec:?}: the row has no paper value"))?
    } else {
        row.value
    };
    Ok(fixed(v * scale, decimals))
}

/// `line` with every inline quote's number rewritten by [`quote`].
fn fill_quotes(line: &str, inp: &Inputs<'_>) -> anyhow::Result<String> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(QUOTE_START) {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let (spec, after) = from[QUOTE_START.len()..]
            .split_once(" -->")
            .with_context(|| format!("unclosed quote comment in {line:?}"))?;
        let (_, tail) = after
            .split_once(QUOTE_END)
            .with_context(|| format!("quote {spec:?} has no `{QUOTE_END}` on its line"))?;
        out.push_str(QUOTE_START);
        out.push_str(spec);
        out.push_str(" -->");
        out.push_str(&quote(spec, inp)?);
        out.push_str(QUOTE_END);
        rest = tail;
    }
    out.push_str(rest);
    Ok(out)
}

/// `text` with every generated block's body replaced by [`block`]'s output and every
/// inline quote's number by [`quote`]'s.
fn fill_blocks(text: &str, inp: &Inputs<'_>) -> anyhow::Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n').enumerate();
    while let Some((i, line)) = lines.next() {
        if line.contains(QUOTE_START) {
            out.push_str(&fill_quotes(line, inp).with_context(|| format!("line {}", i + 1))?);
        } else {
            out.push_str(line);
        }
        let Some(key) = line
            .trim()
            .strip_prefix(BLOCK_START)
            .and_then(|x| x.strip_suffix(" -->"))
        else {
            continue;
        };
        let closed = lines.by_ref().find(|(_, l)| l.trim() == BLOCK_END);
        let Some((_, end)) = closed else {
            bail!(
                "line {}: generated block {key:?} has no `{BLOCK_END}` line",
                i + 1
            );
        };
        out.push('\n');
        out.push_str(block(key.trim(), inp)?.trim());
        out.push_str("\n\n");
        out.push_str(end);
    }
    Ok(out)
}

/// The body of the generated block `key`, from the published results.
///
/// # Errors
/// An unknown key or missing results.
fn block(key: &str, inp: &Inputs<'_>) -> anyhow::Result<String> {
    let table = |name: &str| {
        inp.table(name)
            .with_context(|| format!("block {key:?}: no docs/results/{name}/results.json"))
    };
    match key {
        "trimming/table6" => {
            let t = table("trimming")?;
            let exhaustive: Vec<f64> = t
                .rows
                .iter()
                .filter(|r| {
                    text(r, "artifact") == Some("table6")
                        && r.dataset == "hepatitis"
                        && r.method == "exhaustive_eca"
                        && r.metric == "seconds"
                        && text(r, "threshold") != Some("mean")
                })
                .map(|r| r.value)
                .collect();
            let per = exhaustive.iter().sum::<f64>() / exhaustive.len().max(1) as f64;
            Ok(format!(
                "{}\n(each cell **ours (paper)**; means over the thresholds; times: wall seconds of the \
                 published run, `docs/results/trimming/results.json`, whose notes give its total time \
                 and load; exhaustive ECA takes {per:.2} s per threshold on hepatitis there. This \
                 table is generated from that file by `cargo xtask book`.)",
                trimming_table6(t)
            ))
        }
        "trimming/figure7" => Ok(trimming_figure7(table("trimming")?, "trimming")),
        "trimming/figure7-large" => {
            Ok(trimming_figure7(table("trimming-large")?, "trimming-large"))
        }
        "collective-classification/lr-tuning" => Ok(format!(
            "{}\n(rows `lr_lambda_per_sample` of `docs/results/collective-classification/results.json`; generated by `cargo xtask book`.)",
            collective_lr_tuning(table("collective-classification")?)
        )),
        "collective-classification/claims" => Ok(format!(
            "{}\n(The run's own checks, from the notes of `docs/results/collective-classification/results.json`; generated by `cargo xtask book`.)",
            collective_claims(table("collective-classification")?)
        )),
        "trimming/figure5" => Ok(format!(
            "{}\n(each cell **ours (paper)**; generated from `docs/results/trimming/results.json` by `cargo xtask book`.)",
            trimming_figure5(table("trimming")?)
        )),
        "collective-classification/table3" => Ok(format!(
            "{}\nEach cell **ours (slides)**; ⚠ marks a cell more than 0.02 from the slides; \
             SS-mean and the MNB rows are ours only (generated from \
             `docs/results/collective-classification/results.json` by `cargo xtask book`).",
            collective_tables(table("collective-classification")?)
        )),
        "collective-classification/seconds" => {
            let t = table("collective-classification")?;
            let mut rows = Vec::new();
            for d in ["cora", "citeseer"] {
                for p in ["RS", "SS"] {
                    let mut row = vec![format!("{} {p}", capitalise(d))];
                    for m in CC_METHODS {
                        let r = find(t, |r| {
                            r.dataset == d
                                && r.method == m
                                && r.metric == "seconds"
                                && text(r, "protocol") == Some(p)
                        });
                        row.push(r.map_or_else(String::new, |r| fixed(r.value, 3)));
                    }
                    let tune = find(t, |r| {
                        r.dataset == d
                            && r.metric == "lr_lambda_per_sample"
                            && text(r, "protocol") == Some(p)
                    });
                    row.push(
                        tune.and_then(|r| num(r, "tune_seconds"))
                            .map_or_else(String::new, |x| fixed(x, 3)),
                    );
                    rows.push(row);
                }
            }
            let mut header = vec![""];
            header.extend(CC_METHODS);
            header.push("LR inner CV");
            Ok(format!(
                "{}\n(seconds = training + inference wall time summed over the 10 splits of the \
                 published run, splits in parallel on 2 cores; generated from \
                 `docs/results/collective-classification/results.json` by `cargo xtask book`.)",
                md_table(&header, &vec![true; header.len()], &rows)
            ))
        }
        "collective-classification/rs" => {
            let t = table("collective-classification")?;
            let mut rows = Vec::new();
            for m in CC_METHODS {
                let mut row = vec![m.to_owned()];
                let mut any = false;
                for d in ["cora", "citeseer"] {
                    for metric in ["accuracy", "seconds"] {
                        let r = find(t, |r| {
                            r.dataset == d
                                && r.method == m
                                && r.metric == metric
                                && text(r, "protocol") == Some("RS")
                        });
                        any |= r.is_some();
                        row.push(match (metric, r) {
                            ("accuracy", r) => cell(r.map(|r| r.value), r.and_then(|r| r.paper), 4),
                            (_, Some(r)) => fixed(r.value, 3),
                            (_, None) => String::new(),
                        });
                    }
                }
                if any {
                    rows.push(row);
                }
            }
            Ok(format!(
                "{}\n(RS: 10 random folds, seed {}; accuracy **ours (slides)**, seconds = training + \
                 inference summed over the folds; generated from \
                 `docs/results/collective-classification/results.json` by `cargo xtask book`.)",
                md_table(
                    &[
                        "method",
                        "Cora accuracy",
                        "Cora s",
                        "Citeseer accuracy",
                        "Citeseer s"
                    ],
                    &[false, true, true, true, true],
                    &rows,
                ),
                t.seed
            ))
        }
        "sen-getoor-intel/table" => Ok(intel_table(table("sen-getoor-intel")?)),
        "soft-rfgb/table2" => Ok(soft_rfgb_table2(table("soft-rfgb")?)),
        "soft-rfgb/mln" => Ok(soft_rfgb_mln(table("soft-rfgb")?)),
        "soft-rfgb/other" => Ok(soft_rfgb_other(table("soft-rfgb")?)),
        "reproduce/times" => {
            // Every published experiment's run time, and the sum of those `all` runs.
            let mut rows = Vec::new();
            let mut total = 0.0;
            let named_only: Vec<&str> = crate::experiments::by_name_only()
                .iter()
                .map(|e| e.name)
                .collect();
            for (name, t) in inp.tables {
                let Some(note) = t
                    .notes
                    .iter()
                    .find_map(|n| n.strip_prefix(crate::RUN_TIME_NOTE))
                else {
                    continue;
                };
                if named_only.contains(&name.as_str()) {
                    rows.push(vec![
                        format!("`{name}` (by name only, not in `all`)"),
                        note.trim().to_owned(),
                    ]);
                    continue;
                }
                if let Some(secs) = note
                    .split_whitespace()
                    .next()
                    .and_then(|x| x.parse::<f64>().ok())
                {
                    total += secs;
                }
                rows.push(vec![format!("`{name}`"), note.trim().to_owned()]);
            }
            Ok(format!(
                "{}\nThe experiments of `all` together {:.0} s ({:.1} minutes) of wall time as \
                 published, each at the load its row gives (generated from the run-time notes of \
                 `docs/results/*/results.json` by `cargo xtask book`).",
                md_table(&["experiment", "published run"], &[false, false], &rows),
                total,
                total / 60.0
            ))
        }
        k if k.ends_with("/runtime") => {
            let name = k.trim_end_matches("/runtime");
            let t = table(name)?;
            let note = t
                .notes
                .iter()
                .find_map(|n| n.strip_prefix(crate::RUN_TIME_NOTE))
                .with_context(|| {
                    format!("block {key:?}: the published run has no run-time note")
                })?;
            Ok(format!(
                "Seed {}; the published run took {} (the run-time note of \
                 `docs/results/{name}/results.json`; this sentence is generated from it by \
                 `cargo xtask book`).",
                t.seed,
                note.trim()
            ))
        }
        _ => bail!(
            "unknown generated block {key:?} (known: trimming/table6, trimming/figure5, collective-classification/claims, collective-classification/lr-tuning, trimming/figure7, trimming/figure7-large, collective-classification/table3, collective-classification/seconds, collective-classification/rs, soft-rfgb/table2, soft-rfgb/mln, soft-rfgb/other, sen-getoor-intel/table, reproduce/times, and NAME/runtime for any published experiment NAME)"
        ),
    }
}

/// The chapters of `docs/SUMMARY.md` that `book/doctests.rs` neither includes (so their
/// Rust blocks run as doc-tests) nor lists under NOT_YET_COMPILED.
///
/// # Errors
/// A missing `docs/SUMMARY.md` or `book/doctests.rs`.
pub fn doctest_coverage(root: &Path) -> anyhow::Result<Vec<String>> {
    let summary =
        std::fs::read_to_string(root.join("docs/SUMMARY.md")).context("reading docs/SUMMARY.md")?;
    let harness = std::fs::read_to_string(root.join("book/doctests.rs"))
        .context("reading book/doctests.rs")?;
    let mut missing = Vec::new();
    for piece in summary.split("](").skip(1) {
        let Some(page) = piece.split(')').next() else {
            continue;
        };
        let included = harness.contains(&format!("include_str!(\"../docs/{page}\")"));
        let excused = harness.contains(&format!("//! - {page}:"));
        if !included && !excused {
            missing.push(page.to_owned());
        }
    }
    Ok(missing)
}

/// Replaces each line `<!-- include FILE "HEADING" -->` by the body of that section of
/// `FILE` (from the line after `HEADING` to the next heading of the same level), with
/// links made to work from `docs/`: `docs/X` becomes `X`, other relative links plain text.
fn expand_includes(root: &Path, text: &str) -> anyhow::Result<String> {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let Some(spec) = line
            .trim()
            .strip_prefix("<!-- include ")
            .and_then(|x| x.strip_suffix(" -->"))
        else {
            out.push_str(line);
            continue;
        };
        let (file, heading) = spec
            .split_once(' ')
            .with_context(|| format!("bad include line {line:?}"))?;
        let heading = heading.trim_matches('"');
        let path = root.join(file);
        let src = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let level = heading.chars().take_while(|&c| c == '#').count();
        let mut body = Vec::new();
        let mut inside = false;
        for l in src.lines() {
            if inside {
                let hashes = l.chars().take_while(|&c| c == '#').count();
                if hashes > 0 && hashes <= level && l[hashes..].starts_with(' ') {
                    break;
                }
                body.push(l);
            } else if l.trim_end() == heading {
                inside = true;
            }
        }
        if !inside {
            bail!(
                "{}: no section {heading:?} (included by book/)",
                path.display()
            );
        }
        let body = body.join("\n");
        out.push_str(&relink_readme(body.trim(), &root.join("docs")));
        out.push('\n');
    }
    Ok(out)
}

/// README links as seen from `docs/`: `](docs/)` → the book's introduction, `](docs/X)` →
/// `](X)`, other relative links (files outside `docs/`) → their text alone.
fn relink_readme(text: &str, docs: &Path) -> String {
    let text = text
        .replace("](docs/)", "](README.md)")
        .replace("](docs/", "](");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        let parsed = after.find("](").and_then(|mid| {
            let close = after[mid..].find(')')? + mid;
            let label = &after[1..mid];
            let target = &after[mid + 2..close];
            (!label.contains('[') && !label.contains(']')).then_some((label, target, close))
        });
        match parsed {
            Some((label, target, close))
                if !(target.starts_with("http")
                    || target.starts_with('#')
                    || docs
                        .join(target.split('#').next().unwrap_or(target))
                        .is_file()) =>
            {
                out.push_str(label);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('[');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

const GENERATED: &str = "<!-- Generated by `cargo xtask book` from book/papers/ and docs/results/*/results.json: do not edit; `cargo xtask book --check` fails when this page is stale. -->\n\n";
/// The line of a hand-written part that separates its head (before the tables) from its
/// tail (after the figures).
const SPLIT: &str = "<!-- tables -->";

/// Embeds every SVG of `docs/results/NAME/` (sorted by name).
fn figures(root: &Path, experiment: &str, out: &mut String) -> anyhow::Result<()> {
    let dir = root.join("docs/results").join(experiment);
    let mut svgs: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".svg"))
        .collect();
    svgs.sort();
    if svgs.is_empty() {
        return Ok(());
    }
    let _ = writeln!(out, "### Figures: `{experiment}`\n");
    for f in svgs {
        let stem = f.trim_end_matches(".svg");
        let _ = writeln!(
            out,
            "![{experiment}: {stem}](../results/{experiment}/{f})\n\n*{}* (`docs/results/{experiment}/{f}`)\n",
            caption(experiment, stem)
        );
    }
    Ok(())
}

/// What a published figure shows and how it relates to the paper's figure.
fn caption(experiment: &str, stem: &str) -> String {
    let protocol = || {
        ["inductive", "transductive", "per-graph"]
            .into_iter()
            .find(|p| stem.ends_with(p))
            .unwrap_or("")
    };
    match (experiment, stem) {
        ("collective-synthetic", "homophily") => "Accuracy of the eight methods (mean ± standard \
            error over 10 random folds) against homophily, 1000-node graphs with 5 classes at \
            average degree 4. The slides plot this sweep from their own generator; ours is \
            srl-graph's HomophilyParams, so the trends compare, not single points."
            .into(),
        ("collective-synthetic", "link_density") => "Accuracy of the eight methods (mean ± \
            standard error over 10 random folds) against the average degree at homophily 0.7. \
            The slides vary link density through their generator's link-or-node choice; our \
            axis is the average degree."
            .into(),
        ("collective-classification", s) if s.starts_with("label_budget_") => format!(
            "Accuracy against the fraction of labelled nodes on {} (mean ± standard error over 3 random \
             hold-outs per budget; the 90 % point is the RS protocol's 10 folds) for CO-LR, \
             ICA-LR, label propagation and C&S over LR: from 20 labelled nodes per class to \
             RS's 90 %. Not in the slides (issue 32's question: where do the graph learners \
             overtake the classic methods?).",
            capitalise(s.trim_start_matches("label_budget_"))
        ),
        ("collective-synthetic", s) if s.starts_with("iterations_") => "Mean test-time LBP and \
            MF iterations to convergence over the 10 folds at each point (every fold converged \
            unless the run's notes list it). Not in the slides."
            .into(),
        ("sen-getoor-intel", _) => "Figure 3: average misclassification cost per snapshot of \
            LOGREG, MN and CSMN against γ on the Intel lab data (± standard error over the 3 \
            folds). Ours runs on the shipped 5-day subset, and the edge-cost matrix is \
            reconstructed (the paper prints none)."
            .into(),
        ("sen-getoor-synthetic", s) if s.starts_with("figure1_cost") => format!(
            "Figure 1, {} protocol: average misclassification cost against ρ at α = 0.25 \
             (± standard error). We run three protocols; the chapter compares each with the \
             paper's curve.",
            protocol()
        ),
        ("sen-getoor-synthetic", s) if s.starts_with("figure1_accuracy") => format!(
            "Accuracy against ρ at α = 0.25, {} protocol (± standard error): the accuracy \
             behind Figure 1, which the paper does not plot.",
            protocol()
        ),
        ("sen-getoor-synthetic", s) if s.starts_with("figure2") => format!(
            "Figure 2, {} protocol: average misclassification cost against α at ρ = 0.85 \
             (± standard error).",
            protocol()
        ),
        ("soft-rfgb", s) if s.starts_with("figure1") => {
            let data = if s.contains("heart") {
                "Heart"
            } else {
                "WebKB"
            };
            let panel = if s.contains("heart") { "1(b)" } else { "1(c)" };
            let metric = if s.ends_with("_f5") {
                "F5 score"
            } else if s.ends_with("_fnr") {
                "false negative rate"
            } else {
                "weighted AUC"
            };
            format!(
                "Figure {panel}: {data} learning curve of the {metric} (mean ± 1 standard error \
                 over 4 runs) for the systems the paper compares. The paper's Figure 1 \
                 prints no numbers (its text gives none), so its curves cannot be drawn \
                 beside ours; the text's claim (Soft-RFGB ahead, most with few examples) is \
                 what compares."
            )
        }
        ("trimming", s) if s.starts_with("figure5_") => format!(
            "Figure 5 ({}): ECA against 10-fold CV accuracy of every feasible feature subset, \
             on one seeded 80/20 split (the paper's split is unknown, so single points differ; \
             the agreement pattern is what compares).",
            s.trim_start_matches("figure5_")
        ),
        ("trimming-large", "figure7") => "Figure 7 on the classes over the `trimming` \
            experiment's compile budget (andes): trimming by ECA against feature selection by \
            information gain, the same protocol."
            .into(),
        ("trimming", "figure7") => "Figure 7: trimming by ECA against feature selection by \
            information gain on bnlearn networks (3 random root classes, leaves as features); \
            the paper's UAI 2008 networks are not available, so these are substitutes, and \
            the paper's figure prints no numbers to draw beside them."
            .into(),
        _ => format!("{experiment}: {stem}"),
    }
}

/// The run's free-text notes and skipped parts, collapsed.
fn run_notes(t: &ResultsTable, out: &mut String) {
    let _ = writeln!(
        out,
        "\n<details>\n<summary>Notes of the published run of <code>{}</code> (seed {}, {} run, {} rows)</summary>\n",
        t.experiment,
        t.seed,
        if t.quick { "quick" } else { "full" },
        t.rows.len()
    );
    for n in &t.notes {
        let _ = writeln!(out, "- {}", escape_cell(n));
    }
    if !t.skipped.is_empty() {
        let _ = writeln!(out, "\nSkipped:\n");
        for s in &t.skipped {
            let _ = writeln!(out, "- {}", escape_cell(s));
        }
    }
    let _ = writeln!(out, "\n</details>\n");
}

// ---------------------------------------------------------------------------------------
// Small formatting helpers.

fn md_table(header: &[&str], numeric: &[bool], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let rule: Vec<&str> = (0..header.len())
        .map(|i| {
            if numeric.get(i).copied().unwrap_or(false) {
                "---:"
            } else {
                "---"
            }
        })
        .collect();
    let _ = writeln!(out, "|{}|", rule.join("|"));
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out
}

/// Makes free text safe inside a table cell or list item (no `|`, no raw `<`).
fn escape_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('<', "&lt;")
}

fn fixed(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        format!("{x}")
    }
}

/// `ours (paper)`, `ours`, `— (paper)` or `—`.
fn cell(ours: Option<f64>, paper: Option<f64>, decimals: usize) -> String {
    match (ours, paper) {
        (Some(o), Some(p)) => format!("{} ({})", fixed(o, decimals), fixed(p, decimals)),
        (Some(o), None) => fixed(o, decimals),
        (None, Some(p)) => format!("— ({})", fixed(p, decimals)),
        (None, None) => "—".to_owned(),
    }
}

/// The Intel-lab table of docs/srl-learn.md (Sen & Getoor 2006, Fig. 3's numbers): per γ,
/// cost per test snapshot (mean ± standard error over the folds) and accuracy of LOGREG, MN,
/// CSMN and CSMN without cost-sensitive inference, and CSMN's cost reduction against LOGREG
/// and MN with the paper's figure where it states one.
fn intel_table(t: &ResultsTable) -> String {
    let cell = |method: &str, metric: &str, gamma: f64| {
        t.rows.iter().find(|r| {
            r.dataset == "intel_lab"
                && r.method == method
                && r.metric == metric
                && same(num(r, "gamma"), gamma)
                && text(r, "edge_costs").is_none()
        })
    };
    let gammas = distinct(t, "gamma", |r| {
        r.dataset == "intel_lab" && r.metric == "cost" && text(r, "edge_costs").is_none()
    });
    let methods = ["LOGREG", "MN", "CSMN", "CSMN w/o CSINF"];
    let mut out = String::from(
        "| γ | LOGREG | MN | CSMN | CSMN w/o CSINF | acc LOGREG | acc MN | acc CSMN | acc w/o | CSMN vs LOGREG | CSMN vs MN |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for g in gammas {
        let mut cols = vec![format!("{g:.1}")];
        for m in methods {
            cols.push(mean_se(cell(m, "cost", g), 2));
        }
        for m in methods {
            cols.push(cell(m, "accuracy", g).map_or("—".into(), |r| format!("{:.3}", r.value)));
        }
        for metric in ["cost_reduction_vs_logreg_pct", "cost_reduction_vs_mn_pct"] {
            cols.push(
                cell("CSMN", metric, g).map_or("—".into(), |r| match r.paper {
                    Some(p) => format!("{:.1} % (paper {p})", r.value),
                    None => format!("{:.1} %", r.value),
                }),
            );
        }
        out.push_str(&format!("| {} |\n", cols.join(" | ")));
    }
    out
}

fn num(r: &ResultRow, key: &str) -> Option<f64> {
    r.extra.get(key).and_then(serde_json::Value::as_f64)
}

fn text<'a>(r: &'a ResultRow, key: &str) -> Option<&'a str> {
    r.extra.get(key).and_then(serde_json::Value::as_str)
}

fn same(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

/// Distinct values of a numeric extra field over the rows matching `keep`, ascending.
fn distinct(t: &ResultsTable, key: &str, keep: impl Fn(&ResultRow) -> bool) -> Vec<f64> {
    let mut v: Vec<f64> = t
        .rows
        .iter()
        .filter(|r| keep(r))
        .filter_map(|r| num(r, key))
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup_by(|a, b| (*a - *b).abs() < 1e-12);
    v
}

fn find(t: &ResultsTable, keep: impl Fn(&ResultRow) -> bool) -> Option<&ResultRow> {
    t.rows.iter().find(|r| keep(r))
}

/// `mean ± stderr` of a row (`stderr` or `std_error` field), or `—`.
fn mean_se(r: Option<&ResultRow>, decimals: usize) -> String {
    match r {
        None => "—".to_owned(),
        Some(r) => match num(r, "stderr").or_else(|| num(r, "std_error")) {
            Some(se) => format!("{} ± {}", fixed(r.value, decimals), fixed(se, decimals)),
            None => fixed(r.value, decimals),
        },
    }
}

fn p_value(x: f64) -> String {
    if x < 1e-3 {
        format!("{x:.0e}")
    } else {
        fixed(x, 3)
    }
}

fn missing(out: &mut String, experiment: &str) {
    let _ = writeln!(
        out,
        "*`docs/results/{experiment}/results.json` is missing: publish a full run with `cargo xtask reproduce {experiment} --publish`.*\n"
    );
}

/// Every row that carries a paper number, as `setting | method | metric | ours (paper) | difference`.
fn paper_cells(t: &ResultsTable, settings: &[&str], out: &mut String) {
    let mut rows = Vec::new();
    for r in t.rows.iter().filter(|r| r.paper.is_some()) {
        let p = r.paper.unwrap_or(f64::NAN);
        let setting: Vec<String> = settings
            .iter()
            .filter_map(|k| {
                r.extra.get(*k).map(|v| match v {
                    serde_json::Value::String(s) => format!("{k} {s}"),
                    other => format!("{k} {other}"),
                })
            })
            .collect();
        rows.push(vec![
            r.dataset.clone(),
            setting.join(", "),
            r.method.clone(),
            r.metric.clone(),
            fixed(r.value, 4),
            fixed(p, 4),
            // A difference that rounds to zero prints unsigned (not "-0.0000").
            if (r.value - p).abs() < 5e-5 {
                fixed(0.0, 4)
            } else {
                format!("{:+.4}", r.value - p)
            },
        ]);
    }
    out.push_str(&md_table(
        &[
            "data",
            "setting",
            "method",
            "metric",
            "ours",
            "paper",
            "ours − paper",
        ],
        &[false, false, false, false, true, true, true],
        &rows,
    ));
    out.push('\n');
}

/// The setting fields [`flat_paper_cells`] shows per experiment (`None`: the chapter's
/// own tables already list every paper cell flat, with the difference).
fn flat_settings(experiment: &str) -> Option<&'static [&'static str]> {
    match experiment {
        "collective-classification" => Some(&["protocol", "folds"]),
        "soft-rfgb" => Some(&["alpha", "beta", "folds"]),
        "trimming" => Some(&["artifact", "threshold", "budget", "order"]),
        "uknn" => Some(&["doc", "k"]),
        "datasets" => Some(&[]),
        _ => None,
    }
}

/// Below a chapter's tables in the paper's layout: every cell of `experiment` that carries
/// a paper number as one flat table with `ours − paper`, folded (issue 31: "the paper's
/// beside it, and the difference, with the flat table below").
fn flat_paper_cells(inp: &Inputs<'_>, experiment: &str, out: &mut String) {
    let (Some(t), Some(settings)) = (inp.table(experiment), flat_settings(experiment)) else {
        return;
    };
    let n = t.rows.iter().filter(|r| r.paper.is_some()).count();
    if n == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "<details>\n<summary>Every cell of <code>{experiment}</code> with a paper number, flat, with the difference ({n} cells)</summary>\n"
    );
    paper_cells(t, settings, out);
    out.push_str("\n</details>\n\n");
}

// ---------------------------------------------------------------------------------------
// Sen & Getoor 2006.

const SG_METHODS: [&str; 5] = ["LOGREG", "MN", "CSMN", "CSMN w/o CSINF", "MN 0/1 MAP"];

fn sen_getoor(inp: &Inputs<'_>, out: &mut String) {
    let _ = writeln!(out, "## Our numbers beside the paper's\n");
    let Some(t) = inp.table("sen-getoor-synthetic") else {
        missing(out, "sen-getoor-synthetic");
        return;
    };
    let _ = writeln!(
        out,
        "### The paper's stated numbers\n\nThe paper prints its results as plots (Figures 1-3) and states these numbers in \
         its text (§6.1-6.2); `setting` names the protocol and the point of the sweep.\n"
    );
    paper_cells(t, &["protocol", "rho", "alpha"], out);
    if let Some(i) = inp.table("sen-getoor-intel") {
        paper_cells(i, &["gamma"], out);
    }
    for protocol in ["per-graph", "transductive", "inductive"] {
        let keep = |r: &ResultRow| text(r, "protocol") == Some(protocol);
        if !t.rows.iter().any(keep) {
            continue;
        }
        let headline = if protocol == "per-graph" {
            " (the paper's protocol, §6.1)"
        } else {
            " (secondary)"
        };
        let _ = writeln!(
            out,
            "### Figures 1 and 2 as tables: protocol `{protocol}`{headline}\n\nMisclassification cost per test graph (or fold), mean ± standard error over the runs; \
             the paper plots these curves and prints no absolute cost. `p` is the paired t-test of CSMN against MN.\n"
        );
        for (fig, fixed_key, fixed_val, sweep) in [
            ("Figure 1 (α = 0.25, ρ varies)", "alpha", 0.25, "rho"),
            ("Figure 2 (ρ = 0.85, α varies)", "rho", 0.85, "alpha"),
        ] {
            let xs = distinct(t, sweep, |r| {
                keep(r) && same(num(r, fixed_key), fixed_val) && r.metric == "cost"
            });
            let mut rows = Vec::new();
            for &x in &xs {
                let at = |r: &ResultRow| {
                    keep(r) && same(num(r, fixed_key), fixed_val) && same(num(r, sweep), x)
                };
                let mut row = vec![fixed(x, 2)];
                for m in SG_METHODS {
                    row.push(mean_se(
                        find(t, |r| at(r) && r.method == m && r.metric == "cost"),
                        1,
                    ));
                }
                row.push(
                    find(t, |r| {
                        at(r)
                            && r.method == "CSMN vs MN"
                            && r.metric == "p_value"
                            && text(r, "test") == Some("paired")
                    })
                    .map_or("—".to_owned(), |r| p_value(r.value)),
                );
                for m in ["MN", "CSMN"] {
                    row.push(
                        find(t, |r| at(r) && r.method == m && r.metric == "accuracy")
                            .map_or("—".to_owned(), |r| fixed(r.value, 3)),
                    );
                }
                rows.push(row);
            }
            let x_name = if sweep == "rho" { "ρ" } else { "α" };
            let _ = writeln!(out, "**{fig}**\n");
            let mut header = vec![x_name];
            header.extend(SG_METHODS);
            header.extend(["p CSMN vs MN", "accuracy MN", "accuracy CSMN"]);
            out.push_str(&md_table(&header, &[true; 9], &rows));
            out.push('\n');
        }
    }
    let Some(t) = inp.table("sen-getoor-intel") else {
        missing(out, "sen-getoor-intel");
        return;
    };
    let _ = writeln!(
        out,
        "### Figure 3 as a table: Intel lab\n\nMisclassification cost per test snapshot, mean ± standard error over the folds, by γ.\n"
    );
    let mut rows = Vec::new();
    for g in distinct(t, "gamma", |r| r.metric == "cost") {
        let at = |r: &ResultRow| same(num(r, "gamma"), g);
        let mut row = vec![fixed(g, 1)];
        for m in SG_METHODS {
            row.push(mean_se(
                find(t, |r| at(r) && r.method == m && r.metric == "cost"),
                2,
            ));
        }
        for m in ["CSMN vs LOGREG", "CSMN vs MN"] {
            row.push(
                find(t, |r| {
                    at(r)
                        && r.method == m
                        && r.metric == "p_value"
                        && text(r, "test") == Some("paired")
                })
                .map_or("—".to_owned(), |r| p_value(r.value)),
            );
        }
        rows.push(row);
    }
    let mut header = vec!["γ"];
    header.extend(SG_METHODS);
    header.extend(["p CSMN vs LOGREG", "p CSMN vs MN"]);
    out.push_str(&md_table(&header, &[true; 8], &rows));
    out.push('\n');
}

// ---------------------------------------------------------------------------------------
// Sen et al. 2008 (collective classification).

const CC_METHODS: [&str; 10] = [
    "CO-NB", "ICA-NB", "GS-NB", "CO-LR", "ICA-LR", "GS-LR", "LBP", "MF", "CO-MNB", "ICA-MNB",
];

/// Sen et al. 2008 Table 3 in the slides' layout: per data set, methods × (SS, RS, M,
/// SS-mean), each cell **ours (slides)** with ⚠ beyond 0.02; used by the chapter and the
/// generated block `collective-classification/table3` of docs/collective-classification.md.
fn collective_tables(t: &ResultsTable) -> String {
    let mut out = String::new();
    let datasets: Vec<String> = {
        let mut seen = Vec::new();
        for r in &t.rows {
            if !seen.contains(&r.dataset) {
                seen.push(r.dataset.clone());
            }
        }
        seen
    };
    for d in &datasets {
        let mut rows = Vec::new();
        for m in CC_METHODS {
            let mut row = vec![m.to_owned()];
            let mut any = false;
            for p in ["SS", "RS", "M", "SS-mean"] {
                let r = find(t, |r| {
                    &r.dataset == d
                        && r.method == m
                        && r.metric == "accuracy"
                        && text(r, "protocol") == Some(p)
                });
                any |= r.is_some();
                let mut c = cell(r.map(|r| r.value), r.and_then(|r| r.paper), 4);
                if let Some(r) = r
                    && let Some(pv) = r.paper
                    && (r.value - pv).abs() > 0.02
                {
                    c.push_str(" ⚠");
                }
                row.push(c);
            }
            if any {
                rows.push(row);
            }
        }
        let title = capitalise(d);
        let _ = writeln!(out, "**{title}**\n");
        out.push_str(&md_table(
            &[&title, "SS", "RS", "M", "SS-mean"],
            &[false, true, true, true, true],
            &rows,
        ));
        out.push('\n');
    }
    out
}

/// The LR prior tuning per data set and protocol (rows `lr_lambda_per_sample`): the inner
/// cross-validated accuracy of each grid value `c` (mean over the splits, the best in bold)
/// and the chosen `c` per split; block `collective-classification/lr-tuning`.
fn collective_lr_tuning(t: &ResultsTable) -> String {
    let floats = |r: &ResultRow, key: &str| -> Vec<f64> {
        r.extra
            .get(key)
            .and_then(serde_json::Value::as_array)
            .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
            .unwrap_or_default()
    };
    let mut rows = Vec::new();
    for d in ["cora", "citeseer"] {
        for p in ["RS", "SS"] {
            let Some(r) = find(t, |r| {
                r.dataset == d
                    && r.metric == "lr_lambda_per_sample"
                    && text(r, "protocol") == Some(p)
            }) else {
                continue;
            };
            let (grid, inner, chosen) = (
                floats(r, "grid"),
                floats(r, "inner_accuracy"),
                floats(r, "per_fold"),
            );
            let best = inner.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let acc: Vec<String> = inner
                .iter()
                .map(|&a| {
                    if a == best {
                        format!("**{}**", fixed(a, 4))
                    } else {
                        fixed(a, 4)
                    }
                })
                .collect();
            let counts: Vec<String> = grid
                .iter()
                .filter_map(|&c| {
                    let k = chosen.iter().filter(|&&x| (x - c).abs() < 1e-12).count();
                    match k {
                        0 => None,
                        k if k == chosen.len() => Some(format!("{c} in all {k}")),
                        1 => Some(format!("{c}")),
                        k => Some(format!("{c} ×{k}")),
                    }
                })
                .collect();
            rows.push(vec![
                format!("{} {p}", capitalise(d)),
                acc.join(", "),
                counts.join(", "),
            ]);
        }
    }
    md_table(
        &[
            "",
            "inner accuracy per c (mean over splits)",
            "chosen c per split",
        ],
        &[false, false, false],
        &rows,
    )
}

/// The run's checks of the slides' claims (its notes on "dominates" and the cells more than
/// 0.02 off), one bullet each: the chapter and block `collective-classification/claims`.
fn collective_claims(t: &ResultsTable) -> String {
    let mut out = String::new();
    for n in t
        .notes
        .iter()
        .filter(|n| n.contains("dominates") || n.starts_with("more than"))
    {
        let _ = writeln!(out, "- {}", escape_cell(n));
    }
    out
}

fn collective(inp: &Inputs<'_>, out: &mut String) {
    let _ = writeln!(out, "## Our numbers beside the slides'\n");
    if let Some(t) = inp.table("collective-classification") {
        let _ = writeln!(
            out,
            "Accuracy, each cell **ours (slides)**; ⚠ marks a cell more than 0.02 from the slides. \
             SS-mean (the mean of the ten sample accuracies) and the MNB rows are ours only.\n"
        );
        out.push_str(&collective_tables(t));
        let claims = collective_claims(t);
        if !claims.is_empty() {
            let _ = writeln!(out, "### The slides' claims, as the run checks them\n");
            out.push_str(&claims);
            out.push('\n');
        }
    } else {
        missing(out, "collective-classification");
    }
    let Some(t) = inp.table("collective-synthetic") else {
        missing(out, "collective-synthetic");
        return;
    };
    let _ = writeln!(
        out,
        "### The synthetic sweeps as tables\n\nAccuracy, mean ± standard error over 10 random-sampling folds. The slides show \
         these sweeps only as plots, so there is no number to put beside ours.\n"
    );
    for (dataset, key, label) in [
        ("synthetic-homophily", "homophily", "homophily"),
        ("synthetic-link_density", "avg_degree", "average degree"),
    ] {
        let methods: Vec<String> = {
            let mut seen: Vec<String> = Vec::new();
            for r in t.rows.iter().filter(|r| r.dataset == dataset) {
                if r.metric == "accuracy" && !seen.contains(&r.method) {
                    seen.push(r.method.clone());
                }
            }
            seen
        };
        let mut rows = Vec::new();
        for x in distinct(t, key, |r| r.dataset == dataset && r.metric == "accuracy") {
            let mut row = vec![fixed(x, 1)];
            for m in &methods {
                row.push(mean_se(
                    find(t, |r| {
                        r.dataset == dataset
                            && &r.method == m
                            && r.metric == "accuracy"
                            && same(num(r, key), x)
                    }),
                    3,
                ));
            }
            rows.push(row);
        }
        let mut header = vec![label];
        header.extend(methods.iter().map(String::as_str));
        let _ = writeln!(out, "**`{dataset}`**\n");
        out.push_str(&md_table(&header, &vec![true; header.len()], &rows));
        out.push('\n');
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or_else(String::new, |f| {
        f.to_uppercase().collect::<String>() + c.as_str()
    })
}

// ---------------------------------------------------------------------------------------
// Yang et al. 2014 (Soft-RFGB).

const RFGB_DOMAINS: [(&str, &str); 5] = [
    ("cora", "Cora"),
    ("imdb", "IMDB"),
    ("heart", "Heart"),
    ("uwcse", "UW"),
    ("webkb", "WebKB"),
];
const RFGB_ALPHAS: [f64; 3] = [0.5, 1.0, 2.0];
const RFGB_BETAS: [f64; 4] = [-2.0, -4.0, -8.0, -10.0];
const RFGB_MEASURES: [(&str, &str); 3] = [("wauc", "WAUC"), ("fnr", "FNR"), ("f5", "F5 (WF)")];

fn soft_rfgb(inp: &Inputs<'_>, out: &mut String) {
    let Some(t) = inp.table("soft-rfgb") else {
        missing(out, "soft-rfgb");
        return;
    };
    let get = |d: &str, m: &str, a: f64, b: f64, metric: &str| {
        find(t, |r| {
            r.dataset == d
                && r.method == m
                && r.metric == metric
                && same(num(r, "alpha"), a)
                && same(num(r, "beta"), b)
                && !r.extra.contains_key("train_fraction")
        })
    };
    let _ = writeln!(
        out,
        "## Table II, our numbers beside the paper's\n\nEach cell **ours (paper)**, means over the folds; `—` where the published \
         run has no row (MLN = MLN-Boost, rows `MLN`).\n"
    );
    let mut header = vec![
        "domain".to_owned(),
        "measure".to_owned(),
        "MLN".to_owned(),
        "No Boosting".to_owned(),
        "RFGB (HM)".to_owned(),
    ];
    for a in RFGB_ALPHAS {
        for b in RFGB_BETAS {
            header.push(format!("α={a} β={b}"));
        }
    }
    let mut rows = Vec::new();
    for (d, title) in RFGB_DOMAINS {
        if !t.rows.iter().any(|r| r.dataset == d) {
            continue;
        }
        for (metric, label) in RFGB_MEASURES {
            let c = |m: &str, a: f64, b: f64| {
                let r = get(d, m, a, b, metric);
                cell(r.map(|r| r.value), r.and_then(|r| r.paper), 3)
            };
            let mut row = vec![title.to_owned(), label.to_owned(), c("MLN", 0.0, 0.0)];
            row.push(c("No Boosting", 0.0, 0.0));
            row.push(c("RFGB", 0.0, 0.0));
            for a in RFGB_ALPHAS {
                for b in RFGB_BETAS {
                    row.push(c("Soft-RFGB", a, b));
                }
            }
            rows.push(row);
        }
    }
    let header_ref: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut numeric = vec![true; header.len()];
    numeric[0] = false;
    numeric[1] = false;
    out.push_str(&md_table(&header_ref, &numeric, &rows));
    let _ = writeln!(
        out,
        "\n### Beside Table II\n\nThe variants the paper discusses in Sec. IV-C (and ours for comparison), each cell **ours (paper)** where the paper states a number.\n"
    );
    let mut methods: Vec<(String, f64, f64)> = Vec::new();
    for r in &t.rows {
        if r.method.starts_with("curve:")
            || r.method == "MLN"
            || r.method == "Soft-RFGB" && num(r, "alpha") != Some(100.0)
        {
            continue;
        }
        let key = (
            r.method.clone(),
            num(r, "alpha").unwrap_or(0.0),
            num(r, "beta").unwrap_or(0.0),
        );
        if !methods.contains(&key) {
            methods.push(key);
        }
    }
    let mut rows = Vec::new();
    for (d, title) in RFGB_DOMAINS {
        for (m, a, b) in &methods {
            if get(d, m, *a, *b, "wauc").is_none() {
                continue;
            }
            let mut row = vec![title.to_owned(), m.clone(), format!("{a}"), format!("{b}")];
            for metric in ["wauc", "fnr", "f5", "auc_roc", "auc_pr"] {
                let r = get(d, m, *a, *b, metric);
                row.push(cell(r.map(|r| r.value), r.and_then(|r| r.paper), 3));
            }
            rows.push(row);
        }
    }
    out.push_str(&md_table(
        &[
            "domain", "method", "α", "β", "WAUC", "FNR", "F5", "AUC-ROC", "AUC-PR",
        ],
        &[false, false, true, true, true, true, true, true, true],
        &rows,
    ));
    let _ = writeln!(
        out,
        "\n### Fig. 1(b)(c) as tables: learning curves\n\nMean ± standard error over the runs, by the share of the training examples used. The paper shows these curves only as plots.\n"
    );
    for (d, title) in [("heart", "Heart"), ("webkb", "WebKB")] {
        let curves: Vec<String> = {
            let mut seen: Vec<String> = Vec::new();
            for r in t.rows.iter().filter(|r| r.dataset == d) {
                if r.method.starts_with("curve:") && !seen.contains(&r.method) {
                    seen.push(r.method.clone());
                }
            }
            seen
        };
        if curves.is_empty() {
            continue;
        }
        for (metric, label) in RFGB_MEASURES {
            let mut rows = Vec::new();
            for f in distinct(t, "train_fraction", |r| r.dataset == d) {
                let at = |r: &ResultRow| {
                    r.dataset == d && r.metric == metric && same(num(r, "train_fraction"), f)
                };
                let examples = find(t, at)
                    .and_then(|r| num(r, "mean_train_examples"))
                    .map_or("—".to_owned(), |x| fixed(x, 0));
                let mut row = vec![fixed(f, 1), examples];
                for c in &curves {
                    row.push(mean_se(find(t, |r| at(r) && &r.method == c), 3));
                }
                rows.push(row);
            }
            let mut header = vec!["training share", "mean training examples"];
            header.extend(curves.iter().map(|c| c.trim_start_matches("curve: ")));
            let _ = writeln!(out, "**{title}, {label}**\n");
            out.push_str(&md_table(&header, &vec![true; header.len()], &rows));
            out.push('\n');
        }
    }
}

/// A Soft-RFGB result row of the main protocol (not a learning-curve point).
fn rfgb_row<'a>(
    t: &'a ResultsTable,
    d: &str,
    m: &str,
    a: f64,
    b: f64,
    metric: &str,
) -> Option<&'a ResultRow> {
    find(t, |r| {
        r.dataset == d
            && r.method == m
            && r.metric == metric
            && same(num(r, "alpha"), a)
            && same(num(r, "beta"), b)
            && !r.extra.contains_key("train_fraction")
    })
}

/// `lo–hi` of `xs` at three decimals, one number when both ends print the same, `—` if empty.
fn range3(xs: &[f64]) -> String {
    if xs.is_empty() {
        return "—".to_owned();
    }
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = (fixed(lo, 3), fixed(hi, 3));
    if lo == hi { lo } else { format!("{lo}–{hi}") }
}

/// The srl-boost guide's compact Table II: per domain and measure, No Boosting, RFGB and
/// the range of Soft-RFGB over the paper's 12 (α, β), each **ours (paper)**.
fn soft_rfgb_table2(t: &ResultsTable) -> String {
    let mut rows = Vec::new();
    for (d, title) in RFGB_DOMAINS {
        for (metric, label) in [("fnr", "FNR"), ("f5", "F5"), ("wauc", "WAUC")] {
            let c = |m: &str| {
                let r = rfgb_row(t, d, m, 0.0, 0.0, metric);
                cell(r.map(|r| r.value), r.and_then(|r| r.paper), 3)
            };
            let soft: Vec<&ResultRow> = RFGB_ALPHAS
                .iter()
                .flat_map(|&a| RFGB_BETAS.iter().map(move |&b| (a, b)))
                .filter_map(|(a, b)| rfgb_row(t, d, "Soft-RFGB", a, b, metric))
                .collect();
            if soft.is_empty() && rfgb_row(t, d, "RFGB", 0.0, 0.0, metric).is_none() {
                continue;
            }
            let ours: Vec<f64> = soft.iter().map(|r| r.value).collect();
            let paper: Vec<f64> = soft.iter().filter_map(|r| r.paper).collect();
            let range = if paper.is_empty() {
                range3(&ours)
            } else {
                format!("{} ({})", range3(&ours), range3(&paper))
            };
            rows.push(vec![
                title.to_owned(),
                label.to_owned(),
                c("No Boosting"),
                c("RFGB"),
                range,
            ]);
        }
    }
    format!(
        "{}\n(means over folds, each cell **ours (paper)**; generated from \
         `docs/results/soft-rfgb/results.json` by `cargo xtask book`; the full table is in \
         `docs/results/soft-rfgb/results.md` and, in the paper's layout, in the Soft-RFGB \
         chapter.)",
        md_table(
            &[
                "domain",
                "measure",
                "No Boosting",
                "RFGB",
                "Soft-RFGB range over the 12 (α, β)",
            ],
            &[false, false, true, true, true],
            &rows,
        )
    )
}

/// The srl-boost guide's MLN column of Table II, with RFGB's numbers beside it.
fn soft_rfgb_mln(t: &ResultsTable) -> String {
    let mut rows = Vec::new();
    for (d, title) in RFGB_DOMAINS {
        let mln = |metric: &str| rfgb_row(t, d, "MLN", 0.0, 0.0, metric);
        if mln("fnr").is_none() {
            continue;
        }
        let mut row = vec![title.to_owned()];
        for metric in ["fnr", "f5", "wauc", "auc_roc"] {
            let r = mln(metric);
            row.push(cell(r.map(|r| r.value), r.and_then(|r| r.paper), 3));
        }
        let rfgb: Vec<String> = ["fnr", "f5", "wauc"]
            .iter()
            .map(|m| {
                rfgb_row(t, d, "RFGB", 0.0, 0.0, m)
                    .map_or_else(|| "—".to_owned(), |r| fixed(r.value, 3))
            })
            .collect();
        row.push(rfgb.join(" / "));
        rows.push(row);
    }
    format!(
        "{}\n(means over folds, **ours (paper)**; generated from \
         `docs/results/soft-rfgb/results.json` by `cargo xtask book`.)",
        md_table(
            &[
                "domain",
                "FNR",
                "F5",
                "WAUC",
                "AUC-ROC",
                "RFGB FNR / F5 / WAUC (ours)",
            ],
            &[false, true, true, true, true, true],
            &rows,
        )
    )
}

/// The srl-boost guide's paragraph on Sec. IV-C's other claims and Fig. 1(b)(c).
fn soft_rfgb_other(t: &ResultsTable) -> String {
    let v = |d: &str, m: &str, a: f64, b: f64, metric: &str| {
        rfgb_row(t, d, m, a, b, metric).map_or_else(|| "—".to_owned(), |r| fixed(r.value, 3))
    };
    let p = |d: &str, m: &str, a: f64, b: f64, metric: &str| {
        rfgb_row(t, d, m, a, b, metric)
            .and_then(|r| r.paper)
            .map_or_else(|| "—".to_owned(), |x| format!("{x}"))
    };
    let curve = |d: &str, m: &str| {
        let at = |f: f64| {
            find(t, |r| {
                r.dataset == d
                    && r.method == m
                    && r.metric == "fnr"
                    && same(num(r, "train_fraction"), f)
            })
        };
        let fr = distinct(t, "train_fraction", |r| r.dataset == d && r.method == m);
        match (fr.first(), fr.last()) {
            (Some(&lo), Some(&hi)) => {
                format!("{} → {}", mean_se(at(lo), 3), mean_se(at(hi), 3))
            }
            _ => "—".to_owned(),
        }
    };
    format!(
        "Other claims (**ours (paper)**): WebKB α = 100, β = −100 WAUC {} ({}; RFGB {} ({})); \
         RFGB 1:1 re-sampling on WebKB WAUC {} / F5 {} ({} / {}); Heart with over-sampled \
         positives WAUC {} / F5 {} ({} / {}). Learning curves (FNR, mean ± s.e. over the \
         runs, smallest → full training set): Heart RFGB {}, Soft-RFGB {}, No Boosting {}; \
         WebKB RFGB {}, Soft-RFGB {}, No Boosting {}. (Generated from \
         `docs/results/soft-rfgb/results.json` by `cargo xtask book`.)",
        v("webkb", "Soft-RFGB", 100.0, -100.0, "wauc"),
        p("webkb", "Soft-RFGB", 100.0, -100.0, "wauc"),
        v("webkb", "RFGB", 0.0, 0.0, "wauc"),
        p("webkb", "RFGB", 0.0, 0.0, "wauc"),
        v("webkb", "RFGB 1:1 re-sampling", 0.0, 0.0, "wauc"),
        v("webkb", "RFGB 1:1 re-sampling", 0.0, 0.0, "f5"),
        p("webkb", "RFGB 1:1 re-sampling", 0.0, 0.0, "wauc"),
        p("webkb", "RFGB 1:1 re-sampling", 0.0, 0.0, "f5"),
        v("heart", "RFGB positives over-sampled 1:1", 0.0, 0.0, "wauc"),
        v("heart", "RFGB positives over-sampled 1:1", 0.0, 0.0, "f5"),
        p("heart", "RFGB positives over-sampled 1:1", 0.0, 0.0, "wauc"),
        p("heart", "RFGB positives over-sampled 1:1", 0.0, 0.0, "f5"),
        curve("heart", "curve: RFGB"),
        curve("heart", "curve: Soft-RFGB"),
        curve("heart", "curve: No Boosting"),
        curve("webkb", "curve: RFGB"),
        curve("webkb", "curve: Soft-RFGB"),
        curve("webkb", "curve: No Boosting"),
    )
}

// ---------------------------------------------------------------------------------------
// Zadrozny et al. 2009 (uK-NN).

fn uknn(inp: &Inputs<'_>, out: &mut String) {
    let Some(t) = inp.table("uknn") else {
        missing(out, "uknn");
        return;
    };
    let _ = writeln!(
        out,
        "## Table 2, our numbers beside the paper's\n\nThe toy database of Table 1: for each training document, the context probability \
         P(year of the test document | document) and the weight uK-NN gives it; each cell **ours (paper)**.\n"
    );
    let docs = distinct(t, "doc", |r| r.dataset == "toy");
    let mut rows = Vec::new();
    for d in docs {
        let at = |m: &'static str| {
            move |r: &ResultRow| r.dataset == "toy" && r.metric == m && same(num(r, "doc"), d)
        };
        let pc = find(t, at("p_context"));
        let w = find(t, at("weight"));
        rows.push(vec![
            fixed(d, 0),
            cell(pc.map(|r| r.value), pc.and_then(|r| r.paper), 3),
            cell(w.map(|r| r.value), w.and_then(|r| r.paper), 3),
        ]);
    }
    out.push_str(&md_table(
        &["document", "P(context)", "weight"],
        &[true, true, true],
        &rows,
    ));
    let _ = writeln!(out, "\n**The test document's decision (k = 3)**\n");
    let mut rows = Vec::new();
    for r in t
        .rows
        .iter()
        .filter(|r| r.dataset == "toy" && num(r, "doc").is_none())
    {
        rows.push(vec![
            r.method.clone(),
            r.metric.clone(),
            cell(Some(r.value), r.paper, 3),
        ]);
    }
    out.push_str(&md_table(
        &["method", "quantity", "ours (paper)"],
        &[false, false, true],
        &rows,
    ));
    let _ = writeln!(
        out,
        "\n### State of the Union speeches\n\nLeave-one-out accuracy of party prediction. This run is the project's own extension: \
         the paper has no real-data experiment (its real-data evaluation is \"currently being \
         evaluated\"), so there is no paper number to put beside ours.\n"
    );
    let mut rows = Vec::new();
    for k in distinct(t, "k", |r| {
        r.dataset == "sotu" && text(r, "weighting") != Some("baseline")
    }) {
        let mut row = vec![fixed(k, 0)];
        for (m, w) in [
            ("knn", "none"),
            ("uknn", "voting"),
            ("uknn", "distance"),
            ("uknn", "both"),
        ] {
            row.push(
                find(t, |r| {
                    r.dataset == "sotu"
                        && r.method == m
                        && text(r, "weighting") == Some(w)
                        && same(num(r, "k"), k)
                })
                .map_or("—".to_owned(), |r| fixed(r.value, 4)),
            );
        }
        rows.push(row);
    }
    out.push_str(&md_table(
        &[
            "k",
            "K-NN",
            "uK-NN (voting)",
            "uK-NN (distance)",
            "uK-NN (both)",
        ],
        &[true; 5],
        &rows,
    ));
    out.push('\n');
    let base = |m: &str| {
        find(t, |r| {
            r.dataset == "sotu" && r.method == m && text(r, "weighting") == Some("baseline")
        })
        .map(|r| r.value)
    };
    let best = |m: &str| {
        t.rows
            .iter()
            .filter(|r| r.dataset == "sotu" && r.method == m && r.metric == "accuracy")
            .map(|r| r.value)
            .fold(f64::NEG_INFINITY, f64::max)
    };
    if let (Some(near), Some(maj)) = (base("nearest-year"), base("decade-majority")) {
        let (knn, uknn) = (best("knn"), best("uknn"));
        let _ = writeln!(
            out,
            "**Context-only baselines** (no words, same leave-one-out): the party of the \
             nearest-year other speech scores **{near:.4}**, the majority party of the other \
             speeches of the same decade {maj:.4} (a tie counts as an error). The best K-NN \
             scores {knn:.4}, the best uK-NN {uknn:.4}. {}\n",
            if near > uknn {
                "The decade context nearly carries the label by itself (presidents' parties \
                 come in runs of years), so this data set cannot show that context weights \
                 help a text classifier: uK-NN's gain over K-NN here is smaller than what \
                 the year alone gives, and the run is no evidence for or against the paper's \
                 idea."
            } else {
                "The text-based classifiers beat the context-only baselines here."
            }
        );
    }
}

// ---------------------------------------------------------------------------------------
// Choi & Van den Broeck 2018 (trimming).

const TRIM_NETWORKS: [&str; 7] = [
    "bupa",
    "pima",
    "ident",
    "anatomy",
    "heart",
    "voting",
    "hepatitis",
];

/// Table 6 (Choi & Van den Broeck 2018) from the trimming results: ours beside the
/// paper's, means over the thresholds; used by the trimming chapter and by the generated
/// block `trimming/table6` of docs/srl-bayes.md.
fn trimming_table6(t: &ResultsTable) -> String {
    let art = |r: &ResultRow, a: &str| text(r, "artifact") == Some(a);
    let mean = |d: &str, m: &str, metric: &str, order: Option<&str>| {
        find(t, |r| {
            art(r, "table6")
                && r.dataset == d
                && r.method == m
                && r.metric == metric
                && text(r, "threshold") == Some("mean")
                && text(r, "order") == order
        })
    };
    let mut rows = Vec::new();
    for d in TRIM_NETWORKS {
        let stat = |metric: &str| {
            find(t, |r| {
                art(r, "table6") && r.dataset == d && r.method == "-" && r.metric == metric
            })
        };
        let within = stat("subsets_within_budget");
        let Some(n) = within.and_then(|r| num(r, "features")) else {
            continue;
        };
        let c = |r: Option<&ResultRow>, dec: usize| {
            cell(r.map(|r| r.value), r.and_then(|r| r.paper), dec)
        };
        let exhaust = stat("subsets_exhausting_budget");
        let info = Some("decreasing_information");
        rows.push(vec![
            d.to_owned(),
            fixed(n, 0),
            c(within, 0),
            c(exhaust, 0),
            c(mean(d, "fs_sdd", "evaluations", None), 0),
            c(mean(d, "fs_sdd", "seconds", None), 4),
            c(mean(d, "exhaustive_eca", "evaluations", None), 0),
            c(mean(d, "bnb", "evaluations", info), 1),
            c(mean(d, "bnb", "evaluations", Some("decreasing_mpa")), 1),
            c(mean(d, "bnb", "evaluations", Some("given")), 1),
            c(mean(d, "trimbn_dfs", "evaluations", None), 1),
            c(mean(d, "trimbn_ranked", "evaluations", None), 1),
            c(mean(d, "bnb", "seconds", info), 5),
        ]);
    }
    md_table(
        &[
            "network",
            "n",
            "subsets within budget",
            "C(n, ⌊n/3⌋)",
            "FS-SDD evals",
            "FS-SDD s",
            "exhaustive ECA evals",
            "B&B evals (information order)",
            "B&B evals (MPA order)",
            "B&B evals (file order)",
            "released tool's DFS evals",
            "released tool's ranked-search evals",
            "B&B s",
        ],
        &[
            false, true, true, true, true, true, true, true, true, true, true, true, true,
        ],
        &rows,
    )
}

/// Figure 5's subsets as a table (artifact `figure5`): per network the subsets of highest
/// ECA, CV accuracy and information gain and the full classifier, each cell **ours
/// (paper)**; the chapter and the `trimming/figure5` block of the srl-bayes guide.
fn trimming_figure5(t: &ResultsTable) -> String {
    let art = |r: &ResultRow, a: &str| text(r, "artifact") == Some(a);
    let mut rows = Vec::new();
    for d in ["pima", "heart"] {
        for m in ["eca-optimal", "accuracy-optimal", "infogain", "original"] {
            let g = |metric: &str| {
                find(t, |r| {
                    art(r, "figure5") && r.dataset == d && r.method == m && r.metric == metric
                })
            };
            let c = |metric: &str| {
                let r = g(metric);
                cell(r.map(|r| r.value), r.and_then(|r| r.paper), 4)
            };
            let subset = g("test_agreement")
                .and_then(|r| text(r, "subset"))
                .map_or("all features".to_owned(), |s| format!("{{{s}}}"));
            rows.push(vec![
                d.to_owned(),
                m.to_owned(),
                subset,
                c("test_agreement"),
                c("test_accuracy"),
                c("eca"),
                c("cv_accuracy"),
            ]);
        }
        if let Some(r) = find(t, |r| {
            art(r, "figure5") && r.dataset == d && r.metric == "fraction_subsets_higher_cv_accuracy"
        }) {
            rows.push(vec![
                d.to_owned(),
                "share of subsets with higher CV accuracy than the full classifier".to_owned(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
                cell(Some(r.value), r.paper, 3),
            ]);
        }
    }
    md_table(
        &[
            "data",
            "subset chosen by",
            "subset",
            "test agreement",
            "test accuracy",
            "ECA",
            "CV accuracy",
        ],
        &[false, false, false, true, true, true, true],
        &rows,
    )
}

/// Figure 7 per network (classes, leaves, instances, times, mean ECAs) and the summary
/// rows of experiment `name`'s published table `t`: blocks `trimming/figure7` and
/// `trimming/figure7-large` of docs/srl-bayes.md.
fn trimming_figure7(t: &ResultsTable, name: &str) -> String {
    let fig = |r: &&ResultRow| text(r, "artifact") == Some("figure7");
    let rows_of = |net: &str| -> Vec<&ResultRow> {
        t.rows
            .iter()
            .filter(fig)
            .filter(|r| r.dataset.split('/').next() == Some(net) && r.dataset.contains('/'))
            .collect()
    };
    let mut nets: Vec<&str> = Vec::new();
    for r in t.rows.iter().filter(fig) {
        if let Some((n, _)) = r.dataset.split_once('/')
            && !nets.contains(&n)
        {
            nets.push(n);
        }
    }
    let mut rows = Vec::new();
    for net in &nets {
        let rs = rows_of(net);
        let sum = |method: &str, metric: &str| -> f64 {
            rs.iter()
                .filter(|r| r.method == method && r.metric == metric)
                .map(|r| r.value)
                .sum()
        };
        let mean = |method: &str| -> f64 {
            let v: Vec<f64> = rs
                .iter()
                .filter(|r| r.method == method && r.metric == "eca")
                .map(|r| r.value)
                .collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        let classes = rs.iter().filter(|r| r.metric == "compile_seconds").count();
        let instances = rs
            .iter()
            .filter(|r| r.method == "bnb" && r.metric == "eca")
            .count();
        let leaves = rs
            .first()
            .and_then(|r| num(r, "features"))
            .unwrap_or(f64::NAN);
        rows.push(vec![
            (*net).to_owned(),
            classes.to_string(),
            fixed(leaves, 0),
            instances.to_string(),
            fixed(sum("-", "compile_seconds"), 2),
            fixed(sum("bnb", "seconds"), 2),
            fixed(mean("bnb"), 4),
            fixed(mean("infogain"), 4),
        ]);
    }
    let all = |method: &str, metric: &str| {
        find(t, |r| {
            text(r, "artifact") == Some("figure7")
                && r.dataset == "all"
                && r.method == method
                && r.metric == metric
        })
        .map(|r| r.value)
    };
    let instances = find(t, |r| {
        text(r, "artifact") == Some("figure7") && r.dataset == "all"
    })
    .and_then(|r| num(r, "instances"))
    .unwrap_or(f64::NAN);
    // instances where both reach ECA ≥ 0.9999 (a nearly constant original classifier)
    let eca_of = |method: &str| -> std::collections::BTreeMap<(String, String), f64> {
        t.rows
            .iter()
            .filter(fig)
            .filter(|r| r.method == method && r.metric == "eca" && r.dataset.contains('/'))
            .map(|r| {
                let th = num(r, "threshold").map_or_else(String::new, |x| format!("{x}"));
                ((r.dataset.clone(), th), r.value)
            })
            .collect()
    };
    let (ours, ig) = (eca_of("bnb"), eca_of("infogain"));
    let trivial = ours
        .iter()
        .filter(|(k, v)| **v >= 0.9999 && ig.get(*k).is_some_and(|g| *g >= 0.9999))
        .count();
    let pct = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{:.1} %", 100.0 * v));
    let e = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| format!("{v:.1e}"));
    let f4 = |v: Option<f64>| v.map_or_else(|| "—".to_owned(), |v| fixed(v, 4));
    format!(
        "{}\n{} instances: mean ECA {} (trimming) vs {} (information gain, own threshold) and {} \
         (information gain at T); trimming strictly higher in {} of them ({} against information \
         gain at T), lower in {}; both at ECA ≥ 0.9999 in {trivial}; branch and bound differs from \
         the exhaustive optimum by at most {}. \
         (Times: seconds of the published run, compile = the joint over the leaves and the class, \
         summed over the classes; bnb = branch and bound, summed over classes and thresholds. \
         Generated from `docs/results/{name}/results.json` by `cargo xtask book`.)",
        md_table(
            &[
                "network",
                "classes",
                "leaves",
                "instances",
                "compile s",
                "bnb s",
                "mean ECA (trimming)",
                "mean ECA (information gain)",
            ],
            &[false, true, true, true, true, true, true, true],
            &rows,
        ),
        fixed(instances, 0),
        f4(all("bnb", "mean_eca")),
        f4(all("infogain", "mean_eca")),
        f4(all("infogain_at_T", "mean_eca")),
        pct(all("bnb_vs_infogain", "fraction_higher")),
        pct(all("bnb_vs_infogain_at_T", "fraction_higher")),
        pct(all("bnb_vs_infogain", "fraction_lower")),
        e(all("bnb_vs_exhaustive", "max_abs_difference")),
    )
}

fn trimming(inp: &Inputs<'_>, out: &mut String) {
    let Some(t) = inp.table("trimming") else {
        missing(out, "trimming");
        return;
    };
    let art = |r: &ResultRow, a: &str| text(r, "artifact") == Some(a);
    let _ = writeln!(
        out,
        "## Table 6, our numbers beside the paper's\n\nUnit costs, budget ⌊n/3⌋, means over the thresholds T; each cell **ours (paper)**. \
         Evaluations count the criterion computations (MAA + MPA bounds for branch and bound); \
         seconds are wall time of the published run.\n"
    );
    out.push_str(&trimming_table6(t));
    let _ = writeln!(
        out,
        "\n**The optimum at T = 0.5 against the reference results** (ECA of the trimmed classifier; the paper's value is the exhaustive optimum of its reference results)\n"
    );
    let mut rows = Vec::new();
    for r in t
        .rows
        .iter()
        .filter(|r| art(r, "table6") && r.method == "bnb" && r.metric == "eca" && r.paper.is_some())
    {
        if text(r, "order") != Some("decreasing_information") {
            continue;
        }
        rows.push(vec![
            r.dataset.clone(),
            format!("{{{}}}", text(r, "subset").unwrap_or("")),
            format!("{{{}}}", text(r, "reference_subset").unwrap_or("")),
            cell(Some(r.value), r.paper, 6),
        ]);
    }
    out.push_str(&md_table(
        &[
            "network",
            "our subset",
            "reference subset",
            "ECA ours (paper)",
        ],
        &[false, false, false, true],
        &rows,
    ));
    if let Some(r) = find(t, |r| r.metric == "fraction_higher_eca") {
        let _ = writeln!(
            out,
            "\nShare of the {} (network, T) instances where the trimmed classifier (own threshold) has a higher ECA than FS-SDD's subset: **{}** (paper {}).\n",
            num(r, "instances").map_or("—".to_owned(), |x| fixed(x, 0)),
            fixed(r.value, 3),
            r.paper.map_or("—".to_owned(), |p| fixed(p, 2))
        );
    }
    let _ = writeln!(
        out,
        "## Figure 5 as a table\n\nThe subsets of highest ECA, of highest cross-validated accuracy and of highest information gain, \
         evaluated on the held-out test rows; each cell **ours (paper)** where the paper states a number.\n"
    );
    out.push_str(&trimming_figure5(t));
    let _ = writeln!(
        out,
        "\n## Figure 7 as a table\n\nECA of our trimming (branch and bound) / of the information-gain subset (own optimal threshold), per class variable and threshold T. \
         The paper's networks are not available (see below), so there is no paper number per cell.\n"
    );
    let classes: Vec<String> = {
        let mut seen: Vec<String> = Vec::new();
        for r in t
            .rows
            .iter()
            .filter(|r| art(r, "figure7") && r.dataset != "all")
        {
            if !seen.contains(&r.dataset) {
                seen.push(r.dataset.clone());
            }
        }
        seen
    };
    let ts = distinct(t, "threshold", |r| art(r, "figure7") && r.metric == "eca");
    let mut rows = Vec::new();
    for c in &classes {
        let feats = find(t, |r| art(r, "figure7") && &r.dataset == c)
            .and_then(|r| num(r, "features"))
            .map_or("—".to_owned(), |x| fixed(x, 0));
        let mut row = vec![c.clone(), feats];
        for &th in &ts {
            let e = |m: &str| {
                find(t, |r| {
                    art(r, "figure7")
                        && &r.dataset == c
                        && r.method == m
                        && r.metric == "eca"
                        && same(num(r, "threshold"), th)
                })
                .map_or("—".to_owned(), |r| fixed(r.value, 3))
            };
            row.push(format!("{} / {}", e("bnb"), e("infogain")));
        }
        rows.push(row);
    }
    let th_names: Vec<String> = ts.iter().map(|x| format!("T = {x}")).collect();
    let mut header = vec!["class", "leaves"];
    header.extend(th_names.iter().map(String::as_str));
    out.push_str(&md_table(&header, &vec![true; header.len()], &rows));
    let summary: Vec<Vec<String>> = t
        .rows
        .iter()
        .filter(|r| art(r, "figure7") && r.dataset == "all")
        .map(|r| vec![r.method.clone(), r.metric.clone(), fixed(r.value, 4)])
        .collect();
    if !summary.is_empty() {
        let _ = writeln!(out, "\n**Over all instances**\n");
        out.push_str(&md_table(
            &["method", "quantity", "ours"],
            &[false, false, true],
            &summary,
        ));
    }
    out.push('\n');
}

// ---------------------------------------------------------------------------------------
// The data sets.

fn datasets(inp: &Inputs<'_>, out: &mut String) {
    let Some(t) = inp.table("datasets") else {
        missing(out, "datasets");
        return;
    };
    let _ = writeln!(
        out,
        "## The data sets beside the papers' descriptions\n\nEach cell **ours (paper)** where a paper states the number.\n"
    );
    let mut metrics: Vec<String> = Vec::new();
    let mut sets: Vec<String> = Vec::new();
    for r in &t.rows {
        if !metrics.contains(&r.metric) {
            metrics.push(r.metric.clone());
        }
        if !sets.contains(&r.dataset) {
            sets.push(r.dataset.clone());
        }
    }
    let mut rows = Vec::new();
    for m in &metrics {
        let mut row = vec![m.clone()];
        for d in &sets {
            let r = find(t, |r| &r.dataset == d && &r.metric == m);
            let dec = if r.is_some_and(|r| r.value.fract() == 0.0) {
                0
            } else {
                3
            };
            row.push(cell(r.map(|r| r.value), r.and_then(|r| r.paper), dec));
        }
        rows.push(row);
    }
    let mut header = vec!["quantity"];
    header.extend(sets.iter().map(String::as_str));
    let mut numeric = vec![true; header.len()];
    numeric[0] = false;
    out.push_str(&md_table(&header, &numeric, &rows));
    out.push('\n');
}

// ---------------------------------------------------------------------------------------
// Build.

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map_or_else(
            || root.join("target"),
            |p| if p.is_absolute() { p } else { root.join(p) },
        )
}

/// `cargo doc --workspace --no-deps`, mdbook into `target/book/`, rustdoc into
/// `target/book/api/`.
///
/// # Errors
/// A failing child process or file copy.
pub fn build(root: &Path) -> anyhow::Result<()> {
    log("book: cargo doc --workspace --no-deps");
    let status = Command::new(cargo())
        .current_dir(root)
        .args(["doc", "--workspace", "--no-deps", "--locked"])
        .status()
        .context("running cargo doc")?;
    if !status.success() {
        bail!("cargo doc failed ({status})");
    }
    let doc = target_dir(root).join("doc");
    let mdbook = match std::env::var_os("MDBOOK") {
        Some(p) => PathBuf::from(p),
        None => {
            let o = Command::new("bash")
                .arg(root.join("scripts/install-mdbook"))
                .current_dir(root)
                .stderr(std::process::Stdio::inherit())
                .output()
                .context("running scripts/install-mdbook")?;
            if !o.status.success() {
                bail!("scripts/install-mdbook failed ({})", o.status);
            }
            PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
        }
    };
    let out = root.join("target/book");
    log(&format!("book: {} build book", mdbook.display()));
    let status = Command::new(&mdbook)
        .current_dir(root)
        .args(["build", "book"])
        .env("SRL_BOOK_RUSTDOC", &doc)
        .env(
            // This very binary as the preprocessor (book.toml's `cargo xtask book
            // --preprocess` would rebuild xtask when a source changed meanwhile).
            "MDBOOK_PREPROCESSOR__SRL_RUSTDOC_LINKS__COMMAND",
            format!("'{}' book --preprocess", std::env::current_exe()?.display()),
        )
        .status()
        .with_context(|| format!("running {}", mdbook.display()))?;
    if !status.success() {
        bail!("mdbook build failed ({status})");
    }
    let api = out.join("api");
    if api.exists() {
        std::fs::remove_dir_all(&api)?;
    }
    copy_dir(&doc, &api)?;
    write_api_index(root, &api)?;
    write_python_reference(root, &out)?;
    let pages = count_pages(&out, &api)?;
    log(&format!(
        "book: {} chapter page(s) and the API docs in {}; open {}",
        pages,
        out.display(),
        out.join("index.html").display()
    ));
    Ok(())
}

/// The Python API reference, `python/srl.html` (and `python/srl/srlearn.html`), generated
/// by pdoc from the docstrings of the installed `srl` package: with the Python of
/// `SRL_BOOK_PYTHON`, else `target/srl-py-venv/bin/python` (the venv `.ci/run` builds the
/// wheel into, with pdoc installed). Without a Python that imports `srl` and `pdoc`, it
/// writes `python/index.html` saying how to generate the reference (the browser check
/// fails on that page, so CI always has the real one).
///
/// # Errors
/// A failing pdoc run or file write.
fn write_python_reference(root: &Path, out: &Path) -> anyhow::Result<()> {
    let dir = out.join("python");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let python = std::env::var_os("SRL_BOOK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir(root).join("srl-py-venv/bin/python"));
    let usable = Command::new(&python)
        .args(["-c", "import pdoc, srl, srl.srlearn"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !usable {
        log(&format!(
            "book: no Python reference ({} cannot import pdoc and srl); wrote python/index.html saying how to make it",
            python.display()
        ));
        let html = "<!doctype html><html><head><meta charset=\"utf-8\"><title>srl Python API</title></head>\
            <body><h1>srl Python API reference: not generated</h1><p>Build the wheel into a venv \
            with pdoc (<code>pip install maturin pdoc; cd crates/srl-py; maturin develop \
            --release</code>) and run <code>SRL_BOOK_PYTHON=/path/to/venv/bin/python cargo \
            xtask book</code>.</p><p><a href=\"../python.html\">The Python guide</a></p>\
            </body></html>\n";
        std::fs::write(dir.join("index.html"), html)?;
        return Ok(());
    }
    log(&format!(
        "book: pdoc srl srl.srlearn with {}",
        python.display()
    ));
    let status = Command::new(&python)
        .args(["-m", "pdoc", "srl", "srl.srlearn", "-o"])
        .arg(&dir)
        .status()
        .context("running pdoc")?;
    if !status.success() {
        bail!("pdoc failed ({status})");
    }
    Ok(())
}

/// Writes `api/index.html`: the API landing page listing every workspace crate whose
/// rustdoc is there, with its Cargo description, and a link back to the book.
fn write_api_index(root: &Path, api: &Path) -> anyhow::Result<()> {
    let o = Command::new(cargo())
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .output()
        .context("running cargo metadata")?;
    if !o.status.success() {
        bail!("cargo metadata failed ({})", o.status);
    }
    let meta: serde_json::Value = serde_json::from_slice(&o.stdout).context("cargo metadata")?;
    let mut crates: Vec<(String, String)> = meta["packages"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter_map(|p| {
                    let dir = p["name"].as_str()?.replace('-', "_");
                    let lib = p["targets"].as_array()?.iter().any(|t| {
                        t["kind"]
                            .as_array()
                            .is_some_and(|k| k.iter().any(|k| k == "lib" || k == "cdylib"))
                    });
                    let has = api.join(&dir).join("index.html").is_file();
                    (lib && has).then(|| (dir, p["description"].as_str().unwrap_or("").to_owned()))
                })
                .collect()
        })
        .unwrap_or_default();
    crates.sort();
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut html = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>srl API reference</title>\
         <style>body{font-family:sans-serif;max-width:50em;margin:2em auto;line-height:1.5}\
         dt{font-family:monospace;font-size:1.1em;margin-top:.8em}</style></head><body>\n\
         <h1>srl API reference</h1>\n<p>The rustdoc of every library crate of the workspace \
         (generated by <code>cargo doc --workspace --no-deps</code>). Back to \
         <a href=\"../index.html\">the srl book</a>.</p>\n<dl>\n",
    );
    for (dir, desc) in &crates {
        let _ = writeln!(
            html,
            "<dt><a href=\"{dir}/index.html\">{dir}</a></dt><dd>{}</dd>",
            esc(desc)
        );
    }
    html.push_str("</dl>\n</body></html>\n");
    std::fs::write(api.join("index.html"), html).context("writing api/index.html")
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from).with_context(|| format!("listing {}", from.display()))? {
        let e = e?;
        let dest = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &dest)?;
        } else {
            std::fs::copy(e.path(), &dest)
                .with_context(|| format!("copying {}", e.path().display()))?;
        }
    }
    Ok(())
}

fn count_pages(dir: &Path, skip: &Path) -> anyhow::Result<usize> {
    let mut n = 0;
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p == skip {
            continue;
        }
        if p.is_dir() {
            n += count_pages(&p, skip)?;
        } else if p.extension().is_some_and(|x| x == "html")
            && p.file_name()
                .is_some_and(|f| f != "print.html" && f != "toc.html" && f != "404.html")
        {
            n += 1;
        }
    }
    Ok(n)
}

// ---------------------------------------------------------------------------------------
// The mdBook preprocessor.

/// The mdBook preprocessor protocol: `supports RENDERER` answers yes; otherwise read
/// `[context, book]` JSON on stdin and write the book with rustdoc links on stdout.
///
/// # Errors
/// Malformed JSON on stdin.
#[allow(clippy::print_stdout)]
pub fn preprocess(root: &Path, args: &[String]) -> anyhow::Result<()> {
    if args.first().is_some_and(|a| a == "supports") {
        return Ok(());
    }
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let v: serde_json::Value = serde_json::from_str(&input).context("parsing mdbook's JSON")?;
    let mut book = v
        .get(1)
        .cloned()
        .context("mdbook's JSON is not [context, book]")?;
    let doc = std::env::var_os("SRL_BOOK_RUSTDOC")
        .map_or_else(|| target_dir(root).join("doc"), PathBuf::from);
    let index = RustdocIndex::read(&doc);
    walk(&mut book, &index);
    println!("{}", serde_json::to_string(&book)?);
    Ok(())
}

fn walk(v: &mut serde_json::Value, index: &RustdocIndex) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(ch)) = map.get_mut("Chapter") {
                let path = ch
                    .get("path")
                    .and_then(serde_json::Value::as_str)
                    .map(str::to_owned);
                if let (Some(path), Some(serde_json::Value::String(content))) =
                    (path, ch.get_mut("content"))
                {
                    *content = link_page(content, &path, index);
                }
            }
            for (_, x) in map.iter_mut() {
                walk(x, index);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                walk(x, index);
            }
        }
        _ => {}
    }
}

/// Type names of the srl crates → their rustdoc pages (relative to the rustdoc root).
#[derive(Default)]
struct RustdocIndex {
    /// name → (crate, path relative to the doc root), in [`CRATES`] order.
    items: BTreeMap<String, Vec<(String, String)>>,
}

impl RustdocIndex {
    fn read(doc: &Path) -> Self {
        let mut index = Self::default();
        for krate in CRATES {
            let Ok(all) = std::fs::read_to_string(doc.join(krate).join("all.html")) else {
                continue;
            };
            let mut seen = BTreeSet::new();
            for piece in all.split("href=\"").skip(1) {
                let Some(href) = piece.split('"').next() else {
                    continue;
                };
                let file = href.rsplit('/').next().unwrap_or(href);
                let mut parts = file.split('.');
                let (Some(kind), Some(name), Some("html"), None) =
                    (parts.next(), parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                if !["struct", "enum", "trait", "type", "union"].contains(&kind) {
                    continue;
                }
                if seen.insert(name.to_owned()) {
                    index
                        .items
                        .entry(name.to_owned())
                        .or_default()
                        .push((krate.to_owned(), format!("{krate}/{href}")));
                }
            }
        }
        index
    }

    /// The rustdoc page of the type a code span names, if it names one.
    fn lookup(&self, span: &str, page_crate: Option<&str>) -> Option<&str> {
        let s = span.trim().trim_end_matches("()");
        let segs: Vec<&str> = s.split("::").collect();
        if segs
            .iter()
            .any(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            || segs[0].chars().next().is_some_and(|c| c.is_ascii_digit())
        {
            return None;
        }
        let krate = segs
            .first()
            .copied()
            .filter(|c| CRATES.contains(c) && segs.len() > 1);
        // The last segment, or the type before a method (`RocCurve::auc`).
        let candidates = [
            segs.last().copied(),
            segs.len().checked_sub(2).map(|i| segs[i]),
        ];
        for name in candidates.into_iter().flatten() {
            if !name.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
                continue;
            }
            let Some(hits) = self.items.get(name) else {
                continue;
            };
            let pick = krate
                .and_then(|k| hits.iter().find(|(c, _)| c == k))
                .or_else(|| page_crate.and_then(|k| hits.iter().find(|(c, _)| c == k)))
                .or_else(|| hits.first());
            if let Some((_, href)) = pick {
                return Some(href);
            }
        }
        None
    }
}

/// Links the code spans of one chapter that name an srl type to `api/…`, outside code
/// blocks, headings and existing link texts; also points the directory link `results/`
/// at the reproduction overview.
fn link_page(content: &str, path: &str, index: &RustdocIndex) -> String {
    let depth = path.matches('/').count();
    let up = "../".repeat(depth);
    let stem = path
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .trim_end_matches(".md");
    let page_crate = CRATES.iter().copied().find(|c| c.replace('_', "-") == stem);
    let mut out = String::with_capacity(content.len() + 1024);
    let mut fence: Option<String> = None;
    for line in content.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(f) = &fence {
            if trimmed.starts_with(f.as_str()) {
                fence = None;
            }
            out.push_str(line);
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let marker: String = trimmed
                .chars()
                .take_while(|&c| c == '`' || c == '~')
                .collect();
            fence = Some(marker);
            out.push_str(line);
            continue;
        }
        if trimmed.starts_with('#') {
            out.push_str(line);
            continue;
        }
        // mdBook renders `README.md` as `index.html` but keeps links to it as `README.html`.
        let mut line = line.replace("](results/)", "](papers/index.md)");
        for target in [
            "README.md",
            "papers/README.md",
            "../README.md",
            "../papers/README.md",
        ] {
            let index = target.replace("README.md", "index.md");
            line = line
                .replace(&format!("]({target})"), &format!("]({index})"))
                .replace(&format!("]({target}#"), &format!("]({index}#"));
        }
        out.push_str(&link_line(&line, &up, page_crate, index));
    }
    out
}

fn link_line(line: &str, up: &str, page_crate: Option<&str>, index: &RustdocIndex) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut depth = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            out.push(c);
            out.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c == '`' {
            let run = chars[i..].iter().take_while(|&&x| x == '`').count();
            // Find the closing run of the same length.
            let mut j = i + run;
            let mut close = None;
            while j < chars.len() {
                if chars[j] == '`' {
                    let r = chars[j..].iter().take_while(|&&x| x == '`').count();
                    if r == run {
                        close = Some(j);
                        break;
                    }
                    j += r;
                } else {
                    j += 1;
                }
            }
            let Some(close) = close else {
                out.extend(&chars[i..]);
                break;
            };
            let span: String = chars[i..close + run].iter().collect();
            let inner: String = chars[i + run..close].iter().collect();
            let followed_by_link = chars.get(close + run) == Some(&']');
            match (depth == 0 && !followed_by_link)
                .then(|| index.lookup(&inner, page_crate))
                .flatten()
            {
                Some(href) => {
                    let _ = write!(out, "[{span}]({up}api/{href})");
                }
                None => out.push_str(&span),
            }
            i = close + run;
            continue;
        }
        if c == '[' {
            depth += 1;
        } else if c == ']' {
            depth = depth.saturating_sub(1);
        }
        out.push(c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> RustdocIndex {
        let mut i = RustdocIndex::default();
        i.items.insert(
            "RelationalGraph".into(),
            vec![(
                "srl_graph".into(),
                "srl_graph/struct.RelationalGraph.html".into(),
            )],
        );
        i.items.insert(
            "LoopyBp".into(),
            vec![
                ("srl_infer".into(), "srl_infer/struct.LoopyBp.html".into()),
                ("srl_dist".into(), "srl_dist/struct.LoopyBp.html".into()),
            ],
        );
        i
    }

    #[test]
    fn links_type_spans_outside_code_links_and_headings() {
        let i = index();
        let page = "# `RelationalGraph`\nA `RelationalGraph` and `RelationalGraph::new()`, \
                    [`RelationalGraph`](x.html), `foo`, `srl_dist::LoopyBp`.\n```rust\nlet g: `RelationalGraph`;\n```\n";
        let got = link_page(page, "papers/x.md", &i);
        assert!(got.starts_with("# `RelationalGraph`\n"), "{got}");
        assert!(got.contains("A [`RelationalGraph`](../api/srl_graph/struct.RelationalGraph.html) and [`RelationalGraph::new()`](../api/srl_graph/struct.RelationalGraph.html)"), "{got}");
        assert!(got.contains("[`RelationalGraph`](x.html)"), "{got}");
        assert!(got.contains("`foo`,"), "{got}");
        assert!(
            got.contains("[`srl_dist::LoopyBp`](../api/srl_dist/struct.LoopyBp.html)"),
            "{got}"
        );
        assert!(got.contains("let g: `RelationalGraph`;"), "{got}");
        let got = link_page("[o](papers/README.md) and [i](README.md#x)\n", "x.md", &i);
        assert_eq!(got, "[o](papers/index.md) and [i](index.md#x)\n");
    }

    #[test]
    fn prefers_the_page_crate_then_the_lowest_crate() {
        let i = index();
        assert_eq!(
            i.lookup("LoopyBp", Some("srl_dist")),
            Some("srl_dist/struct.LoopyBp.html")
        );
        assert_eq!(
            i.lookup("LoopyBp", None),
            Some("srl_infer/struct.LoopyBp.html")
        );
        assert_eq!(i.lookup("loopy bp", None), None);
        assert_eq!(i.lookup("Vec<LoopyBp>", None), None);
    }

    #[test]
    fn every_chapter_is_compiled_or_excused() {
        let missing = doctest_coverage(&crate::repo_root()).expect("SUMMARY.md and doctests.rs");
        assert!(missing.is_empty(), "{missing:?}");
    }

    #[test]
    fn readme_links_work_from_docs() {
        assert_eq!(
            relink_readme(
                "see [docs/srl-cli.md](docs/srl-cli.md), [ARCHITECTURE.md](ARCHITECTURE.md), [docs/](docs/) and [x](https://e.org)",
                &crate::repo_root().join("docs")
            ),
            "see [docs/srl-cli.md](srl-cli.md), ARCHITECTURE.md, [docs/](README.md) and [x](https://e.org)"
        );
    }

    #[test]
    fn cells_and_tables() {
        assert_eq!(cell(Some(0.12345), Some(0.2), 3), "0.123 (0.200)");
        assert_eq!(cell(None, Some(0.2), 2), "— (0.20)");
        assert_eq!(cell(None, None, 2), "—");
        let t = md_table(&["a", "b"], &[false, true], &[vec!["x".into(), "1".into()]]);
        assert_eq!(t, "| a | b |\n|---|---:|\n| x | 1 |\n");
    }

    #[test]
    fn the_published_results_render() {
        let root = crate::repo_root();
        let mut pages = generate(&root).expect("the published results parse");
        // The paper figures (SVG) are pages too; their own test checks them.
        let svgs = pages.len();
        pages.retain(|(p, _)| p.extension().is_none_or(|x| x != "svg"));
        assert_eq!(
            svgs - pages.len(),
            5,
            "five figures with the papers' points"
        );
        let guides = pages
            .iter()
            .filter(|(_, text)| !text.starts_with(GENERATED))
            .count();
        assert_eq!(pages.len(), CHAPTERS.len() + 3 + guides);
        assert!(guides >= 1, "docs/srl-bayes.md holds a generated block");
        for (path, text) in &pages {
            assert!(
                text.starts_with(GENERATED)
                    || text.contains(BLOCK_START)
                    || text.contains(QUOTE_START),
                "{}",
                path.display()
            );
            assert!(!text.contains("is missing: publish"), "{}", path.display());
        }
    }

    #[test]
    fn every_chapter_shows_its_reproduce_command() {
        let pages = generate(&crate::repo_root()).expect("pages");
        for ch in &CHAPTERS {
            let (_, text) = pages
                .iter()
                .find(|(p, _)| p.ends_with(format!("{}.md", ch.slug)))
                .expect("chapter page");
            for e in ch.experiments {
                assert!(
                    text.contains(&format!("cargo xtask reproduce {e}")),
                    "{}: no reproduce command for {e}",
                    ch.slug
                );
            }
        }
    }

    #[test]
    fn every_published_figure_has_a_caption() {
        let root = crate::repo_root().join("docs/results");
        let mut n = 0;
        for e in std::fs::read_dir(&root).expect("docs/results").flatten() {
            let exp = e.file_name().to_string_lossy().into_owned();
            for f in std::fs::read_dir(e.path()).expect("experiment").flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                if let Some(stem) = name.strip_suffix(".svg") {
                    n += 1;
                    let c = caption(&exp, stem);
                    assert_ne!(c, format!("{exp}: {stem}"), "no caption for {exp}/{name}");
                }
            }
        }
        assert!(n >= 20, "{n} figures");
    }

    /// The y coordinates of each data line (`stroke-width="2"` polylines) of an SVG.
    fn series_ys(svg: &str) -> Vec<Vec<String>> {
        svg.lines()
            .filter(|l| l.starts_with("<polyline") && l.contains("stroke-width=\"2\""))
            .filter_map(|l| {
                let pts = l.split("points=\"").nth(1)?.split('"').next()?;
                Some(
                    pts.split_whitespace()
                        .filter_map(|p| p.split(',').nth(1).map(str::to_owned))
                        .collect(),
                )
            })
            .collect()
    }

    #[test]
    fn no_published_figure_is_flat() {
        let root = crate::repo_root().join("docs/results");
        for e in std::fs::read_dir(&root).expect("docs/results").flatten() {
            for f in std::fs::read_dir(e.path()).expect("experiment").flatten() {
                let p = f.path();
                if p.extension().is_none_or(|x| x != "svg") {
                    continue;
                }
                let svg = std::fs::read_to_string(&p).expect("svg");
                let lines: Vec<Vec<String>> = series_ys(&svg)
                    .into_iter()
                    .filter(|ys| ys.len() > 2) // legend swatches are 2-point lines
                    .collect();
                if lines.is_empty() {
                    continue; // a scatter plot: markers only
                }
                let flat = lines.iter().all(|ys| ys.iter().all(|y| y == &ys[0]));
                assert!(!flat, "{}: every series is constant", p.display());
            }
        }
        let flat = "<polyline fill=\"none\" stroke-width=\"2\" points=\"1,5 2,5 3,5 \"/>";
        assert!(series_ys(flat)[0].iter().all(|y| y == "5"));
    }

    #[test]
    fn intel_blocks_quote_the_published_run() {
        let root = crate::repo_root();
        let p = root.join("docs/results/sen-getoor-intel/results.json");
        let t =
            ResultsTable::from_json(&std::fs::read_to_string(p).expect("results")).expect("parses");
        let mn = |g: f64| {
            t.rows
                .iter()
                .find(|r| r.method == "MN" && r.metric == "cost" && same(num(r, "gamma"), g))
                .map(|r| format!("{:.2}", r.value))
                .expect("MN cost")
        };
        let (m05, m1) = (mn(0.5), mn(1.0));
        let mut tables = BTreeMap::new();
        tables.insert("sen-getoor-intel".to_owned(), t);
        let inp = Inputs { tables: &tables };
        let table = block("sen-getoor-intel/table", &inp).expect("table");
        let rows: Vec<&str> = table
            .lines()
            .filter(|l| l.starts_with("| 0") || l.starts_with("| 1"))
            .collect();
        assert_eq!(rows.len(), 3, "{table}");
        assert!(
            rows[0].starts_with("| 0.5 |") && rows[0].contains(&m05),
            "{table}"
        );
        assert!(
            // 30.15 %: the paper's CSMN cost reduction over LOGREG at γ = 1 (Sen & Getoor 2006,
            // Intel lab results), the `paper` value sen_getoor.rs writes into that row
            rows[1].contains(&m1) && rows[1].contains("(paper 30.15)"),
            "{table}"
        );
        assert!(
            !rows.iter().any(|r| r.contains('—')),
            "every cell filled: {table}"
        );
        let runtime = block("sen-getoor-intel/runtime", &inp).expect("runtime");
        assert!(runtime.contains("s wall"), "{runtime}");
    }

    #[test]
    fn soft_rfgb_blocks_quote_the_published_run() {
        let root = crate::repo_root();
        let mut tables = BTreeMap::new();
        let p = root.join("docs/results/soft-rfgb/results.json");
        let t =
            ResultsTable::from_json(&std::fs::read_to_string(p).expect("results")).expect("parses");
        let note = t
            .notes
            .iter()
            .find_map(|n| n.strip_prefix(crate::RUN_TIME_NOTE))
            .expect("run-time note")
            .trim()
            .to_owned();
        tables.insert("soft-rfgb".to_owned(), t);
        let inp = Inputs { tables: &tables };
        let runtime = block("soft-rfgb/runtime", &inp).expect("runtime");
        assert!(runtime.contains(&note), "{runtime}");
        let table2 = block("soft-rfgb/table2", &inp).expect("table2");
        // 5 domains x 3 measures, each with the paper's number beside ours
        let rows: Vec<&str> = table2
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| domain"))
            .collect();
        assert_eq!(rows.len(), 15, "{table2}");
        assert!(rows.iter().all(|r| r.matches('(').count() == 3), "{table2}");
        assert!(
            table2.contains("| Cora | FNR | 1.000 (0.136) |"),
            "{table2}"
        );
        let mln = block("soft-rfgb/mln", &inp).expect("mln");
        assert!(mln.contains("| WebKB |"), "{mln}");
        let other = block("soft-rfgb/other", &inp).expect("other");
        assert!(!other.contains('—'), "{other}");
    }

    #[test]
    fn generated_blocks_are_refilled_and_checked() {
        let root = crate::repo_root();
        let mut tables = BTreeMap::new();
        let p = root.join("docs/results/trimming/results.json");
        let t =
            ResultsTable::from_json(&std::fs::read_to_string(p).expect("results")).expect("parses");
        tables.insert("trimming".to_owned(), t);
        let inp = Inputs { tables: &tables };
        let stale = "intro\n<!-- generated: trimming/table6 -->\n| old | 0.028 |\n<!-- end generated -->\ntail\n";
        let filled = fill_blocks(stale, &inp).expect("fills");
        assert!(!filled.contains("0.028"), "{filled}");
        assert!(filled.contains("| hepatitis | 19 |"), "{filled}");
        assert!(filled.starts_with("intro\n<!-- generated: trimming/table6 -->\n"));
        assert!(
            filled.ends_with("<!-- end generated -->\ntail\n"),
            "{filled}"
        );
        // refilling is a fixed point
        assert_eq!(fill_blocks(&filled, &inp).expect("again"), filled);
        let e = fill_blocks("<!-- generated: nope -->\n<!-- end generated -->\n", &inp)
            .expect_err("unknown key")
            .to_string();
        assert!(e.contains("unknown generated block"), "{e}");
        let e = fill_blocks("<!-- generated: trimming/table6 -->\nno end\n", &inp)
            .expect_err("no end")
            .to_string();
        assert!(e.contains("no `<!-- end generated -->`"), "{e}");
    }

    #[test]
    fn inline_quotes_are_rewritten_from_the_results_and_refuse_ambiguity() {
        let mut t = ResultsTable::default();
        t.push(
            ResultRow::new("cora", "ICA-NB", "accuracy", 0.852_74)
                .paper(Some(0.8478))
                .with("protocol", "RS"),
        );
        t.push(ResultRow::new("cora", "ICA-NB", "accuracy", 0.83).with("protocol", "SS"));
        let mut tables = BTreeMap::new();
        tables.insert("cc".to_owned(), t);
        let inp = Inputs { tables: &tables };
        let q = |spec: &str, old: &str| format!("a {QUOTE_START}{spec} -->{old}{QUOTE_END} b\n");
        // A stale number is rewritten; the comment stays.
        let line = q("cc|cora|ICA-NB|accuracy|protocol=RS", "0.1");
        assert_eq!(
            fill_quotes(&line, &inp).expect("fills"),
            q("cc|cora|ICA-NB|accuracy|protocol=RS", "0.8527")
        );
        let line = q("cc|cora|ICA-NB|accuracy|protocol=RS|paper|.2", "");
        assert!(
            fill_quotes(&line, &inp)
                .expect("fills")
                .contains("-->0.85<!--")
        );
        let line = q("cc|cora|ICA-NB|accuracy|protocol=SS|x100|.1", "");
        assert!(
            fill_quotes(&line, &inp)
                .expect("fills")
                .contains("-->83.0<!--")
        );
        // Two rows match, none matches, no paper value, unknown part, unclosed.
        for (spec, why) in [
            ("cc|cora|ICA-NB|accuracy", "2 rows"),
            ("cc|cora|GS|accuracy", "no row"),
            (
                "cc|cora|ICA-NB|accuracy|protocol=SS|paper",
                "no paper value",
            ),
            ("cc|cora|ICA-NB|accuracy|protocol=RS|bold", "unknown part"),
            ("zz|cora|ICA-NB|accuracy", "no docs/results/zz"),
        ] {
            let e = fill_quotes(&q(spec, "1"), &inp)
                .expect_err(spec)
                .to_string();
            assert!(e.contains(why), "{spec}: {e}");
        }
        let open = format!("x {QUOTE_START}cc|cora|ICA-NB|accuracy|protocol=RS -->1 y");
        assert!(fill_quotes(&open, &inp).is_err());
    }
}
