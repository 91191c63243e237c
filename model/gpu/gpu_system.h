// The modelled GPU: N SMs' TMA units sharing one L2 and DRAM over a global-memory backing
// store, SMs grouped into thread-block clusters by the ClusterFabric. The issuers (the CTAs'
// instruction streams) belong to the testbench (docs/integration.md): issuer i binds to
// unit(i).cmd_in and unit(i).smem().lsu_in (its own shared-memory reads; SystemC requires the
// binding even when unused), and the i-th binding of fabric().completion_out delivers SM i's
// completions.
#pragma once

#include <systemc>

#include <memory>
#include <vector>

#include "tma/core/arch_config.h"
#include "tma/gpu/cluster_fabric.h"
#include "tma/memory/dram.h"
#include "tma/memory/global_memory.h"
#include "tma/memory/l2_cache.h"
#include "tma/tma/cpc_request_pool.h"
#include "tma/tma/tma_unit.h"

namespace tma {

class GpuSystem : public sc_core::sc_module {
 public:
  GpuSystem(sc_core::sc_module_name name, const ArchConfig& arch, uint32_t sms, uint32_t cluster_size, GpuArch gpu,
            MemoryFill fill = MemoryFill::word_hash);

  uint32_t sm_count() const { return static_cast<uint32_t>(units_.size()); }
  TmaUnit& unit(uint32_t sm) { return *units_[sm]; }
  ClusterFabric& fabric() { return fabric_; }
  GlobalMemory& memory() { return memory_; }
  L2Cache& l2() { return l2_; }
  Dram& dram() { return dram_; }
  const ArchConfig& arch() const { return arch_; }
  InvariantLog& invariants() { return invariants_; }
  // End-of-run invariants (every operation completed); call after sc_start returns.
  void check_drained();

 private:
  ArchConfig arch_;
  InvariantLog invariants_;
  GlobalMemory memory_;
  Dram dram_;
  L2Cache l2_;
  ClusterFabric fabric_;
  std::vector<std::unique_ptr<TmaUnit>> units_;
  std::vector<std::unique_ptr<CpcRequestPool>> cpc_pools_;  // by CPC (tma.cpc_of_sm), when pooled
};

}  // namespace tma
