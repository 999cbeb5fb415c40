//! Shield (eq. 4) and cutting aid (eq. 5): every vertex against the equations evaluated
//! independently on an outline whose radial function is known in closed form; star-shaped and
//! non-star-shaped outlines (adaptation disc); the curves on the surfaces; no
//! self-intersection (the engine's all-contacts collision of each mesh with itself); the
//! topology (annulus, disc, closed phantom); refusals with clear errors; on the curved
//! phantom, feet standing on the bone.

use std::f64::consts::{FRAC_PI_2, PI, TAU};
use std::sync::OnceLock;

use nalgebra::{Isometry3, Point2, Point3, Vector3};
use rpq_kinematics::TriMesh;
use rpq_proximity::{collide, CollisionMode, Model};
use rpq_surgery::phantom::{cranium_phantom, cut_outline, CutOutlineSpec, PhantomSpec};
use rpq_surgery::stl::{boundary_loops, to_binary_stl};
use rpq_surgery::{
    generate_cutting_aid, generate_shield, CuttingAidSpec, DistanceProbe, MeshGround, Outline,
    PlanarOutline, Protection, ProtectionKind, ShieldSpec, SurfaceFrame, SurgeryError,
};

fn flat(xy: &[(f64, f64)]) -> Outline {
    let pts: Vec<Point3<f64>> = xy.iter().map(|&(x, y)| Point3::new(x, y, 0.0)).collect();
    Outline::in_frame(
        &pts,
        SurfaceFrame::new(Point3::origin(), &Vector3::z()).unwrap(),
    )
    .unwrap()
}

/// A square of half size `a` centred at the origin: `ρ(u) = a / max(|cos u|, |sin u|)`.
fn square(a: f64) -> Outline {
    flat(&[(-a, -a), (a, -a), (a, a), (-a, a)])
}

fn rho_square(a: f64, u: f64) -> f64 {
    a / u.cos().abs().max(u.sin().abs())
}

/// No two triangles that share no vertex intersect (touching included).
fn assert_no_self_intersection(mesh: &TriMesh) {
    let m = Model::new(mesh.vertices.clone(), mesh.triangles.clone()).unwrap();
    let id = Isometry3::identity();
    let r = collide(
        &id,
        &m,
        &id,
        &m,
        CollisionMode::AllContacts,
        &mut Default::default(),
    );
    for (a, b) in r.pairs {
        let (ta, tb) = (mesh.triangles[a as usize], mesh.triangles[b as usize]);
        let shared = ta.iter().any(|v| tb.contains(v))
            || ta.iter().any(|&i| {
                tb.iter().any(|&j| {
                    (mesh.vertices[i as usize] - mesh.vertices[j as usize]).norm() < 1e-15
                })
            });
        assert!(shared, "triangles {a} and {b} intersect");
    }
}

fn euler(mesh: &TriMesh) -> i64 {
    let mut edges = std::collections::HashSet::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            edges.insert((a.min(b), a.max(b)));
        }
    }
    mesh.vertices.len() as i64 - edges.len() as i64 + mesh.triangles.len() as i64
}

#[test]
fn shield_vertices_are_eq4_on_a_square() {
    let (a, h, w, n) = (0.02, 0.03, 0.04, 24);
    let s = generate_shield(
        &square(a),
        &ShieldSpec {
            height: h,
            margin: w,
            resolution: n,
        },
        None,
    )
    .unwrap();
    assert!(!s.adapted);
    assert_eq!(s.mesh.vertices.len(), n * (n + 1));
    assert_eq!(s.mesh.triangles.len(), 2 * n * n);
    assert!((s.origin - Point3::origin()).norm() < 1e-15);
    for k in 0..=n {
        let v = PI * k as f64 / n as f64;
        for j in 0..n {
            let u = TAU * j as f64 / n as f64;
            let (ri, ro) = (rho_square(a, u), rho_square(a, u) + w);
            // eq. 4 with i(u) = ρ_i (cos u, sin u), o(u) = ρ_o (cos u, sin u)
            let e = Point3::new(
                (v / 2.0).sin().powi(2) * ri * u.cos() + (v / 2.0).cos().powi(2) * ro * u.cos(),
                (v / 2.0).sin().powi(2) * ri * u.sin() + (v / 2.0).cos().powi(2) * ro * u.sin(),
                h * v.sin(),
            );
            assert!(
                (s.mesh.vertices[k * n + j] - e).norm() < 1e-15,
                "vertex ({k}, {j})"
            );
        }
    }
    // both curves are on the mesh: the inner one on the square, the outer one margin further out
    for (j, (i, o)) in s.inner.iter().zip(&s.outer).enumerate() {
        let u = TAU * j as f64 / n as f64;
        assert!(
            i.x.abs().max(i.y.abs()) - a < 1e-15 && (i.x.abs().max(i.y.abs()) - a).abs() < 1e-15
        );
        assert!(((o - i).norm() - w).abs() < 1e-15);
        assert!((o.y.atan2(o.x) - u).sin().abs() < 1e-12);
    }
    // an annulus: two boundary loops (outer curve, inner curve), consistently oriented
    let loops = boundary_loops(&s.mesh).expect("manifold with consistent orientation");
    assert_eq!(loops.len(), 2);
    assert_eq!(euler(&s.mesh), 0);
    for lp in &loops {
        assert_eq!(lp.len(), n);
        let pts: Vec<Point3<f64>> = lp.iter().map(|&k| s.mesh.vertices[k as usize]).collect();
        assert!(pts.iter().all(|p| s.inner.contains(p)) || pts.iter().all(|p| s.outer.contains(p)));
    }
    // normals toward the allowed side: up at the crest
    for t in &s.mesh.triangles {
        let [p, q, r] = t.map(|k| s.mesh.vertices[k as usize]);
        if p.z > 0.9 * h && q.z > 0.9 * h && r.z > 0.9 * h {
            assert!((q - p).cross(&(r - p)).z > 0.0);
        }
    }
    assert_no_self_intersection(&s.mesh);
}

#[test]
fn cutting_aid_vertices_are_eq5_on_a_square() {
    let (a, dx, h, n) = (0.02, 0.005, 0.015, 20);
    let aid = generate_cutting_aid(
        &square(a),
        &CuttingAidSpec {
            width: dx,
            height: h,
            resolution: n,
        },
        None,
    )
    .unwrap();
    let b = a - dx; // î: the square moved inward by Δx
    assert!((aid.inner_outline.area() - 4.0 * b * b).abs() < 1e-15);
    assert!((aid.origin - Point2::origin()).norm() < 1e-15);
    assert_eq!(aid.mesh.vertices.len(), n * n + 1);
    assert_eq!(aid.mesh.triangles.len(), 2 * n * n - n);
    assert!((aid.apex - Point3::new(0.0, 0.0, h)).norm() < 1e-15);
    for k in 1..=n {
        let v = FRAC_PI_2 * k as f64 / n as f64;
        for j in 0..n {
            let u = TAU * j as f64 / n as f64;
            let rho = rho_square(b, u);
            // eq. 5 with î(u) = ρ̂ (cos u, sin u)
            let e = Point3::new(
                (h * v.cos().powi(2) * u.cos() + v.sin().powi(2) * rho * u.cos()) * v.sin(),
                (h * v.cos().powi(2) * u.sin() + v.sin().powi(2) * rho * u.sin()) * v.sin(),
                h * v.cos(),
            );
            assert!(
                (aid.mesh.vertices[1 + (k - 1) * n + j] - e).norm() < 1e-15,
                "vertex ({k}, {j})"
            );
        }
    }
    // the equator is î, and the dome never reaches beyond it (no overhang over the cut band)
    for (j, e) in aid.equator.iter().enumerate() {
        assert!(
            (e.x.abs().max(e.y.abs()) - b).abs() < 1e-15,
            "equator point {j}"
        );
    }
    for p in &aid.mesh.vertices {
        let u = p.y.atan2(p.x);
        assert!(p.coords.xy().norm() <= rho_square(b, u) + 1e-12);
    }
    // a disc: one boundary loop, the equator; outward normals
    let loops = boundary_loops(&aid.mesh).unwrap();
    assert_eq!(loops.len(), 1);
    assert_eq!(euler(&aid.mesh), 1);
    let lp: Vec<Point3<f64>> = loops[0]
        .iter()
        .map(|&k| aid.mesh.vertices[k as usize])
        .collect();
    assert!(lp.iter().all(|p| aid.equator.contains(p)) && lp.len() == n);
    for t in &aid.mesh.triangles {
        let [p, q, r] = t.map(|k| aid.mesh.vertices[k as usize]);
        let c = Point3::from((p.coords + q.coords + r.coords) / 3.0);
        assert!((q - p).cross(&(r - p)).dot(&(c - Point3::origin())) > 0.0);
    }
    assert_no_self_intersection(&aid.mesh);
    // too high a dome would overhang the cut: refused, naming the largest height
    let err = generate_cutting_aid(
        &square(a),
        &CuttingAidSpec {
            width: dx,
            height: 1.51 * b,
            resolution: n,
        },
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("overhangs"), "{err}");
}

/// A star-shaped but not convex outline (a blob with a dent): parametrized from the centre of
/// its kernel, no disc.
#[test]
fn star_shaped_non_convex_outline() {
    let pts: Vec<(f64, f64)> = (0..90)
        .map(|k| {
            let t = TAU * k as f64 / 90.0;
            let r = 0.02 * (1.0 - 0.3 * (-((t - 1.0) / 0.3).powi(2)).exp());
            (r * t.cos(), 0.7 * r * t.sin())
        })
        .collect();
    let o = flat(&pts);
    assert!(o.planar().convex_hull().len() < 90, "not convex");
    let c = o.planar().star_origin().expect("star-shaped");
    let s = generate_shield(
        &o,
        &ShieldSpec {
            height: 0.02,
            margin: 0.03,
            resolution: 48,
        },
        None,
    )
    .unwrap();
    assert!(!s.adapted);
    assert!((s.origin.coords.xy() - c.coords).norm() < 1e-15);
    for i in &s.inner {
        assert!(o.planar().distance_to_boundary(&Point2::new(i.x, i.y)) < 1e-15);
    }
    assert_no_self_intersection(&s.mesh);
    let aid = generate_cutting_aid(
        &o,
        &CuttingAidSpec {
            width: 0.002,
            height: 0.008,
            resolution: 48,
        },
        None,
    )
    .unwrap();
    for e in &aid.equator {
        let d = o.planar().distance_to_boundary(&Point2::new(e.x, e.y));
        assert!(d >= 0.002 * (1.0 - 1e-9), "{d}");
    }
    assert_no_self_intersection(&aid.mesh);
}

/// A U-shaped outline is not star-shaped from any point: the shield stands on its convex hull
/// and the adaptation disc covers the pocket between hull and outline (Fig. 10).
#[test]
fn non_star_shaped_outline_gets_the_adaptation_disc() {
    let u = [
        (0.0, 0.0),
        (0.03, 0.0),
        (0.03, 0.03),
        (0.02, 0.03),
        (0.02, 0.01),
        (0.01, 0.01),
        (0.01, 0.03),
        (0.0, 0.03),
    ];
    let o = flat(&u);
    assert!(o.planar().star_origin().is_none());
    let n = 32;
    let s = generate_shield(
        &o,
        &ShieldSpec {
            height: 0.02,
            margin: 0.02,
            resolution: n,
        },
        None,
    )
    .unwrap();
    assert!(s.adapted);
    // the inner curve is the hull (the 3 cm square)
    for i in &s.inner {
        let d = (i.x - 0.015).abs().max((i.y - 0.015).abs());
        assert!((d - 0.015).abs() < 1e-15, "{i:?}");
    }
    // the disc fills exactly hull minus outline, flat, facing up
    let disc = &s.mesh.triangles[s.arch_triangles..];
    assert!(!disc.is_empty());
    let mut area = 0.0;
    for t in disc {
        let [p, q, r] = t.map(|k| s.mesh.vertices[k as usize]);
        let nz = (q - p).cross(&(r - p));
        assert!(nz.z > 0.0 && p.z == 0.0 && q.z == 0.0 && r.z == 0.0);
        area += nz.z / 2.0;
    }
    assert!(
        (area - (0.03 * 0.03 - o.planar().area())).abs() < 1e-15,
        "{area}"
    );
    // the disc's inner border is the outline: its vertices are the outline's
    let outline_pts = o.points();
    for t in disc {
        for k in t {
            assert!(outline_pts.contains(&s.mesh.vertices[*k as usize]));
        }
    }
    assert_no_self_intersection(&TriMesh {
        vertices: s.mesh.vertices.clone(),
        triangles: s.mesh.triangles[..s.arch_triangles].to_vec(),
    });
    // the cutting aid needs a star-shaped equator: refused with a clear error
    let err = generate_cutting_aid(
        &o,
        &CuttingAidSpec {
            width: 0.002,
            height: 0.005,
            resolution: n,
        },
        None,
    )
    .unwrap_err();
    assert!(matches!(err, SurgeryError::NotStarShaped { .. }), "{err}");
}

#[test]
fn bad_outlines_and_parameters_are_refused() {
    let pts = |xy: &[(f64, f64)]| -> Vec<Point3<f64>> {
        xy.iter().map(|&(x, y)| Point3::new(x, y, 0.0)).collect()
    };
    let up = Vector3::z();
    let bow_tie = Outline::new(
        &pts(&[(0.0, 0.0), (0.02, 0.02), (0.02, 0.0), (0.0, 0.01)]),
        &up,
    );
    assert!(
        matches!(bow_tie, Err(SurgeryError::SelfIntersecting { .. })),
        "{bow_tie:?}"
    );
    let line = PlanarOutline::new(
        &[
            Point2::new(0.0, 0.0),
            Point2::new(0.01, 0.0),
            Point2::new(0.02, 0.0),
        ],
        &[0.0; 3],
    );
    assert!(matches!(line, Err(SurgeryError::DegenerateOutline(_))));
    let dup = Outline::new(
        &pts(&[(0.0, 0.0), (0.0, 0.0), (0.01, 0.0), (0.01, 0.0)]),
        &up,
    );
    assert!(dup.is_err());
    let nan = Outline::new(&pts(&[(0.0, 0.0), (f64::NAN, 0.0), (0.0, 0.01)]), &up);
    assert!(matches!(nan, Err(SurgeryError::NonFinite { .. })));
    let sq = square(0.01);
    for spec in [
        ShieldSpec {
            height: 0.0,
            ..Default::default()
        },
        ShieldSpec {
            height: f64::NAN,
            ..Default::default()
        },
        ShieldSpec {
            margin: -0.01,
            ..Default::default()
        },
        ShieldSpec {
            resolution: 2,
            ..Default::default()
        },
        ShieldSpec {
            resolution: 100_000,
            ..Default::default()
        },
    ] {
        assert!(
            matches!(
                generate_shield(&sq, &spec, None),
                Err(SurgeryError::OutOfRange { .. })
            ),
            "{spec:?}"
        );
    }
    let wide = generate_cutting_aid(
        &sq,
        &CuttingAidSpec {
            width: 0.011,
            height: 0.001,
            resolution: 16,
        },
        None,
    );
    assert!(
        matches!(wide, Err(SurgeryError::OffsetTooLarge { .. })),
        "{wide:?}"
    );
}

struct Curved {
    phantom: Protection,
    outline: Outline,
}

fn curved() -> &'static Curved {
    static C: OnceLock<Curved> = OnceLock::new();
    C.get_or_init(|| {
        let mesh = cranium_phantom(&PhantomSpec::default()).unwrap();
        let pose = Isometry3::translation(0.45, 0.0, 0.0);
        let phantom =
            Protection::from_mesh("patient", ProtectionKind::Patient, &mesh, pose).unwrap();
        let pts = cut_outline(&phantom.model, &pose, &CutOutlineSpec::default()).unwrap();
        let c = pts.iter().fold(Vector3::zeros(), |s, p| s + p.coords) / pts.len() as f64;
        let outline = Outline::new(&pts, &(c - Vector3::new(0.45, 0.0, 0.0))).unwrap();
        Curved { phantom, outline }
    })
}

/// On the curved phantom: the outline lies on the bone, the shield's inner curve on the
/// outline, its outer curve and the cutting aid's equator on the bone; the meshes meet the
/// bone only along their feet; STL round trip.
#[test]
fn protections_stand_on_the_cranium() {
    let c = curved();
    let mut probe = DistanceProbe::new();
    for p in c.outline.points() {
        assert!(probe.point_distance(&c.phantom, &p) < 1e-9);
    }
    let frame = *c.outline.frame();
    let mut ground = MeshGround::new(&c.phantom.model, c.phantom.pose, frame);
    let n = 64;
    let s = generate_shield(
        &c.outline,
        &ShieldSpec {
            height: 0.025,
            margin: 0.035,
            resolution: n,
        },
        Some(&mut ground),
    )
    .unwrap();
    for (i, o) in s.inner.iter().zip(&s.outer) {
        let l = frame.to_local(i);
        assert!(
            c.outline
                .planar()
                .distance_to_boundary(&Point2::new(l.x, l.y))
                < 1e-12
        );
        // on the drawn polyline, so within the chord sag of the phantom's surface
        assert!(probe.point_distance(&c.phantom, i) < 2e-5);
        assert!(
            probe.point_distance(&c.phantom, o) < 1e-9,
            "outer foot off the bone"
        );
    }
    assert_no_self_intersection(&s.mesh);
    let aid = generate_cutting_aid(
        &c.outline,
        &CuttingAidSpec {
            width: 0.006,
            height: 0.012,
            resolution: n,
        },
        Some(&mut ground),
    )
    .unwrap();
    for e in &aid.equator {
        assert!(
            probe.point_distance(&c.phantom, e) < 1e-9,
            "equator off the bone"
        );
    }
    assert_no_self_intersection(&aid.mesh);
    // where the meshes touch the bone: only the rings at their feet
    let id = Isometry3::identity();
    let shield_m = Model::new(s.mesh.vertices.clone(), s.mesh.triangles.clone()).unwrap();
    let hits = collide(
        &c.phantom.pose,
        &c.phantom.model,
        &id,
        &shield_m,
        CollisionMode::AllContacts,
        &mut Default::default(),
    );
    for (_, t) in hits.pairs {
        let ring = t as usize / (2 * n);
        assert!(
            ring == 0 || ring == n - 1,
            "shield triangle {t} (ring {ring}) enters the bone"
        );
    }
    let aid_m = Model::new(aid.mesh.vertices.clone(), aid.mesh.triangles.clone()).unwrap();
    let hits = collide(
        &c.phantom.pose,
        &c.phantom.model,
        &id,
        &aid_m,
        CollisionMode::AllContacts,
        &mut Default::default(),
    );
    for (_, t) in hits.pairs {
        assert!(
            t as usize >= 2 * n * n - 3 * n,
            "cutting aid triangle {t} enters the bone away from the equator"
        );
    }
    // STL round trip of the protections
    let back = TriMesh::from_stl_bytes(&to_binary_stl(&s.mesh)).unwrap();
    assert_eq!(back.triangles.len(), s.mesh.triangles.len());
    assert!(back.vertices.len() <= s.mesh.vertices.len());
}
