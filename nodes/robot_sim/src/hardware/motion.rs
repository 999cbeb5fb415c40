//! Exact one-joint motion laws over one integration step (continuous time, no discretisation
//! error: the result does not depend on how a time span is cut into steps).

/// Distance below which a joint at rest counts as on its target (relative to `1 + |target|`).
const ON_TARGET: f64 = 1e-9;

/// Velocity command: the joint's velocity moves from `v0` toward `command` at most at
/// acceleration `accel` (`None`: at once). Returns (displacement, velocity) after `dt`.
pub(crate) fn follow_velocity(v0: f64, command: f64, accel: Option<f64>, dt: f64) -> (f64, f64) {
    let Some(a) = accel else {
        return (command * dt, command);
    };
    let ramp = (command - v0).abs() / a;
    if ramp >= dt {
        let v1 = v0 + (command - v0).signum() * a * dt;
        (0.5 * (v0 + v1) * dt, v1)
    } else {
        (0.5 * (v0 + command) * ramp + command * (dt - ramp), command)
    }
}

/// Position command: time-optimal motion from (`p`, `v`) to rest on `target` within the
/// velocity limit `vmax` and, if given, the acceleration limit `accel` (accelerate, cruise,
/// brake; a joint moving away or too fast to stop in time first brakes, then comes back).
/// Without an acceleration limit the joint moves at `vmax` and stops dead on the target.
/// Returns (position, velocity) after `dt`.
pub(crate) fn move_to_target(
    mut p: f64,
    mut v: f64,
    target: f64,
    vmax: f64,
    accel: Option<f64>,
    dt: f64,
) -> (f64, f64) {
    let Some(a) = accel else {
        let e = target - p;
        return if e.abs() <= vmax * dt {
            (target, 0.0)
        } else {
            (p + e.signum() * vmax * dt, e.signum() * vmax)
        };
    };
    let snap = ON_TARGET * (1.0 + target.abs());
    let mut left = dt;
    // Each pass runs one constant-acceleration phase; a full move has at most four
    // (stop moving away, accelerate, cruise, brake), rounding may add a short one.
    for _ in 0..8 {
        let e = target - p;
        if e.abs() <= snap && v == 0.0 {
            return (target, 0.0);
        }
        if left <= 0.0 {
            break;
        }
        // Work along the direction toward the target: distance `dist`, speed `u`.
        let sigma = if e != 0.0 { e.signum() } else { -v.signum() };
        let dist = e.abs();
        let u = sigma * v;
        let (acc, duration, u_end) = if u < 0.0 {
            (a, -u / a, 0.0)
        } else if u * u / (2.0 * a) >= dist * (1.0 - 1e-9) - snap {
            (-a, u / a, 0.0)
        } else {
            let peak = (a * dist + 0.5 * u * u).sqrt();
            if peak <= vmax {
                (a, (peak - u) / a, peak)
            } else if u < vmax {
                (a, (vmax - u) / a, vmax)
            } else {
                (0.0, (dist - u * u / (2.0 * a)) / u, u)
            }
        };
        let h = duration.min(left);
        p += sigma * (u * h + 0.5 * acc * h * h);
        v = sigma * if h == duration { u_end } else { u + acc * h };
        left -= h;
    }
    (p, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `move_to_target` from `(p, v)` in steps of `dt` up to `t_end`; returns the samples.
    fn run(
        p: f64,
        v: f64,
        target: f64,
        accel: Option<f64>,
        dt: f64,
        t_end: f64,
    ) -> Vec<(f64, f64, f64)> {
        let (mut p, mut v) = (p, v);
        let mut out = vec![(0.0, p, v)];
        let n = (t_end / dt).round() as usize;
        for k in 1..=n {
            (p, v) = move_to_target(p, v, target, 2.0, accel, dt);
            out.push((k as f64 * dt, p, v));
        }
        out
    }

    #[test]
    fn trapezoid_matches_the_analytic_profile_at_any_step_size() {
        // 1.5 rad, vmax 2, a 4: accelerate 0.5 s (0.5 rad), cruise 0.25 s, brake 0.5 s.
        let analytic = |t: f64| -> (f64, f64) {
            if t <= 0.5 {
                (2.0 * t * t, 4.0 * t)
            } else if t <= 0.75 {
                (0.5 + 2.0 * (t - 0.5), 2.0)
            } else if t <= 1.25 {
                let s = t - 0.75;
                (1.0 + 2.0 * s - 2.0 * s * s, 2.0 - 4.0 * s)
            } else {
                (1.5, 0.0)
            }
        };
        for dt in [0.01, 0.037, 0.3, 2.0] {
            for (t, p, v) in run(0.0, 0.0, 1.5, Some(4.0), dt, 2.0) {
                let (pa, va) = analytic(t);
                assert!((p - pa).abs() < 1e-12, "dt={dt} t={t}: {p} vs {pa}");
                assert!((v - va).abs() < 1e-12, "dt={dt} t={t}: {v} vs {va}");
            }
        }
    }

    #[test]
    fn short_move_is_a_triangle() {
        // 0.5 rad at a = 4: peak sqrt(2) < vmax, reached at t = sqrt(2)/4, done at sqrt(2)/2.
        let t_done = 2f64.sqrt() / 2.0;
        let (p, v) = move_to_target(0.0, 0.0, 0.5, 2.0, Some(4.0), t_done / 2.0);
        assert!((p - 0.25).abs() < 1e-12 && (v - 2f64.sqrt()).abs() < 1e-12);
        let (p, v) = move_to_target(p, v, 0.5, 2.0, Some(4.0), t_done / 2.0);
        assert_eq!((p, v), (0.5, 0.0));
    }

    #[test]
    fn reversal_respects_limits_and_settles_on_target() {
        let a = 3.0;
        for (p0, v0, target) in [
            (0.0, 2.0, 0.1),
            (0.0, -2.0, 0.5),
            (1.0, 1.9, 1.0),
            (0.0, 0.5, -1.0),
        ] {
            let samples = run(p0, v0, target, Some(a), 0.01, 5.0);
            for w in samples.windows(2) {
                let ((_, _, va), (t, _, vb)) = (w[0], w[1]);
                assert!((vb - va).abs() <= a * 0.01 + 1e-12, "t={t}: {va} -> {vb}");
                assert!(vb.abs() <= 2.0);
            }
            let &(_, p, v) = samples.last().unwrap();
            assert_eq!((p, v), (target, 0.0), "from ({p0}, {v0}) to {target}");
        }
    }

    #[test]
    fn unlimited_acceleration_moves_at_vmax_and_stops_on_target() {
        assert_eq!(move_to_target(0.0, 0.0, 1.0, 2.0, None, 0.1), (0.2, 2.0));
        assert_eq!(move_to_target(0.9, 2.0, 1.0, 2.0, None, 0.1), (1.0, 0.0));
        assert_eq!(move_to_target(0.0, 0.0, -1.0, 2.0, None, 0.1), (-0.2, -2.0));
    }

    #[test]
    fn velocity_ramp_is_exact_even_when_it_ends_inside_a_step() {
        // From 0 to 1 at a = 10: ramp 0.1 s (0.05 rad), then 1 rad/s.
        assert_eq!(follow_velocity(0.0, 1.0, Some(10.0), 0.05), (0.0125, 0.5));
        let (dp, v) = follow_velocity(0.0, 1.0, Some(10.0), 0.3);
        assert!((dp - 0.25).abs() < 1e-15 && v == 1.0);
        let (dp, v) = follow_velocity(1.0, -1.0, Some(10.0), 0.3);
        assert!((dp - (-0.1)).abs() < 1e-15 && v == -1.0, "{dp}");
        assert_eq!(follow_velocity(0.3, -0.2, None, 0.5), (-0.1, -0.2));
    }
}
