//! `rpq_bag`: inspect rosbag2 MCAP bags, replay them into running nodes while recording the
//! nodes' outputs, and record topics.
//!
//! ```text
//! rpq_bag info BAG
//! rpq_bag replay INPUT --output DIR [--play TOPIC...] [--record TOPIC...] [--rate R]
//!                [--start-delay S] [--settle S] [--remap FROM:=TO]... [--wait-timeout S]
//!                [--clock [HZ]] [--ros-args ...]
//! rpq_bag record --output DIR TOPIC... [--duration S] [--wait-timeout S] [--ros-args ...]
//! rpq_bag reindex BAG
//! ```
//! Exit status: 0 done (also after SIGINT/SIGTERM, with what was recorded written), 1 error,
//! 2 bad usage.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use rpq_bag::live::{self, RecordOptions, ReplayOptions};
use rpq_bag::BagReader;
use rpq_ros::args::RosArgs;
use rpq_ros::env::RosEnv;
use rpq_ros::node::RosNode;
use rpq_ros::shutdown::Shutdown;

#[derive(Parser)]
#[command(
    name = "rpq_bag",
    version,
    about = "rosbag2 (MCAP) tools of rpq-ros",
    after_help = "replay and record accept ROS arguments after --ros-args (remaps, node name, \
                  log level) and read ROS_DOMAIN_ID and the other ROS environment variables."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print files, duration, message count and topics of a bag directory or .mcap file.
    Info {
        /// Bag directory or .mcap file.
        bag: PathBuf,
    },
    /// Play a bag into the running nodes with its recorded timing while recording their
    /// outputs into a new bag.
    Replay {
        /// Bag to play (directory or .mcap file).
        input: PathBuf,
        /// Bag directory to write the recorded topics to (must not exist).
        #[arg(long, short)]
        output: PathBuf,
        /// Topics of the input bag to play (default: all).
        #[arg(long, num_args = 1.., value_name = "TOPIC")]
        play: Vec<String>,
        /// Topics to record while playing (their type is taken from their publisher).
        #[arg(long, num_args = 1.., value_name = "TOPIC")]
        record: Vec<String>,
        /// Playback speed: 1 = recorded timing, 2 = twice as fast, 0 = as fast as possible.
        #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
        rate: f64,
        /// Seconds to wait after every peer matched, before the first message.
        #[arg(long, default_value = "0.5", value_parser = seconds)]
        start_delay: Duration,
        /// Seconds to keep recording after the last message.
        #[arg(long, default_value = "1.0", value_parser = seconds)]
        settle: Duration,
        /// Publish recorded topic FROM as TO.
        #[arg(long, value_name = "FROM:=TO", value_parser = remap)]
        remap: Vec<(String, String)>,
        /// Seconds to wait for subscribers of the played topics and publishers of the
        /// recorded ones.
        #[arg(long, default_value = "20", value_parser = seconds)]
        wait_timeout: Duration,
        /// Publish the bag's time on /clock at HZ (default 40), for nodes with use_sim_time
        /// (like `ros2 bag play --clock`).
        #[arg(long, value_name = "HZ", num_args = 0..=1, default_missing_value = "40")]
        clock: Option<f64>,
    },
    /// Recover a bag cut short (recorder killed, disk full): keep every intact chunk, rewrite
    /// the MCAP summary and footer (original kept as <file>.damaged) and metadata.yaml; for a
    /// complete bag only metadata.yaml is (re)written.
    Reindex {
        /// Bag directory (or its .mcap file).
        bag: PathBuf,
    },
    /// Record topics into a new bag until the duration passes or SIGINT/SIGTERM.
    Record {
        /// Topics to record (their type is taken from their publisher).
        #[arg(required = true, value_name = "TOPIC")]
        topics: Vec<String>,
        /// Bag directory to write (must not exist).
        #[arg(long, short)]
        output: PathBuf,
        /// Seconds to record, counted from when every topic matched (default: until a signal).
        #[arg(long, value_parser = seconds)]
        duration: Option<Duration>,
        /// Seconds to wait for a publisher of each topic.
        #[arg(long, default_value = "20", value_parser = seconds)]
        wait_timeout: Duration,
    },
}

fn seconds(text: &str) -> Result<Duration, String> {
    let s: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    Duration::try_from_secs_f64(s).map_err(|_| format!("{s} s is not a finite duration >= 0"))
}

fn remap(text: &str) -> Result<(String, String), String> {
    match text.split_once(":=") {
        Some((from, to)) if !from.is_empty() && !to.is_empty() => {
            Ok((from.to_string(), to.to_string()))
        }
        _ => Err(format!("`{text}` is not FROM:=TO")),
    }
}

fn nanos_as_seconds(ns: u64) -> String {
    format!("{}.{:09}s", ns / 1_000_000_000, ns % 1_000_000_000)
}

fn info(bag: &Path) -> Result<(), rpq_bag::BagError> {
    let reader = BagReader::open(bag)?;
    let files: Vec<String> = reader
        .files()
        .iter()
        .map(|f| {
            let size = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
            format!("{} ({size} bytes)", f.display())
        })
        .collect();
    println!("Files:             {}", files.join(", "));
    if let Some(meta) = reader.metadata() {
        println!("Storage id:        {}", meta.storage_identifier);
        println!("Metadata version:  {}", meta.version);
        println!("ROS Distro:        {}", meta.ros_distro);
    }
    println!(
        "Duration:          {}",
        nanos_as_seconds(reader.duration_ns())
    );
    if let (Some(start), Some(end)) = (reader.start_time(), reader.end_time()) {
        println!("Start:             {} (ns since epoch)", start);
        println!("End:               {} (ns since epoch)", end);
    }
    println!("Messages:          {}", reader.message_count());
    let width = reader
        .topics()
        .iter()
        .map(|t| t.name.len())
        .max()
        .unwrap_or(0);
    let type_width = reader
        .topics()
        .iter()
        .map(|t| t.type_name.len())
        .max()
        .unwrap_or(0);
    println!("Topic information:");
    for t in reader.topics() {
        println!(
            "  {:width$}  {:type_width$}  {:>8} msgs  {}",
            t.name, t.type_name, t.message_count, t.serialization_format
        );
    }
    if let Some(custom) = reader.metadata().and_then(|m| m.custom_data.as_ref()) {
        println!("Custom data:");
        for (k, v) in custom {
            println!("  {k}: {v}");
        }
    }
    Ok(())
}

fn print_reindex(report: &rpq_bag::ReindexReport) {
    let file = report.storage_file.display();
    if report.intact {
        println!("{file}: complete; metadata.yaml written");
    } else {
        println!(
            "{file}: recovered {} messages in {} chunks; dropped the last {} of {} bytes",
            report.messages, report.chunks, report.dropped_bytes, report.file_size
        );
        if let Some(reason) = &report.stop_reason {
            println!("  stopped because {reason}");
        }
        if let Some(kept) = &report.original_kept_as {
            println!("  original kept as {}", kept.display());
        }
    }
    for t in &report.metadata.topics_with_message_count {
        println!(
            "  {}  {}  {} msgs",
            t.topic_metadata.name, t.topic_metadata.type_name, t.message_count
        );
    }
}

type BoxError = Box<dyn std::error::Error>;

enum Live {
    Replay(ReplayOptions),
    Record(RecordOptions),
}

async fn live(what: Live, ros_args: RosArgs) -> Result<(), BoxError> {
    if let Live::Replay(options) = &what {
        // Bad input is reported before any socket opens.
        live::check_replay(options)?;
    }
    let shutdown = Shutdown::install()?;
    let env = RosEnv::from_env()?;
    let mut node = RosNode::new("rpq_bag", env, ros_args, &[])?;
    let report = match what {
        Live::Replay(options) => live::replay(&mut node, &options, &shutdown).await?,
        Live::Record(options) => live::record(&mut node, &options, &shutdown).await?,
    };
    if report.interrupted {
        eprintln!("rpq_bag: interrupted; the bag holds what was recorded until then");
    }
    Ok(())
}

fn main() -> ExitCode {
    let (ros_args, rest) = match RosArgs::from_env() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("rpq_bag: {e}");
            return ExitCode::from(2);
        }
    };
    let cli = Cli::parse_from(std::iter::once("rpq_bag".to_string()).chain(rest));
    let what = match cli.command {
        Command::Info { bag } => {
            return match info(&bag) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("rpq_bag: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Reindex { bag } => {
            return match rpq_bag::reindex(&bag) {
                Ok(report) => {
                    print_reindex(&report);
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("rpq_bag: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Replay {
            input,
            output,
            play,
            record,
            rate,
            start_delay,
            settle,
            remap,
            wait_timeout,
            clock,
        } => Live::Replay(ReplayOptions {
            input,
            output,
            play,
            remap,
            record,
            rate,
            start_delay,
            settle,
            wait_timeout,
            clock,
        }),
        Command::Record {
            topics,
            output,
            duration,
            wait_timeout,
        } => Live::Record(RecordOptions {
            output,
            topics,
            duration,
            wait_timeout,
        }),
    };
    let result: Result<(), BoxError> = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(BoxError::from)
        .and_then(|rt| rt.block_on(live(what, ros_args)));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rpq_bag: {e}");
            ExitCode::FAILURE
        }
    }
}
