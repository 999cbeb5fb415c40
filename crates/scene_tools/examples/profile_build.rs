//! Instruction-count harness for the BVH build of the RX60 (7 links, 22,560 triangles), for
//! `valgrind --tool=callgrind`: `target/release/examples/profile_build [repetitions]`.

use nalgebra::Point3;
use rpq_proximity::Model;

/// An indexed triangle mesh.
type Mesh = (Vec<Point3<f64>>, Vec<[u32; 3]>);

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../meshes/rx60b");
    let meshes: Vec<Mesh> = [
        "base_link",
        "link_1",
        "link_2",
        "link_3",
        "link_4",
        "link_5",
        "link_6",
    ]
    .iter()
    .map(|l| {
        let m = rpq_base::mesh::read_stl_file(std::path::Path::new(&format!("{dir}/{l}.stl")))
            .expect("mesh");
        (
            m.vertices.into_iter().map(Point3::from).collect(),
            m.triangles,
        )
    })
    .collect();
    let mut best = f64::INFINITY;
    for _ in 0..n {
        let t = std::time::Instant::now();
        for (v, tr) in &meshes {
            std::hint::black_box(Model::new(v.clone(), tr.clone()).expect("valid"));
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!("build of 7 links: best of {n} {:.2} ms", best * 1e3);
}
