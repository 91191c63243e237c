// tma-sim sweep: the cross product of a sweep file's parameters as tma-sim run jobs, one CSV row
// per point (docs/sweeps.md).
#include <cstdio>
#include <stdexcept>
#include <string>

#include "tma/cli/cli.h"
#include "tma/config/cli_args.h"
#include "tma/config/paths.h"
#include "tma/regress/regress_plan.h"
#include "tma/regress/regress_runner.h"

namespace tma::cli {

namespace {

const char* kUsage =
    "usage: tma-sim sweep FILE [--jobs N] [--shard K/N] [--out DIR] [--csv FILE] [--junit FILE] [--dry-run]\n"
    "                     [--quiet]\n"
    "       tma-sim sweep --resume DIR [--jobs N] [--csv FILE] [--junit FILE] [--dry-run] [--quiet]\n"
    "\n"
    "Runs every point of a sweep (configs/sweeps/*.yaml: a base scenario and parameters, each a\n"
    "scenario --set path or an architecture field, whose cross product is the set of points) as a\n"
    "'tma-sim run --stats' process and writes sweep.csv in the run folder: one row per point with\n"
    "its parameters, its status and every summary statistic. Plot it with scripts/plot_sweep.py.\n"
    "\n"
    "  --jobs N        points at a time, 1 to 1024 (default: the number of CPUs)\n"
    "  --shard K/N     run shard K (0-based) of N (merge with tma-sim regress-merge)\n"
    "  --out DIR       parent of the run folder (default runs/)\n"
    "  --csv FILE      also write sweep.csv here\n"
    "  --junit FILE    also write a JUnit XML (one testcase per point) here\n"
    "  --resume DIR    finish an interrupted sweep in DIR\n"
    "  --dry-run       check the file, every point's scenario and overrides, and print the\n"
    "                  points and their command lines; run nothing\n"
    "  --quiet         no progress on stderr\n"
    "Exit status: 0 every point ran, 1 a point failed or did not run, 2 bad input, 130 interrupted.\n";

}  // namespace

int sweep(int argc, char** argv) {
  std::string file;
  regress::DriveOptions o;
  o.command = "sweep";
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "--jobs" || a == "-j") o.jobs = static_cast<unsigned>(args.uint_value(a, 1, regress::kMaxJobs));
      else if (a == "--shard") o.shard = regress::parse_shard(args.value(a));
      else if (a == "--out") o.out = args.value(a);
      else if (a == "--csv") o.csv = args.value(a);
      else if (a == "--junit") o.junit = args.value(a);
      else if (a == "--resume") o.resume = args.value(a);
      else if (a == "--dry-run") o.dry_run = true;
      else if (a == "--quiet") o.quiet = true;
      else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
      else if (file.empty()) file = a;
      else throw UsageError("more than one sweep file given ('" + a + "')");
    }
    if (!o.resume.empty() && (!file.empty() || o.shard))
      throw UsageError("--resume takes the run folder's own plan: no FILE or --shard");
    if (o.resume.empty() && file.empty()) throw UsageError("no sweep file given");
  } catch (const std::exception& e) {  // UsageError, or parse_shard's error
    return usage_error("sweep", e.what(), kUsage);
  }
  if (!o.resume.empty()) return regress::drive(std::nullopt, o);
  try {
    return regress::drive(regress::load_sweep(resolve_project_path(file)), o);
  } catch (const std::exception& e) {
    print_error(e.what());
    return 2;
  }
}

}  // namespace tma::cli
