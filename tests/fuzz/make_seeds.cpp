// Seed maker for the binary-input harnesses: reads golden cases and writes, per case, the inputs
// of fuzz_validation (its map and a global base), fuzz_descriptor_codec (the project encoding of
// the map, when it has one) and fuzz_reference_engine (map, operation, images as the case ran).
// tests/fuzz/make_corpora.sh runs it at fuzz time; nothing it writes is committed.
//
//   make_seeds OUT_DIR GOLDEN_PATH...    (files or folders; writes OUT_DIR/<harness>/<case name>)
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "tma/descriptor/descriptor_codec.h"
#include "fuzz_support.h"
#include "tma/golden/golden_case.h"
#include "tma/config/yaml_reader.h"

int main(int argc, char** argv) {
  using namespace tma;
  namespace fs = std::filesystem;
  if (argc < 3) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR GOLDEN_PATH...\n");
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* h : {"validation", "descriptor_codec", "reference_engine"}) fs::create_directories(out / h);
  const std::vector<std::string> cases = find_golden_cases(std::vector<std::string>(argv + 2, argv + argc));
  size_t written = 0;
  for (const std::string& path : cases) {
    GoldenCase c;
    try {
      c = load_golden_case(path);
    } catch (const YamlError& e) {
      std::fprintf(stderr, "make_seeds: skipping %s\n", e.what());
      continue;
    }
    const std::string name = fs::path(path).stem().string();
    fuzz::Writer v;
    fuzz::write_map(v, c.map);
    v.uint(0x7F0000000000ull, 8);
    fuzz::write_file((out / "validation" / name).string(), v.bytes.data(), v.bytes.size());
    try {
      const auto d = encode_descriptor(c.map);
      fuzz::write_file((out / "descriptor_codec" / name).string(), d.data(), d.size());
    } catch (const std::invalid_argument&) {
      // a refused map may have no encoding
    }
    fuzz::EngineInput in;
    in.map = c.map;
    in.op = c.op;
    in.sm100 = c.arch == GpuArch::sm100;
    in.global_size = static_cast<uint32_t>(std::min<uint64_t>(c.global_size, fuzz::EngineInput::kMaxGlobal));
    in.smem_size = 228 * 1024;
    in.smem_fill_seed = c.smem_fill_seed;
    fuzz::Writer e;
    fuzz::write_engine_input(e, in);
    fuzz::write_file((out / "reference_engine" / name).string(), e.bytes.data(), e.bytes.size());
    ++written;
  }
  std::printf("make_seeds: %zu cases written under %s\n", written, out.c_str());
  return 0;
}
