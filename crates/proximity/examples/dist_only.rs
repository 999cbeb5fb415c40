//! Runs a fixed set of distance (and collision) queries on two RX60 links, for instruction-count
//! A/B comparisons under `valgrind --tool=callgrind` (timings on a shared machine are noisy).
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rpq_proximity::*;
fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "distance".into());
    let n: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../meshes/rx60b");
    let a = Model::from_stl_file(format!("{dir}/link_2.stl")).unwrap();
    let b = Model::from_stl_file(format!("{dir}/link_3.stl")).unwrap();
    let ba = a.bounding_box();
    let bb = b.bounding_box();
    let reach = ba.half_extents.norm() + bb.half_extents.norm();
    let mut s = 0x1234567u64;
    let mut rnd = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let mut ws = QueryWorkspace::default();
    let mut acc = 0.0;
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        let dirv = Vector3::new(rnd(), rnd(), rnd());
        let t = ba.center.coords + dirv * reach * 0.8 - bb.center.coords;
        let r =
            UnitQuaternion::from_scaled_axis(Vector3::new(rnd() * 3.0, rnd() * 3.0, rnd() * 3.0));
        let p = Isometry3::from_parts(Translation3::from(t), r);
        if mode == "distance" {
            acc += distance_local(&p, &a, &b, &DistanceRequest::default(), &mut ws)
                .unwrap()
                .distance;
        } else {
            acc += f64::from(u8::from(intersects_local(&p, &a, &b, &mut ws)));
        }
    }
    println!(
        "{mode}: {n} queries, {:.1} µs each, checksum {acc}",
        t0.elapsed().as_secs_f64() / n as f64 * 1e6
    );
}
