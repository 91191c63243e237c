// Expands a scenario's workload into each SM's program: a sequence of pipeline steps, each the
// TMA operations that fill one shared-memory stage, the consumer's compute time on it, and the
// operations the consumer issues afterwards (output stores).
#pragma once

#include <cstdint>
#include <vector>

#include "arch_config.h"
#include "scenario.h"
#include "tlm_payloads.h"

namespace tma {

struct IssueOp {
  TmaCommand cmd;  // op, descriptor address, cta mask (mbarrier and op_id set by the issuer)
};

struct Step {
  std::vector<IssueOp> loads;          // issued by the producer into the step's stage
  uint32_t expected_completions = 0;   // completions the stage waits for (own loads + multicasts received)
  uint32_t compute_cycles = 0;
  std::vector<IssueOp> after;          // issued by the consumer when the step is done (stores)
};

struct SmProgram {
  std::vector<IssueOp> prologue;       // descriptor prefetches
  std::vector<Step> steps;
};

// Shared-memory bytes a box of this descriptor occupies (rows x padded pitch).
uint64_t box_smem_bytes(const TensorMap& m);

// One program per SM. Throws std::runtime_error when the workload does not fit (a stage larger
// than shared memory, tiles that do not divide the problem...).
std::vector<SmProgram> build_programs(const Scenario& s, const ArchConfig& arch);

}  // namespace tma
