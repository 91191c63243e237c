// Replays golden cases through the TLM pipeline: one SM of the architecture runs the cases one
// after another inside a single elaboration (SystemC allows one per process). Each case gets
// its own region of global memory and its own descriptor address.
#pragma once

#include <functional>
#include <vector>

#include "tma/core/arch_config.h"
#include "tma/golden/golden_check.h"

namespace tma {

// Calls `report` with each case's verdict as soon as it is known. Elaborates and runs SystemC:
// call at most once per process.
void replay_through_tlm(const std::vector<GoldenCase>& cases, const ArchConfig& arch,
                        const std::function<void(const GoldenCase&, const CaseVerdict&)>& report);

}  // namespace tma
