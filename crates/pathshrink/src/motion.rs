//! Robot motion commands (§5.2): a guarded grasp at the start of the path, then one Cartesian
//! straight-line move per remaining node; near contacts or obstacles a lower speed and a
//! contact bias along the contact normals, with the contact force to expect (and verify).
//!
//! The commands are expressed for the workpiece (its pose at each target) and for the robot's
//! flange through the grasp: the gripper holds the workpiece from above, the flange
//! `grasp_offset` above the workpiece centre along the workpiece's z axis, pointing down.
//!
//! * **Guarded grasp** (node 0): the flange moves to `approach_height` above the grasp pose,
//!   then down along a straight line at `contact_speed` until the force along the approach
//!   exceeds `guard_force` (the force sensor's check), or the grasp pose is reached.
//! * **Line** to node `k`: `speed`, or `contact_speed` when node `k` or `k − 1` touches an
//!   obstacle or is closer than `near_distance` to one. For a node in contact the target is
//!   shifted by the **contact bias**: `contact_bias` (m) along each distinct contact direction
//!   into the obstacle (normals within 10° count once). Under impedance control of stiffness
//!   `contact_stiffness` the expected force on contact `j` is
//!   `contact_stiffness × (bias·(−n_j) − d_j)` (`d_j` the simulated gap), which the execution
//!   checks against the force sensor.

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use rpq_proximity::QueryWorkspace;

use crate::environment::Environment;
use crate::error::{check_positive, check_range, PathShrinkError};
use crate::geometry::Pose;
use crate::path::{unit, WorkpiecePath};

/// Parameters of the motion commands (units in brackets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MotionParams {
    /// [m] bias of the target into each contact (the paper: "currently around 3-4 mm").
    pub contact_bias: f64,
    /// [N/m] stiffness of the impedance control in contact (low).
    pub contact_stiffness: f64,
    /// [m/s] speed of free moves.
    pub speed: f64,
    /// [m/s] speed near or in contact and of the guarded approach.
    pub contact_speed: f64,
    /// [m] a node closer than this to an obstacle is "near".
    pub near_distance: f64,
    /// [rad/s] largest turning rate of the workpiece.
    pub angular_speed: f64,
    /// [m] height of the approach pose above the grasp.
    pub approach_height: f64,
    /// [N] force that ends the guarded approach.
    pub guard_force: f64,
    /// [m] flange above the workpiece centre when grasping.
    pub grasp_offset: f64,
}

impl Default for MotionParams {
    fn default() -> Self {
        MotionParams {
            contact_bias: 0.0035,
            contact_stiffness: 500.0,
            speed: 0.05,
            contact_speed: 0.01,
            near_distance: 0.01,
            angular_speed: 0.5,
            approach_height: 0.05,
            guard_force: 2.0,
            grasp_offset: 0.115,
        }
    }
}

impl MotionParams {
    /// Refuses values outside their ranges.
    pub fn validate(&self) -> Result<(), PathShrinkError> {
        check_range("contact_bias", self.contact_bias, 0.0, 0.05)?;
        check_positive("contact_stiffness", self.contact_stiffness, 1e6)?;
        check_positive("speed", self.speed, 2.0)?;
        check_positive("contact_speed", self.contact_speed, 2.0)?;
        check_range("near_distance", self.near_distance, 0.0, 1.0)?;
        check_positive("angular_speed", self.angular_speed, 10.0)?;
        check_range("approach_height", self.approach_height, 0.0, 1.0)?;
        check_positive("guard_force", self.guard_force, 1e3)?;
        check_range("grasp_offset", self.grasp_offset, 0.0, 2.0)?;
        Ok(())
    }

    /// The flange pose in the workpiece frame: `grasp_offset` above the centre, z down.
    pub fn grasp(&self, env: &Environment) -> Pose {
        Isometry3::from_parts(
            Translation3::from(env.workpiece.centre.coords + Vector3::z() * self.grasp_offset),
            UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI),
        )
    }
}

/// Kind of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandKind {
    /// Approach from above, guarded descent, grasp.
    GuardedGrasp,
    /// Straight line of the workpiece centre (and slerp of its orientation).
    Line,
}

/// A contact the robot should feel at the end of a move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpectedContact {
    /// Obstacle index.
    pub obstacle: usize,
    /// Unit normal from the obstacle towards the workpiece (world).
    pub normal: Vector3<f64>,
    /// Force to expect along the normal [N].
    pub force: f64,
}

/// One robot motion command.
#[derive(Clone, Debug, PartialEq)]
pub struct MotionCommand {
    /// What it is.
    pub kind: CommandKind,
    /// Index of its node in the reduced path.
    pub node: usize,
    /// Target pose of the workpiece (with the bias).
    pub workpiece: Pose,
    /// Target pose of the flange.
    pub flange: Pose,
    /// Guarded grasp: the workpiece-frame pose from which the guarded descent starts.
    pub approach: Option<Pose>,
    /// [m/s]
    pub speed: f64,
    /// [rad/s]
    pub angular_speed: f64,
    /// Bias added to the node's position [m].
    pub bias: Vector3<f64>,
    /// Contacts to expect and verify.
    pub contacts: Vec<ExpectedContact>,
    /// Guarded grasp: the force that stops the descent [N].
    pub guard_force: f64,
    /// Slow (near or in contact)?
    pub slow: bool,
}

/// The commands for a reduced path (module documentation); `contact_distance` is ε_c.
pub fn motion_commands(
    env: &Environment,
    path: &WorkpiecePath,
    p: &MotionParams,
    contact_distance: f64,
    ws: &mut QueryWorkspace,
) -> Vec<MotionCommand> {
    let grasp = p.grasp(env);
    let near: Vec<bool> = path
        .nodes
        .iter()
        .map(|n| {
            !n.contacts.is_empty()
                || env
                    .clearance(&n.pose, ws)
                    .is_some_and(|(d, _)| d < p.near_distance)
        })
        .collect();
    let mut out = Vec::with_capacity(path.nodes.len());
    let start = path.nodes[0].pose;
    let approach = Isometry3::from_parts(
        Translation3::from(start.translation.vector + Vector3::z() * p.approach_height),
        start.rotation,
    );
    out.push(MotionCommand {
        kind: CommandKind::GuardedGrasp,
        node: 0,
        workpiece: start,
        flange: start * grasp,
        approach: Some(approach),
        speed: p.contact_speed,
        angular_speed: p.angular_speed,
        bias: Vector3::zeros(),
        contacts: Vec::new(),
        guard_force: p.guard_force,
        slow: true,
    });
    for k in 1..path.nodes.len() {
        let node = &path.nodes[k];
        // One witness normal per obstacle in contact.
        let mut contacts: Vec<(usize, Vector3<f64>, f64)> = Vec::new();
        for &i in &node.contacts {
            if let Some(r) = env.distance(&node.pose, i, contact_distance, ws) {
                let n = unit(&(r.point_a.coords - r.point_b.coords));
                if n != Vector3::zeros() {
                    contacts.push((i, n, r.distance));
                }
            }
        }
        let mut directions: Vec<Vector3<f64>> = Vec::new();
        for (_, n, _) in &contacts {
            if !directions
                .iter()
                .any(|d| d.dot(n) > 10f64.to_radians().cos())
            {
                directions.push(*n);
            }
        }
        let bias: Vector3<f64> = directions.iter().map(|n| -n * p.contact_bias).sum();
        let expected = contacts
            .iter()
            .map(|&(i, n, d)| ExpectedContact {
                obstacle: i,
                normal: n,
                force: p.contact_stiffness * ((-bias).dot(&n) - d).max(0.0),
            })
            .collect();
        let target = Isometry3::from_parts(
            Translation3::from(node.pose.translation.vector + bias),
            node.pose.rotation,
        );
        let slow = near[k] || near[k - 1];
        out.push(MotionCommand {
            kind: CommandKind::Line,
            node: k,
            workpiece: target,
            flange: target * grasp,
            approach: None,
            speed: if slow { p.contact_speed } else { p.speed },
            angular_speed: p.angular_speed,
            bias,
            contacts: expected,
            guard_force: 0.0,
            slow,
        });
    }
    out
}
