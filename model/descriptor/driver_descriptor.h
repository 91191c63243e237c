// NVIDIA's own 128-byte CUtensorMap as the sm_90 driver (580.159.04) writes it, worked out
// from the silicon captures (tests/golden/silicon*, driver_descriptor: NAME.desc) and
// confirmed by probing the driver and tensormap.replace on an H200.
// Byte and bit layout, how it was derived and what stays unknown: docs/driver-descriptor.md.
//
// Not to be confused with descriptor_codec.h, the project's own (documented) 128-byte form.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "tma/descriptor/tensor_map.h"

namespace tma {

constexpr size_t kDriverDescriptorBytes = 128;

// Decodes a CUtensorMap produced by the sm_90 driver. The descriptor holds an absolute device
// address; global_address of the result is that address minus global_base (the allocation the
// map's base offset is relative to).
//
// Returns nullopt and, when error is not null, a sentence saying why, for: a bit that no
// capture ever set and whose meaning is unknown (the layout there is not understood), a rank
// outside 1..5 (3..5 for im2col), an element-type code outside the known ones, interleave code 3,
// or an address below global_base. Never reads past bytes[127]; any content is safe.
//
// Modes: the descriptor has one im2col bit, so the result is tiled or im2col (an sm_90
// cuTensorMapEncodeIm2colWide map reads back as im2col; gather4 and the w128 form do not exist
// on sm_90). swizzle_atom is always b16 (sm_90 has no other atomicity).
// Slots past the rank (or not used by the mode) are ignored, not checked, since
// tensormap.replace of the rank leaves them as they were; so are the two words the driver
// derives from other fields (box bytes at byte 64, shared-memory alignment at byte 72), which
// tensormap.replace does not update either. The result is in canonical_form (descriptor_codec.h).
std::optional<TensorMap> decode_driver_descriptor(const uint8_t bytes[kDriverDescriptorBytes],
                                                  uint64_t global_base, std::string* error = nullptr);

// The bytes the sm_90 driver writes for this map when its globalAddress is
// global_base + m.global_address, derived words included: for every capture,
// encode_driver_descriptor(*decode_driver_descriptor(b, base), base) == b.
// Throws std::invalid_argument naming the field when the map has no sm_90 encoding (gather4,
// im2col_w / im2col_w128, the sub-byte types, 96B swizzle or an atomicity other than 16B, im2col
// rank below 3) or a value does not fit its slot (rank outside 1..5, globalDim outside 1..2^32,
// a stride not a multiple of 16 or not below 2^40, box outside 1..256, element stride outside
// 1..8, a corner outside the rank's signed width, channels outside 1..256, pixels outside 1..1024,
// a box of 2^32 bytes or more). It does not otherwise apply the driver's rules (alignment,
// swizzle span, ...): validate_tensor_map does that.
std::array<uint8_t, kDriverDescriptorBytes> encode_driver_descriptor(const TensorMap& m, uint64_t global_base);

}  // namespace tma
