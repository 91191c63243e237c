// The network between the SMs of a thread-block cluster: multicast data from one unit's
// crossbar into the other CTAs' shared memory (distributed shared memory), and completion
// notices (mbarrier complete_tx, bulk-group completion) to the issuer of the receiving CTA.
// It also says when a multicast load may start (ArchConfig::cluster, MulticastSlot): an empirical
// model of silicon's serialisation of multicast loads, whose cause is not known. SM s holds CTA
// s % cluster_size of cluster s / cluster_size.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include <functional>
#include <queue>
#include <vector>

#include "tma/core/arch_config.h"
#include "tma/core/cycle_time.h"
#include "tma/core/stats.h"

namespace tma {

class ClusterFabric : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::multi_passthrough_target_socket<ClusterFabric> dsmem_in;         // from each SM's crossbar
  tlm_utils::multi_passthrough_initiator_socket<ClusterFabric> dsmem_out;     // to each SM's shared memory
  tlm_utils::multi_passthrough_target_socket<ClusterFabric> completion_in;    // from each SM's unit
  tlm_utils::multi_passthrough_initiator_socket<ClusterFabric> completion_out;// to each SM's issuer
  tlm_utils::multi_passthrough_target_socket<ClusterFabric> multicast_in;     // from each SM's unit

  ClusterFabric(sc_core::sc_module_name name, const ArchConfig& arch, uint32_t cluster_size);
  void collect_stats(StatsRecord& out) const override;
  uint32_t cluster_size() const { return cluster_size_; }
  // Notices and data with no destination (a CTA outside the cluster, an unbound issuer).
  uint64_t misrouted() const { return misrouted_; }

 private:
  void route_data(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void route_completion(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void multicast_slot(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  int destination(int src_sm, int cta) const;

  CycleClock clock_;
  uint32_t cluster_size_;
  uint32_t hop_latency_;
  ClusterConfig cfg_;
  using DoneQueue = std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>>;
  // Per cluster: the cycle its multicast resource is free. One time, not a reservation table:
  // decoupled units may reach it out of time order (off by at most sim.quantum_cycles), and a
  // cluster's multicasts are mostly issued in order anyway (its stages are released in order).
  std::vector<uint64_t> multicast_free_;
  // Per SM: completion cycles of its multicasts in flight (only its own unit, in order, uses it).
  std::vector<DoneQueue> multicast_inflight_;
  uint64_t data_bytes_ = 0, completions_ = 0, misrouted_ = 0;
  uint64_t multicasts_ = 0, cluster_stalls_ = 0, cluster_stall_cycles_ = 0, sm_stalls_ = 0, sm_stall_cycles_ = 0;
};

}  // namespace tma
