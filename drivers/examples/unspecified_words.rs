//! Where the oracle's unspecified words come from: the valid, race-free cases of the
//! campaign's default mix (`Mode::Mixed`, the default configuration), their observed words
//! counted as `report.json` `words` counts them (`WordCounts::of`), the unspecified ones
//! attributed to the oracle's notes of the case (every case with unspecified words carries
//! one naming the rule or open question, `tests/valid_words.rs`), to the case's only note where
//! it has one, and to the MMA forms of the case, each marked by whether the oracle computes
//! that form at all ("form computed") or leaves its results open ("form open").
//!
//! ```text
//! cargo run --release -p tcgen05-drivers --example unspecified_words -- 20000 [seed]
//! ```

use std::collections::BTreeMap;
use tcgen05_drivers::report::WordCounts;
use tcgen05_generators::cases::{Mode, Stream};
use tcgen05_ir::observe::Layout;
use tcgen05_ir::{CtaGroup, MmaA, Op};

/// The reason an MMA's results are not computed, in words (the oracle's conditions in
/// `tcgen05_oracle::run::mma`, read from the form and the instruction descriptor).
fn mma_class(m: &tcgen05_ir::Mma) -> String {
    let f = &m.form;
    let d = m.idesc;
    let mut c = format!("{:?}", f.kind);
    if f.cta_group == CtaGroup::Two {
        c += "/::2";
    }
    if f.ws {
        c += "/ws";
    }
    if f.sp {
        c += "/sp";
    }
    if f.block_scale {
        c += "/bs";
    }
    if !f.block_scale {
        c += &format!("/M{}", (d >> 24 & 0x1F) << 4);
        c += &format!("/D{}", d >> 4 & 3);
        c += &format!("/A{}B{}", d >> 7 & 7, d >> 10 & 7);
    }
    if f.collector
        .is_some_and(|c| c.op != tcgen05_ir::CollectorOp::Discard)
    {
        c += "/coll";
    }
    if m.enable_input_d {
        c += "/acc";
    }
    if m.disable_output_lane.is_some() {
        c += "/dol";
    }
    if matches!(m.a, MmaA::Tmem(_)) {
        c += "/atmem";
    }
    if f.ashift {
        c += "/ashift";
    }
    if d >> 15 & 3 != 0 {
        c += &format!("/T{}", d >> 15 & 3);
    }
    if m.zero_col_mask.is_some_and(|z| z != 0) {
        c += "/zcm";
    }
    c
}

/// Whether the oracle computes the values of MMAs of `m`'s form (`run::mma` dense shapes and
/// pairs, `run::mma_scaled` block-scaled forms, `run::mma_sparse` sparse ones); such an MMA's
/// values may still be open for its operand data or ordering (the notes say which).
fn form_computed(m: &tcgen05_ir::Mma) -> bool {
    use tcgen05_oracle::run::{mma, mma_scaled, mma_sparse};
    if m.form.block_scale {
        mma_scaled::scaled_form(m).is_ok()
    } else if m.form.sp {
        mma_sparse::sparse_form(m).is_ok()
    } else {
        mma::exact_shape(m).is_some() || mma::pair_shape(m).is_some()
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: u64 = args
        .first()
        .map_or(Ok(20000), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let seed: u64 = args
        .get(1)
        .map_or(Ok(1), |s| s.parse())
        .map_err(|e| format!("{e}"))?;
    let stream = Stream::new(tcgen05_generators::Config::default(), seed, Mode::Mixed);
    let mut total = WordCounts::default();
    let mut by_note: BTreeMap<String, u64> = BTreeMap::new();
    // The unspecified words of cases carrying one note only (so attributable to it).
    let mut by_sole_note: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_mma: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut judged = 0u64;
    // The unspecified words of cases holding one form only (so attributable to it).
    let mut solo: BTreeMap<String, u64> = BTreeMap::new();
    for i in 0..n {
        let case = stream.case_at(i);
        let p = &case.program;
        let e = tcgen05_oracle::expect(p);
        let Some(w) = WordCounts::of(p, &Layout::of(p), &e) else {
            continue;
        };
        judged += 1;
        total.add(&w);
        if w.unspecified == 0 {
            continue;
        }
        for note in &e.notes {
            *by_note.entry(note.clone()).or_default() += w.unspecified;
        }
        if let [only] = &e.notes[..] {
            *by_sole_note.entry(only.clone()).or_default() += w.unspecified;
        }
        if e.notes.is_empty() {
            // Every open record notes why (`note_open`, `ORACLE_GAP` at worst): never expected.
            *by_note.entry("(no note)".into()).or_default() += w.unspecified;
        }
        let mut classes: Vec<String> = p
            .ops()
            .into_iter()
            .filter_map(|o| match o {
                Op::Mma(m) => {
                    let tag = if form_computed(m) {
                        "form computed"
                    } else {
                        "form open"
                    };
                    Some(format!("{} ({tag})", mma_class(m)))
                }
                Op::Cp { form, .. } if form.src_fmt.is_some() => Some("cp-decomp".into()),
                Op::Shift { form, .. } if form.cta_group == CtaGroup::Two => {
                    Some("shift::2".into())
                }
                _ => None,
            })
            .collect();
        classes.sort();
        classes.dedup();
        if let [only] = &classes[..] {
            *solo.entry(only.clone()).or_default() += w.unspecified;
        }
        for c in classes {
            let e = by_mma.entry(c).or_default();
            e.0 += w.unspecified;
            e.1 += 1;
        }
    }
    println!(
        "{n} cases, {judged} valid race-free: exact {} one_of {} unspecified {} ({:.1}%)",
        total.exact,
        total.one_of,
        total.unspecified,
        100.0 * total.unspecified_share()
    );
    let mut notes: Vec<_> = by_note.into_iter().collect();
    notes.sort_by_key(|x| std::cmp::Reverse(x.1));
    println!("\nunspecified words of the cases carrying each note:");
    for (k, v) in notes.iter().take(20) {
        println!("{v:>12}  {k}");
    }
    let mut sole: Vec<_> = by_sole_note.into_iter().collect();
    sole.sort_by_key(|x| std::cmp::Reverse(x.1));
    println!("\nunspecified words of the cases carrying one note only:");
    for (k, v) in sole.iter().take(20) {
        println!("{v:>12}  {k}");
    }
    let mut mmas: Vec<_> = by_mma.into_iter().collect();
    mmas.sort_by_key(|x| std::cmp::Reverse(x.1.0));
    let mut solo: Vec<_> = solo.into_iter().collect();
    solo.sort_by_key(|x| std::cmp::Reverse(x.1));
    println!("\nunspecified words of the cases holding one form only:");
    for (k, v) in solo.iter().take(40) {
        println!("{v:>12}  {k}");
    }
    println!("\nunspecified words (cases) of the cases holding each form:");
    for (k, (v, c)) in mmas.iter().take(60) {
        println!("{v:>12} {c:>7}  {k}");
    }
    Ok(())
}
