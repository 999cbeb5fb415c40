//! Finding packages and executables: the colcon install space first, then this workspace.
//!
//! Resolution order for `<node pkg exec>`:
//! 1. every prefix of `AMENT_PREFIX_PATH` whose ament index lists `pkg`
//!    (`<prefix>/share/ament_index/resource_index/packages/<pkg>`): `<prefix>/lib/<pkg>/<exec>`;
//! 2. the cargo target directory, i.e. the directory holding the running `rpq_launch`:
//!    `<dir>/<exec>`, provided `exec` is a binary of the workspace package `pkg` (or, when the
//!    workspace sources are not around, whenever the file exists).
//!
//! `$(find-pkg-share pkg)` is `<prefix>/share/<pkg>` from the ament index, else the package's
//! directory in the source tree. For a Cargo package whose `[package.metadata.ros]
//! install_to_share` entries all live in one directory outside the package (for example
//! `["../../launch", "../../config"]`), that directory plays the role of the share directory,
//! so `$(find-pkg-share pkg)/launch/x.launch.xml` finds the same file before and after
//! `colcon build`. `$(find-pkg-prefix pkg)` exists only in an install space.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rpq_ros::robot_description::{ament_package_prefix, ament_prefixes};

use rpq_base::file::{read_to_string_bounded, FileError};

use crate::error::LaunchError;
use crate::limits::{MAX_LAUNCH_FILE_BYTES, MAX_PARAMETER_FILE_BYTES};
use crate::resolve::{Host, NotFound};

/// A package found in the source tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcePackage {
    /// Directory holding its `package.xml` / `Cargo.toml`.
    pub dir: PathBuf,
    /// What `$(find-pkg-share)` returns for it.
    pub share_dir: PathBuf,
    /// Binaries of the Cargo package (empty when it is not a Cargo package).
    pub binaries: BTreeSet<String>,
}

/// Packages of a source tree by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceTree {
    /// Root of the scan.
    pub root: PathBuf,
    /// Packages by name.
    pub packages: BTreeMap<String, SourcePackage>,
}

const SKIP_DIRS: &[&str] = &[
    "target",
    "build",
    "install",
    "log",
    "node_modules",
    "__pycache__",
];
const MAX_DEPTH: usize = 4;

impl SourceTree {
    /// Scans `root` (a few levels deep) for `package.xml` and `Cargo.toml` packages, skipping
    /// hidden, build and install directories and anything marked `COLCON_IGNORE`.
    pub fn scan(root: &Path) -> SourceTree {
        let mut tree = SourceTree {
            root: root.to_path_buf(),
            packages: BTreeMap::new(),
        };
        tree.visit(root, 0);
        tree
    }

    fn visit(&mut self, dir: &Path, depth: usize) {
        if dir.join("COLCON_IGNORE").exists() {
            return;
        }
        let xml_name = fs::read_to_string(dir.join("package.xml"))
            .ok()
            .and_then(|t| package_xml_name(&t));
        let cargo = fs::read_to_string(dir.join("Cargo.toml"))
            .ok()
            .and_then(|t| cargo_package(&t, dir));
        match (xml_name, cargo) {
            (_, Some(c)) => {
                self.packages.insert(
                    c.name,
                    SourcePackage {
                        dir: dir.to_path_buf(),
                        share_dir: c.share_dir,
                        binaries: c.binaries,
                    },
                );
            }
            (Some(name), None) => {
                self.packages.insert(
                    name,
                    SourcePackage {
                        dir: dir.to_path_buf(),
                        share_dir: dir.to_path_buf(),
                        binaries: BTreeSet::new(),
                    },
                );
            }
            (None, None) => {}
        }
        if depth >= MAX_DEPTH {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut subdirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .map(|e| e.path())
            .filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or(".");
                !name.starts_with('.') && !SKIP_DIRS.contains(&name)
            })
            .collect();
        subdirs.sort();
        for sub in subdirs {
            self.visit(&sub, depth + 1);
        }
    }
}

/// `<package><name>` of a package.xml.
pub fn package_xml_name(text: &str) -> Option<String> {
    let doc = roxmltree::Document::parse(text).ok()?;
    let root = doc.root_element();
    if root.tag_name().name() != "package" {
        return None;
    }
    root.children()
        .find(|c| c.has_tag_name("name"))
        .and_then(|c| c.text())
        .map(|t| t.trim().to_string())
}

/// What a Cargo.toml says about its package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoPackage {
    /// `[package] name`
    pub name: String,
    /// Binary targets.
    pub binaries: BTreeSet<String>,
    /// Source-tree stand-in for `share/<name>`.
    pub share_dir: PathBuf,
}

/// Reads name, binaries and share directory of the Cargo package in `dir`.
pub fn cargo_package(text: &str, dir: &Path) -> Option<CargoPackage> {
    let doc: toml_edit::DocumentMut = text.parse().ok()?;
    let package = doc.get("package")?;
    let name = package.get("name")?.as_str()?.to_string();
    let mut binaries = BTreeSet::new();
    let autobins = package
        .get("autobins")
        .and_then(|v| v.as_bool())
        .unwrap_or(true);
    if let Some(bins) = doc.get("bin").and_then(|b| b.as_array_of_tables()) {
        for bin in bins.iter() {
            if let Some(n) = bin.get("name").and_then(|n| n.as_str()) {
                binaries.insert(n.to_string());
            }
        }
    }
    if autobins {
        if dir.join("src/main.rs").is_file() {
            binaries.insert(name.clone());
        }
        if let Ok(entries) = fs::read_dir(dir.join("src/bin")) {
            for e in entries.filter_map(Result::ok) {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "rs") {
                    if let Some(stem) = p.file_stem().and_then(|s| s.to_str()) {
                        binaries.insert(stem.to_string());
                    }
                } else if p.join("main.rs").is_file() {
                    if let Some(n) = p.file_name().and_then(|s| s.to_str()) {
                        binaries.insert(n.to_string());
                    }
                }
            }
        }
    }
    let share_entries: Vec<String> = package
        .get("metadata")
        .and_then(|m| m.get("ros"))
        .and_then(|r| r.get("install_to_share"))
        .and_then(|s| s.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let parents: BTreeSet<PathBuf> = share_entries
        .iter()
        .map(|e| {
            let p = dir.join(e);
            let p = p.canonicalize().unwrap_or(p);
            p.parent().map(Path::to_path_buf).unwrap_or_default()
        })
        .collect();
    let share_dir = match parents.len() {
        1 => parents
            .into_iter()
            .next()
            .unwrap_or_else(|| dir.to_path_buf()),
        _ => dir.to_path_buf(),
    };
    Some(CargoPackage {
        name,
        binaries,
        share_dir,
    })
}

fn is_executable_file(p: &Path) -> bool {
    fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The real world: `AMENT_PREFIX_PATH`, the directory of the running binary and the
/// workspace sources this binary was built from.
#[derive(Debug)]
pub struct SystemHost {
    ament_prefixes: Vec<PathBuf>,
    exe_dir: Option<PathBuf>,
    source_root: Option<PathBuf>,
    source: OnceLock<Option<SourceTree>>,
}

impl SystemHost {
    /// Builds the host from an `AMENT_PREFIX_PATH` value, the directory holding workspace
    /// binaries and the workspace source root (each optional).
    pub fn new(
        ament_prefix_path: Option<&str>,
        exe_dir: Option<PathBuf>,
        source_root: Option<PathBuf>,
    ) -> Self {
        SystemHost {
            ament_prefixes: ament_prefixes(ament_prefix_path.unwrap_or("")),
            exe_dir,
            source_root: source_root.filter(|r| r.is_dir()),
            source: OnceLock::new(),
        }
    }

    /// The host for this process: `AMENT_PREFIX_PATH` from `env`, the directory of the running
    /// executable, and the workspace root this crate was compiled in (if it still exists).
    pub fn from_environment(env: &BTreeMap<String, String>) -> Self {
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf));
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = root.canonicalize().unwrap_or(root);
        SystemHost::new(
            env.get("AMENT_PREFIX_PATH").map(String::as_str),
            exe_dir,
            Some(root),
        )
    }

    /// The scanned source tree (scanned on first use).
    pub fn source_tree(&self) -> Option<&SourceTree> {
        self.source
            .get_or_init(|| self.source_root.as_deref().map(SourceTree::scan))
            .as_ref()
    }

    fn ament_prefix(&self, package: &str, searched: &mut Vec<String>) -> Option<&PathBuf> {
        if let Some(prefix) = ament_package_prefix(&self.ament_prefixes, package) {
            return Some(prefix);
        }
        if self.ament_prefixes.is_empty() {
            searched.push("AMENT_PREFIX_PATH (unset or empty)".to_string());
        } else {
            searched.push(format!(
                "ament index in AMENT_PREFIX_PATH ({}): no package '{package}'",
                self.ament_prefixes
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(":")
            ));
        }
        None
    }

    /// Finds a launch file `file` of `package` (`rpq_launch <pkg> <file>`): a path relative to
    /// the share directory, or a unique file of that name anywhere below it.
    pub fn package_launch_file(&self, package: &str, file: &str) -> Result<PathBuf, LaunchError> {
        let share = self
            .package_share(package)
            .map_err(|nf| LaunchError::PackageNotFound {
                package: package.to_string(),
                searched: nf.searched,
            })?;
        let direct = share.join(file);
        if direct.is_file() {
            return Ok(direct);
        }
        let mut found = Vec::new();
        find_named(&share, file, 0, &mut found);
        match found.len() {
            0 => Err(LaunchError::BadLaunchFile {
                file: file.to_string(),
                reason: format!("not found: no file of that name below {}", share.display()),
            }),
            1 => Ok(found.remove(0)),
            _ => Err(LaunchError::BadLaunchFile {
                file: file.to_string(),
                reason: format!(
                    "several files of that name below {}: {}",
                    share.display(),
                    found
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }
}

fn find_named(dir: &Path, name: &str, depth: usize, found: &mut Vec<PathBuf>) {
    if depth > 6 {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let p = e.path();
        let fname = e.file_name().to_string_lossy().to_string();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if !fname.starts_with('.') && !SKIP_DIRS.contains(&fname.as_str()) {
                find_named(&p, name, depth + 1, found);
            }
        } else if fname == name {
            found.push(p);
        }
    }
}

impl Host for SystemHost {
    /// Only a regular file of at most [`MAX_LAUNCH_FILE_BYTES`] is read: a device, FIFO or
    /// file of `/proc` fails at once instead of blocking or filling memory.
    fn read_file(&self, path: &Path) -> std::io::Result<String> {
        read_to_string_bounded(path, MAX_LAUNCH_FILE_BYTES).map_err(FileError::into_io)
    }

    /// A regular file (after symlinks), not under `/proc`, `/sys` or `/dev`, of at most
    /// [`MAX_PARAMETER_FILE_BYTES`]; its content is not read (the node reads it).
    fn parameter_file(&self, path: &Path) -> Result<(), String> {
        let meta = fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "parameter file not found".to_string(),
            _ => format!("parameter file cannot be used: {e}"),
        })?;
        if !meta.is_file() {
            return Err("parameter file is not a regular file".to_string());
        }
        let canonical = path.canonicalize().map_err(|e| e.to_string())?;
        if ["/proc", "/sys", "/dev"]
            .iter()
            .any(|root| canonical.starts_with(root))
        {
            return Err("parameter files under /proc, /sys and /dev are refused".to_string());
        }
        if meta.len() > MAX_PARAMETER_FILE_BYTES {
            return Err(format!(
                "parameter file larger than {} MiB (rpq_launch's limit)",
                MAX_PARAMETER_FILE_BYTES >> 20
            ));
        }
        Ok(())
    }

    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }

    fn package_share(&self, package: &str) -> Result<PathBuf, NotFound> {
        let mut searched = Vec::new();
        if let Some(prefix) = self.ament_prefix(package, &mut searched) {
            return Ok(prefix.join("share").join(package));
        }
        match self.source_tree() {
            Some(tree) => {
                if let Some(p) = tree.packages.get(package) {
                    return Ok(p.share_dir.clone());
                }
                searched.push(format!(
                    "workspace sources {}: no package.xml/Cargo.toml named '{package}'",
                    tree.root.display()
                ));
            }
            None => searched.push("workspace sources (not available)".to_string()),
        }
        Err(NotFound { searched })
    }

    fn package_prefix(&self, package: &str) -> Result<PathBuf, NotFound> {
        let mut searched = Vec::new();
        match self.ament_prefix(package, &mut searched) {
            Some(prefix) => Ok(prefix.clone()),
            None => {
                searched.push(
                    "(a source-tree package has no install prefix: run colcon build and source \
                     install/setup.bash, or use $(find-pkg-share))"
                        .to_string(),
                );
                Err(NotFound { searched })
            }
        }
    }

    fn executable(&self, package: &str, executable: &str) -> Result<PathBuf, NotFound> {
        let mut searched = Vec::new();
        if let Some(prefix) = self.ament_prefix(package, &mut searched) {
            let candidate = prefix.join("lib").join(package).join(executable);
            if is_executable_file(&candidate) {
                return Ok(candidate);
            }
            searched.push(format!("{} (no such executable file)", candidate.display()));
        }
        let Some(exe_dir) = &self.exe_dir else {
            searched.push("cargo target directory (unknown)".to_string());
            return Err(NotFound { searched });
        };
        let candidate = exe_dir.join(executable);
        match self.source_tree() {
            Some(tree) => match tree.packages.get(package) {
                Some(p) if p.binaries.contains(executable) => {
                    if is_executable_file(&candidate) {
                        return Ok(candidate);
                    }
                    searched.push(format!(
                        "{} (not built: run cargo build -p {package})",
                        candidate.display()
                    ));
                }
                Some(p) => searched.push(format!(
                    "cargo target directory {}: '{package}' has no binary '{executable}' \
                     (its binaries: {})",
                    exe_dir.display(),
                    if p.binaries.is_empty() {
                        "none".to_string()
                    } else {
                        p.binaries.iter().cloned().collect::<Vec<_>>().join(", ")
                    }
                )),
                None => searched.push(format!(
                    "cargo target directory {}: '{package}' is not a package of the workspace {}",
                    exe_dir.display(),
                    tree.root.display()
                )),
            },
            None => {
                if is_executable_file(&candidate) {
                    return Ok(candidate);
                }
                searched.push(format!("{} (no such executable file)", candidate.display()));
            }
        }
        Err(NotFound { searched })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    fn write_exe(path: &Path) {
        write(path, "#!/bin/sh\n");
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// A workspace with a Cargo package, an ament-only package and an install space.
    fn world() -> (tempfile::TempDir, SystemHost) {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        write(
            &ws.join("nodes/sim/Cargo.toml"),
            "[package]\nname = \"sim_pkg\"\n\n[[bin]]\nname = \"extra\"\npath = \"src/extra.rs\"\n\n\
             [package.metadata.ros]\ninstall_to_share = [\"../../launch\", \"../../config\"]\n",
        );
        write(&ws.join("nodes/sim/src/main.rs"), "fn main() {}");
        write(&ws.join("nodes/sim/src/bin/tool.rs"), "fn main() {}");
        write(&ws.join("launch/sim.launch.xml"), "<launch/>");
        write(&ws.join("config/sim.yaml"), "");
        write(
            &ws.join("msg/package.xml"),
            "<?xml version=\"1.0\"?><package format=\"3\"><name>my_msgs</name></package>",
        );
        write(
            &ws.join("target/debug/ignored/package.xml"),
            "<package><name>bogus</name></package>",
        );
        write(&ws.join("skipme/COLCON_IGNORE"), "");
        write(
            &ws.join("skipme/package.xml"),
            "<package><name>ignored_pkg</name></package>",
        );
        let target = ws.join("target/debug");
        write_exe(&target.join("sim_pkg"));
        write_exe(&target.join("tool"));
        write_exe(&target.join("stray"));
        let install = tmp.path().join("install");
        write(
            &install.join("share/ament_index/resource_index/packages/inst_pkg"),
            "",
        );
        write_exe(&install.join("lib/inst_pkg/runner"));
        write(&install.join("lib/inst_pkg/not_exec"), "data");
        write(
            &install.join("share/ament_index/resource_index/packages/sim_pkg"),
            "",
        );
        write_exe(&install.join("lib/sim_pkg/sim_pkg"));
        let ament = format!("{}:/nonexistent", install.display());
        let host = SystemHost::new(Some(&ament), Some(target), Some(ws));
        (tmp, host)
    }

    #[test]
    fn scans_packages_and_binaries() {
        let (tmp, host) = world();
        let tree = host.source_tree().unwrap();
        let names: Vec<_> = tree.packages.keys().cloned().collect();
        assert_eq!(names, vec!["my_msgs", "sim_pkg"]);
        let sim = &tree.packages["sim_pkg"];
        assert_eq!(
            sim.binaries.iter().cloned().collect::<Vec<_>>(),
            vec!["extra", "sim_pkg", "tool"]
        );
        assert_eq!(sim.share_dir, tmp.path().join("ws").canonicalize().unwrap());
    }

    #[test]
    fn install_space_comes_first() {
        let (tmp, host) = world();
        let install = tmp.path().join("install");
        assert_eq!(
            host.executable("sim_pkg", "sim_pkg").unwrap(),
            install.join("lib/sim_pkg/sim_pkg")
        );
        assert_eq!(
            host.executable("inst_pkg", "runner").unwrap(),
            install.join("lib/inst_pkg/runner")
        );
        assert_eq!(
            host.package_share("sim_pkg").unwrap(),
            install.join("share/sim_pkg")
        );
        assert_eq!(host.package_prefix("inst_pkg").unwrap(), install);
    }

    #[test]
    fn target_directory_for_workspace_binaries() {
        let (tmp, host) = world();
        let target = tmp.path().join("ws/target/debug");
        // not installed: found in the target directory as a binary of the package
        assert_eq!(
            host.executable("sim_pkg", "tool").unwrap(),
            target.join("tool")
        );
        // share of a package only in the sources
        assert_eq!(
            host.package_share("my_msgs").unwrap(),
            tmp.path().join("ws/msg")
        );
        // a file in the target directory that is not a binary of that package
        let e = host.executable("sim_pkg", "stray").unwrap_err();
        assert!(
            e.searched
                .iter()
                .any(|s| s.contains("has no binary 'stray'")),
            "{e:?}"
        );
        let e = host.executable("ghost", "stray").unwrap_err();
        assert!(
            e.searched
                .iter()
                .any(|s| s.contains("not a package of the workspace")),
            "{e:?}"
        );
        // a declared binary that was not built
        let e = host.executable("sim_pkg", "extra").unwrap_err();
        assert!(e.searched.iter().any(|s| s.contains("not built")), "{e:?}");
        // not executable in the install space
        let e = host.executable("inst_pkg", "not_exec").unwrap_err();
        assert!(
            e.searched
                .iter()
                .any(|s| s.contains("no such executable file")),
            "{e:?}"
        );
        assert!(host.package_prefix("my_msgs").is_err());
        assert!(host.package_share("ignored_pkg").is_err());
        assert!(host.package_share("bogus").is_err());
    }

    #[test]
    fn without_sources_any_file_in_the_target_directory_counts() {
        let (tmp, _) = world();
        let host = SystemHost::new(None, Some(tmp.path().join("ws/target/debug")), None);
        assert!(host.executable("whatever", "stray").is_ok());
        let e = host.executable("whatever", "missing").unwrap_err();
        assert!(
            e.searched[0].contains("AMENT_PREFIX_PATH (unset or empty)"),
            "{e:?}"
        );
    }

    #[test]
    fn launch_file_lookup_in_a_package() {
        let (tmp, host) = world();
        let ws = tmp.path().join("ws").canonicalize().unwrap();
        // source tree: share dir is the workspace root thanks to install_to_share
        let host2 = SystemHost::new(None, None, Some(ws.clone()));
        assert_eq!(
            host2
                .package_launch_file("sim_pkg", "sim.launch.xml")
                .unwrap(),
            ws.join("launch/sim.launch.xml")
        );
        assert!(host
            .package_launch_file("my_msgs", "nope.launch.xml")
            .is_err());
        assert!(host.package_launch_file("ghost", "x.launch.xml").is_err());
    }

    #[test]
    fn parses_manifests() {
        assert_eq!(
            package_xml_name("<package format=\"3\"><name> abc </name></package>").as_deref(),
            Some("abc")
        );
        assert_eq!(package_xml_name("<other/>"), None);
        let dir = Path::new("/nonexistent");
        assert_eq!(cargo_package("[workspace]\nmembers = []\n", dir), None);
        let c = cargo_package("[package]\nname = \"x\"\nautobins = false\n", dir).unwrap();
        assert!(c.binaries.is_empty());
        assert_eq!(c.share_dir, dir);
    }
}
