//! The committed `urdf/` and `meshes/` files: up to date, watertight, and collision-free
//! between non-adjacent links in typical configurations.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nalgebra::{Point3, Vector3};
use rpq_kinematics::{MeshResolver, Robot, TriMesh};
use rpq_model_gen::rx60;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn committed_files_are_byte_identical_to_a_fresh_generation() {
    let files = rpq_model_gen::rx60_files().unwrap();
    let dir = tempfile::tempdir().unwrap();
    rpq_model_gen::write_files(&files, dir.path()).unwrap();
    for f in &files {
        let fresh = std::fs::read(dir.path().join(&f.path)).unwrap();
        let committed = std::fs::read(repo_root().join(&f.path))
            .unwrap_or_else(|e| panic!("{}: {e}", f.path.display()));
        assert!(
            fresh == committed,
            "{} is stale: run `cargo run -p rpq_model_gen -- rx60 --out-dir .` at the repository root",
            f.path.display()
        );
    }
    assert!(rpq_model_gen::stale_files(&files, &repo_root()).is_empty());
    // Deterministic within a process too.
    assert_eq!(rpq_model_gen::rx60_files().unwrap(), files);
}

/// Checks one binary STL file's bytes directly, independently of our writer.
fn check_stl(link: &str, bytes: &[u8]) -> usize {
    assert!(
        !bytes.starts_with(b"solid"),
        "{link}: header must not look like ASCII STL"
    );
    let n = u32::from_le_bytes(bytes[80..84].try_into().unwrap()) as usize;
    assert_eq!(bytes.len(), 84 + 50 * n, "{link}: size");
    let stl = stl_io::read_stl(&mut std::io::Cursor::new(bytes)).unwrap();
    stl.validate().unwrap();
    assert_eq!(stl.faces.len(), n);
    let v = |i: usize| {
        let p = stl.vertices[i];
        Vector3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2]))
    };
    let mut directed: HashMap<(usize, usize), usize> = HashMap::new();
    for (k, f) in stl.faces.iter().enumerate() {
        let [a, b, c] = f.vertices;
        assert!(
            a != b && b != c && a != c,
            "{link}: triangle {k} repeats a vertex"
        );
        for i in [a, b, c] {
            assert!(v(i).iter().all(|x| x.is_finite()), "{link}: vertex {i}");
        }
        let cross = (v(b) - v(a)).cross(&(v(c) - v(a)));
        assert!(
            cross.norm() / 2.0 > 1e-12,
            "{link}: triangle {k} degenerate"
        );
        let stored = Vector3::new(f.normal[0], f.normal[1], f.normal[2]).cast::<f64>();
        assert!(
            (stored.norm() - 1.0).abs() < 1e-6,
            "{link}: normal {k} not unit"
        );
        assert!(
            stored.normalize().dot(&cross.normalize()) > 1.0 - 1e-10,
            "{link}: normal {k} wrong"
        );
        for (p, q) in [(a, b), (b, c), (c, a)] {
            *directed.entry((p, q)).or_default() += 1;
        }
    }
    for (&(p, q), &count) in &directed {
        assert_eq!(
            count, 1,
            "{link}: edge {p}->{q} used {count} times in one direction"
        );
        assert_eq!(
            directed.get(&(q, p)),
            Some(&1),
            "{link}: edge {p}->{q} has no opposite twin"
        );
    }
    n
}

/// Triangle sets of the connected components (closed shells) of a mesh.
fn components(mesh: &TriMesh) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..mesh.vertices.len()).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for t in &mesh.triangles {
        for k in 1..3 {
            let (a, b) = (
                find(&mut parent, t[0] as usize),
                find(&mut parent, t[k] as usize),
            );
            parent[a] = b;
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, t) in mesh.triangles.iter().enumerate() {
        let root = find(&mut parent, t[0] as usize);
        groups.entry(root).or_default().push(i);
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().collect();
    out.sort();
    out
}

#[test]
fn every_mesh_is_watertight_outward_and_the_robot_has_about_23k_triangles() {
    let generated = rpq_model_gen::rx60_meshes().unwrap();
    let mut total = 0;
    for (link, mesh) in &generated {
        let bytes = std::fs::read(repo_root().join(rx60::mesh_path(link))).unwrap();
        let n = check_stl(link, &bytes);
        assert_eq!(n, mesh.triangles.len());
        let loaded = TriMesh::from_stl_bytes(&bytes).unwrap();
        assert_eq!(
            loaded.vertices.len(),
            mesh.vertices.len(),
            "{link}: vertices merged by f32 rounding"
        );
        let comps = components(&loaded);
        assert_eq!(comps.len(), mesh.shells.len(), "{link}: shells");
        for c in &comps {
            let shell = TriMesh {
                vertices: loaded.vertices.clone(),
                triangles: c.iter().map(|&t| loaded.triangles[t]).collect(),
            };
            assert!(shell.is_closed());
            assert!(
                shell.signed_volume() > 1e-7,
                "{link}: a shell is inside out or flat"
            );
        }
        total += n;
    }
    assert!((20_700..=25_300).contains(&total), "{total} triangles");
}

#[test]
fn urdf_refers_to_the_meshes_and_has_plausible_inertials() {
    let path = repo_root().join(rx60::urdf_path());
    let robot = Robot::from_urdf_file(&path).unwrap();
    for link in rx60::LINKS {
        let l = &robot.links()[robot.link_index(link).unwrap()];
        for shapes in [&l.visual, &l.collision] {
            assert_eq!(shapes.len(), 1);
            match &shapes[0].geometry {
                rpq_kinematics::Geometry::Mesh { filename, .. } => {
                    assert_eq!(filename, &format!("../meshes/rx60b/{link}.stl"))
                }
                other => panic!("{link}: {other:?}"),
            }
        }
    }
    let meshes = rpq_model_gen::rx60_meshes().unwrap();
    let mass = rx60::mass_properties(&meshes);
    let total: f64 = mass.iter().map(|(_, m)| m.volume * rx60::DENSITY).sum();
    assert!(
        (37.0..45.0).contains(&total),
        "total mass {total} kg (RX60: 41 kg)"
    );
    for ((link, mp), (_, mesh)) in mass.iter().zip(&meshes) {
        assert!(rx60::plausible_inertia(&mp.inertia), "{link}");
        // The union is at most the sum of its shells and at least the largest one.
        let shells: Vec<f64> = mesh
            .shells
            .iter()
            .map(|s| mesh.signed_volume(s.triangles.clone()))
            .collect();
        let (sum, max) = (
            shells.iter().sum::<f64>(),
            shells.iter().cloned().fold(0.0, f64::max),
        );
        assert!(
            mp.volume <= sum * 1.01 && mp.volume >= max * 0.99,
            "{link}: {} vs {shells:?}",
            mp.volume
        );
    }
}

// ---- brute-force separation between non-adjacent links ----

struct Posed {
    name: String,
    vertices: Vec<Point3<f64>>,
    triangles: Vec<[u32; 3]>,
    components: Vec<Vec<usize>>,
    lo: Vector3<f64>,
    hi: Vector3<f64>,
}

fn tri_box(p: &Posed, t: usize) -> (Vector3<f64>, Vector3<f64>) {
    let [a, b, c] = p.triangles[t].map(|i| p.vertices[i as usize].coords);
    (a.inf(&b).inf(&c), a.sup(&b).sup(&c))
}

fn boxes_overlap(a: &(Vector3<f64>, Vector3<f64>), b: &(Vector3<f64>, Vector3<f64>)) -> bool {
    (0..3).all(|k| a.0[k] <= b.1[k] && b.0[k] <= a.1[k])
}

/// Does segment pq cross triangle abc (non-coplanar case)?
fn segment_hits_triangle(p: Vector3<f64>, q: Vector3<f64>, [a, b, c]: [Vector3<f64>; 3]) -> bool {
    let n = (b - a).cross(&(c - a));
    let (sp, sq) = (n.dot(&(p - a)), n.dot(&(q - a)));
    if (sp > 0.0 && sq > 0.0) || (sp < 0.0 && sq < 0.0) || sp == sq {
        return false;
    }
    let x = p + (q - p) * (sp / (sp - sq));
    [(a, b), (b, c), (c, a)]
        .iter()
        .all(|(u, v)| (v - u).cross(&(x - u)).dot(&n) >= 0.0)
}

fn triangles_intersect(ta: [Vector3<f64>; 3], tb: [Vector3<f64>; 3]) -> bool {
    (0..3).any(|k| segment_hits_triangle(ta[k], ta[(k + 1) % 3], tb))
        || (0..3).any(|k| segment_hits_triangle(tb[k], tb[(k + 1) % 3], ta))
}

/// Is `x` inside one of the closed shells of `m` (ray parity per shell)?
fn inside(x: Vector3<f64>, m: &Posed) -> bool {
    let far = x + Vector3::new(0.5773, 0.6123, 0.5407) * 100.0;
    m.components.iter().any(|comp| {
        comp.iter()
            .filter(|&&t| {
                let tri = m.triangles[t].map(|i| m.vertices[i as usize].coords);
                segment_hits_triangle(x, far, tri)
            })
            .count()
            % 2
            == 1
    })
}

fn first_contact(a: &Posed, b: &Posed) -> Option<String> {
    let ba = (a.lo, a.hi);
    let bb = (b.lo, b.hi);
    if !boxes_overlap(&ba, &bb) {
        return None;
    }
    let cand_a: Vec<usize> = (0..a.triangles.len())
        .filter(|&t| boxes_overlap(&tri_box(a, t), &bb))
        .collect();
    let cand_b: Vec<usize> = (0..b.triangles.len())
        .filter(|&t| boxes_overlap(&tri_box(b, t), &ba))
        .collect();
    for &ta in &cand_a {
        let box_a = tri_box(a, ta);
        let tri_a = a.triangles[ta].map(|i| a.vertices[i as usize].coords);
        for &tb in &cand_b {
            if boxes_overlap(&box_a, &tri_box(b, tb)) {
                let tri_b = b.triangles[tb].map(|i| b.vertices[i as usize].coords);
                if triangles_intersect(tri_a, tri_b) {
                    return Some(format!(
                        "triangles {ta} and {tb} intersect at {:?}",
                        tri_a[0]
                    ));
                }
            }
        }
    }
    for (x, y) in [(a, b), (b, a)] {
        for comp in &x.components {
            let v = x.vertices[x.triangles[comp[0]][0] as usize].coords;
            if inside(v, y) {
                return Some(format!("a shell of {} lies inside {}", x.name, y.name));
            }
        }
    }
    None
}

fn non_adjacent_contacts(
    robot: &Robot,
    meshes: &[Option<TriMesh>],
    comps: &[Vec<Vec<usize>>],
    q: &[f64],
) -> Vec<String> {
    let poses = robot.forward_kinematics(q).unwrap();
    let mut posed: Vec<(usize, Posed)> = Vec::new();
    for (k, mesh) in meshes.iter().enumerate() {
        let Some(mesh) = mesh else { continue };
        let vertices: Vec<Point3<f64>> = mesh.vertices.iter().map(|v| poses[k] * v).collect();
        let (mut lo, mut hi) = (Vector3::repeat(f64::MAX), Vector3::repeat(f64::MIN));
        for v in &vertices {
            lo = lo.inf(&v.coords);
            hi = hi.sup(&v.coords);
        }
        posed.push((
            k,
            Posed {
                name: robot.links()[k].name.clone(),
                vertices,
                triangles: mesh.triangles.clone(),
                components: comps[k].clone(),
                lo,
                hi,
            },
        ));
    }
    let adjacent = |i: usize, j: usize| {
        let l = robot.links();
        l[i].parent_link == Some(j) || l[j].parent_link == Some(i)
    };
    let mut out = Vec::new();
    for (x, (i, a)) in posed.iter().enumerate() {
        for (j, b) in &posed[x + 1..] {
            if adjacent(*i, *j) {
                continue;
            }
            if let Some(why) = first_contact(a, b) {
                out.push(format!("{} / {}: {why}", a.name, b.name));
            }
        }
    }
    out
}

#[test]
fn non_adjacent_links_do_not_touch_in_typical_configurations() {
    let path = repo_root().join(rx60::urdf_path());
    let robot = Robot::from_urdf_file(&path).unwrap();
    let meshes = robot
        .collision_meshes(&MeshResolver::for_urdf_file(&path))
        .unwrap();
    let comps: Vec<Vec<Vec<usize>>> = meshes
        .iter()
        .map(|m| m.as_ref().map(components).unwrap_or_default())
        .collect();
    let d = f64::to_radians;
    let mut configs: Vec<[f64; 6]> = vec![
        [0.0; 6],
        [0.0, 0.0, d(90.0), 0.0, d(90.0), 0.0],
        [d(30.0), d(45.0), d(45.0), 0.0, d(90.0), 0.0],
        [d(-45.0), d(-30.0), d(120.0), d(90.0), d(-90.0), d(45.0)],
        [d(90.0), d(60.0), d(60.0), d(-90.0), d(60.0), d(180.0)],
        [0.0, d(-45.0), d(-90.0), 0.0, d(-60.0), 0.0],
        [0.0, d(90.0), 0.0, 0.0, 0.0, 0.0],
        [0.0, d(-90.0), 0.0, d(180.0), d(90.0), 0.0],
        [d(160.0), d(127.5), d(-90.0), d(270.0), d(45.0), d(-270.0)],
    ];
    // The full J5 range with the arm straight: the flange must clear the forearm.
    for k in 0..=10 {
        let j5 = d(-109.5) + d(230.0) * k as f64 / 10.0;
        configs.push([0.0, 0.0, 0.0, d(25.0) * k as f64, j5, d(20.0) * k as f64]);
    }
    // Folding the elbow: the forearm passes beside the upper arm.
    for j3 in [-134.5, -100.0, 100.0, 134.5] {
        configs.push([0.0, 0.0, d(j3), 0.0, 0.0, 0.0]);
    }
    for q in configs {
        assert!(robot.within_limits(&q).unwrap());
        let contacts = non_adjacent_contacts(&robot, &meshes, &comps, &q);
        assert!(contacts.is_empty(), "q = {q:?}: {contacts:#?}");
    }
}

#[test]
fn the_separation_check_detects_a_real_self_collision() {
    // Guard against a vacuous check: with the shoulder bent fully forward and the elbow
    // folded back, the wrist must hit the base or the turret.
    let path = repo_root().join(rx60::urdf_path());
    let robot = Robot::from_urdf_file(&path).unwrap();
    let meshes = robot
        .collision_meshes(&MeshResolver::for_urdf_file(&path))
        .unwrap();
    let comps: Vec<Vec<Vec<usize>>> = meshes
        .iter()
        .map(|m| m.as_ref().map(components).unwrap_or_default())
        .collect();
    let q = [
        0.0,
        f64::to_radians(127.5),
        f64::to_radians(134.5),
        0.0,
        0.0,
        0.0,
    ];
    let contacts = non_adjacent_contacts(&robot, &meshes, &comps, &q);
    assert!(!contacts.is_empty());
}
