//! Which deferred sts may be pending where (module docs of [`super`], "Perturbed runs"): a
//! static over-approximation of the bits of `%emstq` that can be set when each tcgen05
//! instruction of the kernel starts, so the lowering prints the landing of a deferred st
//! only where its bit can be set. A landing whose bit is clear does nothing, so leaving it
//! out changes nothing a run does.
//!
//! The lowering gives the k-th deferrable `tcgen05.st` of the kernel (in printing order, at
//! most 32) bit k; an executed instance sets its bit when the warp defers it; a `wait::st`
//! or dealloc lands the bits of the deferrable sts printed before it and, if there are any,
//! clears `%emstq`; a st whose own bit is set lands that instance first. Every warp starts
//! with `%emstq` 0. A st that may be pending at a landing printed before it never defers
//! ([`undeferrable`]). Programs with functions never defer (no plan).

use tcgen05_ir::{Op, Program, Stmt, WaitOp};

/// The deferrable sts the lowering prints at most (bits of `%emstq`).
pub(super) const MAX_DEFERRED: u32 = 32;

/// What one tcgen05 instruction of the kernel (in printing order) needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// A st: `bit` is its bit (`None` past [`MAX_DEFERRED`]); `own_pending` says whether an
    /// earlier instance of it may still be pending when it starts (it is in a loop).
    St { bit: Option<u32>, own_pending: bool },
    /// A `wait::st` or dealloc: the bits that may be set when it starts.
    Land { pending: u32 },
    /// Any other instruction.
    Other,
}

/// The steps of the kernel's tcgen05 instructions in printing order (warp 0's body, then
/// warp 1's, ...; in each, statements in order, an `if`'s then-block before its else-block,
/// a loop's body once), as [`tcgen05_ir::ptx::Body::block`] prints them.
pub(super) fn plan(p: &Program) -> Vec<Step> {
    let mut a = Analysis {
        steps: Vec::new(),
        at: 0,
        sts: 0,
    };
    for body in &p.warps {
        a.block(body, 0);
    }
    a.steps
}

struct Analysis {
    /// The steps, each the union over the passes that reached it.
    steps: Vec<Step>,
    /// The index of the next instruction in printing order.
    at: usize,
    /// Deferrable sts printed so far.
    sts: u32,
}

impl Analysis {
    /// The bits that may be set after `stmts`, from `pending` before them. Each loop body is
    /// analysed until its head's bits stop growing; a body analysed again reuses its
    /// instructions' indices, so its steps take the union.
    fn block(&mut self, stmts: &[Stmt], mut pending: u32) -> u32 {
        for s in stmts {
            match s {
                Stmt::Tc(op) => pending = self.op(op, pending),
                Stmt::If { then, els, .. } => {
                    let t = self.block(then, pending);
                    let e = self.block(els, pending);
                    pending = t | e;
                }
                Stmt::Loop { body, .. } => {
                    // The head's bits: those before the loop and those after any number of
                    // iterations (a count of 0 skips the body).
                    let (start, sts) = (self.at, self.sts);
                    let mut head = pending;
                    loop {
                        (self.at, self.sts) = (start, sts);
                        let next = head | self.block(body, head);
                        if next == head {
                            break;
                        }
                        head = next;
                    }
                    pending = head;
                }
                _ => {}
            }
        }
        pending
    }

    fn op(&mut self, op: &Op, pending: u32) -> u32 {
        let (step, after) = match op {
            Op::St { .. } => {
                let bit = (self.sts < MAX_DEFERRED).then_some(self.sts);
                self.sts = (self.sts + 1).min(MAX_DEFERRED);
                let own = bit.is_some_and(|b| pending >> b & 1 == 1);
                let after = pending | bit.map_or(0, |b| 1 << b);
                (
                    Step::St {
                        bit,
                        own_pending: own,
                    },
                    after,
                )
            }
            Op::Wait { form } if form.op == WaitOp::St => self.land(pending),
            Op::Dealloc { .. } => self.land(pending),
            _ => (Step::Other, pending),
        };
        match self.steps.get_mut(self.at) {
            Some(s) => *s = union(*s, step),
            None => self.steps.push(step),
        }
        self.at += 1;
        after
    }

    /// A landing: with deferrable sts printed before it, it clears every bit.
    fn land(&self, pending: u32) -> (Step, u32) {
        let after = if self.sts > 0 { 0 } else { pending };
        (Step::Land { pending }, after)
    }
}

/// The bits of the sts that must store at issue: those that may be pending at a landing
/// printed before them (a loop `{ wait::st; st }`). A landing lands only the sts printed
/// before it, so such a st, deferred, would not land at a wait::st that must complete it
/// (WAIT-SCOPE, reference §3.4): its stores would land late or, where the landing clears the
/// bits, never. Storing at issue is a completion order the spec allows (module docs of
/// [`super`]), so those sts simply never defer.
pub(super) fn undeferrable(steps: &[Step]) -> u32 {
    let mut printed_at = [usize::MAX; MAX_DEFERRED as usize];
    for (i, s) in steps.iter().enumerate() {
        if let Step::St { bit: Some(b), .. } = s {
            printed_at[*b as usize] = i;
        }
    }
    let mut bits = 0;
    for (i, s) in steps.iter().enumerate() {
        if let Step::Land { pending } = s {
            for b in 0..MAX_DEFERRED {
                if pending >> b & 1 == 1 && printed_at[b as usize] > i {
                    bits |= 1 << b;
                }
            }
        }
    }
    bits
}

/// The step that covers both passes over one instruction.
fn union(a: Step, b: Step) -> Step {
    match (a, b) {
        (
            Step::St {
                bit,
                own_pending: x,
            },
            Step::St { own_pending: y, .. },
        ) => Step::St {
            bit,
            own_pending: x || y,
        },
        (Step::Land { pending: x }, Step::Land { pending: y }) => Step::Land { pending: x | y },
        (a, _) => a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcgen05_ir::samples;

    fn st() -> Stmt {
        samples::single_warp_roundtrip()
            .warps
            .into_iter()
            .flatten()
            .find(|s| matches!(s, Stmt::Tc(Op::St { .. })))
            .expect("the sample has a st")
    }

    fn wait_st() -> Stmt {
        samples::single_warp_roundtrip()
            .warps
            .into_iter()
            .flatten()
            .find(|s| matches!(s, Stmt::Tc(Op::Wait { form }) if form.op == WaitOp::St))
            .expect("the sample has a wait::st")
    }

    fn program(warps: Vec<Vec<Stmt>>) -> Program {
        let mut p = samples::single_warp_roundtrip();
        p.launch.warps_per_cta = warps.len() as u8;
        p.warps = warps;
        p
    }

    /// Straight-line code: a st is never pending at its own start; a wait lands the bits
    /// set before it and clears them; another warp starts with none.
    #[test]
    fn straight_line_code_lands_what_came_before() {
        let p = program(vec![
            vec![st(), st(), wait_st(), st(), wait_st()],
            vec![wait_st()],
        ]);
        assert_eq!(
            plan(&p),
            vec![
                Step::St {
                    bit: Some(0),
                    own_pending: false
                },
                Step::St {
                    bit: Some(1),
                    own_pending: false
                },
                Step::Land { pending: 0b11 },
                Step::St {
                    bit: Some(2),
                    own_pending: false
                },
                Step::Land { pending: 0b100 },
                Step::Land { pending: 0 },
            ]
        );
    }

    /// In a loop a st may find its own earlier instance pending, unless a wait in the loop
    /// lands it first; a wait before the st in the loop sees the st's bit from the previous
    /// iteration.
    #[test]
    fn loops_carry_pending_sts_to_the_next_iteration() {
        let lp = |body| Stmt::Loop { count: 3, body };
        let p = program(vec![vec![lp(vec![st()]), wait_st()]]);
        assert_eq!(
            plan(&p),
            vec![
                Step::St {
                    bit: Some(0),
                    own_pending: true
                },
                Step::Land { pending: 1 },
            ]
        );
        let p = program(vec![vec![st(), lp(vec![wait_st(), st()])]]);
        assert_eq!(
            plan(&p),
            vec![
                Step::St {
                    bit: Some(0),
                    own_pending: false
                },
                Step::Land { pending: 0b11 },
                Step::St {
                    bit: Some(1),
                    own_pending: false
                },
            ]
        );
        // No deferrable st before the wait: it clears nothing, so the loop's st stays
        // pending across it.
        let p = program(vec![vec![lp(vec![wait_st(), st()])]]);
        assert_eq!(
            plan(&p),
            vec![
                Step::Land { pending: 1 },
                Step::St {
                    bit: Some(0),
                    own_pending: true
                },
            ]
        );
    }

    /// A st that may be pending at a landing printed before it (a loop `{ wait::st; st }`)
    /// stores at issue: that landing cannot land it (WAIT-SCOPE); sts printed before their
    /// landings defer.
    #[test]
    fn sts_a_landing_printed_before_them_would_miss_store_at_issue() {
        let lp = |body| Stmt::Loop { count: 3, body };
        let p = program(vec![vec![st(), lp(vec![wait_st(), st()])]]);
        assert_eq!(undeferrable(&plan(&p)), 0b10);
        let p = program(vec![vec![lp(vec![wait_st(), st()])]]);
        assert_eq!(undeferrable(&plan(&p)), 0b1);
        let p = program(vec![vec![lp(vec![st(), wait_st()]), st(), wait_st()]]);
        assert_eq!(undeferrable(&plan(&p)), 0);
        // A wait in another warp's body sees none of this warp's bits.
        let p = program(vec![vec![st(), lp(vec![st()]), wait_st()], vec![wait_st()]]);
        assert_eq!(undeferrable(&plan(&p)), 0);
    }

    /// An `if` joins its branches; sts past the 32nd have no bit.
    #[test]
    fn branches_join_and_bits_run_out() {
        let p = program(vec![vec![
            Stmt::If {
                cond: tcgen05_ir::Cond::LaneLt(3),
                then: vec![st()],
                els: vec![],
            },
            wait_st(),
        ]]);
        assert_eq!(plan(&p)[1], Step::Land { pending: 1 });
        let p = program(vec![vec![st(); 34]]);
        let steps = plan(&p);
        assert_eq!(
            steps[31],
            Step::St {
                bit: Some(31),
                own_pending: false
            }
        );
        assert_eq!(
            steps[32],
            Step::St {
                bit: None,
                own_pending: false
            }
        );
    }
}
