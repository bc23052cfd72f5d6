//! Criterion benches for srl-learn (filled in by its issue).
fn main() {}
