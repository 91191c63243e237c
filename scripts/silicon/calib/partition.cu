// partition.cu: which L2 partition each SM reads through, and when a sector that one SM's fill
// brought into the L2 unasked (the 64-byte fetch's other half, a promotion's other sectors) is read
// from DRAM again when another SM asks for it (docs/calibration.md: streams of 32 B rows read up to
// 1.25-1.55 DRAM bytes per byte asked once 135k-270k box rows are in flight, and never below).
//
// 1. --topology FILE: for each SM in turn (every other CTA of the launch returns at once), after a
//    clean L2 (a 256 MB scratch written, then read), one thread reads 256 lines of a zeroed buffer
//    three times, each line as a chain of 16 dependent ld.global.cg loads timed by clock64 (pass 0:
//    the first from DRAM, the rest from the L2; passes 1-2 from the L2). Lines homed in the SM's own partition answer sooner; FILE gets every latency
//    (smid, pass, line, offset, cycles) and FILE.map the SMs grouped in two by the correlation of
//    their latency vectors with the first SM's (smid, group, corr, pass used).
// 2. Re-read points (--list; --out FILE --map FILE.map [--from I --to J]): 8 pairs of SMs (A, B).
//    A loads 32-byte x 256-row boxes (sector 0 of 256 lines each, 4 stages); B loads sector
//    `b_sector` of the same lines (0: the same sector; 1: the 64-byte fetch's other half; 2: 128B
//    promotion's other half) once A has issued that box and `delay_ns` more. B is A's TPC neighbour
//    (`tpc`), another SM of A's group (`part`) or of the other group (`cross`). The other SMs
//    stream unrelated 64 B x 256-row boxes (whole sectors asked, nothing fetched unasked) with
//    `bg_stages` stages each until the pairs are done, to load DRAM (0: they stay idle). ncu's
//    DRAM bytes read, less the background's (bg_tiles x 16 KB, read once) and the lines the pairs
//    need once, are the pairs' re-reads.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a partition.cu -o partition -lcuda
#include "calib_common.cuh"

#include <map>

using namespace calib;

namespace {

constexpr int kLines = 256;             // topology: lines timed per SM
constexpr int kChain = 16;              // dependent loads per line
constexpr size_t kLatBytes = 64ull << 20;
constexpr size_t kScrubBytes = 256ull << 20;
constexpr int kPairs = 8, kBoxes = 32, kBoxRows = 256, kProbeStages = 4;
constexpr unsigned kProbeBox = 32 * kBoxRows;  // bytes
constexpr int kBgBoxBytes = 64, kBgRowBytes = 16384;
constexpr unsigned kBgBox = kBgBoxBytes * kBoxRows;
constexpr size_t kBgBytes = 1ull << 30;
constexpr int kMaxSm = 256;
constexpr int kBgTiles = 128;  // per background CTA (16 KB each, 2 MB): outlasts the pairs (bg_end_ns says)

__device__ __forceinline__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// ------------------------------------------------------------------ 1. topology
// clock64 once `v` has arrived: the read is predicated on the data, so that the compiler cannot issue
// it ahead of the load (a plain clock read after a dependent add was: 2 cycles for 16 loads).
__device__ __forceinline__ long long clock_after(unsigned v) {
  long long t = 0;
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0xffffffff; @p mov.u64 %0, %%clock64; }" : "+l"(t) : "r"(v) : "memory");
  return t;
}
__global__ void pt_latency(const unsigned* buf, const unsigned* word_off, int target, unsigned* cycles) {
  if (smid() != (unsigned)target || threadIdx.x != 0) return;
  // Each line is read kChain times, each load's address depending on the one before (the buffer is
  // zero); a clock read can be issued before the load ahead of it returns, so a line's time is the
  // whole chain's: its kChain latencies, give or take the one at either end.
  unsigned dep = 0;
  for (int pass = 0; pass < 3; ++pass)
    for (int i = 0; i < kLines; ++i) {
      const long long t0 = clock_after(dep);
#pragma unroll 1
      for (int r = 0; r < kChain; ++r) {
        unsigned v;
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(buf + word_off[i] + dep) : "memory");
        dep = v;
      }
      const long long t1 = clock_after(dep);
      cycles[pass * kLines + i] = (unsigned)(t1 - t0);
    }
}

// ------------------------------------------------------------------ 2. re-reads
enum Role { kIdle = -1, kBackground = 0, kA = 1, kB = 2 };
struct PairRec {
  unsigned long long a_start, a_end, b_start, b_end, a_lat, b_lat;
};
struct PtArgs {
  const int* role;     // [smid]
  const int* index;    // [smid]: pair, or background CTA number
  unsigned* probes_done;
  unsigned long long* a_issue;  // [pair * kBoxes + box]: globaltimer when A issued it
  unsigned long long* bg_tiles;
  unsigned long long* bg_end;  // globaltimer when the last background CTA was done
  PairRec* rec;
  unsigned* err;
  int b_sector, delay_ns, bg_stages, n_bg;
  unsigned long long timeout_cycles;
};

// A ring of `stages` buffers as space.cu runs it: thread 0 issues (waiting for a buffer the consumer
// released), thread 32 consumes (waits for the data, notes when it came, releases the buffer). One
// thread doing both sleeps in mbarrier.try_wait far longer than the data takes (tens of us).
struct Ring {
  unsigned long long* full;
  unsigned long long* empty;
  int stages;
  // Producer: wait until buffer s of use n (n = k / stages) is free.
  __device__ bool wait_free(long long k, unsigned long long timeout) const {
    return k < stages || mbar_wait(smem_u32(&empty[k % stages]), (unsigned)((k / stages - 1) & 1), timeout);
  }
  __device__ bool wait_data(long long k, unsigned long long timeout) const {
    return mbar_wait(smem_u32(&full[k % stages]), (unsigned)((k / stages) & 1), timeout);
  }
  __device__ void release(long long k) const { mbar_arrive(smem_u32(&empty[k % stages])); }
};

__device__ __forceinline__ void st_relaxed64(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__global__ void __launch_bounds__(64) pt_reread(const __grid_constant__ CUtensorMap probe,
                                                const __grid_constant__ CUtensorMap bg, PtArgs a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[16], empty[16];
  __shared__ unsigned long long issue_t[16];
  const unsigned sm = smid();
  const int role = sm < kMaxSm ? a.role[sm] : kIdle;
  const int idx = sm < kMaxSm ? a.index[sm] : 0;
  if (role == kIdle) return;
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const Ring ring{full, empty, role == kBackground ? a.bg_stages : kProbeStages};
  if (threadIdx.x == 0) {
    for (int s = 0; s < ring.stages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    mbar_init_fence();
  }
  __syncthreads();

  if (role == kBackground) {
    // Its own kBgTiles tiles of 64 B x 256 rows (16 KB), columns of a 1 GB tensor of 16 KB rows read
    // down: tile t of CTA idx at column idx % 256, rows (idx / 256 * kBgTiles + t) * 256. Nothing
    // is shared, every sector read is asked, so the background reads exactly kBgTiles x 16 KB.
    if (threadIdx.x == 0) {
      const int col = idx % (kBgRowBytes / kBgBoxBytes), band = idx / (kBgRowBytes / kBgBoxBytes);
      for (int k = 0; k < kBgTiles; ++k) {
        if (!ring.wait_free(k, a.timeout_cycles)) {
          atomicAdd(a.err, 1u);
          break;
        }
        const int s = k % ring.stages;
        mbar_arrive_expect(smem_u32(&full[s]), kBgBox);
        tma_load_2d(base + (unsigned)s * kBgBox, &bg, col * kBgBoxBytes, (band * kBgTiles + k) * kBoxRows,
                    smem_u32(&full[s]));
      }
    } else if (threadIdx.x == 32) {
      for (int k = 0; k < kBgTiles; ++k) {
        if (!ring.wait_data(k, a.timeout_cycles)) {
          atomicAdd(a.err, 1u);
          break;
        }
        ring.release(k);
      }
      atomicAdd(a.bg_tiles, (unsigned long long)kBgTiles);
      atomicMax(a.bg_end, globaltimer());
    }
    __syncthreads();
    return;
  }

  // A pair's lines: rows [idx * kBoxes * kBoxRows, ...) of the 128-byte-wide probe tensor.
  const bool is_a = role == kA;
  if (threadIdx.x == 0) {
    const int x = is_a ? 0 : 32 * a.b_sector;
    const int row0 = idx * kBoxes * kBoxRows;
    const unsigned long long start = globaltimer();
    for (int k = 0; k < kBoxes; ++k) {
      if (!ring.wait_free(k, a.timeout_cycles)) {
        atomicAdd(a.err, 1u);
        break;
      }
      if (!is_a) {  // delay_ns after A issued box k (B lags A by that, without adding it up box by box)
        const long long t0 = clock64();
        unsigned long long issued = 0;
        bool late = false;
        while (!late && (issued = *(volatile unsigned long long*)&a.a_issue[idx * kBoxes + k]) == 0)
          late = (unsigned long long)(clock64() - t0) > a.timeout_cycles;
        if (late) {
          atomicAdd(a.err, 1u);
          break;
        }
        while (globaltimer() < issued + (unsigned long long)a.delay_ns) {
        }
      }
      const int s = k % kProbeStages;
      mbar_arrive_expect(smem_u32(&full[s]), kProbeBox);
      *(volatile unsigned long long*)&issue_t[s] = (unsigned long long)clock64();
      tma_load_2d(base + (unsigned)s * kProbeBox, &probe, x, row0 + k * kBoxRows, smem_u32(&full[s]));
      if (is_a) st_relaxed64(&a.a_issue[idx * kBoxes + k], globaltimer());  // no fence: B only needs it soon
    }
    if (is_a) a.rec[idx].a_start = start;
    else a.rec[idx].b_start = start;
  } else if (threadIdx.x == 32) {
    unsigned long long lat = 0;
    for (int k = 0; k < kBoxes; ++k) {
      if (!ring.wait_data(k, a.timeout_cycles)) {
        atomicAdd(a.err, 1u);
        break;
      }
      lat += (unsigned long long)clock64() - *(volatile unsigned long long*)&issue_t[k % kProbeStages];
      ring.release(k);
    }
    const unsigned long long end = globaltimer();
    PairRec& r = a.rec[idx];
    if (is_a) {
      r.a_end = end;
      r.a_lat = lat;
    } else {
      r.b_end = end;
      r.b_lat = lat;
    }
    __threadfence();
    atomicAdd(a.probes_done, 1u);
  }
  __syncthreads();
}

// ------------------------------------------------------------------ host
struct RrPoint {
  std::string relation;  // tpc | part | cross
  int b_sector = 1;
  int promotion = 0;  // the probe tensor map's L2 promotion (bytes)
  int delay_ns = 0;
  int bg_stages = 0;
};

std::vector<RrPoint> make_points() {
  std::vector<RrPoint> v;
  const std::pair<int, int> variants[] = {{0, 0}, {1, 0}, {2, 128}, {1, 128}};  // (b_sector, promotion)
  for (int bg : {0, 4, 10})
    for (const char* rel : {"tpc", "part", "cross"})
      for (auto [sec, promo] : variants)
        for (int d : {0, 1000, 2000, 4000, 8000}) {
          RrPoint p;
          p.relation = rel;
          p.b_sector = sec;
          p.promotion = promo;
          p.delay_ns = d;
          p.bg_stages = bg;
          v.push_back(p);
        }
  return v;
}

struct State {
  DevInfo dev;
  unsigned char* scrub = nullptr;
  unsigned* lat_buf = nullptr;
  unsigned* lat_off = nullptr;
  unsigned* lat_cycles = nullptr;
  unsigned char* probe = nullptr;
  unsigned char* bg = nullptr;
  int* role = nullptr;
  int* index = nullptr;
  unsigned long long* a_issue = nullptr;
  unsigned* counters = nullptr;  // probes_done, -, err
  unsigned long long* bg_tiles = nullptr;  // [0] tiles, [1] end time
  PairRec* rec = nullptr;
  unsigned* sink = nullptr;
};
State S;
const char* g_map_kind = "latency";  // where the SM groups came from

// A clean L2: the scratch written, then read (what it leaves is clean and unrelated).
void clean_l2() {
  CK(cudaMemset(S.scrub, 0x11, kScrubBytes));
  touch_kernel<<<S.dev.sms * 4, 256>>>(reinterpret_cast<const uint4*>(S.scrub), kScrubBytes / 16, S.sink);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
}

int topology(const std::string& out) {
  CK(cudaMalloc(&S.lat_buf, kLatBytes));
  CK(cudaMemset(S.lat_buf, 0, kLatBytes));
  std::vector<unsigned> off(kLines);
  for (int i = 0; i < kLines; ++i)  // distinct lines spread over the 64 MB (an odd multiplier)
    off[i] = (unsigned)(((unsigned long long)i * 2654435761ull % (kLatBytes / 128)) * 128 / 4);
  CK(cudaMalloc(&S.lat_off, kLines * sizeof(unsigned)));
  CK(cudaMemcpy(S.lat_off, off.data(), kLines * sizeof(unsigned), cudaMemcpyHostToDevice));
  CK(cudaMalloc(&S.lat_cycles, 3 * kLines * sizeof(unsigned)));
  std::vector<std::vector<double>> lat(S.dev.sms * 3, std::vector<double>(kLines, 0));
  Csv csv(out, {"smid", "pass", "line", "offset", "cycles"});
  set_max_dyn_smem(pt_latency, S.dev);
  const size_t one_per_sm = smem_for_occupancy(1024, 1, S.dev);
  for (int sm = 0; sm < S.dev.sms; ++sm) {
    clean_l2();
    CK(cudaMemset(S.lat_cycles, 0xff, 3 * kLines * sizeof(unsigned)));
    // One CTA per SM (each larger than half the SM's shared memory); only `sm`'s works.
    pt_latency<<<S.dev.sms, 32, one_per_sm>>>(S.lat_buf, S.lat_off, sm, S.lat_cycles);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> c(3 * kLines);
    CK(cudaMemcpy(c.data(), S.lat_cycles, c.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int pass = 0; pass < 3; ++pass)
      for (int i = 0; i < kLines; ++i) {
        lat[sm * 3 + pass][i] = c[pass * kLines + i];
        csv.row({I(sm), I(pass), I(i), I((long long)off[i] * 4), I(c[pass * kLines + i])});
      }
  }
  // Two groups by the sign of each SM's latency correlation with SM 0's; the pass whose vectors
  // correlate most strongly (mean |corr|) is used.
  auto corr = [](const std::vector<double>& x, const std::vector<double>& y) {
    const double mx = mean(x), my = mean(y);
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      sxy += (x[i] - mx) * (y[i] - my);
      sxx += (x[i] - mx) * (x[i] - mx);
      syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
  };
  int best_pass = 2;
  double best_q = -1;
  for (int pass : {2, 1, 0}) {
    double q = 0;
    for (int sm = 1; sm < S.dev.sms; ++sm) q += std::fabs(corr(lat[sm * 3 + pass], lat[pass]));
    q /= S.dev.sms - 1;
    fprintf(stderr, "topology: pass %d mean |corr| %.3f\n", pass, q);
    if (q > best_q) best_q = q, best_pass = pass;
  }
  Csv map(out + ".map", {"smid", "group", "corr", "pass"});
  for (int sm = 0; sm < S.dev.sms; ++sm) {
    const double r = sm == 0 ? 1.0 : corr(lat[sm * 3 + best_pass], lat[best_pass]);
    map.row({I(sm), I(r >= 0 ? 0 : 1), F(r, 3), I(best_pass)});
  }
  return 0;
}

std::vector<int> read_groups(const std::string& path) {
  std::vector<int> g(kMaxSm, -1);
  FILE* f = fopen(path.c_str(), "r");
  if (!f) throw std::runtime_error("cannot open " + path);
  char line[256];
  fgets(line, sizeof line, f);  // header
  int sm, grp;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "%d,%d", &sm, &grp) == 2 && sm >= 0 && sm < kMaxSm) g[sm] = grp;
  fclose(f);
  // A grouping with an (almost) empty group says the latencies showed no partitions: then the
  // TPC's parity stands in (recorded in the CSV's map column), so that the points still run.
  int n0 = 0, n1 = 0;
  for (int v : g) n0 += v == 0, n1 += v == 1;
  if (std::min(n0, n1) < 16) {
    fprintf(stderr, "partition: the map's groups have %d and %d SMs; using the TPC's parity instead\n", n0, n1);
    for (int sm = 0; sm < kMaxSm; ++sm) g[sm] = (sm / 2) % 2;
    g_map_kind = "tpc_parity";
  }
  return g;
}

// The pairs of a relation: A spread over both groups (pair i's A in group i % 2), B as the relation
// says, no SM twice. Returns (A, B) smids.
std::vector<std::pair<int, int>> choose_pairs(const std::string& rel, const std::vector<int>& group, int sms) {
  std::vector<bool> used(sms, false);
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < kPairs; ++i) {
    const int want = i % 2;
    int a = -1, b = -1;
    // A: a TPC's first SM (even smid), TPCs far apart (16 apart, wrapping)
    for (int k = 0; k < sms / 2 && a < 0; ++k) {
      const int cand = (2 * (i * 16 + k)) % sms;
      if (cand % 2 == 0 && !used[cand] && !used[cand + 1] && group[cand] == want) a = cand;
    }
    if (a < 0) throw PointSkip("no SM for A");
    used[a] = true;
    if (rel == "tpc") {
      b = a + 1;
    } else {
      const int want_b = rel == "part" ? want : 1 - want;
      for (int k = 1; k < sms && b < 0; ++k) {  // about half the chip away, not A's TPC
        const int cand = (a + sms / 2 + k) % sms;
        if (!used[cand] && cand / 2 != a / 2 && group[cand] == want_b) b = cand;
      }
    }
    if (b < 0 || used[b]) throw PointSkip("no SM for B");
    used[b] = true;
    pairs.emplace_back(a, b);
  }
  return pairs;
}

int reread(const std::string& out, const std::string& map_path, size_t from, size_t to) {
  const std::vector<int> group = read_groups(map_path);
  const auto pts = make_points();
  to = std::min(to, pts.size());
  CK(cudaMalloc(&S.probe, (size_t)kPairs * kBoxes * kBoxRows * 128));
  CK(cudaMemset(S.probe, 0x3c, (size_t)kPairs * kBoxes * kBoxRows * 128));
  CK(cudaMalloc(&S.bg, kBgBytes));
  CK(cudaMemset(S.bg, 0x5a, kBgBytes));
  CK(cudaMalloc(&S.role, kMaxSm * sizeof(int)));
  CK(cudaMalloc(&S.index, kMaxSm * sizeof(int)));
  CK(cudaMalloc(&S.a_issue, kPairs * kBoxes * sizeof(unsigned long long)));
  CK(cudaMalloc(&S.counters, 4 * sizeof(unsigned)));
  CK(cudaMalloc(&S.bg_tiles, 2 * sizeof(unsigned long long)));
  CK(cudaMalloc(&S.rec, kPairs * sizeof(PairRec)));
  const int max_smem = set_max_dyn_smem(pt_reread, S.dev);
  Csv csv(out, {"point", "relation", "b_sector", "l2_promotion", "delay_ns", "bg_stages", "n_bg", "pairs", "boxes",
                "a_sms", "b_sms", "a_lat_cycles", "b_lat_cycles", "b_after_a_ns", "probe_span_ns", "bg_end_after_start_ns", "bg_tiles",
                "bg_bytes", "probe_lines", "map", "status"});
  for (size_t i = from; i < to; ++i) {
    const RrPoint& p = pts[i];
    std::vector<std::string> row = {I((long long)i), p.relation, I(p.b_sector), l2_name(p.promotion), I(p.delay_ns),
                                    I(p.bg_stages)};
    try {
      const auto pairs = choose_pairs(p.relation, group, S.dev.sms);
      std::vector<int> role(kMaxSm, kIdle), index(kMaxSm, 0);
      std::string a_sms, b_sms;
      for (int k = 0; k < kPairs; ++k) {
        role[pairs[k].first] = kA;
        role[pairs[k].second] = kB;
        index[pairs[k].first] = index[pairs[k].second] = k;
        a_sms += (k ? " " : "") + I(pairs[k].first);
        b_sms += (k ? " " : "") + I(pairs[k].second);
      }
      int n_bg = 0;
      if (p.bg_stages)
        for (int sm = 0; sm < S.dev.sms; ++sm)
          if (role[sm] == kIdle) role[sm] = kBackground, index[sm] = n_bg++;
      CK(cudaMemcpy(S.role, role.data(), kMaxSm * sizeof(int), cudaMemcpyHostToDevice));
      CK(cudaMemcpy(S.index, index.data(), kMaxSm * sizeof(int), cudaMemcpyHostToDevice));
      CK(cudaMemset(S.a_issue, 0, kPairs * kBoxes * sizeof(unsigned long long)));
      CK(cudaMemset(S.counters, 0, 4 * sizeof(unsigned)));
      CK(cudaMemset(S.bg_tiles, 0, 2 * sizeof(unsigned long long)));
      CK(cudaMemset(S.rec, 0, kPairs * sizeof(PairRec)));
      CUtensorMap probe, bg;
      encode_2d(&probe, dtype_of("u8"), S.probe, 128, (unsigned long long)kPairs * kBoxes * kBoxRows, 32, kBoxRows, 0,
                p.promotion);
      encode_2d(&bg, dtype_of("u8"), S.bg, kBgRowBytes, kBgBytes / kBgRowBytes, kBgBoxBytes, kBoxRows, 0, 0);
      PtArgs a{S.role, S.index, S.counters, S.a_issue, S.bg_tiles, S.bg_tiles + 1, S.rec, S.counters + 2,
               p.b_sector, p.delay_ns, p.bg_stages, n_bg, kWaitLong};
      clean_l2();
      warmup_kernel<<<S.dev.sms, 128>>>(2000000ull, S.sink);  // 2 ms: the SM clock up from idle
      CK(cudaGetLastError());
      // One CTA per SM: more than half the SM's shared memory (the background's ring fits).
      pt_reread<<<S.dev.sms, 64, (size_t)max_smem>>>(probe, bg, a);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      unsigned counters[4];
      unsigned long long bgv[2];
      std::vector<PairRec> rec(kPairs);
      CK(cudaMemcpy(counters, S.counters, sizeof counters, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(bgv, S.bg_tiles, sizeof bgv, cudaMemcpyDeviceToHost));
      const unsigned long long bg_tiles = bgv[0];
      CK(cudaMemcpy(rec.data(), S.rec, kPairs * sizeof(PairRec), cudaMemcpyDeviceToHost));
      double a_lat = 0, b_lat = 0, gap = 0;
      unsigned long long t0 = ~0ull, t1 = 0;
      for (const PairRec& r : rec) {
        a_lat += (double)r.a_lat / kBoxes / kPairs;
        b_lat += (double)r.b_lat / kBoxes / kPairs;
        gap += ((double)r.b_end - (double)r.a_end) / kPairs;
        t0 = std::min({t0, r.a_start, r.b_start});
        t1 = std::max({t1, r.a_end, r.b_end});
      }
      row.insert(row.end(), {I(n_bg), I(kPairs), I(kBoxes), a_sms, b_sms, F(a_lat, 0), F(b_lat, 0), F(gap, 0),
                             I((long long)(t1 - t0)), I(bgv[1] ? (long long)bgv[1] - (long long)t0 : 0), I((long long)bg_tiles), I((long long)(bg_tiles * kBgBox)),
                             I((long long)kPairs * kBoxes * kBoxRows), g_map_kind, counters[2] ? "timeout" : "ok"});
    } catch (const PointSkip& e) {
      row.insert(row.end(), {"", "", "", "", "", "", "", "", "", "", "", "", "", g_map_kind, std::string("skip:") + e.what()});
    }
    csv.row(row);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (arg_flag(argc, argv, "--list")) {
      const auto pts = make_points();
      printf("point,relation,b_sector,l2_promotion,delay_ns,bg_stages\n");
      for (size_t i = 0; i < pts.size(); ++i)
        printf("%zu,%s,%d,%s,%d,%d\n", i, pts[i].relation.c_str(), pts[i].b_sector, l2_name(pts[i].promotion).c_str(),
               pts[i].delay_ns, pts[i].bg_stages);
      return 0;
    }
    S.dev = dev_info();
    CK(cudaMalloc(&S.scrub, kScrubBytes));
    CK(cudaMalloc(&S.sink, 4096 * sizeof(unsigned)));
    if (const char* t = arg_value(argc, argv, "--topology")) return topology(t);
    const char* out = arg_value(argc, argv, "--out");
    const char* map = arg_value(argc, argv, "--map");
    if (!out || !map) {
      fprintf(stderr, "usage: partition --topology FILE | --out FILE --map FILE.map [--from I --to J] | --list\n");
      return 2;
    }
    const char* from = arg_value(argc, argv, "--from");
    const char* to = arg_value(argc, argv, "--to");
    return reread(out, map, from ? strtoul(from, nullptr, 10) : 0, to ? strtoul(to, nullptr, 10) : ~size_t{0});
  } catch (const std::exception& e) {
    fprintf(stderr, "partition: %s\n", e.what());
    return 3;
  }
}
