// Silicon capture of TMA operations (sm_90): runs each case of a case file (gen_cases.py) on the
// GPU and writes what the hardware did: the driver's verdict on the descriptor, the shared-memory
// window after a load, the global bytes after a store or reduction, the complete_tx byte count,
// and issue-to-completion cycles (cold and warm).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 tma_capture.cu -o tma_capture -lcuda
// Run:   tma_capture CASES OUTDIR [--start K] [--only NAME]
// A case that traps the GPU poisons the CUDA context: the program records it as a fault, writes
// OUTDIR/next with the index to resume from and exits with status 3; run_capture.sh restarts it.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

// ------------------------------------------------------------------ case file
struct Case {
  std::map<std::string, std::string> kv;
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
  long long num(const std::string& k, long long def = 0) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : std::stoll(it->second);
  }
  std::vector<long long> arr(const std::string& k) const {
    std::vector<long long> v;
    std::string s = get(k);
    if (s.empty() || s == "-") return v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) v.push_back(std::stoll(item));
    return v;
  }
};

std::vector<Case> read_cases(const char* path) {
  std::vector<Case> cases;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    Case c;
    std::stringstream ss(line);
    std::string tok;
    while (ss >> tok) {
      auto eq = tok.find('=');
      if (eq != std::string::npos) c.kv[tok.substr(0, eq)] = tok.substr(eq + 1);
    }
    cases.push_back(c);
  }
  return cases;
}

int dtype_code(const std::string& s) {
  static const char* names[] = {"u8",   "u16",     "u32",  "s32",      "u64",   "s64",       "f16",      "f32",
                                "f64",  "bf16",    "f32_ftz", "tf32", "tf32_ftz", "b4x16", "b4x16_p64", "b6x16_p32"};
  for (int i = 0; i < 16; ++i)
    if (s == names[i]) return i;
  return 99;
}
int swizzle_code(const std::string& s) {
  static const char* names[] = {"none", "32B", "64B", "128B", "128B_atom_32B", "128B_atom_32B_flip_8B", "128B_atom_64B"};
  for (int i = 0; i < 7; ++i)
    if (s == names[i]) return i;
  return 99;
}
int interleave_code(const std::string& s) { return s == "none" ? 0 : s == "16B" ? 1 : s == "32B" ? 2 : 99; }
int l2_code(const std::string& s) { return s == "none" ? 0 : s == "64B" ? 1 : s == "128B" ? 2 : s == "256B" ? 3 : 99; }

enum Kind { K_LOAD = 0, K_STORE = 1, K_REDUCE = 2, K_PREFETCH = 3 };
int reduce_code(const std::string& k) {
  static const char* names[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor"};
  for (int i = 0; i < 8; ++i)
    if (k == std::string("reduce_") + names[i]) return i;
  return -1;
}

// ------------------------------------------------------------------ device side
struct Params {
  int kind, redop, im2col, rank;
  int coords[5];
  unsigned short offsets[3];
  unsigned smem_off;   // operation's shared-memory address, relative to the 1024-aligned window
  unsigned win;        // window bytes
  unsigned smem_seed;  // store/reduce: window word i = hash(i + seed) before the operation
  unsigned char* dump; // window after the operation (loads)
  unsigned long long* res;  // results, see kRes*
  unsigned cand[8];    // complete_tx byte counts to try first
  int ncand;
  unsigned tx_known;   // timing run: bytes to expect
  int timing;          // 0 discovery run, 1 timing run
};
enum { kResRaw0 /* tries */, kResRaw1, kResTx, kResDone, kResCold, kResWarm, kResWindowBase, kResStatus, kResCount };

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void mbar_init(unsigned mbar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(mbar), "r"(count) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_expect(unsigned mbar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(mbar), "r"(bytes) : "memory");
}
// Wait for phase `parity` to complete, at most `ns` nanoseconds. True when it completed.
__device__ __forceinline__ bool mbar_wait(unsigned mbar, unsigned parity, unsigned long long ns) {
  unsigned long long t0 = globaltimer();
  while (true) {
    unsigned ok;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(ok)
        : "r"(mbar), "r"(parity)
        : "memory");
    if (ok) return true;
    if (globaltimer() - t0 > ns) return false;
  }
}

#define TMAP "l"(tmap)
#define C1 "r"(p.coords[0])
#define C2 C1, "r"(p.coords[1])
#define C3 C2, "r"(p.coords[2])
#define C4 C3, "r"(p.coords[3])
#define C5 C4, "r"(p.coords[4])

__device__ void issue_load(const Params& p, unsigned long long tmap, unsigned dst, unsigned mbar) {
  if (!p.im2col) {
    switch (p.rank) {
      case 1: asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];" ::"r"(dst), TMAP, C1, "r"(mbar) : "memory"); break;
      case 2: asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst), TMAP, C2, "r"(mbar) : "memory"); break;
      case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst), TMAP, C3, "r"(mbar) : "memory"); break;
      case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];" ::"r"(dst), TMAP, C4, "r"(mbar) : "memory"); break;
      case 5: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];" ::"r"(dst), TMAP, C5, "r"(mbar) : "memory"); break;
    }
  } else {
    switch (p.rank) {
      case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5], {%6};" ::"r"(dst), TMAP, C3, "r"(mbar), "h"(p.offsets[0]) : "memory"); break;
      case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};" ::"r"(dst), TMAP, C4, "r"(mbar), "h"(p.offsets[0]), "h"(p.offsets[1]) : "memory"); break;
      case 5: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7], {%8, %9, %10};" ::"r"(dst), TMAP, C5, "r"(mbar), "h"(p.offsets[0]), "h"(p.offsets[1]), "h"(p.offsets[2]) : "memory"); break;
    }
  }
}

__device__ void issue_store(const Params& p, unsigned long long tmap, unsigned src) {
  switch (p.rank) {
    case 1: asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%0, {%1}], [%2];" ::TMAP, C1, "r"(src) : "memory"); break;
    case 2: asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::TMAP, C2, "r"(src) : "memory"); break;
    case 3: asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];" ::TMAP, C3, "r"(src) : "memory"); break;
    case 4: asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::TMAP, C4, "r"(src) : "memory"); break;
    case 5: asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];" ::TMAP, C5, "r"(src) : "memory"); break;
  }
}

#define RED_CASES(OP)                                                                                                          \
  switch (p.rank) {                                                                                                            \
    case 1: asm volatile("cp.reduce.async.bulk.tensor.1d.global.shared::cta." OP ".tile.bulk_group [%0, {%1}], [%2];" ::TMAP, C1, "r"(src) : "memory"); break; \
    case 2: asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2}], [%3];" ::TMAP, C2, "r"(src) : "memory"); break; \
    case 3: asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2, %3}], [%4];" ::TMAP, C3, "r"(src) : "memory"); break; \
    case 4: asm volatile("cp.reduce.async.bulk.tensor.4d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::TMAP, C4, "r"(src) : "memory"); break; \
    case 5: asm volatile("cp.reduce.async.bulk.tensor.5d.global.shared::cta." OP ".tile.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];" ::TMAP, C5, "r"(src) : "memory"); break; \
  }

__device__ void issue_reduce(const Params& p, unsigned long long tmap, unsigned src) {
  switch (p.redop) {
    case 0: RED_CASES("add") break;
    case 1: RED_CASES("min") break;
    case 2: RED_CASES("max") break;
    case 3: RED_CASES("inc") break;
    case 4: RED_CASES("dec") break;
    case 5: RED_CASES("and") break;
    case 6: RED_CASES("or") break;
    case 7: RED_CASES("xor") break;
  }
}

__device__ void issue_prefetch(const Params& p, unsigned long long tmap) {
  switch (p.rank) {
    case 1: asm volatile("cp.async.bulk.prefetch.tensor.1d.L2.global.tile [%0, {%1}];" ::TMAP, C1 : "memory"); break;
    case 2: asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::TMAP, C2 : "memory"); break;
    case 3: asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];" ::TMAP, C3 : "memory"); break;
    case 4: asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];" ::TMAP, C4 : "memory"); break;
    case 5: asm volatile("cp.async.bulk.prefetch.tensor.5d.L2.global.tile [%0, {%1, %2, %3, %4, %5}];" ::TMAP, C5 : "memory"); break;
  }
}

__device__ __forceinline__ unsigned word_hash(unsigned i) { return i * 2654435761u + 0x12345u; }

// One try of a load with `expect` bytes expected; true when that is exactly what it delivered.
__device__ bool try_count(const Params& p, unsigned long long tmap, unsigned addr, unsigned mbar, unsigned expect,
                          unsigned long long first_wait_ns) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(mbar) : "memory");
  mbar_init(mbar, 1);
  mbar_arrive_expect(mbar, expect);
  issue_load(p, tmap, addr, mbar);
  if (!mbar_wait(mbar, 0, first_wait_ns)) {
    unsigned long long t0 = globaltimer();  // let a load that owes bytes finish before the next try
    while (globaltimer() - t0 < 5000) {
    }
    return false;
  }
  unsigned long long t0 = globaltimer();
  while (globaltimer() - t0 < 20000) {
  }
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(mbar) : "memory");
  return mbar_wait(mbar, 1, 5000);
}

__global__ void tma_kernel(const __grid_constant__ CUtensorMap tmap_obj, Params p) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long mbar_obj;
  const unsigned long long tmap = reinterpret_cast<unsigned long long>(&tmap_obj);
  const unsigned raw_base = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw));
  const unsigned win_base = (raw_base + 1023u) & ~1023u;
  unsigned char* win = smem_raw + (win_base - raw_base);
  const unsigned mbar = static_cast<unsigned>(__cvta_generic_to_shared(&mbar_obj));

  // Window: 0xCD sentinel for loads, a known pattern for stores and reductions.
  for (unsigned i = threadIdx.x; i < p.win / 4; i += blockDim.x) {
    unsigned v = (p.kind == K_STORE || p.kind == K_REDUCE) ? word_hash(i + p.smem_seed) : 0xCDCDCDCDu;
    reinterpret_cast<unsigned*>(win)[i] = v;
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();

  if (threadIdx.x == 0) {
    p.res[kResWindowBase] = win_base;
    const unsigned addr = win_base + p.smem_off;
    if (p.kind == K_LOAD && !p.timing) {
      // complete_tx byte count: the mbarrier word is not readable, so try expected counts until
      // one is exact: phase 0 completes, and after the stragglers have landed an arrival with no
      // bytes completes phase 1 too (a count too small leaves phase 1 owing bytes, a count too
      // large never completes phase 0). Candidates first, then a scan.
      long long found = -1;
      unsigned tries = 0;
      mbar_init(mbar, 1);  // try_count invalidates before it initialises
      for (int k = 0; k < p.ncand && found < 0; ++k, ++tries)
        if (try_count(p, tmap, addr, mbar, p.cand[k], k == 0 ? 2000000ull : 30000ull)) found = p.cand[k];
      for (unsigned e = 0; e <= p.win && found < 0; e += 16, ++tries)
        if (try_count(p, tmap, addr, mbar, e, 20000ull)) found = e;
      for (unsigned e = 1; e <= 4096 && found < 0; ++e, ++tries)
        if (e % 16 && try_count(p, tmap, addr, mbar, e, 20000ull)) found = e;
      p.res[kResTx] = (unsigned long long)found;
      p.res[kResDone] = found >= 0 ? 1 : 0;
      p.res[kResRaw0] = tries;
    } else if (p.kind == K_LOAD) {
      mbar_init(mbar, 1);
      long long t0 = clock64();
      mbar_arrive_expect(mbar, p.tx_known);
      issue_load(p, tmap, addr, mbar);
      bool ok1 = mbar_wait(mbar, 0, 10000000);
      long long t1 = clock64();
      mbar_arrive_expect(mbar, p.tx_known);
      issue_load(p, tmap, addr, mbar);
      bool ok2 = mbar_wait(mbar, 1, 10000000);
      long long t2 = clock64();
      p.res[kResCold] = ok1 ? (unsigned long long)(t1 - t0) : 0;
      p.res[kResWarm] = ok2 ? (unsigned long long)(t2 - t1) : 0;
    } else if (p.kind == K_STORE || p.kind == K_REDUCE) {
      if (p.kind == K_STORE) issue_store(p, tmap, addr);
      else issue_reduce(p, tmap, addr);
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
      p.res[kResDone] = 1;
    } else {
      issue_prefetch(p, tmap);
      p.res[kResDone] = 1;
    }
  }
  __syncthreads();
  if (p.dump && !p.timing)
    for (unsigned i = threadIdx.x; i < p.win; i += blockDim.x) p.dump[i] = win[i];
}

// ------------------------------------------------------------------ host side
#define CU(x)                                                                       \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_)); \
      return e_;                                                                    \
    }                                                                               \
  } while (0)

bool write_file(const std::string& path, const void* data, size_t n) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  fwrite(data, 1, n, f);
  fclose(f);
  return true;
}

CUresult encode(const Case& c, void* gaddr, CUtensorMap* map) {
  int rank = (int)c.num("rank");
  cuuint64_t dims[8] = {0}, strides[8] = {0};
  cuuint32_t box[8] = {0}, estr[8] = {0};
  auto vd = c.arr("dims"), vs = c.arr("strides"), vb = c.arr("box"), ve = c.arr("estr");
  for (size_t i = 0; i < vd.size() && i < 8; ++i) dims[i] = vd[i];
  for (size_t i = 0; i < vs.size() && i < 8; ++i) strides[i] = vs[i];
  for (size_t i = 0; i < vb.size() && i < 8; ++i) box[i] = (cuuint32_t)vb[i];
  for (size_t i = 0; i < ve.size() && i < 8; ++i) estr[i] = (cuuint32_t)ve[i];
  auto dt = (CUtensorMapDataType)dtype_code(c.get("dtype"));
  auto il = (CUtensorMapInterleave)interleave_code(c.get("interleave"));
  auto sw = (CUtensorMapSwizzle)swizzle_code(c.get("swizzle"));
  auto l2 = (CUtensorMapL2promotion)l2_code(c.get("l2"));
  auto oob = c.get("oob") == "nan" ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
  if (c.get("mode") == "im2col") {
    // Passed in the case file's order (W first); the captures tell which order the driver means.
    int lower[8] = {0}, upper[8] = {0};
    auto vl = c.arr("lower"), vu = c.arr("upper");
    for (size_t i = 0; i < vl.size() && i < 8; ++i) lower[i] = (int)vl[i];
    for (size_t i = 0; i < vu.size() && i < 8; ++i) upper[i] = (int)vu[i];
    return cuTensorMapEncodeIm2col(map, dt, rank, gaddr, dims, strides, lower, upper, (cuuint32_t)c.num("cpp"),
                                   (cuuint32_t)c.num("ppc"), estr, il, sw, l2, oob);
  }
  return cuTensorMapEncodeTiled(map, dt, rank, gaddr, dims, strides, box, estr, il, sw, l2, oob);
}

// complete_tx counts to try first: the whole box (rows x inner bytes) and a few variants.
void candidate_counts(const Case& c, Params& p) {
  static const int esize[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4, 8, 8, 12};
  int dt = dtype_code(c.get("dtype"));
  long long e = dt < 16 ? esize[dt] : 1;
  auto box = c.arr("box"), est = c.arr("estr");
  long long rows = 1, inner = 0, inner_strided = 0;
  if (c.get("mode") == "im2col") {
    rows = c.num("ppc");
    inner = inner_strided = c.num("cpp") * e;
  } else {
    for (size_t i = 1; i < box.size(); ++i) rows *= (box[i] + est[i] - 1) / est[i];
    inner = box.empty() ? 0 : box[0] * e;
    inner_strided = box.empty() ? 0 : (box[0] + est[0] - 1) / est[0] * e;
  }
  long long cands[] = {rows * inner, rows * inner_strided, rows * ((inner + 15) / 16 * 16),
                       rows * ((inner + 31) / 32 * 32), rows * ((inner_strided + 15) / 16 * 16), 0};
  p.ncand = 0;
  for (long long v : cands) {
    bool dup = false;
    for (int k = 0; k < p.ncand; ++k) dup |= p.cand[k] == (unsigned)v;
    if (!dup && v >= 0 && v < (1 << 20) && p.ncand < 8) p.cand[p.ncand++] = (unsigned)v;
  }
}

unsigned host_hash(unsigned i) { return i * 2654435761u + 0x12345u; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s CASES OUTDIR [--start K] [--only NAME]\n", argv[0]);
    return 2;
  }
  std::string outdir = argv[2];
  size_t start = 0;
  std::string only;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--start")) start = strtoull(argv[i + 1], nullptr, 10);
    if (!strcmp(argv[i], "--only")) only = argv[i + 1];
  }
  auto cases = read_cases(argv[1]);
  FILE* log = fopen((outdir + "/capture.log").c_str(), "a");
  if (!log) {
    fprintf(stderr, "cannot open %s/capture.log: %s\n", outdir.c_str(), strerror(errno));
    return 2;
  }
  setvbuf(log, nullptr, _IOLBF, 0);

  CU(cudaSetDevice(0));
  cudaDeviceProp prop;
  CU(cudaGetDeviceProperties(&prop, 0));
  int drv = 0, clock_khz = 0;
  cudaDriverGetVersion(&drv);
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  fprintf(log, "device %s sm_%d%d, %d SMs, L2 %d B, driver API %d, clock %d kHz; start at case %zu\n", prop.name,
          prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize, drv, clock_khz, start);
  {
    FILE* f = fopen((outdir + "/device.txt").c_str(), "w");
    if (f) {
      fprintf(f, "name: %s\nsm: %d%d\nsms: %d\nl2_bytes: %d\ndriver_api: %d\nclock_khz: %d\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, prop.l2CacheSize, drv, clock_khz);
      fclose(f);
    }
  }
  // Always the largest allocation: a load that writes past the window must not fault for that.
  const int kDynSmem = 226 * 1024;
  CU(cudaFuncSetAttribute(tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kDynSmem));

  const size_t kMaxImage = 16u << 20;
  unsigned char *dimg, *ddump;
  unsigned long long* dres;
  unsigned char* dflush;
  const size_t kFlush = 256u << 20;  // larger than any Hopper L2: evicts the case's lines
  CU(cudaMalloc(&dimg, kMaxImage + 4096));
  CU(cudaMalloc(&ddump, 256 * 1024));
  CU(cudaMalloc(&dres, kResCount * sizeof(unsigned long long)));
  CU(cudaMalloc(&dflush, kFlush));

  std::vector<unsigned char> himg(kMaxImage), hafter(kMaxImage), hdump(256 * 1024);
  for (size_t i = start; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string name = c.get("name");
    if (!only.empty() && name != only) continue;
    {
      FILE* nf = fopen((outdir + "/next").c_str(), "w");
      fprintf(nf, "%zu\n", i);
      fclose(nf);
    }
    std::ostringstream res;
    res << "name: " << name << "\n";
    const std::string kindname = c.get("kind");
    int kind = kindname == "load" ? K_LOAD : kindname == "store" ? K_STORE : kindname == "prefetch" ? K_PREFETCH : K_REDUCE;
    size_t gsize = (size_t)c.num("gsize");
    size_t base = (size_t)c.num("base");
    if (gsize > kMaxImage) gsize = kMaxImage;
    for (size_t w = 0; w < gsize / 4; ++w) {
      unsigned v = host_hash((unsigned)w);
      memcpy(&himg[4 * w], &v, 4);
    }
    CU(cudaMemcpy(dimg, himg.data(), gsize, cudaMemcpyHostToDevice));
    alignas(64) CUtensorMap map;
    memset(&map, 0, sizeof(map));
    CUresult er = encode(c, dimg + base, &map);
    res << "encode: " << (int)er << "\n";
    if (er != CUDA_SUCCESS) {
      const char* s = nullptr;
      cuGetErrorName(er, &s);
      res << "encode_error: " << (s ? s : "?") << "\n";
      write_file(outdir + "/" + name + ".res", res.str().data(), res.str().size());
      continue;
    }
    write_file(outdir + "/" + name + ".desc", &map, sizeof(map));

    Params p;
    memset(&p, 0, sizeof(p));
    p.kind = kind;
    p.redop = kind == K_REDUCE ? reduce_code(kindname) : 0;
    p.im2col = c.get("mode") == "im2col";
    p.rank = (int)c.num("rank");
    auto vc = c.arr("coords");
    for (size_t k = 0; k < vc.size() && k < 5; ++k) p.coords[k] = (int)vc[k];
    auto vo = c.arr("offsets");
    for (size_t k = 0; k < vo.size() && k < 3; ++k) p.offsets[k] = (unsigned short)vo[k];
    p.smem_off = (unsigned)c.num("smem");
    p.win = (unsigned)c.num("win");
    p.smem_seed = (unsigned)c.num("smem_seed");
    p.dump = kind == K_LOAD ? ddump : nullptr;
    p.res = dres;
    candidate_counts(c, p);
    CU(cudaMemset(dres, 0, kResCount * sizeof(unsigned long long)));
    CU(cudaMemset(ddump, 0, p.win));
    tma_kernel<<<1, 128, kDynSmem>>>(map, p);
    cudaError_t ke = cudaDeviceSynchronize();
    if (ke == cudaSuccess) ke = cudaGetLastError();
    if (ke != cudaSuccess) {
      res << "fault: " << cudaGetErrorName(ke) << "\n";
      write_file(outdir + "/" + name + ".res", res.str().data(), res.str().size());
      fprintf(log, "%s: fault %s\n", name.c_str(), cudaGetErrorName(ke));
      FILE* nf = fopen((outdir + "/next").c_str(), "w");
      fprintf(nf, "%zu\n", i + 1);
      fclose(nf);
      return 3;  // the context is gone: the driver script restarts us at the next case
    }
    unsigned long long r[kResCount];
    CU(cudaMemcpy(r, dres, sizeof(r), cudaMemcpyDeviceToHost));
    res << "window_base: " << r[kResWindowBase] << "\n";
    if (kind == K_LOAD) {
      CU(cudaMemcpy(hdump.data(), ddump, p.win, cudaMemcpyDeviceToHost));
      write_file(outdir + "/" + name + ".smem", hdump.data(), p.win);
      res << "smem_window: " << p.win << "\n";
      res << "tx_tries: " << r[kResRaw0] << "\n";
      res << "tx: " << (long long)r[kResTx] << "\ntx_confirmed: " << r[kResDone] << "\n";
      // Timing: evict L2, then cold and warm issue-to-completion cycles.
      if (r[kResDone] == 1) {
        CU(cudaMemset(dflush, (int)(i & 0xff), kFlush));
        p.timing = 1;
        p.tx_known = (unsigned)r[kResTx];
        tma_kernel<<<1, 128, kDynSmem>>>(map, p);
        ke = cudaDeviceSynchronize();
        if (ke != cudaSuccess) {
          res << "fault: timing run " << cudaGetErrorName(ke) << "\n";
          write_file(outdir + "/" + name + ".res", res.str().data(), res.str().size());
          return 3;
        }
        CU(cudaMemcpy(r, dres, sizeof(r), cudaMemcpyDeviceToHost));
        res << "cold_cycles: " << r[kResCold] << "\nwarm_cycles: " << r[kResWarm] << "\n";
      }
    } else if (kind == K_STORE || kind == K_REDUCE) {
      CU(cudaMemcpy(hafter.data(), dimg, gsize, cudaMemcpyDeviceToHost));
      size_t lo = gsize, hi = 0, changed = 0;
      for (size_t b = 0; b < gsize; ++b)
        if (hafter[b] != himg[b]) {
          if (b < lo) lo = b;
          hi = b + 1;
          ++changed;
        }
      res << "changed_bytes: " << changed << "\n";
      if (changed) {
        res << "changed_lo: " << lo << "\nchanged_hi: " << hi << "\n";
        write_file(outdir + "/" + name + ".gmem", hafter.data() + lo, hi - lo);
      }
      // shared memory the operation read: the pattern is regenerated from smem_seed by the converter
    }
    res << "done: " << r[kResDone] << "\n";
    write_file(outdir + "/" + name + ".res", res.str().data(), res.str().size());
  }
  FILE* nf = fopen((outdir + "/next").c_str(), "w");
  fprintf(nf, "%zu\n", cases.size());
  fclose(nf);
  fprintf(log, "finished\n");
  return 0;
}
