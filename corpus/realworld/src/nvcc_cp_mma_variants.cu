// CUTLASS-style inline PTX: smem->TMEM copies (tcgen05.cp, all shapes/multicasts, fp4/fp6 decompression),
// block-scaled MMA (mxf8f6f4, mxf4nvf4 block16, mxf4 block32), weight-stationary MMA, A-from-TMEM MMA,
// tcgen05.shift, commit.
// nvcc -arch=sm_100a -ptx nvcc_cp_mma_variants.cu
#include <cstdint>

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ uint64_t sdesc(const void* smem, uint32_t swizzle) {
  uint64_t addr = (smem_u32(smem) & 0x3FFFF) >> 4;
  return addr | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 46) | ((uint64_t)swizzle << 61);
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t phase) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tW_%=:\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t@!p bra W_%=;\n\t}"
      :: "r"(smem_u32(bar)), "r"(phase) : "memory");
}

__global__ void __launch_bounds__(128) cp_and_mma(const uint4* __restrict__ g, float* __restrict__ out, uint32_t idesc_f8,
                                                  uint32_t idesc_f4, uint32_t idesc_f16) {
  __shared__ alignas(1024) uint4 sA[1024];   // 16 KiB
  __shared__ alignas(1024) uint4 sB[1024];   // 16 KiB
  __shared__ alignas(1024) uint4 sS[256];    // scale factors / small tiles, 4 KiB
  __shared__ alignas(8) uint64_t bar;
  __shared__ uint32_t slot;
  const int warp = threadIdx.x / 32;
  for (int i = threadIdx.x; i < 1024; i += 128) { sA[i] = g[i]; sB[i] = g[1024 + i]; }
  for (int i = threadIdx.x; i < 256; i += 128) sS[i] = g[2048 + i];
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem_u32(&bar)) : "memory");
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 512;" :: "r"(smem_u32(&slot)) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t t = slot;
  const uint32_t tD = t, tA = t + 128, tSFA = t + 256, tSFB = t + 264, tX = t + 384;

  if (threadIdx.x == 0) {
    const uint64_t dA = sdesc(sA, 2), dB = sdesc(sB, 2), dS = sdesc(sS, 0);
    // smem -> TMEM copies
    asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;" :: "r"(tA), "l"(dA) : "memory");
    asm volatile("tcgen05.cp.cta_group::1.128x128b [%0], %1;" :: "r"(tX), "l"(dS) : "memory");
    asm volatile("tcgen05.cp.cta_group::1.4x256b [%0], %1;" :: "r"(tX + 8), "l"(dS) : "memory");
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" :: "r"(tSFA), "l"(dS) : "memory");
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" :: "r"(tSFB), "l"(dS + 32) : "memory");
    asm volatile("tcgen05.cp.cta_group::1.64x128b.warpx2::02_13 [%0], %1;" :: "r"(tX + 16), "l"(dS) : "memory");
    asm volatile("tcgen05.cp.cta_group::1.64x128b.warpx2::01_23 [%0], %1;" :: "r"(tX + 20), "l"(dS) : "memory");
    asm volatile("tcgen05.cp.cta_group::1.128x256b.b8x16.b4x16_p64 [%0], %1;" :: "r"(tX + 32), "l"(dB) : "memory");
    asm volatile("tcgen05.cp.cta_group::1.128x128b.b8x16.b6x16_p32 [%0], %1;" :: "r"(tX + 48), "l"(dB) : "memory");
    // dense f16 MMA with A from TMEM, and with A from smem plus an explicit disable-output-lane mask
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
                 "tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n\t}"
                 :: "r"(tD), "r"(tA), "l"(dB), "r"(idesc_f16), "r"(0) : "memory");
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %8, 0;\n\t"
                 "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, {%4, %5, %6, %7}, p;\n\t}"
                 :: "r"(tD), "l"(dA), "l"(dB), "r"(idesc_f16), "r"(0), "r"(0), "r"(0), "r"(0xffff0000u), "r"(1)
                 : "memory");
    // block-scaled MMAs, scale factors in TMEM
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %6, 0;\n\t"
                 "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X [%0], %1, %2, %3, [%4], [%5], p;\n\t}"
                 :: "r"(tD), "l"(dA), "l"(dB), "r"(idesc_f8), "r"(tSFA), "r"(tSFB), "r"(1) : "memory");
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %6, 0;\n\t"
                 "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 [%0], %1, %2, %3, [%4], [%5], p;\n\t}"
                 :: "r"(tD), "l"(dA), "l"(dB), "r"(idesc_f4), "r"(tSFA), "r"(tSFB), "r"(1) : "memory");
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %6, 0;\n\t"
                 "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 [%0], %1, %2, %3, [%4], [%5], p;\n\t}"
                 :: "r"(tD), "l"(dA), "l"(dB), "r"(idesc_f4), "r"(tSFA), "r"(tSFB), "r"(1) : "memory");
    // f8f6f4 with the collector: fill then lastuse
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
                 "tcgen05.mma.cta_group::1.kind::f8f6f4.collector::a::fill [%0], %1, %2, %3, p;\n\t"
                 "tcgen05.mma.cta_group::1.kind::f8f6f4.collector::a::lastuse [%0], %1, %2, %3, p;\n\t}"
                 :: "r"(tD), "l"(dA), "l"(dB), "r"(idesc_f8), "r"(1) : "memory");
    // weight-stationary MMA
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
                 "tcgen05.mma.ws.cta_group::1.kind::f16.collector::b0::fill [%0], %1, %2, %3, p;\n\t"
                 "tcgen05.mma.ws.cta_group::1.kind::f16.collector::b0::use [%0], %1, %2, %3, p;\n\t}"
                 :: "r"(tD + 64), "l"(dA), "l"(dB), "r"(idesc_f16), "r"(1) : "memory");
    // shift the accumulator rows down by one
    asm volatile("tcgen05.shift.cta_group::1.down [%0];" :: "r"(tD) : "memory");
    asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
                 :: "r"(smem_u32(&bar)) : "memory");
  }
  mbar_wait(&bar, 0);
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  uint32_t r[2];
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x2.b32 {%0, %1}, [%2];"
               : "=r"(r[0]), "=r"(r[1]) : "r"(tD + ((warp * 32u) << 16)));
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  out[threadIdx.x * 2] = __uint_as_float(r[0]);
  out[threadIdx.x * 2 + 1] = __uint_as_float(r[1]);
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  if (warp == 0) {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 512;" :: "r"(t) : "memory");
  }
}
