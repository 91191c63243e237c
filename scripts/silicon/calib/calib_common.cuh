// Shared pieces of the TMA calibration programs (scripts/silicon/calib/*.cu): inline-PTX wrappers
// for the bulk tensor copy engine, mbarriers with timeouts and cluster primitives, plus the host
// side every program shares (CSV writer, statistics, tensor-map encoding, the point loop that
// survives faults).
//
// PTX follows scripts/silicon/tma_capture.cu where it exists there (loads, im2col, stores,
// reductions, mbarrier arrive.expect_tx / try_wait); multicast, remote arrive, prefetch.tensormap
// and fence.proxy.tensormap are new here.
//
// Every program built on this header has the same command line (see run_points below):
//   PROG --out FILE.csv [--start K] [--only K] [--next FILE] [--reps N]
//   PROG --list                      print the point table (no GPU needed)
//   PROG --count                     print the number of points (no GPU needed)
//   PROG --mark-fault K --status S --out FILE.csv   append a row for point K with status S
// A point whose CUDA call fails writes a row with status fault:<error>, records the next point in
// --next and exits with status 3 (the context is probably dead); run_calibration.sh restarts the
// program at that point. A crash or hang is recorded by the driver through --mark-fault.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace calib {

// =====================================================================================  device

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ long long clk() { return clock64(); }

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Busy-wait for `ns` nanoseconds of globaltimer.
__device__ __forceinline__ void spin_ns(unsigned long long ns) {
  const unsigned long long t0 = globaltimer();
  while (globaltimer() - t0 < ns) {
  }
}

// ---- clock record: c0/g0 at the start, c1/g1 at the end of a kernel, in one thread
// sm_mhz = (c1 - c0) / (g1 - g0) * 1000
struct ClockRec {
  unsigned long long c0, g0, c1, g1;
};
__device__ __forceinline__ void clock_begin(ClockRec* r) {
  r->g0 = globaltimer();
  r->c0 = (unsigned long long)clock64();
}
__device__ __forceinline__ void clock_end(ClockRec* r) {
  r->c1 = (unsigned long long)clock64();
  r->g1 = globaltimer();
}

// ---- mbarrier
__device__ __forceinline__ void mbar_init(unsigned mbar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(mbar), "r"(count) : "memory");
}
// Makes initialised barriers visible to the async proxy and to the other CTAs of the cluster.
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_expect(unsigned mbar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(mbar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned mbar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(mbar) : "memory");
}
// Arrive on the barrier at the same shared-memory offset in CTA `rank` of this cluster.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned mbar, unsigned rank) {
  asm volatile(
      "{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %0, %1; "
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra]; }" ::"r"(mbar),
      "r"(rank)
      : "memory");
}
__device__ __forceinline__ bool mbar_try(unsigned mbar, unsigned parity) {
  unsigned ok;
  asm volatile(
      "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(ok)
      : "r"(mbar), "r"(parity)
      : "memory");
  return ok != 0;
}
// Wait for phase `parity` to complete, at most `cycles` SM clock cycles. True when it completed.
// The timeout counts clock64 (a cheap register read): reading %globaltimer in this loop cost ~10%
// of the streaming throughput on H200. A completed phase costs one try_wait (~3 cycles).
constexpr unsigned long long kWaitLong = 1000000000ull;  // ~0.5 s at 2 GHz: only a broken pipeline
constexpr unsigned long long kWaitShort = 40000000ull;   // ~20 ms: single operations
__device__ __forceinline__ bool mbar_wait(unsigned mbar, unsigned parity, unsigned long long cycles) {
  if (mbar_try(mbar, parity)) return true;
  const long long t0 = clock64();
  while (true) {
    if (mbar_try(mbar, parity)) return true;
    if ((unsigned long long)(clock64() - t0) > cycles) return false;
  }
}

// ---- fences
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// A tensor map written by the host (cudaMemcpy) into global memory, read by the async proxy:
// the documented acquire pattern (CUDA programming guide, "tensor map in global memory").
__device__ __forceinline__ void tensormap_acquire(const void* map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(map) : "memory");
}
__device__ __forceinline__ void tensormap_prefetch(const void* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// ---- cluster
__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_id_x() {
  unsigned r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_count_x() {
  unsigned r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}
// Every thread of every CTA of the cluster must call this (not the .aligned form: callers may
// arrive from divergent code).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

// ---- bulk tensor loads (tile mode), rank 1..5; c = coordinates, innermost first
__device__ __forceinline__ void tma_load(int rank, unsigned dst, const void* map, const int* c, unsigned mbar) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  switch (rank) {
    case 1:
      asm volatile(
          "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];" ::"r"(dst),
          "l"(m), "r"(c[0]), "r"(mbar)
          : "memory");
      break;
    case 2:
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
              dst),
          "l"(m), "r"(c[0]), "r"(c[1]), "r"(mbar)
          : "memory");
      break;
    case 3:
      asm volatile(
          "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(
              dst),
          "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(mbar)
          : "memory");
      break;
    case 4:
      asm volatile(
          "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(
              dst),
          "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(mbar)
          : "memory");
      break;
    default:
      asm volatile(
          "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(
              dst),
          "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(mbar)
          : "memory");
      break;
  }
}
__device__ __forceinline__ void tma_load_2d(unsigned dst, const void* map, int x, int y, unsigned mbar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(mbar)
      : "memory");
}
// Multicast: the tile lands at offset `dst` of every CTA in `mask` and signals the mbarrier at
// offset `mbar` of each of them.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const void* map, int x, int y, unsigned mbar,
                                                      unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(mbar), "h"(mask)
      : "memory");
}
// im2col, rank 4 (NHWC: c = {C, W, H, N}), offsets {W, H}
__device__ __forceinline__ void tma_load_im2col_4d(unsigned dst, const void* map, const int* c, unsigned mbar,
                                                   unsigned short ow, unsigned short oh) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6], "
      "{%7, %8};" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(mbar), "h"(ow),
      "h"(oh)
      : "memory");
}

// ---- bulk tensor stores and reductions (2D tile), completion through bulk groups
enum BulkOp { kOpStore = 0, kOpAdd = 1, kOpMin = 2 };
template <int OP>
__device__ __forceinline__ void tma_store_2d(const void* map, int x, int y, unsigned src) {
  const unsigned long long m = reinterpret_cast<unsigned long long>(map);
  if (OP == kOpStore)
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(m), "r"(x),
                 "r"(y), "r"(src)
                 : "memory");
  else if (OP == kOpAdd)
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(m),
                 "r"(x), "r"(y), "r"(src)
                 : "memory");
  else
    asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(m),
                 "r"(x), "r"(y), "r"(src)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
// Wait until at most N bulk groups still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void bulk_wait_read_dyn(int n) {
  switch (n) {
    case 0: bulk_wait_read<0>(); break;
    case 1: bulk_wait_read<1>(); break;
    case 2: bulk_wait_read<2>(); break;
    case 3: bulk_wait_read<3>(); break;
    case 4: bulk_wait_read<4>(); break;
    case 5: bulk_wait_read<5>(); break;
    case 6: bulk_wait_read<6>(); break;
    default: bulk_wait_read<7>(); break;
  }
}

// Walks the tiles first, first+step, first+2*step, ... of an na x nb tile grid (a: the fast axis)
// with additions only: a 64-bit division per tile in a single-thread producer loop costs more
// cycles than the copy engine needs per tile. Passes over the grid wrap around.
struct TileWalk {
  int a, b, na, nb, sa, sb;
  __device__ __forceinline__ void init(long long first, long long step, int na_, int nb_) {
    na = na_;
    nb = nb_;
    const long long total = (long long)na * nb;
    first %= total;
    a = (int)(first % na);
    b = (int)(first / na);
    sa = (int)(step % na);
    sb = (int)((step / na) % nb);
  }
  __device__ __forceinline__ void next() {
    a += sa;
    b += sb;
    if (a >= na) {
      a -= na;
      ++b;
    }
    if (b >= nb) b -= nb;
  }
};
// Number of items first, first+step, ... below n.
__device__ __forceinline__ long long strided_count(long long first, long long step, long long n) {
  return first < n ? (n - first + step - 1) / step : 0;
}

// Kernel that keeps the SMs busy for `ns` nanoseconds (clock ramp-up before measuring).
__global__ void warmup_kernel(unsigned long long ns, unsigned* sink) {
  const unsigned long long t0 = globaltimer();
  unsigned x = threadIdx.x;
  while (globaltimer() - t0 < ns) x = x * 1664525u + 1013904223u;
  if (x == 0x12345678u) sink[0] = x;
}

// Reads a region with ordinary loads (makes it L2-resident without touching any TMA state).
__global__ void touch_kernel(const uint4* p, size_t n16, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

// =====================================================================================  host

// A CUDA call failed: the context may be unusable, the program records the point and exits 3.
struct CudaFault : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// This point alone cannot run (the driver refused the tensor map, ...): recorded, the loop goes on.
struct PointSkip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    char buf[512];
    snprintf(buf, sizeof(buf), "%s (%s:%d %s)", cudaGetErrorName(e), file, line, what);
    throw CudaFault(buf);
  }
}
#define CK(x) ::calib::check_cuda((x), #x, __FILE__, __LINE__)

inline void check_cu_encode(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorName(r, &s);
    throw PointSkip(std::string("encode_error:") + (s ? s : "?") + ":" + what);
  }
}

// ---- formatting
inline std::string I(long long v) { return std::to_string(v); }
inline std::string F(double v, int prec = 2) {
  if (!std::isfinite(v)) return "";
  char b[64];
  snprintf(b, sizeof(b), "%.*f", prec, v);
  return b;
}

// ---- statistics
inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
inline double mean(const std::vector<double>& v) {
  if (v.empty()) return NAN;
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}
inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  double idx = p / 100.0 * (v.size() - 1);
  size_t lo = (size_t)idx, hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (idx - lo);
}
inline double vmin(const std::vector<double>& v) { return v.empty() ? NAN : *std::min_element(v.begin(), v.end()); }
inline double vmax(const std::vector<double>& v) { return v.empty() ? NAN : *std::max_element(v.begin(), v.end()); }
inline double clock_mhz(const ClockRec& r) {
  return r.g1 > r.g0 ? (double)(r.c1 - r.c0) / (double)(r.g1 - r.g0) * 1000.0 : NAN;
}

// ---- device facts every program needs
struct DevInfo {
  int sms = 0, l2 = 0, smem_optin = 0, smem_per_sm = 0;
  std::string name;
};
inline DevInfo dev_info() {
  DevInfo d;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  d.sms = p.multiProcessorCount;
  d.l2 = p.l2CacheSize;
  d.smem_optin = (int)p.sharedMemPerBlockOptin;
  d.smem_per_sm = (int)p.sharedMemPerMultiprocessor;
  d.name = p.name;
  return d;
}

// Evicts L2 (H100/H200 L2 is 50-60 MB) by writing a 256 MB buffer, in `stream`.
constexpr size_t kFlushBytes = 256ull << 20;
inline void flush_l2(void* buf, int salt, cudaStream_t s = 0) {
  CK(cudaMemsetAsync(buf, salt & 0xff, kFlushBytes, s));
}

// ---- tensor maps
inline CUtensorMapSwizzle swizzle_of(int span) {
  return span == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
         : span == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
         : span == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                       : CU_TENSOR_MAP_SWIZZLE_NONE;
}
inline CUtensorMapL2promotion l2promo_of(int bytes) {
  return bytes == 64 ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
         : bytes == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
         : bytes == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                        : CU_TENSOR_MAP_L2_PROMOTION_NONE;
}
inline std::string swz_name(int span) { return span ? std::to_string(span) + "B" : "none"; }
inline std::string l2_name(int bytes) { return bytes ? std::to_string(bytes) + "B" : "none"; }

struct Dtype {
  const char* name;
  CUtensorMapDataType code;
  int size;
};
inline Dtype dtype_of(const std::string& s) {
  if (s == "u8") return {"u8", CU_TENSOR_MAP_DATA_TYPE_UINT8, 1};
  if (s == "bf16") return {"bf16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2};
  if (s == "f16") return {"f16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2};
  if (s == "f32") return {"f32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4};
  if (s == "u32") return {"u32", CU_TENSOR_MAP_DATA_TYPE_UINT32, 4};
  throw PointSkip("unknown dtype " + s);
}

// Dense-or-pitched tiled tensor map. dims/box innermost first; strides_bytes has rank-1 entries.
inline void encode_tiled(CUtensorMap* map, const Dtype& dt, int rank, void* addr, const unsigned long long* dims,
                         const unsigned long long* strides_bytes, const unsigned* box, int swizzle_span, int l2promo) {
  cuuint64_t d[5] = {1, 1, 1, 1, 1}, s[4] = {0, 0, 0, 0};
  cuuint32_t b[5] = {1, 1, 1, 1, 1}, e[5] = {1, 1, 1, 1, 1};
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    b[i] = box[i];
  }
  for (int i = 0; i + 1 < rank; ++i) s[i] = strides_bytes[i];
  memset(map, 0, sizeof(*map));
  check_cu_encode(cuTensorMapEncodeTiled(map, dt.code, (cuuint32_t)rank, addr, d, s, b, e, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                         swizzle_of(swizzle_span), l2promo_of(l2promo), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                  "cuTensorMapEncodeTiled");
}

// 2D row-major tensor of `rows` rows of `row_bytes` bytes; box = box_inner_bytes x box_rows.
inline void encode_2d(CUtensorMap* map, const Dtype& dt, void* addr, unsigned long long row_bytes,
                      unsigned long long rows, unsigned box_inner_bytes, unsigned box_rows, int swizzle_span,
                      int l2promo) {
  unsigned long long dims[2] = {row_bytes / dt.size, rows};
  unsigned long long strides[1] = {row_bytes};
  unsigned box[2] = {box_inner_bytes / (unsigned)dt.size, box_rows};
  encode_tiled(map, dt, 2, addr, dims, strides, box, swizzle_span, l2promo);
}

// ---- CSV output (appends; header only into an empty file)
class Csv {
 public:
  Csv(const std::string& path, const std::vector<std::string>& header) {
    f_ = fopen(path.c_str(), "a+");
    if (!f_) throw std::runtime_error("cannot open " + path);
    fseek(f_, 0, SEEK_END);
    if (ftell(f_) == 0) row(header);
  }
  ~Csv() {
    if (f_) fclose(f_);
  }
  Csv(const Csv&) = delete;
  Csv& operator=(const Csv&) = delete;
  void row(const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      const std::string& c = cells[i];
      bool quote = c.find_first_of(",\"\n") != std::string::npos;
      if (quote) {
        std::string q = "\"";
        for (char ch : c) q += ch == '"' ? std::string("\"\"") : std::string(1, ch == '\n' ? ' ' : ch);
        fprintf(f_, "%s\"", q.c_str());
      } else {
        fputs(c.c_str(), f_);
      }
      fputc(i + 1 < cells.size() ? ',' : '\n', f_);
    }
    fflush(f_);
  }

 private:
  FILE* f_ = nullptr;
};

// ---- the point loop
struct Result {
  std::vector<std::string> values;  // one per result column
  std::string status = "ok";
};

struct Family {
  std::string name;                                 // for messages
  std::vector<std::string> param_cols, result_cols;
  std::vector<std::vector<std::string>> points;     // parameter values, one vector per point
  std::function<void(int reps)> setup;              // after the CUDA context exists
  std::function<Result(size_t point, int reps)> measure;
  int default_reps = 15;
  // optional extra command-line modes (e.g. --traffic for ncu); return -1 when not handled
  std::function<int(int argc, char** argv)> extra;
};

// Test hook for the fault handling: CALIB_FAULT_AT="family:point:trap,family:point:hang" makes
// that point trap (sticky error, the program exits 3) or hang (the driver's watchdog kills it).
__global__ void trap_kernel() { asm volatile("trap;"); }
__global__ void hang_kernel(volatile unsigned* flag) {
  while (*flag == 0u) {
  }
}
inline void maybe_inject_fault(const std::string& family, size_t point) {
  const char* spec = getenv("CALIB_FAULT_AT");
  if (!spec) return;
  std::string s = spec;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t end = s.find(',', pos);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(pos, end - pos);
    pos = end + 1;
    size_t a = item.find(':'), b = item.rfind(':');
    if (a == std::string::npos || b == a) continue;
    if (item.substr(0, a) != family || strtoull(item.substr(a + 1, b - a - 1).c_str(), nullptr, 10) != point) continue;
    fprintf(stderr, "%s: injecting %s at point %zu\n", family.c_str(), item.substr(b + 1).c_str(), point);
    if (item.substr(b + 1) == "hang") {
      unsigned* flag;
      CK(cudaMalloc(&flag, sizeof(unsigned)));
      CK(cudaMemset(flag, 0, sizeof(unsigned)));
      hang_kernel<<<1, 1>>>(flag);
    } else {
      trap_kernel<<<1, 1>>>();
    }
    CK(cudaDeviceSynchronize());
  }
}

inline void write_next(const std::string& path, size_t v) {
  if (path.empty()) return;
  FILE* f = fopen(path.c_str(), "w");
  if (!f) return;
  fprintf(f, "%zu\n", v);
  fclose(f);
}

inline const char* arg_value(int argc, char** argv, const char* key) {
  for (int i = 1; i + 1 < argc; ++i)
    if (!strcmp(argv[i], key)) return argv[i + 1];
  return nullptr;
}
// "3,9,18" -> {3, 9, 18} (the --only lists of the programs' extra modes).
inline std::vector<size_t> index_list(const char* text) {
  std::vector<size_t> v;
  for (const char* c = text; c && *c;) {
    v.push_back(strtoull(c, nullptr, 10));
    while (*c && *c != ',') ++c;
    if (*c) ++c;
  }
  return v;
}
inline bool arg_flag(int argc, char** argv, const char* key) {
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], key)) return true;
  return false;
}

inline int run_points(Family& fam, int argc, char** argv) {
  if (fam.extra) {
    int r = fam.extra(argc, argv);
    if (r >= 0) return r;
  }
  std::vector<std::string> header = {"point"};
  header.insert(header.end(), fam.param_cols.begin(), fam.param_cols.end());
  header.insert(header.end(), fam.result_cols.begin(), fam.result_cols.end());
  header.push_back("status");
  if (arg_flag(argc, argv, "--count")) {
    printf("%zu\n", fam.points.size());
    return 0;
  }
  if (arg_flag(argc, argv, "--list")) {
    std::vector<std::string> h = {"point"};
    h.insert(h.end(), fam.param_cols.begin(), fam.param_cols.end());
    for (size_t i = 0; i < h.size(); ++i) printf("%s%c", h[i].c_str(), i + 1 < h.size() ? ',' : '\n');
    for (size_t p = 0; p < fam.points.size(); ++p) {
      printf("%zu", p);
      for (auto& v : fam.points[p]) printf(",%s", v.c_str());
      printf("\n");
    }
    return 0;
  }
  const char* out = arg_value(argc, argv, "--out");
  if (!out) {
    fprintf(stderr, "usage: %s --out FILE.csv [--start K] [--only K] [--next FILE] [--reps N] | --list | --count\n",
            argv[0]);
    return 2;
  }
  Csv csv(out, header);
  auto row_for = [&](size_t p, const Result& r) {
    std::vector<std::string> cells = {I((long long)p)};
    cells.insert(cells.end(), fam.points[p].begin(), fam.points[p].end());
    for (size_t i = 0; i < fam.result_cols.size(); ++i) cells.push_back(i < r.values.size() ? r.values[i] : "");
    cells.push_back(r.status);
    return cells;
  };
  if (const char* mf = arg_value(argc, argv, "--mark-fault")) {
    size_t p = strtoull(mf, nullptr, 10);
    const char* st = arg_value(argc, argv, "--status");
    if (p < fam.points.size()) {
      Result r;
      r.status = st ? st : "fault:process";
      csv.row(row_for(p, r));
    }
    return 0;
  }
  size_t start = 0, stop = fam.points.size();
  if (const char* s = arg_value(argc, argv, "--start")) start = strtoull(s, nullptr, 10);
  if (const char* s = arg_value(argc, argv, "--only")) {
    start = strtoull(s, nullptr, 10);
    stop = std::min(stop, start + 1);
  }
  int reps = fam.default_reps;
  if (const char* s = arg_value(argc, argv, "--reps")) reps = std::max(1, atoi(s));
  std::string next = arg_value(argc, argv, "--next") ? arg_value(argc, argv, "--next") : "";

  try {
    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    if (fam.setup) fam.setup(reps);
  } catch (const std::exception& e) {
    fprintf(stderr, "%s: setup failed: %s\n", fam.name.c_str(), e.what());
    write_next(next, start);
    return 4;
  }
  for (size_t p = start; p < stop; ++p) {
    write_next(next, p);
    Result r;
    try {
      maybe_inject_fault(fam.name, p);
      r = fam.measure(p, reps);
    } catch (const PointSkip& e) {
      r = Result();
      r.status = e.what();
    } catch (const CudaFault& e) {
      r = Result();
      r.status = std::string("fault:") + e.what();
      csv.row(row_for(p, r));
      fprintf(stderr, "%s: point %zu: %s\n", fam.name.c_str(), p, e.what());
      write_next(next, p + 1);
      return 3;
    }
    csv.row(row_for(p, r));
    fprintf(stderr, "%s: point %zu/%zu %s\n", fam.name.c_str(), p + 1, fam.points.size(), r.status.c_str());
  }
  write_next(next, fam.points.size());
  return 0;
}

// A launch of `grid` CTAs in 1-D clusters of `cluster`; `attr` (one attribute, the cluster's
// shape) is written here and must outlive the configuration.
inline cudaLaunchConfig_t cluster_config(unsigned grid, unsigned block, size_t smem, unsigned cluster,
                                         cudaLaunchAttribute* attr, cudaStream_t stream = 0) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid, 1, 1);
  cfg.blockDim = dim3(block, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

// Launch helper: cudaLaunchKernelEx with a 1-D cluster.
template <typename... KArgs, typename... Args>
inline void launch_cluster(void (*kernel)(KArgs...), unsigned grid, unsigned block, size_t smem, unsigned cluster,
                           cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = cluster_config(grid, block, smem, cluster, attr, stream);
  CK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

// Raises a kernel's dynamic shared-memory limit to the most the device allows beside the kernel's
// static shared memory (asking for the whole opt-in size fails when there is any). Returns it.
template <typename Kernel>
inline int set_max_dyn_smem(Kernel kernel, const DevInfo& d) {
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, kernel));
  const int v = d.smem_optin - (int)fa.sharedSizeBytes;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, v));
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  return v;
}

// Elapsed milliseconds between two recorded events.
inline float event_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms;
}

// Smallest dynamic shared memory that still leaves room for `ctas_per_sm` CTAs per SM and not one
// more: a CTA count per SM forced through shared memory.
inline size_t smem_for_occupancy(size_t need, int ctas_per_sm, const DevInfo& d) {
  // the runtime reserves 1 KB per CTA
  const size_t per_sm = (size_t)d.smem_per_sm;
  size_t lo = per_sm / (ctas_per_sm + 1) - 1024 + 1;  // (n+1) CTAs of this size no longer fit
  size_t s = std::max(need, lo);
  s = (s + 1023) & ~(size_t)1023;
  return s;
}

}  // namespace calib
