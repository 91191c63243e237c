// store_reduce.csv: TMA tile stores (cp.async.bulk.tensor global.shared::cta) and reductions
// (cp.reduce.async.bulk.tensor .add on f32 and bf16, .min on u32), completion through bulk groups.
//
// kind=throughput: every SM busy; a persistent kernel (grid = SMs x CTAs-per-SM), thread 0 of each
//   CTA writes tiles i, i+grid, ... (row-major) of a 2D tensor from an S-stage shared-memory ring:
//   before reusing a stage it waits with cp.async.bulk.wait_group.read S-1, after the last tile with
//   wait_group 0. Tiles: 64x64 bf16 or 32x64 f32/u32 (8 KB, 128-byte rows). Tensor 1 GB (one pass)
//   or 16 MB (64 passes). Bandwidth = tile bytes written / cudaEvent time (reductions also read
//   the destination: DRAM traffic is about twice that).
// kind=latency: one CTA, one thread, after an L2 eviction: issue, commit, wait_group.read 0
//   (source read: read_cycles), wait_group 0 (writes done: done_cycles); then the same operation
//   again at once (warm). Tiles of 128-byte rows x 16/64/256 rows.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 store_reduce.cu -o store_reduce -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

struct Op {
  const char* name;  // store | add | min
  int code;          // BulkOp
  const char* dtype;
  unsigned fill;     // shared-memory source word
};
const Op kOps[] = {{"store", kOpStore, "bf16", 0x3f803f80u},
                   {"store", kOpStore, "f32", 0x3f800000u},
                   {"add", kOpAdd, "f32", 0x3f800000u},
                   {"add", kOpAdd, "bf16", 0x3f803f80u},
                   {"min", kOpMin, "u32", 0x12345678u}};

struct SrPoint {
  std::string kind;  // throughput | latency
  int op = 0;        // index into kOps
  int size_mb = 1024;
  int rows = 64;
  int stages = 4;
  int cps = 1;
  unsigned tile_bytes() const { return 128u * rows; }
  size_t row_bytes() const { return kind == "latency" ? 4096 : size_mb >= 1024 ? 32768 : 8192; }
};

std::vector<SrPoint> make_points() {
  std::vector<SrPoint> v;
  const int sc[4][2] = {{1, 1}, {2, 1}, {4, 1}, {4, 2}};
  for (int op = 0; op < 5; ++op)
    for (int size : {16, 1024})
      for (auto& x : sc) {
        SrPoint p;
        p.kind = "throughput";
        p.op = op;
        p.size_mb = size;
        p.stages = x[0];
        p.cps = x[1];
        v.push_back(p);
      }
  for (int op = 0; op < 5; ++op)
    for (int rows : {16, 64, 256}) {
      SrPoint p;
      p.kind = "latency";
      p.op = op;
      p.size_mb = 0;
      p.rows = rows;
      p.stages = 1;
      v.push_back(p);
    }
  return v;
}

struct SrArgs {
  int tiles_x;
  long long total;
  int passes;
  int stages;
  unsigned stage_stride;
  int box_w, box_h;
  unsigned fill;
  unsigned long long spin_ns;
  unsigned long long* out;  // latency: 4 cycle counts
  ClockRec* clk;
};

__device__ __forceinline__ unsigned fill_smem(unsigned char* smem_raw, unsigned bytes, unsigned fill,
                                              unsigned char** base_ptr) {
  const unsigned raw = smem_u32(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;
  *base_ptr = smem_raw + (base - raw);
  unsigned* w = reinterpret_cast<unsigned*>(*base_ptr);
  for (unsigned i = threadIdx.x; i < bytes / 4; i += blockDim.x) w[i] = fill;
  fence_proxy_async_smem();
  __syncthreads();
  return base;
}

template <int OP>
__global__ void __launch_bounds__(32) sr_stream(const __grid_constant__ CUtensorMap map, SrArgs a) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* base_ptr;
  const unsigned base = fill_smem(smem_raw, a.stages * a.stage_stride, a.fill, &base_ptr);
  if (threadIdx.x != 0) return;
  const bool rec = blockIdx.x == 0;
  ClockRec cr;
  if (rec) clock_begin(&cr);
  const long long cnt = strided_count(blockIdx.x, gridDim.x, a.total * a.passes);
  TileWalk w;
  w.init(blockIdx.x, gridDim.x, a.tiles_x, (int)(a.total / a.tiles_x));
  int s = 0;
  for (long long j = 0; j < cnt; ++j) {
    if (j >= a.stages) bulk_wait_read_dyn(a.stages - 1);
    tma_store_2d<OP>(&map, w.a * a.box_w, w.b * a.box_h, base + (unsigned)s * a.stage_stride);
    bulk_commit();
    w.next();
    if (++s == a.stages) s = 0;
  }
  bulk_wait_all();
  if (rec) {
    clock_end(&cr);
    *a.clk = cr;
  }
}

template <int OP>
__global__ void sr_latency(const __grid_constant__ CUtensorMap map, SrArgs a) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* base_ptr;
  ClockRec cr;
  clock_begin(&cr);
  const unsigned base = fill_smem(smem_raw, a.stage_stride, a.fill, &base_ptr);
  if (threadIdx.x != 0) return;
  long long t[6];
  unsigned long long m = reinterpret_cast<unsigned long long>(&map);
  unsigned src = base;
  asm volatile("" : "+l"(m), "+r"(src));  // operands ready before the clock is read
  for (int rep = 0; rep < 2; ++rep) {
    t[3 * rep] = clock64();
    tma_store_2d<OP>(reinterpret_cast<const void*>(m), 0, 0, src);
    bulk_commit();
    bulk_wait_read<0>();
    t[3 * rep + 1] = clock64();
    bulk_wait_all();
    t[3 * rep + 2] = clock64();
  }
  a.out[0] = (unsigned long long)(t[1] - t[0]);
  a.out[1] = (unsigned long long)(t[2] - t[0]);
  a.out[2] = (unsigned long long)(t[4] - t[3]);
  a.out[3] = (unsigned long long)(t[5] - t[3]);
  while (globaltimer() - cr.g0 < a.spin_ns) {
  }
  clock_end(&cr);
  *a.clk = cr;
}

using Kernel = void (*)(CUtensorMap, SrArgs);
Kernel stream_kernel(int code) {
  return code == kOpStore ? sr_stream<kOpStore> : code == kOpAdd ? sr_stream<kOpAdd> : sr_stream<kOpMin>;
}
Kernel latency_kernel(int code) {
  return code == kOpStore ? sr_latency<kOpStore> : code == kOpAdd ? sr_latency<kOpAdd> : sr_latency<kOpMin>;
}

struct State {
  DevInfo dev;
  std::vector<SrPoint> pts;
  unsigned char* tensor = nullptr;
  void* flush = nullptr;
  unsigned long long* out = nullptr;
  ClockRec* clk = nullptr;
};
State S;
constexpr size_t kTensor = 1ull << 30;

Result measure_throughput(const SrPoint& p, int reps) {
  const Op& op = kOps[p.op];
  Dtype dt = dtype_of(op.dtype);
  const size_t tensor_bytes = (size_t)p.size_mb << 20;
  const size_t rows = tensor_bytes / p.row_bytes();
  alignas(64) CUtensorMap map;
  encode_2d(&map, dt, S.tensor, p.row_bytes(), rows, 128, p.rows, 0, 0);
  SrArgs a = {};
  a.tiles_x = (int)(p.row_bytes() / 128);
  a.total = (long long)a.tiles_x * (long long)(rows / p.rows);
  a.passes = (int)std::max<size_t>(1, kTensor / tensor_bytes);
  a.stages = p.stages;
  a.stage_stride = (p.tile_bytes() + 1023u) & ~1023u;
  a.box_w = 128 / dt.size;
  a.box_h = p.rows;
  a.fill = op.fill;
  a.clk = S.clk;
  Kernel k = stream_kernel(op.code);
  const size_t smem = smem_for_occupancy((size_t)p.stages * a.stage_stride + 1024, p.cps, S.dev);
  int occ = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, 32, smem));
  const unsigned grid = (unsigned)(S.dev.sms * p.cps);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  k<<<grid, 32, smem>>>(map, a);  // warm-up
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> ms, mhz;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(e0));
    k<<<grid, 32, smem>>>(map, a);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    ms.push_back(event_ms(e0, e1));
    ClockRec cr;
    CK(cudaMemcpy(&cr, S.clk, sizeof(cr), cudaMemcpyDeviceToHost));
    mhz.push_back(clock_mhz(cr));
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  const long long tiles = a.total * a.passes;
  const double bytes = (double)tiles * p.tile_bytes();
  const double sec = median(ms) / 1000.0;
  Result res;
  res.values = {I(grid),
                I(occ),
                I((long long)smem),
                I(a.passes),
                I(tiles),
                F(bytes, 0),
                F(sec, 7),
                F(bytes / sec / 1e9, 1),
                F(bytes / (vmin(ms) / 1000.0) / 1e9, 1),
                "", "", "", "", "", "", "", "",
                F(median(mhz), 1),
                I(reps)};
  if (occ != p.cps) res.status = "occupancy_" + I(occ);
  return res;
}

Result measure_latency(const SrPoint& p, int reps) {
  const Op& op = kOps[p.op];
  Dtype dt = dtype_of(op.dtype);
  SrArgs a = {};
  a.stage_stride = (p.tile_bytes() + 1023u) & ~1023u;
  a.fill = op.fill;
  a.spin_ns = 100000ull;
  a.out = S.out;
  a.clk = S.clk;
  Kernel k = latency_kernel(op.code);
  const size_t smem = a.stage_stride + 1024;
  std::vector<double> cr_, cd, wr, wd, mhz;
  for (int r = 0; r < reps; ++r) {
    alignas(64) CUtensorMap map;
    encode_2d(&map, dt, S.tensor + (size_t)(r % 16) * (4u << 20), p.row_bytes(), 512, 128, p.rows, 0, 0);
    flush_l2(S.flush, r + 1);
    k<<<1, 32, smem>>>(map, a);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned long long o[4];
    CK(cudaMemcpy(o, S.out, sizeof(o), cudaMemcpyDeviceToHost));
    ClockRec c;
    CK(cudaMemcpy(&c, S.clk, sizeof(c), cudaMemcpyDeviceToHost));
    cr_.push_back((double)o[0]);
    cd.push_back((double)o[1]);
    wr.push_back((double)o[2]);
    wd.push_back((double)o[3]);
    mhz.push_back(clock_mhz(c));
  }
  Result res;
  res.values = {"1", "", I((long long)smem), "", "1", I(p.tile_bytes()), "", "", "",
                F(median(cr_), 1), F(median(cd), 1), F(median(wr), 1), F(median(wd), 1),
                F(vmin(cr_), 0), F(vmin(cd), 0), F(vmin(wr), 0), F(vmin(wd), 0),
                F(median(mhz), 1), I(reps)};
  return res;
}

Result measure(size_t idx, int reps) {
  const SrPoint& p = S.pts[idx];
  return p.kind == "latency" ? measure_latency(p, std::max(reps, 15)) : measure_throughput(p, reps);
}

}  // namespace

int main(int argc, char** argv) {
  S.pts = make_points();
  Family fam;
  fam.name = "store_reduce";
  fam.param_cols = {"kind", "op", "dtype", "tensor_mb", "row_bytes", "inner_bytes", "rows", "tile_bytes", "stages",
                    "ctas_per_sm"};
  fam.result_cols = {"grid",           "occupancy",      "smem_bytes",     "passes",         "tiles",
                     "bytes",          "seconds",        "gbps",           "gbps_best",      "cold_read_cycles",
                     "cold_done_cycles", "warm_read_cycles", "warm_done_cycles", "cold_read_min", "cold_done_min",
                     "warm_read_min",  "warm_done_min",  "sm_mhz",         "reps"};
  for (auto& p : S.pts) {
    const Op& op = kOps[p.op];
    fam.points.push_back({p.kind, op.name, op.dtype, p.kind == "latency" ? "" : I(p.size_mb), I((long long)p.row_bytes()),
                          "128", I(p.rows), I(p.tile_bytes()), p.kind == "latency" ? "" : I(p.stages),
                          p.kind == "latency" ? "" : I(p.cps)});
  }
  fam.default_reps = 5;
  fam.setup = [](int) {
    S.dev = dev_info();
    CK(cudaMalloc(&S.tensor, kTensor));
    CK(cudaMemset(S.tensor, 0, kTensor));
    CK(cudaMalloc(&S.flush, kFlushBytes));
    CK(cudaMalloc(&S.out, 8 * sizeof(unsigned long long)));
    CK(cudaMalloc(&S.clk, sizeof(ClockRec)));
    for (int code : {kOpStore, kOpAdd, kOpMin}) {
      set_max_dyn_smem(stream_kernel(code), S.dev);
      set_max_dyn_smem(latency_kernel(code), S.dev);
    }
    unsigned* sink;
    CK(cudaMalloc(&sink, 64));
    warmup_kernel<<<S.dev.sms, 128>>>(50000000ull, sink);
    CK(cudaDeviceSynchronize());
  };
  fam.measure = measure;
  return run_points(fam, argc, argv);
}
