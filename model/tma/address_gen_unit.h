// Address-generation unit of one TMA unit: turns a decoded descriptor and an operation into
// global requests (one contiguous run of a box row or an im2col pixel each) and out-of-bound
// fill pieces, paced at its issue rate and limited to the unit's outstanding-request budget.
// Out-of-bound parts produce fill without memory traffic. Operations that would trap on the
// GPU are reported as faults and not executed. This is the model's own address generation:
// it shares nothing with the reference engine but the descriptor types and value conversions.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tma/core/arch_config.h"
#include "tma/core/completion_queue.h"
#include "tma/core/cycle_time.h"
#include "tma/core/stats.h"
#include "tma/descriptor/tensor_map.h"
#include "tma/core/tlm_payloads.h"
#include "tma/tma/cpc_request_pool.h"

namespace tma {

// Dimension 0 (or an im2col pixel's channels) is copied in units: one element, one interleave
// slice, or one group of 16 sub-byte values (global and shared-memory sizes may differ).
struct AguUnit {
  uint32_t elements = 1, global_bytes = 1, smem_bytes = 1;
};

// The unit's request to generate one operation; the AGU fills in the results.
struct AguCommand : tlm::tlm_extension<AguCommand> {
  TmaCommand cmd;
  TensorMap map;
  GpuArch arch = GpuArch::sm90;
  // results
  OpOutcome outcome = OpOutcome::ok;
  std::string fault_reason;
  uint32_t tx_bytes = 0;        // bytes the operation writes to each destination's shared memory
  uint64_t issue_end_cycle = 0; // the AGU is free for the next operation
  uint64_t done_cycle = 0;      // the operation's last byte has landed (or been acknowledged)
  uint32_t global_requests = 0;

  tlm::tlm_extension_base* clone() const override { return new AguCommand(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const AguCommand&>(e); }
};

class AddressGenUnit : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_target_socket<AddressGenUnit> cmd_in;         // from the unit's command stage
  tlm_utils::simple_initiator_socket<AddressGenUnit> req_out;     // to the L2 promotion splitter
  tlm_utils::simple_initiator_socket<AddressGenUnit> gather_out;  // to the crossbar (store sources)

  AddressGenUnit(sc_core::sc_module_name name, const ArchConfig& arch, int sm);
  void collect_stats(StatsRecord& out) const override;
  // Requests issued whose completion has not been taken out yet: at least those outstanding at the
  // unit's issue cycle, at most the budget (next_issue_slot drains finished ones lazily).
  size_t outstanding_requests() const { return outstanding_.size(); }
  // The requests in flight this unit shares with the other units of its CPC (none: only its own limit).
  void set_cpc_pool(CpcRequestPool* pool) {
    cpc_pool_ = pool;
    cpc_member_ = pool ? pool->join() : 0;
  }

 private:
  // One contiguous global run and where its bytes go in the box (or come from, for stores).
  struct Run {
    uint64_t address = 0;
    uint32_t bytes = 0;        // global bytes
    uint32_t box_offset = 0;
    // Stores of padded sub-byte units: the shared-memory side is `units` units of `smem_unit`
    // bytes each (b6x16_p32 packs each 16 to 12 global bytes); 0 when both sides match.
    uint32_t units = 0;
    uint32_t smem_unit = 0;
  };
  using Unit = AguUnit;
  // What the shape of the operation produces, before timing.
  struct Plan {
    std::vector<Run> runs;           // data to move
    std::vector<SmemPiece> fills;    // out-of-bound fill (loads)
    uint64_t footprint = 0;          // bytes of the box in shared memory (with padding)
    uint32_t tx_bytes = 0;
    SwizzleMode swizzle = SwizzleMode::none;
    SwizzleAtom atom = SwizzleAtom::b16;
  };

  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  // Faults the GPU raises for this operation, or "".
  std::string check_fault(const AguCommand& c) const;
  void plan_tiled(const AguCommand& c, Plan& plan) const;
  void plan_im2col(const AguCommand& c, Plan& plan) const;
  void plan_store(const AguCommand& c, Plan& plan) const;
  // One row of a load: `count` units from coordinate `start` (stepping `step` coordinates) of a
  // row whose element 0 is at `row_address` (or outside the tensor: `row_inside` false).
  void plan_row(const Unit& u, bool row_inside, uint64_t row_address, int64_t start,
                uint32_t step, uint32_t count, uint64_t dim0, uint32_t row_off, Plan& plan) const;
  // Issue timing: the cycle the next request may go, given rate and outstanding budget.
  uint64_t next_issue_slot(uint64_t earliest);
  void retire(uint64_t done);
  void run_load(AguCommand& c, const Plan& plan, uint64_t& t);
  void run_store(AguCommand& c, const Plan& plan, uint64_t& t);
  void run_prefetch(AguCommand& c, const Plan& plan, uint64_t& t);

  CycleClock clock_;
  TmaUnitConfig cfg_;
  uint32_t smem_capacity_;
  int sm_;
  uint64_t issued_in_cycle_ = 0, last_issue_cycle_ = 0;
  CompletionQueue outstanding_;
  CpcRequestPool* cpc_pool_ = nullptr;
  uint32_t cpc_member_ = 0;  // this unit's number in its pool
  tlm::tlm_generic_payload req_gp_, gather_gp_;
  std::vector<uint8_t> buffer_;
  uint64_t ops_ = 0, faults_ = 0, runs_ = 0, fill_bytes_ = 0, data_bytes_ = 0, budget_stalls_ = 0, cpc_pool_stalls_ = 0;
};

}  // namespace tma
