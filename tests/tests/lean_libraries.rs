//! The capability libraries build without plotting, command-line, progress-bar or peer
//! dependencies (issue 17, "lean library"): `cargo tree` of each, default features, normal
//! dependencies only, names none of them. Their tools sit behind the `tools` feature, which
//! must bring them back (so the check does look at the right names).

use std::process::Command;

use rpq_tests::repo_root;

/// Crates a library of the suite must not pull in by default.
const TOOL_ONLY: [&str; 6] = [
    "plotters",
    "rpq_plot",
    "clap",
    "indicatif",
    "parry3d-f64",
    "rpq_scene_tools",
];

/// The package names in the normal-dependency tree of `package` with `features`.
fn tree(package: &str, features: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut c = Command::new(cargo);
    c.current_dir(repo_root()).args([
        "tree",
        "--offline",
        "--locked",
        "-e",
        "normal",
        "--prefix",
        "none",
        "--format",
        "{p}",
        "-p",
        package,
    ]);
    if !features.is_empty() {
        c.arg("--features").arg(features.join(","));
    }
    let out = c.output().expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn tool_only_in(names: &[String]) -> Vec<&'static str> {
    TOOL_ONLY
        .into_iter()
        .filter(|t| names.iter().any(|n| n == t))
        .collect()
}

#[test]
fn libraries_build_without_tool_dependencies() {
    for lib in [
        "rpq_base",
        "rpq_kinematics",
        "rpq_proximity",
        "rpq_scene",
        "rpq_virtual_fixtures",
        "rpq_hand",
        "rpq_pathshrink",
        "rpq_surgery",
    ] {
        let names = tree(lib, &[]);
        assert!(names.iter().any(|n| n == lib), "{lib}: {names:?}");
        assert_eq!(
            tool_only_in(&names),
            Vec::<&str>::new(),
            "{lib} pulls in tool-only crates by default"
        );
    }
}

#[test]
fn the_tools_feature_brings_the_tool_dependencies() {
    for (lib, want) in [
        (
            "rpq_virtual_fixtures",
            &["rpq_plot", "clap", "indicatif"][..],
        ),
        ("rpq_hand", &["rpq_plot", "clap", "indicatif"][..]),
        ("rpq_pathshrink", &["rpq_plot"][..]),
        ("rpq_surgery", &["rpq_plot", "clap"][..]),
    ] {
        let names = tree(lib, &["tools"]);
        for w in want {
            assert!(
                names.iter().any(|n| n == w),
                "{lib} with `tools`: no {w} in {names:?}"
            );
        }
    }
}
