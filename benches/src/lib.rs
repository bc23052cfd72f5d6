//! Shared helpers for the criterion benches (none yet).
