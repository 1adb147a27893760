//! The emulation's run-time checks (module docs of [`super`], "Violations the emulation can
//! see"): a failing check records its [`Code`] and detail word and exits through the
//! violation tail; the checks of one instruction share one branch to it; bounded spins,
//! the abort checks in them, and the convergence and uniformity checks of `.sync.aligned`
//! instructions.

use super::{ABORT_EVERY, Code, DONE_WORD, Emu, SPIN_NS, st};
use tcgen05_ir::ptx::Body;

/// The emulation's checks on a body being printed.
pub(super) trait EmuTraps {
    fn trap_if(&mut self, p: u32, code: Code, detail: &str);
    fn trap(&mut self, code: Code, detail: &str);
    fn trap_on(&mut self, guard: Guard, code: Code, detail: &str);
    fn checks_begin(&mut self) -> bool;
    fn checks_end(&mut self, opened: bool);
    fn spin_until(&mut self, load: &str, test: &str, p: u32, code: Code, detail: &str);
    fn spin_limit(&mut self) -> String;
    fn case_value(&mut self, value: u32, word: u32) -> String;
    fn abort_check(&mut self, c: u32, a: u32, q: u32);
    fn join_lane0(&mut self);
    fn end_thread(&mut self, guard: &str);
    fn converged(&mut self) -> Option<u32>;
    fn uniform(&mut self, r: u32, code: Code, skip: Option<u32>);
}

impl EmuTraps for Body<'_, Emu<'_>> {
    /// Branches to the violation tail (record `code`, exit) where predicate `p` holds; `detail`
    /// is a register or an immediate.
    fn trap_if(&mut self, p: u32, code: Code, detail: &str) {
        self.trap_on(Guard::If(p), code, detail);
    }

    /// Branches to the violation tail with `code` unconditionally.
    fn trap(&mut self, code: Code, detail: &str) {
        self.trap_on(Guard::Always, code, detail);
    }

    /// A check: where `guard` holds, the thread records `code` with the detail word `detail`
    /// and exits (the violation tail). Alone, it branches to the tail's entry for `code`
    /// (`$TRAP<code>`, which sets `%tcode`) with the detail word in `%tdet` (a `detail` of
    /// `%tdet` is already there: `%tdet` is read only by the tail, so a check may compute into
    /// it before its guard). In an open group ([`EmuTraps::checks_begin`]) it is kept for the
    /// group's one branch.
    fn trap_on(&mut self, guard: Guard, code: Code, detail: &str) {
        if let Some(group) = &mut self.low.group {
            assert!(
                detail != "%tdet" && !matches!(guard, Guard::Always),
                "a check of a group needs its own predicate and detail register"
            );
            group.push(Check {
                guard,
                code,
                detail: detail.to_string(),
            });
            return;
        }
        if !self.low.traps.contains(&code) {
            self.low.traps.push(code);
        }
        let g = guard.text();
        if detail != "%tdet" {
            self.line(&format!("{g}mov.u32 %tdet, {detail};"));
        }
        self.line(&format!("{g}bra $TRAP{};", code as u32));
    }

    /// Opens a group of checks that branch to the violation tail together, once, after the
    /// last of them ([`EmuTraps::checks_end`]); returns false (and the checks join that group)
    /// when one is open already. The checks of a group are computed without side effects
    /// between them, so a thread whose first failing check is check k records k's code and
    /// detail, as if each check branched on its own: at the end the codes and details are
    /// set from the last check to the first, each where its guard holds, so the first
    /// failing one is what stays. A branch taken by only some threads is what makes the
    /// JIT slow on these modules (ptxas 13.0, sm_90: a module of the sample compiled 2x
    /// faster with its checks' branches removed), so an instruction's checks share one.
    fn checks_begin(&mut self) -> bool {
        if self.low.group.is_some() {
            return false;
        }
        self.low.group = Some(Vec::new());
        true
    }

    /// Closes the group [`EmuTraps::checks_begin`] opened (when `opened`): one check branches
    /// as on its own; more set `%tcode` (0 where none fails) and `%tdet` by their guards,
    /// last to first, and branch to the tail where `%tcode` is not 0.
    fn checks_end(&mut self, opened: bool) {
        if !opened {
            return;
        }
        let checks = self.low.group.take().unwrap_or_default();
        let Some((last, rest)) = checks.split_last() else {
            return;
        };
        if rest.is_empty() {
            self.trap_on(last.guard, last.code, &last.detail);
            return;
        }
        self.low.tail = true;
        let c = last.code as u32;
        match last.guard {
            Guard::If(p) => self.line(&format!("selp.u32 %tcode, {c}, 0, %p{p};")),
            Guard::Unless(p) => self.line(&format!("selp.u32 %tcode, 0, {c}, %p{p};")),
            Guard::Always => unreachable!("a check of a group has a predicate"),
        }
        self.line(&format!(
            "{}mov.u32 %tdet, {};",
            last.guard.text(),
            last.detail
        ));
        for k in rest.iter().rev() {
            let g = k.guard.text();
            self.line(&format!("{g}mov.u32 %tcode, {};", k.code as u32));
            self.line(&format!("{g}mov.u32 %tdet, {};", k.detail));
        }
        let q = self.pr();
        self.line(&format!("setp.ne.u32 %p{q}, %tcode, 0;"));
        self.line(&format!("@%p{q} bra $TRAP;"));
    }

    /// A bounded spin: runs `load` then `test` (which sets predicate `p` when done) until `p`,
    /// sleeping between rounds; after the case's rounds ([`EmuTraps::spin_limit`]), records
    /// `code` and exits. Every [`ABORT_EVERY`] rounds it reads the status word and exits if
    /// another thread recorded a violation (the violation tail exits instead of trapping, so
    /// nothing else stops a thread that waits for one that left).
    fn spin_until(&mut self, load: &str, test: &str, p: u32, code: Code, detail: &str) {
        let n = self.next_label();
        let c = self.r();
        let q = self.pr();
        let a = self.r();
        self.line(&format!("mov.u32 %r{c}, 0;"));
        self.label(&format!("$SP{n}_top"));
        self.line(load);
        self.line(test);
        self.line(&format!("@%p{p} bra $SP{n}_done;"));
        self.line(&format!("add.u32 %r{c}, %r{c}, 1;"));
        self.abort_check(c, a, q);
        let limit = self.spin_limit();
        self.line(&format!("setp.ge.u32 %p{q}, %r{c}, {limit};"));
        self.trap_if(q, code, detail);
        self.line(&format!("nanosleep.u32 {SPIN_NS};"));
        self.line(&format!("bra $SP{n}_top;"));
        self.label(&format!("$SP{n}_done"));
    }

    /// The rounds of a bounded spin ([`super::spin_rounds`], state word [`st::SPIN`]).
    fn spin_limit(&mut self) -> String {
        let spin = self.low.c.spin;
        self.case_value(spin, st::SPIN)
    }

    /// A value of the case (`value`, which the preamble also stores in state word `word`):
    /// an immediate in a lowered module, which knows its case; read from the CTA's state in
    /// a routine, which serves every case.
    fn case_value(&mut self, value: u32, word: u32) -> String {
        if !self.low.routine {
            return value.to_string();
        }
        let r = self.r();
        self.line(&format!("ld.shared.u32 %r{r}, [emu_state+{}];", 4 * word));
        format!("%r{r}")
    }

    /// In a bounded spin whose round counter is register `c`: every [`ABORT_EVERY`] rounds,
    /// reads the status word (register `a`, predicate `q` as scratch) and exits if a
    /// violation was recorded.
    fn abort_check(&mut self, c: u32, a: u32, q: u32) {
        self.line(&format!("and.b32 %r{a}, %r{c}, {};", ABORT_EVERY - 1));
        self.line(&format!("setp.eq.u32 %p{q}, %r{a}, 0;"));
        self.line(&format!("@%p{q} ld.volatile.global.u32 %r{a}, [%emust];"));
        self.line(&format!("@%p{q} setp.ne.u32 %p{q}, %r{a}, 0;"));
        self.end_thread(&format!("@%p{q} "));
    }

    /// Ends a collective that lane 0 did for its warp (alloc, a `::2` dealloc or relinquish):
    /// `bar.warp.sync`, then every lane reads the status word and exits if a violation was
    /// recorded. A lane 0 that gave up a bounded spin (ALLOC-BLOCKS, a `::2` peer that never
    /// came) left through the violation tail, which releases the warp barrier; without the
    /// check the other 31 lanes would run on to the end of the program, and the hang would
    /// show one blocked lane where the whole warp is blocked in the instruction (its
    /// checkpoint words stay at the last checkpoint before it, `cuda::hang_sites`).
    fn join_lane0(&mut self) {
        self.line("bar.warp.sync -1;");
        let a = self.r();
        let q = self.pr();
        self.line(&format!("ld.volatile.global.u32 %r{a}, [%emust];"));
        self.line(&format!("setp.ne.u32 %p{q}, %r{a}, 0;"));
        self.end_thread(&format!("@%p{q} "));
    }

    /// Ends the thread after a recorded violation (under `guard`, `@%p3 ` or nothing):
    /// through `emu_finish` (whose CTA's last thread counts the CTA in [`DONE_WORD`] and, in
    /// a program with pairs, first waits for the peer CTA), or, in `emu_finish` itself (where
    /// only the CTA's last thread comes), by counting the CTA there.
    fn end_thread(&mut self, guard: &str) {
        if self.low.finishing {
            // Only the CTA's last thread ends in `emu_finish`'s own checks: it counts the
            // CTA's threads.
            self.line(&format!(
                "{guard}red.global.add.u32 [%emust+{}], {};",
                4 * DONE_WORD,
                self.p.launch.threads_per_cta()
            ));
        } else {
            self.line(&format!("{guard}call emu_finish, (%emust, 1);"));
        }
        self.line(&format!("{guard}exit;"));
    }

    /// The `.sync.aligned` preconditions: every lane of the warp executes this instruction.
    /// Returns the predicate that holds where it does not (the check's guard); nothing, and
    /// `None`, where the check cannot fail ([`super::check::known_converged`]).
    fn converged(&mut self) -> Option<u32> {
        if self.low.converged {
            return None;
        }
        let p = self.pr();
        // `.sync`: every lane of the warp must come to a warp-synchronous vote (independent
        // thread scheduling need not have reconverged the warp after divergent code, so
        // `activemask` alone would see a partial warp); a lane that exited or never comes
        // leaves the vote incomplete (or blocks it, which the watchdog reports). Every lane
        // that completes the vote gets the same ballot.
        if self.low.group.is_some() {
            let m = self.r();
            self.line(&format!("vote.sync.ballot.b32 %r{m}, 1, -1;"));
            self.line(&format!("setp.ne.b32 %p{p}, %r{m}, -1;"));
            self.trap_if(p, Code::NotConverged, &format!("%r{m}"));
        } else {
            self.line("vote.sync.ballot.b32 %tdet, 1, -1;");
            self.line(&format!("setp.ne.b32 %p{p}, %tdet, -1;"));
            self.trap_if(p, Code::NotConverged, "%tdet");
        }
        Some(p)
    }

    /// Traps with `code` unless register `r` holds the same value in every lane (after
    /// [`Body::converged`]). With `skip`, the guard of a convergence check earlier in the
    /// same group, the warp-synchronous match is left out where that check fails (in every
    /// lane of the vote alike, so no lane waits for another's match), and that check's code
    /// and detail are what the group records.
    fn uniform(&mut self, r: u32, code: Code, skip: Option<u32>) {
        let m = self.r();
        let p = self.pr();
        let g = skip.map(|s| format!("@!%p{s} ")).unwrap_or_default();
        self.line(&format!("{g}match.all.sync.b32 %r{m}|%p{p}, %r{r}, -1;"));
        self.trap_on(Guard::Unless(p), code, &format!("%r{r}"));
    }
}

/// When a check's branch to the violation tail is taken.
#[derive(Debug, Clone, Copy)]
pub(super) enum Guard {
    Always,
    /// Where the predicate register holds.
    If(u32),
    /// Where it does not.
    Unless(u32),
}

impl Guard {
    /// The instruction guard (`@%p3 `, `@!%p3 ` or nothing).
    fn text(self) -> String {
        match self {
            Guard::Always => String::new(),
            Guard::If(p) => format!("@%p{p} "),
            Guard::Unless(p) => format!("@!%p{p} "),
        }
    }
}

/// A check of an open group ([`EmuTraps::checks_begin`]).
#[derive(Debug, Clone)]
pub(super) struct Check {
    guard: Guard,
    code: Code,
    detail: String,
}
