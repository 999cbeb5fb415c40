//! The hook for Cartesian motion filters: a [`ToolMotionFilter`] sees the tool point and the
//! linear velocity the admittance/fixture law commands, every control period, and may change
//! that velocity before it is mapped to joint velocities and the joint limits are applied.
//!
//! Where it sits in [`AdmittanceCore`](crate::admittance::AdmittanceCore)'s period:
//!
//! ```text
//! wrench → tare, gravity, filter, deadband → law (fixture, limits) → ToolMotionFilter → joints (DLS, limits)
//! ```
//!
//! * The filter gets the **linear** part only (m/s, base frame, at the tool point); the angular
//!   part of the twist is never handed to it and is never changed by it.
//! * The filter's outcome is used as it is, also when it removes motion abruptly (a protection
//!   must act at once); the joint mapping then realises it exactly in the directions a hard
//!   fixture forbids (see [`crate::joints`]).
//! * [`FilterOutcome::halt`] stops the whole command (linear and angular) for that period, with
//!   the note as the stop reason.
//! * Swapping filters at run time ([`FilterSlot::set`]) blends the old filter's output into the
//!   new one's over a swap time, so the command has no jump; both run during the blend.
//! * [`ToolMotionFilter::reset`] is called whenever the controller stops (safety stop, re-arm),
//!   so a filter never carries state across a stop.
//!
//! ```
//! use nalgebra::{Point3, Vector3};
//! use steady_hand::motion_filter::{FilterOutcome, FilterSlot, ToolMotionFilter};
//!
//! /// Keeps the tool above z = 0.1 m: no downward motion below it.
//! struct Floor;
//! impl ToolMotionFilter for Floor {
//!     fn filter(&mut self, p: &Point3<f64>, v: &Vector3<f64>, _dt: f64) -> FilterOutcome {
//!         if p.z <= 0.1 && v.z < 0.0 {
//!             FilterOutcome { contact: true, distance: Some(p.z - 0.1), ..FilterOutcome::pass(Vector3::new(v.x, v.y, 0.0)) }
//!         } else {
//!             FilterOutcome::pass(*v)
//!         }
//!     }
//!     fn name(&self) -> &str { "floor" }
//! }
//!
//! let mut slot = FilterSlot::default();
//! slot.set(Some(Box::new(Floor)), 0.0, 0.1);
//! // halfway through the 0.1 s blend: half of the pass-through, half of the floor
//! let out = slot.apply(&Point3::new(0.0, 0.0, 0.05), &Vector3::new(0.0, 0.0, -0.02), 0.002, 0.05);
//! assert!((out.linear_velocity.z + 0.01).abs() < 1e-12);
//! let out = slot.apply(&Point3::new(0.0, 0.0, 0.05), &Vector3::new(0.0, 0.0, -0.02), 0.002, 0.2);
//! assert_eq!(out.linear_velocity.z, 0.0);
//! assert!(out.contact);
//! ```

use nalgebra::{Point3, Vector3};

/// What a [`ToolMotionFilter`] made of one period's linear velocity.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterOutcome {
    /// The linear velocity to command [m/s] (base frame, tool point).
    pub linear_velocity: Vector3<f64>,
    /// The filter changed the velocity because of a constraint it enforces (e.g. a surface
    /// is touched); shown on the controller's status.
    pub contact: bool,
    /// Distance from the tool point to the nearest constraint [m], if the filter knows one
    /// (negative: inside a forbidden region).
    pub distance: Option<f64>,
    /// Outward normal of that nearest constraint (unit), if known.
    pub normal: Option<Vector3<f64>>,
    /// Stop the whole command (linear and angular) for this period.
    pub halt: bool,
    /// A short reason or diagnostic (static: the hot path does not allocate); the stop reason
    /// when `halt` is set.
    pub note: &'static str,
}

impl FilterOutcome {
    /// The velocity passed on, no contact, no diagnostic.
    pub fn pass(linear_velocity: Vector3<f64>) -> Self {
        Self {
            linear_velocity,
            contact: false,
            distance: None,
            normal: None,
            halt: false,
            note: "",
        }
    }
}

/// A Cartesian motion filter plugged into the admittance controller (see the module docs).
///
/// Implementations must be cheap (they run every control period, typically 500 Hz-1 kHz) and
/// must return a finite velocity; a non-finite one stops the robot as a control fault.
pub trait ToolMotionFilter: Send {
    /// One period: the tool point (base frame, m), the linear velocity the law commands (m/s)
    /// and the period `dt` (s). Returns the velocity to command instead.
    fn filter(
        &mut self,
        tool_point: &Point3<f64>,
        linear_velocity: &Vector3<f64>,
        dt: f64,
    ) -> FilterOutcome;

    /// A name for logs and status.
    fn name(&self) -> &str {
        "motion filter"
    }

    /// Forgets any state (the controller stopped; the next call starts afresh).
    fn reset(&mut self) {}
}

/// A filter layer: the filter (`None`: pass-through), when its blend started and its length.
type Layer = (Option<Box<dyn ToolMotionFilter>>, f64, f64);

/// The filter in use, with blends from the previous ones after swaps.
///
/// Each swap adds a layer that blends from everything below it to the new filter; a swap
/// during a blend therefore starts from the blended output of that moment (no jump however
/// many swaps come at once), and layers a finished blend covers are dropped.
#[derive(Default)]
pub struct FilterSlot {
    /// Oldest first; the first layer's blend is complete.
    layers: Vec<Layer>,
}

impl std::fmt::Debug for FilterSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilterSlot")
            .field("current", &self.name())
            .field("layers", &self.layers.len())
            .finish()
    }
}

fn run(
    filter: &mut Option<Box<dyn ToolMotionFilter>>,
    p: &Point3<f64>,
    v: &Vector3<f64>,
    dt: f64,
) -> FilterOutcome {
    match filter {
        Some(f) => f.filter(p, v, dt),
        None => FilterOutcome::pass(*v),
    }
}

/// `(1 − s) a + s b`, with the flags of both.
fn blend(a: FilterOutcome, b: FilterOutcome, s: f64) -> FilterOutcome {
    FilterOutcome {
        linear_velocity: a.linear_velocity * (1.0 - s) + b.linear_velocity * s,
        contact: a.contact || b.contact,
        distance: match (a.distance, b.distance) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        },
        normal: b.normal.or(a.normal),
        halt: a.halt || b.halt,
        note: if b.note.is_empty() { a.note } else { b.note },
    }
}

impl FilterSlot {
    /// Replaces the filter (`None`: no filter) at time `now` [s]; the command moves from the
    /// output of that moment to the new filter's linearly over `blend` seconds (0: at once).
    pub fn set(&mut self, filter: Option<Box<dyn ToolMotionFilter>>, now: f64, blend: f64) {
        if self.layers.is_empty() {
            self.layers.push((None, f64::NEG_INFINITY, 0.0));
        }
        self.layers.push((filter, now, blend.max(0.0)));
    }

    /// The name of the filter in use (`""` without one).
    pub fn name(&self) -> &str {
        self.layers
            .last()
            .and_then(|(f, _, _)| f.as_ref())
            .map_or("", |f| f.name())
    }

    /// Whether a filter is plugged in or still being blended out.
    pub fn active(&self) -> bool {
        self.layers.len() > 1 || self.layers.first().is_some_and(|(f, _, _)| f.is_some())
    }

    /// Resets every filter held (the controller stopped).
    pub fn reset(&mut self) {
        for (f, _, _) in &mut self.layers {
            if let Some(f) = f {
                f.reset();
            }
        }
    }

    /// Runs the filter(s) on one period's velocity at time `now` [s].
    pub fn apply(&mut self, p: &Point3<f64>, v: &Vector3<f64>, dt: f64, now: f64) -> FilterOutcome {
        let mut out = FilterOutcome::pass(*v);
        let mut complete = 0;
        for (i, (filter, start, length)) in self.layers.iter_mut().enumerate() {
            let s = if *length > 0.0 {
                ((now - *start) / *length).clamp(0.0, 1.0)
            } else if now >= *start {
                1.0
            } else {
                0.0
            };
            let o = run(filter, p, v, dt);
            out = if s >= 1.0 {
                complete = i;
                o
            } else {
                blend(out, o, s)
            };
        }
        // layers below the last complete one no longer matter
        self.layers.drain(..complete);
        if self.layers.len() == 1 && self.layers[0].0.is_none() {
            self.layers.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Removes all motion along +x (a wall at the origin).
    struct Wall;
    impl ToolMotionFilter for Wall {
        fn filter(&mut self, _p: &Point3<f64>, v: &Vector3<f64>, _dt: f64) -> FilterOutcome {
            FilterOutcome {
                contact: v.x > 0.0,
                ..FilterOutcome::pass(Vector3::new(v.x.min(0.0), v.y, v.z))
            }
        }
    }

    #[test]
    fn swapping_blends_without_a_jump() {
        let mut slot = FilterSlot::default();
        let p = Point3::origin();
        let v = Vector3::new(0.05, 0.01, 0.0);
        let dt = 0.002;
        assert_eq!(slot.apply(&p, &v, dt, 0.0).linear_velocity, v);
        slot.set(Some(Box::new(Wall)), 1.0, 0.1);
        let mut last = slot.apply(&p, &v, dt, 1.0).linear_velocity;
        assert_eq!(last, v, "the first period after the swap is the old output");
        let mut t = 1.0;
        while t < 1.2 {
            t += dt;
            let out = slot.apply(&p, &v, dt, t).linear_velocity;
            assert!(
                (out - last).norm() <= 0.05 * dt / 0.1 + 1e-12,
                "jump at {t}"
            );
            last = out;
        }
        assert_eq!(last, Vector3::new(0.0, 0.01, 0.0));
        // and out again
        slot.set(None, t, 0.1);
        let first = slot.apply(&p, &v, dt, t).linear_velocity;
        assert_eq!(first, Vector3::new(0.0, 0.01, 0.0));
        assert_eq!(slot.apply(&p, &v, dt, t + 0.2).linear_velocity, v);
        assert!(!slot.active());
    }

    #[test]
    fn an_immediate_swap_and_halts_pass_through() {
        struct Halt;
        impl ToolMotionFilter for Halt {
            fn filter(&mut self, _: &Point3<f64>, v: &Vector3<f64>, _: f64) -> FilterOutcome {
                FilterOutcome {
                    halt: true,
                    note: "inside a forbidden region",
                    ..FilterOutcome::pass(*v)
                }
            }
            fn name(&self) -> &str {
                "halt"
            }
        }
        let mut slot = FilterSlot::default();
        slot.set(Some(Box::new(Halt)), 0.0, 0.0);
        assert_eq!(slot.name(), "halt");
        let out = slot.apply(&Point3::origin(), &Vector3::x(), 0.001, 0.0);
        assert!(out.halt && out.note == "inside a forbidden region");
    }
}
