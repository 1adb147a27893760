//! Campaign progress on stderr: a live display redrawn in place on a terminal (cases/s,
//! per-target agree / skip / discrepancy counts, findings, elapsed and remaining time), plain
//! periodic lines otherwise (logs, CI).
//!
//! Hand-written rather than indicatif: what indicatif would replace is [`Progress`]'s redraw
//! (about 20 lines: move up, clear, draw with line wrapping off). The rest of the module is
//! what the display says ([`live_lines`], [`plain_line`], [`Snapshot::remaining`]), which an
//! indicatif template would still be filled from, and the plain mode for logs and CI, which
//! indicatif does not write (it hides its bars when stderr is not a terminal). indicatif 0.18
//! adds 6 crates and 13 s (3.8 s CPU) to a clean debug build on the shared 2-core development
//! machine (`cargo new p && cd p && cargo add indicatif@0.18 && time cargo build`).

use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};
use tcgen05_engine::progress::Snapshot;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Redrawn in place (a terminal).
    Live,
    /// One line every this often.
    Plain(Duration),
    /// Nothing but the final summary.
    Quiet,
}

impl Mode {
    /// Live on a terminal, else a line every `every`.
    pub fn auto(every: Duration) -> Mode {
        if std::io::stderr().is_terminal() {
            Mode::Live
        } else {
            Mode::Plain(every)
        }
    }
}

/// `h:mm:ss` or `m:ss`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

/// What the display says while a stopped campaign finishes up.
pub const STOPPING: &str = "stopping: writing the checkpoint and reports; Ctrl-C again quits now";

/// `s` cut to `width` characters, with `…` as its last one when it was cut.
pub fn shorten(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// The live display, as lines (the header may hold several). Each line is drawn on one row of
/// the terminal: [`Progress`] turns line wrapping off while drawing, so a line wider than the
/// terminal is cut at its edge instead of wrapping onto a row the next redraw would not erase.
pub fn live_lines(header: &str, s: &Snapshot) -> Vec<String> {
    let mut v: Vec<String> = header.lines().map(str::to_string).collect();
    let limit = s.case_limit.map(|n| format!(" / {n}")).unwrap_or_default();
    v.push(format!(
        "  elapsed {}  remaining {}  cases {}{limit}  {:.0} cases/s  findings {}",
        clock(s.elapsed),
        s.remaining().map_or("?".to_string(), clock),
        s.cases,
        s.rate(),
        s.findings
    ));
    // The target column fits the longest name (`sim+ld-num-truncated`, `ptxas@13.5`, ...).
    let w = s
        .targets
        .iter()
        .map(|t| t.target.len())
        .chain([6])
        .max()
        .unwrap_or(6);
    v.push(format!(
        "  {:<w$} {:>9} {:>9} {:>9} {:>13}",
        "target", "cases", "agree", "skip", "discrepancies"
    ));
    for t in &s.targets {
        v.push(format!(
            "  {:<w$} {:>9} {:>9} {:>9} {:>13}",
            t.target,
            t.cases,
            t.agree,
            t.skipped(),
            t.discrepant()
        ));
    }
    if let Some(f) = &s.last_finding {
        // Signatures run long; the display is drawn for 80 columns (the findings are listed
        // in full at the end and in the reports).
        v.push(shorten(&format!("  newest finding: {f}"), 80));
    }
    if s.stopping {
        v.push(format!("  {STOPPING}"));
    }
    v
}

/// One plain progress line.
pub fn plain_line(s: &Snapshot) -> String {
    let per: Vec<String> = s
        .targets
        .iter()
        .map(|t| {
            format!(
                "{}: {} agree, {} skip, {} disc",
                t.target,
                t.agree,
                t.skipped(),
                t.discrepant()
            )
        })
        .collect();
    format!(
        "[{}] cases {} ({:.0}/s) | {} | findings {} | remaining {}",
        clock(s.elapsed),
        s.cases,
        s.rate(),
        per.join("; "),
        s.findings,
        s.remaining().map_or("?".to_string(), clock)
    )
}

/// The progress display of one campaign run.
#[derive(Debug)]
pub struct Progress {
    mode: Mode,
    header: String,
    drawn: usize,
    last_line: Instant,
    said_stopping: bool,
}

impl Progress {
    /// A display with this header line.
    pub fn new(mode: Mode, header: String) -> Self {
        if let Mode::Plain(_) = mode {
            eprintln!("{header}");
        }
        Progress {
            mode,
            header,
            drawn: 0,
            last_line: Instant::now(),
            said_stopping: false,
        }
    }

    fn redraw(&mut self, s: &Snapshot) {
        let lines = live_lines(&self.header, s);
        // Line wrapping off (DECAWM) while drawing: every line takes exactly one row, so moving
        // up `drawn` rows reaches the first one whatever the terminal's width.
        let mut out = String::from("\x1b[?7l");
        if self.drawn > 0 {
            // Up to the first line drawn, and clear to the end of the screen.
            out.push_str(&format!("\x1b[{}A\r\x1b[J", self.drawn));
        }
        for l in &lines {
            out.push_str(l);
            out.push('\n');
        }
        out.push_str("\x1b[?7h");
        self.drawn = lines.len();
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(out.as_bytes());
        let _ = e.flush();
    }
}

impl tcgen05_engine::progress::Progress for Progress {
    fn tick(&self) -> Duration {
        // A quarter second redraws smoothly; plain and quiet modes still need the tick for
        // checkpoints, which are cheap.
        Duration::from_millis(250)
    }

    fn wants_update(&self, stopping: bool) -> bool {
        match self.mode {
            Mode::Live => true,
            Mode::Plain(every) => {
                (stopping && !self.said_stopping) || self.last_line.elapsed() >= every
            }
            Mode::Quiet => false,
        }
    }

    /// Live: redraw; plain: a line when one is due.
    fn update(&mut self, s: &Snapshot) {
        match self.mode {
            Mode::Live => self.redraw(s),
            Mode::Plain(every) => {
                if s.stopping && !self.said_stopping {
                    eprintln!("{STOPPING}");
                    self.said_stopping = true;
                }
                if self.last_line.elapsed() >= every {
                    eprintln!("{}", plain_line(s));
                    self.last_line = Instant::now();
                }
            }
            Mode::Quiet => {}
        }
    }

    fn finish(&mut self, s: &Snapshot) {
        match self.mode {
            Mode::Live => self.redraw(s),
            Mode::Plain(_) => eprintln!("{}", plain_line(s)),
            Mode::Quiet => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap() -> Snapshot {
        Snapshot::sample()
    }

    #[test]
    fn long_lines_are_shortened_with_an_ellipsis() {
        assert_eq!(shorten("abcdef", 6), "abcdef");
        assert_eq!(shorten("abcdefg", 6), "abcde…");
        assert_eq!(shorten("ééééééé", 3).chars().count(), 3);
    }

    #[test]
    fn clocks_read_like_clocks() {
        assert_eq!(clock(Duration::from_secs(65)), "1:05");
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }

    #[test]
    fn the_live_display_shows_what_the_issue_asks() {
        // Cases/s, per-target agree / skip / discrepancy counts, findings so far,
        // elapsed and remaining time.
        let header = "tcgen05-fuzz campaign: seed 0\n  targets sim\n  out o";
        let l = live_lines(header, &snap()).join("\n");
        for want in [
            "elapsed 0:30",
            "remaining 0:20",
            "cases 300 / 500",
            "10 cases/s",
            "findings 2",
            "agree",
            "skip",
            "discrepancies",
        ] {
            assert!(l.contains(want), "no `{want}` in:\n{l}");
        }
        assert_eq!(l.lines().next(), Some("tcgen05-fuzz campaign: seed 0"));
        assert!(!l.contains("stopping"));
        let stopping = Snapshot {
            stopping: true,
            ..snap()
        };
        assert!(
            live_lines(header, &stopping)
                .join("\n")
                .contains("Ctrl-C again")
        );
    }

    #[test]
    fn the_plain_line_names_every_target() {
        let l = plain_line(&snap());
        assert!(l.contains("sim: 0 agree"), "{l}");
        assert!(l.contains("findings 2"), "{l}");
    }
}
