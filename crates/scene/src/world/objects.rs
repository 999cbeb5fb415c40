//! Simple objects added, replaced and removed at run time (e.g. the surgical protections that
//! `virtual_protection` generates, put into `proximity_query`'s scene while it runs).
//!
//! * [`World::add_object`] appends a simple object; [`World::replace_object`] puts a new mesh
//!   or pose under an existing simple object's name, at the same index;
//!   [`World::remove_object`] drops a simple object (later objects move down by one index).
//!   Robots are never added, replaced or removed here: their indices, joint positions and the
//!   bodies of every other object stay as they were.
//! * The collision matrix stays consistent: it is kept for every pair of untouched objects;
//!   every pair of an added or replaced object is checked (no never-collide entry: the
//!   matrix was computed for other geometry), and a removed object's entries go with it. The
//!   matrix's object list is extended by the new object at its pose, so the scenario accepts it.
//! * Paddings and run-time allowed-collision entries stay with their bodies; a replaced object
//!   keeps its own (they were set for its name), an added one starts with padding 0 and no
//!   entries.
//!
//! The scenario is rebuilt from shared meshes (no hierarchy is rebuilt; cost linear in the
//! number of objects and matrix entries), so these calls belong to scene changes, not to query
//! loops.

use crate::cmatrix::{CollisionMatrix, MatrixObject};
use crate::error::SceneError;
use crate::object::{Object, SimpleObject};
use crate::pose::PoseSpec;
use crate::scenario::{pair_slot, Scenario};

use super::{Rules, World};

impl World {
    /// Appends a simple object; returns its index. Its pairs with every other body are
    /// checked (no collision-matrix entry), its padding is 0. Refused: a name in use, an
    /// empty name or one with `/`, a non-finite pose.
    pub fn add_object(&mut self, object: SimpleObject) -> Result<usize, SceneError> {
        let mut objects = self.scenario.objects().to_vec();
        let n = objects.len();
        objects.push(Object::Simple(object));
        let map: Vec<Option<usize>> = (0..n).map(Some).collect();
        self.rebuild(objects, &map, &[n])?;
        Ok(n)
    }

    /// Replaces the simple object of the same name (mesh and pose) at its index; returns the
    /// index. The collision matrix no longer skips any of its pairs; its padding and run-time
    /// entries stay. Refused: no simple object of that name, a non-finite pose.
    pub fn replace_object(&mut self, object: SimpleObject) -> Result<usize, SceneError> {
        let k = self.simple_index(&object.name)?;
        let mut objects = self.scenario.objects().to_vec();
        objects[k] = Object::Simple(object);
        let map: Vec<Option<usize>> = (0..objects.len()).map(Some).collect();
        self.rebuild(objects, &map, &[k])?;
        Ok(k)
    }

    /// Removes the simple object `name`; the objects after it move down by one index (robots
    /// loaded before it keep theirs). Selections made before hold indices: make them again.
    /// Refused: no simple object of that name.
    pub fn remove_object(&mut self, name: &str) -> Result<(), SceneError> {
        let k = self.simple_index(name)?;
        let mut objects = self.scenario.objects().to_vec();
        objects.remove(k);
        let map: Vec<Option<usize>> = (0..objects.len() + 1)
            .map(|i| match i.cmp(&k) {
                std::cmp::Ordering::Less => Some(i),
                std::cmp::Ordering::Equal => None,
                std::cmp::Ordering::Greater => Some(i - 1),
            })
            .collect();
        self.rebuild(objects, &map, &[])
    }

    /// Index of the simple object `name`.
    fn simple_index(&self, name: &str) -> Result<usize, SceneError> {
        let k = self.scenario.object_index(name)?;
        match &self.scenario.objects()[k] {
            Object::Simple(_) => Ok(k),
            Object::Complex(_) => Err(SceneError::Invalid(format!(
                "`{name}` is a robot; only simple objects are added, replaced or removed at run \
                 time"
            ))),
        }
    }

    /// Makes `objects` the scenario: `map[old] = new index` (`None`: removed; monotonic),
    /// `fresh` the new indices of added or replaced objects. Robots keep their joint
    /// positions; the collision matrix, paddings and run-time entries follow `map`. On error
    /// nothing changes.
    fn rebuild(
        &mut self,
        objects: Vec<Object>,
        map: &[Option<usize>],
        fresh: &[usize],
    ) -> Result<(), SceneError> {
        let old = &self.scenario;
        let mut sc = Scenario::new();
        sc.set_broadphase(old.broadphase());
        for (k, o) in objects.iter().enumerate() {
            match o {
                Object::Simple(s) => {
                    sc.add_object(s.clone())?;
                }
                Object::Complex(r) => {
                    sc.add_robot(r.clone())?;
                    // a robot is never fresh: it has an old index
                    let from = map.iter().position(|m| *m == Some(k)).ok_or_else(|| {
                        SceneError::Invalid(format!("robot `{}` has no former index", r.name()))
                    })?;
                    sc.set_joint_positions(k, old.joint_positions(from))?;
                }
            }
        }
        if let Some(cm) = old.collision_matrix() {
            sc.set_collision_matrix(carry_matrix(cm, &objects, fresh))?;
        }
        let n = objects.len();
        let mut rules = Rules {
            padding: objects.iter().map(|o| vec![0.0; o.num_bodies()]).collect(),
            max_padding: vec![0.0; n],
            overrides: vec![Vec::new(); n * n.saturating_sub(1) / 2],
            n_overrides: 0,
        };
        let old_n = map.len();
        for (i, m) in map.iter().enumerate() {
            let Some(a) = *m else { continue };
            // a replaced object keeps its padding only if its body count is unchanged
            if rules.padding[a].len() == self.rules.padding[i].len() {
                rules.padding[a].clone_from(&self.rules.padding[i]);
                rules.max_padding[a] = self.rules.max_padding[i];
            }
            for (j, m2) in map.iter().enumerate().skip(i + 1) {
                let Some(b) = *m2 else { continue };
                let entries = &self.rules.overrides[pair_slot(old_n, i, j)];
                let fits = entries.is_empty()
                    || entries.len() == objects[a].num_bodies() * objects[b].num_bodies();
                if fits {
                    rules.n_overrides += entries.iter().filter(|&&e| e != 0).count();
                    rules.overrides[pair_slot(n, a, b)].clone_from(entries);
                }
            }
        }
        self.scenario = sc;
        self.rules = rules;
        self.hits.clear();
        Ok(())
    }
}

/// The collision matrix of the untouched objects of `objects`, with the `fresh` ones (added
/// or replaced) listed at their poses and without never-collide entries; removed objects'
/// entries dropped.
fn carry_matrix(cm: &CollisionMatrix, objects: &[Object], fresh: &[usize]) -> CollisionMatrix {
    let fresh_names: Vec<&str> = fresh.iter().map(|&k| objects[k].name()).collect();
    let kept = |body: &str| {
        let o = body.split_once('/').map_or(body, |(o, _)| o);
        !fresh_names.contains(&o) && objects.iter().any(|x| x.name() == o)
    };
    let mut out = cm.clone();
    out.objects.retain(|m| {
        !fresh_names.contains(&m.name.as_str()) && objects.iter().any(|x| x.name() == m.name)
    });
    for &k in fresh {
        out.objects.push(MatrixObject {
            name: objects[k].name().to_string(),
            pose: PoseSpec::from_isometry(&objects[k].pose()),
        });
    }
    out.never_collide.retain(|[a, b]| kept(a) && kept(b));
    out.decisions
        .retain(|d| kept(&d.pair[0]) && kept(&d.pair[1]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::Body;
    use crate::options::QueryOptions;
    use crate::spec::LoadedScene;
    use nalgebra::{Isometry3, Point3};
    use rpq_kinematics::TriMesh;

    /// A unit-ish tetrahedron named `name` at `x` on the x axis.
    fn tet(name: &str, x: f64, size: f64) -> SimpleObject {
        let mesh = TriMesh::new(
            vec![
                Point3::new(0.0, 0.0, 0.0),
                Point3::new(size, 0.0, 0.0),
                Point3::new(0.0, size, 0.0),
                Point3::new(0.0, 0.0, size),
            ],
            vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
        )
        .unwrap();
        SimpleObject {
            name: name.into(),
            body: Body::from_trimesh(name, &mesh).unwrap(),
            pose: Isometry3::translation(x, 0.0, 0.0),
        }
    }

    fn world(objects: Vec<SimpleObject>) -> World {
        let mut sc = Scenario::new();
        for o in objects {
            sc.add_object(o).unwrap();
        }
        World::new(LoadedScene {
            scenario: sc,
            options: QueryOptions::default(),
        })
    }

    /// Brute-force minimum distance over every pair of objects (vertex-free: the engine's
    /// pair distance, one pair at a time, no world rules).
    fn min_pair_distance(w: &mut World) -> f64 {
        let names: Vec<String> = w
            .scenario()
            .objects()
            .iter()
            .map(|o| o.name().to_string())
            .collect();
        let mut best = f64::INFINITY;
        for i in 0..names.len() {
            for j in i + 1..names.len() {
                let a = w.body_id(&names[i]).unwrap();
                let b = w.body_id(&names[j]).unwrap();
                let d = w.scenario.body_distance(a, b).unwrap().distance;
                best = best.min(d);
            }
        }
        best
    }

    #[test]
    fn add_replace_remove_change_the_answers() {
        let mut w = world(vec![tet("a", 0.0, 1.0), tet("b", 3.0, 1.0)]);
        let opts = *w.options();
        let d0 = w.scenario.min_distance(&opts).unwrap().distance;
        assert!((d0 - 2.0).abs() < 1e-9, "{d0}");
        // an object between them: the minimum drops to its gap
        assert_eq!(w.add_object(tet("c", 1.5, 1.0)).unwrap(), 2);
        let d1 = w.scenario.min_distance(&opts).unwrap().distance;
        assert!((d1 - 0.5).abs() < 1e-9, "{d1}");
        assert!((d1 - min_pair_distance(&mut w)).abs() < 1e-12);
        // a duplicate name is refused, nothing changes
        assert!(w.add_object(tet("c", 9.0, 1.0)).is_err());
        assert_eq!(w.scenario().objects().len(), 3);
        // replaced by a smaller one further right, same index
        assert_eq!(w.replace_object(tet("c", 2.0, 0.5)).unwrap(), 2);
        assert_eq!(w.scenario().objects()[2].name(), "c");
        let d2 = w.scenario.min_distance(&opts).unwrap().distance;
        assert!((d2 - 0.5).abs() < 1e-9 && (d2 - min_pair_distance(&mut w)).abs() < 1e-12);
        // removed: back to the first answer; "b" moved to index 1 still
        w.remove_object("a").unwrap();
        assert_eq!(w.scenario().objects().len(), 2);
        assert_eq!(w.body_id("b").unwrap().object, 0);
        assert_eq!(w.body_id("c").unwrap().object, 1);
        let d3 = w.scenario.min_distance(&opts).unwrap().distance;
        assert!((d3 - 0.5).abs() < 1e-9, "{d3}");
        assert!(w.remove_object("a").is_err());
        assert!(w.replace_object(tet("zz", 0.0, 1.0)).is_err());
    }

    #[test]
    fn robots_keep_their_joints_and_answers_match_a_fresh_scene() {
        let rx60 = crate::eval::rx60().unwrap();
        let q = [0.3, -0.4, 1.2, 0.1, 0.5, -0.2];
        let mut sc = Scenario::new();
        sc.add_object(tet("table", -2.0, 0.5)).unwrap();
        sc.add_robot(rx60.instance("arm", Isometry3::identity()))
            .unwrap();
        let mut w = World::new(LoadedScene {
            scenario: sc,
            options: QueryOptions::default(),
        });
        w.scenario.set_joint_positions(1, &q).unwrap();
        let shield = tet("shield", 0.6, 0.2);
        w.add_object(shield.clone()).unwrap();
        assert_eq!(w.scenario().joint_positions(1), &q);
        assert!(w.remove_object("arm").is_err(), "robots stay");
        // the same scene built in one go answers the same
        let mut fresh = Scenario::new();
        fresh.add_object(tet("table", -2.0, 0.5)).unwrap();
        fresh
            .add_robot(rx60.instance("arm", Isometry3::identity()))
            .unwrap();
        fresh.add_object(shield).unwrap();
        fresh.set_joint_positions(1, &q).unwrap();
        let opts = *w.options();
        let a = w.scenario.min_distance(&opts).unwrap();
        let b = fresh.min_distance(&opts).unwrap();
        assert_eq!(a.distance, b.distance);
        // removing the table moves the robot to index 0 with its joints
        w.remove_object("table").unwrap();
        assert_eq!(w.scenario().joint_positions(0), &q);
        assert_eq!(w.robots(), vec![0]);
    }

    #[test]
    fn collision_matrix_stays_consistent() {
        let mut w = world(vec![
            tet("a", 0.0, 1.0),
            tet("b", 0.5, 1.0),
            tet("d", 0.2, 1.0),
        ]);
        let cm = CollisionMatrix {
            generator: None,
            objects: ["a", "b", "d"]
                .iter()
                .enumerate()
                .map(|(k, n)| MatrixObject {
                    name: n.to_string(),
                    pose: PoseSpec::from_isometry(&w.scenario().objects()[k].pose()),
                })
                .collect(),
            never_collide: vec![["a/a".into(), "b/b".into()], ["b/b".into(), "d/d".into()]],
            decisions: vec![],
        };
        w.scenario.set_collision_matrix(cm).unwrap();
        w.options.collision_matrix = true;
        let id = |w: &World, n: &str| w.body_id(n).unwrap();
        assert!(w.is_allowed(id(&w, "a"), id(&w, "b")));
        assert!(w.is_allowed(id(&w, "b"), id(&w, "d")));
        // a run-time entry and a padding that must survive
        w.set_allowed("a", "d", true).unwrap();
        w.set_padding("b", 0.0).unwrap();
        // added: kept entries stay, every pair of the new object is checked
        w.add_object(tet("c", 0.1, 1.0)).unwrap();
        assert!(w.is_allowed(id(&w, "a"), id(&w, "b")));
        assert!(w.is_allowed(id(&w, "a"), id(&w, "d")));
        for o in ["a", "b", "d"] {
            assert!(!w.is_allowed(id(&w, o), id(&w, "c")), "{o}-c");
        }
        // replaced: its matrix entries go (b-d checked now), a-b is dropped too, a-d (run time) stays
        w.replace_object(tet("b", 0.6, 1.0)).unwrap();
        assert!(!w.is_allowed(id(&w, "a"), id(&w, "b")));
        assert!(!w.is_allowed(id(&w, "b"), id(&w, "d")));
        assert!(w.is_allowed(id(&w, "a"), id(&w, "d")));
        assert_eq!(w.allowed_pairs().len(), 1);
        // removed: indices move down, the run-time entry follows its bodies
        w.remove_object("b").unwrap();
        assert_eq!(id(&w, "d").object, 1);
        assert!(w.is_allowed(id(&w, "a"), id(&w, "d")));
        assert!(!w.is_allowed(id(&w, "d"), id(&w, "c")));
        let pairs = w.allowed_pairs();
        assert_eq!(pairs.len(), 1);
        assert!(pairs[0].2, "the a-d entry is a run-time one");
        // the scenario's matrix lists exactly its objects
        let cm = w.scenario().collision_matrix().unwrap();
        let mut names: Vec<&str> = cm.objects.iter().map(|m| m.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["a", "c", "d"]);
        assert!(cm.never_collide.is_empty());
        // colliding answers follow: all overlap, a-d allowed, so a-c etc. collide
        let report = w.scenario.collide(&w.options.clone());
        assert!(report.colliding);
    }
}
