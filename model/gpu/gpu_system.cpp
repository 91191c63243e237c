#include "tma/gpu/gpu_system.h"

#include <string>

namespace tma {

GpuSystem::GpuSystem(sc_core::sc_module_name name, const ArchConfig& arch, uint32_t sms, uint32_t cluster_size,
                     GpuArch gpu, MemoryFill fill)
    : sc_module(name), arch_(arch), memory_(fill), dram_("dram", arch), l2_("l2", arch, memory_),
      fabric_("fabric", arch, cluster_size) {
  l2_.dram_out.bind(dram_.in);
  for (uint32_t sm = 0; sm < sms; ++sm) {
    const std::string n = "sm" + std::to_string(sm);
    units_.push_back(std::make_unique<TmaUnit>(n.c_str(), arch, static_cast<int>(sm),
                                               static_cast<int>(sm % fabric_.cluster_size()), gpu, invariants_));
  }
  // The SMs of a CPC share its pool of requests in flight (arch validation: cpc_of_sm names every SM).
  if (arch.tma.cpc_outstanding_requests) {
    for (uint32_t sm = 0; sm < sms; ++sm) {
      const uint32_t cpc = arch.tma.cpc_of_sm.at(sm);
      while (cpc_pools_.size() <= cpc)
        cpc_pools_.push_back(std::make_unique<CpcRequestPool>(arch.tma.cpc_outstanding_requests));
      units_[sm]->set_cpc_pool(cpc_pools_[cpc].get());
    }
  }
  // Bindings in SM order: the L2 and the fabric number their ports by binding order.
  for (auto& u : units_) {
    u->mem_out.bind(l2_.in);
    u->desc_mem_out.bind(l2_.in);
  }
  for (auto& u : units_) {
    u->dsmem_out.bind(fabric_.dsmem_in);
    fabric_.dsmem_out.bind(u->dsmem_in);
    u->completion_out.bind(fabric_.completion_in);
    u->multicast_out.bind(fabric_.multicast_in);
  }
}

}  // namespace tma

namespace tma {

void GpuSystem::check_drained() {
  for (auto& u : units_) u->check_drained();
  invariants_.check(fabric_.misrouted() == 0, "cluster fabric: " + std::to_string(fabric_.misrouted()) +
                                                  " completions or data pieces had no destination");
}

}  // namespace tma
