// The golden-case loader (tma-golden/1): a well-formed case reads back field for field, and every
// malformed one is refused with the file, the line and the field that is wrong.
#define BOOST_TEST_MODULE golden_case
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tma/golden/golden_case.h"
#include "tma/config/yaml_reader.h"

using namespace tma;
namespace fs = std::filesystem;

namespace {

// A load case as the capture tool writes it; line numbers in the comments are what errors name.
const char* kLoadCase =
    "schema: tma-golden/1\n"              // 1
    "name: g1\n"                          // 2
    "origin: test\n"                      // 3
    "global:\n"                           // 4
    "  fill: word_hash\n"                 // 5
    "  size: 65536\n"                     // 6
    "tensor_map:\n"                       // 7
    "  mode: tiled\n"                     // 8
    "  dtype: u16\n"                      // 9
    "  rank: 2\n"                         // 10
    "  base: 256\n"                       // 11
    "  dims: [40, 9]\n"                   // 12
    "  strides: [96]\n"                   // 13
    "  box: [16, 4]\n"                    // 14
    "  element_strides: [1, 1]\n"         // 15
    "  interleave: none\n"                // 16
    "  swizzle: none\n"                   // 17
    "  l2_promotion: 128B\n"              // 18
    "  oob_fill: zero\n"                  // 19
    "op:\n"                               // 20
    "  kind: load\n"                      // 21
    "  coords: [32, 7]\n"                 // 22
    "  smem_addr: 1024\n"                 // 23
    "expect:\n"                           // 24
    "  outcome: ok\n"                     // 25
    "  smem_bytes: 1152\n"                // 26
    "  smem_image: g1.smem\n"             // 27
    "  tx_bytes: 128\n"                   // 28
    "driver_descriptor: g1.desc\n"        // 29
    "silicon:\n"                          // 30
    "  cold_cycles: 1126\n"               // 31
    "  warm_cycles: 700\n";               // 32

// A folder holding one case and the binaries it names; removed when the test ends.
class CaseDir {
 public:
  explicit CaseDir(const std::string& yaml, uint64_t smem_size = 1152, uint64_t desc_size = 128) {
    static int counter = 0;
    dir_ = fs::temp_directory_path() /
           ("tma_golden_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir_);
    path_ = (dir_ / "g1.yaml").string();
    std::ofstream(path_) << yaml;
    write_bytes("g1.smem", smem_size, 0x5a);
    write_bytes("g1.desc", desc_size, 0x11);
  }
  ~CaseDir() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  void write_bytes(const std::string& name, uint64_t size, uint8_t value) const {
    std::ofstream out(dir_ / name, std::ios::binary);
    for (uint64_t i = 0; i < size; ++i) out.put(static_cast<char>(value));
  }
  const std::string& path() const { return path_; }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
  std::string path_;
};

// kLoadCase with the line that starts with `prefix` replaced by `line` ("" deletes it).
std::string edit(const std::string& prefix, const std::string& line, const std::string& base = kLoadCase) {
  std::string out;
  size_t pos = 0;
  bool found = false;
  while (pos < base.size()) {
    const size_t end = base.find('\n', pos);
    const std::string current = base.substr(pos, end - pos);
    if (!found && current.rfind(prefix, 0) == 0) {
      found = true;
      if (!line.empty()) out += line + "\n";
    } else {
      out += current + "\n";
    }
    pos = end + 1;
  }
  BOOST_REQUIRE_MESSAGE(found, "no line starts with '" + prefix + "'");
  return out;
}

// Loads `yaml` (with binaries of the given sizes) and returns the YamlError it must raise.
YamlError load_error(const std::string& yaml, uint64_t smem_size = 1152, uint64_t desc_size = 128) {
  CaseDir dir(yaml, smem_size, desc_size);
  try {
    load_golden_case(dir.path());
  } catch (const YamlError& e) {
    BOOST_TEST(e.file() == dir.path());
    return e;
  }
  BOOST_FAIL("the case loaded without an error");
  throw std::logic_error("unreachable");
}

}  // namespace

BOOST_AUTO_TEST_CASE(reads_every_field) {
  CaseDir dir(kLoadCase);
  const GoldenCase c = load_golden_case(dir.path());
  BOOST_TEST(c.name == "g1");
  BOOST_TEST(c.origin == "test");
  BOOST_TEST((c.arch == GpuArch::sm90));
  BOOST_TEST(c.global_size == 65536u);
  BOOST_TEST((c.map.mode == TensorMode::tiled));
  BOOST_TEST((c.map.dtype == DataType::u16));
  BOOST_TEST(c.map.rank == 2);
  BOOST_TEST(c.map.dims[0] == 40u);
  BOOST_TEST(c.map.dims[1] == 9u);
  BOOST_TEST(c.map.strides[0] == 96u);
  BOOST_TEST(c.map.box[0] == 16u);
  BOOST_TEST((c.map.l2_promotion == L2Promotion::b128));
  BOOST_TEST((c.op.kind == OpKind::load));
  BOOST_TEST(c.op.coords[0] == 32);
  BOOST_TEST(c.op.coords[1] == 7);
  BOOST_TEST(c.op.smem_addr == 1024u);
  BOOST_TEST((c.outcome == Outcome::ok));
  BOOST_TEST(c.smem_bytes == 1152u);
  BOOST_TEST(c.smem_image.size() == 1152u);
  BOOST_TEST(c.smem_image[1151] == 0x5a);
  BOOST_TEST(c.tx_bytes.value() == 128u);
  BOOST_TEST(c.driver_descriptor.size() == 128u);
  BOOST_TEST(c.cold_cycles.value() == 1126u);
  BOOST_TEST(c.warm_cycles.value() == 700u);
  BOOST_TEST(!c.has_global_window);
}

BOOST_AUTO_TEST_CASE(optional_fields_may_be_left_out) {
  std::string yaml = edit("driver_descriptor:", "");
  yaml = edit("silicon:", "", yaml);
  yaml = edit("  cold_cycles:", "", yaml);
  yaml = edit("  warm_cycles:", "", yaml);
  yaml = edit("  tx_bytes:", "", yaml);
  yaml = edit("origin:", "", yaml);
  CaseDir dir(yaml);
  const GoldenCase c = load_golden_case(dir.path());
  BOOST_TEST(c.driver_descriptor.empty());
  BOOST_TEST(!c.cold_cycles.has_value());
  BOOST_TEST(!c.tx_bytes.has_value());
  BOOST_TEST(c.origin.empty());
}

BOOST_AUTO_TEST_CASE(refusals_name_no_image) {
  // A refused descriptor or a fault has no image: smem_bytes and smem_image are not read.
  std::string yaml = edit("  outcome:", "  outcome: encode_error");
  yaml = edit("  smem_image:", "  smem_image: nowhere.smem", yaml);
  CaseDir dir(yaml);
  const GoldenCase c = load_golden_case(dir.path());
  BOOST_TEST((c.outcome == Outcome::encode_error));
  BOOST_TEST(c.smem_image.empty());
}

BOOST_AUTO_TEST_CASE(missing_fields) {
  YamlError e = load_error(edit("  outcome:", ""));
  BOOST_TEST(e.field() == "expect.outcome");
  BOOST_TEST(e.line() == 24);
  BOOST_TEST(e.problem() == "required field is missing from 'expect'");

  e = load_error(edit("  dims:", ""));
  BOOST_TEST(e.field() == "tensor_map.dims");
  BOOST_TEST(e.line() == 7);

  e = load_error(edit("schema:", ""));
  BOOST_TEST(e.field() == "schema");

  e = load_error(edit("  smem_image:", ""));
  BOOST_TEST(e.field() == "expect.smem_image");
}

BOOST_AUTO_TEST_CASE(ill_typed_fields) {
  YamlError e = load_error(edit("  size:", "  size: big"));
  BOOST_TEST(e.field() == "global.size");
  BOOST_TEST(e.line() == 6);
  BOOST_TEST(e.problem() == "expected a non-negative integer, got 'big'");

  e = load_error(edit("  coords:", "  coords: 32"));
  BOOST_TEST(e.field() == "op.coords");
  BOOST_TEST(e.line() == 22);

  e = load_error(edit("  tx_bytes:", "  tx_bytes: [1, 2]"));
  BOOST_TEST(e.field() == "expect.tx_bytes");
  BOOST_TEST(e.problem() == "expected a non-negative integer, got a list");

  e = load_error(edit("  warm_cycles:", "  warm_cycles: -5"));
  BOOST_TEST(e.field() == "silicon.warm_cycles");
  BOOST_TEST(e.line() == 32);
}

BOOST_AUTO_TEST_CASE(unknown_names) {
  YamlError e = load_error(edit("  dtype:", "  dtype: bf17"));
  BOOST_TEST(e.field() == "tensor_map.dtype");
  BOOST_TEST(e.line() == 9);
  BOOST_TEST(e.problem().find("got 'bf17'") != std::string::npos);

  e = load_error(edit("  outcome:", "  outcome: trap"));
  BOOST_TEST(e.field() == "expect.outcome");
  BOOST_TEST(e.problem() == "expected one of: ok, encode_error, fault; got 'trap'");

  e = load_error(edit("schema:", "schema: tma-golden/2"));
  BOOST_TEST(e.problem() == "expected 'tma-golden/1', got 'tma-golden/2'");

  e = load_error(edit("  fill:", "  fill: zeros"));
  BOOST_TEST(e.field() == "global.fill");

  // A misspelt key is an error, not a silently ignored field.
  e = load_error(edit("  oob_fill:", "  oob_fil: zero"));
  BOOST_TEST(e.line() == 19);
  BOOST_TEST(e.problem().find("oob_fil") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(values_out_of_range) {
  YamlError e = load_error(edit("  smem_bytes:", "  smem_bytes: 2000000"));
  BOOST_TEST(e.field() == "expect.smem_bytes");
  BOOST_TEST(e.line() == 26);
  BOOST_TEST(e.problem() == "value 2000000 is outside the allowed range [0, 1048576]");

  e = load_error(edit("  size:", "  size: 99999999999999"));
  BOOST_TEST(e.field() == "global.size");

  // A list whose length disagrees with the rank.
  e = load_error(edit("  box:", "  box: [16]"));
  BOOST_TEST(e.field() == "tensor_map.box");
  BOOST_TEST(e.line() == 14);
}

BOOST_AUTO_TEST_CASE(binary_files) {
  // The image must exist and hold exactly smem_bytes bytes.
  YamlError e = load_error(edit("  smem_image:", "  smem_image: absent.smem"));
  BOOST_TEST(e.field() == "expect.smem_image");
  BOOST_TEST(e.line() == 27);
  BOOST_TEST(e.problem().find("cannot read") != std::string::npos);

  e = load_error(kLoadCase, 1000);
  BOOST_TEST(e.field() == "expect.smem_image");
  BOOST_TEST(e.problem().find("has 1000 bytes, expected 1152") != std::string::npos);

  e = load_error(kLoadCase, 1152, 64);
  BOOST_TEST(e.field() == "driver_descriptor");
  BOOST_TEST(e.problem().find("expected 128") != std::string::npos);

  // A folder is not an image.
  e = load_error(edit("  smem_image:", "  smem_image: ."));
  BOOST_TEST(e.problem().find("not a regular file") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(stores_need_the_smem_fill) {
  std::string store = edit("  kind:", "  kind: store");
  YamlError e = load_error(store);
  BOOST_TEST(e.field() == "op");
  BOOST_TEST(e.problem().find("smem_fill") != std::string::npos);

  // With the fill and a global window the store case loads.
  store = edit("  smem_addr:", "  smem_addr: 1024\n  smem_fill: {fill: word_hash, seed: 7, size: 128}", store);
  store = edit("  smem_bytes:", "  global_window: {offset: 256, size: 512, image: g1.smem}", store);
  store = edit("  smem_image:", "", store);
  store = edit("  tx_bytes:", "", store);
  {
    CaseDir dir(store, 512);
    const GoldenCase c = load_golden_case(dir.path());
    BOOST_TEST(c.has_smem_fill);
    BOOST_TEST(c.smem_fill_seed == 7u);
    BOOST_TEST(c.smem_fill_size == 128u);
    BOOST_TEST(c.has_global_window);
    BOOST_TEST(c.global_window_offset == 256u);
    BOOST_TEST(c.global_window.size() == 512u);
  }
  // A window that runs past the global image is refused.
  e = load_error(edit("  global_window:", "  global_window: {offset: 65500, size: 512, image: g1.smem}", store), 512);
  BOOST_TEST(e.field() == "expect.global_window.size");
}

BOOST_AUTO_TEST_CASE(word_hash_fill) {
  // word i = i * 2654435761 + 0x12345 (mod 2^32), little-endian; the seed shifts the index.
  const std::vector<uint8_t> img = word_hash_image(10);
  BOOST_TEST(img.size() == 10u);
  BOOST_TEST(img[0] == 0x45);
  BOOST_TEST(img[1] == 0x23);
  BOOST_TEST(img[2] == 0x01);
  BOOST_TEST(img[3] == 0x00);
  const uint32_t w1 = 2654435761u + 0x12345u;
  BOOST_TEST(img[4] == (w1 & 0xff));
  BOOST_TEST(img[7] == (w1 >> 24));
  const std::vector<uint8_t> seeded = word_hash_image(8, 1);
  BOOST_TEST(seeded[0] == img[4]);
}

BOOST_AUTO_TEST_CASE(finds_cases_in_folders_sorted) {
  CaseDir dir(kLoadCase);
  fs::create_directories(dir.dir() / "sub");
  std::ofstream(dir.dir() / "sub" / "a.yaml") << "x: 1\n";
  std::ofstream(dir.dir() / "notes.txt") << "not a case\n";
  const std::vector<std::string> found = find_golden_cases({dir.dir().string()});
  BOOST_TEST_REQUIRE(found.size() == 2u);
  BOOST_TEST(found[0] == (dir.dir() / "g1.yaml").string());
  BOOST_TEST(found[1] == (dir.dir() / "sub" / "a.yaml").string());
}
