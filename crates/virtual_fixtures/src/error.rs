//! The crate's single error type for bad input.

/// Bad input to a virtual-fixture constructor or step function.
///
/// Numerical failure inside a well-formed computation (e.g. an SVD that does not converge) is
/// reported as `Option::None` by the function concerned, never as an `Error`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A value that must be finite is NaN or infinite.
    #[error("{what} is not finite (NaN or infinite)")]
    NonFinite {
        /// Which input.
        what: &'static str,
    },
    /// A parameter is outside its documented range.
    #[error("{what} = {value} is out of range: {expected}")]
    OutOfRange {
        /// Which parameter.
        what: &'static str,
        /// The offending value.
        value: f64,
        /// The documented range.
        expected: &'static str,
    },
    /// A slice or matrix has the wrong number of elements.
    #[error("{what} has length {got}, expected {expected}")]
    WrongLength {
        /// Which input.
        what: &'static str,
        /// Length given.
        got: usize,
        /// Length (or bound) expected, in words.
        expected: &'static str,
    },
    /// Geometry that cannot define a guidance source (empty path, zero-length curve,
    /// degenerate triangle, zero normal, ...).
    #[error("degenerate geometry: {0}")]
    Degenerate(&'static str),
    /// A name that is not one of the accepted values.
    #[error("unknown {what}: `{name}`")]
    UnknownName {
        /// What kind of name, with the accepted values.
        what: &'static str,
        /// The name given.
        name: String,
    },
    /// A request that the current state does not allow (e.g. starting an empty sequence).
    #[error("{0}")]
    InvalidRequest(&'static str),
}
