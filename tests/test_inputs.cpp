// Input files and what is checked before anything runs (docs/scenarios.md, docs/regressions.md,
// docs/sweeps.md): paths written in YAML files, workloads against their tensors, and regression
// and sweep files whose every scenario and override is loaded when the file is read. Every error
// names the file, the line, the field and the value as written.
#define BOOST_TEST_MODULE inputs
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/config/paths.h"
#include "tma/regress/regress_plan.h"
#include "tma/regress/regress_util.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/workload.h"
#include "tma/config/yaml_reader.h"

// Linked with tma_regress, so with libsystemc, which wants an sc_main (Boost.Test provides main).
extern "C" int sc_main(int, char**) { return 0; }

namespace fs = std::filesystem;
using namespace tma;

namespace {

const std::string kRoot = TMA_SOURCE_DIR;

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("test_inputs_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

// Runs in another current folder, and comes back.
struct InFolder {
  fs::path before = fs::current_path();
  explicit InFolder(const fs::path& p) { fs::current_path(p); }
  ~InFolder() { fs::current_path(before); }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The YamlError of f(), or a YamlError with the problem "no error" when there is none.
template <typename F>
YamlError yaml_error(F f) {
  try {
    f();
  } catch (const YamlError& e) {
    return e;
  }
  return YamlError("", 0, "", "no error");
}

// A small valid scenario; `extra` lines go at the top level.
std::string stream_scenario(const std::string& extra = "") {
  return "name: t\nsms: 2\n" + extra +
         "tensors:\n  T: {dtype: bf16, dims: [128, 256], address: 0x100000000}\n"
         "descriptors:\n  T_tile: {tensor: T, box: [64, 64]}\n"
         "workload: {kind: stream, load: T_tile}\n";
}

// The error of a shipped scenario with overrides, or "no error".
YamlError shipped_error(const std::string& name, const std::vector<std::string>& sets) {
  return yaml_error([&] { load_scenario(kRoot + "/configs/scenarios/" + name + ".yaml", sets); });
}

}  // namespace

BOOST_AUTO_TEST_CASE(paths_in_a_scenario_resolve_from_its_folder_then_the_project) {
  TempDir t;
  fs::create_directories(t.path / "sub");
  fs::copy_file(kRoot + "/configs/arch/h200.yaml", t.path / "sub" / "mine.yaml");
  // Next to the scenario, wherever tma-sim runs from.
  const std::string here = t.write("sub/here.yaml", stream_scenario("arch: mine.yaml\n"));
  {
    InFolder cwd(fs::temp_directory_path());
    BOOST_TEST(load_scenario(here).arch == (t.path / "sub" / "mine.yaml").string());
  }
  // Not next to it: the project's configs.
  const std::string project = t.write("sub/project.yaml", stream_scenario("arch: configs/arch/h200.yaml\n"));
  BOOST_TEST(load_scenario(project).arch == kRoot + "/configs/arch/h200.yaml");
  BOOST_TEST(load_scenario(t.write("sub/none.yaml", stream_scenario())).arch == kRoot + "/configs/arch/h100.yaml");
  // The current folder plays no part: a file there is not the scenario's.
  t.write("cwd/stray.yaml", "");
  const std::string stray = t.write("sub/stray_ref.yaml", stream_scenario("arch: stray.yaml\n"));
  InFolder cwd(t.path / "cwd");
  const YamlError e = yaml_error([&] { load_scenario(stray); });
  BOOST_TEST(e.file() == stray);
  BOOST_TEST(e.line() == 3);
  BOOST_TEST(e.field() == "arch");
  BOOST_TEST(contains(e.problem(), "no such file or folder: 'stray.yaml'"));
  BOOST_TEST(contains(e.problem(), (t.path / "sub").string()));
}

BOOST_AUTO_TEST_CASE(paths_in_regression_and_sweep_files_resolve_from_their_folder) {
  TempDir t;
  t.write("r/s.yaml", stream_scenario());
  const std::string reg = t.write("r/reg.yaml",
                                  "lists:\n  a:\n    tests:\n"
                                  "      - {name: s, scenario: s.yaml}\n"
                                  "      - {name: g, golden: tests/golden/silicon/t0001.yaml}\n");
  const std::string sweep = t.write("r/sweep.yaml",
                                    "name: w\nscenario: s.yaml\n"
                                    "parameters:\n  - {name: p, set: workload.stages, values: [2, 3]}\n");
  InFolder cwd(fs::temp_directory_path());
  const regress::Plan p = regress::load_regression(reg, "", std::nullopt);
  BOOST_REQUIRE(p.jobs.size() == 2u);
  BOOST_TEST(p.jobs[1].args.at(1) == (t.path / "r" / "s.yaml").string());
  BOOST_TEST(p.jobs[0].args.back() == kRoot + "/tests/golden/silicon/t0001.yaml");
  BOOST_TEST(regress::load_sweep(sweep).jobs.at(0).args.at(1) == (t.path / "r" / "s.yaml").string());
  // A missing one: the file, the line, the field and the value.
  const std::string bad = t.write("r/bad.yaml", "lists:\n  a:\n    tests:\n      - {name: s, scenario: nope.yaml}\n");
  const YamlError e = yaml_error([&] { regress::load_regression(bad, "", std::nullopt); });
  BOOST_TEST(e.file() == bad);
  BOOST_TEST(e.line() == 4);
  BOOST_TEST(e.field() == "lists.a.tests[0].scenario");
  BOOST_TEST(contains(e.problem(), "'nope.yaml'"));
}

BOOST_AUTO_TEST_CASE(no_search_through_parent_folders) {
  TempDir t;
  // An executable whose folder above has no configs/arch: the project is the source folder, and a
  // file in a parent folder of the executable is not found by chance.
  fs::create_directories(t.path / "proj" / "build");
  t.write("stray.yaml", "name: unrelated\n");
  set_executable_path((t.path / "proj" / "build" / "tma-sim").string());
  BOOST_TEST(project_root() == kRoot);
  {
    InFolder cwd(t.path / "proj");
    BOOST_TEST(resolve_project_path("stray.yaml") == "stray.yaml");
    BOOST_TEST(resolve_project_path("configs/arch/h100.yaml") == kRoot + "/configs/arch/h100.yaml");
  }
  // The folder above the executable's, when it is a project (has configs/arch).
  fs::create_directories(t.path / "proj" / "configs" / "arch");
  BOOST_TEST(project_root() == (t.path / "proj").string());
  set_executable_path("");
  BOOST_TEST(project_root() == kRoot);
}

BOOST_AUTO_TEST_CASE(workloads_must_agree_with_their_tensors) {
  struct Case {
    std::string scenario;
    std::vector<std::string> sets;
    std::string field, part;  // the field named and part of the problem
  };
  const std::vector<Case> cases = {
      // GEMM: m, n, k inside the tensors and whole tiles (A is [K, M] = [1024, 2048], tiles 64 x 128).
      {"gemm_bf16", {"workload.m=100000"}, "workload.m", "m = 100000 is beyond the end of tensor 'A' (dims[1] = 2048)"},
      {"gemm_bf16", {"workload.n=4096"}, "workload.n", "n = 4096 is beyond the end of tensor 'B' (dims[1] = 2048)"},
      {"gemm_bf16", {"workload.k=100"}, "workload.k", "k = 100 is not a whole number of tiles of 'A_tile' (box[0] = 64)"},
      {"gemm_bf16", {"workload.m=200"}, "workload.m", "the last tile would load past m"},
      {"gemm_bf16", {"descriptors.B_tile.box=[32, 128]"}, "workload.b", "the K tiles differ"},
      {"gemm_bf16", {"tensors.A.dims=[2048]", "descriptors.A_tile.box=[64]"}, "workload.a",
       "must be tiled over a 2D tensor [K, M]"},
      {"gemm_multicast", {"workload.n=384"}, "workload.multicast_a", "the 3 N tiles are not a multiple of cluster_size (2)"},
      // Convolution: the filter [C, K, taps] matches the activation and the filter size.
      {"conv_im2col", {"workload.filter_size=[5, 5]"}, "workload.filter_size", "the filter has 25 taps, tensor 'F' 9"},
      {"conv_im2col", {"workload.output_channel_tiles=2"}, "workload.output_channel_tiles", "beyond the 1 K tiles"},
      {"conv_im2col", {"descriptors.F_tile.box=[32, 128, 1]"}, "workload.filter", "must be the activation's channels_per_pixel (64)"},
      {"conv_im2col", {"tensors.F.dims=[32, 128, 9]", "descriptors.F_tile.box=[32, 128, 1]", "descriptors.X_im2col.channels_per_pixel=32"},
       "workload.filter", "has 32 channels (dims[0]), the activation 64"},
      // Stream: the store writes back the loaded tile.
      {"stream_reduce", {"tensors.C.dims=[4096, 1024]"}, "workload.store", "is smaller than the loaded tensor 'P'"},
      {"stream_reduce", {"descriptors.C_tile.box=[32, 32]"}, "workload.store", "must have the rank, data type and box"},
  };
  for (const Case& c : cases) {
    const YamlError e = shipped_error(c.scenario, c.sets);
    BOOST_TEST_CONTEXT(c.scenario << " " << c.sets.front() << ": " << e.what()) {
      BOOST_TEST(e.field() == c.field);
      BOOST_TEST(contains(e.problem(), c.part));
    }
  }
  // What is consistent loads: a sub-problem of whole tiles, and a last tile that is partial at the
  // tensor's edge (the TMA fills the rest, as on silicon).
  for (const std::vector<std::string>& ok :
       {std::vector<std::string>{"workload.m=256", "workload.n=384", "workload.k=512"},
        std::vector<std::string>{"tensors.A.dims=[96, 200]", "tensors.B.dims=[96, 2048]", "workload.k=96", "workload.m=200"}})
    BOOST_TEST(shipped_error("gemm_bf16", ok).problem() == "no error");
}

BOOST_AUTO_TEST_CASE(more_sms_than_the_architecture_has_warns) {
  const Scenario s = load_scenario(kRoot + "/configs/scenarios/gemm_bf16.yaml", {"sms=132"});
  ArchConfig arch = load_arch_config(kRoot + "/configs/arch/h100.yaml");
  BOOST_TEST(scenario_warnings(s, arch).empty());
  apply_arch_overrides(arch, {"sm_count=16"});
  const std::vector<std::string> w = scenario_warnings(s, arch);
  BOOST_REQUIRE(w.size() == 1u);
  BOOST_TEST(contains(w[0], "runs on 132 SMs, more than the 16 of architecture 'h100'"));
}

BOOST_AUTO_TEST_CASE(sweeps_check_every_point_before_anything_runs) {
  TempDir t;
  const std::string scen = kRoot + "/configs/scenarios/stream_tiles.yaml";
  auto sweep_error = [&](const std::string& name, const std::string& yaml) {
    const std::string f = t.write(name, yaml);
    return yaml_error([&] { regress::load_sweep(f); });
  };
  // A plain value of a path that is not in the scenario: the value's line, the override as
  // written (no digit replaced).
  YamlError e = sweep_error("nope.yaml", "name: d\nscenario: " + scen +
                                             "\nparameters:\n  - name: p\n    set: descriptors.NOPE.l2_promotion\n"
                                             "    values: [none, 256B]\n");
  BOOST_TEST(e.line() == 6);
  BOOST_TEST(e.field() == "parameters[0].values[0]");
  BOOST_TEST(contains(e.problem(), "point 0-none: override 'descriptors.NOPE.l2_promotion=none'"));
  BOOST_TEST(contains(e.problem(), "the scenario has no 'descriptors.NOPE' ('descriptors' has: T_tile)"));
  // A labelled value whose set is wrong: that key's line and the value as written.
  e = sweep_error("label.yaml", "name: d\nscenario: " + scen +
                                    "\nparameters:\n  - name: p\n    values:\n      - label: a\n        set: {sms: 2}\n"
                                    "      - label: b\n        set:\n          descriptors.T_tile.l2_promotion: 256C\n");
  BOOST_TEST(e.line() == 10);
  BOOST_TEST(e.field() == "parameters[0].values[1].set.descriptors.T_tile.l2_promotion");
  BOOST_TEST(contains(e.problem(), "point 1-b: override 'descriptors.T_tile.l2_promotion=256C'"));
  BOOST_TEST(contains(e.problem(), "expected one of: none, 64B, 128B, 256B; got '256C'"));
  // The sweep's own set, a negative SM count.
  e = sweep_error("sms.yaml", "name: d\nscenario: " + scen + "\nset: {sms: -4}\nparameters:\n  - {name: p, set: workload.stages, values: [2]}\n");
  BOOST_TEST(e.line() == 3);
  BOOST_TEST(e.field() == "set.sms");
  BOOST_TEST(contains(e.problem(), "value -4 is outside the allowed range [1, 1024]"));
  // An error no override holds (overrides that together make the descriptor one the driver
  // refuses): at the sweep's scenario, with the scenario's own file, line and field.
  e = sweep_error("combo.yaml", "name: d\nscenario: " + scen +
                                    "\nparameters:\n  - {name: p, set: tensors.T.strides, values: [\"[100]\"]}\n");
  BOOST_TEST(e.field() == "scenario");
  BOOST_TEST(contains(e.problem(), "point 0-_100_: scenario " + scen + ":"));
  BOOST_TEST(contains(e.problem(), "field 'descriptors.T_tile': the driver would refuse this descriptor"));
  // More stages than shared memory holds: the architecture is checked too.
  e = sweep_error("fit.yaml", "name: d\nscenario: " + scen + "\nparameters:\n  - {name: stages, set: workload.stages, values: [4, 64]}\n");
  BOOST_TEST(e.field() == "scenario");
  BOOST_TEST(contains(e.problem(), "point 1-64: scenario " + scen + " on architecture 'h100': stream stages need"));
  // An empty or broken base scenario.
  for (const std::string& text : {std::string(""), std::string("name: [\n")}) {
    const std::string base = t.write("base.yaml", text);
    e = sweep_error("base_sweep.yaml", "name: d\nscenario: " + base + "\nparameters:\n  - {name: p, set: sms, values: [1]}\n");
    BOOST_TEST_CONTEXT(e.what()) {
      BOOST_TEST(e.line() == 2);
      BOOST_TEST(e.field() == "scenario");
      BOOST_TEST(contains(e.problem(), text.empty() ? "the file is empty" : "YAML syntax error"));
    }
  }
}

BOOST_AUTO_TEST_CASE(regressions_check_every_scenario_job_before_anything_runs) {
  TempDir t;
  const std::string scen = kRoot + "/configs/scenarios/gemm_bf16.yaml";
  auto regression_error = [&](const std::string& set) {
    const std::string f =
        t.write("r.yaml", "lists:\n  a:\n    tests:\n      - {name: ok, selftest: pass}\n      - name: s\n        scenario: " +
                              scen + "\n        set: " + set + "\n");
    return yaml_error([&] { regress::load_regression(f, "", std::nullopt); });
  };
  YamlError e = regression_error("{sms: -4}");
  BOOST_TEST(e.line() == 7);
  BOOST_TEST(e.field() == "lists.a.tests[1].set.sms");
  BOOST_TEST(contains(e.problem(), "override 'sms=-4': scenario " + scen + ", field 'sms': value -4 is outside"));
  e = regression_error("[workload.m=100000]");
  BOOST_TEST(e.field() == "lists.a.tests[1].set[0]");
  BOOST_TEST(contains(e.problem(), "m = 100000 is beyond the end of tensor 'A' (dims[1] = 2048)"));
  e = regression_error("{descriptors.A_tile.l2_promotion: 256C}");
  BOOST_TEST(contains(e.problem(), "got '256C'"));
  BOOST_TEST(regression_error("{sms: 4, workload.m: 256}").problem() == "no error");
}
