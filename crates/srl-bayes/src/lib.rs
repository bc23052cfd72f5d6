//! srl-bayes (placeholder, filled in by its issue).
