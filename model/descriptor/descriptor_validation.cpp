#include "tma/descriptor/descriptor_validation.h"

#include <cstdint>
#include <string>

// Sources of the rules: the doc comments of cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col and
// cuTensorMapEncodeIm2colWide in cuda.h (CUDA 12.8+), seed 003, and PTX ISA 5.5 (seed 001) where
// the driver documentation is silent. Each rule is one small function in the table at the end,
// so a rule can be changed (or dropped) alone once silicon says otherwise.

namespace tma {

EncodeApi encode_api(TensorMode mode) {
  switch (mode) {
    case TensorMode::im2col: return EncodeApi::im2col;
    case TensorMode::im2col_w:
    case TensorMode::im2col_w128: return EncodeApi::im2col_wide;
    case TensorMode::tiled:
    case TensorMode::gather4: break;
  }
  return EncodeApi::tiled;
}

std::string to_string(EncodeApi api) {
  switch (api) {
    case EncodeApi::tiled: return "cuTensorMapEncodeTiled";
    case EncodeApi::im2col: return "cuTensorMapEncodeIm2col";
    case EncodeApi::im2col_wide: return "cuTensorMapEncodeIm2colWide";
  }
  return "?";
}

namespace {

using Message = std::optional<std::string>;
using Check = Message (*)(const TensorMap&);

struct Rule {
  const char* id;
  Check check;
};

constexpr uint64_t kMaxGlobalDim = uint64_t{1} << 32;
constexpr uint64_t kStrideLimit = uint64_t{1} << 40;  // strides must be below this
constexpr uint32_t kMaxBoxDim = 256;
constexpr uint32_t kMaxElementStride = 8;
constexpr uint32_t kMaxChannelsPerPixel = 256;
constexpr uint32_t kMaxPixelsPerColumn = 1024;
constexpr uint32_t kPackedInnerElements = 128;  // box0 / channels / globalDim[0] granule of the 16B-aligned packed types

std::string num(uint64_t v) { return std::to_string(v); }
std::string num(int64_t v) { return std::to_string(v); }
std::string num(uint32_t v) { return std::to_string(v); }
std::string num(int v) { return std::to_string(v); }

std::string indexed(const char* field, int i) { return std::string(field) + "[" + num(i) + "]"; }

// Byte counts of packed types can be fractional (b4x16: half a byte per element); print "1.5".
std::string bytes_text(uint64_t scaled_bytes, uint32_t per_unit) {
  std::string out = num(scaled_bytes / per_unit);
  if (scaled_bytes % per_unit != 0) {
    // per_unit is 1 or 16, so the fraction is a multiple of 1/16: print it exactly.
    uint64_t frac = (scaled_bytes % per_unit) * 10000 / per_unit;
    std::string digits = num(frac);
    digits.insert(0, 4 - digits.size(), '0');
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out;
}

bool uses_box(const TensorMap& m) { return m.mode == TensorMode::tiled || m.mode == TensorMode::gather4; }
bool is_im2col_family(const TensorMap& m) { return !uses_box(m); }
bool is_wide(const TensorMap& m) { return encode_api(m.mode) == EncodeApi::im2col_wide; }
// The two packed types padded to 16 bytes in shared memory share most extra rules.
bool is_packed_16b(DataType t) { return t == DataType::b4x16_p64 || t == DataType::b6x16_p32; }
bool swizzle_is(const TensorMap& m, SwizzleMode mode, SwizzleAtom atom) {
  return m.swizzle == mode && m.swizzle_atom == atom;
}
std::string swizzle_mode_text(SwizzleMode mode) {
  uint32_t span = swizzle_span(mode);
  return span == 0 ? "none" : num(span) + "B";
}
std::string swizzle_atom_text(SwizzleAtom atom) {
  return num(swizzle_atom_bytes(atom)) + "B" + (atom == SwizzleAtom::b32_flip_8b ? " with 8B flip" : "");
}
// The golden-case name ("128B_atom_32B"); pairings that have no name are spelled out.
std::string swizzle_text(const TensorMap& m) {
  std::string name = swizzle_name(m.swizzle, m.swizzle_atom);
  if (!name.empty()) return name;
  return swizzle_mode_text(m.swizzle) + " with atomicity " + swizzle_atom_text(m.swizzle_atom);
}

// Spatial dimensions whose pixel-box corners the API takes: W (, H (, D)) for im2col, W alone for
// the wide forms (their box is one pixel tall and deep).
int corner_count(const TensorMap& m) { return is_wide(m) ? 1 : spatial_rank(m); }
const char* spatial_name(int i) { return i == 0 ? "W" : i == 1 ? "H" : "D"; }
// Corners are signed; the driver's range is [-limit, limit - 1].
int32_t corner_limit(const TensorMap& m) {
  if (is_wide(m)) return 32768;
  switch (m.rank) {
    case 3: return 32768;
    case 4: return 128;
    default: return 16;
  }
}

// Inner extent of the box in bytes times elements_per_unit (exact for the half-byte b4x16):
// box[0] elements for tiled and gather4, channels_per_pixel for the im2col family.
uint64_t inner_scaled_bytes(const TensorMap& m) {
  uint64_t elements = uses_box(m) ? m.box[0] : m.channels_per_pixel;
  return elements * element_bytes(m.dtype);
}

// ---- enum values (a TensorMap built by casting may hold any byte) ----

Message mode_enum(const TensorMap& m) {
  if (static_cast<int>(m.mode) <= static_cast<int>(TensorMode::gather4)) return {};
  return "mode = " + num(static_cast<int>(m.mode)) + " is not a tensor mode (" + tensor_mode_names() + ")";
}
Message data_type_enum(const TensorMap& m) {
  if (static_cast<int>(m.dtype) < kNumDataTypes) return {};
  return "tensorDataType = " + num(static_cast<int>(m.dtype)) + " is not a CUtensorMapDataType value (0.." +
         num(kNumDataTypes - 1) + ")";
}
Message interleave_enum(const TensorMap& m) {
  if (static_cast<int>(m.interleave) <= static_cast<int>(Interleave::b32)) return {};
  return "interleave = " + num(static_cast<int>(m.interleave)) + " is not a CUtensorMapInterleave value (" +
         interleave_names() + ")";
}
Message swizzle_enum(const TensorMap& m) {
  if (static_cast<int>(m.swizzle) > static_cast<int>(SwizzleMode::b128))
    return "swizzle mode = " + num(static_cast<int>(m.swizzle)) + " is not a swizzle mode (none, 32B, 64B, 96B, 128B)";
  if (static_cast<int>(m.swizzle_atom) > static_cast<int>(SwizzleAtom::b64))
    return "swizzle atomicity = " + num(static_cast<int>(m.swizzle_atom)) +
           " is not a swizzle atomicity (16B, 32B, 32B_flip_8B, 64B)";
  return {};
}
Message l2_promotion_enum(const TensorMap& m) {
  if (static_cast<int>(m.l2_promotion) <= static_cast<int>(L2Promotion::b256)) return {};
  return "l2Promotion = " + num(static_cast<int>(m.l2_promotion)) + " is not a CUtensorMapL2promotion value (" +
         l2_promotion_names() + ")";
}
Message oob_fill_enum(const TensorMap& m) {
  if (static_cast<int>(m.oob_fill) <= static_cast<int>(OobFill::nan)) return {};
  return "oobFill = " + num(static_cast<int>(m.oob_fill)) + " is not a CUtensorMapFloatOOBfill value (" +
         oob_fill_names() + ")";
}

// ---- rank ----

Message rank_range(const TensorMap& m) {
  int low = encode_api(m.mode) == EncodeApi::tiled ? 1 : 3;
  if (m.rank >= low && m.rank <= kMaxRank) return {};
  return "tensorRank = " + num(m.rank) + " is outside " + num(low) + ".." + num(kMaxRank) + " accepted by " +
         to_string(encode_api(m.mode));
}
Message rank_interleave_needs_3d(const TensorMap& m) {
  if (m.interleave == Interleave::none || m.rank >= 3) return {};
  return "tensorRank = " + num(m.rank) + " must be at least 3 when interleave is " + to_string(m.interleave);
}

// ---- gather4 / scatter4 (PTX 5.5.3.4; encoded with cuTensorMapEncodeTiled) ----

Message gather4_rank_2d(const TensorMap& m) {
  if (m.mode != TensorMode::gather4 || m.rank == 2) return {};
  return "tensorRank = " + num(m.rank) + " but gather4/scatter4 work on 2D tensors only";
}
Message gather4_no_interleave(const TensorMap& m) {
  if (m.mode != TensorMode::gather4 || m.interleave == Interleave::none) return {};
  return "interleave = " + to_string(m.interleave) + " but gather4/scatter4 do not support interleaved layouts";
}
Message gather4_box1_is_1(const TensorMap& m) {
  if (m.mode != TensorMode::gather4 || m.box[1] == 1) return {};
  return "boxDim[1] = " + num(m.box[1]) + " must be 1 for gather4/scatter4 (each box is one row)";
}

// ---- global address ----

Message address_align16(const TensorMap& m) {
  if (m.global_address % 16 == 0) return {};
  return "globalAddress = " + num(m.global_address) + " is not 16-byte aligned";
}
Message address_align32_interleave(const TensorMap& m) {
  if (m.interleave != Interleave::b32 || m.global_address % 32 == 0) return {};
  return "globalAddress = " + num(m.global_address) + " is not 32-byte aligned, as interleave 32B requires";
}
Message address_align32_packed(const TensorMap& m) {
  if (!is_packed_16b(m.dtype) || m.global_address % 32 == 0) return {};
  return "globalAddress = " + num(m.global_address) + " is not 32-byte aligned, as " + to_string(m.dtype) +
         " requires";
}

// ---- globalDim (in individual values, also for the packed types) ----

Message dims_range(const TensorMap& m) {
  for (int i = 0; i < m.rank; ++i)
    if (m.dims[i] == 0 || m.dims[i] > kMaxGlobalDim)
      return indexed("globalDim", i) + " = " + num(m.dims[i]) + " is outside 1.." + num(kMaxGlobalDim);
  return {};
}
Message dims_packed_multiple_of_128(const TensorMap& m) {
  if (!is_packed_16b(m.dtype) || m.dims[0] % kPackedInnerElements == 0) return {};
  return "globalDim[0] = " + num(m.dims[0]) + " is not a multiple of 128, as " + to_string(m.dtype) + " requires";
}
Message dims_b4x16_multiple_of_2(const TensorMap& m) {
  if (m.dtype != DataType::b4x16 || m.dims[0] % 2 == 0) return {};
  return "globalDim[0] = " + num(m.dims[0]) + " is not a multiple of 2, as b4x16 requires";
}

// ---- globalStrides (bytes; strides[i] steps dimension i+1) ----
// Not checked: the documentation's `assert(globalStrides[i] >= globalDim[i])` (and any
// "stride covers the previous dimension" rule). It is illustration, not a stated requirement;
// whether the driver refuses overlapping strides is to be settled against silicon.
// A stride of 0 is a multiple of 16 and is accepted for the same reason.

Message strides_range(const TensorMap& m) {
  for (int i = 0; i + 1 < m.rank; ++i)
    if (m.strides[i] >= kStrideLimit)
      return indexed("globalStrides", i) + " = " + num(m.strides[i]) + " is not below 2^40";
  return {};
}
Message strides_multiple_of(const TensorMap& m, uint64_t unit, const std::string& why) {
  for (int i = 0; i + 1 < m.rank; ++i)
    if (m.strides[i] % unit != 0)
      return indexed("globalStrides", i) + " = " + num(m.strides[i]) + " is not a multiple of " + num(unit) + why;
  return {};
}
Message strides_multiple_of_16(const TensorMap& m) { return strides_multiple_of(m, 16, ""); }
Message strides_multiple_of_32_interleave(const TensorMap& m) {
  if (m.interleave != Interleave::b32) return {};
  return strides_multiple_of(m, 32, ", as interleave 32B requires");
}
Message strides_multiple_of_32_packed(const TensorMap& m) {
  if (!is_packed_16b(m.dtype)) return {};
  return strides_multiple_of(m, 32, ", as " + to_string(m.dtype) + " requires");
}

// ---- boxDim (tiled and gather4 only) ----

Message box_range(const TensorMap& m) {
  if (!uses_box(m)) return {};
  for (int i = 0; i < m.rank; ++i)
    if (m.box[i] == 0 || m.box[i] > kMaxBoxDim)
      return indexed("boxDim", i) + " = " + num(m.box[i]) + " is outside 1.." + num(kMaxBoxDim);
  return {};
}
// The driver documents this for interleave none only; the H200's driver refuses an interleaved
// box whose inner bytes are not a multiple of 16 just the same (golden cases t0265, t0273, ...).
Message box_inner_bytes_multiple_of_16(const TensorMap& m) {
  if (!uses_box(m)) return {};
  uint32_t per_unit = elements_per_unit(m.dtype);
  uint64_t scaled = inner_scaled_bytes(m);
  if (scaled % (16 * per_unit) == 0) return {};
  return "boxDim[0] = " + num(m.box[0]) + " elements of " + to_string(m.dtype) + " span " +
         bytes_text(scaled, per_unit) + " bytes, not a multiple of 16";
}
Message box_packed_inner_is_128(const TensorMap& m) {
  if (!uses_box(m) || !is_packed_16b(m.dtype) || m.box[0] == kPackedInnerElements) return {};
  return "boxDim[0] = " + num(m.box[0]) + " must be 128 for " + to_string(m.dtype);
}

// ---- im2col family: pixel box, channels, pixels ----
// Corner arrays are innermost first (W, H, D). Entries past the API's count are not looked at.

Message corner_range(const TensorMap& m, const std::array<int32_t, 3>& corner, const char* field) {
  if (!is_im2col_family(m)) return {};
  int32_t limit = corner_limit(m);
  for (int i = 0; i < corner_count(m); ++i) {
    if (corner[i] >= -limit && corner[i] <= limit - 1) continue;
    std::string where = is_wide(m) ? std::string("for ") + to_string(m.mode)
                                   : "for a " + num(m.rank) + "D im2col tensor";
    return indexed(field, i) + " (" + spatial_name(i) + ") = " + num(corner[i]) + " is outside [" + num(-limit) +
           ", " + num(limit - 1) + "] " + where;
  }
  return {};
}
Message lower_corner_range(const TensorMap& m) { return corner_range(m, m.lower_corner, "pixelBoxLowerCorner"); }
Message upper_corner_range(const TensorMap& m) { return corner_range(m, m.upper_corner, "pixelBoxUpperCorner"); }

// "The bounding box ... must have non-zero area." Interpretation (the one the traversal in
// docs/tma-semantics uses): along spatial dimension i the box covers coordinates
// lower_corner[i] .. dims[i+1] - 1 + upper_corner[i], both ends included, so it holds
// dims[i+1] + upper_corner[i] - lower_corner[i] positions; that count must be at least 1 in every
// dimension the API takes corners for (W alone for the wide forms, whose H and D extents are 1).
Message pixel_box_nonzero_area(const TensorMap& m) {
  if (!is_im2col_family(m)) return {};
  for (int i = 0; i < corner_count(m); ++i) {
    int64_t extent = static_cast<int64_t>(m.dims[i + 1]) + m.upper_corner[i] - m.lower_corner[i];
    if (extent >= 1) continue;
    return std::string("pixel box is empty along ") + spatial_name(i) + ": globalDim[" + num(i + 1) +
           "] + pixelBoxUpperCorner[" + num(i) + "] - pixelBoxLowerCorner[" + num(i) + "] = " + num(m.dims[i + 1]) +
           " + " + num(m.upper_corner[i]) + " - " + num(m.lower_corner[i]) + " = " + num(extent) +
           ", must be at least 1";
  }
  return {};
}
Message channels_range(const TensorMap& m) {
  if (!is_im2col_family(m)) return {};
  if (m.channels_per_pixel >= 1 && m.channels_per_pixel <= kMaxChannelsPerPixel) return {};
  return "channelsPerPixel = " + num(m.channels_per_pixel) + " is outside 1.." + num(kMaxChannelsPerPixel);
}
Message channels_packed_is_128(const TensorMap& m) {
  if (!is_im2col_family(m) || !is_packed_16b(m.dtype) || m.channels_per_pixel == kPackedInnerElements) return {};
  return "channelsPerPixel = " + num(m.channels_per_pixel) + " must be 128 for " + to_string(m.dtype);
}
// im2col_w128 always loads 128 pixels; its pixelsPerColumn is ignored by the driver.
Message pixels_range(const TensorMap& m) {
  if (!is_im2col_family(m) || m.mode == TensorMode::im2col_w128) return {};
  if (m.pixels_per_column >= 1 && m.pixels_per_column <= kMaxPixelsPerColumn) return {};
  return "pixelsPerColumn = " + num(m.pixels_per_column) + " is outside 1.." + num(kMaxPixelsPerColumn);
}

// ---- elementStrides ----
// Checked for every dimension, dimension 0 included: the range is stated for the whole array;
// the driver only says the entry is *ignored* (not unchecked) when interleave is none.

Message element_strides_range(const TensorMap& m) {
  for (int i = 0; i < m.rank; ++i)
    if (m.element_strides[i] == 0 || m.element_strides[i] > kMaxElementStride)
      return indexed("elementStrides", i) + " = " + num(m.element_strides[i]) + " is outside 1.." +
             num(kMaxElementStride);
  return {};
}

// ---- interleave ----

// PTX 5.5.6: "The interleave layout is not supported for .im2col::w and .im2col::w::128 modes."
Message interleave_wide_needs_none(const TensorMap& m) {
  if (!is_wide(m) || m.interleave == Interleave::none) return {};
  return "interleave = " + to_string(m.interleave) + " but " + to_string(m.mode) + " supports no interleave";
}
Message interleave_b6x16_needs_none(const TensorMap& m) {
  if (m.dtype != DataType::b6x16_p32 || m.interleave == Interleave::none) return {};
  return "interleave = " + to_string(m.interleave) + " but b6x16_p32 requires interleave none";
}
// Not a rule: the driver documentation says interleave 32B requires swizzle 32B, but the H200's
// driver accepts every pattern, none included (golden t0547, t0559; docs/driver-descriptor.md).

// ---- swizzle ----
// 96B swizzle (PTX 5.5.7, Blackwell) has no CUtensorMapSwizzle value, so no driver call can ask
// for it and no capture can show it refused; it is accepted wherever the API allows any pattern
// (tiled, gather4, im2col) and is refused only by the explicit lists below (im2col wide, packed types).

// PTX Table 14: only the 128B pattern has atomicities other than 16B. The driver's combined enum
// cannot express the other pairings; the split fields here can, so they are refused.
Message swizzle_atom_needs_128(const TensorMap& m) {
  if (m.swizzle_atom == SwizzleAtom::b16 || m.swizzle == SwizzleMode::b128) return {};
  return "swizzle atomicity " + swizzle_atom_text(m.swizzle_atom) + " needs swizzle mode 128B, not " +
         swizzle_mode_text(m.swizzle);
}
Message swizzle_wide_modes(const TensorMap& m) {
  if (!is_wide(m)) return {};
  if (swizzle_is(m, SwizzleMode::b64, SwizzleAtom::b16) || swizzle_is(m, SwizzleMode::b128, SwizzleAtom::b16) ||
      swizzle_is(m, SwizzleMode::b128, SwizzleAtom::b32))
    return {};
  return "swizzle = " + swizzle_text(m) + " is not accepted by " + to_string(EncodeApi::im2col_wide) +
         " (64B, 128B, 128B_atom_32B only)";
}
Message swizzle_b4x16_p64_modes(const TensorMap& m) {
  if (m.dtype != DataType::b4x16_p64) return {};
  if (swizzle_is(m, SwizzleMode::none, SwizzleAtom::b16) || swizzle_is(m, SwizzleMode::b128, SwizzleAtom::b16) ||
      swizzle_is(m, SwizzleMode::b128, SwizzleAtom::b32))
    return {};
  return "swizzle = " + swizzle_text(m) + " is not supported for b4x16_p64 (none, 128B, 128B_atom_32B only)";
}
// 128B_atom_64B is documented as store-only for b6x16_p32; the encoder cannot know the direction,
// so it is accepted here (a load through such a map is the operation's problem, not the encoder's).
Message swizzle_b6x16_p32_modes(const TensorMap& m) {
  if (m.dtype != DataType::b6x16_p32) return {};
  if (swizzle_is(m, SwizzleMode::none, SwizzleAtom::b16) || swizzle_is(m, SwizzleMode::b128, SwizzleAtom::b16) ||
      swizzle_is(m, SwizzleMode::b128, SwizzleAtom::b32) || swizzle_is(m, SwizzleMode::b128, SwizzleAtom::b64))
    return {};
  return "swizzle = " + swizzle_text(m) +
         " is not supported for b6x16_p32 (none, 128B, 128B_atom_32B, 128B_atom_64B only)";
}
// Inner dimension (box[0] or channelsPerPixel, times the global element size) must fit the span.
Message swizzle_inner_dim_within_span(const TensorMap& m) {
  if (m.interleave != Interleave::none || m.swizzle == SwizzleMode::none) return {};
  uint32_t per_unit = elements_per_unit(m.dtype);
  uint64_t scaled = inner_scaled_bytes(m);
  uint32_t span = swizzle_span(m.swizzle);
  if (scaled <= uint64_t{span} * per_unit) return {};
  std::string field = uses_box(m) ? "boxDim[0] = " + num(m.box[0])
                                  : "channelsPerPixel = " + num(m.channels_per_pixel);
  return "inner box dimension (" + field + " elements of " + to_string(m.dtype) + ") is " +
         bytes_text(scaled, per_unit) + " bytes, more than the " + num(span) + "-byte span of swizzle " +
         swizzle_text(m);
}

// ---- OOB fill ----

Message oob_nan_needs_float(const TensorMap& m) {
  if (m.oob_fill != OobFill::nan || is_float(m.dtype)) return {};
  return "oobFill = nan but tensorDataType " + to_string(m.dtype) + " is not a floating-point type";
}

// Order matters: the enum and rank rules come first because the others index arrays by rank
// and look enums up in tables. After that the order follows the driver documentation's.
constexpr Rule kRules[] = {
    {"mode.enum", mode_enum},
    {"tensorDataType.enum", data_type_enum},
    {"interleave.enum", interleave_enum},
    {"swizzle.enum", swizzle_enum},
    {"l2Promotion.enum", l2_promotion_enum},
    {"oobFill.enum", oob_fill_enum},
    {"rank.range", rank_range},
    {"gather4.rank_2d", gather4_rank_2d},
    {"gather4.no_interleave", gather4_no_interleave},
    {"gather4.box1_must_be_1", gather4_box1_is_1},
    {"rank.interleave_needs_3d", rank_interleave_needs_3d},
    {"globalAddress.align16", address_align16},
    {"globalAddress.align32_interleave32B", address_align32_interleave},
    {"globalAddress.align32_packed", address_align32_packed},
    {"globalDim.range", dims_range},
    {"globalDim.packed_multiple_of_128", dims_packed_multiple_of_128},
    {"globalDim.b4x16_multiple_of_2", dims_b4x16_multiple_of_2},
    {"globalStrides.range", strides_range},
    {"globalStrides.multiple_of_16", strides_multiple_of_16},
    {"globalStrides.multiple_of_32_interleave32B", strides_multiple_of_32_interleave},
    {"globalStrides.multiple_of_32_packed", strides_multiple_of_32_packed},
    {"boxDim.range", box_range},
    {"boxDim.inner_bytes_multiple_of_16", box_inner_bytes_multiple_of_16},
    {"boxDim.packed_inner_must_be_128", box_packed_inner_is_128},
    {"pixelBoxLowerCorner.range", lower_corner_range},
    {"pixelBoxUpperCorner.range", upper_corner_range},
    {"pixelBox.nonzero_area", pixel_box_nonzero_area},
    {"channelsPerPixel.range", channels_range},
    {"channelsPerPixel.packed_must_be_128", channels_packed_is_128},
    {"pixelsPerColumn.range", pixels_range},
    {"elementStrides.range", element_strides_range},
    {"interleave.im2col_w_needs_none", interleave_wide_needs_none},
    {"interleave.b6x16_p32_needs_none", interleave_b6x16_needs_none},
    {"swizzle.atom_needs_128B", swizzle_atom_needs_128},
    {"swizzle.im2col_w_modes", swizzle_wide_modes},
    {"swizzle.b4x16_p64_modes", swizzle_b4x16_p64_modes},
    {"swizzle.b6x16_p32_modes", swizzle_b6x16_p32_modes},
    {"swizzle.inner_dim_exceeds_span", swizzle_inner_dim_within_span},
    {"oobFill.nan_needs_float", oob_nan_needs_float},
};

}  // namespace

// Refusals of the sm_90 driver for forms only Blackwell has.
std::optional<ValidationError> sm90_refusal(const TensorMap& m) {
  auto refuse = [](const std::string& rule, const std::string& what) {
    return ValidationError{rule, what + " is not supported on sm_90 (Blackwell, sm_100, only)"};
  };
  if (m.mode == TensorMode::im2col_w || m.mode == TensorMode::im2col_w128)
    return refuse("arch.sm90_im2col_wide", "mode " + to_string(m.mode));
  if (is_sub_byte(m.dtype)) return refuse("arch.sm90_sub_byte_type", "tensorDataType " + to_string(m.dtype));
  if (m.swizzle == SwizzleMode::b96) return refuse("arch.sm90_swizzle_96B", "swizzle 96B");
  if (m.swizzle_atom != SwizzleAtom::b16)
    return refuse("arch.sm90_swizzle_atom", "swizzle " + swizzle_name(m.swizzle, m.swizzle_atom));
  return std::nullopt;
}

std::optional<ValidationError> validate_tensor_map(const TensorMap& m, GpuArch arch) {
  for (const Rule& rule : kRules)
    if (Message broken = rule.check(m)) return ValidationError{rule.id, *broken};
  if (arch == GpuArch::sm90) return sm90_refusal(m);
  return std::nullopt;
}

std::vector<std::string> validation_rule_ids() {
  std::vector<std::string> ids;
  for (const Rule& rule : kRules) ids.emplace_back(rule.id);
  for (const char* id : {"arch.sm90_im2col_wide", "arch.sm90_sub_byte_type", "arch.sm90_swizzle_96B", "arch.sm90_swizzle_atom"})
    ids.emplace_back(id);
  return ids;
}

}  // namespace tma
