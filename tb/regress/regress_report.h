// Results of regression and sweep jobs, and the reports made from them: results/<id>.json per
// job, summary.md, summary.csv, failures.csv (grouped by signature), junit.xml, sweep.csv.
// Everything is sorted by job id, so a report does not depend on the order jobs finished in.
#pragma once

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tma/regress/regress_plan.h"

namespace tma::regress {

enum class Status { pass, fail, error, crash, timeout, skipped, not_run };

const char* status_name(Status s);
std::optional<Status> parse_status(const std::string& name);
// fail (exit 1), error (other exit codes), crash (a signal), timeout (killed)
bool is_failure(Status s);

struct Result {
  std::string id;
  Status status = Status::not_run;
  int exit_code = -1;         // when the job exited
  int signal = 0;             // when a signal ended it
  double seconds = 0;
  std::string first_line;     // the first failing line of its log
  std::string signature;      // status and first_line with numbers and addresses normalised
  std::string reason;         // why it timed out or was skipped
  std::string log;            // run-folder relative
  std::string finished;       // UTC
  std::string host;
  std::vector<std::pair<std::string, std::string>> summary;  // sweep points: the summary.* statistics
};

std::string result_to_json(const Result& r);
Result result_from_json(const std::string& path);  // throws std::runtime_error
// Every results/<id>.json of a run folder, by id (a malformed one is reported on stderr and left out).
std::map<std::string, Result> load_results(const std::string& run_dir);
std::string result_path(const std::string& run_dir, const std::string& id);

// ---- failure signatures ----
// The first line of a job's output that says what went wrong: a line with a failure word
// (mismatch, fail, error, expected, abort, assert, violation, exception...) that is not a count
// of them ("3 mismatches", "0 failed"), else one that is, else (when `fallback_last`) the last line.
// Lines starting with "# regress:" (the runner's own) are skipped.
std::string first_failing_line(const std::string& log, bool fallback_last = true);
// Hex numbers become 0x#, other digit runs #, absolute paths lose their folders, spaces collapse.
std::string normalise(const std::string& line);
std::string make_signature(Status s, int signal, const std::string& first_line);
std::string signal_name(int sig);  // "SIGSEGV"

// The "summary.*" fields of a stats JSON written by tma-sim run --stats, in file order, without
// the "summary." prefix.
std::vector<std::pair<std::string, std::string>> read_stats_summary(const std::string& path);

// ---- reports ----
struct ReportEntry {
  Job job;
  std::optional<Result> result;  // none: not run (interrupted, or its shard is missing)
  std::string run_dir;           // the run folder it ran in (logs, resolved architectures)
  std::string tma_sim;           // executable for its replay command
};

struct Report {
  std::string mode;         // regress | sweep
  std::string name;         // list or sweep name
  std::string source;       // regression or sweep file
  std::string shard;        // "0/1", or "merged from 3 shards"
  std::optional<uint64_t> seed;
  std::vector<std::string> param_names;
  std::vector<ReportEntry> entries;  // sorted by id
  bool interrupted = false;
  std::string location;     // run folder or merge folder, for the reader
};

struct Counts {
  size_t total = 0, passed = 0, failed = 0, skipped = 0, not_run = 0;
  double seconds = 0;  // job time, summed
};
Counts count(const Report& r);

std::string replay_of(const ReportEntry& e);
std::string junit_xml(const Report& r);
std::string summary_markdown(const Report& r);
std::string summary_csv(const Report& r);
std::string failures_csv(const Report& r);
std::string sweep_csv(const Report& r);  // one row per point: parameters, status, every summary statistic

// Writes summary.md, summary.csv, failures.csv, junit.xml (and sweep.csv for sweeps) into
// out_dir, each atomically; also junit_path and csv_path (sweep.csv) when given.
void write_reports(const Report& r, const std::string& out_dir, const std::string& junit_path = "",
                   const std::string& csv_path = "");
// The end of a run on the console: each failure with its replay command, the signature table,
// where the reports are, and "N passed, M failed[, K skipped][, U not run]".
void print_summary(std::FILE* out, const Report& r, const std::string& out_dir);
// 0 all passed or skipped, 1 a failure or a job not run.
int exit_status(const Report& r);

}  // namespace tma::regress
