//! Resolution of the mesh file names written in URDF files.

use std::path::{Path, PathBuf};

use crate::Error;

/// Maps URDF mesh file names to paths on disk.
///
/// * `package://<pkg>/<rest>` → `<dir of pkg>/<rest>` for packages registered with
///   [`MeshResolver::with_package`];
/// * `file://<path>` → `<path>` (relative paths against the base directory);
/// * a plain absolute path → itself; a plain relative path → against the base directory,
///   normally the directory of the URDF file.
///
/// ```
/// use std::path::Path;
/// use rpq_kinematics::MeshResolver;
/// let r = MeshResolver::for_urdf_file("/repo/urdf/rx60b.urdf").with_package("rx60_description", "/opt/rx60");
/// assert_eq!(r.resolve("../meshes/rx60b/link_1.stl")?, Path::new("/repo/urdf/../meshes/rx60b/link_1.stl"));
/// assert_eq!(r.resolve("package://rx60_description/meshes/a.stl")?, Path::new("/opt/rx60/meshes/a.stl"));
/// assert_eq!(r.resolve("file:///tmp/a.stl")?, Path::new("/tmp/a.stl"));
/// assert!(r.resolve("package://other/a.stl").is_err());
/// assert!(r.resolve("http://example.com/a.stl").is_err());
/// # Ok::<(), rpq_kinematics::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MeshResolver {
    base_dir: PathBuf,
    packages: Vec<(String, PathBuf)>,
}

impl MeshResolver {
    /// A resolver for relative paths against `base_dir`.
    pub fn new(base_dir: impl Into<PathBuf>) -> Self {
        Self {
            base_dir: base_dir.into(),
            packages: Vec::new(),
        }
    }

    /// A resolver for relative paths against the directory containing `urdf_file`.
    pub fn for_urdf_file(urdf_file: impl AsRef<Path>) -> Self {
        Self::new(
            urdf_file
                .as_ref()
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        )
    }

    /// Registers the directory of a ROS package for `package://` URIs (later
    /// registrations of the same name win).
    pub fn with_package(mut self, name: impl Into<String>, dir: impl Into<PathBuf>) -> Self {
        self.packages.insert(0, (name.into(), dir.into()));
        self
    }

    /// The path a mesh file name refers to.
    pub fn resolve(&self, filename: &str) -> Result<PathBuf, Error> {
        if let Some(rest) = filename.strip_prefix("package://") {
            let (package, inner) = rest.split_once('/').unwrap_or((rest, ""));
            let dir = self
                .packages
                .iter()
                .find(|(name, _)| name == package)
                .map(|(_, dir)| dir)
                .ok_or_else(|| Error::UnknownPackage {
                    package: package.to_owned(),
                    uri: filename.to_owned(),
                })?;
            if inner.is_empty() {
                return Err(Error::UnsupportedUri {
                    uri: filename.to_owned(),
                });
            }
            return Ok(dir.join(inner));
        }
        let path = match filename.strip_prefix("file://") {
            Some(p) => p,
            None if filename.contains("://") || filename.is_empty() => {
                return Err(Error::UnsupportedUri {
                    uri: filename.to_owned(),
                })
            }
            None => filename,
        };
        let path = Path::new(path);
        Ok(if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.base_dir.join(path)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_every_form() {
        let r = MeshResolver::new("/base")
            .with_package("p", "/old")
            .with_package("p", "/new");
        let ok = |s: &str| r.resolve(s).unwrap();
        assert_eq!(ok("m.stl"), Path::new("/base/m.stl"));
        assert_eq!(ok("/abs/m.stl"), Path::new("/abs/m.stl"));
        assert_eq!(ok("file://rel/m.stl"), Path::new("/base/rel/m.stl"));
        assert_eq!(ok("package://p/a/b.stl"), Path::new("/new/a/b.stl"));
        assert!(matches!(
            r.resolve("package://p"),
            Err(Error::UnsupportedUri { .. })
        ));
        assert!(matches!(r.resolve(""), Err(Error::UnsupportedUri { .. })));
        assert!(matches!(
            r.resolve("package://q/x.stl"),
            Err(Error::UnknownPackage { package, .. }) if package == "q"
        ));
        assert_eq!(
            MeshResolver::for_urdf_file("r.urdf")
                .resolve("m.stl")
                .unwrap(),
            Path::new("m.stl")
        );
    }
}
