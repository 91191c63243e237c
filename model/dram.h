// DRAM (HBM) behind the L2: a bandwidth server plus a fixed access latency. It carries no data
// (the backing store is GlobalMemory); it times the L2's fills and write-backs.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "arch_config.h"
#include "bandwidth_server.h"
#include "cycle_time.h"
#include "stats.h"

namespace tma {

class Dram : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_target_socket<Dram> in;

  Dram(sc_core::sc_module_name name, const ArchConfig& arch);
  void collect_stats(StatsRecord& out) const override;

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  CycleClock clock_;
  DramConfig cfg_;
  BandwidthServer server_;
  uint64_t read_bytes_ = 0, write_bytes_ = 0, accesses_ = 0;
  uint64_t last_done_cycle_ = 0;
};

}  // namespace tma
