//! The rule-coverage matrix as an SVG heat map: one row per rule (catalogue order), for each
//! target four columns (cases, agree, skip, discrepancies). Written by hand, no dependencies.
//!
//! Colours: the *cases* column is blue, darker for more cases (log scale, so one case is
//! already visible and the busiest rule is darkest); *agree* is green and *skip* amber, by their
//! share of the rule's cases; *disc.* is red whenever it is not zero. A rule no case exercised
//! is a pale grey row with a dash: the gaps of the generator are the point of the picture.

use super::Summary;
use super::behaviours::Behaviours;
use super::coverage::Coverage;
use std::fmt::Write as _;
use tcgen05_ir::RuleId;
use tcgen05_oracle::catalogue;

/// Row height in pixels (fits the 11 px font with a little air).
const ROW_H: u32 = 15;
/// Width of the rule-name column (the longest names are about 30 characters of 6.6 px).
const LABEL_W: u32 = 250;
/// Width of the kind column.
const KIND_W: u32 = 80;
/// Width of one count column (numbers up to 9 digits).
const COL_W: u32 = 62;
/// Gap between targets.
const GAP: u32 = 10;
/// Height of the title and the column headers.
const HEAD_H: u32 = 78;
/// Width the legend line needs.
const LEGEND_W: u32 = 1080;
/// Height of the legend below the table.
const FOOT_H: u32 = 44;

/// The title line of a summary's heat map.
pub fn title(s: &Summary) -> String {
    format!(
        "tcgen05-fuzz rule coverage: {} cases, seed {}{}, edition {}",
        s.cases,
        s.seed,
        if s.shards.is_empty() {
            String::new()
        } else {
            format!(", shards {}", s.shards.join(" "))
        },
        s.edition
    )
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Linear blend from white to `rgb` by `t` in [0, 1].
fn shade(rgb: (u8, u8, u8), t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let mix = |c: u8| (255.0 - (255.0 - f64::from(c)) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(rgb.0), mix(rgb.1), mix(rgb.2))
}

const BLUE: (u8, u8, u8) = (33, 102, 172);
const GREEN: (u8, u8, u8) = (26, 150, 65);
const AMBER: (u8, u8, u8) = (230, 150, 20);
const RED: (u8, u8, u8) = (215, 25, 28);
const EMPTY: &str = "#eeeeee";

/// Text colour readable on a cell of intensity `t`.
fn ink(t: f64) -> &'static str {
    if t > 0.6 { "#ffffff" } else { "#111111" }
}

/// The heat map of `c`, titled `title`.
pub fn svg(c: &Coverage, title: &str) -> String {
    svg_with(c, &Behaviours(vec![]), title)
}

/// The heat map of `c`, then (when `b` has rows) the behaviour table below it: per behaviour,
/// cases (blue, log scale) and the share observed exactly (green; a red-bordered cell where
/// no case observed it).
pub fn svg_with(c: &Coverage, b: &Behaviours, title: &str) -> String {
    let nt = c.targets.len().max(1) as u32;
    let block = 4 * COL_W + GAP;
    // The legend is one line of about 130 characters of 7 px plus its swatches.
    let width = (LABEL_W + KIND_W + nt * block + 10).max(LEGEND_W);
    let rows = RuleId::ALL.len() as u32;
    let b_h = if b.0.is_empty() {
        0
    } else {
        HEAD_H / 2 + b.0.len() as u32 * ROW_H + 10
    };
    let height = HEAD_H + rows * ROW_H + FOOT_H + b_h;
    let max_cases = (0..c.targets.len())
        .flat_map(|t| RuleId::ALL.iter().map(move |r| (t, *r)))
        .map(|(t, r)| c.cell(r, t).cases)
        .max()
        .unwrap_or(0)
        .max(1);
    let log_max = ((max_cases + 1) as f64).ln();
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r##"<rect width="{width}" height="{height}" fill="#ffffff"/>"##
    );
    let _ = writeln!(
        s,
        r#"<text x="8" y="20" font-size="14" font-weight="bold">{}</text>"#,
        esc(title)
    );
    let _ = writeln!(
        s,
        r#"<text x="8" y="38">{}; rows are the rules catalogue (reference §6) in order</text>"#,
        esc(&c.headline())
    );
    let hy = HEAD_H - 8;
    let _ = writeln!(s, r#"<text x="8" y="{hy}" font-weight="bold">rule</text>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{hy}" font-weight="bold">kind</text>"#,
        LABEL_W
    );
    for (k, t) in c.targets.iter().enumerate() {
        let x0 = LABEL_W + KIND_W + k as u32 * block;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" font-weight="bold" text-anchor="middle">{}</text>"#,
            x0 + 2 * COL_W,
            HEAD_H - 26,
            esc(t)
        );
        let _ = writeln!(
            s,
            r##"<line x1="{x0}" y1="{}" x2="{}" y2="{}" stroke="#555555"/>"##,
            HEAD_H - 21,
            x0 + 4 * COL_W,
            HEAD_H - 21
        );
        for (j, h) in ["cases", "agree", "skip", "disc."].iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{hy}" text-anchor="middle">{h}</text>"#,
                x0 + j as u32 * COL_W + COL_W / 2
            );
        }
    }
    for (i, r) in RuleId::ALL.iter().enumerate() {
        let y = HEAD_H + i as u32 * ROW_H;
        let ty = y + ROW_H - 4;
        if i % 2 == 1 {
            let _ = writeln!(
                s,
                r##"<rect x="0" y="{y}" width="{}" height="{ROW_H}" fill="#f7f7f7"/>"##,
                LABEL_W + KIND_W
            );
        }
        let row = catalogue::row(*r);
        let _ = writeln!(
            s,
            r#"<text x="8" y="{ty}"><title>{} [§{}]: {}</title>{}</text>"#,
            r.as_str(),
            esc(catalogue::section(*r)),
            esc(row.rule),
            r.as_str()
        );
        let kind = row.kind_text.split([' ', '(', '/']).next().unwrap_or("");
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{ty}" fill="#555555">{}</text>"##,
            LABEL_W,
            esc(kind)
        );
        for k in 0..c.targets.len() {
            let x0 = LABEL_W + KIND_W + k as u32 * block;
            let cell = c.cell(*r, k);
            if cell.cases == 0 {
                let _ = writeln!(
                    s,
                    r##"<rect x="{x0}" y="{y}" width="{}" height="{}" fill="{EMPTY}"/><text x="{}" y="{ty}" text-anchor="middle" fill="#999999">–</text>"##,
                    4 * COL_W - 1,
                    ROW_H - 1,
                    x0 + 2 * COL_W
                );
                continue;
            }
            let frac = |n: u64| n as f64 / cell.cases as f64;
            let tc = ((cell.cases + 1) as f64).ln() / log_max;
            let cols = [
                (cell.cases, shade(BLUE, 0.15 + 0.85 * tc), 0.15 + 0.85 * tc),
                (cell.agree, shade(GREEN, frac(cell.agree)), frac(cell.agree)),
                (cell.skip, shade(AMBER, frac(cell.skip)), frac(cell.skip)),
                if cell.discrepancy > 0 {
                    let t = 0.55 + 0.45 * frac(cell.discrepancy);
                    (cell.discrepancy, shade(RED, t), t)
                } else {
                    (0, "#ffffff".to_string(), 0.0)
                },
            ];
            for (j, (n, fill, t)) in cols.iter().enumerate() {
                let x = x0 + j as u32 * COL_W;
                let _ = writeln!(
                    s,
                    r##"<rect x="{x}" y="{y}" width="{}" height="{}" fill="{fill}" stroke="#dddddd" stroke-width="0.5"/><text x="{}" y="{ty}" text-anchor="end" fill="{}">{n}</text>"##,
                    COL_W - 1,
                    ROW_H - 1,
                    x + COL_W - 5,
                    ink(*t)
                );
            }
        }
    }
    let fy = HEAD_H + rows * ROW_H + 18;
    let legend = [
        (
            shade(BLUE, 0.8),
            "cases exercising the rule (darker: more, log scale)",
        ),
        (shade(GREEN, 0.8), "agree (share)"),
        (shade(AMBER, 0.8), "skip (share)"),
        (shade(RED, 0.9), "discrepancy"),
        (EMPTY.to_string(), "not exercised"),
    ];
    let mut x = 8;
    for (fill, what) in legend {
        let _ = writeln!(
            s,
            r##"<rect x="{x}" y="{}" width="12" height="12" fill="{fill}" stroke="#999999" stroke-width="0.5"/><text x="{}" y="{fy}">{}</text>"##,
            fy - 10,
            x + 16,
            esc(what)
        );
        x += 16 + 7 * what.chars().count() as u32 + 14;
    }
    if !b.0.is_empty() {
        behaviour_rows(&mut s, b, HEAD_H + rows * ROW_H + FOOT_H);
    }
    s.push_str("</svg>\n");
    s
}

/// The behaviour table from height `y0`: name, cases, observed exactly.
fn behaviour_rows(s: &mut String, b: &Behaviours, y0: u32) {
    let seen = b.0.len() - b.unobserved().len();
    let _ = writeln!(
        s,
        r#"<text x="8" y="{}" font-weight="bold">behaviours: {seen} of {} observed exactly (cases | observed exactly)</text>"#,
        y0 + 14,
        b.0.len()
    );
    let max = b.0.iter().map(|r| r.cases).max().unwrap_or(0).max(1);
    let log_max = ((max + 1) as f64).ln();
    for (i, r) in b.0.iter().enumerate() {
        let y = y0 + HEAD_H / 2 + i as u32 * ROW_H;
        let ty = y + ROW_H - 4;
        let _ = writeln!(s, r#"<text x="8" y="{ty}">{}</text>"#, esc(&r.name));
        let x0 = LABEL_W + KIND_W;
        if r.cases == 0 {
            let _ = writeln!(
                s,
                r##"<rect x="{x0}" y="{y}" width="{}" height="{}" fill="{EMPTY}"/><text x="{}" y="{ty}" text-anchor="middle" fill="#999999">–</text>"##,
                2 * COL_W - 1,
                ROW_H - 1,
                x0 + COL_W
            );
            continue;
        }
        let tc = 0.15 + 0.85 * ((r.cases + 1) as f64).ln() / log_max;
        let to = r.observed_exact as f64 / r.cases as f64;
        let stroke = if r.observed_exact == 0 {
            shade(RED, 1.0)
        } else {
            "#dddddd".into()
        };
        for (j, (n, fill, t)) in [
            (r.cases, shade(BLUE, tc), tc),
            (r.observed_exact, shade(GREEN, to), to),
        ]
        .iter()
        .enumerate()
        {
            let x = x0 + j as u32 * COL_W;
            let _ = writeln!(
                s,
                r##"<rect x="{x}" y="{y}" width="{}" height="{}" fill="{fill}" stroke="{stroke}" stroke-width="{}"/><text x="{}" y="{ty}" text-anchor="end" fill="{}">{n}</text>"##,
                COL_W - 1,
                ROW_H - 1,
                if j == 1 && r.observed_exact == 0 {
                    1.5
                } else {
                    0.5
                },
                x + COL_W - 5,
                ink(*t)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{Discrepancy, DiscrepancyKind, Verdict};
    use crate::report::RuleSet;

    #[test]
    fn every_rule_is_a_row_and_discrepancies_are_red() {
        let mut c = Coverage::new(&["sim".to_string()]);
        let mut s = RuleSet::default();
        s.insert(RuleId::ALL[1]);
        let d = Verdict::Discrepancy(Discrepancy {
            kind: DiscrepancyKind::TrapOnDefined,
            rules: vec![],
            forms: vec![],
            key: None,
            detail: String::new(),
        });
        c.record(&s, 0, &d);
        let svg = svg(&c, "t <&>");
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("t &lt;&amp;&gt;"));
        for r in RuleId::ALL {
            assert!(svg.contains(&format!(">{}</text>", r.as_str())), "{r:?}");
        }
        // One discrepancy out of one case: full red.
        assert!(svg.contains(&shade(RED, 1.0)));
    }

    #[test]
    fn every_behaviour_is_a_row_below_the_rules() {
        let c = Coverage::new(&["sim".to_string()]);
        let b = Behaviours::default();
        let svg = svg_with(&c, &b, "t");
        assert!(svg.trim_end().ends_with("</svg>"));
        for r in &b.0 {
            assert!(
                svg.contains(&format!(">{}</text>", esc(&r.name))),
                "{}",
                r.name
            );
        }
        assert!(svg.len() > super::svg(&c, "t").len());
    }

    #[test]
    fn shade_blends_from_white() {
        assert_eq!(shade(RED, 0.0), "#ffffff");
        assert_eq!(shade((0, 0, 0), 1.0), "#000000");
    }
}
