//! Draws a demo figure and histogram into `target/plot_demo/` (a quick visual check).
fn main() -> Result<(), rpq_plot::PlotError> {
    let data: Vec<(f64, f64)> = (0..200)
        .map(|i| (i as f64 * 0.05, (i as f64 * 0.05).sin()))
        .collect();
    let (_, png) = rpq_plot::Figure::new("Demo", "t (s)", "y (m)")
        .line("sin", &data)
        .points(
            "every 10th",
            &data.iter().step_by(10).copied().collect::<Vec<_>>(),
        )
        .save("target/plot_demo/figure")?;
    println!("{}", png.display());
    let (_, png) = rpq_plot::Histogram::new("Errors", "e (mm)", 12)
        .series("index", &[1.0, 1.2, 1.3, 2.0, 2.2, 3.1])
        .series("thumb", &[0.5, 1.1, 1.9, 2.5])
        .save("target/plot_demo/histogram")?;
    println!("{}", png.display());
    Ok(())
}
