// The L2 requests in flight that the TMA units of one CPC share (GH100: a GPC's SMs come in CPCs
// of three TPCs, six SMs; a CPC with a disabled TPC has four). Each unit also keeps its own
// limit (tma.max_outstanding_requests); the pool (tma.cpc_outstanding_requests) is what the CPC's
// units have together, so when the memory system is saturated an SM of a 4-SM CPC keeps more
// requests in flight than one of a 6-SM CPC and takes a larger share: silicon's fast SMs
// (docs/calibration.md, "Which SMs run ahead"). The units run ahead of each other in simulated
// time (temporal decoupling): the pool sees their requests in the order they are issued by the
// simulator, within a quantum of time order.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace tma {

class CpcRequestPool {
 public:
  explicit CpcRequestPool(uint32_t capacity) : capacity_(capacity ? capacity : 1) {}
  // The cycle a request that could go at `earliest` goes: once fewer than the capacity are in
  // flight (a later one frees a slot when it completes).
  uint64_t admit(uint64_t earliest) {
    if (done_.size() < capacity_) return earliest;
    while (!done_.empty() && done_.top() <= earliest) done_.pop();
    if (done_.size() < capacity_) return earliest;
    const uint64_t t = done_.top();
    done_.pop();
    ++stalls_;
    return t;
  }
  // A request admitted has been answered at `done`.
  void add(uint64_t done) { done_.push(done); }
  uint64_t stalls() const { return stalls_; }

 private:
  uint32_t capacity_;
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> done_;  // completion cycles
  uint64_t stalls_ = 0;
};

}  // namespace tma
