//! Runs `examples/mrf_inference.rs` (the MRF user program of issue 15) inside
//! `cargo test`, so CI, which only compiles examples, also executes it.

#[path = "../examples/mrf_inference.rs"]
mod mrf_inference;

#[test]
fn mrf_inference_example_runs() {
    mrf_inference::main().expect("examples/mrf_inference.rs");
}
