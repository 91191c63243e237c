#include "paths.h"

#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace tma {

namespace {
std::string& executable() {
  static std::string e;
  return e;
}
}  // namespace

void set_executable_path(const std::string& argv0) { executable() = argv0; }

std::string resolve_project_path(const std::string& path) {
  std::error_code ec;
  if (fs::exists(path, ec) || fs::path(path).is_absolute()) return path;
  fs::path exe = fs::weakly_canonical(fs::path(executable()), ec);
  for (fs::path dir = exe.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    const fs::path candidate = dir / path;
    if (fs::exists(candidate, ec)) return candidate.string();
    if (dir == dir.root_path()) break;
  }
  return path;
}

}  // namespace tma
