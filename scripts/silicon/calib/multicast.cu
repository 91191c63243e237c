// multicast.csv: TMA multicast loads within a thread-block cluster (.multicast::cluster with a CTA
// mask), against plain loads. Clusters are 1-D, launched with cudaLaunchKernelEx and a cluster
// dimension attribute; cluster size 1 is the no-multicast baseline.
//
// mode=multicast: CTA rank 0 issues each tile once with mask (1 << cs) - 1; the tile lands at the
//   same shared-memory offset of every CTA of the cluster and signals each CTA's own mbarrier at
//   the same offset; every CTA arrive.expect_tx's its own barrier for the tile's bytes.
// mode=multicast_rr (bandwidth only): as multicast, but the issuing rotates: stage s is always
//   filled by CTA s % cs (stages is a multiple of cs), so each CTA issues 1/cs of the tiles, each
//   to the whole cluster (how CUTLASS shares the issuing of a multicast operand).
// mode=plain: every CTA issues its own (ordinary) load of the same tile.
//
// kind=latency: one cluster, one tile (cold: after an L2 eviction; warm: the same again at once).
//   Each CTA's thread 0 leaves a cluster barrier, reads clock64 (rank 0 then issues) and waits for
//   its own barrier: issuer_cycles is rank 0's issue-to-completion, last_cta_cycles the largest of
//   the CTAs' barrier-exit-to-completion times (clocks of different SMs are not compared).
// kind=bandwidth: all SMs busy, one CTA per SM; grid = cudaOccupancyMaxActiveClusters x cs. Cluster
//   c streams tiles c, c+clusters, ... through an S-stage ring in every CTA: a stage is refilled
//   only when every CTA of the cluster has released it (consumers arrive remotely on the filling
//   CTA's empty barrier: mapa + mbarrier.arrive.release.cluster). unique_gbps counts each tile
//   once (what L2 must supply with multicast), delivered_gbps counts it once per CTA.
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 -Xptxas -suppress-async-bulk-multicast-advisory-warning
//        multicast.cu -o multicast -lcuda
// (without the -Xptxas option ptxas prints an advisory that .multicast::cluster is better built for
// sm_90a because of future architectures; it changes nothing on sm_90 hardware)
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr int kMaxStages = 8;
constexpr int kMaxCluster = 8;
constexpr size_t kTensor = 1ull << 30;

struct McPoint {
  std::string kind;  // latency | bandwidth
  int cs = 1;        // cluster size
  bool mc = false;   // multicast
  bool rr = false;   // multicast issued in turn by every CTA of the cluster
  int inner = 128, rows = 64;
  int stages = 1;
  int size_mb = 1024;
  int swizzle() const { return inner >= 256 ? 0 : inner; }
  unsigned tile_bytes() const { return (unsigned)(inner * rows); }
  size_t row_bytes() const { return kind == "latency" ? 4096 : size_mb >= 1024 ? 32768 : 8192; }
};

std::vector<McPoint> make_points() {
  std::vector<McPoint> v;
  const int cfg[5][2] = {{1, 0}, {2, 1}, {4, 1}, {2, 0}, {4, 0}};  // cluster size, multicast
  const int lat_shapes[3][2] = {{128, 64}, {128, 256}, {32, 64}};
  for (auto& sh : lat_shapes)
    for (auto& c : cfg) {
      McPoint p;
      p.kind = "latency";
      p.cs = c[0];
      p.mc = c[1];
      p.inner = sh[0];
      p.rows = sh[1];
      p.size_mb = 0;
      v.push_back(p);
    }
  const int bw_shapes[2][2] = {{128, 64}, {128, 256}};
  for (int size : {16, 1024})
    for (auto& sh : bw_shapes)
      for (int st : {2, 4})
        for (int c = 0; c < 7; ++c) {
          McPoint p;
          p.kind = "bandwidth";
          p.cs = c < 5 ? cfg[c][0] : (c == 5 ? 2 : 4);
          p.mc = c < 5 ? cfg[c][1] : 1;
          p.rr = c >= 5;
          if (p.rr && st % p.cs) continue;
          p.inner = sh[0];
          p.rows = sh[1];
          p.stages = st;
          p.size_mb = size;
          v.push_back(p);
        }
  return v;
}

struct McArgs {
  int cs, mc, rr;
  unsigned tile_bytes, stage_stride;
  int stages;
  int tiles_x;
  long long total;
  int passes;
  int box_w, box_h;
  unsigned long long timeout_cycles, spin_ns;
  unsigned long long* out;  // latency: [rep][rank] cycles, 0 = timed out
  unsigned* err;
  unsigned* sink;
  ClockRec* clk;
};

__device__ __forceinline__ unsigned aligned_base(unsigned char* smem_raw, const unsigned char** ptr) {
  const unsigned raw = smem_u32(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;
  *ptr = smem_raw + (base - raw);
  return base;
}

// One thread per CTA: no lane of the waiting warp sits at a barrier while it polls.
__global__ void __launch_bounds__(1) mc_latency(const __grid_constant__ CUtensorMap map, McArgs a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned char* base_ptr;
  const unsigned base = aligned_base(smem_raw, &base_ptr);
  const unsigned rank = cluster_ctarank();
  const unsigned mb = smem_u32(&bar);
  const unsigned short mask = (unsigned short)((1u << a.cs) - 1u);
  ClockRec cr;
  clock_begin(&cr);
  mbar_init(mb, 1);
  mbar_init_fence();
  cluster_sync();
  unsigned long long m = reinterpret_cast<unsigned long long>(&map);
  unsigned dst = base;
  for (int rep = 0; rep < 2; ++rep) {
    mbar_arrive_expect(mb, a.tile_bytes);
    cluster_sync();  // every CTA expects its bytes before anything is issued
    asm volatile("" : "+l"(m), "+r"(dst));  // operands ready before the clock is read
    long long t0 = clock64();
    if (!a.mc)
      tma_load_2d(dst, reinterpret_cast<const void*>(m), 0, 0, mb);
    else if (rank == 0)
      tma_load_2d_multicast(dst, reinterpret_cast<const void*>(m), 0, 0, mb, mask);
    bool ok = mbar_wait(mb, (unsigned)rep, a.timeout_cycles);
    long long t1 = clock64();
    a.out[rep * kMaxCluster + rank] = ok ? (unsigned long long)(t1 - t0) : 0ull;
    if (!ok) atomicAdd(a.err, 1u);
  }
  a.sink[blockIdx.x] = base_ptr[0];
  if (rank == 0) {
    while (globaltimer() - cr.g0 < a.spin_ns) {
    }
    clock_end(&cr);
    *a.clk = cr;
  }
  cluster_sync();  // no CTA leaves while a multicast may still target it
}

// Thread 0 produces (when multicasting: only for the stages its CTA owns), thread 32 consumes;
// every other thread leaves after the first cluster barrier (see bandwidth.cu for why). Stage s is
// owned by CTA owner(s) (0, or s % cs for multicast_rr): its empty[s] collects the releases of all
// CTAs. No cluster barrier at the end: each owner waits until every CTA has released the last
// tiles of its stages, so no remote arrival reaches a CTA that has left, and each consumer waits
// for all of its tiles.
__global__ void __launch_bounds__(64) mc_stream(const __grid_constant__ CUtensorMap map, McArgs a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[kMaxStages], empty[kMaxStages];
  const unsigned char* base_ptr;
  const unsigned base = aligned_base(smem_raw, &base_ptr);
  const unsigned rank = cluster_ctarank();
  const long long cid = cluster_id_x(), ncl = cluster_count_x();
  const bool mc = a.mc && a.cs > 1;
  const unsigned short mask = (unsigned short)((1u << a.cs) - 1u);
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.stages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), mc ? (unsigned)a.cs : 1u);
    }
    mbar_init_fence();
  }
  cluster_sync();  // every thread: barriers initialised in every CTA before any remote use
  const long long cnt = strided_count(cid, ncl, a.total * a.passes);
  auto owner = [&](int s) { return mc ? (a.rr ? (unsigned)(s % a.cs) : 0u) : rank; };
  if (threadIdx.x == 0 && (!mc || a.rr || rank == 0)) {  // producer
    if (blockIdx.x == 0) {
      a.clk->g0 = globaltimer();
      a.clk->c0 = (unsigned long long)clock64();
    }
    TileWalk w;
    w.init(cid, ncl, a.tiles_x, (int)(a.total / a.tiles_x));
    int s = 0;
    unsigned k = 0;
    bool ok = true;
    for (long long j = 0; j < cnt; ++j) {
      if (owner(s) != rank) {  // another CTA of the cluster fills this stage
        w.next();
        if (++s == a.stages) {
          s = 0;
          ++k;
        }
        continue;
      }
      if (j >= a.stages && !mbar_wait(smem_u32(&empty[s]), (k - 1) & 1, a.timeout_cycles)) {
        ok = false;
        break;
      }
      const unsigned dst = base + (unsigned)s * a.stage_stride;
      if (mc) {
        tma_load_2d_multicast(dst, &map, w.a * a.box_w, w.b * a.box_h, smem_u32(&full[s]), mask);
      } else {
        mbar_arrive_expect(smem_u32(&full[s]), a.tile_bytes);
        tma_load_2d(dst, &map, w.a * a.box_w, w.b * a.box_h, smem_u32(&full[s]));
      }
      w.next();
      if (++s == a.stages) {
        s = 0;
        ++k;
      }
    }
    // drain: the releases of the last tiles (their arrivals may come from other CTAs)
    for (long long j = cnt - a.stages < 0 ? 0 : cnt - a.stages; ok && j < cnt; ++j)
      if (owner((int)(j % a.stages)) == rank)
        ok = mbar_wait(smem_u32(&empty[j % a.stages]), (unsigned)((j / a.stages) & 1), a.timeout_cycles);
    if (!ok) atomicAdd(a.err, 1u);
  } else if (threadIdx.x == 32) {  // consumer
    unsigned acc = 0;
    int s = 0;
    unsigned k = 0;
    for (long long j = 0; j < cnt; ++j) {
      if (mc) mbar_arrive_expect(smem_u32(&full[s]), a.tile_bytes);
      if (!mbar_wait(smem_u32(&full[s]), k & 1, a.timeout_cycles)) {
        atomicAdd(a.err, 1u);
        break;
      }
      acc += *reinterpret_cast<const volatile unsigned*>(base_ptr + (size_t)s * a.stage_stride + 4 * (j & 7));
      if (mc)
        mbar_arrive_cluster(smem_u32(&empty[s]), owner(s));
      else
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
  std::vector<McPoint> pts;
  unsigned char* tensor = nullptr;
  void* flush = nullptr;
  unsigned long long* out = nullptr;
  unsigned* err = nullptr;
  unsigned* sink = nullptr;
  ClockRec* clk = nullptr;
};
State S;

McArgs base_args(const McPoint& p, const Dtype& dt) {
  McArgs a = {};
  a.cs = p.cs;
  a.mc = p.mc;
  a.rr = p.rr;
  a.tile_bytes = p.tile_bytes();
  a.stage_stride = (a.tile_bytes + 1023u) & ~1023u;
  a.stages = p.stages;
  a.box_w = p.inner / dt.size;
  a.box_h = p.rows;
  a.timeout_cycles = kWaitLong;
  a.spin_ns = 100000ull;
  a.out = S.out;
  a.err = S.err;
  a.sink = S.sink;
  a.clk = S.clk;
  return a;
}

Result measure_latency(const McPoint& p, int reps) {
  Dtype dt = dtype_of("bf16");
  McArgs a = base_args(p, dt);
  a.timeout_cycles = kWaitShort;
  const size_t smem = a.stage_stride + 1024;
  std::vector<double> ic, iw, lc, lw, mhz;
  int bad = 0;
  for (int r = 0; r < reps; ++r) {
    alignas(64) CUtensorMap map;
    encode_2d(&map, dt, S.tensor + (size_t)(r % 16) * (4u << 20), p.row_bytes(), 512, p.inner, p.rows, p.swizzle(), 0);
    flush_l2(S.flush, r + 1);
    CK(cudaMemsetAsync(S.err, 0, sizeof(unsigned)));
    CK(cudaMemsetAsync(S.out, 0, 2 * kMaxCluster * sizeof(unsigned long long)));
    launch_cluster(mc_latency, (unsigned)p.cs, 1, smem, (unsigned)p.cs, 0, map, a);
    CK(cudaDeviceSynchronize());
    unsigned long long o[2 * kMaxCluster];
    CK(cudaMemcpy(o, S.out, sizeof(o), cudaMemcpyDeviceToHost));
    unsigned err = 0;
    CK(cudaMemcpy(&err, S.err, sizeof(err), cudaMemcpyDeviceToHost));
    ClockRec c;
    CK(cudaMemcpy(&c, S.clk, sizeof(c), cudaMemcpyDeviceToHost));
    mhz.push_back(clock_mhz(c));
    if (err) {
      ++bad;
      continue;
    }
    double mc_ = 0, mw = 0;
    for (int i = 0; i < p.cs; ++i) {
      mc_ = std::max(mc_, (double)o[i]);
      mw = std::max(mw, (double)o[kMaxCluster + i]);
    }
    ic.push_back((double)o[0]);
    iw.push_back((double)o[kMaxCluster]);
    lc.push_back(mc_);
    lw.push_back(mw);
  }
  Result res;
  res.values = {I(p.cs), I(p.cs), "1", I((long long)smem), "", "1", "", "", "",
                F(median(ic), 1), F(median(iw), 1), F(median(lc), 1), F(median(lw), 1),
                F(median(mhz), 1), I(reps), I(reps - bad)};
  if (bad) res.status = "timeout(" + I(bad) + "/" + I(reps) + ")";
  return res;
}

Result measure_bandwidth(const McPoint& p, int reps) {
  Dtype dt = dtype_of("bf16");
  McArgs a = base_args(p, dt);
  const size_t tensor_bytes = (size_t)p.size_mb << 20;
  const size_t rows = tensor_bytes / p.row_bytes();
  alignas(64) CUtensorMap map;
  encode_2d(&map, dt, S.tensor, p.row_bytes(), rows, p.inner, p.rows, p.swizzle(), 0);
  a.tiles_x = (int)(p.row_bytes() / p.inner);
  a.total = (long long)a.tiles_x * (long long)(rows / p.rows);
  a.passes = (int)std::max<size_t>(1, kTensor / tensor_bytes);
  const size_t smem = smem_for_occupancy((size_t)p.stages * a.stage_stride + 1024, 1, S.dev);

  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3((unsigned)(S.dev.sms / p.cs * p.cs), 1, 1);
  cfg.blockDim = dim3(64, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = (unsigned)p.cs;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  int clusters = 0;
  CK(cudaOccupancyMaxActiveClusters(&clusters, mc_stream, &cfg));
  if (clusters <= 0) throw PointSkip("no cluster of size " + I(p.cs) + " fits");
  const unsigned grid = (unsigned)(clusters * p.cs);

  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaMemset(S.err, 0, sizeof(unsigned)));
  launch_cluster(mc_stream, grid, 64, smem, (unsigned)p.cs, 0, map, a);  // warm-up
  CK(cudaDeviceSynchronize());
  std::vector<double> ms, mhz;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(e0));
    launch_cluster(mc_stream, grid, 64, smem, (unsigned)p.cs, 0, map, a);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    ms.push_back(event_ms(e0, e1));
    ClockRec c;
    CK(cudaMemcpy(&c, S.clk, sizeof(c), cudaMemcpyDeviceToHost));
    mhz.push_back(clock_mhz(c));
  }
  unsigned err = 0;
  CK(cudaMemcpy(&err, S.err, sizeof(err), cudaMemcpyDeviceToHost));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  const long long tiles = a.total * a.passes;
  const double unique = (double)tiles * a.tile_bytes;
  const double sec = median(ms) / 1000.0;
  Result res;
  res.values = {I(grid), I(p.cs), I(clusters), I((long long)smem), I(a.passes), I(tiles), F(sec, 7),
                F(unique / sec / 1e9, 1), F(unique * p.cs / sec / 1e9, 1), "", "", "", "",
                F(median(mhz), 1), I(reps), I(reps)};
  if (err) res.status = "timeout(" + I(err) + ")";
  return res;
}

Result measure(size_t idx, int reps) {
  const McPoint& p = S.pts[idx];
  return p.kind == "latency" ? measure_latency(p, std::max(reps, 15)) : measure_bandwidth(p, reps);
}

}  // namespace

int main(int argc, char** argv) {
  S.pts = make_points();
  Family fam;
  fam.name = "multicast";
  fam.param_cols = {"kind", "cluster_size", "mode", "tensor_mb", "inner_bytes", "rows", "tile_bytes", "swizzle", "stages"};
  fam.result_cols = {"grid",        "ctas_per_cluster", "clusters",      "smem_bytes",     "passes",
                     "tiles",       "seconds",          "unique_gbps",   "delivered_gbps", "issuer_cold_cycles",
                     "issuer_warm_cycles", "last_cta_cold_cycles", "last_cta_warm_cycles", "sm_mhz", "reps",
                     "reps_ok"};
  for (auto& p : S.pts)
    fam.points.push_back({p.kind, I(p.cs), p.rr ? "multicast_rr" : p.mc ? "multicast" : "plain", p.kind == "latency" ? "" : I(p.size_mb),
                          I(p.inner), I(p.rows), I(p.tile_bytes()), swz_name(p.swizzle()),
                          p.kind == "latency" ? "" : I(p.stages)});
  fam.default_reps = 5;
  fam.setup = [](int) {
    S.dev = dev_info();
    CK(cudaMalloc(&S.tensor, kTensor));
    CK(cudaMemset(S.tensor, 0x3c, kTensor));
    CK(cudaMalloc(&S.flush, kFlushBytes));
    CK(cudaMalloc(&S.out, 2 * kMaxCluster * sizeof(unsigned long long)));
    CK(cudaMalloc(&S.err, sizeof(unsigned)));
    CK(cudaMalloc(&S.sink, 4096 * sizeof(unsigned)));
    CK(cudaMalloc(&S.clk, sizeof(ClockRec)));
    for (auto k : {mc_latency, mc_stream}) set_max_dyn_smem(k, S.dev);
    warmup_kernel<<<S.dev.sms, 128>>>(50000000ull, S.sink);
    CK(cudaDeviceSynchronize());
  };
  fam.measure = measure;
  return run_points(fam, argc, argv);
}
