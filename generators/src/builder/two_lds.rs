//! Flows whose one `tcgen05.wait::ld` covers two loads ([`Builder::two_lds`]).
//!
//! `wait::ld` waits for every earlier `tcgen05.ld` of the executing thread (reference §4.4,
//! §9.7.16.8.5), not only the last or the first. A flow that puts the wait right after each
//! ld cannot tell those apart; here the flow's ld is split in two, each reading half of the
//! columns the st wrote, and one wait follows both, so the registers of either ld are
//! observed only through that wait.

use super::*;

impl<C: Choices> Builder<'_, C> {
    /// The statements of the st → ld flow drawn in [`Builder::flows`] (shape, `.num`, pack,
    /// address `taddr`, the st's `seed`) with its ld split into two lds of half the `.num`
    /// before one `wait::ld`, or `None` (`.x1`, `.16x32bx2`, whose halves interleave). Its
    /// choices come from the wider forms' sequence ([`Builder::form`]), so the programs
    /// without them are unchanged.
    pub(super) fn two_lds(
        &mut self,
        shape: LdStShape,
        num: Num,
        pack: bool,
        taddr: TmemRef,
        seed: u32,
    ) -> Option<Vec<Stmt>> {
        if num == Num::X1 || shape == LdStShape::S16x32bx2 {
            return None;
        }
        if !self.form(20) {
            return None;
        }
        let half = *Num::LEGAL.iter().find(|n| 2 * n.count() == num.count())?;
        let mult = if pack { 2 } else { 1 };
        // Columns of one half: the same lanes, the next columns (reference §2.6).
        let cols = (cols_per_rep(shape) * half.count() * mult) as u16;
        let second = TmemRef {
            col: taddr.col + cols,
            ..taddr
        };
        let (first, second) = if self.v.percent(50) {
            (taddr, second)
        } else {
            (second, taddr)
        };
        Some(vec![
            st(st_form(shape, num, pack), taddr, None, seed),
            wait(WaitOp::St),
            ld(ld_form(shape, half, pack), first, None),
            ld(ld_form(shape, half, pack), second, None),
            wait(WaitOp::Ld),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Valid programs hold flows with two lds before one `wait::ld`, and the two lds read the
    /// two halves of what the st wrote (repetition r of a shape at `r` times its columns per
    /// repetition, §9.7.16.2.3: `.32x32b` 1, `.16x64b` 2, `.16x128b` 4, `.16x256b` 8).
    #[test]
    fn two_lds_read_the_halves_of_the_stored_columns() {
        let mut found = 0;
        for seed in 0..800 {
            let p = build_seeded(&Config::default(), seed);
            let mut ops: Vec<Op> = Vec::new();
            p.walk(&mut |s| {
                if let Stmt::Tc(op) = s {
                    ops.push(op.clone());
                }
            });
            for w in ops.windows(5) {
                let [
                    Op::St {
                        form: sf,
                        taddr: st_at,
                        ..
                    },
                    Op::Wait { .. },
                    Op::Ld {
                        form: a, taddr: at, ..
                    },
                    Op::Ld {
                        form: b, taddr: bt, ..
                    },
                    Op::Wait { form: wf },
                ] = w
                else {
                    continue;
                };
                assert_eq!(wf.op, WaitOp::Ld, "seed {seed}");
                found += 1;
                assert_eq!((a.shape, a.num), (b.shape, b.num), "seed {seed}");
                assert_eq!(a.shape, sf.shape, "seed {seed}");
                assert_eq!(2 * a.num.count(), sf.num.count(), "seed {seed}");
                let per = match a.shape {
                    LdStShape::S16x64b => 2,
                    LdStShape::S16x128b => 4,
                    LdStShape::S16x256b => 8,
                    _ => 1,
                };
                let half = per * a.num.count() * if a.pack.is_some() { 2 } else { 1 };
                let mut cols = [u32::from(at.col), u32::from(bt.col)];
                cols.sort();
                let base = u32::from(st_at.col);
                assert_eq!(cols, [base, base + half], "seed {seed}");
                assert_eq!((at.lane, bt.lane), (st_at.lane, st_at.lane), "seed {seed}");
            }
        }
        assert!(found > 10, "{found}");
    }
}
