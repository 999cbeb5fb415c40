//! Protection meshes (`rpq_interfaces/ProtectionMeshes`, e.g. from `virtual_protection`) as
//! simple objects of the scene: [`objects_from_msg`] converts a set (validated meshes with
//! their bounding-volume hierarchies, the slow part: run it off the node's loop), and
//! [`crate::server::Server::set_protections`] puts it into the world at run time.

use std::collections::HashMap;

use nalgebra::{Isometry3, Point3};
use rpq_kinematics::TriMesh;
use rpq_ros::interfaces::rpq_interfaces::msg::{ProtectionMesh, ProtectionMeshes};
use rpq_scene::{Body, SimpleObject};

/// The meshes of the last set and their objects: a set brings every mesh anew, and an
/// unchanged one (the patient, 50,000 triangles, with every shield) is not indexed again.
#[derive(Debug, Default)]
pub struct ObjectCache {
    meshes: HashMap<String, (ProtectionMesh, SimpleObject)>,
}

/// [`objects_from_msg`], reusing the objects of `cache` for meshes equal to the last set's
/// (the object shares its hierarchy); the cache then holds this set's meshes.
pub fn objects_from_msg_cached(
    msg: &ProtectionMeshes,
    cache: &mut ObjectCache,
) -> Result<Vec<SimpleObject>, String> {
    let mut out: Vec<SimpleObject> = Vec::with_capacity(msg.meshes.len());
    let mut next = HashMap::new();
    for m in &msg.meshes {
        check_name(&m.name, &out)?;
        let o = match cache.meshes.get(&m.name) {
            Some((old, o)) if old == m => o.clone(),
            _ => object(m)?,
        };
        next.insert(m.name.clone(), (m.clone(), o.clone()));
        out.push(o);
    }
    cache.meshes = next;
    Ok(out)
}

/// The meshes of `msg` as simple objects named after them, with their vertices as given (the
/// frame is applied by [`crate::server::Server::set_protections`]). Refused, naming the mesh:
/// an empty or `/`-holding or repeated name, a triangle list that is not triples of valid
/// indices, a non-finite vertex, a degenerate mesh.
pub fn objects_from_msg(msg: &ProtectionMeshes) -> Result<Vec<SimpleObject>, String> {
    let mut out: Vec<SimpleObject> = Vec::with_capacity(msg.meshes.len());
    for m in &msg.meshes {
        check_name(&m.name, &out)?;
        out.push(object(m)?);
    }
    Ok(out)
}

fn check_name(name: &str, before: &[SimpleObject]) -> Result<(), String> {
    if name.is_empty() || name.contains('/') {
        return Err(format!(
            "protection name `{name}` must be non-empty and contain no `/`"
        ));
    }
    if before.iter().any(|o| o.name == name) {
        return Err(format!("protection `{name}` appears twice"));
    }
    Ok(())
}

/// One mesh as a simple object at the identity pose.
fn object(m: &ProtectionMesh) -> Result<SimpleObject, String> {
    let name = m.name.as_str();
    {
        if m.triangles.is_empty() || !m.triangles.len().is_multiple_of(3) {
            return Err(format!(
                "protection `{name}`: {} triangle indices, not a non-zero multiple of 3",
                m.triangles.len()
            ));
        }
        let vertices: Vec<Point3<f64>> = m
            .vertices
            .iter()
            .map(|v| Point3::new(v.x, v.y, v.z))
            .collect();
        let triangles = m
            .triangles
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let mesh =
            TriMesh::new(vertices, triangles).map_err(|e| format!("protection `{name}`: {e}"))?;
        let body =
            Body::from_trimesh(name, &mesh).map_err(|e| format!("protection `{name}`: {e}"))?;
        Ok(SimpleObject {
            name: name.to_string(),
            body,
            pose: Isometry3::identity(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpq_ros::interfaces::rpq_interfaces::msg::ProtectionMesh;
    use rpq_ros::msg::geometry_msgs::Point;

    fn mesh(name: &str, triangles: Vec<u32>) -> ProtectionMesh {
        ProtectionMesh {
            name: name.into(),
            kind: ProtectionMesh::KIND_SHIELD,
            vertices: [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)]
                .iter()
                .map(|&(x, y, z)| Point { x, y, z })
                .collect(),
            triangles,
        }
    }

    fn msg(meshes: Vec<ProtectionMesh>) -> ProtectionMeshes {
        ProtectionMeshes {
            meshes,
            ..Default::default()
        }
    }

    fn server(padding: f64) -> crate::server::Server {
        use crate::settings::{declarations, Settings};
        let yaml = format!(
            "proximity_query:\n  ros__parameters:\n    scene_file: s.yaml\n    default_padding: {padding:?}\n"
        );
        let p = rpq_ros::params::Params::resolve(
            &declarations(),
            "/proximity_query",
            &[("p", &yaml)],
            &[],
        )
        .unwrap();
        let settings = Settings::load(&p).unwrap();
        let mut sc = rpq_scene::Scenario::new();
        let table = objects_from_msg(&msg(vec![mesh("table", vec![0, 1, 2])]))
            .unwrap()
            .remove(0);
        sc.add_object(SimpleObject {
            pose: Isometry3::translation(0.0, 0.0, 2.0),
            ..table
        })
        .unwrap();
        let world = rpq_scene::World::new(rpq_scene::spec::LoadedScene {
            scenario: sc,
            options: Default::default(),
        });
        crate::server::Server::new(world, &settings).unwrap()
    }

    fn names(s: &crate::server::Server) -> Vec<String> {
        s.world()
            .scenario()
            .objects()
            .iter()
            .map(|o| o.name().to_string())
            .collect()
    }

    /// Distance between two simple objects of the server's world.
    fn gap(s: &crate::server::Server, a: &str, b: &str) -> f64 {
        let w = s.world();
        let (a, b) = (w.body_id(a).unwrap(), w.body_id(b).unwrap());
        let mut sc = w.scenario().clone();
        sc.body_distance(a, b).unwrap().distance
    }

    #[test]
    fn sets_add_replace_and_remove_objects() {
        let mut s = server(0.01);
        let set = |ms: Vec<ProtectionMesh>| objects_from_msg(&msg(ms)).unwrap();
        // a set naming an object of the scene file is refused, nothing changes
        let e = s
            .set_protections(set(vec![mesh("table", vec![0, 1, 2])]), "")
            .unwrap_err();
        assert!(e.contains("table"), "{e}");
        let e = s
            .set_protections(set(vec![mesh("shield", vec![0, 1, 2])]), "nowhere")
            .unwrap_err();
        assert!(e.contains("nowhere"), "{e}");
        assert_eq!(names(&s), ["table"]);
        // added in the world frame: the triangle at z = 0, the table's at z = 2
        let m = s
            .set_protections(
                set(vec![
                    mesh("shield", vec![0, 1, 2]),
                    mesh("aid", vec![0, 2, 1]),
                ]),
                "world",
            )
            .unwrap();
        assert!(m.contains("2 added, 0 replaced, 0 removed"), "{m}");
        assert_eq!(names(&s), ["table", "shield", "aid"]);
        assert!((gap(&s, "table", "shield") - 2.0).abs() < 1e-12);
        let shield = s.world().body_id("shield").unwrap();
        assert_eq!(s.world().padding(shield), 0.01, "default_padding");
        // the next set in the table's frame: shield replaced 2 m higher (on the table), aid
        // removed, cutting_aid added
        let m = s
            .set_protections(
                set(vec![
                    mesh("cutting_aid", vec![0, 1, 2]),
                    mesh("shield", vec![0, 1, 2]),
                ]),
                "table",
            )
            .unwrap();
        assert!(m.contains("1 added, 1 replaced, 1 removed"), "{m}");
        assert_eq!(names(&s), ["table", "shield", "cutting_aid"]);
        assert_eq!(s.protections(), ["shield", "cutting_aid"]);
        assert!(gap(&s, "table", "shield") < 1e-12);
        // an empty set removes them all
        let m = s.set_protections(Vec::new(), "").unwrap();
        assert!(m.contains("0 added, 0 replaced, 2 removed"), "{m}");
        assert_eq!(names(&s), ["table"]);
    }

    #[test]
    fn cache_reuses_unchanged_meshes() {
        let mut cache = ObjectCache::default();
        let a = msg(vec![
            mesh("patient", vec![0, 1, 2]),
            mesh("shield", vec![0, 1, 2]),
        ]);
        let first = objects_from_msg_cached(&a, &mut cache).unwrap();
        let b = msg(vec![
            mesh("patient", vec![0, 1, 2]),
            mesh("shield", vec![0, 2, 1]),
        ]);
        let second = objects_from_msg_cached(&b, &mut cache).unwrap();
        // the patient is the same object (shared hierarchy), the changed shield a new one
        assert!(std::sync::Arc::ptr_eq(
            &first[0].body.model,
            &second[0].body.model
        ));
        assert!(!std::sync::Arc::ptr_eq(
            &first[1].body.model,
            &second[1].body.model
        ));
        assert!(objects_from_msg_cached(&msg(vec![mesh("s", vec![0, 1])]), &mut cache).is_err());
    }

    #[test]
    fn converts_and_refuses_bad_meshes() {
        let ok = objects_from_msg(&msg(vec![mesh("shield", vec![0, 1, 2])])).unwrap();
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].name, "shield");
        assert_eq!(ok[0].body.model.num_triangles(), 1);
        for (m, word) in [
            (vec![mesh("a/b", vec![0, 1, 2])], "contain no"),
            (vec![mesh("", vec![0, 1, 2])], "non-empty"),
            (vec![mesh("s", vec![0, 1])], "multiple of 3"),
            (vec![mesh("s", vec![0, 1, 7])], "s"),
            (
                vec![mesh("s", vec![0, 1, 2]), mesh("s", vec![0, 1, 2])],
                "twice",
            ),
        ] {
            let e = objects_from_msg(&msg(m)).unwrap_err();
            assert!(e.contains(word), "{e}");
        }
    }
}
