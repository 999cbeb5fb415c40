#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod cli;
pub mod error;
pub mod limits;
pub mod packages;
pub mod params;
pub mod parse;
pub mod resolve;
pub mod run;
pub mod subst;

pub use error::{LaunchError, Span};
pub use resolve::{resolve, Host, LaunchPlan, ProcessSpec, ResolveOptions};
