// CUTLASS/CuTe-style inline PTX: TMEM allocation, register<->TMEM moves, waits, fences, dealloc.
// nvcc -arch=sm_100a -ptx nvcc_tmem_alloc_ld_st.cu
#include <cstdint>

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

template <int NCOLS>
__device__ __forceinline__ void tmem_alloc(uint32_t* slot) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;"
               :: "r"(smem_u32(slot)), "n"(NCOLS) : "memory");
}
template <int NCOLS>
__device__ __forceinline__ void tmem_dealloc(uint32_t taddr) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" :: "r"(taddr), "n"(NCOLS) : "memory");
}
__device__ __forceinline__ void tmem_relinquish() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void fence_before() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }
__device__ __forceinline__ void fence_after() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }
__device__ __forceinline__ void wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wait_st() { asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory"); }

__device__ __forceinline__ void st_32x32b_x8(uint32_t taddr, const uint32_t (&v)[8]) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8};"
               :: "r"(taddr), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]), "r"(v[4]), "r"(v[5]), "r"(v[6]), "r"(v[7])
               : "memory");
}
__device__ __forceinline__ void ld_32x32b_x8(uint32_t taddr, uint32_t (&v)[8]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7])
               : "r"(taddr));
}
__device__ __forceinline__ void st_16x64b_x2_unpack(uint32_t taddr, uint32_t a, uint32_t b) {
  asm volatile("tcgen05.st.sync.aligned.16x64b.x2.unpack::16b.b32 [%0], {%1, %2};" :: "r"(taddr), "r"(a), "r"(b)
               : "memory");
}
__device__ __forceinline__ void ld_16x64b_x2_pack(uint32_t taddr, uint32_t& a, uint32_t& b) {
  asm volatile("tcgen05.ld.sync.aligned.16x64b.x2.pack::16b.b32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(taddr));
}
__device__ __forceinline__ void ld_16x256b_x1(uint32_t taddr, uint32_t (&v)[4]) {
  asm volatile("tcgen05.ld.sync.aligned.16x256b.x1.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "r"(taddr));
}
__device__ __forceinline__ void ld_16x128b_x2(uint32_t taddr, uint32_t (&v)[4]) {
  asm volatile("tcgen05.ld.sync.aligned.16x128b.x2.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]) : "r"(taddr));
}
__device__ __forceinline__ void st_16x32bx2_x2(uint32_t taddr, uint32_t a, uint32_t b) {
  asm volatile("tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%0], 16, {%1, %2};" :: "r"(taddr), "r"(a), "r"(b) : "memory");
}
__device__ __forceinline__ void ld_16x32bx2_x2(uint32_t taddr, uint32_t& a, uint32_t& b) {
  asm volatile("tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%0, %1}, [%2], 16;" : "=r"(a), "=r"(b) : "r"(taddr));
}

// 128 threads (4 warps, one per TMEM lane quarter). Warp 0 owns allocation.
__global__ void __launch_bounds__(128) tmem_roundtrip(const uint32_t* __restrict__ in, uint32_t* __restrict__ out) {
  __shared__ uint32_t tmem_base_slot;
  const int warp = threadIdx.x / 32;
  if (warp == 0) {
    tmem_alloc<64>(&tmem_base_slot);
    tmem_relinquish();
  }
  fence_before();
  __syncthreads();
  fence_after();
  const uint32_t base = tmem_base_slot;
  const uint32_t lane_base = base + ((warp * 32u) << 16);  // lane in bits 31..16, column in 15..0

  uint32_t v[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) v[i] = in[threadIdx.x * 8 + i];
  st_32x32b_x8(lane_base, v);
  st_16x64b_x2_unpack(lane_base + 8, v[0], v[1]);
  st_16x32bx2_x2(lane_base + 16, v[2], v[3]);
  wait_st();

  uint32_t w[8], x[4], y[4], a, b, c, d;
  ld_32x32b_x8(lane_base, w);
  ld_16x64b_x2_pack(lane_base + 8, a, b);
  ld_16x256b_x1(lane_base + 24, x);
  ld_16x128b_x2(lane_base + 32, y);
  ld_16x32bx2_x2(lane_base + 16, c, d);
  wait_ld();
#pragma unroll
  for (int i = 0; i < 8; ++i) out[threadIdx.x * 8 + i] = w[i] ^ (i < 4 ? x[i] + y[i] : a + b + c + d);

  fence_before();
  __syncthreads();
  if (warp == 0) {
    fence_after();
    tmem_dealloc<64>(base);
  }
}
