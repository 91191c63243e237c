// Finding files: paths on the command line, and paths written in YAML files (a scenario's arch,
// a regression's scenarios and golden folders, a sweep's scenario and arch).
#pragma once

#include <optional>
#include <string>

namespace tma {

class YamlField;

// The project's folder (the one with configs/arch/): $TMA_SHARE_DIR when it is set; else the folder
// above the executable's folder when it has configs/arch/ (build/tma-sim); else <that folder>/share/tma
// when it has configs/arch/ (an installed <prefix>/bin/tma-sim); else built_in_project_root().
// Nothing else is searched: a file in some parent folder is never picked up by chance.
std::string project_root();

// The folder compiled in: the source folder for the libraries of the build tree, <prefix>/share/tma
// (the configured CMAKE_INSTALL_PREFIX) for the installed ones (tb/config/built_in_root.cpp, built
// twice).
const char* built_in_project_root();

// A path given on the command line: as given (from the current folder) when it exists or is
// absolute; else from the project's folder when it is there; else as given (its load then fails
// with a clear error).
std::string resolve_project_path(const std::string& path);

// A path written in the YAML file `yaml_file`: absolute as it is; else from that file's folder,
// then from the project's folder (the current folder plays no part). Nothing when neither has it.
std::optional<std::string> resolve_yaml_path(const std::string& path, const std::string& yaml_file);

// The file or folder `field` names, resolved as resolve_yaml_path does, absolute and normalised;
// a YamlError naming the file, the line, the field, the value and where it was looked for when
// it is not there.
std::string existing_yaml_path(const YamlField& field);

// Remembered from argv[0] by main.
void set_executable_path(const std::string& argv0);

}  // namespace tma
