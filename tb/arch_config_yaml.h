// Loading configs/arch/*.yaml into ArchConfig, with file/line/field errors, and applying
// overrides ("l2.capacity_bytes=33554432") from regressions, sweeps and the command line.
#pragma once

#include <string>
#include <vector>

#include "arch_config.h"

namespace tma {

ArchConfig load_arch_config(const std::string& path);

// Applies "section.field=value" overrides; throws std::runtime_error naming a bad one.
void apply_arch_overrides(ArchConfig& arch, const std::vector<std::string>& overrides);

// Every "section.field" name and its current value, in file order (for reports and replays).
std::vector<std::pair<std::string, std::string>> arch_fields(const ArchConfig& arch);

}  // namespace tma
