//! Cross-shape st → ld flows ([`Builder::cross_flow`]): a 16-lane access checked against a
//! `.32x32b` one over the same cells.
//!
//! A flow that stores and loads with the same shape reads back what it stored whatever map
//! from threads and registers to cells the target uses, so a target that gets a 16-lane map
//! wrong in both its st and its ld (the figures "Matrix fragments for tcgen05.ld/st",
//! §9.7.16.2.3; reference §2.6, OQ-10) agrees with the oracle. Here the other side of the
//! flow is `.32x32b`, whose map the reference states in words (thread t: lane t, register i:
//! column i), over exactly the cells of the 16-lane access and the other 16 lanes of the
//! quarter, so every observed word is a cell the program wrote:
//! - *st checked*: `st.32x32b` fills the footprint, then the 16-lane st overwrites its half,
//!   then `ld.32x32b` reads the whole footprint back;
//! - *ld checked*: `st.32x32b` fills the footprint, then the 16-lane ld reads its half.
//!
//! A `wait::st` separates the two stores (an st of one thread is not ordered after another
//! of the same thread without it, reference §4.2). The `.pack::16b` / `.unpack::16b` choice
//! of the flow holds for both accesses, so the `.32x32b` side covers the doubled footprint.

use super::*;

impl<C: Choices> Builder<'_, C> {
    /// The statements of a cross-shape flow for the 16-lane st → ld flow drawn in
    /// [`Builder::flows`] (shape, `.num`, pack, the 16-lane access's address `taddr` in lane
    /// quarter `q`, its `split`, the st's `seed`), or `None` where no `.32x32b` access covers
    /// its footprint exactly (a `.16x32bx2` whose halves leave a gap, or more than 128
    /// columns). Its choices come from the wider forms' sequence ([`Builder::form`]), so the
    /// programs without them are unchanged.
    #[allow(clippy::too_many_arguments)] // The drawn flow, field by field, as `flows` has it.
    pub(super) fn cross_flow(
        &mut self,
        shape: LdStShape,
        num: Num,
        pack: bool,
        taddr: TmemRef,
        split: Option<u32>,
        seed: u32,
        q: u16,
    ) -> Option<Vec<Stmt>> {
        if !is_16_lane(shape) {
            return None;
        }
        let mult = if pack { 2 } else { 1 };
        let cols = cols_per_rep(shape) * num.count() * mult;
        // The footprint in columns: a `.16x32bx2` second half must start where the first ends.
        let width = match (shape, split) {
            (LdStShape::S16x32bx2, Some(s)) if s == cols => 2 * cols,
            (LdStShape::S16x32bx2, _) => return None,
            _ => cols,
        };
        // `.32x32b` moves one column per register (two with pack).
        let wide = *Num::LEGAL.iter().find(|n| n.count() * mult == width)?;
        vec_len(LdStShape::S32x32b, wide)?;
        if !self.form(40) {
            return None;
        }
        let whole = TmemRef {
            lane: 32 * q,
            ..taddr
        };
        let fill = st(
            st_form(LdStShape::S32x32b, wide, pack),
            whole,
            None,
            self.v.word(),
        );
        let mut out = vec![fill, wait(WaitOp::St)];
        if self.v.percent(50) {
            // st checked.
            out.push(st(st_form(shape, num, pack), taddr, split, seed));
            out.push(wait(WaitOp::St));
            out.push(ld(ld_form(LdStShape::S32x32b, wide, pack), whole, None));
        } else {
            // ld checked.
            out.push(ld(ld_form(shape, num, pack), taddr, split));
        }
        out.push(wait(WaitOp::Ld));
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns one repetition of a 16-lane shape covers, from the ISA's figures (§9.7.16.2.3)
    /// written out here: `.16x64b` 2, `.16x128b` 4, `.16x256b` 8, each `.16x32bx2` half 1.
    fn cols(shape: LdStShape) -> u32 {
        match shape {
            LdStShape::S16x64b => 2,
            LdStShape::S16x128b => 4,
            LdStShape::S16x256b => 8,
            _ => 1,
        }
    }

    /// Valid programs hold both kinds of cross-shape flow, and in each the `.32x32b` access
    /// covers exactly the quarter's 32 lanes over the 16-lane access's columns.
    #[test]
    fn cross_flows_cover_the_16_lane_footprint_with_32x32b() {
        let (mut st_checked, mut ld_checked) = (0, 0);
        for seed in 0..800 {
            let p = build_seeded(&Config::default(), seed);
            let mut ops: Vec<Op> = Vec::new();
            p.walk(&mut |s| {
                if let Stmt::Tc(op) = s {
                    ops.push(op.clone());
                }
            });
            for w in ops.windows(5) {
                let (
                    Op::St {
                        form: f,
                        taddr: whole,
                        ..
                    },
                    Op::Wait { .. },
                ) = (&w[0], &w[1])
                else {
                    continue;
                };
                if f.shape != LdStShape::S32x32b {
                    continue;
                }
                let (shape, num, pack, t, split) = match &w[2] {
                    Op::St {
                        form, taddr, split, ..
                    } if is_16_lane(form.shape) => {
                        // Then `wait::st`, the `.32x32b` ld of the whole footprint.
                        let Some(Op::Ld { form: l, taddr, .. }) = w.get(4) else {
                            continue;
                        };
                        if l.shape != LdStShape::S32x32b || taddr != whole {
                            continue;
                        }
                        assert_eq!(l.num, f.num, "seed {seed}");
                        st_checked += 1;
                        (form.shape, form.num, form.pack.is_some(), *taddr, *split)
                    }
                    Op::Ld {
                        form, taddr, split, ..
                    } if is_16_lane(form.shape) && !form.red => {
                        ld_checked += 1;
                        (form.shape, form.num, form.pack.is_some(), *taddr, *split)
                    }
                    _ => continue,
                };
                // (Other flows and the MMA's operand stores also put a `.32x32b` st first.)
                if t.col != whole.col || t.lane - t.lane % 32 != whole.lane {
                    continue;
                }
                assert_eq!(f.pack.is_some(), pack, "seed {seed}: one packing for both");
                assert_eq!(whole.lane % 32, 0, "seed {seed}");
                let mult = if pack { 2 } else { 1 };
                let mut width = cols(shape) * num.count() * mult;
                if shape == LdStShape::S16x32bx2 {
                    assert_eq!(split, Some(width), "seed {seed}: halves side by side");
                    width *= 2;
                }
                assert_eq!(f.num.count() * mult, width, "seed {seed}: same columns");
            }
        }
        assert!(
            st_checked > 10 && ld_checked > 10,
            "{st_checked} {ld_checked}"
        );
    }
}
