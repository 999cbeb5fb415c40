//! Diagnostic: how many triangle pairs lie close to the minimum distance (near ties)?
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rpq_proximity::*;
fn main() {
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
    for _ in 0..12 {
        let dirv = Vector3::new(rnd(), rnd(), rnd());
        let t = ba.center.coords + dirv * reach * 0.8 - bb.center.coords;
        let r =
            UnitQuaternion::from_scaled_axis(Vector3::new(rnd() * 3.0, rnd() * 3.0, rnd() * 3.0));
        let p = Isometry3::from_parts(Translation3::from(t), r);
        let d = distance_local(&p, &a, &b, &DistanceRequest::default(), &mut ws).unwrap();
        let (bv, tt) = ws.last_counts();
        if d.distance == 0.0 {
            continue;
        }
        // all pairs distances (only those whose vertices are near)
        let mut within = [0usize; 4];
        let tb: Vec<_> = (0..b.num_triangles())
            .map(|j| b.triangle(j).map(|q| p * q))
            .collect();
        for i in 0..a.num_triangles() {
            let ta = a.triangle(i);
            for tbj in &tb {
                let dd = triangle::distance(&ta, tbj).0;
                for (k, f) in [1.0 + 1e-9, 1.01, 1.1, 1.5].iter().enumerate() {
                    if dd < d.distance * f {
                        within[k] += 1;
                    }
                }
            }
        }
        println!(
            "d {:.4}: bv {bv} tri {tt}; pairs within +1e-9 {}, +1% {}, +10% {}, +50% {}",
            d.distance, within[0], within[1], within[2], within[3]
        );
    }
}
