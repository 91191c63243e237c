// Shared memory of one SM: 32 banks of 4 bytes, a TMA write port and a read port of configured
// bytes per cycle. Chunk accesses are packed into wavefronts (one per cycle) up to the port
// width; two chunks that need the same bank in one wavefront are a bank conflict and push the
// second into the next cycle.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include <vector>

#include "tma/core/arch_config.h"
#include "tma/core/bandwidth_server.h"
#include "tma/core/cycle_time.h"
#include "tma/core/stats.h"
#include "tma/core/tlm_payloads.h"

namespace tma {

class SmemBanks : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_target_socket<SmemBanks> write_in;   // from this SM's swizzle crossbar
  tlm_utils::simple_target_socket<SmemBanks> dsmem_in;   // from other SMs of the cluster (multicast)
  tlm_utils::simple_target_socket<SmemBanks> read_in;    // TMA stores and reductions read here
  tlm_utils::simple_target_socket<SmemBanks> lsu_in;     // the CTA's own reads (fragment loads)

  SmemBanks(sc_core::sc_module_name name, const ArchConfig& arch);
  void collect_stats(StatsRecord& out) const override;

  // Direct access for the issuer model (the CTA's own loads and stores), not timed.
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void write(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void read(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void lsu_read(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void read_through(BandwidthServer& port, uint32_t width, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  // Cycles the chunks take through a port `width` bytes wide; counts conflicts.
  uint64_t wavefronts(const std::vector<SmemChunk>& chunks, uint32_t width);

  CycleClock clock_;
  SmemConfig cfg_;
  std::vector<uint8_t> bytes_;
  BandwidthServer write_port_, read_port_, lsu_port_;
  uint64_t bytes_written_ = 0, bytes_read_ = 0, chunks_ = 0, wavefronts_ = 0, bank_conflicts_ = 0;
  uint64_t out_of_range_ = 0;
  uint64_t lsu_bytes_ = 0, lsu_wavefronts_ = 0, lsu_conflicts_ = 0;
};

}  // namespace tma
