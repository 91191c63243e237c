// Descriptor validation: refuses the tensor maps the CUDA driver's encode functions refuse
// (cuTensorMapEncodeTiled for tiled and gather4, cuTensorMapEncodeIm2col for im2col,
// cuTensorMapEncodeIm2colWide for im2col_w and im2col_w128), as their documentation states.
// A golden case with `outcome: encode_error` must be refused here, naming the broken rule.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tma/descriptor/tensor_map.h"

namespace tma {

struct ValidationError {
  std::string rule;     // short stable id, e.g. "globalStrides.multiple_of_16"
  std::string message;  // sentence naming the field and the value, e.g. "globalStrides[1] = 1000 is not a multiple of 16"
};

// The driver call that would encode a map of this mode.
enum class EncodeApi : uint8_t { tiled, im2col, im2col_wide };
EncodeApi encode_api(TensorMode mode);
std::string to_string(EncodeApi api);  // "cuTensorMapEncodeTiled", ...

// The first rule the map breaks (rules are checked in a fixed order), or nullopt when the
// driver would encode it. Fields the chosen API does not take (box for the im2col family,
// corners/channels/pixels for tiled, array entries at or past rank) are not looked at.
// `arch` adds the generation's own refusals: the sm_90 driver refuses the swizzle atoms other
// than 16B, the 96B swizzle, the packed sub-byte types and the wide im2col modes (seen on an
// H200, scripts/silicon/cases/probes.txt), all of which sm_100 takes.
std::optional<ValidationError> validate_tensor_map(const TensorMap& m, GpuArch arch = GpuArch::sm90);

// Every rule id, in the order the rules are checked.
std::vector<std::string> validation_rule_ids();

}  // namespace tma
