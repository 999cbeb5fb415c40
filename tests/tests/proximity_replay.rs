//! Rosbag replay into `proximity_query`: a bag of two robots' joint states drives the node and
//! the recorded distance stream matches `rpq_scene::World` within 1e-9 m.
//!
//! The test writes (with [`BagWriter`]) a 4 s bag of `/left/joint_states` and
//! `/right/joint_states` of the RX60 pair of `config/rx60_pair.scene.yaml`: every joint of each
//! arm follows its own sinusoid (phases from [`SplitMix64`] with a fixed seed) so that the arms
//! lean towards each other and the distance sweeps from far to a few centimetres. `left` is
//! stamped at `k × 20 ms`, `right` at `k × 20 ms + 10 ms` (50 Hz each, strictly interleaved),
//! header stamp = log time. `rpq_bag replay --clock` plays it into `proximity_query` (with
//! `use_sim_time`, so the node's clock is the bag's clock and the joint states are fresh) and
//! records `/proximity_query/distances`.
//!
//! # Matching rule
//!
//! A stream cycle is computed from the last `left` and the last `right` state the node had
//! received when its timer fired; it is stamped with the node's (bag) clock `T`. Which states
//! those were depends on delivery delays, so a valid cycle stamped `T` is accepted when its
//! distance is within [`TOLERANCE`] (1e-9 m) of the library's distance for one *candidate pair*
//! `(left_i, right_j)`:
//! * each state was the newest of its robot in the bag at some moment of `[T - LAG, T + LEAD]`
//!   (stamped at most `T + LEAD`, and its successor, if any, stamped after `T - LAG`): the node
//!   cannot use a state it has not received (the `/clock` value just before each message is
//!   that message's time, so a state newer than `T` can only come by cross-topic reordering:
//!   `LEAD` = 50 ms), and the state it uses was the newest one up to `LAG` (250 ms: delivery
//!   and timer delays on a loaded machine) before the cycle; after the bag's last state the
//!   last states stay candidates (the node keeps streaming them until they are
//!   `joint_state_timeout` old);
//! * `|t_i - t_j| <= PAIR_SPAN` (40 ms, two periods): the two states were both the newest of
//!   their robot at one moment (in order of publication that span is 10 ms; 40 ms allows a
//!   state of one robot to be delivered up to 30 ms late with respect to the other's).
//!
//! The library distance is `World::min_distance(select(["left"]), select(["right"]), 0, 0)`
//! after `set_joint_state` of both robots, as the node's `left|right` group computes it; the
//! matched pair's closest bodies must also be the cycle's `body_a`/`body_b`, and its witness
//! points equal within 1e-9 m. Every valid cycle must match (a cycle matching no pair fails the
//! test with the closest candidate). The rule can fail: each valid cycle's distance plus 1e-6 m
//! must match no candidate, and the candidates of a cycle must differ from each other (the arms
//! move), so accepting a cycle is evidence, not a tolerance wide enough to take anything.
//!
//! Opens DDS sockets: runs only inside the private network namespace (tests/run_all.sh).

use std::collections::BTreeMap;
use std::f64::consts::PI;
use std::path::Path;
use std::time::Duration;

use rpq_bag::{BagReader, BagWriter, QosProfile, TopicSpec};
use rpq_base::SplitMix64;
use rpq_ros::cdr;
use rpq_ros::interfaces::rpq_interfaces::msg::{GroupDistance, GroupDistances};
use rpq_ros::msg::builtin_interfaces::Time;
use rpq_ros::msg::geometry_msgs::Point;
use rpq_ros::msg::sensor_msgs::JointState;
use rpq_ros::msg::std_msgs::Header;
use rpq_ros::msg::RosMessage;
use rpq_scene::{load_scene, World};
use rpq_tests::{bin, repo_root, run_with_timeout, NodeProcess, TestEnv};

/// Distance agreement required between the stream and the library (m).
const TOLERANCE: f64 = 1e-9;
/// Perturbation that must not be accepted (m).
const PERTURBATION: f64 = 1e-6;
/// Joint-state period of each robot (ns): 50 Hz.
const PERIOD_NS: u64 = 20_000_000;
/// Offset of `right`'s states after `left`'s (ns).
const RIGHT_OFFSET_NS: u64 = 10_000_000;
/// Joint states per robot: 4 s at 50 Hz.
const STATES: u64 = 200;
/// Log time of the first state (ns since the epoch; 2023-11-14).
const BAG_START_NS: u64 = 1_700_000_000_000_000_000;
/// A candidate state is at most this old at the cycle's stamp (ns).
const LAG_NS: i128 = 250_000_000;
/// A candidate state is at most this much newer than the cycle's stamp (ns).
const LEAD_NS: i128 = 50_000_000;
/// Largest stamp difference of a candidate pair (ns).
const PAIR_SPAN_NS: i128 = 40_000_000;
/// Valid cycles required: the node streams at 100 Hz for 4 s of states.
const MIN_VALID_CYCLES: usize = 250;

const JOINTS: [&str; 6] = [
    "joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6",
];

/// One robot's joint states: stamp (ns) and positions.
type Track = Vec<(u64, Vec<f64>)>;

/// The sinusoids of one robot: per joint (centre, amplitude, frequency in Hz, phase).
fn motion(
    rng: &mut SplitMix64,
    centre: [f64; 6],
    amplitude: [f64; 6],
    freq: [f64; 6],
) -> Vec<[f64; 4]> {
    (0..6)
        .map(|k| [centre[k], amplitude[k], freq[k], rng.range(0.0, 2.0 * PI)])
        .collect()
}

fn positions(m: &[[f64; 4]], t: f64) -> Vec<f64> {
    m.iter()
        .map(|[c, a, f, p]| c + a * (2.0 * PI * f * t + p).sin())
        .collect()
}

/// The two tracks: `left` and `right` lean towards each other (joints 2 and 3) with different
/// frequencies, so the distance sweeps from far to close; joints 1, 4, 5, 6 add their own
/// motion so that every joint matters.
fn tracks() -> (Track, Track) {
    let mut rng = SplitMix64::new(0x5EED_0011);
    let mut left = motion(
        &mut rng,
        [0.0, 0.1, 0.25, 0.0, 0.3, 0.0],
        [0.25, 0.3, 0.45, 0.8, 0.6, 1.5],
        [0.35, 0.5, 0.5, 0.4, 0.6, 0.45],
    );
    let mut right = motion(
        &mut rng,
        [0.0, 0.1, 0.25, 0.0, 0.3, 0.0],
        [0.3, 0.3, 0.45, 0.7, 0.5, 1.2],
        [0.3, 0.45, 0.45, 0.5, 0.35, 0.6],
    );
    // Shoulder and elbow of one arm lean together; the other arm leans back while it leans in
    // (half a period later, drifting by the frequency difference), so the arms come close
    // without a head-on collision.
    left[2][3] = left[1][3] + rng.range(-0.3, 0.3);
    right[1][3] = left[1][3] + PI + rng.range(-0.3, 0.3);
    right[2][3] = right[1][3] + rng.range(-0.3, 0.3);
    let track = |m: &[[f64; 4]], offset: u64| -> Track {
        (0..STATES)
            .map(|k| {
                let t_ns = k * PERIOD_NS + offset;
                (BAG_START_NS + t_ns, positions(m, t_ns as f64 * 1e-9))
            })
            .collect()
    };
    (track(&left, 0), track(&right, RIGHT_OFFSET_NS))
}

fn joint_state(stamp_ns: u64, q: &[f64]) -> JointState {
    JointState {
        header: Header {
            stamp: Time {
                sec: i32::try_from(stamp_ns / 1_000_000_000).expect("stamp fits"),
                nanosec: (stamp_ns % 1_000_000_000) as u32,
            },
            frame_id: String::new(),
        },
        name: JOINTS.iter().map(|s| s.to_string()).collect(),
        position: q.to_vec(),
        velocity: Vec::new(),
        effort: Vec::new(),
    }
}

fn write_bag(dir: &Path, left: &Track, right: &Track) {
    let mut writer = BagWriter::create(dir).expect("bag directory");
    let ty = JointState::TYPE_NAME;
    let def = JointState::definition();
    for topic in ["/left/joint_states", "/right/joint_states"] {
        writer
            .add_topic(TopicSpec::new(topic, ty, &def).with_qos(vec![QosProfile::rclcpp_default()]))
            .expect("topic");
    }
    let mut all: Vec<(&str, u64, &Vec<f64>)> = left
        .iter()
        .map(|(t, q)| ("/left/joint_states", *t, q))
        .chain(right.iter().map(|(t, q)| ("/right/joint_states", *t, q)))
        .collect();
    all.sort_by_key(|m| m.1);
    for (topic, t, q) in all {
        let data = cdr::to_vec(&joint_state(t, q)).expect("JointState encodes");
        writer.write(topic, ty, &def, t, t, &data).expect("write");
    }
    writer.finish().expect("bag finishes");
}

/// What the library answers for one (left, right) pair of states.
#[derive(Debug, Clone)]
struct Reference {
    distance: f64,
    body_a: String,
    body_b: String,
    point_a: [f64; 3],
    point_b: [f64; 3],
}

/// The library's answer for every pair of states at most [`PAIR_SPAN_NS`] apart, by indices.
fn references(left: &Track, right: &Track) -> BTreeMap<(usize, usize), Reference> {
    let scene = repo_root().join("config/rx60_pair.scene.yaml");
    let mut world = World::new(load_scene(&scene).expect("scene loads"));
    let l = world.scenario().object_index("left").unwrap();
    let r = world.scenario().object_index("right").unwrap();
    let a = world.select(&["left".to_string()]).unwrap();
    let b = world.select(&["right".to_string()]).unwrap();
    let names: Vec<String> = JOINTS.iter().map(|s| s.to_string()).collect();
    let mut out = BTreeMap::new();
    for (i, (ti, qi)) in left.iter().enumerate() {
        for (j, (tj, qj)) in right.iter().enumerate() {
            if (*ti as i128 - *tj as i128).abs() > PAIR_SPAN_NS {
                continue;
            }
            world.set_joint_state(l, &names, qi).unwrap();
            world.set_joint_state(r, &names, qj).unwrap();
            let d = world
                .min_distance(&a, &b, 0.0, 0.0)
                .expect("left and right have body pairs");
            out.insert(
                (i, j),
                Reference {
                    distance: d.distance,
                    body_a: world.body_name(d.body_a),
                    body_b: world.body_name(d.body_b),
                    point_a: [d.point_a.x, d.point_a.y, d.point_a.z],
                    point_b: [d.point_b.x, d.point_b.y, d.point_b.z],
                },
            );
        }
    }
    out
}

fn stamp_ns(t: &Time) -> i128 {
    i128::from(t.sec) * 1_000_000_000 + i128::from(t.nanosec)
}

fn xyz(p: &Point) -> [f64; 3] {
    [p.x, p.y, p.z]
}

fn max_diff(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// The candidate pairs of a cycle stamped `t` (module documentation).
fn candidates<'a>(
    refs: &'a BTreeMap<(usize, usize), Reference>,
    left: &Track,
    right: &Track,
    t: i128,
) -> Vec<(&'a (usize, usize), &'a Reference)> {
    // State `k` of `track` was the newest of its robot at some moment of the window.
    let newest_in_window = |track: &Track, k: usize| {
        track[k].0 as i128 <= t + LEAD_NS
            && track
                .get(k + 1)
                .is_none_or(|next| next.0 as i128 > t - LAG_NS)
    };
    refs.iter()
        .filter(|((i, j), _)| newest_in_window(left, *i) && newest_in_window(right, *j))
        .collect()
}

/// The candidate whose distance is within [`TOLERANCE`] of `distance`, preferring one whose
/// bodies are `g`'s.
fn matching<'a>(
    cands: &[(&'a (usize, usize), &'a Reference)],
    distance: f64,
    g: &GroupDistance,
) -> Option<(&'a (usize, usize), &'a Reference)> {
    let close: Vec<_> = cands
        .iter()
        .copied()
        .filter(|(_, r)| (r.distance - distance).abs() <= TOLERANCE)
        .collect();
    close
        .iter()
        .copied()
        .find(|(_, r)| r.body_a == g.body_a && r.body_b == g.body_b)
        .or_else(|| close.first().copied())
}

#[test]
fn replayed_joint_states_give_the_library_distance_every_cycle() {
    let env = TestEnv::new();
    let work = tempfile::tempdir().expect("tempdir");
    let (left, right) = tracks();
    let input = work.path().join("two_arms");
    write_bag(&input, &left, &right);
    let refs = references(&left, &right);
    let (d_min, d_max) = refs
        .values()
        .map(|r| r.distance)
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), d| {
            (lo.min(d), hi.max(d))
        });
    // The motion is what the test needs: the arms come close, and the distance varies.
    assert!(
        d_min > 0.0 && d_min < 0.1 && d_max - d_min > 0.1,
        "library distances over the bag span [{d_min}, {d_max}] m: the motion does not bring the \
         arms close or does not vary the distance"
    );

    let root = repo_root();
    let mut node_cmd = env.command(bin("proximity_query"));
    node_cmd
        .args(["--ros-args", "--params-file"])
        .arg(root.join("config/proximity_query.yaml"))
        .arg("-p")
        .arg(format!(
            "scene_file:={}",
            root.join("config/rx60_pair.scene.yaml").display()
        ))
        .args(["-p", "stream_groups:=[\"left|right\"]"])
        .args(["-p", "use_sim_time:=true"]);
    let mut node = NodeProcess::spawn("proximity_query", node_cmd);
    node.wait_for_output("proximity_query ready", Duration::from_secs(30));

    let output = work.path().join("recorded");
    let mut replay_cmd = env.command(bin("rpq_bag"));
    replay_cmd
        .arg("replay")
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .args(["--record", "/proximity_query/distances"])
        .args(["--rate", "1", "--clock", "200"])
        .args(["--start-delay", "0.5", "--settle", "0.5"])
        .args(["--wait-timeout", "20"]);
    // 4 s of bag, discovery up to 20 s: 90 s is a generous bound.
    let replay = run_with_timeout("rpq_bag replay", replay_cmd, Duration::from_secs(90));
    assert!(
        replay.success,
        "rpq_bag replay failed\n--- stdout ---\n{}\n--- stderr ---\n{}\n--- proximity_query ---\n{}",
        replay.stdout,
        replay.stderr,
        node.output().join("\n")
    );
    assert!(
        node.is_running(),
        "proximity_query died:\n{}",
        node.output().join("\n")
    );
    node.stop(Duration::from_secs(3));

    let reader = BagReader::open(&output).expect("recorded bag opens");
    let cycles: Vec<GroupDistances> = reader
        .messages()
        .iter()
        .filter(|m| m.topic == "/proximity_query/distances")
        .map(|m| cdr::from_bytes::<GroupDistances>(&m.data).expect("GroupDistances decodes"))
        .collect();
    let bag_first = BAG_START_NS as i128;
    let bag_last = right.last().unwrap().0 as i128;
    let mut valid = 0usize;
    let mut distinct = Vec::new();
    let mut exact_latest = 0usize;
    for c in &cycles {
        assert_eq!(c.groups.len(), 1, "one group pair: {c:?}");
        let g = &c.groups[0];
        assert_eq!(g.group, "left|right");
        if !g.valid {
            assert!(g.distance.is_nan() && !g.message.is_empty(), "{g:?}");
            continue;
        }
        valid += 1;
        let t = stamp_ns(&c.header.stamp);
        assert!(
            t >= bag_first && t <= bag_last + 600_000_000,
            "valid cycle stamped {t}, outside the bag's time [{bag_first}, {bag_last}] + timeout"
        );
        assert_eq!(c.header.frame_id, "world");
        let cands = candidates(&refs, &left, &right, t);
        assert!(!cands.is_empty(), "no candidate pair for the cycle at {t}");
        let Some((&(i, j), r)) = matching(&cands, g.distance, g) else {
            let nearest = cands
                .iter()
                .map(|(k, r)| (k, (r.distance - g.distance).abs()))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap();
            panic!(
                "cycle at {:.3} s into the bag: distance {} m ({} - {}) matches none of {} \
                 candidate pairs of states; nearest {:?} is {:.3e} m off",
                (t - bag_first) as f64 * 1e-9,
                g.distance,
                g.body_a,
                g.body_b,
                cands.len(),
                nearest.0,
                nearest.1
            );
        };
        assert_eq!(
            (g.body_a.as_str(), g.body_b.as_str()),
            (r.body_a.as_str(), r.body_b.as_str()),
            "closest bodies of the cycle at {t} vs the library (states {i}, {j})"
        );
        let (ea, eb) = (
            max_diff(&xyz(&g.point_a), &r.point_a),
            max_diff(&xyz(&g.point_b), &r.point_b),
        );
        assert!(
            ea <= TOLERANCE && eb <= TOLERANCE,
            "witness points of the cycle at {t} differ from the library's by {ea:.3e} / {eb:.3e} m"
        );
        // The rule can fail: a distance 1e-6 m off matches no candidate.
        assert!(
            matching(&cands, g.distance + PERTURBATION, g).is_none(),
            "a distance perturbed by {PERTURBATION} m would still match at {t}: the rule is too \
             loose"
        );
        // The newest states at or before the stamp: what an instant delivery would give.
        let newest = |track: &Track| track.iter().rposition(|(s, _)| *s as i128 <= t);
        if newest(&left) == Some(i) && newest(&right) == Some(j) {
            exact_latest += 1;
        }
        if !distinct
            .iter()
            .any(|d: &f64| (d - g.distance).abs() <= TOLERANCE)
        {
            distinct.push(g.distance);
        }
    }
    assert!(
        valid >= MIN_VALID_CYCLES,
        "only {valid} valid cycles of {} recorded (need {MIN_VALID_CYCLES})\n{}",
        cycles.len(),
        node.output().join("\n")
    );
    // The stream followed the motion: most cycles saw new states (100 Hz stream, 100 state
    // pairs per second).
    assert!(
        distinct.len() >= 150,
        "only {} distinct distances in {valid} valid cycles",
        distinct.len()
    );
    eprintln!(
        "proximity_replay: {} cycles recorded, {valid} valid, all within {TOLERANCE:e} m of the \
         library ({} distinct distances in [{:.4}, {:.4}] m; {exact_latest} computed from the \
         newest states at their stamp)",
        cycles.len(),
        distinct.len(),
        distinct.iter().copied().fold(f64::INFINITY, f64::min),
        distinct.iter().copied().fold(0.0, f64::max),
    );
}
