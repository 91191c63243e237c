// bandwidth.csv: TMA load throughput with every SM busy.
//
// A persistent kernel, grid = SMs x CTAs-per-SM (the CTA count per SM is forced through the
// dynamic shared-memory size and checked with the occupancy API). Each CTA streams tiles of a
// 2D bf16 tensor through an S-stage shared-memory ring: thread 0 is the producer (arrive.expect_tx
// on full[s], one TMA load per tile), thread 32 the consumer (waits full[s], reads one word of the
// tile, arrives on empty[s]). CTA i takes tiles i, i+grid, i+2*grid, ... of a row-major or
// column-major tile order, for `passes` passes over the tensor (about 1 GB per launch).
// Bandwidth is bytes / cudaEvent time of the launch; the median over the repetitions is reported.
// Group "batch" runs pattern batch instead (see bw_stream) for contrast.
//
// Extra modes for traffic.csv (ncu):
//   bandwidth --list-traffic      the traffic points, CSV on stdout (no GPU needed)
//   bandwidth --traffic N         one launch of traffic point N (nothing else is launched that
//                                 is called bw_stream; profile with -k regex:bw_stream -c 1)
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 bandwidth.cu -o bandwidth -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr int kMaxStages = 8;
constexpr size_t kBigBytes = 1ull << 30;  // far larger than L2 (the 16 MB tensor fits)

struct BwPoint {
  std::string group;  // core | depth | shape
  int size_mb = 1024;
  int inner = 128;    // box inner row, bytes
  int rows = 64;      // box rows
  int l2 = 0;         // L2 promotion bytes
  bool col_major = false;
  int stages = 4;
  int cps = 1;        // CTAs per SM
  int passes = 0;     // 0: enough for about 1 GB per launch
  bool batch = false; // pattern: ring (per-stage barriers) or batch (all stages on one barrier)
  int swizzle() const { return inner >= 256 ? 0 : inner; }
  unsigned tile_bytes() const { return (unsigned)(inner * rows); }
  size_t tensor_bytes() const { return (size_t)size_mb << 20; }
  size_t row_bytes() const { return size_mb >= 1024 ? 32768 : 8192; }
  int eff_passes() const { return passes ? passes : (int)std::max<size_t>(1, kBigBytes / tensor_bytes()); }
};

std::vector<BwPoint> make_points() {
  std::vector<BwPoint> v;
  const int shapes4[4][2] = {{32, 64}, {64, 64}, {128, 64}, {256, 64}};
  auto add = [&](const char* g, int size, int inner, int rows, int l2, bool col, int st, int cps) {
    BwPoint p;
    p.group = g;
    p.size_mb = size;
    p.inner = inner;
    p.rows = rows;
    p.l2 = l2;
    p.col_major = col;
    p.stages = st;
    p.cps = cps;
    v.push_back(p);
  };
  // core: every main shape x L2 promotion x tensor size x tile order, S=4, 1 CTA/SM
  for (int size : {16, 1024})
    for (bool col : {false, true})
      for (auto& sh : shapes4)
        for (int l2 : {0, 64, 128, 256}) add("core", size, sh[0], sh[1], l2, col, 4, 1);
  // depth: pipeline depth and CTAs per SM, row-major, no promotion
  const int sc[5][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 2}};
  for (int size : {16, 1024})
    for (auto& sh : shapes4)
      for (auto& x : sc) add("depth", size, sh[0], sh[1], 0, false, x[0], x[1]);
  // shape: 16- and 256-row boxes
  const int shapes3[3][2] = {{128, 16}, {128, 256}, {64, 256}};
  for (int size : {16, 1024})
    for (auto& sh : shapes3)
      for (int l2 : {0, 64, 128, 256}) add("shape", size, sh[0], sh[1], l2, false, 4, 1);
  // batch: the same tiles, `stages` of them in flight on one barrier, no overlap across batches
  for (int size : {16, 1024})
    for (int inner : {32, 128})
      for (int st : {2, 4, 8}) {
        add("batch", size, inner, 64, 0, false, st, 1);
        v.back().batch = true;
      }
  for (int size : {16, 1024}) {
    add("shape", size, 128, 256, 0, false, 2, 2);
    add("shape", size, 64, 256, 0, false, 2, 2);
    add("shape", size, 128, 16, 0, false, 4, 2);
    add("shape", size, 128, 16, 0, false, 1, 1);
  }
  return v;
}

// traffic.csv points (ncu): both sizes, all promotions, inner 32..256, both orders.
std::vector<BwPoint> make_traffic_points() {
  std::vector<BwPoint> v;
  auto add = [&](int size, int inner, int l2, bool col) {
    BwPoint p;
    p.group = "traffic";
    p.size_mb = size;
    p.inner = inner;
    p.rows = 64;
    p.l2 = l2;
    p.col_major = col;
    p.stages = 4;
    p.cps = 1;
    p.passes = size >= 1024 ? 1 : 4;  // short kernels: ncu replays them
    v.push_back(p);
  };
  for (int inner : {32, 64, 128, 256})
    for (int l2 : {0, 64, 128, 256}) add(1024, inner, l2, false);
  for (int inner : {32, 128})
    for (int l2 : {0, 256}) add(1024, inner, l2, true);
  for (int inner : {32, 128})
    for (int l2 : {0, 256}) add(16, inner, l2, false);
  return v;
}

struct BwArgs {
  int tiles_x, tiles_y;
  long long total;  // tiles in the tensor
  int passes;
  int col_major;
  int batch;  // pattern batch (see bw_stream)
  int stages;
  unsigned tile_bytes, stage_stride;
  int box_w, box_h;  // elements, rows
  unsigned long long timeout_cycles;
  unsigned* sink;
  unsigned* err;
  ClockRec* clk;
};

// Thread 0 produces, thread 32 consumes (different warps); every other thread leaves at once.
// Measured on H200 against alternatives: the whole warp polling the barriers was ~15% slower, and
// lanes parked at a barrier beside the polling lane slowed it too; this is within ~5% of a single
// thread doing both roles.
//
// pattern ring:  per-stage full/empty mbarriers (above).
// pattern batch: one thread issues `stages` tiles onto one mbarrier (expect_tx of all of them),
//                waits, reads one word, and issues the next batch: nothing overlaps across batches.
__global__ void __launch_bounds__(64) bw_stream(const __grid_constant__ CUtensorMap map, BwArgs a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[kMaxStages], empty[kMaxStages];
  const unsigned raw = smem_u32(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;
  const unsigned char* base_ptr = smem_raw + (base - raw);
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.stages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    mbar_init_fence();
  }
  __syncthreads();
  const long long cnt = strided_count(blockIdx.x, gridDim.x, a.total * a.passes);
  TileWalk w;
  if (a.col_major)
    w.init(blockIdx.x, gridDim.x, a.tiles_y, a.tiles_x);
  else
    w.init(blockIdx.x, gridDim.x, a.tiles_x, a.tiles_y);
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      a.clk->g0 = globaltimer();
      a.clk->c0 = (unsigned long long)clock64();
    }
    if (a.batch) {
      unsigned acc = 0, ph = 0;
      for (long long j = 0; j < cnt; j += a.stages, ph ^= 1) {
        const int n = (int)(cnt - j < a.stages ? cnt - j : a.stages);
        mbar_arrive_expect(smem_u32(&full[0]), a.tile_bytes * n);
        for (int q = 0; q < n; ++q) {
          const int tx = a.col_major ? w.b : w.a, ty = a.col_major ? w.a : w.b;
          tma_load_2d(base + (unsigned)q * a.stage_stride, &map, tx * a.box_w, ty * a.box_h, smem_u32(&full[0]));
          w.next();
        }
        if (!mbar_wait(smem_u32(&full[0]), ph, a.timeout_cycles)) {
          atomicAdd(a.err, 1u);
          break;
        }
        acc += *reinterpret_cast<const volatile unsigned*>(base_ptr + 4 * (j & 7));
      }
      a.sink[blockIdx.x] = acc;
      if (blockIdx.x == 0) {
        a.clk->c1 = (unsigned long long)clock64();
        a.clk->g1 = globaltimer();
      }
      return;
    }
    int s = 0;
    unsigned k = 0;  // ring round
    for (long long j = 0; j < cnt; ++j) {
      if (j >= a.stages && !mbar_wait(smem_u32(&empty[s]), (k - 1) & 1, a.timeout_cycles)) {
        atomicAdd(a.err, 1u);
        break;
      }
      const int tx = a.col_major ? w.b : w.a, ty = a.col_major ? w.a : w.b;
      mbar_arrive_expect(smem_u32(&full[s]), a.tile_bytes);
      tma_load_2d(base + (unsigned)s * a.stage_stride, &map, tx * a.box_w, ty * a.box_h, smem_u32(&full[s]));
      w.next();
      if (++s == a.stages) {
        s = 0;
        ++k;
      }
    }
  } else if (threadIdx.x == 32 && !a.batch) {
    unsigned acc = 0;
    int s = 0;
    unsigned k = 0;
    for (long long j = 0; j < cnt; ++j) {
      if (!mbar_wait(smem_u32(&full[s]), k & 1, a.timeout_cycles)) {
        atomicAdd(a.err, 1u);
        break;
      }
      acc += *reinterpret_cast<const volatile unsigned*>(base_ptr + (size_t)s * a.stage_stride + 4 * (j & 7));
      mbar_arrive(smem_u32(&empty[s]));
      if (++s == a.stages) {
        s = 0;
        ++k;
      }
    }
    a.sink[blockIdx.x] = acc;
    if (blockIdx.x == 0) {
      a.clk->c1 = (unsigned long long)clock64();
      a.clk->g1 = globaltimer();
    }
  }
}

struct State {
  DevInfo dev;
  int max_smem = 0;
  std::vector<BwPoint> pts, tpts;
  unsigned char* tensor = nullptr;
  unsigned* sink = nullptr;
  unsigned* err = nullptr;
  ClockRec* clk = nullptr;
};
State S;

std::vector<std::string> params_of(const BwPoint& p) {
  return {p.group,
          I(p.size_mb),
          I((long long)p.row_bytes()),
          I(p.inner),
          I(p.rows),
          I(p.tile_bytes()),
          swz_name(p.swizzle()),
          l2_name(p.l2),
          p.col_major ? "col" : "row",
          I(p.stages),
          I(p.cps),
          p.batch ? "batch" : "ring"};
}
const std::vector<std::string> kParamCols = {"group",   "tensor_mb",    "row_bytes", "inner_bytes", "rows",
                                             "tile_bytes", "swizzle",   "l2_promotion", "order",    "stages",
                                             "ctas_per_sm", "pattern"};

void alloc(size_t bytes) {
  CK(cudaMalloc(&S.tensor, bytes));
  CK(cudaMemset(S.tensor, 0x3c, bytes));
  CK(cudaMalloc(&S.sink, 4096 * sizeof(unsigned)));
  CK(cudaMalloc(&S.err, sizeof(unsigned)));
  CK(cudaMalloc(&S.clk, sizeof(ClockRec)));
  S.max_smem = set_max_dyn_smem(bw_stream, S.dev);
}

struct Prepared {
  CUtensorMap map;
  BwArgs args;
  unsigned grid;
  size_t smem;
  int occupancy;
};

Prepared prepare(const BwPoint& p) {
  alignas(64) Prepared q;
  const size_t rows = p.tensor_bytes() / p.row_bytes();
  encode_2d(&q.map, dtype_of("bf16"), S.tensor, p.row_bytes(), rows, p.inner, p.rows, p.swizzle(), p.l2);
  BwArgs& a = q.args;
  a = BwArgs();
  a.tiles_x = (int)(p.row_bytes() / p.inner);
  a.tiles_y = (int)(rows / p.rows);
  a.total = (long long)a.tiles_x * a.tiles_y;
  a.passes = p.eff_passes();
  a.col_major = p.col_major;
  a.batch = p.batch;
  a.stages = p.stages;
  a.tile_bytes = p.tile_bytes();
  a.stage_stride = (a.tile_bytes + 1023u) & ~1023u;
  a.box_w = p.inner / 2;
  a.box_h = p.rows;
  a.timeout_cycles = kWaitLong;
  a.sink = S.sink;
  a.err = S.err;
  a.clk = S.clk;
  const size_t need = (size_t)p.stages * a.stage_stride + 1024;
  q.smem = smem_for_occupancy(need, p.cps, S.dev);
  if (q.smem > (size_t)S.max_smem) throw PointSkip("shared memory: need " + I((long long)q.smem));
  q.grid = (unsigned)(S.dev.sms * p.cps);
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&q.occupancy, bw_stream, 64, q.smem));
  return q;
}

Result measure(size_t idx, int reps) {
  const BwPoint& p = S.pts[idx];
  Prepared q = prepare(p);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaMemset(S.err, 0, sizeof(unsigned)));
  bw_stream<<<q.grid, 64, q.smem>>>(q.map, q.args);  // warm-up (and L2 fill for the 16 MB tensor)
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> ms, mhz;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(e0));
    bw_stream<<<q.grid, 64, q.smem>>>(q.map, q.args);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    ms.push_back(event_ms(e0, e1));
    ClockRec cr;
    CK(cudaMemcpy(&cr, S.clk, sizeof(cr), cudaMemcpyDeviceToHost));
    mhz.push_back(clock_mhz(cr));
  }
  unsigned err = 0;
  CK(cudaMemcpy(&err, S.err, sizeof(err), cudaMemcpyDeviceToHost));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  const long long tiles = q.args.total * q.args.passes;
  const double bytes = (double)tiles * q.args.tile_bytes;
  const double sec = median(ms) / 1000.0;
  Result res;
  res.values = {I(q.grid),
                I(q.occupancy),
                I((long long)q.smem),
                I(q.args.passes),
                I(tiles),
                F(bytes, 0),
                F(sec, 7),
                F(bytes / sec / 1e9, 1),
                F(bytes / (vmin(ms) / 1000.0) / 1e9, 1),
                F((double)tiles / S.dev.sms, 1),
                F(median(mhz), 1),
                I(reps)};
  if (err) res.status = "timeout(" + I(err) + ")";
  else if (q.occupancy != p.cps) res.status = "occupancy_" + I(q.occupancy);
  return res;
}

// ---- traffic mode (ncu): one launch of one point, nothing else called bw_stream
int traffic_mode(int argc, char** argv) {
  if (arg_flag(argc, argv, "--list-traffic")) {
    printf("tpoint");
    for (auto& c : kParamCols) printf(",%s", c.c_str());
    printf(",passes\n");
    for (size_t i = 0; i < S.tpts.size(); ++i) {
      printf("%zu", i);
      for (auto& v : params_of(S.tpts[i])) printf(",%s", v.c_str());
      printf(",%d\n", S.tpts[i].eff_passes());
    }
    return 0;
  }
  const char* t = arg_value(argc, argv, "--traffic");
  if (!t) return -1;
  size_t i = strtoull(t, nullptr, 10);
  if (i >= S.tpts.size()) {
    fprintf(stderr, "no traffic point %zu\n", i);
    return 2;
  }
  try {
    CK(cudaSetDevice(0));
    S.dev = dev_info();
    alloc(S.tpts[i].tensor_bytes());
    Prepared q = prepare(S.tpts[i]);
    CK(cudaMemset(S.err, 0, sizeof(unsigned)));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventRecord(e0));
    bw_stream<<<q.grid, 64, q.smem>>>(q.map, q.args);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    unsigned err = 0;
    CK(cudaMemcpy(&err, S.err, sizeof(err), cudaMemcpyDeviceToHost));
    fprintf(stderr, "traffic point %zu: grid %u smem %zu occupancy %d tiles %lld, %.3f ms, timeouts %u\n", i, q.grid,
            q.smem, q.occupancy, q.args.total * q.args.passes, event_ms(e0, e1), err);
    return err ? 5 : 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "traffic point %zu: %s\n", i, e.what());
    return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  S.pts = make_points();
  S.tpts = make_traffic_points();
  Family fam;
  fam.name = "bandwidth";
  fam.param_cols = kParamCols;
  fam.result_cols = {"grid",    "occupancy", "smem_bytes", "passes",   "tiles",       "bytes",
                     "seconds", "gbps",      "gbps_best",  "tiles_per_sm", "sm_mhz", "reps"};
  for (auto& p : S.pts) fam.points.push_back(params_of(p));
  fam.default_reps = 7;
  fam.extra = traffic_mode;
  fam.setup = [](int) {
    S.dev = dev_info();
    alloc(kBigBytes);
    warmup_kernel<<<S.dev.sms, 128>>>(50000000ull, S.sink);
    CK(cudaDeviceSynchronize());
  };
  fam.measure = measure;
  return run_points(fam, argc, argv);
}
