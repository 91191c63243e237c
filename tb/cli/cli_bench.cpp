// tma-sim bench: host speed of the reference engine and of the TLM pipeline on a fixed scenario.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
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
    "       tma-sim bench --reference-only [--passes N] [--scenario FILE] ...\n"
    "       tma-sim bench --gemm [--gemm-size N] [--arch FILE] [--arch-set F=VALUE]...\n"
    "\n"
    "Measures how fast this machine simulates, on one core: the reference engine alone (every\n"
    "operation of the scenario, functional only) and the TLM pipeline (timing and data, no\n"
    "scoreboard). Prints simulated bytes of tile traffic per host second, simulated cycles per\n"
    "host second (the pipeline's; the reference engine has no notion of time), peak memory, and\n"
    "each speed as a ratio to a fixed memcpy (64 MiB copied 4 times) measured in the same process:\n"
    "the figure to compare between machines and releases.\n"
    "The default scenario is configs/scenarios/stream_tiles.yaml: 132 SMs streaming 64x64 bf16\n"
    "tiles with the 128B swizzle.\n"
    "--gemm runs the GEMM point instead: the main loop of an N x N x N bf16 GEMM (default 8192) on\n"
    "132 SMs of the H100 (configs/scenarios/gemm_bf16.yaml at that size), and prints host seconds,\n"
    "simulated cycles per second and the slowdown against the kernel's simulated time (it takes\n"
    "minutes at 8192).\n"
    "Targets (issue 17): pipeline >= 300 MB/s, reference >= 6000 MB/s, GEMM point < 60 s.\n"
    "\n"
    "  --scenario FILE     a stream scenario (default configs/scenarios/stream_tiles.yaml)\n"
    "  --arch FILE         architecture (default: the scenario's 'arch')\n"
    "  --set PATH=VALUE    override a scenario field, as 'tma-sim run' does\n"
    "  --arch-set F=VALUE  override an architecture field, as 'tma-sim run' does\n"
    "  --reference-only    the reference engine and the memcpy only, not the pipeline: a whole-process\n"
    "                      timing of the reference engine is otherwise mostly the pipeline's\n"
    "  --passes N          reference passes over the scenario's loads, 1 to 1000 (default 1); the\n"
    "                      figure printed is of all of them\n"
    "  --gemm              the GEMM point instead of the stream\n"
    "  --gemm-size N       M = N = K of the GEMM point, a multiple of 128 from 128 to 16384 (default 8192)\n";

using Clock = std::chrono::steady_clock;

// User and system CPU seconds of this process so far: the host time a busy machine does not inflate.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

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

RefResult bench_reference(const Scenario& s, const ArchConfig& arch, uint64_t passes) {
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
  for (uint64_t pass = 0; pass < passes; ++pass)
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

// A fixed memcpy: 64 MiB copied 4 times between two buffers, the best of three passes (MB/s).
// The same work in every release, so that the simulator's speed divided by it is a figure that
// holds across machines and times of day better than MB/s alone.
double memcpy_mb_per_s() {
  constexpr size_t kBytes = size_t{64} << 20;
  constexpr int kCopies = 4;
  std::vector<uint8_t> a(kBytes, 1), b(kBytes, 2);
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kCopies; ++i) {
      std::memcpy(i % 2 ? a.data() : b.data(), i % 2 ? b.data() : a.data(), kBytes);
      a[static_cast<size_t>(i) * 4099 % kBytes] ^= 1;  // keeps the copies from being elided
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, kBytes * double{kCopies} / 1e6 / s);
  }
  return best + (a[7] == 255 ? 1e-9 : 0);
}

}  // namespace

int bench(int argc, char** argv) {
  std::string scenario_path = "configs/scenarios/stream_tiles.yaml", arch_path;
  std::vector<std::string> sets, arch_sets;
  bool gemm = false, reference_only = false;
  uint64_t gemm_size = 8192, passes = 1;
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
      else if (a == "--gemm") gemm = true;
      else if (a == "--reference-only") reference_only = true;
      else if (a == "--passes") passes = args.uint_value(a, 1, 1000);
      else if (a == "--gemm-size") {
        gemm_size = args.uint_value(a, 128, 16384);
        if (gemm_size % 128) throw UsageError("--gemm-size must be a multiple of 128 (got " + std::to_string(gemm_size) + ")");
      }
      else throw UsageError("unknown argument '" + a + "'");
    }
    if (gemm && (reference_only || passes != 1)) throw UsageError("--reference-only and --passes are for the stream, not --gemm");
  } catch (const UsageError& e) {
    return usage_error("bench", e.what(), kUsage);
  }
  try {
    if (gemm) {
      const std::string n = std::to_string(gemm_size);
      const std::vector<std::string> gemm_sets = {"tensors.A.dims=[" + n + ", " + n + "]",
                                                  "tensors.B.dims=[" + n + ", " + n + "]", "workload.m=" + n,
                                                  "workload.n=" + n, "workload.k=" + n};
      const Scenario s = load_scenario(resolve_project_path("configs/scenarios/gemm_bf16.yaml"), gemm_sets);
      const ArchConfig arch = load_arch_for_command(arch_path, s.arch, arch_sets);
      for (const std::string& w : scenario_warnings(s, arch)) print_warning(w);
      const double memcpy_mbs = memcpy_mb_per_s();
      std::printf("tma-sim bench --gemm: %sx%sx%s bf16 GEMM main loop (128x128x64 tiles, 4 stages) on %u SMs of %s\n",
                  n.c_str(), n.c_str(), n.c_str(), s.sms, arch.name.c_str());
      RunOptions opt;
      opt.scoreboard = false;
      opt.progress = false;
      const double cpu0 = cpu_seconds();
      const RunSummary r = run_scenario(s, arch, opt);
      const double cpu = cpu_seconds() - cpu0;
      const double kernel_s = r.cycles / (r.clock_mhz * 1e6);
      std::printf("  GEMM point        %8.1f s host, %.0f simulated cycles/s, slowdown %.3g (%llu cycles = %.3f ms simulated)\n",
                  r.host_seconds, r.cycles / r.host_seconds, r.host_seconds / kernel_s,
                  static_cast<unsigned long long>(r.cycles), kernel_s * 1e3);
      std::printf("  CPU time          %8.1f s of this process (%.0f simulated cycles per CPU second, slowdown %.3g):\n"
                  "                    the host time when no other process shares the core\n",
                  cpu, r.cycles / cpu, cpu / kernel_s);
      std::printf("  tile traffic      %8.1f MB/s (%.1f MB), %.4f of memcpy (%.0f MB/s)\n", r.bytes_loaded / 1e6 / r.host_seconds,
                  r.bytes_loaded / 1e6, r.bytes_loaded / 1e6 / r.host_seconds / memcpy_mbs, memcpy_mbs);
      std::printf("  peak memory       %8.1f MiB\n", peak_rss_mib());
      std::printf("  target            GEMM point (8192) < 60 s host\n");
      return 0;
    }
    const Scenario s = load_scenario(resolve_project_path(scenario_path), sets);
    if (s.workload.kind != WorkloadKind::stream) throw std::runtime_error("bench needs a stream scenario");
    const ArchConfig arch = load_arch_for_command(arch_path, s.arch, arch_sets);
    for (const std::string& w : scenario_warnings(s, arch)) print_warning(w);
    const double memcpy_mbs = memcpy_mb_per_s();
    std::printf("tma-sim bench: %s (%s) on %s\n", s.name.c_str(), s.description.c_str(), arch.name.c_str());
    const RefResult ref = bench_reference(s, arch, passes);
    std::printf("  reference engine  %8.1f MB/s of tile traffic (%llu loads, %.1f MB in %.3f s); no simulated time\n",
                ref.bytes / 1e6 / ref.seconds, static_cast<unsigned long long>(ref.ops), ref.bytes / 1e6, ref.seconds);
    if (reference_only) {
      std::printf("  peak memory       %8.1f MiB\n", peak_rss_mib());
      std::printf("  memcpy            %8.1f MB/s (64 MiB x 4, this process): reference %.3f of it\n", memcpy_mbs,
                  ref.bytes / 1e6 / ref.seconds / memcpy_mbs);
      std::printf("  target            reference >= 6000 MB/s\n");
      return 0;
    }
    RunOptions opt;
    opt.scoreboard = false;
    opt.progress = false;
    const RunSummary r = run_scenario(s, arch, opt);
    std::printf("  TLM pipeline      %8.1f MB/s of tile traffic, %.0f simulated cycles/s (%.1f MB, %llu cycles in %.3f s)\n",
                r.bytes_loaded / 1e6 / r.host_seconds, r.cycles / r.host_seconds, r.bytes_loaded / 1e6,
                static_cast<unsigned long long>(r.cycles), r.host_seconds);
    std::printf("  peak memory       %8.1f MiB\n", peak_rss_mib());
    std::printf("  memcpy            %8.1f MB/s (64 MiB x 4, this process): pipeline %.4f of it, reference %.3f\n",
                memcpy_mbs, r.bytes_loaded / 1e6 / r.host_seconds / memcpy_mbs, ref.bytes / 1e6 / ref.seconds / memcpy_mbs);
    std::printf("  targets           reference >= 6000 MB/s, pipeline >= 300 MB/s, peak memory < 2048 MiB\n");
    return 0;
  } catch (const std::exception& e) {
    print_error(e.what());
    return 2;
  }
}

}  // namespace tma::cli
