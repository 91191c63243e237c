// Command-line parsing shared by every tma-sim command: one strict reading of numbers, one way
// to take an option's value, one style for errors and warnings ("tma-sim: error: ...").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tma/core/arch_config.h"

namespace tma::cli {

// A mistake on the command line: the command prints it with its usage and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The whole of `text` as one whole number in [min, max]: decimal, or hexadecimal with 0x. Anything
// else (empty, a sign, blanks, a fraction, trailing characters, out of range) throws UsageError
// naming `what` (the option) and the text as given.
uint64_t parse_uint(const std::string& what, const std::string& text, uint64_t min, uint64_t max);
// The whole of `text` as one decimal number in [min, max] (a fraction and an exponent are fine;
// inf and nan are not). Throws UsageError as parse_uint does.
double parse_double(const std::string& what, const std::string& text, double min, double max);

// The arguments after a command's name, taken one at a time.
class ArgList {
 public:
  ArgList(int argc, char** argv) : argc_(argc), argv_(argv) {}
  bool done() const { return i_ >= argc_; }
  std::string next() { return argv_[i_++]; }
  // The argument after option `name`; UsageError when there is none.
  std::string value(const std::string& name);
  uint64_t uint_value(const std::string& name, uint64_t min, uint64_t max) {
    return parse_uint(name, value(name), min, max);
  }
  double double_value(const std::string& name, double min, double max) {
    return parse_double(name, value(name), min, max);
  }

 private:
  int argc_;
  char** argv_;
  int i_ = 0;
};

// "tma-sim: error: MESSAGE" / "tma-sim: warning: MESSAGE" on stderr.
void print_error(const std::string& message);
void print_warning(const std::string& message);
// For a UsageError: the error, the command's usage lines (the first paragraph of `usage`) and
// where the rest is; returns 2, the exit status of bad input.
int usage_error(const std::string& command, const std::string& message, const char* usage);

// Commands with --engine ref|tlm (check, random): throws UsageError for another engine, or for an
// --arch or --arch-set given to the reference engine, which has no architecture.
void check_engine_options(const std::string& engine, const std::string& arch_path,
                          const std::vector<std::string>& arch_sets);
// Their architecture: for the pipeline (tlm) load_arch_for_command's with kDefaultArchFile, for the
// reference engine none (`arch` left as it is). Prints the error and returns false when it fails.
bool load_engine_arch(const std::string& engine, const std::string& arch_path, const std::vector<std::string>& arch_sets,
                      ArchConfig& arch);

}  // namespace tma::cli
