// prologue.csv: where a CTA's time goes between its start and its first TMA load. space.cu's
// tile times (group startup) show every CTA's first load issued 1.1-1.3 us after the first CTA
// started, which a single pass over a small tensor pays on top of its rate. This kernel is
// space.cu's stream (the same prologue: mbarrier init and fence, __syncthreads, the tile walk's
// set-up, then thread 0 produces and thread 32 consumes) with clock64 stamps at each step, run in
// four ways to tell what the time is:
//   cold    after an unrelated 256 MB read (the kernel's code and the tensor evicted from the L2)
//   again   the same kernel launched again at once (its code in the L2, maybe in the SM's caches)
//   other   the same body under another name right after (a kernel whose code was never run; first
//           repetition only)
//   waves   cold, with twice as many CTAs as fit (a later wave's CTA starts on an SM that ran one)
// One row per CTA: its SM, its start (ns after the launch's first), and the cycles from its start
// to: after the atomic that records the start, after the mbarrier init and fence, after
// __syncthreads, after the walk's set-up, the first load's issue, its data in, the CTA's end.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a prologue.cu -o prologue -lcuda
// usage: prologue OUT.csv [reps]
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr int kStages = 4;
constexpr int kStamps = 8;  // start (globaltimer), then 7 clock64 offsets; smid in the 9th slot
constexpr size_t kTensorBytes = 16ull << 20;
constexpr size_t kScrubBytes = 256ull << 20;
constexpr unsigned kRowBytes = 8192, kInner = 128, kRows = 64;

struct PrArgs {
  int tiles_x, tiles_y;
  long long total;
  unsigned tile_bytes, stage_stride;
  unsigned long long* rec;   // [cta][kStamps + 1]
  unsigned long long* first;  // the launch's first start (atomicMin)
  unsigned* sink;
};

__device__ __forceinline__ void probe_body(const CUtensorMap* map, const PrArgs& a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[kStages], empty[kStages];
  __shared__ long long c_start;
  const unsigned raw = smem_u32(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;
  const unsigned char* base_ptr = smem_raw + (base - raw);
  unsigned long long* r = a.rec + (size_t)blockIdx.x * (kStamps + 1);
  if (threadIdx.x == 0) {
    const long long c0 = clock64();
    const unsigned long long g0 = globaltimer();
    atomicMin(a.first, g0);
    const long long c1 = clock64();
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    mbar_init_fence();
    const long long c2 = clock64();
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    c_start = c0;
    r[0] = g0;
    r[1] = c1 - c0;
    r[2] = c2 - c0;
    r[kStamps] = smid;
  }
  __syncthreads();
  const long long c3 = clock64();
  const long long cnt = strided_count(blockIdx.x, gridDim.x, a.total);
  TileWalk w;
  w.init(blockIdx.x, gridDim.x, a.tiles_x, a.tiles_y);
  const long long c4 = clock64();
  if (threadIdx.x == 0) {
    r[3] = c3 - c_start;
    r[4] = c4 - c_start;
    int s = 0;
    unsigned k = 0;
    for (long long j = 0; j < cnt; ++j) {
      if (j >= kStages && !mbar_wait(smem_u32(&empty[s]), (k - 1) & 1, kWaitLong)) break;
      mbar_arrive_expect(smem_u32(&full[s]), a.tile_bytes);
      if (j == 0) r[5] = clock64() - c_start;
      tma_load_2d(base + (unsigned)s * a.stage_stride, map, w.a * (int)(kInner / 2), w.b * (int)kRows,
                  smem_u32(&full[s]));
      w.next();
      if (++s == kStages) {
        s = 0;
        ++k;
      }
    }
  } else if (threadIdx.x == 32) {
    unsigned acc = 0;
    int s = 0;
    unsigned k = 0;
    for (long long j = 0; j < cnt; ++j) {
      if (!mbar_wait(smem_u32(&full[s]), k & 1, kWaitLong)) break;
      if (j == 0) r[6] = clock64() - c_start;
      acc += *reinterpret_cast<const volatile unsigned*>(base_ptr + (size_t)s * a.stage_stride + 4 * (j & 7));
      mbar_arrive(smem_u32(&empty[s]));
      if (++s == kStages) {
        s = 0;
        ++k;
      }
    }
    a.sink[blockIdx.x] = acc;
    r[7] = clock64() - c_start;
  }
}

__global__ void __launch_bounds__(64) pr_stream(const __grid_constant__ CUtensorMap map, PrArgs a) {
  probe_body(&map, a);
}
// The same body under another name: code no launch has fetched yet.
__global__ void __launch_bounds__(64) pr_other(const __grid_constant__ CUtensorMap map, PrArgs a) {
  probe_body(&map, a);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: prologue OUT.csv [reps]\n");
    return 2;
  }
  const int reps = argc > 2 ? atoi(argv[2]) : 5;
  try {
    CK(cudaSetDevice(0));
    const DevInfo dev = dev_info();
    void *tensor = nullptr, *scrub = nullptr;
    unsigned *sink = nullptr;
    unsigned long long *rec = nullptr, *first = nullptr;
    CK(cudaMalloc(&tensor, kTensorBytes));
    CK(cudaMalloc(&scrub, kScrubBytes));
    CK(cudaMemset(tensor, 1, kTensorBytes));
    CK(cudaMemset(scrub, 2, kScrubBytes));
    CK(cudaMalloc(&sink, 1 << 20));
    CK(cudaMalloc(&rec, 4096 * (kStamps + 1) * sizeof(unsigned long long)));
    CK(cudaMalloc(&first, sizeof(unsigned long long)));
    alignas(64) CUtensorMap map;
    encode_2d(&map, dtype_of("bf16"), tensor, kRowBytes, kTensorBytes / kRowBytes, kInner, kRows, (int)kInner, 0);
    PrArgs a;
    a.tiles_x = kRowBytes / kInner;
    a.tiles_y = (int)(kTensorBytes / kRowBytes / kRows);
    a.total = (long long)a.tiles_x * a.tiles_y;
    a.tile_bytes = kInner * kRows;
    a.stage_stride = (a.tile_bytes + 1023u) & ~1023u;
    a.rec = rec;
    a.first = first;
    a.sink = sink;
    // One CTA per SM, as space.cu forces it: more shared memory than half an SM's.
    const size_t smem = (size_t)dev.smem_per_sm / 2 + 4096;
    CK(cudaFuncSetAttribute(pr_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CK(cudaFuncSetAttribute(pr_other, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    warmup_kernel<<<dev.sms, 128>>>(50000000ull, sink);
    CK(cudaDeviceSynchronize());
    FILE* f = fopen(argv[1], "w");
    if (!f) throw std::runtime_error(std::string("cannot write ") + argv[1]);
    fprintf(f, "rep,variant,grid,cta,smid,start_ns,atomic_cycles,init_cycles,sync_cycles,walk_cycles,issue_cycles,"
               "data_cycles,end_cycles\n");
    auto launch = [&](int rep, const char* variant, bool other, unsigned grid) {
      const unsigned long long init = ~0ull;
      CK(cudaMemcpy(first, &init, sizeof(init), cudaMemcpyHostToDevice));
      if (other)
        pr_other<<<grid, 64, smem>>>(map, a);
      else
        pr_stream<<<grid, 64, smem>>>(map, a);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      std::vector<unsigned long long> h((size_t)grid * (kStamps + 1));
      unsigned long long t0 = 0;
      CK(cudaMemcpy(h.data(), rec, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(&t0, first, sizeof(t0), cudaMemcpyDeviceToHost));
      std::vector<double> issue;
      for (unsigned c = 0; c < grid; ++c) {
        const unsigned long long* r = &h[(size_t)c * (kStamps + 1)];
        fprintf(f, "%d,%s,%u,%u,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu\n", rep, variant, grid, c, r[kStamps],
                r[0] - t0, r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
        issue.push_back((double)r[5]);
      }
      printf("rep %d %-6s grid %u: first issue median %.0f cycles after the CTA's start (min %.0f, max %.0f)\n", rep,
             variant, grid, median(issue), vmin(issue), vmax(issue));
    };
    for (int rep = 0; rep < reps; ++rep) {
      touch_kernel<<<dev.sms * 4, 256>>>(reinterpret_cast<const uint4*>(scrub), kScrubBytes / 16, sink);
      CK(cudaDeviceSynchronize());
      launch(rep, "cold", false, dev.sms);
      launch(rep, "again", false, dev.sms);
      if (rep == 0) launch(rep, "other", true, dev.sms);  // pr_other's code is new only on its first launch
      touch_kernel<<<dev.sms * 4, 256>>>(reinterpret_cast<const uint4*>(scrub), kScrubBytes / 16, sink);
      CK(cudaDeviceSynchronize());
      launch(rep, "waves", false, 2 * dev.sms);
    }
    fclose(f);
    return 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "prologue: %s\n", e.what());
    return 3;
  }
}
