// Device facts for conditions.yaml, printed as YAML lines (indented by nothing; the driver nests
// them): name, compute capability, SM count, L2 size, shared memory, clocks the runtime reports,
// versions, and the SM clock measured from clock64 against globaltimer over 20 ms in one kernel
// (after a 100 ms warm-up on every SM).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 devinfo.cu -o devinfo -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

__global__ void clock_kernel(unsigned long long ns, ClockRec* out) {
  ClockRec cr;
  clock_begin(&cr);
  while (globaltimer() - cr.g0 < ns) {
  }
  clock_end(&cr);
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = cr;
}

int attr(cudaDeviceAttr a) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, 0) != cudaSuccess) return -1;
  return v;
}

}  // namespace

int main() {
  try {
    CK(cudaSetDevice(0));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int rt = 0, drv = 0;
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    printf("device_name: \"%s\"\n", p.name);
    printf("compute_capability: \"%d.%d\"\n", p.major, p.minor);
    printf("sm_count: %d\n", p.multiProcessorCount);
    printf("l2_bytes: %d\n", p.l2CacheSize);
    printf("l2_persisting_max_bytes: %d\n", p.persistingL2CacheMaxSize);
    printf("global_memory_bytes: %zu\n", p.totalGlobalMem);
    printf("smem_per_sm_bytes: %zu\n", p.sharedMemPerMultiprocessor);
    printf("smem_per_block_optin_bytes: %zu\n", p.sharedMemPerBlockOptin);
    printf("memory_bus_width_bits: %d\n", p.memoryBusWidth);
    printf("attr_clock_rate_khz: %d\n", attr(cudaDevAttrClockRate));
    printf("attr_memory_clock_rate_khz: %d\n", attr(cudaDevAttrMemoryClockRate));
    printf("cluster_launch: %d\n", attr(cudaDevAttrClusterLaunch));
    printf("cuda_runtime_version: %d\n", rt);
    printf("cuda_driver_api_version: %d\n", drv);
    unsigned* sink;
    ClockRec* rec;
    CK(cudaMalloc(&sink, 64));
    CK(cudaMalloc(&rec, sizeof(ClockRec)));
    warmup_kernel<<<p.multiProcessorCount, 128>>>(100000000ull, sink);
    clock_kernel<<<1, 32>>>(20000000ull, rec);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    ClockRec cr;
    CK(cudaMemcpy(&cr, rec, sizeof(cr), cudaMemcpyDeviceToHost));
    printf("sm_mhz_clock64_vs_globaltimer: %.1f\n", clock_mhz(cr));
    printf("sm_mhz_measure_span_ns: %llu\n", cr.g1 - cr.g0);
  } catch (const std::exception& e) {
    printf("devinfo_error: \"%s\"\n", e.what());
    return 1;
  }
  return 0;
}
