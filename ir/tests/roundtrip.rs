//! The round-trip property of the printer and the lifter: `lift(emit(p)) == p` for arbitrary
//! programs (every statement and operand form the model holds, legal or not), and the same
//! program always prints the same bytes.

use arbitrary::Unstructured;
use proptest::prelude::*;
use tcgen05_ir::arb::{Bounds, program};
use tcgen05_ir::ptx::{emit, lift};

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn lift_of_emit_is_identity(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        let mut u = Unstructured::new(&bytes);
        let Ok(p) = program(&mut u, Bounds::default()) else { return Ok(()) };
        let text = emit(&p);
        let back = lift(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &p, "{}", text);
        prop_assert_eq!(emit(&back), text);
    }
}

/// The generator behind the property reaches every statement and op kind, so the property
/// covers the whole printer.
#[test]
fn arbitrary_programs_cover_every_statement_and_op_kind() {
    use std::collections::BTreeSet;
    use tcgen05_ir::{Op, Stmt};
    let mut kinds = BTreeSet::new();
    let mut seed = 0x1234_5678_u64;
    for _ in 0..500 {
        let bytes: Vec<u8> = (0..2048)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (seed >> 33) as u8
            })
            .collect();
        let p = program(&mut Unstructured::new(&bytes), Bounds::default()).unwrap();
        p.walk(&mut |s| {
            let k = match s {
                Stmt::Tc(op) => match op {
                    Op::Alloc { .. } => "alloc",
                    Op::Dealloc { .. } => "dealloc",
                    Op::Relinquish { .. } => "relinquish",
                    Op::Ld { .. } => "ld",
                    Op::St { .. } => "st",
                    Op::Wait { .. } => "wait",
                    Op::Fence { .. } => "fence",
                    Op::Commit { .. } => "commit",
                    Op::Cp { .. } => "cp",
                    Op::Shift { .. } => "shift",
                    Op::Mma(_) => "mma",
                },
                Stmt::If { .. } => "if",
                Stmt::Loop { .. } => "loop",
                Stmt::Call(_) => "call",
                Stmt::Exit => "exit",
                Stmt::BarCta => "bar",
                Stmt::ClusterArrive { .. } => "cluster_arrive",
                Stmt::ClusterWait => "cluster_wait",
                Stmt::MbarInit { .. } => "mbar_init",
                Stmt::FenceMbarInit => "fence_mbar_init",
                Stmt::MbarArrive { .. } => "mbar_arrive",
                Stmt::MbarWait { .. } => "mbar_wait",
                Stmt::FenceProxyAsync => "fence_proxy",
                Stmt::Fill { .. } => "fill",
                Stmt::ObserveAddr { .. } => "observe_addr",
                Stmt::Checkpoint(_) => "checkpoint",
                Stmt::Spin(_) => "spin",
            };
            kinds.insert(k);
        });
    }
    assert_eq!(kinds.len(), 27, "reached only {kinds:?}");
}
