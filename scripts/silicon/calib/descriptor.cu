// descriptor.csv: descriptor (tensor map) cache behaviour.
//
// K tensor maps (K = 1 .. 256) live in global memory as an array of CUtensorMap (cudaMalloc: 256-byte
// aligned, 128 bytes apart), copied there with cudaMemcpy and passed by pointer. Each describes
// its own 2 KB region of a bf16 buffer; a load is one 1 KB box (64 x 8 bf16). Before each launch an
// ordinary-load kernel makes the data and the maps L2-resident. In the kernel thread 0 issues
// fence.proxy.tensormap::generic.acquire.sys on every map (the documented pattern for maps written
// by cudaMemcpy), optionally prefetch.tensormap on every map, waits 20 us, then:
//   variant rr        loads round-robin over the K maps, one at a time: issue-to-completion cycles
//                     of every load (the first K are each map's first use)
//   variant rr_burst  the same order, 16 loads in flight on one mbarrier: cycles per group / 16
//   variant first_*   one map, first use then second use, as a __grid_constant__ parameter (param)
//                     or in global memory (global), with or without prefetch.tensormap
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 descriptor.cu -o descriptor -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr int kBox = 1024;        // bytes per load
constexpr int kRegion = 4096;     // bytes between the maps' base addresses
constexpr int kBurst = 16;        // loads in flight in rr_burst
constexpr int kMaxLoads = 4096;

struct DescPoint {
  std::string variant;  // rr | rr_burst | first_param | first_global
  int K = 1;            // a power of two (the kernel picks map i & (K - 1))
  int prefetch = 0;
  int loads() const {
    if (variant == "rr") return std::max(8 * K, 256);
    if (variant == "rr_burst") return std::max(8 * K, 64 * kBurst);
    return 2;
  }
};

std::vector<DescPoint> make_points() {
  std::vector<DescPoint> v;
  for (int pf : {0, 1})
    for (int K = 1; K <= 256; K *= 2) v.push_back({"rr", K, pf});
  for (int K = 1; K <= 256; K *= 2) v.push_back({"rr_burst", K, 0});
  for (const char* var : {"first_param", "first_global"})
    for (int pf : {0, 1}) v.push_back({var, 1, pf});
  return v;
}

struct DescArgs {
  int K, loads, prefetch, burst;
  unsigned long long timeout_cycles;
  unsigned* cycles;  // issue-to-completion, per load (rr, first_*) or per group (rr_burst)
  unsigned* issue;   // issue alone (clock64 before and after the issuing instruction(s))
  unsigned* ok;
  ClockRec* clk;
};

// Everything after the maps are acquired (and perhaps prefetched): the timed loads.
__device__ void timed_loads(const CUtensorMap* maps, bool param_map, const DescArgs& a, unsigned dst, unsigned mb) {
  unsigned done = 0;
  if (!a.burst) {
    for (int i = 0; i < a.loads; ++i) {
      unsigned long long m = reinterpret_cast<unsigned long long>(param_map ? maps : maps + (i & (a.K - 1)));
      asm volatile("" : "+l"(m));  // address ready before the clock is read
      mbar_arrive_expect(mb, kBox);
      long long t0 = clock64();
      tma_load_2d(dst, reinterpret_cast<const void*>(m), 0, 0, mb);
      long long ti = clock64();
      bool ok = mbar_wait(mb, i & 1, a.timeout_cycles);
      long long t1 = clock64();
      if (!ok) break;
      a.cycles[i] = (unsigned)(t1 - t0);
      a.issue[i] = (unsigned)(ti - t0);
      ++done;
    }
  } else {
    const int groups = a.loads / kBurst;
    for (int g = 0; g < groups; ++g) {
      mbar_arrive_expect(mb, kBox * kBurst);
      long long t0 = clock64();
#pragma unroll
      for (int q = 0; q < kBurst; ++q) tma_load_2d(dst + q * kBox, maps + ((g * kBurst + q) & (a.K - 1)), 0, 0, mb);
      long long ti = clock64();
      bool ok = mbar_wait(mb, g & 1, a.timeout_cycles);
      long long t1 = clock64();
      if (!ok) break;
      a.cycles[g] = (unsigned)(t1 - t0);
      a.issue[g] = (unsigned)(ti - t0);
      ++done;
    }
  }
  *a.ok = done;
}

__device__ void finish_clock(ClockRec& cr, ClockRec* out) {
  while (globaltimer() - cr.g0 < 100000ull) {
  }
  clock_end(&cr);
  *out = cr;
}

__global__ void desc_global(const CUtensorMap* maps, DescArgs a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x != 0) return;
  ClockRec cr;
  clock_begin(&cr);
  const unsigned dst = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned mb = smem_u32(&bar);
  mbar_init(mb, 1);
  mbar_init_fence();
  for (int k = 0; k < a.K; ++k) tensormap_acquire(maps + k);
  if (a.prefetch)
    for (int k = 0; k < a.K; ++k) tensormap_prefetch(maps + k);
  spin_ns(20000);
  timed_loads(maps, false, a, dst, mb);
  finish_clock(cr, a.clk);
}

__global__ void desc_param(const __grid_constant__ CUtensorMap map, DescArgs a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x != 0) return;
  ClockRec cr;
  clock_begin(&cr);
  const unsigned dst = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned mb = smem_u32(&bar);
  mbar_init(mb, 1);
  mbar_init_fence();
  if (a.prefetch) tensormap_prefetch(&map);
  spin_ns(20000);
  timed_loads(&map, true, a, dst, mb);
  finish_clock(cr, a.clk);
}

struct State {
  DevInfo dev;
  std::vector<DescPoint> pts;
  unsigned char* data = nullptr;
  CUtensorMap* maps = nullptr;
  unsigned* cycles = nullptr;
  unsigned* issue = nullptr;
  unsigned* ok = nullptr;
  unsigned* sink = nullptr;
  ClockRec* clk = nullptr;
  std::vector<CUtensorMap> host_maps;
};
State S;

Result measure(size_t idx, int reps) {
  const DescPoint& p = S.pts[idx];
  const bool burst = p.variant == "rr_burst";
  const bool param = p.variant == "first_param";
  const size_t smem = kBox * kBurst + 1024;
  DescArgs a = {};
  a.K = p.K;
  a.loads = p.loads();
  a.prefetch = p.prefetch;
  a.burst = burst;
  a.timeout_cycles = kWaitShort;
  a.cycles = S.cycles;
  a.issue = S.issue;
  a.ok = S.ok;
  a.clk = S.clk;
  const int samples = burst ? a.loads / kBurst : a.loads;
  const int first_round = burst ? (p.K + kBurst - 1) / kBurst : p.K;
  std::vector<double> first, first_round_mean, steady, issue, mhz;
  int bad = 0;
  for (int r = 0; r < reps; ++r) {
    // data and maps L2-resident, through ordinary loads only
    touch_kernel<<<64, 256>>>(reinterpret_cast<const uint4*>(S.data), (size_t)p.K * kRegion / 16, S.sink);
    touch_kernel<<<1, 256>>>(reinterpret_cast<const uint4*>(S.maps), (size_t)p.K * sizeof(CUtensorMap) / 16, S.sink);
    CK(cudaMemset(S.ok, 0, sizeof(unsigned)));
    if (param)
      desc_param<<<1, 32, smem>>>(S.host_maps[0], a);
    else
      desc_global<<<1, 32, smem>>>(S.maps, a);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned ok = 0;
    CK(cudaMemcpy(&ok, S.ok, sizeof(ok), cudaMemcpyDeviceToHost));
    std::vector<unsigned> c(samples);
    std::vector<unsigned> ci(samples);
    CK(cudaMemcpy(c.data(), S.cycles, samples * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ci.data(), S.issue, samples * sizeof(unsigned), cudaMemcpyDeviceToHost));
    ClockRec cr;
    CK(cudaMemcpy(&cr, S.clk, sizeof(cr), cudaMemcpyDeviceToHost));
    mhz.push_back(clock_mhz(cr));
    if ((int)ok != samples) {
      ++bad;
      continue;
    }
    const double div = burst ? kBurst : 1;
    first.push_back(c[0] / div);
    std::vector<double> fr;
    for (int i = 0; i < std::min(first_round, samples); ++i) fr.push_back(c[i] / div);
    first_round_mean.push_back(mean(fr));
    for (int i = first_round; i < samples; ++i) {
      steady.push_back(c[i] / div);
      issue.push_back(ci[i] / div);
    }
  }
  Result res;
  res.values = {I(a.loads),
                I(burst ? kBurst : 1),
                F(median(first), 1),
                first.empty() ? "" : F(first[0], 1),
                F(median(first_round_mean), 1),
                F(mean(steady), 1),
                F(median(steady), 1),
                F(percentile(steady, 90), 1),
                F(vmin(steady), 1),
                F(median(issue), 1),
                F(median(mhz), 1),
                I(reps),
                I(reps - bad)};
  if (bad) res.status = "timeout(" + I(bad) + "/" + I(reps) + ")";
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  S.pts = make_points();
  Family fam;
  fam.name = "descriptor";
  fam.param_cols = {"variant", "K", "prefetch"};
  fam.result_cols = {"loads",       "in_flight",  "first_cycles", "first_cycles_rep0", "first_round_mean",
                     "mean_cycles", "median_cycles", "p90_cycles", "min_cycles",        "issue_cycles", "sm_mhz",
                     "reps",        "reps_ok"};
  for (auto& p : S.pts) fam.points.push_back({p.variant, I(p.K), I(p.prefetch)});
  fam.default_reps = 7;
  fam.setup = [](int) {
    S.dev = dev_info();
    const int kMaps = 256;
    CK(cudaMalloc(&S.data, (size_t)kMaps * kRegion));
    CK(cudaMemset(S.data, 0x3c, (size_t)kMaps * kRegion));
    CK(cudaMalloc(&S.maps, kMaps * sizeof(CUtensorMap)));  // 256-byte aligned
    CK(cudaMalloc(&S.cycles, kMaxLoads * sizeof(unsigned)));
    CK(cudaMalloc(&S.issue, kMaxLoads * sizeof(unsigned)));
    CK(cudaMalloc(&S.ok, sizeof(unsigned)));
    CK(cudaMalloc(&S.sink, 64));
    CK(cudaMalloc(&S.clk, sizeof(ClockRec)));
    set_max_dyn_smem(desc_global, S.dev);
    set_max_dyn_smem(desc_param, S.dev);
    S.host_maps.resize(kMaps);
    for (int k = 0; k < kMaps; ++k)
      encode_2d(&S.host_maps[k], dtype_of("bf16"), S.data + (size_t)k * kRegion, 128, 16, 128, 8, 0, 0);
    CK(cudaMemcpy(S.maps, S.host_maps.data(), kMaps * sizeof(CUtensorMap), cudaMemcpyHostToDevice));
    warmup_kernel<<<S.dev.sms, 128>>>(50000000ull, S.sink);
    CK(cudaDeviceSynchronize());
  };
  fam.measure = measure;
  return run_points(fam, argc, argv);
}
