// libFuzzer harness: the golden-case loader (tb/golden_case.h, load_golden_case) on any text.
// The input is written to case.yaml in a private folder, with a.bin and b.bin next to it when a
// "#@files A B" trailer line asks for them (so cases naming smem_image: a.bin, driver_descriptor:
// b.bin load through). A bad file must give YamlError: any other exception, a crash or undefined
// behaviour is a finding.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

#include "fuzz_support.h"
#include "tma/golden/golden_case.h"
#include "tma/config/yaml_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tma;
  const fuzz::TextInput in = fuzz::parse_text_input(data, size);
  const std::string dir = fuzz::temp_dir();
  const char* names[] = {"a.bin", "b.bin"};
  for (size_t i = 0; i < 2; ++i) {
    const std::string path = dir + "/" + names[i];
    if (i < in.file_sizes.size()) {
      const std::vector<uint8_t> bytes(in.file_sizes[i], 0x5A);
      fuzz::write_file(path, bytes.data(), bytes.size());
    } else {
      std::remove(path.c_str());
    }
  }
  const std::string path = dir + "/case.yaml";
  fuzz::write_file(path, in.text.data(), in.text.size());
  try {
    const GoldenCase c = load_golden_case(path);
    // What the loader promises of an accepted case.
    if (c.has_global_window && c.global_window_offset + c.global_window.size() > c.global_size)
      fuzz::fail("global window past the global image");
    if (!c.has_global_window && c.outcome == Outcome::ok && c.smem_image.size() != c.smem_bytes)
      fuzz::fail("smem image size differs from smem_bytes");
    if (!c.driver_descriptor.empty() && c.driver_descriptor.size() != 128) fuzz::fail("driver descriptor not 128 bytes");
  } catch (const YamlError&) {
    // the expected refusal
  } catch (const std::exception& e) {
    fuzz::fail(std::string("load_golden_case threw something other than YamlError: ") + e.what());
  }
  return 0;
}
