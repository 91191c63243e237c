// Model invariants, checked as the simulation runs: every accepted operation completes its
// mbarrier (or bulk group) exactly once per destination, no request or completion is lost or
// duplicated, and no queue grows past its configured depth. Every module that checks something
// reports here; a run with any violation fails. The checks are cheap and always on.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace tma {

class InvariantLog {
 public:
  void check(bool ok, const std::string& what) {
    ++checks_;
    if (!ok) violated(what);
  }
  // The same, the message made only when the check fails (a callable returning it): the checks
  // made per operation would otherwise build a string each time.
  template <typename Message, typename = std::enable_if_t<std::is_invocable_r_v<std::string, Message>>>
  void check(bool ok, Message&& what) {
    ++checks_;
    if (!ok) violated(what());
  }
  uint64_t checks() const { return checks_; }
  uint64_t violations() const { return violations_; }
  const std::vector<std::string>& first_violations() const { return first_; }

 private:
  void violated(const std::string& what) {
    ++violations_;
    if (first_.size() < 20) first_.push_back(what);
  }
  uint64_t checks_ = 0, violations_ = 0;
  std::vector<std::string> first_;
};

}  // namespace tma
