//! `simulated_user`: publishes the wrench of a simulated Steady-Hand user, the seeded model of
//! `rpq_virtual_fixtures::SimulatedUser` (push along the fixture's preferred direction,
//! correction towards the objective, bias, tremor, reaction delay), or the paper's autonomous
//! "perfect user" (the preferred direction scaled to `model.push`).
//!
//! ```text
//! simulated_user --ros-args --params-file config/simulated_user.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | sub `virtual_fixture` | `rpq_interfaces/VirtualFixture` | what the user sees: direction `D[:,0]`, error `u / error_gain` |
//! | sub `controller_status` | `rpq_interfaces/AdmittanceStatus` | while `rearm_required`, the user lets go for `model.reaction_delay` |
//! | pub `wrench` | `geometry_msgs/WrenchStamped` | at `publish_rate`, in `frame_id`, until `duration` (0: forever) |
//!
//! The cooperative user applies forces only (translation tasks); without a fixture it pushes
//! along `direction_hint`. When the controller stops on a stale input and waits to be re-armed,
//! the user lets go (zero wrench) for the reaction delay, which re-arms it (hands off), then
//! pushes again.

use std::error::Error;
use std::pin::pin;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use nalgebra::Vector6;
use rpq_ros::interfaces::rpq_interfaces::msg::{AdmittanceStatus, VirtualFixture};
use rpq_ros::msg::geometry_msgs::{Vector3 as RosVector3, Wrench, WrenchStamped};
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::run::NodeStart;
use rpq_ros::{qos, ros_info, ros_warn};
use rpq_virtual_fixtures::{autonomous_force, Observation, SimulatedUser};
use steady_hand::convert::fixture_from_msg;
use steady_hand::settings;
use tokio::time::{interval, MissedTickBehavior};

fn main() -> ExitCode {
    rpq_ros::run_node(settings::USER_NODE, &settings::user_declarations(), run)
}

async fn run(start: NodeStart) -> Result<(), Box<dyn Error>> {
    let (mut node, shutdown, clock, log) = start.into_parts();
    let p = settings::SimulatedUserParams::from_params(node.params())?;
    let rate = p.publish_rate;
    let dt = 1.0 / rate;
    // `operator` is one of cooperative, autonomous (checked by its declaration)
    let autonomous = p.operator == "autonomous";
    let hint = Vector6::from_column_slice(&p.direction_hint);
    let model = p.user_model();
    let mut user = SimulatedUser::new(model, dt, p.seed as u64);
    let error_gain = p.error_gain;
    let frame_id = p.frame_id.clone();
    let duration = p.duration;
    let push = p.model.push;
    let reaction = p.model.reaction_delay.max(dt);

    let pub_w = node.publisher::<WrenchStamped>(settings::WRENCH_TOPIC, qos::default())?;
    let fx_sub = node.subscription::<VirtualFixture>(settings::FIXTURE_TOPIC, qos::default())?;
    let mut fixtures = pin!(fx_sub.async_stream());
    let status_sub = (!p.controller_status.is_empty())
        .then(|| node.subscription::<AdmittanceStatus>(&p.controller_status, qos::default()))
        .transpose()?;
    // without a status topic: a stream that never yields
    let mut statuses = pin!(match &status_sub {
        Some(sub) => sub.async_stream().left_stream(),
        None => futures::stream::pending().right_stream(),
    });
    // hands off until this time (the controller asked to be re-armed)
    let mut release_until = f64::NEG_INFINITY;
    let mut tick = interval(Duration::from_secs_f64(dt));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut obs = Observation {
        intended: hint.try_normalize(1e-300).unwrap_or_else(Vector6::zeros),
        error: Vector6::zeros(),
    };
    let mut primed = false;
    let mut finished = false;
    ros_info!(
        log,
        "simulated_user ready: {} at {} Hz",
        if autonomous {
            "autonomous"
        } else {
            "cooperative"
        },
        rate
    );

    loop {
        tokio::select! {
            _ = shutdown.wait() => break,
            _ = tick.tick() => {
                if duration > 0.0 && clock.seconds() > duration {
                    if !finished {
                        ros_info!(log, "duration_s reached: no more wrenches");
                        finished = true;
                    }
                    continue;
                }
                if !primed {
                    user.prime(obs);
                    primed = true;
                }
                let f = if autonomous { autonomous_force(&obs.intended, push) } else { user.step(obs, dt) };
                let f = if clock.seconds() < release_until { nalgebra::Vector6::zeros() } else { f };
                let msg = WrenchStamped {
                    header: Header { stamp: clock.now(), frame_id: frame_id.clone() },
                    wrench: Wrench {
                        force: RosVector3 { x: f[0], y: f[1], z: f[2] },
                        torque: RosVector3 { x: f[3], y: f[4], z: f[5] },
                    },
                };
                if let Err(e) = pub_w.publish(msg) {
                    ros_warn!(log, "cannot publish the wrench: {e}");
                }
            }
            item = statuses.next() => if let Some(Ok((st, _))) = item {
                if st.rearm_required && clock.seconds() >= release_until + reaction {
                    ros_info!(log, "the controller stopped ({}): letting go for {reaction} s", st.reason);
                    release_until = clock.seconds() + reaction;
                }
            },
            item = fixtures.next() => match item {
                Some(Ok((msg, _))) => match fixture_from_msg(&msg) {
                    Ok(fx) => {
                        if let Some(d) = fx.guidance.columns().first().and_then(|d| d.try_normalize(1e-300)) {
                            // D's sign is arbitrary: keep going the way we were going
                            let reference = if obs.intended.norm() > 0.0 { obs.intended } else { hint };
                            obs.intended = if d.dot(&reference) < 0.0 { -d } else { d };
                        }
                        obs.error = fx.guidance.u / error_gain;
                    }
                    Err(e) => ros_warn!(log, "ignoring a virtual fixture: {e}"),
                },
                Some(Err(e)) => ros_warn!(log, "cannot read a virtual fixture: {e}"),
                None => return Err("the virtual_fixture stream ended".into()),
            },
        }
    }
    ros_info!(log, "shutting down");
    Ok(())
}
