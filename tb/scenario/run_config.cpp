#include "tma/scenario/run_config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/core/stats.h"

namespace tma {

namespace {

// The JSON number a plain YAML scalar spells, or "" when it is not one.
std::string plain_number(const std::string& t) {
  if (t.empty()) return "";
  const char* s = t.c_str();
  char* end = nullptr;
  errno = 0;
  const bool hex = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X');
  const bool digits_only = t.find_first_not_of("0123456789", t[0] == '-' || t[0] == '+' ? 1 : 0) == std::string::npos;
  char buf[64];
  if (hex || digits_only) {
    if (t[0] == '-') {
      const long long v = std::strtoll(s, &end, hex ? 16 : 10);
      if (*end || errno) return "";
      std::snprintf(buf, sizeof buf, "%lld", v);
    } else {
      const unsigned long long v = std::strtoull(s, &end, hex ? 16 : 10);
      if (*end || errno) return "";
      std::snprintf(buf, sizeof buf, "%llu", v);
    }
    return buf;
  }
  // A decimal: digits, a point or an exponent, and nothing strtod reads beyond JSON (inf, nan, hex).
  if (t.find_first_not_of("0123456789+-.eE") != std::string::npos) return "";
  const double v = std::strtod(s, &end);
  if (*end || !std::isfinite(v)) return "";
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

std::string string_list(const std::vector<std::string>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + json_string(v[i]);
  return o + "]";
}

}  // namespace

std::string yaml_to_json(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence: {
      std::string o = "[";
      for (size_t i = 0; i < n.size(); ++i) o += (i ? ", " : "") + yaml_to_json(n[i]);
      return o + "]";
    }
    case YAML::NodeType::Map: {
      std::string o = "{";
      bool first = true;
      for (const auto& kv : n) {
        o += (first ? "" : ", ") + json_string(kv.first.Scalar()) + ": " + yaml_to_json(kv.second);
        first = false;
      }
      return o + "}";
    }
    case YAML::NodeType::Scalar: {
      const std::string& t = n.Scalar();
      if (n.Tag() == "!") return json_string(t);  // quoted: a string, whatever it spells
      if (t == "true" || t == "True" || t == "TRUE") return "true";
      if (t == "false" || t == "False" || t == "FALSE") return "false";
      if (t == "~" || t == "null" || t == "Null" || t == "NULL") return "null";
      const std::string num = plain_number(t);
      return num.empty() ? json_string(t) : num;
    }
    default: return "null";
  }
}

std::string run_config_json(const Scenario& s, const ArchConfig& arch, const RunOptions& o) {
  std::string scenario = "{\"file\": " + json_string(s.path) + ", \"overrides\": " + string_list(o.scenario_overrides) +
                         ", \"resolved\": " + yaml_to_json(scenario_document(s.path, o.scenario_overrides)) + "}";
  // Every architecture field, nested by its section ("l2.hit_latency" under "l2"), in file order.
  std::vector<std::string> sections;
  std::map<std::string, std::string> members;
  for (const auto& [path, value] : arch_fields(arch)) {
    const size_t dot = path.find('.');
    const std::string section = dot == std::string::npos ? "" : path.substr(0, dot);
    const std::string name = dot == std::string::npos ? path : path.substr(dot + 1);
    if (!section.empty() && !members.count(section)) sections.push_back(section);
    std::string& m = members[section];
    m += (m.empty() ? "" : ", ") + json_string(name) + ": " + value;
  }
  std::string fields = "{" + members[""];
  for (const std::string& sec : sections)
    fields += (fields.size() > 1 ? ", " : "") + json_string(sec) + ": {" + members[sec] + "}";
  fields += "}";
  std::string arch_json = "{\"file\": " + json_string(arch.source_file) + ", \"overrides\": " +
                          string_list(o.arch_overrides) + ", \"name\": " + json_string(arch.name) +
                          ", \"fields\": " + fields + "}";
  std::string options = "{\"scoreboard\": " + std::string(o.scoreboard ? "true" : "false") +
                        ", \"stats\": " + json_string(o.stats_path) + ", \"vcd\": " + json_string(o.vcd_path) +
                        ", \"vcd_sample_cycles\": " + json_number(o.vcd_sample_cycles) +
                        ", \"trace\": " + json_string(o.trace_path) +
                        ", \"trace_max_events\": " + json_number(static_cast<double>(o.trace_max_events)) + "}";
  return "{\"scenario\": " + scenario + ", \"arch\": " + arch_json + ", \"options\": " + options + "}";
}

}  // namespace tma
