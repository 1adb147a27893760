//! JUnit XML for CI dashboards: one test suite per target, one failing test per finding
//! signature, and one passing test per target that says how many cases agreed (so a clean run
//! shows up as green, not as empty).
//!
//! Hand-written rather than quick-junit: the writer is [`junit`] and [`xml_escape`], about 100
//! lines; quick-junit 0.8 adds 20 crates (chrono, uuid, quick-xml, indexmap,
//! strip-ansi-escapes, ...) and 54 s (11.7 s CPU) to a clean debug build on the shared 2-core
//! development machine (`cargo new p && cd p && cargo add quick-junit@0.8 && time cargo
//! build`), for the same XML.

use super::Summary;
use std::fmt::Write as _;

/// Escapes text for an XML attribute or element.
pub fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // XML 1.0 forbids most control characters, even escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => o.push('?'),
            c => o.push(c),
        }
    }
    o
}

/// The JUnit XML of a summary.
pub fn junit(s: &Summary) -> String {
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let total_tests = s.targets.len() + s.findings.len();
    let _ = writeln!(
        x,
        r#"<testsuites name="tcgen05-fuzz campaign" tests="{total_tests}" failures="{}" time="{:.3}">"#,
        s.findings.len(),
        s.elapsed_s
    );
    for t in &s.targets {
        let findings: Vec<_> = s.findings.iter().filter(|f| f.target == t.target).collect();
        let _ = writeln!(
            x,
            r#"  <testsuite name="{}" tests="{}" failures="{}" skipped="0">"#,
            xml_escape(&t.target),
            findings.len() + 1,
            findings.len()
        );
        let _ = writeln!(
            x,
            r#"    <testcase classname="tcgen05-fuzz.{0}" name="{0}: {1} cases, {2} agree, {3} skipped, {4} discrepancies"/>"#,
            xml_escape(&t.target),
            t.cases,
            t.agree,
            t.skipped(),
            t.discrepant()
        );
        for f in findings {
            let _ = writeln!(
                x,
                r#"    <testcase classname="tcgen05-fuzz.{}" name="{}">"#,
                xml_escape(&t.target),
                xml_escape(&f.signature)
            );
            let _ = writeln!(
                x,
                r#"      <failure type="{}" message="{}">{}&#10;rule: {} [§{}]&#10;folder: {}&#10;rerun: {}</failure>"#,
                xml_escape(&f.kind),
                xml_escape(&f.detail),
                xml_escape(&f.detail),
                xml_escape(f.rule.as_deref().unwrap_or("-")),
                xml_escape(f.section.as_deref().unwrap_or("-")),
                xml_escape(&f.folder),
                xml_escape(&f.command)
            );
            x.push_str("    </testcase>\n");
        }
        x.push_str("  </testsuite>\n");
    }
    // Findings of targets that the counts do not list (a merge of different campaigns).
    let orphans: Vec<_> = s
        .findings
        .iter()
        .filter(|f| !s.targets.iter().any(|t| t.target == f.target))
        .collect();
    if !orphans.is_empty() {
        let _ = writeln!(
            x,
            r#"  <testsuite name="other targets" tests="{0}" failures="{0}">"#,
            orphans.len()
        );
        for f in orphans {
            let _ = writeln!(
                x,
                r#"    <testcase classname="tcgen05-fuzz.{}" name="{}"><failure type="{}" message="{}"/></testcase>"#,
                xml_escape(&f.target),
                xml_escape(&f.signature),
                xml_escape(&f.kind),
                xml_escape(&f.detail)
            );
        }
        x.push_str("  </testsuite>\n");
    }
    x.push_str("</testsuites>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{FindingEntry, TargetCounts};

    #[test]
    fn one_failing_test_per_finding_and_one_passing_per_target() {
        let f = FindingEntry {
            id: "0123".into(),
            signature: "trap-on-defined-program / - / sim / [a<b]".into(),
            kind: "trap-on-defined-program".into(),
            rule: None,
            section: None,
            target: "sim".into(),
            detail: "x & y".into(),
            sizes: (10, 2),
            minimization: None,
            folder: "findings/0123".into(),
            command: "tcgen05-fuzz reproduce findings/0123".into(),
        };
        let s = Summary {
            targets: vec![
                TargetCounts::new("sim", "1"),
                TargetCounts::new("ptxas@13.5", "13.5"),
            ],
            findings: vec![f],
            ..Summary::default()
        };
        let x = junit(&s);
        assert_eq!(x.matches("<testcase ").count(), 3);
        assert_eq!(x.matches("<failure ").count(), 1);
        assert!(x.contains("[a&lt;b]"));
        assert!(x.contains("x &amp; y"));
        assert!(!x.contains("a<b"));
    }

    #[test]
    fn control_characters_do_not_reach_the_xml() {
        assert_eq!(xml_escape("a\u{1}b\n"), "a?b\n");
    }
}
