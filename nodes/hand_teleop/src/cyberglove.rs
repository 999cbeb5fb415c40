//! The CyberGlove serial protocol of `cyberglove_driver`, written from the glove's public
//! documentation (the vendor's reference manual and descriptions of the binary commands in
//! public forum threads and driver documentation; no driver code was copied).
//!
//! # Protocol (binary commands, 8N1, 115200 baud by default)
//! - `G` requests one record; the glove answers `G`, one byte per sensor (18 or 22 sensors,
//!   values 1..255: 0 never occurs in data), the glove status byte when the glove is set to
//!   send it, and the terminator `0x00`.
//! - `S` starts streaming: the glove sends such records (each starting with `S`) at its
//!   sampling rate until it receives `^C` (`0x03`).
//! - An error answer is `e` and a code character (`?` unknown command, `g` glove not plugged
//!   into its box, `s` sampling faster than the glove can), then `0x00`.
//! - Status byte: bit 0 set when the glove is plugged into its interface box, bit 1 the
//!   box's switch.
//!
//! # Robustness
//! [`Parser`] accepts a record only when its header, exactly `sensors` non-zero data bytes,
//! the status byte (if configured) and the terminator are all in place; anything else is
//! counted as garbage and the parser resynchronises on the next header byte, so a burst of
//! garbage, a record cut short or bytes lost in the middle give no reading rather than a
//! wrong one. [`run`] (the port loop the node runs on its own thread) requests or streams
//! records, reports timeouts (and restarts streaming), and reopens the port after it
//! disappears (unplug) until it is back (replug).

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Terminator of every record and error answer.
pub const TERMINATOR: u8 = 0x00;
/// Stops streaming.
pub const STOP: u8 = 0x03;

/// The standard sensor order of an 18-sensor CyberGlove mapped to `GloveReading` names
/// (`hand_mapping`'s 20 finger sensors; others keep a descriptive name). The glove has no DIP
/// sensors: `<finger>_3` come from `fixed_names`/`fixed_values` of the driver.
pub const NAMES_18: [&str; 18] = [
    "thumb_0", // thumb rotation (T0)
    "thumb_2", // thumb MCP
    "thumb_3", // thumb IP
    "thumb_1", // thumb abduction (T1)
    "index_1",
    "index_2",
    "middle_1",
    "middle_2",
    "index_0", // middle-index abduction
    "ring_1",
    "ring_2",
    "ring_0", // ring-middle abduction
    "little_1",
    "little_2",
    "little_0", // pinky-ring abduction
    "palm_arch",
    "wrist_pitch",
    "wrist_yaw",
];

/// The standard sensor order of a 22-sensor CyberGlove mapped to `GloveReading` names.
pub const NAMES_22: [&str; 22] = [
    "thumb_0",
    "thumb_2",
    "thumb_3",
    "thumb_1",
    "index_1",
    "index_2",
    "index_3",
    "middle_1",
    "middle_2",
    "middle_3",
    "index_0",
    "ring_1",
    "ring_2",
    "ring_3",
    "ring_0",
    "little_1",
    "little_2",
    "little_3",
    "little_0",
    "palm_arch",
    "wrist_pitch",
    "wrist_yaw",
];

/// What the parser found in the byte stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A complete, well-formed record: one byte per sensor, and the status byte if configured.
    Record {
        /// Raw sensor values (counts, 1..255).
        values: Vec<u8>,
        /// The glove status byte, when the glove sends it.
        status: Option<u8>,
    },
    /// An error answer of the glove (its code character).
    GloveError(u8),
    /// Bytes dropped while looking for a well-formed record.
    Garbage(usize),
}

/// Human-readable meaning of an error code of the glove.
pub fn error_meaning(code: u8) -> String {
    match code {
        b'?' => "unknown command".into(),
        b'g' => "glove not plugged into its interface box".into(),
        b's' => "sampling faster than the glove can".into(),
        c => format!("error code {:?}", c as char),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum State {
    Seek,
    Data(Vec<u8>),
    Status(Vec<u8>),
    End(Vec<u8>, Option<u8>),
    ErrorCode,
    ErrorEnd(u8),
}

/// Incremental parser of the glove's binary answers.
#[derive(Clone, Debug)]
pub struct Parser {
    sensors: usize,
    status_byte: bool,
    header: u8,
    state: State,
    skipped: usize,
    frame_len: usize,
}

impl Parser {
    /// A parser of records with `sensors` values (18 or 22), the status byte when
    /// `status_byte`, started by `header` (`b'G'` for requested records, `b'S'` when
    /// streaming).
    pub fn new(sensors: usize, status_byte: bool, header: u8) -> Self {
        Parser {
            sensors,
            status_byte,
            header,
            state: State::Seek,
            skipped: 0,
            frame_len: 0,
        }
    }

    /// Drops a partial record (after a timeout); its bytes count as garbage.
    pub fn reset(&mut self, out: &mut Vec<Event>) {
        self.skipped += self.frame_len;
        self.frame_len = 0;
        self.state = State::Seek;
        self.flush_garbage(out);
    }

    fn flush_garbage(&mut self, out: &mut Vec<Event>) {
        if self.skipped > 0 {
            out.push(Event::Garbage(self.skipped));
            self.skipped = 0;
        }
    }

    /// Bad frame: its bytes are garbage; the byte that broke it may start the next frame.
    fn resync(&mut self, b: u8, out: &mut Vec<Event>) {
        self.skipped += self.frame_len;
        self.frame_len = 0;
        self.state = State::Seek;
        self.push(b, out);
    }

    /// Feeds bytes; complete events are appended to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        for &b in bytes {
            self.push(b, out);
        }
    }

    fn push(&mut self, b: u8, out: &mut Vec<Event>) {
        let state = std::mem::replace(&mut self.state, State::Seek);
        self.state = match state {
            State::Seek => {
                if b == self.header {
                    self.flush_garbage(out);
                    self.frame_len = 1;
                    State::Data(Vec::with_capacity(self.sensors))
                } else if b == b'e' {
                    self.flush_garbage(out);
                    self.frame_len = 1;
                    State::ErrorCode
                } else {
                    self.skipped += 1;
                    State::Seek
                }
            }
            State::Data(mut v) => {
                if b == TERMINATOR {
                    // a record cut short
                    self.frame_len += 1;
                    self.skipped += self.frame_len;
                    self.frame_len = 0;
                    State::Seek
                } else {
                    self.frame_len += 1;
                    v.push(b);
                    if v.len() < self.sensors {
                        State::Data(v)
                    } else if self.status_byte {
                        State::Status(v)
                    } else {
                        State::End(v, None)
                    }
                }
            }
            State::Status(v) => {
                self.frame_len += 1;
                State::End(v, Some(b))
            }
            State::End(values, status) => {
                if b == TERMINATOR {
                    self.frame_len = 0;
                    out.push(Event::Record { values, status });
                    State::Seek
                } else {
                    self.resync(b, out);
                    return;
                }
            }
            State::ErrorCode => {
                self.frame_len += 1;
                State::ErrorEnd(b)
            }
            State::ErrorEnd(code) => {
                self.frame_len = 0;
                out.push(Event::GloveError(code));
                if b == TERMINATOR {
                    State::Seek
                } else {
                    self.push(b, out);
                    return;
                }
            }
        };
    }
}

/// How records are obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One `G` request per sample.
    Request,
    /// `S` once, then the glove streams.
    Stream,
}

/// Settings of the port loop.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    /// Serial device (e.g. `/dev/ttyUSB0`).
    pub port: String,
    /// Baud rate.
    pub baud_rate: u32,
    /// Request or stream.
    pub mode: Mode,
    /// Sensors of the glove (18 or 22).
    pub sensors: usize,
    /// Whether the glove sends its status byte.
    pub status_byte: bool,
    /// Time between two requests (request mode).
    pub sample_period: Duration,
    /// A record not complete this long after its request (or, streaming, after the previous
    /// record) is a timeout.
    pub timeout: Duration,
    /// Time between two attempts to open a missing port.
    pub reconnect_interval: Duration,
}

/// What the port loop reports.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkEvent {
    /// The port is open and the glove answered the start.
    Connected,
    /// A well-formed reading (counts), ready to publish.
    Reading(Vec<f64>),
    /// Something to report (garbage, short record, timeout, glove error, unplugged glove);
    /// no reading was published for it.
    Problem(String),
    /// The port failed or vanished; the loop tries to reopen it.
    Disconnected(String),
}

/// Runs the port loop until `stop` is set: opens the port (retrying), requests or streams
/// records, sends every well-formed reading to `emit` and reports every problem. Never
/// panics; I/O errors lead to a reconnect.
pub fn run(cfg: &LinkConfig, stop: &AtomicBool, mut emit: impl FnMut(LinkEvent)) {
    let mut reported_missing = false;
    while !stop.load(Ordering::Relaxed) {
        let port = serialport::new(&cfg.port, cfg.baud_rate)
            .timeout(Duration::from_millis(10))
            .open();
        let mut port = match port {
            Ok(p) => p,
            Err(e) => {
                if !reported_missing {
                    emit(LinkEvent::Disconnected(format!(
                        "cannot open {}: {e}; retrying every {:.1} s",
                        cfg.port,
                        cfg.reconnect_interval.as_secs_f64()
                    )));
                    reported_missing = true;
                }
                sleep_unless_stopped(cfg.reconnect_interval, stop);
                continue;
            }
        };
        reported_missing = false;
        let why = session(cfg, stop, &mut *port, &mut emit);
        if cfg.mode == Mode::Stream {
            let _ = port.write_all(&[STOP]);
        }
        drop(port);
        if let Some(why) = why {
            emit(LinkEvent::Disconnected(why));
            sleep_unless_stopped(cfg.reconnect_interval, stop);
        }
    }
}

fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) {
    let end = Instant::now() + d;
    while Instant::now() < end && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(10).min(d));
    }
}

/// One open port: returns why it ended (`None`: stopped).
fn session<P: Read + Write + ?Sized>(
    cfg: &LinkConfig,
    stop: &AtomicBool,
    port: &mut P,
    emit: &mut impl FnMut(LinkEvent),
) -> Option<String> {
    let header = if cfg.mode == Mode::Stream { b'S' } else { b'G' };
    let mut parser = Parser::new(cfg.sensors, cfg.status_byte, header);
    let mut events = Vec::new();
    let mut buf = [0u8; 256];
    let start = |port: &mut P| -> std::io::Result<()> {
        if cfg.mode == Mode::Stream {
            port.write_all(&[STOP, b'S'])?;
        } else {
            port.write_all(b"G")?;
        }
        port.flush()
    };
    if let Err(e) = start(port) {
        return Some(format!("{}: {e}", cfg.port));
    }
    emit(LinkEvent::Connected);
    let mut waiting_since = Instant::now();
    let mut next_request = Instant::now() + cfg.sample_period;
    let mut answered = false;
    while !stop.load(Ordering::Relaxed) {
        match port.read(&mut buf) {
            Ok(0) => return Some(format!("{}: end of file (glove unplugged?)", cfg.port)),
            Ok(n) => parser.feed(&buf[..n], &mut events),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Some(format!("{}: {e} (glove unplugged?)", cfg.port)),
        }
        for ev in events.drain(..) {
            match ev {
                Event::Record { values, status } => {
                    if let Some(s) = status.filter(|s| s & 1 == 0) {
                        emit(LinkEvent::Problem(format!(
                            "glove status {s:#04x}: glove not plugged into its interface box; reading dropped"
                        )));
                    } else {
                        emit(LinkEvent::Reading(
                            values.iter().map(|&v| v as f64).collect(),
                        ));
                    }
                    waiting_since = Instant::now();
                    answered = true;
                }
                Event::GloveError(c) => {
                    emit(LinkEvent::Problem(format!(
                        "glove answered error `e{}`: {}",
                        c as char,
                        error_meaning(c)
                    )));
                    answered = true;
                }
                Event::Garbage(n) => emit(LinkEvent::Problem(format!(
                    "{n} unexpected byte(s) dropped (garbage or a record cut short)"
                ))),
            }
        }
        let now = Instant::now();
        if now.duration_since(waiting_since) > cfg.timeout {
            parser.reset(&mut events);
            emit(LinkEvent::Problem(format!(
                "timeout: no complete record for {:.0} ms{}",
                cfg.timeout.as_secs_f64() * 1e3,
                if cfg.mode == Mode::Stream {
                    "; restarting the stream"
                } else {
                    "; requesting again"
                }
            )));
            if let Err(e) = start(port) {
                return Some(format!("{}: {e}", cfg.port));
            }
            waiting_since = now;
            next_request = now + cfg.sample_period;
            answered = false;
        } else if cfg.mode == Mode::Request && answered && now >= next_request {
            if let Err(e) = port.write_all(b"G").and_then(|_| port.flush()) {
                return Some(format!("{}: {e}", cfg.port));
            }
            waiting_since = now;
            next_request = now + cfg.sample_period;
            answered = false;
        }
    }
    None
}

/// The glove side of the protocol for tests and demos: answers `G` with a record of its
/// current values, streams on `S` until `^C`, answers `e?` to anything else.
#[derive(Clone, Debug)]
pub struct Emulator {
    /// Current sensor values (1..255).
    pub values: Vec<u8>,
    /// Send the status byte.
    pub status_byte: bool,
    /// Glove plugged into its box (status bit 0).
    pub plugged: bool,
    /// Streaming (after `S`).
    pub streaming: bool,
}

impl Emulator {
    /// A glove with `sensors` sensors at mid-range.
    pub fn new(sensors: usize, status_byte: bool) -> Self {
        Emulator {
            values: vec![128; sensors],
            status_byte,
            plugged: true,
            streaming: false,
        }
    }

    /// One record with `header`.
    pub fn record(&self, header: u8) -> Vec<u8> {
        let mut r = vec![header];
        r.extend(self.values.iter().map(|&v| v.max(1)));
        if self.status_byte {
            r.push(u8::from(self.plugged));
        }
        r.push(TERMINATOR);
        r
    }

    /// Answer to the bytes the host sent.
    pub fn answer(&mut self, host: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for &b in host {
            match b {
                b'G' => out.extend(self.record(b'G')),
                b'S' => self.streaming = true,
                STOP => self.streaming = false,
                _ => out.extend([b'e', b'?', TERMINATOR]),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(p: &mut Parser, bytes: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        p.feed(bytes, &mut out);
        out
    }

    #[test]
    fn records_with_and_without_status_in_pieces() {
        for (n, status) in [(18, false), (22, true)] {
            let mut e = Emulator::new(n, status);
            e.values = (1..=n as u8).collect();
            let rec = e.record(b'G');
            let mut p = Parser::new(n, status, b'G');
            let mut out = Vec::new();
            for chunk in rec.chunks(5) {
                p.feed(chunk, &mut out);
            }
            assert_eq!(
                out,
                vec![Event::Record {
                    values: (1..=n as u8).collect(),
                    status: status.then_some(1)
                }]
            );
        }
    }

    #[test]
    fn garbage_short_records_and_errors_give_no_reading() {
        let e = Emulator::new(22, false);
        let rec = e.record(b'G');
        let mut p = Parser::new(22, false, b'G');
        // garbage, then a record
        let mut bytes = vec![0xff, 0x10, 0x00, 0x33];
        bytes.extend(&rec);
        let out = parse(&mut p, &bytes);
        assert_eq!(out[0], Event::Garbage(4));
        assert!(matches!(out[1], Event::Record { .. }));
        // a record cut short (terminator early), then a good one
        let mut bytes = rec[..10].to_vec();
        bytes.push(0);
        bytes.extend(&rec);
        let out = parse(&mut p, &bytes);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0], Event::Garbage(11));
        assert!(matches!(out[1], Event::Record { .. }));
        // bytes lost in the middle: the next record's header is taken as data, the frame has
        // no terminator where it must: no reading from it, the following record is good
        let mut bytes = rec[..10].to_vec();
        bytes.extend(&rec);
        bytes.extend(&rec);
        let out = parse(&mut p, &bytes);
        let records = out
            .iter()
            .filter(|e| matches!(e, Event::Record { .. }))
            .count();
        assert!(records <= 2, "{out:?}");
        for ev in &out {
            if let Event::Record { values, .. } = ev {
                assert_eq!(values, &vec![128; 22], "a wrong reading: {out:?}");
            }
        }
        // an error answer
        let out = parse(&mut p, b"eg\0");
        assert_eq!(out, vec![Event::GloveError(b'g')]);
    }

    /// One corrupted byte (lost, doubled or zeroed) in a record stream never yields a record
    /// other than the glove's. (The protocol has no checksum: a lost and a doubled byte inside
    /// the same record keep its length and cannot be detected.)
    #[test]
    fn corrupted_streams_never_give_a_wrong_record() {
        let mut rng = rpq_hand::sim::generator(3);
        let mut e = Emulator::new(22, true);
        for trial in 0..300 {
            e.values = (0..22).map(|_| 1 + (rng.next_u64() % 255) as u8).collect();
            let good = e.values.clone();
            let mut bytes = Vec::new();
            for _ in 0..5 {
                bytes.extend(e.record(b'S'));
            }
            // drop, duplicate or zero one byte
            for _ in 0..(trial % 2) {
                let i = (rng.next_u64() as usize) % bytes.len();
                match rng.next_u64() % 3 {
                    0 => {
                        bytes.remove(i);
                    }
                    1 => bytes.insert(i, bytes[i]),
                    _ => bytes[i] = 0,
                }
            }
            let mut p = Parser::new(22, true, b'S');
            for ev in parse(&mut p, &bytes) {
                if let Event::Record { values, .. } = ev {
                    // a dropped/duplicated byte inside a record shifts it out of frame: such a
                    // frame must not pass
                    assert_eq!(values, good, "trial {trial}");
                }
            }
        }
    }
}
