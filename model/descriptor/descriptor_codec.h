// The project's own 128-byte binary form of a TensorMap: what the TLM model's descriptor cache
// fetches from global memory. It is not NVIDIA's (undocumented) CUtensorMap layout.
// Byte offsets and bit fields: docs/descriptor-encoding.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "tma/descriptor/tensor_map.h"

namespace tma {

constexpr size_t kDescriptorBytes = 128;
constexpr uint8_t kDescriptorMagic = 0x54;  // 'T'
constexpr uint8_t kDescriptorVersion = 1;

// Encodes the fields the map's rank and mode use (see canonical_form). Throws
// std::invalid_argument naming the field when a value does not fit its slot (rank outside 1..5,
// an enum out of range, globalDim outside 1..2^32, a stride >= 2^40, box outside 1..256, element
// stride outside 1..8, an H/D corner outside int16).
// Every map validate_tensor_map accepts fits.
std::array<uint8_t, kDescriptorBytes> encode_descriptor(const TensorMap& m);

// Decodes 128 bytes. Returns nullopt and, when error is not null, a sentence saying why, for a
// bad magic or version, an out-of-range enum or rank, or a non-zero reserved or unused bit.
// Never reads past bytes[127]; any content is safe. What it returns is in canonical form;
// it is not validated against the driver's rules (validate_tensor_map does that).
std::optional<TensorMap> decode_descriptor(const uint8_t* bytes, std::string* error = nullptr);

// The map with every field the encoding does not carry reset to TensorMap's defaults:
// array entries at or past rank (strides: rank-1), box for the im2col family, corners /
// channels / pixels for tiled and gather4, corners past W for the wide im2col forms and past
// the spatial rank for im2col. decode_descriptor(encode_descriptor(m)) == canonical_form(m).
TensorMap canonical_form(const TensorMap& m);

}  // namespace tma
