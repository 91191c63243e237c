#include "tma/scenario/cta_issuer.h"

#include <algorithm>

#include "tma/tma/swizzle_crossbar.h"
#include "tma/core/tlm_payloads.h"

namespace tma {

namespace {
constexpr uint32_t kBulkMbarrier = 0xFFFFFFFFu;  // completions of stores, reductions and prefetches
}

CtaIssuer::CtaIssuer(sc_core::sc_module_name name, std::vector<const CtaProgram*> own,
                     std::shared_ptr<CtaQueue> queue, uint32_t stages, int sm, int cta,
                     std::shared_ptr<ClusterSync> cluster, double clock_mhz, InvariantLog& invariants)
    : sc_module(name), cmd_out("cmd_out"), completion_in("completion_in"), lsu_out("lsu_out"), own_(std::move(own)),
      queue_(std::move(queue)), stages_(std::max<uint32_t>(1, stages)), sm_(sm), cta_(cta),
      cluster_(std::move(cluster)), invariants_(invariants), clock_(clock_mhz),
      next_op_id_((static_cast<uint64_t>(sm) + 1) << 40) {
  completion_in.register_b_transport(this, &CtaIssuer::completed);
  SC_HAS_PROCESS(CtaIssuer);
  SC_THREAD(producer);
  SC_THREAD(consumer);
}

void CtaIssuer::issue(IssueOp op, uint32_t mbarrier) {
  op.cmd.mbarrier = mbarrier;
  op.cmd.op_id = next_op_id_++;
  op.cmd.sm = sm_;
  issued_at_[op.cmd.op_id] = clock_.now_cycles();
  ++ops_issued_;
  if (mbarrier == kBulkMbarrier) ++bulk_issued_;
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
  if (c->mbarrier == kBulkMbarrier) {
    ++bulk_done_;
    after_pending_.erase(c->op_id);
    invariants_.check(bulk_done_ <= bulk_issued_, std::string(name()) + ": more bulk completions than bulk operations");
  } else {
    // Each step's mbarrier receives exactly the completions the step expects.
    const bool known = c->mbarrier < got_.size();
    invariants_.check(known && got_[c->mbarrier] < steps_[c->mbarrier]->expected_completions,
                      std::string(name()) + ": unexpected completion on mbarrier " + std::to_string(c->mbarrier));
    if (known) ++got_[c->mbarrier];
  }
  completion_event_.notify(sc_core::SC_ZERO_TIME);
}

uint64_t CtaIssuer::read_tiles(const Step& st) {
  uint64_t done = clock_.now_cycles();
  SmemAccess acc;
  acc.cta = cta_;
  for (const TileRead& t : st.reads) {
    // 16-byte pieces down 8 rows at a time (one ldmatrix 8x8 b16 matrix), then across.
    acc.chunks.clear();
    uint32_t offset = 0;
    for (uint32_t r0 = 0; r0 < t.rows; r0 += 8)
      for (uint32_t c = 0; c + 16 <= t.row_bytes; c += 16)
        for (uint32_t r = r0; r < std::min(r0 + 8, t.rows); ++r) {
          acc.chunks.push_back(SmemChunk{crossbar_swizzle(t.swizzle, t.atom, t.smem_addr + r * t.pitch + c), 16, offset});
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

const CtaProgram* CtaIssuer::start_cta(uint64_t k) {
  // The SM is free when its last CTA has ended; a cluster starts together, once every CTA of the
  // cluster has ended its last (those that run fewer CTAs, once they have ended them all).
  auto ended = [&] {
    for (size_t c = 0; c < cluster_->exited.size(); ++c) {
      const uint64_t need = c == static_cast<size_t>(cta_) ? k : std::min<uint64_t>(k, cluster_->ctas[c]);
      if (cluster_->exited[c] < need) return false;
    }
    return true;
  };
  while (!ended()) sc_core::wait(cluster_->changed);
  if (k < own_.size()) return own_[k];
  if (queue_ && queue_->next < queue_->ctas.size()) return queue_->ctas[queue_->next++];
  return nullptr;
}

void CtaIssuer::producer() {
  for (uint64_t k = 0;; ++k) {
    const CtaProgram* cta = start_cta(k);
    if (!cta) break;
    ++ctas_run_;
    const size_t first = steps_.size();
    for (const Step& st : cta->steps) steps_.push_back(&st);
    got_.resize(steps_.size(), 0);
    cta_end_.push_back(steps_.size());
    cta_started_.notify(sc_core::SC_ZERO_TIME);
    for (const IssueOp& op : cta->prologue) issue(op, kBulkMbarrier);
    ++prologues_issued_;  // the CTA cannot end before (its prefetches are its bulk operations too)
    cta_started_.notify(sc_core::SC_ZERO_TIME);
    for (size_t i = first; i < steps_.size(); ++i) {
      const Step& st = *steps_[i];
      const uint32_t s = static_cast<uint32_t>(i % stages_);
      const uint64_t uses = i / stages_;  // releases of this stage needed before it is free
      const uint64_t t0 = clock_.now_cycles();
      const bool multicasts =
          std::any_of(st.loads.begin(), st.loads.end(), [](const IssueOp& o) { return o.cmd.cta_mask; });
      while (true) {
        bool free = cluster_->released[cta_][s] >= uses;
        if (multicasts)
          for (const auto& peer : cluster_->released) free = free && peer[s] >= uses;
        if (free) break;
        sc_core::wait(cluster_->changed);
      }
      producer_stall_cycles_ += clock_.now_cycles() - t0;
      for (size_t j = 0; j < st.loads.size(); ++j) {
        if (j == st.release_wait_from) {
          const uint64_t w0 = clock_.now_cycles();
          while (released_steps_ < i) sc_core::wait(cluster_->changed);
          producer_stall_cycles_ += clock_.now_cycles() - w0;
        }
        issue(st.loads[j], static_cast<uint32_t>(i));
      }
    }
  }
  producer_done_ = true;
  cta_started_.notify(sc_core::SC_ZERO_TIME);
}

void CtaIssuer::consume(size_t i) {
  const Step& st = *steps_[i];
  const uint64_t t0 = clock_.now_cycles();
  while (got_[i] < st.expected_completions) sc_core::wait(completion_event_);
  consumer_wait_cycles_ += clock_.now_cycles() - t0;
  // The math overlaps the fragment reads: the step takes the longer of the two.
  const uint64_t now = clock_.now_cycles();
  const uint64_t busy = std::max<uint64_t>(st.compute_cycles, st.reads.empty() ? 0 : read_tiles(st) - now);
  if (busy) sc_core::wait(clock_.to_time(busy));
  if (st.bulk_wait_pending != kNoBulkWait) {
    // cp.async.bulk.wait_group(.read) N: at most N earlier bulk operations of the steps still owed.
    const uint64_t w0 = clock_.now_cycles();
    while (after_pending_.size() > st.bulk_wait_pending) sc_core::wait(completion_event_);
    bulk_wait_cycles_ += clock_.now_cycles() - w0;
  }
  for (const IssueOp& op : st.after) {
    after_pending_.insert(next_op_id_);  // the id issue() gives it
    issue(op, kBulkMbarrier);
  }
  if (st.bulk_wait_after) {
    const uint64_t w0 = clock_.now_cycles();
    while (!after_pending_.empty()) sc_core::wait(completion_event_);
    bulk_wait_cycles_ += clock_.now_cycles() - w0;
  }
  ++cluster_->released[cta_][i % stages_];
  ++released_steps_;
  cluster_->changed.notify(sc_core::SC_ZERO_TIME);
}

void CtaIssuer::consumer() {
  size_t i = 0;
  for (uint64_t k = 0;; ++k) {
    while (cta_end_.size() <= k && !producer_done_) sc_core::wait(cta_started_);
    if (cta_end_.size() <= k) break;
    for (; i < cta_end_[k]; ++i) consume(i);
    // The CTA ends when its stores and prefetches have completed.
    while (prologues_issued_ <= k) sc_core::wait(cta_started_);
    while (bulk_done_ < bulk_issued_) sc_core::wait(completion_event_);
    ++cluster_->exited[cta_];
    cluster_->changed.notify(sc_core::SC_ZERO_TIME);
  }
  finished_ = true;
  finish_cycle_ = clock_.now_cycles();
  finished_event_.notify(sc_core::SC_ZERO_TIME);
}

void CtaIssuer::collect_stats(StatsRecord& out) const {
  out.add("ctas", ctas_run_);
  out.add("steps", static_cast<uint64_t>(steps_.size()));
  out.add("ops_issued", ops_issued_);
  out.add("faults", faults_);
  out.add("producer_stall_cycles", producer_stall_cycles_);
  out.add("consumer_wait_cycles", consumer_wait_cycles_);
  out.add("bulk_wait_cycles", bulk_wait_cycles_);
  out.add("finish_cycle", finish_cycle_);
}

}  // namespace tma
