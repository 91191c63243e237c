// Replaying golden cases: run each through an engine (the reference engine, or the TLM
// pipeline) and compare with what silicon did, byte for byte.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tma/golden/golden_case.h"

namespace tma {

// Runs one case's operation: `global` holds the case's global image, `smem` the shared memory
// before the operation (0xCD sentinel, or the store's fill). Returns the outcome and tx bytes.
using CaseEngine = std::function<OpResult(const GoldenCase&, std::vector<uint8_t>& global, std::vector<uint8_t>& smem)>;

struct CaseVerdict {
  bool passed = false;
  std::string message;  // for a failure: "NAME: first difference ..." (one line)
};

CaseVerdict check_case(const GoldenCase& c, const CaseEngine& engine);

// When the case carries the driver's CUtensorMap bytes: decodes them (model/driver_descriptor.h)
// and compares every field with the case's tensor_map. "" when they agree, else what differs.
std::string check_driver_descriptor(const GoldenCase& c);

// The reference engine as a CaseEngine.
OpResult run_reference(const GoldenCase& c, std::vector<uint8_t>& global, std::vector<uint8_t>& smem);

// Shared memory as the case says it was before the operation (capacity bytes).
std::vector<uint8_t> initial_smem(const GoldenCase& c, uint32_t capacity);

}  // namespace tma
