// roundtrip.csv: where the time of one trip round a stage goes in space.cu's stream. A stream of
// small tiles with few stages is bound by that trip (the producer's issue, the copy, the consumer
// seeing the data, its read and release, the producer seeing the release), not by bytes: space.cu's
// 256 B tiles with 4 stages take 164 ns a tile an SM on the H100, so no part of the trip that
// repeats every tile (the consumer's above all) can take more than 4 x 164 ns. This kernel is
// space.cu's loop (thread 0 produces, thread 32 consumes, one CTA per SM, tiles dealt round robin
// in row order) with clock64 stamps kept in shared memory for 64 tiles of each CTA:
//   P0  the producer sees stage s free (after its wait on the stage's empty barrier)
//   P1  the producer has issued the load (after arrive.expect_tx and the copy)
//   C0  the consumer sees the data (after its wait on the stage's full barrier)
//   C1  the consumer has read a word and released the stage (after its arrive on empty)
// From them: the producer's own cycles (P1 - P0), the copy as the SM sees it (C0 - P1), the
// consumer's own cycles (C1 - C0), the release as the producer sees it (P0[j + S] - C1[j]) and a
// tile's period (C0[j + 1] - C0[j]). Each point is also run without stamps: the stamps' cost.
// Points: 16 B x 16, 32 B x 64, 128 B x 64 and 64 B x 256 bf16 boxes, 1, 2, 4 and 8 stages, over
// a 256 MB tensor after an unrelated 256 MB read (clean) and over a 16 MB tensor the same kernel
// has just read (warm; passes over it so that every CTA takes at least 256 tiles).
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90a roundtrip.cu -o roundtrip -lcuda
// usage: roundtrip OUT.csv STAMPS.csv [reps] [grid]
//   grid: CTAs (one an SM; default every SM); below every SM each CTA takes at most 4,096 tiles, so
//   that one CTA alone shows a load's trip with the memory system otherwise idle (the rows do not
//   say the grid: keep such runs in their own file).
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr int kMaxStages = 8;
constexpr int kRec = 64;         // tiles stamped per CTA
constexpr long long kFrom = 64;  // the first stamped tile (after the ramp-up)
constexpr size_t kBigBytes = 256ull << 20, kWarmBytes = 16ull << 20, kScrubBytes = 256ull << 20;
constexpr unsigned long long kRowBytes = 16384;
constexpr long long kMinTilesPerCta = 256;

struct RtArgs {
  int tiles_x, tiles_y;
  long long count;  // tiles a CTA takes (passes over the grid wrap around)
  int stages, box_w, box_h;  // box in elements (x) and rows
  unsigned tile_bytes, stage_stride;
  int stamps;
  unsigned* rec;                   // [cta][4][kRec] cycles since the CTA's start
  unsigned long long* span;        // [0] first start (atomicMin), [1] last end (atomicMax) in ns
  unsigned long long* clk;         // CTA 0: clock64 and globaltimer at start and end
  unsigned* sink;
  unsigned* err;
};

__global__ void __launch_bounds__(64) rt_stream(const __grid_constant__ CUtensorMap map, RtArgs a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ __align__(8) unsigned long long full[kMaxStages], empty[kMaxStages];
  __shared__ unsigned st[4][kRec];
  __shared__ long long c_start;
  const unsigned raw = smem_u32(smem_raw);
  const unsigned base = (raw + 1023u) & ~1023u;
  const unsigned char* base_ptr = smem_raw + (base - raw);
  if (threadIdx.x == 0) {
    c_start = clock64();
    const unsigned long long g = globaltimer();
    atomicMin(&a.span[0], g);
    if (blockIdx.x == 0) {
      a.clk[0] = (unsigned long long)c_start;
      a.clk[1] = g;
    }
    for (int s = 0; s < a.stages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    mbar_init_fence();
  }
  __syncthreads();
  TileWalk w;
  w.init(blockIdx.x, gridDim.x, a.tiles_x, a.tiles_y);
  const long long cnt = a.count;
  if (threadIdx.x == 0) {
    int s = 0;
    unsigned k = 0;
    for (long long j = 0; j < cnt; ++j) {
      if (j >= a.stages && !mbar_wait(smem_u32(&empty[s]), (k - 1) & 1, kWaitLong)) {
        atomicAdd(a.err, 1u);
        break;
      }
      const long long p0 = clock64();
      mbar_arrive_expect(smem_u32(&full[s]), a.tile_bytes);
      tma_load_2d(base + (unsigned)s * a.stage_stride, &map, w.a * a.box_w, w.b * a.box_h, smem_u32(&full[s]));
      const long long p1 = clock64();
      if (a.stamps && j >= kFrom && j < kFrom + kRec) {
        st[0][j - kFrom] = (unsigned)(p0 - c_start);
        st[1][j - kFrom] = (unsigned)(p1 - c_start);
      }
      w.next();
      if (++s == a.stages) {
        s = 0;
        ++k;
      }
    }
  } else if (threadIdx.x == 32) {
    unsigned acc = 0;
    int s = 0;
    unsigned k = 0;
    for (long long j = 0; j < cnt; ++j) {
      if (!mbar_wait(smem_u32(&full[s]), k & 1, kWaitLong)) {
        atomicAdd(a.err, 1u);
        break;
      }
      const long long c0 = clock64();
      acc += *reinterpret_cast<const volatile unsigned*>(base_ptr + (size_t)s * a.stage_stride + 4 * (j & 7));
      mbar_arrive(smem_u32(&empty[s]));
      const long long c1 = clock64();
      if (a.stamps && j >= kFrom && j < kFrom + kRec) {
        st[2][j - kFrom] = (unsigned)(c0 - c_start);
        st[3][j - kFrom] = (unsigned)(c1 - c_start);
      }
      if (++s == a.stages) {
        s = 0;
        ++k;
      }
    }
    a.sink[blockIdx.x] = acc;
    const unsigned long long g = globaltimer();
    atomicMax(&a.span[1], g);
    if (blockIdx.x == 0) {
      a.clk[2] = (unsigned long long)clock64();
      a.clk[3] = g;
    }
  }
  __syncthreads();
  if (a.stamps)
    for (int i = threadIdx.x; i < 4 * kRec; i += blockDim.x) a.rec[(size_t)blockIdx.x * 4 * kRec + i] = (&st[0][0])[i];
}

struct Shape {
  unsigned inner, rows;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: roundtrip OUT.csv STAMPS.csv [reps] [grid]\n");
    return 2;
  }
  const int reps = argc > 3 ? atoi(argv[3]) : 3;
  const int grid_arg = argc > 4 ? atoi(argv[4]) : 0;
  try {
    CK(cudaSetDevice(0));
    const DevInfo dev = dev_info();
    const int grid = grid_arg > 0 && grid_arg < dev.sms ? grid_arg : dev.sms;
    void *big = nullptr, *warm = nullptr, *scrub = nullptr;
    unsigned *sink = nullptr, *rec = nullptr, *err = nullptr;
    unsigned long long *span = nullptr, *clk = nullptr;
    CK(cudaMalloc(&big, kBigBytes));
    CK(cudaMalloc(&warm, kWarmBytes));
    CK(cudaMalloc(&scrub, kScrubBytes));
    CK(cudaMemset(big, 1, kBigBytes));
    CK(cudaMemset(warm, 3, kWarmBytes));
    CK(cudaMemset(scrub, 2, kScrubBytes));
    CK(cudaMalloc(&sink, 1 << 20));
    CK(cudaMalloc(&rec, (size_t)dev.sms * 4 * kRec * sizeof(unsigned)));
    CK(cudaMalloc(&err, sizeof(unsigned)));
    CK(cudaMalloc(&span, 2 * sizeof(unsigned long long)));
    CK(cudaMalloc(&clk, 4 * sizeof(unsigned long long)));
    CK(cudaFuncSetAttribute(rt_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, dev.smem_optin - 2048));
    warmup_kernel<<<dev.sms, 128>>>(50000000ull, sink);
    CK(cudaDeviceSynchronize());
    FILE* f = fopen(argv[1], "w");
    FILE* fs = fopen(argv[2], "w");
    if (!f || !fs) throw std::runtime_error("cannot write the output files");
    fprintf(f, "point,inner_bytes,rows,tile_bytes,stages,l2_state,tensor_mb,tiles_per_cta,stamps,rep,span_ns,span_gbps,"
               "sm_mhz,producer_cycles,copy_cycles,consumer_cycles,release_cycles,period_cycles,trip_cycles,err\n");
    fprintf(fs, "point,stamps_rep,cta,j,p0,p1,c0,c1\n");
    const Shape shapes[] = {{16, 16}, {32, 64}, {128, 64}, {64, 256}};
    const int stage_list[] = {1, 2, 4, 8};
    int point = 0;
    for (int state = 0; state < 2; ++state) {
      for (const Shape& sh : shapes) {
        for (int stages : stage_list) {
          const bool is_warm = state == 1;
          void* tensor = is_warm ? warm : big;
          const size_t bytes = is_warm ? kWarmBytes : kBigBytes;
          alignas(64) CUtensorMap map;
          encode_2d(&map, dtype_of("bf16"), tensor, kRowBytes, bytes / kRowBytes, sh.inner, sh.rows, 0, 0);
          RtArgs a;
          a.tiles_x = (int)(kRowBytes / sh.inner);
          a.tiles_y = (int)(bytes / kRowBytes / sh.rows);
          const long long total = (long long)a.tiles_x * a.tiles_y;
          // whole tiles for every CTA (the rest left out); a partial grid takes at most 4,096 each
          const long long per_cta = grid < dev.sms ? std::min(total / grid, 4096LL) : total / grid;
          a.count = is_warm && grid == dev.sms ? std::max(per_cta, kMinTilesPerCta) : per_cta;
          a.stages = stages;
          a.box_w = (int)sh.inner / 2;
          a.box_h = (int)sh.rows;
          a.tile_bytes = sh.inner * sh.rows;
          a.stage_stride = (a.tile_bytes + 1023u) & ~1023u;
          // One CTA per SM, as space.cu forces it: more shared memory than half an SM's, and room
          // for the stages after the 1 KB alignment.
          const size_t smem = std::max((size_t)dev.smem_per_sm / 2 + 4096, (size_t)stages * a.stage_stride + 2048);
          a.rec = rec;
          a.span = span;
          a.clk = clk;
          a.sink = sink;
          a.err = err;
          for (int stamps = 0; stamps < 2; ++stamps) {
            for (int rep = 0; rep < reps; ++rep) {
              touch_kernel<<<dev.sms * 4, 256>>>(reinterpret_cast<const uint4*>(scrub), kScrubBytes / 16, sink);
              CK(cudaDeviceSynchronize());
              a.stamps = 0;
              if (is_warm) {  // the same kernel reads the tensor once first
                const unsigned long long init[2] = {~0ull, 0ull};
                CK(cudaMemcpy(span, init, sizeof(init), cudaMemcpyHostToDevice));
                rt_stream<<<grid, 64, smem>>>(map, a);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
              }
              a.stamps = stamps;
              const unsigned long long init[2] = {~0ull, 0ull};
              CK(cudaMemcpy(span, init, sizeof(init), cudaMemcpyHostToDevice));
              CK(cudaMemset(err, 0, sizeof(unsigned)));
              CK(cudaMemset(rec, 0, (size_t)dev.sms * 4 * kRec * sizeof(unsigned)));
              rt_stream<<<grid, 64, smem>>>(map, a);
              CK(cudaGetLastError());
              CK(cudaDeviceSynchronize());
              unsigned long long sp[2], ck[4];
              unsigned e = 0;
              CK(cudaMemcpy(sp, span, sizeof(sp), cudaMemcpyDeviceToHost));
              CK(cudaMemcpy(ck, clk, sizeof(ck), cudaMemcpyDeviceToHost));
              CK(cudaMemcpy(&e, err, sizeof(e), cudaMemcpyDeviceToHost));
              const double span_ns = (double)(sp[1] - sp[0]);
              const double moved = (double)a.count * grid * a.tile_bytes;
              const double mhz = ck[3] > ck[1] ? (double)(ck[2] - ck[0]) / (double)(ck[3] - ck[1]) * 1000.0 : NAN;
              std::vector<double> prod, copy, cons, rel, period, trip;
              if (stamps) {
                std::vector<unsigned> h((size_t)grid * 4 * kRec);
                CK(cudaMemcpy(h.data(), rec, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
                const int n = (int)std::min<long long>(kRec, std::max<long long>(0, a.count - kFrom));
                for (int c = 0; c < grid; ++c) {
                  const unsigned* r = &h[(size_t)c * 4 * kRec];
                  const unsigned *p0 = r, *p1 = r + kRec, *c0 = r + 2 * kRec, *c1 = r + 3 * kRec;
                  for (int j = 0; j < n; ++j) {
                    prod.push_back((double)p1[j] - p0[j]);
                    copy.push_back((double)c0[j] - p1[j]);
                    cons.push_back((double)c1[j] - c0[j]);
                    if (j + stages < n) {
                      rel.push_back((double)p0[j + stages] - c1[j]);
                      trip.push_back((double)p0[j + stages] - p0[j]);
                    }
                    if (j + 1 < n) period.push_back((double)c0[j + 1] - c0[j]);
                    if (rep == 0)
                      fprintf(fs, "%d,%d,%d,%d,%u,%u,%u,%u\n", point, rep, c, j, p0[j], p1[j], c0[j], c1[j]);
                  }
                }
              }
              fprintf(f, "%d,%u,%u,%u,%d,%s,%zu,%lld,%d,%d,%.0f,%.2f,%.0f,%s,%s,%s,%s,%s,%s,%u\n", point, sh.inner,
                      sh.rows, a.tile_bytes, stages, is_warm ? "warm" : "clean", bytes >> 20, a.count, stamps, rep,
                      span_ns, moved / span_ns, mhz, F(median(prod), 0).c_str(), F(median(copy), 0).c_str(),
                      F(median(cons), 0).c_str(), F(median(rel), 0).c_str(), F(median(period), 0).c_str(),
                      F(median(trip), 0).c_str(), e);
              fflush(f);
              printf("point %2d %3uB x %3u S%d %-5s stamps %d rep %d: %8.1f GB/s  prod %s copy %s cons %s rel %s "
                     "period %s trip %s\n",
                     point, sh.inner, sh.rows, stages, is_warm ? "warm" : "clean", stamps, rep, moved / span_ns,
                     F(median(prod), 0).c_str(), F(median(copy), 0).c_str(), F(median(cons), 0).c_str(),
                     F(median(rel), 0).c_str(), F(median(period), 0).c_str(), F(median(trip), 0).c_str());
              fflush(stdout);
            }
          }
          ++point;
        }
      }
    }
    fclose(f);
    fclose(fs);
    return 0;
  } catch (const std::exception& e) {
    fprintf(stderr, "roundtrip: %s\n", e.what());
    return 3;
  }
}
