//! What every rpq-ros library shares, kept small and free of ROS types:
//!
//! * [`rng::SplitMix64`]: the suite's one seeded random generator (uniform and Gaussian draws),
//!   so a seed reproduces a simulation or a benchmark on every platform;
//! * [`file`](mod@file): bounded reads of user-named files (regular files only, size limit,
//!   never a device, FIFO or `/proc` entry) and [`file::FileArea`], the directory a service may
//!   read or write in, which refuses `..`, absolute paths, symlinks that leave it, special files
//!   and names with control characters;
//! * [`mesh`]: STL parsing (binary and ASCII) and the one mesh validation rule (scale-invariant
//!   degenerate-triangle test) that `rpq_kinematics` and `rpq_proximity` both apply.
//!
//! ```
//! use rpq_base::rng::SplitMix64;
//! let mut a = SplitMix64::new(7);
//! let mut b = SplitMix64::new(7);
//! assert_eq!(a.next_u64(), b.next_u64());
//! assert!((0.0..1.0).contains(&a.uniform()));
//! ```
#![warn(missing_docs)]

pub mod file;
pub mod mesh;
pub mod rng;

pub use file::{FileArea, FileError};
pub use rng::SplitMix64;

/// `println!` for command-line tools whose output may be cut short (`tool | head -3`): a
/// closed stdout (broken pipe) drops the line instead of panicking, so the tool still finishes
/// its work (files written) and its exit status says how the work went.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stdout(), $($arg)*);
    }};
}

/// `print!` with the closed-stdout behaviour of [`outln!`].
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::write!(::std::io::stdout(), $($arg)*);
    }};
}
