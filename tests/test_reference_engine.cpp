// The reference engine against every worked example of PTX ISA 5.5 (seed 001): the im2col examples
// and the traversal-stride example (sm_90), the im2col::w / ::w::128 examples and the wOffset
// examples (sm_100), the gather4 bounding-box figure, the sub-byte layouts, and every swizzle table
// with its base-offset table. docs/blackwell-forms.md states each reading the expectations encode.
//
// Coordinate order of the seed's im2col examples: they list the tensor coordinates outermost first
// (N, H, W, C); e.g. "(7, 7, 4, 0)" is N = 7, H = 7, W = 4, C = 0. Read innermost first, every example
// would start at channel 7 (not 16-byte aligned: sm_90 traps), examples 2 and 3 would put W outside the
// bounding box (sm_90 traps), and the wOffset examples would pin H at -1 (an all-fill load).
#define BOOST_TEST_MODULE reference_engine
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "tma/golden/golden_case.h"
#include "tma/reference/reference_engine.h"

using namespace tma;

namespace {

constexpr uint32_t kSmemSize = 228 * 1024;
constexpr uint8_t kSentinel = 0xCD;  // shared memory before an operation (as the golden replay)

std::vector<uint8_t> fresh_smem() { return std::vector<uint8_t>(kSmemSize, kSentinel); }

// ---------------------------------------------------------------- im2col helpers

// A pixel of a 4D NHWC tensor.
struct Pix {
  int64_t n, h, w;
  bool operator==(const Pix& o) const { return n == o.n && h == o.h && w == o.w; }
};

// Appends the pixels (n, h, w_first), (n, h, w_first + step), ... up to w_last.
void walk(std::vector<Pix>& out, int64_t n, int64_t h, int64_t w_first, int64_t w_last, int64_t step = 1) {
  for (int64_t w = w_first; w <= w_last; w += step) out.push_back({n, h, w});
}

// 4D NHWC map, dense strides.
TensorMap nhwc(TensorMode mode, DataType t, uint64_t c, uint64_t w, uint64_t h, uint64_t n) {
  TensorMap m;
  m.mode = mode;
  m.dtype = t;
  m.rank = 4;
  m.dims = {c, w, h, n, 0};
  const uint64_t pixel = c * element_bytes(t);
  m.strides = {pixel, pixel * w, pixel * w * h, 0};
  return m;
}

uint64_t image_bytes(const TensorMap& m) { return m.strides[m.rank - 2] * m.dims[m.rank - 1]; }

// Bytes [first, first + n) of shared-memory row `row` of a load that put rows at `base` with the map's
// row padding and swizzle.
std::vector<uint8_t> smem_row(const std::vector<uint8_t>& smem, const TensorMap& m, uint32_t base, uint32_t row_bytes,
                              uint32_t row, uint32_t first, uint32_t n) {
  const uint32_t pitch = std::max(row_bytes, swizzle_span(m.swizzle));
  std::vector<uint8_t> out;
  for (uint32_t i = first; i < first + n; ++i)
    out.push_back(smem[reference_swizzle(m.swizzle, m.swizzle_atom, base + row * pitch + i)]);
  return out;
}

// What a pixel's channels [c0, c0 + cpp) read as: the global bytes, or zeros outside the tensor.
std::vector<uint8_t> pixel_bytes(const std::vector<uint8_t>& global, const TensorMap& m, const Pix& p, int64_t c0) {
  const uint32_t n = m.channels_per_pixel * element_bytes(m.dtype);
  const bool inside = p.w >= 0 && p.w < int64_t(m.dims[1]) && p.h >= 0 && p.h < int64_t(m.dims[2]) && p.n >= 0 &&
                      p.n < int64_t(m.dims[3]);
  if (!inside) return std::vector<uint8_t>(n, 0);
  const uint64_t off = m.global_address + c0 * element_bytes(m.dtype) + p.w * m.strides[0] + p.h * m.strides[1] +
                       p.n * m.strides[2];
  return std::vector<uint8_t>(global.begin() + off, global.begin() + off + n);
}

// Runs an im2col-family load and checks that shared-memory row i holds exactly pixel expected[i], that
// the row after the last is untouched, and that tx counts every row.
void expect_pixel_rows(const TensorMap& m, const TmaOp& op, GpuArch arch, const std::vector<Pix>& expected) {
  std::vector<uint8_t> global = word_hash_image(image_bytes(m));
  std::vector<uint8_t> smem = fresh_smem();
  const OpResult r = reference_execute(m, op, global, smem, ReferenceOptions{arch});
  BOOST_TEST_REQUIRE((r.outcome == Outcome::ok), r.reason);
  const uint32_t row_bytes = m.channels_per_pixel * element_bytes(m.dtype);
  for (size_t i = 0; i < expected.size(); ++i) {
    const Pix& p = expected[i];
    BOOST_TEST((smem_row(smem, m, op.smem_addr, row_bytes, i, 0, row_bytes) == pixel_bytes(global, m, p, op.coords[0])),
               "row " << i << " should hold pixel n=" << p.n << " h=" << p.h << " w=" << p.w);
  }
  const std::vector<uint8_t> after = smem_row(smem, m, op.smem_addr, row_bytes, expected.size(), 0, row_bytes);
  BOOST_TEST((after == std::vector<uint8_t>(row_bytes, kSentinel)), "row " << expected.size() << " was written");
  BOOST_TEST(r.tx_bytes == expected.size() * row_bytes);
}

// im2col Examples 1 and 2 share the tensor: C 64, W 9, H 14, N 64; 64 pixels of 8 channels.
TensorMap im2col_example_map(int32_t lower, int32_t upper) {
  TensorMap m = nhwc(TensorMode::im2col, DataType::u16, 64, 9, 14, 64);
  m.pixels_per_column = 64;
  m.channels_per_pixel = 8;
  m.lower_corner = {lower, lower, 0};
  m.upper_corner = {upper, upper, 0};
  return m;
}

TmaOp im2col_op(int32_t c, int32_t w, int32_t h, int32_t n) {
  TmaOp op;
  op.coords = {c, w, h, n, 0};
  op.smem_addr = 1024;
  return op;
}

}  // namespace

// ================================================================ im2col (sm_90), Figures 13-15

// Example 1: corners -1/-1 in W and H, so the box spans W -1..7 and H -1..12; the walk starts at
// (W 4, H 7) of image 7, runs to the end of the box row, then over whole box rows (W -1..7), and past H 12
// returns to H -1 of the next image. Positions with W or H = -1 read the fill.
BOOST_AUTO_TEST_CASE(im2col_example1_figure13) {
  TensorMap m = im2col_example_map(-1, -1);
  TmaOp op = im2col_op(0, 4, 7, 7);  // seed: (7, 7, 4, 0) = N, H, W, C
  std::vector<Pix> px;
  walk(px, 7, 7, 4, 7);
  for (int h = 8; h <= 12; ++h) walk(px, 7, h, -1, 7);
  walk(px, 8, -1, -1, 7);
  walk(px, 8, 0, -1, 4);
  BOOST_TEST_REQUIRE(px.size() == 64u);
  expect_pixel_rows(m, op, GpuArch::sm90, px);
}

// Example 2: corners 0 / -2, so the box (filter base positions) spans W 0..6 and H 0..11; every pixel is
// read at its position + the im2col offsets (2, 2), all inside the tensor (a "valid" 3x3 convolution).
BOOST_AUTO_TEST_CASE(im2col_example2_figure14) {
  TensorMap m = im2col_example_map(0, -2);
  TmaOp op = im2col_op(0, 4, 7, 7);
  op.im2col_offsets = {2, 2, 0};
  std::vector<Pix> base;  // filter base positions
  walk(base, 7, 7, 4, 6);
  for (int h = 8; h <= 11; ++h) walk(base, 7, h, 0, 6);
  for (int h = 0; h <= 3; ++h) walk(base, 8, h, 0, 6);
  walk(base, 8, 4, 0, 4);
  BOOST_TEST_REQUIRE(base.size() == 64u);
  std::vector<Pix> px;
  for (const Pix& p : base) px.push_back({p.n, p.h + 2, p.w + 2});
  expect_pixel_rows(m, op, GpuArch::sm90, px);
}

// Traversal stride 2 (W and H; N steps by 1): 32 pixels of 16 channels; the box spans W -1..6 and
// H -1..12. The walk steps 2 at a time, returns to the lower corner (-1, not the start's lattice) past
// the box end, and reads every position + offsets (1, 1).
BOOST_AUTO_TEST_CASE(im2col_traversal_stride_figure15) {
  TensorMap m = nhwc(TensorMode::im2col, DataType::u16, 64, 8, 14, 64);
  m.pixels_per_column = 32;
  m.channels_per_pixel = 16;
  m.lower_corner = {-1, -1, 0};
  m.upper_corner = {-1, -1, 0};
  m.element_strides = {1, 2, 2, 1, 1};
  TmaOp op = im2col_op(0, 5, 7, 7);  // seed: (7, 7, 5, 0) = N, H, W, C
  op.im2col_offsets = {1, 1, 0};
  std::vector<Pix> base;
  walk(base, 7, 7, 5, 5);
  walk(base, 7, 9, -1, 5, 2);
  walk(base, 7, 11, -1, 5, 2);
  for (int h = -1; h <= 7; h += 2) walk(base, 8, h, -1, 5, 2);
  walk(base, 8, 9, -1, 3, 2);
  BOOST_TEST_REQUIRE(base.size() == 32u);
  std::vector<Pix> px;
  for (const Pix& p : base) px.push_back({p.n, p.h + 1, p.w + 1});
  expect_pixel_rows(m, op, GpuArch::sm90, px);
}

// ================================================================ im2col::w and ::w128 (sm_100)

namespace {

// The im2col::w / ::w128 examples: C 128, W 9, H 7, N 64, 64 channels of u16 per pixel (128 bytes, so
// the 128B swizzle the wide modes require), box corners W 0 / 0 (W 0..8), start (N 7, H 2, W 3).
TensorMap wide_example_map(TensorMode mode) {
  TensorMap m = nhwc(mode, DataType::u16, 128, 9, 7, 64);
  m.swizzle = SwizzleMode::b128;
  m.channels_per_pixel = 64;
  m.pixels_per_column = 128;
  return m;
}

TmaOp wide_op(int32_t w, int32_t h, int32_t n, uint16_t halo, uint16_t offset) {
  TmaOp op = im2col_op(0, w, h, n);
  op.w_halo = halo;
  op.w_offset = offset;
  return op;
}

}  // namespace

// 128 pixels along W with H fixed at 2: image 7 from W 3, whole box rows of images 8..20, image 21 up
// to W 4; then the two halo pixels continue along W (W 5, 6 of image 21) in the rows right after.
BOOST_AUTO_TEST_CASE(im2col_w_example_figure18) {
  TensorMap m = wide_example_map(TensorMode::im2col_w);
  std::vector<Pix> px;
  walk(px, 7, 2, 3, 8);
  for (int n = 8; n <= 20; ++n) walk(px, n, 2, 0, 8);
  walk(px, 21, 2, 0, 4);
  BOOST_TEST_REQUIRE(px.size() == 128u);
  walk(px, 21, 2, 5, 6);  // wHalo = 2
  expect_pixel_rows(m, wide_op(3, 2, 7, 2, 0), GpuArch::sm100, px);
}

// The same walk in four groups of 32; after each group its two halo pixels: the next two W positions
// after the group's last pixel in that image, past the box end too (W 9, 10 are outside the tensor).
BOOST_AUTO_TEST_CASE(im2col_w128_example_figure19) {
  TensorMap m = wide_example_map(TensorMode::im2col_w128);
  m.pixels_per_column = 7;  // ignored by w128
  std::vector<Pix> px;
  // group 0: main pixels 0..31, halo
  walk(px, 7, 2, 3, 8);
  walk(px, 8, 2, 0, 8);
  walk(px, 9, 2, 0, 8);
  walk(px, 10, 2, 0, 7);
  walk(px, 10, 2, 8, 9);
  // group 1: main pixels 32..63, halo
  walk(px, 10, 2, 8, 8);
  for (int n = 11; n <= 13; ++n) walk(px, n, 2, 0, 8);
  walk(px, 14, 2, 0, 3);
  walk(px, 14, 2, 4, 5);
  // group 2: main pixels 64..95, halo
  walk(px, 14, 2, 4, 8);
  for (int n = 15; n <= 17; ++n) walk(px, n, 2, 0, 8);
  walk(px, 17, 2, 9, 10);
  // group 3: main pixels 96..127, halo
  for (int n = 18; n <= 20; ++n) walk(px, n, 2, 0, 8);
  walk(px, 21, 2, 0, 4);
  walk(px, 21, 2, 5, 6);
  BOOST_TEST_REQUIRE(px.size() == 4u * 34u);
  expect_pixel_rows(m, wide_op(3, 2, 7, 2, 0), GpuArch::sm100, px);
}

// wOffset Example 1: W 9, corners -1 / 0 (box W -1..8), traversal stride 2, start (N 7, H 2, W -1).
// Buffer 1 (wHalo 1, wOffset 0): W -1, 1, 3, 5, 7 of each image (5 per image: 25 images, then 3), then
// one halo pixel 2 further (W 5). Buffer 2 (wHalo 0, wOffset 1): box 0..9, W 0, 2, 4, 6, 8 of each image.
// Together: for a 3-wide filter with stride 2 and padding 1, buffer 1 row i holds tap 0 and row i + 1
// tap 2 of output pixel i (within an image), buffer 2 tap 1.
BOOST_AUTO_TEST_CASE(im2col_w_woffset_example1_figures20_21) {
  TensorMap m = nhwc(TensorMode::im2col_w, DataType::u16, 128, 9, 67, 64);
  m.swizzle = SwizzleMode::b128;
  m.channels_per_pixel = 64;
  m.pixels_per_column = 128;
  m.lower_corner = {-1, 0, 0};
  m.upper_corner = {0, 0, 0};
  m.element_strides = {1, 2, 1, 1, 1};

  std::vector<Pix> buffer1;
  for (int n = 7; n <= 31; ++n) walk(buffer1, n, 2, -1, 7, 2);
  walk(buffer1, 32, 2, -1, 3, 2);
  BOOST_TEST_REQUIRE(buffer1.size() == 128u);
  walk(buffer1, 32, 2, 5, 5);  // halo
  expect_pixel_rows(m, wide_op(-1, 2, 7, 1, 0), GpuArch::sm100, buffer1);

  std::vector<Pix> buffer2;
  for (int n = 7; n <= 31; ++n) walk(buffer2, n, 2, 0, 8, 2);
  walk(buffer2, 32, 2, 0, 4, 2);
  BOOST_TEST_REQUIRE(buffer2.size() == 128u);
  expect_pixel_rows(m, wide_op(-1, 2, 7, 0, 1), GpuArch::sm100, buffer2);
}

// wOffset Example 2: W 7, corners -1 / -1, traversal stride 3, start W -1: buffer k (wOffset k - 1)
// holds W -1 + (k - 1), 2 + (k - 1), 5 + (k - 1) of each image, i.e. tap k - 1 of a 3-wide filter with
// stride 3 and padding 1; buffer 3's W 7 is past the tensor (fill).
BOOST_AUTO_TEST_CASE(im2col_w_woffset_example2_figures22_24) {
  TensorMap m = nhwc(TensorMode::im2col_w, DataType::u16, 128, 7, 7, 64);
  m.swizzle = SwizzleMode::b128;
  m.channels_per_pixel = 64;
  m.pixels_per_column = 128;
  m.lower_corner = {-1, 0, 0};
  m.upper_corner = {-1, 0, 0};
  m.element_strides = {1, 3, 1, 1, 1};
  for (uint16_t offset = 0; offset < 3; ++offset) {
    BOOST_TEST_CONTEXT("buffer " << offset + 1) {
      std::vector<Pix> px;
      for (int n = 7; n <= 48; ++n) walk(px, n, 2, -1 + offset, 5 + offset, 3);
      walk(px, 49, 2, -1 + offset, 2 + offset, 3);
      BOOST_TEST_REQUIRE(px.size() == 128u);
      expect_pixel_rows(m, wide_op(-1, 2, 7, 0, offset), GpuArch::sm100, px);
    }
  }
}

// Figure 17: the first element may lie left of the box (filled while outside the tensor), not right of it.
BOOST_AUTO_TEST_CASE(im2col_w_first_element_left_of_box) {
  TensorMap m = wide_example_map(TensorMode::im2col_w);
  m.pixels_per_column = 12;
  std::vector<Pix> px;
  walk(px, 7, 2, -2, 8);
  walk(px, 8, 2, 0, 0);
  expect_pixel_rows(m, wide_op(-2, 2, 7, 0, 0), GpuArch::sm100, px);

  std::vector<uint8_t> global = word_hash_image(image_bytes(m));
  std::vector<uint8_t> smem = fresh_smem();
  const OpResult r = reference_execute(m, wide_op(9, 2, 7, 0, 0), global, smem, ReferenceOptions{GpuArch::sm100});
  BOOST_TEST((r.outcome == Outcome::fault), "W 9 is right of the box 0..8: " << r.reason);
}

BOOST_AUTO_TEST_CASE(im2col_w_is_refused_on_sm90) {
  TensorMap m = wide_example_map(TensorMode::im2col_w);
  std::vector<uint8_t> global = word_hash_image(image_bytes(m));
  std::vector<uint8_t> smem = fresh_smem();
  const OpResult r = reference_execute(m, wide_op(3, 2, 7, 2, 0), global, smem, ReferenceOptions{GpuArch::sm90});
  BOOST_TEST((r.outcome == Outcome::encode_error), r.reason);
}

// ================================================================ gather4 / scatter4 (sm_100)

namespace {

// 2D f16 tensor of 64 columns x 12 rows (128-byte rows); boxes of 16 elements x 1 row.
TensorMap gather4_map() {
  TensorMap m;
  m.mode = TensorMode::gather4;
  m.dtype = DataType::f16;
  m.rank = 2;
  m.dims = {64, 12, 0, 0, 0};
  m.strides = {128, 0, 0, 0};
  m.box = {16, 1, 0, 0, 0};
  return m;
}

TmaOp gather4_op(OpKind kind, int32_t column, std::array<int32_t, 4> rows) {
  TmaOp op;
  op.kind = kind;
  op.coords = {column, rows[0], rows[1], rows[2], rows[3]};
  op.smem_addr = 2048;
  return op;
}

OpResult run(const TensorMap& m, const TmaOp& op, std::vector<uint8_t>& global, std::vector<uint8_t>& smem,
             GpuArch arch = GpuArch::sm100) {
  return reference_execute(m, op, global, smem, ReferenceOptions{arch});
}

// Global bytes of row y, elements [x, x + n) of a 2D map (zeros where outside the tensor).
std::vector<uint8_t> row_elements(const std::vector<uint8_t>& global, const TensorMap& m, int64_t x, int64_t y,
                                  uint32_t n) {
  const uint32_t e = element_bytes(m.dtype);
  std::vector<uint8_t> out;
  for (int64_t i = x; i < x + n; ++i)
    for (uint32_t b = 0; b < e; ++b)
      out.push_back((i >= 0 && i < int64_t(m.dims[0]) && y >= 0 && y < int64_t(m.dims[1]))
                        ? global[m.global_address + y * m.strides[0] + i * e + b]
                        : 0);
  return out;
}

}  // namespace

// Figure 10: four boxes at rows 2, 5, 0, 9 of one column form four consecutive shared-memory rows, in
// the instruction's order. (The figure's column is 1; a 16-byte-aligned column is used, since the tile
// rules the mode keeps require it: column 1 faults, checked below.)
BOOST_AUTO_TEST_CASE(gather4_figure10_rows) {
  const TensorMap m = gather4_map();
  std::vector<uint8_t> global = word_hash_image(64 * 128);
  std::vector<uint8_t> smem = fresh_smem();
  const TmaOp op = gather4_op(OpKind::load, 16, {2, 5, 0, 9});
  const OpResult r = run(m, op, global, smem);
  BOOST_TEST_REQUIRE((r.outcome == Outcome::ok), r.reason);
  const std::array<int, 4> rows = {2, 5, 0, 9};
  for (uint32_t i = 0; i < 4; ++i)
    BOOST_TEST((smem_row(smem, m, op.smem_addr, 32, i, 0, 32) == row_elements(global, m, 16, rows[i], 16)), "row " << i);
  BOOST_TEST((smem_row(smem, m, op.smem_addr, 32, 4, 0, 32) == std::vector<uint8_t>(32, kSentinel)));
  BOOST_TEST(r.tx_bytes == 4u * 32u);

  std::vector<uint8_t> smem2 = fresh_smem();
  BOOST_TEST((run(m, gather4_op(OpKind::load, 1, {2, 5, 0, 9}), global, smem2).outcome == Outcome::fault));
}

// Rows are padded to the swizzle span and swizzled like tiled rows: 32-byte rows under 64B swizzle.
BOOST_AUTO_TEST_CASE(gather4_swizzled_rows) {
  TensorMap m = gather4_map();
  m.swizzle = SwizzleMode::b64;
  std::vector<uint8_t> global = word_hash_image(64 * 128);
  std::vector<uint8_t> smem = fresh_smem();
  const TmaOp op = gather4_op(OpKind::load, 32, {11, 3, 7, 1});
  BOOST_TEST_REQUIRE((run(m, op, global, smem).outcome == Outcome::ok));
  const std::array<int, 4> rows = {11, 3, 7, 1};
  for (uint32_t i = 0; i < 4; ++i)
    BOOST_TEST((smem_row(smem, m, op.smem_addr, 32, i, 0, 32) == row_elements(global, m, 32, rows[i], 16)), "row " << i);
  // row 1 is at bytes 64..95 of the first 128-byte line (line 16 of the window: no XOR), row 2 on line 17
  BOOST_TEST(smem[op.smem_addr + 64] == global[3 * 128 + 64]);
  BOOST_TEST(smem[op.smem_addr + 128 + 16] == global[7 * 128 + 64]);
}

// Out-of-bound rows and elements are filled on load.
BOOST_AUTO_TEST_CASE(gather4_out_of_bound_fill) {
  const TensorMap m = gather4_map();
  std::vector<uint8_t> global = word_hash_image(64 * 128);
  std::vector<uint8_t> smem = fresh_smem();
  const TmaOp op = gather4_op(OpKind::load, 56, {11, 12, -1, 3});
  BOOST_TEST_REQUIRE((run(m, op, global, smem).outcome == Outcome::ok));
  const std::array<int, 4> rows = {11, 12, -1, 3};
  for (uint32_t i = 0; i < 4; ++i)
    BOOST_TEST((smem_row(smem, m, op.smem_addr, 32, i, 0, 32) == row_elements(global, m, 56, rows[i], 16)), "row " << i);
  BOOST_TEST((smem_row(smem, m, op.smem_addr, 32, 1, 0, 32) == std::vector<uint8_t>(32, 0)));
}

// scatter4 writes the four shared-memory rows to the four global rows and nothing else; a row past the
// tensor is skipped; dimension 0 clips at 16-byte chunks like a tiled store.
BOOST_AUTO_TEST_CASE(scatter4_rows) {
  const TensorMap m = gather4_map();
  const std::vector<uint8_t> before = word_hash_image(64 * 128);
  std::vector<uint8_t> smem = fresh_smem();
  const std::vector<uint8_t> source = word_hash_image(4 * 32, 777);
  std::copy(source.begin(), source.end(), smem.begin() + 2048);

  std::vector<uint8_t> global = before;
  BOOST_TEST_REQUIRE((run(m, gather4_op(OpKind::store, 16, {2, 5, 0, 9}), global, smem).outcome == Outcome::ok));
  std::vector<uint8_t> expected = before;
  const std::array<int, 4> rows = {2, 5, 0, 9};
  for (int i = 0; i < 4; ++i) std::copy_n(source.begin() + 32 * i, 32, expected.begin() + rows[i] * 128 + 32);
  BOOST_TEST((global == expected));

  // column 56: elements 56..63 (first 16-byte chunk) stored, 64..71 (a chunk starting past the row) not;
  // row 12 is past the tensor and skipped.
  global = before;
  BOOST_TEST_REQUIRE((run(m, gather4_op(OpKind::store, 56, {1, 12, 4, 4}), global, smem).outcome == Outcome::ok));
  expected = before;
  std::copy_n(source.begin(), 16, expected.begin() + 1 * 128 + 112);
  std::copy_n(source.begin() + 64, 16, expected.begin() + 4 * 128 + 112);  // row 4 twice: the later row wins
  std::copy_n(source.begin() + 96, 16, expected.begin() + 4 * 128 + 112);
  BOOST_TEST((global == expected));
}

BOOST_AUTO_TEST_CASE(scatter4_refusals) {
  const TensorMap m = gather4_map();
  std::vector<uint8_t> global = word_hash_image(64 * 128);
  std::vector<uint8_t> smem = fresh_smem();
  BOOST_TEST((run(m, gather4_op(OpKind::store, 16, {2, -1, 0, 9}), global, smem).outcome == Outcome::fault));
  TmaOp red = gather4_op(OpKind::reduce, 16, {2, 5, 0, 9});
  BOOST_TEST((run(m, red, global, smem).outcome == Outcome::fault));
}

BOOST_AUTO_TEST_CASE(gather4_faults_on_sm90) {
  const TensorMap m = gather4_map();
  std::vector<uint8_t> global = word_hash_image(64 * 128);
  std::vector<uint8_t> smem = fresh_smem();
  BOOST_TEST((run(m, gather4_op(OpKind::load, 16, {2, 5, 0, 9}), global, smem, GpuArch::sm90).outcome == Outcome::fault));
  BOOST_TEST((run(m, gather4_op(OpKind::store, 16, {2, 5, 0, 9}), global, smem, GpuArch::sm90).outcome == Outcome::fault));
}

// ================================================================ sub-byte types (sm_100)

namespace {

TensorMap sub_byte_map(DataType t, uint64_t dim0, uint64_t rows, uint64_t stride, uint32_t box0, uint32_t box1) {
  TensorMap m;
  m.dtype = t;
  m.rank = 2;
  m.dims = {dim0, rows, 0, 0, 0};
  m.strides = {stride, 0, 0, 0};
  m.box = {box0, box1, 0, 0, 0};
  return m;
}

TmaOp tile_op(OpKind kind, int32_t x, int32_t y) {
  TmaOp op;
  op.kind = kind;
  op.coords = {x, y, 0, 0, 0};
  return op;
}

std::vector<uint8_t> slice(const std::vector<uint8_t>& v, size_t at, size_t n) {
  return std::vector<uint8_t>(v.begin() + at, v.begin() + at + n);
}

}  // namespace

// .b4x16: sixteen 4-bit values in 8 bytes, copied as is; dimension 0 counts the 4-bit values.
BOOST_AUTO_TEST_CASE(b4x16_copied_as_is) {
  const TensorMap m = sub_byte_map(DataType::b4x16, 128, 4, 64, 64, 2);  // box: 64 values = 32 bytes per row
  std::vector<uint8_t> global = word_hash_image(4 * 64);
  std::vector<uint8_t> smem = fresh_smem();
  const OpResult r = run(m, tile_op(OpKind::load, 64, 1), global, smem);
  BOOST_TEST_REQUIRE((r.outcome == Outcome::ok), r.reason);
  BOOST_TEST((slice(smem, 0, 32) == slice(global, 1 * 64 + 32, 32)));
  BOOST_TEST((slice(smem, 32, 32) == slice(global, 2 * 64 + 32, 32)));
  BOOST_TEST(smem[64] == kSentinel);
  BOOST_TEST(r.tx_bytes == 64u);
  // a start of 16 values is 8 bytes: not 16-byte aligned
  BOOST_TEST((run(m, tile_op(OpKind::load, 16, 0), global, smem).outcome == Outcome::fault));
}

// globalDim[0] of b4x16 need only be even: a 16-value unit straddling the end keeps its inside values
// and reads zeros for the rest.
BOOST_AUTO_TEST_CASE(b4x16_partial_unit_at_the_end) {
  const TensorMap m = sub_byte_map(DataType::b4x16, 20, 2, 16, 32, 1);
  std::vector<uint8_t> global = word_hash_image(2 * 16);
  std::vector<uint8_t> smem = fresh_smem();
  BOOST_TEST_REQUIRE((run(m, tile_op(OpKind::load, 0, 1), global, smem).outcome == Outcome::ok));
  std::vector<uint8_t> expected = slice(global, 16, 10);  // values 0..19 = bytes 0..9
  expected.resize(16, 0);
  BOOST_TEST((slice(smem, 0, 16) == expected));
}

// .b4x16_p64: 8 data bytes then 8 bytes of padding per 16 values in shared memory; the padding is
// "un-initialized" (left as it was). tx counts the 16-byte shared-memory units.
BOOST_AUTO_TEST_CASE(b4x16_p64_padding_left_alone) {
  const TensorMap m = sub_byte_map(DataType::b4x16_p64, 256, 2, 128, 128, 2);
  std::vector<uint8_t> global = word_hash_image(2 * 128);
  std::vector<uint8_t> smem = fresh_smem();
  const OpResult r = run(m, tile_op(OpKind::load, 128, 0), global, smem);
  BOOST_TEST_REQUIRE((r.outcome == Outcome::ok), r.reason);
  for (uint32_t row = 0; row < 2; ++row)
    for (uint32_t k = 0; k < 8; ++k) {
      BOOST_TEST((slice(smem, row * 128 + 16 * k, 8) == slice(global, row * 128 + 64 + 8 * k, 8)));
      BOOST_TEST((slice(smem, row * 128 + 16 * k + 8, 8) == std::vector<uint8_t>(8, kSentinel)));
    }
  BOOST_TEST(r.tx_bytes == 256u);
  // out of bound units: data bytes zero, padding still untouched
  std::vector<uint8_t> smem2 = fresh_smem();
  BOOST_TEST_REQUIRE((run(m, tile_op(OpKind::load, 192, 0), global, smem2).outcome == Outcome::ok));
  BOOST_TEST((slice(smem2, 0, 8) == slice(global, 96, 8)));
  BOOST_TEST((slice(smem2, 4 * 16, 8) == std::vector<uint8_t>(8, 0)));
  BOOST_TEST((slice(smem2, 4 * 16 + 8, 8) == std::vector<uint8_t>(8, kSentinel)));
  // a load-only type: a store through it faults
  BOOST_TEST((run(m, tile_op(OpKind::store, 0, 0), global, smem).outcome == Outcome::fault));
}

// .b6x16_p32: 12 data bytes then 4 bytes of padding per 16 values, under a 128B swizzle here.
BOOST_AUTO_TEST_CASE(b6x16_p32_padding_left_alone) {
  TensorMap m = sub_byte_map(DataType::b6x16_p32, 128, 4, 96, 128, 2);
  m.swizzle = SwizzleMode::b128;
  std::vector<uint8_t> global = word_hash_image(4 * 96);
  std::vector<uint8_t> smem = fresh_smem();
  const OpResult r = run(m, tile_op(OpKind::load, 0, 2), global, smem);
  BOOST_TEST_REQUIRE((r.outcome == Outcome::ok), r.reason);
  for (uint32_t row = 0; row < 2; ++row)
    for (uint32_t k = 0; k < 8; ++k) {
      const uint32_t cell = reference_swizzle(m.swizzle, m.swizzle_atom, row * 128 + 16 * k);
      BOOST_TEST((slice(smem, cell, 12) == slice(global, (2 + row) * 96 + 12 * k, 12)));
      BOOST_TEST((slice(smem, cell + 12, 4) == std::vector<uint8_t>(4, kSentinel)));
    }
  BOOST_TEST(r.tx_bytes == 256u);
}

// .b6p2x16 (a store through a b6x16_p32 map): each shared-memory byte holds 6 data bits at the LSB and
// 2 padding bits; the store drops the padding and packs the 16 values into 12 bytes.
BOOST_AUTO_TEST_CASE(b6p2x16_store_packs) {
  const TensorMap m = sub_byte_map(DataType::b6x16_p32, 128, 2, 96, 128, 1);
  const std::vector<uint8_t> before = word_hash_image(2 * 96);
  std::vector<uint8_t> smem = fresh_smem();
  for (uint32_t i = 0; i < 128; ++i) smem[i] = static_cast<uint8_t>(0xC0 | ((i * 37 + 5) & 0x3F));
  std::vector<uint8_t> global = before;
  BOOST_TEST_REQUIRE((run(m, tile_op(OpKind::store, 0, 1), global, smem).outcome == Outcome::ok));
  BOOST_TEST((slice(global, 0, 96) == slice(before, 0, 96)));  // row 0 untouched
  for (uint32_t i = 0; i < 128; ++i) {
    const uint32_t bit = 6 * i;
    uint32_t v = 0;
    for (uint32_t b = 0; b < 6; ++b) v |= ((global[96 + (bit + b) / 8] >> ((bit + b) % 8)) & 1u) << b;
    BOOST_TEST(v == ((i * 37 + 5) & 0x3Fu), "value " << i);
  }
}

BOOST_AUTO_TEST_CASE(b4x16_store_copies_as_is) {
  const TensorMap m = sub_byte_map(DataType::b4x16, 128, 2, 64, 64, 1);
  std::vector<uint8_t> global = word_hash_image(2 * 64);
  std::vector<uint8_t> smem = fresh_smem();
  const std::vector<uint8_t> source = word_hash_image(32, 99);
  std::copy(source.begin(), source.end(), smem.begin());
  BOOST_TEST_REQUIRE((run(m, tile_op(OpKind::store, 64, 1), global, smem).outcome == Outcome::ok));
  BOOST_TEST((slice(global, 64 + 32, 32) == source));
}

BOOST_AUTO_TEST_CASE(sub_byte_refused_on_sm90) {
  const TensorMap m = sub_byte_map(DataType::b4x16, 128, 2, 64, 64, 1);
  std::vector<uint8_t> global = word_hash_image(2 * 64);
  std::vector<uint8_t> smem = fresh_smem();
  BOOST_TEST((run(m, tile_op(OpKind::load, 0, 0), global, smem, GpuArch::sm90).outcome == Outcome::encode_error));
}

// ================================================================ swizzle tables (PTX 5.5.7)

namespace {

// A seed table: row L lists, for each 16-byte position p of shared-memory line L, the 16-byte cell of
// the unswizzled data that lands there.
using Table = std::vector<std::array<uint32_t, 8>>;

// Checks every cell of every row of `table` (and the row's repeat one pattern later), all 16 bytes of
// it, for a destination `base` aligned to the pattern's repeat.
void check_table(SwizzleMode mode, SwizzleAtom atom, const Table& table, uint32_t base) {
  const uint32_t period = static_cast<uint32_t>(table.size());
  for (uint32_t line = 0; line < 2 * period; ++line)
    for (uint32_t p = 0; p < 8; ++p)
      for (uint32_t b = 0; b < 16; ++b) {
        const uint32_t cell = table[line % period][p];
        const uint32_t from = base + line * 128 + cell * 16 + b;
        const uint32_t to = base + line * 128 + p * 16 + b;
        BOOST_TEST(reference_swizzle(mode, atom, from) == to,
                   swizzle_name(mode, atom) << " line " << line << " cell " << cell << " byte " << b);
      }
}

// Base offset: at a destination 128 * k past the pattern's repeat boundary, the first line follows
// row (dstMem / 128) % rows of the table.
void check_base_offset(SwizzleMode mode, SwizzleAtom atom, const Table& table, uint32_t repeat, uint32_t rows) {
  for (uint32_t dst = 4096; dst < 4096 + 2 * repeat; dst += 128) {
    const uint32_t offset = (dst / 128) % rows;
    if (dst % repeat == 0) BOOST_TEST(offset == 0u);
    for (uint32_t p = 0; p < 8; ++p) {
      const uint32_t cell = table[offset % table.size()][p];
      BOOST_TEST(reference_swizzle(mode, atom, dst + cell * 16) == dst + p * 16,
                 swizzle_name(mode, atom) << " dstMem " << dst << " cell " << cell);
    }
  }
}

const Table kNone = {{0, 1, 2, 3, 4, 5, 6, 7}};
const Table k32B = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}};
const Table k64B = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5}, {3, 2, 1, 0, 7, 6, 5, 4}};
const Table k128B = {{0, 1, 2, 3, 4, 5, 6, 7}, {1, 0, 3, 2, 5, 4, 7, 6}, {2, 3, 0, 1, 6, 7, 4, 5},
                     {3, 2, 1, 0, 7, 6, 5, 4}, {4, 5, 6, 7, 0, 1, 2, 3}, {5, 4, 7, 6, 1, 0, 3, 2},
                     {6, 7, 4, 5, 2, 3, 0, 1}, {7, 6, 5, 4, 3, 2, 1, 0}};
// "0 1 | 2 3 | 4 5 | 6 7" / "2 3 | 0 1 | 6 7 | 4 5" / ...: 32-byte atoms kept whole.
const Table k128BAtom32 = {{0, 1, 2, 3, 4, 5, 6, 7}, {2, 3, 0, 1, 6, 7, 4, 5}, {4, 5, 6, 7, 0, 1, 2, 3}, {6, 7, 4, 5, 2, 3, 0, 1}};
// "0 1 2 3 | 4 5 6 7" / "4 5 6 7 | 0 1 2 3": 64-byte atoms.
const Table k128BAtom64 = {{0, 1, 2, 3, 4, 5, 6, 7}, {4, 5, 6, 7, 0, 1, 2, 3}};

}  // namespace

BOOST_AUTO_TEST_CASE(swizzle_table_none) { check_table(SwizzleMode::none, SwizzleAtom::b16, kNone, 0); }

BOOST_AUTO_TEST_CASE(swizzle_table_32B) {
  check_table(SwizzleMode::b32, SwizzleAtom::b16, k32B, 256);
  check_base_offset(SwizzleMode::b32, SwizzleAtom::b16, k32B, 256, 2);
}

BOOST_AUTO_TEST_CASE(swizzle_table_64B) {
  check_table(SwizzleMode::b64, SwizzleAtom::b16, k64B, 512);
  check_base_offset(SwizzleMode::b64, SwizzleAtom::b16, k64B, 512, 4);
}

BOOST_AUTO_TEST_CASE(swizzle_table_96B) {
  check_table(SwizzleMode::b96, SwizzleAtom::b16, k32B, 256);  // the seed's 96B table is the 32B one
  check_base_offset(SwizzleMode::b96, SwizzleAtom::b16, k32B, 256, 2);
}

BOOST_AUTO_TEST_CASE(swizzle_table_128B) {
  check_table(SwizzleMode::b128, SwizzleAtom::b16, k128B, 1024);
  check_base_offset(SwizzleMode::b128, SwizzleAtom::b16, k128B, 1024, 8);
}

BOOST_AUTO_TEST_CASE(swizzle_table_128B_atom_32B) {
  check_table(SwizzleMode::b128, SwizzleAtom::b32, k128BAtom32, 1024);
  check_base_offset(SwizzleMode::b128, SwizzleAtom::b32, k128BAtom32, 1024, 8);
}

BOOST_AUTO_TEST_CASE(swizzle_table_128B_atom_64B) {
  check_table(SwizzleMode::b128, SwizzleAtom::b64, k128BAtom64, 1024);
  check_base_offset(SwizzleMode::b128, SwizzleAtom::b64, k128BAtom64, 1024, 8);
}

// No table: "similar to the 32-byte atomicity sub-mode except that there is a flip of adjacent 8-bytes
// within the 16-byte data at every alternate shared memory line" (odd lines).
BOOST_AUTO_TEST_CASE(swizzle_128B_atom_32B_flip_8B) {
  for (uint32_t line = 0; line < 8; ++line)
    for (uint32_t p = 0; p < 8; ++p)
      for (uint32_t b = 0; b < 16; ++b) {
        const uint32_t cell = k128BAtom32[line % 4][p];
        const uint32_t to_byte = (line % 2 == 1) ? (b ^ 8u) : b;
        BOOST_TEST(reference_swizzle(SwizzleMode::b128, SwizzleAtom::b32_flip_8b, 1024 + line * 128 + cell * 16 + b) ==
                       1024 + line * 128 + p * 16 + to_byte,
                   "line " << line << " cell " << cell << " byte " << b);
      }
}

// 96B rows: a box row of up to 96 bytes takes 96 bytes of shared memory (dense, not padded to a line),
// its data stays inside its 96 bytes, and the pattern puts the same 16-byte column of any 8 consecutive
// rows into 8 different 16-byte bank groups.
BOOST_AUTO_TEST_CASE(swizzle_96B_row_span) {
  TensorMap m = sub_byte_map(DataType::u8, 96, 16, 96, 64, 16);  // 64-byte rows, padded to 96
  m.swizzle = SwizzleMode::b96;
  std::vector<uint8_t> global = word_hash_image(16 * 96);
  std::vector<uint8_t> smem = fresh_smem();
  TmaOp op = tile_op(OpKind::load, 0, 0);
  op.smem_addr = 128;
  const OpResult r = run(m, op, global, smem);
  BOOST_TEST_REQUIRE((r.outcome == Outcome::ok), r.reason);
  BOOST_TEST(r.tx_bytes == 16u * 64u);
  for (uint32_t row = 0; row < 16; ++row)
    for (uint32_t b = 0; b < 64; ++b) {
      const uint32_t at = reference_swizzle(SwizzleMode::b96, SwizzleAtom::b16, 128 + row * 96 + b);
      BOOST_TEST((at >= 128 + row * 96 && at < 128 + row * 96 + 96), "row " << row << " byte " << b);
      BOOST_TEST(smem[at] == global[row * 96 + b]);
    }
  for (uint32_t first = 0; first < 8; ++first)
    for (uint32_t col = 0; col < 6; ++col) {
      std::set<uint32_t> groups;
      for (uint32_t row = first; row < first + 8; ++row)
        groups.insert((reference_swizzle(SwizzleMode::b96, SwizzleAtom::b16, 128 + row * 96 + col * 16) >> 4) & 7u);
      BOOST_TEST(groups.size() == 8u, "rows " << first << ".." << first + 7 << " column " << col);
    }
}
