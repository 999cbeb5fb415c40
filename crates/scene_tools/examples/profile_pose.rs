//! Instruction-count harness for posing two RX60 arms (forward kinematics, link boxes, robot
//! boxes): `target/release/examples/profile_pose [configuration pairs]`.

use rpq_scene::eval;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let proto = eval::rx60().expect("rx60");
    let g = eval::grid(&proto);
    let total = g.len() * g.len();
    let mut s = eval::pair_scenario(&proto, 0.6).expect("scene");
    let t = std::time::Instant::now();
    for c in 0..n {
        eval::set_pair(&mut s, &g, (c * 7919) % total).expect("grid");
    }
    let el = t.elapsed();
    println!(
        "posing two arms: {:.3} µs per configuration pair ({n} pairs); box {:?}",
        el.as_secs_f64() * 1e6 / n as f64,
        s.object_box(1).center
    );
}
