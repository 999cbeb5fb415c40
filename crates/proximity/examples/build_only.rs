//! Builds the RX60 link models repeatedly (for profiling the BVH build).
//! Prints the best wall time of `Model::new` (STL already parsed) for the whole robot, and
//! of `Model::from_stl_bytes` (parse + validate + build).
use nalgebra::Point3;
use rpq_proximity::Model;

type RawMesh = (Vec<Point3<f64>>, Vec<[u32; 3]>);

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../meshes/rx60b");
    let names = [
        "base_link",
        "link_1",
        "link_2",
        "link_3",
        "link_4",
        "link_5",
        "link_6",
    ];
    let bytes: Vec<Vec<u8>> = names
        .iter()
        .map(|n| std::fs::read(format!("{dir}/{n}.stl")).unwrap())
        .collect();
    let raw: Vec<RawMesh> = bytes
        .iter()
        .map(|b| {
            let m = Model::from_stl_bytes(b).unwrap();
            (m.vertices().to_vec(), m.triangles().to_vec())
        })
        .collect();
    let reps = 30;
    let (mut best_new, mut best_stl) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..reps {
        let copies = raw.clone();
        let t0 = std::time::Instant::now();
        for (v, t) in copies {
            std::hint::black_box(Model::new(v, t).unwrap());
        }
        best_new = best_new.min(t0.elapsed().as_secs_f64());
        let t0 = std::time::Instant::now();
        for b in &bytes {
            std::hint::black_box(Model::from_stl_bytes(b).unwrap());
        }
        best_stl = best_stl.min(t0.elapsed().as_secs_f64());
    }
    println!(
        "robot ({} triangles): Model::new best {:.2} ms; from_stl_bytes best {:.2} ms",
        raw.iter().map(|r| r.1.len()).sum::<usize>(),
        best_new * 1e3,
        best_stl * 1e3
    );
}
