//! Microbenchmark of the mesh engine against parry3d-f64 on RX60 link meshes.
//!
//! `cargo run --release -p rpq_proximity --example engine_bench [-- N]`
//! Prints µs per query for ours and parry's, their ratio, and checks the answers agree.

use std::time::Instant;

use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use parry3d_f64::math::{Pose, Rotation, Vector};
use parry3d_f64::shape::TriMesh;
use rpq_base::SplitMix64;
use rpq_proximity::*;

type RawMesh = (Vec<Point3<f64>>, Vec<[u32; 3]>);

fn to_parry(p: &Isometry3<f64>) -> Pose {
    let q = p.rotation.quaternion();
    Pose::from_parts(
        Vector::new(p.translation.x, p.translation.y, p.translation.z),
        Rotation::from_xyzw(q.i, q.j, q.k, q.w),
    )
}

fn parry_mesh(m: &Model) -> TriMesh {
    let v = m
        .vertices()
        .iter()
        .map(|p| Vector::new(p.x, p.y, p.z))
        .collect();
    TriMesh::new(v, m.triangles().to_vec()).unwrap()
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
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
    // build time (whole robot), best of 5
    let mut best_ours = f64::INFINITY;
    let mut best_parry = f64::INFINITY;
    let mut models = Vec::new();
    let mut tris = 0;
    for _ in 0..5 {
        let pre: Vec<RawMesh> = bytes
            .iter()
            .map(|b| {
                let m = rpq_base::mesh::parse_stl(b).unwrap();
                (
                    m.vertices.into_iter().map(Point3::from).collect(),
                    m.triangles,
                )
            })
            .collect();
        let pre2 = pre.clone();
        let t0 = Instant::now();
        models = pre
            .into_iter()
            .map(|(v, t)| Model::new(v, t).unwrap())
            .collect();
        best_ours = best_ours.min(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        let pm: Vec<TriMesh> = pre2
            .into_iter()
            .map(|(v, t)| {
                TriMesh::new(v.iter().map(|p| Vector::new(p.x, p.y, p.z)).collect(), t).unwrap()
            })
            .collect();
        best_parry = best_parry.min(t0.elapsed().as_secs_f64());
        tris = pm.iter().map(|m| m.indices().len()).sum();
    }
    println!(
        "build robot ({tris} tris, 7 links): ours {:.2} ms, parry {:.2} ms, ratio {:.2}",
        best_ours * 1e3,
        best_parry * 1e3,
        best_parry / best_ours
    );
    let pairs = [(2usize, 3usize), (1, 2), (3, 6), (2, 4), (0, 1)];
    let mut tot = [0.0f64; 6];
    for &(i, j) in &pairs {
        let (a, b) = (&models[i], &models[j]);
        let (pa, pb) = (parry_mesh(a), parry_mesh(b));
        let ba = a.bounding_box();
        let bb = b.bounding_box();
        let reach = ba.half_extents.norm() + bb.half_extents.norm();
        let mut rng = SplitMix64::new(0x9E3779B97F4A7C15 ^ (i * 31 + j) as u64);
        let poses: Vec<Isometry3<f64>> = (0..n)
            .map(|_| {
                let dir = Vector3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                );
                let t = ba.center.coords + dir * reach * 0.8 - bb.center.coords;
                let r = UnitQuaternion::from_scaled_axis(Vector3::new(
                    rng.range(-3.0, 3.0),
                    rng.range(-3.0, 3.0),
                    rng.range(-3.0, 3.0),
                ));
                Isometry3::from_parts(Translation3::from(t), r)
            })
            .collect();
        let pposes: Vec<Pose> = poses.iter().map(to_parry).collect();
        let id = Isometry3::identity();
        let pid = Pose::IDENTITY;
        let mut ws = QueryWorkspace::default();
        // collision
        let t0 = Instant::now();
        let ours: Vec<bool> = poses
            .iter()
            .map(|p| intersects(&id, a, p, b, &mut ws))
            .collect();
        let t_ours = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        let theirs: Vec<bool> = pposes
            .iter()
            .map(|p| {
                parry3d_f64::query::intersection_test(&pid, &pa, p, &pb)
                    .unwrap()
                    .intersecting
            })
            .collect();
        let t_parry = t0.elapsed().as_secs_f64();
        let hits = ours.iter().filter(|&&x| x).count();
        let diff = ours.iter().zip(&theirs).filter(|(x, y)| x != y).count();
        println!(
            "collide {}x{} ({}x{} tris): ours {:.2} µs, parry {:.2} µs, ratio {:.2}; colliding {hits}/{n}, disagreements {diff}",
            names[i], names[j], a.num_triangles(), b.num_triangles(),
            t_ours / n as f64 * 1e6, t_parry / n as f64 * 1e6, t_parry / t_ours
        );
        tot[0] += t_ours;
        tot[1] += t_parry;
        // distance (exact)
        let req = DistanceRequest::default();
        let t0 = Instant::now();
        let ours: Vec<f64> = poses
            .iter()
            .map(|p| distance(&id, a, p, b, &req, &mut ws).unwrap().distance)
            .collect();
        let t_ours = t0.elapsed().as_secs_f64();
        let mut stats = [[0usize; 3]; 2];
        for p in poses.iter().take(200) {
            let d = distance(&id, a, p, b, &req, &mut ws).unwrap().distance;
            let (x, y) = ws.last_counts();
            let k = usize::from(d > 0.0);
            stats[k][0] += 1;
            stats[k][1] += x;
            stats[k][2] += y;
        }
        for (k, name) in ["touching", "separated"].iter().enumerate() {
            let c = stats[k][0].max(1);
            println!(
                "  distance {name} ({}): mean BV tests {}, triangle tests {}",
                stats[k][0],
                stats[k][1] / c,
                stats[k][2] / c
            );
        }
        let nd = if std::env::var_os("NO_PARRY").is_some() {
            1
        } else {
            n.min(300)
        };
        let t0 = Instant::now();
        let theirs: Vec<f64> = pposes[..nd]
            .iter()
            .map(|p| {
                parry3d_f64::query::distance(&pid, &pa, p, &pb)
                    .unwrap()
                    .distance
            })
            .collect();
        let t_parry = t0.elapsed().as_secs_f64() / nd as f64 * n as f64;
        let maxerr = ours
            .iter()
            .zip(&theirs)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        println!(
            "distance: ours {:.2} µs, parry {:.2} µs (on {nd}), ratio {:.1}; max |diff| {maxerr:.2e}",
            t_ours / n as f64 * 1e6, t_parry / n as f64 * 1e6, t_parry / t_ours
        );
        tot[2] += t_ours;
        tot[3] += t_parry;
        // distance without the cached initial guess (fresh workspace each time)
        let t0 = Instant::now();
        for p in &poses {
            let mut w = QueryWorkspace::default();
            std::hint::black_box(distance(&id, a, p, b, &req, &mut w));
        }
        let t_cold = t0.elapsed().as_secs_f64();
        // tolerance 1 cm
        let t0 = Instant::now();
        let tol: usize = poses
            .iter()
            .filter(|p| tolerance(&id, a, p, b, 0.01, &mut ws).closer_than)
            .count();
        let t_tol = t0.elapsed().as_secs_f64();
        let tol_ref = ours.iter().filter(|&&d| d < 0.01).count();
        println!(
            "  cold-cache distance {:.2} µs; tolerance(1 cm) {:.2} µs ({tol} closer, distance says {tol_ref})",
            t_cold / n as f64 * 1e6, t_tol / n as f64 * 1e6
        );
        tot[4] += t_cold;
        tot[5] += t_tol;
    }
    println!(
        "TOTAL collide ratio {:.2}, distance ratio {:.1} (cold {:.1})",
        tot[1] / tot[0],
        tot[3] / tot[2],
        tot[3] / tot[4]
    );
}
