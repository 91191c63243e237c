#include "tma/memory/gpc_coalescer.h"

#include <algorithm>
#include <stdexcept>

#include "tma/core/cycle_time.h"

namespace tma {

GpcCoalescer::GpcCoalescer(uint32_t sms, uint32_t sms_per_gpc, uint32_t window_cycles, uint32_t entries,
                           uint32_t line_bytes, uint32_t sector_bytes, uint32_t readers, uint32_t hit_window)
    : sms_per_gpc_(std::max<uint32_t>(1, sms_per_gpc)), window_(window_cycles),
      line_(std::max<uint32_t>(1, line_bytes)), sector_(std::max<uint32_t>(1, sector_bytes)),
      gpcs_((std::max<uint32_t>(1, sms) + sms_per_gpc_ - 1) / sms_per_gpc_),
      sets_(entries / kWays), readers_(readers), hit_window_(hit_window) {
  if (!valid_capacity(entries)) throw std::invalid_argument("GpcCoalescer: entries must be a power of two of at least kWays");
  if (sms > 32767 || readers > 255) throw std::invalid_argument("GpcCoalescer: at most 32767 SMs and 255 readers a read");
  if (window_) table_.resize(static_cast<size_t>(gpcs_) * sets_);
}

// The line's set in its GPC's table.
size_t GpcCoalescer::set_of(uint32_t gpc, uint64_t line) const {
  uint64_t h = line * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return static_cast<size_t>(gpc) * sets_ + (h & (sets_ - 1));
}

bool GpcCoalescer::locate(int sm, uint64_t address, uint64_t bytes, uint32_t& gpc, uint64_t& line,
                          uint32_t& sectors) const {
  if (!window_ || bytes == 0 || sm < 0) return false;
  gpc = static_cast<uint32_t>(sm) / sms_per_gpc_;
  line = address / line_;
  if (gpc >= gpcs_ || (address + bytes - 1) / line_ != line) return false;  // one line only
  const uint64_t first = (address % line_) / sector_, last = ((address + bytes - 1) % line_) / sector_;
  sectors = 0;
  for (uint64_t s = first; s <= last && s < 32; ++s) sectors |= 1u << s;
  return true;
}

bool GpcCoalescer::merge(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t& data_back) {
  uint32_t gpc = 0, sectors = 0;
  uint64_t line = 0;
  if (!locate(sm, address, bytes, gpc, line, sectors)) return false;
  Entry* set = table_[set_of(gpc, line)].way;
  Entry* found = nullptr;
  for (uint32_t w = 0; w < kWays; ++w)
    if (set[w].line == line) found = &set[w];
  if (!found) return false;
  Entry& e = *found;
  if (e.sm == sm || (e.sectors & sectors) != sectors) return false;
  // Merged while the other read is in flight: from when it reached the GPC until its data is back
  // (silicon, coalesce.csv: two CTAs of a cluster loading the same tiles 250 ns apart merge 75%
  // of their reads from DRAM and none from the L2, whose data is back sooner). A read reported
  // from before the recorded one (the SMs' simulated clocks run apart) merges within the window.
  if (cycle >= e.cycle ? cycle > e.data_back : e.cycle - cycle > window_) return false;
  // A hit merges only a read that reaches the GPC with it (silicon, coalesce_group.csv: two CTAs
  // reading lines warm in the L2 10-80 cycles apart merge 1-6% of the second's reads, together
  // 40-67%; from DRAM 250 ns apart 96%).
  if (e.hit && (cycle >= e.cycle ? cycle - e.cycle : e.cycle - cycle) > hit_window_) return false;
  // A read serves at most `readers` SMs (silicon, coalesce_group.csv: g CTAs of one GPC reading the
  // same lines together reach the L2 ceil(g / 4) times a line, for g = 2-16, wherever in the GPC
  // they are); one more is a read of its own, which the next readers then merge with.
  if (readers_ && e.readers >= readers_) return false;
  ++e.readers;
  data_back = std::max(e.data_back, cycle);
  return true;
}

void GpcCoalescer::record(int sm, uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t data_back, bool hit) {
  uint32_t gpc = 0, sectors = 0;
  uint64_t line = 0;
  if (!locate(sm, address, bytes, gpc, line, sectors)) return;
  Entry* set = table_[set_of(gpc, line)].way;
  Entry* victim = &set[0];
  for (uint32_t w = 0; w < kWays; ++w) {
    if (set[w].line == line) {
      victim = &set[w];
      break;
    }
    if (set[w].data_back < victim->data_back) victim = &set[w];  // an empty entry's is 0
  }
  if (victim->line != line && victim->line != ~0ull && victim->data_back > cycle) ++evicted_in_flight_;
  *victim = Entry{line, cycle, data_back, static_cast<int16_t>(sm), 1, static_cast<uint8_t>(hit), sectors};
}

}  // namespace tma
