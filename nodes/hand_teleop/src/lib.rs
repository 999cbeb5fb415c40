//! Data-glove calibration and human-to-robot hand mapping nodes (library part: pure conversions and settings used by the binaries).
#![warn(missing_docs)]
