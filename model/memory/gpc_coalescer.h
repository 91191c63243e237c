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

namespace tma {

class GpcCoalescer {
 public:
  // `sms_per_gpc` consecutive SMs share a coalescer; `window_cycles` is how far a read reported
  // before the one recorded may be (simulated SMs run apart) and 0 turns coalescing off.
  GpcCoalescer(uint32_t sms, uint32_t sms_per_gpc, uint32_t window_cycles, uint32_t line_bytes, uint32_t sector_bytes);

  bool enabled() const { return window_ > 0; }
  // A read of [address, address + bytes) (within one line) by `sm` reaching the GPC at `cycle`:
  // if another SM of the GPC asked for all its sectors and their data is not back yet (or is
  // recorded at most the window after `cycle`), returns true and the cycle that read's data is
  // back at the GPC (`data_back`).
  bool merge(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t& data_back) const;
  // Records a read the L2 serves: its sectors, when it reached the GPC, and when its data is back.
  void record(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t data_back);
  // Asks the host CPU to bring the slot a read of `address` by `sm` uses into its cache (a hint
  // for speed only: nothing changes).
  void prefetch(int sm, uint64_t address) const {
    if (!window_ || sm < 0 || static_cast<uint32_t>(sm) / sms_per_gpc_ >= gpcs_) return;
    __builtin_prefetch(&table_[slot(static_cast<uint32_t>(sm) / sms_per_gpc_, address / line_)]);
  }

 private:
  // The GPC's recent reads, one per line, in a table indexed by a hash of the line: a read that
  // lands on another line's slot replaces it (a missed merge, never a wrong one).
  struct Entry {
    uint64_t line = ~0ull, cycle = 0, data_back = 0;
    int32_t sm = -1;
    uint32_t sectors = 0;  // bit mask
  };
  static constexpr uint32_t kSlots = 4096;  // per GPC: over the lines a GPC reads in a window
  size_t slot(uint32_t gpc, uint64_t line) const;
  bool locate(int sm, uint64_t address, uint64_t bytes, uint32_t& gpc, uint64_t& line, uint32_t& sectors) const;

  uint32_t sms_per_gpc_, window_, line_, sector_, gpcs_;
  std::vector<Entry> table_;  // gpcs_ x kSlots
};

}  // namespace tma
