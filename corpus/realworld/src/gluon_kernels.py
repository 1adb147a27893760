"""Gluon (triton.experimental.gluon) Blackwell kernels compiled ahead-of-time to collect real tcgen05 PTX.

Written for triton==3.9.0. Each entry of KERNELS is (output stem, jit function, signature, constexprs, options,
target arch); gen_triton.py compiles them with GluonASTSource and GPUTarget("cuda", arch, 32). No GPU is needed.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.blackwell import (
    TensorMemoryLayout,
    TensorMemoryScalesLayout,
    allocate_tensor_memory,
    fence_async_shared,
    mbarrier,
    tcgen05_commit,
    tcgen05_copy,
    tcgen05_mma,
    tcgen05_mma_barrier_count,
    tcgen05_mma_scaled,
    tma,
)


# ---------------------------------------------------------------------------------------------
# 1. Software-pipelined matmul: TMA ring of STAGES buffers, async tcgen05_mma releasing each
#    stage through an mbarrier, one tcgen05_commit for the accumulator, TMEM -> regs -> TMA store.
@gluon.jit
def g_matmul_pipelined(a_ptr, b_ptr, c_ptr, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr,
                       STAGES: gl.constexpr):
    pid_m = gl.program_id(0)
    pid_n = gl.program_id(1)
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], dtype)
    b_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BN, BK], dtype)
    c_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float16)
    a_desc = tma.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK], a_layout)
    b_desc = tma.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BN, BK], b_layout)
    c_desc = tma.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN], c_layout)
    a_s = gl.allocate_shared_memory(dtype, [STAGES, BM, BK], a_layout)
    b_s = gl.allocate_shared_memory(dtype, [STAGES, BN, BK], b_layout)
    ready = mbarrier.allocate_mbarrier(batch=STAGES)
    empty = mbarrier.allocate_mbarrier(batch=STAGES)
    acc_bar = mbarrier.allocate_mbarrier()
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    mbarrier.init(acc_bar, count=1)
    tmem_layout: gl.constexpr = TensorMemoryLayout(block=(BM, BN), col_stride=1)
    acc = allocate_tensor_memory(gl.float32, [BM, BN], tmem_layout)
    k_tiles = gl.cdiv(K, BK)
    for i in gl.static_range(STAGES - 1):
        mbarrier.expect(ready.index(i), a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
        tma.async_load(a_desc, [pid_m * BM, i * BK], ready.index(i), a_s.index(i))
        tma.async_load(b_desc, [pid_n * BN, i * BK], ready.index(i), b_s.index(i))
    use_acc = False
    for ki in range(k_tiles):
        s = ki % STAGES
        mbarrier.wait(ready.index(s), (ki // STAGES) & 1)
        tcgen05_mma(a_s.index(s), b_s.index(s).permute((1, 0)), acc, use_acc=use_acc, mbarriers=[empty.index(s)])
        use_acc = True
        nk = ki + STAGES - 1
        ns = nk % STAGES
        if nk < k_tiles:
            # stage ns was last read by the MMA of iteration ki - 1
            mbarrier.wait(empty.index(ns), ((ki - 1) // STAGES) & 1, pred=ki > 0)
            mbarrier.expect(ready.index(ns), a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
            tma.async_load(a_desc, [pid_m * BM, nk * BK], ready.index(ns), a_s.index(ns))
            tma.async_load(b_desc, [pid_n * BN, nk * BK], ready.index(ns), b_s.index(ns))
    tcgen05_commit(acc_bar)
    mbarrier.wait(acc_bar, 0)
    out = acc.load()
    c_s = gl.allocate_shared_memory(gl.float16, [BM, BN], c_layout)
    c_s.store(out.to(gl.float16))
    fence_async_shared()
    tma.async_store(c_desc, [pid_m * BM, pid_n * BN], c_s)
    tma.store_wait(0)


# ---------------------------------------------------------------------------------------------
# 2. Persistent warp-specialized matmul: 1 TMA warp, 1 MMA warp, 4 epilogue warps (default
#    partition), double-buffered TMEM accumulator.
@gluon.jit
def _ws_load(a_desc, b_desc, a_s, b_s, ready, empty, num_tiles, num_pid_n, k_tiles, BM: gl.constexpr,
             BN: gl.constexpr, BK: gl.constexpr, STAGES: gl.constexpr):
    cnt = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        pm = tile // num_pid_n
        pn = tile % num_pid_n
        for ki in range(k_tiles):
            s = cnt % STAGES
            mbarrier.wait(empty.index(s), ((cnt // STAGES) & 1) ^ 1)
            mbarrier.expect(ready.index(s), a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
            tma.async_load(a_desc, [pm * BM, ki * BK], ready.index(s), a_s.index(s))
            tma.async_load(b_desc, [pn * BN, ki * BK], ready.index(s), b_s.index(s))
            cnt += 1


@gluon.jit
def _ws_mma(a_s, b_s, acc, ready, empty, acc_ready, acc_empty, num_tiles, k_tiles, STAGES: gl.constexpr):
    cnt = 0
    t = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        buf = t % 2
        mbarrier.wait(acc_empty.index(buf), ((t // 2) & 1) ^ 1)
        acc_buf = acc.index(buf)
        use_acc = False
        for ki in range(k_tiles):
            s = cnt % STAGES
            mbarrier.wait(ready.index(s), (cnt // STAGES) & 1)
            tcgen05_mma(a_s.index(s), b_s.index(s).permute((1, 0)), acc_buf, use_acc=use_acc,
                        mbarriers=[empty.index(s)])
            use_acc = True
            cnt += 1
        tcgen05_commit(acc_ready.index(buf))
        t += 1


@gluon.jit
def _ws_epilogue(c_desc, c_s, acc, acc_ready, acc_empty, num_tiles, num_pid_n, BM: gl.constexpr, BN: gl.constexpr):
    t = 0
    for tile in range(gl.program_id(0), num_tiles, gl.num_programs(0)):
        pm = tile // num_pid_n
        pn = tile % num_pid_n
        buf = t % 2
        mbarrier.wait(acc_ready.index(buf), (t // 2) & 1)
        out = acc.index(buf).load()
        mbarrier.arrive(acc_empty.index(buf))
        tma.store_wait(0)
        c_s.store(out.to(gl.float16))
        fence_async_shared()
        tma.async_store(c_desc, [pm * BM, pn * BN], c_s)
        t += 1
    tma.store_wait(0)


@gluon.jit
def g_matmul_ws_persistent(a_ptr, b_ptr, c_ptr, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr,
                           STAGES: gl.constexpr):
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], dtype)
    b_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BN, BK], dtype)
    c_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float16)
    a_desc = tma.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK], a_layout)
    b_desc = tma.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BN, BK], b_layout)
    c_desc = tma.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN], c_layout)
    a_s = gl.allocate_shared_memory(dtype, [STAGES, BM, BK], a_layout)
    b_s = gl.allocate_shared_memory(dtype, [STAGES, BN, BK], b_layout)
    c_s = gl.allocate_shared_memory(gl.float16, [BM, BN], c_layout)
    ready = mbarrier.allocate_mbarrier(batch=STAGES)
    empty = mbarrier.allocate_mbarrier(batch=STAGES)
    acc_ready = mbarrier.allocate_mbarrier(batch=2)
    acc_empty = mbarrier.allocate_mbarrier(batch=2)
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=1)
    for i in gl.static_range(2):
        mbarrier.init(acc_ready.index(i), count=1)
        mbarrier.init(acc_empty.index(i), count=1)
    tmem_layout: gl.constexpr = TensorMemoryLayout(block=(BM, BN), col_stride=1)
    acc = allocate_tensor_memory(gl.float32, [2, BM, BN], tmem_layout)
    num_pid_n = gl.cdiv(N, BN)
    num_tiles = gl.cdiv(M, BM) * num_pid_n
    k_tiles = gl.cdiv(K, BK)
    gl.warp_specialize([
        (_ws_epilogue, (c_desc, c_s, acc, acc_ready, acc_empty, num_tiles, num_pid_n, BM, BN)),
        (_ws_load, (a_desc, b_desc, a_s, b_s, ready, empty, num_tiles, num_pid_n, k_tiles, BM, BN, BK, STAGES)),
        (_ws_mma, (a_s, b_s, acc, ready, empty, acc_ready, acc_empty, num_tiles, k_tiles, STAGES)),
    ], [1, 1], [24, 24])


# ---------------------------------------------------------------------------------------------
# 3. Block-scaled MMA (mxfp8 x mxfp4 or mxfp8 x mxfp8): operands by TMA, UE8M0 scales written into TMEM
#    (TensorMemoryScalesLayout) from registers, tcgen05_mma_scaled, commit.
@gluon.jit
def g_mma_scaled(a_ptr, b_ptr, as_ptr, bs_ptr, c_ptr, M, N, K, BM: gl.constexpr, BN: gl.constexpr,
                 BK: gl.constexpr, A_FMT: gl.constexpr, B_FMT: gl.constexpr):
    pid_m = gl.program_id(0)
    pid_n = gl.program_id(1)
    A_PACK: gl.constexpr = 2 if A_FMT == "e2m1" else 1
    B_PACK: gl.constexpr = 2 if B_FMT == "e2m1" else 1
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK // A_PACK], gl.uint8)
    b_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BN, BK // B_PACK], gl.uint8)
    a_desc = tma.make_tensor_descriptor(a_ptr, [M, K // A_PACK], [K // A_PACK, 1], [BM, BK // A_PACK], a_layout)
    b_desc = tma.make_tensor_descriptor(b_ptr, [N, K // B_PACK], [K // B_PACK, 1], [BN, BK // B_PACK], b_layout)
    a_s = gl.allocate_shared_memory(gl.uint8, [BM, BK // A_PACK], a_layout)
    b_s = gl.allocate_shared_memory(gl.uint8, [BN, BK // B_PACK], b_layout)
    tma_bar = mbarrier.allocate_mbarrier()
    mma_bar = mbarrier.allocate_mbarrier()
    mbarrier.init(tma_bar, count=1)
    mbarrier.init(mma_bar, count=1)
    acc = allocate_tensor_memory(gl.float32, [BM, BN], TensorMemoryLayout(block=(BM, BN), col_stride=1))
    scale_layout: gl.constexpr = gl.BlockedLayout([1, BK // 32], [32, 1], [gl.num_warps(), 1], [1, 0])
    a_scale_t = allocate_tensor_memory(gl.uint8, [BM, BK // 32], TensorMemoryScalesLayout())
    b_scale_t = allocate_tensor_memory(gl.uint8, [BN, BK // 32], TensorMemoryScalesLayout())
    rows_a = gl.arange(0, BM, gl.SliceLayout(1, scale_layout))
    rows_b = gl.arange(0, BN, gl.SliceLayout(1, scale_layout))
    cols = gl.arange(0, BK // 32, gl.SliceLayout(0, scale_layout))
    phase = 0
    use_acc = False
    for k in range(0, K, BK):
        mbarrier.expect(tma_bar, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
        tma.async_load(a_desc, [pid_m * BM, k // A_PACK], tma_bar, a_s)
        tma.async_load(b_desc, [pid_n * BN, k // B_PACK], tma_bar, b_s)
        sa = gl.load(as_ptr + (pid_m * BM + rows_a)[:, None] * (K // 32) + (k // 32 + cols)[None, :])
        sb = gl.load(bs_ptr + (pid_n * BN + rows_b)[:, None] * (K // 32) + (k // 32 + cols)[None, :])
        a_scale_t.store(gl.convert_layout(sa, a_scale_t.get_reg_layout()))
        b_scale_t.store(gl.convert_layout(sb, b_scale_t.get_reg_layout()))
        mbarrier.wait(tma_bar, phase)
        tcgen05_mma_scaled(a_s, b_s.permute((1, 0)), acc, a_scale_t, b_scale_t, A_FMT, B_FMT, use_acc=use_acc)
        tcgen05_commit(mma_bar)
        mbarrier.wait(mma_bar, phase)
        use_acc = True
        phase ^= 1
    out = acc.load()
    out_layout: gl.constexpr = gl.BlockedLayout([1, 4], [1, 32], [gl.num_warps(), 1], [1, 0])
    out = gl.convert_layout(out, out_layout)
    rm = pid_m * BM + gl.arange(0, BM, gl.SliceLayout(1, out_layout))
    rn = pid_n * BN + gl.arange(0, BN, gl.SliceLayout(0, out_layout))
    gl.store(c_ptr + rm[:, None] * N + rn[None, :], out.to(gl.float16))


# ---------------------------------------------------------------------------------------------
# 4. 2-CTA (CTA pair) MMA: num_ctas=2, accumulator TensorMemoryLayout(two_ctas=True) -> cta_group::2,
#    operands sharded over the pair (A along M, B along N), completion multicast to both CTAs.
@gluon.jit
def g_matmul_2cta(a_ptr, b_ptr, c_ptr, M, N, K, BM: gl.constexpr, BN: gl.constexpr, BK: gl.constexpr):
    gl.static_assert(gl.num_ctas() == 2)
    pid_m = gl.program_id(0)
    pid_n = gl.program_id(1)
    dtype: gl.constexpr = a_ptr.dtype.element_ty
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], dtype, cga_layout=[[1, 0]])
    b_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BK, BN], dtype, cga_layout=[[0, 1]])
    c_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float16, cga_layout=[[1, 0]])
    a_desc = tma.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK], a_layout)
    b_desc = tma.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN], b_layout)
    c_desc = tma.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN], c_layout)
    a_s = gl.allocate_shared_memory(dtype, [BM, BK], a_layout)
    b_s = gl.allocate_shared_memory(dtype, [BK, BN], b_layout)
    tma_bar = mbarrier.allocate_mbarrier(two_ctas=True)
    mma_bar = mbarrier.allocate_mbarrier()
    mbarrier.init(tma_bar, count=1)
    mbarrier.init(mma_bar, count=tcgen05_mma_barrier_count([a_s, b_s], False, True))
    acc_layout: gl.constexpr = TensorMemoryLayout(block=(BM // 2, BN), col_stride=1, cga_layout=[[1, 0]],
                                                  two_ctas=True)
    acc = allocate_tensor_memory(gl.float32, [BM, BN], acc_layout)
    phase = 0
    use_acc = False
    for k in range(0, K, BK):
        mbarrier.expect(tma_bar, a_desc.nbytes_per_cta + b_desc.nbytes_per_cta)
        tma.async_load(a_desc, [pid_m * BM, k], tma_bar, a_s)
        tma.async_load(b_desc, [k, pid_n * BN], tma_bar, b_s)
        mbarrier.wait(tma_bar, phase, deps=[a_s, b_s])
        tcgen05_mma(a_s, b_s, acc, use_acc=use_acc, mbarriers=[mma_bar])
        mbarrier.wait(mma_bar, phase, deps=[a_s, b_s])
        use_acc = True
        phase ^= 1
    out = acc.load()
    c_s = gl.allocate_shared_memory(gl.float16, [BM, BN], c_layout)
    c_s.store(out.to(gl.float16))
    fence_async_shared()
    tma.async_store(c_desc, [pid_m * BM, pid_n * BN], c_s)
    tma.store_wait(0)


# ---------------------------------------------------------------------------------------------
# 5. TMEM data movement: registers -> TMEM (tcgen05.st), smem -> TMEM (tcgen05.cp), TMEM -> regs with a
#    fused row max / min (tcgen05.ld.red, needs sm_103a / sm_110a) and a plain tcgen05.ld.
@gluon.jit
def g_tmem_roundtrip(x_ptr, y_ptr, rmax_ptr, rmin_ptr, BM: gl.constexpr, BN: gl.constexpr, USE_RED: gl.constexpr):
    blocked: gl.constexpr = gl.BlockedLayout([1, 4], [1, 32], [gl.num_warps(), 1], [1, 0])
    rows = gl.arange(0, BM, gl.SliceLayout(1, blocked))
    cols = gl.arange(0, BN, gl.SliceLayout(0, blocked))
    offs = rows[:, None] * BN + cols[None, :]
    x = gl.load(x_ptr + offs)
    tl_layout: gl.constexpr = TensorMemoryLayout(block=(BM, BN), col_stride=1)
    t0 = allocate_tensor_memory(gl.float32, [BM, BN], tl_layout)
    t1 = allocate_tensor_memory(gl.float32, [BM, BN], tl_layout)
    t0.store(gl.convert_layout(x, t0.get_reg_layout()))
    smem_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BN], gl.float32)
    s = gl.allocate_shared_memory(gl.float32, [BM, BN], smem_layout)
    s.store(x * 2.0)
    fence_async_shared()
    bar = mbarrier.allocate_mbarrier()
    mbarrier.init(bar, count=1)
    tcgen05_copy(s, t1)
    tcgen05_commit(bar)
    mbarrier.wait(bar, 0)
    if USE_RED:
        v0, m0 = t0.load_max()
        v1, m1 = t1.load_min(abs=True)
        red_l: gl.constexpr = m0.type.layout
        r = gl.arange(0, BM, red_l)
        gl.store(rmax_ptr + r, m0)
        gl.store(rmin_ptr + r, gl.convert_layout(m1, red_l))
    else:
        v0 = t0.load()
        v1 = t1.load()
    y = gl.convert_layout(v0 + v1, blocked)
    gl.store(y_ptr + offs, y)


def _sig(**kw):
    return dict(kw)


_mm = _sig(a_ptr="*fp16", b_ptr="*fp16", c_ptr="*fp16", M="i32", N="i32", K="i32")


def _c(sig, **consts):
    s = dict(sig)
    for k in consts:
        s[k] = "constexpr"
    return s, consts


KERNELS = []


def _add(stem, fn, sig, consts, options, arch=100):
    s, c = _c(sig, **consts)
    KERNELS.append((stem, fn, s, c, options, arch))


_add("gluon_matmul_pipelined", g_matmul_pipelined, _mm, dict(BM=128, BN=256, BK=64, STAGES=3), {"num_warps": 4})
_add("gluon_matmul_ws_persistent", g_matmul_ws_persistent, _mm, dict(BM=128, BN=128, BK=64, STAGES=4),
     {"num_warps": 4})
_add("gluon_mma_scaled_mxfp8_mxfp4", g_mma_scaled,
     _sig(a_ptr="*u8", b_ptr="*u8", as_ptr="*u8", bs_ptr="*u8", c_ptr="*fp16", M="i32", N="i32", K="i32"),
     dict(BM=128, BN=128, BK=128, A_FMT="e4m3", B_FMT="e2m1"), {"num_warps": 4})
_add("gluon_matmul_2cta", g_matmul_2cta, _mm, dict(BM=256, BN=128, BK=64), {"num_warps": 4, "num_ctas": 2})
_rt = _sig(x_ptr="*fp32", y_ptr="*fp32", rmax_ptr="*fp32", rmin_ptr="*fp32")
_add("gluon_tmem_roundtrip_sm100", g_tmem_roundtrip, _rt, dict(BM=128, BN=64, USE_RED=False), {"num_warps": 4})
_add("gluon_tmem_ldred_sm103", g_tmem_roundtrip, _rt, dict(BM=128, BN=64, USE_RED=True), {"num_warps": 4}, arch=103)
