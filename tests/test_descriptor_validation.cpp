// One test per validation rule: a valid base passes, the same map with one field broken is
// refused with that rule id, and the boundary value next to the broken one is accepted.
#define BOOST_TEST_MODULE descriptor_validation
#include <boost/test/unit_test.hpp>

#include <set>

#include "tma/descriptor/descriptor_validation.h"

using namespace tma;

namespace {

std::string describe(const std::optional<ValidationError>& e) {
  return e ? e->rule + ": " + e->message : std::string("accepted");
}

}  // namespace

#define EXPECT_OK(map)                                                 \
  do {                                                                 \
    auto result_ = validate_tensor_map(map, GpuArch::sm100);                           \
    BOOST_TEST(!result_.has_value(), "refused: " << describe(result_)); \
  } while (0)

#define EXPECT_RULE(map, id)                                                          \
  do {                                                                                \
    auto result_ = validate_tensor_map(map, GpuArch::sm100);                                          \
    BOOST_TEST(result_.has_value(), "accepted, expected rule " << (id));              \
    if (result_) BOOST_TEST(result_->rule == std::string(id), describe(result_));    \
  } while (0)

namespace {

// f16 3D, 64 x 32 x 4, box 64 x 8 x 2, swizzle 128B (inner box 128 bytes = the span).
TensorMap tiled_base() {
  TensorMap m;
  m.mode = TensorMode::tiled;
  m.dtype = DataType::f16;
  m.rank = 3;
  m.global_address = 0x10000;
  m.dims = {64, 32, 4, 0, 0};
  m.strides = {128, 4096, 0, 0};
  m.box = {64, 8, 2, 0, 0};
  m.swizzle = SwizzleMode::b128;
  m.l2_promotion = L2Promotion::b128;
  return m;
}

// Interleave 32B needs swizzle 32B and 32-byte strides/address.
TensorMap interleave32_base() {
  TensorMap m = tiled_base();
  m.dims = {16, 32, 4, 0, 0};
  m.strides = {32, 1024, 0, 0};
  m.box = {16, 8, 2, 0, 0};
  m.interleave = Interleave::b32;
  m.swizzle = SwizzleMode::b32;
  return m;
}

// 2D rows of 256 bf16; one row per box.
TensorMap gather4_base() {
  TensorMap m;
  m.mode = TensorMode::gather4;
  m.dtype = DataType::bf16;
  m.rank = 2;
  m.global_address = 0x20000;
  m.dims = {256, 1024, 0, 0, 0};
  m.strides = {512, 0, 0, 0};
  m.box = {64, 1, 0, 0, 0};
  m.swizzle = SwizzleMode::b128;
  return m;
}

// NHWC f16: C 64, W 16, H 16, N 2; 64 channels = 128 bytes = the 128B span.
TensorMap im2col_base() {
  TensorMap m;
  m.mode = TensorMode::im2col;
  m.dtype = DataType::f16;
  m.rank = 4;
  m.global_address = 0x40000;
  m.dims = {64, 16, 16, 2, 0};
  m.strides = {128, 2048, 32768, 0};
  m.swizzle = SwizzleMode::b128;
  m.lower_corner = {-1, -1, 0};
  m.upper_corner = {-1, -1, 0};
  m.channels_per_pixel = 64;
  m.pixels_per_column = 128;
  return m;
}

TensorMap wide_base(TensorMode mode = TensorMode::im2col_w) {
  TensorMap m = im2col_base();
  m.mode = mode;
  m.lower_corner = {-1, 0, 0};
  m.upper_corner = {0, 0, 0};
  m.pixels_per_column = 64;
  return m;
}

// b6x16_p32 3D: 256 values per row = 192 bytes; box0 must be 128 (96 bytes <= 128B span).
TensorMap b6_base() {
  TensorMap m = tiled_base();
  m.dtype = DataType::b6x16_p32;
  m.global_address = 0x10020;
  m.dims = {256, 8, 2, 0, 0};
  m.strides = {192, 1536, 0, 0};
  m.box = {128, 8, 2, 0, 0};
  return m;
}

// b4x16_p64 2D: 128 values per row = 64 bytes.
TensorMap b4p64_base() {
  TensorMap m = tiled_base();
  m.dtype = DataType::b4x16_p64;
  m.rank = 2;
  m.dims = {128, 8, 0, 0, 0};
  m.strides = {64, 0, 0, 0};
  m.box = {128, 8, 0, 0, 0};
  return m;
}

// b4x16 (half a byte per value) 2D: 64 values per row = 32 bytes.
TensorMap b4x16_base() {
  TensorMap m = tiled_base();
  m.dtype = DataType::b4x16;
  m.rank = 2;
  m.dims = {64, 8, 0, 0, 0};
  m.strides = {32, 0, 0, 0};
  m.box = {64, 8, 0, 0, 0};
  m.swizzle = SwizzleMode::none;
  return m;
}

// b6x16_p32 im2col: C 256 (192 bytes a pixel), W 16, H 16, N 2; channels must be 128.
TensorMap b6_im2col_base() {
  TensorMap m = im2col_base();
  m.dtype = DataType::b6x16_p32;
  m.dims = {256, 16, 16, 2, 0};
  m.strides = {192, 3072, 49152, 0};
  m.channels_per_pixel = 128;
  return m;
}

}  // namespace

BOOST_AUTO_TEST_CASE(bases_are_valid) {
  EXPECT_OK(tiled_base());
  EXPECT_OK(interleave32_base());
  EXPECT_OK(gather4_base());
  EXPECT_OK(im2col_base());
  EXPECT_OK(wide_base(TensorMode::im2col_w));
  EXPECT_OK(wide_base(TensorMode::im2col_w128));
  EXPECT_OK(b6_base());
  EXPECT_OK(b4p64_base());
  EXPECT_OK(b4x16_base());
  EXPECT_OK(b6_im2col_base());
}

BOOST_AUTO_TEST_CASE(rule_table_is_complete_and_unique) {
  const std::vector<std::string> expected = {
      "mode.enum", "tensorDataType.enum", "interleave.enum", "swizzle.enum", "l2Promotion.enum", "oobFill.enum",
      "rank.range", "gather4.rank_2d", "gather4.no_interleave", "gather4.box1_must_be_1",
      "rank.interleave_needs_3d", "globalAddress.align16", "globalAddress.align32_interleave32B",
      "globalAddress.align32_packed", "globalDim.range", "globalDim.packed_multiple_of_128",
      "globalDim.b4x16_multiple_of_2", "globalStrides.range", "globalStrides.multiple_of_16",
      "globalStrides.multiple_of_32_interleave32B", "globalStrides.multiple_of_32_packed", "boxDim.range",
      "boxDim.inner_bytes_multiple_of_16", "boxDim.packed_inner_must_be_128", "pixelBoxLowerCorner.range",
      "pixelBoxUpperCorner.range", "pixelBox.nonzero_area", "channelsPerPixel.range",
      "channelsPerPixel.packed_must_be_128", "pixelsPerColumn.range", "elementStrides.range",
      "interleave.im2col_w_needs_none", "interleave.b6x16_p32_needs_none",
      "swizzle.atom_needs_128B", "swizzle.im2col_w_modes", "swizzle.b4x16_p64_modes", "swizzle.b6x16_p32_modes",
      "swizzle.inner_dim_exceeds_span", "oobFill.nan_needs_float", "arch.sm90_im2col_wide",
      "arch.sm90_sub_byte_type", "arch.sm90_swizzle_96B", "arch.sm90_swizzle_atom"};
  std::vector<std::string> ids = validation_rule_ids();
  BOOST_TEST(ids == expected, boost::test_tools::per_element());
  BOOST_TEST(std::set<std::string>(ids.begin(), ids.end()).size() == ids.size());
}

BOOST_AUTO_TEST_CASE(encode_api_per_mode) {
  BOOST_TEST(to_string(encode_api(TensorMode::tiled)) == "cuTensorMapEncodeTiled");
  BOOST_TEST(to_string(encode_api(TensorMode::gather4)) == "cuTensorMapEncodeTiled");
  BOOST_TEST(to_string(encode_api(TensorMode::im2col)) == "cuTensorMapEncodeIm2col");
  BOOST_TEST(to_string(encode_api(TensorMode::im2col_w)) == "cuTensorMapEncodeIm2colWide");
  BOOST_TEST(to_string(encode_api(TensorMode::im2col_w128)) == "cuTensorMapEncodeIm2colWide");
}

// ---- enums ----

BOOST_AUTO_TEST_CASE(mode_enum) {
  TensorMap m = tiled_base();
  m.mode = static_cast<TensorMode>(5);
  EXPECT_RULE(m, "mode.enum");
  EXPECT_OK(gather4_base());  // the last value
}

BOOST_AUTO_TEST_CASE(data_type_enum) {
  TensorMap m = b6_base();
  m.dtype = static_cast<DataType>(16);
  EXPECT_RULE(m, "tensorDataType.enum");
  m.dtype = static_cast<DataType>(15);  // b6x16_p32, the last value
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(interleave_enum) {
  TensorMap m = interleave32_base();
  m.interleave = static_cast<Interleave>(3);
  EXPECT_RULE(m, "interleave.enum");
  m.interleave = Interleave::b32;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(swizzle_enum) {
  TensorMap m = tiled_base();
  m.swizzle = static_cast<SwizzleMode>(5);
  EXPECT_RULE(m, "swizzle.enum");
  m = tiled_base();
  m.swizzle_atom = static_cast<SwizzleAtom>(4);
  EXPECT_RULE(m, "swizzle.enum");
  m.swizzle_atom = SwizzleAtom::b64;  // 128B_atom_64B, the last pairing
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(l2_promotion_enum) {
  TensorMap m = tiled_base();
  m.l2_promotion = static_cast<L2Promotion>(4);
  EXPECT_RULE(m, "l2Promotion.enum");
  m.l2_promotion = L2Promotion::b256;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(oob_fill_enum) {
  TensorMap m = tiled_base();
  m.oob_fill = static_cast<OobFill>(2);
  EXPECT_RULE(m, "oobFill.enum");
  m.oob_fill = OobFill::nan;
  EXPECT_OK(m);
}

// ---- rank ----

BOOST_AUTO_TEST_CASE(rank_range_tiled) {
  TensorMap m = tiled_base();
  m.rank = 0;
  EXPECT_RULE(m, "rank.range");
  m.rank = 6;
  EXPECT_RULE(m, "rank.range");
  BOOST_TEST(validate_tensor_map(m, GpuArch::sm100)->message == "tensorRank = 6 is outside 1..5 accepted by cuTensorMapEncodeTiled");

  TensorMap one = tiled_base();
  one.rank = 1;
  one.dims = {64, 0, 0, 0, 0};
  one.strides = {};
  one.box = {64, 0, 0, 0, 0};
  EXPECT_OK(one);

  TensorMap five = tiled_base();
  five.rank = 5;
  five.dims = {64, 2, 2, 2, 2};
  five.strides = {128, 256, 512, 1024};
  five.box = {64, 2, 2, 2, 2};
  EXPECT_OK(five);
}

BOOST_AUTO_TEST_CASE(rank_range_im2col) {
  TensorMap m = im2col_base();
  m.rank = 2;
  EXPECT_RULE(m, "rank.range");
  m = wide_base();
  m.rank = 6;
  EXPECT_RULE(m, "rank.range");

  TensorMap three = im2col_base();
  three.rank = 3;
  three.dims = {64, 16, 2, 0, 0};
  three.strides = {128, 2048, 0, 0};
  EXPECT_OK(three);
  three.mode = TensorMode::im2col_w;
  EXPECT_OK(three);
}

BOOST_AUTO_TEST_CASE(rank_interleave_needs_3d) {
  TensorMap m = tiled_base();
  m.rank = 2;
  m.interleave = Interleave::b16;
  EXPECT_RULE(m, "rank.interleave_needs_3d");
  m.rank = 3;
  EXPECT_OK(m);
}

// ---- gather4 ----

BOOST_AUTO_TEST_CASE(gather4_rank_2d) {
  TensorMap m = gather4_base();
  m.rank = 3;
  m.dims[2] = 2;
  m.strides[1] = 512 * 1024;
  m.box[2] = 1;
  EXPECT_RULE(m, "gather4.rank_2d");
  m.mode = TensorMode::tiled;  // the same 3D map is fine as a plain tile
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(gather4_no_interleave) {
  TensorMap m = gather4_base();
  m.interleave = Interleave::b16;
  EXPECT_RULE(m, "gather4.no_interleave");
  m.interleave = Interleave::none;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(gather4_box1_must_be_1) {
  TensorMap m = gather4_base();
  m.box[1] = 2;
  EXPECT_RULE(m, "gather4.box1_must_be_1");
  m.box[1] = 1;
  m.box[0] = 256;  // row length may be anything the tile rules allow
  m.swizzle = SwizzleMode::none;
  EXPECT_OK(m);
}

// ---- global address ----

BOOST_AUTO_TEST_CASE(global_address_align16) {
  TensorMap m = tiled_base();
  m.global_address = 0x10008;
  EXPECT_RULE(m, "globalAddress.align16");
  m.global_address = 0x10010;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(global_address_align32_interleave32B) {
  TensorMap m = interleave32_base();
  m.global_address = 0x10010;
  EXPECT_RULE(m, "globalAddress.align32_interleave32B");
  m.global_address = 0x10020;
  EXPECT_OK(m);
  m = tiled_base();  // interleave none: 16 is enough
  m.global_address = 0x10010;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(global_address_align32_packed) {
  TensorMap m = b6_base();
  m.global_address = 0x10010;
  EXPECT_RULE(m, "globalAddress.align32_packed");
  m = b4p64_base();
  m.global_address = 0x10030;
  EXPECT_RULE(m, "globalAddress.align32_packed");
  m.global_address = 0x10040;
  EXPECT_OK(m);
  m = b4x16_base();  // the 8-byte-aligned packed type needs only 16
  m.global_address = 0x10010;
  EXPECT_OK(m);
}

// ---- globalDim ----

BOOST_AUTO_TEST_CASE(global_dim_range) {
  TensorMap m = tiled_base();
  m.dims[1] = 0;
  EXPECT_RULE(m, "globalDim.range");
  m.dims[1] = (uint64_t{1} << 32) + 1;
  EXPECT_RULE(m, "globalDim.range");
  m.dims[1] = uint64_t{1} << 32;
  EXPECT_OK(m);
  m.dims[1] = 1;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(global_dim_packed_multiple_of_128) {
  TensorMap m = b6_base();
  m.dims[0] = 192;
  EXPECT_RULE(m, "globalDim.packed_multiple_of_128");
  m.dims[0] = 384;
  EXPECT_OK(m);
  m = b4p64_base();
  m.dims[0] = 64;
  EXPECT_RULE(m, "globalDim.packed_multiple_of_128");
}

BOOST_AUTO_TEST_CASE(global_dim_b4x16_multiple_of_2) {
  TensorMap m = b4x16_base();
  m.dims[0] = 63;
  EXPECT_RULE(m, "globalDim.b4x16_multiple_of_2");
  m.dims[0] = 62;
  EXPECT_OK(m);
}

// ---- globalStrides ----

BOOST_AUTO_TEST_CASE(global_strides_range) {
  TensorMap m = tiled_base();
  m.strides[1] = uint64_t{1} << 40;
  EXPECT_RULE(m, "globalStrides.range");
  m.strides[1] = (uint64_t{1} << 40) - 16;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(global_strides_multiple_of_16) {
  TensorMap m = tiled_base();
  m.strides[1] = 1000;
  EXPECT_RULE(m, "globalStrides.multiple_of_16");
  BOOST_TEST(validate_tensor_map(m, GpuArch::sm100)->message == "globalStrides[1] = 1000 is not a multiple of 16");
  m.strides[1] = 1008;
  EXPECT_OK(m);
  // Entries past rank - 1 are not strides of this map.
  m = tiled_base();
  m.strides[2] = 1000;
  EXPECT_OK(m);
}

// The documentation's assert(globalStrides[i] >= globalDim[i]) is not a rule (to be settled on
// silicon): overlapping and zero strides are accepted.
BOOST_AUTO_TEST_CASE(global_strides_overlap_is_not_refused) {
  TensorMap m = tiled_base();
  m.strides = {16, 16, 0, 0};
  EXPECT_OK(m);
  m.strides = {0, 0, 0, 0};
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(global_strides_multiple_of_32_interleave32B) {
  TensorMap m = interleave32_base();
  m.strides[0] = 48;
  EXPECT_RULE(m, "globalStrides.multiple_of_32_interleave32B");
  m.strides[0] = 64;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(global_strides_multiple_of_32_packed) {
  TensorMap m = b6_base();
  m.strides[0] = 208;
  EXPECT_RULE(m, "globalStrides.multiple_of_32_packed");
  m.strides[0] = 224;
  EXPECT_OK(m);
}

// ---- boxDim ----

BOOST_AUTO_TEST_CASE(box_dim_range) {
  TensorMap m = tiled_base();
  m.box[2] = 0;
  EXPECT_RULE(m, "boxDim.range");
  m.box[2] = 257;
  EXPECT_RULE(m, "boxDim.range");
  m.box[2] = 256;  // larger than the tensor (4) is fine: the excess is OOB fill
  EXPECT_OK(m);
  m.box[2] = 1;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(box_dim_inner_bytes_multiple_of_16) {
  TensorMap m = tiled_base();
  m.swizzle = SwizzleMode::none;
  m.box[0] = 12;  // 24 bytes
  EXPECT_RULE(m, "boxDim.inner_bytes_multiple_of_16");
  m.box[0] = 8;  // 16 bytes
  EXPECT_OK(m);
  m.box[0] = 12;
  m.interleave = Interleave::b16;  // documented for interleave none only, but the driver refuses it too
  EXPECT_RULE(m, "boxDim.inner_bytes_multiple_of_16");

  TensorMap half = b4x16_base();
  half.box[0] = 48;  // 24 bytes
  EXPECT_RULE(half, "boxDim.inner_bytes_multiple_of_16");
  half.box[0] = 31;  // 15.5 bytes
  EXPECT_RULE(half, "boxDim.inner_bytes_multiple_of_16");
  BOOST_TEST(validate_tensor_map(half, GpuArch::sm100)->message ==
             "boxDim[0] = 31 elements of b4x16 span 15.5 bytes, not a multiple of 16");
  half.box[0] = 32;  // 16 bytes
  EXPECT_OK(half);
}

BOOST_AUTO_TEST_CASE(box_dim_packed_inner_must_be_128) {
  TensorMap m = b6_base();
  m.box[0] = 64;  // 48 bytes: a multiple of 16, but not 128 values
  EXPECT_RULE(m, "boxDim.packed_inner_must_be_128");
  m = b4p64_base();
  m.box[0] = 256;
  EXPECT_RULE(m, "boxDim.packed_inner_must_be_128");
  m.box[0] = 128;
  EXPECT_OK(m);
}

// ---- im2col pixel box ----

BOOST_AUTO_TEST_CASE(pixel_box_lower_corner_range) {
  TensorMap m = im2col_base();  // 4D: [-128, 127]
  m.lower_corner[1] = -129;
  EXPECT_RULE(m, "pixelBoxLowerCorner.range");
  m.lower_corner[1] = -128;
  EXPECT_OK(m);
  m.lower_corner[2] = 1000;  // D corner of a 4D tensor is not an argument
  EXPECT_OK(m);

  TensorMap three = im2col_base();  // 3D: [-32768, 32767]
  three.rank = 3;
  three.dims = {64, 16, 2, 0, 0};
  three.strides = {128, 2048, 0, 0};
  three.lower_corner = {-32769, 0, 0};
  EXPECT_RULE(three, "pixelBoxLowerCorner.range");
  three.lower_corner[0] = -32768;
  EXPECT_OK(three);

  TensorMap five = im2col_base();  // 5D: [-16, 15]
  five.rank = 5;
  five.dims = {64, 8, 8, 8, 2};
  five.strides = {128, 1024, 8192, 65536};
  five.lower_corner = {0, 0, -17};
  five.upper_corner = {0, 0, 0};
  EXPECT_RULE(five, "pixelBoxLowerCorner.range");
  five.lower_corner[2] = -16;
  EXPECT_OK(five);

  TensorMap wide = wide_base();  // wide: W only, [-32768, 32767], whatever the rank
  wide.lower_corner = {-32769, 0, 0};
  EXPECT_RULE(wide, "pixelBoxLowerCorner.range");
  wide.lower_corner = {-32768, 500, 500};
  EXPECT_OK(wide);
}

BOOST_AUTO_TEST_CASE(pixel_box_upper_corner_range) {
  TensorMap m = im2col_base();
  m.upper_corner[0] = 128;
  EXPECT_RULE(m, "pixelBoxUpperCorner.range");
  m.upper_corner[0] = 127;
  EXPECT_OK(m);

  TensorMap five = im2col_base();
  five.rank = 5;
  five.dims = {64, 8, 8, 8, 2};
  five.strides = {128, 1024, 8192, 65536};
  five.lower_corner = {0, 0, 0};
  five.upper_corner = {16, 0, 0};
  EXPECT_RULE(five, "pixelBoxUpperCorner.range");
  five.upper_corner[0] = 15;
  EXPECT_OK(five);

  TensorMap wide = wide_base(TensorMode::im2col_w128);
  wide.upper_corner[0] = 32768;
  EXPECT_RULE(wide, "pixelBoxUpperCorner.range");
  wide.upper_corner[0] = 32767;
  EXPECT_OK(wide);
}

BOOST_AUTO_TEST_CASE(pixel_box_nonzero_area) {
  // W extent = dims[1] + upper[0] - lower[0] = 16 + upper - 0.
  TensorMap m = im2col_base();
  m.lower_corner = {0, 0, 0};
  m.upper_corner = {-16, 0, 0};
  EXPECT_RULE(m, "pixelBox.nonzero_area");
  m.upper_corner[0] = -15;  // one position
  EXPECT_OK(m);
  m.lower_corner = {0, 20, 0};  // H: 16 + 0 - 20 < 1
  EXPECT_RULE(m, "pixelBox.nonzero_area");

  TensorMap wide = wide_base();
  wide.lower_corner = {10, 0, 0};
  wide.upper_corner = {-6, 0, 0};  // 16 - 6 - 10 = 0
  EXPECT_RULE(wide, "pixelBox.nonzero_area");
  wide.upper_corner[0] = -5;
  EXPECT_OK(wide);
}

BOOST_AUTO_TEST_CASE(channels_per_pixel_range) {
  TensorMap m = im2col_base();
  m.swizzle = SwizzleMode::none;  // no span to fit
  m.channels_per_pixel = 0;
  EXPECT_RULE(m, "channelsPerPixel.range");
  m.channels_per_pixel = 257;
  EXPECT_RULE(m, "channelsPerPixel.range");
  m.channels_per_pixel = 256;
  EXPECT_OK(m);
  m.channels_per_pixel = 1;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(channels_per_pixel_packed_must_be_128) {
  TensorMap m = b6_im2col_base();
  m.channels_per_pixel = 64;
  EXPECT_RULE(m, "channelsPerPixel.packed_must_be_128");
  m.channels_per_pixel = 128;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(pixels_per_column_range) {
  TensorMap m = im2col_base();
  m.pixels_per_column = 0;
  EXPECT_RULE(m, "pixelsPerColumn.range");
  m.pixels_per_column = 1025;
  EXPECT_RULE(m, "pixelsPerColumn.range");
  m.pixels_per_column = 1024;
  EXPECT_OK(m);
  m.pixels_per_column = 1;
  EXPECT_OK(m);

  TensorMap w = wide_base(TensorMode::im2col_w);
  w.pixels_per_column = 1025;
  EXPECT_RULE(w, "pixelsPerColumn.range");
  w.mode = TensorMode::im2col_w128;  // ignored there
  EXPECT_OK(w);
  w.pixels_per_column = 0;
  EXPECT_OK(w);
}

// ---- elementStrides ----

BOOST_AUTO_TEST_CASE(element_strides_range) {
  TensorMap m = tiled_base();
  m.element_strides[2] = 9;
  EXPECT_RULE(m, "elementStrides.range");
  m.element_strides[2] = 0;
  EXPECT_RULE(m, "elementStrides.range");
  m.element_strides[2] = 8;
  EXPECT_OK(m);
  m.element_strides[0] = 0;  // dimension 0 is range-checked too
  EXPECT_RULE(m, "elementStrides.range");
  m.element_strides[0] = 1;
  m.element_strides[3] = 0;  // past rank
  EXPECT_OK(m);
  TensorMap i = im2col_base();
  i.element_strides[1] = 9;
  EXPECT_RULE(i, "elementStrides.range");
}

// ---- interleave ----

BOOST_AUTO_TEST_CASE(interleave_im2col_w_needs_none) {
  TensorMap m = wide_base();
  m.interleave = Interleave::b16;
  EXPECT_RULE(m, "interleave.im2col_w_needs_none");
  m.mode = TensorMode::im2col;  // plain im2col may interleave
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(interleave_b6x16_p32_needs_none) {
  TensorMap m = b6_base();
  m.interleave = Interleave::b16;
  EXPECT_RULE(m, "interleave.b6x16_p32_needs_none");
  m = b4p64_base();  // the other padded type has no such rule
  m.rank = 3;
  m.dims[2] = 2;
  m.strides[1] = 512;
  m.box[2] = 2;
  m.interleave = Interleave::b16;
  EXPECT_OK(m);
}

// The documentation says interleave 32B requires swizzle 32B; the H200's driver accepts every
// pattern, none included (golden t0547 and t0559, and a direct driver probe: docs/driver-descriptor.md).
BOOST_AUTO_TEST_CASE(interleave32B_takes_any_swizzle) {
  TensorMap m = interleave32_base();
  for (SwizzleMode s : {SwizzleMode::none, SwizzleMode::b32, SwizzleMode::b64, SwizzleMode::b128}) {
    m.swizzle = s;
    EXPECT_OK(m);
  }
}

// ---- swizzle ----

BOOST_AUTO_TEST_CASE(swizzle_atom_needs_128B) {
  TensorMap m = tiled_base();
  m.box[0] = 32;  // 64 bytes
  m.swizzle = SwizzleMode::b64;
  m.swizzle_atom = SwizzleAtom::b32;
  EXPECT_RULE(m, "swizzle.atom_needs_128B");
  m.swizzle = SwizzleMode::none;
  m.swizzle_atom = SwizzleAtom::b64;
  EXPECT_RULE(m, "swizzle.atom_needs_128B");
  for (SwizzleAtom a : {SwizzleAtom::b32, SwizzleAtom::b32_flip_8b, SwizzleAtom::b64}) {
    m.swizzle = SwizzleMode::b128;
    m.swizzle_atom = a;
    EXPECT_OK(m);
  }
}

// 96B has no driver enum; accepted where the API allows any pattern (see the rule's comment).
BOOST_AUTO_TEST_CASE(swizzle_96B_accepted_where_any_pattern_is) {
  TensorMap m = tiled_base();
  m.box[0] = 48;  // 96 bytes
  m.swizzle = SwizzleMode::b96;
  EXPECT_OK(m);
  TensorMap i = im2col_base();
  i.channels_per_pixel = 48;
  i.swizzle = SwizzleMode::b96;
  EXPECT_OK(i);
  i.mode = TensorMode::im2col_w;
  EXPECT_RULE(i, "swizzle.im2col_w_modes");
}

BOOST_AUTO_TEST_CASE(swizzle_im2col_w_modes) {
  TensorMap m = wide_base();
  m.channels_per_pixel = 16;  // 32 bytes, fits every span
  m.swizzle = SwizzleMode::none;
  EXPECT_RULE(m, "swizzle.im2col_w_modes");
  m.swizzle = SwizzleMode::b32;
  EXPECT_RULE(m, "swizzle.im2col_w_modes");
  m.swizzle = SwizzleMode::b128;
  m.swizzle_atom = SwizzleAtom::b64;
  EXPECT_RULE(m, "swizzle.im2col_w_modes");
  m.swizzle_atom = SwizzleAtom::b32_flip_8b;
  EXPECT_RULE(m, "swizzle.im2col_w_modes");
  m.swizzle_atom = SwizzleAtom::b32;
  EXPECT_OK(m);
  m.swizzle_atom = SwizzleAtom::b16;
  EXPECT_OK(m);
  m.swizzle = SwizzleMode::b64;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(swizzle_b4x16_p64_modes) {
  TensorMap m = b4p64_base();
  m.swizzle = SwizzleMode::b64;
  EXPECT_RULE(m, "swizzle.b4x16_p64_modes");
  m.swizzle = SwizzleMode::b128;
  m.swizzle_atom = SwizzleAtom::b64;
  EXPECT_RULE(m, "swizzle.b4x16_p64_modes");
  m.swizzle_atom = SwizzleAtom::b32;
  EXPECT_OK(m);
  m.swizzle = SwizzleMode::none;
  m.swizzle_atom = SwizzleAtom::b16;
  EXPECT_OK(m);
}

BOOST_AUTO_TEST_CASE(swizzle_b6x16_p32_modes) {
  TensorMap m = b6_base();
  m.swizzle = SwizzleMode::b64;
  EXPECT_RULE(m, "swizzle.b6x16_p32_modes");
  m.swizzle = SwizzleMode::b128;
  m.swizzle_atom = SwizzleAtom::b32_flip_8b;
  EXPECT_RULE(m, "swizzle.b6x16_p32_modes");
  m.swizzle_atom = SwizzleAtom::b64;  // store-only, accepted at encode time
  EXPECT_OK(m);
  m.swizzle_atom = SwizzleAtom::b32;
  EXPECT_OK(m);
  TensorMap w = b6_im2col_base();  // the wide API lists 128B and 128B_atom_32B only
  w.mode = TensorMode::im2col_w;
  w.lower_corner = {0, 0, 0};
  w.upper_corner = {0, 0, 0};
  EXPECT_OK(w);
  w.swizzle_atom = SwizzleAtom::b64;
  EXPECT_RULE(w, "swizzle.im2col_w_modes");
}

BOOST_AUTO_TEST_CASE(swizzle_inner_dim_exceeds_span) {
  TensorMap m = tiled_base();  // box0 64 x 2 bytes = 128
  m.swizzle = SwizzleMode::b64;
  EXPECT_RULE(m, "swizzle.inner_dim_exceeds_span");
  m.box[0] = 32;  // 64 bytes
  EXPECT_OK(m);
  m.swizzle = SwizzleMode::b32;
  EXPECT_RULE(m, "swizzle.inner_dim_exceeds_span");
  m.box[0] = 16;
  EXPECT_OK(m);
  m.box[0] = 56;  // 112 bytes > 96
  m.swizzle = SwizzleMode::b96;
  EXPECT_RULE(m, "swizzle.inner_dim_exceeds_span");
  m.box[0] = 64;
  m.swizzle = SwizzleMode::b128;
  m.swizzle_atom = SwizzleAtom::b64;  // 128B* spans are 128
  EXPECT_OK(m);
  m.box[0] = 72;
  EXPECT_RULE(m, "swizzle.inner_dim_exceeds_span");

  TensorMap i = im2col_base();  // inner dimension = channels x element size
  i.swizzle = SwizzleMode::b64;
  EXPECT_RULE(i, "swizzle.inner_dim_exceeds_span");
  i.channels_per_pixel = 32;
  EXPECT_OK(i);

  TensorMap inter = tiled_base();  // interleaved layouts are not limited by the span
  inter.interleave = Interleave::b16;
  inter.box[0] = 256;
  inter.swizzle = SwizzleMode::b32;
  EXPECT_OK(inter);
}

// ---- OOB fill ----

BOOST_AUTO_TEST_CASE(oob_fill_nan_needs_float) {
  TensorMap m = tiled_base();
  m.oob_fill = OobFill::nan;
  EXPECT_OK(m);
  m.dtype = DataType::u16;
  EXPECT_RULE(m, "oobFill.nan_needs_float");
  for (DataType t : {DataType::bf16, DataType::tf32, DataType::f32_ftz}) {
    m.dtype = t;
    m.box[0] = 16;  // 64 bytes at most
    EXPECT_OK(m);
  }
  TensorMap packed = b4x16_base();
  packed.oob_fill = OobFill::nan;
  EXPECT_RULE(packed, "oobFill.nan_needs_float");
}

// ---- fields the API does not take ----

BOOST_AUTO_TEST_CASE(unused_fields_are_ignored) {
  TensorMap t = tiled_base();
  t.lower_corner = {9999, 9999, 9999};
  t.channels_per_pixel = 100000;
  t.pixels_per_column = 100000;
  t.dims[4] = 0;
  t.box[4] = 999;
  EXPECT_OK(t);
  TensorMap i = im2col_base();
  i.box = {0, 0, 0, 0, 0};
  EXPECT_OK(i);
}

BOOST_AUTO_TEST_CASE(first_broken_rule_wins) {
  TensorMap m = tiled_base();
  m.global_address = 3;
  m.strides[0] = 7;
  EXPECT_RULE(m, "globalAddress.align16");
}

// ---- generation ----

// The sm_90 driver refuses the Blackwell-only forms (probes p0001..p0006 on an H200).
BOOST_AUTO_TEST_CASE(sm90_refuses_blackwell_forms) {
  TensorMap m = tiled_base();
  BOOST_TEST(!validate_tensor_map(m, GpuArch::sm90).has_value());
  m.swizzle = SwizzleMode::b128;
  m.swizzle_atom = SwizzleAtom::b32;
  BOOST_TEST(validate_tensor_map(m, GpuArch::sm90)->rule == "arch.sm90_swizzle_atom");
  BOOST_TEST(!validate_tensor_map(m, GpuArch::sm100).has_value());
  m.swizzle_atom = SwizzleAtom::b16;
  m.swizzle = SwizzleMode::b96;
  m.box[0] = 48;  // 96 bytes: inside the 96B span
  BOOST_TEST(validate_tensor_map(m, GpuArch::sm90)->rule == "arch.sm90_swizzle_96B");
  TensorMap packed = b4x16_base();
  BOOST_TEST(validate_tensor_map(packed, GpuArch::sm90)->rule == "arch.sm90_sub_byte_type");
  BOOST_TEST(!validate_tensor_map(packed, GpuArch::sm100).has_value());
}
