//! Naive Bayes on a seeded synthetic table: three binary features that each agree with a
//! binary class 80% of the time, learned with Laplace smoothing from 1000 rows and scored
//! on 1000 fresh rows (the Bayes-optimal accuracy of this model is about 0.90).
//!
//! `cargo run --release -p srl-bayes --example naive_bayes`
#![allow(clippy::print_stdout)]

use rand::{RngExt as _, SeedableRng as _};
use srl_bayes::{FeatureKind, NaiveBayesParams};

/// `n` rows of 3 binary features (row-major) and their classes.
fn sample(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> (Vec<f64>, Vec<u32>) {
    let (mut x, mut y) = (Vec::with_capacity(3 * n), Vec::with_capacity(n));
    for _ in 0..n {
        let c = u32::from(rng.random_bool(0.5));
        y.push(c);
        x.extend((0..3).map(|_| f64::from(u32::from(rng.random_bool(0.8)) ^ c ^ 1)));
    }
    (x, y)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let (x, y) = sample(1000, &mut rng);
    let kinds = [FeatureKind::Categorical { states: 2 }; 3];
    let nb = NaiveBayesParams::default().fit(&kinds, &x, &y, 2, None)?;
    let (tx, ty) = sample(1000, &mut rng);
    let mut correct = 0;
    for (row, &c) in tx.chunks(3).zip(&ty) {
        correct += usize::from(nb.predict(row)? == c);
    }
    println!("test accuracy {:.3}", correct as f64 / ty.len() as f64);
    Ok(())
}
