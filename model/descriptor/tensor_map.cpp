#include "tma/descriptor/tensor_map.h"

#include <utility>

namespace tma {

bool TensorMap::operator==(const TensorMap& o) const {
  return mode == o.mode && dtype == o.dtype && rank == o.rank && global_address == o.global_address &&
         dims == o.dims && strides == o.strides && box == o.box && element_strides == o.element_strides &&
         interleave == o.interleave && swizzle == o.swizzle && swizzle_atom == o.swizzle_atom &&
         l2_promotion == o.l2_promotion && oob_fill == o.oob_fill && lower_corner == o.lower_corner &&
         upper_corner == o.upper_corner && channels_per_pixel == o.channels_per_pixel &&
         pixels_per_column == o.pixels_per_column;
}

namespace {

struct DataTypeInfo {
  const char* name;
  uint32_t bytes;       // global bytes of one element (one 16-element group for sub-byte types)
  uint32_t smem_bytes;  // shared-memory bytes of the same unit
  uint32_t per_unit;    // elements in that unit
  bool is_float;
};

constexpr DataTypeInfo kTypes[kNumDataTypes] = {
    {"u8", 1, 1, 1, false},        {"u16", 2, 2, 1, false},      {"u32", 4, 4, 1, false},
    {"s32", 4, 4, 1, false},       {"u64", 8, 8, 1, false},      {"s64", 8, 8, 1, false},
    {"f16", 2, 2, 1, true},        {"f32", 4, 4, 1, true},       {"f64", 8, 8, 1, true},
    {"bf16", 2, 2, 1, true},       {"f32_ftz", 4, 4, 1, true},   {"tf32", 4, 4, 1, true},
    {"tf32_ftz", 4, 4, 1, true},   {"b4x16", 8, 8, 16, false},   {"b4x16_p64", 8, 16, 16, false},
    {"b6x16_p32", 12, 16, 16, false},
};

const DataTypeInfo& info(DataType t) { return kTypes[static_cast<int>(t)]; }

template <typename E, size_t N>
std::optional<E> lookup(const std::pair<const char*, E> (&table)[N], const std::string& s) {
  for (const auto& [name, value] : table)
    if (s == name) return value;
  return std::nullopt;
}

template <typename E, size_t N>
std::string name_of(const std::pair<const char*, E> (&table)[N], E v) {
  for (const auto& [name, value] : table)
    if (v == value) return name;
  return "?";
}

template <typename E, size_t N>
std::string names_of(const std::pair<const char*, E> (&table)[N]) {
  std::string out;
  for (const auto& entry : table) {
    if (!out.empty()) out += ", ";
    out += entry.first;
  }
  return out;
}

const std::pair<const char*, TensorMode> kModes[] = {{"tiled", TensorMode::tiled},
                                                     {"im2col", TensorMode::im2col},
                                                     {"im2col_w", TensorMode::im2col_w},
                                                     {"im2col_w128", TensorMode::im2col_w128},
                                                     {"gather4", TensorMode::gather4}};
const std::pair<const char*, Interleave> kInterleaves[] = {
    {"none", Interleave::none}, {"16B", Interleave::b16}, {"32B", Interleave::b32}};
const std::pair<const char*, L2Promotion> kPromotions[] = {{"none", L2Promotion::none},
                                                           {"64B", L2Promotion::b64},
                                                           {"128B", L2Promotion::b128},
                                                           {"256B", L2Promotion::b256}};
const std::pair<const char*, OobFill> kFills[] = {{"zero", OobFill::zero}, {"nan", OobFill::nan}};

struct SwizzleName {
  const char* name;
  SwizzleMode mode;
  SwizzleAtom atom;
};
constexpr SwizzleName kSwizzles[] = {
    {"none", SwizzleMode::none, SwizzleAtom::b16},
    {"32B", SwizzleMode::b32, SwizzleAtom::b16},
    {"64B", SwizzleMode::b64, SwizzleAtom::b16},
    {"96B", SwizzleMode::b96, SwizzleAtom::b16},
    {"128B", SwizzleMode::b128, SwizzleAtom::b16},
    {"128B_atom_32B", SwizzleMode::b128, SwizzleAtom::b32},
    {"128B_atom_32B_flip_8B", SwizzleMode::b128, SwizzleAtom::b32_flip_8b},
    {"128B_atom_64B", SwizzleMode::b128, SwizzleAtom::b64},
};

}  // namespace

uint32_t element_bytes(DataType t) { return info(t).bytes; }
uint32_t elements_per_unit(DataType t) { return info(t).per_unit; }
uint32_t smem_unit_bytes(DataType t) { return info(t).smem_bytes; }
bool is_float(DataType t) { return info(t).is_float; }
bool is_sub_byte(DataType t) { return info(t).per_unit > 1; }

uint32_t swizzle_span(SwizzleMode m) {
  switch (m) {
    case SwizzleMode::none: return 0;
    case SwizzleMode::b32: return 32;
    case SwizzleMode::b64: return 64;
    case SwizzleMode::b96: return 96;
    case SwizzleMode::b128: return 128;
  }
  return 0;
}

// Bytes after which the pattern starts again (PTX 5.5.7, "starting address of the repeating pattern").
uint32_t swizzle_repeat(SwizzleMode m) {
  switch (m) {
    case SwizzleMode::none: return 16;
    case SwizzleMode::b32: return 256;
    case SwizzleMode::b64: return 512;
    case SwizzleMode::b96: return 256;
    case SwizzleMode::b128: return 1024;
  }
  return 16;
}

uint32_t swizzle_atom_bytes(SwizzleAtom a) {
  switch (a) {
    case SwizzleAtom::b16: return 16;
    case SwizzleAtom::b32:
    case SwizzleAtom::b32_flip_8b: return 32;
    case SwizzleAtom::b64: return 64;
  }
  return 16;
}

std::string to_string(TensorMode m) { return name_of(kModes, m); }
std::string to_string(DataType t) { return info(t).name; }
std::string to_string(Interleave i) { return name_of(kInterleaves, i); }
std::string to_string(L2Promotion p) { return name_of(kPromotions, p); }
std::string to_string(OobFill f) { return name_of(kFills, f); }

std::string swizzle_name(SwizzleMode m, SwizzleAtom a) {
  for (const auto& s : kSwizzles)
    if (s.mode == m && s.atom == a) return s.name;
  return "";
}

std::optional<TensorMode> parse_tensor_mode(const std::string& s) { return lookup(kModes, s); }
std::optional<DataType> parse_data_type(const std::string& s) {
  for (int i = 0; i < kNumDataTypes; ++i)
    if (s == kTypes[i].name) return static_cast<DataType>(i);
  return std::nullopt;
}
std::optional<Interleave> parse_interleave(const std::string& s) { return lookup(kInterleaves, s); }
std::optional<L2Promotion> parse_l2_promotion(const std::string& s) { return lookup(kPromotions, s); }
std::optional<OobFill> parse_oob_fill(const std::string& s) { return lookup(kFills, s); }

bool parse_swizzle_name(const std::string& s, SwizzleMode& mode, SwizzleAtom& atom) {
  for (const auto& entry : kSwizzles) {
    if (s == entry.name) {
      mode = entry.mode;
      atom = entry.atom;
      return true;
    }
  }
  return false;
}

std::string to_string(GpuArch a) { return a == GpuArch::sm90 ? "sm_90" : "sm_100"; }
std::optional<GpuArch> parse_gpu_arch(const std::string& s) {
  if (s == "sm_90" || s == "sm_90a") return GpuArch::sm90;
  if (s == "sm_100" || s == "sm_100a") return GpuArch::sm100;
  return std::nullopt;
}

std::string tensor_mode_names() { return names_of(kModes); }
std::string data_type_names() {
  std::string out;
  for (const auto& t : kTypes) out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}
std::string interleave_names() { return names_of(kInterleaves); }
std::string l2_promotion_names() { return names_of(kPromotions); }
std::string oob_fill_names() { return names_of(kFills); }
std::string swizzle_names() {
  std::string out;
  for (const auto& s : kSwizzles) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

}  // namespace tma
