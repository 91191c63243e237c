// Seeded constrained-random TMA cases (docs/random-and-coverage.md): descriptor + operation pairs
// over the space the model supports, each with the result the reference engine computes for it,
// as golden cases that replay through either engine (tb/golden_check.h, tb/tlm_replay.h).
//
// Case k of seed S depends only on (S, k, options): tb/random_prng.h keys one splitmix64 stream by
// the pair, so any case can be regenerated alone (`tma-sim random --seed S --start k --count 1`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tma/golden/golden_case.h"

namespace tma {

struct RandomOptions {
  GpuArch arch = GpuArch::sm90;
  // sm_100 only: also the forms the TLM pipeline does not model yet (im2col_w, im2col_w128,
  // gather4/scatter4, the sub-byte types). Without it the generator stays inside what both the
  // reference engine and the pipeline model: tiled (incl. interleave) and im2col, every swizzle of
  // the arch (sm_100 adds 96B and the 128B atomicities).
  bool blackwell_forms = false;
};

// "sm_90", "sm_100" or "sm_100+blackwell": names the space (and the coverage bins) of the options.
std::string random_profile(const RandomOptions& opt);
bool parse_random_profile(const std::string& s, RandomOptions& opt);

// The values the generator draws for these options (the accepted descriptors it makes).
std::vector<TensorMode> random_modes(const RandomOptions& opt);
std::vector<DataType> random_dtypes(const RandomOptions& opt);
std::vector<std::string> random_swizzles(const RandomOptions& opt);  // golden-format names

struct RandomCase {
  uint64_t seed = 0;
  uint64_t index = 0;
  // What the generator meant: "valid" (the operation runs: outcome ok), "encode_error:<rule id>"
  // (the descriptor breaks exactly that validation rule first) or "fault:<kind>" (the descriptor is
  // accepted and the operation traps). The expected outcome below comes from the reference engine.
  std::string intent;
  GoldenCase golden;  // name r<seed>_<index>, expected results from the reference engine
};

// Case `index` of `seed`.
RandomCase generate_random_case(uint64_t seed, uint64_t index, const RandomOptions& opt = {});
// Cases [first_index, first_index + count); element i equals generate_random_case(seed, first_index + i).
std::vector<RandomCase> generate_random_cases(uint64_t seed, uint64_t first_index, uint64_t count,
                                              const RandomOptions& opt = {});

// Checks the case against its own intent with the reference engine and validation: "" when
// consistent, else one sentence (a generator bug). Also replays it through the reference engine.
std::string check_random_intent(const RandomCase& c);

// The forms the pipeline does not model (im2col_w, im2col_w128, gather4, sub-byte types).
bool is_blackwell_form(const TensorMap& m);

// A one-line description: "tiled load bf16 rank 3 swizzle 128B".
std::string describe_random_case(const RandomCase& c);

// The tma-golden/1 YAML of the case (binary files named NAME.smem / NAME.gmem).
std::string random_case_yaml(const RandomCase& c);
// The YAML plus the size and FNV-1a hash of every binary image: equal strings mean equal cases.
std::string serialize_random_case(const RandomCase& c);
// Writes DIR/NAME.yaml and its binary files, for `tma-sim check`. Throws std::runtime_error.
void write_random_case(const RandomCase& c, const std::string& dir);

// The rule ids the generator breaks for these options, in validation order.
std::vector<std::string> random_validation_rules(const RandomOptions& opt);
// The modes a rule is broken from (the rule only looks at maps of these modes).
std::vector<TensorMode> random_rule_modes(const std::string& rule, const RandomOptions& opt);
// The fault kinds ("smem_misaligned", ...) the generator makes for these options.
std::vector<std::string> random_fault_kinds(const RandomOptions& opt);

}  // namespace tma
