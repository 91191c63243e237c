// tma-sim coverage: merge functional-coverage databases (tma-sim random --coverage) and report them.
#include <cstdio>
#include <string>
#include <vector>

#include "tma/cli/cli.h"
#include "tma/config/cli_args.h"
#include "tma/regress/coverage.h"

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
  std::string sub, out;
  std::vector<std::string> inputs;
  size_t max_holes = 20;
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {  // also after merge or report
        std::fputs(kUsage, stdout);
        return 0;
      } else if (sub.empty() && !a.empty() && a[0] != '-') {
        sub = a;
        if (sub != "merge" && sub != "report")
          throw UsageError("unknown coverage command '" + sub + "' (merge, report)");
      } else if (sub == "report" && a == "--max-holes") {
        max_holes = static_cast<size_t>(args.uint_value(a, 0, 1000000000));
      } else if (!a.empty() && a[0] == '-') {
        throw UsageError("unknown option '" + a + "'");
      } else if (sub == "merge" && out.empty()) {
        out = a;
      } else {
        inputs.push_back(a);
      }
    }
    if (sub.empty()) throw UsageError("no coverage command given (merge, report)");
    if (inputs.empty()) throw UsageError("no input coverage files given");
  } catch (const UsageError& e) {
    return usage_error("coverage", e.what(), kUsage);
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
    print_error(e.what());
    return 2;
  }
  return 0;
}

}  // namespace tma::cli
