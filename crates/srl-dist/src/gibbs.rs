//! Chromatic Gibbs sampling as a timely dataflow: one colour class per superstep.

use std::sync::Arc;

use rand::Rng;
use serde::{Deserialize, Serialize};
use srl_infer::{Convergence, PairwiseMrf};
use timely::worker::Worker;

use srl_infer::kernel::{gibbs_scores, gibbs_uniform, sample_index};

use crate::bp::{
    Part, ShardSlots, check_ordinary, join_workers, model_colours, no_shard, threads_config,
};
use crate::error::DistError;
use crate::halo::{Halo, Routed};
use crate::partition::{Partition, Partitioner};
use crate::shard::{NONE, Shard};

/// New states of boundary variables (round `sweep · colours + class`), or the final
/// split-half residual (last round).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct StatePacket {
    to: u32,
    round: u64,
    residual: f64,
    ids: Vec<u32>,
    states: Vec<u32>,
}

impl Routed for StatePacket {
    fn to(&self) -> u32 {
        self.to
    }
    fn round(&self) -> u64 {
        self.round
    }
}

/// Distributed chromatic Gibbs sampling: srl-infer's [`srl_infer::Gibbs`] (systematic
/// scan over greedy colour classes, start at the unary argmax, counts after burn-in,
/// split-half diagnostic) run by timely workers that each own a part of the variables.
///
/// Randomness is seeded per variable, never per worker: every worker draws the same `u64`
/// per sweep from its copy of the caller's generator, and variable `v` uses the uniform
/// `SplitMix64(seed ⊕ SplitMix64(v))` — srl-infer's scheme — so the samples, and hence the
/// marginals, are the same for any number of workers and processes, and equal to
/// srl-infer's for the same generator.
///
/// Each sweep is `C` supersteps (`C` colours): a worker resamples its variables of the
/// class, then sends the new states of those with neighbours elsewhere (4 + 4 bytes per
/// variable and destination) to the owners of those neighbours.
///
/// The greedy colouring is srl-infer's (`srl_infer::kernel::greedy_colours`, in node
/// order): computed once when shards are written, or on every worker from the model in a
/// whole-model run (`O(n + m)`).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistGibbs {
    /// Sweeps discarded before counting.
    pub burn_in: usize,
    /// Number of counted samples (`≥ 1`).
    pub samples: usize,
    /// Sweeps between counted samples (`≥ 1`).
    pub thinning: usize,
    /// Split-half diagnostic threshold.
    pub split_tol: f64,
    /// How variables are assigned to workers.
    pub partition: Partition,
}

impl Default for DistGibbs {
    fn default() -> Self {
        Self::from_gibbs(&srl_infer::Gibbs::default())
    }
}

/// One worker's samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GibbsOutput {
    /// Worker index.
    pub worker: usize,
    /// Owned variables, ascending.
    pub nodes: Vec<u32>,
    /// Row offsets into `node_prob`.
    pub node_off: Vec<usize>,
    /// State frequencies of the owned variables over the counted samples.
    pub node_prob: Vec<f64>,
    /// The last sample's state of each owned variable.
    pub last_state: Vec<u32>,
    /// Sweeps and the global split-half residual.
    pub convergence: Convergence,
}

/// Gibbs results of this process's workers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DistSamples {
    nodes: Vec<u32>,
    off: Vec<usize>,
    prob: Vec<f64>,
    last: Vec<u32>,
    convergence: Convergence,
}

impl DistSamples {
    fn from_outputs(outputs: Vec<GibbsOutput>) -> Self {
        let convergence = outputs.first().map_or(
            Convergence {
                converged: false,
                iterations: 0,
                max_residual: f64::INFINITY,
            },
            |o| o.convergence,
        );
        let mut rows: Vec<(u32, &[f64], u32)> = Vec::new();
        for o in &outputs {
            for (i, &v) in o.nodes.iter().enumerate() {
                rows.push((
                    v,
                    &o.node_prob[o.node_off[i]..o.node_off[i + 1]],
                    o.last_state[i],
                ));
            }
        }
        rows.sort_by_key(|r| r.0);
        let (mut nodes, mut off, mut prob, mut last) =
            (Vec::new(), vec![0], Vec::new(), Vec::new());
        for (v, p, x) in rows {
            nodes.push(v);
            prob.extend_from_slice(p);
            off.push(prob.len());
            last.push(x);
        }
        Self {
            nodes,
            off,
            prob,
            last,
            convergence,
        }
    }

    /// Variables held, ascending.
    #[must_use]
    pub fn nodes(&self) -> &[u32] {
        &self.nodes
    }

    /// Empirical marginal of `v`, or `None` if another process holds it.
    #[must_use]
    pub fn node(&self, v: usize) -> Option<&[f64]> {
        let i = self.nodes.binary_search(&u32::try_from(v).ok()?).ok()?;
        Some(&self.prob[self.off[i]..self.off[i + 1]])
    }

    /// State of `v` in the last sweep, or `None` if another process holds it.
    #[must_use]
    pub fn last_state(&self, v: usize) -> Option<u32> {
        let i = self.nodes.binary_search(&u32::try_from(v).ok()?).ok()?;
        Some(self.last[i])
    }

    /// Sweeps and the global split-half residual.
    #[must_use]
    pub fn convergence(&self) -> Convergence {
        self.convergence
    }
}

/// Index of the largest value (first on ties): the start state, srl-infer's unary argmax.
fn argmax(x: &[f64]) -> usize {
    x.iter()
        .enumerate()
        .fold(0, |best, (i, &v)| if v > x[best] { i } else { best })
}

impl DistGibbs {
    /// `samples` and `thinning` are at least 1.
    fn check_counts(&self) -> Result<(), DistError> {
        if self.samples == 0 || self.thinning == 0 {
            return Err(DistError::Argument(
                "samples and thinning must be at least 1".into(),
            ));
        }
        Ok(())
    }

    /// The distributed twin of a [`srl_infer::Gibbs`] configuration (node marginals only).
    #[must_use]
    pub fn from_gibbs(g: &srl_infer::Gibbs) -> Self {
        Self {
            burn_in: g.burn_in,
            samples: g.samples,
            thinning: g.thinning,
            split_tol: g.split_tol,
            partition: Partition::Range,
        }
    }

    /// Runs this worker's part inside a timely execution; every worker passes the same
    /// model, configuration and generator state.
    ///
    /// # Panics
    /// If `samples` or `thinning` is 0 (checked by [`DistGibbs::run`]).
    pub fn run_worker<R: Rng>(
        &self,
        worker: &mut Worker,
        mrf: &PairwiseMrf,
        rng: &mut R,
    ) -> GibbsOutput {
        self.run_worker_with(worker, mrf, rng, &self.partition)
    }

    /// [`DistGibbs::run_worker`] with a custom [`Partitioner`].
    ///
    /// # Panics
    /// As [`DistGibbs::run_worker`].
    pub fn run_worker_with<R: Rng>(
        &self,
        worker: &mut Worker,
        mrf: &PairwiseMrf,
        rng: &mut R,
        partitioner: &dyn Partitioner,
    ) -> GibbsOutput {
        assert!(
            self.samples > 0 && self.thinning > 0,
            "samples and thinning must be >= 1"
        );
        let (me, peers) = (worker.index(), worker.peers());
        let (colour, num_colours) = model_colours(mrf);
        let shard = Shard::from_mrf(mrf, partitioner, me, peers, &colour, num_colours);
        self.run_worker_owned(worker, shard, rng)
    }

    /// Runs this worker's part from its shard (worker `w` runs part `w`; the colouring is
    /// the shard's, computed once when the shards were written). Every worker of the
    /// execution passes its own shard, the same configuration and the same generator
    /// state. Neighbour states a shard does not know are ignored (inconsistent shards
    /// give wrong samples, never a panic).
    ///
    /// # Panics
    /// If `samples` or `thinning` is 0 (checked by [`DistGibbs::run`]), or if the shard's
    /// own arrays disagree (never for a shard from [`Shard::read`] or [`Shard::from_mrf`]).
    pub fn run_worker_shard<R: Rng>(
        &self,
        worker: &mut Worker,
        shard: &Shard,
        rng: &mut R,
    ) -> GibbsOutput {
        self.run_worker_owned(worker, shard.clone(), rng)
    }

    fn run_worker_owned<R: Rng>(
        &self,
        worker: &mut Worker,
        shard: Shard,
        rng: &mut R,
    ) -> GibbsOutput {
        assert!(
            self.samples > 0 && self.thinning > 0,
            "samples and thinning must be >= 1"
        );
        let (me, peers) = (worker.index(), worker.peers());
        let part = Part::build(shard, me, peers);
        let nl = part.nodes.len();
        let num_colours = part.num_colours;
        // Local state: owned variables first, then ghosts (sorted global ids).
        let mut ghosts: Vec<u32> = (0..part.src.len())
            .filter(|&s| part.src_owner[s] as usize != me)
            .map(|s| part.src[s])
            .collect();
        ghosts.sort_unstable();
        ghosts.dedup();
        let local = |u: u32| -> Option<usize> {
            match part.nodes.binary_search(&u) {
                Ok(i) => Some(i),
                Err(_) => ghosts.binary_search(&u).ok().map(|j| nl + j),
            }
        };
        let slot_src: Vec<usize> = part.src.iter().map(|&u| local(u).unwrap_or(0)).collect();
        let mut state: Vec<u32> = (0..nl)
            .map(|i| argmax(&part.eff[part.st_off[i]..part.st_off[i + 1]]) as u32)
            .chain(ghosts.iter().map(|_| 0))
            .collect();
        // Per colour: owned variables of the class and, per peer, those it must hear of;
        // `boundary`: every owned variable a peer must hear of (for the start states).
        let mut class: Vec<Vec<usize>> = vec![Vec::new(); num_colours];
        let mut sends: Vec<Vec<Vec<usize>>> = vec![vec![Vec::new(); peers]; num_colours];
        let mut boundary: Vec<Vec<usize>> = vec![Vec::new(); peers];
        let mut owners = Vec::new();
        for i in 0..nl {
            owners.clear();
            owners.extend(
                part.src_owner[part.in_off[i]..part.in_off[i + 1]]
                    .iter()
                    .map(|&w| w as usize)
                    .filter(|&w| w != me && w < peers),
            );
            owners.sort_unstable();
            owners.dedup();
            for &w in &owners {
                boundary[w].push(i);
            }
            let c = part.colour[i];
            if c == NONE || c as usize >= num_colours {
                continue;
            }
            class[c as usize].push(i);
            for &w in &owners {
                sends[c as usize][w].push(i);
            }
        }
        let mut halo: Halo<StatePacket> = Halo::new(worker);
        let k = part
            .st_off
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(1)
            .max(1);
        let (mut s, mut p) = (vec![0.0; k], vec![0.0; k]);
        let mut counts = vec![0u32; part.eff.len()];
        let mut first_half = vec![0u32; part.eff.len()];
        let half = self.samples / 2;
        let total = self.burn_in + self.samples * self.thinning;
        let mut collected = 0usize;
        let mut round = 0u64;
        let mut upd: Vec<u32> = Vec::new();
        let kernels = part.kernels.view();
        // Round 0: the start states of every boundary variable.
        for w in (0..peers).filter(|&w| w != me && !boundary[w].is_empty()) {
            halo.send(StatePacket {
                to: w as u32,
                round,
                residual: 0.0,
                ids: boundary[w].iter().map(|&i| part.nodes[i]).collect(),
                states: boundary[w].iter().map(|&i| state[i]).collect(),
            });
        }
        for pk in halo.deliver(worker, round) {
            for (&u, &x) in pk.ids.iter().zip(&pk.states) {
                if let Some(j) = local(u) {
                    state[j] = x;
                }
            }
        }
        for sweep in 1..=total {
            let seed = rng.next_u64();
            for c in 0..num_colours {
                upd.clear();
                for &i in &class[c] {
                    let v = part.nodes[i] as usize;
                    let kv = part.st_off[i + 1] - part.st_off[i];
                    let s = &mut s[..kv];
                    let slots = part.in_off[i]..part.in_off[i + 1];
                    gibbs_scores(
                        &part.eff[part.st_off[i]..part.st_off[i + 1]],
                        &kernels,
                        slots.map(|sl| (state[slot_src[sl]], part.in_kernel[sl])),
                        s,
                    );
                    upd.push(sample_index(s, &mut p[..kv], gibbs_uniform(seed, v)) as u32);
                }
                for (&i, &x) in class[c].iter().zip(&upd) {
                    state[i] = x;
                }
                round += 1;
                for w in (0..peers).filter(|&w| w != me && !sends[c][w].is_empty()) {
                    let list = &sends[c][w];
                    halo.send(StatePacket {
                        to: w as u32,
                        round,
                        residual: 0.0,
                        ids: list.iter().map(|&i| part.nodes[i]).collect(),
                        states: list.iter().map(|&i| state[i]).collect(),
                    });
                }
                for pk in halo.deliver(worker, round) {
                    for (&u, &x) in pk.ids.iter().zip(&pk.states) {
                        if let Some(j) = local(u) {
                            state[j] = x;
                        }
                    }
                }
            }
            if sweep > self.burn_in && (sweep - self.burn_in).is_multiple_of(self.thinning) {
                for i in 0..nl {
                    counts[part.st_off[i] + state[i] as usize] += 1;
                }
                collected += 1;
                if collected == half {
                    first_half.copy_from_slice(&counts);
                }
            }
        }
        let mut residual = if half == 0 || collected <= half {
            f64::INFINITY
        } else {
            let (h1, h2) = (half as f64, (collected - half) as f64);
            counts
                .iter()
                .zip(&first_half)
                .map(|(&all, &first)| (f64::from(first) / h1 - f64::from(all - first) / h2).abs())
                .fold(0.0, f64::max)
        };
        round += 1;
        for w in (0..peers).filter(|&w| w != me) {
            halo.send(StatePacket {
                to: w as u32,
                round,
                residual,
                ids: Vec::new(),
                states: Vec::new(),
            });
        }
        for pk in halo.deliver(worker, round) {
            residual = residual.max(pk.residual);
        }
        let ns = collected as f64;
        GibbsOutput {
            worker: me,
            nodes: part.nodes.clone(),
            node_off: part.st_off.clone(),
            node_prob: counts.iter().map(|&c| f64::from(c) / ns).collect(),
            last_state: state[..nl].to_vec(),
            convergence: Convergence {
                converged: residual <= self.split_tol,
                iterations: total,
                max_residual: residual,
            },
        }
    }

    /// Runs on the timely execution `config`; every worker starts from a clone of `rng`.
    ///
    /// # Errors
    /// [`DistError::Argument`] if `samples` or `thinning` is 0; [`DistError::ExtremeModel`]
    /// outside srl-infer's ordinary range; [`DistError::Timely`] if timely fails.
    pub fn run<R>(
        &self,
        mrf: Arc<PairwiseMrf>,
        config: timely::Config,
        rng: &R,
    ) -> Result<DistSamples, DistError>
    where
        R: Rng + Clone + Send + Sync + 'static,
    {
        self.check_counts()?;
        check_ordinary(&mrf)?;
        let (cfg, rng) = (*self, rng.clone());
        let guards = timely::execute(config, move |worker| {
            let mut r = rng.clone();
            cfg.run_worker(worker, &mrf, &mut r)
        })
        .map_err(DistError::Timely)?;
        let outputs = guards
            .join()
            .into_iter()
            .collect::<Result<Vec<_>, String>>()
            .map_err(DistError::Timely)?;
        Ok(DistSamples::from_outputs(outputs))
    }

    /// Runs from shards (worker `w` runs the shard whose part is `w`; each process passes
    /// its workers' shards); every worker starts from a clone of `rng`. The colouring is
    /// the shards'.
    ///
    /// # Errors
    /// [`DistError::Argument`] if `samples` or `thinning` is 0, or a worker finds no shard
    /// for its index or a shard for another part count; [`DistError::Timely`] if timely
    /// fails.
    pub fn run_shards<R>(
        &self,
        shards: Vec<Shard>,
        config: timely::Config,
        rng: &R,
    ) -> Result<DistSamples, DistError>
    where
        R: Rng + Clone + Send + Sync + 'static,
    {
        self.check_counts()?;
        let (cfg, rng) = (*self, rng.clone());
        let shards = ShardSlots::new(shards);
        let guards = timely::execute(config, move |worker| {
            let mut r = rng.clone();
            let (me, peers) = (worker.index(), worker.peers());
            match shards.take(me) {
                Some(s) if s.parts as usize == peers => Ok(cfg.run_worker_owned(worker, s, &mut r)),
                Some(s) => {
                    let parts = s.parts;
                    let _ = cfg.run_worker_owned(worker, Shard::empty(me, peers), &mut r);
                    Err(DistError::Argument(format!(
                        "worker {me} of {peers} was given a shard of {parts} parts"
                    )))
                }
                None => {
                    let _ = cfg.run_worker_owned(worker, Shard::empty(me, peers), &mut r);
                    Err(no_shard(me))
                }
            }
        });
        Ok(DistSamples::from_outputs(join_workers(guards)?))
    }

    /// [`DistGibbs::run`] on `workers` threads of this process.
    ///
    /// # Errors
    /// As [`DistGibbs::run`].
    pub fn run_threads<R>(
        &self,
        mrf: Arc<PairwiseMrf>,
        workers: usize,
        rng: &R,
    ) -> Result<DistSamples, DistError>
    where
        R: Rng + Clone + Send + Sync + 'static,
    {
        self.run(mrf, threads_config(workers), rng)
    }
}
