//! Zero penetrations under random operator forces: 10,000 seeded force sequences (set
//! `RPQ_SURGERY_SEQUENCES` for more, e.g. 100000) through the admittance law of
//! `rpq_virtual_fixtures` and the forbidden-region correction, against the scenario's
//! protections (the 50,784-triangle phantom, the N = 64 shield, the cutting aid). Every
//! motion of the tool centre is checked independently of the navigation (the engine's
//! mesh-mesh distance, [`DistanceProbe`]): it must stay at least the bit radius from every
//! protection mesh.

use std::sync::Arc;

use nalgebra::{Isometry3, Point3, Vector3, Vector6};
use rpq_base::SplitMix64;
use rpq_proximity::{intersects, Model, QueryWorkspace};
use rpq_surgery::scenario::{Geometry, ScenarioConfig};
use rpq_surgery::DistanceProbe;
use rpq_surgery::{NavigatorConfig, Outcome, SurfaceNavigator};
use rpq_virtual_fixtures::{
    AdmittanceController, Compliance, ControllerConfig, Guidance, Limits, Mode,
};

struct World {
    geometry: Arc<Geometry>,
    radius: f64,
}

fn world() -> World {
    let cfg = ScenarioConfig::default();
    World {
        geometry: Arc::new(Geometry::build(&cfg).unwrap()),
        radius: cfg.tool_radius,
    }
}

/// Is nothing of the protections above `p` (along the outline frame's z)? The allowed region
/// over the patient is where every protection is below the tool: the phantom's top, the shield
/// and the cutting aid are graphs over the outline frame's plane there.
fn above_all(w: &World, p: &Point3<f64>, ws: &mut QueryWorkspace) -> bool {
    let up = w.geometry.outline.frame().normal();
    let side = up.cross(&Vector3::x()).normalize() * 1e-9;
    let ray = Model::new(
        vec![
            Point3::origin(),
            Point3::from(up * 0.3),
            Point3::from(up * 0.3 + side),
        ],
        vec![[0, 1, 2]],
    )
    .unwrap();
    let at = Isometry3::translation(p.x, p.y, p.z);
    w.geometry
        .all
        .items()
        .iter()
        .all(|prot| !intersects(&prot.pose, &prot.model, &at, &ray, ws))
}

/// Surface points of the protections over the cut (centroids and unit normals, which face the
/// allowed side), from which starts are drawn.
fn seeds(w: &World) -> Vec<([Point3<f64>; 3], Vector3<f64>)> {
    let g = &w.geometry;
    let frame = g.outline.frame();
    let up = frame.normal();
    let mut out = Vec::new();
    for prot in g.all.items() {
        for i in 0..prot.model.num_triangles() {
            let t = prot.triangle(i);
            let n = (t[1] - t[0]).cross(&(t[2] - t[0])).normalize();
            let c = frame.to_local(&Point3::from(
                (t[0].coords + t[1].coords + t[2].coords) / 3.0,
            ));
            if c.coords.xy().norm() < 0.06 && n.dot(&up) > 0.2 {
                out.push((t, n));
            }
        }
    }
    out
}

/// A random start in the allowed region over the cut: 0.2 to 5 mm off a protection surface
/// on its allowed side, clear of every protection by 0.2 mm, nothing above it.
fn start(
    w: &World,
    seeds: &[([Point3<f64>; 3], Vector3<f64>)],
    rng: &mut SplitMix64,
    probe: &mut DistanceProbe,
    ws: &mut QueryWorkspace,
) -> (Point3<f64>, Vector3<f64>) {
    loop {
        let (t, n) = &seeds[rng.below(seeds.len() as u64) as usize];
        let (a, b) = (rng.uniform(), rng.uniform());
        let (a, b) = if a + b > 1.0 {
            (1.0 - a, 1.0 - b)
        } else {
            (a, b)
        };
        let on = t[0] + (t[1] - t[0]) * a + (t[2] - t[0]) * b;
        let p = on + n * (w.radius + rng.range(2e-4, 5e-3));
        let clear = w.radius + 2e-4;
        if w.geometry
            .all
            .items()
            .iter()
            .all(|prot| probe.point_distance_capped(prot, &p, clear + 1e-3) > clear)
            && above_all(w, &p, ws)
        {
            return (p, *n);
        }
    }
}

/// Runs `sequences` force sequences of `steps` periods; returns (penetrating motions, motions,
/// motions in contact, sequences with a contact).
fn run(w: &World, sequences: u64, steps: usize, seed: u64) -> (u64, u64, u64, u64) {
    let dt = 0.002;
    let r = w.radius;
    let mut rng = SplitMix64::new(seed);
    let mut probe = DistanceProbe::new();
    let mut ws = QueryWorkspace::new();
    let mut nav = SurfaceNavigator::new(
        w.geometry.all.clone(),
        NavigatorConfig {
            radius: r,
            skin: 1e-6,
            max_iterations: 8,
        },
    )
    .unwrap();
    let cfg = ControllerConfig {
        compliance: Compliance {
            c: 0.01,
            c_tau: 1.0,
        },
        mode: Mode::Free,
        limits: Limits {
            linear_velocity: 0.1,
            angular_velocity: 1.0,
            linear_acceleration: 50.0,
            angular_acceleration: 500.0,
        },
        ..ControllerConfig::default()
    };
    let up = w.geometry.outline.frame().normal();
    let items = w.geometry.all.items();
    let seeds = seeds(w);
    let cap = r + 1e-3;
    let (mut bad, mut moves, mut contacts, mut touched) = (0, 0, 0, 0);
    for _ in 0..sequences {
        let mut law = AdmittanceController::new(cfg).unwrap();
        let (mut p, normal) = start(w, &seeds, &mut rng, &mut probe, &mut ws);
        let mut ends: Vec<f64> = items
            .iter()
            .map(|prot| probe.point_distance_capped(prot, &p, cap))
            .collect();
        let mut force = Vector3::zeros();
        let mut hold = 0;
        let mut any = false;
        let mut first = true;
        for _ in 0..steps {
            if hold == 0 {
                // a new push: the first one toward the surface the tool starts over, later ones
                // in any direction, half of the time toward the patient
                let mut d = Vector3::new(rng.normal(), rng.normal(), rng.normal()).normalize();
                if first {
                    d = (d * 0.7 - normal).normalize();
                    first = false;
                } else if rng.uniform() < 0.5 && d.dot(&up) > 0.0 {
                    d -= up * (2.0 * d.dot(&up));
                }
                force = d * rng.range(0.0, 40.0);
                hold = 5 + rng.below(15);
            }
            hold -= 1;
            let noise = Vector3::new(rng.normal(), rng.normal(), rng.normal());
            let f = force + noise;
            let (v, _) = law
                .step(
                    &Vector6::new(f.x, f.y, f.z, 0.0, 0.0, 0.0),
                    &Guidance::empty(),
                    dt,
                )
                .unwrap();
            let (v, n) = nav.filter_twist(&p, &v, dt);
            let next = p + v.fixed_rows::<3>(0) * dt;
            moves += 1;
            if n.outcome != Outcome::Free {
                contacts += 1;
                any = true;
            }
            let mut penetrated = false;
            for (i, prot) in items.iter().enumerate() {
                let db = probe.point_distance_capped(prot, &next, cap);
                let da = std::mem::replace(&mut ends[i], db);
                let seg = probe.segment_distance(prot, &p, &next, da, db, r);
                penetrated |= seg.is_nan() || seg < r - 2e-9;
            }
            if penetrated {
                bad += 1;
                eprintln!("penetration: {p:?} -> {next:?}, navigation {n:?}");
            }
            p = next;
        }
        touched += u64::from(any);
    }
    (bad, moves, contacts, touched)
}

#[test]
fn random_force_sequences_never_penetrate() {
    let sequences: u64 = std::env::var("RPQ_SURGERY_SEQUENCES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let w = world();
    let started = std::time::Instant::now();
    let (bad, moves, contacts, touched) = run(&w, sequences, 30, 20_240_613);
    eprintln!(
        "{sequences} sequences, {moves} motions, {contacts} in contact, {touched} sequences touched a protection, {bad} penetrations, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(bad, 0, "penetrations");
    // not vacuous: most sequences reach a protection and slide on it
    assert!(
        touched * 2 > sequences,
        "only {touched} of {sequences} sequences touched a protection"
    );
    assert!(
        contacts * 10 > moves,
        "only {contacts} of {moves} motions in contact"
    );
}
