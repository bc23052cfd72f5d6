//! `srl-dist`: distributed loopy BP on a UAI model, a LINQS or CSV graph, or a seeded
//! Barabási–Albert model, with timely's `-w/-n/-p/-h` arguments; `partition` writes model
//! shards (BP, Gibbs) from a UAI file or graph shards (ICA, run from Rust) from a graph.
//! Guide: docs/srl-dist.md.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_dist::{
    DistBp, DistError, DistMarginals, Partition, Strategy, barabasi_albert_mrf, partition_graph,
    partition_uai, read_shards, shard_file,
};
use srl_graph::{CsvOptions, LinqsOptions, RelationalGraph, load_csv, load_linqs};
use srl_infer::{BpMode, PairTable, PairwiseMrf, read_uai_evidence};

const USAGE: &str = "\
usage: srl-dist partition MODEL.uai --parts P --out DIR [--evidence FILE]
                [--partitioner range|hash|ldg|fennel] [--force]
       srl-dist partition (--linqs DIR NAME | --nodes CSV --edges CSV) --parts P --out DIR
                [--observe FRACTION] [--seed S] [--partitioner ...] [--force]
       srl-dist [run] [timely: -w THREADS -n PROCESSES -p INDEX -h HOSTFILE]
                (--shards DIR | --uai FILE [--evidence FILE] | --linqs DIR NAME
                 | --nodes CSV --edges CSV | --ba N [--k K])
                [--coupling C] [--observe FRACTION] [--seed S]
                [--mode sum|max] [--damping D] [--tol T] [--max-iters N]
                [--partition range|hash] [--out FILE [--force]]

Every process runs the same command except -p. Graphs get a Potts model: zero unary
potentials, log-coupling C (default 0.5) on equal labels, and a seeded FRACTION (default
0.5) of the known labels clamped as evidence. `partition` streams a UAI model into one
shard file per part (DIR/part-NNNNN.shard); `--shards DIR` runs them, P = PROCESSES x
THREADS, each process reading only the shards of its workers. --out writes this
process's marginals (`node p_0 p_1 ...`, shortest round-trip decimals; atomically, never
over an input, over an existing file only with --force); a summary line goes to stdout.
`partition` of a graph writes graph shards for sharded ICA (features, the seeded
FRACTION of the known labels kept as observed, neighbour lists, halo); ICA runs them
from Rust (srl_dist::DistIca::run_shards with a fitted classifier), not from this binary.";

struct Args {
    timely: Vec<String>,
    uai: Option<PathBuf>,
    shards: Option<PathBuf>,
    evidence: Option<PathBuf>,
    linqs: Option<(PathBuf, String)>,
    csv: (Option<PathBuf>, Option<PathBuf>),
    ba: Option<usize>,
    k: usize,
    coupling: f64,
    observe: f64,
    seed: u64,
    bp: DistBp,
    out: Option<PathBuf>,
    force: bool,
}

fn value<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, DistError> {
    let v = v.ok_or_else(|| DistError::Argument(format!("{flag} needs a value")))?;
    v.parse()
        .map_err(|_| DistError::Argument(format!("{flag}: cannot parse {v:?}")))
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, DistError> {
    let mut a = Args {
        timely: vec!["srl-dist".into()],
        uai: None,
        shards: None,
        evidence: None,
        linqs: None,
        csv: (None, None),
        ba: None,
        k: 2,
        coupling: 0.5,
        observe: 0.5,
        seed: 0,
        bp: DistBp::default(),
        out: None,
        force: false,
    };
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "-w" | "--threads" | "-n" | "--processes" | "-p" | "--process" | "-h"
            | "--hostfile" => {
                let v: String = value(&flag, it.next())?;
                a.timely.extend([flag, v]);
            }
            "-r" | "--report" | "-z" | "--zerocopy" => a.timely.push(flag),
            "run" if a.timely.len() == 1 => {}
            "--uai" => a.uai = Some(value(&flag, it.next())?),
            "--shards" => a.shards = Some(value(&flag, it.next())?),
            "--evidence" => a.evidence = Some(value(&flag, it.next())?),
            "--linqs" => {
                let dir = value(&flag, it.next())?;
                a.linqs = Some((dir, value(&flag, it.next())?));
            }
            "--nodes" => a.csv.0 = Some(value(&flag, it.next())?),
            "--edges" => a.csv.1 = Some(value(&flag, it.next())?),
            "--ba" => a.ba = Some(value(&flag, it.next())?),
            "--k" => a.k = value(&flag, it.next())?,
            "--coupling" => a.coupling = value(&flag, it.next())?,
            "--observe" => a.observe = value(&flag, it.next())?,
            "--seed" => a.seed = value(&flag, it.next())?,
            "--damping" => a.bp.damping = value(&flag, it.next())?,
            "--tol" => a.bp.tol = value(&flag, it.next())?,
            "--max-iters" => a.bp.max_iters = value(&flag, it.next())?,
            "--mode" => {
                a.bp.mode = match value::<String>(&flag, it.next())?.as_str() {
                    "sum" => BpMode::SumProduct,
                    "max" => BpMode::MaxProduct,
                    m => return Err(DistError::Argument(format!("--mode: {m:?} is not sum|max"))),
                }
            }
            "--partition" => {
                a.bp.partition = match value::<String>(&flag, it.next())?.as_str() {
                    "range" => Partition::Range,
                    "hash" => Partition::Hash,
                    m => {
                        return Err(DistError::Argument(format!(
                            "--partition: {m:?} is not range|hash"
                        )));
                    }
                }
            }
            "--out" => a.out = Some(value(&flag, it.next())?),
            "--force" => a.force = true,
            "--help" => return Err(DistError::Argument(USAGE.into())),
            other => {
                return Err(DistError::Argument(format!(
                    "unknown argument {other:?}\n{USAGE}"
                )));
            }
        }
    }
    Ok(a)
}

/// The known labels of `g`, each kept with probability `observe` (seeded by `seed`), the
/// others `None`: a graph run's evidence, or a graph shard's observed labels.
fn kept_labels(g: &RelationalGraph, observe: f64, seed: u64) -> Vec<Option<u32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    g.labels()
        .iter()
        .map(|&l| l.filter(|_| rng.random_range(0.0..1.0) < observe))
        .collect()
}

/// A Potts model on a graph: `num_labels` states, zero unary, `coupling` on equal labels,
/// a seeded `observe` fraction of the known labels clamped.
fn graph_model(g: &RelationalGraph, a: &Args) -> Result<PairwiseMrf, DistError> {
    let k = g.num_labels().max(1);
    let evidence = kept_labels(g, a.observe, a.seed);
    Ok(PairwiseMrf::from_graph(
        g,
        k,
        vec![0.0; g.num_nodes() * k],
        Vec::new(),
        vec![PairTable::potts(k, a.coupling, 0.0)],
        evidence,
    )?)
}

fn model(a: &Args) -> Result<PairwiseMrf, DistError> {
    if let Some(path) = &a.uai {
        let mrf = PairwiseMrf::read_uai(path)?;
        return match &a.evidence {
            Some(ev) => Ok(mrf.with_evidence(read_uai_evidence(ev, mrf.num_nodes())?)?),
            None => Ok(mrf),
        };
    }
    if let Some((dir, name)) = &a.linqs {
        let (g, _) = load_linqs(dir, name, &LinqsOptions::default())?;
        return graph_model(&g, a);
    }
    if let (Some(nodes), Some(edges)) = &a.csv {
        let g = load_csv(nodes, edges, &CsvOptions::default())?;
        return graph_model(&g.graph, a);
    }
    if let Some(n) = a.ba {
        let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
        return Ok(barabasi_albert_mrf(n, a.k, a.coupling, &mut rng)?);
    }
    Err(DistError::Argument(format!("no model given\n{USAGE}")))
}

/// The files a run reads (an output must not be one of them).
fn inputs(a: &Args) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [&a.uai, &a.evidence, &a.csv.0, &a.csv.1]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if let Some(dir) = &a.shards {
        v.extend(this_process(a).unwrap_or(0..0).map(|p| shard_file(dir, p)));
    }
    if let Some((dir, _)) = &a.linqs
        && let Ok(rd) = std::fs::read_dir(dir)
    {
        v.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_file()));
    }
    v
}

fn write_out(path: &std::path::Path, force: bool, m: &DistMarginals) -> Result<(), DistError> {
    srl_io::write_atomic(path, force, |f| -> Result<(), DistError> {
        let io = |source| DistError::Io {
            file: path.to_path_buf(),
            source,
        };
        for &v in m.nodes() {
            write!(f, "{v}").map_err(io)?;
            for p in m.node(v as usize).unwrap_or(&[]) {
                write!(f, " {p:?}").map_err(io)?;
            }
            writeln!(f).map_err(io)?;
        }
        Ok(())
    })
}

/// The workers of this process in the cluster: `p·w .. (p+1)·w` from timely's `-w`, `-p`.
fn this_process(a: &Args) -> Result<std::ops::Range<usize>, DistError> {
    let (mut w, mut p) = (1usize, 0usize);
    for pair in a.timely[1..].windows(2) {
        match pair[0].as_str() {
            "-w" | "--threads" => w = value(&pair[0], Some(pair[1].clone()))?,
            "-p" | "--process" => p = value(&pair[0], Some(pair[1].clone()))?,
            _ => {}
        }
    }
    let start = p
        .checked_mul(w)
        .ok_or_else(|| DistError::Argument("-p x -w overflows".into()))?;
    Ok(start..start + w)
}

/// `srl-dist partition (MODEL | --linqs DIR NAME | --nodes CSV --edges CSV) --parts P
/// --out DIR [...]`: model shards from a UAI file, graph shards (for ICA) from a graph.
fn partition(mut it: impl Iterator<Item = String>) -> Result<(), DistError> {
    let (mut model, mut evidence, mut parts, mut out) = (None, None, None, None);
    let (mut linqs, mut nodes, mut edges): (
        Option<(PathBuf, String)>,
        Option<PathBuf>,
        Option<PathBuf>,
    ) = (None, None, None);
    let (mut observe, mut seed, mut labels_flag) = (0.5f64, 0u64, false);
    let (mut strategy, mut force) = (Strategy::Ldg, false);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--parts" => parts = Some(value::<usize>(&flag, it.next())?),
            "--out" => out = Some(value::<PathBuf>(&flag, it.next())?),
            "--evidence" => evidence = Some(value::<PathBuf>(&flag, it.next())?),
            "--linqs" => {
                let dir = value(&flag, it.next())?;
                linqs = Some((dir, value(&flag, it.next())?));
            }
            "--nodes" => nodes = Some(value::<PathBuf>(&flag, it.next())?),
            "--edges" => edges = Some(value::<PathBuf>(&flag, it.next())?),
            "--observe" => {
                observe = value(&flag, it.next())?;
                labels_flag = true;
            }
            "--seed" => {
                seed = value(&flag, it.next())?;
                labels_flag = true;
            }
            "--partitioner" => strategy = Strategy::from_name(&value::<String>(&flag, it.next())?)?,
            "--force" => force = true,
            f if !f.starts_with('-') && model.is_none() => model = Some(PathBuf::from(f)),
            other => {
                return Err(DistError::Argument(format!(
                    "unknown argument {other:?}\n{USAGE}"
                )));
            }
        }
    }
    let (Some(parts), Some(out)) = (parts, out) else {
        return Err(DistError::Argument(format!(
            "partition needs --parts and --out\n{USAGE}"
        )));
    };
    let graph_given = linqs.is_some() || nodes.is_some() || edges.is_some();
    let r = match (model, graph_given) {
        (Some(_), false) if labels_flag => {
            return Err(DistError::Argument(
                "--observe and --seed are for graphs; a UAI model's evidence comes from --evidence"
                    .into(),
            ));
        }
        (Some(model), false) => {
            partition_uai(&model, evidence.as_deref(), parts, strategy, &out, force)?
        }
        (None, true) => {
            if evidence.is_some() {
                return Err(DistError::Argument(
                    "--evidence is for UAI models; a graph's observed labels come from --observe"
                        .into(),
                ));
            }
            if !(0.0..=1.0).contains(&observe) {
                return Err(DistError::Argument(format!(
                    "--observe {observe}: need a fraction in [0, 1]"
                )));
            }
            let (g, inputs) = match (linqs, nodes, edges) {
                (Some((dir, name)), None, None) => {
                    let (g, _) = load_linqs(&dir, &name, &LinqsOptions::default())?;
                    let files = std::fs::read_dir(&dir)
                        .map(|rd| {
                            rd.flatten()
                                .map(|e| e.path())
                                .filter(|p| p.is_file())
                                .collect()
                        })
                        .unwrap_or_default();
                    (g, files)
                }
                (None, Some(nodes), Some(edges)) => {
                    let g = load_csv(&nodes, &edges, &CsvOptions::default())?.graph;
                    (g, vec![nodes, edges])
                }
                _ => {
                    return Err(DistError::Argument(format!(
                        "partition takes one graph: --linqs DIR NAME or --nodes CSV --edges CSV\n{USAGE}"
                    )));
                }
            };
            let g = g.with_labels(kept_labels(&g, observe, seed))?;
            let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
            partition_graph(&g, parts, strategy, &out, force, &inputs)?
        }
        _ => {
            return Err(DistError::Argument(format!(
                "partition needs one input: a UAI MODEL or a graph (--linqs or --nodes/--edges)\n{USAGE}"
            )));
        }
    };
    let mut o = std::io::stdout().lock();
    let _ = writeln!(
        o,
        "partitioner={:?} parts={parts} nodes={} edges={} cut_edges={} ({:.2}%) colours={} part_nodes={:?}",
        r.strategy,
        r.num_nodes,
        r.num_edges,
        r.cut_edges,
        100.0 * r.cut_edges as f64 / r.num_edges.max(1) as f64,
        r.num_colours,
        r.part_nodes
    );
    Ok(())
}

fn run() -> Result<(), DistError> {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("partition") {
        args.next();
        return partition(args);
    }
    let mut a = parse(args)?;
    a.bp.progress = std::io::stderr().is_terminal();
    if let Some(out) = &a.out {
        let inputs = inputs(&a);
        let inputs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
        srl_io::check_outputs(&inputs, &[out.as_path()], a.force)?;
    }
    let config =
        timely::Config::from_args(a.timely.clone().into_iter()).map_err(DistError::Timely)?;
    let (m, nodes, edges) = if let Some(dir) = &a.shards {
        let shards = read_shards(dir, this_process(&a)?)?;
        let (n, e) = shards
            .first()
            .map_or((0, 0), |s| (s.num_nodes, s.num_edges));
        (a.bp.run_shards(shards, config)?, n, e)
    } else {
        let mrf = Arc::new(model(&a)?);
        let (n, e) = (mrf.num_nodes() as u64, mrf.num_edges() as u64);
        (a.bp.run(mrf, config)?, n, e)
    };
    if let Some(out) = &a.out {
        write_out(out, a.force, &m)?;
    }
    let c = m.convergence();
    let s = m.stats();
    let msgs: u64 = s.iter().map(|w| w.messages_per_iter).sum();
    let secs = s.iter().map(|w| w.seconds).fold(0.0, f64::max);
    let bytes: u64 = s.iter().map(|w| w.bytes_sent_per_iter).sum();
    let rate = (msgs * c.iterations as u64) as f64 / secs.max(1e-12);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "nodes_here={} nodes={nodes} edges={edges} workers_here={} iterations={} converged={} max_residual={:e} \
         seconds={secs:.3} messages_per_s={rate:.4e} bytes_sent_per_iter={bytes}",
        m.nodes().len(),
        s.len(),
        c.iterations,
        c.converged,
        c.max_residual,
    );
    for (w, st) in m.workers().iter().zip(s) {
        let _ = writeln!(
            out,
            "worker={w} nodes={} compute_seconds={:.3} iteration_seconds={:.3} bytes_sent={}",
            st.nodes, st.compute_seconds, st.seconds, st.bytes_sent
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    // an interrupt removes a half-written --out file before the process exits
    srl_io::install_interrupt_cleanup();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The error, then each cause once (error messages do not embed their source).
            let mut msg = e.to_string();
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                msg.push_str(&format!(": {c}"));
                cause = c.source();
            }
            let _ = writeln!(std::io::stderr(), "srl-dist: {msg}");
            ExitCode::FAILURE
        }
    }
}
