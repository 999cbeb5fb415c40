//! `rpq_scale`: how the engine's cost grows with mesh size (see `--help`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use clap::Parser;
use nalgebra::{Isometry3, Point3};
use rpq_proximity::{DistanceRequest, Model, QueryWorkspace};
use rpq_scene::eval::{self, set_pair};

/// Scale benchmark: the seven RX60B link meshes remeshed by uniform subdivision (factor k
/// splits every edge into k equal parts and every triangle into k² similar ones: the same
/// surface with k² times the triangles), from the original 1,152-4,960 triangles per link up.
/// Per factor: BVH build time per link, boolean collision and exact distance per link pair
/// (the 49 pairs of two arms facing each other, over grid configurations, single-threaded),
/// the traversal's mean box and triangle tests per distance query, and the growth per 10×
/// triangles; the distances must not change with the factor (same surface). Writes the
/// log-log plot `scale.png`/`.svg` to `--out`.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Subdivision factors k (k² triangles per original triangle), ascending; the first is
    /// the reference of the distance check. The default spans 3.2k to 464k triangles per link
    /// on average (1,152 to 714k).
    #[arg(long, value_delimiter = ',', default_values_t = [1u32, 2, 4, 8, 12])]
    factors: Vec<u32>,
    /// Base distance of the two arms (m).
    #[arg(long, default_value_t = 0.6)]
    distance: f64,
    /// Configurations for the collision timing.
    #[arg(long, default_value_t = 200)]
    collision_samples: usize,
    /// Configurations for the distance timing.
    #[arg(long, default_value_t = 24)]
    distance_samples: usize,
    /// Timing rounds over all distance configurations (the fastest round counts: less
    /// disturbed by other load).
    #[arg(long, default_value_t = 3)]
    distance_rounds: usize,
    /// Output directory of the plot.
    #[arg(long, default_value = "target/rpq_scale")]
    out: std::path::PathBuf,
}

/// An indexed triangle mesh.
type Mesh = (Vec<Point3<f64>>, Vec<[u32; 3]>);

/// Splits every edge into `k` equal parts and every triangle into `k²` (the points of an edge
/// are shared by the triangles on both sides and computed from the edge's lower-index end, so
/// both see the same coordinates). `k = 1` returns the mesh unchanged.
fn subdivide(v: &[Point3<f64>], t: &[[u32; 3]], k: u32) -> Mesh {
    let mut v = v.to_vec();
    if k <= 1 {
        return (v, t.to_vec());
    }
    let kf = f64::from(k);
    // vertex of step s (1..k-1) from the lower-index end of edge (lo, hi)
    let mut edge_pts: HashMap<(u32, u32), u32> = HashMap::with_capacity(t.len() * 2);
    let mut out = Vec::with_capacity((k * k) as usize * t.len());
    // grid of one triangle: index of point (i, j) = i steps towards corner 1, j towards 2
    let mut grid = vec![0u32; ((k + 1) * (k + 1)) as usize];
    let at = |i: u32, j: u32| (i * (k + 1) + j) as usize;
    for tri in t {
        let [a, b, c] = tri.map(|x| v[x as usize]);
        // the point `s` steps along the edge from corner p to corner q
        let mut edge = |v: &mut Vec<Point3<f64>>, p: u32, q: u32, s: u32| -> u32 {
            let (lo, hi, s) = if p < q { (p, q, s) } else { (q, p, k - s) };
            let first = *edge_pts.entry((lo, hi)).or_insert_with(|| {
                let (pl, ph) = (v[lo as usize], v[hi as usize]);
                let base = v.len() as u32;
                for m in 1..k {
                    let w = f64::from(m) / kf;
                    v.push(pl + (ph - pl) * w);
                }
                base
            });
            first + s - 1
        };
        for i in 0..=k {
            for j in 0..=k - i {
                grid[at(i, j)] = match (i, j) {
                    (0, 0) => tri[0],
                    (i, 0) if i == k => tri[1],
                    (0, j) if j == k => tri[2],
                    (i, 0) => edge(&mut v, tri[0], tri[1], i),
                    (0, j) => edge(&mut v, tri[0], tri[2], j),
                    (i, j) if i + j == k => edge(&mut v, tri[1], tri[2], j),
                    (i, j) => {
                        let (wi, wj) = (f64::from(i) / kf, f64::from(j) / kf);
                        v.push(a + (b - a) * wi + (c - a) * wj);
                        (v.len() - 1) as u32
                    }
                };
            }
        }
        for i in 0..k {
            for j in 0..k - i {
                out.push([grid[at(i, j)], grid[at(i + 1, j)], grid[at(i, j + 1)]]);
                if i + j + 1 < k {
                    out.push([
                        grid[at(i + 1, j)],
                        grid[at(i + 1, j + 1)],
                        grid[at(i, j + 1)],
                    ]);
                }
            }
        }
    }
    (v, out)
}

/// A stopwatch of this thread's time on a CPU (Linux `/proc/thread-self/schedstat`: the time
/// the scheduler gave other processes on this shared machine is left out), or of wall time
/// where that file is missing.
#[derive(Clone, Copy)]
struct Clock {
    cpu: bool,
}

impl Clock {
    /// Wall time (for the short runs: the CPU time moves in scheduler ticks of a few ms).
    const WALL: Clock = Clock { cpu: false };

    fn new() -> Clock {
        Clock {
            cpu: thread_cpu().is_some(),
        }
    }

    fn name(self) -> &'static str {
        if self.cpu {
            "thread CPU time"
        } else {
            "wall time"
        }
    }

    /// Runs `f` and returns its result with the time it took.
    fn time<T>(self, f: impl FnOnce() -> T) -> (T, Duration) {
        let (c, w) = (if self.cpu { thread_cpu() } else { None }, Instant::now());
        let out = f();
        let took = match (c, thread_cpu()) {
            (Some(a), Some(b)) if self.cpu => b.saturating_sub(a),
            _ => w.elapsed(),
        };
        (out, took)
    }
}

/// Time this thread has run on a CPU (the first number of its schedstat, in nanoseconds).
fn thread_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

fn picks(total: usize, n: usize) -> Vec<usize> {
    let n = n.clamp(1, total);
    (0..n).map(|i| i * total / n).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if args.factors.is_empty() || args.factors.iter().any(|&k| k == 0 || k > 64) {
        return Err("--factors: one or more subdivision factors in 1..=64".into());
    }
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
    let original: Vec<Mesh> = {
        let o = &eval::pair_scenario(&proto, args.distance)?.objects()[0].clone();
        (0..nb)
            .map(|i| {
                let m = &o.body(i).model;
                (m.vertices().to_vec(), m.triangles().to_vec())
            })
            .collect()
    };
    println!(
        "rpq_scale: RX60B links remeshed by uniform subdivision (k² triangles per triangle); two arms {} m apart; {} collision / {} distance configurations (cold closest-pair cache per configuration); single-threaded",
        args.distance,
        col_poses.len(),
        dist_poses.len()
    );
    let clock = Clock::new();
    println!(
        "times: build and collision in wall time (build: best of 3 below 100k triangles per link); distance in {}, the fastest of {} rounds over all configurations",
        clock.name(),
        args.distance_rounds.max(1)
    );
    println!("\n| k | triangles per link (min-max, mean) | build per link | collision per pair | exact distance per pair | box / triangle tests per distance | max |Δd| vs first |");
    println!("|---|---|---|---|---|---|---|");
    let mut rows: Vec<(f64, f64, f64, f64)> = Vec::new();
    let mut d0: Vec<f64> = Vec::new();
    let exact = DistanceRequest::exact();
    let started = Instant::now();
    for &k in &args.factors {
        let mesh: Vec<Mesh> = original.iter().map(|(v, t)| subdivide(v, t, k)).collect();
        let counts: Vec<usize> = mesh.iter().map(|(_, t)| t.len()).collect();
        let mean_tris = counts.iter().sum::<usize>() as f64 / nb as f64;
        // build: best of 3 (1 from 100k triangles per link on)
        let mut best = Duration::MAX;
        let mut models = Vec::new();
        for _ in 0..if mean_tris >= 1e5 { 1 } else { 3 } {
            models.clear();
            let input = mesh.clone();
            let (built, took) = Clock::WALL.time(|| {
                input
                    .into_iter()
                    .map(|(v, t)| Model::new(v, t))
                    .collect::<Result<Vec<_>, _>>()
            });
            models = built?;
            best = best.min(took);
        }
        drop(mesh);
        let build_ms = best.as_secs_f64() * 1e3 / nb as f64;
        let mut ws = QueryWorkspace::default();
        // collision: all 49 pairs (no early exit), per pair query
        let (hits, col_t) = Clock::WALL.time(|| {
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
            hits
        });
        let col_us = col_t.as_secs_f64() * 1e6 / (col_poses.len() * nb * nb) as f64;
        // exact distance, cold closest-pair cache per configuration; the time is the fastest
        // of `--distance-rounds` rounds over all configurations (the same work each round)
        let mut dist_t = Duration::MAX;
        let mut ds = Vec::new();
        let (mut bv_tests, mut tri_tests) = (0usize, 0usize);
        for round in 0..args.distance_rounds.max(1) {
            let ((), took) = clock.time(|| {
                for p in &dist_poses {
                    ws.clear_cache();
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
                            if round == 0 {
                                let (bv, tri) = ws.last_counts();
                                bv_tests += bv;
                                tri_tests += tri;
                                ds.push(r.map_or(f64::INFINITY, |r| r.distance));
                            }
                        }
                    }
                }
            });
            dist_t = dist_t.min(took);
        }
        let queries = (dist_poses.len() * nb * nb) as f64;
        let dist_us = dist_t.as_secs_f64() * 1e6 / queries;
        if d0.is_empty() {
            d0 = ds.clone();
        }
        let worst = ds
            .iter()
            .zip(&d0)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        println!(
            "| {k} | {}-{}, {:.0} | {build_ms:.2} ms | {col_us:.2} µs | {dist_us:.1} µs | {:.0} / {:.0} | {worst:.1e} m |",
            counts.iter().min().unwrap_or(&0),
            counts.iter().max().unwrap_or(&0),
            mean_tris,
            bv_tests as f64 / queries,
            tri_tests as f64 / queries,
        );
        let _ = hits;
        rows.push((mean_tris, build_ms, col_us, dist_us));
        // the same surface: a distance that moved is a defect, not a figure
        if worst > 1e-9 {
            return Err(format!("k = {k}: a pair distance moved by {worst:e} m").into());
        }
    }
    if rows.len() >= 2 {
        let (f, l) = (rows[0], rows[rows.len() - 1]);
        let decades = (l.0 / f.0).log10();
        let per10 = |a: f64, b: f64| (b / a).powf(1.0 / decades);
        // least-squares slope of log time against log triangles over all factors
        let fit = |g: fn(&(f64, f64, f64, f64)) -> f64| {
            let n = rows.len() as f64;
            let xs: Vec<f64> = rows.iter().map(|r| r.0.log10()).collect();
            let ys: Vec<f64> = rows.iter().map(|r| g(r).log10()).collect();
            let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
            let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
            let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
            10f64.powf(sxy / sxx)
        };
        println!(
            "\ngrowth per 10× triangles (k = {} → {}): build {:.2}×, collision {:.2}×, exact distance {:.2}× (target ≤ 2×)",
            args.factors[0],
            args.factors[args.factors.len() - 1],
            per10(f.1, l.1),
            per10(f.2, l.2),
            per10(f.3, l.3)
        );
        println!(
            "least-squares log-log fit over all factors: build {:.2}×, collision {:.2}×, exact distance {:.2}× per 10×",
            fit(|r| r.1),
            fit(|r| r.2),
            fit(|r| r.3)
        );
    }
    println!("total time {:.0} s", started.elapsed().as_secs_f64());
    std::fs::create_dir_all(&args.out)?;
    let lg = |f: fn(&(f64, f64, f64, f64)) -> f64| -> Vec<(f64, f64)> {
        rows.iter().map(|r| (r.0.log10(), f(r).log10())).collect()
    };
    let (first, second) = rpq_plot::Figure::new(
        "Cost against mesh size (RX60B links, uniform subdivision)",
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
