// Small helpers of the regression runner (tma-sim regress, sweep, regress-merge): JSON and XML
// text, shell quoting, atomic file writes, unique folders, seeds. No SystemC.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tma::regress {

// ---- text ----
std::string json_quote(const std::string& s);   // "..." with \" \\ \n \t and \u00XX escapes
std::string xml_escape(const std::string& s);   // & < > " ' escaped; characters XML forbids dropped
std::string csv_field(const std::string& s);    // quoted when it holds , " or a line break
std::string shell_quote(const std::string& s);  // as is when safe, else '...'
std::string shell_join(const std::vector<std::string>& argv);
// Printable ASCII only (others become '?'), at most max_len characters, no trailing blanks.
std::string printable(const std::string& s, size_t max_len = 300);
// Letters, digits, '_', '-', '.' kept; anything else becomes '_'.
std::string file_safe(const std::string& s);
std::string format_seconds(double s);  // "1.23"
std::string utc_timestamp();           // "2025-01-31T12:00:00Z"

// ---- seeds ----
uint64_t fnv1a64(const std::string& s);
// Job k of a generator whose base seed is `base`: k == 0 runs the base seed itself, job k > 0
// splitmix64_mix(splitmix64_mix(base) + k) (model/splitmix64.h) truncated to 32 bits (generators with nearby base seeds do
// not share seeds).
uint64_t job_seed(uint64_t base, uint64_t k);
// The base seed of generator `name` when the run gives --seed S: splitmix64_mix(S ^ fnv1a64(name)),
// truncated to 32 bits.
uint64_t entry_seed(uint64_t run_seed, const std::string& name);

// ---- shards ----
struct Shard {
  uint32_t index = 0, count = 1;  // 0-based: shard K of N takes jobs i with i % N == K
};
// "K/N" with 0 <= K < N; throws std::runtime_error naming the problem.
Shard parse_shard(const std::string& text);
// Which of `ids` (any order) shard K/N runs: sorted by id, the i-th goes to shard i % N.
std::vector<std::string> shard_ids(std::vector<std::string> ids, const Shard& shard);

// ---- files ----
// Writes `text` to path.tmp.<pid>, flushes it to disk and renames it over `path`: readers see
// the old file or the new one, never a part. Throws std::runtime_error.
void write_file_atomic(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);  // throws std::runtime_error
// Creates parent/<base>, or parent/<base>-2, -3... when it exists (mkdir is the arbiter, so
// concurrent runs never share a folder). Creates `parent` first. Returns the folder made.
std::string make_unique_dir(const std::string& parent, const std::string& base);
// The running executable (readlink /proc/self/exe), for replay commands.
std::string self_exe();

}  // namespace tma::regress
