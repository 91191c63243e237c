// A resource that moves a limited number of bytes per cycle (an L2 slice, a DRAM interface, a
// shared-memory port). Requests reserve capacity in fixed windows of time: a request arriving at
// cycle t takes what is left in t's window and spills into later windows, and finishes when its
// last byte is served. Requests from units that run ahead of each other (temporal decoupling)
// may arrive out of time order, and some are booked well ahead of now (a read's return trip
// booked when its DRAM fill is asked for): a window's capacity is the bytes booked in it whatever
// their order, and a request finishes no later than its window's end, so that order costs at
// most one window of timing error and never capacity.
#pragma once

#include <cassert>
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
  // Windows before `cycle` are settled; forget them (keeps memory bounded). A request arriving
  // before them is booked at the oldest open window.
  void retire_before(uint64_t cycle) {
    if (window_of(cycle) > first_window_) retire(window_of(cycle));  // inline: mostly nothing to do
  }
  // The caller promises that no request will arrive before `cycle` (its SystemC time: every
  // arrival is at or after it). The windows before it are never read again, so their memory is
  // reused; unlike retire_before this changes no result, and it keeps a server whose settled
  // horizon is long (DRAM's banks: 100,000 cycles) from holding a ring of thousands of windows
  // that the host's caches miss on.
  void forget_before(uint64_t cycle) {
    if (window_of(cycle) > base_) release_below(window_of(cycle));
  }

 private:
  double bytes_per_cycle_ = 1;
  uint32_t window_ = 64;
  // The window of a cycle: a shift when the window is a power of two (the usual 64), else a division.
  static constexpr uint32_t kNoShift = 64;
  uint32_t shift_ = 6;
  uint64_t window_of(uint64_t cycle) const { return shift_ != kNoShift ? cycle >> shift_ : cycle / window_; }
  double window_capacity_ = 64;
  // Per window: the bytes booked in it (its capacity used); its frontier, where (in bytes from the
  // window's start) the requests booked in it so far finish; and the latest arrival in it. A
  // request arriving at or after the latest queues behind the frontier, as in a FIFO; one arriving
  // before it (out of order, or after one booked ahead of time late in the window) takes capacity
  // not yet booked and finishes behind the frontier but no later than the window's end.
  struct Window {
    double booked = 0, frontier = 0, last_arrival = 0;
  };
  // Windows [base_, base_ + ring_.size()), kept in a ring indexed by window number; it grows when
  // a request reaches further ahead. first_window_ is the oldest open window (retire_before);
  // base_ >= first_window_ also drops windows forget_before says nothing will arrive in.
  uint64_t first_window_ = 0, base_ = 0;
  std::vector<Window> ring_;
  uint64_t mask_ = 63;  // ring_.size() - 1 (the size is a power of two)
  Window& slot(uint64_t w) {
    assert(w >= base_ && "a request arrived before forget_before's cycle");
    if (w - base_ >= ring_.size()) grow(w);
    return ring_[w & mask_];
  }
  void grow(uint64_t w);
  void retire(uint64_t w);
  void release_below(uint64_t w);  // clears the slots of windows before w, moves base_ to w
  uint64_t bytes_served_ = 0;
  // Windows [full_from_, full_until_) are known to be full: a request arriving in them starts
  // at full_until_ without walking them (a busy server's backlog grows at its end).
  uint64_t full_from_ = 0, full_until_ = 0;
  bool in_full_run(uint64_t w) const { return w >= full_from_ && w < full_until_; }
};

}  // namespace tma
