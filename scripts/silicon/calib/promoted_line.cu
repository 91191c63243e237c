// promoted_line.csv: what a read of data an L2 fill promoted, unasked, costs and how the L2 counts
// it.
//
// The space's 256 MB streams (ncu) hit no more with 256B promotion than with 128B: 64 B rows 50%
// with either, 128 B rows 0% and 6-16%, while DRAM is read once. So the first read of a 256-byte
// block's other line is a lookup miss that fetches nothing. This program asks what such a read
// costs in time, whether that depends on when it comes (while the promotion's data is on its way,
// or after) and on who reads it (the SM that promoted, or an SM of another GPC), and how reads of
// promoted sectors inside the demand's own line compare.
//
// A 2D bf16 tensor of 256-byte rows 4 KB apart, so that a row's two lines are one 256-byte block.
// One thread of CTA 0 loads box A (R rows) with the map's promotion; then box B of the same rows,
// `gap` after A's data is in (or right after A's issue: `together`), by the same thread or by one
// thread of CTA `kOtherCta` (another GPC's SM); then B again and A again (plain hits). Geometry
// (bytes of a row): `line` A 0-127, B 128-255 (the block's other line); `pair` A 0-31, B 32-63
// (the 64-byte fetch's other sector); `half` A 0-31, B 64-95 (the line's other half: promoted by
// 128B or 256B); `other` A 0-31, B 128-159 (the other line: promoted by 256B only). Cycles from
// issue to data (clock64 of the reading SM), medians over the repetitions, and every repetition's
// B, B again and A again; each repetition is one launch after the L2 is flushed (256 MB memset) and reads rows never
// read before.
//
//   promoted_line --list | --count | --out FILE.csv [--only K] [--reps N]
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a promoted_line.cu -o promoted_line -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr unsigned kRowBytes = 256, kPitch = 4096;
constexpr unsigned kOtherCta = 40;           // dealt to another GPC than CTA 0's (placement.csv)
constexpr size_t kRepRows = 4096;            // rows per repetition's region (16 MB)
constexpr int kSlots = 16;
constexpr size_t kData = kRepRows * kPitch * (kSlots + 1);

struct Geometry {
  const char* name;
  unsigned box_bytes;  // of a row, A's and B's
  int b_x;             // B's first element (bf16)
};
constexpr Geometry kGeometries[] = {{"line", 128, 64}, {"pair", 32, 16}, {"half", 32, 32}, {"other", 32, 64}};

struct PLPoint {
  int geometry;      // kGeometries
  int promotion;     // the map's L2 promotion (bytes, 0: none)
  unsigned rows;     // R
  long long gap_ns;  // B's issue after A's data (-1: together, right after A's issue)
  bool other_sm;     // B read by CTA kOtherCta
};

std::vector<PLPoint> make_points() {
  std::vector<PLPoint> v;
  for (int g = 0; g < 4; ++g)
    for (unsigned rows : {1u, 16u})
      for (int promo : {0, 128, 256})
        for (long long gap : {-1ll, 0ll, 2000ll}) v.push_back({g, promo, rows, gap, false});
  // Another GPC's SM reads B (it cannot know A's issue time, so not `together`).
  for (int g = 0; g < 4; ++g)
    for (int promo : {0, 128, 256}) v.push_back({g, promo, 16u, 0ll, true});
  return v;
}

enum { kA, kB, kB2, kA2, kOk, kBGapNs, kWords };

struct Args {
  int rows;
  unsigned box_bytes;
  int b_x;
  long long gap_ns;
  int other_sm;
  int y0;  // first row
  unsigned long long timeout;
  unsigned long long* out;
  volatile unsigned long long* flag;  // A's data in (globaltimer), for the other SM
};

__device__ __forceinline__ long long timed_load(const CUtensorMap* map, int x, int y, unsigned dst, unsigned mb,
                                                unsigned parity, unsigned bytes, unsigned long long timeout, bool& ok) {
  mbar_arrive_expect(mb, bytes);
  const long long t0 = clock64();
  tma_load_2d(dst, map, x, y, mb);
  ok = mbar_wait(mb, parity, timeout) && ok;
  return clock64() - t0;
}

__global__ void pl_kernel(const __grid_constant__ CUtensorMap map, Args a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long bar[2];
  const bool reader_a = blockIdx.x == 0;
  const bool reader_b = a.other_sm ? blockIdx.x == kOtherCta : reader_a;
  if (threadIdx.x != 0 || !(reader_a || reader_b)) return;
  const unsigned dst = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned mb0 = smem_u32(&bar[0]), mb1 = smem_u32(&bar[1]);
  mbar_init(mb0, 1);
  mbar_init(mb1, 1);
  mbar_init_fence();
  tensormap_prefetch(&map);
  const unsigned bytes = a.box_bytes * a.rows;
  bool ok = true;
  long long r[kWords] = {};
  if (reader_a) {
    if (a.gap_ns < 0) {
      // A and B issued back to back: B's time from its own issue.
      mbar_arrive_expect(mb0, bytes);
      mbar_arrive_expect(mb1, bytes);
      const long long t0 = clock64();
      tma_load_2d(dst, &map, 0, a.y0, mb0);
      const long long t1 = clock64();
      tma_load_2d(dst + 4096, &map, a.b_x, a.y0, mb1);
      ok = mbar_wait(mb0, 0, a.timeout) && ok;
      r[kA] = clock64() - t0;
      ok = mbar_wait(mb1, 0, a.timeout) && ok;
      r[kB] = clock64() - t1;
    } else {
      r[kA] = timed_load(&map, 0, a.y0, dst, mb0, 0, bytes, a.timeout, ok);
      if (reader_b) {
        spin_ns((unsigned long long)a.gap_ns);
        r[kB] = timed_load(&map, a.b_x, a.y0, dst + 4096, mb1, 0, bytes, a.timeout, ok);
      } else {
        *a.flag = globaltimer();
        __threadfence();
      }
    }
    if (reader_b) r[kB2] = timed_load(&map, a.b_x, a.y0, dst + 4096, mb1, 1, bytes, a.timeout, ok);
    r[kA2] = timed_load(&map, 0, a.y0, dst, mb0, 1, bytes, a.timeout, ok);
  } else {
    // The other SM: waits for A's data, then the gap, then B and B again.
    unsigned long long t_a = 0;
    const long long c0 = clock64();
    while ((t_a = *a.flag) == 0ull) {
      if ((unsigned long long)(clock64() - c0) > a.timeout) {
        ok = false;
        break;
      }
    }
    if (ok) {
      while (globaltimer() < t_a + (unsigned long long)a.gap_ns) {
      }
      r[kBGapNs] = (long long)(globaltimer() - t_a);
      r[kB] = timed_load(&map, a.b_x, a.y0, dst + 4096, mb1, 0, bytes, a.timeout, ok);
      r[kB2] = timed_load(&map, a.b_x, a.y0, dst + 4096, mb1, 1, bytes, a.timeout, ok);
    }
  }
  r[kOk] = ok ? 1 : 0;
  unsigned long long* out = a.out + (reader_a ? 0 : kWords);
  for (int i = 0; i < kWords; ++i) out[i] = (unsigned long long)r[i];
}

struct State {
  std::vector<PLPoint> pts;
  unsigned char* data = nullptr;
  void* flush = nullptr;
  unsigned long long* out = nullptr;
  unsigned long long* flag = nullptr;
  int sms = 0;
};
State S;

Result measure(size_t idx, int reps) {
  const PLPoint& p = S.pts[idx];
  std::vector<double> a1, b1, b2, a2, gap;
  int bad = 0;
  for (int rep = 0; rep < reps; ++rep) {
    unsigned char* base = S.data + (size_t)(rep % kSlots) * kRepRows * kPitch;
    alignas(64) CUtensorMap map;
    const unsigned long long dims[2] = {kRowBytes / 2, kRepRows}, strides[1] = {kPitch};
    const Geometry& g = kGeometries[p.geometry];
    const unsigned box[2] = {g.box_bytes / 2, p.rows};
    encode_tiled(&map, dtype_of("bf16"), 2, base, dims, strides, box, 0, p.promotion);
    Args a = {};
    a.rows = (int)p.rows;
    a.box_bytes = g.box_bytes;
    a.b_x = g.b_x;
    a.gap_ns = p.gap_ns;
    a.other_sm = p.other_sm;
    a.y0 = (int)((rep * 97) % (kRepRows - 64));
    a.timeout = kWaitShort;
    a.out = S.out;
    a.flag = S.flag;
    flush_l2(S.flush, rep + 1);
    CK(cudaMemsetAsync(S.out, 0, 2 * kWords * sizeof(unsigned long long)));
    CK(cudaMemsetAsync(S.flag, 0, sizeof(unsigned long long)));
    const unsigned grid = p.other_sm ? kOtherCta + 1 : 1;
    pl_kernel<<<grid, 32, 1024 + 4096 + g.box_bytes * p.rows>>>(map, a);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned long long o[2 * kWords];
    CK(cudaMemcpy(o, S.out, sizeof(o), cudaMemcpyDeviceToHost));
    const unsigned long long* ra = o;
    const unsigned long long* rb = p.other_sm ? o + kWords : o;
    if (!ra[kOk] || !rb[kOk]) {
      ++bad;
      continue;
    }
    a1.push_back((double)ra[kA]);
    a2.push_back((double)ra[kA2]);
    b1.push_back((double)rb[kB]);
    b2.push_back((double)rb[kB2]);
    if (p.other_sm) gap.push_back((double)rb[kBGapNs]);
  }
  Result res;
  // Every repetition's B, B again and A again (a far line's hit takes about 30 cycles more).
  auto each = [](const std::vector<double>& v) {
    std::string s;
    for (double x : v) s += (s.empty() ? "" : " ") + F(x, 0);
    return s;
  };
  res.values = {F(median(a1), 1), F(median(b1), 1), F(median(b2), 1), F(median(a2), 1),
                F(vmin(b1), 0),   F(vmax(b1), 0),   gap.empty() ? "" : F(median(gap), 0), I(reps - bad), each(b1),
                each(b2),         each(a2)};
  if (bad) res.status = "timeout(" + I(bad) + "/" + I(reps) + ")";
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  S.pts = make_points();
  Family fam;
  fam.name = "promoted_line";
  fam.param_cols = {"geometry", "promotion", "rows", "gap_ns", "reader"};
  fam.result_cols = {"a_cycles", "b_cycles", "b_again_cycles", "a_again_cycles", "b_min", "b_max", "b_gap_ns_seen",
                     "reps_ok", "b_cycles_each", "b_again_each", "a_again_each"};
  for (auto& p : S.pts)
    fam.points.push_back({kGeometries[p.geometry].name, l2_name(p.promotion), I(p.rows), p.gap_ns < 0 ? "together" : I(p.gap_ns),
                          p.other_sm ? "other_gpc" : "same_sm"});
  fam.default_reps = 15;
  fam.setup = [](int) {
    DevInfo d = dev_info();
    S.sms = d.sms;
    CK(cudaMalloc(&S.data, kData));
    CK(cudaMemset(S.data, 0x3c, kData));
    CK(cudaMalloc(&S.flush, kFlushBytes));
    CK(cudaMalloc(&S.out, 2 * kWords * sizeof(unsigned long long)));
    CK(cudaMalloc(&S.flag, sizeof(unsigned long long)));
    unsigned* sink;
    CK(cudaMalloc(&sink, 64));
    warmup_kernel<<<d.sms, 128>>>(50000000ull, sink);  // 50 ms: clocks up, module loaded
    CK(cudaDeviceSynchronize());
  };
  fam.measure = measure;
  return run_points(fam, argc, argv);
}
