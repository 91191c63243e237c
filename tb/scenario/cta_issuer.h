// The instruction stream of the CTAs one SM runs, one after another: a producer that issues each
// pipeline step's TMA loads into its shared-memory stage once the consumer has released the
// stage, and a consumer that waits for the stage's completions (its mbarrier), computes,
// releases, and issues the step's stores. A CTA starts when the SM's last one has ended (its
// stores and prefetches complete; with clusters, every CTA of the cluster's). CTAs of one cluster
// coordinate through ClusterSync so that a multicast load waits until every destination has
// released its stage.
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
  void collect_stats(StatsRecord& out) const override;

  bool finished() const { return finished_; }
  const sc_core::sc_event& finished_event() const { return finished_event_; }
  // Issue-to-completion latency of every operation this CTA issued, in cycles.
  const std::vector<uint32_t>& latencies() const { return latencies_; }
  uint64_t faults() const { return faults_; }
  uint64_t finish_cycle() const { return finish_cycle_; }

 private:
  void producer();
  void consumer();
  void issue(IssueOp op, uint32_t mbarrier);
  void completed(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  // Reads the step's tiles as ldmatrix would; returns the cycle the last read is done.
  uint64_t read_tiles(const Step& st);
  // The SM's k-th CTA once it may start (null: no more), and the consumer's work on step i.
  const CtaProgram* start_cta(uint64_t k);
  void consume(size_t i);

  std::vector<const CtaProgram*> own_;
  std::shared_ptr<CtaQueue> queue_;
  // The steps of the CTAs started so far, one after another (a step's index is its mbarrier), and
  // where each CTA's steps end.
  std::vector<const Step*> steps_;
  std::vector<size_t> cta_end_;
  uint64_t prologues_issued_ = 0;
  uint64_t released_steps_ = 0;  // the consumer releases steps in order: every step below this one
  bool producer_done_ = false;
  sc_core::sc_event cta_started_;
  uint32_t stages_;
  int sm_, cta_;
  std::shared_ptr<ClusterSync> cluster_;
  InvariantLog& invariants_;
  CycleClock clock_;
  std::vector<uint32_t> got_;              // completions per step
  std::unordered_map<uint64_t, uint64_t> issued_at_;  // op id -> issue cycle
  uint64_t next_op_id_;
  uint64_t bulk_issued_ = 0, bulk_done_ = 0;
  std::unordered_set<uint64_t> after_pending_;  // op ids of the steps' `after` operations not yet complete
  sc_core::sc_event completion_event_;
  bool finished_ = false;
  sc_core::sc_event finished_event_;
  uint64_t finish_cycle_ = 0;
  std::vector<uint32_t> latencies_;
  std::vector<uint8_t> read_buffer_;
  uint64_t ctas_run_ = 0, faults_ = 0, ops_issued_ = 0, producer_stall_cycles_ = 0, consumer_wait_cycles_ = 0;
  uint64_t bulk_wait_cycles_ = 0;  // the consumer waiting on a step's bulk_wait_pending
};

}  // namespace tma
