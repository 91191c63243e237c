// workloads.csv: the TMA loads of FlashAttention-3-style forward loops and split-KV decode loops,
// with no math: a consumer that spins a set number of cycles per KV step stands for QK^T and PV.
// Written to follow the model's `kind: attention` / `kind: decode` workloads step for step
// (docs/scenarios.md), so that a scenario of each point replays the same loads in the same order.
//
// Tensors (bf16, innermost first): Q [D, seq_q, heads, batch], K and V [D, seq_kv, kv_heads, batch],
// O [D, seq_q, heads, batch] (bf16; decode: f32 partial outputs [D, 1, heads, batch x splits]).
// Boxes: 64 columns (128 bytes, 128B swizzle for Q, K, V) x block rows x hq heads; a 128-wide head is
// two boxes. A work item is (batch, query-head group of hq, KV split, query block); items in
// FlashAttention-3's order (query block fastest, last to first when causal; then split, head,
// batch), dealt to a persistent grid of one CTA per SM (CTA b takes items b, b + grid, ...).
// Per item, its KV blocks last to first (causal: none above the diagonal, aligned bottom right);
// its first step loads K, then Q (into its own buffer, once the consumer has finished the item
// before), then V, all on the stage's barrier; every later step K and V. The consumer (thread 32)
// waits for the stage, reads a word, spins `compute` cycles, releases it; after an item's last
// step it stores the output tile (two boxes) with a bulk tensor store from its own buffer.
// Timed both ways (event_us, span_us) after unrelated reads made the L2 clean, as gemm.cu.
//
// Extra modes for ncu: --list-traffic; --traffic-all [--from K --to K] (every point once, each
// after the clean-L2 reads; only the measured launches are called wl_loop).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a workloads.cu -o workloads -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr int kMaxStages = 4;
constexpr size_t kScrubBytes = 256ull << 20;

struct WlPoint {
  std::string kind = "attention";  // attention | decode
  int batch = 2, heads = 16, kv_heads = 4, seq_q = 2048, seq_kv = 2048;
  int D = 128, bm = 128, bn = 128, hq = 1;  // Q box: 64 x bm x hq heads
  int causal = 0, split = 1, stages = 2;
  int l2 = 256;  // K and V promotion (Q: 128B as the model's scenario, O: none)
  int compute = 0;
  size_t q_bytes() const { return (size_t)D * seq_q * heads * batch * 2; }
  size_t kv_bytes() const { return (size_t)D * seq_kv * kv_heads * batch * 2; }
  int o_elem() const { return kind == "decode" ? 4 : 2; }
  size_t o_bytes() const { return (size_t)D * seq_q * heads * batch * split * o_elem(); }
};

std::vector<WlPoint> make_points() {
  std::vector<WlPoint> v;
  struct Shape {
    int batch, heads, kv_heads, seq;
  };
  // the shipped scenario's shape, multi-head attention, a long sequence
  const Shape att[3] = {{2, 16, 4, 2048}, {4, 32, 32, 1024}, {1, 32, 8, 8192}};
  for (const Shape& s : att)
    for (int causal : {0, 1})
      for (int l2 : {0, 256})
        for (int c : {0, 2048}) {
          WlPoint p;
          p.batch = s.batch;
          p.heads = s.heads;
          p.kv_heads = s.kv_heads;
          p.seq_q = p.seq_kv = s.seq;
          p.causal = causal;
          p.l2 = l2;
          p.compute = c;
          v.push_back(p);
        }
  {  // 128B promotion on the shipped shape
    for (int causal : {0, 1})
      for (int c : {0, 2048}) {
        WlPoint p;
        p.causal = causal;
        p.l2 = 128;
        p.compute = c;
        v.push_back(p);
      }
  }
  struct DShape {
    int batch, seq_kv, split;
  };
  const DShape dec[4] = {{4, 4096, 4}, {16, 4096, 1}, {4, 16384, 4}, {8, 8192, 2}};
  for (const DShape& s : dec)
    for (int l2 : {0, 256})
      for (int c : {0, 1024}) {
        WlPoint p;
        p.kind = "decode";
        p.batch = s.batch;
        p.heads = 32;
        p.kv_heads = 8;
        p.seq_q = 1;
        p.seq_kv = s.seq_kv;
        p.bm = 1;
        p.hq = 4;
        p.split = s.split;
        p.l2 = l2;
        p.compute = c;
        v.push_back(p);
      }
  return v;
}

struct Span {
  unsigned long long start, end;
};

struct WlArgs {
  int items, heads, hq, group, m_blocks, kv_blocks, per_split, split, bm, bn, seq_q, seq_kv, causal;
  int stages, chunks;
  unsigned kv_box, q_box, o_box, stage_bytes, q_base, o_base;
  unsigned kv_tx, q_tx;  // bytes a K (V) box and a Q box bring (the boxes' buffers are 1 KB aligned)
  unsigned compute;
  unsigned long long timeout_cycles;
  unsigned* sink;
  unsigned* err;
  ClockRec* clk;
  Span* span;
};

struct Item {
  int b, h, m, sp;
};

// Item `i` of FlashAttention-3's order: query block fastest (last to first when causal), then the
// split, then the head group, then the batch.
__device__ __forceinline__ Item item_of(const WlArgs& a, int i) {
  Item it;
  it.m = i % a.m_blocks;
  if (a.causal) it.m = a.m_blocks - 1 - it.m;
  i /= a.m_blocks;
  it.sp = i % a.split;
  i /= a.split;
  const int groups = a.heads / a.hq;
  it.h = (i % groups) * a.hq;
  it.b = i / groups;
  return it;
}
__device__ __forceinline__ void kv_range(const WlArgs& a, const Item& it, int& first, int& end) {
  end = a.kv_blocks;
  if (a.causal) {
    const int last_key = min(a.seq_kv, (it.m + 1) * a.bm + a.seq_kv - a.seq_q);
    end = min(end, (last_key + a.bn - 1) / a.bn);
  }
  first = min(it.sp * a.per_split, end);
  end = min(first + a.per_split, end);
}

__device__ __forceinline__ void store_4d(const void* map, int c0, int c1, int c2, int c3, unsigned src) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];" ::"l"(
                   reinterpret_cast<unsigned long long>(map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
               : "memory");
}

__device__ __forceinline__ void loop_body(const CUtensorMap* mq, const CUtensorMap* mk, const CUtensorMap* mv,
                                          const CUtensorMap* mo, const WlArgs& a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[kMaxStages], empty[kMaxStages], q_empty;
  const unsigned raw = smem_u32(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;
  const unsigned char* base_ptr = smem_raw + (base - raw);
  if (threadIdx.x == 0) {
    atomicMin(&a.span->start, globaltimer());
    for (int s = 0; s < a.stages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    mbar_init(smem_u32(&q_empty), 1);
    mbar_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {  // producer
    if (blockIdx.x == 0) clock_begin(a.clk);
    int s = 0, items_done = 0;
    unsigned k = 0;
    long long j = 0;
    for (int i = blockIdx.x; i < a.items; i += gridDim.x, ++items_done) {
      const Item it = item_of(a, i);
      const int kvh = it.h / a.group;
      int first, end;
      kv_range(a, it, first, end);
      for (int blk = end - 1; blk >= first; --blk, ++j) {
        if (j >= a.stages && !mbar_wait(smem_u32(&empty[s]), (k - 1) & 1, a.timeout_cycles)) {
          atomicAdd(a.err, 1u);
          return;
        }
        const bool first_step = blk == end - 1;
        const unsigned st = base + (unsigned)s * a.stage_bytes;
        const unsigned bar = smem_u32(&full[s]);
        mbar_arrive_expect(bar, 2u * a.chunks * a.kv_tx + (first_step ? a.chunks * a.q_tx : 0u));
        for (int c = 0; c < a.chunks; ++c) {
          const int co[4] = {c * 64, blk * a.bn, kvh, it.b};
          tma_load(4, st + c * a.kv_box, mk, co, bar);
        }
        if (first_step) {
          if (items_done > 0 && !mbar_wait(smem_u32(&q_empty), (items_done - 1) & 1, a.timeout_cycles)) {
            atomicAdd(a.err, 1u);
            return;
          }
          for (int c = 0; c < a.chunks; ++c) {
            const int co[4] = {c * 64, it.m * a.bm, it.h, it.b};
            tma_load(4, base + a.q_base + c * a.q_box, mq, co, bar);
          }
        }
        for (int c = 0; c < a.chunks; ++c) {
          const int co[4] = {c * 64, blk * a.bn, kvh, it.b};
          tma_load(4, st + (a.chunks + c) * a.kv_box, mv, co, bar);
        }
        if (++s == a.stages) {
          s = 0;
          ++k;
        }
      }
    }
  } else if (threadIdx.x == 32) {  // consumer
    unsigned acc = 0;
    int s = 0;
    unsigned k = 0;
    for (int i = blockIdx.x; i < a.items; i += gridDim.x) {
      const Item it = item_of(a, i);
      int first, end;
      kv_range(a, it, first, end);
      for (int blk = end - 1; blk >= first; --blk) {
        if (!mbar_wait(smem_u32(&full[s]), k & 1, a.timeout_cycles)) {
          atomicAdd(a.err, 1u);
          a.sink[blockIdx.x] = acc;
          return;
        }
        acc += *reinterpret_cast<const volatile unsigned*>(base_ptr + (size_t)s * a.stage_bytes + 4 * (blk & 7));
        if (a.compute) {
          const long long t0 = clock64();
          while (clock64() - t0 < (long long)a.compute) {
          }
        }
        mbar_arrive(smem_u32(&empty[s]));
        if (++s == a.stages) {
          s = 0;
          ++k;
        }
      }
      mbar_arrive(smem_u32(&q_empty));  // Q's buffer is free for the next item
      if (end > first) {                // the output tile, from its own buffer
        bulk_wait_read<0>();
        for (int c = 0; c < a.chunks; ++c)
          store_4d(mo, c * 64, it.m * a.bm, it.h, it.b * a.split + it.sp, base + a.o_base + c * a.o_box);
        bulk_commit();
      }
    }
    bulk_wait_all();
    a.sink[blockIdx.x] = acc;
    atomicMax(&a.span->end, globaltimer());
    if (blockIdx.x == 0) clock_end(a.clk);
  }
}

__global__ void __launch_bounds__(64) wl_loop(const __grid_constant__ CUtensorMap mq, const __grid_constant__ CUtensorMap mk,
                                              const __grid_constant__ CUtensorMap mv, const __grid_constant__ CUtensorMap mo,
                                              WlArgs a) {
  loop_body(&mq, &mk, &mv, &mo, a);
}
__global__ void __launch_bounds__(64) wl_prewarm(const __grid_constant__ CUtensorMap mq, const __grid_constant__ CUtensorMap mk,
                                                 const __grid_constant__ CUtensorMap mv, const __grid_constant__ CUtensorMap mo,
                                                 WlArgs a) {
  loop_body(&mq, &mk, &mv, &mo, a);
}

struct State {
  DevInfo dev;
  int max_smem = 0;
  std::vector<WlPoint> pts;
  unsigned char *Q = nullptr, *K = nullptr, *V = nullptr, *O = nullptr, *scrub = nullptr;
  unsigned* sink = nullptr;
  unsigned* err = nullptr;
  ClockRec* clk = nullptr;
  Span* span = nullptr;
};
State S;

std::vector<std::string> params_of(const WlPoint& p) {
  return {p.kind, I(p.batch), I(p.heads), I(p.kv_heads), I(p.seq_q), I(p.seq_kv), I(p.D), I(p.bm), I(p.bn),
          I(p.hq), I(p.causal), I(p.split), I(p.stages), l2_name(p.l2), I(p.compute)};
}
const std::vector<std::string> kParamCols = {"kind",  "batch", "heads", "kv_heads", "seq_q",  "seq_kv", "head_dim", "block_m",
                                             "block_n", "q_heads_per_box", "causal", "split_kv", "stages", "l2_promotion",
                                             "compute_cycles"};

constexpr size_t kQMax = 128ull << 20, kKVMax = 128ull << 20, kOMax = 128ull << 20;

void alloc() {
  CK(cudaMalloc(&S.Q, kQMax));
  CK(cudaMalloc(&S.K, kKVMax));
  CK(cudaMalloc(&S.V, kKVMax));
  CK(cudaMalloc(&S.O, kOMax));
  CK(cudaMemset(S.Q, 0x3c, kQMax));
  CK(cudaMemset(S.K, 0x3d, kKVMax));
  CK(cudaMemset(S.V, 0x3e, kKVMax));
  CK(cudaMemset(S.O, 0, kOMax));
  CK(cudaMalloc(&S.scrub, kScrubBytes));
  CK(cudaMemset(S.scrub, 0x11, kScrubBytes));
  CK(cudaMalloc(&S.sink, 4096 * sizeof(unsigned)));
  CK(cudaMalloc(&S.err, sizeof(unsigned)));
  CK(cudaMalloc(&S.clk, sizeof(ClockRec)));
  CK(cudaMalloc(&S.span, sizeof(Span)));
  S.max_smem = std::min(set_max_dyn_smem(wl_loop, S.dev), set_max_dyn_smem(wl_prewarm, S.dev));
}

struct Prepared {
  CUtensorMap mq, mk, mv, mo;
  WlArgs args;
  unsigned grid;
  size_t smem;
  double bytes;  // loaded and stored bytes
};

void encode_4d(CUtensorMap* map, const char* dt, void* addr, const unsigned long long* dims, const unsigned* box,
               int swizzle, int l2) {
  const Dtype t = dtype_of(dt);
  unsigned long long strides[3] = {dims[0] * t.size, dims[0] * dims[1] * t.size, dims[0] * dims[1] * dims[2] * t.size};
  encode_tiled(map, t, 4, addr, dims, strides, box, swizzle, l2);
}

unsigned align1k(size_t b) { return (unsigned)((b + 1023) & ~(size_t)1023); }

Prepared prepare(const WlPoint& p) {
  alignas(64) Prepared q;
  if (p.q_bytes() > kQMax || p.kv_bytes() > kKVMax || p.o_bytes() > kOMax) throw PointSkip("tensors too large");
  const unsigned long long dq[4] = {(unsigned long long)p.D, (unsigned long long)p.seq_q, (unsigned long long)p.heads,
                                    (unsigned long long)p.batch};
  const unsigned long long dkv[4] = {(unsigned long long)p.D, (unsigned long long)p.seq_kv, (unsigned long long)p.kv_heads,
                                     (unsigned long long)p.batch};
  const unsigned long long dout[4] = {(unsigned long long)p.D, (unsigned long long)p.seq_q, (unsigned long long)p.heads,
                                      (unsigned long long)p.batch * p.split};
  const unsigned bq[4] = {64, (unsigned)p.bm, (unsigned)p.hq, 1}, bkv[4] = {64, (unsigned)p.bn, 1, 1};
  encode_4d(&q.mq, "bf16", S.Q, dq, bq, 128, 128);
  encode_4d(&q.mk, "bf16", S.K, dkv, bkv, 128, p.l2);
  encode_4d(&q.mv, "bf16", S.V, dkv, bkv, 128, p.l2);
  encode_4d(&q.mo, p.o_elem() == 4 ? "f32" : "bf16", S.O, dout, bq, 0, 0);
  WlArgs& a = q.args;
  a = WlArgs();
  a.heads = p.heads;
  a.hq = p.hq;
  a.group = p.heads / p.kv_heads;
  a.m_blocks = (p.seq_q + p.bm - 1) / p.bm;
  a.kv_blocks = (p.seq_kv + p.bn - 1) / p.bn;
  a.split = p.split;
  a.per_split = (a.kv_blocks + p.split - 1) / p.split;
  a.bm = p.bm;
  a.bn = p.bn;
  a.seq_q = p.seq_q;
  a.seq_kv = p.seq_kv;
  a.causal = p.causal;
  a.items = p.batch * (p.heads / p.hq) * p.split * a.m_blocks;
  a.stages = p.stages;
  a.chunks = p.D / 64;
  a.kv_box = align1k((size_t)64 * p.bn * 2);
  a.q_box = align1k((size_t)64 * p.bm * p.hq * 2);
  a.o_box = align1k((size_t)64 * p.bm * p.hq * p.o_elem());
  a.kv_tx = (unsigned)(64 * p.bn * 2);
  a.q_tx = (unsigned)(64 * p.bm * p.hq * 2);
  a.stage_bytes = 2u * a.chunks * a.kv_box;
  a.q_base = a.stage_bytes * p.stages;
  a.o_base = a.q_base + a.chunks * a.q_box;
  a.compute = (unsigned)p.compute;
  a.timeout_cycles = kWaitLong;
  a.sink = S.sink;
  a.err = S.err;
  a.clk = S.clk;
  a.span = S.span;
  q.smem = (size_t)a.o_base + a.chunks * a.o_box + 1024;
  if (q.smem > (size_t)S.max_smem) throw PointSkip("shared memory: need " + I((long long)q.smem));
  q.grid = (unsigned)S.dev.sms;
  // bytes moved: per item Q once, K and V per KV block, O once (what a model scenario counts)
  double bytes = 0;
  for (int i = 0; i < a.items; ++i) {
    int rem = i;
    int m = rem % a.m_blocks;
    if (a.causal) m = a.m_blocks - 1 - m;
    rem /= a.m_blocks;
    const int sp = rem % a.split;
    int end = a.kv_blocks;
    if (a.causal) end = std::min(end, (std::min(p.seq_kv, (m + 1) * p.bm + p.seq_kv - p.seq_q) + p.bn - 1) / p.bn);
    const int first = std::min(sp * a.per_split, end);
    end = std::min(first + a.per_split, end);
    if (end <= first) continue;
    bytes += (double)(end - first) * 2 * p.D * p.bn * 2 + (double)p.D * p.bm * p.hq * 2 + (double)p.D * p.bm * p.hq * p.o_elem();
  }
  q.bytes = bytes;
  return q;
}

void make_clean() {
  touch_kernel<<<S.dev.sms * 4, 256>>>(reinterpret_cast<const uint4*>(S.scrub), kScrubBytes / 16, S.sink);
  CK(cudaGetLastError());
  const Span init = {~0ull, 0ull};
  CK(cudaMemcpy(S.span, &init, sizeof(init), cudaMemcpyHostToDevice));
}

Result measure(size_t idx, int reps) {
  const WlPoint& p = S.pts[idx];
  Prepared q = prepare(p);
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaMemset(S.err, 0, sizeof(unsigned)));
  wl_prewarm<<<q.grid, 64, q.smem>>>(q.mq, q.mk, q.mv, q.mo, q.args);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> ev_us, span_us, mhz;
  for (int r = 0; r < reps; ++r) {
    make_clean();
    CK(cudaEventRecord(e0));
    wl_loop<<<q.grid, 64, q.smem>>>(q.mq, q.mk, q.mv, q.mo, q.args);
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
  Result res;
  res.values = {I(q.grid),         I((long long)q.smem),     I(q.args.items),       F(q.bytes, 0),
                F(median(ev_us), 2), F(vmin(ev_us), 2),      F(median(span_us), 2), F(vmin(span_us), 2),
                F(q.bytes / median(span_us) / 1e3, 1), F(median(mhz), 1), I(reps)};
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
      Prepared q = prepare(S.pts[i]);
      CK(cudaMemset(S.err, 0, sizeof(unsigned)));
      make_clean();
      wl_loop<<<q.grid, 64, q.smem>>>(q.mq, q.mk, q.mv, q.mo, q.args);
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
  fam.name = "workloads";
  fam.param_cols = kParamCols;
  fam.result_cols = {"grid",    "smem_bytes",  "items",     "bytes",  "event_us", "event_us_min",
                     "span_us", "span_us_min", "span_gbps", "sm_mhz", "reps"};
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
