#include "dram.h"

#include <algorithm>

namespace tma {

Dram::Dram(sc_core::sc_module_name name, const ArchConfig& arch)
    : sc_module(name), in("in"), clock_(arch.sm_clock_mhz), cfg_(arch.dram),
      server_(arch.dram.bytes_per_cycle, arch.sim.bandwidth_window_cycles) {
  in.register_b_transport(this, &Dram::b_transport);
}

// A read returns when its data is out (bandwidth) plus the access latency; a write-back is
// posted: it takes bandwidth but nobody waits for it.
void Dram::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const uint64_t t = clock_.to_cycles(sc_core::sc_time_stamp() + delay);
  const uint64_t bytes = gp.get_data_length();
  const uint64_t served = server_.serve(t, bytes);
  ++accesses_;
  if (gp.is_write()) {
    write_bytes_ += bytes;
  } else {
    read_bytes_ += bytes;
    const uint64_t done = served + cfg_.latency;
    delay = clock_.to_time(done) - sc_core::sc_time_stamp();
    last_done_cycle_ = std::max(last_done_cycle_, done);
  }
  server_.retire_before(t > 100000 ? t - 100000 : 0);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void Dram::collect_stats(StatsRecord& out) const {
  out.add("read_bytes", read_bytes_);
  out.add("write_bytes", write_bytes_);
  out.add("accesses", accesses_);
}

}  // namespace tma
