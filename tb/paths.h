// Finding the project's data files (configs/...) from wherever tma-sim is run.
#pragma once

#include <string>

namespace tma {

// `path` as given if it exists; otherwise the same path relative to the project root (the
// folder above the executable's build folder); otherwise `path` unchanged (its load will fail
// with a clear error).
std::string resolve_project_path(const std::string& path);

// Remembered from argv[0] by main.
void set_executable_path(const std::string& argv0);

}  // namespace tma
