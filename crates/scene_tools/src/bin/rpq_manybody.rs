//! `rpq_manybody`: a scene of many bodies (10 RX60B arms and 200 objects) queried with and
//! without the broadphase over objects, same configurations, same answers (see `--help`).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use nalgebra::{Isometry3, Vector3};
use rpq_proximity::Model;
use rpq_scene::eval;
use rpq_scene::{Body, QueryOptions, Scenario, SimpleObject};

/// Many-body benchmark: `--robots` RX60B arms in a row 1.6 m apart and `--objects` small parts
/// (hand and wrist meshes, 1,000-1,700 triangles each) on shelves on both sides of the row,
/// `--shelf` from its axis: at the default 0.5 m within the arms' reach (the wrist centre
/// reaches 0.6 m from the axis of joint 1), so some configurations touch a part and pairs reach
/// the mesh tests; at 0.95 m (the default before 2026-11-27) no link box ever meets a part's.
/// Random grid configurations of every arm; the full collision check and the full minimum
/// distance over all bodies, timed with the broadphase (sweep and prune over object boxes;
/// gap-sorted object pairs) and without it (every object pair through its L1 box). Prints the
/// table and checks that both give the same answers.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Number of robots.
    #[arg(long, default_value_t = 10)]
    robots: usize,
    /// Number of simple objects.
    #[arg(long, default_value_t = 200)]
    objects: usize,
    /// Configurations (all robots moved each time).
    #[arg(long, default_value_t = 200)]
    configurations: usize,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Distance (m) of the shelves from the row's axis.
    #[arg(long, default_value_t = 0.5)]
    shelf: f64,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn scene(args: &Args) -> Result<Scenario, Box<dyn std::error::Error>> {
    let proto = eval::rx60()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../meshes");
    let mut parts: Vec<Arc<Model>> = Vec::new();
    for f in [
        "hit_dlr_hand/palm.stl",
        "rx60b/link_5.stl",
        "rx60b/link_6.stl",
    ] {
        parts.push(Arc::new(Model::from_stl_file(root.join(f))?));
    }
    let mut s = Scenario::new();
    for i in 0..args.robots {
        let base = Isometry3::translation(1.6 * i as f64, 0.0, 0.0);
        s.add_robot(proto.instance(format!("r{i}"), base))?;
    }
    // shelves: x along the row, y = ±0.95 m, three heights; a small random turn each
    let mut rng = Rng(args.seed);
    let per_robot = args.objects.div_ceil(args.robots.max(1));
    for k in 0..args.objects {
        let (r, m) = (k / per_robot, k % per_robot);
        let side = if m % 2 == 0 { args.shelf } else { -args.shelf };
        let slot = m / 2;
        let x = 1.6 * r as f64 - 0.6 + 0.3 * (slot % 5) as f64;
        let z = 0.15 + 0.45 * (slot / 5) as f64;
        let turn = Vector3::new(rng.next(), rng.next(), rng.next()) * std::f64::consts::PI;
        let model = parts[k % parts.len()].clone();
        let name = format!("part{k}");
        s.add_object(SimpleObject {
            body: Body::from_model(name.clone(), model),
            name,
            pose: Isometry3::new(Vector3::new(x, side, z), turn),
        })?;
    }
    Ok(s)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    if !(args.shelf.is_finite() && args.shelf >= 0.0) {
        return Err(format!(
            "--shelf must be a finite distance ≥ 0 m, got {}",
            args.shelf
        )
        .into());
    }
    let mut s = scene(&args)?;
    let bodies: usize = s.objects().iter().map(|o| o.num_bodies()).sum();
    let tris: usize = s
        .objects()
        .iter()
        .flat_map(|o| (0..o.num_bodies()).map(move |i| o.body(i).model.num_triangles()))
        .sum();
    let n = s.objects().len();
    let proto = eval::rx60()?;
    let g = eval::grid(&proto);
    let mut rng = Rng(args.seed ^ 0x5eed);
    let confs: Vec<Vec<usize>> = (0..args.configurations)
        .map(|_| {
            (0..args.robots)
                .map(|_| (rng.next() * g.len() as f64) as usize % g.len())
                .collect()
        })
        .collect();
    println!(
        "rpq_manybody: {} robots + {} objects (shelves {} m from the row) = {n} objects, {bodies} bodies, {tris} triangles, {} object pairs; {} configurations (every arm at a random grid configuration)",
        args.robots,
        args.objects,
        args.shelf,
        n * (n - 1) / 2,
        confs.len()
    );
    let opts = QueryOptions::RECOMMENDED;
    let (mut tc, mut td) = ([Duration::ZERO; 2], [Duration::ZERO; 2]);
    let (mut colliding, mut mismatches) = (0usize, 0usize);
    let mut mesh_tests = [0u64; 2];
    for c in &confs {
        for (r, &k) in c.iter().enumerate() {
            s.set_joint_positions(r, &g[k])?;
        }
        let mut answers = Vec::new();
        for (m, on) in [true, false].into_iter().enumerate() {
            s.set_broadphase(on);
            let t = Instant::now();
            let col = s.collide(&opts);
            tc[m] += t.elapsed();
            let t = Instant::now();
            let d = s.min_distance(&opts).expect("objects");
            td[m] += t.elapsed();
            mesh_tests[m] += col.stats.l3_tests;
            answers.push((col.colliding, col.pair, d.distance, d.body_a, d.body_b));
        }
        colliding += usize::from(answers[0].0);
        mismatches += usize::from(answers[0] != answers[1]);
    }
    let k = confs.len().max(1) as f64;
    let us = |d: Duration| d.as_secs_f64() * 1e6 / k;
    println!("\n| query | broadphase | without | ratio | target |");
    println!("|---|---|---|---|---|");
    println!(
        "| full collision check | {:.1} µs | {:.1} µs | {:.1}× | ≤ 100 µs |",
        us(tc[0]),
        us(tc[1]),
        us(tc[1]) / us(tc[0])
    );
    println!(
        "| full minimum distance | {:.3} ms | {:.3} ms | {:.1}× | ≤ 5 ms |",
        us(td[0]) / 1e3,
        us(td[1]) / 1e3,
        us(td[1]) / us(td[0])
    );
    println!(
        "\n{colliding} of {} configurations colliding; mesh-level pair tests per collision check: {:.1} / {:.1}; answers identical: {}",
        confs.len(),
        mesh_tests[0] as f64 / k,
        mesh_tests[1] as f64 / k,
        if mismatches == 0 { "yes".to_string() } else { format!("NO ({mismatches} differ)") }
    );
    if mismatches > 0 {
        std::process::exit(1);
    }
    Ok(())
}
