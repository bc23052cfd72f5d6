//! Criterion benches for srl-boost (filled in by its issue).
fn main() {}
