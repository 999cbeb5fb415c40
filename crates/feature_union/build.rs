//! Empty: the crate exists for its build-dependencies' features (see Cargo.toml).
fn main() {}
