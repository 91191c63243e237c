// Expands a scenario's workload into each SM's program: a sequence of pipeline steps, each the
// TMA operations that fill one shared-memory stage, the consumer's compute time on it, and the
// operations the consumer issues afterwards (output stores).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tma/core/arch_config.h"
#include "tma/scenario/scenario.h"
#include "tma/core/tlm_payloads.h"

namespace tma {

struct IssueOp {
  TmaCommand cmd;  // op, descriptor address, cta mask (mbarrier and op_id set by the issuer)
};

// A tile the consumer reads out of shared memory, as ldmatrix does: 16-byte pieces of 8
// consecutive rows at a time, at their swizzled addresses.
struct TileRead {
  uint32_t smem_addr = 0;
  uint32_t rows = 0;
  uint32_t row_bytes = 0;
  uint32_t pitch = 0;
  SwizzleMode swizzle = SwizzleMode::none;
  SwizzleAtom atom = SwizzleAtom::b16;
};

constexpr uint32_t kNoBulkWait = 0xFFFFFFFFu;
constexpr uint32_t kNoReleaseWait = 0xFFFFFFFFu;

struct Step {
  std::vector<IssueOp> loads;          // issued by the producer into the step's stage
  uint32_t expected_completions = 0;   // completions the stage waits for (own loads + multicasts received)
  uint32_t compute_cycles = 0;
  std::vector<IssueOp> after;          // issued by the consumer when the step is done (stores)
  std::vector<TileRead> reads;         // what the consumer reads from the stage (consumer_reads)
  // cp.async.bulk.wait_group N before `after` is issued: the consumer first waits until at most N
  // of the CTA's earlier `after` operations are incomplete. kNoBulkWait: no wait.
  uint32_t bulk_wait_pending = kNoBulkWait;
  // cp.async.bulk.wait_group 0 after `after` is issued: the step ends (its stage is released) when
  // every bulk operation of the CTA has completed.
  bool bulk_wait_after = false;
  // Loads from this index on are issued once the consumer has released every earlier step: they
  // fill a buffer outside the stage ring that the last work item used to its end (attention's Q,
  // as FlashAttention-3 waits for "query empty"). kNoReleaseWait: none.
  uint32_t release_wait_from = kNoReleaseWait;
};

// The program of one CTA: what it issues first, then its pipeline steps.
struct CtaProgram {
  std::vector<IssueOp> prologue;       // descriptor prefetches
  std::vector<Step> steps;
};
// An SM's CTAs one after another (a persistent grid: its one CTA).
using SmProgram = CtaProgram;

constexpr int32_t kAnySm = -1;

// What the kernel launch runs: its CTAs in grid order and the SM each runs on. A persistent grid
// has one CTA per SM (CTA i on SM i). A grid of more CTAs than SMs runs in waves: an SM starts its
// next CTA when its last one has ended (every CTA of its cluster, with clusters). kAnySm: the CTA
// goes to the first SM that is free once the CTAs before it have started (the block scheduler of
// a GPU, for grids without clusters).
//
// Several CTAs per SM (workload.ctas_per_sm): the SM has `ctas_per_sm` CTA slots, each its own
// producer and consumer, its shared memory at slot x `cta_smem_stride`. An SM's own CTAs (those
// with its number) go to its slots in turn (its j-th to slot j % ctas_per_sm); a persistent grid
// of N CTAs per SM has CTA e on SM e % sms, slot e / sms. A kAnySm CTA takes the first slot free.
struct Launch {
  std::vector<CtaProgram> ctas;
  std::vector<int32_t> sm;
  uint32_t ctas_per_sm = 1;
  uint64_t cta_smem_bytes = 0;    // one CTA's shared memory: its stages, buffers and mbarriers
  uint32_t cta_smem_stride = 0;   // where slot k's shared memory starts: k x this
  uint32_t setup_cycles = 0;      // each CTA's own work before its first operation (workload.setup_cycles)
  uint32_t issue_cycles = 0;      // a CTA's producer's own cycles per step (workload.issue_cycles)
  uint32_t handoff_cycles = 0;    // a waiting consumer's or producer's wake after the signal (workload.handoff_cycles)
  uint32_t warps_per_cta = 1;     // the CTA's warps, its producer the first (workload.warps_per_cta)
};

// CTAs per SM for a CTA of `cta_smem_bytes` of shared memory: the workload's ctas_per_sm, or with
// `auto` (0) as many as the SM's shared memory holds (each CTA also takes the architecture's
// smem.reserved_per_cta_bytes), at most sm.max_ctas_per_sm. Throws std::runtime_error naming the
// field and the value when a CTA needs more than smem.max_cta_bytes or N CTAs do not fit.
uint32_t resolve_ctas_per_sm(const Workload& w, const ArchConfig& arch, uint64_t cta_smem_bytes);

// Shared-memory bytes a box of this descriptor occupies (rows x padded pitch).
uint64_t box_smem_bytes(const TensorMap& m);

// What is legal but likely a mistake in running scenario `s` on `arch`: more SMs than the
// architecture's sm_count (the model runs every SM the scenario asks for). One line each.
std::vector<std::string> scenario_warnings(const Scenario& s, const ArchConfig& arch);

// The CTAs of the scenario's kernel. Throws std::runtime_error when the workload does not fit (a
// stage larger than shared memory...).
Launch build_launch(const Scenario& s, const ArchConfig& arch);

// Each SM's CTAs one after another, as build_launch deals them; CTAs any SM may take are dealt
// round robin in grid order (the order of a launch whose CTAs all take as long). For what walks
// the operations in the order the GPU issues them (a warm L2, the bench). With several CTAs per
// SM, one program per CTA slot (sms x ctas_per_sm: slot k of SM i at k x sms + i).
std::vector<SmProgram> sm_programs(const Launch& launch, uint32_t sms);
std::vector<SmProgram> build_programs(const Scenario& s, const ArchConfig& arch);

}  // namespace tma
