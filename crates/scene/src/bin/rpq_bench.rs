//! `rpq_bench`: our engine and robot layer against parry3d-f64 on the two-RX60 sweep,
//! single-threaded, both measured in the same run (see `--help`).

use std::time::{Duration, Instant};

use clap::Parser;
use rayon::prelude::*;
use rpq_proximity::{Model, QueryWorkspace};
use rpq_scene::eval::{self, set_pair};
use rpq_scene::peer::{self, ParryScene};
use rpq_scene::{generate_collision_matrix, BodyId, GeneratorSettings, QueryOptions, Scenario};

/// Benchmark of the RPQ engine and robot layer against parry3d-f64 (f64) on two RX60
/// arms facing each other, over the 96 × 96 configuration grid at each base distance.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Base distances (m).
    #[arg(long, value_delimiter = ',', default_value = "0.4,0.5,0.6,0.7,0.8")]
    distances: Vec<f64>,
    /// Use every n-th configuration pair for our collision timings.
    #[arg(long, default_value_t = 1)]
    stride: usize,
    /// Use every n-th configuration pair for parry's collision timings.
    #[arg(long, default_value_t = 4)]
    parry_stride: usize,
    /// Configuration pairs per distance for our minimum-distance timing.
    #[arg(long, default_value_t = 1152)]
    distance_samples: usize,
    /// Configuration pairs per distance for parry's all-pairs distance (≈0.5 s each).
    #[arg(long, default_value_t = 3)]
    parry_distance_samples: usize,
    /// Collision-matrix samples (generated per distance before timing; not timed).
    #[arg(long, default_value_t = 20_000)]
    cm_samples: usize,
    /// Collision-matrix safety margin (m).
    #[arg(long, default_value_t = 0.05)]
    cm_margin: f64,
}

fn picks(total: usize, n: usize) -> Vec<usize> {
    let n = n.clamp(1, total);
    (0..n).map(|i| i * total / n).collect()
}

fn us(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n.max(1) as f64
}

fn raw_collide(s: &mut Scenario, ws: &mut QueryWorkspace) -> bool {
    let (na, nb) = (s.objects()[0].num_bodies(), s.objects()[1].num_bodies());
    for i in 0..na {
        for j in 0..nb {
            if rpq_proximity::intersects(
                &s.body_poses(0)[i],
                &s.objects()[0].body(i).model,
                &s.body_poses(1)[j],
                &s.objects()[1].body(j).model,
                ws,
            ) {
                return true;
            }
        }
    }
    false
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let proto = eval::rx60()?;
    let mut scenes: Vec<Scenario> = Vec::new();
    let g = eval::grid(&proto);
    let total = g.len() * g.len();
    println!(
        "rpq_bench: two RX60B arms facing each other; {}",
        eval::GRID_DESCRIPTION
    );
    println!(
        "single-threaded timings include posing both robots (forward kinematics) per configuration pair"
    );
    for &d in &args.distances {
        let mut s = eval::pair_scenario(&proto, d)?;
        let pb = eval::progress(args.cm_samples as u64, format!("collision matrix {d} m"));
        let cm = generate_collision_matrix(
            &s,
            &GeneratorSettings {
                samples: args.cm_samples,
                margin: args.cm_margin,
                seed: 1,
                ..GeneratorSettings::default()
            },
            Some(&pb),
        )?;
        pb.finish_and_clear();
        s.set_collision_matrix(cm)?;
        scenes.push(s);
    }
    let parry = ParryScene::new(&scenes[0])?;

    // (a) raw engine, (b) robot layer, parry: boolean collision.
    let ours_idx: Vec<usize> = (0..total).step_by(args.stride.max(1)).collect();
    let parry_idx: Vec<usize> = (0..total).step_by(args.parry_stride.max(1)).collect();
    let (mut t_raw, mut t_layer, mut t_parry) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut t_rec = Duration::ZERO;
    let (mut p_raw, mut p_layer, mut p_parry) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut n_ours, mut n_parry) = (0usize, 0usize);
    let mut mismatches = 0usize;
    let mut ws = QueryWorkspace::default();
    let pb = eval::progress(
        (args.distances.len() * (3 * ours_idx.len() + parry_idx.len())) as u64,
        "collision sweeps",
    );
    for (di, s) in scenes.iter_mut().enumerate() {
        let mut raw_answers = vec![false; total];
        for &k in &ours_idx {
            let t = Instant::now();
            set_pair(s, &g, k)?;
            let t1 = Instant::now();
            raw_answers[k] = raw_collide(s, &mut ws);
            t_raw += t1.elapsed();
            p_raw += t1 - t;
            pb.inc(1);
        }
        s.weights_mut().reset();
        for &k in &ours_idx {
            let t = Instant::now();
            set_pair(s, &g, k)?;
            let t1 = Instant::now();
            let c = s.collide(&QueryOptions::ALL_ON).colliding;
            t_layer += t1.elapsed();
            p_layer += t1 - t;
            mismatches += usize::from(c != raw_answers[k]);
            pb.inc(1);
        }
        let mut rec = s.clone();
        for &k in &ours_idx {
            set_pair(&mut rec, &g, k)?;
            let t1 = Instant::now();
            let c = rec.collide(&QueryOptions::RECOMMENDED).colliding;
            t_rec += t1.elapsed();
            mismatches += usize::from(c != raw_answers[k]);
            pb.inc(1);
        }
        n_ours += ours_idx.len();
        for &k in &parry_idx {
            let t = Instant::now();
            set_pair(s, &g, k)?;
            let t1 = Instant::now();
            let c = parry.collide(s).is_some();
            t_parry += t1.elapsed();
            p_parry += t1 - t;
            if k % args.stride.max(1) == 0 {
                mismatches += usize::from(c != raw_answers[k]);
            }
            pb.inc(1);
        }
        n_parry += parry_idx.len();
        let _ = di;
    }
    pb.finish_and_clear();
    let (raw, layer, par) = (us(t_raw, n_ours), us(t_layer, n_ours), us(t_parry, n_parry));
    let pose = us(p_raw + p_layer + p_parry, 2 * n_ours + n_parry);
    println!("\nposing both robots (forward kinematics, link poses and boxes) per configuration pair: {pose:.2} µs (common to all engines, excluded below)");
    println!("(a) boolean collision per configuration pair, raw engine (49 link pairs, index order, first hit):");
    println!(
        "    ours {raw:10.2} µs   parry3d-f64 {par:10.2} µs   ratio {:.2}× (target ≥ 2.2×); with posing {:.2}×",
        par / raw,
        (par + pose) / (raw + pose)
    );
    println!("(b) same with the robot layer (L1+L2+L3, weight matrix, collision matrix):");
    println!(
        "    ours {layer:10.2} µs   parry3d-f64 {par:10.2} µs   ratio {:.2}× (target ≥ 6×); with posing {:.2}×",
        par / layer,
        (par + pose) / (layer + pose)
    );
    let rec = us(t_rec, n_ours);
    println!(
        "    recommended options (L1+L2+L3 + collision matrix, no weight matrix): ours {rec:10.2} µs   ratio {:.2}×; with posing {:.2}×",
        par / rec,
        (par + pose) / (rec + pose)
    );
    println!(
        "    answers compared on {} pairs (raw vs layer vs parry): {mismatches} mismatches",
        n_ours
    );

    // (c) minimum distance.
    let mut t_ours = Duration::ZERO;
    let mut t_p = Duration::ZERO;
    let (mut nd, mut np) = (0usize, 0usize);
    let mut worst: f64 = 0.0;
    let pb = eval::progress(
        (args.distances.len() * (args.distance_samples + args.parry_distance_samples)) as u64,
        "distance sweeps",
    );
    for s in scenes.iter_mut() {
        for k in picks(total, args.distance_samples) {
            let t = Instant::now();
            set_pair(s, &g, k)?;
            let r = s.min_distance(&QueryOptions::ALL_ON);
            t_ours += t.elapsed();
            std::hint::black_box(r);
            nd += 1;
            pb.inc(1);
        }
        for k in picks(total, args.parry_distance_samples) {
            let t = Instant::now();
            set_pair(s, &g, k)?;
            let (pd, _, _) = parry.min_distance(s).expect("two robots");
            t_p += t.elapsed();
            np += 1;
            let ours = s.min_distance(&QueryOptions::ALL_ON).expect("two robots");
            worst = worst.max((ours.distance - pd).abs());
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let (od, pdist) = (us(t_ours, nd), us(t_p, np));
    println!("(c) robot–robot minimum distance per configuration pair (ours: pruned by box bounds; parry: all 49 pairs):");
    println!(
        "    ours {od:10.2} µs ({nd} pairs)   parry3d-f64 {pdist:10.0} µs ({np} pairs)   ratio {:.0}× (target ≥ 500×); max |Δd| {worst:.2e} m",
        pdist / od
    );

    // (d) BVH build of one robot.
    let models: Vec<&Model> = (0..scenes[0].objects()[0].num_bodies())
        .map(|i| &*scenes[0].objects()[0].body(i).model)
        .collect();
    let tris: usize = models.iter().map(|m| m.num_triangles()).sum();
    let mut best_ours = Duration::MAX;
    let mut best_parry = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for m in &models {
            std::hint::black_box(Model::new(m.vertices().to_vec(), m.triangles().to_vec())?);
        }
        best_ours = best_ours.min(t.elapsed());
        let t = Instant::now();
        for m in &models {
            std::hint::black_box(peer::trimesh(m)?);
        }
        best_parry = best_parry.min(t.elapsed());
    }
    println!(
        "(d) BVH build for one robot ({} links, {tris} triangles, best of 5):",
        models.len()
    );
    println!(
        "    ours {:8.2} ms   parry3d-f64 {:8.2} ms   ratio {:.2}× (target ≤ 20 ms)",
        best_ours.as_secs_f64() * 1e3,
        best_parry.as_secs_f64() * 1e3,
        best_parry.as_secs_f64() / best_ours.as_secs_f64()
    );

    // Parallel throughput.
    let threads = 2;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    for s in scenes.iter_mut() {
        s.weights_mut().reset();
    }
    let t = Instant::now();
    let chunk = 512;
    let hits: usize = pool.install(|| {
        scenes
            .par_iter()
            .flat_map(|s| {
                (0..total.div_ceil(chunk))
                    .into_par_iter()
                    .map(move |c| (s, c))
            })
            .map(|(s, c)| {
                let mut sc = s.clone();
                let mut hits = 0usize;
                for k in c * chunk..((c + 1) * chunk).min(total) {
                    set_pair(&mut sc, &g, k).expect("valid grid");
                    hits += usize::from(sc.collide(&QueryOptions::ALL_ON).colliding);
                }
                hits
            })
            .sum()
    });
    let el = t.elapsed();
    let n = total * scenes.len();
    println!(
        "parallel sweep ({threads} threads, robot layer, all optimizations): {n} configuration pairs in {:.3} s = {:.0} pairs/s ({:.2} µs each; single-threaded {:.2} µs with posing, {hits} colliding)",
        el.as_secs_f64(),
        n as f64 / el.as_secs_f64(),
        us(el, n),
        layer + pose
    );
    let _ = BodyId { object: 0, body: 0 };
    Ok(())
}
