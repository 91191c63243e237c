#define SC_INCLUDE_DYNAMIC_PROCESSES  // the slots after the first: threads spawned at elaboration
#include "tma/scenario/cta_issuer.h"

#include <algorithm>

#include "tma/tma/swizzle_crossbar.h"
#include "tma/core/tlm_payloads.h"

namespace tma {

namespace {
constexpr uint32_t kBulkMbarrier = 0xFFFFFFFFu;  // completions of stores, reductions and prefetches
// An operation's id: (SM + 1) << 40, its slot << 32, then a count (slot 0's ids are those of an
// SM with one slot). A completion finds its slot from the id, a multicast's from the issuing
// CTA's, in the same slot of a peer SM.
constexpr int kSlotShift = 32;
uint32_t slot_of(uint64_t op_id) { return static_cast<uint32_t>((op_id >> kSlotShift) & 0xFF); }
}  // namespace

CtaIssuer::CtaIssuer(sc_core::sc_module_name name, std::vector<const CtaProgram*> own,
                     std::shared_ptr<CtaQueue> queue, uint32_t stages, int sm, int cta,
                     std::shared_ptr<ClusterSync> cluster, double clock_mhz, InvariantLog& invariants)
    : sc_module(name), cmd_out("cmd_out"), completion_in("completion_in"), lsu_out("lsu_out"),
      queue_(std::move(queue)), stages_(std::max<uint32_t>(1, stages)), sm_(sm), cta_(cta),
      invariants_(invariants), clock_(clock_mhz) {
  init(1);
  slots_[0]->own = std::move(own);
  slots_[0]->cluster = std::move(cluster);
}

CtaIssuer::CtaIssuer(sc_core::sc_module_name name, std::vector<std::vector<const CtaProgram*>> own,
                     std::shared_ptr<CtaQueue> queue, uint32_t stages, int sm, int cta,
                     std::vector<std::shared_ptr<ClusterSync>> clusters, uint32_t smem_stride,
                     uint64_t dispatch_cycles, uint64_t setup_cycles, uint64_t issue_cycles,
                     uint64_t handoff_cycles, uint32_t warps_per_cta, uint32_t sub_partitions, double clock_mhz,
                     InvariantLog& invariants)
    : sc_module(name), cmd_out("cmd_out"), completion_in("completion_in"), lsu_out("lsu_out"),
      queue_(std::move(queue)), stages_(std::max<uint32_t>(1, stages)), sm_(sm), cta_(cta),
      smem_stride_(smem_stride), dispatch_cycles_(dispatch_cycles), setup_cycles_(setup_cycles),
      issue_cycles_(issue_cycles), handoff_cycles_(handoff_cycles), invariants_(invariants), clock_(clock_mhz) {
  init(static_cast<uint32_t>(std::max<size_t>(1, own.size())));
  for (size_t k = 0; k < slots_.size() && k < own.size(); ++k) {
    slots_[k]->own = std::move(own[k]);
    slots_[k]->cluster = clusters[k];
  }
  const uint32_t warps = std::max<uint32_t>(1, warps_per_cta), schedulers = std::max<uint32_t>(1, sub_partitions);
  for (auto& s : slots_) s->sub_partition = static_cast<uint8_t>(s->index * warps % schedulers);
}

void CtaIssuer::init(uint32_t slots) {
  completion_in.register_b_transport(this, &CtaIssuer::completed);
  for (uint32_t k = 0; k < slots; ++k) {
    slots_.push_back(std::make_unique<Slot>());
    slots_.back()->index = k;
    slots_.back()->next_op_id = ((static_cast<uint64_t>(sm_) + 1) << 40) | (static_cast<uint64_t>(k) << kSlotShift);
  }
  SC_HAS_PROCESS(CtaIssuer);
  SC_THREAD(producer);
  SC_THREAD(consumer);
  // The other slots' threads: spawned at elaboration, after slot 0's (whose order of evaluation
  // is that of an SM with one slot).
  for (uint32_t k = 1; k < slots; ++k) {
    Slot* s = slots_[k].get();
    const std::string n = "slot" + std::to_string(k);
    sc_core::sc_spawn_options opt;
    sc_core::sc_spawn([this, s] { produce(*s); }, (n + "_producer").c_str(), &opt);
    sc_core::sc_spawn([this, s] { consume_all(*s); }, (n + "_consumer").c_str(), &opt);
  }
}

uint64_t CtaIssuer::waves() const {
  uint64_t w = 0;
  for (const auto& s : slots_) w = std::max(w, s->ctas_run);
  return w;
}

uint64_t CtaIssuer::ctas_run() const {
  uint64_t n = 0;
  for (const auto& s : slots_) n += s->ctas_run;
  return n;
}

uint64_t CtaIssuer::consumer_cycles(uint64_t now) const {
  uint64_t n = 0;
  for (const auto& s : slots_) n += s->finished ? s->finish_cycle : now;
  return n;
}

void CtaIssuer::running_changed(int delta) {
  const uint64_t now = clock_.now_cycles();
  cta_cycles_ += running_ * (now - running_since_);
  running_since_ = now;
  running_ = static_cast<uint32_t>(static_cast<int>(running_) + delta);
  max_running_ = std::max(max_running_, running_);
}

void CtaIssuer::issue(Slot& s, IssueOp op, uint32_t mbarrier) {
  op.cmd.mbarrier = mbarrier;
  op.cmd.op_id = s.next_op_id++;
  op.cmd.sm = sm_;
  op.cmd.sub_partition = s.sub_partition;
  // The slot's shared memory (slot 0 at 0): tiles, stores' sources.
  if (op.cmd.kind == UnitCommandKind::tensor_op) op.cmd.op.smem_addr += s.index * smem_stride_;
  issued_at_[op.cmd.op_id] = clock_.now_cycles();
  ++ops_issued_;
  if (mbarrier == kBulkMbarrier) ++s.bulk_issued;
  tlm::tlm_generic_payload gp;
  gp.set_command(tlm::TLM_WRITE_COMMAND);
  gp.set_data_length(0);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  ScopedExtension<TmaCommand> ext(gp, &op.cmd);
  cmd_out->b_transport(gp, delay);  // blocks while the unit's command queue is full
  if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
}

void CtaIssuer::completed(tlm::tlm_generic_payload& gp, sc_core::sc_time&) {
  const TmaCompletion* c = gp.get_extension<TmaCompletion>();
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
  if (!c) return;
  if (c->outcome == OpOutcome::fault) ++faults_;
  auto it = issued_at_.find(c->op_id);
  if (it != issued_at_.end()) {
    latencies_.push_back(static_cast<uint32_t>(clock_.now_cycles() - it->second));
    issued_at_.erase(it);
  }
  const uint32_t k = slot_of(c->op_id);
  if (k >= slots_.size()) {  // (counted only when it fails: a run of one slot checks what it did)
    invariants_.check(false, std::string(name()) + ": completion for CTA slot " + std::to_string(k));
    return;
  }
  Slot& s = *slots_[k];
  if (c->mbarrier == kBulkMbarrier) {
    ++s.bulk_done;
    s.after_pending.erase(c->op_id);
    invariants_.check(s.bulk_done <= s.bulk_issued,
                      [&] { return std::string(name()) + ": more bulk completions than bulk operations"; });
  } else {
    // Each step's mbarrier receives exactly the completions the step expects.
    const bool known = c->mbarrier < s.got.size();
    invariants_.check(known && s.got[c->mbarrier] < s.steps[c->mbarrier]->expected_completions,
                      [&] {
                        return std::string(name()) + ": unexpected completion on mbarrier " + std::to_string(c->mbarrier);
                      });
    if (known) ++s.got[c->mbarrier];
  }
  s.completion_event.notify(sc_core::SC_ZERO_TIME);
}

uint64_t CtaIssuer::read_tiles(const Slot& s, const Step& st) {
  uint64_t done = clock_.now_cycles();
  SmemAccess acc;
  acc.cta = cta_;
  const uint32_t base = s.index * smem_stride_;
  for (const TileRead& t : st.reads) {
    // 16-byte pieces down 8 rows at a time (one ldmatrix 8x8 b16 matrix), then across.
    acc.chunks.clear();
    uint32_t offset = 0;
    for (uint32_t r0 = 0; r0 < t.rows; r0 += 8)
      for (uint32_t c = 0; c + 16 <= t.row_bytes; c += 16)
        for (uint32_t r = r0; r < std::min(r0 + 8, t.rows); ++r) {
          acc.chunks.push_back(
              SmemChunk{crossbar_swizzle(t.swizzle, t.atom, base + t.smem_addr + r * t.pitch + c), 16, offset});
          offset += 16;
        }
    read_buffer_.resize(offset);
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_data_ptr(read_buffer_.data());
    gp.set_data_length(offset);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    ScopedExtension<SmemAccess> ext(gp, &acc);
    lsu_out->b_transport(gp, d);
    done = std::max(done, clock_.to_cycles(sc_core::sc_time_stamp() + d));
  }
  return done;
}

const CtaProgram* CtaIssuer::start_cta(Slot& s, uint64_t k) {
  // The slot is free when its last CTA has ended; a cluster starts together, once every CTA of the
  // cluster has ended its last (those that run fewer CTAs, once they have ended them all).
  ClusterSync& cl = *s.cluster;
  auto ended = [&] {
    for (size_t c = 0; c < cl.exited.size(); ++c) {
      const uint64_t need = c == static_cast<size_t>(cta_) ? k : std::min<uint64_t>(k, cl.ctas[c]);
      if (cl.exited[c] < need) return false;
    }
    return true;
  };
  while (!ended()) sc_core::wait(cl.changed);
  const CtaProgram* next = nullptr;
  if (k < s.own.size()) next = s.own[k];
  else if (queue_ && queue_->next < queue_->ctas.size()) next = queue_->ctas[queue_->next++];
  // The block scheduler hands a freed slot its next CTA dispatch_cycles after the last one ended.
  if (next && k > 0 && dispatch_cycles_) {
    const uint64_t at = s.last_end_cycle + dispatch_cycles_, now = clock_.now_cycles();
    if (at > now) sc_core::wait(clock_.to_time(at - now));
  }
  return next;
}

void CtaIssuer::produce(Slot& s) {
  for (uint64_t k = 0;; ++k) {
    const CtaProgram* cta = start_cta(s, k);
    if (!cta) break;
    ++s.ctas_run;
    running_changed(+1);
    // The CTA's own prologue (barrier set-up, its tile walk's arithmetic) before it issues anything.
    if (setup_cycles_) sc_core::wait(clock_.to_time(setup_cycles_));
    const size_t first = s.steps.size();
    for (const Step& st : cta->steps) s.steps.push_back(&st);
    s.got.resize(s.steps.size(), 0);
    s.cta_end.push_back(s.steps.size());
    s.cta_started.notify(sc_core::SC_ZERO_TIME);
    for (const IssueOp& op : cta->prologue) issue(s, op, kBulkMbarrier);
    ++s.prologues_issued;  // the CTA cannot end before (its prefetches are its bulk operations too)
    s.cta_started.notify(sc_core::SC_ZERO_TIME);
    uint64_t last_step_issue = 0;
    for (size_t i = first; i < s.steps.size(); ++i) {
      const Step& st = *s.steps[i];
      const uint32_t stage = static_cast<uint32_t>(i % stages_);
      const uint64_t uses = i / stages_;  // releases of this stage needed before it is free
      const uint64_t t0 = clock_.now_cycles();
      const bool multicasts =
          std::any_of(st.loads.begin(), st.loads.end(), [](const IssueOp& o) { return o.cmd.cta_mask; });
      bool waited = false;
      while (true) {
        bool free = s.cluster->released[cta_][stage] >= uses;
        if (multicasts)
          for (const auto& peer : s.cluster->released) free = free && peer[stage] >= uses;
        if (free) break;
        waited = true;
        sc_core::wait(s.cluster->changed);
      }
      // A producer that waited sees the release handoff_cycles after it.
      if (waited && handoff_cycles_) sc_core::wait(clock_.to_time(handoff_cycles_));
      producer_stall_cycles_ += clock_.now_cycles() - t0;
      // The producer's own loop: this step issues at the soonest issue_cycles after the CTA's last.
      if (issue_cycles_ && i > first) {
        const uint64_t at = last_step_issue + issue_cycles_, now = clock_.now_cycles();
        if (at > now) sc_core::wait(clock_.to_time(at - now));
      }
      last_step_issue = clock_.now_cycles();
      for (size_t j = 0; j < st.loads.size(); ++j) {
        if (j == st.release_wait_from) {
          const uint64_t w0 = clock_.now_cycles();
          while (s.released_steps < i) sc_core::wait(s.cluster->changed);
          producer_stall_cycles_ += clock_.now_cycles() - w0;
          // A step that waits before its first load issues when the wait ends: the producer's
          // own cycles for the next step count from then.
          if (j == 0) last_step_issue = clock_.now_cycles();
        }
        issue(s, st.loads[j], static_cast<uint32_t>(i));
      }
    }
  }
  s.producer_done = true;
  s.cta_started.notify(sc_core::SC_ZERO_TIME);
}

void CtaIssuer::consume(Slot& s, size_t i) {
  const Step& st = *s.steps[i];
  const uint64_t t0 = clock_.now_cycles();
  const bool waited = s.got[i] < st.expected_completions;
  while (s.got[i] < st.expected_completions) sc_core::wait(s.completion_event);
  // A consumer that waited sees the data handoff_cycles after it is in.
  if (waited && handoff_cycles_) sc_core::wait(clock_.to_time(handoff_cycles_));
  consumer_wait_cycles_ += clock_.now_cycles() - t0;
  // The math overlaps the fragment reads: the step takes the longer of the two.
  const uint64_t now = clock_.now_cycles();
  const uint64_t busy = std::max<uint64_t>(st.compute_cycles, st.reads.empty() ? 0 : read_tiles(s, st) - now);
  if (busy) sc_core::wait(clock_.to_time(busy));
  if (st.bulk_wait_pending != kNoBulkWait) {
    // cp.async.bulk.wait_group(.read) N: at most N earlier bulk operations of the steps still owed.
    const uint64_t w0 = clock_.now_cycles();
    while (s.after_pending.size() > st.bulk_wait_pending) sc_core::wait(s.completion_event);
    bulk_wait_cycles_ += clock_.now_cycles() - w0;
  }
  for (const IssueOp& op : st.after) {
    s.after_pending.insert(s.next_op_id);  // the id issue() gives it
    issue(s, op, kBulkMbarrier);
  }
  if (st.bulk_wait_after) {
    const uint64_t w0 = clock_.now_cycles();
    while (!s.after_pending.empty()) sc_core::wait(s.completion_event);
    bulk_wait_cycles_ += clock_.now_cycles() - w0;
  }
  ++s.cluster->released[cta_][i % stages_];
  ++s.released_steps;
  s.cluster->changed.notify(sc_core::SC_ZERO_TIME);
}

void CtaIssuer::consume_all(Slot& s) {
  size_t i = 0;
  for (uint64_t k = 0;; ++k) {
    while (s.cta_end.size() <= k && !s.producer_done) sc_core::wait(s.cta_started);
    if (s.cta_end.size() <= k) break;
    for (; i < s.cta_end[k]; ++i) consume(s, i);
    // The CTA ends when its stores and prefetches have completed.
    while (s.prologues_issued <= k) sc_core::wait(s.cta_started);
    while (s.bulk_done < s.bulk_issued) sc_core::wait(s.completion_event);
    s.last_end_cycle = clock_.now_cycles();
    running_changed(-1);
    ++s.cluster->exited[cta_];
    s.cluster->changed.notify(sc_core::SC_ZERO_TIME);
  }
  s.finished = true;
  s.finish_cycle = clock_.now_cycles();
  // The SM is done when every slot is.
  if (std::all_of(slots_.begin(), slots_.end(), [](const auto& x) { return x->finished; })) {
    finished_ = true;
    finish_cycle_ = clock_.now_cycles();
    running_changed(0);
    finished_event_.notify(sc_core::SC_ZERO_TIME);
  }
}

void CtaIssuer::collect_stats(StatsRecord& out) const {
  uint64_t steps = 0;
  for (const auto& s : slots_) steps += s->steps.size();
  out.add("ctas", ctas_run());
  out.add("steps", steps);
  out.add("ops_issued", ops_issued_);
  out.add("faults", faults_);
  out.add("producer_stall_cycles", producer_stall_cycles_);
  out.add("consumer_wait_cycles", consumer_wait_cycles_);
  out.add("bulk_wait_cycles", bulk_wait_cycles_);
  out.add("finish_cycle", finish_cycle_);
  out.add("cta_slots", static_cast<uint64_t>(slots_.size()));
  out.add("max_concurrent_ctas", static_cast<uint64_t>(max_running_));
  out.add("cta_cycles", cta_cycles_);
  out.add("waves", waves());
}

}  // namespace tma
