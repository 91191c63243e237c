// L2 promotion request splitter of one TMA unit: cuts each global request from the address
// generator at 128-byte lines (32-byte sector masks), sends them to the L2 tagged with the
// descriptor's L2 promotion, and hands each line's returned data to the swizzle crossbar with
// the shared-memory pieces it feeds. Counts what it asked for and what the L2 filled from DRAM.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tma/core/arch_config.h"
#include "tma/core/cycle_time.h"
#include "tma/core/stats.h"
#include "tma/core/tlm_payloads.h"
#include "tma/core/trace_sink.h"

namespace tma {

class L2PromotionSplitter : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_target_socket<L2PromotionSplitter> req_in;     // from the address generator
  tlm_utils::simple_initiator_socket<L2PromotionSplitter> mem_out;  // to the L2
  tlm_utils::simple_initiator_socket<L2PromotionSplitter> data_out; // to the swizzle crossbar

  L2PromotionSplitter(sc_core::sc_module_name name, const ArchConfig& arch);
  void collect_stats(StatsRecord& out) const override;
  void set_trace_sink(RequestTraceSink* sink, int sm) {
    trace_ = sink;
    sm_ = sm;
  }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);

  CycleClock clock_;
  uint32_t line_bytes_, sector_bytes_;
  // Both are powers of two in every architecture file: a mask and a shift then, not divisions
  // (a variable divisor compiles to a divide instruction, several per line).
  bool pow2_ = false;
  uint32_t sector_shift_ = 0;
  uint32_t line_offset(uint64_t a) const {
    return static_cast<uint32_t>(pow2_ ? a & (line_bytes_ - 1) : a % line_bytes_);
  }
  uint32_t sector_of(uint32_t in_line) const { return pow2_ ? in_line >> sector_shift_ : in_line / sector_bytes_; }
  uint64_t next_free_ = 0;
  RequestTraceSink* trace_ = nullptr;
  int sm_ = 0;  // cycle the splitter can emit its next L2 request
  tlm::tlm_generic_payload mem_gp_, data_gp_;
  SmemDelivery piece_delivery_;
  uint64_t requests_in_ = 0, l2_requests_ = 0, sectors_requested_ = 0, bytes_requested_ = 0;
  uint64_t dram_fill_bytes_ = 0, sectors_missed_ = 0, write_bytes_ = 0, reduce_bytes_ = 0, prefetch_bytes_ = 0;
};

}  // namespace tma
