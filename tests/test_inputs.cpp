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

#include "arch_config_yaml.h"
#include "paths.h"
#include "regress_plan.h"
#include "regress_util.h"
#include "scenario.h"
#include "yaml_reader.h"

// Linked with tma_bench, so with libsystemc, which wants an sc_main (Boost.Test provides main).
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
