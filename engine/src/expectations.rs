//! The oracle as the campaign engine calls it, keeping the expectations of programs that
//! repeat.
//!
//! A case stream repeats each litmus member's program with new schedule seeds
//! (`tcgen05_generators::cases::Stream`: about one case in ten of the mixed stream is a
//! member, 49 programs in all). An expectation depends on the program and the oracle's
//! options alone, so a worker computes it once per member and reuses it; every other case
//! (each valid program and near miss is new) goes straight to the oracle.

use std::collections::HashMap;
use std::rc::Rc;
use tcgen05_ir::{Case, Program};
use tcgen05_oracle::{Expected, Options};

/// Programs kept at most (litmus members number 49; the bound keeps a stream with many
/// families, such as a replayed corpus, from growing without end).
pub const KEEP_AT_MOST: usize = 256;

/// The oracle with its options, and the expectations of the litmus members seen so far.
#[derive(Debug)]
pub struct Expectations {
    opts: Options,
    /// Per litmus member name (`Provenance::family`), the programs seen under it with their
    /// expectations (one, unless two programs share a name).
    kept: HashMap<String, Vec<(Program, Rc<Expected>)>>,
    count: usize,
}

impl Expectations {
    /// An oracle with these options and nothing kept.
    pub fn new(opts: Options) -> Self {
        Expectations {
            opts,
            kept: HashMap::new(),
            count: 0,
        }
    }

    /// The expectation of `case` (`tcgen05_oracle::expect_with` with these options): kept
    /// and reused for a litmus member's program, computed afresh for every other case.
    pub fn of(&mut self, case: &Case) -> Rc<Expected> {
        let Some(name) = &case.provenance.family else {
            return Rc::new(tcgen05_oracle::expect_with(&case.program, &self.opts));
        };
        if let Some((_, e)) = self
            .kept
            .get(name)
            .and_then(|v| v.iter().find(|(p, _)| *p == case.program))
        {
            return Rc::clone(e);
        }
        let e = Rc::new(tcgen05_oracle::expect_with(&case.program, &self.opts));
        if self.count < KEEP_AT_MOST {
            self.count += 1;
            self.kept
                .entry(name.clone())
                .or_default()
                .push((case.program.clone(), Rc::clone(&e)));
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_generators::cases::{Mode, Stream};
    use tcgen05_oracle::Edition;

    fn member_cases() -> Vec<Case> {
        let stream = Stream::new(tcgen05_generators::Config::default(), 5, Mode::Mixed);
        (0..400)
            .map(|i| stream.case(i).case)
            .filter(|c| c.provenance.family.is_some())
            .collect()
    }

    #[test]
    fn a_repeated_member_is_computed_once_and_equals_the_oracle() {
        for edition in [Edition::Seeds, Edition::Ptx93] {
            let opts = Options::edition(edition);
            let mut x = Expectations::new(opts);
            let cases = member_cases();
            assert!(cases.len() > 20, "the mixed stream holds litmus members");
            let mut reused = 0;
            for c in &cases {
                let before = x.count;
                let e = x.of(c);
                reused += usize::from(x.count == before);
                assert_eq!(*e, tcgen05_oracle::expect_with(&c.program, &opts));
            }
            assert!(reused > 0, "some member repeats within 400 cases");
            assert_eq!(reused + x.count, cases.len());
        }
    }

    #[test]
    fn another_program_under_the_same_name_gets_its_own_expectation() {
        let opts = Options::edition(Edition::Seeds);
        let mut x = Expectations::new(opts);
        let cases = member_cases();
        let a = &cases[0];
        // A different program (another member's, or a valid one) that carries `a`'s name.
        let other = cases
            .iter()
            .find(|c| c.program != a.program && c.intent != a.intent)
            .expect("members differ");
        let mut b = other.clone();
        b.provenance.family = a.provenance.family.clone();
        let ea = x.of(a);
        let eb = x.of(&b);
        assert_eq!(*eb, tcgen05_oracle::expect_with(&b.program, &opts));
        assert_ne!(*ea, *eb, "the two programs have different expectations");
        assert!(Rc::ptr_eq(&x.of(a), &ea) && Rc::ptr_eq(&x.of(&b), &eb));
    }

    #[test]
    fn cases_without_a_family_are_not_kept() {
        let stream = Stream::new(tcgen05_generators::Config::default(), 5, Mode::Valid);
        let mut x = Expectations::new(Options::edition(Edition::Seeds));
        for i in 0..20 {
            x.of(&stream.case(i).case);
        }
        assert_eq!(x.count, 0);
    }
}
