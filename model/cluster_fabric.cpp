#include "cluster_fabric.h"

#include "tlm_payloads.h"

namespace tma {

ClusterFabric::ClusterFabric(sc_core::sc_module_name name, const ArchConfig& arch, uint32_t cluster_size)
    : sc_module(name), dsmem_in("dsmem_in"), dsmem_out("dsmem_out"), completion_in("completion_in"),
      completion_out("completion_out"), clock_(arch.sm_clock_mhz), cluster_size_(cluster_size ? cluster_size : 1),
      hop_latency_(arch.tma.completion_latency) {
  dsmem_in.register_b_transport(this, &ClusterFabric::route_data);
  completion_in.register_b_transport(this, &ClusterFabric::route_completion);
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

void ClusterFabric::collect_stats(StatsRecord& out) const {
  out.add("multicast_bytes", data_bytes_);
  out.add("completions", completions_);
  out.add("misrouted", misrouted_);
}

}  // namespace tma
