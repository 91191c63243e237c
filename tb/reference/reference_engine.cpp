#include "tma/reference/reference_engine.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>

#include "tma/descriptor/descriptor_validation.h"
#include "tma/descriptor/element_ops.h"

// Sources: the sm_90 forms follow the silicon golden cases (tests/golden/silicon*). The Blackwell-only
// forms (sm_100: im2col::w, im2col::w::128, gather4/scatter4, sub-byte types, 96B swizzle, swizzle
// atomicities) have no silicon here and are modelled from PTX ISA 5.5 (seed 001) and the driver
// documentation; docs/blackwell-forms.md gives each reading and the text it rests on.

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
  // bits (PTX ISA 5.5.7 tables, expressed on absolute shared-memory addresses, so a destination
  // that is not aligned to the pattern's repeat starts at the "base offset" row of the table).
  const uint32_t line = a >> 7;
  switch (mode) {
    case SwizzleMode::none: return a;
    // 96B has the 32B table (rows 1 0 3 2 ..., repeat 256 bytes); only its row span differs (96 bytes).
    case SwizzleMode::b32:
    case SwizzleMode::b96: return a ^ ((line & 1u) << 4);
    case SwizzleMode::b64: return a ^ ((line & 3u) << 4);
    case SwizzleMode::b128:
      switch (atom) {
        case SwizzleAtom::b16: return a ^ ((line & 7u) << 4);
        case SwizzleAtom::b32: return a ^ ((line & 3u) << 5);
        // "a flip of adjacent 8-bytes within the 16-byte data at every alternate shared memory line":
        // the odd lines, so line 0 matches the plain 32B-atom pattern.
        case SwizzleAtom::b32_flip_8b: return a ^ ((line & 3u) << 5) ^ ((line & 1u) << 3);
        case SwizzleAtom::b64: return a ^ ((line & 1u) << 6);
      }
  }
  return a;
}

namespace {

using Coords = std::array<int64_t, kMaxRank>;

OpResult fault(std::string why) {
  OpResult r;
  r.outcome = Outcome::fault;
  r.reason = std::move(why);
  return r;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

bool in_image(const std::vector<uint8_t>& v, uint64_t off, uint64_t n) { return off <= v.size() && n <= v.size() - off; }

// ---------------------------------------------------------------- dimension-0 units

// What dimension 0 is copied in. One element; with interleave one 16- or 32-byte slice (silicon: an
// interleaved box row is box[0] slices, read contiguously; golden t0269, t0301); for the sub-byte types
// one group of 16 elements (PTX 5.5.1.1), `global_bytes` long in global memory and `smem_bytes` in
// shared memory. Only the first global_bytes of a shared-memory unit are data: the rest is the
// padding of b4x16_p64 / b6x16_p32, which a load leaves "un-initialized" (not written).
struct Unit {
  uint32_t elements = 1;  // dimension-0 coordinates one unit covers
  uint32_t global_bytes = 1;
  uint32_t smem_bytes = 1;
};

Unit type_unit(DataType t) { return {elements_per_unit(t), element_bytes(t), smem_unit_bytes(t)}; }

Unit dim0_unit(const TensorMap& m) {
  switch (m.interleave) {
    case Interleave::b16: return {1, 16, 16};
    case Interleave::b32: return {1, 32, 32};
    case Interleave::none: break;
  }
  return type_unit(m.dtype);
}

// Dimension 0 must start on a 16-byte boundary of the global row (sm_90 traps otherwise). For the
// sub-byte types the start must also be a whole 16-element unit (assumed; no silicon).
bool dim0_start_aligned(const TensorMap& m, int64_t c0) {
  const Unit u = type_unit(m.dtype);
  return c0 % u.elements == 0 && (c0 / u.elements * u.global_bytes) % 16 == 0;
}

std::string misaligned_dim0(const TensorMap& m, int64_t c0, const char* what) {
  return std::string(what) + " in dimension 0 (" + std::to_string(c0) + " x " + std::to_string(element_bytes(m.dtype)) +
         (is_sub_byte(m.dtype) ? "/16" : "") + " bytes) is not 16-byte aligned";
}

// Byte offset of the unit starting at `x` in the global image, or -1 when it starts outside the tensor.
// An address at or past 2^63 (coordinates x strides can also pass 2^64, and would wrap to a small
// offset) is INT64_MAX: outside any image, so the access faults instead of reading another byte.
int64_t unit_offset(const TensorMap& m, const Unit& u, const Coords& x) {
  for (int i = 0; i < m.rank; ++i)
    if (x[i] < 0 || static_cast<uint64_t>(x[i]) >= m.dims[i]) return -1;
  uint64_t off = m.global_address;
  for (int i = 0; i < m.rank; ++i) {
    uint64_t step = static_cast<uint64_t>(x[0]) / u.elements * u.global_bytes;
    if (i > 0 && __builtin_mul_overflow(static_cast<uint64_t>(x[i]), m.strides[i - 1], &step)) return INT64_MAX;
    if (__builtin_add_overflow(off, step, &off)) return INT64_MAX;
  }
  return off > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(off);
}

// The data bytes of the unit at `x` as a load delivers them (u.global_bytes into `value`): converted,
// or the out-of-bound fill. A b4x16 unit can straddle the end of dimension 0 (globalDim[0] need only be
// even): its elements past the end read as zero. Returns false when the read leaves the global image.
bool read_unit(const TensorMap& m, const Unit& u, const Coords& x, const std::vector<uint8_t>& global,
               uint8_t* value) {
  const int64_t g = unit_offset(m, u, x);
  if (g < 0) {
    if (is_sub_byte(m.dtype)) {
      std::memset(value, 0, u.global_bytes);  // NaN fill is refused for the sub-byte types
    } else {
      for (uint32_t i = 0; i < u.global_bytes; i += element_bytes(m.dtype)) oob_fill_element(m.dtype, m.oob_fill, value + i);
    }
    return true;
  }
  if (is_sub_byte(m.dtype)) {
    const uint64_t left = m.dims[0] - static_cast<uint64_t>(x[0]);
    const uint32_t n = left < u.elements ? static_cast<uint32_t>(left * u.global_bytes / u.elements) : u.global_bytes;
    if (!in_image(global, g, n)) return false;
    std::memcpy(value, &global[g], n);  // packed data is copied as is
    std::memset(value + n, 0, u.global_bytes - n);
    return true;
  }
  if (!in_image(global, g, u.global_bytes)) return false;
  for (uint32_t i = 0; i < u.global_bytes; i += element_bytes(m.dtype)) load_convert(m.dtype, &global[g + i], value + i);
  return true;
}

// ---------------------------------------------------------------- shared-memory rows

// Where rows go in shared memory: row r at base + r * pitch, each byte through the swizzle.
struct SmemLayout {
  uint32_t base = 0;
  uint32_t pitch = 0;
  SwizzleMode mode = SwizzleMode::none;
  SwizzleAtom atom = SwizzleAtom::b16;
  uint32_t address(uint64_t row, uint32_t byte_in_row) const {
    return reference_swizzle(mode, atom, static_cast<uint32_t>(base + row * pitch + byte_in_row));
  }
};

// A row is padded to the swizzle span when narrower (96 for the 96B swizzle: dense 96-byte rows).
// Interleaved rows are not padded (silicon: t0315, t0316 pack 16-byte rows under a 128B swizzle).
SmemLayout smem_layout(const TensorMap& m, uint32_t base, uint32_t row_bytes) {
  const uint32_t span = m.interleave == Interleave::none ? swizzle_span(m.swizzle) : 0;
  return {base, (span && row_bytes < span) ? span : row_bytes, m.swizzle, m.swizzle_atom};
}

// A swizzle moves bytes within their 128-byte line, so with one the last line must fit whole
// (an interleaved row is not padded to the span: its bytes can move past the rows' end).
bool fits(const std::vector<uint8_t>& smem, const SmemLayout& lay, uint64_t rows) {
  const uint64_t end = lay.base + rows * lay.pitch;
  return (lay.mode == SwizzleMode::none ? end : (end + 127) / 128 * 128) <= smem.size();
}

// ---------------------------------------------------------------- tiled and gather4 boxes

// The box as rows of dimension-0 units. Tiled: one row per combination of the outer coordinates.
// gather4/scatter4: four rows, one per row coordinate of the instruction.
struct BoxShape {
  std::array<uint64_t, kMaxRank> count{};  // units (dim 0) or rows (dims >= 1) traversed per dimension
  std::array<uint64_t, kMaxRank> step{};   // coordinate step per dimension
  uint64_t rows = 1;
};

// Without interleave, dimension 0 steps one unit (its element stride is ignored, as the driver
// documents). With interleave it steps by its element stride, and dimension rank-2 (the slice-group
// dimension of NC/xHWCx) is not traversed: only its start coordinate is used (silicon: tx and layout of
// every interleaved golden case).
BoxShape box_shape(const TensorMap& m) {
  BoxShape b;
  const bool il = m.interleave != Interleave::none;
  b.step[0] = il ? m.element_strides[0] : dim0_unit(m).elements;
  b.count[0] = ceil_div(m.box[0], b.step[0]);
  if (m.mode == TensorMode::gather4) {
    b.rows = 4;
    return b;
  }
  for (int i = 1; i < m.rank; ++i) {
    b.step[i] = m.element_strides[i];
    b.count[i] = (il && i == m.rank - 2) ? 1 : ceil_div(m.box[i], m.element_strides[i]);
    b.rows *= b.count[i];
  }
  return b;
}

// Coordinates of the first unit of box row `row` (rows in shared-memory order, dimension 1 fastest).
Coords row_origin(const TensorMap& m, const TmaOp& op, const BoxShape& b, uint64_t row) {
  Coords x{};
  x[0] = op.coords[0];
  if (m.mode == TensorMode::gather4) {
    x[1] = op.coords[1 + row];  // coords[1..4]: the four rows
    return x;
  }
  for (int i = 1; i < m.rank; ++i) {
    x[i] = static_cast<int64_t>(op.coords[i]) + static_cast<int64_t>((row % b.count[i]) * b.step[i]);
    row /= b.count[i];
  }
  return x;
}

// The swizzle XORs an address with a function of its 128-byte line alone (reference_swizzle), so
// one mask per line places every byte of it: swizzled(a) = a ^ line_mask(a >> 7).
uint32_t line_mask(const SmemLayout& lay, uint32_t line) {
  return reference_swizzle(lay.mode, lay.atom, line << 7) ^ (line << 7);
}

// Copies one box row of `n` bytes (unconverted units, n and the row's start multiples of 16) to its
// swizzled place: a row without swizzle is one copy; else one copy per 16-byte cell (8 bytes where
// the mask has bit 3, the 8-byte-flip atom), each cell at its XORed address within its line.
void copy_row(const uint8_t* src, uint32_t n, const SmemLayout& lay, uint64_t row, uint8_t* smem) {
  const uint32_t start = static_cast<uint32_t>(lay.base + row * lay.pitch);
  if (lay.mode == SwizzleMode::none) {
    std::memcpy(smem + start, src, n);
    return;
  }
  for (uint32_t a = start, end = start + n; a < end;) {
    const uint32_t line_end = std::min((a | 127u) + 1, end), mask = line_mask(lay, a >> 7);
    if (mask & 15u)
      for (; a < line_end; a += 8, src += 8) std::memcpy(smem + (a ^ mask), src, 8);
    else
      for (; a < line_end; a += 16, src += 16) std::memcpy(smem + (a ^ mask), src, 16);
  }
}

// The whole-row fast path reads rows ahead of the one it copies, so that their misses in the host's
// caches overlap: rows of a box are a stride apart (a tile's rows are each in another page), which
// the host's prefetcher does not follow. About 2 KB ahead, 1 to 16 rows (for the bench's 128-byte
// rows 12 to 24 rows ahead measured alike, 8 and 32 slower).
constexpr uint32_t kAheadRows = 16;

void prefetch_bytes(const uint8_t* p, uint32_t n) {
  for (uint32_t i = 0; i < n; i += 64) __builtin_prefetch(p + i);
  __builtin_prefetch(p + n - 1);
}

OpResult box_load(const TensorMap& m, const TmaOp& op, const std::vector<uint8_t>& global,
                  std::vector<uint8_t>& smem, bool fast_paths) {
  const Unit u = dim0_unit(m);
  const BoxShape b = box_shape(m);
  const uint32_t row_bytes = static_cast<uint32_t>(b.count[0] * u.smem_bytes);
  const SmemLayout lay = smem_layout(m, op.smem_addr, row_bytes);
  if (!fits(smem, lay, b.rows)) return fault("box does not fit in shared memory");
  std::array<uint8_t, 32> value{};
  // Plain element types (no interleave, no sub-byte units, no tf32 rounding) are copied as they are,
  // which the two shortcuts below rely on.
  const bool plain = fast_paths && m.interleave == Interleave::none && !is_sub_byte(m.dtype) &&
                     m.dtype != DataType::tf32 && m.dtype != DataType::tf32_ftz;
  // Whole rows: a row whose units all lie inside the tensor (and the image) is row_bytes contiguous
  // bytes of global memory, copied by copy_row. whole[] holds, for the next rows, the offset of their
  // first byte or -1 (the row takes the paths below).
  const bool whole_rows = plain && row_bytes % 16 == 0 && lay.pitch % 16 == 0;
  const uint32_t ahead = std::max(1u, std::min(kAheadRows, 2048 / std::max(row_bytes, 1u)));
  std::array<int64_t, kAheadRows> whole{};
  auto plan = [&](uint64_t row) {
    int64_t g = -1;
    Coords x = row_origin(m, op, b, row);
    if (x[0] >= 0 && static_cast<uint64_t>(x[0]) + b.count[0] <= m.dims[0]) {
      g = unit_offset(m, u, x);  // -1 when a higher coordinate is outside
      if (g >= 0 && in_image(global, static_cast<uint64_t>(g), row_bytes))
        prefetch_bytes(&global[static_cast<uint64_t>(g)], row_bytes);
      else
        g = -1;  // the unit path reports the fault where it is
    }
    whole[row % kAheadRows] = g;
  };
  if (whole_rows)
    for (uint64_t row = 0; row < std::min<uint64_t>(ahead, b.rows); ++row) plan(row);
  // A 16-byte chunk of a partial row whose elements are all inside the tensor is one copy to its
  // swizzled cell (swizzles move whole 16-byte cells; the 8-byte-flip atom moves halves, so it takes
  // the unit path).
  const bool chunked = plain && m.swizzle_atom != SwizzleAtom::b32_flip_8b;
  const uint32_t e = u.global_bytes;
  for (uint64_t row = 0; row < b.rows; ++row) {
    if (whole_rows) {
      const int64_t g = whole[row % kAheadRows];
      if (row + ahead < b.rows) plan(row + ahead);
      if (g >= 0) {
        copy_row(&global[static_cast<uint64_t>(g)], row_bytes, lay, row, smem.data());
        continue;
      }
    }
    Coords x = row_origin(m, op, b, row);
    const int64_t x0 = x[0];
    // The shortcut's view of the row: where element 0 of the row would be, and the elements of
    // dimension 0 inside the tensor, [lo, hi); none when the row is outside in a higher dimension.
    int64_t row_base = -1, lo = 0, hi = 0;
    if (chunked) {
      x[0] = 0;
      row_base = unit_offset(m, u, x);
      lo = std::max<int64_t>(0, x0);
      hi = std::min<int64_t>(static_cast<int64_t>(m.dims[0]), x0 + static_cast<int64_t>(b.count[0]));
    }
    uint32_t k0 = 0;
    while (k0 < b.count[0]) {
      const int64_t first = x0 + k0, last = first + 16 / e - 1;
      if (row_base >= 0 && (k0 * e) % 16 == 0 && first >= lo && last < hi) {
        const uint64_t g = static_cast<uint64_t>(row_base) + static_cast<uint64_t>(first) * e;
        if (!in_image(global, g, 16)) return fault("global access outside the memory image");
        std::memcpy(&smem[lay.address(row, k0 * e)], &global[g], 16);
        k0 += 16 / e;
        continue;
      }
      x[0] = x0 + static_cast<int64_t>(k0 * b.step[0]);
      if (!read_unit(m, u, x, global, value.data())) return fault("global access outside the memory image");
      for (uint32_t i = 0; i < u.global_bytes; ++i) smem[lay.address(row, k0 * u.smem_bytes + i)] = value[i];
      ++k0;
    }
  }
  OpResult r;
  // tx counts the whole shared-memory footprint of the units, sub-byte padding included (see the doc).
  r.tx_bytes = static_cast<uint32_t>(b.rows * b.count[0] * u.smem_bytes);
  return r;
}

// Stores and reductions clip dimension 0 at 16-byte chunks of the global row: a chunk that starts
// inside the tensor goes out whole (overwriting bytes past the row's end), one that starts past it
// does not. Unit k0 of the row belongs to the chunk holding its first byte.
bool chunk_starts_inside(const TensorMap& m, const TmaOp& op, const Unit& u, uint32_t k0) {
  const int64_t chunk_start = static_cast<int64_t>(k0) * u.global_bytes / 16 * 16;
  const int64_t inside_bytes =
      (static_cast<int64_t>(m.dims[0]) - op.coords[0]) * u.global_bytes / static_cast<int64_t>(u.elements);
  return chunk_start < inside_bytes;
}

OpResult box_store(const TensorMap& m, const TmaOp& op, std::vector<uint8_t>& global,
                   const std::vector<uint8_t>& smem) {
  const int ncoords = m.mode == TensorMode::gather4 ? 5 : m.rank;
  for (int i = 0; i < ncoords; ++i)
    if (op.coords[i] < 0) return fault("store or reduction with a negative coordinate (coordinate " +
                                       std::to_string(i) + ")");
  if (op.kind == OpKind::reduce && !reduce_supported(m.dtype, op.reduce))
    return fault("reduce." + to_string(op.reduce) + " is not supported on " + to_string(m.dtype));
  if (m.interleave != Interleave::none) return fault("interleaved stores are not modelled");
  const Unit u = dim0_unit(m);
  const BoxShape b = box_shape(m);
  const SmemLayout lay = smem_layout(m, op.smem_addr, static_cast<uint32_t>(b.count[0] * u.smem_bytes));
  if (!fits(smem, lay, b.rows)) return fault("box does not fit in shared memory");
  for (uint64_t row = 0; row < b.rows; ++row) {
    Coords x = row_origin(m, op, b, row);
    const int64_t x0 = x[0];
    x[0] = 0;
    const int64_t row_start = unit_offset(m, u, x);  // higher dimensions clip exactly
    if (row_start < 0) continue;
    for (uint32_t k0 = 0; k0 < b.count[0]; ++k0) {
      if (!chunk_starts_inside(m, op, u, k0)) continue;
      const uint64_t g = row_start + static_cast<uint64_t>(x0 / u.elements + k0) * u.global_bytes;
      if (!in_image(global, g, u.global_bytes)) return fault("global access outside the memory image");
      std::array<uint8_t, 16> value{};
      for (uint32_t i = 0; i < u.smem_bytes; ++i) value[i] = smem[lay.address(row, k0 * u.smem_bytes + i)];
      if (m.dtype == DataType::b6x16_p32)
        pack_b6p2x16(value.data(), &global[g]);
      else if (op.kind == OpKind::store)
        std::memcpy(&global[g], value.data(), u.global_bytes);
      else
        reduce_element(m.dtype, op.reduce, value.data(), &global[g]);
    }
  }
  return OpResult{};
}

// Directions the sub-byte types take (PTX 5.5.1.1 direction table; driver swizzle lists).
std::optional<std::string> sub_byte_direction_fault(const TensorMap& m, const TmaOp& op) {
  const bool load = op.kind == OpKind::load;
  if (m.dtype == DataType::b4x16_p64 && !load) return "b4x16_p64 is a load-only type";
  if (m.dtype == DataType::b6x16_p32 && load && m.swizzle_atom == SwizzleAtom::b64)
    return "b6x16_p32 with swizzle 128B_atom_64B is store-only (.b6p2x16)";
  return std::nullopt;
}

// ---------------------------------------------------------------- im2col family

// One shared-memory row of an im2col-family load: the coordinates (dimensions 1..rank-1) of the
// pixel whose channels it receives. Dimension 0 is set per channel.
using Pixel = Coords;

// sm_90 im2col: an odometer over (W, H, D) then N, W fastest, from the instruction's coordinates;
// each step adds the dimension's element stride, and a spatial position past its box end returns to
// the lower corner while the next dimension steps. The pixel read is at position + im2col offset.
std::vector<Pixel> im2col_pixels(const TensorMap& m, const TmaOp& op) {
  const int nsp = spatial_rank(m);
  const int n_dim = m.rank - 1;
  std::array<int64_t, 3> pos{};
  for (int s = 0; s < nsp; ++s) pos[s] = op.coords[s + 1];
  int64_t n = op.coords[n_dim];
  std::vector<Pixel> pixels;
  for (uint32_t pix = 0; pix < m.pixels_per_column; ++pix) {
    Pixel p{};
    for (int s = 0; s < nsp; ++s) p[s + 1] = pos[s] + op.im2col_offsets[s];
    p[n_dim] = n;
    pixels.push_back(p);
    int s = 0;
    for (; s < nsp; ++s) {
      pos[s] += m.element_strides[s + 1];
      if (pos[s] <= static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s]) break;
      pos[s] = m.lower_corner[s];
    }
    if (s == nsp) n += m.element_strides[n_dim];
  }
  return pixels;
}

// The W range of an im2col::w / ::w128 bounding box, both ends included, shifted by wOffset
// ("Bounding Box Lower Corner W += wOffset; Upper Corner W += wOffset; W += wOffset").
struct WideBox {
  int64_t lo, hi;
};
WideBox wide_box(const TensorMap& m, const TmaOp& op) {
  return {static_cast<int64_t>(m.lower_corner[0]) + op.w_offset,
          static_cast<int64_t>(m.dims[1]) - 1 + m.upper_corner[0] + op.w_offset};
}

// im2col::w and im2col::w::128 (reading of PTX 5.5.5 and its examples, docs/blackwell-forms.md):
// - H and D stay at the instruction's coordinates; the walk is the im2col odometer with W alone:
//   W starts at coords W + wOffset, steps by the W element stride, and past the box end returns to
//   the box's lower corner while N steps by its element stride;
// - the main pixels come in groups: one group of pixelsPerColumn (w) or four groups of 32 (w128);
// - after each group, wHalo halo pixels continue along W from the group's last pixel by the same stride,
//   in the same image and without returning to the lower corner (the filter's right-hand halo may lie
//   past the box); they take the shared-memory rows right after their group;
// - the next group continues the main walk where the previous group left it.
std::vector<Pixel> im2col_wide_pixels(const TensorMap& m, const TmaOp& op) {
  const int n_dim = m.rank - 1;
  const WideBox box = wide_box(m, op);
  const int64_t w_step = m.element_strides[1];
  const bool w128 = m.mode == TensorMode::im2col_w128;
  const uint32_t groups = w128 ? 4 : 1;
  const uint32_t group_pixels = w128 ? 32 : m.pixels_per_column;
  Pixel p{};
  for (int d = 1; d < n_dim; ++d) p[d] = op.coords[d];  // W, then the fixed H and D
  p[1] += op.w_offset;
  p[n_dim] = op.coords[n_dim];
  std::vector<Pixel> pixels;
  for (uint32_t g = 0; g < groups; ++g) {
    Pixel last = p;
    for (uint32_t i = 0; i < group_pixels; ++i) {
      pixels.push_back(p);
      last = p;
      p[1] += w_step;
      if (p[1] > box.hi) {
        p[1] = box.lo;
        p[n_dim] += m.element_strides[n_dim];
      }
    }
    for (uint32_t h = 1; h <= op.w_halo; ++h) {
      Pixel halo = last;
      halo[1] += static_cast<int64_t>(h) * w_step;
      pixels.push_back(halo);
    }
  }
  return pixels;
}

// Writes channels coords[0] .. + channelsPerPixel of each pixel into its row.
OpResult load_pixels(const TensorMap& m, const TmaOp& op, const std::vector<Pixel>& pixels,
                     const std::vector<uint8_t>& global, std::vector<uint8_t>& smem) {
  const Unit u = type_unit(m.dtype);
  const uint32_t units = static_cast<uint32_t>(ceil_div(m.channels_per_pixel, u.elements));
  const SmemLayout lay = smem_layout(m, op.smem_addr, units * u.smem_bytes);
  if (!fits(smem, lay, pixels.size())) return fault("pixels do not fit in shared memory");
  std::array<uint8_t, 16> value{};
  for (size_t row = 0; row < pixels.size(); ++row) {
    Coords x = pixels[row];
    for (uint32_t k = 0; k < units; ++k) {
      x[0] = static_cast<int64_t>(op.coords[0]) + static_cast<int64_t>(k) * u.elements;
      if (!read_unit(m, u, x, global, value.data())) return fault("global access outside the memory image");
      for (uint32_t i = 0; i < u.global_bytes; ++i) smem[lay.address(row, k * u.smem_bytes + i)] = value[i];
    }
  }
  OpResult r;
  r.tx_bytes = static_cast<uint32_t>(pixels.size() * units * u.smem_bytes);  // halo rows included
  return r;
}

OpResult im2col_load(const TensorMap& m, const TmaOp& op, const std::vector<uint8_t>& global,
                     std::vector<uint8_t>& smem) {
  if (!dim0_start_aligned(m, op.coords[0]))
    return fault("im2col channel start " + std::to_string(op.coords[0]) + " is not 16-byte aligned");
  // The filter base must lie inside the bounding box.
  for (int s = 0; s < spatial_rank(m); ++s) {
    const int64_t lo = m.lower_corner[s];
    const int64_t hi = static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s];
    if (op.coords[s + 1] < lo || op.coords[s + 1] > hi)
      return fault("im2col coordinate " + std::to_string(op.coords[s + 1]) + " of spatial dimension " +
                   std::to_string(s) + " is outside the bounding box [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
  }
  return load_pixels(m, op, im2col_pixels(m, op), global, smem);
}

OpResult im2col_wide_load(const TensorMap& m, const TmaOp& op, const std::vector<uint8_t>& global,
                          std::vector<uint8_t>& smem) {
  if (!dim0_start_aligned(m, op.coords[0]))
    return fault("im2col channel start " + std::to_string(op.coords[0]) + " is not 16-byte aligned");
  // "The first element can lie outside of the Bounding Box in the W-dimension only and only on the
  // left side": a start past the box's right end is refused like an im2col base outside the box.
  const WideBox box = wide_box(m, op);
  const int64_t w = static_cast<int64_t>(op.coords[1]) + op.w_offset;
  if (w > box.hi)
    return fault("im2col W coordinate " + std::to_string(w) + " (with wOffset) is right of the bounding box [" +
                 std::to_string(box.lo) + ", " + std::to_string(box.hi) + "]");
  return load_pixels(m, op, im2col_wide_pixels(m, op), global, smem);
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
  if (auto why = sub_byte_direction_fault(m, op)) return fault(*why);
  switch (m.mode) {
    case TensorMode::im2col:
      if (op.kind != OpKind::load) return fault("im2col stores are not modelled");
      return im2col_load(m, op, global, smem);
    case TensorMode::im2col_w:
    case TensorMode::im2col_w128:  // only sm_100 gets here: the sm_90 driver refuses the map
      if (op.kind != OpKind::load) return fault(to_string(m.mode) + " is a load-only mode");
      return im2col_wide_load(m, op, global, smem);
    case TensorMode::gather4:
      if (options.arch == GpuArch::sm90) return fault("tile::gather4/scatter4 is not an sm_90 instruction");
      if (op.kind == OpKind::reduce) return fault("cp.reduce.async.bulk.tensor has no tile::scatter4 form");
      break;
    case TensorMode::tiled: break;
  }
  if (m.interleave == Interleave::none && !dim0_start_aligned(m, op.coords[0]))
    return fault(misaligned_dim0(m, op.coords[0], "box start"));
  if (op.kind == OpKind::load) return box_load(m, op, global, smem, options.fast_paths);
  return box_store(m, op, global, smem);
}

}  // namespace tma
