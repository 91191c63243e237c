// The scoreboard: every operation the pipeline runs is run again by the reference engine on
// the same inputs (global memory and shared memory as they were just before it), and the results
// compared byte for byte: the box's shared-memory region for loads (in every multicast
// destination), the touched global window for stores and reductions, the outcome and the
// complete_tx count. The first difference of each failing operation is kept.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tma/gpu/gpu_system.h"
#include "tma/reference/reference_engine.h"

namespace tma {

class Scoreboard : public OpObserver {
 public:
  Scoreboard(GpuSystem& gpu, GpuArch arch, size_t max_reports = 20);
  void op_starting(int sm, const TmaCommand& cmd, const TensorMap& map) override;
  void op_finished(int sm, const OpRecord& rec) override;

  uint64_t checked() const { return checked_; }
  uint64_t mismatches() const { return mismatches_; }
  uint64_t bytes_compared() const { return bytes_compared_; }
  const std::vector<std::string>& reports() const { return reports_; }

 private:
  struct Snapshot {
    std::vector<uint8_t> global;        // the packed global bytes the operation can touch
    uint32_t smem_lo = 0;
    std::vector<uint8_t> smem;          // [smem_lo, smem_lo + size) of the issuing SM
  };
  void fail(const OpRecord& rec, int sm, const std::string& what);

  GpuSystem& gpu_;
  GpuArch arch_;
  size_t max_reports_;
  std::unordered_map<uint64_t, Snapshot> open_;  // by op id
  std::vector<uint8_t> scratch_smem_;
  uint64_t checked_ = 0, mismatches_ = 0, bytes_compared_ = 0;
  std::vector<std::string> reports_;
};

}  // namespace tma
