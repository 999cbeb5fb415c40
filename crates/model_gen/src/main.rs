//! `rpq_model_gen`: writes (or checks) the suite's generated robot model files.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    version,
    about = "Generate the suite's robot models (URDF + binary STL meshes)"
)]
struct Cli {
    #[command(subcommand)]
    model: Model,
}

#[derive(Subcommand)]
enum Model {
    /// Stäubli RX60B-like arm: urdf/rx60b.urdf and meshes/rx60b/<link>.stl
    Rx60 {
        /// Output root (the repository root); files go to urdf/ and meshes/ below it.
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
        /// Do not write; exit with failure if any file is missing or differs.
        #[arg(long)]
        check: bool,
    },
    /// HIT/DLR four-finger hand: urdf/hit_dlr_hand.urdf and meshes/hit_dlr_hand/<link>.stl
    HitDlr {
        /// Output root (the repository root).
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
        /// Do not write; exit with failure if any file is missing or differs.
        #[arg(long)]
        check: bool,
    },
}

fn main() -> Result<ExitCode, rpq_model_gen::Error> {
    let (out_dir, check, files) = match Cli::parse().model {
        Model::Rx60 { out_dir, check } => (out_dir, check, rpq_model_gen::rx60_files()?),
        Model::HitDlr { out_dir, check } => (out_dir, check, rpq_model_gen::hit_dlr_files()?),
    };
    if check {
        let stale = rpq_model_gen::stale_files(&files, &out_dir);
        for p in &stale {
            eprintln!("stale or missing: {}", out_dir.join(p).display());
        }
        if !stale.is_empty() {
            eprintln!("regenerate with: cargo run -p rpq_model_gen -- rx60 --out-dir .");
            return Ok(ExitCode::FAILURE);
        }
        println!("{} files up to date", files.len());
        return Ok(ExitCode::SUCCESS);
    }
    rpq_model_gen::write_files(&files, &out_dir)?;
    for f in &files {
        println!(
            "wrote {} ({} bytes)",
            out_dir.join(&f.path).display(),
            f.bytes.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}
