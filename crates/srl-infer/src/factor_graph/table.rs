//! Log-domain tables over variable scopes: product, sum/max-out, evidence reduction (the
//! working tables of variable elimination).

use super::FactorGraph;
use crate::error::InferError;

/// A table over `vars` (last fastest) of natural-log values.
#[derive(Clone, Debug)]
pub(crate) struct LogTable {
    pub vars: Vec<u32>,
    pub cards: Vec<usize>,
    pub vals: Vec<f64>,
}

/// `ln Σ exp(x)` of a slice that may hold `-∞` (but no `+∞` or NaN); `-∞` when empty or
/// all `-∞`.
pub(crate) fn lse(xs: &[f64]) -> f64 {
    let m = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + xs.iter().map(|&x| (x - m).exp()).sum::<f64>().ln()
}

impl LogTable {
    /// Factor `f` of `g` with its variables clamped by `ev` fixed (the result's
    /// scope keeps the free variables in their order).
    pub fn reduced(g: &FactorGraph, f: usize, ev: &[Option<u32>]) -> Self {
        let scope = &g.factors()[f].vars;
        let table = g.factor_table(f);
        let k = g.num_states();
        // strides of the scope positions in the source table
        let mut stride = vec![0usize; scope.len()];
        let mut s = 1usize;
        for j in (0..scope.len()).rev() {
            stride[j] = s;
            s *= k[scope[j] as usize];
        }
        let mut base = 0usize;
        let mut vars = Vec::new();
        let mut cards = Vec::new();
        let mut free_strides = Vec::new();
        for (j, &v) in scope.iter().enumerate() {
            match ev[v as usize] {
                Some(x) => base += x as usize * stride[j],
                None => {
                    vars.push(v);
                    cards.push(k[v as usize]);
                    free_strides.push(stride[j]);
                }
            }
        }
        let size: usize = cards.iter().product();
        let mut vals = Vec::with_capacity(size);
        let mut ctr = vec![0usize; cards.len()];
        let mut idx = base;
        for _ in 0..size {
            vals.push(table[idx]);
            let mut j = cards.len();
            while j > 0 {
                j -= 1;
                ctr[j] += 1;
                idx += free_strides[j];
                if ctr[j] < cards[j] {
                    break;
                }
                idx -= free_strides[j] * cards[j];
                ctr[j] = 0;
            }
        }
        Self { vars, cards, vals }
    }

    /// The sum (product of potentials) of `inputs` as a table over `vars`/`cards`, which
    /// must contain every input variable. `size` = `Π cards`, checked by the caller.
    pub fn combine(
        inputs: &[&LogTable],
        vars: &[u32],
        cards: &[usize],
        size: usize,
    ) -> Result<Vec<f64>, InferError> {
        let r = vars.len();
        let strides: Vec<Vec<usize>> = inputs
            .iter()
            .map(|t| {
                let mut own = vec![0usize; t.vars.len()];
                let mut s = 1usize;
                for j in (0..t.vars.len()).rev() {
                    own[j] = s;
                    s *= t.cards[j];
                }
                vars.iter()
                    .map(|v| t.vars.iter().position(|u| u == v).map_or(0, |p| own[p]))
                    .collect()
            })
            .collect();
        let mut out = Vec::new();
        out.try_reserve_exact(size)
            .map_err(|_| InferError::TooLarge {
                what: "entries of a variable-elimination table to hold in memory",
                count: size,
            })?;
        let mut ctr = vec![0usize; r];
        let mut idx = vec![0usize; inputs.len()];
        for _ in 0..size {
            let mut s = 0.0;
            for (t, &i) in inputs.iter().zip(&idx) {
                s += t.vals[i];
            }
            out.push(s);
            let mut j = r;
            while j > 0 {
                j -= 1;
                ctr[j] += 1;
                for (i, st) in idx.iter_mut().zip(&strides) {
                    *i += st[j];
                }
                if ctr[j] < cards[j] {
                    break;
                }
                for (i, st) in idx.iter_mut().zip(&strides) {
                    *i -= st[j] * cards[j];
                }
                ctr[j] = 0;
            }
        }
        Ok(out)
    }
}
