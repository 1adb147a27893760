//! The open questions (reference §7) as data: one [`OpenQuestion`] per `OQ-n`, in the
//! reference's order, each with its group heading and its Markdown text.
//!
//! Where the spec is silent the oracle answers unspecified and cites these questions; the
//! catalogue's rows name them in their consequences (e.g. `unstated (OQ-17)`). The rows
//! transcribe §7 of `docs/reference.md`; a test parses that section and compares, so the two
//! cannot drift. This file is a data table: its length is the section's.

use serde::Serialize;

/// One open question of reference §7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OpenQuestion {
    /// `n` of `OQ-n`.
    pub number: u32,
    /// The group it is listed under (e.g. `Allocation`, `MMA`).
    pub group: &'static str,
    /// The question as Markdown: the first line starts with `**OQ-n ...**`, the lines after
    /// it are its sub-items (`* ...`), one level below.
    pub text: &'static str,
}

impl OpenQuestion {
    /// `OQ-n`.
    pub fn name(&self) -> String {
        format!("OQ-{}", self.number)
    }
}

/// Every open question, in the order of reference §7 (grouped; `OQ-29` is listed under `MMA`).
pub static OPEN_QUESTIONS: &[OpenQuestion] = &[
    OpenQuestion {
        number: 1,
        group: "Allocation",
        text: r##"**OQ-1 (what alloc returns).** The spec says only that the "address of the allocated TMEM" is stored.
* Not stated: that the lane field is 0; where the column offset lands; whether it is aligned to nCols or to 32; whether `ld.shared` of it is the only legal way to get it.
* The oracle must treat the returned address as opaque. It may check only that it decodes to lane 0 and a column in [0, 512−nCols] as an *observation*, not a spec fact."##,
    },
    OpenQuestion {
        number: 2,
        group: "Allocation",
        text: r##"**OQ-2 (contiguity).** Nothing says the nCols columns of one allocation are contiguous from the returned column. One address is returned, which suggests they are, but it is not stated. Allocation placement policy (first fit etc.) is also unstated."##,
    },
    OpenQuestion {
        number: 3,
        group: "Allocation",
        text: r##"**OQ-3 (dealloc mismatches).** The spec does not say what happens for:
* a taddr not returned by alloc, or one in the middle of an allocation;
* an nCols different from the allocation's (bigger, smaller, partial free);
* a double dealloc;
* dealloc of memory allocated by a different warp;
* a non-zero lane field.
* "must point to a previous allocation" is the only text."##,
    },
    OpenQuestion {
        number: 4,
        group: "Allocation",
        text: r##"**OQ-4.** For `::1`, there is no statement on dealloc while async operations (mma/cp/shift/ld/st) on the region are still in flight. Only `::2` states the synchronization requirement."##,
    },
    OpenQuestion {
        number: 5,
        group: "Allocation",
        text: r##"**OQ-5.** No consequence is given for:
* exiting without deallocating (leak? trap? effect on later CTAs on the SM?);
* alloc after relinquish ("illegal": trap, error, or UB?);
* breaking the non-increasing rule ("should").
* The scope of "any two allocations" is also open: does a dealloc in between reset it?"##,
    },
    OpenQuestion {
        number: 6,
        group: "Allocation",
        text: r##"**OQ-6 (relinquish details).**
* Is relinquish idempotent?
* For `::2`, must both warps relinquish?
* Is an alloc already blocked when relinquish runs affected?
* Does it release a waiting alloc in another CTA?
* Dealloc after relinquish is not forbidden, and third-party code does it, but it is not explicitly blessed."##,
    },
    OpenQuestion {
        number: 7,
        group: "Allocation",
        text: r##"**OQ-7 (capacity sharing).**
* Capacity is stated as 512 columns "per CTA", yet alloc blocks "until available", which implies sharing with co-resident CTAs on the SM.
* What happens when one CTA's own outstanding allocations plus a new request exceed 512: deadlock by construction, or an error? Unstated."##,
    },
    OpenQuestion {
        number: 8,
        group: "Allocation",
        text: r##"**OQ-8.** TMEM geometry is stated only for sm_100a/f. Other targets (sm_103, sm_110) are not explicit."##,
    },
    OpenQuestion {
        number: 9,
        group: "Contents and addressing",
        text: r##"**OQ-9 (contents and bounds).** Unstated:
* initial TMEM contents;
* contents after dealloc and re-alloc, including memory left by a previous CTA;
* the result of ld/st/cp/mma/shift on **unallocated** columns;
* addresses with lane ≥ 128 or column ≥ 512, or an access that runs past the allocation (e.g. `.x128` from a high column);
* reads of cells never written."##,
    },
    OpenQuestion {
        number: 10,
        group: "Contents and addressing",
        text: r##"**OQ-10 (ld/st footprint).**
* The exact thread/register ↔ lane/column mapping for the 16-lane shapes is given only in figures.
* The required lane alignment of taddr for 16-lane shapes (within the warp's quarter: 0 or 16?) is not stated.
* How pack/unpack change the column footprint, and which 16-bit half of each cell is used, is shown only in a figure.
* Whether immHalfSplitoff has a range or alignment constraint is not stated."##,
    },
    OpenQuestion {
        number: 11,
        group: "Contents and addressing",
        text: r##"**OQ-11.** The consequence of a warp addressing lanes outside its quarter (LDST-LANE-QUARTER) is not stated: fault, wrong data, or UB."##,
    },
    OpenQuestion {
        number: 12,
        group: "Contents and addressing",
        text: r##"**OQ-12 (reading ld results).** The register-dependency rule says a true dependency is honoured without wait::ld. Common practice, and the wait seed example, treats wait::ld as required before registers are valid.
* The harness must not flag "use r before wait::ld" as a violation.
* It must not assume either ordering for memory hazards."##,
    },
    OpenQuestion {
        number: 13,
        group: "Contents and addressing",
        text: r##"**OQ-13 (ld.red details).** Unstated:
* exactly which columns are reduced (per lane over all .num repetitions?);
* NaN handling without `.NaN`;
* signed-zero handling;
* the value in `r` vs `redval` when `.red` is used."##,
    },
    OpenQuestion {
        number: 14,
        group: "Issue and pairing",
        text: r##"**OQ-14 (multi-thread issue).** If several threads (e.g. a whole warp) execute mma/cp/shift/commit, does each start its own operation? The literal reading of "single thread initiates" says yes: N operations.
* Also open: in a CTA pair, may either CTA issue `::2` mma/cp/shift, or only the even one?"##,
    },
    OpenQuestion {
        number: 15,
        group: "Issue and pairing",
        text: r##"**OQ-15 (commit details).**
* Unstated: the arrive time when no operation is outstanding; whether operations already tracked by an earlier commit count again.
* For `::2` without multicast, which CTA's mbarrier is signalled: the one `mbar` names in the cluster window?"##,
    },
    OpenQuestion {
        number: 16,
        group: "Issue and pairing",
        text: r##"**OQ-16 (shift details).** Unstated:
* which lanes (the 32 lanes from taddr? all 128?) and which columns (8 columns = 256 bits?) are affected;
* what the first row holds afterwards;
* whether the lane-alignment requirement is per 32-lane quarter.
* The syntax line says `.cta_group.down` but the examples say `.down.cta_group`. The generator should emit the syntax-line order; the other order is a candidate for ptxas acceptance testing, not a spec fact."##,
    },
    OpenQuestion {
        number: 17,
        group: "Issue and pairing",
        text: r##"**OQ-17 (cp details).** Unstated:
* whether multicast is allowed on shapes other than the two with a requirement;
* the exact meaning of "each warp of a pair receives half the data";
* taddr lane/column alignment;
* the TMEM footprint of each shape under multicast."##,
    },
    OpenQuestion {
        number: 18,
        group: "Issue and pairing",
        text: r##"**OQ-18 (cta_group uniformity).** The spec gives no consequence for mixing `::1` and `::2` in one kernel, and does not say how the rule applies across separately compiled device functions.
* The harness keeps the row *static* (the text of one kernel and the functions it calls shows it) and should expect that toolchains may differ in whether and where they enforce it."##,
    },
    OpenQuestion {
        number: 19,
        group: "MMA",
        text: r##"**OQ-19 (numerics).** Not specified: rounding, accumulation order, intermediate precision, denormal, NaN and Inf behaviour; saturation semantics for i8 beyond "saturate"; how negate interacts with unsigned types. The differential oracle needs tolerances and must treat exact bits as unspecified."##,
    },
    OpenQuestion {
        number: 20,
        group: "MMA",
        text: r##"**OQ-20 (f8f6f4 with f16 D), mostly settled.** The shape tables of 9.1 and 9.3 list D .f32 and .f16 for f8f6f4. In the idesc table the D-type row has one value cell fewer than there are kinds, and the f8f6f4 cell is empty in the markdown conversions; the same pattern marks merged cells elsewhere in that table (saturate, negate). So "F16=0, F32=1" most likely spans f16 and f8f6f4. Treat F16 D as valid for f8f6f4. Residual doubt: the merged cell is not visible in the text copies."##,
    },
    OpenQuestion {
        number: 21,
        group: "MMA",
        text: r##"**OQ-21 (smem descriptor constant).** Bits 53-60 are documented as "0xb00000000", which is not a valid 8-bit literal; presumably 0.
* The "0b001" constant in bits 46-48 is stated explicitly from 9.x; older text may differ (not checked).
* Reserved bits are "must be 0" only from 9.3 wording."##,
    },
    OpenQuestion {
        number: 22,
        group: "MMA",
        text: r##"**OQ-22 (syntax footnotes).** The `::discard*` asterisk in the mma collector syntax and the `**`/`***` on cp shapes and multicast refer to footnotes that the sources lack. Also unclear: the meaning of "Tensor Memory Datapath Lane Alignment 0 or 16"; and the D footprint (lanes and columns) of each layout A-G, which is given only in figures."##,
    },
    OpenQuestion {
        number: 23,
        group: "MMA",
        text: r##"**OQ-23 (2:4 metadata).** For 2:4 sparsity (f16, f8f6f4, mxf8f6f4, i8) the spec lists the "meaningful" metadata values but, unlike tf32 and mxf4, does not say other values are UB."##,
    },
    OpenQuestion {
        number: 24,
        group: "MMA",
        text: r##"**OQ-24 (invalid descriptors).** No consequence is stated for an invalid idesc or descriptor (bad M/N, reserved bits set, invalid swizzle, misaligned address): fault, garbage, or UB?"##,
    },
    OpenQuestion {
        number: 29,
        group: "MMA",
        text: r##"**OQ-29.** The scale-factor layouts (SFA/SFB ID sub-column selection, the K=96 variants) and sparse-metadata layouts are given only as figures. The oracle cannot derive them from text."##,
    },
    OpenQuestion {
        number: 25,
        group: "Memory model and versions",
        text: r##"**OQ-25.** For tcgen05.wait, divergence is described with "must" but, unlike the other `.aligned` instructions, no UB sentence is given."##,
    },
    OpenQuestion {
        number: 26,
        group: "Memory model and versions",
        text: r##"**OQ-26 (alloc address visibility).**
* The spec gives no canonical pattern for publishing the allocated address to other warps.
* alloc is synchronous and its store is weak, so an ordinary barrier suffices for the smem value.
* Whether tcgen05.fence before/after the barrier is needed for *TMEM* accesses by other warps after alloc is not stated. CUTLASS-style code uses both."##,
    },
    OpenQuestion {
        number: 27,
        group: "Memory model and versions",
        text: r##"**OQ-27 (MCM wording).** The text says "four canonical patterns", then lists five, and labels two examples "Example 1". Seed 004 says "copy" instead of "cp" in pipeline pair 2. Seed 004 also omits "and kind" in pair 1; PTX ISA 9.2+ includes it. The harness should use the stricter 9.2+ condition (same N, accumulator, shape **and kind**)."##,
    },
    OpenQuestion {
        number: 28,
        group: "Memory model and versions",
        text: r##"**OQ-28 (seed wording differences).**
* Seed 000 calls alloc "potentially blocking"; 9.3 says "blocking".
* Seed 001 drops "potentially blocking" and the `::2` dealloc paragraph, and says the peer must be "launched and still active". Seed 000 says "eventually participate".
* Seed 003 has the older `::2` alloc row ("peer active, not exited"); newer text says the first warp may block until the peer arrives.
* None of these differences changes a rule's kind, except that the `::2` pairing is *blocking* in newer text. The catalogue records both."##,
    },
    OpenQuestion {
        number: 30,
        group: "Memory model and versions",
        text: r##"**OQ-30 (settled by secondary evidence).** The tcgen05 sections name sm_103a without a PTX version. LLVM's NVPTX target table requires PTX 8.8 for `sm_103`/`sm_103a`/`sm_103f`, and ptxas 12.9 (PTX ≤ 8.8) is the first to know them. Use 8.8; the ISA release notes were not read."##,
    },
    OpenQuestion {
        number: 31,
        group: "Memory model and versions",
        text: r##"**OQ-31 (disable-output-lane for ::2).** The 8-element (256-bit) mask for `::2` is described only as "bit *i* = lane *i*"; how bits 128-255 map onto the peer CTA's TMEM lanes is not stated."##,
    },
    OpenQuestion {
        number: 32,
        group: "Memory model and versions",
        text: r##"**OQ-32 (block-scale inconsistencies).**
* The scale-shape table says `scale_vec::2X`/`4X` are valid for "all supported K" with M×2 / M×4 scales, yet the alias rules restrict `block32`/`block16` ≡ 2X/4X to K = 64 or 128, and K=96 needs 3 or 6 scale factors per row. Whether `scale_vec::2X`/`4X` may be combined with idesc K=96 is unclear. Note also that `scale_vec::NX` needs `sm_100a` while K=96 needs `sm_103a`, so the combination may simply be impossible.
* The idesc table allows SF IDs 0 or 2 for mxf4/mxf4nvf4, but the block32/K=96 layout figures (A and B) show IDs 0, 1, 2 and 3."##,
    },
    OpenQuestion {
        number: 33,
        group: "Memory model and versions",
        text: r##"**OQ-33 (commit category).** The commit instruction text calls it asynchronous; the MCM category table calls it synchronous. The catalogue follows the MCM (it is ordered with the thread's other tcgen05 operations; its arrive happens when the tracked operations complete)."##,
    },
    OpenQuestion {
        number: 34,
        group: "Memory model and versions",
        text: r##"**OQ-34 (qualifier order).** Each syntax line gives one qualifier order. The spec never says other orders are invalid, and the ISA's own examples use other orders (`tcgen05.shift.down.cta_group::1`, `ld.red ... .x8.u32.max`). The oracle must not classify a reordered but otherwise valid instruction as ill-formed; the generator should emit the syntax-line order."##,
    },
    OpenQuestion {
        number: 35,
        group: "Memory model and versions",
        text: r##"**OQ-35 (which warps may allocate).** "Must be allocated by a single warp in a CTA" can mean "each alloc is warp-wide" or "only one warp of the CTA ever allocates". Not settled; also whether a warp may dealloc another warp's allocation (OQ-3)."##,
    },
    OpenQuestion {
        number: 36,
        group: "Memory model and versions",
        text: r##"**OQ-36 (A from TMEM and transpose).** The ISA does not say whether the transpose-A bit is meaningful when A is read from TMEM (`[a-tmem]`). CUTLASS statically requires K-major A for all its TMEM-A wrappers. Treat a set transpose-A bit with `[a-tmem]` as unspecified."##,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference §7 parsed into (group, number, text) in the layout of [`OpenQuestion`].
    fn reference_questions() -> Vec<(String, u32, String)> {
        let text = include_str!("../../../docs/reference.md");
        let start = text.find("\n## 7.").expect("the reference has section 7");
        let end = text.find("\n## 8.").expect("the reference has section 8");
        let mut group = String::new();
        let mut out: Vec<(String, u32, String)> = Vec::new();
        for line in text[start..end].lines().skip(2) {
            if line.trim().is_empty() {
                continue;
            }
            if let Some(g) = line.strip_prefix("**").and_then(|l| l.strip_suffix("**")) {
                group = g.to_string();
            } else if let Some(item) = line.strip_prefix("* ") {
                let n = item
                    .strip_prefix("**OQ-")
                    .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                    .and_then(|d| d.parse().ok())
                    .unwrap_or_else(|| panic!("an item of §7 that is no OQ: {line}"));
                out.push((group.clone(), n, item.to_string()));
            } else {
                let sub = line
                    .strip_prefix("  ")
                    .unwrap_or_else(|| panic!("unexpected line in §7: {line}"));
                let last = out.last_mut().expect("a sub-item follows its question");
                last.2.push('\n');
                last.2.push_str(sub);
            }
        }
        out
    }

    #[test]
    fn table_matches_the_reference_markdown() {
        let md = reference_questions();
        assert_eq!(md.len(), OPEN_QUESTIONS.len(), "number of open questions");
        for ((group, n, text), q) in md.iter().zip(OPEN_QUESTIONS) {
            assert_eq!(*n, q.number);
            assert_eq!(group, q.group, "OQ-{n}");
            assert_eq!(text, q.text, "OQ-{n}");
        }
    }

    #[test]
    fn numbers_are_one_to_n_once_each() {
        let mut ns: Vec<u32> = OPEN_QUESTIONS.iter().map(|q| q.number).collect();
        ns.sort_unstable();
        let want: Vec<u32> = (1..=36).collect();
        assert_eq!(ns, want);
        assert_eq!(OPEN_QUESTIONS[0].name(), "OQ-1");
    }

    /// Every `OQ-n` a catalogue row cites is a question of this table.
    #[test]
    fn catalogue_rows_cite_existing_questions() {
        for r in super::super::ROWS {
            for part in format!("{} {}", r.rule, r.consequence).split("OQ-").skip(1) {
                let n: u32 = part
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .and_then(|d| d.parse().ok())
                    .unwrap_or_else(|| panic!("{}: OQ- without a number", r.id));
                assert!(
                    OPEN_QUESTIONS.iter().any(|q| q.number == n),
                    "{} cites OQ-{n}",
                    r.id
                );
            }
        }
    }
}
