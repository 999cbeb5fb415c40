//! `simulated_user`: publishes the wrench of a simulated Steady-Hand user, the seeded model of
//! `rpq_virtual_fixtures::SimulatedUser` (push along the fixture's preferred direction,
//! correction towards the objective, bias, tremor, reaction delay), or the paper's autonomous
//! "perfect user" (the preferred direction scaled to `push`).
//!
//! ```text
//! simulated_user --ros-args --params-file config/steady_hand_guidance.yaml
//! ```
//!
//! | interface | type | behaviour |
//! |---|---|---|
//! | sub `virtual_fixture` | `rpq_interfaces/VirtualFixture` | what the user sees: direction `D[:,0]`, error `u / error_gain` |
//! | pub `wrench` | `geometry_msgs/WrenchStamped` | at `rate_hz`, in `frame_id`, until `duration_s` (0: forever); turns round every `reverse_period_s` (0: never) |
//!
//! The cooperative user applies forces only (translation tasks); without a fixture it pushes
//! along `direction_hint`.

use std::error::Error;
use std::pin::pin;
use std::time::{Duration, Instant};

use futures::StreamExt;
use nalgebra::Vector6;
use rpq_ros::interfaces::rpq_interfaces::msg::VirtualFixture;
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::{Vector3 as RosVector3, Wrench, WrenchStamped};
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::node::RosNode;
use rpq_ros::shutdown::Shutdown;
use rpq_ros::{qos, ros_info, ros_warn};
use rpq_virtual_fixtures::{autonomous_force, Observation, SimulatedUser};
use steady_hand::convert::fixture_from_msg;
use steady_hand::{settings, NodeError};
use tokio::time::{interval, MissedTickBehavior};

struct Fatal(Box<dyn Error>);

impl std::fmt::Debug for Fatal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "simulated_user: {}", self.0)
    }
}

fn main() -> Result<(), Fatal> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Fatal(e.into()))?;
    rt.block_on(run()).map_err(Fatal)
}

async fn run() -> Result<(), Box<dyn Error>> {
    let shutdown = Shutdown::install()?;
    let (mut node, extra) =
        RosNode::from_process(settings::USER_NODE, &settings::user_declarations())?;
    let log = node.logger().clone();
    if !extra.is_empty() {
        ros_warn!(
            log,
            "ignoring arguments outside --ros-args: {}",
            extra.join(" ")
        );
    }
    let p = node.params().clone();
    let rate = p.f64("rate_hz")?;
    let dt = 1.0 / rate;
    let autonomous = match p.str("operator")? {
        "cooperative" => false,
        "autonomous" => true,
        other => {
            return Err(NodeError::config(
                "operator",
                format!("`{other}` is neither cooperative nor autonomous"),
            )
            .into())
        }
    };
    let hint = p.f64_array("direction_hint")?;
    if hint.len() != 6 || !hint.iter().all(|x| x.is_finite()) {
        return Err(NodeError::config("direction_hint", "expected six finite numbers").into());
    }
    let hint = Vector6::from_column_slice(hint);
    let model = settings::user_model(&p)?;
    let mut user = SimulatedUser::new(model, dt, p.i64("seed")? as u64);
    let error_gain = p.f64("error_gain")?;
    let frame_id = p.str("frame_id")?.to_string();
    let duration = p.f64("duration_s")?;
    let push = p.f64("push")?;
    let reverse_period = p.f64("reverse_period_s")?;
    let mut next_reverse = reverse_period;

    let pub_w = node.publisher::<WrenchStamped>(settings::WRENCH_TOPIC, qos::default())?;
    let fx_sub = node.subscription::<VirtualFixture>(settings::FIXTURE_TOPIC, qos::default())?;
    let mut fixtures = pin!(fx_sub.async_stream());
    let mut tick = interval(Duration::from_secs_f64(dt));
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let start = Instant::now();
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
                if duration > 0.0 && start.elapsed().as_secs_f64() > duration {
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
                if reverse_period > 0.0 && start.elapsed().as_secs_f64() >= next_reverse {
                    // turn round: later fixtures are followed the other way
                    obs.intended = -obs.intended;
                    next_reverse += reverse_period;
                }
                let f = if autonomous { autonomous_force(&obs.intended, push) } else { user.step(obs, dt) };
                let msg = WrenchStamped {
                    header: Header { stamp: Time::now().unwrap_or_default(), frame_id: frame_id.clone() },
                    wrench: Wrench {
                        force: RosVector3 { x: f[0], y: f[1], z: f[2] },
                        torque: RosVector3 { x: f[3], y: f[4], z: f[5] },
                    },
                };
                if let Err(e) = pub_w.publish(msg) {
                    ros_warn!(log, "cannot publish the wrench: {e}");
                }
            }
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
