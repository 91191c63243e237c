#include "tma/regress/regress_runner.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tma/config/cli_args.h"
#include "tma/scenario/progress.h"
#include "tma/config/yaml_reader.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace tma::regress {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// Installs the stop handlers for the life of the object.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~StopSignals() {
    for (size_t i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3];
};

void write_all(int fd, const std::string& s) {
  const char* p = s.data();
  size_t left = s.size();
  while (left) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void append_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  write_all(fd, text);
  ::close(fd);
}

// Starts exe with argv[0] = display name, in its own process group, output to `log` (appended
// after `header`; "" means /dev/null). Returns the pid, or -1 (errno set).
pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& log,
            const std::string& header) {
  const int out = log.empty() ? ::open("/dev/null", O_WRONLY | O_CLOEXEC)
                              : ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return -1;
  write_all(out, header);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::vector<std::string> argv_s;
  argv_s.push_back(self_exe());  // argv[0]: the real path (tma-sim finds configs/ from it)
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    ::setpgid(0, 0);
    // A runner killed outright (SIGKILL, the OOM killer) takes its jobs along: no orphans that
    // keep writing to a log a resumed run rewrites.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGHUP, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (in >= 0) ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execv(exe.c_str(), argv.data());
    static const char msg[] = "# regress: exec failed\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  const int e = errno;
  if (pid > 0) ::setpgid(pid, pid);  // also here: no race with the kill of a group
  ::close(out);
  if (in >= 0) ::close(in);
  errno = e;
  return pid;
}

std::string hostname() {
  char b[256] = {0};
  if (::gethostname(b, sizeof b - 1) != 0) return "";
  return b;
}

std::string compact_time() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y%m%d-%H%M%S", &tm);
  return b;
}

std::string abs_dir(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

// ---- progress on stderr ----
// Percent done and the time left are by jobs: the jobs done in this session give the rate (a
// resumed run's earlier results do not).
class Progress {
 public:
  Progress(size_t total, size_t done_at_start, bool quiet, std::string label)
      : total_(total), done_at_start_(done_at_start), quiet_(quiet), tty_(::isatty(2)), start_(Clock::now()),
        last_(start_), label_(std::move(label)), plain_every_(progress_interval(5)) {}

  void update(size_t done, size_t passed, size_t failed, size_t skipped, size_t running, bool force = false) {
    if (quiet_) return;
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    if (tty_) {
      if (!force && now - last_ < std::chrono::milliseconds(100)) return;
      last_ = now;
      const int width = 30;
      const int fill = total_ ? static_cast<int>(width * done / total_) : width;
      std::string bar(static_cast<size_t>(fill), '#');
      bar += std::string(static_cast<size_t>(width - fill), '.');
      char text[512];
      std::snprintf(text, sizeof text, "[%s] %zu/%zu %s  %zu passed  %zu failed%s  %zu running  %s", bar.c_str(), done,
                    total_, done_text(done, elapsed).c_str(), passed, failed,
                    skipped ? ("  " + std::to_string(skipped) + " skipped").c_str() : "", running,
                    clock_text(elapsed).c_str());
      if (drawn_ && text == last_text_) return;  // nothing new to show
      last_text_ = text;
      std::fprintf(stderr, "\r\033[K%s", text);
      std::fflush(stderr);
      drawn_ = true;
      return;
    }
    // Not a terminal: a plain line at each tenth of the jobs, at most every 5 s (TMA_PROGRESS_INTERVAL),
    // or after 60 s.
    const size_t tenth = total_ ? done * 10 / total_ : 10;
    const bool step = tenth > last_tenth_ && std::chrono::duration<double>(now - last_).count() >= plain_every_;
    const bool slow = now - last_ > std::chrono::seconds(60) && done != last_done_;
    if (!(force || step || slow)) return;
    if (force && done == last_done_ && printed_) return;
    last_ = now;
    last_tenth_ = tenth;
    last_done_ = done;
    printed_ = true;
    std::fprintf(stderr, "%s: %zu/%zu done, %s, %zu passed, %zu failed%s, %zu running (%s elapsed)\n", label_.c_str(),
                 done, total_, done_text(done, elapsed).c_str(), passed, failed,
                 skipped ? (", " + std::to_string(skipped) + " skipped").c_str() : "", running, clock_text(elapsed).c_str());
    std::fflush(stderr);
  }

  void message(const std::string& line) {
    if (tty_ && drawn_) std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
    if (tty_) {  // redraw the bar now
      last_ = Clock::time_point{};
      last_text_.clear();
    }
  }

  void finish() {
    if (tty_ && drawn_) std::fprintf(stderr, "\n");
  }

 private:
  std::string done_text(size_t done, double elapsed) const {
    return progress_text(static_cast<double>(done), static_cast<double>(total_), static_cast<double>(done_at_start_),
                         elapsed);
  }
  size_t total_, done_at_start_;
  bool quiet_, tty_;
  Clock::time_point start_, last_;
  size_t last_tenth_ = 0, last_done_ = static_cast<size_t>(-1);
  bool drawn_ = false, printed_ = false;
  std::string last_text_;
  std::string label_;
  double plain_every_;  // seconds between plain lines at least
};

struct Running {
  const Job* job = nullptr;
  pid_t pid = -1;
  Clock::time_point start, deadline, kill_at;
  bool timed_out = false, stopped = false, term_sent = false, kill_sent = false;
  std::string log_rel;
};

void terminate(Running& r, double grace) {
  if (r.term_sent) return;
  ::kill(-r.pid, SIGTERM);
  ::kill(r.pid, SIGTERM);
  r.term_sent = true;
  r.kill_at = Clock::now() + std::chrono::milliseconds(static_cast<long>(grace * 1000));
}

Result finish_job(const Plan& plan, const std::string& run_dir, const Running& r, int wstatus) {
  const Job& job = *r.job;
  Result res;
  res.id = job.id;
  res.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
  res.log = r.log_rel;
  res.finished = utc_timestamp();
  res.host = hostname();
  if (WIFSIGNALED(wstatus)) {
    res.signal = WTERMSIG(wstatus);
    res.status = r.timed_out ? Status::timeout : Status::crash;
  } else {
    res.exit_code = WEXITSTATUS(wstatus);
    res.status = r.timed_out ? Status::timeout
                 : res.exit_code == 0 ? Status::pass
                 : res.exit_code == 1 ? Status::fail
                                      : Status::error;
  }
  if (r.timed_out)
    res.reason = "ran past its timeout of " + format_seconds(job.timeout_s) + " s and was killed";
  const std::string log_abs = (fs::path(run_dir) / r.log_rel).string();
  std::string text;
  try {
    text = read_file(log_abs);
  } catch (const std::exception&) {
  }
  if (text.size() > (8u << 20)) text.resize(8u << 20);
  if (res.status == Status::pass && job.kind == "sweep") {
    res.summary = read_stats_summary(expand_run_dir(std::string(kRunDir) + "/" + job.stats, run_dir));
    if (res.summary.empty()) {
      res.status = Status::error;
      res.first_line = "no summary.* statistics in " + job.stats;
    }
  }
  if (is_failure(res.status) && res.first_line.empty())
    res.first_line = first_failing_line(text, res.status == Status::fail || res.status == Status::error);
  res.signature = make_signature(res.status, res.signal, res.first_line);
  std::string footer = "# regress: " + std::string(status_name(res.status));
  if (res.signal) footer += " (" + signal_name(res.signal) + ")";
  else footer += " (exit " + std::to_string(res.exit_code) + ")";
  footer += " after " + format_seconds(res.seconds) + " s\n";
  append_file(log_abs, footer);
  (void)plan;
  return res;
}

void record(const std::string& run_dir, const Result& r, std::map<std::string, Result>& results) {
  write_file_atomic(result_path(run_dir, r.id), result_to_json(r));
  results[r.id] = r;
}

}  // namespace

int run_tool(const std::vector<std::string>& args, const std::string& log, double timeout_s, const std::string& exe) {
  const pid_t pid = spawn(exe, args, log, "");
  if (pid < 0) return 127;
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  int st = 0;
  while (true) {
    const pid_t w = ::waitpid(pid, &st, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return 127;
    if (Clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

bool run_jobs(const Plan& plan, const std::string& run_dir, const RunnerOptions& options,
              std::map<std::string, Result>& results) {
  for (const char* sub : {"results", "logs"}) fs::create_directories(fs::path(run_dir) / sub);
  for (const Job& j : plan.jobs) {
    if (!j.stats.empty()) fs::create_directories((fs::path(run_dir) / j.stats).parent_path());
    if (!j.coverage.empty()) fs::create_directories((fs::path(run_dir) / j.coverage).parent_path());
  }
  std::vector<const Job*> pending;
  for (const Job& j : plan.jobs)
    if (!results.count(j.id)) pending.push_back(&j);

  size_t passed = 0, failed = 0, skipped = 0, done = 0;
  auto tally = [&](const Result& r) {
    ++done;
    if (r.status == Status::pass) ++passed;
    else if (r.status == Status::skipped) ++skipped;
    else if (is_failure(r.status)) ++failed;
  };
  for (const Job& j : plan.jobs)
    if (auto it = results.find(j.id); it != results.end()) tally(it->second);
  Progress progress(plan.jobs.size(), done, options.quiet, options.label);

  // Generators need `tma-sim random`; a binary without it skips them (it says so).
  if (std::any_of(pending.begin(), pending.end(), [](const Job* j) { return j->kind == "random"; })) {
    if (run_tool({"random", "--help"}, "", 30, options.exe) != 0) {
      progress.message(options.label + ": this tma-sim has no 'random' command; its generator jobs are skipped");
      std::vector<const Job*> rest;
      for (const Job* j : pending) {
        if (j->kind != "random") {
          rest.push_back(j);
          continue;
        }
        Result r;
        r.id = j->id;
        r.status = Status::skipped;
        r.reason = "this tma-sim has no 'random' command (tma-sim random --help failed)";
        r.finished = utc_timestamp();
        r.host = hostname();
        record(run_dir, r, results);
        tally(r);
      }
      pending = rest;
    }
  }

  StopSignals signals;
  const unsigned slots = std::max(1u, options.jobs);
  std::vector<Running> running;
  size_t next = 0;
  bool stopping = false;
  while (next < pending.size() || !running.empty()) {
    if (g_stop_signal && !stopping) {
      stopping = true;
      progress.message(options.label + ": " + signal_name(g_stop_signal) + ": no more jobs start; ending the " +
                       std::to_string(running.size()) + " running (they stay unfinished)");
      for (Running& r : running) {
        r.stopped = true;
        terminate(r, options.kill_grace_s);
      }
    }
    if (stopping && next < pending.size()) next = pending.size();
    while (!stopping && running.size() < slots && next < pending.size()) {
      const Job* j = pending[next++];
      Running r;
      r.job = j;
      r.log_rel = "logs/" + j->id + ".log";
      std::vector<std::string> args;
      for (const std::string& a : j->args) args.push_back(expand_run_dir(a, run_dir));
      const std::string header = "# regress: job " + j->id + "\n# regress: command: " +
                                 shell_join([&] {
                                   std::vector<std::string> v{plan.tma_sim};
                                   v.insert(v.end(), args.begin(), args.end());
                                   return v;
                                 }()) +
                                 "\n";
      r.start = Clock::now();
      r.deadline = r.start + std::chrono::milliseconds(static_cast<long>(j->timeout_s * 1000));
      r.pid = spawn(options.exe, args, (fs::path(run_dir) / r.log_rel).string(), header);
      if (r.pid < 0) {
        Result res;
        res.id = j->id;
        res.status = Status::error;
        res.first_line = std::string("cannot start the job: ") + std::strerror(errno);
        res.signature = make_signature(res.status, 0, res.first_line);
        res.log = r.log_rel;
        res.finished = utc_timestamp();
        res.host = hostname();
        record(run_dir, res, results);
        tally(res);
        continue;
      }
      running.push_back(r);
    }
    // Reap.
    for (size_t i = 0; i < running.size();) {
      Running& r = running[i];
      int st = 0;
      const pid_t w = ::waitpid(r.pid, &st, WNOHANG);
      if (w != r.pid) {
        ++i;
        continue;
      }
      // Ended by our stop signal, or by the signal that stops us (Slurm signals every process
      // of a job): unfinished (no result; --resume runs it), whether the signal killed it or it
      // stopped cleanly and said so with exit 130 (tma-sim run writes its files first). A job
      // that exited on its own meanwhile did finish.
      const bool ended_by_stop = (r.stopped || g_stop_signal) &&
                                 (WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) == 130));
      if (!ended_by_stop) {
        Result res = finish_job(plan, run_dir, r, st);
        record(run_dir, res, results);
        tally(res);
        // The line as the job wrote it: the signature has its numbers bucketed (#), for grouping only.
        if (is_failure(res.status))
          progress.message("FAIL " + res.id + " (" + status_name(res.status) +
                           "): " + (res.first_line.empty() ? res.signature : res.first_line));
      } else {
        append_file((fs::path(run_dir) / r.log_rel).string(), "# regress: stopped (unfinished)\n");
      }
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    }
    // Timeouts and kills.
    const auto now = Clock::now();
    for (Running& r : running) {
      if (!r.term_sent && now > r.deadline) {
        r.timed_out = true;
        terminate(r, options.kill_grace_s);
      } else if (r.term_sent && !r.kill_sent && now > r.kill_at) {
        ::kill(-r.pid, SIGKILL);
        ::kill(r.pid, SIGKILL);
        r.kill_sent = true;
      }
    }
    progress.update(done, passed, failed, skipped, running.size());
    if (!running.empty() || next < pending.size()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  progress.update(done, passed, failed, skipped, 0, true);
  progress.finish();
  return stopping;
}

// ---- driver ----

namespace {

void print_plan(const Plan& p, const std::string& run_dir, const std::map<std::string, Result>& results) {
  std::printf("%s %s: %zu of %zu jobs (shard %u/%u)\n", p.mode.c_str(), p.name.c_str(), p.jobs.size(),
              p.all_ids.size(), p.shard.index, p.shard.count);
  for (const Job& j : p.jobs) {
    if (results.count(j.id)) continue;
    std::string params;
    for (const auto& [k, v] : j.params) params += " " + k + "=" + v;
    std::printf("%s  [%s, timeout %s s%s]\n  %s\n", j.id.c_str(), j.kind.c_str(), format_seconds(j.timeout_s).c_str(),
                params.c_str(), replay_command(p, j, run_dir.empty() ? std::string("RUN_DIR") : run_dir).c_str());
  }
}

// Merges coverage/<id>.json files into coverage.json with `tma-sim coverage merge`.
void merge_coverage(const std::vector<std::string>& files, const std::string& out_dir, const std::string& log) {
  if (files.empty()) return;
  std::vector<std::string> args{"coverage", "merge", (fs::path(out_dir) / "coverage.json").string()};
  args.insert(args.end(), files.begin(), files.end());
  const int rc = run_tool(args, log, 600);
  if (rc == 0)
    std::fprintf(stderr, "regress: coverage of %zu generator jobs merged into %s/coverage.json\n", files.size(),
                 out_dir.c_str());
  else
    std::fprintf(stderr, "regress: merging coverage failed (exit %d, see %s)\n", rc, log.c_str());
}

std::vector<std::string> coverage_files(const Plan& p, const std::string& run_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const Job& j : p.jobs) {
    if (j.coverage.empty()) continue;
    const std::string f = (fs::path(run_dir) / j.coverage).string();
    if (fs::exists(f, ec)) out.push_back(f);
  }
  return out;
}

}  // namespace

Report make_report(const Plan& plan, const std::string& run_dir, const std::map<std::string, Result>& results) {
  Report r;
  r.mode = plan.mode;
  r.name = plan.name;
  r.source = plan.source;
  r.shard = std::to_string(plan.shard.index) + "/" + std::to_string(plan.shard.count);
  r.seed = plan.seed;
  r.param_names = plan.param_names;
  r.location = run_dir;
  for (const Job& j : plan.jobs) {
    ReportEntry e{j, std::nullopt, run_dir, plan.tma_sim};
    if (auto it = results.find(j.id); it != results.end()) e.result = it->second;
    r.entries.push_back(std::move(e));
  }
  std::sort(r.entries.begin(), r.entries.end(),
            [](const ReportEntry& a, const ReportEntry& b) { return a.job.id < b.job.id; });
  return r;
}

int drive(std::optional<Plan> plan, const DriveOptions& o) {
  const std::string who = "tma-sim " + o.command;
  Plan p;
  std::string run_dir;
  try {
    if (!o.resume.empty()) {
      run_dir = abs_dir(o.resume);
      p = plan_from_json((fs::path(run_dir) / "plan.json").string());
    } else {
      p = std::move(*plan);
      if (o.shard) apply_shard(p, *o.shard);
    }
  } catch (const std::exception& e) {
    cli::print_error(e.what());
    return 2;
  }
  if (o.dry_run) {
    std::map<std::string, Result> results;
    if (!run_dir.empty()) results = load_results(run_dir);
    print_plan(p, run_dir, results);
    return 0;
  }
  int lock_fd = -1;
  try {
    if (run_dir.empty()) {
      std::string base = file_safe(p.name) + "-" + compact_time();
      if (p.shard.count > 1) base += "-shard" + std::to_string(p.shard.index) + "of" + std::to_string(p.shard.count);
      run_dir = abs_dir(make_unique_dir(o.out, base));
      for (const auto& [rel, text] : p.arch_files) {
        fs::create_directories((fs::path(run_dir) / rel).parent_path());
        write_file_atomic((fs::path(run_dir) / rel).string(), text);
      }
      write_file_atomic((fs::path(run_dir) / "plan.json").string(), plan_to_json(p));
    }
    lock_fd = ::open((fs::path(run_dir) / ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0)
      throw std::runtime_error("the run folder " + run_dir + " is in use by another tma-sim (its .lock is held)");
  } catch (const std::exception& e) {
    cli::print_error(e.what());
    return 2;
  }
  std::map<std::string, Result> results = load_results(run_dir);
  {
    std::set<std::string> ids;
    for (const Job& j : p.jobs) ids.insert(j.id);
    for (auto it = results.begin(); it != results.end();) it = ids.count(it->first) ? std::next(it) : results.erase(it);
  }
  const unsigned slots = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  const size_t todo = p.jobs.size() - results.size();
  std::fprintf(stderr, "%s: %s %s, %zu job%s%s (shard %u/%u), %u at a time -> %s\n", who.c_str(),
               p.mode == "sweep" ? "sweep" : "list", p.name.c_str(), todo, todo == 1 ? "" : "s",
               results.empty() ? "" : (" left of " + std::to_string(p.jobs.size())).c_str(), p.shard.index,
               p.shard.count, slots, run_dir.c_str());
  RunnerOptions ro;
  ro.jobs = slots;
  ro.quiet = o.quiet;
  ro.label = o.command;
  bool interrupted = false;
  try {
    interrupted = run_jobs(p, run_dir, ro, results);
  } catch (const std::exception& e) {
    cli::print_error(e.what());
    interrupted = true;
  }
  if (!interrupted) merge_coverage(coverage_files(p, run_dir), run_dir, (fs::path(run_dir) / "logs" / "_coverage-merge.log").string());
  Report rep = make_report(p, run_dir, results);
  rep.interrupted = interrupted;
  try {
    write_reports(rep, run_dir, o.junit, o.csv);
  } catch (const std::exception& e) {
    cli::print_error(e.what());
    return 2;
  }
  print_summary(stdout, rep, run_dir);
  std::fflush(stdout);
  ::close(lock_fd);
  return interrupted ? 130 : exit_status(rep);
}

int merge_runs(const std::vector<std::string>& dirs, const std::string& out_dir, const std::string& junit,
               const std::string& csv) {
  std::vector<std::string> run_dirs;
  std::error_code ec;
  for (const std::string& d : dirs) {
    if (fs::exists(fs::path(d) / "plan.json", ec)) {
      run_dirs.push_back(abs_dir(d));
      continue;
    }
    if (!fs::is_directory(d, ec)) {
      cli::print_error("regress-merge: no such folder: " + d);
      return 2;
    }
    for (auto it = fs::recursive_directory_iterator(d, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it.depth() > 4) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->path().filename() == "plan.json") run_dirs.push_back(abs_dir(it->path().parent_path().string()));
    }
  }
  std::sort(run_dirs.begin(), run_dirs.end());
  run_dirs.erase(std::unique(run_dirs.begin(), run_dirs.end()), run_dirs.end());
  if (run_dirs.empty()) {
    cli::print_error("regress-merge: no run folders (with plan.json) under the folders given");
    return 2;
  }
  Report rep;
  std::map<std::string, ReportEntry> entries;
  std::set<std::string> all_ids;
  std::set<uint32_t> shards;
  uint32_t shard_count = 0;
  std::vector<std::string> cov;
  for (const std::string& dir : run_dirs) {
    Plan p;
    try {
      p = plan_from_json((fs::path(dir) / "plan.json").string());
    } catch (const std::exception& e) {
      cli::print_error(std::string("regress-merge: ") + e.what());
      return 2;
    }
    if (rep.mode.empty()) {
      rep.mode = p.mode;
      rep.name = p.name;
      rep.source = p.source;
      rep.seed = p.seed;
      rep.param_names = p.param_names;
      shard_count = p.shard.count;
    } else if (p.mode != rep.mode || p.name != rep.name || p.seed != rep.seed || p.param_names != rep.param_names ||
               p.shard.count != shard_count) {
      cli::print_error("regress-merge: " + dir + " is a different run (" + p.mode + " " + p.name + ", shard " +
                       std::to_string(p.shard.index) + "/" + std::to_string(p.shard.count) + ") from the first (" +
                       rep.mode + " " + rep.name + ", " + std::to_string(shard_count) + " shards)");
      return 2;
    }
    shards.insert(p.shard.index);
    all_ids.insert(p.all_ids.begin(), p.all_ids.end());
    const std::map<std::string, Result> results = load_results(dir);
    for (const Job& j : p.jobs) {
      ReportEntry e{j, std::nullopt, dir, p.tma_sim};
      if (auto it = results.find(j.id); it != results.end()) e.result = it->second;
      auto [at, fresh] = entries.emplace(j.id, e);
      if (!fresh) {
        // The same job in two folders (a shard run twice): a finished result wins, then the later one.
        ReportEntry& old = at->second;
        if (!old.result || (e.result && e.result->finished > old.result->finished)) old = e;
      }
    }
    const std::vector<std::string> c = coverage_files(p, dir);
    cov.insert(cov.end(), c.begin(), c.end());
  }
  for (const std::string& id : all_ids)
    if (!entries.count(id)) {
      Job j;
      j.id = id;
      entries.emplace(id, ReportEntry{j, std::nullopt, "", ""});
    }
  for (auto& [id, e] : entries) rep.entries.push_back(std::move(e));
  std::string missing;
  for (uint32_t k = 0; k < shard_count; ++k)
    if (!shards.count(k)) missing += (missing.empty() ? "" : ",") + std::to_string(k);
  rep.shard = "merged: " + std::to_string(shards.size()) + " of " + std::to_string(shard_count) + " shards" +
              (missing.empty() ? "" : " (missing: " + missing + ")");
  const std::string out = abs_dir(out_dir);
  rep.location = out;
  try {
    write_reports(rep, out, junit, csv);
  } catch (const std::exception& e) {
    cli::print_error(std::string("regress-merge: ") + e.what());
    return 2;
  }
  std::fprintf(stderr, "tma-sim regress-merge: %zu run folders, %s\n", run_dirs.size(), rep.shard.c_str());
  merge_coverage(cov, out, (fs::path(out) / "coverage-merge.log").string());
  print_summary(stdout, rep, out);
  return exit_status(rep);
}

}  // namespace tma::regress
