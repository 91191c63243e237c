// Reading a tensor map and an operation from YAML (golden cases, scenarios), with errors that
// name the file, line and field. Values the driver would refuse are read as they are (so that
// validation can name the rule); only values the types cannot hold are errors here.
#pragma once

#include "tma/descriptor/tensor_map.h"
#include "tma/descriptor/tma_op.h"
#include "tma/config/yaml_reader.h"

namespace tma {

// `node` is the tensor_map mapping. The global address is `base` (a byte offset into the
// global-memory image).
TensorMap read_tensor_map(const YamlField& node);

// The keys a golden case's tensor map and a scenario's descriptor share: interleave, swizzle (with
// its atom), l2_promotion and oob_fill, each with its default when absent.
void read_map_options(const YamlField& node, TensorMap& map);

// `node` is the op mapping; the map gives the rank and mode the coordinates must match.
// Keys it does not know are left to the caller's check_keys (extra ones are passed in `extra_keys`).
TmaOp read_op(const YamlField& node, const TensorMap& map, const std::vector<std::string>& extra_keys = {});

}  // namespace tma
