// Architecture parameters of the TLM model: every timing, size and bandwidth a module uses.
// Loaded from configs/arch/*.yaml (tb/arch_config_yaml.h); nothing here has a value a module
// may rely on without the YAML saying so, except the defaults below that the loader fills in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tma {

// The SM's tensor cores: dense MMA throughput per SM per cycle, by operand type. A GEMM-like
// workload (gemm, conv, attention) that does not set compute_cycles spends its step's flops over
// these (docs/scenarios.md, "Compute per step").
struct SmConfig {
  uint32_t mma_flops_per_cycle_bf16 = 4096;  // bf16 and fp16 operands
  uint32_t mma_flops_per_cycle_fp8 = 8192;   // fp8 (e4m3, e5m2) and int8 operands
  uint32_t mma_flops_per_cycle_tf32 = 2048;  // tf32 operands (f32 tensors)
  uint32_t max_ctas_per_sm = 32;             // CTAs resident on an SM at once, whatever their shared memory
  uint32_t sub_partitions = 4;               // warp schedulers: warp w of an SM's warps runs on w % this
};

struct TmaUnitConfig {
  uint32_t command_queue_depth = 8;       // commands a unit accepts before the issuer blocks
  uint32_t max_inflight_ops = 16;         // operations with requests outstanding at once
  uint32_t command_setup_cycles = 20;     // decode and descriptor check per command
  uint32_t agu_requests_per_cycle = 1;    // global requests the address generator emits per cycle
  uint32_t max_outstanding_requests = 64; // L2 requests a unit may have in flight
  uint32_t completion_latency = 10;       // last smem write to mbarrier complete_tx (loads, prefetches)
  uint32_t store_setup_cycles = 20;       // decode and descriptor check of a store or reduction
  // Requests in flight shared by the SMs of one CPC (GH100's GPCs are built of CPCs of 3 TPCs; a
  // CPC with a TPC disabled has 4 SMs, whose units then share the pool among fewer). 0: no pool.
  uint32_t cpc_outstanding_requests = 0;
  std::vector<uint32_t> cpc_of_sm;        // each SM's CPC, by SM as the model numbers them
};

// Two levels inside the unit, then the GPU's L2 (silicon: a round-robin over K descriptors costs
// nothing extra up to 2, +22 cycles up to 8, +70 beyond: tests/calibration/h200/descriptor.csv).
struct DescriptorCacheConfig {
  uint32_t entries = 2;          // first level
  uint32_t ways = 2;
  uint32_t hit_latency = 4;
  uint32_t l2_entries = 8;       // second level (fully associative, LRU)
  uint32_t l2_hit_latency = 22;  // added when only the second level has it
  uint32_t fetch_latency = 70;   // round trip to the GPU's L2 for a descriptor both levels miss
  // Beyond the unit: descriptors the SM's L1 data cache holds (0 entries: none). A descriptor both
  // levels miss that is there costs sm_l1_hit_latency instead of a fetch from the L2.
  uint32_t sm_l1_entries = 0;
  uint32_t sm_l1_hit_latency = 80;
  // A descriptor passed as a kernel parameter: the first use reads the constant bank instead.
  uint32_t param_fetch_latency = 42;
};

struct SmemConfig {
  uint32_t capacity_bytes = 228 * 1024;
  uint32_t banks = 32;
  uint32_t bank_bytes = 4;
  uint32_t write_bytes_per_cycle = 128;   // TMA write port into shared memory
  uint32_t read_bytes_per_cycle = 128;    // TMA read port (stores, reductions)
  uint32_t lsu_bytes_per_cycle = 128;     // the CTA's own reads (ldmatrix-style fragment loads)
  uint32_t crossbar_latency = 4;          // swizzle crossbar, data in to bank write
  // Occupancy: a CTA takes its own shared memory plus reserved_per_cta_bytes (the system's, per
  // block), and may take at most max_cta_bytes; as many CTAs run on an SM at once as fit in
  // capacity_bytes (docs/scenarios.md, "CTAs per SM").
  uint32_t max_cta_bytes = 227 * 1024;
  uint32_t reserved_per_cta_bytes = 1024;
};

struct L2Config {
  uint64_t capacity_bytes = 50ull << 20;
  uint32_t line_bytes = 128;
  uint32_t sector_bytes = 32;
  uint32_t ways = 16;
  // Smallest fill of a miss, in bytes (cudaLimitMaxL2FetchGranularity): the aligned block around
  // each sector asked for comes from DRAM in the same access; a larger L2 promotion wins.
  uint32_t fetch_granularity_bytes = 32;
  uint32_t hit_latency = 200;              // request issue to data back at the SM, L2 hit
  uint32_t bytes_per_cycle = 2048;         // all slices together
  uint32_t sm_port_bytes_per_cycle = 64;   // one SM's link from the L2 (read data back to the SM)
  // Stores and reductions: an SM's write data crosses its link into the L2 (a reduction more
  // slowly), then a write path shared by every SM; the L2 acknowledges a write once it has taken
  // it, without waiting for DRAM (posted), so write_ack_latency is no read round trip.
  uint32_t sm_write_bytes_per_cycle = 32;  // one SM's link into the L2, store data
  double sm_reduce_bytes_per_cycle = 25.6; // the same link, reduction data
  uint32_t write_bytes_per_cycle = 2048;   // all SMs' writes and reductions into the L2 together
  uint32_t write_ack_latency = 10;         // write taken by the L2 to its acknowledgement at the SM
  uint32_t reduction_bytes_per_cycle = 512;  // L2 ALU throughput for reductions
  uint32_t reduction_latency = 15;         // added to a reduction's acknowledgement
  // Reductions into lines the L2 must first read from DRAM, all slices together (the misses the
  // L2 can keep waiting for their data bound it, well below DRAM bandwidth).
  uint32_t reduction_miss_bytes_per_cycle = 640;
  uint32_t request_overhead_cycles = 0;    // per L2 request, in the slice
  // Slices that answer their reads in the order they came (a hit waits behind an earlier miss of
  // its slice), lines spread over them by address hash; 0: every read answered when its data is in.
  uint32_t in_order_slices = 0;
  // With in_order_slices: 0, a miss holds its slice's later reads until its data is in; 1, its
  // later hits only until its DRAM read gets a channel (leaves the controller's queue), its later
  // misses still until it is answered: a hit waits behind misses only while DRAM queues them.
  uint32_t in_order_until_dram_slot = 0;
  // Tag lookups all slices make per cycle (0: unlimited). A request looks up each line it
  // touches, and each other line of its promotion region (hit or miss: the L2 must know which
  // promoted sectors to fetch), so 256B promotion of narrow rows costs lookup rate.
  double tag_lookups_per_cycle = 0;
  // Requests all slices take per cycle, whatever their size (0: unlimited): what holds L2-resident
  // streams of narrow rows below the slices' bytes (silicon: 64.7 a cycle of 32-byte hits on the
  // H100, where 64-byte ones reach its bytes a cycle first).
  double requests_per_cycle = 0;
  // Two partitions on Hopper: a line lives in one (by address hash); an SM reaching a line of
  // the other partition goes through the inter-partition crossbar, and both partitions count
  // the sectors (what ncu's lts__t_sectors shows).
  uint32_t partitions = 1;
  // The partition each SM reads through (its near partition), by SM (silicon's %smid order);
  // empty: SM % partitions. A line homed in the other partition is a far access.
  std::vector<uint32_t> sm_partition;
  uint32_t far_latency = 0;                // added to the round trip of a far access
  // The first read of a line a 256-byte promotion took in unasked is a lookup miss that fetches
  // nothing; for a share of the lines (fixed by a hash of the line) its data comes from elsewhere
  // in the L2, promoted_detour_cycles later than a hit's, for the rest at a hit's time.
  uint32_t promoted_detour_cycles = 0;
  double promoted_detour_share = 0;
  uint32_t crossbar_bytes_per_cycle = 4096;  // between the partitions, each way
  // 1: a far read is sent the whole span its fill covers within the line (the fetch granularity,
  // grown to the promotion): that span crosses, the home partition counts each of its sectors and
  // the near copy keeps them all, so that the near partition's later reads of the span are near
  // hits. 0: only the sectors asked for cross and are kept (the fill's other sectors in a far line
  // are counted once more at the fill).
  uint32_t far_read_takes_span = 0;
  // A GPC's read coalescer (GpcCoalescer): gpc_sms consecutive SMs share one; reads of the same
  // sectors reaching it within gpc_coalesce_window_cycles are served once. 0: off. It keeps track
  // of gpc_coalesce_entries reads a GPC (a power of two, at least GpcCoalescer::kWays).
  uint32_t gpc_sms = 16;
  uint32_t gpc_coalesce_window_cycles = 0;
  uint32_t gpc_coalesce_entries = 32768;
  // How many SMs one read of the coalescer serves, its own included (0: any number).
  uint32_t gpc_coalesce_readers = 0;
  // How far apart (cycles) a read merges with one the L2 answered from lines it held (a hit);
  // reads that wait for DRAM or a fill merge while in flight. The largest value: like those.
  uint32_t gpc_coalesce_hit_window_cycles = 0xFFFFFFFFu;
  // Dirty bytes a large write (a cudaMemset far larger than the L2) leaves in the L2 for the next
  // kernel: the footprint of a scenario's `l2_state: dirty` unless it sets its own.
  uint64_t dirty_launch_bytes = 0;
};

// DRAM as channels of banks with open pages: a channel moves bytes_per_cycle / channels; an
// access to a bank whose open page is another one first keeps the bank busy for
// row_miss_cycles (precharge and activate). Locality therefore matters: neighbouring accesses
// share pages, scattered small ones pay the row misses. The controller reorders its queue for
// page hits (FR-FCFS): an access finds its page open if the page was opened within
// scheduler_window_cycles of it, whatever other pages the bank served in between (0: one open
// page per bank, strictly in arrival order). A bank also stays busy while its data moves, at
// bank_bytes_per_cycle (a pseudo-channel's rate; 0: not held), so that small scattered accesses
// cost a bank a page opening each and large ones spread it over more data.
struct DramConfig {
  double bytes_per_cycle = 1700;           // at the SM clock, all channels together
  uint32_t latency = 350;                  // added to an L2 miss
  uint32_t channels = 1;
  uint32_t banks = 1;                      // per channel
  uint32_t interleave_bytes = 256;         // consecutive addresses change channel every this many bytes
  uint32_t page_bytes = 2048;              // per bank
  uint32_t row_miss_cycles = 0;
  uint32_t scheduler_window_cycles = 0;
  // 1: a bank holds one page at a time. An access finds its page open only while the bank is on
  // it (no other page has been opened since the page's own opening was done) or while the page's opening is
  // still queued (the access joins it): how long a page stays reachable then follows how long
  // openings wait for their turn, i.e. the controller's queue, instead of a fixed window (which
  // still bounds it). 0: the window alone, whatever other pages the bank opened in between.
  uint32_t page_tenure = 0;
  double bank_bytes_per_cycle = 0;         // one bank's transfer rate (0: the bank is not held by transfers)
  // 1: the promoted part of an L2 fill is a background read: demand reads are timed as if it were
  // not there, and it takes what bandwidth they leave (it still counts against the channel).
  // 0: every read in arrival order.
  uint32_t background_promoted_fills = 0;
  // A background read that would wait longer than this behind demand is served as demand (the
  // controller ages requests): demand cannot starve it, and it takes demand's bandwidth then.
  // 0: no limit.
  uint32_t background_max_wait_cycles = 0;
  // Channel time each access costs on top of its data, in bytes' worth (commands, bus turnaround):
  // what makes many small accesses slower than fewer large ones to the same open pages.
  uint32_t access_overhead_bytes = 0;
  // Page openings (activations) the DRAM can make per cycle, all channels together: a pseudo-
  // channel opens at most four rows per tFAW (and one per tRRD), so accesses that each open a page
  // for little data (narrow rows read down a column) are paced by their openings, not their bytes.
  // An access that opens a page starts no earlier than its activation's turn. 0: no limit.
  double activations_per_cycle = 0;
  // Reads of some pages take longer: a page's reads are slow with probability slow_read_fraction
  // (a fixed hash of the page, so runs are reproducible) and then take slow_read_extra_cycles more.
  // A box of many rows almost surely has a slow one and completes at the slow latency; a box of
  // one to a few rows mostly does not (silicon's cold latency: 1-8 rows ~800 cycles, 16+ ~1200).
  double slow_read_fraction = 0;
  uint32_t slow_read_extra_cycles = 0;
};

// Thread-block clusters (the ClusterFabric): when a multicast load may start. An empirical model
// of silicon's serialisation of multicast loads, whose cause is not known (configs/arch/h200.yaml
// says what was measured, docs/architecture.md how it is modelled): each multicast holds its
// cluster's multicast resource from its start for multicast_occupancy_cycles + bytes /
// multicast_bytes_per_cycle, and one SM runs at most multicast_inflight_per_sm multicasts at once.
// Plain loads are not concerned.
struct ClusterConfig {
  uint32_t multicast_occupancy_cycles = 925;  // fixed part of a multicast's hold on the resource
  double multicast_bytes_per_cycle = 150;     // the part that grows with its bytes (each destination's)
  uint32_t multicast_inflight_per_sm = 1;     // a multicast waits until fewer of its SM's are in flight
};

// What a kernel launch adds to the span of its CTAs (the first CTA's start to the last one's end):
// cudaEvents around a launch measure the span plus this (the launch, CTA dispatch, teardown).
struct LaunchConfig {
  uint32_t overhead_ns = 0;
  // A CTA of a later wave starts this long after the CTA whose slot it takes has ended (the block
  // scheduler's dispatch); the first wave's CTAs all start at once.
  uint32_t cta_dispatch_ns = 0;
};

struct SimConfig {
  uint32_t quantum_cycles = 200;           // temporal decoupling: how far a unit may run ahead
  uint32_t bandwidth_window_cycles = 64;   // granularity of the bandwidth accounting
};

struct ArchConfig {
  std::string name;
  std::string source_file;
  uint32_t sm_count = 132;
  double sm_clock_mhz = 1755;
  SmConfig sm;
  TmaUnitConfig tma;
  DescriptorCacheConfig descriptor_cache;
  SmemConfig smem;
  L2Config l2;
  DramConfig dram;
  ClusterConfig cluster;
  LaunchConfig launch;
  SimConfig sim;
};

}  // namespace tma
