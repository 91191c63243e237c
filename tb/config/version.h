// The tool's version, recorded in what a run writes (the stats JSON's "tool"), so that results
// say which tma-sim made them.
#pragma once

namespace tma {

// The project's version (CMakeLists.txt, project(... VERSION)), defined for every target of tb/.
inline constexpr const char* kToolVersion = TMA_VERSION;

}  // namespace tma
