// tma-sim run: one scenario on the TLM model, with a summary and optional statistics and traces.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/cli/cli.h"
#include "tma/config/cli_args.h"
#include "tma/config/paths.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/scenario_runner.h"
#include "tma/scenario/trace.h"
#include "tma/scenario/workload.h"
#include "tma/config/yaml_reader.h"

namespace tma::cli {

namespace {

const char* kUsage =
    "usage: tma-sim run SCENARIO.yaml|TRACE.jsonl [--arch FILE] [--set PATH=VALUE]... [--arch-set F=VALUE]...\n"
    "                   [--stats FILE] [--vcd FILE] [--vcd-sample N] [--trace FILE] [--trace-max-events N]\n"
    "                   [--no-scoreboard] [--quiet]\n"
    "\n"
    "Runs a scenario (tensors, descriptors and a workload on N SMs), or replays a trace of TMA\n"
    "operations (a file named *.jsonl, docs/traces.md; --set changes its header's scenario), on the\n"
    "TLM model and prints a summary: simulated time, bandwidth, L2 hit rate, DRAM bytes, over-fetch from L2 promotion,\n"
    "descriptor-cache hits, bank conflicts, latency percentiles, and the scoreboard's verdict\n"
    "(every operation re-run by the reference engine and compared byte for byte).\n"
    "\n"
    "  --arch FILE         architecture (default: the scenario's 'arch', else configs/arch/h100.yaml)\n"
    "  --set PATH=VALUE    override a scenario field, e.g. --set descriptors.A.l2_promotion=256B\n"
    "  --arch-set F=VALUE  override an architecture field, e.g. --arch-set l2.hit_latency=300\n"
    "  --stats FILE        hierarchical statistics as JSON (one object per module path)\n"
    "  --vcd FILE          VCD of per-SM occupancies and busy signals (GTKWave)\n"
    "  --vcd-sample N      VCD sample period in cycles, at least 1 (default 64)\n"
    "  --trace FILE        Chrome/Perfetto JSON trace of operations and L2 requests\n"
    "  --trace-max-events N  L2 request events written at most (default 200000, 0: no cap); the\n"
    "                      summary and the trace's metadata say how many were dropped\n"
    "  --no-scoreboard     skip the reference comparison (faster)\n"
    "  --quiet             no progress line\n"
    "Model invariants (every operation completes exactly once, no queue beyond its depth) are\n"
    "checked in every run.\n"
    "SIGINT or SIGTERM stops the simulation and writes the summary and every file for the run so far\n"
    "(a second signal ends it at once).\n"
    "Exit status: 0 when the scoreboard and the invariants found nothing, 1 when they did, 2 on bad input,\n"
    "130 interrupted.\n";

}  // namespace

int run(int argc, char** argv) {
  std::string scenario_path, arch_path;
  std::vector<std::string> sets, arch_sets;
  RunOptions opt;
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "--arch") arch_path = args.value(a);
      else if (a == "--set") sets.push_back(args.value(a));
      else if (a == "--arch-set") arch_sets.push_back(args.value(a));
      else if (a == "--stats") opt.stats_path = args.value(a);
      else if (a == "--vcd") opt.vcd_path = args.value(a);
      // 0 would sample forever at one instant.
      else if (a == "--vcd-sample") opt.vcd_sample_cycles = static_cast<uint32_t>(args.uint_value(a, 1, UINT32_MAX));
      else if (a == "--trace") opt.trace_path = args.value(a);
      else if (a == "--trace-max-events") opt.trace_max_events = args.uint_value(a, 0, UINT64_MAX);  // 0: no cap
      else if (a == "--no-scoreboard") opt.scoreboard = false;
      else if (a == "--quiet") opt.progress = false;
      else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
      else if (scenario_path.empty()) scenario_path = a;
      else throw UsageError("more than one scenario given ('" + a + "')");
    }
    if (scenario_path.empty()) throw UsageError("no scenario given");
  } catch (const UsageError& e) {
    return usage_error("run", e.what(), kUsage);
  }
  try {
    const std::string path = resolve_project_path(scenario_path);
    Trace trace;  // a replayed trace's scenario and CTAs
    const bool replay = is_trace_path(path);
    if (replay) trace = load_trace(path, sets);
    const Scenario s = replay ? trace.scenario : load_scenario(path, sets);
    const ArchConfig arch = load_arch_for_command(arch_path, s.arch, arch_sets);
    for (const std::string& w : scenario_warnings(s, arch)) print_warning(w);
    opt.scenario_overrides = sets;
    opt.arch_overrides = arch_sets;
    opt.stop_on_signals = true;
    RunSummary r = run_scenario(s, arch, opt, replay ? &trace.launch : nullptr);
    print_summary(stdout, r);
    if (r.stop_signal) return 130;  // interrupted, its files complete (as regress and sweep exit)
    return (r.scoreboard_mismatches || r.invariant_violations) ? 1 : 0;
  } catch (const std::exception& e) {
    print_error(e.what());
  }
  return 2;
}

}  // namespace tma::cli
