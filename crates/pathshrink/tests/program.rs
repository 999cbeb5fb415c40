//! The puzzle scene and the whole pipeline on the two tasks of Fig. 4: the committed scene
//! files are what the generator makes; both tasks end collision-free, shorter, without
//! unwanted contacts and with every required contact; the motion commands carry the contact
//! bias and the expected force; the RX60 trajectory keeps one arm configuration, the joint
//! and velocity limits, and every Cartesian line within its tolerance (checked independently
//! at 50 points per piece with the URDF's forward kinematics); bad paths are refused with a
//! message naming the problem.

use std::path::PathBuf;
use std::sync::Arc;

use nalgebra::{Isometry3, Vector3};
use rpq_pathshrink::geometry::{interpolate, rotation_angle};
use rpq_pathshrink::motion::CommandKind;
use rpq_pathshrink::operator::Task;
use rpq_pathshrink::path::{penetrated, swept_free};
use rpq_pathshrink::program::{shrink_program, ProgramParams};
use rpq_pathshrink::robot::{joint_program, scene_robots};
use rpq_pathshrink::task::{demonstrate, SEED};
use rpq_pathshrink::{Environment, PathNode, RequiredSpan, WorkpiecePath};
use rpq_proximity::QueryWorkspace;
use rpq_scene::Robot;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scene() -> rpq_scene::spec::LoadedScene {
    rpq_scene::load_scene(root().join(rpq_pathshrink::puzzle::SCENE_PATH)).expect("puzzle scene")
}

fn robot(scene: &rpq_scene::spec::LoadedScene) -> Robot {
    scene_robots(&scene.scenario)
        .next()
        .cloned()
        .expect("the puzzle scene has the RX60")
}

#[test]
fn the_committed_puzzle_files_are_what_the_generator_makes() {
    for (rel, bytes) in rpq_pathshrink::puzzle::files() {
        let on_disk = std::fs::read(root().join(&rel))
            .unwrap_or_else(|e| panic!("{}: {e} (run ps_puzzle_gen --out-dir .)", rel.display()));
        assert!(
            on_disk == bytes,
            "{} differs from the generator's output: run `cargo run -p rpq_pathshrink --features tools --bin \
             ps_puzzle_gen -- --out-dir .`",
            rel.display()
        );
    }
}

#[test]
fn both_tasks_shrink_into_collision_free_programs_that_keep_their_contacts() {
    let scene = scene();
    let rx60 = robot(&scene);
    let params = ProgramParams::default();
    for task in Task::ALL {
        let demo = demonstrate(task, &scene, &params.sim, SEED).unwrap();
        let env = demo.env.clone();
        if task == Task::CornerRounding {
            assert_eq!(
                demo.path.spans.len(),
                1,
                "the capture makes one required span"
            );
        }
        let out = shrink_program(env.clone(), demo.path, &params).unwrap();
        let s = &out.stats;
        let name = task.name();
        assert!(s.stabilised, "{name}: {s:?}");
        assert!(s.required_kept, "{name}: a required contact was lost");
        assert!(
            s.length_modified < 0.95 * s.length_recorded,
            "{name}: {} -> {} m",
            s.length_recorded,
            s.length_modified
        );
        assert_eq!(s.unwanted_contacts_modified, 0, "{name}");
        assert!(
            s.unwanted_contacts_recorded > 10,
            "{name}: the demonstration touches things"
        );
        assert!(
            s.median_free_clearance_modified > 3.0 * s.median_free_clearance_recorded,
            "{name}: nodes not pushed away: {s:?}"
        );
        assert!(s.nodes_reduced < s.nodes_working && s.nodes_working < s.nodes_recorded);
        let mut ws = QueryWorkspace::new();
        for p in [&out.modified, &out.reduced] {
            for n in &p.nodes {
                assert!(penetrated(&env, &n.pose, &mut ws).is_none(), "{name}");
            }
            for w in p.nodes.windows(2) {
                assert!(
                    swept_free(&env, &w[0].pose, &w[1].pose, 0.0, &mut ws).is_ok(),
                    "{name}"
                );
            }
        }
        // Motion commands: guarded grasp, then lines; biased contacts expect a force.
        assert_eq!(out.commands[0].kind, CommandKind::GuardedGrasp);
        assert_eq!(out.commands.len(), out.reduced.nodes.len());
        for c in &out.commands[1..] {
            assert_eq!(c.kind, CommandKind::Line);
            let node = &out.reduced.nodes[c.node];
            if node.contacts.is_empty() {
                assert_eq!(c.bias, Vector3::zeros());
            } else {
                assert!(c.slow && c.speed == params.motion.contact_speed);
                for x in &c.contacts {
                    // bias of 3.5 mm along every distinct normal: the push into this contact is
                    // at least 3.5 mm less the simulated gap (at most ε_c).
                    let push = (-c.bias).dot(&x.normal);
                    assert!(push >= params.motion.contact_bias - 1e-9, "{name}: {c:?}");
                    let d = env
                        .distance(&node.pose, x.obstacle, 1.0, &mut ws)
                        .unwrap()
                        .distance;
                    let expect = params.motion.contact_stiffness * (push - d);
                    assert!(
                        (x.force - expect).abs() < 1e-9 && x.force > 0.5,
                        "{name}: {x:?}"
                    );
                }
            }
        }
        let final_node = out.reduced.nodes.last().unwrap();
        if task == Task::Cornering {
            // In the corner: table and frame, so the last move pushes into both.
            assert!(
                final_node.contacts.len() >= 2,
                "{name}: {:?}",
                final_node.contacts
            );
        }

        // The RX60 trajectory.
        let grasp = params.motion.grasp(&env);
        let prog = joint_program(&env, &rx60, &out.commands, &grasp, None, &params.robot).unwrap();
        check_trajectory(&env, &rx60, &out.commands, &grasp, &prog, &params, name);
    }
}

fn check_trajectory(
    env: &Environment,
    rx60: &Robot,
    commands: &[rpq_pathshrink::motion::MotionCommand],
    grasp: &Isometry3<f64>,
    prog: &rpq_pathshrink::robot::JointProgram,
    params: &ProgramParams,
    name: &str,
) {
    let (ik, flange) = rx60.ik().unwrap();
    let kin = rx60.kinematics();
    let lim = kin.joint_limits();
    let c = env.workpiece.centre;
    assert_eq!(prog.command_ends.len(), commands.len());
    for p in &prog.points {
        assert_eq!(
            ik.configuration_of(&p.q),
            prog.configuration,
            "{name}: configuration changes"
        );
        for (j, l) in lim.iter().enumerate().take(6) {
            assert!(
                p.q[j] >= l.lower && p.q[j] <= l.upper,
                "{name}: joint {j} limit"
            );
        }
    }
    // Each command's line, from the previous command's target (the first from the approach).
    let mut start_pt = 0;
    for (ci, &end) in prog.command_ends.iter().enumerate() {
        let from = if ci == 0 {
            commands[0].approach.unwrap()
        } else {
            commands[ci - 1].workpiece
        };
        let to = commands[ci].workpiece;
        // The end point reaches the target exactly (FK from the URDF, not the IK's closed form).
        let reached =
            rx60.base() * kin.link_pose(flange, &prog.points[end].q).unwrap() * grasp.inverse();
        assert!(
            (reached * c - to * c).norm() < 1e-6,
            "{name}: command {ci} end"
        );
        // Dense check of the joint interpolation against the line.
        let (p0, t0) = (prog.points[start_pt].q, prog.points[start_pt].time);
        let total = prog.points[end].time - t0;
        for w in prog.points[start_pt..=end].windows(2) {
            let dt = w[1].time - w[0].time;
            assert!(dt > 0.0, "{name}: times must increase");
            for (j, l) in lim.iter().enumerate().take(6) {
                let v = (w[1].q[j] - w[0].q[j]).abs() / dt;
                assert!(
                    v <= l.velocity * params.robot.velocity_scale * (1.0 + 1e-9),
                    "{name}: joint {j} at {v} rad/s"
                );
            }
            for s in 0..=50 {
                let u = f64::from(s) / 50.0;
                let q: Vec<f64> = (0..6)
                    .map(|j| w[0].q[j] + (w[1].q[j] - w[0].q[j]) * u)
                    .collect();
                let wp = rx60.base() * kin.link_pose(flange, &q).unwrap() * grasp.inverse();
                // Where on the line: the line parameter is proportional to time.
                let t = (w[0].time + dt * u - t0) / total;
                let on = interpolate(&from, &to, &c, t);
                let e = (wp * c - on * c).norm();
                assert!(
                    e <= params.robot.line_tolerance * 1.05,
                    "{name}: command {ci}: {e} m off the line"
                );
                assert!(rotation_angle(&wp, &on) <= params.robot.orientation_tolerance * 1.05);
            }
        }
        let _ = p0;
        start_pt = end;
    }
}

#[test]
fn bad_paths_are_refused_with_a_message_naming_the_problem() {
    let scene = scene();
    let (env, start) = Environment::from_scene(&scene, "block_1", &[]).unwrap();
    let env = Arc::new(env);
    let params = ProgramParams::default();
    let up = |p: Isometry3<f64>, dz: f64| {
        Isometry3::from_parts(
            nalgebra::Translation3::from(p.translation.vector + Vector3::z() * dz),
            p.rotation,
        )
    };
    let node = |pose| PathNode {
        pose,
        contacts: vec![],
    };
    let table = env.obstacle_index("table").unwrap();
    let frame = env.obstacle_index("frame").unwrap();
    let cases: Vec<(WorkpiecePath, &str)> = vec![
        (
            WorkpiecePath {
                nodes: vec![node(start)],
                spans: vec![],
            },
            "at least two",
        ),
        (
            WorkpiecePath {
                nodes: vec![node(start), node(up(start, f64::NAN))],
                spans: vec![],
            },
            "node 1: the pose is not finite",
        ),
        (
            WorkpiecePath {
                nodes: vec![node(start), node(up(start, -0.005))],
                spans: vec![],
            },
            "node 1: the workpiece touches or enters `table`",
        ),
        (
            WorkpiecePath {
                nodes: vec![node(start), node(up(start, -0.06))],
                spans: vec![],
            },
            "node 1: the workpiece touches or enters `table`",
        ),
        (
            WorkpiecePath {
                nodes: vec![node(start), node(up(start, 0.01)), node(up(start, 0.02))],
                spans: vec![RequiredSpan {
                    first: 0,
                    last: 2,
                    objects: vec![table],
                }],
            },
            "required contact with `table` is absent at node 1",
        ),
        (
            WorkpiecePath {
                nodes: vec![node(start), node(up(start, 0.01))],
                spans: vec![RequiredSpan {
                    first: 0,
                    last: 1,
                    objects: vec![frame],
                }],
            },
            "required contact with `frame` is absent at node 0",
        ),
        (
            WorkpiecePath {
                nodes: vec![
                    node(start),
                    node(Isometry3::new(
                        Vector3::new(0.36, 0.045, 0.016),
                        Vector3::zeros(),
                    )),
                ],
                spans: vec![],
            },
            "passes through `",
        ),
    ];
    for (path, words) in cases {
        let e = shrink_program(env.clone(), path, &params)
            .unwrap_err()
            .to_string();
        assert!(e.contains(words), "`{e}` must contain `{words}`");
    }
    assert!(matches!(
        Environment::from_scene(&scene, "no_such_block", &[]),
        Err(rpq_pathshrink::PathShrinkError::UnknownObject { .. })
    ));
    let e = Environment::from_scene(&scene, "rx60", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("is a robot"), "{e}");
}

#[test]
fn an_unreachable_program_is_refused_by_the_robot_layer() {
    let scene = scene();
    let rx60 = robot(&scene);
    let params = ProgramParams::default();
    let demo = demonstrate(Task::Cornering, &scene, &params.sim, SEED).unwrap();
    let env = demo.env.clone();
    let out = shrink_program(env.clone(), demo.path, &params).unwrap();
    // Move every target 1 m away: beyond the arm's reach.
    let mut far = out.commands.clone();
    for c in &mut far {
        c.workpiece.translation.vector.x += 1.0;
        if let Some(a) = &mut c.approach {
            a.translation.vector.x += 1.0;
        }
    }
    let grasp = params.motion.grasp(&env);
    let e = joint_program(&env, &rx60, &far, &grasp, None, &params.robot)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no single arm configuration") && e.contains("out of reach"),
        "{e}"
    );
}
