#include "tma/tma/address_gen_unit.h"

#include <algorithm>

#include "tma/descriptor/element_ops.h"

namespace tma {

namespace {

uint32_t slice_bytes(Interleave i) { return i == Interleave::b16 ? 16 : i == Interleave::b32 ? 32 : 0; }

using Unit = AguUnit;

// Dimension 0 in units: an element; with interleave a 16- or 32-byte slice; for the sub-byte
// types a group of 16 values (8 or 12 global bytes, 8 or 16 shared-memory bytes).
Unit unit_of(const TensorMap& m) {
  if (m.interleave != Interleave::none) {
    const uint32_t s = slice_bytes(m.interleave);
    return {1, s, s};
  }
  return {elements_per_unit(m.dtype), element_bytes(m.dtype), smem_unit_bytes(m.dtype)};
}

uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Adds a fill piece, merging it with the previous one when they touch.
void add_fill(std::vector<SmemPiece>& fills, uint32_t box_offset, uint32_t bytes) {
  if (!bytes) return;
  if (!fills.empty() && fills.back().box_offset + fills.back().bytes == box_offset) {
    fills.back().bytes += bytes;
    return;
  }
  fills.push_back(SmemPiece{box_offset, bytes, 0, true});
}

// Row pitch in shared memory: swizzled rows narrower than the span are padded to it, except
// interleaved ones (silicon packs those).
uint32_t pitch_of(const TensorMap& m, uint32_t inner) {
  const uint32_t span = swizzle_span(m.swizzle);
  if (m.interleave != Interleave::none || !span || inner >= span) return inner;
  return span;
}

// Walks the outer dimensions of a tiled box: counts[i] positions, stepping by element stride.
struct OuterWalk {
  int rank = 1;
  std::array<uint64_t, kMaxRank> count{}, k{};
  uint64_t rows = 1;
  bool next() {
    for (int i = 1; i < rank; ++i) {
      if (++k[i] < count[i]) return true;
      k[i] = 0;
    }
    return false;
  }
};

OuterWalk outer_walk(const TensorMap& m) {
  OuterWalk w;
  w.rank = m.rank;
  for (int i = 1; i < m.rank; ++i) {
    // Interleaved maps do not traverse dimension rank-2 (the slice-group dimension).
    const bool frozen = m.interleave != Interleave::none && i == m.rank - 2;
    w.count[i] = frozen ? 1 : div_up(m.box[i], m.element_strides[i]);
    w.rows *= w.count[i];
  }
  return w;
}

// Global byte address of the row at the walk's position, or false when it is outside the tensor.
bool row_address(const TensorMap& m, const TmaOp& op, const OuterWalk& w, uint64_t& address) {
  address = m.global_address;
  for (int i = 1; i < m.rank; ++i) {
    const int64_t x = static_cast<int64_t>(op.coords[i]) + static_cast<int64_t>(w.k[i] * m.element_strides[i]);
    if (x < 0 || static_cast<uint64_t>(x) >= m.dims[i]) return false;
    address += static_cast<uint64_t>(x) * m.strides[i - 1];
  }
  return true;
}

}  // namespace

AddressGenUnit::AddressGenUnit(sc_core::sc_module_name name, const ArchConfig& arch, int sm)
    : sc_module(name), cmd_in("cmd_in"), req_out("req_out"), gather_out("gather_out"), clock_(arch.sm_clock_mhz),
      cfg_(arch.tma), smem_capacity_(arch.smem.capacity_bytes), sm_(sm) {
  cmd_in.register_b_transport(this, &AddressGenUnit::b_transport);
}

std::string AddressGenUnit::check_fault(const AguCommand& c) const {
  const TensorMap& m = c.map;
  const TmaOp& op = c.cmd.op;
  const bool wide = m.mode == TensorMode::im2col_w || m.mode == TensorMode::im2col_w128;
  if (c.arch == GpuArch::sm90 && (m.mode == TensorMode::gather4 || wide))
    return "mode " + to_string(m.mode) + " does not exist on sm_90";
  for (int i = 0; i < m.rank; ++i)
    if (m.dims[i] > 0xFFFFFFFFull) return "a dimension of 2^32 elements traps";
  if (op.kind == OpKind::prefetch) return "";
  if (op.smem_addr % 128) return "shared-memory address not 128-byte aligned";
  if (m.dtype == DataType::b4x16_p64 && op.kind != OpKind::load) return "b4x16_p64 is a load-only type";
  if (m.dtype == DataType::b6x16_p32 && op.kind == OpKind::load && m.swizzle_atom == SwizzleAtom::b64)
    return "b6x16_p32 with the 64-byte atom is a store-only form";
  const Unit u = unit_of(m);
  const int64_t c0 = op.coords[0];
  const bool aligned = c0 % u.elements == 0 && (c0 / u.elements * u.global_bytes) % 16 == 0;
  if (m.interleave == Interleave::none && !aligned) return "box start in dimension 0 not 16-byte aligned";
  if (m.mode == TensorMode::im2col) {
    for (int s = 0; s < m.rank - 2; ++s) {
      const int64_t lo = m.lower_corner[s], hi = static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s];
      if (op.coords[s + 1] < lo || op.coords[s + 1] > hi) return "im2col filter base outside the bounding box";
    }
    if (op.kind != OpKind::load) return "im2col stores are not modelled";
  }
  if (wide) {
    // The first pixel may lie left of the W box, not right of it.
    const int64_t w = static_cast<int64_t>(op.coords[1]) + op.w_offset;
    if (w > static_cast<int64_t>(m.dims[1]) - 1 + m.upper_corner[0] + op.w_offset) return "im2col::w start right of the box";
    if (op.kind != OpKind::load) return "the wide im2col modes are load-only";
  }
  if (op.kind == OpKind::store || op.kind == OpKind::reduce) {
    const int ncoords = m.mode == TensorMode::gather4 ? 5 : m.rank;
    for (int i = 0; i < ncoords; ++i)
      if (op.coords[i] < 0) return "store or reduction with a negative coordinate";
    if (m.interleave != Interleave::none) return "interleaved stores are not modelled";
    if (op.kind == OpKind::reduce && m.mode == TensorMode::gather4) return "there is no scatter4 reduction";
    if (op.kind == OpKind::reduce && !reduce_supported(m.dtype, op.reduce)) return "reduction not supported on this type";
  }
  return "";
}

void AddressGenUnit::plan_row(const Unit& u, bool row_inside, uint64_t row_address,
                              int64_t start, uint32_t step, uint32_t count, uint64_t dim0, uint32_t row_off,
                              Plan& plan) const {
  // Units whose first coordinate lies in [0, dim0): k in [k_lo, k_hi); the last may be partial.
  const int64_t d0 = static_cast<int64_t>(dim0);
  int64_t k_lo = 0, k_hi = 0;
  if (row_inside) {
    k_lo = std::min<int64_t>(count, start >= 0 ? 0 : div_up(static_cast<uint64_t>(-start), step));
    k_hi = std::max<int64_t>(k_lo, std::min<int64_t>(count, start >= d0 ? 0 : div_up(d0 - start, step)));
  }
  const bool padded = u.smem_bytes != u.global_bytes;
  auto unit_address = [&](int64_t k) {
    return row_address + static_cast<uint64_t>(start + k * step) / u.elements * u.global_bytes;
  };
  // A unit's data bytes inside the tensor (a b4x16 unit can straddle the end of dimension 0).
  auto inside_bytes = [&](int64_t k) {
    const int64_t left = d0 - (start + k * step);
    return left >= u.elements ? u.global_bytes : static_cast<uint32_t>(left * u.global_bytes / u.elements);
  };
  // Out-of-bound units: their data bytes get the fill; padding bytes are never written.
  auto fill_units = [&](int64_t from, int64_t to) {
    if (!padded) {
      add_fill(plan.fills, row_off + static_cast<uint32_t>(from) * u.smem_bytes, static_cast<uint32_t>(to - from) * u.smem_bytes);
      return;
    }
    for (int64_t k = from; k < to; ++k) add_fill(plan.fills, row_off + static_cast<uint32_t>(k) * u.smem_bytes, u.global_bytes);
  };
  fill_units(0, k_lo);
  const bool contiguous = !padded && step == u.elements;
  int64_t k = k_lo;
  if (contiguous) {
    // Whole units in one run; a partial last unit on its own.
    int64_t whole_end = k_hi;
    if (k_hi > k_lo && inside_bytes(k_hi - 1) < u.global_bytes) --whole_end;
    if (whole_end > k_lo)
      plan.runs.push_back(Run{unit_address(k_lo), static_cast<uint32_t>(whole_end - k_lo) * u.global_bytes,
                              row_off + static_cast<uint32_t>(k_lo) * u.smem_bytes});
    k = whole_end;
  }
  for (; k < k_hi; ++k) {
    const uint32_t n = inside_bytes(k), off = row_off + static_cast<uint32_t>(k) * u.smem_bytes;
    plan.runs.push_back(Run{unit_address(k), n, off});
    add_fill(plan.fills, off + n, u.global_bytes - n);  // values past the end read as zero
  }
  fill_units(k_hi, count);
}

void AddressGenUnit::plan_tiled(const AguCommand& c, Plan& plan) const {
  const TensorMap& m = c.map;
  const TmaOp& op = c.cmd.op;
  const Unit u = unit_of(m);
  const bool il = m.interleave != Interleave::none;
  const uint32_t step0 = il ? m.element_strides[0] : u.elements;
  const uint32_t n0 = static_cast<uint32_t>(div_up(m.box[0], step0));
  const uint32_t inner = n0 * u.smem_bytes, pitch = pitch_of(m, inner);
  if (m.mode == TensorMode::gather4) {
    // Four rows, one per row coordinate of the instruction.
    plan.tx_bytes = 4 * inner;
    plan.footprint = 4 * pitch;
    for (uint32_t r = 0; r < 4; ++r) {
      const int64_t y = op.coords[1 + r];
      const bool inside = y >= 0 && static_cast<uint64_t>(y) < m.dims[1];
      plan_row(u, inside, m.global_address + (inside ? static_cast<uint64_t>(y) * m.strides[0] : 0), op.coords[0],
               step0, n0, m.dims[0], r * pitch, plan);
    }
    return;
  }
  OuterWalk w = outer_walk(m);
  plan.tx_bytes = static_cast<uint32_t>(w.rows * inner);
  plan.footprint = w.rows * pitch;
  uint32_t row_off = 0;
  do {
    uint64_t address;
    const bool inside = row_address(m, op, w, address);
    plan_row(u, inside, address, op.coords[0], step0, n0, m.dims[0], row_off, plan);
    row_off += pitch;
  } while (w.next());
}

// The rows of an im2col-family load: the coordinates (dimensions 1..rank-1) of each pixel.
static std::vector<std::array<int64_t, kMaxRank>> im2col_pixel_walk(const TensorMap& m, const TmaOp& op) {
  const int nsp = m.rank - 2, n_dim = m.rank - 1;
  std::vector<std::array<int64_t, kMaxRank>> rows;
  if (m.mode == TensorMode::im2col) {
    // W fastest; a spatial position past the box's far corner restarts at the near one, and past
    // the last spatial dimension N steps.
    std::array<int64_t, kMaxRank> pos{};
    for (int d = 1; d <= n_dim; ++d) pos[d] = op.coords[d];
    for (uint32_t pix = 0; pix < m.pixels_per_column; ++pix) {
      std::array<int64_t, kMaxRank> at = pos;
      for (int s = 0; s < nsp; ++s) at[s + 1] += op.im2col_offsets[s];
      rows.push_back(at);
      int s = 0;
      for (; s < nsp; ++s) {
        pos[s + 1] += m.element_strides[s + 1];
        if (pos[s + 1] <= static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s]) break;
        pos[s + 1] = m.lower_corner[s];
      }
      if (s == nsp) pos[n_dim] += m.element_strides[n_dim];
    }
    return rows;
  }
  // im2col::w / w::128: W alone moves (wOffset shifts it and the box); groups of pixels, each
  // followed by its wHalo halo pixels continuing along W (docs/blackwell-forms.md).
  const int64_t lo = static_cast<int64_t>(m.lower_corner[0]) + op.w_offset;
  const int64_t hi = static_cast<int64_t>(m.dims[1]) - 1 + m.upper_corner[0] + op.w_offset;
  const bool w128 = m.mode == TensorMode::im2col_w128;
  const uint32_t groups = w128 ? 4 : 1, per_group = w128 ? 32 : m.pixels_per_column;
  std::array<int64_t, kMaxRank> pos{};
  for (int d = 1; d <= n_dim; ++d) pos[d] = op.coords[d];
  pos[1] += op.w_offset;
  for (uint32_t g = 0; g < groups; ++g) {
    std::array<int64_t, kMaxRank> last = pos;
    for (uint32_t i = 0; i < per_group; ++i) {
      rows.push_back(pos);
      last = pos;
      pos[1] += m.element_strides[1];
      if (pos[1] > hi) {
        pos[1] = lo;
        pos[n_dim] += m.element_strides[n_dim];
      }
    }
    for (uint32_t h = 1; h <= op.w_halo; ++h) {
      std::array<int64_t, kMaxRank> halo = last;
      halo[1] += static_cast<int64_t>(h) * m.element_strides[1];
      rows.push_back(halo);
    }
  }
  return rows;
}

void AddressGenUnit::plan_im2col(const AguCommand& c, Plan& plan) const {
  const TensorMap& m = c.map;
  const TmaOp& op = c.cmd.op;
  const Unit u = unit_of(m);
  const uint32_t units = static_cast<uint32_t>(div_up(m.channels_per_pixel, u.elements));
  const uint32_t inner = units * u.smem_bytes, pitch = pitch_of(m, inner);
  const auto pixels = im2col_pixel_walk(m, op);
  plan.tx_bytes = static_cast<uint32_t>(pixels.size() * inner);
  plan.footprint = static_cast<uint64_t>(pixels.size()) * pitch;
  for (size_t row = 0; row < pixels.size(); ++row) {
    bool inside = true;
    uint64_t address = m.global_address;
    for (int d = 1; d < m.rank; ++d) {
      const int64_t x = pixels[row][d];
      inside = inside && x >= 0 && static_cast<uint64_t>(x) < m.dims[d];
      if (inside) address += static_cast<uint64_t>(x) * m.strides[d - 1];
    }
    plan_row(u, inside, address, op.coords[0], u.elements, units, m.dims[0], static_cast<uint32_t>(row * pitch), plan);
  }
}

// Stores clip dimension 0 at 16-byte chunks of the global row: a chunk starting inside the tensor
// goes out whole (its unit's bytes past the row's end too).
void AddressGenUnit::plan_store(const AguCommand& c, Plan& plan) const {
  const TensorMap& m = c.map;
  const TmaOp& op = c.cmd.op;
  const Unit u = unit_of(m);
  const uint32_t n0 = static_cast<uint32_t>(div_up(m.box[0], u.elements));
  const uint32_t inner = n0 * u.smem_bytes, pitch = pitch_of(m, inner);
  const int64_t inside_bytes = std::max<int64_t>(
      0, (static_cast<int64_t>(m.dims[0]) - op.coords[0]) * u.global_bytes / static_cast<int64_t>(u.elements));
  // Units whose first byte lies in a chunk that starts inside: k * global_bytes / 16 * 16 < inside_bytes.
  uint32_t stored = 0;
  while (stored < n0 && static_cast<int64_t>(stored) * u.global_bytes / 16 * 16 < inside_bytes) ++stored;
  const bool padded = u.smem_bytes != u.global_bytes;
  auto add_row = [&](uint64_t row_address, uint32_t row_off) {
    if (!stored) return;
    Run r{row_address + static_cast<uint64_t>(op.coords[0]) / u.elements * u.global_bytes, stored * u.global_bytes,
          row_off, padded ? stored : 0, padded ? u.smem_bytes : 0};
    plan.runs.push_back(r);
  };
  if (m.mode == TensorMode::gather4) {
    plan.footprint = 4 * pitch;
    for (uint32_t r = 0; r < 4; ++r) {
      const int64_t y = op.coords[1 + r];
      if (static_cast<uint64_t>(y) < m.dims[1]) add_row(m.global_address + static_cast<uint64_t>(y) * m.strides[0], r * pitch);
    }
    return;
  }
  OuterWalk w = outer_walk(m);
  plan.footprint = w.rows * pitch;
  uint32_t row_off = 0;
  do {
    uint64_t address;
    if (row_address(m, op, w, address)) add_row(address, row_off);
    row_off += pitch;
  } while (w.next());
}

uint64_t AddressGenUnit::next_issue_slot(uint64_t earliest) {
  uint64_t t = std::max(earliest, last_issue_cycle_);
  if (t == last_issue_cycle_ && issued_in_cycle_ >= std::max<uint32_t>(1, cfg_.agu_requests_per_cycle)) ++t;
  // Completions up to t are taken out only when the budget may be reached: t only grows, so one
  // left in is taken out by a later drain, and while the queue (finished ones included) is below
  // the budget, the requests truly outstanding are too. The same stalls, drained in batches.
  const uint32_t budget = std::max<uint32_t>(1, cfg_.max_outstanding_requests);
  if (outstanding_.size() >= budget) {
    while (!outstanding_.empty() && outstanding_.top() <= t) outstanding_.pop();
    if (outstanding_.size() >= budget) {
      t = std::max(t, outstanding_.top());
      outstanding_.pop();
      ++budget_stalls_;
    }
  }
  if (cpc_pool_) {
    const uint64_t admitted = cpc_pool_->admit(t);
    if (admitted > t) ++cpc_pool_stalls_;
    t = admitted;
  }
  if (t != last_issue_cycle_) issued_in_cycle_ = 0;
  last_issue_cycle_ = t;
  ++issued_in_cycle_;
  return t;
}

void AddressGenUnit::retire(uint64_t done) {
  outstanding_.push(done);
  if (cpc_pool_) cpc_pool_->add(cpc_member_, done);
}

void AddressGenUnit::run_load(AguCommand& c, const Plan& plan, uint64_t& t) {
  const TensorMap& m = c.map;
  MemRequest proto;
  proto.access = MemAccess::read;
  proto.promotion_bytes = m.l2_promotion == L2Promotion::none ? 0 : 32u << static_cast<int>(m.l2_promotion);
  proto.sm = sm_;
  proto.op_id = c.cmd.op_id;
  SmemDelivery d;
  d.op_id = c.cmd.op_id;
  d.smem_base = c.cmd.op.smem_addr;
  d.swizzle = m.swizzle;
  d.atom = m.swizzle_atom;
  d.dtype = m.dtype;
  d.oob_fill = m.oob_fill;
  d.cta_mask = c.cmd.cta_mask;
  const sc_core::sc_time now = sc_core::sc_time_stamp();  // no wait on the path: it does not move
  auto send = [&](uint64_t address, uint32_t bytes, uint64_t at) {
    req_gp_.set_command(tlm::TLM_READ_COMMAND);
    req_gp_.set_address(address);
    buffer_.resize(std::max<size_t>(bytes, 1));
    req_gp_.set_data_ptr(buffer_.data());
    req_gp_.set_data_length(bytes);
    ScopedExtension<MemRequest> e1(req_gp_, &proto);
    ScopedExtension<SmemDelivery> e2(req_gp_, &d);
    sc_core::sc_time dl = clock_.to_time(at) - now;
    req_out->b_transport(req_gp_, dl);
    const uint64_t done = clock_.to_cycles(now + dl);
    c.done_cycle = std::max(c.done_cycle, done);
    return done;
  };
  if (!plan.fills.empty()) {
    d.pieces = plan.fills;
    for (const SmemPiece& p : plan.fills) fill_bytes_ += p.bytes;
    send(0, 0, t);
  }
  for (const Run& r : plan.runs) {
    const uint64_t slot = next_issue_slot(t);
    d.pieces.assign(1, SmemPiece{r.box_offset, r.bytes, 0, false});
    retire(send(r.address, r.bytes, slot));
    t = std::max(slot, proto.accept_cycle > 0 ? proto.accept_cycle - 1 : slot);
    data_bytes_ += r.bytes;
  }
}

void AddressGenUnit::run_store(AguCommand& c, const Plan& plan, uint64_t& t) {
  const TensorMap& m = c.map;
  const TmaOp& op = c.cmd.op;
  MemRequest proto;
  proto.access = op.kind == OpKind::reduce ? MemAccess::reduce : MemAccess::write;
  proto.dtype = m.dtype;
  proto.reduce = op.reduce;
  proto.promotion_bytes = m.l2_promotion == L2Promotion::none ? 0 : 32u << static_cast<int>(m.l2_promotion);
  proto.sm = sm_;
  proto.op_id = c.cmd.op_id;
  SmemDelivery d;
  d.op_id = c.cmd.op_id;
  d.smem_base = op.smem_addr;
  d.swizzle = m.swizzle;
  d.atom = m.swizzle_atom;
  d.dtype = m.dtype;
  std::vector<uint8_t> packed;
  for (const Run& r : plan.runs) {
    const uint64_t slot = next_issue_slot(t);
    // Source bytes from shared memory (each unit of a padded sub-byte type on its own), then the write.
    const uint32_t smem_bytes = r.units ? r.units * r.smem_unit : r.bytes;
    buffer_.resize(smem_bytes);
    d.pieces.clear();
    if (r.units) {
      for (uint32_t k = 0; k < r.units; ++k) d.pieces.push_back(SmemPiece{r.box_offset + k * r.smem_unit, r.smem_unit, k * r.smem_unit, false});
    } else {
      d.pieces.push_back(SmemPiece{r.box_offset, r.bytes, 0, false});
    }
    gather_gp_.set_command(tlm::TLM_READ_COMMAND);
    gather_gp_.set_data_ptr(buffer_.data());
    gather_gp_.set_data_length(smem_bytes);
    sc_core::sc_time gl = clock_.to_time(slot) - sc_core::sc_time_stamp();
    {
      ScopedExtension<SmemDelivery> e(gather_gp_, &d);
      gather_out->b_transport(gather_gp_, gl);
    }
    uint8_t* data = buffer_.data();
    if (r.units && m.dtype == DataType::b6x16_p32) {  // .b6p2x16: 16 bytes of 6 bits each to 12 bytes
      packed.assign(r.bytes, 0);
      for (uint32_t k = 0; k < r.units; ++k) pack_b6p2x16(buffer_.data() + k * r.smem_unit, packed.data() + k * 12);
      data = packed.data();
    }
    req_gp_.set_command(tlm::TLM_WRITE_COMMAND);
    req_gp_.set_address(r.address);
    req_gp_.set_data_ptr(data);
    req_gp_.set_data_length(r.bytes);
    ScopedExtension<MemRequest> e1(req_gp_, &proto);
    req_out->b_transport(req_gp_, gl);
    const uint64_t done = clock_.to_cycles(sc_core::sc_time_stamp() + gl);
    c.done_cycle = std::max(c.done_cycle, done);
    retire(done);
    t = slot;
    data_bytes_ += r.bytes;
  }
}

void AddressGenUnit::run_prefetch(AguCommand& c, const Plan& plan, uint64_t& t) {
  MemRequest proto;
  proto.access = MemAccess::prefetch;
  proto.promotion_bytes =
      c.map.l2_promotion == L2Promotion::none ? 0 : 32u << static_cast<int>(c.map.l2_promotion);
  proto.sm = sm_;
  proto.op_id = c.cmd.op_id;
  for (const Run& r : plan.runs) {
    const uint64_t slot = next_issue_slot(t);
    req_gp_.set_command(tlm::TLM_READ_COMMAND);
    req_gp_.set_address(r.address);
    req_gp_.set_data_ptr(nullptr);
    req_gp_.set_data_length(r.bytes);
    ScopedExtension<MemRequest> e1(req_gp_, &proto);
    sc_core::sc_time dl = clock_.to_time(slot) - sc_core::sc_time_stamp();
    req_out->b_transport(req_gp_, dl);
    t = slot;
  }
  c.done_cycle = std::max(c.done_cycle, t);  // nobody waits for a prefetch's data
}

void AddressGenUnit::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  AguCommand* c = gp.get_extension<AguCommand>();
  if (!c) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  ++ops_;
  uint64_t t = clock_.to_cycles(sc_core::sc_time_stamp() + delay);
  c->done_cycle = t;
  c->fault_reason = check_fault(*c);
  Plan plan;
  if (c->fault_reason.empty()) {
    const OpKind kind = c->cmd.op.kind;
    if (kind == OpKind::store || kind == OpKind::reduce) plan_store(*c, plan);
    else if (c->map.mode == TensorMode::im2col || c->map.mode == TensorMode::im2col_w ||
             c->map.mode == TensorMode::im2col_w128)
      plan_im2col(*c, plan);
    else plan_tiled(*c, plan);
    if (kind != OpKind::prefetch && c->cmd.op.smem_addr + plan.footprint > smem_capacity_)
      c->fault_reason = "box does not fit in shared memory";
  }
  if (!c->fault_reason.empty()) {
    ++faults_;
    c->outcome = OpOutcome::fault;
    c->issue_end_cycle = c->done_cycle = t;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  c->outcome = OpOutcome::ok;
  c->tx_bytes = c->cmd.op.kind == OpKind::load ? plan.tx_bytes : 0;
  c->global_requests = static_cast<uint32_t>(plan.runs.size());
  runs_ += plan.runs.size();
  switch (c->cmd.op.kind) {
    case OpKind::load: run_load(*c, plan, t); break;
    case OpKind::store:
    case OpKind::reduce: run_store(*c, plan, t); break;
    case OpKind::prefetch: run_prefetch(*c, plan, t); break;
  }
  c->issue_end_cycle = t + 1;
  delay = clock_.to_time(c->done_cycle) - sc_core::sc_time_stamp();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void AddressGenUnit::collect_stats(StatsRecord& out) const {
  out.add("operations", ops_);
  out.add("faults", faults_);
  out.add("global_requests", runs_);
  out.add("data_bytes", data_bytes_);
  out.add("fill_bytes", fill_bytes_);
  out.add("outstanding_budget_stalls", budget_stalls_);
  if (cpc_pool_) out.add("cpc_pool_stalls", cpc_pool_stalls_);
}

}  // namespace tma
