//! uK-NN (Zadrozny et al. 2009): K-nearest neighbours whose training examples carry
//! context weights `P(c = c_t | x, y) / P(c = c_t)`. Two seeded Gaussian classes; the
//! weights come from the true class-conditional densities (any probabilistic classifier
//! may supply them); plain voting against weighted voting and weighted distance.
//!
//! `cargo run --release -p srl-learn --example uknn`
#![allow(clippy::print_stdout)]

use rand::SeedableRng as _;
use rand_distr::{Distribution as _, Normal};
use srl_learn::uknn::{Metric, UknnParams, Weighting};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let noise = Normal::new(0.0, 1.0)?;
    // n points in 2-d, class c centred at (c, c); returns points and labels.
    let mut sample = |n: usize| -> (Vec<f64>, Vec<u32>) {
        let y: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
        let x = y
            .iter()
            .flat_map(|&c| [f64::from(c), f64::from(c)])
            .map(|m| m + noise.sample(&mut rng))
            .collect();
        (x, y)
    };
    let (x, y) = sample(400);
    let (tx, ty) = sample(400);
    // Context weight of a training example: P(its class | x) / P(its class) = 2 P(c | x).
    let weight = |p: &[f64], c: u32| {
        let d = |m: f64| (-(p[0] - m).powi(2) / 2.0 - (p[1] - m).powi(2) / 2.0).exp();
        2.0 * d(f64::from(c)) / (d(0.0) + d(1.0))
    };
    let weights: Vec<f64> = x.chunks(2).zip(&y).map(|(p, &c)| weight(p, c)).collect();
    for weighting in [Weighting::Voting, Weighting::Distance, Weighting::Both] {
        let model = UknnParams {
            k: 15,
            metric: Metric::Euclidean,
            weighting,
        }
        .fit(x.clone(), 2, y.clone(), 2)?;
        let mut correct = 0;
        for (q, &c) in tx.chunks(2).zip(&ty) {
            correct += usize::from(model.predict(q, &weights)?.class == c);
        }
        println!(
            "{weighting:?}: accuracy {:.3}",
            correct as f64 / ty.len() as f64
        );
    }
    Ok(())
}
