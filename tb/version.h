// The tool's version, recorded in what a run writes (the stats JSON's "tool"), so that results
// say which tma-sim made them.
#pragma once

namespace tma {

inline constexpr const char* kToolVersion = "0.9.0";

}  // namespace tma
