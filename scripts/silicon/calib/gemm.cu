// gemm.csv: the loads of persistent GEMM main loops (C = A x B^T, A: M x K, B: N x K, bf16,
// K-major, both larger than the L2 at the default size), no math: a consumer that spins a set
// number of cycles per k-step stands for the MMAs.
//
// Grid = SMs CTAs (one per SM), each CTA takes output tiles b, b + grid, ... of the tile
// schedule; per tile it streams the K dimension through an S-stage ring: thread 0 loads the A box
// (64 bf16 = 128 B x BM rows) and the B box (128 B x BN rows) of each k-step onto one mbarrier,
// thread 32 waits, reads one word, spins `compute_cycles` (clock64) and releases the stage.
// The 128-byte swizzle, as CUTLASS and Triton use for these boxes.
//
// Rasters (which output tile the t-th scheduled tile is; tiles_m = M / BM, tiles_n = N / BN):
//   m        m = t % tiles_m, n = t / tiles_m    (CTAs in flight share B tiles)
//   n        n = t % tiles_n, m = t / tiles_n    (CTAs in flight share A tiles)
//   grouped  Triton's GROUP_SIZE_M = 8: groups of 8 rows of tiles, walked down the group's rows
//            first (m fastest within the group), then across n
// Timed both ways (event_us, span_us) as in space.cu; the L2 is made clean (unrelated reads)
// before every timed launch.
//
// Extra modes for ncu: gemm --list-traffic; gemm --traffic-all (every point once, each after the
// clean-L2 reads; only the measured launches are called gm_mainloop).
// gemm --skew OUT.csv [--only i,j,...]: one launch of each point (default 0-3, 9, 18: the M
// raster with 0, 512, 1024 cycles and 128B, N, grouped) that logs when each CTA's consumer gets every
// kSkewEvery-th k-step's data, and the CTA's SM: how far apart the CTAs that share tiles run.
// gemm --stamps OUT.csv [--only i,j,...]: one launch of each point (default the M raster without
// promotion, every shape and compute time) that stamps (clock64) kStampSteps k-steps of every CTA
// from step kStampFrom on: when the producer starts to wait for a free stage, has it and has issued
// both loads; when the consumer starts to wait for the data, has it and has released the stage:
// where a k-step's time goes (the consumer's own cost beside its spin, or a wait for data).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a gemm.cu -o gemm -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr int kMaxStages = 8;
constexpr int kBK = 64;  // elements of K per step (128 bytes)
constexpr size_t kScrubBytes = 256ull << 20;
constexpr int kSkewEvery = 16;      // --skew logs every 16th k-step
constexpr int kSkewMaxSteps = 8192;  // per CTA (8192^3 at 128x128: 31-32 tiles x 128 steps)
constexpr int kStampFrom = 256;      // --stamps: the first k-step stamped (past the ring's filling)
constexpr int kStampSteps = 64;      // --stamps: k-steps stamped per CTA
constexpr int kStampFields = 6;      // producer: wait, free, issued; consumer: wait, data, released

struct GemmPoint {
  int M = 8192, N = 8192, K = 8192;
  int BM = 128, BN = 128;
  int stages = 4;
  std::string raster = "m";  // m | n | grouped
  int l2 = 0;
  int compute = 0;  // consumer cycles per k-step
  size_t a_bytes() const { return (size_t)M * K * 2; }
  size_t b_bytes() const { return (size_t)N * K * 2; }
  unsigned step_bytes() const { return (unsigned)((BM + BN) * kBK * 2); }
};

std::vector<GemmPoint> make_points() {
  std::vector<GemmPoint> v;
  const int shapes[3][5] = {
      // M, N, K, BM, BN
      {8192, 8192, 8192, 128, 128},
      {8192, 8192, 8192, 128, 256},
      {16384, 4096, 4096, 128, 256},
  };
  for (auto& sh : shapes)
    for (const char* r : {"m", "n", "grouped"})
      for (int l2 : {0, 128, 256})
        for (int c : {0, 512, 1024}) {
          GemmPoint p;
          p.M = sh[0];
          p.N = sh[1];
          p.K = sh[2];
          p.BM = sh[3];
          p.BN = sh[4];
          p.stages = sh[4] == 256 ? 4 : 6;
          p.raster = r;
          p.l2 = l2;
          p.compute = c;
          v.push_back(p);
        }
  return v;
}

struct Span {
  unsigned long long start, end;
};

struct GmArgs {
  int tiles_m, tiles_n, ksteps, raster;  // raster 0 m, 1 n, 2 grouped
  int stages, BM, BN;
  unsigned step_bytes, stage_stride, a_bytes;
  unsigned compute;
  unsigned long long timeout_cycles;
  unsigned* sink;
  unsigned* err;
  ClockRec* clk;
  Span* span;
  unsigned long long* skew;  // --skew: [cta][step / kSkewEvery] globaltimer, else null
  unsigned* skew_sm;         // --skew: each CTA's %smid
  unsigned long long* stamps;  // --stamps: [cta][step - kStampFrom][kStampFields] clock64, else null
};

__device__ __forceinline__ void tile_of(const GmArgs& a, int t, int& m, int& n) {
  if (a.raster == 0) {
    m = t % a.tiles_m;
    n = t / a.tiles_m;
  } else if (a.raster == 1) {
    n = t % a.tiles_n;
    m = t / a.tiles_n;
  } else {
    const int per_group = 8 * a.tiles_n;
    const int first_m = (t / per_group) * 8;
    const int gm = min(a.tiles_m - first_m, 8);
    const int r = t % per_group;
    m = first_m + r % gm;
    n = r / gm;
  }
}

__device__ __forceinline__ void mainloop_body(const CUtensorMap* ma, const CUtensorMap* mb, const GmArgs& a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[kMaxStages], empty[kMaxStages];
  const unsigned raw = smem_u32(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;
  const unsigned char* base_ptr = smem_raw + (base - raw);
  if (threadIdx.x == 0) {
    atomicMin(&a.span->start, globaltimer());
    for (int s = 0; s < a.stages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    mbar_init_fence();
  }
  __syncthreads();
  const int tiles = a.tiles_m * a.tiles_n;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      a.clk->g0 = globaltimer();
      a.clk->c0 = (unsigned long long)clock64();
    }
    int s = 0;
    unsigned k = 0;
    long long j = 0;
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      int m, n;
      tile_of(a, t, m, n);
      for (int ks = 0; ks < a.ksteps; ++ks, ++j) {
        unsigned long long* st = nullptr;
        if (a.stamps && j >= kStampFrom && j < kStampFrom + kStampSteps)
          st = a.stamps + ((size_t)blockIdx.x * kStampSteps + (j - kStampFrom)) * kStampFields;
        if (st) st[0] = (unsigned long long)clock64();
        if (j >= a.stages && !mbar_wait(smem_u32(&empty[s]), (k - 1) & 1, a.timeout_cycles)) {
          atomicAdd(a.err, 1u);
          return;
        }
        if (st) st[1] = (unsigned long long)clock64();
        const unsigned dst = base + (unsigned)s * a.stage_stride;
        mbar_arrive_expect(smem_u32(&full[s]), a.step_bytes);
        tma_load_2d(dst, ma, ks * kBK, m * a.BM, smem_u32(&full[s]));
        tma_load_2d(dst + a.a_bytes, mb, ks * kBK, n * a.BN, smem_u32(&full[s]));
        if (st) st[2] = (unsigned long long)clock64();
        if (++s == a.stages) {
          s = 0;
          ++k;
        }
      }
    }
  } else if (threadIdx.x == 32) {
    unsigned acc = 0;
    int s = 0;
    unsigned k = 0;
    long long j = 0;
    if (a.skew || a.stamps) {
      unsigned smid;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
      a.skew_sm[blockIdx.x] = smid;
    }
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      for (int ks = 0; ks < a.ksteps; ++ks, ++j) {
        unsigned long long* st = nullptr;
        if (a.stamps && j >= kStampFrom && j < kStampFrom + kStampSteps)
          st = a.stamps + ((size_t)blockIdx.x * kStampSteps + (j - kStampFrom)) * kStampFields;
        if (st) st[3] = (unsigned long long)clock64();
        if (!mbar_wait(smem_u32(&full[s]), k & 1, a.timeout_cycles)) {
          atomicAdd(a.err, 1u);
          a.sink[blockIdx.x] = acc;
          return;
        }
        if (a.skew && j % kSkewEvery == 0 && j / kSkewEvery < kSkewMaxSteps / kSkewEvery)
          a.skew[(size_t)blockIdx.x * (kSkewMaxSteps / kSkewEvery) + j / kSkewEvery] = globaltimer();
        if (st) st[4] = (unsigned long long)clock64();
        acc += *reinterpret_cast<const volatile unsigned*>(base_ptr + (size_t)s * a.stage_stride + 4 * (ks & 7));
        if (a.compute) {
          const long long t0 = clock64();
          while (clock64() - t0 < (long long)a.compute) {
          }
        }
        mbar_arrive(smem_u32(&empty[s]));
        if (st) st[5] = (unsigned long long)clock64();
        if (++s == a.stages) {
          s = 0;
          ++k;
        }
      }
    }
    a.sink[blockIdx.x] = acc;
    atomicMax(&a.span->end, globaltimer());
    if (blockIdx.x == 0) {
      a.clk->c1 = (unsigned long long)clock64();
      a.clk->g1 = globaltimer();
    }
  }
}

__global__ void __launch_bounds__(64) gm_mainloop(const __grid_constant__ CUtensorMap ma,
                                                  const __grid_constant__ CUtensorMap mb, GmArgs a) {
  mainloop_body(&ma, &mb, a);
}
__global__ void __launch_bounds__(64) gm_prewarm(const __grid_constant__ CUtensorMap ma,
                                                 const __grid_constant__ CUtensorMap mb, GmArgs a) {
  mainloop_body(&ma, &mb, a);
}

struct State {
  DevInfo dev;
  int max_smem = 0;
  std::vector<GemmPoint> pts;
  unsigned char* A = nullptr;
  unsigned char* B = nullptr;
  unsigned char* scrub = nullptr;
  unsigned* sink = nullptr;
  unsigned* err = nullptr;
  ClockRec* clk = nullptr;
  Span* span = nullptr;
};
State S;

std::vector<std::string> params_of(const GemmPoint& p) {
  return {I(p.M), I(p.N), I(p.K), I(p.BM), I(p.BN), I(kBK), I(p.stages), p.raster, l2_name(p.l2), I(p.compute)};
}
const std::vector<std::string> kParamCols = {"M",  "N",      "K",      "BM",           "BN",
                                             "BK", "stages", "raster", "l2_promotion", "compute_cycles"};

constexpr size_t kOperandMax = 128ull << 20;  // 8192 x 8192 bf16; 16384 x 4096 likewise

void alloc() {
  CK(cudaMalloc(&S.A, kOperandMax));
  CK(cudaMalloc(&S.B, kOperandMax));
  CK(cudaMemset(S.A, 0x3c, kOperandMax));
  CK(cudaMemset(S.B, 0x3d, kOperandMax));
  CK(cudaMalloc(&S.scrub, kScrubBytes));
  CK(cudaMemset(S.scrub, 0x11, kScrubBytes));
  CK(cudaMalloc(&S.sink, 4096 * sizeof(unsigned)));
  CK(cudaMalloc(&S.err, sizeof(unsigned)));
  CK(cudaMalloc(&S.clk, sizeof(ClockRec)));
  CK(cudaMalloc(&S.span, sizeof(Span)));
  S.max_smem = std::min(set_max_dyn_smem(gm_mainloop, S.dev), set_max_dyn_smem(gm_prewarm, S.dev));
}

struct Prepared {
  CUtensorMap ma, mb;
  GmArgs args;
  unsigned grid;
  size_t smem;
};

Prepared prepare(const GemmPoint& p) {
  alignas(64) Prepared q;
  if (p.a_bytes() > kOperandMax || p.b_bytes() > kOperandMax) throw PointSkip("operands too large");
  encode_2d(&q.ma, dtype_of("bf16"), S.A, (unsigned long long)p.K * 2, p.M, kBK * 2, p.BM, 128, p.l2);
  encode_2d(&q.mb, dtype_of("bf16"), S.B, (unsigned long long)p.K * 2, p.N, kBK * 2, p.BN, 128, p.l2);
  GmArgs& a = q.args;
  a = GmArgs();
  a.tiles_m = p.M / p.BM;
  a.tiles_n = p.N / p.BN;
  a.ksteps = p.K / kBK;
  a.raster = p.raster == "m" ? 0 : p.raster == "n" ? 1 : 2;
  a.stages = p.stages;
  a.BM = p.BM;
  a.BN = p.BN;
  a.step_bytes = p.step_bytes();
  a.a_bytes = (unsigned)(p.BM * kBK * 2);
  a.stage_stride = (a.step_bytes + 1023u) & ~1023u;
  a.compute = (unsigned)p.compute;
  a.timeout_cycles = kWaitLong;
  a.sink = S.sink;
  a.err = S.err;
  a.clk = S.clk;
  a.span = S.span;
  q.smem = (size_t)p.stages * a.stage_stride + 1024;
  if (q.smem > (size_t)S.max_smem) throw PointSkip("shared memory: need " + I((long long)q.smem));
  q.grid = (unsigned)S.dev.sms;
  return q;
}

void make_clean() {
  touch_kernel<<<S.dev.sms * 4, 256>>>(reinterpret_cast<const uint4*>(S.scrub), kScrubBytes / 16, S.sink);
  CK(cudaGetLastError());
  const Span init = {~0ull, 0ull};
  CK(cudaMemcpy(S.span, &init, sizeof(init), cudaMemcpyHostToDevice));
}

Result measure(size_t idx, int reps) {
  const GemmPoint& p = S.pts[idx];
  Prepared q = prepare(p);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaMemset(S.err, 0, sizeof(unsigned)));
  gm_prewarm<<<q.grid, 64, q.smem>>>(q.ma, q.mb, q.args);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> ev_us, span_us, mhz;
  for (int r = 0; r < reps; ++r) {
    make_clean();
    CK(cudaEventRecord(e0));
    gm_mainloop<<<q.grid, 64, q.smem>>>(q.ma, q.mb, q.args);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    ev_us.push_back(event_ms(e0, e1) * 1000.0);
    Span sp;
    CK(cudaMemcpy(&sp, S.span, sizeof(sp), cudaMemcpyDeviceToHost));
    span_us.push_back((double)(sp.end - sp.start) / 1000.0);
    ClockRec cr;
    CK(cudaMemcpy(&cr, S.clk, sizeof(cr), cudaMemcpyDeviceToHost));
    mhz.push_back(clock_mhz(cr));
  }
  unsigned err = 0;
  CK(cudaMemcpy(&err, S.err, sizeof(err), cudaMemcpyDeviceToHost));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  const double bytes = (double)q.args.tiles_m * q.args.tiles_n * q.args.ksteps * q.args.step_bytes;
  Result res;
  res.values = {I(q.grid), I((long long)q.smem), F(bytes, 0), F(median(ev_us), 2), F(vmin(ev_us), 2),
                F(median(span_us), 2), F(vmin(span_us), 2), F(bytes / median(span_us) / 1e3, 1),
                F(median(mhz), 1), I(reps)};
  if (err) res.status = "timeout(" + I(err) + ")";
  return res;
}

// One launch of a point with a log in the kernel (--skew, --stamps): what each CTA logged
// (per_cta words a CTA), each CTA's SM, the span and the timeouts.
struct LoggedLaunch {
  size_t point;
  const GemmPoint& p;
  unsigned grid;
  Span span;
  std::vector<unsigned long long> log;
  std::vector<unsigned> sm;
  unsigned err;
};

// The points `pts`, each launched once after a clean L2 with a log of `per_cta` words a CTA
// (args.stamps when `stamps`, else args.skew), written by `write` into `path` after `header`.
int logged_mode(const char* name, const char* path, const std::vector<size_t>& pts, size_t per_cta, bool stamps,
                const char* header, const std::function<void(FILE*, const LoggedLaunch&)>& write) {
  FILE* f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "%s: cannot write %s\n", name, path);
    return 2;
  }
  try {
    CK(cudaSetDevice(0));
    S.dev = dev_info();
    alloc();
    unsigned long long* log = nullptr;
    unsigned* sm = nullptr;
    CK(cudaMalloc(&log, (size_t)S.dev.sms * per_cta * sizeof(unsigned long long)));
    CK(cudaMalloc(&sm, (size_t)S.dev.sms * sizeof(unsigned)));
    warmup_kernel<<<S.dev.sms, 128>>>(50000000ull, S.sink);
    CK(cudaDeviceSynchronize());
    fprintf(f, "%s\n", header);
    for (size_t i : pts) {
      if (i >= S.pts.size()) continue;
      Prepared q = prepare(S.pts[i]);
      (stamps ? q.args.stamps : q.args.skew) = log;
      q.args.skew_sm = sm;
      CK(cudaMemset(log, 0, (size_t)S.dev.sms * per_cta * sizeof(unsigned long long)));
      CK(cudaMemset(S.err, 0, sizeof(unsigned)));
      make_clean();
      gm_mainloop<<<q.grid, 64, q.smem>>>(q.ma, q.mb, q.args);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      LoggedLaunch run{i, S.pts[i], q.grid, {}, std::vector<unsigned long long>((size_t)q.grid * per_cta),
                       std::vector<unsigned>(q.grid), 0};
      CK(cudaMemcpy(&run.span, S.span, sizeof(run.span), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(run.log.data(), log, run.log.size() * sizeof(run.log[0]), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(run.sm.data(), sm, run.sm.size() * sizeof(run.sm[0]), cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(&run.err, S.err, sizeof(run.err), cudaMemcpyDeviceToHost));
      write(f, run);
    }
    fclose(f);
    return 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "%s: %s\n", name, e.what());
    fclose(f);
    return 3;
  }
}

// --skew OUT.csv: point, cta, smid, step, t_ns (from the first CTA's start) of every kSkewEvery-th
// step; the points' parameters are gemm.csv's of the same number.
int skew_mode(const char* path, const char* only) {
  const std::vector<size_t> pts = only ? index_list(only) : std::vector<size_t>{0, 1, 2, 3, 9, 18};
  const size_t per_cta = kSkewMaxSteps / kSkewEvery;
  return logged_mode("skew", path, pts, per_cta, false, "point,cta,smid,step,t_ns", [per_cta](FILE* f, const LoggedLaunch& r) {
    for (unsigned c = 0; c < r.grid; ++c)
      for (size_t k = 0; k < per_cta; ++k) {
        const unsigned long long t = r.log[(size_t)c * per_cta + k];
        if (!t) break;
        fprintf(f, "%zu,%u,%u,%zu,%llu\n", r.point, c, r.sm[c], k * kSkewEvery, t - r.span.start);
      }
    const GemmPoint& p = r.p;
    printf("skew point %zu (%dx%dx%d %dx%d %s %s %d cycles): span %.1f us\n", r.point, p.M, p.N, p.K, p.BM, p.BN,
           p.raster.c_str(), l2_name(p.l2).c_str(), p.compute, (double)(r.span.end - r.span.start) / 1000.0);
  });
}

// --stamps OUT.csv: point, cta, smid, step, then the six clock64 stamps less the CTA's first one
// (p_wait, p_free, p_issued, c_wait, c_data, c_released); a line per point with its span.
int stamps_mode(const char* path, const char* only) {
  std::vector<size_t> pts;
  if (only) {
    pts = index_list(only);
  } else {
    for (size_t i = 0; i < S.pts.size(); ++i)
      if (S.pts[i].raster == "m" && S.pts[i].l2 == 0) pts.push_back(i);
  }
  const size_t per_cta = (size_t)kStampSteps * kStampFields;
  return logged_mode("stamps", path, pts, per_cta, true, "point,cta,smid,step,p_wait,p_free,p_issued,c_wait,c_data,c_released",
                     [per_cta](FILE* f, const LoggedLaunch& r) {
    for (unsigned c = 0; c < r.grid; ++c) {
      const unsigned long long* s = &r.log[(size_t)c * per_cta];
      for (int k = 0; k < kStampSteps && s[k * kStampFields]; ++k) {  // a CTA with fewer steps stops early
        fprintf(f, "%zu,%u,%u,%d", r.point, c, r.sm[c], kStampFrom + k);
        for (int x = 0; x < kStampFields; ++x) fprintf(f, ",%lld", (long long)(s[k * kStampFields + x] - s[0]));
        fprintf(f, "\n");
      }
    }
    const GemmPoint& p = r.p;
    printf("stamps point %zu (%dx%dx%d %dx%d %s %s %d cycles): span %.1f us, err %u\n", r.point, p.M, p.N, p.K, p.BM,
           p.BN, p.raster.c_str(), l2_name(p.l2).c_str(), p.compute, (double)(r.span.end - r.span.start) / 1000.0, r.err);
  });
}

int traffic_mode(int argc, char** argv) {
  if (const char* path = arg_value(argc, argv, "--skew")) return skew_mode(path, arg_value(argc, argv, "--only"));
  if (const char* path = arg_value(argc, argv, "--stamps")) return stamps_mode(path, arg_value(argc, argv, "--only"));
  if (arg_flag(argc, argv, "--list-traffic")) {
    printf("tpoint,point");
    for (auto& c : kParamCols) printf(",%s", c.c_str());
    printf("\n");
    for (size_t i = 0; i < S.pts.size(); ++i) {
      printf("%zu,%zu", i, i);
      for (auto& v : params_of(S.pts[i])) printf(",%s", v.c_str());
      printf("\n");
    }
    return 0;
  }
  if (!arg_flag(argc, argv, "--traffic-all")) return -1;
  // --from/--to: a slice of the traffic points, so that a driver can profile them in chunks
  const char* from_s = arg_value(argc, argv, "--from");
  const char* to_s = arg_value(argc, argv, "--to");
  const size_t from = from_s ? strtoull(from_s, nullptr, 10) : 0;
  const size_t to = to_s ? strtoull(to_s, nullptr, 10) : ~(size_t)0;
  try {
    CK(cudaSetDevice(0));
    S.dev = dev_info();
    alloc();
    for (size_t i = from; i < S.pts.size() && i < to; ++i) {
      Prepared q = prepare(S.pts[i]);
      CK(cudaMemset(S.err, 0, sizeof(unsigned)));
      make_clean();
      gm_mainloop<<<q.grid, 64, q.smem>>>(q.ma, q.mb, q.args);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      unsigned err = 0;
      CK(cudaMemcpy(&err, S.err, sizeof(err), cudaMemcpyDeviceToHost));
      printf("traffic %zu point %zu err %u\n", i, i, err);
    }
    return 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "traffic: %s\n", e.what());
    return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  S.pts = make_points();
  Family fam;
  fam.name = "gemm";
  fam.param_cols = kParamCols;
  fam.result_cols = {"grid",    "smem_bytes",  "bytes",     "event_us", "event_us_min",
                     "span_us", "span_us_min", "span_gbps", "sm_mhz",   "reps"};
  for (auto& p : S.pts) fam.points.push_back(params_of(p));
  fam.default_reps = 5;
  fam.extra = traffic_mode;
  fam.setup = [](int) {
    S.dev = dev_info();
    alloc();
    warmup_kernel<<<S.dev.sms, 128>>>(50000000ull, S.sink);
    CK(cudaDeviceSynchronize());
  };
  fam.measure = measure;
  return run_points(fam, argc, argv);
}
