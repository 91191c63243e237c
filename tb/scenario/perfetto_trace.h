// Chrome/Perfetto trace (JSON "traceEvents"): one track per SM with its operations (issue to
// completion) and one with its L2 requests. Times are in nanoseconds of simulated time.
// L2 requests beyond `max_request_events` (0: no cap) are counted but not written, to bound the
// file; the trace's "metadata" (and the run summary) say how many were dropped.
#pragma once

#include <cstdio>
#include <string>

#include "tma/tma/tma_unit.h"
#include "tma/core/trace_sink.h"

namespace tma {

class PerfettoTrace : public OpObserver, public RequestTraceSink {
 public:
  static constexpr uint64_t kDefaultMaxRequestEvents = 200000;
  PerfettoTrace(const std::string& path, double clock_mhz, uint64_t max_request_events = kDefaultMaxRequestEvents);
  ~PerfettoTrace() override;
  bool ok() const { return file_ != nullptr; }
  void op_finished(int sm, const OpRecord& rec) override;
  void l2_request(int sm, uint64_t op_id, uint64_t address, uint32_t bytes, MemAccess access, uint64_t issue_cycle,
                  uint64_t done_cycle) override;
  void name_track(int sm);
  uint64_t op_events() const { return ops_; }
  uint64_t request_events() const { return requests_; }  // seen, written or not
  uint64_t dropped_request_events() const { return dropped(); }
  uint64_t max_request_events() const { return max_requests_; }

 private:
  void event(const char* name, const char* cat, int pid, int tid, uint64_t start_cycle, uint64_t end_cycle,
             const std::string& args);
  uint64_t dropped() const { return max_requests_ && requests_ > max_requests_ ? requests_ - max_requests_ : 0; }
  std::FILE* file_ = nullptr;
  double ns_per_cycle_;
  uint64_t max_requests_, requests_ = 0, events_ = 0, ops_ = 0;
  std::vector<bool> named_;
};

}  // namespace tma
