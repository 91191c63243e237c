// TMA operation traces (docs/traces.md): a kernel's CTAs as JSON lines, one per operation, after a
// header that holds the scenario's tensors and descriptors. `tma-sim trace export` writes any
// workload's launch as one; `tma-sim run TRACE.jsonl` replays it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tma/scenario/scenario.h"
#include "tma/scenario/workload.h"

namespace tma {

constexpr int kTraceVersion = 1;

// Writes `launch` (built from `s`) as a trace. `arch_path` is the architecture its compute cycles
// were derived for, written as the trace's default architecture (relative to the project's folder
// when it lies inside it).
void write_trace(std::ostream& out, const Scenario& s, const Launch& launch, const std::string& arch_path);

struct Trace {
  Scenario scenario;  // workload kind trace; workload.stages from the header
  Launch launch;
};

// Reads a trace. Overrides change the header's scenario as load_scenario's do ("sms=16" is the
// header's scenario.sms). Every error is a YamlError naming the file, the line and the field.
Trace load_trace(const std::string& path, const std::vector<std::string>& overrides = {});

// Whether `path` names a trace rather than a scenario (its name ends in .jsonl).
bool is_trace_path(const std::string& path);

}  // namespace tma
