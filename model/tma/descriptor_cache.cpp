#include "tma/tma/descriptor_cache.h"

#include <algorithm>
#include <cstring>

#include "tma/core/tlm_payloads.h"

namespace tma {

DescriptorCache::DescriptorCache(sc_core::sc_module_name name, const ArchConfig& arch)
    : sc_module(name), in("in"), mem_out("mem_out"), clock_(arch.sm_clock_mhz), cfg_(arch.descriptor_cache),
      sets_(std::max<uint32_t>(1, arch.descriptor_cache.entries / std::max<uint32_t>(1, arch.descriptor_cache.ways))),
      entries_(static_cast<size_t>(sets_) * std::max<uint32_t>(1, arch.descriptor_cache.ways)),
      l2_entries_(arch.descriptor_cache.l2_entries) {
  in.register_b_transport(this, &DescriptorCache::b_transport);
}

DescriptorCache::Entry* DescriptorCache::find(uint64_t address) {
  const uint32_t ways = std::max<uint32_t>(1, cfg_.ways);
  Entry* set = &entries_[(address / 128 % sets_) * ways];
  for (uint32_t w = 0; w < ways; ++w)
    if (set[w].address == address) return &set[w];
  return nullptr;
}

DescriptorCache::Entry& DescriptorCache::victim(uint64_t address) {
  const uint32_t ways = std::max<uint32_t>(1, cfg_.ways);
  Entry* set = &entries_[(address / 128 % sets_) * ways];
  Entry* v = &set[0];
  for (uint32_t w = 0; w < ways; ++w) {
    if (set[w].address == ~0ull) return set[w];
    if (set[w].lru < v->lru) v = &set[w];
  }
  return *v;
}

DescriptorCache::Entry* DescriptorCache::find_l2(uint64_t address) {
  for (Entry& e : l2_entries_)
    if (e.address == address) return &e;
  return nullptr;
}

DescriptorCache::Entry& DescriptorCache::victim_l2() {
  Entry* v = &l2_entries_.front();
  for (Entry& e : l2_entries_) {
    if (e.address == ~0ull) return e;
    if (e.lru < v->lru) v = &e;
  }
  return *v;
}

DescriptorCache::Entry& DescriptorCache::obtain(uint64_t address, uint64_t& t, int32_t sm, bool param, int& level) {
  if (Entry* e = find(address)) {
    level = 1;
    if (e->ready_cycle > t) ++pending_hits_;  // a fill still in flight
    t = std::max(t, e->ready_cycle) + cfg_.hit_latency;
    e->lru = ++lru_clock_;
    return *e;
  }
  Entry* second = l2_entries_.empty() ? nullptr : find_l2(address);
  Entry& first = victim(address);
  if (second) {
    level = 2;
    if (second->ready_cycle > t) ++pending_hits_;
    t = std::max(t, second->ready_cycle) + cfg_.hit_latency + cfg_.l2_hit_latency;
    first = *second;
    second->lru = ++lru_clock_;
  } else if (const Entry* l1 = find_sm_l1(address)) {
    level = 3;
    if (l1->ready_cycle > t) ++pending_hits_;
    t = std::max(t, l1->ready_cycle) + cfg_.hit_latency + cfg_.sm_l1_hit_latency;
    first = *l1;
    if (!l2_entries_.empty()) {
      Entry& v = victim_l2();
      v = first;
      v.lru = ++lru_clock_;
    }
  } else {
    level = 0;
    t = fetch(first, address, t, sm, param) + cfg_.hit_latency;
    fill_sm_l1(first);
    if (!l2_entries_.empty()) {
      Entry& v = victim_l2();
      v = first;
      v.lru = ++lru_clock_;
    }
  }
  first.lru = ++lru_clock_;
  return first;
}

const DescriptorCache::Entry* DescriptorCache::find_sm_l1(uint64_t address) {
  auto it = sm_l1_index_.find(address);
  if (it == sm_l1_index_.end()) return nullptr;
  sm_l1_.splice(sm_l1_.begin(), sm_l1_, it->second);  // now the most recently used
  return &*it->second;
}

void DescriptorCache::fill_sm_l1(const Entry& e) {
  if (cfg_.sm_l1_entries == 0) return;
  drop_sm_l1(e.address);
  if (sm_l1_.size() >= cfg_.sm_l1_entries) {
    sm_l1_index_.erase(sm_l1_.back().address);
    sm_l1_.pop_back();
  }
  sm_l1_.push_front(e);
  sm_l1_index_[e.address] = sm_l1_.begin();
}

void DescriptorCache::drop_sm_l1(uint64_t address) {
  auto it = sm_l1_index_.find(address);
  if (it == sm_l1_index_.end()) return;
  sm_l1_.erase(it->second);
  sm_l1_index_.erase(it);
}

uint64_t DescriptorCache::fetch(Entry& e, uint64_t address, uint64_t cycle, int32_t sm, bool param) {
  MemRequest req;
  req.access = MemAccess::descriptor;
  req.sm = sm;
  req.path_latency = cfg_.fetch_latency;
  mem_gp_.set_command(tlm::TLM_READ_COMMAND);
  mem_gp_.set_address(address);
  mem_gp_.set_data_ptr(e.bytes.data());
  mem_gp_.set_data_length(128);
  ScopedExtension<MemRequest> ext(mem_gp_, &req);
  sc_core::sc_time d = clock_.to_time(cycle) - sc_core::sc_time_stamp();
  mem_out->b_transport(mem_gp_, d);
  e.address = address;
  e.ready_cycle = clock_.to_cycles(sc_core::sc_time_stamp() + d);
  // A kernel parameter arrives with the launch in the constant bank: its first use costs
  // param_fetch_latency (silicon: +42 cycles, against +255 for a descriptor in global memory).
  if (param) e.ready_cycle = cycle + cfg_.param_fetch_latency;
  return e.ready_cycle;
}

void DescriptorCache::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  DescriptorRequest* r = gp.get_extension<DescriptorRequest>();
  DescriptorRequest plain;
  if (!r) r = &plain;
  const uint64_t address = gp.get_address();
  uint64_t t = clock_.to_cycles(sc_core::sc_time_stamp() + delay);
  Entry* e = find(address);
  switch (r->op) {
    case DescriptorCacheOp::invalidate:
      ++invalidations_;
      if (e) e->address = ~0ull;
      if (Entry* s2 = l2_entries_.empty() ? nullptr : find_l2(address)) s2->address = ~0ull;
      drop_sm_l1(address);  // fence.proxy.tensormap: the next use reads the descriptor from memory
      t += cfg_.hit_latency;
      break;
    case DescriptorCacheOp::prefetch: {
      ++prefetches_;
      uint64_t t_fill = t;
      int level;
      obtain(address, t_fill, r->sm, r->param, level);
      t += 1;  // prefetch.tensormap does not wait for the fill
      break;
    }
    case DescriptorCacheOp::lookup: {
      int level;
      Entry& got = obtain(address, t, r->sm, r->param, level);
      if (level == 1) ++hits_;
      else if (level == 2) ++l2_hits_;
      else ++misses_;  // level 3 (the SM's L1) is a miss of the unit's cache
      if (level == 3) ++sm_l1_hits_;
      r->hit = level == 1 || level == 2;
      if (gp.get_data_ptr()) std::memcpy(gp.get_data_ptr(), got.bytes.data(), 128);
      break;
    }
  }
  delay = clock_.to_time(t) - sc_core::sc_time_stamp();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void DescriptorCache::collect_stats(StatsRecord& out) const {
  out.add("hits", hits_ + l2_hits_);
  out.add("first_level_hits", hits_);
  out.add("second_level_hits", l2_hits_);
  out.add("misses", misses_);
  out.add("misses_served_by_sm_l1", sm_l1_hits_);
  out.add("hits_on_pending_fill", pending_hits_);
  out.add("prefetch_requests", prefetches_);
  out.add("invalidations", invalidations_);
}

}  // namespace tma
