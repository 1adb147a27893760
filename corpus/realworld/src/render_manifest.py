"""Render corpus/realworld/MANIFEST.md from manifest.jsonl (written by scripts/gen-realworld) and counts.json."""
import json
import os
import sys

WHAT = {
    "triton_matmul_f16_tma.ptx": "fp16 GEMM, TMA descriptors, 3-stage pipeline; kind::f16, 32x32b.x128 ld/st",
    "triton_matmul_bf16_ptr.ptx": "bf16 GEMM from masked pointer loads (cp.async), kind::f16",
    "triton_matmul_bf16_ptr_big.ptx": "bf16 GEMM 256x256x128 tile, 8 warps: the large file (>250 KB)",
    "triton_matmul_fp8e4m3_tma.ptx": "fp8 e4m3 GEMM: kind::f8f6f4",
    "triton_matmul_mxfp8.ptx": "tl.dot_scaled mxfp8: tcgen05.cp 32x128b.warpx4 of scales + kind::mxf8f6f4.block_scale.block32",
    "triton_matmul_mxfp4.ptx": "tl.dot_scaled mxfp4 (e2m1): tcgen05.cp warpx4 + kind::mxf4.block_scale.block32",
    "triton_matmul_persistent_ws.ptx": "persistent grouped GEMM, tl.range(warp_specialize=True): warp-specialized partitions, 2 dealloc sites",
    "triton_attn_fwd_causal.ptx": "flash-attention fwd, causal, D=128: QK^T and PV MMAs, 16x32bx2 ld/st, TMEM P operand",
    "triton_attn_fwd_ws.ptx": "flash-attention fwd with warp_specialize=True, D=128",
    "triton_attn_fwd_d256_causal.ptx": "flash-attention fwd, causal, D=256, BLOCK_N=64",
    "gluon_matmul_pipelined.ptx": "Gluon: allocate_tensor_memory, TMA ring + tcgen05_mma(mbarriers=...) + tcgen05_commit",
    "gluon_matmul_ws_persistent.ptx": "Gluon: gl.warp_specialize (load warp / MMA warp / epilogue), double-buffered TMEM acc",
    "gluon_mma_scaled_mxfp8_mxfp4.ptx": "Gluon: tcgen05_mma_scaled e4m3 x e2m1, scales stored to TMEM (32x32b.x4 st) -> kind::mxf8f6f4.block_scale",
    "gluon_matmul_2cta.ptx": "Gluon: num_ctas=2, TensorMemoryLayout(two_ctas=True): cta_group::2 alloc/mma/dealloc/relinquish, commit .multicast::cluster",
    "gluon_tmem_roundtrip_sm100.ptx": "Gluon: TMEM store, tcgen05_copy smem->TMEM (tcgen05.cp 128x256b), TMEM load",
    "gluon_tmem_ldred_sm103.ptx": "Gluon on sm_103a: load_max/load_min(abs) -> tcgen05.ld.red ... .max.f32 / .min.abs.f32",
    "nvcc_tmem_alloc_ld_st.ptx": "inline asm: alloc/relinquish/dealloc, fences, st 32x32b/16x64b.unpack/16x32bx2, ld 32x32b/16x64b.pack/16x256b/16x128b/16x32bx2, waits",
    "nvcc_2cta_mma_multicast.ptx": "inline asm: __cluster_dims__(2), barrier.cluster, cta_group::2 alloc/mma/dealloc/relinquish, commit multicast ctaMask",
    "nvcc_cp_mma_variants.ptx": "inline asm: every tcgen05.cp shape/multicast + b4x16_p64/b6x16_p32 decompression, A-from-TMEM MMA, disable-output-lane, mxf8f6f4 scale_vec::1X, mxf4nvf4 block16, mxf4 block32, collector::a fill/lastuse, mma.ws collector::b0, shift",
    "nvcc_cccl_ptx_wrappers.ptx": "CCCL cuda::ptx wrappers: alloc/st/ld/mma (f16 with mask, tf32 with scale-input-d, A in TMEM)/cp/shift/commit(+multicast); alloc/dealloc .exclusive with cta_group::2",
    "nvcc_ldred_sm103.ptx": "inline asm + CCCL on sm_103a: tcgen05.ld.red max.NaN.f32, min.abs.f32, 16x32bx2 max.s32, CCCL's .f32.max order",
}


def main(out):
    rows = [json.loads(l) for l in open(os.path.join(out, "manifest.jsonl")) if l.strip()]
    counts = json.load(open(os.path.join(out, "counts.json")))
    p = print
    p("# Real compiler-generated tcgen05 PTX")
    p()
    p("Every file here was produced by a compiler, not written by hand. Regenerate all of them with")
    p("`scripts/gen-realworld` (after `scripts/setup-ptxas`). Generator sources are in `src/`.")
    p("`counts.json` holds, per file, the number of each full tcgen05 opcode in instruction position,")
    p("computed by `scripts/count-tcgen05.py` (comment-stripping regex, independent of the harness parser).")
    p("Every file assembles with ptxas 13.5 (`.tools/cuda/13.5/bin/ptxas -arch=<target>`); gen-realworld checks it.")
    p()
    p("Triton/Gluon files: `triton==3.9.0` in `.tools/venv`, compiled without a GPU by")
    p("`triton.compile(ASTSource(fn, signature, constexprs), target=GPUTarget(\"cuda\", <arch>, 32), options=...)`")
    p("(GluonASTSource for Gluon), `.asm[\"ptx\"]` written out; `TRITON_DEFAULT_FP_FUSION=1`; commands run from `corpus/realworld/`. Triton invokes its bundled ptxas.")
    p("nvcc files: `nvcc` 13.5 from the `nvidia-cuda-nvcc==13.5.37` wheel (+ nvvm, crt, runtime 13.5.37 and")
    p("`nvidia-cuda-cccl==13.3.5.0.6` headers), host gcc 12.2, run from `corpus/realworld/`.")
    p()
    p("| file | bytes | compiler + version | source | command | target | PTX .version | tcgen05 instrs | exercises |")
    p("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        f = r["file"]
        n = sum(counts.get(f, {}).values())
        if r["frontend"] == "nvcc":
            comp = f"nvcc {r['nvcc']} (CUDA 13.5 wheel)"
            src = f"src/{r['source']}"
            cmd = f"`{r['command']}`"
        else:
            comp = f"{'Gluon' if r['frontend'] == 'gluon' else 'Triton'} {r['triton']}"
            src = f"src/{r['module']} : {r['kernel']}"
            opts = ", ".join(f"{k}={v}" for k, v in r["options"].items())
            consts = ", ".join(f"{k}={v}" for k, v in r["constexprs"].items())
            cmd = (f"`../../.tools/venv/bin/python src/gen_triton.py . {r['module'][:-3]} --only {f[:-4]}` "
                   f"(GPUTarget(cuda,{r['arch']},32); {opts}; {consts})")
        p(f"| {f} | {r['bytes']} | {comp} | {src} | {cmd} | {r['target']} | {r['ptx_version']} | {n} | {WHAT.get(f, '')} |")
    p()
    p("## Distinct tcgen05 opcodes over the corpus")
    p()
    total = {}
    for f, m in counts.items():
        for op, c in m.items():
            t = total.setdefault(op, [0, 0])
            t[0] += c
            t[1] += 1
    p("| opcode | occurrences | files |")
    p("|---|---|---|")
    for op in sorted(total):
        p(f"| `{op}` | {total[op][0]} | {total[op][1]} |")


if __name__ == "__main__":
    main(sys.argv[1])
