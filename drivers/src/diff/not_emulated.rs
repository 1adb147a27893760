//! Words a target does not compute, left out of the compare and counted: a target that runs
//! a program but does not compute some of its MMA results (`cuda-emu` leaves the D of the
//! MMA forms it does not emulate unchanged, `cuda::emu::not_emulated`) is compared on every
//! other behaviour, and the observed words whose values depend on MMA results are not
//! compared at all.
//!
//! Which words depend on MMA results is the oracle's to say: the same program under
//! `figure_layouts: false` (`tcgen05_oracle::Options`, every MMA result unspecified in value,
//! its region and ordering still modelled, reference §3.7) states exactly the words that no
//! MMA value reaches; a word it leaves unspecified while the exact expectation states it is
//! a word whose value an MMA decides. [`leave_out`] makes those words unspecified in the
//! expectation the compare uses and counts them, so such a word is never compared as if the
//! target had computed it, and is counted apart from agreement (the campaign report's "not
//! emulated" words, by reason).

use std::collections::HashMap;
use tcgen05_oracle::{Expected, LaneExpect, ObsExpect, ObsItem, ObsSite, SiteExpect, WordExpect};

/// The oracle's options for [`leave_out`]'s second expectation: `expected`'s edition, every
/// MMA result unspecified in value.
pub fn opaque_options(expected: &Expected) -> tcgen05_oracle::Options {
    tcgen05_oracle::Options {
        figure_layouts: false,
        ..tcgen05_oracle::Options::edition(expected.edition)
    }
}

/// What a target that does not compute the MMA results `why` names (its
/// [`crate::target::Target::values_not_computed`]) is compared with: `None` when `why` is
/// `None` or no run outcome can change the verdict ([`super::verdict_for_any_run`]), else
/// `expected` with the words those results decide left out ([`leave_out`], the oracle run
/// again under [`opaque_options`]), the reason and the number of words left out.
pub fn for_target(
    program: &tcgen05_ir::Program,
    expected: &Expected,
    why: Option<String>,
) -> Option<(Expected, String, u64)> {
    let why = why?;
    if super::verdict_for_any_run(expected).is_some() {
        return None;
    }
    let opaque = tcgen05_oracle::expect_with(program, &opaque_options(expected));
    let (masked, n) = leave_out(expected, &opaque);
    Some((masked, why, n))
}

/// `expected` with every word that `opaque` (the same program's expectation under
/// [`opaque_options`]) leaves unspecified and `expected` states made unspecified, and how
/// many such words (per recorded lane) there are. A lane whose words are partly left out is
/// judged word by word (a set of whole-record alternatives becomes, per word, the set of
/// that word's values: weaker, never stronger).
pub fn leave_out(expected: &Expected, opaque: &Expected) -> (Expected, u64) {
    let by_site: HashMap<ObsSite, &ObsItem> = opaque.obs.iter().map(|i| (i.key, i)).collect();
    let mut out = expected.clone();
    let mut left = 0u64;
    for item in &mut out.obs {
        let Some(o) = by_site.get(&item.key) else {
            continue;
        };
        let mut each: Option<Vec<ObsExpect>> = None;
        for l in 0..32u8 {
            let (Some(e), Some(oe)) = (item.lane(l), o.lane(l)) else {
                continue;
            };
            let Some(mut words) = per_word(&e) else {
                continue;
            };
            let mut n = 0u64;
            for (i, w) in words.iter_mut().enumerate() {
                if *w != WordExpect::Unspecified && word_unspecified(&oe, i) {
                    *w = WordExpect::Unspecified;
                    n += 1;
                }
            }
            if n == 0 {
                continue;
            }
            left += n;
            let v = each.get_or_insert_with(|| {
                (0..32u8)
                    .map(|k| item.lane(k).map_or(ObsExpect::Absent, |x| x.to_owned()))
                    .collect()
            });
            v[usize::from(l)] = ObsExpect::PerWord(words);
        }
        if let Some(v) = each {
            item.expect = SiteExpect::Each(v);
        }
    }
    (out, left)
}

/// A lane's data words one by one, for the expectations that state data words.
fn per_word(e: &LaneExpect<'_>) -> Option<Vec<WordExpect>> {
    match e.to_owned() {
        ObsExpect::Exact(v) => Some(v.into_iter().map(WordExpect::Exact).collect()),
        ObsExpect::PerWord(v) => Some(v),
        ObsExpect::OneOf(vs) => {
            let n = vs.first()?.len();
            Some(
                (0..n)
                    .map(|i| {
                        let mut x: Vec<u32> = vs.iter().filter_map(|v| v.get(i).copied()).collect();
                        x.sort_unstable();
                        x.dedup();
                        match x[..] {
                            [one] => WordExpect::Exact(one),
                            _ => WordExpect::OneOf(x),
                        }
                    })
                    .collect(),
            )
        }
        ObsExpect::Check(_) | ObsExpect::Absent | ObsExpect::Unspecified(_) => None,
    }
}

/// Whether word `i` of a lane's record is unspecified (the lane as a whole, or that word).
pub(super) fn word_unspecified(e: &LaneExpect<'_>, i: usize) -> bool {
    match e {
        LaneExpect::Exact(_) => false,
        LaneExpect::Is(ObsExpect::Unspecified(_)) => true,
        LaneExpect::Is(ObsExpect::PerWord(w)) => w.get(i) == Some(&WordExpect::Unspecified),
        LaneExpect::Is(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_oracle::SiteRef;

    fn item(expect: SiteExpect) -> ObsItem {
        ObsItem {
            key: ObsSite {
                cta: 0,
                warp: 0,
                site: SiteRef::Warp(0),
            },
            lanes: 0b11,
            expect,
            rules: vec![],
        }
    }

    fn with(obs: Vec<ObsItem>) -> Expected {
        let mut e = Expected::with_verdict(tcgen05_oracle::RunVerdict::Completes);
        e.obs = obs;
        e
    }

    /// Words the opaque expectation leaves open become unspecified and are counted; words
    /// it states, and lanes it states wholly, are kept as they were.
    #[test]
    fn only_the_words_an_mma_decides_are_left_out() {
        let exact = with(vec![item(SiteExpect::Exact {
            words: 2,
            data: (0..64).collect(),
        })]);
        let mut lanes = vec![ObsExpect::Absent; 32];
        lanes[0] = ObsExpect::PerWord(vec![WordExpect::Exact(0), WordExpect::Unspecified]);
        lanes[1] = ObsExpect::Exact(vec![2, 3]);
        let opaque = with(vec![item(SiteExpect::Each(lanes))]);
        let (out, n) = leave_out(&exact, &opaque);
        assert_eq!(n, 1);
        let o = &out.obs[0];
        assert_eq!(
            o.lane(0).map(|e| e.to_owned()),
            Some(ObsExpect::PerWord(vec![
                WordExpect::Exact(0),
                WordExpect::Unspecified
            ]))
        );
        assert_eq!(
            o.lane(1).and_then(|e| e.exact().map(<[u32]>::to_vec)),
            Some(vec![2, 3])
        );
        // The opaque expectation stating everything leaves nothing out.
        let (same, n) = leave_out(&exact, &exact);
        assert_eq!((same, n), (exact, 0));
    }

    /// A whole-lane unspecified opaque record leaves out every stated word of the lane; a
    /// set of alternatives becomes per-word sets.
    #[test]
    fn alternatives_become_per_word_sets() {
        let exact = with(vec![item(SiteExpect::Same(ObsExpect::OneOf(vec![
            vec![1, 5],
            vec![2, 5],
        ])))]);
        let opaque = with(vec![item(SiteExpect::Same(ObsExpect::PerWord(vec![
            WordExpect::Unspecified,
            WordExpect::Exact(5),
        ])))]);
        let (out, n) = leave_out(&exact, &opaque);
        assert_eq!(n, 2);
        assert_eq!(
            out.obs[0].lane(1).map(|e| e.to_owned()),
            Some(ObsExpect::PerWord(vec![
                WordExpect::Unspecified,
                WordExpect::Exact(5)
            ]))
        );
        let all = with(vec![item(SiteExpect::Same(ObsExpect::Unspecified(vec![])))]);
        assert_eq!(leave_out(&exact, &all).1, 4);
    }
}
