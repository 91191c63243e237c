// tma-sim bench: host speed of the reference engine and of the TLM pipeline on a fixed scenario.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/cli/cli.h"
#include "tma/config/cli_args.h"
#include "tma/golden/golden_case.h"
#include "tma/config/paths.h"
#include "tma/reference/reference_engine.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/scenario_runner.h"
#include "tma/scenario/workload.h"
#include "tma/config/yaml_reader.h"

namespace tma::cli {

namespace {

const char* kUsage =
    "usage: tma-sim bench [--scenario FILE] [--arch FILE] [--set PATH=VALUE]... [--arch-set F=VALUE]...\n"
    "\n"
    "Measures how fast this machine simulates, on one core: the reference engine alone (every\n"
    "operation of the scenario, functional only) and the TLM pipeline (timing and data, no\n"
    "scoreboard). Prints simulated bytes of tile traffic per host second, simulated cycles per\n"
    "host second (the pipeline's; the reference engine has no notion of time) and peak memory.\n"
    "The default scenario is configs/scenarios/stream_tiles.yaml: 132 SMs streaming 64x64 bf16\n"
    "tiles with the 128B swizzle.\n"
    "Targets (issue 3): reference >= 1000 MB/s, pipeline >= 100 MB/s, peak memory < 2 GiB.\n"
    "\n"
    "  --scenario FILE     a stream scenario (default configs/scenarios/stream_tiles.yaml)\n"
    "  --arch FILE         architecture (default: the scenario's 'arch')\n"
    "  --set PATH=VALUE    override a scenario field, as 'tma-sim run' does\n"
    "  --arch-set F=VALUE  override an architecture field, as 'tma-sim run' does\n";

using Clock = std::chrono::steady_clock;

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // kilobytes on Linux
}

// Every load of the scenario through the reference engine, on an image of the loaded tensor.
struct RefResult {
  uint64_t ops = 0, bytes = 0;
  double seconds = 0;
};

RefResult bench_reference(const Scenario& s, const ArchConfig& arch) {
  RefResult out;
  const std::vector<SmProgram> programs = build_programs(s, arch);
  const ScenarioDescriptor& d = s.descriptors.at(s.workload.load);
  TensorMap m = d.map;
  const uint64_t rank = static_cast<uint64_t>(m.rank);
  const uint64_t bytes = rank > 1 ? m.strides[rank - 2] * m.dims[rank - 1] : m.dims[0] * element_bytes(m.dtype);
  std::vector<uint8_t> image = word_hash_image(bytes);
  m.global_address = 0;
  std::vector<uint8_t> smem(arch.smem.capacity_bytes, 0xCD);
  ReferenceOptions opt;
  opt.arch = s.gpu;
  size_t steps = 0;
  for (const SmProgram& p : programs) steps = std::max(steps, p.steps.size());
  const auto t0 = Clock::now();
  // In the order the GPU runs them: every SM's first step, then every SM's second...
  for (size_t i = 0; i < steps; ++i)
    for (const SmProgram& p : programs) {
      if (i >= p.steps.size()) continue;
      for (const IssueOp& op : p.steps[i].loads) {
        const OpResult r = reference_execute(m, op.cmd.op, image, smem, opt);
        out.bytes += r.tx_bytes;
        ++out.ops;
      }
    }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace

int bench(int argc, char** argv) {
  std::string scenario_path = "configs/scenarios/stream_tiles.yaml", arch_path;
  std::vector<std::string> sets, arch_sets;
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "--scenario") scenario_path = args.value(a);
      else if (a == "--arch") arch_path = args.value(a);
      else if (a == "--set") sets.push_back(args.value(a));
      else if (a == "--arch-set") arch_sets.push_back(args.value(a));
      else throw UsageError("unknown argument '" + a + "'");
    }
  } catch (const UsageError& e) {
    return usage_error("bench", e.what(), kUsage);
  }
  try {
    const Scenario s = load_scenario(resolve_project_path(scenario_path), sets);
    if (s.workload.kind != WorkloadKind::stream) throw std::runtime_error("bench needs a stream scenario");
    const ArchConfig arch = load_arch_for_command(arch_path, s.arch, arch_sets);
    for (const std::string& w : scenario_warnings(s, arch)) print_warning(w);
    std::printf("tma-sim bench: %s (%s) on %s\n", s.name.c_str(), s.description.c_str(), arch.name.c_str());
    const RefResult ref = bench_reference(s, arch);
    std::printf("  reference engine  %8.1f MB/s of tile traffic (%llu loads, %.1f MB in %.3f s); no simulated time\n",
                ref.bytes / 1e6 / ref.seconds, static_cast<unsigned long long>(ref.ops), ref.bytes / 1e6, ref.seconds);
    RunOptions opt;
    opt.scoreboard = false;
    opt.progress = false;
    const RunSummary r = run_scenario(s, arch, opt);
    std::printf("  TLM pipeline      %8.1f MB/s of tile traffic, %.0f simulated cycles/s (%.1f MB, %llu cycles in %.3f s)\n",
                r.bytes_loaded / 1e6 / r.host_seconds, r.cycles / r.host_seconds, r.bytes_loaded / 1e6,
                static_cast<unsigned long long>(r.cycles), r.host_seconds);
    std::printf("  peak memory       %8.1f MiB\n", peak_rss_mib());
    std::printf("  targets           reference >= 1000 MB/s, pipeline >= 100 MB/s, peak memory < 2048 MiB\n");
    return 0;
  } catch (const std::exception& e) {
    print_error(e.what());
    return 2;
  }
}

}  // namespace tma::cli
