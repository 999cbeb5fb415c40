//! `rpq_bench`: our engine and robot layer against the peers on the two-RX60 sweep, every
//! figure like for like and measured in the same run (see `--help` and docs/proximity.md).

use std::path::Path;
use std::time::{Duration, Instant};

use clap::Parser;
use nalgebra::Isometry3;
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::Pose;
use rpq_proximity::{DistanceRequest, Model, QueryWorkspace};
use rpq_scene::eval::{self, set_pair};
use rpq_scene::{
    generate_collision_matrix, BatchQuery, BodyId, GeneratorSettings, QueryOptions, Scenario,
};
use rpq_scene_tools::coal_peer::{self, CoalJob};
use rpq_scene_tools::parry_peer::{self, to_pose, ParryScene};

/// Benchmark of the RPQ engine and robot layer on two RX60 arms facing each other, over the
/// 96 × 96 configuration grid at each base distance: collision against parry3d-f64 (in
/// process), exact distance against Coal (PyPI `coal`, through its Python bindings in the
/// benchmark venv), posing, BVH build and batch throughput on all cores.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Base distances (m).
    #[arg(long, value_delimiter = ',', default_value = "0.4,0.5,0.6,0.7,0.8")]
    distances: Vec<f64>,
    /// Use every n-th configuration pair for the collision comparison (both engines).
    #[arg(long, default_value_t = 1)]
    stride: usize,
    /// Configuration pairs per base distance for the exact-distance comparison.
    #[arg(long, default_value_t = 24)]
    distance_samples: usize,
    /// Timed repetitions of each distance configuration (the fastest counts, both engines).
    #[arg(long, default_value_t = 3)]
    reps: u32,
    /// Configuration pairs per base distance for the distance batch.
    #[arg(long, default_value_t = 1152)]
    batch_distance_rows: usize,
    /// Skip Coal (no benchmark venv).
    #[arg(long)]
    no_coal: bool,
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

/// The 1-minute load average (`/proc/loadavg`), printed beside the figures: the machine is
/// shared, and wall-clock figures depend on it.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}

fn us(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n.max(1) as f64
}

/// World poses of every body of both robots at the scenario's configuration (left first).
fn body_poses(s: &Scenario) -> Vec<Isometry3<f64>> {
    let mut p = s.body_poses(0).to_vec();
    p.extend_from_slice(s.body_poses(1));
    p
}

/// The 49 link pairs (left body, right body), index order.
fn pairs(nb: usize) -> Vec<(usize, usize)> {
    (0..nb).flat_map(|i| (0..nb).map(move |j| (i, j))).collect()
}

fn id(object: usize, body: usize) -> BodyId {
    BodyId { object, body }
}

/// One configuration as both collision loops see it: poses converted before timing.
struct Conf {
    ours: Vec<Isometry3<f64>>,
    parry: Vec<Pose>,
    aabbs: Vec<Aabb>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let proto = eval::rx60()?;
    let g = eval::grid(&proto);
    let total = g.len() * g.len();
    let threads = rayon::current_num_threads();
    println!(
        "rpq_bench: two RX60B arms facing each other; {}",
        eval::GRID_DESCRIPTION
    );
    println!(
        "single-threaded unless stated; {threads} cores; posing is timed on its own and excluded \
         from the query figures (both engines get the poses ready); load average {} at the start",
        load()
    );
    let mut scenes: Vec<Scenario> = Vec::new();
    for &d in &args.distances {
        let mut s = eval::pair_scenario(&proto, d)?;
        let pb =
            rpq_scene_tools::Bar::new(args.cm_samples as u64, format!("collision matrix {d} m"));
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
    let nb = scenes[0].objects()[0].num_bodies();
    let owned: Vec<std::sync::Arc<Model>> = (0..nb)
        .map(|i| scenes[0].objects()[0].body(i).model.clone())
        .collect();
    let models: Vec<&Model> = owned.iter().map(|m| &**m).collect();
    let all_pairs = pairs(nb);

    // Posing: both robots, FK + link boxes + robot boxes, over the whole grid.
    let mut best_pose = Duration::MAX;
    for _ in 0..3 {
        let s = &mut scenes[0];
        let t = Instant::now();
        for k in 0..total {
            set_pair(s, &g, k)?;
        }
        best_pose = best_pose.min(t.elapsed());
    }
    let pose_us = us(best_pose, total);

    // (a) raw collision, (b) robot layer vs parry with the same pruning.
    let idx: Vec<usize> = (0..total).step_by(args.stride.max(1)).collect();
    let mut ws = QueryWorkspace::default();
    let (mut t_raw, mut t_praw, mut t_layer, mut t_pprune) = (
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
        Duration::ZERO,
    );
    let mut n_conf = 0usize;
    let mut mismatches = 0usize;
    let mut colliding = 0usize;
    let mut layer_queries = 0u64;
    let mut parry_pruned_queries = 0u64;
    let pb = rpq_scene_tools::Bar::new((scenes.len() * idx.len()) as u64, "collision sweeps");
    for s in scenes.iter_mut() {
        s.weights_mut().reset();
        let skip: Vec<bool> = all_pairs
            .iter()
            .map(|&(i, j)| s.never_collide(id(0, i), id(1, j)))
            .collect();
        for block in idx.chunks(256) {
            // poses of the block, converted outside the timed loops
            let mut confs = Vec::with_capacity(block.len());
            for &k in block {
                set_pair(s, &g, k)?;
                let ours = body_poses(s);
                let parry_poses: Vec<Pose> = ours.iter().map(to_pose).collect();
                let aabbs = parry_poses
                    .iter()
                    .enumerate()
                    .map(|(b, p)| parry.mesh(id(b / nb, b % nb)).aabb(p))
                    .collect();
                confs.push(Conf {
                    ours,
                    parry: parry_poses,
                    aabbs,
                });
            }
            let mut raw = vec![false; block.len()];
            let t = Instant::now();
            for (c, r) in confs.iter().zip(raw.iter_mut()) {
                *r = all_pairs.iter().any(|&(i, j)| {
                    rpq_proximity::intersects(
                        &c.ours[i],
                        models[i],
                        &c.ours[nb + j],
                        models[j],
                        &mut ws,
                    )
                });
            }
            t_raw += t.elapsed();
            let mut par = vec![false; block.len()];
            let t = Instant::now();
            for (c, r) in confs.iter().zip(par.iter_mut()) {
                *r = all_pairs.iter().any(|&(i, j)| {
                    parry.intersects_posed(&c.parry[i], id(0, i), &c.parry[nb + j], id(1, j))
                });
            }
            t_praw += t.elapsed();
            // parry with the pruning its API allows: the same collision matrix, then its
            // own world AABBs (computed with the poses, outside the loop)
            let mut pp = vec![false; block.len()];
            let t = Instant::now();
            for (c, r) in confs.iter().zip(pp.iter_mut()) {
                *r = all_pairs.iter().enumerate().any(|(k, &(i, j))| {
                    if skip[k] || !c.aabbs[i].intersects(&c.aabbs[nb + j]) {
                        return false;
                    }
                    parry_pruned_queries += 1;
                    parry.intersects_posed(&c.parry[i], id(0, i), &c.parry[nb + j], id(1, j))
                });
            }
            t_pprune += t.elapsed();
            // the robot layer: posing outside the timer, the query inside
            for (n, &k) in block.iter().enumerate() {
                set_pair(s, &g, k)?;
                let t = Instant::now();
                let r = s.collide(&QueryOptions::RECOMMENDED);
                t_layer += t.elapsed();
                layer_queries += r.stats.l3_tests;
                mismatches += usize::from(r.colliding != raw[n])
                    + usize::from(par[n] != raw[n])
                    + usize::from(pp[n] != raw[n]);
                colliding += usize::from(raw[n]);
            }
            n_conf += block.len();
            pb.inc(block.len() as u64);
        }
    }
    pb.finish_and_clear();
    let (raw, praw) = (us(t_raw, n_conf), us(t_praw, n_conf));
    let (layer, pprune) = (us(t_layer, n_conf), us(t_pprune, n_conf));
    println!(
        "\nposing both robots (forward kinematics, link boxes, robot boxes): {:.3} µs per \
         configuration pair (target ≤ 0.25 µs; best of 3 passes over the grid)",
        pose_us
    );
    println!(
        "\n(a) boolean collision, raw engine vs parry3d-f64, like for like: all 49 link pairs in \
         index order, first hit, every one of {n_conf} configuration pairs ({} distances), \
         poses converted before timing ({colliding} colliding)",
        scenes.len()
    );
    println!(
        "    ours {raw:9.2} µs   parry3d-f64 {praw:9.2} µs   ratio {:.2}×",
        praw / raw
    );
    println!(
        "(b) pruned: robot layer (L1+L2+L3 + collision matrix) vs parry3d-f64 given the same \
         collision matrix and its own world AABBs"
    );
    println!(
        "    ours {layer:9.2} µs   parry3d-f64 {pprune:9.2} µs   ratio {:.2}×   (mesh tests per \
         configuration: ours {:.2}, parry {:.2})",
        pprune / layer,
        layer_queries as f64 / n_conf as f64,
        parry_pruned_queries as f64 / n_conf as f64
    );
    println!("    answers compared (raw, layer, parry raw, parry pruned): {mismatches} mismatches");

    // (c) exact distance, all 49 pairs, against Coal; (d) the pruned robot layer.
    let mut job = CoalJob {
        meshes: models.clone(),
        body_mesh: (0..2 * nb as u32).map(|b| b % nb as u32).collect(),
        pairs: all_pairs
            .iter()
            .map(|&(i, j)| (i as u32, (nb + j) as u32))
            .collect(),
        // as many runs per configuration as ours gets (before and after Coal's)
        reps: 2 * args.reps.max(1),
        ..CoalJob::default()
    };
    let mut ours_raw = Vec::new();
    let mut ours_raw_warm = Vec::new();
    let mut ours_min = Vec::new();
    let mut ours_pruned = Vec::new();
    let mut pruned_queries = 0u64;
    let exact = DistanceRequest::exact();
    let pb = rpq_scene_tools::Bar::new(
        (scenes.len() * args.distance_samples) as u64,
        "distance sweeps",
    );
    for s in scenes.iter_mut() {
        for k in picks(total, args.distance_samples) {
            set_pair(s, &g, k)?;
            let p = body_poses(s);
            let all = |ws: &mut QueryWorkspace| {
                let mut m = f64::INFINITY;
                for &(i, j) in &all_pairs {
                    let r = rpq_proximity::distance(
                        &p[i],
                        models[i],
                        &p[nb + j],
                        models[j],
                        &exact,
                        ws,
                    );
                    m = m.min(r.map_or(f64::INFINITY, |r| r.distance));
                }
                m
            };
            // cold: no closest-pair guess from an earlier query (Coal has none)
            let mut best = Duration::MAX;
            let mut m = 0.0;
            for _ in 0..args.reps.max(1) {
                ws.clear_cache();
                let t = Instant::now();
                m = all(&mut ws);
                best = best.min(t.elapsed());
            }
            ours_raw.push(best.as_secs_f64() * 1e9);
            ours_min.push(m);
            // warm: the cache holds this configuration's pairs from the runs above
            let t = Instant::now();
            std::hint::black_box(all(&mut ws));
            ours_raw_warm.push(t.elapsed().as_secs_f64() * 1e9);
            // the robot layer, once (its cache holds the previous sample's pairs)
            let t = Instant::now();
            let r = s
                .min_distance(&QueryOptions::RECOMMENDED)
                .expect("two robots");
            ours_pruned.push(t.elapsed().as_secs_f64() * 1e9);
            pruned_queries += r.stats.l3_tests;
            if (r.distance - m).abs() > 1e-12 {
                eprintln!("warning: layer {} vs all pairs {m} at {k}", r.distance);
            }
            // the same pruning for Coal: pairs by the lower bound of their link boxes
            let (ba, bb) = (s.body_boxes(0), s.body_boxes(1));
            let mut order: Vec<(u32, f64)> = all_pairs
                .iter()
                .enumerate()
                .map(|(n, &(i, j))| (n as u32, ba[i].distance_lower_bound(&bb[j])))
                .collect();
            order.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)));
            job.orders.push(order);
            job.poses.push(p);
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    let coal = if args.no_coal {
        Err("--no-coal".to_string())
    } else {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        coal_peer::run(&coal_peer::python(&root), &job, &std::env::temp_dir())
    };
    // Our second series of runs, after Coal's: a load spike on this shared machine during one
    // engine's turn then weighs on neither (fastest of all runs, as for Coal).
    for (c, p) in job.poses.iter().enumerate() {
        for _ in 0..args.reps.max(1) {
            ws.clear_cache();
            let t = Instant::now();
            let mut m = f64::INFINITY;
            for &(i, j) in &all_pairs {
                let r = rpq_proximity::distance(
                    &p[i],
                    models[i],
                    &p[nb + j],
                    models[j],
                    &exact,
                    &mut ws,
                );
                m = m.min(r.map_or(f64::INFINITY, |r| r.distance));
            }
            ours_raw[c] = ours_raw[c].min(t.elapsed().as_secs_f64() * 1e9);
            std::hint::black_box(m);
        }
    }
    let nd = ours_raw.len();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (o_raw, o_warm, o_pruned) = (mean(&ours_raw), mean(&ours_raw_warm), mean(&ours_pruned));
    println!(
        "\n(c) exact distance, all 49 link pairs, no bound, {nd} configuration pairs ({} per \
         distance; fastest of {} runs each for both, ours half before and half after Coal's, \
         with the closest-pair cache cleared before each):",
        args.distance_samples,
        2 * args.reps.max(1)
    );
    match &coal {
        Ok(c) => {
            let c_raw = mean(&c.raw_ns);
            let worst = ours_min
                .iter()
                .zip(&c.raw_min)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            let per: Vec<f64> = c.raw_ns.iter().zip(&ours_raw).map(|(c, o)| c / o).collect();
            let mut sorted = per.clone();
            sorted.sort_by(f64::total_cmp);
            println!(
                "    ours {:8.3} ms   Coal {} {:8.3} ms   ratio {:.2}× (target ≥ 2.0; per \
                 configuration min {:.2}×, median {:.2}×); max |Δd| {worst:.1e} m",
                o_raw / 1e6,
                c.coal_version,
                c_raw / 1e6,
                c_raw / o_raw,
                sorted[0],
                sorted[sorted.len() / 2]
            );
            let overhead = 49.0 * c.overhead_ns_per_call;
            println!(
                "    Coal binding overhead: {:.2} µs per Python call, {:.3} ms per 49-pair query \
                 ({:.1}% of Coal's time; ratio without it {:.2}×)",
                c.overhead_ns_per_call / 1e3,
                overhead / 1e6,
                100.0 * overhead / c_raw,
                (c_raw - overhead) / o_raw
            );
            println!(
                "    ours with a warm closest-pair cache (same configuration queried again): {:.3} ms",
                o_warm / 1e6
            );
            println!(
                "(d) pruned: robot layer (pairs by link-box lower bound, each query bounded by the \
                 best so far) vs Coal with the same order and stop (its API has no bound per query):"
            );
            let c_pr = mean(&c.pruned_ns);
            println!(
                "    ours {:8.3} ms ({:.1} pair queries)   Coal {:8.3} ms ({:.1} pair queries)   ratio {:.2}×",
                o_pruned / 1e6,
                pruned_queries as f64 / nd as f64,
                c_pr / 1e6,
                c.pruned_queries as f64 / nd as f64,
                c_pr / o_pruned
            );
        }
        Err(e) => {
            println!("    ours {:8.3} ms   Coal not measured: {e}", o_raw / 1e6);
            println!(
                "(d) pruned robot layer: ours {:8.3} ms ({:.1} pair queries)",
                o_pruned / 1e6,
                pruned_queries as f64 / nd as f64
            );
        }
    }

    // (e) BVH build of one robot: each engine's input copied (and converted for parry)
    // before its timer starts; both time only the construction.
    let tris: usize = models.iter().map(|m| m.num_triangles()).sum();
    let (mut best_ours, mut best_parry) = (Duration::MAX, Duration::MAX);
    const BUILDS: usize = 15;
    for _ in 0..BUILDS {
        let inputs: Vec<_> = models
            .iter()
            .map(|m| (m.vertices().to_vec(), m.triangles().to_vec()))
            .collect();
        let t = Instant::now();
        for (v, tr) in inputs {
            std::hint::black_box(Model::new(v, tr)?);
        }
        best_ours = best_ours.min(t.elapsed());
        let inputs: Vec<_> = models.iter().map(|m| parry_peer::mesh_input(m)).collect();
        let t = Instant::now();
        for input in inputs {
            std::hint::black_box(parry_peer::trimesh_from(input)?);
        }
        best_parry = best_parry.min(t.elapsed());
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "\n(e) BVH build of one robot ({} links, {tris} triangles, best of {BUILDS}, input copies \
         and conversions outside the timer): ours {:.2} ms (target ≤ 8 ms)   parry3d-f64 {:.2} ms \
         (ours ÷ parry {:.2}){}",
        models.len(),
        ms(best_ours),
        ms(best_parry),
        best_ours.as_secs_f64() / best_parry.as_secs_f64(),
        coal.as_ref()
            .map(|c| format!("   Coal {:.2} ms (Python wall clock)", c.build_ns / 1e6))
            .unwrap_or_default()
    );

    // (f) batches on all cores.
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    println!(
        "\n(f) batch throughput, Scenario::batch (shared &Scenario, one state per thread), posing \
         included (load average {}):",
        load()
    );
    for (label, query, n_rows) in [
        ("collision", BatchQuery::Collision, total),
        (
            "exact distance",
            BatchQuery::Distance,
            args.batch_distance_rows,
        ),
    ] {
        let (mut t1, mut tn, mut rows_done) = (Duration::ZERO, Duration::ZERO, 0usize);
        let mut same = true;
        for s in &scenes {
            let rows: Vec<f64> = picks(total, n_rows)
                .into_iter()
                .flat_map(|k| {
                    let (a, b) = (&g[k / g.len()], &g[k % g.len()]);
                    a.iter().chain(b).copied().collect::<Vec<_>>()
                })
                .collect();
            let t = Instant::now();
            let a1 = one.install(|| s.batch(&[0, 1], &rows, query, &QueryOptions::RECOMMENDED))?;
            t1 += t.elapsed();
            let t = Instant::now();
            let an = s.batch(&[0, 1], &rows, query, &QueryOptions::RECOMMENDED)?;
            tn += t.elapsed();
            // (NaN distances of collision-only answers compare by bits)
            same &= a1.len() == an.len()
                && a1.iter().zip(&an).all(|(x, y)| {
                    x.colliding == y.colliding && x.distance.to_bits() == y.distance.to_bits()
                });
            rows_done += a1.len();
        }
        let rate = |d: Duration| rows_done as f64 / d.as_secs_f64();
        println!(
            "    {label:15} 1 thread {:10.0} /s   {threads} threads {:10.0} /s   speed-up {:.2}×   \
             ({rows_done} configuration pairs; answers identical: {same})",
            rate(t1),
            rate(tn),
            t1.as_secs_f64() / tn.as_secs_f64()
        );
    }
    println!("\nload average {} at the end", load());
    Ok(())
}
