// A scenario (configs/scenarios/*.yaml, docs/scenarios.md): tensors in global memory, the
// tensor-map descriptors over them, and the workload every SM runs (a GEMM main loop, an
// im2col convolution, a tile stream, or an explicit list of operations).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tma/memory/global_memory.h"
#include "tma/descriptor/tensor_map.h"
#include "tma/scenario/tile_schedule.h"
#include "tma/descriptor/tma_op.h"
#include "tma/config/yaml_reader.h"

namespace YAML {
class Node;
}

namespace tma {

struct ScenarioTensor {
  std::string name;
  DataType dtype = DataType::u8;
  std::vector<uint64_t> dims;     // innermost first
  std::vector<uint64_t> strides;  // bytes, rank-1 entries; dense (16-byte aligned rows) when omitted
  uint64_t address = 0;           // global byte address of element 0
};

struct ScenarioDescriptor {
  std::string name;
  std::string tensor;
  TensorMap map;             // global_address, dims, strides, dtype and rank from the tensor
  uint64_t address = 0;      // where its 128 bytes live in global memory (assigned by the loader)
  // Passed as a kernel parameter (__grid_constant__ CUtensorMap, as CUTLASS does) rather than by
  // pointer to global memory: its first use is fetched from the constant bank, not the L2.
  bool kernel_param = true;
};

enum class L2State : uint8_t { clean, dirty, warm };
std::optional<L2State> parse_l2_state(const std::string& s);
const char* to_string(L2State s);

enum class WorkloadKind : uint8_t { gemm, conv, stream, ops, attention, trace };  // trace: a replayed trace's CTAs

// The operand type of a workload's MMAs, which sets the tensor cores' rate (ArchConfig::sm).
enum class MmaType : uint8_t { bf16, fp8, tf32 };  // bf16 also fp16; fp8 also int8

struct ScenarioOp {            // one entry of an `ops` workload
  std::string descriptor;
  TmaOp op;
};

struct Workload {
  WorkloadKind kind = WorkloadKind::stream;
  uint32_t stages = 2;                 // shared-memory pipeline depth
  // Consumer work per step. Unset: gemm, conv and attention take their step's MMA flops at the
  // architecture's rate for `mma`; the others none.
  std::optional<uint32_t> compute_cycles;
  // What each CTA does before its first operation (its prologue's own instructions: mbarrier
  // set-up, the tile walk's arithmetic), in cycles: its producer issues nothing before.
  uint32_t setup_cycles = 0;
  // The producer's own cycles per step: its next step issues at the soonest this long after the
  // last one did (its loop: the stage wait, arrive.expect_tx, the copies, the tile walk). Sets
  // the rate of streams of small tiles, which nothing else binds.
  uint32_t issue_cycles = 0;
  // When a CTA's consumer waits for a stage's data, or its producer for a stage's release, the
  // cycles after the signal before it goes on (another warp's arrive or the copy's completion
  // reaching a thread waiting on the mbarrier). Lengthens a stage's round trip, which bounds
  // streams with few stages.
  uint32_t handoff_cycles = 0;
  // The CTA's warps (its producer is the first): the SM's warp schedulers (sm.sub_partitions) take
  // the warps of its CTAs in turn, so this sets which CTAs' producers share one, and the TMA unit
  // takes commands from the schedulers in turn when its queue is full.
  uint32_t warps_per_cta = 1;
  MmaType mma = MmaType::bf16;         // from mma_dtype, else from the A (activation, Q) data type
  uint64_t max_tiles_per_sm = 0;       // 0: every tile of the problem
  TileSchedule schedule;               // tile order (raster; grouping and swizzle for gemm and conv), persistence
  bool prefetch_descriptors = false;   // prefetch.tensormap at the start
  bool consumer_reads = false;         // the consumer reads each loaded tile (bank conflicts show)
  // CTAs an SM runs at once, each its own producer and consumer (docs/scenarios.md, "CTAs per
  // SM"); 0: `auto`, as many as the SM's shared memory holds.
  uint32_t ctas_per_sm = 1;
  // gemm
  std::string a, b, c;                 // descriptors (c optional: output tile store)
  uint64_t m = 0, n = 0, k = 0;
  bool multicast_a = false;            // A tiles multicast to every CTA of the cluster
  // conv (implicit GEMM over an NHWC activation through an im2col descriptor)
  std::string activation, filter;
  std::vector<uint32_t> filter_size;   // R, S (D for 5D)
  uint32_t output_channel_tiles = 1;
  // attention (kind: attention, or kind: decode): Q [head_dim, seq_q, heads, batch], K and V
  // [head_dim, seq_kv, kv_heads, batch]; out optional (the output tile store). YAML: q, k, v, o.
  std::string query, key, value, out;
  bool causal = false;                 // skip the KV blocks past a query block's last row
  uint32_t split_kv = 1;               // each query block's KV length in this many work items
  bool decode = false;                 // written as kind: decode (one query block, not causal)
  // stream
  std::string load, store;             // descriptors: load and/or store (store only: a store-only stream)
  std::string reduce_op;               // stream with reduce: "add" etc. instead of store
  uint32_t passes = 1;                 // stream: times each SM goes over its tiles
  bool multicast = false;              // stream: each tile loaded once into every CTA of a cluster
  bool multicast_rotate = false;       // multicast_issuer: rotate (CTA step % cluster_size), else CTA 0
  bool shared_tiles = false;           // stream: tiles dealt to clusters, every CTA loads each one itself
  // ops
  std::vector<ScenarioOp> ops;
};

struct Scenario {
  std::string path;
  std::string name;
  std::string description;
  uint32_t sms = 1;
  uint32_t cluster_size = 1;
  GpuArch gpu = GpuArch::sm90;
  MemoryFill memory_fill = MemoryFill::word_hash;
  // The L2 at launch: clean (holds nothing of the run's, nothing dirty), dirty (l2_dirty_bytes of
  // unrelated dirty lines, written back to DRAM as the run evicts them: after a large write such
  // as cudaMemset) or warm (what the same workload, run just before, left in it).
  L2State l2_state = L2State::clean;
  uint64_t l2_dirty_bytes = 0;         // dirty only; 0: the architecture's l2.dirty_launch_bytes
  std::string arch;                    // default architecture file (resolved: the scenario's folder,
                                       // then the project's), may be overridden
  std::map<std::string, ScenarioTensor> tensors;
  std::map<std::string, ScenarioDescriptor> descriptors;
  Workload workload;
};

// Reads and checks a scenario; every descriptor is validated as the driver would (an invalid
// one is an error naming the rule), the workload against its tensors. Throws YamlError with file,
// line and field. Overrides set any field of the file before it is read:
// "descriptors.A.l2_promotion=256B", "sms=16", "workload.stages=4"; an error in a value an
// override set (or a path it names that is not there) is an OverrideError.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

// The scenario without its workload that the mapping `key` of a parsed document holds (a trace's
// header, docs/traces.md); its workload kind is trace. Overrides name paths from the scenario's
// top ("sms=16"), as load_scenario's do.
Scenario read_scenario_part(const YamlDoc& doc, const std::string& key, const std::vector<std::string>& overrides = {});

// An error that an override caused: in the value it set, or below it. It has no line (the value
// is not in the file); what() ends with "(set by the override 'PATH=VALUE')".
class OverrideError : public YamlError {
 public:
  OverrideError(const YamlError& e, size_t index, const std::string& override_text);
  size_t index() const { return index_; }               // which of load_scenario's overrides
  const std::string& cause() const { return cause_; }   // the problem alone, without the note
 private:
  size_t index_;
  std::string cause_;
};

// The last of `overrides` whose path is `field` or holds it ("workload" holds "workload.m").
std::optional<size_t> override_of(const std::vector<std::string>& overrides, const std::string& field);

// The scenario file's YAML tree with the overrides applied: what load_scenario read (for the
// record of a run's configuration). Call it after load_scenario accepted the same arguments.
YAML::Node scenario_document(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace tma
