#include "tma/tma/l2_promotion_splitter.h"

#include <algorithm>

namespace tma {

L2PromotionSplitter::L2PromotionSplitter(sc_core::sc_module_name name, const ArchConfig& arch)
    : sc_module(name), req_in("req_in"), mem_out("mem_out"), data_out("data_out"), clock_(arch.sm_clock_mhz),
      line_bytes_(arch.l2.line_bytes), sector_bytes_(arch.l2.sector_bytes) {
  req_in.register_b_transport(this, &L2PromotionSplitter::b_transport);
  auto is_pow2 = [](uint32_t x) { return x && !(x & (x - 1)); };
  pow2_ = is_pow2(line_bytes_) && is_pow2(sector_bytes_);
  if (pow2_) sector_shift_ = static_cast<uint32_t>(__builtin_ctz(sector_bytes_));
}

void L2PromotionSplitter::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  MemRequest* proto = gp.get_extension<MemRequest>();
  SmemDelivery* d = gp.get_extension<SmemDelivery>();
  if (!proto) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  ++requests_in_;
  // SystemC time does not move during the call (nothing on the path waits): read it once.
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const uint64_t t = clock_.to_cycles(now + delay);
  uint64_t issue = std::max(t, next_free_);
  uint64_t done = t;
  const uint64_t address = gp.get_address();
  const uint32_t bytes = gp.get_data_length();
  uint8_t* data = gp.get_data_ptr();
  const bool loads = proto->access == MemAccess::read;

  // The delivery's header once per call; its pieces are rebuilt for each line below.
  if (loads && d) piece_delivery_.copy_header(*d);
  // Fill pieces need no memory: they go to the crossbar straight away.
  if (loads && d) {
    piece_delivery_.pieces.clear();
    for (const SmemPiece& p : d->pieces)
      if (p.fill) piece_delivery_.pieces.push_back(p);
    if (!piece_delivery_.pieces.empty()) {
      data_gp_.set_command(tlm::TLM_WRITE_COMMAND);
      data_gp_.set_data_ptr(nullptr);
      data_gp_.set_data_length(0);
      ScopedExtension<SmemDelivery> ext(data_gp_, &piece_delivery_);
      sc_core::sc_time dl = clock_.to_time(issue) - now;
      data_out->b_transport(data_gp_, dl);
      done = std::max(done, clock_.to_cycles(now + dl));
    }
  }

  // One L2 request per 128-byte line the range touches.
  for (uint32_t off = 0; off < bytes;) {
    const uint64_t a = address + off;
    const uint32_t in_line = line_offset(a);
    const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(bytes - off, line_bytes_ - in_line));
    MemRequest req = *proto;
    const uint32_t s0 = sector_of(in_line), s1 = sector_of(in_line + n - 1);
    req.sector_mask = static_cast<uint8_t>(((1u << (s1 + 1)) - 1) & ~((1u << s0) - 1));
    sectors_requested_ += s1 - s0 + 1;
    ++l2_requests_;
    bytes_requested_ += n;
    if (proto->access == MemAccess::write) write_bytes_ += n;
    if (proto->access == MemAccess::reduce) reduce_bytes_ += n;
    if (proto->access == MemAccess::prefetch) prefetch_bytes_ += n;
    mem_gp_.set_command(loads || proto->access == MemAccess::prefetch ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
    mem_gp_.set_address(a);
    mem_gp_.set_data_ptr(data ? data + off : nullptr);
    mem_gp_.set_data_length(n);
    sc_core::sc_time dl = clock_.to_time(issue) - now;
    {
      ScopedExtension<MemRequest> ext(mem_gp_, &req);
      mem_out->b_transport(mem_gp_, dl);
    }
    dram_fill_bytes_ += req.dram_fill_bytes;
    sectors_missed_ += req.sectors_missed;
    uint64_t ready = clock_.to_cycles(now + dl);
    if (trace_) trace_->l2_request(sm_, proto->op_id, a, n, proto->access, issue, ready);
    // The line's data feeds the pieces that overlap it.
    if (loads && d) {
      piece_delivery_.pieces.clear();
      for (const SmemPiece& p : d->pieces) {
        if (p.fill) continue;
        const uint32_t lo = std::max(p.data_offset, off), hi = std::min(p.data_offset + p.bytes, off + n);
        if (lo >= hi) continue;
        // Field by field: a whole temporary is stored in parts and read back whole (a stalled forward).
        SmemPiece& q = piece_delivery_.pieces.emplace_back();
        q.box_offset = p.box_offset + (lo - p.data_offset);
        q.bytes = hi - lo;
        q.data_offset = lo - off;
      }
      data_gp_.set_command(tlm::TLM_WRITE_COMMAND);
      data_gp_.set_data_ptr(data + off);
      data_gp_.set_data_length(n);
      ScopedExtension<SmemDelivery> ext(data_gp_, &piece_delivery_);
      sc_core::sc_time dd = clock_.to_time(ready) - now;
      data_out->b_transport(data_gp_, dd);
      ready = clock_.to_cycles(now + dd);
    }
    done = std::max(done, ready);
    off += n;
    ++issue;
  }
  next_free_ = issue;
  proto->accept_cycle = issue;
  delay = clock_.to_time(done) - now;
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void L2PromotionSplitter::collect_stats(StatsRecord& out) const {
  out.add("requests_in", requests_in_);
  out.add("l2_requests", l2_requests_);
  out.add("sectors_requested", sectors_requested_);
  out.add("bytes_requested", bytes_requested_);
  out.add("sectors_missed", sectors_missed_);
  out.add("dram_fill_bytes", dram_fill_bytes_);
  out.add("write_bytes", write_bytes_);
  out.add("reduce_bytes", reduce_bytes_);
  out.add("prefetch_bytes", prefetch_bytes_);
}

}  // namespace tma
