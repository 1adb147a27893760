//! `report.md`: the campaign for people.

use super::Summary;
use std::fmt::Write as _;
use tcgen05_oracle::catalogue;

fn pct(n: u64, d: u64) -> String {
    if d == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / d as f64)
    }
}

/// The markdown report of a summary.
pub fn markdown(s: &Summary) -> String {
    let mut m = String::from("# tcgen05-fuzz campaign report\n\n");
    let _ = writeln!(m, "| | |\n| --- | --- |");
    let _ = writeln!(m, "| tool | {} |", s.tool);
    let _ = writeln!(m, "| seed | {} |", s.seed);
    if !s.shards.is_empty() {
        let _ = writeln!(m, "| shards | {} |", s.shards.join(", "));
    }
    let _ = writeln!(m, "| oracle edition | {} |", s.edition);
    let _ = writeln!(m, "| cases | {} |", s.cases);
    let _ = writeln!(
        m,
        "| elapsed | {:.1} s ({:.0} cases/s) |",
        s.elapsed_s,
        s.rate()
    );
    let _ = writeln!(
        m,
        "| status | {} |",
        if s.complete {
            "complete"
        } else {
            "incomplete (interrupted or still running; rerun with the same `--out` to continue)"
        }
    );
    let _ = writeln!(m, "| findings | {} |", s.findings.len());
    m.push_str("\n## Targets\n\n| target | version | cases | agree | skip | discrepancies |\n| --- | --- | ---: | ---: | ---: | ---: |\n");
    for t in &s.targets {
        let _ = writeln!(
            m,
            "| `{}` | {} | {} | {} ({}) | {} ({}) | {} |",
            t.target,
            t.version,
            t.cases,
            t.agree,
            pct(t.agree, t.cases),
            t.skipped(),
            pct(t.skipped(), t.cases),
            t.discrepant()
        );
    }
    if !s.skip_outliers.is_empty() {
        m.push_str("\n**Skip-rate outliers**: a target that skips far more cases for a reason than the other targets on the same cases may hide a bug behind the skip.\n\n");
        for o in &s.skip_outliers {
            let _ = writeln!(m, "- {}", o.describe());
        }
    }
    for t in &s.targets {
        if t.skip.is_empty() && t.discrepancies.is_empty() && t.not_emulated.is_empty() {
            continue;
        }
        let _ = writeln!(m, "\n### `{}`\n", t.target);
        if !t.not_emulated.is_empty() {
            m.push_str("Judged cases run without some MMA results computed, and the observed words whose values those results decide, left out of the compare (every other behaviour compared):\n\n");
            let mut v: Vec<_> = t.not_emulated.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (k, [c, w]) in v {
                let _ = writeln!(m, "- {k}: {c} cases, {w} words");
            }
            m.push('\n');
        }
        if !t.skip.is_empty() {
            m.push_str("Skips by reason:\n\n");
            let mut v: Vec<_> = t.skip.iter().collect();
            v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            for (k, n) in v {
                let _ = write!(m, "- {k}: {n}");
                // The rules, most skips first (a rule-less reason has only `-`).
                let mut rules: Vec<_> = t
                    .skip_rules
                    .get(k)
                    .into_iter()
                    .flatten()
                    .filter(|(r, _)| r.as_str() != "-")
                    .collect();
                rules.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                if !rules.is_empty() {
                    let list: Vec<String> =
                        rules.iter().map(|(r, n)| format!("`{r}` {n}")).collect();
                    let _ = write!(m, " (by rule: {})", list.join(", "));
                }
                m.push('\n');
            }
        }
        if !t.discrepancies.is_empty() {
            m.push_str("\nDiscrepancies by kind:\n\n");
            for (k, n) in &t.discrepancies {
                let _ = writeln!(m, "- {k}: {n}");
            }
        }
    }
    m.push_str("\n## Findings\n\n");
    if s.findings.is_empty() {
        m.push_str("None.\n");
    } else {
        m.push_str("One per discrepancy signature, minimized. Each folder holds the case (binary and PTX), the original, `report.json` and a README.\n\n| id | kind | rule | section | target | size | what differs |\n| --- | --- | --- | --- | --- | --- | --- |\n");
        for f in &s.findings {
            let detail = what_differs(&f.detail.replace('\n', " ")).replace('|', "\\|");
            let _ = writeln!(
                m,
                "| [`{}`]({}/README.md) | {} | {} | {} | `{}` | {} → {}{} | {} |",
                f.id,
                f.folder,
                f.kind,
                f.rule
                    .as_deref()
                    .map_or("-".to_string(), |r| format!("`{r}`")),
                f.section
                    .as_deref()
                    .map_or("-".to_string(), |x| format!("§{x}")),
                f.target,
                f.sizes.0,
                f.sizes.1,
                match f.minimization {
                    None => " (not minimized)",
                    Some(m) if m.timed_out => " (budget spent)",
                    Some(_) => "",
                },
                detail
            );
        }
        m.push_str("\nRerun one:\n\n```sh\n");
        for f in &s.findings {
            let _ = writeln!(m, "{}", f.command);
        }
        m.push_str("```\n\nMake one a regression test: `tcgen05-fuzz corpus promote <folder>`.\n");
    }
    m.push_str("\n## Rule coverage\n\n");
    let un = s.coverage.unexercised();
    let _ = writeln!(
        m,
        "{}. Skipped cases are counted by reason under each target above. The full matrix: [coverage.md](coverage.md), as a heat map: [coverage.svg](coverage.svg).\n",
        s.coverage.headline()
    );
    let only_skipped = s.coverage.only_skipped();
    if !only_skipped.is_empty() {
        m.push_str("<details><summary>Rules exercised only by skipped cases</summary>\n\n");
        for r in only_skipped {
            let _ = writeln!(m, "- `{}` [§{}]", r.as_str(), catalogue::section(r));
        }
        m.push_str("\n</details>\n\n");
    }
    if !un.is_empty() {
        m.push_str("<details><summary>Rules no case exercised</summary>\n\n");
        for r in un {
            let _ = writeln!(m, "- `{}` [§{}]", r.as_str(), catalogue::section(r));
        }
        m.push_str("\n</details>\n");
    }
    m
}

/// A finding's "what differs" cell: its detail cut at a word ([`cut_at_word`], 160
/// characters), keeping the instruction whose record differs
/// ([`crate::diff::observer`]) at the end where the detail names one.
pub fn what_differs(detail: &str) -> String {
    const MAX: usize = 160;
    match crate::diff::observer(detail) {
        Some((head, form)) if detail.chars().count() > MAX => {
            format!("{}; observed by {form}", cut_at_word(head, MAX))
        }
        _ => cut_at_word(detail, MAX),
    }
}

/// `text` cut to at most `max` characters at a word boundary, with `…` where it was cut (never
/// in the middle of a number or a word, unless one word is longer than `max`). For table cells
/// a reader reads; the live progress display cuts at the terminal's width instead.
pub fn cut_at_word(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max.saturating_sub(1)).collect();
    let cut = match head.rfind(' ') {
        Some(i) if i > 0 => &head[..i],
        _ => head.as_str(),
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

#[cfg(test)]
mod tests {
    use super::{cut_at_word, what_differs};

    /// A long detail is cut, but the observing instruction it names stays in the cell.
    #[test]
    fn the_cell_keeps_the_observing_instruction() {
        let ld = "tcgen05.ld.sync.aligned.32x32b.x8.b32";
        let why = "every record is what the program gives with tcgen05.wait::st.sync.aligned \
                   returning before tcgen05.st.sync.aligned.32x32b.x1.b32 reaches TMEM";
        let d =
            format!("cta 0 warp 0 lane 0 observation #1: word 0 differs; {why}; observed by {ld}");
        let cell = what_differs(&d);
        assert!(cell.ends_with(&format!("…; observed by {ld}")), "{cell}");
        let short = format!("word 0 differs; observed by {ld}");
        assert_eq!(what_differs(&short), short);
        let ran = format!("{d} [run 3 of 64, perturbation 0x00000001; 2 run(s) showed it]");
        assert!(what_differs(&ran).ends_with(&format!("; observed by {ld}")));
    }

    #[test]
    fn cells_are_cut_between_words_with_an_ellipsis() {
        let t = "cta 0 warp 1 lane 2 observation #3: expected 0x00001234, observed 0x00005678";
        assert_eq!(cut_at_word(t, 200), t);
        let s = cut_at_word(t, 50);
        assert!(s.chars().count() <= 50, "{s}");
        assert!(s.ends_with('…'), "{s}");
        // Every word kept is whole: the text up to the ellipsis is a prefix ending at a word.
        let kept = s.trim_end_matches('…');
        assert!(t.starts_with(kept), "{s}");
        assert!(
            !t[kept.len()..].starts_with(|c: char| c.is_ascii_alphanumeric()),
            "cut inside a word: {s}"
        );
    }
}
