// Runs a scenario on the TLM model: elaborates the GPU, stages descriptors in memory, starts
// one CtaIssuer per SM, checks every operation on the scoreboard, and reports. SystemC allows
// one elaboration per process: call run_scenario once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tma/core/arch_config.h"
#include "tma/scenario/scenario.h"
#include "tma/core/stats.h"
#include "tma/scenario/workload.h"

namespace tma {

struct RunOptions {
  std::string stats_path;   // hierarchical statistics JSON
  std::string vcd_path;     // occupancies and busy signals
  std::string trace_path;   // Chrome/Perfetto trace of operations and requests
  uint32_t vcd_sample_cycles = 64;
  uint64_t trace_max_events = 200000;  // L2 request events written to the trace at most (0: all)
  bool progress = true;     // a progress line on stderr for runs longer than a few seconds
  bool scoreboard = true;
  // SIGINT and SIGTERM stop the simulation at the monitor's next wake-up (every 20000 cycles or a
  // CTA's end) and the run ends as usual, its summary and files complete (tma-sim run; not bench).
  bool stop_on_signals = false;
  // What the scenario and the architecture were read with (recorded in the stats' "config").
  std::vector<std::string> scenario_overrides, arch_overrides;
};

struct RunSummary {
  std::string scenario, arch;
  uint32_t sms = 0;
  double clock_mhz = 0;
  uint64_t cycles = 0;               // simulated cycles until the last CTA finished
  uint32_t launch_overhead_ns = 0;   // arch launch.overhead_ns: what cudaEvents add to the span
  std::string l2_state;              // clean, dirty or warm at launch
  uint64_t simulated_cycles = 0;     // the simulated time reached (the end of the simulation)
  int stop_signal = 0;               // SIGINT or SIGTERM when one stopped the run early (cycles is
                                     // then the time reached), else 0
  uint32_t ctas_done = 0;
  uint64_t loads = 0, stores = 0, reductions = 0, prefetches = 0, faults = 0;
  uint64_t bytes_loaded = 0;         // complete_tx bytes of the loads, once per operation: the unique
                                     // bytes read from global (a multicast counts once)
  uint64_t bytes_delivered = 0;      // the loads' bytes into shared memory: once per receiving CTA
  uint64_t bytes_stored = 0;         // bytes written or reduced by stores and reductions
  uint64_t l2_requests = 0, sectors_requested = 0, sector_hits = 0, sector_misses = 0;
  uint64_t promoted_miss_sectors = 0;  // misses of a promotion's other line, first read: nothing fetched
  uint64_t bytes_requested = 0;      // by the splitters
  uint64_t dram_read_bytes = 0, dram_write_bytes = 0, dram_fill_bytes = 0;
  uint64_t descriptor_hits = 0, descriptor_misses = 0;
  uint64_t bank_conflicts = 0, smem_wavefronts = 0;       // TMA writes and reads
  uint64_t lsu_wavefronts = 0, lsu_bank_conflicts = 0;     // the consumer's fragment reads
  uint32_t latency_p50 = 0, latency_p90 = 0, latency_p99 = 0, latency_max = 0, latency_min = 0;
  uint64_t read_bytes = 0;           // the SMs' read requests (loads), by the splitters
  uint64_t gpc_coalesced_bytes = 0;  // of them, served by a GPC's coalescer (another SM's read of the
                                     // same sectors), not by the L2 slices
  uint64_t overfetch_unread_bytes = 0;  // fill bytes nobody asked for and nobody read (evicted or left)
  uint64_t consumer_wait_cycles = 0;    // the consumers waiting for their steps' loads, all CTAs
  uint64_t bulk_wait_cycles = 0;        // ... for their stores and reductions (wait_group)
  uint64_t consumer_cycles = 0;         // the CTAs' time, each until it finished (or the run's end)
  // Occupancy: CTA slots per SM (workload.ctas_per_sm), the grid's CTAs, the most CTAs one slot ran
  // (waves), the most CTAs an SM ran at once, and the CTAs resident per SM on average over the run.
  uint32_t ctas_per_sm = 1;
  uint64_t grid_ctas = 0;
  uint64_t waves = 0;
  uint32_t max_concurrent_ctas = 0;
  double mean_concurrent_ctas = 0;
  uint64_t lts_sectors = 0;          // L2 sector accesses counted by both partitions (ncu's view)
  uint64_t dram_row_misses = 0;
  uint64_t scoreboard_checked = 0, scoreboard_mismatches = 0;
  std::vector<std::string> scoreboard_reports;
  uint64_t invariant_checks = 0, invariant_violations = 0;
  std::vector<std::string> invariant_reports;
  double host_seconds = 0;
  std::string trace_path;            // the Perfetto trace ("" when none was written), its events
  uint64_t trace_ops = 0, trace_request_events = 0, trace_dropped = 0, trace_max_events = 0;
  std::map<std::string, StatsRecord> stats;

  double seconds() const { return cycles / (clock_mhz * 1e6); }
  // The kernel as cudaEvents around its launch time it: the CTAs' span plus the launch.
  double kernel_seconds() const { return seconds() + launch_overhead_ns * 1e-9; }
  double load_bandwidth_gbs() const { return cycles ? bytes_loaded / seconds() / 1e9 : 0; }
  double delivered_bandwidth_gbs() const { return cycles ? bytes_delivered / seconds() / 1e9 : 0; }
  double store_bandwidth_gbs() const { return cycles ? bytes_stored / seconds() / 1e9 : 0; }
  double l2_hit_rate() const { return sectors_requested ? double(sector_hits) / sectors_requested : 0; }
  // The bytes the L2 slices served to reads (what the coalescer did not) over the simulated time.
  uint64_t l2_read_bytes() const { return read_bytes - std::min(read_bytes, gpc_coalesced_bytes); }
  double l2_read_bandwidth_gbs() const { return cycles ? l2_read_bytes() / seconds() / 1e9 : 0; }
  // Share of the consumers' time spent waiting for loads, and for stores and reductions.
  double load_wait_share() const { return consumer_cycles ? double(consumer_wait_cycles) / consumer_cycles : 0; }
  double store_wait_share() const { return consumer_cycles ? double(bulk_wait_cycles) / consumer_cycles : 0; }
  // DRAM bytes filled beyond the sectors that missed and fetched: what promotion brought in
  // unasked (the first reads of a 256B promotion's other line miss, but fetch nothing).
  uint64_t overfetch_bytes(uint32_t sector_bytes = 32) const {
    const uint64_t asked = (sector_misses - std::min(sector_misses, promoted_miss_sectors)) * sector_bytes;
    return dram_fill_bytes > asked ? dram_fill_bytes - asked : 0;
  }
};

// `launch`: the CTAs to run (a replayed trace's); null: those of the scenario's workload.
RunSummary run_scenario(const Scenario& s, const ArchConfig& arch, const RunOptions& options,
                        const Launch* launch = nullptr);

void print_summary(std::FILE* out, const RunSummary& r);

// The summary's values in a fixed order (the stats' summary.* keys, the sweep CSV's columns):
// text as printed, and whether it is a number (JSON writes it unquoted) or a name.
struct SummaryField {
  std::string name, text;
  bool number = true;
};
std::vector<SummaryField> summary_fields(const RunSummary& r);

}  // namespace tma
