// Chrome/Perfetto trace (JSON "traceEvents"): one track per SM with its operations (issue to
// completion) and one with its L2 requests. Times are in nanoseconds of simulated time.
// Requests beyond `max_request_events` are counted but not written, to bound the file.
#pragma once

#include <cstdio>
#include <string>

#include "tma_unit.h"
#include "trace_sink.h"

namespace tma {

class PerfettoTrace : public OpObserver, public RequestTraceSink {
 public:
  PerfettoTrace(const std::string& path, double clock_mhz, uint64_t max_request_events = 200000);
  ~PerfettoTrace() override;
  bool ok() const { return file_ != nullptr; }
  void op_finished(int sm, const OpRecord& rec) override;
  void l2_request(int sm, uint64_t op_id, uint64_t address, uint32_t bytes, MemAccess access, uint64_t issue_cycle,
                  uint64_t done_cycle) override;
  void name_track(int sm);

 private:
  void event(const char* name, const char* cat, int pid, int tid, uint64_t start_cycle, uint64_t end_cycle,
             const std::string& args);
  std::FILE* file_ = nullptr;
  double ns_per_cycle_;
  uint64_t max_requests_, requests_ = 0, events_ = 0;
  std::vector<bool> named_;
};

}  // namespace tma
