"""Triton (tl.*) kernels compiled ahead-of-time for sm_100 to collect real tcgen05 PTX.

Each entry of KERNELS is (output stem, jit function, signature, constexprs, options, target arch).
No GPU is needed: gen_triton.py calls triton.compile(ASTSource(...), target=GPUTarget("cuda", arch, 32)).
"""
import triton
import triton.language as tl


@triton.jit
def matmul_tma(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               STAGES: tl.constexpr):
    # C[M, N] = A[M, K] @ B[N, K]^T with TMA descriptors and a software pipeline.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    dt = c_ptr.dtype.element_ty
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=STAGES):
        a = a_desc.load([pid_m * BM, k])
        b = b_desc.load([pid_n * BN, k])
        acc = tl.dot(a, b.T, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(dt))


@triton.jit
def matmul_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr):
    # Classic pointer-based matmul with masks (A row-major, B K-major rows), bf16.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_scaled(a_ptr, b_ptr, as_ptr, bs_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  FMT: tl.constexpr, STAGES: tl.constexpr):
    # Block-scaled (MX) matmul: one UE8M0 scale per 32 elements of K, tl.dot_scaled.
    # FMT "e4m3" -> mxfp8 (1 byte/elem); "e2m1" -> mxfp4 (2 elems/byte).
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    PACK: tl.constexpr = 2 if FMT == "e2m1" else 1
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K // PACK], strides=[K // PACK, 1], block_shape=[BM, BK // PACK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K // PACK], strides=[K // PACK, 1], block_shape=[BN, BK // PACK])
    # Scales pre-shuffled into the 5D layout that maps directly onto TMEM (rep_m, rep_k, 32, 4, 4).
    REP_M: tl.constexpr = BM // 128
    REP_N: tl.constexpr = BN // 128
    REP_K: tl.constexpr = BK // 128
    as_desc = tl.make_tensor_descriptor(as_ptr, shape=[M // 128, K // 128, 2, 256], strides=[K // 128 * 512, 512, 256, 1],
                                        block_shape=[REP_M, REP_K, 2, 256])
    bs_desc = tl.make_tensor_descriptor(bs_ptr, shape=[N // 128, K // 128, 2, 256], strides=[K // 128 * 512, 512, 256, 1],
                                        block_shape=[REP_N, REP_K, 2, 256])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK, num_stages=STAGES):
        a = a_desc.load([pid_m * BM, k // PACK])
        b = b_desc.load([pid_n * BN, k // PACK])
        sa = as_desc.load([pid_m * REP_M, k // 128, 0, 0])
        sb = bs_desc.load([pid_n * REP_N, k // 128, 0, 0])
        sa = sa.reshape(REP_M, REP_K, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BM, BK // 32)
        sb = sb.reshape(REP_N, REP_K, 32, 4, 4).trans(0, 3, 2, 1, 4).reshape(BN, BK // 32)
        acc = tl.dot_scaled(a, sa, FMT, b.T, sb, FMT, acc)
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@triton.jit
def matmul_persistent_ws(a_ptr, b_ptr, c_ptr, M, N, K, NUM_SMS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                         BK: tl.constexpr, GROUP_M: tl.constexpr, STAGES: tl.constexpr, WS: tl.constexpr):
    # Persistent, grouped-order matmul; the flattened tile/K loop is warp-specialized when WS.
    start_pid = tl.program_id(0)
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True, warp_specialize=WS, num_stages=STAGES):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BM, ki * BK])
            b = b_desc.load([pid_n * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@triton.jit
def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, Z, H, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
             BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, WS: tl.constexpr, STAGES: tl.constexpr):
    # Flash-attention forward: online softmax, S = Q K^T and O += P V on the tensor cores.
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    y_dim = Z * H * N_CTX
    q_desc = tl.make_tensor_descriptor(q_ptr, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
    k_desc = tl.make_tensor_descriptor(k_ptr, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_N, HEAD_DIM])
    v_desc = tl.make_tensor_descriptor(v_ptr, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_N, HEAD_DIM])
    o_desc = tl.make_tensor_descriptor(o_ptr, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BLOCK_M, HEAD_DIM])
    base = off_hz * N_CTX
    qo_off = base + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    q = q_desc.load([qo_off, 0])
    hi = (start_m + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in tl.range(0, hi, BLOCK_N, warp_specialize=WS, num_stages=STAGES):
        k = k_desc.load([base + start_n, 0]).T
        qk = tl.dot(q, k)
        if CAUSAL:
            offs_n = start_n + tl.arange(0, BLOCK_N)
            qk = qk * qk_scale + tl.where(offs_m[:, None] >= offs_n[None, :], 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = v_desc.load([base + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_desc.store([qo_off, 0], acc.to(o_ptr.dtype.element_ty))


def _mm_sig(dt):
    return {"a_ptr": f"*{dt}", "b_ptr": f"*{dt}", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}


def _const(sig, **kw):
    s = dict(sig)
    for k in kw:
        s[k] = "constexpr"
    return s, kw


KERNELS = []


def _add(stem, fn, sig, consts, options, arch=100):
    s, c = _const(sig, **consts)
    KERNELS.append((stem, fn, s, c, options, arch))


_add("triton_matmul_f16_tma", matmul_tma, _mm_sig("fp16"), dict(BM=128, BN=128, BK=64, STAGES=3), {"num_warps": 4})
_add("triton_matmul_bf16_ptr", matmul_ptr,
     {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32",
      "stride_bk": "i32", "stride_cm": "i32"}, dict(BM=128, BN=256, BK=64), {"num_warps": 8, "num_stages": 3})
_add("triton_matmul_fp8e4m3_tma", matmul_tma, _mm_sig("fp8e4nv"), dict(BM=128, BN=256, BK=128, STAGES=3),
     {"num_warps": 4})
_add("triton_matmul_mxfp8", matmul_scaled,
     {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "as_ptr": "*u8", "bs_ptr": "*u8", "c_ptr": "*fp16", "M": "i32", "N": "i32",
      "K": "i32"}, dict(BM=128, BN=256, BK=128, FMT="e4m3", STAGES=3), {"num_warps": 4})
_add("triton_matmul_mxfp4", matmul_scaled,
     {"a_ptr": "*u8", "b_ptr": "*u8", "as_ptr": "*u8", "bs_ptr": "*u8", "c_ptr": "*fp16", "M": "i32", "N": "i32",
      "K": "i32"}, dict(BM=128, BN=256, BK=256, FMT="e2m1", STAGES=3), {"num_warps": 4})
_add("triton_matmul_persistent_ws", matmul_persistent_ws, _mm_sig("fp16"),
     dict(NUM_SMS=148, BM=128, BN=256, BK=64, GROUP_M=8, STAGES=4, WS=True), {"num_warps": 4})
_attn_sig = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "sm_scale": "fp32", "Z": "i32",
             "H": "i32", "N_CTX": "i32"}
_add("triton_attn_fwd_causal", attn_fwd, _attn_sig,
     dict(HEAD_DIM=128, BLOCK_M=128, BLOCK_N=128, CAUSAL=True, WS=False, STAGES=3), {"num_warps": 8})
_add("triton_attn_fwd_ws", attn_fwd, _attn_sig,
     dict(HEAD_DIM=128, BLOCK_M=128, BLOCK_N=128, CAUSAL=False, WS=True, STAGES=3), {"num_warps": 4})
_add("triton_attn_fwd_d256_causal", attn_fwd, _attn_sig,
     dict(HEAD_DIM=256, BLOCK_M=128, BLOCK_N=64, CAUSAL=True, WS=False, STAGES=2), {"num_warps": 8})
_add("triton_matmul_bf16_ptr_big", matmul_ptr,
     {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32",
      "stride_bk": "i32", "stride_cm": "i32"}, dict(BM=256, BN=256, BK=128), {"num_warps": 8, "num_stages": 3})
