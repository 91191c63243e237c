// tma-sim: the command-line front end of the TMA model.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli.h"
#include "paths.h"

namespace {

const char* kUsage =
    "usage: tma-sim COMMAND [ARGS...]\n"
    "\n"
    "Commands:\n"
    "  check PATH...        replay golden cases (silicon captures) and report mismatches\n"
    "  run SCENARIO.yaml    run a scenario on the TLM model and print a summary\n"
    "  bench                host speed of the reference engine and the pipeline\n"
    "  regress FILE         run a regression list (jobs in parallel, JUnit, replay commands)\n"
    "  regress-merge DIR... merge the shards of a regression or sweep into one report\n"
    "  sweep FILE           run a parameter sweep and write one CSV row per point\n"
    "  random --seed S --count N   constrained-random cases through the pipeline, with coverage\n"
    "  coverage merge|report       merge and report functional-coverage files\n"
    "\n"
    "Run 'tma-sim COMMAND --help' for the options of a command.\n";

}  // namespace

#include <systemc>

// The program's entry: silence SystemC's banner (it prints when the kernel starts, before
// sc_main), then hand over to SystemC, which calls sc_main.
int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  // sc_stop() at the end of a run is expected, not news.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char** argv) {
  tma::set_executable_path(argc > 0 ? argv[0] : "");
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "check") return tma::cli::check(argc - 2, argv + 2);
  if (cmd == "run") return tma::cli::run(argc - 2, argv + 2);
  if (cmd == "bench") return tma::cli::bench(argc - 2, argv + 2);
  if (cmd == "regress") return tma::cli::regress(argc - 2, argv + 2);
  if (cmd == "regress-merge") return tma::cli::regress_merge(argc - 2, argv + 2);
  if (cmd == "regress-selftest") return tma::cli::regress_selftest(argc - 2, argv + 2);
  if (cmd == "sweep") return tma::cli::sweep(argc - 2, argv + 2);
  if (cmd == "random") return tma::cli::random(argc - 2, argv + 2);
  if (cmd == "coverage") return tma::cli::coverage(argc - 2, argv + 2);
  std::fprintf(stderr, "tma-sim: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
