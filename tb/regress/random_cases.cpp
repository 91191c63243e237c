#include "tma/regress/random_cases.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "tma/descriptor/descriptor_validation.h"
#include "tma/descriptor/element_ops.h"
#include "tma/golden/golden_check.h"
#include "tma/regress/random_prng.h"

// The generator's space and constraints are described in docs/random-and-coverage.md; the section
// names there match the functions here (tiled, im2col, wide, gather4, stores, faults, invalid).

namespace tma {

namespace {

constexpr uint32_t kSmemCapacity = 228 * 1024;  // what check_case gives every case (and the H100/H200 SM)
constexpr uint64_t kTwo32 = uint64_t{1} << 32;
constexpr uint64_t kTwo40 = uint64_t{1} << 40;

using Swizzle = std::pair<SwizzleMode, SwizzleAtom>;

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
uint64_t round_up(uint64_t a, uint64_t b) { return ceil_div(a, b) * b; }
uint64_t gcd64(uint64_t a, uint64_t b) { return b == 0 ? a : gcd64(b, a % b); }

// Largest r with r^n <= v (v >= 1).
uint64_t iroot(uint64_t v, int n) {
  if (n <= 1) return v;
  uint64_t r = 1;
  for (;;) {
    uint64_t p = 1;
    bool over = false;
    for (int i = 0; i < n && !over; ++i) {
      p *= r + 1;
      over = p > v;
    }
    if (over) return r;
    ++r;
  }
}

bool packed16(DataType t) { return t == DataType::b4x16_p64 || t == DataType::b6x16_p32; }
bool is_wide(TensorMode m) { return m == TensorMode::im2col_w || m == TensorMode::im2col_w128; }
bool is_im2col_family(TensorMode m) { return m == TensorMode::im2col || is_wide(m); }

// Dimension-0 step (in elements) that keeps a start 16-byte aligned and made of whole units; the box
// and channel counts come in the same steps (boxDim[0] x elemsize a multiple of 16).
uint32_t granule(DataType t) {
  const uint32_t e = element_bytes(t);
  return static_cast<uint32_t>(16 / gcd64(16, e)) * elements_per_unit(t);
}
uint64_t global_row_bytes(DataType t, uint64_t elements) {
  return ceil_div(elements, elements_per_unit(t)) * element_bytes(t);
}
uint32_t smem_row_bytes(DataType t, uint64_t elements) {
  return static_cast<uint32_t>(ceil_div(elements, elements_per_unit(t)) * smem_unit_bytes(t));
}

const std::vector<DataType>& normal_dtypes() {
  static const std::vector<DataType> v = {DataType::u8,  DataType::u16, DataType::u32,     DataType::s32,
                                          DataType::u64, DataType::s64, DataType::f16,     DataType::f32,
                                          DataType::f64, DataType::bf16, DataType::f32_ftz, DataType::tf32,
                                          DataType::tf32_ftz};
  return v;
}
const std::vector<DataType>& sub_byte_dtypes() {
  static const std::vector<DataType> v = {DataType::b4x16, DataType::b4x16_p64, DataType::b6x16_p32};
  return v;
}

std::vector<Swizzle> arch_swizzles(GpuArch arch) {
  std::vector<Swizzle> v = {{SwizzleMode::none, SwizzleAtom::b16},
                            {SwizzleMode::b32, SwizzleAtom::b16},
                            {SwizzleMode::b64, SwizzleAtom::b16},
                            {SwizzleMode::b128, SwizzleAtom::b16}};
  if (arch == GpuArch::sm100) {
    v.push_back({SwizzleMode::b96, SwizzleAtom::b16});
    v.push_back({SwizzleMode::b128, SwizzleAtom::b32});
    v.push_back({SwizzleMode::b128, SwizzleAtom::b32_flip_8b});
    v.push_back({SwizzleMode::b128, SwizzleAtom::b64});
  }
  return v;
}

// Patterns the encoder accepts for the type (and mode), from descriptor_validation.cpp's lists.
bool swizzle_allowed(const Swizzle& s, DataType t, TensorMode mode) {
  auto is = [&](SwizzleMode m, SwizzleAtom a) { return s.first == m && s.second == a; };
  if (is_wide(mode) && !(is(SwizzleMode::b64, SwizzleAtom::b16) || is(SwizzleMode::b128, SwizzleAtom::b16) ||
                         is(SwizzleMode::b128, SwizzleAtom::b32)))
    return false;
  if (t == DataType::b4x16_p64)
    return is(SwizzleMode::none, SwizzleAtom::b16) || is(SwizzleMode::b128, SwizzleAtom::b16) ||
           is(SwizzleMode::b128, SwizzleAtom::b32);
  if (t == DataType::b6x16_p32)
    return is(SwizzleMode::none, SwizzleAtom::b16) || is(SwizzleMode::b128, SwizzleAtom::b16) ||
           is(SwizzleMode::b128, SwizzleAtom::b32) || is(SwizzleMode::b128, SwizzleAtom::b64);
  return true;
}

DataType same_size_integer(DataType t) {
  switch (element_bytes(t)) {
    case 1: return DataType::u8;
    case 2: return DataType::u16;
    case 4: return DataType::u32;
    default: return DataType::u64;
  }
}

std::string pad_index(uint64_t index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06llu", static_cast<unsigned long long>(index));
  return buf;
}

// What the generator builds before the reference engine fills in the expectations.
struct Draft {
  TensorMap map;
  TmaOp op;
  uint64_t global_size = 4096;
  uint64_t extent = 0;     // bytes from the base that in-bound elements span (stores: + the chunk overrun)
  uint64_t footprint = 0;  // shared-memory bytes of the box from smem_addr (rows x pitch)
  uint32_t smem_fill_seed = 0;
  std::string intent = "valid";
};

// Options of one draft. Unset fields are drawn.
struct Knobs {
  int rank = 0;
  std::optional<DataType> dtype;
  std::optional<Swizzle> swizzle;
  int interleave = -1;  // -1 drawn, else the Interleave value
  OpKind kind = OpKind::load;
  bool sub_byte_ok = false;  // the draw may pick a sub-byte type
  bool extremes_ok = true;   // tiled: sometimes a huge dimension or stride, or a far coordinate
};

// How a dimension's accessed range [c, c + span) sits against [0, dim).
enum class Side { none, low, high, both, outside };

class Generator {
 public:
  Generator(uint64_t seed, uint64_t index, const RandomOptions& opt) : r_(seed, index), opt_(opt) {}

  Draft make() {
    const bool bw = opt_.arch == GpuArch::sm100 && opt_.blackwell_forms;
    // tiled, interleaved, im2col, store, reduce, prefetch, invalid, fault, wide, gather4
    const std::vector<uint32_t> weights = {28, 7, 16, 8, 10, 5, 12, 10, bw ? 8u : 0u, bw ? 7u : 0u};
    switch (r_.weighted(weights)) {
      case 0: return tiled(knobs(OpKind::load));
      case 1: {
        Knobs k = knobs(OpKind::load);
        k.rank = static_cast<int>(r_.range(3, 5));
        k.interleave = static_cast<int>(r_.range(1, 2));
        return tiled(k);
      }
      case 2: return im2col(knobs(OpKind::load));
      case 3: return tiled(knobs(OpKind::store));
      case 4: return reduction(r_.chance(35));
      case 5: {
        Knobs k = knobs(OpKind::prefetch);
        return r_.chance(70) ? tiled(k) : im2col(k);
      }
      case 6: return invalid();
      case 7: return fault();
      case 8: return wide(knobs(OpKind::load));
      default: {
        Knobs k = knobs(r_.chance(60) ? OpKind::load : OpKind::store);
        return gather4(k);
      }
    }
  }

 private:
  Knobs knobs(OpKind kind) const {
    Knobs k;
    k.kind = kind;
    k.sub_byte_ok = opt_.arch == GpuArch::sm100 && opt_.blackwell_forms;
    return k;
  }

  bool is_load_like(OpKind k) const { return k == OpKind::load || k == OpKind::prefetch; }

  DataType pick_dtype(const Knobs& k) {
    if (k.dtype) return *k.dtype;
    if (k.sub_byte_ok && k.interleave <= 0 && r_.chance(15)) {
      for (;;) {
        const DataType t = r_.pick(sub_byte_dtypes());
        if (t == DataType::b4x16_p64 && k.kind == OpKind::store) continue;  // a load-only type
        return t;
      }
    }
    return r_.pick(normal_dtypes());
  }

  Swizzle pick_swizzle(const Knobs& k, DataType t, TensorMode mode) {
    if (k.swizzle) return *k.swizzle;
    std::vector<Swizzle> ok;
    for (const Swizzle& s : arch_swizzles(opt_.arch)) {
      if (!swizzle_allowed(s, t, mode)) continue;
      // b6x16_p32 with 128B_atom_64B is store-only (a load faults): valid loads avoid it.
      if (t == DataType::b6x16_p32 && s.second == SwizzleAtom::b64 && k.kind != OpKind::store) continue;
      ok.push_back(s);
    }
    if (is_wide(mode) && opt_.arch == GpuArch::sm90) ok = {{SwizzleMode::b64, SwizzleAtom::b16}, {SwizzleMode::b128, SwizzleAtom::b16}};
    return r_.pick(ok);
  }

  uint32_t pick_estride() { return r_.chance(65) ? 1 : static_cast<uint32_t>(r_.range(2, 8)); }

  L2Promotion pick_l2() { return static_cast<L2Promotion>(r_.range(0, 3)); }
  OobFill pick_fill(DataType t) { return is_float(t) && r_.chance(40) ? OobFill::nan : OobFill::zero; }

  // A dimension of at most `cap` positions and a start such that the accessed range [c, c + span) has
  // the drawn relation to the tensor. Without negatives (stores) only none, high and outside.
  std::pair<uint64_t, int64_t> dim_and_coord(uint64_t span, uint64_t cap, bool negatives) {
    span = std::max<uint64_t>(span, 1);
    cap = std::max<uint64_t>(cap, 1);
    const int64_t s = static_cast<int64_t>(span), cp = static_cast<int64_t>(std::min<uint64_t>(cap, 1u << 30));
    const std::vector<uint32_t> w = {40, negatives ? 14u : 0u, 16, negatives ? 10u : 0u, 12};
    for (int attempt = 0; attempt < 4; ++attempt) {
      switch (static_cast<Side>(r_.weighted(w))) {
        case Side::none: {
          if (s > cp) break;
          const int64_t dim = s + r_.range(0, std::min<int64_t>(cp - s, r_.chance(50) ? 3 : cp - s));
          return {static_cast<uint64_t>(dim), r_.range(0, dim - s)};
        }
        case Side::low: {
          if (s < 2) break;
          const int64_t c = r_.range(-(s - 1), std::min<int64_t>(-1, cp - s));
          if (s + c > cp) break;
          const int64_t dim = r_.range(s + c, std::min<int64_t>(cp, s + c + 4));
          return {static_cast<uint64_t>(dim), c};
        }
        case Side::high: {
          if (s < 2) break;
          const int64_t dim = r_.range(1, std::min<int64_t>(cp, s + 4));
          return {static_cast<uint64_t>(dim), r_.range(std::max<int64_t>(0, dim - s + 1), dim - 1)};
        }
        case Side::both: {
          if (s < 3) break;
          const int64_t dim = r_.range(1, std::min<int64_t>(cp, s - 2));
          return {static_cast<uint64_t>(dim), r_.range(dim - s + 1, -1)};
        }
        case Side::outside: break;
      }
    }
    const int64_t dim = r_.range(1, std::min<int64_t>(cp, s + 4));
    if (negatives && r_.chance(50)) return {static_cast<uint64_t>(dim), -s - r_.range(0, 3)};
    return {static_cast<uint64_t>(dim), dim + r_.range(0, 3)};
  }

  // Shared-memory address for a box of `footprint` bytes: 128-aligned, mostly in the first 8 KB (every
  // phase of the 1024-byte pattern), sometimes anywhere, sometimes the highest address that fits.
  uint32_t pick_smem(uint64_t footprint) {
    const uint64_t room = footprint >= kSmemCapacity ? 0 : (kSmemCapacity - footprint) / 128;
    switch (r_.weighted({88, 7, 5})) {
      case 0: return static_cast<uint32_t>(128 * r_.range(0, static_cast<int64_t>(std::min<uint64_t>(63, room))));
      case 1: return static_cast<uint32_t>(128 * r_.range(0, static_cast<int64_t>(room)));
      default: return static_cast<uint32_t>(128 * room);
    }
  }

  // Strides (dense rows padded to `align`, a little slack per dimension) and base; then the image
  // covering every row up to position top[i] of each dimension i >= 1 (the whole tensor by default).
  void layout(Draft& d, uint64_t row0_bytes, uint64_t align) {
    TensorMap& m = d.map;
    uint64_t stride = round_up(std::max<uint64_t>(row0_bytes, 1), align) + align * r_.pick<uint64_t>({0, 0, 0, 1, 2, 3});
    for (int i = 1; i < m.rank; ++i) {
      m.strides[i - 1] = stride;
      stride = stride * m.dims[i] + align * r_.pick<uint64_t>({0, 0, 0, 1});
    }
    m.global_address = align * static_cast<uint64_t>(r_.range(0, 64));
    std::array<uint64_t, kMaxRank> top{};
    for (int i = 1; i < m.rank; ++i) top[i] = m.dims[i] - 1;
    size_image(d, row0_bytes, top);
  }
  void size_image(Draft& d, uint64_t row0_bytes, const std::array<uint64_t, kMaxRank>& top) {
    const TensorMap& m = d.map;
    uint64_t extent = row0_bytes + 32;  // stores may write the 16-byte chunk that straddles the row end
    for (int i = 1; i < m.rank; ++i) extent += top[i] * m.strides[i - 1];
    d.extent = extent;
    d.global_size = round_up(m.global_address + extent + 256, 4096);
  }

  // Tiled boxes at the edges of the encodable ranges, on the outermost dimension (nothing else's
  // stride depends on it): a dimension of 2^31..2^32-1 elements, a stride just below 2^40 over a
  // one-element dimension, or a start coordinate near -2^31 or 2^31 in any dimension.
  void extremes(Draft& d, const std::array<uint64_t, kMaxRank>& spans, uint64_t align, bool negatives) {
    TensorMap& m = d.map;
    const int last = m.rank - 1;
    int which = static_cast<int>(r_.range(0, 3));
    // A huge dimension must not let the box touch more rows than the image was budgeted for: only when
    // the box fits the original extent, and with the start moved inside it.
    if (which <= 1 && (last < 1 || spans[last] > m.dims[last])) which = 3;
    if (which <= 1)
      d.op.coords[last] = static_cast<int32_t>(std::min<int64_t>(
          d.op.coords[last], static_cast<int64_t>(m.dims[last]) - static_cast<int64_t>(spans[last])));
    switch (which) {
      case 0:
        m.dims[last] = static_cast<uint64_t>(r_.range(int64_t{1} << 31, (int64_t{1} << 32) - 2));
        break;
      case 1:
        m.dims[last] = kTwo32 - 1;
        break;
      case 2:
        if (last >= 1) {
          m.dims[last] = 1;
          d.op.coords[last] = 0;
          m.strides[last - 1] = (kTwo40 - 1 - static_cast<uint64_t>(r_.range(0, 1 << 20))) / align * align;
        }
        break;
      default: {
        const int i = static_cast<int>(r_.range(0, last));
        const uint64_t g = (i == 0 && m.interleave == Interleave::none) ? granule(m.dtype) : 1;
        const int64_t far = (int64_t{1} << 31) - 1 - static_cast<int64_t>(spans[i]) - r_.range(0, 64);
        d.op.coords[i] = static_cast<int32_t>(negatives && r_.chance(50)
                                                  ? INT32_MIN + static_cast<int64_t>(g) * r_.range(0, 4)
                                                  : far / static_cast<int64_t>(g) * static_cast<int64_t>(g));
      }
    }
  }

  // ---------------------------------------------------------------- tiled (and interleaved)

  Draft tiled(const Knobs& k) {
    Draft d;
    TensorMap& m = d.map;
    m.mode = TensorMode::tiled;
    m.rank = k.rank ? k.rank : static_cast<int>(r_.range(1, 5));
    const bool negatives = is_load_like(k.kind);
    int il = k.interleave;
    if (il < 0 && k.dtype && is_sub_byte(*k.dtype)) il = 0;
    if (il < 0) il = (m.rank >= 3 && is_load_like(k.kind) && r_.chance(20)) ? static_cast<int>(r_.range(1, 2)) : 0;
    m.interleave = static_cast<Interleave>(il);
    Knobs kk = k;
    kk.interleave = il;
    m.dtype = pick_dtype(kk);
    const Swizzle sw = pick_swizzle(kk, m.dtype, m.mode);
    m.swizzle = sw.first;
    m.swizzle_atom = sw.second;
    m.l2_promotion = pick_l2();
    m.oob_fill = pick_fill(m.dtype);
    const uint32_t g = granule(m.dtype);
    const uint32_t span = swizzle_span(m.swizzle);
    const bool interleaved = m.interleave != Interleave::none;
    const uint32_t slice = m.interleave == Interleave::b16 ? 16 : 32;
    const bool big = r_.chance(10);
    const uint64_t smem_budget = big ? 96 * 1024 : (r_.chance(15) ? 48 * 1024 : 16 * 1024);
    const uint64_t global_budget = big ? 256 * 1024 : 96 * 1024;

    // Dimension 0: the box row.
    uint32_t row_bytes;  // shared-memory bytes of one box row
    uint64_t span0;      // positions the row spans in dimension 0 (slices or granules)
    if (packed16(m.dtype)) {
      m.box[0] = 128;
    } else if (interleaved) {
      m.box[0] = g * static_cast<uint32_t>(r_.range(1, std::min<int64_t>(256 / g, 8)));
    } else {
      const uint32_t unit_bytes = static_cast<uint32_t>(global_row_bytes(m.dtype, g));  // 16 (48 for b6x16)
      const uint32_t max_units =
          std::max<uint32_t>(1, std::min<uint32_t>(256 / g, span ? span / unit_bytes : 64));
      m.box[0] = g * static_cast<uint32_t>(r_.chance(30) ? max_units : r_.range(1, max_units));
    }
    m.element_strides[0] = interleaved ? pick_estride() : (r_.chance(85) ? 1 : static_cast<uint32_t>(r_.range(2, 8)));
    uint64_t count0;
    if (interleaved) {
      count0 = ceil_div(m.box[0], m.element_strides[0]);
      row_bytes = static_cast<uint32_t>(count0 * slice);
      span0 = (count0 - 1) * m.element_strides[0] + 1;
    } else {
      row_bytes = smem_row_bytes(m.dtype, m.box[0]);
      span0 = m.box[0] / g;
    }
    const uint32_t pitch = (!interleaved && span && row_bytes < span) ? span : row_bytes;

    // dims[0] and coords[0].
    uint64_t row0_bytes;
    if (interleaved) {
      auto [dim, c] = dim_and_coord(span0, span0 * 2 + 8, negatives);
      m.dims[0] = dim;
      d.op.coords[0] = static_cast<int32_t>(c);
      row0_bytes = dim * slice;
    } else {
      const uint64_t unit_bytes = global_row_bytes(m.dtype, g);
      auto [dim_g, c_g] = dim_and_coord(span0, std::min<uint64_t>(span0 * 2 + 4, 8192 / unit_bytes + 1), negatives);
      uint64_t dim = dim_g * g;
      if (packed16(m.dtype)) {
        dim = round_up(dim, 128);
      } else if (r_.chance(30) && g > 1) {
        uint64_t cut = static_cast<uint64_t>(r_.range(1, g - 1));
        if (m.dtype == DataType::b4x16) cut &= ~uint64_t{1};
        if (dim > cut) dim -= cut;
      }
      m.dims[0] = dim;
      d.op.coords[0] = static_cast<int32_t>(c_g * g);
      row0_bytes = global_row_bytes(m.dtype, dim);
    }

    // Outer dimensions: rows within the shared-memory budget, the tensor within the global budget.
    const uint64_t align = (m.interleave == Interleave::b32 || packed16(m.dtype)) ? 32 : 16;
    uint64_t rows_left = std::max<uint64_t>(1, smem_budget / pitch);
    uint64_t positions_left = std::max<uint64_t>(1, global_budget / round_up(std::max<uint64_t>(row0_bytes, 1), align));
    uint64_t rows = 1;
    std::array<uint64_t, kMaxRank> spans{};  // coordinates each dimension's box spans
    spans[0] = interleaved ? span0 : m.box[0];
    for (int i = 1; i < m.rank; ++i) {
      const bool frozen = interleaved && i == m.rank - 2;  // the slice-group dimension is not traversed
      int traversed_left = 0;
      for (int j = i; j < m.rank; ++j) traversed_left += (interleaved && j == m.rank - 2) ? 0 : 1;
      const uint32_t estr = pick_estride();
      uint64_t count = 1;
      if (!frozen) {
        const uint64_t cap = std::max<uint64_t>(1, iroot(rows_left, traversed_left));
        count = r_.chance(40) ? cap : static_cast<uint64_t>(r_.range(1, cap));
        while (count > 1 && (count - 1) * estr + 1 > 256) --count;
      }
      uint64_t box = (count - 1) * estr + static_cast<uint64_t>(r_.range(1, estr));
      if (frozen) box = static_cast<uint64_t>(r_.range(1, 8));
      box = std::min<uint64_t>(box, 256);
      m.box[i] = static_cast<uint32_t>(box);
      m.element_strides[i] = estr;
      const uint64_t spani = frozen ? 1 : (count - 1) * estr + 1;
      spans[i] = spani;
      const int dims_left = m.rank - i;
      uint64_t cap = r_.chance(20) ? positions_left : iroot(positions_left, dims_left);
      cap = std::max<uint64_t>(1, std::min(cap, positions_left));
      auto [dim, c] = dim_and_coord(spani, cap, negatives);
      m.dims[i] = dim;
      d.op.coords[i] = static_cast<int32_t>(c);
      positions_left = std::max<uint64_t>(1, positions_left / dim);
      rows_left = std::max<uint64_t>(1, rows_left / count);
      rows *= count;
    }
    layout(d, row0_bytes, align);
    if (k.extremes_ok && r_.chance(8)) extremes(d, spans, align, negatives);
    // The image holds the rows the box can touch (not the whole tensor: it may be 2^32 rows long).
    std::array<uint64_t, kMaxRank> top{};
    for (int i = 1; i < m.rank; ++i) {
      const int64_t lo = std::max<int64_t>(d.op.coords[i], 0);
      const int64_t hi = std::min<int64_t>(int64_t{d.op.coords[i]} + static_cast<int64_t>(spans[i]) - 1,
                                           static_cast<int64_t>(m.dims[i]) - 1);
      top[i] = hi >= lo ? static_cast<uint64_t>(hi) : 0;
    }
    size_image(d, row0_bytes, top);
    d.footprint = rows * pitch;
    d.op.kind = k.kind;
    d.op.smem_addr = k.kind == OpKind::prefetch ? 0 : pick_smem(d.footprint);
    return d;
  }

  // ---------------------------------------------------------------- im2col

  // Channels per pixel, the channel dimension and the channel start (shared by im2col and the wide forms).
  void channels(Draft& d, uint32_t span) {
    TensorMap& m = d.map;
    const uint32_t g = granule(m.dtype);
    uint32_t units;
    if (packed16(m.dtype)) {
      m.channels_per_pixel = 128;
      units = 128 / g;
    } else {
      const uint32_t unit_bytes = static_cast<uint32_t>(global_row_bytes(m.dtype, g));
      const uint32_t max_units = std::max<uint32_t>(1, std::min<uint32_t>(256 / g, span ? span / unit_bytes : 16));
      units = static_cast<uint32_t>(r_.chance(30) ? max_units : r_.range(1, max_units));
      m.channels_per_pixel = units * g;
    }
    uint64_t c = m.channels_per_pixel;
    switch (r_.weighted({50, 25, 25})) {
      case 0: break;
      case 1: c += g * static_cast<uint64_t>(r_.range(1, 3)); break;  // more channels than a pixel takes
      default: c = g * std::max<uint64_t>(1, units - std::min<uint64_t>(units - 1, r_.range(0, 2)));
    }
    if (packed16(m.dtype)) c = round_up(c, 128);
    else if (r_.chance(20) && g > 1 && c > g) c -= (m.dtype == DataType::b4x16 ? 2 : 1) * static_cast<uint64_t>(r_.range(1, g / 2));
    m.dims[0] = c;
    d.op.coords[0] = r_.chance(70) ? 0 : static_cast<int32_t>(g * r_.range(-2, static_cast<int64_t>(ceil_div(c, g)) + 1));
  }

  Draft im2col(const Knobs& k) {
    Draft d;
    TensorMap& m = d.map;
    m.mode = TensorMode::im2col;
    m.rank = k.rank ? k.rank : static_cast<int>(r_.range(3, 5));
    m.dtype = pick_dtype(k);
    const Swizzle sw = pick_swizzle(k, m.dtype, m.mode);
    m.swizzle = sw.first;
    m.swizzle_atom = sw.second;
    m.l2_promotion = pick_l2();
    m.oob_fill = pick_fill(m.dtype);
    const uint32_t span = swizzle_span(m.swizzle);
    channels(d, span);
    const uint32_t row_bytes = smem_row_bytes(m.dtype, m.channels_per_pixel);
    const uint32_t pitch = (span && row_bytes < span) ? span : row_bytes;
    const int nsp = m.rank - 2;
    const int64_t spatial_cap = m.rank == 3 ? 24 : m.rank == 4 ? 10 : 6;
    // "Contained": the walk starts at the box's lower corner with no offsets and stays within the
    // batch, and the box does not reach past the tensor (only padding below 0): boxes inside or low.
    const bool contained = r_.chance(35);
    for (int s = 0; s < nsp; ++s) {
      m.dims[s + 1] = static_cast<uint64_t>(r_.range(1, spatial_cap));
      const int64_t dim = static_cast<int64_t>(m.dims[s + 1]);
      if (contained) {
        m.lower_corner[s] = static_cast<int32_t>(r_.chance(70) ? 0 : -r_.range(1, 2));
        m.upper_corner[s] = static_cast<int32_t>(r_.chance(70) ? 0 : -r_.range(0, std::min<int64_t>(dim - 1, 2)));
        continue;
      }
      m.lower_corner[s] = static_cast<int32_t>(r_.range(-3, 1));
      m.upper_corner[s] = static_cast<int32_t>(r_.range(-3, 1));
      if (dim + m.upper_corner[s] - m.lower_corner[s] < 1)
        m.upper_corner[s] = static_cast<int32_t>(m.lower_corner[s] - dim + 1 + r_.range(0, 2));
    }
    const int n_dim = m.rank - 1;
    m.dims[n_dim] = static_cast<uint64_t>(r_.range(1, 4));
    m.element_strides[0] = r_.chance(90) ? 1 : static_cast<uint32_t>(r_.range(2, 8));
    for (int s = 0; s < nsp; ++s)
      m.element_strides[s + 1] =
          r_.chance(55) ? 1 : static_cast<uint32_t>(r_.chance(80) ? r_.range(2, 3) : r_.range(4, 8));
    m.element_strides[n_dim] = r_.chance(80) ? 1 : static_cast<uint32_t>(r_.range(2, 3));
    const uint64_t budget = r_.chance(10) ? 96 * 1024 : 24 * 1024;
    uint32_t ppc = r_.pick<uint32_t>({1, 2, 3, 7, 8, 16, 31, 32, 33, 64, 100, 128, 200, 256, 512, 1024});
    while (ppc > 1 && uint64_t{ppc} * pitch > budget) ppc /= 2;
    const int64_t n = static_cast<int64_t>(m.dims[n_dim]);
    if (contained) {
      uint64_t available = ceil_div(m.dims[n_dim], m.element_strides[n_dim]);
      for (int s = 0; s < nsp; ++s)
        available *= ceil_div(m.dims[s + 1] + m.upper_corner[s] - m.lower_corner[s], m.element_strides[s + 1]);
      ppc = static_cast<uint32_t>(std::min<uint64_t>(ppc, available));
      for (int s = 0; s < nsp; ++s) d.op.coords[s + 1] = m.lower_corner[s];
      d.op.coords[n_dim] = 0;
      m.dims[0] = std::max<uint64_t>(m.dims[0], m.channels_per_pixel);
      d.op.coords[0] = r_.chance(80) ? 0 : -static_cast<int32_t>(granule(m.dtype));
    } else {
      for (int s = 0; s < nsp; ++s) {
        const int64_t lo = m.lower_corner[s], hi = static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s];
        d.op.coords[s + 1] = static_cast<int32_t>(r_.range(lo, hi));
        d.op.im2col_offsets[s] = static_cast<uint16_t>(r_.range(0, 3));
      }
      d.op.coords[n_dim] = static_cast<int32_t>(r_.chance(80) ? r_.range(0, n - 1) : r_.range(-2, n + 1));
    }
    m.pixels_per_column = ppc;
    layout(d, global_row_bytes(m.dtype, m.dims[0]), packed16(m.dtype) ? 32 : 16);
    d.footprint = uint64_t{ppc} * pitch;
    d.op.kind = k.kind;
    d.op.smem_addr = k.kind == OpKind::prefetch ? 0 : pick_smem(d.footprint);
    return d;
  }

  // ---------------------------------------------------------------- im2col::w, im2col::w::128 (Blackwell)

  Draft wide(const Knobs& k) {
    Draft d;
    TensorMap& m = d.map;
    m.mode = r_.chance(50) ? TensorMode::im2col_w : TensorMode::im2col_w128;
    m.rank = k.rank ? k.rank : static_cast<int>(r_.range(3, 5));
    m.dtype = pick_dtype(k);
    const Swizzle sw = pick_swizzle(k, m.dtype, m.mode);
    m.swizzle = sw.first;
    m.swizzle_atom = sw.second;
    m.l2_promotion = pick_l2();
    m.oob_fill = pick_fill(m.dtype);
    const uint32_t span = swizzle_span(m.swizzle);
    channels(d, span);
    const uint32_t row_bytes = smem_row_bytes(m.dtype, m.channels_per_pixel);
    const uint32_t pitch = (span && row_bytes < span) ? span : row_bytes;
    const int n_dim = m.rank - 1;
    // "Contained" as for im2col: the walk starts at the box's lower corner (W 0 or a little padding
    // below), no halo or offset, H and D inside, and the batch holds every pixel.
    const bool contained = r_.chance(35);
    m.dims[1] = static_cast<uint64_t>(r_.range(contained ? 8 : 1, m.rank == 3 ? 24 : 12));
    for (int i = 2; i < n_dim; ++i) m.dims[i] = static_cast<uint64_t>(r_.range(1, contained ? 2 : 4));
    m.dims[n_dim] = static_cast<uint64_t>(r_.range(1, 4));
    if (contained) {
      m.lower_corner[0] = static_cast<int32_t>(r_.chance(70) ? 0 : -r_.range(1, 2));
      m.upper_corner[0] = static_cast<int32_t>(-r_.range(0, 2));
    } else {
      m.lower_corner[0] = static_cast<int32_t>(r_.range(-3, 1));
      m.upper_corner[0] = static_cast<int32_t>(r_.range(-3, 1));
      if (static_cast<int64_t>(m.dims[1]) + m.upper_corner[0] - m.lower_corner[0] < 1)
        m.upper_corner[0] = static_cast<int32_t>(m.lower_corner[0] - static_cast<int64_t>(m.dims[1]) + 1 + r_.range(0, 2));
    }
    for (int i = 1; i < m.rank; ++i) m.element_strides[i] = r_.chance(60) ? 1 : static_cast<uint32_t>(r_.range(2, 4));
    if (contained) m.element_strides[1] = 1;  // W: enough pixels per image that the batch stays small
    d.op.w_halo = static_cast<uint16_t>(contained || r_.chance(30) ? 0 : r_.range(1, 4));
    d.op.w_offset = static_cast<uint16_t>(contained ? 0 : r_.range(0, 3));
    uint64_t rows;
    if (m.mode == TensorMode::im2col_w128) {
      m.pixels_per_column = 128;
      rows = 4 * (32 + uint64_t{d.op.w_halo});
    } else {
      uint32_t ppc = r_.pick<uint32_t>({1, 2, 7, 16, 32, 64, 100, 128, 256});
      while (ppc > 1 && (uint64_t{ppc} + d.op.w_halo) * pitch > 32 * 1024) ppc /= 2;
      m.pixels_per_column = ppc;
      rows = uint64_t{ppc} + d.op.w_halo;
    }
    const int64_t hi = static_cast<int64_t>(m.dims[1]) - 1 + m.upper_corner[0];
    if (contained) {
      // enough images for every main pixel
      const uint64_t per_image = ceil_div(static_cast<uint64_t>(hi - m.lower_corner[0] + 1), m.element_strides[1]);
      const uint64_t pixels = m.mode == TensorMode::im2col_w128 ? 128 : m.pixels_per_column;
      m.dims[n_dim] = std::max<uint64_t>(m.dims[n_dim], ceil_div(pixels, per_image) * m.element_strides[n_dim]);
      d.op.coords[1] = m.lower_corner[0];
      for (int i = 2; i < n_dim; ++i) d.op.coords[i] = static_cast<int32_t>(r_.range(0, static_cast<int64_t>(m.dims[i]) - 1));
      d.op.coords[n_dim] = 0;
      m.dims[0] = std::max<uint64_t>(m.dims[0], m.channels_per_pixel);
      d.op.coords[0] = 0;
    } else {
      d.op.coords[1] = static_cast<int32_t>(r_.range(m.lower_corner[0] - 3, hi));  // left of the box is allowed
      for (int i = 2; i < n_dim; ++i) {
        const int64_t dim = static_cast<int64_t>(m.dims[i]);
        d.op.coords[i] = static_cast<int32_t>(r_.chance(85) ? r_.range(0, dim - 1) : r_.range(-1, dim));
      }
      const int64_t n = static_cast<int64_t>(m.dims[n_dim]);
      d.op.coords[n_dim] = static_cast<int32_t>(r_.chance(80) ? r_.range(0, n - 1) : r_.range(-2, n + 1));
    }
    layout(d, global_row_bytes(m.dtype, m.dims[0]), packed16(m.dtype) ? 32 : 16);
    d.footprint = rows * pitch;
    d.op.kind = k.kind;
    d.op.smem_addr = k.kind == OpKind::prefetch ? 0 : pick_smem(d.footprint);
    return d;
  }

  // ---------------------------------------------------------------- gather4 / scatter4 (Blackwell)

  Draft gather4(const Knobs& k) {
    Knobs kk = k;
    kk.rank = 2;
    kk.interleave = 0;
    kk.extremes_ok = false;
    Draft d = tiled(kk);  // a 2D tiled box, then four rows instead of box[1]
    TensorMap& m = d.map;
    m.mode = TensorMode::gather4;
    m.box[1] = 1;
    const int64_t rows = static_cast<int64_t>(m.dims[1]);
    const bool negatives = k.kind == OpKind::load || k.kind == OpKind::prefetch;
    // rows all inside, some below 0, some past the end, or any of those
    const size_t style = r_.weighted({40, negatives ? 20u : 0u, 20, 20});
    for (int i = 1; i <= 4; ++i) {
      int64_t y = r_.range(0, rows - 1);
      const bool out = style != 0 && (r_.chance(50) || i == 4);
      const bool low = style == 1 || (style == 3 && negatives && r_.chance(50));
      if (out) y = low ? -r_.range(1, 3) : rows + r_.range(0, 2);
      d.op.coords[i] = static_cast<int32_t>(y);
    }
    std::array<uint64_t, kMaxRank> top{};  // the four rows may be any of the tensor's
    top[1] = m.dims[1] - 1;
    size_image(d, global_row_bytes(m.dtype, m.dims[0]), top);
    const uint32_t row_bytes = smem_row_bytes(m.dtype, m.box[0]);
    const uint32_t span = swizzle_span(m.swizzle);
    d.footprint = 4 * uint64_t{(span && row_bytes < span) ? span : row_bytes};
    d.op.smem_addr = k.kind == OpKind::prefetch ? 0 : pick_smem(d.footprint);
    return d;
  }

  // ---------------------------------------------------------------- stores and reductions

  std::vector<DataType> reduce_types(ReduceOp op) const {
    std::vector<DataType> v;
    for (DataType t : normal_dtypes())
      if (reduce_supported(t, op)) v.push_back(t);
    return v;
  }

  Draft reduction(bool unsupported) {
    Knobs k = knobs(OpKind::reduce);
    const ReduceOp op = static_cast<ReduceOp>(r_.range(0, 7));
    if (unsupported) {
      std::vector<DataType> bad;
      for (DataType t : normal_dtypes())
        if (!reduce_supported(t, op)) bad.push_back(t);
      if (k.sub_byte_ok)  // no reduction takes a sub-byte type
        for (DataType t : sub_byte_dtypes())
          bad.push_back(t);
      k.dtype = r_.pick(bad);
    } else {
      k.dtype = r_.pick(reduce_types(op));
    }
    Draft d = tiled(k);
    d.op.reduce = op;
    if (unsupported) d.intent = "fault:reduce_unsupported";
    return d;
  }

  // ---------------------------------------------------------------- faults (accepted descriptor, trapping operation)

  Draft fault() {
    const std::vector<std::string> kinds = random_fault_kinds(opt_);
    const std::string kind = r_.pick(kinds);
    Draft d;
    if (kind == "smem_misaligned") {
      d = data_op_draft();
      d.op.smem_addr = static_cast<uint32_t>(128 * r_.range(0, 62) + r_.pick<int64_t>({4, 8, 16, 32, 48, 64, 80, 96, 112}));
    } else if (kind == "dim0_misaligned") {
      Knobs k = knobs(r_.chance(70) ? OpKind::load : OpKind::store);
      k.interleave = 0;
      d = (k.kind == OpKind::load && r_.chance(40)) ? im2col(k) : tiled(k);
      d.op.coords[0] += static_cast<int32_t>(r_.range(1, granule(d.map.dtype) - 1));
    } else if (kind == "im2col_base_outside") {
      d = im2col(knobs(OpKind::load));
      const int s = static_cast<int>(r_.range(0, d.map.rank - 3));
      const int64_t lo = d.map.lower_corner[s], hi = static_cast<int64_t>(d.map.dims[s + 1]) - 1 + d.map.upper_corner[s];
      d.op.coords[s + 1] = static_cast<int32_t>(r_.chance(50) ? lo - r_.range(1, 3) : hi + r_.range(1, 3));
    } else if (kind == "store_negative") {
      d = r_.chance(50) ? tiled(knobs(OpKind::store)) : reduction(false);
      const int i = static_cast<int>(r_.range(0, d.map.rank - 1));
      d.op.coords[i] = static_cast<int32_t>(i == 0 ? -static_cast<int64_t>(granule(d.map.dtype)) * r_.range(1, 2)
                                                   : -r_.range(1, 4));
    } else if (kind == "reduce_unsupported") {
      d = reduction(true);
    } else if (kind == "dim_2_32") {
      Knobs k = knobs(r_.pick<OpKind>({OpKind::load, OpKind::store, OpKind::prefetch}));
      d = (k.kind != OpKind::store && r_.chance(30)) ? im2col(k) : tiled(k);
      d.map.dims[r_.range(0, d.map.rank - 1)] = kTwo32;  // strides kept: the encoder does not relate them
    } else if (kind == "smem_overflow") {
      d = data_op_draft();
      const uint64_t room = (kSmemCapacity - std::min<uint64_t>(d.footprint, kSmemCapacity)) / 128 * 128;
      d.op.smem_addr = static_cast<uint32_t>(room + 128 * r_.range(1, 4));
    } else if (kind == "wide_start_right") {
      d = wide(knobs(OpKind::load));
      d.op.coords[1] = static_cast<int32_t>(static_cast<int64_t>(d.map.dims[1]) - 1 + d.map.upper_corner[0] + r_.range(1, 3));
    } else if (kind == "wide_store") {
      d = wide(knobs(OpKind::store));
    } else if (kind == "gather4_reduce") {
      d = gather4(knobs(OpKind::reduce));
      d.op.reduce = ReduceOp::add;
    } else if (kind == "b4x16_p64_store") {
      Knobs k = knobs(OpKind::store);
      k.dtype = DataType::b4x16_p64;
      k.swizzle = Swizzle{SwizzleMode::none, SwizzleAtom::b16};
      d = r_.chance(50) ? tiled(k) : gather4(k);
    } else {  // b6x16_p32_atom64_load
      Knobs k = knobs(OpKind::load);
      k.dtype = DataType::b6x16_p32;
      k.swizzle = Swizzle{SwizzleMode::b128, SwizzleAtom::b64};
      k.interleave = 0;
      d = tiled(k);
    }
    d.intent = "fault:" + kind;
    return d;
  }

  // A load (tiled or im2col) or a store / supported reduction (tiled), for the faults any of them can take.
  Draft data_op_draft() {
    switch (r_.weighted({45, 25, 15, 15})) {
      case 0: return tiled(knobs(OpKind::load));
      case 1: return im2col(knobs(OpKind::load));
      case 2: return tiled(knobs(OpKind::store));
      default: return reduction(false);
    }
  }

  // ---------------------------------------------------------------- invalid descriptors

  Draft base_for_rule(const std::string& rule, TensorMode mode) {
    Knobs k = knobs(OpKind::load);
    k.sub_byte_ok = false;
    auto packed = [&]() { return r_.pick(std::vector<DataType>{DataType::b4x16_p64, DataType::b6x16_p32}); };
    if (rule == "rank.interleave_needs_3d") {
      k.rank = static_cast<int>(r_.range(1, 2));
      k.interleave = 0;
    } else if (rule == "globalAddress.align32_interleave32B" || rule == "globalStrides.multiple_of_32_interleave32B") {
      k.rank = static_cast<int>(r_.range(3, 5));
      k.interleave = 2;
    } else if (rule == "globalStrides.range" || rule == "globalStrides.multiple_of_16") {
      if (mode == TensorMode::tiled) k.rank = static_cast<int>(r_.range(2, 5));
    } else if (rule == "swizzle.inner_dim_exceeds_span") {
      k.interleave = 0;
      k.dtype = r_.pick(normal_dtypes());
    } else if (rule == "arch.sm90_sub_byte_type") {
      k.dtype = r_.pick(sub_byte_dtypes());
    } else if (rule == "arch.sm90_swizzle_96B") {
      k.swizzle = Swizzle{SwizzleMode::b96, SwizzleAtom::b16};
      k.dtype = r_.pick(normal_dtypes());
      k.interleave = 0;
    } else if (rule == "arch.sm90_swizzle_atom") {
      k.swizzle = Swizzle{SwizzleMode::b128, r_.pick(std::vector<SwizzleAtom>{SwizzleAtom::b32, SwizzleAtom::b32_flip_8b,
                                                                                  SwizzleAtom::b64})};
      k.dtype = r_.pick(normal_dtypes());
      k.interleave = 0;
    } else if (rule == "globalAddress.align32_packed" || rule == "globalDim.packed_multiple_of_128" ||
               rule == "boxDim.packed_inner_must_be_128" || rule == "channelsPerPixel.packed_must_be_128") {
      k.dtype = packed();
      k.interleave = 0;
    } else if (rule == "globalStrides.multiple_of_32_packed") {
      k.dtype = packed();
      k.interleave = 0;
      if (mode == TensorMode::tiled) k.rank = static_cast<int>(r_.range(2, 5));
    } else if (rule == "globalDim.b4x16_multiple_of_2") {
      k.dtype = DataType::b4x16;
      k.interleave = 0;
    } else if (rule == "swizzle.b4x16_p64_modes") {
      k.dtype = DataType::b4x16_p64;
      k.interleave = 0;
    } else if (rule == "swizzle.b6x16_p32_modes") {
      k.dtype = DataType::b6x16_p32;
      k.interleave = 0;
    } else if (rule == "interleave.b6x16_p32_needs_none") {
      k.dtype = DataType::b6x16_p32;
      k.interleave = 0;
      k.rank = static_cast<int>(r_.range(3, 5));
    }
    if (k.dtype && is_sub_byte(*k.dtype) && !k.swizzle) {
      // the sub-byte swizzle lists; on sm_90 draw from what sm_100 allows (the arch rule refuses the type)
      std::vector<Swizzle> ok;
      for (const Swizzle& s : arch_swizzles(GpuArch::sm100))
        if (swizzle_allowed(s, *k.dtype, mode) && !(s.second == SwizzleAtom::b64)) ok.push_back(s);
      k.swizzle = r_.pick(ok);
    }
    switch (mode) {
      case TensorMode::im2col: return im2col(k);
      case TensorMode::im2col_w:
      case TensorMode::im2col_w128: {
        Draft d = wide(k);
        d.map.mode = mode;
        if (mode == TensorMode::im2col_w128) d.map.pixels_per_column = 128;
        return d;
      }
      case TensorMode::gather4: {
        k.interleave = 0;
        return gather4(k);
      }
      case TensorMode::tiled: break;
    }
    return tiled(k);
  }

  void mutate(const std::string& rule, Draft& d) {
    TensorMap& m = d.map;
    const int rank = m.rank;
    const int nsp = is_wide(m.mode) ? 1 : rank - 2;
    const int64_t corner_limit = is_wide(m.mode) ? 32768 : rank == 3 ? 32768 : rank == 4 ? 128 : 16;
    auto any_dim = [&]() { return static_cast<int>(r_.range(0, rank - 1)); };
    auto any_stride = [&]() { return static_cast<int>(r_.range(0, rank - 2)); };
    if (rule == "rank.range") {
      const int new_rank = is_im2col_family(m.mode) ? r_.pick<int>({0, 1, 2, 6}) : r_.pick<int>({0, 6});
      for (int i = std::max(new_rank, 0); i < kMaxRank; ++i) {
        m.dims[i] = 0;
        m.box[i] = 0;
        m.element_strides[i] = 1;
        d.op.coords[i] = 0;
        if (i >= 1) m.strides[i - 1] = 0;
      }
      for (int s = std::max(0, new_rank - 2); s < 3; ++s) {
        m.lower_corner[s] = m.upper_corner[s] = 0;
        d.op.im2col_offsets[s] = 0;
      }
      m.rank = new_rank;
    } else if (rule == "gather4.rank_2d") {
      m.rank = r_.pick<int>({1, 3});
      if (m.rank == 3) {
        m.dims[2] = 1;
        m.box[2] = 1;
        m.element_strides[2] = 1;
        m.strides[1] = m.strides[0] * m.dims[1];
      }
    } else if (rule == "gather4.no_interleave") {
      m.interleave = Interleave::b16;
    } else if (rule == "gather4.box1_must_be_1") {
      m.box[1] = static_cast<uint32_t>(r_.range(2, 16));
    } else if (rule == "rank.interleave_needs_3d") {
      m.interleave = r_.chance(50) ? Interleave::b16 : Interleave::b32;
    } else if (rule == "globalAddress.align16") {
      m.global_address += static_cast<uint64_t>(r_.range(1, 15));
    } else if (rule == "globalAddress.align32_interleave32B" || rule == "globalAddress.align32_packed") {
      m.global_address = 32 * static_cast<uint64_t>(r_.range(0, 32)) + 16;
    } else if (rule == "globalDim.range") {
      m.dims[any_dim()] = r_.chance(50) ? 0 : kTwo32 + r_.pick<uint64_t>({1, 16, kTwo32});
    } else if (rule == "globalDim.packed_multiple_of_128") {
      m.dims[0] = 128 * static_cast<uint64_t>(r_.range(0, 2)) + static_cast<uint64_t>(r_.range(1, 127));
    } else if (rule == "globalDim.b4x16_multiple_of_2") {
      m.dims[0] |= 1;
    } else if (rule == "globalStrides.range") {
      m.strides[any_stride()] = kTwo40 + 16 * static_cast<uint64_t>(r_.range(0, 4));
    } else if (rule == "globalStrides.multiple_of_16") {
      m.strides[any_stride()] += r_.pick<uint64_t>({1, 2, 4, 8, 12});
    } else if (rule == "globalStrides.multiple_of_32_interleave32B" || rule == "globalStrides.multiple_of_32_packed") {
      m.strides[any_stride()] += 16;
    } else if (rule == "boxDim.range") {
      // gather4 checks boxDim[1] == 1 before the range: break dimension 0 there
      m.box[m.mode == TensorMode::gather4 ? 0 : any_dim()] = r_.chance(40) ? 0 : static_cast<uint32_t>(r_.range(257, 1024));
    } else if (rule == "boxDim.inner_bytes_multiple_of_16") {
      const uint32_t g = granule(m.dtype);  // >= 2 for every normal type
      m.box[0] = static_cast<uint32_t>(g * r_.range(0, 256 / g - 1) + r_.range(1, g - 1));
    } else if (rule == "boxDim.packed_inner_must_be_128") {
      m.box[0] = r_.pick<uint32_t>({64, 256});
    } else if (rule == "pixelBoxLowerCorner.range" || rule == "pixelBoxUpperCorner.range") {
      auto& corner = rule == "pixelBoxLowerCorner.range" ? m.lower_corner : m.upper_corner;
      corner[r_.range(0, nsp - 1)] = static_cast<int32_t>(r_.chance(50) ? corner_limit : -corner_limit - 1);
    } else if (rule == "pixelBox.nonzero_area") {
      const int s = static_cast<int>(r_.range(0, nsp - 1));
      m.dims[s + 1] = std::min<uint64_t>(m.dims[s + 1], static_cast<uint64_t>(corner_limit / 2));
      m.lower_corner[s] = static_cast<int32_t>(r_.range(0, 1));
      m.upper_corner[s] = static_cast<int32_t>(m.lower_corner[s] - static_cast<int64_t>(m.dims[s + 1]) - r_.range(0, 2));
    } else if (rule == "channelsPerPixel.range") {
      m.channels_per_pixel = r_.chance(40) ? 0 : static_cast<uint32_t>(r_.range(257, 512));
    } else if (rule == "channelsPerPixel.packed_must_be_128") {
      m.channels_per_pixel = r_.pick<uint32_t>({64, 256});
    } else if (rule == "pixelsPerColumn.range") {
      m.pixels_per_column = r_.chance(40) ? 0 : static_cast<uint32_t>(r_.range(1025, 4096));
    } else if (rule == "elementStrides.range") {
      m.element_strides[any_dim()] = r_.chance(40) ? 0 : static_cast<uint32_t>(r_.range(9, 16));
    } else if (rule == "interleave.im2col_w_needs_none" || rule == "interleave.b6x16_p32_needs_none") {
      m.interleave = Interleave::b16;
    } else if (rule == "swizzle.im2col_w_modes") {
      const Swizzle s = r_.pick(std::vector<Swizzle>{{SwizzleMode::none, SwizzleAtom::b16},
                                                     {SwizzleMode::b32, SwizzleAtom::b16},
                                                     {SwizzleMode::b96, SwizzleAtom::b16},
                                                     {SwizzleMode::b128, SwizzleAtom::b32_flip_8b},
                                                     {SwizzleMode::b128, SwizzleAtom::b64}});
      m.swizzle = s.first;
      m.swizzle_atom = s.second;
    } else if (rule == "swizzle.b4x16_p64_modes" || rule == "swizzle.b6x16_p32_modes") {
      std::vector<Swizzle> bad = {{SwizzleMode::b32, SwizzleAtom::b16},
                                  {SwizzleMode::b64, SwizzleAtom::b16},
                                  {SwizzleMode::b96, SwizzleAtom::b16},
                                  {SwizzleMode::b128, SwizzleAtom::b32_flip_8b}};
      if (rule == "swizzle.b4x16_p64_modes") bad.push_back({SwizzleMode::b128, SwizzleAtom::b64});
      const Swizzle s = r_.pick(bad);
      m.swizzle = s.first;
      m.swizzle_atom = s.second;
    } else if (rule == "swizzle.inner_dim_exceeds_span") {
      std::vector<Swizzle> ok;
      for (const Swizzle& s : arch_swizzles(opt_.arch))
        if (s.first != SwizzleMode::none && (!is_wide(m.mode) || swizzle_allowed(s, m.dtype, m.mode))) ok.push_back(s);
      const Swizzle s = r_.pick(ok);
      m.swizzle = s.first;
      m.swizzle_atom = s.second;
      m.interleave = Interleave::none;
      const uint32_t e = element_bytes(m.dtype), span = swizzle_span(s.first);
      // An inner extent past the span: a multiple of 16 bytes, at most 256 elements.
      const uint32_t lo = span / 16 + 1, hi = std::max(lo, 256 * e / 16);
      const uint32_t inner = 16 * static_cast<uint32_t>(r_.range(lo, std::min<uint32_t>(hi, lo + 8)));
      if (m.mode == TensorMode::tiled || m.mode == TensorMode::gather4) m.box[0] = inner / e;
      else m.channels_per_pixel = inner / e;
    } else if (rule == "oobFill.nan_needs_float") {
      if (is_float(m.dtype)) m.dtype = same_size_integer(m.dtype);
      m.oob_fill = OobFill::nan;
    } else if (rule == "arch.sm90_im2col_wide" || rule == "arch.sm90_sub_byte_type" ||
               rule == "arch.sm90_swizzle_96B" || rule == "arch.sm90_swizzle_atom") {
      // the base already has the Blackwell form
    }
  }

  Draft invalid() {
    const std::vector<std::string> rules = random_validation_rules(opt_);
    const std::string rule = r_.pick(rules);
    const std::vector<TensorMode> modes = random_rule_modes(rule, opt_);
    const TensorMode mode = r_.pick(modes);
    Draft d;
    for (int attempt = 0; attempt < 8; ++attempt) {
      d = base_for_rule(rule, mode);
      mutate(rule, d);
      const auto err = validate_tensor_map(d.map, opt_.arch);
      if (err && err->rule == rule) break;
    }
    d.intent = "encode_error:" + rule;
    return d;
  }

  RandomStream r_;
  RandomOptions opt_;
};

// The expectations: the reference engine on the word_hash image and the 0xCD (or filled) shared memory.
RandomCase finish(uint64_t seed, uint64_t index, const RandomOptions& opt, Draft&& d) {
  RandomCase rc;
  rc.seed = seed;
  rc.index = index;
  rc.intent = d.intent;
  GoldenCase& g = rc.golden;
  g.name = "r" + std::to_string(seed) + "_" + pad_index(index);
  g.origin = "tma-sim random --seed " + std::to_string(seed) + " --start " + std::to_string(index) +
             " --count 1 (profile " + random_profile(opt) + "): expected results from the reference engine";
  g.arch = opt.arch;
  g.global_size = d.global_size;
  g.map = d.map;
  g.op = d.op;
  const bool data_out = g.op.kind == OpKind::store || g.op.kind == OpKind::reduce;
  if (data_out) {
    g.has_smem_fill = true;
    g.smem_fill_seed = d.smem_fill_seed;
    g.smem_fill_size = static_cast<uint32_t>(
        std::min<uint64_t>(kSmemCapacity, round_up(uint64_t{g.op.smem_addr} + d.footprint, 16)));
  }
  std::vector<uint8_t> global = word_hash_image(g.global_size);
  std::vector<uint8_t> smem = initial_smem(g, kSmemCapacity);
  const std::vector<uint8_t> before = data_out ? global : std::vector<uint8_t>{};
  const OpResult r = run_reference(g, global, smem);
  g.outcome = r.outcome;
  if (r.outcome != Outcome::ok) return rc;
  if (data_out) {
    uint64_t lo = g.map.global_address, hi = std::min<uint64_t>(g.global_size, g.map.global_address + d.extent);
    for (uint64_t i = 0; i < global.size(); ++i)
      if (global[i] != before[i]) {
        lo = std::min(lo, i);
        break;
      }
    for (uint64_t i = global.size(); i-- > 0;)
      if (global[i] != before[i]) {
        hi = std::max(hi, i + 1);
        break;
      }
    lo = lo >= 64 ? (lo - 64) / 16 * 16 : 0;
    hi = std::min<uint64_t>(g.global_size, round_up(hi + 64, 16));
    g.has_global_window = true;
    g.global_window_offset = lo;
    g.global_window.assign(global.begin() + static_cast<int64_t>(lo), global.begin() + static_cast<int64_t>(hi));
  } else {
    g.smem_bytes = g.op.kind == OpKind::load
                       ? static_cast<uint32_t>(std::min<uint64_t>(
                             kSmemCapacity, round_up(uint64_t{g.op.smem_addr} + d.footprint + 512, 1024)))
                       : 1024;
    g.smem_image.assign(smem.begin(), smem.begin() + g.smem_bytes);
    g.tx_bytes = r.tx_bytes;
  }
  return rc;
}

// ---------------------------------------------------------------- YAML

template <typename T, size_t N>
std::string list(const std::array<T, N>& a, int n) {
  std::string out = "[";
  for (int i = 0; i < n && i < static_cast<int>(N); ++i) {
    if (i) out += ", ";
    out += std::to_string(a[i]);
  }
  return out + "]";
}

uint64_t fnv1a(const std::vector<uint8_t>& v) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : v) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

std::string hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string random_profile(const RandomOptions& opt) {
  if (opt.arch == GpuArch::sm90) return "sm_90";
  return opt.blackwell_forms ? "sm_100+blackwell" : "sm_100";
}

bool parse_random_profile(const std::string& s, RandomOptions& opt) {
  if (s == "sm_90") opt = {GpuArch::sm90, false};
  else if (s == "sm_100") opt = {GpuArch::sm100, false};
  else if (s == "sm_100+blackwell") opt = {GpuArch::sm100, true};
  else return false;
  return true;
}

std::vector<TensorMode> random_modes(const RandomOptions& opt) {
  std::vector<TensorMode> v = {TensorMode::tiled, TensorMode::im2col};
  if (opt.arch == GpuArch::sm100 && opt.blackwell_forms)
    for (TensorMode m : {TensorMode::im2col_w, TensorMode::im2col_w128, TensorMode::gather4}) v.push_back(m);
  return v;
}

std::vector<DataType> random_dtypes(const RandomOptions& opt) {
  std::vector<DataType> v = normal_dtypes();
  if (opt.arch == GpuArch::sm100 && opt.blackwell_forms)
    v.insert(v.end(), sub_byte_dtypes().begin(), sub_byte_dtypes().end());
  return v;
}

std::vector<std::string> random_swizzles(const RandomOptions& opt) {
  std::vector<std::string> v;
  for (const Swizzle& s : arch_swizzles(opt.arch)) v.push_back(swizzle_name(s.first, s.second));
  return v;
}

std::vector<std::string> random_validation_rules(const RandomOptions& opt) {
  const bool bw = opt.arch == GpuArch::sm100 && opt.blackwell_forms;
  // Not generated: the enum rules and swizzle.atom_needs_128B (a golden case cannot spell their values).
  const std::vector<std::string> common = {
      "rank.range", "rank.interleave_needs_3d", "globalAddress.align16", "globalAddress.align32_interleave32B",
      "globalDim.range", "globalStrides.range", "globalStrides.multiple_of_16",
      "globalStrides.multiple_of_32_interleave32B", "boxDim.range", "boxDim.inner_bytes_multiple_of_16",
      "pixelBoxLowerCorner.range", "pixelBoxUpperCorner.range", "pixelBox.nonzero_area", "channelsPerPixel.range",
      "pixelsPerColumn.range", "elementStrides.range", "swizzle.inner_dim_exceeds_span", "oobFill.nan_needs_float"};
  const std::vector<std::string> blackwell = {
      "gather4.rank_2d", "gather4.no_interleave", "gather4.box1_must_be_1", "globalAddress.align32_packed",
      "globalDim.packed_multiple_of_128", "globalDim.b4x16_multiple_of_2", "globalStrides.multiple_of_32_packed",
      "boxDim.packed_inner_must_be_128", "channelsPerPixel.packed_must_be_128", "interleave.im2col_w_needs_none",
      "interleave.b6x16_p32_needs_none", "swizzle.im2col_w_modes", "swizzle.b4x16_p64_modes",
      "swizzle.b6x16_p32_modes"};
  std::vector<std::string> wanted = common;
  if (bw) wanted.insert(wanted.end(), blackwell.begin(), blackwell.end());
  if (opt.arch == GpuArch::sm90)
    for (const char* r : {"arch.sm90_im2col_wide", "arch.sm90_sub_byte_type", "arch.sm90_swizzle_96B", "arch.sm90_swizzle_atom"})
      wanted.emplace_back(r);
  std::vector<std::string> out;  // in validation order
  for (const std::string& id : validation_rule_ids())
    if (std::find(wanted.begin(), wanted.end(), id) != wanted.end()) out.push_back(id);
  return out;
}

std::vector<TensorMode> random_rule_modes(const std::string& rule, const RandomOptions& opt) {
  const bool bw = opt.arch == GpuArch::sm100 && opt.blackwell_forms;
  const TensorMode T = TensorMode::tiled, I = TensorMode::im2col, W = TensorMode::im2col_w,
                   W128 = TensorMode::im2col_w128, G = TensorMode::gather4;
  auto keep = [&](std::vector<TensorMode> v) {
    if (!bw) v.erase(std::remove_if(v.begin(), v.end(), [](TensorMode m) { return is_wide(m) || m == TensorMode::gather4; }),
                     v.end());
    return v;
  };
  if (rule == "arch.sm90_im2col_wide") return {W, W128};
  if (rule.rfind("gather4.", 0) == 0) return {G};
  if (rule == "rank.interleave_needs_3d" || rule == "globalAddress.align32_interleave32B" ||
      rule == "globalStrides.multiple_of_32_interleave32B" || rule == "interleave.b6x16_p32_needs_none" ||
      rule == "swizzle.b4x16_p64_modes" || rule == "swizzle.b6x16_p32_modes" || rule == "arch.sm90_sub_byte_type" ||
      rule == "arch.sm90_swizzle_96B" || rule == "arch.sm90_swizzle_atom")
    return rule.rfind("arch.", 0) == 0 ? std::vector<TensorMode>{T, I} : std::vector<TensorMode>{T};
  if (rule == "boxDim.range" || rule == "boxDim.inner_bytes_multiple_of_16" || rule == "boxDim.packed_inner_must_be_128")
    return keep({T, G});
  if (rule == "pixelBoxLowerCorner.range" || rule == "pixelBoxUpperCorner.range" || rule == "pixelBox.nonzero_area" ||
      rule == "channelsPerPixel.range" || rule == "channelsPerPixel.packed_must_be_128")
    return keep({I, W, W128});
  if (rule == "pixelsPerColumn.range") return keep({I, W});
  if (rule == "interleave.im2col_w_needs_none" || rule == "swizzle.im2col_w_modes") return {W, W128};
  if (rule == "globalDim.b4x16_multiple_of_2" || rule == "globalAddress.align32_packed" ||
      rule == "globalDim.packed_multiple_of_128" || rule == "globalStrides.multiple_of_32_packed")
    return {T, I};
  return keep({T, I, W, W128, G});
}

std::vector<std::string> random_fault_kinds(const RandomOptions& opt) {
  std::vector<std::string> v = {"smem_misaligned", "dim0_misaligned", "im2col_base_outside", "store_negative",
                                "reduce_unsupported", "dim_2_32",        "smem_overflow"};
  if (opt.arch == GpuArch::sm100 && opt.blackwell_forms)
    for (const char* k : {"wide_start_right", "wide_store", "gather4_reduce", "b4x16_p64_store", "b6x16_p32_atom64_load"})
      v.emplace_back(k);
  return v;
}

RandomCase generate_random_case(uint64_t seed, uint64_t index, const RandomOptions& opt) {
  Generator gen(seed, index, opt);
  Draft d = gen.make();
  // The smem fill seed of stores and reductions: from the same stream keyed on the case, drawn last.
  d.smem_fill_seed = static_cast<uint32_t>(RandomStream(seed ^ 0x5EED5EEDull, index).below(1u << 31));
  return finish(seed, index, opt, std::move(d));
}

std::vector<RandomCase> generate_random_cases(uint64_t seed, uint64_t first_index, uint64_t count,
                                              const RandomOptions& opt) {
  std::vector<RandomCase> out;
  out.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) out.push_back(generate_random_case(seed, first_index + i, opt));
  return out;
}

bool is_blackwell_form(const TensorMap& m) {
  return is_wide(m.mode) || m.mode == TensorMode::gather4 || is_sub_byte(m.dtype);
}

std::string check_random_intent(const RandomCase& c) {
  const GoldenCase& g = c.golden;
  const auto err = validate_tensor_map(g.map, g.arch);
  const std::string refused = err ? err->rule : "";
  if (c.intent.rfind("encode_error:", 0) == 0) {
    const std::string rule = c.intent.substr(13);
    if (refused != rule)
      return "intended refusal by " + rule + ", validation " + (refused.empty() ? "accepts the map" : "says " + refused);
    if (g.outcome != Outcome::encode_error) return "expected outcome " + to_string(g.outcome) + " for a refused map";
  } else {
    if (err) return "intent " + c.intent + " but validation refuses the map: " + err->rule + ": " + err->message;
    const Outcome want = c.intent == "valid" ? Outcome::ok : Outcome::fault;
    if (g.outcome != want) {
      std::vector<uint8_t> global = word_hash_image(g.global_size);
      std::vector<uint8_t> smem = initial_smem(g, kSmemCapacity);
      const OpResult r = run_reference(g, global, smem);
      return "intent " + c.intent + " but the reference engine says " + to_string(g.outcome) +
             (r.reason.empty() ? "" : " (" + r.reason + ")");
    }
  }
  const CaseVerdict v = check_case(g, run_reference);
  if (!v.passed) return "the reference engine does not reproduce the expectation: " + v.message;
  return "";
}

std::string describe_random_case(const RandomCase& c) {
  const TensorMap& m = c.golden.map;
  std::string s = to_string(m.mode) + " " + op_name(c.golden.op) + " " + to_string(m.dtype) + " rank " +
                  std::to_string(m.rank);
  const std::string sw = swizzle_name(m.swizzle, m.swizzle_atom);
  if (m.swizzle != SwizzleMode::none) s += " swizzle " + sw;
  if (m.interleave != Interleave::none) s += " interleave " + to_string(m.interleave);
  return s;
}

std::string random_case_yaml(const RandomCase& c) {
  const GoldenCase& g = c.golden;
  const TensorMap& m = g.map;
  const TmaOp& op = g.op;
  const int n = std::clamp(m.rank, 0, kMaxRank);
  std::ostringstream y;
  y << "schema: tma-golden/1\n";
  y << "name: " << g.name << "\n";
  y << "origin: \"" << g.origin << "\"\n";
  y << "intent: " << c.intent << "\n";
  y << "arch: " << to_string(g.arch) << "\n";
  y << "global:\n  fill: word_hash\n  size: " << g.global_size << "\n";
  y << "tensor_map:\n";
  y << "  mode: " << to_string(m.mode) << "\n";
  y << "  dtype: " << to_string(m.dtype) << "\n";
  y << "  rank: " << m.rank << "\n";
  y << "  base: " << m.global_address << "\n";
  y << "  dims: " << list(m.dims, n) << "\n";
  y << "  strides: " << list(m.strides, std::max(0, n - 1)) << "\n";
  const bool box_like = m.mode == TensorMode::tiled || m.mode == TensorMode::gather4;
  if (box_like) y << "  box: " << list(m.box, n) << "\n";
  y << "  element_strides: " << list(m.element_strides, n) << "\n";
  y << "  interleave: " << to_string(m.interleave) << "\n";
  y << "  swizzle: " << swizzle_name(m.swizzle, m.swizzle_atom) << "\n";
  y << "  l2_promotion: " << to_string(m.l2_promotion) << "\n";
  y << "  oob_fill: " << to_string(m.oob_fill) << "\n";
  if (!box_like) {
    const int corners = is_wide(m.mode) ? 1 : std::max(0, n - 2);
    y << "  lower_corner: " << list(m.lower_corner, corners) << "\n";
    y << "  upper_corner: " << list(m.upper_corner, corners) << "\n";
    y << "  channels_per_pixel: " << m.channels_per_pixel << "\n";
    y << "  pixels_per_column: " << m.pixels_per_column << "\n";
  }
  y << "op:\n";
  y << "  kind: " << op_name(op) << "\n";
  y << "  coords: " << list(op.coords, m.mode == TensorMode::gather4 ? 5 : n) << "\n";
  if (m.mode == TensorMode::im2col) y << "  im2col_offsets: " << list(op.im2col_offsets, std::max(0, n - 2)) << "\n";
  if (is_wide(m.mode)) y << "  w_halo: " << op.w_halo << "\n  w_offset: " << op.w_offset << "\n";
  y << "  smem_addr: " << op.smem_addr << "\n";
  if (g.has_smem_fill)
    y << "  smem_fill:\n    fill: word_hash\n    seed: " << g.smem_fill_seed << "\n    size: " << g.smem_fill_size
      << "\n";
  y << "expect:\n  outcome: " << to_string(g.outcome) << "\n";
  if (g.outcome == Outcome::ok) {
    if (g.has_global_window) {
      y << "  global_window:\n    offset: " << g.global_window_offset << "\n    size: " << g.global_window.size()
        << "\n    image: " << g.name << ".gmem\n";
    } else {
      y << "  smem_bytes: " << g.smem_bytes << "\n  smem_image: " << g.name << ".smem\n";
      if (g.tx_bytes) y << "  tx_bytes: " << *g.tx_bytes << "\n";
    }
  }
  return y.str();
}

std::string serialize_random_case(const RandomCase& c) {
  std::string s = random_case_yaml(c);
  const GoldenCase& g = c.golden;
  if (!g.smem_image.empty())
    s += "# " + g.name + ".smem: " + std::to_string(g.smem_image.size()) + " bytes, fnv1a " + hex64(fnv1a(g.smem_image)) + "\n";
  if (!g.global_window.empty())
    s += "# " + g.name + ".gmem: " + std::to_string(g.global_window.size()) + " bytes, fnv1a " +
         hex64(fnv1a(g.global_window)) + "\n";
  return s;
}

void write_random_case(const RandomCase& c, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const char* data, size_t n) {
    const fs::path p = fs::path(dir) / name;
    std::ofstream out(p, std::ios::binary);
    out.write(data, static_cast<std::streamsize>(n));
    if (!out) throw std::runtime_error("cannot write '" + p.string() + "'");
  };
  const GoldenCase& g = c.golden;
  const std::string yaml = random_case_yaml(c);
  write(g.name + ".yaml", yaml.data(), yaml.size());
  if (g.outcome == Outcome::ok && g.has_global_window)
    write(g.name + ".gmem", reinterpret_cast<const char*>(g.global_window.data()), g.global_window.size());
  else if (g.outcome == Outcome::ok)
    write(g.name + ".smem", reinterpret_cast<const char*>(g.smem_image.data()), g.smem_image.size());
}

}  // namespace tma
