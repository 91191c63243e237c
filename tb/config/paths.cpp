#include "tma/config/paths.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "tma/config/yaml_reader.h"

namespace fs = std::filesystem;

namespace tma {

namespace {

std::string& executable() {
  static std::string e;
  return e;
}

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

}  // namespace

void set_executable_path(const std::string& argv0) { executable() = argv0; }

std::string project_root() {
  if (const char* env = std::getenv("TMA_SHARE_DIR"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::weakly_canonical(fs::path(executable()), ec);
  const fs::path above = exe.parent_path().parent_path();
  if (!executable().empty() && !ec) {
    if (present(above / "configs" / "arch")) return above.string();                     // build/tma-sim
    if (present(above / "share" / "tma" / "configs" / "arch")) return (above / "share" / "tma").string();  // <prefix>/bin/tma-sim
  }
  return built_in_project_root();
}

std::string resolve_project_path(const std::string& path) {
  if (present(path) || fs::path(path).is_absolute()) return path;
  const fs::path candidate = fs::path(project_root()) / path;
  return present(candidate) ? candidate.string() : path;
}

std::optional<std::string> resolve_yaml_path(const std::string& path, const std::string& yaml_file) {
  if (path.empty()) return std::nullopt;
  if (fs::path(path).is_absolute()) return present(path) ? std::optional<std::string>(path) : std::nullopt;
  for (const fs::path& dir : {fs::absolute(yaml_file).parent_path(), fs::path(project_root())}) {
    const fs::path candidate = (dir / path).lexically_normal();
    if (present(candidate)) return candidate.string();
  }
  return std::nullopt;
}

std::string existing_yaml_path(const YamlField& field) {
  const std::string text = field.as_string();
  if (const auto p = resolve_yaml_path(text, field.file())) return fs::absolute(*p).lexically_normal().string();
  const std::string folder = fs::absolute(field.file()).parent_path().lexically_normal().string();
  const std::string where = fs::path(text).is_absolute()
                                ? std::string()
                                : " (looked in " + folder + "/ and in the project's folder " + project_root() + "/)";
  throw field.error("no such file or folder: '" + text + "'" + where);
}

}  // namespace tma
