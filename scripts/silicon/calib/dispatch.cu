// dispatch.csv, dispatch_raw.csv: how a launch starts its CTAs. Each CTA's thread 0 reads
// %globaltimer and %smid as it starts, spins `work_ns`, and reads %globaltimer again; CTAs per SM
// are forced through the dynamic shared-memory size (1, 2 or 4), grids of 1 to 16 waves.
//
// dispatch.csv, per point: the cudaEvent time of the launch, the span (first start to last end),
// how long the first wave took to start (the last of its CTAs' start after the first's), the mean
// start offset per CTA index within the first wave (least squares: ns per CTA), the start of each
// later wave after the end of the CTA it replaced (median), and an empty kernel's event time.
// dispatch_raw.csv: every CTA of the points with work_ns 5000 (block, SM, start and end in ns
// after the first start).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a dispatch.cu -o dispatch -lcuda
#include <map>

#include "calib_common.cuh"

using namespace calib;

namespace {

struct DpPoint {
  int grid_waves = 1;  // grid = SMs x cps x waves
  int cps = 1;
  int work_ns = 5000;
};

std::vector<DpPoint> make_points() {
  std::vector<DpPoint> v;
  for (int cps : {1, 2, 4})
    for (int waves : {1, 2, 4, 16})
      for (int work : {0, 5000, 50000}) v.push_back({waves, cps, work});
  return v;
}

struct Rec {
  unsigned long long start, end;
  unsigned sm, pad;
};

__global__ void dp_probe(Rec* rec, unsigned long long work_ns) {
  extern __shared__ unsigned char smem_raw[];
  if (threadIdx.x != 0) return;
  const unsigned long long t0 = globaltimer();
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  while (globaltimer() - t0 < work_ns) {
  }
  smem_raw[0] = 1;
  Rec r;
  r.start = t0;
  r.sm = sm;
  r.pad = 0;
  r.end = globaltimer();
  rec[blockIdx.x] = r;
}

__global__ void dp_empty() {}

struct State {
  DevInfo dev;
  std::vector<DpPoint> pts;
  Rec* rec = nullptr;
  int max_smem = 0;
  FILE* raw = nullptr;
};
State S;
constexpr int kMaxGrid = 132 * 4 * 16;

Result measure(size_t idx, int reps) {
  const DpPoint& p = S.pts[idx];
  const unsigned grid = (unsigned)(S.dev.sms * p.cps * p.grid_waves);
  const size_t smem = smem_for_occupancy(2048, p.cps, S.dev);
  if (grid > (unsigned)kMaxGrid) throw PointSkip("grid too large");
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, dp_probe, 32, smem));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> ev, span, first_wave, slope, later, empty;
  std::vector<Rec> h(grid);
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(e0));
    dp_empty<<<1, 32>>>();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    empty.push_back(event_ms(e0, e1) * 1000.0);
    CK(cudaEventRecord(e0));
    dp_probe<<<grid, 32, smem>>>(S.rec, (unsigned long long)p.work_ns);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    ev.push_back(event_ms(e0, e1) * 1000.0);
    CK(cudaMemcpy(h.data(), S.rec, grid * sizeof(Rec), cudaMemcpyDeviceToHost));
    unsigned long long t_min = ~0ull, t_max = 0;
    for (auto& x : h) {
      t_min = std::min(t_min, x.start);
      t_max = std::max(t_max, x.end);
    }
    span.push_back((t_max - t_min) / 1000.0);
    // The first wave: the first SMs x occupancy CTAs by block index.
    const unsigned w = std::min<unsigned>(grid, (unsigned)(S.dev.sms * std::max(occ, 1)));
    unsigned long long fw_max = 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (unsigned b = 0; b < w; ++b) {
      const double y = (double)(h[b].start - t_min);
      fw_max = std::max(fw_max, h[b].start - t_min);
      sx += b;
      sy += y;
      sxx += (double)b * b;
      sxy += b * y;
    }
    first_wave.push_back(fw_max / 1000.0);
    slope.push_back(w > 1 ? (w * sxy - sx * sy) / (w * sxx - sx * sx) : 0.0);
    // Later waves: each CTA's start after the end of the CTA that left its SM slot last before it.
    if (grid > w) {
      std::map<unsigned, std::vector<std::pair<unsigned long long, unsigned long long>>> by_sm;  // (start, end)
      for (auto& x : h) by_sm[x.sm].push_back({x.start, x.end});
      std::vector<double> gaps;
      for (auto& [sm, v] : by_sm) {
        std::sort(v.begin(), v.end());
        for (size_t i = (size_t)std::max(occ, 1); i < v.size(); ++i) {
          // The slot freed by the earliest-ending CTA among those started before this one.
          unsigned long long freed = ~0ull;
          for (size_t j = 0; j < i; ++j)
            if (v[j].second <= v[i].first) freed = freed == ~0ull ? v[j].second : std::max(freed, v[j].second);
          if (freed != ~0ull) gaps.push_back((double)(v[i].first - freed));
        }
      }
      if (!gaps.empty()) later.push_back(median(gaps));
    }
    if (r == 0 && S.raw && p.work_ns == 5000)
      for (unsigned b = 0; b < grid; ++b)
        fprintf(S.raw, "%zu,%u,%u,%llu,%llu\n", idx, b, h[b].sm, h[b].start - t_min, h[b].end - t_min);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  Result res;
  res.values = {I(grid),          I(occ),           I((long long)smem), F(median(ev), 2),
                F(median(span), 2), F(median(first_wave), 3), F(median(slope), 3),
                later.empty() ? "" : F(median(later), 1), F(median(empty), 2), I(reps)};
  if (occ != p.cps) res.status = "occupancy_" + I(occ);
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  S.pts = make_points();
  Family fam;
  fam.name = "dispatch";
  fam.param_cols = {"waves", "ctas_per_sm", "work_ns"};
  fam.result_cols = {"grid",          "occupancy",         "smem_bytes", "event_us", "span_us", "first_wave_start_us",
                     "ns_per_cta_index", "later_wave_gap_ns", "empty_event_us", "reps"};
  for (auto& p : S.pts) fam.points.push_back({I(p.grid_waves), I(p.cps), I(p.work_ns)});
  fam.default_reps = 7;
  fam.setup = [&](int) {
    S.dev = dev_info();
    CK(cudaMalloc(&S.rec, kMaxGrid * sizeof(Rec)));
    S.max_smem = set_max_dyn_smem(dp_probe, S.dev);
    const char* out = arg_value(argc, argv, "--out");
    if (out) {
      std::string raw = std::string(out);
      raw = raw.substr(0, raw.rfind('/') + 1) + "dispatch_raw.csv";
      S.raw = fopen(raw.c_str(), "a");
      if (S.raw && ftell(S.raw) == 0) fprintf(S.raw, "point,block,sm,start_ns,end_ns\n");
    }
    unsigned* sink;
    CK(cudaMalloc(&sink, 64));
    warmup_kernel<<<S.dev.sms, 128>>>(50000000ull, sink);
    CK(cudaDeviceSynchronize());
  };
  fam.measure = measure;
  const int rc = run_points(fam, argc, argv);
  if (S.raw) fclose(S.raw);
  return rc;
}
