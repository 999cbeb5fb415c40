//! `rpq_bag`: inspect rosbag2 MCAP bags (replay and record arrive with the DDS transport).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rpq_bag::BagReader;

#[derive(Parser)]
#[command(name = "rpq_bag", version, about = "rosbag2 (MCAP) tools of rpq-ros")]
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
}

fn seconds(ns: u64) -> String {
    format!("{}.{:09}s", ns / 1_000_000_000, ns % 1_000_000_000)
}

fn info(bag: &PathBuf) -> Result<(), rpq_bag::BagError> {
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
    println!("Duration:          {}", seconds(reader.duration_ns()));
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
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Info { bag } => info(bag),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rpq_bag: {e}");
            ExitCode::FAILURE
        }
    }
}
