// A resource that moves a limited number of bytes per cycle (an L2 slice, a DRAM interface, a
// shared-memory port). Requests reserve capacity in fixed windows of time: a request arriving at
// cycle t takes what is left in t's window and spills into later windows, and finishes when its
// last byte is served. Requests from units that run ahead of each other (temporal decoupling)
// may arrive out of time order; the windows keep that from corrupting the accounting, at the
// cost of at most one window of timing error.
#pragma once

#include <cstdint>
#include <vector>

namespace tma {

class BandwidthServer {
 public:
  BandwidthServer() = default;
  BandwidthServer(double bytes_per_cycle, uint32_t window_cycles);
  void configure(double bytes_per_cycle, uint32_t window_cycles);

  // Serves `bytes` arriving at `cycle`; returns the cycle its last byte is served.
  uint64_t serve(uint64_t cycle, uint64_t bytes);

  // Bytes served in total and cycles with any traffic (for utilisation).
  uint64_t bytes_served() const { return bytes_served_; }
  double bytes_per_cycle() const { return bytes_per_cycle_; }
  // Windows before `cycle` are settled; forget them (keeps memory bounded).
  void retire_before(uint64_t cycle);

 private:
  double bytes_per_cycle_ = 1;
  uint32_t window_ = 64;
  double window_capacity_ = 64;
  // Bytes reserved per window, for windows [first_window_, first_window_ + ring_.size()), kept in a
  // ring indexed by window number; it grows when a request reaches further ahead.
  uint64_t first_window_ = 0;
  std::vector<double> ring_;
  double& slot(uint64_t w);
  uint64_t bytes_served_ = 0;
  // Windows [full_from_, full_until_) are known to be full: a request arriving in them starts
  // at full_until_ without walking them (a busy server's backlog grows at its end).
  uint64_t full_from_ = 0, full_until_ = 0;
  bool in_full_run(uint64_t w) const { return w >= full_from_ && w < full_until_; }
};

}  // namespace tma
