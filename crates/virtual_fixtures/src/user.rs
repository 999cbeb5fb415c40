//! A seeded model of the cooperating user (the paper's "experienced user") and the
//! "perfect user" of the autonomous mode.
//!
//! Every control period the user is shown the task state (the intended direction of motion
//! and the error vector towards the path). The model
//! 1. **perceives late**: it acts on the state `reaction_delay` seconds old, refreshed at
//!    `visual_rate` (the paper's display ran at 30 Hz);
//! 2. **pushes along the intended direction** with magnitude `push / (1 + ‖e‖ / slow_down_error)`
//!    (people slow down when they see themselves off the path);
//! 3. **corrects** with `correction_gain · e` (the user as an error servo);
//! 4. adds a constant **bias** (a hand that leans one way; direction drawn from the seed), and
//! 5. **tremor**: a sinusoid at `tremor_frequency` in a random direction plus low-pass
//!    Gaussian noise (first order, 50 ms).
//!
//! Only the components selected by `mask` are non-zero (e.g. forces in the plane for the
//! sine task, torques for the cone task). The generator is SplitMix64 with Box-Muller
//! Gaussians (`rpq_base::rng`), so a seed reproduces a trial exactly on every platform.

use nalgebra::Vector6;
use rpq_base::rng::SplitMix64;

/// A random unit vector within the components selected by `mask` (zero if the mask is 0):
/// one normal draw per component, then normalised.
fn random_direction(rng: &mut SplitMix64, mask: &Vector6<f64>) -> Vector6<f64> {
    let v = Vector6::from_fn(|i, _| rng.normal() * mask[i]);
    v.try_normalize(1e-300).unwrap_or_else(Vector6::zeros)
}

/// Parameters of the user model (units of force for the masked wrench components, and of the
/// task's error vector for gains; see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UserModel {
    /// Push along the intended direction when on the path [N or N·m].
    pub push: f64,
    /// Error at which the push is halved [units of e].
    pub slow_down_error: f64,
    /// Correction force per unit error [N per unit of e].
    pub correction_gain: f64,
    /// Magnitude of the constant bias [N or N·m].
    pub bias: f64,
    /// Tremor sinusoid amplitude [N or N·m].
    pub tremor_amplitude: f64,
    /// Tremor frequency \[Hz\] (physiological tremor: 8-12 Hz).
    pub tremor_frequency: f64,
    /// Standard deviation of the low-pass force noise [N or N·m].
    pub noise: f64,
    /// Reaction delay \[s\].
    pub reaction_delay: f64,
    /// Rate at which the user sees the task state \[Hz\].
    pub visual_rate: f64,
    /// Which wrench components the user applies (1 = used, 0 = not).
    pub mask: Vector6<f64>,
}

/// What the user sees at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Observation {
    /// Unit direction in which the user wants to move (wrench coordinates).
    pub intended: Vector6<f64>,
    /// Error towards the objective, in wrench coordinates (e.g. `[q − p; 0]`).
    pub error: Vector6<f64>,
}

/// The simulated user: a [`UserModel`] with its seeded state (preallocated delay line).
#[derive(Debug, Clone)]
pub struct SimulatedUser {
    model: UserModel,
    rng: SplitMix64,
    bias: Vector6<f64>,
    tremor_dir: Vector6<f64>,
    tremor_phase: f64,
    noise: Vector6<f64>,
    delay_line: Vec<Observation>,
    head: usize,
    held: Observation,
    since_refresh: f64,
    t: f64,
}

impl SimulatedUser {
    /// A user for control period `dt` \[s\] (sizes the delay line), seeded.
    pub fn new(model: UserModel, dt: f64, seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let bias = random_direction(&mut rng, &model.mask) * model.bias;
        let tremor_dir = random_direction(&mut rng, &model.mask);
        let tremor_phase = rng.uniform() * 2.0 * std::f64::consts::PI;
        let len = ((model.reaction_delay / dt).round() as usize).max(1);
        Self {
            model,
            rng,
            bias,
            tremor_dir,
            tremor_phase,
            noise: Vector6::zeros(),
            delay_line: vec![Observation::default(); len],
            head: 0,
            held: Observation::default(),
            since_refresh: f64::INFINITY,
            t: 0.0,
        }
    }

    /// Fills the delay line with `obs` (the user has been looking at the start for a while).
    pub fn prime(&mut self, obs: Observation) {
        self.delay_line.iter_mut().for_each(|o| *o = obs);
        self.held = obs;
    }

    /// One period: record what is visible now, return the wrench the user applies.
    pub fn step(&mut self, now: Observation, dt: f64) -> Vector6<f64> {
        let m = self.model;
        // delay line: the slot we overwrite holds the observation `len` periods old
        let old = std::mem::replace(&mut self.delay_line[self.head], now);
        self.head = (self.head + 1) % self.delay_line.len();
        self.since_refresh += dt;
        if self.since_refresh >= 1.0 / m.visual_rate {
            self.held = old;
            self.since_refresh = 0.0;
        }
        let o = self.held;
        let e = o.error.component_mul(&m.mask);
        let push = m.push / (1.0 + e.norm() / m.slow_down_error);
        let alpha = dt / (0.05 + dt);
        let white = Vector6::from_fn(|i, _| self.rng.normal() * m.mask[i]);
        // stationary std of the filtered noise equals `noise`
        let scale = m.noise * ((2.0 - alpha) / alpha).sqrt();
        self.noise += (white * scale - self.noise) * alpha;
        let tremor = self.tremor_dir
            * (m.tremor_amplitude
                * (2.0 * std::f64::consts::PI * m.tremor_frequency * self.t + self.tremor_phase)
                    .sin());
        self.t += dt;
        (o.intended.component_mul(&m.mask) * push
            + e * m.correction_gain
            + self.bias
            + tremor
            + self.noise)
            .component_mul(&m.mask)
    }
}

/// The paper's autonomous mode: "the input force was computed by simply scaling the preferred
/// direction of motion" — `f = magnitude · d / ‖d‖` (zero for `d = 0`).
pub fn autonomous_force(d: &Vector6<f64>, magnitude: f64) -> Vector6<f64> {
    d.try_normalize(1e-300)
        .map(|u| u * magnitude)
        .unwrap_or_else(Vector6::zeros)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> UserModel {
        UserModel {
            push: 2.0,
            slow_down_error: 1.0,
            correction_gain: 0.5,
            bias: 0.3,
            tremor_amplitude: 0.2,
            tremor_frequency: 9.0,
            noise: 0.1,
            reaction_delay: 0.2,
            visual_rate: 30.0,
            mask: Vector6::new(1.0, 1.0, 0.0, 0.0, 0.0, 0.0),
        }
    }

    #[test]
    fn seeded_and_masked() {
        let obs = Observation {
            intended: Vector6::x(),
            error: Vector6::new(0.0, 1.0, 1.0, 0.0, 0.0, 0.0),
        };
        let run = |seed| {
            let mut u = SimulatedUser::new(model(), 0.001, seed);
            (0..500).map(|_| u.step(obs, 0.001)).collect::<Vec<_>>()
        };
        let a = run(7);
        assert_eq!(a, run(7));
        assert_ne!(a, run(8));
        assert!(a.iter().all(|f| f[2] == 0.0 && f[3] == 0.0));
    }

    #[test]
    fn reaction_delay_is_respected() {
        let mut m = model();
        m.bias = 0.0;
        m.tremor_amplitude = 0.0;
        m.noise = 0.0;
        m.visual_rate = 1e9;
        let mut u = SimulatedUser::new(m, 0.01, 1);
        u.prime(Observation::default());
        let obs = Observation {
            intended: Vector6::x(),
            error: Vector6::zeros(),
        };
        let forces: Vec<_> = (0..40).map(|_| u.step(obs, 0.01)).collect();
        // 0.2 s = 20 periods of nothing, then the push
        assert!(forces[..20].iter().all(|f| f.norm() == 0.0));
        assert!(forces[20..]
            .iter()
            .all(|f| (f - Vector6::x() * 2.0).norm() < 1e-12));
    }

    #[test]
    fn noise_statistics() {
        let mut r = SplitMix64::new(3);
        let xs: Vec<f64> = (0..100_000).map(|_| r.normal()).collect();
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!(mean.abs() < 0.02 && (var - 1.0).abs() < 0.02);
        assert_eq!(autonomous_force(&Vector6::zeros(), 2.0), Vector6::zeros());
        assert!((autonomous_force(&(Vector6::z() * 5.0), 2.0) - Vector6::z() * 2.0).norm() < 1e-15);
    }
}
