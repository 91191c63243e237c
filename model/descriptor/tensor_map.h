// Tensor-map descriptor: every field the PTX ISA (5.5) and the CUDA driver's
// cuTensorMapEncode{Tiled,Im2col,Im2colWide} name, as plain values.
// Shared by the TLM model and the reference engine (types and value conversions only).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace tma {

// How the tensor is accessed. gather4 covers .tile::gather4 (load) and .tile::scatter4 (store).
enum class TensorMode : uint8_t { tiled, im2col, im2col_w, im2col_w128, gather4 };

// Values equal the CUtensorMapDataType enum, so a driver call can take them as they are.
enum class DataType : uint8_t {
  u8 = 0, u16, u32, s32, u64, s64, f16, f32, f64, bf16, f32_ftz, tf32, tf32_ftz,
  b4x16,      // CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B: 16 x 4-bit packed in 8 bytes
  b4x16_p64,  // CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B: 8 bytes of data, 8 bytes of padding in smem
  b6x16_p32,  // CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B: 12 bytes of data, 4 bytes of padding in smem
};
constexpr int kNumDataTypes = 16;

enum class Interleave : uint8_t { none = 0, b16, b32 };

// Swizzle pattern (PTX tensormap swizzle_mode) and the size of the unit it moves
// (swizzle_atomicity). The driver's CUtensorMapSwizzle folds both into one enum.
enum class SwizzleMode : uint8_t { none, b32, b64, b96, b128 };
enum class SwizzleAtom : uint8_t { b16, b32, b32_flip_8b, b64 };

enum class L2Promotion : uint8_t { none = 0, b64, b128, b256 };
enum class OobFill : uint8_t { zero = 0, nan };

constexpr int kMaxRank = 5;

// Which GPU generation's driver and TMA: sm_90 (Hopper, what the silicon captures ran on)
// refuses the Blackwell-only forms that sm_100 accepts.
enum class GpuArch : uint8_t { sm90, sm100 };
std::string to_string(GpuArch a);
std::optional<GpuArch> parse_gpu_arch(const std::string& s);  // "sm_90", "sm_100"

struct TensorMap {
  TensorMode mode = TensorMode::tiled;
  DataType dtype = DataType::u8;
  int rank = 1;
  uint64_t global_address = 0;              // byte address of element (0,...,0)
  std::array<uint64_t, kMaxRank> dims{};    // globalDim, innermost first (in elements)
  std::array<uint64_t, kMaxRank - 1> strides{};  // globalStrides in bytes: strides[i] steps dim i+1
  std::array<uint32_t, kMaxRank> box{};     // boxDim (tiled and gather4 only)
  std::array<uint32_t, kMaxRank> element_strides{1, 1, 1, 1, 1};
  Interleave interleave = Interleave::none;
  SwizzleMode swizzle = SwizzleMode::none;
  SwizzleAtom swizzle_atom = SwizzleAtom::b16;
  L2Promotion l2_promotion = L2Promotion::none;
  OobFill oob_fill = OobFill::zero;
  // im2col family only; innermost first (W, H, D). im2col_w / w128 use index 0 (W) alone.
  std::array<int32_t, 3> lower_corner{};
  std::array<int32_t, 3> upper_corner{};
  uint32_t channels_per_pixel = 0;
  uint32_t pixels_per_column = 0;

  bool operator==(const TensorMap& o) const;
  bool operator!=(const TensorMap& o) const { return !(*this == o); }
};

// ---- value conversions shared by every user of the descriptor ----

// Bytes one element occupies in global memory; for the packed sub-byte types this
// is the size of one 16-element group (8 or 12 bytes) and elements_per_unit() is 16.
uint32_t element_bytes(DataType t);
uint32_t elements_per_unit(DataType t);
// Bytes one 16-element group occupies in shared memory (8, 16 or 16); element_bytes() for others.
uint32_t smem_unit_bytes(DataType t);
bool is_float(DataType t);
bool is_sub_byte(DataType t);

// Swizzle span in bytes (32, 64, 96, 128; 0 for none) and the pattern's repeat in bytes.
uint32_t swizzle_span(SwizzleMode m);
uint32_t swizzle_repeat(SwizzleMode m);
uint32_t swizzle_atom_bytes(SwizzleAtom a);

// Names as used in YAML files and messages ("bf16", "128B", "im2col_w", ...).
std::string to_string(TensorMode m);
std::string to_string(DataType t);
std::string to_string(Interleave i);
std::string to_string(L2Promotion p);
std::string to_string(OobFill f);
// Combined swizzle name as the golden-case format writes it: none, 32B, 64B, 96B, 128B,
// 128B_atom_32B, 128B_atom_32B_flip_8B, 128B_atom_64B. Empty for an invalid pairing.
std::string swizzle_name(SwizzleMode m, SwizzleAtom a);

std::optional<TensorMode> parse_tensor_mode(const std::string& s);
std::optional<DataType> parse_data_type(const std::string& s);
std::optional<Interleave> parse_interleave(const std::string& s);
std::optional<L2Promotion> parse_l2_promotion(const std::string& s);
std::optional<OobFill> parse_oob_fill(const std::string& s);
bool parse_swizzle_name(const std::string& s, SwizzleMode& mode, SwizzleAtom& atom);

// The accepted spellings of each enum, for error messages ("one of: none, 16B, 32B").
std::string tensor_mode_names();
std::string data_type_names();
std::string interleave_names();
std::string swizzle_names();
std::string l2_promotion_names();
std::string oob_fill_names();

// Number of spatial dimensions (W, H, D) of an im2col-family map: rank - 2.
inline int spatial_rank(const TensorMap& m) { return m.rank - 2; }

}  // namespace tma
