// A GPC's read coalescer: a read of sectors that another SM of the GPC has asked for and whose data
// is not back yet (in flight) is served by that read, once by the L2, and the GPC copies the data
// to each SM. Silicon: CTAs of a
// cluster (one GPC) that each load the same 32 KB tile get 14.6-16.6 TB/s delivered from an L2
// that streams 8.6 TB/s of distinct tiles (tests/calibration/h200/multicast.csv, mode plain).
// Streams of distinct tiles never share sectors and are unaffected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tma/core/huge_page_allocator.h"

namespace tma {

class GpcCoalescer {
 public:
  // `sms_per_gpc` consecutive SMs share a coalescer; `window_cycles` is how far a read reported
  // before the one recorded may be (simulated SMs run apart) and 0 turns coalescing off;
  // `entries` is how many reads a GPC keeps track of (a power of two, at least kWays); `readers` is
  // how many SMs one read serves at most, its own included (0: any number); `hit_window` how far
  // apart (cycles) another SM's read may reach the GPC to merge with a read the L2 answered from
  // lines it held (a hit; a read that waits for DRAM or another read's fill merges while in flight).
  GpcCoalescer(uint32_t sms, uint32_t sms_per_gpc, uint32_t window_cycles, uint32_t entries, uint32_t line_bytes,
               uint32_t sector_bytes, uint32_t readers = 0, uint32_t hit_window = ~0u);

  bool enabled() const { return window_ > 0; }
  // A read of [address, address + bytes) (within one line) by `sm` reaching the GPC at `cycle`:
  // if another SM of the GPC asked for all its sectors and their data is not back yet (or is
  // recorded at most the window after `cycle`), and that read serves fewer than `readers` SMs,
  // returns true, counts `sm` as one more it serves, and gives the cycle that read's data is back
  // at the GPC (`data_back`).
  bool merge(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t& data_back);
  // Records a read the L2 serves: its sectors, when it reached the GPC, when its data is back, and
  // whether the L2 held its data (a hit, not waiting for a fill).
  void record(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t data_back, bool hit = false);
  // Reads recorded over another line's read whose data was not back yet (the table was full
  // there): merges the coalescer's capacity may have cost.
  uint64_t evicted_in_flight() const { return evicted_in_flight_; }
  // Asks the host CPU to bring the set a read of `address` by `sm` uses into its cache (a hint
  // for speed only: nothing changes).
  void prefetch(int sm, uint64_t address) const {
    if (!window_ || sm < 0 || static_cast<uint32_t>(sm) / sms_per_gpc_ >= gpcs_) return;
    const Set* set = &table_[set_of(static_cast<uint32_t>(sm) / sms_per_gpc_, address / line_)];
    __builtin_prefetch(&set->way[0]);
    __builtin_prefetch(&set->way[kWays - 1]);
  }

  static constexpr uint32_t kWays = 4;  // one set is two 64-byte host cache lines
  // Whether a GPC can keep `entries` reads: a power of two of at least kWays (whole sets, and a
  // power-of-two count of them for the hash's mask).
  static bool valid_capacity(uint32_t entries) {
    const uint32_t sets = entries / kWays;
    return entries % kWays == 0 && sets > 0 && (sets & (sets - 1)) == 0;
  }

 private:
  // A GPC's reads, one per line (the latest), in sets of kWays by a hash of the line. A read
  // replaces its line's entry, else an empty one, else the one whose data came back first (a
  // read in flight is lost only when all kWays reads of its set are: evicted_in_flight).
  struct Entry {
    uint64_t line = ~0ull, cycle = 0, data_back = 0;
    int16_t sm = -1;
    uint8_t readers = 0;  // SMs it serves, its own included
    uint8_t hit = 0;      // the L2 held its data
    uint32_t sectors = 0;  // bit mask
  };
  struct alignas(128) Set {
    Entry way[kWays];
  };
  size_t set_of(uint32_t gpc, uint64_t line) const;
  bool locate(int sm, uint64_t address, uint64_t bytes, uint32_t& gpc, uint64_t& line, uint32_t& sectors) const;

  uint32_t sms_per_gpc_, window_, line_, sector_, gpcs_, sets_, readers_, hit_window_;
  std::vector<Set, HugePageAllocator<Set>> table_;  // gpcs_ x sets_ (huge pages: speed only)
  uint64_t evicted_in_flight_ = 0;
};

}  // namespace tma
