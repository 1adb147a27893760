//! The MMA of a program ([`Builder::plan_mma`]): its kind, shape and operands, the copies and
//! stores that feed them, and the statement that issues it ([`issue_stmt`]); see the
//! builder's module documentation, phase 4.

use super::*;

impl<C: Choices> Builder<'_, C> {
    /// Plans an MMA: kind, shape, operands, columns, regions, issuer and consumers.
    ///
    /// With `cta_group::2` (reference §2.5, §3.7, MMA-PAIR) every CTA of the pair runs the same
    /// setup (allocations of the same sizes, so the columns planned here exist in both CTAs;
    /// its own shared-memory operands and scale factors), and only the even CTA issues the MMA
    /// (and its cp / shift), which reads and writes both CTAs' TMEM; the commit multicasts its
    /// arrive to both CTAs' mbarrier 0 (COMMIT-MCAST-MASK), so the consumers of each CTA wait
    /// on their own.
    pub(super) fn plan_mma(
        &mut self,
        tgt: Target,
        version: PtxVersion,
        (cg, cluster_size): (CtaGroup, u8),
        nwarps: usize,
        allocs: &mut [Alloc],
    ) -> Option<MmaPlan> {
        let cfg = self.cfg;
        let two = cg == CtaGroup::Two;
        // MMA-I8-TARGET: i8 only on sm_100a / sm_110a. Block-scaled kinds only where a
        // scale-vector qualifier (or none) is allowed (MMA-BS-VEC-TARGET, GEN-PTXVER).
        let kinds: Vec<MmaKind> = cfg
            .mma_kinds
            .iter()
            .copied()
            .filter(|k| *k != MmaKind::I8 || target::has_i8(tgt))
            .filter(|k| !is_block_kind(*k) || !target::scale_vecs(*k, tgt, version).is_empty())
            .collect();
        let kind = *self.c.pick(&kinds)?;
        // Block scaling (MMA-BS-KINDS): the mx kinds require it; no .ws for them
        // (MMA-WS-KINDS).
        let block_scale = is_block_kind(kind);
        let scale_vec = if block_scale {
            *self.c.pick(target::scale_vecs(kind, tgt, version))?
        } else {
            None
        };
        // .ws: cta_group::1 only, kinds f16/tf32/f8f6f4/i8 (MMA-WS-CTA1, MMA-WS-KINDS); dense N
        // in {64, 128, 256}, M in {32, 64, 128} (§2.7). Non-ws ::1: M = 128 (M = 64 is the
        // half-datapath layout F, MMA-HALFDP-ALIGN, left out), N from the §2.7 table. ::2:
        // M = 256 (128 lanes in each CTA of the pair) or 128, N in steps of 16 (i8: 32).
        let ws = !block_scale && !two && self.c.percent(cfg.ws_pct);
        // .sp (sparse A, metadata in TMEM): non-ws forms here; mxf4/mxf4nvf4 sparse only on
        // sm_100a, sm_110a, sm_103a (MMA-SP-MXF4-TARGET). The metadata is copied by cp from a
        // `FillElem::SpMeta` region (valid by construction), or, with
        // `Config::sparse_meta_st`, written by the quarter warps' st (the four quarters must
        // exist).
        let meta_by_st = cfg.sparse_meta_st;
        let meta_ok = if meta_by_st {
            nwarps >= 4 && cfg.st_ld
        } else {
            cfg.cp
        };
        let mut sparse = !ws
            && meta_ok
            && (!matches!(kind, MmaKind::Mxf4 | MmaKind::Mxf4nvf4)
                || matches!(tgt, Target::Sm100a | Target::Sm110a | Target::Sm103a))
            && self.c.percent(cfg.sparse_pct);
        let m = if ws {
            [32, 64, 128][self.c.below(3) as usize]
        } else if two && (sparse || self.c.percent(if block_scale { 98 } else { 75 })) {
            // A block-scaled ::2 MMA with M = 128 (data-path layout B) stays unspecified
            // (which scale factors the folded rows use is figure-only, OQ-29): 2% of them.
            256
        } else {
            128
        };
        // K = 96 (idesc bit 31): dense mxf4/mxf4nvf4, ::2, M = 256, sm_103a only
        // (MMA-K-EXPLICIT, MMA-K96-TARGET).
        let k96 = two
            && !sparse
            && m == 256
            && matches!(kind, MmaKind::Mxf4 | MmaKind::Mxf4nvf4)
            && tgt == Target::Sm103a
            // Its results stay unspecified (OQ-32: the scale-factor counts and IDs of K = 96
            // contradict each other): kept at a share that leaves most words exact.
            && self.c.percent(20);
        // N up to the table's 256 (MMA-SHAPE-VALID, §9.7.16.10.1 shape table, reference §2.7):
        // the N = 256 edge is where an off-by-one bound on N shows.
        // The wider forms try N = 128 or 256 first for a third of the `::1` dense MMAs (and
        // the smaller N after them when the columns are not free): the forms whose results
        // the oracle computes (sparse and `::2` block-scaled results stay open, OQ-29, so a
        // wider one would only add unspecified words).
        let ns: &[u32] = if ws {
            &[64, 128, 256]
        } else if two {
            &[16, 32, 64, 128, 256]
        } else {
            &[8, 16, 32, 64, 128, 256]
        };
        let mut start = self.c.below(ns.len() as u32 - 2) as usize;
        if !two && !sparse && self.form(33) {
            start = ns.len() - 1 - self.v.below(2) as usize;
        }
        // D off column 0 of its allocation (any column of the allocation, §9.7.16.10.9.1
        // `[d-tmem]`): a few unused columns before it, so a model that loses D's column
        // somewhere shows.
        if self.form(25) {
            take(allocs, [4, 8, 16][self.v.below(3) as usize]);
        }
        let mut d = None;
        let mut n = 0;
        for &cand in ns[..=start].iter().rev() {
            let ok = ws
                || if two {
                    mmaenc::n_ok_cta2(kind, cand)
                } else {
                    mmaenc::n_ok_cta1(kind, cand)
                };
            if !ok {
                continue;
            }
            if let Some(cols) = take(allocs, cand) {
                d = Some(cols);
                n = cand;
                break;
            }
        }
        let d = d?;
        let mut fills = Vec::with_capacity(3);
        let elem = mmaenc::fill_elem(kind);
        let row = mmaenc::row_bytes(kind);
        // A source: shared memory, or TMEM by cp (same thread) or by st (other warps). The st
        // data (`values::st_value`: arbitrary words) are exact elements only as 8-bit
        // integers: as f16 / bf16 / tf32 / fp8 elements they round in the accumulator, and
        // OQ-19 leaves the result open (reference §3.7), so only kind::i8 takes A by st.
        let mut choices = vec![ASrc::Smem];
        if cfg.cp {
            choices.push(ASrc::Cp);
        }
        // Only where the four quarter warps exist to store A's 128 rows: with fewer, the
        // rows of the missing quarters are never written and the MMA reads fresh cells (OQ-9).
        if cfg.st_ld && kind == MmaKind::I8 && nwarps >= 4 {
            choices.push(ASrc::St);
        }
        // `.ws` with M = 32 or 64 (data-path layouts E and G, §9.7.16.10.5): which lanes hold
        // A's rows in TMEM is figure-only, so the results of such an MMA with A in TMEM stay
        // unspecified (OQ-19, OQ-22): mostly A from shared memory there, A in TMEM kept at a
        // fifth.
        if ws && m < 128 && !self.c.percent(20) {
            choices.truncate(1);
        }
        let mut a_src = *self.c.pick(&choices).expect("non-empty");
        // A = an earlier MMA's D (a wider form, a third of the time it may be): kinds whose A
        // elements read from an f32 / s32 D of small integers stay exact (i8: any byte; tf32:
        // integers of at most 11 bits keep the low 13 bits of the cell clear), M = 128
        // `cta_group::1` (row m in lane m, §9.7.16.10 `[a-tmem]`), dense, not `.ws`.
        if !two && !ws && !sparse && matches!(kind, MmaKind::I8 | MmaKind::Tf32) && self.form(33) {
            a_src = ASrc::Mma;
        }
        let mut a_cols = None;
        if a_src != ASrc::Smem {
            a_cols = take(allocs, mmaenc::a_tmem_cols(kind));
            if a_cols.is_none() {
                a_src = ASrc::Smem;
            }
        }
        let mut issue = Vec::with_capacity(6);
        // Rows of A in each CTA: M, or M / 2 per CTA of a pair (at most 128, one per lane).
        let a_rows = if two { m / 2 } else { m }.max(32);
        let a = match (a_src, a_cols) {
            (ASrc::Smem, _) | (_, None) => {
                let r = self.region(a_rows * row);
                fills.push((r, elem));
                MmaA::Desc(mmaenc::kmajor_desc(r))
            }
            (ASrc::Cp, Some(ac)) => {
                // cp.128x256b: 128 lanes x 256 bits = the 8 columns of A (§3.5); cp::N → mma::N
                // is pipeline pair 2 (§4.2, MCM-PIPE-CP-MMA). A ::2 cp copies in both CTAs
                // from each one's own shared memory (CP-PAIR).
                let r = self.region(128 * 32);
                fills.push((r, elem));
                if two && m == 128 {
                    // A pair with M = 128 (data-path layout B) holds A's 64 rows per CTA
                    // duplicated over the lane halves (CUTLASS `TmemAllocMode::Duplicated`:
                    // row m in lanes m and m + 64): `cp.64x128b.warpx2::02_13` puts source
                    // row m in lanes m and m + 64 (§3.5), 16 bytes per row, so two copies,
                    // the second from the rows' second 16-byte chunk (LBO further) into the
                    // next 4 columns.
                    for half in 0..2u16 {
                        let mut src = mmaenc::kmajor_desc(r);
                        src.offset += u32::from(half) * u32::from(src.lbo_enc) * 16;
                        issue.push(Stmt::Tc(Op::Cp {
                            form: CpForm {
                                cta_group: cg,
                                shape: CpShape::S64x128b,
                                multicast: Some(CpMulticast::Warpx2_02_13),
                                dst_fmt: None,
                                src_fmt: None,
                            },
                            taddr: TmemRef::slot(ac.slot, 0, ac.col as u16 + 4 * half),
                            src,
                        }));
                    }
                } else {
                    issue.push(Stmt::Tc(Op::Cp {
                        form: CpForm {
                            cta_group: cg,
                            shape: CpShape::S128x256b,
                            multicast: None,
                            dst_fmt: None,
                            src_fmt: None,
                        },
                        taddr: TmemRef::slot(ac.slot, 0, ac.col as u16),
                        src: mmaenc::kmajor_desc(r),
                    }));
                }
                MmaA::Tmem(TmemRef::slot(ac.slot, 0, ac.col as u16))
            }
            (ASrc::St, Some(ac)) => MmaA::Tmem(TmemRef::slot(ac.slot, 0, ac.col as u16)),
            (ASrc::Mma, Some(ac)) => {
                // The producer: M = 128, N = 8 (the 8 columns of A, one 32-byte row of A per
                // lane), its own operands in shared memory; then commit, wait and fence, so
                // the A read sees its D (reference §4.4, canonical pattern 4, the issuer as
                // the consumer).
                let (ra, rb) = (self.region(128 * row), self.region(8 * row));
                fills.push((ra, elem));
                fills.push((rb, elem));
                let t = TmemRef::slot(ac.slot, 0, ac.col as u16);
                issue.push(Stmt::Tc(Op::Mma(Box::new(Mma {
                    form: MmaForm {
                        ws: false,
                        sp: false,
                        cta_group: cg,
                        kind,
                        block_scale: false,
                        scale_vec: None,
                        ashift: false,
                        collector: None,
                    },
                    d: t,
                    a: MmaA::Desc(mmaenc::kmajor_desc(ra)),
                    b: mmaenc::kmajor_desc(rb),
                    sp_meta: None,
                    idesc: mmaenc::idesc_for(kind, 128, 8, self.v.below(4)).encode(),
                    scale_a: None,
                    scale_b: None,
                    disable_output_lane: None,
                    enable_input_d: false,
                    scale_input_d: None,
                    zero_col_mask: None,
                }))));
                issue.push(commit(cg, 1, self.v.percent(50)));
                issue.push(mbar_wait(1, Scope::Cta));
                issue.push(fence_after());
                MmaA::Tmem(t)
            }
        };
        // B: K × N, K twice the dense K for `.sp` (§9.7.16.10.8): 64-byte rows.
        let rb = self.region(n * if sparse { 2 * row } else { row });
        fills.push((rb, elem));
        let mut st_fills = Vec::with_capacity(3);
        // Sparse metadata (§3.7 "Sparse A"): at most two columns per row are read (the 4:8
        // kinds need 64 bits per row at K = 128; the others less).
        // - By cp (the default): the issuer fills a region with `FillElem::SpMeta` (every
        //   nibble 0b0100 or 0b1110, both valid for every kind: MMA-SP-META-TF32, -MXF4, -24)
        //   and copies it by cp.128x128b (128 lanes x 4 columns, each lane a 16-byte row of
        //   the K-major layout, 16 row groups at SBO = 256 B: 4,096 B) into the metadata
        //   columns; cp::N → mma::N is pipeline pair 2 (§4.2, MCM-PIPE-CP-MMA); a ::2 cp
        //   copies in both CTAs of the pair from each one's own region (CP-PAIR). So every
        //   nibble the MMA may read is valid, whatever the figures say it reads (OQ-29).
        // - By st (`Config::sparse_meta_st`, for the MMA-SP-META mutators, whose oracle rule
        //   judges st-written metadata only): every quarter stores it with one seed whose low
        //   nibble is 0b1110, so only the first nibble of each partition's first row is chosen
        //   valid; the others are `lane * mul + seed` (values.rs).
        // No free columns: the MMA stays dense.
        let mut meta = None;
        if sparse {
            let width = if meta_by_st { 2 } else { 4 };
            match take(allocs, width) {
                Some(mc) if meta_by_st => {
                    st_fills.push((mc, self.c.word() & !0xF | 0b1110));
                    meta = Some(TmemRef::slot(mc.slot, 0, mc.col as u16));
                }
                Some(mc) => {
                    let r = self.region(128 * 32);
                    fills.push((r, FillElem::SpMeta));
                    let t = TmemRef::slot(mc.slot, 0, mc.col as u16);
                    issue.push(Stmt::Tc(Op::Cp {
                        form: CpForm {
                            cta_group: cg,
                            shape: CpShape::S128x128b,
                            multicast: None,
                            dst_fmt: None,
                            src_fmt: None,
                        },
                        taddr: t,
                        src: mmaenc::kmajor_desc(r),
                    }));
                    meta = Some(t);
                }
                None => sparse = false,
            }
        }
        let idesc = match kind {
            MmaKind::Mxf8f6f4 => {
                mmaenc::idesc_mxf8f6f4(m, n, self.c.below(2), self.c.below(2))
                    | u32::from(sparse) << 2
            }
            MmaKind::Mxf4 | MmaKind::Mxf4nvf4 => {
                // UE4M3 scale factors only for mxf4nvf4 with a size of 4 (§3.7 table).
                let four = matches!(scale_vec, Some(ScaleVec::X4 | ScaleVec::Block16));
                let ue8m0 = !(kind == MmaKind::Mxf4nvf4 && four && self.c.percent(50));
                mmaenc::idesc_mxf4(m, n, ue8m0, sparse, k96)
            }
            // Layout (a): bit 2 sparse, sparsity selector (bits 0-1) 0 or 1 (below);
            // negate A / B (bits 13-14) a quarter of the time each, not for i8
            // (MMA-TRANSPOSE-KIND).
            _ => {
                let d = mmaenc::idesc_for(kind, m, n, self.c.below(4)).encode()
                    | u32::from(sparse) << 2;
                // Sparsity selector 1 (idesc bits 0-1) for f16 / tf32, half the time with the
                // wider forms: the metadata from the next column (§9.7.16.10.8.4; 0 and 1
                // are stated, 2 and 3 are OQ-29; i8 / f8f6f4 must use 0, MMA-SP-SELECTOR). The
                // cp above fills four metadata columns with different words.
                let d = d | u32::from(
                    sparse
                        && !meta_by_st
                        && matches!(kind, MmaKind::F16 | MmaKind::Tf32)
                        && self.form(50),
                );
                d | if self.forms {
                    mmaenc::negate_bits(kind, self.v.percent(25), self.v.percent(25))
                } else {
                    0
                }
            }
        };
        // The operands' element kind follows the types of the instruction descriptor
        // (`mmaenc::operand_fill`): the A and B regions filled above take it.
        let (generic, elem) = (elem, mmaenc::operand_fill(kind, idesc));
        if elem != generic {
            for f in fills.iter_mut().filter(|f| f.1 == generic) {
                f.1 = elem;
            }
        }
        // kind::f8f6f4 with e4m3 A (type 0, idesc bits 7-9) in shared memory: a third of the
        // time (with the wider forms) A holds the bytes 0x7B..0x7E, e4m3 352..448, exponent
        // field 15 (which e4m3, unlike e5m2, uses for numbers: only S.1111.111 is NaN, PTX
        // ISA §5.2.3, OCP FP8); the `ScaleSmall` fill has exactly those bytes. Against B's
        // 0, ±1.5 .. ±3 (or e5m2 small integers) every product is a multiple of 16 below
        // 1,344 and every sum of K = 32 of them exact in f32, so the results stay exact.
        if kind == MmaKind::F8f6f4
            && idesc >> 7 & 7 == 0
            && elem == FillElem::F16Small
            && let MmaA::Desc(d) = a
            && self.form(33)
            && let Some(f) = fills.iter_mut().find(|f| f.0 == d.region)
        {
            f.1 = FillElem::ScaleSmall;
        }
        // Scale factors (§3.7 .block_scale): scale_A and scale_B in TMEM, duplicated into all
        // four 32-lane partitions (MMA-BS-DUP): cp.32x128b.warpx4 copies 32 lanes x 128 bits
        // (4 columns: room for the 1, 2, 3, 4 or 6 one-byte factors per row of every
        // scale-vector size) into every lane quarter; cp::N → mma::N is pipelined.
        let mut scales = None;
        // Scale factors by st when the four quarter warps exist (5% of the time, always
        // without cp): one seed per matrix in all four quarters, so the 32-lane partitions
        // hold the same bytes (MMA-BS-DUP); else by cp.32x128b.warpx4 below. The st words
        // are arbitrary, so their factors are mostly outside the range the oracle computes
        // exactly (OQ-19), hence the small share; the cp source holds `FillElem::ScaleSmall` factors (UE8M0 2^-4 ..
        // 2^-1, UE4M3 352 .. 448).
        let by_st = block_scale && nwarps >= 4 && cfg.st_ld && (!cfg.cp || self.c.percent(5));
        // scale_B holds factor n in lane `n mod 32` of its column `n / 32` (§9.7.16.10.7.3
        // figures, read in the oracle's `mma_scaled`): N / 32 columns, so an N = 256 MMA
        // reads 8; fewer columns written would leave its factors (and results) unknown.
        let sb_cols = n.div_ceil(32).max(4);
        if by_st {
            let (sa, sb) = (take(allocs, 4)?, take(allocs, sb_cols)?);
            st_fills.push((sa, self.c.word()));
            st_fills.push((sb, self.c.word()));
            scales = Some((
                TmemRef::slot(sa.slot, 0, sa.col as u16),
                TmemRef::slot(sb.slot, 0, sb.col as u16),
            ));
        } else if block_scale {
            let (sa, sb) = (take(allocs, 4)?, take(allocs, sb_cols)?);
            // One cp per 4 columns (scale_B of N = 256: two).
            let quads = (0..sa.width / 4)
                .map(|k| (sa, k))
                .chain((0..sb.width / 4).map(|k| (sb, k)));
            for (sc, k) in quads.collect::<Vec<_>>() {
                // 32 rows of 16 B in the K-major layout of `kmajor_desc`: four 8-row core
                // groups at SBO = 256 B apart, so the last group ends at 3 * 256 + 128 B;
                // the region spans the whole stride pattern (1,024 B).
                let r = self.region(4 * 256);
                fills.push((r, FillElem::ScaleSmall));
                issue.push(Stmt::Tc(Op::Cp {
                    form: CpForm {
                        cta_group: cg,
                        shape: CpShape::S32x128b,
                        multicast: Some(CpMulticast::Warpx4),
                        dst_fmt: None,
                        src_fmt: None,
                    },
                    taddr: TmemRef::slot(sc.slot, 0, (sc.col + 4 * k) as u16),
                    src: mmaenc::kmajor_desc(r),
                }));
            }
            scales = Some((
                TmemRef::slot(sa.slot, 0, sa.col as u16),
                TmemRef::slot(sb.slot, 0, sb.col as u16),
            ));
        }
        // A second MMA on the same accumulator (MCM-PIPE-MMA-MMA) accumulates (enable-input-d)
        // with fresh operands: its own B region always, its own A region when A is in shared
        // memory and the collector does not keep A (so D = A2·B2 + D1·2^-s tells a wrong
        // scale-input-d formula, MMA-SCALE-D-SEM, and a wrong accumulation order apart).
        let second = self.c.percent(30);
        // Collector reuse (§3.7, MMA-COLLECTOR-VALID): the first MMA fills buffer a, the second
        // uses it (same A) and ends it; non-ws, A in shared memory, no .ashift.
        // With `cta_group::1` in a cluster of several CTAs every CTA's issuer fills a
        // collector, and whether one CTA's use may read another's fill is open
        // (MMA-COLLECTOR-DEFAULT: the results are unspecified), so reuse goes mostly to
        // programs where one thread per pair fills (one CTA, or `::2`, issued by the even CTA).
        let lone_filler = two || cluster_size == 1 || self.c.percent(20);
        let reuse = second
            && !ws
            && !block_scale
            && a_src == ASrc::Smem
            && self.c.percent(25)
            && lone_filler;
        let collector = if reuse {
            Some(Collector {
                buf: CollectorBuf::A,
                op: CollectorOp::Fill,
            })
        } else if block_scale {
            None
        } else if ws {
            self.c.percent(30).then(|| Collector {
                buf: [
                    CollectorBuf::B0,
                    CollectorBuf::B1,
                    CollectorBuf::B2,
                    CollectorBuf::B3,
                ][self.c.below(4) as usize],
                op: CollectorOp::Discard,
            })
        } else {
            self.c.percent(20).then_some(Collector {
                buf: CollectorBuf::A,
                op: CollectorOp::Discard,
            })
        };
        // .ashift (MMA-ASHIFT-ATMEM, -M, -COLLECTOR): A in TMEM, no block scaling, not ws,
        // M = 128 or 256, no collector fill/use.
        let ashift = a_src != ASrc::Smem
            && !block_scale
            && !ws
            && (m == 128 || m == 256)
            && collector.is_none_or(|c| c.op == CollectorOp::Discard)
            && self.c.percent(if (two && m == 128) || sparse {
                // ::2 M = 128 (data-path layout B): which lanes hold A's shifted rows is
                // figure-only (OQ-22); sparse: which metadata row a shifted A row uses is not
                // stated (OQ-29, §9.7.16.10.8). Their results are unspecified: kept, at a fifth.
                cfg.ashift_pct / 5
            } else {
                cfg.ashift_pct
            });
        let form = MmaForm {
            ws,
            sp: sparse,
            cta_group: cg,
            kind,
            block_scale,
            scale_vec,
            ashift,
            collector,
        };
        let scale_ok =
            matches!(kind, MmaKind::F16 | MmaKind::Tf32) && target::has_scale_input_d(tgt);
        // MMA-DOL-SIZE: 4 elements for ::1, 8 for ::2.
        let dol_len = if two { 8 } else { 4 };
        // Sparse B rows are twice as long (`mmaenc::kmajor_desc_rows`); `sparse` may have
        // been dropped after B's region was sized for it (no metadata columns).
        let b_row = if sparse { 2 * row } else { row };
        let b0 = mmaenc::kmajor_desc_rows(rb, b_row);
        let mk = |c: &mut C, form: MmaForm, a: MmaA, b: SmemDesc, enable: bool| -> Stmt {
            Stmt::Tc(Op::Mma(Box::new(Mma {
                form,
                d: TmemRef::slot(d.slot, 0, d.col as u16),
                a,
                b,
                sp_meta: meta,
                idesc,
                scale_a: scales.map(|s| s.0),
                scale_b: scales.map(|s| s.1),
                // Optional (MMA-DOL-SIZE); not in .ws or .block_scale forms. With ::2, how
                // mask bits 128-255 map onto the peer's lanes is open (OQ-31), so the MMA's
                // results are unspecified: kept, at a smaller share. On a first MMA that an
                // accumulating one follows, also at a smaller share: its disabled lanes keep
                // arbitrary words (D stored before it, or never written), which the
                // accumulation rounds (OQ-19) unless the kind is i8.
                disable_output_lane: (!ws
                    && !block_scale
                    && c.percent(if two {
                        1
                    } else if !enable && second && kind != MmaKind::I8 {
                        3
                    } else {
                        10
                    }))
                .then(|| (0..dol_len).map(|_| c.word()).collect()),
                enable_input_d: enable,
                scale_input_d: (!ws && enable && scale_ok && c.percent(30))
                    .then(|| c.below(16) as u8),
                zero_col_mask: (ws && c.percent(30)).then_some(0),
            })))
        };
        issue.push(mk(self.c, form, a, b0, false));
        // Fresh operands of a later accumulating MMA: a new B region, and a new A region when
        // A is in shared memory and not kept by the collector.
        let fresh = |this: &mut Self, fills: &mut Vec<(u8, FillElem)>, keep_a: bool| {
            let rb2 = this.region(n * b_row);
            fills.push((rb2, elem));
            let a2 = match a {
                MmaA::Desc(_) if !keep_a => {
                    let r = this.region(a_rows * row);
                    fills.push((r, elem));
                    MmaA::Desc(mmaenc::kmajor_desc(r))
                }
                other => other,
            };
            (a2, mmaenc::kmajor_desc_rows(rb2, b_row))
        };
        if second {
            let (a2, b2) = fresh(self, &mut fills, reuse);
            let form2 = MmaForm {
                collector: if reuse {
                    Some(Collector {
                        buf: CollectorBuf::A,
                        op: if self.c.percent(50) {
                            CollectorOp::Lastuse
                        } else {
                            CollectorOp::Use
                        },
                    })
                } else {
                    collector
                },
                ..form
            };
            let mma2 = mk(self.c, form2, a2, b2, true);
            // Now and then the accumulating MMA runs in a loop of 48 to 63 iterations: one
            // accumulator under that many pipelined MMAs of one thread (MCM-PIPE-MMA-MMA,
            // §4.2), D = D + A2·B2 each time (MMA-ENABLE-D), where a model that keeps a
            // bounded history of writes must fold the oldest in. Not with scale-input-d
            // (its repeated halving leaves the small-integer grid, OQ-19) nor a collector
            // use (a `::lastuse` ends the buffer, MMA-COLLECTOR-VALID).
            let loopable = matches!(&mma2, Stmt::Tc(Op::Mma(m))
                if m.scale_input_d.is_none()
                    && m.form.collector.is_none_or(|c| c.op == CollectorOp::Discard));
            if loopable && self.form(MMA_LOOP_PCT) {
                // Half the time an MMA on 8 other columns follows (N = 8, overwriting, the
                // loop's A and B): a model that folds its oldest write in as the new one comes
                // must keep what the remaining writes own outside the new one's columns.
                let tail = (!two && !ws && !block_scale && !sparse && self.v.percent(50))
                    .then(|| take(allocs, 8))
                    .flatten()
                    .and_then(|t| match &mma2 {
                        Stmt::Tc(Op::Mma(m)) => {
                            let mut m = m.clone();
                            m.d = TmemRef::slot(t.slot, 0, t.col as u16);
                            // N >> 3 at bits 17-22 (§2.8 layout (a)): N = 8, legal for every
                            // kind of `cta_group::1` (§2.7 table).
                            m.idesc = m.idesc & !(0x3F << 17) | 1 << 17;
                            m.enable_input_d = false;
                            m.scale_input_d = None;
                            m.disable_output_lane = None;
                            Some(Stmt::Tc(Op::Mma(m)))
                        }
                        _ => None,
                    });
                issue.push(Stmt::Loop {
                    count: self.v.range(48, 63) as u8,
                    body: vec![mma2],
                });
                issue.extend(tail);
            } else {
                issue.push(mma2);
            }
        }
        // mma::N → shift::N is pipeline pair 5 (MCM-PIPE-MMA-SHIFT); shift needs an
        // arch-specific target (SHIFT-TARGET) and a lane field that is a multiple of 32.
        let shifted = cfg.shift && target::has_shift(tgt) && self.c.percent(30);
        let mut mma3 = false;
        if shifted {
            issue.push(Stmt::Tc(Op::Shift {
                form: ShiftForm {
                    cta_group: cg,
                    down_first: false,
                },
                taddr: TmemRef::slot(d.slot, 0, d.col as u16),
            }));
            // shift::N → mma::N (pair 3): one more accumulating MMA, fresh operands, on the
            // shifted accumulator (no collector: the collector sequence stays fill → use).
            mma3 = self.c.percent(30);
            if mma3 {
                let (a3, b3) = fresh(self, &mut fills, false);
                let form3 = MmaForm {
                    collector: collector.filter(|c| c.op == CollectorOp::Discard),
                    ..form
                };
                issue.push(mk(self.c, form3, a3, b3, true));
            }
        }
        // An extra cp of any shape into scratch columns that every consumer warp loads, tracked
        // by the same commit. After a shift, a .4x256b copy may instead go into D's first four
        // rows (shift::N → cp.4x256b::N, pair 4: the copy refills the rows the shift moved).
        let mut scratch = None;
        let mut scratch_fill = None;
        if cfg.cp && self.c.percent(30) {
            // Not after a third MMA: mma → cp is no pipeline pair, so the two would race on D.
            let into_d = shifted && !mma3 && n >= 8 && self.c.percent(30);
            let target_cols = if into_d {
                Some(Cols {
                    slot: d.slot,
                    col: d.col,
                    width: 8,
                })
            } else {
                take(allocs, 8)
            };
            if let Some(sc) = target_cols {
                let r = self.region(128 * 32);
                fills.push((r, FillElem::Word));
                let shape = if into_d {
                    CpShape::S4x256b
                } else {
                    CpShape::LEGAL[self.c.below(CpShape::LEGAL.len() as u32) as usize]
                };
                // CP-MCAST-REQ: .64x128b needs warpx2, .32x128b needs warpx4; no multicast on
                // other shapes (CP-MCAST-OTHER).
                let multicast = match shape {
                    CpShape::S64x128b => Some(if self.c.percent(50) {
                        CpMulticast::Warpx2_02_13
                    } else {
                        CpMulticast::Warpx2_01_23
                    }),
                    CpShape::S32x128b => Some(CpMulticast::Warpx4),
                    _ => None,
                };
                // CP-DECOMP-FMT: both formats or neither.
                let decomp = self.c.percent(25);
                issue.push(Stmt::Tc(Op::Cp {
                    form: CpForm {
                        cta_group: cg,
                        shape,
                        multicast,
                        dst_fmt: decomp.then_some(CpDstFmt::B8x16),
                        src_fmt: decomp.then(|| {
                            if self.c.percent(50) {
                                CpSrcFmt::B6x16P32
                            } else {
                                CpSrcFmt::B4x16P64
                            }
                        }),
                    },
                    taddr: TmemRef::slot(sc.slot, 0, sc.col as u16),
                    src: mmaenc::kmajor_desc(r),
                }));
                if !into_d {
                    scratch = Some(sc);
                    // The quarter warps store the scratch cells the cp's footprint leaves
                    // (§9.7.16.9.2, reference §3.5: columns 4-7 of the 128-bit shapes, which
                    // write 4 columns of every lane; lanes 4-127 of .4x256b, which writes
                    // lanes 0-3) before the sync, with a seed per quarter, so the consumers'
                    // lds observe written cells only, and a cp writing outside its footprint
                    // changes observed words. The 128-bit shapes' footprint stays unwritten
                    // before the cp (a read that overtakes the cp sees no value any program
                    // gives); quarter 0's st of a .4x256b scratch covers lanes 0-31, the cp's
                    // four lanes too, which the cp then overwrites with values that differ
                    // from the st's. One scratch in twenty stays unstored, so an ld of
                    // never-written cells (OQ-9) still occurs.
                    let rest = match shape {
                        CpShape::S128x256b => None,
                        CpShape::S4x256b => Some((sc, 0b1111)),
                        _ => Some((
                            Cols {
                                col: sc.col + 4,
                                width: 4,
                                ..sc
                            },
                            0b1111,
                        )),
                    };
                    if let Some((cols, quarters)) = rest
                        && cfg.st_ld
                        && self.c.percent(95)
                    {
                        scratch_fill = Some((cols, self.c.word(), quarters));
                    }
                }
            }
        }
        let shared_cluster = two || self.c.percent(50);
        let issuer = self.c.below(nwarps as u32) as usize;
        // Pipelined, different thread (§4.4 row 3, MCM-XTHREAD): another warp issues the first
        // `k` statements of the issue list in the work phase (ops; fence::before_thread_sync;
        // barrier) and the issuer the rest after the barrier and its after-fence, so the pair
        // at the split (cp → mma, mma → mma, mma → shift, shift → mma, shift → cp.4x256b) is
        // ordered across threads. The issuer keeps the last op that writes D (its commit is the
        // one the consumers wait for) and a collector use stays with its fill's thread. The
        // other warp commits its ops to mbarrier 1 and waits for it before the teardown (a
        // dealloc must not overtake an async write, OQ-4).
        let mut pre = None;
        // Not with A from an MMA (its wait stays with the issuer) nor a loop of MMAs (the
        // issuer keeps every write of D; `writes_d` sees no loop's).
        let splittable =
            a_src != ASrc::Mma && !issue.iter().any(|s| matches!(s, Stmt::Loop { .. }));
        if !two && splittable && nwarps >= 2 && self.c.percent(cfg.cross_pct) {
            let writes_d = |st: &Stmt| match st {
                Stmt::Tc(Op::Mma(_)) | Stmt::Tc(Op::Shift { .. }) => true,
                Stmt::Tc(Op::Cp { taddr, .. }) => {
                    taddr.base == TBase::Slot(d.slot) && u32::from(taddr.col) == d.col
                }
                _ => false,
            };
            let last_d = issue.iter().rposition(writes_d).unwrap_or(0);
            let first_mma = issue
                .iter()
                .position(|st| matches!(st, Stmt::Tc(Op::Mma(_))))
                .unwrap_or(0);
            let most = if reuse { first_mma } else { last_d };
            if most >= 1 {
                let k = self.c.range(1, most as u32) as usize;
                let p = (issuer + 1 + self.c.below(nwarps as u32 - 1) as usize) % nwarps;
                pre = Some((p, issue.drain(..k).collect::<Vec<_>>()));
            }
        }
        let mut consumers: Vec<bool> = (0..nwarps).map(|_| self.c.percent(60)).collect();
        if !consumers.iter().any(|x| *x) {
            consumers[issuer] = true;
        }
        // D written before the first MMA (by st in each lane quarter, then wait::st and the
        // fence / barrier / fence of the MMA phase, as for the other st fills): the first MMA
        // (enable-input-d false) must overwrite it, D = A·B, where an MMA accumulating
        // whatever enable-input-d says gives A·B + D (MMA-ENABLE-D, §9.7.16.10.9). Without it
        // D's cells are never written before the first MMA, and OQ-9 leaves what accumulating
        // into them gives open. Only for kind::i8, whose s32 accumulation of arbitrary st words
        // is exact (OQ-19 leaves rounded sums open), and not with an MMA issued before the
        // barrier by another warp (`pre`), which the st would race.
        // Likewise before a first MMA with disable-output-lane: its disabled lanes keep the
        // st's values (MMA-DOL-SEM), where without it they would hold never-written cells.
        let dol_first = issue.iter().find_map(|st| match st {
            Stmt::Tc(Op::Mma(m)) => Some(m.disable_output_lane.is_some()),
            _ => None,
        }) == Some(true);
        if (kind == MmaKind::I8 || dol_first)
            && pre.is_none()
            && nwarps >= 4
            && cfg.st_ld
            && (dol_first || self.c.percent(30))
        {
            st_fills.push((d, self.c.word()));
        }
        // The folded layouts B, E and G write N·R/128 columns of every lane (R rows of D per
        // block of lanes, §9.7.16.10.5); sparse and block-scaled forms keep N.
        let rows = match (two, ws, m) {
            (true, _, 128) | (false, true, 64) => 64,
            (false, true, 32) => 32,
            _ => 128,
        };
        let n = if sparse || block_scale {
            n
        } else {
            n * rows / 128
        };
        Some(MmaPlan {
            issuer,
            consumers,
            issue,
            shared_cluster,
            a_src,
            a_cols,
            a_dup: two && m == 128,
            st_fills,
            d,
            n,
            fills,
            scratch,
            scratch_fill,
            pre,
        })
    }
}

/// Whether the kind is block-scaled (MMA-BS-KINDS: mxf8f6f4, mxf4, mxf4nvf4).
fn is_block_kind(k: MmaKind) -> bool {
    matches!(k, MmaKind::Mxf8f6f4 | MmaKind::Mxf4 | MmaKind::Mxf4nvf4)
}

/// The statement that issues a plan's MMA: one elected thread of the issuing warp, in every
/// CTA for `cta_group::1`; for `::2`, in the even CTA of each pair only, whose commit
/// multicasts the arrive to both CTAs of its pair (ctaMask bits `rank` and `rank + 1`,
/// COMMIT-MCAST-MASK; reference §2.5, §3.9).
pub(super) fn issue_stmt(plan: &MmaPlan, cg: CtaGroup, cluster_size: u8) -> Stmt {
    let elected = |commit_stmt: Stmt| {
        let mut then = plan.issue.clone();
        then.push(commit_stmt);
        Stmt::If {
            cond: Cond::ElectOne,
            then,
            els: vec![],
        }
    };
    if cg == CtaGroup::One {
        // COMMIT-TRACK: the commit makes mbarrier 0 track every earlier async op of the thread.
        return elected(commit(CtaGroup::One, 0, plan.shared_cluster));
    }
    // Pairs from the last to the first, so the chain of ifs tests rank 0 first.
    let mut chain: Vec<Stmt> = Vec::new();
    for even in (0..cluster_size.max(2)).step_by(2).rev() {
        let c = Stmt::Tc(Op::Commit {
            form: CommitForm {
                cta_group: CtaGroup::Two,
                arrive_one: true,
                shared_cluster: true,
                multicast: true,
                ty: Ty::B64,
            },
            mbar: 0,
            addr: MbarAddr::Shared,
            cta_mask: Some(0b11 << even),
        });
        chain = vec![Stmt::If {
            cond: Cond::CtaRank(even),
            then: vec![elected(c)],
            els: chain,
        }];
    }
    chain.pop().expect("at least one pair")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Valid programs hold f16 / tf32 sparse MMAs with sparsity selector 1, never i8 or
    /// f8f6f4 ones (MMA-SP-SELECTOR).
    #[test]
    fn sparse_f16_and_tf32_mmas_take_selector_one() {
        let mut sel1 = 0;
        for seed in 0..3000 {
            let p = build_seeded(&Config::default(), seed);
            p.walk(&mut |s| {
                if let Stmt::Tc(Op::Mma(m)) = s
                    && m.form.sp
                    && m.idesc & 3 != 0
                {
                    assert_eq!(m.idesc & 3, 1, "seed {seed}");
                    assert!(
                        matches!(m.form.kind, MmaKind::F16 | MmaKind::Tf32),
                        "seed {seed}"
                    );
                    sel1 += 1;
                }
            });
        }
        assert!(sel1 > 5, "{sel1}");
    }

    /// Valid programs hold f8f6f4 MMAs with e4m3 A whose shared-memory region is filled with
    /// the bytes 0x7B..0x7E (e4m3 352..448, exponent field 15, PTX ISA §9.7.16.10.1).
    #[test]
    fn f8f6f4_e4m3_a_takes_exponent_15_values() {
        let mut big = 0;
        for seed in 0..3000 {
            let p = build_seeded(&Config::default(), seed);
            let mut fills = std::collections::HashMap::new();
            let mut mmas = Vec::new();
            p.walk(&mut |s| match s {
                Stmt::Fill { region, elem, .. } => {
                    fills.insert(*region, *elem);
                }
                Stmt::Tc(Op::Mma(m)) => mmas.push((**m).clone()),
                _ => {}
            });
            for m in mmas {
                if let MmaA::Desc(d) = m.a
                    && fills.get(&d.region) == Some(&FillElem::ScaleSmall)
                    && !m.form.block_scale
                {
                    assert_eq!(m.form.kind, MmaKind::F8f6f4, "seed {seed}");
                    assert_eq!(m.idesc >> 7 & 7, 0, "seed {seed}: e4m3 A");
                    big += 1;
                }
            }
        }
        // The fill's bytes, whatever the seed.
        for i in 0..256 {
            let w = values::fill_word(FillElem::ScaleSmall, 0x1234_5678, i);
            assert!(w.to_le_bytes().iter().all(|b| (0x7B..=0x7E).contains(b)));
        }
        assert!(big > 5, "{big}");
    }
}
