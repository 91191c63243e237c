// The L2 shared by every SM: sectored (32-byte sectors, 128-byte lines), set associative with
// LRU replacement, write-back. A miss fills from DRAM at the request's L2 promotion granularity
// (64/128/256 bytes, or just the missing sectors without promotion). Timing: reads take a fixed
// hit latency, a bandwidth server for all slices together and one per SM link back; writes and
// reductions are posted: each crosses its SM's write link and the shared write path and is
// acknowledged once taken (a reduction's ALU and, on a miss, the miss path booked too; an evicted
// dirty line taken by DRAM), not when its data is in. DRAM through its socket. Data: the
// GlobalMemory backing store.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <vector>

#include "tma/core/arch_config.h"
#include "tma/core/bandwidth_server.h"
#include "tma/core/cycle_time.h"
#include "tma/core/huge_page_allocator.h"
#include "tma/memory/global_memory.h"
#include "tma/memory/gpc_coalescer.h"
#include "tma/core/stats.h"
#include "tma/core/tlm_payloads.h"

namespace tma {

class L2Cache : public sc_core::sc_module, public StatsProvider {
 public:
  tlm_utils::multi_passthrough_target_socket<L2Cache> in;  // one binding per SM
  tlm_utils::simple_initiator_socket<L2Cache> dram_out;

  L2Cache(sc_core::sc_module_name name, const ArchConfig& arch, GlobalMemory& memory);
  void collect_stats(StatsRecord& out) const override;
  void end_of_elaboration() override;
  // Marks [address, address + bytes) as present, as if read (clean) or written (dirty) before the
  // run, each line the most recently used: the L2 a previous kernel left. Dirty lines are written
  // back to DRAM when evicted. At most the L2's capacity of one call is kept. With `sm` (the SM
  // that read them), the lines homed in the other partition than the SM's have their near copies
  // too, as that read would have left them (they take room: a 40 MB tensor read again by the same
  // SMs no longer fits a 50 MB L2 whose SMs keep copies of the half that is far).
  void prefill(uint64_t address, uint64_t bytes, bool dirty = false, int sm = -1);
  // Records each request's [issue, answer) cycles there (the VCD's occupancy); none by default.
  void set_occupancy_log(OccupancyLog* log) { occupancy_ = log; }

 private:
  // A line in one 64-byte host cache line (a set of 16 ways is 1 KB, scanned in order): the
  // ready cycles of sectors 4-7, where a line has more than four, are kept apart (ready_of).
  static constexpr uint32_t kInlineSectors = 4;
  struct alignas(64) Line {
    uint64_t tag = ~0ull;  // line address / line_bytes
    uint64_t lru = 0;
    // Cycle each sector's data is in the L2: a request that finds a sector still being filled
    // from DRAM (valid, but not yet there) waits for it.
    std::array<uint64_t, kInlineSectors> ready{};
    uint64_t promoted_cycle = 0;
    int16_t promoter_sm = -1;
    // The line is here only because a fill's promotion block took it in, unasked (the other line
    // of a 256B promotion): the first read of it is a lookup miss, though its data is in the L2 or
    // on its way (ncu: such streams hit no more with 256B than with 128B promotion and read DRAM
    // once; promoted_line.csv). kPromotedAway: that read's data comes from elsewhere in the L2,
    // later than a hit's (l2.promoted_detour_cycles).
    uint8_t promoted_only = 0;
    uint8_t valid = 0;     // sector bits
    uint8_t dirty = 0;
    // Sectors a fill brought in unasked, in a line homed away from the requesting SM: counted in
    // lts_sectors, unless another SM asks for them at about the same time (then counted once).
    uint8_t far_promoted = 0;
    // Sectors a fill brought in unasked (promotion, fetch granularity) that nothing has read yet:
    // counted as never read when the line is evicted or the run ends with them so.
    uint8_t unread = 0;
  };
  static_assert(sizeof(Line) == 64, "a line is one host cache line");
  static constexpr uint8_t kPromotedHere = 1, kPromotedAway = 2;  // Line::promoted_only
  // Sector s's ready cycle of line l.
  uint64_t& ready_of(Line* l, uint32_t s) {
    return s < kInlineSectors ? l->ready[s]
                              : extra_ready_[static_cast<size_t>(l - lines_.data()) * kInlineSectors + s - kInlineSectors];
  }
  void b_transport(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  Line* find(uint64_t line_index);
  // Asks the host CPU to bring the set of `line_index` into its cache (speed only).
  void prefetch_set(uint64_t line_index) const;
  // The same for every lookup a read of `address` by `sm` makes (speed only); with `promotion`
  // (bytes, 0: none) also the other lines of its promotion block, which a miss's fill looks up.
  void prefetch_lookups(int sm, uint64_t address, uint64_t promotion = 0) const;
  // Per port: the last request's address and the step from the one before (a unit walks a box's
  // rows at a fixed stride): the host prefetches the lookups of the requests it predicts.
  struct Stride {
    uint64_t last = 0;
    int64_t step = 0;
    bool ahead = false;  // the requests up to two steps on are prefetched already
    bool missed = false; // the last request missed: the next ones likely fill (their promotion blocks)
  };
  std::vector<Stride> strides_;
  Line* allocate(uint64_t line_index, uint64_t cycle);
  // kPromotedAway or kPromotedHere for a line a promotion takes in unasked.
  uint8_t promoted_kind(uint64_t line_index) const;
  size_t set_of(uint64_t line_index) const;
  // Fills the missing sectors of a miss that asked for the sectors [asked_begin, asked_end) with
  // L2 promotion `promotion` (bytes, 0: none): the demand (what was asked, grown to the fetch
  // granularity) first, then the rest of the promotion block; returns the cycle the demanded data
  // is in the L2 (`cycle` when nothing was missing) and adds the bytes fetched to `fetched`.
  // Promoted sectors carry their own ready cycle.
  // The span a fill of [asked_begin, asked_end) covers: the fetch granularity, grown to the
  // promotion block.
  void fill_span(uint64_t asked_begin, uint64_t asked_end, uint64_t promotion, uint64_t& begin, uint64_t& end) const;
  // `span_counted`: the request takes the asked lines' span across and counts it itself
  // (far_read_takes_span, a far read), so the fill does not count those sectors again.
  uint64_t fill(uint64_t asked_begin, uint64_t asked_end, uint64_t promotion, uint64_t cycle, int sm,
                uint64_t& fetched, bool span_counted = false);
  // One access through the DRAM socket at `cycle`; returns the cycle DRAM answers.
  uint64_t dram_access(tlm::tlm_command command, uint64_t address, uint64_t bytes, uint64_t cycle);
  // `slot` (when given, with l2.in_order_until_dram_slot): the cycle the read got a DRAM channel.
  uint64_t dram_read(uint64_t address, uint64_t bytes, uint64_t cycle, bool promoted, uint64_t* slot = nullptr);
  // A write-back: DRAM takes it at once or later (its bandwidth); nobody waits for the data to land.
  void dram_write(uint64_t address, uint64_t bytes, uint64_t cycle);
  // The partition that holds a line, and the one an SM is attached to.
  uint32_t home_partition(uint64_t line_index) const;
  uint32_t near_partition(int sm) const {
    const auto i = static_cast<size_t>(sm);
    return i < cfg_.sm_partition.size() ? cfg_.sm_partition[i] : static_cast<uint32_t>(sm) % cfg_.partitions;
  }
  // The near partition's copies of far lines (reads make them, writes drop them).
  uint64_t copy_tag(uint64_t line_index, uint32_t partition) const;
  bool near_copy_holds(uint64_t address, uint64_t bytes, uint32_t partition);
  void keep_near_copy(uint64_t address, uint64_t bytes, uint32_t partition, uint64_t ready);
  void drop_near_copies(uint64_t address, uint64_t bytes);
  void apply_reduction(const MemRequest& req, uint64_t address, const uint8_t* src, uint64_t bytes);

  CycleClock clock_;
  L2Config cfg_;
  GlobalMemory& memory_;
  uint32_t sectors_per_line_;
  uint64_t fill_bytes_;  // smallest fill (l2.fetch_granularity_bytes), at least a sector
  size_t sets_;
  std::vector<Line, HugePageAllocator<Line>> lines_;  // sets_ x ways (huge pages: speed only)
  std::vector<uint64_t> extra_ready_;  // sectors 4-7 of each line, when lines have more than four
  void touch(Line* l) { l->lru = ++lru_clock_; }
  uint64_t lru_clock_ = 0;
  bool prefilling_ = false;
  BandwidthServer slices_, write_path_, reduction_alu_, reduction_miss_path_, crossbar_;
  BandwidthServer tag_lookups_;  // in lookups, not bytes
  BandwidthServer request_rate_;  // in requests, not bytes
  uint64_t tag_lookups_made_ = 0;
  std::vector<BandwidthServer> to_sm_, from_sm_;
  GpcCoalescer coalescer_{1, 1, 0, 4, 128, 32};  // set up once the SMs are bound
  uint64_t coalesced_reads_ = 0, coalesced_bytes_ = 0;
  uint64_t writeback_taken_ = 0;  // the current request's write-backs: the cycle DRAM took the last
  uint32_t window_;
  tlm::tlm_generic_payload dram_gp_;
  std::vector<std::pair<Line*, uint8_t>> filling_;  // sectors of the fill in progress
  // Promoted sectors of the fill in progress that cross to their home partition once the
  // request's own data has crossed (they follow it over the crossbar): sector and DRAM-out cycle.
  struct FarPromoted {
    Line* line;
    uint64_t tag;  // the line's, to skip it should this request have evicted it meanwhile
    uint8_t sector;
    uint64_t in_l2;
  };
  std::vector<FarPromoted> far_promoted_;
  struct FillRun {
    uint64_t address, bytes;
    size_t first, count;  // its sectors in filling_
  };
  std::vector<FillRun> demand_runs_, promoted_runs_;  // the fill in progress, cut into DRAM accesses

  uint64_t requests_[5] = {0, 0, 0, 0, 0};  // by MemAccess
  uint64_t sectors_requested_ = 0, sector_hits_ = 0, sector_misses_ = 0;
  uint64_t bytes_requested_ = 0, dram_fill_bytes_ = 0, writeback_bytes_ = 0, evictions_ = 0;
  uint64_t far_requests_ = 0, lts_sectors_ = 0, near_copy_hits_ = 0, reduction_misses_ = 0;
  uint64_t promoted_line_first_reads_ = 0;  // reads that found a promoted-only line (missed, nothing fetched)
  uint64_t promoted_detour_reads_ = 0;      // of them, served from elsewhere in the L2 (later)
  uint64_t promoted_miss_sectors_ = 0;      // their sectors (in sector_misses, though nothing was fetched)
  uint64_t promoted_far_sectors_ = 0;  // unasked sectors of fills, homed away from the SM (ncu counts them)
  uint64_t far_span_sectors_ = 0;  // far_read_takes_span: unasked sectors a far read's home sent along
  OccupancyLog* occupancy_ = nullptr;
  // l2.in_order_slices: per slice, the cycle until which its reads so far hold the later ones
  // (empty: off); the slice of a line by address hash; the reads that waited for an earlier one.
  std::vector<uint64_t> in_order_done_;
  std::vector<uint64_t> in_order_held_;  // with in_order_until_dram_slot: until when its hits wait
  uint64_t fill_slot_ = 0;       // fill: the latest of its demand reads' DRAM slots
  size_t slice_of(uint64_t line_index) const;
  uint64_t in_order_waits_ = 0;
  uint64_t evicted_unread_sectors_ = 0;  // unasked fill sectors evicted without a read
};

}  // namespace tma
