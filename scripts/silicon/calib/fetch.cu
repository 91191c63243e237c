// fetch.csv: how many bytes the L2 fetches from DRAM for a miss on one 32-byte sector.
//
// Most points read one sector-sized piece of every line of a 64 MB span, so that nothing else
// of a line is ever asked for: DRAM bytes per requested byte (ncu dram__bytes_read.sum) is then
// the fill size over the bytes asked for (1: sector fills; 2: 64-byte fills; 4: whole lines).
// The `tma` points with `width` wider than `inner` read more of each row later: the tensor's rows
// are `width` bytes, taken in boxes of `inner` bytes in column order (every box of the first
// `inner` bytes of the rows, then of the next ...), so that what a fill promoted for a row is
// asked for a column of boxes later (16 MB spans: the promoted blocks stay in the L2); what the
// L2 counts then (lts__t_sectors_op_read) is what the rest of these points cannot show.
//   tma   a 2D u8 tensor of `inner` bytes per row and a row pitch of `pitch` bytes (so each row is
//         the start of its own line, or line pair); 132 CTAs load its 256-row boxes once each,
//         with the descriptor's L2 promotion.
//   ldcg  plain ld.global.cg of 16 bytes at every `pitch` bytes (the L1 bypassed), for contrast:
//         the L2 is asked for the 32-byte sector that holds them (inner 32).
// `limit` is cudaLimitMaxL2FetchGranularity set before the launch (0: left at the driver's
// default, which is printed). ncu flushes the caches before each launch (--cache-control all).
//
//   fetch --list        the points, CSV on stdout (no GPU needed)
//   fetch --point N     one launch of point N (kernels fetch_tma / fetch_ldcg; profile with
//                       -k regex:fetch_ -c 1); prints the limit before and after setting it
//
// Build: nvcc -O2 -std=c++17 -arch=sm_90 fetch.cu -o fetch -lcuda
#include "calib_common.cuh"

using namespace calib;

namespace {

constexpr size_t kSpanBytes = 64ull << 20;  // the buffer; a point may use less of it
constexpr unsigned kBoxRows = 256;

struct FetchPoint {
  const char* kind;  // tma | ldcg
  int inner;         // bytes of a row each box (or load) reads
  int pitch;         // bytes between rows
  int promotion;     // L2 promotion of the tensor map (tma only)
  int limit;         // cudaLimitMaxL2FetchGranularity, 0: default
  int width = 0;     // bytes of each row read in all, in column order (0: inner)
  size_t span = kSpanBytes;
  int row_bytes() const { return width ? width : inner; }
  size_t rows() const { return span / pitch; }
  size_t requested_bytes() const { return rows() * (size_t)row_bytes(); }
};

std::vector<FetchPoint> make_points() {
  std::vector<FetchPoint> v;
  for (int pitch : {64, 128, 256}) v.push_back({"tma", 32, pitch, 0, 0});
  for (int limit : {32, 64, 128}) v.push_back({"tma", 32, 128, 0, limit});
  for (int promo : {64, 128}) v.push_back({"tma", 32, 128, promo, 0});
  v.push_back({"tma", 64, 128, 0, 0});
  // 256B promotion of one row in each 256-byte block: the unasked rest of the row's own line and
  // the whole other line of the block (whose L2 partition may differ from the first's).
  for (int inner : {32, 64, 128}) v.push_back({"tma", inner, 256, 256, 0});
  // Later asks of promoted (and 64-byte-fetched) sectors: 32-byte boxes in column order over rows
  // of 32-256 bytes, 256 bytes apart, 16 MB.
  for (int width : {32, 64, 128, 256}) v.push_back({"tma", 32, 256, 256, 0, width, 16ull << 20});
  for (int width : {32, 64}) v.push_back({"tma", 32, 256, 0, 0, width, 16ull << 20});
  for (int limit : {0, 32, 64, 128}) v.push_back({"ldcg", 32, 128, 0, limit});
  return v;
}

// Tile t: column t / tiles_per_column (of `inner` bytes), box of rows t % tiles_per_column.
__global__ void fetch_tma(const __grid_constant__ CUtensorMap map, unsigned tiles, unsigned tiles_per_column,
                          unsigned inner, unsigned box_bytes, unsigned* err) {
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x != 0) return;
  const unsigned mbar = smem_u32(&bar);
  mbar_init(mbar, 1);
  mbar_init_fence();
  unsigned parity = 0;
  for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {
    mbar_arrive_expect(mbar, box_bytes);
    tma_load_2d(smem_u32(smem), &map, (int)(t / tiles_per_column * inner), (int)(t % tiles_per_column * kBoxRows),
                mbar);
    if (!mbar_wait(mbar, parity, kWaitLong)) {
      atomicAdd(err, 1u);
      return;
    }
    parity ^= 1;
  }
}

__global__ void fetch_ldcg(const unsigned char* base, size_t rows, unsigned pitch, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows; i += (size_t)gridDim.x * blockDim.x) {
    const uint4 v = __ldcg(reinterpret_cast<const uint4*>(base + i * pitch));
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

size_t get_limit() {
  size_t v = 0;
  CK(cudaDeviceGetLimit(&v, cudaLimitMaxL2FetchGranularity));
  return v;
}

int run_point(const FetchPoint& p, size_t index) {
  CK(cudaSetDevice(0));
  const DevInfo dev = dev_info();
  const size_t before = get_limit();
  if (p.limit) CK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, (size_t)p.limit));
  const size_t after = get_limit();
  unsigned char* buf = nullptr;
  unsigned* aux = nullptr;
  CK(cudaMalloc(&buf, kSpanBytes));
  CK(cudaMalloc(&aux, 2 * sizeof(unsigned)));
  CK(cudaMemset(buf, 1, kSpanBytes));
  CK(cudaMemset(aux, 0, 2 * sizeof(unsigned)));
  CK(cudaDeviceSynchronize());
  if (std::string(p.kind) == "tma") {
    CUtensorMap map;
    unsigned long long dims[2] = {(unsigned long long)p.row_bytes(), p.rows()};
    unsigned long long strides[1] = {(unsigned long long)p.pitch};
    unsigned box[2] = {(unsigned)p.inner, kBoxRows};
    encode_tiled(&map, dtype_of("u8"), 2, buf, dims, strides, box, 0, p.promotion);
    const unsigned per_column = (unsigned)(p.rows() / kBoxRows), box_bytes = (unsigned)p.inner * kBoxRows;
    const unsigned tiles = per_column * (unsigned)(p.row_bytes() / p.inner);
    fetch_tma<<<dev.sms, 32, box_bytes>>>(map, tiles, per_column, (unsigned)p.inner, box_bytes, aux);
  } else {
    fetch_ldcg<<<dev.sms * 4, 256>>>(buf, p.rows(), (unsigned)p.pitch, aux + 1);
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  unsigned err = 0;
  CK(cudaMemcpy(&err, aux, sizeof(err), cudaMemcpyDeviceToHost));
  fprintf(stderr, "fetch point %zu: %s inner %d pitch %d promotion %d limit_default %zu limit_set %zu timeouts %u\n",
          index, p.kind, p.inner, p.pitch, p.promotion, before, after, err);
  printf("limit_default=%zu limit_effective=%zu\n", before, after);
  CK(cudaFree(buf));
  CK(cudaFree(aux));
  return err ? 5 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<FetchPoint> pts = make_points();
  if (arg_flag(argc, argv, "--list")) {
    printf("fpoint,kind,inner_bytes,pitch_bytes,l2_promotion,fetch_limit,span_bytes,requested_bytes,width_bytes\n");
    for (size_t i = 0; i < pts.size(); ++i)
      printf("%zu,%s,%d,%d,%s,%d,%zu,%zu,%d\n", i, pts[i].kind, pts[i].inner, pts[i].pitch,
             l2_name(pts[i].promotion).c_str(), pts[i].limit, pts[i].span, pts[i].requested_bytes(),
             pts[i].row_bytes());
    return 0;
  }
  const char* n = arg_value(argc, argv, "--point");
  if (!n || strtoull(n, nullptr, 10) >= pts.size()) {
    fprintf(stderr, "usage: fetch --list | --point N (N < %zu)\n", pts.size());
    return 2;
  }
  const size_t i = strtoull(n, nullptr, 10);
  try {
    return run_point(pts[i], i);
  } catch (const std::exception& e) {
    fprintf(stderr, "fetch point %zu: %s\n", i, e.what());
    return 3;
  }
}
