// A GPC's read coalescer: reads of the same sectors by SMs of one GPC that reach it within a short
// window are served once by the L2, and the GPC copies the data to each SM. Silicon: CTAs of a
// cluster (one GPC) that each load the same 32 KB tile get 14.6-16.6 TB/s delivered from an L2
// that streams 8.6 TB/s of distinct tiles (tests/calibration/h200/multicast.csv, mode plain).
// Streams of distinct tiles never share sectors and are unaffected.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tma {

class GpcCoalescer {
 public:
  // `sms_per_gpc` consecutive SMs share a coalescer; `window_cycles` 0 turns coalescing off.
  GpcCoalescer(uint32_t sms, uint32_t sms_per_gpc, uint32_t window_cycles, uint32_t sector_bytes);

  bool enabled() const { return window_ > 0; }
  // A read of [address, address + bytes) by `sm` reaching the GPC at `cycle`: if every sector of
  // it was read by another SM of the GPC within the window, returns true and the cycle that
  // read's data is back at the GPC (`data_back`).
  bool merge(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t& data_back);
  // Records a read the L2 serves: its sectors, when it reached the GPC, and when its data is back.
  void record(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t data_back);

 private:
  struct Entry {
    uint64_t cycle, data_back;
    int sm;
  };
  uint32_t gpc_of(int sm) const { return static_cast<uint32_t>(sm) / sms_per_gpc_; }
  void forget_before(std::unordered_map<uint64_t, Entry>& reads, uint64_t cycle);

  uint32_t sms_per_gpc_, window_, sector_;
  std::vector<std::unordered_map<uint64_t, Entry>> reads_;  // per GPC: sector address -> last read
  std::vector<uint64_t> records_;                           // per GPC, to prune now and then
};

}  // namespace tma
