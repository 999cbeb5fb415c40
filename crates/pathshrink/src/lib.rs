//! Path shrinking after Lloyd and Pai, *Extracting Robotic Part-mating Programs from Operator
//! Interaction with a Simulated Environment* (§4–§6): an operator drags a polyhedral
//! workpiece among fixed polyhedral objects in a contact simulator; the recorded path is
//! stretched and shrunk into a short, collision-free path that keeps the contacts the operator
//! asked for, reduced to few nodes, and turned into robot motion commands and an RX60 joint
//! trajectory. No ROS types: the `path_shrinking` node wraps it.
//!
//! | paper | here |
//! |---|---|
//! | §4.1 contact points and normals from the distance engine | [`contact`] on `rpq_proximity` |
//! | §4.1 Baraff's non-negative, non-penetrating reactions | [`lcp`] (active set; projected Gauss–Seidel) |
//! | §4.1 eq. 1 first-order dynamics `v = d_t f`, `ω = d_r m` | [`sim`] |
//! | §4.2 eq. 2 barrier `U_i`, ε_b = ε_c / 2, attractive `U_v(s)`, golden section | [`barrier`], [`golden`], [`sim`] |
//! | §4.2 capture objects (barrier at both sides) | [`sim`] (`capture`) |
//! | §6 tunnelling through thin objects | [`sim`]: conservative advancement |
//! | §5 workpiece path of nodes (pose + contact state), required contacts | [`path`], [`demo`] |
//! | §5.1 tension, repulsion, fixed ends, stabilisation | [`shrink`]; dense paths coarse to fine: [`coarse`] |
//! | §5.1 polygonal node reduction | [`reduce`] |
//! | §5.2 guarded grasp, lines, contact bias and expected force | [`motion`] |
//! | §5.2 on the RX60: one configuration, limits, lines within a tolerance | [`robot`] |
//! | §3, §6, Fig. 4: puzzle work site and the two tasks | [`puzzle`], [`operator`], [`task`] |
//!
//! ```no_run
//! use std::sync::Arc;
//! use rpq_pathshrink::{operator::Task, program::{shrink_program, ProgramParams}, task};
//! let scene = rpq_scene::load_scene("config/puzzle.scene.yaml")?;
//! let params = ProgramParams::default();
//! let demo = task::demonstrate(Task::Cornering, &scene, &params.sim, task::SEED)?;
//! let out = shrink_program(demo.env.clone(), demo.path, &params)?;
//! println!("{} nodes -> {}", out.stats.nodes_recorded, out.stats.nodes_reduced);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod barrier;
pub mod coarse;
pub mod contact;
pub mod demo;
pub mod environment;
mod error;
pub mod geometry;
pub mod golden;
pub mod lcp;
pub mod motion;
pub mod operator;
pub mod path;
pub mod program;
pub mod puzzle;
pub mod reduce;
pub mod robot;
pub mod shrink;
pub mod sim;
pub mod task;

pub use environment::{model_from_triangles, Environment, Obstacle, Workpiece};
pub use error::PathShrinkError;
pub use geometry::{Pose, Twist, Wrench};
pub use path::{PathNode, RequiredSpan, WorkpiecePath};
pub use sim::{ContactSimulator, SimParams, StepOptions, StepReport};
