//! `datasets`: one row per (dataset, statistic) for every loadable graph dataset (issue 2,
//! item 5): Cora and Citeseer (LINQS), the Intel-lab sensor data (mote graph and snapshot
//! graphs of Sen & Getoor 2006), and one Sen & Getoor synthetic graph, which needs no data.

use anyhow::Context as _;
use srl_eval::ResultRow;
use srl_graph::{
    IntelParams, LinqsOptions, RelationalGraph, SenGetoorParams, load_intel, load_linqs,
};

use crate::context::{Context, Report};
use crate::experiments::Experiment;

/// The experiment's registry entry.
pub fn experiment() -> Experiment {
    Experiment {
        name: "datasets",
        about: "Statistics of every loadable graph dataset (Cora, Citeseer, Intel lab, synthetic)",
        run,
    }
}

/// Paper values of one dataset: `(metric, value)`.
type Paper = &'static [(&'static str, f64)];

/// Sen et al. 2008 (Cora, Citeseer) and Sen & Getoor 2006 (Intel lab: 54 motes, 122 edges).
const CORA: Paper = &[("nodes", 2708.0), ("labels", 7.0), ("features", 1433.0)];
const CITESEER: Paper = &[("nodes", 3312.0), ("labels", 6.0), ("features", 3703.0)];
const INTEL: Paper = &[("nodes", 54.0), ("edges", 122.0), ("labels", 3.0)];

fn paper(p: Paper, metric: &str) -> Option<f64> {
    p.iter().find(|(m, _)| *m == metric).map(|&(_, v)| v)
}

/// The seven statistics of the row spec.
fn graph_rows(dataset: &str, g: &RelationalGraph, p: Paper) -> Vec<ResultRow> {
    let stats = [
        ("nodes", g.num_nodes() as f64),
        ("edges", g.num_edges() as f64),
        ("labels", g.num_labels() as f64),
        ("features", g.num_features() as f64),
        ("homophily", g.homophily().unwrap_or(f64::NAN)),
        ("isolated_nodes", g.isolated_nodes() as f64),
        ("components", g.connected_components().1 as f64),
    ];
    stats
        .into_iter()
        .map(|(m, v)| ResultRow::new(dataset, "-", m, v).paper(paper(p, m)))
        .collect()
}

fn run(ctx: &Context) -> anyhow::Result<Report> {
    let mut table = ctx.table();
    table.notes.push(
        "edges are undirected: self-loops, dangling links and repeated pairs (either \
         direction) dropped; homophily = share of edges whose two ends have the same label; \
         components counts isolated nodes as components."
            .into(),
    );
    for (name, p) in [("cora", CORA), ("citeseer", CITESEER)] {
        let dir = match ctx.require(name) {
            Ok(d) => d,
            Err(msg) => {
                table.skipped.push(msg);
                continue;
            }
        };
        ctx.log(&format!("loading {}", dir.display()));
        let (g, r) = load_linqs(&dir, name, &LinqsOptions::default())
            .with_context(|| format!("loading {name}"))?;
        table.rows.extend(graph_rows(name, &g, p));
        table.notes.push(format!(
            "{name}: {} link lines in {} ({} self-loops, {} lines naming {} ids missing from \
             .content dropped, {} repeated/reciprocal pairs merged) -> {} undirected edges; \
             the papers' link counts (Cora 5429, Citeseer 4732) are the raw lines.",
            r.cite_lines,
            r.cites_path.display(),
            r.self_loops,
            r.dangling_lines,
            r.dangling_ids.len(),
            r.merged_duplicates,
            r.edges
        ));
    }

    match ctx.require("intel_lab") {
        Err(msg) => table.skipped.push(msg),
        Ok(dir) => {
            ctx.log(&format!("loading {}", dir.display()));
            let params = IntelParams::default();
            let d = load_intel(&dir, &params).context("loading intel_lab")?;
            let k = d.light.num_bins();
            let mut rows = graph_rows("intel_lab", &d.mote_graph, INTEL);
            // The mote graph carries no labels or attributes; those live in the snapshots.
            let (mut same, mut total) = (0usize, 0usize);
            let mut label_counts = vec![0usize; k];
            let mut nodes = 0usize;
            let mut edges = 0usize;
            for s in &d.snapshots {
                let g = &s.graph;
                nodes += g.num_nodes();
                edges += g.num_edges();
                for l in g.labels().iter().flatten() {
                    label_counts[*l as usize] += 1;
                }
                for &(u, v) in g.edge_list() {
                    total += 1;
                    same += usize::from(g.label(u) == g.label(v));
                }
            }
            let features = d
                .snapshots
                .first()
                .map_or(3 * k, |s| s.graph.num_features());
            for row in &mut rows {
                match row.metric.as_str() {
                    "labels" => row.value = k as f64,
                    "features" => row.value = features as f64,
                    "homophily" => {
                        row.value = if total > 0 {
                            same as f64 / total as f64
                        } else {
                            f64::NAN
                        }
                    }
                    _ => {}
                }
            }
            table.rows.extend(rows);
            let n = d.snapshots.len().max(1) as f64;
            table.rows.push(ResultRow::new(
                "intel_lab",
                "-",
                "snapshots",
                d.snapshots.len() as f64,
            ));
            table.rows.push(ResultRow::new(
                "intel_lab",
                "-",
                "snapshot_mean_nodes",
                nodes as f64 / n,
            ));
            table.rows.push(ResultRow::new(
                "intel_lab",
                "-",
                "snapshot_mean_edges",
                edges as f64 / n,
            ));
            let r = &d.report;
            table.notes.push(format!(
                "intel_lab: nodes/edges/isolated_nodes/components are the mote graph: the {} \
                 motes with a complete reading in the shipped 5-day subset ({} motes have \
                 readings; motes 5 and 15 have none, motes {:?} never a complete one; the \
                 paper's 54 counts every mote), linked when <= {} m apart (mote_locs.txt \
                 gives 61 such pairs over all 54 motes; the paper reports 122). labels = \
                 light levels, features = one-hot bins of temperature, humidity and voltage, \
                 homophily pooled over the snapshot graphs' edges.",
                r.motes_with_readings, r.motes_in_file, r.motes_never_complete, params.radius_m
            ));
            table.notes.push(format!(
                "intel_lab snapshots: {} readings, {} with a missing value dropped; windows of \
                 {} epochs, first complete reading per mote, kept with >= {} motes: {} of {} \
                 windows. Equal-frequency cut points: temperature {:?} C, humidity {:?} %, \
                 voltage {:?} V, light {:?} lux; light label counts over snapshot nodes \
                 (low, medium, high) = {:?}.",
                r.readings,
                r.incomplete,
                params.window_epochs,
                params.min_motes,
                r.snapshots,
                r.windows,
                d.temperature.cuts(),
                d.humidity.cuts(),
                d.voltage.cuts(),
                d.light.cuts(),
                label_counts
            ));
        }
    }

    let params = SenGetoorParams::default();
    let s = params
        .generate(&mut ctx.rng(0))
        .context("generating the synthetic graph")?;
    table.rows.extend(
        graph_rows("synthetic", &s.graph, &[])
            .into_iter()
            .map(|r| r.with("rho", params.rho).with("alpha", params.alpha)),
    );
    table.notes.push(format!(
        "synthetic: Sen & Getoor 2006 Algorithms 1-2, numNodes = {}, rho = {}, alpha = {}, \
         {} binary attributes, seed stream 0: {} connectNode calls, {} repeated pairs merged \
         (the paper expects about numNodes / (1 - alpha) = {:.0} links).",
        params.num_nodes,
        params.rho,
        params.alpha,
        params.attribute_probs.len(),
        s.report.connect_calls,
        s.report.duplicates,
        params.num_nodes as f64 / (1.0 - params.alpha)
    ));
    Ok(Report::new(table))
}
