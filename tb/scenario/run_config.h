// The configuration a run resolved, as JSON: the stats file's "config" (as gem5 writes
// config.json beside its statistics), so that a result says exactly what produced it.
#pragma once

#include <string>

#include "tma/core/arch_config.h"
#include "tma/scenario/scenario.h"
#include "tma/scenario/scenario_runner.h"

namespace YAML {
class Node;
}

namespace tma {

// A YAML tree as JSON. Quoted scalars are strings; plain ones are numbers (decimal or 0x hex
// integers, decimals), true/false, null (`~`, `null`, empty) or else strings, as YAML reads them.
std::string yaml_to_json(const YAML::Node& node);

// {"scenario": {"file", "overrides", "resolved": the file's tree after the overrides},
//  "arch": {"file", "overrides", "name", "fields": every field after the overrides, by section},
//  "options": the run's options}
std::string run_config_json(const Scenario& s, const ArchConfig& arch, const RunOptions& options);

}  // namespace tma
