#!/usr/bin/env python3
"""Writes corpus/check-rejected/: small kernels that ptxas rejects for one tcgen05 instruction's
form or target, each derived from a syntax line of reference §3 or a row of the target table
(reference §1), with the expected RuleId in its header.

Each case is assembled with the named ptxas first; a case that ptxas accepts is not written
(the script says so). Usage: scripts/gen-check-corpus.py [--ptxas-root .tools/cuda]
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "corpus", "check-rejected")
PTXAS = os.path.join(ROOT, ".tools", "cuda", "{v}", "bin", "ptxas")

TEMPLATE = """\
// check-rejected: {name}
// expect: {rule}
// ptxas: {ptxas} -arch={target} rejects it
// why: {why}
.version {version}
.target {target}
.address_size 64

.visible .entry k(.param .u64 p)
.reqntid 128, 1, 1{cluster}
{{
  .reg .b32 %r<40>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 8 .b32 slot;
  .shared .align 8 .b64 mbar;
{pre}  {alloc}
  ld.shared.b32 %r1, [slot];
  mov.b64 %rd1, 0;
  mov.b64 %rd2, 0;
  mov.b32 %r2, 136314896;
  mov.b32 %r3, 0;
  setp.ne.b32 %p1, %r2, 0;
  {body}
  tcgen05.wait::ld.sync.aligned;
  tcgen05.wait::st.sync.aligned;
  {dealloc}
  {relq}
  ret;
}}
"""

ALLOC = "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32;"
DEALLOC = "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 32;"
RELQ = "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"
MMA = "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;"
LD = "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r4, %r5}, [%r1];"
ST = "tcgen05.st.sync.aligned.32x32b.x2.b32 [%r1], {%r4, %r5};"
V2 = "{%r4, %r5}"
V4 = "{%r4, %r5, %r6, %r7}"

# (name, rule, slot, text, options, why)
CASES = []


def case(name, rule, slot, text, why, **opt):
    CASES.append((name, rule, slot, text, opt, why))


S = "§9.7.16.7.1 syntax line"
# --- alloc / dealloc / relinquish (§9.7.16.7.1) ---
case("alloc-no-sync", "GEN-SYNC-QUAL", "alloc", "tcgen05.alloc.cta_group::1.aligned.shared::cta.b32 [slot], 32;", S)
case("alloc-no-aligned", "GEN-SYNC-QUAL", "alloc", "tcgen05.alloc.cta_group::1.sync.shared::cta.b32 [slot], 32;", S)
case("alloc-no-sync-aligned", "GEN-SYNC-QUAL", "alloc", "tcgen05.alloc.cta_group::1.shared::cta.b32 [slot], 32;", S)
case("alloc-b64", "ALLOC-DST-STATESPACE", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b64 [slot], 32;", S + ": .b32")
case("alloc-u32", "ALLOC-DST-STATESPACE", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.u32 [slot], 32;", S + ": .b32")
case("alloc-no-type", "ALLOC-DST-STATESPACE", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta [slot], 32;", S + ": .b32")
case("alloc-shared-cluster", "ALLOC-DST-STATESPACE", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cluster.b32 [slot], 32;", S + ": {.shared::cta}")
case("alloc-global", "ALLOC-DST-STATESPACE", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.global.b32 [%rd1], 32;", S + ": {.shared::cta}")
case("alloc-local", "ALLOC-DST-STATESPACE", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.local.b32 [%rd1], 32;", S + ": {.shared::cta}")
case("alloc-no-ctagroup", "GEN-CTAGROUP-VALID", "alloc", "tcgen05.alloc.sync.aligned.shared::cta.b32 [slot], 32;", S + ": .cta_group")
case("alloc-ctagroup-0", "GEN-CTAGROUP-VALID", "alloc", "tcgen05.alloc.cta_group::0.sync.aligned.shared::cta.b32 [slot], 32;", S + ": .cta_group = { ::1, ::2 }")
case("alloc-ctagroup-3", "GEN-CTAGROUP-VALID", "alloc", "tcgen05.alloc.cta_group::3.sync.aligned.shared::cta.b32 [slot], 32;", S + ": .cta_group = { ::1, ::2 }")
case("alloc-ctagroup-twice", "GEN-CTAGROUP-VALID", "alloc", "tcgen05.alloc.cta_group::1.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32;", S)
case("alloc-extra-operand", "GEN-SYNTAX", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 32, 0;", S + ": [dst], nCols")
case("alloc-dst-register", "GEN-SYNTAX", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 %r9, 32;", S + ": [dst]")
case("alloc-missing-ncols", "GEN-SYNTAX", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot];", S + ": [dst], nCols")
case("alloc-unknown-qual", "GEN-SYNTAX", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.relaxed.b32 [slot], 32;", S)
case("alloc-ncols-48", "ALLOC-NCOLS-POW2", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 48;", "§9.7.16.7.1: nCols a power of 2")
case("alloc-ncols-16", "ALLOC-NCOLS-RANGE", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 16;", "§9.7.16.7.1: nCols in [32, 512]")
case("alloc-ncols-1024", "ALLOC-NCOLS-RANGE", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 1024;", "§9.7.16.7.1: nCols in [32, 512]")
case("alloc-ncols-expr", "ALLOC-NCOLS-POW2", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], (16*3);", "§9.7.16.7.1: nCols a power of 2 (a constant expression)")
case("dealloc-no-sync", "GEN-SYNC-QUAL", "dealloc", "tcgen05.dealloc.cta_group::1.aligned.b32 %r1, 32;", S)
case("dealloc-no-aligned", "GEN-SYNC-QUAL", "dealloc", "tcgen05.dealloc.cta_group::1.sync.b32 %r1, 32;", S)
case("dealloc-b64", "ALLOC-DST-STATESPACE", "dealloc", "tcgen05.dealloc.cta_group::1.sync.aligned.b64 %r1, 32;", S + ": .b32")
case("dealloc-no-type", "ALLOC-DST-STATESPACE", "dealloc", "tcgen05.dealloc.cta_group::1.sync.aligned %r1, 32;", S + ": .b32")
case("dealloc-no-ctagroup", "GEN-CTAGROUP-VALID", "dealloc", "tcgen05.dealloc.sync.aligned.b32 %r1, 32;", S)
case("dealloc-ctagroup-4", "GEN-CTAGROUP-VALID", "dealloc", "tcgen05.dealloc.cta_group::4.sync.aligned.b32 %r1, 32;", S)
case("dealloc-shared", "GEN-SYNTAX", "dealloc", "tcgen05.dealloc.cta_group::1.sync.aligned.shared::cta.b32 %r1, 32;", S + ": no state space")
case("dealloc-addr-operand", "GEN-SYNTAX", "dealloc", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 [%r1], 32;", S + ": taddr, nCols")
case("dealloc-extra-operand", "GEN-SYNTAX", "dealloc", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 32, 1;", S + ": taddr, nCols")
case("dealloc-ncols-100", "ALLOC-NCOLS-POW2", "dealloc", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 100;", "§9.7.16.7.1: nCols a power of 2")
case("dealloc-ncols-8", "ALLOC-NCOLS-RANGE", "dealloc", "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 8;", "§9.7.16.7.1: nCols in [32, 512]")
case("relinquish-no-sync", "GEN-SYNC-QUAL", "relq", "tcgen05.relinquish_alloc_permit.cta_group::1.aligned;", S)
case("relinquish-no-aligned", "GEN-SYNC-QUAL", "relq", "tcgen05.relinquish_alloc_permit.cta_group::1.sync;", S)
case("relinquish-no-ctagroup", "GEN-CTAGROUP-VALID", "relq", "tcgen05.relinquish_alloc_permit.sync.aligned;", S)
case("relinquish-operand", "GEN-SYNTAX", "relq", "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned %r1;", S + ": no operands")
case("relinquish-b32", "GEN-SYNTAX", "relq", "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned.b32;", S)
# --- ld / st (§9.7.16.8.3/4) ---
L = "§9.7.16.8.3 syntax line"
T = "§9.7.16.8.4 syntax line"
case("ld-no-sync", "GEN-SYNC-QUAL", "body", "tcgen05.ld.aligned.32x32b.x2.b32 " + V2 + ", [%r1];", L)
case("ld-no-aligned", "GEN-SYNC-QUAL", "body", "tcgen05.ld.sync.32x32b.x2.b32 " + V2 + ", [%r1];", L)
case("ld-b64", "LDST-TYPE", "body", "tcgen05.ld.sync.aligned.32x32b.x2.b64 " + V2 + ", [%r1];", L + ": .b32")
case("ld-f32", "LDST-TYPE", "body", "tcgen05.ld.sync.aligned.32x32b.x2.f32 " + V2 + ", [%r1];", L + ": .b32 (without .red)")
case("ld-no-type", "LDST-TYPE", "body", "tcgen05.ld.sync.aligned.32x32b.x2 " + V2 + ", [%r1];", L + ": .b32")
case("ld-shape-32x64b", "LDST-SHAPE", "body", "tcgen05.ld.sync.aligned.32x64b.x2.b32 " + V4 + ", [%r1];", L + ": .shape1")
case("ld-shape-16x16b", "LDST-SHAPE", "body", "tcgen05.ld.sync.aligned.16x16b.x2.b32 " + V2 + ", [%r1];", L + ": .shape1")
case("ld-no-shape", "LDST-SHAPE", "body", "tcgen05.ld.sync.aligned.x2.b32 " + V2 + ", [%r1];", L + ": .shape1")
case("ld-num-x3", "LDST-NUM", "body", "tcgen05.ld.sync.aligned.32x32b.x3.b32 {%r4, %r5, %r6}, [%r1];", L + ": .num")
case("ld-num-x256", "LDST-NUM", "body", "tcgen05.ld.sync.aligned.32x32b.x256.b32 " + V2 + ", [%r1];", L + ": .num")
case("ld-no-num", "LDST-NUM", "body", "tcgen05.ld.sync.aligned.32x32b.b32 " + V2 + ", [%r1];", L + ": .num")
case("ld-veclen-short", "LDST-VEC-LEN", "body", "tcgen05.ld.sync.aligned.32x32b.x4.b32 " + V2 + ", [%r1];", "§9.7.16.8.3 register-vector length (reference §2.6)")
case("ld-veclen-long", "LDST-VEC-LEN", "body", "tcgen05.ld.sync.aligned.32x32b.x1.b32 " + V2 + ", [%r1];", "§9.7.16.8.3 register-vector length (reference §2.6)")
case("ld-veclen-16x256b", "LDST-VEC-LEN", "body", "tcgen05.ld.sync.aligned.16x256b.x1.b32 " + V2 + ", [%r1];", "§9.7.16.8.3 register-vector length: .16x256b.x1 moves 4")
case("ld-16x32bx2-no-split", "LDST-SPLITOFF", "body", "tcgen05.ld.sync.aligned.16x32bx2.x2.b32 " + V2 + ", [%r1];", L + ": .shape2 takes immHalfSplitoff")
case("ld-32x32b-split", "LDST-SPLITOFF", "body", "tcgen05.ld.sync.aligned.32x32b.x2.b32 " + V2 + ", [%r1], 16;", L + ": only .shape2 takes immHalfSplitoff")
case("ld-unpack", "ST-UNPACK-ONLY", "body", "tcgen05.ld.sync.aligned.32x32b.x2.unpack::16b.b32 " + V2 + ", [%r1];", L + ": .pack = { .pack::16b }")
case("ld-reg-dst", "GEN-SYNTAX", "body", "tcgen05.ld.sync.aligned.32x32b.x1.b32 %r4, [%r1];", L + ": r is a vector")
case("ld-reg-taddr", "GEN-SYNTAX", "body", "tcgen05.ld.sync.aligned.32x32b.x2.b32 " + V2 + ", %r1;", L + ": [taddr]")
case("ld-min-not-red", "LD-RED-TYPE", "body", "tcgen05.ld.sync.aligned.32x32b.x2.min.b32 " + V2 + ", [%r1];", L + ": .redOp only with .red")
case("ld-unknown-qual", "GEN-SYNTAX", "body", "tcgen05.ld.sync.aligned.32x32b.x2.relaxed.b32 " + V2 + ", [%r1];", L)
R = "§9.7.16.8.3 syntax line (.red)"
RED = dict(target="sm_103a", version="8.8")
case("ldred-x1", "LD-RED-NUM", "body", "tcgen05.ld.red.sync.aligned.32x32b.x1.min.f32 {%r4}, %r9, [%r1];", R + ": .num >= .x2", **RED)
case("ldred-shape", "LD-RED-SHAPE", "body", "tcgen05.ld.red.sync.aligned.16x64b.x2.min.f32 " + V2 + ", %r9, [%r1];", R + ": .shape3", **RED)
case("ldred-no-op", "LD-RED-TYPE", "body", "tcgen05.ld.red.sync.aligned.32x32b.x2.f32 " + V2 + ", %r9, [%r1];", R + ": .redOp", **RED)
case("ldred-b32", "LD-RED-TYPE", "body", "tcgen05.ld.red.sync.aligned.32x32b.x2.min.b32 " + V2 + ", %r9, [%r1];", R + ": .f32/.u32/.s32", **RED)
case("ldred-u32-abs", "LD-RED-TYPE", "body", "tcgen05.ld.red.sync.aligned.32x32b.x2.min.abs.u32 " + V2 + ", %r9, [%r1];", R + ": .abs only with .f32", **RED)
case("ldred-pack", "LD-RED-TYPE", "body", "tcgen05.ld.red.sync.aligned.32x32b.x2.pack::16b.min.f32 " + V2 + ", %r9, [%r1];", R + ": no .pack", **RED)
case("ldred-sm100a", "LD-RED-TARGET", "body", "tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32 " + V2 + ", %r9, [%r1];", "§9.7.16.8.3 target notes: not sm_100a", target="sm_100a")
case("ldred-sm100f", "LD-RED-TARGET", "body", "tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32 " + V2 + ", %r9, [%r1];", "§9.7.16.8.3 target notes: not sm_100f", target="sm_100f")
case("ldred-ptx87", "GEN-PTXVER", "body", "tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32 " + V2 + ", %r9, [%r1];", "§9.7.16.8.3: .red needs PTX 8.8", target="sm_100a", version="8.7", ptxas="12.9")
case("st-no-sync", "GEN-SYNC-QUAL", "body", "tcgen05.st.aligned.32x32b.x2.b32 [%r1], " + V2 + ";", T)
case("st-no-aligned", "GEN-SYNC-QUAL", "body", "tcgen05.st.sync.32x32b.x2.b32 [%r1], " + V2 + ";", T)
case("st-b64", "LDST-TYPE", "body", "tcgen05.st.sync.aligned.32x32b.x2.b64 [%r1], " + V2 + ";", T + ": .b32")
case("st-pack", "LD-PACK-ONLY", "body", "tcgen05.st.sync.aligned.32x32b.x2.pack::16b.b32 [%r1], " + V2 + ";", T + ": .unpack = { .unpack::16b }")
case("st-veclen", "LDST-VEC-LEN", "body", "tcgen05.st.sync.aligned.32x32b.x4.b32 [%r1], " + V2 + ";", "§9.7.16.8.4 register-vector length")
case("st-shape", "LDST-SHAPE", "body", "tcgen05.st.sync.aligned.64x32b.x2.b32 [%r1], " + V2 + ";", T + ": .shape1")
case("st-num", "LDST-NUM", "body", "tcgen05.st.sync.aligned.32x32b.x5.b32 [%r1], " + V2 + ";", T + ": .num")
case("st-no-split", "LDST-SPLITOFF", "body", "tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%r1], " + V2 + ";", T + ": .shape2 takes immHalfSplitoff")
case("st-operands-swapped", "GEN-SYNTAX", "body", "tcgen05.st.sync.aligned.32x32b.x2.b32 " + V2 + ", [%r1];", T + ": [taddr], r")
# --- wait (§9.7.16.8.5) ---
W = "§9.7.16.8.5 syntax line"
case("wait-no-sync", "GEN-SYNC-QUAL", "body", "tcgen05.wait::ld.aligned;", W)
case("wait-no-aligned", "GEN-SYNC-QUAL", "body", "tcgen05.wait::st.sync;", W)
case("wait-ctagroup", "WAIT-OPS", "body", "tcgen05.wait::ld.cta_group::1.sync.aligned;", W + ": no .cta_group")
case("wait-mma", "WAIT-KIND", "body", "tcgen05.wait::mma.sync.aligned;", W + ": .wait::ld or .wait::st")
case("wait-operand", "GEN-SYNTAX", "body", "tcgen05.wait::ld.sync.aligned %r1;", W + ": no operands")
# --- fence (§9.7.16.11.1) ---
case("fence-sync", "GEN-SYNTAX", "body", "tcgen05.fence::before_thread_sync.sync;", "§9.7.16.11.1 syntax line")
case("fence-unknown", "GEN-SYNTAX", "body", "tcgen05.fence::thread_sync;", "§9.7.16.11.1 syntax line")
# --- commit (§9.7.16.12.1) ---
C = "§9.7.16.12.1 syntax line"
case("commit-no-arrive", "COMMIT-COMPLETION", "body", "tcgen05.commit.cta_group::1.shared::cluster.b64 [mbar];", C + ": .mbarrier::arrive::one")
case("commit-b32", "COMMIT-COMPLETION", "body", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b32 [mbar];", C + ": .b64")
case("commit-no-type", "COMMIT-COMPLETION", "body", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster [mbar];", C + ": .b64")
case("commit-mcast-no-mask", "COMMIT-MCAST-MASK", "body", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [mbar];", C + ": ctaMask with .multicast::cluster")
case("commit-mask-no-mcast", "COMMIT-MCAST-MASK", "body", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [mbar], %rs1;", C + ": ctaMask only with .multicast::cluster", pre="  .reg .b16 %rs<2>;\n  mov.b16 %rs1, 1;\n")
case("commit-no-ctagroup", "GEN-CTAGROUP-VALID", "body", "tcgen05.commit.mbarrier::arrive::one.shared::cluster.b64 [mbar];", C)
case("commit-reg-mbar", "GEN-SYNTAX", "body", "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 %rd1;", C + ": [mbar]")
case("commit-sync-aligned", "GEN-SYNTAX", "body", "tcgen05.commit.cta_group::1.sync.aligned.mbarrier::arrive::one.shared::cluster.b64 [mbar];", C)
# --- cp (§9.7.16.9.2) ---
P = "§9.7.16.9.2 syntax line"
case("cp-shape", "CP-SHAPE", "body", "tcgen05.cp.cta_group::1.128x64b [%r1], %rd1;", P + ": .shape")
case("cp-no-shape", "CP-SHAPE", "body", "tcgen05.cp.cta_group::1 [%r1], %rd1;", P + ": .shape")
case("cp-64x128b-no-mcast", "CP-MCAST-REQ", "body", "tcgen05.cp.cta_group::1.64x128b [%r1], %rd1;", P + ": .64x128b requires .warpx2")
case("cp-32x128b-no-mcast", "CP-MCAST-REQ", "body", "tcgen05.cp.cta_group::1.32x128b [%r1], %rd1;", P + ": .32x128b requires .warpx4")
case("cp-32x128b-warpx2", "CP-MCAST-REQ", "body", "tcgen05.cp.cta_group::1.32x128b.warpx2::02_13 [%r1], %rd1;", P + ": .32x128b requires .warpx4")
case("cp-dst-fmt-only", "CP-DECOMP-FMT", "body", "tcgen05.cp.cta_group::1.128x256b.b8x16 [%r1], %rd1;", P + ": .dst_fmt.src_fmt together")
case("cp-src-fmt-only", "CP-DECOMP-FMT", "body", "tcgen05.cp.cta_group::1.128x256b.b6x16_p32 [%r1], %rd1;", P + ": .dst_fmt.src_fmt together")
case("cp-no-ctagroup", "GEN-CTAGROUP-VALID", "body", "tcgen05.cp.128x256b [%r1], %rd1;", P)
case("cp-sync-aligned", "GEN-SYNTAX", "body", "tcgen05.cp.cta_group::1.sync.aligned.128x256b [%r1], %rd1;", P)
case("cp-reg-taddr", "GEN-SYNTAX", "body", "tcgen05.cp.cta_group::1.128x256b %r1, %rd1;", P + ": [taddr]")
case("cp-sm90a", "GEN-TARGET", "body", "tcgen05.cp.cta_group::1.128x256b [%r1], %rd1;", "§9.7.16.9.2 target notes", target="sm_90a", version="8.6", slots_plain=True)
# --- shift (§9.7.16.9.3) ---
case("shift-sm100f", "SHIFT-TARGET", "body", "tcgen05.shift.cta_group::1.down [%r1];", "§9.7.16.9.3 target notes: arch-specific only", target="sm_100f")
case("shift-sm103f", "SHIFT-TARGET", "body", "tcgen05.shift.cta_group::1.down [%r1];", "§9.7.16.9.3 target notes: arch-specific only", target="sm_103f")
case("shift-sm110f", "SHIFT-TARGET", "body", "tcgen05.shift.cta_group::1.down [%r1];", "§9.7.16.9.3 target notes: arch-specific only", target="sm_110f", version="9.0")
case("shift-no-down", "GEN-SYNTAX", "body", "tcgen05.shift.cta_group::1 [%r1];", "§9.7.16.9.3 syntax line: .down")
case("shift-no-ctagroup", "GEN-CTAGROUP-VALID", "body", "tcgen05.shift.down [%r1];", "§9.7.16.9.3 syntax line")
case("shift-reg", "GEN-SYNTAX", "body", "tcgen05.shift.cta_group::1.down %r1;", "§9.7.16.9.3 syntax line: [taddr]")
# --- mma (§9.7.16.10.9) ---
M = "§9.7.16.10.9.1 syntax line"
case("mma-i8-sm103a", "MMA-I8-TARGET", "body", "tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %r2, %p1;", "§9.7.16.10.9.1 target notes: .kind::i8 on sm_100a/sm_110a", target="sm_103a")
case("mma-i8-sm100f", "MMA-I8-TARGET", "body", "tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %r2, %p1;", "§9.7.16.10.9.1 target notes: arch-specific only", target="sm_100f")
case("mma-i8-sm110f", "MMA-I8-TARGET", "body", "tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %r2, %p1;", "§9.7.16.10.9.1 target notes: arch-specific only", target="sm_110f", version="9.0")
case("mma-ws-i8-sm103a", "MMA-I8-TARGET", "body", "tcgen05.mma.ws.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %r2, %p1;", "§9.7.16.10.9.3 target notes", target="sm_103a")
case("mma-scale-d-sm110a", "MMA-SCALE-D-TARGET", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1, 3;", "ptxas 13.5: argument scale-inp-d-imm not supported on sm_110a", target="sm_110a", version="9.0")
case("mma-scale-d-sm110f", "MMA-SCALE-D-TARGET", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1, 3;", "ptxas 13.5: argument scale-inp-d-imm not supported on sm_110f", target="sm_110f", version="9.0")
case("mma-scale-d-16", "MMA-SCALE-D-RANGE", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1, 16;", M + ": scale-input-d in [0, 15]")
case("mma-scale-d-f8f6f4", "MMA-SCALE-D-KIND", "body", "tcgen05.mma.cta_group::1.kind::f8f6f4 [%r1], %rd1, %rd2, %r2, %p1, 3;", M + ": scale-input-d only for f16/tf32")
case("mma-ws-ctagroup2", "MMA-WS-CTA1", "body", "tcgen05.mma.ws.cta_group::2.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", "§9.7.16.10.9.3: .ws only with .cta_group::1", cluster=2)
case("mma-ws-mxf4", "MMA-WS-KINDS", "body", "tcgen05.mma.ws.cta_group::1.kind::mxf4.block_scale [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", "§9.7.16.10.9.3: .ws kinds")
case("mma-mxf8-no-bs", "MMA-BS-KINDS", "body", "tcgen05.mma.cta_group::1.kind::mxf8f6f4 [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", M + ": mx kinds take .block_scale")
case("mma-f16-bs", "MMA-BS-KINDS", "body", "tcgen05.mma.cta_group::1.kind::f16.block_scale [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", M + ": .block_scale only with mx kinds")
case("mma-bs-no-scales", "MMA-BS-KINDS", "body", "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r1], %rd1, %rd2, %r2, %p1;", M + ": [scale-A-tmem], [scale-B-tmem]")
case("mma-mxf8-4x", "MMA-BS-VEC", "body", "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::4X [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", "§9.7.16.10.7.1: mxf8f6f4 takes 1X/block32")
case("mma-mxf4-1x", "MMA-BS-VEC", "body", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::1X [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", "§9.7.16.10.7.1: mxf4 takes 2X/block32")
case("mma-nvf4-no-vec", "MMA-BS-NVF4-EXPLICIT", "body", "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", "§9.7.16.10.9.1: mxf4nvf4 states its scale-vector size")
case("mma-scale-vec-8x", "MMA-BS-VEC", "body", "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::8X [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", "§9.7.16.10.9.1 .scale_vectorsize")
case("mma-2x-sm100f", "MMA-BS-VEC-TARGET", "body", "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", "§9.7.16.10.9.1 target notes: .scale_vec::NX on sm_100a", target="sm_100f")
case("mma-ashift-desc", "MMA-ASHIFT-ATMEM", "body", "tcgen05.mma.cta_group::1.kind::f16.ashift [%r1], %rd1, %rd2, %r2, %p1;", M + ": .ashift only with [a-tmem]")
case("mma-ashift-fill", "MMA-ASHIFT-COLLECTOR", "body", "tcgen05.mma.cta_group::1.kind::f16.ashift.collector::a::fill [%r1], [%r1], %rd2, %r2, %p1;", M + ": .ashift not with ::fill")
case("mma-ws-collector-a", "MMA-COLLECTOR-BUF", "body", "tcgen05.mma.ws.cta_group::1.kind::f16.collector::a::fill [%r1], %rd1, %rd2, %r2, %p1;", "§9.7.16.10.9.3: .ws collector is ::bN")
case("mma-collector-bad-op", "MMA-COLLECTOR-VALID", "body", "tcgen05.mma.cta_group::1.kind::f16.collector::a::keep [%r1], %rd1, %rd2, %r2, %p1;", M + ": collector ops")
case("mma-dol-8-cta1", "MMA-DOL-SIZE", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, {%r3, %r3, %r3, %r3, %r3, %r3, %r3, %r3}, %p1;", M + ": 4 elements for ::1")
case("mma-dol-2", "MMA-DOL-SIZE", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, {%r3, %r3}, %p1;", M + ": 4 elements for ::1")
case("mma-sp-no-meta", "MMA-SHAPE-VALID", "body", "tcgen05.mma.sp.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", "§9.7.16.10.9.2 syntax line: [sp-meta-tmem]")
case("mma-meta-no-sp", "MMA-SHAPE-VALID", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, [%r1], %r2, %p1;", M + ": [sp-meta-tmem] only in .sp forms")
case("mma-sp-mxf4-sm100f", "MMA-SP-MXF4-TARGET", "body", "tcgen05.mma.sp.cta_group::1.kind::mxf4.block_scale [%r1], %rd1, %rd2, [%r1], %r2, [%r1], [%r1], %p1;", "§9.7.16.10.9.2 target notes: arch-specific only", target="sm_100f")
case("mma-no-kind", "GEN-SYNTAX", "body", "tcgen05.mma.cta_group::1 [%r1], %rd1, %rd2, %r2, %p1;", M + ": .kind")
case("mma-kind-f64", "GEN-SYNTAX", "body", "tcgen05.mma.cta_group::1.kind::f64 [%r1], %rd1, %rd2, %r2, %p1;", M + ": .kind")
case("mma-no-ctagroup", "GEN-CTAGROUP-VALID", "body", "tcgen05.mma.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", M)
case("mma-ctagroup-3", "GEN-CTAGROUP-VALID", "body", "tcgen05.mma.cta_group::3.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", M)
case("mma-sync-aligned", "GEN-SYNTAX", "body", "tcgen05.mma.cta_group::1.kind::f16.sync.aligned [%r1], %rd1, %rd2, %r2, %p1;", M)
case("mma-no-enable-d", "GEN-SYNTAX", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2;", M + ": enable-input-d")
case("mma-zcm-non-ws", "MMA-ZCM-WS-ONLY", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1, %rd1;", M + ": zero-column-mask-desc only in .ws (scale-input-d, the other operand there, is an immediate)")
case("mma-nvf4-ptx86", "GEN-PTXVER", "body", "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.scale_vec::4X [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", "§9.7.16.10.9.1: .kind::mxf4nvf4 needs PTX 8.7", version="8.6", ptxas="12.8")
case("mma-block16-ptx87", "GEN-PTXVER", "body", "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;", "§9.7.16.10.9.1: .block16 needs PTX 8.8", version="8.7", ptxas="12.8")
# --- operand kinds and register widths (reference §3 syntax lines) ---
case("ld-split-register", "LDST-SPLITOFF", "body", "tcgen05.ld.sync.aligned.16x32bx2.x2.b32 " + V2 + ", [%r1], %r9;", L + ": immHalfSplitoff is an immediate")
case("st-split-register", "LDST-SPLITOFF", "body", "tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%r1], %r9, " + V2 + ";", T + ": immHalfSplitoff is an immediate")
case("ld-vector-b64", "GEN-SYNTAX", "body", "tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r4, %rd1}, [%r1];", L + ": r is a vector of .b32 registers")
case("alloc-ncols-b64", "GEN-SYNTAX", "alloc", "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], %rd1;", S + ": nCols is a 32-bit operand")
case("mma-idesc-b64", "GEN-SYNTAX", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %rd1, %p1;", M + ": idesc is 32-bit")
case("mma-enable-d-b32", "GEN-SYNTAX", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %r3;", M + ": enable-input-d is a predicate")
case("mma-adesc-b32", "GEN-SYNTAX", "body", "tcgen05.mma.cta_group::1.kind::f16 [%r1], %r1, %rd2, %r2, %p1;", M + ": a-desc is 64-bit")
case("cp-sdesc-b32", "GEN-SYNTAX", "body", "tcgen05.cp.cta_group::1.128x256b [%r1], %r3;", P + ": s-desc is 64-bit")
# --- targets and versions (reference §1) ---
case("mma-sm90a", "GEN-TARGET", "body", MMA, "reference §1: tcgen05 targets", target="sm_90a", version="8.6", slots_plain=True)
case("alloc-sm120a", "GEN-TARGET", "body", "", "reference §1: tcgen05 targets", target="sm_120a", version="8.8", slots_plain=True, ptxas="12.9")
case("alloc-sm100", "GEN-TARGET", "body", "", "reference §1: sm_100 without a/f", target="sm_100", version="8.6", slots_plain=True)
case("ld-sm89", "GEN-TARGET", "body", LD, "reference §1: tcgen05 targets", target="sm_89", version="8.6", slots_plain=True)
case("alloc-ptx85", "GEN-PTXVER", "body", "", "reference §1: tcgen05 needs PTX 8.6", version="8.5", ptxas="12.8")
case("sm103a-ptx87", "GEN-PTXVER", "body", "", "reference §1: sm_103a needs PTX 8.8", target="sm_103a", version="8.7", ptxas="12.9")
case("sm110a-ptx88", "GEN-PTXVER", "body", "", "reference §1: sm_110a needs PTX 9.0", target="sm_110a", version="8.8")
case("sm100f-ptx87", "GEN-PTXVER", "body", "", "reference §1: sm_100f needs PTX 8.8", target="sm_100f", version="8.7", ptxas="12.9")
# --- cta_group across a kernel, cluster shape ---
case("ctagroup-mixed", "GEN-CTAGROUP-UNIFORM", "body", "tcgen05.mma.cta_group::2.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;", "§9.7.16.10.9.1: one .cta_group per kernel", cluster=2)


def render(name, rule, slot, text, opt, why):
    version = opt.get("version", "8.8")
    target = opt.get("target", "sm_100a")
    ptxas = opt.get("ptxas", "13.5")
    slots = {"alloc": ALLOC, "dealloc": DEALLOC, "relq": RELQ, "body": MMA}
    slots[slot] = text
    cluster = ""
    if "cluster" in opt:
        cluster = "\n.reqnctapercluster {}, 1, 1".format(opt["cluster"])
    # Older ptxas reject non-ASCII text, comments included.
    why = why.replace("\u00a7", "PTX ISA ")
    return TEMPLATE.format(
        name=name, rule=rule, ptxas=ptxas, target=target, why=why, version=version,
        cluster=cluster, pre=opt.get("pre", ""), alloc=slots["alloc"], body=slots["body"],
        dealloc=slots["dealloc"], relq=slots["relq"])


def ptxas_rejects(text, version, target):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        r = subprocess.run([PTXAS.format(v=version), "-arch=" + target, path, "-o", os.devnull],
                           capture_output=True, text=True)
        return r.returncode != 0, (r.stdout + r.stderr).strip().splitlines()[:1]
    finally:
        os.unlink(path)


def main():
    os.makedirs(OUT, exist_ok=True)
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    kept = 0
    for name, rule, slot, text, opt, why in CASES:
        ptx = render(name, rule, slot, text, opt, why)
        target = opt.get("target", "sm_100a")
        rej, msg = ptxas_rejects(ptx, opt.get("ptxas", "13.5"), target)
        path = os.path.join(OUT, name + ".ptx")
        if not rej:
            print("ACCEPTED (not written): " + name, file=sys.stderr)
            if os.path.exists(path):
                os.unlink(path)
            continue
        print("{}: {} | {}".format(name, rule, msg[0] if msg else ""))
        with open(path, "w") as f:
            f.write(ptx)
        kept += 1
    print("{} of {} cases rejected by ptxas and written".format(kept, len(CASES)))


if __name__ == "__main__":
    main()
