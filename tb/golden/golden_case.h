// A golden case (tma-golden/1, docs/golden-format.md): one TMA operation and what silicon did.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tma/reference/reference_engine.h"
#include "tma/descriptor/tensor_map.h"
#include "tma/descriptor/tma_op.h"

namespace tma {

struct GoldenCase {
  std::string path;  // the YAML file
  std::string name;
  std::string origin;
  GpuArch arch = GpuArch::sm90;
  uint64_t global_size = 0;  // bytes of the word_hash global image
  TensorMap map;
  TmaOp op;
  // Stores and reductions: shared memory before the operation, word i of [0, smem_fill_size)
  // = word_hash(i + smem_fill_seed); the rest holds the 0xCD sentinel.
  bool has_smem_fill = false;
  uint32_t smem_fill_seed = 0;
  uint32_t smem_fill_size = 0;

  Outcome outcome = Outcome::ok;
  // Loads (and prefetch): the shared-memory window [0, smem_bytes) after the operation.
  uint32_t smem_bytes = 0;
  std::vector<uint8_t> smem_image;
  std::optional<uint32_t> tx_bytes;
  // Stores and reductions: global bytes [global_window_offset, + size) after the operation.
  bool has_global_window = false;
  uint64_t global_window_offset = 0;
  std::vector<uint8_t> global_window;
  // The driver's CUtensorMap bytes, when captured.
  std::vector<uint8_t> driver_descriptor;
  std::optional<uint64_t> cold_cycles, warm_cycles;
};

// Reads a case and the binary files it names. Throws YamlError (file, line, field) on any problem.
GoldenCase load_golden_case(const std::string& path);

// word i (little-endian) = (i * 2654435761 + 0x12345) mod 2^32, for bytes [0, size).
std::vector<uint8_t> word_hash_image(uint64_t size, uint32_t seed = 0);

// Every *.yaml golden case under each path (a file or a folder, searched recursively), sorted.
std::vector<std::string> find_golden_cases(const std::vector<std::string>& paths);

}  // namespace tma
