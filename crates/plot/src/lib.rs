//! Small PNG/SVG plots for benchmark, reproduction and calibration outputs.
//!
//! Two kinds of chart cover what the suite draws: a [`Figure`] of line and marker series in
//! the plane (benchmark curves, tool paths, time per query against distance) and a
//! [`Histogram`] of one or more value sets (calibration errors). Each `save("dir/stem")`
//! writes `dir/stem.svg` and `dir/stem.png` (creating `dir`) and returns both paths.
//!
//! ```no_run
//! use rpq_plot::{Figure, Histogram};
//!
//! let path: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, (i as f64 / 10.0).sin())).collect();
//! Figure::new("Tool path", "x (mm)", "y (mm)")
//!     .line("reference", &path)
//!     .points("samples", &path[..10])
//!     .save("target/plots/tool_path")?;
//! Histogram::new("Fingertip error", "error (mm)", 20)
//!     .series("index", &[0.5, 1.2, 0.8, 2.5])
//!     .save("target/plots/errors")?;
//! # Ok::<(), rpq_plot::PlotError>(())
//! ```
//!
//! Text is drawn with a TrueType font found at run time: `$RPQ_PLOT_FONT` if set, else DejaVu
//! Sans or Liberation Sans from the usual system folders. Without one, `save` fails with
//! [`PlotError::NoFont`] (callers treat plots as optional output and keep their CSV/tables).
#![warn(missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

/// Why a plot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// No TrueType font was found for the labels.
    #[error("no TrueType font for plot labels (looked at $RPQ_PLOT_FONT and {0}); set RPQ_PLOT_FONT to a .ttf file")]
    NoFont(String),
    /// A series holds no finite point, or the figure has no series.
    #[error("plot '{0}' has no finite data to draw")]
    NoData(String),
    /// An axis or bin range that cannot be drawn: an end that is NaN or infinite, an empty or
    /// reversed range, or a span too wide for f64 (the axis code would never finish).
    #[error("plot '{title}': cannot draw the {axis} range [{lo}, {hi}] (ends must be finite, lo < hi, span finite)")]
    BadRange {
        /// The plot's title.
        title: String,
        /// Which range: `x`, `y` or `bin`.
        axis: &'static str,
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
    },
    /// The output folder could not be created.
    #[error("cannot create {path}: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The drawing backend failed (file not writable, ...).
    #[error("drawing {path} failed: {message}")]
    Draw {
        /// The file being drawn.
        path: PathBuf,
        /// The backend's message.
        message: String,
    },
}

const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
];

/// Registers a font under "sans-serif" once per process; the result is cached.
fn ensure_font() -> Result<(), PlotError> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(p) = std::env::var_os("RPQ_PLOT_FONT") {
            candidates.push(PathBuf::from(p));
        }
        candidates.extend(FONT_CANDIDATES.iter().map(PathBuf::from));
        for path in &candidates {
            if let Ok(bytes) = std::fs::read(path) {
                // The font registry wants 'static bytes: one font per process, kept for its life.
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return Ok(());
                }
            }
        }
        Err(FONT_CANDIDATES.join(", "))
    })
    .clone()
    .map_err(PlotError::NoFont)
}

/// An axis range (min, max).
type Range = (f64, f64);

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Line,
    Points,
}

#[derive(Debug, Clone)]
struct Series {
    name: String,
    style: Style,
    data: Vec<(f64, f64)>,
}

/// A chart of line and marker series over x-y axes.
#[derive(Debug, Clone)]
pub struct Figure {
    title: String,
    x_label: String,
    y_label: String,
    series: Vec<Series>,
    log_y: bool,
    equal_axes: bool,
    size: (u32, u32),
    x_range: Option<(f64, f64)>,
    y_range: Option<(f64, f64)>,
}

/// The palette: distinguishable on white, in this order.
const COLORS: &[RGBColor] = &[
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

impl Figure {
    /// An empty figure with a title and axis labels (units belong in the labels).
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Figure {
        Figure {
            title: title.to_owned(),
            x_label: x_label.to_owned(),
            y_label: y_label.to_owned(),
            series: Vec::new(),
            log_y: false,
            equal_axes: false,
            size: (900, 600),
            x_range: None,
            y_range: None,
        }
    }

    /// Adds a polyline through `data` in order.
    pub fn line(mut self, name: &str, data: &[(f64, f64)]) -> Figure {
        self.series.push(Series {
            name: name.to_owned(),
            style: Style::Line,
            data: data.to_vec(),
        });
        self
    }

    /// Adds a marker at each point of `data`.
    pub fn points(mut self, name: &str, data: &[(f64, f64)]) -> Figure {
        self.series.push(Series {
            name: name.to_owned(),
            style: Style::Points,
            data: data.to_vec(),
        });
        self
    }

    /// Logarithmic y axis (non-positive values are left out).
    pub fn log_y(mut self, on: bool) -> Figure {
        self.log_y = on;
        self
    }

    /// Same scale on both axes (paths in the plane).
    pub fn equal_axes(mut self, on: bool) -> Figure {
        self.equal_axes = on;
        self
    }

    /// Fixed x range instead of the data's extent.
    pub fn x_range(mut self, min: f64, max: f64) -> Figure {
        self.x_range = Some((min, max));
        self
    }

    /// Fixed y range instead of the data's extent.
    pub fn y_range(mut self, min: f64, max: f64) -> Figure {
        self.y_range = Some((min, max));
        self
    }

    /// Image size in pixels (default 900 × 600).
    pub fn size(mut self, width: u32, height: u32) -> Figure {
        self.size = (width.max(200), height.max(150));
        self
    }

    /// Writes `<stem>.svg` and `<stem>.png`; returns their paths.
    pub fn save(&self, stem: impl AsRef<Path>) -> Result<(PathBuf, PathBuf), PlotError> {
        ensure_font()?;
        let (svg, png) = output_paths(stem.as_ref())?;
        let bounds = self.bounds()?;
        {
            let root = SVGBackend::new(&svg, self.size).into_drawing_area();
            self.draw(&root, bounds).map_err(|m| draw_err(&svg, m))?;
            root.present().map_err(|e| draw_err(&svg, e.to_string()))?;
        }
        {
            let root = BitMapBackend::new(&png, self.size).into_drawing_area();
            self.draw(&root, bounds).map_err(|m| draw_err(&png, m))?;
            root.present().map_err(|e| draw_err(&png, e.to_string()))?;
        }
        Ok((svg, png))
    }

    fn usable(&self, p: &(f64, f64)) -> bool {
        p.0.is_finite() && p.1.is_finite() && (!self.log_y || p.1 > 0.0)
    }

    fn bounds(&self) -> Result<(Range, Range), PlotError> {
        let mut xs = (f64::INFINITY, f64::NEG_INFINITY);
        let mut ys = (f64::INFINITY, f64::NEG_INFINITY);
        for p in self.series.iter().flat_map(|s| s.data.iter()) {
            if self.usable(p) {
                xs = (xs.0.min(p.0), xs.1.max(p.0));
                ys = (ys.0.min(p.1), ys.1.max(p.1));
            }
        }
        if !xs.0.is_finite() {
            return Err(PlotError::NoData(self.title.clone()));
        }
        let mut xr = self.x_range.unwrap_or_else(|| pad(xs, false));
        let mut yr = self.y_range.unwrap_or_else(|| pad(ys, self.log_y));
        if self.equal_axes {
            // Widen the narrower range so one unit spans the same pixels on both axes.
            let plot_w = f64::from(self.size.0) - 110.0;
            let plot_h = f64::from(self.size.1) - 110.0;
            let per_px = ((xr.1 - xr.0) / plot_w).max((yr.1 - yr.0) / plot_h);
            let cx = 0.5 * (xr.0 + xr.1);
            let cy = 0.5 * (yr.0 + yr.1);
            xr = (cx - 0.5 * per_px * plot_w, cx + 0.5 * per_px * plot_w);
            yr = (cy - 0.5 * per_px * plot_h, cy + 0.5 * per_px * plot_h);
        }
        check_range(&self.title, "x", xr, false)?;
        check_range(&self.title, "y", yr, self.log_y)?;
        Ok((xr, yr))
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        (xr, yr): (Range, Range),
    ) -> Result<(), String> {
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut builder = ChartBuilder::on(root);
        builder
            .caption(&self.title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70);
        if self.log_y {
            let mut chart = builder
                .build_cartesian_2d(xr.0..xr.1, (yr.0..yr.1).log_scale())
                .map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .label_style(("sans-serif", 14))
                .draw()
                .map_err(|e| e.to_string())?;
            self.draw_series(&mut chart)?;
            finish_legend(&mut chart, &self.series)
        } else {
            let mut chart = builder
                .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
                .map_err(|e| e.to_string())?;
            chart
                .configure_mesh()
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .label_style(("sans-serif", 14))
                .draw()
                .map_err(|e| e.to_string())?;
            self.draw_series(&mut chart)?;
            finish_legend(&mut chart, &self.series)
        }
    }

    fn draw_series<'a, DB, CT>(&self, chart: &mut ChartContext<'a, DB, CT>) -> Result<(), String>
    where
        DB: DrawingBackend + 'a,
        CT: CoordTranslate<From = (f64, f64)>,
    {
        for (i, s) in self.series.iter().enumerate() {
            let c = color(i);
            let data: Vec<(f64, f64)> = s.data.iter().copied().filter(|p| self.usable(p)).collect();
            let anno = match s.style {
                Style::Line => chart
                    .draw_series(LineSeries::new(data, c.stroke_width(2)))
                    .map_err(|e| e.to_string())?,
                Style::Points => chart
                    .draw_series(data.into_iter().map(|p| Circle::new(p, 3, c.filled())))
                    .map_err(|e| e.to_string())?,
            };
            if !s.name.is_empty() {
                anno.label(s.name.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3))
                });
            }
        }
        Ok(())
    }
}

fn finish_legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    series: &[Series],
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    if series.iter().any(|s| !s.name.is_empty()) {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A histogram of one or more value sets over common bins.
#[derive(Debug, Clone)]
pub struct Histogram {
    title: String,
    x_label: String,
    bins: usize,
    series: Vec<(String, Vec<f64>)>,
    range: Option<(f64, f64)>,
    size: (u32, u32),
}

impl Histogram {
    /// An empty histogram with `bins` equal-width bins (at least 1).
    pub fn new(title: &str, x_label: &str, bins: usize) -> Histogram {
        Histogram {
            title: title.to_owned(),
            x_label: x_label.to_owned(),
            bins: bins.max(1),
            series: Vec::new(),
            range: None,
            size: (900, 600),
        }
    }

    /// Adds a value set; non-finite values are left out.
    pub fn series(mut self, name: &str, values: &[f64]) -> Histogram {
        self.series.push((name.to_owned(), values.to_vec()));
        self
    }

    /// Fixed bin range instead of the data's extent.
    pub fn range(mut self, min: f64, max: f64) -> Histogram {
        self.range = Some((min, max));
        self
    }

    /// Counts per bin of each series, with the bin edges (`bins + 1` values).
    pub fn counts(&self) -> Result<(Vec<f64>, Vec<Vec<usize>>), PlotError> {
        let finite = || {
            self.series
                .iter()
                .flat_map(|(_, v)| v.iter().copied())
                .filter(|v| v.is_finite())
        };
        let (lo, hi) = match self.range {
            Some(r) => r,
            None => {
                let lo = finite().fold(f64::INFINITY, f64::min);
                let hi = finite().fold(f64::NEG_INFINITY, f64::max);
                if !lo.is_finite() {
                    return Err(PlotError::NoData(self.title.clone()));
                }
                pad((lo, hi), false)
            }
        };
        check_range(&self.title, "bin", (lo, hi), false)?;
        let width = (hi - lo) / self.bins as f64;
        let edges: Vec<f64> = (0..=self.bins).map(|i| lo + width * i as f64).collect();
        let counts = self
            .series
            .iter()
            .map(|(_, values)| {
                let mut c = vec![0usize; self.bins];
                for &v in values.iter().filter(|v| v.is_finite()) {
                    if v < lo || v > hi {
                        continue;
                    }
                    let i = (((v - lo) / width) as usize).min(self.bins - 1);
                    c[i] += 1;
                }
                c
            })
            .collect();
        Ok((edges, counts))
    }

    /// Writes `<stem>.svg` and `<stem>.png`; returns their paths.
    pub fn save(&self, stem: impl AsRef<Path>) -> Result<(PathBuf, PathBuf), PlotError> {
        ensure_font()?;
        let (edges, counts) = self.counts()?;
        let (svg, png) = output_paths(stem.as_ref())?;
        {
            let root = SVGBackend::new(&svg, self.size).into_drawing_area();
            self.draw(&root, &edges, &counts)
                .map_err(|m| draw_err(&svg, m))?;
            root.present().map_err(|e| draw_err(&svg, e.to_string()))?;
        }
        {
            let root = BitMapBackend::new(&png, self.size).into_drawing_area();
            self.draw(&root, &edges, &counts)
                .map_err(|m| draw_err(&png, m))?;
            root.present().map_err(|e| draw_err(&png, e.to_string()))?;
        }
        Ok((svg, png))
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        edges: &[f64],
        counts: &[Vec<usize>],
    ) -> Result<(), String> {
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let max = counts.iter().flatten().copied().max().unwrap_or(0).max(1) as f64;
        let (lo, hi) = (edges[0], edges[edges.len() - 1]);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(lo..hi, 0.0..max * 1.1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc("count")
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| e.to_string())?;
        let n = counts.len().max(1) as f64;
        for (k, ((name, _), c)) in self.series.iter().zip(counts).enumerate() {
            let col = color(k);
            // Series side by side inside each bin.
            let bars = c.iter().enumerate().map(move |(i, &count)| {
                let w = (edges[i + 1] - edges[i]) / n;
                let x0 = edges[i] + w * k as f64;
                Rectangle::new([(x0, 0.0), (x0 + w, count as f64)], col.mix(0.8).filled())
            });
            let anno = chart.draw_series(bars).map_err(|e| e.to_string())?;
            if !name.is_empty() {
                anno.label(name.clone()).legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 15, y + 5)], col.filled())
                });
            }
        }
        if self.series.iter().any(|(n, _)| !n.is_empty()) {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 14))
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// Refuses a range the axis code cannot draw: plotters' tick search never ends on an infinite
/// or NaN end, and a span above f64's range turns into one (`glove_calib` hung on an error of
/// 1e300 m). Data points themselves are filtered (non-finite ones are left out); a range is
/// refused with [`PlotError::BadRange`]. Spans are also limited to 1e300 so that padding and
/// tick steps stay finite; a log axis needs a positive lower end.
fn check_range(
    title: &str,
    axis: &'static str,
    (lo, hi): Range,
    log: bool,
) -> Result<(), PlotError> {
    const MAX_SPAN: f64 = 1e300;
    let ok = lo.is_finite()
        && hi.is_finite()
        && lo < hi
        && (hi - lo) <= MAX_SPAN
        && lo.abs().max(hi.abs()) <= MAX_SPAN
        && (!log || lo > 0.0);
    if ok {
        Ok(())
    } else {
        Err(PlotError::BadRange {
            title: title.to_owned(),
            axis,
            lo,
            hi,
        })
    }
}

/// Pads a data range by 5 % (or to a unit-wide range around a single value).
fn pad((lo, hi): (f64, f64), log: bool) -> (f64, f64) {
    if log {
        return (lo / 1.5, hi * 1.5);
    }
    if hi - lo <= f64::EPSILON * lo.abs().max(1.0) {
        let d = 0.5 * lo.abs().max(1.0);
        return (lo - d, hi + d);
    }
    let m = 0.05 * (hi - lo);
    (lo - m, hi + m)
}

fn output_paths(stem: &Path) -> Result<(PathBuf, PathBuf), PlotError> {
    if let Some(dir) = stem.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| PlotError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let mut svg = stem.as_os_str().to_owned();
    svg.push(".svg");
    let mut png = stem.as_os_str().to_owned();
    png.push(".png");
    Ok((PathBuf::from(svg), PathBuf::from(png)))
}

fn draw_err(path: &Path, message: String) -> PlotError {
    PlotError::Draw {
        path: path.to_path_buf(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_counts_every_finite_value_once() {
        let values = [0.0, 0.1, 0.5, 0.99, 1.0, f64::NAN, 2.0];
        let h = Histogram::new("t", "x", 4)
            .range(0.0, 1.0)
            .series("a", &values);
        let (edges, counts) = h.counts().unwrap();
        assert_eq!(edges, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        // 2.0 is outside the range and NaN is not finite; 1.0 falls in the last bin.
        assert_eq!(counts, vec![vec![2, 0, 1, 2]]);
    }

    /// Issue 12 item 6: an infinite (or f64-overflowing) range made plotters' axis code spin
    /// forever (`glove_calib` with tips of 1e300); now a clear error, at once, and no file.
    #[test]
    fn non_finite_or_huge_ranges_are_errors_not_hangs() {
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let dir = tempfile::tempdir().unwrap();
            let stem = dir.path().join("h");
            let results = vec![
                Histogram::new("inf", "e", 10)
                    .range(0.0, f64::INFINITY)
                    .series("a", &[1.0, f64::INFINITY])
                    .save(&stem)
                    .map(|_| ()),
                Histogram::new("nan", "e", 10)
                    .range(f64::NAN, 1.0)
                    .series("a", &[1.0])
                    .save(&stem)
                    .map(|_| ()),
                Histogram::new("wide", "e", 10)
                    .series("a", &[-1e308, 1e308])
                    .save(&stem)
                    .map(|_| ()),
                Figure::new("wide", "x", "y")
                    .line("l", &[(0.0, -1e308), (1.0, 1e308)])
                    .save(&stem)
                    .map(|_| ()),
                Figure::new("fixed", "x", "y")
                    .line("l", &[(0.0, 0.0), (1.0, 1.0)])
                    .x_range(0.0, f64::INFINITY)
                    .save(&stem)
                    .map(|_| ()),
            ];
            let exists = stem.with_extension("png").exists();
            done_tx.send((results, exists)).unwrap();
        });
        let (results, exists) = done_rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("plotting a non-finite range hung");
        for r in results {
            match r {
                Err(PlotError::BadRange { .. } | PlotError::NoFont(_)) => {}
                other => panic!("expected BadRange, got {other:?}"),
            }
        }
        assert!(!exists);
    }

    #[test]
    fn empty_figure_is_an_error_not_a_blank_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = Figure::new("nothing", "x", "y")
            .line("nan", &[(f64::NAN, 1.0)])
            .save(dir.path().join("p"));
        // Either no font on this machine or no data: never Ok.
        assert!(err.is_err());
        assert!(!dir.path().join("p.png").exists());
    }

    #[test]
    fn figure_and_histogram_write_svg_and_png() {
        if ensure_font().is_err() {
            eprintln!("no font on this machine; skipping the drawing test");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<(f64, f64)> = (0..50)
            .map(|i| (i as f64, (i as f64 * 0.2).sin()))
            .collect();
        let (svg, png) = Figure::new("sine", "t (s)", "y (m)")
            .line("y", &data)
            .points("samples", &data[..5])
            .equal_axes(true)
            .save(dir.path().join("sub/fig"))
            .unwrap();
        let svg_text = std::fs::read_to_string(&svg).unwrap();
        assert!(svg_text.contains("<svg") && svg_text.contains("sine"));
        let png_bytes = std::fs::read(&png).unwrap();
        assert_eq!(&png_bytes[1..4], b"PNG");
        let (_, png) = Histogram::new("errors", "e (mm)", 10)
            .series("a", &[1.0, 2.0, 2.5, 3.0])
            .series("b", &[1.5, 1.6])
            .save(dir.path().join("hist"))
            .unwrap();
        assert!(std::fs::metadata(png).unwrap().len() > 1000);
        let (_, png) = Figure::new("log", "n", "t (s)")
            .log_y(true)
            .line("t", &[(1.0, 1e-6), (2.0, 1e-3), (3.0, 0.0)])
            .save(dir.path().join("log"))
            .unwrap();
        assert!(png.exists());
    }
}
