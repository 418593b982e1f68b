//! Where to put the name of each point of a scatter chart so that names stay readable.
//!
//! Strategies with similar cost and retention (or neighbouring settings of a sweep) land
//! a few pixels apart; names drawn at one fixed offset then print over each other and over
//! the markers. Placement is greedy, in the points' order: each name takes the first of a
//! fixed list of positions around its point whose box stays inside the plot and touches
//! no name placed before it and no marker; when none is free, the position that overlaps
//! least. Everything is in pixels and integers, so the same chart always places its
//! names the same way.

/// A rectangle in pixels: left, top, width, height.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub w: i32,
    pub h: i32,
}

impl Rect {
    fn overlap(&self, other: &Rect) -> i64 {
        let w = (self.x + self.w).min(other.x + other.w) - self.x.max(other.x);
        let h = (self.y + self.h).min(other.y + other.h) - self.y.max(other.y);
        if w <= 0 || h <= 0 {
            0
        } else {
            i64::from(w) * i64::from(h)
        }
    }

    /// How much of `self` lies outside `area`.
    fn outside(&self, area: &Rect) -> i64 {
        i64::from(self.w) * i64::from(self.h) - self.overlap(area)
    }
}

/// The box of a round marker of `radius` centred on `(x, y)`.
fn marker((x, y): (i32, i32), radius: i32) -> Rect {
    Rect {
        x: x - radius,
        y: y - radius,
        w: 2 * radius,
        h: 2 * radius,
    }
}

/// The label's size at a font of `font_px` pixels: sans-serif characters average a
/// little over half the font size in width. Counted in characters, not bytes.
pub fn text_size(text: &str, font_px: i32) -> (i32, i32) {
    let chars = i32::try_from(text.chars().count()).unwrap_or(i32::MAX / 16);
    (chars.saturating_mul(font_px * 11) / 20, font_px)
}

/// The offset of each label's top-left corner from its point, in pixels.
///
/// `points` are the markers' centres, `sizes` the labels' sizes (same order), `radius`
/// the markers' radius, `area` the plot's pixel area.
pub fn place(
    points: &[(i32, i32)],
    sizes: &[(i32, i32)],
    radius: i32,
    area: Rect,
) -> Vec<(i32, i32)> {
    let markers: Vec<Rect> = points.iter().map(|&p| marker(p, radius)).collect();
    let mut placed: Vec<Rect> = Vec::with_capacity(points.len());
    let mut offsets = Vec::with_capacity(points.len());
    for (&(px, py), &(w, h)) in points.iter().zip(sizes) {
        let gap = radius + 4;
        // Right of the point first (the usual reading), then left, above, below, then
        // the same a line further out.
        let candidates = [
            (gap, -h / 2),
            (gap, 0),
            (gap, -h),
            (-gap - w, -h / 2),
            (-gap - w, 0),
            (-gap - w, -h),
            (-w / 2, -gap - h),
            (-w / 2, gap),
            (gap, h),
            (gap, -2 * h),
            (-gap - w, h),
            (-gap - w, -2 * h),
        ];
        let cost = |&(dx, dy): &(i32, i32)| {
            let rect = Rect {
                x: px + dx,
                y: py + dy,
                w,
                h,
            };
            let labels: i64 = placed.iter().map(|r| rect.overlap(r)).sum();
            let marks: i64 = markers.iter().map(|m| rect.overlap(m)).sum();
            // Leaving the plot is worst (the name is cut), then covering a name.
            (rect.outside(&area) * 4 + labels * 2 + marks, rect)
        };
        let mut best: Option<((i32, i32), i64, Rect)> = None;
        for offset in candidates {
            let (c, rect) = cost(&offset);
            if best.as_ref().is_none_or(|b| c < b.1) {
                best = Some((offset, c, rect));
            }
            if c == 0 {
                break;
            }
        }
        let (offset, _, rect) = best.expect("the candidate list is not empty");
        placed.push(rect);
        offsets.push(offset);
    }
    offsets
}

/// A corner of the plot for the legend box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corner {
    LowerRight,
    UpperLeft,
    LowerLeft,
    UpperRight,
}

/// The corner (in this order of preference) where a legend box of `size`, set `margin`
/// pixels inside `area`, covers the least of `obstacles` (markers and placed names):
/// the legend is drawn last and would hide what lies under it.
pub fn legend_corner(obstacles: &[Rect], area: Rect, size: (i32, i32), margin: i32) -> Corner {
    let (w, h) = size;
    let (left, top) = (area.x + margin, area.y + margin);
    let (right, bottom) = (area.x + area.w - margin - w, area.y + area.h - margin - h);
    let boxes = [
        (Corner::LowerRight, right, bottom),
        (Corner::UpperLeft, left, top),
        (Corner::LowerLeft, left, bottom),
        (Corner::UpperRight, right, top),
    ];
    let covered = |&(_, x, y): &(Corner, i32, i32)| {
        let legend = Rect { x, y, w, h };
        obstacles.iter().map(|o| legend.overlap(o)).sum::<i64>()
    };
    // `min_by_key` keeps the first of equal minima: the preferred corner.
    boxes
        .iter()
        .min_by_key(|b| covered(b))
        .map_or(Corner::LowerRight, |b| b.0)
}

/// The label boxes of `place`'s result and the markers, for [`legend_corner`].
pub fn obstacles(
    points: &[(i32, i32)],
    sizes: &[(i32, i32)],
    offsets: &[(i32, i32)],
    radius: i32,
) -> Vec<Rect> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for ((&(x, y), &(w, h)), &(dx, dy)) in points.iter().zip(sizes).zip(offsets) {
        out.push(marker((x, y), radius));
        out.push(Rect {
            x: x + dx,
            y: y + dy,
            w,
            h,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const AREA: Rect = Rect {
        x: 0,
        y: 0,
        w: 1000,
        h: 600,
    };

    fn rect_at(p: (i32, i32), o: (i32, i32), s: (i32, i32)) -> Rect {
        Rect {
            x: p.0 + o.0,
            y: p.1 + o.1,
            w: s.0,
            h: s.1,
        }
    }

    #[test]
    fn a_lone_point_is_labelled_on_its_right() {
        let size = text_size("full-history", 13);
        let offsets = place(&[(500, 300)], &[size], 6, AREA);
        assert_eq!(offsets, [(10, -6)]);
    }

    #[test]
    fn names_of_close_points_do_not_overlap_each_other_or_the_markers() {
        // Four points within a few pixels, as in a sweep of neighbouring settings.
        let points = [(400, 300), (404, 302), (398, 306), (410, 296)];
        let names = [
            "single-user-coalesced",
            "ptc-trim",
            "aggressive",
            "ptc-runner",
        ];
        let sizes: Vec<_> = names.iter().map(|n| text_size(n, 13)).collect();
        let offsets = place(&points, &sizes, 6, AREA);
        let rects: Vec<Rect> = (0..4)
            .map(|i| rect_at(points[i], offsets[i], sizes[i]))
            .collect();
        for (i, a) in rects.iter().enumerate() {
            assert_eq!(a.outside(&AREA), 0, "{} leaves the plot", names[i]);
            for (j, b) in rects.iter().enumerate().skip(i + 1) {
                assert_eq!(a.overlap(b), 0, "{} covers {}", names[i], names[j]);
            }
        }
        // The names do not hide their own marker (the first candidates keep clear of it).
        for (i, r) in rects.iter().enumerate() {
            let (x, y) = points[i];
            let own = Rect {
                x: x - 6,
                y: y - 6,
                w: 12,
                h: 12,
            };
            assert_eq!(r.overlap(&own), 0, "{} covers its marker", names[i]);
        }
    }

    #[test]
    fn a_name_at_the_right_edge_goes_left() {
        let size = text_size("observation-masking", 13);
        let offsets = place(&[(995, 300)], &[size], 6, AREA);
        let rect = rect_at((995, 300), offsets[0], size);
        assert_eq!(rect.outside(&AREA), 0);
        assert!(offsets[0].0 < 0, "{offsets:?}");
    }

    #[test]
    fn placement_is_deterministic() {
        let points: Vec<(i32, i32)> = (0..30)
            .map(|i| (300 + (i * 7) % 40, 200 + (i * 13) % 30))
            .collect();
        let sizes: Vec<_> = (0..30)
            .map(|i| text_size(&format!("rolling-window:window={i}"), 13))
            .collect();
        assert_eq!(
            place(&points, &sizes, 6, AREA),
            place(&points, &sizes, 6, AREA)
        );
    }

    #[test]
    fn the_legend_avoids_the_corner_with_points() {
        let size = (400, 30);
        // Nothing in the way: the preferred corner.
        assert_eq!(legend_corner(&[], AREA, size, 10), Corner::LowerRight);
        // A point low on the right (a cheap strategy at the far end): the next corner.
        let points = [(700, 560)];
        let sizes = [text_size("ptc-runner", 13)];
        let offsets = place(&points, &sizes, 6, AREA);
        let obstacles = obstacles(&points, &sizes, &offsets, 6);
        assert_eq!(legend_corner(&obstacles, AREA, size, 10), Corner::UpperLeft);
        // Points in every corner: the one covering least.
        let everywhere = [
            Rect {
                x: 900,
                y: 570,
                w: 50,
                h: 20,
            },
            Rect {
                x: 20,
                y: 20,
                w: 50,
                h: 20,
            },
            Rect {
                x: 20,
                y: 570,
                w: 10,
                h: 10,
            },
            Rect {
                x: 900,
                y: 20,
                w: 50,
                h: 20,
            },
        ];
        assert_eq!(
            legend_corner(&everywhere, AREA, size, 10),
            Corner::LowerLeft
        );
    }

    #[test]
    fn text_size_counts_characters_not_bytes() {
        assert_eq!(text_size("ééé", 20), text_size("eee", 20));
        assert_eq!(text_size("", 13), (0, 13));
    }
}
