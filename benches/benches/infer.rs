//! Criterion benches for srl-infer (filled in by its issue).
fn main() {}
