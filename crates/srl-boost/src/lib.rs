//! srl-boost (placeholder, filled in by its issue).
