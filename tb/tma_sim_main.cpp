// tma-sim: the command-line front end of the TMA model.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.h"

namespace {

const char* kUsage =
    "usage: tma-sim COMMAND [ARGS...]\n"
    "\n"
    "Commands:\n"
    "  check PATH...        replay golden cases (silicon captures) and report mismatches\n"
    "\n"
    "Run 'tma-sim COMMAND --help' for the options of a command.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  if (cmd == "check") return tma::cli::check(argc - 2, argv + 2);
  std::fprintf(stderr, "tma-sim: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
