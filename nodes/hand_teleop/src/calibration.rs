//! The `~/calibrate` service of `glove_calibration`, without DDS: where request files may be
//! read and written, the calibration, and the checks that keep non-finite figures and invalid
//! models out of replies and files.
//!
//! A request names its data and output files *relative to directories the person starting the
//! node configured* (`data_directory`, `output_directory`), through [`rpq_base::file::FileArea`]:
//! names leaving them, symbolic links out of them, special files and control characters are
//! refused, data files larger than `max_data_size` are not read, and no reply or log line
//! carries file content.

use std::path::{Path, PathBuf};

use rpq_base::file::FileArea;
use rpq_hand::calib::CalibrationReport;
use rpq_hand::{calib, CalibOptions, HandModel};
use rpq_ros::interfaces::rpq_interfaces::srv::{CalibrateGloveRequest, CalibrateGloveResponse};

use crate::bag_input;
use crate::settings::{glove_calibration::names, GloveCalibrationParams};
use crate::NodeError;

/// What the service needs between requests.
#[derive(Debug, Clone)]
pub struct CalibrationService {
    initial: HandModel,
    condition_warning: f64,
    data_directory: Option<PathBuf>,
    output_directory: Option<PathBuf>,
    output_file: String,
    max_data_size: u64,
}

fn fail(message: String) -> CalibrateGloveResponse {
    CalibrateGloveResponse {
        success: false,
        message,
        ..Default::default()
    }
}

impl CalibrationService {
    /// The service of a node started with `p`, calibrating from `initial`. Refuses an
    /// `output_file` that is not a plain name inside `output_directory`.
    pub fn new(initial: HandModel, p: &GloveCalibrationParams) -> Result<Self, NodeError> {
        let dir = |d: &str| (!d.is_empty()).then(|| PathBuf::from(d));
        let s = CalibrationService {
            initial,
            condition_warning: p.condition_warning,
            data_directory: dir(&p.data_directory),
            output_directory: dir(&p.output_directory),
            output_file: p.output_file.clone(),
            max_data_size: u64::try_from(p.max_data_size).unwrap_or(1),
        };
        // The check of a request's name, on the configured one (no file-system access).
        FileArea::new("/", false)
            .and_then(|a| a.check_name(&s.output_file))
            .map_err(|e| NodeError::config(names::OUTPUT_FILE, e.to_string()))?;
        Ok(s)
    }

    /// The configured data directory (`None`: requests read no files).
    pub fn data_directory(&self) -> Option<&Path> {
        self.data_directory.as_deref()
    }

    /// The configured output directory (`None`: requests write no files).
    pub fn output_directory(&self) -> Option<&Path> {
        self.output_directory.as_deref()
    }

    fn data_area(&self) -> Result<FileArea, String> {
        let Some(dir) = &self.data_directory else {
            return Err(format!(
                "data_file refused: this node reads no files for requests ({} is not set; \
                 start it with -p {}:=<directory>, as launch/hand_teleop.launch.xml does)",
                names::DATA_DIRECTORY,
                names::DATA_DIRECTORY
            ));
        };
        FileArea::new(dir, false).map_err(|e| format!("the data directory cannot be used: {e}"))
    }

    fn output_area(&self, requested: &str) -> Result<Option<FileArea>, String> {
        let Some(dir) = &self.output_directory else {
            if requested.is_empty() {
                return Ok(None);
            }
            return Err(format!(
                "output_file refused: this node writes no files for requests ({} is not set; \
                 leave output_file empty to calibrate without saving)",
                names::OUTPUT_DIRECTORY
            ));
        };
        std::fs::create_dir_all(dir).map_err(|e| {
            format!(
                "the output directory {} cannot be created: {e}",
                dir.display()
            )
        })?;
        FileArea::new(dir, true)
            .map(Some)
            .map_err(|e| format!("the output directory cannot be used: {e}"))
    }

    /// Answers one request: reads the data, calibrates, checks the result and saves it.
    pub fn calibrate(&self, req: &CalibrateGloveRequest) -> CalibrateGloveResponse {
        let area = match self.data_area() {
            Ok(a) => a,
            Err(e) => return fail(e),
        };
        // Checked before the (possibly long) calibration: a bad output name fails at once.
        let out_area = match self.output_area(&req.output_file) {
            Ok(a) => a,
            Err(e) => return fail(e),
        };
        let out_name = if req.output_file.is_empty() {
            self.output_file.as_str()
        } else {
            req.output_file.as_str()
        };
        if let Some(a) = &out_area {
            if let Err(e) = a.resolve_for_write(out_name) {
                return fail(format!("output_file {e}"));
            }
        }
        let samples = match bag_input::load_samples_in(&area, &req.data_file, self.max_data_size) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        let opts = CalibOptions {
            cond_warn: self.condition_warning,
            ..Default::default()
        };
        let (mut model, report) = match calib::calibrate(&self.initial, &samples, &opts, |_| {}) {
            Ok(r) => r,
            Err(e) => return fail(e.to_string()),
        };
        if let Err(e) = check_result(&model, &report) {
            return fail(e);
        }
        model.name = format!("calibrated from {}", req.data_file);
        let saved_file = match &out_area {
            Some(a) => {
                let text = model.to_yaml_string(&format!(
                    "calibrated by glove_calibration from {}",
                    req.data_file
                ));
                match a.write(out_name, text.as_bytes()) {
                    Ok(p) => p.display().to_string(),
                    Err(e) => return fail(format!("cannot save the model: {e}")),
                }
            }
            None => String::new(),
        };
        let converged = report.fingers.iter().all(|r| r.converged);
        CalibrateGloveResponse {
            success: converged,
            message: format!(
                "calibrated {} fingers from {} samples{}{}",
                report.fingers.len(),
                samples.len(),
                if converged {
                    ""
                } else {
                    "; a finger did not converge"
                },
                if out_area.is_none() {
                    "; not saved (output_directory is not set)"
                } else {
                    ""
                }
            ),
            report: report.summary(),
            fingers: report
                .fingers
                .iter()
                .map(|r| r.finger.name().to_string())
                .collect(),
            rms_error: report.fingers.iter().map(|r| r.after.rms).collect(),
            max_error: report.fingers.iter().map(|r| r.after.max).collect(),
            condition_number: report.fingers.iter().map(|r| r.condition_number).collect(),
            saved_file,
        }
    }
}

/// Refuses a calibration whose figures are not finite or whose model is invalid (a negative
/// length, a non-finite parameter): such a result is never answered as a success nor saved.
pub fn check_result(model: &HandModel, report: &CalibrationReport) -> Result<(), String> {
    for r in &report.fingers {
        let figures = [
            ("rms error", r.after.rms),
            ("max error", r.after.max),
            ("mean error", r.after.mean),
            ("condition number", r.condition_number),
        ];
        if let Some((what, v)) = figures.iter().find(|(_, v)| !v.is_finite()) {
            return Err(format!(
                "calibration refused: the {what} of the {} is {v}; the data cannot describe a \
                 hand (fingertips or readings far out of range?)",
                r.finger.name()
            ));
        }
    }
    model
        .validate()
        .map_err(|e| format!("calibration refused: the calibrated model is not a valid hand ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::calibration_declarations;
    use rpq_hand::sim::{simulate, SimOptions};
    use rpq_ros::params::Params;

    fn service(data: &Path, out: Option<&Path>, max: i64) -> CalibrationService {
        let mut p = GloveCalibrationParams::from_params(
            &Params::resolve(&calibration_declarations(), "/glove_calibration", &[], &[]).unwrap(),
        )
        .unwrap();
        p.data_directory = data.display().to_string();
        p.output_directory = out.map(|o| o.display().to_string()).unwrap_or_default();
        p.max_data_size = max;
        CalibrationService::new(HandModel::nominal(), &p).unwrap()
    }

    fn write_csv(path: &Path, tip_scale: f64) {
        let mut sim = simulate(
            &HandModel::nominal(),
            &SimOptions {
                poses: 20,
                ..Default::default()
            },
        );
        for s in &mut sim {
            s.tip *= tip_scale;
        }
        let f = std::fs::File::create(path).unwrap();
        rpq_hand::data::write_csv(f, &sim).unwrap();
    }

    fn req(data: &str, out: &str) -> CalibrateGloveRequest {
        CalibrateGloveRequest {
            data_file: data.into(),
            output_file: out.into(),
        }
    }

    #[test]
    fn calibrates_inside_the_directories_and_refuses_names_outside() {
        let data = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        write_csv(&data.path().join("good.csv"), 1.0);
        let s = service(data.path(), Some(&out.path().join("models")), 1 << 20);
        let r = s.calibrate(&req("good.csv", ""));
        assert!(r.success, "{}", r.message);
        let saved = out.path().join("models/hand_model_calibrated.yaml");
        assert_eq!(
            r.saved_file,
            saved.canonicalize().unwrap().display().to_string()
        );
        for (d, o) in [
            ("../good.csv", ""),
            ("/etc/passwd", ""),
            ("/proc/self/environ", ""),
            ("/dev/zero", ""),
            ("a\nb.csv", ""),
            ("good.csv", "../../x.yaml"),
            ("good.csv", "/tmp/x.yaml"),
            ("good.csv", "a\nb.yaml"),
            ("good.csv", "/proc/self/comm"),
        ] {
            let r = s.calibrate(&req(d, o));
            assert!(!r.success, "{d:?} {o:?}");
            assert!(r.message.contains("refused"), "{d:?} {o:?}: {}", r.message);
        }
        // The size limit.
        let small = service(data.path(), None, 100);
        let r = small.calibrate(&req("good.csv", ""));
        assert!(r.message.contains("larger than the limit"), "{}", r.message);
    }

    #[test]
    fn without_directories_nothing_is_read_or_written() {
        let data = tempfile::tempdir().unwrap();
        write_csv(&data.path().join("good.csv"), 1.0);
        let mut p = GloveCalibrationParams::from_params(
            &Params::resolve(&calibration_declarations(), "/glove_calibration", &[], &[]).unwrap(),
        )
        .unwrap();
        assert!(p.data_directory.is_empty() && p.output_directory.is_empty());
        let none = CalibrationService::new(HandModel::nominal(), &p).unwrap();
        let r = none.calibrate(&req("good.csv", ""));
        assert!(
            !r.success && r.message.contains("data_directory"),
            "{}",
            r.message
        );
        // Data only: calibrated and answered, not saved; naming an output is refused.
        let s = service(data.path(), None, 1 << 20);
        let r = s.calibrate(&req("good.csv", ""));
        assert!(r.success && r.saved_file.is_empty(), "{}", r.message);
        assert!(r.message.contains("not saved"), "{}", r.message);
        let r = s.calibrate(&req("good.csv", "x.yaml"));
        assert!(
            !r.success && r.message.contains("output_directory"),
            "{}",
            r.message
        );
        // A configured output_file that leaves the output directory stops the node.
        p.output_file = "../x.yaml".into();
        assert!(CalibrationService::new(HandModel::nominal(), &p).is_err());
    }

    #[test]
    fn non_finite_results_are_refused() {
        let data = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        write_csv(&data.path().join("huge.csv"), 1e300);
        let s = service(data.path(), Some(out.path()), 1 << 20);
        let r = s.calibrate(&req("huge.csv", "huge.yaml"));
        assert!(!r.success, "{}", r.message);
        assert!(
            r.message.contains("finite") || r.message.contains("inf"),
            "{}",
            r.message
        );
        assert!(r
            .rms_error
            .iter()
            .chain(&r.max_error)
            .all(|v| v.is_finite()));
        assert!(!out.path().join("huge.yaml").exists());
    }

    /// The node's own check, whatever the library reports: infinite figures and a negative
    /// length are refused.
    #[test]
    fn check_result_refuses_non_finite_figures_and_invalid_models() {
        let sim = simulate(
            &HandModel::nominal(),
            &SimOptions {
                poses: 20,
                ..Default::default()
            },
        );
        let (model, report) = calib::calibrate(
            &HandModel::nominal(),
            &sim,
            &CalibOptions::default(),
            |_| {},
        )
        .unwrap();
        check_result(&model, &report).unwrap();
        let mut bad = report.clone();
        bad.fingers[1].after.max = f64::INFINITY;
        let e = check_result(&model, &bad).unwrap_err();
        assert!(e.contains("max error of the index is inf"), "{e}");
        let mut bad = report.clone();
        bad.fingers[0].condition_number = f64::NAN;
        assert!(check_result(&model, &bad).is_err());
        let mut negative = model.clone();
        negative.finger_mut(rpq_hand::Finger::Index).lengths[1] = -0.01;
        let e = check_result(&negative, &report).unwrap_err();
        assert!(e.contains("negative length"), "{e}");
    }

    #[test]
    fn quoted_file_text_is_redacted() {
        assert_eq!(
            bag_input::redact_quoted("CSV line 2: `root:x:0:0` is not a number"),
            "CSV line 2: `…` is not a number"
        );
        assert_eq!(
            bag_input::redact_quoted("invalid type: string \"secret\", expected"),
            "invalid type: string \"…\", expected"
        );
        assert_eq!(bag_input::redact_quoted("open `abc"), "open `…");
    }
}
