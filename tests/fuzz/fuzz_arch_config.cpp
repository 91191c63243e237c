// libFuzzer harness: the architecture loader (tb/arch_config_yaml.h, load_arch_config) on any
// text, and apply_arch_overrides (tma-sim --arch-set) with the "#@set FIELD=VALUE" trailer
// lines on the defaults. A bad file must give YamlError, a bad override std::runtime_error;
// anything else, a crash, undefined behaviour or an accepted value outside a field's range
// is a finding.
#include <cmath>
#include <cstdint>
#include <exception>
#include <stdexcept>

#include "tma/config/arch_config_yaml.h"
#include "fuzz_support.h"
#include "tma/config/yaml_reader.h"

namespace {

// Every accepted value must be a number in range: arch_fields prints each one.
void check_fields(const tma::ArchConfig& a) {
  for (const auto& [name, value] : tma::arch_fields(a))
    if (value == "nan" || value == "-nan" || value == "inf" || value == "-inf")
      tma::fuzz::fail("architecture field " + name + " accepted as " + value);
  if (!(a.sm_clock_mhz > 0) || !(a.dram.bytes_per_cycle > 0)) tma::fuzz::fail("non-positive rate accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tma;
  const fuzz::TextInput in = fuzz::parse_text_input(data, size);
  const std::string path = fuzz::temp_dir() + "/arch.yaml";
  fuzz::write_file(path, in.text.data(), in.text.size());
  try {
    check_fields(load_arch_config(path));
  } catch (const YamlError&) {
    // the expected refusal
  } catch (const std::exception& e) {
    fuzz::fail(std::string("load_arch_config threw something other than YamlError: ") + e.what());
  }
  if (!in.overrides.empty()) {
    ArchConfig a;
    try {
      apply_arch_overrides(a, in.overrides);
      check_fields(a);
    } catch (const YamlError& e) {
      fuzz::fail(std::string("apply_arch_overrides threw YamlError: ") + e.what());
    } catch (const std::runtime_error&) {
      // the expected refusal
    } catch (const std::exception& e) {
      fuzz::fail(std::string("apply_arch_overrides threw ") + e.what());
    }
  }
  return 0;
}
