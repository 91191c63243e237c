#include "tma/memory/dram.h"

#include "tma/core/splitmix64.h"
#include "tma/core/tlm_payloads.h"

#include <algorithm>
#include <cmath>

namespace tma {

Dram::Dram(sc_core::sc_module_name name, const ArchConfig& arch)
    : sc_module(name), in("in"), clock_(arch.sm_clock_mhz), cfg_(arch.dram),
      channels_(std::max<uint32_t>(1, arch.dram.channels),
                BandwidthServer(arch.dram.bytes_per_cycle / std::max<uint32_t>(1, arch.dram.channels),
                                arch.sim.bandwidth_window_cycles)),
      demand_channels_(channels_),
      banks_(static_cast<size_t>(std::max<uint32_t>(1, arch.dram.channels)) * std::max<uint32_t>(1, arch.dram.banks)) {
  in.register_b_transport(this, &Dram::b_transport);
  if (cfg_.bank_bytes_per_cycle > 0)
    for (Bank& b : banks_) b.busy.configure(cfg_.bank_bytes_per_cycle, arch.sim.bandwidth_window_cycles);
  if (cfg_.activations_per_cycle > 0)
    activations_.assign(channels_.size(),
                        BandwidthServer(cfg_.activations_per_cycle * kActivationUnits / channels_.size(),
                                        arch.sim.bandwidth_window_cycles));
}

namespace {
uint64_t mix(uint64_t x) {  // address hash for channel and bank selection
  x ^= x >> 31;
  x *= 0x7FB5D329728EA185ull;
  x ^= x >> 27;
  return x;
}
}  // namespace

// Whether an access finds its page open, and if not, records the page as opened for it.
bool Dram::page_open(Bank& bank, uint64_t page, uint64_t cycle) {
  const uint64_t window = cfg_.scheduler_window_cycles;
  if (!window) return bank.open_page == page;
  // Accesses arrive a little out of cycle order (the SMs run ahead by up to a quantum): the
  // window is measured both ways.
  for (const auto& o : bank.recent)
    if (o.page == page && cycles_apart(cycle, o.arrived) <= window &&
        (!cfg_.page_tenure || within_tenure(bank, o, cycle)))
      return true;
  bank.recent.erase(std::remove_if(bank.recent.begin(), bank.recent.end(),
                                   [&](const auto& e) { return e.arrived + window < cycle; }),
                    bank.recent.end());
  if (bank.recent.size() >= 64) bank.recent.erase(bank.recent.begin());  // bounded, oldest first
  bank.recent.push_back({page, cycle, cycle});
  return false;
}

// The bank is on a page from when its opening is done (its data can move: `start`) until another
// page's opening is done; before that the opening is queued, and an access to the same page joins
// it. (The opening takes the row_miss_cycles before `start`; a read that joins a queued opening
// moves its data from its own arrival, as in the window model: the reordering is not timed.)
bool Dram::within_tenure(const Bank& bank, const Bank::Opening& opening, uint64_t cycle) {
  if (cycle < opening.start) return true;  // queued: served with it
  for (const auto& other : bank.recent)
    if (other.page != opening.page && other.start > opening.start && other.start <= cycle) return false;
  return true;
}

uint64_t Dram::access(uint64_t address, uint64_t bytes, uint64_t cycle, uint64_t now, bool background,
                     uint64_t* slot) {
  const uint64_t nch = channels_.size(), nbank = std::max<uint32_t>(1, cfg_.banks);
  const uint64_t chunk = address / cfg_.interleave_bytes;
  // Each run of nch consecutive chunks goes to all nch channels, rotated by a hash of the run (a
  // permutation, so that no two chunks share a channel address; strided streams still spread).
  const uint64_t channel = nch > 1 ? (chunk % nch + mix(chunk / nch)) % nch : 0;
  // Address within the channel: its chunks one after another.
  const uint64_t local = (chunk / nch) * cfg_.interleave_bytes + address % cfg_.interleave_bytes;
  const uint64_t page = local / cfg_.page_bytes;
  Bank& bank = banks_[channel * nbank + (nbank > 1 ? mix(page ^ 0x5bd1e995) % nbank : 0)];
  // A page miss opens the page first (the bank is busy row_miss_cycles); transfers to an open
  // page stream at the channel's rate. With bank_bytes_per_cycle the bank is also held while its
  // data moves: the opening and the transfer are booked on the bank's own time line.
  const bool hold = cfg_.bank_bytes_per_cycle > 0;
  // Bookings older than this are settled (arrivals are out of order by far less).
  const uint64_t settled = cycle > 100000 ? cycle - 100000 : 0;
  // Every server this access books settles its old windows and drops those before now (else a
  // bank's ring spans the 100,000 settled cycles: host cache misses).
  auto settle = [&](BandwidthServer& server) {
    server.retire_before(settled);
    server.forget_before(now);
  };
  const bool hit = page_open(bank, page, cycle);
  if (hit) ++row_hits_; else ++row_misses_;
  uint64_t start = cycle, bank_done = 0;
  if (hold) {
    const double rate = cfg_.bank_bytes_per_cycle;
    const uint64_t opening = hit ? 0 : static_cast<uint64_t>(std::ceil(cfg_.row_miss_cycles * rate));
    // Settle the bank's old windows first: a bank first used late in a long run must not book
    // from window 0 (its window ring would grow to the whole run).
    settle(bank.busy);
    bank_done = bank.busy.serve(cycle, bytes + opening);
    const uint64_t transfer = static_cast<uint64_t>(std::ceil(bytes / rate));
    start = std::max(cycle, bank_done > transfer ? bank_done - transfer : 0);
  } else if (!hit && cfg_.row_miss_cycles) {
    start = std::max(cycle, bank.ready) + cfg_.row_miss_cycles;
    bank.ready = start;
  }
  if (!hit) bank.open_page = page;
  if (!hit && !activations_.empty()) {
    // The opening waits for its turn among the channel's activations (tFAW/tRRD pacing).
    BandwidthServer& acts = activations_[channel];
    settle(acts);
    start = std::max(start, acts.serve(cycle, kActivationUnits));
  }
  if (!hit && cfg_.page_tenure && cfg_.scheduler_window_cycles) bank.recent.back().start = start;
  // A promoted read continues its fill's demand read to the same pages (the L2 asks for the whole
  // promoted span at once; only the model splits it, to give the demand part priority): it pays
  // no access overhead of its own.
  const uint64_t channel_bytes = bytes + (background ? 0 : cfg_.access_overhead_bytes);
  uint64_t done = channels_[channel].serve(start, channel_bytes);
  if (cfg_.background_promoted_fills && !background) {
    // Demand has priority: it is timed against demand alone. Booked in channels_ too, it pushes
    // the background reads that come after it back.
    done = demand_channels_[channel].serve(start, channel_bytes);
  } else if (cfg_.background_promoted_fills && cfg_.background_max_wait_cycles &&
             done > start + cfg_.background_max_wait_cycles) {
    // Starved by demand for too long: the controller serves it among the demand reads. (Without
    // this a stream that keeps DRAM busy with demand would never see its promoted sectors.)
    done = demand_channels_[channel].serve(start + cfg_.background_max_wait_cycles, channel_bytes);
    ++aged_background_;
  }
  if (cfg_.background_promoted_fills) settle(demand_channels_[channel]);
  if (hold) done = std::max(done, bank_done);
  settle(channels_[channel]);
  if (slot) {
    // The transfer holds the channel for its bytes at the channel's rate, ending at `done`.
    const uint64_t transfer = static_cast<uint64_t>(std::ceil(channel_bytes * nch / cfg_.bytes_per_cycle));
    *slot = std::max(start, done > transfer ? done - transfer : 0);
  }
  return done;
}

bool Dram::slow_page(uint64_t page) const {
  if (cfg_.slow_read_fraction <= 0) return false;
  // A full 64-bit mix: neighbouring pages are independent.
  return static_cast<double>(splitmix64_mix(page) >> 11) * 0x1.0p-53 < cfg_.slow_read_fraction;
}

// A read returns when its data is out (bandwidth and banks) plus the access latency; a write-back
// is posted: it returns when DRAM has taken it (bandwidth and banks), without the latency.
void Dram::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const uint64_t t = clock_.to_cycles(now + delay);
  const uint64_t now_cycle = clock_.to_cycles(now);  // no arrival is before it (delays are not negative)
  const uint64_t address = gp.get_address();
  const uint64_t bytes = gp.get_data_length();
  DramFillClass* fill_class = gp.get_extension<DramFillClass>();
  const bool background = !gp.is_write() && fill_class && fill_class->promoted;
  if (background) background_bytes_ += bytes;
  const bool want_slot = fill_class && fill_class->want_slot;
  uint64_t served = t, slot = t;
  for (uint64_t off = 0; off < bytes;) {  // split at interleave boundaries
    const uint64_t a = address + off;
    const uint64_t n = std::min(bytes - off, cfg_.interleave_bytes - a % cfg_.interleave_bytes);
    uint64_t chunk_slot = t;
    served = std::max(served, access(a, n, t, now_cycle, background, want_slot ? &chunk_slot : nullptr));
    slot = std::max(slot, chunk_slot);
    off += n;
  }
  if (want_slot) fill_class->slot = slot;
  ++accesses_;
  if (gp.is_write()) {
    write_bytes_ += bytes;
    delay = clock_.to_time(served) - sc_core::sc_time_stamp();
  } else {
    read_bytes_ += bytes;
    const bool slow = slow_page(address / cfg_.page_bytes);
    slow_reads_ += slow;
    const uint64_t done = served + cfg_.latency + (slow ? cfg_.slow_read_extra_cycles : 0);
    delay = clock_.to_time(done) - sc_core::sc_time_stamp();
    last_done_cycle_ = std::max(last_done_cycle_, done);
  }
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  if (occupancy_) occupancy_->add(t, clock_.to_cycles(sc_core::sc_time_stamp() + delay));
}

void Dram::collect_stats(StatsRecord& out) const {
  out.add("read_bytes", read_bytes_);
  out.add("write_bytes", write_bytes_);
  out.add("accesses", accesses_);
  out.add("row_hits", row_hits_);
  out.add("row_misses", row_misses_);
  out.add("promoted_read_bytes", background_bytes_);
  out.add("aged_promoted_reads", aged_background_);
  out.add("slow_reads", slow_reads_);
}

}  // namespace tma
