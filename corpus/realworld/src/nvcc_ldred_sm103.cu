// tcgen05.ld.red (TMEM load fused with a per-lane min/max over the loaded columns), PTX ISA 8.8+,
// arch-specific sm_103a / sm_110a only. Inline PTX, and the CCCL wrapper for the same form.
// nvcc -arch=sm_103a -ptx nvcc_ldred_sm103.cu
#include <cstdint>
#include <cuda/ptx>

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__global__ void __launch_bounds__(128) tmem_rowmax(const float* __restrict__ in, float* __restrict__ rowmax,
                                                   float* __restrict__ rowmin, int* __restrict__ imax) {
  __shared__ uint32_t slot;
  const int warp = threadIdx.x / 32;
  if (warp == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;" :: "r"(smem_u32(&slot)) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  }
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t lane = slot + ((warp * 32u) << 16);
  uint32_t v[8];
  for (int i = 0; i < 8; ++i) v[i] = __float_as_uint(in[threadIdx.x * 8 + i]);
  asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8};"
               :: "r"(lane), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]), "r"(v[4]), "r"(v[5]), "r"(v[6]), "r"(v[7])
               : "memory");
  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
  float mx, mn;
  uint32_t r[8], q[8];
  asm volatile("tcgen05.ld.red.sync.aligned.32x32b.x8.max.NaN.f32 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, [%9];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]), "=f"(mx)
               : "r"(lane));
  asm volatile("tcgen05.ld.red.sync.aligned.32x32b.x8.min.abs.f32 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, [%9];"
               : "=r"(q[0]), "=r"(q[1]), "=r"(q[2]), "=r"(q[3]), "=r"(q[4]), "=r"(q[5]), "=r"(q[6]), "=r"(q[7]), "=f"(mn)
               : "r"(lane));
  uint32_t s[2];
  int32_t smax;
  asm volatile("tcgen05.ld.red.sync.aligned.16x32bx2.x2.max.s32 {%0, %1}, %2, [%3], 8;"
               : "=r"(s[0]), "=r"(s[1]), "=r"(smax) : "r"(lane));
  float c[4];
  const float cmax = cuda::ptx::tcgen05_ld_red_32x32b(cuda::ptx::op_max, c, lane);
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  rowmax[threadIdx.x] = mx + __uint_as_float(r[0] ^ q[7]) + cmax + __uint_as_float(__float_as_uint(c[0]) ^ s[0]);
  rowmin[threadIdx.x] = mn;
  imax[threadIdx.x] = smax + (int)s[1];
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  if (warp == 0) {
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;" :: "r"(slot) : "memory");
  }
}
