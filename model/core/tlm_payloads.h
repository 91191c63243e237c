// What travels on the model's TLM sockets: generic payloads carrying these extensions.
// Every socket uses b_transport with an annotated delay (loosely timed, temporally decoupled):
// a call returns when the target has accepted the work, with the delay advanced to the time
// the work is done; a target that is full adds the time until it has room, which is how a full
// stage holds back the one before it.
#pragma once

#include <tlm>

#include <cstdint>
#include <string>
#include <vector>

#include "tma/descriptor/tensor_map.h"
#include "tma/descriptor/tma_op.h"

namespace tma {

// Attaches a typed extension to a payload for the duration of one call.
template <typename Ext>
struct ScopedExtension {
  tlm::tlm_generic_payload& gp;
  ScopedExtension(tlm::tlm_generic_payload& p, Ext* e) : gp(p) { gp.set_extension(e); }
  ~ScopedExtension() { gp.clear_extension<Ext>(); }
};

// ---- issuer -> TmaUnit: one TMA instruction (cp.async.bulk.tensor and friends) ----
enum class UnitCommandKind : uint8_t {
  tensor_op,            // load / store / reduce / prefetch (TmaOp)
  prefetch_descriptor,  // prefetch.tensormap
  invalidate_descriptor // fence.proxy.tensormap: drop a cached descriptor
};

struct TmaCommand : tlm::tlm_extension<TmaCommand> {
  UnitCommandKind kind = UnitCommandKind::tensor_op;
  TmaOp op;
  uint64_t descriptor_address = 0;  // global address of the 128-byte descriptor
  bool descriptor_in_param = false; // a kernel parameter (__grid_constant__): first fetch from the constant bank
  uint32_t mbarrier = 0;            // issuer's mbarrier id that receives complete_tx (loads)
  uint16_t cta_mask = 0;            // multicast: CTAs of the cluster that receive the data (0: own CTA only)
  uint8_t cache_hint = 0;           // L2 cache hint (evict-first/last...), carried for the L2
  uint64_t op_id = 0;               // unique per operation, for statistics, traces and the scoreboard
  int32_t sm = 0;                   // issuing SM
  uint8_t sub_partition = 0;        // the issuing warp's scheduler in the SM (sm.sub_partitions)

  tlm::tlm_extension_base* clone() const override { return new TmaCommand(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const TmaCommand&>(e); }
};

// ---- TmaUnit -> issuer: completion (mbarrier complete_tx, or bulk-group completion) ----
enum class OpOutcome : uint8_t { ok, fault };

struct TmaCompletion : tlm::tlm_extension<TmaCompletion> {
  uint64_t op_id = 0;
  uint32_t mbarrier = 0;
  uint32_t tx_bytes = 0;
  int32_t cta = 0;          // receiving CTA (multicast delivers to several)
  int32_t src_sm = 0;       // the SM whose unit ran the operation
  OpOutcome outcome = OpOutcome::ok;
  std::string fault_reason;  // why the operation faulted (empty when it did not)

  tlm::tlm_extension_base* clone() const override { return new TmaCompletion(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const TmaCompletion&>(e); }
};

// ---- TmaUnit -> ClusterFabric: when a multicast load may start (ArchConfig::cluster) ----
// Two calls per multicast load, with no wait between them (the unit's control thread does not
// yield while it runs an operation): `acquire`, with the delay at the time the load is ready to
// start, returns it advanced to when it may start; `occupy`, with the delay at the load's start,
// its bytes and its completion, records it. A faulting load only acquires.
enum class MulticastPhase : uint8_t { acquire, occupy };

struct MulticastSlot : tlm::tlm_extension<MulticastSlot> {
  MulticastPhase phase = MulticastPhase::acquire;
  uint32_t bytes = 0;       // occupy: the load's bytes (each destination's, its complete_tx)
  uint64_t done_cycle = 0;  // occupy: the cycle the load completes

  tlm::tlm_extension_base* clone() const override { return new MulticastSlot(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const MulticastSlot&>(e); }
};

// ---- unit -> memory system: one L2 request (at most one 128-byte line, a sector mask) ----
enum class MemAccess : uint8_t { read, write, reduce, prefetch, descriptor };

struct MemRequest : tlm::tlm_extension<MemRequest> {
  MemAccess access = MemAccess::read;
  uint32_t promotion_bytes = 0;   // L2 fill granularity on a miss (0: the sectors asked for)
  uint8_t sector_mask = 0;        // sectors of the line this request touches
  DataType dtype = DataType::u8;  // reductions: element type
  ReduceOp reduce = ReduceOp::add;
  int32_t sm = 0;
  uint64_t op_id = 0;
  uint32_t path_latency = 0;      // round trip to the L2 for this request (0: the L2's hit latency)
  // filled in by the memory system
  uint32_t sectors_missed = 0;
  uint32_t dram_fill_bytes = 0;
  // filled in by the splitter: the cycle it can take the next request (its pacing)
  uint64_t accept_cycle = 0;

  tlm::tlm_extension_base* clone() const override { return new MemRequest(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const MemRequest&>(e); }
};

// ---- L2 -> DRAM: what a read is for ----
// A fill's promoted part (sectors no request asked for) may be served from the capacity demand
// fills leave (DramConfig::background_promoted_fills).
struct DramFillClass : tlm::tlm_extension<DramFillClass> {
  bool promoted = false;
  // With want_slot (l2.in_order_until_dram_slot), set by the DRAM: the cycle the read's last
  // transfer got its channel (left the controller's queue), until which the L2's in-order slice
  // holds its later hits.
  bool want_slot = false;
  uint64_t slot = 0;

  tlm::tlm_extension_base* clone() const override { return new DramFillClass(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const DramFillClass&>(e); }
};

// ---- inside the unit: a piece of data (or fill) bound for shared memory ----
// `bytes` long, landing at logical offset `box_offset` of the operation's destination
// (before swizzling); the crossbar turns it into swizzled 16-byte chunk writes.
struct SmemPiece {
  uint32_t box_offset = 0;
  uint32_t bytes = 0;
  uint32_t data_offset = 0;  // where in the payload's data the piece starts (data pieces)
  bool fill = false;         // out-of-bound fill: no data, the fill pattern
};

struct SmemDelivery : tlm::tlm_extension<SmemDelivery> {
  uint64_t op_id = 0;
  uint32_t smem_base = 0;          // the operation's shared-memory address
  SwizzleMode swizzle = SwizzleMode::none;
  SwizzleAtom atom = SwizzleAtom::b16;
  DataType dtype = DataType::u8;
  OobFill oob_fill = OobFill::zero;
  uint16_t cta_mask = 0;           // multicast destinations (0: own CTA)
  std::vector<SmemPiece> pieces;

  // Every field but the pieces (a splitter sends one delivery per line with its own pieces).
  void copy_header(const SmemDelivery& d) {
    op_id = d.op_id;
    smem_base = d.smem_base;
    swizzle = d.swizzle;
    atom = d.atom;
    dtype = d.dtype;
    oob_fill = d.oob_fill;
    cta_mask = d.cta_mask;
  }
  tlm::tlm_extension_base* clone() const override { return new SmemDelivery(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const SmemDelivery&>(e); }
};

// ---- shared-memory port: a batch of 16-byte-or-smaller chunk accesses at physical addresses ----
struct SmemChunk {
  uint32_t address = 0;
  uint32_t bytes = 0;        // 1..16, never crossing a 16-byte boundary
  uint32_t data_offset = 0;  // in the payload's data
};

struct SmemAccess : tlm::tlm_extension<SmemAccess> {
  uint64_t op_id = 0;
  int32_t cta = -1;          // destination CTA (-1: the port's own)
  int32_t src_sm = 0;        // the SM whose crossbar sends it
  std::vector<SmemChunk> chunks;

  tlm::tlm_extension_base* clone() const override { return new SmemAccess(*this); }
  void copy_from(const tlm::tlm_extension_base& e) override { *this = static_cast<const SmemAccess&>(e); }
};

}  // namespace tma
