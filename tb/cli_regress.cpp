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

#include "cli.h"
#include "paths.h"
#include "regress_plan.h"
#include "regress_runner.h"
#include "yaml_reader.h"

namespace tma::cli {

namespace {

const char* kRegressUsage =
    "usage: tma-sim regress FILE [options]\n"
    "       tma-sim regress --resume DIR [--jobs N] [--junit FILE] [--quiet]\n"
    "\n"
    "Runs a list of a regression file (configs/regressions/*.yaml): golden-case folders, scenarios\n"
    "and constrained-random generators, each job a tma-sim process of its own with its output in\n"
    "the run folder's logs/. A crash or a hang fails that job, not the run. Writes results/<id>.json\n"
    "as each job ends, then summary.md, summary.csv, failures.csv (grouped by signature) and\n"
    "junit.xml, and prints every failure with the command that replays it.\n"
    "\n"
    "  --list NAME     the list to run (default: the file's first list)\n"
    "  --jobs N        jobs at a time (default: the number of CPUs)\n"
    "  --shard K/N     run shard K (0-based) of N: job i of the id-sorted list goes to shard i % N\n"
    "  --seed S        derive every generator's base seed from S instead of the file's seeds\n"
    "  --out DIR       parent of the run folder (default runs/); the folder is new for every run\n"
    "  --junit FILE    also write the JUnit XML here\n"
    "  --resume DIR    finish an interrupted run in DIR: only jobs without a result run\n"
    "  --dry-run       print the jobs and their command lines, run nothing\n"
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

std::string need(int argc, char** argv, int& i, const std::string& opt) {
  if (i + 1 >= argc) throw std::runtime_error("option " + opt + " needs a value");
  return argv[++i];
}

unsigned parse_jobs(const std::string& v) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 5 || std::stoul(v) == 0)
    throw std::runtime_error("--jobs '" + v + "': expected a whole number of at least 1");
  return static_cast<unsigned>(std::stoul(v));
}

uint64_t parse_seed(const std::string& v) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 19)
    throw std::runtime_error("--seed '" + v + "': expected a whole number");
  return std::stoull(v);
}

}  // namespace

int regress(int argc, char** argv) {
  std::string file, list;
  std::optional<uint64_t> seed;
  regress::DriveOptions o;
  o.command = "regress";
  try {
    for (int i = 0; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::fputs(kRegressUsage, stdout);
        return 0;
      } else if (a == "--list") list = need(argc, argv, i, a);
      else if (a == "--jobs" || a == "-j") o.jobs = parse_jobs(need(argc, argv, i, a));
      else if (a == "--shard") o.shard = regress::parse_shard(need(argc, argv, i, a));
      else if (a == "--seed") seed = parse_seed(need(argc, argv, i, a));
      else if (a == "--out") o.out = need(argc, argv, i, a);
      else if (a == "--junit") o.junit = need(argc, argv, i, a);
      else if (a == "--resume") o.resume = need(argc, argv, i, a);
      else if (a == "--dry-run") o.dry_run = true;
      else if (a == "--quiet") o.quiet = true;
      else if (!a.empty() && a[0] == '-') throw std::runtime_error("unknown option '" + a + "'");
      else if (file.empty()) file = a;
      else throw std::runtime_error("more than one regression file given ('" + a + "')");
    }
    if (!o.resume.empty() && (!file.empty() || !list.empty() || seed || o.shard))
      throw std::runtime_error("--resume takes the run folder's own plan: no FILE, --list, --seed or --shard");
    if (o.resume.empty() && file.empty()) throw std::runtime_error("no regression file given");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tma-sim regress: %s\n%s", e.what(), kRegressUsage);
    return 2;
  }
  if (!o.resume.empty()) return regress::drive(std::nullopt, o);
  try {
    return regress::drive(regress::load_regression(resolve_project_path(file), list, seed), o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tma-sim regress: %s\n", e.what());
    return 2;
  }
}

int regress_merge(int argc, char** argv) {
  std::vector<std::string> dirs;
  std::string out, junit, csv;
  try {
    for (int i = 0; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::fputs(kMergeUsage, stdout);
        return 0;
      } else if (a == "--out") out = need(argc, argv, i, a);
      else if (a == "--junit") junit = need(argc, argv, i, a);
      else if (a == "--csv") csv = need(argc, argv, i, a);
      else if (!a.empty() && a[0] == '-') throw std::runtime_error("unknown option '" + a + "'");
      else dirs.push_back(a);
    }
    if (dirs.empty()) throw std::runtime_error("no run folders given");
    if (out.empty()) throw std::runtime_error("--out DIR is required");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tma-sim regress-merge: %s\n%s", e.what(), kMergeUsage);
    return 2;
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
  if (argc < 1) {
    std::fputs("usage: tma-sim regress-selftest pass|fail|error|crash|abort|hang [--seconds S] [--until-file F]\n",
               stderr);
    return 2;
  }
  const std::string mode = argv[0];
  double seconds = 0;
  std::string until;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc) seconds = std::atof(argv[++i]);
    else if (a == "--until-file" && i + 1 < argc) until = argv[++i];
    else {
      std::fprintf(stderr, "tma-sim regress-selftest: unknown option '%s'\n", a.c_str());
      return 2;
    }
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
    std::fprintf(stderr, "tma-sim regress-selftest: cannot read input 'missing.yaml'\n");
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
  std::fprintf(stderr, "tma-sim regress-selftest: unknown mode '%s'\n", mode.c_str());
  return 2;
}

}  // namespace tma::cli
