#include "tma/scenario/scenario_runner.h"

#include <systemc>

#include <algorithm>
#include <array>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include <unistd.h>

#include "tma/scenario/cta_issuer.h"
#include "tma/descriptor/descriptor_codec.h"
#include "tma/gpu/gpu_system.h"
#include "tma/scenario/perfetto_trace.h"
#include "tma/scenario/progress.h"
#include "tma/scenario/run_config.h"
#include "tma/scenario/scoreboard.h"
#include "tma/scenario/vcd_writer.h"
#include "tma/config/version.h"
#include "tma/scenario/workload.h"

namespace tma {

namespace {

using Clock = std::chrono::steady_clock;

// SIGINT or SIGTERM during a run: the handler only records it; the monitor stops the simulation
// at its next wake-up, and the run writes its summary and files as at a normal end.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_run_stop_signal(int sig) { g_stop_signal = sig; }

// Installs the handlers for the life of the object. SA_RESETHAND: a second signal finds the
// default action and ends the process at once (for a user who does not want to wait).
class StopSignals {
 public:
  explicit StopSignals(bool on) : on_(on) {
    if (!on_) return;
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_run_stop_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    if (!on_) return;
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  bool on_;
  struct sigaction old_int_ {}, old_term_ {};
};

// Watches the run: stops the simulation when every CTA is done, prints progress, samples the VCD.
class RunMonitor : public sc_core::sc_module {
 public:
  RunMonitor(sc_core::sc_module_name name, GpuSystem& gpu, std::vector<std::unique_ptr<CtaIssuer>>& issuers,
             uint64_t total_ops, const RunOptions& options)
      : sc_module(name), gpu_(gpu), issuers_(issuers), total_ops_(total_ops), options_(options),
        clock_(gpu.arch().sm_clock_mhz), started_(Clock::now()) {
    if (!options.vcd_path.empty()) {
      vcd_ = std::make_unique<VcdWriter>(options.vcd_path, clock_.period_ps());
      if (!vcd_->ok()) throw std::runtime_error("cannot write " + options.vcd_path);
      for (uint32_t sm = 0; sm < gpu.sm_count(); ++sm) {
        const std::string scope = "sm" + std::to_string(sm);
        vcd_->add_signal(scope, "ops_in_flight", 16);
        vcd_->add_signal(scope, "command_queue", 8);
        vcd_->add_signal(scope, "tma_busy", 1);
        vcd_->add_signal(scope, "cta_done", 1);
      }
      // The shared memory system beside the SMs: requests the L2 has not answered, DRAM accesses
      // not done.
      vcd_->add_signal("l2", "requests_in_flight", kSharedWidth);
      vcd_->add_signal("l2", "busy", 1);
      vcd_->add_signal("dram", "accesses_in_flight", kSharedWidth);
      vcd_->add_signal("dram", "busy", 1);
      gpu.l2().set_occupancy_log(&l2_occupancy_);
      gpu.dram().set_occupancy_log(&dram_occupancy_);
    }
    SC_HAS_PROCESS(RunMonitor);
    SC_THREAD(watch);
    if (vcd_) SC_THREAD(sample);
  }
  int stopped_by() const { return stopped_by_; }  // the signal that stopped the run, or 0
  // After the simulation: the VCD's last values and its end time.
  void finish_vcd(uint64_t cycle) {
    if (!vcd_) return;
    vcd_->sample(cycle, values(cycle));
    vcd_->finish(cycle);
  }

 private:
  bool all_done() const {
    return std::all_of(issuers_.begin(), issuers_.end(), [](const auto& i) { return i->finished(); });
  }
  void watch() {
    sc_core::sc_event_or_list any;
    for (auto& i : issuers_) any |= i->finished_event();
    // Progress on stderr: on a terminal one line redrawn every second, else (logs, CI) a plain
    // line every 10 s; the first after 3 s (TMA_PROGRESS_INTERVAL sets all three).
    const bool tty = ::isatty(2);
    const double first = progress_interval(3), every = progress_interval(tty ? 1 : 10);
    auto last_print = started_;
    while (!all_done()) {
      // The same wake-ups with or without a signal: watching for one must not move the run's timing.
      if (g_stop_signal) {
        stopped_by_ = g_stop_signal;
        break;
      }
      sc_core::wait(clock_.to_time(20000), any);
      const auto now = Clock::now();
      const double elapsed = std::chrono::duration<double>(now - started_).count();
      if (options_.progress && elapsed >= first &&
          (!printed_ || std::chrono::duration<double>(now - last_print).count() >= every)) {
        last_print = now;
        print_progress(tty, elapsed);
      }
    }
    if (printed_ && tty) std::fprintf(stderr, "\n");
    sc_core::sc_stop();
  }
  // "progress: 7200/16000 operations done, 45%, about 0:15 left (...)": the work is the operations
  // the CTAs' programs issue, done when complete.
  void print_progress(bool tty, double elapsed) {
    uint64_t done = 0;
    size_t ctas = 0;
    for (auto& i : issuers_) {
      done += i->latencies().size();
      ctas += i->finished();
    }
    char text[256];
    std::snprintf(text, sizeof text, "progress: %llu/%llu operations done, %s (%llu cycles simulated, %zu/%zu CTAs done, %s elapsed)",
                  static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_ops_),
                  progress_text(static_cast<double>(done), static_cast<double>(total_ops_), 0, elapsed).c_str(),
                  static_cast<unsigned long long>(clock_.now_cycles()), ctas, issuers_.size(), clock_text(elapsed).c_str());
    if (tty) std::fprintf(stderr, "\r\033[K  %s", text);
    else std::fprintf(stderr, "%s\n", text);
    std::fflush(stderr);
    printed_ = true;
  }
  std::vector<uint64_t> values(uint64_t cycle) {
    std::vector<uint64_t> v;
    for (uint32_t sm = 0; sm < gpu_.sm_count(); ++sm) {
      TmaUnit& u = gpu_.unit(sm);
      v.push_back(std::min<uint64_t>(u.ops_in_flight(), 0xFFFF));
      v.push_back(std::min<uint64_t>(u.queue_depth(), 0xFF));
      v.push_back(u.ops_in_flight() > 0);
      v.push_back(issuers_[sm]->finished());
    }
    const uint64_t max = (uint64_t{1} << kSharedWidth) - 1;
    for (OccupancyLog* log : {&l2_occupancy_, &dram_occupancy_}) {
      const uint64_t n = log->in_flight(cycle);
      v.push_back(std::min(n, max));
      v.push_back(n > 0);
    }
    return v;
  }
  void sample() {
    while (true) {
      const uint64_t now = clock_.now_cycles();
      vcd_->sample(now, values(now));
      sc_core::wait(clock_.to_time(options_.vcd_sample_cycles));
    }
  }

  GpuSystem& gpu_;
  std::vector<std::unique_ptr<CtaIssuer>>& issuers_;
  uint64_t total_ops_;
  RunOptions options_;
  CycleClock clock_;
  Clock::time_point started_;
  std::unique_ptr<VcdWriter> vcd_;
  static constexpr int kSharedWidth = 20;  // 132 SMs x 512 requests in flight need 17 bits
  OccupancyLog l2_occupancy_, dram_occupancy_;
  bool printed_ = false;
  int stopped_by_ = 0;
};

uint32_t percentile(std::vector<uint32_t>& v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

// Bytes of a tensor in global memory, from element 0 to the end of its last row.
uint64_t tensor_bytes(const ScenarioTensor& t) {
  return t.dims.size() > 1 ? t.strides.back() * t.dims.back()
                           : t.dims[0] * element_bytes(t.dtype) / elements_per_unit(t.dtype);
}

// Above every tensor: where the lines of an unrelated earlier write live.
uint64_t unrelated_address(const Scenario& s) {
  uint64_t end = 0;
  for (const auto& [name, t] : s.tensors) end = std::max(end, t.address + tensor_bytes(t));
  return (end + (1ull << 30)) & ~((1ull << 30) - 1);
}

// The rows a tiled box covers in global memory, clipped to the tensor: f(address, bytes) each.
template <typename F>
void for_each_box_row(const TensorMap& m, const TmaOp& op, F&& f) {
  const uint64_t esize = element_bytes(m.dtype) / elements_per_unit(m.dtype);
  const int64_t x0 = std::max<int64_t>(0, op.coords[0]);
  const int64_t x1 = std::min<int64_t>(static_cast<int64_t>(m.dims[0]), int64_t{op.coords[0]} + m.box[0]);
  if (x1 <= x0) return;
  std::array<int64_t, kMaxRank> i{};  // offsets inside the box of dims 1..rank-1
  while (true) {
    uint64_t a = m.global_address + static_cast<uint64_t>(x0) * esize;
    bool inside = true;
    for (int d = 1; d < m.rank; ++d) {
      const int64_t c = int64_t{op.coords[d]} + i[d];
      if (c < 0 || c >= static_cast<int64_t>(m.dims[d])) inside = false;
      a += static_cast<uint64_t>(c) * m.strides[d - 1];
    }
    if (inside) f(a, static_cast<uint64_t>(x1 - x0) * esize);
    int d = 1;
    for (; d < m.rank; ++d) {
      if (++i[d] < m.box[d]) break;
      i[d] = 0;
    }
    if (d >= m.rank) return;
  }
}

// l2_state warm: the L2 as the same workload, run just before, left it. The SMs' operations are
// walked in the order a persistent grid issues them (step k of every SM, then step k + 1) and
// each box's rows put in the L2 as the most recent: the L2 keeps the last of them. Boxes of
// modes other than tiled put their whole tensor in, in address order.
void prefill_as_run_before(L2Cache& l2, const Scenario& s, const std::vector<SmProgram>& programs) {
  std::map<uint64_t, const ScenarioDescriptor*> by_address;
  for (const auto& [name, d] : s.descriptors) by_address[d.address] = &d;
  std::set<std::string> whole;
  // Each box row read by its program's SM (program i runs on SM i % sms), near copies included.
  auto touch = [&](const IssueOp& io, int sm) {
    const auto it = by_address.find(io.cmd.descriptor_address);
    if (it == by_address.end()) return;
    const TensorMap& m = it->second->map;
    if (m.mode == TensorMode::tiled) {
      for_each_box_row(m, io.cmd.op, [&](uint64_t a, uint64_t n) { l2.prefill(a, n, false, sm); });
    } else if (whole.insert(it->second->tensor).second) {
      const ScenarioTensor& t = s.tensors.at(it->second->tensor);
      l2.prefill(t.address, tensor_bytes(t));
    }
  };
  size_t steps = 0;
  for (const SmProgram& p : programs) steps = std::max(steps, p.steps.size());
  for (size_t k = 0; k < steps; ++k)
    for (size_t i = 0; i < programs.size(); ++i) {
      const SmProgram& p = programs[i];
      if (k >= p.steps.size()) continue;
      const int sm = static_cast<int>(i % std::max<uint32_t>(1, s.sms));
      for (const IssueOp& io : p.steps[k].loads) touch(io, sm);
      for (const IssueOp& io : p.steps[k].after) touch(io, sm);
    }
}

}  // namespace

RunSummary run_scenario(const Scenario& s, const ArchConfig& arch, const RunOptions& options, const Launch* given) {
  const auto t0 = Clock::now();
  StopSignals stop_signals(options.stop_on_signals);
  GpuSystem gpu("gpu", arch, s.sms, s.cluster_size, s.gpu, s.memory_fill);
  // A dirty L2 first: its lines are the oldest, the first the run evicts (and writes back).
  if (s.l2_state == L2State::dirty)
    gpu.l2().prefill(unrelated_address(s), s.l2_dirty_bytes ? s.l2_dirty_bytes : arch.l2.dirty_launch_bytes, true);
  // The host side of the driver: descriptors encoded into global memory. They reach the GPU
  // with the kernel launch (parameters, constant bank), so they start in the L2 (silicon: first use
  // of a kernel-parameter tensor map costs ~40 cycles over a cached one, not a DRAM trip).
  for (const auto& [name, d] : s.descriptors) {
    const std::array<uint8_t, 128> bytes = encode_descriptor(d.map);
    gpu.memory().write(d.address, bytes.data(), bytes.size());
    gpu.l2().prefill(d.address, bytes.size());
  }
  const Launch launch = given ? *given : build_launch(s, arch);
  if (s.l2_state == L2State::warm) prefill_as_run_before(gpu.l2(), s, sm_programs(launch, s.sms));
  // Each SM's own CTAs, dealt to its CTA slots in turn, and those the first free slot takes.
  const uint32_t slots = std::max<uint32_t>(1, launch.ctas_per_sm);
  if (given && slots > 1 && uint64_t{slots - 1} * launch.cta_smem_stride >= arch.smem.capacity_bytes)
    throw std::runtime_error(s.path + ":1: field 'cta_smem_stride': " + std::to_string(slots) + " CTA slots " +
                             std::to_string(launch.cta_smem_stride) + " bytes apart do not fit the SM's " +
                             std::to_string(arch.smem.capacity_bytes) + " bytes of shared memory");
  std::vector<std::vector<std::vector<const CtaProgram*>>> own(s.sms, std::vector<std::vector<const CtaProgram*>>(slots));
  std::vector<uint64_t> dealt(s.sms, 0);
  auto queue = std::make_shared<CtaQueue>();
  for (size_t i = 0; i < launch.ctas.size(); ++i) {
    if (launch.sm[i] == kAnySm) {
      queue->ctas.push_back(&launch.ctas[i]);
      continue;
    }
    const size_t sm = static_cast<size_t>(launch.sm[i]);
    own[sm][dealt[sm]++ % slots].push_back(&launch.ctas[i]);
  }
  // One sync per cluster and slot: the CTAs of a cluster run in the same slot of its SMs.
  std::vector<std::vector<std::shared_ptr<ClusterSync>>> cluster_syncs(s.sms / s.cluster_size);
  for (uint32_t c = 0; c < s.sms / s.cluster_size; ++c)
    for (uint32_t slot = 0; slot < slots; ++slot) {
      auto sync = std::make_shared<ClusterSync>();
      sync->released.assign(s.cluster_size, std::vector<uint64_t>(s.workload.stages, 0));
      sync->exited.assign(s.cluster_size, 0);
      for (uint32_t k = 0; k < s.cluster_size; ++k) sync->ctas.push_back(own[c * s.cluster_size + k][slot].size());
      cluster_syncs[c].push_back(sync);
    }
  // A later CTA starts launch.cta_dispatch_ns after the one whose slot it takes ends.
  const uint64_t dispatch_cycles =
      static_cast<uint64_t>(arch.launch.cta_dispatch_ns * arch.sm_clock_mhz / 1000.0 + 0.5);
  std::vector<std::unique_ptr<CtaIssuer>> issuers;
  for (uint32_t sm = 0; sm < s.sms; ++sm) {
    const std::string n = "cta" + std::to_string(sm);
    issuers.push_back(std::make_unique<CtaIssuer>(n.c_str(), own[sm], queue, s.workload.stages, static_cast<int>(sm),
                                                  static_cast<int>(sm % s.cluster_size),
                                                  cluster_syncs[sm / s.cluster_size], launch.cta_smem_stride,
                                                  dispatch_cycles, launch.setup_cycles, launch.issue_cycles, launch.handoff_cycles,
                                                  launch.warps_per_cta, arch.sm.sub_partitions, arch.sm_clock_mhz,
                                                  gpu.invariants()));
    issuers.back()->cmd_out.bind(gpu.unit(sm).cmd_in);
    issuers.back()->lsu_out.bind(gpu.unit(sm).smem().lsu_in);
    gpu.fabric().completion_out.bind(issuers.back()->completion_in);
  }
  Scoreboard scoreboard(gpu, s.gpu);
  std::unique_ptr<PerfettoTrace> trace;
  if (!options.trace_path.empty()) {
    trace = std::make_unique<PerfettoTrace>(options.trace_path, arch.sm_clock_mhz, options.trace_max_events);
    if (!trace->ok()) throw std::runtime_error("cannot write " + options.trace_path);
  }
  for (uint32_t sm = 0; sm < s.sms; ++sm) {
    if (options.scoreboard) gpu.unit(sm).add_observer(&scoreboard);
    if (trace) {
      gpu.unit(sm).add_observer(trace.get());
      gpu.unit(sm).set_request_trace(trace.get());
    }
  }
  uint64_t total_ops = 0;  // what the programs issue: the progress line's measure of work
  for (const CtaProgram& p : launch.ctas) {
    total_ops += p.prologue.size();
    for (const Step& st : p.steps) total_ops += st.loads.size() + st.after.size();
  }
  RunMonitor monitor("monitor", gpu, issuers, total_ops, options);
  sc_core::sc_start();
  const int stopped_by = monitor.stopped_by();
  if (!stopped_by) gpu.check_drained();  // an interrupted run has operations in flight
  const uint64_t simulated_cycles = CycleClock(arch.sm_clock_mhz).now_cycles();
  monitor.finish_vcd(simulated_cycles);

  RunSummary r;
  r.invariant_checks = gpu.invariants().checks();
  r.invariant_violations = gpu.invariants().violations();
  r.invariant_reports = gpu.invariants().first_violations();
  r.scenario = s.name;
  r.arch = arch.name;
  r.sms = s.sms;
  r.clock_mhz = arch.sm_clock_mhz;
  r.launch_overhead_ns = arch.launch.overhead_ns;
  r.l2_state = to_string(s.l2_state);
  r.simulated_cycles = simulated_cycles;
  r.stop_signal = stopped_by;
  std::vector<uint32_t> lat;
  for (auto& i : issuers) {
    r.cycles = std::max(r.cycles, i->finish_cycle());
    lat.insert(lat.end(), i->latencies().begin(), i->latencies().end());
    r.ctas_done += i->finished();
  }
  if (stopped_by) r.cycles = simulated_cycles;  // rates over the time simulated, not the CTAs done
  r.stats = collect_hierarchy_stats();
  auto sum = [&](const std::string& suffix, const std::string& name) {
    return static_cast<uint64_t>(sum_stat(r.stats, suffix, name));
  };
  r.loads = sum("", "loads");
  r.stores = sum("", "stores");
  r.reductions = sum("", "reductions");
  r.prefetches = sum("", "prefetches");
  r.faults = sum(".agu", "faults");
  r.bytes_loaded = sum("", "bytes_loaded");
  r.bytes_delivered = sum("", "bytes_delivered");
  r.bytes_stored = sum(".splitter", "write_bytes") + sum(".splitter", "reduce_bytes");
  r.l2_requests = sum(".splitter", "l2_requests");
  r.sectors_requested = sum("gpu.l2", "sectors_requested");
  r.sector_hits = sum("gpu.l2", "sector_hits");
  r.sector_misses = sum("gpu.l2", "sector_misses");
  r.promoted_miss_sectors = sum("gpu.l2", "promoted_miss_sectors");
  r.bytes_requested = sum(".splitter", "bytes_requested");
  r.dram_read_bytes = sum("gpu.dram", "read_bytes");
  r.dram_write_bytes = sum("gpu.dram", "write_bytes");
  r.dram_fill_bytes = sum("gpu.l2", "dram_fill_bytes");
  r.descriptor_hits = sum(".descriptor_cache", "hits");
  r.descriptor_misses = sum(".descriptor_cache", "misses");
  r.bank_conflicts = sum(".smem", "bank_conflicts");
  r.smem_wavefronts = sum(".smem", "wavefronts");
  r.lsu_wavefronts = sum(".smem", "lsu_wavefronts");
  r.lsu_bank_conflicts = sum(".smem", "lsu_bank_conflicts");
  r.latency_p50 = percentile(lat, 0.50);
  r.latency_p90 = percentile(lat, 0.90);
  r.latency_p99 = percentile(lat, 0.99);
  r.latency_max = lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end());
  r.latency_min = lat.empty() ? 0 : *std::min_element(lat.begin(), lat.end());
  r.read_bytes = sum(".splitter", "bytes_requested") - sum(".splitter", "write_bytes") -
                 sum(".splitter", "reduce_bytes") - sum(".splitter", "prefetch_bytes");
  r.gpc_coalesced_bytes = sum("gpu.l2", "gpc_coalesced_bytes");
  r.overfetch_unread_bytes = sum("gpu.l2", "overfetch_unread_bytes");
  r.consumer_wait_cycles = sum("", "consumer_wait_cycles");
  r.bulk_wait_cycles = sum("", "bulk_wait_cycles");
  for (auto& i : issuers) r.consumer_cycles += i->consumer_cycles(simulated_cycles);
  r.ctas_per_sm = slots;
  r.grid_ctas = launch.ctas.size();
  uint64_t resident = 0;
  for (auto& i : issuers) {
    r.waves = std::max(r.waves, i->waves());
    r.max_concurrent_ctas = std::max(r.max_concurrent_ctas, i->max_concurrent_ctas());
    resident += i->cta_cycles();
  }
  r.mean_concurrent_ctas = r.cycles ? static_cast<double>(resident) / (static_cast<double>(r.cycles) * s.sms) : 0;
  r.lts_sectors = sum("gpu.l2", "lts_sectors");
  r.dram_row_misses = sum("gpu.dram", "row_misses");
  r.scoreboard_checked = scoreboard.checked();
  r.scoreboard_mismatches = scoreboard.mismatches();
  r.scoreboard_reports = scoreboard.reports();
  r.host_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (trace) {
    r.trace_path = options.trace_path;
    r.trace_ops = trace->op_events();
    r.trace_request_events = trace->request_events();
    r.trace_dropped = trace->dropped_request_events();
    r.trace_max_events = trace->max_request_events();
  }

  if (!options.stats_path.empty()) {
    std::ofstream out(options.stats_path);
    if (!out) throw std::runtime_error("cannot write " + options.stats_path);
    std::vector<std::pair<std::string, std::string>> header = {
        {"tool", "{\"name\": \"tma-sim\", \"version\": " + json_string(kToolVersion) + "}"},
        {"scenario", json_string(s.name)},
        {"arch", json_string(arch.name)},
        {"simulated_cycles", json_number(static_cast<double>(r.simulated_cycles))},
        {"interrupted", r.stop_signal ? "true" : "false"},
        {"config", run_config_json(s, arch, options)}};
    for (const SummaryField& f : summary_fields(r))
      header.emplace_back("summary." + f.name, f.number ? f.text : json_string(f.text));
    write_stats_json(out, r.stats, header);
  }
  return r;
}

std::vector<SummaryField> summary_fields(const RunSummary& r) {
  auto u = [](uint64_t v) { return std::to_string(v); };
  auto f = [](double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", v);
    return std::string(b);
  };
  return {
      {"scenario", r.scenario, false},   {"arch", r.arch, false},
      {"sms", u(r.sms)},                 {"cycles", u(r.cycles)},
      {"seconds", f(r.seconds())},       {"kernel_seconds", f(r.kernel_seconds())},
      {"l2_state", r.l2_state, false},   {"loads", u(r.loads)},
      {"stores", u(r.stores)},           {"reductions", u(r.reductions)},
      {"faults", u(r.faults)},           {"bytes_loaded", u(r.bytes_loaded)},
      {"bytes_stored", u(r.bytes_stored)},
      {"load_bandwidth_gbs", f(r.load_bandwidth_gbs())},
      {"bytes_delivered", u(r.bytes_delivered)},
      {"delivered_bandwidth_gbs", f(r.delivered_bandwidth_gbs())},
      {"store_bandwidth_gbs", f(r.store_bandwidth_gbs())},
      {"l2_requests", u(r.l2_requests)}, {"sectors_requested", u(r.sectors_requested)},
      {"sector_hits", u(r.sector_hits)}, {"l2_hit_rate", f(r.l2_hit_rate())},
      {"dram_read_bytes", u(r.dram_read_bytes)}, {"dram_write_bytes", u(r.dram_write_bytes)},
      {"overfetch_bytes", u(r.overfetch_bytes())},
      {"descriptor_hits", u(r.descriptor_hits)}, {"descriptor_misses", u(r.descriptor_misses)},
      {"bank_conflicts", u(r.bank_conflicts)},     {"consumer_bank_conflicts", u(r.lsu_bank_conflicts)},
      {"latency_p50", u(r.latency_p50)}, {"latency_p90", u(r.latency_p90)},
      {"latency_p99", u(r.latency_p99)}, {"latency_max", u(r.latency_max)}, {"latency_min", u(r.latency_min)},
      {"lts_sectors", u(r.lts_sectors)}, {"dram_row_misses", u(r.dram_row_misses)},
      {"scoreboard_checked", u(r.scoreboard_checked)}, {"scoreboard_mismatches", u(r.scoreboard_mismatches)},
      {"invariant_checks", u(r.invariant_checks)}, {"invariant_violations", u(r.invariant_violations)},
      {"gpc_coalesced_bytes", u(r.gpc_coalesced_bytes)}, {"l2_read_bytes", u(r.l2_read_bytes())},
      {"l2_read_bandwidth_gbs", f(r.l2_read_bandwidth_gbs())},
      {"overfetch_unread_bytes", u(r.overfetch_unread_bytes)},
      {"consumer_load_wait_share", f(r.load_wait_share())}, {"consumer_store_wait_share", f(r.store_wait_share())},
      {"ctas_per_sm", u(r.ctas_per_sm)}, {"grid_ctas", u(r.grid_ctas)}, {"waves", u(r.waves)},
      {"max_concurrent_ctas", u(r.max_concurrent_ctas)}, {"mean_concurrent_ctas", f(r.mean_concurrent_ctas)},
  };
}

void print_summary(std::FILE* out, const RunSummary& r) {
  const double mb = 1e6;
  std::fprintf(out, "scenario %s on %s, %u SMs\n", r.scenario.c_str(), r.arch.c_str(), r.sms);
  if (r.stop_signal)
    std::fprintf(out, "  INTERRUPTED        by %s at cycle %llu, %u of %u CTAs done: the numbers below cover the run so far\n",
                 r.stop_signal == SIGINT ? "SIGINT" : r.stop_signal == SIGTERM ? "SIGTERM" : "a signal",
                 static_cast<unsigned long long>(r.simulated_cycles), r.ctas_done, r.sms);
  std::fprintf(out, "  simulated time     %llu cycles = %.3f us at %.0f MHz (first CTA start to last CTA end); "
                    "%.3f us with the launch (as cudaEvents time it); L2 %s at launch\n",
               static_cast<unsigned long long>(r.cycles), r.seconds() * 1e6, r.clock_mhz, r.kernel_seconds() * 1e6,
               r.l2_state.c_str());
  std::fprintf(out, "  operations         %llu loads, %llu stores, %llu reductions, %llu prefetches, %llu faults\n",
               static_cast<unsigned long long>(r.loads), static_cast<unsigned long long>(r.stores),
               static_cast<unsigned long long>(r.reductions), static_cast<unsigned long long>(r.prefetches),
               static_cast<unsigned long long>(r.faults));
  if (r.bytes_delivered == r.bytes_loaded) {
    std::fprintf(out, "  tile traffic       %.3f MB into shared memory, %.3f MB stored; load bandwidth %.1f GB/s\n",
                 r.bytes_loaded / mb, r.bytes_stored / mb, r.load_bandwidth_gbs());
  } else {  // multicast: each multicast tile is read once and delivered to several CTAs
    std::fprintf(out, "  tile traffic       %.3f MB loaded (read once), %.3f MB delivered into shared memory, %.3f MB "
                      "stored; load bandwidth %.1f GB/s, delivered %.1f GB/s\n",
                 r.bytes_loaded / mb, r.bytes_delivered / mb, r.bytes_stored / mb, r.load_bandwidth_gbs(),
                 r.delivered_bandwidth_gbs());
  }
  if (r.bytes_stored && !r.bytes_loaded)  // a store-only stream
    std::fprintf(out, "  store bandwidth    %.1f GB/s\n", r.store_bandwidth_gbs());
  if (r.read_bytes) {
    // Where the loads' bytes came from: a load bandwidth above what the L2 can serve is the GPC
    // coalescer's doing (SMs of a GPC reading the same sectors at about the same time).
    std::fprintf(out, "  load sources       L2 slices %.3f MB (%.1f%%, %.1f GB/s), GPC coalescer %.3f MB (%.1f%%: sectors "
                      "another SM of the GPC had just read)\n",
                 r.l2_read_bytes() / mb, 100.0 * r.l2_read_bytes() / r.read_bytes, r.l2_read_bandwidth_gbs(),
                 r.gpc_coalesced_bytes / mb, 100.0 * r.gpc_coalesced_bytes / r.read_bytes);
  }
  std::fprintf(out, "  L2                 %llu requests, %llu sectors, hit rate %.1f%%\n",
               static_cast<unsigned long long>(r.l2_requests), static_cast<unsigned long long>(r.sectors_requested),
               100 * r.l2_hit_rate());
  std::fprintf(out, "  DRAM               %.3f MB read, %.3f MB written; over-fetch from promotion %.3f MB, %.3f MB of it "
                    "never read\n",
               r.dram_read_bytes / mb, r.dram_write_bytes / mb, r.overfetch_bytes() / mb, r.overfetch_unread_bytes / mb);
  if (r.consumer_cycles) {
    // Memory-bound when the consumers spend most of their time waiting for memory (loads, or the
    // wait_group of their stores), compute-bound when most of it goes on their own work.
    const double waits = r.load_wait_share() + r.store_wait_share();
    std::fprintf(out, "  consumers          waited on loads %.1f%% and on stores %.1f%% of their time: %s\n",
                 100 * r.load_wait_share(), 100 * r.store_wait_share(), waits >= 0.5 ? "memory-bound" : "compute-bound");
  }
  if (r.ctas_per_sm > 1 || r.waves > 1)  // several CTAs per SM or a grid in waves
    std::fprintf(out, "  CTAs               %llu in %llu wave%s of %u per SM; at once per SM: at most %u, %.2f on average\n",
                 static_cast<unsigned long long>(r.grid_ctas), static_cast<unsigned long long>(r.waves),
                 r.waves == 1 ? "" : "s", r.ctas_per_sm, r.max_concurrent_ctas, r.mean_concurrent_ctas);
  std::fprintf(out, "  descriptor cache   %llu hits, %llu misses\n", static_cast<unsigned long long>(r.descriptor_hits),
               static_cast<unsigned long long>(r.descriptor_misses));
  std::fprintf(out, "  shared memory      TMA: %llu wavefronts, %llu bank conflicts; consumer reads: %llu wavefronts, %llu bank conflicts\n",
               static_cast<unsigned long long>(r.smem_wavefronts), static_cast<unsigned long long>(r.bank_conflicts),
               static_cast<unsigned long long>(r.lsu_wavefronts), static_cast<unsigned long long>(r.lsu_bank_conflicts));
  std::fprintf(out, "  latency (cycles)   p50 %u, p90 %u, p99 %u, max %u (issue to completion)\n", r.latency_p50,
               r.latency_p90, r.latency_p99, r.latency_max);
  std::fprintf(out, "  scoreboard         %llu operations checked against the reference engine, %llu mismatches\n",
               static_cast<unsigned long long>(r.scoreboard_checked),
               static_cast<unsigned long long>(r.scoreboard_mismatches));
  for (const std::string& line : r.scoreboard_reports) std::fprintf(out, "    %s\n", line.c_str());
  std::fprintf(out, "  invariants         %llu checks, %llu violations\n", static_cast<unsigned long long>(r.invariant_checks),
               static_cast<unsigned long long>(r.invariant_violations));
  for (const std::string& line : r.invariant_reports) std::fprintf(out, "    %s\n", line.c_str());
  if (!r.trace_path.empty()) {
    std::fprintf(out, "  trace              %s: %llu operations, %llu L2 requests", r.trace_path.c_str(),
                 static_cast<unsigned long long>(r.trace_ops), static_cast<unsigned long long>(r.trace_request_events));
    if (r.trace_dropped)  // the cap applied: say so, or the trace looks like the whole run
      std::fprintf(out, "; %llu of %llu L2 request events dropped (%.0f%%) beyond --trace-max-events %llu (0: no cap)",
                   static_cast<unsigned long long>(r.trace_dropped),
                   static_cast<unsigned long long>(r.trace_request_events),
                   100.0 * r.trace_dropped / r.trace_request_events, static_cast<unsigned long long>(r.trace_max_events));
    std::fprintf(out, "\n");
  }
  std::fprintf(out, "  host               %.2f s, %.1f MB/s and %.0f cycles/s simulated\n", r.host_seconds,
               r.host_seconds > 0 ? r.bytes_loaded / mb / r.host_seconds : 0,
               r.host_seconds > 0 ? r.cycles / r.host_seconds : 0);
}

}  // namespace tma
