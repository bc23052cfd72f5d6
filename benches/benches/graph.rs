//! Criterion benches for srl-graph (filled in by its issue).
fn main() {}
