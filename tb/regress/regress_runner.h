// Running a plan's jobs: each job is its own process (fork/exec of this tma-sim binary through
// /proc/self/exe) with stdout and stderr in logs/<id>.log of the run folder. A crash (signal) or
// a hang (timeout: SIGTERM, then SIGKILL) fails that job, not the run. Each result is written
// to results/<id>.json (atomically) the moment it is known. SIGINT, SIGTERM or SIGHUP stop the
// launching, end the running jobs (they stay unfinished, for --resume) and return.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tma/regress/regress_plan.h"
#include "tma/regress/regress_report.h"

namespace tma::regress {

struct RunnerOptions {
  unsigned jobs = 1;           // jobs at a time
  bool quiet = false;          // no progress (failures are still reported)
  double kill_grace_s = 2;     // SIGTERM to SIGKILL
  std::string exe = "/proc/self/exe";
  std::string label = "regress";  // prefix of the progress lines
};

// Runs every job of `plan` without an entry in `results` (finished before: a resumed run).
// Returns true when a signal interrupted the run.
bool run_jobs(const Plan& plan, const std::string& run_dir, const RunnerOptions& options,
              std::map<std::string, Result>& results);

// Runs "tma-sim ARGS..." to completion with its output in `log` ("" discards it); returns the exit
// status, 128 + signal for a signal, -1 when it ran past timeout_s (it is killed).
int run_tool(const std::vector<std::string>& args, const std::string& log, double timeout_s,
             const std::string& exe = "/proc/self/exe");

// ---- the commands' common driver ----

// The most jobs at a time --jobs takes.
inline constexpr unsigned kMaxJobs = 1024;

struct DriveOptions {
  std::string command = "regress";  // regress | sweep (messages, resume hints)
  unsigned jobs = 0;                // 0: the number of CPUs
  std::string out = "runs";         // parent of the run folder
  std::string resume;               // run folder to resume ("" for a new run)
  std::string junit;                // extra copy of junit.xml
  std::string csv;                  // extra copy of sweep.csv
  std::optional<Shard> shard;
  bool dry_run = false;             // print the jobs, run nothing
  bool quiet = false;
};

// A new run (plan given) or a resumed one (options.resume): makes or locks the run folder, runs
// what is unfinished, merges coverage, writes the reports and prints the summary. Returns the
// exit status: 0 every job passed (or was skipped), 1 a failure, 2 bad input, 130 interrupted.
int drive(std::optional<Plan> plan, const DriveOptions& options);

// tma-sim regress-merge: the run folders under `dirs` (shards, or anything holding plan.json)
// into one report in out_dir. Returns the exit status as drive does.
int merge_runs(const std::vector<std::string>& dirs, const std::string& out_dir, const std::string& junit,
               const std::string& csv);

// Report entries of a run folder's plan and results (jobs without a result are "not run").
Report make_report(const Plan& plan, const std::string& run_dir, const std::map<std::string, Result>& results);

}  // namespace tma::regress
