//! Instruction-count harness for the exact distance of the 49 RX60 link pairs (no bound), for
//! `valgrind --tool=callgrind`: `cargo build --release -p rpq_scene_tools --example
//! profile_distance && valgrind --tool=callgrind target/release/examples/profile_distance 40`.

use rpq_proximity::{DistanceRequest, QueryWorkspace};
use rpq_scene::eval;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let mode = std::env::args().nth(2).unwrap_or_else(|| "distance".into());
    let proto = eval::rx60().expect("rx60");
    let g = eval::grid(&proto);
    let total = g.len() * g.len();
    let mut s = eval::pair_scenario(&proto, 0.6).expect("scene");
    let mut ws = QueryWorkspace::default();
    let mut sum = 0.0;
    let mut hits = 0usize;
    let (mut bvs, mut tris) = (0usize, 0usize);
    let t = std::time::Instant::now();
    for c in 0..n {
        let k = c * total / n;
        eval::set_pair(&mut s, &g, k).expect("grid");
        if std::env::var_os("COLD").is_some() {
            ws.clear_cache();
        }
        let (oa, ob) = (&s.objects()[0], &s.objects()[1]);
        for i in 0..oa.num_bodies() {
            for j in 0..ob.num_bodies() {
                let (pa, pb) = (&s.body_poses(0)[i], &s.body_poses(1)[j]);
                let (ma, mb) = (&oa.body(i).model, &ob.body(j).model);
                if mode == "collide" {
                    hits += usize::from(rpq_proximity::intersects(pa, ma, pb, mb, &mut ws));
                } else {
                    if std::env::var_os("TWICE").is_some() {
                        let _ = rpq_proximity::distance(
                            pa,
                            ma,
                            pb,
                            mb,
                            &DistanceRequest::exact(),
                            &mut ws,
                        );
                    }
                    let r =
                        rpq_proximity::distance(pa, ma, pb, mb, &DistanceRequest::exact(), &mut ws)
                            .expect("no bound");
                    sum += r.distance;
                    let (bv, tri) = ws.last_counts();
                    bvs += bv;
                    if std::env::var_os("DUMP").is_some() {
                        eprintln!("{i} {j} {:.4} {bv} {tri}", r.distance);
                    }
                    tris += tri;
                }
            }
        }
    }
    println!(
        "mean per pair query: {} BV tests, {} triangle tests",
        bvs / (49 * n),
        tris / (49 * n)
    );
    println!(
        "{n} configurations: {:.3} ms each, sum {sum:.9}, hits {hits}",
        t.elapsed().as_secs_f64() * 1e3 / n as f64
    );
}
