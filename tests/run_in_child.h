// A timed run of a scenario in a child process. SystemC allows one elaboration per process and
// run_scenario elaborates a whole GPU, so a test that runs several scenarios runs each in a child
// (fork) that sends its summary numbers back through a pipe.
#pragma once

#include <boost/test/unit_test.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "tma/scenario/scenario.h"
#include "tma/scenario/scenario_runner.h"

namespace tma::test {

// The numbers a timed run reports (plain data: it crosses the pipe as bytes).
struct Result {
  bool ok = false;
  uint64_t cycles = 0, loads = 0, stores = 0, reductions = 0;
  uint64_t bytes_loaded = 0, bytes_delivered = 0, bytes_stored = 0, bytes_requested = 0;
  uint64_t scoreboard_checked = 0, scoreboard_mismatches = 0, invariant_checks = 0, invariant_violations = 0;
  uint64_t ctas = 0;                  // CTAs run, all SMs together
  uint64_t ctas_of_sm[4] = {0, 0, 0, 0};  // CTAs SMs 0-3 ran
};

// Runs `s` in a child process and sends back what `pick` takes from its summary: `T` is plain data
// with a `bool ok`, set once the run has finished (a run that throws comes back not ok). `launch`:
// the CTAs to run instead of the scenario's workload's (as a replayed trace's).
template <typename T, typename Pick>
T run_in_child_as(const Scenario& s, const ArchConfig& arch, Pick pick, const Launch* launch = nullptr) {
  int fd[2];
  BOOST_REQUIRE(pipe(fd) == 0);
  const pid_t pid = fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    T r;
    try {
      RunOptions opt;
      opt.progress = false;
      r = pick(run_scenario(s, arch, opt, launch));
      r.ok = true;
    } catch (...) {
      r.ok = false;
    }
    const ssize_t n = write(fd[1], &r, sizeof r);
    _exit(n == static_cast<ssize_t>(sizeof r) ? 0 : 1);
  }
  close(fd[1]);
  T r;
  size_t got = 0;
  while (got < sizeof r) {
    const ssize_t n = read(fd[0], reinterpret_cast<char*>(&r) + got, sizeof r - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  BOOST_REQUIRE(got == sizeof r);
  BOOST_REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  BOOST_REQUIRE(r.ok);
  return r;
}

inline Result run_in_child(const Scenario& s, const ArchConfig& arch) {
  return run_in_child_as<Result>(s, arch, [](const RunSummary& sum) {
    Result r;
    r.cycles = sum.cycles;
    r.loads = sum.loads;
    r.stores = sum.stores;
    r.reductions = sum.reductions;
    r.bytes_loaded = sum.bytes_loaded;
    r.bytes_delivered = sum.bytes_delivered;
    r.bytes_stored = sum.bytes_stored;
    r.bytes_requested = sum.bytes_requested;
    r.scoreboard_checked = sum.scoreboard_checked;
    r.scoreboard_mismatches = sum.scoreboard_mismatches;
    r.invariant_checks = sum.invariant_checks;
    r.invariant_violations = sum.invariant_violations;
    r.ctas = static_cast<uint64_t>(sum_stat(sum.stats, "", "ctas"));
    for (int sm = 0; sm < 4; ++sm)
      r.ctas_of_sm[sm] = static_cast<uint64_t>(sum_stat(sum.stats, "cta" + std::to_string(sm), "ctas"));
    return r;
  });
}

}  // namespace tma::test
