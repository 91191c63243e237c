#include "tma/gpu/cluster_fabric.h"

#include <algorithm>
#include <cmath>

#include "tma/core/tlm_payloads.h"

namespace tma {

ClusterFabric::ClusterFabric(sc_core::sc_module_name name, const ArchConfig& arch, uint32_t cluster_size)
    : sc_module(name), dsmem_in("dsmem_in"), dsmem_out("dsmem_out"), completion_in("completion_in"),
      completion_out("completion_out"), multicast_in("multicast_in"), clock_(arch.sm_clock_mhz),
      cluster_size_(cluster_size ? cluster_size : 1), hop_latency_(arch.tma.completion_latency), cfg_(arch.cluster) {
  dsmem_in.register_b_transport(this, &ClusterFabric::route_data);
  completion_in.register_b_transport(this, &ClusterFabric::route_completion);
  multicast_in.register_b_transport(this, &ClusterFabric::multicast_slot);
}

int ClusterFabric::destination(int src_sm, int cta) const {
  const int cs = static_cast<int>(cluster_size_);
  return (src_sm / cs) * cs + (cta < 0 ? src_sm % cs : cta);
}

void ClusterFabric::route_data(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  SmemAccess* acc = gp.get_extension<SmemAccess>();
  const int dest = acc ? destination(port, acc->cta) : -1;
  if (dest < 0 || dest >= static_cast<int>(dsmem_out.size()) || (acc && acc->cta >= static_cast<int>(cluster_size_))) {
    ++misrouted_;
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  data_bytes_ += gp.get_data_length();
  delay += clock_.to_time(hop_latency_);
  dsmem_out[dest]->b_transport(gp, delay);
}

void ClusterFabric::route_completion(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  TmaCompletion* c = gp.get_extension<TmaCompletion>();
  const int dest = c ? destination(port, c->cta) : -1;
  if (dest < 0 || dest >= static_cast<int>(completion_out.size())) {
    ++misrouted_;
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  ++completions_;
  completion_out[dest]->b_transport(gp, delay);
}

void ClusterFabric::multicast_slot(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const MulticastSlot* slot = gp.get_extension<MulticastSlot>();
  if (!slot || port < 0) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const size_t sm = static_cast<size_t>(port), cluster = sm / cluster_size_;
  if (cluster >= multicast_free_.size()) multicast_free_.resize(cluster + 1, 0);
  if (sm >= multicast_inflight_.size()) multicast_inflight_.resize(sm + 1);
  uint64_t& free = multicast_free_[cluster];
  DoneQueue& inflight = multicast_inflight_[sm];
  const uint64_t at = clock_.to_cycles(sc_core::sc_time_stamp() + delay);
  if (slot->phase == MulticastPhase::acquire) {
    // The SM's own limit first (its earliest multicasts to complete make room), then the cluster's.
    uint64_t ready = at;
    while (!inflight.empty() && inflight.top() <= ready) inflight.pop();
    while (inflight.size() >= std::max<uint32_t>(1, cfg_.multicast_inflight_per_sm)) {
      ready = std::max(ready, inflight.top());
      inflight.pop();
    }
    if (ready > at) {
      ++sm_stalls_;
      sm_stall_cycles_ += ready - at;
    }
    if (free > ready) {
      ++cluster_stalls_;
      cluster_stall_cycles_ += free - ready;
      ready = free;
    }
    delay = clock_.to_time(ready) - sc_core::sc_time_stamp();
  } else {
    ++multicasts_;
    const auto bytes_cycles = static_cast<uint64_t>(std::ceil(slot->bytes / cfg_.multicast_bytes_per_cycle));
    free = std::max(free, at + cfg_.multicast_occupancy_cycles + bytes_cycles);
    inflight.push(slot->done_cycle);
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void ClusterFabric::collect_stats(StatsRecord& out) const {
  out.add("multicast_bytes", data_bytes_);
  out.add("multicast_loads", multicasts_);
  // Multicast loads that waited to start: for their SM's multicasts in flight, for the cluster's resource.
  out.add("multicast_sm_stalls", sm_stalls_);
  out.add("multicast_sm_stall_cycles", sm_stall_cycles_);
  out.add("multicast_cluster_stalls", cluster_stalls_);
  out.add("multicast_cluster_stall_cycles", cluster_stall_cycles_);
  out.add("completions", completions_);
  out.add("misrouted", misrouted_);
}

}  // namespace tma
