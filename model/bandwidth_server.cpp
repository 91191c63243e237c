#include "bandwidth_server.h"

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
  used_.clear();
  first_window_ = 0;
}

uint64_t BandwidthServer::serve(uint64_t cycle, uint64_t bytes) {
  bytes_served_ += bytes;
  uint64_t w = cycle / window_;
  if (w < first_window_) w = first_window_;  // settled past: book it at the oldest open window
  double left = static_cast<double>(bytes);
  // The part of the first window before the arrival cannot be used by this request.
  double offset_in_window = cycle >= w * window_ ? static_cast<double>(cycle - w * window_) : 0.0;
  while (true) {
    const size_t i = static_cast<size_t>(w - first_window_);
    if (i >= used_.size()) used_.resize(i + 1, 0.0);
    const double floor_used = offset_in_window * bytes_per_cycle_;
    const double start = std::max(used_[i], floor_used);
    const double room = window_capacity_ - start;
    if (room >= left) {
      used_[i] = start + left;
      const double end_in_window = used_[i] / bytes_per_cycle_;
      return w * window_ + static_cast<uint64_t>(std::ceil(end_in_window - 1e-9));
    }
    if (room > 0) {
      left -= room;
      used_[i] = window_capacity_;
    }
    ++w;
    offset_in_window = 0;
  }
}

void BandwidthServer::retire_before(uint64_t cycle) {
  const uint64_t w = cycle / window_;
  while (first_window_ < w && !used_.empty()) {
    used_.pop_front();
    ++first_window_;
  }
  if (used_.empty() && first_window_ < w) first_window_ = w;
}

}  // namespace tma
