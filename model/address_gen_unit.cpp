#include "address_gen_unit.h"

#include <algorithm>

#include "element_ops.h"

namespace tma {

namespace {

uint32_t slice_bytes(Interleave i) { return i == Interleave::b16 ? 16 : i == Interleave::b32 ? 32 : 0; }

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
  if (c.arch == GpuArch::sm90 && (m.mode == TensorMode::gather4 || m.mode == TensorMode::im2col_w ||
                                  m.mode == TensorMode::im2col_w128))
    return "mode " + to_string(m.mode) + " does not exist on sm_90";
  if (m.mode != TensorMode::tiled && m.mode != TensorMode::im2col)
    return "mode " + to_string(m.mode) + " is not modelled by the pipeline";
  for (int i = 0; i < m.rank; ++i)
    if (m.dims[i] > 0xFFFFFFFFull) return "a dimension of 2^32 elements traps";
  if (op.kind == OpKind::prefetch) return "";
  if (op.smem_addr % 128) return "shared-memory address not 128-byte aligned";
  const uint32_t e = element_bytes(m.dtype);
  if (m.interleave == Interleave::none && (static_cast<int64_t>(op.coords[0]) * e) % 16)
    return "box start in dimension 0 not 16-byte aligned";
  if (m.mode == TensorMode::im2col) {
    for (int s = 0; s < m.rank - 2; ++s) {
      const int64_t lo = m.lower_corner[s], hi = static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s];
      if (op.coords[s + 1] < lo || op.coords[s + 1] > hi) return "im2col filter base outside the bounding box";
    }
    if (op.kind != OpKind::load) return "im2col stores are not modelled";
  }
  if (op.kind == OpKind::store || op.kind == OpKind::reduce) {
    for (int i = 0; i < m.rank; ++i)
      if (op.coords[i] < 0) return "store or reduction with a negative coordinate";
    if (m.interleave != Interleave::none) return "interleaved stores are not modelled";
    if (op.kind == OpKind::reduce && !reduce_supported(m.dtype, op.reduce)) return "reduction not supported on this type";
  }
  return "";
}

void AddressGenUnit::plan_tiled(const AguCommand& c, Plan& plan) const {
  const TensorMap& m = c.map;
  const TmaOp& op = c.cmd.op;
  const bool il = m.interleave != Interleave::none;
  const uint32_t unit = il ? slice_bytes(m.interleave) : element_bytes(m.dtype);
  const uint32_t step0 = il ? m.element_strides[0] : 1;
  const uint32_t n0 = static_cast<uint32_t>(div_up(m.box[0], step0));
  const uint32_t inner = n0 * unit, pitch = pitch_of(m, inner);
  OuterWalk w = outer_walk(m);
  plan.tx_bytes = static_cast<uint32_t>(w.rows * inner);
  plan.footprint = w.rows * pitch;
  // Units of dimension 0 inside the tensor: k0 in [k_lo, k_hi).
  const int64_t c0 = op.coords[0], d0 = static_cast<int64_t>(m.dims[0]);
  const int64_t k_lo = std::min<int64_t>(n0, c0 >= 0 ? 0 : div_up(static_cast<uint64_t>(-c0), step0));
  const int64_t k_hi = std::max<int64_t>(k_lo, std::min<int64_t>(n0, c0 >= d0 ? 0 : div_up(d0 - c0, step0)));
  uint32_t row_off = 0;
  do {
    uint64_t address;
    if (!row_address(m, op, w, address) || k_lo == k_hi) {
      add_fill(plan.fills, row_off, inner);
    } else {
      add_fill(plan.fills, row_off, static_cast<uint32_t>(k_lo) * unit);
      if (step0 == 1) {
        plan.runs.push_back(Run{address + static_cast<uint64_t>(c0 + k_lo) * unit,
                                static_cast<uint32_t>(k_hi - k_lo) * unit, row_off + static_cast<uint32_t>(k_lo) * unit});
      } else {
        for (int64_t k = k_lo; k < k_hi; ++k)
          plan.runs.push_back(Run{address + static_cast<uint64_t>(c0 + k * step0) * unit, unit,
                                  row_off + static_cast<uint32_t>(k) * unit});
      }
      add_fill(plan.fills, row_off + static_cast<uint32_t>(k_hi) * unit, static_cast<uint32_t>(n0 - k_hi) * unit);
    }
    row_off += pitch;
  } while (w.next());
}

void AddressGenUnit::plan_im2col(const AguCommand& c, Plan& plan) const {
  const TensorMap& m = c.map;
  const TmaOp& op = c.cmd.op;
  const int nsp = m.rank - 2, n_dim = m.rank - 1;
  const uint32_t e = element_bytes(m.dtype);
  const uint32_t inner = m.channels_per_pixel * e, pitch = pitch_of(m, inner);
  plan.tx_bytes = m.pixels_per_column * inner;
  plan.footprint = static_cast<uint64_t>(m.pixels_per_column) * pitch;
  // Channels inside the tensor.
  const int64_t c0 = op.coords[0], C = static_cast<int64_t>(m.dims[0]);
  const int64_t ch_lo = std::clamp<int64_t>(-c0, 0, m.channels_per_pixel);
  const int64_t ch_hi = std::clamp<int64_t>(C - c0, ch_lo, m.channels_per_pixel);
  std::array<int64_t, 3> pos{};
  for (int s = 0; s < nsp; ++s) pos[s] = op.coords[s + 1];
  int64_t n = op.coords[n_dim];
  for (uint32_t pix = 0; pix < m.pixels_per_column; ++pix) {
    const uint32_t row_off = pix * pitch;
    bool inside = n >= 0 && n < static_cast<int64_t>(m.dims[n_dim]) && ch_lo < ch_hi;
    uint64_t address = m.global_address + static_cast<uint64_t>(std::max<int64_t>(n, 0)) * m.strides[n_dim - 1];
    for (int s = 0; s < nsp && inside; ++s) {
      const int64_t x = pos[s] + op.im2col_offsets[s];
      inside = x >= 0 && x < static_cast<int64_t>(m.dims[s + 1]);
      address += static_cast<uint64_t>(std::max<int64_t>(x, 0)) * m.strides[s];
    }
    if (!inside) {
      add_fill(plan.fills, row_off, inner);
    } else {
      add_fill(plan.fills, row_off, static_cast<uint32_t>(ch_lo) * e);
      plan.runs.push_back(Run{address + static_cast<uint64_t>(c0 + ch_lo) * e, static_cast<uint32_t>(ch_hi - ch_lo) * e,
                              row_off + static_cast<uint32_t>(ch_lo) * e});
      add_fill(plan.fills, row_off + static_cast<uint32_t>(ch_hi) * e,
               static_cast<uint32_t>(m.channels_per_pixel - ch_hi) * e);
    }
    // Next pixel: W fastest; a spatial position past the box's far corner restarts at the near one.
    int s = 0;
    for (; s < nsp; ++s) {
      pos[s] += m.element_strides[s + 1];
      if (pos[s] <= static_cast<int64_t>(m.dims[s + 1]) - 1 + m.upper_corner[s]) break;
      pos[s] = m.lower_corner[s];
    }
    if (s == nsp) n += m.element_strides[n_dim];
  }
}

// Stores clip dimension 0 at 16-byte chunks: a chunk starting inside the tensor goes out whole.
void AddressGenUnit::plan_store(const AguCommand& c, Plan& plan) const {
  const TensorMap& m = c.map;
  const TmaOp& op = c.cmd.op;
  const uint32_t e = element_bytes(m.dtype);
  const uint32_t inner = m.box[0] * e, pitch = pitch_of(m, inner);
  OuterWalk w = outer_walk(m);
  plan.footprint = w.rows * pitch;
  const int64_t inside = std::clamp<int64_t>(static_cast<int64_t>(m.dims[0]) - op.coords[0], 0, m.box[0]);
  const uint32_t bytes = std::min<uint32_t>(inner, static_cast<uint32_t>(div_up(inside * e, 16) * 16));
  uint32_t row_off = 0;
  do {
    uint64_t address;
    if (bytes && row_address(m, op, w, address))
      plan.runs.push_back(Run{address + static_cast<uint64_t>(op.coords[0]) * e, bytes, row_off});
    row_off += pitch;
  } while (w.next());
}

uint64_t AddressGenUnit::next_issue_slot(uint64_t earliest) {
  uint64_t t = std::max(earliest, last_issue_cycle_);
  if (t == last_issue_cycle_ && issued_in_cycle_ >= std::max<uint32_t>(1, cfg_.agu_requests_per_cycle)) ++t;
  while (!outstanding_.empty() && outstanding_.top() <= t) outstanding_.pop();
  if (outstanding_.size() >= std::max<uint32_t>(1, cfg_.max_outstanding_requests)) {
    t = std::max(t, outstanding_.top());
    outstanding_.pop();
    ++budget_stalls_;
  }
  if (t != last_issue_cycle_) issued_in_cycle_ = 0;
  last_issue_cycle_ = t;
  ++issued_in_cycle_;
  return t;
}

void AddressGenUnit::retire(uint64_t done) { outstanding_.push(done); }

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
  auto send = [&](uint64_t address, uint32_t bytes, uint64_t at) {
    req_gp_.set_command(tlm::TLM_READ_COMMAND);
    req_gp_.set_address(address);
    buffer_.resize(std::max<size_t>(bytes, 1));
    req_gp_.set_data_ptr(buffer_.data());
    req_gp_.set_data_length(bytes);
    ScopedExtension<MemRequest> e1(req_gp_, &proto);
    ScopedExtension<SmemDelivery> e2(req_gp_, &d);
    sc_core::sc_time dl = clock_.to_time(at) - sc_core::sc_time_stamp();
    req_out->b_transport(req_gp_, dl);
    const uint64_t done = clock_.to_cycles(sc_core::sc_time_stamp() + dl);
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
  for (const Run& r : plan.runs) {
    const uint64_t slot = next_issue_slot(t);
    // Source bytes from shared memory, then the write.
    buffer_.resize(r.bytes);
    d.pieces.assign(1, SmemPiece{r.box_offset, r.bytes, 0, false});
    gather_gp_.set_command(tlm::TLM_READ_COMMAND);
    gather_gp_.set_data_ptr(buffer_.data());
    gather_gp_.set_data_length(r.bytes);
    sc_core::sc_time gl = clock_.to_time(slot) - sc_core::sc_time_stamp();
    {
      ScopedExtension<SmemDelivery> e(gather_gp_, &d);
      gather_out->b_transport(gather_gp_, gl);
    }
    req_gp_.set_command(tlm::TLM_WRITE_COMMAND);
    req_gp_.set_address(r.address);
    req_gp_.set_data_ptr(buffer_.data());
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
    else if (c->map.mode == TensorMode::im2col) plan_im2col(*c, plan);
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
}

}  // namespace tma
