//! Synthetic graph generators.
//!
//! - [`SenGetoorParams::generate`]: the evolutionary preferential-attachment generator of
//!   Sen & Getoor (2006), Algorithms 1 and 2, with class-specific Bernoulli attributes and
//!   random node and edge cost matrices.
//! - [`HomophilyParams::generate`]: a planted-partition (optionally degree-corrected)
//!   graph with a target homophily and average degree, for collective classification at
//!   scale (`O(n + m)` sampling, 10^6 nodes in well under a second in release).
//!
//! - [`barabasi_albert`]: Barabási–Albert preferential attachment, the power-law edge
//!   lists of the inference benchmarks (srl-infer's examples and tests, srl-dist, benches).
//!
//! All take the random generator as `&mut R` and never seed themselves.

use rand::{Rng, RngExt as _};
use serde::{Deserialize, Serialize};

use crate::cost::{CostModel, hamming_pairs};
use crate::error::GraphError;
use crate::graph::{Attributes, Directedness, LabelSet, NodeId, RelationalGraph};

/// Walker/Vose alias table: `O(n)` construction, `O(1)` sampling from a discrete
/// distribution. Each slot keeps its threshold, its own id and its alias's id side by
/// side, so a draw touches one cache line and returns an id without further lookups.
#[derive(Clone, Debug)]
struct Alias {
    slots: Vec<(f64, u32, u32)>,
}

impl Alias {
    /// From non-negative weights with a positive sum; slot `i` stands for `ids[i]`
    /// (`i` itself when `ids` is `None`).
    fn new(weights: &[f64], ids: Option<&[u32]>) -> Self {
        let n = weights.len();
        let sum: f64 = weights.iter().sum();
        let mut prob: Vec<f64> = weights.iter().map(|w| w * n as f64 / sum).collect();
        let mut alias = vec![0u32; n];
        let (mut small, mut large): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
        for (i, &p) in prob.iter().enumerate() {
            if p < 1.0 {
                small.push(i as u32);
            } else {
                large.push(i as u32);
            }
        }
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            alias[s as usize] = l;
            prob[l as usize] -= 1.0 - prob[s as usize];
            if prob[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        for i in small.into_iter().chain(large) {
            prob[i as usize] = 1.0;
        }
        let id = |i: u32| ids.map_or(i, |ids| ids[i as usize]);
        Self {
            slots: prob
                .into_iter()
                .zip(alias)
                .enumerate()
                .map(|(i, (p, a))| (p, id(i as u32), id(a)))
                .collect(),
        }
    }

    /// The id of a slot drawn with probability proportional to its weight.
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        let (p, own, alias) = self.slots[rng.random_range(0..self.slots.len())];
        if rng.random::<f64>() < p {
            own as usize
        } else {
            alias as usize
        }
    }
}

/// Draws one of a set of node ids: uniformly, or by weight through an alias table.
#[derive(Clone, Debug)]
enum Sampler {
    Uniform(Vec<u32>),
    Alias(Alias),
}

impl Sampler {
    /// Over `ids`, with weight `weights[id]` each (ignored when `uniform`).
    fn new(ids: Vec<u32>, weights: &[f64], uniform: bool) -> Self {
        if uniform {
            Self::Uniform(ids)
        } else {
            let w: Vec<f64> = ids.iter().map(|&v| weights[v as usize]).collect();
            Self::Alias(Alias::new(&w, Some(&ids)))
        }
    }

    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        match self {
            Self::Uniform(ids) => ids[rng.random_range(0..ids.len())] as usize,
            Self::Alias(a) => a.sample(rng),
        }
    }
}

fn invalid(name: &'static str, value: impl ToString, reason: &str) -> GraphError {
    GraphError::InvalidParameter {
        name,
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn check_prob(name: &'static str, p: f64) -> Result<(), GraphError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(invalid(name, p, "must lie in [0, 1]"))
    }
}

/// Parameters of the Sen & Getoor (2006) synthetic generator (Algorithms 1 and 2).
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `num_nodes` | 300 | nodes of the final graph (`numNodes`) | `>= 1`, `< 2^32` |
/// | `alpha` | 0.25 | chance an iteration links two existing nodes instead of adding one; about `numNodes / (1 − α)` edges | `[0, 1)` |
/// | `rho` | 0.85 | chance a new link goes to the node's own class | `[0, 1]` |
/// | `attachment_offset` | 1 | target weight is out-degree + this | `1..=1000` |
/// | `attribute_probs` | 10 attributes, see below | `[P(x_j = 1 │ y = 0), P(x_j = 1 │ y = 1)]` per attribute | each in `[0, 1]` |
/// | `node_cost_max` | 2.0 | node off-diagonal costs ~ `U[0, node_cost_max]` | finite, `>= 0` |
/// | `edge_cost_scale` | 0.5 | edge off-diagonal costs ~ `U[0, edge_cost_scale · ham]` | finite, `>= 0` |
///
/// The paper fixes `numNodes = 300`, binary labels, the cost distributions, and varies
/// `ρ ∈ {0.5, …, 1.0}` at `α = 0.25` (Figure 1) and `α ∈ {0, …, 0.4}` at `ρ = 0.85`
/// (Figure 2); the defaults take `α` from Figure 1 and `ρ` from Figure 2.
///
/// **Attributes** (the paper says only "fixed, class-specific multivariate Bernoulli
/// distributions"): 10 independent binary attributes; attribute `j` is 1 with probability
/// 0.6 in class 1 and 0.4 in class 0 for even `j`, and the reverse for odd `j`. Each
/// attribute alone is a weak signal (log-odds ±0.41) and a naive Bayes on all ten is right
/// about 73 % of the time, leaving room for links to help, as in the paper.
///
/// **`attachment_offset`**: Algorithm 2 picks the target "with probability proportional to
/// its out-degree"; a node that has not linked yet has out-degree 0 and the first nodes
/// could never be chosen, so, as in Bollobás et al. (2003, `δ_out`), the weight is
/// out-degree + offset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SenGetoorParams {
    /// Number of nodes (`numNodes`).
    pub num_nodes: usize,
    /// Link-density parameter `α`.
    pub alpha: f64,
    /// Label-correlation parameter `ρ`.
    pub rho: f64,
    /// Added to every out-degree in preferential attachment.
    pub attachment_offset: u32,
    /// Per attribute `[P(1 | class 0), P(1 | class 1)]`.
    pub attribute_probs: Vec<[f64; 2]>,
    /// Upper end of the uniform node off-diagonal cost.
    pub node_cost_max: f64,
    /// Edge off-diagonal costs are `U[0, edge_cost_scale · ham(y_c, ỹ_c)]`.
    pub edge_cost_scale: f64,
}

impl Default for SenGetoorParams {
    fn default() -> Self {
        Self {
            num_nodes: 300,
            alpha: 0.25,
            rho: 0.85,
            attachment_offset: 1,
            attribute_probs: (0..10)
                .map(|j| if j % 2 == 0 { [0.4, 0.6] } else { [0.6, 0.4] })
                .collect(),
            node_cost_max: 2.0,
            edge_cost_scale: 0.5,
        }
    }
}

/// What [`SenGetoorParams::generate`] did besides the graph.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SenGetoorReport {
    /// Iterations of Algorithm 1's loop.
    pub iterations: usize,
    /// Calls of `connectNode` (Algorithm 2).
    pub connect_calls: usize,
    /// Calls that found no node of the wanted class other than `v` (no edge).
    pub no_target: usize,
    /// Edges `v → w` that repeated an existing pair (merged in the undirected graph).
    pub duplicates: usize,
}

/// A generated graph with its cost matrices.
#[derive(Clone, Debug)]
pub struct SyntheticGraph {
    /// The graph: binary labels (`LabelSet::numbered(2)`), dense 0/1 attributes,
    /// undirected edges.
    pub graph: RelationalGraph,
    /// Per-node `2 x 2` and per-edge `4 x 4` cost matrices, in `NodeId` / `EdgeId` order.
    pub costs: CostModel,
    /// Counts of the generation.
    pub report: SenGetoorReport,
}

impl SenGetoorParams {
    /// Checks the ranges of the table above.
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] naming the first bad field.
    pub fn validate(&self) -> Result<(), GraphError> {
        if self.num_nodes == 0 || self.num_nodes > u32::MAX as usize {
            return Err(invalid("num_nodes", self.num_nodes, "must be in 1..2^32"));
        }
        if !(0.0..1.0).contains(&self.alpha) {
            return Err(invalid("alpha", self.alpha, "must lie in [0, 1)"));
        }
        check_prob("rho", self.rho)?;
        if !(1..=1000).contains(&self.attachment_offset) {
            return Err(invalid(
                "attachment_offset",
                self.attachment_offset,
                "must be in 1..=1000",
            ));
        }
        for p in self.attribute_probs.iter().flatten() {
            check_prob("attribute_probs", *p)?;
        }
        for (name, x) in [
            ("node_cost_max", self.node_cost_max),
            ("edge_cost_scale", self.edge_cost_scale),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(invalid(name, x, "must be finite and >= 0"));
            }
        }
        Ok(())
    }

    /// Generates one graph (Algorithm 1), attributes and cost matrices.
    ///
    /// Algorithm 1 loops until `num_nodes` nodes exist: with probability `α` it picks an
    /// existing node uniformly and calls `connectNode` on it, otherwise it adds a node with
    /// a uniform binary label and calls `connectNode` on the new node. `connectNode`
    /// (Algorithm 2) keeps the node's class with probability `ρ` (else the other class) and
    /// links the node to a node `w ≠ v` of that class chosen with probability proportional
    /// to `out-degree(w) + attachment_offset`. The out-degree of `v` then grows by one.
    /// Links are recorded as directed `v → w` for the attachment weights; the returned graph
    /// is undirected, so a repeated pair (either direction) becomes one edge (counted in
    /// [`SenGetoorReport::duplicates`]). Afterwards each node draws its attributes from its
    /// class's Bernoulli distribution and a `2 x 2` cost matrix (diagonal 0, off-diagonal
    /// `U[0, node_cost_max]`), and each edge a `4 x 4` matrix over label pairs (diagonal 0,
    /// off-diagonal `U[0, edge_cost_scale · ham]`, `ham` the Hamming distance between the
    /// predicted and true pair).
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] from [`SenGetoorParams::validate`].
    ///
    /// # Complexity
    /// Expected `O(n / (1 − α))` time and `O(n · offset + m)` memory: the
    /// out-degree-proportional choice draws uniformly from a per-class urn (each node
    /// listed `out-degree + offset` times) instead of the naive `O(n)` scan per edge, which
    /// would make the generator quadratic; it runs at 10^6 nodes.
    ///
    /// # References
    /// Sen & Getoor 2006, Section 6.1, Algorithms 1 and 2; Bollobás, Borgs, Chayes &
    /// Riordan (2003), *Directed scale-free graphs*.
    ///
    /// # Examples
    /// ```
    /// use rand::SeedableRng as _;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    /// let s = srl_graph::SenGetoorParams::default().generate(&mut rng)?;
    /// assert_eq!(s.graph.num_nodes(), 300);
    /// assert!(s.graph.num_edges() > 300); // about 300 / (1 - 0.25) = 400 links
    /// s.costs.check_graph(&s.graph)?;
    /// # Ok::<(), srl_graph::GraphError>(())
    /// ```
    pub fn generate<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<SyntheticGraph, GraphError> {
        self.validate()?;
        let n = self.num_nodes;
        let mut st = SgState {
            labels: Vec::with_capacity(n),
            urns: [Vec::new(), Vec::new()],
            edges: Vec::with_capacity(n + n / 3),
            report: SenGetoorReport::default(),
        };
        while st.labels.len() < n {
            st.report.iterations += 1;
            if rng.random::<f64>() <= self.alpha {
                if st.labels.is_empty() {
                    continue;
                }
                let v = rng.random_range(0..st.labels.len());
                st.connect(v, self.rho, rng);
            } else {
                let v = st.labels.len();
                let c = usize::from(rng.random_bool(0.5));
                st.labels.push(c as u8);
                for _ in 0..self.attachment_offset {
                    st.urns[c].push(v as u32);
                }
                st.connect(v, self.rho, rng);
            }
        }
        let SgState {
            labels,
            edges,
            mut report,
            ..
        } = st;
        // Attributes.
        let f = self.attribute_probs.len();
        let mut values = vec![0.0; n * f];
        for v in 0..n {
            let c = labels[v] as usize;
            for (j, p) in self.attribute_probs.iter().enumerate() {
                if rng.random::<f64>() < p[c] {
                    values[v * f + j] = 1.0;
                }
            }
        }
        // Node cost matrices (node order, as Algorithm 1 lines 15-19).
        let mut node_costs = vec![0.0; n * 4];
        for v in 0..n {
            node_costs[v * 4 + 1] = rng.random::<f64>() * self.node_cost_max;
            node_costs[v * 4 + 2] = rng.random::<f64>() * self.node_cost_max;
        }
        let graph = RelationalGraph::new(
            Vec::new(),
            Attributes::Dense {
                num_features: f,
                values,
            },
            labels.iter().map(|&c| Some(u32::from(c))).collect(),
            LabelSet::numbered(2),
            edges,
            Directedness::Undirected,
        )?;
        report.duplicates = graph.cleanup().duplicates;
        let m = graph.num_edges();
        let mut edge_costs = vec![0.0; m * 16];
        for e in 0..m {
            for a in 0..4 {
                for b in 0..4 {
                    if a != b {
                        let hi = self.edge_cost_scale * hamming_pairs(2, a, b) as f64;
                        edge_costs[e * 16 + a * 4 + b] = rng.random::<f64>() * hi;
                    }
                }
            }
        }
        let costs = CostModel::per_clique(2, node_costs, Some(edge_costs))?;
        Ok(SyntheticGraph {
            graph,
            costs,
            report,
        })
    }
}

/// The growing graph of Algorithm 1.
struct SgState {
    labels: Vec<u8>,
    /// Per class, an urn holding each node of the class `attachment_offset` times plus
    /// once per out-edge it has made: a uniform draw from the urn picks a node with
    /// probability proportional to `out-degree + attachment_offset`, in `O(1)`.
    urns: [Vec<u32>; 2],
    edges: Vec<(NodeId, NodeId)>,
    report: SenGetoorReport,
}

impl SgState {
    /// Algorithm 2 (`connectNode`) for node `v`.
    fn connect<R: Rng + ?Sized>(&mut self, v: usize, rho: f64, rng: &mut R) {
        self.report.connect_calls += 1;
        let own = self.labels[v] as usize;
        let class = if rng.random::<f64>() <= rho {
            own
        } else {
            1 - own
        };
        let urn = &self.urns[class];
        let mut pick = None;
        if !urn.is_empty() {
            // Exclude v itself (no self-links): rejection, as v is rarely drawn; after 16
            // rejections an exact draw among the other entries. Both sample the
            // distribution conditioned on w != v.
            for _ in 0..16 {
                let w = urn[rng.random_range(0..urn.len())];
                if w as usize != v {
                    pick = Some(w);
                    break;
                }
            }
            if pick.is_none() {
                let others = urn.iter().filter(|&&w| w as usize != v).count();
                if others > 0 {
                    let j = rng.random_range(0..others);
                    pick = urn.iter().copied().filter(|&w| w as usize != v).nth(j);
                }
            }
        }
        match pick {
            Some(w) => {
                self.edges.push((NodeId::new(v), NodeId(w)));
                self.urns[own].push(v as u32);
            }
            None => self.report.no_target += 1,
        }
    }
}

/// How node "activity" weights (expected degrees) are drawn in [`HomophilyParams`].
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DegreeModel {
    /// Every node has the same expected degree (a planted-partition / stochastic block
    /// model: Poisson-like degrees).
    Uniform,
    /// Degree-corrected: weights `θ_v` drawn from a Pareto law with tail exponent
    /// `exponent` (`P(θ > t) = t^{-(exponent − 1)}`, `θ >= 1`), capped at `sqrt(n)`, so
    /// degrees follow a power law with that exponent.
    PowerLaw {
        /// Degree-distribution exponent, `> 2` for a finite mean.
        exponent: f64,
    },
}

/// Parameters of the homophily / link-density generator.
///
/// | field | default | meaning | valid range |
/// |---|---|---|---|
/// | `num_nodes` | 10 000 | nodes | `>= 2`, `< 2^32` |
/// | `num_labels` | 2 | classes `k`, drawn uniformly per node | `>= 1` |
/// | `avg_degree` | 4.0 | target average degree `d` (`n · d / 2` edge draws) | finite, `>= 0` |
/// | `homophily` | 0.8 | chance an edge draw joins two nodes of the same class | `[0, 1]` (`1` if `k = 1`) |
/// | `degree` | `Uniform` | expected-degree model | `PowerLaw` exponent `> 2` |
/// | `num_features` | 20 | binary attributes | any |
/// | `feature_on` | 0.3 | `P(x_j = 1)` when `j mod k = class` | `[0, 1]` |
/// | `feature_off` | 0.05 | `P(x_j = 1)` otherwise (attribute noise) | `[0, 1]` |
///
/// Generation: each node gets a uniform class and a weight (1, or Pareto for
/// `PowerLaw`); each of `round(n · d / 2)` edge draws picks `u` with probability
/// proportional to its weight, then with probability `homophily` a `v` of `u`'s class,
/// else a `v` of another class (class chosen in proportion to its total weight), each
/// proportional to weight, all through alias tables (`u` is drawn as a class by total
/// weight, then a member by weight). Self-loops and repeated pairs are
/// dropped by [`RelationalGraph::new`], so the final edge count is slightly below the
/// number of draws and the measured homophily close to `homophily` (exactly in
/// expectation before the drop). Attributes are sparse rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HomophilyParams {
    /// Number of nodes.
    pub num_nodes: usize,
    /// Number of classes.
    pub num_labels: usize,
    /// Target average degree.
    pub avg_degree: f64,
    /// Share of same-class edge draws.
    pub homophily: f64,
    /// Expected-degree model.
    pub degree: DegreeModel,
    /// Number of binary attributes.
    pub num_features: usize,
    /// Attribute probability on the node's own class's columns.
    pub feature_on: f64,
    /// Attribute probability elsewhere.
    pub feature_off: f64,
}

impl Default for HomophilyParams {
    fn default() -> Self {
        Self {
            num_nodes: 10_000,
            num_labels: 2,
            avg_degree: 4.0,
            homophily: 0.8,
            degree: DegreeModel::Uniform,
            num_features: 20,
            feature_on: 0.3,
            feature_off: 0.05,
        }
    }
}

impl HomophilyParams {
    /// Checks the ranges of the table above.
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] naming the first bad field.
    pub fn validate(&self) -> Result<(), GraphError> {
        if self.num_nodes < 2 || self.num_nodes > u32::MAX as usize {
            return Err(invalid("num_nodes", self.num_nodes, "must be in 2..2^32"));
        }
        if self.num_labels == 0 {
            return Err(invalid("num_labels", 0, "must be >= 1"));
        }
        if !(self.avg_degree.is_finite() && self.avg_degree >= 0.0) {
            return Err(invalid(
                "avg_degree",
                self.avg_degree,
                "must be finite, >= 0",
            ));
        }
        check_prob("homophily", self.homophily)?;
        if self.num_labels == 1 && self.homophily < 1.0 {
            return Err(invalid(
                "homophily",
                self.homophily,
                "must be 1 with one class",
            ));
        }
        check_prob("feature_on", self.feature_on)?;
        check_prob("feature_off", self.feature_off)?;
        if let DegreeModel::PowerLaw { exponent } = self.degree
            && !(exponent.is_finite() && exponent > 2.0)
        {
            return Err(invalid("degree.exponent", exponent, "must be finite, > 2"));
        }
        Ok(())
    }

    /// Generates one graph (procedure in the type's docs).
    ///
    /// # Errors
    /// [`GraphError::InvalidParameter`] from [`HomophilyParams::validate`].
    ///
    /// # Complexity
    /// `O(n · F + m)` sampling plus the `O(m log m)` edge sort of [`RelationalGraph::new`].
    ///
    /// # References
    /// Holland, Laskey & Leinhardt (1983) stochastic block models; Karrer & Newman (2011)
    /// degree correction; Sen et al. (2008) use such graphs to vary link density and
    /// homophily.
    ///
    /// # Examples
    /// ```
    /// use rand::SeedableRng as _;
    /// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    /// let p = srl_graph::HomophilyParams { num_nodes: 2000, homophily: 0.9, ..Default::default() };
    /// let g = p.generate(&mut rng)?;
    /// assert!((g.homophily().expect("edges") - 0.9).abs() < 0.05);
    /// # Ok::<(), srl_graph::GraphError>(())
    /// ```
    pub fn generate<R: Rng + ?Sized>(&self, rng: &mut R) -> Result<RelationalGraph, GraphError> {
        self.validate()?;
        let (n, k) = (self.num_nodes, self.num_labels);
        let labels: Vec<u32> = (0..n).map(|_| rng.random_range(0..k as u32)).collect();
        let weights: Vec<f64> = match self.degree {
            DegreeModel::Uniform => vec![1.0; n],
            DegreeModel::PowerLaw { exponent } => {
                let cap = (n as f64).sqrt().max(1.0);
                (0..n)
                    .map(|_| {
                        let u: f64 = rng.random::<f64>();
                        (1.0 - u).powf(-1.0 / (exponent - 1.0)).min(cap)
                    })
                    .collect()
            }
        };
        // Per class: its total weight and a sampler of its members by weight. An edge
        // end `u` is drawn as a class by total weight, then a member by weight, which is
        // `u` with probability `w_u / Σ w` and costs one random memory access.
        let mut members: Vec<Vec<u32>> = vec![Vec::new(); k];
        for (v, &c) in labels.iter().enumerate() {
            members[c as usize].push(v as u32);
        }
        let uniform = self.degree == DegreeModel::Uniform;
        let class_weight: Vec<f64> = members
            .iter()
            .map(|m| m.iter().map(|&v| weights[v as usize]).sum())
            .collect();
        let node_pick: Vec<Option<Sampler>> = members
            .into_iter()
            .map(|m| (!m.is_empty()).then(|| Sampler::new(m, &weights, uniform)))
            .collect();
        let class_pick = Alias::new(&class_weight, None);
        // For each class c, an alias table over the other classes by total weight.
        let other_pick: Vec<Option<Alias>> = (0..k)
            .map(|c| {
                let others: Vec<u32> = (0..k as u32)
                    .filter(|&o| o as usize != c && class_weight[o as usize] > 0.0)
                    .collect();
                (!others.is_empty()).then(|| {
                    let w: Vec<f64> = others.iter().map(|&o| class_weight[o as usize]).collect();
                    Alias::new(&w, Some(&others))
                })
            })
            .collect();
        let draws = (n as f64 * self.avg_degree / 2.0).round() as usize;
        let mut edges = Vec::with_capacity(draws);
        for _ in 0..draws {
            let cu = class_pick.sample(rng);
            let Some(pu) = &node_pick[cu] else { continue };
            let u = pu.sample(rng);
            let target = if rng.random::<f64>() < self.homophily {
                Some(cu)
            } else {
                other_pick[cu].as_ref().map(|a| a.sample(rng))
            };
            let Some(c) = target else { continue };
            let Some(pv) = &node_pick[c] else { continue };
            let v = pv.sample(rng);
            edges.push((NodeId::new(u), NodeId::new(v)));
        }
        // Sparse attributes.
        let f = self.num_features;
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0usize);
        let mut indices = Vec::new();
        for &c in &labels {
            for j in 0..f {
                let p = if j % k == c as usize {
                    self.feature_on
                } else {
                    self.feature_off
                };
                if rng.random::<f64>() < p {
                    indices.push(j as u32);
                }
            }
            offsets.push(indices.len());
        }
        let values = vec![1.0; indices.len()];
        RelationalGraph::new(
            Vec::new(),
            Attributes::Sparse {
                num_features: f,
                offsets,
                indices,
                values,
            },
            labels.into_iter().map(Some).collect(),
            LabelSet::numbered(k),
            edges,
            Directedness::Undirected,
        )
    }
}

/// Barabási–Albert preferential attachment (Barabási & Albert 1999): node `v = 1..n`
/// attaches `m0` edges to earlier nodes drawn proportionally to degree (uniform draws from
/// the list of edge endpoints; the first draws go to node 0); self-loops and duplicates are
/// dropped. Returns sorted, deduplicated edges `(u, v)` with `u < v`; about `m0 · n`.
///
/// # Panics
/// If `n > u32::MAX`.
///
/// # Complexity
/// `O(n · m0 · log(n · m0))` time (the final sort), `O(n · m0)` memory.
pub fn barabasi_albert<R: Rng + ?Sized>(n: usize, m0: usize, rng: &mut R) -> Vec<(u32, u32)> {
    assert!(u32::try_from(n).is_ok(), "at most u32::MAX nodes");
    let mut endpoints: Vec<u32> = Vec::with_capacity(2 * n * m0);
    let mut edges = Vec::with_capacity(n * m0);
    for v in 1..n as u32 {
        for _ in 0..m0.min(v as usize) {
            let u = if endpoints.is_empty() {
                0
            } else {
                endpoints[rng.random_range(0..endpoints.len())]
            };
            if u != v {
                edges.push((u.min(v), u.max(v)));
                endpoints.push(u);
                endpoints.push(v);
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng as _;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn connect_node_attaches_by_out_degree_plus_offset() {
        // Class 0 = nodes 0, 1, 2 with out-degrees 0, 2, 5 (offset 1): weights 1, 3, 6;
        // node 3 (class 0) links within its class (rho = 1), never to itself.
        let mut st = SgState {
            labels: vec![0, 0, 0, 0],
            urns: [vec![0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3], Vec::new()],
            edges: Vec::new(),
            report: SenGetoorReport::default(),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let trials = 30_000;
        for _ in 0..trials {
            st.connect(3, 1.0, &mut rng);
            st.urns[0].truncate(11); // keep node 3's weight fixed
        }
        let mut count = [0usize; 4];
        for &(_, w) in &st.edges {
            count[w.index()] += 1;
        }
        assert_eq!(count[3], 0);
        for (w, expect) in [(0, 0.1), (1, 0.3), (2, 0.6)] {
            let share = count[w] as f64 / trials as f64;
            assert!((share - expect).abs() < 0.015, "{w}: {share}");
        }
        // A node alone in its class has no target.
        let mut lone = SgState {
            labels: vec![1],
            urns: [Vec::new(), vec![0]],
            edges: Vec::new(),
            report: SenGetoorReport::default(),
        };
        lone.connect(0, 1.0, &mut rng);
        assert_eq!((lone.edges.len(), lone.report.no_target), (0, 1));
    }

    #[test]
    fn alias_matches_weights() {
        let a = Alias::new(&[1.0, 0.0, 3.0], None);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut c = [0usize; 3];
        for _ in 0..40_000 {
            c[a.sample(&mut rng)] += 1;
        }
        assert_eq!(c[1], 0);
        let share = c[2] as f64 / 40_000.0;
        assert!((share - 0.75).abs() < 0.02, "{share}");
    }

    #[test]
    fn sen_getoor_rho_one_links_only_within_class() {
        let p = SenGetoorParams {
            rho: 1.0,
            ..SenGetoorParams::default()
        };
        let s = p.generate(&mut ChaCha8Rng::seed_from_u64(5)).expect("ok");
        assert_eq!(s.graph.homophily(), Some(1.0));
        let p0 = SenGetoorParams {
            rho: 0.0,
            ..SenGetoorParams::default()
        };
        let s0 = p0.generate(&mut ChaCha8Rng::seed_from_u64(5)).expect("ok");
        assert_eq!(s0.graph.homophily(), Some(0.0));
    }

    #[test]
    fn sen_getoor_sizes_and_costs() {
        let s = SenGetoorParams::default()
            .generate(&mut ChaCha8Rng::seed_from_u64(11))
            .expect("ok");
        let g = &s.graph;
        assert_eq!(g.num_nodes(), 300);
        // connectNode calls ≈ 300 / 0.75 = 400.
        assert!(
            (330..470).contains(&s.report.connect_calls),
            "{:?}",
            s.report
        );
        assert_eq!(
            g.num_edges() + s.report.duplicates + s.report.no_target,
            s.report.connect_calls
        );
        s.costs.check_graph(g).expect("fits");
        for v in g.nodes() {
            let m = s.costs.node_matrix(v);
            assert_eq!((m[0], m[3]), (0.0, 0.0));
            assert!(m[1] <= 2.0 && m[2] <= 2.0);
        }
        for (e, _, _) in g.edges() {
            let m = s.costs.edge_matrix(e).expect("edge costs");
            for a in 0..4 {
                for b in 0..4 {
                    let c = m[a * 4 + b];
                    assert!(c >= 0.0 && c <= 0.5 * hamming_pairs(2, a, b) as f64);
                }
            }
        }
    }

    #[test]
    fn sen_getoor_attributes_follow_the_class_bernoullis() {
        let p = SenGetoorParams {
            num_nodes: 20_000,
            ..SenGetoorParams::default()
        };
        let s = p.generate(&mut ChaCha8Rng::seed_from_u64(13)).expect("ok");
        let g = &s.graph;
        let mut ones = [[0.0f64; 2]; 10];
        let mut count = [0.0f64; 2];
        for v in g.nodes() {
            let c = g.label(v).expect("labelled") as usize;
            count[c] += 1.0;
            g.attributes_of(v).for_each(|j, x| ones[j][c] += x);
        }
        // Labels are uniform.
        assert!((count[0] / 20_000.0 - 0.5).abs() < 0.02);
        for (j, probs) in p.attribute_probs.iter().enumerate() {
            for c in 0..2 {
                let f = ones[j][c] / count[c];
                assert!((f - probs[c]).abs() < 0.02, "attribute {j} class {c}: {f}");
            }
        }
    }

    #[test]
    fn homophily_generator_hits_targets() {
        let p = HomophilyParams {
            num_nodes: 20_000,
            num_labels: 3,
            avg_degree: 6.0,
            homophily: 0.7,
            degree: DegreeModel::PowerLaw { exponent: 2.5 },
            ..HomophilyParams::default()
        };
        let g = p.generate(&mut ChaCha8Rng::seed_from_u64(2)).expect("ok");
        let d = 2.0 * g.num_edges() as f64 / g.num_nodes() as f64;
        assert!((5.0..=6.0).contains(&d), "{d}");
        let h = g.homophily().expect("edges");
        assert!((h - 0.7).abs() < 0.03, "{h}");
        assert!(p.clone().validate().is_ok());
        let bad = HomophilyParams {
            homophily: 1.5,
            ..HomophilyParams::default()
        };
        assert!(bad.generate(&mut ChaCha8Rng::seed_from_u64(2)).is_err());
    }
}
