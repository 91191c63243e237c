#include "tma/config/tensor_map_yaml.h"

#include <algorithm>

namespace tma {

namespace {

// A refused rank (0, 6, ...) still reads: its lists may have any length and only the first
// kMaxRank entries are kept, for validation to refuse the rank itself.
bool rank_is_regular(int rank) { return rank >= 1 && rank <= kMaxRank; }

template <typename T, size_t N, typename V>
void copy_prefix(std::array<T, N>& dst, const std::vector<V>& src) {
  for (size_t i = 0; i < std::min(N, src.size()); ++i) dst[i] = static_cast<T>(src[i]);
}

}  // namespace

void read_map_options(const YamlField& n, TensorMap& m) {
  m.interleave = n["interleave"].as_enum_or(Interleave::none, parse_interleave, interleave_names());
  const std::string sw = n["swizzle"].as_string_or("none");
  if (!parse_swizzle_name(sw, m.swizzle, m.swizzle_atom))
    throw n["swizzle"].error("expected one of: " + swizzle_names() + "; got '" + sw + "'");
  m.l2_promotion = n["l2_promotion"].as_enum_or(L2Promotion::none, parse_l2_promotion, l2_promotion_names());
  m.oob_fill = n["oob_fill"].as_enum_or(OobFill::zero, parse_oob_fill, oob_fill_names());
}

TensorMap read_tensor_map(const YamlField& n) {
  n.check_keys({"mode", "dtype", "rank", "base", "dims", "strides", "box", "element_strides", "interleave",
                "swizzle", "l2_promotion", "oob_fill", "lower_corner", "upper_corner", "channels_per_pixel",
                "pixels_per_column"});
  TensorMap m;
  m.mode = n["mode"].as_enum(parse_tensor_mode, tensor_mode_names());
  m.dtype = n["dtype"].as_enum(parse_data_type, data_type_names());
  m.rank = static_cast<int>(n["rank"].as_int64(0, 16));
  m.global_address = n["base"].as_uint64();
  const bool regular = rank_is_regular(m.rank);
  const size_t r = static_cast<size_t>(m.rank);
  const size_t lo = regular ? r : 0, hi = regular ? r : 16;
  const size_t slo = regular ? r - 1 : 0, shi = regular ? r - 1 : 16;
  copy_prefix(m.dims, n["dims"].as_uint64_list(lo, hi));
  copy_prefix(m.strides, n["strides"].as_uint64_list(slo, shi));
  const bool tiled_like = m.mode == TensorMode::tiled || m.mode == TensorMode::gather4;
  if (tiled_like) copy_prefix(m.box, n["box"].as_uint64_list(lo, hi, 0, UINT32_MAX));
  m.element_strides = {1, 1, 1, 1, 1};
  copy_prefix(m.element_strides, n["element_strides"].as_uint64_list(lo, hi, 0, UINT32_MAX));
  read_map_options(n, m);
  if (!tiled_like) {
    // im2col family: one corner per spatial dimension (W, H, D); the wide modes take W only.
    const bool wide = m.mode == TensorMode::im2col_w || m.mode == TensorMode::im2col_w128;
    const size_t nsp = wide ? 1 : (regular && r >= 3 ? r - 2 : 0);
    const size_t clo = (regular && r >= 3) ? nsp : 0, chi = (regular && r >= 3) ? nsp : 3;
    copy_prefix(m.lower_corner, n["lower_corner"].as_int64_list(clo, chi, INT32_MIN, INT32_MAX));
    copy_prefix(m.upper_corner, n["upper_corner"].as_int64_list(clo, chi, INT32_MIN, INT32_MAX));
    m.channels_per_pixel = static_cast<uint32_t>(n["channels_per_pixel"].as_uint64(0, UINT32_MAX));
    m.pixels_per_column = static_cast<uint32_t>(
        m.mode == TensorMode::im2col_w128 ? n["pixels_per_column"].as_uint64_or(128, 0, UINT32_MAX)
                                          : n["pixels_per_column"].as_uint64(0, UINT32_MAX));
  }
  return m;
}

TmaOp read_op(const YamlField& n, const TensorMap& m, const std::vector<std::string>& extra_keys) {
  std::vector<std::string> keys = {"kind", "coords", "im2col_offsets", "w_halo", "w_offset", "smem_addr"};
  keys.insert(keys.end(), extra_keys.begin(), extra_keys.end());
  n.check_keys(keys);
  TmaOp op;
  const std::string kind = n["kind"].as_string();
  if (!parse_op_name(kind, op.kind, op.reduce))
    throw n["kind"].error("expected one of: " + op_names() + "; got '" + kind + "'");
  const bool regular = rank_is_regular(m.rank);
  size_t ncoords = regular ? static_cast<size_t>(m.rank) : 0;
  if (m.mode == TensorMode::gather4) ncoords = 5;  // column + four rows
  copy_prefix(op.coords, n["coords"].as_int64_list(ncoords, regular ? ncoords : 16, INT32_MIN, INT32_MAX));
  if (m.mode == TensorMode::im2col) {
    const size_t nsp = regular && m.rank >= 3 ? static_cast<size_t>(m.rank - 2) : 0;
    copy_prefix(op.im2col_offsets,
                n["im2col_offsets"].as_int64_list(nsp, regular && m.rank >= 3 ? nsp : 3, 0, UINT16_MAX));
  }
  if (m.mode == TensorMode::im2col_w || m.mode == TensorMode::im2col_w128) {
    op.w_halo = static_cast<uint16_t>(n["w_halo"].as_uint64_or(0, 0, UINT16_MAX));
    op.w_offset = static_cast<uint16_t>(n["w_offset"].as_uint64_or(0, 0, UINT16_MAX));
  }
  op.smem_addr = static_cast<uint32_t>(n["smem_addr"].as_uint64_or(0, 0, UINT32_MAX));
  return op;
}

}  // namespace tma
