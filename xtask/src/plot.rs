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
        let root = SVGBackend::with_string(&mut svg, (720, 480)).into_drawing_area();
        root.fill(&WHITE)?;
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
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    color.stroke_width(2),
                ))?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                });
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            for (p, e) in s.points.iter().zip(&s.errors) {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(p.0, p.1 - e), (p.0, p.1 + e)],
                    color,
                )))?;
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
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
