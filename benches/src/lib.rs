//! Shared helpers for the criterion benches (none yet).

// The srl book's Rust code blocks, compiled and run as this crate's doc-tests.
#[cfg(doctest)]
#[path = "../../book/doctests.rs"]
mod book;
