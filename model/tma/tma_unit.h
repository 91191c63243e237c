// One SM's Tensor Memory Accelerator: takes TMA instructions on cmd_in (a generic payload with a
// TmaCommand extension), fetches the descriptor through its DescriptorCache, has the
// AddressGenUnit generate the requests, the L2PromotionSplitter send them to the L2, the
// SwizzleCrossbar place the data in SmemBanks, and reports completion (mbarrier complete_tx)
// through completion_out at the simulated time the last byte lands. Several operations are in
// flight at once; a full command queue holds the issuer back.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/peq_with_get.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <deque>
#include <memory>
#include <queue>
#include <unordered_map>
#include <vector>

#include "tma/tma/address_gen_unit.h"
#include "tma/core/arch_config.h"
#include "tma/core/cycle_time.h"
#include "tma/tma/descriptor_cache.h"
#include "tma/core/invariant_log.h"
#include "tma/tma/l2_promotion_splitter.h"
#include "tma/tma/smem_banks.h"
#include "tma/core/stats.h"
#include "tma/tma/swizzle_crossbar.h"
#include "tma/core/tlm_payloads.h"

namespace tma {

// Observes every finished operation (the scoreboard and the trace writer listen here).
struct OpRecord {
  TmaCommand cmd;
  TensorMap map;
  bool map_valid = false;
  OpOutcome outcome = OpOutcome::ok;
  std::string fault_reason;
  uint32_t tx_bytes = 0;
  uint64_t issue_cycle = 0, start_cycle = 0, done_cycle = 0;
  bool descriptor_hit = false;
  uint32_t global_requests = 0;
};
class OpObserver {
 public:
  virtual ~OpObserver() = default;
  // Right before the operation's functional effect (memory and shared memory as they were).
  virtual void op_starting(int /*sm*/, const TmaCommand& /*cmd*/, const TensorMap& /*map*/) {}
  // Right after it (the effect is done; done_cycle says when it completes in simulated time).
  virtual void op_finished(int sm, const OpRecord& rec) = 0;
};

class TmaUnit : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_target_socket<TmaUnit> cmd_in;
  tlm::tlm_initiator_socket<> mem_out;        // requests to the L2 (splitter)
  tlm::tlm_initiator_socket<> desc_mem_out;   // descriptor fetches to the L2
  tlm::tlm_initiator_socket<> dsmem_out;      // multicast data to other CTAs
  tlm::tlm_target_socket<> dsmem_in;          // multicast data from other CTAs
  tlm_utils::simple_initiator_socket<TmaUnit> completion_out;
  tlm_utils::simple_initiator_socket<TmaUnit> multicast_out;  // asks the fabric when a multicast may start

  TmaUnit(sc_core::sc_module_name name, const ArchConfig& arch, int sm, int cta_in_cluster, GpuArch gpu,
          InvariantLog& invariants);
  void collect_stats(StatsRecord& out) const override;

  SmemBanks& smem() { return smem_; }
  void add_observer(OpObserver* o) { observers_.push_back(o); }
  void set_request_trace(RequestTraceSink* sink) { splitter_.set_trace_sink(sink, sm_); }
  // The requests in flight this unit's SM shares with its CPC (GpuSystem, tma.cpc_outstanding_requests).
  void set_cpc_pool(CpcRequestPool* pool) { agu_.set_cpc_pool(pool); }
  size_t queue_depth() const { return queue_.size(); }
  // Operations accepted and not yet completed (for invariant checks and progress).
  uint64_t ops_in_flight() const { return accepted_ - completed_ops_; }
  // At the end of a run: every accepted operation must have completed (reports what did not).
  void check_drained();

 private:
  struct Pending {
    TmaCommand cmd;
    uint64_t arrival_cycle;
  };
  struct Notice {
    tlm::tlm_generic_payload gp;
    TmaCompletion completion;
  };

  void accept(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void control();
  void deliver_completions();
  void schedule_completion(const TmaCompletion& c, uint64_t cycle);
  uint64_t process(const Pending& p, uint64_t t);
  // One MulticastSlot call at cycle t; returns the cycle the fabric answers (acquire: when the
  // multicast may start).
  uint64_t multicast_slot(MulticastPhase phase, uint64_t t, uint32_t bytes = 0, uint64_t done = 0);

  CycleClock clock_;
  ArchConfig arch_;
  int sm_, cta_;
  GpuArch gpu_;
  DescriptorCache desc_cache_;
  AddressGenUnit agu_;
  L2PromotionSplitter splitter_;
  SwizzleCrossbar crossbar_;
  SmemBanks smem_;
  tlm_utils::simple_initiator_socket<TmaUnit> ctl_desc_out_, ctl_agu_out_;

  std::deque<Pending> queue_;
  sc_core::sc_event queued_, dequeued_;
  // Issuers blocked on a full command queue, by the warp scheduler they issue from
  // (TmaCommand::sub_partition), each scheduler's in the order they blocked (tickets); the queue
  // takes them from the schedulers in turn, starting at next_scheduler_.
  std::vector<std::deque<uint64_t>> blocked_;
  uint64_t next_ticket_ = 0;
  uint32_t waiting_issuers_ = 0, next_scheduler_ = 0;
  uint64_t next_admitted() const;  // the ticket the queue takes next
  uint64_t local_cycle_ = 0;  // the unit's own time, ahead of SystemC time by up to a quantum
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> inflight_done_;
  tlm_utils::peq_with_get<Notice> peq_;
  std::vector<std::unique_ptr<Notice>> free_notices_;
  tlm::tlm_generic_payload ctl_gp_, multicast_gp_;
  std::vector<OpObserver*> observers_;
  InvariantLog& invariants_;
  std::unordered_map<uint64_t, uint32_t> notices_owed_;  // op id -> completion notices still to send

  uint64_t accepted_ = 0, completed_ = 0, completed_ops_ = 0, faults_ = 0, queue_full_stalls_ = 0, inflight_stalls_ = 0;
  uint64_t loads_ = 0, stores_ = 0, reductions_ = 0, prefetches_ = 0, descriptor_prefetches_ = 0;
  uint64_t descriptor_invalidations_ = 0, bytes_loaded_ = 0, busy_cycles_ = 0;
  uint64_t bytes_delivered_ = 0;  // loads' complete_tx bytes summed over every receiving CTA (multicast: each)
  uint64_t latency_sum_ = 0, latency_max_ = 0;
};

}  // namespace tma
