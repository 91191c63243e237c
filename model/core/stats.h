// Statistics: every module that counts something implements StatsProvider; one walk of the
// SystemC object hierarchy collects them as JSON keyed by module path.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tma {

// A flat, ordered set of named values for one module.
class StatsRecord {
 public:
  void add(const std::string& name, double value) { values_.emplace_back(name, value); }
  void add(const std::string& name, uint64_t value) { values_.emplace_back(name, static_cast<double>(value)); }
  void add(const std::string& name, int value) { values_.emplace_back(name, static_cast<double>(value)); }
  const std::vector<std::pair<std::string, double>>& values() const { return values_; }

 private:
  std::vector<std::pair<std::string, double>> values_;
};

class StatsProvider {
 public:
  virtual ~StatsProvider() = default;
  virtual void collect_stats(StatsRecord& out) const = 0;
};

// Requests in flight over time, for waveforms (the VCD's L2 and DRAM occupancies). A module adds
// each request's [begin, end) cycles when it times it, ahead of SystemC time and in any order;
// in_flight(c) counts those begun at or before c that end after it. Queries must not go back in
// time: what ended before the last one is forgotten (memory stays bounded).
class OccupancyLog {
 public:
  void add(uint64_t begin, uint64_t end);
  uint64_t in_flight(uint64_t cycle);

 private:
  std::map<uint64_t, int64_t> changes_;  // cycle -> requests begun minus ended there
  int64_t current_ = 0;                  // in flight at queried_
  uint64_t queried_ = 0;
};

// Module path -> its record, for every StatsProvider in the elaborated hierarchy.
std::map<std::string, StatsRecord> collect_hierarchy_stats();

// Writes {"path": {"name": value, ...}, ...} with keys sorted, numbers printed exactly. The header's
// entries come first, in their order; their values are JSON text (json_number, json_string, an
// object...), written as they are.
void write_stats_json(std::ostream& out, const std::map<std::string, StatsRecord>& stats,
                      const std::vector<std::pair<std::string, std::string>>& header = {});

// JSON text of a number (whole numbers without a fraction, others to 6 significant digits; null
// for a NaN or an infinity, which JSON cannot write) and of a string (quoted, escaped).
std::string json_number(double v);
std::string json_string(const std::string& s);

// Sum of one counter over every module whose path ends in `suffix` (".tma.splitter", say).
double sum_stat(const std::map<std::string, StatsRecord>& stats, const std::string& suffix, const std::string& name);

}  // namespace tma
