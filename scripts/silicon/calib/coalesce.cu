// coalesce.csv: when do two SMs' TMA loads of the same tile reach the L2 once? (the model's GPC
// read coalescer, docs/calibration.md: silicon merges 11-55% of a GEMM's loads before the L2,
// depending on raster and compute, and 50% of the multicast kernel's plain clusters.)
//
// Pairs of CTAs stream the same sequence of 8 KB tiles (128 B x 64 rows, no swizzle, 4 stages,
// one issuing thread, a consumer that only releases the stage); the pair's second CTA starts
// `delay_ns` after its first (each spins from its own start: first-wave CTAs start within ~100 ns
// of each other), so the two streams run the same tiles that far apart. Placement: `cluster` (the
// pair is a 2-CTA cluster: the two SMs of one TPC, placement.csv), `apart` (CTAs p and p + pairs:
// no cluster, usually other GPCs); appended later, with 4-CTA clusters (ranks 0 and 1 on one TPC,
// 2 and 3 on another TPC of the same GPC): `gpc` (pairs ranks 0+2 and 1+3: one GPC, two TPCs) and
// `tpc4` (pairs ranks 0+1 and 2+3: one TPC, launched as `gpc` is). Source: `l2` (each pair loops over its own 128 KB, warm in the L2), `dram` (each pair
// streams its own 4 MB once, L2 clean before). `shared` 0 gives each CTA its own tiles (nothing to
// merge). ncu tells how many of the loads' sectors reach the L2: lts TEX sectors per requested
// 32 bytes < 1 means merged on the way.
//
// Appended again (points 96 on, run_coalesce_capacity.sh): how many reads in flight a GPC's coalescer
// keeps. Every SM holds one CTA of 66 pairs (2-CTA clusters) streaming 32 KB tiles (128 B x 256
// rows) from DRAM with 1-6 stages, so that a GPC keeps 256 to 1,536 distinct lines in flight per SM
// (about 2,000 to 12,000 a GPC of 8 pairs); a coalescer that keeps fewer reads than that loses
// merges as the stages grow, one that keeps them all merges alike at every depth.
//
// Appended again (points 116 on, run_coalesce_background.sh): does a trailing CTA catch up only while
// DRAM is not saturated? 33 pairs (2-CTA clusters) stream the same 32 KB tiles from DRAM through one
// stage, 0-2 us apart, beside 33 more clusters whose CTAs stream their own tiles through 1-6 stages
// (the background: nothing of theirs to merge) or none; `fg_span_us` is the pairs' own span. A
// follower whose hits pass the misses ahead of them in the L2 catches up; one whose hits wait
// behind misses that cannot get a DRAM slot does not.
//
// Appended again (points 133 on, run_coalesce_group.sh): how many SMs' reads of one line does one read
// serve? Groups of g CTAs of one GPC stream the same 8 KB tiles (4 stages) together: `group<g>`, a
// g-CTA cluster (g = 2-8, 16), from DRAM or warm in the L2, rank r starting r x delay_ns after rank
// 0; `consec<g>`, no cluster, CTAs b..b+g-1 of a one-CTA-per-SM grid on the same tiles (as
// FlashAttention's query blocks of one head, which the dealing order puts on one GPC, mostly).
// `pairs` counts the groups. A coalescer that serves every reader of a line in flight sends one read
// a group to the L2 (share 1/g); one that serves a few readers a read sends more. Then (points 160
// on) `group<g>r<r>`: a g-CTA cluster whose tiles are read by r of its CTAs each, spread over its
// TPCs (ranks k, k + g/r, k + 2g/r, ...), g/r sets of tiles a cluster: is the limit on the readers
// a read serves, or on which SMs share a coalescer? Then (points 170 on) pairs warm in the L2 25-200
// ns apart: how long after a hit's read another SM's read of it still merges; and (points 184 on,
// `group2c`, `group4r2c`) the same 0-40 ns apart, the delay spun on the SM's clock (globaltimer's
// steps are too coarse for it).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a coalesce.cu -o coalesce -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr int kMaxStages = 8;
constexpr size_t kScrubBytes = 256ull << 20;
constexpr size_t kRegionMax = 1ull << 30;

struct CoPoint {
  std::string placement = "cluster";  // cluster | apart | gpc | tpc4 | group<g> | consec<g>
  std::string source = "l2";          // l2 | dram
  int pairs = 8;
  int delay_ns = 0;
  int shared = 1;
  int tiles = 512;  // per CTA
  int stages = 4;
  int tile_rows = 64;  // 128 B rows: 8 KB tiles
  int bg_pairs = 0;    // background clusters (2 CTAs each on their own tiles), after the pairs'
  int bg_stages = 0;   // their stages
};

std::vector<CoPoint> make_points() {
  std::vector<CoPoint> v;
  for (const char* src : {"l2", "dram"})
    for (const char* pl : {"cluster", "apart"})
      for (int pairs : {8, 66}) {
        for (int d : {0, 250, 500, 1000, 2000, 4000, 8000}) {
          CoPoint p;
          p.placement = pl;
          p.source = src;
          p.pairs = pairs;
          p.delay_ns = d;
          v.push_back(p);
        }
        CoPoint p;  // nothing shared: the baseline
        p.placement = pl;
        p.source = src;
        p.pairs = pairs;
        p.shared = 0;
        v.push_back(p);
      }
  // Appended (the points above keep their numbers): is the coalescer the GPC's or the TPC's?
  // Same launch (4-CTA clusters), the pair on one TPC or on two TPCs of one GPC.
  for (const char* src : {"l2", "dram"})
    for (const char* pl : {"tpc4", "gpc"})
      for (int pairs : {8, 60}) {
        for (int d : {0, 500, 2000}) {
          CoPoint p;
          p.placement = pl;
          p.source = src;
          p.pairs = pairs;
          p.delay_ns = d;
          v.push_back(p);
        }
        CoPoint p;
        p.placement = pl;
        p.source = src;
        p.pairs = pairs;
        p.shared = 0;
        v.push_back(p);
      }
  // Appended: the coalescer's capacity (above). 128 tiles of 32 KB a CTA (4 MB).
  for (int stages : {1, 2, 4, 6}) {
    for (int d : {0, 500, 1000, 2000, -1}) {
      CoPoint p;
      p.placement = "cluster";
      p.source = "dram";
      p.pairs = 66;
      p.tiles = 128;
      p.stages = stages;
      p.tile_rows = 256;
      if (d < 0)
        p.shared = 0;
      else
        p.delay_ns = d;
      v.push_back(p);
    }
  }
  // Appended: the follower beside a background load (above). 128 tiles of 32 KB a CTA.
  for (int shared : {1, 0})
    for (int d : {0, 1000, 2000}) {
      if (!shared && d) continue;
      for (int bg : {0, 1, 2, 4, 6}) {
        if (!shared && bg != 0 && bg != 6) continue;
        CoPoint p;
        p.placement = "cluster";
        p.source = "dram";
        p.pairs = 33;
        p.tiles = 128;
        p.stages = 1;
        p.tile_rows = 256;
        p.shared = shared;
        p.delay_ns = d;
        p.bg_pairs = bg ? 33 : 0;
        p.bg_stages = bg;
        v.push_back(p);
      }
    }
  // Appended: groups of g CTAs on the same tiles (above).
  for (const char* src : {"dram", "l2"}) {
    for (int g : {2, 3, 4, 6, 8, 16})
      for (int d : {0, 250}) {
        if (d && std::string(src) == "l2") continue;
        CoPoint p;
        p.placement = "group" + std::to_string(g);
        p.source = src;
        p.pairs = g == 2 ? 64 : g == 3 ? 39 : g == 4 ? 30 : g == 6 ? 17 : g == 8 ? 15 : 7;  // as many as fit at once (H200)
        p.delay_ns = d;
        v.push_back(p);
      }
    for (int g : {4, 8, 16}) {
      CoPoint p;
      p.placement = "consec" + std::to_string(g);
      p.source = src;
      p.pairs = g == 4 ? 33 : 128 / g;
      v.push_back(p);
    }
  }
  for (const char* pl : {"group4", "group16", "consec8"}) {  // nothing shared: the baselines (points 157-159)
    CoPoint p;
    p.placement = pl;
    p.source = "dram";
    p.pairs = std::string(pl) == "group16" ? 7 : std::string(pl) == "group4" ? 30 : 16;
    p.shared = 0;
    v.push_back(p);
  }
  // Appended: readers spread over a cluster's TPCs (above).
  for (const char* src : {"dram", "l2"})
    for (const char* pl : {"group4r2", "group8r2", "group8r4", "group16r4", "group16r8"}) {
      CoPoint p;
      p.placement = pl;
      p.source = src;
      p.pairs = pl[5] == '4' ? 30 : pl[5] == '8' ? 15 : 7;
      v.push_back(p);
    }
  // Appended: how long a read from the L2 can be merged with (points 170 on): pairs on one TPC
  // (group2) and on two TPCs (group4r2) warm in the L2, the second CTA 25-200 ns after the first;
  // then (184 on) 0-40 ns after it, spun on the SM clock (group2c, group4r2c).
  const struct {
    std::vector<const char*> placements;
    std::vector<int> delays;
  } staggers[] = {{{"group2", "group4r2"}, {25, 50, 75, 100, 125, 150, 200}},
                  {{"group2c", "group4r2c"}, {0, 5, 10, 15, 20, 30, 40}}};
  for (const auto& st : staggers)
    for (const char* pl : st.placements)
      for (int d : st.delays) {
        CoPoint p;
        p.placement = pl;
        p.source = "l2";
        p.pairs = pl[5] == '2' ? 64 : 30;
        p.delay_ns = d;
        v.push_back(p);
      }
  return v;
}

// The g of a `group<g>[r<r>]` or `consec<g>` placement (2 for the pairs' placements), and its r
// (readers of a tile: g unless given).
int group_size(const std::string& placement) {
  for (const char* k : {"group", "consec"})
    if (placement.rfind(k, 0) == 0) return std::stoi(placement.substr(strlen(k)));  // stops at r or c
  return 2;
}
// group<g>[r<r>]c: the ranks' delays spun on the SM clock.
bool delay_on_clock(const std::string& placement) {
  return placement.rfind("group", 0) == 0 && placement.back() == 'c';
}
int group_readers(const std::string& placement) {
  const size_t r = placement.find('r', 5);
  return placement.rfind("group", 0) == 0 && r != std::string::npos ? std::stoi(placement.substr(r + 1))
                                                                     : group_size(placement);
}

struct Span {
  unsigned long long start, end;
};
struct CoArgs {
  int pairs, cluster, delay_ns, shared, tiles, region_tiles, stages, tile_rows, bg_stages;  // cluster: 0 none, 2, 4 (gpc), 5 (tpc4), 6 (group), 7 (consec)  // region_tiles: a pair's tiles before wrapping
  int group;    // CTAs on the same tiles: 2, or g of group<g> / consec<g>
  int readers;  // group<g>r<r>: CTAs of a cluster on one set of tiles (g otherwise)
  int delay_clock_mhz;  // nonzero: spin the delay on the SM clock at this rate (cycles = ns x MHz / 1000)
  int rows_total;
  unsigned long long timeout_cycles;
  unsigned* sink;
  unsigned* err;
  Span* span;
  Span* fg_span;  // the pairs' CTAs alone (not the background's)
};

// One CTA's stream of `a.tiles` tiles of its own region through `stages` stages: the producer (thread
// 0) issues into a free stage, the consumer (thread 32) only releases it.
__device__ __forceinline__ bool stream(const CUtensorMap* map, const CoArgs& a, int region, int stages, unsigned base,
                                       unsigned long long* full, unsigned long long* empty) {
  const unsigned tile_bytes = 128u * (unsigned)a.tile_rows;
  if (threadIdx.x == 0) {
    int s = 0;
    unsigned k = 0;
    for (int t = 0; t < a.tiles; ++t) {
      if (t >= stages && !mbar_wait(smem_u32(&empty[s]), (k - 1) & 1, a.timeout_cycles)) {
        atomicAdd(a.err, 1u);
        return false;
      }
      const int row = (region * a.region_tiles + t % a.region_tiles) * a.tile_rows;
      mbar_arrive_expect(smem_u32(&full[s]), tile_bytes);
      tma_load_2d(base + s * tile_bytes, map, 0, row, smem_u32(&full[s]));
      if (++s == stages) {
        s = 0;
        ++k;
      }
    }
  } else if (threadIdx.x == 32) {
    int s = 0;
    unsigned k = 0;
    for (int t = 0; t < a.tiles; ++t) {
      if (!mbar_wait(smem_u32(&full[s]), k & 1, a.timeout_cycles)) {
        atomicAdd(a.err, 1u);
        return false;
      }
      mbar_arrive(smem_u32(&empty[s]));
      if (++s == stages) {
        s = 0;
        ++k;
      }
    }
  }
  return true;
}

__device__ __forceinline__ void body(const CUtensorMap* map, const CoArgs& a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[kMaxStages], empty[kMaxStages];
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  int pair, rank;
  if (a.cluster == 2) {
    pair = (int)cluster_id_x();
    rank = (int)cluster_ctarank();
  } else if (a.cluster == 4) {  // ranks 0+2 and 1+3: two TPCs of one GPC
    pair = (int)cluster_id_x() * 2 + (int)(cluster_ctarank() & 1);
    rank = (int)(cluster_ctarank() >> 1);
  } else if (a.cluster == 5) {  // ranks 0+1 and 2+3: one TPC
    pair = (int)cluster_id_x() * 2 + (int)(cluster_ctarank() >> 1);
    rank = (int)(cluster_ctarank() & 1);
  } else if (a.cluster == 6) {  // group<g>[r<r>]: ranks k, k + g/r, ... of a cluster on set k
    const int sets = a.group / a.readers;
    pair = (int)cluster_id_x() * sets + (int)cluster_ctarank() % sets;
    rank = (int)cluster_ctarank() / sets;
  } else if (a.cluster == 7) {  // consec<g>: CTAs b..b+g-1
    pair = (int)blockIdx.x / a.group;
    rank = (int)blockIdx.x % a.group;
  } else {
    pair = blockIdx.x % a.pairs;
    rank = blockIdx.x / a.pairs;
  }
  // A background cluster (2-CTA clusters past the pairs'): its CTAs on their own tiles, no delay.
  const bool background = a.cluster == 2 && pair >= a.pairs;
  const int stages = background ? a.bg_stages : a.stages;
  // each CTA's tiles: its pair's region (shared) or its own (regions past the pairs')
  const int own = a.cluster >= 6 ? (int)blockIdx.x : pair * 2 + rank;  // a CTA's own tiles
  const int region = a.shared && !background ? pair : own;
  const unsigned long long t_start = globaltimer();
  if (threadIdx.x == 0) {
    atomicMin(&a.span->start, t_start);
    if (!background) atomicMin(&a.fg_span->start, t_start);
    for (int s = 0; s < stages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0 && rank >= 1 && !background && a.delay_ns) {
    if (a.delay_clock_mhz) {
      const long long t0 = clock64(), cycles = (long long)a.delay_ns * rank * a.delay_clock_mhz / 1000;
      while (clock64() - t0 < cycles) {
      }
    } else {
      spin_ns((unsigned long long)a.delay_ns * rank);
    }
  }
  if (stream(map, a, region, stages, base, full, empty) && threadIdx.x == 32) {
    const unsigned long long t_end = globaltimer();
    atomicMax(&a.span->end, t_end);
    if (!background) atomicMax(&a.fg_span->end, t_end);
  }
  if (a.cluster && a.cluster != 7) cluster_sync();  // a cluster's CTAs leave together (its smem stays valid)
}

__global__ void __launch_bounds__(64) co_cluster(const __grid_constant__ CUtensorMap map, CoArgs a) { body(&map, a); }
__global__ void __launch_bounds__(64) co_cluster4(const __grid_constant__ CUtensorMap map, CoArgs a) { body(&map, a); }
__global__ void __launch_bounds__(64) co_group(const __grid_constant__ CUtensorMap map, CoArgs a) { body(&map, a); }
__global__ void __launch_bounds__(64) co_group16(const __grid_constant__ CUtensorMap map, CoArgs a) { body(&map, a); }
__global__ void __launch_bounds__(64) co_apart(const __grid_constant__ CUtensorMap map, CoArgs a) { body(&map, a); }

struct State {
  DevInfo dev;
  std::vector<CoPoint> pts;
  unsigned char* data = nullptr;
  unsigned char* scrub = nullptr;
  unsigned* sink = nullptr;
  unsigned* err = nullptr;
  Span* span = nullptr;
  Span* fg_span = nullptr;
};
State S;

std::vector<std::string> params_of(const CoPoint& p) {
  return {p.placement, p.source,     I(p.pairs),    I(p.delay_ns),  I(p.shared),
          I(p.tiles),  I(p.stages), I(p.tile_rows), I(p.bg_pairs), I(p.bg_stages)};
}
const std::vector<std::string> kParamCols = {"placement", "source", "pairs",     "delay_ns", "shared",
                                             "tiles_per_cta", "stages", "tile_rows", "bg_pairs", "bg_stages"};

void alloc() {
  CK(cudaMalloc(&S.data, kRegionMax));
  CK(cudaMemset(S.data, 0x5a, kRegionMax));
  CK(cudaMalloc(&S.scrub, kScrubBytes));
  CK(cudaMemset(S.scrub, 0x11, kScrubBytes));
  CK(cudaMalloc(&S.sink, 4096 * sizeof(unsigned)));
  CK(cudaMalloc(&S.err, sizeof(unsigned)));
  CK(cudaMalloc(&S.span, sizeof(Span)));
  CK(cudaMalloc(&S.fg_span, sizeof(Span)));
  set_max_dyn_smem(co_cluster, S.dev);
  set_max_dyn_smem(co_cluster4, S.dev);
  set_max_dyn_smem(co_apart, S.dev);
  set_max_dyn_smem(co_group, S.dev);
  set_max_dyn_smem(co_group16, S.dev);
  CK(cudaFuncSetAttribute(co_group16, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));  // clusters of 9-16
}

// One CTA per SM: more than half the SM's shared memory (two CTAs of a pair never share an SM).
size_t smem_bytes(const CoPoint& p) {
  return smem_for_occupancy((size_t)std::max(p.stages, p.bg_stages) * 128 * p.tile_rows + 1024, 1, S.dev);
}

// How many clusters of `g` CTAs (co_group, `smem` bytes each) the GPU runs at once.
int clusters_that_fit(int g, size_t smem) {
  cudaLaunchAttribute attr[1];
  const cudaLaunchConfig_t cfg = cluster_config(g * 16, 64, smem, g, attr);
  int n = 0;
  CK(cudaOccupancyMaxActiveClusters(&n, g > 8 ? co_group16 : co_group, &cfg));
  return n;
}

struct Prepared {
  CUtensorMap map;
  CoArgs args;
  double bytes;
};

Prepared prepare(const CoPoint& p) {
  alignas(64) Prepared q;
  const unsigned long long rows = kRegionMax / 128;
  encode_2d(&q.map, dtype_of("u8"), S.data, 128, rows, 128, p.tile_rows, 0, 0);
  CoArgs& a = q.args;
  a = CoArgs();
  a.pairs = p.pairs;
  a.cluster = p.placement == "cluster" ? 2 : p.placement == "gpc" ? 4 : p.placement == "tpc4" ? 5
              : p.placement.rfind("group", 0) == 0 ? 6 : p.placement.rfind("consec", 0) == 0 ? 7 : 0;
  a.group = group_size(p.placement);
  a.readers = group_readers(p.placement);
  a.delay_clock_mhz = 0;
  if (delay_on_clock(p.placement)) {  // the SM clock's rate (1980 MHz on the H100 and H200 measured)
    int khz = 0;
    CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    a.delay_clock_mhz = khz / 1000;
  }
  if (a.group < 2 || a.group > 16) throw PointSkip("groups of 2-16 CTAs");
  if (a.readers < 1 || a.group % a.readers) throw PointSkip("readers must divide the group");
  if ((a.cluster == 4 || a.cluster == 5) && p.pairs % 2) throw PointSkip("4-CTA clusters hold two pairs");
  a.delay_ns = p.delay_ns;
  a.shared = p.shared;
  a.tiles = p.tiles;
  a.stages = p.stages;
  a.tile_rows = p.tile_rows;
  if (p.stages < 1 || p.stages > kMaxStages) throw PointSkip("stages out of range");
  a.bg_stages = p.bg_stages;
  if (p.bg_pairs && (p.placement != "cluster" || p.source != "dram" || p.bg_stages < 1 || p.bg_stages > kMaxStages))
    throw PointSkip("a background runs beside 2-CTA clusters streaming from DRAM, 1-8 stages");
  const size_t tile_bytes = (size_t)128 * p.tile_rows;
  // l2: 16 tiles (128 KB) a region, looped; dram: every tile once (4 MB a region)
  a.region_tiles = p.source == "l2" ? 16 : p.tiles;
  a.timeout_cycles = kWaitLong;
  a.sink = S.sink;
  a.err = S.err;
  a.span = S.span;
  a.fg_span = S.fg_span;
  if ((size_t)a.group * (p.pairs + p.bg_pairs) * a.region_tiles * tile_bytes > kRegionMax) throw PointSkip("region too large");
  if (a.cluster == 6) {  // every group at once (clusters that do not fit run in a second wave)
    const int fit = clusters_that_fit(a.group, smem_bytes(p));
    if (fit < p.pairs) throw PointSkip("only " + I(fit) + " clusters of " + I(a.group) + " fit at once");
  }
  q.bytes = (double)a.group * (p.pairs + p.bg_pairs) * p.tiles * tile_bytes;
  return q;
}

void launch(const CoPoint& p, const Prepared& q) {
  const size_t smem = smem_bytes(p);
  const Span init = {~0ull, 0ull};
  CK(cudaMemcpy(S.span, &init, sizeof(init), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(S.fg_span, &init, sizeof(init), cudaMemcpyHostToDevice));
  if (p.placement == "cluster")
    launch_cluster(co_cluster, 2 * (p.pairs + p.bg_pairs), 64, smem, 2, 0, q.map, q.args);
  else if (p.placement == "gpc" || p.placement == "tpc4")
    launch_cluster(co_cluster4, 2 * p.pairs, 64, smem, 4, 0, q.map, q.args);
  else if (q.args.cluster == 6)
    launch_cluster(q.args.group > 8 ? co_group16 : co_group, q.args.group * p.pairs, 64, smem, q.args.group, 0, q.map,
                   q.args);
  else
    co_apart<<<q.args.group * p.pairs, 64, smem>>>(q.map, q.args);
  CK(cudaGetLastError());
}

// The L2 state a point asks for: clean (unrelated reads), then for `l2` its regions read once.
void prepare_l2(const CoPoint& p, const Prepared& q) {
  touch_kernel<<<S.dev.sms * 4, 256>>>(reinterpret_cast<const uint4*>(S.scrub), kScrubBytes / 16, S.sink);
  CK(cudaGetLastError());
  if (p.source == "l2") {
    const size_t bytes = (size_t)q.args.group * p.pairs * q.args.region_tiles * 128 * q.args.tile_rows;
    touch_kernel<<<S.dev.sms * 4, 256>>>(reinterpret_cast<const uint4*>(S.data), bytes / 16, S.sink);
    CK(cudaGetLastError());
  }
}

Result measure(size_t idx, int reps) {
  const CoPoint& p = S.pts[idx];
  Prepared q = prepare(p);
  CK(cudaMemset(S.err, 0, sizeof(unsigned)));
  std::vector<double> span_us, fg_span_us;
  for (int r = 0; r < reps; ++r) {
    prepare_l2(p, q);
    launch(p, q);
    CK(cudaDeviceSynchronize());
    Span sp, fg;
    CK(cudaMemcpy(&sp, S.span, sizeof(sp), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&fg, S.fg_span, sizeof(fg), cudaMemcpyDeviceToHost));
    span_us.push_back((double)(sp.end - sp.start) / 1000.0);
    fg_span_us.push_back((double)(fg.end - fg.start) / 1000.0);
  }
  unsigned err = 0;
  CK(cudaMemcpy(&err, S.err, sizeof(err), cudaMemcpyDeviceToHost));
  Result res;
  res.values = {F(q.bytes, 0), F(median(span_us), 2), F(vmin(span_us), 2), F(q.bytes / median(span_us) / 1e3, 1), I(reps),
                F(median(fg_span_us), 2)};
  if (err) res.status = "timeout(" + I(err) + ")";
  return res;
}

int traffic_mode(int argc, char** argv) {
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
  if (arg_flag(argc, argv, "--cluster-fit")) {  // clusters of 2-16 one-CTA-per-SM CTAs the GPU runs at once
    CK(cudaSetDevice(0));
    S.dev = dev_info();
    alloc();
    CoPoint p;
    for (int g = 2; g <= 16; ++g) printf("cluster %d: %d at once\n", g, clusters_that_fit(g, smem_bytes(p)));
    return 0;
  }
  if (!arg_flag(argc, argv, "--traffic-all")) return -1;
  const char* from_s = arg_value(argc, argv, "--from");
  const char* to_s = arg_value(argc, argv, "--to");
  const size_t from = from_s ? strtoull(from_s, nullptr, 10) : 0;
  const size_t to = to_s ? strtoull(to_s, nullptr, 10) : ~(size_t)0;
  try {
    CK(cudaSetDevice(0));
    S.dev = dev_info();
    alloc();
    for (size_t i = from; i < S.pts.size() && i < to; ++i) {
      Prepared q;
      try {
        q = prepare(S.pts[i]);
      } catch (const PointSkip& e) {
        printf("traffic %zu point %zu skipped: %s\n", i, i, e.what());
        continue;
      }
      CK(cudaMemset(S.err, 0, sizeof(unsigned)));
      prepare_l2(S.pts[i], q);
      launch(S.pts[i], q);
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
  fam.name = "coalesce";
  fam.param_cols = kParamCols;
  fam.result_cols = {"bytes", "span_us", "span_us_min", "span_gbps", "reps", "fg_span_us"};
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
