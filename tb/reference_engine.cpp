#include "reference_engine.h"

#include <array>
#include <cstring>
#include <functional>

#include "descriptor_validation.h"
#include "element_ops.h"

namespace tma {

std::string to_string(Outcome o) {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::encode_error: return "encode_error";
    case Outcome::fault: return "fault";
  }
  return "?";
}

uint32_t reference_swizzle(SwizzleMode mode, SwizzleAtom atom, uint32_t a) {
  // Each pattern XORs the index of a unit inside a 128-byte line with the line number's low
  // bits (PTX ISA 5.5.7 tables, expressed on absolute shared-memory addresses).
  const uint32_t line = a >> 7;
  switch (mode) {
    case SwizzleMode::none: return a;
    case SwizzleMode::b32:
    case SwizzleMode::b96: return a ^ ((line & 1u) << 4);
    case SwizzleMode::b64: return a ^ ((line & 3u) << 4);
    case SwizzleMode::b128:
      switch (atom) {
        case SwizzleAtom::b16: return a ^ ((line & 7u) << 4);
        case SwizzleAtom::b32: return a ^ ((line & 3u) << 5);
        case SwizzleAtom::b32_flip_8b: return a ^ ((line & 3u) << 5) ^ ((line & 1u) << 3);
        case SwizzleAtom::b64: return a ^ ((line & 1u) << 6);
      }
  }
  return a;
}

namespace {

OpResult fault(std::string why) {
  OpResult r;
  r.outcome = Outcome::fault;
  r.reason = std::move(why);
  return r;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Where the box puts its rows in shared memory: one row per combination of the outer
// coordinates, each row `pitch` bytes (the inner bytes, padded to the swizzle span).
struct SmemLayout {
  uint32_t base = 0;
  uint32_t pitch = 0;
  SwizzleMode mode = SwizzleMode::none;
  SwizzleAtom atom = SwizzleAtom::b16;
  uint32_t address(uint64_t row, uint32_t byte_in_row) const {
    return reference_swizzle(mode, atom, static_cast<uint32_t>(base + row * pitch + byte_in_row));
  }
};

// Interleaved rows are not padded (silicon: t0315, t0316 pack 16-byte rows under a 128B swizzle).
uint32_t row_pitch(const TensorMap& m, uint32_t inner_bytes) {
  const uint32_t span = m.interleave == Interleave::none ? swizzle_span(m.swizzle) : 0;
  return (span && inner_bytes < span) ? span : inner_bytes;
}

// The unit dimension 0 counts in: one element, or with interleave one 16- or 32-byte slice
// (silicon: an interleaved box row is box[0] slices, read contiguously; golden t0269, t0301).
uint32_t dim0_unit_bytes(const TensorMap& m) {
  switch (m.interleave) {
    case Interleave::b16: return 16;
    case Interleave::b32: return 32;
    case Interleave::none: break;
  }
  return element_bytes(m.dtype);
}

// Byte offset of a unit in the global image, or -1 when it is outside the tensor.
int64_t unit_offset(const TensorMap& m, const std::array<int64_t, kMaxRank>& x) {
  uint64_t off = m.global_address;
  for (int i = 0; i < m.rank; ++i) {
    if (x[i] < 0 || static_cast<uint64_t>(x[i]) >= m.dims[i]) return -1;
    off += (i == 0 ? static_cast<uint64_t>(x[0]) * dim0_unit_bytes(m) : static_cast<uint64_t>(x[i]) * m.strides[i - 1]);
  }
  return static_cast<int64_t>(off);
}

bool in_image(const std::vector<uint8_t>& v, uint64_t off, uint64_t n) { return off <= v.size() && n <= v.size() - off; }

// ---------------------------------------------------------------- tiled loads and stores

struct TiledBox {
  std::array<uint64_t, kMaxRank> count{};  // units traversed per dimension
  std::array<uint64_t, kMaxRank> step{};   // coordinate step per dimension
  uint64_t rows = 1;                       // product of count[1..rank-1]
};

// Without interleave, dimension 0 steps by one element (its element stride is ignored, as the
// driver documents). With interleave it steps by its element stride, and dimension rank-2 (the
// slice-group dimension of NC/xHWCx) is not traversed: only its start coordinate is used
// (silicon: tx and layout of every interleaved golden case).
TiledBox tiled_box(const TensorMap& m) {
  TiledBox b;
  const bool il = m.interleave != Interleave::none;
  b.step[0] = il ? m.element_strides[0] : 1;
  b.count[0] = ceil_div(m.box[0], b.step[0]);
  for (int i = 1; i < m.rank; ++i) {
    b.step[i] = m.element_strides[i];
    b.count[i] = (il && i == m.rank - 2) ? 1 : ceil_div(m.box[i], m.element_strides[i]);
    b.rows *= b.count[i];
  }
  return b;
}

// Calls fn(row, k0, x) for every unit of the box, rows in shared-memory order.
void for_each_box_unit(const TensorMap& m, const TmaOp& op, const TiledBox& b,
                       const std::function<void(uint64_t, uint32_t, const std::array<int64_t, kMaxRank>&)>& fn) {
  std::array<uint64_t, kMaxRank> k{};
  for (uint64_t row = 0; row < b.rows; ++row) {
    std::array<int64_t, kMaxRank> x{};
    for (int i = 1; i < m.rank; ++i) x[i] = static_cast<int64_t>(op.coords[i]) + static_cast<int64_t>(k[i] * b.step[i]);
    for (uint32_t k0 = 0; k0 < b.count[0]; ++k0) {
      x[0] = static_cast<int64_t>(op.coords[0]) + static_cast<int64_t>(k0 * b.step[0]);
      fn(row, k0, x);
    }
    for (int i = 1; i < m.rank; ++i) {  // odometer, dimension 1 fastest
      if (++k[i] < b.count[i]) break;
      k[i] = 0;
    }
  }
}

// Reads one unit (element or slice) as a load delivers it: converted, or the fill.
void load_unit(const TensorMap& m, const uint8_t* src, uint8_t* dst) {
  const uint32_t e = element_bytes(m.dtype);
  for (uint32_t i = 0; i < dim0_unit_bytes(m); i += e) {
    if (src) load_convert(m.dtype, src + i, dst + i);
    else oob_fill_element(m.dtype, m.oob_fill, dst + i);
  }
}

OpResult tiled_load(const TensorMap& m, const TmaOp& op, const std::vector<uint8_t>& global,
                    std::vector<uint8_t>& smem) {
  const uint32_t u = dim0_unit_bytes(m);
  const TiledBox b = tiled_box(m);
  SmemLayout lay{op.smem_addr, row_pitch(m, static_cast<uint32_t>(b.count[0] * u)), m.swizzle, m.swizzle_atom};
  if (op.smem_addr + b.rows * lay.pitch > smem.size()) return fault("box does not fit in shared memory");
  OpResult r;
  r.tx_bytes = static_cast<uint32_t>(b.rows * b.count[0] * u);
  std::array<uint8_t, 32> value{};
  bool outside = false;
  for_each_box_unit(m, op, b, [&](uint64_t row, uint32_t k0, const std::array<int64_t, kMaxRank>& x) {
    const int64_t g = unit_offset(m, x);
    if (g >= 0 && !in_image(global, g, u)) {
      outside = true;
      return;
    }
    load_unit(m, g < 0 ? nullptr : &global[g], value.data());
    for (uint32_t i = 0; i < u; ++i) smem[lay.address(row, k0 * u + i)] = value[i];
  });
  if (outside) return fault("global access outside the memory image");
  return r;
}

// Stores and reductions clip dimension 0 at 16-byte chunks: a chunk that starts inside the
// tensor goes out whole (overwriting bytes past the row's end), one that starts past it does not.
bool chunk_starts_inside(const TensorMap& m, const TmaOp& op, uint32_t k0) {
  const uint32_t e = element_bytes(m.dtype);
  const uint64_t chunk_start_elem = static_cast<uint64_t>(op.coords[0]) + (k0 * e / 16) * 16 / e;
  return chunk_start_elem < m.dims[0];
}

OpResult tiled_store(const TensorMap& m, const TmaOp& op, std::vector<uint8_t>& global,
                     const std::vector<uint8_t>& smem) {
  for (int i = 0; i < m.rank; ++i)
    if (op.coords[i] < 0) return fault("store or reduction with a negative coordinate (dimension " +
                                       std::to_string(i) + ")");
  if (op.kind == OpKind::reduce && !reduce_supported(m.dtype, op.reduce))
    return fault("reduce." + to_string(op.reduce) + " is not supported on " + to_string(m.dtype));
  if (m.interleave != Interleave::none) return fault("interleaved stores are not modelled");
  const uint32_t e = element_bytes(m.dtype);
  const TiledBox b = tiled_box(m);
  SmemLayout lay{op.smem_addr, row_pitch(m, m.box[0] * e), m.swizzle, m.swizzle_atom};
  if (op.smem_addr + b.rows * lay.pitch > smem.size()) return fault("box does not fit in shared memory");
  bool outside = false;
  for_each_box_unit(m, op, b, [&](uint64_t row, uint32_t k0, const std::array<int64_t, kMaxRank>& x) {
    // higher dimensions clip exactly; dimension 0 by chunk
    std::array<int64_t, kMaxRank> xc = x;
    xc[0] = 0;
    if (unit_offset(m, xc) < 0 || !chunk_starts_inside(m, op, k0)) return;
    const uint64_t g = unit_offset(m, xc) + static_cast<uint64_t>(x[0]) * e;
    if (!in_image(global, g, e)) {
      outside = true;
      return;
    }
    std::array<uint8_t, 16> value{};
    for (uint32_t i = 0; i < e; ++i) value[i] = smem[lay.address(row, k0 * e + i)];
    if (op.kind == OpKind::store)
      std::memcpy(&global[g], value.data(), e);
    else
      reduce_element(m.dtype, op.reduce, value.data(), &global[g]);
  });
  if (outside) return fault("global access outside the memory image");
  return OpResult{};
}

// ---------------------------------------------------------------- im2col loads

OpResult im2col_load(const TensorMap& m, const TmaOp& op, const std::vector<uint8_t>& global,
                     std::vector<uint8_t>& smem) {
  const int nsp = spatial_rank(m);
  const int n_dim = m.rank - 1;
  const uint32_t e = element_bytes(m.dtype);
  const uint32_t cpp = m.channels_per_pixel;
  const uint32_t ppc = m.pixels_per_column;
  if ((static_cast<int64_t>(op.coords[0]) * e) % 16 != 0)
    return fault("im2col channel start " + std::to_string(op.coords[0]) + " is not 16-byte aligned");
  // The filter base must lie inside the bounding box.
  for (int s = 0; s < nsp; ++s) {
    const int64_t lo = m.lower_corner[s];
    const int64_t hi = static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s];
    if (op.coords[s + 1] < lo || op.coords[s + 1] > hi)
      return fault("im2col coordinate " + std::to_string(op.coords[s + 1]) + " of spatial dimension " +
                   std::to_string(s) + " is outside the bounding box [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
  }
  SmemLayout lay{op.smem_addr, row_pitch(m, cpp * e), m.swizzle, m.swizzle_atom};
  if (op.smem_addr + static_cast<uint64_t>(ppc) * lay.pitch > smem.size())
    return fault("pixels do not fit in shared memory");
  OpResult r;
  r.tx_bytes = ppc * cpp * e;
  std::array<int64_t, 3> pos{};
  for (int s = 0; s < nsp; ++s) pos[s] = op.coords[s + 1];
  int64_t n = op.coords[n_dim];
  std::array<uint8_t, 16> value{};
  for (uint32_t pix = 0; pix < ppc; ++pix) {
    std::array<int64_t, kMaxRank> x{};
    for (int s = 0; s < nsp; ++s) x[s + 1] = pos[s] + op.im2col_offsets[s];
    x[n_dim] = n;
    for (uint32_t c = 0; c < cpp; ++c) {
      x[0] = static_cast<int64_t>(op.coords[0]) + c;
      const int64_t g = unit_offset(m, x);
      if (g < 0) {
        oob_fill_element(m.dtype, m.oob_fill, value.data());
      } else if (!in_image(global, g, e)) {
        return fault("global access outside the memory image");
      } else {
        load_convert(m.dtype, &global[g], value.data());
      }
      for (uint32_t i = 0; i < e; ++i) smem[lay.address(pix, c * e + i)] = value[i];
    }
    // odometer over W, H, D, then N; a spatial position past its box end returns to the lower corner
    int s = 0;
    for (; s < nsp; ++s) {
      pos[s] += m.element_strides[s + 1];
      if (pos[s] <= static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s]) break;
      pos[s] = m.lower_corner[s];
    }
    if (s == nsp) n += m.element_strides[n_dim];
  }
  return r;
}

}  // namespace

OpResult reference_execute(const TensorMap& m, const TmaOp& op, std::vector<uint8_t>& global,
                           std::vector<uint8_t>& smem, const ReferenceOptions& options) {
  if (auto err = validate_tensor_map(m, options.arch)) {
    OpResult r;
    r.outcome = Outcome::encode_error;
    r.reason = err->rule + ": " + err->message;
    return r;
  }
  // The encoder takes a dimension of 2^32 elements, but an operation on it traps (t0474, t0478).
  for (int i = 0; i < m.rank; ++i)
    if (m.dims[i] >= (uint64_t{1} << 32))
      return fault("dimension " + std::to_string(i) + " has 2^32 elements: the TMA traps on it");
  if (op.kind == OpKind::prefetch) return OpResult{};
  if (op.smem_addr % 128 != 0)
    return fault("shared-memory address " + std::to_string(op.smem_addr) + " is not 128-byte aligned");
  if (m.mode == TensorMode::im2col) {
    if (op.kind != OpKind::load) return fault("im2col stores are not modelled");
    return im2col_load(m, op, global, smem);
  }
  if (m.mode == TensorMode::gather4 && options.arch == GpuArch::sm90)
    return fault("tile::gather4/scatter4 is not an sm_90 instruction");
  if (m.mode != TensorMode::tiled) return fault("mode " + to_string(m.mode) + " is not modelled yet");
  const uint32_t e = element_bytes(m.dtype);
  if (m.interleave == Interleave::none && (static_cast<int64_t>(op.coords[0]) * e) % 16 != 0)
    return fault("box start in dimension 0 (" + std::to_string(op.coords[0]) + " x " + std::to_string(e) +
                 " bytes) is not 16-byte aligned");
  if (op.kind == OpKind::load) return tiled_load(m, op, global, smem);
  return tiled_store(m, op, global, smem);
}

}  // namespace tma
