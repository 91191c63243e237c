#include "gpc_coalescer.h"

#include <algorithm>

namespace tma {

GpcCoalescer::GpcCoalescer(uint32_t sms, uint32_t sms_per_gpc, uint32_t window_cycles, uint32_t sector_bytes)
    : sms_per_gpc_(std::max<uint32_t>(1, sms_per_gpc)), window_(window_cycles), sector_(std::max<uint32_t>(1, sector_bytes)) {
  const uint32_t gpcs = (std::max<uint32_t>(1, sms) + sms_per_gpc_ - 1) / sms_per_gpc_;
  reads_.resize(gpcs);
  records_.assign(gpcs, 0);
}

bool GpcCoalescer::merge(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t& data_back) {
  if (!window_ || bytes == 0) return false;
  const uint32_t g = gpc_of(sm);
  if (g >= reads_.size()) return false;
  const auto& reads = reads_[g];
  uint64_t back = 0;
  for (uint64_t a = address / sector_ * sector_; a < address + bytes; a += sector_) {
    const auto it = reads.find(a);
    if (it == reads.end() || it->second.sm == sm) return false;
    // SMs run ahead of each other (temporal decoupling): the window holds both ways.
    const uint64_t gap = cycle > it->second.cycle ? cycle - it->second.cycle : it->second.cycle - cycle;
    if (gap > window_) return false;
    back = std::max(back, it->second.data_back);
  }
  data_back = back;
  return true;
}

void GpcCoalescer::record(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t data_back) {
  if (!window_) return;
  const uint32_t g = gpc_of(sm);
  if (g >= reads_.size()) return;
  auto& reads = reads_[g];
  for (uint64_t a = address / sector_ * sector_; a < address + bytes; a += sector_)
    reads[a] = Entry{cycle, data_back, sm};
  // Keep the table to what the window can still match.
  if (++records_[g] % 4096 == 0) forget_before(reads, cycle > 4ull * window_ ? cycle - 4ull * window_ : 0);
}

void GpcCoalescer::forget_before(std::unordered_map<uint64_t, Entry>& reads, uint64_t cycle) {
  for (auto it = reads.begin(); it != reads.end();) {
    if (it->second.cycle < cycle) it = reads.erase(it);
    else ++it;
  }
}

}  // namespace tma
