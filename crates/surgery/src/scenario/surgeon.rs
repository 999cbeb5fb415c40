//! The simulated surgeon: the cooperative user of `rpq_virtual_fixtures` (reaction delay,
//! push along the cut, correction toward it, bias, physiological tremor, force noise) plus
//! deliberate pushes into the forbidden regions — across the shield, into the cutting aid,
//! down into the skull, or anywhere — at seeded random times.

use nalgebra::{Vector3, Vector6};
use rpq_base::SplitMix64;
use rpq_virtual_fixtures::{Observation, SimulatedUser, UserModel};

/// Where a deliberate push aims.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PushKind {
    /// Outward and down, across the shield's inner wall.
    Outward,
    /// Inward and down, into the cutting aid.
    Inward,
    /// Straight down into the bone.
    Down,
    /// A random direction.
    Random,
}

impl PushKind {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            PushKind::Outward => "outward",
            PushKind::Inward => "inward",
            PushKind::Down => "down",
            PushKind::Random => "random",
        }
    }
}

/// Parameters of the surgeon.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurgeonModel {
    /// The cooperative part (forces only: the mask selects x, y, z).
    pub user: UserModel,
    /// Mean time between deliberate pushes [s] (0: none).
    pub push_interval: f64,
    /// Duration of a push, drawn uniformly in this range [s].
    pub push_duration: (f64, f64),
    /// Force of a push, drawn uniformly in this range [N].
    pub push_force: (f64, f64),
}

impl Default for SurgeonModel {
    fn default() -> Self {
        SurgeonModel {
            user: UserModel {
                push: 2.5,
                slow_down_error: 2.0,
                correction_gain: 0.8,
                bias: 0.3,
                tremor_amplitude: 0.4,
                tremor_frequency: 9.0,
                noise: 0.3,
                reaction_delay: 0.12,
                visual_rate: 30.0,
                mask: Vector6::new(1.0, 1.0, 1.0, 0.0, 0.0, 0.0),
            },
            push_interval: 3.0,
            push_duration: (0.3, 0.8),
            push_force: (8.0, 20.0),
        }
    }
}

/// What the surgeon knows each period (base frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurgeonView {
    /// Unit direction along the cut (the way the surgeon is cutting).
    pub along: Vector3<f64>,
    /// From the drill tip to the nearest point of the cut line [mm].
    pub error_mm: Vector3<f64>,
    /// Unit vector pointing outward across the cut (away from the window's centre).
    pub outward: Vector3<f64>,
    /// Unit "up" (the outline frame's z).
    pub up: Vector3<f64>,
}

#[derive(Clone, Copy, Debug)]
struct Push {
    kind: PushKind,
    start: f64,
    duration: f64,
    force: f64,
    random_dir: Vector3<f64>,
}

/// The seeded surgeon.
#[derive(Clone, Debug)]
pub struct Surgeon {
    model: SurgeonModel,
    user: SimulatedUser,
    rng: SplitMix64,
    t: f64,
    next_push: f64,
    push: Option<Push>,
    pushes: u64,
}

impl Surgeon {
    /// A surgeon for control period `dt` [s], seeded.
    pub fn new(model: SurgeonModel, dt: f64, seed: u64) -> Surgeon {
        let mut rng = SplitMix64::new(seed ^ 0x0005_EED0_F5CA_19E1);
        let user = SimulatedUser::new(model.user, dt, rng.next_u64());
        let mut s = Surgeon {
            model,
            user,
            rng,
            t: 0.0,
            next_push: f64::INFINITY,
            push: None,
            pushes: 0,
        };
        s.next_push = s.draw_interval();
        s
    }

    fn draw_interval(&mut self) -> f64 {
        if self.model.push_interval > 0.0 {
            // between 0.5 and 1.5 times the mean
            self.t + self.model.push_interval * self.rng.range(0.5, 1.5)
        } else {
            f64::INFINITY
        }
    }

    /// Number of deliberate pushes started so far.
    pub fn pushes(&self) -> u64 {
        self.pushes
    }

    /// The deliberate push under way, if any.
    pub fn pushing(&self) -> Option<PushKind> {
        self.push.map(|p| p.kind)
    }

    /// Lets the surgeon look at the start for a while (fills the reaction delay).
    pub fn prime(&mut self, view: &SurgeonView) {
        self.user.prime(observation(view));
    }

    /// One period: the force [N] the surgeon applies at the drill (base frame).
    pub fn step(&mut self, view: &SurgeonView, dt: f64) -> Vector3<f64> {
        let f = self.user.step(observation(view), dt);
        let mut force = Vector3::new(f[0], f[1], f[2]);
        if self.push.is_none() && self.t >= self.next_push {
            let kind = match self.rng.below(4) {
                0 => PushKind::Outward,
                1 => PushKind::Inward,
                2 => PushKind::Down,
                _ => PushKind::Random,
            };
            let (d0, d1) = self.model.push_duration;
            let (f0, f1) = self.model.push_force;
            let random_dir = Vector3::new(self.rng.normal(), self.rng.normal(), self.rng.normal())
                .try_normalize(1e-12)
                .unwrap_or_else(Vector3::z);
            self.push = Some(Push {
                kind,
                start: self.t,
                duration: self.rng.range(d0, d1),
                force: self.rng.range(f0, f1),
                random_dir,
            });
            self.pushes += 1;
        }
        if let Some(p) = self.push {
            let age = self.t - p.start;
            if age >= p.duration {
                self.push = None;
                self.next_push = self.draw_interval();
            } else {
                // 50 ms ramps in and out
                let ramp = (age / 0.05).min((p.duration - age) / 0.05).clamp(0.0, 1.0);
                let dir = match p.kind {
                    PushKind::Outward => view.outward * 0.8 - view.up * 0.6,
                    PushKind::Inward => -view.outward * 0.8 - view.up * 0.6,
                    PushKind::Down => -view.up,
                    PushKind::Random => p.random_dir,
                };
                force += dir * (p.force * ramp);
            }
        }
        self.t += dt;
        force
    }
}

fn observation(view: &SurgeonView) -> Observation {
    Observation {
        intended: Vector6::new(view.along.x, view.along.y, view.along.z, 0.0, 0.0, 0.0),
        error: Vector6::new(
            view.error_mm.x,
            view.error_mm.y,
            view.error_mm.z,
            0.0,
            0.0,
            0.0,
        ),
    }
}
