// page_share.csv: when do two reads of one DRAM page share its opening?
//
// Column-ordered streams of 64 B rows run at about 64 bytes per DRAM page opening on silicon
// (space_pages.csv: 2.7-3.1 TB/s on the H200 at row pitches of 1-64 KB, where row order reaches
// 4.3), even at pitches where the other columns' reads of the same pages are in flight at the same
// time, while the model lets reads share an opening that came up to `dram.scheduler_window_cycles`
// before them. This program sets the time between the two reads of each page directly.
//
// A bf16 tensor of 128-byte rows 1 KB apart (4 GB: 4 Mi rows), so that each 1 KB page holds one
// line that anybody reads. Its 64 B x 256-row boxes come in pairs, the two halves of the same
// rows (x = 0 and x = 32): item i of pair p is row block p + 66 i. One CTA per SM, 132 CTAs, 3
// stages (768 rows in flight per SM, where no SM runs ahead: space_onset.csv); the CTA that reads
// the first halves of pair p's items and the one that reads their second halves are partners:
// `tpc` CTAs 2p and 2p+1 (one TPC in silicon's dealing order, placement.csv), `far` CTAs p and
// p + 66 (other GPCs); two points appended with 256B promotion. The second-half reader runs `lag_items` items behind (its first steps read
// halves whose other half nobody reads) and starts `delay_ns` later. Every tile's issue time is
// logged; the CSV gives the time between the two halves' issues (median, p10, p90 over the items
// both read) and the stream's GB/s over the in-kernel span (first CTA start to last CTA end).
// The L2 is made clean before each launch by reading 256 MB of another buffer.
//
//   page_share --list | --count | --out FILE.csv [--only K] [--reps N] [--logs DIR]
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a page_share.cu -o page_share -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr unsigned kPitch = 1024, kRowBytes = 128, kBoxRows = 256, kHalfBytes = 64;
constexpr size_t kTensorBytes = 4ull << 30;
constexpr size_t kRows = kTensorBytes / kPitch;
constexpr int kBlocks = (int)(kRows / kBoxRows);  // row blocks (items of all pairs)
constexpr int kPairs = 66, kCtas = 2 * kPairs;
constexpr int kLagMax = 8;
constexpr int kItems = kBlocks / kPairs - kLagMax;  // items each CTA reads
constexpr int kStages = 3;
constexpr size_t kScrubBytes = 256ull << 20;

struct PSPoint {
  int promotion;  // the map's L2 promotion (bytes, 0: none)
  bool far;       // partners: CTAs p and p + 66 (else 2p and 2p + 1)
  int lag_items;
  int delay_ns;
};

std::vector<PSPoint> make_points() {
  std::vector<PSPoint> v;
  for (int promo : {0, 128}) {
    for (int d : {0, 50, 100, 200, 400, 800}) v.push_back({promo, false, 0, d});
    for (int l : {1, 2, 4, 8}) v.push_back({promo, false, l, 0});
    for (int d : {0, 200}) v.push_back({promo, true, 0, d});
    v.push_back({promo, true, 2, 0});
  }
  // Appended: 256B promotion, whose block's other line (bytes 128-255 of each 1 KB) nobody reads.
  for (bool far : {false, true}) v.push_back({256, far, 0, 0});
  return v;
}

struct Span {
  unsigned long long start, end;
};

struct PSArgs {
  int far, lag_items;
  unsigned long long delay_ns;
  unsigned long long timeout_cycles;
  unsigned* sink;
  unsigned* err;
  Span* span;
  unsigned long long* tile_log;  // [block * 2 + half] issue time (globaltimer)
  ClockRec* clk;
  unsigned* cta_sm;  // [cta] its %smid
};

// Which half and pair a CTA reads.
__device__ __forceinline__ void role(const PSArgs& a, int& half, int& pair) {
  const int b = (int)blockIdx.x;
  if (a.far) {
    half = b >= kPairs;
    pair = b % kPairs;
  } else {
    half = b & 1;
    pair = b >> 1;
  }
}

__global__ void __launch_bounds__(64) ps_stream(const __grid_constant__ CUtensorMap map, PSArgs a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[kStages], empty[kStages];
  const unsigned raw = smem_u32(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;
  const unsigned char* base_ptr = smem_raw + (base - raw);
  constexpr unsigned kTile = kHalfBytes * kBoxRows, kStride = (kTile + 1023u) & ~1023u;
  int half, pair;
  role(a, half, pair);
  if (threadIdx.x == 0) {
    atomicMin(&a.span->start, globaltimer());
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    a.cta_sm[blockIdx.x] = smid;
    for (int s = 0; s < kStages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) clock_begin(a.clk);
    if (half == 1 && a.delay_ns) spin_ns(a.delay_ns);
    int s = 0;
    unsigned k = 0;
    for (int j = 0; j < kItems; ++j) {
      if (j >= kStages && !mbar_wait(smem_u32(&empty[s]), (k - 1) & 1, a.timeout_cycles)) {
        atomicAdd(a.err, 1u);
        break;
      }
      // The second-half reader is lag_items behind; its first steps read items beyond kItems,
      // whose first halves nobody reads.
      const int item = half == 0 ? j : (j >= a.lag_items ? j - a.lag_items : kItems + j);
      const int block = pair + kPairs * item;
      mbar_arrive_expect(smem_u32(&full[s]), kTile);
      a.tile_log[2 * block + half] = globaltimer();
      tma_load_2d(base + (unsigned)s * kStride, &map, half * (kHalfBytes / 2), block * (int)kBoxRows,
                  smem_u32(&full[s]));
      if (++s == kStages) {
        s = 0;
        ++k;
      }
    }
  } else if (threadIdx.x == 32) {
    unsigned acc = 0;
    int s = 0;
    unsigned k = 0;
    for (int j = 0; j < kItems; ++j) {
      if (!mbar_wait(smem_u32(&full[s]), k & 1, a.timeout_cycles)) {
        atomicAdd(a.err, 1u);
        break;
      }
      acc += *reinterpret_cast<const volatile unsigned*>(base_ptr + (size_t)s * kStride + 4 * (j & 7));
      mbar_arrive(smem_u32(&empty[s]));
      if (++s == kStages) {
        s = 0;
        ++k;
      }
    }
    a.sink[blockIdx.x] = acc;
    atomicMax(&a.span->end, globaltimer());
    if (blockIdx.x == 0) clock_end(a.clk);
  }
}

struct State {
  DevInfo dev;
  std::vector<PSPoint> pts;
  unsigned char* tensor = nullptr;
  unsigned char* scrub = nullptr;
  unsigned* sink = nullptr;
  unsigned* err = nullptr;
  Span* span = nullptr;
  unsigned long long* tile_log = nullptr;
  ClockRec* clk = nullptr;
  unsigned* cta_sm = nullptr;
  size_t smem = 0;
  std::string logs;  // --logs DIR: each point's last launch's box issue times
};
State S;

// DIR/page_share_PPP.csv: block, first half's and second half's issue (ns from the span's start;
// empty where that half was not read); DIR/page_share_sm_PPP.csv: each CTA's %smid.
void write_log(size_t idx, const std::vector<unsigned long long>& log, unsigned long long t0) {
  char name[64];
  snprintf(name, sizeof name, "/page_share_%03zu.csv", idx);
  FILE* f = fopen((S.logs + name).c_str(), "w");
  if (!f) return;
  fprintf(f, "block,first_ns,second_ns\n");
  for (int b = 0; b < kBlocks; ++b) {
    if (!log[2 * b] && !log[2 * b + 1]) continue;
    fprintf(f, "%d,", b);
    if (log[2 * b]) fprintf(f, "%lld", (long long)(log[2 * b] - t0));
    fprintf(f, ",");
    if (log[2 * b + 1]) fprintf(f, "%lld", (long long)(log[2 * b + 1] - t0));
    fprintf(f, "\n");
  }
  fclose(f);
  std::vector<unsigned> sm(kCtas);
  CK(cudaMemcpy(sm.data(), S.cta_sm, sm.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  snprintf(name, sizeof name, "/page_share_sm_%03zu.csv", idx);
  if (FILE* g = fopen((S.logs + name).c_str(), "w")) {
    fprintf(g, "cta,smid\n");
    for (int c = 0; c < kCtas; ++c) fprintf(g, "%d,%u\n", c, sm[c]);
    fclose(g);
  }
}

Result measure(size_t idx, int reps) {
  const PSPoint& p = S.pts[idx];
  alignas(64) CUtensorMap map;
  const unsigned long long dims[2] = {kRowBytes / 2, kRows}, strides[1] = {kPitch};
  const unsigned box[2] = {kHalfBytes / 2, kBoxRows};
  encode_tiled(&map, dtype_of("bf16"), 2, S.tensor, dims, strides, box, 0, p.promotion);
  PSArgs a = {};
  a.far = p.far;
  a.lag_items = p.lag_items;
  a.delay_ns = (unsigned long long)p.delay_ns;
  a.timeout_cycles = kWaitLong;
  a.sink = S.sink;
  a.err = S.err;
  a.span = S.span;
  a.tile_log = S.tile_log;
  a.clk = S.clk;
  a.cta_sm = S.cta_sm;
  CK(cudaMemset(S.err, 0, sizeof(unsigned)));
  std::vector<double> gbs, lag_med, lag_p10, lag_p90, mhz;
  std::vector<unsigned long long> log(2 * (size_t)kBlocks);
  for (int r = -1; r < reps; ++r) {  // r = -1: untimed (clocks up)
    touch_kernel<<<S.dev.sms * 4, 256>>>(reinterpret_cast<const uint4*>(S.scrub), kScrubBytes / 16, S.sink);
    const Span init = {~0ull, 0ull};
    CK(cudaMemcpy(S.span, &init, sizeof(init), cudaMemcpyHostToDevice));
    CK(cudaMemset(S.tile_log, 0, log.size() * sizeof(unsigned long long)));
    ps_stream<<<kCtas, 64, S.smem>>>(map, a);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (r < 0) continue;
    Span sp;
    CK(cudaMemcpy(&sp, S.span, sizeof(sp), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(log.data(), S.tile_log, log.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    ClockRec cr;
    CK(cudaMemcpy(&cr, S.clk, sizeof(cr), cudaMemcpyDeviceToHost));
    mhz.push_back(clock_mhz(cr));
    const double bytes = 2.0 * kCtas / 2 * kItems * kHalfBytes * kBoxRows;
    gbs.push_back(bytes / (double)(sp.end - sp.start));
    std::vector<double> lags;
    for (int b = 0; b < kBlocks; ++b)
      if (log[2 * b] && log[2 * b + 1]) lags.push_back((double)log[2 * b + 1] - (double)log[2 * b]);
    lag_med.push_back(median(lags));
    lag_p10.push_back(percentile(lags, 10));
    lag_p90.push_back(percentile(lags, 90));
    if (!S.logs.empty() && r == reps - 1) write_log(idx, log, sp.start);
  }
  unsigned err = 0;
  CK(cudaMemcpy(&err, S.err, sizeof(err), cudaMemcpyDeviceToHost));
  Result res;
  res.values = {F(median(gbs), 1), F(vmin(gbs), 1), F(vmax(gbs), 1), F(median(lag_med), 0),
                F(median(lag_p10), 0), F(median(lag_p90), 0), F(median(mhz), 0)};
  if (err) res.status = "timeout(" + I(err) + ")";
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  S.pts = make_points();
  if (const char* d = arg_value(argc, argv, "--logs")) S.logs = d;
  Family fam;
  fam.name = "page_share";
  fam.param_cols = {"l2_promotion", "partners", "lag_items", "delay_ns"};
  fam.result_cols = {"gbs", "gbs_min", "gbs_max", "lag_ns_median", "lag_ns_p10", "lag_ns_p90", "sm_mhz"};
  for (auto& p : S.pts)
    fam.points.push_back({l2_name(p.promotion), p.far ? "far" : "tpc", I(p.lag_items), I(p.delay_ns)});
  fam.default_reps = 5;
  fam.setup = [](int) {
    S.dev = dev_info();
    if (S.dev.sms < kCtas) throw std::runtime_error("needs " + I(kCtas) + " SMs");
    CK(cudaMalloc(&S.tensor, kTensorBytes));
    CK(cudaMemset(S.tensor, 0x3c, kTensorBytes));
    CK(cudaMalloc(&S.scrub, kScrubBytes));
    CK(cudaMemset(S.scrub, 0x11, kScrubBytes));
    CK(cudaMalloc(&S.sink, 8192 * sizeof(unsigned)));
    CK(cudaMalloc(&S.err, sizeof(unsigned)));
    CK(cudaMalloc(&S.span, sizeof(Span)));
    CK(cudaMalloc(&S.clk, sizeof(ClockRec)));
    CK(cudaMalloc(&S.cta_sm, kCtas * sizeof(unsigned)));
    CK(cudaMalloc(&S.tile_log, 2 * (size_t)kBlocks * sizeof(unsigned long long)));
    const int max_smem = set_max_dyn_smem(ps_stream, S.dev);
    // one CTA per SM: shared memory for the stages, and too much for two
    S.smem = smem_for_occupancy((size_t)kStages * 16384 + 1024, 1, S.dev);
    if (S.smem > (size_t)max_smem) throw std::runtime_error("shared memory");
    unsigned* sink;
    CK(cudaMalloc(&sink, 64));
    warmup_kernel<<<S.dev.sms, 128>>>(50000000ull, sink);
    CK(cudaDeviceSynchronize());
  };
  fam.measure = measure;
  return run_points(fam, argc, argv);
}
