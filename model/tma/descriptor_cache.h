// Descriptor cache of one TMA unit: holds the 128-byte tensor-map descriptors the unit has
// used, keyed by their global address, in two levels; behind them the SM's L1 data cache keeps
// the descriptor lines it has seen (silicon: round robin over 16..256 descriptors costs +80
// cycles, a descriptor's first use +255); a miss everywhere fetches through the memory socket.
// prefetch.tensormap fills an entry ahead of use; fence.proxy.tensormap invalidates one (a
// descriptor rewritten in memory without it keeps being served stale, as on hardware).
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <array>
#include <list>
#include <unordered_map>
#include <vector>

#include "tma/core/arch_config.h"
#include "tma/core/cycle_time.h"
#include "tma/core/stats.h"

namespace tma {

enum class DescriptorCacheOp : uint8_t { lookup, prefetch, invalidate };

struct DescriptorRequest : tlm::tlm_extension<DescriptorRequest> {
  DescriptorCacheOp op = DescriptorCacheOp::lookup;
  int32_t sm = 0;
  bool param = false;  // a kernel-parameter descriptor: a miss everywhere costs param_fetch_latency
  bool hit = false;  // set by the cache
  tlm::tlm_extension_base* clone() const override { return new DescriptorRequest(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const DescriptorRequest&>(e); }
};

class DescriptorCache : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::simple_target_socket<DescriptorCache> in;        // address = descriptor address, 128-byte data
  tlm_utils::simple_initiator_socket<DescriptorCache> mem_out;

  DescriptorCache(sc_core::sc_module_name name, const ArchConfig& arch);
  void collect_stats(StatsRecord& out) const override;

 private:
  struct Entry {
    uint64_t address = ~0ull;
    uint64_t lru = 0;
    uint64_t ready_cycle = 0;  // a fill in flight completes then
    std::array<uint8_t, 128> bytes{};
  };
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  Entry* find(uint64_t address);
  Entry& victim(uint64_t address);
  // The second level: a small fully associative LRU list of entries.
  Entry* find_l2(uint64_t address);
  Entry& victim_l2();
  uint64_t fetch(Entry& e, uint64_t address, uint64_t cycle, int32_t sm, bool param);
  // The SM's L1: an LRU set of descriptor copies (large, so a map rather than a scan).
  const Entry* find_sm_l1(uint64_t address);
  void fill_sm_l1(const Entry& e);
  void drop_sm_l1(uint64_t address);
  // Looks up both levels, fetching on a miss; returns the cycle the descriptor is available and
  // leaves it in the first level.
  Entry& obtain(uint64_t address, uint64_t& t, int32_t sm, bool param, int& level);

  CycleClock clock_;
  DescriptorCacheConfig cfg_;
  uint32_t sets_;
  std::vector<Entry> entries_;
  std::vector<Entry> l2_entries_;
  std::list<Entry> sm_l1_;  // most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> sm_l1_index_;
  uint64_t lru_clock_ = 0;
  tlm::tlm_generic_payload mem_gp_;
  uint64_t hits_ = 0, l2_hits_ = 0, sm_l1_hits_ = 0, misses_ = 0, prefetches_ = 0, invalidations_ = 0, pending_hits_ = 0;
};

}  // namespace tma
