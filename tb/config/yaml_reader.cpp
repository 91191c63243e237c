#include "tma/config/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

namespace tma {

namespace {

std::string format_what(const std::string& file, int line, const std::string& field, const std::string& problem) {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  if (!field.empty()) out += "field '" + field + "': ";
  return out + problem;
}

// yaml-cpp marks are 0-based; a null mark (nodes built in code) has line -1.
int line_of(const YAML::Mark& mark) { return mark.is_null() ? 0 : mark.line + 1; }

struct ParsedInteger {
  bool negative = false;
  uint64_t magnitude = 0;
  bool overflow = false;  // magnitude does not fit 64 bits
};

// Decimal or 0x-hexadecimal, with an optional sign. Nothing else (no spaces, no "1.0", no "1e3").
std::optional<ParsedInteger> parse_integer(const std::string& text) {
  ParsedInteger out;
  const char* p = text.data();
  const char* end = p + text.size();
  if (p != end && (*p == '+' || *p == '-')) out.negative = *p++ == '-';
  int base = 10;
  if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p += 2;
  }
  if (p == end || *p == '+' || *p == '-') return std::nullopt;
  auto [stop, ec] = std::from_chars(p, end, out.magnitude, base);
  if (ec == std::errc::result_out_of_range) {
    // Still an integer, just a large one: skip its digits to check nothing else follows.
    out.overflow = true;
    stop = p;
    while (stop != end && std::isxdigit(static_cast<unsigned char>(*stop)) &&
           (base == 16 || std::isdigit(static_cast<unsigned char>(*stop))))
      ++stop;
  } else if (ec != std::errc()) {
    return std::nullopt;
  }
  if (stop != end) return std::nullopt;
  return out;
}

std::optional<double> parse_double(const std::string& text) {
  static const std::map<std::string, double> kSpecial = {
      {".inf", HUGE_VAL},   {".Inf", HUGE_VAL},   {".INF", HUGE_VAL},   {"+.inf", HUGE_VAL},
      {"+.Inf", HUGE_VAL},  {"+.INF", HUGE_VAL},  {"-.inf", -HUGE_VAL}, {"-.Inf", -HUGE_VAL},
      {"-.INF", -HUGE_VAL}, {".nan", NAN},        {".NaN", NAN},        {".NAN", NAN}};
  if (auto it = kSpecial.find(text); it != kSpecial.end()) return it->second;
  const char* p = text.data();
  const char* end = p + text.size();
  if (p != end && *p == '+') {  // from_chars takes '-' but not '+'
    ++p;
    if (p != end && *p == '-') return std::nullopt;
  }
  if (p == end) return std::nullopt;
  double value = 0;
  auto [stop, ec] = std::from_chars(p, end, value);
  if (ec != std::errc() || stop != end) return std::nullopt;
  // from_chars also reads "inf" and "nan"; YAML spells those .inf / .nan, so refuse the bare words.
  if (std::isinf(value) || std::isnan(value)) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(const std::string& text) {
  static const std::map<std::string, bool> kWords = {
      {"true", true},   {"True", true},   {"TRUE", true},   {"yes", true},  {"Yes", true},
      {"YES", true},    {"on", true},     {"On", true},     {"ON", true},   {"false", false},
      {"False", false}, {"FALSE", false}, {"no", false},    {"No", false},  {"NO", false},
      {"off", false},   {"Off", false},   {"OFF", false}};
  if (auto it = kWords.find(text); it != kWords.end()) return it->second;
  return std::nullopt;
}

template <typename T>
std::string range_text(T min, T max) {
  std::ostringstream s;
  s << "[" << min << ", " << max << "]";
  return s.str();
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

YamlError::YamlError(const std::string& file, int line, const std::string& field, const std::string& problem)
    : std::runtime_error(format_what(file, line, field, problem)),
      file_(file),
      line_(line),
      field_(field),
      problem_(problem) {}

// ---- YamlDoc ----

YamlDoc YamlDoc::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw YamlError(path, 0, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw YamlError(path, 0, "", "cannot read file");
  return parse(text.str(), path);
}

YamlDoc YamlDoc::parse(const std::string& text, const std::string& file) {
  auto name = std::make_shared<const std::string>(file);
  try {
    return YamlDoc(name, YAML::Load(text));
  } catch (const YAML::Exception& e) {
    throw YamlError(file, line_of(e.mark), "", "YAML syntax error: " + e.msg);
  }
}

YamlField YamlDoc::root() const {
  int line = std::max(1, line_of(root_.Mark()));
  return YamlField(file_, root_, "", line, true, "");
}

// ---- YamlField ----

YamlField::YamlField(std::shared_ptr<const std::string> file, YAML::Node node, std::string path, int line,
                     bool present, std::string parent_path)
    : file_(std::move(file)),
      node_(node),
      path_(std::move(path)),
      line_(line),
      present_(present),
      parent_path_(std::move(parent_path)) {}

bool YamlField::is_null() const { return !present_ || node_.IsNull(); }
bool YamlField::is_map() const { return present_ && node_.IsMap(); }
bool YamlField::is_list() const { return present_ && node_.IsSequence(); }
bool YamlField::is_scalar() const { return present_ && node_.IsScalar(); }

YamlError YamlField::error(const std::string& problem) const { return YamlError(*file_, line_, path_, problem); }

std::string YamlField::describe() const {
  if (!present_) return "nothing";
  if (node_.IsNull()) return "an empty value";
  if (node_.IsSequence()) return "a list";
  if (node_.IsMap()) return "a mapping";
  return "'" + node_.Scalar() + "'";
}

std::string YamlField::child_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void YamlField::throw_missing() const {
  // For a field under a missing (or null) parent, parent_path_ is the nearest present mapping.
  std::string where = parent_path_.empty() ? "the top level" : "'" + parent_path_ + "'";
  throw error("required field is missing from " + where);
}

YamlField YamlField::operator[](const std::string& key) const {
  if (is_null()) {
    // The nearest present ancestor stays the one named in "missing" errors, with its line.
    std::string anchor = present_ ? path_ : parent_path_;
    return YamlField(file_, YAML::Node(), child_path(key), line_, false, anchor);
  }
  if (!node_.IsMap()) throw error("expected a mapping, got " + describe());
  for (const auto& entry : node_)
    if (entry.first.IsScalar() && entry.first.Scalar() == key)
      return YamlField(file_, entry.second, child_path(key), line_of(entry.first.Mark()), true, path_);
  return YamlField(file_, YAML::Node(), child_path(key), line_, false, path_);
}

size_t YamlField::size() const {
  if (is_null()) return 0;
  if (!node_.IsSequence()) throw error("expected a list, got " + describe());
  return node_.size();
}

YamlField YamlField::at(size_t index) const {
  if (!present_) throw_missing();
  size_t n = size();
  if (index >= n)
    throw error("has no entry [" + std::to_string(index) + "]: the list has " + std::to_string(n) + " entries");
  auto it = node_.begin();
  std::advance(it, static_cast<std::ptrdiff_t>(index));
  YAML::Node entry = *it;
  int line = line_of(entry.Mark());
  return YamlField(file_, entry, path_ + "[" + std::to_string(index) + "]", line > 0 ? line : line_, true, path_);
}

std::vector<std::string> YamlField::keys() const {
  std::vector<std::string> out;
  if (is_null()) return out;
  if (!node_.IsMap()) throw error("expected a mapping, got " + describe());
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar())
      throw YamlError(*file_, line_of(entry.first.Mark()), path_, "keys must be plain names, got a list or mapping");
    out.push_back(entry.first.Scalar());
  }
  return out;
}

void YamlField::check_keys(const std::vector<std::string>& allowed) const {
  if (is_null()) return;
  if (!node_.IsMap()) throw error("expected a mapping, got " + describe());
  std::map<std::string, int> seen;  // key -> line of its first appearance
  for (const auto& entry : node_) {
    int line = line_of(entry.first.Mark());
    if (!entry.first.IsScalar()) throw YamlError(*file_, line, path_, "keys must be plain names");
    const std::string& key = entry.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      throw YamlError(*file_, line, child_path(key),
                      "unknown key '" + key + "' (allowed: " + join(allowed) + ")");
    auto [first, inserted] = seen.emplace(key, line);
    if (!inserted)
      throw YamlError(*file_, line, child_path(key),
                      "key '" + key + "' appears twice (first on line " + std::to_string(first->second) + ")");
  }
}

void YamlField::check_keys(std::initializer_list<const char*> allowed) const {
  check_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

std::string YamlField::scalar_text(const std::string& what) const {
  if (!present_) throw_missing();
  if (!node_.IsScalar()) throw error("expected " + what + ", got " + describe());
  return node_.Scalar();
}

int64_t YamlField::as_int64(int64_t min, int64_t max) const {
  std::string text = scalar_text("an integer");
  auto parsed = parse_integer(text);
  if (!parsed) throw error("expected an integer, got '" + text + "'");
  // Magnitudes up to 2^63 fit when negative, up to 2^63 - 1 when not.
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  bool fits = !parsed->overflow && (parsed->negative ? parsed->magnitude <= kLimit : parsed->magnitude < kLimit);
  int64_t value = 0;
  if (fits)
    value = parsed->negative ? static_cast<int64_t>(0 - parsed->magnitude) : static_cast<int64_t>(parsed->magnitude);
  if (!fits || value < min || value > max)
    throw error("value " + text + " is outside the allowed range " + range_text(min, max));
  return value;
}

uint64_t YamlField::as_uint64(uint64_t min, uint64_t max) const {
  std::string text = scalar_text("a non-negative integer");
  auto parsed = parse_integer(text);
  if (!parsed) throw error("expected a non-negative integer, got '" + text + "'");
  bool fits = !parsed->overflow && (!parsed->negative || parsed->magnitude == 0);
  if (!fits || parsed->magnitude < min || parsed->magnitude > max)
    throw error("value " + text + " is outside the allowed range " + range_text(min, max));
  return parsed->magnitude;
}

double YamlField::as_double(double min, double max) const {
  std::string text = scalar_text("a number");
  auto parsed = parse_double(text);
  if (!parsed) throw error("expected a number, got '" + text + "'");
  double v = *parsed;
  // NaN passes only when the range is the whole line; with a bound, it cannot be in range.
  bool bounded = min > -HUGE_VAL || max < HUGE_VAL;
  if ((std::isnan(v) && bounded) || v < min || v > max)
    throw error("value " + text + " is outside the allowed range " + range_text(min, max));
  return v;
}

bool YamlField::as_bool() const {
  std::string text = scalar_text("true or false");
  auto parsed = parse_bool(text);
  if (!parsed) throw error("expected true or false, got '" + text + "'");
  return *parsed;
}

std::string YamlField::as_string() const { return scalar_text("a string"); }

int64_t YamlField::as_int64_or(int64_t fallback, int64_t min, int64_t max) const {
  return is_null() ? fallback : as_int64(min, max);
}
uint64_t YamlField::as_uint64_or(uint64_t fallback, uint64_t min, uint64_t max) const {
  return is_null() ? fallback : as_uint64(min, max);
}
double YamlField::as_double_or(double fallback, double min, double max) const {
  return is_null() ? fallback : as_double(min, max);
}
bool YamlField::as_bool_or(bool fallback) const { return is_null() ? fallback : as_bool(); }
std::string YamlField::as_string_or(const std::string& fallback) const {
  return is_null() ? fallback : as_string();
}

namespace {

// Shared by the two list getters: presence, shape and length; entries are read by the caller.
void check_list_shape(const YamlField& f, size_t min_len, size_t max_len, const std::string& what) {
  if (!f.present()) (void)f.as_string();  // throws the "missing" error
  if (!f.is_list()) {
    std::string got = f.is_null()  ? "an empty value"
                      : f.is_map() ? "a mapping"
                                   : "'" + f.as_string() + "'";
    throw f.error("expected a list of " + what + ", got " + got);
  }
  size_t n = f.size();
  if (n >= min_len && n <= max_len) return;
  std::string expected = min_len == max_len ? std::to_string(min_len)
                         : max_len == std::numeric_limits<size_t>::max()
                             ? "at least " + std::to_string(min_len)
                             : "between " + std::to_string(min_len) + " and " + std::to_string(max_len);
  throw f.error("expected " + expected + " entries, got " + std::to_string(n));
}

}  // namespace

std::vector<int64_t> YamlField::as_int64_list(size_t min_len, size_t max_len, int64_t min, int64_t max) const {
  check_list_shape(*this, min_len, max_len, "integers");
  std::vector<int64_t> out;
  for (size_t i = 0; i < size(); ++i) out.push_back(at(i).as_int64(min, max));
  return out;
}

std::vector<uint64_t> YamlField::as_uint64_list(size_t min_len, size_t max_len, uint64_t min, uint64_t max) const {
  check_list_shape(*this, min_len, max_len, "non-negative integers");
  std::vector<uint64_t> out;
  for (size_t i = 0; i < size(); ++i) out.push_back(at(i).as_uint64(min, max));
  return out;
}

}  // namespace tma
