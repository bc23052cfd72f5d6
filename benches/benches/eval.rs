//! Criterion benches for srl-eval (filled in by its issue).
fn main() {}
