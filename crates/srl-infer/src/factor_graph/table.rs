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

/// `ln Σ exp` of `vals` (a table over `vars`/`cards`, last fastest) onto the variables
/// `keep` (a subset of `vars`, in the order given).
pub(crate) fn sum_onto(vals: &[f64], vars: &[u32], cards: &[usize], keep: &[u32]) -> LogTable {
    let kcards: Vec<usize> = keep
        .iter()
        .map(|v| vars.iter().position(|u| u == v).map_or(1, |p| cards[p]))
        .collect();
    // stride of each of `vars` in the kept table (0 when summed out)
    let mut kstride = vec![0usize; keep.len()];
    let mut s = 1usize;
    for j in (0..keep.len()).rev() {
        kstride[j] = s;
        s *= kcards[j];
    }
    let size = s;
    let strides: Vec<usize> = vars
        .iter()
        .map(|v| keep.iter().position(|u| u == v).map_or(0, |p| kstride[p]))
        .collect();
    let mut max = vec![f64::NEG_INFINITY; size];
    let mut acc = vec![0.0f64; size];
    for pass in 0..2 {
        let mut ctr = vec![0usize; vars.len()];
        let mut idx = 0usize;
        for &x in vals {
            if pass == 0 {
                if x > max[idx] {
                    max[idx] = x;
                }
            } else if max[idx] > f64::NEG_INFINITY {
                acc[idx] += (x - max[idx]).exp();
            }
            let mut j = vars.len();
            while j > 0 {
                j -= 1;
                ctr[j] += 1;
                idx += strides[j];
                if ctr[j] < cards[j] {
                    break;
                }
                idx -= strides[j] * cards[j];
                ctr[j] = 0;
            }
        }
    }
    let out = max
        .iter()
        .zip(&acc)
        .map(|(&m, &a)| if m > f64::NEG_INFINITY { m + a.ln() } else { m })
        .collect();
    LogTable {
        vars: keep.to_vec(),
        cards: kcards,
        vals: out,
    }
}
