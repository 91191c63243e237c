// tma-sim check: replay golden cases through an engine and report every mismatch.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/cli/cli.h"
#include "tma/config/cli_args.h"
#include "tma/golden/golden_check.h"
#include "tma/config/paths.h"
#include "tma/golden/tlm_replay.h"
#include "tma/config/yaml_reader.h"

namespace tma::cli {

namespace {

const char* kUsage =
    "usage: tma-sim check [--engine ref|tlm] [--arch FILE] [--arch-set F=VALUE]... [--driver-descriptors]\n"
    "                     [--quiet] PATH...\n"
    "\n"
    "Replays golden cases (tma-golden/1 YAML files, or folders searched recursively) and compares\n"
    "each result with what silicon did: the outcome (ok, encode_error, fault), the shared-memory\n"
    "window byte for byte, the complete_tx byte count, and for stores and reductions the global\n"
    "window. Prints one line per case that does not match, then 'N passed, M failed'.\n"
    "Exit status: 0 when M is 0, 1 when a case failed, 2 on bad usage, an unreadable case or no case\n"
    "found.\n"
    "\n"
    "  --engine ref   the reference engine (default)\n"
    "  --engine tlm   the SystemC/TLM pipeline (TmaUnit on one SM of the architecture)\n"
    "  --arch FILE    architecture YAML for --engine tlm (default configs/arch/h100.yaml)\n"
    "  --arch-set F=VALUE  override an architecture field for --engine tlm, as 'tma-sim run' does,\n"
    "                 e.g. --arch-set l2.hit_latency=300\n"
    "  --driver-descriptors  also decode each case's driver_descriptor (the sm_90 CUtensorMap\n"
    "                 bytes) and compare it with its tensor_map (docs/driver-descriptor.md)\n"
    "  --quiet        no progress line\n";

}  // namespace

int check(int argc, char** argv) {
  std::string engine = "ref";
  std::string arch_path;
  std::vector<std::string> arch_sets;
  bool driver_descriptors = false;
  std::vector<std::string> paths;
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "--engine") engine = args.value(a);
      else if (a == "--arch") arch_path = args.value(a);
      else if (a == "--arch-set") arch_sets.push_back(args.value(a));
      else if (a == "--driver-descriptors") driver_descriptors = true;
      else if (a == "--quiet") continue;  // check prints no progress; taken for regressions' uniform command lines
      else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
      else paths.push_back(a);
    }
    if (paths.empty()) throw UsageError("no golden-case file or folder given");
    check_engine_options(engine, arch_path, arch_sets);
  } catch (const UsageError& e) {
    return usage_error("check", e.what(), kUsage);
  }
  ArchConfig arch;
  if (!load_engine_arch(engine, arch_path, arch_sets, arch)) return 2;
  const std::vector<std::string> files = find_golden_cases(paths);
  if (files.empty()) {
    print_error("no golden cases (*.yaml) under the folders given");
    return 2;
  }
  int passed = 0, failed = 0, unreadable = 0;
  std::vector<GoldenCase> cases;
  for (const std::string& f : files) {
    try {
      cases.push_back(load_golden_case(f));
    } catch (const YamlError& e) {
      std::printf("%s\n", e.what());
      ++failed;
      ++unreadable;
    }
  }
  auto report = [&](const GoldenCase& c, CaseVerdict v) {
    if (v.passed && driver_descriptors) {
      const std::string d = check_driver_descriptor(c);
      if (!d.empty()) {
        v.passed = false;
        v.message = d;
      }
    }
    if (v.passed) {
      ++passed;
    } else {
      std::printf("%s\n", v.message.c_str());
      ++failed;
    }
  };
  if (engine == "ref") {
    for (const GoldenCase& c : cases) report(c, check_case(c, run_reference));
  } else {
    replay_through_tlm(cases, arch, report);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  if (unreadable) return 2;
  return failed ? 1 : 0;
}

}  // namespace tma::cli
