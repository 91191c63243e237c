// descriptor_space.csv: the descriptor (tensor map) cache over K maps used round robin, K = 1 to
// 1024, with the maps in global, constant or kernel-parameter space, one load at a time or 8 in
// flight, with no prefetch, prefetch.tensormap of every map up front, or of the next map only.
//
// Each map describes its own 4 KB region of a bf16 buffer; a load is one 1 KB box (64 x 8 bf16)
// of it. Before each launch an ordinary-load kernel makes the data and the global maps
// L2-resident. One thread: (global maps) fence.proxy.tensormap acquire on every map, then
//   prefetch all   prefetch.tensormap on every map, then 20 us of wait
//   prefetch next  before load i is issued, prefetch.tensormap of the map of load i + 1
// then `loads` loads, map i % K for load i:
//   mode serial     one in flight: issue-to-completion cycles of each load
//   mode pipelined  8 in flight (a ring of 8 mbarriers): cycles between completions
// Reported over the loads after the first round (the first K), pooled over the launches.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a descriptor_space.cu -o descriptor_space -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr int kBox = 1024;
constexpr int kRegion = 4096;
constexpr int kInFlight = 8;
constexpr int kMaxMaps = 1024;
constexpr int kConstMaps = 384;  // 48 KB of the 64 KB constant bank
constexpr int kParamMaps = 128;  // 16 KB of the 32 KB parameter space
constexpr int kMaxLoads = 8192;

struct MapPack {
  CUtensorMap m[kParamMaps];
};
__constant__ CUtensorMap g_const_maps[kConstMaps];

enum Where { kGlobal = 0, kConst = 1, kParam = 2 };
enum Prefetch { kNone = 0, kAll = 1, kNext = 2 };
const char* where_name(int w) { return w == kGlobal ? "global" : w == kConst ? "const" : "param"; }
const char* prefetch_name(int p) { return p == kNone ? "none" : p == kAll ? "all" : "next"; }

struct DsPoint {
  int where = kGlobal;
  bool pipelined = false;
  int K = 1;
  int prefetch = kNone;
  int loads() const { return std::min(kMaxLoads, std::max(8 * K, 512)); }
};

std::vector<DsPoint> make_points() {
  std::vector<DsPoint> v;
  const int ks[] = {1, 2, 4, 8, 9, 12, 16, 24, 32, 64, 128, 256, 384, 512, 768, 1024};
  for (int w : {kGlobal, kConst, kParam})
    for (bool pipe : {false, true})
      for (int pf : {kNone, kAll, kNext})
        for (int K : ks) {
          if ((w == kConst && K > kConstMaps) || (w == kParam && K > kParamMaps)) continue;
          v.push_back({w, pipe, K, pf});
        }
  return v;
}

struct DsArgs {
  int K, loads, prefetch, pipelined, where;
  unsigned long long timeout_cycles;
  unsigned* cycles;
  unsigned* ok;
  ClockRec* clk;
};

__device__ __forceinline__ const CUtensorMap* map_at(const CUtensorMap* maps, int where, int i) {
  return where == kConst ? &g_const_maps[i] : maps + i;
}

__device__ void ds_body(const CUtensorMap* maps, const DsArgs& a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long bar[kInFlight];
  ClockRec cr;
  clock_begin(&cr);
  const unsigned dst = (smem_u32(smem_raw) + 1023u) & ~1023u;
  for (int q = 0; q < kInFlight; ++q) mbar_init(smem_u32(&bar[q]), 1);
  mbar_init_fence();
  if (a.where == kGlobal)
    for (int k = 0; k < a.K; ++k) tensormap_acquire(maps + k);
  if (a.prefetch == kAll)
    for (int k = 0; k < a.K; ++k) tensormap_prefetch(map_at(maps, a.where, k));
  spin_ns(20000);
  unsigned done = 0;
  int mi = 0;  // map of the next load (i % K without a division)
  if (!a.pipelined) {
    const unsigned mb = smem_u32(&bar[0]);
    for (int i = 0; i < a.loads; ++i) {
      const CUtensorMap* m = map_at(maps, a.where, mi);
      if (++mi == a.K) mi = 0;
      const CUtensorMap* next = map_at(maps, a.where, mi);
      asm volatile("" : "+l"(m), "+l"(next));
      mbar_arrive_expect(mb, kBox);
      const long long t0 = clock64();
      tma_load_2d(dst, m, 0, 0, mb);
      if (a.prefetch == kNext) tensormap_prefetch(next);
      const bool ok = mbar_wait(mb, i & 1, a.timeout_cycles);
      const long long t1 = clock64();
      if (!ok) break;
      a.cycles[i] = (unsigned)(t1 - t0);
      ++done;
    }
  } else {
    long long last = clock64();
    for (int i = 0; i < a.loads + kInFlight; ++i) {
      const int q = i % kInFlight;
      if (i >= kInFlight) {
        const int j = i - kInFlight;  // the load whose stage this is
        if (!mbar_wait(smem_u32(&bar[q]), (j / kInFlight) & 1, a.timeout_cycles)) break;
        const long long t = clock64();
        a.cycles[j] = (unsigned)(t - last);
        last = t;
        ++done;
      }
      if (i < a.loads) {
        const CUtensorMap* m = map_at(maps, a.where, mi);
        if (++mi == a.K) mi = 0;
        mbar_arrive_expect(smem_u32(&bar[q]), kBox);
        tma_load_2d(dst + q * kBox, m, 0, 0, smem_u32(&bar[q]));
        if (a.prefetch == kNext) tensormap_prefetch(map_at(maps, a.where, mi));
      }
    }
  }
  *a.ok = done;
  while (globaltimer() - cr.g0 < 100000ull) {
  }
  clock_end(&cr);
  *a.clk = cr;
}

__global__ void ds_global(const CUtensorMap* maps, DsArgs a) {
  if (threadIdx.x == 0) ds_body(maps, a);
}
__global__ void ds_param(const __grid_constant__ MapPack pack, DsArgs a) {
  if (threadIdx.x == 0) ds_body(pack.m, a);
}

struct State {
  DevInfo dev;
  std::vector<DsPoint> pts;
  unsigned char* data = nullptr;
  CUtensorMap* maps = nullptr;
  unsigned* cycles = nullptr;
  unsigned* ok = nullptr;
  unsigned* sink = nullptr;
  ClockRec* clk = nullptr;
  std::vector<CUtensorMap> host_maps;
  MapPack* pack = nullptr;  // host copy of the parameter maps
};
State S;

Result measure(size_t idx, int reps) {
  const DsPoint& p = S.pts[idx];
  const size_t smem = kBox * kInFlight + 1024;
  DsArgs a = {};
  a.K = p.K;
  a.loads = p.loads();
  a.prefetch = p.prefetch;
  a.pipelined = p.pipelined;
  a.where = p.where;
  a.timeout_cycles = kWaitShort;
  a.cycles = S.cycles;
  a.ok = S.ok;
  a.clk = S.clk;
  std::vector<double> first_round, steady, mhz;
  int bad = 0;
  for (int r = 0; r < reps; ++r) {
    touch_kernel<<<64, 256>>>(reinterpret_cast<const uint4*>(S.data), (size_t)p.K * kRegion / 16, S.sink);
    touch_kernel<<<1, 256>>>(reinterpret_cast<const uint4*>(S.maps), (size_t)p.K * sizeof(CUtensorMap) / 16, S.sink);
    CK(cudaMemset(S.ok, 0, sizeof(unsigned)));
    if (p.where == kParam)
      ds_param<<<1, 32, smem>>>(*S.pack, a);
    else
      ds_global<<<1, 32, smem>>>(S.maps, a);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned ok = 0;
    CK(cudaMemcpy(&ok, S.ok, sizeof(ok), cudaMemcpyDeviceToHost));
    ClockRec cr;
    CK(cudaMemcpy(&cr, S.clk, sizeof(cr), cudaMemcpyDeviceToHost));
    mhz.push_back(clock_mhz(cr));
    if ((int)ok != a.loads) {
      ++bad;
      continue;
    }
    std::vector<unsigned> c(a.loads);
    CK(cudaMemcpy(c.data(), S.cycles, a.loads * sizeof(unsigned), cudaMemcpyDeviceToHost));
    std::vector<double> fr;
    for (int i = 0; i < p.K && i < a.loads; ++i) fr.push_back(c[i]);
    first_round.push_back(mean(fr));
    for (int i = p.K; i < a.loads; ++i) steady.push_back(c[i]);
  }
  Result res;
  res.values = {I(a.loads),           I(p.pipelined ? kInFlight : 1), F(median(first_round), 1),
                F(mean(steady), 1),   F(median(steady), 1),            F(percentile(steady, 90), 1),
                F(vmin(steady), 1),   F(median(mhz), 1),               I(reps),
                I(reps - bad)};
  if (bad) res.status = "timeout(" + I(bad) + "/" + I(reps) + ")";
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  S.pts = make_points();
  Family fam;
  fam.name = "descriptor_space";
  fam.param_cols = {"location", "mode", "K", "prefetch"};
  fam.result_cols = {"loads", "in_flight", "first_round_mean", "mean_cycles", "median_cycles",
                     "p90_cycles", "min_cycles", "sm_mhz", "reps", "reps_ok"};
  for (auto& p : S.pts)
    fam.points.push_back({where_name(p.where), p.pipelined ? "pipelined" : "serial", I(p.K), prefetch_name(p.prefetch)});
  fam.default_reps = 5;
  fam.setup = [](int) {
    S.dev = dev_info();
    CK(cudaMalloc(&S.data, (size_t)kMaxMaps * kRegion));
    CK(cudaMemset(S.data, 0x3c, (size_t)kMaxMaps * kRegion));
    CK(cudaMalloc(&S.maps, kMaxMaps * sizeof(CUtensorMap)));
    CK(cudaMalloc(&S.cycles, kMaxLoads * sizeof(unsigned)));
    CK(cudaMalloc(&S.ok, sizeof(unsigned)));
    CK(cudaMalloc(&S.sink, 64));
    CK(cudaMalloc(&S.clk, sizeof(ClockRec)));
    set_max_dyn_smem(ds_global, S.dev);
    set_max_dyn_smem(ds_param, S.dev);
    S.host_maps.resize(kMaxMaps);
    for (int k = 0; k < kMaxMaps; ++k)
      encode_2d(&S.host_maps[k], dtype_of("bf16"), S.data + (size_t)k * kRegion, 128, 32, 128, 8, 0, 0);
    CK(cudaMemcpy(S.maps, S.host_maps.data(), kMaxMaps * sizeof(CUtensorMap), cudaMemcpyHostToDevice));
    CK(cudaMemcpyToSymbol(g_const_maps, S.host_maps.data(), kConstMaps * sizeof(CUtensorMap)));
    S.pack = new MapPack;
    memcpy(S.pack->m, S.host_maps.data(), sizeof(MapPack));
    warmup_kernel<<<S.dev.sms, 128>>>(50000000ull, S.sink);
    CK(cudaDeviceSynchronize());
  };
  fam.measure = measure;
  return run_points(fam, argc, argv);
}
