//! Shared helpers for the benchmarks and reproductions.
