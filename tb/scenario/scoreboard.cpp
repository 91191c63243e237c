#include "tma/scenario/scoreboard.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "tma/scenario/workload.h"

namespace tma {

namespace {

uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The reference engine needs the operation's global bytes as one image. A box can be scattered
// over gigabytes, so the scoreboard packs the part of the tensor the box can touch into a small
// "compact" tensor of its own, with the same in-bounds elements at the same box positions, and
// remembers where each packed row lives in real memory.
struct Segment {
  uint64_t address;    // real global address
  uint64_t offset;     // in the compact image
  uint64_t bytes;
};
struct Compact {
  TensorMap map;
  TmaOp op;
  std::vector<Segment> segments;
  uint64_t bytes = 0;
};

uint32_t unit_of(const TensorMap& m) {
  return m.interleave == Interleave::b16 ? 16 : m.interleave == Interleave::b32 ? 32 : element_bytes(m.dtype);
}

// Positions k in [0, count) of a lattice start + k * step that fall in [0, dim): [a, b).
void inside(int64_t start, uint64_t step, uint64_t count, uint64_t dim, uint64_t& a, uint64_t& b) {
  a = start >= 0 ? 0 : std::min<uint64_t>(count, div_up(static_cast<uint64_t>(-start), step));
  const int64_t room = static_cast<int64_t>(dim) - start;
  b = room <= 0 ? 0 : std::min<uint64_t>(count, div_up(static_cast<uint64_t>(room), step));
  b = std::max(a, b);
}

// An operation on a dimension of 2^32 elements traps (silicon; the reference engine refuses it
// before it reads memory). A packed copy has small dimensions and would not: such a map is not
// packed, and the reference sees the real one.
bool has_dim_of_2pow32(const TensorMap& m) {
  for (int i = 0; i < m.rank; ++i)
    if (m.dims[i] >= (uint64_t{1} << 32)) return true;
  return false;
}

// Tiled (and interleaved) boxes: every dimension but interleaved dimension 0 is reduced to the
// in-bounds lattice points with element stride 1. False when nothing is packed.
bool compact_tiled(const TensorMap& m, const TmaOp& op, bool store, Compact& c) {
  if (has_dim_of_2pow32(m)) return false;
  const bool il = m.interleave != Interleave::none;
  const uint32_t unit = unit_of(m);
  c.map = m;
  c.op = op;
  std::array<uint64_t, kMaxRank> a{}, b{}, count{};
  for (int i = 1; i < m.rank; ++i) {
    const bool frozen = il && i == m.rank - 2;
    count[i] = frozen ? 1 : div_up(m.box[i], m.element_strides[i]);
    inside(op.coords[i], m.element_strides[i], count[i], m.dims[i], a[i], b[i]);
    if (a[i] == b[i]) return false;
  }
  uint64_t row_len, first0;
  if (il) {  // dimension 0 as it is: whole rows of slices
    first0 = 0;
    row_len = m.dims[0] * unit;
  } else {
    uint64_t a0, b0;
    inside(op.coords[0], 1, m.box[0], m.dims[0], a0, b0);
    if (a0 == b0) return false;
    first0 = static_cast<uint64_t>(op.coords[0] + static_cast<int64_t>(a0));
    // Whether the box start is 16-byte aligned (a fault if not) depends on coords[0] modulo 16
    // elements: the packed row starts that many elements early so that the packed coordinate
    // keeps the same residue and the reference sees the same fault.
    const uint64_t lead = is_sub_byte(m.dtype) ? 0 : first0 % 16;
    first0 -= lead;
    row_len = (b0 - a0 + lead) * unit;
    c.map.dims[0] = b0 - a0 + lead;
    c.op.coords[0] = static_cast<int32_t>(lead) - static_cast<int32_t>(a0);
  }
  const uint64_t align = m.interleave == Interleave::b32 ? 32 : 16;
  // Stores write whole 16-byte chunks past the row's end: keep room for them.
  uint64_t stride = (row_len + (store ? 16 : 0) + align - 1) / align * align;
  for (int i = 1; i < m.rank; ++i) {
    c.map.dims[i] = b[i] - a[i];
    c.map.box[i] = static_cast<uint32_t>(count[i]);
    c.map.element_strides[i] = 1;
    c.op.coords[i] = -static_cast<int32_t>(a[i]);
    c.map.strides[i - 1] = stride;
    stride *= c.map.dims[i];
  }
  c.map.global_address = 0;
  // Segments: one per in-bounds row, dimension 1 fastest (matching the compact strides).
  std::array<uint64_t, kMaxRank> k = a;
  uint64_t offset = 0;
  const uint64_t seg_len = row_len + (store ? 16 : 0);
  while (true) {
    uint64_t address = m.global_address + first0 * unit;
    for (int i = 1; i < m.rank; ++i)
      address += static_cast<uint64_t>(op.coords[i] + static_cast<int64_t>(k[i] * m.element_strides[i])) * m.strides[i - 1];
    c.segments.push_back(Segment{address, offset, seg_len});
    offset += m.rank > 1 ? c.map.strides[0] : seg_len;
    int i = 1;
    for (; i < m.rank; ++i) {
      if (++k[i] < b[i]) break;
      k[i] = a[i];
    }
    if (i >= m.rank) break;
  }
  c.bytes = m.rank > 1 ? c.map.strides[m.rank - 2] * c.map.dims[m.rank - 1] + 16 : seg_len;
  return true;
}

// im2col: the pixel walk depends on the spatial extents, so only the channels and the images
// the walk can reach are packed.
bool compact_im2col(const TensorMap& m, const TmaOp& op, Compact& c) {
  if (has_dim_of_2pow32(m)) return false;
  const int nsp = m.rank - 2, nd = m.rank - 1;
  const uint32_t e = element_bytes(m.dtype);
  c.map = m;
  c.op = op;
  uint64_t a0, b0;
  inside(op.coords[0], 1, m.channels_per_pixel, m.dims[0], a0, b0);
  uint64_t per_image = 1;
  for (int s = 0; s < nsp; ++s) {
    const int64_t extent = static_cast<int64_t>(m.dims[s + 1]) + m.upper_corner[s] - m.lower_corner[s];
    per_image *= static_cast<uint64_t>(std::max<int64_t>(1, div_up(std::max<int64_t>(extent, 1), m.element_strides[s + 1])));
  }
  const uint64_t images = (m.pixels_per_column / per_image + 2) * m.element_strides[nd];
  uint64_t an, bn;
  inside(op.coords[nd], 1, images, m.dims[nd], an, bn);
  if (a0 == b0 || an == bn) return false;
  const uint64_t first0 = static_cast<uint64_t>(op.coords[0] + static_cast<int64_t>(a0));
  const uint64_t row_len = (b0 - a0) * e;
  c.map.dims[0] = b0 - a0;
  c.op.coords[0] = -static_cast<int32_t>(a0);
  c.map.dims[nd] = bn - an;
  c.op.coords[nd] = -static_cast<int32_t>(an);
  uint64_t stride = (row_len + 15) / 16 * 16;
  for (int i = 1; i < m.rank; ++i) {
    c.map.strides[i - 1] = stride;
    stride *= c.map.dims[i];
  }
  c.map.global_address = 0;
  std::array<uint64_t, kMaxRank> x{};
  x[nd] = an;
  uint64_t offset = 0;
  while (true) {
    uint64_t address = m.global_address + first0 * e + (static_cast<uint64_t>(op.coords[nd]) + x[nd]) * m.strides[nd - 1];
    for (int s = 1; s <= nsp; ++s) address += x[s] * m.strides[s - 1];
    c.segments.push_back(Segment{address, offset, row_len});
    offset += c.map.strides[0];
    int i = 1;
    for (; i < m.rank; ++i) {
      if (++x[i] < (i == nd ? bn : m.dims[i])) break;
      x[i] = i == nd ? an : 0;
    }
    if (i >= m.rank) break;
  }
  c.bytes = c.map.strides[nd - 1] * c.map.dims[nd];
  return true;
}

std::string hex2(uint8_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

}  // namespace

Scoreboard::Scoreboard(GpuSystem& gpu, GpuArch arch, size_t max_reports)
    : gpu_(gpu), arch_(arch), max_reports_(max_reports), scratch_smem_(gpu.arch().smem.capacity_bytes, 0xCD) {}

void Scoreboard::op_starting(int sm, const TmaCommand& cmd, const TensorMap& map) {
  if (cmd.kind != UnitCommandKind::tensor_op || cmd.op.kind == OpKind::prefetch) return;
  Snapshot& s = open_[cmd.op_id];
  // Global bytes the operation reads or writes, packed.
  Compact c;
  const bool store = cmd.op.kind != OpKind::load;
  const bool ok = map.mode == TensorMode::im2col ? compact_im2col(map, cmd.op, c) : compact_tiled(map, cmd.op, store, c);
  s.global.assign(ok ? c.bytes : 0, 0);
  for (const Segment& seg : c.segments) gpu_.memory().read(seg.address, &s.global[seg.offset], seg.bytes);
  // Shared memory of the box (the source of a store, the prior content of a load).
  const std::vector<uint8_t>& smem = gpu_.unit(sm).smem().bytes();
  s.smem_lo = std::min<uint32_t>(cmd.op.smem_addr, static_cast<uint32_t>(smem.size()));
  const uint64_t n = std::min<uint64_t>(box_smem_bytes(map), smem.size() - s.smem_lo);
  s.smem.assign(smem.begin() + s.smem_lo, smem.begin() + s.smem_lo + n);
}

void Scoreboard::fail(const OpRecord& rec, int sm, const std::string& what) {
  ++mismatches_;
  if (reports_.size() < max_reports_) {
    char head[96];
    std::snprintf(head, sizeof head, "sm %d op %llu (%s): ", sm, static_cast<unsigned long long>(rec.cmd.op_id),
                  op_name(rec.cmd.op).c_str());
    reports_.push_back(head + what);
  }
}

void Scoreboard::op_finished(int sm, const OpRecord& rec) {
  if (rec.cmd.kind != UnitCommandKind::tensor_op || rec.cmd.op.kind == OpKind::prefetch || !rec.map_valid) return;
  auto it = open_.find(rec.cmd.op_id);
  if (it == open_.end()) return;
  Snapshot snap = std::move(it->second);
  open_.erase(it);
  ++checked_;
  const TensorMap& m = rec.map;
  const bool store = rec.cmd.op.kind != OpKind::load;
  Compact c;
  const bool packed = m.mode == TensorMode::im2col ? compact_im2col(m, rec.cmd.op, c)
                                                   : compact_tiled(m, rec.cmd.op, store, c);
  if (!packed) {  // nothing in bounds, or a trapping dimension: the reference reads no global memory
    c.map = m;
    c.op = rec.cmd.op;
  }
  std::copy(snap.smem.begin(), snap.smem.end(), scratch_smem_.begin() + snap.smem_lo);
  ReferenceOptions opt;
  opt.arch = arch_;
  std::vector<uint8_t>& image = snap.global;
  const OpResult r = reference_execute(c.map, c.op, image, scratch_smem_, opt);
  const bool model_ok = rec.outcome == OpOutcome::ok;
  if ((r.outcome == Outcome::ok) != model_ok) {
    fail(rec, sm, std::string("outcome: reference ") + to_string(r.outcome) + (r.reason.empty() ? "" : " (" + r.reason + ")") +
                      ", pipeline " + (model_ok ? "ok" : "fault (" + rec.fault_reason + ")"));
    return;
  }
  if (!model_ok) return;
  if (!store) {
    if (r.tx_bytes != rec.tx_bytes) {
      fail(rec, sm, "tx_bytes: reference " + std::to_string(r.tx_bytes) + ", pipeline " + std::to_string(rec.tx_bytes));
      return;
    }
    const uint16_t mask = rec.cmd.cta_mask ? rec.cmd.cta_mask : 0;
    std::vector<int> dests;
    if (!mask) {
      dests.push_back(sm);
    } else {
      const int cs = static_cast<int>(gpu_.fabric().cluster_size());
      for (int cta = 0; cta < 16; ++cta)
        if (mask & (1u << cta)) dests.push_back((sm / cs) * cs + cta);
    }
    for (int d : dests) {
      const std::vector<uint8_t>& got = gpu_.unit(static_cast<uint32_t>(d)).smem().bytes();
      for (size_t i = 0; i < snap.smem.size(); ++i) {
        const size_t a = snap.smem_lo + i;
        if (got[a] != scratch_smem_[a]) {
          fail(rec, sm, "smem of SM " + std::to_string(d) + " byte " + std::to_string(a) + ": reference " +
                            hex2(scratch_smem_[a]) + ", pipeline " + hex2(got[a]));
          return;
        }
      }
      bytes_compared_ += snap.smem.size();
    }
  } else {
    std::vector<uint8_t> got;
    for (const Segment& seg : c.segments) {
      got.resize(seg.bytes);
      gpu_.memory().read(seg.address, got.data(), seg.bytes);
      for (uint64_t i = 0; i < seg.bytes; ++i) {
        if (got[i] != image[seg.offset + i]) {
          fail(rec, sm, "global byte " + std::to_string(seg.address + i) + ": reference " + hex2(image[seg.offset + i]) +
                            ", pipeline " + hex2(got[i]));
          return;
        }
      }
      bytes_compared_ += seg.bytes;
    }
  }
}

}  // namespace tma
