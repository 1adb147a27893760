//! Streams of cases: valid programs, near-misses, litmus members, or a mix of the three, each
//! case a pure function of `(seed, index)` so that any one can be regenerated alone.

use crate::choice::{Choices, SeedChoices, case_seed};
use crate::config::Config;
use crate::litmus::{self, Family, Member};
use crate::mutate::{self, MUTATORS, Mutator};
use crate::{ORIGIN, builder};
use tcgen05_ir::{Case, Intent, Provenance};

/// What a stream produces.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// Valid programs from the builder.
    Valid,
    /// Near-misses: of one mutator, or of every mutator in turn (`None`).
    NearMiss(Option<&'static Mutator>),
    /// The members of one litmus family, in turn.
    Family(&'static Family),
    /// A mix: mostly valid programs ([`MIX_VALID_PCT`]), then near-misses of a uniformly
    /// chosen mutator ([`MIX_NEAR_MISS_PCT`]), then a uniformly chosen litmus member.
    Mixed,
}

/// Share of valid programs in [`Mode::Mixed`], percent.
pub const MIX_VALID_PCT: u32 = 70;
/// Share of near-misses in [`Mode::Mixed`], percent (the rest are litmus members).
pub const MIX_NEAR_MISS_PCT: u32 = 20;

/// The file-name stem of case `index` of a run with `seed`.
pub fn case_name(seed: u64, index: u64) -> String {
    format!("s{seed:016x}-{index:06}")
}

/// A generated case and where it came from.
#[derive(Debug, Clone)]
pub struct Generated {
    /// The file-name stem ([`case_name`]).
    pub name: String,
    /// The case.
    pub case: Case,
}

/// A stream of cases. Litmus members are built once per stream.
#[derive(Debug)]
pub struct Stream {
    cfg: Config,
    seed: u64,
    mode: Mode,
    members: Vec<Member>,
}

impl Stream {
    /// A stream of `mode` with configuration `cfg` and run seed `seed`.
    pub fn new(cfg: Config, seed: u64, mode: Mode) -> Self {
        let members = match mode {
            Mode::Family(f) => (f.members)(),
            Mode::Mixed => litmus::all_members(),
            Mode::Valid | Mode::NearMiss(_) => Vec::new(),
        };
        Stream {
            cfg,
            seed,
            mode,
            members,
        }
    }

    /// Case `index`, with its name.
    pub fn case(&self, index: u64) -> Generated {
        Generated {
            name: case_name(self.seed, index),
            case: self.case_at(index),
        }
    }

    /// Case `index` without its name ([`Stream::case`]'s `case`; the campaign engine, which
    /// names only the cases it stores, saves formatting one per case).
    pub fn case_at(&self, index: u64) -> Case {
        let s = case_seed(self.seed, index);
        match self.mode {
            Mode::Valid => self.valid(s),
            Mode::NearMiss(Some(m)) => near(m, s),
            Mode::NearMiss(None) => near(&MUTATORS[(index % MUTATORS.len() as u64) as usize], s),
            Mode::Family(_) => self.member((index % self.members.len().max(1) as u64) as usize, s),
            Mode::Mixed => {
                let mut c = SeedChoices::new(s ^ 0x4D49_5845);
                let roll = c.below(100);
                if roll < MIX_VALID_PCT {
                    self.valid(s)
                } else if roll < MIX_VALID_PCT + MIX_NEAR_MISS_PCT {
                    near(&MUTATORS[c.below(MUTATORS.len() as u32) as usize], s)
                } else {
                    self.member(c.below(self.members.len() as u32) as usize, s)
                }
            }
        }
    }

    fn valid(&self, s: u64) -> Case {
        Case {
            program: builder::build_seeded(&self.cfg, s),
            intent: Intent::Valid,
            provenance: Provenance {
                seed: Some(s),
                origin: [ORIGIN, " builder"].concat(),
                family: None,
            },
        }
    }

    fn member(&self, i: usize, s: u64) -> Case {
        let m = &self.members[i];
        Case {
            program: m.program.clone(),
            intent: m.intent.clone(),
            provenance: Provenance {
                seed: Some(s),
                origin: [ORIGIN, " litmus"].concat(),
                family: Some(m.name.clone()),
            },
        }
    }
}

fn near(m: &Mutator, s: u64) -> Case {
    // Every mutator applies within its attempts (tested); a builder change that broke that
    // would surface here as a Valid-looking fallback, so say so in the origin.
    match mutate::near_miss(m, s) {
        Some(program) => Case {
            program,
            intent: Intent::NearMiss { breaks: m.rule },
            provenance: Provenance {
                seed: Some(s),
                origin: [ORIGIN, " mutator ", m.name].concat(),
                family: None,
            },
        },
        None => Case {
            program: builder::build_seeded(&Config::default(), s),
            intent: Intent::Valid,
            provenance: Provenance {
                seed: Some(s),
                origin: format!(
                    "{ORIGIN} builder (mutator {} found nothing to break)",
                    m.name
                ),
                family: None,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_reproducible_one_by_one() {
        let a = Stream::new(Config::default(), 9, Mode::Mixed);
        let b = Stream::new(Config::default(), 9, Mode::Mixed);
        for i in [0, 5, 17] {
            assert_eq!(a.case(i).case, b.case(i).case);
        }
        assert_ne!(a.case(0).name, a.case(1).name);
    }

    #[test]
    fn a_case_without_its_name_is_the_named_case() {
        for mode in [Mode::Mixed, Mode::Valid, Mode::NearMiss(None)] {
            let s = Stream::new(Config::default(), 4, mode);
            for i in 0..60 {
                let g = s.case(i);
                assert_eq!(s.case_at(i), g.case);
                assert!(g.case.provenance.origin.starts_with(ORIGIN));
            }
        }
    }

    #[test]
    fn near_miss_mode_names_the_mutators_rule() {
        let s = Stream::new(Config::default(), 1, Mode::NearMiss(None));
        for i in 0..MUTATORS.len() as u64 {
            let g = s.case(i);
            assert_eq!(
                g.case.intent,
                Intent::NearMiss {
                    breaks: MUTATORS[i as usize].rule
                }
            );
        }
    }
}
