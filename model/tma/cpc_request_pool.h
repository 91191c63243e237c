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
#include <vector>

#include "tma/core/completion_queue.h"

namespace tma {

class CpcRequestPool {
 public:
  explicit CpcRequestPool(uint32_t capacity) : capacity_(capacity ? capacity : 1) {}
  // A unit joins the pool: its number in the pool, for add().
  uint32_t join() {
    members_.emplace_back();
    return static_cast<uint32_t>(members_.size() - 1);
  }
  // The cycle a request that could go at `earliest` goes: once fewer than the capacity are in
  // flight (a later one frees a slot when it completes).
  uint64_t admit(uint64_t earliest) {
    if (size_ < capacity_) return earliest;
    for (CompletionQueue& q : members_)
      while (!q.empty() && q.top() <= earliest) {
        q.pop();
        --size_;
      }
    if (size_ < capacity_) return earliest;
    CompletionQueue* least = nullptr;
    for (CompletionQueue& q : members_)
      if (!q.empty() && (!least || q.top() < least->top())) least = &q;
    const uint64_t t = least->top();
    least->pop();
    --size_;
    ++stalls_;
    return t;
  }
  // A request of unit `member` (a number join() gave) admitted has been answered at `done`.
  void add(uint32_t member, uint64_t done) {
    members_[member].push(done);
    ++size_;
  }
  uint64_t stalls() const { return stalls_; }

 private:
  uint32_t capacity_;
  // The completion cycles in flight, by unit: each unit's come nearly in order (one to a few
  // sorted runs), where the units' together come in simulator order, a quantum apart. The pool's
  // least is the least of its units' (four to six).
  std::vector<CompletionQueue> members_;
  size_t size_ = 0;
  uint64_t stalls_ = 0;
};

}  // namespace tma
