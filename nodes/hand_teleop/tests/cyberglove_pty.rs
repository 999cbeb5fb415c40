//! `cyberglove_driver`'s port loop against an emulated CyberGlove on a pseudo-terminal (no
//! DDS): request and streaming mode, 18 and 22 sensors, status byte; garbage bytes, a record
//! cut short, a silent glove (timeout), a glove unplugged from its box (status byte) and an
//! unplugged/replugged device are reported and recovered from, and every published reading is
//! one the glove really sent.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hand_teleop::cyberglove::{self, Emulator, LinkConfig, LinkEvent, Mode};
use nix::fcntl::OFlag;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::pty::{grantpt, posix_openpt, ptsname_r, unlockpt, PtyMaster};

/// What the emulated glove does next.
#[derive(Default)]
struct Script {
    garbage_next: bool,
    truncate_next: bool,
    silent: bool,
    unplug: bool,
    values: Vec<u8>,
    plugged_in_box: bool,
}

fn open_pty(link: &Path) -> PtyMaster {
    let m = posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY).unwrap();
    grantpt(&m).unwrap();
    unlockpt(&m).unwrap();
    let slave = ptsname_r(&m).unwrap();
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(slave, link).unwrap();
    m
}

/// The glove: answers on the master side until `stop`; on `unplug` it closes the pty, waits,
/// and comes back on a new pty behind the same path.
fn glove(
    link: PathBuf,
    sensors: usize,
    status: bool,
    script: Arc<Mutex<Script>>,
    stop: Arc<AtomicBool>,
) {
    let mut master = open_pty(&link);
    let mut emu = Emulator::new(sensors, status);
    let mut last_stream = Instant::now();
    let mut buf = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        if script.lock().unwrap().unplug {
            drop(master);
            std::thread::sleep(Duration::from_millis(400));
            master = open_pty(&link);
            emu.streaming = false;
            script.lock().unwrap().unplug = false;
        }
        let mut fds = [PollFd::new(master.as_fd(), PollFlags::POLLIN)];
        let ready = poll(&mut fds, PollTimeout::from(5u16)).unwrap_or(0);
        let readable = ready > 0
            && fds[0]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLIN));
        let mut host = Vec::new();
        if readable {
            match master.read(&mut buf) {
                Ok(n) => host.extend_from_slice(&buf[..n]),
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        } else if ready > 0 {
            // hang-up: no slave open yet
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut s = script.lock().unwrap();
        emu.values = s.values.clone();
        emu.plugged = s.plugged_in_box;
        let mut out = emu.answer(&host);
        if emu.streaming && last_stream.elapsed() > Duration::from_millis(10) {
            out.extend(emu.record(b'S'));
            last_stream = Instant::now();
        }
        if out.is_empty() || s.silent {
            continue;
        }
        if s.garbage_next {
            s.garbage_next = false;
            out.splice(0..0, [0x11, 0xfe, 0x00, b'x', 0x47 ^ 0xff]);
        }
        if s.truncate_next {
            s.truncate_next = false;
            out.truncate(10);
        }
        drop(s);
        let _ = master.write_all(&out);
    }
}

struct Run {
    events: Arc<Mutex<Vec<LinkEvent>>>,
    script: Arc<Mutex<Script>>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Run {
    fn start(dir: &Path, mode: Mode, sensors: usize, status: bool) -> Run {
        let link = dir.join("glove0");
        let script = Arc::new(Mutex::new(Script {
            values: (0..sensors).map(|i| 10 + 7 * i as u8).collect(),
            plugged_in_box: true,
            ..Default::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let events = Arc::new(Mutex::new(Vec::new()));
        let g = {
            let (l, s, st) = (link.clone(), script.clone(), stop.clone());
            std::thread::spawn(move || glove(l, sensors, status, s, st))
        };
        // the device appears after the driver starts: it waits for it
        std::thread::sleep(Duration::from_millis(50));
        let cfg = LinkConfig {
            port: link.display().to_string(),
            baud_rate: 115_200,
            mode,
            sensors,
            status_byte: status,
            sample_period: Duration::from_millis(10),
            timeout: Duration::from_millis(150),
            reconnect_interval: Duration::from_millis(100),
        };
        let d = {
            let (e, st) = (events.clone(), stop.clone());
            std::thread::spawn(move || cyberglove::run(&cfg, &st, |ev| e.lock().unwrap().push(ev)))
        };
        Run {
            events,
            script,
            stop,
            threads: vec![g, d],
        }
    }

    fn readings(&self) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(e, LinkEvent::Reading(_)))
            .count()
    }

    fn wait_readings(&self, more: usize, what: &str) {
        let want = self.readings() + more;
        let t0 = Instant::now();
        while self.readings() < want {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "{what}: no readings; events {:?}",
                self.events
                    .lock()
                    .unwrap()
                    .iter()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn problems(&self, needle: &str) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| match e {
                LinkEvent::Problem(m) | LinkEvent::Disconnected(m) => m.contains(needle),
                _ => false,
            })
            .count()
    }

    fn finish(mut self) -> Vec<LinkEvent> {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            t.join().unwrap();
        }
        std::mem::take(&mut *self.events.lock().unwrap())
    }
}

fn scenario(mode: Mode, sensors: usize, status: bool) {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::start(dir.path(), mode, sensors, status);
    let v1: Vec<u8> = run.script.lock().unwrap().values.clone();
    run.wait_readings(5, "start");
    // garbage before an answer
    run.script.lock().unwrap().garbage_next = true;
    run.wait_readings(5, "after garbage");
    assert!(run.problems("unexpected byte") > 0, "garbage not reported");
    // a record cut short, then silence: a timeout, then recovery
    {
        let mut s = run.script.lock().unwrap();
        s.truncate_next = true;
    }
    std::thread::sleep(Duration::from_millis(30));
    run.script.lock().unwrap().silent = true;
    std::thread::sleep(Duration::from_millis(400));
    run.script.lock().unwrap().silent = false;
    run.wait_readings(5, "after timeout");
    assert!(run.problems("timeout") > 0, "timeout not reported");
    // the glove out of its box (status byte): reported, nothing published
    if status {
        let before = run.readings();
        run.script.lock().unwrap().plugged_in_box = false;
        std::thread::sleep(Duration::from_millis(200));
        assert!(run.problems("not plugged") > 0);
        assert!(
            run.readings() <= before + 1,
            "readings while unplugged from the box"
        );
        run.script.lock().unwrap().plugged_in_box = true;
        run.wait_readings(3, "back in the box");
    }
    // unplug / replug the device, new values after the replug
    let v2: Vec<u8> = (0..sensors).map(|i| 200 - 3 * i as u8).collect();
    {
        let mut s = run.script.lock().unwrap();
        s.unplug = true;
        s.values = v2.clone();
    }
    std::thread::sleep(Duration::from_millis(200));
    run.wait_readings(5, "after replug");
    assert!(run.problems("") > 0);
    let events = run.finish();
    let connects = events
        .iter()
        .filter(|e| **e == LinkEvent::Connected)
        .count();
    assert!(connects >= 2, "reconnected after the replug ({connects})");
    assert!(events
        .iter()
        .any(|e| matches!(e, LinkEvent::Disconnected(_))));
    // every reading is one the glove sent
    let f = |v: &[u8]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    let (a, b) = (f(&v1), f(&v2));
    for e in &events {
        if let LinkEvent::Reading(r) = e {
            assert!(*r == a || *r == b, "a wrong reading: {r:?}");
        }
    }
}

#[test]
fn request_mode_22_sensors_with_status_byte() {
    scenario(Mode::Request, 22, true);
}

#[test]
fn stream_mode_18_sensors() {
    scenario(Mode::Stream, 18, false);
}
