//! Bounded, sandboxed file access for inputs a user or a peer names.
//!
//! Two levels:
//! * [`read_bounded`] / [`read_to_string_bounded`] for paths given by the person who starts a
//!   program (a launch file, a mesh, a scene): only regular files, never a device, FIFO, socket
//!   or a file of `/proc`, `/sys` or `/dev`, and at most a size limit, so a wrong path fails at
//!   once with a clear message instead of hanging or filling memory.
//! * [`FileArea`] for names that arrive over the wire (a service request): the name is resolved
//!   inside one directory fixed by the node's configuration, and everything that could leave it
//!   or touch a special file is refused. Errors name the request's file name and the reason,
//!   never the file's content.
//!
//! ```
//! use rpq_base::file::{FileArea, FileError};
//! let dir = tempfile::tempdir()?;
//! let area = FileArea::new(dir.path(), true)?;
//! area.write("calib/hand.yaml", b"a: 1\n").unwrap_err(); // no such sub-directory
//! area.write("hand.yaml", b"a: 1\n")?;
//! assert_eq!(area.read_to_string("hand.yaml", 1024)?, "a: 1\n");
//! assert!(matches!(area.read("../etc/passwd", 1024), Err(FileError::BadName { .. })));
//! assert!(matches!(area.read("/etc/passwd", 1024), Err(FileError::BadName { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

/// Default size limit of [`read_bounded`] callers that have no better figure: 64 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 64 << 20;

/// Longest file name accepted by [`FileArea`] (bytes, whole relative path).
pub const MAX_NAME_BYTES: usize = 1024;

/// Why a file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The operating system refused.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a regular file (a directory, device, FIFO or socket).
    #[error("{path}: is a {kind}, not a regular file")]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// A file of a kernel file system (`/proc`, `/sys`, `/dev`), never a data file.
    #[error("{path}: files under /proc, /sys and /dev are not read or written")]
    SpecialFileSystem {
        /// The file.
        path: PathBuf,
    },
    /// Larger than the limit.
    #[error("{path}: larger than the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// Not valid UTF-8 text.
    #[error("{path}: not UTF-8 text")]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// A name from a request that is not a plain relative name inside the area.
    #[error("file name {name:?} refused: {reason}")]
    BadName {
        /// The name as received (control characters escaped by `{:?}`).
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// The name resolves (through a symlink) to a place outside the area.
    #[error("file name {name:?} refused: it leads outside {area}")]
    OutsideArea {
        /// The name as received.
        name: String,
        /// The area's directory.
        area: PathBuf,
    },
    /// A write into an area configured read-only.
    #[error("{area} is read-only for requests (writing {name:?} refused)")]
    ReadOnly {
        /// The name as received.
        name: String,
        /// The area's directory.
        area: PathBuf,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> FileError + '_ {
    move |source| FileError::Io {
        path: path.to_owned(),
        source,
    }
}

fn kind_name(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "directory"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_socket() {
        "socket"
    } else if t.is_symlink() {
        "symbolic link"
    } else {
        "special file"
    }
}

fn on_kernel_fs(canonical: &Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|root| canonical.starts_with(root))
}

/// Opens `path` for reading only if it is a regular data file: the checks run on the opened
/// file (no race with a rename), and opening never blocks (a FIFO is refused, not waited on).
fn open_regular(path: &Path) -> Result<File, FileError> {
    let canonical = path.canonicalize().map_err(io(path))?;
    if on_kernel_fs(&canonical) {
        return Err(FileError::SpecialFileSystem {
            path: path.to_owned(),
        });
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&canonical)
        .map_err(io(path))?;
    let t = file.metadata().map_err(io(path))?.file_type();
    if !t.is_file() {
        return Err(FileError::NotRegular {
            path: path.to_owned(),
            kind: kind_name(t),
        });
    }
    Ok(file)
}

fn read_limited(path: &Path, file: File, limit: u64) -> Result<Vec<u8>, FileError> {
    let size = file.metadata().map_err(io(path))?.len();
    if size > limit {
        return Err(FileError::TooLarge {
            path: path.to_owned(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // take(limit + 1): a file that grows while being read cannot exceed the limit either.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge {
            path: path.to_owned(),
            limit,
        });
    }
    Ok(bytes)
}

/// Reads a regular file of at most `limit` bytes.
///
/// ```
/// use rpq_base::file::{read_bounded, FileError};
/// assert!(matches!(read_bounded("/dev/zero", 1 << 20), Err(FileError::SpecialFileSystem { .. })));
/// assert!(matches!(read_bounded("/proc/self/environ", 1 << 20), Err(FileError::SpecialFileSystem { .. })));
/// assert!(matches!(read_bounded("/", 1 << 20), Err(FileError::NotRegular { .. })));
/// ```
pub fn read_bounded(path: impl AsRef<Path>, limit: u64) -> Result<Vec<u8>, FileError> {
    let path = path.as_ref();
    let file = open_regular(path)?;
    read_limited(path, file, limit)
}

impl FileError {
    /// The error as an `std::io::Error` for readers whose errors already name the file: the
    /// operating system's error as it is, the others as their reason without the path.
    pub fn into_io(self) -> std::io::Error {
        use std::io::{Error, ErrorKind};
        match self {
            FileError::Io { source, .. } => source,
            FileError::NotRegular { kind, .. } => Error::new(
                ErrorKind::InvalidInput,
                format!("is a {kind}, not a regular file"),
            ),
            FileError::SpecialFileSystem { .. } => Error::new(
                ErrorKind::InvalidInput,
                "files under /proc, /sys and /dev are not read",
            ),
            FileError::TooLarge { limit, .. } => Error::new(
                ErrorKind::FileTooLarge,
                format!("larger than the limit of {limit} bytes"),
            ),
            FileError::NotText { .. } => Error::new(ErrorKind::InvalidData, "not UTF-8 text"),
            other => Error::new(ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

/// Size limit of the suite's text inputs named at start-up (URDF, scene, collision matrix,
/// configuration tables, hand models): 64 MiB.
pub const TEXT_MAX_BYTES: u64 = DEFAULT_MAX_BYTES;

/// [`read_bounded`] for UTF-8 text.
pub fn read_to_string_bounded(path: impl AsRef<Path>, limit: u64) -> Result<String, FileError> {
    let path = path.as_ref();
    String::from_utf8(read_bounded(path, limit)?).map_err(|_| FileError::NotText {
        path: path.to_owned(),
    })
}

/// The directory in which a node lets requests read or write files.
///
/// A request names a file *relative to the area*. Refused: empty names, absolute paths, `..`
/// and `.` components, names with control characters or longer than [`MAX_NAME_BYTES`],
/// symlinks whose target is outside the area, anything that is not a regular file (devices,
/// FIFOs, sockets, directories), and writes when the area is read-only. Writes go to a
/// temporary file in the same directory first and are renamed into place, so a reader never
/// sees half a file and an existing symlink is replaced, not followed. Sub-directories must
/// already exist; none are created.
#[derive(Clone, Debug)]
pub struct FileArea {
    root: PathBuf,
    writable: bool,
}

impl FileArea {
    /// An area rooted at the existing directory `dir` (resolved to its canonical path).
    pub fn new(dir: impl AsRef<Path>, writable: bool) -> Result<FileArea, FileError> {
        let dir = dir.as_ref();
        let root = dir.canonicalize().map_err(io(dir))?;
        let t = std::fs::metadata(&root).map_err(io(dir))?.file_type();
        if !t.is_dir() {
            return Err(FileError::NotRegular {
                path: dir.to_owned(),
                kind: "file where a directory was expected: the area",
            });
        }
        if on_kernel_fs(&root) {
            return Err(FileError::SpecialFileSystem {
                path: dir.to_owned(),
            });
        }
        Ok(FileArea { root, writable })
    }

    /// The area's canonical directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether requests may write here.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// Checks a requested name and joins it to the area (no file-system access).
    pub fn check_name(&self, name: &str) -> Result<PathBuf, FileError> {
        let bad = |reason| FileError::BadName {
            name: name.to_owned(),
            reason,
        };
        if name.is_empty() {
            return Err(bad("empty"));
        }
        if name.len() > MAX_NAME_BYTES {
            return Err(bad("longer than 1024 bytes"));
        }
        if name.chars().any(char::is_control) {
            return Err(bad("contains a control character"));
        }
        let rel = Path::new(name);
        for c in rel.components() {
            match c {
                Component::Normal(_) => {}
                Component::ParentDir => return Err(bad("contains '..'")),
                Component::CurDir => return Err(bad("contains '.' as a path component")),
                Component::RootDir | Component::Prefix(_) => return Err(bad(
                    "absolute paths are not accepted; name a file inside the configured directory",
                )),
            }
        }
        if name.ends_with('/') {
            return Err(bad("names a directory"));
        }
        Ok(self.root.join(rel))
    }

    /// Resolves `name` for reading: the canonical path of an existing regular file inside.
    pub fn resolve_existing(&self, name: &str) -> Result<PathBuf, FileError> {
        let joined = self.check_name(name)?;
        let canonical = joined.canonicalize().map_err(|source| FileError::Io {
            path: PathBuf::from(name),
            source,
        })?;
        if !canonical.starts_with(&self.root) {
            return Err(FileError::OutsideArea {
                name: name.to_owned(),
                area: self.root.clone(),
            });
        }
        Ok(canonical)
    }

    /// Reads the regular file `name` (at most `limit` bytes).
    pub fn read(&self, name: &str, limit: u64) -> Result<Vec<u8>, FileError> {
        let path = self.resolve_existing(name)?;
        let shown = PathBuf::from(name);
        let file = open_regular(&path).map_err(|e| rename_path(e, &shown))?;
        read_limited(&shown, file, limit)
    }

    /// [`FileArea::read`] for UTF-8 text.
    pub fn read_to_string(&self, name: &str, limit: u64) -> Result<String, FileError> {
        String::from_utf8(self.read(name, limit)?).map_err(|_| FileError::NotText {
            path: PathBuf::from(name),
        })
    }

    /// Resolves `name` for writing: its directory exists inside the area, and the name is not
    /// an existing non-regular file. Returns the path to write (not canonicalised: the last
    /// component may not exist yet).
    pub fn resolve_for_write(&self, name: &str) -> Result<PathBuf, FileError> {
        if !self.writable {
            return Err(FileError::ReadOnly {
                name: name.to_owned(),
                area: self.root.clone(),
            });
        }
        let joined = self.check_name(name)?;
        let parent = joined.parent().unwrap_or(&self.root);
        let parent = parent.canonicalize().map_err(|source| FileError::Io {
            path: PathBuf::from(name),
            source,
        })?;
        if !parent.starts_with(&self.root) {
            return Err(FileError::OutsideArea {
                name: name.to_owned(),
                area: self.root.clone(),
            });
        }
        let file_name = joined.file_name().ok_or_else(|| FileError::BadName {
            name: name.to_owned(),
            reason: "no file name",
        })?;
        let target = parent.join(file_name);
        match std::fs::symlink_metadata(&target) {
            Ok(m) if m.file_type().is_file() || m.file_type().is_symlink() => {}
            Ok(m) => {
                return Err(FileError::NotRegular {
                    path: PathBuf::from(name),
                    kind: kind_name(m.file_type()),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(FileError::Io {
                    path: PathBuf::from(name),
                    source,
                })
            }
        }
        Ok(target)
    }

    /// Writes `bytes` to `name` atomically (temporary file + rename); returns the path written.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, FileError> {
        let target = self.resolve_for_write(name)?;
        let shown = PathBuf::from(name);
        let dir = target.parent().unwrap_or(&self.root);
        let tmp = dir.join(format!(
            ".{}.tmp{}",
            target
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            std::process::id()
        ));
        let result = (|| {
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &target)
        })();
        if let Err(source) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(FileError::Io {
                path: shown,
                source,
            });
        }
        Ok(target)
    }
}

fn rename_path(e: FileError, shown: &Path) -> FileError {
    match e {
        FileError::Io { source, .. } => FileError::Io {
            path: shown.to_owned(),
            source,
        },
        FileError::NotRegular { kind, .. } => FileError::NotRegular {
            path: shown.to_owned(),
            kind,
        },
        FileError::SpecialFileSystem { .. } => FileError::SpecialFileSystem {
            path: shown.to_owned(),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn area(writable: bool) -> (tempfile::TempDir, FileArea) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/ok.txt"), "fine").unwrap();
        let a = FileArea::new(dir.path(), writable).unwrap();
        (dir, a)
    }

    #[test]
    fn reads_and_writes_plain_names() {
        let (_d, a) = area(true);
        assert_eq!(a.read_to_string("sub/ok.txt", 100).unwrap(), "fine");
        a.write("sub/new.bin", &[1, 2, 3]).unwrap();
        assert_eq!(a.read("sub/new.bin", 3).unwrap(), vec![1, 2, 3]);
        // Overwrite keeps working and leaves no temporary file behind.
        a.write("sub/new.bin", &[4]).unwrap();
        assert_eq!(a.read("sub/new.bin", 3).unwrap(), vec![4]);
        let names: Vec<_> = std::fs::read_dir(a.root().join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn refuses_names_that_leave_the_area() {
        let (_d, a) = area(true);
        for name in [
            "",
            "../x",
            "sub/../../x",
            "/etc/passwd",
            "/tmp/victim.txt",
            "./x",
            "a\nb",
            "a\u{7f}",
            "sub/",
        ] {
            assert!(
                matches!(a.write(name, b"x"), Err(FileError::BadName { .. })),
                "write {name:?}"
            );
            assert!(
                matches!(a.read(name, 10), Err(FileError::BadName { .. })),
                "read {name:?}"
            );
        }
        let long = "a".repeat(MAX_NAME_BYTES + 1);
        assert!(matches!(a.read(&long, 10), Err(FileError::BadName { .. })));
    }

    #[test]
    fn refuses_symlinks_out_and_special_files() {
        let (d, a) = area(true);
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        symlink(outside.path().join("secret"), d.path().join("link")).unwrap();
        symlink(outside.path(), d.path().join("dirlink")).unwrap();
        symlink("/proc/self/environ", d.path().join("env")).unwrap();
        symlink("/dev/zero", d.path().join("zero")).unwrap();
        assert!(matches!(
            a.read("link", 10),
            Err(FileError::OutsideArea { .. })
        ));
        assert!(matches!(
            a.read("dirlink/secret", 10),
            Err(FileError::OutsideArea { .. })
        ));
        assert!(matches!(
            a.write("dirlink/new", b"x"),
            Err(FileError::OutsideArea { .. })
        ));
        assert!(matches!(
            a.read("env", 10),
            Err(FileError::OutsideArea { .. })
        ));
        assert!(matches!(
            a.read("zero", 10),
            Err(FileError::OutsideArea { .. })
        ));
        assert!(matches!(
            a.read("sub", 10),
            Err(FileError::NotRegular { .. })
        ));
        assert!(matches!(
            a.write("sub", b"x"),
            Err(FileError::NotRegular { .. })
        ));
        // Writing over a symlink inside replaces the link; the outside file is untouched.
        a.write("link", b"new").unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret")).unwrap(),
            "s"
        );
        assert_eq!(a.read_to_string("link", 10).unwrap(), "new");
    }

    #[test]
    fn fifo_is_refused_without_blocking() {
        let (d, a) = area(false);
        let fifo = d.path().join("fifo");
        // mkfifo(1): the libc call would need `unsafe`, which the workspace forbids.
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success());
        assert!(matches!(
            a.read("fifo", 10),
            Err(FileError::NotRegular { kind: "FIFO", .. })
        ));
        assert!(matches!(
            read_bounded(&fifo, 10),
            Err(FileError::NotRegular { kind: "FIFO", .. })
        ));
    }

    #[test]
    fn size_limit_and_read_only() {
        let (_d, a) = area(false);
        assert!(matches!(
            a.read("sub/ok.txt", 3),
            Err(FileError::TooLarge { .. })
        ));
        assert!(matches!(
            a.write("x", b"x"),
            Err(FileError::ReadOnly { .. })
        ));
        assert!(matches!(
            read_bounded("/sys/kernel/mm", 10),
            Err(FileError::SpecialFileSystem { .. })
        ));
    }

    #[test]
    fn errors_never_carry_file_content() {
        let (d, a) = area(false);
        std::fs::write(d.path().join("big"), "root:x:0:0:SECRET\n".repeat(10)).unwrap();
        let e = a.read("big", 10).unwrap_err().to_string();
        assert!(!e.contains("SECRET"), "{e}");
        std::fs::write(d.path().join("bin"), b"\xff\xfeSECRET").unwrap();
        let e = a.read_to_string("bin", 100).unwrap_err().to_string();
        assert!(!e.contains("SECRET"), "{e}");
    }
}
