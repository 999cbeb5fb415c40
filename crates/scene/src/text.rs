//! Reading the crate's text files (scene, collision matrix, configurations) with errors that
//! name the file.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::SceneError;

/// The whole file as text: a regular file of at most `TEXT_MAX_BYTES` (never a device or FIFO).
pub(crate) fn read(path: &Path) -> Result<String, SceneError> {
    rpq_base::file::read_to_string_bounded(path, rpq_base::file::TEXT_MAX_BYTES).map_err(|e| {
        SceneError::Io {
            path: path.to_owned(),
            source: e.into_io(),
        }
    })
}

/// Parses YAML text; `path` names the file in the error (with the line, when known).
pub(crate) fn parse_yaml<T: DeserializeOwned>(text: &str, path: &Path) -> Result<T, SceneError> {
    serde_yaml::from_str(text).map_err(|e| SceneError::Yaml {
        path: path.to_owned(),
        line: e.location().map(|l| l.line()),
        message: e.to_string(),
    })
}
