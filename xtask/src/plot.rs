//! SVG line plots for the experiments' figures (plotters, SVG backend: no fonts or system
//! libraries needed beyond what plotters embeds).

use plotters::prelude::*;

/// One line of a plot: a label, points `(x, y)` and optional symmetric error bars.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// `(x, y)` points in x order.
    pub points: Vec<(f64, f64)>,
    /// Standard errors parallel to `points` (empty for none).
    pub errors: Vec<f64>,
}

/// Renders a line plot with markers and a legend to an SVG string.
///
/// # Errors
/// When plotters fails to draw (e.g. no finite points).
#[allow(dead_code)]
pub fn line_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720 + LEGEND_WIDTH, 480)).into_drawing_area();
        root.fill(&WHITE)?;
        let (root, legend) = root.split_horizontally(720);
        let finite = |v: f64| v.is_finite();
        let xs = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .filter(|v| finite(*v));
        let (xmin, xmax) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        let ys = series.iter().flat_map(|s| {
            s.points.iter().enumerate().flat_map(move |(i, p)| {
                let e = s.errors.get(i).copied().unwrap_or(0.0);
                [p.1 - e, p.1 + e]
            })
        });
        let (ymin, ymax) = ys
            .filter(|v| finite(*v))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| {
                (a.min(y), b.max(y))
            });
        anyhow::ensure!(
            xmin.is_finite() && ymin.is_finite(),
            "no finite points to plot"
        );
        let pad = ((ymax - ymin) * 0.08).max(1e-9);
        let xpad = ((xmax - xmin) * 0.02).max(1e-9);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((xmin - xpad)..(xmax + xpad), (ymin - pad)..(ymax + pad))?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()?;
        let mut entries = Vec::new();
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            entries.push((s.label.clone(), color, true, 3));
            chart.draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))?;
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            for (p, e) in s.points.iter().zip(&s.errors) {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(p.0, p.1 - e), (p.0, p.1 + e)],
                    color,
                )))?;
            }
        }
        side_legend(&legend, &entries)?;
        root.present()?;
    }
    Ok(svg)
}

/// Width in pixels of the legend column right of every plot.
const LEGEND_WIDTH: u32 = 200;

/// Draws the legend `entries` (label, colour, with a line, marker radius) in their own
/// column right of the plot, so a legend never covers data.
fn side_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, RGBAColor, bool, u32)],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    for (i, (label, color, line, radius)) in entries.iter().enumerate() {
        let y = 50 + 18 * i32::try_from(i).unwrap_or(i32::MAX / 32);
        if *line {
            area.draw(&PathElement::new(
                vec![(6, y), (26, y)],
                color.stroke_width(2),
            ))?;
        }
        area.draw(&Circle::new((16, y), (*radius).max(3), color.filled()))?;
        area.draw(&Text::new(
            label.clone(),
            (32, y - 6),
            ("sans-serif", 12).into_font(),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_an_svg_with_legend_and_error_bars() {
        let s = vec![
            Series {
                label: "CSMN".into(),
                points: vec![(0.5, 0.2), (0.75, 0.15), (1.0, 0.1)],
                errors: vec![0.01, 0.02, 0.01],
            },
            Series {
                label: "MN".into(),
                points: vec![(0.5, 0.25), (0.75, 0.2), (1.0, 0.3)],
                errors: vec![],
            },
        ];
        let svg = line_plot("cost vs rho", "rho", "cost", &s).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("CSMN") && svg.contains("MN"));
        assert!(line_plot("empty", "x", "y", &[]).is_err());
    }
}

/// One layer of a scatter plot: markers (and optionally a connecting line).
#[derive(Clone, Debug)]
pub struct ScatterLayer {
    /// Legend label (empty: no legend entry).
    pub label: String,
    /// `(x, y)` points (joined in the given order when `line`).
    pub points: Vec<(f64, f64)>,
    /// Marker radius in pixels (0: no markers).
    pub radius: u32,
    /// Whether to join the points by a line.
    pub line: bool,
    /// Palette index of the colour (`Palette99`); `None` = light grey.
    pub color: Option<usize>,
}

/// Renders a scatter plot of `layers` (drawn in order, later layers on top) with a
/// legend to an SVG string; the axes span all finite points.
///
/// # Errors
/// When there is no finite point or plotters fails to draw.
#[allow(dead_code)]
pub fn scatter_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    layers: &[ScatterLayer],
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720 + LEGEND_WIDTH, 540)).into_drawing_area();
        root.fill(&WHITE)?;
        let (root, legend) = root.split_horizontally(720);
        let pts = layers
            .iter()
            .flat_map(|l| l.points.iter())
            .filter(|p| p.0.is_finite() && p.1.is_finite());
        let (xmin, xmax, ymin, ymax) = pts.fold(
            (
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ),
            |(a, b, c, d), p| (a.min(p.0), b.max(p.0), c.min(p.1), d.max(p.1)),
        );
        anyhow::ensure!(
            xmin.is_finite() && ymin.is_finite(),
            "no finite points to plot"
        );
        let xpad = ((xmax - xmin) * 0.05).max(1e-6);
        let ypad = ((ymax - ymin) * 0.05).max(1e-6);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((xmin - xpad)..(xmax + xpad), (ymin - ypad)..(ymax + ypad))?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()?;
        let mut entries = Vec::new();
        for l in layers {
            let color = l.color.map_or(RGBAColor(170, 170, 170, 1.0), |i| {
                Palette99::pick(i).to_rgba()
            });
            let r = l.radius;
            if l.line {
                chart.draw_series(LineSeries::new(
                    l.points.iter().copied(),
                    color.stroke_width(2),
                ))?;
            }
            chart.draw_series(
                l.points
                    .iter()
                    .filter(|_| r > 0)
                    .map(|&p| Circle::new(p, r, color.filled())),
            )?;
            if !l.label.is_empty() {
                entries.push((l.label.clone(), color, l.line, r));
            }
        }
        side_legend(&legend, &entries)?;
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod scatter_tests {
    use super::*;

    #[test]
    fn scatter_plot_renders_layers_and_rejects_empty_input() {
        let layers = vec![
            ScatterLayer {
                label: "subsets".into(),
                points: vec![(0.9, 0.7), (0.95, 0.72), (0.8, 0.75)],
                radius: 2,
                line: false,
                color: None,
            },
            ScatterLayer {
                label: "Pareto frontier".into(),
                points: vec![(0.8, 0.75), (0.95, 0.72)],
                radius: 0,
                line: true,
                color: Some(0),
            },
        ];
        let svg = scatter_plot("Figure 5", "ECA", "CV accuracy", &layers).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("Pareto frontier"));
        assert!(scatter_plot("empty", "x", "y", &[]).is_err());
    }
}
