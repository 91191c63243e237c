#include "tma/core/stats.h"

#include <systemc>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tma {

namespace {

void walk(const sc_core::sc_object* obj, std::map<std::string, StatsRecord>& out) {
  if (auto* p = dynamic_cast<const StatsProvider*>(obj)) {
    StatsRecord r;
    p->collect_stats(r);
    out[obj->name()] = std::move(r);
  }
  for (const sc_core::sc_object* child : obj->get_child_objects()) walk(child, out);
}

}  // namespace

std::string json_number(double v) {
  char buf[64];
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (std::isfinite(v))
    std::snprintf(buf, sizeof buf, "%.6g", v);
  else
    std::snprintf(buf, sizeof buf, "null");
  return buf;
}

std::string json_string(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {  // control characters (a newline in a description)
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      q += buf;
    } else {
      q += c;
    }
  }
  return q + "\"";
}

std::map<std::string, StatsRecord> collect_hierarchy_stats() {
  std::map<std::string, StatsRecord> out;
  for (const sc_core::sc_object* top : sc_core::sc_get_top_level_objects()) walk(top, out);
  return out;
}

void write_stats_json(std::ostream& out, const std::map<std::string, StatsRecord>& stats,
                      const std::vector<std::pair<std::string, std::string>>& header) {
  out << "{\n";
  bool first = true;
  for (const auto& [k, v] : header) {
    out << (first ? "" : ",\n") << "  " << json_string(k) << ": " << v;
    first = false;
  }
  for (const auto& [path, rec] : stats) {
    out << (first ? "" : ",\n") << "  " << json_string(path) << ": {";
    bool f2 = true;
    for (const auto& [name, value] : rec.values()) {
      out << (f2 ? "" : ", ") << json_string(name) << ": " << json_number(value);
      f2 = false;
    }
    out << "}";
    first = false;
  }
  out << "\n}\n";
}

void OccupancyLog::add(uint64_t begin, uint64_t end) {
  if (end <= begin || end <= queried_) return;
  if (begin <= queried_) ++current_;  // begun before the last query (late news): in flight from now
  else ++changes_[begin];
  --changes_[end];
}

uint64_t OccupancyLog::in_flight(uint64_t cycle) {
  for (auto it = changes_.begin(); it != changes_.end() && it->first <= cycle; it = changes_.erase(it))
    current_ += it->second;
  queried_ = std::max(queried_, cycle);
  return current_ > 0 ? static_cast<uint64_t>(current_) : 0;
}

double sum_stat(const std::map<std::string, StatsRecord>& stats, const std::string& suffix, const std::string& name) {
  double sum = 0;
  for (const auto& [path, rec] : stats) {
    if (path.size() < suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    for (const auto& [n, v] : rec.values())
      if (n == name) sum += v;
  }
  return sum;
}

}  // namespace tma
