// tma-sim: the command-line front end of the TMA model.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tma/cli/cli.h"
#include "tma/config/cli_args.h"
#include "tma/config/paths.h"

namespace {

const char* kUsage =
    "usage: tma-sim COMMAND [ARGS...]\n"
    "       tma-sim help [COMMAND]\n"
    "       tma-sim --version\n"
    "\n"
    "Commands:\n"
    "  check PATH...        replay golden cases (silicon captures) and report mismatches\n"
    "  run SCENARIO.yaml    run a scenario (or replay a TRACE.jsonl) on the TLM model and print a summary\n"
    "  bench                host speed of the reference engine and the pipeline\n"
    "  regress FILE         run a regression list (jobs in parallel, JUnit, replay commands)\n"
    "  regress-merge DIR... merge the shards of a regression or sweep into one report\n"
    "  sweep FILE           run a parameter sweep and write one CSV row per point\n"
    "  random --seed S --count N   constrained-random cases through the pipeline, with coverage\n"
    "  coverage merge|report       merge and report functional-coverage files\n"
    "  trace export SCENARIO.yaml -o OUT.jsonl   a scenario's TMA operations as a trace\n"
    "\n"
    "Run 'tma-sim help COMMAND' (or 'tma-sim COMMAND --help') for the options of a command.\n"
    "Exit status: 0 success, 1 a check failed (a mismatch, a failed job), 2 bad input or usage.\n";

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

namespace {

using Command = int (*)(int, char**);

Command find_command(const std::string& name) {
  if (name == "check") return tma::cli::check;
  if (name == "run") return tma::cli::run;
  if (name == "bench") return tma::cli::bench;
  if (name == "regress") return tma::cli::regress;
  if (name == "regress-merge") return tma::cli::regress_merge;
  if (name == "regress-selftest") return tma::cli::regress_selftest;
  if (name == "sweep") return tma::cli::sweep;
  if (name == "random") return tma::cli::random;
  if (name == "coverage") return tma::cli::coverage;
  if (name == "trace") return tma::cli::trace;
  return nullptr;
}

}  // namespace

int sc_main(int argc, char** argv) {
  tma::set_executable_path(argc > 0 ? argv[0] : "");
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || (cmd == "help" && argc == 2)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "--version" || cmd == "-V") {
    std::printf("tma-sim %s\n", TMA_VERSION);
    return 0;
  }
  if (cmd == "help") {
    // "tma-sim help COMMAND [SUBCOMMAND]" is "tma-sim COMMAND [SUBCOMMAND] --help".
    const Command c = find_command(argv[2]);
    if (!c) {
      tma::cli::print_error(std::string("no command '") + argv[2] + "' (run 'tma-sim help' for the list)");
      return 2;
    }
    std::vector<char*> args(argv + 3, argv + argc);
    static char help[] = "--help";
    args.push_back(help);
    return c(static_cast<int>(args.size()), args.data());
  }
  if (const Command c = find_command(cmd)) return c(argc - 2, argv + 2);
  tma::cli::print_error("unknown command '" + cmd + "'");
  std::fputs(kUsage, stderr);
  return 2;
}
