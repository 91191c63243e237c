// What the tools write for people and dashboards: JUnit counts, the sweep CSV, the stats JSON,
// the VCD writer, progress lines (docs/regressions.md, docs/sweeps.md, docs/scenarios.md).
#define BOOST_TEST_MODULE outputs
#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tma/regress/regress_report.h"
#include "tma/scenario/progress.h"
#include "tma/scenario/run_config.h"
#include "tma/core/stats.h"

// Linked with tma_regress, so with libsystemc, which wants an sc_main (Boost.Test provides main).
extern "C" int sc_main(int, char**) { return 0; }

using namespace tma::regress;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

ReportEntry entry(const std::string& id, std::optional<Status> status) {
  ReportEntry e;
  e.job.id = id;
  e.job.kind = "selftest";
  e.run_dir = "/runs/r";
  if (status) {
    Result r;
    r.id = id;
    r.status = *status;
    r.exit_code = *status == Status::pass ? 0 : 1;
    if (*status == Status::fail) r.signature = r.first_line = "mismatch";
    e.result = r;
  }
  return e;
}

}  // namespace

// An interrupted run must not look green: the jobs it never ran are errors, not skipped.
BOOST_AUTO_TEST_CASE(junit_counts_jobs_not_run_as_errors) {
  Report r;
  r.mode = "regress";
  r.name = "nightly";
  r.interrupted = true;
  r.entries = {entry("a", Status::pass), entry("b", Status::fail), entry("c", Status::skipped),
               entry("d", std::nullopt), entry("e", Status::not_run)};
  r.entries[2].result->reason = "no random command";
  const std::string x = junit_xml(r);
  BOOST_TEST(contains(x, "tests=\"5\" failures=\"1\" errors=\"2\" skipped=\"1\""));
  BOOST_TEST(contains(x, "<error type=\"not_run\" message=\"not run (the run was interrupted)\"/>"));
  BOOST_TEST(!contains(x, "<skipped message=\"not run"));
  BOOST_TEST(contains(x, "<skipped message=\"no random command\"/>"));
}

// A parameter named like a statistic (a sweep over `sms`) must not give the CSV two `sms` columns:
// csv.DictReader and pandas keep only one of them, silently.
BOOST_AUTO_TEST_CASE(sweep_csv_has_no_duplicate_column) {
  Report r;
  r.mode = "sweep";
  r.name = "s";
  r.param_names = {"promotion", "sms"};
  for (const char* id : {"0-none-16", "1-none-132"}) {
    ReportEntry e = entry(id, Status::pass);
    e.job.params = {{"promotion", "none"}, {"sms", id[0] == '0' ? "16" : "132"}};
    e.result->summary = {{"scenario", "stream"}, {"sms", id[0] == '0' ? "16" : "132"}, {"cycles", "1000"}};
    r.entries.push_back(e);
  }
  const std::string csv = sweep_csv(r);
  const std::string header = csv.substr(0, csv.find('\n'));
  std::vector<std::string> cols;
  for (size_t at = 0; at <= header.size();) {
    const size_t comma = std::min(header.find(',', at), header.size());
    cols.push_back(header.substr(at, comma - at));
    at = comma + 1;
  }
  std::set<std::string> unique(cols.begin(), cols.end());
  BOOST_TEST(unique.size() == cols.size(), header);
  BOOST_TEST(header == "point,promotion,sms,status,scenario,summary.sms,cycles");
  BOOST_TEST(contains(csv, "\n0-none-16,none,16,pass,stream,16,1000\n"));
}

// The stats' "config" writes a scenario's YAML as JSON with the types YAML gives its scalars.
BOOST_AUTO_TEST_CASE(yaml_to_json_keeps_the_types_of_scalars) {
  const YAML::Node n = YAML::Load(
      "{name: \"123\", sms: 16, address: 0x100000000, off: -3, f: 2.5, on: true, none: ~, box: [64, 128], "
      "text: 0x10 bytes, e: 1e3}");
  BOOST_TEST(tma::yaml_to_json(n) ==
             "{\"name\": \"123\", \"sms\": 16, \"address\": 4294967296, \"off\": -3, \"f\": 2.5, \"on\": true, "
             "\"none\": null, \"box\": [64, 128], \"text\": \"0x10 bytes\", \"e\": 1000}");
}

// The VCD's L2 and DRAM occupancies: requests arrive timed ahead and out of order.
BOOST_AUTO_TEST_CASE(occupancy_counts_requests_in_flight) {
  tma::OccupancyLog log;
  log.add(10, 20);
  log.add(5, 15);
  log.add(30, 30);  // zero length: never in flight
  BOOST_TEST(log.in_flight(4) == 0u);
  BOOST_TEST(log.in_flight(5) == 1u);
  BOOST_TEST(log.in_flight(12) == 2u);
  log.add(8, 25);   // news of a request begun before the last query: in flight from now on
  log.add(1, 11);   // ...and one that ended before it: never seen
  BOOST_TEST(log.in_flight(13) == 3u);
  BOOST_TEST(log.in_flight(15) == 2u);
  BOOST_TEST(log.in_flight(20) == 1u);
  BOOST_TEST(log.in_flight(30) == 0u);
}

// Progress lines: percent done and the time left at the rate of the work done in this session.
BOOST_AUTO_TEST_CASE(progress_text_gives_percent_and_time_left) {
  BOOST_TEST(tma::progress_text(25, 100, 0, 10) == "25%, about 0:30 left");
  BOOST_TEST(tma::progress_text(60, 100, 50, 20) == "60%, about 1:20 left");  // 50 were done before (a resume)
  BOOST_TEST(tma::progress_text(50, 100, 50, 20) == "50%");                   // no rate yet
  BOOST_TEST(tma::progress_text(100, 100, 0, 20) == "100%");
  BOOST_TEST(tma::progress_text(1, 3, 0, 1200) == "33%, about 40:00 left");
  BOOST_TEST(tma::clock_text(3725) == "1:02:05");
}
