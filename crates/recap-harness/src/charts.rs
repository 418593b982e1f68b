//! SVG charts of a report (plotters, SVG backend only: no fonts or native libraries).
//!
//! 1. Prompt tokens per call across turns, one line per strategy (mean over the sessions
//!    that reach each call index; with one session, that session's own curve).
//! 2. Retention against total prompt tokens, one point per strategy or sweep setting,
//!    the Pareto front (no other point has fewer tokens and at least as much retention)
//!    filled and joined.

use crate::chart_labels;
use crate::report::{Report, Run};
use plotters::prelude::*;

/// The retention chart's markers and their names, in pixels.
const MARKER_RADIUS: i32 = 6;
const LABEL_FONT_PX: i32 = 13;
const LEGEND_FRONT: &str = "Pareto front (filled: no point has fewer tokens and more retention)";

/// Tableau 10: the most distinct ten; past them the marker shape tells series apart.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A point of the tokens-per-call chart needs this many sessions reaching the call (or
/// every session of the run, when it has fewer): a mean over one or two long sessions
/// would draw a "drop" that is only the other sessions having ended.
pub const MIN_SESSIONS_PER_POINT: u64 = 5;

/// The marker of series `i`: the colours repeat after the palette, the shapes tell
/// those series apart (a sweep easily has 15 settings).
fn marker<DB: DrawingBackend>(
    i: usize,
    p: (f64, f64),
    c: RGBColor,
) -> DynElement<'static, DB, (f64, f64)> {
    match (i / PALETTE.len()) % 3 {
        0 => Circle::new(p, 3, c.filled()).into_dyn(),
        1 => TriangleMarker::new(p, 5, c.filled()).into_dyn(),
        _ => Cross::new(p, 4, c.stroke_width(2)).into_dyn(),
    }
}

const SIZE: (u32, u32) = (1000, 640);

#[derive(Debug, thiserror::Error)]
#[error("drawing chart {chart}: {message}")]
pub struct ChartError {
    pub chart: String,
    pub message: String,
}

fn err(chart: &str) -> impl Fn(String) -> ChartError + '_ {
    move |message| ChartError {
        chart: chart.to_string(),
        message,
    }
}

/// One chart: its file name and SVG text.
pub struct Chart {
    pub file_name: String,
    pub svg: String,
}

/// All charts of a report: both kinds per tokenizer.
pub fn charts(report: &Report) -> Result<Vec<Chart>, ChartError> {
    let mut tokenizers: Vec<&str> = Vec::new();
    for r in &report.runs {
        if !tokenizers.contains(&r.tokenizer.as_str()) {
            tokenizers.push(&r.tokenizer);
        }
    }
    let mut out = Vec::new();
    for tok in tokenizers {
        let runs: Vec<&Run> = report.runs.iter().filter(|r| r.tokenizer == tok).collect();
        out.push(Chart {
            file_name: format!("tokens_per_call_{tok}.svg"),
            svg: tokens_per_call(&runs, tok)?,
        });
        out.push(Chart {
            file_name: format!("retention_vs_tokens_{tok}.svg"),
            svg: retention_vs_tokens(&runs, tok)?,
        });
    }
    Ok(out)
}

fn label(r: &Run) -> String {
    if r.implicit {
        format!("{} (baseline)", r.strategy)
    } else {
        r.strategy.clone()
    }
}

/// The calls of a run that stand on enough sessions to be drawn.
pub fn points_shown(r: &Run) -> Vec<&crate::report::CallMean> {
    let least = MIN_SESSIONS_PER_POINT.min(r.sessions).max(1);
    r.prompt_tokens_by_call
        .iter()
        .filter(|c| c.sessions >= least)
        .collect()
}

/// Line chart: x = call index (turns completed), y = mean prompt tokens.
pub fn tokens_per_call(runs: &[&Run], tokenizer: &str) -> Result<String, ChartError> {
    let name = format!("tokens_per_call_{tokenizer}");
    let e = err(&name);
    // Each run's points that stand on enough sessions.
    let shown: Vec<Vec<&crate::report::CallMean>> = runs.iter().map(|r| points_shown(r)).collect();
    let max_call = shown
        .iter()
        .map(|pts| pts.last().map_or(0, |c| c.call + 1))
        .max()
        .unwrap_or(0)
        .max(2);
    let max_y = shown
        .iter()
        .flatten()
        .map(|c| c.mean_prompt_tokens)
        .fold(0.0f64, f64::max)
        .max(1.0)
        * 1.08;
    // How many sessions each call stands on (the largest run's count), drawn in grey
    // on the right-hand axis.
    let reach: Vec<(f64, f64)> = runs
        .iter()
        .max_by_key(|r| r.sessions)
        .map(|r| {
            r.prompt_tokens_by_call
                .iter()
                .take(max_call)
                .map(|c| (c.call as f64, c.sessions as f64))
                .collect()
        })
        .unwrap_or_default();
    let max_reach = reach.iter().map(|p| p.1).fold(1.0f64, f64::max) * 1.08;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(x.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "Prompt tokens per call ({tokenizer}; mean over the sessions reaching each call, ≥ {MIN_SESSIONS_PER_POINT})"
                ),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .right_y_label_area_size(64)
            .build_cartesian_2d(0f64..(max_call - 1) as f64, 0f64..max_y)
            .map_err(|x| e(x.to_string()))?
            .set_secondary_coord(0f64..(max_call - 1) as f64, 0f64..max_reach);
        chart
            .configure_mesh()
            .x_desc("call (turns completed before it)")
            .y_desc("prompt tokens")
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| crate::report::fmt::float_int(*v))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|x| e(x.to_string()))?;
        chart
            .configure_secondary_axes()
            .y_desc("sessions reaching the call (grey)")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .draw()
            .map_err(|x| e(x.to_string()))?;
        let grey = RGBColor(160, 160, 160);
        chart
            .draw_secondary_series(LineSeries::new(reach, grey.stroke_width(1)))
            .map_err(|x| e(x.to_string()))?;
        for (i, (r, pts)) in runs.iter().zip(&shown).enumerate() {
            let c = color(i);
            let pts: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.call as f64, p.mean_prompt_tokens))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))
                .map_err(|x| e(x.to_string()))?
                .label(label(r))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(3))
                });
            chart
                .draw_series(pts.into_iter().map(|p| marker(i, p, c)))
                .map_err(|x| e(x.to_string()))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|x| e(x.to_string()))?;
        root.present().map_err(|x| e(x.to_string()))?;
    }
    Ok(svg)
}

/// Indices of the points on the Pareto front (minimise x, maximise y).
pub fn pareto_front(points: &[(f64, f64)]) -> Vec<usize> {
    (0..points.len())
        .filter(|&i| {
            let (x, y) = points[i];
            !points
                .iter()
                .enumerate()
                .any(|(j, &(xj, yj))| j != i && xj <= x && yj >= y && (xj < x || yj > y))
        })
        .collect()
}

/// Scatter: x = total prompt tokens, y = retention; Pareto front filled and joined.
pub fn retention_vs_tokens(runs: &[&Run], tokenizer: &str) -> Result<String, ChartError> {
    let name = format!("retention_vs_tokens_{tokenizer}");
    let e = err(&name);
    let pts: Vec<(usize, f64, f64)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            r.retention
                .map(|ret| (i, r.prompt_tokens_total as f64, ret * 100.0))
        })
        .collect();
    let xy: Vec<(f64, f64)> = pts.iter().map(|p| (p.1, p.2)).collect();
    let front = pareto_front(&xy);
    let max_x = xy.iter().map(|p| p.0).fold(0.0, f64::max).max(1.0) * 1.15;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(x.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Retention vs total prompt tokens ({tokenizer})"),
                ("sans-serif", 24),
            )
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..max_x, 0f64..105f64)
            .map_err(|x| e(x.to_string()))?;
        chart
            .configure_mesh()
            .x_desc("total prompt tokens (all calls, all sessions)")
            .y_desc("retention (% of facts kept verbatim)")
            .x_label_formatter(&|v| crate::report::fmt::float_int(*v))
            .y_label_formatter(&|v| format!("{v:.0}%"))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|x| e(x.to_string()))?;
        let mut front_pts: Vec<(f64, f64)> = front.iter().map(|&i| xy[i]).collect();
        front_pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(
                front_pts,
                RGBColor(90, 90, 90).stroke_width(1),
            ))
            .map_err(|x| e(x.to_string()))?
            .label(LEGEND_FRONT)
            .legend(|(x, y)| {
                PathElement::new(
                    vec![(x, y), (x + 20, y)],
                    RGBColor(90, 90, 90).stroke_width(2),
                )
            });
        // Names go where they cover neither each other nor a marker (close points are
        // common: similar strategies, neighbouring sweep settings).
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        let area = chart_labels::Rect {
            x: xs.start,
            y: ys.start,
            w: xs.end - xs.start,
            h: ys.end - ys.start,
        };
        let names: Vec<String> = pts.iter().map(|&(i, _, _)| label(runs[i])).collect();
        let pixels: Vec<(i32, i32)> = pts
            .iter()
            .map(|&(_, x, y)| chart.backend_coord(&(x, y)))
            .collect();
        let sizes: Vec<(i32, i32)> = names
            .iter()
            .map(|n| chart_labels::text_size(n, LABEL_FONT_PX))
            .collect();
        let offsets = chart_labels::place(&pixels, &sizes, MARKER_RADIUS, area);
        for (n, &(i, x, y)) in pts.iter().enumerate() {
            let c = color(i);
            let on_front = front.contains(&n);
            let style = if on_front {
                c.filled()
            } else {
                c.stroke_width(2)
            };
            let point = EmptyElement::at((x, y))
                + Circle::new((0, 0), MARKER_RADIUS, style)
                + Text::new(
                    names[n].clone(),
                    offsets[n],
                    ("sans-serif", LABEL_FONT_PX).into_font().color(&c),
                );
            chart
                .draw_series(std::iter::once(point))
                .map_err(|x| e(x.to_string()))?;
        }
        let (text_w, text_h) = chart_labels::text_size(LEGEND_FRONT, 14);
        let obstacles = chart_labels::obstacles(&pixels, &sizes, &offsets, MARKER_RADIUS);
        // The legend box: its line sample, padding, the text.
        let corner = chart_labels::legend_corner(&obstacles, area, (text_w + 50, text_h + 20), 10);
        chart
            .configure_series_labels()
            .position(match corner {
                chart_labels::Corner::LowerRight => SeriesLabelPosition::LowerRight,
                chart_labels::Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
                chart_labels::Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
                chart_labels::Corner::UpperRight => SeriesLabelPosition::UpperRight,
            })
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(|x| e(x.to_string()))?;
        root.present().map_err(|x| e(x.to_string()))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::CallMean;

    #[test]
    fn calls_reached_by_few_sessions_are_not_drawn() {
        let by_call: Vec<CallMean> = [40, 40, 12, 5, 4, 1]
            .iter()
            .enumerate()
            .map(|(call, &sessions)| CallMean {
                call,
                sessions,
                mean_prompt_tokens: 100.0 * (call + 1) as f64,
            })
            .collect();
        let mut run = Run {
            sessions: 40,
            prompt_tokens_by_call: by_call,
            ..Run::default()
        };
        let calls: Vec<usize> = points_shown(&run).iter().map(|c| c.call).collect();
        assert_eq!(calls, [0, 1, 2, 3]);
        // A run of fewer sessions than the minimum asks for all of them, no more.
        run.sessions = 2;
        assert_eq!(points_shown(&run).len(), 5);
    }

    #[test]
    fn pareto_front_minimises_tokens_maximises_retention() {
        let pts = [
            (10.0, 50.0),
            (20.0, 90.0),
            (30.0, 80.0),
            (5.0, 50.0),
            (20.0, 90.0),
        ];
        // (10, 50) is dominated by (5, 50); (30, 80) by (20, 90); equal points both stay.
        assert_eq!(pareto_front(&pts), vec![1, 3, 4]);
    }
}
