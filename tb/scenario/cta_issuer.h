// The instruction streams of the CTAs one SM runs. The SM has one or more CTA slots (occupancy:
// workload.ctas_per_sm), each running its CTAs one after another: a producer that issues each
// pipeline step's TMA loads into its shared-memory stage once the consumer has released the
// stage, and a consumer that waits for the stage's completions (its mbarrier), computes,
// releases, and issues the step's stores. The slots issue into the SM's one TMA unit, their
// commands interleaved in arrival order. A slot's next CTA starts when its last one has ended
// (its stores and prefetches complete; with clusters, every CTA of the cluster's in that slot),
// launch.cta_dispatch_ns later. CTAs of one cluster coordinate through ClusterSync so that a
// multicast load waits until every destination has released its stage.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tma/core/cycle_time.h"
#include "tma/core/invariant_log.h"
#include "tma/core/stats.h"
#include "tma/scenario/workload.h"

namespace tma {

// Stage releases of every CTA of a cluster: released[cta][stage] counts the stage's releases;
// exited[cta] the CTAs that SM has ended, ctas[cta] how many it runs.
struct ClusterSync {
  std::vector<std::vector<uint64_t>> released;
  std::vector<uint64_t> exited, ctas;
  sc_core::sc_event changed;
};

// CTAs that whichever SM is free first takes, in grid order (a GPU's block scheduler).
struct CtaQueue {
  std::vector<const CtaProgram*> ctas;
  size_t next = 0;
};

class CtaIssuer : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_initiator_socket<CtaIssuer> cmd_out;
  tlm_utils::simple_target_socket<CtaIssuer> completion_in;
  tlm_utils::simple_initiator_socket<CtaIssuer> lsu_out;  // the warps' own shared-memory reads

  // `own`: the CTAs this SM runs first, in order (cluster->ctas[cta] must count them); then, when
  // `queue` is given, the next CTA of the queue each time the SM is free (no clusters).
  CtaIssuer(sc_core::sc_module_name name, std::vector<const CtaProgram*> own, std::shared_ptr<CtaQueue> queue,
            uint32_t stages, int sm, int cta, std::shared_ptr<ClusterSync> cluster, double clock_mhz,
            InvariantLog& invariants);
  // Several CTA slots: slot k runs own[k] (its cluster's sync clusters[k]) and then, when the
  // queue is given, the queue's next CTA each time it is free; its shared memory starts at
  // k x smem_stride; a slot's later CTA starts dispatch_cycles after its last one ended, each
  // CTA issues its first operation setup_cycles after it starts, and each of its steps at the
  // soonest issue_cycles after its last; a consumer or producer that waited for a stage goes on
  // handoff_cycles after the signal. Slot k's producer (the first of its CTA's warps_per_cta warps)
  // issues from the SM's warp scheduler (k x warps_per_cta) % sub_partitions.
  CtaIssuer(sc_core::sc_module_name name, std::vector<std::vector<const CtaProgram*>> own,
            std::shared_ptr<CtaQueue> queue, uint32_t stages, int sm, int cta,
            std::vector<std::shared_ptr<ClusterSync>> clusters, uint32_t smem_stride, uint64_t dispatch_cycles,
            uint64_t setup_cycles, uint64_t issue_cycles, uint64_t handoff_cycles, uint32_t warps_per_cta,
            uint32_t sub_partitions, double clock_mhz, InvariantLog& invariants);
  void collect_stats(StatsRecord& out) const override;

  bool finished() const { return finished_; }
  const sc_core::sc_event& finished_event() const { return finished_event_; }
  // Issue-to-completion latency of every operation this SM's CTAs issued, in cycles.
  const std::vector<uint32_t>& latencies() const { return latencies_; }
  uint64_t faults() const { return faults_; }
  uint64_t finish_cycle() const { return finish_cycle_; }
  // Occupancy: the CTA slots, the most CTAs that ran at once, CTA-cycles resident (the integral
  // of the CTAs running over time, up to the SM's end), and the most CTAs one slot ran (waves).
  uint32_t slots() const { return static_cast<uint32_t>(slots_.size()); }
  uint32_t max_concurrent_ctas() const { return max_running_; }
  uint64_t cta_cycles() const { return cta_cycles_; }
  uint64_t waves() const;
  uint64_t ctas_run() const;
  // The consumers' time: each slot's until it finished (`now` for one that has not).
  uint64_t consumer_cycles(uint64_t now) const;

 private:
  // One CTA slot: its CTAs' steps one after another (a step's index is its mbarrier) and where
  // each CTA's steps end, its stage releases and bulk operations.
  struct Slot {
    uint32_t index = 0;
    uint8_t sub_partition = 0;  // its producer warp's scheduler
    std::vector<const CtaProgram*> own;
    std::shared_ptr<ClusterSync> cluster;
    std::vector<const Step*> steps;
    std::vector<size_t> cta_end;
    uint64_t prologues_issued = 0;
    uint64_t released_steps = 0;  // the consumer releases steps in order: every step below this one
    bool producer_done = false;
    sc_core::sc_event cta_started;
    std::vector<uint32_t> got;  // completions per step
    uint64_t next_op_id = 0;
    uint64_t bulk_issued = 0, bulk_done = 0;
    std::unordered_set<uint64_t> after_pending;  // op ids of the steps' `after` operations not yet complete
    sc_core::sc_event completion_event;
    bool finished = false;
    uint64_t finish_cycle = 0;
    uint64_t last_end_cycle = 0;  // when its last CTA ended
    uint64_t ctas_run = 0;
  };
  void init(uint32_t slots);
  void producer() { produce(*slots_[0]); }
  void consumer() { consume_all(*slots_[0]); }
  void produce(Slot& s);
  void consume_all(Slot& s);
  void issue(Slot& s, IssueOp op, uint32_t mbarrier);
  void completed(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  // Reads the step's tiles as ldmatrix would; returns the cycle the last read is done.
  uint64_t read_tiles(const Slot& s, const Step& st);
  // The slot's k-th CTA once it may start (null: no more), and the consumer's work on step i.
  const CtaProgram* start_cta(Slot& s, uint64_t k);
  void consume(Slot& s, size_t i);
  void running_changed(int delta);  // a CTA started (+1) or ended (-1) now

  std::vector<std::unique_ptr<Slot>> slots_;
  std::shared_ptr<CtaQueue> queue_;
  uint32_t stages_;
  int sm_, cta_;
  uint32_t smem_stride_ = 0;
  uint64_t dispatch_cycles_ = 0;
  uint64_t setup_cycles_ = 0;
  uint64_t issue_cycles_ = 0;
  uint64_t handoff_cycles_ = 0;
  InvariantLog& invariants_;
  CycleClock clock_;
  std::unordered_map<uint64_t, uint64_t> issued_at_;  // op id -> issue cycle
  bool finished_ = false;
  sc_core::sc_event finished_event_;
  uint64_t finish_cycle_ = 0;
  std::vector<uint32_t> latencies_;
  std::vector<uint8_t> read_buffer_;
  uint64_t faults_ = 0, ops_issued_ = 0, producer_stall_cycles_ = 0, consumer_wait_cycles_ = 0;
  uint64_t bulk_wait_cycles_ = 0;  // the consumer waiting on a step's bulk_wait_pending
  uint32_t running_ = 0, max_running_ = 0;
  uint64_t cta_cycles_ = 0, running_since_ = 0;
};

}  // namespace tma
