#include "tma/descriptor/descriptor_codec.h"

#include <stdexcept>

namespace tma {

namespace {

// Byte offsets (docs/descriptor-encoding.md is the reference; keep the two in step).
constexpr size_t kOffMagic = 0;
constexpr size_t kOffVersion = 1;
constexpr size_t kOffMode = 2;
constexpr size_t kOffDataType = 3;
constexpr size_t kOffRank = 4;
constexpr size_t kOffLayout = 5;   // interleave, L2 promotion, OOB fill
constexpr size_t kOffSwizzle = 6;  // swizzle mode, atomicity
constexpr size_t kOffAddress = 8;
constexpr size_t kOffDims = 16;     // 5 x u32: globalDim - 1
constexpr size_t kOffStrides = 36;  // 4 x 40 bits: globalStrides
constexpr size_t kStrideBytes = 5;
constexpr size_t kOffBox = 56;             // 5 x u8: boxDim - 1
constexpr size_t kOffElementStrides = 62;  // u16: 5 x 3 bits, elementStrides - 1
constexpr size_t kOffLowerW = 64;          // i32
constexpr size_t kOffUpperW = 68;          // i32
constexpr size_t kOffLowerH = 72;          // i16, then upper H, lower D, upper D
constexpr size_t kOffChannels = 80;        // u32
constexpr size_t kOffPixels = 84;          // u32
constexpr size_t kOffReservedTail = 88;    // ..127 zero

// Bytes that must be zero in every version-1 descriptor.
constexpr size_t kReservedBytes[] = {7, 61};

// Bit fields of the layout and swizzle bytes.
constexpr unsigned kInterleaveShift = 0, kInterleaveBits = 2;
constexpr unsigned kL2Shift = 2, kL2Bits = 2;
constexpr unsigned kOobShift = 4, kOobBits = 1;
constexpr uint8_t kLayoutReservedMask = 0xE0;
constexpr unsigned kSwizzleModeShift = 0, kSwizzleModeBits = 3;
constexpr unsigned kSwizzleAtomShift = 3, kSwizzleAtomBits = 2;
constexpr uint8_t kSwizzleReservedMask = 0xE0;
constexpr unsigned kElementStrideBits = 3;
constexpr uint16_t kElementStridesReservedMask = 0x8000;

constexpr uint64_t kMaxGlobalDim = uint64_t{1} << 32;
constexpr uint64_t kStrideLimit = uint64_t{1} << 40;
constexpr int kMaxTensorMode = static_cast<int>(TensorMode::gather4);

using Bytes = std::array<uint8_t, kDescriptorBytes>;

void put(Bytes& b, size_t offset, uint64_t value, size_t nbytes) {
  for (size_t i = 0; i < nbytes; ++i) b[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}
uint64_t get(const uint8_t* b, size_t offset, size_t nbytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < nbytes; ++i) v |= uint64_t{b[offset + i]} << (8 * i);
  return v;
}
unsigned field(uint8_t byte, unsigned shift, unsigned bits) { return (byte >> shift) & ((1u << bits) - 1); }

bool uses_box(TensorMode mode) { return mode == TensorMode::tiled || mode == TensorMode::gather4; }
bool is_wide(TensorMode mode) { return mode == TensorMode::im2col_w || mode == TensorMode::im2col_w128; }

// Spatial dimensions (W, H, D) whose corners are carried.
int corner_count(TensorMode mode, int rank) {
  if (uses_box(mode) || rank < 3) return 0;
  return is_wide(mode) ? 1 : rank - 2;
}

[[noreturn]] void unfit(const std::string& what) {
  throw std::invalid_argument("encode_descriptor: " + what);
}

}  // namespace

TensorMap canonical_form(const TensorMap& m) {
  TensorMap c;  // defaults for everything not copied below
  c.mode = m.mode;
  c.dtype = m.dtype;
  c.rank = m.rank;
  c.global_address = m.global_address;
  c.interleave = m.interleave;
  c.swizzle = m.swizzle;
  c.swizzle_atom = m.swizzle_atom;
  c.l2_promotion = m.l2_promotion;
  c.oob_fill = m.oob_fill;
  int rank = (m.rank >= 1 && m.rank <= kMaxRank) ? m.rank : 0;
  for (int i = 0; i < rank; ++i) {
    c.dims[i] = m.dims[i];
    c.element_strides[i] = m.element_strides[i];
    if (uses_box(m.mode)) c.box[i] = m.box[i];
  }
  for (int i = 0; i + 1 < rank; ++i) c.strides[i] = m.strides[i];
  for (int i = 0; i < corner_count(m.mode, rank); ++i) {
    c.lower_corner[i] = m.lower_corner[i];
    c.upper_corner[i] = m.upper_corner[i];
  }
  if (!uses_box(m.mode)) {
    c.channels_per_pixel = m.channels_per_pixel;
    c.pixels_per_column = m.pixels_per_column;
  }
  return c;
}

std::array<uint8_t, kDescriptorBytes> encode_descriptor(const TensorMap& m) {
  if (static_cast<int>(m.mode) > kMaxTensorMode) unfit("mode out of range");
  if (static_cast<int>(m.dtype) >= kNumDataTypes) unfit("dtype out of range");
  // A local copy: the loops below are bounded by it (and the compiler can see that).
  const int rank = m.rank;
  if (rank < 1 || rank > kMaxRank) unfit("rank " + std::to_string(rank) + " outside 1..5");
  if (static_cast<unsigned>(m.interleave) > static_cast<unsigned>(Interleave::b32)) unfit("interleave out of range");
  if (static_cast<unsigned>(m.l2_promotion) > static_cast<unsigned>(L2Promotion::b256))
    unfit("l2_promotion out of range");
  if (static_cast<unsigned>(m.oob_fill) > static_cast<unsigned>(OobFill::nan)) unfit("oob_fill out of range");
  if (static_cast<unsigned>(m.swizzle) > static_cast<unsigned>(SwizzleMode::b128)) unfit("swizzle out of range");
  if (static_cast<unsigned>(m.swizzle_atom) > static_cast<unsigned>(SwizzleAtom::b64))
    unfit("swizzle_atom out of range");

  Bytes b{};
  b[kOffMagic] = kDescriptorMagic;
  b[kOffVersion] = kDescriptorVersion;
  b[kOffMode] = static_cast<uint8_t>(m.mode);
  b[kOffDataType] = static_cast<uint8_t>(m.dtype);
  b[kOffRank] = static_cast<uint8_t>(rank);
  b[kOffLayout] = static_cast<uint8_t>((static_cast<unsigned>(m.interleave) << kInterleaveShift) |
                                       (static_cast<unsigned>(m.l2_promotion) << kL2Shift) |
                                       (static_cast<unsigned>(m.oob_fill) << kOobShift));
  b[kOffSwizzle] = static_cast<uint8_t>((static_cast<unsigned>(m.swizzle) << kSwizzleModeShift) |
                                        (static_cast<unsigned>(m.swizzle_atom) << kSwizzleAtomShift));
  put(b, kOffAddress, m.global_address, 8);

  uint16_t element_strides = 0;
  for (int i = 0; i < rank; ++i) {
    std::string at = "[" + std::to_string(i) + "]";
    if (m.dims[i] < 1 || m.dims[i] > kMaxGlobalDim) unfit("dims" + at + " outside 1..2^32");
    put(b, kOffDims + 4 * i, m.dims[i] - 1, 4);
    if (m.element_strides[i] < 1 || m.element_strides[i] > 8) unfit("element_strides" + at + " outside 1..8");
    element_strides |= static_cast<uint16_t>((m.element_strides[i] - 1) << (kElementStrideBits * i));
    if (uses_box(m.mode)) {
      if (m.box[i] < 1 || m.box[i] > 256) unfit("box" + at + " outside 1..256");
      b[kOffBox + i] = static_cast<uint8_t>(m.box[i] - 1);
    }
  }
  put(b, kOffElementStrides, element_strides, 2);
  for (int i = 0; i + 1 < rank; ++i) {
    if (m.strides[i] >= kStrideLimit) unfit("strides[" + std::to_string(i) + "] not below 2^40");
    put(b, kOffStrides + kStrideBytes * i, m.strides[i], kStrideBytes);
  }

  int corners = corner_count(m.mode, rank);
  if (corners >= 1) {
    put(b, kOffLowerW, static_cast<uint32_t>(m.lower_corner[0]), 4);
    put(b, kOffUpperW, static_cast<uint32_t>(m.upper_corner[0]), 4);
  }
  for (int i = 1; i < corners; ++i) {
    for (int32_t v : {m.lower_corner[i], m.upper_corner[i]})
      if (v < INT16_MIN || v > INT16_MAX) unfit("corner [" + std::to_string(i) + "] outside int16");
    size_t off = kOffLowerH + 4 * (i - 1);
    put(b, off, static_cast<uint16_t>(m.lower_corner[i]), 2);
    put(b, off + 2, static_cast<uint16_t>(m.upper_corner[i]), 2);
  }
  if (!uses_box(m.mode)) {
    put(b, kOffChannels, m.channels_per_pixel, 4);
    put(b, kOffPixels, m.pixels_per_column, 4);
  }
  return b;
}

std::optional<TensorMap> decode_descriptor(const uint8_t* bytes, std::string* error) {
  auto refuse = [&](const std::string& why) -> std::optional<TensorMap> {
    if (error) *error = why;
    return std::nullopt;
  };
  auto byte_text = [](size_t offset, uint64_t value) {
    return "byte " + std::to_string(offset) + " = " + std::to_string(value);
  };
  if (bytes == nullptr) return refuse("no descriptor bytes");
  if (bytes[kOffMagic] != kDescriptorMagic)
    return refuse(byte_text(kOffMagic, bytes[kOffMagic]) + ": bad magic (expected " +
                  std::to_string(kDescriptorMagic) + ")");
  if (bytes[kOffVersion] != kDescriptorVersion)
    return refuse(byte_text(kOffVersion, bytes[kOffVersion]) + ": unsupported version (expected " +
                  std::to_string(kDescriptorVersion) + ")");

  TensorMap m;
  if (bytes[kOffMode] > kMaxTensorMode) return refuse(byte_text(kOffMode, bytes[kOffMode]) + ": mode out of range");
  m.mode = static_cast<TensorMode>(bytes[kOffMode]);
  if (bytes[kOffDataType] >= kNumDataTypes)
    return refuse(byte_text(kOffDataType, bytes[kOffDataType]) + ": dtype out of range");
  m.dtype = static_cast<DataType>(bytes[kOffDataType]);
  if (bytes[kOffRank] < 1 || bytes[kOffRank] > kMaxRank)
    return refuse(byte_text(kOffRank, bytes[kOffRank]) + ": rank outside 1..5");
  m.rank = bytes[kOffRank];

  uint8_t layout = bytes[kOffLayout];
  if (layout & kLayoutReservedMask) return refuse(byte_text(kOffLayout, layout) + ": reserved bits set");
  unsigned interleave = field(layout, kInterleaveShift, kInterleaveBits);
  if (interleave > static_cast<unsigned>(Interleave::b32))
    return refuse(byte_text(kOffLayout, layout) + ": interleave out of range");
  m.interleave = static_cast<Interleave>(interleave);
  m.l2_promotion = static_cast<L2Promotion>(field(layout, kL2Shift, kL2Bits));
  m.oob_fill = static_cast<OobFill>(field(layout, kOobShift, kOobBits));

  uint8_t swizzle = bytes[kOffSwizzle];
  if (swizzle & kSwizzleReservedMask) return refuse(byte_text(kOffSwizzle, swizzle) + ": reserved bits set");
  unsigned swizzle_mode = field(swizzle, kSwizzleModeShift, kSwizzleModeBits);
  if (swizzle_mode > static_cast<unsigned>(SwizzleMode::b128))
    return refuse(byte_text(kOffSwizzle, swizzle) + ": swizzle mode out of range");
  m.swizzle = static_cast<SwizzleMode>(swizzle_mode);
  m.swizzle_atom = static_cast<SwizzleAtom>(field(swizzle, kSwizzleAtomShift, kSwizzleAtomBits));

  m.global_address = get(bytes, kOffAddress, 8);

  // Slots the rank or mode leave unused must be zero, so every accepted byte string is the
  // encoding of exactly one map (and corruption there is caught).
  auto must_be_zero = [&](size_t offset, size_t nbytes, const char* what) -> std::optional<std::string> {
    if (get(bytes, offset, nbytes) == 0) return std::nullopt;
    return "bytes " + std::to_string(offset) + ".." + std::to_string(offset + nbytes - 1) + " (" + what +
           ") must be zero";
  };
  for (size_t off : kReservedBytes)
    if (auto e = must_be_zero(off, 1, "reserved")) return refuse(*e);
  for (size_t off = kOffReservedTail; off < kDescriptorBytes; ++off)
    if (auto e = must_be_zero(off, 1, "reserved")) return refuse(*e);

  for (int i = 0; i < kMaxRank; ++i) {
    bool used = i < m.rank;
    if (used) {
      m.dims[i] = get(bytes, kOffDims + 4 * i, 4) + 1;
    } else if (auto e = must_be_zero(kOffDims + 4 * i, 4, "globalDim past rank")) {
      return refuse(*e);
    }
    if (used && uses_box(m.mode)) {
      m.box[i] = bytes[kOffBox + i] + 1u;
    } else if (auto e = must_be_zero(kOffBox + i, 1, "boxDim unused")) {
      return refuse(*e);
    }
  }
  for (int i = 0; i + 1 < kMaxRank; ++i) {
    size_t off = kOffStrides + kStrideBytes * i;
    if (i + 1 < m.rank) {
      m.strides[i] = get(bytes, off, kStrideBytes);
    } else if (auto e = must_be_zero(off, kStrideBytes, "globalStrides past rank - 1")) {
      return refuse(*e);
    }
  }

  auto element_strides = static_cast<uint16_t>(get(bytes, kOffElementStrides, 2));
  uint16_t used_bits = static_cast<uint16_t>((1u << (kElementStrideBits * m.rank)) - 1);
  if (element_strides & (kElementStridesReservedMask | ~used_bits))
    return refuse("bytes 62..63 = " + std::to_string(element_strides) + ": elementStrides bits past rank must be zero");
  for (int i = 0; i < m.rank; ++i)
    m.element_strides[i] = ((element_strides >> (kElementStrideBits * i)) & 7u) + 1;

  int corners = corner_count(m.mode, m.rank);
  if (corners >= 1) {
    m.lower_corner[0] = static_cast<int32_t>(static_cast<uint32_t>(get(bytes, kOffLowerW, 4)));
    m.upper_corner[0] = static_cast<int32_t>(static_cast<uint32_t>(get(bytes, kOffUpperW, 4)));
  } else if (auto e = must_be_zero(kOffLowerW, 8, "W corners unused")) {
    return refuse(*e);
  }
  for (int i = 1; i < 3; ++i) {
    size_t off = kOffLowerH + 4 * (i - 1);
    if (i < corners) {
      m.lower_corner[i] = static_cast<int16_t>(static_cast<uint16_t>(get(bytes, off, 2)));
      m.upper_corner[i] = static_cast<int16_t>(static_cast<uint16_t>(get(bytes, off + 2, 2)));
    } else if (auto e = must_be_zero(off, 4, i == 1 ? "H corners unused" : "D corners unused")) {
      return refuse(*e);
    }
  }
  if (!uses_box(m.mode)) {
    m.channels_per_pixel = static_cast<uint32_t>(get(bytes, kOffChannels, 4));
    m.pixels_per_column = static_cast<uint32_t>(get(bytes, kOffPixels, 4));
  } else if (auto e = must_be_zero(kOffChannels, 8, "channels/pixels unused in tiled modes")) {
    return refuse(*e);
  }
  return m;
}

}  // namespace tma
