// tma-sim sweep: the cross product of a sweep file's parameters as tma-sim run jobs, one CSV row
// per point (docs/sweeps.md).
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cli.h"
#include "paths.h"
#include "regress_plan.h"
#include "regress_runner.h"

namespace tma::cli {

namespace {

const char* kUsage =
    "usage: tma-sim sweep FILE [options]\n"
    "       tma-sim sweep --resume DIR [--jobs N] [--csv FILE] [--quiet]\n"
    "\n"
    "Runs every point of a sweep (configs/sweeps/*.yaml: a base scenario and parameters, each a\n"
    "scenario --set path or an architecture field, whose cross product is the set of points) as a\n"
    "'tma-sim run --stats' process and writes sweep.csv in the run folder: one row per point with\n"
    "its parameters, its status and every summary statistic. Plot it with scripts/plot_sweep.py.\n"
    "\n"
    "  --jobs N        points at a time (default: the number of CPUs)\n"
    "  --shard K/N     run shard K (0-based) of N (merge with tma-sim regress-merge)\n"
    "  --out DIR       parent of the run folder (default runs/)\n"
    "  --csv FILE      also write sweep.csv here\n"
    "  --junit FILE    also write a JUnit XML (one testcase per point) here\n"
    "  --resume DIR    finish an interrupted sweep in DIR\n"
    "  --dry-run       print the points and their command lines, run nothing\n"
    "  --quiet         no progress on stderr\n"
    "Exit status: 0 every point ran, 1 a point failed or did not run, 2 bad input, 130 interrupted.\n";

}  // namespace

int sweep(int argc, char** argv) {
  std::string file;
  regress::DriveOptions o;
  o.command = "sweep";
  try {
    for (int i = 0; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error("option " + a + " needs a value");
        return argv[++i];
      };
      if (a == "--help" || a == "-h") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (a == "--jobs" || a == "-j") {
        const std::string v = value();
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 5 || std::stoul(v) == 0)
          throw std::runtime_error("--jobs '" + v + "': expected a whole number of at least 1");
        o.jobs = static_cast<unsigned>(std::stoul(v));
      } else if (a == "--shard") o.shard = regress::parse_shard(value());
      else if (a == "--out") o.out = value();
      else if (a == "--csv") o.csv = value();
      else if (a == "--junit") o.junit = value();
      else if (a == "--resume") o.resume = value();
      else if (a == "--dry-run") o.dry_run = true;
      else if (a == "--quiet") o.quiet = true;
      else if (!a.empty() && a[0] == '-') throw std::runtime_error("unknown option '" + a + "'");
      else if (file.empty()) file = a;
      else throw std::runtime_error("more than one sweep file given ('" + a + "')");
    }
    if (!o.resume.empty() && (!file.empty() || o.shard))
      throw std::runtime_error("--resume takes the run folder's own plan: no FILE or --shard");
    if (o.resume.empty() && file.empty()) throw std::runtime_error("no sweep file given");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tma-sim sweep: %s\n%s", e.what(), kUsage);
    return 2;
  }
  if (!o.resume.empty()) return regress::drive(std::nullopt, o);
  try {
    return regress::drive(regress::load_sweep(resolve_project_path(file)), o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tma-sim sweep: %s\n", e.what());
    return 2;
  }
}

}  // namespace tma::cli
