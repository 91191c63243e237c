// What a regression or a sweep runs: the job list, each job a complete tma-sim command line.
//
//   configs/regressions/*.yaml  named lists of golden-case folders, scenarios (with --set
//                               overrides), constrained-random generators (seed, reseed count)
//   configs/sweeps/*.yaml       a base scenario and parameters whose cross product runs
//
// Both turn into a Plan (docs/regressions.md, docs/sweeps.md): jobs sorted by id, sharded
// deterministically, saved as plan.json in the run folder so that a run can be resumed and
// shards merged. Every error in a file names the file, the line and the field (YamlError).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tma/regress/regress_util.h"

namespace tma::regress {

// Stands for the run folder in job arguments; replaced when the job starts (plan.json stays
// valid wherever the folder moves).
inline constexpr const char* kRunDir = "@RUN@";

struct Job {
  std::string id;                  // unique in the list; file-safe; outputs are sorted by it
  std::string kind;                // golden | scenario | random | selftest | sweep
  std::string source;              // "file:line" of the entry (or sweep point) it comes from
  std::vector<std::string> args;   // tma-sim arguments (after the executable)
  std::vector<std::string> replay; // the same without per-run output options (--stats, --coverage)
  double timeout_s = 600;
  std::string arch;                // architecture file (absolute); "" when the job takes none
  std::vector<std::string> arch_set;
  std::string resolved_arch;       // the architecture after arch_set, run-folder relative
  std::optional<uint64_t> seed;    // random generators
  std::vector<std::pair<std::string, std::string>> params;  // sweep point: parameter -> label
  std::string stats;               // sweep point: stats JSON, run-folder relative
  std::string coverage;            // random generator: coverage JSON, run-folder relative
};

struct Plan {
  std::string mode;                // "regress" or "sweep"
  std::string source;              // the regression or sweep file (absolute)
  std::string name;                // the list run (regress) or the sweep's name
  std::optional<uint64_t> seed;    // regress --seed
  Shard shard;
  std::string tma_sim;             // executable named in replay commands
  std::string created;             // UTC time the plan was made
  std::vector<std::string> all_ids;      // every job of the list or sweep, before sharding
  std::vector<std::string> param_names;  // sweep parameters, in file order
  std::vector<Job> jobs;                 // this shard's jobs, sorted by id
  std::map<std::string, std::string> arch_files;  // run-folder-relative path -> YAML text
};

// Reads a regression file and resolves one list (its includes too) into jobs. `list` empty:
// the file's first list. `seed`: regress --seed (each generator's base seed derived from it).
// Throws YamlError (file, line, field).
Plan load_regression(const std::string& path, const std::string& list, std::optional<uint64_t> seed);
// The names of the lists in a regression file, in file order.
std::vector<std::string> regression_lists(const std::string& path);

// Reads a sweep file: one job per point of the parameters' cross product. Throws YamlError.
Plan load_sweep(const std::string& path);

// Keeps the jobs of shard K/N (by position in the id-sorted list of all jobs).
void apply_shard(Plan& plan, const Shard& shard);

// plan.json: written into the run folder, read back by --resume and regress-merge.
std::string plan_to_json(const Plan& plan);
Plan plan_from_json(const std::string& path);  // throws std::runtime_error / YamlError

// `arg` with kRunDir replaced by run_dir.
std::string expand_run_dir(const std::string& arg, const std::string& run_dir);
// The command that replays a job: executable, then its replay arguments, shell-quoted.
std::string replay_command(const Plan& plan, const Job& job, const std::string& run_dir);

}  // namespace tma::regress
