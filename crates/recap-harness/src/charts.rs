//! SVG charts of a report (plotters, SVG backend only: no fonts or native libraries),
//! for each session form and tokenizer: a form's strategies are compared over that
//! form's sessions only.
//!
//! 1. Prompt tokens per call across turns, one line per strategy (mean over the sessions
//!    that reach each call index; with one session, that session's own curve).
//! 2. Retention against total prompt tokens, one point per strategy or sweep setting,
//!    the Pareto front (no other point has fewer tokens and at least as much retention)
//!    filled and joined — among the strategies that replayed every session of the form
//!    (a strategy replayed on fewer sessions has a hollow marker and is off the front).
//!
//! Each strategy keeps one colour and marker in every chart ([`crate::chart_style`]).

use crate::chart_labels;
use crate::chart_style::{self, SeriesStyle};
use crate::report::{FormGroup, Report, Run, fmt};
use plotters::prelude::*;

/// The retention chart's markers and their names, in pixels.
const MARKER_RADIUS: i32 = 6;
const LABEL_FONT_PX: i32 = 13;

/// A point of the tokens-per-call chart needs this many sessions reaching the call (or
/// every session of the run, when it has fewer): a mean over one or two long sessions
/// would draw a "drop" that is only the other sessions having ended.
pub const MIN_SESSIONS_PER_POINT: u64 = 5;

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

/// One run in a chart: how it is drawn and whether it may be on the Pareto front.
pub struct Series<'a> {
    pub run: &'a Run,
    pub style: SeriesStyle,
    /// It replayed every session of its form (see [`Report::covers_its_form`]).
    pub covers: bool,
}

/// All charts of a report: both kinds per form and tokenizer, named
/// `tokens_per_call_{form}_{tokenizer}.svg` and `retention_vs_tokens_{form}_{tokenizer}.svg`.
pub fn charts(report: &Report) -> Result<Vec<Chart>, ChartError> {
    // One style per strategy, in the order strategies first appear in the report.
    let mut names: Vec<&str> = Vec::new();
    for r in &report.runs {
        if !names.contains(&r.strategy.as_str()) {
            names.push(&r.strategy);
        }
    }
    let styles = chart_style::styles(names.len());
    let style_of = |r: &Run| {
        let i = names.iter().position(|n| *n == r.strategy).unwrap_or(0);
        styles[i]
    };
    let mut out = Vec::new();
    for group in &report.groups {
        let mut tokenizers: Vec<&str> = Vec::new();
        for r in report.runs_of(group) {
            if !tokenizers.contains(&r.tokenizer.as_str()) {
                tokenizers.push(&r.tokenizer);
            }
        }
        for tok in tokenizers {
            let series: Vec<Series> = report
                .runs_of(group)
                .filter(|r| r.tokenizer == tok)
                .map(|run| Series {
                    run,
                    style: style_of(run),
                    covers: report.covers_its_form(run),
                })
                .collect();
            let form = &group.form;
            out.push(Chart {
                file_name: format!("tokens_per_call_{form}_{tok}.svg"),
                svg: tokens_per_call(&series, group, tok)?,
            });
            out.push(Chart {
                file_name: format!("retention_vs_tokens_{form}_{tok}.svg"),
                svg: retention_vs_tokens(&series, group, tok)?,
            });
        }
    }
    Ok(out)
}

/// `PTC-Lisp sessions (37), o200k_base`.
fn subject(group: &FormGroup, tokenizer: &str) -> String {
    format!(
        "{} sessions ({}), {tokenizer}",
        fmt::form_title(&group.form),
        fmt::int(group.sessions)
    )
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
pub fn tokens_per_call(
    series: &[Series],
    group: &FormGroup,
    tokenizer: &str,
) -> Result<String, ChartError> {
    let name = format!("tokens_per_call_{}_{tokenizer}", group.form);
    let e = err(&name);
    // Each run's points that stand on enough sessions.
    let shown: Vec<Vec<&crate::report::CallMean>> =
        series.iter().map(|s| points_shown(s.run)).collect();
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
    let reach: Vec<(f64, f64)> = series
        .iter()
        .map(|s| s.run)
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
                    "Prompt tokens per call: {} (mean over the sessions reaching each call, ≥ {MIN_SESSIONS_PER_POINT})",
                    subject(group, tokenizer)
                ),
                ("sans-serif", 20),
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
            .y_label_formatter(&|v| fmt::float_int(*v))
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
        let reach_grey = RGBColor(160, 160, 160);
        chart
            .draw_secondary_series(LineSeries::new(reach, reach_grey.stroke_width(1)))
            .map_err(|x| e(x.to_string()))?;
        for (s, pts) in series.iter().zip(&shown) {
            let style = s.style;
            let pts: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.call as f64, p.mean_prompt_tokens))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), style.color.stroke_width(2)))
                .map_err(|x| e(x.to_string()))?
                .label(label(s.run))
                .legend(move |at| chart_style::legend(style, at));
            for p in pts {
                chart_style::draw_marker(&root, style, chart.backend_coord(&p), 4, true)
                    .map_err(&e)?;
            }
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

/// The indices of `series` drawn in the scatter (those with a retention) and, among
/// them, those on the Pareto front: only a series that replayed every session of the
/// form competes, since tokens summed over fewer sessions are not comparable.
pub fn front_of(series: &[Series]) -> (Vec<usize>, Vec<usize>) {
    let drawn: Vec<usize> = (0..series.len())
        .filter(|&i| series[i].run.retention.is_some())
        .collect();
    let competing: Vec<usize> = drawn
        .iter()
        .copied()
        .filter(|&i| series[i].covers)
        .collect();
    let xy: Vec<(f64, f64)> = competing.iter().map(|&i| point(series[i].run)).collect();
    let front = pareto_front(&xy)
        .into_iter()
        .map(|k| competing[k])
        .collect();
    (drawn, front)
}

/// (total prompt tokens, retention %).
fn point(r: &Run) -> (f64, f64) {
    (
        r.prompt_tokens_total as f64,
        r.retention.unwrap_or(0.0) * 100.0,
    )
}

/// Scatter: x = total prompt tokens, y = retention; Pareto front filled and joined.
pub fn retention_vs_tokens(
    series: &[Series],
    group: &FormGroup,
    tokenizer: &str,
) -> Result<String, ChartError> {
    let name = format!("retention_vs_tokens_{}_{tokenizer}", group.form);
    let e = err(&name);
    let (drawn, front) = front_of(series);
    let xy: Vec<(f64, f64)> = drawn.iter().map(|&i| point(series[i].run)).collect();
    let max_x = xy.iter().map(|p| p.0).fold(0.0, f64::max).max(1.0) * 1.15;
    let legend_front = format!(
        "Pareto front (filled) among the strategies replayed on all {}; hollow: fewer",
        fmt::plural(group.sessions, "session", "sessions")
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|x| e(x.to_string()))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "Retention vs total prompt tokens: {}",
                    subject(group, tokenizer)
                ),
                ("sans-serif", 22),
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
            .x_label_formatter(&|v| fmt::float_int(*v))
            .y_label_formatter(&|v| format!("{v:.0}%"))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|x| e(x.to_string()))?;
        let mut front_pts: Vec<(f64, f64)> = front.iter().map(|&i| point(series[i].run)).collect();
        front_pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let grey = RGBColor(90, 90, 90);
        chart
            .draw_series(LineSeries::new(front_pts, grey.stroke_width(1)))
            .map_err(|x| e(x.to_string()))?
            .label(legend_front.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(2))
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
        let names: Vec<String> = drawn
            .iter()
            .map(|&i| {
                let r = series[i].run;
                if series[i].covers {
                    label(r)
                } else {
                    format!(
                        "{} ({} of {})",
                        label(r),
                        fmt::int(r.sessions),
                        fmt::int(group.sessions)
                    )
                }
            })
            .collect();
        let pixels: Vec<(i32, i32)> = xy.iter().map(|p| chart.backend_coord(p)).collect();
        let sizes: Vec<(i32, i32)> = names
            .iter()
            .map(|n| chart_labels::text_size(n, LABEL_FONT_PX))
            .collect();
        let offsets = chart_labels::place(&pixels, &sizes, MARKER_RADIUS, area);
        for (n, &i) in drawn.iter().enumerate() {
            let style = series[i].style;
            let on_front = front.contains(&i);
            chart_style::draw_marker(&root, style, pixels[n], MARKER_RADIUS, on_front)
                .map_err(&e)?;
            let text = EmptyElement::at(xy[n])
                + Text::new(
                    names[n].clone(),
                    offsets[n],
                    ("sans-serif", LABEL_FONT_PX)
                        .into_font()
                        .color(&style.color),
                );
            chart
                .draw_series(std::iter::once(text))
                .map_err(|x| e(x.to_string()))?;
        }
        let (text_w, text_h) = chart_labels::text_size(&legend_front, 14);
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
    use crate::report::{CallMean, Settings};

    /// A report of one PTC-Lisp group of 10 sessions with these rows (name, sessions,
    /// tokens, retention).
    fn report(rows: &[(&str, u64, u64, f64)]) -> Report {
        let runs = rows
            .iter()
            .map(|&(name, sessions, tokens, retention)| Run {
                form: "ptc".into(),
                strategy: name.into(),
                tokenizer: "o200k_base".into(),
                sessions,
                calls: sessions * 3,
                prompt_tokens_total: tokens,
                retention: Some(retention),
                prompt_tokens_by_call: (0..3)
                    .map(|call| CallMean {
                        call,
                        sessions,
                        mean_prompt_tokens: (tokens / 3 * (call as u64 + 1)) as f64,
                    })
                    .collect(),
                ..Run::default()
            })
            .collect();
        Report {
            schema_version: crate::report::SCHEMA_VERSION,
            settings: Settings {
                corpora: Vec::new(),
                baseline: "full-history".into(),
                tokenizer_backend: "fast".into(),
                cache_read_ratio: 0.1,
            },
            groups: vec![FormGroup {
                form: "ptc".into(),
                sessions: 10,
                not_replayed: Vec::new(),
            }],
            runs,
            rejected: Vec::new(),
            provenance: None,
            non_deterministic: None,
        }
    }

    /// (fill colour, text) of every `<text>` of an SVG.
    fn texts(svg: &str) -> Vec<(String, String)> {
        svg.split("<text ")
            .skip(1)
            .filter_map(|t| {
                let (attrs, rest) = t.split_once('>')?;
                let fill = attrs.split("fill=\"").nth(1)?.split('"').next()?;
                let text = rest.split("</text>").next()?.trim();
                Some((fill.to_string(), text.to_string()))
            })
            .collect()
    }

    fn chart<'a>(charts: &'a [Chart], prefix: &str) -> &'a str {
        &charts
            .iter()
            .find(|c| c.file_name.starts_with(prefix))
            .unwrap()
            .svg
    }

    #[test]
    fn every_strategy_has_its_own_colour_in_the_svg_however_many() {
        let names: Vec<String> = (0..14).map(|i| format!("strategy-{i:02}")).collect();
        let rows: Vec<(&str, u64, u64, f64)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), 10, 1_000 * (i as u64 + 1), 0.05 * i as f64))
            .collect();
        let charts = charts(&report(&rows)).unwrap();
        let names_in = |svg: &str| -> Vec<(String, String)> {
            texts(svg)
                .into_iter()
                .filter(|(_, t)| t.starts_with("strategy-"))
                .collect()
        };
        // The scatter's labels are drawn in their strategy's colour.
        let labels = names_in(chart(&charts, "retention_vs_tokens_ptc_"));
        assert_eq!(labels.len(), 14);
        let mut colours: Vec<&str> = labels.iter().map(|(c, _)| c.as_str()).collect();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), 14, "{labels:?}");
        // The line chart: one line per strategy, each its own colour, the same as in
        // the scatter.
        let svg = chart(&charts, "tokens_per_call_ptc_");
        let mut strokes: Vec<&str> = svg
            .split("<polyline ")
            .skip(1)
            .filter(|p| p.contains("stroke-width=\"2\""))
            .filter_map(|p| p.split("stroke=\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(strokes.len(), 14);
        strokes.sort_unstable();
        strokes.dedup();
        assert_eq!(strokes, colours);
    }

    #[test]
    fn the_pareto_front_is_only_among_strategies_replayed_on_every_session() {
        // `recorded` on 3 of 10 sessions: fewest tokens, but off the front.
        let rows = [
            ("full-history", 10, 10_000, 1.0),
            ("cheap", 10, 2_000, 0.5),
            ("recorded", 3, 500, 0.9),
        ];
        let r = report(&rows);
        let series: Vec<Series> = r
            .runs
            .iter()
            .map(|run| Series {
                run,
                style: chart_style::styles(1)[0],
                covers: r.covers_its_form(run),
            })
            .collect();
        let (drawn, front) = front_of(&series);
        assert_eq!(drawn, [0, 1, 2]);
        assert_eq!(front, [0, 1]);
        let charts = charts(&r).unwrap();
        let svg = chart(&charts, "retention_vs_tokens_ptc_");
        assert!(
            texts(svg).iter().any(|(_, t)| t == "recorded (3 of 10)"),
            "{:?}",
            texts(svg)
        );
    }

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
