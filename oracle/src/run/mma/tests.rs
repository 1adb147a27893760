use super::*;

#[test]
fn pow2_and_is_integer_agree_with_the_library() {
    for k in -1022..=1023 {
        assert_eq!(pow2(k), 2f64.powi(k), "2^{k}");
    }
    for x in [
        0.0,
        -0.0,
        0.5,
        -1.5,
        3.0,
        -7.0,
        1e300,
        4_503_599_627_370_495.5,
        2.0e-9,
    ] {
        assert_eq!(is_integer(x), x.fract() == 0.0, "{x}");
    }
}

#[test]
fn f16_int_is_the_integer_f16_value_holds() {
    for h in 0..=u16::MAX {
        let v = f16_value(h);
        let want = (v.is_finite() && v.fract() == 0.0).then_some(v as i32);
        assert_eq!(f16_int(h), want, "{h:#06x}");
    }
}

#[test]
fn integer_rows_are_the_rows_read_as_f64() {
    // Every lazy kind, fill and flag combination, rows 0..16 of a region large enough.
    let desc = SmemDesc {
        region: 0,
        offset: 0,
        lbo_enc: 1,
        sbo_enc: 2,
        lbo_abs: false,
        base_offset: 0,
        fixed: 1,
        swizzle: 0,
        reserved: 0,
    };
    // (kind, fill, the type code 1 flags whose elements are small integers of that fill).
    for (kind, elem, alts) in [
        (MmaKind::I8, FillElem::Word, &[false, true][..]),
        (MmaKind::I8, FillElem::I8Small, &[false, true]),
        (MmaKind::F16, FillElem::F16Small, &[false]),
        (MmaKind::F16, FillElem::Tf32Small, &[true]),
        (MmaKind::F16, FillElem::Bf16Small, &[true]),
        (MmaKind::Tf32, FillElem::Tf32Small, &[false]),
        (MmaKind::F8f6f4, FillElem::F16Small, &[false, true]),
    ] {
        for offset in [0u32, 4, 1, 3] {
            if kind != MmaKind::I8 && offset % 4 != 0 {
                continue;
            }
            let d = SmemDesc { offset, ..desc };
            let data = RegionData {
                elem,
                seed: 0x1234_5678 ^ offset,
                bytes: 4096,
            };
            let flags = alts.iter().flat_map(|&a| [(a, false), (a, true)]);
            for flags in flags {
                for row in 0..16 {
                    let (_, kk) = elem_k(kind);
                    let mut f = Vec::new();
                    read_row(&d, &data, kind, flags, row, kk, &mut f).expect("inside");
                    let mut ints = vec![0; kk as usize];
                    read_row_ints(&d, &data, kind, flags, row, &mut ints).expect("inside");
                    let want: Vec<i32> = f.iter().map(|&x| x as i32).collect();
                    assert_eq!(ints, want, "{kind:?} {elem:?} {offset} {flags:?} {row}");
                    assert!(f.iter().all(|&x| x.fract() == 0.0));
                }
            }
        }
    }
}

#[test]
fn fp8_decoding_follows_the_ocp_formats() {
    // e5m2 is the high byte of an f16 (an independent decoding: `f16_value`, which reads
    // exponent 31 as NaN: infinities are checked below).
    for b in (0..=u8::MAX).filter(|b| b & 0x7C != 0x7C) {
        let (x, y) = (fp8_value(b, true), f16_value(u16::from(b) << 8));
        assert!(
            x == y || x.is_nan() && y.is_nan(),
            "e5m2 {b:#04x}: {x} vs {y}"
        );
    }
    // e4m3 (OCP FP8): 1.0, -2.0, the largest normal 448, the smallest normal 2^-6, the
    // smallest subnormal 2^-9, NaN at S.1111.111 only (0x7E and 0xFE are finite).
    let cases = [
        (0x38, 1.0),
        (0xC0, -2.0),
        (0x7E, 448.0),
        (0xFE, -448.0),
        (0x08, 1.0 / 64.0),
        (0x01, 1.0 / 512.0),
        (0x3C, 1.5),
        (0x44, 3.0),
        (0x00, 0.0),
    ];
    for (b, want) in cases {
        assert_eq!(fp8_value(b, false), want, "e4m3 {b:#04x}");
    }
    assert!(fp8_value(0x7F, false).is_nan() && fp8_value(0xFF, false).is_nan());
    assert_eq!(fp8_value(0x7B, true), 57344.0);
    assert_eq!(fp8_value(0x7C, true), f64::INFINITY);
    assert_eq!(fp8_value(0xFC, true), f64::NEG_INFINITY);
    assert!(fp8_value(0x7D, true).is_nan());
    assert!(
        (0..=u8::MAX)
            .filter(|&b| fp8_value(b, false).is_nan())
            .count()
            == 2
    );
}

#[test]
fn bf16_is_the_high_half_of_an_f32() {
    assert_eq!(bf16_value(0x3F80), 1.0);
    assert_eq!(bf16_value(0xC040), -3.0);
    assert_eq!(bf16_value(0x4080), 4.0);
}

/// An f8f6f4 MMA's exact D, against a direct computation: every D cell of kind::f8f6f4
/// with e4m3 A and e5m2 B read from `F16Small` data is the f64 dot product of the decoded
/// elements (all multiples of 1/2, sums far below 2^24 steps, so no rounding).
#[test]
fn f8f6f4_results_are_the_decoded_dot_products() {
    let desc = |region| SmemDesc {
        region,
        offset: 0,
        lbo_enc: 128 >> 4,
        sbo_enc: 256 >> 4,
        lbo_abs: false,
        base_offset: 0,
        fixed: 1,
        swizzle: 0,
        reserved: 0,
    };
    let n = 16;
    // idesc (§9.7.16.10.2 layout (a)): D F32 (1) at 4-5, A e4m3 (0) at 7-9, B e5m2 (1) at
    // 10-12, N >> 3 at 17-22, M >> 4 at 24-28.
    let idesc = 1 << 4 | 1 << 10 | (n >> 3) << 17 | (128 >> 4) << 24;
    let m = Mma {
        form: form::MmaForm {
            ws: false,
            sp: false,
            cta_group: CtaGroup::One,
            kind: MmaKind::F8f6f4,
            block_scale: false,
            scale_vec: None,
            ashift: false,
            collector: None,
        },
        d: TmemRef::slot(0, 0, 0),
        a: MmaA::Desc(desc(0)),
        b: desc(1),
        sp_meta: None,
        idesc,
        scale_a: None,
        scale_b: None,
        disable_output_lane: None,
        enable_input_d: false,
        scale_input_d: None,
        zero_col_mask: None,
    };
    let data = |seed| RegionData {
        elem: FillElem::F16Small,
        seed,
        bytes: 128 * 32,
    };
    let (a, b) = (data(7), data(99));
    let d = compute(&m, &a, &b, &|_, _| None).expect("exact shape");
    // The elements, decoded independently: byte `i` of a row's 32 bytes (K-major, no
    // swizzle: 16-byte chunks at LBO = 128 B, rows at 16 B within 8-row groups, SBO 256 B).
    let elem = |r: &RegionData, row: u32, k: u32, e5m2: bool| {
        let addr = (row % 8) * 16 + (row / 8) * 256 + (k / 16) * 128 + k % 16;
        let w = values::fill_word(r.elem, r.seed, addr / 4);
        fp8_value((w >> (8 * (addr % 4))) as u8, e5m2)
    };
    let mut nonzero = 0;
    for row in 0..128 {
        for col in 0..n {
            let want: f64 = (0..32)
                .map(|k| elem(&a, row, k, false) * elem(&b, col, k, true))
                .sum();
            nonzero += usize::from(want != 0.0);
            let got = d[(row * n + col) as usize].expect("exact");
            assert_eq!(f32::from_bits(got), want as f32, "({row}, {col})");
        }
    }
    assert!(nonzero > 128 * n as usize / 2, "{nonzero} non-zero cells");
}

/// A `cta_group::2` M = 256 MMA (layout A): one CTA's 128 rows of D from its A and the B
/// halves of the even and odd CTAs, against a direct computation (kind::i8, s8 A and B).
#[test]
fn pair_rows_use_the_b_halves_of_both_ctas() {
    let desc = |region| SmemDesc {
        region,
        offset: 0,
        lbo_enc: 128 >> 4,
        sbo_enc: 256 >> 4,
        lbo_abs: false,
        base_offset: 0,
        fixed: 1,
        swizzle: 0,
        reserved: 0,
    };
    let n = 32;
    // idesc layout (a): D S32 (2) at 4-5, A and B s8 (1), N >> 3, M >> 4 (M = 256).
    let idesc = 2 << 4 | 1 << 7 | 1 << 10 | (n >> 3) << 17 | (256 >> 4) << 24;
    let mut m = Mma {
        form: form::MmaForm {
            ws: false,
            sp: false,
            cta_group: CtaGroup::Two,
            kind: MmaKind::I8,
            block_scale: false,
            scale_vec: None,
            ashift: false,
            collector: None,
        },
        d: TmemRef::slot(0, 0, 0),
        a: MmaA::Desc(desc(0)),
        b: desc(1),
        sp_meta: None,
        idesc,
        scale_a: None,
        scale_b: None,
        disable_output_lane: None,
        enable_input_d: false,
        scale_input_d: None,
        zero_col_mask: None,
    };
    let data = |seed| RegionData {
        elem: FillElem::I8Small,
        seed,
        bytes: 128 * 32,
    };
    let (a, b0, b1) = (data(5), data(6), data(7));
    let p = prepare_pair(&m, &a, [&b0, &b1]).expect("exact pair");
    let elem = |r: &RegionData, row: u32, k: u32| {
        let addr = (row % 8) * 16 + (row / 8) * 256 + (k / 16) * 128 + k % 16;
        let w = values::fill_word(r.elem, r.seed, addr / 4);
        i32::from((w >> (8 * (addr % 4))) as u8 as i8)
    };
    for row in 0..128 {
        for col in 0..n {
            let (b, brow) = if col < n / 2 {
                (&b0, col)
            } else {
                (&b1, col - n / 2)
            };
            let want: i32 = (0..32).map(|k| elem(&a, row, k) * elem(b, brow, k)).sum();
            assert_eq!(p.cell(row, col, None), Some(want as u32), "({row}, {col})");
        }
    }
    // A row's cells across both B halves at once (the columns read on demand, from the even
    // CTA's B up to N / 2 and the odd CTA's after): the same values as the cells above.
    let fresh = prepare_pair(&m, &a, [&b0, &b1]).expect("exact pair");
    for row in [0, 77, 127] {
        let mut out = vec![0u32; (n - 4) as usize];
        fresh.row_cells(row, 4..n, &mut out).expect("exact row");
        let each: Vec<u32> = (4..n)
            .map(|c| p.cell(row, c, None).expect("exact"))
            .collect();
        assert_eq!(out, each, "row {row}");
    }
    // An accumulating pair is exact (each CTA's own old D); M = 128 (layout B) holds 64
    // rows per CTA, also with A in TMEM (exact only where the program duplicates A over
    // the lane halves, which `tmem::Ctx::pair_values` checks), but not with `.ashift`
    // (D row 0 sits in two lanes); disable-output-lane (OQ-31) stays unspecified.
    m.enable_input_d = true;
    assert_eq!(pair_shape(&m), Some((128, n)));
    m.enable_input_d = false;
    m.idesc = idesc & !(0x1F << 24) | (128 >> 4) << 24;
    assert_eq!(pair_shape(&m), Some((64, n)));
    m.a = MmaA::Tmem(TmemRef::slot(0, 0, 64));
    assert_eq!(pair_shape(&m), Some((64, n)));
    m.form.ashift = true;
    assert!(pair_shape(&m).is_none());
    m.form.ashift = false;
    m.a = MmaA::Desc(desc(0));
    m.disable_output_lane = Some(vec![0; 8]);
    assert!(pair_shape(&m).is_none());
}

#[test]
fn f16_decoding_matches_ieee() {
    assert_eq!(f16_value(0x3C00), 1.0);
    assert_eq!(f16_value(0xC400), -4.0);
    assert_eq!(f16_value(0x4200), 3.0);
    assert_eq!(f16_value(0), 0.0);
}
