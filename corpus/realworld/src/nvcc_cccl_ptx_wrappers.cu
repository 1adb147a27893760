// The same TMEM life cycle written with CCCL's cuda::ptx tcgen05 wrappers (libcu++ <cuda/ptx>).
// nvcc -arch=sm_100a -ptx nvcc_cccl_ptx_wrappers.cu      (cccl headers from the nvidia-cuda-cccl wheel)
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
cccl_tcgen05(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, uint64_t adesc, uint64_t bdesc, uint32_t idesc) {
  __shared__ uint32_t slot;
  __shared__ alignas(8) uint64_t bar;
  const int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) ptx::mbarrier_init(&bar, 1);
  if (warp == 0) {
    ptx::tcgen05_alloc(ptx::cta_group_1, &slot, 128u);
    ptx::tcgen05_relinquish_alloc_permit(ptx::cta_group_1);
  }
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::tcgen05_fence_after_thread_sync();
  const uint32_t t = slot;
  const uint32_t lane = t + ((warp * 32u) << 16);

  uint32_t v[4] = {in[threadIdx.x], in[threadIdx.x + 128], in[threadIdx.x + 256], in[threadIdx.x + 384]};
  ptx::tcgen05_st_32x32b(lane + 64, v);
  ptx::tcgen05_st_16x256b(lane + 96, v);
  ptx::tcgen05_wait_st();
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptx::tcgen05_fence_after_thread_sync();

  if (threadIdx.x == 0) {
    const uint32_t mask[4] = {0, 0, 0, 0};
    // scale_input_d given explicitly (n32_t<N>); without it the overloads are ambiguous in this CCCL version
    ptx::tcgen05_mma(ptx::kind_f16, ptx::cta_group_1, t, adesc, bdesc, idesc, mask, false, ptx::n32_t<0>{});
    ptx::tcgen05_mma(ptx::kind_tf32, ptx::cta_group_1, t, adesc, bdesc, idesc, true, ptx::n32_t<3>{});
    ptx::tcgen05_mma_tmem_a(ptx::kind_f16, ptx::cta_group_1, t, t + 64, bdesc, idesc, true, ptx::n32_t<0>{});
    ptx::tcgen05_cp_128x256b(ptx::cta_group_1, t + 64, adesc);
    ptx::tcgen05_cp_32x128b_warpx4(ptx::cta_group_1, t + 96, bdesc);
    ptx::tcgen05_shift_down(ptx::cta_group_1, t);
    ptx::tcgen05_commit(ptx::cta_group_1, &bar);
    ptx::tcgen05_commit_multicast(ptx::cta_group_1, &bar, (uint16_t)0x1);
  }
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {
  }
  ptx::tcgen05_fence_after_thread_sync();
  uint32_t r[8];
  ptx::tcgen05_ld_32x32b(r, lane);
  uint32_t p[2];
  ptx::tcgen05_ld_16x64b_pack_16b(p, lane + 32);
  ptx::tcgen05_wait_ld();
  uint32_t acc = p[0] ^ p[1];
  for (int i = 0; i < 8; ++i) acc += r[i];
  out[threadIdx.x] = acc;
  ptx::tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp == 0) {
    ptx::tcgen05_fence_after_thread_sync();
    ptx::tcgen05_dealloc(ptx::cta_group_1, t, 128u);
  }
}

// Exclusive TMEM allocation (PTX ISA 9.4 form in CCCL), cta_group::2 variants, commit multicast.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128)
cccl_tcgen05_exclusive(uint32_t* __restrict__ out) {
  __shared__ uint32_t slot;
  __shared__ alignas(8) uint64_t bar;
  const int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) ptx::mbarrier_init(&bar, 1);
  if (warp == 0) {
    ptx::tcgen05_alloc_exclusive(ptx::cta_group_2, &slot, 64u);
  }
  ptx::tcgen05_fence_before_thread_sync();
  ptx::barrier_cluster_arrive();
  ptx::barrier_cluster_wait();
  ptx::tcgen05_fence_after_thread_sync();
  const uint32_t t = slot;
  if (threadIdx.x == 0) {
    ptx::tcgen05_commit_multicast(ptx::cta_group_2, &bar, (uint16_t)0x3);  // the ::32b mask form is rejected by ptxas 13.5 for sm_100a
  }
  out[threadIdx.x] = t;
  ptx::tcgen05_fence_before_thread_sync();
  ptx::barrier_cluster_arrive();
  ptx::barrier_cluster_wait();
  if (warp == 0) {
    ptx::tcgen05_fence_after_thread_sync();
    ptx::tcgen05_dealloc_exclusive(ptx::cta_group_2, t, 64u);
    ptx::tcgen05_relinquish_alloc_permit(ptx::cta_group_2);
  }
}
