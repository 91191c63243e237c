// tma-sim coverage: merge functional-coverage databases (tma-sim random --coverage) and report them.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli.h"
#include "coverage.h"

namespace tma::cli {

namespace {

const char* kUsage =
    "usage: tma-sim coverage merge OUT.json IN.json...\n"
    "       tma-sim coverage report [--max-holes N] IN.json...\n"
    "\n"
    "merge   adds up the hits of every bin of the inputs (bins any input declares are kept) and\n"
    "        writes the result to OUT.json.\n"
    "report  prints hit/total for every bin group and cross of the inputs (merged), then the holes:\n"
    "        the bins never hit, at most N per group (default 20; 0 lists all).\n"
    "Exit status: 0, or 2 on bad usage or an unreadable file.\n";

}  // namespace

int coverage(int argc, char** argv) {
  if (argc < 1 || std::string(argv[0]) == "--help" || std::string(argv[0]) == "-h") {
    std::fputs(kUsage, argc < 1 ? stderr : stdout);
    return argc < 1 ? 2 : 0;
  }
  const std::string sub = argv[0];
  std::vector<std::string> inputs;
  size_t max_holes = 20;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (sub == "report" && a == "--max-holes" && i + 1 < argc) {
      max_holes = static_cast<size_t>(std::strtoull(argv[++i], nullptr, 10));
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "tma-sim coverage: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    } else if (sub == "merge" && out.empty()) {
      out = a;
    } else {
      inputs.push_back(a);
    }
  }
  if ((sub != "merge" && sub != "report") || inputs.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  CoverageDb db;
  try {
    for (const std::string& in : inputs) db.merge(load_coverage(in));
    if (sub == "merge") {
      save_coverage(db, out);
      std::printf("merged %zu files (%llu cases) into %s\n", inputs.size(), static_cast<unsigned long long>(db.cases),
                  out.c_str());
    } else {
      std::fputs(db.report(max_holes).c_str(), stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tma-sim coverage: %s\n", e.what());
    return 2;
  }
  return 0;
}

}  // namespace tma::cli
