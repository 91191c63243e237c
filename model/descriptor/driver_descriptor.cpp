#include "tma/descriptor/driver_descriptor.h"

#include <stdexcept>

#include "tma/descriptor/descriptor_codec.h"

namespace tma {

namespace {

// Layout of the sm_90 CUtensorMap (docs/driver-descriptor.md is the reference; keep the two in
// step). All fields little-endian; bit n of a 32-bit word at byte k is bit n % 8 of byte k + n / 8.
constexpr size_t kOffAddress = 0;      // u64: globalAddress, as is
constexpr size_t kOffFlags = 8;        // u32: mode, rank, type, interleave, swizzle, fill, L2
constexpr size_t kOffStrideLow = 12;   // 4 x u32: bits 4..35 of globalStrides[i]
constexpr size_t kOffStrideHigh = 28;  // u32: 4-bit nibble i = bits 36..39 of globalStrides[i]
constexpr size_t kOffDims = 32;        // 5 x u32: globalDim[i] - 1
constexpr size_t kOffElementStrides = 52;  // 24 bits: 3 bits each, elementStrides[i] - 1
constexpr size_t kOffBox0 = 55;        // u8: boxDim[0] - 1 (tiled), channelsPerPixel - 1 (im2col)
constexpr size_t kOffBoxRest = 56;     // 4 x u8: boxDim[1..4] - 1 (tiled); corners (im2col)
constexpr size_t kOffLowerCorner = 56;  // im2col: 16 bits of lower corners
constexpr size_t kOffUpperCorner = 58;  // im2col: 16 bits of upper corners
constexpr size_t kOffPixels = 60;      // u16: pixelsPerColumn - 1 in bits 0..9 (im2col)
constexpr size_t kOffBoxBytes = 64;    // u32: derived, bytes of one box
constexpr size_t kOffSmemAlign = 72;   // u16: derived, shared-memory alignment of the box

// The flags word at byte 8.
constexpr unsigned kIm2colBit = 0;
constexpr unsigned kRankShift = 4, kRankBits = 3;       // rank - 1
constexpr unsigned kTypeShift = 7, kTypeBits = 4;       // element-type code, below
constexpr unsigned kInterleaveShift = 11, kInterleaveBits = 2;
constexpr unsigned kSwizzleShift = 13, kSwizzleBits = 2;
constexpr unsigned kOobNanBit = 15;
constexpr unsigned kTf32Bit = 16;
constexpr unsigned kL2Shift = 17, kL2Bits = 2;
constexpr uint32_t kFlagsReserved = 0xFFF8000Eu;  // bits 1..3 and 19..31: never set in any capture

constexpr uint32_t kStrideHighReserved = 0xFFFF0000u;  // nibbles 4..7 of the word at 28
constexpr uint32_t kElementStridesReserved = 0x00FF8000u;  // bits 15..23 of the 24-bit field
constexpr uint16_t kPixelsReserved = 0xFC00u;

constexpr unsigned kPixelsBits = 10;
constexpr uint64_t kMaxGlobalDim = uint64_t{1} << 32;
constexpr uint64_t kStrideLimit = uint64_t{1} << 40;

// Bytes that no capture ever set and whose meaning is unknown: they must be zero.
constexpr size_t kReservedRanges[][2] = {{62, 64}, {68, 72}, {74, 128}};

// Element-type codes of the hardware (the order PTX's tensormap.replace .elemtype uses, which
// differs from CUtensorMapDataType's); tf32 and tf32_ftz are codes 7 and 8 plus the tf32 bit.
constexpr DataType kTypeOfCode[] = {DataType::u8,  DataType::u16, DataType::u32,     DataType::s32,
                                    DataType::u64, DataType::s64, DataType::f16,     DataType::f32,
                                    DataType::f32_ftz, DataType::f64, DataType::bf16};
constexpr unsigned kNumTypeCodes = sizeof(kTypeOfCode) / sizeof(kTypeOfCode[0]);

using Bytes = std::array<uint8_t, kDriverDescriptorBytes>;

uint64_t get(const uint8_t* b, size_t offset, size_t nbytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < nbytes; ++i) v |= uint64_t{b[offset + i]} << (8 * i);
  return v;
}
void put(Bytes& b, size_t offset, uint64_t value, size_t nbytes) {
  for (size_t i = 0; i < nbytes; ++i) b[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}
uint32_t bits(uint64_t word, unsigned shift, unsigned width) {
  return static_cast<uint32_t>((word >> shift) & ((uint64_t{1} << width) - 1));
}
// Sign-extends the low `width` bits of v.
int32_t sign_extend(uint32_t v, unsigned width) {
  uint32_t m = uint32_t{1} << (width - 1);
  v &= (m << 1) - 1;
  return static_cast<int32_t>(v ^ m) - static_cast<int32_t>(m);
}

// im2col corners: 16 bits per corner (lower at byte 56, upper at 58), holding rank - 2 signed
// fields: one of 16 bits (rank 3), two of 8 (rank 4), three of 5 (rank 5, bit 15 unused).
unsigned corner_width(int rank) { return rank == 3 ? 16 : rank == 4 ? 8 : 5; }
constexpr uint16_t kCornerReservedRank5 = 0x8000u;

int code_of(DataType t, bool* tf32) {
  *tf32 = false;
  switch (t) {
    case DataType::tf32: *tf32 = true; return 7;
    case DataType::tf32_ftz: *tf32 = true; return 8;
    default: break;
  }
  for (unsigned c = 0; c < kNumTypeCodes; ++c)
    if (kTypeOfCode[c] == t) return static_cast<int>(c);
  return -1;
}

uint16_t smem_alignment(SwizzleMode s) {
  switch (s) {
    case SwizzleMode::b32: return 256;
    case SwizzleMode::b64: return 512;
    case SwizzleMode::b128: return 1024;
    default: return 16;
  }
}

[[noreturn]] void unfit(const std::string& what) {
  throw std::invalid_argument("encode_driver_descriptor: " + what);
}

std::string hex(uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 15]);
    v >>= 4;
  } while (v);
  return "0x" + s;
}

}  // namespace

std::optional<TensorMap> decode_driver_descriptor(const uint8_t bytes[kDriverDescriptorBytes],
                                                  uint64_t global_base, std::string* error) {
  auto refuse = [&](const std::string& why) -> std::optional<TensorMap> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (bytes == nullptr) return refuse("no descriptor bytes");

  const uint32_t flags = static_cast<uint32_t>(get(bytes, kOffFlags, 4));
  if (flags & kFlagsReserved)
    return refuse("flags word (byte 8) = " + hex(flags) + ": bits " + hex(flags & kFlagsReserved) +
                  " set, whose meaning is unknown");
  for (const auto& r : kReservedRanges)
    for (size_t i = r[0]; i < r[1]; ++i)
      if (bytes[i] != 0)
        return refuse("byte " + std::to_string(i) + " = " + hex(bytes[i]) + ": non-zero where no capture has data");
  const uint32_t stride_high = static_cast<uint32_t>(get(bytes, kOffStrideHigh, 4));
  if (stride_high & kStrideHighReserved)
    return refuse("stride high nibbles (byte 28) = " + hex(stride_high) + ": unknown bits set");
  const uint32_t estrides = static_cast<uint32_t>(get(bytes, kOffElementStrides, 3));
  if (estrides & kElementStridesReserved)
    return refuse("element strides (byte 52) = " + hex(estrides) + ": unknown bits set");

  TensorMap m;
  const bool im2col = bits(flags, kIm2colBit, 1) != 0;
  m.mode = im2col ? TensorMode::im2col : TensorMode::tiled;
  const int rank = static_cast<int>(bits(flags, kRankShift, kRankBits)) + 1;
  if (rank > kMaxRank) return refuse("rank field " + std::to_string(rank - 1) + ": rank " + std::to_string(rank) + " above 5");
  if (im2col && rank < 3) return refuse("im2col with rank " + std::to_string(rank) + " (needs 3..5)");
  m.rank = rank;

  const unsigned code = bits(flags, kTypeShift, kTypeBits);
  if (code >= kNumTypeCodes) return refuse("element-type code " + std::to_string(code) + " unknown");
  const bool tf32 = bits(flags, kTf32Bit, 1) != 0;
  m.dtype = kTypeOfCode[code];
  if (tf32) {
    if (m.dtype == DataType::f32) m.dtype = DataType::tf32;
    else if (m.dtype == DataType::f32_ftz) m.dtype = DataType::tf32_ftz;
    else return refuse("tf32 bit set with element-type code " + std::to_string(code));
  }
  const unsigned interleave = bits(flags, kInterleaveShift, kInterleaveBits);
  if (interleave > static_cast<unsigned>(Interleave::b32)) return refuse("interleave code 3 unknown");
  m.interleave = static_cast<Interleave>(interleave);
  switch (bits(flags, kSwizzleShift, kSwizzleBits)) {
    case 0: m.swizzle = SwizzleMode::none; break;
    case 1: m.swizzle = SwizzleMode::b32; break;
    case 2: m.swizzle = SwizzleMode::b64; break;
    default: m.swizzle = SwizzleMode::b128; break;
  }
  m.swizzle_atom = SwizzleAtom::b16;
  m.oob_fill = bits(flags, kOobNanBit, 1) ? OobFill::nan : OobFill::zero;
  m.l2_promotion = static_cast<L2Promotion>(bits(flags, kL2Shift, kL2Bits));

  const uint64_t address = get(bytes, kOffAddress, 8);
  if (address < global_base)
    return refuse("address " + hex(address) + " below global_base " + hex(global_base));
  m.global_address = address - global_base;

  for (int i = 0; i < rank; ++i) {
    m.dims[i] = get(bytes, kOffDims + 4 * i, 4) + 1;
    m.element_strides[i] = bits(estrides, 3 * i, 3) + 1;
  }
  for (int i = 0; i + 1 < rank; ++i)
    m.strides[i] = (get(bytes, kOffStrideLow + 4 * i, 4) | (uint64_t{bits(stride_high, 4 * i, 4)} << 32)) << 4;

  const uint16_t pixels = static_cast<uint16_t>(get(bytes, kOffPixels, 2));
  if (!im2col) {
    m.box[0] = uint32_t{bytes[kOffBox0]} + 1;
    for (int i = 1; i < rank; ++i) m.box[i] = uint32_t{bytes[kOffBoxRest + i - 1]} + 1;
  } else {
    m.channels_per_pixel = uint32_t{bytes[kOffBox0]} + 1;
    if (pixels & kPixelsReserved) return refuse("pixels field (byte 60) = " + hex(pixels) + ": unknown bits set");
    m.pixels_per_column = uint32_t{bits(pixels, 0, kPixelsBits)} + 1;
    const uint16_t lower = static_cast<uint16_t>(get(bytes, kOffLowerCorner, 2));
    const uint16_t upper = static_cast<uint16_t>(get(bytes, kOffUpperCorner, 2));
    if (rank == 5 && ((lower | upper) & kCornerReservedRank5))
      return refuse("5D corner bit 15 set, whose meaning is unknown");
    const unsigned w = corner_width(rank);
    for (int i = 0; i < rank - 2; ++i) {
      m.lower_corner[i] = sign_extend(bits(lower, w * i, w), w);
      m.upper_corner[i] = sign_extend(bits(upper, w * i, w), w);
    }
  }
  return canonical_form(m);
}

std::array<uint8_t, kDriverDescriptorBytes> encode_driver_descriptor(const TensorMap& m, uint64_t global_base) {
  const bool im2col = m.mode == TensorMode::im2col;
  if (m.mode != TensorMode::tiled && !im2col)
    unfit("mode " + to_string(m.mode) + " has no sm_90 encoding (tiled and im2col only)");
  const int rank = m.rank;
  if (rank < 1 || rank > kMaxRank) unfit("rank " + std::to_string(rank) + " outside 1..5");
  if (im2col && rank < 3) unfit("im2col rank " + std::to_string(rank) + " below 3");
  bool tf32 = false;
  const int code = code_of(m.dtype, &tf32);
  if (code < 0) unfit("dtype " + to_string(m.dtype) + " has no sm_90 encoding");
  if (static_cast<unsigned>(m.interleave) > static_cast<unsigned>(Interleave::b32)) unfit("interleave out of range");
  unsigned swizzle = 0;
  switch (m.swizzle) {
    case SwizzleMode::none: swizzle = 0; break;
    case SwizzleMode::b32: swizzle = 1; break;
    case SwizzleMode::b64: swizzle = 2; break;
    case SwizzleMode::b128: swizzle = 3; break;
    default: unfit("swizzle " + swizzle_name(m.swizzle, SwizzleAtom::b16) + " has no sm_90 encoding");
  }
  if (m.swizzle_atom != SwizzleAtom::b16) unfit("swizzle atomicity other than 16B has no sm_90 encoding");
  if (static_cast<unsigned>(m.l2_promotion) > static_cast<unsigned>(L2Promotion::b256))
    unfit("l2_promotion out of range");
  if (static_cast<unsigned>(m.oob_fill) > static_cast<unsigned>(OobFill::nan)) unfit("oob_fill out of range");

  Bytes b{};
  put(b, kOffAddress, global_base + m.global_address, 8);
  uint32_t flags = 0;
  flags |= uint32_t{im2col} << kIm2colBit;
  flags |= static_cast<uint32_t>(rank - 1) << kRankShift;
  flags |= static_cast<uint32_t>(code) << kTypeShift;
  flags |= static_cast<uint32_t>(m.interleave) << kInterleaveShift;
  flags |= swizzle << kSwizzleShift;
  flags |= uint32_t{m.oob_fill == OobFill::nan} << kOobNanBit;
  flags |= uint32_t{tf32} << kTf32Bit;
  flags |= static_cast<uint32_t>(m.l2_promotion) << kL2Shift;
  put(b, kOffFlags, flags, 4);

  uint32_t estrides = 0;
  for (int i = 0; i < rank; ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    if (m.dims[i] < 1 || m.dims[i] > kMaxGlobalDim) unfit("dims" + at + " outside 1..2^32");
    put(b, kOffDims + 4 * i, m.dims[i] - 1, 4);
    if (m.element_strides[i] < 1 || m.element_strides[i] > 8) unfit("element_strides" + at + " outside 1..8");
    estrides |= (m.element_strides[i] - 1) << (3 * i);
  }
  put(b, kOffElementStrides, estrides, 3);
  uint32_t stride_high = 0;
  for (int i = 0; i + 1 < rank; ++i) {
    const std::string at = "strides[" + std::to_string(i) + "]";
    if (m.strides[i] >= kStrideLimit) unfit(at + " not below 2^40");
    if (m.strides[i] % 16) unfit(at + " not a multiple of 16 (the descriptor holds stride / 16)");
    put(b, kOffStrideLow + 4 * i, m.strides[i] >> 4, 4);
    stride_high |= static_cast<uint32_t>(m.strides[i] >> 36) << (4 * i);
  }
  put(b, kOffStrideHigh, stride_high, 4);

  const uint64_t elem = element_bytes(m.dtype);
  uint64_t box_bytes = elem;
  if (!im2col) {
    for (int i = 0; i < rank; ++i) {
      if (m.box[i] < 1 || m.box[i] > 256) unfit("box[" + std::to_string(i) + "] outside 1..256");
      // Elements the box yields along dimension i (rounded down, as the driver does).
      box_bytes *= m.box[i] / m.element_strides[i];
    }
    b[kOffBox0] = static_cast<uint8_t>(m.box[0] - 1);
    for (int i = 1; i < rank; ++i) b[kOffBoxRest + i - 1] = static_cast<uint8_t>(m.box[i] - 1);
  } else {
    if (m.channels_per_pixel < 1 || m.channels_per_pixel > 256) unfit("channels_per_pixel outside 1..256");
    if (m.pixels_per_column < 1 || m.pixels_per_column > (1u << kPixelsBits))
      unfit("pixels_per_column outside 1..1024");
    b[kOffBox0] = static_cast<uint8_t>(m.channels_per_pixel - 1);
    put(b, kOffPixels, m.pixels_per_column - 1, 2);
    const unsigned w = corner_width(rank);
    const int32_t lo = -(int32_t{1} << (w - 1)), hi = (int32_t{1} << (w - 1)) - 1;
    uint32_t lower = 0, upper = 0;
    for (int i = 0; i < rank - 2; ++i) {
      for (int32_t v : {m.lower_corner[i], m.upper_corner[i]})
        if (v < lo || v > hi)
          unfit("corner [" + std::to_string(i) + "] = " + std::to_string(v) + " outside " + std::to_string(lo) +
                ".." + std::to_string(hi) + " (rank " + std::to_string(rank) + ")");
      const uint32_t mask = (uint32_t{1} << w) - 1;
      lower |= (static_cast<uint32_t>(m.lower_corner[i]) & mask) << (w * i);
      upper |= (static_cast<uint32_t>(m.upper_corner[i]) & mask) << (w * i);
    }
    put(b, kOffLowerCorner, lower, 2);
    put(b, kOffUpperCorner, upper, 2);
    box_bytes = elem * m.channels_per_pixel * m.pixels_per_column;
  }
  if (box_bytes > UINT32_MAX) unfit("box of " + std::to_string(box_bytes) + " bytes does not fit 32 bits");
  put(b, kOffBoxBytes, box_bytes, 4);
  put(b, kOffSmemAlign, smem_alignment(m.swizzle), 2);
  return b;
}

}  // namespace tma
