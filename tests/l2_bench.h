// An L2 and a DRAM driven directly, at chosen cycles, once the design is elaborated: an
// architecture of round numbers, a driver that reads as a given SM with a given promotion, and the
// statistics each module reports (test_l2_promotion, test_l2_partitions).
#pragma once

#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include <memory>
#include <string>

#include "tma/core/tlm_payloads.h"
#include "tma/memory/dram.h"
#include "tma/memory/global_memory.h"
#include "tma/memory/l2_cache.h"

namespace tma::test {

// Round numbers: 1 GHz; an L2 hit takes 10 cycles and its links are wide; DRAM moves 32 bytes a
// cycle with 100 cycles of latency, one bank whose pages stay open, no row-miss cost.
inline ArchConfig round_number_l2_arch(uint32_t background_promoted, uint32_t partitions = 1) {
  ArchConfig a;
  a.sm_clock_mhz = 1000;
  a.sim.bandwidth_window_cycles = 1;
  a.l2.capacity_bytes = 1 << 20;
  a.l2.ways = 16;
  a.l2.line_bytes = 128;
  a.l2.sector_bytes = 32;
  a.l2.hit_latency = 10;
  a.l2.bytes_per_cycle = 4096;
  a.l2.sm_port_bytes_per_cycle = 4096;
  a.l2.partitions = partitions;
  a.dram.bytes_per_cycle = 32;
  a.dram.latency = 100;
  a.dram.channels = 1;
  a.dram.banks = 1;
  a.dram.page_bytes = 4096;
  a.dram.row_miss_cycles = 0;
  a.dram.scheduler_window_cycles = 100000;
  a.dram.background_promoted_fills = background_promoted;
  return a;
}

struct L2Driver : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<L2Driver> out;
  explicit L2Driver(sc_core::sc_module_name n) : sc_module(n), out("out") {}
  // A read of `bytes` at `cycle` by `sm` with the given promotion (bytes, 0: none); returns the
  // cycle its data is back (the clock is 1 GHz: a cycle is a nanosecond).
  uint64_t read(uint64_t address, uint32_t bytes, uint32_t promotion, uint64_t cycle, int sm = 0) {
    unsigned char buf[256];
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(address);
    gp.set_data_ptr(buf);
    gp.set_data_length(bytes);
    MemRequest req;
    req.access = MemAccess::read;
    req.promotion_bytes = promotion;
    req.sm = sm;
    ScopedExtension<MemRequest> scoped(gp, &req);
    sc_core::sc_time delay(static_cast<double>(cycle), sc_core::SC_NS);
    out->b_transport(gp, delay);
    return static_cast<uint64_t>((sc_core::sc_time_stamp() + delay).to_seconds() * 1e9 + 0.5);
  }
};

struct L2Bench {
  GlobalMemory memory;
  std::unique_ptr<L2Cache> l2;
  std::unique_ptr<Dram> dram;
  std::unique_ptr<L2Driver> driver;
  L2Bench(const std::string& name, const ArchConfig& arch)
      : l2(std::make_unique<L2Cache>((name + "_l2").c_str(), arch, memory)),
        dram(std::make_unique<Dram>((name + "_dram").c_str(), arch)),
        driver(std::make_unique<L2Driver>((name + "_driver").c_str())) {
    driver->out.bind(l2->in);  // one port: each request names its SM
    l2->dram_out.bind(dram->in);
  }
  // A statistic of the L2 or the DRAM by name (-1 when there is none).
  static double stat(const StatsProvider& p, const std::string& name) {
    StatsRecord r;
    p.collect_stats(r);
    for (const auto& [n, v] : r.values())
      if (n == name) return v;
    return -1;
  }
};

}  // namespace tma::test
