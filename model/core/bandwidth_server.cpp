#include "tma/core/bandwidth_server.h"

#include <algorithm>
#include <cmath>

namespace tma {

BandwidthServer::BandwidthServer(double bytes_per_cycle, uint32_t window_cycles) {
  configure(bytes_per_cycle, window_cycles);
}

void BandwidthServer::configure(double bytes_per_cycle, uint32_t window_cycles) {
  bytes_per_cycle_ = bytes_per_cycle > 0 ? bytes_per_cycle : 1;
  window_ = window_cycles ? window_cycles : 1;
  window_capacity_ = bytes_per_cycle_ * window_;
  shift_ = (window_ & (window_ - 1)) == 0 ? static_cast<uint32_t>(__builtin_ctz(window_)) : kNoShift;
  ring_.assign(64, Window{});
  mask_ = ring_.size() - 1;
  first_window_ = base_ = 0;
  full_from_ = full_until_ = 0;
}

void BandwidthServer::grow(uint64_t w) {
  // Keeping each live window at its index modulo the new size.
  // Sizes stay powers of two, so that a window's slot is a mask, not a division.
  size_t size = std::max<size_t>(ring_.size() * 2, 1);
  while (size < w - base_ + 1) size *= 2;
  std::vector<Window> bigger(size);
  for (uint64_t x = base_; x < base_ + ring_.size(); ++x) bigger[x & (size - 1)] = ring_[x & mask_];
  ring_.swap(bigger);
  mask_ = ring_.size() - 1;
}

uint64_t BandwidthServer::serve(uint64_t cycle, uint64_t bytes) {
  bytes_served_ += bytes;
  uint64_t w = window_of(cycle);
  if (w < first_window_) w = first_window_;  // settled past: book it at the oldest open window
  double left = static_cast<double>(bytes);
  // The part of the first window before the arrival cannot be used by this request.
  double offset_in_window = cycle >= w * window_ ? static_cast<double>(cycle - w * window_) : 0.0;
  if (in_full_run(w)) {
    w = full_until_;
    offset_in_window = 0;
  }
  while (true) {
    Window& win = slot(w);
    const double arrival = offset_in_window * bytes_per_cycle_;  // bytes of window time gone by
    const bool in_order = arrival >= win.last_arrival;
    win.last_arrival = std::max(win.last_arrival, arrival);
    // In order: it starts at the frontier. Out of order: anywhere capacity is left, but not before
    // its arrival. Either way no more than the capacity not yet booked.
    const double start = in_order ? std::max(win.frontier, arrival) : arrival;
    const double room = std::min(window_capacity_ - win.booked, window_capacity_ - start);
    if (room >= left) {
      win.booked += left;
      win.frontier = in_order ? start + left : std::min(window_capacity_, win.frontier + left);
      return w * window_ + static_cast<uint64_t>(std::ceil(win.frontier / bytes_per_cycle_ - 1e-9));
    }
    if (room > 0) {
      left -= room;
      win.booked += room;
    }
    win.frontier = window_capacity_;
    if (win.booked >= window_capacity_ - 1e-9) {
      // Window w is full: extend the known-full run, or start one here.
      if (w == full_until_ && full_until_ > full_from_) {
        ++full_until_;
      } else if (!in_full_run(w)) {
        full_from_ = w;
        full_until_ = w + 1;
      }
    }
    ++w;
    offset_in_window = 0;
  }
}

void BandwidthServer::retire(uint64_t w) {
  if (full_from_ < w) full_from_ = std::min(w, full_until_);
  first_window_ = w;
  if (w > base_) release_below(w);
}

void BandwidthServer::release_below(uint64_t w) {
  // Clear the released windows' slots so they can be reused by future windows.
  const uint64_t n = std::min<uint64_t>(w - base_, ring_.size());
  for (uint64_t x = 0; x < n; ++x) ring_[(base_ + x) & mask_] = Window{};
  base_ = w;
}

}  // namespace tma
