// tma-sim random: seeded constrained-random cases through the TLM pipeline (or the reference engine
// alone), each checked against the reference engine, with functional coverage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/cli/cli.h"
#include "tma/config/cli_args.h"
#include "tma/regress/coverage.h"
#include "tma/golden/golden_check.h"
#include "tma/config/paths.h"
#include "tma/regress/random_cases.h"
#include "tma/golden/tlm_replay.h"

namespace tma::cli {

namespace {

// As a regression file's random generators (docs/regressions.md).
constexpr uint64_t kMaxCount = 1000000000ull, kMaxStart = 1000000000000ull;

const char* kUsage =
    "usage: tma-sim random --seed S --count N [--start K] [--engine tlm|ref] [--gpu sm_90|sm_100]\n"
    "                      [--blackwell-forms] [--arch FILE] [--arch-set F=VALUE]... [--coverage OUT.json]\n"
    "                      [--write DIR] [--quiet]\n"
    "\n"
    "Generates constrained-random cases K .. K+N-1 of seed S (case k depends only on S, k and the\n"
    "options), computes what each must do with the reference engine, and replays them. Prints one line\n"
    "per failing case with the command that replays it alone, then 'N passed, M failed'.\n"
    "Exit status: 0 when M is 0, 1 when a case failed, 2 on bad usage.\n"
    "\n"
    "  --seed S            run seed (any 64-bit number, decimal or 0x hexadecimal)\n"
    "  --count N           number of cases, 1 to 1000000000\n"
    "  --start K           first case index, 0 to 1000000000000 (default 0)\n"
    "  --engine tlm        replay through the SystemC/TLM pipeline (default)\n"
    "  --engine ref        only check the generator: every case keeps its intent (valid cases run,\n"
    "                      refused descriptors break the intended rule, fault cases trap) and replays\n"
    "                      identically through the reference engine\n"
    "  --gpu sm_90|sm_100  the generation whose forms are generated and whose rules apply (default sm_90)\n"
    "  --blackwell-forms   sm_100 only: also im2col_w, im2col_w128, gather4/scatter4 and the sub-byte\n"
    "                      types, which the pipeline does not model yet (expect failures on them)\n"
    "  --arch FILE         architecture YAML for --engine tlm (default configs/arch/h100.yaml)\n"
    "  --arch-set F=VALUE  override an architecture field for --engine tlm, as 'tma-sim run' does\n"
    "  --coverage OUT.json write the functional coverage of the generated cases\n"
    "  --write DIR         write every generated case as a golden case (DIR/NAME.yaml + image) for\n"
    "                      'tma-sim check'\n"
    "  --quiet             no header and no coverage summary\n";

}  // namespace

int random(int argc, char** argv) {
  uint64_t seed = 0, count = 0, start = 0;
  bool have_seed = false, have_count = false, quiet = false;
  std::string engine = "tlm", arch_path, coverage_path, write_dir, gpu = "sm_90";
  std::vector<std::string> arch_sets;
  RandomOptions opt;
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "--seed") {
        seed = args.uint_value(a, 0, UINT64_MAX);
        have_seed = true;
      } else if (a == "--count") {
        count = args.uint_value(a, 1, kMaxCount);
        have_count = true;
      } else if (a == "--start") start = args.uint_value(a, 0, kMaxStart);
      else if (a == "--engine") engine = args.value(a);
      else if (a == "--gpu") gpu = args.value(a);
      else if (a == "--blackwell-forms") opt.blackwell_forms = true;
      else if (a == "--arch") arch_path = args.value(a);
      else if (a == "--arch-set") arch_sets.push_back(args.value(a));
      else if (a == "--coverage") coverage_path = args.value(a);
      else if (a == "--write") write_dir = args.value(a);
      else if (a == "--quiet") quiet = true;
      else throw UsageError("unknown option '" + a + "'");
    }
    if (!have_seed || !have_count) throw UsageError("--seed and --count are required");
    check_engine_options(engine, arch_path, arch_sets);
    const std::optional<GpuArch> parsed_gpu = parse_gpu_arch(gpu);
    if (!parsed_gpu) throw UsageError("unknown --gpu '" + gpu + "' (sm_90, sm_100)");
    opt.arch = *parsed_gpu;
    if (opt.blackwell_forms && opt.arch != GpuArch::sm100) throw UsageError("--blackwell-forms needs --gpu sm_100");
  } catch (const UsageError& e) {
    return usage_error("random", e.what(), kUsage);
  }
  ArchConfig arch;
  if (!load_engine_arch(engine, arch_path, arch_sets, arch)) return 2;

  // The command that regenerates and replays one case alone.
  std::string replay_base = "tma-sim random --seed " + std::to_string(seed);
  std::string replay_opts;
  if (opt.arch != GpuArch::sm90) replay_opts += " --gpu " + to_string(opt.arch);
  if (opt.blackwell_forms) replay_opts += " --blackwell-forms";
  if (engine != "tlm") replay_opts += " --engine " + engine;
  if (!arch_path.empty()) replay_opts += " --arch " + arch_path;
  for (const std::string& o : arch_sets) replay_opts += " --arch-set " + o;

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<RandomCase> cases = generate_random_cases(seed, start, count, opt);
  const auto t1 = std::chrono::steady_clock::now();
  // Host times go to stderr: stdout (and every file written) depends only on the arguments.
  if (!quiet) {
    std::printf("random: seed %llu, cases [%llu, %llu), profile %s, engine %s\n", static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(start), static_cast<unsigned long long>(start + count),
                random_profile(opt).c_str(), engine.c_str());
    std::fprintf(stderr, "generated in %.2f s\n", std::chrono::duration<double>(t1 - t0).count());
  }

  CoverageDb coverage;
  coverage.declare(opt);
  for (const RandomCase& c : cases) {
    coverage.sample(c.golden, c.intent);
    if (!write_dir.empty()) {
      try {
        write_random_case(c, write_dir);
      } catch (const std::exception& e) {
        print_error(e.what());
        return 2;
      }
    }
  }

  uint64_t passed = 0, failed = 0, blackwell_failed = 0;
  // What a failure line needs; the golden cases themselves move to the replay (their images are the
  // bulk of the memory). The generator's own consistency is checked first: a case whose intent the
  // reference engine contradicts is a generator bug, whatever the pipeline does.
  struct Line {
    std::string name, intent, description, intent_error;
    uint64_t index = 0;
    bool blackwell = false;
  };
  std::vector<Line> lines;
  std::vector<GoldenCase> goldens;
  lines.reserve(cases.size());
  goldens.reserve(cases.size());
  for (RandomCase& c : cases) {
    lines.push_back(Line{c.golden.name, c.intent, describe_random_case(c), check_random_intent(c), c.index,
                         is_blackwell_form(c.golden.map)});
    goldens.push_back(std::move(c.golden));
  }
  cases.clear();
  cases.shrink_to_fit();
  auto fail_line = [&](const Line& c, const std::string& message) {
    ++failed;
    const bool bw = c.blackwell && engine == "tlm";
    if (bw) ++blackwell_failed;
    std::printf("%s [%s, %s]: %s%s | replay: %s --start %llu --count 1%s\n", c.name.c_str(), c.intent.c_str(),
                c.description.c_str(), message.c_str(), bw ? " (a Blackwell form the pipeline does not model)" : "",
                replay_base.c_str(), static_cast<unsigned long long>(c.index), replay_opts.c_str());
  };
  auto report = [&](size_t i, const CaseVerdict& v) {
    if (!lines[i].intent_error.empty()) {
      fail_line(lines[i], "generator: " + lines[i].intent_error);
    } else if (!v.passed) {
      // check_case's message starts with the case name; the line names it already.
      std::string msg = v.message;
      const std::string prefix = lines[i].name + ": ";
      if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
      fail_line(lines[i], msg);
    } else {
      ++passed;
    }
  };
  if (engine == "ref") {
    for (size_t i = 0; i < lines.size(); ++i) report(i, CaseVerdict{true, ""});  // check_random_intent replayed it
  } else if (!goldens.empty()) {
    size_t next = 0;
    replay_through_tlm(goldens, arch, [&](const GoldenCase&, const CaseVerdict& v) { report(next++, v); });
  }
  const auto t2 = std::chrono::steady_clock::now();
  std::printf("%llu passed, %llu failed\n", static_cast<unsigned long long>(passed),
              static_cast<unsigned long long>(failed));
  if (!quiet && blackwell_failed)
    std::printf("(%llu of the failures are Blackwell forms the pipeline does not model)\n",
                static_cast<unsigned long long>(blackwell_failed));
  if (!quiet) std::fprintf(stderr, "ran in %.2f s\n", std::chrono::duration<double>(t2 - t1).count());
  if (!coverage_path.empty()) {
    try {
      save_coverage(coverage, coverage_path);
    } catch (const std::exception& e) {
      print_error(e.what());
      return 2;
    }
    if (!quiet) std::printf("coverage written to %s ('tma-sim coverage report %s')\n", coverage_path.c_str(),
                            coverage_path.c_str());
  }
  return failed ? 1 : 0;
}

}  // namespace tma::cli
