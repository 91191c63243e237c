// Loading configs/arch/*.yaml into ArchConfig, with file/line/field errors, and applying
// overrides ("l2.capacity_bytes=33554432") from regressions, sweeps and the command line.
#pragma once

#include <string>
#include <vector>

#include "tma/core/arch_config.h"

namespace tma {

ArchConfig load_arch_config(const std::string& path);

// Applies "section.field=value" overrides; throws std::runtime_error naming a bad one.
void apply_arch_overrides(ArchConfig& arch, const std::vector<std::string>& overrides);

// The architecture a command runs on: `path` (found as resolve_project_path finds it; empty: the
// `fallback`, a scenario's arch or kDefaultArchFile) with its --arch-set overrides applied.
constexpr const char* kDefaultArchFile = "configs/arch/h100.yaml";
ArchConfig load_arch_for_command(const std::string& path, const std::string& fallback,
                                 const std::vector<std::string>& overrides);

// Every "section.field" name and its current value, in file order (for reports and replays).
std::vector<std::pair<std::string, std::string>> arch_fields(const ArchConfig& arch);

}  // namespace tma
