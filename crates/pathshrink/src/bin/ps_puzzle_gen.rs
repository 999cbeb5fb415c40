//! Writes the block-puzzle scene (`meshes/puzzle/*.stl`, `config/puzzle.scene.yaml`) below
//! `--out-dir` (default: the current directory, i.e. run it from the repository root).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = match args.as_slice() {
        [] => ".".to_string(),
        [flag, d] if flag == "--out-dir" => d.clone(),
        _ => {
            eprintln!("usage: ps_puzzle_gen [--out-dir DIR]");
            return ExitCode::from(2);
        }
    };
    match rpq_pathshrink::puzzle::write(std::path::Path::new(&dir)) {
        Ok(files) => {
            for f in files {
                rpq_base::outln!("wrote {}", f.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ps_puzzle_gen: {e}");
            ExitCode::FAILURE
        }
    }
}
