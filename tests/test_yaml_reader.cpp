// YAML reading helpers: every error kind, with file, 1-based line and field path in the message.
#define BOOST_TEST_MODULE yaml_reader
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tma/descriptor/tensor_map.h"
#include "tma/config/yaml_reader.h"

using namespace tma;
namespace fs = std::filesystem;

namespace {

// A YAML file in a fresh temporary folder, removed when the test ends.
class TempYaml {
 public:
  explicit TempYaml(const std::string& text, const std::string& name = "case.yaml") {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("tma_yaml_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
    path_ = (dir_ / name).string();
    std::ofstream(path_) << text;
  }
  ~TempYaml() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  const std::string& path() const { return path_; }
  YamlDoc load() const { return YamlDoc::load(path_); }

 private:
  fs::path dir_;
  std::string path_;
};

// Runs `body`, which must throw YamlError; returns it for inspection.
template <typename F>
YamlError expect_error(F body) {
  try {
    body();
  } catch (const YamlError& e) {
    return e;
  }
  BOOST_FAIL("no YamlError thrown");
  throw std::logic_error("unreachable");
}

const char* kCase =
    "schema: tma-golden/1\n"         // 1
    "tensor_map:\n"                  // 2
    "  mode: tiled\n"                // 3
    "  dtype: bf16\n"                // 4
    "  rank: 3\n"                    // 5
    "  dims: [34, 8, 3]\n"           // 6
    "  strides:\n"                   // 7
    "    - 160\n"                    // 8
    "    - 1328\n"                   // 9
    "  scale: 1.5\n"                 // 10
    "  enabled: yes\n"               // 11
    "  address: 0x1000\n"            // 12
    "  lower_corner: [-1, -2]\n"     // 13
    "  note:\n"                      // 14
    "op:\n"                          // 15
    "  kind: load\n";                // 16

}  // namespace

BOOST_AUTO_TEST_CASE(reads_values) {
  TempYaml file(kCase);
  YamlDoc doc = file.load();
  BOOST_TEST(doc.file() == file.path());
  YamlField map = doc.root()["tensor_map"];
  BOOST_TEST(map.path() == "tensor_map");
  BOOST_TEST(map.line() == 2);
  BOOST_TEST(map.is_map());
  BOOST_TEST(map["rank"].as_int64(1, 5) == 3);
  BOOST_TEST(map["rank"].line() == 5);
  BOOST_TEST(map["address"].as_uint64() == 0x1000u);
  BOOST_TEST(map["scale"].as_double(0.0, 2.0) == 1.5);
  BOOST_TEST(map["enabled"].as_bool());
  BOOST_TEST(map["mode"].as_string() == "tiled");
  BOOST_TEST((map["dtype"].as_enum(parse_data_type, data_type_names()) == DataType::bf16));
  std::vector<uint64_t> dims = map["dims"].as_uint64_list(3, 3, 1, uint64_t{1} << 32);
  BOOST_TEST(dims == (std::vector<uint64_t>{34, 8, 3}), boost::test_tools::per_element());
  std::vector<int64_t> strides = map["strides"].as_int64_list(1, 4);
  BOOST_TEST(strides == (std::vector<int64_t>{160, 1328}), boost::test_tools::per_element());
  BOOST_TEST(map["strides"].at(1).line() == 9);
  BOOST_TEST(map["strides"].at(1).path() == "tensor_map.strides[1]");
  BOOST_TEST(map["lower_corner"].as_int64_list(2, 2, -128, 127) == (std::vector<int64_t>{-1, -2}),
             boost::test_tools::per_element());
  std::vector<std::string> keys = doc.root().keys();
  BOOST_TEST(keys == (std::vector<std::string>{"schema", "tensor_map", "op"}), boost::test_tools::per_element());
  doc.root().check_keys({"schema", "tensor_map", "op"});
}

BOOST_AUTO_TEST_CASE(optional_getters) {
  TempYaml file(kCase);
  YamlField map = file.load().root()["tensor_map"];
  BOOST_TEST(!map["oob_fill"].present());
  BOOST_TEST((map["oob_fill"].as_enum_or(OobFill::zero, parse_oob_fill, oob_fill_names()) == OobFill::zero));
  BOOST_TEST(map["missing"].as_int64_or(42) == 42);
  BOOST_TEST(map["missing"].as_uint64_or(7) == 7u);
  BOOST_TEST(map["missing"].as_double_or(2.5) == 2.5);
  BOOST_TEST(map["missing"].as_bool_or(true));
  BOOST_TEST(map["missing"].as_string_or("x") == "x");
  // Written but empty counts as absent for the optional getters.
  BOOST_TEST(map["note"].present());
  BOOST_TEST(map["note"].is_null());
  BOOST_TEST(map["note"].as_string_or("none") == "none");
  // Present values are still checked.
  BOOST_TEST(map["rank"].as_int64_or(0, 1, 5) == 3);
  YamlError e = expect_error([&] { map["rank"].as_int64_or(0, 4, 5); });
  BOOST_TEST(e.line() == 5);
  BOOST_TEST(map["missing"].size() == 0u);
}

BOOST_AUTO_TEST_CASE(missing_field_names_parent_line) {
  TempYaml file(kCase);
  YamlDoc doc = file.load();
  YamlError e = expect_error([&] { doc.root()["tensor_map"]["box"].as_uint64_list(3, 3); });
  BOOST_TEST(e.file() == file.path());
  BOOST_TEST(e.line() == 2);
  BOOST_TEST(e.field() == "tensor_map.box");
  BOOST_TEST(std::string(e.what()) ==
             file.path() + ":2: field 'tensor_map.box': required field is missing from 'tensor_map'");

  e = expect_error([&] { doc.root()["expect"].as_string(); });
  BOOST_TEST(e.line() == 1);
  BOOST_TEST(std::string(e.what()) == file.path() + ":1: field 'expect': required field is missing from the top level");

  // Under a missing mapping: the nearest mapping that is there is named.
  e = expect_error([&] { doc.root()["expect"]["outcome"].as_string(); });
  BOOST_TEST(e.field() == "expect.outcome");
  BOOST_TEST(e.problem() == "required field is missing from the top level");

  // Under an empty mapping value.
  e = expect_error([&] { doc.root()["tensor_map"]["note"]["x"].as_int64(); });
  BOOST_TEST(e.line() == 14);
  BOOST_TEST(e.problem() == "required field is missing from 'tensor_map.note'");
}

BOOST_AUTO_TEST_CASE(integer_errors) {
  TempYaml file(
      "rank: 7\n"
      "name: abc\n"
      "neg: -3\n"
      "big: 18446744073709551616\n"
      "frac: 1.5\n"
      "hex: 0xff\n"
      "list: [1]\n"
      "empty:\n");
  YamlField root = file.load().root();
  YamlError e = expect_error([&] { root["rank"].as_int64(1, 5); });
  BOOST_TEST(std::string(e.what()) == file.path() + ":1: field 'rank': value 7 is outside the allowed range [1, 5]");
  e = expect_error([&] { root["name"].as_int64(); });
  BOOST_TEST(std::string(e.what()) == file.path() + ":2: field 'name': expected an integer, got 'abc'");
  e = expect_error([&] { root["neg"].as_uint64(); });
  BOOST_TEST(e.problem() == "value -3 is outside the allowed range [0, 18446744073709551615]");
  e = expect_error([&] { root["big"].as_uint64(); });
  BOOST_TEST(e.problem().find("outside the allowed range") != std::string::npos);
  e = expect_error([&] { root["big"].as_int64(); });
  BOOST_TEST(e.problem().find("outside the allowed range") != std::string::npos);
  e = expect_error([&] { root["frac"].as_int64(); });
  BOOST_TEST(e.problem() == "expected an integer, got '1.5'");
  BOOST_TEST(root["hex"].as_int64() == 255);
  BOOST_TEST(root["neg"].as_int64(-3, 0) == -3);
  e = expect_error([&] { root["list"].as_int64(); });
  BOOST_TEST(e.problem() == "expected an integer, got a list");
  e = expect_error([&] { root["empty"].as_int64(); });
  BOOST_TEST(e.problem() == "expected an integer, got an empty value");
  BOOST_TEST(e.line() == 8);
}

BOOST_AUTO_TEST_CASE(int64_extremes) {
  TempYaml file("lo: -9223372036854775808\nhi: 9223372036854775807\nover: 9223372036854775808\n");
  YamlField root = file.load().root();
  BOOST_TEST(root["lo"].as_int64() == std::numeric_limits<int64_t>::min());
  BOOST_TEST(root["hi"].as_int64() == std::numeric_limits<int64_t>::max());
  BOOST_TEST(root["over"].as_uint64() == uint64_t{1} << 63);
  expect_error([&] { root["over"].as_int64(); });
}

BOOST_AUTO_TEST_CASE(double_bool_string_errors) {
  TempYaml file(
      "ratio: 2.5\n"
      "word: fast\n"
      "flag: maybe\n"
      "inf: .inf\n"
      "nan: .nan\n"
      "map: {a: 1}\n");
  YamlField root = file.load().root();
  YamlError e = expect_error([&] { root["ratio"].as_double(0.0, 1.0); });
  BOOST_TEST(e.problem() == "value 2.5 is outside the allowed range [0, 1]");
  e = expect_error([&] { root["word"].as_double(); });
  BOOST_TEST(e.problem() == "expected a number, got 'fast'");
  e = expect_error([&] { root["flag"].as_bool(); });
  BOOST_TEST(std::string(e.what()) == file.path() + ":3: field 'flag': expected true or false, got 'maybe'");
  BOOST_TEST(std::isinf(root["inf"].as_double()));
  BOOST_TEST(std::isnan(root["nan"].as_double()));
  expect_error([&] { root["nan"].as_double(0.0, 1.0); });
  e = expect_error([&] { root["map"].as_string(); });
  BOOST_TEST(e.problem() == "expected a string, got a mapping");
}

BOOST_AUTO_TEST_CASE(list_errors) {
  TempYaml file(
      "tensor_map:\n"                 // 1
      "  dims: abc\n"                 // 2
      "  box: [1, 2]\n"               // 3
      "  strides:\n"                  // 4
      "    - 16\n"                    // 5
      "    - x\n"                     // 6
      "  coords: [1, 300]\n"          // 7
      "  empty:\n");                  // 8
  YamlField map = file.load().root()["tensor_map"];
  YamlError e = expect_error([&] { map["dims"].as_uint64_list(1, 5); });
  BOOST_TEST(std::string(e.what()) ==
             file.path() + ":2: field 'tensor_map.dims': expected a list of non-negative integers, got 'abc'");
  e = expect_error([&] { map["dims"].as_int64_list(1, 5); });
  BOOST_TEST(std::string(e.what()) == file.path() + ":2: field 'tensor_map.dims': expected a list of integers, got 'abc'");
  e = expect_error([&] { map["box"].as_uint64_list(3, 3); });
  BOOST_TEST(e.problem() == "expected 3 entries, got 2");
  BOOST_TEST(e.line() == 3);
  e = expect_error([&] { map["box"].as_uint64_list(3, 5); });
  BOOST_TEST(e.problem() == "expected between 3 and 5 entries, got 2");
  e = expect_error([&] { map["box"].as_uint64_list(3, std::numeric_limits<size_t>::max()); });
  BOOST_TEST(e.problem() == "expected at least 3 entries, got 2");
  e = expect_error([&] { map["strides"].as_int64_list(2, 2); });
  BOOST_TEST(std::string(e.what()) == file.path() + ":6: field 'tensor_map.strides[1]': expected an integer, got 'x'");
  e = expect_error([&] { map["coords"].as_int64_list(2, 2, -128, 127); });
  BOOST_TEST(e.field() == "tensor_map.coords[1]");
  BOOST_TEST(e.problem() == "value 300 is outside the allowed range [-128, 127]");
  e = expect_error([&] { map["empty"].as_int64_list(0, 5); });
  BOOST_TEST(e.problem() == "expected a list of integers, got an empty value");
  e = expect_error([&] { map["nothing"].as_int64_list(0, 5); });
  BOOST_TEST(e.problem() == "required field is missing from 'tensor_map'");
  e = expect_error([&] { map["box"].at(2); });
  BOOST_TEST(e.problem() == "has no entry [2]: the list has 2 entries");
  e = expect_error([&] { map["dims"].size(); });
  BOOST_TEST(e.problem() == "expected a list, got 'abc'");
}

BOOST_AUTO_TEST_CASE(enum_errors) {
  TempYaml file("tensor_map:\n  dtype: bf17\n  interleave: [none]\n");
  YamlField map = file.load().root()["tensor_map"];
  YamlError e = expect_error([&] { map["dtype"].as_enum(parse_data_type, data_type_names()); });
  BOOST_TEST(std::string(e.what()) == file.path() + ":2: field 'tensor_map.dtype': expected one of: " +
                                          data_type_names() + "; got 'bf17'");
  e = expect_error([&] { map["interleave"].as_enum(parse_interleave, interleave_names()); });
  BOOST_TEST(e.problem() == "expected one of: none, 16B, 32B, got a list");
  e = expect_error([&] { map["interleave"].as_enum_or(Interleave::none, parse_interleave, interleave_names()); });
  BOOST_TEST(e.line() == 3);
  // A parse function with another shape, wrapped.
  auto parse_swizzle = [](const std::string& s) -> std::optional<std::pair<SwizzleMode, SwizzleAtom>> {
    SwizzleMode mode;
    SwizzleAtom atom;
    if (!parse_swizzle_name(s, mode, atom)) return std::nullopt;
    return std::make_pair(mode, atom);
  };
  TempYaml ok("swizzle: 128B_atom_32B\n");
  auto swizzle = ok.load().root()["swizzle"].as_enum(parse_swizzle, swizzle_names());
  BOOST_TEST((swizzle.first == SwizzleMode::b128 && swizzle.second == SwizzleAtom::b32));
}

BOOST_AUTO_TEST_CASE(unknown_and_duplicate_keys) {
  TempYaml file(
      "tensor_map:\n"       // 1
      "  mode: tiled\n"     // 2
      "  swizle: 128B\n"    // 3
      "op:\n"               // 4
      "  kind: load\n"      // 5
      "  kind: store\n");   // 6
  YamlField root = file.load().root();
  YamlError e = expect_error([&] { root["tensor_map"].check_keys({"mode", "swizzle"}); });
  BOOST_TEST(std::string(e.what()) ==
             file.path() + ":3: field 'tensor_map.swizle': unknown key 'swizle' (allowed: mode, swizzle)");
  BOOST_TEST(e.line() == 3);
  e = expect_error([&] { root["op"].check_keys({"kind"}); });
  BOOST_TEST(e.line() == 6);
  BOOST_TEST(e.problem() == "key 'kind' appears twice (first on line 5)");
  root["missing"].check_keys({"a"});  // nothing to check
}

BOOST_AUTO_TEST_CASE(shape_errors) {
  TempYaml file("tensor_map: 5\nlist: [1, 2]\n");
  YamlField root = file.load().root();
  YamlError e = expect_error([&] { (void)root["tensor_map"]["rank"]; });
  BOOST_TEST(std::string(e.what()) == file.path() + ":1: field 'tensor_map': expected a mapping, got '5'");
  e = expect_error([&] { root["list"].keys(); });
  BOOST_TEST(e.problem() == "expected a mapping, got a list");
  e = expect_error([&] { root["list"].check_keys({"a"}); });
  BOOST_TEST(e.line() == 2);
  // Caller-made errors carry the field's place.
  e = root["list"].error("has 2 entries but rank is 3");
  BOOST_TEST(std::string(e.what()) == file.path() + ":2: field 'list': has 2 entries but rank is 3");
}

BOOST_AUTO_TEST_CASE(parse_errors_carry_file_and_line) {
  TempYaml file(
      "a: 1\n"          // 1
      "b: [1, 2\n"      // 2
      "c: 3\n");        // 3
  YamlError e = expect_error([&] { file.load(); });
  BOOST_TEST(e.file() == file.path());
  BOOST_TEST(e.line() >= 2);
  BOOST_TEST(e.field().empty());
  BOOST_TEST(e.problem().find("YAML syntax error") == 0u);
  BOOST_TEST(std::string(e.what()).find(file.path() + ":" + std::to_string(e.line()) + ": YAML syntax error") == 0u);

  TempYaml tabs("a:\n  b: 1\n c: 2\n");  // bad indentation
  e = expect_error([&] { tabs.load(); });
  BOOST_TEST(e.line() == 3);

  e = expect_error([&] { YamlDoc::parse("x: [", "inline.yaml"); });
  BOOST_TEST(e.file() == "inline.yaml");
}

BOOST_AUTO_TEST_CASE(unreadable_file) {
  YamlError e = expect_error([] { YamlDoc::load("/nonexistent/dir/case.yaml"); });
  BOOST_TEST(e.file() == "/nonexistent/dir/case.yaml");
  BOOST_TEST(e.line() == 0);
  BOOST_TEST(std::string(e.what()).find("/nonexistent/dir/case.yaml: cannot open file") == 0u);
}

BOOST_AUTO_TEST_CASE(empty_document) {
  TempYaml file("");
  YamlField root = file.load().root();
  BOOST_TEST(root.is_null());
  YamlError e = expect_error([&] { root["schema"].as_string(); });
  BOOST_TEST(e.line() == 1);
  BOOST_TEST(e.problem() == "required field is missing from the top level");
}
