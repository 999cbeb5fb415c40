//! The scenario's outputs: the summary text, the trajectory CSV and the plots (tool path over
//! the outline, distances over time), written to one folder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[cfg(feature = "plots")]
use nalgebra::Point2;
#[cfg(feature = "plots")]
use rpq_plot::Figure;

use super::{Report, ScenarioConfig};
use crate::SurgeryError;

/// The summary as printed at the end of a run (deterministic lines first, then the timing,
/// which is not).
pub fn summary_text(cfg: &ScenarioConfig, r: &Report) -> String {
    let s = &r.summary;
    let mut t = String::new();
    let mm = |x: f64| x * 1e3;
    let _ = writeln!(
        t,
        "summary (seed {}, {:.1} s simulated, {} periods of {} ms)",
        s.seed,
        s.duration,
        s.periods,
        cfg.dt * 1e3
    );
    let _ = writeln!(
        t,
        "  protections: patient {} + shield {} + cutting aid {} triangles; bit radius {:.2} mm, cut width {:.2} mm",
        s.triangles[0],
        s.triangles[1],
        s.triangles[2],
        mm(cfg.tool_radius),
        mm(cfg.cut_width)
    );
    let _ = writeln!(
        t,
        "  cut accuracy: mean deviation {:.3} mm, max {:.3} mm from the cut line ({:.1} mm long), over {} periods on the bone; {:.0} % of the line cut",
        mm(s.mean_deviation),
        mm(s.max_deviation),
        mm(s.cut_length),
        s.cutting_periods,
        s.coverage * 100.0
    );
    let _ = writeln!(
        t,
        "  minimum tool-patient distance: {:.4} mm; minimum clearance to any protection: {:.4} mm",
        mm(s.min_patient_distance),
        mm(s.min_clearance)
    );
    let _ = writeln!(
        t,
        "  penetrations of the protected region: {}",
        s.penetrations
    );
    if s.overlap_periods > 0 {
        let _ = writeln!(
            t,
            "  the cutting aid was loaded over the bit: {} periods backing out of it (never deeper)",
            s.overlap_periods
        );
    }
    let _ = writeln!(
        t,
        "  surface navigation: {} free, {} slid, {} blocked periods; surgeon pushed into forbidden regions {} times ({:.1} s)",
        s.outcomes[0],
        s.outcomes[1],
        s.outcomes[2],
        s.pushes,
        s.push_periods as f64 * cfg.dt
    );
    let _ = writeln!(
        t,
        "  command: largest change between periods {:.2} mm/s; at the cutting aid's load (t = {:.3} s) {:.2} mm/s",
        mm(s.max_command_change.0),
        s.aid_loaded_at,
        mm(s.max_command_change.1)
    );
    let _ = writeln!(
        t,
        "  final tool position: ({:.2}, {:.2}, {:.2}) mm",
        mm(s.final_tool[0]),
        mm(s.final_tool[1]),
        mm(s.final_tool[2])
    );
    let c = r.timing.control_us;
    let n = r.timing.navigation_us;
    let k = r.timing.contact_us;
    let _ = writeln!(
        t,
        "control loop timing (wall clock, not part of the deterministic summary): period p50 {:.1} us, p99 {:.1} us, max {:.1} us; in contact p50 {:.1} us, p99 {:.1} us; navigation alone p50 {:.1} us, p99 {:.1} us",
        c[0], c[1], c[2], k[0], k[1], n[0], n[1]
    );
    t
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SurgeryError + '_ {
    move |source| SurgeryError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `summary.txt`, `trajectory.csv`, `path.{svg,png}` and `distance.{svg,png}` into
/// `dir` (created); returns the files written. Plots need the `plots` feature and a font (see
/// `rpq_plot`); without either they are skipped and the returned message says so.
pub fn write(
    dir: &Path,
    cfg: &ScenarioConfig,
    r: &Report,
) -> Result<(Vec<PathBuf>, Option<String>), SurgeryError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut files = Vec::new();
    let summary = dir.join("summary.txt");
    std::fs::write(&summary, summary_text(cfg, r)).map_err(io(&summary))?;
    files.push(summary);
    let csv = dir.join("trajectory.csv");
    let mut text = String::from(
        "t_s,x_m,y_m,z_m,local_x_m,local_y_m,local_z_m,patient_distance_m,clearance_m,deviation_m,navigation,speed_m_s,surgeon_push\n",
    );
    for s in &r.samples {
        let _ = writeln!(
            text,
            "{:.3},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{},{:.5},{}",
            s.t,
            s.tool.x,
            s.tool.y,
            s.tool.z,
            s.local.x,
            s.local.y,
            s.local.z,
            s.patient_distance,
            s.clearance,
            s.deviation,
            s.outcome.name(),
            s.speed,
            s.pushing.map_or("", |k| k.name())
        );
    }
    std::fs::write(&csv, text).map_err(io(&csv))?;
    files.push(csv);
    let note = plots(dir, r, &mut files);
    Ok((files, note))
}

/// Without the `plots` feature: no plot files, and a note that says why.
#[cfg(not(feature = "plots"))]
fn plots(_dir: &Path, _r: &Report, _files: &mut Vec<PathBuf>) -> Option<String> {
    Some("plots skipped: rpq_surgery was built without its `plots` feature".to_string())
}

/// `path.{svg,png}` and `distance.{svg,png}` into `dir`, appended to `files`; `Some(why)` when
/// they could not be drawn.
#[cfg(feature = "plots")]
fn plots(dir: &Path, r: &Report, files: &mut Vec<PathBuf>) -> Option<String> {
    let g = &r.geometry;
    let closed = |pts: &[Point2<f64>]| -> Vec<(f64, f64)> {
        pts.iter()
            .chain(pts.first())
            .map(|p| (p.x * 1e3, p.y * 1e3))
            .collect()
    };
    let frame = g.outline.frame();
    let aid_equator: Vec<Point2<f64>> = g
        .aid
        .equator
        .iter()
        .map(|p| {
            let l = frame.to_local(p);
            Point2::new(l.x, l.y)
        })
        .collect();
    let path: Vec<(f64, f64)> = r
        .samples
        .iter()
        .map(|s| (s.local.x * 1e3, s.local.y * 1e3))
        .collect();
    let plots = Figure::new(
        "Drill tip over the cut outline (outline frame)",
        "x (mm)",
        "y (mm)",
    )
    .line(
        "outline (shield's inner foot)",
        &closed(g.outline.planar().points()),
    )
    .line("cut line", &closed(g.cut_line.points()))
    .line("cutting aid's equator", &closed(&aid_equator))
    .line("drill tip", &path)
    .equal_axes(true)
    .size(900, 800)
    .save(dir.join("path"))
    .and_then(|(svg, png)| {
        files.push(svg);
        files.push(png);
        let patient: Vec<(f64, f64)> = r
            .samples
            .iter()
            .map(|s| (s.t, s.patient_distance * 1e3))
            .collect();
        let clearance: Vec<(f64, f64)> =
            r.samples.iter().map(|s| (s.t, s.clearance * 1e3)).collect();
        Figure::new(
            "Distances of the drill bit's surface",
            "time (s)",
            "distance (mm)",
        )
        .line("to the patient", &patient)
        .line("to the nearest protection", &clearance)
        .size(1000, 500)
        .save(dir.join("distance"))
    });
    match plots {
        Ok((svg, png)) => {
            files.push(svg);
            files.push(png);
            None
        }
        Err(e) => Some(format!("plots skipped: {e}")),
    }
}
