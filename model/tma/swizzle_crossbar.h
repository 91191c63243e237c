// Swizzle crossbar of one TMA unit: places each piece of returned data (or out-of-bound fill)
// at its swizzled shared-memory address, converting values on the way (tf32 rounding), and
// for stores gathers the source bytes back from their swizzled addresses. The patterns are the
// PTX ISA tables (16-byte cells permuted within each 128-byte line), kept here as tables, for
// every swizzle mode and atomicity. Multicast pieces go to the other CTAs through dsmem_out.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tma/core/arch_config.h"
#include "tma/core/cycle_time.h"
#include "tma/core/stats.h"
#include "tma/core/tlm_payloads.h"

namespace tma {

// Physical shared-memory address of the byte at logical (unswizzled) address `logical`.
uint32_t crossbar_swizzle(SwizzleMode mode, SwizzleAtom atom, uint32_t logical);

class SwizzleCrossbar : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_target_socket<SwizzleCrossbar> data_in;    // loads: SmemDelivery + data
  tlm_utils::simple_target_socket<SwizzleCrossbar> gather_in;  // stores: SmemDelivery, data filled in
  tlm_utils::simple_initiator_socket<SwizzleCrossbar> smem_write_out;
  tlm_utils::simple_initiator_socket<SwizzleCrossbar> smem_read_out;
  tlm_utils::simple_initiator_socket<SwizzleCrossbar> dsmem_out;  // multicast to other CTAs

  SwizzleCrossbar(sc_core::sc_module_name name, const ArchConfig& arch, int cta_in_cluster);
  void collect_stats(StatsRecord& out) const override;

 private:
  void deliver(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void gather(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  // Splits the pieces into chunk accesses at swizzled addresses (data offsets into `buffer`).
  // `data_shift` is added to the data pieces' data offsets (deliver's buffer has the fill first).
  void map_pieces(const SmemDelivery& d, std::vector<SmemChunk>& chunks, uint32_t data_shift = 0) const;

  CycleClock clock_;
  int cta_;
  std::vector<uint8_t> buffer_;
  tlm::tlm_generic_payload out_gp_;
  SmemAccess access_;
  uint64_t data_bytes_ = 0, fill_bytes_ = 0, gathered_bytes_ = 0, multicast_copies_ = 0, converted_elements_ = 0;
};

}  // namespace tma
