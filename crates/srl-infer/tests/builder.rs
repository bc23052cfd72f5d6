//! `MrfBuilder` against the `MrfParts` path on random small models: the same model (every
//! part equal, tables pooled by first use, marginals bit for bit) and the same error when a
//! fault is injected that both paths see.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use srl_infer::{Exact, InferError, LoopyBp, MrfBuilder, MrfParts, PairTable, PairwiseMrf};

/// A fault both paths must refuse with the same error.
#[derive(Clone, Copy, Debug)]
enum Fault {
    None,
    NanUnary,
    InfTable,
    SelfLoop,
    TransposedTable,
    ZeroStates,
}

/// Index of `t` in `pool` by bit-identical values (a linear search, unlike the builder's
/// hash), appending it if new.
fn pool_index(pool: &mut Vec<PairTable>, t: &PairTable) -> u32 {
    let same = |a: &PairTable| {
        a.rows == t.rows
            && a.cols == t.cols
            && a.log_values.len() == t.log_values.len()
            && a.log_values
                .iter()
                .zip(&t.log_values)
                .all(|(x, y)| x.to_bits() == y.to_bits())
    };
    match pool.iter().position(same) {
        Some(i) => i as u32,
        None => {
            pool.push(t.clone());
            (pool.len() - 1) as u32
        }
    }
}

/// The same random model through both paths.
fn both_ways(
    seed: u64,
    fault: Fault,
) -> (
    Result<PairwiseMrf, InferError>,
    Result<PairwiseMrf, InferError>,
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = rng.random_range(1..=6usize);
    let mut ks: Vec<usize> = (0..n).map(|_| rng.random_range(1..=3)).collect();
    if let Fault::ZeroStates = fault {
        ks[rng.random_range(0..n)] = 0;
    }
    let mut b = MrfBuilder::new();
    let mut parts = MrfParts {
        num_states: ks.clone(),
        unary: vec![0.0; ks.iter().sum()],
        evidence: vec![None; n],
        ..MrfParts::default()
    };
    for (v, &k) in ks.iter().enumerate() {
        assert_eq!(b.add_variable(k), v);
    }
    let off: Vec<usize> = ks
        .iter()
        .scan(0, |s, &k| {
            *s += k;
            Some(*s - k)
        })
        .collect();
    // Unary rows for some variables, some set twice (the last one counts).
    for _ in 0..rng.random_range(0..=2 * n) {
        let v = rng.random_range(0..n);
        let row: Vec<f64> = (0..ks[v]).map(|_| rng.random_range(-2.0..2.0)).collect();
        b.set_unary(v, &row);
        parts.unary[off[v]..off[v] + ks[v]].copy_from_slice(&row);
    }
    if let Fault::NanUnary = fault
        && !parts.unary.is_empty()
    {
        let v = (0..n).find(|&v| ks[v] > 0).unwrap();
        let mut row = parts.unary[off[v]..off[v] + ks[v]].to_vec();
        row[ks[v] - 1] = f64::NAN;
        b.set_unary(v, &row);
        parts.unary[off[v]..off[v] + ks[v]].copy_from_slice(&row);
    }
    // Edges: each shape has two candidate tables (so tables repeat) plus fresh ones;
    // parallel edges and both orientations happen.
    let mut candidates: std::collections::HashMap<(usize, usize), [PairTable; 2]> =
        std::collections::HashMap::new();
    if n >= 2 {
        let m = rng.random_range(0..=2 * n);
        let bad_edge = rng.random_range(0..=m);
        for e in 0..=m {
            let u = rng.random_range(0..n);
            let mut v = rng.random_range(0..n - 1);
            if v >= u {
                v += 1;
            }
            let (ku, kv) = (ks[u], ks[v]);
            let mut table = if rng.random_bool(0.3) {
                PairTable::from_fn(ku, kv, |_, _| rng.random_range(-1.0..1.0))
            } else {
                let pair = candidates.entry((ku, kv)).or_insert_with(|| {
                    [
                        PairTable::from_fn(ku, kv, |a, c| ((a + 2 * c) as f64 * 0.37).sin()),
                        PairTable::potts(ku.max(kv), 0.5, 0.0),
                    ]
                });
                pair[usize::from(ku != kv || rng.random_bool(0.5))].clone()
            };
            if table.rows != ku || table.cols != kv {
                table = PairTable::from_fn(ku, kv, |a, c| if a == c { 0.5 } else { 0.0 });
            }
            let (eu, mut ev) = (u, v);
            if e == bad_edge {
                match fault {
                    Fault::InfTable if !table.log_values.is_empty() => {
                        let i = rng.random_range(0..table.log_values.len());
                        table.log_values[i] = f64::INFINITY;
                    }
                    Fault::SelfLoop => ev = eu,
                    Fault::TransposedTable if ku != kv => table = table.transposed(),
                    _ => {}
                }
            } else if e == m {
                continue; // the extra edge only exists to carry a fault
            }
            assert_eq!(b.add_edge(eu, ev, &table), parts.edges.len());
            parts.edges.push((eu as u32, ev as u32));
            let t = pool_index(&mut parts.tables, &table);
            parts.edge_tables.push(t);
        }
    }
    // Evidence, some variables observed twice (the last one counts).
    for _ in 0..rng.random_range(0..=n) {
        let v = rng.random_range(0..n);
        if ks[v] == 0 {
            continue;
        }
        let s = rng.random_range(0..ks[v]);
        b.observe(v, s);
        parts.evidence[v] = Some(s as u32);
    }
    (b.build(), PairwiseMrf::new(parts))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn builder_equals_parts(seed in any::<u64>()) {
        let (built, direct) = both_ways(seed, Fault::None);
        // Fault::None builds valid models: both paths must accept them.
        let (b, d) = (built.unwrap(), direct.unwrap());
        prop_assert_eq!(b.to_parts(), d.to_parts());
        let (mb, md) = (LoopyBp::default().run(&b), LoopyBp::default().run(&d));
        prop_assert_eq!(mb.node_all(), md.node_all());
        let (eb, ed) = (Exact::default().marginals(&b).unwrap(), Exact::default().marginals(&d).unwrap());
        prop_assert_eq!(eb.node_all(), ed.node_all());
        prop_assert_eq!(eb.log_partition(), ed.log_partition());
    }

    #[test]
    fn builder_refuses_what_parts_refuses(seed in any::<u64>(), which in 0..5usize) {
        let fault = [
            Fault::NanUnary,
            Fault::InfTable,
            Fault::SelfLoop,
            Fault::TransposedTable,
            Fault::ZeroStates,
        ][which];
        let (built, direct) = both_ways(seed, fault);
        prop_assert_eq!(built.is_ok(), direct.is_ok());
        prop_assert_eq!(
            built.err().map(|e| e.to_string()),
            direct.err().map(|e| e.to_string())
        );
    }
}

/// The faults do fire (the property above would pass vacuously if none were injected).
#[test]
fn faults_are_injected() {
    for (fault, expect) in [
        (Fault::NanUnary, "not finite"),
        (Fault::InfTable, "not finite"),
        (Fault::SelfLoop, "self-loop"),
        (Fault::ZeroStates, "has no states"),
    ] {
        let hits = (0..200)
            .filter(|&s| {
                both_ways(s, fault)
                    .0
                    .err()
                    .is_some_and(|e| e.to_string().contains(expect))
            })
            .count();
        assert!(
            hits > 20,
            "{fault:?}: {hits} of 200 seeds fail with {expect:?}"
        );
    }
    let shape = (0..200)
        .filter(|&s| {
            matches!(
                both_ways(s, Fault::TransposedTable).0,
                Err(InferError::TableShape { .. })
            )
        })
        .count();
    assert!(shape > 20, "TransposedTable: {shape} of 200");
}
