#include "tma/tma/tma_unit.h"

#include <algorithm>

#include "tma/descriptor/descriptor_codec.h"

namespace tma {

TmaUnit::TmaUnit(sc_core::sc_module_name name, const ArchConfig& arch, int sm, int cta_in_cluster, GpuArch gpu,
                 InvariantLog& invariants)
    : sc_module(name), cmd_in("cmd_in"), mem_out("mem_out"), desc_mem_out("desc_mem_out"), dsmem_out("dsmem_out"),
      dsmem_in("dsmem_in"), completion_out("completion_out"), multicast_out("multicast_out"),
      clock_(arch.sm_clock_mhz), arch_(arch), sm_(sm), cta_(cta_in_cluster), gpu_(gpu),
      desc_cache_("descriptor_cache", arch), agu_("agu", arch, sm), splitter_("splitter", arch),
      crossbar_("crossbar", arch, cta_in_cluster), smem_("smem", arch),
      ctl_desc_out_("ctl_desc_out"), ctl_agu_out_("ctl_agu_out"), peq_("completion_peq"), invariants_(invariants) {
  cmd_in.register_b_transport(this, &TmaUnit::accept);
  ctl_desc_out_.bind(desc_cache_.in);
  ctl_agu_out_.bind(agu_.cmd_in);
  agu_.req_out.bind(splitter_.req_in);
  agu_.gather_out.bind(crossbar_.gather_in);
  splitter_.data_out.bind(crossbar_.data_in);
  crossbar_.smem_write_out.bind(smem_.write_in);
  crossbar_.smem_read_out.bind(smem_.read_in);
  splitter_.mem_out.bind(mem_out);
  desc_cache_.mem_out.bind(desc_mem_out);
  crossbar_.dsmem_out.bind(dsmem_out);
  dsmem_in.bind(smem_.dsmem_in);
  SC_HAS_PROCESS(TmaUnit);
  SC_THREAD(control);
  SC_METHOD(deliver_completions);
  sensitive << peq_.get_event();
  dont_initialize();
}

// The issuer's call returns once the command is queued; a full queue blocks it (backpressure).
void TmaUnit::accept(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  TmaCommand* cmd = gp.get_extension<TmaCommand>();
  if (!cmd) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  const size_t depth = std::max<uint32_t>(1, arch_.tma.command_queue_depth);
  if (queue_.size() >= depth || waiting_issuers_ > 0) {
    ++queue_full_stalls_;
    sc_core::wait(delay);  // synchronise: the queue's state is only meaningful at our own time
    delay = sc_core::SC_ZERO_TIME;
    // Issuers blocked on a full queue enter it from their warp schedulers in turn, each
    // scheduler's in the order they blocked. Silicon's CTAs of one SM keep the same pace when
    // their producers have a scheduler each or share them evenly (they end within 1% of each
    // other), and one whose producer has a scheduler to itself while two others share one runs
    // ahead (tests/calibration/h100/space_cta_times_space.csv.gz). In SystemC's wake-up order
    // some CTAs of a busy SM would starve for most of a run.
    const uint32_t sp = cmd->sub_partition;
    if (blocked_.size() <= sp) blocked_.resize(sp + 1);
    const uint64_t ticket = next_ticket_++;
    blocked_[sp].push_back(ticket);
    ++waiting_issuers_;
    while (queue_.size() >= depth || ticket != next_admitted()) sc_core::wait(dequeued_);
    blocked_[sp].pop_front();
    next_scheduler_ = static_cast<uint32_t>((sp + 1) % blocked_.size());
    --waiting_issuers_;
    if (waiting_issuers_) dequeued_.notify(sc_core::SC_ZERO_TIME);  // the next in line may fit too
  }
  ++accepted_;
  queue_.push_back(Pending{*cmd, clock_.to_cycles(sc_core::sc_time_stamp() + delay)});
  invariants_.check(queue_.size() <= std::max<uint32_t>(1, arch_.tma.command_queue_depth),
                    [&] { return std::string(name()) + ": command queue beyond its depth"; });
  queued_.notify(sc_core::SC_ZERO_TIME);
  delay += clock_.to_time(1);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

uint64_t TmaUnit::next_admitted() const {
  for (size_t i = 0; i < blocked_.size(); ++i) {
    const auto& q = blocked_[(next_scheduler_ + i) % blocked_.size()];
    if (!q.empty()) return q.front();
  }
  return ~uint64_t{0};
}

void TmaUnit::schedule_completion(const TmaCompletion& c, uint64_t cycle) {
  std::unique_ptr<Notice> n;
  if (!free_notices_.empty()) {
    n = std::move(free_notices_.back());
    free_notices_.pop_back();
  } else {
    n = std::make_unique<Notice>();
  }
  n->completion = c;
  ++notices_owed_[c.op_id];
  const sc_core::sc_time at = clock_.to_time(cycle);
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  peq_.notify(*n.release(), at > now ? at - now : sc_core::SC_ZERO_TIME);
}

void TmaUnit::deliver_completions() {
  while (Notice* n = peq_.get_next_transaction()) {
    n->gp.set_command(tlm::TLM_WRITE_COMMAND);
    n->gp.set_data_length(0);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    {
      ScopedExtension<TmaCompletion> ext(n->gp, &n->completion);
      completion_out->b_transport(n->gp, d);
    }
    ++completed_;
    // Exactly one notice per destination: never one the unit did not owe.
    auto it = notices_owed_.find(n->completion.op_id);
    invariants_.check(it != notices_owed_.end() && it->second > 0,
                      [&] {
                        return std::string(name()) + ": duplicate completion of operation " +
                               std::to_string(n->completion.op_id);
                      });
    if (it != notices_owed_.end() && --it->second == 0) {
      notices_owed_.erase(it);
      ++completed_ops_;
    }
    free_notices_.emplace_back(n);
  }
}

uint64_t TmaUnit::multicast_slot(MulticastPhase phase, uint64_t t, uint32_t bytes, uint64_t done) {
  MulticastSlot slot;
  slot.phase = phase;
  slot.bytes = bytes;
  slot.done_cycle = done;
  multicast_gp_.set_command(tlm::TLM_IGNORE_COMMAND);
  multicast_gp_.set_data_ptr(nullptr);
  multicast_gp_.set_data_length(0);
  ScopedExtension<MulticastSlot> ext(multicast_gp_, &slot);
  sc_core::sc_time d = clock_.to_time(t) - sc_core::sc_time_stamp();
  multicast_out->b_transport(multicast_gp_, d);
  return clock_.to_cycles(sc_core::sc_time_stamp() + d);
}

// Runs one command in the unit's own time `t`; returns the time the unit can take the next.
uint64_t TmaUnit::process(const Pending& p, uint64_t t) {
  const TmaCommand& cmd = p.cmd;
  OpRecord rec;
  rec.cmd = cmd;
  rec.issue_cycle = p.arrival_cycle;
  rec.start_cycle = t;
  DescriptorRequest dreq;
  dreq.sm = sm_;
  dreq.param = cmd.descriptor_in_param;
  ctl_gp_.set_address(cmd.descriptor_address);
  ctl_gp_.set_command(tlm::TLM_READ_COMMAND);
  ctl_gp_.set_data_length(128);
  std::array<uint8_t, 128> bytes{};
  ctl_gp_.set_data_ptr(bytes.data());
  auto call_cache = [&](DescriptorCacheOp op) {
    dreq.op = op;
    ScopedExtension<DescriptorRequest> ext(ctl_gp_, &dreq);
    sc_core::sc_time d = clock_.to_time(t) - sc_core::sc_time_stamp();
    ctl_desc_out_->b_transport(ctl_gp_, d);
    return clock_.to_cycles(sc_core::sc_time_stamp() + d);
  };

  if (cmd.kind != UnitCommandKind::tensor_op) {
    const bool prefetch = cmd.kind == UnitCommandKind::prefetch_descriptor;
    (prefetch ? descriptor_prefetches_ : descriptor_invalidations_)++;
    const uint64_t done = call_cache(prefetch ? DescriptorCacheOp::prefetch : DescriptorCacheOp::invalidate);
    TmaCompletion c;
    c.op_id = cmd.op_id;
    c.mbarrier = cmd.mbarrier;
    c.cta = cta_;
    c.src_sm = sm_;
    schedule_completion(c, done);
    return done;
  }

  // A multicast load starts only when the ClusterFabric lets it (ArchConfig::cluster: the
  // cluster's previous multicast has released the cluster's multicast resource, and this SM has
  // room for another multicast in flight), and holds the resource from its own start, setup and
  // descriptor lookup included, not from its first request: silicon's warm multicast, issued once
  // a cold one completed, takes what a plain load takes, so the hold must not outlast a cold
  // load's latency. The unit, in order, waits with it. Plain loads never touch any of this.
  const bool multicast = cmd.op.kind == OpKind::load && cmd.cta_mask;
  const uint64_t multicast_start = multicast ? multicast_slot(MulticastPhase::acquire, t) : t;
  t = multicast_start;
  // Stores and reductions have a front end of their own: silicon completes a whole warm store in
  // less than a load's setup estimate (configs/arch/*.yaml, tma.store_setup_cycles).
  const bool writes = cmd.op.kind == OpKind::store || cmd.op.kind == OpKind::reduce;
  t += writes ? arch_.tma.store_setup_cycles : arch_.tma.command_setup_cycles;
  t = call_cache(DescriptorCacheOp::lookup);
  rec.descriptor_hit = dreq.hit;
  std::string error;
  std::optional<TensorMap> map = decode_descriptor(bytes.data(), &error);
  AguCommand agu;
  agu.cmd = cmd;
  agu.arch = gpu_;
  if (!map) {
    agu.outcome = OpOutcome::fault;
    agu.fault_reason = "descriptor does not decode: " + error;
    agu.issue_end_cycle = agu.done_cycle = t;
  } else {
    agu.map = *map;
    rec.map = *map;
    rec.map_valid = true;
    for (OpObserver* o : observers_) o->op_starting(sm_, cmd, *map);
    ctl_gp_.set_command(tlm::TLM_WRITE_COMMAND);
    ctl_gp_.set_data_ptr(nullptr);
    ctl_gp_.set_data_length(0);
    ScopedExtension<AguCommand> ext(ctl_gp_, &agu);
    sc_core::sc_time d = clock_.to_time(t) - sc_core::sc_time_stamp();
    ctl_agu_out_->b_transport(ctl_gp_, d);
  }
  rec.outcome = agu.outcome;
  rec.fault_reason = agu.fault_reason;
  rec.tx_bytes = agu.tx_bytes;
  rec.global_requests = agu.global_requests;
  // Loads complete on an mbarrier, completion_latency after their last byte lands; stores and
  // reductions complete through their bulk group when the L2's acknowledgement of their last
  // write arrives, which done_cycle already is.
  const uint64_t done = agu.done_cycle + (writes ? 0 : arch_.tma.completion_latency);
  rec.done_cycle = done;
  inflight_done_.push(done);
  if (multicast && agu.outcome == OpOutcome::ok) multicast_slot(MulticastPhase::occupy, multicast_start, agu.tx_bytes, done);

  switch (cmd.op.kind) {
    case OpKind::load: ++loads_; bytes_loaded_ += agu.tx_bytes; break;
    case OpKind::store: ++stores_; break;
    case OpKind::reduce: ++reductions_; break;
    case OpKind::prefetch: ++prefetches_; break;
  }
  if (agu.outcome == OpOutcome::fault) ++faults_;
  latency_sum_ += done - p.arrival_cycle;
  latency_max_ = std::max(latency_max_, done - p.arrival_cycle);

  // One notice per receiving CTA (a multicast load completes on every destination's mbarrier).
  TmaCompletion c;
  c.op_id = cmd.op_id;
  c.mbarrier = cmd.mbarrier;
  c.tx_bytes = agu.tx_bytes;
  c.src_sm = sm_;
  c.outcome = agu.outcome;
  c.fault_reason = agu.outcome == OpOutcome::fault ? agu.fault_reason : std::string();
  const uint16_t mask = (cmd.op.kind == OpKind::load && cmd.cta_mask) ? cmd.cta_mask : static_cast<uint16_t>(1u << cta_);
  for (int cta = 0; cta < 16; ++cta) {
    if (!(mask & (1u << cta))) continue;
    c.cta = cta;
    schedule_completion(c, done);
    if (cmd.op.kind == OpKind::load) bytes_delivered_ += agu.tx_bytes;
  }
  for (OpObserver* o : observers_) o->op_finished(sm_, rec);
  return std::max(agu.issue_end_cycle, t + 1);
}

void TmaUnit::control() {
  while (true) {
    while (queue_.empty()) sc_core::wait(queued_);
    Pending p = queue_.front();
    queue_.pop_front();
    dequeued_.notify(sc_core::SC_ZERO_TIME);
    uint64_t t = std::max(local_cycle_, p.arrival_cycle);
    t = std::max(t, clock_.now_cycles());
    // At most max_inflight_ops operations with requests outstanding.
    while (!inflight_done_.empty() && inflight_done_.top() <= t) inflight_done_.pop();
    if (inflight_done_.size() >= std::max<uint32_t>(1, arch_.tma.max_inflight_ops)) {
      t = std::max(t, inflight_done_.top());
      inflight_done_.pop();
      ++inflight_stalls_;
    }
    invariants_.check(inflight_done_.size() < std::max<uint32_t>(1, arch_.tma.max_inflight_ops),
                      [&] { return std::string(name()) + ": more operations in flight than max_inflight_ops"; });
    const uint64_t start = t;
    local_cycle_ = process(p, t);
    invariants_.check(agu_.outstanding_requests() <= std::max<uint32_t>(1, arch_.tma.max_outstanding_requests),
                      [&] {
                        return std::string(name()) + ": more requests outstanding than max_outstanding_requests";
                      });
    busy_cycles_ += local_cycle_ - start;
    // Temporal decoupling: do not run more than a quantum ahead of SystemC time.
    const uint64_t now = clock_.now_cycles();
    if (local_cycle_ > now + arch_.sim.quantum_cycles) sc_core::wait(clock_.to_time(local_cycle_ - now));
  }
}

void TmaUnit::check_drained() {
  invariants_.check(queue_.empty(), std::string(name()) + ": commands left in the queue at the end");
  invariants_.check(notices_owed_.empty(), std::string(name()) + ": " + std::to_string(notices_owed_.size()) +
                                               " operations never completed");
  invariants_.check(completed_ops_ == accepted_, std::string(name()) + ": " + std::to_string(accepted_) +
                                                     " operations accepted, " + std::to_string(completed_ops_) +
                                                     " completed");
}

void TmaUnit::collect_stats(StatsRecord& out) const {
  out.add("commands_accepted", accepted_);
  out.add("completions_sent", completed_);
  out.add("loads", loads_);
  out.add("stores", stores_);
  out.add("reductions", reductions_);
  out.add("prefetches", prefetches_);
  out.add("descriptor_prefetches", descriptor_prefetches_);
  out.add("descriptor_invalidations", descriptor_invalidations_);
  out.add("faults", faults_);
  out.add("bytes_loaded", bytes_loaded_);
  out.add("bytes_delivered", bytes_delivered_);
  out.add("busy_cycles", busy_cycles_);
  out.add("queue_full_stalls", queue_full_stalls_);
  out.add("inflight_limit_stalls", inflight_stalls_);
  out.add("latency_cycles_sum", latency_sum_);
  out.add("latency_cycles_max", latency_max_);
}

}  // namespace tma
