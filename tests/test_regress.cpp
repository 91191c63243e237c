// The regression runner's pure parts: seeds, shards, quoting, failure signatures, regression and
// sweep files (errors with file, line and field), plan and result files, reports.
#define BOOST_TEST_MODULE regress
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <unistd.h>

#include "tma/config/arch_config_yaml.h"
#include "tma/config/paths.h"
#include "tma/regress/regress_plan.h"
#include "tma/regress/regress_report.h"
#include "tma/regress/regress_runner.h"
#include "tma/regress/regress_util.h"
#include "tma/config/yaml_reader.h"

// Linked with tma_regress, so with libsystemc, which wants an sc_main (the ASan build keeps the
// library; Boost.Test provides main).
extern "C" int sc_main(int, char**) { return 0; }

namespace fs = std::filesystem;
using namespace tma::regress;

namespace {

const std::string kRoot = TMA_SOURCE_DIR;

// Relative project paths (a scenario's arch: configs/arch/h100.yaml) resolve from the source tree,
// wherever the test runs.
struct ProjectPaths {
  ProjectPaths() { tma::set_executable_path(kRoot + "/tests/test_regress"); }
};
BOOST_TEST_GLOBAL_FIXTURE(ProjectPaths);

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("test_regress_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

// The YamlError a regression file gives, or "" when it loads.
std::string regression_error(const std::string& file, const std::string& list = "") {
  try {
    load_regression(file, list, std::nullopt);
  } catch (const tma::YamlError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const Job& job(const Plan& p, const std::string& id) {
  for (const Job& j : p.jobs)
    if (j.id == id) return j;
  BOOST_FAIL("no job " + id);
  return p.jobs.front();
}

}  // namespace

BOOST_AUTO_TEST_CASE(seeds_are_deterministic_and_distinct) {
  BOOST_TEST(job_seed(42, 0) == 42u);
  std::set<uint64_t> seen;
  for (uint64_t base : {1u, 2u, 3u})
    for (uint64_t k = 1; k < 100; ++k) {
      const uint64_t s = job_seed(base, k);
      BOOST_TEST(s == job_seed(base, k));
      BOOST_TEST(s <= 0xffffffffull);
      seen.insert(s);
    }
  BOOST_TEST(seen.size() == 297u);  // nearby base seeds do not share job seeds
  BOOST_TEST(entry_seed(7, "random_tlm") == entry_seed(7, "random_tlm"));
  BOOST_TEST(entry_seed(7, "random_tlm") != entry_seed(7, "random_ref"));
  BOOST_TEST(entry_seed(7, "random_tlm") != entry_seed(8, "random_tlm"));
}

BOOST_AUTO_TEST_CASE(shards_partition_the_sorted_list_whatever_the_input_order) {
  std::vector<std::string> ids;
  for (int i = 0; i < 53; ++i) ids.push_back("job" + std::to_string(i * 7 % 53));
  std::vector<std::string> shuffled = ids;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(5));
  std::vector<std::string> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t n : {1u, 2u, 3u, 7u, 60u}) {
    std::multiset<std::string> all;
    for (uint32_t k = 0; k < n; ++k) {
      const auto a = shard_ids(ids, {k, n});
      BOOST_TEST(a == shard_ids(shuffled, {k, n}));
      for (size_t i = 0; i < a.size(); ++i) BOOST_TEST(a[i] == sorted[k + i * n]);  // job i -> shard i % N
      all.insert(a.begin(), a.end());
    }
    BOOST_TEST(all.size() == ids.size());
    BOOST_TEST(std::set<std::string>(all.begin(), all.end()).size() == ids.size());
  }
  BOOST_TEST(parse_shard("2/5").index == 2u);
  BOOST_TEST(parse_shard("2/5").count == 5u);
  for (const char* bad : {"5/5", "1", "a/2", "-1/2", "0/0", "1/"}) BOOST_CHECK_THROW(parse_shard(bad), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(quoting) {
  BOOST_TEST(json_quote("a\"b\\c\nd\x01") == "\"a\\\"b\\\\c\\nd\\u0001\"");
  BOOST_TEST(xml_escape("<a & 'b'>\x01\"") == "&lt;a &amp; &apos;b&apos;&gt;&quot;");
  BOOST_TEST(xml_escape("caf\xc3\xa9 \xff") == "caf\xc3\xa9 ");  // valid UTF-8 kept, stray bytes dropped
  BOOST_TEST(csv_field("plain") == "plain");
  BOOST_TEST(csv_field("a,\"b\"") == "\"a,\"\"b\"\"\"");
  BOOST_TEST(shell_quote("--set") == "--set");
  BOOST_TEST(shell_quote("tensors.T.dims=[64, 64]") == "'tensors.T.dims=[64, 64]'");
  BOOST_TEST(shell_quote("it's") == "'it'\\''s'");
  BOOST_TEST(shell_quote("") == "''");
  BOOST_TEST(file_safe("a b/c") == "a_b_c");
}

BOOST_AUTO_TEST_CASE(first_failing_line_and_signature) {
  const std::string run_log =
      "# regress: job x\n"
      "scenario s on h100, 8 SMs\n"
      "  operations         128 loads, 0 stores, 0 reductions, 0 prefetches, 0 faults\n"
      "  scoreboard         128 operations checked against the reference engine, 2 mismatches\n"
      "    sm 3 op 17 (load tiled): smem byte 4096: expected 0x12, got 0x34\n"
      "    sm 5 op 2 (load tiled): smem byte 12: expected 0x00, got 0x01\n"
      "  invariants         664 checks, 0 violations\n";
  BOOST_TEST(first_failing_line(run_log) == "sm 3 op 17 (load tiled): smem byte 4096: expected 0x12, got 0x34");
  BOOST_TEST(normalise("sm 3 op 17 (load tiled): smem byte 4096: expected 0x12, got 0x34") ==
             "sm # op # (load tiled): smem byte #: expected 0x#, got 0x#");
  // Zero counts are not failures; a count of failures is used when nothing says more.
  BOOST_TEST(first_failing_line("0 passed, 0 failed\nall good\n", false) == "");
  BOOST_TEST(first_failing_line("running\n12 passed, 3 failed\n") == "12 passed, 3 failed");
  BOOST_TEST(first_failing_line("a\nb\nlast words\n") == "last words");
  BOOST_TEST(first_failing_line("a\nb\n", false) == "");
  BOOST_TEST(first_failing_line("progress 1\rprogress 2\rtma-sim run: cannot open file: x\n") ==
             "tma-sim run: cannot open file: x");
  // Folders of paths go; so do numbers, so the same failure on other cases or machines groups.
  BOOST_TEST(normalise("/work/a/tests/golden/silicon/t0001.yaml:12: field 'x': got 3.5") ==
             normalise("/tmp/b/t0419.yaml:7: field 'x': got 12"));
  BOOST_TEST(normalise("  a   b \t c ") == "a b c");
  BOOST_TEST(make_signature(Status::crash, 11, "") == "SIGSEGV");
  BOOST_TEST(make_signature(Status::timeout, 0, "whatever") == "timeout");
  BOOST_TEST(make_signature(Status::error, 0, "tma-sim run: bad 12") == "error: tma-sim run: bad #");
  BOOST_TEST(make_signature(Status::pass, 0, "x") == "");
}

BOOST_AUTO_TEST_CASE(stats_summary_is_read_in_file_order) {
  TempDir t;
  const std::string f = t.write("s.json",
                                "{\n  \"scenario\": \"x\",\n  \"summary.cycles\": \"7442\",\n  \"summary.load_bandwidth_gbs\": "
                                "\"278.9\",\n  \"summary.note\": \"a \\\"q\\\"\",\n  \"summary.n\": 5,\n  \"gpu.l2\": {\"x\": 1}\n}\n");
  const auto s = read_stats_summary(f);
  BOOST_REQUIRE(s.size() == 4u);
  BOOST_TEST(s[0].first == "cycles");
  BOOST_TEST(s[0].second == "7442");
  BOOST_TEST(s[1].second == "278.9");
  BOOST_TEST(s[2].second == "a \"q\"");
  BOOST_TEST(s[3].second == "5");
  BOOST_TEST(read_stats_summary((t.path / "missing.json").string()).empty());
}

BOOST_AUTO_TEST_CASE(regression_file_resolves_lists_jobs_and_seeds) {
  TempDir t;
  const std::string f = t.write("r.yaml", R"(
defaults: {timeout: 30}
lists:
  quick:
    tests:
      - {name: g, golden: )" + kRoot + R"(/tests/golden/silicon}
      - name: s
        scenario: )" + kRoot + R"(/configs/scenarios/stream_tiles.yaml
        set: {sms: 4, tensors.T.dims: [64, 4096], workload.max_tiles_per_sm: "2"}
        arch_set: [l2.hit_latency=300]
        timeout: 5
      - {name: r, random: {seed: 9, count: 10, reseed: 12}}
  more:
    include: [quick]
    tests:
      - {name: t, golden: [)" + kRoot + R"(/tests/golden/silicon], engine: tlm, arch_set: {l2.ways: 8}}
      - {name: x, selftest: crash}
)");
  const Plan p = load_regression(f, "", std::nullopt);
  BOOST_TEST(p.name == "quick");
  BOOST_TEST(p.jobs.size() == 14u);
  BOOST_TEST(std::is_sorted(p.all_ids.begin(), p.all_ids.end()));
  BOOST_TEST(job(p, "g").timeout_s == 30);
  const Job& s = job(p, "s");
  BOOST_TEST(s.timeout_s == 5);
  const std::vector<std::string> want = {"run", kRoot + "/configs/scenarios/stream_tiles.yaml", "--arch",
                                         kRoot + "/configs/arch/h100.yaml", "--arch-set", "l2.hit_latency=300",
                                         "--set", "sms=4", "--set", "tensors.T.dims=[64, 4096]", "--set",
                                         "workload.max_tiles_per_sm=2", "--quiet"};
  BOOST_TEST(s.args == want, boost::test_tools::per_element());
  BOOST_TEST(p.arch_files.count(s.resolved_arch) == 1u);
  BOOST_TEST(contains(p.arch_files.at(s.resolved_arch), "  hit_latency: 300\n"));
  // Generator ids pad the index; job 0 runs the file's seed; --coverage is not in the replay.
  const Job& r0 = job(p, "r.00");
  BOOST_TEST(*r0.seed == 9u);
  BOOST_TEST(*job(p, "r.11").seed == job_seed(9, 11));
  BOOST_TEST(contains(shell_join(r0.args), "--coverage @RUN@/coverage/r.00.json"));
  BOOST_TEST(!contains(shell_join(r0.replay), "--coverage"));
  BOOST_TEST(shell_join(r0.replay) == "random --seed 9 --count 10");
  // --seed S gives every generator a new base derived from S and its name.
  const Plan q = load_regression(f, "quick", 77);
  BOOST_TEST(*job(q, "r.00").seed == entry_seed(77, "r"));
  BOOST_TEST(*job(q, "r.01").seed == job_seed(entry_seed(77, "r"), 1));
  // Includes; check takes --arch-set as run does, and its replay command is complete without the
  // run folder's resolved architecture file.
  const Plan m = load_regression(f, "more", std::nullopt);
  BOOST_TEST(m.jobs.size() == 16u);
  BOOST_TEST(contains(shell_join(job(m, "t").args),
                      "--engine tlm --arch " + kRoot + "/configs/arch/h100.yaml --arch-set l2.ways=8"));
  BOOST_TEST(shell_join(job(m, "x").args) == "regress-selftest crash");
  const std::string replay = replay_command(m, job(m, "t"), "/runs/x");
  BOOST_TEST(contains(replay, " --arch-set l2.ways=8 "));
  BOOST_TEST(!contains(replay, "/runs/x"));
  BOOST_TEST(regression_lists(f) == (std::vector<std::string>{"quick", "more"}));
}

BOOST_AUTO_TEST_CASE(regression_file_errors_name_file_line_and_field) {
  TempDir t;
  struct Case {
    const char* yaml;
    const char* want;  // part of the message after "file:"
  };
  const std::string scen = kRoot + "/configs/scenarios/stream_tiles.yaml";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"lists:\n  a:\n    tests:\n      - {name: x, selftest: pass, colour: red}\n",
       ":4: field 'lists.a.tests[0].colour': unknown key 'colour'"},
      {"lists:\n  a:\n    tests:\n      - {name: x}\n", ":4: field 'lists.a.tests[0]': test 'x' needs exactly one of"},
      {"lists:\n  a:\n    tests:\n      - {name: x, selftest: pass}\n      - {name: x, selftest: fail}\n",
       ":5: field 'lists.a.tests[1].name': job id 'x' is also made by the test at"},
      {"lists:\n  a:\n    include: [b]\n", ":3: field 'lists.a.include[0]': no list named 'b'"},
      {"lists:\n  a:\n    include: [a]\n", "field 'lists.a.include[0]': list 'a' includes itself"},
      {"lists:\n  a:\n    tests:\n      - {name: 'bad name', selftest: pass}\n",
       ":4: field 'lists.a.tests[0].name': 'bad name' is not a valid name"},
      {"lists:\n  a:\n    tests:\n      - {name: x, selftest: explode}\n",
       ":4: field 'lists.a.tests[0].selftest': expected one of"},
      {"lists:\n  a:\n    tests:\n      - {name: x, selftest: pass, timeout: -1}\n",
       ":4: field 'lists.a.tests[0].timeout'"},
      {"lists:\n  a:\n    tests:\n      - {name: x, golden: /no/such/folder}\n",
       ":4: field 'lists.a.tests[0].golden': no such file or folder"},
      {"lists:\n  a:\n    tests:\n      - name: x\n        scenario: " + scen + "\n        arch_set: {l2.colour: 3}\n",
       ":6: field 'lists.a.tests[0].arch_set': override 'l2.colour=3': no architecture field"},
      {"lists:\n  a:\n    tests:\n      - {name: x, random: {seed: 1}}\n",
       ":4: field 'lists.a.tests[0].random.count': required field is missing"},
      {"lists:\n  a:\n    tests:\n      - {name: x, random: {seed: 1, count: 2, reseed: 0}}\n",
       ":4: field 'lists.a.tests[0].random.reseed'"},
      {"lists:\n  a:\n    tests:\n      - {name: x, selftest: pass, set: {a: 1}}\n",
       ":4: field 'lists.a.tests[0].set': only scenario tests take 'set'"},
      {"lists:\n  a:\n    tests:\n      - {name: x, golden: " + kRoot + "/tests/golden/silicon, arch_set: [l2.ways=8]}\n",
       "the reference engine takes no architecture"},
      {"lists:\n  a:\n    tests:\n      - name: x\n        scenario: " + scen + "\n        set: [sms]\n",
       ":6: field 'lists.a.tests[0].set[0]': expected \"path=value\""},
      {"lists: [a]\n", ":1: field 'lists': expected a mapping of list names"},
      {"lists:\n  a: {tests: [{name: x, selftest: pass}]\n", "YAML syntax error"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string f = t.write("e" + std::to_string(i) + ".yaml", cases[i].first);
    const std::string e = regression_error(f);
    BOOST_TEST_CONTEXT("case " << i << ": " << e) {
      BOOST_TEST(e.rfind(f, 0) == 0u);  // starts with the file name
      BOOST_TEST(contains(e, cases[i].second));
    }
  }
  const std::string f = t.write("ok.yaml", "lists:\n  a:\n    tests:\n      - {name: x, selftest: pass}\n");
  BOOST_TEST(regression_error(f) == "");
  BOOST_TEST(contains(regression_error(f, "zzz"), "no list named 'zzz' (the file has: a)"));
}

BOOST_AUTO_TEST_CASE(sweep_is_the_cross_product_in_file_order) {
  TempDir t;
  const std::string f = t.write("s.yaml", R"(
name: demo
scenario: )" + kRoot + R"(/configs/scenarios/stream_tiles.yaml
set: {workload.max_tiles_per_sm: 2}
scoreboard: false
parameters:
  - {name: promotion, set: descriptors.T_tile.l2_promotion, values: [none, 256B]}
  - name: shape
    values:
      - {label: narrow, set: {descriptors.T_tile.box: [16, 64]}}
      - {label: wide, set: {descriptors.T_tile.box: [64, 64]}, arch_set: {l2.ways: 8}}
      - {label: x, set: {descriptors.T_tile.box: [32, 64]}}
  - {name: hit, arch: l2.hit_latency, values: [100, 300]}
)");
  const Plan p = load_sweep(f);
  BOOST_TEST(p.mode == "sweep");
  BOOST_TEST(p.param_names == (std::vector<std::string>{"promotion", "shape", "hit"}));
  BOOST_REQUIRE(p.jobs.size() == 12u);
  BOOST_TEST(p.jobs[0].id == "00-none-narrow-100");
  BOOST_TEST(p.jobs[1].id == "01-none-narrow-300");
  BOOST_TEST(p.jobs[11].id == "11-256B-x-300");
  const Job& w = job(p, "03-none-wide-300");
  BOOST_CHECK(w.params == (std::vector<std::pair<std::string, std::string>>{
                              {"promotion", "none"}, {"shape", "wide"}, {"hit", "300"}}));
  BOOST_TEST(w.arch_set == (std::vector<std::string>{"l2.ways=8", "l2.hit_latency=300"}));
  const std::string a = shell_join(w.args);
  BOOST_TEST(contains(a, "--set workload.max_tiles_per_sm=2 --set descriptors.T_tile.l2_promotion=none "
                         "--set 'descriptors.T_tile.box=[64, 64]' --quiet --no-scoreboard --stats @RUN@/stats/03-none-wide-300.json"));
  BOOST_TEST(!contains(shell_join(w.replay), "--stats"));
  // Sweep errors: a plain value without set/arch, labels twice, an unknown arch field.
  const std::string bad1 = t.write("b1.yaml", "name: d\nscenario: " + kRoot +
                                                  "/configs/scenarios/stream_tiles.yaml\nparameters:\n  - {name: p, values: [1]}\n");
  BOOST_CHECK_EXCEPTION(load_sweep(bad1), tma::YamlError, [](const tma::YamlError& e) {
    return e.line() == 4 && e.field() == "parameters[0].values[0]";
  });
  const std::string bad2 = t.write("b2.yaml", "name: d\nscenario: " + kRoot +
                                                  "/configs/scenarios/stream_tiles.yaml\nparameters:\n  - {name: p, arch: l2.nope, values: [1]}\n");
  BOOST_CHECK_EXCEPTION(load_sweep(bad2), tma::YamlError,
                        [](const tma::YamlError& e) { return contains(e.what(), "no architecture field 'l2.nope'"); });
}

BOOST_AUTO_TEST_CASE(architecture_rules_across_fields_hold_in_files_overrides_and_sweeps) {
  TempDir t;
  // The shipped H100 file with a fetch granularity that is no power of two: the error names the
  // field's line and the value.
  std::ifstream in(kRoot + "/configs/arch/h100.yaml");
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = yaml.find("fetch_granularity_bytes: 64");
  BOOST_REQUIRE(at != std::string::npos);
  yaml.replace(at, 27, "fetch_granularity_bytes: 48");
  const int line = 1 + static_cast<int>(std::count(yaml.begin(), yaml.begin() + static_cast<long>(at), '\n'));
  const std::string bad_arch = t.write("h100_bad.yaml", yaml);
  BOOST_CHECK_EXCEPTION(tma::load_arch_config(bad_arch), tma::YamlError, [&](const tma::YamlError& e) {
    return e.line() == line && e.field() == "l2.fetch_granularity_bytes" && contains(e.problem(), "got 48");
  });
  // Overrides (--arch-set) are held to the same rules once all are applied.
  tma::ArchConfig a = tma::load_arch_config(kRoot + "/configs/arch/h100.yaml");
  tma::apply_arch_overrides(a, {"l2.fetch_granularity_bytes=32"});
  BOOST_TEST(a.l2.fetch_granularity_bytes == 32u);
  for (const char* bad : {"l2.fetch_granularity_bytes=256", "l2.fetch_granularity_bytes=16", "l2.sector_bytes=48"}) {
    tma::ArchConfig b = tma::load_arch_config(kRoot + "/configs/arch/h100.yaml");
    BOOST_CHECK_EXCEPTION(tma::apply_arch_overrides(b, {bad}), std::runtime_error, [](const std::runtime_error& e) {
      return contains(e.what(), "architecture overrides: l2.");
    });
  }
  // A sweep value that breaks one: the sweep file's line of that parameter.
  const std::string sweep = t.write("s.yaml", "name: d\nscenario: " + kRoot +
                                                  "/configs/scenarios/stream_tiles.yaml\nparameters:\n"
                                                  "  - {name: fetch, arch: l2.fetch_granularity_bytes, values: [32, 64, 256]}\n");
  BOOST_CHECK_EXCEPTION(load_sweep(sweep), tma::YamlError, [](const tma::YamlError& e) {
    return e.line() == 4 && contains(e.what(), "fetch_granularity_bytes must be a power of two");
  });
}

BOOST_AUTO_TEST_CASE(plan_and_results_round_trip) {
  TempDir t;
  const std::string f = t.write("r.yaml", "lists:\n  a:\n    tests:\n      - {name: x, selftest: pass, args: [\"--seconds\", \"0.1\"]}\n"
                                          "      - {name: y, random: {seed: 3, count: 5, reseed: 3}}\n"
                                          "      - name: z\n        scenario: " + kRoot +
                                          "/configs/scenarios/stream_tiles.yaml\n        arch_set: [l2.ways=8]\n");
  Plan p = load_regression(f, "", 12);
  apply_shard(p, {1, 2});
  const std::string pj = t.write("plan.json", plan_to_json(p));
  const Plan q = plan_from_json(pj);
  BOOST_TEST(q.mode == p.mode);
  BOOST_TEST(q.name == p.name);
  BOOST_TEST(*q.seed == 12u);
  BOOST_TEST(q.shard.index == 1u);
  BOOST_TEST(q.shard.count == 2u);
  BOOST_TEST(q.all_ids == p.all_ids);
  BOOST_CHECK(q.arch_files == p.arch_files);
  BOOST_REQUIRE(q.jobs.size() == p.jobs.size());
  for (size_t i = 0; i < p.jobs.size(); ++i) {
    BOOST_TEST(q.jobs[i].id == p.jobs[i].id);
    BOOST_TEST(q.jobs[i].args == p.jobs[i].args);
    BOOST_TEST(q.jobs[i].replay == p.jobs[i].replay);
    BOOST_CHECK(q.jobs[i].seed == p.jobs[i].seed);
    BOOST_TEST(q.jobs[i].timeout_s == p.jobs[i].timeout_s);
  }
  Result r;
  r.id = "y.1";
  r.status = Status::crash;
  r.signal = 11;
  r.seconds = 1.5;
  r.first_line = "weird \"line\"\twith\ttabs";
  r.signature = make_signature(r.status, r.signal, r.first_line);
  r.summary = {{"cycles", "12"}, {"arch", "h100"}};
  fs::create_directories(t.path / "results");
  write_file_atomic(result_path(t.path.string(), r.id), result_to_json(r));
  const auto loaded = load_results(t.path.string());
  BOOST_REQUIRE(loaded.count("y.1") == 1u);
  const Result& b = loaded.at("y.1");
  BOOST_TEST(status_name(b.status) == std::string("crash"));
  BOOST_TEST(b.signal == 11);
  BOOST_TEST(b.first_line == r.first_line);
  BOOST_TEST(b.signature == r.signature);
  BOOST_CHECK(b.summary == r.summary);
}

BOOST_AUTO_TEST_CASE(reports_do_not_depend_on_finishing_order) {
  TempDir t;
  const std::string f = t.write("r.yaml", "lists:\n  a:\n    tests:\n"
                                          "      - {name: b, selftest: fail}\n      - {name: a, selftest: pass}\n"
                                          "      - {name: c, selftest: crash}\n      - {name: d, selftest: fail}\n"
                                          "      - {name: e, selftest: pass}\n");
  const Plan p = load_regression(f, "", std::nullopt);
  auto result = [](const std::string& id, Status s, int sig, const std::string& line) {
    Result r;
    r.id = id;
    r.status = s;
    r.signal = sig;
    r.exit_code = s == Status::fail ? 1 : s == Status::pass ? 0 : -1;
    r.first_line = line;
    r.signature = make_signature(s, sig, line);
    r.log = "logs/" + id + ".log";
    return r;
  };
  std::vector<Result> rs = {result("b", Status::fail, 0, "case 3: expected 0x1, got 0x2"),
                            result("a", Status::pass, 0, ""), result("c", Status::crash, 11, ""),
                            result("d", Status::fail, 0, "case 9: expected 0x7, got 0x0")};
  std::map<std::string, Result> m1, m2;
  for (const Result& r : rs) m1[r.id] = r;
  for (auto it = rs.rbegin(); it != rs.rend(); ++it) m2[it->id] = *it;
  const Report r1 = make_report(p, "/runs/r", m1), r2 = make_report(p, "/runs/r", m2);
  BOOST_TEST(summary_markdown(r1) == summary_markdown(r2));
  BOOST_TEST(summary_csv(r1) == summary_csv(r2));
  const Counts c = count(r1);
  BOOST_TEST(c.total == 5u);
  BOOST_TEST(c.passed == 1u);
  BOOST_TEST(c.failed == 3u);
  BOOST_TEST(c.not_run == 1u);  // e has no result
  BOOST_TEST(exit_status(r1) == 1);
  // b and d share a signature: one group of 2, listed first.
  const std::string fc = failures_csv(r1);
  BOOST_TEST(contains(fc, "2,fail,\"case #: expected 0x#, got 0x#\",b d,"));
  BOOST_TEST(contains(fc, "1,crash,SIGSEGV,c,"));
  BOOST_TEST(fc.find("2,fail") < fc.find("1,crash"));
  const std::string md = summary_markdown(r1);
  BOOST_TEST(contains(md, "| 2 | fail | `case #: expected 0x#, got 0x#` | b, d |"));
  BOOST_TEST(contains(md, "regress-selftest crash\n```"));
  const std::string junit = junit_xml(r1);
  BOOST_TEST(contains(junit, "tests=\"5\" failures=\"3\" errors=\"1\" skipped=\"0\""));
  BOOST_TEST(contains(junit, "<testcase name=\"c\" classname=\"regress.a.selftest\""));
  BOOST_TEST(contains(junit, "<failure type=\"crash\" message=\"SIGSEGV\">"));
  BOOST_TEST(contains(junit, "<error type=\"not_run\" message=\"not run\"/>"));
  // Testcases in id order.
  BOOST_TEST(junit.find("name=\"a\"") < junit.find("name=\"b\""));
  BOOST_TEST(junit.find("name=\"d\"") < junit.find("name=\"e\""));
}
