// DRAM (HBM) behind the L2: channels of banks with open pages (DramConfig), plus a fixed access
// latency. It carries no data (the backing store is GlobalMemory); it times the L2's fills and
// write-backs. The payload's address and length say what is read or written.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "tma/core/arch_config.h"
#include "tma/core/bandwidth_server.h"
#include "tma/core/cycle_time.h"
#include "tma/core/stats.h"

#include <vector>

namespace tma {

class Dram : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_target_socket<Dram> in;

  Dram(sc_core::sc_module_name name, const ArchConfig& arch);
  void collect_stats(StatsRecord& out) const override;
  // Records each access's [arrival, done) cycles there (the VCD's occupancy); none by default.
  void set_occupancy_log(OccupancyLog* log) { occupancy_ = log; }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  struct Bank {
    uint64_t open_page = ~0ull;
    uint64_t ready = 0;  // cycle the bank can start a transfer
    // With a scheduler window: the pages opened lately, when their first access arrived and
    // when their opening is done (the controller's queue groups accesses to them).
    struct Opening {
      uint64_t page, arrived, start;
    };
    std::vector<Opening> recent;
    // With bank_bytes_per_cycle: the bank's time, booked like a channel's (page openings as the
    // bytes it could have moved meanwhile), so that accesses arriving out of cycle order are fine.
    BandwidthServer busy;
  };
  // Whether an access at `cycle` finds `page` open; if not, records the opening (its start is
  // set once known) and returns false.
  bool page_open(Bank& bank, uint64_t page, uint64_t cycle);
  // With page_tenure: whether the bank is on `page` at `cycle` or has its opening queued.
  static bool within_tenure(const Bank& bank, const Bank::Opening& opening, uint64_t cycle);
  // One access within one interleave chunk: returns the cycle its last byte is out, and sets
  // `slot` (when given) to the cycle its transfer got the channel (after any queueing and page
  // opening). With
  // background_promoted_fills a background read queues behind everything booked, a demand read
  // only behind other demand reads.
  // `now`: SystemC time in cycles (nothing arrives before it: the servers may forget it).
  uint64_t access(uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t now, bool background, uint64_t* slot);
  bool slow_page(uint64_t page) const;  // DramConfig::slow_read_fraction

  CycleClock clock_;
  DramConfig cfg_;
  std::vector<BandwidthServer> channels_;         // every transfer
  std::vector<BandwidthServer> demand_channels_;  // demand transfers only (background_promoted_fills)
  std::vector<Bank> banks_;  // channels x banks
  // With activations_per_cycle: each channel's page openings, booked kActivationUnits apiece.
  std::vector<BandwidthServer> activations_;
  static constexpr uint64_t kActivationUnits = 64;
  uint64_t background_bytes_ = 0, aged_background_ = 0;
  uint64_t read_bytes_ = 0, write_bytes_ = 0, accesses_ = 0, row_misses_ = 0, row_hits_ = 0;
  uint64_t last_done_cycle_ = 0;
  uint64_t slow_reads_ = 0;
  OccupancyLog* occupancy_ = nullptr;
};

}  // namespace tma
