//! Synchronous iterative classification (ICA) as a timely dataflow: a local classifier
//! trained once and shared by every worker, boundary labels exchanged once per iteration;
//! every worker reads the whole graph ([`DistIca::run`]) or only its graph shard
//! ([`DistIca::run_shards`], shards from [`crate::partition_graph`]), with the same labels.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use srl_graph::{NodeId, RelationalGraph};
use srl_infer::{
    Aggregator, Convergence, FeatureRow, LocalClassifier, aggregate_labels, aggregate_neighbors,
};
use timely::worker::Worker;

use crate::bp::{ShardSlots, join_workers, no_shard, threads_config};
use crate::error::DistError;
use crate::graph_shard::GraphShard;
use crate::halo::{Halo, Routed};
use crate::partition::{Partition, Partitioner};
use crate::shard::{NONE, fnv};

/// Labels that changed at boundary variables, and the sender's number of changes.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct LabelPacket {
    to: u32,
    round: u64,
    changed: u64,
    ids: Vec<u32>,
    labels: Vec<u32>,
}

impl Routed for LabelPacket {
    fn to(&self) -> u32 {
        self.to
    }
    fn round(&self) -> u64 {
        self.round
    }
}

/// Distributed ICA with a *synchronous* (Jacobi) schedule: every unknown node is
/// reclassified from its neighbours' labels of the previous iteration (Sen et al. 2008,
/// Algorithm 1, with all nodes updated from the same snapshot). The relational classifier
/// is trained once (e.g. by [`srl_infer::fit_relational_classifier`]) and shared by every
/// worker; the bootstrap is srl-infer's `Bootstrap::KnownNeighbours` (aggregates of the
/// observed labels only).
///
/// srl-infer's [`srl_infer::IterativeClassification`] updates in place in a (random or
/// fixed) node order, an inherently sequential schedule; this one does not depend on an
/// order, so its labels are the same for any number of workers and processes (tested
/// against a single-process Jacobi ICA and across 1, 2 and 4 workers).
///
/// Per iteration each worker sends, to every worker owning a neighbour, the labels that
/// changed at its boundary nodes (id and label, 8 bytes each) and its count of changes; the
/// counts sum to the global number of changes, and the run stops when it is 0 or after
/// `max_iters` iterations. `max_residual` is the fraction of unknown nodes that changed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DistIca {
    /// Iteration cap.
    pub max_iters: usize,
    /// Neighbour-label aggregate (the one the classifier was trained with).
    pub aggregator: Aggregator,
    /// How nodes are assigned to workers.
    pub partition: Partition,
}

impl Default for DistIca {
    fn default() -> Self {
        Self {
            max_iters: 100,
            aggregator: Aggregator::Count,
            partition: Partition::Range,
        }
    }
}

/// One worker's labels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IcaOutput {
    /// Worker index.
    pub worker: usize,
    /// Owned nodes, ascending.
    pub nodes: Vec<u32>,
    /// Final label of each owned node (observed nodes keep theirs).
    pub labels: Vec<u32>,
    /// Class probabilities, `k` per owned node (one-hot for observed nodes).
    pub probabilities: Vec<f64>,
    /// Iterations and the last fraction of changed labels (global).
    pub convergence: Convergence,
}

/// ICA labels of this process's workers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistLabels {
    nodes: Vec<u32>,
    labels: Vec<u32>,
    probabilities: Vec<f64>,
    num_classes: usize,
    convergence: Convergence,
}

impl DistLabels {
    fn from_outputs(outputs: Vec<IcaOutput>, k: usize) -> Self {
        let convergence = outputs.first().map_or(
            Convergence {
                converged: true,
                iterations: 0,
                max_residual: 0.0,
            },
            |o| o.convergence,
        );
        let mut rows: Vec<(u32, u32, &[f64])> = Vec::new();
        for o in &outputs {
            for (i, (&v, &l)) in o.nodes.iter().zip(&o.labels).enumerate() {
                rows.push((v, l, &o.probabilities[i * k..(i + 1) * k]));
            }
        }
        rows.sort_by_key(|r| r.0);
        let (mut nodes, mut labels, mut probabilities) = (Vec::new(), Vec::new(), Vec::new());
        for (v, l, p) in rows {
            nodes.push(v);
            labels.push(l);
            probabilities.extend_from_slice(p);
        }
        Self {
            nodes,
            labels,
            probabilities,
            num_classes: k,
            convergence,
        }
    }

    /// Nodes held, ascending.
    #[must_use]
    pub fn nodes(&self) -> &[u32] {
        &self.nodes
    }

    /// Label of node `v`, or `None` if another process holds it.
    #[must_use]
    pub fn label(&self, v: usize) -> Option<u32> {
        let i = self.nodes.binary_search(&u32::try_from(v).ok()?).ok()?;
        Some(self.labels[i])
    }

    /// Class probabilities of node `v`, or `None` if another process holds it.
    #[must_use]
    pub fn proba(&self, v: usize) -> Option<&[f64]> {
        let i = self.nodes.binary_search(&u32::try_from(v).ok()?).ok()?;
        let k = self.num_classes;
        Some(&self.probabilities[i * k..(i + 1) * k])
    }

    /// Iterations and the last fraction of changed labels.
    #[must_use]
    pub fn convergence(&self) -> Convergence {
        self.convergence
    }
}

/// ICA's supersteps (synchronous: every unknown node predicted from the previous labels,
/// then the changes exchanged) until no label changes anywhere or `max_iters`: `step(r)`
/// runs superstep `r` (`first_round + 1, first_round + 2, ...`) and returns the cluster's
/// number of changed labels; the residual is that number over `total_unknown`.
fn supersteps(
    max_iters: usize,
    total_unknown: u64,
    first_round: u64,
    mut step: impl FnMut(u64) -> u64,
) -> Convergence {
    let mut conv = Convergence {
        converged: total_unknown == 0,
        iterations: 0,
        max_residual: 0.0,
    };
    let mut round = first_round;
    while !conv.converged && conv.iterations < max_iters {
        round += 1;
        let changed = step(round);
        conv.iterations += 1;
        conv.max_residual = changed as f64 / total_unknown as f64;
        conv.converged = changed == 0;
    }
    conv
}

/// Sends every peer but `me` the changed labels addressed to it (`out[peer]`: global node
/// ids and their new labels) with this worker's count of changes in `round`.
fn send_label_changes(
    halo: &mut Halo<LabelPacket>,
    me: usize,
    round: u64,
    changed: u64,
    out: Vec<(Vec<u32>, Vec<u32>)>,
) {
    for (w, (ids, ls)) in out.into_iter().enumerate() {
        if w != me {
            halo.send(LabelPacket {
                to: w as u32,
                round,
                changed,
                ids,
                labels: ls,
            });
        }
    }
}

/// Index of the largest value (first on ties).
fn argmax(x: &[f64]) -> usize {
    let mut best = 0;
    for (i, &v) in x.iter().enumerate() {
        if v > x[best] {
            best = i;
        }
    }
    best
}

impl DistIca {
    /// Runs this worker's part inside a timely execution; every worker passes the same
    /// graph (labels of the unknown nodes `None`), configuration and fitted classifier.
    pub fn run_worker<C: LocalClassifier>(
        &self,
        worker: &mut Worker,
        graph: &RelationalGraph,
        classifier: &C,
    ) -> IcaOutput {
        self.run_worker_with(worker, graph, classifier, &self.partition)
    }

    /// [`DistIca::run_worker`] with a custom [`Partitioner`].
    pub fn run_worker_with<C: LocalClassifier>(
        &self,
        worker: &mut Worker,
        graph: &RelationalGraph,
        classifier: &C,
        partitioner: &dyn Partitioner,
    ) -> IcaOutput {
        let (me, peers) = (worker.index(), worker.peers());
        let n = graph.num_nodes();
        let k = graph.num_labels().max(1);
        let nf = graph.num_features();
        let observed = graph.labels();
        let nodes: Vec<u32> = (0..n)
            .filter(|&v| partitioner.owner(v, n, peers) == me)
            .map(|v| v as u32)
            .collect();
        let unknown: Vec<usize> = nodes
            .iter()
            .map(|&v| v as usize)
            .filter(|&v| observed[v].is_none())
            .collect();
        let total_unknown = observed.iter().filter(|l| l.is_none()).count();
        // Per unknown node (index into `unknown`): the other workers owning a neighbour.
        let mut targets: Vec<Vec<u32>> = Vec::with_capacity(unknown.len());
        for &v in &unknown {
            let mut ws: Vec<u32> = graph
                .neighbors(NodeId::new(v))
                .iter()
                .map(|u| partitioner.owner(u.index(), n, peers) as u32)
                .filter(|&w| w as usize != me)
                .collect();
            ws.sort_unstable();
            ws.dedup();
            targets.push(ws);
        }
        let mut halo: Halo<LabelPacket> = Halo::new(worker);
        let mut labels: Vec<Option<u32>> = observed.to_vec();
        let mut probs = vec![0.0; unknown.len() * k];
        let mut buf = vec![0.0; k];
        let predict = |v: usize, labels: &[Option<u32>], buf: &mut [f64], out: &mut [f64]| {
            aggregate_neighbors(self.aggregator, graph, v, labels, buf);
            let row = FeatureRow {
                attributes: graph.attributes_of(NodeId::new(v)),
                num_attributes: nf,
                relational: buf,
            };
            classifier.predict_proba(&row, out);
            argmax(out) as u32
        };
        // Bootstrap from the observed labels, then one exchange of the boundary labels.
        let mut next: Vec<u32> = unknown
            .iter()
            .enumerate()
            .map(|(i, &v)| predict(v, observed, &mut buf, &mut probs[i * k..(i + 1) * k]))
            .collect();
        let round = 0u64;
        let exchange = |halo: &mut Halo<LabelPacket>,
                        worker: &mut Worker,
                        labels: &mut Vec<Option<u32>>,
                        next: &[u32],
                        round: u64|
         -> u64 {
            let mut out: Vec<(Vec<u32>, Vec<u32>)> = vec![(Vec::new(), Vec::new()); peers];
            let mut changed = 0u64;
            for (i, &v) in unknown.iter().enumerate() {
                if labels[v] != Some(next[i]) {
                    changed += 1;
                    labels[v] = Some(next[i]);
                    for &w in &targets[i] {
                        out[w as usize].0.push(v as u32);
                        out[w as usize].1.push(next[i]);
                    }
                }
            }
            send_label_changes(halo, me, round, changed, out);
            let mut total = changed;
            for p in halo.deliver(worker, round) {
                total += p.changed;
                for (&u, &l) in p.ids.iter().zip(&p.labels) {
                    labels[u as usize] = Some(l);
                }
            }
            total
        };
        exchange(&mut halo, worker, &mut labels, &next, round);
        let conv = supersteps(self.max_iters, total_unknown as u64, round, |round| {
            for (i, &v) in unknown.iter().enumerate() {
                next[i] = predict(v, &labels, &mut buf, &mut probs[i * k..(i + 1) * k]);
            }
            exchange(&mut halo, worker, &mut labels, &next, round)
        });
        let mut probabilities = vec![0.0; nodes.len() * k];
        let mut j = 0;
        for (i, &v) in nodes.iter().enumerate() {
            let row = &mut probabilities[i * k..(i + 1) * k];
            match observed[v as usize] {
                Some(c) => row[c as usize] = 1.0,
                None => {
                    row.copy_from_slice(&probs[j * k..(j + 1) * k]);
                    j += 1;
                }
            }
        }
        IcaOutput {
            worker: me,
            labels: nodes
                .iter()
                .map(|&v| labels[v as usize].unwrap_or(0))
                .collect(),
            nodes,
            probabilities,
            convergence: conv,
        }
    }

    /// Runs on the timely execution `config` with the fitted `classifier` shared by all
    /// workers of this process (trained once; every process must pass the same one).
    ///
    /// # Errors
    /// [`DistError::Timely`] if timely fails.
    pub fn run<C>(
        &self,
        graph: Arc<RelationalGraph>,
        classifier: Arc<C>,
        config: timely::Config,
    ) -> Result<DistLabels, DistError>
    where
        C: LocalClassifier + Send + Sync + 'static,
    {
        let k = graph.num_labels().max(1);
        let cfg = *self;
        let guards = timely::execute(config, move |worker| {
            cfg.run_worker(worker, &graph, classifier.as_ref())
        })
        .map_err(DistError::Timely)?;
        let outputs = guards
            .join()
            .into_iter()
            .collect::<Result<Vec<_>, String>>()
            .map_err(DistError::Timely)?;
        Ok(DistLabels::from_outputs(outputs, k))
    }

    /// [`DistIca::run`] on `workers` threads of this process.
    ///
    /// # Errors
    /// As [`DistIca::run`].
    pub fn run_threads<C>(
        &self,
        graph: Arc<RelationalGraph>,
        classifier: Arc<C>,
        workers: usize,
    ) -> Result<DistLabels, DistError>
    where
        C: LocalClassifier + Send + Sync + 'static,
    {
        let config = if workers <= 1 {
            timely::Config::thread()
        } else {
            timely::Config::process(workers)
        };
        self.run(graph, classifier, config)
    }

    /// Runs this worker's graph shard inside a timely execution (worker `w` of `P` passes
    /// the shard of part `w` of `P`; every process passes the same configuration and fitted
    /// classifier). The same synchronous supersteps as [`DistIca::run_worker`], so the
    /// same labels as a whole-graph run, but the worker holds only its nodes' features,
    /// labels and neighbour lists and the halo's observed labels; per iteration it sends
    /// only the changed labels of its boundary nodes. `self.partition` is not used (the
    /// shards are the partition).
    ///
    /// Two setup rounds first check that the shards belong together: every pair of
    /// workers compares the graph's sizes and a hash of the ids of its boundary nodes
    /// (what one worker owns next to the other must be what the other's halo lists).
    ///
    /// # Errors
    /// [`DistError::Inconsistent`] (on every worker) if a shard's part or part count does
    /// not match the execution, a neighbour is neither owned nor in the halo, or the shards
    /// come from different graphs or partitions.
    pub fn run_worker_graph_shard<C: LocalClassifier>(
        &self,
        worker: &mut Worker,
        shard: &GraphShard,
        classifier: &C,
    ) -> Result<IcaOutput, DistError> {
        let (me, peers) = (worker.index(), worker.peers());
        let n = shard.nodes.len();
        let k = shard.num_labels.max(1) as usize;
        let nf = shard.num_features as usize;
        let mut problem: Option<String> = None;
        if shard.part as usize != me || shard.parts as usize != peers {
            problem = Some(format!(
                "worker {me} of {peers} was given the shard of part {} of {}",
                shard.part, shard.parts
            ));
        }
        // Neighbours as indices into the label array: owned nodes 0..n, halo n..n + H.
        let local = |u: u32| {
            shard.nodes.binary_search(&u).ok().or_else(|| {
                shard
                    .halo
                    .binary_search_by_key(&u, |h| h.0)
                    .ok()
                    .map(|i| n + i)
            })
        };
        let mut adj = Vec::with_capacity(shard.adj.len());
        for &u in &shard.adj {
            match local(u) {
                Some(i) => adj.push(i),
                None => {
                    problem.get_or_insert_with(|| {
                        format!("part {me}: neighbour {u} is neither owned nor in the halo")
                    });
                    adj.push(0);
                }
            }
        }
        let halo_owner = |i: usize| shard.halo[i - n].1 as usize;
        // Per owned node: the other parts owning a neighbour.
        let mut targets: Vec<Vec<u32>> = Vec::with_capacity(n);
        for i in 0..n {
            let mut ws: Vec<u32> = adj[shard.adj_off[i]..shard.adj_off[i + 1]]
                .iter()
                .filter(|&&j| j >= n && j < n + shard.halo.len())
                .map(|&j| halo_owner(j) as u32)
                .filter(|&w| (w as usize) < peers)
                .collect();
            ws.sort_unstable();
            ws.dedup();
            targets.push(ws);
        }
        let mut halo: Halo<LabelPacket> = Halo::new(worker);
        // Setup round 0: to each peer, a hash of the graph's sizes and of the ids of the
        // nodes owned here next to it; round 1: whether anything was wrong.
        let header = [
            shard.num_nodes,
            shard.num_edges,
            u64::from(shard.num_labels),
            u64::from(shard.num_features),
            shard.num_unknown,
            u64::from(shard.parts),
            u64::from(shard.sparse),
        ];
        let fingerprint = |ids: &mut dyn Iterator<Item = u32>| {
            let mut h = header
                .iter()
                .fold(crate::shard::FNV_OFFSET, |h, x| fnv(h, &x.to_le_bytes()));
            for id in ids {
                h = fnv(h, &id.to_le_bytes());
            }
            h
        };
        let mut boundary: Vec<Vec<u32>> = vec![Vec::new(); peers];
        for (i, ws) in targets.iter().enumerate() {
            for &w in ws {
                boundary[w as usize].push(shard.nodes[i]);
            }
        }
        for (w, ids) in boundary.iter().enumerate() {
            if w != me {
                halo.send(LabelPacket {
                    to: w as u32,
                    round: 0,
                    changed: fingerprint(&mut ids.iter().copied()),
                    ids: vec![me as u32],
                    labels: Vec::new(),
                });
            }
        }
        let mut heard = vec![false; peers];
        for p in halo.deliver(worker, 0) {
            let from = p.ids.first().map_or(usize::MAX, |&w| w as usize);
            let ok = from < peers && from != me && !heard[from] && {
                let mut ids = shard
                    .halo
                    .iter()
                    .filter(|h| h.1 as usize == from)
                    .map(|h| h.0);
                fingerprint(&mut ids) == p.changed
            };
            if ok {
                heard[from] = true;
            } else {
                problem.get_or_insert_with(|| {
                    format!(
                        "part {me}: the graph or boundary of part {from} does not match this shard's halo"
                    )
                });
            }
        }
        for w in (0..peers).filter(|&w| w != me) {
            halo.send(LabelPacket {
                to: w as u32,
                round: 1,
                changed: u64::from(problem.is_some()),
                ids: Vec::new(),
                labels: Vec::new(),
            });
        }
        let bad_peers: u64 = halo.deliver(worker, 1).iter().map(|p| p.changed).sum();
        if let Some(p) = problem {
            return Err(DistError::Inconsistent(p));
        }
        if bad_peers > 0 {
            return Err(DistError::Inconsistent(format!(
                "part {me}: {bad_peers} other worker(s) found their shards inconsistent"
            )));
        }

        let observed: Vec<Option<u32>> = shard
            .labels
            .iter()
            .copied()
            .chain(shard.halo.iter().map(|h| h.2))
            .map(|l| (l != NONE).then_some(l))
            .collect();
        let unknown: Vec<usize> = (0..n).filter(|&i| observed[i].is_none()).collect();
        let total_unknown = shard.num_unknown;
        let mut labels = observed.clone();
        let mut probs = vec![0.0; unknown.len() * k];
        let mut buf = vec![0.0; k];
        let predict = |i: usize, labels: &[Option<u32>], buf: &mut [f64], out: &mut [f64]| {
            aggregate_labels(
                self.aggregator,
                adj[shard.adj_off[i]..shard.adj_off[i + 1]].iter().copied(),
                labels,
                buf,
            );
            let row = FeatureRow {
                attributes: shard.attributes(i),
                num_attributes: nf,
                relational: buf,
            };
            classifier.predict_proba(&row, out);
            argmax(out) as u32
        };
        let mut next: Vec<u32> = unknown
            .iter()
            .enumerate()
            .map(|(j, &i)| predict(i, &observed, &mut buf, &mut probs[j * k..(j + 1) * k]))
            .collect();
        // Rounds 0 and 1 were the setup.
        let round = 2u64;
        let mut foreign = 0u64;
        let mut exchange = |halo: &mut Halo<LabelPacket>,
                            worker: &mut Worker,
                            labels: &mut Vec<Option<u32>>,
                            next: &[u32],
                            round: u64|
         -> u64 {
            let mut out: Vec<(Vec<u32>, Vec<u32>)> = vec![(Vec::new(), Vec::new()); peers];
            let mut changed = 0u64;
            for (j, &i) in unknown.iter().enumerate() {
                if labels[i] != Some(next[j]) {
                    changed += 1;
                    labels[i] = Some(next[j]);
                    for &w in &targets[i] {
                        out[w as usize].0.push(shard.nodes[i]);
                        out[w as usize].1.push(next[j]);
                    }
                }
            }
            send_label_changes(halo, me, round, changed, out);
            let mut total = changed;
            for p in halo.deliver(worker, round) {
                total += p.changed;
                for (&u, &l) in p.ids.iter().zip(&p.labels) {
                    match shard.halo.binary_search_by_key(&u, |h| h.0) {
                        Ok(h) if (l as usize) < k => labels[n + h] = Some(l),
                        _ => foreign += 1,
                    }
                }
            }
            total
        };
        exchange(&mut halo, worker, &mut labels, &next, round);
        let conv = supersteps(self.max_iters, total_unknown, round, |round| {
            for (j, &i) in unknown.iter().enumerate() {
                next[j] = predict(i, &labels, &mut buf, &mut probs[j * k..(j + 1) * k]);
            }
            exchange(&mut halo, worker, &mut labels, &next, round)
        });
        if foreign > 0 {
            return Err(DistError::Inconsistent(format!(
                "part {me}: {foreign} received label(s) for nodes outside the halo or labels of {k} or more"
            )));
        }
        let mut probabilities = vec![0.0; n * k];
        let mut j = 0;
        for i in 0..n {
            let row = &mut probabilities[i * k..(i + 1) * k];
            match observed[i] {
                Some(c) => row[c as usize] = 1.0,
                None => {
                    row.copy_from_slice(&probs[j * k..(j + 1) * k]);
                    j += 1;
                }
            }
        }
        Ok(IcaOutput {
            worker: me,
            labels: (0..n).map(|i| labels[i].unwrap_or(0)).collect(),
            nodes: shard.nodes.clone(),
            probabilities,
            convergence: conv,
        })
    }

    /// Runs from graph shards (from [`crate::partition_graph`], read with
    /// [`crate::read_graph_shards`]): this process's workers run the parts `shards` holds,
    /// worker `w` of the execution the shard whose `part` is `w` (a process with workers
    /// `a..b` of the cluster passes the shards `a..b`). Each process reads only its own
    /// shards; `classifier` is shared by this process's workers, and every process must pass
    /// the same fitted classifier (srl-dist does not serialise classifiers). Labels equal
    /// [`DistIca::run`] on the whole graph.
    ///
    /// # Errors
    /// [`DistError::Argument`] if a worker finds no shard for its index;
    /// [`DistError::Inconsistent`] as [`DistIca::run_worker_graph_shard`];
    /// [`DistError::Timely`] if timely fails.
    pub fn run_shards<C>(
        &self,
        shards: Vec<GraphShard>,
        classifier: Arc<C>,
        config: timely::Config,
    ) -> Result<DistLabels, DistError>
    where
        C: LocalClassifier + Send + Sync + 'static,
    {
        let k = shards.first().map_or(1, |s| s.num_labels.max(1) as usize);
        let cfg = *self;
        let slots = ShardSlots::new(shards);
        let guards = timely::execute(config, move |worker| {
            let me = worker.index();
            let mine = slots.take(me);
            match mine {
                Some(shard) => cfg.run_worker_graph_shard(worker, &shard, classifier.as_ref()),
                None => {
                    // Take part in the setup rounds so the others stop too.
                    let empty = GraphShard::empty(me, worker.peers());
                    cfg.run_worker_graph_shard(worker, &empty, classifier.as_ref())
                        .and(Err(no_shard(me)))
                }
            }
        });
        Ok(DistLabels::from_outputs(join_workers(guards)?, k))
    }

    /// [`DistIca::run_shards`] on `workers` threads of this process.
    ///
    /// # Errors
    /// As [`DistIca::run_shards`].
    pub fn run_shards_threads<C>(
        &self,
        shards: Vec<GraphShard>,
        classifier: Arc<C>,
        workers: usize,
    ) -> Result<DistLabels, DistError>
    where
        C: LocalClassifier + Send + Sync + 'static,
    {
        self.run_shards(shards, classifier, threads_config(workers))
    }
}
