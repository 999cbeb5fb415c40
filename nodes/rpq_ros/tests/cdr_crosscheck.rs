//! Byte-for-byte compatibility with third-party ROS 2 implementations, without DDS.
//!
//! Messages are encoded with [`rpq_ros::cdr::to_vec`] and handed, together with their values and
//! definitions, to `tests/python/cdr_crosscheck.py`, which checks them with `rosbags` (ROS 2
//! Jazzy type store; `serialize_cdr`, `deserialize_cdr`, `get_types_from_msg`) and, if installed,
//! `mcap-ros2-support`. The suite's own interfaces are read by rosbags from `msg/` directly, so
//! the generator in `build.rs` is checked against an independent parser.
//!
//! Needs `RPQ_PYENV`: a Python venv with `rosbags` (tests/run_all.sh creates one). Opens no
//! sockets.

include!(concat!(env!("OUT_DIR"), "/test_interfaces.rs"));

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use rpq_ros::cdr;
use rpq_ros::interfaces::rpq_interfaces::{msg::DriverStatus, srv as fk};
use rpq_ros::msg::{
    builtin_interfaces::{Duration, Time},
    geometry_msgs as gm, nav_msgs, sensor_msgs, std_msgs, tf2_msgs, trajectory_msgs,
    visualization_msgs as vm, RosMessage,
};
use rpq_ros::srv::std_srvs;
use rpq_test_msgs::msg::{Everything, Nothing};
use rpq_test_msgs::srv::{ProbeRequest, ProbeResponse};
use serde::Serialize;

#[derive(Serialize)]
struct Case {
    r#type: &'static str,
    definition: String,
    cdr: String,
    value: serde_yaml::Value,
}

#[derive(Serialize)]
struct Definition {
    r#type: String,
    definition: String,
}

#[derive(Serialize)]
struct Document {
    packages: BTreeMap<String, String>,
    definitions: Vec<Definition>,
    cases: Vec<Case>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn case<M: RosMessage>(msg: &M) -> Case {
    let bytes = cdr::to_vec(msg).unwrap();
    // Our own decoder agrees before the peers are asked (bytes compared: NaN != NaN).
    let decoded: M = cdr::from_bytes(&bytes).unwrap();
    assert_eq!(cdr::to_vec(&decoded).unwrap(), bytes);
    Case {
        r#type: M::TYPE_NAME,
        definition: M::definition(),
        cdr: hex(&bytes),
        value: serde_yaml::to_value(msg).unwrap(),
    }
}

fn header(sec: i32, nanosec: u32, frame: &str) -> std_msgs::Header {
    std_msgs::Header {
        stamp: Time { sec, nanosec },
        frame_id: frame.into(),
    }
}

fn pose(x: f64, y: f64, z: f64, w: f64) -> gm::Pose {
    gm::Pose {
        position: gm::Point { x, y, z },
        orientation: gm::Quaternion {
            x: -0.0,
            y: 0.5,
            z: f64::MIN_POSITIVE,
            w,
        },
    }
}

fn v3(x: f64, y: f64, z: f64) -> gm::Vector3 {
    gm::Vector3 { x, y, z }
}

fn transform(child: &str) -> gm::TransformStamped {
    gm::TransformStamped {
        header: header(12, 999_999_999, "base_link"),
        child_frame_id: child.into(),
        transform: gm::Transform {
            translation: v3(0.1, -0.2, 0.341),
            rotation: gm::Quaternion {
                x: 0.0,
                y: 0.0,
                z: std::f64::consts::FRAC_1_SQRT_2,
                w: std::f64::consts::FRAC_1_SQRT_2,
            },
        },
    }
}

fn marker(id: i32) -> vm::Marker {
    vm::Marker {
        header: header(1, 2, "map"),
        ns: "ns√".into(),
        id,
        r#type: vm::Marker::TRIANGLE_LIST,
        action: vm::Marker::ADD,
        pose: pose(1.0, 2.0, 3.0, 1.0),
        scale: v3(1.0, 1.0, 1.0),
        color: std_msgs::ColorRGBA {
            r: 0.1,
            g: 0.2,
            b: 0.3,
            a: 1.0,
        },
        lifetime: Duration {
            sec: 0,
            nanosec: 500_000_000,
        },
        frame_locked: true,
        points: vec![
            gm::Point {
                x: 1.0,
                y: 0.0,
                z: -1.0,
            };
            3
        ],
        colors: vec![
            std_msgs::ColorRGBA {
                r: 1.0,
                g: 0.0,
                b: 0.0,
                a: 0.5,
            };
            3
        ],
        texture_resource: "embedded://tex".into(),
        texture: sensor_msgs::CompressedImage {
            header: header(0, 1, "cam"),
            format: "png".into(),
            data: vec![0x89, b'P', b'N', b'G', 0, 255],
        },
        uv_coordinates: vec![
            vm::UVCoordinate { u: 0.0, v: 1.0 },
            vm::UVCoordinate { u: 0.5, v: 0.25 },
        ],
        text: String::new(),
        mesh_resource: "package://rpq/meshes/link1.stl".into(),
        mesh_file: vm::MeshFile {
            filename: "x.stl".into(),
            data: (0..=255).collect(),
        },
        mesh_use_embedded_materials: false,
    }
}

fn everything() -> Everything {
    Everything {
        a_bool: false,
        a_byte: 255,
        a_char: 0,
        an_i8: i8::MIN,
        a_u8: 1,
        an_i16: i16::MIN,
        a_u16: 1,
        an_i32: i32::MIN,
        a_u32: u32::MAX,
        an_i64: i64::MIN,
        a_u64: u64::MAX,
        an_f32: f32::MIN_POSITIVE / 8.0,
        an_f64: -0.0,
        a_string: "ü".into(),
        short_string: "12345678".into(),
        unbounded_f64: vec![f64::MAX, f64::INFINITY, f64::NEG_INFINITY, 5e-324, f64::NAN],
        bounded_i32: vec![-1, 0, 1],
        fixed_u8: [9, 8, 7, 6],
        big_fixed: std::array::from_fn(|i| i as f64 * 0.5 - 3.0),
        strings: vec![String::new(), "a".into(), "bc".into(), "def".into()],
        fixed_strings: ["x".into(), "yz".into()],
        bools: [false, true, false],
        fixed_bytes: [255, 127, 128],
        chars: b"ROS\x7f\xff".to_vec(),
        nothing: Nothing::default(),
        nothings: vec![Nothing::default(); 3],
        point: gm::Point {
            x: 1.0,
            y: 2.0,
            z: 3.0,
        },
        bounded_points: vec![gm::Point::default()],
        times: [
            Time {
                sec: -1,
                nanosec: 1,
            },
            Time { sec: 1, nanosec: 0 },
        ],
        r#type: 42,
        r#match: "m".into(),
    }
}

fn fixed_cases() -> Vec<Case> {
    let joint_state = sensor_msgs::JointState {
        header: header(1_700_000_000, 123, "x"),
        name: (1..=6).map(|i| format!("joint_{i}")).collect(),
        position: vec![0.0, -0.0, 1e300, -1e-300, 5e-324, std::f64::consts::PI],
        velocity: vec![],
        effort: vec![f64::INFINITY],
    };
    let mut pwc = gm::PoseWithCovariance {
        pose: pose(0.0, 0.0, 0.0, 1.0),
        ..Default::default()
    };
    for (i, c) in pwc.covariance.iter_mut().enumerate() {
        *c = i as f64 / 7.0;
    }
    let trajectory = trajectory_msgs::JointTrajectory {
        header: header(0, 0, ""),
        joint_names: vec!["a".into(), "bb".into()],
        points: vec![
            trajectory_msgs::JointTrajectoryPoint {
                positions: vec![0.1, 0.2],
                velocities: vec![0.0, 0.0],
                accelerations: vec![],
                effort: vec![],
                time_from_start: Duration { sec: 1, nanosec: 5 },
            },
            trajectory_msgs::JointTrajectoryPoint {
                positions: vec![0.3, 0.4],
                time_from_start: Duration {
                    sec: -1,
                    nanosec: 999_999_999,
                },
                ..Default::default()
            },
        ],
    };
    let multi = std_msgs::Float64MultiArray {
        layout: std_msgs::MultiArrayLayout {
            dim: vec![
                std_msgs::MultiArrayDimension {
                    label: "rows".into(),
                    size: 2,
                    stride: 6,
                },
                std_msgs::MultiArrayDimension {
                    label: "c".into(),
                    size: 3,
                    stride: 3,
                },
            ],
            data_offset: 1,
        },
        data: vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
    };
    let path = nav_msgs::Path {
        header: header(3, 4, "map"),
        poses: vec![
            gm::PoseStamped {
                header: header(3, 4, "map"),
                pose: pose(1.0, 0.0, 0.0, 1.0),
            },
            gm::PoseStamped {
                header: header(5, 6, "odom1"),
                pose: pose(2.0, 0.0, 0.0, 0.0),
            },
        ],
    };
    let fk_response = fk::ComputeForwardKinematicsResponse {
        success: true,
        message: String::new(),
        pose: gm::PoseStamped {
            header: header(7, 8, "base_link"),
            pose: pose(0.5, -0.25, 0.9, 0.5),
        },
    };
    vec![
        case(&std_msgs::String {
            data: "Größe ✓ 日本".into(),
        }),
        case(&std_msgs::String::default()),
        case(&std_msgs::Bool { data: true }),
        case(&std_msgs::Empty::default()),
        case(&std_msgs::Int32 { data: -2 }),
        case(&std_msgs::Float64 { data: f64::NAN }),
        case(&header(-5, 1, "odd")),
        case(&std_msgs::ColorRGBA {
            r: f32::MAX,
            g: -0.0,
            b: f32::MIN_POSITIVE / 2.0,
            a: 1.0,
        }),
        case(&multi),
        case(&joint_state),
        case(&gm::Point32 {
            x: 0.1,
            y: f32::INFINITY,
            z: -3.5,
        }),
        case(&gm::PointStamped {
            header: header(0, 0, "a"),
            point: gm::Point {
                x: 1.0,
                y: 2.0,
                z: 3.0,
            },
        }),
        case(&gm::Vector3Stamped {
            header: header(0, 0, "ab"),
            vector: v3(-1.0, 0.0, 1.0),
        }),
        case(&gm::PoseStamped {
            header: header(1, 2, "abc"),
            pose: pose(1.0, 2.0, 3.0, 0.25),
        }),
        case(&gm::PoseArray {
            header: header(1, 2, "abcd"),
            poses: vec![pose(1.0, 2.0, 3.0, 1.0), pose(4.0, 5.0, 6.0, -1.0)],
        }),
        case(&pwc),
        case(&transform("tool0")),
        case(&tf2_msgs::TFMessage {
            transforms: vec![transform("link_1"), transform("link_22")],
        }),
        case(&gm::TwistStamped {
            header: header(9, 9, "tcp"),
            twist: gm::Twist {
                linear: v3(0.1, 0.2, 0.3),
                angular: v3(-0.1, -0.2, -0.3),
            },
        }),
        case(&gm::WrenchStamped {
            header: header(9, 10, "ft_sensor"),
            wrench: gm::Wrench {
                force: v3(10.0, -20.0, 30.5),
                torque: v3(1e-9, 0.0, -1e9),
            },
        }),
        case(&trajectory),
        case(&path),
        case(&marker(7)),
        case(&vm::MarkerArray {
            markers: vec![marker(1), vm::Marker::default(), marker(3)],
        }),
        case(&std_srvs::TriggerRequest::default()),
        case(&std_srvs::TriggerResponse {
            success: true,
            message: "done".into(),
        }),
        case(&std_srvs::SetBoolRequest { data: true }),
        case(&std_srvs::SetBoolResponse {
            success: false,
            message: "refused: à".into(),
        }),
        case(&std_srvs::EmptyRequest::default()),
        case(&std_srvs::EmptyResponse::default()),
        case(&DriverStatus {
            header: header(100, 200, "rx60"),
            mode: DriverStatus::MODE_TRAJECTORY,
            holding: true,
            rejected_commands: 3,
            last_error: "joint_7 unknown".into(),
        }),
        case(&DriverStatus::default()),
        case(&fk::ComputeForwardKinematicsRequest {
            joint_names: vec!["joint_1".into(), "joint_2".into()],
            positions: vec![0.5, -1.25],
            link_name: "flange".into(),
        }),
        case(&fk_response),
        case(&Everything::default()),
        case(&everything()),
        case(&Nothing::default()),
        case(&ProbeRequest::default()),
        case(&ProbeResponse {
            result: everything(),
            code: "E1".into(),
        }),
    ]
}

/// Finite or infinite, never NaN: NaN payloads do not survive the YAML the values travel in.
fn any_f64() -> impl Strategy<Value = f64> {
    use proptest::num::f64 as f;
    (f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO | f::INFINITE).boxed()
}

fn random_cases() -> Vec<Case> {
    let mut runner = TestRunner::deterministic();
    let mut out = Vec::new();
    let text = "\\PC{0,12}";
    let joint_state = (
        any::<i32>(),
        0u32..1_000_000_000,
        text,
        prop::collection::vec(text, 0..5),
        prop::collection::vec(any_f64(), 0..7),
        prop::collection::vec(any_f64(), 0..3),
    )
        .prop_map(
            |(sec, nanosec, frame, name, position, effort)| sensor_msgs::JointState {
                header: std_msgs::Header {
                    stamp: Time { sec, nanosec },
                    frame_id: frame,
                },
                name,
                position,
                velocity: vec![],
                effort,
            },
        );
    let status =
        (any::<u8>(), any::<bool>(), any::<u32>(), text).prop_map(|(mode, holding, n, err)| {
            DriverStatus {
                header: std_msgs::Header::default(),
                mode,
                holding,
                rejected_commands: n,
                last_error: err,
            }
        });
    let fk_request = (
        prop::collection::vec(text, 0..4),
        prop::collection::vec(any_f64(), 0..4),
        text,
    )
        .prop_map(
            |(joint_names, positions, link_name)| fk::ComputeForwardKinematicsRequest {
                joint_names,
                positions,
                link_name,
            },
        );
    let everything = (
        any::<(bool, u8, i8, i16, u16, i32)>(),
        any::<(u32, i64, u64, f32)>(),
        any_f64(),
        "\\PC{0,2}",
        prop::collection::vec(any::<i32>(), 0..=3),
        prop::collection::vec(text, 0..3),
    )
        .prop_map(|(a, b, f, short, bounded, strings)| Everything {
            a_bool: a.0,
            a_byte: a.1,
            an_i8: a.2,
            an_i16: a.3,
            a_u16: a.4,
            an_i32: a.5,
            a_u32: b.0,
            an_i64: b.1,
            a_u64: b.2,
            an_f32: if b.3.is_nan() { 0.5 } else { b.3 },
            an_f64: f,
            short_string: short,
            bounded_i32: bounded,
            strings,
            ..Everything::default()
        });
    for _ in 0..25 {
        out.push(case(&joint_state.new_tree(&mut runner).unwrap().current()));
        out.push(case(&status.new_tree(&mut runner).unwrap().current()));
        out.push(case(&fk_request.new_tree(&mut runner).unwrap().current()));
        out.push(case(&everything.new_tree(&mut runner).unwrap().current()));
    }
    out
}

fn python() -> PathBuf {
    let venv = std::env::var_os("RPQ_PYENV").unwrap_or_else(|| {
        panic!(
            "RPQ_PYENV is not set: point it at a Python venv with `rosbags` (and optionally \
             `mcap-ros2-support`), e.g. the one tests/run_all.sh creates in tests/.cache/venv"
        )
    });
    let python = Path::new(&venv).join("bin/python");
    assert!(
        python.exists(),
        "RPQ_PYENV={} has no bin/python",
        python.display()
    );
    python
}

fn run_crosscheck(doc: &Document) -> String {
    let python = python();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.yaml");
    std::fs::write(&file, serde_yaml::to_string(doc).unwrap()).unwrap();
    let output = Command::new(&python)
        .arg(manifest.join("tests/python/cdr_crosscheck.py"))
        .arg(&file)
        .arg("--std-srvs")
        .arg(manifest.join("ros_interfaces/std_srvs"))
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", python.display()));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "cross-check failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    stdout
}

fn packages() -> BTreeMap<String, String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    BTreeMap::from([
        (
            "rpq_interfaces".to_string(),
            manifest.join("../../msg").display().to_string(),
        ),
        (
            "rpq_test_msgs".to_string(),
            manifest
                .join("tests/msg/rpq_test_msgs")
                .display()
                .to_string(),
        ),
    ])
}

#[test]
fn bytes_and_definitions_match_rosbags() {
    let mut definitions: Vec<Definition> = rpq_ros::msg::TYPE_NAMES
        .iter()
        .map(|name| Definition {
            r#type: name.to_string(),
            definition: rpq_ros::msg::definition_of(name).unwrap(),
        })
        .collect();
    for (name, definition) in [
        (Everything::TYPE_NAME, Everything::definition()),
        (Nothing::TYPE_NAME, Nothing::definition()),
        (ProbeRequest::TYPE_NAME, ProbeRequest::definition()),
        (ProbeResponse::TYPE_NAME, ProbeResponse::definition()),
    ] {
        definitions.push(Definition {
            r#type: name.into(),
            definition,
        });
    }
    let mut cases = fixed_cases();
    cases.extend(random_cases());
    let expected = definitions.len() + cases.len();
    let doc = Document {
        packages: packages(),
        definitions,
        cases,
    };
    let out = run_crosscheck(&doc);
    println!("{out}");
    assert!(
        out.contains(&format!("{expected} passed, 0 failed")),
        "expected {expected} checks:\n{out}"
    );
}

/// The cross-check can fail: a changed field order (here: a definition claiming `mode` comes
/// after `holding`) and a corrupted byte are both caught.
#[test]
fn crosscheck_detects_mismatches() {
    let good = case(&DriverStatus {
        mode: DriverStatus::MODE_POSITION,
        ..Default::default()
    });
    let swapped = DriverStatus::definition()
        .replacen("uint8 mode\n", "@@\n", 1)
        .replacen("bool holding\n", "uint8 mode\n", 1)
        .replacen("@@\n", "bool holding\n", 1);
    assert_ne!(swapped, DriverStatus::definition());
    let mut corrupted = case(&std_msgs::Int32 { data: 5 });
    corrupted.cdr = corrupted.cdr.replacen("05", "06", 1);
    let doc = Document {
        packages: packages(),
        definitions: vec![Definition {
            r#type: DriverStatus::TYPE_NAME.into(),
            definition: swapped,
        }],
        cases: vec![good, corrupted],
    };
    let python = python();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.yaml");
    std::fs::write(&file, serde_yaml::to_string(&doc).unwrap()).unwrap();
    let output = Command::new(&python)
        .arg(manifest.join("tests/python/cdr_crosscheck.py"))
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{stdout}");
    assert!(stdout.contains("1 passed, 2 failed"), "{stdout}");
    assert!(
        stdout.contains("rpq_interfaces/msg/DriverStatus differs"),
        "{stdout}"
    );
    assert!(stdout.contains("bytes differ"), "{stdout}");
}
