//! Shared helpers of the tools' integration tests.
#![allow(dead_code)]

use std::sync::OnceLock;

use rpq_scene::{eval, generate_collision_matrix, GeneratorSettings, Robot, Scenario};

/// The RX60B of the repository, loaded once.
pub fn rx60() -> &'static Robot {
    static R: OnceLock<Robot> = OnceLock::new();
    R.get_or_init(|| eval::rx60().expect("rx60 loads"))
}

/// Two facing arms at `d` with a generated collision matrix.
pub fn pair_with_cm(d: f64) -> Scenario {
    let mut s = eval::pair_scenario(rx60(), d).unwrap();
    let cm = generate_collision_matrix(&s, &GeneratorSettings::default(), None).unwrap();
    s.set_collision_matrix(cm).unwrap();
    s
}

/// Every `n`-th configuration pair of the 96 × 96 grid, offset by `off`.
pub fn grid_subset(n: usize, off: usize) -> Vec<usize> {
    (off..96 * 96).step_by(n).collect()
}
