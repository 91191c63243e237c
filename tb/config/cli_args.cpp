#include "tma/config/cli_args.h"

#include "tma/config/arch_config_yaml.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tma::cli {

namespace {

template <typename T>
std::string range_text(T min, T max) {
  std::ostringstream s;
  s << "[" << min << ", " << max << "]";
  return s.str();
}

}  // namespace

uint64_t parse_uint(const std::string& what, const std::string& text, uint64_t min, uint64_t max) {
  const char* p = text.data();
  const char* end = p + text.size();
  int base = 10;
  if (text.size() > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  }
  uint64_t v = 0;
  // from_chars takes no sign, blank or prefix of its own: what it stops at is the text's fault.
  const auto [stop, ec] = std::from_chars(p, end, v, base);
  const bool number = p != end && ec != std::errc::invalid_argument && stop == end;
  if (!number || ec == std::errc::result_out_of_range || v < min || v > max)
    throw UsageError(what + ": expected a whole number in " + range_text(min, max) + ", got '" + text + "'");
  return v;
}

double parse_double(const std::string& what, const std::string& text, double min, double max) {
  const char* p = text.data();
  const char* end = p + text.size();
  double v = 0;
  const auto [stop, ec] = std::from_chars(p, end, v);
  const bool number = p != end && ec == std::errc() && stop == end && std::isfinite(v);
  if (!number || v < min || v > max)
    throw UsageError(what + ": expected a number in " + range_text(min, max) + ", got '" + text + "'");
  return v;
}

std::string ArgList::value(const std::string& name) {
  if (done()) throw UsageError("option " + name + " needs a value");
  return next();
}

void print_error(const std::string& message) { std::fprintf(stderr, "tma-sim: error: %s\n", message.c_str()); }

void print_warning(const std::string& message) { std::fprintf(stderr, "tma-sim: warning: %s\n", message.c_str()); }

int usage_error(const std::string& command, const std::string& message, const char* usage) {
  print_error(message);
  const std::string u = usage;
  std::fprintf(stderr, "%s\nRun 'tma-sim help %s' for what each option does.\n", u.substr(0, u.find("\n\n")).c_str(),
               command.c_str());
  return 2;
}

void check_engine_options(const std::string& engine, const std::string& arch_path,
                          const std::vector<std::string>& arch_sets) {
  if (engine != "ref" && engine != "tlm") throw UsageError("unknown engine '" + engine + "' (ref, tlm)");
  // The reference engine has no architecture: an --arch it would ignore is a mistake.
  if (engine == "ref" && (!arch_path.empty() || !arch_sets.empty()))
    throw UsageError("--arch and --arch-set need --engine tlm (the reference engine has no architecture)");
}

bool load_engine_arch(const std::string& engine, const std::string& arch_path, const std::vector<std::string>& arch_sets,
                      ArchConfig& arch) {
  if (engine != "tlm") return true;
  try {
    arch = load_arch_for_command(arch_path, kDefaultArchFile, arch_sets);
    return true;
  } catch (const std::exception& e) {
    print_error(e.what());
    return false;
  }
}

}  // namespace tma::cli
