// tma-sim trace export: a scenario's CTAs, every TMA operation of each, as a trace (docs/traces.md)
// that 'tma-sim run TRACE.jsonl' replays.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/cli/cli.h"
#include "tma/config/cli_args.h"
#include "tma/config/paths.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/trace.h"
#include "tma/scenario/workload.h"

namespace tma::cli {

namespace {

const char* kUsage =
    "usage: tma-sim trace export SCENARIO.yaml (-o | --output) OUT.jsonl [--arch FILE] [--set PATH=VALUE]...\n"
    "                            [--arch-set F=VALUE]...\n"
    "\n"
    "export  writes the CTAs the scenario's workload makes as a trace (docs/traces.md): JSON lines,\n"
    "        a header with the scenario's tensors and descriptors, the stage ring's depth and the SM\n"
    "        of each CTA, then one line per TMA operation (its CTA, SM, pipeline step, stage and\n"
    "        phase, what it waits for, the step's compute cycles). 'tma-sim run OUT.jsonl' replays it\n"
    "        with the same results as running the scenario.\n"
    "\n"
    "  -o, --output FILE   the trace to write\n"
    "  --arch FILE         architecture the compute cycles per step are derived for, written as the\n"
    "                      trace's (default: the scenario's 'arch', else configs/arch/h100.yaml)\n"
    "  --set PATH=VALUE    override a scenario field first, e.g. --set sms=16\n"
    "  --arch-set F=VALUE  override an architecture field\n"
    "Exit status: 0, or 2 on bad input.\n";

}  // namespace

int trace(int argc, char** argv) {
  std::string sub, scenario_path, out_path, arch_path;
  std::vector<std::string> sets, arch_sets;
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (sub.empty() && !a.empty() && a[0] != '-') {
        sub = a;
        if (sub != "export") throw UsageError("unknown trace command '" + sub + "' (export)");
      } else if (a == "-o" || a == "--output") out_path = args.value(a);
      else if (a == "--arch") arch_path = args.value(a);
      else if (a == "--set") sets.push_back(args.value(a));
      else if (a == "--arch-set") arch_sets.push_back(args.value(a));
      else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
      else if (scenario_path.empty()) scenario_path = a;
      else throw UsageError("more than one scenario given ('" + a + "')");
    }
    if (sub.empty()) throw UsageError("no trace command given (export)");
    if (scenario_path.empty()) throw UsageError("no scenario given");
    if (out_path.empty()) throw UsageError("no output given (-o OUT.jsonl)");
  } catch (const UsageError& e) {
    return usage_error("trace", e.what(), kUsage);
  }
  try {
    const Scenario s = load_scenario(resolve_project_path(scenario_path), sets);
    const std::string arch_file = resolve_project_path(arch_path.empty() ? s.arch : arch_path);
    ArchConfig arch = load_arch_config(arch_file);
    apply_arch_overrides(arch, arch_sets);
    for (const std::string& w : scenario_warnings(s, arch)) print_warning(w);
    const Launch launch = build_launch(s, arch);
    std::ofstream out(out_path);
    if (!out) throw std::runtime_error("cannot write " + out_path);
    write_trace(out, s, launch, arch_file);
    out.close();
    if (!out) throw std::runtime_error("cannot write " + out_path);
    size_t ops = 0;
    for (const CtaProgram& p : launch.ctas) {
      ops += p.prologue.size();
      for (const Step& st : p.steps) ops += st.loads.size() + st.after.size();
    }
    std::printf("wrote %s: %zu CTAs, %zu operations of scenario %s\n", out_path.c_str(), launch.ctas.size(), ops,
                s.name.c_str());
    return 0;
  } catch (const std::exception& e) {
    print_error(e.what());
  }
  return 2;
}

}  // namespace tma::cli
