#!/usr/bin/env python3
"""Writes corpus/check-wellformed/: small kernels and device functions that ptxas accepts and
that follow the TMEM protocol (alloc, use, wait, commit + mbarrier wait, dealloc, relinquish),
covering the forms of reference §3 on the targets of reference §1. `check` must report nothing
on them (tests/check_corpus.rs).

Each file is assembled with the named ptxas first; a file that ptxas rejects is not written
(the script says so). Usage: scripts/gen-check-wellformed.py
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "corpus", "check-wellformed")
PTXAS = os.path.join(ROOT, ".tools", "cuda", "{v}", "bin", "ptxas")

HEAD = """\
// check-wellformed: {name}
// ptxas: {ptxas} -arch={target} accepts it
// what: {what}
.version {version}
.target {target}
.address_size 64

"""

KERNEL = """\
.visible .entry k(.param .u64 p)
.reqntid 32, 1, 1{cluster}
{{
  .reg .b32 %r<64>;
  .reg .b64 %rd<8>;
  .reg .b16 %rs<4>;
  .reg .pred %p<8>;
  .shared .align 8 .b32 slot;
  .shared .align 8 .b64 mbar;
  mbarrier.init.shared::cta.b64 [mbar], 1;
{pre}  tcgen05.alloc.cta_group::{cg}.sync.aligned.shared::cta.b32 [slot], {ncols};
  tcgen05.relinquish_alloc_permit.cta_group::{cg}.sync.aligned;
  ld.shared.b32 %r1, [slot];
  mov.b64 %rd1, 0;
  mov.b64 %rd2, 0;
  mov.b32 %r2, 136314896;
  mov.b32 %r3, 0;
  setp.ne.b32 %p1, %r2, 0;
{body}
{post}  tcgen05.dealloc.cta_group::{cg}.sync.aligned.b32 %r1, {ncols};
  ret;
}}
"""

# Issue by one elected thread, commit, and wait for the mbarrier (§9.7.16.12.1, reference §4.4).
COMMIT_WAIT = """\
  @%p5 tcgen05.commit.cta_group::{cg}.mbarrier::arrive::one.shared::cluster.b64 [mbar];
$L_wait:
  mbarrier.try_wait.parity.shared::cta.b64 %p6, [mbar], 0;
  @!%p6 bra $L_wait;
"""
ELECT = "  elect.sync %r30|%p5, -1;\n"

CASES = []


def case(name, what, body, **opt):
    CASES.append((name, what, body, opt))


def issue(*lines, cg=1):
    s = ELECT
    for l in lines:
        s += "  @%p5 " + l + "\n"
    return s + COMMIT_WAIT.format(cg=cg)


case("ld-st-shapes", "tcgen05.st/ld of every shape, with waits (PTX ISA 9.7.16.8.3/4)",
     "  tcgen05.st.sync.aligned.32x32b.x2.b32 [%r1], {%r2, %r3};\n"
     "  tcgen05.st.sync.aligned.16x64b.x1.b32 [%r1], {%r2};\n"
     "  tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%r1], 16, {%r2, %r3};\n"
     "  tcgen05.wait::st.sync.aligned;\n"
     "  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r4, %r5}, [%r1];\n"
     "  tcgen05.ld.sync.aligned.16x64b.x1.b32 {%r6}, [%r1];\n"
     "  tcgen05.ld.sync.aligned.16x128b.x1.b32 {%r7, %r8}, [%r1];\n"
     "  tcgen05.ld.sync.aligned.16x256b.x1.b32 {%r9, %r10, %r11, %r12}, [%r1];\n"
     "  tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r13, %r14}, [%r1], 16;\n"
     "  tcgen05.ld.sync.aligned.32x32b.x4.pack::16b.b32 {%r15, %r16, %r17, %r18}, [%r1];\n"
     "  tcgen05.wait::ld.sync.aligned;\n")
case("st-unpack", "tcgen05.st.unpack::16b (PTX ISA 9.7.16.8.4)",
     "  tcgen05.st.sync.aligned.32x32b.x2.unpack::16b.b32 [%r1], {%r2, %r3};\n"
     "  tcgen05.wait::st.sync.aligned;\n")
case("mma-f16-scale-d", "mma .kind::f16 with disable-output-lane and scale-input-d on sm_100a (PTX ISA 9.7.16.10.9.1)",
     "  mov.b32 %r4, 0;\n" + issue("tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, {%r4, %r4, %r4, %r4}, %p1, 3;"))
case("mma-tf32-atmem", "mma .kind::tf32 with A in TMEM, .ashift and collector::a::lastuse",
     issue("tcgen05.mma.cta_group::1.kind::tf32.ashift.collector::a::lastuse [%r1], [%r1], %rd2, %r2, %p1;"))
case("mma-ws", "mma.ws with collector::b0::fill and a zero-column mask (PTX ISA 9.7.16.10.9.3)",
     issue("tcgen05.mma.ws.cta_group::1.kind::f16.collector::b0::fill [%r1], %rd1, %rd2, %r2, %p1;",
           "tcgen05.mma.ws.cta_group::1.kind::f8f6f4 [%r1], %rd1, %rd2, %r2, %p1, %rd1;"))
case("mma-sp", "mma.sp with [sp-meta-tmem] (PTX ISA 9.7.16.10.9.2)",
     issue("tcgen05.mma.sp.cta_group::1.kind::f16 [%r1], %rd1, %rd2, [%r1], %r2, %p1;"))
case("mma-block-scale", "mma .block_scale with mxf8f6f4 1X and mxf4 block32 (PTX ISA 9.7.16.10.9.1)",
     issue("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;",
           "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;"))
case("mma-nvf4-block16", "mma .kind::mxf4nvf4.block_scale.block16 on sm_100f (PTX 8.8)",
     issue("tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%r1], %rd1, %rd2, %r2, [%r1], [%r1], %p1;"),
     target="sm_100f")
case("mma-i8-sm110a", "mma .kind::i8 on sm_110a (PTX ISA 9.7.16.10.9.1 target notes)",
     issue("tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd2, %r2, %p1;"), target="sm_110a", version="9.0")
case("ld-red-sm103a", "tcgen05.ld.red on sm_103a (PTX ISA 9.7.16.8.3)",
     "  tcgen05.ld.red.sync.aligned.32x32b.x2.min.f32 {%r4, %r5}, %r9, [%r1];\n"
     "  tcgen05.ld.red.sync.aligned.32x32b.x4.max.abs.NaN.f32 {%r4, %r5, %r6, %r7}, %r9, [%r1];\n"
     "  tcgen05.ld.red.sync.aligned.16x32bx2.x2.max.u32 {%r4, %r5}, %r10, [%r1], 16;\n"
     "  tcgen05.wait::ld.sync.aligned;\n", target="sm_103a")
case("cp-shapes", "tcgen05.cp of every shape and multicast, and decompression (PTX ISA 9.7.16.9.2)",
     issue("tcgen05.cp.cta_group::1.128x256b [%r1], %rd1;",
           "tcgen05.cp.cta_group::1.4x256b [%r1], %rd1;",
           "tcgen05.cp.cta_group::1.128x128b [%r1], %rd1;",
           "tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [%r1], %rd1;",
           "tcgen05.cp.cta_group::1.64x128b.warpx2::01_23 [%r1], %rd1;",
           "tcgen05.cp.cta_group::1.32x128b.warpx4 [%r1], %rd1;",
           "tcgen05.cp.cta_group::1.128x256b.b8x16.b6x16_p32 [%r1], %rd1;",
           "tcgen05.cp.cta_group::1.128x128b.b8x16.b4x16_p64 [%r1], %rd1;"))
case("shift-sm103a", "tcgen05.shift on an arch-specific target (PTX ISA 9.7.16.9.3)",
     issue("tcgen05.shift.cta_group::1.down [%r1];"), target="sm_103a")
case("constexpr", "constant expressions as nCols and immHalfSplitoff (PTX ISA 4.6)",
     "  tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%r1], (4*4), {%r2, %r3};\n"
     "  tcgen05.wait::st.sync.aligned;\n", ncols="(16*2)")
case("sm100f", "the base instructions on sm_100f (PTX 8.8)",
     "  tcgen05.st.sync.aligned.32x32b.x1.b32 [%r1], {%r2};\n  tcgen05.wait::st.sync.aligned;\n"
     + issue("tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;"), target="sm_100f")
case("sm110f", "the base instructions on sm_110f (PTX 9.0)",
     "  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r4}, [%r1];\n  tcgen05.wait::ld.sync.aligned;\n"
     + issue("tcgen05.mma.cta_group::1.kind::tf32 [%r1], %rd1, %rd2, %r2, %p1;"), target="sm_110f", version="9.0")
case("sm101a-ptx86", "sm_101a, the PTX 8.6 name of sm_110a (reference section 1)",
     "  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r4}, [%r1];\n  tcgen05.wait::ld.sync.aligned;\n",
     target="sm_101a", version="8.6", ptxas="12.8")
CL = "barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
case("pair", "a CTA pair: cluster barriers around the ::2 alloc and dealloc (PTX ISA 9.7.16.7.1), ::2 mma and a multicast commit",
     "  mov.b16 %rs1, 3;\n" + ELECT
     + "  @%p5 tcgen05.mma.cta_group::2.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;\n"
     + "  @%p5 tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [mbar], %rs1;\n"
     + "$L_wait:\n  mbarrier.try_wait.parity.shared::cta.b64 %p6, [mbar], 0;\n  @!%p6 bra $L_wait;\n",
     cg=2, cluster=2, pre="  " + CL, post="  " + CL)

FUNC_ONLY = """\
.visible .func (.param .b32 out) tmem_load(.param .b32 taddr)
{
  .reg .b32 %r<8>;
  ld.param.b32 %r1, [taddr];
  tcgen05.ld.sync.aligned.32x32b.x2.b32 {%r2, %r3}, [%r1];
  tcgen05.wait::ld.sync.aligned;
  add.s32 %r4, %r2, %r3;
  st.param.b32 [out], %r4;
  ret;
}

.visible .func tmem_store(.param .b32 taddr, .param .b32 v)
{
  .reg .b32 %r<8>;
  ld.param.b32 %r1, [taddr];
  ld.param.b32 %r2, [v];
  tcgen05.st.sync.aligned.16x64b.x2.b32 [%r1], {%r2, %r2};
  tcgen05.wait::st.sync.aligned;
  ret;
}
"""

WARP_ROLES = """\
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<16>;
  .reg .pred %p<4>;
  .shared .align 8 .b32 slot;
  mov.u32 %r4, %tid.x;
  shr.u32 %r5, %r4, 5;
  shfl.sync.idx.b32 %r6, %r5, 0, 31, -1;
  setp.ne.s32 %p1, %r6, 0;
  @%p1 bra $L_skip;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [slot], 64;
  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
$L_skip:
  bar.sync 0;
  ld.shared.b32 %r1, [slot];
  and.b32 %r7, %r4, 96;
  shl.b32 %r8, %r7, 16;
  add.s32 %r9, %r1, %r8;
  tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r10}, [%r9];
  tcgen05.wait::ld.sync.aligned;
  bar.sync 0;
  @%p1 bra $L_end;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, 64;
$L_end:
  ret;
}
"""

RAW = [
    ("func-only", "device functions only (checked as callees in an unknown context)", FUNC_ONLY, {}),
    ("warp-roles", "CUTLASS-style warp roles from %tid.x >> 5 and a shfl broadcast, no .reqntid", WARP_ROLES, {}),
]


def render(name, what, body, opt):
    version = opt.get("version", "8.8")
    target = opt.get("target", "sm_100a")
    ptxas = opt.get("ptxas", "13.5")
    head = HEAD.format(name=name, what=what, ptxas=ptxas, target=target, version=version)
    if opt.get("raw"):
        return head + body
    cluster = ""
    if "cluster" in opt:
        cluster = "\n.explicitcluster\n.reqnctapercluster {}, 1, 1".format(opt["cluster"])
    return head + KERNEL.format(cluster=cluster, cg=opt.get("cg", 1), ncols=opt.get("ncols", "32"),
                                pre=opt.get("pre", ""), post=opt.get("post", ""), body=body.rstrip("\n"))


def ptxas_accepts(text, version, target):
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        r = subprocess.run([PTXAS.format(v=version), "-arch=" + target, path, "-o", os.devnull],
                           capture_output=True, text=True)
        return r.returncode == 0, (r.stdout + r.stderr).strip().splitlines()[:2]
    finally:
        os.unlink(path)


def main():
    os.makedirs(OUT, exist_ok=True)
    kept = 0
    todo = CASES + [(n, w, b, dict(o, raw=True)) for n, w, b, o in RAW]
    for name, what, body, opt in todo:
        ptx = render(name, what, body, opt)
        ok, msg = ptxas_accepts(ptx, opt.get("ptxas", "13.5"), opt.get("target", "sm_100a"))
        path = os.path.join(OUT, name + ".ptx")
        if not ok:
            print("REJECTED (not written): {}: {}".format(name, msg), file=sys.stderr)
            if os.path.exists(path):
                os.unlink(path)
            continue
        with open(path, "w") as f:
            f.write(ptx)
        kept += 1
    print("{} of {} well-formed files accepted by ptxas and written".format(kept, len(todo)))


if __name__ == "__main__":
    main()
