//! Test helpers: real Jazzy message definitions and hand-assembled CDR payloads.
//!
//! `fixtures/msg/*.msg` are the files shipped in the Jazzy wheels (ros-jazzy-std-msgs and
//! ros-jazzy-sensor-msgs 5.3.6, ros-jazzy-builtin-interfaces 2.0.3; Apache-2.0).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub const STRING_MSG: &str = include_str!("../fixtures/msg/String.msg");
pub const JOINT_STATE_MSG: &str = include_str!("../fixtures/msg/JointState.msg");
pub const HEADER_MSG: &str = include_str!("../fixtures/msg/Header.msg");
pub const TIME_MSG: &str = include_str!("../fixtures/msg/Time.msg");

pub const STRING_TYPE: &str = "std_msgs/msg/String";
pub const JOINT_STATE_TYPE: &str = "sensor_msgs/msg/JointState";

fn delimiter(name: &str) -> String {
    format!("{}\nMSG: {name}\n", "=".repeat(80))
}

/// rosbag2's full definition text of std_msgs/msg/String (no dependencies).
pub fn string_definition() -> String {
    STRING_MSG.to_string()
}

/// rosbag2's full definition text of sensor_msgs/msg/JointState: the .msg text, then each
/// dependency depth-first behind an 80-`=` delimiter naming it as written in the field.
pub fn joint_state_definition() -> String {
    format!(
        "{JOINT_STATE_MSG}\n{}{HEADER_MSG}\n{}{TIME_MSG}",
        delimiter("std_msgs/Header"),
        delimiter("builtin_interfaces/Time")
    )
}

/// Little-endian XCDR1 writer; alignment counts from after the encapsulation header.
pub struct Cdr {
    buf: Vec<u8>,
}

impl Cdr {
    pub fn new() -> Self {
        Self {
            buf: vec![0x00, 0x01, 0x00, 0x00],
        }
    }
    fn align(&mut self, n: usize) {
        while !(self.buf.len() - 4).is_multiple_of(n) {
            self.buf.push(0);
        }
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.align(4);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.align(8);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn string(&mut self, s: &str) -> &mut Self {
        self.u32(s.len() as u32 + 1);
        self.buf.extend_from_slice(s.as_bytes());
        self.buf.push(0);
        self
    }
    pub fn strings(&mut self, v: &[&str]) -> &mut Self {
        self.u32(v.len() as u32);
        for s in v {
            self.string(s);
        }
        self
    }
    pub fn f64s(&mut self, v: &[f64]) -> &mut Self {
        self.u32(v.len() as u32);
        for &x in v {
            self.f64(x);
        }
        self
    }
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

/// CDR of std_msgs/msg/String.
pub fn string_cdr(data: &str) -> Vec<u8> {
    Cdr::new().string(data).finish()
}

/// A JointState sample.
#[derive(Debug, Clone, PartialEq)]
pub struct JointState {
    pub sec: i32,
    pub nanosec: u32,
    pub frame_id: String,
    pub name: Vec<String>,
    pub position: Vec<f64>,
    pub velocity: Vec<f64>,
    pub effort: Vec<f64>,
}

/// CDR of sensor_msgs/msg/JointState.
pub fn joint_state_cdr(js: &JointState) -> Vec<u8> {
    let names: Vec<&str> = js.name.iter().map(String::as_str).collect();
    Cdr::new()
        .i32(js.sec)
        .u32(js.nanosec)
        .string(&js.frame_id)
        .strings(&names)
        .f64s(&js.position)
        .f64s(&js.velocity)
        .f64s(&js.effort)
        .finish()
}

/// The i-th sample of a deterministic JointState sequence (awkward values on purpose).
pub fn joint_state_sample(i: usize) -> JointState {
    let t = i as f64;
    JointState {
        sec: 1_700_000_000 + i as i32,
        nanosec: (i as u32 * 123_456_789) % 1_000_000_000,
        frame_id: if i.is_multiple_of(2) {
            "base_link".into()
        } else {
            String::new()
        },
        name: (1..=6).map(|j| format!("joint_{j}")).collect(),
        position: (0..6).map(|j| (t * 0.1 + j as f64).sin()).collect(),
        velocity: if i.is_multiple_of(3) {
            Vec::new()
        } else {
            vec![-0.0, 1e-300, 1e300, f64::MIN_POSITIVE / 2.0, -1.5, 2.0]
        },
        effort: Vec::new(),
    }
}

/// A fresh, not yet existing path under a per-test temporary directory.
pub fn fresh_path(tmp: &tempfile::TempDir, name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    tmp.path()
        .join(format!("{name}_{}", N.fetch_add(1, Ordering::Relaxed)))
}

/// Little-endian XCDR1 reader for the two test types (panics on malformed input: test only).
pub struct CdrReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> CdrReader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        assert_eq!(&buf[..2], &[0, 1], "expected CDR_LE encapsulation");
        Self { buf, pos: 4 }
    }
    fn align(&mut self, n: usize) {
        while !(self.pos - 4).is_multiple_of(n) {
            self.pos += 1;
        }
    }
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        s
    }
    pub fn u32(&mut self) -> u32 {
        self.align(4);
        u32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    pub fn i32(&mut self) -> i32 {
        self.align(4);
        i32::from_le_bytes(self.take(4).try_into().unwrap())
    }
    pub fn f64(&mut self) -> f64 {
        self.align(8);
        f64::from_le_bytes(self.take(8).try_into().unwrap())
    }
    pub fn string(&mut self) -> String {
        let n = self.u32() as usize;
        let bytes = self.take(n);
        assert_eq!(bytes.last(), Some(&0), "string without NUL");
        String::from_utf8(bytes[..n - 1].to_vec()).unwrap()
    }
    pub fn strings(&mut self) -> Vec<String> {
        let n = self.u32() as usize;
        (0..n).map(|_| self.string()).collect()
    }
    pub fn f64s(&mut self) -> Vec<f64> {
        let n = self.u32() as usize;
        (0..n).map(|_| self.f64()).collect()
    }
}

/// Decodes std_msgs/msg/String.
pub fn decode_string(cdr: &[u8]) -> String {
    CdrReader::new(cdr).string()
}

/// Decodes sensor_msgs/msg/JointState.
pub fn decode_joint_state(cdr: &[u8]) -> JointState {
    let mut r = CdrReader::new(cdr);
    JointState {
        sec: r.i32(),
        nanosec: r.u32(),
        frame_id: r.string(),
        name: r.strings(),
        position: r.f64s(),
        velocity: r.f64s(),
        effort: r.f64s(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The field text `tests/peers/bag_peer.py` prints for a message.
pub fn canonical_fields(type_name: &str, cdr: &[u8]) -> String {
    let floats = |v: &[f64]| {
        v.iter()
            .map(|x| hex(&x.to_le_bytes()))
            .collect::<Vec<_>>()
            .join(";")
    };
    match type_name {
        STRING_TYPE => format!("data={}", hex(decode_string(cdr).as_bytes())),
        JOINT_STATE_TYPE => {
            let js = decode_joint_state(cdr);
            format!(
                "sec={},nanosec={},frame_id={},name={},position={},velocity={},effort={}",
                js.sec,
                js.nanosec,
                hex(js.frame_id.as_bytes()),
                js.name
                    .iter()
                    .map(|n| hex(n.as_bytes()))
                    .collect::<Vec<_>>()
                    .join(";"),
                floats(&js.position),
                floats(&js.velocity),
                floats(&js.effort)
            )
        }
        other => panic!("no canonical form for {other}"),
    }
}

#[test]
fn cdr_writer_and_reader_agree() {
    for i in 0..6 {
        let js = joint_state_sample(i);
        assert_eq!(decode_joint_state(&joint_state_cdr(&js)), js);
    }
    assert_eq!(decode_string(&string_cdr("ünï")), "ünï");
    // Hand-checked layout: header, then length 3 incl. NUL, then "hi\0".
    assert_eq!(string_cdr("hi"), [0, 1, 0, 0, 3, 0, 0, 0, b'h', b'i', 0]);
}

/// `$RPQ_PYENV/bin/python`, the Python of the test peers' venv (panics with instructions
/// when it is not set up).
pub fn python() -> PathBuf {
    let Some(env) = std::env::var_os("RPQ_PYENV") else {
        panic!(
            "RPQ_PYENV is not set: these tests check bags against third-party readers and need \
             the test peers' Python venv (rosbags, mcap-ros2-support). Run tests/run_all.sh, or \
             tests/setup_pyenv.sh and then RPQ_PYENV=$PWD/tests/.cache/venv cargo test ..."
        )
    };
    let python = Path::new(&env).join("bin").join("python");
    assert!(
        python.is_file(),
        "RPQ_PYENV={}: no bin/python there; create the venv with tests/setup_pyenv.sh",
        Path::new(&env).display()
    );
    python
}

/// Runs `tests/peers/bag_peer.py MODE PATH`; its output lines split at tabs.
pub fn peer(mode: &str, bag: &Path) -> Vec<Vec<String>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/bag_peer.py");
    let out = Command::new(python())
        .arg(script)
        .arg(mode)
        .arg(bag)
        .output()
        .expect("run bag_peer.py");
    assert!(
        out.status.success(),
        "bag_peer.py {mode} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}
