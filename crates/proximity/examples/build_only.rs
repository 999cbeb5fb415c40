//! Builds the RX60 link models repeatedly (for profiling the BVH build).
fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../meshes/rx60b");
    let names = ["base_link", "link_1", "link_2", "link_3", "link_4", "link_5", "link_6"];
    let bytes: Vec<Vec<u8>> = names.iter().map(|n| std::fs::read(format!("{dir}/{n}.stl")).unwrap()).collect();
    let mut best = f64::INFINITY;
    for _ in 0..20 {
        let t0 = std::time::Instant::now();
        for b in &bytes {
            std::hint::black_box(rpq_proximity::Model::from_stl_bytes(b).unwrap());
        }
        best = best.min(t0.elapsed().as_secs_f64());
    }
    println!("robot build incl. STL parse: best {:.2} ms", best * 1e3);
}
