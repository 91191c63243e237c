#include "tma/tma/smem_banks.h"

#include <algorithm>
#include <cstring>

namespace tma {

SmemBanks::SmemBanks(sc_core::sc_module_name name, const ArchConfig& arch)
    : sc_module(name), write_in("write_in"), dsmem_in("dsmem_in"), read_in("read_in"), lsu_in("lsu_in"), clock_(arch.sm_clock_mhz),
      cfg_(arch.smem), bytes_(arch.smem.capacity_bytes, 0xCD),
      write_port_(arch.smem.write_bytes_per_cycle, arch.sim.bandwidth_window_cycles),
      read_port_(arch.smem.read_bytes_per_cycle, arch.sim.bandwidth_window_cycles),
      lsu_port_(arch.smem.lsu_bytes_per_cycle, arch.sim.bandwidth_window_cycles) {
  write_in.register_b_transport(this, &SmemBanks::write);
  dsmem_in.register_b_transport(this, &SmemBanks::write);
  read_in.register_b_transport(this, &SmemBanks::read);
  lsu_in.register_b_transport(this, &SmemBanks::lsu_read);
}

uint64_t SmemBanks::wavefronts(const std::vector<SmemChunk>& chunks, uint32_t width) {
  // Common case first: chunks inside one 128-byte line, each a distinct 16-byte cell, touch
  // distinct banks (32 banks x 4 bytes = 128 bytes): one wavefront when they fit the port.
  if (!chunks.empty() && cfg_.banks * cfg_.bank_bytes == 128) {
    uint32_t cells = 0, total = 0;
    const uint32_t line = chunks.front().address / 128;
    bool simple = true;
    for (const SmemChunk& c : chunks) {
      const uint32_t bit = 1u << ((c.address % 128) / 16);
      if (c.address / 128 != line || c.address % 16 + c.bytes > 16 || (cells & bit)) {
        simple = false;
        break;
      }
      cells |= bit;
      total += c.bytes;
    }
    if (simple && total <= width) {
      chunks_ += chunks.size();
      ++wavefronts_;
      return 1;
    }
  }
  uint64_t fronts = 0;
  uint32_t used_bytes = width;  // forces a new wavefront for the first chunk
  uint64_t banks_used = 0;      // bit per bank in the current wavefront
  for (const SmemChunk& c : chunks) {
    // Banks the chunk touches: a run of consecutive banks, wrapping at the bank count.
    const uint32_t first = c.address / cfg_.bank_bytes, n = (c.address + c.bytes - 1) / cfg_.bank_bytes - first + 1;
    const uint64_t run = n >= 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1);
    const uint32_t shift = first % cfg_.banks;
    uint64_t need = (run << shift) | (shift ? run >> (cfg_.banks - shift) : 0);
    need &= cfg_.banks >= 64 ? ~uint64_t{0} : ((uint64_t{1} << cfg_.banks) - 1);
    const bool conflict = (need & banks_used) != 0;
    if (used_bytes + c.bytes > width || conflict) {
      if (conflict && used_bytes + c.bytes <= width) ++bank_conflicts_;
      ++fronts;
      used_bytes = 0;
      banks_used = 0;
    }
    used_bytes += c.bytes;
    banks_used |= need;
  }
  chunks_ += chunks.size();
  wavefronts_ += fronts;
  return fronts;
}

void SmemBanks::write(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const SmemAccess* acc = gp.get_extension<SmemAccess>();
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const uint64_t t = clock_.to_cycles(now + delay);
  if (!acc) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const uint8_t* data = gp.get_data_ptr();
  uint64_t n = 0;
  uint32_t end = 0;
  for (const SmemChunk& c : acc->chunks) {
    if (c.address + c.bytes > bytes_.size()) {
      ++out_of_range_;
      continue;
    }
    // A whole 16-byte cell (the usual chunk) as one fixed-size copy, not a call of memcpy.
    if (c.bytes == 16) std::memcpy(&bytes_[c.address], data + c.data_offset, 16);
    else std::memcpy(&bytes_[c.address], data + c.data_offset, c.bytes);
    n += c.bytes;
    end = std::max(end, c.address + c.bytes);
  }
  // A box's next rows land in the 128-byte lines after this one (swizzling permutes 16-byte cells
  // within a line): start the host's cache misses of the line kPrefetchLines ahead now, for
  // writing, so that a later request's stores find it (132 SMs' shared memories are 30 MB, cold).
  // A hint only: nothing is read or written.
  constexpr uint32_t kPrefetchLines = 4;
  const uint64_t ahead = (end + 127) / 128 * 128 + (kPrefetchLines - 1) * 128;
  if (n && ahead + 128 <= bytes_.size()) {
    __builtin_prefetch(&bytes_[ahead], 1);
    __builtin_prefetch(&bytes_[ahead + 64], 1);
  }
  bytes_written_ += n;
  const uint64_t fronts = wavefronts(acc->chunks, cfg_.write_bytes_per_cycle);
  const uint64_t done = write_port_.serve(t, fronts * cfg_.write_bytes_per_cycle) + cfg_.crossbar_latency;
  const uint64_t now_cycle = clock_.to_cycles(now);
  write_port_.retire_before(now_cycle > 1024 ? now_cycle - 1024 : 0);
  delay = clock_.to_time(done) - now;
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void SmemBanks::read(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  read_through(read_port_, cfg_.read_bytes_per_cycle, gp, delay);
}

// The warps' reads: counted apart, so that the bank conflicts of a layout show on their own.
void SmemBanks::lsu_read(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const uint64_t fronts_before = wavefronts_, conflicts_before = bank_conflicts_;
  read_through(lsu_port_, cfg_.lsu_bytes_per_cycle, gp, delay);
  lsu_wavefronts_ += wavefronts_ - fronts_before;
  lsu_conflicts_ += bank_conflicts_ - conflicts_before;
  wavefronts_ = fronts_before;
  bank_conflicts_ = conflicts_before;
  lsu_bytes_ += gp.get_data_length();
}

void SmemBanks::read_through(BandwidthServer& port, uint32_t width, tlm::tlm_generic_payload& gp,
                             sc_core::sc_time& delay) {
  const SmemAccess* acc = gp.get_extension<SmemAccess>();
  const uint64_t t = clock_.to_cycles(sc_core::sc_time_stamp() + delay);
  if (!acc) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  uint8_t* data = gp.get_data_ptr();
  for (const SmemChunk& c : acc->chunks) {
    if (c.address + c.bytes > bytes_.size()) {
      ++out_of_range_;
      if (data) std::memset(data + c.data_offset, 0, c.bytes);
      continue;
    }
    if (data) std::memcpy(data + c.data_offset, &bytes_[c.address], c.bytes);
    bytes_read_ += c.bytes;
  }
  const uint64_t fronts = wavefronts(acc->chunks, width);
  const uint64_t done = port.serve(t, fronts * width) + cfg_.crossbar_latency;
  port.retire_before(clock_.now_cycles() > 1024 ? clock_.now_cycles() - 1024 : 0);
  delay = clock_.to_time(done) - sc_core::sc_time_stamp();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void SmemBanks::collect_stats(StatsRecord& out) const {
  out.add("bytes_written", bytes_written_);
  out.add("bytes_read", bytes_read_);
  out.add("chunks", chunks_);
  out.add("wavefronts", wavefronts_);
  out.add("bank_conflicts", bank_conflicts_);
  out.add("out_of_range_chunks", out_of_range_);
  out.add("lsu_bytes", lsu_bytes_);
  out.add("lsu_wavefronts", lsu_wavefronts_);
  out.add("lsu_bank_conflicts", lsu_conflicts_);
}

}  // namespace tma
