// Where modules report individual requests for tracing (Chrome/Perfetto trace). Optional:
// a module with no sink attached reports nothing and pays nothing.
#pragma once

#include <cstdint>

#include "tma/core/tlm_payloads.h"

namespace tma {

class RequestTraceSink {
 public:
  virtual ~RequestTraceSink() = default;
  virtual void l2_request(int sm, uint64_t op_id, uint64_t address, uint32_t bytes, MemAccess access,
                          uint64_t issue_cycle, uint64_t done_cycle) = 0;
};

}  // namespace tma
