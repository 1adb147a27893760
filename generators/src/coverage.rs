//! Coverage keys: one string per instruction form the builder claims to generate, so a test can
//! show that a configuration reaches every one of them ("test that every
//! operation kind is reached").
//!
//! A key names the form at the granularity the builder chooses it: the opcode with its
//! qualifiers, but ld/st `.num` as a separate key (`ldst.num.x4`) rather than crossed with
//! every shape.

use tcgen05_ir::form::*;
use tcgen05_ir::*;

/// The coverage keys of one op (its form key, and for ld/st its `.num` key).
pub fn keys(op: &Op, out: &mut Vec<String>) {
    let f = op.form();
    let key = match &f {
        Form::Alloc(a) => format!("alloc{}", a.cta_group),
        Form::Dealloc(a) => format!("dealloc{}", a.cta_group),
        Form::Relinquish(a) => format!("relinquish{}", a.cta_group),
        Form::Ld(l) if l.red => format!(
            "ld.red{}{}{}",
            l.shape,
            l.red_op.map(|r| r.as_str()).unwrap_or(""),
            l.ty
        ),
        Form::Ld(l) => format!(
            "ld{}{}",
            l.shape,
            if l.pack.is_some() { ".pack" } else { "" }
        ),
        Form::St(s) => format!(
            "st{}{}",
            s.shape,
            if s.pack.is_some() { ".unpack" } else { "" }
        ),
        Form::Wait(w) => format!("wait{}", w.op),
        Form::Fence(k) => format!("fence{k}"),
        Form::Commit(c) => format!(
            "commit{}{}",
            c.cta_group,
            if c.shared_cluster {
                ".shared::cluster"
            } else {
                ""
            }
        ),
        Form::Cp(c) => format!(
            "cp{}{}{}",
            c.shape,
            c.multicast.map(|m| m.as_str()).unwrap_or(""),
            c.src_fmt.map(|s| s.as_str()).unwrap_or("")
        ),
        Form::Shift(s) => format!("shift{}", s.cta_group),
        Form::Mma(m) => format!(
            "mma{}{}{}",
            if m.ws { ".ws" } else { "" },
            m.kind,
            m.collector
                .map(|c| format!(".collector::{}::{}", if m.ws { "b" } else { "a" }, c.op))
                .unwrap_or_default()
        ),
    };
    out.push(key);
    match op {
        Op::Ld { form, .. } => out.push(format!("ldst.num{}", form.num)),
        Op::St { form, .. } => out.push(format!("ldst.num{}", form.num)),
        Op::Commit { form, .. } if form.multicast => out.push("commit.multicast::cluster".into()),
        Op::Cp { form, .. } => out.push(format!("cp{}", form.cta_group)),
        Op::Mma(m) => {
            out.push(format!("mma{}", m.form.cta_group));
            if m.form.sp {
                out.push(format!("mma.sp{}{}", m.form.cta_group, m.form.kind));
            }
            if let Some(v) = m.form.scale_vec {
                out.push(format!("mma{v}"));
            } else if m.form.block_scale {
                // MMA-BS-MXF4-DEFAULT: no size written.
                out.push("mma.block_scale.default-size".into());
            }
            if idesc::Idesc::new(m.form.kind, m.idesc).k96() {
                out.push("mma.k96".into());
            }
            if m.disable_output_lane.is_some() {
                out.push("mma.disable-output-lane".into());
            }
            if m.scale_input_d.is_some() {
                out.push("mma.scale-input-d".into());
            }
            if m.zero_col_mask.is_some() {
                out.push("mma.ws.zero-column-mask".into());
            }
            out.push(format!(
                "mma.a-{}",
                if matches!(m.a, MmaA::Desc(_)) {
                    "desc"
                } else {
                    "tmem"
                }
            ));
        }
        _ => {}
    }
}

/// Every key the builder claims to reach with the default configuration ([`crate::Config`]):
/// each is legal on at least one default target (reference §1).
pub fn claimed() -> Vec<String> {
    let mut v: Vec<String> = Vec::with_capacity(128);
    for g in CtaGroup::ALL {
        for op in ["alloc", "dealloc", "relinquish"] {
            v.push(format!("{op}{g}"));
        }
    }
    for s in LdStShape::LEGAL {
        v.push(format!("ld{s}"));
        v.push(format!("ld{s}.pack"));
        v.push(format!("st{s}"));
        v.push(format!("st{s}.unpack"));
    }
    for s in [LdStShape::S32x32b, LdStShape::S16x32bx2] {
        for r in RedOp::ALL {
            for t in [Ty::U32, Ty::S32, Ty::F32] {
                v.push(format!("ld.red{s}{r}{t}"));
            }
        }
    }
    for n in [Num::X1, Num::X2, Num::X4, Num::X8] {
        v.push(format!("ldst.num{n}"));
    }
    for w in WaitOp::ALL {
        v.push(format!("wait{w}"));
    }
    for k in FenceKind::ALL {
        v.push(format!("fence{k}"));
    }
    v.push("commit.cta_group::1".into());
    v.push("commit.cta_group::1.shared::cluster".into());
    // cta_group::2: the pair's MMA, cp, shift and multicast commit (reference §2.5, §3.9).
    v.push("commit.cta_group::2.shared::cluster".into());
    v.push("commit.multicast::cluster".into());
    for g in CtaGroup::ALL {
        v.push(format!("cp{g}"));
        v.push(format!("shift{g}"));
        v.push(format!("mma{g}"));
    }
    for s in CpShape::LEGAL {
        let mcs: &[&str] = match s {
            CpShape::S64x128b => &[".warpx2::02_13", ".warpx2::01_23"],
            CpShape::S32x128b => &[".warpx4"],
            _ => &[""],
        };
        for m in mcs {
            for src in ["", ".b6x16_p32", ".b4x16_p64"] {
                v.push(format!("cp{s}{m}{src}"));
            }
        }
    }
    for k in [MmaKind::Mxf8f6f4, MmaKind::Mxf4, MmaKind::Mxf4nvf4] {
        v.push(format!("mma{k}"));
    }
    for sv in ScaleVec::ALL {
        v.push(format!("mma{sv}"));
    }
    v.push("mma.block_scale.default-size".into());
    v.push("mma.k96".into());
    for k in [MmaKind::F16, MmaKind::Tf32, MmaKind::F8f6f4, MmaKind::I8] {
        v.push(format!("mma{k}"));
        v.push(format!("mma{k}.collector::a::discard"));
        v.push(format!("mma.ws{k}"));
        v.push(format!("mma.ws{k}.collector::b::discard"));
    }
    for x in [
        "mma.disable-output-lane",
        "mma.scale-input-d",
        "mma.ws.zero-column-mask",
        "mma.a-desc",
        "mma.a-tmem",
    ] {
        v.push(x.into());
    }
    v.extend(claimed_sparse());
    v
}

/// The sparse keys (part of [`claimed`]): every non-ws kind as `.sp`, with `cta_group::1`
/// and `::2` (reference §2.7), metadata copied from `FillElem::SpMeta` data by cp.
pub fn claimed_sparse() -> Vec<String> {
    let mut v = Vec::with_capacity(16);
    for g in CtaGroup::ALL {
        for k in crate::config::BUILDER_MMA_KINDS {
            v.push(format!("mma.sp{g}{k}"));
        }
    }
    v
}

/// The keys `p` reaches.
pub fn reached(p: &Program, out: &mut std::collections::HashSet<String>) {
    let mut v = Vec::with_capacity(8);
    for op in p.ops() {
        v.clear();
        keys(op, &mut v);
        out.extend(v.drain(..));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{Mode, Stream};
    use crate::{Config, litmus, mutate};
    use std::collections::HashSet;

    /// Cases the issue allows for reaching everything.
    const BUDGET: u64 = 10_000;

    #[test]
    fn default_config_reaches_every_form_mutator_and_family_within_10000_cases() {
        let s = Stream::new(Config::default(), 0xC0FE, Mode::Mixed);
        let mut forms = HashSet::new();
        let mut origins = HashSet::new();
        let mut families = HashSet::new();
        for i in 0..BUDGET {
            let g = s.case(i);
            if g.case.intent == Intent::Valid && g.case.provenance.family.is_none() {
                reached(&g.case.program, &mut forms);
            }
            origins.insert(g.case.provenance.origin.clone());
            if let Some(f) = &g.case.provenance.family {
                families.insert(f.split('/').next().unwrap_or("").to_string());
            }
        }
        let missing: Vec<String> = claimed()
            .into_iter()
            .filter(|k| !forms.contains(k))
            .collect();
        assert!(missing.is_empty(), "forms not reached: {missing:?}");
        for m in mutate::MUTATORS {
            assert!(
                origins
                    .iter()
                    .any(|o| o.ends_with(&format!("mutator {}", m.name))),
                "mutator {} not reached",
                m.name
            );
        }
        for f in litmus::FAMILIES {
            assert!(families.contains(f.name), "family {} not reached", f.name);
        }
    }

    #[test]
    fn sparse_config_reaches_every_sparse_form_within_10000_cases() {
        let cfg = Config {
            sparse_pct: 100,
            ..Config::default()
        };
        let s = Stream::new(cfg, 0x5FA, Mode::Valid);
        let mut forms = HashSet::new();
        for i in 0..BUDGET {
            reached(&s.case(i).case.program, &mut forms);
        }
        let missing: Vec<String> = claimed_sparse()
            .into_iter()
            .filter(|k| !forms.contains(k))
            .collect();
        assert!(missing.is_empty(), "sparse forms not reached: {missing:?}");
    }

    #[test]
    fn claimed_keys_are_distinct() {
        let c = claimed();
        let set: HashSet<&String> = c.iter().collect();
        assert_eq!(set.len(), c.len());
    }
}
