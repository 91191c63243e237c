// tma-sim regress, regress-merge and the hidden regress-selftest (docs/regressions.md).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "tma/cli/cli.h"
#include "tma/config/cli_args.h"
#include "tma/config/paths.h"
#include "tma/regress/regress_plan.h"
#include "tma/regress/regress_runner.h"
#include "tma/config/yaml_reader.h"

namespace tma::cli {

namespace {

const char* kRegressUsage =
    "usage: tma-sim regress FILE [--list NAME] [--jobs N] [--shard K/N] [--seed S] [--out DIR] [--junit FILE]\n"
    "                       [--dry-run] [--quiet]\n"
    "       tma-sim regress --resume DIR [--jobs N] [--junit FILE] [--dry-run] [--quiet]\n"
    "\n"
    "Runs a list of a regression file (configs/regressions/*.yaml): golden-case folders, scenarios\n"
    "and constrained-random generators, each job a tma-sim process of its own with its output in\n"
    "the run folder's logs/. A crash or a hang fails that job, not the run. Writes results/<id>.json\n"
    "as each job ends, then summary.md, summary.csv, failures.csv (grouped by signature) and\n"
    "junit.xml, and prints every failure with the command that replays it.\n"
    "\n"
    "  --list NAME     the list to run (default: the file's first list)\n"
    "  --jobs N        jobs at a time, 1 to 1024 (default: the number of CPUs)\n"
    "  --shard K/N     run shard K (0-based) of N: job i of the id-sorted list goes to shard i % N\n"
    "  --seed S        derive every generator's base seed from S (any 64-bit number) instead of the\n"
    "                  file's seeds\n"
    "  --out DIR       parent of the run folder (default runs/); the folder is new for every run\n"
    "  --junit FILE    also write the JUnit XML here\n"
    "  --resume DIR    finish an interrupted run in DIR: only jobs without a result run\n"
    "  --dry-run       check the file, every scenario and override, and print the jobs and their\n"
    "                  command lines; run nothing\n"
    "  --quiet         no progress on stderr\n"
    "Exit status: 0 every job passed (or was skipped), 1 a job failed or did not run, 2 bad input,\n"
    "130 interrupted (SIGINT/SIGTERM: the finished results and the reports are kept; --resume).\n";

const char* kMergeUsage =
    "usage: tma-sim regress-merge DIR... --out DIR [--junit FILE] [--csv FILE]\n"
    "\n"
    "Merges the run folders found under the DIRs (shards of one regression or sweep, e.g. the\n"
    "shard-K folders of scripts/slurm/regress.sh) into one report in --out: summary.md,\n"
    "summary.csv, failures.csv, junit.xml (and sweep.csv for a sweep). Jobs of a missing shard\n"
    "count as not run.\n"
    "\n"
    "  --out DIR       where the merged reports go (created)\n"
    "  --junit FILE    also write the merged JUnit XML here\n"
    "  --csv FILE      sweeps: also write the merged sweep.csv here\n"
    "Exit status: 0 every job passed, 1 a job failed or did not run, 2 bad input.\n";

}  // namespace

int regress(int argc, char** argv) {
  std::string file, list;
  std::optional<uint64_t> seed;
  regress::DriveOptions o;
  o.command = "regress";
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {
        std::fputs(kRegressUsage, stdout);
        return 0;
      } else if (a == "--list") list = args.value(a);
      else if (a == "--jobs" || a == "-j") o.jobs = static_cast<unsigned>(args.uint_value(a, 1, regress::kMaxJobs));
      else if (a == "--shard") o.shard = regress::parse_shard(args.value(a));
      else if (a == "--seed") seed = args.uint_value(a, 0, UINT64_MAX);
      else if (a == "--out") o.out = args.value(a);
      else if (a == "--junit") o.junit = args.value(a);
      else if (a == "--resume") o.resume = args.value(a);
      else if (a == "--dry-run") o.dry_run = true;
      else if (a == "--quiet") o.quiet = true;
      else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
      else if (file.empty()) file = a;
      else throw UsageError("more than one regression file given ('" + a + "')");
    }
    if (!o.resume.empty() && (!file.empty() || !list.empty() || seed || o.shard))
      throw UsageError("--resume takes the run folder's own plan: no FILE, --list, --seed or --shard");
    if (o.resume.empty() && file.empty()) throw UsageError("no regression file given");
  } catch (const std::exception& e) {  // UsageError, or parse_shard's error
    return usage_error("regress", e.what(), kRegressUsage);
  }
  if (!o.resume.empty()) return regress::drive(std::nullopt, o);
  try {
    return regress::drive(regress::load_regression(resolve_project_path(file), list, seed), o);
  } catch (const std::exception& e) {
    print_error(e.what());
    return 2;
  }
}

int regress_merge(int argc, char** argv) {
  std::vector<std::string> dirs;
  std::string out, junit, csv;
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {
        std::fputs(kMergeUsage, stdout);
        return 0;
      } else if (a == "--out") out = args.value(a);
      else if (a == "--junit") junit = args.value(a);
      else if (a == "--csv") csv = args.value(a);
      else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
      else dirs.push_back(a);
    }
    if (dirs.empty()) throw UsageError("no run folders given");
    if (out.empty()) throw UsageError("--out DIR is required");
  } catch (const UsageError& e) {
    return usage_error("regress-merge", e.what(), kMergeUsage);
  }
  return regress::merge_runs(dirs, out, junit, csv);
}

// Test-only (not in the usage): a job that passes, fails, errs, crashes or hangs on purpose, so
// the runner's handling of each is tested without depending on real bugs.
//   tma-sim regress-selftest MODE [--seconds S] [--until-file F]
//   MODE: pass (exit 0), fail (exit 1 with a mismatch line), error (exit 2), crash (SIGSEGV),
//         abort (SIGABRT), hang (ignores SIGTERM, sleeps until killed)
//   --seconds S     sleep S seconds first
//   --until-file F  wait until file F exists first (at most --seconds S when given)
int regress_selftest(int argc, char** argv) {
  const char* usage =
      "usage: tma-sim regress-selftest pass|fail|error|crash|abort|hang [--seconds S] [--until-file F]\n"
      "\n"
      "Test-only: a job that passes, fails, errs, crashes or hangs on purpose (docs/regressions.md).\n";
  std::string mode;
  double seconds = 0;
  std::string until;
  try {
    for (ArgList args(argc, argv); !args.done();) {
      const std::string a = args.next();
      if (a == "--help" || a == "-h") {
        std::fputs(usage, stdout);
        return 0;
      } else if (a == "--seconds") seconds = args.double_value(a, 0, 1e6);
      else if (a == "--until-file") until = args.value(a);
      else if (!a.empty() && a[0] == '-') throw UsageError("unknown option '" + a + "'");
      else if (mode.empty()) mode = a;
      else throw UsageError("more than one mode given ('" + a + "')");
    }
    if (mode.empty()) throw UsageError("no mode given");
  } catch (const UsageError& e) {
    return usage_error("regress-selftest", e.what(), usage);
  }
  std::printf("selftest: pid %d\n", static_cast<int>(::getpid()));
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  if (!until.empty()) {
    while (!std::filesystem::exists(until)) {
      if (seconds > 0 && std::chrono::steady_clock::now() - start > std::chrono::duration<double>(seconds)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  } else if (seconds > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
  if (mode == "pass") {
    std::printf("selftest: 1 passed, 0 failed\n");
    return 0;
  }
  if (mode == "fail") {
    std::printf("selftest: case 17 at 0x7f3a10: smem byte 4096: expected 0x12, got 0x34\n1 passed, 1 failed\n");
    return 1;
  }
  if (mode == "error") {
    print_error("cannot read input 'missing.yaml'");  // as a real command's bad input
    return 2;
  }
  if (mode == "crash" || mode == "abort") {
    struct rlimit none {0, 0};
    ::setrlimit(RLIMIT_CORE, &none);  // no core file
    std::printf("selftest: about to %s\n", mode.c_str());
    std::fflush(stdout);
    std::signal(mode == "crash" ? SIGSEGV : SIGABRT, SIG_DFL);
    std::raise(mode == "crash" ? SIGSEGV : SIGABRT);
    return 3;
  }
  if (mode == "hang") {
    std::signal(SIGTERM, SIG_IGN);  // only SIGKILL ends it: the runner's escalation is tested too
    std::printf("selftest: hanging\n");
    std::fflush(stdout);
    while (true) ::pause();
  }
  print_error("regress-selftest: unknown mode '" + mode + "'");
  return 2;
}

}  // namespace tma::cli
