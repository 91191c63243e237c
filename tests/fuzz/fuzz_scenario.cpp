// libFuzzer harness: the scenario loader (tb/scenario.h, load_scenario) on any text, with the
// "#@set PATH=VALUE" trailer lines as overrides (tma-sim run --set). A bad file or override must
// give YamlError (the loader's documented contract; an override's own is an OverrideError).
// Anything else, a crash or undefined behaviour is a finding.
#include <cstdint>
#include <exception>
#include <stdexcept>

#include "fuzz_support.h"
#include "tma/scenario/scenario.h"
#include "tma/config/yaml_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tma;
  const fuzz::TextInput in = fuzz::parse_text_input(data, size);
  const std::string path = fuzz::temp_dir() + "/scenario.yaml";
  fuzz::write_file(path, in.text.data(), in.text.size());
  try {
    const Scenario s = load_scenario(path, in.overrides);
    if (s.sms == 0 || s.cluster_size == 0 || s.sms % s.cluster_size) fuzz::fail("inconsistent sms / cluster_size");
  } catch (const YamlError&) {
    // the expected refusal
  } catch (const std::exception& e) {
    fuzz::fail(std::string("load_scenario threw ") + e.what());
  }
  return 0;
}
