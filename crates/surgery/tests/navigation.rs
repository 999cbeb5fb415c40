//! Surface navigation (RPQ §4.1): each contact case of Fig. 7 with its expected position, and
//! properties on random triangles and meshes checked by brute force with the engine's own
//! triangle-triangle distance (no code shared with the navigator's sweep query): the result's
//! motion never comes within the tool radius of a triangle (so the tool never crosses a
//! surface nor enters a closed mesh), and it is the candidate closest to the desired point.

use nalgebra::{Isometry3, Point3, UnitQuaternion, Vector3};
use proptest::prelude::*;
use rpq_kinematics::TriMesh;
use rpq_proximity::triangle::{closest_point_on_triangle, distance as tri_distance};
use rpq_surgery::{
    NavigatorConfig, Outcome, Protection, ProtectionKind, ProtectionSet, SurfaceNavigator,
};

const SKIN: f64 = 1e-6;

fn pt(x: f64, y: f64, z: f64) -> Point3<f64> {
    Point3::new(x, y, z)
}

fn navigator(tris: &[[Point3<f64>; 3]], radius: f64) -> SurfaceNavigator {
    let mesh = TriMesh::new(
        tris.iter().flat_map(|t| t.iter().copied()).collect(),
        (0..tris.len() as u32)
            .map(|i| [3 * i, 3 * i + 1, 3 * i + 2])
            .collect(),
    )
    .unwrap();
    let set = ProtectionSet::new().with(
        Protection::from_mesh("m", ProtectionKind::Other, &mesh, Isometry3::identity()).unwrap(),
    );
    SurfaceNavigator::new(
        set,
        NavigatorConfig {
            radius,
            skin: SKIN,
            max_iterations: 8,
        },
    )
    .unwrap()
}

/// Segment-triangle distance by the engine's triangle-triangle distance against a sliver
/// triangle holding the segment.
fn seg_dist(a: &Point3<f64>, b: &Point3<f64>, t: &[Point3<f64>; 3]) -> f64 {
    let d = b - a;
    let (far, side) = if d.norm() > 1e-9 {
        (
            *b,
            d.cross(&Vector3::new(0.36, 0.48, 0.8)).normalize() * 1e-10,
        )
    } else {
        (
            a + Vector3::new(0.0, 0.0, 1e-10),
            Vector3::new(1e-10, 0.0, 0.0),
        )
    };
    tri_distance(&[*a, far, far + side], t).0
}

fn assert_clear(p: &Point3<f64>, x: &Point3<f64>, tris: &[[Point3<f64>; 3]], r: f64) {
    for (i, t) in tris.iter().enumerate() {
        let d = seg_dist(p, x, t);
        assert!(
            d >= r - 1e-9,
            "motion {p:?} -> {x:?} comes {d} from triangle {i} (radius {r})"
        );
    }
}

/// The triangle of the Fig. 7 cases: in z = 0, normal +z, vertices 1, 2, 3.
fn fig7() -> [Point3<f64>; 3] {
    [pt(0.0, 0.0, 0.0), pt(0.04, 0.0, 0.0), pt(0.0, 0.03, 0.0)]
}

/// Fig. 7 a: the desired point below the face projects onto the plane (point and sphere).
#[test]
fn face_region_projects_onto_the_plane() {
    for r in [0.0, 0.002] {
        let mut nav = navigator(&[fig7()], r);
        let p = pt(0.01, 0.01, 0.01);
        let n = nav.navigate(&p, &pt(0.012, 0.008, -0.005));
        assert_eq!(n.outcome, Outcome::Slid);
        assert!(
            (n.position - pt(0.012, 0.008, r + SKIN)).norm() < 1e-12,
            "{n:?}"
        );
        assert!((n.normal.unwrap().into_inner() - Vector3::z()).norm() < 1e-12);
        assert_clear(&p, &n.position, &[fig7()], r);
        // from below, the tool stays below
        let p = pt(0.01, 0.01, -0.01);
        let n = nav.navigate(&p, &pt(0.012, 0.008, 0.005));
        assert!(
            (n.position - pt(0.012, 0.008, -(r + SKIN))).norm() < 1e-12,
            "{n:?}"
        );
        // a free motion is kept
        let n = nav.navigate(&pt(0.01, 0.01, 0.01), &pt(0.02, 0.0, 0.02));
        assert_eq!(n.outcome, Outcome::Free);
        assert_eq!(n.position, pt(0.02, 0.0, 0.02));
    }
}

/// Fig. 7 b/d: a desired point beyond the plane whose projection falls in one of the six
/// outside regions goes to the nearest border point of its region (lifted by `r + skin` to the
/// side the tool comes from), and that motion is collision-free.
#[test]
fn each_outside_region_projects_onto_its_border_point() {
    let t = fig7();
    let r = 0.002;
    let lift = Vector3::new(0.0, 0.0, r + SKIN);
    // (start above the face near the border, desired below the plane in the region, border point)
    let cases = [
        (
            "R1",
            pt(0.002, 0.002, 0.004),
            pt(-0.001, -0.001, -0.002),
            t[0],
        ),
        (
            "R2",
            pt(0.037, 0.001, 0.004),
            pt(0.041, -0.001, -0.002),
            t[1],
        ),
        (
            "R3",
            pt(0.001, 0.027, 0.004),
            pt(-0.001, 0.031, -0.002),
            t[2],
        ),
        (
            "R12",
            pt(0.02, 0.002, 0.004),
            pt(0.02, -0.001, -0.002),
            pt(0.02, 0.0, 0.0),
        ),
        // edge 23: x/0.04 + y/0.03 = 1, outward normal (3, 4)/5; (0.02, 0.015) on it
        (
            "R23",
            pt(0.018, 0.013, 0.004),
            pt(0.0206, 0.0158, -0.002),
            pt(0.02, 0.015, 0.0),
        ),
        (
            "R31",
            pt(0.002, 0.015, 0.004),
            pt(-0.001, 0.015, -0.002),
            pt(0.0, 0.015, 0.0),
        ),
    ];
    for (name, p, d, border) in cases {
        let (region, proj) = rpq_surgery::regions::project(&t, &d).unwrap();
        assert_eq!(region.name(), name);
        assert!((proj - border).norm() < 1e-12, "{name}: {proj:?}");
        let mut nav = navigator(&[t], r);
        let n = nav.navigate(&p, &d);
        assert_eq!(n.outcome, Outcome::Slid, "{name}");
        assert!(
            (n.position - (border + lift)).norm() < 1e-12,
            "{name}: {:?}",
            n.position
        );
        assert_clear(&p, &n.position, &[t], r);
    }
}

/// A sphere beside an edge, desired point still on its side of the plane but within reach of
/// the edge: it rolls around the edge (the nearest point at `r + skin` from the border).
#[test]
fn sphere_rolls_around_an_edge() {
    let t = fig7();
    let r = 0.002;
    let mut nav = navigator(&[t], r);
    let p = pt(0.02, -0.004, 0.002);
    let d = pt(0.02, -0.001, 0.0005);
    let n = nav.navigate(&p, &d);
    assert_eq!(n.outcome, Outcome::Slid);
    let border = pt(0.02, 0.0, 0.0);
    let expect = border + (d - border).normalize() * (r + SKIN);
    assert!(
        (n.position - expect).norm() < 1e-12,
        "{:?} vs {expect:?}",
        n.position
    );
}

/// Fig. 7 c: on a convex ridge the desired point's projection onto one face falls beyond the
/// ridge, where it would be inside the object; the border projection puts it on the ridge.
#[test]
fn ridge_projection_stays_outside() {
    // a roof: two faces meeting at the ridge y = 0, z = 0.01, sloping down on both sides
    let a = [
        pt(-0.05, -0.05, 0.0),
        pt(0.05, -0.05, 0.0),
        pt(0.05, 0.0, 0.01),
    ];
    let b = [
        pt(-0.05, -0.05, 0.0),
        pt(0.05, 0.0, 0.01),
        pt(-0.05, 0.0, 0.01),
    ];
    let c = [
        pt(-0.05, 0.0, 0.01),
        pt(0.05, 0.0, 0.01),
        pt(0.05, 0.05, 0.0),
    ];
    let e = [
        pt(-0.05, 0.0, 0.01),
        pt(0.05, 0.05, 0.0),
        pt(-0.05, 0.05, 0.0),
    ];
    let roof = [a, b, c, e];
    let mut nav = navigator(&roof, 0.0);
    // start above the left slope, desired point under the right slope, below the ridge
    let p = pt(0.0, -0.01, 0.012);
    let d = pt(0.0, 0.004, 0.006);
    let n = nav.navigate(&p, &d);
    assert_eq!(n.outcome, Outcome::Slid);
    assert_clear(&p, &n.position, &roof, 0.0);
    // the result is above the roof: on the ridge or on a face, never under it
    let roof_z = |y: f64| 0.01 - 0.2 * y.abs();
    assert!(
        n.position.z >= roof_z(n.position.y) - 1e-12,
        "{:?}",
        n.position
    );
    // the motion crossed the left slope; d projects beyond its border: onto the ridge
    let left_normal = (a[1] - a[0]).cross(&(a[2] - a[0])).normalize();
    let on_ridge = pt(0.0, 0.0, 0.01) + left_normal * SKIN;
    assert!(
        (n.position - on_ridge).norm() < 1e-12,
        "{:?} vs {on_ridge:?}",
        n.position
    );
}

/// A V-shaped valley (the channel between shield and cutting aid, a wall on the skull): a
/// push into its bottom slides along the valley instead of stopping.
#[test]
fn valley_slides_along_its_bottom() {
    let s = 0.02;
    let left = [
        [pt(-s, -0.1, s), pt(0.0, -0.1, 0.0), pt(0.0, 0.1, 0.0)],
        [pt(-s, -0.1, s), pt(0.0, 0.1, 0.0), pt(-s, 0.1, s)],
    ];
    let right = [
        [pt(0.0, -0.1, 0.0), pt(s, -0.1, s), pt(s, 0.1, s)],
        [pt(0.0, -0.1, 0.0), pt(s, 0.1, s), pt(0.0, 0.1, 0.0)],
    ];
    let tris = [left[0], left[1], right[0], right[1]];
    for r in [0.0, 0.002] {
        let mut nav = navigator(&tris, r);
        let bottom = r * std::f64::consts::SQRT_2;
        let p = pt(0.0, 0.0, bottom + 0.003);
        let d = pt(0.001, 0.01, -0.01);
        let n = nav.navigate(&p, &d);
        assert_eq!(n.outcome, Outcome::Slid, "radius {r}");
        assert_clear(&p, &n.position, &tris, r);
        // it went along the valley (y) to near its bottom
        assert!((n.position.y - 0.01).abs() < 1e-9, "{:?}", n.position);
        assert!(
            n.position.x.abs() < 1e-5 && (n.position.z - bottom).abs() < 1e-5,
            "{:?}",
            n.position
        );
    }
}

/// Starting inside the radius of a triangle (a protection loaded around the tool), only
/// motions that do not approach it are allowed; the tool is never moved on its own.
#[test]
fn started_inside_never_goes_deeper_and_never_jumps() {
    let t = fig7();
    let r = 0.003;
    let mut nav = navigator(&[t], r);
    let p = pt(0.01, 0.01, 0.001); // 1 mm above the face, radius 3 mm
    let stay = nav.navigate(&p, &p);
    assert_eq!(stay.outcome, Outcome::Free);
    assert_eq!(stay.position, p);
    assert!(stay.started_inside);
    // deeper: refused, slides at the same height
    let n = nav.navigate(&p, &pt(0.012, 0.01, 0.0));
    assert_eq!(n.outcome, Outcome::Slid);
    assert!(n.position.z >= 0.001 && (n.position.x - 0.012).abs() < 1e-12);
    // away: allowed as is
    let n = nav.navigate(&p, &pt(0.01, 0.012, 0.002));
    assert_eq!(n.outcome, Outcome::Free);
}

/// Where a tool is before a set is loaded: clear, overlapping, or behind a surface (under the
/// shield or the cutting aid, inside the patient), from the triangles' orientation.
#[test]
fn placement_before_loading_a_set() {
    use rpq_surgery::Placement;
    let t = fig7(); // normal +z: the allowed side is above
    let mesh = TriMesh::new(t.to_vec(), vec![[0, 1, 2]]).unwrap();
    let set = ProtectionSet::new().with(
        Protection::from_mesh(
            "aid",
            ProtectionKind::CuttingAid,
            &mesh,
            Isometry3::identity(),
        )
        .unwrap(),
    );
    assert_eq!(
        set.placement(&pt(0.01, 0.01, 0.01), 0.002, 0.05),
        Placement::Clear
    );
    assert!(matches!(
        set.placement(&pt(0.01, 0.01, 0.001), 0.002, 0.05),
        Placement::Overlapping { .. }
    ));
    assert!(matches!(
        set.placement(&pt(0.01, 0.01, -0.01), 0.002, 0.05),
        Placement::ForbiddenSide { .. }
    ));
    // beyond reach nothing is known: clear
    assert_eq!(
        set.placement(&pt(0.01, 0.01, -0.2), 0.002, 0.05),
        Placement::Clear
    );
}

/// Bad input gives the current position.
#[test]
fn non_finite_input_stays() {
    let mut nav = navigator(&[fig7()], 0.001);
    let p = pt(0.01, 0.01, 0.01);
    let n = nav.navigate(&p, &pt(f64::NAN, 0.0, 0.0));
    assert_eq!((n.outcome, n.position), (Outcome::Blocked, p));
    let (v, n) = nav.filter_twist(
        &p,
        &nalgebra::Vector6::new(0.1, 0.0, 0.0, 0.2, 0.0, 0.0),
        0.0,
    );
    assert_eq!(n.outcome, Outcome::Blocked);
    assert_eq!(v, nalgebra::Vector6::new(0.0, 0.0, 0.0, 0.2, 0.0, 0.0));
}

/// The candidate of one triangle by the rule of the navigation's docs, computed with the
/// engine's closest point (independent of the Fig. 7 region code); `None` in the grazing
/// case (target clear of the triangle, motion touching it), where the rule is a heuristic.
fn candidate(
    p: &Point3<f64>,
    d: &Point3<f64>,
    t: &[Point3<f64>; 3],
    r: f64,
) -> Option<Point3<f64>> {
    let n = (t[1] - t[0]).cross(&(t[2] - t[0])).normalize();
    let c = Point3::from(closest_point_on_triangle(
        &d.coords,
        &t[0].coords,
        &t[1].coords,
        &t[2].coords,
    ));
    let s = if n.dot(&(p - t[0])) < 0.0 { -1.0 } else { 1.0 };
    let crossed = s * n.dot(&(d - t[0])) < 0.0;
    let w = d - c;
    if !crossed && w.norm() > r {
        return None;
    }
    let q0 = d - n * n.dot(&(d - t[0]));
    let face = (q0 - c).norm() < 1e-12;
    let dir = if face || crossed || w.norm() <= 1e-300 {
        n * s
    } else {
        w.normalize()
    };
    Some(c + dir * (r + SKIN))
}

/// Brute-force checks of one navigation over `tris`.
fn check(
    tris: &[[Point3<f64>; 3]],
    r: f64,
    p: Point3<f64>,
    d: Point3<f64>,
) -> Result<(), TestCaseError> {
    // the start must be clear of every triangle
    if tris.iter().any(|t| seg_dist(&p, &p, t) <= r + 1e-6) {
        return Ok(());
    }
    let mut nav = navigator(tris, r);
    let n = nav.navigate(&p, &d);
    for t in tris {
        let dist = seg_dist(&p, &n.position, t);
        prop_assert!(
            dist >= r - 1e-9,
            "motion comes {} from a triangle, radius {}",
            dist,
            r
        );
    }
    let hits: Vec<&[Point3<f64>; 3]> = tris.iter().filter(|t| seg_dist(&p, &d, t) <= r).collect();
    match n.outcome {
        Outcome::Free => prop_assert!(hits.iter().all(|t| seg_dist(&p, &d, t) >= r - 1e-9)),
        Outcome::Blocked => prop_assert_eq!(n.position, p),
        Outcome::Slid => prop_assert!(!hits.is_empty()),
    }
    // the closest candidate, when it is itself collision-free, is the answer
    let cands: Option<Vec<Point3<f64>>> = hits.iter().map(|t| candidate(&p, &d, t, r)).collect();
    if let Some(cands) = cands {
        if let Some(best) = cands
            .iter()
            .min_by(|a, b| (*a - d).norm().total_cmp(&(*b - d).norm()))
        {
            let unique = cands
                .iter()
                .filter(|c| ((*c - d).norm() - (best - d).norm()).abs() < 1e-12)
                .count()
                == 1;
            let free = tris.iter().all(|t| seg_dist(&p, best, t) > r + 1e-9);
            if unique && free {
                prop_assert_eq!(n.outcome, Outcome::Slid);
                prop_assert!(
                    (n.position - best).norm() < 1e-9,
                    "{:?} vs closest candidate {:?}",
                    n.position,
                    best
                );
            }
        }
    }
    Ok(())
}

fn arb_point(s: f64) -> impl Strategy<Value = Point3<f64>> {
    proptest::array::uniform3(-s..s).prop_map(|a| pt(a[0], a[1], a[2]))
}

/// A closed, convex-ish mesh: an ellipsoid (UV grid) with random semi-axes and pose.
fn ellipsoid(axes: [f64; 3], rot: [f64; 3], centre: [f64; 3], n: usize) -> Vec<[Point3<f64>; 3]> {
    let pose = Isometry3::from_parts(
        Vector3::from(centre).into(),
        UnitQuaternion::from_euler_angles(rot[0], rot[1], rot[2]),
    );
    let at = |i: usize, j: usize| {
        let th = std::f64::consts::PI * i as f64 / n as f64;
        let ph = std::f64::consts::TAU * j as f64 / n as f64;
        pose * pt(
            axes[0] * th.sin() * ph.cos(),
            axes[1] * th.sin() * ph.sin(),
            axes[2] * th.cos(),
        )
    };
    let mut out = Vec::new();
    for i in 0..n {
        for j in 0..n {
            let (a, b, c, d) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            if i > 0 {
                out.push([a, b, d]);
            }
            if i + 1 < n {
                out.push([b, c, d]);
            }
        }
    }
    out
}

/// Is `x` strictly inside the convex mesh `tris` around `centre` (on the centre's side of
/// every face plane)?
fn inside_convex(x: &Point3<f64>, tris: &[[Point3<f64>; 3]], centre: &Point3<f64>) -> bool {
    tris.iter().all(|t| {
        let n = (t[1] - t[0]).cross(&(t[2] - t[0]));
        let side = n.dot(&(centre - t[0])).signum();
        n.dot(&(x - t[0])) * side > 0.0
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Random single triangles, starts and desired points, point and sphere tools.
    #[test]
    fn random_triangles(a in arb_point(0.05), b in arb_point(0.05), c in arb_point(0.05),
                        p in arb_point(0.06), d in arb_point(0.06), r in prop_oneof![Just(0.0), 0.0..0.01]) {
        let t = [a, b, c];
        let n = (b - a).cross(&(c - a));
        prop_assume!(n.norm() > 1e-6 * (b - a).norm().max((c - a).norm()).powi(2));
        check(&[t], r, p, d)?;
    }

    /// Random soups of triangles.
    #[test]
    fn random_soups(tris in proptest::collection::vec(proptest::array::uniform3(arb_point(0.04)), 2..12),
                    p in arb_point(0.05), d in arb_point(0.05), r in 0.0..0.006) {
        let tris: Vec<[Point3<f64>; 3]> = tris
            .into_iter()
            .filter(|t| (t[1] - t[0]).cross(&(t[2] - t[0])).norm() > 1e-6)
            .collect();
        prop_assume!(!tris.is_empty());
        check(&tris, r, p, d)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Random closed meshes: a tool starting outside is outside after every navigation.
    #[test]
    fn random_closed_meshes(axes in proptest::array::uniform3(0.01..0.04f64), rot in proptest::array::uniform3(-3.0..3.0f64),
                            centre in proptest::array::uniform3(-0.01..0.01f64),
                            steps in proptest::collection::vec(arb_point(0.02), 1..20),
                            start in arb_point(0.07), r in prop_oneof![Just(0.0), 0.0..0.004]) {
        let tris = ellipsoid(axes, rot, centre, 10);
        let c = Point3::from(centre);
        prop_assume!(!inside_convex(&start, &tris, &c));
        let mut p = start;
        for s in steps {
            let d = p + s.coords;
            if tris.iter().any(|t| seg_dist(&p, &p, t) <= r + 1e-6) {
                break;
            }
            check(&tris, r, p, d)?;
            let mut nav = navigator(&tris, r);
            let n = nav.navigate(&p, &d);
            prop_assert!(!inside_convex(&n.position, &tris, &c), "{:?} is inside", n.position);
            p = n.position;
        }
    }
}
