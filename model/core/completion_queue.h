// Completion cycles of requests in flight, smallest first: a multiset with push, top and pop,
// cheap when the values come nearly in order (as a unit's completions do).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tma {

// The outstanding requests' completion cycles, smallest first, as a few sorted runs (patience
// sorting): a completion joins the first run whose last value is not above it, so each run stays
// sorted and the smallest is the least of the runs' fronts. A unit's completions come nearly in
// issue order (issue cycle plus a latency of a few kinds: hits, misses), so there are one to a
// few runs and push and pop look at each once. A radix heap (before) redistributed each value
// several times (5% of the GEMM); a binary heap sifted 9 levels per pop (7%); one sorted deque
// paid a shift for every hit that overtook misses. Same multiset, same top and size.
class CompletionQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  uint64_t top() const { return runs_[least()].front(); }
  void pop() {
    const size_t r = least();
    runs_[r].pop_front();
    if (runs_[r].empty()) {  // the live runs stay first
      --live_;
      if (r != live_) std::swap(runs_[r], runs_[live_]);
    }
    --size_;
  }
  void push(uint64_t t) {
    ++size_;
    for (size_t r = 0; r < live_; ++r)
      if (runs_[r].back() <= t) {
        runs_[r].push_back(t);
        return;
      }
    if (live_ < kMaxRuns) {
      if (live_ == runs_.size()) runs_.emplace_back();
      runs_[live_++].push_back(t);  // an empty run kept from before, or a new one
      return;
    }
    runs_.front().insert_sorted(t);  // many runs already (not expected)
  }

 private:
  // One sorted run: a ring of a power-of-two capacity (kept when it empties: no allocation
  // once the unit has warmed up).
  struct Run {
    std::vector<uint64_t> v;
    size_t head = 0, count = 0;
    bool empty() const { return count == 0; }
    uint64_t front() const { return v[head]; }
    uint64_t back() const { return v[(head + count - 1) & (v.size() - 1)]; }
    void pop_front() {
      head = (head + 1) & (v.size() - 1);
      --count;
    }
    void push_back(uint64_t t) {
      if (count == v.size()) refill(values(), std::max<size_t>(16, 2 * v.size()));
      v[(head + count) & (v.size() - 1)] = t;
      ++count;
    }
    void insert_sorted(uint64_t t) {
      std::vector<uint64_t> all = values();
      all.insert(std::upper_bound(all.begin(), all.end(), t), t);
      refill(all, std::max<size_t>(16, v.size()));
    }
    std::vector<uint64_t> values() const {
      std::vector<uint64_t> all(count);
      for (size_t i = 0; i < count; ++i) all[i] = v[(head + i) & (v.size() - 1)];
      return all;
    }
    // The ring anew with `all` in order, at `capacity` (doubled until they fit).
    void refill(const std::vector<uint64_t>& all, size_t capacity) {
      while (capacity < all.size()) capacity *= 2;
      v.assign(capacity, 0);
      std::copy(all.begin(), all.end(), v.begin());
      head = 0;
      count = all.size();
    }
  };
  static constexpr size_t kMaxRuns = 8;
  size_t least() const {  // the live run with the smallest front (needs a value)
    size_t best = 0;
    for (size_t r = 1; r < live_; ++r)
      if (runs_[r].front() < runs_[best].front()) best = r;
    return best;
  }
  std::vector<Run> runs_;  // [0, live_) hold values, the rest are empty (their storage kept)
  size_t live_ = 0, size_ = 0;
};
}  // namespace tma
