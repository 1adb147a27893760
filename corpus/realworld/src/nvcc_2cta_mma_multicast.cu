// CUTLASS-style 2-CTA (CTA pair) tcgen05 MMA: cluster of 2, cta_group::2 alloc/mma/commit-multicast/dealloc.
#include <cuda_fp16.h>
// nvcc -arch=sm_100a -ptx nvcc_2cta_mma_multicast.cu
#include <cstdint>

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(smem_u32(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t phase) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tWAIT_%=:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n\t"
      "@!p bra WAIT_%=;\n\t}" :: "r"(smem_u32(bar)), "r"(phase) : "memory");
}
// Shared-memory matrix descriptor (K-major, 128B swizzle), as CUTLASS's UMMA::SmemDescriptor builds it.
__device__ __forceinline__ uint64_t make_sdesc(const void* smem) {
  uint64_t addr = (smem_u32(smem) & 0x3FFFF) >> 4;
  uint64_t lbo = 1, sbo = (1024 >> 4);
  return addr | (lbo << 16) | (sbo << 32) | (1ull << 46) | (2ull << 61);
}

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
mma_2cta(const __half2* __restrict__ a_g, const __half2* __restrict__ b_g, float* __restrict__ d_g, int k_tiles) {
  __shared__ alignas(1024) __half2 sA[128 * 32];  // this CTA's half of M=256 x K=64
  __shared__ alignas(1024) __half2 sB[128 * 32];  // this CTA's half of N=256 x K=64
  __shared__ alignas(8) uint64_t mma_bar;
  __shared__ uint32_t tmem_slot;
  const uint32_t rank = cluster_ctarank();
  const int warp = threadIdx.x / 32;

  if (threadIdx.x == 0) {
    mbar_init(&mma_bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], 256;" :: "r"(smem_u32(&tmem_slot))
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
  }
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  cluster_sync();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t tmem_d = tmem_slot;

  // idesc: kind::f16, A/B f16, D f32, K-major A and B, N=256, M=256 (CTA pair)
  const uint32_t idesc = (1u << 4) | (0u << 7) | (0u << 10) | ((256u >> 3) << 17) | ((256u >> 4) << 24);
  for (int kt = 0; kt < k_tiles; ++kt) {
    for (int i = threadIdx.x; i < 128 * 32; i += blockDim.x) {
      sA[i] = a_g[(size_t)kt * 256 * 32 + rank * 128 * 32 + i];
      sB[i] = b_g[(size_t)kt * 256 * 32 + rank * 128 * 32 + i];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    cluster_sync();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    if (rank == 0 && threadIdx.x == 0) {  // the lead CTA issues for the pair
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        uint64_t da = make_sdesc(sA) + (k * 32 >> 4);
        uint64_t db = make_sdesc(sB) + (k * 32 >> 4);
        uint32_t acc = (kt > 0 || k > 0);
        asm volatile(
            "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %4, 0;\n\t"
            "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n\t}"
            :: "r"(tmem_d), "l"(da), "l"(db), "r"(idesc), "r"(acc) : "memory");
      }
      // signal both CTAs of the pair (ctaMask 0b11)
      asm volatile(
          "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;"
          :: "r"(smem_u32(&mma_bar)), "h"((uint16_t)0x3) : "memory");
    }
    mbar_wait(&mma_bar, kt & 1);
  }
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  uint32_t r[4];
  const uint32_t taddr = tmem_d + ((warp * 32u) << 16);
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(taddr));
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  for (int i = 0; i < 4; ++i) d_g[(rank * 128 + threadIdx.x) * 4 + i] = __uint_as_float(r[i]);
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  cluster_sync();
  if (warp == 0) {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, 256;" :: "r"(tmem_d) : "memory");
  }
}
