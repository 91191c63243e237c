// libFuzzer harness: the trace reader (tb/trace.h, load_trace) on any text, with "#@set
// PATH=VALUE" trailer lines as overrides of the header's scenario (tma-sim run TRACE.jsonl --set).
// A bad trace or override must give YamlError (the reader's documented contract); an accepted one
// has a CTA for every grid entry and no step that expects fewer completions than it loads.
// Anything else, a crash or undefined behaviour is a finding.
#include <cstdint>
#include <exception>
#include <sstream>
#include <stdexcept>

#include "fuzz_support.h"
#include "tma/scenario/trace.h"
#include "tma/config/yaml_reader.h"

// tma_scenario links SystemC, whose library wants an sc_main.
int sc_main(int, char**) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tma;
  const fuzz::TextInput in = fuzz::parse_text_input(data, size);
  // The trailer lines are not JSON: they go, the rest is the trace.
  std::istringstream lines(in.text);
  std::string text;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("#@", 0) != 0) text += line + "\n";
  const std::string path = fuzz::temp_dir() + "/trace.jsonl";
  fuzz::write_file(path, text.data(), text.size());
  try {
    const Trace t = load_trace(path, in.overrides);
    if (t.launch.ctas.size() != t.launch.sm.size()) fuzz::fail("a CTA without an SM");
    for (const CtaProgram& p : t.launch.ctas)
      for (const Step& st : p.steps)
        if (st.expected_completions < st.loads.size()) fuzz::fail("a step expects fewer completions than it loads");
  } catch (const YamlError&) {
    // the expected refusal
  } catch (const std::exception& e) {
    fuzz::fail(std::string("load_trace threw ") + e.what());
  }
  return 0;
}
