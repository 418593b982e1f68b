//! How each strategy is drawn: its own colour and marker, the same in every chart of a
//! report, however many strategies there are.
//!
//! The first ten colours are Tableau 10 (the most distinct ten); after them, hues step
//! by the golden angle through three lightness levels, and a colour that comes out
//! equal to one already taken is nudged until it differs, so no two series share one.
//! Shapes cycle through six markers, so series of similar colour still differ in shape.

use plotters::coord::Shift;
use plotters::element::{Circle, PathElement, Polygon};
use plotters::prelude::{DrawingArea, DrawingBackend};
use plotters::style::{Color, RGBColor};

const TABLEAU: [RGBColor; 10] = [
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

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
    Hexagon,
}

const SHAPES: [Shape; 6] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Hexagon,
];

/// How one series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesStyle {
    pub color: RGBColor,
    pub shape: Shape,
}

fn hsl(h: f64, s: f64, l: f64) -> RGBColor {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let x = c * (1.0 - ((h / 60.0) % 2.0 - 1.0).abs());
    let m = l - c / 2.0;
    let (r, g, b) = match (h / 60.0) as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    RGBColor(byte(r), byte(g), byte(b))
}

/// The styles of `n` series: all colours different, shapes cycling.
pub fn styles(n: usize) -> Vec<SeriesStyle> {
    let mut colors: Vec<RGBColor> = Vec::with_capacity(n);
    for i in 0..n {
        let mut c = match TABLEAU.get(i) {
            Some(c) => *c,
            None => {
                let k = i - TABLEAU.len();
                let hue = (k as f64 * 137.507_764) % 360.0;
                let lightness = [0.42, 0.30, 0.55][k % 3];
                hsl(hue, 0.70, lightness)
            }
        };
        while colors.contains(&c) {
            c = RGBColor(c.0, c.1, c.2.wrapping_add(7));
        }
        colors.push(c);
    }
    colors
        .into_iter()
        .enumerate()
        .map(|(i, color)| SeriesStyle {
            color,
            shape: SHAPES[i % SHAPES.len()],
        })
        .collect()
}

/// `#rrggbb`, as the SVG writes colours.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The corners of a polygonal shape of radius `r` around (0, 0), in pixels.
fn corners(shape: Shape, r: i32) -> Vec<(i32, i32)> {
    let h = r * 87 / 100;
    match shape {
        Shape::Circle => Vec::new(),
        Shape::Square => vec![(-h, -h), (h, -h), (h, h), (-h, h)],
        Shape::TriangleUp => vec![(0, -r), (h, r / 2), (-h, r / 2)],
        Shape::Diamond => vec![(0, -r), (r, 0), (0, r), (-r, 0)],
        Shape::TriangleDown => vec![(0, r), (h, -r / 2), (-h, -r / 2)],
        Shape::Hexagon => vec![
            (0, -r),
            (h, -r / 2),
            (h, r / 2),
            (0, r),
            (-h, r / 2),
            (-h, -r / 2),
        ],
    }
}

/// Draws the marker of `style` centred on the pixel `at` of `area`, `r` pixels in
/// radius; filled, or an outline.
pub fn draw_marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    style: SeriesStyle,
    (x, y): (i32, i32),
    r: i32,
    filled: bool,
) -> Result<(), String> {
    let c = style.color;
    let drawn = if style.shape == Shape::Circle {
        let s = if filled {
            c.filled()
        } else {
            c.stroke_width(2)
        };
        area.draw(&Circle::new((x, y), r, s))
    } else {
        let pts: Vec<(i32, i32)> = corners(style.shape, r)
            .into_iter()
            .map(|(dx, dy)| (x + dx, y + dy))
            .collect();
        if filled {
            area.draw(&Polygon::new(pts, c.filled()))
        } else {
            let mut closed = pts.clone();
            closed.push(pts[0]);
            area.draw(&PathElement::new(closed, c.stroke_width(2)))
        }
    };
    drawn.map_err(|e| e.to_string())
}

/// A legend entry: the marker, filled, centred 10 pixels right of `(x, y)`.
pub fn legend(style: SeriesStyle, (x, y): (i32, i32)) -> Polygon<(i32, i32)> {
    let outline = match style.shape {
        // A circle as a 16-gon: one element type for every shape.
        Shape::Circle => (0..16)
            .map(|k| {
                let a = f64::from(k) * std::f64::consts::TAU / 16.0;
                (
                    (5.0 * a.cos()).round() as i32,
                    (5.0 * a.sin()).round() as i32,
                )
            })
            .collect(),
        shape => corners(shape, 5),
    };
    Polygon::new(
        outline
            .into_iter()
            .map(|(dx, dy)| (x + 10 + dx, y + dy))
            .collect::<Vec<_>>(),
        style.color.filled(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_has_its_own_colour_however_many() {
        for n in [1, 10, 11, 40, 300] {
            let s = styles(n);
            let mut colors: Vec<String> = s.iter().map(|s| hex(s.color)).collect();
            colors.sort();
            colors.dedup();
            assert_eq!(colors.len(), n, "{n} series");
        }
        // The eleventh is not the first's blue (the palette used to repeat after ten).
        let s = styles(11);
        assert_ne!(s[10].color, s[0].color);
        assert_ne!(s[10].shape, s[0].shape);
    }

    #[test]
    fn neighbouring_series_differ_in_shape() {
        let s = styles(12);
        for w in s.windows(2) {
            assert_ne!(w[0].shape, w[1].shape);
        }
    }
}
