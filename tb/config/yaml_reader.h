// Reading YAML (yaml-cpp) with errors a person can act on: every error names the file, the
// 1-based line and the dotted path of the field, e.g.
//   cases/t1.yaml:12: field 'tensor_map.dims': expected a list of integers, got 'abc'
//
//   YamlDoc doc = YamlDoc::load("cases/t1.yaml");
//   YamlField map = doc.root()["tensor_map"];
//   map.check_keys({"mode", "dtype", "rank", ...});
//   int64_t rank = map["rank"].as_int64(1, 5);
//   DataType t = map["dtype"].as_enum(parse_data_type, data_type_names());
//   auto dims = map["dims"].as_uint64_list(rank, rank, 1, uint64_t{1} << 32);
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace tma {

class YamlError : public std::runtime_error {
 public:
  // line is 1-based; 0 when unknown. field is the dotted path ("" for the file as a whole).
  YamlError(const std::string& file, int line, const std::string& field, const std::string& problem);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  int line_;
  std::string field_;
  std::string problem_;
};

// A view of one node of a loaded document, or of a field that is missing from its mapping.
// Cheap to copy; keeps the document alive. Getters named as_* require the field, *_or variants
// return the fallback when the field is missing or written as null (`key:` or `key: ~`).
class YamlField {
 public:
  YamlField(const YamlField&) = default;
  // YAML::Node's own assignment writes through to the node it refers to (yaml-cpp's reference
  // semantics); rebinding with reset() keeps assigning one field from another harmless.
  YamlField& operator=(const YamlField& other) {
    file_ = other.file_;
    node_.reset(other.node_);
    path_ = other.path_;
    line_ = other.line_;
    present_ = other.present_;
    parent_path_ = other.parent_path_;
    return *this;
  }
  const std::string& file() const { return *file_; }
  const std::string& path() const { return path_; }  // "tensor_map.dims", "cases[2].name"; "" at the root
  // Line of the field's key (or of the node itself for list entries and the root); for a missing
  // field, the line of the mapping it is missing from.
  int line() const { return line_; }

  bool present() const { return present_; }  // false when missing; null counts as present here
  bool is_null() const;                      // missing, or written as null
  bool is_map() const;
  bool is_list() const;
  bool is_scalar() const;

  // Child of a mapping. A missing key (or any key of a missing or null field) gives a field that
  // is not present; a field that is present but not a mapping throws YamlError.
  YamlField operator[](const std::string& key) const;
  // Entries of a list (throws YamlError when present and not a list; a missing field has none).
  size_t size() const;
  YamlField at(size_t index) const;
  // Keys of a mapping in document order (throws YamlError when present and not a mapping).
  std::vector<std::string> keys() const;

  // Throws YamlError for a key not in `allowed` (naming the key and its line) or a key written twice.
  void check_keys(const std::vector<std::string>& allowed) const;
  void check_keys(std::initializer_list<const char*> allowed) const;

  // Scalars. Ranges are inclusive; the error states the range and the value.
  int64_t as_int64(int64_t min = std::numeric_limits<int64_t>::min(),
                   int64_t max = std::numeric_limits<int64_t>::max()) const;
  uint64_t as_uint64(uint64_t min = 0, uint64_t max = std::numeric_limits<uint64_t>::max()) const;
  double as_double(double min = -std::numeric_limits<double>::infinity(),
                   double max = std::numeric_limits<double>::infinity()) const;
  bool as_bool() const;
  std::string as_string() const;

  int64_t as_int64_or(int64_t fallback, int64_t min = std::numeric_limits<int64_t>::min(),
                      int64_t max = std::numeric_limits<int64_t>::max()) const;
  uint64_t as_uint64_or(uint64_t fallback, uint64_t min = 0,
                        uint64_t max = std::numeric_limits<uint64_t>::max()) const;
  double as_double_or(double fallback, double min = -std::numeric_limits<double>::infinity(),
                      double max = std::numeric_limits<double>::infinity()) const;
  bool as_bool_or(bool fallback) const;
  std::string as_string_or(const std::string& fallback) const;

  // Lists of integers with min_len..max_len entries, each in [min, max].
  std::vector<int64_t> as_int64_list(size_t min_len, size_t max_len,
                                     int64_t min = std::numeric_limits<int64_t>::min(),
                                     int64_t max = std::numeric_limits<int64_t>::max()) const;
  std::vector<uint64_t> as_uint64_list(size_t min_len, size_t max_len, uint64_t min = 0,
                                       uint64_t max = std::numeric_limits<uint64_t>::max()) const;

  // Enums: `parse` maps a name to std::optional<E> (as tensor_map.h's parse_* do); `allowed` is
  // the comma-separated list of accepted names, quoted in the error.
  template <typename Parse>
  auto as_enum(Parse parse, const std::string& allowed) const {
    std::string name = scalar_text("one of: " + allowed);
    auto value = parse(name);
    if (!value) throw error("expected one of: " + allowed + "; got '" + name + "'");
    return *value;
  }
  template <typename E, typename Parse>
  E as_enum_or(E fallback, Parse parse, const std::string& allowed) const {
    return is_null() ? fallback : static_cast<E>(as_enum(parse, allowed));
  }

  // An error located at this field, for checks the caller makes itself
  // (e.g. "has 3 entries but rank is 2").
  YamlError error(const std::string& problem) const;

 private:
  friend class YamlDoc;
  YamlField(std::shared_ptr<const std::string> file, YAML::Node node, std::string path, int line, bool present,
            std::string parent_path);

  // The scalar's text; throws "missing" / "expected <what>, got a list" etc. otherwise.
  std::string scalar_text(const std::string& what) const;
  [[noreturn]] void throw_missing() const;
  std::string describe() const;  // what the node is, for "got ..." ("'abc'", "a list", ...)
  std::string child_path(const std::string& key) const;

  std::shared_ptr<const std::string> file_;
  YAML::Node node_;  // meaningful only when present_
  std::string path_;
  int line_ = 0;
  bool present_ = false;
  std::string parent_path_;  // for "missing" messages
};

class YamlDoc {
 public:
  // Reads and parses a file. Throws YamlError for an unreadable file and for YAML syntax errors
  // (with the line yaml-cpp reports).
  static YamlDoc load(const std::string& path);
  // Parses text; `file` is the name used in error messages.
  static YamlDoc parse(const std::string& text, const std::string& file);

  const std::string& file() const { return *file_; }
  YamlField root() const;
  // The parsed tree, to change it before it is read (a yaml-cpp node is a handle: changes through
  // it are the document's; nodes it adds have no line).
  YAML::Node node() const { return root_; }

 private:
  YamlDoc(std::shared_ptr<const std::string> file, YAML::Node root) : file_(std::move(file)), root_(root) {}
  std::shared_ptr<const std::string> file_;
  YAML::Node root_;
};

}  // namespace tma
