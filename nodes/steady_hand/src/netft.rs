//! The ATI Net F/T "Raw Data Transfer" (RDT) protocol over UDP, the checks of the record
//! stream, and an emulated sensor for tests and demos.
//!
//! The protocol, as ATI documents it for the Net F/T (and as the Net F/T's public client
//! libraries implement it):
//!
//! * the host sends an 8-byte **request** to UDP port 49152 of the sensor:
//!   `u16 command_header = 0x1234`, `u16 command`, `u32 sample_count` (0 = infinite), big-endian;
//!   commands: `0x0000` stop streaming, `0x0002` start high-speed real-time streaming, `0x0003`
//!   start high-speed buffered streaming, `0x0004` start multi-unit streaming, `0x0041` reset
//!   the threshold latch, `0x0042` set the software bias;
//! * the sensor answers with 36-byte **records** to the requesting address and port:
//!   `u32 rdt_sequence` (+1 per RDT packet sent), `u32 ft_sequence` (+1 per internal F/T sample),
//!   `u32 status` (0 = healthy; any other value is the sensor's status code), then
//!   `i32 Fx, Fy, Fz, Tx, Ty, Tz` in counts, big-endian; force = counts / counts-per-force,
//!   torque = counts / counts-per-torque (the calibration's values, shown on the sensor's web
//!   page; 1,000,000 by default).
//!
//! [`StreamTracker`] classifies each received record by its `rdt_sequence` (wrapping
//! arithmetic): newer ones are accepted and the gap counted as lost packets; duplicates and
//! reordered (older) ones are dropped, so the published wrench never goes back in time; a record
//! arriving more than `late_after` after the previous one is counted late (it is still the
//! newest data); no record for `silence_timeout` makes the stream silent.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rpq_base::rng::SplitMix64;

/// The sensor's RDT port.
pub const RDT_PORT: u16 = 49152;
/// `command_header` of every request.
pub const REQUEST_HEADER: u16 = 0x1234;
/// Size of a request [bytes].
pub const REQUEST_SIZE: usize = 8;
/// Size of a record [bytes].
pub const RECORD_SIZE: usize = 36;

/// RDT commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `0x0000`: stop streaming.
    Stop,
    /// `0x0002`: start high-speed real-time streaming.
    StartRealtime,
    /// `0x0003`: start high-speed buffered streaming.
    StartBuffered,
    /// `0x0004`: start multi-unit streaming.
    StartMultiUnit,
    /// `0x0041`: reset the threshold latch.
    ResetThresholdLatch,
    /// `0x0042`: set the software bias (the sensor tares itself).
    SetSoftwareBias,
}

impl Command {
    /// The command's code.
    pub fn code(self) -> u16 {
        match self {
            Self::Stop => 0x0000,
            Self::StartRealtime => 0x0002,
            Self::StartBuffered => 0x0003,
            Self::StartMultiUnit => 0x0004,
            Self::ResetThresholdLatch => 0x0041,
            Self::SetSoftwareBias => 0x0042,
        }
    }

    /// The command of a code.
    pub fn from_code(code: u16) -> Option<Self> {
        [
            Self::Stop,
            Self::StartRealtime,
            Self::StartBuffered,
            Self::StartMultiUnit,
            Self::ResetThresholdLatch,
            Self::SetSoftwareBias,
        ]
        .into_iter()
        .find(|c| c.code() == code)
    }
}

/// A request from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The command.
    pub command: Command,
    /// Number of records to send (0: until stopped).
    pub sample_count: u32,
}

impl Request {
    /// The 8 bytes on the wire.
    pub fn encode(&self) -> [u8; REQUEST_SIZE] {
        let mut b = [0u8; REQUEST_SIZE];
        b[0..2].copy_from_slice(&REQUEST_HEADER.to_be_bytes());
        b[2..4].copy_from_slice(&self.command.code().to_be_bytes());
        b[4..8].copy_from_slice(&self.sample_count.to_be_bytes());
        b
    }

    /// Parses a request (exactly 8 bytes, header 0x1234, a known command).
    pub fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() != REQUEST_SIZE {
            return Err(format!(
                "request of {} bytes (need {REQUEST_SIZE})",
                b.len()
            ));
        }
        let header = u16::from_be_bytes([b[0], b[1]]);
        if header != REQUEST_HEADER {
            return Err(format!(
                "request header {header:#06x} (need {REQUEST_HEADER:#06x})"
            ));
        }
        let code = u16::from_be_bytes([b[2], b[3]]);
        let command = Command::from_code(code).ok_or(format!("unknown command {code:#06x}"))?;
        Ok(Self {
            command,
            sample_count: u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
        })
    }
}

/// A record from the sensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Packet counter.
    pub rdt_sequence: u32,
    /// Internal sample counter.
    pub ft_sequence: u32,
    /// Status code (0: healthy).
    pub status: u32,
    /// Fx, Fy, Fz, Tx, Ty, Tz in counts.
    pub counts: [i32; 6],
}

impl Record {
    /// The 36 bytes on the wire.
    pub fn encode(&self) -> [u8; RECORD_SIZE] {
        let mut b = [0u8; RECORD_SIZE];
        b[0..4].copy_from_slice(&self.rdt_sequence.to_be_bytes());
        b[4..8].copy_from_slice(&self.ft_sequence.to_be_bytes());
        b[8..12].copy_from_slice(&self.status.to_be_bytes());
        for (i, c) in self.counts.iter().enumerate() {
            b[12 + 4 * i..16 + 4 * i].copy_from_slice(&c.to_be_bytes());
        }
        b
    }

    /// Parses a record (exactly 36 bytes).
    pub fn decode(b: &[u8]) -> Result<Self, String> {
        if b.len() != RECORD_SIZE {
            return Err(format!("record of {} bytes (need {RECORD_SIZE})", b.len()));
        }
        let u = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let mut counts = [0i32; 6];
        for (k, c) in counts.iter_mut().enumerate() {
            *c = u(12 + 4 * k) as i32;
        }
        Ok(Self {
            rdt_sequence: u(0),
            ft_sequence: u(4),
            status: u(8),
            counts,
        })
    }

    /// Force [N] and torque [N m].
    pub fn wrench(&self, counts_per_force: f64, counts_per_torque: f64) -> [f64; 6] {
        let mut w = [0.0; 6];
        for (i, x) in w.iter_mut().enumerate() {
            let scale = if i < 3 {
                counts_per_force
            } else {
                counts_per_torque
            };
            *x = f64::from(self.counts[i]) / scale;
        }
        w
    }

    /// The counts of a wrench (rounded, saturating).
    pub fn counts_of(w: &[f64; 6], counts_per_force: f64, counts_per_torque: f64) -> [i32; 6] {
        let mut c = [0i32; 6];
        for (i, x) in c.iter_mut().enumerate() {
            let scale = if i < 3 {
                counts_per_force
            } else {
                counts_per_torque
            };
            *x = (w[i] * scale)
                .round()
                .clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32;
        }
        c
    }
}

/// What [`StreamTracker::accept`] made of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The newest record: publish it. `lost` packets were skipped before it; `late`: it came
    /// more than `late_after` after the previous one.
    Fresh {
        /// Packets missing between the previous record and this one.
        lost: u32,
        /// It arrived late.
        late: bool,
    },
    /// Same `rdt_sequence` as the last accepted one: dropped.
    Duplicate,
    /// Older than the last accepted one (reordered): dropped.
    OutOfOrder,
}

/// Counters of a record stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamCounts {
    /// Records accepted.
    pub received: u64,
    /// Packets missing from the sequence.
    pub lost: u64,
    /// Records dropped because they were older than the last accepted one.
    pub out_of_order: u64,
    /// Records dropped as repeats.
    pub duplicates: u64,
    /// Accepted records that came late.
    pub late: u64,
    /// Accepted records with a non-zero status word.
    pub bad_status: u64,
}

/// Checks of the record stream (see the module docs).
#[derive(Debug, Clone)]
pub struct StreamTracker {
    late_after: f64,
    last: Option<(u32, f64)>,
    counts: StreamCounts,
}

impl StreamTracker {
    /// A tracker counting records later than `late_after` seconds after the previous one.
    pub fn new(late_after: f64) -> Self {
        Self {
            late_after,
            last: None,
            counts: StreamCounts::default(),
        }
    }

    /// The counters.
    pub fn counts(&self) -> &StreamCounts {
        &self.counts
    }

    /// Seconds since the last accepted record at `now` (`None` before the first).
    pub fn silence(&self, now: f64) -> Option<f64> {
        self.last.map(|(_, t)| now - t)
    }

    /// Forgets the sequence (after a restart of the stream the sensor may count from anywhere).
    pub fn restart(&mut self) {
        self.last = None;
    }

    /// Classifies a record received at `now` [s].
    pub fn accept(&mut self, r: &Record, now: f64) -> Verdict {
        let verdict = match self.last {
            None => Verdict::Fresh {
                lost: 0,
                late: false,
            },
            Some((seq, t)) => {
                let d = r.rdt_sequence.wrapping_sub(seq);
                if d == 0 {
                    Verdict::Duplicate
                } else if d >= 1 << 31 {
                    Verdict::OutOfOrder
                } else {
                    Verdict::Fresh {
                        lost: d - 1,
                        late: now - t > self.late_after,
                    }
                }
            }
        };
        match verdict {
            Verdict::Fresh { lost, late } => {
                self.last = Some((r.rdt_sequence, now));
                self.counts.received += 1;
                self.counts.lost += u64::from(lost);
                self.counts.late += u64::from(late);
                self.counts.bad_status += u64::from(r.status != 0);
            }
            Verdict::Duplicate => self.counts.duplicates += 1,
            Verdict::OutOfOrder => self.counts.out_of_order += 1,
        }
        verdict
    }
}

/// Faults and signal of an [`Emulator`].
#[derive(Debug, Clone, PartialEq)]
pub struct EmulatorConfig {
    /// Records per second.
    pub rate: f64,
    /// The wrench it measures [N, N m]: constant part.
    pub wrench: [f64; 6],
    /// Amplitude of a sinusoid on Fx [N] (0: none) and its frequency [Hz].
    pub wobble: (f64, f64),
    /// Counts per N and per N m.
    pub counts_per_force: f64,
    /// Counts per N m.
    pub counts_per_torque: f64,
    /// Probability that a packet is not sent (lost).
    pub loss: f64,
    /// Probability that a packet is held back and sent after the next one (reordered).
    pub reorder: f64,
    /// Probability that the stream pauses for `late_delay` before a packet (late).
    pub late: f64,
    /// The pause of a late packet [s].
    pub late_delay: f64,
    /// Stop answering this many seconds after streaming first started, for good (`None`: never).
    pub silent_after: Option<f64>,
    /// Status word sent (0: healthy).
    pub status: u32,
    /// Seed of the faults.
    pub seed: u64,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        Self {
            rate: 1000.0,
            wrench: [0.0; 6],
            wobble: (0.0, 0.0),
            counts_per_force: 1e6,
            counts_per_torque: 1e6,
            loss: 0.0,
            reorder: 0.0,
            late: 0.0,
            late_delay: 0.02,
            silent_after: None,
            status: 0,
            seed: 1,
        }
    }
}

/// What an emulator did (for tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EmulatorReport {
    /// Requests received.
    pub requests: u64,
    /// Packets sent.
    pub sent: u64,
    /// Packets dropped on purpose.
    pub dropped: u64,
    /// Packets sent out of order on purpose.
    pub reordered: u64,
    /// Pauses before late packets.
    pub late: u64,
    /// Last `rdt_sequence` produced.
    pub last_sequence: u32,
}

/// An emulated Net F/T on a UDP socket: answers start/stop requests, streams records with the
/// configured faults. Runs on its own thread until dropped or [`Emulator::stop`].
#[derive(Debug)]
pub struct Emulator {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<EmulatorReport>>,
}

impl Emulator {
    /// Binds `bind` (e.g. `127.0.0.1:0`) and starts serving.
    pub fn start(bind: &str, cfg: EmulatorConfig) -> std::io::Result<Self> {
        let sock = UdpSocket::bind(bind)?;
        sock.set_nonblocking(true)?;
        let addr = sock.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || serve(sock, cfg, &flag));
        Ok(Self {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving; returns what it did.
    pub fn stop(mut self) -> EmulatorReport {
        self.stop.store(true, Ordering::SeqCst);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(sock: UdpSocket, cfg: EmulatorConfig, stop: &AtomicBool) -> EmulatorReport {
    let mut rng = SplitMix64::new(cfg.seed);
    let mut report = EmulatorReport::default();
    // the requesting address, and how many records it asked for and got
    let mut client: Option<(SocketAddr, u32, u32)> = None;
    let mut rdt: u32 = 0;
    let mut ft: u32 = 0;
    let mut held: Option<[u8; RECORD_SIZE]> = None;
    let period = Duration::from_secs_f64(1.0 / cfg.rate);
    let mut next = Instant::now();
    let mut buf = [0u8; 64];
    let t0 = Instant::now();
    // when streaming first started: a sensor that falls silent stays silent
    let mut first_start: Option<Instant> = None;
    while !stop.load(Ordering::SeqCst) {
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            if let Ok(req) = Request::decode(&buf[..n]) {
                report.requests += 1;
                match req.command {
                    Command::Stop => client = None,
                    Command::StartRealtime | Command::StartBuffered | Command::StartMultiUnit => {
                        client = Some((from, req.sample_count, 0));
                        first_start.get_or_insert_with(Instant::now);
                        next = Instant::now();
                    }
                    Command::ResetThresholdLatch | Command::SetSoftwareBias => {}
                }
            }
        }
        let silent = match (cfg.silent_after, first_start) {
            (Some(s), Some(t)) => t.elapsed().as_secs_f64() > s,
            _ => false,
        };
        let Some((to, count, sent)) = client.as_mut().filter(|_| !silent) else {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        };
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(1)));
            continue;
        }
        next += period;
        ft = ft.wrapping_add(1);
        rdt = rdt.wrapping_add(1);
        report.last_sequence = rdt;
        let t = t0.elapsed().as_secs_f64();
        let mut w = cfg.wrench;
        w[0] += cfg.wobble.0 * (std::f64::consts::TAU * cfg.wobble.1 * t).sin();
        let rec = Record {
            rdt_sequence: rdt,
            ft_sequence: ft,
            status: cfg.status,
            counts: Record::counts_of(&w, cfg.counts_per_force, cfg.counts_per_torque),
        }
        .encode();
        if rng.uniform() < cfg.loss {
            report.dropped += 1;
        } else if held.is_none() && rng.uniform() < cfg.reorder {
            held = Some(rec);
            report.reordered += 1;
        } else {
            if rng.uniform() < cfg.late {
                std::thread::sleep(Duration::from_secs_f64(cfg.late_delay));
                next = Instant::now() + period;
                report.late += 1;
            }
            if sock.send_to(&rec, *to).is_ok() {
                report.sent += 1;
            }
            if let Some(h) = held.take() {
                if sock.send_to(&h, *to).is_ok() {
                    report.sent += 1;
                }
            }
        }
        *sent += 1;
        if *count != 0 && *sent >= *count {
            client = None;
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_records_round_trip_big_endian() {
        let r = Request {
            command: Command::StartRealtime,
            sample_count: 0,
        };
        assert_eq!(r.encode(), [0x12, 0x34, 0x00, 0x02, 0, 0, 0, 0]);
        assert_eq!(Request::decode(&r.encode()), Ok(r));
        let bias = Request {
            command: Command::SetSoftwareBias,
            sample_count: 1,
        };
        assert_eq!(bias.encode(), [0x12, 0x34, 0x00, 0x42, 0, 0, 0, 1]);
        assert!(Request::decode(&[0x12, 0x35, 0, 2, 0, 0, 0, 0]).is_err());
        assert!(Request::decode(&[0x12, 0x34, 0, 9, 0, 0, 0, 0]).is_err());
        assert!(Request::decode(&[0x12, 0x34, 0, 2]).is_err());
        let rec = Record {
            rdt_sequence: 0x0102_0304,
            ft_sequence: 7,
            status: 0x8000_0000,
            counts: [1_500_000, -2_000_000, 3, -4, 250_000, i32::MIN],
        };
        let b = rec.encode();
        assert_eq!(&b[0..4], &[1, 2, 3, 4]);
        assert_eq!(&b[12..16], &1_500_000i32.to_be_bytes());
        assert_eq!(Record::decode(&b), Ok(rec));
        assert!(Record::decode(&b[..35]).is_err());
        let w = rec.wrench(1e6, 1e6);
        assert_eq!((w[0], w[1], w[4]), (1.5, -2.0, 0.25));
        assert_eq!(
            Record::counts_of(&[1.5, -2.0, 0.0, 0.0, 0.25, 0.0], 1e6, 1e6)[4],
            250_000
        );
    }

    #[test]
    fn tracker_counts_loss_reorder_duplicates_and_lateness() {
        let mut t = StreamTracker::new(0.01);
        let rec = |s: u32| Record {
            rdt_sequence: s,
            ft_sequence: s,
            status: 0,
            counts: [0; 6],
        };
        assert_eq!(
            t.accept(&rec(10), 0.0),
            Verdict::Fresh {
                lost: 0,
                late: false
            }
        );
        assert_eq!(
            t.accept(&rec(11), 0.001),
            Verdict::Fresh {
                lost: 0,
                late: false
            }
        );
        assert_eq!(
            t.accept(&rec(14), 0.002),
            Verdict::Fresh {
                lost: 2,
                late: false
            }
        );
        assert_eq!(t.accept(&rec(13), 0.003), Verdict::OutOfOrder);
        assert_eq!(t.accept(&rec(14), 0.004), Verdict::Duplicate);
        assert_eq!(
            t.accept(&rec(15), 0.030),
            Verdict::Fresh {
                lost: 0,
                late: true
            }
        );
        // the counter wraps
        let mut w = StreamTracker::new(0.01);
        w.accept(&rec(u32::MAX), 0.0);
        assert_eq!(
            w.accept(&rec(1), 0.001),
            Verdict::Fresh {
                lost: 1,
                late: false
            }
        );
        assert_eq!(w.accept(&rec(u32::MAX), 0.002), Verdict::OutOfOrder);
        let c = t.counts();
        assert_eq!(
            (c.received, c.lost, c.out_of_order, c.duplicates, c.late),
            (4, 2, 1, 1, 1)
        );
        assert!((t.silence(0.05).unwrap() - 0.02).abs() < 1e-12);
    }

    /// The emulator on loopback: start, stream with faults, stop; the tracker sees the faults.
    #[test]
    fn emulator_streams_with_the_configured_faults() {
        let emu = Emulator::start(
            "127.0.0.1:0",
            EmulatorConfig {
                rate: 2000.0,
                wrench: [1.0, -2.0, 3.0, 0.1, -0.2, 0.3],
                loss: 0.05,
                reorder: 0.05,
                seed: 7,
                ..EmulatorConfig::default()
            },
        )
        .unwrap();
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let start = Request {
            command: Command::StartRealtime,
            sample_count: 400,
        };
        sock.send_to(&start.encode(), emu.local_addr()).unwrap();
        let mut tracker = StreamTracker::new(1.0);
        let mut buf = [0u8; 64];
        let t0 = Instant::now();
        let mut last = None;
        while let Ok((n, _)) = sock.recv_from(&mut buf) {
            let r = Record::decode(&buf[..n]).unwrap();
            if let Verdict::Fresh { .. } = tracker.accept(&r, t0.elapsed().as_secs_f64()) {
                last = Some(r);
            }
        }
        let report = emu.stop();
        let c = tracker.counts();
        assert_eq!(report.requests, 1);
        let w = last.unwrap().wrench(1e6, 1e6);
        assert_eq!(w, [1.0, -2.0, 3.0, 0.1, -0.2, 0.3]);
        // every packet is accounted for: accepted + dropped-as-old + lost = produced
        assert_eq!(
            c.received + c.out_of_order + c.duplicates,
            report.sent,
            "{c:?} {report:?}"
        );
        assert!(
            c.lost >= report.dropped && c.out_of_order > 0 && c.lost > 0,
            "{c:?} {report:?}"
        );
        assert_eq!(u64::from(report.last_sequence), 400);
    }
}
