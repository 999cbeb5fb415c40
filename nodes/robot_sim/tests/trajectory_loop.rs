//! `trajectory_loop` against `robot_sim` over DDS: the loop moves the arm through its waypoints
//! again and again, and SIGINT makes the node stop the arm where it is before it exits.
//!
//! Opens DDS sockets, so it runs only inside a private loopback-only network namespace:
//! `../shared/netns-run cargo test --release -p robot_sim --test trajectory_loop`. Domain 226.

use std::path::Path;
use std::pin::pin;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use rpq_ros::args::RosArgs;
use rpq_ros::env::RosEnv;
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::node::RosNode;
use rpq_ros::qos;

const DOMAIN: u16 = 226;
/// The loop: joint_1 between +0.5 and -0.5 rad, one second apart (a 2 s loop).
const SWING: f64 = 0.5;

/// A node process, killed if the test ends before stopping it.
struct Proc(Child);

impl Proc {
    fn spawn(binary: &str, ros_args: &[&str]) -> Proc {
        let child = Command::new(binary)
            .arg("--ros-args")
            .args(ros_args)
            .env("ROS_DOMAIN_ID", DOMAIN.to_string())
            .env_remove("RMW_IMPLEMENTATION")
            .env_remove("ROS_LOCALHOST_ONLY")
            .env_remove("ROS_AUTOMATIC_DISCOVERY_RANGE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"));
        Proc(child)
    }

    /// SIGINT, then the exit code within `timeout` (`None`: killed by a signal or still running).
    fn interrupt(&mut self, timeout: Duration) -> Option<i32> {
        let sent = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success(), "kill -INT failed");
        let t0 = Instant::now();
        while t0.elapsed() < timeout {
            if let Some(status) = self.0.try_wait().expect("try_wait") {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn only_loopback() -> bool {
    let dev = std::fs::read_to_string("/proc/self/net/dev").unwrap_or_default();
    let names: Vec<&str> = dev
        .lines()
        .skip(2)
        .filter_map(|l| Some(l.split(':').next()?.trim()))
        .collect();
    names == ["lo"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trajectory_loop_moves_robot_sim_and_stops_it_on_sigint() {
    assert!(
        only_loopback(),
        "this test opens DDS sockets: run it inside a private loopback-only network namespace \
         (../shared/netns-run cargo test ...)"
    );
    let urdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../urdf/rx60b.urdf");
    let urdf_param = format!("robot_description_file:={}", urdf.display());
    let mut sim = Proc::spawn(
        env!("CARGO_BIN_EXE_robot_sim"),
        &["-p", &urdf_param, "--log-level", "warn"],
    );
    let waypoints = format!("waypoints:=[{SWING}, 0.3, 0, 0, 0, 0, -{SWING}, 0.3, 0, 0, 0, 0]");
    let mut looper = Proc::spawn(
        env!("CARGO_BIN_EXE_trajectory_loop"),
        &[
            "-p",
            "joint_names:=[joint_1, joint_2, joint_3, joint_4, joint_5, joint_6]",
            "-p",
            &waypoints,
            "-p",
            "segment_duration:=1.0",
            "-p",
            "stop_time:=0.1",
        ],
    );

    let env = RosEnv {
        domain_id: DOMAIN,
        ..RosEnv::default()
    };
    let (args, _) = RosArgs::parse(["--ros-args", "--log-level", "warn"]).unwrap();
    let mut observer = RosNode::new("loop_observer", env, args, &[]).unwrap();
    let sub = observer
        .subscription::<JointState>("/joint_states", qos::default())
        .unwrap();
    let mut states = pin!(sub.async_stream());
    macro_rules! next {
        () => {{
            let item = tokio::time::timeout(Duration::from_secs(10), states.next())
                .await
                .expect("no joint state within 10 s");
            let (msg, _) = item.expect("stream ended").expect("bad joint state");
            assert_eq!(msg.name[0], "joint_1");
            msg
        }};
    }

    // The loop: joint_1 reaches both ends in turn, three times (so the loop was sent again).
    let t0 = Instant::now();
    let mut visits: Vec<f64> = Vec::new();
    while visits.len() < 3 {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "joint_1 visited only {visits:?} in 20 s"
        );
        let q1 = next!().position[0];
        for end in [SWING, -SWING] {
            if (q1 - end).abs() < 0.01 && visits.last() != Some(&end) {
                visits.push(end);
            }
        }
    }

    // SIGINT in mid-swing: the node sends its hold and exits cleanly ...
    loop {
        let msg = next!();
        if msg.velocity[0].abs() > 0.3 && msg.position[0].abs() < 0.25 {
            break;
        }
    }
    assert_eq!(
        looper.interrupt(Duration::from_secs(5)),
        Some(0),
        "trajectory_loop did not exit with 0 after SIGINT"
    );
    // ... and the arm stops mid-way within stop_time (0.1 s), robot_sim still running.
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_millis(500) {
        next!();
    }
    let mut still: Vec<JointState> = Vec::new();
    while still.len() < 50 {
        still.push(next!());
    }
    let first = &still[0].position;
    for msg in &still {
        assert!(
            msg.velocity.iter().all(|v| *v == 0.0),
            "still moving after the hold: {:?}",
            msg.velocity
        );
        assert_eq!(&msg.position, first, "the joints drift after the hold");
    }
    assert!(
        first[0].abs() < SWING - 0.05,
        "joint_1 stopped at {}, not between the waypoints",
        first[0]
    );
    assert_eq!(sim.interrupt(Duration::from_secs(5)), Some(0));
}
