//! The tokio UDP back end.
