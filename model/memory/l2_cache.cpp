#include "tma/memory/l2_cache.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tma/core/splitmix64.h"
#include "tma/descriptor/element_ops.h"

namespace tma {

L2Cache::L2Cache(sc_core::sc_module_name name, const ArchConfig& arch, GlobalMemory& memory)
    : sc_module(name), in("in"), dram_out("dram_out"), clock_(arch.sm_clock_mhz), cfg_(arch.l2), memory_(memory),
      sectors_per_line_(arch.l2.line_bytes / arch.l2.sector_bytes),
      fill_bytes_(std::max(arch.l2.sector_bytes, arch.l2.fetch_granularity_bytes)),
      sets_(std::max<uint64_t>(1, arch.l2.capacity_bytes / (uint64_t{arch.l2.line_bytes} * arch.l2.ways))),
      lines_(sets_ * arch.l2.ways),
      extra_ready_(sectors_per_line_ > kInlineSectors ? lines_.size() * kInlineSectors : 0, 0), slices_(arch.l2.bytes_per_cycle, arch.sim.bandwidth_window_cycles),
      write_path_(arch.l2.write_bytes_per_cycle, arch.sim.bandwidth_window_cycles),
      reduction_alu_(arch.l2.reduction_bytes_per_cycle, arch.sim.bandwidth_window_cycles),
      reduction_miss_path_(arch.l2.reduction_miss_bytes_per_cycle, arch.sim.bandwidth_window_cycles),
      crossbar_(arch.l2.crossbar_bytes_per_cycle, arch.sim.bandwidth_window_cycles),
      tag_lookups_(arch.l2.tag_lookups_per_cycle > 0 ? arch.l2.tag_lookups_per_cycle : 1, arch.sim.bandwidth_window_cycles),
      request_rate_(arch.l2.requests_per_cycle > 0 ? arch.l2.requests_per_cycle : 1, arch.sim.bandwidth_window_cycles),
      window_(arch.sim.bandwidth_window_cycles) {
  in.register_b_transport(this, &L2Cache::b_transport);
  in_order_done_.assign(arch.l2.in_order_slices, 0);
  if (arch.l2.in_order_until_dram_slot) in_order_held_.assign(arch.l2.in_order_slices, 0);
}

size_t L2Cache::slice_of(uint64_t line_index) const {
  uint64_t h = line_index * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  return static_cast<size_t>(h % in_order_done_.size());
}

void L2Cache::end_of_elaboration() {
  const size_t ports = in.size();
  to_sm_.assign(ports, BandwidthServer(cfg_.sm_port_bytes_per_cycle, window_));
  strides_.assign(ports, Stride{});
  from_sm_.assign(ports, BandwidthServer(cfg_.sm_write_bytes_per_cycle, window_));
  coalescer_ = GpcCoalescer(static_cast<uint32_t>(ports), cfg_.gpc_sms, cfg_.gpc_coalesce_window_cycles,
                            cfg_.gpc_coalesce_entries, cfg_.line_bytes, cfg_.sector_bytes, cfg_.gpc_coalesce_readers,
                            cfg_.gpc_coalesce_hit_window_cycles);
}

// Lines spread over the sets by a hash of the line address, as GPU L2s do, so that strided
// tensors do not all land in a few sets. Each run of `sets_` consecutive lines takes every set
// once, in a rotation hashed from the run: a contiguous footprint spreads evenly over the sets, as
// silicon's address hash spreads it (a warm 24 MB tensor, 36 MB with its near copies, stays whole
// in the H100's 50 MB; a random set per line overflows 2-6% of such sets), while strided
// footprints still meet different sets run by run.
size_t L2Cache::set_of(uint64_t line_index) const {
  uint64_t r = line_index / sets_;
  r ^= r >> 17;
  r *= 0x9E3779B97F4A7C15ull;
  r ^= r >> 29;
  return static_cast<size_t>((line_index % sets_ + r % sets_) % sets_);
}

L2Cache::Line* L2Cache::find(uint64_t line_index) {
  Line* set = &lines_[set_of(line_index) * cfg_.ways];
  for (uint32_t w = 0; w < cfg_.ways; ++w)
    if (set[w].tag == line_index) return &set[w];
  return nullptr;
}

void L2Cache::prefetch_set(uint64_t line_index) const {
  const char* set = reinterpret_cast<const char*>(&lines_[set_of(line_index) * cfg_.ways]);
  const size_t bytes = sizeof(Line) * cfg_.ways;
  for (size_t b = 0; b < bytes; b += 64) __builtin_prefetch(set + b);
  // A function of prefetches alone can look pure to GCC, which then drops its calls (it did when
  // the set's modulo was made a multiplication, which cannot trap): an empty volatile asm keeps them.
  asm volatile("");
}

void L2Cache::prefetch_lookups(int sm, uint64_t address, uint64_t promotion) const {
  coalescer_.prefetch(sm, address);
  prefetch_set(address / cfg_.line_bytes);
  if (promotion > cfg_.line_bytes)
    for (uint64_t li = address / promotion * promotion / cfg_.line_bytes, end = li + promotion / cfg_.line_bytes; li < end; ++li)
      if (li != address / cfg_.line_bytes) prefetch_set(li);
  if (cfg_.partitions > 1 && home_partition(address / cfg_.line_bytes) != near_partition(sm))
    prefetch_set(copy_tag(address / cfg_.line_bytes, near_partition(sm)));
}

L2Cache::Line* L2Cache::allocate(uint64_t line_index, uint64_t cycle) {
  Line* set = &lines_[set_of(line_index) * cfg_.ways];
  Line* victim = &set[0];
  for (uint32_t w = 0; w < cfg_.ways; ++w) {
    if (set[w].tag == ~0ull) {
      victim = &set[w];
      break;
    }
    if (set[w].lru < victim->lru) victim = &set[w];
  }
  // A prefill's evictions belong to the kernels before the run: not counted, nothing written back.
  if (victim->tag != ~0ull && !prefilling_) {
    ++evictions_;
    evicted_unread_sectors_ += static_cast<uint64_t>(__builtin_popcount(victim->unread));
    const uint64_t dirty_bytes = static_cast<uint64_t>(__builtin_popcount(victim->dirty)) * cfg_.sector_bytes;
    if (dirty_bytes) dram_write(victim->tag * cfg_.line_bytes, dirty_bytes, cycle);
  }
  *victim = Line{};
  victim->tag = line_index;
  if (!extra_ready_.empty())
    std::fill_n(&extra_ready_[static_cast<size_t>(victim - lines_.data()) * kInlineSectors], kInlineSectors, uint64_t{0});
  return victim;
}

uint64_t L2Cache::dram_access(tlm::tlm_command command, uint64_t address, uint64_t bytes, uint64_t cycle) {
  dram_gp_.set_command(command);
  dram_gp_.set_address(address);
  dram_gp_.set_data_length(static_cast<unsigned>(bytes));
  dram_gp_.set_data_ptr(nullptr);
  sc_core::sc_time d = clock_.to_time(cycle) - sc_core::sc_time_stamp();
  dram_out->b_transport(dram_gp_, d);
  return clock_.to_cycles(sc_core::sc_time_stamp() + d);
}

uint64_t L2Cache::dram_read(uint64_t address, uint64_t bytes, uint64_t cycle, bool promoted, uint64_t* slot) {
  DramFillClass fill_class;
  fill_class.promoted = promoted;
  fill_class.want_slot = cfg_.in_order_until_dram_slot != 0;
  ScopedExtension<DramFillClass> scoped(dram_gp_, &fill_class);
  const uint64_t done = dram_access(tlm::TLM_READ_COMMAND, address, bytes, cycle);
  if (slot) *slot = fill_class.slot;
  return done;
}

void L2Cache::dram_write(uint64_t address, uint64_t bytes, uint64_t cycle) {
  writeback_bytes_ += bytes;
  writeback_taken_ = std::max(writeback_taken_, dram_access(tlm::TLM_WRITE_COMMAND, address, bytes, cycle));
}

// Copies of far lines live in the same array under a tag of their own per partition.
uint64_t L2Cache::copy_tag(uint64_t line_index, uint32_t partition) const {
  return line_index | (uint64_t{1} << 63) | (uint64_t{partition} << 62);
}

bool L2Cache::near_copy_holds(uint64_t address, uint64_t bytes, uint32_t partition) {
  const uint64_t sector = cfg_.sector_bytes, line = cfg_.line_bytes;
  uint64_t at = ~0ull;  // the line `l` is the copy of (one lookup per line)
  Line* l = nullptr;
  for (uint64_t a = address / sector * sector; a < address + bytes; a += sector) {
    if (a / line != at) {
      at = a / line;
      l = find(copy_tag(at, partition));
    }
    if (!l || !(l->valid & (1u << ((a % line) / sector)))) return false;
  }
  return true;
}

void L2Cache::keep_near_copy(uint64_t address, uint64_t bytes, uint32_t partition, uint64_t ready) {
  const uint64_t sector = cfg_.sector_bytes, line = cfg_.line_bytes;
  uint64_t at = ~0ull;  // the line `l` is the copy of (one lookup per line)
  Line* l = nullptr;
  for (uint64_t a = address / sector * sector; a < address + bytes; a += sector) {
    if (a / line != at) {
      at = a / line;
      const uint64_t tag = copy_tag(at, partition);
      l = find(tag);
      if (!l) l = allocate(tag, ready);
    }
    const uint32_t s = static_cast<uint32_t>((a % line) / sector);
    l->valid |= static_cast<uint8_t>(1u << s);
    ready_of(l, s) = ready;
    touch(l);
  }
}

void L2Cache::drop_near_copies(uint64_t address, uint64_t bytes) {
  const uint64_t sector = cfg_.sector_bytes, line = cfg_.line_bytes;
  for (uint32_t p = 0; p < cfg_.partitions; ++p)
    for (uint64_t a = address / sector * sector; a < address + bytes; a += sector)
      if (Line* l = find(copy_tag(a / line, p))) l->valid &= static_cast<uint8_t>(~(1u << ((a % line) / sector)));
}

uint32_t L2Cache::home_partition(uint64_t line_index) const {
  if (cfg_.partitions <= 1) return 0;
  uint64_t h = line_index * 0xD6E8FEB86659FD93ull;
  h ^= h >> 32;
  return static_cast<uint32_t>(h % cfg_.partitions);
}

uint8_t L2Cache::promoted_kind(uint64_t line_index) const {
  // Which lines' first reads take the detour is fixed by the address (a second lease of the GPU
  // found the same rows slow); the rule is not known, so a hash of the line picks the share.
  const double u = static_cast<double>(splitmix64_mix(line_index ^ 0x5052544Full) >> 11) * 0x1.0p-53;
  return u < cfg_.promoted_detour_share ? kPromotedAway : kPromotedHere;
}

void L2Cache::fill_span(uint64_t asked_begin, uint64_t asked_end, uint64_t promotion, uint64_t& begin,
                        uint64_t& end) const {
  const uint64_t demand_begin = asked_begin / fill_bytes_ * fill_bytes_;
  const uint64_t demand_end = (asked_end + fill_bytes_ - 1) / fill_bytes_ * fill_bytes_;
  begin = promotion ? std::min(asked_begin / promotion * promotion, demand_begin) : demand_begin;
  end = promotion ? std::max((asked_end + promotion - 1) / promotion * promotion, demand_end) : demand_end;
}

uint64_t L2Cache::fill(uint64_t asked_begin, uint64_t asked_end, uint64_t promotion, uint64_t cycle, int sm,
                       uint64_t& fetched, bool span_counted) {
  const uint64_t sector = cfg_.sector_bytes, line = cfg_.line_bytes;
  // The demand is what was asked, grown to the fetch granularity: those other sectors come in the
  // demand's DRAM access, not as a promoted read. The fill is the promotion block around the
  // demand (or the demand alone).
  const uint64_t demand_begin = asked_begin / fill_bytes_ * fill_bytes_;
  const uint64_t demand_end = (asked_end + fill_bytes_ - 1) / fill_bytes_ * fill_bytes_;
  uint64_t begin, end;
  fill_span(asked_begin, asked_end, promotion, begin, end);
  uint64_t a = begin;
  uint64_t bytes = 0;
  filling_.clear();
  while (a < end) {
    // One line at a time: its sectors in [a, end).
    const uint64_t li = a / line, line_end = std::min(end, (li + 1) * line);
    Line* l = find(li);
    if (!l) l = allocate(li, cycle);
    // A line the block takes in without any sector that was asked for.
    if (!l->valid && (line_end <= asked_begin || li * line >= asked_end)) l->promoted_only = promoted_kind(li);
    for (; a < line_end; a += sector) {
      const uint8_t s = static_cast<uint8_t>((a % line) / sector);
      if (!(l->valid & (1u << s))) {
        l->valid |= static_cast<uint8_t>(1u << s);
        if (a < asked_begin || a >= asked_end) l->unread |= static_cast<uint8_t>(1u << s);
        filling_.emplace_back(l, s);
        bytes += sector;
      }
    }
    touch(l);
  }
  fetched += bytes;
  fill_slot_ = cycle;
  if (!bytes) return cycle;
  // One DRAM access per contiguous run of missing sectors, cut where the demand (the sectors the
  // request asked for) ends: the demanded part goes first and the request waits only for it; the
  // promoted rest follows to the same pages and is ready when it arrives.
  std::vector<FillRun>& demand = demand_runs_;
  std::vector<FillRun>& promoted = promoted_runs_;
  demand.clear();
  promoted.clear();
  auto is_demand = [&](uint64_t addr) { return addr >= demand_begin && addr < demand_end; };
  auto address_of = [&](size_t i) { return filling_[i].first->tag * line + filling_[i].second * sector; };
  for (size_t i = 0; i < filling_.size();) {
    const uint64_t run_start = address_of(i);
    const bool d = is_demand(run_start);
    size_t j = i + 1;
    while (j < filling_.size() && address_of(j) == run_start + (j - i) * sector && is_demand(address_of(j)) == d) ++j;
    (d ? demand : promoted).push_back(FillRun{run_start, (j - i) * sector, i, j - i});
    i = j;
  }
  uint64_t in_l2 = cycle;
  for (const FillRun& r : demand) {
    uint64_t slot = cycle;
    const uint64_t t = dram_read(r.address, r.bytes, cycle, false, &slot);
    in_l2 = std::max(in_l2, t);
    fill_slot_ = std::max(fill_slot_, slot);
    for (size_t k = r.first; k < r.first + r.count; ++k) ready_of(filling_[k].first, filling_[k].second) = t;
  }
  // A promoted line homed in the other partition than the demand's is filled on the demand's
  // behalf: its data crosses to that partition (after the request's own: b_transport books it).
  const uint32_t demand_home = home_partition(demand_begin / line);
  for (const FillRun& r : promoted) {
    const uint64_t t = dram_read(r.address, r.bytes, cycle, true);
    for (size_t k = r.first; k < r.first + r.count; ++k) {
      auto [pl, s] = filling_[k];
      ready_of(pl, s) = t;
      if (cfg_.partitions > 1 && home_partition(pl->tag) != demand_home)
        far_promoted_.push_back(FarPromoted{pl, pl->tag, s, t});
    }
  }
  // The sectors of a fill that nobody asked for, in lines homed in the other partition than the
  // requesting SM's, are counted by both partitions, as a far access's are (ncu: one sector of
  // each line asked for with 64-byte fetches reads 2.0 L2 bytes per byte, with 128-byte ones 3.0,
  // where 32-byte ones read 1.5: tests/calibration/h100/fetch.csv), unless another SM asks for
  // them within an L2 round trip (b_transport's merge rule).
  // With far_read_takes_span a far read counts the asked lines' other sectors itself, as it
  // takes them (b_transport); a far write or reduction does not.
  if (cfg_.partitions > 1 && (begin < asked_begin || end > asked_end)) {
    const uint32_t near = near_partition(sm);
    const uint64_t asked_lines_begin = asked_begin / line * line, asked_lines_end = (asked_end + line - 1) / line * line;
    for (auto [pl, s] : filling_) {
      const uint64_t a = pl->tag * line + s * sector;
      if ((a >= asked_begin && a < asked_end) || home_partition(pl->tag) == near) continue;
      if (span_counted && a >= asked_lines_begin && a < asked_lines_end) continue;
      ++promoted_far_sectors_;
      pl->far_promoted |= static_cast<uint8_t>(1u << s);
      pl->promoter_sm = static_cast<int16_t>(sm);
      pl->promoted_cycle = cycle;
    }
  }
  return in_l2;
}

void L2Cache::prefill(uint64_t address, uint64_t bytes, bool dirty, int sm) {
  const uint64_t line = cfg_.line_bytes;
  const uint8_t all = static_cast<uint8_t>((1u << sectors_per_line_) - 1);
  // The last capacity's worth is what a previous kernel would have left.
  const uint64_t begin = bytes > cfg_.capacity_bytes ? address + bytes - cfg_.capacity_bytes : address;
  const bool copies = sm >= 0 && cfg_.partitions > 1 && !dirty;
  prefilling_ = true;
  for (uint64_t a = begin / line * line; a < address + bytes; a += line) {
    Line* l = find(a / line);
    if (!l) l = allocate(a / line, 0);
    l->valid = all;
    if (dirty) l->dirty = all;
    touch(l);
    if (copies && home_partition(a / line) != near_partition(sm)) {
      const uint64_t from = std::max(a, begin), to = std::min(a + line, address + bytes);
      keep_near_copy(from, to - from, near_partition(sm), 0);
    }
  }
  prefilling_ = false;
}

void L2Cache::apply_reduction(const MemRequest& req, uint64_t address, const uint8_t* src, uint64_t bytes) {
  const uint32_t e = element_bytes(req.dtype);
  for (uint64_t i = 0; i + e <= bytes; i += e) {
    uint8_t* dst = memory_.writable(address + i, e);
    if (dst) reduce_element(req.dtype, req.reduce, src + i, dst);
  }
}

void L2Cache::b_transport(int port, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  MemRequest* req = gp.get_extension<MemRequest>();
  MemRequest plain;
  if (!req) req = &plain;
  const uint64_t t0 = clock_.to_cycles(sc_core::sc_time_stamp() + delay);
  const uint64_t half = (req->path_latency ? req->path_latency : cfg_.hit_latency) / 2;
  const uint64_t address = gp.get_address();
  const uint64_t bytes = gp.get_data_length();
  const uint64_t sector = cfg_.sector_bytes;
  // The host's cache misses of this request's lookups (the GPC's table, the line's set and, for a
  // line homed in the other partition, its near copy's set), started together rather than one
  // after another. Hints only: no state changes.
  // And those of the next two requests of this port, when its last three were evenly spaced (a
  // unit walking a box's rows): their misses then overlap this request's work.
  // In a run of evenly spaced requests each is prefetched two requests ahead, once.
  if (static_cast<size_t>(port) < strides_.size()) {
    Stride& st = strides_[static_cast<size_t>(port)];
    const int64_t step = static_cast<int64_t>(address - st.last);
    // A port whose last request missed likely misses again (a box's rows were all filled by
    // another SM, or none): then the fills' promotion blocks are prefetched too.
    const uint64_t promotion = st.missed ? req->promotion_bytes : 0;
    if (step != 0 && step == st.step) {
      if (!st.ahead) prefetch_lookups(req->sm, address + static_cast<uint64_t>(step), promotion);
      prefetch_lookups(req->sm, address + 2 * static_cast<uint64_t>(step), promotion);
      st.ahead = true;
    } else {
      prefetch_lookups(req->sm, address, promotion);
      st.ahead = false;
    }
    st.last = address;
    st.step = step;
  } else {
    prefetch_lookups(req->sm, address);
  }
  // Another SM of this GPC read the same sectors a moment ago: its GPC's coalescer serves this
  // read from that one's data, which the L2 sends once; only this SM's own link carries it.
  uint64_t gpc_data_back = 0;
  if (req->access == MemAccess::read && coalescer_.merge(req->sm, address, bytes, t0, gpc_data_back)) {
    ++coalesced_reads_;
    coalesced_bytes_ += bytes;
    if (gp.get_data_ptr()) memory_.read(address, gp.get_data_ptr(), bytes);
    const uint64_t t_done = to_sm_[port].serve(std::max(gpc_data_back, t0 + half), bytes) + half;
    delay = clock_.to_time(t_done) - sc_core::sc_time_stamp();
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  const bool reduce = req->access == MemAccess::reduce;
  const bool writes = req->access == MemAccess::write || reduce;
  ++requests_[static_cast<int>(req->access)];
  bytes_requested_ += bytes;

  // A line of the other partition is reached through the inter-partition crossbar, unless the
  // near partition keeps a copy of it from an earlier read (then it is a near access).
  const uint32_t near = near_partition(req->sm);
  bool far = cfg_.partitions > 1 && home_partition(address / cfg_.line_bytes) != near;
  const bool reads = req->access == MemAccess::read || req->access == MemAccess::descriptor ||
                     req->access == MemAccess::prefetch;
  const bool copy_hit = far && reads && near_copy_holds(address, bytes, near);
  if (copy_hit) {
    far = false;
    ++near_copy_hits_;
  }
  const uint64_t far_half = far ? cfg_.far_latency / 2 : 0;
  if (far) ++far_requests_;
  // A read travels to the slice in half its round trip. Write data crosses the SM's write link
  // (a reduction's more slowly: silicon reduces at 25.6 B/cycle where it stores at 32) and the
  // write path all SMs share; `taken` is when the L2 has taken the write, what its
  // acknowledgement waits for.
  uint64_t t_arrive = t0 + half + far_half + cfg_.request_overhead_cycles;
  uint64_t taken = 0;
  writeback_taken_ = 0;
  if (writes) {
    const double link_bytes = reduce ? std::ceil(bytes * cfg_.sm_write_bytes_per_cycle / cfg_.sm_reduce_bytes_per_cycle)
                                     : static_cast<double>(bytes);
    t_arrive = from_sm_[port].serve(t0, static_cast<uint64_t>(link_bytes)) + cfg_.request_overhead_cycles;
    taken = write_path_.serve(t_arrive, bytes);
    if (far) taken = std::max(taken, crossbar_.serve(t_arrive, bytes));
  }
  uint64_t t_ready = slices_.serve(t_arrive, bytes);
  // Each line the request touches is looked up, and for a read each other line of its promotion
  // region (a write fetches nothing): silicon's 256B promotion costs L2-resident 64 B x 256
  // streams 10-13% (lookup-bound) where 128B promotion, inside the line, costs nothing.
  const uint64_t line = cfg_.line_bytes, p = reads ? req->promotion_bytes : 0;
  const uint64_t look_begin = std::min(address, p ? address / p * p : address) / line;
  const uint64_t look_end = (std::max(address + bytes, p ? (address + bytes + p - 1) / p * p : 0) + line - 1) / line;
  tag_lookups_made_ += look_end - look_begin;
  if (cfg_.tag_lookups_per_cycle > 0) t_ready = std::max(t_ready, tag_lookups_.serve(t_arrive, look_end - look_begin));
  if (cfg_.requests_per_cycle > 0) t_ready = std::max(t_ready, request_rate_.serve(t_arrive, 1));
  taken = std::max(taken, t_ready);

  // Sector lookup, one line at a time.
  uint64_t wait_for = 0;
  const uint64_t first = address / sector * sector, last = (address + bytes + sector - 1) / sector * sector;
  uint32_t missed = 0;
  for (uint64_t a = first; a < last;) {
    const uint64_t li = a / cfg_.line_bytes, line_end = std::min(last, (li + 1) * cfg_.line_bytes);
    Line* l = find(copy_hit ? copy_tag(li, near) : li);
    // The first read of a line a promotion took in unasked: its sectors are lookup misses (ncu),
    // with nothing fetched; the request still waits for their data. For some lines the data comes
    // from elsewhere in the L2, later.
    bool first_read_of_promoted = false, detour = false;
    if (l) {
      touch(l);
      if (l->promoted_only) {
        first_read_of_promoted = req->access != MemAccess::write;
        detour = first_read_of_promoted && l->promoted_only == kPromotedAway;
        if (first_read_of_promoted) ++promoted_line_first_reads_;
        if (detour) {
          ++promoted_detour_reads_;
          t_ready = std::max(t_ready, t_arrive + cfg_.promoted_detour_cycles);
        }
        l->promoted_only = 0;
      }
    }
    for (; a < line_end; a += sector) {
      ++sectors_requested_;
      lts_sectors_ += far ? 2 : 1;  // a far access is counted by both partitions
      const uint32_t s = static_cast<uint32_t>((a % cfg_.line_bytes) / sector);
      if (l && (l->valid & (1u << s))) {
        if (first_read_of_promoted) {
          ++sector_misses_;
          ++promoted_miss_sectors_;
        } else {
          ++sector_hits_;
        }
        if (req->access != MemAccess::write) l->unread &= static_cast<uint8_t>(~(1u << s));  // its data used
        wait_for = std::max(wait_for, ready_of(l, s));  // a fill in flight: wait for its data
        if (l->far_promoted & (1u << s)) {
          // A far promoted sector that another SM asks for within an L2 round trip of the
          // promotion (before or after: SMs run ahead of each other): the two meet in the far
          // partition's miss queue and are counted once (silicon: +3-5% sectors, not +25%, when
          // neighbouring SMs read the promoted halves at the same time).
          if (req->sm != l->promoter_sm && cycles_apart(t_arrive, l->promoted_cycle) <= cfg_.hit_latency)
            --promoted_far_sectors_;
          l->far_promoted &= static_cast<uint8_t>(~(1u << s));
        }
      } else {
        ++sector_misses_;
        ++missed;
      }
    }
  }
  uint64_t fetched = 0;
  if (req->access == MemAccess::write) {
    // Full-sector writes need no fetch; the sectors become valid and dirty.
    for (uint64_t a = first; a < last; a += sector) {
      Line* l = find(a / cfg_.line_bytes);
      if (!l) l = allocate(a / cfg_.line_bytes, t_arrive);
      const uint8_t bit = static_cast<uint8_t>(1u << ((a % cfg_.line_bytes) / sector));
      l->valid |= bit;
      l->dirty |= bit;
      touch(l);
    }
  }
  // Until when this read holds its slice's later reads, with in_order_until_dram_slot: a hit
  // until it is answered, a miss until its DRAM read got a channel; a hit on a fill in flight
  // waits for the fill's data aside (as a miss does for its own).
  uint64_t holds_until = t_ready;
  if (req->access != MemAccess::write && missed) {
    t_ready = std::max(t_ready, fill(first, last, req->promotion_bytes, t_arrive, req->sm, fetched,
                                     far && reads && cfg_.far_read_takes_span));
    holds_until = std::max(holds_until, fill_slot_);
  }
  t_ready = std::max(t_ready, wait_for);
  if (!in_order_done_.empty() && req->access == MemAccess::read) {
    // The slice answers its reads in the order they came: a read waits behind the earlier ones.
    // With in_order_until_dram_slot only the misses do (their data comes back in order); a hit
    // waits for the earlier hits, and for the earlier misses only until they got a DRAM channel.
    const size_t slice = slice_of(address / cfg_.line_bytes);
    uint64_t& answered = in_order_done_[slice];
    uint64_t& held = cfg_.in_order_until_dram_slot ? in_order_held_[slice] : answered;
    const uint64_t after = missed ? answered : held;
    if (after > t_ready) {
      ++in_order_waits_;
      t_ready = after;
    }
    answered = std::max(answered, t_ready);
    held = std::max(held, missed ? holds_until : t_ready);
  }
  if (reduce) {
    // The ALUs (and for a miss the miss path) are booked when the request is taken, so that their
    // throughput holds the SMs back; the sectors hold the result once their data is in and reduced.
    taken = std::max(taken, reduction_alu_.serve(t_arrive, bytes));
    if (missed) {
      ++reduction_misses_;
      taken = std::max(taken, reduction_miss_path_.serve(t_arrive, bytes));
    }
    t_ready = std::max(t_ready, taken);
    for (uint64_t a = first; a < last; a += sector) {
      Line* l = find(a / cfg_.line_bytes);
      if (!l) continue;
      const uint32_t s = static_cast<uint32_t>((a % cfg_.line_bytes) / sector);
      l->dirty |= static_cast<uint8_t>(1u << s);
      ready_of(l, s) = std::max(ready_of(l, s), t_ready);
    }
  }
  // What a far read takes across: the sectors asked for, or with far_read_takes_span its fill's
  // whole span within the lines asked, as far as the home holds it; the home counts the span's
  // other sectors too, and the near copy keeps them.
  uint64_t across_begin = address, across_bytes = bytes;
  if (far && reads && cfg_.far_read_takes_span) {
    uint64_t span_begin, span_end;
    fill_span(first, last, req->promotion_bytes, span_begin, span_end);
    span_begin = std::max(span_begin, first / line * line);
    span_end = std::min(span_end, (last + line - 1) / line * line);
    // The span as far as the home holds it on from the asked sectors (a line filled without this
    // promotion may hold less): the valid sectors either side, up to the first that is not.
    const auto held = [&](uint64_t a) {
      const Line* l = find(a / line);
      return l && (l->valid & (1u << ((a % line) / sector)));
    };
    uint64_t lo = first, hi = last;
    while (lo > span_begin && held(lo - sector)) lo -= sector;
    while (hi < span_end && held(hi)) hi += sector;
    span_begin = lo;
    span_end = hi;
    far_span_sectors_ += (first - span_begin + span_end - last) / sector;
    across_begin = span_begin;
    across_bytes = span_end - span_begin;
  }
  if (cfg_.partitions > 1) {
    if (far && reads) keep_near_copy(across_begin, across_bytes, near, t_ready);
    if (writes) drop_near_copies(address, bytes);
  }
  req->sectors_missed = missed;
  if (static_cast<size_t>(port) < strides_.size()) strides_[static_cast<size_t>(port)].missed = missed != 0;
  req->dram_fill_bytes = static_cast<uint32_t>(fetched);
  dram_fill_bytes_ += fetched;

  // Functional effect on the backing store.
  switch (req->access) {
    case MemAccess::read:
    case MemAccess::descriptor:
      if (gp.get_data_ptr()) memory_.read(address, gp.get_data_ptr(), bytes);
      break;
    case MemAccess::write: memory_.write(address, gp.get_data_ptr(), bytes); break;
    case MemAccess::reduce: apply_reduction(*req, address, gp.get_data_ptr(), bytes); break;
    case MemAccess::prefetch: break;
  }

  // Response: data back over the SM link, or an acknowledgement. Writes are posted: acknowledged
  // once taken and once DRAM has taken the dirty lines they evicted (so that DRAM's bandwidth
  // holds the SMs back), but not when a reduction's fill arrives: silicon acknowledges a reduction
  // into an evicted line within 44 cycles of one that hits (tests/calibration/h200/store_reduce.csv).
  uint64_t t_done;
  if (req->access == MemAccess::read || req->access == MemAccess::descriptor) {
    if (far) t_ready = crossbar_.serve(t_ready, across_bytes);
    if (req->access == MemAccess::read)
      coalescer_.record(req->sm, address, bytes, t0, t_ready + far_half, missed == 0 && wait_for <= t_arrive);
    t_done = to_sm_[port].serve(t_ready + far_half, bytes) + half;
  } else if (writes) {
    t_done = std::max(taken, writeback_taken_) + cfg_.write_ack_latency + (reduce ? cfg_.reduction_latency : 0) + far_half;
  } else {
    t_done = t_ready + half + far_half;  // a prefetch
  }
  // Promoted sectors filled for another partition cross after the request's data, taking the
  // crossbar's bandwidth from the far reads that follow; each is in its partition once across.
  for (size_t i = 0; i < far_promoted_.size();) {
    // A line's sectors that left DRAM together cross together.
    size_t j = i + 1;
    while (j < far_promoted_.size() && far_promoted_[j].line == far_promoted_[i].line &&
           far_promoted_[j].in_l2 == far_promoted_[i].in_l2)
      ++j;
    const uint64_t across = crossbar_.serve(far_promoted_[i].in_l2, (j - i) * cfg_.sector_bytes);
    for (; i < j; ++i) {
      const FarPromoted& p = far_promoted_[i];
      if (p.line->tag == p.tag) ready_of(p.line, p.sector) = across;  // unless this request evicted it
    }
  }
  far_promoted_.clear();
  delay = clock_.to_time(t_done) - sc_core::sc_time_stamp();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  if (occupancy_) occupancy_->add(t0, t_done);

  // Keep the bandwidth books short: nothing arrives much earlier than now.
  const uint64_t settled = clock_.now_cycles() > 4 * window_ ? clock_.now_cycles() - 4 * window_ : 0;
  slices_.retire_before(settled);
  write_path_.retire_before(settled);
  reduction_alu_.retire_before(settled);
  reduction_miss_path_.retire_before(settled);
  crossbar_.retire_before(settled);
  tag_lookups_.retire_before(settled);
  request_rate_.retire_before(settled);
  to_sm_[port].retire_before(settled);
  from_sm_[port].retire_before(settled);
}

void L2Cache::collect_stats(StatsRecord& out) const {
  out.add("read_requests", requests_[0]);
  out.add("write_requests", requests_[1]);
  out.add("reduce_requests", requests_[2]);
  out.add("reduce_misses", reduction_misses_);
  out.add("prefetch_requests", requests_[3]);
  out.add("descriptor_requests", requests_[4]);
  out.add("bytes_requested", bytes_requested_);
  out.add("sectors_requested", sectors_requested_);
  out.add("sector_hits", sector_hits_);
  out.add("sector_misses", sector_misses_);
  out.add("dram_fill_bytes", dram_fill_bytes_);
  out.add("writeback_bytes", writeback_bytes_);
  out.add("evictions", evictions_);
  out.add("far_requests", far_requests_);
  out.add("near_copy_hits", near_copy_hits_);
  out.add("promoted_line_first_reads", promoted_line_first_reads_);
  out.add("promoted_detour_reads", promoted_detour_reads_);
  out.add("promoted_miss_sectors", promoted_miss_sectors_);
  out.add("lts_sectors", lts_sectors_ + promoted_far_sectors_ + far_span_sectors_);
  out.add("promoted_far_sectors", promoted_far_sectors_);
  if (cfg_.far_read_takes_span) out.add("far_span_sectors", far_span_sectors_);
  out.add("tag_lookups", tag_lookups_made_);
  out.add("gpc_coalesced_reads", coalesced_reads_);
  out.add("gpc_coalesced_bytes", coalesced_bytes_);
  out.add("gpc_coalescer_evicted_in_flight", coalescer_.evicted_in_flight());
  out.add("sets", static_cast<uint64_t>(sets_));
  if (!in_order_done_.empty()) out.add("in_order_waits", in_order_waits_);
  uint64_t unread = evicted_unread_sectors_;  // and those still unread in the L2 at the end
  for (const Line& l : lines_) unread += static_cast<uint64_t>(__builtin_popcount(l.unread));
  out.add("overfetch_unread_bytes", unread * cfg_.sector_bytes);
}

}  // namespace tma
