// placement.csv: which SM each CTA of a launch runs on (%smid), and which SMs share a GPC.
// Modes: `plain` (132 or 264 CTAs, shared memory allowing 1 or 2 per SM: how the block scheduler
// deals consecutive CTAs to SMs) and `cluster` (clusters of 2-16 CTAs, one per SM: a cluster's
// CTAs share a GPC, so the SMs a cluster lands on are SMs of one GPC).
// Each CTA spins 20 us so that all of a launch's CTAs are resident together.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a placement.cu -o placement -lcuda
// Usage: placement > placement.csv
#include "calib_common.cuh"

using namespace calib;

__global__ void where(unsigned* out) {
  if (threadIdx.x == 0) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    unsigned rank, cid;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
    out[blockIdx.x * 4 + 0] = smid;
    out[blockIdx.x * 4 + 1] = cid;
    out[blockIdx.x * 4 + 2] = rank;
    out[blockIdx.x * 4 + 3] = (unsigned)(globaltimer() & 0xffffffffu);
    spin_ns(20000);
  }
}

int main() {
  DevInfo d = dev_info();
  unsigned* buf;
  CK(cudaMalloc(&buf, 4096 * 16));
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeMaxDynamicSharedMemorySize, d.smem_optin));
  CK(cudaFuncSetAttribute(where, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  std::vector<unsigned> h(4096 * 4);
  printf("mode,ctas_per_sm,cluster_size,repeat,block,cluster,rank,smid\n");
  auto dump = [&](const char* mode, int cps, int cs, int rep, int grid) {
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(h.data(), buf, grid * 16, cudaMemcpyDeviceToHost));
    for (int b = 0; b < grid; ++b)
      printf("%s,%d,%d,%d,%d,%u,%u,%u\n", mode, cps, cs, rep, b, h[b * 4 + 1], h[b * 4 + 2], h[b * 4 + 0]);
  };
  for (int rep = 0; rep < 2; ++rep)
    for (int cps : {1, 2}) {
      const size_t smem = smem_for_occupancy(1024, cps, d);
      where<<<d.sms * cps, 64, smem>>>(buf);
      CK(cudaGetLastError());
      dump("plain", cps, 1, rep, d.sms * cps);
    }
  for (int rep = 0; rep < 2; ++rep)
    for (int cs : {2, 4, 8, 16}) {
      const size_t smem = smem_for_occupancy(1024, 1, d);
      // as many whole clusters as fit; a size the GPU cannot place is reported and skipped
      int clusters = 0;
      cudaLaunchAttribute attr[1];
      cudaLaunchConfig_t cfg = cluster_config(cs, 64, smem, cs, attr);
      if (cudaOccupancyMaxActiveClusters(&clusters, where, &cfg) != cudaSuccess || clusters == 0) {
        cudaGetLastError();
        fprintf(stderr, "cluster size %d: cannot be placed\n", cs);
        continue;
      }
      const int grid = clusters * cs;
      cfg.gridDim = dim3(grid, 1, 1);
      if (cudaLaunchKernelEx(&cfg, where, buf) != cudaSuccess) {
        fprintf(stderr, "cluster size %d: launch failed: %s\n", cs, cudaGetErrorString(cudaGetLastError()));
        continue;
      }
      dump("cluster", 1, cs, rep, grid);
    }
  return 0;
}
