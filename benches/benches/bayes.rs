//! Criterion benches for srl-bayes (filled in by its issue).
fn main() {}
