//! First-order data: interned constants, predicates, ground facts with argument-position
//! indexes, examples of a target predicate, and mode declarations.
//!
//! Constants are interned to dense `u32` ids per [`Database`]; every relation keeps its
//! tuples in one flat array, a hash set for membership tests, and one CSR index per
//! argument position (constant id → rows holding it there), so a join on any bound
//! argument touches only the matching facts.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use serde::{Deserialize, Serialize};

use crate::BoostError;

/// A small, fast, non-cryptographic hasher (the "Fx" multiply-rotate scheme used by
/// rustc) for hash sets of `u32` tuples.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(buf));
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = (self.hash.rotate_left(5) ^ w).wrapping_mul(FX_SEED);
    }
}

pub(crate) type FxBuild = BuildHasherDefault<FxHasher>;
pub(crate) type FxSet<T> = HashSet<T, FxBuild>;
pub(crate) type FxMap<K, V> = HashMap<K, V, FxBuild>;

/// Interns strings to dense `u32` ids (first seen = 0).
#[derive(Clone, Debug, Default)]
pub struct Interner {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Interner {
    /// The id of `name`, adding it if new.
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        id
    }

    /// The id of `name` if it was interned.
    pub fn get(&self, name: &str) -> Option<u32> {
        self.ids.get(name).copied()
    }

    /// The string of id `id`.
    ///
    /// # Panics
    /// If `id` was not returned by this interner.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// Number of interned strings.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True if nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// Id of a predicate in a [`Database`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PredId(pub u32);

/// The ground facts of one predicate: flat tuples, a membership set and one CSR
/// index per argument position.
#[derive(Clone, Debug)]
pub struct Relation {
    name: String,
    arity: usize,
    tuples: Vec<u32>,
    set: FxSet<Box<[u32]>>,
    /// `index[pos].0[c]..index[pos].0[c+1]` is the range of `index[pos].1` holding
    /// the rows whose argument `pos` is constant `c`.
    index: Vec<(Vec<u32>, Vec<u32>)>,
    /// A query relation ([`DatabaseBuilder::add_query_relation`]): which rows are true
    /// now (`set` then holds exactly those tuples). `None`: every row is a fact.
    active: Option<Vec<bool>>,
}

impl Relation {
    fn new(name: &str, arity: usize) -> Self {
        Self {
            name: name.to_owned(),
            arity,
            tuples: Vec::new(),
            set: FxSet::default(),
            index: Vec::new(),
            active: None,
        }
    }

    /// Number of rows: the facts, or for a query relation every atom, true or not.
    pub fn n_rows(&self) -> usize {
        self.tuples
            .len()
            .checked_div(self.arity)
            .unwrap_or(self.set.len())
    }

    /// True for a query relation (its rows are atoms whose truth changes, e.g. the
    /// `recursive_T` atoms of a recursive target during Gibbs sampling).
    #[inline]
    pub fn is_query(&self) -> bool {
        self.active.is_some()
    }

    /// Whether row `row` is true now (always true outside a query relation).
    ///
    /// # Panics
    /// If `row >= n_rows()` in a query relation.
    #[inline]
    pub fn is_active(&self, row: u32) -> bool {
        self.active.as_ref().is_none_or(|a| a[row as usize])
    }

    /// Predicate name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of arguments.
    pub fn arity(&self) -> usize {
        self.arity
    }

    /// Number of (distinct) facts: the true rows of a query relation.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// True if the relation has no facts.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Fact `row` as constant ids (`arity` of them).
    #[inline]
    pub fn tuple(&self, row: u32) -> &[u32] {
        let s = row as usize * self.arity;
        &self.tuples[s..s + self.arity]
    }

    /// True if the ground tuple is a fact. `args.len()` must equal the arity.
    #[inline]
    pub fn contains(&self, args: &[u32]) -> bool {
        self.set.contains(args)
    }

    /// Rows whose argument `pos` equals constant `c` (empty if `c` never occurs there).
    ///
    /// # Complexity
    /// O(1) (a CSR slice).
    #[inline]
    pub fn rows_with(&self, pos: usize, c: u32) -> &[u32] {
        let (off, rows) = &self.index[pos];
        let c = c as usize;
        if c + 1 >= off.len() {
            return &[];
        }
        &rows[off[c] as usize..off[c + 1] as usize]
    }

    /// Distinct constants at argument `pos`, ascending by id.
    pub fn constants_at(&self, pos: usize) -> Vec<u32> {
        let (off, _) = &self.index[pos];
        (0..off.len().saturating_sub(1))
            .filter(|&c| off[c + 1] > off[c])
            .map(|c| c as u32)
            .collect()
    }

    fn insert(&mut self, args: &[u32]) -> bool {
        if self.set.contains(args) {
            return false;
        }
        self.set.insert(args.into());
        self.tuples.extend_from_slice(args);
        true
    }

    fn build_index(&mut self, n_consts: usize) {
        let n = self.tuples.len() / self.arity.max(1);
        self.index = (0..self.arity)
            .map(|pos| {
                let mut off = vec![0u32; n_consts + 1];
                for r in 0..n {
                    off[self.tuples[r * self.arity + pos] as usize + 1] += 1;
                }
                for c in 0..n_consts {
                    off[c + 1] += off[c];
                }
                let mut fill = off.clone();
                let mut rows = vec![0u32; n];
                for r in 0..n {
                    let c = self.tuples[r * self.arity + pos] as usize;
                    rows[fill[c] as usize] = r as u32;
                    fill[c] += 1;
                }
                (off, rows)
            })
            .collect();
    }
}

/// A set of ground facts over interned constants, indexed for joins.
///
/// Built with [`DatabaseBuilder`]; immutable afterwards (use
/// [`Database::into_builder`] to change it).
///
/// # Example
/// ```
/// use srl_boost::DatabaseBuilder;
/// let mut b = DatabaseBuilder::new();
/// b.add_fact("advisedby", &["ann", "bob"]).unwrap();
/// b.add_fact("advisedby", &["cat", "bob"]).unwrap();
/// let db = b.build();
/// let rel = db.relation(db.pred("advisedby").unwrap());
/// let bob = db.constant("bob").unwrap();
/// assert_eq!(rel.rows_with(1, bob).len(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct Database {
    consts: Interner,
    preds: Vec<Relation>,
    pred_ids: HashMap<String, PredId>,
}

impl Database {
    /// The predicate named `name`, if it has facts (or was declared).
    pub fn pred(&self, name: &str) -> Option<PredId> {
        self.pred_ids.get(name).copied()
    }

    /// The relation of predicate `p`.
    ///
    /// # Panics
    /// If `p` does not belong to this database.
    pub fn relation(&self, p: PredId) -> &Relation {
        &self.preds[p.0 as usize]
    }

    /// All relations, indexed by `PredId.0`.
    pub fn relations(&self) -> &[Relation] {
        &self.preds
    }

    /// The id of constant `name`, if it occurs.
    pub fn constant(&self, name: &str) -> Option<u32> {
        self.consts.get(name)
    }

    /// The name of constant `id`.
    ///
    /// # Panics
    /// If `id` is out of range.
    pub fn constant_name(&self, id: u32) -> &str {
        self.consts.name(id)
    }

    /// Number of distinct constants.
    pub fn n_constants(&self) -> usize {
        self.consts.len()
    }

    /// Total number of facts.
    pub fn n_facts(&self) -> usize {
        self.preds.iter().map(Relation::len).sum()
    }

    /// Sets the truth of row `row` of the query relation `p`
    /// ([`DatabaseBuilder::add_query_relation`]): what a Gibbs step over a recursive
    /// target's atoms changes. O(1): one hash-set insertion (which allocates the tuple's
    /// key) or removal; nothing when the truth does not change.
    ///
    /// # Errors
    /// [`BoostError::InvalidParam`] if `p` is not a query relation of this database or
    /// `row` is out of range.
    pub fn set_truth(&mut self, p: PredId, row: u32, value: bool) -> Result<(), BoostError> {
        let bad = |message: String| BoostError::InvalidParam {
            name: "query relation",
            message,
        };
        let rel = self
            .preds
            .get_mut(p.0 as usize)
            .ok_or_else(|| bad(format!("predicate id {} is not in the database", p.0)))?;
        let n_rows = rel.n_rows();
        let Some(active) = rel.active.as_mut() else {
            return Err(bad(format!("{} is not a query relation", rel.name)));
        };
        let r = row as usize;
        if r >= n_rows {
            return Err(bad(format!("row {row} of {} ({n_rows} rows)", rel.name)));
        }
        if active[r] == value {
            return Ok(());
        }
        active[r] = value;
        let t = &rel.tuples[r * rel.arity..(r + 1) * rel.arity];
        if value {
            rel.set.insert(t.into());
        } else {
            rel.set.remove(t);
        }
        Ok(())
    }

    /// Back to a builder (keeps the constant ids).
    pub fn into_builder(self) -> DatabaseBuilder {
        DatabaseBuilder {
            consts: self.consts,
            preds: self.preds,
            pred_ids: self.pred_ids,
        }
    }

    /// Distinct constants occurring at argument `pos` of predicate `name` (empty if the
    /// predicate is unknown or `pos` out of range).
    pub fn constants_at(&self, name: &str, pos: usize) -> Vec<u32> {
        match self.pred(name) {
            Some(p) if pos < self.relation(p).arity() => self.relation(p).constants_at(pos),
            _ => Vec::new(),
        }
    }

    /// Distinct constants that occur in some fact at a position whose mode type is `ty`
    /// (by the mode declarations in `bk`), plus the `range:` of `ty` if declared; sorted.
    pub fn constants_of_type(&self, bk: &crate::Background, ty: &str) -> Vec<u32> {
        let mut out = FxSet::default();
        for m in &bk.modes {
            for (pos, a) in m.args.iter().enumerate() {
                if a.ty == ty {
                    out.extend(self.constants_at(&m.pred, pos));
                }
            }
        }
        if let Some(r) = bk.ranges.get(ty) {
            out.extend(r.iter().filter_map(|c| self.constant(c)));
        }
        let mut v: Vec<u32> = out.into_iter().collect();
        v.sort_unstable();
        v
    }
}

/// Collects facts and constants, then [`build`](DatabaseBuilder::build)s the indexes.
#[derive(Clone, Debug, Default)]
pub struct DatabaseBuilder {
    consts: Interner,
    preds: Vec<Relation>,
    pred_ids: HashMap<String, PredId>,
}

impl DatabaseBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of constant `name`, interning it.
    pub fn intern(&mut self, name: &str) -> u32 {
        self.consts.intern(name)
    }

    /// Declares predicate `name/arity` (no facts needed).
    ///
    /// # Errors
    /// [`BoostError::Arity`] if `name` exists with another arity.
    pub fn declare(&mut self, name: &str, arity: usize) -> Result<PredId, BoostError> {
        if let Some(&p) = self.pred_ids.get(name) {
            let a = self.preds[p.0 as usize].arity;
            if a != arity {
                return Err(BoostError::Arity {
                    pred: name.to_owned(),
                    expected: a,
                    found: arity,
                });
            }
            return Ok(p);
        }
        let p = PredId(self.preds.len() as u32);
        self.preds.push(Relation::new(name, arity));
        self.pred_ids.insert(name.to_owned(), p);
        Ok(p)
    }

    /// [`declare`](Self::declare) for adding facts: a query relation takes none.
    fn declare_for_facts(&mut self, name: &str, arity: usize) -> Result<PredId, BoostError> {
        let p = self.declare(name, arity)?;
        if self.preds[p.0 as usize].is_query() {
            return Err(BoostError::InvalidParam {
                name: "query relation",
                message: format!("{name} is a query relation: its rows are set by set_truth"),
            });
        }
        Ok(p)
    }

    /// Adds the ground fact `name(args..)`; returns false if it was already present.
    ///
    /// # Errors
    /// [`BoostError::Arity`] on an arity clash; [`BoostError::InvalidParam`] for a query
    /// relation ([`add_query_relation`](Self::add_query_relation)).
    pub fn add_fact<S: AsRef<str>>(&mut self, name: &str, args: &[S]) -> Result<bool, BoostError> {
        let p = self.declare_for_facts(name, args.len())?;
        let ids: Vec<u32> = args
            .iter()
            .map(|a| self.consts.intern(a.as_ref()))
            .collect();
        Ok(self.preds[p.0 as usize].insert(&ids))
    }

    /// Adds a fact given constant ids (from [`intern`](Self::intern)).
    ///
    /// # Errors
    /// [`BoostError::Arity`] on an arity clash; [`BoostError::InvalidParam`] for a query
    /// relation ([`add_query_relation`](Self::add_query_relation)).
    pub fn add_fact_ids(&mut self, name: &str, args: &[u32]) -> Result<bool, BoostError> {
        let p = self.declare_for_facts(name, args.len())?;
        Ok(self.preds[p.0 as usize].insert(args))
    }

    /// Adds the query relation `name/arity` over `atoms` (constant ids, flat, `arity` per
    /// atom) with the starting truth of each (`truth`, one per atom): a relation whose
    /// rows are fixed but whose facts are the rows currently true
    /// ([`Database::set_truth`] changes them; joins see only true rows). This is how a
    /// recursive target's atoms are tested in clause bodies (BoostSRL's `recursive_T`
    /// predicate, `setParam: recursion=true`). An atom listed twice gets one row (true
    /// if either copy is).
    ///
    /// # Returns
    /// The predicate and the row of each atom, in order.
    ///
    /// # Errors
    /// [`BoostError::InvalidParam`] if `atoms.len() != arity · truth.len()`, or if
    /// `name` already has facts (a recursive target's atoms are the examples, not
    /// stated facts); [`BoostError::Arity`] if `name` was declared with another arity.
    pub fn add_query_relation(
        &mut self,
        name: &str,
        arity: usize,
        atoms: &[u32],
        truth: &[bool],
    ) -> Result<(PredId, Vec<u32>), BoostError> {
        if arity == 0 || atoms.len() != arity * truth.len() {
            return Err(BoostError::InvalidParam {
                name: "query relation",
                message: format!(
                    "{name}/{arity}: {} constant ids for {} atoms",
                    atoms.len(),
                    truth.len()
                ),
            });
        }
        let p = self.declare(name, arity)?;
        let rel = &mut self.preds[p.0 as usize];
        if !rel.set.is_empty() || rel.is_query() {
            return Err(BoostError::InvalidParam {
                name: "query relation",
                message: format!(
                    "{name} already has facts; the atoms of a recursive target are its examples, they must not be stated as facts"
                ),
            });
        }
        let mut row_of: FxMap<&[u32], u32> = FxMap::default();
        let mut rows = Vec::with_capacity(truth.len());
        let mut active: Vec<bool> = Vec::new();
        for (atom, &t) in atoms.chunks_exact(arity).zip(truth) {
            let r = *row_of.entry(atom).or_insert_with(|| {
                rel.tuples.extend_from_slice(atom);
                active.push(false);
                (active.len() - 1) as u32
            });
            active[r as usize] |= t;
            rows.push(r);
        }
        for (r, &on) in active.iter().enumerate() {
            if on {
                rel.set
                    .insert(rel.tuples[r * arity..(r + 1) * arity].into());
            }
        }
        rel.active = Some(active);
        Ok((p, rows))
    }

    /// Removes every fact of predicate `name` and returns them (as constant-id tuples,
    /// flat, `arity` per tuple) with the arity; `None` if the predicate is unknown.
    pub fn take_facts(&mut self, name: &str) -> Option<(usize, Vec<u32>)> {
        let p = *self.pred_ids.get(name)?;
        let rel = &mut self.preds[p.0 as usize];
        rel.set.clear();
        rel.active = None;
        Some((rel.arity, std::mem::take(&mut rel.tuples)))
    }

    /// The facts of predicate `name` so far: its arity and the constant-id tuples, flat,
    /// `arity` ids per fact, in insertion order; `None` if the predicate is unknown.
    pub fn facts_of(&self, name: &str) -> Option<(usize, &[u32])> {
        let p = *self.pred_ids.get(name)?;
        let rel = &self.preds[p.0 as usize];
        Some((rel.arity, &rel.tuples))
    }

    /// The name of constant `id`.
    ///
    /// # Panics
    /// If `id` was not returned by [`DatabaseBuilder::intern`] (or an earlier fact).
    pub fn constant_name(&self, id: u32) -> &str {
        self.consts.name(id)
    }

    /// The id of constant `name`, if interned.
    pub fn constant_id(&self, name: &str) -> Option<u32> {
        self.consts.get(name)
    }

    /// Number of distinct constants so far.
    pub fn num_constants(&self) -> usize {
        self.consts.len()
    }

    /// Number of facts of `name` so far.
    pub fn n_facts_of(&self, name: &str) -> usize {
        self.pred_ids
            .get(name)
            .map_or(0, |p| self.preds[p.0 as usize].len())
    }

    /// Freezes the facts and builds the argument-position indexes.
    ///
    /// # Complexity
    /// O(total facts × arity + predicates × arity × constants).
    pub fn build(mut self) -> Database {
        let n = self.consts.len();
        for r in &mut self.preds {
            r.build_index(n);
        }
        Database {
            consts: self.consts,
            preds: self.preds,
            pred_ids: self.pred_ids,
        }
    }
}

/// Ground atoms of one target predicate with their labels (true = positive).
///
/// Constants are ids of the [`Database`] the examples were loaded with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Examples {
    /// Target predicate name.
    pub pred: String,
    /// Its arity.
    pub arity: usize,
    atoms: Vec<u32>,
    labels: Vec<bool>,
}

impl Examples {
    /// No examples yet of `pred/arity`.
    pub fn new(pred: &str, arity: usize) -> Self {
        Self {
            pred: pred.to_owned(),
            arity,
            atoms: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// Appends an example.
    ///
    /// # Panics
    /// If `args.len() != self.arity`.
    pub fn push(&mut self, args: &[u32], positive: bool) {
        assert_eq!(args.len(), self.arity, "example arity");
        self.atoms.extend_from_slice(args);
        self.labels.push(positive);
    }

    /// Number of examples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Arguments of example `i`.
    pub fn args(&self, i: usize) -> &[u32] {
        &self.atoms[i * self.arity..(i + 1) * self.arity]
    }

    /// Example `i` as an atom, `pred(c1,c2,…)`, with the constants' names from `db` (the
    /// database the examples were read into), as `srl boost predict --out` and srl-py's
    /// `Database.examples` print it.
    ///
    /// # Panics
    /// If `i >= len()`.
    pub fn atom(&self, i: usize, db: &Database) -> String {
        let args: Vec<&str> = self.args(i).iter().map(|&c| db.constant_name(c)).collect();
        format!("{}({})", self.pred, args.join(","))
    }

    /// Labels, one per example.
    pub fn labels(&self) -> &[bool] {
        &self.labels
    }

    /// Number of positives.
    pub fn n_pos(&self) -> usize {
        self.labels.iter().filter(|&&l| l).count()
    }

    /// Number of negatives.
    pub fn n_neg(&self) -> usize {
        self.len() - self.n_pos()
    }

    /// The examples at `idx`, in that order.
    pub fn subset(&self, idx: &[usize]) -> Examples {
        let mut out = Examples::new(&self.pred, self.arity);
        for &i in idx {
            out.push(self.args(i), self.labels[i]);
        }
        out
    }

    /// Keeps all positives and `ratio × #pos` negatives drawn uniformly without
    /// replacement (all negatives if there are fewer); order: positives then sampled
    /// negatives, each in original order. BoostSRL's `-negPosRatio`.
    pub fn subsample_negatives<R: rand::Rng + ?Sized>(&self, ratio: f64, rng: &mut R) -> Examples {
        let pos: Vec<usize> = (0..self.len()).filter(|&i| self.labels[i]).collect();
        let neg: Vec<usize> = (0..self.len()).filter(|&i| !self.labels[i]).collect();
        let want = ((pos.len() as f64) * ratio).round().max(0.0) as usize;
        let mut keep = if want >= neg.len() {
            neg
        } else {
            let mut chosen = rand::seq::index::sample(rng, neg.len(), want).into_vec();
            chosen.sort_unstable();
            chosen.into_iter().map(|k| neg[k]).collect()
        };
        let mut idx = pos;
        idx.append(&mut keep);
        self.subset(&idx)
    }
}

/// How a mode argument is bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArgKind {
    /// `+type`: an existing variable of that type.
    Input,
    /// `-type`: a new variable of that type.
    Output,
    /// `#type`: a constant (one candidate per constant seen there).
    Constant,
    /// `` `type ``: an existing variable of that type that is not one of the head's
    /// arguments (BoostSRL's `notHeadVarMode`, used on `recursive_T` predicates so that a
    /// recursive literal speaks of another atom than the example's own). Never a new
    /// variable.
    NotHead,
}

/// One argument of a mode declaration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeArg {
    /// Input, output or constant.
    pub kind: ArgKind,
    /// The type name (`person`, `course`, ...).
    pub ty: String,
}

/// A mode declaration `p(+t1,-t2,#t3)`; a predicate may have several.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeDecl {
    /// Predicate name.
    pub pred: String,
    /// One entry per argument.
    pub args: Vec<ModeArg>,
}

impl ModeDecl {
    /// Parses `p(+a,-b,#c)` (an optional `mode:` prefix and trailing `.` are allowed;
    /// `` `t `` is BoostSRL's "not a head variable" marker, [`ArgKind::NotHead`]; `!k`
    /// suffixes are dropped).
    ///
    /// # Errors
    /// A message when the text is not a mode.
    ///
    /// # Example
    /// ```
    /// use srl_boost::{ArgKind, ModeDecl};
    /// let m = ModeDecl::parse("mode: ta(+course, -person, #quarter).").unwrap();
    /// assert_eq!(m.pred, "ta");
    /// assert_eq!(m.args[2].kind, ArgKind::Constant);
    /// ```
    pub fn parse(text: &str) -> Result<ModeDecl, String> {
        let t = text.trim();
        let t = t.strip_prefix("mode:").unwrap_or(t).trim();
        let (name, args) = crate::reader::split_atom(t)?;
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            let a = a.trim();
            let (kind, rest) = match a.chars().next() {
                Some('+') => (ArgKind::Input, &a[1..]),
                Some('`') => (ArgKind::NotHead, &a[1..]),
                Some('-') => (ArgKind::Output, &a[1..]),
                Some('#') => (ArgKind::Constant, &a[1..]),
                _ => return Err(format!("mode argument `{a}` lacks +, -, # or `")),
            };
            let ty = rest.split('!').next().unwrap_or("").trim();
            if ty.is_empty() {
                return Err(format!("mode argument `{a}` has no type"));
            }
            out.push(ModeArg {
                kind,
                ty: ty.to_owned(),
            });
        }
        Ok(ModeDecl {
            pred: name.to_owned(),
            args: out,
        })
    }
}

impl std::fmt::Display for ModeDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}(", self.pred)?;
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let s = match a.kind {
                ArgKind::Input => '+',
                ArgKind::Output => '-',
                ArgKind::Constant => '#',
                ArgKind::NotHead => '`',
            };
            write!(f, "{s}{}", a.ty)?;
        }
        f.write_str(")")
    }
}

/// A background file's content: modes, settings and everything else it declared.
///
/// Lines that do not change learning are kept in [`notes`](Background::notes) with their
/// file and line so callers can report them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Background {
    /// Mode declarations, in file order (duplicates removed).
    pub modes: Vec<ModeDecl>,
    /// `setParam: key=value` settings, in order.
    pub settings: Vec<(String, String)>,
    /// `okIfUnknown: p/n` predicates.
    pub ok_if_unknown: Vec<String>,
    /// `bridger: p/n` predicates: only used in a node test together with a literal
    /// that consumes their output variables.
    pub bridgers: Vec<String>,
    /// `range: Type={a,b}` declarations: the constants of a type.
    pub ranges: std::collections::BTreeMap<String, Vec<String>>,
    /// `queryPred: p/n` declarations.
    pub query_preds: Vec<String>,
    /// The last `usePrologVariables:` value, if any.
    pub use_prolog_variables: Option<bool>,
    /// Ground facts written in the background file.
    pub facts: Vec<(String, Vec<String>)>,
    /// Lines accepted but without effect on learning (file:line: what). Front-ends
    /// print them as warnings: Prolog rules and `precompute:` blocks are among them, and
    /// a mode over a predicate that only such a rule defines matches no fact.
    pub notes: Vec<String>,
    /// Every file read into this background, in reading order (the file itself, then its
    /// `import:`ed files): the inputs an output must never overwrite.
    #[serde(default)]
    pub files: Vec<std::path::PathBuf>,
    /// Rules and `precompute:` blocks, evaluated into derived facts when a split is
    /// loaded ([`crate::rules`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<crate::rules::Rule>,
}

impl Background {
    /// Adds a mode unless an identical one exists.
    pub fn add_mode(&mut self, m: ModeDecl) {
        if !self.modes.contains(&m) {
            self.modes.push(m);
        }
    }

    /// The first mode of predicate `pred`, if any.
    pub fn mode_of(&self, pred: &str) -> Option<&ModeDecl> {
        self.modes.iter().find(|m| m.pred == pred)
    }

    /// The value of setting `key` (last one wins; keys compared case-insensitively).
    pub fn setting(&self, key: &str) -> Option<&str> {
        self.settings
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }
}
