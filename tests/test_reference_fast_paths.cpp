// The reference engine's fast paths for tiled and gather4 loads (whole rows inside the tensor copied
// per 16-byte cell at the swizzle's XOR, inside 16-byte chunks of partial rows) against its unit
// path (ReferenceOptions::fast_paths = false), on random maps and boxes that exercise the edges:
// boxes past every side of the tensor (negative and past-the-end coordinates), every swizzle and
// atom, every element size, interleave, element strides, ranks 1-5, both fills, padded global
// strides, images cut short (the fault path). Outcome, reason, tx bytes and all of shared memory must
// be identical (shared memory when the load completes).
#define BOOST_TEST_MODULE reference_fast_paths
#include <boost/test/unit_test.hpp>

#include <map>
#include <string>
#include <vector>

#include "tma/descriptor/descriptor_validation.h"
#include "tma/golden/golden_case.h"
#include "tma/reference/reference_engine.h"

using namespace tma;

namespace {

struct Rng {  // splitmix64: the same cases on every host
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
  int64_t in(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo + 1))); }
  bool chance(uint32_t percent) { return below(100) < percent; }
};

struct Case {
  TensorMap m;
  TmaOp op;
  GpuArch arch = GpuArch::sm90;
  uint64_t image = 0;  // global image bytes
};

const std::vector<DataType> kTypes = {DataType::u8,   DataType::u16,      DataType::u32,   DataType::s32,
                                      DataType::u64,  DataType::s64,      DataType::f16,   DataType::f32,
                                      DataType::f64,  DataType::bf16,     DataType::f32_ftz, DataType::tf32,
                                      DataType::tf32_ftz, DataType::b4x16, DataType::b4x16_p64, DataType::b6x16_p32};
const std::vector<std::pair<SwizzleMode, SwizzleAtom>> kSwizzles = {
    {SwizzleMode::none, SwizzleAtom::b16}, {SwizzleMode::b32, SwizzleAtom::b16},
    {SwizzleMode::b64, SwizzleAtom::b16},  {SwizzleMode::b96, SwizzleAtom::b16},
    {SwizzleMode::b128, SwizzleAtom::b16}, {SwizzleMode::b128, SwizzleAtom::b32},
    {SwizzleMode::b128, SwizzleAtom::b32_flip_8b}, {SwizzleMode::b128, SwizzleAtom::b64}};

// A random tiled or gather4 load, mostly one the driver accepts: box[0] bytes a multiple of 16 within
// the swizzle span, dimension 0 a little wider than a few boxes, coordinates that put the box inside,
// across an edge or wholly outside.
Case random_case(Rng& r) {
  Case c;
  c.arch = r.chance(50) ? GpuArch::sm100 : GpuArch::sm90;
  TensorMap& m = c.m;
  m.dtype = kTypes[r.below(kTypes.size())];
  const auto sw = kSwizzles[r.below(kSwizzles.size())];
  m.swizzle = sw.first;
  m.swizzle_atom = sw.second;
  m.oob_fill = r.chance(30) ? OobFill::nan : OobFill::zero;
  m.mode = (c.arch == GpuArch::sm100 && r.chance(15)) ? TensorMode::gather4 : TensorMode::tiled;
  m.rank = m.mode == TensorMode::gather4 ? 2 : static_cast<int>(r.in(1, 5));
  if (m.mode == TensorMode::tiled && m.rank >= 3 && r.chance(15))
    m.interleave = r.chance(50) ? Interleave::b16 : Interleave::b32;
  const uint32_t e = element_bytes(m.dtype), per = elements_per_unit(m.dtype);
  // Box dimension 0: a multiple of 16 bytes, at most the swizzle span (or 256 elements).
  const uint32_t span = swizzle_span(m.swizzle);
  const uint32_t max_bytes = span ? span : 256;
  const uint32_t units16 = static_cast<uint32_t>(r.in(1, std::max<int64_t>(1, max_bytes / 16)));
  m.box[0] = std::min<uint32_t>(256, units16 * 16 * per / e);
  if (is_sub_byte(m.dtype)) m.box[0] = 128;
  if (m.interleave != Interleave::none) m.box[0] = static_cast<uint32_t>(r.in(1, 8));
  m.dims[0] = static_cast<uint64_t>(m.box[0]) * static_cast<uint64_t>(r.in(1, 3)) + static_cast<uint64_t>(r.in(0, 40));
  if (is_sub_byte(m.dtype)) m.dims[0] = (m.dims[0] + 127) / 128 * 128;
  if (m.interleave != Interleave::none) m.dims[0] = static_cast<uint64_t>(r.in(1, 64));
  for (int i = 1; i < m.rank; ++i) {
    m.dims[i] = static_cast<uint64_t>(r.in(1, 12));
    m.box[i] = static_cast<uint32_t>(r.in(1, static_cast<int64_t>(std::min<uint64_t>(m.dims[i] + 3, 8))));
  }
  if (m.mode == TensorMode::gather4) m.box[1] = 1;
  for (int i = 0; i < m.rank; ++i)
    m.element_strides[i] = r.chance(20) ? static_cast<uint32_t>(r.in(1, std::min<int64_t>(3, m.box[i]))) : 1;
  // Strides: the row's bytes (or the interleaved slice group's) rounded up to 16, sometimes padded.
  const uint64_t unit_bytes = m.interleave == Interleave::b16 ? 16 : m.interleave == Interleave::b32 ? 32 : 0;
  uint64_t stride = unit_bytes ? m.dims[0] * unit_bytes : (m.dims[0] * e / per + 15) / 16 * 16;
  for (int i = 1; i < m.rank; ++i) {
    stride += r.chance(30) ? 16 * static_cast<uint64_t>(r.in(1, 4)) : 0;
    m.strides[i - 1] = stride;
    stride *= m.dims[i];
  }
  m.global_address = 16 * static_cast<uint64_t>(r.in(0, 4));
  const uint64_t bytes = m.global_address + (m.rank > 1 ? stride : m.dims[0] * e / per);
  // Now and then an image that ends inside the tensor: the access faults.
  c.image = r.chance(5) ? bytes * static_cast<uint64_t>(r.in(1, 9)) / 10 : bytes + static_cast<uint64_t>(r.in(0, 64));
  // Coordinates: inside, across an edge or outside; dimension 0 on a 16-byte boundary.
  const int64_t step16 = 16 * per / e;
  const int64_t d0 = static_cast<int64_t>(m.dims[0]), b0 = m.box[0];
  int64_t c0 = r.in(-b0 - step16, d0 + step16);
  if (m.interleave == Interleave::none) c0 = (c0 / step16) * step16;
  c.op.coords[0] = static_cast<int32_t>(c0);
  const int ncoords = m.mode == TensorMode::gather4 ? 5 : m.rank;
  for (int i = 1; i < ncoords; ++i) {
    const int dim = m.mode == TensorMode::gather4 ? 1 : i;
    const int64_t di = static_cast<int64_t>(m.dims[dim]);
    c.op.coords[i] = static_cast<int32_t>(r.chance(70) ? r.in(0, std::max<int64_t>(0, di - m.box[dim]))
                                                        : r.in(-static_cast<int64_t>(m.box[dim]) - 1, di + 1));
  }
  c.op.smem_addr = 128 * static_cast<uint32_t>(r.in(0, 16));
  return c;
}

std::string describe(const Case& c) {
  std::string s = "dims";
  for (int i = 0; i < c.m.rank; ++i) s += " " + std::to_string(c.m.dims[i]);
  s += " box";
  for (int i = 0; i < c.m.rank; ++i) s += " " + std::to_string(c.m.box[i]);
  s += " estrides";
  for (int i = 0; i < c.m.rank; ++i) s += " " + std::to_string(c.m.element_strides[i]);
  s += " coords";
  for (int i = 0; i < 5; ++i) s += " " + std::to_string(c.op.coords[i]);
  s += " smem " + std::to_string(c.op.smem_addr) + " image " + std::to_string(c.image) + " address " +
       std::to_string(c.m.global_address) + (c.arch == GpuArch::sm100 ? " sm_100" : " sm_90");
  return s;
}

struct Run {
  OpResult result;
  std::vector<uint8_t> smem;
};

Run run(const Case& c, bool fast) {
  std::vector<uint8_t> global = word_hash_image(c.image);
  Run out{{}, std::vector<uint8_t>(228 * 1024, 0xCD)};
  ReferenceOptions opt;
  opt.arch = c.arch;
  opt.fast_paths = fast;
  out.result = reference_execute(c.m, c.op, global, out.smem, opt);
  return out;
}

// Whether any element of the box is outside the tensor (a whole-row or chunk edge case).
bool crosses_edge(const Case& c) {
  const TensorMap& m = c.m;
  if (c.op.coords[0] < 0 || static_cast<uint64_t>(c.op.coords[0]) + m.box[0] > m.dims[0]) return true;
  if (m.mode == TensorMode::gather4) {
    for (int i = 1; i < 5; ++i)
      if (c.op.coords[i] < 0 || static_cast<uint64_t>(c.op.coords[i]) >= m.dims[1]) return true;
    return false;
  }
  for (int i = 1; i < m.rank; ++i)
    if (c.op.coords[i] < 0 || static_cast<uint64_t>(c.op.coords[i]) + m.box[i] > m.dims[i]) return true;
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(fast_paths_match_the_unit_path) {
  Rng r{20261125};
  std::map<std::string, int> ok_by;  // loads that ran, per feature: each must be exercised
  int ran = 0, faulted = 0;
  for (int i = 0; i < 60000 && ran < 6000; ++i) {
    const Case c = random_case(r);
    if (validate_tensor_map(c.m, c.arch)) continue;  // refused: neither path runs
    const Run fast = run(c, true), slow = run(c, false);
    BOOST_TEST_CONTEXT("case " << i << ": " << to_string(c.m.dtype) << " rank " << c.m.rank << " "
                               << swizzle_name(c.m.swizzle, c.m.swizzle_atom) << " interleave "
                               << to_string(c.m.interleave) << " " << to_string(c.m.mode) << " " << describe(c)) {
      BOOST_TEST(to_string(fast.result.outcome) == to_string(slow.result.outcome));
      BOOST_TEST(fast.result.reason == slow.result.reason);
      BOOST_TEST(fast.result.tx_bytes == slow.result.tx_bytes);
      // After a fault shared memory holds whatever was written before it (silicon traps; the golden
      // replay compares it only when the load completes): the paths stop at different bytes.
      if (fast.result.outcome == Outcome::ok) BOOST_TEST((fast.smem == slow.smem));
    }
    if (fast.result.outcome == Outcome::fault) ++faulted;
    if (fast.result.outcome != Outcome::ok) continue;
    ++ran;
    ok_by[swizzle_name(c.m.swizzle, c.m.swizzle_atom)]++;
    ok_by["bytes " + std::to_string(element_bytes(c.m.dtype))]++;
    ok_by[crosses_edge(c) ? "edge" : "inside"]++;
    if (c.m.interleave != Interleave::none) ok_by["interleave"]++;
    if (c.m.mode == TensorMode::gather4) ok_by["gather4"]++;
    if (c.m.oob_fill == OobFill::nan && crosses_edge(c)) ok_by["nan fill edge"]++;
  }
  BOOST_TEST_MESSAGE(ran << " loads compared, " << faulted << " faults");
  BOOST_TEST(ran >= 2000);
  BOOST_TEST(faulted >= 20);
  for (const auto& sw : kSwizzles) BOOST_TEST(ok_by[swizzle_name(sw.first, sw.second)] >= 50, swizzle_name(sw.first, sw.second));
  for (const char* k : {"bytes 1", "bytes 2", "bytes 4", "bytes 8", "edge", "inside", "interleave", "gather4", "nan fill edge"})
    BOOST_TEST(ok_by[k] >= 30, k << ": " << ok_by[k]);
}

// The bench's shape (64x64 bf16, 128B swizzle) at every position of a small tensor's edges, and the
// same rows without swizzle: whole rows, partial rows and rows wholly outside in one box.
BOOST_AUTO_TEST_CASE(tile_at_every_edge) {
  for (SwizzleMode sw : {SwizzleMode::none, SwizzleMode::b128}) {
    TensorMap m;
    m.dtype = DataType::bf16;
    m.rank = 2;
    m.dims = {200, 100, 0, 0, 0};
    m.strides = {416, 0, 0, 0};
    m.box = {64, 64, 0, 0, 0};
    m.swizzle = sw;
    const uint64_t image = 416 * 100;
    for (int32_t y : {-64, -63, -1, 0, 1, 36, 37, 99, 100})
      for (int32_t x : {-64, -56, -8, 0, 8, 136, 144, 192, 200}) {
        Case c{m, {}, GpuArch::sm90, image};
        c.op.coords = {x, y, 0, 0, 0};
        c.op.smem_addr = 1024;
        const Run fast = run(c, true), slow = run(c, false);
        BOOST_TEST_CONTEXT("swizzle " << swizzle_name(sw, SwizzleAtom::b16) << " at (" << x << ", " << y << ")") {
          BOOST_TEST(to_string(fast.result.outcome) == "ok");
          BOOST_TEST(fast.result.tx_bytes == slow.result.tx_bytes);
          BOOST_TEST((fast.smem == slow.smem));
        }
      }
  }
}
