// The shipped scenarios and architecture files, loaded from the source tree (for the tests of
// workloads, schedules and traces).
#pragma once

#include <string>
#include <vector>

#include "tma/config/arch_config_yaml.h"
#include "tma/scenario/scenario.h"

namespace tma::test {

inline const std::string kRoot = TMA_SOURCE_DIR;

// configs/scenarios/NAME.yaml with `sets` ("path=value") applied.
inline Scenario scenario(const std::string& name, const std::vector<std::string>& sets = {}) {
  return load_scenario(kRoot + "/configs/scenarios/" + name + ".yaml", sets);
}

// configs/arch/NAME.yaml.
inline ArchConfig arch(const std::string& name = "h100") {
  return load_arch_config(kRoot + "/configs/arch/" + name + ".yaml");
}
inline ArchConfig h100() { return arch("h100"); }

}  // namespace tma::test
