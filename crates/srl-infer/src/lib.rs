//! srl-infer (placeholder, filled in by its issue).
