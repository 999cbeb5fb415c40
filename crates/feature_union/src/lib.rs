//! No code. This crate only declares dependencies with the features the whole workspace enables,
//! so that a node package built on its own (as colcon builds it) compiles its dependencies with
//! the same features as `cargo build --workspace` and can reuse that build's artifacts. See
//! `Cargo.toml` for the reasoning; `tests/colcon_check.sh` reports the crates that still differ.
#![warn(missing_docs)]
