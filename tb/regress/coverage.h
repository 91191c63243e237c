// Functional coverage of TMA cases (docs/random-and-coverage.md): bin groups over the descriptor and
// operation space, crosses of them, and a database that serialises to JSON (sorted, deterministic),
// merges across files (hits add up) and reports hit/total per group and cross with the holes.
//
// Every bin the profile can reach is declared (0 hits) so that a hole is a listed bin; combinations
// that are impossible by construction (interleave below rank 3, im2col below rank 3, NaN fill of an
// integer type, a swizzle the encoder refuses for the type or mode, ...) are not declared.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "tma/golden/golden_case.h"
#include "tma/regress/random_cases.h"

namespace tma {

// Where the coordinates an operation touches along one dimension lie against [0, dim): all inside,
// some below (low), some past the end (high), both, or none inside (outside).
enum class OobKind : uint8_t { none, low, high, both, outside };
std::string to_string(OobKind k);

// Per dimension (entries past the rank are none). For im2col-family maps the pixel walk is followed.
std::array<OobKind, kMaxRank> oob_kinds(const TensorMap& m, const TmaOp& op);
// One kind for the whole box: outside if any dimension is, both if one is or one is low and another high,
// else low, high or none.
OobKind oob_aggregate(const std::array<OobKind, kMaxRank>& kinds, int rank);

using CoverageBins = std::map<std::string, uint64_t>;  // bin -> hits

struct CoverageDb {
  std::set<std::string> profiles;  // random_profile() names of what was declared
  uint64_t cases = 0;
  std::map<std::string, CoverageBins> groups;   // e.g. "dtype" -> {"bf16": 12, ...}
  std::map<std::string, CoverageBins> crosses;  // e.g. "op x dtype" -> {"load/bf16": 3, ...}

  // Declares every reachable bin of the profile with 0 hits (idempotent).
  void declare(const RandomOptions& opt);
  // Counts one case (intent "valid", "fault:<kind>", "encode_error:<rule>" or "").
  void sample(const GoldenCase& c, const std::string& intent = "");
  // Adds the other database's hits (and any bins it declares that this one lacks).
  void merge(const CoverageDb& other);

  std::string to_json() const;
  // Throws std::runtime_error naming the problem.
  static CoverageDb from_json(const std::string& text);

  // hit/total per group and cross, then the holes (at most max_holes per group; 0 = all).
  std::string report(size_t max_holes = 20) const;
};

CoverageDb load_coverage(const std::string& path);                   // throws std::runtime_error
void save_coverage(const CoverageDb& db, const std::string& path);   // throws std::runtime_error

}  // namespace tma
