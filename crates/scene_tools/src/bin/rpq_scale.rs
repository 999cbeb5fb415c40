//! `rpq_scale`: how the engine's cost grows with mesh size (see `--help`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use clap::Parser;
use nalgebra::{Isometry3, Point3};
use rpq_proximity::{DistanceRequest, Model, QueryWorkspace};
use rpq_scene::eval::{self, set_pair};

/// Scale benchmark: the seven RX60B link meshes remeshed by midpoint subdivision (each level
/// splits every triangle into four: the same surface with 4× the triangles), from the
/// original 1,152-4,960 triangles per link up. Per level: BVH build time per link, boolean
/// collision and exact distance per link pair (the 49 pairs of two arms facing each other,
/// over grid configurations, single-threaded), with the growth per 10× triangles; the
/// distances must not change with the level (same surface). Writes the log-log plot
/// `scale.png`/`.svg` to `--out`.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Subdivision levels 0..=N (level 3: 74k-317k triangles per link; level 4: up to 1.3M).
    #[arg(long, default_value_t = 3)]
    levels: u32,
    /// Base distance of the two arms (m).
    #[arg(long, default_value_t = 0.6)]
    distance: f64,
    /// Configurations for the collision timing.
    #[arg(long, default_value_t = 200)]
    collision_samples: usize,
    /// Configurations for the distance timing.
    #[arg(long, default_value_t = 12)]
    distance_samples: usize,
    /// Output directory of the plot.
    #[arg(long, default_value = "target/rpq_scale")]
    out: std::path::PathBuf,
}

/// An indexed triangle mesh.
type Mesh = (Vec<Point3<f64>>, Vec<[u32; 3]>);

/// Splits every triangle into four at its edge midpoints (shared midpoints per edge).
fn subdivide(v: &[Point3<f64>], t: &[[u32; 3]]) -> Mesh {
    let mut v = v.to_vec();
    let mut mid: HashMap<(u32, u32), u32> = HashMap::with_capacity(t.len() * 2);
    let mut out = Vec::with_capacity(4 * t.len());
    for tri in t {
        let mut m = [0u32; 3];
        for k in 0..3 {
            let (a, b) = (tri[k], tri[(k + 1) % 3]);
            let key = (a.min(b), a.max(b));
            m[k] = *mid.entry(key).or_insert_with(|| {
                v.push(nalgebra::center(&v[a as usize], &v[b as usize]));
                (v.len() - 1) as u32
            });
        }
        out.push([tri[0], m[0], m[2]]);
        out.push([m[0], tri[1], m[1]]);
        out.push([m[2], m[1], tri[2]]);
        out.push([m[0], m[1], m[2]]);
    }
    (v, out)
}

fn picks(total: usize, n: usize) -> Vec<usize> {
    let n = n.clamp(1, total);
    (0..n).map(|i| i * total / n).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let proto = eval::rx60()?;
    let g = eval::grid(&proto);
    let total = g.len() * g.len();
    let mut s = eval::pair_scenario(&proto, args.distance)?;
    let nb = s.objects()[0].num_bodies();
    // poses of both arms at the sampled configurations
    let mut poses = |k: usize| -> Result<Vec<Isometry3<f64>>, Box<dyn std::error::Error>> {
        set_pair(&mut s, &g, k)?;
        let mut p = s.body_poses(0).to_vec();
        p.extend_from_slice(s.body_poses(1));
        Ok(p)
    };
    let col_poses: Vec<_> = picks(total, args.collision_samples)
        .into_iter()
        .map(&mut poses)
        .collect::<Result<_, _>>()?;
    let dist_poses: Vec<_> = picks(total, args.distance_samples)
        .into_iter()
        .map(&mut poses)
        .collect::<Result<_, _>>()?;
    let mut mesh: Vec<Mesh> = {
        let o = &eval::pair_scenario(&proto, args.distance)?.objects()[0].clone();
        (0..nb)
            .map(|i| {
                let m = &o.body(i).model;
                (m.vertices().to_vec(), m.triangles().to_vec())
            })
            .collect()
    };
    println!(
        "rpq_scale: RX60B links remeshed by midpoint subdivision; two arms {} m apart; {} collision / {} distance configurations; single-threaded",
        args.distance,
        col_poses.len(),
        dist_poses.len()
    );
    println!("\n| level | triangles per link (min-max, mean) | build per link | collision per pair | exact distance per pair | max |Δd| vs level 0 |");
    println!("|---|---|---|---|---|---|");
    let mut rows: Vec<(f64, f64, f64, f64)> = Vec::new();
    let mut d0: Vec<f64> = Vec::new();
    let exact = DistanceRequest::exact();
    for level in 0..=args.levels {
        if level > 0 {
            mesh = mesh.iter().map(|(v, t)| subdivide(v, t)).collect();
        }
        let counts: Vec<usize> = mesh.iter().map(|(_, t)| t.len()).collect();
        let mean_tris = counts.iter().sum::<usize>() as f64 / nb as f64;
        // build: best of 3 (1 from level 3 on)
        let mut best = Duration::MAX;
        let mut models = Vec::new();
        for _ in 0..if level >= 3 { 1 } else { 3 } {
            let t = Instant::now();
            models = mesh
                .iter()
                .map(|(v, t)| Model::new(v.clone(), t.clone()))
                .collect::<Result<Vec<_>, _>>()?;
            best = best.min(t.elapsed());
        }
        let build_ms = best.as_secs_f64() * 1e3 / nb as f64;
        let mut ws = QueryWorkspace::default();
        // collision: all 49 pairs (no early exit), per pair query
        let t = Instant::now();
        let mut hits = 0usize;
        for p in &col_poses {
            for i in 0..nb {
                for j in 0..nb {
                    hits += usize::from(rpq_proximity::intersects(
                        &p[i],
                        &models[i],
                        &p[nb + j],
                        &models[j],
                        &mut ws,
                    ));
                }
            }
        }
        let col_us = t.elapsed().as_secs_f64() * 1e6 / (col_poses.len() * nb * nb) as f64;
        // exact distance, cold cache per configuration
        let mut dist_t = Duration::ZERO;
        let mut ds = Vec::new();
        for p in &dist_poses {
            ws.clear_cache();
            let t = Instant::now();
            for i in 0..nb {
                for j in 0..nb {
                    let r = rpq_proximity::distance(
                        &p[i],
                        &models[i],
                        &p[nb + j],
                        &models[j],
                        &exact,
                        &mut ws,
                    );
                    ds.push(r.map_or(f64::INFINITY, |r| r.distance));
                }
            }
            dist_t += t.elapsed();
        }
        let dist_us = dist_t.as_secs_f64() * 1e6 / (dist_poses.len() * nb * nb) as f64;
        if level == 0 {
            d0 = ds.clone();
        }
        let worst = ds
            .iter()
            .zip(&d0)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!(
            "| {level} | {}-{}, {:.0} | {build_ms:.2} ms | {col_us:.2} µs | {dist_us:.1} µs | {worst:.1e} m |",
            counts.iter().min().unwrap_or(&0),
            counts.iter().max().unwrap_or(&0),
            mean_tris
        );
        let _ = hits;
        rows.push((mean_tris, build_ms, col_us, dist_us));
    }
    if rows.len() >= 2 {
        let (f, l) = (rows[0], rows[rows.len() - 1]);
        let decades = (l.0 / f.0).log10();
        let per10 = |a: f64, b: f64| (b / a).powf(1.0 / decades);
        println!(
            "\ngrowth per 10× triangles (level 0 → {}): build {:.2}×, collision {:.2}×, exact distance {:.2}× (target ≤ 2×)",
            rows.len() - 1,
            per10(f.1, l.1),
            per10(f.2, l.2),
            per10(f.3, l.3)
        );
    }
    std::fs::create_dir_all(&args.out)?;
    let lg = |f: fn(&(f64, f64, f64, f64)) -> f64| -> Vec<(f64, f64)> {
        rows.iter().map(|r| (r.0.log10(), f(r).log10())).collect()
    };
    let (first, second) = rpq_plot::Figure::new(
        "Cost against mesh size (RX60B links, midpoint subdivision)",
        "log10 triangles per link",
        "log10 time (build: ms per link; queries: µs per pair)",
    )
    .line("BVH build (ms)", &lg(|r| r.1))
    .line("collision (µs)", &lg(|r| r.2))
    .line("exact distance (µs)", &lg(|r| r.3))
    .save(args.out.join("scale"))?;
    println!("plot: {} and {}", first.display(), second.display());
    Ok(())
}
